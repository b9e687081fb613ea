/*
 * fabric_map.c - the daemon's fabric map (see fabric_map.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "routing/report.h"
#include "sm/fabric_map.h"
#include "sm/health/internal.h"
#include "sm/perf/perf.h"
#include "sm/sm.h"

/* The loads of the last map and what they were computed for. */
static struct {
	uint64_t gen;			/* sm->fabric.gen */
	const void *lft;		/* sm->routes.lft */
	size_t n_nodes;
	uint64_t *loads;
	double ideal;
} kept;

void sm_fabric_map_free(void)
{
	free(kept.loads);
	memset(&kept, 0, sizeof(kept));
}

/* The loads of the tables in force: kept, or computed anew.  NULL when
 * there are no tables (or no memory). */
static const uint64_t *loads_of(struct sm *sm, double *ideal)
{
	const struct fabric *f = &sm->fabric;
	struct routing_report rep;
	uint64_t *l;

	if (!sm->routes.lft || sm->routes.n_nodes != f->n_nodes)
		return NULL;
	if (kept.loads && kept.gen == f->gen &&
	    kept.lft == (const void *)sm->routes.lft &&
	    kept.n_nodes == f->n_nodes) {
		*ideal = kept.ideal;
		return kept.loads;
	}
	sm_fabric_map_free();
	l = calloc(routing_port_slots(f) + 1, sizeof(*l));
	if (!l || routing_report_port_loads(f, &sm->routes, &rep, l) < 0) {
		free(l);
		return NULL;
	}
	kept = (typeof(kept)){ .gen = f->gen,
			       .lft = (const void *)sm->routes.lft,
			       .n_nodes = f->n_nodes, .loads = l,
			       .ideal = rep.load_mean };
	*ideal = rep.load_mean;
	return l;
}

int sm_fabric_map(struct sm *sm, enum fabmap_format fmt,
		  const struct pc_store *counters, struct fabmap_buf *out)
{
	const struct hf_set *fs = sm->health ? &sm->health->findings : NULL;
	struct fabmap_input in = {
		.f = &sm->fabric,
		.findings = fs && hf_set_count(fs) ? hf_set_at(fs, 0) : NULL,
		.n_findings = fs ? hf_set_count(fs) : 0,
		.counters = counters ? counters : perf_store(sm->perf),
		.title = "ibsm fabric map",
		.now = (double)time(NULL),
	};

	in.loads = loads_of(sm, &in.load_ideal);
	return fabmap_render(&in, fmt, out);
}
