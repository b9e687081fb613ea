/*
 * check_routing_nue.c - the nue engine (routing/nue/): its layers' CDGs
 * (refuse a cycle, undo), every pair reachable and every
 * layer acyclic on random graphs and tori for every VL budget from 1 to
 * 8; the OpenSM engine names that map to it; and the file engine
 * (OpenSM's LFT dump).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "routing/engines.h"
#include "routing/nue/nue.h"
#include "routing_fixture.h"

/* ---- the layers' dependency graphs ------------------------------------- */

/* Ring of 4 switches: the four clockwise turns close a cycle; the fourth
 * is refused, in layer 0 only. */
START_TEST(cdg_ring)
{
	struct fabric f;
	struct rgraph g;
	struct nue_cdg d;
	char err[128];
	int32_t sw[4];
	uint32_t cw[4];

	rf_ring(&f, 4, sw);
	ck_assert_int_eq(rg_build(&g, &f, err, sizeof(err)), 0);
	ck_assert_int_eq(nue_cdg_init(&d, &g, 2, g.S + 1), 0);
	/* the channel of each switch towards the next one (port 2) */
	for (uint32_t v = 0; v < 4; v++)
		for (uint32_t a = g.adj_off[v]; a < g.adj_off[v + 1]; a++)
			if (g.adj_port[a] == 2)
				cw[v] = a;
	for (uint32_t v = 0; v < 4; v++)
		ck_assert_uint_eq(g.adj_nbr[cw[v]], (v + 1) % 4);
	d.logging = true;
	ck_assert(nue_cdg_add(&d, 0, cw[2], cw[3]));
	ck_assert(nue_cdg_add(&d, 0, cw[0], cw[1]));
	ck_assert(nue_cdg_add(&d, 0, cw[1], cw[2]));	/* reorders */
	ck_assert(!nue_cdg_add(&d, 0, cw[3], cw[0]));	/* closes it */
	ck_assert(!nue_cdg_has(&d, 0, cw[3], cw[0]));
	ck_assert(nue_cdg_acyclic(&d, 0));
	ck_assert(nue_cdg_add(&d, 1, cw[3], cw[0]));	/* other layer */
	ck_assert(nue_cdg_acyclic(&d, 1));
	/* undo the last three: the cycle's last turn fits again */
	nue_cdg_undo(&d, 1);
	ck_assert(nue_cdg_has(&d, 0, cw[2], cw[3]));
	ck_assert(!nue_cdg_has(&d, 0, cw[0], cw[1]));
	ck_assert(nue_cdg_add(&d, 0, cw[3], cw[0]));
	ck_assert(nue_cdg_acyclic(&d, 0));
	nue_cdg_free(&d);
	rg_free(&g);
	fabric_free(&f);
}
END_TEST

/* ---- the engine --------------------------------------------------------- */

static void nue_ok(const struct fabric *f, unsigned vls, const char *name,
		   struct routing_result *r)
{
	struct routing_opts o = { .nue_max_vls = vls };

	rf_route(f, name, &o, r);
	ck_assert_str_eq(r->engine, "nue");
	rf_assert_deadlock_free(f, r);
	ck_assert_uint_ge(r->n_layers, 1);
	if (vls)
		ck_assert_uint_le(r->n_layers, vls);
	ck_assert_uint_le(r->n_layers, NUE_MAX_VLS);
	ck_assert_msg(strstr(r->summary, "LIDs on"), "%s", r->summary);
}

/* Random graphs of 12 to 60 switches, degree 3 to 8, LMC 0 to 2, on 1 to
 * 8 VLs: every pair reachable, no cycle in any layer. */
START_TEST(nue_random)
{
	for (unsigned round = 0; round < 12; round++) {
		struct fabric f;
		struct routing_result r;
		unsigned vls = 1 + round % 8;

		rf_random(&f, 12 + round * 4, 3 + round % 6, 1 + round % 3,
			  round % 3, 777u + round * 31u);
		nue_ok(&f, vls, "nue", &r);
		routing_result_free(&r);
		fabric_free(&f);
	}
}
END_TEST

/* A 6x6 torus, where minhop closes cycles: nue on 1 VL and on 2 does not;
 * with VLs to spare its balance beats 1.6 x ideal. */
START_TEST(nue_torus)
{
	struct fabric f;
	struct routing_result r;
	double one, two;

	rf_torus(&f, 6, 6, 2);
	rf_route(&f, "minhop", NULL, &r);
	ck_assert_uint_gt(rf_cycles(&f, &r, NULL), 0);
	routing_result_free(&r);
	nue_ok(&f, 1, "nue", &r);
	one = rf_load_ratio(&f, &r);
	routing_result_free(&r);
	nue_ok(&f, 0, "nue", &r);
	two = rf_load_ratio(&f, &r);
	printf("6x6 torus: nue 1 VL %.2f, %u VLs %.2f x ideal\n", one,
	       r.n_layers, two);
	ck_assert_double_le(two, 1.6);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* max_layers (the daemon's max_op_vls) caps the VLs as well */
START_TEST(nue_max_layers)
{
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { .max_layers = 2 };

	rf_random(&f, 30, 4, 2, 0, 99);
	rf_route(&f, "nue", &o, &r);
	rf_assert_deadlock_free(&f, &r);
	ck_assert_uint_le(r.n_layers, 2);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* ---- OpenSM's engine names ---------------------------------------------- */

START_TEST(opensm_names)
{
	static const char *const names[] = {
		"lash", "dor", "torus-2QoS", "nue", "sssp", "dfsssp", "ftree",
		"updn", "dnup", "minhop", "file", "ftree,updn", "lash,minhop",
	};
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { 0 };
	char err[256], buf[512];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_msg(routing_check_list(names[i], err,
						 sizeof(err)) == 0,
			      "%s: %s", names[i], err);
	ck_assert_int_eq(routing_check_list("torus-2qos", err, sizeof(err)),
			 -EINVAL);
	rf_random(&f, 16, 4, 1, 0, 5);
	nue_ok(&f, 0, "lash", &r);
	routing_result_free(&r);
	/* sssp: one VL */
	rf_route(&f, "sssp", &o, &r);
	ck_assert_str_eq(r.engine, "nue");
	ck_assert_uint_eq(r.n_layers, 1);
	rf_assert_deadlock_free(&f, &r);
	routing_result_free(&r);
	if (!routing_find("torus")) {
		nue_ok(&f, 0, "dor", &r);
		routing_result_free(&r);
		nue_ok(&f, 0, "torus-2QoS", &r);
		routing_result_free(&r);
	}
	routing_aliases("lash, updn,sssp", buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "lash -> nue") && strstr(buf, "sssp -> nue")
		      && !strstr(buf, "updn"), "%s", buf);
	routing_aliases("updn,minhop", buf, sizeof(buf));
	ck_assert_str_eq(buf, "");
	routing_engine_names(buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "lash") && strstr(buf, "file"), "%s", buf);
	fabric_free(&f);
}
END_TEST

/* ---- the file engine ---------------------------------------------------- */

/* minhop's tables, with one switch's entries turned to another port,
 * written as OpenSM dumps them. */
static void write_dump(const struct fabric *f, const struct routing_result *r,
		       const char *path)
{
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	fprintf(fp, "# a comment\n");
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		if (n->type != NODE_TYPE_SWITCH)
			continue;
		fprintf(fp, "Unicast lids [0x0-0x%x] of switch Lid %u guid "
			"0x%016llx (sw):\n", r->lft[i].top, n->ports[0].lid,
			(unsigned long long)n->guid);
		fprintf(fp, "  Lid  Out   Destination\n0x0000 255 \n");
		for (unsigned l = 1; l <= r->lft[i].top; l++)
			if (r->lft[i].port[l] != LFT_NO_PATH)
				fprintf(fp, "0x%04x %03u : (Channel Adapter "
					"portguid 0x0: 'x')\n", l,
					r->lft[i].port[l]);
		fprintf(fp, "%u lids valid for this switch\n\n",
			r->lft[i].top);
	}
	fclose(fp);
}

START_TEST(file_engine)
{
	struct fabric f;
	struct routing_result mh, r;
	struct routing_opts o = { 0 };
	char path[] = "/tmp/check_nue_lfts.XXXXXX", err[256];
	int fd = mkstemp(path);
	int32_t sw0 = -1;
	FILE *fp;

	ck_assert_int_ge(fd, 0);
	close(fd);
	rf_random(&f, 10, 3, 1, 0, 3);
	rf_route(&f, "updn", NULL, &mh);
	write_dump(&f, &mh, path);
	o.lfts_file = path;
	rf_route(&f, "file", &o, &r);
	ck_assert_str_eq(r.engine, "file");
	for (size_t i = 0; i < f.n_nodes; i++) {
		if (!mh.lft[i].port)
			continue;
		if (sw0 < 0)
			sw0 = (int32_t)i;
		ck_assert_mem_eq(r.lft[i].port, mh.lft[i].port,
				 (size_t)mh.lft[i].top + 1);
	}
	rf_assert_reachable(&f, &r);
	routing_result_free(&r);
	/* a port number beyond the switch: FILE:LINE, the chain goes on */
	fp = fopen(path, "a");
	fprintf(fp, "Unicast lids [0x0-0x1] of switch Lid 1 guid 0x%016llx "
		"(sw):\n0x0001 200 : (x)\n",
		(unsigned long long)f.nodes[sw0].guid);
	fclose(fp);
	ck_assert_int_lt(routing_run_opts("file", &f, &o, &r, err,
					  sizeof(err)), 0);
	ck_assert_msg(strstr(err, path) && strstr(err, "port 200"), "%s", err);
	rf_route(&f, "file,minhop", &o, &r);
	ck_assert_str_eq(r.engine, "minhop");
	ck_assert_msg(strstr(r.fallback, "file:"), "%s", r.fallback);
	routing_result_free(&r);
	/* no lfts_file */
	o.lfts_file = NULL;
	ck_assert_int_eq(routing_run_opts("file", &f, &o, &r, err,
					  sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "lfts_file"), "%s", err);
	unlink(path);
	routing_result_free(&mh);
	fabric_free(&f);
}
END_TEST

static Suite *nue_suite(void)
{
	Suite *s = suite_create("routing_nue");
	TCase *tc = tcase_create("nue");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, cdg_ring);
	tcase_add_test(tc, nue_random);
	tcase_add_test(tc, nue_torus);
	tcase_add_test(tc, nue_max_layers);
	tcase_add_test(tc, opensm_names);
	tcase_add_test(tc, file_engine);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(nue_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
