/*
 * routing.h - routing engines: pure functions from the fabric model to
 * linear forwarding tables.  No I/O, no logging: an engine reads the
 * model (links, node types, assigned LIDs in fab_port.lid/lmc) and fills
 * one table per switch; the daemon decides what to send.
 */
#ifndef IBSM_ROUTING_ROUTING_H
#define IBSM_ROUTING_ROUTING_H

#include <stddef.h>
#include <stdint.h>

#include "sm/fabric.h"

#define LFT_NO_PATH	0xff	/* LFT entry for an unreachable LID */

/* The LFT of one switch: port[lid] for lid 0..top (port 0 = the switch). */
struct lft {
	uint16_t top;		/* highest LID with an entry */
	uint8_t *port;		/* top + 1 entries; LFT_NO_PATH when unreachable */
};

struct routing_result {
	size_t n_nodes;		/* = fabric n_nodes when computed */
	struct lft *lft;	/* indexed by node id; .port NULL for non-switches */
	const char *engine;	/* name of the engine that produced it */
};

struct routing_engine {
	const char *name;
	/*
	 * Fill `out` (zeroed by the caller) for every switch of `f`.  Returns
	 * 0, or -errno with a one-line reason in err (e.g. -ENOENT "no root
	 * switches found") so the chain can fall back to the next engine.
	 */
	int (*route)(const struct fabric *f, struct routing_result *out,
		     char *err, size_t errlen);
};

/* The engine called `name`, or NULL. */
const struct routing_engine *routing_find(const char *name);

/*
 * Run a comma-separated list of engines ("minhop", "updn,minhop") in order
 * until one succeeds.  Unknown names are an error (-EINVAL, named in err).
 * On success out->engine names the engine that produced the tables.
 */
int routing_run(const char *list, const struct fabric *f,
		struct routing_result *out, char *err, size_t errlen);

void routing_result_free(struct routing_result *r);

#endif /* IBSM_ROUTING_ROUTING_H */
