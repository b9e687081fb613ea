/*
 * state.c - the SM state machine: its table of events, the sweeps it
 * starts, its timers and signals.  The SM-to-SM protocol
 * (election, polling, handover, the SMInfo agent) is sm/ha/sminfo.c, the
 * trap receiver sm/trap.c.
 *
 * Every decision about what the SM does next is a cell of one table,
 * state x event -> action (fsm[] below); the events come from the queue
 * (sm/event.h, sm/ha/queue.c) that the daemon's other parts post to, and
 * this is the only code that starts a sweep.
 *
 * One sweep at a time: a heavy sweep asked for while a heavy or a light
 * sweep runs sets change_pending, and starts when that sweep ends (a
 * light sweep reads the model a heavy sweep replaces).
 *
 * DISCOVERING, STANDBY and the moves between them and MASTER (IB spec
 * 14.4.1) are decided in sm/ha/sminfo.c, which calls sm_transition().
 * Once a better master is known (entering STANDBY or NOTACTIVE, or a
 * master yielding to DISCOVERING) the SM stands down: the sweep in
 * progress stops sending, no other starts until the election (or a lost
 * master, or a HANDOVER) makes this SM master again.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/ctl/ctl.h"
#include "sm/health/health.h"
#include "sm/mcast/mft.h"
#include "sm/notify.h"
#include "sm/perf/perf.h"
#include "sm/program.h"
#include "sm/quick.h"
#include "sm/sm.h"
#include "sm/ha/fsm.h"
#include "sm/ha/sminfo.h"

static void timers_stop(struct sm *sm, bool at_stop_only);

#define MAX_FAILED_SWEEPS_ONCE	8	/* -o gives up after this many */
#define RESWEEP_DELAY		0.05	/* s, after a failed heavy sweep */


const char *sm_state_name(enum sm_state s)
{
	switch (s) {
	case SM_NOTACTIVE:	return "NOTACTIVE";
	case SM_DISCOVERING:	return "DISCOVERING";
	case SM_STANDBY:	return "STANDBY";
	case SM_MASTER:		return "MASTER";
	}
	return "?";
}

static void set_state(struct sm *sm, enum sm_state s)
{
	if (sm->state == s)
		return;
	log_info("Entering %s state", sm_state_name(s));
	sm->state = s;
}

void sm_heavy_sweep(struct sm *sm)
{
	int rc;

	if (sm->ha.standing_down)
		return;		/* a better master programs the fabric */
	if (sm->sweep || sm->light || sm->quick) {
		sm->ha.change_pending = true;
		return;
	}
	sm->ha.change_pending = false;
	sm->ha.sweep_began = ev_now(sm->loop);
	rc = sweep_heavy_start(sm);
	if (rc < 0) {
		log_err_rc(rc, "ERR 0301: cannot start a heavy sweep");
		sm->exit_code = 1;
		ev_break(sm->loop, EVBREAK_ALL);
	}
}

void sm_heavy_sweep_model(struct sm *sm, struct fabric *f, unsigned smps,
			  double t0)
{
	int rc;

	if (sm->ha.standing_down)
		return;
	if (sm->sweep || sm->light || sm->quick) {
		sm->ha.change_pending = true;
		return;
	}
	sm->ha.change_pending = false;
	/* the quick sweep's reads are part of it, for the pacing */
	sm->ha.sweep_began = ev_now(sm->loop) - (ev_time() - t0);
	rc = sweep_heavy_start_model(sm, f, smps, t0);
	if (rc < 0) {
		log_warn_rc(rc, "ERR 0314: a full heavy sweep: cannot start"
			    " one on the quick sweep's model");
		sm->topo_changed = true;
		sm_heavy_sweep(sm);
	}
}

static void light_timer_arm(struct sm *sm)
{
	ev_timer_stop(sm->loop, &sm->light_timer);
	if (!sm->cfg.sweep_interval || sm->cfg.once)
		return;
	ev_timer_set(&sm->light_timer, sm->cfg.sweep_interval, 0.);
	ev_timer_start(sm->loop, &sm->light_timer);
}

/* Our own port as the last sweep read it: down (no link) or not. */
static bool local_port_down(const struct sm *sm)
{
	const struct fabric *f = &sm->fabric;

	if (f->local_node == FAB_NONE)
		return false;
	const struct fab_node *n = fabric_node(f, f->local_node);
	if (f->local_port > n->num_ports)
		return false;
	const struct fab_port *p = &n->ports[f->local_port];
	return p->valid && pi_port_state(&p->pi) == PORT_STATE_DOWN;
}

static void port_poll_arm(struct sm *sm)
{
	ev_timer_stop(sm->loop, &sm->port_timer);
	ev_timer_set(&sm->port_timer, SM_PORT_POLL, 0.);
	ev_timer_start(sm->loop, &sm->port_timer);
}

/*
 * "SUBNET UP" (code 0330): in the journal with the SM's port, LID and
 * the fabric's size as fields.
 */
static void subnet_up_event(struct sm *sm, const struct fabric_counts *c)
{
	struct log_fields lf = { 0 };

	log_field(&lf, "SM_PORT_GUID=0x%016" PRIx64, sm->port_guid);
	log_field(&lf, "LID=%u", sm_local_lid(sm));
	log_field(&lf, "SWITCHES=%zu", c->switches);
	log_field(&lf, "CAS=%zu", c->cas);
	log_field(&lf, "LINKS=%zu", c->links);
	log_field(&lf, "MAX_LID=%u", sm->fabric.max_lid);
	log_field(&lf, "HEAVY_SWEEPS=%u", sm->stats.heavy_sweeps);
	log_event(LOG_LVL_INFO, 330, &lf, "SUBNET UP");
}

/*
 * A sweep found our own port without a link: a subnet of one node is no
 * subnet.  Like OpenSM ("SM port is down") wait for the link, reading the
 * port's PortInfo every SM_PORT_POLL s, and sweep when it comes up.
 */
static void port_down(struct sm *sm)
{
	const struct fabric *f = &sm->fabric;
	const struct fab_port *p =
		&fabric_node(f, f->local_node)->ports[f->local_port];

	if (!sm->ha.port_down)
		log_err("ERR 0310: SM port %u is down (physical state %u):"
			" waiting for its link", f->local_port,
			pi_phys_state(&p->pi));
	sm->ha.port_down = true;
	set_state(sm, SM_DISCOVERING);
	ev_timer_stop(sm->loop, &sm->light_timer);
	port_poll_arm(sm);
}

static void subnet_up(struct sm *sm)
{
	struct fabric_counts c;

	if (local_port_down(sm)) {
		port_down(sm);
		return;
	}
	bool first = !sm->subnet_up;

	sm->failed_sweeps = 0;
	if (first)
		sm->stats.first_up_seconds = ev_time() -
					     sm->stats.discovering_since;
	sm->subnet_up = true;
	if (sm->state != SM_MASTER) {
		sm_transition(sm, SM_MASTER, 1101, sm->takeover ?
			   "took over: the sweep after the master was lost is done" :
			   "sweep done and no better SM");
		sm->master_since = ev_now(sm->loop);
	}
	sm->takeover = false;
	sm->adopt_lids = false;
	sm->master_lid = 0;
	sm->master_guid = 0;
	fabric_count(&sm->fabric, &c);
	subnet_up_event(sm, &c);
	char line[320];
	const struct mad_engine_stats *st = mad_engine_stats(sm->engine);
	snprintf(line, sizeof(line), "SUBNET UP in %.3f s: %zu switches, %zu CAs,"
		 " %zu ports, %zu links, LIDs 1-%u, SM LID %u, %u heavy sweep(s),"
		 " %" PRIu64 " SMPs sent (%" PRIu64 " re-sent)",
		 sm->stats.first_up_seconds, c.switches, c.cas, c.ports, c.links,
		 sm->fabric.max_lid, sm_local_lid(sm), sm->stats.heavy_sweeps,
		 st->sent, st->resends);
	if (first)
		log_info("%s", line);
	perf_subnet_up(sm);
	if (sm->cfg.summary) {
		printf("%s\n", line);
		fflush(stdout);
	}
	if (sm->cfg.once) {
		/* The MFT Sets of this sweep are answered before we exit. */
		if (!mft_hold_exit(sm))
			ev_break(sm->loop, EVBREAK_ALL);
		return;
	}
	/* Who else is there (14.4.1.2): a better standby gets a handover,
	 * a better master (split fabric joined) makes us stand by. */
	sminfo_query(sm);
	if (sm->state != SM_MASTER)
		return;
	if (sm->ha.change_pending)
		sm_heavy_sweep(sm);
	else
		light_timer_arm(sm);
}

static void sweep_failed(struct sm *sm)
{
	sm->failed_sweeps++;
	if (sm->cfg.once && sm->failed_sweeps >= MAX_FAILED_SWEEPS_ONCE) {
		log_err("ERR 0302: the subnet could not be brought up after %u"
			" heavy sweeps", sm->failed_sweeps);
		log_stderr(LOG_LVL_ERR, "the subnet could not be brought up"
			   " after %u heavy sweeps (see the log)",
			   sm->failed_sweeps);
		sm->exit_code = 1;
		ev_break(sm->loop, EVBREAK_ALL);
		return;
	}
	ev_timer_stop(sm->loop, &sm->retry_timer);
	ev_timer_set(&sm->retry_timer, RESWEEP_DELAY * sm->failed_sweeps, 0.);
	ev_timer_start(sm->loop, &sm->retry_timer);
}

/*
 * Pacing of trap-driven heavy sweeps.  A trap that asks for a sweep
 * waits the hold-off (--trap-holdoff-ms, 200 ms) for the rest of its
 * burst and then sweeps, so one link event is handled in a few hundred
 * ms, and events a second apart each get their own sweep as quickly.
 * Two bounds keep a storm of traps from keeping the SM sweeping:
 *
 *  - duty cycle: a trap sweep starts no sooner than SM_TRAP_DUTY_K times
 *    the last heavy sweep's duration after that sweep ended, so trap
 *    sweeps take at most 1/(K+1) of the time (while K times a sweep is
 *    shorter than the interval);
 *  - backoff: when sweeps follow each other back to back (the trap came
 *    during a heavy sweep or within the hold-off plus the duty-cycle
 *    wait after it), the spacing between trap sweeps doubles, from
 *    SM_TRAP_BACKOFF_MIN up to --trap-sweep-interval (5 s), its
 *    ceiling; a trap that finds the SM idle longer resets it.
 *
 * A continuous storm thus costs a few sweeps in its first seconds (0.25,
 * 0.5, 1, 2, 4 s apart) and then one per interval, as before; no trap
 * waits longer than the interval.
 */
#define SM_TRAP_DUTY_K		3.	/* idle >= K x the last sweep */
#define SM_TRAP_BACKOFF_MIN	0.25	/* s: first step of the backoff */

double sm_trap_wait(const struct sm_trap_pace *p, ev_tstamp now)
{
	double wait = p->holdoff, ceiling = p->holdoff > p->interval ?
					    p->holdoff : p->interval;

	if (p->sweep_ended > p->sweep_began) {
		double d = p->sweep_ended + SM_TRAP_DUTY_K *
			   (p->sweep_ended - p->sweep_began) - now;
		if (d > wait)
			wait = d;
	}
	if (p->last > 0.) {
		double b = p->last + p->backoff - now;
		if (b > wait)
			wait = b;
	}
	return wait < ceiling ? wait : ceiling;
}

bool sm_trap_storm(const struct sm_trap_pace *p, ev_tstamp now, bool sweeping)
{
	if (sweeping)
		return true;
	if (p->sweep_ended <= 0. || p->sweep_ended < p->sweep_began)
		return false;
	return now - p->sweep_ended < p->holdoff + SM_TRAP_DUTY_K *
	       (p->sweep_ended - p->sweep_began);
}

double sm_trap_backoff(const struct sm_trap_pace *p, bool storm)
{
	double b;

	if (!storm)
		return 0.;
	b = p->backoff > 0. ? 2. * p->backoff : SM_TRAP_BACKOFF_MIN;
	return b < p->interval ? b : p->interval;
}

static struct sm_trap_pace trap_pace(const struct sm *sm)
{
	return (struct sm_trap_pace){
		.holdoff = sm_trap_holdoff(sm),
		.interval = sm_trap_sweep_interval(sm),
		.last = sm->ha.last_trap_sweep, .backoff = sm->ha.trap_backoff,
		.sweep_began = sm->ha.sweep_began, .sweep_ended = sm->ha.sweep_ended,
	};
}

/* An accepted trap asks for a heavy sweep: collect the burst first. */
static void trap_holdoff(struct sm *sm)
{
	struct sm_trap_pace p = trap_pace(sm);
	ev_tstamp now = ev_now(sm->loop);

	if (ev_is_active(&sm->trap_timer) || sm->ha.trap_deferred)
		return;
	/* Link losses a quick sweep can read need no long wait for the
	 * rest of a burst: a trap after it costs one more quick read. */
	if (quick_eligible(sm) && p.holdoff > SM_TRAP_QUICK_HOLDOFF)
		p.holdoff = SM_TRAP_QUICK_HOLDOFF;
	sm->ha.trap_storm = sm_trap_storm(&p, now, sm->sweep || sm->quick);
	ev_timer_set(&sm->trap_timer, sm_trap_wait(&p, now), 0.);
	ev_timer_start(sm->loop, &sm->trap_timer);
}

/* A heavy sweep ended: its duration paces the next trap sweep. */
static void sweep_ended(struct sm *sm)
{
	sm->ha.sweep_ended = ev_now(sm->loop);
	if (sm->ha.trap_deferred) {
		sm->ha.trap_deferred = false;
		if (sm->state != SM_STANDBY && sm->state != SM_NOTACTIVE)
			trap_holdoff(sm);
	}
}

/*
 * A better master is known: from now on nothing is programmed (IB spec
 * 14.4.1: only the master configures the subnet).  The sweep in
 * progress sends no more Sets and ends (sm/sweep.c), no sweep starts,
 * nothing that would start one later stays armed.
 */
static void stand_down(struct sm *sm)
{
	if (!sm->ha.standing_down && (sm->sweep || sm->ha.change_pending))
		log_info("a better master is known: the sweep %s is dropped",
			 sm->sweep ? "in progress" : "asked for");
	sm->ha.standing_down = true;
	sm->ha.change_pending = false;
	sm->ha.trap_deferred = false;
	ev_timer_stop(sm->loop, &sm->light_timer);
	ev_timer_stop(sm->loop, &sm->retry_timer);
	ev_timer_stop(sm->loop, &sm->trap_timer);
	ev_timer_stop(sm->loop, &sm->trap_owed_timer);
}

void sm_sweep_to_master(struct sm *sm)
{
	sm->ha.standing_down = false;
	sm_heavy_sweep(sm);
}

/*
 * A sweep ended while we stood down (it was stopped, or it had sent its
 * last Set already): what it found is not applied.  One that yielded as
 * master discovers again now, the election having waited for the sweep.
 */
static void sweep_ended_standing_down(struct sm *sm)
{
	if (sm->state == SM_DISCOVERING && !sm->elect_running)
		sminfo_elect_start(sm);
}

/*
 * The light sweep found ports that name another SM as their master: an
 * SM that was master meanwhile set them (a standby that took over while
 * we could not be reached, a split fabric joined), and may have set LIDs
 * and LFTs as well.  That SM may still think it is master, and may be
 * the better one: its SMInfo is read first (sm/ha/sminfo.c, which
 * yields to a better master), and SM_FOREIGN_WAIT s later, still master,
 * we sweep with nothing trusted (every LFT block sent, directed route).
 * true when the sweep waits.
 */
#define SM_FOREIGN_WAIT		0.5	/* s */

/* Trust nothing we remember of the switches' tables: the next heavy
 * sweep sends every LFT block and SL-to-VL table, by directed route. */
static void distrust_tables(struct sm *sm)
{
	const struct fabric *f = &sm->fabric;

	for (size_t i = 0; i < f->n_nodes; i++) {
		if (f->nodes[i].type != NODE_TYPE_SWITCH)
			continue;
		if (sm->images)
			lft_images_forget(sm->images, f->nodes[i].guid);
		if (sm->sl2vl)
			sl2vl_images_forget(sm->sl2vl, f->nodes[i].guid,
					    f->nodes[i].num_ports);
	}
	sm->topo_changed = true;
}

static bool foreign_ports(struct sm *sm)
{
	uint16_t lid = sm->ha.foreign_lid;

	sm->ha.foreign_lid = 0;
	if (sm->state != SM_MASTER || sm->ha.standing_down)
		return false;
	distrust_tables(sm);
	if (!lid || lid == sm_local_lid(sm) || lid > 0xbfff)
		return false;
	sminfo_query_lid(sm, lid);
	ev_timer_stop(sm->loop, &sm->retry_timer);
	ev_timer_set(&sm->retry_timer, SM_FOREIGN_WAIT, 0.);
	ev_timer_start(sm->loop, &sm->retry_timer);
	return true;
}

void sm_master_claimed(struct sm *sm)
{
	char why[160];

	snprintf(why, sizeof(why), "SM 0x%016" PRIx64 " said it is a better"
		 " master and our sweep found its port: discovering again"
		 " before programming", sm->master_claim);
	sm->master_claim = 0;
	if (sm->state != SM_MASTER)
		return;
	sm_transition(sm, SM_DISCOVERING, 1124, why);
	sm->elect_waits = 0;
}

/* Every state change goes through here with its cause (SM 11xx). */
void sm_transition(struct sm *sm, enum sm_state s, unsigned code,
		   const char *why)
{
	enum sm_state old = sm->state;

	snprintf(sm->last_transition, sizeof(sm->last_transition),
		 "%s -> %s: %s", sm_state_name(old), sm_state_name(s), why);
	log_info("SM %04u: %s", code, sm->last_transition);
	sm_health_state(sm, sm_state_name(old), sm_state_name(s), why);
	if (s == SM_DISCOVERING && old != SM_DISCOVERING)
		sm->stats.discovering_since = ev_time();
	if (old == SM_STANDBY && s != SM_STANDBY)
		sminfo_standby_end(sm);
	/* A master that discovers again does so because a better master
	 * met it (sm/ha/sminfo.c); STANDBY and NOTACTIVE never program.
	 * Leaving STANDBY or NOTACTIVE (the master was lost, HANDOVER,
	 * DISCOVER) is what lets the next sweep program again. */
	if (s == SM_STANDBY || s == SM_NOTACTIVE ||
	    (old == SM_MASTER && s == SM_DISCOVERING))
		stand_down(sm);
	if (s != SM_MASTER)
		sm->master_claim = 0;
	else if (s != old && (s == SM_MASTER || old == SM_STANDBY ||
			      old == SM_NOTACTIVE))
		sm->ha.standing_down = false;
	set_state(sm, s);
	if (s == SM_STANDBY && old != SM_STANDBY) {
		sm->standby_since = ev_now(sm->loop);
		sm->adopt_lids = true;
		ev_timer_stop(sm->loop, &sm->light_timer);
		ev_timer_stop(sm->loop, &sm->trap_timer);
		ev_timer_stop(sm->loop, &sm->trap_owed_timer);
		sm->ha.trap_deferred = false;
		sminfo_standby_begin(sm);
	}
	/* systemd: READY=1 on entering STANDBY, which no event brings. */
	notify_state(sm);
}


/* ------------------------------------------------------------ actions */

/*
 * The actions of the table below.  Each is what one event does in the
 * states whose cells name it; a guard inside one tests a flag of the
 * sweeps (standing_down, port_down, ...), never the state.
 */
static void act_start(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	sm->stats.started = ev_time();
	sm_transition(sm, SM_DISCOVERING, 1100, "started");
	if (sm->cfg.once)
		sm_heavy_sweep(sm);	/* -o: one sweep, no election */
	else
		sminfo_elect_start(sm);
}

/* A heavy sweep ended while the SM neither discovers nor is master. */
static void act_sweep_ended(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	sweep_ended(sm);
}

static void act_sweep_done(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	sweep_ended(sm);
	/* A sweep that ends after we stood down programs nothing more. */
	if (sm->ha.standing_down)
		sweep_ended_standing_down(sm);
	else
		subnet_up(sm);
}

static void act_sweep_failed(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	sweep_ended(sm);
	if (sm->ha.standing_down)
		sweep_ended_standing_down(sm);
	else
		sweep_failed(sm);
}

/* A counter sweep ended: the health glue's checks of the counters. */
static void act_perf_done(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	if (sm->perf_done_hook)
		sm->perf_done_hook(sm);
}

static void act_elect_decide(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	sminfo_elect_decide(sm);
}

static void act_master_lost(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	sminfo_master_lost(sm, "reported lost");
}

/* 14.4.1.2: a standby given the master role takes it now and sweeps; the
 * LIDs ports hold are kept (sm/lid.c). */
static void act_handover(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	ev_timer_stop(sm->loop, &sm->elect_timer);
	sm_transition(sm, SM_MASTER, 1114, "HANDOVER from the master");
	sm->master_since = ev_now(sm->loop);
	sm->master_lid = 0;
	sm->master_guid = 0;
	if (standby_sync_adopt(sm))
		sm->rereg_done = true;
	sm_heavy_sweep(sm);
}

/* A quick sweep found nothing changed: traps that came meanwhile go on. */
static void act_quick_done(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	if (sm->ha.trap_deferred) {
		sm->ha.trap_deferred = false;
		trap_holdoff(sm);
	}
}

static void act_quick_done_idle(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	sm->ha.trap_deferred = false;
}

/* The quick sweep read link losses: the heavy sweep starts from its
 * model (taken). */
static void act_quick_losses(struct sm *sm, struct sm_msg *m)
{
	sm_heavy_sweep_model(sm, m->u.model.f, m->u.model.smps, m->u.model.t0);
}

static void act_quick_change(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	sm->topo_changed = true;
	sm_heavy_sweep(sm);
}

static void act_change(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	ev_timer_stop(sm->loop, &sm->light_timer);
	sm_heavy_sweep(sm);
}

static void act_light_timer(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	/* Parts of the fabric did not answer last time, or every sweep is
	 * to be a heavy one (force_heavy_sweep) */
	if (sm->incomplete || sm->cfg.force_heavy_sweep) {
		sm_heavy_sweep(sm);
		return;
	}
	if (!sm->sweep && !sm->light && !sm->quick &&
	    sweep_light_start(sm) < 0)
		log_warnx("ERR 0303: cannot start a light sweep");
	sminfo_query(sm);	/* the other SMs' states */
	if (sm->state == SM_MASTER)
		light_timer_arm(sm);
}

/* What the light sweep saw: a change, ports naming another master SM. */
static void light_findings(struct sm *sm, const struct sm_msg *m)
{
	if (m->u.light.changed)
		sm->ha.change_pending = true;
	if (m->u.light.foreign_lid)
		sm->ha.foreign_lid = m->u.light.foreign_lid;
}

/* The light sweep's findings, in a state that sweeps. */
static void act_light_done(struct sm *sm, struct sm_msg *m)
{
	light_findings(sm, m);
	if (sm->ha.foreign_lid && foreign_ports(sm))
		return;
	/* A master of another SM_Key (rogue.h) may rewrite any table while
	 * it runs and after: each sweep interval puts everything back. */
	if (sm->state == SM_MASTER && sm_rogue_master_heard(sm)) {
		log_ratelimited(LOG_LVL_WARN, 1126, "an SM of another SM_Key "
				"says it is master: heavy sweep, every table "
				"sent again");
		distrust_tables(sm);
		sm->ha.change_pending = true;
	}
	if (sm->ha.change_pending && !sm->sweep && !sm->ha.standing_down) {
		ev_timer_stop(sm->loop, &sm->light_timer);
		sm_heavy_sweep(sm);
	}
}

static void act_light_done_idle(struct sm *sm, struct sm_msg *m)
{
	light_findings(sm, m);
	sm->ha.foreign_lid = 0;
}

/*
 * A trap says the topology changed: the old routes may cross what
 * changed, so the next heavy sweep sends no LID-routed SMP (sm/sweep.c;
 * the light sweep sets it too when it sees a change).
 */
static void act_trap_note(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	sm->topo_changed = true;
}

static void act_trap(struct sm *sm, struct sm_msg *m)
{
	act_trap_note(sm, m);
	trap_holdoff(sm);
}

static void act_port_up(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	if (!sm->ha.port_down)
		return;
	sm->ha.port_down = false;
	ev_timer_stop(sm->loop, &sm->port_timer);
	sm_heavy_sweep(sm);
}

static void act_stop(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	timers_stop(sm, true);
	sm->elect_abort = true;
	if (sm->state != SM_NOTACTIVE)
		sm_transition(sm, SM_NOTACTIVE, 1115, "stopped");
	ev_break(sm->loop, EVBREAK_ALL);
}

/* -F and -P again (a bad file keeps the old: m->rc < 0), then the heavy
 * sweep a change asks for (in the states that sweep). */
static void act_reload(struct sm *sm, struct sm_msg *m)
{
	int rc = sm->reload ? sm->reload(sm, m->u.reload.report) : 0;
	int r = sm_parts_reload_force(sm, m->u.reload.report,
				      m->u.reload.force);
	int q = sm_qos_reload(sm, m->u.reload.report);

	m->rc = rc < 0 ? rc : r < 0 ? r : q;
	if (m->rc < 0)
		sm->stats.reloads_failed++;
	else
		sm->stats.reloads_ok++;
	sm_event(sm, SM_EV_CHANGE);
}

/*
 * reroute: a heavy sweep computes the routes again anyway; what reroute
 * adds is forgetting what each switch's LFT holds (sm/program/lft.c's
 * images), so that every block is sent again.  Images are only forgotten
 * between heavy sweeps (one in progress programs from them): during one,
 * the heavy sweep that follows it forgets them when it starts
 * (sm->ha.reroute_pending).  m->rc: the switches forgotten now, or
 * -EINPROGRESS when the next heavy sweep forgets them.
 */
static void act_reroute(struct sm *sm, struct sm_msg *m)
{
	if (sm->sweep) {
		sm->ha.reroute_pending = true;
		m->rc = -EINPROGRESS;
	} else {
		m->rc = (int)sweep_forget_lfts(sm);
	}
	act_change(sm, m);
}

/* The control socket's light sweep (m->rc: 0 or -errno). */
static void act_light_ask(struct sm *sm, struct sm_msg *m)
{
	if (sm->sweep || sm->light || sm->quick)
		m->rc = -EBUSY;
	else
		m->rc = sweep_light_start(sm);
}

static void act_refuse(struct sm *sm, struct sm_msg *m)
{
	(void)sm;
	m->rc = -EPERM;
}

static void act_master_claimed(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	sm_master_claimed(sm);
}

static void act_standby_trap(struct sm *sm, struct sm_msg *m)
{
	sminfo_standby_trap(sm, m->u.trap.lid, m->u.trap.num);
}

static void act_issm(struct sm *sm, struct sm_msg *m)
{
	sminfo_query_lid(sm, m->u.trap.lid);
}

/* -o: the subnet is up and the MFT Sets of its sweep are answered. */
static void act_once_done(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	ev_break(sm->loop, EVBREAK_ALL);
}

/* The debug mode that shows the standby's copy (sm/main.c). */
static void act_copy_from(struct sm *sm, struct sm_msg *m)
{
	sm->state = SM_STANDBY;
	sm->master_lid = m->u.trap.lid;
	standby_sync_start(sm);
}

static void act_mcast(struct sm *sm, struct sm_msg *m)
{
	(void)m;
	mcast_changed(sm);
}

/* ------------------------------------------------------------- the table */

#define ROW(a, n)	{ a, n }
#define ALL4(ev, row)	[SM_NOTACTIVE][ev] = row, [SM_DISCOVERING][ev] = row, \
			[SM_STANDBY][ev] = row, [SM_MASTER][ev] = row
/* The states that sweep (DISCOVERING, MASTER), as opposed to those that
 * never program (NOTACTIVE, STANDBY). */
#define SWEEPING(ev, row)	[SM_DISCOVERING][ev] = row, [SM_MASTER][ev] = row
#define IDLE(ev, row)		[SM_NOTACTIVE][ev] = row, [SM_STANDBY][ev] = row

/*
 * The state machine: state x event -> action.  An empty cell: the event
 * changes nothing in that state.  Every cell has its unit test
 * (tests/unit/check_fsm.c, fsm_row).
 *
 *   NOTACTIVE  --START-->           DISCOVERING (election, or -o: heavy sweep)
 *   DISCOVERING --SWEEP_DONE-->     MASTER (SUBNET UP)
 *   DISCOVERING --SWEEP_DONE, own port down--> DISCOVERING (poll the port)
 *   DISCOVERING --PORT_UP-->        DISCOVERING (heavy sweep)
 *   DISCOVERING --SWEEP_FAILED-->   DISCOVERING (sweep again)
 *   MASTER   --CHANGE, RELOAD-->    MASTER (heavy sweep)
 *   MASTER   --TRAP-->              MASTER (hold-off, then heavy sweep)
 *   MASTER   --LIGHT_TIMER-->       MASTER (light sweep)
 *   MASTER   --LIGHT_DONE-->        MASTER (heavy sweep if it saw a change)
 *   STANDBY  --HANDOVER-->          MASTER (heavy sweep)
 *   any      --STOP-->              NOTACTIVE
 */
static const struct sm_row fsm[SM_MASTER + 1][SM_EV_N] = {
	ALL4(SM_EV_START, ROW(act_start, "discover")),
	SWEEPING(SM_EV_SWEEP_DONE, ROW(act_sweep_done, "subnet up")),
	IDLE(SM_EV_SWEEP_DONE, ROW(act_sweep_ended, "sweep ended, nothing applied")),
	SWEEPING(SM_EV_SWEEP_FAILED, ROW(act_sweep_failed, "sweep again")),
	IDLE(SM_EV_SWEEP_FAILED, ROW(act_sweep_ended, "sweep ended, nothing applied")),
	ALL4(SM_EV_ELECT_DONE, ROW(act_elect_decide, "election verdict")),
	[SM_STANDBY][SM_EV_MASTER_LOST] = ROW(act_master_lost, "take over"),
	[SM_DISCOVERING][SM_EV_HANDOVER] = ROW(act_handover, "master, heavy sweep"),
	[SM_STANDBY][SM_EV_HANDOVER] = ROW(act_handover, "master, heavy sweep"),
	[SM_MASTER][SM_EV_QUICK_DONE] = ROW(act_quick_done, "deferred traps go on"),
	[SM_NOTACTIVE][SM_EV_QUICK_DONE] = ROW(act_quick_done_idle, "deferred traps dropped"),
	[SM_DISCOVERING][SM_EV_QUICK_DONE] = ROW(act_quick_done_idle, "deferred traps dropped"),
	[SM_STANDBY][SM_EV_QUICK_DONE] = ROW(act_quick_done_idle, "deferred traps dropped"),
	[SM_MASTER][SM_EV_QUICK_LOSSES] = ROW(act_quick_losses, "heavy sweep on the quick model"),
	[SM_MASTER][SM_EV_QUICK_CHANGE] = ROW(act_quick_change, "heavy sweep"),
	SWEEPING(SM_EV_CHANGE, ROW(act_change, "heavy sweep")),
	[SM_MASTER][SM_EV_LIGHT_TIMER] = ROW(act_light_timer, "light sweep"),
	SWEEPING(SM_EV_LIGHT_DONE, ROW(act_light_done, "heavy sweep if changed")),
	IDLE(SM_EV_LIGHT_DONE, ROW(act_light_done_idle, "findings dropped")),
	SWEEPING(SM_EV_TRAP, ROW(act_trap, "trap hold-off, heavy sweep")),
	IDLE(SM_EV_TRAP, ROW(act_trap_note, "topology noted")),
	ALL4(SM_EV_PORT_UP, ROW(act_port_up, "heavy sweep if the port was down")),
	ALL4(SM_EV_STOP, ROW(act_stop, "stop")),
	ALL4(SM_EV_RELOAD, ROW(act_reload, "reload, heavy sweep")),
	SWEEPING(SM_EV_REROUTE, ROW(act_reroute, "forget LFTs, heavy sweep")),
	IDLE(SM_EV_REROUTE, ROW(act_refuse, "refused")),
	[SM_MASTER][SM_EV_LIGHT_ASK] = ROW(act_light_ask, "light sweep"),
	[SM_NOTACTIVE][SM_EV_LIGHT_ASK] = ROW(act_refuse, "refused"),
	[SM_DISCOVERING][SM_EV_LIGHT_ASK] = ROW(act_refuse, "refused"),
	[SM_STANDBY][SM_EV_LIGHT_ASK] = ROW(act_refuse, "refused"),
	ALL4(SM_EV_MASTER_CLAIMED, ROW(act_master_claimed, "discover again if master")),
	[SM_STANDBY][SM_EV_TRAP_STANDBY] = ROW(act_standby_trap, "check the master's link"),
	ALL4(SM_EV_TRAP_ISSM, ROW(act_issm, "read its SMInfo")),
	ALL4(SM_EV_MCAST_CHANGED, ROW(act_mcast, "MFT update")),
	ALL4(SM_EV_MFT_DONE, ROW(act_once_done, "exit (-o)")),
	[SM_NOTACTIVE][SM_EV_COPY_FROM] = ROW(act_copy_from, "stand by, copy (debug)"),
	[SM_MASTER][SM_EV_PERF_DONE] = ROW(act_perf_done, "counter checks"),
};

static const struct sm_row ignored = { NULL, "ignored" };

const struct sm_row *sm_fsm_row(enum sm_state s, enum sm_event ev)
{
	if ((unsigned)s > SM_MASTER || (unsigned)ev >= SM_EV_N ||
	    !fsm[s][ev].act)
		return &ignored;
	return &fsm[s][ev];
}

const char *sm_event_name(enum sm_event ev)
{
	static const char *const names[SM_EV_N] = {
		[SM_EV_START] = "START", [SM_EV_SWEEP_DONE] = "SWEEP_DONE",
		[SM_EV_SWEEP_FAILED] = "SWEEP_FAILED", [SM_EV_CHANGE] = "CHANGE",
		[SM_EV_LIGHT_TIMER] = "LIGHT_TIMER",
		[SM_EV_LIGHT_DONE] = "LIGHT_DONE", [SM_EV_TRAP] = "TRAP",
		[SM_EV_PORT_UP] = "PORT_UP", [SM_EV_STOP] = "STOP",
		[SM_EV_ELECT_DONE] = "ELECT_DONE",
		[SM_EV_MASTER_LOST] = "MASTER_LOST",
		[SM_EV_HANDOVER] = "HANDOVER", [SM_EV_YIELD] = "YIELD",
		[SM_EV_QUICK_DONE] = "QUICK_DONE",
		[SM_EV_QUICK_LOSSES] = "QUICK_LOSSES",
		[SM_EV_QUICK_CHANGE] = "QUICK_CHANGE", [SM_EV_RELOAD] = "RELOAD",
		[SM_EV_REROUTE] = "REROUTE", [SM_EV_LIGHT_ASK] = "LIGHT_ASK",
		[SM_EV_MASTER_CLAIMED] = "MASTER_CLAIMED",
		[SM_EV_TRAP_STANDBY] = "TRAP_STANDBY",
		[SM_EV_TRAP_ISSM] = "TRAP_ISSM",
		[SM_EV_MCAST_CHANGED] = "MCAST_CHANGED",
		[SM_EV_MFT_DONE] = "MFT_DONE", [SM_EV_COPY_FROM] = "COPY_FROM",
		[SM_EV_PERF_DONE] = "PERF_DONE",
	};

	return (unsigned)ev < SM_EV_N && names[ev] ? names[ev] : "?";
}

void sm_fsm_dispatch(struct sm *sm, struct sm_msg *m)
{
	enum sm_state s = sm->state;
	const struct sm_row *row = sm_fsm_row(s, m->ev);

	log_debug("event: %s in %s -> %s", sm_event_name(m->ev),
		  sm_state_name(s), row->name);
	if (row->act)
		row->act(sm, m);
	/* systemd: READY=1, STATUS= (sm/notify.c); nothing without it. */
	notify_event(sm, m->ev);
}

void sm_event(struct sm *sm, enum sm_event ev)
{
	struct sm_msg m;

	memset(&m, 0, sizeof(m));
	m.ev = ev;
	(void)sm_post_wait(sm, &m);
}


/* ------------------------------------------------------- our own port */

static void on_port_info(void *arg, int status, const void *mad, size_t len)
{
	struct sm *sm = arg;
	const struct smp_dr *smp = mad;

	if (status == -ECANCELED)
		return;
	sm->ha.port_polling = false;
	if (status < 0 || len < MAD_SIZE || (be16toh(smp->hdr.status) & 0x7fff)) {
		log_ratelimited(LOG_LVL_WARN, 312, "cannot read the SM port's"
				" PortInfo: %s", status < 0 ? strerror(-status)
				: "bad MAD status");
	} else {
		const struct smp_port_info *pi = (const void *)smp->data;

		if (pi_port_state(pi) >= PORT_STATE_INIT) {
			log_info("SM port is up (state %u, physical state %u):"
				 " sweeping", pi_port_state(pi), pi_phys_state(pi));
			sm_event(sm, SM_EV_PORT_UP);
			return;
		}
	}
	if (sm->ha.port_down)
		port_poll_arm(sm);
}

/* Read our own port's PortInfo (a directed route of no hops). */
static void on_port_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sm *sm = w->data;
	struct smp_dr smp;
	struct mad_addr addr = { .lid = 0xffff, .qpn = 0 };
	uint8_t path[SMP_MAX_HOPS + 1] = { 0 };

	(void)loop;
	(void)revents;
	if (!sm->ha.port_down || sm->ha.port_polling)
		return;
	mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_PORT_INFO,
			 sm->fabric.local_port, path, 0);
	if (mad_engine_submit(sm->engine, &smp, sizeof(smp), &addr,
			      on_port_info, sm) == 0)
		sm->ha.port_polling = true;
	else
		port_poll_arm(sm);
}

/* ------------------------------------------------------------ watchers */

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct sm *sm = w->data;

	(void)loop;
	(void)revents;
	if (w->signum == SIGHUP) {
		struct sm_msg m = { .ev = SM_EV_RELOAD };

		log_info("SIGHUP: heavy sweep requested");
		/* -F and -P again (a bad file keeps the old), then a sweep */
		(void)sm_post_msg(sm, &m);
		return;
	}
	if (w->signum == SIGUSR1) {
		/* logrotate renamed the file: go on in a new one. */
		int rc = log_reopen();
		if (rc < 0)
			log_err_rc(rc, "ERR 0313: SIGUSR1: cannot reopen the"
				   " log file");
		else
			log_info("SIGUSR1: log file reopened");
		return;
	}
	log_info("signal %d: exiting", w->signum);
	sminfo_stop_gracefully(sm);
}

static void on_light_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	sm_event(w->data, SM_EV_LIGHT_TIMER);
}

static void on_retry_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	sm_event(w->data, SM_EV_CHANGE);
}

/* The hold-off after a trap is over: one heavy sweep for the burst. */
static void on_trap_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sm *sm = w->data;

	(void)revents;
	/* A sweep runs: the next starts when the pacing allows after it. */
	if (sm->sweep || sm->quick) {
		sm->ha.trap_deferred = true;
		return;
	}
	struct sm_trap_pace p = trap_pace(sm);
	sm->ha.trap_backoff = sm_trap_backoff(&p, sm->ha.trap_storm);
	sm->ha.last_trap_sweep = ev_now(loop);
	sm->stats.trap_sweeps++;
	/* Only switch ports changed (traps 128): read those switches first
	 * (sm/quick.c); it ends in a heavy sweep when it must. */
	if (quick_eligible(sm) && !sm->light && quick_sweep_start(sm) == 0)
		return;
	sm_event(sm, SM_EV_CHANGE);
}

/* A trap 128 was dropped over its source's rate: the change it told of
 * still needs a sweep that begins after it (sm/trap.c, trap_owe_sweep()),
 * unless one did or one is on its way. */
static void on_trap_owed_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sm *sm = w->data;

	(void)loop;
	(void)revents;
	if (ev_is_active(&sm->trap_timer) || sm->ha.trap_deferred ||
	    sm->ha.last_trap_sweep > sm->trap_owed_at ||
	    sm->ha.sweep_began > sm->trap_owed_at)
		return;
	sm_event(sm, SM_EV_TRAP);
}

static void on_log_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	log_ratelimit_flush();
}

#define LOG_FLUSH_PERIOD	10.	/* s: "N similar messages suppressed" */

/*
 * The state machine's one-shot timers, in one table: sm_watchers_start()
 * sets them up, SM_EV_STOP stops those marked at_stop (the loop ends
 * then), sm_watchers_stop() stops them all.
 */
static const struct sm_timer {
	size_t off;			/* the ev_timer in struct sm */
	void (*cb)(struct ev_loop *loop, ev_timer *w, int revents);
	bool at_stop;
} sm_timers[] = {
	{ offsetof(struct sm, light_timer), on_light_timer, false },
	{ offsetof(struct sm, retry_timer), on_retry_timer, false },
	{ offsetof(struct sm, trap_timer), on_trap_timer, true },
	{ offsetof(struct sm, trap_owed_timer), on_trap_owed_timer, true },
	{ offsetof(struct sm, port_timer), on_port_timer, true },
	{ offsetof(struct sm, poll_timer), sminfo_poll_timer, true },
	{ offsetof(struct sm, elect_timer), sminfo_elect_timer, true },
	{ offsetof(struct sm, stop_timer), sminfo_stop_timer, true },
	{ offsetof(struct sm, sms_timer), sminfo_sms_timer, true },
	{ offsetof(struct sm, ism_timer), sminfo_ism_timer, true },
};

static ev_timer *sm_timer_of(struct sm *sm, const struct sm_timer *t)
{
	return (ev_timer *)(void *)((char *)sm + t->off);
}

/* Every timer of the table: what is queued is handled first, so that
 * the timer sees the state the events before it made. */
static void on_fsm_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sm *sm = w->data;

	sm_evq_drain(sm);
	for (size_t i = 0; i < sizeof(sm_timers) / sizeof(sm_timers[0]); i++)
		if (sm_timer_of(sm, &sm_timers[i]) == w) {
			sm_timers[i].cb(loop, w, revents);
			return;
		}
}

static void timers_stop(struct sm *sm, bool at_stop_only)
{
	for (size_t i = 0; i < sizeof(sm_timers) / sizeof(sm_timers[0]); i++)
		if (!at_stop_only || sm_timers[i].at_stop)
			ev_timer_stop(sm->loop, sm_timer_of(sm, &sm_timers[i]));
}

void sm_watchers_start(struct sm *sm)
{
	ev_signal *w[] = { &sm->sig_int, &sm->sig_term, &sm->sig_hup,
			   &sm->sig_usr1 };
	int num[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1 };

	for (int i = 0; i < 4; i++) {
		ev_signal_init(w[i], on_signal, num[i]);
		w[i]->data = sm;
		ev_signal_start(sm->loop, w[i]);
	}
	for (size_t i = 0; i < sizeof(sm_timers) / sizeof(sm_timers[0]); i++) {
		ev_timer *t = sm_timer_of(sm, &sm_timers[i]);

		ev_timer_init(t, on_fsm_timer, 0., 0.);
		t->data = sm;
	}
	ev_timer_init(&sm->log_timer, on_log_timer, LOG_FLUSH_PERIOD,
		      LOG_FLUSH_PERIOD);
	sm->log_timer.data = sm;
	ev_timer_start(sm->loop, &sm->log_timer);
	/* The flush timer alone must not keep a finished loop running. */
	ev_unref(sm->loop);
	notify_start(sm);	/* NOTIFY_SOCKET, WATCHDOG_USEC */
}

void sm_watchers_stop(struct sm *sm)
{
	ev_signal *w[] = { &sm->sig_int, &sm->sig_term, &sm->sig_hup,
			   &sm->sig_usr1 };

	for (int i = 0; i < 4; i++)
		ev_signal_stop(sm->loop, w[i]);
	timers_stop(sm, false);
	sm_evq_stop(sm);
	ev_ref(sm->loop);
	ev_timer_stop(sm->loop, &sm->log_timer);
	notify_stop(sm);
}

int sm_agents_start(struct sm *sm)
{
	int rc;

	/* One host, one share of the receive queue, whatever its LMC. */
	if (sm->io) {
		umad_io_set_source_lmc(sm->io, sm->cfg.lmc);
		/* SMP answers nobody asked for never take a slot. */
		umad_io_set_tid_filter(sm->io, mad_engine_wire_tids(sm->engine));
	}
	sm_mkey_start(sm);		/* before the first SMP */
	rc = sminfo_agent_start(sm);	/* sm/ha/sminfo.c */
	if (rc == 0)
		rc = trap_agent_start(sm);	/* sm/trap.c */
	return rc;
}
