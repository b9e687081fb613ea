/*
 * check_routing_weights.c - hop_weights_file, port_prof_ignore_file and
 * port_profile_switch_nodes: the reader and resolver (routing/order.c)
 * and what they do to minhop's tables.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/order.h"
#include "routing_fixture.h"

static void vals(struct port_vals *pv, struct rf_warns *w, const char *text,
		 size_t len, bool weights)
{
	memset(w, 0, sizeof(*w));
	ck_assert_int_eq(port_vals_parse(pv, text, len, "f", weights, rf_collect,
					 w), 0);
}

START_TEST(weights_good)
{
	static const char text[] =
		"# switch port weight\n"
		"\n"
		"   0x0002c90000000001 1 2\n"
		"0x2c90000000001\t36\t255 # trailing comment\n"
		"0XABC 0x10 010 what follows is ignored\n"
		"12 3 1#\n";
	struct port_vals pv;
	struct rf_warns w;

	vals(&pv, &w, text, strlen(text), true);
	ck_assert_uint_eq(w.n, 0);
	ck_assert_uint_eq(pv.n, 4);
	ck_assert_uint_eq(pv.e[0].guid, 0x0002c90000000001ull);
	ck_assert_uint_eq(pv.e[0].line, 3);
	ck_assert_uint_eq(pv.e[0].port, 1);
	ck_assert_uint_eq(pv.e[0].val, 2);
	ck_assert_uint_eq(pv.e[1].port, 36);
	ck_assert_uint_eq(pv.e[1].val, 255);
	ck_assert_uint_eq(pv.e[2].guid, 0xabc);
	ck_assert_uint_eq(pv.e[2].port, 16);
	ck_assert_uint_eq(pv.e[2].val, 8);		/* octal, as strtoul */
	ck_assert_uint_eq(pv.e[3].guid, 12);
	ck_assert_uint_eq(pv.e[3].line, 6);
	port_vals_free(&pv);

	/* the ignore file: no weight, value 1 */
	vals(&pv, &w, "0x5 7\n0x6 8 # x\n", 16, false);
	ck_assert_uint_eq(w.n, 0);
	ck_assert_uint_eq(pv.n, 2);
	ck_assert_uint_eq(pv.e[1].port, 8);
	ck_assert_uint_eq(pv.e[1].val, 1);
	port_vals_free(&pv);
}
END_TEST

START_TEST(weights_bad)
{
	static const char text[] =
		"0x5\n"				/* 1: no port */
		"0x5 3\n"			/* 2: no weight */
		"0x5 3 0\n"			/* 3: weight 0 */
		"0x5 3 256\n"			/* 4: weight above 255 */
		"0x5 0 1\n"			/* 5: port 0 */
		"0x5 255 1\n"			/* 6: port 255 */
		"0x5 3x 1\n"			/* 7: port not a number */
		"0 3 1\n"			/* 8: GUID 0 */
		"switch 3 1\n"			/* 9: no GUID */
		"0x5 3 -1\n"			/* 10: a sign */
		"0x5 3 # 2\n"			/* 11: weight in a comment */
		"0x5 2 0x99999999999999999\n"	/* 12: > 64 bits */
		"0x5 4 2\n";			/* 13: good */
	struct port_vals pv;
	struct rf_warns w;

	vals(&pv, &w, text, strlen(text), true);
	ck_assert_uint_eq(pv.n, 1);
	ck_assert_uint_eq(pv.e[0].line, 13);
	ck_assert_uint_eq(w.n, 12);
	ck_assert(rf_warned(&w, "f:1:", "expected a port after the switch GUID"));
	ck_assert(rf_warned(&w, "f:2:", "expected a weight after"));
	ck_assert(rf_warned(&w, "f:3:", "weight '0': expected 1-255"));
	ck_assert(rf_warned(&w, "f:4:", "weight '256': expected 1-255"));
	ck_assert(rf_warned(&w, "f:5:", "port '0': expected 1-254"));
	ck_assert(rf_warned(&w, "f:6:", "port '255': expected 1-254"));
	ck_assert(rf_warned(&w, "f:7:", "port '3x'"));
	ck_assert(rf_warned(&w, "f:8:", "'0': expected a switch node GUID"));
	ck_assert(rf_warned(&w, "f:9:", "'switch': expected a switch node GUID"));
	ck_assert(rf_warned(&w, "f:10:", "weight '-1'"));
	ck_assert(rf_warned(&w, "f:11:", "expected a weight"));
	ck_assert(rf_warned(&w, "f:12:", "weight '0x99999999999999999'"));
	port_vals_free(&pv);

	/* a NUL byte in a line spoils that line only */
	vals(&pv, &w, "0x5 3 2\n0x5 \0 2\n0x6 1 1\n", 24, true);
	ck_assert_uint_eq(pv.n, 2);
	ck_assert_uint_eq(w.n, 1);
	ck_assert(rf_warned(&w, "f:2:", "port '?'"));
	port_vals_free(&pv);

	/* the ignore file wants a port, and nothing of the sort is fatal */
	vals(&pv, &w, "0x5\n0x5 0\n", 10, false);
	ck_assert_uint_eq(pv.n, 0);
	ck_assert_uint_eq(w.n, 2);
	port_vals_free(&pv);
}
END_TEST

/* 2 spines (ids 0, 1), leaf 2 (CAs 3-6 on ports 1-4, ports 5 and 6 to
 * spines 0 and 1), leaf 7 (CAs 8-11). */
#define LEAF0	2
#define LEAF1	7
#define CA(i)	(3 + (i))

static void fat(struct fabric *f)
{
	rf_fat2(f, 2, 2, 4);
	ck_assert_uint_eq(f->nodes[LEAF1].type, NODE_TYPE_SWITCH);
	ck_assert_int_eq(f->nodes[CA(3)].ports[1].peer_node, LEAF0);
	ck_assert_int_eq(f->nodes[LEAF0].ports[5].peer_node, 0);
}

/* pv's lines resolved on f into o (weights or ignore). */
static void resolve(const struct fabric *f, struct routing_opts *o,
		    const char *text, bool weights, long want_sw)
{
	struct port_vals pv;
	struct rf_warns w;
	uint8_t **v;
	long n;

	vals(&pv, &w, text, strlen(text), weights);
	ck_assert_uint_eq(w.n, 0);
	n = port_vals_resolve(f, &pv, "f", weights ? 1 : 0, &v, rf_collect, &w);
	ck_assert_int_ge(n, 0);
	if (want_sw >= 0)
		ck_assert_int_eq(n, want_sw);
	port_vals_free(&pv);
	if (weights) {
		o->hop_wf = (const uint8_t *const *)v;
		o->n_hop_wf = f->n_nodes;
	} else {
		o->prof_ignore = (const uint8_t *const *)v;
		o->n_prof_ignore = f->n_nodes;
	}
}

START_TEST(resolve_vals)
{
	struct fabric f;
	struct port_vals pv;
	struct rf_warns w;
	uint8_t **v;
	char text[512];

	fat(&f);
	snprintf(text, sizeof(text),
		 "0x%" PRIx64 " 5 9\n"		/* 1 */
		 "0x%" PRIx64 " 5 4\n"		/* 2: replaces line 1 */
		 "0x%" PRIx64 " 1 3\n"		/* 3: a CA */
		 "0x77 1 2\n"			/* 4: nobody */
		 "0x%" PRIx64 " 7 2\n"		/* 5: leaf 1 has 6 ports */
		 "0x%" PRIx64 " 2 200\n",	/* 6: spine 1 */
		 f.nodes[LEAF1].guid, f.nodes[LEAF1].guid, f.nodes[CA(0)].guid,
		 f.nodes[LEAF1].guid, f.nodes[1].guid);
	vals(&pv, &w, text, strlen(text), true);
	ck_assert_uint_eq(pv.n, 6);
	ck_assert_int_eq(port_vals_resolve(&f, &pv, "f", 1, &v, rf_collect, &w), 2);
	ck_assert_uint_eq(w.n, 3);
	ck_assert(rf_warned(&w, "f:3:", "is no switch of the fabric"));
	ck_assert(rf_warned(&w, "f:4:", "0x0000000000000077 is no switch"));
	ck_assert(rf_warned(&w, "f:5:", "port 7: switch"));
	ck_assert(rf_warned(&w, "f:5:", "has ports 1-6"));
	for (size_t i = 0; i < f.n_nodes; i++)
		if (i != LEAF1 && i != 1)
			ck_assert_ptr_null(v[i]);
	for (unsigned p = 0; p <= 6; p++)
		ck_assert_uint_eq(v[LEAF1][p], p == 5 ? 4 : 1);
	ck_assert_uint_eq(v[1][2], 200);
	ck_assert_uint_eq(v[1][1], 1);
	free(v);
	port_vals_free(&pv);

	/* nothing usable: no table; default 0 for the ignore file */
	vals(&pv, &w, "0x77 1\n", 7, false);
	ck_assert_int_eq(port_vals_resolve(&f, &pv, "f", 0, &v, NULL, NULL), 0);
	ck_assert_ptr_null(v);
	port_vals_free(&pv);
	fabric_free(&f);
}
END_TEST

static unsigned egress(const struct fabric *f, const struct routing_result *r,
		       int32_t sw, int32_t ca)
{
	return r->lft[sw].port[f->nodes[ca].ports[1].lid];
}

/*
 * Leaf 1 spreads leaf 0's hosts over ports 5 and 6; with port 5 weighing
 * 2 the way through it is longer (3 against 2): every host goes by 6.
 * Leaf 0, not weighted, keeps its spread.
 */
START_TEST(weight_moves_routes)
{
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { 0 };
	char text[64];

	fat(&f);
	rf_route(&f, "minhop", NULL, &r);
	ck_assert_uint_eq(egress(&f, &r, LEAF1, CA(0)), 5);
	ck_assert_uint_eq(egress(&f, &r, LEAF1, CA(1)), 6);
	routing_result_free(&r);

	snprintf(text, sizeof(text), "0x%" PRIx64 " 5 2\n", f.nodes[LEAF1].guid);
	resolve(&f, &o, text, true, 1);
	rf_route(&f, "minhop", &o, &r);
	rf_assert_reachable(&f, &r);
	for (int h = 0; h < 4; h++)
		ck_assert_uint_eq(egress(&f, &r, LEAF1, CA(h)), 6);
	ck_assert_uint_eq(egress(&f, &r, LEAF0, LEAF1 + 1), 5);
	ck_assert_uint_eq(egress(&f, &r, LEAF0, LEAF1 + 2), 6);
	/* the spine behind the heavy port: still directly (1 + ... = 2
	 * against 3 the other way round) */
	ck_assert_uint_eq(r.lft[LEAF1].port[f.nodes[0].ports[0].lid], 5);
	routing_result_free(&r);
	free((void *)o.hop_wf);
	fabric_free(&f);
}
END_TEST

/*
 * A ring of 4: switch 0 reaches switch 1 by its port 2 (one hop) or by
 * port 1, the other way round (three hops).  Weight 2 on port 2: 2
 * against 3, port 2.  Weight 3: a tie, both count as shortest and the
 * first least-loaded (port 1) wins.  Weight 5: the long way, port 1.
 */
START_TEST(weights_sum_along_the_path)
{
	static const unsigned wt[] = { 2, 3, 5 };
	static const unsigned want[] = { 2, 1, 1 };
	struct fabric f;
	struct routing_result r;
	int32_t sw[4];
	char text[64];

	rf_ring(&f, 4, sw);
	for (unsigned k = 0; k < 3; k++) {
		struct routing_opts o = { 0 };
		uint16_t lid = f.nodes[sw[1]].ports[0].lid;

		snprintf(text, sizeof(text), "0x%" PRIx64 " 2 %u\n",
			 f.nodes[sw[0]].guid, wt[k]);
		resolve(&f, &o, text, true, 1);
		rf_route(&f, "minhop", &o, &r);
		rf_assert_reachable(&f, &r);
		ck_assert_msg(r.lft[sw[0]].port[lid] == want[k],
			      "weight %u: switch 1 by port %u", wt[k],
			      r.lft[sw[0]].port[lid]);
		routing_result_free(&r);
		free((void *)o.hop_wf);
	}
	fabric_free(&f);
}
END_TEST

/* Weighted distances by Floyd-Warshall, for the check below. */
static uint32_t *floyd(const struct fabric *f, const struct routing_opts *o)
{
	size_t n = f->n_nodes;
	uint32_t *d = malloc(n * n * sizeof(*d));

	ck_assert_ptr_nonnull(d);
	for (size_t i = 0; i < n * n; i++)
		d[i] = i / n == i % n ? 0 : UINT32_MAX / 4;
	for (size_t x = 0; x < n; x++) {
		const struct fab_node *nd = &f->nodes[x];

		if (nd->type != NODE_TYPE_SWITCH)
			continue;
		for (unsigned p = 1; p <= nd->num_ports; p++) {
			const struct fab_port *pt = &nd->ports[p];
			const uint8_t *wf = routing_node_vals(o->hop_wf,
							      o->n_hop_wf,
							      (int32_t)x);
			uint32_t w = wf ? wf[p] : 1;

			if (!routing_port_up(f, pt) || (size_t)pt->peer_node == x ||
			    f->nodes[pt->peer_node].type != NODE_TYPE_SWITCH)
				continue;
			if (w < d[x * n + (size_t)pt->peer_node])
				d[x * n + (size_t)pt->peer_node] = w;
		}
	}
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < n; j++)
				if (d[i * n + k] + d[k * n + j] < d[i * n + j])
					d[i * n + j] = d[i * n + k] + d[k * n + j];
	return d;
}

/*
 * Random graphs (parallel links included), random weights, LMC 1: every
 * pair arrives without loops, and every switch's egress towards another
 * switch's LID lies on a path of least summed weight.  Weights of 1 all
 * over give exactly the tables of no file.
 */
START_TEST(random_weights)
{
	struct fabric f;
	struct routing_result r, r1;
	char *text = malloc(1 << 16);
	size_t len = 0;
	uint32_t seed = 1234u + (uint32_t)_i;
	uint32_t *d;
	size_t n;

	ck_assert_ptr_nonnull(text);
	rf_random(&f, 24, 5, 2, 1, seed);
	n = f.n_nodes;
	for (int all1 = 0; all1 < 2; all1++) {
		struct routing_opts o = { 0 };

		len = 0;
		for (size_t x = 0; x < n; x++) {
			if (f.nodes[x].type != NODE_TYPE_SWITCH)
				continue;
			for (unsigned p = 1; p <= f.nodes[x].num_ports; p++) {
				seed = seed * 1103515245u + 12345u;
				if (!all1 && (seed >> 16) % 3)
					continue;
				len += (size_t)snprintf(text + len, (1 << 16) - len,
					"0x%" PRIx64 " %u %u\n", f.nodes[x].guid,
					p, all1 ? 1 : 1 + (seed >> 20) % 4);
			}
		}
		text[len] = '\0';
		resolve(&f, &o, text, true, all1 ? 24 : -1);
		if (all1) {
			rf_route(&f, "minhop", &o, &r1);
			rf_route(&f, "minhop", NULL, &r);
			for (size_t x = 0; x < n; x++)
				if (r.lft[x].port)
					ck_assert_mem_eq(r.lft[x].port, r1.lft[x].port,
							 (size_t)r.lft[x].top + 1);
			routing_result_free(&r1);
			routing_result_free(&r);
			free((void *)o.hop_wf);
			continue;
		}
		rf_route(&f, "minhop", &o, &r);
		rf_assert_reachable(&f, &r);
		d = floyd(&f, &o);
		for (size_t x = 0; x < n; x++) {
			const uint8_t *wf = routing_node_vals(o.hop_wf, o.n_hop_wf,
							      (int32_t)x);

			if (f.nodes[x].type != NODE_TYPE_SWITCH)
				continue;
			for (size_t t = 0; t < n; t++) {
				unsigned p;
				const struct fab_port *pt;

				if (t == x || f.nodes[t].type != NODE_TYPE_SWITCH)
					continue;
				p = r.lft[x].port[f.nodes[t].ports[0].lid];
				pt = &f.nodes[x].ports[p];
				ck_assert_uint_eq((wf ? wf[p] : 1) +
						  d[(size_t)pt->peer_node * n + t],
						  d[x * n + t]);
			}
		}
		free(d);
		routing_result_free(&r);
		free((void *)o.hop_wf);
	}
	free(text);
	fabric_free(&f);
}
END_TEST

/*
 * Leaf 1 spreads leaf 0's hosts 5, 6, 5, 6.  With port 5 ignored its
 * routes are not counted: port 5 stays least loaded and takes them all.
 * The ignore table of another switch changes nothing at leaf 1.
 */
START_TEST(ignored_port_takes_all)
{
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { 0 };
	char text[64];

	fat(&f);
	snprintf(text, sizeof(text), "0x%" PRIx64 " 5\n", f.nodes[LEAF1].guid);
	resolve(&f, &o, text, false, 1);
	rf_route(&f, "minhop", &o, &r);
	rf_assert_reachable(&f, &r);
	for (int h = 0; h < 4; h++)
		ck_assert_uint_eq(egress(&f, &r, LEAF1, CA(h)), 5);
	ck_assert_uint_eq(egress(&f, &r, LEAF0, LEAF1 + 1), 5);
	ck_assert_uint_eq(egress(&f, &r, LEAF0, LEAF1 + 2), 6);
	routing_result_free(&r);
	free((void *)o.prof_ignore);

	/* port 6 ignored instead: 5 carries A, then 6 (never counted) */
	snprintf(text, sizeof(text), "0x%" PRIx64 " 6\n", f.nodes[LEAF1].guid);
	resolve(&f, &o, text, false, 1);
	rf_route(&f, "minhop", &o, &r);
	ck_assert_uint_eq(egress(&f, &r, LEAF1, CA(0)), 5);
	for (int h = 1; h < 4; h++)
		ck_assert_uint_eq(egress(&f, &r, LEAF1, CA(h)), 6);
	routing_result_free(&r);
	free((void *)o.prof_ignore);
	fabric_free(&f);
}
END_TEST

/*
 * port_profile_switch_nodes, on 4 leaves (ids 2, 4, 6, 8; port 1 to a
 * host, 2 and 3 to the spines 0 and 1; switches have the lower LIDs).
 * The hosts' entries stay those without the key everywhere (switch LIDs
 * go after them).  At leaf 2 the other leaves' LIDs, on equally short
 * ports 2 and 3, come before any host and count nothing without the
 * key: all by port 2; with it they come after the hosts (2: two, 3: one)
 * and the spines (one each), each counted: leaf 4 by 3, 6 by 2, 8 by 3.
 */
START_TEST(switch_nodes_count_last)
{
	static const unsigned off[] = { 2, 2, 2 }, on[] = { 3, 2, 3 };
	struct fabric f;
	struct routing_result r0, r1;
	struct routing_opts o = { .profile_switch_nodes = true };

	rf_fat2(&f, 4, 2, 1);
	rf_route(&f, "minhop", NULL, &r0);
	rf_route(&f, "minhop", &o, &r1);
	rf_assert_reachable(&f, &r1);
	for (size_t x = 0; x < f.n_nodes; x++) {
		if (!r0.lft[x].port)
			continue;
		for (size_t i = 0; i < f.n_nodes; i++) {
			uint16_t lid = f.nodes[i].ports[1].lid;

			if (f.nodes[i].type == NODE_TYPE_CA)
				ck_assert_uint_eq(r0.lft[x].port[lid],
						  r1.lft[x].port[lid]);
		}
	}
	for (unsigned k = 0; k < 3; k++) {
		uint16_t lid = f.nodes[4 + 2 * k].ports[0].lid;

		ck_assert_uint_eq(r0.lft[2].port[lid], off[k]);
		ck_assert_uint_eq(r1.lft[2].port[lid], on[k]);
	}
	routing_result_free(&r0);
	routing_result_free(&r1);
	fabric_free(&f);
}
END_TEST

static Suite *weights_suite(void)
{
	Suite *s = suite_create("routing_weights");
	TCase *tc = tcase_create("weights");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, weights_good);
	tcase_add_test(tc, weights_bad);
	tcase_add_test(tc, resolve_vals);
	tcase_add_test(tc, weight_moves_routes);
	tcase_add_test(tc, weights_sum_along_the_path);
	tcase_add_loop_test(tc, random_weights, 0, 4);
	tcase_add_test(tc, ignored_port_takes_all);
	tcase_add_test(tc, switch_nodes_count_last);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(weights_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
