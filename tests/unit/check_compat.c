/*
 * check_compat.c - the OpenSM keys mapped onto ibsm's features
 * (config/compat.c): console and use_ucast_cache decide only when set
 * and when ibsm's own key is not; the keys of features ibsm replaces
 * are named once with what it does instead.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "config/compat.h"
#include "config/conf.h"
#include "config/sm_config.h"

static struct cfg C;
static struct sm_config O;
static struct cfg_msgs N;

/* Read `text` as an opensm.conf, apply it and its mapped keys. */
static void load(const char *text)
{
	cfg_free(&C);
	cfg_msgs_free(&N);
	cfg_init(&C);
	memset(&O, 0, sizeof(O));
	ck_assert_int_eq(cfg_read_text(&C, "t.conf", text, strlen(text)), 0);
	ck_assert_int_eq(cfg_apply(&C, &O), 0);
	cfg_apply_compat(&C, &O, &N);
}

static bool noted(const char *needle)
{
	for (size_t i = 0; i < N.n; i++)
		if (strstr(N.msg[i], needle))
			return true;
	return false;
}

static void teardown(void)
{
	cfg_free(&C);
	cfg_msgs_free(&N);
}

START_TEST(defaults_change_nothing)
{
	load("sm_priority 1\n");
	ck_assert_ptr_nonnull(O.control_socket);
	ck_assert(!O.no_incremental_reroute);
	ck_assert_uint_eq(N.n, 0);
	/* the defaults written out are no change either */
	load("event_plugin_name (null)\ntorus_config /etc/opensm/torus-2QoS.conf\n");
	ck_assert_uint_eq(N.n, 0);
}
END_TEST

START_TEST(console_off_no_socket)
{
	load("console off\n");
	ck_assert_ptr_null(O.control_socket);
	ck_assert(noted("console off: ibsm has no text console"));
	load("console socket\nconsole_port 10000\n");
	ck_assert_str_eq(O.control_socket, "/run/ibsm/ibsm.sock");
	ck_assert(noted("control socket instead"));
	ck_assert(noted("console_port is not opened"));
	/* ibsm's own key wins */
	load("console off\ncontrol_socket /tmp/x.sock\n");
	ck_assert_str_eq(O.control_socket, "/tmp/x.sock");
	ck_assert_uint_eq(N.n, 0);
}
END_TEST

START_TEST(ucast_cache_is_incremental_reroute)
{
	load("use_ucast_cache FALSE\n");
	ck_assert(O.no_incremental_reroute);
	ck_assert(noted("incremental re-route is off"));
	load("use_ucast_cache TRUE\n");
	ck_assert(!O.no_incremental_reroute);
	load("use_ucast_cache FALSE\nincremental_reroute TRUE\n");
	ck_assert(!O.no_incremental_reroute);
	ck_assert_uint_eq(N.n, 0);
}
END_TEST

START_TEST(replaced_features_named)
{
	load("event_plugin_name osmeventplugin\nprefix_routes_file /x\n"
	     "torus_config /y\nper_module_logging_file /z\n");
	/* torus_config is read (the torus engine): no note */
	ck_assert_uint_eq(N.n, 3);
	ck_assert(noted("event_plugin_name osmeventplugin: ibsm loads no"));
	ck_assert(noted("prefix_routes_file /x: "));
	ck_assert(!noted("torus_config /y: "));
	ck_assert(noted("per_module_logging_file /z: "));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("compat");
	TCase *tc = tcase_create("compat");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, defaults_change_nothing);
	tcase_add_test(tc, console_off_no_socket);
	tcase_add_test(tc, ucast_cache_is_incremental_reroute);
	tcase_add_test(tc, replaced_features_named);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
