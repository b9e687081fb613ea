/*
 * index.h - shared by the SA record generators (sm/sa/records.c,
 * sm/sa/path.c, sm/sa/tables.c) and the trap receiver (sm/ha/state.c, for
 * lid_lookup()): end ports of the fabric model, the
 * per-model LID and GUID index (sm/sa/index.c), and the PathRecord
 * computation that PathRecord and MultiPathRecord share.
 */
#ifndef IBSM_SM_SA_INDEX_H
#define IBSM_SM_SA_INDEX_H

#include "sm/sa/sa.h"

#define BIT(n)		(1ull << (n))
#define FLD(off, n)	{ (uint16_t)(off), (uint16_t)(n) }
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* The default partition: P_Key 0x7fff/0xffff (10.9.1.2). */
#define DEFAULT_PKEY		0xffff
#define PKEY_BASE(p)		((p) & 0x7fff)

/* A port of the model: node id and port number. */
struct port_ref {
	int32_t node;			/* FAB_NONE: no such port */
	uint8_t port;
};

struct guid_slot {
	uint64_t guid;			/* 0: empty slot */
	struct port_ref ref;
};

/*
 * The index of one subnet model: LID -> end port for every LID of every
 * LMC range, port GUID -> end port.  The view is rebuilt per sweep and is
 * const, so the index lives here and is rebuilt when the model it was
 * built from changes (index_get()): a model is known by its generation
 * (struct fabric.gen), not by where its arrays happen to be.  It is only
 * ever used on the loop thread.
 */
struct sa_index {
	bool built;
	/* what it was built from */
	const struct fabric *f;
	uint64_t gen;
	size_t n_nodes;
	uint16_t max_lid;
	/* the index proper */
	struct port_ref *by_lid;	/* max_lid + 1 entries */
	struct guid_slot *by_guid;
	size_t guid_size;		/* power of two */
	/* the orders OpenSM lists nodes and end ports in (see guid_order()) */
	int32_t *nodes_sorted;		/* n_nodes */
	struct port_ref *ends;		/* n_ends */
	size_t n_ends;
	/* partitions (15-bit base) some end port is a full member of: a
	 * requested P_Key no one is full member of has no path at all */
	uint64_t pkey_full[32768 / 64];
	/* the non-empty P_Keys of every end port (pkey_tab_of_port()):
	 * port pn of node i is slot pk_base[i] + pn, its keys
	 * pk_keys[pk_off[slot] .. pk_off[slot + 1]) in table order */
	uint32_t *pk_base;		/* n_nodes */
	uint32_t *pk_off;		/* slots + 1 */
	uint16_t *pk_keys;
};
extern struct sa_index sa_idx;

static inline bool has_fabric(const struct sa_view *v)
{
	return v->f && v->f->n_nodes;
}

/* Does port `pn` of `n` carry a LID (CA/router port, switch port 0)? */
static inline bool is_endport(const struct fab_node *n, unsigned pn)
{
	if (pn > n->num_ports || !n->ports[pn].valid)
		return false;
	return n->type == NODE_TYPE_SWITCH ? pn == 0 : pn != 0;
}

/* The end port that gives port `pn` of `n` its LID: switch port 0. */
static inline const struct fab_port *endport_of(const struct fab_node *n, unsigned pn)
{
	return &n->ports[n->type == NODE_TYPE_SWITCH ? 0 : pn];
}

static inline uint16_t lid_range_top(const struct fab_port *p)
{
	return (uint16_t)(p->lid + (1u << (p->lmc & 7)) - 1);
}

/* Is `lid` in the LMC range of end port `p`? */
static inline bool lid_in_range(const struct fab_port *p, uint16_t lid)
{
	return p->lid && lid >= p->lid && lid <= lid_range_top(p);
}

/*
 * The P_Key table of an end port as the SA sees it: the partitions'
 * table (want_pkeys) when the model has one, else the table the
 * discovery read and the sweep programmed, else (never read) the default
 * partition alone, full member, as the SM programs it without a
 * partitions file.  A switch end is its port 0 and port 0's table.
 */
struct pkey_tab {
	const uint16_t *host;		/* want_pkeys */
	const __be16 *net;		/* the table as read */
	unsigned n;
};

static inline void pkey_tab_of_port(const struct fab_port *p,
				    struct pkey_tab *t)
{
	t->host = NULL;
	t->net = NULL;
	if (p->want_pkeys) {
		t->host = p->want_pkeys;
		t->n = p->n_want_pkeys;
	} else if (fabric_pkey_known(p)) {
		t->net = p->pkeys;
		t->n = (unsigned)p->pkey_blocks * PKEY_BLOCK_SIZE;
	} else {
		static const uint16_t default_tab[1] = { DEFAULT_PKEY };

		t->host = default_tab;
		t->n = 1;
	}
}

static inline void pkey_tab_of(const struct sa_view *v, struct port_ref r,
			       struct pkey_tab *t)
{
	pkey_tab_of_port(&fabric_node(v->f, r.node)->ports[r.port], t);
}

static inline uint16_t pkey_at(const struct pkey_tab *t, unsigned i)
{
	return t->host ? t->host[i] : be16toh(t->net[i]);
}

/*
 * The index of the view's model, built on first use after a change:
 * 0 or -ENOMEM.  Lookups return 1 (found, *out set), 0, or -ENOMEM.
 */
int index_get(const struct sa_view *v);
/* Times the index was built (for tests: one build per model). */
extern unsigned long sa_index_builds;
int lid_lookup(const struct sa_view *v, uint16_t lid, struct port_ref *out);
int guid_lookup(const struct sa_view *v, uint64_t guid, struct port_ref *out);
/* The non-empty P_Keys of end port `r` of the indexed model. */
static inline const uint16_t *index_port_pkeys(struct port_ref r, unsigned *n)
{
	size_t s = sa_idx.pk_base[r.node] + r.port;

	*n = sa_idx.pk_off[s + 1] - sa_idx.pk_off[s];
	return sa_idx.pk_keys + sa_idx.pk_off[s];
}

/* Is some end port of the indexed model a full member of `base`? */
static inline bool index_pkey_full(uint16_t base)
{
	base = PKEY_BASE(base);
	return sa_idx.pkey_full[base / 64] >> (base % 64) & 1;
}
/*
 * Call fn for every node of the model, in OpenSM's order, until it fails;
 * resumable: the node to go on with is q->work->pos[0], charged 1 + its
 * ports; returns SA_MORE when the slice is spent, -SA_STATUS_NO_RESOURCES
 * when the budget is.
 */
int each_node(const struct sa_view *v, const struct sa_query *q,
	      int (*fn)(const struct sa_view *, const struct sa_query *,
			int32_t, struct sa_table *),
	      struct sa_table *out);
/* A cursor of the query's work, or of `local` when it has none. */
static inline uint32_t *cursor_of(const struct sa_query *q, uint32_t *local)
{
	return q->work ? q->work->pos : local;
}

/* The LFT the SM computed for switch `id`, or NULL. */
const struct lft *lft_of(const struct sa_view *v, int32_t id);

/* sm/sa/path.c: PathRecord (15.2.5.16) */
#define PR_NFIELDS	24
extern const struct sa_field pr_fields[PR_NFIELDS];
int gen_path_record(const struct sa_view *v, const struct sa_query *q,
		    struct sa_table *out);

/* sm/sa/path.c: MultiPathRecord (15.2.5.20), answered with PathRecords */
#define MPR_NFIELDS	22
extern const struct sa_field mpr_fields[MPR_NFIELDS];
int gen_multipath_record(const struct sa_view *v, const struct sa_query *q,
			 struct sa_table *out);

/* sm/sa/path.c: rate codes (15.2.5.16) ordered by bandwidth, for
 * MCMemberRecord's selectors, and the rate of a port's active link. */
bool sa_rate_valid(unsigned code);
int sa_rate_cmp(unsigned a, unsigned b);
unsigned sa_rate_below(unsigned code);
uint8_t sa_port_rate(const struct fab_node *n, unsigned pn);

#endif /* IBSM_SM_SA_INDEX_H */
