/*
 * sendq.h - a bounded send queue and the thread that drains it, so that
 * the event loop never waits for the device.
 *
 * umad_send() may block: under ibsim's umad2sim preload it is a write to
 * the simulator's socket, which waits while the simulator's queue is
 * full, and the simulator may itself wait for us to read (a flood of
 * requests to answer): the loop would stop for good.  The loop therefore
 * only copies a MAD into this queue (never waiting) and one thread hands
 * them to the device in order.  Bounds: at most `cap` MADs wait; of
 * those, at most `per_dest` responses to one destination (a requester
 * that floods us cannot fill the queue with its answers and starve the
 * others' or our own requests).  A MAD beyond a bound is refused
 * (-ENOBUFS) and counted; the caller treats it as lost on the wire.
 */
#ifndef IBSM_MAD_SENDQ_H
#define IBSM_MAD_SENDQ_H

#include <stddef.h>
#include <stdint.h>

#include "mad/engine.h"

#define SENDQ_DEFAULT_CAP	4096
#define SENDQ_DEFAULT_PER_DEST	64
#define SENDQ_BATCH		16	/* waiting MADs that wake the thread */

/* The blocking send the thread calls: 0 or -errno. */
typedef int (*sendq_send_fn)(void *ctx, const void *mad, size_t len,
			     const struct mad_addr *addr, int timeout_ms);

struct sendq_stats {
	uint64_t queued, sent, failed;
	uint64_t refused_full, refused_dest;	/* over cap, over per_dest */
	unsigned waiting, peak;
};

struct sendq;

/* Start the thread.  0 or -errno. */
int sendq_start(struct sendq **out, sendq_send_fn fn, void *ctx,
		unsigned cap, unsigned per_dest);
/* Queue one MAD (at most MAD_SIZE bytes) and the timeout its send
 * takes; never blocks.  0 or -ENOBUFS.  The thread is woken when
 * SENDQ_BATCH MADs wait, else by sendq_flush(). */
int sendq_push(struct sendq *q, const void *mad, size_t len,
	       const struct mad_addr *addr, int timeout_ms);
/* Wake the thread for what waits: the loop calls it before it waits
 * (for a MAD or in its poll), so a batch leaves in one wake-up. */
void sendq_flush(struct sendq *q);
void sendq_get_stats(struct sendq *q, struct sendq_stats *out);
/* Send what waits (the device willing), stop the thread, free. */
void sendq_stop(struct sendq *q);

#endif /* IBSM_MAD_SENDQ_H */
