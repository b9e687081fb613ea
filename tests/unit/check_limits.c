/*
 * check_limits.c - the limits as options (config/limits.c): every one parsed
 * through getopt_long as ibsm does, its range enforced with a message
 * that names the option and the range, its default and the "limits:"
 * line; and the effect of some through the option path: the log's rate
 * limiter, the receive queue and its shares, the trap budgets, the
 * engine's GMP queue.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/rxq.h"
#include "config/conf.h"
#include "config/limits.h"
#include "sm/log.h"
#include "sm/sm.h"

#define FIRST 1000

/* Parse argv as ibsm's main does for the limits; 0 or -EINVAL. */
static int parse(struct sm_config *c, char *err, size_t errlen, int argc,
		 char **argv)
{
	struct option opts[64];
	int ch;

	ck_assert_uint_lt(n_limit_opts, 63);
	opts[limits_longopts(opts, FIRST)] = (struct option){ 0 };
	optind = 0;		/* glibc: a full re-initialisation */
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch < FIRST || ch >= FIRST + (int)n_limit_opts) {
			snprintf(err, errlen, "unknown option");
			return -EINVAL;
		}
		if (limit_parse(c, (size_t)(ch - FIRST), optarg, err, errlen) < 0)
			return -EINVAL;
	}
	return 0;
}

static int parse1(struct sm_config *c, char *err, const char *opt,
		  const char *val)
{
	char o[64], v[64];
	char *argv[] = { (char *)"ibsm", o, v, NULL };

	snprintf(o, sizeof(o), "--%s", opt);
	snprintf(v, sizeof(v), "%s", val);
	err[0] = '\0';
	return parse(c, err, 256, 3, argv);
}

static size_t index_of(const char *name)
{
	for (size_t i = 0; i < n_limit_opts; i++)
		if (!strcmp(limit_opts[i].name, name))
			return i;
	ck_abort_msg("no limit %s", name);
	return 0;
}

/* The options the issue asks for exist, each with a sane table entry. */
START_TEST(test_table)
{
	static const char *const names[] = {
		"trap-sources", "trap-burst", "trap-rate", "trap-holdoff-ms",
		"trap-sweep-interval", "log-burst", "log-rate",
		"max-queued-smps", "max-queued-gmps", "rx-queue",
		"sa-max-jobs", "sa-jobs-per-port", "sa-work-budget",
		"sa-answer-bytes", "sa-max-transfers", "sa-transfers-per-port",
		"sa-max-services", "sa-services-per-port", "sa-max-lease",
		"sa-max-subscriptions", "sa-subscriptions-per-port",
		"sa-report-queue", "sa-report-failures", "mc-max-groups",
		"mc-members-per-group", "mc-groups-per-port",
	};
	ck_assert_uint_eq(n_limit_opts, sizeof(names) / sizeof(names[0]));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct cfg_key *l = &limit_opts[index_of(names[i])];
		bool real = l->type == CFG_REAL;

		ck_assert(l->min > 0);		/* 0 is the "default" marker */
		ck_assert(l->min <= l->num && l->num <= l->max);
		ck_assert(l->off + l->size <= sizeof(struct sm_config));
		/* a double, or an integer: an unsigned or a uint64_t */
		ck_assert(real ? l->size == sizeof(double) :
			  l->type == CFG_INT &&
			  (l->size == sizeof(unsigned) ||
			   l->size == sizeof(uint64_t)));
		for (size_t j = 0; j < i; j++)
			ck_assert_uint_ne(index_of(names[j]), index_of(names[i]));
	}
}
END_TEST

/* The limits are keys of the one table: its last n_limit_opts entries,
 * each found by name, with its default as text; no other key is one. */
START_TEST(test_keys)
{
	size_t n, idx;
	const struct cfg_key *k = cfg_keys(&n);

	ck_assert_uint_gt(n, n_limit_opts);
	ck_assert_ptr_eq(limit_opts, k + n - n_limit_opts);
	for (size_t i = 0; i < n; i++) {
		bool limit = i >= n - n_limit_opts;

		ck_assert_int_eq((k[i].flags & CFG_LIMIT) != 0, limit);
		ck_assert_int_eq(k[i].field == F_LIMIT, limit);
		if (!limit)
			continue;
		char def[32];

		snprintf(def, sizeof(def), "%.15g", k[i].num);
		ck_assert_str_eq(k[i].def, def);
		ck_assert_ptr_eq(cfg_key_find(k[i].name, &idx), &k[i]);
		ck_assert_uint_eq(idx, i);
	}
}
END_TEST

/* Defaults: what the code used before the options existed. */
START_TEST(test_defaults)
{
	struct sm_config c = { 0 }, z = { 0 };
	char line[1024];

	limits_defaults(&c);
	ck_assert_uint_eq(c.trap_sources, 256);
	ck_assert_uint_eq(c.trap_burst, 8);
	ck_assert(c.trap_rate == 2.0);
	ck_assert_uint_eq(c.trap_holdoff_ms, 200);
	ck_assert(c.trap_sweep_interval == 5.0);
	ck_assert_uint_eq(c.log_burst, 10);
	ck_assert(c.log_rate == 1.0);
	ck_assert_uint_eq(c.max_queued_smps, 1u << 20);
	ck_assert_uint_eq(c.max_queued_gmps, 4096);
	ck_assert_uint_eq(c.rx_queue, 4096);
	ck_assert_uint_eq(c.sa_max_jobs, 16);
	ck_assert_uint_eq(c.sa_jobs_per_port, 2);
	ck_assert_uint_eq(c.sa_work_budget, 2097152);
	ck_assert_uint_eq(c.sa_answer_bytes, 8u << 20);
	ck_assert_uint_eq(c.sa_max_lease, 86400);
	ck_assert_uint_eq(c.sa_report_failures, 3);
	ck_assert_uint_eq(c.mc_max_groups, 4096);
	ck_assert_uint_eq(c.mc_members_per_group, 65536);
	ck_assert_uint_eq(c.mc_groups_per_port, 256);
	/* A config left zero (a test's) means the same values. */
	for (size_t i = 0; i < n_limit_opts; i++)
		ck_assert(limit_value(&z, i) == limit_value(&c, i));
	limits_format(&c, line, sizeof(line));
	ck_assert_str_eq(line, "trap-sources 256, trap-burst 8, trap-rate 2,"
			 " trap-holdoff-ms 200, trap-sweep-interval 5,"
			 " log-burst 10, log-rate 1, max-queued-smps 1048576,"
			 " max-queued-gmps 4096, rx-queue 4096, sa-max-jobs 16,"
			 " sa-jobs-per-port 2, sa-work-budget 2097152,"
			 " sa-answer-bytes 8388608, sa-max-transfers 256,"
			 " sa-transfers-per-port 4, sa-max-services 4096,"
			 " sa-services-per-port 64, sa-max-lease 86400,"
			 " sa-max-subscriptions 1024, sa-subscriptions-per-port 16,"
			 " sa-report-queue 4, sa-report-failures 3,"
			 " mc-max-groups 4096, mc-members-per-group 65536,"
			 " mc-groups-per-port 256");
	/* Cut short: still a string, and the length it wanted. */
	ck_assert_int_eq(limits_format(&c, line, 10), (int)strlen(
		"trap-sources 256, trap-burst 8, trap-rate 2,"
		" trap-holdoff-ms 200, trap-sweep-interval 5,"
		" log-burst 10, log-rate 1, max-queued-smps 1048576,"
		" max-queued-gmps 4096, rx-queue 4096, sa-max-jobs 16,"
		" sa-jobs-per-port 2, sa-work-budget 2097152,"
		" sa-answer-bytes 8388608, sa-max-transfers 256,"
		" sa-transfers-per-port 4, sa-max-services 4096,"
		" sa-services-per-port 64, sa-max-lease 86400,"
		" sa-max-subscriptions 1024, sa-subscriptions-per-port 16,"
		" sa-report-queue 4, sa-report-failures 3,"
		" mc-max-groups 4096, mc-members-per-group 65536,"
		" mc-groups-per-port 256"));
	ck_assert_str_eq(line, "trap-sour");
}
END_TEST

/* Each option: both ends of its range taken, one step beyond refused
 * with a message naming the option, the value and the range. */
START_TEST(test_ranges)
{
	for (size_t i = 0; i < n_limit_opts; i++) {
		const struct cfg_key *l = &limit_opts[i];
		bool real = l->type == CFG_REAL;
		struct sm_config c = { 0 };
		char err[256], v[64], want[128];
		double step = real ? l->min / 2 : 1;

		snprintf(v, sizeof(v), "%.15g", l->min);
		ck_assert_int_eq(parse1(&c, err, l->name, v), 0);
		ck_assert(limit_value(&c, i) == l->min);
		snprintf(v, sizeof(v), "%.15g", l->max);
		ck_assert_int_eq(parse1(&c, err, l->name, v), 0);
		ck_assert(limit_value(&c, i) == l->max);

		snprintf(v, sizeof(v), "%.15g", l->min - step);
		ck_assert_int_eq(parse1(&c, err, l->name, v), -EINVAL);
		snprintf(want, sizeof(want), "--%s %s: expected ", l->name, v);
		ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
		snprintf(want, sizeof(want), "%.15g-%.15g %s", l->min, l->max,
			 l->unit);
		ck_assert_msg(strstr(err, want), "%s: no '%s'", err, want);
		/* refused: the value in force did not change */
		ck_assert(limit_value(&c, i) == l->max);

		snprintf(v, sizeof(v), "%.15g", l->max + 1);
		ck_assert_int_eq(parse1(&c, err, l->name, v), -EINVAL);
		ck_assert_msg(strstr(err, l->name), "%s", err);
		ck_assert_int_eq(parse1(&c, err, l->name, "0"), -EINVAL);
		ck_assert_int_eq(parse1(&c, err, l->name, ""), -EINVAL);
		ck_assert_int_eq(parse1(&c, err, l->name, "12abc"), -EINVAL);
		ck_assert_int_eq(parse1(&c, err, l->name, "-5"), -EINVAL);
		ck_assert_int_eq(parse1(&c, err, l->name, "nan"), -EINVAL);
		ck_assert_int_eq(parse1(&c, err, l->name, "1e999"), -EINVAL);
		if (!real) {
			snprintf(v, sizeof(v), "%.15g", l->num + 0.5);
			ck_assert_int_eq(parse1(&c, err, l->name, v), -EINVAL);
			ck_assert_msg(strstr(err, "an integer"), "%s", err);
		}
	}
}
END_TEST

/* Several at once, --name=value too, hex for counts. */
START_TEST(test_several)
{
	struct sm_config c = { 0 };
	char err[256] = "";
	char *argv[] = { (char *)"ibsm", (char *)"--trap-rate=0.5",
			 (char *)"--rx-queue", (char *)"0x100",
			 (char *)"--sa-jobs-per-port", (char *)"1",
			 (char *)"--trap-holdoff-ms=50", NULL };

	limits_defaults(&c);
	ck_assert_int_eq(parse(&c, err, sizeof(err), 7, argv), 0);
	ck_assert(c.trap_rate == 0.5);
	ck_assert_uint_eq(c.rx_queue, 256);
	ck_assert_uint_eq(c.sa_jobs_per_port, 1);
	ck_assert_uint_eq(c.trap_holdoff_ms, 50);
	ck_assert_uint_eq(c.trap_burst, 8);	/* untouched: its default */
}
END_TEST

/* The trap limits as state.c reads them (sm.h accessors). */
START_TEST(test_trap_accessors)
{
	struct sm *sm = calloc(1, sizeof(*sm));
	char err[256];

	ck_assert_ptr_nonnull(sm);
	/* zero config: the old constants */
	ck_assert_uint_eq(sm_trap_sources(sm), SM_TRAP_SOURCES);
	ck_assert(sm_trap_burst(sm) == SM_TRAP_BURST);
	ck_assert(sm_trap_rate(sm) == SM_TRAP_RATE);
	ck_assert(fabs(sm_trap_holdoff(sm) - SM_TRAP_HOLDOFF) < 1e-9);
	ck_assert(sm_trap_sweep_interval(sm) == SM_TRAP_SWEEP_INTERVAL);
	ck_assert_int_eq(parse1(&sm->cfg, err, "trap-sources", "4096"), 0);
	ck_assert_int_eq(parse1(&sm->cfg, err, "trap-burst", "3"), 0);
	ck_assert_int_eq(parse1(&sm->cfg, err, "trap-rate", "0.25"), 0);
	ck_assert_int_eq(parse1(&sm->cfg, err, "trap-holdoff-ms", "1500"), 0);
	ck_assert_int_eq(parse1(&sm->cfg, err, "trap-sweep-interval", "0.5"), 0);
	ck_assert_uint_eq(sm_trap_sources(sm), 4096);
	ck_assert_uint_le(sm_trap_sources(sm), SM_TRAP_SOURCES_MAX);
	ck_assert(sm_trap_burst(sm) == 3);
	ck_assert(sm_trap_rate(sm) == 0.25);
	ck_assert(fabs(sm_trap_holdoff(sm) - 1.5) < 1e-9);
	ck_assert(sm_trap_sweep_interval(sm) == 0.5);
	ck_assert_int_eq(parse1(&sm->cfg, err, "trap-sources", "4097"), -EINVAL);
	free(sm);
}
END_TEST

static double fake_now;
static double clock_fn(void) { return fake_now; }

/* --log-burst and --log-rate reach the rate limiter: 3 lines at once,
 * then one per 4 s. */
START_TEST(test_log_rate)
{
	struct sm_config c = { 0 };
	char err[256];
	unsigned long before;

	ck_assert_int_eq(log_open("/dev/null", LOG_LVL_INFO), 0);
	log_ratelimit_clock(clock_fn);
	fake_now = 1000.;
	ck_assert_int_eq(parse1(&c, err, "log-burst", "3"), 0);
	ck_assert_int_eq(parse1(&c, err, "log-rate", "0.25"), 0);
	log_ratelimit_set(c.log_burst, c.log_rate);
	before = log_ratelimit_dropped_total();
	for (int i = 0; i < 10; i++)
		log_ratelimited(LOG_LVL_WARN, 9991, "line %d", i);
	ck_assert_uint_eq(log_ratelimit_dropped(9991), 7);
	ck_assert_uint_eq(log_ratelimit_dropped_total() - before, 7);
	fake_now += 3.9;		/* < one token at 0.25/s */
	log_ratelimited(LOG_LVL_WARN, 9991, "again");
	ck_assert_uint_eq(log_ratelimit_dropped(9991), 8);
	fake_now += 0.2;		/* 4.1 s: one token */
	log_ratelimited(LOG_LVL_WARN, 9991, "again");
	ck_assert_uint_eq(log_ratelimit_dropped(9991), 8);
	/* Back to the defaults: another code gets 10 at once. */
	log_ratelimit_set(0, 0);
	for (int i = 0; i < 12; i++)
		log_ratelimited(LOG_LVL_WARN, 9992, "line %d", i);
	ck_assert_uint_eq(log_ratelimit_dropped(9992), 12 - LOG_RL_BURST);
	log_ratelimit_clock(NULL);
	log_close();
}
END_TEST

static unsigned push_requests(struct rxq *q, uint16_t lid, unsigned n)
{
	struct mad_hdr h = { 0 };
	struct mad_addr from = { .lid = lid };
	unsigned ok = 0;

	h.method = MAD_METHOD_GET;
	for (unsigned i = 0; i < n; i++)
		ok += rxq_push(q, &h, sizeof(h), &from, 0) == 0;
	return ok;
}

/* --rx-queue sizes the receive queue, and its shares follow: requests at
 * most half of it, one source 1/16 of it. */
START_TEST(test_rx_queue)
{
	struct sm_config c = { 0 };
	struct rxq q;
	char err[256];
	unsigned total = 0;

	ck_assert_int_eq(parse1(&c, err, "rx-queue", "256"), 0);
	ck_assert_int_eq(rxq_init(&q, c.rx_queue), 0);
	ck_assert_uint_eq(q.stats.cap, 256);
	ck_assert_uint_eq(push_requests(&q, 5, 100), 256 / 16);
	for (uint16_t lid = 6; lid < 30; lid++)
		total += push_requests(&q, lid, 100);
	ck_assert_uint_eq(total + 256 / 16, 256 / 2);
	rxq_fini(&q);
}
END_TEST

static Suite *limits_suite(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = tcase_create("limits");

	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_keys);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_ranges);
	tcase_add_test(tc, test_several);
	tcase_add_test(tc, test_trap_accessors);
	tcase_add_test(tc, test_log_rate);
	tcase_add_test(tc, test_rx_queue);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(limits_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
