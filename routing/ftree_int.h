/*
 * ftree_int.h - what routing/ftree.c (the tree: switches, levels, ports,
 * destinations) and routing/ftree_route.c (routing the LIDs: the chain
 * and flow strategies, layers, passes) share.  Private to the ftree
 * engine; see ftree.c for how it works.
 */
#ifndef IBSM_ROUTING_FTREE_INT_H
#define IBSM_ROUTING_FTREE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "routing/routing.h"
#include "model/fabric.h"

/* Down-links from switch x to one lower neighbour, grouped. */
struct dgroup {
	int32_t  nbr;		/* switch index below */
	uint32_t off;		/* ports[off .. off + n) on x, peers on nbr */
	uint32_t n;
};

/* One destination LID. */
struct fdest {
	uint16_t lid;
	uint8_t  port;		/* egress port at its switch (0: the switch) */
	uint8_t  counted;	/* a CA/router LID: counts for the balance */
	uint8_t  io;		/* an I/O node's LID (io_guid_file) */
	int32_t  owner;		/* node id owning the LID, for LMC grouping */
	uint8_t  owner_port;
};

struct ftree {
	const struct fabric *f;
	const struct routing_opts *o;
	struct routing_result *out;
	struct routing_result *cur;	/* the tables being filled */
	uint16_t top;
	char *err;
	size_t errlen;

	size_t   S;
	int32_t *sw_node;	/* switch index -> node id */
	int32_t *sw_idx;	/* node id -> switch index, -1 */
	int32_t *level;		/* 0 = leaf, -1 = not in the tree */
	int32_t  max_level;
	uint8_t *has_ca;	/* a source of CA traffic */
	uint8_t *only_io;	/* its CA ports are all I/O nodes' */
	uint8_t *is_leaf;
	uint8_t *top_reach;	/* reaches the top level going up */
	int32_t *comp;		/* connected component */
	uint32_t *rot;		/* tie-break offset: ordinal in its level */
	int32_t *order;		/* switches, highest level first */
	size_t   n_order;	/* switches in the tree */
	uint8_t **lftp;		/* switch index -> its LFT */

	uint32_t *port_base;	/* per-port arrays: [port_base[x] + p] */
	int32_t *pnbr;		/* neighbour switch on that port, -1 */
	uint8_t *ppeer;		/* port number at the neighbour */
	uint32_t *cnt;		/* destinations routed out of that port */

	uint32_t *up_off;	/* up-ports of x: uplist[up_off[x] ..] */
	uint8_t *uplist;
	uint32_t *dg_off;	/* down groups of x: dg[dg_off[x] ..] */
	struct dgroup *dg;
	uint8_t *dports, *dpeers;

	/* per destination switch: its ancestors and their ports towards it */
	uint32_t *astamp, acur;
	int32_t *anc;
	size_t   n_anc;
	uint32_t *cand_off, *cand_n;
	uint8_t *cand;
	size_t   cap_cand;

	/* per destination LID */
	uint32_t *routed, rcur;
	int32_t  dst;		/* the destination's switch */
	int32_t *chain;		/* chain strategy: s and the switches above */
	uint32_t *pmin, *pidx;	/* least_up(): bound and cursor per switch */
	uint32_t *flow;		/* chain strategy: flows per slot (else cnt) */
	int32_t *next;		/* next switch towards it, -1 */
	uint32_t *oslot;		/* slot of the egress port */
	uint32_t *entry;	/* slot of the link the path enters dst by */
	uint32_t *mass;		/* sources whose path crosses the switch */
	uint32_t *src;		/* CA ports: sources of traffic */
	uint32_t *est;		/* per destination switch: expected mass, 1/16 */
	uint8_t  *useful;	/* per destination switch: reaches it up*down* */
	uint32_t *pe_stamp, *prev_entry;	/* LMC */
	uint32_t *tmp;		/* per slot: tentative load of this LID */
	uint32_t *touched;	/* slots with a tentative load */
	size_t   n_touched;
	uint32_t no_slot;	/* a slot that is always 0: no link */
	int32_t *queue;
	int32_t *pending;

	/* LMC: switches and ports the current port's earlier LIDs use */
	uint32_t *use_stamp, ucur;
	uint8_t  *use;

	struct fdest *dests;	/* grouped by destination switch */
	uint32_t *dest_off;	/* dests of switch x: dest_off[x] .. [x + 1] */

	size_t n_phase5;

	/* io_guid_file: the sorted port GUIDs of the compute nodes (the
	 * cn_guid_file's; NULL: every CA port not an I/O node) and of the
	 * I/O nodes; the I/O LIDs, the routes to them with reverse hops,
	 * whether other LIDs have such routes (from switches whose CA ports
	 * are all I/O nodes'); per switch, for the LID being routed:
	 * reverse hops and up hops on its path */
	uint64_t *cn, *io;
	size_t   n_io_lids, n_io_rev;
	bool     io_src_rev;
	uint32_t *rrev, *rup;
	uint64_t *rkey;		/* per switch: its best (reverse, up, load) */
	uint8_t  *rport;	/* and the port that gives it */

	/* chain strategy run after the flow strategy: stop (-ECANCELED) as
	 * soon as a link carries more than stop_above flows, since the
	 * flow strategy's tables then win whatever comes after */
	bool stop;
	uint64_t stop_above;
	bool stopped;
};

#define ALLOC(p, n)	((p) = calloc((n) ? (n) : 1, sizeof(*(p))))

/* ftree.c */
const char *ftree_sw_desc(const struct ftree *t, size_t x);
uint64_t ftree_sw_guid(const struct ftree *t, size_t x);
/* The ancestors of switch s and, for each, its down-ports towards s;
 * the expected sources through every other switch (flow strategy only:
 * t->flow NULL). */
void ftree_find_ancestors(struct ftree *t, int32_t s);

/* ftree_route.c */
/* Every LID, by the chain strategy when t->flow is set (its flows
 * counted there), else by the flow strategy; into *out. */
int ftree_route_all(struct ftree *t, struct routing_result *out);
/* The I/O nodes' LIDs into r (after every other LID: the other routes
 * do not depend on them), up*down* where a switch has such a path, else
 * with the fewest reverse hops. */
int ftree_route_io(struct ftree *t, struct routing_result *r);
/* Whether port GUID g is an I/O node's (listed in io_guid_file and not in
 * cn_guid_file). */
bool ftree_is_io(const struct ftree *t, uint64_t g);
/* Switch LIDs whose detours would close a dependency cycle: SL 1. */
int ftree_fix_layers(struct ftree *t, struct routing_result *r);
/* The most flows on one link, and the leaf bound (a leaf's flows spread
 * evenly over its up-links: no routing does better). */
uint64_t ftree_max_flow(const struct ftree *t, const uint32_t *flow);
uint64_t ftree_leaf_bound(const struct ftree *t);

#endif /* IBSM_ROUTING_FTREE_INT_H */
