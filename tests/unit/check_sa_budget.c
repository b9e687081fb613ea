/*
 * check_sa_budget.c - bounded work in the SA (issue 10, findings 1 and 9).
 *
 * A request's generator charges every candidate it examines to the
 * request's work budget and stops after a slice of units (sa.h):
 *
 *   - the hostile PathRecord GetTable of finding 1 (P_Key 0x1234, both
 *     ends open) on fat2-128 with LMC 7 costs nothing: the P_Key is
 *     decided before any path is walked (on main it walked 370 million
 *     LID pairs: two minutes of CPU);
 *   - an open PathRecord GetTable with the default P_Key ends in
 *     NO_RESOURCES within its budget, in slices none of which goes past
 *     its units by more than one item;
 *   - every generator answered in slices of a few units gives exactly the
 *     records it gives in one go (the cursors resume where they stopped);
 *   - an open PathRecord GetTable that may be large is counted before
 *     anything is stored: one that cannot be answered holds no memory,
 *     one that can is built at its exact size, within the table's limit;
 *   - the SA index follows the model's generation, not its addresses;
 *   - sa_request_parse() refuses what the agent must refuse.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/rmpp.h"
#include "mad/sa_wire.h"
#include "routing/routing.h"
#include "model/fabric.h"
#include "sm/lid.h"
#include "sm/sa/gen.h"
#include "sm/sa/sa.h"
#include "sm/topo_file.h"
#include "tests/unit/topo_fixture.h"

#define B(n)	(1ull << (n))

/* PathRecord components (table 204) */
enum { PR_SGID = 3, PR_DLID = 4, PR_SLID = 5, PR_NUMB_PATH = 12,
       PR_PKEY = 13, PR_MTU_SEL = 16, PR_MTU = 17, PR_RATE_SEL = 18,
       PR_RATE = 19, PR_PKT_LIFE_SEL = 20, PR_PKT_LIFE = 21 };
enum { MPR_SGID_COUNT = 19, MPR_DGID_COUNT = 20 };

/*
 * The most one item may charge past the end of a slice: a LID pair of
 * PathRecord (the pair, both walks of at most 64 hops, both ends); the
 * fat trees here have switches of 36 ports at most (SL2VL: 37 x 37).
 */
#define MAX_ITEM	(37u * 37u)

static void port_gid(const struct fabric *f, int32_t id, unsigned pn,
		     uint8_t gid[16])
{
	uint64_t p = htobe64(SUBNET_PREFIX), g = htobe64(f->nodes[id].ports[pn].guid);

	memcpy(gid, &p, 8);
	memcpy(gid + 8, &g, 8);
}

/* What a run in slices saw. */
struct slices {
	unsigned n;			/* slices run */
	uint64_t max_units;		/* the most one slice spent */
};

/*
 * Run a query to its end with `budget` (0: none) in slices of `slice`
 * units, as the agent does; returns the generator's last rc.
 */
static int run_sliced(const struct sa_view *v, uint16_t attr, uint8_t method,
		      uint64_t mask, uint64_t sm_key, const void *tmpl,
		      size_t len, uint64_t budget, uint64_t slice,
		      struct sa_table *t, struct sa_work *w, struct slices *s)
{
	const struct sa_attr *a = sa_attr_find(attr);
	uint8_t data[SA_DATA_SIZE] = { 0 };
	struct sa_query q;
	int rc;

	ck_assert_ptr_nonnull(a);
	memcpy(data, tmpl, len < sizeof(data) ? len : sizeof(data));
	memset(w, 0, sizeof(*w));
	memset(s, 0, sizeof(*s));
	w->budget = budget;
	q = (struct sa_query){ .method = method, .attr_id = attr,
			       .comp_mask = mask, .tmpl = data,
			       .tmpl_len = len ? len : SA_DATA_SIZE,
			       .requester_lid = 1, .sm_key = sm_key, .work = w };
	memset(t, 0, sizeof(*t));
	t->rec_size = a->rec_size;
	do {
		uint64_t before = w->used;

		w->slice_end = slice ? w->used + slice : 0;
		rc = a->gen(v, &q, t);
		s->n++;
		if (w->used - before > s->max_units)
			s->max_units = w->used - before;
		ck_assert_uint_lt(s->n, 10000000);
	} while (rc == SA_MORE);
	return rc;
}

/* The same query in one go, no budget (as before this change). */
static int run_whole(const struct sa_view *v, uint16_t attr, uint8_t method,
		     uint64_t mask, uint64_t sm_key, const void *tmpl,
		     size_t len, struct sa_table *t)
{
	const struct sa_attr *a = sa_attr_find(attr);
	uint8_t data[SA_DATA_SIZE] = { 0 };
	struct sa_query q;

	memcpy(data, tmpl, len < sizeof(data) ? len : sizeof(data));
	q = (struct sa_query){ .method = method, .attr_id = attr,
			       .comp_mask = mask, .tmpl = data,
			       .tmpl_len = len ? len : SA_DATA_SIZE,
			       .requester_lid = 1, .sm_key = sm_key };
	memset(t, 0, sizeof(*t));
	t->rec_size = a->rec_size;
	return a->gen(v, &q, t);
}

/* Finding 1: P_Key 0x1234, ends open, LMC 7: rejected before any walk. */
START_TEST(test_hostile_pkey_lmc7)
{
	struct fx x;
	struct sa_path_record p;
	struct sa_table t;
	struct sa_work w;
	struct slices s;
	int rc;

	fx_load(&x, "fat2-128.net", 7);
	memset(&p, 0, sizeof(p));
	p.pkey = htobe16(0x1234);
	rc = run_sliced(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			B(PR_PKEY), 0, &p, sizeof(p), SA_WORK_BUDGET_DEFAULT,
			SA_SLICE_UNITS, &t, &w, &s);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(t.count, 0);
	ck_assert_uint_eq(w.used, 0);		/* not one pair examined */
	ck_assert_uint_eq(s.n, 1);
	free(t.buf);
	/* the same through MultiPathRecord */
	{
		uint8_t m[SA_DATA_SIZE] = { 0 };
		struct sa_multipath_record *r = (void *)m;

		r->pkey = htobe16(0x1234);
		r->sgid_count = r->dgid_count = 1;
		port_gid(&x.f, by_desc(&x.f, "H0001 HCA-1"), 1,
			 m + SA_MPR_FIXED_SIZE);
		port_gid(&x.f, by_desc(&x.f, "H0100 HCA-1"), 1,
			 m + SA_MPR_FIXED_SIZE + 16);
		rc = run_sliced(&x.v, SA_ATTR_MULTIPATH_RECORD,
				MAD_METHOD_GETMULTI,
				B(MPR_SGID_COUNT) | B(MPR_DGID_COUNT) | B(7), 0,
				m, SA_MPR_FIXED_SIZE + 32,
				SA_WORK_BUDGET_DEFAULT, SA_SLICE_UNITS, &t, &w, &s);
		ck_assert_int_eq(rc, 0);
		ck_assert_uint_eq(t.count, 0);
		ck_assert_uint_eq(w.used, 0);
		free(t.buf);
	}
	/* selectors no path satisfies: MTU > 4096, MTU < 256 */
	memset(&p, 0, sizeof(p));
	p.mtu = 0 << 6 | 5;
	rc = run_sliced(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			B(PR_MTU_SEL) | B(PR_MTU), 0, &p, sizeof(p),
			SA_WORK_BUDGET_DEFAULT, SA_SLICE_UNITS, &t, &w, &s);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(w.used, 0);
	free(t.buf);
	p.mtu = 1 << 6 | 1;
	rc = run_sliced(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			B(PR_MTU_SEL) | B(PR_MTU), 0, &p, sizeof(p),
			SA_WORK_BUDGET_DEFAULT, SA_SLICE_UNITS, &t, &w, &s);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(w.used, 0);
	free(t.buf);
	fx_free(&x);
}
END_TEST

/*
 * Open ends, LMC 7: more work than any budget allows.  A query that
 * matches nothing (rate exactly 1200 Gb/s: no link has it, and no
 * check before the walk can tell) ends NO_RESOURCES once the budget is
 * spent (half of it: such a query is counted before it is built, each
 * pass with half), never more than one item past it, and no slice is
 * longer than its units plus one item.  In the default partition the table reaches
 * its record limit first: NO_RESOURCES too.
 */
START_TEST(test_open_paths_budget)
{
	struct fx x;
	struct sa_path_record p;
	struct sa_table t;
	struct sa_work w;
	struct slices s;
	int rc;

	fx_load(&x, "fat2-128.net", 7);
	memset(&p, 0, sizeof(p));
	p.rate = 2 << 6 | 24;
	rc = run_sliced(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			B(PR_RATE_SEL) | B(PR_RATE), 0, &p, sizeof(p),
			SA_WORK_BUDGET_DEFAULT, SA_SLICE_UNITS, &t, &w, &s);
	ck_assert_int_eq(rc, -SA_STATUS_NO_RESOURCES);
	ck_assert_uint_eq(t.count, 0);
	ck_assert_uint_gt(w.used, SA_WORK_BUDGET_DEFAULT / 2);
	ck_assert_uint_le(w.used, SA_WORK_BUDGET_DEFAULT / 2 + MAX_ITEM);
	ck_assert_uint_le(s.max_units, SA_SLICE_UNITS + MAX_ITEM);
	ck_assert_uint_ge(s.n, SA_WORK_BUDGET_DEFAULT / 2 / (SA_SLICE_UNITS + MAX_ITEM));
	free(t.buf);
	memset(&p, 0, sizeof(p));
	rc = run_sliced(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE, 0, 0,
			&p, sizeof(p), SA_WORK_BUDGET_DEFAULT, SA_SLICE_UNITS,
			&t, &w, &s);
	ck_assert_int_eq(rc, -SA_STATUS_NO_RESOURCES);
	ck_assert_uint_le(w.used, SA_WORK_BUDGET_DEFAULT + MAX_ITEM);
	ck_assert_uint_le(t.count, 1u << 17);
	ck_assert_uint_le(s.max_units, SA_SLICE_UNITS + MAX_ITEM);
	/* counted, never stored: no table (before: up to 8 MB of one) */
	ck_assert_ptr_null(t.buf);
	ck_assert_uint_eq(t.cap, 0);
	free(t.buf);
	/* An SLID no port has: no records, no work. */
	p.slid = htobe16(0xbfff);
	rc = run_sliced(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET, B(PR_SLID),
			0, &p, sizeof(p), 1000, 100, &t, &w, &s);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(t.count, 0);
	ck_assert_uint_eq(w.used, 0);
	free(t.buf);
	/* A small budget: one host's paths to all with LMC 7 do not fit. */
	memset(&p, 0, sizeof(p));
	port_gid(&x.f, by_desc(&x.f, "H0001 HCA-1"), 1, p.sgid);
	rc = run_sliced(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			B(PR_SGID), 0, &p, sizeof(p), 5000, 1000, &t, &w, &s);
	ck_assert_int_eq(rc, -SA_STATUS_NO_RESOURCES);
	ck_assert_uint_le(w.used, 5000 + MAX_ITEM);
	free(t.buf);
	/* ... and NumbPath 1 makes them fit the default budget. */
	p.num_path = 1;
	rc = run_sliced(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			B(PR_SGID) | B(PR_NUMB_PATH), 0, &p, sizeof(p),
			SA_WORK_BUDGET_DEFAULT, SA_SLICE_UNITS, &t, &w, &s);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_ge(t.count, 128);
	free(t.buf);
	fx_free(&x);
}
END_TEST

/*
 * Bounded memory (issue 10): a PathRecord GetTable with an end open that
 * may give more than a few thousand records is counted first and then
 * built in a table of exactly its size (no doubling slack), with the
 * records a one-go run gives; with a limit below that size it fails
 * -ENOBUFS, naming the bytes it needed, before anything is stored.
 */
static int run_limited(const struct sa_view *v, uint64_t mask, const void *tmpl,
		       size_t max_bytes, struct sa_table *t, struct sa_work *w)
{
	uint8_t data[SA_DATA_SIZE] = { 0 };
	struct sa_query q;
	int rc;

	memcpy(data, tmpl, sizeof(struct sa_path_record));
	memset(w, 0, sizeof(*w));
	w->budget = SA_WORK_BUDGET_DEFAULT;
	q = (struct sa_query){ .method = MAD_METHOD_GET_TABLE,
			       .attr_id = SA_ATTR_PATH_RECORD, .comp_mask = mask,
			       .tmpl = data, .tmpl_len = SA_DATA_SIZE,
			       .requester_lid = 1, .work = w };
	memset(t, 0, sizeof(*t));
	t->rec_size = t->stride = 64;
	t->max_bytes = max_bytes;
	do {
		w->slice_end = w->used + SA_SLICE_UNITS;
		rc = gen_path_record(v, &q, t);
		/* the limit holds at every slice */
		ck_assert(!max_bytes || sa_table_bytes(t) <= max_bytes);
	} while (rc == SA_MORE);
	return rc;
}

START_TEST(test_count_first)
{
	struct sa_path_record p;
	struct sa_table t, whole;
	struct sa_work w;
	struct fx x;
	int rc;

	/* "All my paths" with LMC 3: 8 LIDs x every LID of the subnet. */
	fx_load(&x, "fat2-128.net", 3);
	memset(&p, 0, sizeof(p));
	port_gid(&x.f, by_desc(&x.f, "H0001 HCA-1"), 1, p.sgid);
	ck_assert_int_eq(run_whole(&x.v, SA_ATTR_PATH_RECORD,
				   MAD_METHOD_GET_TABLE, B(PR_SGID), 0, &p,
				   sizeof(p), &whole), 0);
	ck_assert_uint_gt(whole.count, 8 * 128);
	rc = run_limited(&x.v, B(PR_SGID), &p, 0, &t, &w);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(t.count, whole.count);
	ck_assert_uint_eq(t.cap, t.count);		/* its exact size */
	ck_assert_mem_eq(t.buf, whole.buf, whole.count * 64);
	ck_assert_uint_gt(w.phase, 0);
	free(t.buf);
	/* One byte less than it needs: refused before a record is stored. */
	rc = run_limited(&x.v, B(PR_SGID), &p, whole.count * 64 - 1, &t, &w);
	ck_assert_int_eq(rc, -ENOBUFS);
	ck_assert_ptr_null(t.buf);
	ck_assert_uint_eq(t.wanted, whole.count * 64);
	/* ... and when it would fit were nothing else held: at once, no
	 * walk (the agent answers BUSY). */
	memset(&t, 0, sizeof(t));
	{
		uint8_t data[SA_DATA_SIZE] = { 0 };
		struct sa_query q = { .method = MAD_METHOD_GET_TABLE,
				      .attr_id = SA_ATTR_PATH_RECORD,
				      .comp_mask = B(PR_SGID), .tmpl = data,
				      .tmpl_len = SA_DATA_SIZE, .work = &w };

		memcpy(data, &p, sizeof(p));
		memset(&w, 0, sizeof(w));
		w.budget = SA_WORK_BUDGET_DEFAULT;
		w.slice_end = SA_SLICE_UNITS;
		t.rec_size = t.stride = 64;
		t.max_bytes = 4096;
		t.max_ever = whole.count * 64;
		ck_assert_int_eq(gen_path_record(&x.v, &q, &t), -ENOBUFS);
		ck_assert_uint_eq(w.used, 0);
		ck_assert_ptr_null(t.buf);
	}
	free(whole.buf);
	/* Both ends open, LMC 0: every pair (about 20,000), exact too. */
	fx_free(&x);
	fx_load(&x, "fat2-128.net", 0);
	memset(&p, 0, sizeof(p));
	ck_assert_int_eq(run_whole(&x.v, SA_ATTR_PATH_RECORD,
				   MAD_METHOD_GET_TABLE, 0, 0, &p, sizeof(p),
				   &whole), 0);
	ck_assert_uint_gt(whole.count, 128 * 128);
	rc = run_limited(&x.v, 0, &p, 0, &t, &w);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(t.cap, whole.count);
	ck_assert_mem_eq(t.buf, whole.buf, whole.count * 64);
	free(t.buf);
	free(whole.buf);
	/*
	 * PacketLifeTime below 1: only loopback paths, one per end port, of
	 * 19,600 pairs.  Allowed less than the 19,600 records it might give,
	 * the query is counted and then built at its size.
	 */
	p.pkt_life = 1 << 6 | 1;
	ck_assert_int_eq(run_whole(&x.v, SA_ATTR_PATH_RECORD,
				   MAD_METHOD_GET_TABLE,
				   B(PR_PKT_LIFE_SEL) | B(PR_PKT_LIFE), 0, &p,
				   sizeof(p), &whole), 0);
	ck_assert_uint_eq(whole.count, 140);
	rc = run_limited(&x.v, B(PR_PKT_LIFE_SEL) | B(PR_PKT_LIFE), &p,
			 65536, &t, &w);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(t.count, 140);
	ck_assert_uint_eq(t.cap, 140);
	ck_assert_uint_eq(w.phase, 3);		/* counted, then built */
	ck_assert_uint_le(w.used, SA_WORK_BUDGET_DEFAULT);
	ck_assert_mem_eq(t.buf, whole.buf, whole.count * 64);
	free(t.buf);
	free(whole.buf);
	p.pkt_life = 0;
	/* A small answer is built as it comes, within its limit. */
	p.slid = htobe16(x.f.nodes[by_desc(&x.f, "H0001 HCA-1")].ports[1].lid);
	p.dlid = htobe16(x.f.nodes[by_desc(&x.f, "H0002 HCA-1")].ports[1].lid);
	rc = run_limited(&x.v, B(PR_SLID) | B(PR_DLID), &p, 64, &t, &w);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(t.count, 1);
	ck_assert_uint_eq(w.phase, 0);
	free(t.buf);
	fx_free(&x);
}
END_TEST

/* Sliced and whole runs of one query give the same records. */
static void same_sliced(const struct sa_view *v, uint16_t attr, uint8_t method,
			uint64_t mask, uint64_t sm_key, const void *tmpl,
			size_t len, uint64_t slice)
{
	struct sa_table a, b;
	struct sa_work w;
	struct slices s;
	int ra, rb;

	ra = run_whole(v, attr, method, mask, sm_key, tmpl, len, &a);
	rb = run_sliced(v, attr, method, mask, sm_key, tmpl, len, 0, slice,
			&b, &w, &s);
	ck_assert_msg(ra == rb, "attr %#x: rc %d whole, %d sliced", attr, ra, rb);
	ck_assert_msg(a.count == b.count, "attr %#x mask %#llx: %zu whole,"
		      " %zu sliced", attr, (unsigned long long)mask, a.count,
		      b.count);
	ck_assert(a.count == 0 || !memcmp(a.buf, b.buf, a.count * a.rec_size));
	ck_assert_msg(slice > 1 || a.count < 2 || s.n > 1, "attr %#x: one slice",
		      attr);
	free(a.buf);
	free(b.buf);
}

START_TEST(test_slices_resume)
{
	static const uint16_t tables[] = {
		SA_ATTR_NODE_RECORD, SA_ATTR_PORT_INFO_RECORD,
		SA_ATTR_SWITCH_INFO_RECORD, SA_ATTR_LFT_RECORD,
		SA_ATTR_LINK_RECORD, SA_ATTR_GUID_INFO_RECORD,
		SA_ATTR_PKEY_TABLE_RECORD, SA_ATTR_SL2VL_RECORD,
		SA_ATTR_VL_ARB_RECORD, SA_ATTR_MFT_RECORD,
	};
	uint8_t zero[SA_DATA_SIZE] = { 0 };
	struct sa_path_record p;
	struct fx x;

	fx_load(&x, "fat2-small.net", 2);
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		for (uint64_t slice = 1; slice <= 64; slice *= 4)
			same_sliced(&x.v, tables[i], MAD_METHOD_GET_TABLE, 0, 1,
				    zero, 0, slice);
	/* PathRecord: one end given, both open, a Get, NumbPath */
	memset(&p, 0, sizeof(p));
	port_gid(&x.f, by_desc(&x.f, "H0001 HCA-1"), 1, p.sgid);
	for (uint64_t slice = 1; slice <= 256; slice *= 4) {
		same_sliced(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			    B(PR_SGID), 0, &p, sizeof(p), slice);
		same_sliced(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			    0, 0, &p, sizeof(p), slice * 16);
		p.num_path = 3;
		same_sliced(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			    B(PR_SGID) | B(PR_NUMB_PATH), 0, &p, sizeof(p), slice);
		p.num_path = 0;
		same_sliced(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET,
			    B(PR_SGID), 0, &p, sizeof(p), slice);
	}
	/* MultiPathRecord: 2 x 3 GIDs, every LID pair of each */
	{
		static const char *const hosts[] = { "H0001 HCA-1", "H0002 HCA-1",
			"H0003 HCA-1", "H0004 HCA-1", "H0005 HCA-1" };
		uint8_t m[SA_DATA_SIZE] = { 0 };
		struct sa_multipath_record *r = (void *)m;

		r->sgid_count = 2;
		r->dgid_count = 3;
		for (unsigned i = 0; i < 5; i++)
			port_gid(&x.f, by_desc(&x.f, hosts[i]), 1,
				 m + SA_MPR_FIXED_SIZE + 16 * i);
		for (uint64_t slice = 1; slice <= 256; slice *= 4)
			same_sliced(&x.v, SA_ATTR_MULTIPATH_RECORD,
				    MAD_METHOD_GETMULTI,
				    B(MPR_SGID_COUNT) | B(MPR_DGID_COUNT), 0,
				    m, SA_MPR_FIXED_SIZE + 5 * 16, slice);
	}
	fx_free(&x);
}
END_TEST

/*
 * Finding 9: the index is that of the model's generation.  A new model
 * in the same struct (and so, possibly, the same arrays) is a new index;
 * the same model asked again is not rebuilt.
 */
START_TEST(test_index_generation)
{
	struct fx x;
	struct sa_table t;
	struct sa_work w;
	struct slices s;
	uint8_t zero[SA_DATA_SIZE] = { 0 };
	unsigned long builds;
	uint64_t first_guid, first_port;
	int32_t a, b;

	fx_load(&x, "fat2-small.net", 0);
	ck_assert_int_eq(run_sliced(&x.v, SA_ATTR_NODE_RECORD,
				    MAD_METHOD_GET_TABLE, 0, 0, zero, 0, 0, 0,
				    &t, &w, &s), 0);
	builds = midx_builds;
	first_guid = be64toh(((struct sa_node_record *)t.buf)->node_info.node_guid);
	first_port = be64toh(((struct sa_node_record *)t.buf)->node_info.port_guid);
	free(t.buf);
	ck_assert_int_eq(run_sliced(&x.v, SA_ATTR_NODE_RECORD,
				    MAD_METHOD_GET_TABLE, 0, 0, zero, 0, 0, 0,
				    &t, &w, &s), 0);
	free(t.buf);
	ck_assert_uint_eq(midx_builds, builds);	/* same model */
	/*
	 * Another model in the very same arrays: the first node in OpenSM's
	 * order changes GUID with another node, as if a sweep had found the
	 * subnet so and the allocator had given the same addresses back.
	 * The index compares addresses and sizes no more: the generation
	 * says the model is new, and the first record is node b's (an index
	 * kept by addresses would still list node a first).
	 */
	a = fabric_find(&x.f, first_guid);
	b = (a + 1) % (int32_t)x.f.n_nodes;
	{
		uint64_t ga = x.f.nodes[a].guid;

		x.f.nodes[a].guid = x.f.nodes[b].guid;
		x.f.nodes[b].guid = ga;
	}
	x.f.gen = 0x1000000 + x.f.gen;		/* published anew */
	ck_assert_int_eq(run_sliced(&x.v, SA_ATTR_NODE_RECORD,
				    MAD_METHOD_GET_TABLE, 0, 0, zero, 0, 0, 0,
				    &t, &w, &s), 0);
	ck_assert_uint_eq(midx_builds, builds + 1);
	ck_assert_uint_eq(be64toh(((struct sa_node_record *)t.buf)->node_info.node_guid),
			  first_guid);
	ck_assert_uint_ne(be64toh(((struct sa_node_record *)t.buf)->node_info.port_guid),
			  first_port);
	free(t.buf);
	fx_free(&x);
	/* every fabric_init() is a new generation */
	{
		struct fabric f1, f2;

		fabric_init(&f1);
		fabric_init(&f2);
		ck_assert_uint_ne(f1.gen, f2.gen);
		fabric_free(&f1);
		fabric_init(&f1);
		ck_assert_uint_ne(f1.gen, f2.gen);
		fabric_free(&f1);
		fabric_free(&f2);
	}
}
END_TEST

/* The checks the agent makes before any work. */
START_TEST(test_request_parse)
{
	struct sa_mad m;
	struct sa_query q;
	const struct sa_attr *a;

	memset(&m, 0, sizeof(m));
	m.hdr.base_version = 1;
	m.hdr.mgmt_class = MAD_CLASS_SA;
	m.hdr.class_version = 2;
	m.hdr.method = MAD_METHOD_GET_TABLE;
	m.hdr.attr_id = htobe16(SA_ATTR_PATH_RECORD);
	m.comp_mask = htobe64(B(PR_PKEY) | B(40));	/* bit 40: reserved */
	ck_assert_int_eq(sa_request_parse(&m, sizeof(m), 7, &q, &a), 0);
	ck_assert_ptr_eq(a, sa_attr_find(SA_ATTR_PATH_RECORD));
	ck_assert_uint_eq(q.comp_mask, B(PR_PKEY));
	ck_assert_uint_eq(q.requester_lid, 7);
	ck_assert_ptr_null(q.work);
	ck_assert_int_eq(sa_request_parse(&m, sizeof(m) - 1, 7, &q, &a), -1);
	m.hdr.method = 0x7f;
	ck_assert_int_eq(sa_request_parse(&m, sizeof(m), 7, &q, &a),
			 MAD_STATUS_METHOD_UNSUPP);
	m.hdr.method = MAD_METHOD_GETMULTI;		/* not PathRecord's */
	ck_assert_int_eq(sa_request_parse(&m, sizeof(m), 7, &q, &a),
			 MAD_STATUS_ATTR_UNSUPP);
	m.hdr.method = MAD_METHOD_GET;
	m.hdr.attr_id = htobe16(0x7777);
	ck_assert_int_eq(sa_request_parse(&m, sizeof(m), 7, &q, &a),
			 MAD_STATUS_ATTR_UNSUPP);
	/* a GetMulti of two segments */
	m.hdr.method = MAD_METHOD_GETMULTI;
	m.hdr.attr_id = htobe16(SA_ATTR_MULTIPATH_RECORD);
	m.rmpp.version = 1;
	m.rmpp.type = RMPP_TYPE_DATA;
	m.rmpp.resptime_flags = RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST;
	m.rmpp.data1 = htobe32(1);
	ck_assert_int_eq(sa_request_parse(&m, sizeof(m), 7, &q, &a),
			 SA_STATUS_REQ_INVALID);
	m.rmpp.resptime_flags |= RMPP_FLAG_LAST;
	m.rmpp.data2 = htobe32(SA_HDR_SIZE + SA_MPR_FIXED_SIZE + 32);
	ck_assert_int_eq(sa_request_parse(&m, sizeof(m), 7, &q, &a), 0);
	ck_assert_uint_eq(q.tmpl_len, SA_MPR_FIXED_SIZE + 32);
	ck_assert(sa_attr_stateful(SA_ATTR_SERVICE_RECORD));
	ck_assert(!sa_attr_stateful(SA_ATTR_PATH_RECORD));
}
END_TEST

static Suite *sa_budget_suite(void)
{
	Suite *s = suite_create("sa_budget");
	TCase *tc = tcase_create("budget");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_hostile_pkey_lmc7);
	tcase_add_test(tc, test_open_paths_budget);
	tcase_add_test(tc, test_slices_resume);
	tcase_add_test(tc, test_count_first);
	tcase_add_test(tc, test_index_generation);
	tcase_add_test(tc, test_request_parse);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sa_budget_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
