/*
 * election.c - the rules of the SM election (IB spec 14.4.1).  See
 * election.h; the state machine that applies them is sm/ha/state.c.
 */
#include "config.h"

#include <stddef.h>

#include "sm/ha/election.h"

const char *sminfo_control_name(uint32_t mod)
{
	switch (mod) {
	case SMINFO_HANDOVER:		return "HANDOVER";
	case SMINFO_ACKNOWLEDGE:	return "ACKNOWLEDGE";
	case SMINFO_DISABLE:		return "DISABLE";
	case SMINFO_STANDBY:		return "STANDBY";
	case SMINFO_DISCOVER:		return "DISCOVER";
	}
	return "?";
}

bool sm_better(uint8_t prio_a, uint64_t guid_a, uint8_t prio_b, uint64_t guid_b)
{
	if (prio_a != prio_b)
		return prio_a > prio_b;
	return guid_a < guid_b;
}

enum elect_verdict elect_decide(uint8_t prio, uint64_t guid,
				const struct sm_remote *r, unsigned n, int *who)
{
	int master = -1, better = -1;

	for (unsigned i = 0; i < n; i++) {
		if (!r[i].guid || r[i].guid == guid)
			continue;
		if (r[i].state == SM_STATE_MASTER) {
			/* Two masters (a split fabric joined): the better. */
			if (master < 0 || sm_better(r[i].priority, r[i].guid,
						    r[master].priority,
						    r[master].guid))
				master = (int)i;
			continue;
		}
		if (r[i].state != SM_STATE_DISCOVERING &&
		    r[i].state != SM_STATE_STANDBY)
			continue;	/* NOTACTIVE: takes no part */
		if (sm_better(r[i].priority, r[i].guid, prio, guid) &&
		    (better < 0 || sm_better(r[i].priority, r[i].guid,
					     r[better].priority, r[better].guid)))
			better = (int)i;
	}
	if (master >= 0) {
		*who = master;
		return ELECT_STANDBY;
	}
	if (better >= 0) {
		*who = better;
		return ELECT_WAIT;
	}
	*who = -1;
	return ELECT_MASTER;
}

enum master_action master_review(uint8_t prio, uint64_t guid,
				 const struct sm_remote *r)
{
	if (!r->guid || r->guid == guid ||
	    !sm_better(r->priority, r->guid, prio, guid))
		return MASTER_KEEP;
	if (r->state == SM_STATE_MASTER)
		return MASTER_YIELD;
	if (r->state == SM_STATE_STANDBY)
		return MASTER_HANDOVER;
	return MASTER_KEEP;	/* discovering: it will find us and stand by */
}

struct sm_remote *sm_remote_note(struct sm_remote *t, unsigned n,
				 uint64_t guid, uint16_t lid, uint8_t prio,
				 uint8_t state, uint32_t act_count, double now)
{
	struct sm_remote *slot = NULL;

	for (unsigned i = 0; i < n; i++) {
		if (t[i].guid == guid) {
			slot = &t[i];
			break;
		}
		if (!slot || (slot->guid && (!t[i].guid || t[i].seen < slot->seen)))
			slot = &t[i];
	}
	if (slot->guid != guid) {
		slot->hops = 0;
		slot->lid = 0;
	}
	slot->guid = guid;
	if (lid)
		slot->lid = lid;
	slot->priority = prio;
	slot->state = state;
	slot->act_count = act_count;
	slot->seen = now;
	return slot;
}

const struct sm_remote *sm_best_standby(const struct sm_remote *t, unsigned n,
					double since)
{
	const struct sm_remote *best = NULL;

	for (unsigned i = 0; i < n; i++) {
		if (!t[i].guid || t[i].state != SM_STATE_STANDBY ||
		    t[i].seen < since || !t[i].lid)
			continue;
		if (!best || sm_better(t[i].priority, t[i].guid, best->priority,
				       best->guid))
			best = &t[i];
	}
	return best;
}
