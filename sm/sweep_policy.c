/*
 * sweep_policy.c - the heavy sweep's failure policy (see sweep_policy.h).
 *
 *   holes in the discovery   retried; a daemon accepts an incomplete
 *                            fabric after SWEEP_ACCEPT_AFTER failed
 *                            sweeps (a port whose neighbour never answers
 *                            must not keep the rest of the subnet down)
 *                            and re-sweeps it from the light sweep timer;
 *                            -o never accepts holes (its dump would lie)
 *   unacknowledged Sets      retried; after SWEEP_ACCEPT_AFTER failed
 *                            sweeps the nodes concerned are excluded and
 *                            the sweep runs again without routes through
 *                            them (daemon and -o alike)
 *   excluded nodes, twins    no reason to fail: the subnet comes up
 *                            degraded and they are named every sweep
 */
#include "config.h"

#include "sm/sweep_policy.h"

enum sweep_verdict sweep_decide(const struct sweep_tally *t)
{
	bool patient = t->failed_sweeps < SWEEP_ACCEPT_AFTER;
	unsigned holes = t->failed_queries + t->dead_ends;

	if (holes && (t->once || patient))
		return SWEEP_RETRY;
	if (t->unacked_nodes)
		return patient ? SWEEP_RETRY : SWEEP_EXCLUDE;
	if (holes || t->twins || t->unacked_excluded)
		return SWEEP_DEGRADED;
	return SWEEP_ACCEPT;
}

const char *sweep_verdict_str(enum sweep_verdict v)
{
	switch (v) {
	case SWEEP_ACCEPT:	return "accept";
	case SWEEP_DEGRADED:	return "degraded";
	case SWEEP_RETRY:	return "retry";
	case SWEEP_EXCLUDE:	return "exclude";
	}
	return "?";
}
