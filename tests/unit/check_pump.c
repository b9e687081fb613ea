/*
 * check_pump.c - the receive queue (mad/rxq.c) and the receive pump
 * (mad/pump.c): bounds, drop policy, fairness and receive errors.
 *
 * The pump runs its real thread against a fake receive function that
 * hands out scripted MADs (or errors) as fast as the thread asks; the
 * loop is run by the test, so "the loop is busy" is simply the test not
 * running it.
 */
#include "config.h"

#include <check.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#include "mad/pump.h"
#include "mad/rxq.h"
#include "mad/wire.h"

#define CHECK(expr, ...)	do { if (!(expr)) ck_abort_msg(__VA_ARGS__); } while (0)

/* A MAD with a sequence number in its TID, a method and a source. */
static void make_mad(uint8_t *mad, uint32_t seq, uint8_t method)
{
	struct mad_hdr *h = (struct mad_hdr *)mad;

	memset(mad, 0, MAD_SIZE);
	h->base_version = 1;
	h->mgmt_class = MAD_CLASS_SA;
	h->class_version = 2;
	h->method = method;
	h->tid = htobe64(seq);
}

static uint32_t seq_of(const void *mad)
{
	return (uint32_t)be64toh(((const struct mad_hdr *)mad)->tid);
}

/* ------------------------------------------------------------ rxq */

START_TEST(rxq_classifies)
{
	uint8_t m[MAD_SIZE];

	make_mad(m, 1, MAD_METHOD_GET);
	ck_assert(!rxq_is_response(m, MAD_SIZE, 0));
	ck_assert(rxq_is_response(m, MAD_SIZE, ETIMEDOUT));	/* our own send */
	make_mad(m, 1, MAD_METHOD_GET | MAD_METHOD_RESP);
	ck_assert(rxq_is_response(m, MAD_SIZE, 0));
	make_mad(m, 1, MAD_METHOD_TRAP_REPRESS);
	ck_assert(rxq_is_response(m, MAD_SIZE, 0));
	make_mad(m, 1, MAD_METHOD_TRAP);
	ck_assert(!rxq_is_response(m, MAD_SIZE, 0));
	ck_assert(!rxq_is_response(m, 10, 0));		/* no header */
}
END_TEST

START_TEST(rxq_fifo_and_bounds)
{
	struct rxq q;
	uint8_t m[MAD_SIZE];
	struct mad_addr from = { .lid = 0xffff };

	ck_assert_int_eq(rxq_init(&q, 64), 0);
	ck_assert_uint_eq(q.stats.cap, 64);
	/* answers from the permissive LID fill 3/4 of the ring, no more */
	for (uint32_t i = 0; i < 100; i++) {
		make_mad(m, i, MAD_METHOD_GET | MAD_METHOD_RESP);
		int rc = rxq_push(&q, m, MAD_SIZE, &from, 0);
		CHECK(rc == (i < 48 ? 0 : -ENOBUFS), "push %u: %d", i, rc);
	}
	ck_assert_uint_eq(rxq_count(&q), 48);
	ck_assert_uint_eq(q.stats.queued, 48);
	ck_assert_uint_eq(q.stats.dropped_full, 52);
	ck_assert_uint_eq(q.stats.dropped_responses, 52);
	ck_assert_uint_eq(q.stats.high_water, 48);
	/* oldest first; the newest were dropped */
	for (unsigned i = 0; i < 48; i++)
		CHECK(seq_of(rxq_at(&q, i)->mad) == i, "slot %u", i);
	/* the last quarter is the requests' */
	from.lid = 5;
	for (uint32_t i = 0; i < 4; i++) {
		make_mad(m, 1000 + i, MAD_METHOD_GET);
		ck_assert_int_eq(rxq_push(&q, m, MAD_SIZE, &from, 0), 0);
	}
	rxq_pop(&q, 1000);
	from.lid = 0xffff;
	for (uint32_t i = 0; i < 48; i++) {
		make_mad(m, i, MAD_METHOD_GET | MAD_METHOD_RESP);
		ck_assert_int_eq(rxq_push(&q, m, MAD_SIZE, &from, 0), 0);
	}
	rxq_pop(&q, 10);
	ck_assert_uint_eq(rxq_count(&q), 38);
	ck_assert_uint_eq(seq_of(rxq_at(&q, 0)->mad), 10);
	/* wraps around the ring */
	for (uint32_t i = 100; i < 110; i++) {
		make_mad(m, i, MAD_METHOD_GET | MAD_METHOD_RESP);
		ck_assert_int_eq(rxq_push(&q, m, MAD_SIZE, &from, 0), 0);
	}
	ck_assert_uint_eq(seq_of(rxq_at(&q, 47)->mad), 109);
	rxq_pop(&q, 1000);
	ck_assert_uint_eq(rxq_count(&q), 0);
	rxq_fini(&q);

	/* cap 0 is the default; tiny caps are raised */
	ck_assert_int_eq(rxq_init(&q, 0), 0);
	ck_assert_uint_eq(q.stats.cap, RXQ_DEFAULT_CAP);
	rxq_fini(&q);
	ck_assert_int_eq(rxq_init(&q, 1), 0);
	ck_assert_uint_eq(q.stats.cap, 16);
	rxq_fini(&q);
}
END_TEST

/* Push n MADs of `method` from LIDs lid .. lid + nlids - 1 in turn;
 * returns how many were queued. */
static unsigned flood(struct rxq *q, uint16_t lid, unsigned nlids,
		      unsigned n, uint8_t method)
{
	static uint32_t seq = 1u << 20;
	uint8_t m[MAD_SIZE];
	unsigned in = 0;

	for (unsigned i = 0; i < n; i++) {
		struct mad_addr from = { .lid = (uint16_t)(lid + i % nlids) };

		make_mad(m, seq++, method);
		in += rxq_push(q, m, MAD_SIZE, &from, 0) == 0;
	}
	return in;
}

/* Requests get half the ring and one source a sixteenth: a flooding host
 * can neither fill the ring nor take the requests' share from others. */
START_TEST(rxq_fairness)
{
	struct rxq q;
	uint8_t m[MAD_SIZE];
	struct mad_addr from = { 0 };
	uint32_t seq = 0;

	ck_assert_int_eq(rxq_init(&q, 256), 0);
	/* one host floods requests: 256/16 = 16 of them get in */
	ck_assert_uint_eq(flood(&q, 7, 1, 1000, MAD_METHOD_GET), 16);
	ck_assert_uint_eq(rxq_count(&q), 16);
	ck_assert_uint_eq(q.stats.dropped_source, 984);
	/* others still get in, up to half the ring for requests in all */
	(void)flood(&q, 100, 200, 200, MAD_METHOD_SET);
	ck_assert_uint_eq(rxq_count(&q), 128);
	ck_assert_uint_eq(q.stats.dropped_full, 200 - (128 - 16));
	/* answers still have the other half */
	from.lid = 0xffff;
	for (int i = 0; i < 128; i++) {
		make_mad(m, seq++, MAD_METHOD_GET | MAD_METHOD_RESP);
		CHECK(rxq_push(&q, m, MAD_SIZE, &from, 0) == 0, "answer %d", i);
	}
	ck_assert_uint_eq(rxq_count(&q), 256);
	ck_assert_uint_eq(q.stats.dropped_responses, 0);
	/* forged answers from one LID: an eighth of the ring at most */
	rxq_pop(&q, 256);
	ck_assert_uint_eq(flood(&q, 9, 1, 200, MAD_METHOD_GET | MAD_METHOD_RESP),
			  32);
	ck_assert_uint_eq(rxq_count(&q), 32);
	ck_assert_uint_eq(q.stats.dropped_responses, 168);
	/* popping gives the share back */
	rxq_pop(&q, 32);
	from.lid = 7;
	make_mad(m, seq++, MAD_METHOD_GET);
	ck_assert_int_eq(rxq_push(&q, m, MAD_SIZE, &from, 0), 0);
	rxq_fini(&q);
}
END_TEST

/*
 * Hosts flood requests from 8 LIDs (a host with LMC 3 has them) and
 * forged answers (R bit set) from many LIDs while the loop is busy: the
 * answers to the SM's own directed-route SMPs (from LID 0xffff) still
 * find room.  Before: requests took half the ring, forged answers the
 * other half, and every answer of the sweep was dropped.
 */
START_TEST(rxq_forged_answers_leave_room)
{
	struct rxq q;
	uint8_t m[MAD_SIZE];
	struct mad_addr from = { 0 };
	uint32_t seq = 0;

	ck_assert_int_eq(rxq_init(&q, 256), 0);
	(void)flood(&q, 8, 8, 800, MAD_METHOD_GET);
	ck_assert_uint_eq(rxq_count(&q), 128);
	(void)flood(&q, 16, 32, 3200, MAD_METHOD_GET | MAD_METHOD_RESP);
	ck_assert_uint_le(rxq_count(&q), 128 + 64);
	from.lid = 0xffff;
	for (int i = 0; i < 64; i++) {
		make_mad(m, seq++, MAD_METHOD_GET | MAD_METHOD_RESP);
		CHECK(rxq_push(&q, m, MAD_SIZE, &from, 0) == 0,
		      "answer %d of the sweep dropped", i);
	}
	/* our own sends handed back by the kernel get in as well */
	rxq_pop(&q, 1);
	from.lid = 3;
	make_mad(m, seq++, MAD_METHOD_GET);
	ck_assert_int_eq(rxq_push(&q, m, MAD_SIZE, &from, ETIMEDOUT), 0);
	rxq_fini(&q);
}
END_TEST

/*
 * A host whose port has LMC 3 owns LIDs 8-15: with the SM's LMC set, its
 * requests from all of them are one source's share.  Before: eight
 * shares, the whole requests' half of the ring, and no other host's
 * query or trap got in.
 */
START_TEST(rxq_lmc_range_is_one_source)
{
	struct rxq q;
	uint8_t m[MAD_SIZE];
	struct mad_addr from = { 0 };
	uint32_t seq = 0;

	ck_assert_int_eq(rxq_init(&q, 256), 0);
	rxq_set_source_lmc(&q, 3);
	ck_assert_uint_eq(flood(&q, 8, 8, 1000, MAD_METHOD_GET), 16);
	/* Another host still gets in. */
	from.lid = 16;
	make_mad(m, seq++, MAD_METHOD_GET);
	ck_assert_int_eq(rxq_push(&q, m, MAD_SIZE, &from, 0), 0);
	/* Forged answers from the range: one source's share too. */
	ck_assert_uint_eq(flood(&q, 8, 8, 1000, MAD_METHOD_GET | MAD_METHOD_RESP),
			  32);
	ck_assert_uint_eq(rxq_count(&q), 17 + 32);
	/* Directed-route answers are not folded into a range. */
	from.lid = 0xffff;
	make_mad(m, seq++, MAD_METHOD_GET | MAD_METHOD_RESP);
	ck_assert_int_eq(rxq_push(&q, m, MAD_SIZE, &from, 0), 0);
	/* Popping gives every share back, also after the LMC changes. */
	rxq_set_source_lmc(&q, 0);
	rxq_pop(&q, rxq_count(&q));
	ck_assert_uint_eq(q.requests, 0);
	for (unsigned l = 0; l < 65536; l++)
		CHECK(!q.per_lid_req[l] && !q.per_lid_resp[l], "LID %u", l);
	rxq_fini(&q);
}
END_TEST

/*
 * With the engine's on-wire TID counters, SMP answers whose TID no
 * request on the wire has never take a slot: a host forging
 * directed-route answers from the permissive LID (which no share can
 * tell from the sweep's) cannot crowd out the sweep's own answers.
 * Before: the forgeries filled 3/4 of the ring and the genuine answer
 * was dropped.
 */
START_TEST(rxq_tid_filter)
{
	static _Atomic uint16_t wire[MAD_TID_FILTER_SIZE];
	struct rxq q;
	uint8_t m[MAD_SIZE];
	struct mad_addr dr = { .lid = 0xffff }, host = { .lid = 9 };
	struct mad_hdr *h = (struct mad_hdr *)m;

	ck_assert_int_eq(rxq_init(&q, 256), 0);
	rxq_set_tid_filter(&q, wire);
	wire[0x1234] = 1;			/* our one request */
	for (uint32_t i = 0; i < 1000; i++) {
		make_mad(m, i, MAD_METHOD_GET | MAD_METHOD_RESP);
		h->mgmt_class = MAD_CLASS_SMI_DR;
		h->tid = htobe64(0xabcd00000000ull | (i * 7919u % 65536u));
		if ((be64toh(h->tid) & 0xffff) == 0x1234)
			continue;
		(void)rxq_push(&q, m, MAD_SIZE, &dr, 0);
	}
	ck_assert_uint_eq(rxq_count(&q), 0);
	ck_assert_uint_ge(q.stats.dropped_unexpected, 999);
	/* the answer to our request gets in (agent bits ignored) */
	h->tid = htobe64(0x0000000700001234ull);
	ck_assert_int_eq(rxq_push(&q, m, MAD_SIZE, &dr, 0), 0);
	/* LID-routed SMPs too; Trap Represses (we send no traps) too */
	h->mgmt_class = MAD_CLASS_SMI;
	h->tid = htobe64(0x4321);
	ck_assert_int_eq(rxq_push(&q, m, MAD_SIZE, &host, 0), -ENOBUFS);
	h->method = MAD_METHOD_TRAP_REPRESS;
	ck_assert_int_eq(rxq_push(&q, m, MAD_SIZE, &host, 0), -ENOBUFS);
	/* our own sends handed back, requests and GMP answers are not
	 * filtered (RMPP ACKs carry the client's TIDs) */
	h->method = MAD_METHOD_GET;
	ck_assert_int_eq(rxq_push(&q, m, MAD_SIZE, &host, ETIMEDOUT), 0);
	ck_assert_int_eq(rxq_push(&q, m, MAD_SIZE, &host, 0), 0);
	h->method = MAD_METHOD_GET_TABLE | MAD_METHOD_RESP;
	h->mgmt_class = MAD_CLASS_SA;
	ck_assert_int_eq(rxq_push(&q, m, MAD_SIZE, &host, 0), 0);
	ck_assert_uint_eq(rxq_count(&q), 4);
	rxq_fini(&q);
}
END_TEST

/* 400,000 MADs at a queue nobody drains: it holds its capacity, no more
 * (the old queue took one malloc per MAD: 110 MB for this). */
START_TEST(rxq_flood_bounded)
{
	struct rxq q;
	uint8_t m[MAD_SIZE];
	struct mad_addr from = { 0 };

	ck_assert_int_eq(rxq_init(&q, 0), 0);
	for (uint32_t i = 0; i < 400000; i++) {
		from.lid = (uint16_t)(1 + i % 5000);
		make_mad(m, i, i % 2 ? MAD_METHOD_GET : MAD_METHOD_GET | MAD_METHOD_RESP);
		(void)rxq_push(&q, m, MAD_SIZE, &from, 0);
	}
	ck_assert_uint_le(rxq_count(&q), RXQ_DEFAULT_CAP);
	ck_assert_uint_eq(q.stats.high_water, rxq_count(&q));
	ck_assert_uint_eq(q.stats.queued + q.stats.dropped_full +
			  q.stats.dropped_source, 400000);
	rxq_fini(&q);
}
END_TEST

/* ------------------------------------------------------------ pump */

/* The fake receive function: a script the test sets, read by the pump
 * thread under a lock. */
enum fake_mode { FR_IDLE, FR_MADS, FR_ERROR };

static struct fake_recv {
	pthread_mutex_t lock;
	enum fake_mode mode;
	uint32_t next, total;		/* FR_MADS: MADs next..total-1 */
	unsigned resp_every;		/* every n-th is an answer (0: none) */
	uint16_t flood_lid;		/* source of the requests */
	int err;			/* FR_ERROR: what to return */
	atomic_ulong calls;
	atomic_ulong handed;
} FR;

static int fake_recv(void *ctx, void *mad, size_t *len, struct mad_addr *from,
		     int *status, int timeout_ms)
{
	(void)ctx;
	atomic_fetch_add(&FR.calls, 1);
	pthread_mutex_lock(&FR.lock);
	enum fake_mode mode = FR.mode;
	int rc = -ETIMEDOUT;
	if (mode == FR_ERROR) {
		rc = FR.err;
	} else if (mode == FR_MADS && FR.next < FR.total) {
		uint32_t i = FR.next++;
		bool resp = FR.resp_every && i % FR.resp_every == 0;

		make_mad(mad, i, resp ? MAD_METHOD_GET | MAD_METHOD_RESP
				      : MAD_METHOD_GET);
		*len = MAD_SIZE;
		*status = 0;
		memset(from, 0, sizeof(*from));
		/* flood_lid 0: requests from 1,000 different hosts */
		from->lid = resp ? 1 : FR.flood_lid ? FR.flood_lid
						    : (uint16_t)(100 + i % 1000);
		from->qpn = 1;
		atomic_fetch_add(&FR.handed, 1);
		rc = 0;
	}
	pthread_mutex_unlock(&FR.lock);
	if (rc == -ETIMEDOUT && timeout_ms) {
		struct timespec ts = { 0, 2 * 1000000L };	/* 2 ms */
		nanosleep(&ts, NULL);
	}
	return rc;
}

static void fr_set_lid(enum fake_mode mode, uint32_t total,
		       unsigned resp_every, int err, uint16_t lid)
{
	pthread_mutex_lock(&FR.lock);
	FR.mode = mode;
	FR.next = 0;
	FR.total = total;
	FR.resp_every = resp_every;
	FR.flood_lid = lid;
	FR.err = err;
	atomic_store(&FR.calls, 0);
	atomic_store(&FR.handed, 0);
	pthread_mutex_unlock(&FR.lock);
}

static void fr_set(enum fake_mode mode, uint32_t total, unsigned resp_every,
		   int err)
{
	fr_set_lid(mode, total, resp_every, err, 0);
}

static struct got {
	uint32_t n, responses;
	uint32_t last_seq;
	bool in_order;
	int errs[8];
	uint64_t err_counts[8];
	unsigned n_errs;
} G;

static void on_deliver(void *arg, const void *mad, size_t len,
		       const struct mad_addr *from, int status)
{
	(void)arg;
	(void)status;
	uint32_t s = seq_of(mad);

	if (G.n && s <= G.last_seq)
		G.in_order = false;
	G.last_seq = s;
	G.n++;
	if (((const struct mad_hdr *)mad)->method & MAD_METHOD_RESP)
		G.responses++;
	CHECK(len == MAD_SIZE, "len %zu", len);
	CHECK(from->qpn == 1, "from qpn %u", from->qpn);
}

static void on_error(void *arg, int err, uint64_t errors)
{
	(void)arg;
	if (G.n_errs < 8) {
		G.errs[G.n_errs] = err;
		G.err_counts[G.n_errs] = errors;
	}
	G.n_errs++;
}

static struct ev_loop *L;
static struct pump *P;

static void setup(void)
{
	pthread_mutex_init(&FR.lock, NULL);
	fr_set(FR_IDLE, 0, 0, 0);
	memset(&G, 0, sizeof(G));
	G.in_order = true;
	L = ev_loop_new(EVFLAG_AUTO);
	ck_assert_ptr_nonnull(L);
}

static void teardown(void)
{
	pump_stop(P);
	P = NULL;
	ev_loop_destroy(L);
	pthread_mutex_destroy(&FR.lock);
}

static void on_stop(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

/* Run the loop for s seconds. */
static void run_for(double s)
{
	ev_timer t;

	ev_timer_init(&t, on_stop, s, 0.);
	ev_timer_start(L, &t);
	ev_run(L, 0);
	ev_timer_stop(L, &t);
}

static void wait_handed(uint32_t n, double max_s)
{
	for (double t = 0; t < max_s && atomic_load(&FR.handed) < n; t += 0.005)
		usleep(5000);
}

START_TEST(pump_delivers_in_order)
{
	ck_assert_int_eq(pump_start(&P, L, fake_recv, NULL, 0, on_deliver, NULL), 0);
	/* 2,000 requests from 1,000 hosts fit the requests' half of the
	 * ring even if the loop drains nothing until the end */
	fr_set(FR_MADS, 2000, 0, 0);
	for (int i = 0; i < 200 && G.n < 2000; i++)
		run_for(0.02);
	ck_assert_uint_eq(G.n, 2000);
	ck_assert(G.in_order);
	struct pump_stats st;
	pump_stats(P, &st);
	ck_assert_uint_eq(st.queue.queued, 2000);
	ck_assert_uint_eq(st.queue.dropped_full + st.queue.dropped_source, 0);
	ck_assert_uint_eq(st.recv_errors, 0);
	ck_assert(!st.failing);
	ck_assert_uint_eq(G.n_errs, 0);		/* idle polls are no error */
}
END_TEST

/*
 * The loop is busy while 20,000 requests from one LID arrive, with an
 * answer to one of our requests every 200th MAD: the queue keeps its
 * bound, the flood loses its excess, and every answer gets through.
 */
START_TEST(pump_flood_while_busy)
{
	enum { N = 20000, EVERY = 200, CAP = 1024 };

	ck_assert_int_eq(pump_start(&P, L, fake_recv, NULL, CAP, on_deliver, NULL), 0);
	fr_set_lid(FR_MADS, N, EVERY, 0, 42);
	wait_handed(N, 20.0);
	ck_assert_uint_eq(atomic_load(&FR.handed), N);
	usleep(20000);		/* the thread queues the last batch */
	struct pump_stats st;
	pump_stats(P, &st);
	ck_assert_uint_le(st.queue.high_water, CAP);
	ck_assert_uint_eq(st.queue.queued + st.queue.dropped_full +
			  st.queue.dropped_source, N);
	ck_assert_uint_eq(st.queue.dropped_responses, 0);
	for (int i = 0; i < 100 && G.n < st.queue.queued; i++)
		run_for(0.02);
	ck_assert_uint_eq(G.n, st.queue.queued);
	ck_assert_uint_eq(G.responses, N / EVERY);
	ck_assert_uint_le(G.n - G.responses, CAP / 16);	/* the flood's share */
	ck_assert(G.in_order);
}
END_TEST

/* A receive path that fails for good: reported once, with back-off
 * instead of a spin, and once more when it works again. */
START_TEST(pump_permanent_error)
{
	ck_assert_int_eq(pump_start(&P, L, fake_recv, NULL, 0, on_deliver, NULL), 0);
	pump_on_error(P, on_error, NULL);
	fr_set(FR_ERROR, 0, 0, -EIO);
	run_for(0.6);
	unsigned long calls = atomic_load(&FR.calls);
	ck_assert_uint_eq(G.n_errs, 1);
	ck_assert_int_eq(G.errs[0], -EIO);
	ck_assert_uint_ge(G.err_counts[0], PUMP_ERR_PERMANENT);
	/* back-off: 1, 2, 4, ... ms; a spinning thread makes millions */
	ck_assert_uint_lt(calls, 100);
	ck_assert_uint_ge(calls, PUMP_ERR_PERMANENT);
	struct pump_stats st;
	pump_stats(P, &st);
	ck_assert(st.failing);
	ck_assert_int_eq(st.last_error, -EIO);
	ck_assert_uint_le(st.recv_errors, calls);	/* the thread may be in a call */
	ck_assert_uint_ge(st.recv_errors + 1, calls);
	run_for(0.3);
	ck_assert_uint_eq(G.n_errs, 1);			/* not again */
	/* it works again: told once, MADs flow */
	fr_set(FR_MADS, 10, 0, 0);
	for (int i = 0; i < 150 && G.n < 10; i++)
		run_for(0.02);
	ck_assert_uint_eq(G.n, 10);
	ck_assert_uint_eq(G.n_errs, 2);
	ck_assert_int_eq(G.errs[1], 0);
	pump_stats(P, &st);
	ck_assert(!st.failing);
}
END_TEST

/* "Nothing yet" is not an error; a few errors in between MADs are counted
 * but not reported as a failing receive path. */
START_TEST(pump_transient_errors)
{
	ck_assert_int_eq(pump_start(&P, L, fake_recv, NULL, 0, on_deliver, NULL), 0);
	pump_on_error(P, on_error, NULL);
	fr_set(FR_ERROR, 0, 0, -EAGAIN);
	run_for(0.1);
	fr_set(FR_ERROR, 0, 0, -EINTR);
	run_for(0.1);
	struct pump_stats st;
	pump_stats(P, &st);
	ck_assert_uint_eq(st.recv_errors, 0);
	ck_assert_uint_eq(G.n_errs, 0);
	fr_set(FR_ERROR, 0, 0, -ENOMEM);
	while (atomic_load(&FR.calls) < 3)
		usleep(1000);
	fr_set(FR_MADS, 5, 0, 0);
	for (int i = 0; i < 150 && G.n < 5; i++)
		run_for(0.02);
	ck_assert_uint_eq(G.n, 5);
	pump_stats(P, &st);
	ck_assert_uint_ge(st.recv_errors, 3);
	ck_assert_uint_lt(st.recv_errors, PUMP_ERR_PERMANENT);
	ck_assert(!st.failing);
	ck_assert_uint_eq(G.n_errs, 0);
}
END_TEST

START_TEST(pump_start_rejects)
{
	ck_assert_int_eq(pump_start(&P, L, NULL, NULL, 0, on_deliver, NULL), -EINVAL);
	ck_assert_int_eq(pump_start(&P, L, fake_recv, NULL, 0, NULL, NULL), -EINVAL);
	P = NULL;
	pump_stop(NULL);
}
END_TEST

/* ------------------------------------------------------------ fd mode */

/*
 * fd mode: a datagram socket pair stands for the simulator's socket.  The
 * receive function reads one datagram without waiting (a MAD, or a
 * scripted error while sock_err is set) and notes the thread it ran on.
 */
static int SP[2] = { -1, -1 };
static int sock_err;
static atomic_ulong sock_calls;
static pthread_t main_thread;
static bool off_loop;

static int sock_recv(void *ctx, void *mad, size_t *len, struct mad_addr *from,
		     int *status, int timeout_ms)
{
	(void)ctx;
	ck_assert_int_eq(timeout_ms, 0);	/* the loop never waits */
	atomic_fetch_add(&sock_calls, 1);
	if (!pthread_equal(pthread_self(), main_thread))
		off_loop = true;
	if (sock_err)
		return sock_err;
	ssize_t n = recv(SP[0], mad, MAD_SIZE, MSG_DONTWAIT);
	if (n < 0)
		return -errno;
	*len = (size_t)n;
	*status = 0;
	memset(from, 0, sizeof(*from));
	from->lid = (uint16_t)(100 + seq_of(mad) % 1000);
	from->qpn = 1;
	return 0;
}

static void sock_send(uint32_t from, uint32_t n)
{
	uint8_t m[MAD_SIZE];

	for (uint32_t i = from; i < from + n; i++) {
		make_mad(m, i, MAD_METHOD_GET);
		ck_assert_int_eq(send(SP[1], m, MAD_SIZE, 0), MAD_SIZE);
	}
}

static void sock_setup(void)
{
	setup();
	sock_err = 0;
	off_loop = false;
	atomic_store(&sock_calls, 0);
	main_thread = pthread_self();
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_DGRAM, 0, SP), 0);
	int big = 4 << 20;
	(void)setsockopt(SP[0], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	(void)setsockopt(SP[1], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
}

static void sock_teardown(void)
{
	teardown();
	close(SP[0]);
	close(SP[1]);
	SP[0] = SP[1] = -1;
}

/* MADs come in order, on the loop thread, at most one round (64) per
 * loop iteration: a full socket cannot hold the loop. */
START_TEST(pump_fd_delivers_on_loop)
{
	ck_assert_int_eq(pump_start_fd(&P, L, SP[0], sock_recv, NULL, 0,
				       on_deliver, NULL), 0);
	for (uint32_t k = 0; k < 10; k++) {
		sock_send(k * 100, 100);
		uint32_t before = G.n;
		ev_run(L, EVRUN_ONCE);
		ck_assert_uint_gt(G.n, before);
		ck_assert_uint_le(G.n - before, 64);
		for (int i = 0; i < 100 && G.n < (k + 1) * 100; i++)
			ev_run(L, EVRUN_NOWAIT);
		ck_assert_uint_eq(G.n, (k + 1) * 100);
	}
	ck_assert(G.in_order);
	ck_assert(!off_loop);
	struct pump_stats st;
	pump_stats(P, &st);
	ck_assert_uint_eq(st.queue.queued, 1000);
	ck_assert_uint_eq(st.recv_errors, 0);
	/* nothing readable: the loop does not call recv at all */
	unsigned long calls = atomic_load(&sock_calls);
	run_for(0.05);
	ck_assert_uint_eq(atomic_load(&sock_calls), calls);
}
END_TEST

/* A descriptor that stays readable while recv fails is not spun on: the
 * watcher stops for the back-off, the failure is told once, and MADs flow
 * again when recv works. */
/* The started pump P: 5 MADs waiting while recv fails, then it works. */
static void recv_fails_then_works(void)
{
	pump_on_error(P, on_error, NULL);
	sock_send(0, 5);
	sock_err = -EIO;
	run_for(0.6);
	unsigned long calls = atomic_load(&sock_calls);
	ck_assert_uint_ge(calls, PUMP_ERR_PERMANENT);
	ck_assert_uint_lt(calls, 100);
	ck_assert_uint_eq(G.n_errs, 1);
	ck_assert_int_eq(G.errs[0], -EIO);
	ck_assert_uint_eq(G.n, 0);
	sock_err = 0;
	for (int i = 0; i < 150 && G.n < 5; i++)
		run_for(0.02);
	ck_assert_uint_eq(G.n, 5);
	ck_assert_uint_eq(G.n_errs, 2);
	ck_assert_int_eq(G.errs[1], 0);
	ck_assert(G.in_order);
}

START_TEST(pump_fd_error_backs_off)
{
	ck_assert_int_eq(pump_start_fd(&P, L, SP[0], sock_recv, NULL, 0,
				       on_deliver, NULL), 0);
	recv_fails_then_works();
}
END_TEST

START_TEST(pump_fd_rejects)
{
	ck_assert_int_eq(pump_start_fd(&P, L, -1, sock_recv, NULL, 0,
				       on_deliver, NULL), -EBADF);
	ck_assert_int_eq(pump_start_fd(&P, L, SP[0], NULL, NULL, 0,
				       on_deliver, NULL), -EINVAL);
	P = NULL;
}
END_TEST

/* ------------------------------------------------------------ waker mode */

/*
 * Waker mode: the same socket pair, but the loop does not watch it; the
 * waker thread polls it (counting its waits) and wakes the loop.  The loop
 * itself waits only briefly (its linger), never longer than
 * PUMP_LINGER_MS: the longest such wait is noted.
 */
static atomic_ulong wait_calls;
static atomic_ulong waker_waits;	/* waits on the waker thread */
static atomic_int wait_err;		/* the wait fails with this, or 0 */
static atomic_int loop_wait_max;	/* longest wait asked on the loop */

static int sock_wait(void *ctx, int timeout_ms)
{
	struct pollfd pfd = { .fd = SP[0], .events = POLLIN };

	(void)ctx;
	if (pthread_equal(pthread_self(), main_thread)) {
		if (timeout_ms > atomic_load(&loop_wait_max))
			atomic_store(&loop_wait_max, timeout_ms);
	} else {
		atomic_fetch_add(&waker_waits, 1);
	}
	atomic_fetch_add(&wait_calls, 1);
	int err = atomic_load(&wait_err);
	if (err) {
		usleep(1000);
		return err;
	}
	int rc = poll(&pfd, 1, timeout_ms);
	return rc < 0 ? -errno : rc;
}

static void waker_setup(void)
{
	sock_setup();
	atomic_store(&wait_calls, 0);
	atomic_store(&wait_err, 0);
	atomic_store(&waker_waits, 0);
	atomic_store(&loop_wait_max, 0);
}

/* Run the loop until n MADs were delivered or max_s passed. */
static void run_until(uint32_t n, double max_s)
{
	for (double t = 0; t < max_s && G.n < n; t += 0.01)
		run_for(0.01);
}

/*
 * MADs come in order, on the loop thread, at most one round (64) per loop
 * iteration.  A burst that waits while the loop is busy costs the waker
 * one wait, not one per MAD; an idle port costs the loop no receive call.
 */
START_TEST(pump_waker_delivers_on_loop)
{
	ck_assert_int_eq(pump_start_waker(&P, L, sock_wait, sock_recv, NULL, 0,
					  on_deliver, NULL), 0);
	for (uint32_t k = 0; k < 10; k++) {
		sock_send(k * 100, 100);	/* the loop is not running */
		run_until((k + 1) * 100, 5.);
		ck_assert_uint_eq(G.n, (k + 1) * 100);
	}
	ck_assert(G.in_order);
	ck_assert(!off_loop);
	ck_assert_int_le(atomic_load(&loop_wait_max), PUMP_LINGER_MS);
	/* 10 bursts of 100: a handful of waits each (one before the burst,
	 * one after each time the loop found the socket empty), far fewer
	 * than the 1,000 MADs */
	unsigned long waits = atomic_load(&wait_calls);
	ck_assert_uint_le(waits, 10 * 5 + 50);
	/* rounds: at most 64 MADs each, so at least 2 per burst */
	unsigned long calls = atomic_load(&sock_calls);
	ck_assert_uint_ge(calls, 1000 + 10);
	struct pump_stats st;
	pump_stats(P, &st);
	ck_assert_uint_eq(st.queue.queued, 1000);
	ck_assert_uint_eq(st.recv_errors, 0);
	/* idle: the waker waits, the loop does not call recv */
	calls = atomic_load(&sock_calls);
	run_for(0.2);
	ck_assert_uint_eq(atomic_load(&sock_calls), calls);
	ck_assert_uint_ge(atomic_load(&wait_calls), waits + 1);
	/* one round per iteration: a burst of 200 needs several */
	sock_send(1000, 200);
	usleep(20000);			/* the waker has woken the loop */
	uint32_t before = G.n;
	ev_run(L, EVRUN_ONCE);
	ck_assert_uint_gt(G.n, before);
	ck_assert_uint_le(G.n - before, 64);
	run_until(1200, 5.);
	ck_assert_uint_eq(G.n, 1200);
	ck_assert(G.in_order);
}
END_TEST

/* Sends TRICKLE_N MADs, one every 100 us, from its own thread. */
#define TRICKLE_N	300
static void *trickle(void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < TRICKLE_N; i++) {
		sock_send(i, 1);
		usleep(100);
	}
	return NULL;
}

static unsigned ticks;
static void on_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	ticks++;
}

/*
 * MADs that come one by one, each soon after the last: the loop waits for
 * the next itself (at most PUMP_LINGER_MS) instead of arming the waker
 * for each, and its other watchers still get their turns.
 */
START_TEST(pump_waker_linger_takes_trickle)
{
	pthread_t t;
	ev_timer tick;
	struct pump_stats st;

	ck_assert_int_eq(pump_start_waker(&P, L, sock_wait, sock_recv, NULL, 0,
					  on_deliver, NULL), 0);
	ev_timer_init(&tick, on_tick, 0.001, 0.001);
	ev_timer_start(L, &tick);
	ticks = 0;
	ck_assert_int_eq(pthread_create(&t, NULL, trickle, NULL), 0);
	run_until(TRICKLE_N, 10.);
	pthread_join(t, NULL);
	ev_timer_stop(L, &tick);
	ck_assert_uint_eq(G.n, TRICKLE_N);
	ck_assert(G.in_order);
	ck_assert(!off_loop);
	ck_assert_int_eq(atomic_load(&loop_wait_max), PUMP_LINGER_MS);
	pump_stats(P, &st);
	/* without the linger every MAD of the trickle costs a waker
	 * wake-up; with it most are taken by the loop's own wait (a loaded
	 * machine may stretch some gaps past the linger) */
	ck_assert_uint_ge(st.linger_hits, TRICKLE_N / 4);
	ck_assert_uint_le(st.linger_hits, st.lingers);
	ck_assert_uint_lt(atomic_load(&waker_waits), TRICKLE_N);
	/* the 1 ms timer ran all along: the trickle took >= 30 ms */
	ck_assert_uint_ge(ticks, 10);
}
END_TEST

/* recv failing on a port with MADs: told once, backed off (not spun on),
 * and MADs flow when it works again.  A failing wait is not spun on
 * either. */
START_TEST(pump_waker_error_backs_off)
{
	ck_assert_int_eq(pump_start_waker(&P, L, sock_wait, sock_recv, NULL, 0,
					  on_deliver, NULL), 0);
	recv_fails_then_works();
	/* the wait fails: the thread backs off (1 ms doubling) */
	atomic_store(&wait_err, -EIO);
	unsigned long waits = atomic_load(&wait_calls);
	run_for(0.5);
	ck_assert_uint_lt(atomic_load(&wait_calls) - waits, 40);
	atomic_store(&wait_err, 0);
	sock_send(5, 5);
	run_until(10, 3.);
	ck_assert_uint_eq(G.n, 10);
	ck_assert(G.in_order);
}
END_TEST

START_TEST(pump_waker_rejects)
{
	ck_assert_int_eq(pump_start_waker(&P, L, NULL, sock_recv, NULL, 0,
					  on_deliver, NULL), -EINVAL);
	ck_assert_int_eq(pump_start_waker(&P, L, sock_wait, NULL, NULL, 0,
					  on_deliver, NULL), -EINVAL);
	P = NULL;
}
END_TEST

static Suite *pump_suite(void)
{
	Suite *s = suite_create("pump");
	TCase *tc;

	tc = tcase_create("rxq");
	tcase_add_test(tc, rxq_classifies);
	tcase_add_test(tc, rxq_fifo_and_bounds);
	tcase_add_test(tc, rxq_fairness);
	tcase_add_test(tc, rxq_forged_answers_leave_room);
	tcase_add_test(tc, rxq_lmc_range_is_one_source);
	tcase_add_test(tc, rxq_tid_filter);
	tcase_add_test(tc, rxq_flood_bounded);
	suite_add_tcase(s, tc);

	tc = tcase_create("pump");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, pump_delivers_in_order);
	tcase_add_test(tc, pump_flood_while_busy);
	tcase_add_test(tc, pump_permanent_error);
	tcase_add_test(tc, pump_transient_errors);
	tcase_add_test(tc, pump_start_rejects);
	suite_add_tcase(s, tc);
	tc = tcase_create("fd mode");
	tcase_add_checked_fixture(tc, sock_setup, sock_teardown);
	tcase_add_test(tc, pump_fd_delivers_on_loop);
	tcase_add_test(tc, pump_fd_error_backs_off);
	tcase_add_test(tc, pump_fd_rejects);
	suite_add_tcase(s, tc);
	tc = tcase_create("waker mode");
	tcase_add_checked_fixture(tc, waker_setup, sock_teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, pump_waker_delivers_on_loop);
	tcase_add_test(tc, pump_waker_linger_takes_trickle);
	tcase_add_test(tc, pump_waker_error_backs_off);
	tcase_add_test(tc, pump_waker_rejects);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pump_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
