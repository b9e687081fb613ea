/*
 * shape.c - recognise a 2D/3D torus or mesh from the wiring alone.
 *
 * Port numbers say nothing about directions (cabling differs from site to
 * site), so directions are found from the shape of the graph:
 *
 *  - the dimension count D is half the largest number of distinct switch
 *    neighbours (4: 2D, 6: 3D);
 *  - a seed switch with 2D neighbours has its neighbours paired into D
 *    opposite pairs; every pairing is tried (15 in 3D) until one gives a
 *    consistent grid, since squares alone cannot tell a 4-ring from two
 *    dimensions (a 4x4 torus is a 4-cube);
 *  - labels spread by three rules until nothing changes:
 *      back    v -> w is +d, so w -> v is -d;
 *      square  u -> a is d1 and u -> b is d2 (other dimensions): the one
 *              common neighbour w != u of a and b is a -> w = d2 and
 *              b -> w = d1;
 *      last    a switch with all 2D neighbours and one left unlabelled
 *              takes the one direction left for it;
 *  - coordinates follow from a breadth-first walk of the labelled links;
 *    a dimension whose links close on themselves is a ring, its size the
 *    greatest common divisor of the wrap-arounds, else a line (a mesh).
 *
 * Failed links and switches leave holes the rules work around (a square
 * needs three of its corners); what stays unlabelled or inconsistent is
 * not a torus, and the caller gives way to a general engine.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/torus/torus.h"

#define MAX_DEG	TORUS_DIRS

struct shape {
	uint32_t S;
	unsigned D;
	uint8_t *deg;			/* distinct switch neighbours */
	uint32_t (*nb)[MAX_DEG];	/* the neighbours */
	int8_t (*lab)[MAX_DEG];		/* direction of each, -1: unknown */
	uint32_t *queue;
	uint8_t *queued;
	uint32_t head, tail;
	bool conflict;
};

static int nb_index(const struct shape *s, uint32_t v, uint32_t w)
{
	for (unsigned i = 0; i < s->deg[v]; i++)
		if (s->nb[v][i] == w)
			return (int)i;
	return -1;
}

static void push(struct shape *s, uint32_t v)
{
	if (s->queued[v])
		return;
	s->queued[v] = 1;
	s->queue[s->tail++ % s->S] = v;
}

/* Label v -> w as direction k; a clash marks the attempt failed. */
static void set_lab(struct shape *s, uint32_t v, uint32_t w, int k)
{
	int i = nb_index(s, v, w);

	if (i < 0) {
		s->conflict = true;
		return;
	}
	if (s->lab[v][i] == k)
		return;
	if (s->lab[v][i] >= 0) {
		s->conflict = true;
		return;
	}
	for (unsigned j = 0; j < s->deg[v]; j++)
		if (s->lab[v][j] == k) {
			s->conflict = true;
			return;
		}
	s->lab[v][i] = (int8_t)k;
	push(s, v);
	push(s, w);
}

/* The one common neighbour of a and b other than u, or -1 (none or
 * several: the square rule says nothing then). */
static int64_t corner(const struct shape *s, uint32_t u, uint32_t a, uint32_t b)
{
	int64_t w = -1;

	for (unsigned i = 0; i < s->deg[a]; i++) {
		uint32_t x = s->nb[a][i];

		if (x == u || nb_index(s, b, x) < 0)
			continue;
		if (w >= 0)
			return -1;
		w = x;
	}
	return w;
}

static void rules(struct shape *s, uint32_t u)
{
	unsigned d = s->deg[u], unl = 0, last = 0;
	unsigned used = 0;

	for (unsigned i = 0; i < d; i++) {
		int k = s->lab[u][i];

		if (k < 0) {
			unl++;
			last = i;
			continue;
		}
		used |= 1u << k;
		set_lab(s, s->nb[u][i], u, k ^ 1);
	}
	for (unsigned i = 0; i < d && !s->conflict; i++)
		for (unsigned j = i + 1; j < d; j++) {
			int ki = s->lab[u][i], kj = s->lab[u][j];
			int64_t w;

			if (ki < 0 || kj < 0 || ki / 2 == kj / 2)
				continue;
			w = corner(s, u, s->nb[u][i], s->nb[u][j]);
			if (w < 0)
				continue;
			set_lab(s, s->nb[u][i], (uint32_t)w, kj);
			set_lab(s, s->nb[u][j], (uint32_t)w, ki);
		}
	if (d == 2 * s->D && unl == 1 && !s->conflict)
		for (unsigned k = 0; k < 2 * s->D; k++)
			if (!(used & (1u << k))) {
				set_lab(s, u, s->nb[u][last], (int)k);
				break;
			}
}

/* Spread the labels from the seed paired as `pair` (pair[i]: the
 * neighbour index opposite i). */
static bool spread(struct shape *s, uint32_t seed, const uint8_t *pair)
{
	unsigned dim = 0;
	bool done[MAX_DEG] = { false };

	memset(s->lab, -1, (size_t)s->S * sizeof(*s->lab));
	memset(s->queued, 0, s->S);
	s->head = s->tail = 0;
	s->conflict = false;
	for (unsigned i = 0; i < 2 * s->D; i++) {
		if (done[i])
			continue;
		s->lab[seed][i] = (int8_t)(2 * dim);
		s->lab[seed][pair[i]] = (int8_t)(2 * dim + 1);
		done[i] = done[pair[i]] = true;
		dim++;
	}
	push(s, seed);
	while (s->head != s->tail && !s->conflict) {
		uint32_t u = s->queue[s->head++ % s->S];

		s->queued[u] = 0;
		rules(s, u);
	}
	if (s->conflict)
		return false;
	for (uint32_t v = 0; v < s->S; v++)
		for (unsigned i = 0; i < s->deg[v]; i++)
			if (s->lab[v][i] < 0)
				return false;
	return true;
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* Coordinates from the labels; false when they do not form a grid. */
static bool place(struct torus *t, struct shape *s, uint32_t seed,
		  char *why, size_t whylen)
{
	int32_t (*c)[TORUS_MAX_DIMS] = calloc(s->S, sizeof(*c));
	uint8_t *seen = calloc(s->S, 1);
	uint32_t *q = malloc(s->S * sizeof(*q)), h = 0, n = 0;
	int32_t lo[TORUS_MAX_DIMS] = { 0 }, hi[TORUS_MAX_DIMS] = { 0 };
	uint64_t g[TORUS_MAX_DIMS] = { 0 };
	bool ok = false;

	if (!c || !seen || !q)
		goto out;
	seen[seed] = 1;
	q[n++] = seed;
	while (h < n) {
		uint32_t v = q[h++];

		for (unsigned i = 0; i < s->deg[v]; i++) {
			uint32_t w = s->nb[v][i];
			int k = s->lab[v][i];

			if (seen[w])
				continue;
			seen[w] = 1;
			memcpy(c[w], c[v], sizeof(c[w]));
			c[w][k / 2] += k & 1 ? -1 : 1;
			q[n++] = w;
		}
	}
	if (n != s->S) {
		routing_fmt(why, whylen, "switch graph not connected");
		goto out;
	}
	for (uint32_t v = 0; v < s->S; v++)
		for (unsigned i = 0; i < s->deg[v]; i++) {
			uint32_t w = s->nb[v][i];
			int k = s->lab[v][i];

			for (unsigned d = 0; d < s->D; d++) {
				int64_t x = (int64_t)c[w][d] - c[v][d];

				if (d == (unsigned)k / 2)
					x -= k & 1 ? -1 : 1;
				g[d] = gcd64(g[d], (uint64_t)(x < 0 ? -x : x));
			}
			for (unsigned d = 0; d < s->D; d++) {
				if (c[v][d] < lo[d])
					lo[d] = c[v][d];
				if (c[v][d] > hi[d])
					hi[d] = c[v][d];
			}
		}
	t->cells = 1;
	for (unsigned d = 0; d < s->D; d++) {
		t->wrap[d] = g[d] != 0;
		t->size[d] = t->wrap[d] ? (unsigned)g[d]
					: (unsigned)(hi[d] - lo[d] + 1);
		if (t->size[d] < 3 || t->size[d] > 1024) {
			routing_fmt(why, whylen, "dimension %u has %u switches "
				    "(3 to 1024 needed)", d, t->size[d]);
			goto out;
		}
		t->cells *= t->size[d];
	}
	if (t->cells > 2 * s->S + 8) {
		routing_fmt(why, whylen, "%u grid cells for %u switches",
			    t->cells, s->S);
		goto out;
	}
	t->at = malloc(t->cells * sizeof(*t->at));
	t->coord = calloc(s->S, sizeof(*t->coord));
	if (!t->at || !t->coord)
		goto out;
	memset(t->at, -1, t->cells * sizeof(*t->at));
	for (uint32_t v = 0; v < s->S; v++) {
		uint32_t cell;

		for (unsigned d = 0; d < s->D; d++) {
			int64_t x = (int64_t)c[v][d] - (t->wrap[d] ? 0 : lo[d]);

			x %= (int64_t)t->size[d];
			if (x < 0)
				x += t->size[d];
			t->coord[v][d] = (uint16_t)x;
		}
		cell = torus_cell(t, t->coord[v]);
		if (t->at[cell] >= 0) {
			routing_fmt(why, whylen, "two switches at one grid "
				    "point");
			goto out;
		}
		t->at[cell] = (int32_t)v;
	}
	ok = true;
out:
	free(c);
	free(seen);
	free(q);
	return ok;
}

/* Every way to pair 2D neighbours into D opposite pairs. */
static unsigned pairings(unsigned n, uint8_t (*out)[MAX_DEG])
{
	uint8_t cur[MAX_DEG];
	unsigned cnt = 0;

	/* n is 4 or 6: pair 0 with each, then the rest */
	for (unsigned a = 1; a < n; a++) {
		uint8_t rest[MAX_DEG], r = 0;

		for (unsigned i = 1; i < n; i++)
			if (i != a)
				rest[r++] = (uint8_t)i;
		cur[0] = (uint8_t)a;
		cur[a] = 0;
		if (n == 4) {
			cur[rest[0]] = rest[1];
			cur[rest[1]] = rest[0];
			memcpy(out[cnt++], cur, MAX_DEG);
			continue;
		}
		for (unsigned b = 1; b < 4; b++) {
			uint8_t o1 = rest[b == 1 ? 2 : 1];
			uint8_t o2 = rest[b == 3 ? 2 : 3];

			cur[rest[0]] = rest[b];
			cur[rest[b]] = rest[0];
			cur[o1] = o2;
			cur[o2] = o1;
			memcpy(out[cnt++], cur, MAX_DEG);
		}
	}
	return cnt;
}

static int shape_alloc(struct shape *s, const struct rgraph *g, char *why,
		       size_t whylen)
{
	unsigned maxdeg = 0;

	s->S = g->S;
	s->deg = calloc(g->S + 1, 1);
	s->nb = calloc(g->S + 1, sizeof(*s->nb));
	s->lab = calloc(g->S + 1, sizeof(*s->lab));
	s->queue = calloc(g->S + 1, sizeof(*s->queue));
	s->queued = calloc(g->S + 1, 1);
	if (!s->deg || !s->nb || !s->lab || !s->queue || !s->queued)
		return -ENOMEM;
	for (uint32_t v = 0; v < g->S; v++)
		for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++) {
			uint32_t w = g->adj_nbr[a];

			if (nb_index(s, v, w) >= 0)
				continue;
			if (s->deg[v] == MAX_DEG) {
				routing_fmt(why, whylen, "a switch with more "
					    "than %d switch neighbours",
					    MAX_DEG);
				return -ENOENT;
			}
			s->nb[v][s->deg[v]++] = w;
			if (s->deg[v] > maxdeg)
				maxdeg = s->deg[v];
		}
	if (maxdeg != 4 && maxdeg != 6) {
		routing_fmt(why, whylen, "switches have up to %u switch "
			    "neighbours (4: 2D, 6: 3D)", maxdeg);
		return -ENOENT;
	}
	s->D = maxdeg / 2;
	return 0;
}

static void shape_free(struct shape *s)
{
	free(s->deg);
	free(s->nb);
	free(s->lab);
	free(s->queue);
	free(s->queued);
}

/* The seed: 2D neighbours, as many of them with 2D neighbours too. */
static uint32_t pick_seed(const struct shape *s)
{
	uint32_t best = 0;
	int best_score = -1;

	for (uint32_t v = 0; v < s->S; v++) {
		int score = 0;

		if (s->deg[v] != 2 * s->D)
			continue;
		for (unsigned i = 0; i < s->deg[v]; i++)
			score += s->deg[s->nb[v][i]] == 2 * s->D;
		if (score > best_score) {
			best_score = score;
			best = v;
		}
	}
	return best;
}

static void fill_ports(struct torus *t, const struct shape *s)
{
	const struct rgraph *g = &t->g;

	for (uint32_t v = 0; v < g->S; v++)
		for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++) {
			int i = nb_index(s, v, g->adj_nbr[a]);
			struct torus_dirports *dp;

			if (i < 0 || s->lab[v][i] < 0)
				continue;
			dp = &t->dir[v][s->lab[v][i]];
			if (dp->n < TORUS_MAX_PAR)
				dp->port[dp->n++] = g->adj_port[a];
		}
	t->holes = 0;
	t->links_missing = 0;
	for (uint32_t cell = 0; cell < t->cells; cell++) {
		int32_t v = t->at[cell];

		if (v < 0) {
			t->holes++;
			continue;
		}
		for (unsigned d = 0; d < t->dims; d++) {
			uint16_t c[TORUS_MAX_DIMS];

			memcpy(c, t->coord[v], sizeof(c));
			if (c[d] + 1u == t->size[d] && !t->wrap[d])
				continue;
			c[d] = (uint16_t)((c[d] + 1u) % t->size[d]);
			if (t->at[torus_cell(t, c)] >= 0 && !t->dir[v][2 * d].n)
				t->links_missing++;
		}
	}
}

int torus_shape(struct torus *t, char *why, size_t whylen)
{
	struct shape s = { 0 };
	uint8_t (*pair)[MAX_DEG] = NULL;
	unsigned n_pair;
	uint32_t seed;
	int rc = shape_alloc(&s, &t->g, why, whylen);

	if (rc < 0)
		goto out;
	t->dims = s.D;
	seed = pick_seed(&s);
	pair = calloc(15, sizeof(*pair));
	if (!pair) {
		rc = -ENOMEM;
		goto out;
	}
	n_pair = pairings(2 * s.D, pair);
	rc = -ENOENT;
	routing_fmt(why, whylen, "no consistent %uD grid", s.D);
	for (unsigned i = 0; i < n_pair && rc; i++) {
		if (!spread(&s, seed, pair[i]))
			continue;
		free(t->at);
		free(t->coord);
		t->at = NULL;
		t->coord = NULL;
		if (place(t, &s, seed, why, whylen))
			rc = 0;
	}
	if (rc == 0) {
		t->dir = calloc(t->g.S + 1, sizeof(*t->dir));
		if (!t->dir)
			rc = -ENOMEM;
		else
			fill_ports(t, &s);
	}
out:
	free(pair);
	shape_free(&s);
	return rc;
}

void torus_free(struct torus *t)
{
	rg_free(&t->g);
	free(t->coord);
	free(t->at);
	free(t->dir);
	memset(t, 0, sizeof(*t));
}
