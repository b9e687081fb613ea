/*
 * force.c - the force-directed layout of fabmap/layout.h:
 * Fruchterman-Reingold (1991) with its grid variant (springs after Eades
 * beyond FM_FORCE_FR_MAX switches): repulsion only
 * between switches at most 2k apart, found through a grid of cells of
 * that size, so one iteration costs O(switches + cables).  A bounded
 * number of iterations with a linearly cooling step, from a
 * deterministic start; then switches closer than their marks allow are
 * pushed apart.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fabmap/layout.h"

#define MARGIN		40.0
/* The ideal cable length and the least distance between switch centres:
 * wider apart when the map names the switches (FM_LABEL_SWITCHES). */
#define K_PLAIN		60.0
#define K_LABELS	120.0
#define RADIUS		7.0
#define GAP_PLAIN	(3 * RADIUS)
#define GAP_LABELS	80.0

struct cells {
	double size, x0, y0;
	size_t w, h;
	int32_t *head;			/* w * h */
	int32_t *next;			/* per switch */
};

static int cells_build(struct cells *c, const double *x, const double *y,
		       size_t n, double size)
{
	double x1 = x[0], y1 = y[0];

	c->x0 = x[0];
	c->y0 = y[0];
	for (size_t i = 1; i < n; i++) {
		c->x0 = fmin(c->x0, x[i]);
		c->y0 = fmin(c->y0, y[i]);
		x1 = fmax(x1, x[i]);
		y1 = fmax(y1, y[i]);
	}
	c->size = size;
	c->w = (size_t)((x1 - c->x0) / size) + 1;
	c->h = (size_t)((y1 - c->y0) / size) + 1;
	/* bounded: at most ~4 cells per switch (outliers share a cell) */
	while (c->w * c->h > 4 * n + 16) {
		c->size *= 2;
		c->w = (size_t)((x1 - c->x0) / c->size) + 1;
		c->h = (size_t)((y1 - c->y0) / c->size) + 1;
	}
	free(c->head);
	c->head = malloc(c->w * c->h * sizeof(*c->head));
	if (!c->head)
		return -ENOMEM;
	for (size_t i = 0; i < c->w * c->h; i++)
		c->head[i] = -1;
	for (size_t i = 0; i < n; i++) {
		size_t cx = (size_t)((x[i] - c->x0) / c->size);
		size_t cy = (size_t)((y[i] - c->y0) / c->size);
		size_t cell = cy * c->w + cx;

		c->next[i] = c->head[cell];
		c->head[cell] = (int32_t)i;
	}
	return 0;
}

/* Call fn for every switch j != i in the cells around switch i. */
#define FOR_NEAR(c, x, y, i, j, ...) do {				\
	long cx_ = (long)(((x)[i] - (c)->x0) / (c)->size);		\
	long cy_ = (long)(((y)[i] - (c)->y0) / (c)->size);		\
	for (long yy_ = cy_ - 1; yy_ <= cy_ + 1; yy_++)			\
		for (long xx_ = cx_ - 1; xx_ <= cx_ + 1; xx_++) {	\
			if (xx_ < 0 || yy_ < 0 || xx_ >= (long)(c)->w ||	\
			    yy_ >= (long)(c)->h)				\
				continue;				\
			for (int32_t j = (c)->head[yy_ * (long)(c)->w + xx_];	\
			     j >= 0; j = (c)->next[j]) {		\
				if ((size_t)j == (i))			\
					continue;			\
				__VA_ARGS__				\
			}						\
		}							\
} while (0)

static void repulse(const struct cells *c, const double *x, const double *y,
		    size_t n, double K, double *dx, double *dy)
{
	const double r2 = 4 * K * K;

	for (size_t i = 0; i < n; i++) {
		FOR_NEAR(c, x, y, i, j, {
			double ex = x[i] - x[j], ey = y[i] - y[j];
			double d2 = ex * ex + ey * ey;

			if (d2 >= r2)
				continue;
			if (d2 < 1e-4) {	/* same place: split them */
				ex = (double)((i * 7 + (size_t)j) % 5) - 2.0 + 0.5;
				ey = (double)((i * 3 + (size_t)j) % 7) - 3.0 + 0.5;
				d2 = ex * ex + ey * ey;
			}
			dx[i] += ex * K * K / d2;
			dy[i] += ey * K * K / d2;
		});
	}
}

static void attract(const struct fm_graph *g, const double *x,
		    const double *y, double K, double *dx, double *dy)
{
	for (size_t i = 0; i < g->n; i++)
		for (uint32_t e = g->off[i]; e < g->off[i + 1]; e++) {
			uint32_t j = g->adj[e];
			double ex = x[i] - x[j], ey = y[i] - y[j];
			double d = sqrt(ex * ex + ey * ey);

			if (j < i || d < 1e-9)
				continue;
			/* d^2 / K along the cable (Fruchterman-Reingold); on a
			 * large graph K log(1 + d / K) (Eades): the first
			 * pulls a large random graph, all long cables, into
			 * a heap */
			double f = g->n <= FM_FORCE_FR_MAX ? d / K :
				   log1p(d / K) * K / d;
			dx[i] -= ex * f;
			dy[i] -= ey * f;
			dx[j] += ex * f;
			dy[j] += ey * f;
		}
}

/* Push apart switches closer than MIN_GAP; a bounded number of passes. */
static int spread(double *x, double *y, size_t n, double MIN_GAP,
		  struct cells *c)
{
	for (int pass = 0; pass < 100; pass++) {
		unsigned moved = 0;
		int rc = cells_build(c, x, y, n, MIN_GAP);

		if (rc < 0)
			return rc;
		for (size_t i = 0; i < n; i++) {
			FOR_NEAR(c, x, y, i, j, {
				double ex = x[i] - x[j], ey = y[i] - y[j];
				double d = sqrt(ex * ex + ey * ey);

				if (d >= MIN_GAP)
					continue;
				if (d < 1e-6) {
					ex = 1.0 + (double)(i % 3);
					ey = 1.0 + (double)((size_t)j % 3);
					d = sqrt(ex * ex + ey * ey);
				}
				double push = (MIN_GAP - d) / 2 + 0.5;
				x[i] += ex / d * push;
				y[i] += ey / d * push;
				x[j] -= ex / d * push;
				y[j] -= ey / d * push;
				moved++;
			});
		}
		if (!moved)
			return 0;
	}
	return 0;
}

int fm_layout_force(const struct fm_graph *g, struct fm_layout *l)
{
	size_t n = g->n;
	double K = n <= FM_LABEL_SWITCHES ? K_LABELS : K_PLAIN;
	double gap = n <= FM_LABEL_SWITCHES ? GAP_LABELS : GAP_PLAIN;
	double side = K * sqrt((double)(n ? n : 1)) * 1.2;
	double *dx = calloc(n + 1, sizeof(*dx)), *dy = calloc(n + 1, sizeof(*dy));
	struct cells c = { 0 };
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	int rc;

	memset(l, 0, sizeof(*l));
	l->x = calloc(n + 1, sizeof(*l->x));
	l->y = calloc(n + 1, sizeof(*l->y));
	c.next = malloc((n + 1) * sizeof(*c.next));
	if (!dx || !dy || !l->x || !l->y || !c.next) {
		rc = -ENOMEM;
		goto out;
	}
	/* deterministic start: a xorshift sequence over the square */
	for (size_t i = 0; i < n; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		l->x[i] = (double)(seed % 100000) / 100000.0 * side;
		l->y[i] = (double)((seed >> 20) % 100000) / 100000.0 * side;
	}
	for (int it = 0; n > 1 && it < FM_FORCE_ITERATIONS; it++) {
		double t = side / 10 * (1.0 - (double)it / FM_FORCE_ITERATIONS)
			   + 1.0;

		rc = cells_build(&c, l->x, l->y, n, 2 * K);
		if (rc < 0)
			goto out;
		memset(dx, 0, n * sizeof(*dx));
		memset(dy, 0, n * sizeof(*dy));
		repulse(&c, l->x, l->y, n, K, dx, dy);
		attract(g, l->x, l->y, K, dx, dy);
		for (size_t i = 0; i < n; i++) {
			double d = sqrt(dx[i] * dx[i] + dy[i] * dy[i]);

			if (d < 1e-9)
				continue;
			double s = fmin(d, t) / d;
			l->x[i] = fmin(side, fmax(0, l->x[i] + dx[i] * s));
			l->y[i] = fmin(side, fmax(0, l->y[i] + dy[i] * s));
		}
	}
	rc = n ? spread(l->x, l->y, n, gap, &c) : 0;
	if (rc < 0)
		goto out;

	double x0 = n ? l->x[0] : 0, y0 = n ? l->y[0] : 0, x1 = x0, y1 = y0;
	for (size_t i = 0; i < n; i++) {
		x0 = fmin(x0, l->x[i]);
		y0 = fmin(y0, l->y[i]);
		x1 = fmax(x1, l->x[i]);
		y1 = fmax(y1, l->y[i]);
	}
	for (size_t i = 0; i < n; i++) {
		l->x[i] += MARGIN - x0;
		l->y[i] += MARGIN - y0;
	}
	l->kind = FM_FORCE;
	l->radius = RADIUS;
	l->width = x1 - x0 + 2 * MARGIN;
	l->height = y1 - y0 + 2 * MARGIN + 30;
out:
	free(dx);
	free(dy);
	free(c.head);
	free(c.next);
	if (rc < 0)
		fm_layout_free(l);
	return rc;
}
