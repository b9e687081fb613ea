/*
 * check_ibsmctl_rec.c - ibsmctl's SA record rows (tools/ibsmctl_rec.c):
 * the link speed of `query ports`, decoded from PortInfoRecords built by
 * hand, since ibsim reports no extended speeds.  A switch's external
 * ports take IsExtendedSpeedsSupported from the switch's port 0 (IB spec
 * 14.2.5.6: their own CapabilityMask is 0); a CA port from its own.
 */
#include "config.h"

#include <check.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa_wire.h"
#include "tools/ibsmctl.h"

/* A PortInfoRecord: LID, port, CapabilityMask, LinkSpeedActive (QDR, as
 * an SA adds for legacy clients) and LinkSpeedExtActive. */
static void pir(struct sa_port_info_record *r, uint16_t lid, uint8_t port,
		uint32_t cap, unsigned ext_active)
{
	memset(r, 0, sizeof(*r));
	r->lid = htobe16(lid);
	r->port_num = port;
	r->port_info.cap_mask = htobe32(cap);
	r->port_info.speed_active_enabled = 4 << 4 | 4;
	r->port_info.speed_ext_active_supp = (uint8_t)(ext_active << 4 | 3);
	r->port_info.link_width_active = 2;
}

/* The "speed" of each row, as ibsmctl --json prints it. */
static char *speeds(const struct rec_kind *k, const void *recs, size_t n)
{
	struct out *o = out_new();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(o);
	ck_assert_ptr_nonnull(f);
	if (k->prepare)
		k->prepare(recs, n, k->rec_size);
	for (size_t i = 0; i < n; i++) {
		out_row(o);
		k->row(o, (const uint8_t *)recs + i * k->rec_size);
	}
	ck_assert_int_eq(out_print(o, f, true, false), 0);
	fclose(f);
	out_free(o);
	return buf;
}

START_TEST(switch_port_speed_from_port0)
{
	const struct rec_kind *k = rec_kind_find("ports");
	struct sa_port_info_record r[5];
	char *json;

	ck_assert_ptr_nonnull(k);
	ck_assert_uint_eq(k->rec_size, sizeof(r[0]));
	/* switch LID 1: port 0 has the bit, ports 1-2 have no mask; an EDR
	 * and an FDR link.  CA LID 7: its own bit, EDR.  CA LID 9: no bit,
	 * a stray LinkSpeedExtActive ignored: QDR. */
	pir(&r[0], 1, 0, PI_CAP_HAS_EXT_SPEEDS | PI_CAP_SL_MAP, 0);
	pir(&r[1], 1, 1, 0, 2);
	pir(&r[2], 1, 2, 0, 1);
	pir(&r[3], 7, 1, PI_CAP_HAS_EXT_SPEEDS, 2);
	pir(&r[4], 9, 1, 0, 2);
	json = speeds(k, r, 5);
	const char *p = json;
	const char *want[] = { "\"speed\": \"QDR\"", "\"speed\": \"EDR\"",
			       "\"speed\": \"FDR\"", "\"speed\": \"EDR\"",
			       "\"speed\": \"QDR\"" };
	for (size_t i = 0; i < 5; i++) {
		const char *q = strstr(p, "\"speed\": ");

		ck_assert_msg(q && !strncmp(q, want[i], strlen(want[i])),
			      "row %zu: want %s in %s", i, want[i], json);
		p = q + 1;
	}
	free(json);
}
END_TEST

START_TEST(speed_names)
{
	struct sa_port_info_record r;

	pir(&r, 1, 1, 0, 4);
	ck_assert_str_eq(pi_speed_name(&r.port_info, 0), "QDR");
	ck_assert_str_eq(pi_speed_name(&r.port_info, PI_CAP_HAS_EXT_SPEEDS), "HDR");
	r.port_info.speed_ext_active_supp = 0;	/* bit set, no extended speed */
	ck_assert_str_eq(pi_speed_name(&r.port_info, PI_CAP_HAS_EXT_SPEEDS), "QDR");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ibsmctl_rec");
	TCase *tc = tcase_create("ports");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, switch_port_speed_from_port0);
	tcase_add_test(tc, speed_names);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
