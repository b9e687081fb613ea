/*
 * check_sa_tables.c - the table records of sm/sa/tables.c on the
 * fat2-small topology: which records OpenSM 3.3.23's SA answers (see the
 * top of sm/sa/tables.c), P_Key trust, and the MFT generator on a model
 * table made by hand.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa_wire.h"
#include "model/fabric.h"
#include "sm/lid.h"
#include "sm/sa/sa.h"
#include "sm/topo_file.h"

#define B(n)	(1ull << (n))

static struct fabric f;
static struct sa_view v;
static int32_t ca, sw;		/* a CA and a 36-port switch of the model */

static void setup(void)
{
	char path[512], err[256];
	struct lid_policy pol = { .lmc = 0 };

	fabric_init(&f);
	snprintf(path, sizeof(path), "%s/fat2-small.net", TOPO_DIR);
	ck_assert_msg(topo_load(&f, path, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(lid_assign(&f, NULL, &pol, NULL), 0);
	memset(&v, 0, sizeof(v));
	v.f = &f;
	ca = sw = FAB_NONE;
	for (size_t i = 0; i < f.n_nodes; i++) {
		if (f.nodes[i].type == NODE_TYPE_SWITCH && sw == FAB_NONE)
			sw = (int32_t)i;
		if (f.nodes[i].type == NODE_TYPE_CA && ca == FAB_NONE)
			ca = (int32_t)i;
	}
	ck_assert_int_ne(ca, FAB_NONE);
	ck_assert_int_ne(sw, FAB_NONE);
	/* The CA's table as the discovery reads it: 2 blocks, 0xFFFF at 0. */
	ck_assert_int_eq(fabric_pkey_alloc(&f.nodes[ca], 1, 2), 0);
	f.nodes[ca].ports[1].pkeys[0] = htobe16(0xffff);
	f.nodes[ca].ports[1].pkey_read = 2;
}

static void teardown(void)
{
	fabric_free(&f);
}

/* Run a GetTable with `tmpl` (a record) and SM_Key `key`; rc, records in t. */
static int query(uint16_t attr, uint64_t mask, const void *tmpl, size_t len,
		 uint64_t key, struct sa_table *t)
{
	const struct sa_attr *a = sa_attr_find(attr);
	struct sa_mad m;
	struct sa_query q;

	ck_assert_ptr_nonnull(a);
	ck_assert(sa_mask_valid(a->nfields, mask));
	memset(&m, 0, sizeof(m));
	m.sm_key = htobe64(key);
	memcpy(m.data, tmpl, len);
	q = (struct sa_query){ .method = MAD_METHOD_GET_TABLE, .attr_id = attr,
			       .comp_mask = mask, .tmpl = m.data,
			       .tmpl_len = sizeof(m.data), .sm_key = key };
	memset(t, 0, sizeof(*t));
	t->rec_size = a->rec_size;
	return a->gen(&v, &q, t);
}

static size_t count(uint16_t attr, uint64_t mask, const void *tmpl, size_t len,
		    uint64_t key)
{
	struct sa_table t;
	int rc = query(attr, mask, tmpl, len, key, &t);

	ck_assert_int_eq(rc, 0);
	free(t.buf);
	return t.count;
}

static uint16_t lid_of(int32_t id, unsigned pn)
{
	return f.nodes[id].ports[pn].lid;
}

START_TEST(pktr_untrusted_refused)
{
	struct sa_pkey_table_record r = { 0 };
	struct sa_table t;

	ck_assert_int_eq(query(SA_ATTR_PKEY_TABLE_RECORD, 0, &r, sizeof(r), 0, &t),
			 -SA_STATUS_REQ_INVALID);
	free(t.buf);
}
END_TEST

START_TEST(pktr_ca_blocks)
{
	struct sa_pkey_table_record r = { .lid = htobe16(lid_of(ca, 1)),
					  .port_num = 9 };
	const struct sa_pkey_table_record *got;
	struct sa_table t;

	/* Every block read; the PortNum component is ignored for a CA. */
	ck_assert_int_eq(query(SA_ATTR_PKEY_TABLE_RECORD, B(0) | B(2), &r,
			       sizeof(r), 1, &t), 0);
	ck_assert_uint_eq(t.count, 2);
	got = (const void *)t.buf;
	ck_assert_uint_eq(be16toh(got[0].lid), lid_of(ca, 1));
	ck_assert_uint_eq(got[0].port_num, 1);
	ck_assert_uint_eq(be16toh(got[0].pkeys[0]), 0xffff);
	/* BlockNum in OpenSM's (host, little-endian) byte order */
	ck_assert_uint_eq(((const uint8_t *)&got[1].block_num)[0], 1);
	ck_assert_uint_eq(((const uint8_t *)&got[1].block_num)[1], 0);
	free(t.buf);
}
END_TEST

START_TEST(pktr_switch_ports)
{
	struct sa_pkey_table_record r = { .lid = htobe16(lid_of(sw, 0)) };

	/* No table read on the switch: no records without a block ... */
	ck_assert_uint_eq(count(SA_ATTR_PKEY_TABLE_RECORD, B(0), &r, sizeof(r), 1), 0);
	/* ... and one zero block with it, on any port up to NumPorts. */
	r.block_num = htobe16(3);
	r.port_num = 36;
	ck_assert_uint_eq(count(SA_ATTR_PKEY_TABLE_RECORD, B(0) | B(1) | B(2),
				&r, sizeof(r), 1), 1);
	r.port_num = 37;
	ck_assert_uint_eq(count(SA_ATTR_PKEY_TABLE_RECORD, B(0) | B(1) | B(2),
				&r, sizeof(r), 1), 0);
	/* Whole subnet: the CA's two blocks. */
	ck_assert_uint_eq(count(SA_ATTR_PKEY_TABLE_RECORD, 0, &r, sizeof(r), 1), 2);
}
END_TEST

START_TEST(sl2vl_pairs)
{
	struct sa_sl2vl_record r = { .lid = htobe16(lid_of(sw, 0)) };

	ck_assert_uint_eq(count(SA_ATTR_SL2VL_RECORD, B(0), &r, sizeof(r), 0),
			  37 * 37);
	r.in_port = 5;
	r.out_port = 6;
	ck_assert_uint_eq(count(SA_ATTR_SL2VL_RECORD, B(0) | B(1) | B(2), &r,
				sizeof(r), 0), 1);
	r.out_port = 37;
	ck_assert_uint_eq(count(SA_ATTR_SL2VL_RECORD, B(0) | B(2), &r,
				sizeof(r), 0), 0);
	/* A CA: one record, in 0 out 0, whatever the ports asked. */
	struct sa_table t;
	r.lid = htobe16(lid_of(ca, 1));
	ck_assert_int_eq(query(SA_ATTR_SL2VL_RECORD, B(0) | B(1) | B(2), &r,
			       sizeof(r), 0, &t), 0);
	ck_assert_uint_eq(t.count, 1);
	ck_assert_uint_eq(((const struct sa_sl2vl_record *)t.buf)->out_port, 0);
	free(t.buf);
}
END_TEST

START_TEST(vlarb_blocks)
{
	struct sa_vlarb_record r = { .lid = htobe16(lid_of(sw, 0)) };

	ck_assert_uint_eq(count(SA_ATTR_VL_ARB_RECORD, B(0), &r, sizeof(r), 0),
			  37 * 4);
	r.port_num = 0;
	ck_assert_uint_eq(count(SA_ATTR_VL_ARB_RECORD, B(0) | B(1), &r,
				sizeof(r), 0), 4);
	r.block_num = 0;
	ck_assert_uint_eq(count(SA_ATTR_VL_ARB_RECORD, B(0) | B(1) | B(2), &r,
				sizeof(r), 0), 0);
	r.block_num = 5;
	ck_assert_uint_eq(count(SA_ATTR_VL_ARB_RECORD, B(0) | B(1) | B(2), &r,
				sizeof(r), 0), 0);
	r.block_num = 4;
	r.port_num = 37;
	ck_assert_uint_eq(count(SA_ATTR_VL_ARB_RECORD, B(0) | B(1) | B(2), &r,
				sizeof(r), 0), 0);
	r.lid = htobe16(lid_of(ca, 1));
	ck_assert_uint_eq(count(SA_ATTR_VL_ARB_RECORD, B(0) | B(1), &r,
				sizeof(r), 0), 4);
}
END_TEST

START_TEST(mftr_from_model)
{
	struct sa_mft_record r = { 0 };
	struct fab_node *n = &f.nodes[sw];
	struct sa_table t;

	/* No groups: nothing, like OpenSM with an empty broadcast group. */
	ck_assert_uint_eq(count(SA_ATTR_MFT_RECORD, 0, &r, sizeof(r), 0), 0);
	/* 40 MLIDs, 3 positions (36 ports): 2 blocks x 3 positions. */
	n->mft_entries = 40;
	n->mft_positions = 3;
	n->mft = calloc(40 * 3, sizeof(*n->mft));
	ck_assert_ptr_nonnull(n->mft);
	n->mft[33 * 3 + 2] = htobe16(0x0004);	/* MLID 0xC021, port 34 */
	ck_assert_uint_eq(count(SA_ATTR_MFT_RECORD, 0, &r, sizeof(r), 0), 6);
	r.lid = htobe16(lid_of(sw, 0));
	r.position_block = htobe16(2 << 12 | 1);
	ck_assert_int_eq(query(SA_ATTR_MFT_RECORD, B(0) | B(1) | B(3), &r,
			       sizeof(r), 0, &t), 0);
	ck_assert_uint_eq(t.count, 1);
	ck_assert_uint_eq(be16toh(((const struct sa_mft_record *)t.buf)->mft[1]),
			  0x0004);
	free(t.buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sa_tables");
	TCase *tc = tcase_create("records");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, pktr_untrusted_refused);
	tcase_add_test(tc, pktr_ca_blocks);
	tcase_add_test(tc, pktr_switch_ports);
	tcase_add_test(tc, sl2vl_pairs);
	tcase_add_test(tc, vlarb_blocks);
	tcase_add_test(tc, mftr_from_model);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
