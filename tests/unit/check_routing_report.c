/*
 * check_routing_report.c - the routing quality report (routing/report.c).
 *
 * The report propagates per-destination counts down each LID's tree; the
 * tests compare it with the obvious, slow count: walk every (source port,
 * destination LID) pair hop by hop through the LFTs and add one to every
 * channel crossed.  Both must agree on every bundled topology, and on a
 * two-switch fabric the figures are known by hand.
 */
#include "config.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/report.h"
#include "routing_fixture.h"

static void route(const struct fabric *f, struct routing_result *r)
{
	char err[256];

	ck_assert_msg(routing_run("minhop", f, r, err, sizeof(err)) == 0,
		      "%s", err);
}

static bool up_to_switch(const struct fabric *f, const struct fab_port *p)
{
	return p->valid && p->peer_node != FAB_NONE &&
	       fabric_node(f, p->peer_node)->type == NODE_TYPE_SWITCH;
}

/* The slow count: per pair, walk and add to load[node][port]. */
struct slow {
	uint64_t routes, total, max, used;
	uint64_t hop_sum;
	size_t max_node;		/* the first channel with max, by node */
	unsigned max_port;		/* and port */
};

static void slow_count(const struct fabric *f, const struct routing_result *r,
		       struct slow *s)
{
	uint64_t *load = calloc(f->n_nodes * 256, sizeof(*load));

	ck_assert_ptr_nonnull(load);
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *src = &f->nodes[i];

		if (src->type == NODE_TYPE_SWITCH)
			continue;
		for (unsigned sp = 1; sp <= src->num_ports; sp++) {
			const struct fab_port *a = &src->ports[sp];

			if (!a->lid || !up_to_switch(f, a))
				continue;
			for (size_t j = 0; j < f->n_nodes; j++) {
				const struct fab_node *dst = &f->nodes[j];

				if (dst->type == NODE_TYPE_SWITCH)
					continue;
				for (unsigned dp = 1; dp <= dst->num_ports; dp++) {
					const struct fab_port *b = &dst->ports[dp];

					if (!b->lid || !up_to_switch(f, b))
						continue;
					for (unsigned o = 0; o < (1u << b->lmc); o++) {
						uint16_t lid = (uint16_t)(b->lid + o);
						int32_t sw = a->peer_node;
						unsigned hops = 0;

						for (;;) {
							uint8_t p = r->lft[sw].port[lid];
							const struct fab_port *q =
								&f->nodes[sw].ports[p];

							ck_assert_uint_ne(p, LFT_NO_PATH);
							if ((size_t)q->peer_node == j)
								break;
							ck_assert(fabric_node(f, q->peer_node)->type ==
								  NODE_TYPE_SWITCH);
							load[(size_t)sw * 256 + p]++;
							sw = q->peer_node;
							ck_assert_uint_lt(++hops, 64);
						}
						s->routes++;
						s->hop_sum += hops;
					}
				}
			}
		}
	}
	for (size_t i = 0; i < f->n_nodes * 256; i++) {
		if (!load[i])
			continue;
		s->used++;
		s->total += load[i];
		if (load[i] > s->max) {
			s->max = load[i];
			s->max_node = i / 256;
			s->max_port = (unsigned)(i % 256);
		}
	}
	free(load);
}

static void compare(const char *name, unsigned lmc)
{
	struct fabric f;
	struct routing_result r;
	struct routing_report rep;
	struct slow s;

	rf_load(&f, name, lmc);
	route(&f, &r);
	ck_assert_int_eq(routing_report_compute(&f, &r, &rep), 0);
	slow_count(&f, &r, &s);
	ck_assert_msg(rep.routes == s.routes, "%s: routes %lu vs %lu", name,
		      (unsigned long)rep.routes, (unsigned long)s.routes);
	ck_assert_uint_eq(rep.load_total, s.total);
	ck_assert_uint_eq(rep.load_max, s.max);
	/* the busiest channel is named: the pair walk's first with max */
	{
		const struct fab_node *bn = &f.nodes[s.max_node];
		const struct fab_port *bp = &bn->ports[s.max_port];
		struct routing_report lo;

		ck_assert_uint_eq(rep.busiest_guid, bn->guid);
		ck_assert_uint_eq(rep.busiest_port, s.max_port);
		ck_assert_uint_eq(rep.busiest_peer_guid,
				  fabric_node(&f, bp->peer_node)->guid);
		ck_assert_uint_eq(rep.busiest_peer_port, bp->peer_port);
		/* the load alone, as the daemon logs it: the same figures */
		ck_assert_int_eq(routing_report_load(&f, &r, &lo), 0);
		ck_assert_uint_eq(lo.load_max, rep.load_max);
		ck_assert_uint_eq(lo.load_total, rep.load_total);
		ck_assert_uint_eq(lo.routes, rep.routes);
		ck_assert_uint_eq(lo.busiest_guid, rep.busiest_guid);
		ck_assert_uint_eq(lo.busiest_port, rep.busiest_port);
		ck_assert(lo.ratio == rep.ratio);
	}
	ck_assert_uint_eq(rep.channels_used, s.used);
	ck_assert_uint_le(rep.channels_used, rep.channels);
	ck_assert(rep.ratio >= 1.0);
	ck_assert(rep.routes == 0 ||
		  (rep.hops_mean * (double)rep.routes > (double)s.hop_sum - 0.5 &&
		   rep.hops_mean * (double)rep.routes < (double)s.hop_sum + 0.5));
	/* minhop routes are shortest paths */
	ck_assert(rep.has_stretch);
	ck_assert_uint_eq(rep.extra_max, 0);
	ck_assert(rep.stretch > 0.999 && rep.stretch < 1.001);
	ck_assert(routing_report_ok(&rep));
	ck_assert_uint_eq(rep.layers_used, 1);
	routing_result_free(&r);
	fabric_free(&f);
}

START_TEST(agrees_with_pair_walk)
{
	compare("fat2-small.net", 0);
	compare("random-24.net", 0);
	compare("torus-4x4.net", 0);
	compare("mesh-4x4.net", 0);
	compare("dualrail-32.net", 0);
	compare("fat2-small.net", 2);
}
END_TEST

/* ---- by hand: two switches, two CAs each ------------------------------ */

static void build_pair(struct fabric *f)
{
	int32_t a, b;

	fabric_init(f);
	a = rf_sw(f, 4);
	b = rf_sw(f, 4);
	rf_link(f, a, 1, b, 1);
	for (unsigned i = 0; i < 2; i++) {
		rf_link(f, rf_ca(f), 1, a, 2 + i);
		rf_link(f, rf_ca(f), 1, b, 2 + i);
	}
	ck_assert_int_eq(lid_assign_sequential(f, 0), 0);
}

START_TEST(by_hand)
{
	struct fabric f;
	struct routing_result r;
	struct routing_report rep;
	char buf[2048];
	size_t n;

	build_pair(&f);
	route(&f, &r);
	ck_assert_int_eq(routing_report_compute(&f, &r, &rep), 0);
	/* 4 ports x 4 LIDs; each of 2 ports on a switch sends to the 2
	 * LIDs across: 4 per direction */
	ck_assert_uint_eq(rep.switches, 2);
	ck_assert_uint_eq(rep.ports, 4);
	ck_assert_uint_eq(rep.dest_lids, 4);
	ck_assert_uint_eq(rep.routes, 16);
	ck_assert_uint_eq(rep.channels, 2);
	ck_assert_uint_eq(rep.channels_used, 2);
	ck_assert_uint_eq(rep.load_total, 8);
	ck_assert_uint_eq(rep.load_max, 4);
	ck_assert(rep.ratio > 0.999 && rep.ratio < 1.001);
	ck_assert(rep.hops_mean > 0.499 && rep.hops_mean < 0.501);
	ck_assert_uint_eq(rep.hops_max, 1);

	rep.route_seconds = 0.25;
	rep.peak_rss_kib = 2048;
	n = routing_report_text(&rep, buf, sizeof(buf));
	ck_assert_uint_eq(n, strlen(buf));
	ck_assert_ptr_nonnull(strstr(buf, "engine: minhop"));
	ck_assert_ptr_nonnull(strstr(buf, "max 4 mean 4.0, max/ideal 1.00"));
	/* the busiest link: switch 0 port 1 (the first of the two) */
	{
		char want[160];

		snprintf(want, sizeof(want), "\nbusiest: 0x%016" PRIx64 " \"\""
			 " port 1 -> 0x%016" PRIx64 " \"\" port 1, 4 routes\n",
			 f.nodes[0].guid, f.nodes[1].guid);
		ck_assert_msg(strstr(buf, want), "%s", buf);
	}
	ck_assert_ptr_nonnull(strstr(buf, "routing 0.250 s, peak RSS 2.0 MiB"));
	ck_assert_ptr_nonnull(strstr(buf, "result: ok"));
	n = routing_report_json(&rep, buf, sizeof(buf));
	ck_assert_uint_eq(n, strlen(buf));
	ck_assert_ptr_nonnull(strstr(buf, "{\n  \"engine\":\"minhop\",\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\"load_max\":4,\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\"port\":1,\"peer\":\"0x"));
	ck_assert_ptr_nonnull(strstr(buf, "\"peer_port\":1,\"load\":4}"));
	ck_assert_ptr_nonnull(strstr(buf, "\"peak_rss_kib\":2048"));
	ck_assert_ptr_nonnull(strstr(buf, "\"ok\":true\n}\n"));
	/* a short buffer: cut, terminated, and the length it needed */
	ck_assert_uint_eq(routing_report_json(&rep, buf, 10), n);
	ck_assert_uint_eq(strlen(buf), 9);

	/* one corrupted entry on the far switch: its two ports' routes to
	 * that LID are lost, and their load on the link */
	r.lft[1].port[f.nodes[4].ports[1].lid] = LFT_NO_PATH;
	ck_assert_int_eq(routing_report_compute(&f, &r, &rep), 0);
	ck_assert(!routing_report_ok(&rep));
	ck_assert_uint_eq(rep.routes, 14);
	ck_assert_uint_eq(rep.load_total, 6);
	routing_report_text(&rep, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "result: FAILED"));
	routing_report_json(&rep, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "\"ok\":false\n}"));

	/* a loop between the two switches is not counted as load */
	r.lft[0].port[f.nodes[4].ports[1].lid] = 1;
	r.lft[1].port[f.nodes[4].ports[1].lid] = 1;
	ck_assert_int_eq(routing_report_compute(&f, &r, &rep), 0);
	ck_assert(!routing_report_ok(&rep));
	ck_assert_uint_eq(rep.routes, 12);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* A longer route than the shortest one shows as stretch. */
START_TEST(stretch)
{
	struct fabric f;
	struct routing_result r;
	struct routing_report rep;
	int32_t s[3], ca[3];

	fabric_init(&f);
	for (unsigned i = 0; i < 3; i++)
		s[i] = rf_sw(&f, 4);
	rf_link(&f, s[0], 1, s[1], 1);	/* a triangle */
	rf_link(&f, s[1], 2, s[2], 1);
	rf_link(&f, s[2], 2, s[0], 2);
	for (unsigned i = 0; i < 3; i++) {
		ca[i] = rf_ca(&f);
		rf_link(&f, ca[i], 1, s[i], 3);
	}
	ck_assert_int_eq(lid_assign_sequential(&f, 0), 0);
	route(&f, &r);
	ck_assert_int_eq(routing_report_compute(&f, &r, &rep), 0);
	ck_assert_uint_eq(rep.extra_max, 0);
	/* s0 -> ca2 the long way round, through s1 */
	r.lft[s[0]].port[f.nodes[ca[2]].ports[1].lid] = 1;
	r.lft[s[1]].port[f.nodes[ca[2]].ports[1].lid] = 2;
	ck_assert_int_eq(routing_report_compute(&f, &r, &rep), 0);
	ck_assert(routing_report_ok(&rep));
	ck_assert_uint_eq(rep.extra_max, 1);
	ck_assert_uint_eq(rep.hops_max, 2);
	ck_assert(rep.stretch > 1.0);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* Dependency cycles count against routes that claim deadlock freedom. */
START_TEST(cdg_cycles)
{
	struct fabric f;
	struct routing_result r;
	struct routing_report rep;
	char buf[2048];

	rf_load(&f, "torus-4x4.net", 0);
	route(&f, &r);
	ck_assert_int_eq(routing_report_compute(&f, &r, &rep), 0);
	ck_assert_uint_eq(rep.cdg.layers, 1);
	ck_assert_uint_gt(rep.cdg.cycles[0], 0);	/* minhop on a torus */
	ck_assert(!rep.cdg_required);
	ck_assert(routing_report_ok(&rep));
	routing_report_text(&rep, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "(not required: no deadlock-freedom"));
	/* the same tables said to come from updn: a failure */
	r.engine = "updn";
	ck_assert(routing_claims_deadlock_free(&r));
	ck_assert_int_eq(routing_report_compute(&f, &r, &rep), 0);
	ck_assert(rep.cdg_required);
	ck_assert(!routing_report_ok(&rep));
	routing_report_json(&rep, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "\"cdg_required\":true"));
	ck_assert_ptr_nonnull(strstr(buf, "\"ok\":false"));
	routing_result_free(&r);
	fabric_free(&f);

	/* a fat tree under minhop has none */
	rf_load(&f, "fat3-pods.net", 0);
	route(&f, &r);
	r.engine = "ftree";
	ck_assert_int_eq(routing_report_compute(&f, &r, &rep), 0);
	ck_assert_uint_eq(routing_cdg_cycles(&rep.cdg), 0);
	ck_assert(routing_report_ok(&rep));
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("routing_report");
	TCase *tc = tcase_create("report");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, agrees_with_pair_walk);
	tcase_add_test(tc, by_hand);
	tcase_add_test(tc, stretch);
	tcase_add_test(tc, cdg_cycles);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
