/*
 * check_routing_incr.c - incremental re-routing (routing/incr.c): after a
 * link or a host goes away, only the destinations whose trees crossed it
 * change, the merged tables pass every check a full re-route passes, and
 * they change fewer LFT blocks.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "routing/incr.h"
#include "tests/unit/routing_fixture.h"

/* Take the link at node a port pa out of the model, both ends, as a new
 * sweep's model has it. */
static void unlink_port(struct fabric *f, int32_t a, unsigned pa)
{
	struct fab_port *p = &f->nodes[a].ports[pa];
	struct fab_port *q = &f->nodes[p->peer_node].ports[p->peer_port];

	q->peer_node = FAB_NONE;
	p->peer_node = FAB_NONE;
}

static void route(const char *engine, const struct fabric *f,
		  struct routing_result *r)
{
	char err[256];

	memset(r, 0, sizeof(*r));
	ck_assert_msg(routing_run(engine, f, r, err, sizeof(err)) == 0, "%s",
		      err);
}

static void check_valid(const struct fabric *f, const struct routing_result *r)
{
	struct routing_check c;
	struct routing_cdg g;

	ck_assert_int_eq(routing_check(f, r, &c), 0);
	ck_assert_msg(routing_check_failures(&c) == 0, "%llu paths fail",
		      (unsigned long long)routing_check_failures(&c));
	ck_assert_int_eq(routing_check_cdg(f, r, &g), 0);
	ck_assert_uint_eq(routing_cdg_cycles(&g), 0);
}

/* Does the path of prev from switch s to LID l cross port (a, pa)? */
static bool crosses(const struct fabric *f, const struct routing_result *prev,
		    int32_t s, unsigned l, int32_t a, unsigned pa)
{
	for (unsigned hops = 0; hops < 64; hops++) {
		const struct lft *t = &prev->lft[s];
		uint8_t q = l <= t->top ? t->port[l] : LFT_NO_PATH;

		if (q == 0 || q == LFT_NO_PATH)
			return false;
		if (s == a && q == pa)
			return true;
		/* the model is the new one: the lost port has no peer */
		s = f->nodes[s].ports[q].peer_node;
		if (s == FAB_NONE || f->nodes[s].type != NODE_TYPE_SWITCH)
			return false;
	}
	return false;
}

static uint64_t entries_differing(const struct routing_result *a,
				  const struct routing_result *b)
{
	uint64_t n = 0;

	for (size_t s = 0; s < a->n_nodes; s++)
		if (a->lft[s].port && b->lft[s].port)
			for (unsigned l = 0; l <= a->lft[s].top &&
			     l <= b->lft[s].top; l++)
				n += a->lft[s].port[l] != b->lft[s].port[l];
	return n;
}

/*
 * A 2-level fat tree (8 leaves, 4 spines, 6 hosts a leaf) loses one
 * leaf-spine link.  Per switch: every entry that changed is one whose old
 * path crossed the link, every entry whose path crossed it changed, and
 * the result is valid, up/down (no cycle) and changes far fewer blocks
 * than the full re-route; the load stays within the full re-route's.
 */
START_TEST(fat2_link_lost_per_switch)
{
	struct fabric f;
	struct routing_result prev, full, m = { 0 };
	struct incr_stats st;
	int32_t leaf = FAB_NONE;
	unsigned pa = 6 + 2;		/* leaf's up-link to spine 1 */

	rf_fat2(&f, 8, 4, 6);
	route("ftree", &f, &prev);
	for (size_t i = 0; i < f.n_nodes && leaf == FAB_NONE; i++)
		if (f.nodes[i].type == NODE_TYPE_SWITCH &&
		    f.nodes[i].num_ports == 10)
			leaf = (int32_t)i;
	ck_assert_int_ne(leaf, FAB_NONE);
	int32_t spine = f.nodes[leaf].ports[pa].peer_node;
	unsigned sp = f.nodes[leaf].ports[pa].peer_port;

	unlink_port(&f, leaf, pa);
	route("ftree", &f, &full);
	ck_assert_int_eq(routing_merge_incremental(&f, &prev, &full, true, &m,
						   &st), 0);
	check_valid(&f, &m);
	ck_assert_uint_gt(st.rerouted, 0);
	ck_assert_uint_eq(st.gone, 0);
	ck_assert_uint_eq(st.dests, 8 * 6 + 12);
	for (size_t s = 0; s < f.n_nodes; s++) {
		if (!m.lft[s].port)
			continue;
		for (unsigned l = 1; l <= m.lft[s].top; l++) {
			bool was = crosses(&f, &prev, (int32_t)s, l, leaf, pa) ||
				   crosses(&f, &prev, (int32_t)s, l, spine, sp);
			bool changed = m.lft[s].port[l] != prev.lft[s].port[l];

			ck_assert_msg(!changed || was, "switch %zu LID %u changed"
				      " without crossing the lost link", s, l);
			ck_assert_msg(!was || changed, "switch %zu LID %u still"
				      " crosses the lost link", s, l);
		}
	}
	/* 12 switches of one block each (60 LIDs): the saving shows in
	 * entries here; fat2-1152 in the daemon: 85 blocks against 1,278 */
	ck_assert_uint_le(st.blocks_incr, st.blocks_full);
	ck_assert_uint_lt(st.entries * 3, entries_differing(&prev, &full));
	ck_assert_uint_eq(st.blocks_incr, routing_blocks_differing(&prev, &m));
	double rm = rf_load_ratio(&f, &m), rfull = rf_load_ratio(&f, &full);

	ck_assert_msg(rm <= rfull * 1.25, "merged load %.3f, full %.3f", rm,
		      rfull);
	routing_result_free(&m);
	/* Per destination: each LID's column is the old one or the new one. */
	ck_assert_int_eq(routing_merge_incremental(&f, &prev, &full, false, &m,
						   &st), 0);
	check_valid(&f, &m);
	for (unsigned l = 1; l <= m.lft[leaf].top; l++) {
		bool all_old = true, all_new = true;

		for (size_t s = 0; s < f.n_nodes; s++) {
			if (!m.lft[s].port)
				continue;
			all_old &= m.lft[s].port[l] == prev.lft[s].port[l];
			all_new &= m.lft[s].port[l] == full.lft[s].port[l];
		}
		ck_assert_msg(all_old || all_new, "LID %u mixes", l);
	}
	routing_result_free(&m);
	routing_result_free(&full);
	routing_result_free(&prev);
	fabric_free(&f);
}
END_TEST

/* A host goes away: its LID is cleared everywhere and nothing else moves. */
START_TEST(host_gone)
{
	struct fabric f;
	struct routing_result prev, full, m = { 0 };
	struct incr_stats st;
	int32_t ca = FAB_NONE;
	uint16_t lid;

	rf_fat2(&f, 4, 2, 4);
	route("ftree", &f, &prev);
	for (size_t i = 0; i < f.n_nodes && ca == FAB_NONE; i++)
		if (f.nodes[i].type == NODE_TYPE_CA)
			ca = (int32_t)i;
	lid = f.nodes[ca].ports[1].lid;
	unlink_port(&f, ca, 1);
	f.nodes[ca].ports[1].lid = 0;	/* not discovered any more */
	route("ftree", &f, &full);
	ck_assert_int_eq(routing_merge_incremental(&f, &prev, &full, true, &m,
						   &st), 0);
	ck_assert_uint_eq(st.gone, 1);
	ck_assert_uint_eq(st.rerouted, 0);
	for (size_t s = 0; s < f.n_nodes; s++) {
		if (!m.lft[s].port)
			continue;
		ck_assert_uint_eq(m.lft[s].port[lid], full.lft[s].port[lid]);
		for (unsigned l = 1; l <= m.lft[s].top; l++)
			if (l != lid)
				ck_assert_uint_eq(m.lft[s].port[l],
						  prev.lft[s].port[l]);
	}
	routing_result_free(&m);
	routing_result_free(&full);
	routing_result_free(&prev);
	fabric_free(&f);
}
END_TEST

/* A torus routed with layers loses a link: the merged tables keep the
 * layers of the columns they keep, every path is still whole, and the
 * dependency check catches what joining two layer assignments does. */
START_TEST(torus_layers)
{
	struct fabric f;
	struct routing_result prev, full, m = { 0 };
	struct incr_stats st;
	unsigned passed = 0, cyclic = 0;

	rf_torus(&f, 4, 4, 1);
	route("dfsssp", &f, &prev);
	ck_assert_uint_gt(prev.n_layers, 1);
	for (size_t i = 0; i < f.n_nodes; i++)
		if (f.nodes[i].type == NODE_TYPE_SWITCH) {
			for (unsigned p = 1; p <= f.nodes[i].num_ports; p++)
				if (f.nodes[i].ports[p].peer_node != FAB_NONE &&
				    f.nodes[f.nodes[i].ports[p].peer_node].type ==
				    NODE_TYPE_SWITCH) {
					unlink_port(&f, (int32_t)i, p);
					break;
				}
			break;
		}
	route("dfsssp", &f, &full);
	for (int per_switch = 1; per_switch >= 0; per_switch--) {
		struct routing_check c;
		struct routing_cdg g;

		ck_assert_int_eq(routing_merge_incremental(&f, &prev, &full,
							   per_switch, &m, &st), 0);
		ck_assert_uint_gt(st.rerouted, 0);
		ck_assert_uint_eq(m.n_layers, full.n_layers);
		ck_assert_ptr_nonnull(m.sl);
		ck_assert_int_eq(routing_check(&f, &m, &c), 0);
		ck_assert_int_eq(routing_check_cdg(&f, &m, &g), 0);
		if (!per_switch)	/* whole trees: always reachable */
			ck_assert_uint_eq(routing_check_failures(&c), 0);
		if (!routing_check_failures(&c) && !routing_cdg_cycles(&g))
			passed++;
		else
			cyclic++;
		routing_result_free(&m);
	}
	/* Trees of two layer assignments joined close dependency cycles
	 * here: the checks see them, and the daemon programs the full new
	 * tables instead (sm/route.c). */
	ck_assert_uint_eq(passed + cyclic, 2);
	ck_assert_uint_ge(cyclic, 1);
	routing_result_free(&full);
	routing_result_free(&prev);
	fabric_free(&f);
}
END_TEST

/* Layers in one only, or a switch table in one only: refused. */
START_TEST(misfit_refused)
{
	struct fabric f;
	struct routing_result a, b, m = { 0 };
	struct incr_stats st;

	rf_torus(&f, 3, 3, 1);
	route("dfsssp", &f, &a);
	route("minhop", &f, &b);
	ck_assert_ptr_nonnull(a.sl);
	ck_assert_ptr_null(b.sl);
	ck_assert_int_eq(routing_merge_incremental(&f, &a, &b, true, &m, &st),
			 -EINVAL);
	ck_assert_ptr_null(m.lft);
	routing_result_free(&a);
	routing_result_free(&b);
	fabric_free(&f);
}
END_TEST

static Suite *incr_suite(void)
{
	Suite *s = suite_create("routing_incr");
	TCase *tc = tcase_create("incr");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, fat2_link_lost_per_switch);
	tcase_add_test(tc, host_gone);
	tcase_add_test(tc, torus_layers);
	tcase_add_test(tc, misfit_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(incr_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
