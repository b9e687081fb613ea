/*
 * cdgraph.h - what the deadlock-free engines (updn.c, dfsssp.c) share:
 * the switch graph with one entry per usable inter-switch port (a
 * channel), the destination of every LID, per-channel load counters, and
 * the up*\/down* router that dfsssp falls back on.  Private to routing/.
 */
#ifndef IBSM_ROUTING_CDGRAPH_H
#define IBSM_ROUTING_CDGRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "routing/routing.h"

#define RG_INF	UINT32_MAX

/* What the LFTs must do for one LID. */
struct rg_dest {
	int32_t sw;		/* switch index it hangs off, -1: nobody / cut off */
	uint8_t port;		/* egress port there (0: the switch itself) */
	uint8_t host;		/* a CA/router LID (counts for the load) */
};

struct rgraph {
	const struct fabric *f;
	uint16_t top;		/* highest LID */
	uint32_t S;		/* switches */
	int32_t *sw_node;	/* switch index -> node id */
	int32_t *sw_idx;	/* node id -> switch index, -1 */
	/* channels of switch v: adj[adj_off[v] .. adj_off[v + 1]), one per
	 * up port that leads to another switch (parallel links: one each),
	 * in port order (rg_build_opts(): in the switch's search order) */
	uint32_t *adj_off;
	uint32_t *adj_nbr;	/* the switch it leads to */
	uint8_t  *adj_port;	/* the port it leaves by */
	uint32_t *adj_rev;	/* the channel back (same link, other way) */
	uint32_t *nhost;	/* CA/router ports linked to each switch */
	uint32_t *comp;		/* connected component of each switch */
	struct rg_dest *dest;	/* top + 1 */
	uint64_t *load;		/* per channel: host paths routed over it */
	uint32_t *cnt;		/* per channel: host LIDs routed over it */
};

int rg_build(struct rgraph *g, const struct fabric *f, char *err,
	     size_t errlen);
/* The same with each switch's channels in its port_search_ordering_file
 * order (routing_opts.port_rank) instead of port order: where two
 * channels are equally good, the engines take the first. */
int rg_build_opts(struct rgraph *g, const struct fabric *f,
		  const struct routing_opts *o, char *err, size_t errlen);
void rg_free(struct rgraph *g);

/* Hop counts from switch t to every switch (RG_INF: unreachable), in
 * dist; the switches in BFS order in order (returns how many). */
uint32_t rg_bfs(const struct rgraph *g, uint32_t t, uint32_t *dist,
		uint32_t *order);

/*
 * One LID's tree, balanced on the all-to-all load (see dfsssp.c): the
 * switches order[1 .. n) (order[0] = t, the LID's switch), each after
 * every switch it may forward to, choose among the channels a for which
 * ok(ctx, v, a) holds the one whose path to t carries the least load
 * (g->load, plus the host paths of this LID chosen so far), then every
 * chosen channel takes on the host paths that cross it.  Fills nxt[v]
 * (RG_INF: no choice) and act[v] (some counted path passes v).
 */
struct rg_tree {
	uint32_t *nxt;
	uint8_t  *act;
	uint64_t *cost, *flow, *pending;
	uint32_t *touched, n_touched;
};

int rg_tree_init(struct rg_tree *tr, const struct rgraph *g);
void rg_tree_free(struct rg_tree *tr);
void rg_tree_build(struct rgraph *g, struct rg_tree *tr, uint16_t lid,
		   const uint32_t *order, uint32_t n,
		   bool (*ok)(void *ctx, uint32_t v, uint32_t a), void *ctx);

/*
 * Up*\/down* routing on the order `key` (a channel v -> w goes up when
 * key[w] < key[v]; keys distinct): every path climbs, then descends, so
 * no dependency ever leads from a descending channel to a climbing one
 * and the channel dependency graph is acyclic whatever the destinations.
 * updn_route() fills the LFT entries of the LIDs for which want(lid) is
 * true (NULL: all), spreading LIDs over equally good ports by g->cnt, and
 * returns the (switch, LID) pairs that have no legal path although they
 * are connected (0 for a usable key) or -ENOMEM.
 */
struct updn;
struct updn *updn_new(struct rgraph *g, const uint32_t *key);
void updn_free(struct updn *u);
int64_t updn_route(struct updn *u, struct routing_result *out,
		   bool (*want)(void *ctx, uint16_t lid), void *ctx);
/* updn_route() takes lids[0 .. n) first, in that order, then the others
 * (guid_routing_order_file, routing_lid_order()); lids stays the
 * caller's and must outlive u.  0 or -ENOMEM. */
int updn_set_order(struct updn *u, const uint16_t *lids, size_t n);

/*
 * Choose the order for up*\/down* routing as updn (dnup false) or dnup
 * (true) does (see updn.c): roots from o->root_guids, else the top (for
 * dnup the bottom) of a fat tree, else one central switch per component,
 * whichever first gives every connected pair a legal path.  Fills key[S];
 * `what` gets a few words on the choice.  0, or -ENOMEM.
 */
int updn_pick(struct rgraph *g, const struct routing_opts *o, bool dnup,
	      uint32_t *key, char *what, size_t whatlen);

#endif /* IBSM_ROUTING_CDGRAPH_H */
