/*
 * sminfo.c - the SM-to-SM protocol (IB spec 14.4): the election of
 * DISCOVERING (the SMInfo of every port with IsSM), the standby's polls
 * of its master, handover (to a better SM, and on SIGTERM), the SMInfo
 * agent that answers Gets and obeys Sets.  The state machine itself
 * (sm/ha/state.c) calls in through sm/ha/sminfo.h; every change of state goes
 * back through sm_transition().
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/engine.h"
#include "mad/wire.h"
#include "sm/discover.h"
#include "sm/ha/election.h"
#include "sm/program.h"
#include "sm/sm.h"
#include "sm/ha/fsm.h"
#include "sm/ha/sminfo.h"
#include "sm/ha/sminfo_guard.h"
#include "sm/ha/sync.h"

static void sms_query(struct sm *sm, bool election);

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
#define SM_WATCH_EVERY		0.2	/* s: traps check the master's port */
#define SM_STOP_SAME		0.1	/* s: a second SIGTERM as soon is the same */
#define SM_ISM_DELAY		0.1	/* s: trap 144 IsSM -> its SMInfo Get */

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
		log_info("SM %04u: STANDBY: %s", code, why);
		return;
	}
	sm_transition(sm, SM_STANDBY, code, why);
}

static void handover_to(struct sm *sm, const struct sm_remote *r);

/*
 * A master worse than us (priority, then lower GUID: 14.4.1.1) is there:
 * tell it with trap 144, at most every SM_TELL_EVERY s.  The worse
 * master must hand over to us (C14-60.2.1); an OpenSM master knows only
 * the SMs its sweeps found, and one that swept before our port had IsSM
 * (two SMs started together) would never learn of us: the trap makes it
 * sweep, read our SMInfo and hand over.
 */
#define SM_TELL_EVERY		1.0	/* s */

static void tell_worse_master(struct sm *sm, const struct sm_remote *r)
{
	ev_tstamp now = ev_now(sm->loop);

	if (!r->lid || r->state != SM_STATE_MASTER ||
	    !sm_better((uint8_t)sm->cfg.sm_priority, sm->port_guid, r->priority,
			  r->guid) ||
	    (sm->told_worse_at > 0. && now - sm->told_worse_at < SM_TELL_EVERY))
		return;
	sm->told_worse_at = now;
	log_info("master 0x%016" PRIx64 " LID %u priority %u is worse than us:"
		 " trap 144 to it", r->guid, r->lid, r->priority);
	(void)trap_send_sm_change(sm, r->lid);
}

/*
 * Death evidence: a standby about to wait for more polls of a
 * master that did not answer first reads the port of the master's switch
 * that faces it (directed route, from the election's model).  A port
 * that is down means the master is cut off: take over at once.  A port
 * that is up, or a switch that does not answer or is no longer the one
 * the model knew there, is no evidence: the poll rule decides.  A master
 * on a switch's port 0 has no such port: the polls alone decide.
 */
static void watch_set(struct sm *sm, const struct sm_remote *m)
{
	const struct fabric *f = &sm->elect_fabric;

	memset(&sm->watch, 0, sizeof(sm->watch));
	for (size_t id = 0; id < f->n_nodes; id++) {
		const struct fab_node *n = fabric_node(f, (int32_t)id);

		if (n->type == NODE_TYPE_SWITCH)
			continue;
		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (!p->valid || p->guid != m->guid ||
			    p->peer_node == FAB_NONE)
				continue;
			const struct fab_node *sw = fabric_node(f, p->peer_node);
			if (sw->type != NODE_TYPE_SWITCH)
				return;
			sm->watch.master = m->guid;
			sm->watch.sw_guid = sw->guid;
			sm->watch.sw_lid = be16toh(sw->ports[0].pi.lid);
			sm->watch.port = p->peer_port;
			sm->watch.hops = sw->hops;
			memcpy(sm->watch.path, sw->path, sizeof(sm->watch.path));
			log_debug("watching master 0x%016" PRIx64 " at port %u"
				  " of switch 0x%016" PRIx64, m->guid,
				  p->peer_port, sw->guid);
			return;
		}
	}
}

/* Is the answer to the watch's Get still about our master? */
static bool watch_current(struct sm *sm, int status, const void *mad,
			  size_t len)
{
	if (status == -ECANCELED)
		return false;
	sm->watch.inflight = false;
	if (sm->state != SM_STANDBY || sm->watch.master != sm->master_guid)
		return false;
	return status >= 0 && len >= MAD_SIZE &&
	       !(be16toh(((const struct mad_hdr *)mad)->status) & 0x7fff);
}

static void on_watch_port(void *arg, int status, const void *mad, size_t len)
{
	struct sm *sm = arg;

	if (!watch_current(sm, status, mad, len))
		return;
	const struct smp_port_info *pi =
		(const void *)((const struct smp_dr *)mad)->data;
	if (pi_port_state(pi) != PORT_STATE_DOWN) {
		log_debug("master 0x%016" PRIx64 ": port %u of switch 0x%016"
			  PRIx64 " is up (state %u): polls decide",
			  sm->master_guid, sm->watch.port, sm->watch.sw_guid,
			  pi_port_state(pi));
		return;
	}
	char why[128];
	snprintf(why, sizeof(why), "its link is down (port %u of switch"
		 " 0x%016" PRIx64 ", physical state %u)", sm->watch.port,
		 sm->watch.sw_guid, pi_phys_state(pi));
	log_warnx("ERR 1123: master 0x%016" PRIx64 " LID %u: %s: taking"
		  " over now", sm->master_guid, sm->master_lid, why);
	sminfo_master_lost(sm, why);
}

static void on_watch_node(void *arg, int status, const void *mad, size_t len)
{
	struct sm *sm = arg;
	struct smp_dr smp;
	struct mad_addr addr = { .lid = 0xffff, .qpn = 0 };

	if (!watch_current(sm, status, mad, len))
		return;
	const struct smp_node_info *ni =
		(const void *)((const struct smp_dr *)mad)->data;
	if (be64toh(ni->node_guid) != sm->watch.sw_guid ||
	    sm->watch.port > ni->num_ports) {
		log_debug("master's switch 0x%016" PRIx64 " not at its path:"
			  " polls decide", sm->watch.sw_guid);
		return;
	}
	mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_PORT_INFO,
			 sm->watch.port, sm->watch.path, sm->watch.hops);
	if (mad_engine_submit(sm->engine, &smp, sizeof(smp), &addr,
			      on_watch_port, sm) == 0)
		sm->watch.inflight = true;
}

/* Read the master's switch port now (NodeInfo to be sure of the switch,
 * then PortInfo), unless a read is under way or, for a `trap`, one was
 * made within SM_WATCH_EVERY s (traps come at the sender's pace). */
void sminfo_master_check(struct sm *sm, bool trap)
{
	struct smp_dr smp;
	struct mad_addr addr = { .lid = 0xffff, .qpn = 0 };
	ev_tstamp now = ev_now(sm->loop);

	if (sm->state != SM_STANDBY || !sm->watch.master ||
	    sm->watch.master != sm->master_guid || sm->watch.inflight)
		return;
	if (trap && sm->watch.last > 0. && now - sm->watch.last < SM_WATCH_EVERY)
		return;
	sm->watch.last = now;
	mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0,
			 sm->watch.path, sm->watch.hops);
	if (mad_engine_submit(sm->engine, &smp, sizeof(smp), &addr,
			      on_watch_node, sm) == 0)
		sm->watch.inflight = true;
}

/* A trap that came to us, a standby (sm/trap.c): one about the master's
 * switch (128, a link state changed there) is worth a look. */
void sminfo_standby_trap(struct sm *sm, uint16_t src, unsigned num)
{
	if (num == 128 && src && src == sm->watch.sw_lid)
		sminfo_master_check(sm, true);
}

/* The election's discovery is over and every SMInfo Get answered or
 * failed: apply 14.4.1.1. */
void sminfo_elect_decide(struct sm *sm)
{
	int who;
	enum elect_verdict v;

	sm->elect_running = false;
	if (sm->state != SM_DISCOVERING) {
		fabric_free(&sm->elect_fabric);
		return;
	}
	v = elect_decide(sm->cfg.sm_priority, sm->port_guid, sm->remotes,
			 SM_MAX_REMOTE, &who);
	if (v == ELECT_STANDBY)
		watch_set(sm, &sm->remotes[who]);
	fabric_free(&sm->elect_fabric);
	if (v == ELECT_STANDBY) {
		sm->elect_waits = 0;
		enter_standby(sm, &sm->remotes[who], 1102,
			      "discovery found a master");
		return;
	}
	if (v == ELECT_WAIT && sm->elect_waits < SM_ELECT_MAX_WAITS) {
		sm->elect_waits++;
		log_info("SM 1103: DISCOVERING: SM 0x%016" PRIx64 " (priority"
			 " %u, %s) is better and no master yet: looking again"
			 " in %.0f s", sm->remotes[who].guid,
			 sm->remotes[who].priority,
			 sm_state_name(sm->remotes[who].state), SM_ELECT_RETRY);
		ev_timer_set(&sm->elect_timer, SM_ELECT_RETRY, 0.);
		ev_timer_start(sm->loop, &sm->elect_timer);
		return;
	}
	sm->elect_waits = 0;
	log_info("SM 1104: DISCOVERING: no master and no better SM: sweeping"
		 " to become master");
	if (sm->takeover && standby_sync_adopt(sm))
		sm->rereg_done = true;	/* the SA state is the master's */
	sm_sweep_to_master(sm);
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
		sm_rogue_heard(sm, *si, 0, false);
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
 * after one of our sweeps.  Only an SM that was master needs its work
 * repaired (ERR 1119): one that says MASTER, or a fresh one that says
 * DISCOVERING or STANDBY with a non-zero ActCount.  The latter may have
 * been master of a part of the fabric that was cut off and joined again,
 * and stood down (it found us first) before we could see it as master;
 * an ibsm SM counts its sweeps in ActCount, so a brand-new ibsm standby
 * (it has not swept) says 0 and costs no repair sweep.  (OpenSM counts
 * its SMPs there: a new OpenSM standby still gets one repair.)
 */
static void master_consider(struct sm *sm, struct sm_remote *r, bool fresh)
{
	char why[160];

	if (sm->state != SM_MASTER || sm->stopping)
		return;
	switch (master_review(sm->cfg.sm_priority, sm->port_guid, r)) {
	case MASTER_KEEP:
		tell_worse_master(sm, r);
		if (r->state != SM_STATE_MASTER &&
		    (!fresh || r->state == SM_STATE_NOTACTIVE || !r->act_count))
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
		sm_transition(sm, SM_DISCOVERING, 1105, why);
		sm->elect_waits = 0;
		sminfo_elect_start(sm);
		break;
	case MASTER_HANDOVER:
		log_info("SM 1106: MASTER: SM 0x%016" PRIx64 " LID %u priority"
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
		sminfo_elect_decide(sm);
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
		sminfo_elect_decide(sm);
}

/*
 * DISCOVERING (14.4.1.1): find the other SMs before touching anything:
 * a discovery that only reads (no PortStateChange cleared), then the
 * SMInfo of every port with IsSM.
 */
void sminfo_elect_start(struct sm *sm)
{
	int rc;

	if (sm->elect_running || sm->sweep)
		return;
	fabric_init(&sm->elect_fabric);
	rc = discover_start(&sm->elect_disc, sm->engine, &sm->elect_fabric,
			    false, on_elect_discovered, sm);
	if (rc < 0) {
		fabric_free(&sm->elect_fabric);
		log_err_rc(rc, "ERR 1111: sweeping: cannot start the election's"
			   " discovery");
		sm_sweep_to_master(sm);
		return;
	}
	sm->elect_running = true;
}

void sminfo_elect_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sm *sm = w->data;

	(void)loop;
	(void)revents;
	if (sm->state == SM_DISCOVERING) {
		sminfo_elect_start(sm);
		return;
	}
	if (sm->state != SM_MASTER)
		return;
	/* The repair after another master was found (master_consider).  It
	 * may have set LIDs and LFTs of its own: nothing LID-routed until a
	 * sweep has verified the routes again (sm/sweep.c). */
	const struct fabric *f = &sm->fabric;
	if (!sm->sweep && sm->images)
		for (size_t i = 0; i < f->n_nodes; i++)
			if (f->nodes[i].type == NODE_TYPE_SWITCH)
				lft_images_forget(sm->images, f->nodes[i].guid);
	sm->topo_changed = true;
	sm_event(sm, SM_EV_CHANGE);
}

/* ---- standby: watch the master */

static void poll_arm(struct sm *sm, double after)
{
	ev_timer_stop(sm->loop, &sm->poll_timer);
	ev_timer_set(&sm->poll_timer, after, 0.);
	ev_timer_start(sm->loop, &sm->poll_timer);
}

void sminfo_master_lost(struct sm *sm, const char *why)
{
	char cause[160];

	snprintf(cause, sizeof(cause), "master 0x%016" PRIx64 " LID %u: %s",
		 sm->master_guid, sm->master_lid, why);
	for (unsigned i = 0; i < SM_MAX_REMOTE; i++)
		if (sm->remotes[i].guid == sm->master_guid)
			sm->remotes[i].state = SM_STATE_NOTACTIVE;
	sm->master_lid = 0;
	sm->master_guid = 0;
	sm_transition(sm, SM_DISCOVERING, 1107, cause);
	sm->takeover = true;
	sm->elect_waits = 0;
	sminfo_elect_start(sm);
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
		sminfo_master_check(sm, false);	/* its link: down? */
		if (sm->poll_misses >= poll_limit(sm)) {
			char why[96];
			snprintf(why, sizeof(why), "%u SMInfo polls unanswered",
				 sm->poll_misses);
			sminfo_master_lost(sm, why);
			return;
		}
		poll_arm(sm, 0.);	/* at once: confirm or clear */
		return;
	}
	struct sm_remote *r;
	remote_note_si(sm, si, sm->master_lid, &r);
	sm->poll_misses = 0;
	tell_worse_master(sm, r);	/* a standby better than its master */
	if (r->state != SM_STATE_MASTER) {
		/* It handed over, stood down or restarted: look again. */
		char why[96];
		snprintf(why, sizeof(why), "it is %s now",
			 sm_state_name(r->state));
		sminfo_master_lost(sm, why);
		return;
	}
	poll_arm(sm, poll_interval(sm));
}

void sminfo_poll_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sm *sm = w->data;
	struct smp_lid smp;
	struct mad_addr addr = { .lid = sm->master_lid, .qpn = 0 };

	(void)loop;
	(void)revents;
	if (sm->state != SM_STANDBY || sm->poll_inflight)
		return;
	if (!sm->master_lid) {
		sminfo_master_lost(sm, "no LID to poll");
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
			log_info("SM 1109: handed over to 0x%016" PRIx64
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

void sminfo_sms_timer(struct ev_loop *loop, ev_timer *w, int revents)
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
		log_info("SM 1121: stopping: no standby SM found: exiting");
		stop_now(sm);
		return;
	}
	log_info("SM 1113: stopping: handing over to 0x%016" PRIx64 " LID %u"
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
	log_info("SM 1120: stopping: no standby heard from: looking for SMs"
		 " on %u ports (at most %.1f s)", ports, SM_PROBE_WAIT);
	if (!sm->probe_pending) {
		probe_done(sm);
		return;
	}
	ev_timer_set(&sm->stop_timer, SM_PROBE_WAIT, 0.);
	ev_timer_start(sm->loop, &sm->stop_timer);
}

void sminfo_stop_timer(struct ev_loop *loop, ev_timer *w, int revents)
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
void sminfo_stop_gracefully(struct sm *sm)
{
	if (sm->stopping) {
		/* The same request twice: GNU timeout (and systemd's mixed
		 * kill mode) signal the process and then its group, so a
		 * second SIGTERM comes within a moment of the first.  Only a
		 * later one means "now". */
		if (ev_time() - sm->stop_asked < SM_STOP_SAME)
			return;
		stop_now(sm);
		return;
	}
	sm->stop_asked = ev_time();
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
		log_debug_rc(status, "ACKNOWLEDGE not answered");
}

static void send_control(struct sm *sm, uint16_t lid, uint32_t mod)
{
	struct smp_lid smp;
	struct mad_addr addr = { .lid = lid, .qpn = 0 };
	struct smp_sm_info *si = (struct smp_sm_info *)smp.data;

	if (!lid)
		return;
	mad_build_smp_lid(&smp, MAD_METHOD_SET, SMP_ATTR_SM_INFO, mod);
	fill_sm_info(sm, si, true);
	/* ACKNOWLEDGE answers a HANDOVER, which only a standby takes
	 * (14.4.1): it says STANDBY, the state the HANDOVER found us in,
	 * though we are master by the time it leaves.  OpenSM refuses an
	 * ACKNOWLEDGE whose sender says anything else (ERR 2F04). */
	if (mod == SMINFO_ACKNOWLEDGE)
		si->prio_state = (uint8_t)((si->prio_state & 0xf0) |
					   SM_STATE_STANDBY);
	(void)mad_engine_submit(sm->engine, &smp, MAD_SIZE, &addr, on_ack_sent,
				sm);
}

/*
 * A master asked for our SMInfo, presenting its own, while we are master
 * too: two masters met (a standby that took over while the master could
 * not be reached, a split fabric joined).  When it claims to be better,
 * read its SMInfo ourselves, by directed route to the port of that GUID
 * in our model (the claim alone proves nothing), or LID-routed to the
 * LID we knew it by when our model lacks it (a standby that took over
 * left out the master it could not reach; our next sweep then also
 * discovers again before programming if it finds that SM's port, see
 * sm_master_claimed()): master_consider() then
 * yields to it, before our next sweep would program the fabric again.
 * At most one such read per SM_MASTER_HEARD s.
 */
#define SM_MASTER_HEARD		1.0	/* s */

void sminfo_master_heard(struct sm *sm, const struct smp_sm_info *rq)
{
	const struct fabric *f = &sm->fabric;
	uint64_t guid = be64toh(rq->guid);
	unsigned prio = rq->prio_state >> 4;
	ev_tstamp now = ev_now(sm->loop);

	if (sm->state != SM_MASTER || sm->stopping || guid == sm->port_guid ||
	    prio < sm->cfg.sm_priority ||
	    (prio == sm->cfg.sm_priority && guid > sm->port_guid) ||
	    (sm->master_heard_at > 0. &&
	     now - sm->master_heard_at < SM_MASTER_HEARD))
		return;
	for (int32_t id = 0; id < (int32_t)f->n_nodes; id++) {
		const struct fab_node *n = fabric_node(f, id);
		bool sw = n->type == NODE_TYPE_SWITCH;

		for (unsigned pn = sw ? 0 : 1; pn <= (sw ? 0 : n->num_ports);
		     pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (!p->valid || p->guid != guid)
				continue;
			sm->master_heard_at = now;
			log_info("SM 0x%016" PRIx64 " says it is master (priority"
				 " %u): reading its SMInfo", guid, prio);
			(void)sminfo_get(sm, p->lid, sw ? n->path : p->path,
					 sw ? n->hops : p->hops, SMQ_MASTER);
			return;
		}
	}
	sm->master_claim = guid;	/* our next sweep looks for it */
	for (unsigned i = 0; i < SM_MAX_REMOTE; i++) {
		const struct sm_remote *r = &sm->remotes[i];

		if (r->guid != guid || !r->lid || r->lid > 0xbfff)
			continue;
		sm->master_heard_at = now;
		log_info("SM 0x%016" PRIx64 " says it is master (priority %u):"
			 " reading its SMInfo at LID %u", guid, prio, r->lid);
		(void)sminfo_get(sm, r->lid, NULL, 0, SMQ_MASTER);
		return;
	}
}

/* Shutdown, after the engine is freed: the election's discovery. */
void sm_election_free(struct sm *sm)
{
	const struct sminfo_guard *g = sm->sminfo_guard;

	if (g)
		log_info("SMInfo: %" PRIu64 " Gets answered, %" PRIu64 " over"
			 " their requester's budget (%g at once, %g a second);"
			 " Sets: %" PRIu64 " obeyed, %" PRIu64 " refused, %"
			 PRIu64 " with another SM_Key", g->gets_answered,
			 g->gets_dropped, SMINFO_GET_BURST, SMINFO_GET_RATE,
			 g->sets_obeyed, g->sets_refused, g->sets_bad_key);
	free(sm->sminfo_guard);
	sm->sminfo_guard = NULL;
	if (sm->elect_disc) {
		discover_free(sm->elect_disc);
		sm->elect_disc = NULL;
		fabric_free(&sm->elect_fabric);
	}
}


/* A trap 144 from `lid` says its port now has IsSM (sm/trap.c): a master
 * reads that SM's SMInfo soon, not after the sweep the trap asks for, so
 * a better SM gets the HANDOVER without waiting for it.  Soon, not at
 * once: an SM sets IsSM before it answers (a umad2sim client that sets
 * it crashes on an SMP that comes before its receive thread is up).  At
 * most SM_ISM_MAX LIDs wait; more are left to the sweep. */
void sminfo_query_lid(struct sm *sm, uint16_t lid)
{
	if (sm->state != SM_MASTER || sm->stopping || !lid ||
	    lid == sm_local_lid(sm))
		return;
	for (unsigned i = 0; i < sm->n_ism; i++)
		if (sm->ism_lids[i] == lid)
			return;
	if (sm->n_ism >= SM_ISM_MAX)
		return;
	sm->ism_lids[sm->n_ism++] = lid;
	if (!ev_is_active(&sm->ism_timer)) {
		ev_timer_set(&sm->ism_timer, SM_ISM_DELAY, 0.);
		ev_timer_start(sm->loop, &sm->ism_timer);
	}
}

void sminfo_ism_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sm *sm = w->data;

	(void)loop;
	(void)revents;
	for (unsigned i = 0; i < sm->n_ism; i++)
		if (sm->state == SM_MASTER && !sm->stopping)
			(void)sminfo_get(sm, sm->ism_lids[i], NULL, 0, SMQ_MASTER);
	sm->n_ism = 0;
}

/* After a master's sweep (sm/ha/state.c): the other SMs' states. */
void sminfo_query(struct sm *sm)
{
	sms_query(sm, false);
}

/* sm/ha/state.c, on entering STANDBY: watch the master and copy its SA
 * state. */
void sminfo_standby_begin(struct sm *sm)
{
	sm->poll_misses = 0;
	/* The first poll at once: our SMInfo is its payload, so the
	 * master learns now that it has a standby (a SIGTERM right
	 * after hands over to us), not at its next sweep. */
	ev_timer_stop(sm->loop, &sm->poll_timer);
	ev_timer_set(&sm->poll_timer, 0., 0.);
	ev_timer_start(sm->loop, &sm->poll_timer);
	standby_sync_start(sm);
}

/* sm/ha/state.c, on leaving STANDBY. */
void sminfo_standby_end(struct sm *sm)
{
	ev_timer_stop(sm->loop, &sm->poll_timer);
	standby_sync_stop(sm);
}

/* ---- for the SMInfo agent (sm/ha/sminfo_agent.c) */

void sminfo_fill(const struct sm *sm, struct smp_sm_info *si, bool with_key)
{
	fill_sm_info(sm, si, with_key);
}

void sminfo_remote_note(struct sm *sm, const struct smp_sm_info *si,
			uint16_t lid, struct sm_remote **out)
{
	remote_note_si(sm, si, lid, out);
}

void sminfo_master_consider(struct sm *sm, struct sm_remote *r, bool fresh)
{
	master_consider(sm, r, fresh);
}

void sminfo_enter_standby(struct sm *sm, const struct sm_remote *m,
			  unsigned code, const char *cause)
{
	enter_standby(sm, m, code, cause);
}

int sminfo_get_lid(struct sm *sm, uint16_t lid)
{
	return sminfo_get(sm, lid, NULL, 0, SMQ_MASTER);
}

void sminfo_send_control(struct sm *sm, uint16_t lid, uint32_t mod)
{
	send_control(sm, lid, mod);
}
