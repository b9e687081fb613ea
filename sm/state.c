/*
 * state.c - the SM state machine, the SMInfo agent and the trap receiver.
 *
 * Every decision about what the SM does next goes through sm_event():
 *
 *   NOTACTIVE  --START-->           DISCOVERING (heavy sweep)
 *   DISCOVERING --SWEEP_DONE-->     MASTER (SUBNET UP)
 *   DISCOVERING --SWEEP_FAILED-->   DISCOVERING (sweep again)
 *   MASTER   --CHANGE-->            MASTER (heavy sweep)
 *   MASTER   --LIGHT_TIMER-->       MASTER (light sweep)
 *   any      --STOP-->              NOTACTIVE
 *
 * STANDBY (another SM is master) is reserved for the election feature.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

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

	if (sm->sweep) {
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

static void subnet_up(struct sm *sm)
{
	struct fabric_counts c;

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
	case SM_EV_STOP:
		set_state(sm, SM_NOTACTIVE);
		ev_break(sm->loop, EVBREAK_ALL);
		break;
	}
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
 * A trap (SubnTrap, 14.2.5.1): acknowledge it with a Trap Repress on the
 * same TID so the sender stops repeating it, then decide.  Link and
 * capability changes (128, 144) and GID in/out of service ask for a heavy
 * sweep.
 */
static void on_trap(void *arg, const void *mad, size_t len,
		    const struct mad_addr *from)
{
	struct sm *sm = arg;
	const struct smp_lid *smp = mad;
	const struct smp_notice *n = (const struct smp_notice *)smp->data;
	uint8_t resp[MAD_SIZE];
	struct mad_addr to = { .lid = from->lid, .qpn = 0 };

	if (len != MAD_SIZE)
		return;
	sm->stats.traps++;
	memcpy(resp, mad, MAD_SIZE);
	((struct mad_hdr *)resp)->method = MAD_METHOD_TRAP_REPRESS;
	((struct mad_hdr *)resp)->status = 0;
	if (to.lid)
		mad_engine_send_oneway(sm->engine, resp, MAD_SIZE, &to);

	unsigned num = notice_is_generic(n) ? be16toh(n->trap_num) : 0;
	log_info("trap %u from LID %u (issuer LID %u)", num, from->lid,
		 be16toh(n->issuer_lid));
	sa_report_notice(sm, n, be16toh(n->issuer_lid));
	switch (num) {
	case 64: case 65: case 128: case 129: case 130: case 131: case 144:
		sm_event(sm, SM_EV_CHANGE);
		break;
	default:
		break;
	}
}

int sm_agents_start(struct sm *sm)
{
	static const uint8_t classes[] = { MAD_CLASS_SMI, MAD_CLASS_SMI_DR };
	int rc = 0;

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
