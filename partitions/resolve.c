/*
 * resolve.c - the partitions against a fabric model: the P_Key table each
 * port should hold (fab_port.want_pkeys).
 *
 * Whom a member names (OpenSM's osm_prtn.c, osm_pkey_mgr.c):
 *  - Members are end ports, looked up by port GUID: every linked CA or
 *    router port (and the SM's own port), and switch port 0.  A GUID that
 *    is no such port here names nobody (OpenSM: "port not found"); a CA's
 *    node GUID is therefore nobody unless it is also a port GUID, while a
 *    switch's node GUID is its port 0 GUID.  ALL is every end port, ALL_CAS
 *    / ALL_ROUTERS / ALL_SWITCHES those of the node type (ALL_SWITCHES:
 *    port 0), SELF the SM's port.
 *  - Within a partition, members apply in the order written and the last
 *    one to name a port sets its membership (OpenSM replaces the map
 *    entry): "ALL=full, 0x1=limited" leaves 0x1 limited.  With
 *    allow_both_pkeys, `both` gives the port the full and the limited key.
 *  - The SM's port is a full member of the default partition whatever the
 *    file says (partition-config.txt).
 *
 * Tables:
 *  - End ports (CA/router ports and switch port 0) get their partitions'
 *    keys, sized by NodeInfo.PartitionCap (OpenSM uses PartitionCap for
 *    switch port 0 too).
 *  - A switch external port linked to a CA or router port gets that
 *    port's keys, a limited key left out when the full one is there
 *    (osm_pkey_mgr.c update_peer_port), sized by
 *    SwitchInfo.PartitionEnforcementCap; a switch that reports 0 there
 *    does not enforce and gets no table.  Ports between switches and
 *    unlinked ports get none (NULL).
 *  - Order, which is also the priority when a table is too small: the
 *    index-0 key first (the key of the last indx0 partition naming the
 *    port, else the default partition's), then the default partition's
 *    key (when an indx0 key took index 0), then full-membership keys before
 *    limited ones, then partitions in file order (the default partition is
 *    the first; a merged partition ranks where it was first defined).
 *    Keys past the table size are dropped, counted, and the first
 *    PART_DROP_DETAIL of them described (node, port, key) for the daemon
 *    to log port by port.  Which keys fit depends on this order only,
 *    never on where they sat before.
 *  - Indexes (keep_pkey_indexes, OpenSM's default TRUE): the index-0 key
 *    goes to index 0.  On an end port whose table the discovery read
 *    (fab_port.pkeys), every other key stays at the index that table
 *    gives it (the same key, else the same 15-bit partition: a change of
 *    membership keeps the index, as in OpenSM), and a new key takes the
 *    index after the last one kept, or when the table is full there, the
 *    first free index.  A host's P_Key index (which IPoIB child
 *    interfaces and verbs applications hold) then survives another
 *    partition being added or removed; a removed key leaves a hole (0).
 *    Without keep_pkey_indexes, and always on switch external ports
 *    (OpenSM copies the end port's keys there packed, in its index
 *    order), keys are packed in priority order.
 *  - n_want_pkeys is one past the last index used; the programmer pads
 *    the rest of the table with 0.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "partitions/partitions.h"

#define ST_LIMITED	1
#define ST_FULL		2

struct endport {
	uint64_t guid;
	int32_t  node;
	uint8_t  port;
	uint8_t  type;
};

struct entry {
	uint32_t ep;		/* end port index */
	uint32_t part;		/* partition index: file order */
	uint16_t key;		/* with the full bit */
	uint8_t  idx0;		/* rank: 0 index 0, 1 default key, 2 others */
};

static int cmp_guid(const void *a, const void *b)
{
	const struct endport *x = a, *y = b;

	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	unsigned xf = !(x->key & PART_FULL_BIT), yf = !(y->key & PART_FULL_BIT);

	if (x->ep != y->ep)
		return x->ep < y->ep ? -1 : 1;
	if (x->idx0 != y->idx0)
		return x->idx0 < y->idx0 ? -1 : 1;
	if (xf != yf)
		return xf < yf ? -1 : 1;
	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	return 0;
}

static long find_ep(const struct endport *eps, size_t n, uint64_t guid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (eps[mid].guid == guid)
			return (long)mid;
		if (eps[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static void apply(uint8_t *st, bool *ix, size_t i, enum part_membership m,
		  bool indx0)
{
	st[i] = m == PART_FULL ? ST_FULL : m == PART_LIMITED ? ST_LIMITED :
		ST_FULL | ST_LIMITED;
	ix[i] = indx0;
}

/* Per-resolution scratch of the table layout (keep_pkey_indexes). */
struct layout {
	bool      keep;
	uint32_t *pos;		/* [0x10000] key -> index + 1 in the table read */
	uint32_t *bpos;		/* [0x8000] 15-bit key -> index + 1 */
	uint8_t  *taken;	/* [PKEY_MAX_BLOCKS * PKEY_BLOCK_SIZE] */
	uint8_t  *placed;	/* per key of one port: has its index */
	uint16_t *out;		/* the table being laid out */
};

/* Note the keys `n` (node `id`, port `pn`) could not hold. */
static void note_drops(struct part_resolve_report *rep,
		       const struct fab_node *n, int32_t id, unsigned pn,
		       const uint16_t *keys, size_t from, size_t to)
{
	if (from >= to)
		return;
	rep->dropped += (unsigned)(to - from);
	rep->drop_ports++;
	for (size_t j = from; j < to && rep->n_drops < PART_DROP_DETAIL; j++)
		rep->drops[rep->n_drops++] = (struct part_drop){
			.node = id, .node_guid = n->guid, .port = (uint8_t)pn,
			.key = keys[j],
		};
}

/*
 * Where the `fit` keys of `keys` (priority order) sit in a table of `cap`
 * entries, given the table `pt` holds now (see part_resolve_opts()):
 * lays them out in L->out and returns the entries used (one past the
 * last index taken).  keys[0] always goes to index 0.
 */
static size_t lay_out(struct layout *L, const struct fab_port *pt,
		      const uint16_t *keys, size_t fit, unsigned cap,
		      unsigned *moved)
{
	size_t tsize = (size_t)pt->pkey_blocks * PKEY_BLOCK_SIZE;
	size_t top = 1, hole = 1;

	memset(L->out, 0, cap * sizeof(*L->out));
	memset(L->taken, 0, cap);
	memset(L->placed, 0, fit);
	L->out[0] = keys[0];
	L->taken[0] = 1;
	L->placed[0] = 1;
	/* The table as read; index 0 is not kept for anyone else: it
	 * belongs to the index-0 key (OpenSM moves any other key away). */
	for (size_t i = 1; i < tsize; i++) {
		uint16_t k = be16toh(pt->pkeys[i]);

		if (!(k & 0x7fff))
			continue;
		if (!L->pos[k])
			L->pos[k] = (uint32_t)i + 1;
		if (!L->bpos[k & 0x7fff])
			L->bpos[k & 0x7fff] = (uint32_t)i + 1;
	}
	if ((be16toh(pt->pkeys[0]) & 0x7fff) != (keys[0] & 0x7fff) &&
	    (be16toh(pt->pkeys[0]) & 0x7fff))
		(*moved)++;
	/* The same key where it is, then the same partition (a membership
	 * changed: the index stays, as in OpenSM). */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t j = 1; j < fit; j++) {
			uint32_t at = pass ? L->bpos[keys[j] & 0x7fff]
					   : L->pos[keys[j]];

			if (L->placed[j] || !at || at - 1 >= cap ||
			    L->taken[at - 1])
				continue;
			L->out[at - 1] = keys[j];
			L->taken[at - 1] = 1;
			L->placed[j] = 1;
			if (at > top)
				top = at;
		}
	}
	/* New keys after the last index kept, then in the holes. */
	for (size_t j = 1; j < fit; j++) {
		size_t at;

		if (L->placed[j])
			continue;
		if (L->bpos[keys[j] & 0x7fff])
			(*moved)++;
		if (top < cap) {
			at = top++;
		} else {
			while (L->taken[hole])
				hole++;
			at = hole;
		}
		L->out[at] = keys[j];
		L->taken[at] = 1;
	}
	for (size_t i = 1; i < tsize; i++) {
		uint16_t k = be16toh(pt->pkeys[i]);

		L->pos[k] = 0;
		L->bpos[k & 0x7fff] = 0;
	}
	return top;
}

/*
 * Give port `pn` of node `id` the first keys of `keys` (n, priority
 * order) that fit `cap`, laid out as lay_out() says when `keep` and the
 * port's table is known, else packed; the rest are dropped and noted.
 */
static int set_table(struct layout *L, struct part_resolve_report *rep,
		     struct fab_node *nd, int32_t id, unsigned pn,
		     const uint16_t *keys, size_t n, unsigned cap, bool keep)
{
	struct fab_port *pt = &nd->ports[pn];
	size_t fit = n < cap ? n : cap, used = fit;
	const uint16_t *src = keys;

	note_drops(rep, nd, id, pn, keys, fit, n);
	if (!fit) {
		/*
		 * A port in no partition (a file whose Default names
		 * explicit members) holds an empty table, as OpenSM clears
		 * it: never NULL, which would mean "no partitions here" and
		 * give it the default partition's full key.
		 */
		pt->want_pkeys = malloc(sizeof(*pt->want_pkeys));
		if (!pt->want_pkeys)
			return -ENOMEM;
		pt->n_want_pkeys = 0;
		return 0;
	}
	if (keep && L->keep && fabric_pkey_known(pt)) {
		used = lay_out(L, pt, keys, fit, cap, &rep->moved);
		src = L->out;
	}
	pt->want_pkeys = malloc(used * sizeof(*pt->want_pkeys));
	if (!pt->want_pkeys)
		return -ENOMEM;
	memcpy(pt->want_pkeys, src, used * sizeof(*src));
	pt->n_want_pkeys = (uint16_t)used;
	rep->ports++;
	return 0;
}

static unsigned port_cap(const struct fab_port *pt, unsigned cap)
{
	if (pt->pkey_blocks && cap > pt->pkey_blocks * PKEY_BLOCK_SIZE)
		cap = pt->pkey_blocks * PKEY_BLOCK_SIZE;
	return cap;
}

int part_resolve(const struct part_config *c, struct fabric *f,
		 uint64_t sm_port_guid, struct part_resolve_report *rep)
{
	const struct part_resolve_opts o = { .keep_pkey_indexes = true };

	return part_resolve_opts(c, f, sm_port_guid, &o, rep);
}

/* The end ports of `f` (CA and router ports that are linked or the
 * SM's, switch port 0), sorted by port GUID, in *eps (malloc'd).  0 or
 * -ENOMEM. */
static int collect_eps(const struct fabric *f, struct endport **out,
		       size_t *n_out)
{
	struct endport *eps = NULL;
	size_t n_eps = 0, cap_eps = 0;

	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		unsigned first = n->type == NODE_TYPE_SWITCH ? 0 : 1;
		unsigned last = n->type == NODE_TYPE_SWITCH ? 0 : n->num_ports;

		for (unsigned p = first; n->ports && p <= last; p++) {
			const struct fab_port *pt = &n->ports[p];
			bool local = (int32_t)i == f->local_node &&
				     p == f->local_port;

			if (n->type != NODE_TYPE_SWITCH &&
			    pt->peer_node == FAB_NONE && !local)
				continue;
			if (n_eps == cap_eps) {
				size_t nc = cap_eps ? cap_eps * 2 : 64;
				struct endport *ne = realloc(eps, nc * sizeof(*ne));

				if (!ne) {
					free(eps);
					return -ENOMEM;
				}
				eps = ne;
				cap_eps = nc;
			}
			eps[n_eps++] = (struct endport){
				.guid = pt->guid ? pt->guid : n->guid,
				.node = (int32_t)i, .port = (uint8_t)p,
				.type = n->type,
			};
		}
	}
	if (n_eps)
		qsort(eps, n_eps, sizeof(*eps), cmp_guid);
	*out = eps;
	*n_out = n_eps;
	return 0;
}

int part_reach(const struct part_config *c, const struct fabric *f)
{
	struct endport *eps;
	size_t n_eps;
	bool type_seen[4] = { false };
	int reach = 0, rc = collect_eps(f, &eps, &n_eps);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < n_eps; i++)
		if (eps[i].type < 4)
			type_seen[eps[i].type] = true;
	for (size_t pi = 0; pi < c->n_parts; pi++) {
		const struct part *pa = &c->parts[pi];
		bool hit = false;

		if (pa->pkey == PART_PKEY_DEFAULT)
			continue;
		for (size_t mi = 0; mi < pa->n_members && !hit; mi++) {
			const struct part_member *m = &pa->members[mi];

			switch (m->kind) {
			case PART_M_GUID:
				hit = find_ep(eps, n_eps, m->guid) >= 0;
				break;
			case PART_M_ALL:
				hit = n_eps > 0;
				break;
			case PART_M_ALL_CAS:
				hit = type_seen[NODE_TYPE_CA];
				break;
			case PART_M_ALL_SWITCHES:
				hit = type_seen[NODE_TYPE_SWITCH];
				break;
			case PART_M_ALL_ROUTERS:
				hit = type_seen[NODE_TYPE_ROUTER];
				break;
			case PART_M_SELF:
				break;		/* the SM's port alone */
			}
		}
		reach += hit;
	}
	free(eps);
	return reach;
}

int part_resolve_opts(const struct part_config *c, struct fabric *f,
		      uint64_t sm_port_guid, const struct part_resolve_opts *o,
		      struct part_resolve_report *rep)
{
	struct layout L = { .keep = o->keep_pkey_indexes };
	struct endport *eps = NULL;
	size_t n_eps = 0;
	struct entry *ents = NULL;
	size_t n_ents = 0, cap_ents = 0;
	uint8_t *st = NULL;
	bool *ix = NULL;
	uint16_t *keys = NULL;
	uint8_t *fullset = NULL;	/* bitmap: full keys of one port */
	int rc = 0;

	memset(rep, 0, sizeof(*rep));

	/* Start from nothing: the model's tables are ours to write. */
	for (size_t i = 0; i < f->n_nodes; i++) {
		struct fab_node *n = &f->nodes[i];

		for (unsigned p = 0; n->ports && p <= n->num_ports; p++) {
			free(n->ports[p].want_pkeys);
			n->ports[p].want_pkeys = NULL;
			n->ports[p].n_want_pkeys = 0;
		}
	}

	/* The end ports, sorted by port GUID. */
	rc = collect_eps(f, &eps, &n_eps);
	if (rc < 0)
		goto out;
	st = calloc(n_eps + 1, 1);
	ix = calloc(n_eps + 1, sizeof(*ix));
	if (!st || !ix) {
		rc = -ENOMEM;
		goto out;
	}
	long self = find_ep(eps, n_eps, sm_port_guid);

	/* Per partition, the membership of every end port. */
	for (size_t pi = 0; pi < c->n_parts; pi++) {
		const struct part *pa = &c->parts[pi];

		memset(st, 0, n_eps);
		memset(ix, 0, n_eps * sizeof(*ix));
		for (size_t mi = 0; mi < pa->n_members; mi++) {
			const struct part_member *m = &pa->members[mi];
			long e;

			switch (m->kind) {
			case PART_M_GUID:
			case PART_M_SELF:
				e = find_ep(eps, n_eps, m->kind == PART_M_SELF ?
					    sm_port_guid : m->guid);
				if (e < 0) {
					if (m->kind == PART_M_GUID &&
					    rep->unknown_guids++ <
					    PART_UNKNOWN_DETAIL)
						rep->unknown[rep->n_unknown++] = m;
					break;
				}
				apply(st, ix, (size_t)e, m->membership, m->indx0);
				break;
			default:
				for (size_t k = 0; k < n_eps; k++) {
					uint8_t t = eps[k].type;

					if (m->kind == PART_M_ALL ||
					    (m->kind == PART_M_ALL_CAS &&
					     t == NODE_TYPE_CA) ||
					    (m->kind == PART_M_ALL_SWITCHES &&
					     t == NODE_TYPE_SWITCH) ||
					    (m->kind == PART_M_ALL_ROUTERS &&
					     t == NODE_TYPE_ROUTER))
						apply(st, ix, k, m->membership,
						      m->indx0);
				}
				break;
			}
		}
		if (pa->pkey == PART_PKEY_DEFAULT && self >= 0)
			st[self] = ST_FULL;
		for (size_t k = 0; k < n_eps; k++) {
			for (unsigned bit = ST_FULL; bit; bit >>= 1) {
				if (!(st[k] & bit))
					continue;
				if (n_ents == cap_ents) {
					size_t nc = cap_ents ? cap_ents * 2 : 256;
					struct entry *ne = realloc(ents,
							nc * sizeof(*ne));

					if (!ne) {
						rc = -ENOMEM;
						goto out;
					}
					ents = ne;
					cap_ents = nc;
				}
				ents[n_ents++] = (struct entry){
					.ep = (uint32_t)k, .part = (uint32_t)pi,
					.key = (uint16_t)(pa->pkey |
						(bit == ST_FULL ? PART_FULL_BIT : 0)),
					.idx0 = ix[k] ? 0 : 2,
				};
			}
		}
	}

	/*
	 * Index 0: the last indx0 partition of a port (idx0 0) wins over
	 * earlier ones; without one, the default partition's key.
	 */
	if (n_ents)
		qsort(ents, n_ents, sizeof(*ents), cmp_entry);
	for (size_t a = 0; a < n_ents;) {
		size_t b = a;
		long best = -1, dflt = -1;

		while (b < n_ents && ents[b].ep == ents[a].ep) {
			if (ents[b].idx0 == 0 &&
			    (best < 0 || ents[b].part > ents[best].part))
				best = (long)b;
			if ((ents[b].key & 0x7fff) == PART_PKEY_DEFAULT && dflt < 0)
				dflt = (long)b;
			b++;
		}
		for (size_t k = a; k < b; k++)
			ents[k].idx0 = 2;
		if (dflt >= 0)
			ents[dflt].idx0 = best >= 0 ? 1 : 0;
		if (best >= 0)
			ents[best].idx0 = 0;
		a = b;
	}
	if (n_ents)
		qsort(ents, n_ents, sizeof(*ents), cmp_entry);

	/* End ports' tables. */
	keys = malloc((c->n_parts * 2 + 1) * sizeof(*keys));
	fullset = calloc(0x8000 / 8, 1);
	if (!keys || !fullset) {
		rc = -ENOMEM;
		goto out;
	}
	if (L.keep) {
		L.pos = calloc(0x10000, sizeof(*L.pos));
		L.bpos = calloc(0x8000, sizeof(*L.bpos));
		L.taken = malloc(PKEY_MAX_BLOCKS * PKEY_BLOCK_SIZE);
		L.out = malloc(PKEY_MAX_BLOCKS * PKEY_BLOCK_SIZE *
			       sizeof(*L.out));
		L.placed = malloc(c->n_parts * 2 + 1);
		if (!L.pos || !L.bpos || !L.taken || !L.out || !L.placed) {
			rc = -ENOMEM;
			goto out;
		}
	}
	for (size_t a = 0; a < n_ents;) {
		size_t b = a, n = 0;
		const struct endport *ep = &eps[ents[a].ep];
		struct fab_node *nd = &f->nodes[ep->node];
		struct fab_port *pt = &nd->ports[ep->port];

		while (b < n_ents && ents[b].ep == ents[a].ep)
			keys[n++] = ents[b++].key;
		rc = set_table(&L, rep, nd, ep->node, ep->port, keys, n,
			       port_cap(pt, nd->partition_cap), true);
		if (rc)
			goto out;
		a = b;
	}

	/* End ports no partition names: an empty table. */
	for (size_t e = 0; e < n_eps; e++) {
		struct fab_node *nd = &f->nodes[eps[e].node];

		if (nd->ports[eps[e].port].want_pkeys)
			continue;
		rc = set_table(&L, rep, nd, eps[e].node, eps[e].port, keys, 0,
			       port_cap(&nd->ports[eps[e].port],
					nd->partition_cap), false);
		if (rc)
			goto out;
	}

	/* Switch external ports facing a CA or router port. */
	for (size_t i = 0; i < f->n_nodes; i++) {
		struct fab_node *n = &f->nodes[i];
		unsigned cap;

		if (n->type != NODE_TYPE_SWITCH || !n->ports ||
		    !n->has_switch_info)
			continue;
		cap = be16toh(n->si.partition_enf_cap);
		if (!cap)
			continue;
		for (unsigned p = 1; p <= n->num_ports; p++) {
			struct fab_port *pt = &n->ports[p];
			const struct fab_port *peer;
			const struct fab_node *pn;
			size_t k = 0;

			if (pt->peer_node == FAB_NONE ||
			    (size_t)pt->peer_node >= f->n_nodes)
				continue;
			pn = &f->nodes[pt->peer_node];
			if (pn->type == NODE_TYPE_SWITCH || !pn->ports ||
			    pt->peer_port > pn->num_ports)
				continue;
			peer = &pn->ports[pt->peer_port];
			for (size_t j = 0; j < peer->n_want_pkeys; j++) {
				uint16_t key = peer->want_pkeys[j];

				if (key & PART_FULL_BIT)
					fullset[(key & 0x7fff) >> 3] |=
						(uint8_t)(1u << (key & 7));
			}
			/* The end port's keys in its index order, packed
			 * (empty entries skipped), as OpenSM copies them. */
			for (size_t j = 0; j < peer->n_want_pkeys; j++) {
				uint16_t key = peer->want_pkeys[j];

				if (!(key & 0x7fff))
					continue;
				if ((key & PART_FULL_BIT) ||
				    !(fullset[key >> 3] & (1u << (key & 7))))
					keys[k++] = key;
			}
			for (size_t j = 0; j < peer->n_want_pkeys; j++)
				fullset[(peer->want_pkeys[j] & 0x7fff) >> 3] = 0;
			rc = set_table(&L, rep, n, (int32_t)i, p, keys, k,
				       port_cap(pt, cap), false);
			if (rc)
				goto out;
		}
	}
out:
	free(eps);
	free(ents);
	free(st);
	free(ix);
	free(keys);
	free(fullset);
	free(L.pos);
	free(L.bpos);
	free(L.taken);
	free(L.out);
	free(L.placed);
	return rc;
}
