/*
 * sweep_policy.h - what a heavy sweep does with what went wrong.
 *
 * A pure function of the sweep's tallies, so the policy is one table a
 * unit test can read (tests/unit/check_sweep_policy.c).  The sweep asks
 * twice: after the discovery (holes in the model) and after the last Set
 * was answered or given up on (unacknowledged Sets).
 */
#ifndef IBSM_SM_SWEEP_POLICY_H
#define IBSM_SM_SWEEP_POLICY_H

#include <stdbool.h>

/* Failed heavy sweeps before a daemon brings up what it could discover,
 * and before nodes that never acknowledge their Sets are excluded. */
#define SWEEP_ACCEPT_AFTER	3

struct sweep_tally {
	unsigned failed_queries;	/* discovery requests with no valid answer */
	unsigned dead_ends;		/* up ports whose far side never answered */
	unsigned twins;			/* nodes left out for a duplicate GUID */
	unsigned unacked_nodes;		/* nodes, not yet excluded, with a Set
					 * unacknowledged after its retries */
	unsigned unacked_excluded;	/* excluded nodes that still do not
					 * acknowledge */
	unsigned failed_sweeps;		/* consecutive failed sweeps before this */
	bool     once;			/* -o */
};

enum sweep_verdict {
	SWEEP_ACCEPT,		/* SUBNET UP, nothing wrong */
	SWEEP_DEGRADED,		/* SUBNET UP, with faults named in the log */
	SWEEP_RETRY,		/* failed: sweep again */
	SWEEP_EXCLUDE,		/* failed: exclude the nodes that do not
				 * acknowledge their Sets, then sweep again */
};

enum sweep_verdict sweep_decide(const struct sweep_tally *t);
const char *sweep_verdict_str(enum sweep_verdict v);

#endif /* IBSM_SM_SWEEP_POLICY_H */
