/*
 * check_sminfo_guard.c - the SMInfo agent's rules for senders
 * (sm/ha/sminfo_guard.c): which SubnSet(SMInfo) is obeyed in which state
 * from whom, and the per-requester budget of SubnGet(SMInfo) answers.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>

#include "mad/wire.h"
#include "sm/ha/election.h"
#include "sm/ha/sminfo_guard.h"

static struct sminfo_set_view view(uint8_t ours, uint32_t mod)
{
	struct sminfo_set_view v = { .our_state = ours, .mod = mod,
				     .sender_state = SM_STATE_MASTER };
	return v;
}

/* A master obeys no control Set from a host or another SM, whatever it
 * claims; HANDOVER from the SM it handed over to is answered. */
START_TEST(test_master)
{
	static const uint32_t mods[] = { SMINFO_HANDOVER, SMINFO_DISABLE,
					 SMINFO_STANDBY, SMINFO_DISCOVER };

	for (unsigned i = 0; i < 4; i++) {
		struct sminfo_set_view v = view(SM_STATE_MASTER, mods[i]);

		ck_assert_ptr_nonnull(sminfo_set_refusal(&v));
		v.from_our_master = true;	/* stale: we are master */
		ck_assert_ptr_nonnull(sminfo_set_refusal(&v));
	}
	struct sminfo_set_view v = view(SM_STATE_MASTER, SMINFO_HANDOVER);
	v.from_handover_target = true;
	ck_assert_ptr_null(sminfo_set_refusal(&v));
	v = view(SM_STATE_MASTER, SMINFO_DISABLE);
	v.from_handover_target = true;
	ck_assert_ptr_nonnull(sminfo_set_refusal(&v));
}
END_TEST

/* A standby: HANDOVER, DISABLE, DISCOVER from the master it follows only;
 * STANDBY never; only a sender that says MASTER. */
START_TEST(test_standby)
{
	static const uint32_t ok[] = { SMINFO_HANDOVER, SMINFO_DISABLE,
				       SMINFO_DISCOVER };

	for (unsigned i = 0; i < 3; i++) {
		struct sminfo_set_view v = view(SM_STATE_STANDBY, ok[i]);

		ck_assert_ptr_nonnull(sminfo_set_refusal(&v));
		v.from_found_master = true;	/* another master */
		ck_assert_ptr_nonnull(sminfo_set_refusal(&v));
		v.from_our_master = true;
		ck_assert_ptr_null(sminfo_set_refusal(&v));
		v.sender_state = SM_STATE_STANDBY;
		ck_assert_ptr_nonnull(sminfo_set_refusal(&v));
	}
	struct sminfo_set_view v = view(SM_STATE_STANDBY, SMINFO_STANDBY);
	v.from_our_master = true;
	ck_assert_ptr_nonnull(sminfo_set_refusal(&v));
}
END_TEST

/* DISCOVERING: HANDOVER, STANDBY, DISABLE from a master it found;
 * NOTACTIVE: DISCOVER and STANDBY from the master it followed. */
START_TEST(test_discovering_notactive)
{
	static const uint32_t ok[] = { SMINFO_HANDOVER, SMINFO_STANDBY,
				       SMINFO_DISABLE };

	for (unsigned i = 0; i < 3; i++) {
		struct sminfo_set_view v = view(SM_STATE_DISCOVERING, ok[i]);

		ck_assert_ptr_nonnull(sminfo_set_refusal(&v));
		v.from_found_master = true;
		ck_assert_ptr_null(sminfo_set_refusal(&v));
	}
	struct sminfo_set_view v = view(SM_STATE_DISCOVERING, SMINFO_DISCOVER);
	v.from_found_master = true;
	ck_assert_ptr_nonnull(sminfo_set_refusal(&v));

	v = view(SM_STATE_NOTACTIVE, SMINFO_DISCOVER);
	ck_assert_ptr_nonnull(sminfo_set_refusal(&v));
	v.from_our_master = true;
	ck_assert_ptr_null(sminfo_set_refusal(&v));
	v = view(SM_STATE_NOTACTIVE, SMINFO_HANDOVER);
	v.from_our_master = true;
	ck_assert_ptr_nonnull(sminfo_set_refusal(&v));
}
END_TEST

/* ACKNOWLEDGE only from the SM our HANDOVER went to; unknown
 * AttributeModifiers never. */
START_TEST(test_ack_and_unknown)
{
	struct sminfo_set_view v = view(SM_STATE_MASTER, SMINFO_ACKNOWLEDGE);

	v.sender_state = SM_STATE_STANDBY;
	ck_assert_ptr_nonnull(sminfo_set_refusal(&v));
	v.from_handover_target = true;
	ck_assert_ptr_null(sminfo_set_refusal(&v));
	v = view(SM_STATE_STANDBY, 9);
	v.from_our_master = true;
	ck_assert_ptr_nonnull(sminfo_set_refusal(&v));
	v = view(SM_STATE_STANDBY, 0);
	v.from_our_master = true;
	ck_assert_ptr_nonnull(sminfo_set_refusal(&v));
}
END_TEST

/* The Get budget: a burst, then the rate; another requester keeps its
 * own; the table stays bounded and a new requester evicts the idlest. */
START_TEST(test_get_budget)
{
	struct sminfo_guard *g = calloc(1, sizeof(*g));
	unsigned n = 0;

	ck_assert_ptr_nonnull(g);
	for (unsigned i = 0; i < 1000; i++)
		n += sminfo_guard_get(g, 5, 100.0);
	ck_assert_uint_eq(n, (unsigned)SMINFO_GET_BURST);
	ck_assert(sminfo_guard_get(g, 7, 100.0));	/* its own budget */
	ck_assert(!sminfo_guard_get(g, 5, 100.01));
	n = 0;
	for (unsigned i = 1; i <= 100; i++)		/* 1 s at 100/s */
		n += sminfo_guard_get(g, 5, 100.0 + i * 0.01);
	ck_assert_uint_ge(n, (unsigned)SMINFO_GET_RATE - 1);
	ck_assert_uint_le(n, (unsigned)SMINFO_GET_RATE + 1);
	for (uint32_t src = 1000; src < 1000 + 4 * SMINFO_GET_SOURCES; src++)
		ck_assert(sminfo_guard_get(g, src, 200.0 + src * 1e-6));
	ck_assert_uint_eq(g->gets_dropped, 1000 - SMINFO_GET_BURST + 1 + 100 - n);
	/* IsSM trust is per requester and lapses. */
	sminfo_guard_mark_sm(g, 1000 + 4 * SMINFO_GET_SOURCES - 1, 201.0);
	ck_assert(sminfo_guard_is_sm(g, 1000 + 4 * SMINFO_GET_SOURCES - 1, 202.0));
	ck_assert(!sminfo_guard_is_sm(g, 1000 + 4 * SMINFO_GET_SOURCES - 1,
				      201.0 + SMINFO_SM_TRUST + 1));
	ck_assert(!sminfo_guard_is_sm(g, 5, 202.0));
	free(g);
}
END_TEST

/* Directed-route keys never meet LID keys; routes differ by hop. */
START_TEST(test_dr_key)
{
	uint8_t a[SMP_MAX_HOPS + 1] = { 0, 1, 3 }, b[SMP_MAX_HOPS + 1] = { 0, 1, 4 };

	ck_assert_uint_ge(sminfo_guard_dr_key(a, 2), 0x80000000u);
	ck_assert_uint_ne(sminfo_guard_dr_key(a, 2), sminfo_guard_dr_key(b, 2));
	ck_assert_uint_ne(sminfo_guard_dr_key(a, 2), sminfo_guard_dr_key(a, 1));
	ck_assert_uint_eq(sminfo_guard_dr_key(a, 200), sminfo_guard_dr_key(a, 63));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sminfo_guard");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	tcase_add_test(tc, test_master);
	tcase_add_test(tc, test_standby);
	tcase_add_test(tc, test_discovering_notactive);
	tcase_add_test(tc, test_ack_and_unknown);
	tcase_add_test(tc, test_get_budget);
	tcase_add_test(tc, test_dr_key);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
