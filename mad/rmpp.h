/*
 * rmpp.h - Reliable Multi-Packet Transaction Protocol (IB spec 13.6) in
 * user space, for SA answers longer than one MAD.
 *
 * The kernel can do RMPP for an agent registered with rmpp_version 1,
 * but ibsim's umad2sim preload has no RMPP at all; doing it here works on
 * hardware and under ibsim alike.  Agents are registered with
 * rmpp_version 0 so the kernel passes every segment through untouched.
 *
 * Segments carry the whole MAD header, the RMPP header and the class
 * header (for SA: SM_Key .. ComponentMask, 20 bytes) followed by
 * RMPP_SEG_DATA bytes of the payload.  PayloadLength follows the kernel's
 * sender: first segment = segments x 220 - pad, last = 220 - pad.
 */
#ifndef IBSM_MAD_RMPP_H
#define IBSM_MAD_RMPP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ev.h>

#include "mad/engine.h"
#include "mad/sa_wire.h"

#define RMPP_VERSION		1
#define RMPP_SEG_DATA		SA_DATA_SIZE		/* 200 payload bytes */
#define RMPP_SEG_PAYLOAD	(MAD_SIZE - 36)		/* 220: class hdr + data */
#define RMPP_RESP_TIME_NONE	0x1f			/* RRespTime: no value */
#define RMPP_MAX_SEGMENTS	0x7fffffff

/* RMPP status (13.6.2.1, table 176) for ABORT and STOP */
enum {
	RMPP_STATUS_NORMAL = 0, RMPP_STATUS_RESX = 1,
	RMPP_STATUS_T2L = 118, RMPP_STATUS_BAD_LEN = 119,
	RMPP_STATUS_BAD_SEG = 120, RMPP_STATUS_BADT = 121,
	RMPP_STATUS_W2S = 122, RMPP_STATUS_S2B = 123,
	RMPP_STATUS_BAD_STATUS = 124, RMPP_STATUS_UNV = 125,
	RMPP_STATUS_TMR = 126, RMPP_STATUS_UNSPEC = 127,
};

static inline unsigned rmpp_flags(const struct rmpp_hdr *r)
{ return r->resptime_flags & 0x7; }
static inline void rmpp_set(struct rmpp_hdr *r, uint8_t type, unsigned flags,
			    uint32_t d1, uint32_t d2)
{
	r->version = RMPP_VERSION;
	r->type = type;
	r->resptime_flags = (uint8_t)(RMPP_RESP_TIME_NONE << 3 | (flags & 7));
	r->status = 0;
	r->data1 = htobe32(d1);
	r->data2 = htobe32(d2);
}

/* Segments needed for `len` payload bytes (at least one). */
static inline uint32_t rmpp_segments(size_t len)
{
	return len ? (uint32_t)((len + RMPP_SEG_DATA - 1) / RMPP_SEG_DATA) : 1;
}

/*
 * Check the RMPP header of a received MAD: version, type, flags and the
 * segment number are sane.  Returns 0 or -EPROTO.
 */
int rmpp_validate(const struct sa_mad *m);

/*
 * Mark `m` as a whole RMPP transfer in one segment carrying `len` (<= 200)
 * payload bytes: ACTIVE, FIRST and LAST, segment 1.  Nothing to wait for.
 */
void rmpp_set_single(struct sa_mad *m, size_t len);

/* ------------------------------------------------------------ sender */

struct rmpp_sender;

/*
 * Send `len` bytes of payload as an RMPP transfer.  `hdr` is the first 56
 * bytes every segment starts with (MAD header with method, status and
 * TID of the answer; the class header); the RMPP header is filled in here.
 * The sender takes `payload` (from malloc; NULL when len is 0) and frees
 * it when it is freed, or at once when rmpp_send fails: an SA answer of
 * megabytes is never copied, so its memory is paid once.  It copies the
 * rest.  done(arg, status) runs once when the receiver has acknowledged
 * the last segment (0) or the transfer was given up (-ETIMEDOUT: no
 * newly acknowledged segment for `retries` timeouts, or its lifetime ran
 * out; -ECONNABORTED on ABORT/STOP from the receiver).
 */
int rmpp_send(struct rmpp_sender **out, struct ev_loop *loop,
	      struct mad_engine *e, const struct sa_mad *hdr,
	      uint8_t *payload, size_t len, const struct mad_addr *to,
	      unsigned timeout_ms, unsigned retries,
	      void (*done)(void *arg, int status), void *arg);

/*
 * A transfer's lifetime: timeout_ms x (retries + 1), the budget of one
 * stall, plus segments / min_rate seconds (min_rate segments acknowledged
 * per second at least), at most max_ms (0: no maximum); min_rate 0: no
 * rate, max_ms alone (both 0: no lifetime).  A transfer still running
 * then is given up: ABORT (TMR), done(-ETIMEDOUT).
 * rmpp_send() applies the defaults; rmpp_sender_set_limits() replaces
 * them, counting from the start of the transfer.
 */
#define RMPP_DEF_MAX_LIFETIME_MS	60000
#define RMPP_DEF_MIN_RATE		100	/* segments/s: 20 KB/s */
unsigned rmpp_lifetime_ms(unsigned segments, unsigned timeout_ms,
			  unsigned retries, unsigned max_ms, unsigned min_rate);
void rmpp_sender_set_limits(struct rmpp_sender *s, unsigned max_ms,
			    unsigned min_rate);

/* An ACK, STOP or ABORT for this sender's transfer (same TID and peer). */
void rmpp_sender_input(struct rmpp_sender *s, const struct sa_mad *m);
bool rmpp_sender_matches(const struct rmpp_sender *s, uint64_t tid,
			 const struct mad_addr *from);
/* Give the transfer up: ABORT with `status` to the receiver, then
 * done(-ECANCELED) (which may free the sender). */
void rmpp_sender_cancel(struct rmpp_sender *s, uint8_t status);
/* Stop and free (with its payload) without calling done. */
void rmpp_sender_free(struct rmpp_sender *s);

#endif /* IBSM_MAD_RMPP_H */
