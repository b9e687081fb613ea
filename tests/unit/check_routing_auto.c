/*
 * check_routing_auto.c - the auto engine (routing/auto.c) and the engine
 * list of routing.c: the topology class auto sees on the bundled fabrics,
 * the engine it picks, its fallbacks named in out->fallback (never
 * silent), OpenSM's no_fallback word, and the list check of the config.
 *
 * The engines auto prefers (ftree, updn, dfsssp) come from other
 * branches: while one is not built in, auto must say so and fall back;
 * once it is, auto must use it.  Either way the tables must verify.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing_fixture.h"

static void verify_ok(const struct fabric *f, const struct routing_result *r)
{
	struct routing_check c;

	ck_assert_int_eq(routing_check(f, r, &c), 0);
	ck_assert_uint_gt(c.pairs, 0);
	ck_assert_uint_eq(routing_check_failures(&c), 0);
}

/*
 * Route `name` with auto: the class it must see (a piece of the summary)
 * and the engine it must prefer; the first engine of `chain` that is
 * built in must be the one that made the tables, and every one before
 * it must be named "not built in" in out->fallback.
 */
static void expect(const char *name, const char *found,
		   const char *const *chain, size_t n)
{
	struct fabric f;
	struct routing_result r;
	char err[512], want[64];
	size_t i;

	rf_load(&f, name, 0);
	ck_assert_msg(routing_run("auto", &f, &r, err, sizeof(err)) == 0,
		      "%s: %s", name, err);
	ck_assert_msg(strstr(r.summary, found) != NULL, "%s: summary '%s'",
		      name, r.summary);
	ck_assert_msg(!strncmp(r.summary, "auto: ", 6), "%s", r.summary);
	for (i = 0; i < n && !routing_find(chain[i]); i++) {
		snprintf(want, sizeof(want), "%s: not built in", chain[i]);
		ck_assert_msg(strstr(r.fallback, want) != NULL,
			      "%s: fallback '%s' lacks '%s'", name, r.fallback,
			      want);
	}
	ck_assert_uint_lt(i, n);
	ck_assert_str_eq(r.engine, chain[i]);
	snprintf(want, sizeof(want), "-> %s", chain[i]);
	ck_assert_msg(strstr(r.summary, want) != NULL, "%s", r.summary);
	if (i == 0)
		ck_assert_str_eq(r.fallback, "");
	verify_ok(&f, &r);
	routing_result_free(&r);
	fabric_free(&f);
}

static const char *const tree_chain[] = { "ftree", "updn", "minhop" };
static const char *const other_chain[] = { "dfsssp", "updn", "minhop" };
static const char *const torus_chain[] = { "torus", "dfsssp", "updn",
					   "minhop" };

START_TEST(fat_trees)
{
	expect("fat2-small.net", "fat tree, 2 levels (4/2 switches)",
	       tree_chain, 3);
	expect("twoport-16.net", "fat tree, 2 levels (4/2 switches)",
	       tree_chain, 3);
	expect("fat3-pods.net", "fat tree, 3 levels (16/16/8 switches)",
	       tree_chain, 3);
	expect("fat2-128.net", "fat tree, 2 levels (8/4 switches)",
	       tree_chain, 3);
}
END_TEST

START_TEST(not_fat_trees)
{
	expect("torus-4x4.net", "2D torus, 0 switch(es) and 0 link(s) missing",
	       torus_chain, 4);
	expect("torus-3x3x3.net", "3D torus", torus_chain, 4);
	expect("mesh-4x4.net", "2D mesh", torus_chain, 4);
	expect("random-24.net", "not a fat tree: a link inside level 0",
	       other_chain, 3);
	/* two fat trees whose first spines are joined */
	expect("dualrail-32.net", "not a fat tree: a link inside level 1",
	       other_chain, 3);
}
END_TEST

/* A fat tree with one leaf-to-leaf cable is no longer one. */
START_TEST(cross_link)
{
	struct fabric f;
	struct routing_result r;
	char err[512];
	int32_t a = FAB_NONE, b = FAB_NONE;

	rf_load(&f, "fat2-small.net", 0);
	for (size_t i = 0; i < f.n_nodes; i++) {
		if (!strncmp(f.nodes[i].desc, "leaf-01", 7))
			a = (int32_t)i;
		if (!strncmp(f.nodes[i].desc, "leaf-02", 7))
			b = (int32_t)i;
	}
	ck_assert(a != FAB_NONE && b != FAB_NONE);
	/* port 30 of each, up like port 1 */
	f.nodes[a].ports[30].valid = true;
	f.nodes[a].ports[30].pi = f.nodes[a].ports[1].pi;
	f.nodes[b].ports[30].valid = true;
	f.nodes[b].ports[30].pi = f.nodes[b].ports[1].pi;
	ck_assert_int_eq(fabric_link(&f, a, 30, b, 30), 0);
	ck_assert_int_eq(routing_run("auto", &f, &r, err, sizeof(err)), 0);
	ck_assert_msg(strstr(r.summary, "not a fat tree: a link inside level 0")
		      != NULL, "%s", r.summary);
	verify_ok(&f, &r);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* no_fallback: auto runs only its first choice. */
START_TEST(no_fallback)
{
	struct fabric f;
	struct routing_result r;
	char err[512];
	int rc;

	rf_load(&f, "torus-4x4.net", 0);
	rc = routing_run("auto,no_fallback", &f, &r, err, sizeof(err));
	if (routing_find("torus")) {
		ck_assert_int_eq(rc, 0);
		ck_assert_str_eq(r.engine, "torus");
		ck_assert_str_eq(r.fallback, "");
	} else {
		ck_assert_int_lt(rc, 0);
		ck_assert_ptr_nonnull(strstr(err, "torus: not built in"));
		ck_assert_ptr_null(strstr(err, "minhop"));
		ck_assert_ptr_null(r.lft);
	}
	routing_result_free(&r);
	/* the word may come first, with blanks */
	rc = routing_run(" no_fallback , minhop", &f, &r, err, sizeof(err));
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(r.engine, "minhop");
	routing_result_free(&r);
	/* alone it names no engine */
	ck_assert_int_eq(routing_run("no_fallback", &f, &r, err, sizeof(err)),
			 -EINVAL);
	fabric_free(&f);
}
END_TEST

/* OpenSM's rule in the daemon: minhop last, unless no_fallback. */
START_TEST(minhop_last)
{
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { .minhop_last = true };
	char err[512];

	if (!routing_find("ftree"))
		return;		/* needs an engine that refuses a torus */
	rf_load(&f, "torus-4x4.net", 0);
	/* the list alone: ftree refuses, nothing else is tried */
	ck_assert_int_lt(routing_run("ftree", &f, &r, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "ftree: "));
	ck_assert_ptr_null(strstr(err, "minhop"));
	/* the daemon's way: minhop last, and the fallback said */
	ck_assert_int_eq(routing_run_opts("ftree", &f, &o, &r, err,
					  sizeof(err)), 0);
	ck_assert_str_eq(r.engine, "minhop");
	ck_assert_msg(!strncmp(r.fallback, "ftree: ", 7), "%s", r.fallback);
	verify_ok(&f, &r);
	routing_result_free(&r);
	/* no_fallback: none */
	ck_assert_int_lt(routing_run_opts("ftree,no_fallback", &f, &o, &r, err,
					  sizeof(err)), 0);
	ck_assert_ptr_null(r.lft);
	fabric_free(&f);
}
END_TEST

START_TEST(lists)
{
	char err[256];

	ck_assert_int_eq(routing_check_list("auto", err, sizeof(err)), 0);
	ck_assert_int_eq(routing_check_list("minhop,no_fallback", err,
					    sizeof(err)), 0);
	ck_assert_int_eq(routing_check_list("minhop,lashh", err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "\"lashh\""));
	ck_assert_ptr_nonnull(strstr(err, "known: "));
	ck_assert_ptr_nonnull(strstr(err, "auto"));
	ck_assert_int_eq(routing_check_list("no_fallback", err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(routing_check_list("no_fallbacks", err, sizeof(err)),
			 -EINVAL);
	ck_assert_int_eq(routing_check_list("", err, sizeof(err)), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("routing_auto");
	TCase *tc = tcase_create("auto");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, fat_trees);
	tcase_add_test(tc, not_fat_trees);
	tcase_add_test(tc, cross_link);
	tcase_add_test(tc, no_fallback);
	tcase_add_test(tc, minhop_last);
	tcase_add_test(tc, lists);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
