/*
 * check_counters.c - the port counter store (health/counters.c): totals
 * and deltas across saturation, clears made by someone else, 64-bit
 * counters that go backwards or jump by 2^63, the 75% clear point, the
 * bound and removal.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "health/counters.h"

/* ck_assert*() reports every passing check (a write per call): hot
 * loops use CHECK(). */
#define CHECK(expr, ...)	do { if (!(expr)) ck_abort_msg(__VA_ARGS__); } while (0)

static struct pc_store *st;

static void setup(void)
{
	ck_assert_int_eq(pc_store_new(&st, 8), 0);
}

static void teardown(void)
{
	pc_store_free(st);
	st = NULL;
}

static struct pma_sample sample(uint16_t sym, uint32_t xmit_data)
{
	struct pma_sample s = { 0 };

	s.pc.port = 1;
	s.pc.symbol_err = sym;
	s.pc.xmit_data = xmit_data;
	return s;
}

START_TEST(test_first_read_and_deltas)
{
	struct pc_port *p = pc_get(st, 0x1111, 1);
	struct pc_result r;
	struct pma_sample s = sample(500, 1000);

	ck_assert_ptr_nonnull(p);
	pc_update(p, 7, &s, 10.0, &r);
	ck_assert(r.first);
	ck_assert_uint_eq(p->total[PC_SYMBOL_ERR], 500);	/* = perfquery */
	ck_assert_uint_eq(p->delta[PC_SYMBOL_ERR], 500);
	ck_assert_uint_eq(r.increased, 1u << PC_SYMBOL_ERR);
	ck_assert_uint_eq(p->lid, 7);
	ck_assert_uint_eq(p->reads, 1);
	ck_assert(p->prev_read == 0);

	s = sample(520, 3000);
	pc_update(p, 7, &s, 20.0, &r);
	ck_assert(!r.first && !r.ext_clear);
	ck_assert_uint_eq(p->delta[PC_SYMBOL_ERR], 20);
	ck_assert_uint_eq(p->total[PC_SYMBOL_ERR], 520);
	ck_assert_uint_eq(p->delta[PC_XMIT_DATA], 2000);
	ck_assert(p->prev_read == 10.0 && p->last_read == 20.0);

	/* nothing moved: no increment reported */
	pc_update(p, 7, &s, 30.0, &r);
	ck_assert_uint_eq(r.increased, 0);
	ck_assert_uint_eq(p->delta[PC_SYMBOL_ERR], 0);
	ck_assert_uint_eq(p->ext_clears, 0);
}
END_TEST

/* Someone cleared the port (perfquery -R): the counter went backwards;
 * the delta is what it counted since, never a negative or 2^16 jump. */
START_TEST(test_external_clear)
{
	struct pc_port *p = pc_get(st, 0x1111, 1);
	struct pc_result r;
	struct pma_sample s = sample(500, 100000);

	pc_update(p, 7, &s, 10.0, &r);
	s = sample(3, 50);
	pc_update(p, 7, &s, 20.0, &r);
	ck_assert(r.ext_clear);
	ck_assert_uint_eq(p->ext_clears, 1);
	ck_assert_uint_eq(p->delta[PC_SYMBOL_ERR], 3);
	ck_assert_uint_eq(p->total[PC_SYMBOL_ERR], 503);
	ck_assert_uint_eq(p->delta[PC_XMIT_DATA], 50);
	ck_assert_uint_eq(p->total[PC_XMIT_DATA], 100050);
	/* and the counting goes on from the new value */
	s = sample(10, 80);
	pc_update(p, 7, &s, 30.0, &r);
	ck_assert(!r.ext_clear);
	ck_assert_uint_eq(p->delta[PC_SYMBOL_ERR], 7);
	ck_assert_uint_eq(p->total[PC_SYMBOL_ERR], 510);
	ck_assert_uint_eq(p->ext_clears, 1);
}
END_TEST

/* A saturated counter (all ones) adds nothing more, every width. */
START_TEST(test_saturation)
{
	struct pc_port *p = pc_get(st, 0x2222, 3);
	struct pc_result r;
	struct pma_sample s = { 0 };

	s.pc.symbol_err = 0xfff0;
	s.pc.link_downed = 0xf0;
	s.pc.link_integrity = 0xe;
	s.pc.xmit_wait = 0xfffffff0u;
	pc_update(p, 1, &s, 1.0, &r);
	s.pc.symbol_err = 0xffff;
	s.pc.link_downed = 0xff;
	s.pc.link_integrity = 0xf;
	s.pc.xmit_wait = 0xffffffffu;
	pc_update(p, 1, &s, 2.0, &r);
	ck_assert_uint_eq(p->delta[PC_SYMBOL_ERR], 0xf);
	ck_assert_uint_eq(p->delta[PC_LINK_DOWNED], 0xf);
	ck_assert_uint_eq(p->delta[PC_LINK_INTEGRITY], 1);
	ck_assert_uint_eq(p->delta[PC_XMIT_WAIT], 0xf);
	for (int k = 0; k < 3; k++) {
		pc_update(p, 1, &s, 3.0 + k, &r);
		ck_assert_uint_eq(r.increased, 0);
		ck_assert(!r.ext_clear);
	}
	ck_assert_uint_eq(p->total[PC_SYMBOL_ERR], 0xffff);
	ck_assert_uint_eq(p->total[PC_LINK_DOWNED], 0xff);
	ck_assert_uint_eq(p->total[PC_XMIT_WAIT], 0xffffffffu);
	ck_assert(pc_needs_clear(p));
}
END_TEST

static struct pma_sample ext_sample(uint64_t xmit_data)
{
	struct pma_sample s = { 0 };

	s.pc.port = 1;
	s.pc.xmit_data = (uint32_t)xmit_data;	/* what PortCounters shows */
	s.has_ext = true;
	s.ext.port = 1;
	s.ext.xmit_data = xmit_data;
	return s;
}

/* 64-bit counters: a jump by 2^63 is a new base, not an increment. */
START_TEST(test_jump_2_63)
{
	struct pc_port *p = pc_get(st, 0x3333, 1);
	struct pc_result r;
	struct pma_sample s = ext_sample(1000);

	pc_update(p, 1, &s, 100.0, &r);
	ck_assert_uint_eq(p->width[PC_XMIT_DATA], 64);
	s = ext_sample(1000 + (1ull << 63));
	pc_update(p, 1, &s, 110.0, &r);
	ck_assert(r.ext_clear);
	ck_assert_uint_eq(p->delta[PC_XMIT_DATA], 0);
	ck_assert_uint_eq(p->total[PC_XMIT_DATA], 1000);
	/* from that base it counts on */
	s = ext_sample(1500 + (1ull << 63));
	pc_update(p, 1, &s, 120.0, &r);
	ck_assert(!r.ext_clear);
	ck_assert_uint_eq(p->delta[PC_XMIT_DATA], 500);
	ck_assert_uint_eq(p->total[PC_XMIT_DATA], 1500);
	/* more than a link carries in 10 s (10^12 words) is not counted */
	s = ext_sample(1500 + (1ull << 63) + 10 * PC_MAX_PER_S + 1);
	pc_update(p, 1, &s, 130.0, &r);
	ck_assert(r.ext_clear);
	ck_assert_uint_eq(p->delta[PC_XMIT_DATA], 0);
	ck_assert_uint_eq(p->total[PC_XMIT_DATA], 1500);
	/* but what a link can carry in 10 s is */
	uint64_t base = p->raw[PC_XMIT_DATA];
	s = ext_sample(base + 9 * PC_MAX_PER_S);
	pc_update(p, 1, &s, 140.0, &r);
	ck_assert(!r.ext_clear);
	ck_assert_uint_eq(p->delta[PC_XMIT_DATA], 9 * PC_MAX_PER_S);
}
END_TEST

/* 64-bit counters going backwards: cleared; the delta is the new value
 * when it is plausible, else 0. */
START_TEST(test_ext_backwards)
{
	struct pc_port *p = pc_get(st, 0x3333, 2);
	struct pc_result r;
	struct pma_sample s = ext_sample(1ull << 40);

	pc_update(p, 1, &s, 100.0, &r);
	s = ext_sample(77);
	pc_update(p, 1, &s, 110.0, &r);
	ck_assert(r.ext_clear);
	ck_assert_uint_eq(p->delta[PC_XMIT_DATA], 77);
	ck_assert_uint_eq(p->total[PC_XMIT_DATA], (1ull << 40) + 77);
	/* backwards to something still huge: no increment */
	s = ext_sample(1ull << 40);
	pc_update(p, 1, &s, 111.0, &r);		/* forward 2^40 in 1 s: no */
	ck_assert(r.ext_clear);
	ck_assert_uint_eq(p->delta[PC_XMIT_DATA], 0);
	s = ext_sample(~0ull);
	pc_update(p, 1, &s, 112.0, &r);
	ck_assert_uint_eq(p->delta[PC_XMIT_DATA], 0);
	s = ext_sample(~0ull - 5);
	pc_update(p, 1, &s, 113.0, &r);
	ck_assert(r.ext_clear);
	ck_assert_uint_eq(p->delta[PC_XMIT_DATA], 0);
	ck_assert_uint_eq(p->total[PC_XMIT_DATA], (1ull << 40) + 77);
}
END_TEST

/* A first reading near 2^64 and plausible increments after it: the
 * total saturates, it never wraps to a small number. */
START_TEST(test_total_saturates)
{
	struct pc_port *p = pc_get(st, 0x3333, 3);
	struct pc_result r;
	struct pma_sample s = ext_sample(~0ull - 10);

	pc_update(p, 1, &s, 100.0, &r);
	ck_assert_uint_eq(p->total[PC_XMIT_DATA], ~0ull - 10);
	s = ext_sample(5);			/* cleared: delta 5 */
	pc_update(p, 1, &s, 110.0, &r);
	ck_assert_uint_eq(p->total[PC_XMIT_DATA], ~0ull - 5);
	s = ext_sample(1000);
	pc_update(p, 1, &s, 120.0, &r);
	ck_assert_uint_eq(p->delta[PC_XMIT_DATA], 995);
	ck_assert_uint_eq(p->total[PC_XMIT_DATA], ~0ull);
}
END_TEST

/* Reading PortCountersExtended or not changes the counter: a new base. */
START_TEST(test_width_change)
{
	struct pc_port *p = pc_get(st, 0x4444, 1);
	struct pc_result r;
	struct pma_sample s = sample(0, 4000000000u);

	pc_update(p, 1, &s, 1.0, &r);
	s = ext_sample(5);
	pc_update(p, 1, &s, 2.0, &r);
	ck_assert_uint_eq(p->delta[PC_XMIT_DATA], 0);
	ck_assert_uint_eq(p->total[PC_XMIT_DATA], 4000000000u);
	ck_assert(!r.ext_clear);
	s = ext_sample(15);
	pc_update(p, 1, &s, 3.0, &r);
	ck_assert_uint_eq(p->delta[PC_XMIT_DATA], 10);
}
END_TEST

/* 75% of a counter's range asks for a clear; the clear is folded in. */
START_TEST(test_needs_clear)
{
	struct pc_port *p = pc_get(st, 0x5555, 1);
	struct pc_result r;
	struct pma_sample s = sample(0xbfff, 0);	/* just below 75% */
	uint16_t sel;
	uint8_t sel2;

	pc_update(p, 1, &s, 1.0, &r);
	ck_assert(!pc_needs_clear(p));
	s = sample(0xc000, 0);
	pc_update(p, 1, &s, 2.0, &r);
	ck_assert(pc_needs_clear(p));
	pc_clear_select(p, &sel, &sel2);
	ck_assert_uint_eq(sel, 0xffff);		/* no extended: data too */
	ck_assert_uint_eq(sel2, PMA_SEL2_XMIT_WAIT);
	pc_cleared(p, sel, sel2);
	ck_assert_uint_eq(p->sm_clears, 1);
	ck_assert(!pc_needs_clear(p));
	/* the next reading counts from 0: not an outside clear */
	s = sample(4, 0);
	pc_update(p, 1, &s, 3.0, &r);
	ck_assert(!r.ext_clear);
	ck_assert_uint_eq(p->delta[PC_SYMBOL_ERR], 4);
	ck_assert_uint_eq(p->total[PC_SYMBOL_ERR], 0xc004);

	/* a 32-bit data counter near the top, 4-bit and 8-bit ones */
	s = sample(0, 0xc0000000u);
	pc_update(p, 1, &s, 4.0, &r);
	ck_assert(pc_needs_clear(p));
	struct pc_port *q = pc_get(st, 0x5555, 2);
	s = sample(0, 0);
	s.pc.link_integrity = 11;
	pc_update(q, 1, &s, 1.0, &r);
	ck_assert(!pc_needs_clear(q));
	s.pc.link_integrity = 12;
	pc_update(q, 1, &s, 2.0, &r);
	ck_assert(pc_needs_clear(q));
	/* with the extended counters read, the data counters are left */
	struct pc_port *x = pc_get(st, 0x5555, 3);
	s = ext_sample(0xf0000000u);
	pc_update(x, 1, &s, 1.0, &r);
	ck_assert(!pc_needs_clear(x));
	pc_clear_select(x, &sel, &sel2);
	ck_assert_uint_eq(sel, PMA_SEL_ERRORS);
}
END_TEST

static bool keep_even(void *arg, const struct pc_port *p)
{
	(void)arg;
	return p->node_guid % 2 == 0;
}

START_TEST(test_bound_find_remove)
{
	struct pc_port *p;

	for (uint64_t g = 1; g <= 8; g++)
		ck_assert_ptr_nonnull(pc_get(st, g, (uint8_t)g));
	ck_assert_ptr_null(pc_get(st, 9, 9));		/* the bound */
	ck_assert_uint_eq(pc_store_count(st), 8);
	ck_assert_ptr_eq(pc_get(st, 3, 3), pc_find(st, 3, 3));
	ck_assert_ptr_null(pc_find(st, 3, 4));
	p = pc_find(st, 4, 4);
	p->total[PC_RCV_ERR] = 44;

	ck_assert_uint_eq(pc_remove_if(st, keep_even, NULL), 4);
	ck_assert_uint_eq(pc_store_count(st), 4);
	for (uint64_t g = 1; g <= 8; g++)
		ck_assert((pc_find(st, g, (uint8_t)g) != NULL) == (g % 2 == 0));
	ck_assert_uint_eq(pc_find(st, 4, 4)->total[PC_RCV_ERR], 44);
	ck_assert_int_eq(pc_remove(st, 4, 4), 0);
	ck_assert_int_eq(pc_remove(st, 4, 4), -ENOENT);
	ck_assert_ptr_null(pc_find(st, 4, 4));

	size_t it = 0, n = 0;
	const struct pc_port *q;
	while ((q = pc_next(st, &it)))
		n++;
	ck_assert_uint_eq(n, 3);
	/* room again */
	ck_assert_ptr_nonnull(pc_get(st, 100, 1));
	/* a port not read since t keeps its totals, loses its deltas */
	struct pc_port *q2 = pc_find(st, 2, 2);
	q2->delta[PC_RCV_ERR] = 5;
	q2->total[PC_RCV_ERR] = 9;
	q2->last_read = 10.0;
	pc_expire_deltas(st, 10.0);
	ck_assert_uint_eq(q2->delta[PC_RCV_ERR], 5);
	pc_expire_deltas(st, 10.5);
	ck_assert_uint_eq(q2->delta[PC_RCV_ERR], 0);
	ck_assert_uint_eq(q2->total[PC_RCV_ERR], 9);
	ck_assert_int_eq(pc_id_by_name("SymbolErrorCounter"), PC_SYMBOL_ERR);
	ck_assert_int_eq(pc_id_by_name("portxmitwait"), PC_XMIT_WAIT);
	ck_assert_int_eq(pc_id_by_name("nothing"), -1);
	ck_assert_int_eq(pc_store_new(&(struct pc_store *){ NULL }, 0), -EINVAL);
}
END_TEST

static bool keep_odd_guid(void *arg, const struct pc_port *p)
{
	(void)arg;
	return p->node_guid & 1;
}

/* Many ports: the hash grows with them, every one is found, the bound
 * holds, removal keeps the rest findable. */
START_TEST(test_many_ports)
{
	struct pc_store *big;
	const unsigned n = 20000;

	ck_assert_int_eq(pc_store_new(&big, n), 0);
	for (unsigned i = 0; i < n; i++) {
		struct pc_port *p = pc_get(big, 0x1000 + i / 4, (uint8_t)(i % 4 + 1));

		ck_assert_ptr_nonnull(p);
		p->total[PC_RCV_ERR] = i;
	}
	ck_assert_ptr_null(pc_get(big, 1, 1));
	for (unsigned i = 0; i < n; i++) {
		struct pc_port *p = pc_find(big, 0x1000 + i / 4, (uint8_t)(i % 4 + 1));

		CHECK(p && p->total[PC_RCV_ERR] == i, "port %u lost", i);
	}
	ck_assert_uint_eq(pc_remove_if(big, keep_odd_guid, NULL), n / 2);
	for (unsigned i = 0; i < n; i++) {
		struct pc_port *p = pc_find(big, 0x1000 + i / 4, (uint8_t)(i % 4 + 1));

		CHECK(((0x1000 + i / 4) & 1) ? p && p->total[PC_RCV_ERR] == i : !p,
		      "port %u after removal", i);
	}
	pc_store_free(big);
}
END_TEST

/* Readings from a hostile PMA, at random: totals never decrease, deltas
 * of the narrow counters stay within their range, 64-bit deltas within
 * what the elapsed time allows. */
START_TEST(test_random_readings)
{
	struct pc_port *p = pc_get(st, 0x6666, 1);
	struct pc_result r;
	uint64_t x = 88172645463325252ull;
	uint64_t prev_total[PC_N] = { 0 };
	uint8_t prev_width[PC_N] = { 0 };

	for (int k = 0; k < 5000; k++) {
		struct pma_sample s;
		uint8_t *b = (uint8_t *)&s;

		for (size_t i = 0; i < sizeof(s); i++) {
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			b[i] = (uint8_t)x;
		}
		s.has_ext = x & 1;
		pc_update(p, 1, &s, k, &r);
		for (int i = 0; i < PC_N; i++) {
			CHECK(p->total[i] >= prev_total[i], "total %d went down", i);
			/* (a first reading of a counter is its value) */
			if (p->width[i] && p->width[i] < 64)
				CHECK(p->delta[i] < 1ull << p->width[i], "delta %d too big", i);
			else if (p->width[i] == prev_width[i])
				CHECK(p->delta[i] <= 1ull << 62, "delta %d huge", i);
			prev_total[i] = p->total[i];
			prev_width[i] = p->width[i];
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("counters");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_first_read_and_deltas);
	tcase_add_test(tc, test_external_clear);
	tcase_add_test(tc, test_saturation);
	tcase_add_test(tc, test_jump_2_63);
	tcase_add_test(tc, test_ext_backwards);
	tcase_add_test(tc, test_width_change);
	tcase_add_test(tc, test_total_saturates);
	tcase_add_test(tc, test_needs_clear);
	tcase_add_test(tc, test_bound_find_remove);
	tcase_add_test(tc, test_random_readings);
	tcase_add_test(tc, test_many_ports);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
