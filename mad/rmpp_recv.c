/*
 * rmpp_recv.c - the receiving side of RMPP (see rmpp_recv.h).
 *
 * Receiver states (13.6.4, one transfer, go-back-N like the sender):
 *
 *   RECEIVING  segments 1..last arrived in order and were ACKed with
 *              NewWindowLast = last + window.  The next segment extends
 *              the payload and is ACKed; a duplicate (<= last) is
 *              re-ACKed, since the sender resends when our ACK got lost; a
 *              segment past a gap is dropped and the gap reported once
 *              with a re-ACK of `last` (the sender resends from last + 1
 *              when its timer runs out).  The inactivity timer restarts
 *              on every in-order segment.
 *   DONE       the LAST segment arrived and its length agrees with the
 *              first segment's: ACKed, done(0).  Duplicates that still
 *              come in are re-ACKed until the receiver is freed.
 *   FAILED     ABORT or STOP from the sender (done(-ECONNABORTED)); a
 *              protocol error, answered with ABORT and the RMPP status
 *              of the error (-EPROTO); too large (STOP ResX,
 *              -EMSGSIZE); no segment for timeout_ms (ABORT TMR,
 *              -ETIMEDOUT).
 *
 * Lengths (13.6.2.1, as the Linux kernel's sender fills them): every
 * segment carries 220 bytes of RMPP payload, the 20-byte SA header and
 * 200 data bytes.  The first segment's PayloadLength is segments x 220
 * minus the pad of the last one (0 = not announced); the last segment's
 * PayloadLength is 220 - pad.  The data kept is the 200 data bytes of
 * each segment, without the pad of the last.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad/rmpp_recv.h"

#define SEG_HDR_SIZE	(MAD_SIZE - RMPP_SEG_DATA)	/* 56: MAD+RMPP+SA */

enum recv_state { RECV_RECEIVING, RECV_DONE, RECV_FAILED };

struct rmpp_receiver {
	struct ev_loop *loop;
	struct mad_engine *engine;
	struct rmpp_recv_opts opts;
	struct mad_addr peer;
	struct sa_mad first;		/* segment 1 as received */
	uint64_t tid;			/* host order, all 64 bits */
	uint8_t method;			/* of the data segments */
	uint16_t attr_id;		/* network order, as in the MAD */
	enum recv_state state;
	bool rmpp;
	bool unsegmented;
	bool reported;			/* done() has run */
	uint32_t last;			/* last segment received in order */
	uint32_t expected;		/* from the first PayloadLength, or 0 */
	uint32_t first_paylen;
	uint32_t max_segments;		/* max_len in segments */
	uint32_t gap_reported;		/* `last` when a gap was last re-ACKed */
	uint8_t *buf;
	size_t len, cap;
	int status;
	uint8_t rmpp_status;
	ev_timer timer;			/* inactivity, then the deferred done */
	rmpp_recv_cb done;
	void *arg;
};

void rmpp_recv_opts_default(struct rmpp_recv_opts *o)
{
	if (!o->window)
		o->window = RMPP_RECV_WINDOW;
	if (!o->timeout_ms)
		o->timeout_ms = RMPP_RECV_TIMEOUT_MS;
	if (!o->max_len)
		o->max_len = RMPP_RECV_MAX_LEN;
}

/* --------------------------------------------------------- sending */

/* ACK, ABORT or STOP for this transfer: segment 1's headers, no data. */
static void send_ctl(struct rmpp_receiver *r, uint8_t type, uint8_t status,
		     uint32_t d1, uint32_t d2)
{
	struct sa_mad m;

	memcpy(&m, &r->first, SEG_HDR_SIZE);
	memset(m.data, 0, sizeof(m.data));
	m.hdr.status = 0;
	m.hdr.method = r->opts.ack_response_method
		? r->method : (uint8_t)(r->method & ~MAD_METHOD_RESP);
	rmpp_set(&m.rmpp, type, RMPP_FLAG_ACTIVE, d1, d2);
	m.rmpp.status = status;
	/* A lost ACK is recovered by the sender's resend and our re-ACK. */
	(void)mad_engine_send_oneway(r->engine, &m, sizeof(m), &r->peer);
}

static void send_ack(struct rmpp_receiver *r)
{
	uint64_t wl = (uint64_t)r->last + r->opts.window;

	if (wl > RMPP_MAX_SEGMENTS)
		wl = RMPP_MAX_SEGMENTS;
	send_ctl(r, RMPP_TYPE_ACK, RMPP_STATUS_NORMAL, r->last, (uint32_t)wl);
}

/* ---------------------------------------------------------- ending */

static void report(struct rmpp_receiver *r)
{
	struct rmpp_result res = {
		.status = r->status,
		.first = &r->first,
		.payload = r->buf,
		.len = r->len,
		.segments = r->last,
		.expected = r->expected,
		.rmpp_status = r->rmpp_status,
		.rmpp = r->rmpp,
		.unsegmented = r->unsegmented,
	};

	r->reported = true;
	r->done(r->arg, &res);		/* may free r */
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct rmpp_receiver *r = w->data;

	(void)loop;
	(void)revents;
	if (r->state == RECV_RECEIVING) {
		/* Nothing new for timeout_ms: give up (13.6.4, TMR). */
		ev_timer_stop(r->loop, &r->timer);
		send_ctl(r, RMPP_TYPE_ABORT, RMPP_STATUS_TMR, 0, 0);
		r->state = RECV_FAILED;
		r->status = -ETIMEDOUT;
		r->rmpp_status = RMPP_STATUS_TMR;
	}
	if (!r->reported)
		report(r);
}

/* End the transfer; done() runs from the loop, never from our caller. */
static void finish(struct rmpp_receiver *r, int status, uint8_t rmpp_status)
{
	r->state = status ? RECV_FAILED : RECV_DONE;
	r->status = status;
	if (rmpp_status)
		r->rmpp_status = rmpp_status;
	ev_timer_stop(r->loop, &r->timer);
	ev_timer_set(&r->timer, 0., 0.);
	ev_timer_start(r->loop, &r->timer);
}

/* A protocol error: tell the sender (ABORT with `why`) and fail. */
static void fail_abort(struct rmpp_receiver *r, uint8_t why)
{
	send_ctl(r, RMPP_TYPE_ABORT, why, 0, 0);
	finish(r, -EPROTO, why);
}

/* ----------------------------------------------------------- input */

/* Append `n` data bytes of a segment; grows the buffer geometrically. */
static int append(struct rmpp_receiver *r, const uint8_t *data, size_t n)
{
	if (n == 0)
		return 0;
	if (r->len + n > r->opts.max_len)
		return -EMSGSIZE;
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;

		while (cap < r->len + n)
			cap *= 2;
		if (cap > r->opts.max_len)
			cap = r->opts.max_len;
		uint8_t *nb = realloc(r->buf, cap);
		if (!nb)
			return -ENOMEM;
		r->buf = nb;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, data, n);
	r->len += n;
	return 0;
}

/*
 * Why an RMPP header is unacceptable, as the RMPP status an ABORT carries
 * (0: acceptable).  rmpp_validate() decides; this only names the reason.
 */
static uint8_t header_error(const struct sa_mad *m)
{
	const struct rmpp_hdr *h = &m->rmpp;

	if (rmpp_validate(m) == 0)
		return 0;
	if (h->version != RMPP_VERSION)
		return RMPP_STATUS_UNV;
	if (h->type < RMPP_TYPE_DATA || h->type > RMPP_TYPE_ABORT)
		return RMPP_STATUS_BADT;
	if (h->type == RMPP_TYPE_DATA)
		return RMPP_STATUS_BAD_SEG;
	return RMPP_STATUS_UNSPEC;
}

/* Segment 1: what it announces.  Returns false when the transfer failed. */
static bool take_first(struct rmpp_receiver *r, const struct sa_mad *m)
{
	unsigned flags = rmpp_flags(&m->rmpp);
	uint32_t paylen = be32toh(m->rmpp.data2);

	if (!(flags & RMPP_FLAG_FIRST)) {
		fail_abort(r, RMPP_STATUS_BAD_SEG);
		return false;
	}
	if (m != &r->first)
		r->first = *m;
	if (flags & RMPP_FLAG_LAST) {
		r->expected = 1;
		r->first_paylen = paylen;	/* checked as the last's */
	} else if (paylen) {
		uint64_t segs = (paylen + RMPP_SEG_PAYLOAD - 1) / RMPP_SEG_PAYLOAD;

		if (segs < 2) {		/* says one segment, but not LAST */
			fail_abort(r, RMPP_STATUS_BAD_LEN);
			return false;
		}
		r->expected = (uint32_t)segs;
		r->first_paylen = paylen;
		if (paylen - segs * SA_HDR_SIZE > r->opts.max_len) {
			send_ctl(r, RMPP_TYPE_STOP, RMPP_STATUS_RESX, 0, 0);
			finish(r, -EMSGSIZE, RMPP_STATUS_RESX);
			return false;
		}
	}
	return true;
}

/*
 * The in-order segment `seg` (= last + 1): check its flags and lengths
 * against what the first segment announced, keep its data, ACK it.
 */
static void accept_segment(struct rmpp_receiver *r, const struct sa_mad *m,
			   uint32_t seg)
{
	unsigned flags = rmpp_flags(&m->rmpp);
	uint32_t paylen = be32toh(m->rmpp.data2);
	bool is_last = flags & RMPP_FLAG_LAST;
	size_t n = RMPP_SEG_DATA;
	int rc;

	if (seg == 1) {
		if (!take_first(r, m))
			return;
	} else if (flags & RMPP_FLAG_FIRST) {
		fail_abort(r, RMPP_STATUS_BAD_SEG);
		return;
	}
	if (seg > r->max_segments) {
		send_ctl(r, RMPP_TYPE_STOP, RMPP_STATUS_RESX, 0, 0);
		finish(r, -EMSGSIZE, RMPP_STATUS_RESX);
		return;
	}
	if (r->expected && is_last != (seg == r->expected)) {
		/* LAST where the first segment said otherwise. */
		fail_abort(r, RMPP_STATUS_BAD_LEN);
		return;
	}
	if (is_last) {
		/* Its PayloadLength: class header plus the data kept. */
		if (paylen < SA_HDR_SIZE || paylen > RMPP_SEG_PAYLOAD ||
		    (r->first_paylen && r->first_paylen !=
		     (uint64_t)(seg - 1) * RMPP_SEG_PAYLOAD + paylen)) {
			fail_abort(r, RMPP_STATUS_BAD_LEN);
			return;
		}
		n = paylen - SA_HDR_SIZE;
	}
	rc = append(r, m->data, n);
	if (rc < 0) {
		send_ctl(r, RMPP_TYPE_STOP, RMPP_STATUS_RESX, 0, 0);
		finish(r, rc, RMPP_STATUS_RESX);
		return;
	}
	r->last = seg;
	send_ack(r);
	if (is_last) {
		finish(r, 0, 0);
		return;
	}
	ev_timer_again(r->loop, &r->timer);
}

/* A DATA segment of the transfer, in order or not. */
static void data_segment(struct rmpp_receiver *r, const struct sa_mad *m)
{
	uint32_t seg = be32toh(m->rmpp.data1);

	if (seg <= r->last) {
		send_ack(r);	/* duplicate: our ACK was lost */
		return;
	}
	if (r->state != RECV_RECEIVING)
		return;
	if (seg == r->last + 1) {
		accept_segment(r, m, seg);
		return;
	}
	/* Past a gap.  Beyond the window we granted is a protocol error;
	 * otherwise the sender resends from last + 1 on its timer, and a
	 * re-ACK of `last` (once per gap) tells it early. */
	if ((uint64_t)seg > (uint64_t)r->last + r->opts.window ||
	    seg > r->max_segments) {
		fail_abort(r, RMPP_STATUS_S2B);
		return;
	}
	if (r->last && r->gap_reported != r->last) {
		r->gap_reported = r->last;
		send_ack(r);
	}
}

void rmpp_receiver_input(struct rmpp_receiver *r, const void *mad, size_t len)
{
	const struct sa_mad *m = mad;
	uint8_t err;

	if (len != MAD_SIZE || !(rmpp_flags(&m->rmpp) & RMPP_FLAG_ACTIVE))
		return;		/* not a segment: a plain answer, a runt */
	if (m->hdr.attr_id != r->attr_id || m->hdr.method != r->method)
		return;		/* same TID, some other exchange */
	if (r->state == RECV_FAILED || m->rmpp.type == RMPP_TYPE_ACK)
		return;		/* over; an ACK is for senders */
	err = header_error(m);
	if (err) {
		if (r->state == RECV_RECEIVING)
			fail_abort(r, err);
		return;
	}
	switch (m->rmpp.type) {
	case RMPP_TYPE_DATA:
		data_segment(r, m);
		break;
	case RMPP_TYPE_STOP:
	case RMPP_TYPE_ABORT:
		if (r->state == RECV_RECEIVING)
			finish(r, -ECONNABORTED, m->rmpp.status);
		break;
	}
}

/* ----------------------------------------------------------- start */

int rmpp_recv_start(struct rmpp_receiver **out, struct ev_loop *loop,
		    struct mad_engine *e, const void *first, size_t len,
		    const struct mad_addr *peer,
		    const struct rmpp_recv_opts *opts,
		    rmpp_recv_cb done, void *arg)
{
	const struct mad_hdr *h = first;
	struct rmpp_receiver *r;

	if (!first || len < MAD_HDR_SIZE || len > MAD_SIZE || !done || !peer)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	if (opts)
		r->opts = *opts;
	rmpp_recv_opts_default(&r->opts);
	r->loop = loop;
	r->engine = e;
	r->peer = *peer;
	memcpy(&r->first, first, len);	/* a short MAD reads as zeros */
	r->tid = be64toh(h->tid);
	r->method = h->method;
	r->attr_id = h->attr_id;
	r->max_segments = (uint32_t)(r->opts.max_len / RMPP_SEG_DATA + 1);
	if (r->max_segments > RMPP_MAX_SEGMENTS)
		r->max_segments = RMPP_MAX_SEGMENTS;
	r->done = done;
	r->arg = arg;
	ev_timer_init(&r->timer, on_timer, 0., r->opts.timeout_ms / 1000.0);
	r->timer.data = r;
	*out = r;

	bool active = rmpp_flags(&r->first.rmpp) & RMPP_FLAG_ACTIVE;

	if (active && r->first.rmpp.version == 0) {
		r->unsegmented = true;	/* not RMPP after all, see .h */
		active = false;
	}
	if (len == MAD_SIZE && active) {
		const struct sa_mad *m = &r->first;
		uint8_t err = header_error(m);

		r->rmpp = true;
		if (!err && m->rmpp.type != RMPP_TYPE_DATA)
			err = RMPP_STATUS_BADT;
		if (err) {
			fail_abort(r, err);
			return 0;
		}
		/* Usually segment 1.  A later one means that segment 1 was
		 * lost and this one matched the request first: wait for the
		 * sender to resend from 1. */
		if (be32toh(m->rmpp.data1) == 1)
			accept_segment(r, m, 1);
		else
			ev_timer_again(r->loop, &r->timer);
		return 0;
	}
	/* A plain answer: its data is the whole payload. */
	size_t n = len > SEG_HDR_SIZE ? len - SEG_HDR_SIZE : 0;
	int rc = n ? append(r, r->first.data, n) : 0;

	r->last = 1;
	r->expected = 1;
	finish(r, rc, 0);
	return 0;
}

bool rmpp_receiver_matches(const struct rmpp_receiver *r, uint64_t tid,
			   const struct mad_addr *from)
{
	return r->tid == tid && r->peer.lid == from->lid;
}

void rmpp_receiver_free(struct rmpp_receiver *r)
{
	if (!r)
		return;
	ev_timer_stop(r->loop, &r->timer);
	free(r->buf);
	free(r);
}

/* ---------------------------------------------------------- client */

struct query {
	struct query *next;
	struct rmpp_client *c;
	struct rmpp_receiver *r;	/* once the first segment is in */
	struct mad_addr to;
	rmpp_recv_cb cb;
	void *arg;
};

struct rmpp_client {
	struct ev_loop *loop;
	struct mad_engine *engine;
	struct rmpp_recv_opts opts;
	struct query *queries;
	uint64_t strays;
};

static void query_unlink(struct rmpp_client *c, struct query *q)
{
	for (struct query **pp = &c->queries; *pp; pp = &(*pp)->next) {
		if (*pp == q) {
			*pp = q->next;
			return;
		}
	}
}

static void on_transfer_done(void *arg, const struct rmpp_result *res)
{
	struct query *q = arg;

	query_unlink(q->c, q);
	q->cb(q->arg, res);
	rmpp_receiver_free(q->r);
	free(q);
}

/* The engine completed the request: first segment or failure. */
static void on_answer(void *arg, int status, const void *mad, size_t len)
{
	struct query *q = arg;
	struct rmpp_client *c = q->c;
	int rc = status;

	if (!c) {		/* the client went first */
		free(q);
		return;
	}
	if (rc == 0)
		rc = rmpp_recv_start(&q->r, c->loop, c->engine, mad, len,
				     &q->to, &c->opts, on_transfer_done, q);
	if (rc < 0) {
		struct rmpp_result res = { .status = rc };

		query_unlink(c, q);
		q->cb(q->arg, &res);
		free(q);
	}
}

static void on_unmatched(void *arg, const void *mad, size_t len,
			 const struct mad_addr *from)
{
	struct rmpp_client *c = arg;
	const struct mad_hdr *h = mad;
	uint64_t tid = be64toh(h->tid);

	for (struct query *q = c->queries; q; q = q->next) {
		if (q->r && rmpp_receiver_matches(q->r, tid, from)) {
			rmpp_receiver_input(q->r, mad, len);
			return;
		}
	}
	c->strays++;
}

int rmpp_client_new(struct rmpp_client **out, struct ev_loop *loop,
		    struct mad_engine *e, uint8_t mgmt_class,
		    const struct rmpp_recv_opts *opts)
{
	struct rmpp_client *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return -ENOMEM;
	c->loop = loop;
	c->engine = e;
	if (opts)
		c->opts = *opts;
	rmpp_recv_opts_default(&c->opts);
	rc = mad_engine_on_unmatched(e, mgmt_class, on_unmatched, c);
	if (rc < 0) {
		free(c);
		return rc;
	}
	*out = c;
	return 0;
}

int rmpp_client_query(struct rmpp_client *c, const void *req, size_t len,
		      const struct mad_addr *to, rmpp_recv_cb cb, void *arg)
{
	struct query *q;
	int rc;

	if (!cb || !to)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->c = c;
	q->to = *to;
	q->cb = cb;
	q->arg = arg;
	rc = mad_engine_submit(c->engine, req, len, to, on_answer, q);
	if (rc < 0) {
		free(q);
		return rc;
	}
	q->next = c->queries;
	c->queries = q;
	return 0;
}

uint64_t rmpp_client_strays(const struct rmpp_client *c)
{
	return c->strays;
}

void rmpp_client_free(struct rmpp_client *c)
{
	if (!c)
		return;
	while (c->queries) {
		struct query *q = c->queries;
		struct rmpp_result res = { .status = -ECANCELED };

		c->queries = q->next;
		q->cb(q->arg, &res);
		if (!q->r) {
			/* Still in the engine (freed out of order): the
			 * engine completes it later; forget it then. */
			q->c = NULL;
			continue;
		}
		rmpp_receiver_free(q->r);
		free(q);
	}
	free(c);
}
