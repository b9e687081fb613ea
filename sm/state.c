/*
 * state.c - the SM state machine, the SMInfo agent and the trap receiver.
 *
 * Every decision about what the SM does next goes through sm_event():
 *
 *   NOTACTIVE  --START-->           DISCOVERING (heavy sweep)
 *   DISCOVERING --SWEEP_DONE-->     MASTER (SUBNET UP)
 *   DISCOVERING --SWEEP_DONE, own port down--> DISCOVERING (poll the port)
 *   DISCOVERING --PORT_UP-->        DISCOVERING (heavy sweep)
 *   DISCOVERING --SWEEP_FAILED-->   DISCOVERING (sweep again)
 *   MASTER   --CHANGE-->            MASTER (heavy sweep)
 *   MASTER   --TRAP-->              MASTER (hold-off, then heavy sweep)
 *   MASTER   --LIGHT_TIMER-->       MASTER (light sweep)
 *   MASTER   --LIGHT_DONE-->        MASTER (heavy sweep if it saw a change)
 *   any      --STOP-->              NOTACTIVE
 *
 * One sweep at a time: a heavy sweep asked for while a heavy or a light
 * sweep runs sets change_pending, and starts when that sweep ends (a
 * light sweep reads the model a heavy sweep replaces).
 *
 * STANDBY (another SM is master) is reserved for the election feature.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/ctl.h"
#include "sm/discover.h"
#include "sm/election.h"
#include "sm/mcast/mft.h"
#include "sm/notify.h"
#include "sm/program.h"
#include "sm/sa/index.h"
#include "sm/sa/sa.h"
#include "sm/sm.h"

#define MAX_FAILED_SWEEPS_ONCE	8	/* -o gives up after this many */
#define RESWEEP_DELAY		0.05	/* s, after a failed heavy sweep */

static void transition(struct sm *sm, enum sm_state s, unsigned code,
		       const char *why);
static void sms_query(struct sm *sm, bool election);

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

static void heavy_sweep(struct sm *sm)
{
	int rc;

	if (sm->sweep || sm->light) {
		sm->change_pending = true;
		return;
	}
	sm->change_pending = false;
	rc = sweep_heavy_start(sm);
	if (rc < 0) {
		log_err("ERR 0301: cannot start a heavy sweep: %s", strerror(-rc));
		sm->exit_code = 1;
		ev_break(sm->loop, EVBREAK_ALL);
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
 * A sweep found our own port without a link: a subnet of one node is no
 * subnet.  Like OpenSM ("SM port is down") wait for the link, reading the
 * port's PortInfo every SM_PORT_POLL s, and sweep when it comes up.
 */
static void port_down(struct sm *sm)
{
	const struct fabric *f = &sm->fabric;
	const struct fab_port *p =
		&fabric_node(f, f->local_node)->ports[f->local_port];

	if (!sm->port_down)
		log_err("ERR 0310: SM port %u is down (physical state %u):"
			" waiting for its link", f->local_port,
			pi_phys_state(&p->pi));
	sm->port_down = true;
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
		sm->stats.first_up_seconds = ev_time() - sm->stats.started;
	sm->subnet_up = true;
	if (sm->state != SM_MASTER) {
		transition(sm, SM_MASTER, 1101, sm->takeover ?
			   "took over: the sweep after the master was lost is done" :
			   "sweep done and no better SM");
		sm->master_since = ev_now(sm->loop);
	}
	sm->takeover = false;
	sm->adopt_lids = false;
	sm->master_lid = 0;
	sm->master_guid = 0;
	fabric_count(&sm->fabric, &c);
	log_info("SUBNET UP");
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
	sms_query(sm, false);
	if (sm->state != SM_MASTER)
		return;
	if (sm->change_pending)
		heavy_sweep(sm);
	else
		light_timer_arm(sm);
}

static void sweep_failed(struct sm *sm)
{
	sm->failed_sweeps++;
	if (sm->cfg.once && sm->failed_sweeps >= MAX_FAILED_SWEEPS_ONCE) {
		log_err("ERR 0302: the subnet could not be brought up after %u"
			" heavy sweeps", sm->failed_sweeps);
		fprintf(stderr, "ibsm: the subnet could not be brought up after"
			" %u heavy sweeps (see the log)\n", sm->failed_sweeps);
		sm->exit_code = 1;
		ev_break(sm->loop, EVBREAK_ALL);
		return;
	}
	ev_timer_stop(sm->loop, &sm->retry_timer);
	ev_timer_set(&sm->retry_timer, RESWEEP_DELAY * sm->failed_sweeps, 0.);
	ev_timer_start(sm->loop, &sm->retry_timer);
}

/* An accepted trap asks for a heavy sweep: collect the burst first. */
static void trap_holdoff(struct sm *sm)
{
	ev_tstamp now = ev_now(sm->loop), wait = sm_trap_holdoff(sm);

	if (ev_is_active(&sm->trap_timer))
		return;
	if (sm->last_trap_sweep > 0. &&
	    now + wait < sm->last_trap_sweep + sm_trap_sweep_interval(sm))
		wait = sm->last_trap_sweep + sm_trap_sweep_interval(sm) - now;
	ev_timer_set(&sm->trap_timer, wait, 0.);
	ev_timer_start(sm->loop, &sm->trap_timer);
}

/* ------------------------------------------------ election (14.4.1) */

/*
 * Timing of the standby's watch over the master.  OpenSM polls every
 * sminfo_polling_timeout (10 s) and gives up after polling_retry_number
 * (4) unanswered polls: about a minute.  ibsm polls at most every
 * SM_FAST_POLL s and, after a poll that got no answer (each poll is a
 * transaction with the engine's own retries), polls again at once; the
 * master is dead after SM_FAST_MISSES such polls in a row (or
 * polling_retry_number when smaller).  An unanswered SMInfo Get with all
 * its retries is evidence that cannot be wrong: a live SM answers it.
 */
#define SM_FAST_POLL		1.0	/* s */
#define SM_FAST_MISSES		2
#define SM_ELECT_RETRY		1.0	/* s: a better SM should be master */
#define SM_ELECT_MAX_WAITS	5	/* then we take the role ourselves */
#define SM_HANDOVER_WAIT	1.0	/* s: SIGTERM waits this for the answer */
#define SM_REMOTE_FRESH		30.0	/* s: remotes older are forgotten */
#define SM_REQUERY		1.0	/* s: ask a discovering SM again */
#define SM_REPAIR_DELAY		0.5	/* s: a worse master stands by first */
#define SM_REPAIR_EVERY		5.0	/* s: at most one repair sweep per */

uint16_t sm_master_lid(const struct sm *sm)
{
	return sm->state == SM_MASTER ? 0 : sm->master_lid;
}

static uint64_t sm_key(const struct sm *sm)
{
	return sm->cfg.sm_key;
}

static double poll_interval(const struct sm *sm)
{
	double t = sm->cfg.sminfo_polling_timeout ?
		   sm->cfg.sminfo_polling_timeout / 1e3 : 10.;

	return t < SM_FAST_POLL ? t : SM_FAST_POLL;
}

static unsigned poll_limit(const struct sm *sm)
{
	unsigned n = sm->cfg.polling_retry_number;

	if (!n)
		n = 1;
	return n < SM_FAST_MISSES ? n : SM_FAST_MISSES;
}

/* Every state change goes through here with its cause (ERR 11xx). */
static void transition(struct sm *sm, enum sm_state s, unsigned code,
		       const char *why)
{
	enum sm_state old = sm->state;

	snprintf(sm->last_transition, sizeof(sm->last_transition),
		 "%s -> %s: %s", sm_state_name(old), sm_state_name(s), why);
	log_info("ERR %04u: %s", code, sm->last_transition);
	if (old == SM_STANDBY && s != SM_STANDBY) {
		ev_timer_stop(sm->loop, &sm->poll_timer);
		standby_sync_stop(sm);
	}
	set_state(sm, s);
	if (s == SM_STANDBY && old != SM_STANDBY) {
		sm->standby_since = ev_now(sm->loop);
		sm->adopt_lids = true;
		ev_timer_stop(sm->loop, &sm->light_timer);
		ev_timer_stop(sm->loop, &sm->trap_timer);
		sm->poll_misses = 0;
		/* The first poll at once: our SMInfo is its payload, so the
		 * master learns now that it has a standby (a SIGTERM right
		 * after hands over to us), not at its next sweep. */
		ev_timer_stop(sm->loop, &sm->poll_timer);
		ev_timer_set(&sm->poll_timer, 0., 0.);
		ev_timer_start(sm->loop, &sm->poll_timer);
		standby_sync_start(sm);
	}
}

/* Our SMInfo as a requester sends it (the payload of our Gets and Sets)
 * and as we answer it; the key only to an SM that presented it. */
static void fill_sm_info(const struct sm *sm, struct smp_sm_info *si,
			 bool with_key)
{
	memset(si, 0, sizeof(*si));
	si->guid = htobe64(sm->port_guid);
	si->sm_key = with_key ? htobe64(sm_key(sm)) : 0;
	si->act_count = htobe32(sm->act_count);
	si->prio_state = (uint8_t)((sm->cfg.sm_priority & 0xf) << 4 |
				   (sm->state & 0xf));
}

static void remote_note_si(struct sm *sm, const struct smp_sm_info *si,
			   uint16_t lid, struct sm_remote **out)
{
	*out = sm_remote_note(sm->remotes, SM_MAX_REMOTE, be64toh(si->guid),
			      lid, si->prio_state >> 4, si->prio_state & 0xf,
			      be32toh(si->act_count), ev_now(sm->loop));
}

static void enter_standby(struct sm *sm, const struct sm_remote *m,
			  unsigned code, const char *cause)
{
	char why[160];

	sm->master_guid = m->guid;
	sm->master_lid = m->lid;
	sm->master_priority = m->priority;
	sm->poll_misses = 0;
	snprintf(why, sizeof(why), "%s (master 0x%016" PRIx64 " LID %u"
		 " priority %u)", cause, m->guid, m->lid, m->priority);
	if (sm->state == SM_STANDBY) {
		log_info("ERR %04u: STANDBY: %s", code, why);
		return;
	}
	transition(sm, SM_STANDBY, code, why);
}

static void handover_to(struct sm *sm, const struct sm_remote *r);
static void elect_start(struct sm *sm);

/* The election's discovery is over and every SMInfo Get answered or
 * failed: apply 14.4.1.1. */
static void elect_decide_now(struct sm *sm)
{
	int who;
	enum elect_verdict v;

	sm->elect_running = false;
	fabric_free(&sm->elect_fabric);
	if (sm->state != SM_DISCOVERING)
		return;
	v = elect_decide(sm->cfg.sm_priority, sm->port_guid, sm->remotes,
			 SM_MAX_REMOTE, &who);
	if (v == ELECT_STANDBY) {
		sm->elect_waits = 0;
		enter_standby(sm, &sm->remotes[who], 1102,
			      "discovery found a master");
		return;
	}
	if (v == ELECT_WAIT && sm->elect_waits < SM_ELECT_MAX_WAITS) {
		sm->elect_waits++;
		log_info("ERR 1103: DISCOVERING: SM 0x%016" PRIx64 " (priority"
			 " %u, %s) is better and no master yet: looking again"
			 " in %.0f s", sm->remotes[who].guid,
			 sm->remotes[who].priority,
			 sm_state_name(sm->remotes[who].state), SM_ELECT_RETRY);
		ev_timer_set(&sm->elect_timer, SM_ELECT_RETRY, 0.);
		ev_timer_start(sm->loop, &sm->elect_timer);
		return;
	}
	sm->elect_waits = 0;
	log_info("ERR 1104: DISCOVERING: no master and no better SM: sweeping"
		 " to become master");
	if (sm->takeover && standby_sync_adopt(sm))
		sm->rereg_done = true;	/* the SA state is the master's */
	heavy_sweep(sm);
}

static void on_elect_sminfo(void *arg, int status, const void *mad, size_t len);
static void probe_answered(struct sm *sm);

/* Why another SM's SMInfo is read. */
enum smq_kind {
	SMQ_ELECTION,		/* DISCOVERING: who is there (14.4.1.1) */
	SMQ_MASTER,		/* MASTER: the other SMs after a sweep */
	SMQ_PROBE,		/* SIGTERM: an SM we had not heard from */
};

struct sminfo_req {
	struct sm *sm;
	uint16_t lid;		/* the port's LID as it holds it */
	enum smq_kind kind;
};

/*
 * Read the SMInfo of another SM (SubnGet, our SMInfo with our key as the
 * payload, as OpenSM sends it).  DR when `path` is not NULL (discovery:
 * LIDs may not be assigned yet), else LID-routed.
 */
static int sminfo_get(struct sm *sm, uint16_t lid, const uint8_t *path,
		      unsigned hops, enum smq_kind kind)
{
	struct sminfo_req *rq = calloc(1, sizeof(*rq));
	struct mad_addr addr = { .lid = lid, .qpn = 0 };
	union { struct smp_dr dr; struct smp_lid lr; } smp;
	uint8_t *data;
	int rc;

	if (!rq)
		return -ENOMEM;
	rq->sm = sm;
	rq->lid = lid;
	rq->kind = kind;
	if (path) {
		mad_build_smp_dr(&smp.dr, MAD_METHOD_GET, SMP_ATTR_SM_INFO, 0,
				 path, hops);
		data = smp.dr.data;
		addr.lid = 0xffff;
	} else {
		mad_build_smp_lid(&smp.lr, MAD_METHOD_GET, SMP_ATTR_SM_INFO, 0);
		data = smp.lr.data;
	}
	fill_sm_info(sm, (struct smp_sm_info *)data, true);
	rc = mad_engine_submit(sm->engine, &smp, MAD_SIZE, &addr,
			       on_elect_sminfo, rq);
	if (rc < 0)
		free(rq);
	return rc;
}

/* An answer may carry the SMInfo of an SM with another SM_Key: the spec
 * zeroes the key towards a requester that did not present it, and such
 * an SM takes no part in our election (14.4.1). */
static bool sminfo_answer(struct sm *sm, int status, const void *mad,
			  size_t len, const struct smp_sm_info **si)
{
	const struct mad_hdr *h = mad;
	size_t off;

	if (status < 0 || len < MAD_SIZE || (be16toh(h->status) & 0x7fff))
		return false;
	off = h->mgmt_class == MAD_CLASS_SMI_DR ? offsetof(struct smp_dr, data)
						: offsetof(struct smp_lid, data);
	*si = (const struct smp_sm_info *)((const uint8_t *)mad + off);
	if (be64toh((*si)->sm_key) != sm_key(sm)) {
		log_ratelimited(LOG_LVL_WARN, 1110, "SM 0x%016" PRIx64 " has"
				" another SM_Key: ignored",
				be64toh((*si)->guid));
		return false;
	}
	return !!(*si)->guid;
}

/* Is `guid` an SM we have heard from before? */
static bool remote_known(const struct sm *sm, uint64_t guid)
{
	for (unsigned i = 0; i < SM_MAX_REMOTE; i++)
		if (sm->remotes[i].guid == guid)
			return true;
	return false;
}

/*
 * A master's review of another SM.  `fresh`: first heard from in a query
 * after one of our sweeps.  Such an SM may have been master of a part of
 * the fabric that was cut off and joined again, and may have stood down
 * (it found us first) before we could see it as master: what it
 * programmed there must be repaired all the same.
 */
static void master_consider(struct sm *sm, struct sm_remote *r, bool fresh)
{
	char why[160];

	if (sm->state != SM_MASTER || sm->stopping)
		return;
	switch (master_review(sm->cfg.sm_priority, sm->port_guid, r)) {
	case MASTER_KEEP:
		if (r->state != SM_STATE_MASTER && !fresh)
			break;
		/* A worse master (a split fabric joined): it stands by when
		 * it reads our SMInfo, but what it programmed meanwhile
		 * (LIDs, LFTs) must be repaired: a heavy sweep that sends
		 * every LFT whole, soon, at most every SM_REPAIR_EVERY s. */
		if (sm->last_repair > 0. &&
		    ev_now(sm->loop) - sm->last_repair < SM_REPAIR_EVERY)
			break;
		sm->last_repair = ev_now(sm->loop);
		log_ratelimited(LOG_LVL_WARN, 1119, "%s SM 0x%016" PRIx64
				" LID %u priority %u (%s): we win; it stands"
				" by: heavy sweep to repair what it set",
				fresh ? "newly seen" : "another master",
				r->guid, r->lid, r->priority,
				sm_state_name(r->state));
		ev_timer_stop(sm->loop, &sm->elect_timer);
		ev_timer_set(&sm->elect_timer, SM_REPAIR_DELAY, 0.);
		ev_timer_start(sm->loop, &sm->elect_timer);
		break;
	case MASTER_YIELD:
		/* Discover again (read-only) before standing by: the LIDs
		 * the winner gives the ports are read from them. */
		snprintf(why, sizeof(why), "two masters met: 0x%016" PRIx64
			 " priority %u wins over us (priority %u)", r->guid,
			 r->priority, sm->cfg.sm_priority);
		ev_timer_stop(sm->loop, &sm->light_timer);
		transition(sm, SM_DISCOVERING, 1105, why);
		sm->elect_waits = 0;
		elect_start(sm);
		break;
	case MASTER_HANDOVER:
		log_info("ERR 1106: MASTER: SM 0x%016" PRIx64 " LID %u priority"
			 " %u is better: handing over", r->guid, r->lid,
			 r->priority);
		handover_to(sm, r);
		break;
	}
}

static void on_elect_sminfo(void *arg, int status, const void *mad, size_t len)
{
	struct sminfo_req *rq = arg;
	struct sm *sm = rq->sm;
	const struct smp_sm_info *si;
	enum smq_kind kind = rq->kind;
	bool election = kind == SMQ_ELECTION;
	uint16_t lid = rq->lid;

	free(rq);
	if (status == -ECANCELED)
		return;
	if (sminfo_answer(sm, status, mad, len, &si) &&
	    be64toh(si->guid) != sm->port_guid) {
		struct sm_remote *r;
		bool fresh = !remote_known(sm, be64toh(si->guid));

		remote_note_si(sm, si, lid, &r);
		log_debug("SM 0x%016" PRIx64 " LID %u priority %u %s",
			  r->guid, r->lid, r->priority,
			  sm_state_name(r->state));
		if (!election)
			master_consider(sm, r, fresh);
		/* One still discovering settles soon: ask again, so that a
		 * handover (SIGTERM) knows the standbys. */
		if (!election && r->state == SM_STATE_DISCOVERING &&
		    sm->state == SM_MASTER && !ev_is_active(&sm->sms_timer)) {
			ev_timer_set(&sm->sms_timer, SM_REQUERY, 0.);
			ev_timer_start(sm->loop, &sm->sms_timer);
		}
	}
	if (election && sm->elect_pending && --sm->elect_pending == 0)
		elect_decide_now(sm);
	if (kind == SMQ_PROBE)
		probe_answered(sm);
}

/*
 * Ask every other port with IsSM (PortInfo:CapabilityMask) for its
 * SMInfo: the election's model (DR routes) or the master's last sweep
 * (LIDs).
 */
static void sms_query(struct sm *sm, bool election)
{
	const struct fabric *f = election ? &sm->elect_fabric : &sm->fabric;

	for (int32_t id = 0; id < (int32_t)f->n_nodes; id++) {
		const struct fab_node *n = fabric_node(f, id);
		unsigned first = n->type == NODE_TYPE_SWITCH ? 0 : 1;
		unsigned last = n->type == NODE_TYPE_SWITCH ? 0 : n->num_ports;

		for (unsigned pn = first; pn <= last; pn++) {
			const struct fab_port *p = &n->ports[pn];
			uint16_t lid = be16toh(p->pi.lid);

			if (!p->valid || !(be32toh(p->pi.cap_mask) & PI_CAP_IS_SM))
				continue;
			if (id == f->local_node && (n->type == NODE_TYPE_SWITCH ||
						    pn == f->local_port))
				continue;
			if (!election)
				lid = p->lid;
			/* Directed route: two masters of one fabric may
			 * disagree about LIDs (a split fabric joined). */
			int rc = sminfo_get(sm, lid, n->type == NODE_TYPE_SWITCH ?
					    n->path : p->path,
					    n->type == NODE_TYPE_SWITCH ?
					    n->hops : p->hops,
					    election ? SMQ_ELECTION : SMQ_MASTER);
			if (rc == 0 && election)
				sm->elect_pending++;
		}
	}
}

static void on_elect_discovered(void *arg, const struct discover_result *r)
{
	struct sm *sm = arg;

	(void)r;
	if (sm->elect_abort)
		return;		/* shutdown: sm_election_free() frees it */
	discover_free(sm->elect_disc);
	sm->elect_disc = NULL;
	sm->elect_pending = 0;
	if (sm->state != SM_DISCOVERING) {
		sm->elect_running = false;
		fabric_free(&sm->elect_fabric);
		return;
	}
	if (sm->elect_fabric.local_node != FAB_NONE) {
		const struct fab_node *ln = fabric_node(&sm->elect_fabric,
						sm->elect_fabric.local_node);
		if (sm->elect_fabric.local_port <= ln->num_ports)
			sm->port_lid = be16toh(
				ln->ports[sm->elect_fabric.local_port].pi.lid);
	}
	/* Forget what the table says of states: only answers count now. */
	for (unsigned i = 0; i < SM_MAX_REMOTE; i++)
		if (sm->remotes[i].guid)
			sm->remotes[i].state = SM_STATE_NOTACTIVE;
	sms_query(sm, true);
	if (!sm->elect_pending)
		elect_decide_now(sm);
}

/*
 * DISCOVERING (14.4.1.1): find the other SMs before touching anything:
 * a discovery that only reads (no PortStateChange cleared), then the
 * SMInfo of every port with IsSM.
 */
static void elect_start(struct sm *sm)
{
	int rc;

	if (sm->elect_running || sm->sweep)
		return;
	fabric_init(&sm->elect_fabric);
	rc = discover_start(&sm->elect_disc, sm->engine, &sm->elect_fabric,
			    false, on_elect_discovered, sm);
	if (rc < 0) {
		fabric_free(&sm->elect_fabric);
		log_err("ERR 1111: cannot start the election's discovery: %s:"
			" sweeping", strerror(-rc));
		heavy_sweep(sm);
		return;
	}
	sm->elect_running = true;
}

static void on_elect_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sm *sm = w->data;

	(void)loop;
	(void)revents;
	if (sm->state == SM_DISCOVERING) {
		elect_start(sm);
		return;
	}
	if (sm->state != SM_MASTER)
		return;
	/* The repair after another master was found (master_consider). */
	const struct fabric *f = &sm->fabric;
	if (!sm->sweep && sm->images)
		for (size_t i = 0; i < f->n_nodes; i++)
			if (f->nodes[i].type == NODE_TYPE_SWITCH)
				lft_images_forget(sm->images, f->nodes[i].guid);
	sm_event(sm, SM_EV_CHANGE);
}

/* ---- standby: watch the master */

static void poll_arm(struct sm *sm, double after)
{
	ev_timer_stop(sm->loop, &sm->poll_timer);
	ev_timer_set(&sm->poll_timer, after, 0.);
	ev_timer_start(sm->loop, &sm->poll_timer);
}

static void master_lost(struct sm *sm, const char *why)
{
	char cause[160];

	snprintf(cause, sizeof(cause), "master 0x%016" PRIx64 " LID %u: %s",
		 sm->master_guid, sm->master_lid, why);
	for (unsigned i = 0; i < SM_MAX_REMOTE; i++)
		if (sm->remotes[i].guid == sm->master_guid)
			sm->remotes[i].state = SM_STATE_NOTACTIVE;
	sm->master_lid = 0;
	sm->master_guid = 0;
	transition(sm, SM_DISCOVERING, 1107, cause);
	sm->takeover = true;
	sm->elect_waits = 0;
	elect_start(sm);
}

static void on_poll(void *arg, int status, const void *mad, size_t len)
{
	struct sm *sm = arg;
	const struct smp_sm_info *si;

	if (status == -ECANCELED)
		return;
	sm->poll_inflight = false;
	if (sm->state != SM_STANDBY)
		return;
	if (!sminfo_answer(sm, status, mad, len, &si) ||
	    be64toh(si->guid) != sm->master_guid) {
		sm->poll_misses++;
		log_ratelimited(LOG_LVL_WARN, 1108, "master 0x%016" PRIx64
				" LID %u did not answer SMInfo (%u of %u)",
				sm->master_guid, sm->master_lid, sm->poll_misses,
				poll_limit(sm));
		if (sm->poll_misses >= poll_limit(sm)) {
			char why[96];
			snprintf(why, sizeof(why), "%u SMInfo polls unanswered",
				 sm->poll_misses);
			master_lost(sm, why);
			return;
		}
		poll_arm(sm, 0.);	/* at once: confirm or clear */
		return;
	}
	struct sm_remote *r;
	remote_note_si(sm, si, sm->master_lid, &r);
	sm->poll_misses = 0;
	if (r->state != SM_STATE_MASTER) {
		/* It handed over, stood down or restarted: look again. */
		char why[96];
		snprintf(why, sizeof(why), "it is %s now",
			 sm_state_name(r->state));
		master_lost(sm, why);
		return;
	}
	poll_arm(sm, poll_interval(sm));
}

static void on_poll_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sm *sm = w->data;
	struct smp_lid smp;
	struct mad_addr addr = { .lid = sm->master_lid, .qpn = 0 };

	(void)loop;
	(void)revents;
	if (sm->state != SM_STANDBY || sm->poll_inflight)
		return;
	if (!sm->master_lid) {
		master_lost(sm, "no LID to poll");
		return;
	}
	mad_build_smp_lid(&smp, MAD_METHOD_GET, SMP_ATTR_SM_INFO, 0);
	fill_sm_info(sm, (struct smp_sm_info *)smp.data, true);
	if (mad_engine_submit(sm->engine, &smp, MAD_SIZE, &addr, on_poll, sm) == 0)
		sm->poll_inflight = true;
	else
		poll_arm(sm, poll_interval(sm));
}

/* ---- handover (14.4.1.2) */

struct handover_req {
	struct sm *sm;
	struct sm_remote to;
};

static void stop_now(struct sm *sm)
{
	ev_timer_stop(sm->loop, &sm->stop_timer);
	sm_event(sm, SM_EV_STOP);
}

static void on_handover(void *arg, int status, const void *mad, size_t len)
{
	struct handover_req *rq = arg;
	struct sm *sm = rq->sm;
	const struct smp_sm_info *si;
	struct sm_remote to = rq->to;

	free(rq);
	if (status == -ECANCELED)
		return;
	sm->handing_over = false;
	bool ok = sminfo_answer(sm, status, mad, len, &si);
	if (sm->stopping) {
		if (ok)
			log_info("ERR 1109: handed over to 0x%016" PRIx64
				 " LID %u: exiting", to.guid, to.lid);
		else
			log_warnx("ERR 1112: handover to 0x%016" PRIx64 " LID"
				  " %u not answered: exiting", to.guid, to.lid);
		stop_now(sm);
		return;
	}
	if (!ok) {
		log_warnx("ERR 1112: handover to 0x%016" PRIx64 " LID %u not"
			  " answered: staying master", to.guid, to.lid);
		return;
	}
	to.state = SM_STATE_MASTER;
	if (sm->state == SM_MASTER)
		enter_standby(sm, &to, 1109, "handed over to a better SM");
}

/* SubnSet(SMInfo, HANDOVER) to `r`; on its answer we stand by (or, on
 * SIGTERM, exit). */
static void handover_to(struct sm *sm, const struct sm_remote *r)
{
	struct handover_req *rq;
	struct smp_lid smp;
	struct mad_addr addr = { .lid = r->lid, .qpn = 0 };

	if (sm->handing_over || !r->lid)
		return;
	rq = calloc(1, sizeof(*rq));
	if (!rq)
		return;
	rq->sm = sm;
	rq->to = *r;
	mad_build_smp_lid(&smp, MAD_METHOD_SET, SMP_ATTR_SM_INFO,
			  SMINFO_HANDOVER);
	fill_sm_info(sm, (struct smp_sm_info *)smp.data, true);
	if (mad_engine_submit(sm->engine, &smp, MAD_SIZE, &addr, on_handover,
			      rq) < 0) {
		free(rq);
		if (sm->stopping)
			stop_now(sm);
		return;
	}
	sm->handing_over = true;
	sm->handover_guid = r->guid;
	sm->handover_at = ev_now(sm->loop);
}

static void on_sms_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sm *sm = w->data;

	(void)loop;
	(void)revents;
	if (sm->state == SM_MASTER)
		sms_query(sm, false);
}

/* SIGTERM: hand over to the best standby heard from lately, or exit. */
static void handover_or_stop(struct sm *sm)
{
	const struct sm_remote *r;

	r = sm_best_standby(sm->remotes, SM_MAX_REMOTE,
			    ev_now(sm->loop) - SM_REMOTE_FRESH);
	if (!r) {
		log_info("ERR 1121: stopping: no standby SM found: exiting");
		stop_now(sm);
		return;
	}
	log_info("ERR 1113: stopping: handing over to 0x%016" PRIx64 " LID %u"
		 " priority %u first", r->guid, r->lid, r->priority);
	ev_timer_stop(sm->loop, &sm->stop_timer);
	ev_timer_set(&sm->stop_timer, SM_HANDOVER_WAIT, 0.);
	ev_timer_start(sm->loop, &sm->stop_timer);
	handover_to(sm, r);
	if (!sm->handing_over && sm->stopping)
		stop_now(sm);
}

/*
 * SIGTERM with no standby known.  An SM that started since our last
 * sweep has not been heard from: an ibsm standby polls us at once when it
 * stands by, but OpenSM polls only every 10 s and without its SMInfo
 * (who polls is not known from the poll).  So look for it the way a
 * sweep finds SMs (14.4.1: PortInfo:CapabilityMask.IsSM, then SMInfo):
 * read the PortInfo of every end port of the model (LID-routed, one Get
 * each, as a light sweep), the SMInfo of each with IsSM set (at once when
 * the model has it set already), then hand over to the best standby.  At
 * most SM_PROBE_WAIT s: a port that does not answer by then is not
 * waited for.
 */
#define SM_PROBE_WAIT		0.5	/* s */

struct probe_req {
	struct sm *sm;
	uint16_t lid;
};

static void probe_done(struct sm *sm)
{
	if (!sm->probing)
		return;
	sm->probing = false;
	ev_timer_stop(sm->loop, &sm->stop_timer);
	handover_or_stop(sm);
}

/* One Get of the probe is over (answered or not). */
static void probe_answered(struct sm *sm)
{
	if (sm->probing && sm->probe_pending && --sm->probe_pending == 0)
		probe_done(sm);
}

static void probe_sminfo(struct sm *sm, uint16_t lid)
{
	if (sminfo_get(sm, lid, NULL, 0, SMQ_PROBE) == 0)
		sm->probe_pending++;
}

static void on_probe_port(void *arg, int status, const void *mad, size_t len)
{
	struct probe_req *rq = arg;
	struct sm *sm = rq->sm;
	const struct smp_lid *smp = mad;
	uint16_t lid = rq->lid;

	free(rq);
	if (status == -ECANCELED)
		return;
	if (sm->probing && status == 0 && len >= MAD_SIZE &&
	    !(be16toh(smp->hdr.status) & 0x7fff)) {
		const struct smp_port_info *pi = (const void *)smp->data;

		if (be32toh(pi->cap_mask) & PI_CAP_IS_SM)
			probe_sminfo(sm, lid);
	}
	probe_answered(sm);
}

static void probe_start(struct sm *sm)
{
	const struct fabric *f = &sm->fabric;
	unsigned ports = 0;

	sm->probing = true;
	sm->probe_pending = 0;
	for (int32_t id = 0; id < (int32_t)f->n_nodes; id++) {
		const struct fab_node *n = fabric_node(f, id);
		bool sw = n->type == NODE_TYPE_SWITCH;
		unsigned last = sw ? 0 : n->num_ports;

		for (unsigned pn = sw ? 0 : 1; pn <= last; pn++) {
			const struct fab_port *p = &n->ports[pn];
			struct mad_addr addr = { .lid = p->lid, .qpn = 0 };
			struct probe_req *rq;
			struct smp_lid smp;

			if (!p->valid || !p->lid || (id == f->local_node &&
			    (sw || pn == f->local_port)))
				continue;
			ports++;
			if (be32toh(p->pi.cap_mask) & PI_CAP_IS_SM) {
				probe_sminfo(sm, p->lid);
				continue;
			}
			rq = calloc(1, sizeof(*rq));
			if (!rq)
				continue;
			rq->sm = sm;
			rq->lid = p->lid;
			mad_build_smp_lid(&smp, MAD_METHOD_GET, SMP_ATTR_PORT_INFO,
					  pn);
			if (mad_engine_submit(sm->engine, &smp, MAD_SIZE, &addr,
					      on_probe_port, rq) == 0)
				sm->probe_pending++;
			else
				free(rq);
		}
	}
	log_info("ERR 1120: stopping: no standby heard from: looking for SMs"
		 " on %u ports (at most %.1f s)", ports, SM_PROBE_WAIT);
	if (!sm->probe_pending) {
		probe_done(sm);
		return;
	}
	ev_timer_set(&sm->stop_timer, SM_PROBE_WAIT, 0.);
	ev_timer_start(sm->loop, &sm->stop_timer);
}

static void on_stop_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sm *sm = w->data;

	(void)loop;
	(void)revents;
	if (sm->probing) {
		probe_done(sm);		/* the ports that answered are enough */
		return;
	}
	log_warnx("ERR 1112: no answer to the handover in %.1f s: exiting",
		  SM_HANDOVER_WAIT);
	stop_now(sm);
}

/* SIGTERM/SIGINT: a master hands over to the best standby first. */
static void stop_gracefully(struct sm *sm)
{
	if (sm->stopping) {
		stop_now(sm);
		return;
	}
	if (sm->state != SM_MASTER || sm->cfg.once) {
		sm_event(sm, SM_EV_STOP);
		return;
	}
	sm->stopping = true;
	if (sm_best_standby(sm->remotes, SM_MAX_REMOTE,
			    ev_now(sm->loop) - SM_REMOTE_FRESH))
		handover_or_stop(sm);
	else
		probe_start(sm);
}

/* Send an SMInfo Set that needs no follow-up (ACKNOWLEDGE). */
static void on_ack_sent(void *arg, int status, const void *mad, size_t len)
{
	(void)arg;
	(void)mad;
	(void)len;
	if (status < 0 && status != -ECANCELED)
		log_debug("ACKNOWLEDGE not answered: %s", strerror(-status));
}

static void send_control(struct sm *sm, uint16_t lid, uint32_t mod)
{
	struct smp_lid smp;
	struct mad_addr addr = { .lid = lid, .qpn = 0 };

	if (!lid)
		return;
	mad_build_smp_lid(&smp, MAD_METHOD_SET, SMP_ATTR_SM_INFO, mod);
	fill_sm_info(sm, (struct smp_sm_info *)smp.data, true);
	(void)mad_engine_submit(sm->engine, &smp, MAD_SIZE, &addr, on_ack_sent,
				sm);
}

void sm_event(struct sm *sm, enum sm_event ev)
{
	switch (ev) {
	case SM_EV_START:
		sm->stats.started = ev_time();
		transition(sm, SM_DISCOVERING, 1100, "started");
		if (sm->cfg.once)
			heavy_sweep(sm);	/* -o: one sweep, no election */
		else
			elect_start(sm);
		break;
	case SM_EV_SWEEP_DONE:
		/* A sweep that ends after we stood down programs nothing more. */
		if (sm->state == SM_STANDBY || sm->state == SM_NOTACTIVE)
			break;
		subnet_up(sm);
		break;
	case SM_EV_SWEEP_FAILED:
		if (sm->state == SM_STANDBY || sm->state == SM_NOTACTIVE)
			break;
		sweep_failed(sm);
		break;
	case SM_EV_ELECT_DONE:
		elect_decide_now(sm);
		break;
	case SM_EV_MASTER_LOST:
		if (sm->state == SM_STANDBY)
			master_lost(sm, "reported lost");
		break;
	case SM_EV_HANDOVER:
		/* 14.4.1.2: a standby given the master role takes it now and
		 * sweeps; the LIDs ports hold are kept (sm/lid.c). */
		if (sm->state == SM_MASTER || sm->state == SM_NOTACTIVE)
			break;
		ev_timer_stop(sm->loop, &sm->elect_timer);
		transition(sm, SM_MASTER, 1114, "HANDOVER from the master");
		sm->master_since = ev_now(sm->loop);
		sm->master_lid = 0;
		sm->master_guid = 0;
		if (standby_sync_adopt(sm))
			sm->rereg_done = true;
		heavy_sweep(sm);
		break;
	case SM_EV_YIELD:
		break;
	case SM_EV_CHANGE:
		if (sm->state == SM_NOTACTIVE || sm->state == SM_STANDBY)
			break;
		ev_timer_stop(sm->loop, &sm->light_timer);
		heavy_sweep(sm);
		break;
	case SM_EV_LIGHT_TIMER:
		if (sm->state != SM_MASTER)
			break;
		if (sm->incomplete) {
			/* Parts of the fabric did not answer last time. */
			heavy_sweep(sm);
			break;
		}
		if (!sm->sweep && !sm->light && sweep_light_start(sm) < 0)
			log_warnx("ERR 0303: cannot start a light sweep");
		sms_query(sm, false);	/* the other SMs' states */
		if (sm->state == SM_MASTER)
			light_timer_arm(sm);
		break;
	case SM_EV_LIGHT_DONE:
		if (sm->change_pending && !sm->sweep &&
		    sm->state != SM_NOTACTIVE && sm->state != SM_STANDBY) {
			ev_timer_stop(sm->loop, &sm->light_timer);
			heavy_sweep(sm);
		}
		break;
	case SM_EV_TRAP:
		if (sm->state == SM_NOTACTIVE || sm->state == SM_STANDBY)
			break;
		trap_holdoff(sm);
		break;
	case SM_EV_PORT_UP:
		if (!sm->port_down)
			break;
		sm->port_down = false;
		ev_timer_stop(sm->loop, &sm->port_timer);
		heavy_sweep(sm);
		break;
	case SM_EV_STOP:
		ev_timer_stop(sm->loop, &sm->trap_timer);
		ev_timer_stop(sm->loop, &sm->port_timer);
		ev_timer_stop(sm->loop, &sm->poll_timer);
		ev_timer_stop(sm->loop, &sm->elect_timer);
		ev_timer_stop(sm->loop, &sm->stop_timer);
		ev_timer_stop(sm->loop, &sm->sms_timer);
		sm->elect_abort = true;
		if (sm->state != SM_NOTACTIVE)
			transition(sm, SM_NOTACTIVE, 1115, "stopped");
		ev_break(sm->loop, EVBREAK_ALL);
		break;
	}
	/* systemd: READY=1, STATUS= (sm/notify.c); nothing without it. */
	notify_event(sm, ev);
}

/* --------------------------------------------------------- SMInfo agent */

/*
 * Answer an SMP on the route it came by: a DR request goes back with the
 * direction bit set and its return path as it came; a LID-routed one goes
 * back to its source LID (none: no answer).  `status` is the MAD status;
 * `data` (64 bytes) the attribute, or NULL to echo the request's.
 */
static void smp_reply(struct sm *sm, const void *req, const struct mad_addr *from,
		      uint16_t status, const void *data)
{
	uint8_t resp[MAD_SIZE];
	struct mad_hdr *h = (struct mad_hdr *)resp;
	struct mad_addr to = { .lid = from->lid, .qpn = 0 };
	size_t data_off = offsetof(struct smp_lid, data);

	memcpy(resp, req, MAD_SIZE);
	h->method = MAD_METHOD_GET | MAD_METHOD_RESP;
	if (h->mgmt_class == MAD_CLASS_SMI_DR) {
		status |= SMP_DR_DIRECTION;
		to.lid = 0xffff;
	} else if (!to.lid) {
		log_debug("SMP with no source LID: not answered");
		return;
	}
	h->status = htobe16(status);
	if (data)
		memcpy(resp + data_off, data, SMP_DATA_SIZE);
	mad_engine_send_oneway(sm->engine, resp, MAD_SIZE, &to);
}

/*
 * SMInfo Get (14.2.5.13): anyone may ask.  The requester's own SMInfo may
 * be the payload (ibsm polling us; OpenSM sends an empty one).  The spec
 * gives SM_Key only to a requester that passes the M_Key check; ibsm sets
 * no M_Key, so every requester does, as with OpenSM: our key goes back
 * unless the requester presents another, non-zero key (an SM of another
 * SM_Key), which gets it zeroed.  A master polled by a better standby
 * hands over to it (14.4.1.2).
 */
static void on_sm_info(void *arg, const void *mad, size_t len,
		       const struct mad_addr *from)
{
	struct sm *sm = arg;
	uint8_t data[SMP_DATA_SIZE] = { 0 };
	const struct mad_hdr *h = mad;
	const struct smp_sm_info *rq;
	bool keyed;

	if (len != MAD_SIZE)
		return;
	rq = (const struct smp_sm_info *)((const uint8_t *)mad +
		(h->mgmt_class == MAD_CLASS_SMI_DR ? offsetof(struct smp_dr, data)
						   : offsetof(struct smp_lid, data)));
	keyed = be64toh(rq->sm_key) == sm_key(sm);
	fill_sm_info(sm, (struct smp_sm_info *)data, keyed || !rq->sm_key);
	smp_reply(sm, mad, from, 0, data);
	if (!keyed || !rq->guid || be64toh(rq->guid) == sm->port_guid ||
	    h->mgmt_class != MAD_CLASS_SMI || !from->lid)
		return;
	uint8_t st = rq->prio_state & 0xf;
	if (st != SM_STATE_STANDBY && st != SM_STATE_DISCOVERING)
		return;
	struct sm_remote *r;
	remote_note_si(sm, rq, from->lid, &r);
	master_consider(sm, r, false);
}

/* How long after our HANDOVER its ACKNOWLEDGE is taken (s). */
#define SM_ACK_WINDOW		5.0

/*
 * Who may send which SMInfo Set (14.4.1; OpenSM checks the same):
 * HANDOVER, DISABLE, STANDBY and DISCOVER come from the master only, so
 * the sender's SMInfo (the payload) must say MASTER; ACKNOWLEDGE answers
 * a HANDOVER, so it is taken only from the SM we handed over to, within
 * SM_ACK_WINDOW s of it.  NULL when the Set may be obeyed, else why not.
 */
static const char *set_refused(const struct sm *sm, uint32_t mod,
			       const struct smp_sm_info *rq)
{
	if (mod == SMINFO_ACKNOWLEDGE) {
		if (!sm->handover_guid ||
		    be64toh(rq->guid) != sm->handover_guid ||
		    ev_now(sm->loop) - sm->handover_at > SM_ACK_WINDOW)
			return "no HANDOVER of ours to acknowledge";
		return NULL;
	}
	if ((rq->prio_state & 0xf) != SM_STATE_MASTER)
		return "only a master sends it";
	return NULL;
}

/*
 * SubnSet(SMInfo) (14.4.1, the SMInfo control packets): the
 * AttributeModifier says what to do, the payload is the sender's SMInfo
 * and must carry our SM_Key: an SM of another key is ignored.
 */
static void on_sm_info_set(void *arg, const void *mad, size_t len,
			   const struct mad_addr *from)
{
	struct sm *sm = arg;
	const struct smp_lid *smp = mad;
	const struct mad_hdr *h = mad;
	const struct smp_sm_info *rq;
	uint8_t data[SMP_DATA_SIZE] = { 0 };
	uint32_t mod;
	bool lr;

	if (len != MAD_SIZE)
		return;
	lr = h->mgmt_class == MAD_CLASS_SMI;
	rq = (const struct smp_sm_info *)((const uint8_t *)mad +
		(lr ? offsetof(struct smp_lid, data) : offsetof(struct smp_dr, data)));
	mod = be32toh(smp->hdr.attr_mod);
	if (be64toh(rq->sm_key) != sm_key(sm)) {
		log_ratelimited(LOG_LVL_WARN, 1110, "SMInfo %s from LID %u (SM"
				" 0x%016" PRIx64 ") with another SM_Key: ignored",
				sminfo_control_name(mod), from->lid,
				be64toh(rq->guid));
		return;
	}
	if (mod < SMINFO_HANDOVER || mod > SMINFO_DISCOVER) {
		smp_reply(sm, mad, from, MAD_STATUS_INVALID_FIELD, NULL);
		return;
	}
	const char *bad = set_refused(sm, mod, rq);
	if (bad) {
		log_ratelimited(LOG_LVL_WARN, 1122, "SMInfo %s from LID %u (SM"
				" 0x%016" PRIx64 ", %s): refused: %s",
				sminfo_control_name(mod), from->lid,
				be64toh(rq->guid),
				sm_state_name(rq->prio_state & 0xf), bad);
		smp_reply(sm, mad, from, MAD_STATUS_INVALID_FIELD, NULL);
		return;
	}
	log_info("SMInfo %s from LID %u (SM 0x%016" PRIx64 " priority %u)",
		 sminfo_control_name(mod), from->lid, be64toh(rq->guid),
		 rq->prio_state >> 4);
	struct sm_remote *r = NULL;
	if (rq->guid && be64toh(rq->guid) != sm->port_guid)
		remote_note_si(sm, rq, lr ? from->lid : 0, &r);
	switch (mod) {
	case SMINFO_HANDOVER:
		sm_event(sm, SM_EV_HANDOVER);
		break;
	case SMINFO_ACKNOWLEDGE:
		break;		/* the handover's answer did the work */
	case SMINFO_DISABLE:
		if (sm->state != SM_NOTACTIVE) {
			ev_timer_stop(sm->loop, &sm->light_timer);
			ev_timer_stop(sm->loop, &sm->elect_timer);
			transition(sm, SM_NOTACTIVE, 1116, "DISABLE from another SM");
		}
		break;
	case SMINFO_STANDBY:
		if (sm->state == SM_DISCOVERING && r && r->lid) {
			r->state = SM_STATE_MASTER;
			enter_standby(sm, r, 1117, "STANDBY from the master");
		}
		break;
	case SMINFO_DISCOVER:
		if (sm->state == SM_NOTACTIVE || sm->state == SM_STANDBY) {
			transition(sm, SM_DISCOVERING, 1118, "DISCOVER from another SM");
			elect_start(sm);
		}
		break;
	}
	fill_sm_info(sm, (struct smp_sm_info *)data, true);
	smp_reply(sm, mad, from, 0, data);
	if (mod == SMINFO_HANDOVER && lr && from->lid)
		send_control(sm, from->lid, SMINFO_ACKNOWLEDGE);
}

/* Shutdown, after the engine is freed: the election's discovery. */
void sm_election_free(struct sm *sm)
{
	if (sm->elect_disc) {
		discover_free(sm->elect_disc);
		sm->elect_disc = NULL;
		fabric_free(&sm->elect_fabric);
	}
}

/* ------------------------------------------------------------- traps */

/*
 * The trap budget of one source (token bucket).  Returns false when the
 * source is over its rate.  A source is a CA port's LID range (the SLID
 * with the LMC bits cleared, so a port with LMC 7 does not get 128
 * budgets); switch LIDs are never inside a CA port's aligned range.  The
 * table is bounded: a new source takes a free slot, else the slot idle
 * the longest.
 */
static bool trap_budget(struct sm *sm, uint16_t lid)
{
	ev_tstamp now = ev_now(sm->loop);
	struct trap_bucket *b = NULL, *victim = NULL;

	lid &= (uint16_t)~((1u << sm->cfg.lmc) - 1);
	if (!lid)
		lid = 0xffff;		/* LID 0 of an LMC range: still a key */
	for (unsigned i = 0; i < sm_trap_sources(sm); i++) {
		struct trap_bucket *t = &sm->trap_buckets[i];

		if (t->lid == lid) {
			b = t;
			break;
		}
		if (!t->lid) {
			if (!victim || victim->lid)
				victim = t;
		} else if (!victim || (victim->lid && t->last < victim->last)) {
			victim = t;
		}
	}
	if (!b) {
		b = victim;
		b->lid = lid;
		b->tokens = sm_trap_burst(sm);
		b->last = now;
	}
	b->tokens += (now - b->last) * sm_trap_rate(sm);
	if (b->tokens > sm_trap_burst(sm))
		b->tokens = sm_trap_burst(sm);
	b->last = now;
	if (b->tokens < 1.)
		return false;
	b->tokens -= 1.;
	return true;
}

/*
 * The port of the published model that owns `lid` (switch port 0 or a
 * CA/router port, with its LMC range).  Every trap needs the port of its
 * source and of its IssuerLID, and traps come from anywhere (a flood from
 * unknown or spoofed LIDs is rejected before any budget), so this must
 * not walk the model: it is one look-up in the SA's LID index
 * (sm/sa/index.c), built once per model generation for the SA and the
 * trap receiver alike.
 */
static bool port_by_lid(const struct fabric *f, uint16_t lid, int32_t *node,
			uint8_t *port)
{
	struct sa_view v = { .f = f };
	struct port_ref r;

	if (lid_lookup(&v, lid, &r) != 1)
		return false;
	*node = r.node;
	*port = r.port;
	return true;
}

enum trap_verdict {
	TRAP_SWEEP,		/* accepted: report it, then a heavy sweep */
	TRAP_REPORT,		/* accepted: report it only */
	TRAP_QUIET,		/* accepted: neither (port error counters) */
	TRAP_REJECT,		/* forged or not ours to take from the network */
};

/*
 * Decide about one trap (14.2.5.1, 13.4.8.3).  `src` is the LID it came
 * from (the LRH SLID as umad reports it).  A trap is taken only from the
 * port it says issued it: the IssuerLID must be the sender's own LID and
 * that port must be in the model of the last sweep (a source the SM does
 * not know yet is caught by the next light sweep instead).  Trap 128
 * (PortStateChange) is a switch's; traps 64-67 (GID in/out of service,
 * multicast group created/deleted) are the SA's own notices, made by
 * the SM (sweep.c's gid_notice) and never taken from the network.
 */
static enum trap_verdict trap_judge(struct sm *sm, const struct smp_notice *n,
				    uint16_t src, unsigned num)
{
	uint16_t issuer = be16toh(n->issuer_lid);
	int32_t node, inode;
	uint8_t port, iport;

	if (!src || !port_by_lid(&sm->fabric, src, &node, &port)) {
		log_ratelimited(LOG_LVL_WARN, 306, "trap %u from LID %u: no such"
				" port in the subnet: rejected", num, src);
		return TRAP_REJECT;
	}
	if (!port_by_lid(&sm->fabric, issuer, &inode, &iport) ||
	    inode != node || iport != port) {
		log_ratelimited(LOG_LVL_WARN, 305, "trap %u from LID %u claims"
				" issuer LID %u: rejected", num, src, issuer);
		return TRAP_REJECT;
	}
	if (!notice_is_generic(n))
		return TRAP_REPORT;
	const struct fab_node *fn = fabric_node(&sm->fabric, node);
	switch (num) {
	case 64: case 65: case 66: case 67:
		log_ratelimited(LOG_LVL_WARN, 308, "trap %u from LID %u (node"
				" 0x%016" PRIx64 "): only the SM issues it:"
				" rejected", num, src, fn->guid);
		return TRAP_REJECT;
	case 128:
		if (fn->type != NODE_TYPE_SWITCH) {
			log_ratelimited(LOG_LVL_WARN, 307, "trap 128 from LID"
					" %u: a %s, not a switch: rejected", src,
					fabric_node_type_str(fn->type));
			return TRAP_REJECT;
		}
		return TRAP_SWEEP;
	case 144:		/* capability mask, node description changed */
		return TRAP_SWEEP;
	case 129: case 130: case 131:
		/* Link integrity, buffer overrun, flow control watchdog:
		 * error counters of a port, not topology (OpenSM does not
		 * report them either). */
		return TRAP_QUIET;
	default:
		return TRAP_REPORT;
	}
}

/*
 * A trap (SubnTrap, 14.2.5.1): acknowledge it with a Trap Repress on the
 * same TID so the sender stops repeating it, then decide.  Every trap
 * that comes with a source LID is repressed, accepted or not, as OpenSM
 * does: the Repress goes back to the sender only, one per trap, and a
 * genuine port that we refuse (unknown yet, say) stops repeating it.
 */
static void on_trap(void *arg, const void *mad, size_t len,
		    const struct mad_addr *from)
{
	struct sm *sm = arg;
	const struct smp_lid *smp = mad;
	const struct smp_notice *n = (const struct smp_notice *)smp->data;
	uint8_t resp[MAD_SIZE];
	struct mad_addr to = { .lid = from->lid, .qpn = 0 };
	/* SLID 0: from our own node (OpenSM does the same). */
	uint16_t src = from->lid ? from->lid : sm_local_lid(sm);

	if (len != MAD_SIZE)
		return;
	sm->stats.traps++;
	memcpy(resp, mad, MAD_SIZE);
	((struct mad_hdr *)resp)->method = MAD_METHOD_TRAP_REPRESS;
	((struct mad_hdr *)resp)->status = 0;
	if (to.lid)
		mad_engine_send_oneway(sm->engine, resp, MAD_SIZE, &to);

	unsigned num = notice_is_generic(n) ? be16toh(n->trap_num) : 0;
	int32_t snode;
	uint8_t sport;
	/* A source no port of the model has is rejected before it can take
	 * (or evict) a budget: spoofed LIDs do not refill a genuine port's. */
	if (!port_by_lid(&sm->fabric, src, &snode, &sport)) {
		sm->stats.traps_rejected++;
		log_ratelimited(LOG_LVL_WARN, 306, "trap %u from LID %u: no such"
				" port in the subnet: rejected", num, src);
		return;
	}
	if (!trap_budget(sm, src)) {
		sm->stats.traps_limited++;
		log_ratelimited(LOG_LVL_WARN, 309, "trap %u from LID %u: over the"
				" rate of %g per second: dropped", num, src,
				sm_trap_rate(sm));
		return;
	}
	enum trap_verdict v = trap_judge(sm, n, src, num);
	if (v == TRAP_REJECT) {
		sm->stats.traps_rejected++;
		return;
	}
	log_ratelimited(LOG_LVL_INFO, 304, "trap %u from LID %u (issuer LID %u)",
			num, src, be16toh(n->issuer_lid));
	if (v == TRAP_REPORT || v == TRAP_SWEEP)
		sa_report_notice(sm, n, be16toh(n->issuer_lid));
	if (v == TRAP_SWEEP)
		sm_event(sm, SM_EV_TRAP);
}

/* ------------------------------------------------------- our own port */

static void on_port_info(void *arg, int status, const void *mad, size_t len)
{
	struct sm *sm = arg;
	const struct smp_dr *smp = mad;

	if (status == -ECANCELED)
		return;
	sm->port_polling = false;
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
	if (sm->port_down)
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
	if (!sm->port_down || sm->port_polling)
		return;
	mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_PORT_INFO,
			 sm->fabric.local_port, path, 0);
	if (mad_engine_submit(sm->engine, &smp, sizeof(smp), &addr,
			      on_port_info, sm) == 0)
		sm->port_polling = true;
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
		log_info("SIGHUP: heavy sweep requested");
		/* -F and -P again (a bad file keeps the old), then a sweep */
		(void)sm_reload(sm, NULL);
		return;
	}
	if (w->signum == SIGUSR1) {
		/* logrotate renamed the file: go on in a new one. */
		int rc = log_reopen();
		if (rc < 0)
			log_err("ERR 0313: SIGUSR1: cannot reopen the log file:"
				" %s", strerror(-rc));
		else
			log_info("SIGUSR1: log file reopened");
		return;
	}
	log_info("signal %d: exiting", w->signum);
	stop_gracefully(sm);
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
	sm->last_trap_sweep = ev_now(loop);
	sm->stats.trap_sweeps++;
	sm_event(sm, SM_EV_CHANGE);
}

static void on_log_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	log_ratelimit_flush();
}

#define LOG_FLUSH_PERIOD	10.	/* s: "N similar messages suppressed" */

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
	ev_timer_init(&sm->light_timer, on_light_timer, 0., 0.);
	sm->light_timer.data = sm;
	ev_timer_init(&sm->retry_timer, on_retry_timer, 0., 0.);
	sm->retry_timer.data = sm;
	ev_timer_init(&sm->trap_timer, on_trap_timer, 0., 0.);
	sm->trap_timer.data = sm;
	ev_timer_init(&sm->port_timer, on_port_timer, 0., 0.);
	sm->port_timer.data = sm;
	ev_timer_init(&sm->poll_timer, on_poll_timer, 0., 0.);
	sm->poll_timer.data = sm;
	ev_timer_init(&sm->elect_timer, on_elect_timer, 0., 0.);
	sm->elect_timer.data = sm;
	ev_timer_init(&sm->stop_timer, on_stop_timer, 0., 0.);
	sm->stop_timer.data = sm;
	ev_timer_init(&sm->sms_timer, on_sms_timer, 0., 0.);
	sm->sms_timer.data = sm;
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
	ev_timer_stop(sm->loop, &sm->light_timer);
	ev_timer_stop(sm->loop, &sm->retry_timer);
	ev_timer_stop(sm->loop, &sm->trap_timer);
	ev_timer_stop(sm->loop, &sm->port_timer);
	ev_timer_stop(sm->loop, &sm->poll_timer);
	ev_timer_stop(sm->loop, &sm->elect_timer);
	ev_timer_stop(sm->loop, &sm->stop_timer);
	ev_timer_stop(sm->loop, &sm->sms_timer);
	ev_ref(sm->loop);
	ev_timer_stop(sm->loop, &sm->log_timer);
	notify_stop(sm);
}

int sm_agents_start(struct sm *sm)
{
	static const uint8_t classes[] = { MAD_CLASS_SMI, MAD_CLASS_SMI_DR };
	int rc = 0;

	/* One host, one share of the receive queue, whatever its LMC. */
	if (sm->io) {
		umad_io_set_source_lmc(sm->io, sm->cfg.lmc);
		/* SMP answers nobody asked for never take a slot. */
		umad_io_set_tid_filter(sm->io, mad_engine_wire_tids(sm->engine));
	}

	for (unsigned i = 0; i < 2 && rc == 0; i++) {
		rc = mad_engine_on_unsolicited(sm->engine, classes[i],
					       MAD_METHOD_GET, SMP_ATTR_SM_INFO,
					       on_sm_info, sm);
		if (rc == 0)
			rc = mad_engine_on_unsolicited(sm->engine, classes[i],
						       MAD_METHOD_SET,
						       SMP_ATTR_SM_INFO,
						       on_sm_info_set, sm);
		if (rc == 0)
			rc = mad_engine_on_unsolicited(sm->engine, classes[i],
						       MAD_METHOD_TRAP,
						       SMP_ATTR_NOTICE, on_trap, sm);
	}
	return rc;
}
