/*
 * check_guidmap.c - the GUID hash table (model/guidmap.c): insert, find,
 * replace, backward-shift removal against a reference array, growth.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "model/guidmap.h"

#define CHECK(expr, ...)	do { if (!(expr)) ck_abort_msg(__VA_ARGS__); } while (0)

START_TEST(empty_finds_nothing)
{
	struct guidmap m;

	guidmap_init(&m);
	ck_assert_uint_eq(guidmap_find(&m, 0), GUIDMAP_NONE);
	ck_assert_uint_eq(guidmap_find(&m, 42), GUIDMAP_NONE);
	ck_assert_uint_eq(guidmap_remove(&m, 42), GUIDMAP_NONE);
	guidmap_free(&m);
}
END_TEST

START_TEST(insert_replace_zero_key)
{
	struct guidmap m;

	guidmap_init(&m);
	ck_assert_int_eq(guidmap_insert(&m, 0, 7), 0);	/* GUID 0 is a key */
	ck_assert_int_eq(guidmap_insert(&m, 5, 8), 0);
	ck_assert_int_eq(guidmap_insert(&m, 5, 9), 0);	/* replaces */
	ck_assert_uint_eq(guidmap_count(&m), 2);
	ck_assert_uint_eq(guidmap_find(&m, 0), 7);
	ck_assert_uint_eq(guidmap_find(&m, 5), 9);
	ck_assert_int_eq(guidmap_insert(&m, 6, GUIDMAP_NONE), -EINVAL);
	ck_assert_uint_eq(guidmap_remove(&m, 0), 7);
	ck_assert_uint_eq(guidmap_find(&m, 0), GUIDMAP_NONE);
	guidmap_clear(&m);
	ck_assert_uint_eq(guidmap_count(&m), 0);
	ck_assert_uint_eq(guidmap_find(&m, 5), GUIDMAP_NONE);
	guidmap_free(&m);
}
END_TEST

/* Random inserts and removals over a small key space (long probe chains
 * that wrap round), checked against a plain array after every step. */
START_TEST(random_against_reference)
{
	enum { KEYS = 300, STEPS = 20000 };
	static uint32_t ref[KEYS];
	struct guidmap m;
	unsigned seed = 12345u + (unsigned)_i;

	guidmap_init(&m);
	for (size_t k = 0; k < KEYS; k++)
		ref[k] = GUIDMAP_NONE;
	for (int step = 0; step < STEPS; step++) {
		size_t k = (size_t)rand_r(&seed) % KEYS;
		uint64_t guid = _i ? 0x0002c90300000000ull + k	/* sequential */
				   : (uint64_t)k << 40;		/* high bits */

		if (rand_r(&seed) % 3) {
			uint32_t v = (uint32_t)rand_r(&seed) % 1000;

			ck_assert_int_eq(guidmap_insert(&m, guid, v), 0);
			ref[k] = v;
		} else {
			CHECK(guidmap_remove(&m, guid) == ref[k], "remove %zu", k);
			ref[k] = GUIDMAP_NONE;
		}
		if (step % 97)
			continue;

		size_t n = 0;

		for (size_t j = 0; j < KEYS; j++) {
			uint64_t g = _i ? 0x0002c90300000000ull + j : (uint64_t)j << 40;

			CHECK(guidmap_find(&m, g) == ref[j], "step %d key %zu: %u != %u",
			      step, j, guidmap_find(&m, g), ref[j]);
			n += ref[j] != GUIDMAP_NONE;
		}
		CHECK(guidmap_count(&m) == n, "count %zu != %zu", guidmap_count(&m), n);
		CHECK(2 * n <= m.size, "load %zu in %zu", n, m.size);
	}
	guidmap_free(&m);
}
END_TEST

START_TEST(grows_to_many)
{
	enum { N = 100000 };
	struct guidmap m;

	guidmap_init(&m);
	ck_assert_int_eq(guidmap_reserve(&m, 10), 0);
	for (uint32_t i = 0; i < N; i++)
		CHECK(guidmap_insert(&m, 0x0008f10400000000ull + i, i) == 0, "insert %u", i);
	for (uint32_t i = 0; i < N; i++)
		CHECK(guidmap_find(&m, 0x0008f10400000000ull + i) == i, "find %u", i);
	CHECK(2 * N <= m.size && (m.size & (m.size - 1)) == 0, "size %zu", m.size);
	for (uint32_t i = 0; i < N; i += 2)
		CHECK(guidmap_remove(&m, 0x0008f10400000000ull + i) == i, "remove %u", i);
	for (uint32_t i = 0; i < N; i++)
		CHECK(guidmap_find(&m, 0x0008f10400000000ull + i) == (i % 2 ? i : GUIDMAP_NONE),
		      "after removal %u", i);
	guidmap_free(&m);
}
END_TEST

static Suite *guidmap_suite(void)
{
	Suite *s = suite_create("guidmap");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, empty_finds_nothing);
	tcase_add_test(tc, insert_replace_zero_key);
	tcase_add_loop_test(tc, random_against_reference, 0, 2);
	tcase_add_test(tc, grows_to_many);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(guidmap_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
