/*
 * layout.c - the switch graph and its layout by tiers or on a grid (see
 * layout.h); the force-directed layout is in force.c.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fabmap/layout.h"

#define MARGIN		40.0

/* ------------------------------------------------------------- graph */

void fm_graph_free(struct fm_graph *g)
{
	free(g->node);
	free(g->idx);
	free(g->hosts);
	free(g->off);
	free(g->adj);
	memset(g, 0, sizeof(*g));
}

static bool is_switch(const struct fabric *f, int32_t id)
{
	return id != FAB_NONE && (size_t)id < f->n_nodes &&
	       f->nodes[id].type == NODE_TYPE_SWITCH;
}

int fm_graph_build(const struct fabric *f, struct fm_graph *g)
{
	size_t n = 0, m = 0;
	uint32_t *mark;

	memset(g, 0, sizeof(*g));
	g->idx = malloc((f->n_nodes + 1) * sizeof(*g->idx));
	if (!g->idx)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_nodes; i++) {
		g->idx[i] = -1;
		if (f->nodes[i].type == NODE_TYPE_SWITCH) {
			g->idx[i] = (int32_t)n++;
			m += f->nodes[i].num_ports;
		}
	}
	g->n = n;
	g->node = malloc((n + 1) * sizeof(*g->node));
	g->hosts = calloc(n + 1, sizeof(*g->hosts));
	g->off = calloc(n + 2, sizeof(*g->off));
	g->adj = malloc((m + 1) * sizeof(*g->adj));
	mark = malloc((n + 1) * sizeof(*mark));
	if (!g->node || !g->hosts || !g->off || !g->adj || !mark) {
		free(mark);
		fm_graph_free(g);
		return -ENOMEM;
	}
	for (size_t k = 0; k <= n; k++)
		mark[k] = UINT32_MAX;
	m = 0;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		int32_t k = g->idx[i];

		if (k < 0)
			continue;
		g->node[k] = (int32_t)i;
		g->off[k] = (uint32_t)m;
		for (unsigned p = 1; p <= nd->num_ports; p++) {
			int32_t peer = nd->ports[p].peer_node;

			if (peer == FAB_NONE || (size_t)peer >= f->n_nodes)
				continue;
			if (!is_switch(f, peer)) {
				g->hosts[k]++;
				continue;
			}
			int32_t pk = g->idx[peer];
			if (pk == k || mark[pk] == (uint32_t)k)
				continue;	/* loopback or a parallel cable */
			mark[pk] = (uint32_t)k;
			g->adj[m++] = (uint32_t)pk;
		}
	}
	g->off[n] = (uint32_t)m;
	g->n_edges = m / 2;
	free(mark);
	return 0;
}

static unsigned degree(const struct fm_graph *g, size_t k)
{
	return g->off[k + 1] - g->off[k];
}

void fm_layout_free(struct fm_layout *l)
{
	free(l->x);
	free(l->y);
	free(l->tier);
	free(l->coord);
	memset(l, 0, sizeof(*l));
}

static int alloc_xy(const struct fm_graph *g, struct fm_layout *l)
{
	l->x = calloc(g->n + 1, sizeof(*l->x));
	l->y = calloc(g->n + 1, sizeof(*l->y));
	return l->x && l->y ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------- tiers */

struct key {
	double k;
	uint32_t tie;
	uint32_t i;
};

static int key_cmp(const void *a, const void *b)
{
	const struct key *x = a, *y = b;

	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return x->tie < y->tie ? -1 : x->tie > y->tie;
}

/* Breadth-first tiers from the switches that have at least min_hosts
 * hosts; the number of tiers, or -ENOENT when a switch is out of reach
 * or none has hosts. */
static int tiers_of(const struct fm_graph *g, uint32_t min_hosts, int *tier,
		    uint32_t *q)
{
	size_t head = 0, tail = 0;
	int top = 0;

	for (size_t k = 0; k < g->n; k++) {
		tier[k] = -1;
		if (g->hosts[k] >= min_hosts) {
			tier[k] = 0;
			q[tail++] = (uint32_t)k;
		}
	}
	if (!tail)
		return -ENOENT;
	while (head < tail) {
		uint32_t k = q[head++];

		for (uint32_t e = g->off[k]; e < g->off[k + 1]; e++) {
			uint32_t j = g->adj[e];

			if (tier[j] < 0) {
				tier[j] = tier[k] + 1;
				top = tier[j] > top ? tier[j] : top;
				q[tail++] = j;
			}
		}
	}
	return tail == g->n ? top + 1 : -ENOENT;
}

/*
 * Order every tier: leaves grouped by the first switch above them (the
 * leaves of a pod together), then each tier above by the mean position
 * of the switches below it (ties: model order), twice.  Ordering the
 * tiers below again by those above would scatter the pods of a 3-level
 * tree (a core group touches every pod), so it is not done.  pos[k]:
 * switch k's place in its tier.
 */
static void order_tiers(const struct fm_graph *g, const int *tier,
			unsigned T, const size_t *count, uint32_t *pos,
			struct key *keys)
{
	for (int pass = 0; pass < 2; pass++) {
		bool up = true;

		for (unsigned s = 0; s < T; s++) {
			unsigned t = up ? s : T - 1 - s;
			int near = up ? (int)t - 1 : (int)t + 1;
			size_t n = 0;

			if (pass == 2 && t == T - 1)
				continue;
			for (size_t k = 0; k < g->n; k++) {
				double sum = 0, cnt = 0, lo = 1e18;

				if (tier[k] != (int)t)
					continue;
				for (uint32_t e = g->off[k]; e < g->off[k + 1]; e++) {
					uint32_t j = g->adj[e];

					if (pass == 0 && t == 0 && tier[j] == 1)
						lo = (double)g->node[j] < lo ?
						     (double)g->node[j] : lo;
					if (near < 0 || tier[j] != near)
						continue;
					sum += (pos[j] + 0.5) / (double)count[near];
					cnt++;
				}
				keys[n].k = pass == 0 && t == 0 ? lo :
					    cnt ? sum / cnt : 2.0;
				keys[n].tie = pass == 0 ? (uint32_t)g->node[k] :
					      pos[k];
				keys[n].i = (uint32_t)k;
				n++;
			}
			qsort(keys, n, sizeof(*keys), key_cmp);
			for (size_t r = 0; r < n; r++)
				pos[keys[r].i] = (uint32_t)r;
		}
	}
}

int fm_layout_tiers(const struct fm_graph *g, struct fm_layout *l)
{
	uint32_t *q = malloc((g->n + 1) * sizeof(*q));
	struct key *keys = malloc((g->n + 1) * sizeof(*keys));
	size_t *count = NULL, intra = 0, widest = 1;
	int rc, T;

	memset(l, 0, sizeof(*l));
	l->tier = malloc((g->n + 1) * sizeof(*l->tier));
	rc = !q || !keys || !l->tier ? -ENOMEM : alloc_xy(g, l);
	if (rc < 0)
		goto out;
	/* Leaves: the switches with hosts; failing that, those with at
	 * least half as many as the most (a host or two cabled to a spine,
	 * the SM's or a storage server, does not make it a leaf). */
	uint32_t most = 0;
	for (size_t k = 0; k < g->n; k++)
		most = g->hosts[k] > most ? g->hosts[k] : most;
	for (int attempt = 0; attempt < 2; attempt++) {
		T = tiers_of(g, attempt ? (most + 1) / 2 : 1, l->tier, q);
		intra = 0;
		for (size_t k = 0; T >= 2 && k < g->n; k++)
			for (uint32_t e = g->off[k]; e < g->off[k + 1]; e++)
				intra += l->tier[g->adj[e]] == l->tier[k];
		/* a tree allows a few cables within a tier (each counted
		 * twice above) */
		if (T >= 2 && intra / 2 * 10 <= g->n_edges)
			break;
		T = -ENOENT;
		if (most < 2)
			break;
	}
	if (T < 2) {
		rc = -ENOENT;
		goto out;
	}
	count = calloc((size_t)T, sizeof(*count));
	if (!count) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < g->n; k++)
		count[l->tier[k]]++;
	for (int t = 0; t < T; t++)
		widest = count[t] > widest ? count[t] : widest;
	order_tiers(g, l->tier, (unsigned)T, count, q, keys);

	/* rows far enough apart for a drawing about as wide as a screen */
	double sp = g->n <= FM_LABEL_SWITCHES ? 110.0 : 28.0;
	double w = (double)widest * sp;
	double gap = w / (double)(T - 1) / 1.6;

	gap = gap < 160 ? 160 : gap;
	double fs = fmin(80, fmax(13, w / 110)), room = fs * 4;

	l->kind = FM_TIERS;
	l->tiers = (unsigned)T;
	l->label_size = fs;
	l->radius = 9.0;
	l->width = w + 2 * MARGIN + room;
	l->height = (T - 1) * gap + 2 * MARGIN + 30;
	for (size_t k = 0; k < g->n; k++) {
		int t = l->tier[k];

		l->x[k] = MARGIN + room + (q[k] + 0.5) * w / (double)count[t];
		l->y[k] = MARGIN + (T - 1 - t) * gap;
	}
	rc = 0;
out:
	free(q);
	free(keys);
	free(count);
	if (rc < 0)
		fm_layout_free(l);
	return rc;
}

/* -------------------------------------------------------------- grid */

struct grid {
	unsigned d, L[3];
	bool torus;
	size_t N;
};

static void decode(const struct grid *G, size_t pos, int c[3])
{
	for (unsigned i = 0; i < 3; i++) {
		c[i] = (int)(pos % G->L[i]);
		pos /= G->L[i];
	}
}

static size_t encode(const struct grid *G, const int c[3])
{
	return (size_t)c[0] + G->L[0] * ((size_t)c[1] + G->L[1] * (size_t)c[2]);
}

/* The grid neighbours of `pos` (at most 6, distinct). */
static unsigned grid_nbrs(const struct grid *G, size_t pos, size_t out[6])
{
	int c[3];
	unsigned n = 0;

	decode(G, pos, c);
	for (unsigned i = 0; i < G->d; i++) {
		for (int s = -1; s <= 1; s += 2) {
			int o = c[i], v = o + s;

			if (v < 0 || v >= (int)G->L[i]) {
				if (!G->torus)
					continue;
				v = (v + (int)G->L[i]) % (int)G->L[i];
			}
			if (v == o)
				continue;
			c[i] = v;
			size_t p = encode(G, c);
			c[i] = o;
			bool dup = false;
			for (unsigned j = 0; j < n; j++)
				dup |= out[j] == p;
			if (!dup)
				out[n++] = p;
		}
	}
	return n;
}

static bool grid_adjacent(const struct grid *G, size_t a, size_t b)
{
	int ca[3], cb[3];
	unsigned diff = 0;
	bool step = false;

	decode(G, a, ca);
	decode(G, b, cb);
	for (unsigned i = 0; i < 3; i++) {
		int dlt = abs(ca[i] - cb[i]);

		if (!dlt)
			continue;
		diff++;
		step = dlt == 1 || (G->torus && dlt == (int)G->L[i] - 1);
	}
	return diff == 1 && step;
}

/*
 * Place the switches on grid G: breadth-first from a switch of least
 * degree (a mesh's corner) at the origin, each next one on a free grid
 * neighbour of its parent's place that has its degree and is a grid
 * neighbour of every placed switch it is cabled to; back to the last
 * choice when none is.  With as many cables as the grid has edges, a
 * complete placement is an isomorphism.  At most `budget` steps.
 */
static int grid_embed(const struct fm_graph *g, const struct grid *G,
		      int32_t *pos_of, uint32_t *order, uint32_t *parent,
		      uint8_t *choice, int32_t *node_at)
{
	size_t n = g->n, head = 0, tail = 0, start = 0;
	unsigned long steps = 0, budget = 50ul * n + 10000;
	size_t nb[6];

	for (size_t k = 0; k < n; k++) {
		pos_of[k] = -1;
		node_at[k] = -1;
		if (degree(g, k) < degree(g, start))
			start = k;
	}
	/* breadth-first order; parent[i]: the index in order of the parent */
	order[tail++] = (uint32_t)start;
	pos_of[start] = 0;
	while (head < tail) {
		uint32_t k = order[head];

		for (uint32_t e = g->off[k]; e < g->off[k + 1]; e++) {
			uint32_t j = g->adj[e];

			if (pos_of[j] < 0) {
				pos_of[j] = 0;
				parent[tail] = (uint32_t)head;
				order[tail++] = j;
			}
		}
		head++;
	}
	if (tail != n)
		return -ENOENT;		/* not connected */
	for (size_t k = 0; k < n; k++)
		pos_of[k] = -1;
	if (grid_nbrs(G, 0, nb) != degree(g, start))
		return -ENOENT;
	pos_of[start] = 0;
	node_at[0] = (int32_t)start;
	memset(choice, 0, n);
	size_t i = 1;
	while (i < n) {
		uint32_t u = order[i];
		unsigned nc = grid_nbrs(G, (size_t)pos_of[order[parent[i]]], nb);
		bool placed = false;

		if (++steps > budget)
			return -ENOENT;
		while (choice[i] < nc && !placed) {
			size_t c = nb[choice[i]++];
			size_t tmp[6];
			bool ok = node_at[c] < 0 &&
				  grid_nbrs(G, c, tmp) == degree(g, u);

			for (uint32_t e = g->off[u]; ok && e < g->off[u + 1]; e++) {
				int32_t pm = pos_of[g->adj[e]];

				ok = pm < 0 || grid_adjacent(G, (size_t)pm, c);
			}
			if (ok) {
				pos_of[u] = (int32_t)c;
				node_at[c] = (int32_t)u;
				placed = true;
			}
		}
		if (placed) {
			if (++i < n)
				choice[i] = 0;
			continue;
		}
		choice[i] = 0;
		if (--i == 0)
			return -ENOENT;
		node_at[pos_of[order[i]]] = -1;
		pos_of[order[i]] = -1;
	}
	return 0;
}

static size_t grid_edges(const struct grid *G)
{
	size_t e = 0;

	for (unsigned i = 0; i < G->d; i++) {
		if (G->torus)
			e += G->L[i] >= 3 ? G->N : G->N / 2;
		else
			e += (G->L[i] - 1) * (G->N / G->L[i]);
	}
	return e;
}

/* Does grid G have as many places of each degree as g has switches?
 * (Cheap, and no other graph with g's cable count gets to the search.) */
static bool same_degrees(const struct fm_graph *g, const struct grid *G)
{
	size_t want[7] = { 0 }, have[7] = { 0 }, nb[6];

	for (size_t k = 0; k < g->n; k++)
		want[degree(g, k)]++;	/* at most 6 (fm_layout_grid) */
	for (size_t p = 0; p < G->N; p++)
		have[grid_nbrs(G, p, nb)]++;
	return !memcmp(want, have, sizeof(want));
}

/* Every grid of 1 to 3 dimensions (sizes >= 2, largest first) with
 * g->n places, fewer dimensions first, then tori before meshes; cb is
 * tried on each until it succeeds. */
static int try_grids(const struct fm_graph *g, struct grid *G,
		     int (*cb)(const struct fm_graph *, const struct grid *,
			       void *), void *arg)
{
	size_t n = g->n;

	for (unsigned d = 1; d <= 3; d++)
		for (int torus = 1; torus >= 0; torus--)
			for (size_t a = 2; a <= n; a++) {
				size_t r = n / a;

				if (n % a)
					continue;
				/* a >= b >= c >= 1 */
				for (size_t b = 1; b <= a && b <= r; b++) {
					size_t c = r / b;

					if (r % b || c > b ||
					    1u + (b > 1) + (c > 1) != d)
						continue;
					*G = (struct grid){ .torus = torus,
						.N = n, .d = d,
						.L = { (unsigned)a, (unsigned)b,
						       (unsigned)c } };
					if (grid_edges(G) != g->n_edges ||
					    !same_degrees(g, G))
						continue;
					int rc = cb(g, G, arg);
					if (rc != -ENOENT)
						return rc;
				}
			}
	return -ENOENT;
}

struct embed_ws {
	int32_t *pos_of, *node_at;
	uint32_t *order, *parent;
	uint8_t *choice;
};

static int embed_cb(const struct fm_graph *g, const struct grid *G, void *arg)
{
	struct embed_ws *w = arg;

	return grid_embed(g, G, w->pos_of, w->order, w->parent, w->choice,
			  w->node_at);
}

int fm_layout_grid(const struct fm_graph *g, struct fm_layout *l)
{
	struct embed_ws w = { 0 };
	struct grid G;
	size_t n = g->n;
	int rc = -ENOENT;

	memset(l, 0, sizeof(*l));
	if (n < 2 || n > FM_MAX_GRID_SWITCHES)
		return -ENOENT;
	for (size_t k = 0; k < n; k++)
		if (degree(g, k) > 6)
			return -ENOENT;
	w.pos_of = malloc(n * sizeof(*w.pos_of));
	w.node_at = malloc(n * sizeof(*w.node_at));
	w.order = malloc(n * sizeof(*w.order));
	w.parent = malloc(n * sizeof(*w.parent));
	w.choice = malloc(n);
	l->coord = malloc(3 * n * sizeof(*l->coord));
	if (!w.pos_of || !w.node_at || !w.order || !w.parent || !w.choice ||
	    !l->coord || alloc_xy(g, l) < 0) {
		rc = -ENOMEM;
		goto out;
	}
	rc = try_grids(g, &G, embed_cb, &w);
	if (rc < 0)
		goto out;

	double sp = 90.0;
	unsigned slices = G.L[2];
	l->kind = FM_GRID;
	l->dims = G.d;
	memcpy(l->size, G.L, sizeof(l->size));
	l->torus = G.torus;
	l->radius = 10.0;
	/* a third dimension as slices side by side */
	l->width = 2 * MARGIN + ((G.L[0] + 1) * slices - 2) * sp;
	l->height = 2 * MARGIN + (G.L[1] - 1) * sp + 30;
	for (size_t k = 0; k < n; k++) {
		int *c = &l->coord[3 * k];

		decode(&G, (size_t)w.pos_of[k], c);
		l->x[k] = MARGIN + ((G.L[0] + 1) * (unsigned)c[2] +
				    (unsigned)c[0]) * sp;
		l->y[k] = MARGIN + c[1] * sp;
	}
out:
	free(w.pos_of);
	free(w.node_at);
	free(w.order);
	free(w.parent);
	free(w.choice);
	if (rc < 0)
		fm_layout_free(l);
	return rc;
}

/* ------------------------------------------------------------ choice */

int fm_layout_compute(const struct fm_graph *g, struct fm_layout *l)
{
	int rc = fm_layout_tiers(g, l);

	if (rc == -ENOENT)
		rc = fm_layout_grid(g, l);
	if (rc == -ENOENT)
		rc = fm_layout_force(g, l);
	return rc;
}
