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

#include "mad/pma.h"

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
	uint8_t  width[PC_N];	/* bits of raw[i] as last read (64: the
				 * extended counter) */
	uint32_t misses;	/* reads in a row that got no answer */
	uint32_t sm_clears;	/* clears the performance manager made */
};

/*
 * The store: a table of ports keyed by (node GUID, port number), at most
 * `max_ports` of them.  Totals start at the value the first read finds
 * (the counter's count since it was last cleared), so until a counter is
 * cleared its total equals what perfquery shows.  On the first read the
 * delta is that value too (accumulated over an unknown time: prev_read is
 * 0 then).
 *
 * pc_update() folds one reading in, for every counter:
 *  - PortCounters' counters (4 to 32 bits) saturate and never wrap, so
 *    one that went backwards was cleared by someone else: its delta is
 *    the new value (what it counted since the clear), and ext_clears
 *    counts the reading once; one that stays all ones adds nothing more;
 *  - an extended (64-bit) counter that goes backwards was cleared too;
 *    one that moves forward by more than PC_MAX_PER_S per second elapsed
 *    (at least one second's worth), or by 2^62 or more, cannot have
 *    counted that: the reading becomes the new base with a delta of 0,
 *    counted as an outside clear, never as a huge increment;
 *  - when a counter's source changes width (PortCountersExtended read
 *    or not), the new reading is the base with a delta of 0.
 */
#define PC_MAX_PER_S	100000000000ull	/* > a 12x XDR link's words/s */

struct pc_store;

/* What one reading changed, for the caller to log. */
struct pc_result {
	uint32_t increased;	/* bit i: delta[i] > 0 (error counters and
				 * PC_XMIT_WAIT) */
	bool     ext_clear;	/* an outside clear or implausible jump */
	bool     first;		/* the port's first reading */
};

int  pc_store_new(struct pc_store **out, size_t max_ports);
void pc_store_free(struct pc_store *s);
size_t pc_store_count(const struct pc_store *s);
size_t pc_store_max(const struct pc_store *s);

/* The port's record, or NULL. */
struct pc_port *pc_find(struct pc_store *s, uint64_t guid, uint8_t port);
/* The port's record, created (zeroed, no reading) when absent; NULL when
 * the store is full or out of memory. */
struct pc_port *pc_get(struct pc_store *s, uint64_t guid, uint8_t port);
/* Iterate: start with *it = 0; NULL at the end.  Order: as added, until
 * a removal reorders. */
const struct pc_port *pc_next(const struct pc_store *s, size_t *it);

/* Fold a reading taken at `now` (monotonic seconds) into `p`. */
void pc_update(struct pc_port *p, uint16_t lid, const struct pma_sample *smp,
	       double now, struct pc_result *res);

/* Whether one of the port's counters of 32 bits or fewer passed 75% of
 * its range (OpenSM clears then), and what to clear: every error counter,
 * PortXmitWait, and the data counters that are read as 32 bits. */
bool pc_needs_clear(const struct pc_port *p);
void pc_clear_select(const struct pc_port *p, uint16_t *select,
		     uint8_t *select2);
/* The performance manager's own clear of those counters took effect:
 * their next reading counts from 0. */
void pc_cleared(struct pc_port *p, uint16_t select, uint8_t select2);

/* Ports not read since `t` (their node did not answer, or was skipped):
 * their deltas become 0, so that an increment is never seen twice. */
void pc_expire_deltas(struct pc_store *s, double t);

/* Remove every port keep() refuses; returns how many went. */
size_t pc_remove_if(struct pc_store *s,
		    bool (*keep)(void *arg, const struct pc_port *p),
		    void *arg);
/* Remove one port; 0 or -ENOENT. */
int pc_remove(struct pc_store *s, uint64_t guid, uint8_t port);

/* Index of a counter by its name (perfquery's), or -1. */
int pc_id_by_name(const char *name);

#endif /* IBSM_HEALTH_COUNTERS_H */
