/*
 * check_node_names.c - the node-name-map reader (config/node_names.c)
 * reads what OpenSM's and infiniband-diags' reader reads.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/node_names.h"

static struct node_names M;
static char err[256];

static int parse(const char *text)
{
	node_names_free(&M);
	return node_names_parse(&M, "map", text, strlen(text), err,
				sizeof(err));
}

static void teardown(void)
{
	node_names_free(&M);
}

/* ibnetdiscover.conf's examples: quoted names, comments, blank lines */
START_TEST(diags_format)
{
	ck_assert_int_eq(parse("# node name map\n"
			       "\n"
			       "0x0002c90000000000 \"spine-01 (SX6536)\"\n"
			       "   0x0008f10400411f56   \"ib-sw-2\"  # rack 4\n"
			       "0x1234 unquoted name  \r\n"
			       "255\t\"decimal\"\n"), 0);
	ck_assert_uint_eq(M.n, 4);
	ck_assert_str_eq(node_names_find(&M, 0x0002c90000000000ull),
			 "spine-01 (SX6536)");
	ck_assert_str_eq(node_names_find(&M, 0x0008f10400411f56ull), "ib-sw-2");
	ck_assert_str_eq(node_names_find(&M, 0x1234), "unquoted name");
	ck_assert_str_eq(node_names_find(&M, 255), "decimal");
	ck_assert_ptr_null(node_names_find(&M, 0x1235));
}
END_TEST

/* OpenSM's strtok(p, "\"#"): the name stops at a quote or '#'; a GUID
 * without a name adds nothing; the first line of a GUID wins */
START_TEST(opensm_rules)
{
	ck_assert_int_eq(parse("0x1 \"a\"b\"\n0x2 name#comment\n0x3\n"
			       "0x4 \"\"\n0x1 \"again\"\n0x5#c\n"), 0);
	ck_assert_uint_eq(M.n, 3);
	ck_assert_str_eq(node_names_find(&M, 1), "a");
	ck_assert_str_eq(node_names_find(&M, 2), "name");
	ck_assert_ptr_null(node_names_find(&M, 3));
	ck_assert_ptr_null(node_names_find(&M, 4));
	/* strtok skips the leading '#' too: OpenSM names 0x5 "c" */
	ck_assert_str_eq(node_names_find(&M, 5), "c");
}
END_TEST

/* a line that does not start with a GUID is an error with FILE:LINE */
START_TEST(bad_lines)
{
	ck_assert_int_eq(parse("0x1 \"a\"\nswitch-1 0x2\n"), -EINVAL);
	ck_assert_str_eq(err, "map:2: expected a node GUID (0x hex) and a name");
	ck_assert_uint_eq(M.n, 0);
	ck_assert_int_eq(parse("0x1x \"a\"\n"), -EINVAL);
	ck_assert_int_eq(parse("0x10000000000000000 \"too big\"\n"), -EINVAL);
	ck_assert_int_eq(parse("-1 \"negative\"\n"), -EINVAL);
	ck_assert_int_eq(parse("0x \"no digits\"\n"), -EINVAL);
}
END_TEST

/* long names are cut, NUL bytes do not end the text early */
START_TEST(long_and_odd)
{
	char line[600];

	memset(line, 'n', sizeof(line));
	memcpy(line, "0x7 ", 4);
	line[sizeof(line) - 1] = '\n';
	ck_assert_int_eq(node_names_parse(&M, "map", line, sizeof(line), err,
					  sizeof(err)), 0);
	ck_assert_uint_eq(strlen(node_names_find(&M, 7)), NODE_NAME_MAX);
	ck_assert_int_eq(parse(""), 0);
	ck_assert_uint_eq(M.n, 0);
	/* a NUL ends its line's text, as it ends OpenSM's C string */
	node_names_free(&M);
	ck_assert_int_eq(node_names_parse(&M, "map", "0x1 \0abc\n0x2 a\0b\n",
					  16, err, sizeof(err)), 0);
	ck_assert_uint_eq(M.n, 1);
	ck_assert_str_eq(node_names_find(&M, 2), "a");
}
END_TEST

START_TEST(load_file)
{
	char path[] = "/tmp/check_node_names.XXXXXX";
	int fd = mkstemp(path);
	const char *t = "0xabc \"from a file\"\n";

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, t, strlen(t)), (int)strlen(t));
	close(fd);
	ck_assert_int_eq(node_names_load(&M, path, err, sizeof(err)), 0);
	ck_assert_str_eq(node_names_find(&M, 0xabc), "from a file");
	node_names_free(&M);
	unlink(path);
	ck_assert_int_eq(node_names_load(&M, path, err, sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, path));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("node_names");
	TCase *tc = tcase_create("node_names");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, diags_format);
	tcase_add_test(tc, opensm_rules);
	tcase_add_test(tc, bad_lines);
	tcase_add_test(tc, long_and_odd);
	tcase_add_test(tc, load_file);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
