/*
 * perf.h - the performance manager: on the master, with `perfmgr TRUE`,
 * every perfmgr_sweep_time_s seconds it reads the PortCounters (and,
 * when the node's ClassPortInfo says it has them, PortCountersExtended)
 * of every port of every node of the current model (all of a switch's
 * external ports, linked or not, as OpenSM does; a CA's linked ports),
 * LID-routed to the node's PMA (QP1, the GSI Q_Key), and folds them into
 * the counter store (health/counters.h).
 *
 * Its MADs go in a window of their own in the engine (at most
 * perfmgr_max_outstanding_queries on the wire), so they never hold back
 * the sweeps' SMPs nor the SA's GMPs; no counter sweep starts while a
 * heavy sweep runs, and one in progress sends nothing new until that
 * sweep is over.  A PMA re-sends at most once.  A node whose PMA answers
 * nothing is marked unresponsive; the next counter sweeps only probe it
 * (its ClassPortInfo) until it answers again.
 *
 * Counters of 32 bits or fewer past 75% of their range are cleared (a
 * Set with CounterSelect), as OpenSM does; a clear by someone else is
 * noticed by the store.  Each error counter increment is logged once,
 * naming both ends of the link (perfmgr_log_errors), rate limited; so is
 * PortXmitWait above perfmgr_xmit_wait_threshold (perfmgr_xmit_wait_log).
 * After each counter sweep: nodes gone from the model are dropped
 * (perfmgr_rm_nodes), the counters are written to event_db_dump_file
 * (atomically), the line "perfmgr: sweep N done: P ports, Q MADs, T s"
 * is logged and SM_EV_PERF_DONE is posted.
 *
 * Log codes: ERR 5401 (error counters rose), 5402 (PortXmitWait), 5403
 * (counters cleared by someone else, informational), 5404 (a PMA stopped
 * answering), 5405 (bad PMA answers), 5406 (the dump file), 5407 (the
 * store is full), 5408 and 5409 (out of memory: no sweep, no manager).
 */
#ifndef IBSM_SM_PERF_PERF_H
#define IBSM_SM_PERF_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "health/counters.h"

struct sm;
struct perfmgr;
struct ctl_answer;

/*
 * The most PMA MADs on the wire whatever perfmgr_max_outstanding_queries
 * says (OpenSM's default is 500): the kernel's MAD layer keeps 128 sends
 * on QP1 at once (ib_mad's send_queue_size) and queues the rest itself,
 * and a burst of answers larger than the receiving socket holds makes
 * ibsim drop the client.  With the SMP and GMP windows it stays well
 * below QP1's 512 receive buffers.
 */
#define PERF_WINDOW_MAX		128

/* The most ports the store keeps. */
#define PERF_MAX_PORTS		(1u << 20)

struct perf_stats {
	unsigned sweeps;		/* counter sweeps completed */
	uint64_t mads;			/* PMA MADs sent, all time */
	uint64_t failed_reads;		/* ports that gave no reading */
	uint64_t bad_answers;		/* answers the decoder refused */
	uint64_t clears;		/* clears sent and answered */
	unsigned unresponsive;		/* nodes now marked so */
	/* the last counter sweep */
	unsigned last_ports;		/* ports read */
	uint64_t last_mads;
	double   last_seconds;
	double   last_end;		/* ev_now() when it ended; 0: none */
};

/* With sm->cfg.perfmgr: create sm->perf and its timer (0 or -errno);
 * without: nothing (sm->perf stays NULL). */
int  perf_start(struct sm *sm);
/* The subnet came up (a heavy sweep finished as master): a counter sweep
 * that waited for it goes on; the first one starts now. */
void perf_subnet_up(struct sm *sm);
/* Around mad_engine_free(), as sm/worker.h says: the first call marks
 * the manager, the second frees it. */
void perf_abort(struct sm *sm);

/* Start a counter sweep now (the control socket, tests): 0, -EBUSY when
 * one runs, -EAGAIN when this SM is not a master with a subnet up,
 * -ENOTSUP without a performance manager. */
int  perf_sweep_now(struct sm *sm);

const struct pc_store *perf_store(const struct perfmgr *pm);
const struct perf_stats *perf_stats(const struct perfmgr *pm);
/* Whether the PMA of the node `guid` answered nothing lately. */
bool perf_node_unresponsive(const struct perfmgr *pm, uint64_t guid);

/*
 * perf_out.c: the control socket's `counters [TARGET] [errors] [json]`:
 * TARGET is a node description, a node GUID or a LID, each optionally
 * followed by ":PORT".  Adds the answer's data lines to `a` and returns
 * 0 with a summary in msg, or -1 with the reason in msg.
 */
int  perf_ctl_counters(struct sm *sm, const char *target, bool errors,
		       bool json, struct ctl_answer *a, char *msg,
		       size_t msglen);
/* The status lines of the performance manager ("perfmgr off", or "on"
 * and its sweeps, ports, MADs, unresponsive nodes, ...). */
void perf_ctl_status(const struct sm *sm, struct ctl_answer *a);
/* The counters in event_db_dump_file's format (see ibsm.conf(5)). */
int  perf_dump_write(FILE *fp, const void *sm);

#endif /* IBSM_SM_PERF_PERF_H */
