/*
 * check_sweep_policy.c - the heavy sweep's failure policy
 * (sm/sweep_policy.c) as a table: what went wrong in a sweep, how many
 * sweeps failed before it, -o or daemon -> accept, degraded, retry or
 * exclude.
 *
 * The rows "mute switch ..." hold the policy to accepting a sweep with
 * an unacknowledged Set: otherwise one switch dropping its LFT Sets would
 * keep the subnet down for good.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>

#include "sm/sweep_policy.h"

struct row {
	const char *name;
	struct sweep_tally t;
	enum sweep_verdict want;
};

#define N SWEEP_ACCEPT_AFTER

static const struct row rows[] = {
	{ "clean", { 0 }, SWEEP_ACCEPT },
	{ "clean after failures", { .failed_sweeps = 7 }, SWEEP_ACCEPT },
	{ "clean -o", { .once = true }, SWEEP_ACCEPT },

	/* holes in the discovery */
	{ "hole, first sweep", { .failed_queries = 1 }, SWEEP_RETRY },
	{ "dead end, first sweep", { .dead_ends = 2 }, SWEEP_RETRY },
	{ "hole, one short of patience", { .dead_ends = 1,
	  .failed_sweeps = N - 1 }, SWEEP_RETRY },
	{ "hole, daemon out of patience", { .dead_ends = 1,
	  .failed_sweeps = N }, SWEEP_DEGRADED },
	{ "hole, -o never accepts", { .failed_queries = 1,
	  .failed_sweeps = 100, .once = true }, SWEEP_RETRY },

	/* twins: left out, never a reason to fail */
	{ "twin", { .twins = 1 }, SWEEP_DEGRADED },
	{ "twin -o", { .twins = 3, .once = true }, SWEEP_DEGRADED },

	/* a switch that does not acknowledge its Sets */
	{ "mute switch, first sweep", { .unacked_nodes = 1 }, SWEEP_RETRY },
	{ "mute switch, one short", { .unacked_nodes = 1,
	  .failed_sweeps = N - 1 }, SWEEP_RETRY },
	{ "mute switch, excluded", { .unacked_nodes = 1,
	  .failed_sweeps = N }, SWEEP_EXCLUDE },
	{ "mute switch, excluded -o", { .unacked_nodes = 2,
	  .failed_sweeps = N, .once = true }, SWEEP_EXCLUDE },
	{ "excluded switch still mute", { .unacked_excluded = 1,
	  .failed_sweeps = N + 1 }, SWEEP_DEGRADED },
	{ "excluded switch still mute, next day", { .unacked_excluded = 1 },
	  SWEEP_DEGRADED },
	{ "excluded and a new mute one", { .unacked_excluded = 1,
	  .unacked_nodes = 1 }, SWEEP_RETRY },
	{ "excluded -o", { .unacked_excluded = 1, .once = true },
	  SWEEP_DEGRADED },

	/* combinations */
	{ "hole and mute, daemon out of patience", { .dead_ends = 1,
	  .unacked_nodes = 1, .failed_sweeps = N }, SWEEP_EXCLUDE },
	{ "hole -o and mute", { .dead_ends = 1, .unacked_nodes = 1,
	  .failed_sweeps = N, .once = true }, SWEEP_RETRY },
	{ "twin and excluded", { .twins = 1, .unacked_excluded = 1 },
	  SWEEP_DEGRADED },
};

START_TEST(table)
{
	const struct row *r = &rows[_i];
	enum sweep_verdict got = sweep_decide(&r->t);

	ck_assert_msg(got == r->want, "%s: %s, want %s", r->name,
		      sweep_verdict_str(got), sweep_verdict_str(r->want));
}
END_TEST

/* Every sequence of sweeps with one switch that never acknowledges ends
 * with the subnet up, in a bounded number of sweeps (daemon and -o). */
START_TEST(mute_switch_converges)
{
	for (int once = 0; once <= 1; once++) {
		struct sweep_tally t = { .once = once };
		bool excluded = false;
		unsigned sweeps;

		for (sweeps = 1; sweeps < 20; sweeps++) {
			t.unacked_nodes = excluded ? 0 : 1;
			t.unacked_excluded = excluded ? 1 : 0;
			enum sweep_verdict v = sweep_decide(&t);
			if (v == SWEEP_DEGRADED || v == SWEEP_ACCEPT)
				break;
			if (v == SWEEP_EXCLUDE)
				excluded = true;
			t.failed_sweeps++;
		}
		ck_assert_uint_eq(sweeps, N + 2);
		ck_assert(excluded);
	}
}
END_TEST

START_TEST(verdict_names)
{
	ck_assert_str_eq(sweep_verdict_str(SWEEP_ACCEPT), "accept");
	ck_assert_str_eq(sweep_verdict_str(SWEEP_DEGRADED), "degraded");
	ck_assert_str_eq(sweep_verdict_str(SWEEP_RETRY), "retry");
	ck_assert_str_eq(sweep_verdict_str(SWEEP_EXCLUDE), "exclude");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sweep_policy");
	TCase *tc = tcase_create("policy");
	SRunner *sr;
	int failed;

	tcase_add_loop_test(tc, table, 0, (int)(sizeof(rows) / sizeof(rows[0])));
	tcase_add_test(tc, mute_switch_converges);
	tcase_add_test(tc, verdict_names);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
