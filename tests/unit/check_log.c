/*
 * check_log.c - log_max_size (sm/log.c): past the size the log file
 * becomes FILE.1 and a new FILE starts, once per size; the size is the
 * file's own, read again when SIGUSR1's log_reopen() opens the file
 * logrotate left.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sm/log.h"

static char dir[64], path[96], old[100];

static void setup(void)
{
	strcpy(dir, "/tmp/check_log.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ibsm.log", dir);
	snprintf(old, sizeof(old), "%s.1", path);
}

static void teardown(void)
{
	log_close();
	log_set_max_size(0);
	unlink(old);
	unlink(path);
	rmdir(dir);
}

static long size_of(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 ? (long)st.st_size : -1;
}

static int count_in(const char *p, const char *needle)
{
	FILE *fp = fopen(p, "r");
	char line[512];
	int n = 0;

	if (!fp)
		return -1;
	while (fgets(line, sizeof(line), fp))
		n += strstr(line, needle) != NULL;
	fclose(fp);
	return n;
}

START_TEST(rotates_past_the_size)
{
	ck_assert_int_eq(log_open(path, LOG_LVL_INFO), 0);
	log_set_max_size(4096);
	for (int i = 0; i < 100; i++)		/* ~6 KB */
		log_info("line %03d of a log that outgrows its size", i);
	ck_assert_int_gt(size_of(old), 4096);
	ck_assert_int_lt(size_of(old), 4096 + 200);
	ck_assert_int_lt(size_of(path), 4096);
	ck_assert_int_eq(count_in(path, "the previous 0 MB are in"), 1);
	ck_assert_int_eq(count_in(old, "line 000 of") +
			 count_in(path, "line 000 of"), 1);
	ck_assert_int_eq(count_in(old, "line 099 of") +
			 count_in(path, "line 099 of"), 1);
	/* 0: never */
	log_set_max_size(0);
	for (int i = 0; i < 100; i++)
		log_info("line %03d of a log without a limit", i);
	ck_assert_int_gt(size_of(path), 4096);
}
END_TEST

/* logrotate moves the file and sends SIGUSR1: the new file's size counts */
START_TEST(reopen_counts_the_new_file)
{
	ck_assert_int_eq(log_open(path, LOG_LVL_INFO), 0);
	log_set_max_size(4096);
	for (int i = 0; i < 50; i++)		/* ~3 KB */
		log_info("line %03d before logrotate", i);
	ck_assert_int_eq(rename(path, old), 0);
	ck_assert_int_eq(log_reopen(), 0);
	for (int i = 0; i < 50; i++)
		log_info("line %03d after logrotate", i);
	/* 6 KB written in all, 3 KB in each file: no rotation */
	ck_assert_int_eq(count_in(path, "the previous"), 0);
	ck_assert_int_eq(count_in(old, "before logrotate"), 50);
	ck_assert_int_eq(count_in(path, "after logrotate"), 50);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("log_max_size");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, rotates_past_the_size);
	tcase_add_test(tc, reopen_counts_the_new_file);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
