/*
 * check_qos_keys.c - config/qos_keys.c: the VL:weight lists, the 16-entry
 * SL-to-VL lists, and each port class's tables resolved from its keys,
 * the base qos_* keys and OpenSM's defaults.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/qos_keys.h"

static char err[256];

START_TEST(test_vlarb_good)
{
	struct qos_vlarb_entry e[QOS_VLARB_ENTRIES];
	char big[512] = "";

	ck_assert_int_eq(qos_parse_vlarb(QOS_DEFAULT_VLARB_LOW, e, err,
					 sizeof(err)), 0);
	ck_assert_uint_eq(e[0].vl, 0);
	ck_assert_uint_eq(e[0].weight, 0);
	ck_assert_uint_eq(e[14].vl, 14);
	ck_assert_uint_eq(e[14].weight, 4);
	/* past the list: VL 0 weight 0, as OpenSM fills them */
	for (unsigned i = 15; i < QOS_VLARB_ENTRIES; i++)
		ck_assert(e[i].vl == 0 && e[i].weight == 0);
	ck_assert_int_eq(qos_parse_vlarb("0x3:0x10, 2:255", e, err,
					 sizeof(err)), 0);
	ck_assert(e[0].vl == 3 && e[0].weight == 16);
	ck_assert(e[1].vl == 2 && e[1].weight == 255);
	for (unsigned i = 0; i < QOS_VLARB_ENTRIES; i++)
		snprintf(big + strlen(big), sizeof(big) - strlen(big),
			 "%s%u:%u", i ? "," : "", i % 15, i);
	ck_assert_int_eq(qos_parse_vlarb(big, e, err, sizeof(err)), 0);
	ck_assert(e[63].vl == 63 % 15 && e[63].weight == 63);
	strcat(big, ",1:1");
	ck_assert_int_eq(qos_parse_vlarb(big, e, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "more than 64"));
}
END_TEST

START_TEST(test_vlarb_bad)
{
	static const char *const bad[] = {
		"", "0", "0:", ":4", "15:1", "0:256", "-1:2", "0:-1", "0:4,",
		",0:4", "0:4;1:4", "0:4 1:4", "a:1", "1:b", "0:4,,1:4",
		"99999999999999999999:1",
	};
	struct qos_vlarb_entry e[QOS_VLARB_ENTRIES];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		ck_assert_msg(qos_parse_vlarb(bad[i], e, err, sizeof(err)) ==
			      -EINVAL, "accepted '%s'", bad[i]);
		ck_assert_ptr_nonnull(strstr(err, "VL:weight"));
	}
}
END_TEST

START_TEST(test_sl2vl)
{
	static const char *const bad[] = {
		"", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14",
		"0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,0",
		"0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,16",
		"0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,",
		"0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,-1",
		"0,1,2,3,4,5,6,7:8,9,10,11,12,13,14,15",
	};
	uint8_t t[QOS_SL_N];

	ck_assert_int_eq(qos_parse_sl2vl(QOS_DEFAULT_SL2VL, t, err,
					 sizeof(err)), 0);
	ck_assert_uint_eq(t[0], 0);
	ck_assert_uint_eq(t[14], 14);
	ck_assert_uint_eq(t[15], 7);
	ck_assert_int_eq(qos_parse_sl2vl("15,0x1,1,1,1,1,1,1,1,1,1,1,1,1,1,2",
					 t, err, sizeof(err)), 0);
	ck_assert(t[0] == 15 && t[1] == 1 && t[15] == 2);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(qos_parse_sl2vl(bad[i], t, err, sizeof(err)) ==
			      -EINVAL, "accepted '%s'", bad[i]);
}
END_TEST

/* class key, else base key, else OpenSM's default; one field at a time */
START_TEST(test_resolve)
{
	struct qos_key_set unset = { 0, -1, NULL, NULL, NULL };
	struct qos_key_set base = { 4, 16, "1:8", NULL, NULL };
	struct qos_key_set ca = { 0, 0, NULL, "2:32,3:32",
				  "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1" };
	struct qos_tables t;

	ck_assert_int_eq(qos_build_tables(&t, &unset, &unset, err,
					  sizeof(err)), 0);
	ck_assert_uint_eq(t.max_vls, QOS_DEFAULT_MAX_VLS);
	ck_assert_uint_eq(t.high_limit, QOS_DEFAULT_HIGH_LIMIT);
	ck_assert(t.vlarb_high[0].vl == 0 && t.vlarb_high[0].weight == 4);
	ck_assert(t.vlarb_low[1].vl == 1 && t.vlarb_low[1].weight == 4);
	ck_assert_uint_eq(t.sl2vl[15], 7);

	ck_assert_int_eq(qos_build_tables(&t, &unset, &base, err,
					  sizeof(err)), 0);
	ck_assert_uint_eq(t.max_vls, 4);
	ck_assert_uint_eq(t.high_limit, 16);
	ck_assert(t.vlarb_high[0].vl == 1 && t.vlarb_high[0].weight == 8);
	ck_assert(t.vlarb_high[1].vl == 0 && t.vlarb_high[1].weight == 0);

	/* high limit 0 is set (only -1 is unset); max_vls 0 is unset */
	ck_assert_int_eq(qos_build_tables(&t, &ca, &base, err,
					  sizeof(err)), 0);
	ck_assert_uint_eq(t.max_vls, 4);
	ck_assert_uint_eq(t.high_limit, 0);
	ck_assert(t.vlarb_high[0].vl == 1 && t.vlarb_high[0].weight == 8);
	ck_assert(t.vlarb_low[0].vl == 2 && t.vlarb_low[1].weight == 32);
	ck_assert(t.vlarb_low[2].vl == 0 && t.vlarb_low[2].weight == 0);
	ck_assert_uint_eq(t.sl2vl[0], 1);
	ck_assert_uint_eq(t.sl2vl[15], 1);

	ca.vlarb_high = "15:1";
	ck_assert_int_eq(qos_build_tables(&t, &ca, &base, err,
					  sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(test_check_key)
{
	ck_assert_int_eq(qos_check_key("qos_policy_file", "x", err,
				       sizeof(err)), 0);
	ck_assert_int_eq(qos_check_key("suppress_sl2vl_mad_status_errors",
				       "x", err, sizeof(err)), 0);
	ck_assert_int_eq(qos_check_key("qos_max_vls", "x", err,
				       sizeof(err)), 0);
	ck_assert_int_eq(qos_check_key("qos_sw0_sl2vl", QOS_DEFAULT_SL2VL,
				       err, sizeof(err)), 1);
	ck_assert_int_eq(qos_check_key("qos_sw0_sl2vl", "1", err,
				       sizeof(err)), -EINVAL);
	ck_assert_int_eq(qos_check_key("qos_rtr_vlarb_high", "1:1", err,
				       sizeof(err)), 1);
	ck_assert_int_eq(qos_check_key("qos_vlarb_low", "1:1:1", err,
				       sizeof(err)), -EINVAL);
}
END_TEST

static Suite *qos_keys_suite(void)
{
	Suite *s = suite_create("qos_keys");
	TCase *tc = tcase_create("qos_keys");

	tcase_add_test(tc, test_vlarb_good);
	tcase_add_test(tc, test_vlarb_bad);
	tcase_add_test(tc, test_sl2vl);
	tcase_add_test(tc, test_resolve);
	tcase_add_test(tc, test_check_key);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(qos_keys_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
