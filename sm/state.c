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
#include "sm/mcast/mft.h"
#include "sm/notify.h"
#include "sm/sa/index.h"
#include "sm/sa/sa.h"
#include "sm/sm.h"

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
	set_state(sm, SM_MASTER);
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

void sm_event(struct sm *sm, enum sm_event ev)
{
	switch (ev) {
	case SM_EV_START:
		sm->stats.started = ev_time();
		set_state(sm, SM_DISCOVERING);
		heavy_sweep(sm);
		break;
	case SM_EV_SWEEP_DONE:
		subnet_up(sm);
		break;
	case SM_EV_SWEEP_FAILED:
		sweep_failed(sm);
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
		set_state(sm, SM_NOTACTIVE);
		ev_break(sm->loop, EVBREAK_ALL);
		break;
	}
	/* systemd: READY=1, STATUS= (sm/notify.c); nothing without it. */
	notify_event(sm, ev);
}

/* --------------------------------------------------------- SMInfo agent */

static void fill_sm_info(const struct sm *sm, struct smp_sm_info *si)
{
	memset(si, 0, sizeof(*si));
	si->guid = htobe64(sm->port_guid);
	si->sm_key = 0;		/* only revealed to authenticated requesters */
	si->act_count = htobe32(sm->act_count);
	si->prio_state = (uint8_t)((sm->cfg.sm_priority & 0xf) << 4 |
				   (sm->state & 0xf));
}

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

/* SMInfo Get (14.4.1): anyone may ask. */
static void on_sm_info(void *arg, const void *mad, size_t len,
		       const struct mad_addr *from)
{
	struct sm *sm = arg;
	uint8_t data[SMP_DATA_SIZE] = { 0 };

	if (len != MAD_SIZE)
		return;
	fill_sm_info(sm, (struct smp_sm_info *)data);
	smp_reply(sm, mad, from, 0, data);
}

/* SMInfo Set (handover, acknowledgement) belongs to the election feature;
 * until then refuse it as an unsupported method/attribute combination. */
static void on_sm_info_set(void *arg, const void *mad, size_t len,
			   const struct mad_addr *from)
{
	if (len == MAD_SIZE)
		smp_reply(arg, mad, from, MAD_STATUS_ATTR_UNSUPP, NULL);
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
	sm_event(sm, SM_EV_STOP);
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
