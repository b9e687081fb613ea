/*
 * fabric.h - the fabric model: nodes, ports and links as discovered.
 *
 * Plain arrays indexed by node id, with an open-addressing hash from node
 * GUID to id.  A sweep builds a new model from scratch; nothing in here
 * does I/O, so unit tests and offline tools build models by hand.
 */
#ifndef IBSM_MODEL_FABRIC_H
#define IBSM_MODEL_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mad/wire.h"
#include "model/guidmap.h"

#define FAB_NONE	(-1)

struct fab_port {
	bool     valid;			/* PortInfo was read */
	uint8_t  num;
	uint64_t guid;			/* port GUID (switch: node port GUID) */
	struct smp_port_info pi;	/* as last read, wire order */
	int32_t  peer_node;		/* FAB_NONE when not linked */
	uint8_t  peer_port;
	uint16_t lid;			/* assigned base LID: CA/router ports, switch port 0 */
	uint8_t  lmc;			/* assigned LMC for that LID range */
	uint8_t  hops;			/* DR path to this port (CA ports) */
	uint8_t  path[SMP_MAX_HOPS + 1];
	/*
	 * P_KeyTable (14.2.5.7) as read by the discovery and updated by our
	 * Sets: pkey_blocks blocks of 32 entries, wire order.  Read on the
	 * ports OpenSM reads (see fabric_pkey_blocks()); NULL elsewhere.
	 * pkey_read counts the blocks answered: the table is known only when
	 * it equals pkey_blocks.
	 */
	__be16  *pkeys;
	uint16_t pkey_blocks;
	uint16_t pkey_read;
	/*
	 * The P_Key table this port should hold, as the partitions resolve
	 * (partitions/): want_pkeys[i] is the entry at index i, host order,
	 * membership bit included (0x8000 full), 0 for an empty slot;
	 * n_want_pkeys entries, at most pkey_blocks * PKEY_BLOCK_SIZE.  NULL:
	 * no partition configuration applies to the port (sm/program/pkey.c then
	 * sets up the default partition as OpenSM does without a
	 * partitions.conf).  Owned by the model: fabric_free() frees it.
	 */
	uint16_t *want_pkeys;
	uint16_t n_want_pkeys;
};

/* P_Key table entries per block (14.2.5.7) and the most blocks a port can
 * have (PartitionCap is 16 bits). */
#define PKEY_BLOCK_SIZE		32
#define PKEY_MAX_BLOCKS		2048

struct fab_node {
	uint64_t guid;
	uint64_t sys_guid;
	uint8_t  type;			/* NODE_TYPE_* */
	uint8_t  num_ports;
	uint16_t device_id;
	uint16_t partition_cap;		/* NodeInfo:PartitionCap */
	uint32_t revision;
	uint32_t vendor_id;
	char     desc[65];
	bool     has_desc;
	/* the node-name-map's name for it (sm/sweep.c), NULL without one;
	 * points into a map that lives as long as the daemon */
	const char *name;
	bool     has_switch_info;
	struct smp_switch_info si;
	uint8_t  hops;			/* DR path first used to reach it */
	uint8_t  path[SMP_MAX_HOPS + 1];
	/*
	 * LID-routed SMPs (sm/sweep.c, lid_reach_mark()): the LID at which
	 * they reach this node, 0 when only directed route does.  Set in the
	 * model of a completed heavy sweep for a node whose LID was verified
	 * in place and whose routes from and to the SM's LID were programmed
	 * and acknowledged; in a sweep's new model, for the nodes that may
	 * get LID-routed SMPs in that sweep.  smp_lid_failed: a LID-routed
	 * SMP to it was lost (the engine fell back to directed route): the
	 * rest of the sweep and the next one use directed route for it.
	 */
	uint16_t smp_lid;
	bool     smp_lid_failed;
	/*
	 * Switches: the MulticastForwardingTable the SM holds for it, one
	 * PortMask (wire order) per MLID 0xC000 + i and 16-port position:
	 * mft[i * mft_positions + pos], mft_entries MLIDs.  NULL until
	 * multicast groups exist: nothing fills it yet.
	 */
	__be16  *mft;
	uint16_t mft_entries;
	uint8_t  mft_positions;
	struct fab_port *ports;		/* num_ports + 1 entries; [0] switch mgmt port */
};

struct fabric {
	struct fab_node *nodes;
	size_t   n_nodes, cap_nodes;
	struct guidmap by_guid;		/* node GUID -> node id */
	uint64_t local_port_guid;	/* the SM's port */
	int32_t  local_node;
	uint8_t  local_port;
	uint16_t max_lid;		/* highest LID assigned (0: none yet) */
	/*
	 * The model's generation: every fabric_init() gives a new number, so
	 * a model the SA indexed is never taken for a later one that happens
	 * to reuse its arrays (model/index.c), and an SA request answered in
	 * slices notices that a sweep published a new model meanwhile.
	 */
	uint64_t gen;
};

/*
 * The LID of node `id` an SMP to the node itself is addressed to: a
 * switch's port 0 LID; for a CA or router, the LID of the port its
 * directed route (n->path) reaches.  0 when it has none.
 */
static inline uint16_t fabric_node_lid(const struct fab_node *n)
{
	if (n->type == NODE_TYPE_SWITCH)
		return n->ports[0].lid;
	for (unsigned pn = 1; pn <= n->num_ports; pn++) {
		const struct fab_port *p = &n->ports[pn];

		if (p->lid && (p->hops || p->guid) && p->hops == n->hops &&
		    !memcmp(p->path, n->path, (size_t)n->hops + 1))
			return p->lid;
	}
	return 0;
}

void fabric_init(struct fabric *f);
void fabric_free(struct fabric *f);

/* Node id for a GUID, or FAB_NONE. */
int32_t fabric_find(const struct fabric *f, uint64_t guid);
/* Add a node (GUID must be new).  Returns its id or -ENOMEM / -EEXIST. */
int32_t fabric_add_node(struct fabric *f, uint64_t guid, uint8_t type,
			uint8_t num_ports);
/* Record a link between two ports (both must exist). -EINVAL if not. */
int fabric_link(struct fabric *f, int32_t a, uint8_t pa, int32_t b, uint8_t pb);

/*
 * A deep copy of `src` into `dst` (initialised here, with a generation
 * of its own), of the nodes whose keep[id] is true (all when keep is
 * NULL), in the same order: ids shift down past the nodes left out, and
 * a link to a node left out is no link.  What a node owns is copied
 * (ports, P_Key tables as read, the MFT mirror), except the tables the
 * partitions want (want_pkeys), which every sweep resolves anew.  0, or
 * -ENOMEM with dst empty.
 */
int fabric_copy_subset(struct fabric *dst, const struct fabric *src,
		       const bool *keep);

/* Undo every link of node `id` (both ends).  Returns the links undone. */
unsigned fabric_unlink_node(struct fabric *f, int32_t id);

static inline struct fab_node *fabric_node(const struct fabric *f, int32_t id)
{
	return &f->nodes[id];
}

struct fabric_counts {
	size_t switches, cas, routers;
	size_t ports;			/* ports with PortInfo (switch ports 1..N, CA ports) */
	size_t links;			/* each link counted once */
};
void fabric_count(const struct fabric *f, struct fabric_counts *c);

const char *fabric_node_type_str(uint8_t type);

/*
 * Blocks of the P_Key table of port `pn` that the SM reads and manages,
 * 0 for none.  Like OpenSM 3.3.23: every CA/router port and switch port 0
 * (NodeInfo:PartitionCap entries) and every switch port that is up
 * (SwitchInfo:PartitionEnforcementCap entries; 0 when the switch does not
 * enforce partitions).
 */
unsigned fabric_pkey_blocks(const struct fab_node *n, unsigned pn);
/* Allocate port `pn`'s table for `blocks` blocks (zeroed).  -ENOMEM. */
int fabric_pkey_alloc(struct fab_node *n, unsigned pn, unsigned blocks);
/* The table is known: every block was read. */
static inline bool fabric_pkey_known(const struct fab_port *p)
{
	return p->pkeys && p->pkey_blocks && p->pkey_read == p->pkey_blocks;
}

/*
 * CapabilityMask that applies to a port.  Switch external ports do not
 * carry one (14.2.5.6: it is valid on port 0 only), so theirs is port 0's.
 */
static inline uint32_t fabric_port_cap_mask(const struct fab_node *n,
					    unsigned pn)
{
	const struct fab_port *p = &n->ports[n->type == NODE_TYPE_SWITCH ? 0 : pn];
	return p->valid ? be32toh(p->pi.cap_mask) : 0;
}


/* What to call a node where people read it (log, dumps, ibsmctl, health
 * findings): its node-name-map name, else its NodeDescription ("" while
 * unread: desc is zeroed until has_desc). */
static inline const char *fab_node_label(const struct fab_node *n)
{
	return n->name ? n->name : n->desc;
}

/* The default partition: P_Key 0x7fff/0xffff (10.9.1.2). */
#define FAB_DEFAULT_PKEY	0xffff
#define FAB_PKEY_BASE(p)	((p) & 0x7fff)

/* A port of the model: node id and port number. */
struct fab_ref {
	int32_t node;			/* FAB_NONE: no such port */
	uint8_t port;
};

/* Does port `pn` of `n` carry a LID (CA/router port, switch port 0)? */
static inline bool fabric_is_endport(const struct fab_node *n, unsigned pn)
{
	if (pn > n->num_ports || !n->ports[pn].valid)
		return false;
	return n->type == NODE_TYPE_SWITCH ? pn == 0 : pn != 0;
}

/* The end port that gives port `pn` of `n` its LID: switch port 0. */
static inline const struct fab_port *fabric_endport_of(const struct fab_node *n, unsigned pn)
{
	return &n->ports[n->type == NODE_TYPE_SWITCH ? 0 : pn];
}

static inline uint16_t fabric_lid_top(const struct fab_port *p)
{
	return (uint16_t)(p->lid + (1u << (p->lmc & 7)) - 1);
}

/* Is `lid` in the LMC range of end port `p`? */
static inline bool fabric_lid_in_range(const struct fab_port *p, uint16_t lid)
{
	return p->lid && lid >= p->lid && lid <= fabric_lid_top(p);
}

/*
 * The P_Key table of an end port as the SM sees it: the partitions'
 * table (want_pkeys) when the model has one, else the table the
 * discovery read and the sweep programmed, else (never read) the default
 * partition alone, full member, as the SM programs it without a
 * partitions file.  A switch end is its port 0 and port 0's table.
 */
struct fab_pkey_tab {
	const uint16_t *host;		/* want_pkeys */
	const __be16 *net;		/* the table as read */
	unsigned n;
};

static inline void fabric_pkey_tab(const struct fab_port *p,
				   struct fab_pkey_tab *t)
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
		static const uint16_t default_tab[1] = { FAB_DEFAULT_PKEY };

		t->host = default_tab;
		t->n = 1;
	}
}

static inline uint16_t fabric_pkey_at(const struct fab_pkey_tab *t, unsigned i)
{
	return t->host ? t->host[i] : be16toh(t->net[i]);
}

#endif /* IBSM_MODEL_FABRIC_H */
