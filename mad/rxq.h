/*
 * rxq.h - the bounded queue between the receive pump and the loop.
 *
 * A fixed ring of MAD slots, allocated once: receiving never allocates,
 * and however fast MADs arrive while the loop is busy, the queue holds at
 * most `cap` of them (about 300 bytes each).  When a MAD does not fit, the
 * newest one (the one arriving) is dropped and counted; what is queued is
 * never evicted.
 *
 * Fairness.  Any host can send the SM MADs, so a flood from one port must
 * not crowd out the answers to our own requests nor other hosts:
 *
 *   responses    (R bit set, Trap Repress, or a non-zero umad status: the
 *                kernel handing back one of our sends) may hold 3/4 of the
 *                ring, so at least cap/4 slots stay free for requests;
 *   LID-routed   responses from a LID other than the permissive one (any
 *                host can send a MAD with the R bit set) may hold cap/4 in
 *                all, so directed-route answers to our own sweep (from LID
 *                0xffff) and our own sends keep at least cap/4 slots
 *                whatever hosts send; before, requests from 8 LIDs and
 *                forged answers from 2 filled the ring;
 *   requests     (everything else: traps, SA queries, SMInfo from other
 *                SMs) may hold at most cap/2 slots in all;
 *   per source   one source LID may hold at most cap/16 requests and cap/8
 *                responses.  Directed-route answers all come from the
 *                permissive LID 0xffff and are exempt from the per-source
 *                share of responses (they are answers to our own sweep).
 *                A "source" is a port: with rxq_set_source_lmc(), the LMC
 *                bits of the LID are cleared, so a host whose port has an
 *                LMC range of 2^LMC LIDs gets one share, not 2^LMC.
 *
 * Answers nobody asked for.  With rxq_set_tid_filter() (the engine's
 * on-wire TID counters, mad/engine.h), an SMP answer (classes 0x01 and
 * 0x81, R bit set, umad status 0) whose TID no request on the wire has
 * is dropped at once (stats.dropped_unexpected) instead of taking a slot:
 * forged directed-route answers from the permissive LID, which the shares
 * above cannot tell from the sweep's own, cannot crowd them out.  GMP
 * answers are not filtered: RMPP ACKs carry the requester's TIDs.
 *
 * Not thread-safe by itself: the pump serialises push() and the loop's
 * pop() with its own lock (mad/pump.c).  Slots [0, count) seen by the
 * consumer stay valid until it pops them: push() only writes past them.
 */
#ifndef IBSM_MAD_RXQ_H
#define IBSM_MAD_RXQ_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/engine.h"

#define RXQ_DEFAULT_CAP	4096	/* MADs: about 1.2 MB, allocated once */

struct rxq_entry {
	size_t		len;
	int		status;
	bool		response;
	uint16_t	key;		/* source key counted at push */
	struct mad_addr	from;
	uint8_t		mad[MAD_SIZE];
};

struct rxq_stats {
	uint64_t queued;		/* MADs accepted */
	uint64_t dropped_full;		/* ring (or the requests' half) full */
	uint64_t dropped_source;	/* one source LID over its share */
	uint64_t dropped_responses;	/* of the drops above, responses */
	uint64_t dropped_unexpected;	/* SMP answers to no request on the wire */
	unsigned high_water;		/* most MADs queued at once */
	unsigned cap;
};

struct rxq {
	struct rxq_entry *ring;
	unsigned cap, head, count;
	unsigned requests;		/* requests among the queued */
	unsigned responses;		/* responses among the queued */
	unsigned lid_responses;		/* of those, not from LID 0xffff */
	unsigned req_max, req_per_source, resp_per_source;
	unsigned resp_max, lid_resp_max;
	uint16_t src_mask;		/* LID -> source key (LMC bits off) */
	const _Atomic uint16_t *tid_filter;	/* NULL: none */
	uint16_t *per_lid_req, *per_lid_resp;	/* queued per source LID */
	struct rxq_stats stats;
};

/* cap 0 means RXQ_DEFAULT_CAP; at least 16.  Returns 0 or -ENOMEM. */
int  rxq_init(struct rxq *q, unsigned cap);
void rxq_fini(struct rxq *q);

/* Count the LIDs of one LMC range (lmc 0-7) as one source.  Takes effect
 * for MADs queued from then on. */
void rxq_set_source_lmc(struct rxq *q, unsigned lmc);

/* The engine's on-wire TID counters (mad_engine_wire_tids()), or NULL. */
void rxq_set_tid_filter(struct rxq *q, const _Atomic uint16_t *wire_tids);

/* Is this MAD an answer (see above)?  Looks at the method only. */
bool rxq_is_response(const void *mad, size_t len, int status);

/* Queue a copy of one MAD (len <= MAD_SIZE).  0, or -ENOBUFS (dropped). */
int  rxq_push(struct rxq *q, const void *mad, size_t len,
	      const struct mad_addr *from, int status);

static inline unsigned rxq_count(const struct rxq *q) { return q->count; }
/* The i-th queued MAD, oldest first (i < rxq_count()). */
static inline const struct rxq_entry *rxq_at(const struct rxq *q, unsigned i)
{
	return &q->ring[(q->head + i) % q->cap];
}
/* Release the n oldest MADs. */
void rxq_pop(struct rxq *q, unsigned n);

#endif /* IBSM_MAD_RXQ_H */
