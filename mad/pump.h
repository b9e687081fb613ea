/*
 * pump.h - the receive pump: MADs from a receive function into the
 * bounded queue of mad/rxq.h and on to the loop thread, in one of three
 * modes:
 *   thread  a thread blocks on the receive function and wakes the loop
 *           through an ev_async (pump_start(); the unit tests' fakes);
 *   fd      the loop watches a descriptor and receives itself
 *           (pump_start_fd(): ibsim's socket, mad/sim_io.h);
 *   waker   the loop receives itself, and a thread waits on a descriptor
 *           epoll cannot watch only while the loop found nothing left
 *           (pump_start_waker(): the umad fd, mad/umad_io.c).
 *
 * The thread mode's thread looks inside a MAD only at its header: the method (to tell
 * an answer from a request for the queue's fairness rules) and, for SMP
 * answers, the class and TID (the engine's on-wire TID counters, read
 * with relaxed atomic loads).  It never calls anything but the receive
 * function.  Everything else runs on the loop.
 *
 * Receive errors.  "Nothing yet" (-ETIMEDOUT, -EAGAIN/-EWOULDBLOCK,
 * -EINTR) is the normal idle state.  Any other error is counted and the
 * thread backs off (1 ms, doubling to 1 s) instead of spinning on a dead
 * device.  After PUMP_ERR_PERMANENT errors in a row without a MAD in
 * between, the pump declares the receive path failing and tells the loop
 * once through the error callback; when a MAD arrives again it tells the
 * loop once more (err 0).
 */
#ifndef IBSM_MAD_PUMP_H
#define IBSM_MAD_PUMP_H

#include <stdbool.h>
#include <stdint.h>
#include <ev.h>

#include "mad/engine.h"
#include "mad/rxq.h"

#define PUMP_POLL_MS		50	/* how often the thread checks for stop */
#define PUMP_BATCH		256	/* MADs delivered per loop iteration */
#define PUMP_ERR_PERMANENT	8	/* errors in a row that mean "failing" */
#define PUMP_BACKOFF_MAX_MS	1000
#define PUMP_LINGER_MS		1	/* waker mode: the loop's own wait */
#define PUMP_LINGER_ROUNDS	8	/* ... rounds in a row at most */

/*
 * Receive one MAD into mad (MAD_SIZE bytes), waiting at most timeout_ms.
 * Returns 0 with *len, *from and *status filled, or -errno.
 */
typedef int (*pump_recv_fn)(void *ctx, void *mad, size_t *len,
			    struct mad_addr *from, int *status, int timeout_ms);

/* Loop thread: one received MAD, oldest first. */
typedef void (*pump_deliver_cb)(void *arg, const void *mad, size_t len,
				const struct mad_addr *from, int status);

/*
 * Loop thread: the receive path started failing (err < 0: the last error,
 * errors: how many so far) or works again (err == 0).
 */
typedef void (*pump_error_cb)(void *arg, int err, uint64_t errors);

struct pump_stats {
	struct rxq_stats queue;
	uint64_t recv_errors;	/* receive calls that failed (not "nothing yet") */
	int	 last_error;	/* -errno of the last one, 0 if none */
	bool	 failing;	/* PUMP_ERR_PERMANENT or more in a row, right now */
	/* waker mode: the loop's waits for more MADs before arming the
	 * waker, and how many of them got some */
	uint64_t lingers, linger_hits;
};

struct pump;

/* queue_len 0: RXQ_DEFAULT_CAP.  Starts the thread.  0 or -errno. */
int  pump_start(struct pump **out, struct ev_loop *loop, pump_recv_fn recv,
		void *recv_ctx, unsigned queue_len, pump_deliver_cb deliver,
		void *arg);
/* Count the LIDs of one LMC range as one source in the queue's fairness
 * (rxq_set_source_lmc()); any thread, before or after start. */
void pump_set_source_lmc(struct pump *p, unsigned lmc);
/* Drop SMP answers to no request on the wire (rxq_set_tid_filter());
 * any thread, before or after start; the counters must outlive the pump. */
void pump_set_tid_filter(struct pump *p, const _Atomic uint16_t *wire_tids);
/* Set before or after start; NULL for none. */
void pump_on_error(struct pump *p, pump_error_cb cb, void *arg);
/*
 * The same without a thread, for a descriptor epoll can watch (ibsim's
 * socket, mad/sim_io.h): the loop calls recv (timeout 0) itself when fd
 * is readable, at most one round of 64 MADs per loop iteration, with the
 * same queue, rules and error back-off.  The caller keeps fd open until
 * pump_stop().
 */
int  pump_start_fd(struct pump **out, struct ev_loop *loop, int fd,
		   pump_recv_fn recv, void *recv_ctx, unsigned queue_len,
		   pump_deliver_cb deliver, void *arg);
/*
 * Wait at most timeout_ms for the receive side to have a MAD (waker mode):
 * > 0 when it has one (or may have: the loop's recv tells), 0 when none
 * came, -errno when the wait failed.  Called on the waker thread, and on
 * the loop with a timeout of PUMP_LINGER_MS (its linger).
 */
typedef int (*pump_wait_fn)(void *ctx, int timeout_ms);
/*
 * fd mode for a descriptor epoll cannot watch (umad2sim's fake umad fd):
 * the loop calls recv (timeout 0) itself, round after round of 64 MADs
 * with the same queue, rules and error back-off, while some are left; a
 * thread calls wait only when the loop found none, and wakes the loop when
 * it returns.  A burst that comes while the loop is busy is taken without
 * a thread hand-over per MAD.  Before arming the waker the loop waits
 * PUMP_LINGER_MS itself (PUMP_LINGER_ROUNDS rounds in a row at most before
 * its other watchers get a turn), so that MADs that come one by one,
 * each soon after the last, need no hand-over either.  recv and wait
 * share recv_ctx.
 */
int  pump_start_waker(struct pump **out, struct ev_loop *loop,
		      pump_wait_fn wait, pump_recv_fn recv, void *recv_ctx,
		      unsigned queue_len, pump_deliver_cb deliver, void *arg);
/* Stop (and join the thread), drop what is queued, free. */
void pump_stop(struct pump *p);
/* A snapshot of the counters (any thread). */
void pump_stats(struct pump *p, struct pump_stats *out);

#endif /* IBSM_MAD_PUMP_H */
