/*
 * trap.c - the SM's trap receiver (SubnTrap, IB spec 14.2.5.1): every
 * trap is repressed, judged (issuer, source, rate per source) and
 * reported to subscribers; a topology trap asks the state machine for a
 * heavy sweep (SM_EV_TRAP).
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mad/engine.h"
#include "mad/umad_io.h"
#include "mad/wire.h"
#include "model/index.h"
#include "model/topo_dump.h"
#include "sm/health/health.h"
#include "sm/sa/sa.h"
#include "sm/quick.h"
#include "sm/sm.h"
#include "sm/ha/sminfo.h"

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
 * not walk the model: it is one look-up in the model's LID index
 * (model/index.c), built once per model generation for the SA and the
 * trap receiver alike.
 */
static bool port_by_lid(const struct fabric *f, uint16_t lid, int32_t *node,
			uint8_t *port)
{
	struct sa_view v = { .f = f };
	struct fab_ref r;

	if (midx_lid_lookup(v.f, lid, &r) != 1)
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
 * A trap 128 from a switch came over its source's rate and was dropped:
 * the link change it tells of is still there, and without a sweep for
 * it (no light sweeps with sweep_interval 0) it would never be seen.
 * The switch is noted for the quick sweep and one sweep is owed, due
 * when no trap has been dropped for as long as the rate needs to allow
 * one again: however many traps are dropped, from however many
 * switches, it stays one sweep after the last of them (during a storm
 * the accepted traps cause the sweeps), and none when a sweep began
 * after it anyway.
 */
static void trap_owe_sweep(struct sm *sm, const struct fab_node *sw)
{
	double rate = sm_trap_rate(sm);
	double after = rate > 0 ? 1.0 / rate : 1.0;

	if (sw->type != NODE_TYPE_SWITCH || sm->state != SM_MASTER)
		return;
	quick_note_trap(sm, sw->guid);
	sm->trap_owed_at = ev_now(sm->loop);
	if (after > 10.)
		after = 10.;
	ev_timer_stop(sm->loop, &sm->trap_owed_timer);
	ev_timer_set(&sm->trap_owed_timer, after, 0.);
	ev_timer_start(sm->loop, &sm->trap_owed_timer);
}

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
	case 256:		/* bad M_Key: who tried what */
		sm_bad_mkey_heard(sm, n, fn->guid, port, src);
		return TRAP_REPORT;
	case 129: case 130: case 131:
		/* Link integrity, buffer overrun, flow control watchdog:
		 * error counters of a port, not topology (OpenSM does not
		 * report them either). */
		return TRAP_QUIET;
	default:
		return TRAP_REPORT;
	}
}

/* A node as people name it: type, GUID and description (the node's
 * own text, made printable). */
static void babble_name(const struct fab_node *n, char *buf, size_t len)
{
	char desc[TOPO_DESC_SIZE];

	snprintf(buf, len, "%s 0x%016" PRIx64 " \"%s\"",
		 fabric_node_type_str(n->type), n->guid,
		 topo_desc_clean(fab_node_label(n), desc));
}

/*
 * babbling_port_policy (sm/babble.h): a trap 129, 130 or 131 from the
 * port at (snode, sport), LID src, counted before any rate limit.  Its
 * DataDetails name a LID and port (14.2.5.1: bytes 2-3, byte 4).  Only
 * a trap whose IssuerLID is its sender's is counted (trap_judge()
 * rejects the others); past BABBLE_REPEATS identical ones the port named
 * is disabled, through the isolation (sm/health/health.h: later sweeps
 * keep it disabled), when it belongs to the node that sent the trap.
 */
static void trap_babble(struct sm *sm, const struct smp_notice *n,
			unsigned num, uint16_t src, int32_t snode,
			uint8_t sport)
{
	const struct fabric *f = &sm->fabric;
	struct babble_key k = { .slid = src, .port = n->data_details[4] };
	int32_t inode, dnode, tid;
	uint8_t iport, dport, tpn;
	uint16_t lid_be;
	char a[200], b[200], why[200];

	if (sm->state != SM_MASTER)
		return;
	memcpy(&lid_be, n->data_details + 2, sizeof(lid_be));
	k.lid = be16toh(lid_be);
	if (!port_by_lid(f, be16toh(n->issuer_lid), &inode, &iport) ||
	    inode != snode || iport != sport)
		return;
	k.hash = babble_hash(n, sizeof(*n));
	struct babble_slot *s = babble_count(&sm->babble, &k, ev_now(sm->loop));
	const struct fab_node *sn = fabric_node(f, snode);
	bool own = port_by_lid(f, k.lid, &dnode, &dport) && dnode == snode &&
		   k.port >= 1 && k.port <= sn->num_ports;

	enum babble_verdict v = babble_decide(s, sm->cfg.babbling_port_policy,
					      own);

	if (v == BABBLE_COUNTING || v == BABBLE_DONE)
		return;
	babble_name(sn, a, sizeof(a));
	if (v == BABBLE_POLICY_OFF) {
		log_warnx("ERR 0311: trap %u from LID %u (port %u of %s)"
			  " repeated %u times; babbling_port_policy FALSE:"
			  " the port stays enabled", num, src, k.port, a,
			  s->repeats);
		return;
	}
	if (v == BABBLE_FOREIGN) {
		log_warnx("ERR 0317: trap %u from LID %u (%s) repeated %u"
			  " times names LID %u port %u, not a port of the node"
			  " that sends it: nothing disabled", num, src, a,
			  s->repeats, k.lid, k.port);
		return;
	}
	if (!babble_target(f, snode, k.port, &tid, &tpn)) {
		log_warnx("ERR 0318: trap %u repeated %u times names port %u"
			  " of %s, which has no link: nothing disabled", num,
			  s->repeats, k.port, a);
		return;
	}
	const struct fab_node *tn = fabric_node(f, tid);
	const struct fab_port *tp = &tn->ports[tpn];
	babble_name(tn, a, sizeof(a));
	babble_name(fabric_node(f, tp->peer_node), b, sizeof(b));
	snprintf(why, sizeof(why), "trap %u repeated %u times by port %u of"
		 " 0x%016" PRIx64 " (LID %u)", num, s->repeats, k.port,
		 sn->guid, src);
	int rc = sm_health_isolate(sm, tid, tpn, "babbling_port", why);
	if (rc == 0)
		log_err("ERR 0319: babbling port: %s; disabling port %u of %s,"
			" the link to port %u of %s", why, tpn, a,
			tp->peer_port, b);
	else
		log_err("ERR 0319: babbling port: %s; port %u of %s, the link"
			" to port %u of %s, is not disabled (%s)", why, tpn, a,
			tp->peer_port, b, rc == -EPERM ? "see ERR 1803"
							: strerror(-rc));
}

/* Trap 144 (14.2.5.1, CapabilityMask changed): its DataDetails are a
 * reserved 16 bits, the LID, a reserved byte, the local-changes byte,
 * then the new CapabilityMask (bytes 6-9).  Does it say IsSM? */
static bool trap144_is_sm(const struct smp_notice *n)
{
	uint32_t cap;

	memcpy(&cap, n->data_details + 6, sizeof(cap));
	return be32toh(cap) & PI_CAP_IS_SM;
}

/*
 * A trap from the SM's own port: SLID 0 (our own node), the LID the
 * model gives our port, or the LID the port had when ibsm opened it
 * (before the first sweep the model is empty, and a port keeps its LID
 * across a restart of the SM: taking IsSM then makes it send trap 144).
 */
static bool trap_from_self(const struct sm *sm, uint16_t slid)
{
	const struct umad_port_info *pi = sm->io ? umad_io_port(sm->io) : NULL;

	return slid == 0 || slid == sm_local_lid(sm) ||
	       (pi && pi->lid && slid == pi->lid);
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
	if (sm->state == SM_STANDBY) {
		/* the master's link? */
		struct sm_msg m = { .ev = SM_EV_TRAP_STANDBY };

		m.u.trap.lid = src;
		m.u.trap.num = num;
		(void)sm_post_msg(sm, &m);
	}
	int32_t snode;
	uint8_t sport;
	/* A source no port of the model has is rejected before it can take
	 * (or evict) a budget: spoofed LIDs do not refill a genuine port's. */
	if (!port_by_lid(&sm->fabric, src, &snode, &sport)) {
		/* Our own port before the first sweep found it: its trap
		 * 144 says it took IsSM, which we did; that sweep is due
		 * anyway. */
		if (trap_from_self(sm, from->lid)) {
			log_debug("trap %u from our own port (LID %u) before"
				  " the sweep that finds it: nothing to do",
				  num, from->lid);
			return;
		}
		sm->stats.traps_rejected++;
		log_ratelimited(LOG_LVL_WARN, 306, "trap %u from LID %u: no such"
				" port in the subnet: rejected", num, src);
		return;
	}
	sm_health_trap(sm, src);
	if (notice_is_generic(n) && num >= 129 && num <= 131)
		trap_babble(sm, n, num, src, snode, sport);
	if (!trap_budget(sm, src)) {
		sm->stats.traps_limited++;
		log_ratelimited(LOG_LVL_WARN, 309, "trap %u from LID %u: over the"
				" rate of %g per second: dropped", num, src,
				sm_trap_rate(sm));
		if (num == 128 && notice_is_generic(n))
			trap_owe_sweep(sm, fabric_node(&sm->fabric, snode));
		return;
	}
	enum trap_verdict v = trap_judge(sm, n, src, num);
	if (v == TRAP_REJECT) {
		sm->stats.traps_rejected++;
		return;
	}
	struct log_fields lf = { 0 };

	log_field(&lf, "TRAP=%u", num);
	log_field(&lf, "LID=%u", src);
	log_field(&lf, "ISSUER_LID=%u", be16toh(n->issuer_lid));
	log_field(&lf, "NODE_GUID=0x%016" PRIx64,
		  fabric_node(&sm->fabric, snode)->guid);
	log_field(&lf, "PORT=%u", sport);
	log_ratelimited_event(LOG_LVL_INFO, 304, &lf, "trap %u from LID %u"
			      " (issuer LID %u)", num, src,
			      be16toh(n->issuer_lid));
	if (v == TRAP_REPORT || v == TRAP_SWEEP)
		sa_report_notice(sm, n, be16toh(n->issuer_lid));
	if (v == TRAP_SWEEP && num == 144 && trap144_is_sm(n)) {
		struct sm_msg m = { .ev = SM_EV_TRAP_ISSM };

		m.u.trap.lid = be16toh(n->issuer_lid);
		(void)sm_post_msg(sm, &m);
	}
	/* sweep_on_trap FALSE: the light sweeps find the change instead */
	if (v == TRAP_SWEEP && sm->cfg.sweep_on_trap) {
		/* trap 128 names its switch: a quick sweep may read just it */
		quick_note_trap(sm, num == 128 ?
				fabric_node(&sm->fabric, snode)->guid : 0);
		(void)sm_post(sm, SM_EV_TRAP);
	}
}


/*
 * Send trap 144 (SubnTrap(Notice), 14.2.5.1: our port's CapabilityMask,
 * with the SM-priority-changed flag) to the master at `lid`.  This is
 * how an SM tells a worse master that it is there and better, as OpenSM
 * does (osm_send_trap144()): a master that gets it sweeps, reads our
 * SMInfo and hands over (14.4.1.2).  Without it an SM that started
 * after that master's last sweep stays unknown to it, and OpenSM reads
 * in its light sweeps only the SMs it knows.  No answer is waited for
 * (the Trap Repress is dropped as unmatched).
 */
int trap_send_sm_change(struct sm *sm, uint16_t lid)
{
	static uint32_t tid;
	struct smp_lid smp;
	struct smp_notice *n = (struct smp_notice *)smp.data;
	struct mad_addr to = { .lid = lid, .qpn = 0 };
	const struct fabric *f = &sm->fabric;
	uint16_t own = sm_local_lid(sm) ? sm_local_lid(sm) : sm->port_lid;
	uint32_t cap = PI_CAP_IS_SM;
	uint16_t lid_be, flags = htobe16(0x0008);	/* SM priority changed */

	if (!lid || lid > 0xbfff || !own || !sm->engine)
		return -EINVAL;
	if (f->local_node != FAB_NONE) {
		const struct fab_node *ln = fabric_node(f, f->local_node);

		if (f->local_port <= ln->num_ports)
			cap |= be32toh(ln->ports[f->local_port].pi.cap_mask);
	}
	mad_build_smp_lid(&smp, MAD_METHOD_TRAP, SMP_ATTR_NOTICE, 0);
	smp.hdr.tid = htobe64(0x1440000000ull | ++tid);
	memset(n, 0, sizeof(*n));
	n->generic_type = 0x80 | 4;	/* generic, informational */
	n->producer[2] = NODE_TYPE_CA;
	n->trap_num = htobe16(144);
	n->issuer_lid = htobe16(own);
	lid_be = htobe16(own);
	cap = htobe32(cap);
	memcpy(n->data_details + 2, &lid_be, 2);
	memcpy(n->data_details + 6, &cap, 4);
	memcpy(n->data_details + 10, &flags, 2);
	return mad_engine_send_oneway(sm->engine, &smp, MAD_SIZE, &to);
}

/* The trap receiver: SubnTrap(Notice), LID-routed and directed-route. */
int trap_agent_start(struct sm *sm)
{
	static const uint8_t classes[] = { MAD_CLASS_SMI, MAD_CLASS_SMI_DR };
	int rc = 0;

	for (unsigned i = 0; i < 2 && rc == 0; i++)
		rc = mad_engine_on_unsolicited(sm->engine, classes[i],
					       MAD_METHOD_TRAP, SMP_ATTR_NOTICE,
					       on_trap, sm);
	return rc;
}
