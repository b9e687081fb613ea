/*
 * check_health_findings.c - the findings set's life (open, persist,
 * close, per group, bounded) and the event ring (bound, since, cursor).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health/events.h"
#include "health/findings.h"

struct seen {
	unsigned opened, closed;
	struct hf_finding last_opened, last_closed;
};

static void on_change(void *arg, const struct hf_finding *f, bool opened)
{
	struct seen *s = arg;

	if (opened) {
		s->opened++;
		s->last_opened = *f;
	} else {
		s->closed++;
		s->last_closed = *f;
	}
}

static struct hf_finding mk(enum hf_kind k, uint64_t guid, uint8_t port,
			    uint32_t detail, enum hf_severity sev)
{
	struct hf_finding f = { .kind = k, .guid = guid, .port = port,
				.detail = detail, .severity = sev };

	snprintf(f.text, sizeof(f.text), "%s on %u", hf_kind_name(k), port);
	return f;
}

START_TEST(test_life)
{
	struct hf_set s;
	struct seen sn = { 0 };
	struct hf_finding a = mk(HF_LINK_DEGRADED, 0x10, 3, 0, HF_WARNING);
	const struct hf_finding *got;

	ck_assert_int_eq(hf_set_init(&s, 16), 0);
	/* round 1: opens */
	hf_set_begin(&s, HF_G_SWEEP);
	ck_assert_int_eq(hf_set_report(&s, &a, 100.0), 1);
	hf_set_end(&s, 100.0, on_change, &sn);
	ck_assert_uint_eq(sn.opened, 1);
	ck_assert_uint_eq(sn.closed, 0);
	ck_assert_uint_eq(hf_set_count(&s), 1);
	/* round 2: reported again, keeps first_seen, moves last_seen */
	hf_set_begin(&s, HF_G_SWEEP);
	a.severity = HF_CRITICAL;
	ck_assert_int_eq(hf_set_report(&s, &a, 200.0), 0);
	hf_set_end(&s, 200.0, on_change, &sn);
	ck_assert_uint_eq(sn.opened, 1);
	got = hf_set_find(&s, &a);
	ck_assert_ptr_nonnull(got);
	ck_assert(got->first_seen == 100.0);
	ck_assert(got->last_seen == 200.0);
	ck_assert_int_eq(got->severity, HF_CRITICAL);
	/* round 3: not reported: closes */
	hf_set_begin(&s, HF_G_SWEEP);
	hf_set_end(&s, 300.0, on_change, &sn);
	ck_assert_uint_eq(sn.closed, 1);
	ck_assert_uint_eq(sn.last_closed.guid, 0x10);
	ck_assert(sn.last_closed.first_seen == 100.0);
	ck_assert_uint_eq(hf_set_count(&s), 0);
	ck_assert_ptr_null(hf_set_find(&s, &a));
	hf_set_free(&s);
}
END_TEST

/* A round closes only findings of its own groups. */
START_TEST(test_groups)
{
	struct hf_set s;
	struct seen sn = { 0 };
	struct hf_finding link = mk(HF_LINK_NOT_ACTIVE, 0x10, 1, 0, HF_CRITICAL);
	struct hf_finding err = mk(HF_ERROR_RATE, 0x10, 1, 3, HF_WARNING);
	struct hf_finding err2 = mk(HF_ERROR_RATE, 0x10, 1, 0, HF_WARNING);
	struct hf_summary sum;

	ck_assert_int_eq(hf_set_init(&s, 16), 0);
	hf_set_begin(&s, HF_G_SWEEP);
	ck_assert_int_eq(hf_set_report(&s, &link, 1), 1);
	/* a kind of another group is refused in this round */
	ck_assert_int_eq(hf_set_report(&s, &err, 1), -EINVAL);
	hf_set_end(&s, 1, on_change, &sn);

	hf_set_begin(&s, HF_G_COUNTERS);
	ck_assert_int_eq(hf_set_report(&s, &err, 2), 1);
	ck_assert_int_eq(hf_set_report(&s, &err2, 2), 1);	/* detail differs */
	hf_set_end(&s, 2, on_change, &sn);
	ck_assert_uint_eq(hf_set_count(&s), 3);

	/* a counters round without err2: err2 closes, the link stays */
	hf_set_begin(&s, HF_G_COUNTERS);
	hf_set_report(&s, &err, 3);
	hf_set_end(&s, 3, on_change, &sn);
	ck_assert_uint_eq(sn.closed, 1);
	ck_assert_uint_eq(sn.last_closed.detail, 0);
	ck_assert_ptr_nonnull(hf_set_find(&s, &link));
	ck_assert_ptr_nonnull(hf_set_find(&s, &err));

	hf_set_summary(&s, &sum);
	ck_assert_uint_eq(sum.count[HF_CRITICAL], 1);
	ck_assert_uint_eq(sum.count[HF_WARNING], 1);

	/* outside a round nothing is taken */
	ck_assert_int_eq(hf_set_report(&s, &err2, 4), -EINVAL);
	hf_set_free(&s);
}
END_TEST

/* The set is bounded: reports beyond its capacity are dropped, counted;
 * the hash stays right after compaction. */
START_TEST(test_bound)
{
	struct hf_set s;
	struct hf_summary sum;

	ck_assert_int_eq(hf_set_init(&s, 4), 0);
	hf_set_begin(&s, HF_G_ALL);
	for (unsigned i = 0; i < 6; i++) {
		struct hf_finding f = mk(HF_DUP_DESC, 0x100 + i, 0, 0, HF_WARNING);
		int rc = hf_set_report(&s, &f, 1);

		ck_assert_int_eq(rc, i < 4 ? 1 : -ENOSPC);
	}
	hf_set_end(&s, 1, NULL, NULL);
	hf_set_summary(&s, &sum);
	ck_assert_uint_eq(sum.count[HF_WARNING], 4);
	ck_assert_uint_eq(sum.dropped, 2);
	/* keep the odd ones: the others close, the survivors are found */
	hf_set_begin(&s, HF_G_SWEEP);
	for (unsigned i = 1; i < 4; i += 2) {
		struct hf_finding f = mk(HF_DUP_DESC, 0x100 + i, 0, 0, HF_WARNING);

		ck_assert_int_eq(hf_set_report(&s, &f, 2), 0);
	}
	hf_set_end(&s, 2, NULL, NULL);
	ck_assert_uint_eq(hf_set_count(&s), 2);
	for (unsigned i = 0; i < 4; i++) {
		struct hf_finding f = mk(HF_DUP_DESC, 0x100 + i, 0, 0, HF_WARNING);

		ck_assert((hf_set_find(&s, &f) != NULL) == (i % 2 == 1));
	}
	hf_set_free(&s);
}
END_TEST

START_TEST(test_names)
{
	ck_assert_str_eq(hf_kind_name(HF_REF_CABLE_MOVED), "cable_moved");
	ck_assert_str_eq(hf_kind_name(HF_N_KINDS), "?");
	ck_assert_str_eq(hf_severity_name(HF_CRITICAL), "critical");
	ck_assert_str_eq(hf_severity_name(HF_WARNING), "warning");
	for (int k = 0; k < HF_N_KINDS; k++) {
		ck_assert_str_ne(hf_kind_name(k), "?");
		ck_assert_uint_ne(hf_kind_group(k), 0);
		for (int j = 0; j < k; j++)
			ck_assert_str_ne(hf_kind_name(k), hf_kind_name(j));
	}
	ck_assert_str_eq(he_type_name(HE_FINDING_CLOSED), "finding_closed");
}
END_TEST

START_TEST(test_ring)
{
	struct he_ring r;
	const struct he_event *e;
	uint64_t cur = 0, n = 0;

	ck_assert_int_eq(he_ring_init(&r, 4), 0);
	ck_assert_ptr_null(he_ring_next(&r, &cur));
	for (unsigned i = 1; i <= 10; i++)
		ck_assert_uint_eq(he_ring_add(&r, 10.0 * i, HE_LINK_DOWN, 0x10,
					      (uint8_t)i, "down %u\n", i), i);
	ck_assert_uint_eq(r.n, 4);	/* the ring is bounded */
	/* from the start: only the last four, in order */
	while ((e = he_ring_next(&r, &cur))) {
		ck_assert_uint_eq(e->seq, 7 + n);
		ck_assert_uint_eq(e->port, 7 + n);
		ck_assert_ptr_null(strchr(e->text, '\n'));
		n++;
	}
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(cur, 11);
	/* a writer's cursor picks up only what is new */
	he_ring_add(&r, 110.0, HE_LINK_UP, 0x10, 1, NULL);
	e = he_ring_next(&r, &cur);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(e->seq, 11);
	ck_assert_int_eq(e->type, HE_LINK_UP);
	ck_assert_str_eq(e->text, "");
	ck_assert_ptr_null(he_ring_next(&r, &cur));
	/* since: the first event at or after the time */
	cur = he_ring_since(&r, 95.0);
	e = he_ring_next(&r, &cur);
	ck_assert_uint_eq(e->seq, 10);
	ck_assert_uint_eq(he_ring_since(&r, 1e9), 12);
	ck_assert_uint_eq(he_ring_since(&r, 0), 8);
	he_ring_free(&r);
	ck_assert_int_eq(he_ring_init(&r, 0), -EINVAL);
}
END_TEST

static Suite *health_findings_suite(void)
{
	Suite *s = suite_create("health_findings");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_life);
	tcase_add_test(tc, test_groups);
	tcase_add_test(tc, test_bound);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_ring);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(health_findings_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
