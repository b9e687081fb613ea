/*
 * counters.h - the port counters the performance manager keeps: 64-bit
 * totals and the last sweep's deltas of PortCounters (IBA 16.1.3.5) and
 * PortCountersExtended (16.1.4.8) for every port it reads.
 *
 * Pure: no I/O.  The performance manager (sm/perf/) reads the ports and
 * hands each decoded sample to pc_update(); the health checks
 * (health/checks.h), the control socket and the metrics read the store.
 * Values are in the counters' own units (PortXmitData and PortRcvData in
 * 32-bit words, as the wire carries them).
 */
#ifndef IBSM_HEALTH_COUNTERS_H
#define IBSM_HEALTH_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every counter kept.  The error counters come first (PC_N_ERRORS). */
enum pc_id {
	PC_SYMBOL_ERR,		/* SymbolErrorCounter (16 bits) */
	PC_LINK_RECOVER,	/* LinkErrorRecoveryCounter (8) */
	PC_LINK_DOWNED,		/* LinkDownedCounter (8) */
	PC_RCV_ERR,		/* PortRcvErrors (16) */
	PC_RCV_REMOTE_PHYS,	/* PortRcvRemotePhysicalErrors (16) */
	PC_RCV_SW_RELAY,	/* PortRcvSwitchRelayErrors (16) */
	PC_XMIT_DISCARDS,	/* PortXmitDiscards (16) */
	PC_XMIT_CONSTRAINT,	/* PortXmitConstraintErrors (8) */
	PC_RCV_CONSTRAINT,	/* PortRcvConstraintErrors (8) */
	PC_LINK_INTEGRITY,	/* LocalLinkIntegrityErrors (4) */
	PC_BUF_OVERRUN,		/* ExcessiveBufferOverrunErrors (4) */
	PC_VL15_DROPPED,	/* VL15Dropped (16) */
	PC_N_ERRORS,
	PC_XMIT_WAIT = PC_N_ERRORS,	/* PortXmitWait (32): congestion */
	PC_XMIT_DATA,		/* PortXmitData (32, or 64 extended) */
	PC_RCV_DATA,		/* PortRcvData */
	PC_XMIT_PKTS,		/* PortXmitPkts */
	PC_RCV_PKTS,		/* PortRcvPkts */
	PC_UNI_XMIT_PKTS,	/* PortUnicastXmitPkts (extended only) */
	PC_UNI_RCV_PKTS,	/* PortUnicastRcvPkts */
	PC_MC_XMIT_PKTS,	/* PortMulticastXmitPkts */
	PC_MC_RCV_PKTS,		/* PortMulticastRcvPkts */
	PC_N
};

/* What each counter is called (perfquery's field names) and its width
 * in PortCounters (0: extended only). */
struct pc_desc {
	const char *name;	/* "SymbolErrorCounter", ... */
	uint8_t     bits;
};
extern const struct pc_desc pc_desc[PC_N];

/* One port's counters, as the store keeps them. */
struct pc_port {
	uint64_t node_guid;
	uint8_t  port;
	uint16_t lid;		/* the LID the PMA answered at */
	uint64_t total[PC_N];	/* since first read: wraps and clears
				 * accounted for */
	uint64_t delta[PC_N];	/* the increment of the last read */
	uint64_t raw[PC_N];	/* the values as last read */
	bool     seen[PC_N];	/* raw[i] holds a value read */
	double   first_read, last_read, prev_read;	/* monotonic s */
	uint32_t reads;
	uint32_t ext_clears;	/* clears by someone else, noticed */
};

#endif /* IBSM_HEALTH_COUNTERS_H */
