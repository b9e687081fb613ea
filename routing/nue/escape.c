/*
 * escape.c - the nue engine's layers of destinations and escape trees
 * (see nue.h).
 *
 * Layers: the switches are split into n_vl regions grown breadth-first in
 * turns from n_vl seeds far apart (the first the most central switch),
 * each region taking one switch per turn, so the regions are connected
 * and nearly the same size; a destination LID goes into its switch's
 * region's layer.  Destinations near one another make compatible turns
 * (the paths into one region meet few paths going the other way), which
 * is what keeps a layer's dependency graph from filling up.
 *
 * Escape trees: layer l's tree is a breadth-first spanning forest from
 * the most central switch of region l.  Paths that follow a tree never
 * turn back, and a walk in a tree that never turns back never returns to
 * a channel, so all of a tree's turns together are acyclic: they go into
 * the layer first, and from then on any destination can be routed along
 * the tree in that layer without adding a dependency.
 *
 * Central: least summed distance to a sample of up to NUE_SAMPLES
 * switches (one breadth-first search each).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "routing/nue/nue.h"

#define NUE_SAMPLES	24

void nue_escape_free(struct nue_escape *e)
{
	free(e->tree);
	free(e->root);
	memset(e, 0, sizeof(*e));
}

/* sum[v]: summed hop count from v to the sample switches. */
static void centrality(const struct rgraph *g, uint64_t *sum, uint32_t *dist,
		       uint32_t *order)
{
	uint32_t S = g->S, step = S / NUE_SAMPLES ? S / NUE_SAMPLES : 1;

	memset(sum, 0, (size_t)S * sizeof(*sum));
	for (uint32_t s = 0; s < S; s += step) {
		rg_bfs(g, s, dist, order);
		for (uint32_t v = 0; v < S; v++)
			sum[v] += dist[v] == RG_INF ? S : dist[v];
	}
}

/* Seeds far apart: the most central switch, then each time the switch
 * farthest from the seeds so far (multi-source distances in far). */
static void pick_seeds(const struct rgraph *g, const uint64_t *sum,
		       unsigned n_vl, uint32_t *seed, uint32_t *far,
		       uint32_t *dist, uint32_t *order)
{
	uint32_t S = g->S, best = 0;

	for (uint32_t v = 1; v < S; v++)
		if (sum[v] < sum[best])
			best = v;
	for (uint32_t v = 0; v < S; v++)
		far[v] = RG_INF;
	for (unsigned l = 0; l < n_vl; l++) {
		seed[l] = best;
		rg_bfs(g, best, dist, order);
		for (uint32_t v = 0; v < S; v++)
			if (dist[v] < far[v])
				far[v] = dist[v];
		best = 0;
		for (uint32_t v = 1; v < S; v++) {
			uint32_t fv = far[v] == RG_INF ? 0 : far[v];
			uint32_t fb = far[best] == RG_INF ? 0 : far[best];

			if (fv > fb || (fv == fb && sum[v] < sum[best]))
				best = v;
		}
	}
}

/* Grow the regions in turns from the seeds (queue: n_vl x (S + C + 1);
 * a switch enters a region's queue once per neighbour in it). */
static void grow(const struct rgraph *g, unsigned n_vl, const uint32_t *seed,
		 uint8_t *cluster, uint32_t *queue)
{
	size_t Q = (size_t)g->S + g->adj_off[g->S] + 1;	/* per region */
	size_t head[NUE_MAX_VLS] = { 0 }, tail[NUE_MAX_VLS] = { 0 };
	uint32_t S = g->S;
	uint32_t left = S, rr = 0;
	bool moved = true;

	memset(cluster, 0xff, S);
	for (unsigned l = 0; l < n_vl; l++)
		queue[(size_t)l * Q + tail[l]++] = seed[l];
	while (left && moved) {
		moved = false;
		for (unsigned l = 0; l < n_vl && left; l++) {
			uint32_t *q = queue + (size_t)l * Q, v = NUE_NONE;

			while (head[l] < tail[l] && v == NUE_NONE) {
				v = q[head[l]++];
				if (cluster[v] != 0xff)
					v = NUE_NONE;
			}
			if (v == NUE_NONE)
				continue;
			moved = true;
			cluster[v] = (uint8_t)l;
			left--;
			for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++)
				if (cluster[g->adj_nbr[a]] == 0xff && tail[l] < Q)
					q[tail[l]++] = g->adj_nbr[a];
		}
	}
	/* switches the seeds do not reach (other components) */
	for (uint32_t v = 0; v < S; v++)
		if (cluster[v] == 0xff)
			cluster[v] = (uint8_t)(rr++ % n_vl);
}

/* Layer l's tree: breadth-first forest from root; marks its channels. */
static void tree_of(const struct rgraph *g, uint32_t root, uint8_t *tree,
		    uint32_t *seen, uint32_t *queue)
{
	uint32_t S = g->S, head = 0, tail = 0;

	memset(seen, 0, (size_t)S * sizeof(*seen));
	for (uint32_t i = 0; i <= S; i++) {
		uint32_t s = i == 0 ? root : i - 1;

		if (seen[s])
			continue;
		seen[s] = 1;
		queue[tail++] = s;
		while (head < tail) {
			uint32_t v = queue[head++];

			for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1];
			     a++) {
				uint32_t w = g->adj_nbr[a];

				if (seen[w])
					continue;
				seen[w] = 1;
				tree[a] = 1;
				tree[g->adj_rev[a]] = 1;
				queue[tail++] = w;
			}
		}
	}
}

/* Every turn of layer l's tree into the layer (acyclic: always taken). */
static bool tree_turns(const struct rgraph *g, struct nue_cdg *d, unsigned l,
		       const uint8_t *tree)
{
	for (uint32_t v = 0; v < g->S; v++)
		for (uint32_t e = g->adj_off[v]; e < g->adj_off[v + 1]; e++) {
			uint32_t in = g->adj_rev[e];

			if (!tree[e])
				continue;
			for (uint32_t b = g->adj_off[v]; b < g->adj_off[v + 1];
			     b++)
				if (b != e && tree[b] &&
				    !nue_cdg_add(d, l, in, b))
					return false;
		}
	return true;
}

int nue_escape_build(const struct rgraph *g, struct nue_cdg *d,
		     unsigned n_vl, uint8_t *cluster, struct nue_escape *e)
{
	uint32_t S = g->S, C = g->adj_off[S], seed[NUE_MAX_VLS];
	uint64_t *sum = malloc(((size_t)S + 1) * sizeof(*sum));
	uint32_t *dist = malloc(((size_t)S + 1) * sizeof(*dist));
	uint32_t *order = malloc(((size_t)S + 1) * sizeof(*order));
	uint32_t *far = malloc(((size_t)S + 1) * sizeof(*far));
	uint32_t *queue = malloc(((size_t)S + C + 1) * n_vl * sizeof(*queue));
	int rc = 0;

	e->tree = calloc((size_t)C * n_vl + 1, 1);
	e->root = calloc(n_vl, sizeof(*e->root));
	if (!sum || !dist || !order || !far || !queue || !e->tree || !e->root)
		rc = -ENOMEM;
	if (rc == 0 && S) {
		centrality(g, sum, dist, order);
		pick_seeds(g, sum, n_vl, seed, far, dist, order);
		grow(g, n_vl, seed, cluster, queue);
		for (unsigned l = 0; l < n_vl; l++) {
			uint32_t r = seed[l];

			for (uint32_t v = 0; v < S; v++)
				if (cluster[v] == l && sum[v] < sum[r])
					r = v;
			e->root[l] = r;
			tree_of(g, r, e->tree + (size_t)l * C, far, queue);
			if (!tree_turns(g, d, l, e->tree + (size_t)l * C))
				rc = -EDEADLK;	/* cannot happen: a tree */
		}
	}
	free(sum);
	free(dist);
	free(order);
	free(far);
	free(queue);
	return rc;
}
