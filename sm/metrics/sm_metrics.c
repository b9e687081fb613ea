/*
 * sm_metrics.c - the SM's own metric families (ibsm_*): state and
 * election, sweeps and their durations, the MAD engine, the SA, multicast,
 * partitions, routing, health findings, the standby's copy and reloads.
 * Everything here reads counters the SM keeps anyway: a scrape costs a
 * few microseconds of this part.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "health/findings.h"
#include "mad/sa_wire.h"
#include "partitions/partitions.h"
#include "sm/ha/sync.h"
#include "sm/health/internal.h"
#include "sm/mcast/mcast.h"
#include "sm/perf/perf.h"
#include "sm/metrics/metrics.h"
#include "sm/metrics/prom.h"
#include "sm/sa/sa.h"
#include "sm/sm.h"

const double sm_hist_bounds[SM_HIST_BUCKETS] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30
};

/* One series without labels under a family of its own. */
static void one(struct prom *p, const char *name, const char *type,
		const char *help, double v)
{
	prom_family(p, name, type, help);
	prom_dbl(p, name, NULL, v);
}

static void one_u(struct prom *p, const char *name, const char *type,
		  const char *help, uint64_t v)
{
	prom_family(p, name, type, help);
	prom_u64(p, name, NULL, v);
}

static void state(struct sm *sm, struct prom *p)
{
	static const enum sm_state states[] = { SM_NOTACTIVE, SM_DISCOVERING,
						SM_STANDBY, SM_MASTER };
	struct prom_labels l;
	char v[64], g[24];

	prom_family(p, "ibsm_info", "gauge",
		    "ibsm's version and port GUID (always 1)");
	prom_lbl_reset(&l);
	prom_lbl(&l, "version", PACKAGE_VERSION);
	snprintf(g, sizeof(g), "0x%016" PRIx64, sm->port_guid);
	prom_lbl(&l, "port_guid", g);
	prom_u64(p, "ibsm_info", &l, 1);
	prom_family(p, "ibsm_state", "gauge",
		    "SMInfo state of this SM: 1 for the state it is in");
	for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
		prom_lbl_reset(&l);
		snprintf(v, sizeof(v), "%s", sm_state_name(states[i]));
		for (char *c = v; *c; c++)
			*c = (char)(*c >= 'A' && *c <= 'Z' ? *c + 32 : *c);
		prom_lbl(&l, "state", v);
		prom_u64(p, "ibsm_state", &l, sm->state == states[i]);
	}
	one_u(p, "ibsm_priority", "gauge", "SMInfo priority (sm_priority)",
	      sm->cfg.sm_priority);
	one_u(p, "ibsm_sminfo_actcount", "gauge", "SMInfo ActCount",
	      sm->act_count);
	one_u(p, "ibsm_subnet_up", "gauge",
	      "1 when the last heavy sweep brought the subnet up (a standby:"
	      " its master answers)", sm->subnet_up ||
	      (sm->state == SM_STANDBY && sm->master_guid && !sm->poll_misses));
	one_u(p, "ibsm_master_lid", "gauge",
	      "LID of the master SM (this SM's own LID when master; 0: none"
	      " known)", sm->state == SM_MASTER ? sm_local_lid(sm) :
	      sm->master_guid ? sm->master_lid : 0);
	one(p, "ibsm_start_time_seconds", "gauge",
	    "when the SM started (Unix time)", sm->stats.started);
	one(p, "ibsm_first_up_seconds", "gauge",
	    "seconds from entering DISCOVERING to the first SUBNET UP",
	    sm->stats.first_up_seconds);
}

static void sweeps(struct sm *sm, struct prom *p)
{
	static const char *const kinds[SM_SWEEP_KINDS] = { "heavy", "light",
							    "quick" };
	const unsigned n[SM_SWEEP_KINDS] = { sm->stats.heavy_sweeps,
		sm->stats.light_sweeps, sm->stats.quick_sweeps };
	struct prom_labels l;

	prom_family(p, "ibsm_sweeps_total", "counter",
		    "sweeps started, by kind");
	for (int k = 0; k < SM_SWEEP_KINDS; k++) {
		prom_lbl_reset(&l);
		prom_lbl(&l, "kind", kinds[k]);
		prom_u64(p, "ibsm_sweeps_total", &l, n[k]);
	}
	prom_family(p, "ibsm_sweep_duration_seconds", "histogram",
		    "duration of the sweeps that ended, by kind");
	for (int k = 0; k < SM_SWEEP_KINDS; k++) {
		const struct sm_hist *h = &sm->stats.sweep_hist[k];
		uint64_t cum[SM_HIST_BUCKETS], c = 0;

		for (int i = 0; i < SM_HIST_BUCKETS; i++)
			cum[i] = c += h->bucket[i];
		prom_lbl_reset(&l);
		prom_lbl(&l, "kind", kinds[k]);
		prom_histogram(p, "ibsm_sweep_duration_seconds", &l,
			       sm_hist_bounds, cum, SM_HIST_BUCKETS, h->sum,
			       h->count);
	}
	one_u(p, "ibsm_trap_sweeps_total", "counter",
	      "heavy sweeps started by traps", sm->stats.trap_sweeps);
	one_u(p, "ibsm_failed_sweeps", "gauge",
	      "heavy sweeps failed in a row", sm->failed_sweeps);
	one_u(p, "ibsm_last_heavy_sweep_ok", "gauge",
	      "1 when the last heavy sweep that ended succeeded",
	      sm->stats.last_heavy_ok);
	one(p, "ibsm_last_heavy_sweep_end_time_seconds", "gauge",
	    "when the last heavy sweep ended (Unix time; 0: none yet)",
	    sm->stats.last_heavy_end);
	one_u(p, "ibsm_traps_total", "counter", "trap MADs received",
	      sm->stats.traps);
	one_u(p, "ibsm_traps_rejected_total", "counter",
	      "traps refused (authentication or policy)",
	      sm->stats.traps_rejected);
	one_u(p, "ibsm_traps_limited_total", "counter",
	      "traps over their source's rate", sm->stats.traps_limited);
	one_u(p, "ibsm_excluded_nodes", "gauge",
	      "nodes excluded for not acknowledging their Sets",
	      sm->n_excluded);
}

static void engine(struct sm *sm, struct prom *p)
{
	const struct mad_engine_stats *st;

	if (!sm->engine)
		return;
	st = mad_engine_stats(sm->engine);
	one_u(p, "ibsm_mads_sent_total", "counter",
	      "MADs handed to the transport (SMPs, SA answers, PMA queries)",
	      st->sent);
	one_u(p, "ibsm_smps_sent_total", "counter", "SMPs sent (with re-sends)",
	      st->smps_sent);
	one_u(p, "ibsm_smps_lid_routed_total", "counter",
	      "SMPs sent LID-routed", st->smps_lid);
	one_u(p, "ibsm_mad_resends_total", "counter",
	      "requests sent again after a timeout", st->resends);
	one_u(p, "ibsm_mad_timeouts_total", "counter",
	      "requests that failed for good (every try lost)", st->timeouts);
	one_u(p, "ibsm_mads_answered_total", "counter",
	      "answers matched to a request", st->answered);
	one_u(p, "ibsm_mads_dropped_total", "counter",
	      "received MADs refused by validation", st->dropped);
	one_u(p, "ibsm_smp_window", "gauge", "the adaptive SMP window now",
	      st->window);
	one_u(p, "ibsm_smp_window_min", "gauge",
	      "the least the SMP window has been", st->window_low);
	one_u(p, "ibsm_smp_window_max", "gauge",
	      "the most the SMP window has been", st->window_high);
	one_u(p, "ibsm_smp_window_cuts_total", "counter",
	      "times the SMP window was halved", st->window_cuts);
	one_u(p, "ibsm_smp_dest_waits_total", "counter",
	      "SMPs held back by the per-destination limit", st->dest_waits);
}

/* "PathRecord", "unknown_0x1234" ... */
static const char *attr_name(uint16_t id, char *buf, size_t len)
{
	const struct sa_attr *a = id == 0xffff ? NULL : sa_attr_find(id);

	if (a)
		return a->name;
	snprintf(buf, len, id == 0xffff ? "other" : "unknown_0x%04x", id);
	return buf;
}

static const char *status_name(uint16_t st, char *buf, size_t len)
{
	switch (st) {
	case 0: return "ok";
	case MAD_STATUS_BUSY: return "busy";
	case MAD_STATUS_BAD_VERSION: return "bad_version";
	case MAD_STATUS_METHOD_UNSUPP: return "method_unsupported";
	case MAD_STATUS_ATTR_UNSUPP: return "attribute_unsupported";
	case MAD_STATUS_INVALID_FIELD: return "invalid_field";
	case SA_STATUS_NO_RESOURCES: return "no_resources";
	case SA_STATUS_REQ_INVALID: return "request_invalid";
	case SA_STATUS_NO_RECORDS: return "no_records";
	case SA_STATUS_TOO_MANY_RECORDS: return "too_many_records";
	case SA_STATUS_INVALID_GID: return "invalid_gid";
	case SA_STATUS_INSUF_COMPONENTS: return "insufficient_components";
	case SA_STATUS_DENIED: return "denied";
	case 0xffff: return "other";
	}
	snprintf(buf, len, "0x%04x", st);
	return buf;
}

static void sa(struct sm *sm, struct prom *p)
{
	const struct sa_answer_count *c;
	uint64_t req, dropped;
	size_t n = sa_answer_counts(sm, &c, &req, &dropped);
	struct prom_labels l;
	char ab[32], sb[16];

	one_u(p, "ibsm_sa_requests_total", "counter", "SA requests received",
	      req);
	one_u(p, "ibsm_sa_requests_dropped_total", "counter",
	      "SA requests too short or malformed to answer", dropped);
	one_u(p, "ibsm_sa_requests_bad_key_total", "counter",
	      "SA requests dropped unanswered: a non-zero SM_Key that is "
	      "not sa_key", sa_bad_key_drops(sm));
	prom_family(p, "ibsm_sa_answers_total", "counter",
		    "SA answers by attribute and status (busy: no job slot"
		    " or not master; no_resources: over the work budget or"
		    " the byte caps)");
	for (size_t i = 0; i < n; i++) {
		prom_lbl_reset(&l);
		prom_lbl(&l, "attribute", attr_name(c[i].attr_id, ab,
						     sizeof(ab)));
		prom_lbl(&l, "status", status_name(c[i].status, sb,
						    sizeof(sb)));
		prom_u64(p, "ibsm_sa_answers_total", &l, c[i].n);
	}
}

static void groups(struct sm *sm, struct prom *p)
{
	size_t members = 0, ng = sm->mc ? mc_table_count(sm->mc) : 0;

	for (size_t i = 0; i < ng; i++)
		members += mc_table_at(sm->mc, i)->n_members;
	one_u(p, "ibsm_multicast_groups", "gauge", "multicast groups", ng);
	one_u(p, "ibsm_multicast_members", "gauge",
	      "multicast group members (ports x groups)", members);
	one_u(p, "ibsm_multicast_mlids", "gauge", "multicast LIDs in use",
	      sm->mc ? mc_table_mlids_used(sm->mc) : 0);
	one_u(p, "ibsm_partitions", "gauge", "partitions in force",
	      sm->parts ? sm->parts->n_parts : 0);
}

static void fabric(struct sm *sm, struct prom *p)
{
	struct fabric_counts c;
	struct prom_labels l;
	const char *types[] = { "switch", "ca", "router" };

	fabric_count(&sm->fabric, &c);
	const size_t n[] = { c.switches, c.cas, c.routers };

	prom_family(p, "ibsm_fabric_nodes", "gauge",
		    "nodes of the model in force, by type");
	for (int i = 0; i < 3; i++) {
		prom_lbl_reset(&l);
		prom_lbl(&l, "type", types[i]);
		prom_u64(p, "ibsm_fabric_nodes", &l, n[i]);
	}
	one_u(p, "ibsm_fabric_links", "gauge", "links of the model in force",
	      c.links);
	one_u(p, "ibsm_fabric_max_lid", "gauge", "highest LID assigned",
	      sm->fabric.max_lid);
}

static void routing(struct sm *sm, struct prom *p)
{
	struct prom_labels l;
	const struct sm_route_load *rl = &sm->route_load;

	prom_family(p, "ibsm_routing_info", "gauge",
		    "the routing engine of the tables in force (always 1)");
	prom_lbl_reset(&l);
	prom_lbl(&l, "engine", sm->routes.engine ? sm->routes.engine : "none");
	prom_u64(p, "ibsm_routing_info", &l, 1);
	one_u(p, "ibsm_routing_runs_total", "counter",
	      "routing computations", sm->route_runs);
	if (!rl->valid)
		return;
	one_u(p, "ibsm_routing_max_link_load", "gauge",
	      "all-to-all routes on the busiest inter-switch link",
	      rl->max);
	one(p, "ibsm_routing_ideal_link_load", "gauge",
	    "all-to-all routes per used inter-switch link, evenly spread",
	    rl->mean);
	one(p, "ibsm_routing_load_ratio", "gauge",
	    "max link load / ideal (1: perfectly even)", rl->ratio);
}

static void health(struct sm *sm, struct prom *p)
{
	unsigned by[HF_N_KINDS][HF_N_SEVERITIES];
	unsigned sev[HF_N_SEVERITIES] = { 0 };
	struct prom_labels l;

	memset(by, 0, sizeof(by));
	if (sm->health) {
		const struct hf_set *s = &sm->health->findings;

		for (size_t i = 0; i < hf_set_count(s); i++) {
			const struct hf_finding *f = hf_set_at(s, i);

			if ((unsigned)f->kind < HF_N_KINDS &&
			    (unsigned)f->severity < HF_N_SEVERITIES) {
				by[f->kind][f->severity]++;
				sev[f->severity]++;
			}
		}
	}
	prom_family(p, "ibsm_health_findings", "gauge",
		    "open health findings, by severity");
	for (int s = 0; s < HF_N_SEVERITIES; s++) {
		prom_lbl_reset(&l);
		prom_lbl(&l, "severity", hf_severity_name((enum hf_severity)s));
		prom_u64(p, "ibsm_health_findings", &l, sev[s]);
	}
	prom_family(p, "ibsm_health_findings_by_kind", "gauge",
		    "open health findings, by kind and severity (kinds with"
		    " findings only)");
	for (int k = 0; k < HF_N_KINDS; k++)
		for (int s = 0; s < HF_N_SEVERITIES; s++) {
			if (!by[k][s])
				continue;
			prom_lbl_reset(&l);
			prom_lbl(&l, "kind", hf_kind_name((enum hf_kind)k));
			prom_lbl(&l, "severity",
				 hf_severity_name((enum hf_severity)s));
			prom_u64(p, "ibsm_health_findings_by_kind", &l,
				 by[k][s]);
		}
}

static void standby(struct sm *sm, struct prom *p)
{
	struct standby_sync_info si;
	struct prom_labels l;

	if (standby_sync_info(sm, &si)) {
		if (si.have)
			one(p, "ibsm_standby_sync_age_seconds", "gauge",
			    "age of the standby's last complete copy of the"
			    " master's SA state", ev_time() - si.at);
		one_u(p, "ibsm_standby_sync_rounds_total", "counter",
		      "complete copies of the master's SA state", si.rounds);
		one_u(p, "ibsm_standby_sync_failures", "gauge",
		      "copies failed in a row", si.failures);
	}
	prom_family(p, "ibsm_config_reloads_total", "counter",
		    "reloads of the -F and -P files (SIGHUP, ibsmctl reload),"
		    " by result");
	prom_lbl_reset(&l);
	prom_lbl(&l, "result", "ok");
	prom_u64(p, "ibsm_config_reloads_total", &l, sm->stats.reloads_ok);
	prom_lbl_reset(&l);
	prom_lbl(&l, "result", "error");
	prom_u64(p, "ibsm_config_reloads_total", &l, sm->stats.reloads_failed);
}

/* The performance manager (absent: perfmgr FALSE, or not master yet). */
static void perfmgr(struct sm *sm, struct prom *p)
{
	const struct perf_stats *ps = sm->perf ? perf_stats(sm->perf) : NULL;

	if (!ps)
		return;
	one_u(p, "ibsm_perfmgr_sweeps_total", "counter",
	      "counter sweeps completed", ps->sweeps);
	one_u(p, "ibsm_perfmgr_mads_total", "counter",
	      "Performance Management MADs sent", ps->mads);
	one_u(p, "ibsm_perfmgr_failed_reads_total", "counter",
	      "port readings that got no answer", ps->failed_reads);
	one_u(p, "ibsm_perfmgr_bad_answers_total", "counter",
	      "PMA answers the decoder refused", ps->bad_answers);
	one_u(p, "ibsm_perfmgr_unresponsive_nodes", "gauge",
	      "nodes whose PMA does not answer", ps->unresponsive);
	one_u(p, "ibsm_perfmgr_last_sweep_ports", "gauge",
	      "ports read by the last counter sweep", ps->last_ports);
	one(p, "ibsm_perfmgr_last_sweep_seconds", "gauge",
	    "duration of the last counter sweep", ps->last_seconds);
}

static void endpoint(struct sm *sm, struct prom *p)
{
	struct metrics_self ms;

	if (!metrics_self(sm, &ms))
		return;
	one_u(p, "ibsm_metrics_requests_total", "counter",
	      "HTTP requests to this endpoint", ms.requests);
	one_u(p, "ibsm_metrics_builds_total", "counter",
	      "/metrics texts built (one per second at most)", ms.builds);
	one(p, "ibsm_metrics_last_build_cpu_seconds", "gauge",
	    "CPU time of the SM's loop to build the previous /metrics text",
	    ms.last_cpu);
	one_u(p, "ibsm_metrics_last_build_bytes", "gauge",
	      "size of the previous /metrics text", ms.last_bytes);
}

void metrics_render_sm(struct sm *sm, struct prom *p)
{
	state(sm, p);
	sweeps(sm, p);
	engine(sm, p);
	sa(sm, p);
	groups(sm, p);
	fabric(sm, p);
	routing(sm, p);
	health(sm, p);
	standby(sm, p);
	perfmgr(sm, p);
	endpoint(sm, p);
}
