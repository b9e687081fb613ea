/*
 * check_routing_dfsssp.c - the channel-dependency check (verify.c's
 * routing_check_cdg) on tables made by hand and by minhop, and the
 * dfsssp engine: every pair reachable, every layer acyclic, the layer
 * limit kept.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing_fixture.h"

/* ---- routing_check_cdg -------------------------------------------------- */

/*
 * Ring of 4 switches, every switch sends everything clockwise (port 2):
 * the paths 0->2, 1->3, 2->0, 3->1 chain the four clockwise channels
 * into a cycle.
 */
static void ring_clockwise(struct fabric *f, struct routing_result *r,
			   int32_t *sw)
{
	rf_ring(f, 4, sw);
	memset(r, 0, sizeof(*r));
	ck_assert_int_eq(routing_alloc_tables(f, r, f->max_lid), 0);
	for (unsigned i = 0; i < 4; i++) {
		const struct fab_node *n = &f->nodes[sw[i]];
		int32_t ca = n->ports[3].peer_node;

		for (unsigned l = 1; l <= f->max_lid; l++)
			r->lft[sw[i]].port[l] = 2;
		r->lft[sw[i]].port[n->ports[0].lid] = 0;
		r->lft[sw[i]].port[f->nodes[ca].ports[1].lid] = 3;
	}
	ck_assert_uint_eq(rf_assert_reachable(f, r), 4 * 8);
}

START_TEST(cdg_ring_cycle)
{
	struct fabric f;
	struct routing_result r;
	struct routing_cdg c;
	int32_t sw[4];

	ring_clockwise(&f, &r, sw);
	ck_assert_uint_gt(rf_cycles(&f, &r, &c), 0);
	ck_assert_uint_eq(c.layers, 1);
	ck_assert_uint_eq(c.channels, 4);	/* the clockwise ones */
	/* each channel's paths go on over the next clockwise channel */
	ck_assert_uint_eq(c.deps[0], 4);
	ck_assert_uint_eq(c.cycles[0], 1);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/*
 * The same tables, the paths from switches 0 and 1 in layer 0 and those
 * from 2 and 3 in layer 1: layer 0 holds 0->1->2->3 at most, layer 1
 * 2->3->0->1: both acyclic.  Swapping one switch's layer brings a cycle
 * back, so the check reads the layer of each source switch.
 */
START_TEST(cdg_ring_layers)
{
	struct fabric f;
	struct routing_result r;
	struct routing_cdg c;
	int32_t sw[4];

	ring_clockwise(&f, &r, sw);
	r.n_layers = 2;
	r.sl = calloc(f.n_nodes, sizeof(*r.sl));
	for (unsigned i = 0; i < 4; i++) {
		r.sl[sw[i]] = calloc((size_t)f.max_lid + 1, 1);
		memset(r.sl[sw[i]], i < 2 ? 0 : 1, (size_t)f.max_lid + 1);
	}
	ck_assert_uint_eq(rf_cycles(&f, &r, &c), 0);
	ck_assert_uint_eq(c.layers, 2);
	ck_assert_uint_gt(c.deps[0], 0);
	ck_assert_uint_gt(c.deps[1], 0);
	ck_assert_uint_eq(c.cycles[0] + c.cycles[1], 0);

	/* switch 1's paths (1->2->3->0) join layer 1 with 2->3->0->1 */
	memset(r.sl[sw[1]], 1, (size_t)f.max_lid + 1);
	ck_assert_uint_gt(rf_cycles(&f, &r, &c), 0);
	ck_assert_uint_eq(c.cycles[0], 0);
	ck_assert_uint_gt(c.cycles[1], 0);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* Two switches that send one LID to each other: a loop in the tables is
 * a cycle, and the check ends. */
START_TEST(cdg_table_loop)
{
	struct fabric f;
	struct routing_result r;
	struct routing_check chk;
	int32_t sw[4];

	ring_clockwise(&f, &r, sw);
	/* switch 0 sends its own CA's LID on to 1, and 1 sends it back */
	for (unsigned l = 1; l <= f.max_lid; l++)
		if (r.lft[sw[0]].port[l] == 3) {
			r.lft[sw[0]].port[l] = 2;
			r.lft[sw[1]].port[l] = 1;
		}
	ck_assert_int_eq(routing_check(&f, &r, &chk), 0);
	ck_assert_uint_gt(chk.loops, 0);
	ck_assert_uint_gt(rf_cycles(&f, &r, NULL), 0);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

START_TEST(cdg_minhop_tree)
{
	struct fabric f;
	struct routing_result r;
	struct routing_cdg c;

	rf_fat2(&f, 8, 4, 4);
	rf_route(&f, "minhop", NULL, &r);
	ck_assert_uint_eq(rf_cycles(&f, &r, &c), 0);
	ck_assert_uint_eq(c.channels, 2 * 8 * 4);
	ck_assert_uint_gt(c.deps[0], 0);
	routing_result_free(&r);
	fabric_free(&f);

	rf_load(&f, "fat3-pods.net", 0);
	rf_route(&f, "minhop", NULL, &r);
	ck_assert_uint_eq(rf_cycles(&f, &r, &c), 0);
	ck_assert_uint_gt(c.deps[0], 0);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

START_TEST(cdg_minhop_torus)
{
	static const char *const nets[] = {
		"torus-4x4.net", "torus-3x3x3.net",
	};

	for (size_t i = 0; i < sizeof(nets) / sizeof(nets[0]); i++) {
		struct fabric f;
		struct routing_result r;
		struct routing_cdg c;

		rf_load(&f, nets[i], 0);
		rf_route(&f, "minhop", NULL, &r);
		ck_assert_msg(rf_cycles(&f, &r, &c) > 0, "%s: no cycle", nets[i]);
		ck_assert_uint_eq(c.layers, 1);
		routing_result_free(&r);
		fabric_free(&f);
	}
}
END_TEST

static Suite *dfsssp_suite(void)
{
	Suite *s = suite_create("routing_dfsssp");
	TCase *cdg = tcase_create("cdg");

	tcase_set_timeout(cdg, 60);
	tcase_add_test(cdg, cdg_ring_cycle);
	tcase_add_test(cdg, cdg_ring_layers);
	tcase_add_test(cdg, cdg_table_loop);
	tcase_add_test(cdg, cdg_minhop_tree);
	tcase_add_test(cdg, cdg_minhop_torus);
	suite_add_tcase(s, cdg);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(dfsssp_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
