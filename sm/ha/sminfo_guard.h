/*
 * sminfo_guard.h - what the SMInfo agent (sm/ha/sminfo.c) lets a sender
 * do: which SubnSet(SMInfo) it obeys in which state and from whom
 * (14.4.1), and how many SubnGet(SMInfo) it answers per requester.
 * Pure functions and a bounded table: no I/O, no logging.
 */
#ifndef IBSM_SM_SMINFO_GUARD_H
#define IBSM_SM_SMINFO_GUARD_H

#include <stdbool.h>
#include <stdint.h>

/* What the agent knows of a SubnSet(SMInfo) when it decides. */
struct sminfo_set_view {
	uint8_t  our_state;		/* SM_STATE_* */
	uint32_t mod;			/* SMINFO_HANDOVER ... SMINFO_DISCOVER */
	uint8_t  sender_state;		/* as the payload says */
	bool     from_our_master;	/* the master we follow (or followed,
					 * NOTACTIVE): its GUID, and its LID
					 * or its route */
	bool     from_found_master;	/* an SM our own SMInfo Get found
					 * MASTER (GUID, and LID when
					 * LID-routed) */
	bool     from_handover_target;	/* the SM our HANDOVER went to,
					 * lately */
};

/* NULL when the Set may be obeyed, else why not (for the log). */
const char *sminfo_set_refusal(const struct sminfo_set_view *v);

/*
 * Per-requester token buckets for SubnGet(SMInfo): a requester (a source
 * key: its LID range, or a directed route) gets SMINFO_GET_BURST answers
 * at once, then SMINFO_GET_RATE a second; all of them together at most
 * SMINFO_GET_TOTAL a second.  The table holds SMINFO_GET_SOURCES
 * requesters; a new one takes a free slot, else the one idle longest.
 * An ibsm standby polls once a second, OpenSM every 10 s.
 */
#define SMINFO_GET_SOURCES	256
#define SMINFO_GET_BURST	16.0
#define SMINFO_GET_RATE		20.0	/* per second per requester */
#define SMINFO_GET_TOTAL	2000.0	/* per second, all requesters */

struct sminfo_get_bucket {
	uint32_t src;			/* 0: free */
	double   tokens;
	double   last;
	double   sm_until;		/* its port had IsSM: trusted till then */
};

/* A requester whose port was seen with IsSM is trusted this long (s). */
#define SMINFO_SM_TRUST		30.0
/* Gets waiting for the check of their requester's port, at most. */
#define SMINFO_CHECKS_MAX	16

struct sminfo_guard {
	struct sminfo_get_bucket gets[SMINFO_GET_SOURCES];
	double   total_tokens, total_last;
	uint64_t gets_answered, gets_dropped;
	uint64_t sets_obeyed, sets_refused, sets_bad_key;
	uint16_t verifying[8];		/* LIDs whose claim is being checked */
	unsigned checking;		/* Gets waiting for their IsSM check */
};

/* May a Get from `src` (non-zero) be answered at `now` (s)? */
bool sminfo_guard_get(struct sminfo_guard *g, uint32_t src, double now);

/* Was `src` seen lately as a port with IsSM?  Mark it so. */
bool sminfo_guard_is_sm(const struct sminfo_guard *g, uint32_t src, double now);
void sminfo_guard_mark_sm(struct sminfo_guard *g, uint32_t src, double now);

/* The source key of a directed-route requester: its route back, folded
 * (hop count and return path), with bit 31 set so it never equals a LID
 * key. */
uint32_t sminfo_guard_dr_key(const uint8_t *return_path, unsigned hops);

#endif /* IBSM_SM_SMINFO_GUARD_H */
