/*
 * policy.c - the health policy's defaults (policy.h).
 *
 * Error thresholds, per hour: infiniband-diags' error_thresholds example
 * (ibqueryerrors: SymbolErrorCounter 10, LinkErrorRecoveryCounter 10,
 * VL15Dropped 100) for those it names; 10 for the other counters of a
 * bad link (receive errors, integrity, overruns) and 3 for LinkDowned
 * (each is a link lost); 100 for the counters that ibqueryerrors
 * --suppress-common treats as side effects of something elsewhere
 * (remote physical errors, switch relay errors, transmit discards) and
 * for the partition constraint counters, which count policy at work.
 * PortXmitWait: OpenSM's perfmgr_xmit_wait_threshold (65535 per 180-s
 * sweep) scaled to an hour.  Critical is ten times the threshold: an
 * order of magnitude past what the administrator tolerates.  The keys'
 * defaults (config/keys.c, doc/ibsm.conf.5) are these.
 */
#include "config.h"

#include <string.h>

#include "health/policy.h"

void health_policy_default(struct health_policy *p)
{
	static const uint64_t per_hour[PC_N_ERRORS] = {
		[PC_SYMBOL_ERR] = 10,
		[PC_LINK_RECOVER] = 10,
		[PC_LINK_DOWNED] = 3,
		[PC_RCV_ERR] = 10,
		[PC_RCV_REMOTE_PHYS] = 100,
		[PC_RCV_SW_RELAY] = 100,
		[PC_XMIT_DISCARDS] = 100,
		[PC_XMIT_CONSTRAINT] = 100,
		[PC_RCV_CONSTRAINT] = 100,
		[PC_LINK_INTEGRITY] = 10,
		[PC_BUF_OVERRUN] = 10,
		[PC_VL15_DROPPED] = 100,
	};

	memset(p, 0, sizeof(*p));
	memcpy(p->err_per_hour, per_hour, sizeof(per_hour));
	p->err_critical_factor = 10;
	p->xmit_wait_per_hour = 65535ull * 3600 / 180;
	p->err_window_s = 3600;
	p->flap_count = 5;
	p->flap_window_s = 600;
	p->unresponsive_k = 3;
	p->unresponsive_n = 5;
	p->trap_rate = 60;
	p->unhealthy_action = HEALTH_REPORT;
	p->max_ports = 65536;
	p->max_nodes = 16384;
	p->max_trap_lids = 4096;
}
