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
 * I/O nodes (io_guid_file: storage, service nodes) are CA ports that are
 * not compute nodes: without a cn_guid_file every other CA port is one.
 * The levels then come from the compute nodes' switches (an I/O node may
 * hang off a spine or a core), but from every switch with CA ports when a
 * switch of I/O nodes is linked to spines as a leaf is (io_levels()).
 * I/O nodes send no flows the balance counts, and their LIDs are routed
 * after all the others (ftree_route_io()), so the others' routes do not
 * see them.
 * A switch with no up*down* path to an I/O node's LID reaches it with
 * reverse hops (down, then up again: route_reverse() in ftree_route.c);
 * where hosts' paths start, at most max_reverse_hops of them, for paths
 * to I/O nodes and from switches whose CA ports are all I/O nodes'.
 * Compute nodes' paths to compute nodes stay up*down*.
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
 * tables whose busiest link carries fewer flows win (the chain on a
 * tie).  When some leaf's destinations cannot divide evenly over its
 * links, the chain will lose, so the flow strategy runs first and the
 * chain stops as soon as one of its links carries more than the flow
 * strategy's busiest: the same choice, without the chain's time.  The
 * summary says which, with both figures (or where the chain stopped)
 * and the bound.
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
 *
 * This file builds the tree (switches, levels, ports, destinations,
 * ancestors) and runs the strategies; ftree_route.c routes the LIDs
 * (both strategies, the layers, the second pass); ftree_int.h is what
 * they share.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/ftree_int.h"
#include "routing/verify.h"

static void ft_free(struct ftree *t)
{
	free(t->sw_node);
	free(t->sw_idx);
	free(t->level);
	free(t->has_ca);
	free(t->only_io);
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
	free(t->cn);
	free(t->io);
	free(t->rrev);
	free(t->rup);
	free(t->rkey);
	free(t->rport);
}

const char *ftree_sw_desc(const struct ftree *t, size_t x)
{
	return fabric_node(t->f, t->sw_node[x])->desc;
}

uint64_t ftree_sw_guid(const struct ftree *t, size_t x)
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

/* A sorted copy of n GUIDs into *out (NULL when n is 0). */
static int sorted_copy(const uint64_t *v, size_t n, uint64_t **out)
{
	*out = NULL;
	if (!v || !n)
		return 0;
	if (!ALLOC(*out, n))
		return -ENOMEM;
	memcpy(*out, v, n * sizeof(**out));
	qsort(*out, n, sizeof(**out), cmp_u64);
	return 0;
}

bool ftree_is_io(const struct ftree *t, uint64_t g)
{
	return t->io && in_sorted(t->io, t->o->n_io_guids, g) &&
	       !in_sorted(t->cn, t->o->n_cn_guids, g);
}

/*
 * Whether port GUID g is a compute node's: listed in the cn_guid_file;
 * without one, any CA or router port that is not an I/O node's.
 */
static bool is_cn(const struct ftree *t, uint64_t g)
{
	if (t->cn)
		return in_sorted(t->cn, t->o->n_cn_guids, g);
	return !ftree_is_io(t, g);
}


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
	    !ALLOC(t->only_io, S) ||
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
	    !ALLOC(t->use_stamp, S + P) || !ALLOC(t->use, S + P) ||
	    !ALLOC(t->rrev, S) || !ALLOC(t->rup, S) ||
	    !ALLOC(t->rkey, S) || !ALLOC(t->rport, S) ||
	    sorted_copy(t->o->cn_guids, t->o->n_cn_guids, &t->cn) < 0 ||
	    sorted_copy(t->o->io_guids, t->o->n_io_guids, &t->io) < 0)
		return -ENOMEM;

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
			/* an I/O node sends, but its traffic is not balanced */
			if (ftree_is_io(t, q->guid)) {
				t->only_io[x] = !t->has_ca[x] || t->only_io[x];
			} else {
				t->only_io[x] = 0;
				if (q->lid)
					t->src[x]++;
			}
			t->has_ca[x] = 1;
			if (is_cn(t, q->guid))
				t->is_leaf[x] = 1;
		}
		P += (size_t)n->num_ports + 1;
	}
	t->port_base[S] = (uint32_t)P;
	t->no_slot = (uint32_t)P;

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

/* Whether some link joins two switches of the same level. */
static bool level_clash(const struct ftree *t, const int32_t *level)
{
	for (size_t x = 0; x < t->S; x++) {
		uint32_t b = t->port_base[x], np = t->port_base[x + 1] - b;

		for (unsigned p = 1; level[x] >= 0 && p < np; p++) {
			int32_t y = t->pnbr[b + p];

			if (y >= 0 && level[y] == level[x])
				return true;
		}
	}
	return false;
}

/*
 * Whether switch x, above the leaves, sits beside them rather than above
 * its lower neighbours: two of those have a lower neighbour in common
 * (a switch linked to the spines of one pod, or of a two-level tree,
 * as a leaf is).  A core's lower neighbours, one spine per pod, have
 * none in common; a spine's, the leaves, have none below them.
 */
static bool leaf_like(struct ftree *t, int32_t x)
{
	uint32_t b = t->port_base[x], np = t->port_base[x + 1] - b;

	t->acur++;
	for (unsigned p = 1; p < np; p++) {
		int32_t y = t->pnbr[b + p];
		uint32_t c, nq;

		if (y < 0 || t->level[y] >= t->level[x])
			continue;
		c = t->port_base[y];
		nq = t->port_base[y + 1] - c;
		for (unsigned q = 1; q < nq; q++) {
			int32_t z = t->pnbr[c + q];

			if (z < 0 || t->level[z] >= t->level[y])
				continue;
			if (t->astamp[z] == t->acur && t->pending[z] != y)
				return true;
			t->astamp[z] = t->acur;
			t->pending[z] = y;
		}
	}
	return false;
}

/*
 * With I/O nodes the levels come from the compute nodes' switches, so
 * that an I/O node may hang off a spine or a core.  A switch of I/O
 * nodes that those levels put above switches it sits beside (linked to
 * the spines, as a leaf: leaf_like()) would take the compute nodes'
 * routes through it: then the levels come from every switch with CA
 * ports, as without io_guid_file, when those make a fat tree.
 */
static int io_levels(struct ftree *t)
{
	int32_t *alt;
	bool beside = false;

	if (!t->io)
		return 0;
	for (size_t x = 0; x < t->S && !beside; x++)
		beside = t->only_io[x] && t->level[x] > 0 &&
			 leaf_like(t, (int32_t)x);
	if (!beside)
		return 0;
	if (!ALLOC(alt, t->S))
		return -ENOMEM;
	bfs_from(t, t->has_ca, alt);
	if (!level_clash(t, alt))
		memcpy(t->level, alt, t->S * sizeof(*alt));
	free(alt);
	return 0;
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
		snprintf(t->err, t->errlen, t->cn ?
			 "no switch has a port of the cn_guid_file: no leaves" :
			 t->io ? "no switch has a compute node port (a CA "
			 "port not in the io_guid_file): no leaves" :
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
					 ftree_sw_guid(t, x), ftree_sw_desc(t, x));
				return -EINVAL;
			}
			if (t->is_leaf[x] && t->level[x] != deepest) {
				snprintf(t->err, t->errlen, "leaf 0x%016" PRIx64
					 " \"%s\" at rank %d, leaf 0x%016" PRIx64
					 " at rank %d (roots are rank 0)",
					 ftree_sw_guid(t, x), ftree_sw_desc(t, x), t->level[x],
					 ftree_sw_guid(t, at), deepest);
				return -EINVAL;
			}
			if (t->level[x] > deepest) {
				snprintf(t->err, t->errlen, "switch 0x%016" PRIx64
					 " \"%s\" at rank %d is below the leaves "
					 "(rank %d)", ftree_sw_guid(t, x), ftree_sw_desc(t, x),
					 t->level[x], deepest);
				return -EINVAL;
			}
		}
		for (size_t x = 0; x < t->S; x++)
			if (t->level[x] >= 0)
				t->level[x] = deepest - t->level[x];
	} else {
		bfs_from(t, t->is_leaf, t->level);
		if (io_levels(t) < 0)
			return -ENOMEM;
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
					 "not a fat tree", ftree_sw_guid(t, x),
					 ftree_sw_desc(t, x), t->level[x], p,
					 ftree_sw_guid(t, (size_t)y),
					 ftree_sw_desc(t, (size_t)y));
				return -EINVAL;
			}
		}
		if (t->has_ca[x] && t->level[x] > 0 && !t->cn && !t->io) {
			/* with roots given: CAs hang off an inner switch */
			snprintf(t->err, t->errlen, "switch 0x%016" PRIx64
				 " \"%s\" has CA ports at level %d",
				 ftree_sw_guid(t, x), ftree_sw_desc(t, x), t->level[x]);
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
				d.io = ftree_is_io(t, pt->guid);
				d.counted = !d.io;
				t->n_io_lids += d.io;
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
void ftree_find_ancestors(struct ftree *t, int32_t s)
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
	 * that lost its link into the pod of s carries none of it).  Only
	 * the flow strategy reads them (t->flow is set for the chain's).
	 */
	if (t->flow)
		return;
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

/*
 * Whether some leaf's destinations cannot divide evenly over its links
 * up (the links its destinations arrive by).  Then the chain misses the
 * leaf bound: it brings each destination in over one link, and two of
 * them share one, each with nearly every source (4,608 hosts: 18 per
 * leaf over 16 links, 9,180 flows against a bound of 5,164), so the
 * flow strategy will win.
 */
static bool uneven_leaf(const struct ftree *t)
{
	for (size_t x = 0; x < t->S; x++) {
		uint32_t n = t->up_off[x + 1] - t->up_off[x], d = 0;

		if (t->level[x] != 0 || !n)
			continue;
		for (uint32_t i = t->dest_off[x]; i < t->dest_off[x + 1]; i++)
			d += t->dests[i].counted;
		if (d % n)
			return true;
	}
	return false;
}

/*
 * The flow strategy into out, then the chain into alt, stopped as soon
 * as one of its links carries more flows than the flow strategy's
 * busiest (*chain_max UINT64_MAX then): the same choice as the chain
 * first would make, without most of the chain's time when it loses
 * (4,608 hosts: 0.08 s of 0.5).
 */
static int flow_then_chain(struct ftree *t, struct routing_result *out,
			   struct routing_result *alt, uint64_t *flow_max,
			   uint64_t *chain_max, size_t *flow_p5,
			   size_t *chain_p5)
{
	int rc;

	free(t->flow);
	t->flow = NULL;
	rc = ftree_route_all(t, out);			/* flow */
	if (rc < 0)
		return rc;
	*flow_max = ftree_max_flow(t, t->cnt);
	*flow_p5 = t->n_phase5;
	if (!ALLOC(t->flow, t->port_base[t->S] + 1))
		return -ENOMEM;
	t->stop = true;
	t->stop_above = *flow_max;
	rc = ftree_route_all(t, alt);			/* chain */
	t->stop = false;
	*chain_p5 = t->n_phase5;
	if (rc == -ECANCELED) {
		*chain_max = UINT64_MAX;
		return 0;
	}
	if (rc == 0)
		*chain_max = ftree_max_flow(t, t->flow);
	return rc;
}

static int ftree_route(const struct fabric *f, const struct routing_opts *o,
		       struct routing_result *out, char *err, size_t errlen)
{
	struct ftree t = { .f = f, .o = o, .out = out, .top = f->max_lid,
			   .err = err, .errlen = errlen };
	struct routing_result alt = { 0 };
	size_t n_leaves = 0, n_top = 0, chain_p5 = 0, flow_p5 = 0;
	uint64_t chain_max = 0, flow_max = 0;
	bool ran = false;
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
	if (rc == 0 && !ALLOC(t.cand, t.port_base[t.S]))
		rc = -ENOMEM;
	/*
	 * Both strategies, keep the one whose busiest link carries fewer
	 * flows (the chain on a tie): the chain is exact when every
	 * switch's destinations divide evenly over its up-links, the flow
	 * strategy when they do not.
	 */
	if (rc == 0 && uneven_leaf(&t)) {
		rc = flow_then_chain(&t, out, &alt, &flow_max, &chain_max,
				     &flow_p5, &chain_p5);
		if (rc < 0 && rc != -ENOMEM) {
			/* as below, where the chain alone may decide */
			routing_result_free(out);
			routing_result_free(&alt);
			flow_max = chain_max = 0;
			rc = 0;
		} else if (rc == 0) {
			ran = true;
		}
	}
	if (rc == 0 && !ran) {
		free(t.flow);
		if (!ALLOC(t.flow, t.port_base[t.S] + 1))
			rc = -ENOMEM;
		if (rc == 0)
			rc = ftree_route_all(&t, &alt);		/* chain */
	}
	if (rc == 0 && !ran) {
		chain_max = ftree_max_flow(&t, t.flow);
		chain_p5 = t.n_phase5;
		free(t.flow);
		t.flow = NULL;
		flow_max = UINT64_MAX;
		if (chain_max > ftree_leaf_bound(&t)) {
			rc = ftree_route_all(&t, out);	/* flow */
			flow_max = ftree_max_flow(&t, t.cnt);
			flow_p5 = t.n_phase5;
		}
	}
	if (rc == 0) {
		t.n_phase5 = flow_p5;
		if (chain_max <= flow_max) {
			routing_result_free(out);
			*out = alt;
			memset(&alt, 0, sizeof(alt));
			t.n_phase5 = chain_p5;
		}
		for (size_t x = 0; x < t.S; x++)
			t.lftp[x] = out->lft[t.sw_node[x]].port;
		rc = ftree_route_io(&t, out);
		if (rc == 0)
			rc = ftree_fix_layers(&t, out);
	}
	if (rc == 0) {
		for (size_t x = 0; x < t.S; x++) {
			n_leaves += t.level[x] == 0;
			n_top += t.level[x] == t.max_level;
		}
		{
			char line[512], other[48] = "not needed", io[96] = "";
			bool chain = chain_max <= flow_max;

			if (chain_max == UINT64_MAX)
				snprintf(other, sizeof(other), "chain over %"
					 PRIu64 ", stopped", flow_max);
			else if (flow_max != UINT64_MAX)
				snprintf(other, sizeof(other), "%s %" PRIu64,
					 chain ? "flow" : "chain",
					 chain ? flow_max : chain_max);
			if (t.n_io_lids)
				snprintf(io, sizeof(io), "; %zu I/O LIDs, %zu "
					 "routes with reverse hops%s", t.n_io_lids,
					 t.n_io_rev, out->n_layers > 2 ?
					 " on SL 2" : "");
			int w = snprintf(line, sizeof(line), "fat tree, %d levels, "
					 "%zu leaves, %zu roots%s; %s: busiest link %"
					 PRIu64 " flows (%s, leaf bound %" PRIu64 ")%s%s",
					 t.max_level + 1, n_leaves, n_top,
					 o->n_root_guids ? " (root_guid_file)" : "",
					 chain ? "chain" : "flow",
					 chain ? chain_max : flow_max, other,
					 ftree_leaf_bound(&t), out->n_layers ?
					 "; switch LIDs on SL 1" : "", io);
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
