/*
 * check_health_history.c - the unhealthy-port classifiers of the sweep
 * and trap history (flapping, unresponsive, refusing Sets, noisy) and
 * its bounds.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>

#include "health/history.h"

static void policy(struct health_policy *p)
{
	health_policy_default(p);
	p->flap_count = 3;
	p->flap_window_s = 100;
	p->unresponsive_k = 2;
	p->unresponsive_n = 4;
	p->trap_rate = 10;
}

START_TEST(test_flapping)
{
	struct health_history h;
	struct health_policy p;
	const struct hh_port *hp;
	unsigned v;

	policy(&p);
	ck_assert_int_eq(hh_init(&h, &p), 0);
	/* first seen up: no transition; then down/up three times */
	hh_link_state(&h, 0x10, 3, true, 0);
	for (int i = 0; i < 3; i++) {
		hh_link_state(&h, 0x10, 3, false, 10 + 20 * i);
		hh_link_state(&h, 0x10, 3, true, 20 + 20 * i);
	}
	/* staying up is no transition */
	hh_link_state(&h, 0x10, 3, true, 70);
	hp = hh_port_find(&h, 0x10, 3);
	ck_assert_ptr_nonnull(hp);
	ck_assert(hh_flapping(&h, hp, 70, &v));
	ck_assert_uint_eq(v, 3);
	/* the first transition (t=20) leaves the window at t=121 */
	ck_assert(!hh_flapping(&h, hp, 121, &v));
	ck_assert_uint_eq(v, 2);
	/* another port is apart */
	hh_link_state(&h, 0x10, 4, false, 0);
	hh_link_state(&h, 0x10, 4, true, 1);
	ck_assert(!hh_flapping(&h, hh_port_find(&h, 0x10, 4), 1, &v));
	ck_assert_uint_eq(v, 1);
	ck_assert_ptr_null(hh_port_find(&h, 0x10, 5));
	hh_free(&h);
}
END_TEST

START_TEST(test_unresponsive)
{
	struct health_history h;
	struct health_policy p;
	const struct hh_node *n;
	unsigned v;

	policy(&p);
	ck_assert_int_eq(hh_init(&h, &p), 0);
	hh_node_poll(&h, 0x20, false, 1);
	n = hh_node_find(&h, 0x20);
	ck_assert(!hh_unresponsive(&h, n, &v));		/* 1 of 1 < k=2 */
	hh_node_poll(&h, 0x20, true, 2);
	hh_node_poll(&h, 0x20, false, 3);
	n = hh_node_find(&h, 0x20);
	ck_assert(hh_unresponsive(&h, n, &v));		/* 2 of the last 3 */
	ck_assert_uint_eq(v, 2);
	/* answering again: the unanswered polls slide out of the last n=4 */
	hh_node_poll(&h, 0x20, true, 4);
	n = hh_node_find(&h, 0x20);
	ck_assert(hh_unresponsive(&h, n, &v));		/* polls 1-4: 1 and 3 */
	hh_node_poll(&h, 0x20, true, 5);
	n = hh_node_find(&h, 0x20);
	ck_assert(!hh_unresponsive(&h, n, &v));		/* polls 2-5: 3 only */
	ck_assert_uint_eq(v, 1);
	hh_free(&h);
}
END_TEST

START_TEST(test_refusing)
{
	struct health_history h;
	struct health_policy p;
	const struct hh_node *n;
	unsigned v;

	policy(&p);
	ck_assert_int_eq(hh_init(&h, &p), 0);
	hh_node_poll(&h, 0x30, true, 1);
	hh_set_refused(&h, 0x30, 1);
	hh_set_refused(&h, 0x30, 1);	/* twice in one sweep counts once */
	n = hh_node_find(&h, 0x30);
	ck_assert(!hh_refusing(&h, n, &v));
	ck_assert_uint_eq(v, 1);
	hh_node_poll(&h, 0x30, true, 2);
	hh_set_refused(&h, 0x30, 2);
	n = hh_node_find(&h, 0x30);
	ck_assert(hh_refusing(&h, n, &v));
	ck_assert(!hh_unresponsive(&h, n, NULL));
	for (int i = 3; i < 7; i++)
		hh_node_poll(&h, 0x30, true, i);
	ck_assert(!hh_refusing(&h, hh_node_find(&h, 0x30), &v));
	ck_assert_uint_eq(v, 0);
	hh_free(&h);
}
END_TEST

START_TEST(test_noisy)
{
	struct health_history h;
	struct health_policy p;
	unsigned v;

	policy(&p);
	ck_assert_int_eq(hh_init(&h, &p), 0);
	/* 10 in a minute is the threshold, not above it */
	for (int i = 0; i < 10; i++)
		hh_trap(&h, 7, 1000 + i);
	ck_assert(!hh_noisy(&h, hh_trap_find(&h, 7), 1010, &v));
	ck_assert_uint_eq(v, 10);
	hh_trap(&h, 7, 1030);
	ck_assert(hh_noisy(&h, hh_trap_find(&h, 7), 1030, &v));
	ck_assert_uint_eq(v, 11);
	/* a minute later with no trap: quiet again */
	ck_assert(!hh_noisy(&h, hh_trap_find(&h, 7), 1085, &v));
	ck_assert_uint_eq(v, 1);	/* only t=1030's bucket left */
	ck_assert(!hh_noisy(&h, hh_trap_find(&h, 7), 1200, &v));
	ck_assert_uint_eq(v, 0);
	/* slow and steady is not noisy */
	for (int i = 0; i < 100; i++)
		hh_trap(&h, 8, 2000 + 10 * i);
	ck_assert(!hh_noisy(&h, hh_trap_find(&h, 8), 2990, &v));
	ck_assert_uint_le(v, 7);
	hh_free(&h);
}
END_TEST

/* Bounded: the least recently seen entry makes room. */
START_TEST(test_bounds)
{
	struct health_history h;
	struct health_policy p;

	policy(&p);
	p.max_ports = 3;
	p.max_nodes = 2;
	p.max_trap_lids = 2;
	ck_assert_int_eq(hh_init(&h, &p), 0);
	for (unsigned i = 0; i < 5; i++) {
		hh_link_state(&h, 0x100 + i, 1, true, i);
		hh_node_poll(&h, 0x100 + i, false, i);
		hh_trap(&h, (uint16_t)(1 + i), i);
	}
	ck_assert_uint_eq(h.n_ports, 3);
	ck_assert_uint_eq(h.n_nodes, 2);
	ck_assert_uint_eq(h.n_traps, 2);
	ck_assert_ptr_null(hh_port_find(&h, 0x100, 1));
	ck_assert_ptr_null(hh_port_find(&h, 0x101, 1));
	ck_assert_ptr_nonnull(hh_port_find(&h, 0x104, 1));
	ck_assert_ptr_nonnull(hh_node_find(&h, 0x104));
	ck_assert_ptr_null(hh_node_find(&h, 0x102));
	ck_assert_ptr_nonnull(hh_trap_find(&h, 5));
	ck_assert_ptr_null(hh_trap_find(&h, 1));
	ck_assert_uint_eq(h.evicted, 2 + 3 + 3);
	/* the entries left still work after the moves */
	hh_link_state(&h, 0x103, 1, false, 10);
	hh_link_state(&h, 0x103, 1, true, 11);
	ck_assert_uint_eq(hh_port_find(&h, 0x103, 1)->n_flaps, 1);
	/* forgetting a node drops its ports */
	hh_forget_node(&h, 0x104);
	ck_assert_ptr_null(hh_port_find(&h, 0x104, 1));
	ck_assert_ptr_null(hh_node_find(&h, 0x104));
	ck_assert_ptr_nonnull(hh_port_find(&h, 0x103, 1));
	/* a smaller bound on reload drops the oldest */
	p.max_ports = 1;
	hh_set_policy(&h, &p);
	ck_assert_uint_eq(h.n_ports, 1);
	ck_assert_ptr_nonnull(hh_port_find(&h, 0x103, 1));
	hh_free(&h);
}
END_TEST

static Suite *health_history_suite(void)
{
	Suite *s = suite_create("health_history");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_flapping);
	tcase_add_test(tc, test_unresponsive);
	tcase_add_test(tc, test_refusing);
	tcase_add_test(tc, test_noisy);
	tcase_add_test(tc, test_bounds);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(health_history_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
