/*
 * fabric_page.c - the fabric map (fabmap/) at /fabric: the model in
 * force, the open health findings, the routed load per cable
 * (routing_report_port_loads() on the tables in force) and the counters,
 * rendered into one self-contained HTML page on the loop thread.  The
 * load pass is O(switches x LIDs): a page view, not a scrape, pays it,
 * once per METRICS_CACHE_S at most.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabmap/fabmap.h"
#include "health/findings.h"
#include "routing/report.h"
#include "sm/health/internal.h"
#include "sm/metrics/metrics.h"
#include "sm/perf/perf.h"
#include "sm/sm.h"

int metrics_fabric_page(struct sm *sm, char **out, size_t *len)
{
	struct fabmap_input in = { .f = &sm->fabric, .now = ev_time() };
	struct fabmap_buf b = { 0 };
	struct hf_finding *fs = NULL;
	struct routing_report rep;
	uint64_t *loads = NULL;
	int rc;

	*out = NULL;
	*len = 0;
	if (!sm->fabric.n_nodes)
		return -ENODATA;
	if (sm->health && hf_set_count(&sm->health->findings)) {
		size_t n = hf_set_count(&sm->health->findings);

		fs = malloc(n * sizeof(*fs));
		if (!fs)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			fs[i] = *hf_set_at(&sm->health->findings, i);
		in.findings = fs;
		in.n_findings = n;
	}
	if (sm->routes.lft && sm->routes.n_nodes == sm->fabric.n_nodes) {
		loads = calloc(routing_port_slots(&sm->fabric) + 1,
			       sizeof(*loads));
		if (loads && routing_report_port_loads(&sm->fabric, &sm->routes,
						       &rep, loads) == 0) {
			in.loads = loads;
			in.load_ideal = rep.load_mean;
		}
	}
	in.counters = perf_store(sm->perf);
	rc = fabmap_render(&in, FABMAP_HTML, &b);
	free(loads);
	free(fs);
	if (rc < 0 || b.failed) {
		fabmap_buf_free(&b);
		return rc < 0 ? rc : -ENOMEM;
	}
	*out = b.data;
	*len = b.len;
	return 0;
}
