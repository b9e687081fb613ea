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

/* ---- dfsssp -------------------------------------------------------------- */

/* Route with dfsssp: reachable, acyclic per layer, layers within `max`,
 * an SL for every switch and LID below n_layers. */
static void dfsssp_ok(const struct fabric *f, const struct routing_opts *o,
		      struct routing_result *r, unsigned max)
{
	rf_route(f, "dfsssp", o, r);
	ck_assert_str_eq(r->engine, "dfsssp");
	ck_assert_uint_ge(r->n_layers, 1);
	ck_assert_uint_le(r->n_layers, max);
	ck_assert_ptr_nonnull(r->sl);
	for (size_t i = 0; i < f->n_nodes; i++) {
		if (f->nodes[i].type != NODE_TYPE_SWITCH)
			continue;
		ck_assert_ptr_nonnull(r->sl[i]);
		for (unsigned l = 0; l <= f->max_lid; l++)
			ck_assert_uint_lt(r->sl[i][l], r->n_layers);
	}
	rf_assert_deadlock_free(f, r);
}

START_TEST(dfsssp_bundled)
{
	static const char *const nets[] = {
		"torus-4x4.net", "torus-3x3x3.net", "mesh-4x4.net",
		"random-24.net", "dualrail-32.net", "tiny.net",
	};

	for (size_t i = 0; i < sizeof(nets) / sizeof(nets[0]); i++) {
		struct fabric f;
		struct routing_result r;

		rf_load(&f, nets[i], 0);
		dfsssp_ok(&f, NULL, &r, 8);	/* ibsim ports: 8 VLs */
		ck_assert_msg(strstr(r.summary, "shortest paths,"), "%s: %s",
			      nets[i], r.summary);
		routing_result_free(&r);
		fabric_free(&f);
	}
}
END_TEST

/* A fat tree needs no second layer: up/down shortest paths. */
START_TEST(dfsssp_fat_tree)
{
	struct fabric f;
	struct routing_result r;

	rf_load(&f, "fat3-pods.net", 0);
	dfsssp_ok(&f, NULL, &r, 1);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/*
 * 6x6 torus, 2 hosts per switch: minhop's tables have cycles; dfsssp's
 * have none in any layer and spread the all-to-all load at least as well
 * (the test prints both figures).
 */
START_TEST(dfsssp_torus_6x6)
{
	struct fabric f;
	struct routing_result r;
	double mh, df;

	rf_torus(&f, 6, 6, 2);
	rf_route(&f, "minhop", NULL, &r);
	ck_assert_uint_gt(rf_cycles(&f, &r, NULL), 0);
	mh = rf_load_ratio(&f, &r);
	routing_result_free(&r);
	dfsssp_ok(&f, NULL, &r, 8);
	ck_assert_uint_ge(r.n_layers, 2);
	df = rf_load_ratio(&f, &r);
	printf("6x6 torus: max link load / ideal: minhop %.2f, dfsssp %.2f "
	       "(%u layers)\n", mh, df, r.n_layers);
	ck_assert_msg(df <= mh, "dfsssp %.2f x ideal, minhop %.2f", df, mh);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

START_TEST(dfsssp_random)
{
	for (unsigned round = 0; round < 10; round++) {
		struct fabric f;
		struct routing_result r;

		rf_random(&f, 20 + round * 4, 3 + round % 4, 1 + round % 2,
			  round % 3, 4242u + round * 17u);
		dfsssp_ok(&f, NULL, &r, ROUTING_MAX_LAYERS);
		routing_result_free(&r);
		fabric_free(&f);
	}
}
END_TEST

/*
 * Fewer layers than the shortest paths need: with max_layers 1 the whole
 * fabric goes up*\/down* on one VL, with 2 or 3 the LIDs that do not fit
 * go up*\/down* in the last layer; never a cycle.
 */
START_TEST(dfsssp_layer_limit)
{
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { 0 };

	rf_torus(&f, 6, 6, 1);
	o.max_layers = 1;
	dfsssp_ok(&f, &o, &r, 1);
	ck_assert_msg(strstr(r.summary, "whole fabric up*/down*"), "%s",
		      r.summary);
	routing_result_free(&r);
	for (unsigned k = 2; k <= 3; k++) {
		o.max_layers = k;
		dfsssp_ok(&f, &o, &r, k);
		ck_assert_msg(strstr(r.summary, "up*/down* in layer"), "%s",
			      r.summary);
		routing_result_free(&r);
	}
	fabric_free(&f);
}
END_TEST

/*
 * Layers that fill up: on a 150-switch random graph with 2 layers, after
 * DFSSSP_FULL_RUN LIDs in a row fit no layer the rest go up*\/down*
 * untried ("layers full"); most LIDs are then left over, so the layers
 * are dropped for one VL; the tables are still deadlock-free with every
 * pair reachable.
 */
START_TEST(dfsssp_layers_full)
{
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { .max_layers = 2 };

	rf_random(&f, 150, 6, 3, 0, 7);
	dfsssp_ok(&f, &o, &r, 2);
	ck_assert_msg(strstr(r.summary, "layers full"), "%s", r.summary);
	/* 579 of 600 LIDs left over: the layers are dropped, the whole
	 * fabric goes up*\/down* on one VL (no SL-to-VL tables to set). */
	ck_assert_uint_eq(r.n_layers, 1);
	ck_assert_msg(strstr(r.summary, "fit no layer of 1 (layers full): "
				"whole fabric up*/down* on 1 VL"), "%s", r.summary);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/*
 * Layering that cannot succeed stops early: on a 600-switch random graph
 * (6,600 LIDs, 8 layers) each LID meets full layers, and at its pace the
 * pass would not place half of them within twice the work bound.  It
 * gives up after about 1/16 of the bound (1.0-1.1 M channel visits, said
 * in the summary) instead of running to the bound (16.8 M, 1.4 s per pass
 * in a release build) for the same tables: one VL, up*\/down*.
 */
START_TEST(dfsssp_hopeless_gives_up)
{
	struct fabric f;
	struct routing_result r;

	rf_random(&f, 600, 8, 10, 0, 11);
	/* the tables themselves: as dfsssp_layers_full checks them (a walk
	 * of 6,600 LIDs' paths here would take 20 s under ASan) */
	rf_route(&f, "dfsssp", NULL, &r);
	ck_assert_str_eq(r.engine, "dfsssp");
	ck_assert_uint_eq(r.n_layers, 1);
	const char *g = strstr(r.summary, "gave up after ");
	ck_assert_msg(g, "%s", r.summary);
	double m = strtod(g + strlen("gave up after "), NULL);
	ck_assert_msg(m >= 1.0 && m < 4.2, "%s", r.summary);	/* of 16.8 */
	ck_assert_msg(strstr(r.summary, "whole fabric up*/down* on 1 VL"), "%s",
		      r.summary);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* One inter-switch port that runs 2 VLs (OperationalVLs 2) limits every
 * path to 2 layers; VLCap counts where OperationalVLs is 0. */
START_TEST(dfsssp_port_vls)
{
	struct fabric f;
	struct routing_result r;
	struct fab_node *n;

	rf_torus(&f, 5, 5, 1);
	n = &f.nodes[0];
	ck_assert_uint_eq(n->type, NODE_TYPE_SWITCH);
	pi_set_op_vls(&n->ports[2].pi, 2);
	dfsssp_ok(&f, NULL, &r, 2);
	ck_assert_msg(strstr(r.summary, "2 allowed"), "%s", r.summary);
	routing_result_free(&r);

	pi_set_op_vls(&n->ports[2].pi, 0);
	SET_HI4(n->ports[2].pi.vl_cap_init_type, 1);	/* VL0 only */
	dfsssp_ok(&f, NULL, &r, 1);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/*
 * A random graph whose destination trees do not all fit 8 layers whole:
 * some LIDs get their paths layered per source switch (different SLs for
 * one LID), and still no layer has a cycle.
 */
START_TEST(dfsssp_split_paths)
{
	struct fabric f;
	struct routing_result r;
	bool split = false;

	rf_random(&f, 64, 6, 2, 0, 99);
	for (size_t i = 0; i < f.n_nodes; i++)
		for (unsigned p = 0; p <= f.nodes[i].num_ports; p++)
			SET_HI4(f.nodes[i].ports[p].pi.vl_cap_init_type, 4);
	dfsssp_ok(&f, NULL, &r, 8);
	printf("random 64 switches: %s\n", r.summary);
	ck_assert_msg(!strstr(r.summary, "(0 LIDs layered per source)"), "%s",
		      r.summary);
	for (unsigned l = 1; l <= f.max_lid && !split; l++) {
		int first = -1;

		for (size_t i = 0; i < f.n_nodes; i++) {
			const struct fab_node *n = &f.nodes[i];

			if (n->type != NODE_TYPE_SWITCH ||
			    f.nodes[n->ports[7].peer_node].type != NODE_TYPE_CA)
				continue;	/* ports 7, 8: the hosts */
			if (first < 0)
				first = r.sl[i][l];
			else if (first != r.sl[i][l])
				split = true;
		}
	}
	ck_assert(split);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/*
 * The verifier splits the LIDs over threads on large fabrics
 * (routing/verify.c).  Forced to 2, 3 and 4 threads on a small one (some
 * then get no block at all), both walks must find exactly what one
 * thread finds: minhop on a torus (dependency cycles), dfsssp's layers,
 * and tables with a misroute and a hole in different blocks (the first
 * failure by LID is the one reported).
 */
static void same_on_threads(const struct fabric *f,
			    const struct routing_result *r)
{
	struct routing_check c1, cn;
	struct routing_cdg d1, dn;

	routing_verify_set_threads(1);
	ck_assert_int_eq(routing_check(f, r, &c1), 0);
	ck_assert_int_eq(routing_check_cdg(f, r, &d1), 0);
	for (unsigned n = 2; n <= 4; n++) {
		routing_verify_set_threads(n);
		ck_assert_int_eq(routing_check(f, r, &cn), 0);
		ck_assert_int_eq(routing_check_cdg(f, r, &dn), 0);
		ck_assert_uint_eq(cn.pairs, c1.pairs);
		ck_assert_uint_eq(cn.unreachable, c1.unreachable);
		ck_assert_uint_eq(cn.loops, c1.loops);
		ck_assert_uint_eq(cn.misrouted, c1.misrouted);
		ck_assert_uint_eq(cn.hop_sum, c1.hop_sum);
		ck_assert_uint_eq(cn.max_hops, c1.max_hops);
		ck_assert_uint_eq(cn.bad_lid, c1.bad_lid);
		ck_assert_int_eq(cn.bad_switch, c1.bad_switch);
		ck_assert_uint_eq(dn.layers, d1.layers);
		ck_assert_uint_eq(dn.channels, d1.channels);
		for (unsigned l = 0; l < ROUTING_MAX_LAYERS; l++) {
			ck_assert_uint_eq(dn.deps[l], d1.deps[l]);
			ck_assert_uint_eq(dn.cycles[l], d1.cycles[l]);
		}
	}
	routing_verify_set_threads(0);
}

START_TEST(verify_threads_agree)
{
	struct fabric f;
	struct routing_result r;
	struct routing_check c;
	struct routing_cdg d;
	int32_t sw = -1;

	rf_torus(&f, 8, 8, 4);		/* 320 LIDs: 6 blocks of 64 */
	ck_assert_uint_gt(f.max_lid, 4 * 64);
	rf_route(&f, "minhop", NULL, &r);
	ck_assert_uint_gt(rf_cycles(&f, &r, NULL), 0);
	same_on_threads(&f, &r);

	/* a hole for LID 300 and, earlier, a misroute for LID 100 */
	for (size_t i = 0; i < f.n_nodes && sw < 0; i++)
		if (f.nodes[i].type == NODE_TYPE_SWITCH &&
		    f.nodes[i].ports[0].lid != 100 &&
		    f.nodes[i].ports[0].lid != 300)
			sw = (int32_t)i;
	r.lft[sw].port[300] = LFT_NO_PATH;
	r.lft[sw].port[100] = 0;	/* not its LID: misrouted */
	same_on_threads(&f, &r);
	routing_verify_set_threads(4);
	ck_assert_int_eq(routing_check(&f, &r, &c), 0);
	ck_assert_uint_gt(c.unreachable, 0);
	ck_assert_uint_gt(c.misrouted, 0);
	ck_assert_uint_eq(c.bad_lid, 100);
	routing_verify_set_threads(0);
	routing_result_free(&r);

	rf_route(&f, "dfsssp", NULL, &r);
	ck_assert_uint_gt(r.n_layers, 1);
	ck_assert_uint_eq(rf_cycles(&f, &r, &d), 0);
	ck_assert_uint_gt(d.layers, 1);
	same_on_threads(&f, &r);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

static Suite *dfsssp_suite(void)
{
	Suite *s = suite_create("routing_dfsssp");
	TCase *cdg = tcase_create("cdg");
	TCase *df = tcase_create("dfsssp");

	tcase_set_timeout(cdg, 60);
	tcase_add_test(cdg, cdg_ring_cycle);
	tcase_add_test(cdg, cdg_ring_layers);
	tcase_add_test(cdg, cdg_table_loop);
	tcase_add_test(cdg, cdg_minhop_tree);
	tcase_add_test(cdg, cdg_minhop_torus);
	tcase_add_test(cdg, verify_threads_agree);
	suite_add_tcase(s, cdg);

	tcase_set_timeout(df, 120);
	tcase_add_test(df, dfsssp_bundled);
	tcase_add_test(df, dfsssp_fat_tree);
	tcase_add_test(df, dfsssp_torus_6x6);
	tcase_add_test(df, dfsssp_random);
	tcase_add_test(df, dfsssp_layers_full);
	tcase_add_test(df, dfsssp_hopeless_gives_up);
	tcase_add_test(df, dfsssp_layer_limit);
	tcase_add_test(df, dfsssp_port_vls);
	tcase_add_test(df, dfsssp_split_paths);
	suite_add_tcase(s, df);
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
