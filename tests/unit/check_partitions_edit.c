/*
 * check_partitions_edit.c - partitions/edit.c: add, remove and set keep
 * every byte of the file outside the edited span (each test compares the
 * result with the original minus or plus exactly that span), refused
 * edits leave the input as it was, and the results parse.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "partitions/edit.h"
#include "partitions/partitions.h"

static const struct part_options opts = { .allow_both_pkeys = true };

/* The text parses without errors; returns the partition named `name`'s
 * member count (-1: no such partition). */
static long parse_members(const char *text, const char *name)
{
	struct part_config c;
	struct part_diag d = { 0 };
	long n = -1;
	size_t i;
	int rc = part_parse("t.conf", text, strlen(text), &opts, &c, &d);

	ck_assert_msg(rc == 0, "does not parse (%d): %s", rc,
		      d.n_errors ? d.errors[0].msg : "");
	ck_assert_uint_eq(d.n_errors, 0);
	for (i = 0; i < c.n_parts; i++)
		if (!strcmp(c.parts[i].name, name))
			n = (long)c.parts[i].n_members;
	part_diag_free(&d);
	part_config_free(&c);
	return n;
}

/* The guide's file with comments between and inside definitions. */
static const char head[] =
	"# partitions for the lab\n"
	"\n"
	"Default=0x7fff, ipoib : ALL=full ;   \n"
	"\n";
static const char storage[] =
	"storage=0x0002, ipoib, defmember=full :\n"
	"    0x0002c90300000001,   # filer a\n"
	"    # filer b is out for repair\n"
	"    0x0002c90300000002=limited\n"
	"    ;\n";
static const char tail[] =
	"# compute nodes\n"
	"compute=0x0003 : ALL_CAS=limited, SELF=full; # trailing\n";

static char *cat3(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *s = malloc(la + lb + lc + 1);

	ck_assert_ptr_nonnull(s);
	memcpy(s, a, la);
	memcpy(s + la, b, lb);
	memcpy(s + la + lb, c, lc + 1);
	return s;
}

START_TEST(find_spans)
{
	char *t = cat3(head, storage, tail);
	struct part_def_span s;

	ck_assert_int_eq(part_edit_find(t, strlen(t), "storage", 0, &s), 0);
	ck_assert_uint_eq(s.begin, strlen(head));
	ck_assert_uint_eq(s.end, strlen(head) + strlen(storage) - 1);
	ck_assert_int_eq(part_edit_find(t, strlen(t), "compute", 0, &s), 0);
	ck_assert(!strncmp(t + s.begin, "compute=0x0003", 14));
	ck_assert_int_eq(t[s.end - 1], ';');
	ck_assert_int_eq(part_edit_find(t, strlen(t), "filer", 0, &s), -ENOENT);
	/* A name in a comment is no definition. */
	ck_assert_int_eq(part_edit_find(t, strlen(t), "partitions", 0, &s),
			 -ENOENT);
	free(t);
}
END_TEST

START_TEST(remove_whole_lines)
{
	char *t = cat3(head, storage, tail), *copy = strdup(t), *out;
	char *want = cat3(head, "", tail);
	size_t n;

	ck_assert_int_eq(part_edit_remove(t, strlen(t), "storage", &out, &n), 0);
	ck_assert_uint_eq(n, strlen(want));
	ck_assert_str_eq(out, want);
	ck_assert_str_eq(t, copy);
	ck_assert_int_eq(parse_members(out, "storage"), -1);
	free(out);
	free(want);
	/* compute shares its line with a comment: only the definition goes. */
	want = cat3(head, storage, "# compute nodes\n # trailing\n");
	ck_assert_int_eq(part_edit_remove(t, strlen(t), "compute", &out, &n), 0);
	ck_assert_str_eq(out, want);
	free(out);
	free(want);
	free(copy);
	free(t);
}
END_TEST

START_TEST(remove_refused)
{
	char *t = cat3(head, storage, tail), *copy = strdup(t), *out = NULL;
	size_t n;

	ck_assert_int_eq(part_edit_remove(t, strlen(t), "nosuch", &out, &n),
			 -ENOENT);
	ck_assert_ptr_null(out);
	ck_assert_str_eq(t, copy);
	free(copy);
	free(t);
}
END_TEST

START_TEST(add_round_trip)
{
	char *t = cat3(head, storage, tail), *out, *back;
	char *want = cat3(t, "gpu=0x0004, ipoib : ALL_CAS=full", ";\n");
	size_t n, m;

	ck_assert_int_eq(part_edit_add(t, strlen(t),
				       "gpu=0x0004, ipoib : ALL_CAS=full",
				       &out, &n), 0);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(parse_members(out, "gpu"), 1);
	ck_assert_int_eq(part_edit_remove(out, n, "gpu", &back, &m), 0);
	ck_assert_uint_eq(m, strlen(t));
	ck_assert_str_eq(back, t);
	free(back);
	free(out);
	free(want);
	/* No final newline: one is added before the definition. */
	ck_assert_int_eq(part_edit_add("a=0x5:ALL;", 10, "b=0x6:SELF;",
				       &out, &n), 0);
	ck_assert_str_eq(out, "a=0x5:ALL;\nb=0x6:SELF;\n");
	free(out);
	/* Two definitions in one, or nothing: refused. */
	out = NULL;
	ck_assert_int_eq(part_edit_add(t, strlen(t), "x=1:ALL; y=2:ALL",
				       &out, &n), -EINVAL);
	ck_assert_int_eq(part_edit_add(t, strlen(t), "  ", &out, &n), -EINVAL);
	ck_assert_ptr_null(out);
	free(t);
}
END_TEST

START_TEST(set_existing_member)
{
	char *t = cat3(head, storage, tail), *out;
	const char *at = strstr(t, "0x0002c90300000002=limited");
	size_t n, pre = (size_t)(at - t);
	char *want;

	want = malloc(strlen(t) + 8);
	memcpy(want, t, pre);
	strcpy(want + pre, "0x0002c90300000002=full");
	strcat(want, at + strlen("0x0002c90300000002=limited"));
	/* The GUID compared by value: another spelling finds it. */
	ck_assert_int_eq(part_edit_set(t, strlen(t), "storage",
				       "0x2c90300000002", "full", &out, &n), 0);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(parse_members(out, "storage"), 2);
	free(out);
	free(want);
	/* A keyword without case; the file's spelling kept. */
	ck_assert_int_eq(part_edit_set(t, strlen(t), "compute", "all_cas",
				       "full", &out, &n), 0);
	ck_assert_ptr_nonnull(strstr(out, "compute=0x0003 : ALL_CAS=full, "
				     "SELF=full; # trailing\n"));
	ck_assert_uint_eq(n, strlen(t) - 3);	/* limited -> full */
	free(out);
	free(t);
}
END_TEST

START_TEST(set_new_member)
{
	char *t = cat3(head, storage, tail), *out;
	const char *at = strstr(t, "=limited\n    ;") + strlen("=limited");
	size_t n, pre = (size_t)(at - t);
	char *want = malloc(strlen(t) + 64);

	/* After the last member, past the comment lines inside. */
	memcpy(want, t, pre);
	strcpy(want + pre, ", 0x0002c90300000003=both");
	strcat(want, at);
	ck_assert_int_eq(part_edit_set(t, strlen(t), "storage",
				       "0x0002c90300000003", "both", &out, &n), 0);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(parse_members(out, "storage"), 3);
	free(out);
	free(want);
	/* A definition whose members follow its mgid lines. */
	{
		const char *m = "p=0x9, ipoib :\n  mgid=ff12:401b::1 # grp\n"
				"  ALL=full ;\n";
		ck_assert_int_eq(part_edit_set(m, strlen(m), "p", "SELF", NULL,
					       &out, &n), 0);
		ck_assert_str_eq(out, "p=0x9, ipoib :\n  mgid=ff12:401b::1 "
				 "# grp\n  ALL=full, SELF ;\n");
		ck_assert_int_eq(parse_members(out, "p"), 2);
		free(out);
	}
	/* The last member's comment stays with it: the new member goes on
	 * a line of its own after it, indented alike, the ',' before the
	 * comment (or the one already there kept). */
	{
		static const char *const cases[][2] = {
			{ "s=0x2 :\n\t0x1=full   # filer a\n;\n",
			  "s=0x2 :\n\t0x1=full,   # filer a\n\t0x3=full\n;\n" },
			{ "s=0x2 :\n  0x1, # a\n  0x2 # b\n  ;\n",
			  "s=0x2 :\n  0x1, # a\n  0x2, # b\n  0x3=full\n  ;\n" },
			{ "s=0x2 :\n  0x1 , # a\n;\n",
			  "s=0x2 :\n  0x1 , # a\n  0x3=full\n;\n" },
			{ "s=0x2 : 0x1 # a\n;\n",
			  "s=0x2 : 0x1, # a\n    0x3=full\n;\n" },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			const char *in = cases[i][0];

			ck_assert_int_eq(part_edit_set(in, strlen(in), "s",
						       "0x3", "full", &out, &n), 0);
			ck_assert_str_eq(out, cases[i][1]);
			ck_assert_uint_eq(n, strlen(cases[i][1]));
			ck_assert_int_gt(parse_members(out, "s"), 1);
			free(out);
		}
	}
	/* An empty member list. */
	ck_assert_int_eq(part_edit_set("q=0x8 :;\n", 9, "q", "ALL", "limited",
				       &out, &n), 0);
	ck_assert_str_eq(out, "q=0x8 : ALL=limited;\n");
	free(out);
	free(t);
}
END_TEST

START_TEST(set_refused)
{
	char *t = cat3(head, storage, tail), *copy = strdup(t), *out = NULL;
	size_t n;

	ck_assert_int_eq(part_edit_set(t, strlen(t), "nosuch", "ALL", "full",
				       &out, &n), -ENOENT);
	ck_assert_int_eq(part_edit_set(t, strlen(t), "storage", "ALL;x", "full",
				       &out, &n), -EINVAL);
	ck_assert_int_eq(part_edit_set(t, strlen(t), "storage", "", "full",
				       &out, &n), -EINVAL);
	ck_assert_int_eq(part_edit_set(t, strlen(t), "storage", "ALL", "fu ll",
				       &out, &n), -EINVAL);
	ck_assert_ptr_null(out);
	ck_assert_str_eq(t, copy);
	free(copy);
	free(t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("partitions_edit");
	TCase *tc = tcase_create("all");

	tcase_add_test(tc, find_spans);
	tcase_add_test(tc, remove_whole_lines);
	tcase_add_test(tc, remove_refused);
	tcase_add_test(tc, add_round_trip);
	tcase_add_test(tc, set_existing_member);
	tcase_add_test(tc, set_new_member);
	tcase_add_test(tc, set_refused);
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
