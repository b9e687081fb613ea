/*
 * sminfo_agent.c - the SMInfo agent (IB spec 14.2.5.13, 14.4.1): answers
 * SubnGet(SMInfo) and obeys SubnSet(SMInfo) from other SMs, within the
 * rules of sm/ha/sminfo_guard.c: a budget of Gets per requester, the key
 * only to an SM, Sets only from the SMs the state allows, and no SM
 * taken for real before its port was checked.  The protocol it serves
 * (election, polls, handover) is sm/ha/sminfo.c.
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
#include "sm/ha/election.h"
#include "sm/ha/fsm.h"
#include "sm/ha/sminfo.h"
#include "sm/ha/sminfo_guard.h"
#include "sm/sm.h"

static uint64_t sm_key(const struct sm *sm)
{
	return sm->cfg.sm_key;
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

/* The SMInfo in a request: after the LID-routed or the DR header. */
static const struct smp_sm_info *req_sm_info(const void *mad)
{
	const struct mad_hdr *h = mad;

	return (const struct smp_sm_info *)((const uint8_t *)mad +
		(h->mgmt_class == MAD_CLASS_SMI_DR ? offsetof(struct smp_dr, data)
						   : offsetof(struct smp_lid, data)));
}

/*
 * The route back to the sender of a directed-route request, as our own
 * DR path (path[1] our port ... path[hops] the port into the sender):
 * the request's ReturnPath reversed.  Every node it crossed wrote there
 * the port it came in by, so the sender cannot choose it.  false when
 * the request was not directed route from end to end.
 */
static bool dr_route_back(const void *mad, uint8_t *path, unsigned *hops)
{
	const struct smp_dr *smp = mad;
	unsigned n = smp_dr_hop_cnt(smp);

	if (smp->hdr.mgmt_class != MAD_CLASS_SMI_DR || !n || n > SMP_MAX_HOPS ||
	    smp->dr_slid != htobe16(0xffff))
		return false;
	memset(path, 0, SMP_MAX_HOPS + 1);
	for (unsigned k = 1; k <= n; k++)
		path[k] = smp->return_path[n + 1 - k];
	*hops = n;
	return true;
}

/*
 * Did a directed-route request come from the master we stand by for?
 * Its route back must be our route to the master: the path to the
 * master's switch (watch_set()) and the switch's port facing it.  A
 * master we know no such route to (on a switch's port 0, or found by a
 * STANDBY Set rather than by our election) is taken on its GUID.
 */
static bool dr_from_master(const struct sm *sm, const void *mad)
{
	uint8_t back[SMP_MAX_HOPS + 1];
	unsigned hops;

	if (!dr_route_back(mad, back, &hops))
		return false;
	if (sm->watch.master != sm->master_guid)
		return true;
	if (hops != sm->watch.hops + 1u || back[hops] != sm->watch.port)
		return false;
	return !memcmp(back + 1, sm->watch.path + 1, sm->watch.hops);
}

/* A requester's key in the Get budget: its LID range (LMC bits clear),
 * or its route back when directed route. */
static uint32_t get_source(const struct sm *sm, const void *mad,
			   const struct mad_addr *from)
{
	const struct smp_dr *smp = mad;

	if (smp->hdr.mgmt_class == MAD_CLASS_SMI_DR) {
		unsigned n = smp_dr_hop_cnt(smp);

		return sminfo_guard_dr_key(smp->return_path,
					   n > SMP_MAX_HOPS ? SMP_MAX_HOPS : n);
	}
	uint16_t lid = from->lid & (uint16_t)~((1u << sm->cfg.lmc) - 1);
	return lid ? lid : 0xffff;
}

static struct sm_remote *remote_find(struct sm *sm, uint64_t guid)
{
	for (unsigned i = 0; i < SM_MAX_REMOTE; i++)
		if (guid && sm->remotes[i].guid == guid)
			return &sm->remotes[i];
	return NULL;
}

static void verify_claim(struct sm *sm, uint16_t lid);

/*
 * A request held until its sender's port is read (port_check()): a Get
 * to answer with or without our key, or a Set to obey or refuse.
 */
struct port_check {
	struct sm *sm;
	bool set;
	uint32_t src;
	struct mad_addr from;
	uint8_t req[MAD_SIZE];
};

static void set_checked(struct sm *sm, const void *mad,
			const struct mad_addr *from, bool is_sm, uint16_t lid);

static void on_checked_port(void *arg, int status, const void *mad,
			    size_t len)
{
	struct port_check *c = arg;
	struct sm *sm = c->sm;
	uint8_t data[SMP_DATA_SIZE] = { 0 };
	bool is_sm = false;
	uint16_t lid = 0;

	if (status == -ECANCELED) {
		free(c);
		return;
	}
	if (sm->sminfo_guard && sm->sminfo_guard->checking)
		sm->sminfo_guard->checking--;
	if (status == 0 && len >= MAD_SIZE &&
	    !(be16toh(((const struct mad_hdr *)mad)->status) & 0x7fff)) {
		const struct smp_lid *smp = mad;	/* data at 64 in both */
		const struct smp_port_info *pi = (const void *)smp->data;

		is_sm = !!(be32toh(pi->cap_mask) & PI_CAP_IS_SM);
		lid = be16toh(pi->lid);
	}
	if (is_sm && sm->sminfo_guard)
		sminfo_guard_mark_sm(sm->sminfo_guard, c->src, ev_now(sm->loop));
	if (c->set) {
		set_checked(sm, c->req, &c->from, is_sm, lid);
	} else {
		sminfo_fill(sm, (struct smp_sm_info *)data, is_sm);
		smp_reply(sm, c->req, &c->from, 0, data);
	}
	free(c);
}

/*
 * Read the PortInfo of the port a request came from, along the route
 * back (the LID it came from, or the reversed ReturnPath), before
 * answering it: is it an SM's port (CapabilityMask.IsSM)?  A port found
 * so is trusted SMINFO_SM_TRUST s.  The answer waits for that one SMP.
 * 0 when the request was left to the check, else -errno (decide now).
 */
static int port_check(struct sm *sm, const void *mad,
		      const struct mad_addr *from, uint32_t src, bool set)
{
	struct sminfo_guard *g = sm->sminfo_guard;
	union { struct smp_dr dr; struct smp_lid lr; } smp;
	struct mad_addr addr = { .lid = from->lid, .qpn = 0 };
	uint8_t back[SMP_MAX_HOPS + 1];
	struct port_check *c;
	unsigned hops;

	if (!g || g->checking >= SMINFO_CHECKS_MAX)
		return -EBUSY;
	if (((const struct mad_hdr *)mad)->mgmt_class == MAD_CLASS_SMI_DR) {
		if (!dr_route_back(mad, back, &hops))
			return -EINVAL;
		mad_build_smp_dr(&smp.dr, MAD_METHOD_GET, SMP_ATTR_PORT_INFO, 0,
				 back, hops);
		addr.lid = 0xffff;
	} else {
		if (!from->lid || from->lid >= 0xc000)
			return -EINVAL;
		mad_build_smp_lid(&smp.lr, MAD_METHOD_GET, SMP_ATTR_PORT_INFO, 0);
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->sm = sm;
	c->set = set;
	c->src = src;
	c->from = *from;
	memcpy(c->req, mad, MAD_SIZE);
	int rc = mad_engine_submit(sm->engine, &smp, MAD_SIZE, &addr,
				   on_checked_port, c);
	if (rc < 0) {
		free(c);
		return rc;
	}
	g->checking++;
	return 0;
}

/*
 * SMInfo Get (14.2.5.13): anyone may ask, within a budget per requester
 * (sminfo_guard.h): a flood is not answered beyond it.  The answer
 * carries our SM_Key to a requester that presented it (an SM of ours),
 * or that presented none from a port with IsSM (port_check()); to
 * anyone else it is 0, so a host cannot learn the key.  The requester's
 * own SMInfo may be the payload (an ibsm standby polling us; OpenSM
 * sends an empty one).  A master polled by a better standby hands over
 * to it (14.4.1.2), but only to an SM it has checked: one already found
 * by its own Gets at that LID, else the port is checked first
 * (verify_claim()); a payload alone makes no SM.  A master that
 * presents itself while we are master too is read back
 * (sminfo_master_heard()).
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
	uint32_t src = get_source(sm, mad, from);
	if (sm->sminfo_guard &&
	    !sminfo_guard_get(sm->sminfo_guard, src, ev_now(sm->loop))) {
		log_ratelimited(LOG_LVL_WARN, 1140, "SMInfo Gets from LID %u"
				" over %.0f a second: not answered", from->lid,
				SMINFO_GET_RATE);
		return;
	}
	rq = req_sm_info(mad);
	keyed = be64toh(rq->sm_key) == sm_key(sm);
	if (!keyed && !rq->sm_key && sm->sminfo_guard) {
		if (sminfo_guard_is_sm(sm->sminfo_guard, src, ev_now(sm->loop)))
			keyed = true;
		else if (port_check(sm, mad, from, src, false) == 0)
			return;		/* on_checked_port() answers */
	}
	sminfo_fill(sm, (struct smp_sm_info *)data, keyed);
	smp_reply(sm, mad, from, 0, data);
	if (keyed && rq->guid && (rq->prio_state & 0xf) == SM_STATE_MASTER)
		sminfo_master_heard(sm, rq);
	if (!keyed || !rq->guid || be64toh(rq->guid) == sm->port_guid ||
	    h->mgmt_class != MAD_CLASS_SMI || !from->lid)
		return;
	uint8_t st = rq->prio_state & 0xf;
	if (st != SM_STATE_STANDBY && st != SM_STATE_DISCOVERING)
		return;
	struct sm_remote *r = remote_find(sm, be64toh(rq->guid));
	if (!r || r->lid != from->lid) {
		verify_claim(sm, from->lid);
		return;
	}
	sminfo_remote_note(sm, rq, from->lid, &r);
	sminfo_master_consider(sm, r, false);
}

/* How long after our HANDOVER its ACKNOWLEDGE is taken (s). */
#define SM_ACK_WINDOW		5.0

/*
 * Who sent a Set, as far as the fabric tells (sminfo_guard.c says what
 * each may do): the GUID of the payload must be one we know, and the
 * LID it came from (LID-routed) or its route (directed route) that SM's.
 */
static void set_view(struct sm *sm, const void *mad, const struct mad_addr *from,
		     struct sminfo_set_view *v)
{
	const struct smp_sm_info *rq = req_sm_info(mad);
	const struct mad_hdr *h = mad;
	uint64_t guid = be64toh(rq->guid);
	bool lr = h->mgmt_class == MAD_CLASS_SMI;
	const struct sm_remote *r = remote_find(sm, guid);

	memset(v, 0, sizeof(*v));
	v->our_state = (uint8_t)sm->state;
	v->mod = be32toh(h->attr_mod);
	v->sender_state = rq->prio_state & 0xf;
	if (!guid || guid == sm->port_guid)
		return;
	if (guid == sm->master_guid)
		v->from_our_master = lr ? from->lid && from->lid == sm->master_lid
					: dr_from_master(sm, mad);
	/* A directed-route Set is matched on its route only for the master
	 * we follow (dr_from_master()); from any other it waits for the
	 * check of the sender's port (on_sm_info_set()). */
	if (r && r->state == SM_STATE_MASTER)
		v->from_found_master = lr ? from->lid && from->lid == r->lid
				      : guid == sm->master_guid &&
					v->from_our_master;
	if (sm->handover_guid == guid &&
	    ev_now(sm->loop) - sm->handover_at <= SM_ACK_WINDOW)
		v->from_handover_target = !lr || !r || !r->lid ||
					  from->lid == r->lid;
}

/* A refused Set: counted, logged within the log's rate limit, answered
 * with an error status (as OpenSM answers it, ERR 2F04/2F07). */
static void set_refuse(struct sm *sm, const void *mad,
		       const struct mad_addr *from, const char *why)
{
	const struct smp_sm_info *rq = req_sm_info(mad);
	uint32_t mod = be32toh(((const struct mad_hdr *)mad)->attr_mod);

	if (sm->sminfo_guard)
		sm->sminfo_guard->sets_refused++;
	log_ratelimited(LOG_LVL_WARN, 1122, "SMInfo %s from LID %u (SM"
			" 0x%016" PRIx64 " priority %u %s) in state %s:"
			" refused: %s", sminfo_control_name(mod), from->lid,
			be64toh(rq->guid), rq->prio_state >> 4,
			sm_state_name(rq->prio_state & 0xf),
			sm_state_name(sm->state), why);
	smp_reply(sm, mad, from, MAD_STATUS_INVALID_FIELD, NULL);
}

/* Obey a Set that sminfo_set_refusal() let through. */
static void set_obey(struct sm *sm, uint32_t mod, struct sm_remote *r)
{
	switch (mod) {
	case SMINFO_HANDOVER:
		sm_event(sm, SM_EV_HANDOVER);
		break;
	case SMINFO_ACKNOWLEDGE:
		break;		/* the handover's answer did the work */
	case SMINFO_DISABLE:
		if (r && sm->state == SM_DISCOVERING) {
			sm->master_guid = r->guid;	/* DISCOVER from it */
			sm->master_lid = r->lid;
		}
		ev_timer_stop(sm->loop, &sm->light_timer);
		ev_timer_stop(sm->loop, &sm->elect_timer);
		sm_transition(sm, SM_NOTACTIVE, 1116, "DISABLE from the master");
		break;
	case SMINFO_STANDBY:
		if (r && r->lid && sm->state != SM_STANDBY) {
			r->state = SM_STATE_MASTER;
			sminfo_enter_standby(sm, r, 1117, "STANDBY from the master");
		}
		break;
	case SMINFO_DISCOVER:
		sm_transition(sm, SM_DISCOVERING, 1118, "DISCOVER from the master");
		sminfo_elect_start(sm);
		break;
	}
}

/* Obey a Set that passed (sminfo_set_refusal()), note what its sender
 * says (at `lid` when directed route: its port's LID, if we read it) and
 * answer it. */
static void set_accept(struct sm *sm, const void *mad,
		       const struct mad_addr *from, uint32_t mod, uint16_t lid)
{
	const struct smp_sm_info *rq = req_sm_info(mad);
	bool lr = ((const struct mad_hdr *)mad)->mgmt_class == MAD_CLASS_SMI;
	uint8_t data[SMP_DATA_SIZE] = { 0 };
	struct sm_remote *r = NULL;

	if (sm->sminfo_guard)
		sm->sminfo_guard->sets_obeyed++;
	log_info("SMInfo %s from LID %u (SM 0x%016" PRIx64 " priority %u)",
		 sminfo_control_name(mod), from->lid, be64toh(rq->guid),
		 rq->prio_state >> 4);
	sminfo_remote_note(sm, rq, lr ? from->lid : lid < 0xc000 ? lid : 0, &r);
	/* ACKNOWLEDGE goes to the HANDOVER's sender: to the LID it came
	 * from, or, directed-route (OpenSM sends HANDOVER so), to the LID of
	 * the master we stood by for when the sender is that master. */
	uint16_t ack_lid = lr ? from->lid :
			   be64toh(rq->guid) == sm->master_guid ? sm->master_lid :
			   r->lid;
	bool took = mod == SMINFO_HANDOVER && sm->state != SM_MASTER &&
		    sm->state != SM_NOTACTIVE;
	set_obey(sm, mod, r);
	sminfo_fill(sm, (struct smp_sm_info *)data, true);
	smp_reply(sm, mad, from, 0, data);
	if (took && ack_lid)
		sminfo_send_control(sm, ack_lid, SMINFO_ACKNOWLEDGE);
}

/*
 * A Set held for the check of its sender's port (port_check()): an SM
 * still DISCOVERING has found no master yet, so a master that hands over
 * to it (OpenSM does so as soon as it sees a better SM) is taken when
 * its port has IsSM.
 */
static void set_checked(struct sm *sm, const void *mad,
			const struct mad_addr *from, bool is_sm, uint16_t lid)
{
	struct sminfo_set_view v;

	set_view(sm, mad, from, &v);
	v.from_found_master = v.from_found_master || is_sm;
	const char *bad = sminfo_set_refusal(&v);
	if (bad) {
		set_refuse(sm, mad, from, is_sm ? bad : "its port is no SM's");
		return;
	}
	set_accept(sm, mad, from, v.mod, lid);
}

/*
 * SubnSet(SMInfo) (14.4.1, the SMInfo control packets): the
 * AttributeModifier says what to do, the payload is the sender's SMInfo
 * and must carry our SM_Key: an SM of another key is ignored.  Who may
 * send what in which state: sminfo_guard.c; a Set refused is answered
 * with an error status and changes nothing.
 */
static void on_sm_info_set(void *arg, const void *mad, size_t len,
			   const struct mad_addr *from)
{
	struct sm *sm = arg;
	const struct smp_sm_info *rq;
	struct sminfo_set_view v;

	if (len != MAD_SIZE)
		return;
	rq = req_sm_info(mad);
	set_view(sm, mad, from, &v);
	if (be64toh(rq->sm_key) != sm_key(sm)) {
		if (sm->sminfo_guard)
			sm->sminfo_guard->sets_bad_key++;
		log_ratelimited(LOG_LVL_WARN, 1110, "SMInfo %s from LID %u (SM"
				" 0x%016" PRIx64 ") with another SM_Key: ignored",
				sminfo_control_name(v.mod), from->lid,
				be64toh(rq->guid));
		sm_rogue_heard(sm, rq, from->lid, true);
		return;
	}
	const char *bad = sminfo_set_refusal(&v);
	if (bad && v.our_state == SM_STATE_DISCOVERING && !v.from_found_master &&
	    rq->guid && be64toh(rq->guid) != sm->port_guid) {
		struct sminfo_set_view w = v;

		w.from_found_master = true;
		if (!sminfo_set_refusal(&w) &&
		    port_check(sm, mad, from, get_source(sm, mad, from), true) == 0)
			return;		/* on_checked_port() decides */
	}
	if (bad) {
		set_refuse(sm, mad, from, bad);
		return;
	}
	set_accept(sm, mad, from, v.mod, 0);
}

/*
 * A port that claims to be an SM (its SMInfo Get said STANDBY or
 * DISCOVERING with our key) is not taken at its word: a master reads
 * its PortInfo (LID-routed, the port it arrives at) and only when
 * CapabilityMask.IsSM is set its SMInfo (sminfo_get()); the answer to
 * our own Get is what enters the table of SMs.  At most
 * SM_VERIFY_MAX checks at once, one per LID.
 */
#define SM_VERIFY_MAX		8

struct verify_req {
	struct sm *sm;
	uint16_t lid;
};

static void verify_done(struct sm *sm, uint16_t lid)
{
	struct sminfo_guard *g = sm->sminfo_guard;

	for (unsigned i = 0; g && i < SM_VERIFY_MAX; i++)
		if (g->verifying[i] == lid)
			g->verifying[i] = 0;
}

static void on_verify_port(void *arg, int status, const void *mad, size_t len)
{
	struct verify_req *rq = arg;
	struct sm *sm = rq->sm;
	uint16_t lid = rq->lid;
	const struct smp_lid *smp = mad;

	free(rq);
	if (status == -ECANCELED)
		return;
	verify_done(sm, lid);
	if (sm->state != SM_MASTER || sm->stopping)
		return;
	if (status < 0 || len < MAD_SIZE || (be16toh(smp->hdr.status) & 0x7fff)) {
		log_debug("LID %u claims to be an SM: its PortInfo did not"
			  " answer", lid);
		return;
	}
	const struct smp_port_info *pi = (const void *)smp->data;
	if (!(be32toh(pi->cap_mask) & PI_CAP_IS_SM)) {
		log_ratelimited(LOG_LVL_WARN, 1141, "LID %u claims to be an SM"
				" but its port has no IsSM: ignored", lid);
		return;
	}
	(void)sminfo_get_lid(sm, lid);
}

static void verify_claim(struct sm *sm, uint16_t lid)
{
	struct sminfo_guard *g = sm->sminfo_guard;
	struct mad_addr addr = { .lid = lid, .qpn = 0 };
	struct verify_req *rq;
	struct smp_lid smp;
	int slot = -1;

	if (!g || sm->state != SM_MASTER || sm->stopping || !lid)
		return;
	for (int i = 0; i < SM_VERIFY_MAX; i++) {
		if (g->verifying[i] == lid)
			return;
		if (!g->verifying[i] && slot < 0)
			slot = i;
	}
	if (slot < 0)
		return;
	rq = calloc(1, sizeof(*rq));
	if (!rq)
		return;
	rq->sm = sm;
	rq->lid = lid;
	mad_build_smp_lid(&smp, MAD_METHOD_GET, SMP_ATTR_PORT_INFO, 0);
	if (mad_engine_submit(sm->engine, &smp, MAD_SIZE, &addr,
			      on_verify_port, rq) < 0) {
		free(rq);
		return;
	}
	g->verifying[slot] = lid;
}

/* The SMInfo agent: Gets and Sets, LID-routed and directed-route. */
int sminfo_agent_start(struct sm *sm)
{
	static const uint8_t classes[] = { MAD_CLASS_SMI, MAD_CLASS_SMI_DR };
	int rc = 0;

	if (!sm->sminfo_guard)
		sm->sminfo_guard = calloc(1, sizeof(*sm->sminfo_guard));
	if (!sm->sminfo_guard)
		return -ENOMEM;

	for (unsigned i = 0; i < 2 && rc == 0; i++) {
		rc = mad_engine_on_unsolicited(sm->engine, classes[i],
					       MAD_METHOD_GET, SMP_ATTR_SM_INFO,
					       on_sm_info, sm);
		if (rc == 0)
			rc = mad_engine_on_unsolicited(sm->engine, classes[i],
						       MAD_METHOD_SET,
						       SMP_ATTR_SM_INFO,
						       on_sm_info_set, sm);
	}
	return rc;
}
