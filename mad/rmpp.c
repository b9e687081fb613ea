/*
 * rmpp.c - RMPP validation and the sending side (see rmpp.h).
 *
 * Sender states (13.6.3.3, simplified for one transfer at a time):
 *
 *   SENDING   segments acked+1 .. window_last are on the wire; an ACK
 *             moves `acked` and `window_last` forward and sends more
 *   done      the ACK of the last segment arrived: done(0)
 *   given up  no progress for `retries` timeouts: ABORT (TMR), done(-ETIMEDOUT);
 *             ABORT or STOP from the receiver: done(-ECONNABORTED)
 *   expired   the lifetime ran out: ABORT (TMR), done(-ETIMEDOUT)
 *
 * Progress is a newly acknowledged segment: an ACK that repeats the last
 * one (or a window alone) does not count, so a receiver cannot hold a
 * transfer open by acknowledging the same segment forever.  Nor by
 * acknowledging one segment at a time slowly: the lifetime allows the
 * retry budget of one stall, timeout x (retries + 1), plus the time the
 * segments take at the minimum rate, and never more than the maximum
 * lifetime (rmpp_sender_set_limits()).
 *
 * The first window is one segment, as the spec asks until the receiver
 * has told us its window.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mad/rmpp.h"

int rmpp_validate(const struct sa_mad *m)
{
	const struct rmpp_hdr *r = &m->rmpp;

	if (!(rmpp_flags(r) & RMPP_FLAG_ACTIVE))
		return 0;			/* not an RMPP MAD at all */
	if (r->version != RMPP_VERSION)
		return -EPROTO;
	switch (r->type) {
	case RMPP_TYPE_DATA:
		if (be32toh(r->data1) == 0 ||
		    be32toh(r->data1) > RMPP_MAX_SEGMENTS)
			return -EPROTO;
		break;
	case RMPP_TYPE_ACK:
		if (be32toh(r->data2) < be32toh(r->data1))
			return -EPROTO;	/* window below the acked segment */
		break;
	case RMPP_TYPE_STOP:
	case RMPP_TYPE_ABORT:
		break;
	default:
		return -EPROTO;
	}
	return 0;
}

void rmpp_set_single(struct sa_mad *m, size_t len)
{
	size_t pad = RMPP_SEG_DATA - (len < RMPP_SEG_DATA ? len : RMPP_SEG_DATA);

	rmpp_set(&m->rmpp, RMPP_TYPE_DATA,
		 RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST | RMPP_FLAG_LAST, 1,
		 (uint32_t)(RMPP_SEG_PAYLOAD - pad));
}

struct rmpp_sender {
	struct ev_loop *loop;
	struct mad_engine *engine;
	struct sa_mad hdr;		/* template: headers of every segment */
	uint8_t *payload;
	size_t len;
	uint32_t segments;
	uint32_t acked;			/* highest segment acknowledged */
	uint32_t window_last;		/* may send up to this segment */
	uint32_t sent_upto;		/* highest segment sent */
	struct mad_addr to;
	unsigned timeout_ms, retries, tries;
	ev_timer timer;
	ev_timer life;			/* the whole transfer's deadline */
	ev_tstamp started;
	void (*done)(void *arg, int status);
	void *arg;
};

static void send_segment(struct rmpp_sender *s, uint32_t seg)
{
	struct sa_mad m = s->hdr;
	size_t off = (size_t)(seg - 1) * RMPP_SEG_DATA;
	size_t n = s->len - off < RMPP_SEG_DATA ? s->len - off : RMPP_SEG_DATA;
	size_t pad = (size_t)s->segments * RMPP_SEG_DATA - s->len;
	unsigned flags = RMPP_FLAG_ACTIVE;
	uint32_t paylen = 0;

	if (seg == 1) {
		flags |= RMPP_FLAG_FIRST;
		paylen = (uint32_t)(s->segments * RMPP_SEG_PAYLOAD - pad);
	}
	if (seg == s->segments) {
		flags |= RMPP_FLAG_LAST;
		paylen = (uint32_t)(RMPP_SEG_PAYLOAD - pad);
	}
	rmpp_set(&m.rmpp, RMPP_TYPE_DATA, flags, seg, paylen);
	memset(m.data, 0, sizeof(m.data));
	if (n)
		memcpy(m.data, s->payload + off, n);
	mad_engine_send_oneway(s->engine, &m, sizeof(m), &s->to);
}

static void send_window(struct rmpp_sender *s, uint32_t from)
{
	uint32_t last = s->window_last < s->segments ? s->window_last : s->segments;

	for (uint32_t seg = from; seg <= last; seg++)
		send_segment(s, seg);
	if (last > s->sent_upto)
		s->sent_upto = last;
	ev_timer_stop(s->loop, &s->timer);
	ev_timer_set(&s->timer, s->timeout_ms / 1000.0, 0.);
	ev_timer_start(s->loop, &s->timer);
}

static void finish(struct rmpp_sender *s, int status)
{
	void (*done)(void *, int) = s->done;
	void *arg = s->arg;

	ev_timer_stop(s->loop, &s->timer);
	ev_timer_stop(s->loop, &s->life);
	s->done = NULL;
	if (done)
		done(arg, status);	/* may free s */
}

static void send_abort(struct rmpp_sender *s, uint8_t status)
{
	struct sa_mad m = s->hdr;

	rmpp_set(&m.rmpp, RMPP_TYPE_ABORT, RMPP_FLAG_ACTIVE, 0, 0);
	m.rmpp.status = status;
	memset(m.data, 0, sizeof(m.data));
	mad_engine_send_oneway(s->engine, &m, sizeof(m), &s->to);
}

static void on_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct rmpp_sender *s = w->data;

	if (++s->tries > s->retries) {
		send_abort(s, RMPP_STATUS_TMR);
		finish(s, -ETIMEDOUT);
		return;
	}
	send_window(s, s->acked + 1);
}

static void on_expired(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct rmpp_sender *s = w->data;

	(void)loop;
	(void)revents;
	send_abort(s, RMPP_STATUS_TMR);
	finish(s, -ETIMEDOUT);
}

unsigned rmpp_lifetime_ms(unsigned segments, unsigned timeout_ms,
			  unsigned retries, unsigned max_ms, unsigned min_rate)
{
	uint64_t ms = max_ms;

	if (min_rate) {
		ms = (uint64_t)timeout_ms * (retries + 1u) +
		     ((uint64_t)segments * 1000u + min_rate - 1) / min_rate;
		if (max_ms && ms > max_ms)
			ms = max_ms;
	}
	return ms > UINT_MAX ? UINT_MAX : (unsigned)ms;
}

void rmpp_sender_set_limits(struct rmpp_sender *s, unsigned max_ms,
			    unsigned min_rate)
{
	unsigned ms = rmpp_lifetime_ms(s->segments, s->timeout_ms, s->retries,
				       max_ms, min_rate);
	ev_tstamp left = s->started + ms / 1000.0 - ev_now(s->loop);

	ev_timer_stop(s->loop, &s->life);
	if (!ms)
		return;			/* no bound at all */
	ev_timer_set(&s->life, left > 0 ? left : 0., 0.);
	ev_timer_start(s->loop, &s->life);
}

int rmpp_send(struct rmpp_sender **out, struct ev_loop *loop,
	      struct mad_engine *e, const struct sa_mad *hdr,
	      uint8_t *payload, size_t len, const struct mad_addr *to,
	      unsigned timeout_ms, unsigned retries,
	      void (*done)(void *arg, int status), void *arg)
{
	struct rmpp_sender *s;

	if (len > (size_t)RMPP_SEG_DATA * 0x100000 || (len && !payload)) {
		free(payload);
		return -EMSGSIZE;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		free(payload);
		return -ENOMEM;
	}
	s->payload = payload;
	s->loop = loop;
	s->engine = e;
	s->hdr = *hdr;
	s->len = len;
	s->segments = rmpp_segments(len);
	s->window_last = 1;
	s->to = *to;
	s->timeout_ms = timeout_ms ? timeout_ms : 200;
	s->retries = retries;
	s->done = done;
	s->arg = arg;
	ev_timer_init(&s->timer, on_timeout, 0., 0.);
	s->timer.data = s;
	ev_timer_init(&s->life, on_expired, 0., 0.);
	s->life.data = s;
	s->started = ev_now(loop);
	*out = s;
	rmpp_sender_set_limits(s, RMPP_DEF_MAX_LIFETIME_MS, RMPP_DEF_MIN_RATE);
	send_window(s, 1);
	return 0;
}

bool rmpp_sender_matches(const struct rmpp_sender *s, uint64_t tid,
			 const struct mad_addr *from)
{
	return s->hdr.hdr.tid == tid && s->to.lid == from->lid &&
	       s->to.qpn == from->qpn;
}

void rmpp_sender_input(struct rmpp_sender *s, const struct sa_mad *m)
{
	if (rmpp_validate(m) < 0 || !(rmpp_flags(&m->rmpp) & RMPP_FLAG_ACTIVE))
		return;
	switch (m->rmpp.type) {
	case RMPP_TYPE_ACK: {
		uint32_t seg = be32toh(m->rmpp.data1);
		uint32_t wl = be32toh(m->rmpp.data2);

		/* An ACK beyond what we sent is a protocol error (13.6.3.3). */
		if (seg > s->sent_upto) {
			send_abort(s, RMPP_STATUS_S2B);
			finish(s, -ECONNABORTED);
			return;
		}
		if (seg < s->acked)
			return;		/* stale */
		if (seg > s->acked)
			s->tries = 0;	/* progress; a repeated ACK is none */
		s->acked = seg;
		if (wl > s->window_last)
			s->window_last = wl;
		if (s->acked >= s->segments) {
			finish(s, 0);
			return;
		}
		send_window(s, s->sent_upto + 1 > s->acked + 1 ?
			       s->sent_upto + 1 : s->acked + 1);
		break;
	}
	case RMPP_TYPE_STOP:
	case RMPP_TYPE_ABORT:
		finish(s, -ECONNABORTED);
		break;
	default:
		break;
	}
}

void rmpp_sender_cancel(struct rmpp_sender *s, uint8_t status)
{
	send_abort(s, status);
	finish(s, -ECANCELED);
}

void rmpp_sender_free(struct rmpp_sender *s)
{
	if (!s)
		return;
	ev_timer_stop(s->loop, &s->timer);
	ev_timer_stop(s->loop, &s->life);
	free(s->payload);
	free(s);
}
