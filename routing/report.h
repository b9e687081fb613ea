/*
 * report.h - the quality of a routing result.
 *
 * Traffic model: every CA/router port that has a LID and an up link to a
 * switch sends one route to every CA/router LID (all-to-all, every LID of
 * an LMC range).  A route's load counts on every directed inter-switch
 * link (channel) it crosses.  ideal = total load / channels that carry
 * any load; ratio = max channel load / ideal (1.0: perfectly even).
 * Hop stretch compares each route's switch-to-switch hops with the
 * shortest path between the same two switches over the links that are up.
 *
 * Pure: no I/O, no logging.  The caller measures time and memory and
 * stores them in the report before formatting it.
 */
#ifndef IBSM_ROUTING_REPORT_H
#define IBSM_ROUTING_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "routing/routing.h"
#include "routing/verify.h"

struct routing_report {
	/* what was routed */
	const char *engine;		/* r->engine, or "" */
	char summary[320];		/* r->summary */
	char fallback[256];		/* r->fallback: engines that failed */
	size_t switches, ports;		/* switches; CA/router source ports */
	size_t dest_lids;		/* CA/router LIDs (destinations) */

	/* all-to-all load per channel */
	uint64_t routes;		/* (source port, destination LID) routes delivered */
	uint64_t channels;		/* directed inter-switch links up */
	uint64_t channels_used;		/* ... carrying load */
	uint64_t load_total;		/* sum of channel loads */
	uint64_t load_max;
	double load_mean;		/* load_total / channels_used */
	double ratio;			/* load_max / load_mean (1.0 = ideal) */
	/* the busiest channel (the first with load_max, in node and port
	 * order): its switch and port, the switch at its far end and that
	 * switch's port, by GUID and node description; busiest_guid 0 when
	 * no channel has load */
	uint64_t busiest_guid, busiest_peer_guid;
	uint8_t busiest_port, busiest_peer_port;
	char busiest_desc[65], busiest_peer_desc[65];

	/* hops (switch to switch) against shortest paths, per delivered route */
	bool has_stretch;		/* false: too many switches for the table */
	double hops_mean, shortest_mean;
	double stretch;			/* hops_mean / shortest_mean (1.0 = shortest) */
	unsigned hops_max;
	unsigned extra_max;		/* most hops beyond the shortest of one route */

	/* layers (SLs/VLs) */
	unsigned n_layers;		/* r->n_layers (0: none, every path SL 0) */
	unsigned layers_used;		/* distinct layers of delivered routes */
	/* QoS classes sharing the VLs with the layers (vlsplit_describe()),
	 * and what was reduced to fit (vlsplit_reduced()); "" without QoS.
	 * With the split in force cdg counts per VL (cdg.per_vl), after
	 * the split's SL-to-VL tables on each link's VLCap. */
	char qos[320];
	char qos_reduced[320];
	unsigned n_vls;			/* r->n_vls with a per-hop VL map, else 0
					 * (cdg: per VL then) */

	/* the verifier on the same tables */
	struct routing_check check;
	/* channel dependencies per layer (routing_check_cdg); cycles are a
	 * failure when cdg_required (the routes claim deadlock freedom) */
	struct routing_cdg cdg;
	bool cdg_required;

	/* LMC > 0: pairs of LIDs of one destination port's range, per
	 * source CA/router port, and those whose paths from that source
	 * share an inter-switch channel (routing_report_lmc); lmc_skipped:
	 * the fabric was too large to count */
	uint64_t lmc_pairs, lmc_shared;
	bool lmc_skipped;

	/* measured by the caller; < 0: not measured */
	double route_seconds;
	long peak_rss_kib;
};

/*
 * Fill `rep` for the tables `r` on fabric `f` (LIDs assigned).  Runs the
 * verifier (routing_check) and the dependency check (routing_check_cdg)
 * too.  Cost O(switches x LIDs) plus, for the
 * stretch, a breadth-first search per switch (skipped above
 * REPORT_MAX_STRETCH_SWITCHES switches).  0 or -ENOMEM.
 */
#define REPORT_MAX_STRETCH_SWITCHES	8192
int routing_report_compute(const struct fabric *f,
			   const struct routing_result *r,
			   struct routing_report *rep);

/* The LMC path-sharing counts of rep (report_lmc.c; called by
 * routing_report_compute()).  0 or -ENOMEM. */
int routing_report_lmc(const struct fabric *f, const struct routing_result *r,
		       struct routing_report *rep);

/*
 * Only the all-to-all load of `rep` (routes, channels, load_*, ratio,
 * busiest_*; the rest zero), computed as routing_report_compute() does:
 * the figure the daemon logs for the tables it programs is the one the
 * report shows for them.  Cost O(switches x LIDs).  0 or -ENOMEM.
 */
int routing_report_load(const struct fabric *f,
			const struct routing_result *r,
			struct routing_report *rep);

/*
 * routing_report_load() and each channel's load: loads[] has
 * routing_port_slots(f) entries, port p of node i at the slot
 * sum over nodes j < i of (num_ports + 1), plus p; it is zeroed here and
 * holds the routes crossing each switch port towards the switch at its
 * far end (0 for every other port).  0 or -ENOMEM.
 */
size_t routing_port_slots(const struct fabric *f);
int routing_report_port_loads(const struct fabric *f,
			      const struct routing_result *r,
			      struct routing_report *rep, uint64_t *loads);

/*
 * The busiest channel as text: 0xGUID "description" port P -> 0xGUID
 * "description" port Q, N routes (always NUL-terminated; "none" when no
 * channel has load).  Returns what snprintf returns.
 */
int routing_report_busiest(const struct routing_report *rep, char *buf,
			   size_t len);

/*
 * Whether the tables claim deadlock freedom, so that a cycle in a layer's
 * channel dependency graph is an error: they have layers, or they come
 * from an engine that is deadlock-free by construction (updn, dnup,
 * ftree on a fat tree, dfsssp).  minhop makes no such claim.
 */
bool routing_claims_deadlock_free(const struct routing_result *r);

/* Every check passed: every route delivered, no loops, no misroutes, and
 * no dependency cycle when the routes claim deadlock freedom. */
bool routing_report_ok(const struct routing_report *rep);

/*
 * Format the report into buf (always NUL-terminated when len > 0) as
 * readable lines or as one JSON object, one member per line (the control
 * socket carries it line by line).  Return
 * the length the whole text needs, like snprintf.
 */
size_t routing_report_text(const struct routing_report *rep, char *buf,
			   size_t len);
size_t routing_report_json(const struct routing_report *rep, char *buf,
			   size_t len);

#endif /* IBSM_ROUTING_REPORT_H */
