/*
 * cmd_status.c - the control socket's status and sms: the SM's state,
 * sweeps, counts and counters, and every SM it knows (read from the
 * model and the SM's own state on the loop).
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>

#include "partitions/partitions.h"
#include "sm/ctl/ctl.h"
#include "sm/ctl/ctl_int.h"
#include "sm/ha/sync.h"
#include "sm/mcast/mcast.h"
#include "sm/mcast/mft.h"
#include "sm/perf/perf.h"
#include "sm/sm.h"

/*
 * The master this SM follows (a standby, or one discovering after it
 * lost it: 0 otherwise) and the standby's copy of the master's SA state
 * (sm/ha/sync.c): when its last complete round ended, what it holds and
 * how many records the checks dropped.  "standby_copy none" when no
 * copy was ever started (a master that never stood by).
 */
static void status_standby(const struct sm *sm, struct ctl_answer *a)
{
	struct standby_sync_info si;
	bool following = sm->state != SM_MASTER && sm->master_guid;

	ctl_line_add(a, "master_guid 0x%016" PRIx64, following ?
		     sm->master_guid : sm->state == SM_MASTER ? sm->port_guid : 0);
	ctl_line_add(a, "master_lid %u", following ? sm->master_lid :
		     sm->state == SM_MASTER ? sm_local_lid(sm) : 0);
	if (!standby_sync_info(sm, &si)) {
		ctl_line_add(a, "standby_copy none");
		return;
	}
	ctl_line_add(a, "standby_copy %s", si.have ? (si.running ? "current" :
		     "kept") : si.running ? "fetching" : "none");
	if (si.have)
		ctl_line_add(a, "standby_copy_age_s %.3f", ev_time() - si.at);
	else
		ctl_line_add(a, "standby_copy_age_s none");
	ctl_line_add(a, "standby_copy_from_lid %u", si.from_lid);
	ctl_line_add(a, "standby_copy_lids %zu", si.lids);
	ctl_line_add(a, "standby_copy_group_members %zu", si.members);
	ctl_line_add(a, "standby_copy_services %zu", si.services);
	ctl_line_add(a, "standby_copy_subscriptions %zu", si.subscriptions);
	ctl_line_add(a, "standby_copy_dropped %" PRIu64, si.dropped);
	ctl_line_add(a, "standby_copy_over_caps %" PRIu64, si.over);
	ctl_line_add(a, "standby_copy_rounds %u", si.rounds);
	ctl_line_add(a, "standby_copy_failures %u", si.failures);
}

int ctl_cmd_status(struct sm *sm, struct ctl_answer *a)
{
	struct fabric_counts c;
	bool mft_busy = false;
	const struct mft_stats *ms = mft_stats(sm, &mft_busy);

	fabric_count(&sm->fabric, &c);
	ctl_line_add(a, "state %s", sm_state_name(sm->state));
	ctl_line_add(a, "priority %u", sm->cfg.sm_priority);
	ctl_line_add(a, "port_guid 0x%016" PRIx64, sm->port_guid);
	/* The election (sm/ha/state.c): whom we stand by for, and why. */
	if (sm->state == SM_MASTER)
		ctl_line_add(a, "master self");
	else if (sm->master_guid)
		ctl_line_add(a, "master 0x%016" PRIx64 " lid %u priority %u",
			     sm->master_guid, sm->master_lid,
			     sm->master_priority);
	else
		ctl_line_add(a, "master none");
	ctl_line_add(a, "act_count %u", sm->act_count);
	ctl_line_add(a, "last_transition %s", sm->last_transition[0] ?
		     sm->last_transition : "none");
	/* Our port's LID: as our sweep assigned it, or (a standby, which
	 * does not sweep) as the port holds it. */
	ctl_line_add(a, "sm_lid %u", sm_local_lid(sm) ? sm_local_lid(sm) :
		     sm->port_lid);
	/* Up: brought up by our sweep, or a standby's master answers. */
	ctl_line_add(a, "subnet_up %s", sm->subnet_up ||
		     (sm->state == SM_STANDBY && sm->master_guid &&
		      !sm->poll_misses) ? "yes" : "no");
	status_standby(sm, a);
	ctl_line_add(a, "sweeping %s", sm->sweep ? "heavy" :
		     sm->light ? "light" : "none");
	ctl_line_add(a, "heavy_sweeps %u", sm->stats.heavy_sweeps);
	ctl_line_add(a, "light_sweeps %u", sm->stats.light_sweeps);
	ctl_line_add(a, "failed_sweeps %u", sm->failed_sweeps);
	/* The last heavy sweep that ended: how long ago, its length. */
	if (sm->stats.last_heavy_end > 0) {
		ctl_line_add(a, "last_heavy_sweep %s", sm->stats.last_heavy_ok ?
			     "done" : "failed");
		ctl_line_add(a, "last_heavy_sweep_ago_s %.3f",
			     ev_time() - sm->stats.last_heavy_end);
		ctl_line_add(a, "last_heavy_sweep_s %.3f",
			     sm->stats.last_heavy_seconds);
	} else {
		ctl_line_add(a, "last_heavy_sweep none");
	}
	ctl_line_add(a, "uptime_s %.3f", sm->stats.started > 0 ?
		     ev_time() - sm->stats.started : 0.);
	ctl_line_add(a, "first_up_s %.3f", sm->stats.first_up_seconds);
	ctl_line_add(a, "switches %zu", c.switches);
	ctl_line_add(a, "cas %zu", c.cas);
	ctl_line_add(a, "routers %zu", c.routers);
	ctl_line_add(a, "ports %zu", c.ports);
	ctl_line_add(a, "links %zu", c.links);
	ctl_line_add(a, "max_lid %u", sm->fabric.max_lid);
	ctl_line_add(a, "excluded_nodes %u", sm->n_excluded);
	ctl_line_add(a, "partitions %zu", sm->parts ? sm->parts->n_parts : 0);
	ctl_line_add(a, "mcast_groups %zu", sm->mc ? mc_table_count(sm->mc) : 0);
	ctl_line_add(a, "mcast_mlids %zu",
		     sm->mc ? mc_table_mlids_used(sm->mc) : 0);
	ctl_line_add(a, "mft_updates %u", ms ? ms->updates : 0);
	ctl_line_add(a, "mft_sets %u", ms ? ms->sets : 0);
	ctl_line_add(a, "mft_busy %s", mft_busy ? "yes" : "no");
	ctl_line_add(a, "traps %u", sm->stats.traps);
	ctl_line_add(a, "traps_rejected %u", sm->stats.traps_rejected);
	ctl_line_add(a, "traps_limited %u", sm->stats.traps_limited);
	ctl_line_add(a, "trap_sweeps %u", sm->stats.trap_sweeps);
	ctl_line_add(a, "quick_sweeps %u", sm->stats.quick_sweeps);
	ctl_line_add(a, "foreign_sm_ports %u", sm->stats.foreign_sm_ports);
	perf_ctl_status(sm, a);
	if (sm->engine) {
		const struct mad_engine_stats *st = mad_engine_stats(sm->engine);

		ctl_line_add(a, "mads_sent %" PRIu64, st->sent);
		ctl_line_add(a, "smps_sent %" PRIu64, st->smps_sent);
		ctl_line_add(a, "smps_dr %" PRIu64, st->smps_sent - st->smps_lid);
		ctl_line_add(a, "smps_lid_routed %" PRIu64, st->smps_lid);
		ctl_line_add(a, "smp_lid_fallbacks %" PRIu64, st->lid_fallbacks);
		ctl_line_add(a, "mads_resent %" PRIu64, st->resends);
		ctl_line_add(a, "mad_timeouts %" PRIu64, st->timeouts);
		ctl_line_add(a, "smp_window %u", st->window);
		ctl_line_add(a, "smp_window_range %u-%u", st->window_low,
			     st->window_high);
		ctl_line_add(a, "smp_window_cuts %" PRIu64, st->window_cuts);
		ctl_line_add(a, "smp_dest_waits %" PRIu64, st->dest_waits);
		ctl_line_add(a, "smp_dest_cuts %" PRIu64, st->dest_cuts);
		ctl_line_add(a, "smp_dests_throttled %u",
			     mad_engine_dests_throttled(sm->engine));
	}
	ctl_line_add(a, "log_level %s", sm->cfg.log_level <= LOG_LVL_DEBUG ?
		     ctl_level_names[sm->cfg.log_level] : "?");
	return ctl_finish(a, true, "%s", "");
}

/*
 * sms: this SM and every other SM it heard from (SMInfo answers to its
 * Gets, polls and Sets from them: sm/ha/state.c), one line each, with the
 * seconds since it was last heard from.
 */
int ctl_cmd_sms(struct sm *sm, struct ctl_answer *a)
{
	ev_tstamp now = ev_now(sm->loop);
	unsigned n = 1;

	ctl_line_add(a, "# guid lid priority state act_count heard_s");
	ctl_line_add(a, "0x%016" PRIx64 " %u %u %s %u self", sm->port_guid,
		     sm_local_lid(sm) ? sm_local_lid(sm) : sm->port_lid,
		     sm->cfg.sm_priority, sm_state_name(sm->state),
		     sm->act_count);
	for (unsigned i = 0; i < SM_MAX_REMOTE; i++) {
		const struct sm_remote *r = &sm->remotes[i];

		if (!r->guid)
			continue;
		ctl_line_add(a, "0x%016" PRIx64 " %u %u %s %u %.1f", r->guid,
			     r->lid, r->priority,
			     sm_state_name((enum sm_state)r->state),
			     r->act_count, now - r->seen);
		n++;
	}
	sm_rogue_expire(sm);
	for (unsigned i = 0; i < SM_MAX_ROGUE; i++) {
		const struct sm_rogue *r = &sm->rogues[i];
		struct rogue_where w;
		char where[120] = "";

		if (!r->guid)
			continue;
		if (sm_rogue_where(&sm->fabric, r->guid, &w) &&
		    w.peer_node != FAB_NONE)
			snprintf(where, sizeof(where), " behind 0x%016" PRIx64
				 "[%u]", fabric_node(&sm->fabric,
						     w.peer_node)->guid,
				 w.peer_port);
		ctl_line_add(a, "0x%016" PRIx64 " %u %u %s - %.1f untrusted: "
			     "another SM_Key (%u SMInfo, %u Sets ignored)%s",
			     r->guid, r->lid, r->priority,
			     sm_state_name((enum sm_state)r->state),
			     now - r->seen, r->heard, r->sets, where);
		n++;
	}
	return ctl_finish(a, true, "%u SMs", n);
}
