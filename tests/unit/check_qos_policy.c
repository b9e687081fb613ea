/*
 * check_qos_policy.c - qos/: OpenSM's QoS policy file grammar and the
 * resolved policy.
 *
 * Golden files: tests/qos/NAME.conf parsed and dumped (qos_dump) must
 * equal NAME.golden; QOS_UPDATE=1 in the environment rewrites the goldens
 * (review the diff before committing one).  Broken files: every
 * tests/qos/bad/NAME.conf must fail with exactly the line in NAME.err,
 * "bad/NAME.conf:LINE:COLUMN: expected ..., found ...".
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qos/qos.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s = NULL;
	size_t n = 0;

	if (!f)
		return NULL;
	s = malloc(1 << 20);
	if (s)
		n = fread(s, 1, (1 << 20) - 1, f);
	fclose(f);
	if (s)
		s[n] = 0;
	return s;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void golden(const char *name)
{
	char path[512], gpath[512];
	struct qos_policy p;
	struct qos_error e;
	char *got, *want;
	int rc;

	snprintf(path, sizeof(path), QOS_DIR "/%s.conf", name);
	snprintf(gpath, sizeof(gpath), QOS_DIR "/%s.golden", name);
	rc = qos_load(path, &p, &e);
	ck_assert_msg(rc == 0, "%s: rc %d at %u:%u: %s", name, rc, e.line,
		      e.col, e.msg);
	got = qos_dump(&p);
	ck_assert_ptr_nonnull(got);
	if (getenv("QOS_UPDATE"))
		put(gpath, got);
	want = slurp(gpath);
	ck_assert_msg(want != NULL, "no %s", gpath);
	ck_assert_str_eq(got, want);
	free(got);
	free(want);
	qos_policy_free(&p);
}

START_TEST(golden_opensm_doc) { golden("opensm-doc"); }
END_TEST
START_TEST(golden_setup) { golden("setup"); }
END_TEST
START_TEST(golden_ulps_only) { golden("ulps-only"); }
END_TEST

START_TEST(bad_files)
{
	DIR *dir = opendir(QOS_DIR "/bad");
	struct dirent *de;
	unsigned files = 0;

	ck_assert_ptr_nonnull(dir);
	while ((de = readdir(dir))) {
		size_t l = strlen(de->d_name);
		char path[512], epath[512], got[700];
		struct qos_policy p;
		struct qos_error e;
		char *want;
		int rc;

		if (l < 6 || strcmp(de->d_name + l - 5, ".conf"))
			continue;
		snprintf(path, sizeof(path), QOS_DIR "/bad/%s", de->d_name);
		snprintf(epath, sizeof(epath), QOS_DIR "/bad/%.*s.err",
			 (int)(l - 5), de->d_name);
		rc = qos_load(path, &p, &e);
		ck_assert_msg(rc == -EINVAL, "%s: rc %d", de->d_name, rc);
		ck_assert_ptr_null(p.levels);
		ck_assert_ptr_null(p.groups);
		snprintf(got, sizeof(got), "bad/%s:%u:%u: %s\n", de->d_name,
			 e.line, e.col, e.msg);
		if (getenv("QOS_UPDATE"))
			put(epath, got);
		want = slurp(epath);
		ck_assert_msg(want != NULL, "no %s", epath);
		ck_assert_str_eq(got, want);
		free(want);
		files++;
	}
	closedir(dir);
	ck_assert_uint_ge(files, 20);
}
END_TEST

static int parse_str(const char *s, struct qos_policy *p, struct qos_error *e)
{
	return qos_parse(s, strlen(s), p, e);
}

/* The shortest policies of the doc: both give a default level on SL 0. */
START_TEST(shortest)
{
	struct qos_policy p;
	struct qos_error e;

	ck_assert_int_eq(parse_str("qos-levels\n qos-level\n  name: DEFAULT\n"
				   "  sl: 0\n end-qos-level\nend-qos-levels\n",
				   &p, &e), 0);
	ck_assert_str_eq(p.levels[p.default_level].name, "DEFAULT");
	ck_assert_int_eq(p.levels[p.default_level].sl, 0);
	qos_policy_free(&p);
	ck_assert_int_eq(parse_str("qos-ulps\n default : 0 #default SL\n"
				   "end-qos-ulps", &p, &e), 0);
	ck_assert(p.levels[p.default_level].simple);
	ck_assert_int_eq(p.levels[p.default_level].sl, 0);
	ck_assert_uint_eq(p.n_rules, 0);
	qos_policy_free(&p);
}
END_TEST

/* Explicit rules come before the qos-ulps ones whatever the order of the
 * sections; a DEFAULT level wins over the ulps default; the ULP service
 * IDs are OpenSM's. */
START_TEST(ulps_after_rules)
{
	static const char text[] =
		"qos-ulps\n sdp, port-num 5 : 2\n rds : 3\n default : 7\n"
		"end-qos-ulps\n"
		"qos-levels\n qos-level\n  name: DEFAULT\n  sl: 1\n"
		" end-qos-level\nend-qos-levels\n"
		"qos-match-rules\n qos-match-rule\n  service-id: 9\n"
		"  qos-level-name: DEFAULT\n end-qos-match-rule\n"
		"end-qos-match-rules\n";
	struct qos_policy p;
	struct qos_error e;

	ck_assert_int_eq(parse_str(text, &p, &e), 0);
	ck_assert_uint_eq(p.n_rules, 3);
	ck_assert(!p.rules[0].from_ulp);
	ck_assert(p.rules[1].from_ulp && p.rules[2].from_ulp);
	ck_assert_uint_eq(p.rules[1].service_id.v[0].lo, 0x10005);
	ck_assert_uint_eq(p.rules[2].service_id.v[0].lo, 0x10648ca);
	ck_assert_int_eq(p.levels[p.rules[1].level].sl, 2);
	ck_assert_str_eq(p.levels[p.default_level].name, "DEFAULT");
	ck_assert_int_eq(p.levels[p.default_level].sl, 1);
	ck_assert_int_eq(qos_level_find(&p, "DEFAULT"),
			 (long)p.default_level);
	ck_assert_int_eq(qos_level_find(&p, "SimpleQoSLevel_SL2"), -1);
	qos_policy_free(&p);
}
END_TEST

/* Errors name the token found and where; CRLF and a missing last newline
 * change nothing; a NUL byte, an over-long file and over-long lists are
 * refused. */
START_TEST(errors_and_bounds)
{
	struct qos_policy p;
	struct qos_error e;
	char *big;

	ck_assert_int_eq(parse_str("qos-ulps\r\n default : 0\r\nend-qos-ulps",
				   &p, &e), 0);
	qos_policy_free(&p);
	ck_assert_int_eq(parse_str("qos-ulps\n  default : x\nend-qos-ulps\n",
				   &p, &e), -EINVAL);
	ck_assert_uint_eq(e.line, 2);
	ck_assert_uint_eq(e.col, 13);
	ck_assert_str_eq(e.msg, "expected a number, found 'x'");
	/* end of file: just past the last byte */
	ck_assert_int_eq(parse_str("qos-levels\n qos-level\n  name: X", &p,
				   &e), -EINVAL);
	ck_assert_uint_eq(e.line, 3);
	ck_assert_uint_eq(e.col, 10);
	ck_assert_str_eq(e.msg, "expected end-qos-level, found end of file");
	ck_assert_int_eq(parse_str("qos-levels\n", &p, &e), -EINVAL);
	ck_assert_uint_eq(e.line, 2);
	ck_assert_uint_eq(e.col, 1);
	ck_assert_int_eq(qos_parse("qos-ulps\n de\0fault", 17, &p, &e),
			 -EINVAL);
	ck_assert_uint_eq(e.line, 2);
	ck_assert_uint_eq(e.col, 4);
	big = malloc(QOS_MAX_FILE + 2);
	ck_assert_ptr_nonnull(big);
	memset(big, '\n', QOS_MAX_FILE + 1);
	ck_assert_int_eq(qos_parse(big, QOS_MAX_FILE + 1, &p, &e), -E2BIG);
	/* a list longer than QOS_MAX_LIST */
	size_t n = (size_t)sprintf(big, "port-groups\n port-group\n  name: G\n"
				   "  port-guid: 1");
	for (unsigned i = 0; i < QOS_MAX_LIST; i++)
		n += (size_t)sprintf(big + n, ",%u", i + 2);
	n += (size_t)sprintf(big + n, "\n end-port-group\nend-port-groups\n");
	ck_assert_int_eq(qos_parse(big, n, &p, &e), -EINVAL);
	ck_assert_uint_eq(e.line, 4);
	ck_assert_msg(strstr(e.msg, "at most"), "%s", e.msg);
	free(big);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("qos_policy");
	TCase *tc = tcase_create("all");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, golden_opensm_doc);
	tcase_add_test(tc, golden_setup);
	tcase_add_test(tc, golden_ulps_only);
	tcase_add_test(tc, bad_files);
	tcase_add_test(tc, shortest);
	tcase_add_test(tc, ulps_after_rules);
	tcase_add_test(tc, errors_and_bounds);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
