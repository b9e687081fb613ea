/*
 * check_prom.c - the Prometheus text builder (sm/metrics/prom.h):
 * label values escaped, HELP and TYPE once per family, a family not
 * reopened, numbers and histograms as the format writes them.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health/counters.h"
#include "model/fabric.h"
#include "sm/metrics/hist.h"
#include "sm/metrics/metrics.h"
#include "sm/metrics/prom.h"

static unsigned count(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

START_TEST(label_escaping)
{
	struct prom_labels l;
	char out[64];

	/* a node description with quotes, backslashes and a newline */
	prom_lbl_reset(&l);
	prom_lbl(&l, "switch", "sw \"core\" a\\b\nc");
	ck_assert_str_eq(l.s, "switch=\"sw \\\"core\\\" a\\\\b\\nc\"");
	prom_lbl_u(&l, "port", 36);
	prom_lbl_guid(&l, "guid", 0x0002c90300a1b2c3ull);
	ck_assert_str_eq(l.s, "switch=\"sw \\\"core\\\" a\\\\b\\nc\",port=\"36\","
			 "guid=\"0x0002c90300a1b2c3\"");
	ck_assert(!l.trunc);
	/* escaping cut to fit never splits an escape */
	ck_assert_uint_eq(prom_escape_label(out, 3, "a\"b"), 1);
	ck_assert_str_eq(out, "a");
	ck_assert_uint_eq(prom_escape_label(out, sizeof(out), ""), 0);
	ck_assert_str_eq(out, "");
}
END_TEST

START_TEST(label_too_long)
{
	struct prom_labels l;
	char big[PROM_LABELS_MAX];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	prom_lbl_reset(&l);
	prom_lbl_u(&l, "port", 1);
	prom_lbl(&l, "name", big);
	/* left out whole, flagged; what was there stays well formed */
	ck_assert(l.trunc);
	ck_assert_str_eq(l.s, "port=\"1\"");
}
END_TEST

START_TEST(family_once)
{
	struct prom p;
	struct prom_labels l;
	char *t;
	size_t len;

	prom_init(&p, 16);		/* grows */
	ck_assert_int_eq(prom_family(&p, "a_total", "counter",
				     "help with \\ and\nnewline"), 0);
	for (unsigned i = 0; i < 100; i++) {
		prom_lbl_reset(&l);
		prom_lbl_u(&l, "port", i);
		ck_assert_int_eq(prom_family(&p, "a_total", "counter", "x"), 0);
		prom_u64(&p, "a_total", &l, UINT64_MAX - i);
	}
	ck_assert_int_eq(prom_family(&p, "b", "gauge", "b help"), 0);
	prom_dbl(&p, "b", NULL, 0.5);
	/* back to a family already left: refused, nothing written */
	ck_assert_int_eq(prom_family(&p, "a_total", "counter", "x"), -EEXIST);
	t = prom_take(&p, &len);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(strlen(t), len);
	ck_assert_uint_eq(count(t, "# HELP a_total "), 1);
	ck_assert_uint_eq(count(t, "# TYPE a_total counter\n"), 1);
	ck_assert_uint_eq(count(t, "# HELP b "), 1);
	ck_assert_ptr_nonnull(strstr(t, "# HELP a_total help with \\\\ and\\nnewline\n"));
	ck_assert_ptr_nonnull(strstr(t, "a_total{port=\"0\"} 18446744073709551615\n"));
	ck_assert_ptr_nonnull(strstr(t, "a_total{port=\"99\"} 18446744073709551516\n"));
	ck_assert_ptr_nonnull(strstr(t, "\nb 0.5\n"));
	/* the HELP comes before the TYPE, both before the samples */
	ck_assert(strstr(t, "# HELP a_total") < strstr(t, "# TYPE a_total"));
	ck_assert(strstr(t, "# TYPE a_total") < strstr(t, "a_total{"));
	free(t);
}
END_TEST

START_TEST(numbers)
{
	struct prom p;
	char *t;
	size_t len;

	prom_init(&p, 0);
	prom_family(&p, "g", "gauge", "g");
	prom_dbl(&p, "g", NULL, 0);
	prom_dbl(&p, "g", NULL, -3);
	prom_dbl(&p, "g", NULL, 1.0 / 0.0);
	prom_dbl(&p, "g", NULL, 0.0 / 0.0);
	prom_dbl(&p, "g", NULL, 1795939100.25);
	prom_u64(&p, "g", NULL, 0);
	t = prom_take(&p, &len);
	ck_assert_ptr_nonnull(t);
	ck_assert_str_eq(strstr(t, "g 0\n"), "g 0\ng -3\ng +Inf\ng NaN\n"
			 "g 1795939100.250\ng 0\n");
	free(t);
}
END_TEST

START_TEST(histogram)
{
	struct prom p;
	struct prom_labels l;
	static const double b[] = { 0.1, 1, 10 };
	static const uint64_t cum[] = { 1, 3, 3 };
	char *t;
	size_t len;

	prom_init(&p, 0);
	prom_lbl_reset(&l);
	prom_lbl(&l, "kind", "heavy");
	prom_family(&p, "d_seconds", "histogram", "d");
	prom_histogram(&p, "d_seconds", &l, b, cum, 3, 12.5, 4);
	t = prom_take(&p, &len);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(strstr(t,
		"d_seconds_bucket{kind=\"heavy\",le=\"0.1\"} 1\n"
		"d_seconds_bucket{kind=\"heavy\",le=\"1\"} 3\n"
		"d_seconds_bucket{kind=\"heavy\",le=\"10\"} 3\n"
		"d_seconds_bucket{kind=\"heavy\",le=\"+Inf\"} 4\n"
		"d_seconds_sum{kind=\"heavy\"} 12.5\n"
		"d_seconds_count{kind=\"heavy\"} 4\n"));
	free(t);
}
END_TEST

START_TEST(too_many_families)
{
	struct prom p;
	char name[32];
	size_t len;
	char *t;

	prom_init(&p, 0);
	for (unsigned i = 0; i < PROM_MAX_FAMILIES; i++) {
		snprintf(name, sizeof(name), "f%u", i);
		ck_assert_int_eq(prom_family(&p, name, "gauge", "h"), 0);
	}
	ck_assert_int_eq(prom_family(&p, "one_more", "gauge", "h"), -ENOSPC);
	t = prom_take(&p, &len);
	ck_assert_ptr_nonnull(t);
	ck_assert_uint_eq(count(t, "# TYPE "), PROM_MAX_FAMILIES);
	free(t);
}
END_TEST


/* A switch whose description needs escaping, linked on port 3 to a CA's
 * port 1, 4x EDR: the port families of both, as treydock's exporter
 * names them, data in bytes. */
START_TEST(port_families)
{
	struct fabric f;
	struct pc_store *st;
	struct pma_sample smp;
	struct pc_result res;
	struct prom p;
	char *t;
	size_t len;
	int32_t sw, ca;

	fabric_init(&f);
	sw = fabric_add_node(&f, 0x0002c90300a1b2c3ull, NODE_TYPE_SWITCH, 8);
	ca = fabric_add_node(&f, 0x100, NODE_TYPE_CA, 1);
	ck_assert_int_ge(sw, 0);
	ck_assert_int_ge(ca, 0);
	snprintf(f.nodes[sw].desc, sizeof(f.nodes[sw].desc), "leaf \"7\" a\\b");
	snprintf(f.nodes[ca].desc, sizeof(f.nodes[ca].desc), "node01 mlx5_0");
	ck_assert_int_eq(fabric_link(&f, sw, 3, ca, 1), 0);
	f.nodes[sw].ports[0].lid = 7;
	f.nodes[ca].ports[1].lid = 9;
	for (int i = 0; i < 2; i++) {
		struct fab_port *fp = i ? &f.nodes[ca].ports[1] :
					  &f.nodes[sw].ports[3];

		fp->valid = true;
		fp->pi.link_width_active = 2;			/* 4x */
		fp->pi.speed_active_enabled = 4 << 4;		/* QDR */
	}
	ck_assert_int_eq(pc_store_new(&st, 16), 0);
	memset(&smp, 0, sizeof(smp));
	smp.pc.symbol_err = 77;
	smp.pc.xmit_data = 1000;		/* words */
	smp.pc.xmit_wait = 5;
	pc_update(pc_get(st, 0x0002c90300a1b2c3ull, 3), 7, &smp, 10, &res);
	smp.pc.symbol_err = 0;
	smp.pc.rcv_data = 250;
	pc_update(pc_get(st, 0x100, 1), 9, &smp, 10, &res);
	prom_init(&p, 0);
	metrics_render_ports_of(&f, st, &p);
	t = prom_take(&p, &len);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_nonnull(strstr(t,
		"# HELP infiniband_switch_port_symbol_error_total Infiniband switch"
		" port SymbolErrorCounter\n"
		"# TYPE infiniband_switch_port_symbol_error_total counter\n"
		"infiniband_switch_port_symbol_error_total{guid=\"0x0002c90300a1b2c3\","
		"port=\"3\",switch=\"leaf \\\"7\\\" a\\\\b\",remote_guid="
		"\"0x0000000000000100\",remote_port=\"1\",remote_name=\"node01"
		" mlx5_0\"} 77\n"));
	/* 1000 words are 4000 bytes */
	ck_assert_ptr_nonnull(strstr(t, "infiniband_switch_port_transmit_data_bytes_total"
		"{guid=\"0x0002c90300a1b2c3\",port=\"3\","));
	ck_assert_ptr_nonnull(strstr(t, "remote_name=\"node01 mlx5_0\"} 4000\n"));
	ck_assert_ptr_nonnull(strstr(t, "infiniband_hca_port_receive_data_bytes_total"
		"{guid=\"0x0000000000000100\",port=\"1\",hca=\"node01 mlx5_0\","
		"remote_guid=\"0x0002c90300a1b2c3\",remote_port=\"3\",remote_name="
		"\"leaf \\\"7\\\" a\\\\b\"} 1000\n"));
	ck_assert_ptr_nonnull(strstr(t, "infiniband_switch_port_transmit_wait_total{"));
	ck_assert_ptr_nonnull(strstr(t, "infiniband_switch_info{guid=\"0x0002c90300a1b2c3\","
		"switch=\"leaf \\\"7\\\" a\\\\b\",lid=\"7\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(t, "infiniband_hca_info{guid=\"0x0000000000000100\","
		"hca=\"node01 mlx5_0\",lid=\"9\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(t, "infiniband_hca_uplink_info{guid=\"0x0000000000000100\","
		"port=\"1\",hca=\"node01 mlx5_0\",uplink=\"leaf \\\"7\\\" a\\\\b\","
		"uplink_guid=\"0x0002c90300a1b2c3\",uplink_type=\"SW\","
		"uplink_port=\"3\",uplink_lid=\"7\"} 1\n"));
	/* 4x QDR: 4 x 8 Gb/s of data, 4 x 10 Gb/s signalling, in bytes */
	ck_assert_ptr_nonnull(strstr(t, "infiniband_switch_port_rate_bytes_per_second"
		"{guid=\"0x0002c90300a1b2c3\",port=\"3\"} 4000000000\n"));
	ck_assert_ptr_nonnull(strstr(t, "infiniband_switch_port_raw_rate_bytes_per_second"
		"{guid=\"0x0002c90300a1b2c3\",port=\"3\"} 5000000000\n"));
	ck_assert_ptr_nonnull(strstr(t, "infiniband_hca_rate_bytes_per_second"
		"{guid=\"0x0000000000000100\"} 4000000000\n"));
	ck_assert_ptr_nonnull(strstr(t, "infiniband_switch_port_link_width_lanes"
		"{guid=\"0x0002c90300a1b2c3\",port=\"3\"} 4\n"));
	/* every family once */
	ck_assert_uint_eq(count(t, "# TYPE infiniband_switch_port_symbol_error_total "), 1);
	ck_assert_uint_eq(count(t, "# TYPE infiniband_hca_port_symbol_error_total "), 1);
	free(t);
	/* no store: the model's series, no counters */
	prom_init(&p, 0);
	metrics_render_ports_of(&f, NULL, &p);
	t = prom_take(&p, &len);
	ck_assert_ptr_nonnull(t);
	ck_assert_ptr_null(strstr(t, "_total"));
	ck_assert_ptr_nonnull(strstr(t, "infiniband_switch_info{"));
	free(t);
	pc_store_free(st);
	fabric_free(&f);
}
END_TEST


/* The sweep histogram: each observation in the first bucket whose bound
 * holds it (the inline's bounds are the exported ones), above the last
 * only in the count. */
START_TEST(sweep_histogram)
{
	struct sm_hist h;

	memset(&h, 0, sizeof(h));
	for (int i = 0; i < SM_HIST_BUCKETS; i++) {
		sm_hist_observe(&h, sm_hist_bounds[i]);
		ck_assert_uint_eq(h.bucket[i], 1);
		if (i > 0)
			ck_assert(sm_hist_bounds[i] > sm_hist_bounds[i - 1]);
	}
	sm_hist_observe(&h, sm_hist_bounds[SM_HIST_BUCKETS - 1] + 1);
	sm_hist_observe(&h, 0);
	ck_assert_uint_eq(h.bucket[0], 2);
	ck_assert_uint_eq(h.count, SM_HIST_BUCKETS + 2);
	for (int i = 1; i < SM_HIST_BUCKETS; i++)
		ck_assert_uint_eq(h.bucket[i], 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("prom");
	TCase *tc = tcase_create("text");

	tcase_add_test(tc, label_escaping);
	tcase_add_test(tc, label_too_long);
	tcase_add_test(tc, family_once);
	tcase_add_test(tc, numbers);
	tcase_add_test(tc, histogram);
	tcase_add_test(tc, too_many_families);
	tcase_add_test(tc, port_families);
	tcase_add_test(tc, sweep_histogram);
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
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
