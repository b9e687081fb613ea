/*
 * check_sa_multipath.c - MultiPathRecord (SubnAdmGetMulti, 15.2.5.20) and
 * PathRecord with LMC, on the bundled fat tree with LIDs from
 * lid_assign() and LFTs from minhop.
 *
 * Every MultiPathRecord answer is checked against PathRecord GetTable
 * answers for the same port pairs (the paths must be records PathRecord
 * gives, in its order), NumbPath as a bound on the whole answer, the GID
 * counts against the payload, and the error statuses.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa_wire.h"
#include "routing/routing.h"
#include "model/fabric.h"
#include "qos/qos.h"
#include "sm/lid.h"
#include "sm/sa/sa.h"
#include "sm/topo_file.h"
#include "tests/unit/topo_fixture.h"

#define B(n)	(1ull << (n))

/* PathRecord and MultiPathRecord component numbers (tables 204, 213) */
enum { PR_DGID = 2, PR_SGID = 3, PR_SLID = 5, PR_REVERSIBLE = 11, PR_NUMB_PATH = 12,
       PR_PKEY = 13, PR_SL = 15, PR_MTU_SEL = 16, PR_MTU = 17 };
enum { MPR_REVERSIBLE = 5, MPR_NUMB_PATH = 6, MPR_PKEY = 7, MPR_QOS_CLASS = 8,
       MPR_SL = 9, MPR_SID_MSB = 16, MPR_SID_LSB = 21,
       MPR_MTU_SEL = 10, MPR_MTU = 11, MPR_INDEP_SEL = 17,
       MPR_SGID_COUNT = 19, MPR_DGID_COUNT = 20 };
#define MPR_COUNTS	(B(MPR_SGID_COUNT) | B(MPR_DGID_COUNT))

static void host_gid(const struct fx *x, const char *host, uint8_t gid[16])
{
	char desc[64];
	int32_t id;
	uint64_t p = htobe64(SUBNET_PREFIX), g;

	snprintf(desc, sizeof(desc), "%s HCA-1", host);
	id = by_desc(&x->f, desc);
	g = htobe64(x->f.nodes[id].ports[1].guid);
	memcpy(gid, &p, 8);
	memcpy(gid + 8, &g, 8);
}

/* Run one query with `len` bytes of template; records in t. */
static int run(const struct sa_view *v, uint16_t attr, uint8_t method,
	       uint64_t mask, const void *tmpl, size_t len, struct sa_table *t)
{
	const struct sa_attr *a = sa_attr_find(attr);
	uint8_t data[SA_DATA_SIZE] = { 0 };
	struct sa_query q;

	ck_assert_ptr_nonnull(a);
	ck_assert(sa_mask_valid(a->nfields, mask));
	memcpy(data, tmpl, len < sizeof(data) ? len : sizeof(data));
	q = (struct sa_query){ .method = method, .attr_id = attr,
			       .comp_mask = mask, .tmpl = data, .tmpl_len = len,
			       .requester_lid = 1 };
	memset(t, 0, sizeof(*t));
	t->rec_size = a->rec_size;
	return a->gen(v, &q, t);
}

/* A GetMulti request: fixed part plus GIDs; returns its payload length. */
struct mpr_req {
	struct sa_multipath_record r;
	uint8_t gids[SA_MPR_GIDS_ONE_MAD][16];
};

static size_t mpr_init(const struct fx *x, struct mpr_req *m,
		       const char *const *src, unsigned ns,
		       const char *const *dst, unsigned nd)
{
	memset(m, 0, sizeof(*m));
	for (unsigned i = 0; i < ns; i++)
		host_gid(x, src[i], m->gids[i]);
	for (unsigned i = 0; i < nd; i++)
		host_gid(x, dst[i], m->gids[ns + i]);
	m->r.sgid_count = (uint8_t)ns;
	m->r.dgid_count = (uint8_t)nd;
	return SA_MPR_FIXED_SIZE + (ns + nd) * 16;
}

/* The PathRecord GetTable between two GIDs (more: extra components). */
static size_t pr_pair(const struct fx *x, const uint8_t sgid[16],
		      const uint8_t dgid[16], const struct sa_path_record *more,
		      uint64_t more_mask, struct sa_table *t)
{
	struct sa_path_record p = *more;

	memcpy(p.sgid, sgid, 16);
	memcpy(p.dgid, dgid, 16);
	ck_assert_int_eq(run(&x->v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			     B(PR_SGID) | B(PR_DGID) | more_mask, &p, sizeof(p),
			     t), 0);
	return t->count;
}

#define PREC(t, i)	((const struct sa_path_record *)((t)->buf + (i) * 64))

/* PathRecord with LMC 2: NumbPath 4 gives 4 distinct SLID/DLID pairs. */
START_TEST(test_path_lmc_numb_path)
{
	struct fx x;
	struct sa_path_record p;
	struct sa_table t;
	uint8_t s[16], d[16];

	fx_load(&x, "fat2-small.net", 2);
	host_gid(&x, "H0001", s);
	host_gid(&x, "H0009", d);
	memset(&p, 0, sizeof(p));
	p.num_path = 4;
	ck_assert_uint_eq(pr_pair(&x, s, d, &p, B(PR_NUMB_PATH), &t), 4);
	for (size_t i = 0; i < 4; i++)
		for (size_t j = 0; j < i; j++) {
			ck_assert_uint_ne(PREC(&t, i)->slid, PREC(&t, j)->slid);
			ck_assert_uint_ne(PREC(&t, i)->dlid, PREC(&t, j)->dlid);
		}
	free(t.buf);
	fx_free(&x);
}
END_TEST

/* One SGID, one DGID, LMC 2: the PathRecord answer, NumbPath bounded. */
START_TEST(test_multipath_one_pair)
{
	static const char *const src[] = { "H0002" }, *const dst[] = { "H0011" };
	struct fx x;
	struct mpr_req m;
	struct sa_path_record none;
	struct sa_table mt, pt;
	size_t len;

	fx_load(&x, "fat2-small.net", 2);
	len = mpr_init(&x, &m, src, 1, dst, 1);
	memset(&none, 0, sizeof(none));
	/* no NumbPath: every LID pair, as PathRecord gives them */
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS, &m, len, &mt), 0);
	ck_assert_uint_eq(pr_pair(&x, m.gids[0], m.gids[1], &none, 0, &pt), 16);
	ck_assert_uint_eq(mt.count, 16);
	ck_assert_mem_eq(mt.buf, pt.buf, 16 * 64);
	free(mt.buf);
	/* NumbPath 1..16: the first N of them, distinct LID pairs first */
	for (unsigned n = 1; n <= 17; n++) {
		m.r.num_path = (uint8_t)n;
		ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD,
				     MAD_METHOD_GETMULTI,
				     MPR_COUNTS | B(MPR_NUMB_PATH), &m, len, &mt), 0);
		ck_assert_uint_eq(mt.count, n < 16 ? n : 16);
		ck_assert_mem_eq(mt.buf, pt.buf, mt.count * 64);
		for (size_t i = 0; i < mt.count && i < 4; i++)
			for (size_t j = 0; j < i; j++) {
				ck_assert_uint_ne(PREC(&mt, i)->slid, PREC(&mt, j)->slid);
				ck_assert_uint_ne(PREC(&mt, i)->dlid, PREC(&mt, j)->dlid);
			}
		free(mt.buf);
	}
	free(pt.buf);
	/* NumbPath 0: nothing */
	m.r.num_path = 0;
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS | B(MPR_NUMB_PATH), &m, len, &mt), 0);
	ck_assert_uint_eq(mt.count, 0);
	free(mt.buf);
	/* IndependenceSelector is accepted: the same answer */
	m.r.num_path = 2;
	m.r.independence = 1 << 6;
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS | B(MPR_NUMB_PATH) | B(MPR_INDEP_SEL),
			     &m, len, &mt), 0);
	ck_assert_uint_eq(mt.count, 2);
	free(mt.buf);
	fx_free(&x);
}
END_TEST

/* Several GIDs: sources outermost, NumbPath bounds the whole answer. */
START_TEST(test_multipath_many)
{
	static const char *const src[] = { "H0001", "H0006" },
		*const dst[] = { "H0003", "H0012", "H0016" };
	struct fx x;
	struct mpr_req m;
	struct sa_path_record none;
	struct sa_table mt, pt;
	size_t len, at = 0;

	fx_load(&x, "fat2-small.net", 1);
	len = mpr_init(&x, &m, src, 2, dst, 3);
	memset(&none, 0, sizeof(none));
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS, &m, len, &mt), 0);
	ck_assert_uint_eq(mt.count, 2 * 3 * 4);
	for (unsigned s = 0; s < 2; s++)
		for (unsigned d = 0; d < 3; d++) {
			size_t n = pr_pair(&x, m.gids[s], m.gids[2 + d], &none, 0, &pt);

			ck_assert_uint_eq(n, 4);
			ck_assert_mem_eq(mt.buf + at * 64, pt.buf, n * 64);
			at += n;
			free(pt.buf);
		}
	free(mt.buf);
	/* NumbPath 5 in all: 4 of the first pair, 1 of the second */
	m.r.num_path = 5;
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS | B(MPR_NUMB_PATH), &m, len, &mt), 0);
	ck_assert_uint_eq(mt.count, 5);
	ck_assert_mem_eq(PREC(&mt, 4)->dgid, m.gids[3], 16);
	ck_assert_mem_eq(PREC(&mt, 4)->sgid, m.gids[0], 16);
	free(mt.buf);
	fx_free(&x);
}
END_TEST

/* Selectors, SL, P_Key and Reversible act as for PathRecord. */
START_TEST(test_multipath_selectors)
{
	static const char *const src[] = { "H0004" }, *const dst[] = { "H0013" };
	struct fx x;
	struct mpr_req m;
	struct sa_path_record p;
	struct sa_table mt, pt;
	size_t len;

	fx_load(&x, "fat2-small.net", 1);
	len = mpr_init(&x, &m, src, 1, dst, 1);
	m.r.qos_class_sl = htobe16(5);
	m.r.mtu = 1 << 6 | 4;			/* less than 2048: 1024 */
	m.r.num_path = 0x80 | 3;		/* reversible ones */
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS | B(MPR_SL) | B(MPR_MTU_SEL) | B(MPR_MTU) |
			     B(MPR_NUMB_PATH) | B(MPR_REVERSIBLE), &m, len, &mt), 0);
	memset(&p, 0, sizeof(p));
	p.qos_class_sl = htobe16(5);
	p.mtu = 1 << 6 | 4;
	p.num_path = 0x80 | 3;
	ck_assert_uint_eq(pr_pair(&x, m.gids[0], m.gids[1], &p,
				  B(PR_SL) | B(PR_MTU_SEL) | B(PR_MTU) |
				  B(PR_NUMB_PATH) | B(PR_REVERSIBLE), &pt), 3);
	ck_assert_uint_eq(mt.count, 3);
	ck_assert_mem_eq(mt.buf, pt.buf, 3 * 64);
	ck_assert_uint_eq(PREC(&mt, 0)->mtu & 0x3f, 3);
	ck_assert_uint_eq(be16toh(PREC(&mt, 0)->qos_class_sl) & 0xf, 5);
	free(mt.buf);
	free(pt.buf);
	/* a P_Key of another partition: no paths */
	m.r.pkey = htobe16(0x8123);
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS | B(MPR_PKEY), &m, len, &mt), 0);
	ck_assert_uint_eq(mt.count, 0);
	free(mt.buf);
	/* an MTU that is not one */
	m.r.pkey = 0;
	m.r.mtu = 2 << 6 | 9;
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS | B(MPR_MTU_SEL) | B(MPR_MTU), &m, len,
			     &mt), -SA_STATUS_REQ_INVALID);
	free(mt.buf);
	fx_free(&x);
}
END_TEST

/* Untrusted counts and GIDs. */
START_TEST(test_multipath_bad)
{
	static const char *const src[] = { "H0001" }, *const dst[] = { "H0002" };
	struct fx x;
	struct mpr_req m;
	struct sa_table t;
	size_t len;

#define BAD(mask, l, want) do { \
		ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, \
				     MAD_METHOD_GETMULTI, (mask), &m, (l), &t), \
				 (want)); \
		free(t.buf); \
	} while (0)

	fx_load(&x, "fat2-small.net", 0);
	len = mpr_init(&x, &m, src, 1, dst, 1);
	BAD(MPR_COUNTS, len, 0);
	/* counts missing */
	BAD(B(MPR_SGID_COUNT), len, -SA_STATUS_INSUF_COMPONENTS);
	BAD(B(MPR_DGID_COUNT), len, -SA_STATUS_INSUF_COMPONENTS);
	/* a count of 0 */
	m.r.sgid_count = 0;
	BAD(MPR_COUNTS, len, -SA_STATUS_REQ_INVALID);
	m.r.sgid_count = 1;
	/* GIDs beyond the payload: counts too large, payload too short */
	m.r.dgid_count = 2;
	BAD(MPR_COUNTS, len, -SA_STATUS_REQ_INVALID);
	m.r.dgid_count = 255;
	m.r.sgid_count = 255;
	BAD(MPR_COUNTS, SA_DATA_SIZE, -SA_STATUS_REQ_INVALID);
	m.r.sgid_count = 1;
	m.r.dgid_count = 1;
	BAD(MPR_COUNTS, len - 1, -SA_STATUS_REQ_INVALID);
	BAD(MPR_COUNTS, 10, -SA_STATUS_REQ_INVALID);
	BAD(MPR_COUNTS, 0, -SA_STATUS_REQ_INVALID);
	/* a GID that is not here, multicast, another subnet */
	m.gids[1][15] ^= 0x5a;
	BAD(MPR_COUNTS, len, -SA_STATUS_INVALID_GID);
	m.gids[1][15] ^= 0x5a;
	m.gids[0][0] = 0xff;
	BAD(MPR_COUNTS, len, -SA_STATUS_INVALID_GID);
	m.gids[0][0] = 0x20;
	BAD(MPR_COUNTS, len, -SA_STATUS_INVALID_GID);
	fx_free(&x);
#undef BAD
}
END_TEST

/* ---- virtual layers: the SL of a path is its layer ------------------- */

/* Give the routes 3 layers: switch i reaches `lid` on layer (5i+lid) % 3. */
/* MultiPathRecord under a QoS policy: ServiceID (its two parts), P_Key
 * and QoSClass select the level as for PathRecord. */
START_TEST(test_multipath_qos)
{
	static const char *const src[] = { "H0002" }, *const dst[] = { "H0011" };
	static const char policy[] =
		"qos-levels\n"
		" qos-level\n  name: DEFAULT\n  sl: 1\n end-qos-level\n"
		" qos-level\n  name: S\n  sl: 9\n  mtu-limit: 1\n end-qos-level\n"
		" qos-level\n  name: C\n  sl: 3\n end-qos-level\n"
		"end-qos-levels\n"
		"qos-match-rules\n"
		" qos-match-rule\n  service-id: 0x0102030405060708\n"
		"  qos-level-name: S\n end-qos-match-rule\n"
		" qos-match-rule\n  qos-class: 0x123\n  qos-level-name: C\n"
		" end-qos-match-rule\n"
		"end-qos-match-rules\n";
	static const uint8_t lsb[7] = { 2, 3, 4, 5, 6, 7, 8 };
	struct qos_policy pol;
	struct qos_error e;
	struct fx x;
	struct mpr_req m;
	struct sa_table mt;
	size_t len;

	fx_load(&x, "fat2-small.net", 0);
	ck_assert_int_eq(qos_parse(policy, strlen(policy), &pol, &e), 0);
	x.v.qos = &pol;
	len = mpr_init(&x, &m, src, 1, dst, 1);
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS, &m, len, &mt), 0);
	ck_assert_uint_eq(mt.count, 1);
	ck_assert_uint_eq(be16toh(PREC(&mt, 0)->qos_class_sl) & 0xf, 1);
	free(mt.buf);
	m.r.service_id_msb = 1;
	memcpy(m.r.service_id_lsb, lsb, 7);
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS | B(MPR_SID_MSB) | B(MPR_SID_LSB), &m,
			     len, &mt), 0);
	ck_assert_uint_eq(mt.count, 1);
	ck_assert_uint_eq(be16toh(PREC(&mt, 0)->qos_class_sl) & 0xf, 9);
	ck_assert_uint_eq(PREC(&mt, 0)->mtu & 0x3f, 1);
	free(mt.buf);
	/* one part of the ServiceID alone selects nothing */
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS | B(MPR_SID_LSB), &m, len, &mt), 0);
	ck_assert_uint_eq(be16toh(PREC(&mt, 0)->qos_class_sl) & 0xf, 1);
	free(mt.buf);
	m.r.qos_class_sl = htobe16(0x123 << 4);
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS | B(MPR_QOS_CLASS), &m, len, &mt), 0);
	ck_assert_uint_eq(be16toh(PREC(&mt, 0)->qos_class_sl) & 0xf, 3);
	free(mt.buf);
	/* a requested SL other than the level's: no record */
	m.r.qos_class_sl = htobe16(0x123 << 4 | 4);
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS | B(MPR_QOS_CLASS) | B(MPR_SL), &m, len,
			     &mt), 0);
	ck_assert_uint_eq(mt.count, 0);
	free(mt.buf);
	qos_policy_free(&pol);
	fx_free(&x);
}
END_TEST

static void fx_layers(struct fx *x)
{
	x->r.n_layers = 3;
	x->r.sl = calloc(x->r.n_nodes, sizeof(*x->r.sl));
	ck_assert_ptr_nonnull(x->r.sl);
	for (size_t i = 0; i < x->r.n_nodes; i++) {
		if (!x->r.lft[i].port)
			continue;
		x->r.sl[i] = malloc((size_t)x->r.lft[i].top + 1);
		ck_assert_ptr_nonnull(x->r.sl[i]);
		for (unsigned lid = 0; lid <= x->r.lft[i].top; lid++)
			x->r.sl[i][lid] = (uint8_t)((5 * i + lid) % 3);
	}
}

/* The layer the fixture gave the path from the end port with `slid` to
 * `dlid`: that of the switch the port hangs off (or the switch itself). */
static unsigned want_sl(const struct fx *x, uint16_t slid, uint16_t dlid)
{
	for (size_t i = 0; i < x->f.n_nodes; i++) {
		const struct fab_node *n = &x->f.nodes[i];

		for (unsigned pn = 0; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];
			int32_t sw = (int32_t)i;

			if (!p->valid || !p->lid || slid < p->lid ||
			    slid > p->lid + (1u << p->lmc) - 1)
				continue;
			if (n->type != NODE_TYPE_SWITCH)
				sw = p->peer_node;
			ck_assert_int_ne(sw, FAB_NONE);
			return (5u * (unsigned)sw + dlid) % 3;
		}
	}
	ck_abort_msg("no port with LID %u", slid);
	return 0;
}

START_TEST(test_path_layers)
{
	static const char *const src[] = { "H0001", "H0006", "H0011" },
		*const dst[] = { "H0003", "H0012", "H0016" };
	struct fx x;
	struct mpr_req m;
	struct sa_path_record p, none;
	struct sa_table mt, pt;
	size_t len, at = 0;
	unsigned seen[3] = { 0 };
	int32_t sw = FAB_NONE;

	fx_load(&x, "fat2-small.net", 1);
	fx_layers(&x);
	memset(&none, 0, sizeof(none));
	/* MultiPathRecord: every record carries its path's layer, and is the
	 * PathRecord of the same pair */
	len = mpr_init(&x, &m, src, 3, dst, 3);
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS, &m, len, &mt), 0);
	ck_assert_uint_eq(mt.count, 3 * 3 * 4);
	for (size_t i = 0; i < mt.count; i++) {
		const struct sa_path_record *r = PREC(&mt, i);
		unsigned sl = be16toh(r->qos_class_sl) & 0xf;

		ck_assert_uint_eq(sl, want_sl(&x, be16toh(r->slid),
					      be16toh(r->dlid)));
		seen[sl]++;
	}
	for (unsigned s = 0; s < 3; s++)
		for (unsigned d = 0; d < 3; d++) {
			size_t n = pr_pair(&x, m.gids[s], m.gids[3 + d], &none, 0, &pt);

			ck_assert_uint_eq(n, 4);
			ck_assert_mem_eq(mt.buf + at * 64, pt.buf, n * 64);
			at += n;
			free(pt.buf);
		}
	free(mt.buf);
	/* the fixture's layers are all in use */
	ck_assert_uint_gt(seen[0], 0);
	ck_assert_uint_gt(seen[1], 0);
	ck_assert_uint_gt(seen[2], 0);

	/* Asking for an SL: only the LID pairs whose layer it is; the other
	 * SLs' pairs make up the rest, and an SL no layer has gets none. */
	for (unsigned s = 0; s < 3; s++)
		for (unsigned d = 0; d < 3; d++) {
			size_t total = 0;

			for (unsigned sl = 0; sl < 4; sl++) {
				memset(&p, 0, sizeof(p));
				p.qos_class_sl = htobe16((uint16_t)sl);
				size_t n = pr_pair(&x, m.gids[s], m.gids[3 + d],
						   &p, B(PR_SL), &pt);
				for (size_t i = 0; i < n; i++)
					ck_assert_uint_eq(be16toh(PREC(&pt, i)->qos_class_sl)
							  & 0xf, sl);
				if (sl == 3)
					ck_assert_uint_eq(n, 0);
				total += n;
				free(pt.buf);
			}
			ck_assert_uint_eq(total, 4);
		}
	/* MultiPathRecord with an SL: the same filter */
	m.r.qos_class_sl = htobe16(1);
	ck_assert_int_eq(run(&x.v, SA_ATTR_MULTIPATH_RECORD, MAD_METHOD_GETMULTI,
			     MPR_COUNTS | B(MPR_SL), &m, len, &mt), 0);
	ck_assert_uint_eq(mt.count, seen[1]);
	free(mt.buf);

	/* A switch as the source: its own layer to the destination */
	for (size_t i = 0; i < x.f.n_nodes && sw == FAB_NONE; i++)
		if (x.f.nodes[i].type == NODE_TYPE_SWITCH && x.f.nodes[i].ports[0].lid)
			sw = (int32_t)i;
	ck_assert_int_ne(sw, FAB_NONE);
	memset(&p, 0, sizeof(p));
	p.slid = htobe16(x.f.nodes[sw].ports[0].lid);
	memcpy(p.dgid, m.gids[3], 16);
	ck_assert_int_eq(run(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			     B(PR_SLID) | B(PR_DGID), &p, sizeof(p), &pt), 0);
	ck_assert_uint_eq(pt.count, 2);
	for (size_t i = 0; i < pt.count; i++)
		ck_assert_uint_eq(be16toh(PREC(&pt, i)->qos_class_sl) & 0xf,
				  (5u * (unsigned)sw + be16toh(PREC(&pt, i)->dlid)) % 3);
	free(pt.buf);

	/* No layers (n_layers 0): SL 0, or the one asked for, as before */
	x.r.n_layers = 0;
	ck_assert_uint_eq(pr_pair(&x, m.gids[0], m.gids[3], &none, 0, &pt), 4);
	for (size_t i = 0; i < 4; i++)
		ck_assert_uint_eq(be16toh(PREC(&pt, i)->qos_class_sl), 0);
	free(pt.buf);
	p = none;
	p.qos_class_sl = htobe16(7);
	ck_assert_uint_eq(pr_pair(&x, m.gids[0], m.gids[3], &p, B(PR_SL), &pt), 4);
	ck_assert_uint_eq(be16toh(PREC(&pt, 0)->qos_class_sl) & 0xf, 7);
	free(pt.buf);
	fx_free(&x);
}
END_TEST

static Suite *sa_multipath_suite(void)
{
	Suite *s = suite_create("sa_multipath");
	TCase *tc = tcase_create("multipath");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_path_lmc_numb_path);
	tcase_add_test(tc, test_multipath_one_pair);
	tcase_add_test(tc, test_multipath_many);
	tcase_add_test(tc, test_multipath_selectors);
	tcase_add_test(tc, test_multipath_bad);
	tcase_add_test(tc, test_multipath_qos);
	tcase_add_test(tc, test_path_layers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sa_multipath_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
