/*
 * check_routing_updn_keys.c - updn's connect_roots and ids_guid_file:
 * roots with hosts kept and connected by shortest paths (or not, when
 * that would close a credit loop), hostless roots reaching each other
 * either way, the ids deciding which of two equal-rank switches is the
 * upper one; the ids_guid_file parser on bad input.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/order.h"
#include "routing_fixture.h"

/* The leaves (switches with a CA on port 1) of f, in node order. */
static unsigned leaves_of(const struct fabric *f, int32_t *leaf, unsigned max)
{
	unsigned n = 0;

	for (size_t i = 0; i < f->n_nodes && n < max; i++) {
		const struct fab_node *x = &f->nodes[i];

		if (x->type == NODE_TYPE_SWITCH && x->ports[1].peer_node >= 0 &&
		    f->nodes[x->ports[1].peer_node].type == NODE_TYPE_CA)
			leaf[n++] = (int32_t)i;
	}
	return n;
}

/* Hops from switch `from` to `lid` through r's tables (99: no path). */
static unsigned hops_to(const struct fabric *f, const struct routing_result *r,
			int32_t from, uint16_t lid)
{
	int32_t at = from;

	for (unsigned h = 0; h < 16; h++) {
		uint8_t e = r->lft[at].port[lid];
		const struct fab_node *n = &f->nodes[at];

		if (e == LFT_NO_PATH)
			return 99;
		if (e == 0 || f->nodes[n->ports[e].peer_node].type !=
		    NODE_TYPE_SWITCH)
			return h;
		at = n->ports[e].peer_node;
	}
	return 99;
}

/*
 * Two leaves (with hosts) of a 2-level fat tree named roots: without
 * connect_roots no up*\/down* path joins them (leaf, spine, leaf turns
 * down then up), so updn keeps one of them; with it both stay roots and
 * their LIDs go by shortest paths, which close no cycle here.
 */
START_TEST(connect_leaf_roots)
{
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { 0 };
	int32_t leaf[8];
	uint64_t guid[2];

	rf_fat2(&f, 6, 2, 3);
	ck_assert_uint_eq(leaves_of(&f, leaf, 8), 6);
	guid[0] = f.nodes[leaf[0]].guid;
	guid[1] = f.nodes[leaf[1]].guid;
	o.root_guids = guid;
	o.n_root_guids = 2;
	rf_route(&f, "updn", &o, &r);
	ck_assert_msg(strstr(r.summary, "1 roots from root_guid_file"), "%s",
		      r.summary);
	ck_assert_ptr_null(strstr(r.summary, "connect"));
	rf_assert_deadlock_free(&f, &r);
	routing_result_free(&r);

	o.connect_roots = true;
	rf_route(&f, "updn", &o, &r);
	ck_assert_msg(strstr(r.summary, "2 roots from root_guid_file"), "%s",
		      r.summary);
	ck_assert_msg(strstr(r.summary, "roots connected (connect_roots)"),
		      "%s", r.summary);
	ck_assert(r.cdg_acyclic);
	rf_assert_deadlock_free(&f, &r);
	/* root to root (switch LID and CA LIDs): leaf, spine, leaf */
	for (unsigned k = 0; k < 2; k++) {
		int32_t a = leaf[k], b = leaf[1 - k];

		ck_assert_uint_eq(hops_to(&f, &r, a, f.nodes[b].ports[0].lid), 2);
		ck_assert_uint_eq(hops_to(&f, &r, a, f.nodes[f.nodes[b].ports[1]
					  .peer_node].ports[1].lid), 2);
	}
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/*
 * Hostless roots (the spines of a fat tree): no up*\/down* path joins
 * them either, but nothing but their own management traffic takes the
 * entry, so updn routes it by a shortest path with or without
 * connect_roots (OpenSM leaves it empty without).
 */
START_TEST(hostless_roots_reach)
{
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { 0 };

	rf_fat2(&f, 4, 3, 2);
	for (int c = 0; c < 2; c++) {
		o.connect_roots = c;
		rf_route(&f, "updn", &o, &r);
		ck_assert_msg(strstr(r.summary, "3 roots"), "%s", r.summary);
		ck_assert_msg(!c || strstr(r.summary, "roots connected"), "%s",
			      r.summary);
		/* spines are nodes 0 .. 2 */
		for (int32_t a = 0; a < 3; a++)
			for (int32_t b = 0; b < 3; b++)
				ck_assert_uint_eq(hops_to(&f, &r, a,
					f.nodes[b].ports[0].lid), a == b ? 0 : 2);
		rf_assert_deadlock_free(&f, &r);
		routing_result_free(&r);
	}
	fabric_free(&f);
}
END_TEST

/*
 * A random graph of 6 switches with a host each, roots 0 and 3 from
 * root_guid_file: the shortest paths between the roots close a credit
 * loop with the up*\/down* paths, so updn routes as without
 * connect_roots (the very same tables) and says why.
 */
START_TEST(connect_would_loop)
{
	struct fabric f;
	struct routing_result r, plain;
	struct routing_opts o = { 0 };
	uint64_t guid[2];

	rf_random(&f, 6, 3, 1, 0, 12);
	guid[0] = f.nodes[0].guid;	/* switch 0 */
	guid[1] = f.nodes[6].guid;	/* switch 3 */
	ck_assert_uint_eq(f.nodes[6].type, NODE_TYPE_SWITCH);
	o.root_guids = guid;
	o.n_root_guids = 2;
	rf_route(&f, "updn", &o, &plain);
	ck_assert_msg(strstr(plain.summary, "2 roots from root_guid_file"),
		      "%s", plain.summary);
	o.connect_roots = true;
	rf_route(&f, "updn", &o, &r);
	ck_assert_msg(strstr(r.summary, "2 roots from root_guid_file, "
			     "connect_roots not applied: it closes 1 channel "
			     "dependency cycles"), "%s", r.summary);
	rf_assert_deadlock_free(&f, &r);
	for (size_t i = 0; i < f.n_nodes; i++)
		if (f.nodes[i].type == NODE_TYPE_SWITCH)
			ck_assert_mem_eq(r.lft[i].port, plain.lft[i].port,
					 (size_t)f.max_lid + 1);
	routing_result_free(&r);
	routing_result_free(&plain);
	fabric_free(&f);
}
END_TEST

/*
 * A hostless root over a ring A-B-C-D of equal-rank switches with 4 hosts
 * each: a path A-B-C is legal unless B is the lowest of the three in the
 * order (down onto B, then up): the ids decide which ring switch no path
 * may cross.  In node order (no ids) D is last; with ids B is.
 */
static unsigned via(const struct fabric *f, const struct routing_result *r,
		    int32_t from, int32_t to, int32_t mid)
{
	unsigned n = 0;

	for (unsigned p = 1; p <= 4; p++) {
		uint16_t lid = f->nodes[f->nodes[to].ports[p].peer_node]
			       .ports[1].lid;
		uint8_t e = r->lft[from].port[lid];

		n += f->nodes[from].ports[e].peer_node == mid;
	}
	return n;
}

static void ring_under_root(struct fabric *f, int32_t *sw, int32_t *root)
{
	fabric_init(f);
	for (unsigned i = 0; i < 4; i++) {
		sw[i] = rf_sw(f, 7);
		for (unsigned h = 1; h <= 4; h++)
			rf_link(f, rf_ca(f), 1, sw[i], h);
	}
	*root = rf_sw(f, 4);
	for (unsigned i = 0; i < 4; i++) {
		rf_link(f, sw[i], 6, sw[(i + 1) % 4], 5);
		rf_link(f, sw[i], 7, *root, i + 1);
	}
	ck_assert_int_eq(lid_assign_sequential(f, 0), 0);
}

START_TEST(ids_decide_direction)
{
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { 0 };
	int32_t sw[4], root;
	uint64_t rguid, ig[2], id[2];
	unsigned b_default = 0, d_default = 0, b_ids = 0, d_ids = 0;

	ring_under_root(&f, sw, &root);
	rguid = f.nodes[root].guid;
	o.root_guids = &rguid;
	o.n_root_guids = 1;
	rf_route(&f, "updn", &o, &r);
	rf_assert_deadlock_free(&f, &r);
	for (int k = 0; k < 2; k++) {
		b_default += via(&f, &r, sw[2 * k], sw[2 - 2 * k], sw[1]);
		d_default += via(&f, &r, sw[2 * k], sw[2 - 2 * k], sw[3]);
	}
	routing_result_free(&r);
	/* B the highest id (lowest in the order), D the lowest */
	ig[0] = f.nodes[sw[1]].guid;
	id[0] = UINT64_MAX;
	ig[1] = f.nodes[sw[3]].guid;
	id[1] = 0;
	o.id_guids = ig;
	o.ids = id;
	o.n_ids = 2;
	rf_route(&f, "updn", &o, &r);
	ck_assert_msg(strstr(r.summary, "ids from ids_guid_file"), "%s",
		      r.summary);
	rf_assert_deadlock_free(&f, &r);
	for (int k = 0; k < 2; k++) {
		b_ids += via(&f, &r, sw[2 * k], sw[2 - 2 * k], sw[1]);
		d_ids += via(&f, &r, sw[2 * k], sw[2 - 2 * k], sw[3]);
	}
	routing_result_free(&r);
	ck_assert_uint_eq(d_default, 0);
	ck_assert_uint_gt(b_default, 0);
	ck_assert_uint_eq(b_ids, 0);
	ck_assert_uint_gt(d_ids, 0);
	/* a file naming no switch changes nothing */
	ig[0] = ig[1] = 0x42;
	rf_route(&f, "updn", &o, &r);
	ck_assert_ptr_null(strstr(r.summary, "ids_guid_file"));
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* ------------------------------------------------------ the parser */

START_TEST(ids_parse)
{
	static const char text[] =
		"# comment\n"
		"\n"
		"  0x10 5\n"			/* 3 */
		"0x20 0x30 trailing words\n"	/* 4 */
		"0x30\n"			/* 5: no id */
		"0x40 zz\n"			/* 6 */
		"zz 7\n"			/* 7 */
		"0x0 7\n"			/* 8 */
		"0x50 99999999999999999999999\n"/* 9: past 64 bits */
		"0x10 6 # again\n"		/* 10 */
		"0x60 -1\n"			/* 11 */
		"0x70 18446744073709551615\n"	/* 12 */
		"0x80 010\n"			/* 13: octal */
		"0x90 #\n";			/* 14: comment, no id */
	struct node_ids ni;
	struct rf_warns m = { 0 };

	ck_assert_int_eq(node_ids_parse(&ni, text, sizeof(text) - 1, "ids.txt",
					rf_collect, &m), 0);
	ck_assert_uint_eq(ni.n, 4);
	ck_assert_uint_eq(ni.guid[0], 0x10);
	ck_assert_uint_eq(ni.id[0], 6);		/* the later line's */
	ck_assert_uint_eq(ni.line[0], 10);
	ck_assert_uint_eq(ni.guid[1], 0x20);
	ck_assert_uint_eq(ni.id[1], 0x30);
	ck_assert_uint_eq(ni.guid[2], 0x70);
	ck_assert_uint_eq(ni.id[2], UINT64_MAX);
	ck_assert_uint_eq(ni.guid[3], 0x80);
	ck_assert_uint_eq(ni.id[3], 8);
	ck_assert_uint_eq(m.n, 8);
	ck_assert(rf_warned(&m, "", "ids.txt:5: 0x0000000000000030 has no id"));
	ck_assert(rf_warned(&m, "", "ids.txt:6: 'zz': expected an id"));
	ck_assert(rf_warned(&m, "", "ids.txt:7: 'zz': expected a switch node GUID"));
	ck_assert(rf_warned(&m, "", "ids.txt:8: '0x0': expected a switch node GUID"
			  " (0x and hexadecimal digits), not 0"));
	ck_assert(rf_warned(&m, "", "ids.txt:9: '99999999999999999999999': expected"
			  " an id (a number, 0x for hexadecimal), it has more"
			  " than 64 bits"));
	ck_assert(rf_warned(&m, "", "ids.txt:10: 0x0000000000000010 is listed "
			  "already on line 3; this line's id 6 replaces"));
	ck_assert(rf_warned(&m, "", "ids.txt:11: '-1': expected an id"));
	ck_assert(rf_warned(&m, "", "ids.txt:14: 0x0000000000000090 has no id"));
	node_ids_free(&ni);

	/* NUL bytes and an empty text */
	memset(&m, 0, sizeof(m));
	ck_assert_int_eq(node_ids_parse(&ni, "0x10 1\0\n0x20 2", 14, "z",
					rf_collect, &m), 0);
	ck_assert_uint_eq(ni.n, 1);
	ck_assert_uint_eq(ni.guid[0], 0x20);
	ck_assert_uint_eq(m.n, 1);
	node_ids_free(&ni);
	ck_assert_int_eq(node_ids_parse(&ni, "", 0, "z", NULL, NULL), 0);
	ck_assert_uint_eq(ni.n, 0);
	node_ids_free(&ni);
}
END_TEST

static Suite *keys_suite(void)
{
	Suite *s = suite_create("routing_updn_keys");
	TCase *tc = tcase_create("keys");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, connect_leaf_roots);
	tcase_add_test(tc, hostless_roots_reach);
	tcase_add_test(tc, connect_would_loop);
	tcase_add_test(tc, ids_decide_direction);
	tcase_add_test(tc, ids_parse);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(keys_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
