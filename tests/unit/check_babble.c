/*
 * check_babble.c - babbling_port_policy's bookkeeping (sm/babble.h):
 * the repeat counter with OpenSM's aging, the verdict past 250 repeats
 * and the port chosen to disable.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "model/fabric.h"
#include "sm/babble.h"

static struct babble_key key(uint16_t slid, uint16_t lid, uint8_t port,
			     uint64_t hash)
{
	return (struct babble_key){ .slid = slid, .lid = lid, .port = port,
				    .hash = hash };
}

/* n identical traps, `gap` seconds apart from t0: the last slot. */
static struct babble_slot *send_n(struct babble_table *t,
				  const struct babble_key *k, unsigned n,
				  double t0, double gap)
{
	struct babble_slot *s = NULL;

	for (unsigned i = 0; i < n; i++)
		s = babble_count(t, k, t0 + i * gap);
	return s;
}

START_TEST(counts_repeats)
{
	struct babble_table *t = calloc(1, sizeof(*t));
	struct babble_key k = key(5, 5, 3, 0x1234);
	struct babble_slot *s;

	s = babble_count(t, &k, 100.0);
	ck_assert_uint_eq(s->repeats, 0);
	s = babble_count(t, &k, 100.1);
	ck_assert_uint_eq(s->repeats, 1);
	/* 251 identical traps: 250 repeats, the threshold */
	s = send_n(t, &k, 249, 100.2, 0.01);
	ck_assert_uint_eq(s->repeats, 250);
	free(t);
}
END_TEST

/* A different sender, port or Notice is another trap. */
START_TEST(keys_apart)
{
	struct babble_table *t = calloc(1, sizeof(*t));
	struct babble_key k = key(5, 5, 3, 0x1234);
	struct babble_key other[] = { key(6, 5, 3, 0x1234),
				      key(5, 5, 4, 0x1234),
				      key(5, 7, 3, 0x1234),
				      key(5, 5, 3, 0x1235) };

	send_n(t, &k, 10, 1.0, 0.1);
	for (unsigned i = 0; i < 4; i++)
		ck_assert_uint_eq(babble_count(t, &other[i], 2.0)->repeats, 0);
	ck_assert_uint_eq(babble_count(t, &k, 2.1)->repeats, 10);
	free(t);
}
END_TEST

/* OpenSM's aging: 5 s between traps restarts the count, 60 s once the
 * trap has repeated 10 times. */
START_TEST(aging)
{
	struct babble_table *t = calloc(1, sizeof(*t));
	struct babble_key k = key(5, 5, 3, 1);
	struct babble_slot *s;

	s = send_n(t, &k, 5, 0.0, 1.0);		/* 0..4 s */
	ck_assert_uint_eq(s->repeats, 4);
	s = babble_count(t, &k, 4.0 + BABBLE_AGE + 0.01);
	ck_assert_uint_eq(s->repeats, 0);
	/* past 10 repeats a 30 s pause keeps the count */
	s = send_n(t, &k, 12, 100.0, 1.0);	/* 100..111 s */
	ck_assert_uint_eq(s->repeats, 11);
	s = babble_count(t, &k, 141.0);
	ck_assert_uint_eq(s->repeats, 12);
	s = babble_count(t, &k, 141.0 + BABBLE_AGE_NOISY + 0.01);
	ck_assert_uint_eq(s->repeats, 0);
	free(t);
}
END_TEST

/* A full table: a new key takes a free or expired slot, else the one
 * that expires first.  A flood of one-off traps from many LIDs (5 s
 * each) does not push out a port that has repeated 10 times (60 s), but
 * does push out a trap seen once. */
START_TEST(full_table)
{
	struct babble_table *t = calloc(1, sizeof(*t));
	struct babble_key k = key(9, 9, 1, 42), once = key(8, 8, 1, 43);
	struct babble_slot *s;

	send_n(t, &k, 20, 0.0, 0.01);
	babble_count(t, &once, 0.195);
	for (unsigned i = 0; i < 3 * BABBLE_SLOTS; i++) {
		struct babble_key x = key((uint16_t)(100 + i), 100, 1, i);

		babble_count(t, &x, 0.2 + i * 0.001);
	}
	s = babble_count(t, &k, 1.0);
	ck_assert_uint_eq(s->repeats, 20);
	s = babble_count(t, &once, 1.0);
	ck_assert_uint_eq(s->repeats, 0);
	/* expired slots are taken before live ones */
	s = babble_count(t, &k, 1.1);
	ck_assert_uint_eq(s->repeats, 21);
	for (unsigned i = 0; i < BABBLE_SLOTS - 1; i++) {
		struct babble_key x = key((uint16_t)(5000 + i), 100, 1, i);

		babble_count(t, &x, 30.0);
	}
	ck_assert_uint_eq(babble_count(t, &k, 31.0)->repeats, 22);
	free(t);
}
END_TEST

START_TEST(verdicts)
{
	struct babble_slot s = { .repeats = BABBLE_REPEATS - 1 };

	ck_assert_int_eq(babble_decide(&s, true, true), BABBLE_COUNTING);
	s.repeats = BABBLE_REPEATS;
	ck_assert_int_eq(babble_decide(&s, true, true), BABBLE_DISABLE);
	/* once */
	s.repeats++;
	ck_assert_int_eq(babble_decide(&s, true, true), BABBLE_DONE);

	struct babble_slot off = { .repeats = BABBLE_REPEATS };
	ck_assert_int_eq(babble_decide(&off, false, true), BABBLE_POLICY_OFF);
	ck_assert_int_eq(babble_decide(&off, false, true), BABBLE_DONE);

	/* a port of another node: never disabled, said once */
	struct babble_slot forged = { .repeats = 1000 };
	ck_assert_int_eq(babble_decide(&forged, true, false), BABBLE_FOREIGN);
	ck_assert_int_eq(babble_decide(&forged, true, false), BABBLE_DONE);
}
END_TEST

START_TEST(hash_whole_notice)
{
	uint8_t a[80] = { 0 }, b[80] = { 0 };

	ck_assert(babble_hash(a, sizeof(a)) == babble_hash(b, sizeof(b)));
	b[79] = 1;
	ck_assert(babble_hash(a, sizeof(a)) != babble_hash(b, sizeof(b)));
}
END_TEST

/*
 * sw0 (the SM's switch, hops 0 from a CA at hops 0... here: sw0 1 hop)
 * port 1 - H (2 hops), sw0 port 2 - sw1 port 1 (2 hops), sw1 port 2 - H2.
 */
START_TEST(target_nearest_end)
{
	struct fabric f;
	int32_t sw0, sw1, h, h2, tid;
	uint8_t tpn;

	fabric_init(&f);
	sw0 = fabric_add_node(&f, 0x10, NODE_TYPE_SWITCH, 4);
	sw1 = fabric_add_node(&f, 0x20, NODE_TYPE_SWITCH, 4);
	h = fabric_add_node(&f, 0x30, NODE_TYPE_CA, 1);
	h2 = fabric_add_node(&f, 0x40, NODE_TYPE_CA, 1);
	fabric_node(&f, sw0)->hops = 1;
	fabric_node(&f, sw1)->hops = 2;
	fabric_node(&f, h)->hops = 2;
	fabric_node(&f, h)->ports[1].hops = 2;
	fabric_node(&f, h)->ports[1].guid = 0x31;
	fabric_node(&f, h2)->hops = 3;
	fabric_node(&f, h2)->ports[1].hops = 3;
	fabric_node(&f, h2)->ports[1].guid = 0x41;
	ck_assert_int_eq(fabric_link(&f, sw0, 1, h, 1), 0);
	ck_assert_int_eq(fabric_link(&f, sw0, 2, sw1, 1), 0);
	ck_assert_int_eq(fabric_link(&f, sw1, 2, h2, 1), 0);

	/* a CA's port: the switch port facing it */
	ck_assert(babble_target(&f, h, 1, &tid, &tpn));
	ck_assert_int_eq(tid, sw0);
	ck_assert_uint_eq(tpn, 1);
	ck_assert(babble_target(&f, h2, 1, &tid, &tpn));
	ck_assert_int_eq(tid, sw1);
	ck_assert_uint_eq(tpn, 2);
	/* a switch port facing a CA: itself */
	ck_assert(babble_target(&f, sw1, 2, &tid, &tpn));
	ck_assert_int_eq(tid, sw1);
	ck_assert_uint_eq(tpn, 2);
	/* between switches: the end nearer the SM */
	ck_assert(babble_target(&f, sw1, 1, &tid, &tpn));
	ck_assert_int_eq(tid, sw0);
	ck_assert_uint_eq(tpn, 2);
	ck_assert(babble_target(&f, sw0, 2, &tid, &tpn));
	ck_assert_int_eq(tid, sw0);
	ck_assert_uint_eq(tpn, 2);
	/* no link, no port */
	ck_assert(!babble_target(&f, sw0, 3, &tid, &tpn));
	ck_assert(!babble_target(&f, sw0, 0, &tid, &tpn));
	ck_assert(!babble_target(&f, h, 2, &tid, &tpn));
	fabric_free(&f);
}
END_TEST

static Suite *babble_suite(void)
{
	Suite *s = suite_create("babble");
	TCase *tc = tcase_create("babble");

	tcase_add_test(tc, counts_repeats);
	tcase_add_test(tc, keys_apart);
	tcase_add_test(tc, aging);
	tcase_add_test(tc, full_table);
	tcase_add_test(tc, verdicts);
	tcase_add_test(tc, hash_whole_notice);
	tcase_add_test(tc, target_nearest_end);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(babble_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
