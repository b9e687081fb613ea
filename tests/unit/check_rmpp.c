/*
 * check_rmpp.c - the RMPP receiver (mad/rmpp_recv.c) on a real libev loop.
 *
 * "receiver" tests feed segments built here, the way the Linux kernel's
 * sender and mad/rmpp.c build them, straight into one receiver whose
 * engine sends through the fake transport of fake_transport.h; every ACK,
 * ABORT and STOP it sends is recorded there and checked field by field.
 * "client" tests go through rmpp_client: request, first segment as the
 * answer, later segments through the engine's unmatched hook.
 *
 * "loopback" connects mad/rmpp.c's sender and this receiver through two
 * engines and a lossy wire: 1 to 500 segments, random loss of any MAD in
 * both directions, the exact payload must arrive.
 *
 * Timeouts are tens of milliseconds so that they run for real.
 */
#include "config.h"

#include <check.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "mad/engine.h"
#include "mad/rmpp.h"
#include "mad/rmpp_recv.h"
#include "mad/sa_wire.h"
#include "tests/unit/fake_transport.h"

#define CHECK(expr, ...)	do { if (!(expr)) ck_abort_msg(__VA_ARGS__); } while (0)

#define PEER_LID	7
#define TID		0x0000002a12345678ull	/* agent bits in the high half */
#define STRIDE_WORDS	14			/* NodeRecord: 108 -> 112 bytes */

/* ------------------------------------------------------------------ */
/* Fixture                                                              */
/* ------------------------------------------------------------------ */

static struct ev_loop *L;
static struct fake F;
static const struct mad_addr peer = {
	.lid = PEER_LID, .qpn = 1, .qkey = 0x80010000u,
};

static void setup(void)
{
	struct mad_engine_opts o = {
		.max_wire_smps = 4, .max_wire_gmps = 4, .timeout_ms = 20,
		.retries = 2,
	};

	L = ev_loop_new(EVFLAG_AUTO);
	ck_assert_ptr_nonnull(L);
	ck_assert_int_eq(fake_init(&F, L, &o), 0);
	ev_now_update(L);
}

static void teardown(void)
{
	if (F.engine)
		fake_fini(&F);
	if (L)
		ev_loop_destroy(L);
	L = NULL;
}

/* What a done callback saw, copied (the payload lives only in the call). */
struct outcome {
	int calls;
	int status;
	uint8_t *payload;
	size_t len;
	uint32_t segments, expected;
	uint8_t rmpp_status;
	bool rmpp, unsegmented, had_first;
	uint16_t mad_status;
	bool in_call;			/* set around calls into the receiver */
};

static void on_done(void *arg, const struct rmpp_result *res)
{
	struct outcome *o = arg;

	ck_assert_msg(!o->in_call, "done ran inside a receiver call");
	o->calls++;
	o->status = res->status;
	o->len = res->len;
	o->segments = res->segments;
	o->expected = res->expected;
	o->rmpp_status = res->rmpp_status;
	o->rmpp = res->rmpp;
	o->unsegmented = res->unsegmented;
	o->had_first = res->first != NULL;
	o->mad_status = res->first ? be16toh(res->first->hdr.status) : 0;
	free(o->payload);
	o->payload = NULL;
	if (res->len) {
		ck_assert_ptr_nonnull(res->payload);
		o->payload = malloc(res->len);
		ck_assert_ptr_nonnull(o->payload);
		memcpy(o->payload, res->payload, res->len);
	}
}

static void outcome_free(struct outcome *o)
{
	free(o->payload);
	o->payload = NULL;
}

static void on_guard(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	*(bool *)w->data = true;
}

/* Run the loop until *calls is non-zero or `ms` passed. */
static void run_until_done(const int *calls, unsigned ms)
{
	bool expired = false;
	ev_timer guard;

	ev_now_update(L);
	ev_timer_init(&guard, on_guard, ms / 1000.0, 0.);
	guard.data = &expired;
	ev_timer_start(L, &guard);
	while (!*calls && !expired)
		ev_run(L, EVRUN_ONCE);
	ev_timer_stop(L, &guard);
}

/* Let zero-delay timers fire. */
static void spin(void)
{
	for (int i = 0; i < 4; i++)
		ev_run(L, EVRUN_NOWAIT);
}

/* ------------------------------------------------------------------ */
/* Building segments                                                    */
/* ------------------------------------------------------------------ */

static uint8_t *make_payload(size_t len, unsigned seed)
{
	uint8_t *p = malloc(len ? len : 1);

	ck_assert_ptr_nonnull(p);
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 131 + seed * 7 + (i >> 8) + 1);
	return p;
}

static uint32_t nsegs(size_t len)
{
	return rmpp_segments(len);
}

/*
 * Segment `seg` of a transfer of `len` payload bytes, as the kernel and
 * mad/rmpp.c send it: first = segments x 220 - pad, last = 220 - pad.
 */
static void build_seg(struct sa_mad *m, const uint8_t *payload, size_t len,
		      uint32_t seg)
{
	uint32_t segs = nsegs(len);
	size_t pad = (size_t)segs * RMPP_SEG_DATA - len;
	size_t off = (size_t)(seg - 1) * RMPP_SEG_DATA;
	unsigned flags = RMPP_FLAG_ACTIVE;
	uint32_t paylen = 0;

	memset(m, 0, sizeof(*m));
	m->hdr.base_version = 1;
	m->hdr.mgmt_class = MAD_CLASS_SA;
	m->hdr.class_version = 2;
	m->hdr.method = MAD_METHOD_GET_TABLE | MAD_METHOD_RESP;
	m->hdr.attr_id = htobe16(SA_ATTR_NODE_RECORD);
	m->hdr.tid = htobe64(TID);
	m->attr_offset = htobe16(STRIDE_WORDS);
	if (seg == 1) {
		flags |= RMPP_FLAG_FIRST;
		paylen = (uint32_t)(segs * RMPP_SEG_PAYLOAD - pad);
	}
	if (seg == segs) {
		flags |= RMPP_FLAG_LAST;
		paylen = (uint32_t)(RMPP_SEG_PAYLOAD - pad);
	}
	rmpp_set(&m->rmpp, RMPP_TYPE_DATA, flags, seg, paylen);
	if (off < len) {
		size_t n = len - off < RMPP_SEG_DATA ? len - off : RMPP_SEG_DATA;
		memcpy(m->data, payload + off, n);
	}
}

static void build_ctl(struct sa_mad *m, uint8_t type, uint8_t status)
{
	build_seg(m, NULL, 0, 1);
	rmpp_set(&m->rmpp, type, RMPP_FLAG_ACTIVE, 0, 0);
	m->rmpp.status = status;
}

/* ------------------------------------------------------------------ */
/* A receiver under test                                                */
/* ------------------------------------------------------------------ */

static struct rmpp_receiver *R;
static struct outcome O;
static struct rmpp_recv_opts opts;

static void recv_setup(void)
{
	setup();
	R = NULL;
	memset(&O, 0, sizeof(O));
	opts = (struct rmpp_recv_opts){ .window = 32, .timeout_ms = 200 };
}

static void recv_teardown(void)
{
	rmpp_receiver_free(R);
	R = NULL;
	outcome_free(&O);
	teardown();
}

static void start(const struct sa_mad *first, size_t len)
{
	O.in_call = true;
	ck_assert_int_eq(rmpp_recv_start(&R, L, F.engine, first, len, &peer,
					 &opts, on_done, &O), 0);
	O.in_call = false;
	ck_assert_int_eq(O.calls, 0);
}

static void feed(const struct sa_mad *m)
{
	O.in_call = true;
	rmpp_receiver_input(R, m, sizeof(*m));
	O.in_call = false;
}

/* Start with segment 1 of the payload, then feed segments in `order`. */
static void feed_order(const uint8_t *p, size_t len, const uint32_t *order,
		       size_t n)
{
	struct sa_mad m;

	for (size_t i = 0; i < n; i++) {
		build_seg(&m, p, len, order[i]);
		if (!R)
			start(&m, sizeof(m));
		else
			feed(&m);
	}
}

/* The n-th MAD the receiver sent: its RMPP fields, checked for shape. */
struct ctl_sent {
	uint8_t type, status, method;
	uint32_t d1, d2;
};

static struct ctl_sent sent(size_t n)
{
	const struct sa_mad *m;
	struct ctl_sent c;

	ck_assert_uint_lt(n, F.n_sent);
	m = (const struct sa_mad *)F.sent[n].mad;
	ck_assert_uint_eq(F.sent[n].len, MAD_SIZE);
	ck_assert_uint_eq(F.sent[n].addr.lid, PEER_LID);
	ck_assert_uint_eq(F.sent[n].addr.qpn, 1);
	ck_assert_uint_eq(F.sent[n].addr.qkey, 0x80010000u);
	ck_assert_int_eq(F.sent[n].timeout_ms, 0);	/* one-way */
	ck_assert_uint_eq(be64toh(m->hdr.tid), TID);
	ck_assert_uint_eq(m->hdr.mgmt_class, MAD_CLASS_SA);
	ck_assert_uint_eq(m->hdr.class_version, 2);
	ck_assert_uint_eq(be16toh(m->hdr.attr_id), SA_ATTR_NODE_RECORD);
	ck_assert_uint_eq(m->rmpp.version, RMPP_VERSION);
	ck_assert_uint_eq(rmpp_flags(&m->rmpp), RMPP_FLAG_ACTIVE);
	for (size_t i = 0; i < sizeof(m->data); i++)
		CHECK(m->data[i] == 0, "control MAD carries data at %zu", i);
	c.type = m->rmpp.type;
	c.status = m->rmpp.status;
	c.method = m->hdr.method;
	c.d1 = be32toh(m->rmpp.data1);
	c.d2 = be32toh(m->rmpp.data2);
	return c;
}

static void assert_ack(size_t n, uint32_t seg, uint32_t window)
{
	struct ctl_sent c = sent(n);

	ck_assert_msg(c.type == RMPP_TYPE_ACK, "MAD %zu: type %u, not ACK", n, c.type);
	ck_assert_uint_eq(c.status, 0);
	ck_assert_uint_eq(c.method, MAD_METHOD_GET_TABLE);	/* R bit cleared */
	ck_assert_msg(c.d1 == seg, "MAD %zu: ACK of %u, expected %u", n, c.d1, seg);
	ck_assert_msg(c.d2 == seg + window, "MAD %zu: NewWindowLast %u, expected %u",
		      n, c.d2, seg + window);
}

static void assert_abort(size_t n, uint8_t type, uint8_t status)
{
	struct ctl_sent c = sent(n);

	ck_assert_uint_eq(c.type, type);
	ck_assert_uint_eq(c.status, status);
	ck_assert_uint_eq(c.d1, 0);
	ck_assert_uint_eq(c.d2, 0);
}

static void assert_payload(const uint8_t *p, size_t len)
{
	ck_assert_int_eq(O.calls, 1);
	ck_assert_int_eq(O.status, 0);
	ck_assert_uint_eq(O.len, len);
	if (len)
		ck_assert_msg(!memcmp(O.payload, p, len), "payload differs");
}

/* ------------------------------------------------------------------ */
/* receiver: normal transfers                                           */
/* ------------------------------------------------------------------ */

START_TEST(in_order)
{
	size_t len = 4 * RMPP_SEG_DATA + 123;
	uint8_t *p = make_payload(len, 1);
	const uint32_t order[] = { 1, 2, 3, 4, 5 };

	feed_order(p, len, order, 5);
	ck_assert_uint_eq(F.n_sent, 5);
	for (uint32_t i = 0; i < 5; i++)
		assert_ack(i, i + 1, 32);
	ck_assert_int_eq(O.calls, 0);		/* never from inside a call */
	spin();
	assert_payload(p, len);
	ck_assert_uint_eq(O.segments, 5);
	ck_assert_uint_eq(O.expected, 5);
	ck_assert(O.rmpp);
	ck_assert_uint_eq(O.rmpp_status, 0);
	free(p);
}
END_TEST

/* Payload lengths around the segment size: the pad of the last segment. */
START_TEST(lengths)
{
	static const size_t lens[] = {
		0, 1, 199, 200, 201, 399, 400, 401, 1000, 4321,
	};
	size_t len = lens[_i];
	uint8_t *p = make_payload(len, 2);
	uint32_t segs = nsegs(len);
	struct sa_mad m;

	for (uint32_t s = 1; s <= segs; s++) {
		build_seg(&m, p, len, s);
		if (s == 1)
			start(&m, sizeof(m));
		else
			feed(&m);
	}
	spin();
	assert_payload(p, len);
	ck_assert_uint_eq(O.segments, segs);
	ck_assert_uint_eq(O.expected, segs);
	ck_assert_uint_eq(F.n_sent, segs);
	assert_ack(segs - 1, segs, 32);
	free(p);
}
END_TEST

START_TEST(window_option)
{
	size_t len = 3 * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 3);
	const uint32_t order[] = { 1, 2, 3 };

	opts.window = 5;
	feed_order(p, len, order, 3);
	spin();
	assert_payload(p, len);
	for (uint32_t i = 0; i < 3; i++)
		assert_ack(i, i + 1, 5);
	free(p);
}
END_TEST

START_TEST(ack_response_method)
{
	size_t len = 2 * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 4);
	const uint32_t order[] = { 1, 2 };

	opts.ack_response_method = true;
	feed_order(p, len, order, 2);
	spin();
	assert_payload(p, len);
	ck_assert_uint_eq(sent(0).method, MAD_METHOD_GET_TABLE | MAD_METHOD_RESP);
	ck_assert_uint_eq(sent(1).method, MAD_METHOD_GET_TABLE | MAD_METHOD_RESP);
	free(p);
}
END_TEST

/* Not RMPP at all: the whole answer in one MAD, nothing to ACK. */
START_TEST(plain_answer)
{
	struct sa_mad m;
	uint8_t *p = make_payload(RMPP_SEG_DATA, 5);

	build_seg(&m, p, RMPP_SEG_DATA, 1);
	memset(&m.rmpp, 0, sizeof(m.rmpp));
	m.hdr.method = MAD_METHOD_GET | MAD_METHOD_RESP;
	start(&m, sizeof(m));
	spin();
	assert_payload(p, RMPP_SEG_DATA);
	ck_assert(!O.rmpp);
	ck_assert(!O.unsegmented);
	ck_assert_uint_eq(F.n_sent, 0);

	/* A short one: only what arrived. */
	rmpp_receiver_free(R);
	R = NULL;
	outcome_free(&O);
	memset(&O, 0, sizeof(O));
	start(&m, 100);
	spin();
	assert_payload(p, 100 - 56);
	free(p);
}
END_TEST

/* ACTIVE without an RMPP version: an SM relying on kernel RMPP (OpenSM). */
START_TEST(unsegmented_image)
{
	struct sa_mad m;
	uint8_t *p = make_payload(RMPP_SEG_DATA, 6);

	build_seg(&m, p, RMPP_SEG_DATA, 1);
	memset(&m.rmpp, 0, sizeof(m.rmpp));
	m.rmpp.resptime_flags = RMPP_FLAG_ACTIVE;
	start(&m, sizeof(m));
	spin();
	assert_payload(p, RMPP_SEG_DATA);
	ck_assert(O.unsegmented);
	ck_assert(!O.rmpp);
	ck_assert_uint_eq(F.n_sent, 0);		/* no ABORT either */
	free(p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* receiver: order, duplicates, loss                                    */
/* ------------------------------------------------------------------ */

START_TEST(out_of_order)
{
	size_t len = 5 * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 7);
	/* 2 is late: 3 and 4 are dropped (one re-ACK of 1 for the gap), 2
	 * arrives, the sender resends 3..5. */
	const uint32_t order[] = { 1, 3, 4, 2, 3, 4, 5 };

	feed_order(p, len, order, 7);
	spin();
	assert_payload(p, len);
	ck_assert_uint_eq(F.n_sent, 6);
	assert_ack(0, 1, 32);
	assert_ack(1, 1, 32);		/* gap seen at 3 */
	assert_ack(2, 2, 32);		/* nothing for 4: same gap */
	assert_ack(3, 3, 32);
	assert_ack(4, 4, 32);
	assert_ack(5, 5, 32);
	free(p);
}
END_TEST

START_TEST(duplicates)
{
	size_t len = 3 * RMPP_SEG_DATA + 17;
	uint8_t *p = make_payload(len, 8);
	const uint32_t order[] = { 1, 1, 2, 2, 1, 3, 3, 4 };

	feed_order(p, len, order, 8);
	spin();
	assert_payload(p, len);
	ck_assert_uint_eq(F.n_sent, 8);
	assert_ack(0, 1, 32);
	assert_ack(1, 1, 32);		/* duplicate 1 */
	assert_ack(2, 2, 32);
	assert_ack(3, 2, 32);		/* duplicate 2 */
	assert_ack(4, 2, 32);		/* duplicate 1: last in order is 2 */
	assert_ack(5, 3, 32);
	assert_ack(6, 3, 32);
	assert_ack(7, 4, 32);

	/* After the end a duplicate of the last is still ACKed (the
	 * sender missed the final ACK); done stays at one call. */
	struct sa_mad m;
	build_seg(&m, p, len, 4);
	feed(&m);
	spin();
	ck_assert_uint_eq(F.n_sent, 9);
	assert_ack(8, 4, 32);
	ck_assert_int_eq(O.calls, 1);
	free(p);
}
END_TEST

/* A whole window goes out, one segment is lost, the sender resends. */
START_TEST(missing_then_resend)
{
	size_t len = 10 * RMPP_SEG_DATA - 3;
	uint8_t *p = make_payload(len, 9);
	const uint32_t order[] = {
		1, 2, 3, 5, 6, 7, 8, 9, 10,	/* 4 lost */
		4, 5, 6, 7, 8, 9, 10,		/* go-back-N resend */
	};

	feed_order(p, len, order, sizeof(order) / sizeof(order[0]));
	spin();
	assert_payload(p, len);
	/* ACK 1, 2, 3, one re-ACK of 3 for the gap, then 4..10 */
	ck_assert_uint_eq(F.n_sent, 11);
	assert_ack(0, 1, 32);
	assert_ack(1, 2, 32);
	assert_ack(2, 3, 32);
	assert_ack(3, 3, 32);
	for (uint32_t i = 4; i <= 10; i++)
		assert_ack(i, i, 32);
	free(p);
}
END_TEST

/* Segment 1 lost: segment 2 completed the request.  Wait for 1. */
START_TEST(first_segment_lost)
{
	size_t len = 3 * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 10);
	const uint32_t order[] = { 2, 3, 1, 2, 3 };

	feed_order(p, len, order, 5);
	spin();
	assert_payload(p, len);
	ck_assert_uint_eq(F.n_sent, 3);		/* nothing to ACK before 1 */
	assert_ack(0, 1, 32);
	assert_ack(1, 2, 32);
	assert_ack(2, 3, 32);
	free(p);
}
END_TEST

/* Segments of another exchange with the same TID are not ours. */
START_TEST(foreign_segments_ignored)
{
	size_t len = 2 * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 11);
	struct sa_mad m;

	build_seg(&m, p, len, 1);
	start(&m, sizeof(m));
	build_seg(&m, p, len, 2);
	m.hdr.attr_id = htobe16(SA_ATTR_PATH_RECORD);
	feed(&m);
	build_seg(&m, p, len, 2);
	m.hdr.method = MAD_METHOD_GETMULTI | MAD_METHOD_RESP;
	feed(&m);
	build_seg(&m, p, len, 2);
	memset(&m.rmpp, 0, sizeof(m.rmpp));	/* a plain MAD */
	feed(&m);
	build_seg(&m, p, len, 2);
	rmpp_receiver_input(R, &m, 200);	/* a runt */
	build_seg(&m, p, len, 2);
	m.rmpp.type = RMPP_TYPE_ACK;		/* an ACK is for senders */
	feed(&m);
	spin();
	ck_assert_int_eq(O.calls, 0);
	ck_assert_uint_eq(F.n_sent, 1);
	build_seg(&m, p, len, 2);
	feed(&m);
	spin();
	assert_payload(p, len);
	free(p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* receiver: errors                                                     */
/* ------------------------------------------------------------------ */

static void expect_failure(int status, uint8_t rmpp_status)
{
	spin();
	ck_assert_int_eq(O.calls, 1);
	ck_assert_int_eq(O.status, status);
	ck_assert_uint_eq(O.rmpp_status, rmpp_status);
}

/* The last segment's PayloadLength disagrees with the first's. */
START_TEST(wrong_last_length)
{
	size_t len = 3 * RMPP_SEG_DATA - 50;
	uint8_t *p = make_payload(len, 12);
	struct sa_mad m;
	const uint32_t order[] = { 1, 2 };

	feed_order(p, len, order, 2);
	build_seg(&m, p, len, 3);
	m.rmpp.data2 = htobe32(be32toh(m.rmpp.data2) + 8);
	feed(&m);
	expect_failure(-EPROTO, RMPP_STATUS_BAD_LEN);
	ck_assert_uint_eq(F.n_sent, 3);
	assert_ack(0, 1, 32);
	assert_ack(1, 2, 32);
	assert_abort(2, RMPP_TYPE_ABORT, RMPP_STATUS_BAD_LEN);
	ck_assert_uint_eq(O.segments, 2);
	ck_assert_uint_eq(O.expected, 3);

	/* Nothing more from this transfer: no ACK, no second done. */
	build_seg(&m, p, len, 3);
	feed(&m);
	spin();
	ck_assert_uint_eq(F.n_sent, 3);
	ck_assert_int_eq(O.calls, 1);
	free(p);
}
END_TEST

/* Other inconsistent lengths, each on a fresh receiver. */
START_TEST(bad_lengths)
{
	size_t len = 3 * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 13);
	struct sa_mad m;

	switch (_i) {
	case 0:		/* LAST before the announced end */
		build_seg(&m, p, len, 1);
		start(&m, sizeof(m));
		build_seg(&m, p, len, 2);
		m.rmpp.resptime_flags |= RMPP_FLAG_LAST;
		m.rmpp.data2 = htobe32(RMPP_SEG_PAYLOAD);
		feed(&m);
		break;
	case 1:		/* no LAST at the announced end */
		build_seg(&m, p, len, 1);
		start(&m, sizeof(m));
		build_seg(&m, p, len, 2);
		feed(&m);
		build_seg(&m, p, len, 3);
		m.rmpp.resptime_flags &= (uint8_t)~RMPP_FLAG_LAST;
		feed(&m);
		break;
	case 2:		/* last PayloadLength beyond a segment */
		build_seg(&m, p, len, 1);
		m.rmpp.data2 = 0;		/* length not announced */
		start(&m, sizeof(m));
		build_seg(&m, p, len, 2);
		feed(&m);
		build_seg(&m, p, len, 3);
		m.rmpp.data2 = htobe32(RMPP_SEG_PAYLOAD + 1);
		feed(&m);
		break;
	case 3:		/* last PayloadLength below the class header */
		build_seg(&m, p, len, 1);
		m.rmpp.data2 = 0;
		start(&m, sizeof(m));
		build_seg(&m, p, len, 2);
		m.rmpp.resptime_flags |= RMPP_FLAG_LAST;
		m.rmpp.data2 = htobe32(SA_HDR_SIZE - 1);
		feed(&m);
		break;
	case 4:		/* first says one segment but is not LAST */
		build_seg(&m, p, len, 1);
		m.rmpp.data2 = htobe32(RMPP_SEG_PAYLOAD);
		start(&m, sizeof(m));
		break;
	case 5:		/* FIRST|LAST with a PayloadLength of 0 */
		build_seg(&m, p, 100, 1);
		m.rmpp.data2 = 0;
		start(&m, sizeof(m));
		break;
	}
	expect_failure(-EPROTO, RMPP_STATUS_BAD_LEN);
	assert_abort(F.n_sent - 1, RMPP_TYPE_ABORT, RMPP_STATUS_BAD_LEN);
	free(p);
}
END_TEST

/* Unknown total (first PayloadLength 0): the LAST segment ends it. */
START_TEST(unannounced_length)
{
	size_t len = 3 * RMPP_SEG_DATA + 99;
	uint8_t *p = make_payload(len, 14);
	struct sa_mad m;

	build_seg(&m, p, len, 1);
	m.rmpp.data2 = 0;
	start(&m, sizeof(m));
	for (uint32_t s = 2; s <= 4; s++) {
		build_seg(&m, p, len, s);
		feed(&m);
	}
	spin();
	assert_payload(p, len);
	ck_assert_uint_eq(O.expected, 0);
	free(p);
}
END_TEST

/* Larger than max_len: announced (refused at once) or not (at the limit). */
START_TEST(too_large)
{
	size_t len = 20 * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 15);
	struct sa_mad m;

	opts.max_len = 1000;
	build_seg(&m, p, len, 1);
	if (_i == 0) {
		start(&m, sizeof(m));
		expect_failure(-EMSGSIZE, RMPP_STATUS_RESX);
		ck_assert_uint_eq(F.n_sent, 1);
		assert_abort(0, RMPP_TYPE_STOP, RMPP_STATUS_RESX);
		ck_assert_uint_eq(O.expected, 20);
	} else {
		m.rmpp.data2 = 0;
		start(&m, sizeof(m));
		for (uint32_t s = 2; s <= 10 && !O.calls; s++) {
			build_seg(&m, p, len, s);
			feed(&m);
			spin();
		}
		expect_failure(-EMSGSIZE, RMPP_STATUS_RESX);
		ck_assert_uint_eq(O.segments, 5);	/* 5 x 200 = max_len */
		assert_abort(F.n_sent - 1, RMPP_TYPE_STOP, RMPP_STATUS_RESX);
	}
	free(p);
}
END_TEST

START_TEST(abort_from_sender)
{
	size_t len = 4 * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 16);
	const uint32_t order[] = { 1, 2 };
	struct sa_mad m;

	feed_order(p, len, order, 2);
	build_ctl(&m, _i ? RMPP_TYPE_STOP : RMPP_TYPE_ABORT,
		  _i ? RMPP_STATUS_RESX : RMPP_STATUS_TMR);
	feed(&m);
	expect_failure(-ECONNABORTED, _i ? RMPP_STATUS_RESX : RMPP_STATUS_TMR);
	ck_assert_uint_eq(F.n_sent, 2);		/* no answer to an ABORT */
	ck_assert_uint_eq(O.segments, 2);
	/* Later segments of the dead transfer are ignored. */
	build_seg(&m, p, len, 3);
	feed(&m);
	spin();
	ck_assert_uint_eq(F.n_sent, 2);
	ck_assert_int_eq(O.calls, 1);
	free(p);
}
END_TEST

START_TEST(bad_headers)
{
	size_t len = 5 * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 17);
	const uint32_t order[] = { 1, 2 };
	struct sa_mad m;
	uint8_t want = 0;

	feed_order(p, len, order, 2);
	build_seg(&m, p, len, 3);
	switch (_i) {
	case 0: m.rmpp.version = 2; want = RMPP_STATUS_UNV; break;
	case 1: m.rmpp.type = 9; want = RMPP_STATUS_BADT; break;
	case 2: m.rmpp.resptime_flags |= RMPP_FLAG_FIRST; want = RMPP_STATUS_BAD_SEG; break;
	case 3: m.rmpp.data1 = htobe32(2 + 32 + 1); want = RMPP_STATUS_S2B; break;
	case 4: m.rmpp.data1 = 0; want = RMPP_STATUS_BAD_SEG; break;
	}
	feed(&m);
	expect_failure(-EPROTO, want);
	assert_abort(F.n_sent - 1, RMPP_TYPE_ABORT, want);
	free(p);
}
END_TEST

/* The first segment itself is broken. */
START_TEST(bad_first)
{
	size_t len = 3 * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 18);
	struct sa_mad m;
	uint8_t want = 0;

	build_seg(&m, p, len, 1);
	switch (_i) {
	case 0: m.rmpp.version = 3; want = RMPP_STATUS_UNV; break;
	case 1: m.rmpp.type = RMPP_TYPE_ACK; want = RMPP_STATUS_BADT; break;
	case 2: m.rmpp.resptime_flags &= (uint8_t)~RMPP_FLAG_FIRST; want = RMPP_STATUS_BAD_SEG; break;
	}
	start(&m, sizeof(m));
	expect_failure(-EPROTO, want);
	ck_assert_uint_eq(F.n_sent, 1);
	assert_abort(0, RMPP_TYPE_ABORT, want);
	free(p);
}
END_TEST

/* No segment for timeout_ms: ABORT with TMR, then done(-ETIMEDOUT). */
START_TEST(timeout)
{
	size_t len = 6 * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 19);
	const uint32_t order[] = { 1, 2 };

	opts.timeout_ms = 40;
	ev_now_update(L);
	ev_tstamp t0 = ev_now(L);
	feed_order(p, len, order, 2);
	run_until_done(&O.calls, 2000);
	ev_now_update(L);
	ck_assert_int_eq(O.calls, 1);
	ck_assert_int_eq(O.status, -ETIMEDOUT);
	ck_assert_uint_eq(O.rmpp_status, RMPP_STATUS_TMR);
	ck_assert_uint_eq(O.segments, 2);
	ck_assert_uint_eq(O.expected, 6);
	ck_assert(O.had_first);
	ck_assert_msg(ev_now(L) - t0 >= 0.035, "gave up after %.3f s",
		      ev_now(L) - t0);
	ck_assert_uint_eq(F.n_sent, 3);
	assert_abort(2, RMPP_TYPE_ABORT, RMPP_STATUS_TMR);
	free(p);
}
END_TEST

/* Segment 1 never comes after a later one answered the request. */
START_TEST(timeout_without_first)
{
	size_t len = 3 * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 25);
	struct sa_mad m;

	opts.timeout_ms = 30;
	build_seg(&m, p, len, 2);
	start(&m, sizeof(m));
	run_until_done(&O.calls, 2000);
	ck_assert_int_eq(O.calls, 1);
	ck_assert_int_eq(O.status, -ETIMEDOUT);
	ck_assert_uint_eq(O.segments, 0);
	ck_assert_uint_eq(F.n_sent, 1);
	assert_abort(0, RMPP_TYPE_ABORT, RMPP_STATUS_TMR);
	free(p);
}
END_TEST

/* Progress restarts the timer: slow but steady segments complete. */
START_TEST(timeout_restarts_on_progress)
{
	size_t len = 5 * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 20);
	struct sa_mad m;

	opts.timeout_ms = 60;
	for (uint32_t s = 1; s <= 5; s++) {
		build_seg(&m, p, len, s);
		if (s == 1) {
			start(&m, sizeof(m));
		} else {
			/* 40 ms between segments: 200 ms in all */
			ev_tstamp end;
			ev_now_update(L);
			end = ev_now(L) + 0.04;
			while (ev_now(L) < end) {
				ev_run(L, EVRUN_NOWAIT);
				ev_sleep(0.002);
				ev_now_update(L);
			}
			ck_assert_int_eq(O.calls, 0);
			feed(&m);
		}
	}
	spin();
	assert_payload(p, len);
	free(p);
}
END_TEST

/* Freed before done ran: no callback, no leak (ASan). */
START_TEST(free_pending)
{
	size_t len = 2 * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 21);
	const uint32_t order[] = { 1, 2 };

	feed_order(p, len, order, 2);		/* done is queued */
	rmpp_receiver_free(R);
	R = NULL;
	spin();
	ck_assert_int_eq(O.calls, 0);
	free(p);
}
END_TEST

START_TEST(start_invalid)
{
	struct sa_mad m;

	build_seg(&m, NULL, 0, 1);
	ck_assert_int_eq(rmpp_recv_start(&R, L, F.engine, &m, 10, &peer, &opts,
					 on_done, &O), -EINVAL);
	ck_assert_int_eq(rmpp_recv_start(&R, L, F.engine, &m, 300, &peer, &opts,
					 on_done, &O), -EINVAL);
	ck_assert_int_eq(rmpp_recv_start(&R, L, F.engine, &m, sizeof(m), &peer,
					 &opts, NULL, &O), -EINVAL);
	R = NULL;
}
END_TEST

/* ------------------------------------------------------------------ */
/* client: request, first segment, later ones through the engine        */
/* ------------------------------------------------------------------ */

static struct rmpp_client *C;

static void client_setup(void)
{
	recv_setup();
	opts.timeout_ms = 100;
	ck_assert_int_eq(rmpp_client_new(&C, L, F.engine, MAD_CLASS_SA, &opts), 0);
}

static void client_teardown(void)
{
	fake_fini(&F);			/* the engine first, see rmpp_recv.h */
	rmpp_client_free(C);
	C = NULL;
	recv_teardown();
}

static void client_query(void)
{
	struct sa_mad req;

	memset(&req, 0, sizeof(req));
	req.hdr.base_version = 1;
	req.hdr.mgmt_class = MAD_CLASS_SA;
	req.hdr.class_version = 2;
	req.hdr.method = MAD_METHOD_GET_TABLE;
	req.hdr.attr_id = htobe16(SA_ATTR_NODE_RECORD);
	ck_assert_int_eq(rmpp_client_query(C, &req, sizeof(req), &peer,
					   on_done, &O), 0);
}

/* Deliver a segment of the answer to request n of the fake. */
static void deliver(size_t req, struct sa_mad *m, uint16_t from_lid)
{
	struct mad_addr from = { .lid = from_lid, .qpn = 1 };
	uint64_t tid = fake_tid(&F, req) | 0x0000001100000000ull;

	m->hdr.tid = htobe64(tid);
	mad_engine_recv(F.engine, m, sizeof(*m), &from, 0);
}

START_TEST(client_transfer)
{
	size_t len = 7 * RMPP_SEG_DATA + 33;
	uint8_t *p = make_payload(len, 22);
	struct sa_mad m;

	client_query();
	ck_assert_uint_eq(F.n_sent, 1);
	ck_assert_uint_eq(fake_class(&F, 0), MAD_CLASS_SA);
	for (uint32_t s = 1; s <= 8; s++) {
		build_seg(&m, p, len, s);
		deliver(0, &m, PEER_LID);
		if (s == 3) {
			/* a stray: some other TID, some other source */
			build_seg(&m, p, len, 4);
			deliver(0, &m, PEER_LID + 1);
			m.hdr.tid = htobe64(0x77);
			mad_engine_recv(F.engine, &m, sizeof(m),
					&(struct mad_addr){ .lid = PEER_LID }, 0);
		}
	}
	spin();
	assert_payload(p, len);
	ck_assert_uint_eq(rmpp_client_strays(C), 2);
	ck_assert_uint_eq(F.n_sent, 1 + 8);		/* request + 8 ACKs */
	for (uint32_t s = 1; s <= 8; s++) {
		const struct sa_mad *a = (const struct sa_mad *)F.sent[s].mad;
		ck_assert_uint_eq(a->rmpp.type, RMPP_TYPE_ACK);
		ck_assert_uint_eq(be32toh(a->rmpp.data1), s);
		ck_assert_uint_eq(be64toh(a->hdr.tid),
				  fake_tid(&F, 0) | 0x0000001100000000ull);
	}
	free(p);
}
END_TEST

START_TEST(client_plain_answer)
{
	struct sa_mad m;

	client_query();
	build_seg(&m, NULL, 0, 1);
	memset(&m.rmpp, 0, sizeof(m.rmpp));
	m.hdr.status = htobe16(SA_STATUS_NO_RECORDS);
	deliver(0, &m, PEER_LID);
	spin();
	ck_assert_int_eq(O.calls, 1);
	ck_assert_int_eq(O.status, 0);
	ck_assert_uint_eq(O.mad_status, SA_STATUS_NO_RECORDS);
	ck_assert(!O.rmpp);
}
END_TEST

START_TEST(client_no_answer)
{
	client_query();
	run_until_done(&O.calls, 2000);
	ck_assert_int_eq(O.calls, 1);
	ck_assert_int_eq(O.status, -ETIMEDOUT);
	ck_assert(!O.had_first);
	ck_assert_uint_eq(F.n_sent, 3);		/* 1 + 2 retries */
}
END_TEST

/* The SM sends the first segment and nothing else (OpenSM under ibsim). */
START_TEST(client_truncated)
{
	size_t len = 9 * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 23);
	struct sa_mad m;

	client_query();
	build_seg(&m, p, len, 1);
	deliver(0, &m, PEER_LID);
	run_until_done(&O.calls, 2000);
	ck_assert_int_eq(O.status, -ETIMEDOUT);
	ck_assert(O.had_first);
	ck_assert_uint_eq(O.segments, 1);
	ck_assert_uint_eq(O.expected, 9);
	ck_assert_uint_eq(O.len, RMPP_SEG_DATA);
	free(p);
}
END_TEST

/* Torn down in the middle: -ECANCELED, nothing leaks (ASan). */
START_TEST(client_free_midway)
{
	size_t len = 4 * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 24);
	struct outcome o2 = { 0 };
	struct sa_mad m, req;

	client_query();				/* will be mid-transfer */
	memset(&req, 0, sizeof(req));
	req.hdr.base_version = 1;
	req.hdr.mgmt_class = MAD_CLASS_SA;
	req.hdr.class_version = 2;
	req.hdr.method = MAD_METHOD_GET_TABLE;
	req.hdr.attr_id = htobe16(SA_ATTR_NODE_RECORD);
	ck_assert_int_eq(rmpp_client_query(C, &req, sizeof(req), &peer,
					   on_done, &o2), 0);	/* unanswered */
	build_seg(&m, p, len, 1);
	deliver(0, &m, PEER_LID);
	build_seg(&m, p, len, 2);
	deliver(0, &m, PEER_LID);
	spin();
	fake_fini(&F);			/* cancels the unanswered request */
	ck_assert_int_eq(o2.calls, 1);
	ck_assert_int_eq(o2.status, -ECANCELED);
	rmpp_client_free(C);		/* ends the transfer */
	C = NULL;
	ck_assert_int_eq(O.calls, 1);
	ck_assert_int_eq(O.status, -ECANCELED);
	outcome_free(&o2);
	free(p);
}
END_TEST

START_TEST(client_class_taken)
{
	struct rmpp_client *c2 = NULL;

	ck_assert_int_eq(rmpp_client_new(&c2, L, F.engine, MAD_CLASS_SA, NULL),
			 -EEXIST);
	ck_assert_ptr_null(c2);
}
END_TEST

/* ------------------------------------------------------------------ */
/* loopback: mad/rmpp.c's sender -> lossy wire -> this receiver         */
/* ------------------------------------------------------------------ */

/*
 * Two engines, A (the client, LID 1) and B (the SA, LID 2), joined by a
 * wire that loses each MAD with probability loss/1000 in either
 * direction and delivers the others on the next loop iteration.  B
 * answers a GetTable with rmpp_send() of a known payload; ACKs, STOPs and
 * ABORTs reach its sender as requests (R bit cleared, default) or as
 * unmatched responses (ack_response_method).
 */
struct wire;

struct end {
	struct wire *w;
	struct mad_engine *e;
	uint16_t lid;
};

struct delivery {
	struct delivery *next;
	struct end *to;
	struct mad_addr from;
	size_t len;
	uint8_t mad[MAD_SIZE];
};

struct wire {
	struct end a, b;
	unsigned loss;			/* per mille */
	uint64_t rng;
	/* In flight, FIFO; an idle watcher delivers them (a zero timer
	 * would cost libev's minimum block time, 1 ms, per hop). */
	struct delivery *head, *tail;
	ev_idle idle;
	unsigned long carried, lost;
	/* the SA on B */
	const uint8_t *payload;
	size_t len;
	struct rmpp_sender *sender;
	int sender_done, sender_status, transfers;
};

static uint64_t wire_rand(struct wire *w)
{
	w->rng ^= w->rng >> 12;
	w->rng ^= w->rng << 25;
	w->rng ^= w->rng >> 27;
	return w->rng * 0x2545f4914f6cdd1dull;
}

/* Deliver what was in flight when called; what they send goes next. */
static void on_wire(struct ev_loop *loop, ev_idle *i, int revents)
{
	struct wire *w = i->data;
	struct delivery *d = w->head;

	(void)revents;
	w->head = w->tail = NULL;
	ev_idle_stop(loop, &w->idle);
	while (d) {
		struct delivery *next = d->next;

		mad_engine_recv(d->to->e, d->mad, d->len, &d->from, 0);
		free(d);
		d = next;
	}
}

static int wire_send(void *ctx, const void *mad, size_t len,
		     const struct mad_addr *addr, int timeout_ms)
{
	struct end *from = ctx;
	struct wire *w = from->w;
	struct end *to = from == &w->a ? &w->b : &w->a;
	struct delivery *d;

	(void)addr;
	(void)timeout_ms;
	if (wire_rand(w) % 1000 < w->loss) {
		w->lost++;
		return 0;
	}
	w->carried++;
	d = calloc(1, sizeof(*d));
	CHECK(d, "out of memory");
	d->to = to;
	d->from = (struct mad_addr){ .lid = from->lid, .qpn = 1,
				     .qkey = 0x80010000u };
	d->len = len;
	memcpy(d->mad, mad, len);
	/* The kernel writes the requester's agent into a request's TID. */
	if (!(((struct mad_hdr *)d->mad)->method & MAD_METHOD_RESP)) {
		struct mad_hdr *h = (struct mad_hdr *)d->mad;
		h->tid = htobe64((be64toh(h->tid) & 0xffffffffu) | 0x500000000ull);
	}
	if (w->tail)
		w->tail->next = d;
	else
		w->head = d;
	w->tail = d;
	ev_idle_start(L, &w->idle);
	return 0;
}

static void sender_done(void *arg, int status)
{
	struct wire *w = arg;

	w->sender_done++;
	w->sender_status = status;
}

/* B: ACK/STOP/ABORT for the running sender, from either path. */
static void sa_control(struct wire *w, const struct sa_mad *m,
		       const struct mad_addr *from)
{
	if (w->sender && rmpp_sender_matches(w->sender, m->hdr.tid, from))
		rmpp_sender_input(w->sender, m);
}

static void sa_unmatched(void *arg, const void *mad, size_t len,
			 const struct mad_addr *from)
{
	(void)len;
	sa_control(arg, mad, from);
}

static void sa_request(void *arg, const void *mad, size_t len,
		       const struct mad_addr *from)
{
	struct wire *w = arg;
	const struct sa_mad *req = mad;
	struct sa_mad hdr;

	CHECK(len == MAD_SIZE, "SA got a %zu-byte MAD", len);
	if (rmpp_flags(&req->rmpp) & RMPP_FLAG_ACTIVE) {
		sa_control(w, req, from);
		return;
	}
	if (w->transfers)		/* a resent request: already answering */
		return;
	w->transfers++;
	hdr = *req;
	hdr.hdr.method |= MAD_METHOD_RESP;
	hdr.attr_offset = htobe16(STRIDE_WORDS);
	struct mad_addr to = { .lid = from->lid, .qpn = 1, .qkey = 0x80010000u };
	uint8_t *copy = malloc(w->len ? w->len : 1);	/* the sender takes it */

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, w->payload, w->len);
	ck_assert_int_eq(rmpp_send(&w->sender, L, w->b.e, &hdr, copy,
				   w->len, &to, 5, 40, sender_done, w), 0);
}

static void wire_open(struct wire *w, unsigned loss, uint64_t seed)
{
	struct mad_engine_opts o = {
		.max_wire_smps = 4, .max_wire_gmps = 4, .timeout_ms = 10,
		.retries = 50,
	};
	struct mad_transport ta = { .send = wire_send, .ctx = &w->a };
	struct mad_transport tb = { .send = wire_send, .ctx = &w->b };

	memset(w, 0, sizeof(*w));
	w->loss = loss;
	w->rng = seed * 0x9e3779b97f4a7c15ull | 1;
	w->a = (struct end){ .w = w, .lid = 1 };
	w->b = (struct end){ .w = w, .lid = 2 };
	ev_idle_init(&w->idle, on_wire);
	w->idle.data = w;
	ck_assert_int_eq(mad_engine_new(&w->a.e, L, &ta, &o), 0);
	ck_assert_int_eq(mad_engine_new(&w->b.e, L, &tb, &o), 0);
	ck_assert_int_eq(mad_engine_on_unsolicited(w->b.e, MAD_CLASS_SA, 0xff,
						   0xffff, sa_request, w), 0);
	ck_assert_int_eq(mad_engine_on_unmatched(w->b.e, MAD_CLASS_SA,
						 sa_unmatched, w), 0);
}

static void wire_close(struct wire *w)
{
	mad_engine_free(w->a.e);
	mad_engine_free(w->b.e);
	rmpp_sender_free(w->sender);
	ev_idle_stop(L, &w->idle);
	while (w->head) {
		struct delivery *d = w->head;

		w->head = d->next;
		free(d);
	}
}

/* One GetTable of `len` bytes over a wire losing `loss` per mille. */
static void loopback(size_t len, unsigned loss, uint64_t seed, bool resp_acks)
{
	struct wire w;
	struct rmpp_client *c;
	struct outcome o = { 0 };
	struct rmpp_recv_opts ro = {
		.window = 32, .timeout_ms = 1000,
		.ack_response_method = resp_acks,
	};
	uint8_t *p = make_payload(len, (unsigned)seed);
	struct sa_mad req;

	wire_open(&w, loss, seed);
	w.payload = p;
	w.len = len;
	ck_assert_int_eq(rmpp_client_new(&c, L, w.a.e, MAD_CLASS_SA, &ro), 0);
	memset(&req, 0, sizeof(req));
	req.hdr.base_version = 1;
	req.hdr.mgmt_class = MAD_CLASS_SA;
	req.hdr.class_version = 2;
	req.hdr.method = MAD_METHOD_GET_TABLE;
	req.hdr.attr_id = htobe16(SA_ATTR_NODE_RECORD);
	ck_assert_int_eq(rmpp_client_query(c, &req, sizeof(req),
			 &(struct mad_addr){ .lid = 2, .qpn = 1, .qkey = 0x80010000u },
			 on_done, &o), 0);
	run_until_done(&o.calls, 30000);
	ck_assert_msg(o.calls == 1, "len %zu loss %u seed %llu: no result",
		      len, loss, (unsigned long long)seed);
	ck_assert_msg(o.status == 0, "len %zu loss %u seed %llu: status %d "
		      "after %u of %u segments (rmpp status %u, %lu carried, "
		      "%lu lost)", len, loss, (unsigned long long)seed, o.status,
		      o.segments, o.expected, o.rmpp_status, w.carried, w.lost);
	ck_assert_uint_eq(o.len, len);
	ck_assert_msg(!len || !memcmp(o.payload, p, len),
		      "len %zu loss %u seed %llu: payload differs", len, loss,
		      (unsigned long long)seed);
	ck_assert_uint_eq(o.segments, rmpp_segments(len));
	/* The sender hears the final ACK unless it was lost: then it
	 * resends the last segment, which is ACKed again until freed. */
	if (!loss) {
		spin();
		ck_assert_int_eq(w.sender_done, 1);
		ck_assert_int_eq(w.sender_status, 0);
	}
	wire_close(&w);
	rmpp_client_free(c);
	outcome_free(&o);
	free(p);
}

START_TEST(loopback_lossless)
{
	static const size_t lens[] = {
		0, 1, 200, 201, 31 * 200, 32 * 200, 32 * 200 + 1, 33 * 200,
		64 * 200 + 5, 100 * 200, 499 * 200 + 7, 500 * 200,
	};

	loopback(lens[_i], 0, _i + 1, false);
}
END_TEST

START_TEST(loopback_resp_acks)
{
	loopback(77 * 200 + 3, 0, 99, true);
	loopback(40 * 200, 50, 98, true);
}
END_TEST

/* Segment counts 1..500, 5% loss of every MAD in both directions. */
START_TEST(loopback_lossy)
{
	uint64_t seed = 1000 + (uint64_t)_i;
	uint64_t r = seed * 0x9e3779b97f4a7c15ull;
	uint32_t segs = (uint32_t)(r >> 40) % 500 + 1;
	size_t len = (size_t)segs * 200 - (size_t)((r >> 20) % 200);

	if (_i == 0)
		len = 500 * 200;		/* the largest, exactly */
	if (_i == 1)
		len = 1;
	loopback(len, 50, seed, false);
}
END_TEST

/* Heavy loss (20%) on mid-sized transfers. */
START_TEST(loopback_heavy_loss)
{
	loopback((size_t)(_i + 1) * 37 * 200 + (size_t)_i, 200, 5000 + (uint64_t)_i,
		 false);
}
END_TEST

/* ------------------------------------------------------------------ */
/* sender: lifetime and progress (mad/rmpp.c)                           */
/* ------------------------------------------------------------------ */

/* A receiver that ACKs every `period` s: segment `seg`, then `seg + step`... */
struct slow_acker {
	ev_timer tick;
	struct rmpp_sender *s;
	uint32_t seg, step;
	int done, status;
	ev_tstamp t0, t_done;
};

static void slow_ack(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct slow_acker *a = w->data;
	struct sa_mad m;

	(void)loop;
	(void)revents;
	if (a->done)
		return;
	memset(&m, 0, sizeof(m));
	m.hdr.base_version = 1;
	m.hdr.mgmt_class = MAD_CLASS_SA;
	m.hdr.class_version = 2;
	m.hdr.method = MAD_METHOD_GET_TABLE;
	m.hdr.tid = htobe64(TID);
	rmpp_set(&m.rmpp, RMPP_TYPE_ACK, RMPP_FLAG_ACTIVE, a->seg,
		 a->seg + a->step);
	rmpp_sender_input(a->s, &m);		/* may finish it */
	a->seg += a->step;
}

static void slow_done(void *arg, int status)
{
	struct slow_acker *a = arg;

	a->done++;
	a->status = status;
	a->t_done = ev_now(L);
}

/* A transfer of `segs` segments acked as slow_ack says, every 10 ms. */
static void slow_transfer(struct slow_acker *a, uint32_t segs, uint32_t step,
			  unsigned max_ms, unsigned rate)
{
	struct sa_mad hdr;
	size_t len = (size_t)segs * RMPP_SEG_DATA;
	uint8_t *p = make_payload(len, 3);

	memset(a, 0, sizeof(*a));
	memset(&hdr, 0, sizeof(hdr));
	hdr.hdr.base_version = 1;
	hdr.hdr.mgmt_class = MAD_CLASS_SA;
	hdr.hdr.class_version = 2;
	hdr.hdr.method = MAD_METHOD_GET_TABLE | MAD_METHOD_RESP;
	hdr.hdr.tid = htobe64(TID);
	a->seg = 1;
	a->step = step;
	ev_now_update(L);
	a->t0 = ev_now(L);
	ck_assert_int_eq(rmpp_send(&a->s, L, F.engine, &hdr, p, len, &peer,
				   20, 2, slow_done, a), 0);
	if (max_ms || rate)
		rmpp_sender_set_limits(a->s, max_ms, rate);
	ev_timer_init(&a->tick, slow_ack, 0.01, 0.01);
	a->tick.data = a;
	ev_timer_start(L, &a->tick);
	run_until_done(&a->done, 3000);
	ev_timer_stop(L, &a->tick);
	ck_assert_int_eq(a->done, 1);
}

static void assert_gave_up(const struct slow_acker *a)
{
	const struct sa_mad *m;

	ck_assert_int_eq(a->status, -ETIMEDOUT);
	ck_assert_uint_gt(F.n_sent, 0);
	m = (const struct sa_mad *)F.sent[F.n_sent - 1].mad;
	ck_assert_uint_eq(m->rmpp.type, RMPP_TYPE_ABORT);
	ck_assert_uint_eq(m->rmpp.status, RMPP_STATUS_TMR);
	rmpp_sender_free(a->s);
}

/* ACKs of segment 1 again and again are no progress: the retries run
 * out as if nothing came (3 timeouts of 20 ms). */
START_TEST(sender_repeated_ack)
{
	struct slow_acker a;

	slow_transfer(&a, 10, 0, 0, 0);
	assert_gave_up(&a);
	ck_assert_msg(a.t_done - a.t0 < 1.0, "held %.3f s", a.t_done - a.t0);
}
END_TEST

/* One new segment every 10 ms is 100/s; at least 1000/s are asked: 100
 * segments may take 60 + 100 ms, and would take 1 s. */
START_TEST(sender_min_rate)
{
	struct slow_acker a;

	ck_assert_uint_eq(rmpp_lifetime_ms(100, 20, 2, 0, 1000), 160);
	slow_transfer(&a, 100, 1, 0, 1000);
	assert_gave_up(&a);
	ck_assert_msg(a.t_done - a.t0 >= 0.15 && a.t_done - a.t0 < 0.9,
		      "gave up after %.3f s", a.t_done - a.t0);
	ck_assert_uint_lt(a.seg, 60);
}
END_TEST

/* The maximum lifetime bounds a transfer that progresses fast enough. */
START_TEST(sender_max_lifetime)
{
	struct slow_acker a;

	ck_assert_uint_eq(rmpp_lifetime_ms(100000, 20, 2, 100, 1), 100);
	ck_assert_uint_eq(rmpp_lifetime_ms(1000, 200, 3, 60000, 100), 10800);
	slow_transfer(&a, 100, 1, 100, 0);
	assert_gave_up(&a);
	ck_assert_msg(a.t_done - a.t0 >= 0.095 && a.t_done - a.t0 < 0.9,
		      "gave up after %.3f s", a.t_done - a.t0);
}
END_TEST

/* A receiver keeping up finishes well inside the bounds. */
START_TEST(sender_steady)
{
	struct slow_acker a;

	slow_transfer(&a, 5, 1, 0, 10);
	ck_assert_int_eq(a.status, 0);
	rmpp_sender_free(a.s);
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *rmpp_suite(void)
{
	Suite *s = suite_create("rmpp_recv");
	TCase *tc;

	tc = tcase_create("receiver");
	tcase_add_checked_fixture(tc, recv_setup, recv_teardown);
	tcase_add_test(tc, in_order);
	tcase_add_loop_test(tc, lengths, 0, 10);
	tcase_add_test(tc, window_option);
	tcase_add_test(tc, ack_response_method);
	tcase_add_test(tc, plain_answer);
	tcase_add_test(tc, unsegmented_image);
	tcase_add_test(tc, out_of_order);
	tcase_add_test(tc, duplicates);
	tcase_add_test(tc, missing_then_resend);
	tcase_add_test(tc, first_segment_lost);
	tcase_add_test(tc, foreign_segments_ignored);
	tcase_add_test(tc, free_pending);
	tcase_add_test(tc, start_invalid);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_checked_fixture(tc, recv_setup, recv_teardown);
	tcase_add_test(tc, wrong_last_length);
	tcase_add_loop_test(tc, bad_lengths, 0, 6);
	tcase_add_test(tc, unannounced_length);
	tcase_add_loop_test(tc, too_large, 0, 2);
	tcase_add_loop_test(tc, abort_from_sender, 0, 2);
	tcase_add_loop_test(tc, bad_headers, 0, 5);
	tcase_add_loop_test(tc, bad_first, 0, 3);
	tcase_add_test(tc, timeout);
	tcase_add_test(tc, timeout_without_first);
	tcase_add_test(tc, timeout_restarts_on_progress);
	suite_add_tcase(s, tc);

	tc = tcase_create("sender");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sender_repeated_ack);
	tcase_add_test(tc, sender_min_rate);
	tcase_add_test(tc, sender_max_lifetime);
	tcase_add_test(tc, sender_steady);
	suite_add_tcase(s, tc);

	tc = tcase_create("client");
	tcase_add_checked_fixture(tc, client_setup, client_teardown);
	tcase_add_test(tc, client_transfer);
	tcase_add_test(tc, client_plain_answer);
	tcase_add_test(tc, client_no_answer);
	tcase_add_test(tc, client_truncated);
	tcase_add_test(tc, client_free_midway);
	tcase_add_test(tc, client_class_taken);
	suite_add_tcase(s, tc);

	tc = tcase_create("loopback");
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, loopback_lossless, 0, 12);
	tcase_add_test(tc, loopback_resp_acks);
	tcase_add_loop_test(tc, loopback_lossy, 0, 24);
	tcase_add_loop_test(tc, loopback_heavy_loss, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(rmpp_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
