/*
 * policy.h - the thresholds and choices of the health checks, from the
 * health_* keys (config/health_policy.c fills it from struct sm_config:
 * config/ sits above health/, which includes no config header).
 */
#ifndef IBSM_HEALTH_POLICY_H
#define IBSM_HEALTH_POLICY_H

#include <stdint.h>

#include "health/counters.h"

enum health_action {
	HEALTH_REPORT,		/* unhealthy ports are reported (default) */
	HEALTH_ISOLATE,		/* ... and the port facing them is disabled */
};

struct health_policy {
	/* What the administrator declares every link runs at (ibdiagnet's
	 * --lw/--ls): lanes (1, 2, 4, 8, 12) and the per-lane rate in
	 * 100 Mb/s units (hc_speed_rate(): 25 SDR ... 1000 NDR); 0: not
	 * declared. */
	unsigned expected_width;
	unsigned expected_speed;

	/* Error counters: increments per hour at which a port is reported
	 * (warning), and critical at err_critical_factor times that; 0
	 * turns a counter's check off.  Indexed by enum pc_id.  The count
	 * is taken over a sliding window of err_window_s seconds (between
	 * half of it and all of it, see hc_counters()) and scaled to an
	 * hour, never from less than an hour: a burst is judged by its
	 * count, a lasting trickle by its rate. */
	uint64_t err_per_hour[PC_N_ERRORS];
	unsigned err_critical_factor;
	/* PortXmitWait increments per hour reported as congestion; 0: off */
	uint64_t xmit_wait_per_hour;
	double   err_window_s;

	/* flapping: at least flap_count down->up transitions within
	 * flap_window_s seconds */
	unsigned flap_count;
	double   flap_window_s;
	/* unresponsive: SMPs unanswered (the node answered none) in at
	 * least unresponsive_k of its last unresponsive_n polls; refusing
	 * Sets: a Set refused in at least k of its last n polls too */
	unsigned unresponsive_k, unresponsive_n;
	/* noisy: more than trap_rate traps per minute from one LID,
	 * averaged over the last minute */
	unsigned trap_rate;
	enum health_action unhealthy_action;

	/* bounds of the history (health/history.h): oldest dropped */
	unsigned max_ports, max_nodes, max_trap_lids;
};

/* The defaults: the keys' defaults (doc/ibsm.conf.5). */
void health_policy_default(struct health_policy *p);

#endif /* IBSM_HEALTH_POLICY_H */
