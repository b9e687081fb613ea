/*
 * layout.h - where the fabric map draws each switch.
 *
 * The switch graph (switches, the cables between them, hosts counted per
 * switch) is laid out by its structure:
 *   - a tree by tier: tier 0 the switches that have hosts (leaves), tier
 *     t the switches t switch hops above the nearest leaf; leaves at the
 *     bottom, each tier ordered so that a switch sits near the switches
 *     it is cabled to below it;
 *   - a mesh or torus of up to three dimensions on its grid, coordinates
 *     found from the graph alone (an embedding searched with a bounded
 *     number of steps);
 *   - anything else by a force-directed layout (Fruchterman-Reingold,
 *     repulsion only between switches in neighbouring cells of a grid,
 *     a bounded number of iterations), then spread so that no two
 *     switches overlap.
 *
 * Pure: no I/O.  Coordinates are in SVG user units (pixels).
 */
#ifndef IBSM_FABMAP_LAYOUT_H
#define IBSM_FABMAP_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/fabric.h"

/* The switches and their cables. */
struct fm_graph {
	size_t n;			/* switches */
	int32_t *node;			/* switch index -> node id */
	int32_t *idx;			/* node id -> switch index, -1 */
	uint32_t *hosts;		/* CA/router ports cabled to each */
	/* distinct neighbours (parallel cables once), CSR */
	uint32_t *off;			/* n + 1 */
	uint32_t *adj;
	size_t n_edges;			/* distinct switch pairs */
};

int fm_graph_build(const struct fabric *f, struct fm_graph *g);
void fm_graph_free(struct fm_graph *g);

enum fm_kind {
	FM_TIERS,
	FM_GRID,
	FM_FORCE,
};

struct fm_layout {
	enum fm_kind kind;
	double *x, *y;			/* per switch */
	double width, height;		/* of the drawing, margins included */
	double radius;			/* of a switch's mark */
	/* FM_TIERS: the tiers' names at the left, in a font of label_size
	 * (user units, readable once the drawing is scaled to a screen) */
	unsigned tiers;
	double label_size;
	int *tier;			/* per switch */
	/* FM_GRID: dims dimensions of sizes size[], coordinates
	 * coord[3 * i + d] of switch i */
	unsigned dims;
	unsigned size[3];
	bool torus;
	int *coord;
};

/* Lay out graph `g`: 0 or -ENOMEM. */
int fm_layout_compute(const struct fm_graph *g, struct fm_layout *l);
void fm_layout_free(struct fm_layout *l);

/* The parts, for the unit tests: 0 when the structure was found,
 * -ENOENT when the graph does not have it, -ENOMEM. */
int fm_layout_tiers(const struct fm_graph *g, struct fm_layout *l);
int fm_layout_grid(const struct fm_graph *g, struct fm_layout *l);
int fm_layout_force(const struct fm_graph *g, struct fm_layout *l);

/* The most switches the grid search and the force layout take on. */
#define FM_MAX_GRID_SWITCHES	4096
#define FM_FORCE_ITERATIONS	250
/* Up to this many switches the force layout's springs are
 * Fruchterman-Reingold's, beyond Eades' (logarithmic). */
#define FM_FORCE_FR_MAX		256
/* Up to this many switches the map names each (room made for it). */
#define FM_LABEL_SWITCHES	64

#endif /* IBSM_FABMAP_LAYOUT_H */
