/*
 * check_routing_vlsplit.c - QoS classes and virtual layers sharing the
 * SL/VL space (routing/vlsplit.c), and the per-VL deadlock check after
 * the SL-to-VL mapping (routing_check_cdg_vl()).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <string.h>

#include "routing/report.h"
#include "routing/vlsplit.h"
#include "tests/unit/routing_fixture.h"

/* QoS SLs `sls` on the identity QoS table (SL i on VL i, SL 15 on 7, as
 * OpenSM's default qos_sl2vl) */
static struct vl_qos qos_of(uint16_t sls)
{
	struct vl_qos q = { .sls = sls, .default_sl = 0 };

	for (unsigned i = 0; i < 16; i++)
		q.vl[i] = (uint8_t)(i < 15 ? i : 7);
	return q;
}

/* The default SL alone: SL i on VL i, as without QoS. */
START_TEST(one_class_is_identity)
{
	struct vl_qos q = qos_of(1u << 0);
	struct vl_split s;
	char buf[200];

	ck_assert_int_eq(vlsplit_plan(&q, 8, 15, &s), 0);
	ck_assert_uint_eq(s.n_classes, 1);
	ck_assert_uint_eq(s.budget, 8);
	vlsplit_layout(&s, 3);
	for (unsigned j = 0; j < 3; j++) {
		ck_assert_uint_eq(vlsplit_path_sl(&s, 0, j), j);
		ck_assert_uint_eq(s.vl_of[j], j);
	}
	ck_assert_uint_eq(s.vl_of[5], 0);	/* unused SLs: layer 0 */
	vlsplit_reduced(&s, 3, true, buf, sizeof(buf));
	ck_assert_str_eq(buf, "");
}
END_TEST

/* Two QoS levels (SL 0, SL 1) on 8 VLs: 4 VLs each; the engine used 2
 * layers: class 0 on VL 0-1, class 1 on VL 2-3, extra SLs 2 and 3. */
START_TEST(two_classes)
{
	struct vl_qos q = qos_of(1u << 0 | 1u << 1);
	struct vl_split s;
	uint8_t t[16];
	char buf[200];

	ck_assert_int_eq(vlsplit_plan(&q, 8, 15, &s), 0);
	ck_assert_uint_eq(s.n_classes, 2);
	ck_assert_uint_eq(s.budget, 4);
	vlsplit_layout(&s, 2);
	ck_assert_uint_eq(s.layers, 2);
	ck_assert_uint_eq(vlsplit_path_sl(&s, 0, 0), 0);
	ck_assert_uint_eq(vlsplit_path_sl(&s, 1, 0), 1);
	ck_assert_uint_eq(vlsplit_path_sl(&s, 0, 1), 2);
	ck_assert_uint_eq(vlsplit_path_sl(&s, 1, 1), 3);
	/* SL 5 is no QoS level's: its QoS VL 5 is no class's, so the
	 * default SL's class */
	ck_assert_uint_eq(vlsplit_path_sl(&s, 5, 1), 2);
	ck_assert_uint_eq(vlsplit_path_sl(&s, 5, 0), 0);
	/* a layer SL asked for as the QoS SL: its class, the path's layer */
	ck_assert_uint_eq(vlsplit_path_sl(&s, 3, 0), 1);
	vlsplit_sl2vl(&s, 8, t);
	ck_assert_uint_eq(t[0], 0);
	ck_assert_uint_eq(t[2], 1);
	ck_assert_uint_eq(t[1], 2);
	ck_assert_uint_eq(t[3], 3);
	for (unsigned sl = 4; sl < 16; sl++)
		ck_assert_uint_eq(t[sl], 0);
	vlsplit_describe(&s, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2 QoS classes (SL 0 on VL 0-1, SL 1 on VL "
			 "2-3), 2 layers each of 8 VLs");
	vlsplit_reduced(&s, 2, true, buf, sizeof(buf));
	ck_assert_str_eq(buf, "");
	/* all 4 layers used, the engine did not need more: nothing */
	vlsplit_layout(&s, 4);
	vlsplit_reduced(&s, 4, false, buf, sizeof(buf));
	ck_assert_str_eq(buf, "");
	/* all 4 layers used and it was short: capped (8 without QoS) */
	vlsplit_reduced(&s, 4, true, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "layers capped at 4 per class"), "%s", buf);
	ck_assert_msg(strstr(buf, "the VLs each class gets"), "%s", buf);
	ck_assert_uint_eq(vlsplit_path_sl(&s, 1, 3), 7);
	ck_assert_uint_eq(s.vl_of[7], 7);
	ck_assert_uint_eq(s.vl_of[6], 3);
	/* a layout asked for more than the budget stays within it */
	vlsplit_layout(&s, 9);
	ck_assert_uint_eq(s.layers, 4);
}
END_TEST

/* Levels that share a VL in the QoS table are one class; a level on VL
 * 15 (dropped) is none. */
START_TEST(classes_by_vl)
{
	struct vl_qos q = qos_of(1u << 0 | 1u << 4 | 1u << 8 | 1u << 9);
	struct vl_split s;

	q.vl[8] = 0;
	q.vl[9] = 15;
	ck_assert_int_eq(vlsplit_plan(&q, 8, 0, &s), 0);
	ck_assert_uint_eq(s.n_classes, 2);		/* VL 0 and VL 4 */
	ck_assert_uint_eq(s.class_of[8], s.class_of[0]);
	ck_assert_uint_ne(s.class_of[4], s.class_of[0]);
	ck_assert_uint_eq(s.budget, 4);
	vlsplit_layout(&s, 2);
	/* SL 0 and SL 8 both keep their SL on layer 0, share layer 1's */
	ck_assert_uint_eq(vlsplit_path_sl(&s, 8, 0), 8);
	ck_assert_uint_eq(vlsplit_path_sl(&s, 8, 1),
			  vlsplit_path_sl(&s, 0, 1));
	ck_assert_uint_eq(s.vl_of[8], s.vl_of[0]);
	ck_assert_uint_eq(s.vl_of[4], 2);
	/* nothing in use at all */
	q.sls = 1u << 9;
	ck_assert_int_eq(vlsplit_plan(&q, 8, 0, &s), -EINVAL);
	/* an SL QoS names but drops (VL 15) is never a layer's */
	q.sls = 1u << 0 | 1u << 1;
	q.vl[1] = 15;
	ck_assert_int_eq(vlsplit_plan(&q, 8, 0, &s), 0);
	ck_assert_uint_eq(s.n_classes, 1);
	vlsplit_layout(&s, 3);
	ck_assert_uint_eq(s.sl[0][1], 2);
	ck_assert_uint_eq(s.sl[0][2], 3);
}
END_TEST

/* More classes than VLs: merged by VL & (VLs - 1), and the log says so. */
START_TEST(classes_merged)
{
	struct vl_qos q = qos_of(0x1f);		/* SL 0-4 on VL 0-4 */
	struct vl_split s;
	char buf[300];

	ck_assert_int_eq(vlsplit_plan(&q, 4, 0, &s), 0);
	ck_assert_uint_eq(s.qos_classes, 5);
	ck_assert_uint_eq(s.n_classes, 4);
	ck_assert_uint_eq(s.class_of[4], s.class_of[0]);	/* 4 & 3 */
	ck_assert_uint_eq(s.budget, 1);
	vlsplit_reduced(&s, 1, true, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "5 QoS classes do not fit 4 VLs: merged "
			     "into 4 by VL & 3"), "%s", buf);
	ck_assert_msg(strstr(buf, "layers capped at 1"), "%s", buf);
	/* 6 VLs are not an OperationalVLs count: 4 */
	ck_assert_int_eq(vlsplit_plan(&q, 6, 0, &s), 0);
	ck_assert_uint_eq(s.vls, 4);
}
END_TEST

/* The 16 SLs bound the layers before the VLs do. */
START_TEST(sl_bound)
{
	struct vl_qos q = qos_of(0x3f);		/* SL 0-5 */
	struct vl_split s;
	char buf[300];

	for (unsigned i = 0; i < 6; i++)
		q.vl[i] = (uint8_t)(i / 3);	/* two classes of 3 SLs */
	ck_assert_int_eq(vlsplit_plan(&q, 15, 0, &s), 0);
	ck_assert_uint_eq(s.n_classes, 2);
	/* VLs: 7 each; SLs: 1 + (16 - 6) / 2 = 6 */
	ck_assert_uint_eq(s.budget, 6);
	ck_assert(s.sl_bound);
	vlsplit_layout(&s, 6);
	vlsplit_reduced(&s, 6, true, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "the 16 SLs"), "%s", buf);
	/* every (class, layer) its own SL, and no SL used twice */
	unsigned seen = 0;
	for (unsigned c = 0; c < 2; c++)
		for (unsigned j = 1; j < 6; j++) {
			ck_assert_uint_eq(seen >> s.sl[c][j] & 1, 0);
			ck_assert_uint_eq(s.sls >> s.sl[c][j] & 1, 0);
			seen |= 1u << s.sl[c][j];
			ck_assert_uint_eq(s.vl_of[s.sl[c][j]], c * 6 + j);
		}
	/* max_layers below both */
	ck_assert_int_eq(vlsplit_plan(&q, 15, 2, &s), 0);
	ck_assert_uint_eq(s.budget, 2);
	ck_assert(!s.sl_bound);
}
END_TEST

/* A port with fewer VLs than the split (a CA's link). */
START_TEST(narrow_port)
{
	struct vl_qos q = qos_of(1u << 0 | 1u << 1);
	struct vl_split s;
	uint8_t t[16];

	ck_assert_int_eq(vlsplit_plan(&q, 8, 0, &s), 0);
	vlsplit_layout(&s, 4);
	vlsplit_sl2vl(&s, 4, t);	/* 2 VLs per class */
	ck_assert_uint_eq(t[vlsplit_path_sl(&s, 0, 0)], 0);
	ck_assert_uint_eq(t[vlsplit_path_sl(&s, 0, 3)], 1);
	ck_assert_uint_eq(t[vlsplit_path_sl(&s, 1, 0)], 2);
	ck_assert_uint_eq(t[vlsplit_path_sl(&s, 1, 2)], 3);
	/* the VLArb entries' VLs land where the SLs do */
	for (unsigned sl = 0; sl < 16; sl++)
		ck_assert_uint_eq(vlsplit_port_vl(&s, s.vl_of[sl], 4), t[sl]);
	vlsplit_sl2vl(&s, 1, t);
	for (unsigned sl = 0; sl < 16; sl++)
		ck_assert_uint_eq(t[sl], 0);
	vlsplit_sl2vl(&s, 0, t);	/* unknown: as the split */
	ck_assert_uint_eq(t[vlsplit_path_sl(&s, 1, 3)], 7);
}
END_TEST

/* The per-VL check's map: the split's table on every port. */
static unsigned split_vl(void *ctx, int32_t node, unsigned out, unsigned sl)
{
	const struct vl_split *s = ctx;
	uint8_t t[16];

	(void)node;
	(void)out;
	vlsplit_sl2vl(s, 0, t);
	return t[sl & 15];
}

/* Every SL on VL 0: the layers' separation undone. */
static unsigned all_vl0(void *ctx, int32_t node, unsigned out, unsigned sl)
{
	(void)ctx;
	(void)node;
	(void)out;
	(void)sl;
	return 0;
}

/*
 * dfsssp on a 6x6 torus with two QoS classes on 8 VLs: at most 4
 * layers, the split laid out for what it used; after the SL-to-VL
 * mapping no VL's dependency graph has a cycle, and the classes' paths
 * use disjoint VLs.  Mapping every SL to VL 0 closes cycles.
 */
START_TEST(torus_per_vl)
{
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { 0 };
	struct vl_qos q = qos_of(1u << 0 | 1u << 1);
	struct routing_vlmap m;
	struct routing_cdg c;
	char err[256];

	rf_torus(&f, 6, 6, 1);
	o.qos = &q;
	ck_assert_int_eq(routing_run_opts("dfsssp", &f, &o, &r, err,
					  sizeof(err)), 0);
	ck_assert_uint_ge(r.n_layers, 2);
	ck_assert_uint_le(r.n_layers, 4);
	ck_assert(routing_split_active(&r));
	ck_assert_uint_eq(r.split.layers, r.n_layers);
	routing_vlmap_from_split(&r, &m);
	m.vl = split_vl;
	m.ctx = &r.split;
	ck_assert_int_eq(routing_check_cdg_vl(&f, &r, &m, &c), 0);
	ck_assert(c.per_vl);
	ck_assert_uint_eq(routing_cdg_cycles(&c), 0);
	ck_assert_uint_eq(c.layers, 2u * r.n_layers);
	for (unsigned vl = 0; vl < c.layers; vl++)
		ck_assert_uint_gt(c.deps[vl], 0);
	/* class 1's SLs never land on class 0's VLs */
	for (unsigned j = 0; j < r.n_layers; j++) {
		ck_assert_uint_ge(r.split.vl_of[vlsplit_path_sl(&r.split, 1, j)],
				  r.n_layers);
		ck_assert_uint_lt(r.split.vl_of[vlsplit_path_sl(&r.split, 0, j)],
				  r.n_layers);
	}
	m.vl = all_vl0;
	ck_assert_int_eq(routing_check_cdg_vl(&f, &r, &m, &c), 0);
	ck_assert_uint_gt(c.cycles[0], 0);
	ck_assert_uint_eq(c.layers, 1);
	/* the SA's helper: the class's SL of the path's layer */
	ck_assert_uint_eq(f.nodes[0].type, NODE_TYPE_SWITCH);
	for (uint16_t lid = 1; lid <= f.max_lid; lid++) {
		unsigned l = routing_layer(&r, 0, lid);

		ck_assert_uint_eq(routing_path_sl(&r, 1, 0, lid),
				  vlsplit_path_sl(&r.split, 1, l));
		ck_assert_uint_eq(routing_path_sl(&r, 0, 0, lid),
				  l ? r.split.sl[0][l] : 0);
	}
	routing_result_free(&r);

	/* 2 VLs only (OperationalVLs on one link): one VL per class, one
	 * layer, the fallback up*\/down* inside it */
	SET_HI4(f.nodes[0].ports[2].pi.vl_cap_init_type, 2);
	ck_assert_int_eq(routing_run_opts("dfsssp", &f, &o, &r, err,
					  sizeof(err)), 0);
	ck_assert_uint_le(r.n_layers, 1);
	ck_assert_uint_eq(r.split.budget, 1);
	ck_assert(!routing_split_active(&r));
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* The quality report on such routes: the split's line, cycles per VL,
 * in text and JSON. */
START_TEST(report_per_vl)
{
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { 0 };
	struct vl_qos q = qos_of(1u << 0 | 1u << 4);
	struct routing_report rep;
	char err[256], buf[8192];

	rf_torus(&f, 6, 6, 1);
	o.qos = &q;
	ck_assert_int_eq(routing_run_opts("dfsssp", &f, &o, &r, err,
					  sizeof(err)), 0);
	ck_assert_int_eq(routing_report_compute(&f, &r, &rep), 0);
	ck_assert(rep.cdg.per_vl);
	ck_assert_uint_eq(rep.cdg.layers, 2u * r.n_layers);
	ck_assert_uint_eq(routing_cdg_cycles(&rep.cdg), 0);
	ck_assert(routing_report_ok(&rep));
	routing_report_text(&rep, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "qos: 2 QoS classes (SL 0 on VL 0-"), "%s",
		      buf);
	ck_assert_msg(strstr(buf, "cycles per VL:"), "%s", buf);
	routing_report_json(&rep, buf, sizeof(buf));
	ck_assert_msg(strstr(buf, "\"cdg_per_vl\":true"), "%s", buf);
	ck_assert_msg(strstr(buf, "\"qos\":\"2 QoS classes"), "%s", buf);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("routing_vlsplit");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, one_class_is_identity);
	tcase_add_test(tc, two_classes);
	tcase_add_test(tc, classes_by_vl);
	tcase_add_test(tc, classes_merged);
	tcase_add_test(tc, sl_bound);
	tcase_add_test(tc, narrow_port);
	tcase_add_test(tc, torus_per_vl);
	tcase_add_test(tc, report_per_vl);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
