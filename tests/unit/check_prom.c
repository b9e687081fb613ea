/*
 * check_prom.c - the Prometheus text builder (sm/metrics/prom.h):
 * label values escaped, HELP and TYPE once per family, a family not
 * reopened, numbers and histograms as the format writes them.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/metrics/prom.h"

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

START_TEST(label_escaping)
{
	struct prom_labels l;
	char out[64];

	/* a node description with quotes, backslashes and a newline */
	prom_lbl_reset(&l);
	prom_lbl(&l, "switch", "sw \"core\" a\\b\nc");
	ck_assert_str_eq(l.s, "switch=\"sw \\\"core\\\" a\\\\b\\nc\"");
	prom_lbl_u(&l, "port", 36);
	prom_lbl_guid(&l, "guid", 0x0002c90300a1b2c3ull);
	ck_assert_str_eq(l.s, "switch=\"sw \\\"core\\\" a\\\\b\\nc\",port=\"36\","
			 "guid=\"0x0002c90300a1b2c3\"");
	ck_assert(!l.trunc);
	/* escaping cut to fit never splits an escape */
	ck_assert_uint_eq(prom_escape_label(out, 3, "a\"b"), 1);
	ck_assert_str_eq(out, "a");
	ck_assert_uint_eq(prom_escape_label(out, sizeof(out), ""), 0);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(label_too_long)
{
	struct prom_labels l;
	char big[PROM_LABELS_MAX];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	prom_lbl_reset(&l);
	prom_lbl_u(&l, "port", 1);
	prom_lbl(&l, "name", big);
	/* left out whole, flagged; what was there stays well formed */
	ck_assert(l.trunc);
	ck_assert_str_eq(l.s, "port=\"1\"");
}
END_TEST

START_TEST(family_once)
{
	struct prom p;
	struct prom_labels l;
	char *t;
	size_t len;

	prom_init(&p, 16);		/* grows */
	ck_assert_int_eq(prom_family(&p, "a_total", "counter",
				     "help with \\ and\nnewline"), 0);
	for (unsigned i = 0; i < 100; i++) {
		prom_lbl_reset(&l);
		prom_lbl_u(&l, "port", i);
		ck_assert_int_eq(prom_family(&p, "a_total", "counter", "x"), 0);
		prom_u64(&p, "a_total", &l, UINT64_MAX - i);
	}
	ck_assert_int_eq(prom_family(&p, "b", "gauge", "b help"), 0);
	prom_dbl(&p, "b", NULL, 0.5);
	/* back to a family already left: refused, nothing written */
	ck_assert_int_eq(prom_family(&p, "a_total", "counter", "x"), -EEXIST);
	t = prom_take(&p, &len);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(strlen(t), len);
	ck_assert_uint_eq(count(t, "# HELP a_total "), 1);
	ck_assert_uint_eq(count(t, "# TYPE a_total counter\n"), 1);
	ck_assert_uint_eq(count(t, "# HELP b "), 1);
	ck_assert_ptr_nonnull(strstr(t, "# HELP a_total help with \\\\ and\\nnewline\n"));
	ck_assert_ptr_nonnull(strstr(t, "a_total{port=\"0\"} 18446744073709551615\n"));
	ck_assert_ptr_nonnull(strstr(t, "a_total{port=\"99\"} 18446744073709551516\n"));
	ck_assert_ptr_nonnull(strstr(t, "\nb 0.5\n"));
	/* the HELP comes before the TYPE, both before the samples */
	ck_assert(strstr(t, "# HELP a_total") < strstr(t, "# TYPE a_total"));
	ck_assert(strstr(t, "# TYPE a_total") < strstr(t, "a_total{"));
	free(t);
}
END_TEST

START_TEST(numbers)
{
	struct prom p;
	char *t;
	size_t len;

	prom_init(&p, 0);
	prom_family(&p, "g", "gauge", "g");
	prom_dbl(&p, "g", NULL, 0);
	prom_dbl(&p, "g", NULL, -3);
	prom_dbl(&p, "g", NULL, 1.0 / 0.0);
	prom_dbl(&p, "g", NULL, 0.0 / 0.0);
	prom_dbl(&p, "g", NULL, 1795939100.25);
	prom_u64(&p, "g", NULL, 0);
	t = prom_take(&p, &len);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(strstr(t, "g 0\n"), "g 0\ng -3\ng +Inf\ng NaN\n"
			 "g 1795939100.250\ng 0\n");
	free(t);
}
END_TEST

START_TEST(histogram)
{
	struct prom p;
	struct prom_labels l;
	static const double b[] = { 0.1, 1, 10 };
	static const uint64_t cum[] = { 1, 3, 3 };
	char *t;
	size_t len;

	prom_init(&p, 0);
	prom_lbl_reset(&l);
	prom_lbl(&l, "kind", "heavy");
	prom_family(&p, "d_seconds", "histogram", "d");
	prom_histogram(&p, "d_seconds", &l, b, cum, 3, 12.5, 4);
	t = prom_take(&p, &len);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(strstr(t,
		"d_seconds_bucket{kind=\"heavy\",le=\"0.1\"} 1\n"
		"d_seconds_bucket{kind=\"heavy\",le=\"1\"} 3\n"
		"d_seconds_bucket{kind=\"heavy\",le=\"10\"} 3\n"
		"d_seconds_bucket{kind=\"heavy\",le=\"+Inf\"} 4\n"
		"d_seconds_sum{kind=\"heavy\"} 12.5\n"
		"d_seconds_count{kind=\"heavy\"} 4\n"));
	free(t);
}
END_TEST

START_TEST(too_many_families)
{
	struct prom p;
	char name[32];
	size_t len;
	char *t;

	prom_init(&p, 0);
	for (unsigned i = 0; i < PROM_MAX_FAMILIES; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		ck_assert_int_eq(prom_family(&p, name, "gauge", "h"), 0);
	}
	ck_assert_int_eq(prom_family(&p, "one_more", "gauge", "h"), -ENOSPC);
	t = prom_take(&p, &len);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(count(t, "# TYPE "), PROM_MAX_FAMILIES);
	free(t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("prom");
	TCase *tc = tcase_create("text");

	tcase_add_test(tc, label_escaping);
	tcase_add_test(tc, label_too_long);
	tcase_add_test(tc, family_once);
	tcase_add_test(tc, numbers);
	tcase_add_test(tc, histogram);
	tcase_add_test(tc, too_many_families);
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
