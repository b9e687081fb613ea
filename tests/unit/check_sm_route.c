/*
 * check_sm_route.c - the daemon's routing options (sm/route.c): OpenSM's
 * GUID files (root_guid_file, cn_guid_file) with FILE:LINE errors, and
 * the layers allowed by max_op_vls.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sm/route.h"

static char path[64];

static void write_file(const char *text)
{
	int fd;
	FILE *fp;

	snprintf(path, sizeof(path), "/tmp/check_sm_route.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	fp = fdopen(fd, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	fclose(fp);
}

static int load(const char *text, uint64_t **g, char *err, size_t len)
{
	int n;

	write_file(text);
	n = sm_guid_file_load(path, g, err, len);
	unlink(path);
	return n;
}

START_TEST(guid_file_good)
{
	uint64_t *g;
	char err[300];
	int n = load("# roots of the fat tree\n"
		     "0x0002c90300001234\n"
		     "\n"
		     "   0002c90300005678   # without 0x, a comment after\n"
		     "\t0XABCDEF\r\n", &g, err, sizeof(err));

	ck_assert_int_eq(n, 3);
	ck_assert_uint_eq(g[0], 0x0002c90300001234ull);
	ck_assert_uint_eq(g[1], 0x0002c90300005678ull);
	ck_assert_uint_eq(g[2], 0xabcdefull);
	free(g);
	ck_assert_int_eq(load("# nothing\n\n", &g, err, sizeof(err)), 0);
	ck_assert_ptr_null(g);
}
END_TEST

START_TEST(guid_file_bad)
{
	uint64_t *g;
	char err[300], want[128];

	ck_assert_int_eq(load("0x1\n0xZZ\n", &g, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(g);
	snprintf(want, sizeof(want), "%s:2: '0xZZ': expected a GUID", path);
	ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
	ck_assert_int_eq(load("# x\n0x1 0x2\n", &g, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: expected one GUID per line", path);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(load("0\n", &g, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":1: expected a GUID, not 0"));
	ck_assert_int_eq(load("-1\n", &g, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(load("0x10000000000000000\n", &g, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":1: "));
	ck_assert_int_eq(sm_guid_file_load("/nonexistent/roots", &g, err,
					   sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/roots: cannot read"));
}
END_TEST

START_TEST(layers)
{
	ck_assert_uint_eq(sm_max_layers(1), 1);
	ck_assert_uint_eq(sm_max_layers(2), 2);
	ck_assert_uint_eq(sm_max_layers(3), 4);
	ck_assert_uint_eq(sm_max_layers(4), 8);
	ck_assert_uint_eq(sm_max_layers(5), 15);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sm_route");
	TCase *tc = tcase_create("route");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, guid_file_good);
	tcase_add_test(tc, guid_file_bad);
	tcase_add_test(tc, layers);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
