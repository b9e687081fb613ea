/*
 * election.h - the rules of the SM election (IB spec 14.4.1): which SM
 * wins, what a discovering SM becomes, what a master does about another
 * SM.  Pure functions over SMInfo values: no I/O, no logging, so the unit
 * tests drive every case (tests/unit/check_election.c).
 */
#ifndef IBSM_SM_ELECTION_H
#define IBSM_SM_ELECTION_H

#include <stdbool.h>
#include <stdint.h>

#include "sm/sm.h"

/* SubnSet(SMInfo) AttributeModifier (14.4.1, table "SMInfo Set"). */
enum sminfo_control {
	SMINFO_HANDOVER		= 1,
	SMINFO_ACKNOWLEDGE	= 2,
	SMINFO_DISABLE		= 3,
	SMINFO_STANDBY		= 4,
	SMINFO_DISCOVER		= 5,
};
const char *sminfo_control_name(uint32_t mod);

/* true when SM a beats SM b: higher priority, then the lower port GUID
 * (14.4.1.1). */
bool sm_better(uint8_t prio_a, uint64_t guid_a, uint8_t prio_b, uint64_t guid_b);

enum elect_verdict {
	ELECT_MASTER,		/* no master, we are the best: sweep, MASTER */
	ELECT_STANDBY,		/* a master exists: STANDBY, poll it */
	ELECT_WAIT,		/* no master, a better SM is discovering or
				 * standing by: it will be master, look again */
};

/*
 * The end of discovery (14.4.1.1): `r` are the other SMs that answered
 * (free slots have guid 0).  A master wins over everything (the SM that
 * finds one stands by, and the master hands over if we are better);
 * otherwise the best of the active SMs.  *who is the index of the master
 * (ELECT_STANDBY) or of the better SM (ELECT_WAIT).
 */
enum elect_verdict elect_decide(uint8_t prio, uint64_t guid,
				const struct sm_remote *r, unsigned n, int *who);

enum master_action {
	MASTER_KEEP,		/* nothing to do */
	MASTER_YIELD,		/* another master wins: become STANDBY */
	MASTER_HANDOVER,	/* a better SM stands by: hand over to it */
};
/* What a master does about another SM it heard from (14.4.1.2). */
enum master_action master_review(uint8_t prio, uint64_t guid,
				 const struct sm_remote *r);

/* Record an SM's SMInfo in the table: its slot, a free one, or the one
 * heard from the longest ago.  Returns the slot. */
struct sm_remote *sm_remote_note(struct sm_remote *t, unsigned n,
				 uint64_t guid, uint16_t lid, uint8_t prio,
				 uint8_t state, uint32_t act_count, double now);
/* The best SM in STANDBY heard from since `since`, or NULL. */
const struct sm_remote *sm_best_standby(const struct sm_remote *t, unsigned n,
					double since);

#endif /* IBSM_SM_ELECTION_H */
