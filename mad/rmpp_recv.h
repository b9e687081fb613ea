/*
 * rmpp_recv.h - the receiving side of RMPP (IB spec 13.6.3.2, 13.6.4) for
 * a client that asked the SA for a table (GetTable, GetMulti) and gets the
 * answer as a multi-segment transfer.
 *
 * The first segment completes the client's request in the engine like any
 * response; the later ones match no outstanding request any more and come
 * through the engine's per-class unmatched hook.  A receiver takes the
 * first segment, ACKs every segment that arrives in order, re-ACKs
 * duplicates (the sender missed our ACK) and gaps (it lost a segment),
 * and ends the transfer on the LAST segment, on an ABORT or STOP from the
 * sender, on a protocol error (ABORT with the RMPP status of the error)
 * or when no new segment came for timeout_ms (ABORT, status TMR).
 *
 * Everything it receives is untrusted: lengths, segment numbers, flags
 * and types are checked before they are used, and the payload never grows
 * beyond max_len.
 *
 * Two layers:
 *   rmpp_receiver  one transfer; the caller feeds it the MADs that belong
 *                  to it (rmpp_receiver_matches() tells which).
 *   rmpp_client    request + receiving for the caller: submits the request
 *                  through the engine, starts a receiver on the first
 *                  segment and routes later ones to it.  One per engine
 *                  and management class (it owns the unmatched hook).
 *
 * Single-threaded: every call and callback runs on the loop thread.  The
 * callbacks never run inside the call that started or fed a transfer;
 * they come from the loop (a zero-delay timer), so a callback may free
 * what it likes.
 */
#ifndef IBSM_MAD_RMPP_RECV_H
#define IBSM_MAD_RMPP_RECV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ev.h>

#include "mad/engine.h"
#include "mad/rmpp.h"

#define RMPP_RECV_WINDOW	32			/* segments */
#define RMPP_RECV_TIMEOUT_MS	2000
#define RMPP_RECV_MAX_LEN	((size_t)64 << 20)	/* 64 MiB of payload */

struct rmpp_recv_opts {
	unsigned window;	/* NewWindowLast = last in-order + window */
	unsigned timeout_ms;	/* longest wait for the next segment */
	size_t   max_len;	/* largest payload accepted (bytes) */
	/*
	 * Method of our ACK/ABORT/STOP.  Default (false): the data's method
	 * with the R bit cleared (GetTableResp 0x92 -> GetTable 0x12), as
	 * the Linux kernel's RMPP sends them (format_ack() in
	 * drivers/infiniband/core/mad_rmpp.c).  It has to be: the kernel on
	 * the SM's side routes a response-method MAD by the upper TID bits,
	 * which name the requester's agent, not the SM's, and ibsim does the
	 * same (find_client() matches responses by TID to the requester's
	 * client) and drops it.  true: keep the data's method (0x92), for a
	 * peer that wants it so.
	 */
	bool     ack_response_method;
};

/* Zero fields of opts mean the defaults above. */
void rmpp_recv_opts_default(struct rmpp_recv_opts *o);

/* How a transfer (or a plain single-MAD answer) ended. */
struct rmpp_result {
	/*
	 * 0: complete.  -ETIMEDOUT: no answer to the request, or no segment
	 * for timeout_ms in the middle of a transfer (segments < expected
	 * tells the difference).  -ECONNABORTED: ABORT or STOP from the
	 * sender.  -EPROTO: a protocol error (we sent ABORT).  -EMSGSIZE:
	 * the answer is larger than max_len (we sent STOP).  -ECANCELED:
	 * torn down.  -ENOMEM.
	 */
	int status;
	/* Headers (and first 200 data bytes) of the first segment: MAD
	 * status, AttributeOffset.  NULL when nothing was answered. */
	const struct sa_mad *first;
	const uint8_t *payload;	/* reassembled data, valid during the call */
	size_t len;
	uint32_t segments;	/* received in order */
	uint32_t expected;	/* announced by the first segment (0: unknown) */
	uint8_t rmpp_status;	/* status of the ABORT/STOP sent or received */
	bool rmpp;		/* the answer was an RMPP transfer */
	/*
	 * ACTIVE was set but RMPPVersion was 0 and nothing else of the RMPP
	 * header: the image of a whole answer that the sender handed to its
	 * kernel to segment, which did not happen (OpenSM under ibsim's
	 * umad2sim).  Its payload is whatever arrived: complete when the MAD
	 * was shorter than 256 bytes, possibly cut after 200 bytes when not.
	 */
	bool unsegmented;
};

typedef void (*rmpp_recv_cb)(void *arg, const struct rmpp_result *res);

/* ------------------------------------------------------------ receiver */

struct rmpp_receiver;

/*
 * Take over the answer `first` (len bytes) that completed a request sent
 * to `peer`: a plain MAD without the ACTIVE flag is a whole answer of its
 * own; an RMPP DATA segment 1 starts a transfer (ACKed at once).  done
 * runs exactly once, later, from the loop.  Returns 0, or -EINVAL/-ENOMEM
 * (and done never runs).
 */
int rmpp_recv_start(struct rmpp_receiver **out, struct ev_loop *loop,
		    struct mad_engine *e, const void *first, size_t len,
		    const struct mad_addr *peer,
		    const struct rmpp_recv_opts *opts,
		    rmpp_recv_cb done, void *arg);

/* Does a MAD with this TID (host order), from this source, belong here? */
bool rmpp_receiver_matches(const struct rmpp_receiver *r, uint64_t tid,
			   const struct mad_addr *from);

/* A later MAD of the transfer (a segment, a duplicate, ABORT, STOP). */
void rmpp_receiver_input(struct rmpp_receiver *r, const void *mad, size_t len);

/* Stop and free; done does not run if it has not yet. */
void rmpp_receiver_free(struct rmpp_receiver *r);

/* -------------------------------------------------------------- client */

struct rmpp_client;

/*
 * Register for `mgmt_class` (e.g. MAD_CLASS_SA) on the engine.  The engine
 * keeps calling the client until it is freed: free the engine first, then
 * the client.  Returns 0 or -errno (-EEXIST: the class is taken).
 */
int rmpp_client_new(struct rmpp_client **out, struct ev_loop *loop,
		    struct mad_engine *e, uint8_t mgmt_class,
		    const struct rmpp_recv_opts *opts);

/*
 * Send a request (Get, GetTable, GetMulti...) to `to` and deliver the
 * whole answer to cb, once.  Returns 0 or -errno from the engine.
 */
int rmpp_client_query(struct rmpp_client *c, const void *req, size_t len,
		      const struct mad_addr *to, rmpp_recv_cb cb, void *arg);

/* MADs of the class that belonged to no transfer (stale, foreign). */
uint64_t rmpp_client_strays(const struct rmpp_client *c);

/* Transfers still running end with -ECANCELED; call after
 * mad_engine_free(). */
void rmpp_client_free(struct rmpp_client *c);

#endif /* IBSM_MAD_RMPP_RECV_H */
