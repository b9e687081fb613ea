/*
 * nue.h - what the files of the nue engine share (routing/nue/).
 *
 * The engine (nue.c) routes one destination LID at a time within one
 * virtual layer.  Each layer keeps its channel dependency graph (CDG) and
 * a topological order of it (cdg.c); a dependency goes in only when it
 * closes no cycle, so every layer stays acyclic by construction.  Each
 * layer also holds, from the start, every turn of one spanning tree of
 * the switches (escape.c): routes along that tree use no dependency the
 * layer does not already have, so a destination that cannot be routed
 * otherwise always can be routed along it.
 */
#ifndef IBSM_ROUTING_NUE_NUE_H
#define IBSM_ROUTING_NUE_NUE_H

#include <stdbool.h>
#include <stdint.h>

#include "routing/cdgraph.h"

#define NUE_MAX_VLS	8
#define NUE_NONE	UINT32_MAX

/*
 * The layers' CDGs.  A dependency is a pair of channels (a, b) where b
 * leaves the switch a leads to; it is stored as one bit per layer in the
 * slot dep_off[a] + (b - adj_off[adj_nbr[a]]).
 */
struct nue_cdg {
	const struct rgraph *g;
	uint32_t C;		/* channels */
	unsigned n_vl;
	uint32_t *dep_off;	/* C + 1 */
	uint8_t  *dep;		/* dep_off[C]: bit l = in layer l */
	uint32_t *owner;	/* channel -> switch it leaves */
	uint32_t *ord;		/* n_vl x C: topological position */
	/* search scratch */
	uint32_t *mark, stamp;
	uint32_t *stk;
	uint64_t *lf, *lb;
	uint32_t *pos;
	/* what the current destination added, to undo it */
	uint32_t *log;
	uint8_t  *log_l;
	uint32_t  n_log, cap_log;
	bool      logging;
	/* channels visited by searches, and searches that hit their bound */
	uint64_t  work;
	uint64_t  bounded;
	uint64_t  searches;
	uint32_t  search_max;	/* channels a search may visit, 0: any */
};

int nue_cdg_init(struct nue_cdg *d, const struct rgraph *g, unsigned n_vl,
		 uint32_t log_cap);
void nue_cdg_free(struct nue_cdg *d);

/* Add the dependency channel a -> channel b to layer l unless it would
 * close a cycle (false; nothing added).  A search that would pass
 * search_max channels counts as a cycle: refused, which is always safe. */
bool nue_cdg_add(struct nue_cdg *d, unsigned l, uint32_t a, uint32_t b);

/* Whether a -> b is in layer l or agrees with its order (no search). */
bool nue_cdg_free_dep(const struct nue_cdg *d, unsigned l, uint32_t a,
		      uint32_t b);

/* Undo what was added since log position `from` (logging on). */
void nue_cdg_undo(struct nue_cdg *d, uint32_t from);

/* Whether layer l has dependency a -> b. */
bool nue_cdg_has(const struct nue_cdg *d, unsigned l, uint32_t a, uint32_t b);

/* A full check of layer l (depth-first search): acyclic?  For tests. */
bool nue_cdg_acyclic(struct nue_cdg *d, unsigned l);

/*
 * Escape trees: one spanning forest per layer (breadth-first from a
 * central switch of that layer's destinations), whose turns are put into
 * the layer at the start.  tree[l * C + c]: channel c is a tree edge.
 */
struct nue_escape {
	uint8_t  *tree;
	uint32_t *root;		/* per layer */
};

/* Layer of each switch's destinations (*cluster, S entries, grown from
 * n_vl seeds far apart) and the escape trees, rooted at each cluster's
 * most central switch; their turns go into d.  0 or -ENOMEM. */
int nue_escape_build(const struct rgraph *g, struct nue_cdg *d,
		     unsigned n_vl, uint8_t *cluster, struct nue_escape *e);
void nue_escape_free(struct nue_escape *e);

#endif /* IBSM_ROUTING_NUE_NUE_H */
