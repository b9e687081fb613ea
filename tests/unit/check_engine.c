/*
 * check_engine.c - the MAD transaction engine (mad/engine.c) on a real
 * libev loop, against the fake transport of fake_transport.h.
 *
 * Timeouts are 20-30 ms so that retries and timeouts run for real in a
 * fraction of a second.  Answers are injected either by the fake (on the
 * next loop iteration or after a delay) or directly by the test between
 * loop runs, which keeps the ordering-sensitive tests deterministic.
 *
 * The "regressions" case holds tests of defects found and fixed.
 */
#include "config.h"

#include <check.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>
#include <infiniband/mad.h>

#include "mad/engine.h"
#include "mad/wire.h"
#include "tests/unit/fake_transport.h"

/* ck_assert*() reports every passing check to the runner (a write per
 * call), which hot loops cannot afford: they use CHECK(). */
#define CHECK(expr, ...)	do { if (!(expr)) ck_abort_msg(__VA_ARGS__); } while (0)

/* ------------------------------------------------------------------ */
/* Fixture                                                              */
/* ------------------------------------------------------------------ */

static struct ev_loop *L;
static struct fake F;
static bool engine_open;

static const struct mad_engine_opts default_opts = {
	.max_wire_smps = 4, .max_wire_gmps = 4, .timeout_ms = 20, .retries = 3,
};

static void open_engine(unsigned smps, unsigned gmps, unsigned timeout_ms,
			unsigned retries)
{
	struct mad_engine_opts o = {
		.max_wire_smps = smps, .max_wire_gmps = gmps,
		.timeout_ms = timeout_ms, .retries = retries,
	};

	L = ev_loop_new(EVFLAG_AUTO);
	ck_assert_ptr_nonnull(L);
	ck_assert_int_eq(fake_init(&F, L, &o), 0);
	engine_open = true;
	ev_now_update(L);
}

static void close_engine(void)
{
	if (engine_open)
		fake_fini(&F);
	engine_open = false;
	if (L)
		ev_loop_destroy(L);
	L = NULL;
}

static const struct mad_engine_stats *stats(void)
{
	return mad_engine_stats(F.engine);
}

/* ------------------------------------------------------------------ */
/* Requests and their completions                                       */
/* ------------------------------------------------------------------ */

struct rec {
	int	 calls;
	int	 status;
	size_t	 len;
	uint8_t	 mad[MAD_SIZE];
	int	 seq;			/* completion order, from 1 */
	ev_tstamp at;
	/* what a re-submitting callback does */
	int	 resubmit;		/* requests to submit from the callback */
	struct rec *next_rec;		/* their records */
	uint32_t next_mod;
};

static int seq_counter;
static bool in_submit;

static int do_submit(const void *mad, size_t len, struct rec *r);

static void on_done(void *arg, int status, const void *mad, size_t len)
{
	struct rec *r = arg;

	ck_assert_msg(!in_submit, "callback ran inside mad_engine_submit");
	r->calls++;
	r->status = status;
	r->len = len;
	r->seq = ++seq_counter;
	r->at = ev_now(L);
	if (status == 0) {
		ck_assert_ptr_nonnull(mad);
		ck_assert_uint_le(len, MAD_SIZE);
		memcpy(r->mad, mad, len);
	} else {
		ck_assert_ptr_null(mad);
		ck_assert_uint_eq(len, 0);
	}
	for (int k = 0; k < r->resubmit; k++) {
		struct smp_dr smp;

		mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_NODE_INFO,
				 r->next_mod + (uint32_t)k, NULL, 0);
		ck_assert_int_eq(do_submit(&smp, sizeof(smp), &r->next_rec[k]), 0);
	}
}

static struct mad_addr dr_addr = { .lid = 0xffff, .qpn = 0 };
static struct mad_addr gsi_addr = { .lid = 1, .qpn = 1, .qkey = IB_DEFAULT_QP1_QKEY };

static int do_submit(const void *mad, size_t len, struct rec *r)
{
	const struct mad_hdr *h = mad;
	bool smp = h->mgmt_class == MAD_CLASS_SMI || h->mgmt_class == MAD_CLASS_SMI_DR;
	int rc;

	in_submit = true;
	rc = mad_engine_submit(F.engine, mad, len, smp ? &dr_addr : &gsi_addr,
			       on_done, r);
	in_submit = false;
	return rc;
}

/* A DR NodeInfo Get to the local port, tagged by its AttributeModifier. */
static void submit_smp(uint32_t tag, struct rec *r)
{
	struct smp_dr smp;

	mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, tag, NULL, 0);
	ck_assert_int_eq(do_submit(&smp, sizeof(smp), r), 0);
}

static void build_sa(struct sa_mad *sa, uint8_t method, uint16_t attr, uint32_t tag)
{
	memset(sa, 0, sizeof(*sa));
	sa->hdr.base_version = 1;
	sa->hdr.mgmt_class = MAD_CLASS_SA;
	sa->hdr.class_version = 2;
	sa->hdr.method = method;
	sa->hdr.attr_id = htobe16(attr);
	sa->hdr.attr_mod = htobe32(tag);
}

static void submit_sa(uint32_t tag, struct rec *r)
{
	struct sa_mad sa;

	build_sa(&sa, MAD_METHOD_GET, IB_SA_ATTR_NODERECORD, tag);
	ck_assert_int_eq(do_submit(&sa, sizeof(sa), r), 0);
}

/* Index of the first recorded send carrying `tag`, or -1. */
static long find_sent(uint32_t tag, uint8_t mgmt_class)
{
	for (size_t i = 0; i < F.n_sent; i++)
		if (fake_attr_mod(&F, i) == tag && fake_class(&F, i) == mgmt_class)
			return (long)i;
	return -1;
}

static unsigned count_sent(uint32_t tag)
{
	unsigned n = 0;

	for (size_t i = 0; i < F.n_sent; i++)
		n += fake_attr_mod(&F, i) == tag;
	return n;
}

/* ------------------------------------------------------------------ */
/* Running the loop                                                     */
/* ------------------------------------------------------------------ */

typedef bool (*pred_fn)(const void *arg);

static void guard_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
}

/* Run the loop until pred holds or max_s passes; a 2 ms guard timer
 * makes sure EVRUN_ONCE returns to re-check. */
static bool run_until(pred_fn pred, const void *arg, double max_s)
{
	ev_timer guard;
	ev_tstamp end;

	ev_now_update(L);
	end = ev_now(L) + max_s;
	ev_timer_init(&guard, guard_cb, 0.002, 0.002);
	ev_timer_start(L, &guard);
	while (!pred(arg) && ev_now(L) < end)
		ev_run(L, EVRUN_ONCE);
	ev_timer_stop(L, &guard);
	return pred(arg);
}

static bool never(const void *arg)
{
	(void)arg;
	return false;
}

static void run_for(double s)
{
	run_until(never, NULL, s);
}

static bool rec_called(const void *arg)
{
	return ((const struct rec *)arg)->calls > 0;
}

static size_t want_sent;
static bool sent_reached(const void *arg)
{
	(void)arg;
	return F.n_sent >= want_sent;
}

static bool run_until_sent(size_t n, double max_s)
{
	want_sent = n;
	return run_until(sent_reached, NULL, max_s);
}

static bool engine_idle(const void *arg)
{
	(void)arg;
	return mad_engine_pending(F.engine) == 0;
}

/* ------------------------------------------------------------------ */
/* Setup and submission                                                 */
/* ------------------------------------------------------------------ */

START_TEST(new_rejects_bad_opts)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct mad_transport tr = { .send = fake_send, .ctx = &F };
	struct mad_engine *e = NULL;
	struct mad_engine_opts o;

	o = default_opts;
	o.max_wire_smps = 0;
	ck_assert_int_eq(mad_engine_new(&e, loop, &tr, &o), -EINVAL);
	o = default_opts;
	o.max_wire_gmps = 0;
	ck_assert_int_eq(mad_engine_new(&e, loop, &tr, &o), -EINVAL);
	o = default_opts;
	o.timeout_ms = 0;
	ck_assert_int_eq(mad_engine_new(&e, loop, &tr, &o), -EINVAL);
	ck_assert_ptr_null(e);
	o = default_opts;
	o.retries = 0;			/* no retries is a valid choice */
	ck_assert_int_eq(mad_engine_new(&e, loop, &tr, &o), 0);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(mad_engine_pending(e), 0);
	ck_assert_uint_eq(mad_engine_stats(e)->sent, 0);
	mad_engine_free(e);
	mad_engine_free(NULL);
	ev_loop_destroy(loop);
}
END_TEST

START_TEST(tid_assigned_unique)
{
	enum { N = 512 };
	struct rec r[N];
	struct smp_dr smp, orig;
	uint64_t tids[N];

	memset(r, 0, sizeof(r));
	open_engine(N, 1, 1000, 0);
	for (unsigned i = 0; i < N; i++) {
		mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_PORT_INFO, i, NULL, 0);
		/* whatever the caller leaves in the TID is replaced */
		smp.hdr.tid = htobe64(0xdeadbeefcafef00dull);
		orig = smp;
		ck_assert_int_eq(do_submit(&smp, sizeof(smp), &r[i]), 0);
		ck_assert_mem_eq(&smp, &orig, sizeof(smp));	/* input untouched */
	}
	ck_assert_uint_eq(F.n_sent, N);
	for (unsigned i = 0; i < N; i++) {
		const struct smp_dr *s = (const struct smp_dr *)F.sent[i].mad;

		tids[i] = fake_tid(&F, i);
		ck_assert_uint_ne(tids[i], 0);
		/* only the low 32 bits are ours: the kernel owns the rest */
		ck_assert_uint_eq(tids[i] >> 32, 0);
		ck_assert_uint_eq(F.sent[i].len, MAD_SIZE);
		/* everything but the TID went out as submitted */
		mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_PORT_INFO, i, NULL, 0);
		smp.hdr.tid = s->hdr.tid;
		ck_assert_mem_eq(s, &smp, sizeof(smp));
		ck_assert_uint_eq(F.sent[i].addr.lid, 0xffff);
		ck_assert_int_eq(F.sent[i].timeout_ms, 1000);	/* x (retries + 1) */
		for (unsigned j = 0; j < i; j++)
			CHECK(tids[j] != tids[i], "TID 0x%" PRIx64 " used twice", tids[i]);
	}
	close_engine();
}
END_TEST

START_TEST(submit_rejects)
{
	struct rec r = { 0 };
	struct smp_dr smp;
	struct sa_mad sa;

	open_engine(4, 4, 20, 3);
	mad_build_smp_dr(&smp, MAD_METHOD_GET | MAD_METHOD_RESP, SMP_ATTR_NODE_INFO, 0, NULL, 0);
	ck_assert_int_eq(do_submit(&smp, sizeof(smp), &r), -EINVAL);	/* a response */
	mad_build_smp_dr(&smp, MAD_METHOD_TRAP_REPRESS, SMP_ATTR_NOTICE, 0, NULL, 0);
	ck_assert_int_eq(do_submit(&smp, sizeof(smp), &r), -EINVAL);
	mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0, NULL, 0);
	ck_assert_int_eq(do_submit(&smp, MAD_HDR_SIZE - 1, &r), -EINVAL);
	ck_assert_int_eq(do_submit(&smp, MAD_SIZE + 1, &r), -EINVAL);
	ck_assert_int_eq(mad_engine_submit(F.engine, &smp, sizeof(smp), &dr_addr, NULL, &r),
			 -EINVAL);
	build_sa(&sa, MAD_METHOD_GET_TABLE | MAD_METHOD_RESP, IB_SA_ATTR_NODERECORD, 0);
	ck_assert_int_eq(do_submit(&sa, sizeof(sa), &r), -EINVAL);
	ck_assert_uint_eq(F.n_sent, 0);
	ck_assert_uint_eq(mad_engine_pending(F.engine), 0);
	ck_assert_uint_eq(stats()->sent, 0);
	/* a GMP shorter than 256 bytes is fine */
	build_sa(&sa, MAD_METHOD_GET, IB_SA_ATTR_NODERECORD, 0);
	ck_assert_int_eq(do_submit(&sa, MAD_HDR_SIZE, &r), 0);
	ck_assert_uint_eq(F.n_sent, 1);
	ck_assert_uint_eq(F.sent[0].len, MAD_HDR_SIZE);
	close_engine();
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, -ECANCELED);
}
END_TEST

/* The engine copies the MAD: the caller may reuse its buffer at once,
 * even for a request that is still queued. */
START_TEST(submit_copies)
{
	struct rec r[3] = { 0 };
	struct smp_dr smp;

	open_engine(1, 1, 1000, 0);
	mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 100, NULL, 0);
	ck_assert_int_eq(do_submit(&smp, sizeof(smp), &r[0]), 0);
	smp.hdr.attr_mod = htobe32(101);
	ck_assert_int_eq(do_submit(&smp, sizeof(smp), &r[1]), 0);
	smp.hdr.attr_mod = htobe32(102);
	ck_assert_int_eq(do_submit(&smp, sizeof(smp), &r[2]), 0);
	memset(&smp, 0xee, sizeof(smp));
	ck_assert_uint_eq(F.n_sent, 1);
	fake_answer(&F, 0);
	fake_answer(&F, 1);
	ck_assert_uint_eq(F.n_sent, 3);
	ck_assert_uint_eq(fake_attr_mod(&F, 0), 100);
	ck_assert_uint_eq(fake_attr_mod(&F, 1), 101);
	ck_assert_uint_eq(fake_attr_mod(&F, 2), 102);
	ck_assert_uint_eq(F.sent[2].mad[0], 1);
	ck_assert_uint_eq(F.sent[2].mad[1], MAD_CLASS_SMI_DR);
	close_engine();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Windows                                                              */
/* ------------------------------------------------------------------ */

START_TEST(smp_window_fifo)
{
	enum { N = 10, W = 4 };
	struct rec r[N];
	/* answer the outstanding ones in a scrambled order */
	const unsigned answer_order[] = { 2, 0, 3, 1, 5, 4, 7, 6, 9, 8 };

	memset(r, 0, sizeof(r));
	open_engine(W, 8, 1000, 0);
	for (unsigned i = 0; i < N; i++)
		submit_smp(i, &r[i]);
	ck_assert_uint_eq(F.n_sent, W);
	ck_assert_uint_eq(mad_engine_pending(F.engine), N);
	for (unsigned i = 0; i < W; i++)
		ck_assert_uint_eq(fake_attr_mod(&F, i), i);

	for (unsigned k = 0; k < N; k++) {
		unsigned tag = answer_order[k];
		long idx = find_sent(tag, MAD_CLASS_SMI_DR);
		size_t before = F.n_sent;

		ck_assert_msg(idx >= 0, "request %u not on the wire when answered", tag);
		fake_answer(&F, (size_t)idx);
		ck_assert_int_eq(r[tag].calls, 1);
		ck_assert_int_eq(r[tag].status, 0);
		/* one slot freed: exactly one more goes out while any wait */
		ck_assert_uint_eq(F.n_sent, before + (before < N ? 1 : 0));
		ck_assert_uint_le(F.n_sent - (k + 1), W);
		ck_assert_uint_eq(mad_engine_pending(F.engine), N - k - 1);
	}
	/* first sends in submission order, each sent once */
	ck_assert_uint_eq(F.n_sent, N);
	for (unsigned i = 0; i < N; i++)
		ck_assert_uint_eq(fake_attr_mod(&F, i), i);
	ck_assert_uint_eq(stats()->max_outstanding, W);
	ck_assert_uint_eq(stats()->answered, N);
	ck_assert_uint_eq(stats()->resends, 0);
	close_engine();
	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(r[i].calls, 1);
}
END_TEST

START_TEST(window_of_one)
{
	struct rec r[5] = { 0 };

	open_engine(1, 1, 1000, 0);
	for (unsigned i = 0; i < 5; i++)
		submit_smp(i, &r[i]);
	for (unsigned i = 0; i < 5; i++) {
		ck_assert_uint_eq(F.n_sent, i + 1);
		ck_assert_uint_eq(fake_attr_mod(&F, i), i);
		fake_answer(&F, i);
		ck_assert_int_eq(r[i].seq, (int)i + 1);
	}
	ck_assert_uint_eq(stats()->max_outstanding, 1);
	close_engine();
}
END_TEST

START_TEST(gmp_window_separate)
{
	struct rec rs[5] = { 0 }, rg[5] = { 0 };

	open_engine(2, 3, 1000, 0);
	for (unsigned i = 0; i < 5; i++) {
		submit_smp(i, &rs[i]);
		submit_sa(100 + i, &rg[i]);
	}
	ck_assert_uint_eq(F.n_sent, 5);
	ck_assert_uint_eq(stats()->smps_sent, 2);
	ck_assert_uint_eq(stats()->sent, 5);
	ck_assert_uint_eq(stats()->max_outstanding, 5);
	ck_assert_int_ge(find_sent(0, MAD_CLASS_SMI_DR), 0);
	ck_assert_int_ge(find_sent(1, MAD_CLASS_SMI_DR), 0);
	ck_assert_int_ge(find_sent(102, MAD_CLASS_SA), 0);
	ck_assert_int_lt(find_sent(2, MAD_CLASS_SMI_DR), 0);
	ck_assert_int_lt(find_sent(103, MAD_CLASS_SA), 0);

	/* a GMP answer frees a GMP slot, not an SMP one */
	fake_answer(&F, (size_t)find_sent(101, MAD_CLASS_SA));
	ck_assert_int_eq(rg[1].calls, 1);
	ck_assert_uint_eq(F.n_sent, 6);
	ck_assert_uint_eq(fake_class(&F, 5), MAD_CLASS_SA);
	ck_assert_uint_eq(fake_attr_mod(&F, 5), 103);
	ck_assert_int_eq(F.sent[5].addr.qpn, 1);
	ck_assert_uint_eq(stats()->smps_sent, 2);

	/* and an SMP answer an SMP slot */
	fake_answer(&F, (size_t)find_sent(0, MAD_CLASS_SMI_DR));
	ck_assert_uint_eq(F.n_sent, 7);
	ck_assert_uint_eq(fake_class(&F, 6), MAD_CLASS_SMI_DR);
	ck_assert_uint_eq(fake_attr_mod(&F, 6), 2);
	ck_assert_uint_eq(stats()->smps_sent, 3);
	ck_assert_uint_eq(mad_engine_pending(F.engine), 8);
	ck_assert_uint_eq(stats()->max_outstanding, 5);
	close_engine();
}
END_TEST

/* Performance Management MADs have a window of their own: a burst of
 * them never takes the slots of GMPs (the SA's Reports) or SMPs. */
static void submit_pma(uint32_t tag, struct rec *r)
{
	uint8_t m[MAD_SIZE] = { 0 };
	struct mad_hdr *h = (struct mad_hdr *)m;

	h->base_version = 1;
	h->mgmt_class = MAD_CLASS_PERF;
	h->class_version = 1;
	h->method = MAD_METHOD_GET;
	h->attr_id = htobe16(0x0012);
	h->attr_mod = htobe32(tag);
	ck_assert_int_eq(do_submit(m, sizeof(m), r), 0);
}

START_TEST(pma_window_separate)
{
	struct rec rs[5] = { 0 }, rg[5] = { 0 }, rp[8] = { 0 };

	open_engine(2, 2, 1000, 0);
	mad_engine_set_pma_window(F.engine, 3);
	for (unsigned i = 0; i < 8; i++)
		submit_pma(200 + i, &rp[i]);
	for (unsigned i = 0; i < 5; i++) {
		submit_smp(i, &rs[i]);
		submit_sa(100 + i, &rg[i]);
	}
	/* 3 PMA, 2 SMP, 2 SA on the wire although 8 PMA came first */
	ck_assert_uint_eq(F.n_sent, 7);
	ck_assert_int_ge(find_sent(100, MAD_CLASS_SA), 0);
	ck_assert_int_ge(find_sent(101, MAD_CLASS_SA), 0);
	ck_assert_int_ge(find_sent(202, MAD_CLASS_PERF), 0);
	ck_assert_int_lt(find_sent(203, MAD_CLASS_PERF), 0);
	/* a PMA answer frees a PMA slot only */
	fake_answer(&F, (size_t)find_sent(200, MAD_CLASS_PERF));
	ck_assert_int_eq(rp[0].calls, 1);
	ck_assert_uint_eq(F.n_sent, 8);
	ck_assert_uint_eq(fake_class(&F, 7), MAD_CLASS_PERF);
	ck_assert_uint_eq(fake_attr_mod(&F, 7), 203);
	/* and an SA answer an SA slot, ahead of the PMA queue */
	fake_answer(&F, (size_t)find_sent(100, MAD_CLASS_SA));
	ck_assert_uint_eq(F.n_sent, 9);
	ck_assert_uint_eq(fake_class(&F, 8), MAD_CLASS_SA);
	/* a wider window sends more at once */
	mad_engine_set_pma_window(F.engine, 5);
	ck_assert_uint_eq(F.n_sent, 11);
	close_engine();
}
END_TEST

/* Many requests through a small window with a responder on the loop. */
START_TEST(window_throughput)
{
	enum { N = 2000 };
	struct rec *r = calloc(N, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	open_engine(4, 2, 500, 3);
	F.action = FAKE_ANSWER;
	for (unsigned i = 0; i < N; i++) {
		if (i % 3)
			submit_smp(i, &r[i]);
		else
			submit_sa(i, &r[i]);
	}
	ck_assert_uint_eq(F.n_sent, 6);
	ck_assert(run_until(engine_idle, NULL, 10.0));
	for (unsigned i = 0; i < N; i++)
		CHECK(r[i].calls == 1 && r[i].status == 0 &&
		      be32toh(((struct mad_hdr *)r[i].mad)->attr_mod) == i,
		      "request %u: %d calls, status %d", i, r[i].calls, r[i].status);
	ck_assert_uint_eq(F.n_sent, N);
	ck_assert_uint_eq(stats()->answered, N);
	ck_assert_uint_eq(stats()->resends, 0);
	ck_assert_uint_eq(stats()->max_outstanding, 6);
	/* FIFO per kind */
	for (size_t i = 1, last_smp = 0, last_gmp = 0; i < F.n_sent; i++) {
		uint32_t tag = fake_attr_mod(&F, i);

		if (fake_class(&F, i) == MAD_CLASS_SA) {
			CHECK(tag > last_gmp, "GMP %u sent after GMP %zu", tag, last_gmp);
			last_gmp = tag;
		} else {
			CHECK(tag > last_smp, "SMP %u sent after SMP %zu", tag, last_smp);
			last_smp = tag;
		}
	}
	close_engine();
	free(r);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Matching responses                                                   */
/* ------------------------------------------------------------------ */

START_TEST(match_right_tid)
{
	struct rec r[3] = { 0 };
	uint8_t resp[MAD_SIZE];
	size_t len;

	open_engine(4, 4, 1000, 0);
	for (unsigned i = 0; i < 3; i++)
		submit_smp(i, &r[i]);
	len = fake_make_response(F.sent[1].mad, F.sent[1].len, 0, resp);
	resp[IB_SMP_DATA_OFFS] = 0x5a;		/* some payload */
	fake_deliver(&F, resp, len, 0);
	ck_assert_int_eq(r[0].calls, 0);
	ck_assert_int_eq(r[1].calls, 1);
	ck_assert_int_eq(r[2].calls, 0);
	ck_assert_int_eq(r[1].status, 0);
	ck_assert_uint_eq(r[1].len, MAD_SIZE);
	ck_assert_mem_eq(r[1].mad, resp, MAD_SIZE);	/* the response itself */
	ck_assert_uint_eq(mad_engine_pending(F.engine), 2);
	fake_answer(&F, 2);
	fake_answer(&F, 0);
	ck_assert_int_eq(r[2].seq, 2);
	ck_assert_int_eq(r[0].seq, 3);
	ck_assert_uint_eq(stats()->answered, 3);
	ck_assert_uint_eq(stats()->dropped, 0);
	ck_assert_uint_eq(stats()->unmatched, 0);
	close_engine();
}
END_TEST

START_TEST(reject_mismatched_responses)
{
	struct rec r = { 0 };
	uint8_t resp[MAD_SIZE], bad[MAD_SIZE];
	struct mad_hdr *h = (struct mad_hdr *)bad;

	open_engine(4, 4, 1000, 0);
	submit_smp(7, &r);
	fake_make_response(F.sent[0].mad, MAD_SIZE, 0, resp);

	memcpy(bad, resp, MAD_SIZE);			/* wrong attribute */
	h->attr_id = htobe16(SMP_ATTR_PORT_INFO);
	fake_deliver(&F, bad, MAD_SIZE, 0);
	memcpy(bad, resp, MAD_SIZE);			/* wrong class (LID SMP) */
	h->mgmt_class = MAD_CLASS_SMI;
	fake_deliver(&F, bad, MAD_SIZE, 0);
	memcpy(bad, resp, MAD_SIZE);			/* SetResp is no answer to Get */
	h->method = MAD_METHOD_SET | MAD_METHOD_RESP;
	fake_deliver(&F, bad, MAD_SIZE, 0);
	memcpy(bad, resp, MAD_SIZE);			/* GetTableResp neither */
	h->method = MAD_METHOD_GET_TABLE | MAD_METHOD_RESP;
	fake_deliver(&F, bad, MAD_SIZE, 0);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_uint_eq(stats()->dropped, 4);
	ck_assert_uint_eq(stats()->answered, 0);
	ck_assert_uint_eq(stats()->unmatched, 0);
	ck_assert_uint_eq(mad_engine_pending(F.engine), 1);

	fake_deliver(&F, resp, MAD_SIZE, 0);		/* the right one */
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(stats()->answered, 1);
	close_engine();
}
END_TEST

START_TEST(unknown_tid_unmatched)
{
	struct rec r = { 0 };
	uint8_t resp[MAD_SIZE];
	struct mad_hdr *h = (struct mad_hdr *)resp;
	uint64_t tid;

	open_engine(4, 4, 1000, 0);
	submit_smp(1, &r);
	tid = fake_tid(&F, 0);
	fake_make_response(F.sent[0].mad, MAD_SIZE, 0, resp);
	h->tid = htobe64(tid + 1000);
	fake_deliver(&F, resp, MAD_SIZE, 0);
	ck_assert_uint_eq(stats()->unmatched, 1);
	/* a kernel timeout report for a TID we do not have */
	memcpy(resp, F.sent[0].mad, MAD_SIZE);
	((struct mad_hdr *)resp)->tid = htobe64(tid + 1001);
	fake_deliver(&F, resp, MAD_SIZE, ETIMEDOUT);
	ck_assert_uint_eq(stats()->unmatched, 2);
	ck_assert_uint_eq(F.n_sent, 1);
	ck_assert_int_eq(r.calls, 0);

	fake_answer(&F, 0);
	ck_assert_int_eq(r.calls, 1);
	/* the same answer again (a duplicate): no second callback */
	fake_answer(&F, 0);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_uint_eq(stats()->unmatched, 3);
	ck_assert_uint_eq(stats()->answered, 1);
	ck_assert_uint_eq(stats()->dropped, 0);
	close_engine();
}
END_TEST

/* Queued requests have TIDs but are not on the wire: an answer carrying
 * one of them cannot be real and must not complete anything. */
START_TEST(queued_tid_not_matched)
{
	struct rec r[3] = { 0 };
	uint8_t resp[MAD_SIZE];
	uint64_t tid;

	open_engine(1, 1, 1000, 0);
	for (unsigned i = 0; i < 3; i++)
		submit_smp(i, &r[i]);
	tid = fake_tid(&F, 0);
	for (uint64_t d = 1; d <= 16; d++) {
		fake_make_response(F.sent[0].mad, MAD_SIZE, 0, resp);
		((struct mad_hdr *)resp)->tid = htobe64(tid + d);
		fake_deliver(&F, resp, MAD_SIZE, 0);
	}
	ck_assert_int_eq(r[0].calls + r[1].calls + r[2].calls, 0);
	ck_assert_uint_eq(stats()->unmatched, 16);
	ck_assert_uint_eq(F.n_sent, 1);
	close_engine();
}
END_TEST

START_TEST(set_answered_by_getresp)
{
	struct rec r[2] = { 0 };
	struct smp_dr smp;
	uint8_t resp[MAD_SIZE];

	open_engine(4, 4, 1000, 0);
	mad_build_smp_dr(&smp, MAD_METHOD_SET, SMP_ATTR_PORT_INFO, 3, NULL, 0);
	ck_assert_int_eq(do_submit(&smp, sizeof(smp), &r[0]), 0);
	ck_assert_int_eq(do_submit(&smp, sizeof(smp), &r[1]), 0);

	/* 13.4.5: the response to a Set is a GetResp (0x81) */
	fake_make_response(F.sent[0].mad, MAD_SIZE, 0, resp);
	ck_assert_uint_eq(resp[3], 0x81);
	fake_deliver(&F, resp, MAD_SIZE, 0);
	ck_assert_int_eq(r[0].calls, 1);
	ck_assert_int_eq(r[0].status, 0);

	/* 0x82 does not exist: not an answer */
	fake_make_response(F.sent[1].mad, MAD_SIZE, 0, resp);
	resp[3] = MAD_METHOD_SET | MAD_METHOD_RESP;
	fake_deliver(&F, resp, MAD_SIZE, 0);
	ck_assert_int_eq(r[1].calls, 0);
	ck_assert_uint_eq(stats()->dropped, 1);
	close_engine();
	ck_assert_int_eq(r[1].status, -ECANCELED);
}
END_TEST

START_TEST(sa_methods_matched)
{
	struct rec r[3] = { 0 };
	struct sa_mad sa;
	uint8_t resp[MAD_SIZE];

	open_engine(4, 4, 1000, 0);
	build_sa(&sa, MAD_METHOD_GET_TABLE, IB_SA_ATTR_PATHRECORD, 0);
	ck_assert_int_eq(do_submit(&sa, sizeof(sa), &r[0]), 0);
	build_sa(&sa, MAD_METHOD_GET, IB_SA_ATTR_PATHRECORD, 1);
	ck_assert_int_eq(do_submit(&sa, sizeof(sa), &r[1]), 0);
	build_sa(&sa, MAD_METHOD_DELETE, IB_SA_ATTR_MCRECORD, 2);
	ck_assert_int_eq(do_submit(&sa, sizeof(sa), &r[2]), 0);

	fake_answer(&F, 0);				/* 0x92 */
	ck_assert_int_eq(r[0].calls, 1);
	fake_make_response(F.sent[1].mad, MAD_SIZE, 0, resp);
	resp[3] = MAD_METHOD_GET_TABLE | MAD_METHOD_RESP;	/* GetTableResp to a Get */
	fake_deliver(&F, resp, MAD_SIZE, 0);
	ck_assert_int_eq(r[1].calls, 0);
	ck_assert_uint_eq(stats()->dropped, 1);
	fake_answer(&F, 1);				/* 0x81 */
	ck_assert_int_eq(r[1].calls, 1);
	fake_answer(&F, 2);				/* 0x95 */
	ck_assert_int_eq(r[2].calls, 1);
	ck_assert_uint_eq(((struct mad_hdr *)r[2].mad)->method, 0x95);
	ck_assert_uint_eq(stats()->smps_sent, 0);
	close_engine();
}
END_TEST

/* The kernel (and umad2sim) write the agent number into the high 32 bits
 * of the TID; matching ignores them. */
START_TEST(high_tid_bits_ignored)
{
	struct rec r[2] = { 0 };

	open_engine(4, 4, 1000, 0);
	submit_smp(0, &r[0]);
	submit_sa(1, &r[1]);
	F.tid_high = 0x8000abcd;
	fake_answer(&F, 0);
	F.tid_high = 0x00000001;
	fake_answer(&F, 1);
	ck_assert_int_eq(r[0].calls, 1);
	ck_assert_int_eq(r[1].calls, 1);
	ck_assert_uint_eq(be64toh(((struct mad_hdr *)r[0].mad)->tid) >> 32, 0x8000abcd);
	ck_assert_uint_eq(stats()->unmatched, 0);
	close_engine();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Timeouts and retries                                                 */
/* ------------------------------------------------------------------ */

START_TEST(timeout_after_retries)
{
	struct rec r = { 0 };
	const double T = 0.020, eps = 0.002;
	ev_tstamp t0;

	open_engine(4, 4, 20, 3);
	t0 = ev_now(L);
	submit_smp(42, &r);
	ck_assert(run_until(rec_called, &r, 2.0));
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, -ETIMEDOUT);
	/* 1 + retries sends, all the same bytes and TID, a timeout apart */
	ck_assert_uint_eq(F.n_sent, 4);
	for (size_t i = 1; i < F.n_sent; i++) {
		ck_assert_mem_eq(F.sent[i].mad, F.sent[0].mad, MAD_SIZE);
		ck_assert_msg(F.sent[i].at - F.sent[i - 1].at >= T - eps,
			      "resend %zu only %.1f ms after the previous send", i,
			      (F.sent[i].at - F.sent[i - 1].at) * 1e3);
	}
	ck_assert_msg(r.at - t0 >= 4 * T - eps, "failed after %.1f ms", (r.at - t0) * 1e3);
	ck_assert_uint_eq(stats()->sent, 4);
	ck_assert_uint_eq(stats()->smps_sent, 4);
	ck_assert_uint_eq(stats()->resends, 3);
	ck_assert_uint_eq(stats()->timeouts, 1);
	ck_assert_uint_eq(stats()->answered, 0);
	ck_assert_uint_eq(mad_engine_pending(F.engine), 0);
	/* nothing more happens */
	run_for(0.05);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_uint_eq(F.n_sent, 4);
	/* an answer now is too late */
	fake_answer(&F, 0);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_uint_eq(stats()->unmatched, 1);
	close_engine();
	ck_assert_int_eq(r.calls, 1);
}
END_TEST

START_TEST(timeout_no_retries)
{
	struct rec r = { 0 };

	open_engine(4, 4, 20, 0);
	submit_smp(1, &r);
	ck_assert(run_until(rec_called, &r, 2.0));
	ck_assert_int_eq(r.status, -ETIMEDOUT);
	ck_assert_uint_eq(F.n_sent, 1);
	ck_assert_uint_eq(stats()->resends, 0);
	ck_assert_uint_eq(stats()->timeouts, 1);
	close_engine();
}
END_TEST

/* An answer to the first attempt that arrives after the resend. */
START_TEST(late_answer_completes)
{
	struct rec r = { 0 };

	open_engine(4, 4, 30, 3);
	submit_smp(5, &r);
	ck_assert(run_until_sent(2, 2.0));
	ck_assert_int_eq(r.calls, 0);
	fake_answer(&F, 0);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, 0);
	run_for(0.08);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_uint_eq(F.n_sent, 2);
	ck_assert_uint_eq(stats()->answered, 1);
	ck_assert_uint_eq(stats()->resends, 1);
	ck_assert_uint_eq(stats()->timeouts, 0);
	ck_assert_uint_eq(mad_engine_pending(F.engine), 0);
	close_engine();
}
END_TEST

/* A late answer delivered by the fake after 1.5 timeouts. */
START_TEST(delayed_answer_completes)
{
	struct rec r = { 0 };

	open_engine(4, 4, 20, 3);
	F.action = FAKE_ANSWER_AFTER;
	F.delay = 0.030;
	submit_smp(5, &r);
	ck_assert(run_until(rec_called, &r, 2.0));
	ck_assert_int_eq(r.status, 0);
	run_for(0.05);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_uint_eq(stats()->timeouts, 0);
	ck_assert_uint_ge(F.n_sent, 2);
	close_engine();
}
END_TEST

/*
 * A send after a long computation in the same callback (the loop's time
 * 100 ms stale): its deadline counts from the clock, not from the loop's
 * time, so an answer 5 ms later completes it with no re-send.  Before:
 * the deadline was already past and the SMP went out twice (a heavy
 * sweep re-sent a window of 32 Sets after routing 4,608 hosts).
 */
START_TEST(deadline_from_clock)
{
	struct rec r = { 0 };

	open_engine(4, 4, 20, 3);
	F.action = FAKE_DROP;		/* the test answers by hand */
	usleep(100000);		/* no ev_now_update(): the loop's time is old */
	submit_smp(7, &r);
	run_for(0.005);
	ck_assert_uint_eq(F.n_sent, 1);
	fake_answer(&F, 0);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(stats()->resends, 0);
	close_engine();
}
END_TEST

/* status != 0 from the transport: the kernel gave up on an attempt. */
START_TEST(transport_status_resends)
{
	struct rec r = { 0 };

	open_engine(4, 4, 100, 3);
	submit_smp(9, &r);
	ck_assert_uint_eq(F.n_sent, 1);
	for (unsigned k = 1; k <= 3; k++) {
		fake_deliver(&F, F.sent[0].mad, MAD_SIZE, ETIMEDOUT);
		/* resent at once, not at the deadline */
		ck_assert_uint_eq(F.n_sent, 1 + k);
		ck_assert_mem_eq(F.sent[k].mad, F.sent[0].mad, MAD_SIZE);
		ck_assert_uint_eq(stats()->resends, k);
	}
	/* budget spent: the report does not resend again */
	fake_deliver(&F, F.sent[0].mad, MAD_SIZE, ETIMEDOUT);
	ck_assert_uint_eq(F.n_sent, 4);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_uint_eq(stats()->dropped, 0);
	ck_assert_uint_eq(stats()->unsolicited, 0);
	/* it fails once, at its deadline */
	ck_assert(run_until(rec_called, &r, 3.0));
	ck_assert_int_eq(r.status, -ETIMEDOUT);
	run_for(0.05);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_uint_eq(F.n_sent, 4);
	ck_assert_uint_eq(stats()->timeouts, 1);
	close_engine();
}
END_TEST

/* The same, with the fake reporting each attempt lost after 2 ms: all
 * attempts go out long before the first 100 ms deadline. */
START_TEST(kernel_timeout_early_resend)
{
	struct rec r = { 0 };

	open_engine(4, 4, 100, 3);
	F.action = FAKE_KERNEL_TIMEOUT;
	F.delay = 0.002;
	submit_smp(9, &r);
	ck_assert(run_until_sent(4, 1.0));
	ck_assert_msg(F.sent[3].at - F.sent[0].at < 0.1,
		      "4 attempts took %.1f ms", (F.sent[3].at - F.sent[0].at) * 1e3);
	ck_assert_int_eq(r.calls, 0);
	ck_assert(run_until(rec_called, &r, 1.0));
	ck_assert_int_eq(r.status, -ETIMEDOUT);
	ck_assert_uint_eq(F.n_sent, 4);
	ck_assert_uint_eq(stats()->resends, 3);
	ck_assert_uint_eq(stats()->timeouts, 1);
	close_engine();
}
END_TEST

/* A failed send() is a lost attempt: retried at the deadline. */
START_TEST(send_error_retried)
{
	struct rec r = { 0 };

	open_engine(4, 4, 20, 2);
	F.send_rc = -EIO;
	submit_smp(3, &r);
	ck_assert(run_until(rec_called, &r, 2.0));
	ck_assert_int_eq(r.status, -ETIMEDOUT);
	ck_assert_uint_eq(F.n_sent, 3);
	ck_assert_uint_eq(stats()->timeouts, 1);
	close_engine();
}
END_TEST

/* A request that fails for good frees its slot for the next one. */
START_TEST(timeouts_release_window)
{
	struct rec r[3] = { 0 };

	open_engine(1, 1, 20, 1);
	for (unsigned i = 0; i < 3; i++)
		submit_smp(i, &r[i]);
	ck_assert(run_until(rec_called, &r[2], 3.0));
	ck_assert_uint_eq(F.n_sent, 6);
	for (unsigned i = 0; i < 6; i++)
		ck_assert_uint_eq(fake_attr_mod(&F, i), i / 2);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_int_eq(r[i].calls, 1);
		ck_assert_int_eq(r[i].status, -ETIMEDOUT);
		ck_assert_int_eq(r[i].seq, (int)i + 1);
	}
	ck_assert_uint_eq(stats()->timeouts, 3);
	ck_assert_uint_eq(stats()->max_outstanding, 1);
	close_engine();
}
END_TEST

/* Requests sent at different times keep their own deadlines. */
START_TEST(interleaved_deadlines)
{
	struct rec a = { 0 }, b = { 0 };
	/* Long enough that a loaded machine (CI, other tests) cannot stall
	 * the test past a's deadline before b is submitted. */
	const double T = 0.200, eps = 0.002;

	open_engine(4, 4, 200, 1);
	submit_smp(1, &a);
	run_for(0.050);
	ev_now_update(L);
	submit_smp(2, &b);
	ck_assert(run_until(rec_called, &b, 2.0));
	ck_assert_int_eq(a.calls, 1);
	ck_assert_int_eq(a.status, -ETIMEDOUT);
	ck_assert_int_eq(b.status, -ETIMEDOUT);
	ck_assert_int_eq(a.seq, 1);
	ck_assert_uint_eq(F.n_sent, 4);
	/* a, b, a again, b again */
	ck_assert_uint_eq(fake_attr_mod(&F, 0), 1);
	ck_assert_uint_eq(fake_attr_mod(&F, 1), 2);
	ck_assert_uint_eq(fake_attr_mod(&F, 2), 1);
	ck_assert_uint_eq(fake_attr_mod(&F, 3), 2);
	ck_assert(F.sent[2].at - F.sent[0].at >= T - eps);
	ck_assert(F.sent[3].at - F.sent[1].at >= T - eps);
	ck_assert(a.at - F.sent[0].at >= 2 * T - eps);
	ck_assert(b.at - F.sent[1].at >= 2 * T - eps);
	close_engine();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Callbacks that submit                                                */
/* ------------------------------------------------------------------ */

START_TEST(submit_from_answer_callback)
{
	enum { N = 200 };
	struct rec *r = calloc(N, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	open_engine(2, 2, 500, 3);
	F.action = FAKE_ANSWER;
	/* each completion submits the next one in the chain */
	for (unsigned i = 0; i + 1 < N; i++) {
		r[i].resubmit = 1;
		r[i].next_rec = &r[i + 1];
		r[i].next_mod = i + 1;
	}
	submit_smp(0, &r[0]);
	ck_assert(run_until(rec_called, &r[N - 1], 10.0));
	for (unsigned i = 0; i < N; i++)
		CHECK(r[i].calls == 1 && r[i].status == 0 && r[i].seq == (int)i + 1,
		      "chain link %u: %d calls, status %d, completed %d-th", i, r[i].calls,
		      r[i].status, r[i].seq);
	ck_assert_uint_eq(F.n_sent, N);
	ck_assert_uint_eq(mad_engine_pending(F.engine), 0);
	ck_assert_uint_eq(stats()->max_outstanding, 1);
	close_engine();
	free(r);
}
END_TEST

/* A callback that fans out past the window. */
START_TEST(fan_out_from_callback)
{
	struct rec root = { 0 }, kids[10] = { 0 };

	open_engine(3, 3, 1000, 0);
	root.resubmit = 10;
	root.next_rec = kids;
	root.next_mod = 100;
	submit_smp(1, &root);
	fake_answer(&F, 0);
	ck_assert_int_eq(root.calls, 1);
	ck_assert_uint_eq(F.n_sent, 1 + 3);
	ck_assert_uint_eq(mad_engine_pending(F.engine), 10);
	for (size_t i = 1; i <= 10; i++) {
		fake_answer(&F, i);
		ck_assert_int_eq(kids[i - 1].calls, 1);
	}
	ck_assert_uint_eq(mad_engine_pending(F.engine), 0);
	close_engine();
}
END_TEST

static enum fake_action drop_tag_1000(struct fake *fk, const struct fake_sent *s, void *arg)
{
	(void)fk;
	(void)arg;
	return be32toh(((const struct mad_hdr *)s->mad)->attr_mod) == 1000 ?
	       FAKE_DROP : FAKE_ANSWER;
}

START_TEST(submit_from_timeout_callback)
{
	struct rec a = { 0 }, kids[3] = { 0 }, other = { 0 };

	open_engine(1, 1, 20, 1);
	F.policy = drop_tag_1000;
	a.resubmit = 3;
	a.next_rec = kids;
	a.next_mod = 1;
	submit_smp(1000, &a);
	submit_smp(7, &other);			/* queued behind a */
	ck_assert(run_until(rec_called, &kids[2], 2.0));
	ck_assert_int_eq(a.calls, 1);
	ck_assert_int_eq(a.status, -ETIMEDOUT);
	ck_assert_int_eq(other.calls, 1);
	ck_assert_int_eq(other.status, 0);
	for (unsigned i = 0; i < 3; i++) {
		ck_assert_int_eq(kids[i].calls, 1);
		ck_assert_int_eq(kids[i].status, 0);
	}
	/* FIFO: the request queued before the timeout goes first */
	ck_assert_int_lt(other.seq, kids[0].seq);
	ck_assert_uint_eq(count_sent(1000), 2);
	ck_assert_uint_eq(mad_engine_pending(F.engine), 0);
	close_engine();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Tear-down                                                            */
/* ------------------------------------------------------------------ */

START_TEST(free_cancels_everything)
{
	enum { NS = 6, NG = 3 };
	struct rec rs[NS] = { 0 }, rg[NG] = { 0 };

	open_engine(2, 2, 20, 3);
	for (unsigned i = 0; i < NS; i++)
		submit_smp(i, &rs[i]);
	for (unsigned i = 0; i < NG; i++)
		submit_sa(100 + i, &rg[i]);
	fake_answer(&F, 0);			/* rs[0] done */
	ck_assert(run_until_sent(8, 1.0));	/* some resends on the wire */
	ck_assert_uint_eq(mad_engine_pending(F.engine), NS + NG - 1);
	fake_fini(&F);
	engine_open = false;
	ck_assert_int_eq(rs[0].calls, 1);
	ck_assert_int_eq(rs[0].status, 0);
	for (unsigned i = 1; i < NS; i++) {
		ck_assert_int_eq(rs[i].calls, 1);
		ck_assert_int_eq(rs[i].status, -ECANCELED);
	}
	for (unsigned i = 0; i < NG; i++) {
		ck_assert_int_eq(rg[i].calls, 1);
		ck_assert_int_eq(rg[i].status, -ECANCELED);
	}
	/* the loop holds nothing of the engine any more */
	run_for(0.05);
	for (unsigned i = 0; i < NS; i++)
		ck_assert_int_eq(rs[i].calls, 1);
	ck_assert_int_eq(ev_pending_count(L), 0);
	close_engine();
}
END_TEST

START_TEST(free_idle_engine)
{
	open_engine(4, 4, 20, 3);
	fake_fini(&F);
	engine_open = false;
	run_for(0.03);
	close_engine();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Unsolicited MADs                                                     */
/* ------------------------------------------------------------------ */

struct unsol_rec {
	int calls;
	uint8_t mad[MAD_SIZE];
	size_t len;
	struct mad_addr from;
};

static void on_unsol(void *arg, const void *mad, size_t len, const struct mad_addr *from)
{
	struct unsol_rec *u = arg;

	u->calls++;
	memcpy(u->mad, mad, len);
	u->len = len;
	u->from = *from;
}

static void deliver_from(const void *mad, size_t len, uint16_t lid, uint32_t qpn)
{
	struct mad_addr from = { .lid = lid, .qpn = qpn, .qkey = 0, .sl = 3 };

	mad_engine_recv(F.engine, mad, len, &from, 0);
}

START_TEST(unsolicited_dispatch)
{
	struct unsol_rec trap = { 0 }, sa_any = { 0 }, sminfo = { 0 };
	struct smp_lid smp;
	struct smp_dr dr;
	struct sa_mad sa;

	open_engine(4, 4, 1000, 0);
	ck_assert_int_eq(mad_engine_on_unsolicited(F.engine, MAD_CLASS_SMI, MAD_METHOD_TRAP,
						   SMP_ATTR_NOTICE, on_unsol, &trap), 0);
	ck_assert_int_eq(mad_engine_on_unsolicited(F.engine, MAD_CLASS_SA, MAD_METHOD_GET,
						   0xffff, on_unsol, &sa_any), 0);
	ck_assert_int_eq(mad_engine_on_unsolicited(F.engine, MAD_CLASS_SMI_DR, MAD_METHOD_GET,
						   SMP_ATTR_SM_INFO, on_unsol, &sminfo), 0);

	/* a trap from LID 0x12 */
	mad_build_smp_lid(&smp, MAD_METHOD_TRAP, SMP_ATTR_NOTICE, 0);
	smp.hdr.tid = htobe64(0x77);
	smp.data[0] = 0x81;
	deliver_from(&smp, sizeof(smp), 0x12, 0);
	ck_assert_int_eq(trap.calls, 1);
	ck_assert_mem_eq(trap.mad, &smp, sizeof(smp));
	ck_assert_uint_eq(trap.len, sizeof(smp));
	ck_assert_uint_eq(trap.from.lid, 0x12);
	ck_assert_uint_eq(trap.from.sl, 3);

	/* any SA Get */
	build_sa(&sa, MAD_METHOD_GET, IB_SA_ATTR_PATHRECORD, 0);
	deliver_from(&sa, sizeof(sa), 0x20, 1);
	build_sa(&sa, MAD_METHOD_GET, IB_SA_ATTR_NODERECORD, 0);
	deliver_from(&sa, sizeof(sa), 0x21, 1);
	ck_assert_int_eq(sa_any.calls, 2);
	ck_assert_uint_eq(sa_any.from.lid, 0x21);
	ck_assert_uint_eq(sa_any.from.qpn, 1);

	/* SMInfo Get from another SM, directed route */
	mad_build_smp_dr(&dr, MAD_METHOD_GET, SMP_ATTR_SM_INFO, 0, NULL, 0);
	deliver_from(&dr, sizeof(dr), 0xffff, 0);
	ck_assert_int_eq(sminfo.calls, 1);
	ck_assert_uint_eq(stats()->unsolicited, 4);
	ck_assert_uint_eq(stats()->dropped, 0);

	/* no handler: wrong method, wrong attribute, wrong class */
	build_sa(&sa, MAD_METHOD_SET, IB_SA_ATTR_NODERECORD, 0);
	deliver_from(&sa, sizeof(sa), 0x20, 1);
	mad_build_smp_lid(&smp, MAD_METHOD_TRAP, SMP_ATTR_NODE_INFO, 0);
	deliver_from(&smp, sizeof(smp), 0x12, 0);
	mad_build_smp_dr(&dr, MAD_METHOD_TRAP, SMP_ATTR_NOTICE, 0, NULL, 0);
	deliver_from(&dr, sizeof(dr), 0xffff, 0);
	mad_build_smp_dr(&dr, MAD_METHOD_SET, SMP_ATTR_SM_INFO, 0, NULL, 0);
	deliver_from(&dr, sizeof(dr), 0xffff, 0);
	ck_assert_int_eq(trap.calls + sa_any.calls + sminfo.calls, 4);
	ck_assert_uint_eq(stats()->unsolicited, 4);
	ck_assert_uint_eq(stats()->dropped, 4);

	/* responses never reach the handlers */
	build_sa(&sa, MAD_METHOD_GET | MAD_METHOD_RESP, IB_SA_ATTR_NODERECORD, 0);
	deliver_from(&sa, sizeof(sa), 0x20, 1);
	ck_assert_int_eq(sa_any.calls, 2);
	ck_assert_uint_eq(stats()->unmatched, 1);
	ck_assert_uint_eq(F.n_sent, 0);
	close_engine();
}
END_TEST

/* Overlapping handlers (exact and wildcard): each MAD reaches one. */
START_TEST(unsolicited_one_handler)
{
	struct unsol_rec exact = { 0 }, any = { 0 };
	struct smp_lid smp;

	open_engine(4, 4, 1000, 0);
	ck_assert_int_eq(mad_engine_on_unsolicited(F.engine, MAD_CLASS_SMI, MAD_METHOD_TRAP,
						   SMP_ATTR_NOTICE, on_unsol, &exact), 0);
	ck_assert_int_eq(mad_engine_on_unsolicited(F.engine, MAD_CLASS_SMI, MAD_METHOD_TRAP,
						   0xffff, on_unsol, &any), 0);
	mad_build_smp_lid(&smp, MAD_METHOD_TRAP, SMP_ATTR_NOTICE, 0);
	deliver_from(&smp, sizeof(smp), 5, 0);
	ck_assert_int_eq(exact.calls + any.calls, 1);
	mad_build_smp_lid(&smp, MAD_METHOD_TRAP, 0x1234, 0);
	deliver_from(&smp, sizeof(smp), 5, 0);
	ck_assert_int_eq(exact.calls + any.calls, 2);
	ck_assert_int_ge(any.calls, 1);
	ck_assert_uint_eq(stats()->unsolicited, 2);
	close_engine();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Validation                                                           */
/* ------------------------------------------------------------------ */

START_TEST(validate_cases)
{
	uint8_t m[MAD_SIZE + 8];
	struct smp_dr *dr = (struct smp_dr *)m;
	struct mad_hdr *h = (struct mad_hdr *)m;

	/* lengths */
	ck_assert_int_eq(mad_validate(NULL, MAD_SIZE), -EBADMSG);
	mad_build_smp_dr(dr, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0, NULL, 0);
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), 0);
	ck_assert_int_eq(mad_validate(m, 0), -EBADMSG);
	ck_assert_int_eq(mad_validate(m, MAD_HDR_SIZE - 1), -EBADMSG);
	ck_assert_int_eq(mad_validate(m, MAD_SIZE + 1), -EBADMSG);
	/* an SMP is always 256 bytes */
	ck_assert_int_eq(mad_validate(m, MAD_SIZE - 1), -EPROTO);
	ck_assert_int_eq(mad_validate(m, MAD_HDR_SIZE), -EPROTO);

	/* base version */
	h->base_version = 2;
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), -EPROTO);
	h->base_version = 0;
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), -EPROTO);
	h->base_version = 1;

	/* SMP class version 1 */
	for (unsigned cls = 0; cls < 2; cls++) {
		h->mgmt_class = cls ? MAD_CLASS_SMI : MAD_CLASS_SMI_DR;
		h->class_version = 0;
		ck_assert_int_eq(mad_validate(m, MAD_SIZE), -EPROTO);
		h->class_version = 2;
		ck_assert_int_eq(mad_validate(m, MAD_SIZE), -EPROTO);
		h->class_version = 1;
		ck_assert_int_eq(mad_validate(m, MAD_SIZE), 0);
	}

	/* DR hop count <= 63, hop pointer <= count + 1 */
	h->mgmt_class = MAD_CLASS_SMI_DR;
	smp_dr_set_hops(dr, 0, 63);
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), 0);
	smp_dr_set_hops(dr, 64, 63);
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), 0);
	smp_dr_set_hops(dr, 0, 64);
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), -EPROTO);
	smp_dr_set_hops(dr, 0, 255);
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), -EPROTO);
	smp_dr_set_hops(dr, 65, 63);
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), -EPROTO);
	smp_dr_set_hops(dr, 3, 2);
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), 0);
	smp_dr_set_hops(dr, 4, 2);
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), -EPROTO);
	smp_dr_set_hops(dr, 255, 0);
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), -EPROTO);
	smp_dr_set_hops(dr, 1, 0);
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), 0);
	/* the hop fields mean nothing in a LID-routed SMP */
	h->mgmt_class = MAD_CLASS_SMI;
	smp_dr_set_hops(dr, 255, 255);
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), 0);

	/* SA class version 2; SA MADs may be short */
	memset(m, 0, sizeof(m));
	h->base_version = 1;
	h->mgmt_class = MAD_CLASS_SA;
	h->class_version = 2;
	h->method = MAD_METHOD_GET;
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), 0);
	ck_assert_int_eq(mad_validate(m, IB_SA_DATA_OFFS), 0);
	h->class_version = 1;
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), -EPROTO);
	h->class_version = 3;
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), -EPROTO);

	/* other classes: header checks only */
	h->mgmt_class = MAD_CLASS_PERF;
	h->class_version = 1;
	ck_assert_int_eq(mad_validate(m, MAD_HDR_SIZE), 0);
	h->base_version = 3;
	ck_assert_int_eq(mad_validate(m, MAD_SIZE), -EPROTO);
}
END_TEST

/* What fails validation is counted and reaches nobody. */
START_TEST(recv_drops_invalid)
{
	struct rec r = { 0 };
	struct unsol_rec any = { 0 };
	uint8_t resp[MAD_SIZE];

	open_engine(4, 4, 1000, 0);
	ck_assert_int_eq(mad_engine_on_unsolicited(F.engine, MAD_CLASS_SMI_DR, MAD_METHOD_GET,
						   0xffff, on_unsol, &any), 0);
	submit_smp(1, &r);
	fake_make_response(F.sent[0].mad, MAD_SIZE, 0, resp);

	fake_deliver(&F, resp, MAD_SIZE - 1, 0);		/* short SMP */
	fake_deliver(&F, resp, 10, 0);				/* not even a header */
	resp[0] = 2;						/* base version */
	fake_deliver(&F, resp, MAD_SIZE, 0);
	resp[0] = 1;
	resp[2] = 2;						/* class version */
	fake_deliver(&F, resp, MAD_SIZE, 0);
	resp[2] = 1;
	smp_dr_set_hops((struct smp_dr *)resp, 0, 64);		/* hop count */
	fake_deliver(&F, resp, MAD_SIZE, 0);
	smp_dr_set_hops((struct smp_dr *)resp, 5, 3);		/* hop pointer */
	fake_deliver(&F, resp, MAD_SIZE, 0);
	/* an invalid unsolicited Get is not dispatched either */
	fake_deliver(&F, F.sent[0].mad, MAD_SIZE - 8, 0);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_int_eq(any.calls, 0);
	ck_assert_uint_eq(stats()->dropped, 7);
	ck_assert_uint_eq(stats()->unmatched, 0);

	smp_dr_set_hops((struct smp_dr *)resp, 0, 0);
	fake_deliver(&F, resp, MAD_SIZE, 0);
	ck_assert_int_eq(r.calls, 1);
	close_engine();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Statistics                                                           */
/* ------------------------------------------------------------------ */

START_TEST(stats_counters)
{
	struct rec a = { 0 }, b = { 0 }, c = { 0 }, g = { 0 };
	uint8_t resp[MAD_SIZE];
	struct smp_lid ow;
	struct sa_mad owg;

	open_engine(2, 2, 25, 1);
	submit_smp(1, &a);			/* answered at once */
	submit_smp(2, &b);			/* never answered */
	submit_sa(3, &g);			/* answered at once */
	submit_smp(4, &c);			/* queued; answered after one resend */
	ck_assert_uint_eq(F.n_sent, 3);
	ck_assert_uint_eq(stats()->max_outstanding, 3);
	fake_answer(&F, (size_t)find_sent(1, MAD_CLASS_SMI_DR));
	fake_answer(&F, (size_t)find_sent(3, MAD_CLASS_SA));
	ck_assert_uint_eq(F.n_sent, 4);			/* c went out */
	while (count_sent(4) < 2)
		ck_assert(run_until_sent(F.n_sent + 1, 1.0));
	fake_answer(&F, (size_t)find_sent(4, MAD_CLASS_SMI_DR));
	ck_assert_int_eq(c.status, 0);
	ck_assert(run_until(rec_called, &b, 1.0));
	ck_assert_int_eq(b.status, -ETIMEDOUT);

	/* one-way sends count as sent; only SMPs as smps_sent */
	mad_build_smp_lid(&ow, MAD_METHOD_GET | MAD_METHOD_RESP, SMP_ATTR_SM_INFO, 0);
	ck_assert_int_eq(mad_engine_send_oneway(F.engine, &ow, sizeof(ow), &dr_addr), 0);
	build_sa(&owg, MAD_METHOD_REPORT, SMP_ATTR_NOTICE, 0);
	ck_assert_int_eq(mad_engine_send_oneway(F.engine, &owg, sizeof(owg), &gsi_addr), 0);

	/* noise: a stale answer and a broken MAD */
	fake_answer(&F, (size_t)find_sent(1, MAD_CLASS_SMI_DR));
	fake_make_response(F.sent[0].mad, MAD_SIZE, 0, resp);
	fake_deliver(&F, resp, 100, 0);

	/* a: 1 send, b: 2, g: 1, c: 2, one-way: 2 */
	ck_assert_uint_eq(stats()->sent, 8);
	ck_assert_uint_eq(stats()->smps_sent, 6);
	ck_assert_uint_eq(stats()->resends, 2);
	ck_assert_uint_eq(stats()->answered, 3);
	ck_assert_uint_eq(stats()->timeouts, 1);
	ck_assert_uint_eq(stats()->unmatched, 1);
	ck_assert_uint_eq(stats()->dropped, 1);
	ck_assert_uint_eq(stats()->unsolicited, 0);
	ck_assert_uint_eq(stats()->max_outstanding, 3);
	ck_assert_uint_eq(F.n_sent, 8);
	close_engine();
}
END_TEST

START_TEST(send_oneway)
{
	struct smp_lid smp;
	uint8_t copy[MAD_SIZE];

	open_engine(4, 4, 20, 3);
	mad_build_smp_lid(&smp, MAD_METHOD_GET | MAD_METHOD_RESP, SMP_ATTR_SM_INFO, 0);
	smp.hdr.tid = htobe64(0x1122334455667788ull);
	memcpy(copy, &smp, sizeof(copy));
	ck_assert_int_eq(mad_engine_send_oneway(F.engine, &smp, sizeof(smp), &dr_addr), 0);
	ck_assert_uint_eq(F.n_sent, 1);
	/* sent as is: the TID is the requester's, not ours */
	ck_assert_mem_eq(F.sent[0].mad, copy, MAD_SIZE);
	ck_assert_int_eq(F.sent[0].timeout_ms, 0);
	ck_assert_uint_eq(mad_engine_pending(F.engine), 0);
	/* the transport's error comes back */
	F.send_rc = -EIO;
	ck_assert_int_eq(mad_engine_send_oneway(F.engine, &smp, sizeof(smp), &dr_addr), -EIO);
	F.send_rc = 0;
	ck_assert_int_eq(mad_engine_send_oneway(F.engine, &smp, MAD_HDR_SIZE - 1, &dr_addr),
			 -EINVAL);
	ck_assert_int_eq(mad_engine_send_oneway(F.engine, &smp, MAD_SIZE + 1, &dr_addr),
			 -EINVAL);
	ck_assert_uint_eq(F.n_sent, 2);
	run_for(0.05);
	ck_assert_uint_eq(F.n_sent, 2);			/* never retried */
	ck_assert_uint_eq(stats()->resends, 0);
	close_engine();
}
END_TEST

/* ------------------------------------------------------------------ */
/* Builders, against libibmad's mad_encode()                           */
/* ------------------------------------------------------------------ */

static const unsigned build_hops[] = { 0, 1, 2, 7, 62, 63 };

START_TEST(build_smp_dr_vs_libibmad)
{
	unsigned hops = build_hops[_i];
	uint8_t path[SMP_MAX_HOPS + 1 + 16];
	uint8_t lib[MAD_SIZE];
	struct smp_dr smp;
	ib_rpc_t rpc;
	ib_dr_path_t drpath;
	const uint8_t methods[] = { MAD_METHOD_GET, MAD_METHOD_SET };

	/* junk beyond the path and in path[0] must not be copied */
	memset(path, 0xee, sizeof(path));
	for (unsigned i = 1; i <= hops; i++)
		path[i] = (uint8_t)(1 + (i * 37) % 254);
	for (unsigned m = 0; m < 2; m++) {
		memset(&smp, 0xa5, sizeof(smp));
		mad_build_smp_dr(&smp, methods[m], SMP_ATTR_PORT_INFO, 0x80000000u | hops,
				 path, hops);

		memset(&rpc, 0, sizeof(rpc));
		rpc.mgtclass = IB_SMI_DIRECT_CLASS;
		rpc.method = methods[m];
		rpc.attr.id = IB_ATTR_PORT_INFO;
		rpc.attr.mod = 0x80000000u | hops;
		rpc.trid = 1;			/* nonzero: no mad_trid() */
		memset(&drpath, 0, sizeof(drpath));
		drpath.cnt = (int)hops;
		for (unsigned i = 1; i <= hops; i++)
			drpath.p[i] = path[i];
		memset(lib, 0, sizeof(lib));
		ck_assert_ptr_nonnull(mad_encode(lib, &rpc, &drpath, NULL));
		mad_set_field64(lib, 0, IB_MAD_TRID_F, 0);	/* the engine's job */
		ck_assert_mem_eq(&smp, lib, MAD_SIZE);

		/* spelled out */
		ck_assert_uint_eq(smp_dr_hop_cnt(&smp), hops);
		ck_assert_uint_eq(smp_dr_hop_ptr(&smp), 0);
		ck_assert_uint_eq(be16toh(smp.hdr.status) & SMP_DR_DIRECTION, 0);
		ck_assert_uint_eq(be16toh(smp.dr_slid), 0xffff);
		ck_assert_uint_eq(be16toh(smp.dr_dlid), 0xffff);
		ck_assert_uint_eq(smp.initial_path[0], 0);
		for (unsigned i = hops + 1; i < sizeof(smp.initial_path); i++)
			ck_assert_uint_eq(smp.initial_path[i], 0);
		ck_assert_int_eq(mad_validate(&smp, sizeof(smp)), 0);
	}
}
END_TEST

START_TEST(build_smp_dr_null_path)
{
	struct smp_dr smp;

	mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0, NULL, 0);
	ck_assert_uint_eq(smp_dr_hop_cnt(&smp), 0);
	ck_assert_int_eq(mad_validate(&smp, sizeof(smp)), 0);
}
END_TEST

/* More than 63 hops cannot be expressed: whatever the builder does, it
 * must not produce an SMP that mad_validate would refuse. */
START_TEST(build_smp_dr_too_long)
{
	uint8_t path[128];
	struct smp_dr smp;

	for (unsigned i = 0; i < sizeof(path); i++)
		path[i] = (uint8_t)(i + 1);
	mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0, path, 100);
	ck_assert_uint_le(smp_dr_hop_cnt(&smp), SMP_MAX_HOPS);
	ck_assert_int_eq(mad_validate(&smp, sizeof(smp)), 0);
	ck_assert_uint_eq(smp.initial_path[0], 0);
}
END_TEST

START_TEST(build_smp_lid_vs_libibmad)
{
	uint8_t lib[MAD_SIZE];
	struct smp_lid smp;
	ib_rpc_t rpc;

	memset(&smp, 0x5a, sizeof(smp));
	mad_build_smp_lid(&smp, MAD_METHOD_SET, SMP_ATTR_LFT, 0x123);
	memset(&rpc, 0, sizeof(rpc));
	rpc.mgtclass = IB_SMI_CLASS;
	rpc.method = IB_MAD_METHOD_SET;
	rpc.attr.id = IB_ATTR_LINEARFORWTBL;
	rpc.attr.mod = 0x123;
	rpc.trid = 1;
	memset(lib, 0, sizeof(lib));
	ck_assert_ptr_nonnull(mad_encode(lib, &rpc, NULL, NULL));
	mad_set_field64(lib, 0, IB_MAD_TRID_F, 0);
	ck_assert_mem_eq(&smp, lib, MAD_SIZE);
	ck_assert_int_eq(mad_validate(&smp, sizeof(smp)), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Regressions: defects found by these tests and fixed                  */
/* ------------------------------------------------------------------ */

/*
 * umad_io passes the engine's timeout to the kernel, so a lost attempt is
 * seen twice: by the engine's deadline (which resends) and, a moment
 * later, by the kernel's timeout report for that same attempt (which
 * resends again).  Two attempts then leave back to back and the request
 * fails after about 3 timeouts instead of 1 + retries.
 */
START_TEST(regress_kernel_report_after_deadline_double_resend)
{
	struct rec r = { 0 };
	const double T = 0.030;
	ev_tstamp t0;

	open_engine(4, 4, 30, 3);
	F.action = FAKE_KERNEL_TIMEOUT;
	/* The kernel reports a send as timed out after the timeout it was
	 * given: the engine must give it the whole retry budget (4 x 30 ms),
	 * so no report lands between our own retries. */
	F.delay = 4 * T + 0.003;
	t0 = ev_now(L);
	submit_smp(9, &r);
	ck_assert(run_until(rec_called, &r, 2.0));
	ck_assert_int_eq(r.status, -ETIMEDOUT);
	ck_assert_int_eq(F.sent[0].timeout_ms, 120);
	for (size_t i = 1; i < F.n_sent; i++)
		ck_assert_msg(F.sent[i].at - F.sent[i - 1].at >= T * 0.9,
			      "attempt %zu left %.1f ms after attempt %zu (timeout %.0f ms)",
			      i + 1, (F.sent[i].at - F.sent[i - 1].at) * 1e3, i, T * 1e3);
	ck_assert_msg(r.at - t0 >= 4 * T * 0.95, "gave up after %.1f ms, not ~%.0f",
		      (r.at - t0) * 1e3, 4 * T * 1e3);
	close_engine();
}
END_TEST

/*
 * A callback run by mad_engine_free() that submits again (a generic
 * "retry on error" caller) is refused with -ECANCELED: nothing goes on the
 * wire from inside mad_engine_free() and no timer is left in the loop.
 */
static int resubmit_rc = 1;
static void resubmit_on_error(void *arg, int status, const void *mad, size_t len)
{
	struct rec *r = arg;
	struct smp_dr smp;

	(void)mad;
	(void)len;
	r->calls++;
	r->status = status;
	if (status < 0 && resubmit_rc == 1) {
		mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0, NULL, 0);
		resubmit_rc = mad_engine_submit(F.engine, &smp, sizeof(smp), &dr_addr,
						resubmit_on_error, r);
	}
}

START_TEST(submit_during_free_refused)
{
	struct rec r[3] = { 0 };
	struct smp_dr smp;
	size_t sent_before;

	/* one request on the wire, one queued, one GMP window free */
	open_engine(1, 4, 20, 3);
	mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0, NULL, 0);
	for (unsigned i = 0; i < 2; i++)
		ck_assert_int_eq(mad_engine_submit(F.engine, &smp, sizeof(smp), &dr_addr,
						   resubmit_on_error, &r[i]), 0);
	sent_before = F.n_sent;
	ck_assert_uint_eq(sent_before, 1);
	fake_fini(&F);
	engine_open = false;
	ck_assert_int_eq(resubmit_rc, -ECANCELED);
	ck_assert_uint_eq(F.n_sent, 0);		/* fake_fini reset it ... */
	ck_assert_int_eq(r[0].calls, 1);
	ck_assert_int_eq(r[1].calls, 1);
	ck_assert_int_eq(r[0].status, -ECANCELED);
	ck_assert_int_eq(r[1].status, -ECANCELED);
	/* the loop holds nothing of the freed engine (ASan would see it) */
	ck_assert_int_eq(ev_pending_count(L), 0);
	run_for(0.05);
	close_engine();
}
END_TEST

/* "Start TIDs somewhere unlikely to meet a previous run's answers": two
 * runs of the program start at the same TID (random() is never seeded). */
static uint64_t first_tid_of_a_run(void)
{
	char cmd[64];
	FILE *p;
	unsigned long long tid = 0;

	snprintf(cmd, sizeof(cmd), "IBSM_PRINT_FIRST_TID=1 /proc/%d/exe", (int)getpid());
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(fscanf(p, "%llx", &tid), 1);
	pclose(p);
	return tid;
}

START_TEST(regress_tid_start_same_every_run)
{
	uint64_t a = first_tid_of_a_run(), b = first_tid_of_a_run();

	ck_assert_msg(a != b, "two runs both started at TID 0x%" PRIx64, a);
}
END_TEST

/* Runs outside the Check runner: no ck_assert here. */
static void ignore_done(void *arg, int status, const void *mad, size_t len)
{
	(void)arg;
	(void)status;
	(void)mad;
	(void)len;
}

static int print_first_tid(void)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct smp_dr smp;

	if (!loop || fake_init(&F, loop, &default_opts))
		return EXIT_FAILURE;
	mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0, NULL, 0);
	if (mad_engine_submit(F.engine, &smp, sizeof(smp), &dr_addr, ignore_done, NULL) ||
	    F.n_sent != 1)
		return EXIT_FAILURE;
	printf("%" PRIx64 "\n", fake_tid(&F, 0));
	fake_fini(&F);
	ev_loop_destroy(loop);
	return EXIT_SUCCESS;
}


/* ------------------------------------------------------------------ */
/* Issue 10: bounded queues, unguessable TIDs, answers from the          */
/* request's destination                                                 */
/* ------------------------------------------------------------------ */

/* Each kind's queue is bounded: a submit beyond it fails with -ENOBUFS
 * (the old FIFOs grew without limit), and room comes back as requests
 * leave the queue. */
START_TEST(queue_cap_enobufs)
{
	enum { SMPS = 8, GMPS = 4 };
	struct rec r[SMPS + 2] = { 0 }, g[GMPS + 2] = { 0 };
	struct smp_dr smp;
	struct sa_mad sa;

	open_engine(1, 1, 1000, 0);
	mad_engine_set_queue_limits(F.engine, SMPS, GMPS);
	for (unsigned i = 0; i < SMPS + 1; i++)	/* one on the wire + SMPS */
		submit_smp(i, &r[i]);
	mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 99, NULL, 0);
	ck_assert_int_eq(do_submit(&smp, sizeof(smp), &r[SMPS + 1]), -ENOBUFS);
	ck_assert_uint_eq(stats()->refused, 1);
	ck_assert_uint_eq(stats()->max_queued[0], SMPS);
	/* the GMP queue has its own bound */
	for (unsigned i = 0; i < GMPS + 1; i++)
		submit_sa(i, &g[i]);
	build_sa(&sa, MAD_METHOD_GET, IB_SA_ATTR_NODERECORD, 99);
	ck_assert_int_eq(do_submit(&sa, sizeof(sa), &g[GMPS + 1]), -ENOBUFS);
	ck_assert_uint_eq(stats()->refused, 2);
	ck_assert_uint_eq(stats()->max_queued[1], GMPS);
	ck_assert_uint_eq(mad_engine_pending(F.engine), SMPS + 1 + GMPS + 1);
	/* an answer frees the window, the queue moves, a slot is free */
	fake_answer(&F, (size_t)find_sent(0, MAD_CLASS_SMI_DR));
	ck_assert_int_eq(r[0].calls, 1);
	ck_assert_int_eq(do_submit(&smp, sizeof(smp), &r[SMPS + 1]), 0);
	ck_assert_int_eq(r[SMPS + 1].calls, 0);		/* no callback on refusal */
	close_engine();
}
END_TEST

/* The default bound of GMPs (Reports hosts can cause) holds as well. */
START_TEST(queue_cap_default_gmps)
{
	static struct rec g[ENGINE_MAX_QUEUED_GMPS + 2];
	struct sa_mad sa;
	unsigned ok = 0;
	int rc = 0;

	memset(g, 0, sizeof(g));
	open_engine(1, 1, 1000, 0);
	build_sa(&sa, MAD_METHOD_REPORT, SMP_ATTR_NOTICE, 0);
	for (unsigned i = 0; i < ENGINE_MAX_QUEUED_GMPS + 2; i++) {
		rc = do_submit(&sa, sizeof(sa), &g[i]);
		if (rc == 0)
			ok++;
	}
	ck_assert_int_eq(rc, -ENOBUFS);
	ck_assert_uint_eq(ok, ENGINE_MAX_QUEUED_GMPS + 1);	/* + one on the wire */
	close_engine();
}
END_TEST

/* TIDs are not a counter: consecutive requests do not get consecutive
 * (or evenly spaced) TIDs, and two engines do not share a sequence. */
START_TEST(tids_not_sequential)
{
	enum { N = 256 };
	struct rec r[N];
	uint32_t tids[N];
	unsigned steps_of_one = 0, same_step = 0;

	memset(r, 0, sizeof(r));
	open_engine(N, 1, 1000, 0);
	for (unsigned i = 0; i < N; i++)
		submit_smp(i, &r[i]);
	ck_assert_uint_eq(F.n_sent, N);
	for (unsigned i = 0; i < N; i++)
		tids[i] = (uint32_t)fake_tid(&F, i);
	for (unsigned i = 1; i < N; i++) {
		uint32_t step = tids[i] - tids[i - 1];

		steps_of_one += step == 1;
		if (i > 1)
			same_step += step == tids[i - 1] - tids[i - 2];
		for (unsigned j = 0; j < i; j++)
			CHECK(tids[j] != tids[i], "TID 0x%x twice", tids[i]);
	}
	ck_assert_msg(steps_of_one < 4, "%u of %u TIDs follow their predecessor",
		      steps_of_one, N - 1);
	ck_assert_msg(same_step < 4, "%u equal steps between TIDs", same_step);
	/* high and low halves both vary */
	unsigned hi_changes = 0;
	for (unsigned i = 1; i < N; i++)
		hi_changes += (tids[i] >> 16) != (tids[i - 1] >> 16);
	ck_assert_uint_gt(hi_changes, N / 2);
	close_engine();
}
END_TEST

/* A GMP answer is accepted only from the LID and QP the request went to:
 * a host that guessed a TID cannot answer for the SA. */
START_TEST(spoofed_gmp_answer_rejected)
{
	struct rec r = { 0 };
	uint8_t resp[MAD_SIZE];
	struct mad_addr other = gsi_addr;

	open_engine(4, 4, 1000, 0);
	submit_sa(1, &r);				/* to LID 1, QP 1 */
	size_t len = fake_make_response(F.sent[0].mad, F.sent[0].len, 0, resp);
	other.lid = 2;					/* another host */
	fake_deliver_from(&F, resp, len, &other, 0);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_uint_eq(stats()->misrouted, 1);
	other = gsi_addr;
	other.qpn = 7;					/* right LID, other QP */
	fake_deliver_from(&F, resp, len, &other, 0);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_uint_eq(stats()->misrouted, 2);
	ck_assert_uint_eq(mad_engine_pending(F.engine), 1);	/* still waiting */
	fake_deliver_from(&F, resp, len, &gsi_addr, 0);	/* the real one */
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(stats()->answered, 1);
	close_engine();
}
END_TEST

/* A LID-routed SMP answer must come from the destination LID. */
START_TEST(spoofed_lid_smp_answer_rejected)
{
	struct rec r = { 0 };
	struct smp_lid smp;
	uint8_t resp[MAD_SIZE];
	struct mad_addr to = { .lid = 5 }, from = { .lid = 6 };

	open_engine(4, 4, 1000, 0);
	mad_build_smp_lid(&smp, MAD_METHOD_GET, SMP_ATTR_SM_INFO, 0);
	ck_assert_int_eq(mad_engine_submit(F.engine, &smp, sizeof(smp), &to,
					   on_done, &r), 0);
	size_t len = fake_make_response(F.sent[0].mad, F.sent[0].len, 0, resp);
	fake_deliver_from(&F, resp, len, &from, 0);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_uint_eq(stats()->misrouted, 1);
	fake_deliver_from(&F, resp, len, &to, 0);
	ck_assert_int_eq(r.calls, 1);
	close_engine();
}
END_TEST

/* A directed-route answer must come back along the request's path: same
 * hop count, same initial path, direction bit set. */
START_TEST(spoofed_dr_answer_rejected)
{
	static const uint8_t path[] = { 0, 1, 3, 5 };
	struct rec r = { 0 };
	struct smp_dr smp;
	uint8_t resp[MAD_SIZE];
	struct smp_dr *a = (struct smp_dr *)resp;

	open_engine(4, 4, 1000, 0);
	mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0, path, 3);
	ck_assert_int_eq(do_submit(&smp, sizeof(smp), &r), 0);
	size_t len = fake_make_response(F.sent[0].mad, F.sent[0].len, 0, resp);

	a->initial_path[2] = 4;				/* another route */
	fake_deliver(&F, resp, len, 0);
	a->initial_path[2] = 3;
	smp_dr_set_hops(a, 0, 2);			/* a shorter one */
	fake_deliver(&F, resp, len, 0);
	smp_dr_set_hops(a, 0, 3);
	a->hdr.status = 0;				/* no D bit: not a return */
	fake_deliver(&F, resp, len, 0);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_uint_eq(stats()->misrouted, 3);
	a->hdr.status = htobe16(SMP_DR_DIRECTION);
	fake_deliver(&F, resp, len, 0);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_uint_eq(stats()->answered, 1);
	close_engine();
}
END_TEST

/* ------------------------------------------------------------------ */

static void teardown(void)
{
	close_engine();
}

/*
 * The on-wire TID counters the receive thread filters SMP answers with:
 * counted while a request is on the wire (not while it waits for the
 * window), released by its answer and by its timeout.
 */
START_TEST(wire_tid_counters)
{
	struct rec r[3] = { 0 };
	const _Atomic uint16_t *w;
	uint32_t tid[3];

	open_engine(2, 2, 20, 0);
	w = mad_engine_wire_tids(F.engine);
	ck_assert_ptr_nonnull(w);
	for (unsigned i = 0; i < 3; i++)
		submit_smp(i, &r[i]);
	ck_assert_uint_eq(F.n_sent, 2);		/* the third waits */
	for (unsigned i = 0; i < 2; i++) {
		tid[i] = (uint32_t)be64toh(((const struct mad_hdr *)F.sent[i].mad)->tid);
		ck_assert_uint_ge(w[MAD_TID_FILTER_INDEX(tid[i])], 1);
	}
	unsigned total = 0;
	for (unsigned i = 0; i < MAD_TID_FILTER_SIZE; i++)
		total += w[i];
	ck_assert_uint_eq(total, 2);
	fake_answer(&F, 0);
	ck_assert_int_eq(r[0].calls, 1);
	ck_assert_uint_eq(F.n_sent, 3);
	tid[2] = (uint32_t)be64toh(((const struct mad_hdr *)F.sent[2].mad)->tid);
	ck_assert_uint_ge(w[MAD_TID_FILTER_INDEX(tid[2])], 1);
	/* the other two time out */
	ck_assert(run_until(rec_called, &r[2], 2.0));
	ck_assert(run_until(rec_called, &r[1], 2.0));
	total = 0;
	for (unsigned i = 0; i < MAD_TID_FILTER_SIZE; i++)
		total += w[i];
	ck_assert_uint_eq(total, 0);
	close_engine();
}
END_TEST

/* ------------------------------------------------------------------ */
/* The adaptive SMP window and the per-destination limit                */
/* ------------------------------------------------------------------ */

static void open_adaptive(unsigned start, unsigned ceiling, unsigned per_dest,
			  unsigned timeout_ms, unsigned retries)
{
	struct mad_engine_opts o = {
		.max_wire_smps = start, .max_wire_gmps = 4,
		.timeout_ms = timeout_ms, .retries = retries,
		.smp_window_max = ceiling, .smps_per_dest = per_dest,
	};

	L = ev_loop_new(EVFLAG_AUTO);
	ck_assert_ptr_nonnull(L);
	ck_assert_int_eq(fake_init(&F, L, &o), 0);
	engine_open = true;
	ev_now_update(L);
}

/* A DR NodeInfo Get along path[1..hops]. */
static void submit_smp_path(uint32_t tag, const uint8_t *path, unsigned hops,
			    struct rec *r)
{
	struct smp_dr smp;

	mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, tag, path,
			 hops);
	ck_assert_int_eq(do_submit(&smp, sizeof(smp), r), 0);
}

/* Answered at once: the window grows from its start to its ceiling. */
START_TEST(window_grows_to_ceiling)
{
	enum { N = 3000 };
	struct rec *r = calloc(N, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	open_adaptive(4, 32, 0, 500, 3);
	ck_assert_uint_eq(stats()->window, 4);
	F.action = FAKE_ANSWER;
	for (unsigned i = 0; i < N; i++)
		submit_smp(i, &r[i]);
	ck_assert_uint_eq(F.n_sent, 4);
	ck_assert(run_until(engine_idle, NULL, 10.0));
	for (unsigned i = 0; i < N; i++)
		CHECK(r[i].calls == 1 && r[i].status == 0, "request %u", i);
	ck_assert_uint_eq(stats()->window, 32);
	ck_assert_uint_eq(stats()->window_high, 32);
	ck_assert_uint_eq(stats()->window_low, 4);
	ck_assert_uint_eq(stats()->max_outstanding, 32);
	ck_assert_uint_eq(stats()->window_cuts, 0);
	close_engine();
	free(r);
}
END_TEST

/* A ceiling at or below the start keeps OpenSM's fixed window. */
START_TEST(window_fixed_without_ceiling)
{
	enum { N = 500 };
	struct rec *r = calloc(N, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	open_adaptive(4, 4, 0, 500, 3);
	F.action = FAKE_ANSWER;
	for (unsigned i = 0; i < N; i++)
		submit_smp(i, &r[i]);
	ck_assert(run_until(engine_idle, NULL, 10.0));
	ck_assert_uint_eq(stats()->max_outstanding, 4);
	ck_assert_uint_eq(stats()->window_high, 4);
	close_engine();
	free(r);
}
END_TEST

/* The window halves when more than a quarter of a window's worth of
 * attempts is lost; losses of what was on the wire before a cut do not
 * cut again; never below the start. */
START_TEST(window_halves_on_heavy_loss)
{
	enum { N = 200 };
	struct rec *r = calloc(N, sizeof(*r));
	size_t first;

	ck_assert_ptr_nonnull(r);
	open_adaptive(4, 32, 0, 1000, 5);
	for (unsigned i = 0; i < N; i++)
		submit_smp(i, &r[i]);
	/* answer in order until the window is full grown */
	for (size_t i = 0; stats()->window < 32; i++)
		fake_answer(&F, i);
	ck_assert_uint_eq(stats()->window, 32);
	first = F.n_sent - 32;		/* the 32 on the wire */
	/* 8 of 32 lost: a quarter, no cut */
	for (size_t i = 0; i < 8; i++)
		fake_deliver(&F, F.sent[first + i].mad, MAD_SIZE, ETIMEDOUT);
	ck_assert_uint_eq(stats()->window_cuts, 0);
	ck_assert_uint_eq(stats()->window, 32);
	/* the 9th: halved */
	fake_deliver(&F, F.sent[first + 8].mad, MAD_SIZE, ETIMEDOUT);
	ck_assert_uint_eq(stats()->window_cuts, 1);
	ck_assert_uint_eq(stats()->window, 16);
	/* the rest of that flight lost too: no second cut */
	for (size_t i = 9; i < 32; i++)
		fake_deliver(&F, F.sent[first + i].mad, MAD_SIZE, ETIMEDOUT);
	ck_assert_uint_eq(stats()->window_cuts, 1);
	/* their re-sends (after the cut) lost: cut again, down to the start */
	for (size_t i = F.n_sent - 23; i < F.n_sent && stats()->window > 4; i++)
		fake_deliver(&F, F.sent[i].mad, MAD_SIZE, ETIMEDOUT);
	ck_assert_uint_ge(stats()->window_cuts, 2);
	ck_assert_uint_eq(stats()->window, 4);
	ck_assert_uint_eq(stats()->window_low, 4);
	close_engine();
	free(r);
}
END_TEST

/* Every n-th attempt lost (the fake reports it at once, as ibsim does). */
static unsigned loss_every, loss_count;
static enum fake_action lossy(struct fake *fk, const struct fake_sent *s,
			      void *arg)
{
	(void)fk;
	(void)s;
	(void)arg;
	return ++loss_count % loss_every == 0 ? FAKE_KERNEL_TIMEOUT :
	       FAKE_ANSWER_AFTER;
}

/* 10% and 30% loss: the window backs off and every request completes. */
START_TEST(window_under_loss)
{
	enum { N = 3000 };
	static const unsigned every[] = { 10, 3 };
	struct rec *r = calloc(N, sizeof(*r));

	ck_assert_ptr_nonnull(r);
	open_adaptive(4, 64, 0, 200, 6);
	loss_every = every[_i];
	loss_count = 0;
	F.policy = lossy;
	F.delay = 0.0005;
	for (unsigned i = 0; i < N; i++)
		submit_smp(i, &r[i]);
	ck_assert(run_until(engine_idle, NULL, 20.0));
	for (unsigned i = 0; i < N; i++)
		CHECK(r[i].calls == 1 && r[i].status == 0, "request %u: %d",
		      i, r[i].status);
	if (loss_every == 10) {
		/* random 10% loss is not congestion: no over-reaction */
		ck_assert_uint_eq(stats()->window_high, 64);
	} else {
		/* a third lost: the window backs off */
		ck_assert_uint_gt(stats()->window_cuts, 0);
		ck_assert_uint_lt(stats()->window, 64);
	}
	ck_assert_uint_ge(stats()->window_low, 4);
	close_engine();
	free(r);
}
END_TEST

/* On a fabric that loses a measurable share of SMP attempts but answers
 * most, a lost SMP is re-sent up to ENGINE_LOSSY_RETRIES times, not
 * `retries`; GMPs keep `retries`. */
START_TEST(lossy_fabric_longer_budget)
{
	enum { N = 300, LOST = 10 };
	struct rec *r = calloc(N + LOST, sizeof(*r)), last = { 0 }, gmp = { 0 };

	ck_assert_ptr_nonnull(r);
	open_engine(4, 4, 100, 3);
	/* evidence: LOST attempts lost (then answered), N answered */
	F.action = FAKE_DROP;
	for (unsigned i = 0; i < LOST; i++) {
		submit_smp(i, &r[i]);
		fake_deliver(&F, F.sent[F.n_sent - 1].mad, MAD_SIZE, ETIMEDOUT);
		fake_answer(&F, F.n_sent - 1);
	}
	ck_assert(run_until(engine_idle, NULL, 5.0));
	F.action = FAKE_ANSWER;
	for (unsigned i = LOST; i < N + LOST; i++)
		submit_smp(i, &r[i]);
	ck_assert(run_until(engine_idle, NULL, 5.0));
	for (unsigned i = 0; i < N + LOST; i++)
		CHECK(r[i].calls == 1 && r[i].status == 0, "request %u", i);
	ck_assert_uint_eq(stats()->lossy_resends, 0);
	/* 3% of the attempts lost: an SMP survives 10 losses */
	F.action = FAKE_DROP;
	submit_smp(999, &last);
	size_t first = F.n_sent - 1;
	for (unsigned k = 1; k <= 10; k++) {
		fake_deliver(&F, F.sent[first].mad, MAD_SIZE, ETIMEDOUT);
		ck_assert_uint_eq(F.n_sent, first + 1 + k);
	}
	ck_assert_uint_eq(stats()->lossy_resends, 7);
	fake_answer(&F, F.n_sent - 1);
	ck_assert(run_until(rec_called, &last, 1.0));
	ck_assert_int_eq(last.status, 0);
	/* a GMP keeps the ordinary budget */
	submit_sa(7, &gmp);
	first = F.n_sent - 1;
	for (unsigned k = 1; k <= 5; k++)
		fake_deliver(&F, F.sent[first].mad, MAD_SIZE, ETIMEDOUT);
	ck_assert_uint_eq(F.n_sent, first + 4);
	ck_assert(run_until(rec_called, &gmp, 3.0));
	ck_assert_int_eq(gmp.status, -ETIMEDOUT);
	close_engine();
	free(r);
}
END_TEST

static bool answered[64];

static void answer(size_t i)
{
	fake_answer(&F, i);
	answered[i] = true;
}

/* SMPs on the wire along paths that start with `port`. */
static unsigned on_wire_to(uint8_t port)
{
	unsigned n = 0;

	for (size_t i = 0; i < F.n_sent && i < 64; i++) {
		const struct smp_dr *smp = (const void *)F.sent[i].mad;

		n += smp->initial_path[1] == port && !answered[i];
	}
	return n;
}

/* At most smps_per_dest SMPs on the wire to one path; the others wait in
 * order while SMPs to other paths go ahead. */
START_TEST(per_dest_limit)
{
	enum { N = 30 };
	struct rec r[N];
	uint8_t a[2] = { 0, 1 }, b[2] = { 0, 2 }, c[3] = { 0, 1, 5 };

	memset(r, 0, sizeof(r));
	open_adaptive(16, 16, 2, 1000, 0);
	for (unsigned i = 0; i < 20; i++)
		submit_smp_path(i, a, 1, &r[i]);
	for (unsigned i = 20; i < 25; i++)
		submit_smp_path(i, b, 1, &r[i]);
	for (unsigned i = 25; i < 30; i++)
		submit_smp_path(i, c, 2, &r[i]);	/* through a's switch */
	/* two to each destination, whatever the window allows */
	ck_assert_uint_eq(F.n_sent, 6);
	ck_assert_uint_eq(fake_attr_mod(&F, 0), 0);
	ck_assert_uint_eq(fake_attr_mod(&F, 1), 1);
	ck_assert_uint_eq(fake_attr_mod(&F, 2), 20);
	ck_assert_uint_eq(fake_attr_mod(&F, 4), 25);
	ck_assert_uint_eq(stats()->dest_waits, 24);
	ck_assert_uint_eq(mad_engine_pending(F.engine), N);
	/* answering one to a sends the next to a, in order */
	memset(answered, 0, sizeof(answered));
	answer(0);
	ck_assert_uint_eq(F.n_sent, 7);
	ck_assert_uint_eq(fake_attr_mod(&F, 6), 2);
	/* answer whatever is on the wire until done; never more than 2 */
	for (size_t i = 1; i < F.n_sent; i++) {
		CHECK(on_wire_to(1) <= 4 && on_wire_to(2) <= 2,
		      "per-destination limit exceeded");
		answer(i);
	}
	ck_assert_uint_eq(F.n_sent, N);
	for (unsigned i = 0; i < N; i++)
		ck_assert_int_eq(r[i].calls, 1);
	/* each destination's SMPs went out in submission order */
	for (size_t i = 0, la = 0, lb = 20, lc = 25; i < F.n_sent; i++) {
		uint32_t t = fake_attr_mod(&F, i);
		size_t *last = t < 20 ? &la : t < 25 ? &lb : &lc;

		CHECK(t >= *last, "SMP %u after %zu", t, *last);
		*last = t;
	}
	ck_assert_uint_eq(mad_engine_pending(F.engine), 0);
	close_engine();
}
END_TEST

/* Half the SMPs to one switch lost: that switch's window drops to 1-2,
 * the other's stays at the limit, the SMP window is not cut, and all
 * complete. */
static enum fake_action lossy_a(struct fake *fk, const struct fake_sent *s,
				void *arg)
{
	const struct smp_dr *smp = (const void *)s->mad;

	(void)fk;
	(void)arg;
	if (smp->initial_path[1] == 1 && ++loss_count % 2)
		return FAKE_KERNEL_TIMEOUT;
	return FAKE_ANSWER_AFTER;
}

START_TEST(per_dest_backs_off_lossy_switch)
{
	enum { N = 400 };
	struct rec *r = calloc(N, sizeof(*r));
	uint8_t a[2] = { 0, 1 }, b[2] = { 0, 2 };
	struct smp_dr probe_a, probe_b;

	ck_assert_ptr_nonnull(r);
	open_adaptive(8, 32, 4, 200, 10);
	loss_count = 0;
	F.policy = lossy_a;
	F.delay = 0.0005;
	for (unsigned i = 0; i < N; i++)
		submit_smp_path(i, i % 2 ? a : b, 1, &r[i]);
	ck_assert(run_until(engine_idle, NULL, 20.0));
	for (unsigned i = 0; i < N; i++)
		CHECK(r[i].calls == 1 && r[i].status == 0, "request %u: %d",
		      i, r[i].status);
	mad_build_smp_dr(&probe_a, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0, a, 1);
	mad_build_smp_dr(&probe_b, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0, b, 1);
	ck_assert_uint_le(mad_engine_dest_window(F.engine, &probe_a,
						 sizeof(probe_a), &dr_addr), 2);
	ck_assert_uint_eq(mad_engine_dest_window(F.engine, &probe_b,
						 sizeof(probe_b), &dr_addr), 4);
	ck_assert_uint_gt(stats()->dest_cuts, 0);
	ck_assert_uint_eq(stats()->window_cuts, 0);
	close_engine();
	free(r);
}
END_TEST

/* Waiting SMPs count toward the queue bound and are cancelled by free. */
START_TEST(per_dest_waiting_bounded_and_cancelled)
{
	struct rec r[12];
	uint8_t a[2] = { 0, 1 };

	memset(r, 0, sizeof(r));
	open_adaptive(8, 8, 1, 1000, 0);
	mad_engine_set_queue_limits(F.engine, 10, 0);
	for (unsigned i = 0; i < 11; i++)
		submit_smp_path(i, a, 1, &r[i]);
	ck_assert_uint_eq(F.n_sent, 1);
	{
		struct smp_dr smp;

		mad_build_smp_dr(&smp, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 11,
				 a, 1);
		ck_assert_int_eq(do_submit(&smp, sizeof(smp), &r[11]), -ENOBUFS);
	}
	close_engine();
	for (unsigned i = 0; i < 11; i++) {
		ck_assert_int_eq(r[i].calls, 1);
		ck_assert_int_eq(r[i].status, -ECANCELED);
	}
	ck_assert_int_eq(r[11].calls, 0);
}
END_TEST


/* ------------------------------------------------------------------ */
/* LID-routed SMPs with directed-route fallback (mad_engine_submit_smp) */
/* ------------------------------------------------------------------ */

static const uint8_t lid_path[] = { 0, 1, 4, 2 };

/* A PortInfo Set along lid_path, tagged by its modifier, submitted to
 * node LID `lid` LID-routed or not. */
static void submit_smp_lid(uint32_t tag, uint16_t lid, bool by_lid, struct rec *r)
{
	struct smp_dr smp;

	mad_build_smp_dr(&smp, MAD_METHOD_SET, SMP_ATTR_PORT_INFO, tag,
			 lid_path, 3);
	memset(smp.data, 0xa5, 8);
	in_submit = true;
	ck_assert_int_eq(mad_engine_submit_smp(F.engine, &smp, lid, by_lid,
					       on_done, r), 0);
	in_submit = false;
}

/* by_lid: class 0x01 to the DLID, same method/attribute/modifier/data, no
 * DR fields; answered from that LID it completes; from another LID it is
 * misrouted.  Without by_lid: the DR SMP as given, to the permissive LID. */
START_TEST(lid_routed_smp_sent_and_matched)
{
	struct rec r = { 0 }, d = { 0 };
	uint8_t resp[MAD_SIZE];
	struct mad_addr other = { .lid = 8 };

	open_engine(4, 4, 1000, 0);
	submit_smp_lid(7, 12, true, &r);
	submit_smp_lid(9, 12, false, &d);
	ck_assert_uint_eq(F.n_sent, 2);
	const struct smp_lid *l = (const void *)F.sent[0].mad;
	ck_assert_uint_eq(l->hdr.mgmt_class, MAD_CLASS_SMI);
	ck_assert_uint_eq(l->hdr.method, MAD_METHOD_SET);
	ck_assert_uint_eq(be16toh(l->hdr.attr_id), SMP_ATTR_PORT_INFO);
	ck_assert_uint_eq(be32toh(l->hdr.attr_mod), 7);
	ck_assert_uint_eq(l->hdr.class_specific, 0);	/* no hop fields */
	ck_assert_uint_eq(l->data[0], 0xa5);
	for (size_t i = 0; i < sizeof(l->resv2); i++)
		ck_assert_uint_eq(l->resv2[i], 0);	/* no paths */
	ck_assert_uint_eq(F.sent[0].addr.lid, 12);
	ck_assert_uint_eq(fake_class(&F, 1), MAD_CLASS_SMI_DR);
	ck_assert_uint_eq(F.sent[1].addr.lid, 0xffff);
	ck_assert_uint_eq(stats()->smps_lid, 1);
	ck_assert_uint_eq(stats()->smps_sent, 2);

	size_t len = fake_make_response(F.sent[0].mad, F.sent[0].len, 0, resp);
	fake_deliver_from(&F, resp, len, &other, 0);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_uint_eq(stats()->misrouted, 1);
	fake_answer(&F, 0);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(((const struct mad_hdr *)r.mad)->mgmt_class, MAD_CLASS_SMI);
	fake_answer(&F, 1);
	ck_assert_int_eq(d.calls, 1);
	ck_assert_uint_eq(stats()->lid_fallbacks, 0);
	close_engine();
}
END_TEST

/* Both LID-routed attempts lost (a LID-routed SMP gets one re-send: a
 * loss there more likely means a broken route): the same request goes
 * out as the DR SMP (same TID, fresh retries); its answer completes it,
 * once. */
START_TEST(lid_routed_falls_back_to_dr)
{
	struct rec r = { 0 };

	open_engine(4, 4, 20, 2);
	submit_smp_lid(5, 30, true, &r);
	ck_assert(run_until_sent(3, 2.0));
	for (size_t i = 0; i < 2; i++) {
		ck_assert_uint_eq(fake_class(&F, i), MAD_CLASS_SMI);
		ck_assert_uint_eq(F.sent[i].addr.lid, 30);
	}
	const struct smp_dr *dr = (const void *)F.sent[2].mad;
	ck_assert_uint_eq(dr->hdr.mgmt_class, MAD_CLASS_SMI_DR);
	ck_assert_uint_eq(F.sent[2].addr.lid, 0xffff);
	ck_assert_uint_eq(smp_dr_hop_cnt(dr), 3);
	ck_assert_mem_eq(dr->initial_path + 1, lid_path + 1, 3);
	ck_assert_uint_eq(dr->data[0], 0xa5);
	ck_assert(dr->hdr.tid == ((const struct mad_hdr *)F.sent[0].mad)->tid);
	ck_assert_int_eq(r.calls, 0);
	ck_assert_uint_eq(stats()->lid_fallbacks, 1);
	ck_assert_uint_eq(stats()->timeouts, 0);
	/* a late LID-routed answer no longer matches (class) */
	fake_answer(&F, 0);
	ck_assert_int_eq(r.calls, 0);
	fake_answer(&F, 2);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_eq(((const struct mad_hdr *)r.mad)->mgmt_class,
			  MAD_CLASS_SMI_DR);
	run_for(0.1);
	ck_assert_int_eq(r.calls, 1);
	ck_assert_uint_eq(F.n_sent, 3);
	ck_assert_uint_eq(mad_engine_pending(F.engine), 0);
	close_engine();
}
END_TEST

/* The DR fallback lost too: one -ETIMEDOUT, after 2 x (1 + retries)
 * attempts; no second fallback. */
START_TEST(lid_routed_fallback_lost_fails_once)
{
	struct rec r = { 0 };

	open_engine(4, 4, 20, 1);
	submit_smp_lid(5, 30, true, &r);
	ck_assert(run_until(rec_called, &r, 2.0));
	ck_assert_int_eq(r.status, -ETIMEDOUT);
	ck_assert_uint_eq(F.n_sent, 4);
	ck_assert_uint_eq(fake_class(&F, 1), MAD_CLASS_SMI);
	ck_assert_uint_eq(fake_class(&F, 2), MAD_CLASS_SMI_DR);
	ck_assert_uint_eq(fake_class(&F, 3), MAD_CLASS_SMI_DR);
	ck_assert_uint_eq(stats()->lid_fallbacks, 1);
	ck_assert_uint_eq(stats()->timeouts, 1);
	run_for(0.1);
	ck_assert_int_eq(r.calls, 1);
	close_engine();
}
END_TEST

/* A node's SMPs share one destination window whatever their form: with
 * one SMP per destination, a LID-routed and a DR SMP to the same node
 * LID go one after the other, while one to another LID goes at once. */
START_TEST(lid_and_dr_share_destination)
{
	struct rec r[3] = { { 0 } };

	open_adaptive(8, 8, 1, 1000, 0);
	submit_smp_lid(1, 40, true, &r[0]);
	submit_smp_lid(2, 40, false, &r[1]);
	submit_smp_lid(3, 41, false, &r[2]);
	ck_assert_uint_eq(F.n_sent, 2);
	ck_assert_int_eq(find_sent(2, MAD_CLASS_SMI_DR), -1);
	ck_assert_int_ge(find_sent(3, MAD_CLASS_SMI_DR), 0);
	ck_assert_uint_eq(stats()->dest_waits, 1);
	fake_answer(&F, 0);
	ck_assert_int_eq(r[0].calls, 1);
	ck_assert_int_ge(find_sent(2, MAD_CLASS_SMI_DR), 0);
	close_engine();
}
END_TEST


/* The fake drops LID-routed SMPs and answers DR ones. */
static enum fake_action drop_lid_routed(struct fake *fk, const struct fake_sent *s,
					void *arg)
{
	(void)fk;
	(void)arg;
	return ((const struct mad_hdr *)s->mad)->mgmt_class == MAD_CLASS_SMI ?
	       FAKE_DROP : FAKE_ANSWER;
}

/* A node's LID route is broken and 8 SMPs are queued for it, 2 at a
 * time: once the first falls back, the waiting ones go DR at once
 * instead of each waiting out its retries; all complete. */
START_TEST(lid_fallback_converts_waiting)
{
	struct rec r[8] = { { 0 } };
	unsigned lid_sends = 0;

	open_adaptive(8, 8, 2, 20, 2);
	F.policy = drop_lid_routed;
	for (int i = 0; i < 8; i++)
		submit_smp_lid((uint32_t)i + 1, 50, true, &r[i]);
	ck_assert(run_until(engine_idle, NULL, 2.0));
	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(r[i].calls, 1);
		ck_assert_int_eq(r[i].status, 0);
		ck_assert_uint_eq(((const struct mad_hdr *)r[i].mad)->mgmt_class,
				  MAD_CLASS_SMI_DR);
	}
	for (size_t i = 0; i < F.n_sent; i++)
		lid_sends += fake_class(&F, i) == MAD_CLASS_SMI;
	/* the first two, 2 attempts each; none of the 6 waiting */
	ck_assert_uint_eq(lid_sends, 4);
	ck_assert_uint_eq(stats()->lid_fallbacks, 8);
	ck_assert_uint_eq(stats()->timeouts, 0);
	close_engine();
}
END_TEST

static Suite *engine_suite(void)
{
	Suite *s = suite_create("engine");
	TCase *tc;

	tc = tcase_create("submit");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, new_rejects_bad_opts);
	tcase_add_test(tc, tid_assigned_unique);
	tcase_add_test(tc, submit_rejects);
	tcase_add_test(tc, submit_copies);
	suite_add_tcase(s, tc);

	tc = tcase_create("window");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, smp_window_fifo);
	tcase_add_test(tc, window_of_one);
	tcase_add_test(tc, gmp_window_separate);
	tcase_add_test(tc, pma_window_separate);
	tcase_add_test(tc, window_throughput);
	suite_add_tcase(s, tc);

	tc = tcase_create("adaptive");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, window_grows_to_ceiling);
	tcase_add_test(tc, window_fixed_without_ceiling);
	tcase_add_test(tc, window_halves_on_heavy_loss);
	tcase_add_loop_test(tc, window_under_loss, 0, 2);
	tcase_add_test(tc, per_dest_limit);
	tcase_add_test(tc, lossy_fabric_longer_budget);
	tcase_add_test(tc, per_dest_backs_off_lossy_switch);
	tcase_add_test(tc, per_dest_waiting_bounded_and_cancelled);
	suite_add_tcase(s, tc);

	tc = tcase_create("lid_routed");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, lid_routed_smp_sent_and_matched);
	tcase_add_test(tc, lid_routed_falls_back_to_dr);
	tcase_add_test(tc, lid_routed_fallback_lost_fails_once);
	tcase_add_test(tc, lid_and_dr_share_destination);
	tcase_add_test(tc, lid_fallback_converts_waiting);
	suite_add_tcase(s, tc);

	tc = tcase_create("match");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, match_right_tid);
	tcase_add_test(tc, reject_mismatched_responses);
	tcase_add_test(tc, unknown_tid_unmatched);
	tcase_add_test(tc, queued_tid_not_matched);
	tcase_add_test(tc, set_answered_by_getresp);
	tcase_add_test(tc, sa_methods_matched);
	tcase_add_test(tc, high_tid_bits_ignored);
	suite_add_tcase(s, tc);

	tc = tcase_create("timeout");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, timeout_after_retries);
	tcase_add_test(tc, timeout_no_retries);
	tcase_add_test(tc, late_answer_completes);
	tcase_add_test(tc, delayed_answer_completes);
	tcase_add_test(tc, deadline_from_clock);
	tcase_add_test(tc, transport_status_resends);
	tcase_add_test(tc, kernel_timeout_early_resend);
	tcase_add_test(tc, send_error_retried);
	tcase_add_test(tc, timeouts_release_window);
	tcase_add_test(tc, interleaved_deadlines);
	suite_add_tcase(s, tc);

	tc = tcase_create("callbacks");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, submit_from_answer_callback);
	tcase_add_test(tc, fan_out_from_callback);
	tcase_add_test(tc, submit_from_timeout_callback);
	tcase_add_test(tc, free_cancels_everything);
	tcase_add_test(tc, free_idle_engine);
	tcase_add_test(tc, submit_during_free_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("unsolicited");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, unsolicited_dispatch);
	tcase_add_test(tc, unsolicited_one_handler);
	suite_add_tcase(s, tc);

	tc = tcase_create("validate");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, validate_cases);
	tcase_add_test(tc, recv_drops_invalid);
	tcase_add_test(tc, stats_counters);
	tcase_add_test(tc, send_oneway);
	suite_add_tcase(s, tc);

	tc = tcase_create("build");
	tcase_add_loop_test(tc, build_smp_dr_vs_libibmad, 0,
			    (int)(sizeof(build_hops) / sizeof(build_hops[0])));
	tcase_add_test(tc, build_smp_dr_null_path);
	tcase_add_test(tc, build_smp_dr_too_long);
	tcase_add_test(tc, build_smp_lid_vs_libibmad);
	suite_add_tcase(s, tc);

	tc = tcase_create("bounds");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, queue_cap_enobufs);
	tcase_add_test(tc, queue_cap_default_gmps);
	tcase_add_test(tc, tids_not_sequential);
	tcase_add_test(tc, spoofed_gmp_answer_rejected);
	tcase_add_test(tc, spoofed_lid_smp_answer_rejected);
	tcase_add_test(tc, spoofed_dr_answer_rejected);
	tcase_add_test(tc, wire_tid_counters);
	suite_add_tcase(s, tc);

	{
		tc = tcase_create("regressions");
		tcase_add_checked_fixture(tc, NULL, teardown);
		tcase_add_test(tc, regress_kernel_report_after_deadline_double_resend);
		tcase_add_test(tc, regress_tid_start_same_every_run);
		suite_add_tcase(s, tc);
	}
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (getenv("IBSM_PRINT_FIRST_TID"))
		return print_first_tid();
	sr = srunner_create(engine_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
