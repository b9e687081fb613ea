/*
 * check_routing_updn.c - the updn and dnup engines: roots found on every
 * connected topology (tori, meshes and random graphs, where OpenSM's updn
 * finds none), every pair reachable, no channel-dependency cycle on one
 * VL, the fat-tree roots found and the load spread over the up-links,
 * root_guid_file honoured.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing_fixture.h"

static const char *const engines[] = { "updn", "dnup" };

static void deadlock_free(const struct fabric *f, const char *engine,
			  const struct routing_opts *o)
{
	struct routing_result r;

	rf_route(f, engine, o, &r);
	ck_assert_str_eq(r.engine, engine);
	ck_assert_uint_eq(r.n_layers, 0);
	ck_assert_ptr_null(r.sl);
	ck_assert_msg(r.summary[0], "%s: no summary", engine);
	rf_assert_deadlock_free(f, &r);
	routing_result_free(&r);
}

START_TEST(bundled_topologies)
{
	static const char *const nets[] = {
		"torus-4x4.net", "torus-3x3x3.net", "mesh-4x4.net",
		"random-24.net", "fat3-pods.net", "fat2-128.net",
		"dualrail-32.net", "tiny.net",
	};

	for (size_t i = 0; i < sizeof(nets) / sizeof(nets[0]); i++) {
		struct fabric f;

		rf_load(&f, nets[i], 0);
		deadlock_free(&f, engines[_i], NULL);
		fabric_free(&f);
	}
}
END_TEST

/* minhop has cycles on a torus; updn on the same fabric has none */
START_TEST(torus_6x6)
{
	struct fabric f;
	struct routing_result r;

	rf_torus(&f, 6, 6, 2);
	rf_route(&f, "minhop", NULL, &r);
	ck_assert_uint_gt(rf_cycles(&f, &r, NULL), 0);
	routing_result_free(&r);
	rf_route(&f, engines[_i], NULL, &r);
	ck_assert_msg(strstr(r.summary, "1 central root"), "%s", r.summary);
	rf_assert_deadlock_free(&f, &r);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

START_TEST(random_graphs)
{
	for (unsigned round = 0; round < 10; round++) {
		struct fabric f;

		rf_random(&f, 20 + round * 3, 3 + round % 4, 1 + round % 2,
			  round % 3, 777u + round * 31u);
		deadlock_free(&f, engines[_i], NULL);
		fabric_free(&f);
	}
}
END_TEST

/*
 * 2-level fat tree, 8 leaves x 4 hosts, 4 spines: the spines are the
 * roots, every path is leaf - spine - leaf, and each leaf spreads the 28
 * remote hosts 7 per up-link.
 */
START_TEST(fat_tree)
{
	struct fabric f;
	struct routing_result r;

	rf_fat2(&f, 8, 4, 4);
	rf_route(&f, engines[_i], NULL, &r);
	ck_assert_msg(strstr(r.summary, "2-level tree"), "%s", r.summary);
	rf_assert_deadlock_free(&f, &r);
	for (size_t i = 0; i < f.n_nodes; i++) {
		const struct fab_node *n = &f.nodes[i];
		unsigned per[8] = { 0 };

		if (n->type != NODE_TYPE_SWITCH ||
		    f.nodes[n->ports[1].peer_node].type != NODE_TYPE_CA)
			continue;		/* leaves: hosts on 1-4 */
		for (unsigned l = 1; l <= f.max_lid; l++) {
			unsigned e = r.lft[i].port[l];

			if (e >= 5 && e <= 8 &&
			    f.nodes[n->ports[e].peer_node].type == NODE_TYPE_SWITCH) {
				/* count only CA LIDs */
				for (size_t j = 0; j < f.n_nodes; j++)
					if (f.nodes[j].type == NODE_TYPE_CA &&
					    f.nodes[j].ports[1].lid == l)
						per[e - 5]++;
			}
		}
		for (unsigned p = 0; p < 4; p++)
			ck_assert_uint_eq(per[p], 7);
	}
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* root_guid_file: one spine as the only root carries every leaf-to-leaf
 * path; a GUID that is no switch leaves the choice automatic. */
START_TEST(root_guids)
{
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { 0 };
	uint64_t guid;
	int32_t spine = -1;

	rf_fat2(&f, 6, 3, 2);
	for (size_t i = 0; i < f.n_nodes; i++)
		if (f.nodes[i].type == NODE_TYPE_SWITCH && f.nodes[i].num_ports == 6) {
			spine = (int32_t)i;	/* the last spine */
		}
	ck_assert_int_ge(spine, 0);
	guid = f.nodes[spine].guid;
	o.root_guids = &guid;
	o.n_root_guids = 1;
	rf_route(&f, "updn", &o, &r);
	ck_assert_msg(strstr(r.summary, "1 roots from root_guid_file"), "%s",
		      r.summary);
	rf_assert_deadlock_free(&f, &r);
	/* every leaf sends every remote CA LID to that spine */
	for (size_t i = 0; i < f.n_nodes; i++) {
		const struct fab_node *n = &f.nodes[i];

		if (n->type != NODE_TYPE_SWITCH || n->num_ports != 5)
			continue;
		for (size_t j = 0; j < f.n_nodes; j++) {
			unsigned l = f.nodes[j].ports[1].lid, e;

			if (f.nodes[j].type != NODE_TYPE_CA ||
			    f.nodes[j].ports[1].peer_node == (int32_t)i)
				continue;
			e = r.lft[i].port[l];
			ck_assert_int_eq(n->ports[e].peer_node, spine);
		}
	}
	routing_result_free(&r);

	guid = 0x123456789ull;
	rf_route(&f, "updn", &o, &r);
	ck_assert_msg(strstr(r.summary, "no root_guid_file GUID is a switch"),
		      "%s", r.summary);
	ck_assert_msg(strstr(r.summary, "3 roots"), "%s", r.summary);
	rf_assert_deadlock_free(&f, &r);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* Two separate rings: each routed on its own, no cross-ring entries. */
START_TEST(two_components)
{
	struct fabric f;
	struct routing_result r;
	struct routing_check chk;
	int32_t sw[8];

	fabric_init(&f);
	for (unsigned i = 0; i < 8; i++) {
		sw[i] = rf_sw(&f, 3);
		rf_link(&f, rf_ca(&f), 1, sw[i], 3);
	}
	for (unsigned i = 0; i < 4; i++) {
		rf_link(&f, sw[i], 2, sw[(i + 1) % 4], 1);
		rf_link(&f, sw[4 + i], 2, sw[4 + (i + 1) % 4], 1);
	}
	ck_assert_int_eq(lid_assign_sequential(&f, 0), 0);
	rf_route(&f, engines[_i], NULL, &r);
	ck_assert_msg(strstr(r.summary, "2 central roots"), "%s", r.summary);
	ck_assert_int_eq(routing_check(&f, &r, &chk), 0);
	/* 8 hosts x 16 LIDs, half of them on the other ring */
	ck_assert_uint_eq(chk.pairs, 8 * 16);
	ck_assert_uint_eq(chk.unreachable, 8 * 8);
	ck_assert_uint_eq(chk.loops + chk.misrouted, 0);
	ck_assert_uint_eq(rf_cycles(&f, &r, NULL), 0);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

static Suite *updn_suite(void)
{
	Suite *s = suite_create("routing_updn");
	TCase *tc = tcase_create("updn");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, bundled_topologies, 0, 2);
	tcase_add_loop_test(tc, torus_6x6, 0, 2);
	tcase_add_loop_test(tc, random_graphs, 0, 2);
	tcase_add_loop_test(tc, fat_tree, 0, 2);
	tcase_add_test(tc, root_guids);
	tcase_add_loop_test(tc, two_components, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(updn_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
