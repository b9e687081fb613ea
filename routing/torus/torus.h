/*
 * torus.h - what the torus engine's files share (private to routing/torus/).
 *
 * A 2D or 3D torus or mesh as found in the wiring: every switch gets
 * coordinates, every inter-switch port a direction (dimension d, + or -),
 * and each dimension a size and whether it wraps around (a ring) or not
 * (a line: a mesh).  Missing switches (failed, unplugged) are holes in
 * the grid; missing links are directions no port takes.
 */
#ifndef IBSM_ROUTING_TORUS_H
#define IBSM_ROUTING_TORUS_H

#include <stdbool.h>
#include <stdint.h>

#include "routing/cdgraph.h"

#define TORUS_MAX_DIMS	3
#define TORUS_DIRS	(2 * TORUS_MAX_DIMS)	/* d * 2 + (0: +, 1: -) */
#define TORUS_MAX_PAR	4			/* parallel links kept per direction */

struct torus_dirports {
	uint8_t n;			/* parallel links that way */
	uint8_t port[TORUS_MAX_PAR];
};

struct torus {
	struct rgraph g;		/* switch graph and LID owners */
	unsigned dims;			/* 2 or 3 */
	unsigned size[TORUS_MAX_DIMS];	/* switches along each dimension */
	bool wrap[TORUS_MAX_DIMS];	/* rings (true) or lines (a mesh) */
	uint32_t cells;			/* product of the sizes */
	uint16_t (*coord)[TORUS_MAX_DIMS];	/* per switch index */
	int32_t *at;			/* per cell: switch index, -1: hole */
	struct torus_dirports (*dir)[TORUS_DIRS];	/* per switch */
	uint32_t holes;			/* cells without a switch */
	uint32_t links_missing;		/* grid links that are not up */
};

/*
 * Recognise the switch graph t->g (built by the caller) as a torus or
 * mesh: fills the rest of t.  0; -ENOENT with the reason in why when it
 * is not one; -ENOMEM.
 */
int torus_shape(struct torus *t, char *why, size_t whylen);

/* Check the grid t against torus_config's and lay it out on the first
 * seed found in the fabric (axes, origin, hence datelines): 0, or
 * -ENOENT with the reason; -ENOMEM. */
struct torus_conf;
int torus_conf_apply(struct torus *t, const struct torus_conf *c, char *err,
		     size_t errlen);
void torus_free(struct torus *t);

/* The cell of coordinates c. */
static inline uint32_t torus_cell(const struct torus *t,
				  const uint16_t c[TORUS_MAX_DIMS])
{
	uint32_t x = 0;

	for (unsigned d = t->dims; d-- > 0;)
		x = x * t->size[d] + c[d];
	return x;
}

#endif /* IBSM_ROUTING_TORUS_H */
