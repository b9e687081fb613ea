/*
 * check_sendq.c - the bounded send queue (mad/sendq.c): a push never
 * waits for the device, the queue is bounded, one destination's answers
 * cannot fill it, and what waits goes out in order when the device
 * takes it again.
 */
#include "config.h"

#include <check.h>
#include <endian.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/sendq.h"
#include "mad/wire.h"

/* A device that takes nothing until it is opened. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static bool open_dev;
static unsigned n_sent;
static uint64_t order[64];

static int blocking_send(void *ctx, const void *mad, size_t len,
			 const struct mad_addr *addr, int timeout_ms)
{
	const struct mad_hdr *h = mad;

	(void)ctx;
	(void)len;
	(void)addr;
	(void)timeout_ms;
	pthread_mutex_lock(&mu);
	while (!open_dev)
		pthread_cond_wait(&cv, &mu);
	if (n_sent < 64)
		order[n_sent] = be64toh(h->tid);
	n_sent++;
	pthread_mutex_unlock(&mu);
	return 0;
}

static void make(uint8_t *mad, uint64_t tid, bool resp)
{
	struct mad_hdr *h = (struct mad_hdr *)mad;

	memset(mad, 0, MAD_SIZE);
	h->base_version = 1;
	h->mgmt_class = MAD_CLASS_SMI;
	h->class_version = 1;
	h->method = resp ? MAD_METHOD_GET | MAD_METHOD_RESP : MAD_METHOD_GET;
	h->tid = htobe64(tid);
}

START_TEST(test_never_waits_bounded_fair)
{
	struct sendq *q;
	struct sendq_stats st;
	uint8_t mad[MAD_SIZE];
	struct mad_addr flood = { .lid = 5 }, other = { .lid = 7 };
	unsigned ok = 0;

	ck_assert_int_eq(sendq_start(&q, blocking_send, NULL, 32, 8), 0);
	/* The device takes nothing: 100 answers to LID 5 return at once,
	 * 8 queued (its share), the rest refused (the thread holds one). */
	for (unsigned i = 0; i < 100; i++) {
		make(mad, i, true);
		ok += sendq_push(q, mad, MAD_SIZE, &flood, 0) == 0;
	}
	ck_assert_uint_le(ok, 9);
	ck_assert_uint_ge(ok, 8);
	/* Another destination and our own requests still get in ... */
	make(mad, 1000, true);
	ck_assert_int_eq(sendq_push(q, mad, MAD_SIZE, &other, 0), 0);
	for (unsigned i = 0; i < 64; i++) {
		make(mad, 2000 + i, false);
		if (sendq_push(q, mad, MAD_SIZE, &other, 200) < 0)
			break;
	}
	/* ... until the whole queue is full: bounded. */
	sendq_get_stats(q, &st);
	ck_assert_uint_eq(st.waiting, 32);
	ck_assert_uint_ge(st.refused_full, 1);
	ck_assert_uint_ge(st.refused_dest, 90);
	/* The device takes MADs again: all of them leave, in order. */
	pthread_mutex_lock(&mu);
	open_dev = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	sendq_stop(q);
	ck_assert_uint_eq(n_sent, st.queued);		/* nothing lost */
	for (unsigned i = 1; i < ok; i++)
		ck_assert_uint_lt(order[i - 1], order[i]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sendq");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, test_never_waits_bounded_fair);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
