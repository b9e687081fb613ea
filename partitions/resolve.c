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
 *    Keys past the table size are dropped and counted.
 *  - n_want_pkeys is the number of keys placed (no empty slots); the
 *    programmer pads the rest of the table with 0.
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

/* Copy `keys` (n) to the port, at most cap; returns the keys dropped. */
static unsigned set_table(struct fab_port *pt, const uint16_t *keys,
			  size_t n, unsigned cap, int *err)
{
	size_t fit = n < cap ? n : cap;

	if (!fit)
		return (unsigned)n;
	pt->want_pkeys = malloc(fit * sizeof(*pt->want_pkeys));
	if (!pt->want_pkeys) {
		*err = -ENOMEM;
		return 0;
	}
	memcpy(pt->want_pkeys, keys, fit * sizeof(*keys));
	pt->n_want_pkeys = (uint16_t)fit;
	return (unsigned)(n - fit);
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
	struct endport *eps = NULL;
	size_t n_eps = 0, cap_eps = 0;
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
	for (size_t i = 0; i < f->n_nodes; i++) {
		struct fab_node *n = &f->nodes[i];
		unsigned first = n->type == NODE_TYPE_SWITCH ? 0 : 1;
		unsigned last = n->type == NODE_TYPE_SWITCH ? 0 : n->num_ports;

		for (unsigned p = first; n->ports && p <= last; p++) {
			struct fab_port *pt = &n->ports[p];
			bool local = (int32_t)i == f->local_node &&
				     p == f->local_port;

			if (n->type != NODE_TYPE_SWITCH &&
			    pt->peer_node == FAB_NONE && !local)
				continue;
			if (n_eps == cap_eps) {
				size_t nc = cap_eps ? cap_eps * 2 : 64;
				struct endport *ne = realloc(eps, nc * sizeof(*ne));

				if (!ne) {
					rc = -ENOMEM;
					goto out;
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
					if (m->kind == PART_M_GUID)
						rep->unknown_guids++;
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
	for (size_t a = 0; a < n_ents;) {
		size_t b = a, n = 0;
		const struct endport *ep = &eps[ents[a].ep];
		struct fab_node *nd = &f->nodes[ep->node];
		struct fab_port *pt = &nd->ports[ep->port];

		while (b < n_ents && ents[b].ep == ents[a].ep)
			keys[n++] = ents[b++].key;
		rep->dropped += set_table(pt, keys, n,
					  port_cap(pt, nd->partition_cap), &rc);
		if (rc)
			goto out;
		if (pt->want_pkeys)
			rep->ports++;
		a = b;
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
			for (size_t j = 0; j < peer->n_want_pkeys; j++) {
				uint16_t key = peer->want_pkeys[j];

				if ((key & PART_FULL_BIT) ||
				    !(fullset[key >> 3] & (1u << (key & 7))))
					keys[k++] = key;
			}
			for (size_t j = 0; j < peer->n_want_pkeys; j++)
				fullset[(peer->want_pkeys[j] & 0x7fff) >> 3] = 0;
			rep->dropped += set_table(pt, keys, k, port_cap(pt, cap),
						  &rc);
			if (rc)
				goto out;
			if (pt->want_pkeys)
				rep->ports++;
		}
	}
out:
	free(eps);
	free(ents);
	free(st);
	free(ix);
	free(keys);
	free(fullset);
	return rc;
}
