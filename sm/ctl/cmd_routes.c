/*
 * cmd_routes.c - the control socket's routes report and routes loads:
 * the quality and the per-channel load of the routes in force
 * (routing/report.h), computed on the loop on demand.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/report.h"
#include "sm/ctl/ctl.h"
#include "sm/ctl/ctl_int.h"
#include "sm/sm.h"

/*
 * routes report: the quality of the tables in force (routing/report.h),
 * one line of the report per answer line.  Computed on the loop on
 * demand: one pass over switches x LIDs (milliseconds on a thousand
 * hosts, about a second on the largest fabrics), for root only.
 */
int ctl_cmd_routes_report(struct sm *sm, bool json, struct ctl_answer *a)
{
	struct routing_report rep;
	char *text, *line, *save = NULL;
	size_t len;
	int rc;

	if (!sm->routes.lft || sm->routes.n_nodes != sm->fabric.n_nodes)
		return ctl_finish(a, false, "no routes yet: no sweep has"
				  " completed");
	rc = routing_report_compute(&sm->fabric, &sm->routes, &rep);
	if (rc < 0)
		return ctl_finish(a, false, "report: %s", strerror(-rc));
	len = json ? routing_report_json(&rep, NULL, 0)
		   : routing_report_text(&rep, NULL, 0);
	text = malloc(len + 1);
	if (!text)
		return ctl_finish(a, false, "report: out of memory");
	if (json)
		routing_report_json(&rep, text, len + 1);
	else
		routing_report_text(&rep, text, len + 1);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		ctl_line_add(a, "%s", line);
	free(text);
	return ctl_finish(a, true, "%s", "");
}

/*
 * routes loads: the all-to-all load of the tables in force per channel
 * (routing_report_port_loads), for the fabric map: "ideal X" (the mean
 * load of the channels used), then per switch "0xGUID PORT:LOAD ..." for
 * its ports that carry routes (a switch on several lines when it has
 * more than LOADS_PER_LINE of them; about 150 KiB for the 4,608-host
 * tree).  Same cost as routes report's load part.
 */
#define LOADS_PER_LINE	40	/* " 255:18446744073709551615" < 1024 / 40 */
int ctl_cmd_routes_loads(struct sm *sm, struct ctl_answer *a)
{
	struct routing_report rep;
	uint64_t *loads;
	size_t slot = 0, n = 0;
	int rc;

	if (!sm->routes.lft || sm->routes.n_nodes != sm->fabric.n_nodes)
		return ctl_finish(a, false, "no routes yet: no sweep has"
				  " completed");
	loads = calloc(routing_port_slots(&sm->fabric) + 1, sizeof(*loads));
	if (!loads)
		return ctl_finish(a, false, "loads: out of memory");
	rc = routing_report_port_loads(&sm->fabric, &sm->routes, &rep, loads);
	if (rc < 0) {
		free(loads);
		return ctl_finish(a, false, "loads: %s", strerror(-rc));
	}
	ctl_line_add(a, "ideal %.3f", rep.load_mean);
	for (size_t i = 0; i < sm->fabric.n_nodes; i++) {
		const struct fab_node *nd = &sm->fabric.nodes[i];
		char line[CTL_LINE_OUT];
		size_t o = 0;
		unsigned in_line = 0;

		/* a switch a line, at most LOADS_PER_LINE ports each */
		for (unsigned p = 0; p <= nd->num_ports; p++, slot++) {
			if (!loads[slot])
				continue;
			if (!in_line)
				o = (size_t)snprintf(line, sizeof(line),
						     "0x%016" PRIx64, nd->guid);
			o += (size_t)snprintf(line + o, sizeof(line) - o,
					      " %u:%" PRIu64, p, loads[slot]);
			n++;
			if (++in_line == LOADS_PER_LINE) {
				ctl_line_add(a, "%s", line);
				in_line = 0;
			}
		}
		if (in_line)
			ctl_line_add(a, "%s", line);
	}
	free(loads);
	return ctl_finish(a, true, "%zu channels%s", n, a->full ?
			  " (answer cut)" : "");
}
