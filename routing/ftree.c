/*
 * ftree.c - fat-tree routing: up/down paths that spread the destinations
 * evenly over the links of every level, OpenSM's "ftree" engine.
 *
 * Levels.  Leaves are the switches with CA or router ports (with a
 * cn_guid_file: the switches with a compute-node port); a switch's level
 * is its hop count from the nearest leaf.  With a root_guid_file the
 * ranks come from the roots instead (rank 0) and every leaf must sit at
 * the deepest rank.  Every link must join two adjacent levels: a link
 * within one level (a torus, a mesh, most random graphs) means the fabric
 * is not a fat tree and the engine refuses, naming the switch, so that
 * the chain can fall back.  Ports to a higher level are up-ports, to a
 * lower level down-ports.
 *
 * Routes.  For each destination LID, hanging off switch s (its leaf),
 * the ancestors of s (the switches that reach s going only down) route
 * down towards it; every other switch routes up, to a neighbour routed
 * before it.  Two strategies choose among the candidates:
 *
 * Chain.  The destination's chain climbs from s to a top switch: at every
 * step the up-port whose link down into the current switch carries the
 * fewest destinations so far (one that reaches the top level first; for
 * the further LIDs of a port with LMC > 0, a switch and link the port's
 * earlier LIDs do not use).  Going down from every chain switch, the
 * lowest first, every switch not yet routed routes up to the switch that
 * reached it (parallel links: the one with the fewest destinations).
 * Switches not below the chain (on a complete tree: those whose subtree
 * goes through a sibling; with links missing: those cut off from it)
 * route up to a routed neighbour on their up-port with the fewest
 * destinations.  All the traffic to one destination converges on one top
 * switch and comes down one path; on a complete tree every up-link and
 * every down-link of a level carries the same number of destinations
 * (+-1), ties going round robin from a per-switch offset so that leaves
 * with more hosts than up-links do not all put their extra destination
 * on the same spine.  This is OpenSM's idea, and it is exact when every
 * switch's destinations divide evenly over its links.
 *
 * Flow.  When they do not (18 hosts over 8 up-links, or links missing),
 * whole destinations per link cannot be even: 3 destinations where 2.25
 * would be.  The flow strategy counts all-to-all flows (source-destination
 * pairs) per directed link and lets one destination's sources split:
 * top down, each switch picks the up-neighbour whose path is least loaded
 * (the busiest link of the whole path: the link up and every link of the
 * neighbour's path down to s, then their sum), and adds its expected
 * share of the sources (its own CA ports plus an even share of those
 * below) to those links at once, so the next switch sees them; the
 * real flows are counted once the LID is routed.  Being greedy, the
 * first LIDs cannot see where the later ones will go; when the busiest
 * link is then above the leaf bound (by more than 1/1024), a second pass
 * routes every CA LID again with its own first-pass flows taken off the
 * links.  LMC: a switch prefers links and entry links that it did not
 * use for the port's earlier LIDs.
 *
 * The chain strategy runs first; when its busiest link carries more
 * flows than the leaf bound (a leaf's flows spread evenly over its
 * up-links: no routing does better), the flow strategy runs too and the
 * tables whose busiest link carries fewer flows win.  The summary says
 * which, with both figures and the bound.
 *
 * Every up route goes to a switch routed before it, every down route
 * strictly towards s, so the tables are loop-free by construction and
 * the paths up*down* (deadlock-free on one VL).  The exception: a switch
 * with no up-then-down path left (a top switch that lost its link towards
 * s; a leaf's route to a switch LID whose subtree lost the link) takes
 * any routed neighbour.  That is allowed for switch LIDs (management
 * traffic) and on switches without CA ports, which originate no data
 * traffic; a CA-to-CA path in that state makes the engine refuse ("the
 * tree is cut") so that the chain can fall back.
 *
 * Cost: per destination O(switches + their up-ports) (flow) or
 * O(switches) amortised (chain, see least_up()); per leaf O(the ports of
 * its ancestors).  11,664 hosts and 1,620 switches: 0.3 s whole (chain
 * only), about 3.5 s with 5% of the links gone (both; the flow strategy
 * walks each candidate's whole path, at most 2 x levels links; the
 * second pass, when it runs, doubles the flow strategy's time).
 * Memory beyond the tables: a few arrays per switch and per port, and a
 * second set of tables while both strategies run.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/verify.h"

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
};

static void ft_free(struct ftree *t)
{
	free(t->sw_node);
	free(t->sw_idx);
	free(t->level);
	free(t->has_ca);
	free(t->is_leaf);
	free(t->top_reach);
	free(t->comp);
	free(t->rot);
	free(t->order);
	free(t->lftp);
	free(t->port_base);
	free(t->pnbr);
	free(t->ppeer);
	free(t->cnt);
	free(t->up_off);
	free(t->uplist);
	free(t->dg_off);
	free(t->dg);
	free(t->dports);
	free(t->dpeers);
	free(t->astamp);
	free(t->anc);
	free(t->cand_off);
	free(t->cand_n);
	free(t->cand);
	free(t->routed);
	free(t->next);
	free(t->chain);
	free(t->pmin);
	free(t->pidx);
	free(t->flow);
	free(t->oslot);
	free(t->entry);
	free(t->mass);
	free(t->src);
	free(t->est);
	free(t->useful);
	free(t->pe_stamp);
	free(t->prev_entry);
	free(t->tmp);
	free(t->touched);
	free(t->queue);
	free(t->pending);
	free(t->use_stamp);
	free(t->use);
	free(t->dests);
	free(t->dest_off);
}

static const char *sw_desc(const struct ftree *t, size_t x)
{
	return fabric_node(t->f, t->sw_node[x])->desc;
}

static uint64_t sw_guid(const struct ftree *t, size_t x)
{
	return fabric_node(t->f, t->sw_node[x])->guid;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool in_sorted(const uint64_t *v, size_t n, uint64_t g)
{
	return v && bsearch(&g, v, n, sizeof(*v), cmp_u64) != NULL;
}

#define ALLOC(p, n)	((p) = calloc((n) ? (n) : 1, sizeof(*(p))))

/* Switch indices, the per-port neighbour map, leaves and components. */
static int cmp_node_guid(const void *a, const void *b, void *arg)
{
	const struct fabric *f = arg;
	uint64_t x = f->nodes[*(const int32_t *)a].guid;
	uint64_t y = f->nodes[*(const int32_t *)b].guid;

	return x < y ? -1 : x > y;
}

static int build_graph(struct ftree *t)
{
	const struct fabric *f = t->f;
	size_t S = 0, P = 0;
	uint64_t *cn = NULL;

	if (!ALLOC(t->sw_idx, f->n_nodes))
		return -ENOMEM;
	for (size_t i = 0; i < f->n_nodes; i++) {
		t->sw_idx[i] = -1;
		if (f->nodes[i].type == NODE_TYPE_SWITCH) {
			t->sw_idx[i] = (int32_t)S++;
			P += (size_t)f->nodes[i].num_ports + 1;
		}
	}
	t->S = S;
	if (!ALLOC(t->sw_node, S) || !ALLOC(t->level, S) ||
	    !ALLOC(t->has_ca, S) || !ALLOC(t->is_leaf, S) ||
	    !ALLOC(t->top_reach, S) || !ALLOC(t->comp, S) ||
	    !ALLOC(t->rot, S) || !ALLOC(t->order, S) || !ALLOC(t->lftp, S) ||
	    !ALLOC(t->port_base, S + 1) || !ALLOC(t->pnbr, P) ||
	    !ALLOC(t->ppeer, P) || !ALLOC(t->cnt, P + 1) ||
	    !ALLOC(t->astamp, S) || !ALLOC(t->cand_off, S) ||
	    !ALLOC(t->cand_n, S) || !ALLOC(t->anc, S) ||
	    !ALLOC(t->routed, S) || !ALLOC(t->next, S) ||
	    !ALLOC(t->chain, S + 1) || !ALLOC(t->pmin, S) ||
	    !ALLOC(t->pidx, S) ||
	    !ALLOC(t->oslot, S) || !ALLOC(t->entry, S) || !ALLOC(t->mass, S) ||
	    !ALLOC(t->src, S) || !ALLOC(t->est, S) ||
	    !ALLOC(t->useful, S) || !ALLOC(t->pe_stamp, S) ||
	    !ALLOC(t->prev_entry, S) || !ALLOC(t->tmp, P + 1) ||
	    !ALLOC(t->touched, S + S + S) ||
	    !ALLOC(t->queue, S) || !ALLOC(t->pending, S) ||
	    !ALLOC(t->use_stamp, S + P) || !ALLOC(t->use, S + P))
		return -ENOMEM;
	if (t->o->cn_guids && t->o->n_cn_guids) {
		if (!ALLOC(cn, t->o->n_cn_guids))
			return -ENOMEM;
		memcpy(cn, t->o->cn_guids, t->o->n_cn_guids * sizeof(*cn));
		qsort(cn, t->o->n_cn_guids, sizeof(*cn), cmp_u64);
	}

	/*
	 * Switches are numbered in node GUID order, not in the model's
	 * (discovery) order: the order destinations are routed in and the
	 * ordinals that break ties (rot) then do not depend on which way
	 * the sweep happened to walk.  In discovery order the chain missed
	 * the leaf bound on the 4,608-host tree (9,180 flows against 5,164)
	 * where the file's order met it, and the slower flow strategy had
	 * to run.
	 */
	for (size_t i = 0, x = 0; i < f->n_nodes; i++)
		if (t->sw_idx[i] >= 0)
			t->sw_node[x++] = (int32_t)i;
	qsort_r(t->sw_node, S, sizeof(*t->sw_node), cmp_node_guid,
		(void *)f);
	for (size_t x = 0; x < S; x++)
		t->sw_idx[t->sw_node[x]] = (int32_t)x;

	P = 0;
	for (size_t x = 0; x < S; x++) {
		size_t i = (size_t)t->sw_node[x];
		const struct fab_node *n = &f->nodes[i];

		t->port_base[x] = (uint32_t)P;
		t->pnbr[P] = -1;
		for (unsigned p = 1; p <= n->num_ports; p++) {
			const struct fab_port *pt = &n->ports[p];
			const struct fab_port *q;

			t->pnbr[P + p] = -1;
			if (!routing_port_up(f, pt))
				continue;
			if (t->sw_idx[pt->peer_node] >= 0) {
				if (pt->peer_node == (int32_t)i)
					continue;	/* loopback cable */
				t->pnbr[P + p] = t->sw_idx[pt->peer_node];
				t->ppeer[P + p] = pt->peer_port;
				continue;
			}
			q = &fabric_node(f, pt->peer_node)->ports[pt->peer_port];
			t->has_ca[x] = 1;
			if (q->lid)
				t->src[x]++;
			if (cn ? in_sorted(cn, t->o->n_cn_guids, q->guid) : true)
				t->is_leaf[x] = 1;
		}
		P += (size_t)n->num_ports + 1;
	}
	t->port_base[S] = (uint32_t)P;
	t->no_slot = (uint32_t)P;
	free(cn);

	/* components, for "unreachable" versus "cut off" */
	for (size_t x = 0; x < S; x++)
		t->comp[x] = -1;
	for (size_t s = 0; s < S; s++) {
		size_t head = 0, tail = 0;

		if (t->comp[s] >= 0)
			continue;
		t->comp[s] = (int32_t)s;
		t->queue[tail++] = (int32_t)s;
		while (head < tail) {
			int32_t x = t->queue[head++];
			const struct fab_node *n = fabric_node(f, t->sw_node[x]);

			for (unsigned p = 1; p <= n->num_ports; p++) {
				int32_t y = t->pnbr[t->port_base[x] + p];

				if (y >= 0 && t->comp[y] < 0) {
					t->comp[y] = (int32_t)s;
					t->queue[tail++] = y;
				}
			}
		}
	}
	return 0;
}

/* BFS hop counts from the switches with mark[x] set; -1 unreached. */
static void bfs_from(struct ftree *t, const uint8_t *mark, int32_t *dist)
{
	size_t head = 0, tail = 0;

	for (size_t x = 0; x < t->S; x++) {
		dist[x] = -1;
		if (mark[x]) {
			dist[x] = 0;
			t->queue[tail++] = (int32_t)x;
		}
	}
	while (head < tail) {
		int32_t x = t->queue[head++];
		const struct fab_node *n = fabric_node(t->f, t->sw_node[x]);

		for (unsigned p = 1; p <= n->num_ports; p++) {
			int32_t y = t->pnbr[t->port_base[x] + p];

			if (y >= 0 && dist[y] < 0) {
				dist[y] = dist[x] + 1;
				t->queue[tail++] = y;
			}
		}
	}
}

/*
 * Levels (0 = leaves) from the leaves, or from the roots when the
 * options name them, and the check that they make a fat tree.
 */
static int find_levels(struct ftree *t)
{
	const struct routing_opts *o = t->o;
	size_t n_leaves = 0;

	for (size_t x = 0; x < t->S; x++)
		n_leaves += t->is_leaf[x];
	if (!n_leaves) {
		snprintf(t->err, t->errlen, t->o->n_cn_guids ?
			 "no switch has a port of the cn_guid_file: no leaves" :
			 "no switch has CA ports: no leaves");
		return -ENOENT;
	}
	if (o->root_guids && o->n_root_guids) {
		uint8_t *root = t->top_reach;	/* scratch until set below */
		size_t n_roots = 0;
		int32_t deepest = -1;
		size_t at = 0;

		memset(root, 0, t->S);
		for (size_t i = 0; i < o->n_root_guids; i++) {
			int32_t id = fabric_find(t->f, o->root_guids[i]);

			if (id >= 0 && t->sw_idx[id] >= 0 && !root[t->sw_idx[id]]) {
				root[t->sw_idx[id]] = 1;
				n_roots++;
			}
		}
		if (!n_roots) {
			snprintf(t->err, t->errlen, "none of the %zu root GUIDs "
				 "is a switch of the fabric", o->n_root_guids);
			return -ENOENT;
		}
		bfs_from(t, root, t->level);	/* ranks */
		for (size_t x = 0; x < t->S; x++)
			if (t->is_leaf[x] && t->level[x] > deepest) {
				deepest = t->level[x];
				at = x;
			}
		for (size_t x = 0; x < t->S; x++) {
			if (t->is_leaf[x] && t->level[x] < 0) {
				snprintf(t->err, t->errlen, "leaf 0x%016" PRIx64
					 " \"%s\" is not connected to the roots",
					 sw_guid(t, x), sw_desc(t, x));
				return -EINVAL;
			}
			if (t->is_leaf[x] && t->level[x] != deepest) {
				snprintf(t->err, t->errlen, "leaf 0x%016" PRIx64
					 " \"%s\" at rank %d, leaf 0x%016" PRIx64
					 " at rank %d (roots are rank 0)",
					 sw_guid(t, x), sw_desc(t, x), t->level[x],
					 sw_guid(t, at), deepest);
				return -EINVAL;
			}
			if (t->level[x] > deepest) {
				snprintf(t->err, t->errlen, "switch 0x%016" PRIx64
					 " \"%s\" at rank %d is below the leaves "
					 "(rank %d)", sw_guid(t, x), sw_desc(t, x),
					 t->level[x], deepest);
				return -EINVAL;
			}
		}
		for (size_t x = 0; x < t->S; x++)
			if (t->level[x] >= 0)
				t->level[x] = deepest - t->level[x];
	} else {
		bfs_from(t, t->is_leaf, t->level);
	}

	t->max_level = 0;
	for (size_t x = 0; x < t->S; x++) {
		const struct fab_node *n = fabric_node(t->f, t->sw_node[x]);

		if (t->level[x] > t->max_level)
			t->max_level = t->level[x];
		if (t->level[x] < 0)
			continue;
		for (unsigned p = 1; p <= n->num_ports; p++) {
			int32_t y = t->pnbr[t->port_base[x] + p];

			if (y >= 0 && t->level[y] == t->level[x]) {
				snprintf(t->err, t->errlen, "switch 0x%016" PRIx64
					 " \"%s\" has links within its own level "
					 "%d (port %u to 0x%016" PRIx64 " \"%s\"): "
					 "not a fat tree", sw_guid(t, x),
					 sw_desc(t, x), t->level[x], p,
					 sw_guid(t, (size_t)y),
					 sw_desc(t, (size_t)y));
				return -EINVAL;
			}
		}
		if (t->has_ca[x] && t->level[x] > 0 && !t->o->n_cn_guids) {
			/* with roots given: CAs hang off an inner switch */
			snprintf(t->err, t->errlen, "switch 0x%016" PRIx64
				 " \"%s\" has CA ports at level %d",
				 sw_guid(t, x), sw_desc(t, x), t->level[x]);
			return -EINVAL;
		}
	}
	return 0;
}

/* Up-port lists, down groups, the level order and the tie offsets. */
static int build_ports(struct ftree *t)
{
	size_t S = t->S, n_up = 0, n_dg = 0, n_dp = 0;
	uint32_t *per_level;

	if (!ALLOC(t->up_off, S + 1) || !ALLOC(t->dg_off, S + 1))
		return -ENOMEM;
	for (size_t x = 0; x < S; x++) {
		uint32_t b = t->port_base[x], np = t->port_base[x + 1] - b;

		if (t->level[x] < 0)
			continue;
		for (unsigned p = 1; p < np; p++) {
			int32_t y = t->pnbr[b + p];

			if (y < 0)
				continue;
			if (t->level[y] > t->level[x])
				n_up++;
			else
				n_dp++, n_dg++;
		}
	}
	if (!ALLOC(t->uplist, n_up) || !ALLOC(t->dg, n_dg) ||
	    !ALLOC(t->dports, n_dp) || !ALLOC(t->dpeers, n_dp))
		return -ENOMEM;
	n_up = n_dg = n_dp = 0;
	for (size_t x = 0; x < S; x++) {
		uint32_t b = t->port_base[x], np = t->port_base[x + 1] - b;
		uint32_t first = (uint32_t)n_dg;

		t->up_off[x] = (uint32_t)n_up;
		t->dg_off[x] = (uint32_t)n_dg;
		if (t->level[x] < 0)
			continue;
		for (unsigned p = 1; p < np; p++) {
			int32_t y = t->pnbr[b + p];
			uint32_t g;

			if (y < 0)
				continue;
			if (t->level[y] > t->level[x]) {
				t->uplist[n_up++] = (uint8_t)p;
				continue;
			}
			/* parallel links: ports in ascending order, so a
			 * neighbour's group is the last one or earlier */
			for (g = first; g < n_dg && t->dg[g].nbr != y; g++)
				;
			if (g == n_dg)
				t->dg[n_dg++] = (struct dgroup){ .nbr = y };
		}
		/* second pass: lay out each group's ports contiguously */
		{
			uint32_t off = (uint32_t)n_dp;

			for (uint32_t g = first; g < n_dg; g++) {
				t->dg[g].off = off;
				t->dg[g].n = 0;
				for (unsigned p = 1; p < np; p++)
					if (t->pnbr[b + p] == t->dg[g].nbr) {
						t->dports[off] = (uint8_t)p;
						t->dpeers[off] = t->ppeer[b + p];
						off++;
						t->dg[g].n++;
					}
			}
			n_dp = off;
		}
	}
	t->up_off[S] = (uint32_t)n_up;
	t->dg_off[S] = (uint32_t)n_dg;

	/* order: highest level first; rot: ordinal within the level */
	if (!ALLOC(per_level, (size_t)t->max_level + 2))
		return -ENOMEM;
	for (size_t x = 0; x < S; x++)
		if (t->level[x] >= 0)
			per_level[t->max_level - t->level[x] + 1]++;
	for (int32_t l = 1; l <= t->max_level + 1; l++)
		per_level[l] += per_level[l - 1];
	for (size_t x = 0; x < S; x++)
		if (t->level[x] >= 0) {
			uint32_t at = per_level[t->max_level - t->level[x]]++;

			t->order[at] = (int32_t)x;
		}
	{
		int32_t prev = -2;
		uint32_t k = 0;

		t->n_order = per_level[t->max_level];
		for (uint32_t i = 0; i < t->n_order; i++) {
			int32_t x = t->order[i];

			if (t->level[x] != prev) {
				prev = t->level[x];
				k = 0;
			}
			t->rot[x] = k++;
		}
	}
	free(per_level);

	/* top_reach: the top level, or an up-neighbour that reaches it */
	for (size_t i = 0; i < t->n_order; i++) {
		int32_t x = t->order[i];

		t->top_reach[x] = t->level[x] == t->max_level;
		for (uint32_t k = t->up_off[x]; k < t->up_off[x + 1]; k++)
			if (t->top_reach[t->pnbr[t->port_base[x] + t->uplist[k]]])
				t->top_reach[x] = 1;
	}
	return 0;
}

/* Every assigned LID, grouped by the switch it hangs off, LID order. */
static int build_dests(struct ftree *t)
{
	const struct fabric *f = t->f;
	struct fdest *by_lid;
	int32_t *sw_of;
	size_t n = 0;
	int rc = 0;

	if (!ALLOC(by_lid, (size_t)t->top + 1) ||
	    !ALLOC(sw_of, (size_t)t->top + 1) || !ALLOC(t->dest_off, t->S + 1)) {
		free(by_lid);
		return -ENOMEM;
	}
	for (size_t l = 0; l <= t->top; l++)
		sw_of[l] = -2;		/* free */
	for (size_t i = 0; i < f->n_nodes && rc == 0; i++) {
		const struct fab_node *nd = &f->nodes[i];
		bool sw = nd->type == NODE_TYPE_SWITCH;

		for (unsigned p = sw ? 0 : 1; p <= (sw ? 0u : nd->num_ports); p++) {
			const struct fab_port *pt = &nd->ports[p];
			struct fdest d = { .owner = (int32_t)i,
					   .owner_port = (uint8_t)p };
			int32_t x = -1;

			if (!pt->lid)
				continue;
			if (pt->lmc > 7) {
				snprintf(t->err, t->errlen, "LMC %u of node 0x%016"
					 PRIx64 " port %u is above 7", pt->lmc,
					 nd->guid, p);
				rc = -EINVAL;
				break;
			}
			if (sw) {
				x = t->sw_idx[i];
			} else if (routing_port_up(f, pt) &&
				   t->sw_idx[pt->peer_node] >= 0) {
				x = t->sw_idx[pt->peer_node];
				d.port = pt->peer_port;
				d.counted = 1;
			}
			for (unsigned k = 0; k < 1u << pt->lmc; k++) {
				size_t lid = (size_t)pt->lid + k;

				if (lid > t->top || sw_of[lid] != -2) {
					snprintf(t->err, t->errlen, "LID %zu of node "
						 "0x%016" PRIx64 " port %u is %s", lid,
						 nd->guid, p, lid > t->top ?
						 "above max_lid" : "assigned twice");
					rc = -EINVAL;
					break;
				}
				d.lid = (uint16_t)lid;
				by_lid[lid] = d;
				sw_of[lid] = x;
				if (x >= 0) {
					t->dest_off[x + 1]++;
					n++;
				}
			}
			if (rc)
				break;
		}
	}
	if (rc == 0 && !ALLOC(t->dests, n))
		rc = -ENOMEM;
	if (rc == 0) {
		for (size_t x = 0; x < t->S; x++)
			t->dest_off[x + 1] += t->dest_off[x];
		for (size_t l = 1; l <= t->top; l++)
			if (sw_of[l] >= 0)
				t->dests[t->dest_off[sw_of[l]]++] = by_lid[l];
		/* the fill moved every start to the next one's */
		for (size_t x = t->S; x > 0; x--)
			t->dest_off[x] = t->dest_off[x - 1];
		t->dest_off[0] = 0;
	}
	free(by_lid);
	free(sw_of);
	return rc;
}

/* The ancestors of s and, for each, its down-ports towards s. */
static void find_ancestors(struct ftree *t, int32_t s)
{
	size_t head = 0, tail = 0, nc = 0;

	t->acur++;
	t->astamp[s] = t->acur;
	t->n_anc = 0;
	t->queue[tail++] = s;
	while (head < tail) {
		int32_t x = t->queue[head++];
		uint32_t b = t->port_base[x];

		for (uint32_t k = t->up_off[x]; k < t->up_off[x + 1]; k++) {
			int32_t u = t->pnbr[b + t->uplist[k]];

			if (t->astamp[u] != t->acur) {
				t->astamp[u] = t->acur;
				t->anc[t->n_anc++] = u;
				t->queue[tail++] = u;
			}
		}
	}
	for (size_t i = 0; i < t->n_anc; i++) {
		int32_t a = t->anc[i];

		t->cand_off[a] = (uint32_t)nc;
		for (uint32_t g = t->dg_off[a]; g < t->dg_off[a + 1]; g++)
			if (t->astamp[t->dg[g].nbr] == t->acur) {
				memcpy(t->cand + nc, t->dports + t->dg[g].off,
				       t->dg[g].n);
				nc += t->dg[g].n;
			}
		t->cand_n[a] = (uint32_t)(nc - t->cand_off[a]);
	}

	/*
	 * Expected sources through each other switch, in 1/16: its own and
	 * an even share of what the switches below it send up, shared only
	 * over the up-neighbours that have an up*down* path to s (a core
	 * that lost its link into the pod of s carries none of it).
	 */
	for (size_t i = 0; i < t->n_order; i++) {
		int32_t x = t->order[i];
		uint32_t b = t->port_base[x];

		t->est[x] = 0;
		t->useful[x] = t->astamp[x] == t->acur;
		for (uint32_t k = t->up_off[x];
		     k < t->up_off[x + 1] && !t->useful[x]; k++)
			t->useful[x] = t->useful[t->pnbr[b + t->uplist[k]]];
	}
	for (size_t i = t->n_order; i-- > 0;) {
		int32_t x = t->order[i];
		uint32_t first = t->up_off[x], n = t->up_off[x + 1] - first;
		uint32_t b = t->port_base[x], share, nu;

		if (t->astamp[x] == t->acur) {
			t->est[x] = 0;
			continue;
		}
		t->est[x] += t->src[x] * 16;
		nu = 0;
		for (uint32_t k = first; k < first + n; k++)
			nu += t->useful[t->pnbr[b + t->uplist[k]]];
		if (!nu)
			continue;
		share = t->est[x] / nu;
		for (uint32_t k = first; k < first + n; k++) {
			int32_t u = t->pnbr[b + t->uplist[k]];

			if (t->useful[u])
				t->est[u] += share;
		}
	}
}

/* Uses of switch x or of port slot i by the current port's LIDs. */
static inline uint32_t used(const struct ftree *t, size_t i)
{
	return t->use_stamp[i] == t->ucur ? t->use[i] : 0;
}

static inline void use(struct ftree *t, size_t i)
{
	if (t->use_stamp[i] != t->ucur) {
		t->use_stamp[i] = t->ucur;
		t->use[i] = 0;
	}
	if (t->use[i] < 255)
		t->use[i]++;
}


/* Load of a link slot in 1/16 flows: committed plus this LID's tentative
 * (t->no_slot: no link, always 0). */
static inline uint64_t load(const struct ftree *t, uint32_t slot)
{
	return (uint64_t)t->cnt[slot] * 16 + t->tmp[slot];
}

static inline void add_tmp(struct ftree *t, uint32_t slot, uint32_t w)
{
	if (slot == t->no_slot || !w)
		return;
	if (!t->tmp[slot])
		t->touched[t->n_touched++] = slot;
	t->tmp[slot] += w;
}

static inline uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a > b ? a : b;

	return m > c ? m : c;
}

/*
 * The cost for the flow strategy of going up a link loaded `first` to
 * the routed switch u and on along u's path to the destination switch:
 * the busiest link of the whole path first, then the sum of its loads
 * (both in 1/16 flows; the sum saturates).  The whole path counts, not
 * just the first links: when a core lost its link into the destination's
 * pod, or a spine its link to the leaf, the few down-links left are the
 * bottleneck, and only they tell the sources below to spread over the
 * cores and spines that still reach it.  Paths have at most twice the
 * levels in links.
 */
static inline uint64_t path_cost(const struct ftree *t, int32_t u,
				 uint64_t first)
{
	uint64_t m = first, sum = first, cap = (1u << 20) - 1;

	for (int32_t y = u; y >= 0 && y != t->dst; y = t->next[y]) {
		uint64_t l = load(t, t->oslot[y]);

		if (l > m)
			m = l;
		sum += l;
	}
	return (m << 20) + (sum < cap ? sum : cap);
}

/* Switch x forwards the LID on port p to switch y. */
static inline void hop(struct ftree *t, int32_t x, uint16_t lid, uint8_t p,
		       int32_t y)
{
	uint32_t slot = t->port_base[x] + p;

	t->lftp[x][lid] = p;
	t->routed[x] = t->rcur;
	t->next[x] = y;
	t->oslot[x] = slot;
	t->entry[x] = y == t->dst ? slot : t->entry[y];
}

/*
 * LMC: how much the path through slot (x's egress) into a switch whose
 * path enters s at `entry` overlaps the paths x chose for the port's
 * earlier LIDs.
 */
static inline uint64_t overlap(const struct ftree *t, int32_t x,
			       uint32_t slot, uint32_t entry)
{
	return used(t, t->S + slot) +
	       (t->pe_stamp[x] == t->ucur && t->prev_entry[x] == entry);
}

static inline void remember(struct ftree *t, int32_t x)
{
	use(t, t->S + t->oslot[x]);
	t->pe_stamp[x] = t->ucur;
	t->prev_entry[x] = t->entry[x];
}

/* Flow strategy: every switch picks on the loads (the top comment). */
static size_t choose_flow(struct ftree *t, int32_t s, uint16_t lid,
			  bool counted, bool lmc)
{
	size_t np = 0;

	/* ancestors, upwards: down towards s, least loaded (then the
	 * entry link into s) */
	for (size_t i = 0; i < t->n_anc; i++) {
		int32_t a = t->anc[i];
		uint32_t b = t->port_base[a];
		const uint8_t *c = t->cand + t->cand_off[a];
		uint64_t best_key = UINT64_MAX;
		uint8_t bp = c[0];

		for (uint32_t k = 0; k < t->cand_n[a]; k++) {
			int32_t y = t->pnbr[b + c[k]];
			uint32_t e = y == s ? b + c[k] : t->entry[y];
			uint64_t key = max3(load(t, b + c[k]), load(t, e), 0);

			if (lmc)
				key |= overlap(t, a, b + c[k], e) << 56;
			if (key < best_key) {
				best_key = key;
				bp = c[k];
			}
		}
		hop(t, a, lid, bp, t->pnbr[b + bp]);
		if (lmc)
			remember(t, a);
	}

	/*
	 * The rest, top down: up to the neighbour whose path is least
	 * loaded, judged on the link up, the neighbour's next link and the
	 * link into s; the switch's expected share of the sources is added
	 * to those as it chooses, so the sources of one destination spread
	 * instead of all following the same best path.
	 */
	for (size_t i = 0; i < t->n_order; i++) {
		int32_t x = t->order[i];
		uint32_t first = t->up_off[x], n = t->up_off[x + 1] - first;
		uint32_t b = t->port_base[x], start;
		uint64_t best_key = UINT64_MAX;
		uint8_t bp = 0;
		int32_t bu = -1;

		if (t->routed[x] == t->rcur)
			continue;
		start = n ? t->rot[x] % n : 0;
		for (uint32_t j = 0, k = start; j < n; j++, k++) {
			uint8_t p;
			int32_t u;
			uint64_t key;

			if (k == n)
				k = 0;
			p = t->uplist[first + k];
			u = t->pnbr[b + p];

			if (t->routed[u] != t->rcur)
				continue;
			key = path_cost(t, u, load(t, b + p));
			if (lmc)
				key |= overlap(t, x, b + p, t->entry[u]) << 56;
			if (key < best_key) {
				best_key = key;
				bp = p;
				bu = u;
			}
		}
		if (bu < 0) {
			t->pending[np++] = x;
			continue;
		}
		hop(t, x, lid, bp, bu);
		if (lmc)
			remember(t, x);
		if (counted)
			for (int32_t y = x; y >= 0 && y != s; y = t->next[y])
				add_tmp(t, t->oslot[y], t->est[x]);
	}

	for (size_t i = 0; i < t->n_touched; i++)
		t->tmp[t->touched[i]] = 0;
	t->n_touched = 0;
	return np;
}

/*
 * The up-port of x with the fewest destinations among those whose
 * neighbour is routed, 0 for none.  Counts only grow, so x keeps a lower
 * bound of its least count and a cursor (ports before it carry more):
 * the first routed port at or after the cursor that carries the bound
 * is a least one, found in amortised O(1) on a complete tree; else one
 * pass finds it and renews the bound.
 */
static uint8_t least_up(struct ftree *t, int32_t x)
{
	uint32_t first = t->up_off[x], n = t->up_off[x + 1] - first;
	uint32_t b = t->port_base[x], best = UINT32_MAX, low = UINT32_MAX;
	uint8_t bp = 0;

	for (uint32_t j = t->pidx[x]; j < n; j++) {
		uint8_t p = t->uplist[first + j];

		if (t->cnt[b + p] == t->pmin[x] &&
		    t->routed[t->pnbr[b + p]] == t->rcur) {
			t->pidx[x] = j;
			return p;
		}
	}
	for (uint32_t j = 0; j < n; j++) {
		uint8_t p = t->uplist[first + j];
		uint32_t c = t->cnt[b + p];

		if (c < low)
			low = c;
		if (c < best && t->routed[t->pnbr[b + p]] == t->rcur) {
			best = c;
			bp = p;
		}
	}
	t->pmin[x] = low;
	t->pidx[x] = 0;
	while (t->pidx[x] < n &&
	       t->cnt[b + t->uplist[first + t->pidx[x]]] != low)
		t->pidx[x]++;
	return bp;
}

/* Chain strategy: one chain per destination (the top comment). */
static size_t choose_chain(struct ftree *t, int32_t s, uint16_t lid,
			   bool counted, bool lmc)
{
	size_t nch = 0, np = 0;
	int32_t cur = s;

	/* the chain up to a top switch, counting destinations per link */
	t->chain[nch++] = s;
	for (;;) {
		uint32_t first = t->up_off[cur], n = t->up_off[cur + 1] - first;
		uint32_t b = t->port_base[cur], start;
		uint64_t best_key = UINT64_MAX;
		int32_t bu = -1;
		uint8_t bq = 0;

		if (!n)
			break;
		start = t->rot[cur] % n;
		for (uint32_t i = 0; i < n; i++) {
			uint8_t p = t->uplist[first + (start + i) % n];
			int32_t u = t->pnbr[b + p];
			uint8_t q = t->ppeer[b + p];
			size_t slot = t->port_base[u] + q;
			uint64_t key = (uint64_t)!t->top_reach[u] << 62 |
				       (uint64_t)(lmc ? used(t, (size_t)u) : 0) << 48 |
				       (uint64_t)(lmc ? used(t, t->S + slot) : 0) << 40 |
				       t->cnt[slot];

			if (key < best_key) {
				best_key = key;
				bu = u;
				bq = q;
			}
		}
		hop(t, bu, lid, bq, cur);
		if (counted)
			t->cnt[t->oslot[bu]]++;
		if (lmc) {
			use(t, (size_t)bu);
			use(t, t->S + t->port_base[bu] + bq);
		}
		t->chain[nch++] = bu;
		cur = bu;
	}

	/* the other ancestors go straight down, upwards from s */
	for (size_t i = 0; i < t->n_anc; i++) {
		int32_t a = t->anc[i];
		uint32_t b = t->port_base[a];
		const uint8_t *c = t->cand + t->cand_off[a];
		uint8_t bp = c[0];

		if (t->routed[a] == t->rcur)
			continue;
		for (uint32_t k = 1; k < t->cand_n[a]; k++)
			if (t->cnt[b + c[k]] < t->cnt[b + bp])
				bp = c[k];
		hop(t, a, lid, bp, t->pnbr[b + bp]);
	}

	/* going down from the chain, the lowest switch first: up to it */
	for (size_t i = 0; i < nch; i++) {
		size_t head = 0, tail = 0;

		t->queue[tail++] = t->chain[i];
		while (head < tail) {
			int32_t a = t->queue[head++];

			for (uint32_t g = t->dg_off[a]; g < t->dg_off[a + 1]; g++) {
				const struct dgroup *gr = &t->dg[g];
				const uint8_t *c = t->dpeers + gr->off;
				int32_t y = gr->nbr;
				uint32_t b = t->port_base[y];
				uint8_t bp = c[0];

				if (t->routed[y] == t->rcur)
					continue;
				for (uint32_t k = 1; k < gr->n; k++)
					if (t->cnt[b + c[k]] < t->cnt[b + bp])
						bp = c[k];
				hop(t, y, lid, bp, a);
				if (counted)
					t->cnt[t->oslot[y]]++;
				t->queue[tail++] = y;
			}
		}
	}

	/*
	 * Not below the chain (on a complete tree: switches whose subtree
	 * routes through another switch; with links missing: cut off from
	 * the chain): up to the routed neighbour on the port with the fewest
	 * destinations, so that the up-ports stay even.
	 */
	for (size_t i = 0; i < t->n_order; i++) {
		int32_t x = t->order[i];
		uint8_t p;

		if (t->routed[x] == t->rcur)
			continue;
		p = least_up(t, x);
		if (!p) {
			t->pending[np++] = x;
			continue;
		}
		hop(t, x, lid, p, t->pnbr[t->port_base[x] + p]);
		if (counted)
			t->cnt[t->oslot[x]]++;
	}
	return np;
}

/*
 * Mark the path from switch x to `lid` as not up/down (in r->sl, until
 * fix_layers() decides what becomes of such paths).
 */
static int set_layer(struct ftree *t, int32_t x, uint16_t lid)
{
	struct routing_result *r = t->cur;
	int32_t node = t->sw_node[x];

	if (!r->sl) {
		r->sl = calloc(r->n_nodes ? r->n_nodes : 1, sizeof(*r->sl));
		if (!r->sl)
			return -ENOMEM;
	}
	if (!r->sl[node]) {
		r->sl[node] = calloc((size_t)t->top + 1, 1);
		if (!r->sl[node])
			return -ENOMEM;
	}
	r->sl[node][lid] = 1;
	return 0;
}

/*
 * Switch LIDs in their own layer: up*\/down* on the order in which a
 * breadth-first search from one top switch meets the switches (a link
 * goes up towards the switch met first).  Every switch met after the
 * root has a neighbour met before it, so every switch reaches every
 * switch LID; a switch that reaches the LID going only down does so,
 * the others climb to the neighbour with the shortest legal path.
 */
static int route_switch_lids(struct ftree *t, struct routing_result *r,
			     const uint8_t *sw_lid)
{
	size_t S = t->S, n = 0;
	uint32_t *key = calloc(S ? S : 1, sizeof(*key));
	uint32_t *dist = calloc(S ? S : 1, sizeof(*dist));
	uint32_t *seen = calloc(S ? S : 1, sizeof(*seen));
	int32_t *bfs = calloc(S ? S : 1, sizeof(*bfs));
	uint8_t *via = calloc(S ? S : 1, 1);
	uint32_t stamp = 0;
	int rc = 0;

	if (!key || !dist || !seen || !bfs || !via) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t x = 0; x < S; x++)
		key[x] = UINT32_MAX;
	/* the root: the first top switch; then every switch it reaches */
	key[t->order[0]] = 0;
	bfs[n++] = t->order[0];
	for (size_t h = 0; h < n; h++) {
		int32_t x = bfs[h];
		uint32_t b = t->port_base[x], np = t->port_base[x + 1] - b;

		for (unsigned p = 1; p < np; p++) {
			int32_t y = t->pnbr[b + p];

			if (y >= 0 && key[y] == UINT32_MAX) {
				key[y] = (uint32_t)n;
				bfs[n++] = y;
			}
		}
	}
	r->sl = calloc(r->n_nodes ? r->n_nodes : 1, sizeof(*r->sl));
	if (!r->sl) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		int32_t node = t->sw_node[bfs[i]];

		r->sl[node] = calloc((size_t)t->top + 1, 1);
		if (!r->sl[node]) {
			rc = -ENOMEM;
			goto out;
		}
	}
	r->n_layers = 2;

	for (size_t l = 1; l <= t->top; l++) {
		size_t head = 0, tail = 0;
		int32_t s = -1;

		if (!sw_lid[l])
			continue;
		for (size_t i = 0; i < n && s < 0; i++)
			if (fabric_node(t->f, t->sw_node[bfs[i]])->ports[0].lid
			    == l)
				s = bfs[i];
		if (s < 0)
			continue;
		/* dist: all-down paths, searched backwards from s */
		stamp++;
		seen[s] = stamp;
		dist[s] = 0;
		t->queue[tail++] = s;
		while (head < tail) {
			int32_t w = t->queue[head++];
			uint32_t b = t->port_base[w], np = t->port_base[w + 1] - b;

			for (unsigned p = 1; p < np; p++) {
				int32_t v = t->pnbr[b + p];

				/* v -> w goes down when v was met first */
				if (v < 0 || key[v] > key[w] || seen[v] == stamp)
					continue;
				seen[v] = stamp;
				dist[v] = dist[w] + 1;
				via[v] = t->ppeer[b + p];
				t->queue[tail++] = v;
			}
		}
		/* the others climb, root side first */
		for (size_t i = 0; i < n; i++) {
			int32_t v = bfs[i];
			uint32_t b = t->port_base[v], np = t->port_base[v + 1] - b;
			uint32_t best = UINT32_MAX;
			uint8_t bp = 0;

			r->sl[t->sw_node[v]][l] = 1;
			if (v == s) {
				t->lftp[v][l] = 0;
				continue;
			}
			if (seen[v] == stamp) {
				t->lftp[v][l] = via[v];
				continue;
			}
			for (unsigned p = 1; p < np; p++) {
				int32_t u = t->pnbr[b + p];

				if (u >= 0 && key[u] < key[v] && seen[u] == stamp &&
				    dist[u] < best) {
					best = dist[u];
					bp = (uint8_t)p;
				}
			}
			if (!bp)
				continue;	/* cannot happen: the root reaches s */
			/* dist now: the legal path length, for those below */
			seen[v] = stamp;
			dist[v] = best + 1;
			t->lftp[v][l] = bp;
		}
	}
out:
	free(key);
	free(dist);
	free(seen);
	free(bfs);
	free(via);
	return rc;
}

/*
 * Deadlock freedom.  Paths that are not up/down (phase 5: a top switch
 * cut from part of the tree, the top switches' LIDs among themselves)
 * are harmless as long as the channel dependencies stay acyclic, which
 * they do on complete trees.  When they do not: paths to switch LIDs
 * move to layer 1 (SL 1, VL 1) on a single-root up*\/down* order of
 * their own; CA LIDs and layer 0 then carry up/down paths only for the
 * paths the check counts (from switches with CA ports).
 */
static int fix_layers(struct ftree *t, struct routing_result *r)
{
	uint8_t **marks = r->sl;
	uint8_t *sw_lid = NULL;
	struct routing_cdg cdg;
	int rc;

	r->sl = NULL;
	r->n_layers = 0;
	if (!marks)
		return 0;
	rc = routing_check_cdg(t->f, r, &cdg);
	if (rc == 0 && routing_cdg_cycles(&cdg) == 0)
		goto out;
	if (rc < 0)
		goto out;
	if (t->o->max_layers == 1) {
		snprintf(t->err, t->errlen, "links missing: the paths to switch "
			 "LIDs need a second layer (VL) and max_layers is 1");
		rc = -ENOSPC;
		goto out;
	}
	sw_lid = calloc((size_t)t->top + 1, 1);
	if (!sw_lid) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < t->dest_off[t->S]; i++)
		if (!t->dests[i].counted && !t->dests[i].port)
			sw_lid[t->dests[i].lid] = 1;
	/*
	 * The other marked entries (a switch without CA ports that reaches a
	 * host only by a path that is not up-then-down) stay: no host's path
	 * runs through them (a host path through that switch would be an
	 * up-then-down path from it), so they add no dependency the check
	 * counts, and without them that switch could not answer a LID-routed
	 * SMP from the host (the SM's, ibroute's): VL15, no credits.
	 */
	rc = route_switch_lids(t, r, sw_lid);
	if (rc == 0)
		rc = routing_check_cdg(t->f, r, &cdg);
	if (rc == 0 && routing_cdg_cycles(&cdg)) {
		snprintf(t->err, t->errlen, "%" PRIu64 " channel dependency "
			 "cycles left with switch LIDs in their own layer",
			 routing_cdg_cycles(&cdg));
		rc = -ELOOP;
	}
out:
	if (marks)
		for (size_t i = 0; i < r->n_nodes; i++)
			free(marks[i]);
	free(marks);
	free(sw_lid);
	return rc;
}

/* Route one LID hanging off switch s (find_ancestors(s) done). */
static int route_dest(struct ftree *t, int32_t s, const struct fdest *d,
		      bool lmc)
{
	uint16_t lid = d->lid;
	bool counted = d->counted;
	uint32_t *flow = t->flow ? t->flow : t->cnt;
	size_t np;

	t->rcur++;
	t->dst = s;
	t->lftp[s][lid] = d->port;
	t->routed[s] = t->rcur;
	t->next[s] = -1;
	t->oslot[s] = t->no_slot;
	t->entry[s] = t->no_slot;
	np = t->flow ? choose_chain(t, s, lid, counted, lmc) :
		       choose_flow(t, s, lid, counted, lmc);

	/* no up-then-down path: any routed neighbour (see the top comment) */
	while (np) {
		size_t keep = 0;

		for (size_t i = 0; i < np; i++) {
			int32_t x = t->pending[i];
			uint32_t b = t->port_base[x];
			uint32_t nports = t->port_base[x + 1] - b;
			int found = 0;

			for (unsigned p = 1; p < nports && !found; p++) {
				int32_t y = t->pnbr[b + p];

				if (y >= 0 && t->routed[y] == t->rcur) {
					if (t->has_ca[x] && counted) {
						snprintf(t->err, t->errlen,
							 "switch 0x%016" PRIx64
							 " \"%s\" has no up-then-down "
							 "path to LID %u (links "
							 "missing): the tree is cut",
							 sw_guid(t, (size_t)x),
							 sw_desc(t, (size_t)x), lid);
						return -ENETUNREACH;
					}
					hop(t, x, lid, (uint8_t)p, y);
					t->next[x] = -1;	/* carries no CA traffic */
					t->n_phase5++;
					if (set_layer(t, x, lid) < 0)
						return -ENOMEM;
					found = 1;
				}
			}
			if (!found)
				t->pending[keep++] = x;
		}
		if (keep == np)
			break;		/* the rest is another component */
		np = keep;
	}

	/* commit the real flows: sources climb, then come down to s */
	if (counted) {
		for (size_t i = t->n_order; i-- > 0;) {
			int32_t x = t->order[i];

			if (t->routed[x] != t->rcur || t->astamp[x] == t->acur)
				continue;
			t->mass[x] += t->src[x];
			if (t->next[x] >= 0 && t->mass[x]) {
				flow[t->oslot[x]] += t->mass[x];
				t->mass[t->next[x]] += t->mass[x];
			}
			t->mass[x] = 0;
		}
		for (size_t i = t->n_anc; i-- > 0;) {
			int32_t a = t->anc[i];

			t->mass[a] += t->src[a];
			if (t->mass[a]) {
				flow[t->oslot[a]] += t->mass[a];
				t->mass[t->next[a]] += t->mass[a];
			}
			t->mass[a] = 0;
		}
		t->mass[s] = 0;
	}
	return 0;
}

/*
 * Flow strategy, second pass: take the flows of a CA LID routed in the
 * first pass off the links (find_ancestors(s) done), walking its tables
 * the way route_dest() committed them: sources climb through the
 * switches that are not ancestors of s, lowest first, then come down
 * through the ancestors, highest first.
 */
static void unroute_dest(struct ftree *t, int32_t s, uint16_t lid)
{
	struct routing_result *r = t->cur;

	for (size_t i = t->n_order; i-- > 0;) {
		int32_t x = t->order[i], y;
		uint32_t slot;

		if (r->sl && r->sl[t->sw_node[x]])
			r->sl[t->sw_node[x]][lid] = 0;
		if (x == s || t->astamp[x] == t->acur)
			continue;
		t->mass[x] += t->src[x];
		slot = t->port_base[x] + t->lftp[x][lid];
		y = t->pnbr[slot];
		if (t->mass[x] && y >= 0) {
			t->cnt[slot] -= t->mass[x];
			t->mass[y] += t->mass[x];
		}
		t->mass[x] = 0;
	}
	for (size_t i = t->n_anc; i-- > 0;) {
		int32_t a = t->anc[i], y;
		uint32_t slot = t->port_base[a] + t->lftp[a][lid];

		t->mass[a] += t->src[a];
		y = t->pnbr[slot];
		if (t->mass[a] && y >= 0) {
			t->cnt[slot] -= t->mass[a];
			t->mass[y] += t->mass[a];
		}
		t->mass[a] = 0;
	}
	t->mass[s] = 0;
}

/*
 * Flow strategy: route every CA LID a second time, its own first-pass
 * flows taken off, so that the early LIDs also see where the later ones
 * went (a greedy first pass fills the links the early LIDs chose).
 */
static int reroute_all(struct ftree *t, bool backwards, size_t start)
{
	int32_t owner = -1;
	uint8_t owner_port = 0;

	for (size_t k = 0; k < t->S; k++) {
		size_t x = ((backwards ? t->S - 1 - k : k) + start) % t->S;
		uint32_t a = t->dest_off[x], e = t->dest_off[x + 1];

		if (a == e || t->level[x] < 0)
			continue;
		find_ancestors(t, (int32_t)x);
		for (uint32_t i = a; i < e; i++) {
			const struct fdest *d = &t->dests[i];
			const struct fab_port *pt = &fabric_node(t->f, d->owner)
				->ports[d->owner_port];
			int rc;

			if (d->owner != owner || d->owner_port != owner_port) {
				owner = d->owner;
				owner_port = d->owner_port;
				t->ucur++;
			}
			if (!d->counted)
				continue;
			unroute_dest(t, (int32_t)x, d->lid);
			rc = route_dest(t, (int32_t)x, d, pt->lmc > 0);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

static uint64_t max_flow(const struct ftree *t, const uint32_t *flow);
static uint64_t leaf_bound(const struct ftree *t);
static int reroute_passes(struct ftree *t);

/* Route every LID with the current strategy into `out`. */
static int route_all(struct ftree *t, struct routing_result *out)
{
	int32_t owner = -1;
	uint8_t owner_port = 0;
	int rc = routing_alloc_tables(t->f, out, t->top);

	if (rc < 0)
		return rc;
	memset(t->cnt, 0, t->port_base[t->S] * sizeof(*t->cnt));
	memset(t->pmin, 0, t->S * sizeof(*t->pmin));
	memset(t->pidx, 0, t->S * sizeof(*t->pidx));
	t->n_phase5 = 0;
	for (size_t x = 0; x < t->S; x++)
		t->lftp[x] = out->lft[t->sw_node[x]].port;
	t->cur = out;
	for (size_t x = 0; x < t->S; x++) {
		uint32_t a = t->dest_off[x], e = t->dest_off[x + 1];

		if (a == e)
			continue;
		if (t->level[x] < 0) {
			/* no leaf in its part of the fabric: its own LIDs */
			for (uint32_t i = a; i < e; i++)
				if (!t->dests[i].port)
					t->lftp[x][t->dests[i].lid] = 0;
			continue;
		}
		find_ancestors(t, (int32_t)x);
		for (uint32_t i = a; i < e; i++) {
			const struct fdest *d = &t->dests[i];
			const struct fab_port *pt = &fabric_node(t->f, d->owner)
				->ports[d->owner_port];

			if (d->owner != owner || d->owner_port != owner_port) {
				owner = d->owner;
				owner_port = d->owner_port;
				t->ucur++;
			}
			rc = route_dest(t, (int32_t)x, d, pt->lmc > 0);
			if (rc < 0)
				return rc;
		}
	}
	if (t->flow)
		return 0;
	return reroute_passes(t);
}

/*
 * The flow strategy's reroute passes: each routes every host LID again
 * with its own flows taken off.  One pass on large fabrics (a pass costs
 * as much as the first routing: 3 s on 11,664 hosts with links cut); on
 * small ones up to FLOW_PASSES, keeping the best tables seen, since a
 * pass can also make the busiest link worse.
 */
#define FLOW_PASSES		6
#define FLOW_PASSES_ENTRIES	(1u << 18)	/* switches x LIDs */

static int reroute_passes(struct ftree *t)
{
	uint64_t bound = leaf_bound(t) * 1025 / 1024;
	uint64_t best = max_flow(t, t->cnt), m;
	size_t rows = (size_t)t->top + 1, nc = t->port_base[t->S];
	bool many = (uint64_t)t->S * rows <= FLOW_PASSES_ENTRIES;
	uint8_t *keep = NULL;
	uint32_t *keep_cnt = NULL;
	int rc = 0;

	if (best <= bound)
		return 0;
	if (!many)
		return reroute_all(t, false, 0);
	keep = malloc(t->S * rows);
	keep_cnt = malloc((nc + 1) * sizeof(*keep_cnt));
	if (!keep || !keep_cnt) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned p = 0; p < FLOW_PASSES && best > bound; p++) {
		for (size_t x = 0; x < t->S; x++)
			memcpy(keep + x * rows, t->lftp[x], rows);
		memcpy(keep_cnt, t->cnt, nc * sizeof(*keep_cnt));
		/* each pass in another order (backwards every other
		 * pass, starting elsewhere): a different order meets
		 * different counts */
		rc = reroute_all(t, p & 1, p / 2 * t->S / (FLOW_PASSES / 2));
		if (rc < 0)
			break;
		m = max_flow(t, t->cnt);
		if (m >= best) {
			/* no better: back to the best tables, next order */
			for (size_t x = 0; x < t->S; x++)
				memcpy(t->lftp[x], keep + x * rows, rows);
			memcpy(t->cnt, keep_cnt, nc * sizeof(*keep_cnt));
			continue;
		}
		best = m;
	}
out:
	free(keep);
	free(keep_cnt);
	return rc;
}

/* The most CA-to-CA flows on one inter-switch link (all-to-all). */
static uint64_t max_flow(const struct ftree *t, const uint32_t *flow)
{
	uint64_t m = 0;

	for (size_t i = 0; i < t->port_base[t->S]; i++)
		if (flow[i] > m)
			m = flow[i];
	return m;
}

/*
 * A lower bound of the busiest link: the flows out of each leaf (its CA
 * ports to every CA LID elsewhere) spread at best evenly over its
 * up-links.  When the chain strategy meets it, no strategy can do better.
 */
static uint64_t leaf_bound(const struct ftree *t)
{
	uint64_t total = 0, bound = 0;

	for (size_t i = 0; i < t->dest_off[t->S]; i++)
		total += t->dests[i].counted;
	for (size_t x = 0; x < t->S; x++) {
		uint64_t n = t->up_off[x + 1] - t->up_off[x], own = 0, flows;

		if (t->level[x] != 0 || !n)
			continue;
		for (uint32_t i = t->dest_off[x]; i < t->dest_off[x + 1]; i++)
			own += t->dests[i].counted;
		/* its sources to every CA LID elsewhere, and back */
		flows = (uint64_t)t->src[x] * (total - own);
		if ((flows + n - 1) / n > bound)
			bound = (flows + n - 1) / n;
	}
	return bound;
}

static int ftree_route(const struct fabric *f, const struct routing_opts *o,
		       struct routing_result *out, char *err, size_t errlen)
{
	struct ftree t = { .f = f, .o = o, .out = out, .top = f->max_lid,
			   .err = err, .errlen = errlen };
	struct routing_result alt = { 0 };
	size_t n_leaves = 0, n_top = 0, phase5 = 0;
	uint64_t chain_max = 0, flow_max = 0;
	int rc;

	if (!f->max_lid) {
		snprintf(err, errlen, "no LIDs assigned");
		return -EINVAL;
	}
	rc = build_graph(&t);
	if (rc == 0)
		rc = find_levels(&t);
	if (rc == 0)
		rc = build_ports(&t);
	if (rc == 0)
		rc = build_dests(&t);
	if (rc == 0 && (!ALLOC(t.cand, t.port_base[t.S]) ||
			!ALLOC(t.flow, t.port_base[t.S] + 1)))
		rc = -ENOMEM;
	/*
	 * Both strategies, keep the one whose busiest link carries fewer
	 * flows: the chain is exact when every switch's destinations divide
	 * evenly over its up-links, the flow strategy when they do not.
	 */
	if (rc == 0)
		rc = route_all(&t, &alt);		/* chain */
	if (rc == 0) {
		chain_max = max_flow(&t, t.flow);
		phase5 = t.n_phase5;
		free(t.flow);
		t.flow = NULL;
		flow_max = UINT64_MAX;
		if (chain_max > leaf_bound(&t)) {
			rc = route_all(&t, out);	/* flow */
			flow_max = max_flow(&t, t.cnt);
		}
	}
	if (rc == 0) {
		if (chain_max <= flow_max) {
			routing_result_free(out);
			*out = alt;
			memset(&alt, 0, sizeof(alt));
			t.n_phase5 = phase5;
		}
		for (size_t x = 0; x < t.S; x++)
			t.lftp[x] = out->lft[t.sw_node[x]].port;
		rc = fix_layers(&t, out);
	}
	if (rc == 0) {
		for (size_t x = 0; x < t.S; x++) {
			n_leaves += t.level[x] == 0;
			n_top += t.level[x] == t.max_level;
		}
		{
			char line[512], other[48] = "not needed";
			bool chain = chain_max <= flow_max;

			if (flow_max != UINT64_MAX)
				snprintf(other, sizeof(other), "%s %" PRIu64,
					 chain ? "flow" : "chain",
					 chain ? flow_max : chain_max);
			int w = snprintf(line, sizeof(line), "fat tree, %d levels, "
					 "%zu leaves, %zu roots%s; %s: busiest link %"
					 PRIu64 " flows (%s, leaf bound %" PRIu64 ")%s",
					 t.max_level + 1, n_leaves, n_top,
					 o->n_root_guids ? " (root_guid_file)" : "",
					 chain ? "chain" : "flow",
					 chain ? chain_max : flow_max, other,
					 leaf_bound(&t), out->n_layers ?
					 "; switch LIDs on SL 1" : "");
			size_t len = w < 0 ? 0 : (size_t)w;

			if (len >= sizeof(out->summary))
				len = sizeof(out->summary) - 1;
			memcpy(out->summary, line, len);
			out->summary[len] = '\0';
		}
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	routing_result_free(&alt);
	if (rc < 0)
		routing_result_free(out);
	ft_free(&t);
	return rc;
}

const struct routing_engine routing_ftree = {
	.name = "ftree",
	.route = ftree_route,
};
