/*
 * check_sa_partitions.c - PathRecord and MultiPathRecord with partitions
 * (issue 11): on the bundled fat tree with LIDs from lid_assign() and
 * LFTs from minhop, P_Key tables are given to a few ports by hand
 * (fab_port.want_pkeys, as the partitions' resolution fills them).
 *
 * A path exists only between ports that share a partition in which at
 * least one of them is a full member (10.9.3); its record carries that
 * P_Key: a requested one as asked, else the one OpenSM picks
 * (osm_physp_find_common_pkey(): first in its key map's order, with the
 * source's membership bit).  Ports without want_pkeys and without a
 * table read keep the default partition, as before.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa_wire.h"
#include "model/fabric.h"
#include "sm/sa/sa.h"
#include "tests/unit/topo_fixture.h"

#define B(n)	(1ull << (n))

/* PathRecord and MultiPathRecord component numbers (tables 204, 213) */
enum { PR_DGID = 2, PR_SGID = 3, PR_DLID = 4, PR_PKEY = 13 };
enum { MPR_PKEY = 7, MPR_SGID_COUNT = 19, MPR_DGID_COUNT = 20 };
#define MPR_COUNTS	(B(MPR_SGID_COUNT) | B(MPR_DGID_COUNT))

#define PREC(t, i)	((const struct sa_path_record *)((t)->buf + (i) * 64))

static struct fab_port *host_port(struct fx *x, const char *host)
{
	char desc[64];

	snprintf(desc, sizeof(desc), "%s HCA-1", host);
	return &x->f.nodes[by_desc(&x->f, desc)].ports[1];
}

static void host_gid(struct fx *x, const char *host, uint8_t gid[16])
{
	uint64_t p = htobe64(SUBNET_PREFIX), g = htobe64(host_port(x, host)->guid);

	memcpy(gid, &p, 8);
	memcpy(gid + 8, &g, 8);
}

/* Give port `p` the table keys[0..n-1] (host order, full bit included). */
static void want(struct fab_port *p, const uint16_t *keys, unsigned n)
{
	free(p->want_pkeys);
	p->want_pkeys = malloc(n * sizeof(*p->want_pkeys));
	ck_assert_ptr_nonnull(p->want_pkeys);
	memcpy(p->want_pkeys, keys, n * sizeof(*keys));
	p->n_want_pkeys = (uint16_t)n;
}

static int run(const struct sa_view *v, uint16_t attr, uint8_t method,
	       uint64_t mask, const void *tmpl, size_t len, struct sa_table *t,
	       struct sa_work *w)
{
	const struct sa_attr *a = sa_attr_find(attr);
	uint8_t data[SA_DATA_SIZE] = { 0 };
	struct sa_query q;

	ck_assert_ptr_nonnull(a);
	ck_assert(sa_mask_valid(a->nfields, mask));
	memcpy(data, tmpl, len < sizeof(data) ? len : sizeof(data));
	q = (struct sa_query){ .method = method, .attr_id = attr,
			       .comp_mask = mask, .tmpl = data, .tmpl_len = len,
			       .requester_lid = 1, .work = w };
	memset(t, 0, sizeof(*t));
	t->rec_size = a->rec_size;
	return a->gen(v, &q, t);
}

/* PathRecord GetTable from host `s` to host `d`, P_Key asked when
 * `pkey` is non-zero; the records in t, their count returned. */
static size_t pr(struct fx *x, const char *s, const char *d, uint16_t pkey,
		 struct sa_table *t)
{
	struct sa_path_record p;

	memset(&p, 0, sizeof(p));
	host_gid(x, s, p.sgid);
	host_gid(x, d, p.dgid);
	p.pkey = htobe16(pkey);
	ck_assert_int_eq(run(&x->v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			     B(PR_SGID) | B(PR_DGID) | (pkey ? B(PR_PKEY) : 0),
			     &p, sizeof(p), t, NULL), 0);
	return t->count;
}

/* The P_Key of the one path s -> d (LMC 0), or -1 when there is none. */
static int pr_key(struct fx *x, const char *s, const char *d, uint16_t pkey)
{
	struct sa_table t;
	size_t n = pr(x, s, d, pkey, &t);
	int key = n ? be16toh(PREC(&t, 0)->pkey) : -1;

	ck_assert_uint_le(n, 1);
	free(t.buf);
	return key;
}

/*
 * H0001, H0002: limited members of 0x0002 only; H0003: full member of
 * 0x0002 only; H0004, H0005: full members of the default partition and
 * of 0x0002 (the default first); every other port: no table at all (the
 * default partition, as without partitions).
 */
static void setup_parts(struct fx *x)
{
	static const uint16_t lim2[] = { 0x0002 }, full2[] = { 0x8002, 0, 0 },
		def_full2[] = { 0xffff, 0x8002 };

	fx_load(x, "fat2-small.net", 0);
	want(host_port(x, "H0001"), lim2, 1);
	want(host_port(x, "H0002"), lim2, 1);
	want(host_port(x, "H0003"), full2, 3);
	want(host_port(x, "H0004"), def_full2, 2);
	want(host_port(x, "H0005"), def_full2, 2);
}

/* No want_pkeys anywhere: the default partition, as before issue 11. */
START_TEST(test_default_unchanged)
{
	struct fx x;

	fx_load(&x, "fat2-small.net", 0);
	ck_assert_int_eq(pr_key(&x, "H0001", "H0009", 0), 0xffff);
	ck_assert_int_eq(pr_key(&x, "H0001", "H0009", 0x7fff), 0x7fff);
	ck_assert_int_eq(pr_key(&x, "H0001", "H0009", 0xffff), 0xffff);
	ck_assert_int_eq(pr_key(&x, "H0001", "H0009", 0x8002), -1);
	ck_assert_int_eq(pr_key(&x, "H0001", "H0001", 0), 0xffff);
	fx_free(&x);
}
END_TEST

/* Two limited members of their only partition: no path either way, not
 * even with that P_Key asked for; a port limited in its only partition
 * has no loopback path either. */
START_TEST(test_limited_pair)
{
	struct fx x;

	setup_parts(&x);
	ck_assert_int_eq(pr_key(&x, "H0001", "H0002", 0), -1);
	ck_assert_int_eq(pr_key(&x, "H0002", "H0001", 0), -1);
	ck_assert_int_eq(pr_key(&x, "H0001", "H0002", 0x0002), -1);
	ck_assert_int_eq(pr_key(&x, "H0001", "H0002", 0x8002), -1);
	ck_assert_int_eq(pr_key(&x, "H0001", "H0001", 0), -1);
	/* nor with a port of the default partition only */
	ck_assert_int_eq(pr_key(&x, "H0001", "H0009", 0), -1);
	ck_assert_int_eq(pr_key(&x, "H0009", "H0001", 0x7fff), -1);
	fx_free(&x);
}
END_TEST

/* Full and limited: one path each way, with the source's membership
 * (OpenSM returns the source's key); a requested P_Key is echoed as asked
 * when shared (either membership bit), and one they do not share gives
 * nothing. */
START_TEST(test_full_limited)
{
	struct fx x;

	setup_parts(&x);
	ck_assert_int_eq(pr_key(&x, "H0001", "H0003", 0), 0x0002);
	ck_assert_int_eq(pr_key(&x, "H0003", "H0001", 0), 0x8002);
	ck_assert_int_eq(pr_key(&x, "H0001", "H0003", 0x8002), 0x8002);
	ck_assert_int_eq(pr_key(&x, "H0001", "H0003", 0x0002), 0x0002);
	ck_assert_int_eq(pr_key(&x, "H0001", "H0003", 0xffff), -1);
	ck_assert_int_eq(pr_key(&x, "H0001", "H0003", 0x7fff), -1);
	ck_assert_int_eq(pr_key(&x, "H0001", "H0003", 0x8003), -1);
	/* H0003 shares nothing with a default-only port */
	ck_assert_int_eq(pr_key(&x, "H0003", "H0010", 0), -1);
	fx_free(&x);
}
END_TEST

/*
 * Two partitions shared: OpenSM's choice (its key map ordered by the
 * network-order base read as a little-endian integer: 0x0002 before
 * 0x7fff), whatever the table order; each one when asked for.  With a
 * default-only port: the default partition.
 */
START_TEST(test_preference)
{
	struct fx x;

	setup_parts(&x);
	ck_assert_int_eq(pr_key(&x, "H0004", "H0005", 0), 0x8002);
	ck_assert_int_eq(pr_key(&x, "H0004", "H0005", 0xffff), 0xffff);
	ck_assert_int_eq(pr_key(&x, "H0004", "H0005", 0x8002), 0x8002);
	ck_assert_int_eq(pr_key(&x, "H0004", "H0009", 0), 0xffff);
	ck_assert_int_eq(pr_key(&x, "H0009", "H0004", 0), 0xffff);
	ck_assert_int_eq(pr_key(&x, "H0004", "H0001", 0), 0x8002);
	ck_assert_int_eq(pr_key(&x, "H0001", "H0004", 0), 0x0002);
	fx_free(&x);
}
END_TEST

/*
 * An open destination: from limited H0001, paths only to the full
 * members of 0x0002 (H0003, H0004, H0005), each with 0x0002.  A switch
 * end is its port 0 and port 0's table: leaf-01 given 0x8002 joins them.
 */
START_TEST(test_open_end)
{
	static const uint16_t full2[] = { 0x8002 };
	struct fx x;
	struct sa_path_record p;
	struct sa_table t;
	uint16_t dl[3];

	setup_parts(&x);
	dl[0] = host_port(&x, "H0003")->lid;
	dl[1] = host_port(&x, "H0004")->lid;
	dl[2] = host_port(&x, "H0005")->lid;
	memset(&p, 0, sizeof(p));
	host_gid(&x, "H0001", p.sgid);
	ck_assert_int_eq(run(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			     B(PR_SGID), &p, sizeof(p), &t, NULL), 0);
	ck_assert_uint_eq(t.count, 3);
	for (size_t i = 0; i < t.count; i++) {
		uint16_t d = be16toh(PREC(&t, i)->dlid);

		ck_assert_uint_eq(be16toh(PREC(&t, i)->pkey), 0x0002);
		ck_assert(d == dl[0] || d == dl[1] || d == dl[2]);
	}
	free(t.buf);
	fx_free(&x);

	setup_parts(&x);
	want(&x.f.nodes[by_desc(&x.f, "leaf-01")].ports[0], full2, 1);
	ck_assert_int_eq(run(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			     B(PR_SGID), &p, sizeof(p), &t, NULL), 0);
	ck_assert_uint_eq(t.count, 4);
	free(t.buf);
	p.dlid = htobe16(x.f.nodes[by_desc(&x.f, "leaf-01")].ports[0].lid);
	ck_assert_int_eq(run(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			     B(PR_SGID) | B(PR_DLID), &p, sizeof(p), &t, NULL), 0);
	ck_assert_uint_eq(t.count, 1);
	ck_assert_uint_eq(be16toh(PREC(&t, 0)->pkey), 0x0002);
	free(t.buf);
	fx_free(&x);
}
END_TEST

/* A requested P_Key no port is a full member of: rejected before any
 * pair is examined (no work), even though ports hold it limited. */
START_TEST(test_no_full_member_costs_nothing)
{
	static const uint16_t lim3[] = { 0x0003 };
	struct fx x;
	struct sa_path_record p;
	struct sa_table t;
	struct sa_work w;

	setup_parts(&x);
	want(host_port(&x, "H0010"), lim3, 1);
	want(host_port(&x, "H0011"), lim3, 1);
	memset(&p, 0, sizeof(p));
	memset(&w, 0, sizeof(w));
	w.budget = 1u << 20;
	p.pkey = htobe16(0x0003);
	ck_assert_int_eq(run(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			     B(PR_PKEY), &p, sizeof(p), &t, &w), 0);
	ck_assert_uint_eq(t.count, 0);
	ck_assert_uint_eq(w.used, 0);
	free(t.buf);
	/* 0x0002 has full members: the pairs are examined, and only pairs
	 * with a full member of 0x0002 and another member give paths:
	 * H0001..H0005 minus H0001<->H0002 and the loopbacks of H0001/2. */
	memset(&w, 0, sizeof(w));
	w.budget = 1u << 20;
	p.pkey = htobe16(0x8002);
	ck_assert_int_eq(run(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			     B(PR_PKEY), &p, sizeof(p), &t, &w), 0);
	ck_assert_uint_eq(t.count, 5 * 5 - 2 - 2);
	for (size_t i = 0; i < t.count; i++)
		ck_assert_uint_eq(be16toh(PREC(&t, i)->pkey), 0x8002);
	ck_assert_uint_gt(w.used, 0);
	free(t.buf);
	fx_free(&x);
}
END_TEST

/* MultiPathRecord: the same rules per GID pair. */
struct mpr_req {
	struct sa_multipath_record r;
	uint8_t gids[SA_MPR_GIDS_ONE_MAD][16];
};

START_TEST(test_multipath)
{
	static const char *const src[] = { "H0001", "H0002" },
		*const dst[] = { "H0002", "H0003", "H0009" };
	struct fx x;
	struct mpr_req m;
	struct sa_table t;
	size_t len;

	setup_parts(&x);
	memset(&m, 0, sizeof(m));
	for (unsigned i = 0; i < 2; i++)
		host_gid(&x, src[i], m.gids[i]);
	for (unsigned i = 0; i < 3; i++)
		host_gid(&x, dst[i], m.gids[2 + i]);
	m.r.sgid_count = 2;
	m.r.dgid_count = 3;
	len = SA_MPR_FIXED_SIZE + 5 * 16;
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS, &m, len, &t, NULL), 0);
	/* H0001->H0003 and H0002->H0003 only */
	ck_assert_uint_eq(t.count, 2);
	for (size_t i = 0; i < 2; i++) {
		ck_assert_uint_eq(be16toh(PREC(&t, i)->dlid),
				  host_port(&x, "H0003")->lid);
		ck_assert_uint_eq(be16toh(PREC(&t, i)->pkey), 0x0002);
	}
	free(t.buf);
	/* a P_Key they do not share: nothing */
	m.r.pkey = htobe16(0xffff);
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS | B(MPR_PKEY), &m, len, &t, NULL), 0);
	ck_assert_uint_eq(t.count, 0);
	free(t.buf);
	/* the shared one asked: the same two paths, with it */
	m.r.pkey = htobe16(0x8002);
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS | B(MPR_PKEY), &m, len, &t, NULL), 0);
	ck_assert_uint_eq(t.count, 2);
	ck_assert_uint_eq(be16toh(PREC(&t, 0)->pkey), 0x8002);
	free(t.buf);
	fx_free(&x);
}
END_TEST

/* The table as read (no want_pkeys) counts when the discovery read it. */
START_TEST(test_table_as_read)
{
	struct fx x;
	struct fab_port *a, *b;
	struct fab_node *na, *nb;

	fx_load(&x, "fat2-small.net", 0);
	na = &x.f.nodes[by_desc(&x.f, "H0006 HCA-1")];
	nb = &x.f.nodes[by_desc(&x.f, "H0007 HCA-1")];
	ck_assert_int_eq(fabric_pkey_alloc(na, 1, 1), 0);
	ck_assert_int_eq(fabric_pkey_alloc(nb, 1, 1), 0);
	a = &na->ports[1];
	b = &nb->ports[1];
	a->pkey_read = b->pkey_read = 1;
	a->pkeys[3] = htobe16(0x7fff);		/* limited default */
	b->pkeys[0] = htobe16(0x7fff);
	ck_assert_int_eq(pr_key(&x, "H0006", "H0007", 0), -1);
	ck_assert_int_eq(pr_key(&x, "H0006", "H0008", 0), 0x7fff);
	ck_assert_int_eq(pr_key(&x, "H0008", "H0006", 0), 0xffff);
	fx_free(&x);
}
END_TEST

static Suite *sa_partitions_suite(void)
{
	Suite *s = suite_create("sa_partitions");
	TCase *tc = tcase_create("paths");

	tcase_add_test(tc, test_default_unchanged);
	tcase_add_test(tc, test_limited_pair);
	tcase_add_test(tc, test_full_limited);
	tcase_add_test(tc, test_preference);
	tcase_add_test(tc, test_open_end);
	tcase_add_test(tc, test_no_full_member_costs_nothing);
	tcase_add_test(tc, test_multipath);
	tcase_add_test(tc, test_table_as_read);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sa_partitions_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
