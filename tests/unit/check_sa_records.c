/*
 * check_sa_records.c - the SA record generators (sm/sa/records.c) on the
 * bundled topologies: LIDs from lid_assign(), LFTs from minhop, a view as
 * the SA agent builds it.
 *
 * Counts are checked against the model (one NodeRecord per end port, two
 * LinkRecords per link, ...), contents field by field, ComponentMask
 * filtering per record type, and PathRecords against an independent walk
 * of the LFTs for every ordered pair of hosts of a 1152-host fabric whose
 * links were given mixed MTUs and rates.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa_wire.h"
#include "routing/routing.h"
#include "model/fabric.h"
#include "qos/qos.h"
#include "sm/lid.h"
#include "sm/sa/gen.h"
#include "sm/sa/sa.h"
#include "sm/sa/service.h"
#include "sm/topo_file.h"

#define B(n)	(1ull << (n))

/* Component numbers (IBA 15.2.5, the order of OpenSM's IB_*_COMPMASK_*) */
enum { NR_LID = 0, NR_NODE_GUID = 7, NR_PORT_GUID = 8, NR_PORT_NUM = 12,
       NR_NODE_DESC = 14 };
enum { PIR_LID = 0, PIR_PORT_NUM = 1, PIR_OPTIONS = 2, PIR_CAP_MASK = 7,
       PIR_PORT_STATE = 15, PIR_LMC = 20, PIR_SPEED_ACTIVE = 21,
       PIR_NEIGHBOR_MTU = 23, PIR_HOQ_LIFE = 33 };
enum { LR_FROM_LID = 0, LR_FROM_PORT = 1, LR_TO_PORT = 2, LR_TO_LID = 3 };
enum { SWIR_LID = 0, SWIR_LFT_TOP = 5 };
enum { LFTR_LID = 0, LFTR_BLOCK = 1 };
enum { SMIR_LID = 0, SMIR_GUID = 2, SMIR_STATE = 6 };
enum { GIR_LID = 0, GIR_BLOCK = 1, GIR_GUID0 = 4 };
enum { PR_SID_MSB = 0, PR_SID_LSB = 1, PR_DGID = 2, PR_SGID = 3, PR_DLID = 4,
       PR_SLID = 5, PR_RAW = 6, PR_FLOW = 8, PR_HOP = 9, PR_TCLASS = 10,
       PR_REVERSIBLE = 11, PR_NUMB_PATH = 12, PR_PKEY = 13, PR_SL = 15,
       PR_MTU_SEL = 16, PR_MTU = 17, PR_RATE_SEL = 18, PR_RATE = 19,
       PR_PL_SEL = 20, PR_PL = 21 };

#define SUBNET_PREFIX	0xfe80000000000000ull

/* ---- fixture: a topology with LIDs, routes and a view ---------------- */

struct fx {
	struct fabric f;
	struct routing_result r;
	struct sa_view v;
};

static void fx_view(struct fx *x)
{
	const struct fab_port *lp;

	memset(&x->v, 0, sizeof(x->v));
	x->v.f = &x->f;
	x->v.routes = &x->r;
	x->v.sm_port_guid = x->f.local_port_guid;
	lp = &x->f.nodes[x->f.local_node].ports[x->f.local_port];
	x->v.sm_lid = lp->lid;
	x->v.sm_priority = 5;
	x->v.sm_state = 3;
	x->v.act_count = 602;
	x->v.subnet_prefix = SUBNET_PREFIX;
	x->v.subnet_timeout = 18;
	x->v.packet_life_time = 18;
}

static void fx_route(struct fx *x)
{
	char err[256];

	routing_result_free(&x->r);
	memset(&x->r, 0, sizeof(x->r));
	ck_assert_msg(routing_run("minhop", &x->f, &x->r, err, sizeof(err)) == 0,
		      "minhop: %s", err);
}

static void fx_load(struct fx *x, const char *name, unsigned lmc)
{
	char path[512], err[256];
	struct lid_policy pol = { .lmc = (uint8_t)lmc };
	int rc;

	memset(x, 0, sizeof(*x));
	fabric_init(&x->f);
	snprintf(path, sizeof(path), "%s/%s", TOPO_DIR, name);
	rc = topo_load(&x->f, path, err, sizeof(err));
	ck_assert_msg(rc == 0, "%s: %s", path, err);
	ck_assert_int_eq(lid_assign(&x->f, NULL, &pol, NULL), 0);
	fx_route(x);
	fx_view(x);
}

static void fx_free(struct fx *x)
{
	routing_result_free(&x->r);
	fabric_free(&x->f);
}

/* Run one query; the records are in t (free t->buf). */
static int query(const struct sa_view *v, uint16_t attr, uint8_t method,
		 uint64_t mask, uint32_t amod, const void *tmpl, size_t len,
		 struct sa_table *t)
{
	const struct sa_attr *a = sa_attr_find(attr);
	uint8_t data[SA_DATA_SIZE] = { 0 };
	struct sa_query q;

	ck_assert_ptr_nonnull(a);
	ck_assert_uint_le(len, sizeof(data));
	ck_assert_msg(sa_mask_valid(a->nfields, mask), "%s: mask %#llx",
		      a->name, (unsigned long long)mask);
	if (tmpl)
		memcpy(data, tmpl, len);
	q = (struct sa_query){ .method = method, .attr_id = attr,
			       .attr_mod = amod, .comp_mask = mask, .tmpl = data,
			       .tmpl_len = sizeof(data), .requester_lid = 1 };
	memset(t, 0, sizeof(*t));
	t->rec_size = a->rec_size;
	return a->gen(v, &q, t);
}

/* GetTable that must succeed; returns the record count. */
static size_t table(const struct sa_view *v, uint16_t attr, uint64_t mask,
		    const void *tmpl, size_t len, struct sa_table *t)
{
	int rc = query(v, attr, MAD_METHOD_GET_TABLE, mask, 0, tmpl, len, t);

	ck_assert_msg(rc == 0, "attr %#x mask %#llx: rc %d", attr,
		      (unsigned long long)mask, rc);
	return t->count;
}

static size_t count(const struct sa_view *v, uint16_t attr, uint64_t mask,
		    const void *tmpl, size_t len)
{
	struct sa_table t;
	size_t n = table(v, attr, mask, tmpl, len, &t);

	free(t.buf);
	return n;
}

#define REC(t, type, i)	((const type *)((t)->buf + (i) * (t)->rec_size))

static int32_t by_desc(const struct fabric *f, const char *desc)
{
	for (size_t i = 0; i < f->n_nodes; i++)
		if (!strcmp(f->nodes[i].desc, desc))
			return (int32_t)i;
	ck_abort_msg("no node \"%s\"", desc);
	return FAB_NONE;
}

static bool endport(const struct fab_node *n, unsigned pn)
{
	return n->ports[pn].valid &&
	       (n->type == NODE_TYPE_SWITCH ? pn == 0 : pn != 0);
}

static size_t n_endports(const struct fabric *f)
{
	size_t c = 0;

	for (size_t i = 0; i < f->n_nodes; i++)
		for (unsigned pn = 0; pn <= f->nodes[i].num_ports; pn++)
			c += endport(&f->nodes[i], pn);
	return c;
}

static uint16_t lid_of(const struct fabric *f, int32_t id, unsigned pn)
{
	return f->nodes[id].ports[pn].lid;
}

/* ---- record tables ---------------------------------------------------- */

START_TEST(test_tables)
{
	static const uint16_t ids[] = {
		SA_ATTR_CLASS_PORT_INFO, SA_ATTR_NODE_RECORD,
		SA_ATTR_PORT_INFO_RECORD, SA_ATTR_SWITCH_INFO_RECORD,
		SA_ATTR_LFT_RECORD, SA_ATTR_SM_INFO_RECORD, SA_ATTR_LINK_RECORD,
		SA_ATTR_GUID_INFO_RECORD, SA_ATTR_PATH_RECORD,
	};
	static const struct { uint16_t id; unsigned n; size_t size; } want[] = {
		{ SA_ATTR_CLASS_PORT_INFO, 23, 72 },
		{ SA_ATTR_NODE_RECORD, 15, 108 },
		{ SA_ATTR_PORT_INFO_RECORD, 58, 68 },
		{ SA_ATTR_SWITCH_INFO_RECORD, 21, 24 },
		{ SA_ATTR_LFT_RECORD, 4, 72 },
		{ SA_ATTR_SM_INFO_RECORD, 7, 28 },
		{ SA_ATTR_LINK_RECORD, 4, 8 },
		{ SA_ATTR_GUID_INFO_RECORD, 12, 72 },
		{ SA_ATTR_PATH_RECORD, 24, 64 },
	};

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		const struct sa_attr *a = sa_attr_find(ids[i]);
		unsigned end = 0;

		ck_assert_ptr_nonnull(a);
		ck_assert_uint_eq(a->attr_id, ids[i]);
		ck_assert_ptr_nonnull(a->gen);
		ck_assert_uint_eq(a->nfields, want[i].n);
		ck_assert_uint_eq(a->rec_size, want[i].size);
		/* components tile the record in wire order from bit 0 */
		for (unsigned c = 0; c < a->nfields; c++) {
			ck_assert_msg(a->fields[c].bit_off == end,
				      "%s component %u at %u, expected %u",
				      a->name, c, a->fields[c].bit_off, end);
			ck_assert_uint_gt(a->fields[c].bits, 0);
			end += a->fields[c].bits;
		}
		ck_assert_uint_le(end, a->rec_size * 8);
	}
	/* records that end in padding: the components stop short */
	ck_assert_uint_eq(sa_attr_find(SA_ATTR_LINK_RECORD)->fields[3].bit_off, 32);
	ck_assert_ptr_null(sa_attr_find(0x0000));
	ck_assert_ptr_null(sa_attr_find(SA_ATTR_MCMEMBER_RECORD));
	ck_assert_ptr_null(sa_attr_find(0xffff));
}
END_TEST

/* Sub-byte components compare only their own bits. */
START_TEST(test_match_sub_byte)
{
	const struct sa_attr *pr = sa_attr_find(SA_ATTR_PATH_RECORD);
	const struct sa_attr *pir = sa_attr_find(SA_ATTR_PORT_INFO_RECORD);
	struct sa_path_record a, b;
	struct sa_port_info_record x, y;

	memset(&a, 0, sizeof(a));
	a.hop_flow_raw = htobe32(0x800abcde);	/* raw 1, flow 0xabcd, hop 0xde */
	a.qos_class_sl = htobe16(0x1235);	/* QoSClass 0x123, SL 5 */
	b = a;
	b.hop_flow_raw = htobe32(0x700abcff);	/* other raw/resv/hop bits */
	b.qos_class_sl = htobe16(0x1236);
	ck_assert(sa_match(pr->fields, pr->nfields, B(PR_FLOW), &a, &b));
	ck_assert(!sa_match(pr->fields, pr->nfields, B(PR_HOP), &a, &b));
	ck_assert(!sa_match(pr->fields, pr->nfields, B(PR_RAW), &a, &b));
	ck_assert(sa_match(pr->fields, pr->nfields, B(14), &a, &b));
	ck_assert(!sa_match(pr->fields, pr->nfields, B(PR_SL), &a, &b));
	b.hop_flow_raw = htobe32(0x800abdde);
	ck_assert(!sa_match(pr->fields, pr->nfields, B(PR_FLOW), &a, &b));

	memset(&x, 0, sizeof(x));
	x.port_info.vl_stall_hoq_life = (uint8_t)(7 << 5 | 19);
	x.port_info.mkey_prot_lmc = 0x02;	/* LMC 2 */
	y = x;
	y.port_info.vl_stall_hoq_life = (uint8_t)(1 << 5 | 19);
	y.port_info.mkey_prot_lmc = 0xfa;	/* protect bits and resv differ */
	ck_assert(sa_match(pir->fields, pir->nfields,
			   B(PIR_HOQ_LIFE) | B(PIR_LMC), &x, &y));
	ck_assert(!sa_match(pir->fields, pir->nfields, B(32), &x, &y));
	ck_assert(!sa_match(pir->fields, pir->nfields, B(18), &x, &y));
	ck_assert(!sa_match(pir->fields, pir->nfields, B(19), &x, &y));
	y.port_info.mkey_prot_lmc = 0x03;
	ck_assert(!sa_match(pir->fields, pir->nfields, B(PIR_LMC), &x, &y));
}
END_TEST

/* ---- an empty subnet -------------------------------------------------- */

START_TEST(test_empty_view)
{
	static const uint16_t ids[] = {
		SA_ATTR_NODE_RECORD, SA_ATTR_PORT_INFO_RECORD,
		SA_ATTR_SWITCH_INFO_RECORD, SA_ATTR_LFT_RECORD,
		SA_ATTR_SM_INFO_RECORD, SA_ATTR_LINK_RECORD,
		SA_ATTR_GUID_INFO_RECORD, SA_ATTR_PATH_RECORD,
	};
	struct fabric f;
	struct routing_result r = { 0 };
	struct sa_view v = { 0 };
	struct sa_table t;
	uint8_t tmpl[SA_DATA_SIZE];

	memset(tmpl, 0xa5, sizeof(tmpl));
	fabric_init(&f);
	for (int pass = 0; pass < 3; pass++) {
		/* no model at all, an empty model, an empty model and routes */
		v.f = pass ? &f : NULL;
		v.routes = pass == 2 ? &r : NULL;
		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
			const struct sa_attr *a = sa_attr_find(ids[i]);
			uint64_t masks[] = { 0, B(0), B(0) | B(1) | B(2) };

			for (size_t m = 0; m < 3; m++) {
				ck_assert_int_eq(query(&v, ids[i], MAD_METHOD_GET_TABLE,
						       masks[m], 0, tmpl,
						       sizeof(tmpl), &t), 0);
				ck_assert_msg(t.count == 0, "%s: %zu records",
					      a->name, t.count);
				free(t.buf);
				ck_assert_int_eq(query(&v, ids[i], MAD_METHOD_GET,
						       masks[m], 0, tmpl,
						       sizeof(tmpl), &t), 0);
				ck_assert_uint_eq(t.count, 0);
				free(t.buf);
			}
		}
		/* ClassPortInfo describes the SA, subnet or not */
		ck_assert_int_eq(query(&v, SA_ATTR_CLASS_PORT_INFO, MAD_METHOD_GET,
				       0, 0, NULL, 0, &t), 0);
		ck_assert_uint_eq(t.count, 1);
		free(t.buf);
	}
	fabric_free(&f);
}
END_TEST

/* ---- ClassPortInfo ---------------------------------------------------- */

/* disable_multicast and use_mfttop FALSE: the bits OpenSM clears. */
START_TEST(test_class_port_info_flags)
{
	struct sa_view v = { .mcast_off = true, .mfttop_off = true };
	struct sa_table t;
	const struct sa_class_port_info *c;

	ck_assert_int_eq(query(&v, SA_ATTR_CLASS_PORT_INFO, MAD_METHOD_GET, 0, 0,
			       NULL, 0, &t), 0);
	c = REC(&t, struct sa_class_port_info, 0);
	ck_assert_uint_eq(be16toh(c->cap_mask), 0x2402);
	ck_assert_uint_eq(be32toh(c->cap_mask2_resp_time) >> 5, 0xb5e0);
	free(t.buf);
}
END_TEST

/* use_original_extended_sa_rates_only: OpenSM's reduction of the codes
 * above 18 (ib_path_get_reduced_rate with limit 18). */
START_TEST(test_rate_original)
{
	static const unsigned in[] = { 2, 16, 18, 19, 20, 21, 22, 23, 24 };
	static const unsigned out[] = { 2, 16, 18, 15, 8, 18, 18, 18, 18 };

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		ck_assert_msg(sa_rate_original(in[i]) == out[i], "%u -> %u,"
			      " expected %u", in[i], sa_rate_original(in[i]),
			      out[i]);
}
END_TEST

START_TEST(test_class_port_info)
{
	struct sa_view v = { 0 };
	struct sa_table t;
	const struct sa_class_port_info *c;

	ck_assert_int_eq(query(&v, SA_ATTR_CLASS_PORT_INFO, MAD_METHOD_GET, 0, 0,
			       NULL, 0, &t), 0);
	ck_assert_uint_eq(t.count, 1);
	c = REC(&t, struct sa_class_port_info, 0);
	/* what OpenSM 3.3.23 answers with its defaults */
	ck_assert_uint_eq(c->base_version, 1);
	ck_assert_uint_eq(c->class_version, 2);
	ck_assert_uint_eq(be16toh(c->cap_mask), 0x2602);
	ck_assert_uint_eq(be32toh(c->cap_mask2_resp_time) >> 5, 0xb5e8);
	ck_assert_uint_eq(be32toh(c->cap_mask2_resp_time) & 0x1f, 16);
	ck_assert_uint_eq(be32toh(c->redirect_qp), 1);
	ck_assert_uint_eq(be32toh(c->redirect_qkey), 0x80010000);
	ck_assert_uint_eq(be32toh(c->trap_qkey), 0x80010000);
	ck_assert_uint_eq(be16toh(c->redirect_lid), 0);
	ck_assert_uint_eq(be16toh(c->trap_lid), 0);
	free(t.buf);
	ck_assert_int_eq(query(&v, SA_ATTR_CLASS_PORT_INFO, MAD_METHOD_GET_TABLE,
			       0, 0, NULL, 0, &t), -SA_STATUS_REQ_INVALID);
	free(t.buf);
}
END_TEST

/* ---- NodeRecord ------------------------------------------------------- */

static void check_node_records(const char *topo, unsigned lmc)
{
	struct fx x;
	struct sa_table t;
	struct sa_node_record tm;

	fx_load(&x, topo, lmc);
	ck_assert_uint_eq(table(&x.v, SA_ATTR_NODE_RECORD, 0, NULL, 0, &t),
			  n_endports(&x.f));
	for (size_t i = 0; i < t.count; i++) {
		const struct sa_node_record *r = REC(&t, struct sa_node_record, i);
		int32_t id = fabric_find(&x.f, be64toh(r->node_info.node_guid));
		const struct fab_node *n;
		unsigned pn = r->node_info.local_port;

		ck_assert_int_ne(id, FAB_NONE);
		n = &x.f.nodes[id];
		ck_assert(endport(n, pn));
		ck_assert_uint_eq(be16toh(r->lid), n->ports[pn].lid);
		ck_assert_uint_eq(be64toh(r->node_info.port_guid), n->ports[pn].guid);
		ck_assert_uint_eq(be64toh(r->node_info.sys_guid), n->sys_guid);
		ck_assert_uint_eq(r->node_info.node_type, n->type);
		ck_assert_uint_eq(r->node_info.num_ports, n->num_ports);
		ck_assert_uint_eq(r->node_info.base_version, 1);
		ck_assert_uint_eq(r->node_info.class_version, 1);
		ck_assert_uint_eq(smp_node_info_vendor(&r->node_info), n->vendor_id);
		ck_assert(!strncmp(r->node_desc.desc, n->desc, 64));
	}
	free(t.buf);

	/* by every LID of every range: the one record, with the base LID */
	for (size_t i = 0; i < x.f.n_nodes; i++) {
		const struct fab_node *n = &x.f.nodes[i];

		for (unsigned pn = 0; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (!endport(n, pn))
				continue;
			for (unsigned l = p->lid; l < p->lid + (1u << p->lmc); l++) {
				memset(&tm, 0, sizeof(tm));
				tm.lid = htobe16((uint16_t)l);
				ck_assert_uint_eq(table(&x.v, SA_ATTR_NODE_RECORD,
							B(NR_LID), &tm, sizeof(tm), &t), 1);
				ck_assert_uint_eq(be16toh(REC(&t, struct sa_node_record, 0)->lid),
						  p->lid);
				ck_assert_uint_eq(be64toh(REC(&t, struct sa_node_record, 0)->node_info.port_guid),
						  p->guid);
				free(t.buf);
			}
			/* by port GUID */
			memset(&tm, 0, sizeof(tm));
			tm.node_info.port_guid = htobe64(p->guid);
			ck_assert_uint_eq(count(&x.v, SA_ATTR_NODE_RECORD,
						B(NR_PORT_GUID), &tm, sizeof(tm)), 1);
			/* by node GUID: one per end port of the node */
			unsigned ends = 0;

			for (unsigned k = 0; k <= n->num_ports; k++)
				ends += endport(n, k);
			tm.node_info.node_guid = htobe64(n->guid);
			ck_assert_uint_eq(count(&x.v, SA_ATTR_NODE_RECORD,
						B(NR_NODE_GUID), &tm, sizeof(tm)), ends);
			tm.node_info.local_port = (uint8_t)pn;
			ck_assert_uint_eq(count(&x.v, SA_ATTR_NODE_RECORD,
						B(NR_NODE_GUID) | B(NR_PORT_NUM),
						&tm, sizeof(tm)), 1);
		}
	}
	/* LIDs nobody has */
	memset(&tm, 0, sizeof(tm));
	tm.lid = htobe16((uint16_t)(x.f.max_lid + 1));
	ck_assert_uint_eq(count(&x.v, SA_ATTR_NODE_RECORD, B(NR_LID), &tm, sizeof(tm)), 0);
	tm.lid = 0;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_NODE_RECORD, B(NR_LID), &tm, sizeof(tm)), 0);
	tm.lid = htobe16(0xffff);
	ck_assert_uint_eq(count(&x.v, SA_ATTR_NODE_RECORD, B(NR_LID), &tm, sizeof(tm)), 0);
	tm.node_info.port_guid = htobe64(0x1234);
	ck_assert_uint_eq(count(&x.v, SA_ATTR_NODE_RECORD, B(NR_PORT_GUID), &tm, sizeof(tm)), 0);
	fx_free(&x);
}

START_TEST(test_node_records)
{
	check_node_records("fat2-small.net", 0);
	check_node_records("fat2-small.net", 2);
	check_node_records("twoport-16.net", 1);
	check_node_records("torus-3x3x3.net", 0);
}
END_TEST

START_TEST(test_node_record_fields)
{
	struct fx x;
	struct sa_table t;
	struct sa_node_record tm;
	const struct sa_node_record *r;
	int32_t h5, leaf;

	fx_load(&x, "twoport-16.net", 0);
	h5 = by_desc(&x.f, "H0005 HCA-1");
	leaf = by_desc(&x.f, "leaf-02");
	/* a 2-port host: two records, one per port */
	memset(&tm, 0, sizeof(tm));
	tm.node_info.node_guid = htobe64(x.f.nodes[h5].guid);
	ck_assert_uint_eq(table(&x.v, SA_ATTR_NODE_RECORD, B(NR_NODE_GUID), &tm,
				sizeof(tm), &t), 2);
	for (unsigned i = 0; i < 2; i++) {
		r = REC(&t, struct sa_node_record, i);
		ck_assert_uint_eq(r->node_info.local_port, i + 1);
		ck_assert_uint_eq(be16toh(r->lid), lid_of(&x.f, h5, i + 1));
		ck_assert_str_eq(r->node_desc.desc, "H0005 HCA-1");
	}
	free(t.buf);
	/* a switch: one record, port 0 */
	tm.node_info.node_guid = htobe64(x.f.nodes[leaf].guid);
	ck_assert_uint_eq(table(&x.v, SA_ATTR_NODE_RECORD, B(NR_NODE_GUID), &tm,
				sizeof(tm), &t), 1);
	r = REC(&t, struct sa_node_record, 0);
	ck_assert_uint_eq(r->node_info.local_port, 0);
	ck_assert_uint_eq(r->node_info.node_type, NODE_TYPE_SWITCH);
	ck_assert_uint_eq(be16toh(r->lid), lid_of(&x.f, leaf, 0));
	free(t.buf);
	/* PartitionCap as NodeInfo gave it (it read 0 once: OpenSM shows it) */
	x.f.nodes[leaf].partition_cap = 8;
	ck_assert_uint_eq(table(&x.v, SA_ATTR_NODE_RECORD, B(NR_NODE_GUID), &tm,
				sizeof(tm), &t), 1);
	r = REC(&t, struct sa_node_record, 0);
	ck_assert_uint_eq(be16toh(r->node_info.partition_cap), 8);
	free(t.buf);
	/* NodeDescription compares as a string: what follows the NUL is not
	 * looked at */
	memset(&tm, 0, sizeof(tm));
	strcpy(tm.node_desc.desc, "leaf-02");
	tm.node_desc.desc[40] = 'x';
	ck_assert_uint_eq(count(&x.v, SA_ATTR_NODE_RECORD, B(NR_NODE_DESC), &tm,
				sizeof(tm)), 1);
	strcpy(tm.node_desc.desc, "leaf-0");
	ck_assert_uint_eq(count(&x.v, SA_ATTR_NODE_RECORD, B(NR_NODE_DESC), &tm,
				sizeof(tm)), 0);
	/* node type: all switches; with a wrong NumPorts none */
	memset(&tm, 0, sizeof(tm));
	tm.node_info.node_type = NODE_TYPE_SWITCH;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_NODE_RECORD, B(4), &tm, sizeof(tm)), 6);
	tm.node_info.num_ports = 35;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_NODE_RECORD, B(4) | B(5), &tm,
				sizeof(tm)), 0);
	fx_free(&x);
}
END_TEST

/* ---- PortInfoRecord --------------------------------------------------- */

/* The M_Key of a PortInfoRecord: 0 to an untrusted request, the port's
 * to a trusted one (15.2.5.3, as OpenSM). */
START_TEST(test_port_info_mkey_trusted)
{
	struct fx x;
	struct sa_table t;
	const struct sa_attr *a = sa_attr_find(SA_ATTR_PORT_INFO_RECORD);
	uint8_t data[SA_DATA_SIZE] = { 0 };
	struct sa_query q;
	int32_t h1;

	fx_load(&x, "fat2-small.net", 2);
	h1 = by_desc(&x.f, "H0001 HCA-1");
	fabric_node(&x.f, h1)->ports[1].pi.mkey = htobe64(0x5555);
	for (int trusted = 0; trusted < 2; trusted++) {
		uint64_t want = trusted ? 0x5555 : 0, seen = 0;

		q = (struct sa_query){ .method = MAD_METHOD_GET_TABLE,
				       .attr_id = SA_ATTR_PORT_INFO_RECORD,
				       .tmpl = data, .tmpl_len = sizeof(data),
				       .requester_lid = 1,
				       .sm_key = trusted ? SA_SM_KEY_TRUSTED : 0 };
		memset(&t, 0, sizeof(t));
		t.rec_size = a->rec_size;
		ck_assert_int_eq(a->gen(&x.v, &q, &t), 0);
		for (size_t i = 0; i < t.count; i++) {
			const struct sa_port_info_record *r =
				REC(&t, struct sa_port_info_record, i);

			if (r->port_info.mkey)
				seen = be64toh(r->port_info.mkey);
		}
		ck_assert_uint_eq(seen, want);
		free(t.buf);
	}
	fx_free(&x);
}
END_TEST

START_TEST(test_port_info_records)
{
	struct fx x;
	struct sa_table t;
	struct sa_port_info_record tm;
	struct fabric_counts c;
	int32_t leaf, h1;
	const struct sa_port_info_record *r;

	fx_load(&x, "fat2-small.net", 2);
	fabric_count(&x.f, &c);
	/* every port with PortInfo: CA ports, switch ports 0..N */
	ck_assert_uint_eq(table(&x.v, SA_ATTR_PORT_INFO_RECORD, 0, NULL, 0, &t),
			  c.ports + c.switches);
	for (size_t i = 0; i < t.count; i++) {
		r = REC(&t, struct sa_port_info_record, i);
		ck_assert_uint_eq(r->port_info.mkey, 0);
		ck_assert_uint_eq(r->options, 0);
		ck_assert_uint_eq(r->port_info.local_port, r->port_num);
	}
	free(t.buf);

	leaf = by_desc(&x.f, "leaf-02");
	h1 = by_desc(&x.f, "H0001 HCA-1");
	/* a switch by LID: all its ports, its port 0 LID on each */
	memset(&tm, 0, sizeof(tm));
	tm.lid = htobe16(lid_of(&x.f, leaf, 0));
	ck_assert_uint_eq(table(&x.v, SA_ATTR_PORT_INFO_RECORD, B(PIR_LID), &tm,
				sizeof(tm), &t), 7);
	for (size_t i = 0; i < t.count; i++)
		ck_assert_uint_eq(be16toh(REC(&t, struct sa_port_info_record, i)->lid),
				  lid_of(&x.f, leaf, 0));
	free(t.buf);
	/* LID + PortNum: one */
	tm.port_num = 5;
	ck_assert_uint_eq(table(&x.v, SA_ATTR_PORT_INFO_RECORD,
				B(PIR_LID) | B(PIR_PORT_NUM), &tm, sizeof(tm), &t), 1);
	r = REC(&t, struct sa_port_info_record, 0);
	ck_assert_uint_eq(r->port_num, 5);
	ck_assert_uint_eq(r->port_info.local_port, 5);
	free(t.buf);
	tm.port_num = 9;		/* not cabled: no PortInfo in the model */
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PORT_INFO_RECORD,
				B(PIR_LID) | B(PIR_PORT_NUM), &tm, sizeof(tm)), 0);
	tm.port_num = 200;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PORT_INFO_RECORD,
				B(PIR_LID) | B(PIR_PORT_NUM), &tm, sizeof(tm)), 0);
	/* a host by the last LID of its LMC 2 range */
	tm.lid = htobe16((uint16_t)(lid_of(&x.f, h1, 1) + 3));
	tm.port_num = 1;
	ck_assert_uint_eq(table(&x.v, SA_ATTR_PORT_INFO_RECORD,
				B(PIR_LID) | B(PIR_PORT_NUM), &tm, sizeof(tm), &t), 1);
	ck_assert_uint_eq(be16toh(REC(&t, struct sa_port_info_record, 0)->lid),
			  lid_of(&x.f, h1, 1));
	free(t.buf);
	tm.port_num = 0;		/* CAs have no port 0 */
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PORT_INFO_RECORD,
				B(PIR_LID) | B(PIR_PORT_NUM), &tm, sizeof(tm)), 0);
	/* PortNum alone: port 5 of every switch that has one cabled */
	memset(&tm, 0, sizeof(tm));
	tm.port_num = 5;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PORT_INFO_RECORD, B(PIR_PORT_NUM),
				&tm, sizeof(tm)), 4);
	fx_free(&x);
}
END_TEST

/* Nibble and 3-bit PortInfo components next to other bits. */
START_TEST(test_port_info_sub_byte)
{
	struct fx x;
	struct sa_port_info_record tm;
	struct fabric_counts c;
	size_t all;

	fx_load(&x, "fat2-small.net", 0);
	fabric_count(&x.f, &c);
	all = c.ports + c.switches;
	memset(&tm, 0, sizeof(tm));
	/* PortState ACTIVE, LinkSpeedSupported nibble garbage */
	tm.port_info.speed_supported_state = 0xf0 | PORT_STATE_ACTIVE;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PORT_INFO_RECORD, B(PIR_PORT_STATE),
				&tm, sizeof(tm)), all);
	tm.port_info.speed_supported_state = 0x00 | PORT_STATE_DOWN;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PORT_INFO_RECORD, B(PIR_PORT_STATE),
				&tm, sizeof(tm)), 0);
	/* LMC (3 bits) 0, M_KeyProtectBits and reserved bits garbage */
	tm.port_info.mkey_prot_lmc = 0xf8;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PORT_INFO_RECORD, B(PIR_LMC),
				&tm, sizeof(tm)), all);
	tm.port_info.mkey_prot_lmc = 0x02;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PORT_INFO_RECORD, B(PIR_LMC),
				&tm, sizeof(tm)), 0);
	/* NeighborMTU 2048 with MasterSMSL garbage */
	tm.port_info.neighbor_mtu_sm_sl = 0x4f;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PORT_INFO_RECORD, B(PIR_NEIGHBOR_MTU),
				&tm, sizeof(tm)), all);
	tm.port_info.neighbor_mtu_sm_sl = 0x50;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PORT_INFO_RECORD, B(PIR_NEIGHBOR_MTU),
				&tm, sizeof(tm)), 0);
	/* PortState and NeighborMTU together */
	tm.port_info.speed_supported_state = PORT_STATE_ACTIVE;
	tm.port_info.neighbor_mtu_sm_sl = 0x40;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PORT_INFO_RECORD,
				B(PIR_PORT_STATE) | B(PIR_NEIGHBOR_MTU), &tm,
				sizeof(tm)), all);
	fx_free(&x);
}
END_TEST

/* Extended speeds (EDR): the QDR bit OpenSM adds; CapabilityMask match. */
START_TEST(test_port_info_ext_speed)
{
	struct fx x;
	struct sa_table t;
	struct sa_port_info_record tm;
	const struct sa_port_info_record *r;
	int32_t h1 = FAB_NONE;

	fx_load(&x, "fat2-small.net", 0);
	h1 = by_desc(&x.f, "H0001 HCA-1");
	ck_assert_uint_eq(pi_speed_ext_active(&x.f.nodes[h1].ports[1].pi), 2);
	memset(&tm, 0, sizeof(tm));
	tm.lid = htobe16(lid_of(&x.f, h1, 1));
	ck_assert_uint_eq(table(&x.v, SA_ATTR_PORT_INFO_RECORD, B(PIR_LID), &tm,
				sizeof(tm), &t), 1);
	r = REC(&t, struct sa_port_info_record, 0);
	ck_assert_uint_eq(pi_speed_active(&r->port_info), 1 | 4);
	ck_assert_uint_eq(pi_speed_enabled(&r->port_info), 1 | 4);
	ck_assert_uint_eq(pi_speed_supported(&r->port_info), 1 | 4);
	free(t.buf);
	/* Options bit 7: as read; the record echoes Options */
	tm.options = 0x80;
	ck_assert_uint_eq(table(&x.v, SA_ATTR_PORT_INFO_RECORD,
				B(PIR_LID) | B(PIR_OPTIONS), &tm, sizeof(tm), &t), 1);
	r = REC(&t, struct sa_port_info_record, 0);
	ck_assert_uint_eq(pi_speed_active(&r->port_info), 1);
	ck_assert_uint_eq(r->options, 0x80);
	free(t.buf);
	/* matching is on the port as read (LinkSpeedActive 1) */
	tm.port_info.speed_active_enabled = 0x10;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PORT_INFO_RECORD,
				B(PIR_LID) | B(PIR_SPEED_ACTIVE), &tm, sizeof(tm)), 1);

	/* CapabilityMask: equality, or every template bit with AttrMod bit 31 */
	x.f.nodes[h1].ports[1].pi.cap_mask |= htobe32(PI_CAP_IS_SM);
	memset(&tm, 0, sizeof(tm));
	tm.port_info.cap_mask = htobe32(PI_CAP_IS_SM);
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PORT_INFO_RECORD, B(PIR_CAP_MASK),
				&tm, sizeof(tm)), 0);
	ck_assert_int_eq(query(&x.v, SA_ATTR_PORT_INFO_RECORD, MAD_METHOD_GET_TABLE,
			       B(PIR_CAP_MASK), 0x80000000u, &tm, sizeof(tm), &t), 0);
	ck_assert_uint_eq(t.count, 1);
	ck_assert_uint_eq(REC(&t, struct sa_port_info_record, 0)->port_num, 1);
	free(t.buf);
	fx_free(&x);
}
END_TEST

/* ---- LinkRecord ------------------------------------------------------- */

static void check_links(const char *topo, unsigned lmc)
{
	struct fx x;
	struct sa_table t;
	struct sa_link_record tm;
	struct fabric_counts c;

	fx_load(&x, topo, lmc);
	fabric_count(&x.f, &c);
	ck_assert_uint_eq(table(&x.v, SA_ATTR_LINK_RECORD, 0, NULL, 0, &t),
			  2 * c.links);
	for (size_t i = 0; i < t.count; i++) {
		const struct sa_link_record *r = REC(&t, struct sa_link_record, i);
		struct sa_node_record nt;
		struct sa_table nr;
		int32_t a, b;

		/* both ends: a LID-bearing port owns each LID */
		memset(&nt, 0, sizeof(nt));
		nt.lid = r->from_lid;
		ck_assert_uint_eq(table(&x.v, SA_ATTR_NODE_RECORD, B(NR_LID), &nt,
					sizeof(nt), &nr), 1);
		a = fabric_find(&x.f, be64toh(REC(&nr, struct sa_node_record, 0)->node_info.node_guid));
		free(nr.buf);
		nt.lid = r->to_lid;
		ck_assert_uint_eq(table(&x.v, SA_ATTR_NODE_RECORD, B(NR_LID), &nt,
					sizeof(nt), &nr), 1);
		b = fabric_find(&x.f, be64toh(REC(&nr, struct sa_node_record, 0)->node_info.node_guid));
		free(nr.buf);
		ck_assert_int_eq(x.f.nodes[a].ports[r->from_port].peer_node, b);
		ck_assert_uint_eq(x.f.nodes[a].ports[r->from_port].peer_port, r->to_port);
	}
	free(t.buf);
	/* by FromLID (any LID of the range): that node's cabled ports */
	for (size_t i = 0; i < x.f.n_nodes; i++) {
		const struct fab_node *n = &x.f.nodes[i];
		unsigned cabled = 0;

		for (unsigned pn = 1; pn <= n->num_ports; pn++)
			cabled += n->ports[pn].peer_node != FAB_NONE;
		for (unsigned pn = 0; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (!endport(n, pn))
				continue;
			memset(&tm, 0, sizeof(tm));
			tm.from_lid = htobe16((uint16_t)(p->lid + (1u << p->lmc) - 1));
			ck_assert_uint_eq(count(&x.v, SA_ATTR_LINK_RECORD,
						B(LR_FROM_LID), &tm, sizeof(tm)),
					  n->type == NODE_TYPE_SWITCH ? cabled :
					  p->peer_node != FAB_NONE);
			tm.to_lid = tm.from_lid;
			ck_assert_uint_eq(count(&x.v, SA_ATTR_LINK_RECORD,
						B(LR_TO_LID), &tm, sizeof(tm)),
					  n->type == NODE_TYPE_SWITCH ? cabled :
					  p->peer_node != FAB_NONE);
		}
	}
	fx_free(&x);
}

START_TEST(test_link_records)
{
	check_links("fat2-small.net", 0);
	check_links("tiny.net", 2);
	check_links("torus-4x4.net", 0);
	check_links("dualrail-32.net", 1);
}
END_TEST

START_TEST(test_link_record_filters)
{
	struct fx x;
	struct sa_table t;
	struct sa_link_record tm;
	int32_t leaf, spine, h2;
	const struct sa_link_record *r;

	fx_load(&x, "fat2-small.net", 0);
	leaf = by_desc(&x.f, "leaf-01");
	spine = by_desc(&x.f, "spine-02");
	h2 = by_desc(&x.f, "H0002 HCA-1");
	memset(&tm, 0, sizeof(tm));
	tm.from_lid = htobe16(lid_of(&x.f, leaf, 0));
	tm.from_port = 6;
	ck_assert_uint_eq(table(&x.v, SA_ATTR_LINK_RECORD,
				B(LR_FROM_LID) | B(LR_FROM_PORT), &tm, sizeof(tm), &t), 1);
	r = REC(&t, struct sa_link_record, 0);
	ck_assert_uint_eq(be16toh(r->to_lid), lid_of(&x.f, spine, 0));
	ck_assert_uint_eq(r->to_port, 1);
	free(t.buf);
	/* to one host: one link, from its leaf port 2 */
	memset(&tm, 0, sizeof(tm));
	tm.to_lid = htobe16(lid_of(&x.f, h2, 1));
	ck_assert_uint_eq(table(&x.v, SA_ATTR_LINK_RECORD, B(LR_TO_LID), &tm,
				sizeof(tm), &t), 1);
	r = REC(&t, struct sa_link_record, 0);
	ck_assert_uint_eq(be16toh(r->from_lid), lid_of(&x.f, leaf, 0));
	ck_assert_uint_eq(r->from_port, 2);
	ck_assert_uint_eq(r->to_port, 1);
	free(t.buf);
	/* ToPort 5: spine-01 to each leaf's port 5 (spines have 4 ports) */
	memset(&tm, 0, sizeof(tm));
	tm.to_port = 5;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_LINK_RECORD, B(LR_TO_PORT), &tm,
				sizeof(tm)), 4);
	fx_free(&x);
}
END_TEST

/* ---- SwitchInfoRecord, LFTRecord -------------------------------------- */

START_TEST(test_switch_info_records)
{
	struct fx x;
	struct sa_table t;
	struct sa_switch_info_record tm;
	struct fabric_counts c;

	fx_load(&x, "fat3-pods.net", 0);
	fabric_count(&x.f, &c);
	ck_assert_uint_eq(table(&x.v, SA_ATTR_SWITCH_INFO_RECORD, 0, NULL, 0, &t),
			  c.switches);
	for (size_t i = 0; i < t.count; i++) {
		const struct sa_switch_info_record *r =
			REC(&t, struct sa_switch_info_record, i);
		struct port_hit { int32_t id; } h = { FAB_NONE };

		for (size_t k = 0; k < x.f.n_nodes; k++)
			if (x.f.nodes[k].type == NODE_TYPE_SWITCH &&
			    x.f.nodes[k].ports[0].lid == be16toh(r->lid))
				h.id = (int32_t)k;
		ck_assert_int_ne(h.id, FAB_NONE);
		ck_assert_uint_eq(be16toh(r->switch_info.lft_top), x.r.lft[h.id].top);
		ck_assert_uint_eq(be16toh(r->switch_info.lft_top), x.f.max_lid);
		ck_assert_uint_eq(be16toh(r->switch_info.lft_cap),
				  be16toh(x.f.nodes[h.id].si.lft_cap));
		/* LifeTimeValue as programmed, not as discovery read it */
		ck_assert_uint_eq(smp_switch_info_life(&r->switch_info), 18);
	}
	free(t.buf);
	memset(&tm, 0, sizeof(tm));
	tm.lid = htobe16(lid_of(&x.f, by_desc(&x.f, "core-003"), 0));
	ck_assert_uint_eq(count(&x.v, SA_ATTR_SWITCH_INFO_RECORD, B(SWIR_LID), &tm,
				sizeof(tm)), 1);
	tm.lid = htobe16(x.f.nodes[x.f.local_node].ports[x.f.local_port].lid);
	ck_assert_uint_eq(count(&x.v, SA_ATTR_SWITCH_INFO_RECORD, B(SWIR_LID), &tm,
				sizeof(tm)), 0);	/* a host's LID */
	tm.switch_info.lft_top = htobe16(x.f.max_lid);
	ck_assert_uint_eq(count(&x.v, SA_ATTR_SWITCH_INFO_RECORD, B(SWIR_LFT_TOP),
				&tm, sizeof(tm)), c.switches);
	fx_free(&x);
}
END_TEST

START_TEST(test_lft_records)
{
	struct fx x;
	struct sa_table t;
	struct sa_lft_record tm;
	size_t want = 0;
	int32_t sw;

	/* LMC 2 on 1152 hosts: LIDs past 4608, so 73+ blocks per switch */
	fx_load(&x, "fat2-1152.net", 2);
	for (size_t i = 0; i < x.f.n_nodes; i++)
		if (x.f.nodes[i].type == NODE_TYPE_SWITCH)
			want += x.r.lft[i].top / 64 + 1u;
	ck_assert_uint_gt(want, 82 * 70);
	ck_assert_uint_eq(table(&x.v, SA_ATTR_LFT_RECORD, 0, NULL, 0, &t), want);
	free(t.buf);
	sw = by_desc(&x.f, "spine-07");
	memset(&tm, 0, sizeof(tm));
	tm.lid = htobe16(lid_of(&x.f, sw, 0));
	ck_assert_uint_eq(table(&x.v, SA_ATTR_LFT_RECORD, B(LFTR_LID), &tm,
				sizeof(tm), &t), x.r.lft[sw].top / 64 + 1u);
	for (size_t i = 0; i < t.count; i++) {
		const struct sa_lft_record *r = REC(&t, struct sa_lft_record, i);

		ck_assert_uint_eq(be16toh(r->block_num), i);
		ck_assert_uint_eq(be16toh(r->lid), lid_of(&x.f, sw, 0));
		for (unsigned e = 0; e < 64; e++) {
			unsigned lid = (unsigned)i * 64 + e;

			ck_assert_uint_eq(r->lft[e], lid <= x.r.lft[sw].top ?
					  x.r.lft[sw].port[lid] : LFT_NO_PATH);
		}
	}
	free(t.buf);
	/* LID + block; the last block; past the last */
	tm.block_num = htobe16(3);
	ck_assert_uint_eq(table(&x.v, SA_ATTR_LFT_RECORD, B(LFTR_LID) | B(LFTR_BLOCK),
				&tm, sizeof(tm), &t), 1);
	ck_assert(!memcmp(REC(&t, struct sa_lft_record, 0)->lft,
			  x.r.lft[sw].port + 3 * 64, 64));
	free(t.buf);
	tm.block_num = htobe16((uint16_t)(x.r.lft[sw].top / 64));
	ck_assert_uint_eq(count(&x.v, SA_ATTR_LFT_RECORD, B(LFTR_LID) | B(LFTR_BLOCK),
				&tm, sizeof(tm)), 1);
	tm.block_num = htobe16((uint16_t)(x.r.lft[sw].top / 64 + 1));
	ck_assert_uint_eq(count(&x.v, SA_ATTR_LFT_RECORD, B(LFTR_LID) | B(LFTR_BLOCK),
				&tm, sizeof(tm)), 0);
	/* block 0 of every switch */
	tm.block_num = 0;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_LFT_RECORD, B(LFTR_BLOCK), &tm,
				sizeof(tm)), 82);
	/* no routes: no tables */
	x.v.routes = NULL;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_LFT_RECORD, 0, NULL, 0), 0);
	fx_free(&x);
}
END_TEST

/* ---- SMInfoRecord, GUIDInfoRecord ------------------------------------- */

START_TEST(test_sm_info_record)
{
	struct fx x;
	struct sa_table t;
	struct sa_sm_info_record tm;
	const struct sa_sm_info_record *r;

	fx_load(&x, "fat2-small.net", 2);
	ck_assert_uint_eq(table(&x.v, SA_ATTR_SM_INFO_RECORD, 0, NULL, 0, &t), 1);
	r = REC(&t, struct sa_sm_info_record, 0);
	ck_assert_uint_eq(be16toh(r->lid), x.v.sm_lid);
	ck_assert_uint_eq(be64toh(r->guid), x.f.local_port_guid);
	ck_assert_uint_eq(r->sm_key, 0);
	ck_assert_uint_eq(be32toh(r->act_count), 602);
	ck_assert_uint_eq(r->prio_state, 5 << 4 | 3);
	free(t.buf);
	memset(&tm, 0, sizeof(tm));
	tm.lid = htobe16((uint16_t)(x.v.sm_lid + 2));	/* in the LMC range */
	tm.guid = htobe64(x.f.local_port_guid);
	tm.sm_key = htobe64(0x1234);			/* never compared */
	tm.prio_state = 0xf3;				/* SMState 3 */
	ck_assert_uint_eq(count(&x.v, SA_ATTR_SM_INFO_RECORD,
				B(SMIR_LID) | B(SMIR_GUID) | B(3) | B(SMIR_STATE),
				&tm, sizeof(tm)), 1);
	tm.prio_state = 0x02;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_SM_INFO_RECORD, B(SMIR_STATE), &tm,
				sizeof(tm)), 0);
	tm.lid = htobe16((uint16_t)(x.v.sm_lid + 4));	/* someone else */
	ck_assert_uint_eq(count(&x.v, SA_ATTR_SM_INFO_RECORD, B(SMIR_LID), &tm,
				sizeof(tm)), 0);
	tm.guid = htobe64(0x42);
	ck_assert_uint_eq(count(&x.v, SA_ATTR_SM_INFO_RECORD, B(SMIR_GUID), &tm,
				sizeof(tm)), 0);
	fx_free(&x);
}
END_TEST

START_TEST(test_guid_info_records)
{
	struct fx x;
	struct sa_table t;
	struct sa_guid_info_record tm;
	size_t cas = 0, sws = 0;
	int32_t h3;

	fx_load(&x, "twoport-16.net", 0);
	/* GUIDCap 0 (the loader's): no blocks, as OpenSM */
	ck_assert_uint_eq(count(&x.v, SA_ATTR_GUID_INFO_RECORD, 0, NULL, 0), 0);
	for (size_t i = 0; i < x.f.n_nodes; i++) {
		struct fab_node *n = &x.f.nodes[i];

		for (unsigned pn = 0; pn <= n->num_ports; pn++) {
			if (!endport(n, pn))
				continue;
			if (n->type == NODE_TYPE_SWITCH) {
				n->ports[pn].pi.guid_cap = 1;
				sws++;
			} else {
				n->ports[pn].pi.guid_cap = 32;
				cas++;
			}
		}
	}
	ck_assert_uint_eq(table(&x.v, SA_ATTR_GUID_INFO_RECORD, 0, NULL, 0, &t),
			  4 * cas + sws);
	free(t.buf);
	h3 = by_desc(&x.f, "H0003 HCA-1");
	memset(&tm, 0, sizeof(tm));
	tm.lid = htobe16(lid_of(&x.f, h3, 2));
	ck_assert_uint_eq(table(&x.v, SA_ATTR_GUID_INFO_RECORD, B(GIR_LID), &tm,
				sizeof(tm), &t), 4);
	for (unsigned b = 0; b < 4; b++) {
		const struct sa_guid_info_record *r =
			REC(&t, struct sa_guid_info_record, b);

		ck_assert_uint_eq(be16toh(r->lid), lid_of(&x.f, h3, 2));
		ck_assert_uint_eq(r->block_num, b);
		ck_assert_uint_eq(be64toh(r->guid_info.guid[0]),
				  b ? 0 : x.f.nodes[h3].ports[2].guid);
		for (unsigned g = 1; g < 8; g++)
			ck_assert_uint_eq(r->guid_info.guid[g], 0);
	}
	free(t.buf);
	tm.block_num = 3;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_GUID_INFO_RECORD,
				B(GIR_LID) | B(GIR_BLOCK), &tm, sizeof(tm)), 1);
	tm.block_num = 4;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_GUID_INFO_RECORD,
				B(GIR_LID) | B(GIR_BLOCK), &tm, sizeof(tm)), 0);
	/* by GUID0: the one port */
	memset(&tm, 0, sizeof(tm));
	tm.guid_info.guid[0] = htobe64(x.f.nodes[h3].ports[1].guid);
	ck_assert_uint_eq(count(&x.v, SA_ATTR_GUID_INFO_RECORD, B(GIR_GUID0), &tm,
				sizeof(tm)), 1);
	fx_free(&x);
}
END_TEST

/* ---- PathRecord: helpers ---------------------------------------------- */

static void pr_tmpl_lids(struct sa_path_record *t, uint16_t slid, uint16_t dlid)
{
	memset(t, 0, sizeof(*t));
	t->slid = htobe16(slid);
	t->dlid = htobe16(dlid);
}

static void gid_of(const struct fx *x, int32_t id, unsigned pn, uint8_t gid[16],
		   uint64_t prefix)
{
	uint64_t p = htobe64(prefix), g = htobe64(x->f.nodes[id].ports[pn].guid);

	memcpy(gid, &p, 8);
	memcpy(gid + 8, &g, 8);
}

/* Get by (SLID, DLID) plus more components; returns count, record in *out. */
static size_t pr_get(const struct fx *x, struct sa_path_record *t, uint64_t more,
		     struct sa_path_record *out, int *rc_out)
{
	struct sa_table tb;
	int rc = query(&x->v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET,
		       B(PR_SLID) | B(PR_DLID) | more, 0, t, sizeof(*t), &tb);
	size_t n = tb.count;

	if (rc_out)
		*rc_out = rc;
	else
		ck_assert_int_eq(rc, 0);
	if (n && out)
		memcpy(out, tb.buf, sizeof(*out));
	free(tb.buf);
	return n;
}

/* Link rates (Gb/s x 10 per link, and 64b/66b or not), independently. */
struct link_rate { unsigned gbps10; bool ext; };

static struct link_rate link_rate(const struct fab_node *n, unsigned pn)
{
	const struct smp_port_info *pi = &n->ports[pn].pi;
	static const unsigned lanes_of[17] = { [1] = 1, [2] = 4, [4] = 8, [8] = 12,
					       [16] = 2 };
	unsigned lanes = pi->link_width_active < 17 ? lanes_of[pi->link_width_active] : 0;
	bool ext = fabric_port_cap_mask(n, pn) & PI_CAP_HAS_EXT_SPEEDS;
	unsigned ea = pi_speed_ext_active(pi);

	if (!lanes)
		lanes = 1;
	if (ext && ea)
		return (struct link_rate){ lanes * (ea == 1 ? 140 : ea == 2 ? 250 :
						    ea == 4 ? 500 : 1000), true };
	switch (pi_speed_active(pi)) {
	case 2: return (struct link_rate){ lanes * 50, false };
	case 4: return (struct link_rate){ lanes * 100, false };
	default: return (struct link_rate){ lanes * 25, false };
	}
}

/* Data rate: 8b/10b x 0.8, 64b/66b ~ x 1 (scaled: x4 vs x5). */
static unsigned link_data(struct link_rate r)
{
	return r.gbps10 * (r.ext ? 5 : 4);
}

static unsigned rate_code(struct link_rate r)
{
	static const struct { unsigned g; bool ext; unsigned code; } m[] = {
		{ 25, 0, 2 }, { 50, 0, 5 }, { 100, 0, 3 }, { 200, 0, 6 },
		{ 300, 0, 4 }, { 400, 0, 7 }, { 600, 0, 8 }, { 800, 0, 9 },
		{ 1200, 0, 10 }, { 140, 1, 11 }, { 560, 1, 12 }, { 250, 1, 15 },
		{ 1000, 1, 16 }, { 500, 1, 20 }, { 280, 1, 19 }, { 2000, 1, 17 },
	};

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (m[i].g == r.gbps10 && m[i].ext == r.ext)
			return m[i].code;
	ck_abort_msg("no rate code for %u/%d", r.gbps10, r.ext);
	return 0;
}

struct walk {
	unsigned hops;		/* switches crossed */
	unsigned mtu;
	struct link_rate rate;	/* slowest */
};

static void walk_port(const struct fx *x, int32_t id, unsigned pn, struct walk *w)
{
	const struct fab_node *n = &x->f.nodes[id];
	struct link_rate r = link_rate(n, pn);

	if (pi_mtu_cap(&n->ports[pn].pi) < w->mtu)
		w->mtu = pi_mtu_cap(&n->ports[pn].pi);
	if (!w->rate.gbps10 || link_data(r) < link_data(w->rate))
		w->rate = r;
}

/* Host port to host port through the LFTs; false when they do not lead. */
static bool walk_hosts(const struct fx *x, int32_t s, unsigned sp, int32_t d,
		       unsigned dp, uint16_t dlid, struct walk *w)
{
	int32_t n = s;
	unsigned p = sp;

	memset(w, 0, sizeof(*w));
	w->mtu = 15;
	walk_port(x, s, sp, w);
	for (;;) {
		const struct fab_port *o = &x->f.nodes[n].ports[p];
		int32_t pn = o->peer_node;
		unsigned pp = o->peer_port;

		if (pn == FAB_NONE || w->hops > 64)
			return false;
		walk_port(x, pn, pp, w);
		if (pn == d && pp == dp)
			return true;
		if (x->f.nodes[pn].type != NODE_TYPE_SWITCH ||
		    dlid > x->r.lft[pn].top ||
		    x->r.lft[pn].port[dlid] == LFT_NO_PATH)
			return false;
		w->hops++;
		n = pn;
		p = x->r.lft[pn].port[dlid];
		walk_port(x, n, p, w);
	}
}

/* Give some links of the fabric other MTUs, widths and speeds. */
static void mix_links(struct fx *x)
{
	unsigned k = 0;

	for (size_t i = 0; i < x->f.n_nodes; i++) {
		struct fab_node *n = &x->f.nodes[i];

		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			struct fab_port *p = &n->ports[pn], *q;

			if (p->peer_node == FAB_NONE || (size_t)p->peer_node < i)
				continue;
			q = &x->f.nodes[p->peer_node].ports[p->peer_port];
			k++;
			if (k % 7 == 0) {	/* 1024 MTU */
				SET_LO4(p->pi.init_type_reply_mtu_cap, 3);
				SET_LO4(q->pi.init_type_reply_mtu_cap, 3);
			}
			if (k % 5 == 0) {	/* 1x */
				p->pi.link_width_active = 1;
				q->pi.link_width_active = 1;
			}
			if (k % 11 == 0) {	/* FDR */
				SET_HI4(p->pi.speed_ext_active_supp, 1);
				SET_HI4(q->pi.speed_ext_active_supp, 1);
			}
			if (k % 13 == 0) {	/* MTU 512 on one end only */
				SET_LO4(q->pi.init_type_reply_mtu_cap, 2);
			}
		}
	}
}

/* ---- PathRecord: every pair of hosts ---------------------------------- */

/*
 * Check's assertions report every pass to the parent process, so the
 * million-path loop below checks with plain conditions and asserts once.
 */
#define EXPECT(cond, ...)						\
	do {								\
		if (!(cond) && !bad++)					\
			snprintf(why, sizeof(why), __VA_ARGS__);	\
	} while (0)

START_TEST(test_path_all_pairs)
{
	const struct sa_attr *a = sa_attr_find(SA_ATTR_PATH_RECORD);
	struct fx x;
	int32_t *hosts;
	size_t nh = 0, mtus[6] = { 0 }, slow = 0, max_hops = 0, bad = 0;
	char why[256] = "";
	uint8_t data[SA_DATA_SIZE] = { 0 };
	struct sa_path_record *t = (struct sa_path_record *)data;
	struct sa_query q = { .method = MAD_METHOD_GET,
			      .attr_id = SA_ATTR_PATH_RECORD,
			      .comp_mask = B(PR_SLID) | B(PR_DLID), .tmpl = data,
			      .tmpl_len = sizeof(data) };
	struct sa_table tb = { .rec_size = sizeof(struct sa_path_record) };

	fx_load(&x, "fat2-1152.net", 0);
	mix_links(&x);
	hosts = calloc(x.f.n_nodes, sizeof(*hosts));
	ck_assert_ptr_nonnull(hosts);
	for (size_t i = 0; i < x.f.n_nodes; i++)
		if (x.f.nodes[i].type == NODE_TYPE_CA)
			hosts[nh++] = (int32_t)i;
	ck_assert_uint_ge(nh, 1152);
	for (size_t i = 0; i < nh * nh && bad < 10; i++) {
		size_t ai = i / nh, bi = i % nh;
		int32_t s = hosts[ai], d = hosts[bi];
		uint16_t slid = lid_of(&x.f, s, 1), dlid = lid_of(&x.f, d, 1);
		struct sa_path_record r;
		struct walk w, back;
		bool ok = walk_hosts(&x, s, 1, d, 1, dlid, &w);
		bool rev = walk_hosts(&x, d, 1, s, 1, slid, &back);
		uint64_t sg, dg, sp;
		int rc;

		t->slid = htobe16(slid);
		t->dlid = htobe16(dlid);
		tb.count = 0;
		rc = a->gen(&x.v, &q, &tb);
		EXPECT(rc == 0 && tb.count == 1 && ok && rev,
		       "%zu->%zu: rc %d, %zu records, walks %d %d", ai, bi, rc,
		       tb.count, ok, rev);
		if (rc || tb.count != 1 || !ok || !rev)
			continue;
		memcpy(&r, tb.buf, sizeof(r));
		memcpy(&sg, r.sgid + 8, 8);
		memcpy(&dg, r.dgid + 8, 8);
		memcpy(&sp, r.sgid, 8);
		EXPECT(be16toh(r.slid) == slid && be16toh(r.dlid) == dlid &&
		       be64toh(sg) == x.f.nodes[s].ports[1].guid &&
		       be64toh(dg) == x.f.nodes[d].ports[1].guid &&
		       be64toh(sp) == SUBNET_PREFIX,
		       "%zu->%zu: ends %u->%u", ai, bi, be16toh(r.slid),
		       be16toh(r.dlid));
		EXPECT(r.mtu == (0x80 | w.mtu), "%zu->%zu: mtu %#x want %#x",
		       ai, bi, r.mtu, 0x80 | w.mtu);
		EXPECT(r.rate == (0x80 | rate_code(w.rate)),
		       "%zu->%zu: rate %#x want %#x", ai, bi, r.rate,
		       0x80 | rate_code(w.rate));
		EXPECT(r.pkt_life == (ai == bi ? 0x80 : 0x80 | 18),
		       "%zu->%zu: life %#x", ai, bi, r.pkt_life);
		EXPECT(r.num_path == 0x80 && be16toh(r.pkey) == 0xffff &&
		       r.hop_flow_raw == 0 && r.preference == 0 &&
		       r.qos_class_sl == 0 && r.tclass == 0,
		       "%zu->%zu: reversible/pkey/hop/preference", ai, bi);
		/* a 2-level tree: own leaf, or leaf-spine-leaf, both ways */
		EXPECT(w.hops <= 3 && w.hops == back.hops, "%zu->%zu: hops %u/%u",
		       ai, bi, w.hops, back.hops);
		if (w.hops > max_hops)
			max_hops = w.hops;
		mtus[w.mtu]++;
		slow += rate_code(w.rate) != 16;
	}
	free(tb.buf);
	ck_assert_msg(!bad, "%zu bad paths, first: %s", bad, why);
	/* the mix made a difference on plenty of paths */
	ck_assert_uint_eq(max_hops, 3);
	ck_assert_uint_gt(mtus[3], 1000);
	ck_assert_uint_gt(mtus[2], 1000);
	ck_assert_uint_gt(mtus[4], 1000);
	ck_assert_uint_gt(slow, 10000);
	free(hosts);
	fx_free(&x);
}
END_TEST

/* tiny.net: a 1x SDR link between the switches, parallel links. */
START_TEST(test_path_tiny)
{
	struct fx x;
	struct sa_path_record t, r;
	size_t ends;
	struct sa_table tb;

	fx_load(&x, "tiny.net", 0);
	ends = n_endports(&x.f);
	/* every pair of end ports, switches too, one GetTable */
	ck_assert_uint_eq(table(&x.v, SA_ATTR_PATH_RECORD, 0, NULL, 0, &tb),
			  ends * ends);
	for (size_t i = 0; i < tb.count; i++) {
		const struct sa_path_record *p = REC(&tb, struct sa_path_record, i);
		struct sa_node_record nt;
		struct sa_table nr;
		int32_t s, d;
		struct walk w;

		ck_assert_uint_eq(p->num_path, 0x80);
		if (p->slid == p->dlid) {
			ck_assert_uint_eq(p->pkt_life, 0x80);
			continue;
		}
		ck_assert_uint_eq(p->pkt_life, 0x80 | 18);
		memset(&nt, 0, sizeof(nt));
		nt.lid = p->slid;
		ck_assert_uint_eq(table(&x.v, SA_ATTR_NODE_RECORD, B(NR_LID), &nt,
					sizeof(nt), &nr), 1);
		s = fabric_find(&x.f, be64toh(REC(&nr, struct sa_node_record, 0)->node_info.node_guid));
		free(nr.buf);
		nt.lid = p->dlid;
		ck_assert_uint_eq(table(&x.v, SA_ATTR_NODE_RECORD, B(NR_LID), &nt,
					sizeof(nt), &nr), 1);
		d = fabric_find(&x.f, be64toh(REC(&nr, struct sa_node_record, 0)->node_info.node_guid));
		free(nr.buf);
		if (x.f.nodes[s].type != NODE_TYPE_CA || x.f.nodes[d].type != NODE_TYPE_CA)
			continue;
		for (unsigned sp = 1; sp <= x.f.nodes[s].num_ports; sp++)
			for (unsigned dp = 1; dp <= x.f.nodes[d].num_ports; dp++)
				if (lid_of(&x.f, s, sp) == be16toh(p->slid) &&
				    lid_of(&x.f, d, dp) == be16toh(p->dlid)) {
					ck_assert(walk_hosts(&x, s, sp, d, dp,
							     be16toh(p->dlid), &w));
					ck_assert_uint_eq(p->mtu, 0x80 | w.mtu);
					ck_assert_uint_eq(p->rate, 0x80 | rate_code(w.rate));
				}
	}
	free(tb.buf);
	/* host to switch: the switch's port 0 (4x SDR in the loader) counts */
	int32_t h = by_desc(&x.f, "H0001 tiny host"), sw = FAB_NONE;

	for (size_t i = 0; i < x.f.n_nodes && sw == FAB_NONE; i++)
		if (x.f.nodes[i].type == NODE_TYPE_SWITCH)
			sw = (int32_t)i;
	pr_tmpl_lids(&t, lid_of(&x.f, h, 1), lid_of(&x.f, sw, 0));
	ck_assert_uint_eq(pr_get(&x, &t, 0, &r, NULL), 1);
	ck_assert_uint_le(r.rate & 0x3f, 3);
	fx_free(&x);
}
END_TEST

/* ---- PathRecord under a QoS policy (OpenSM's osm_sa_path_record.c) ---- */

START_TEST(test_path_qos)
{
	static const char policy[] =
		"qos-levels\n"
		" qos-level\n  name: DEFAULT\n  sl: 1\n end-qos-level\n"
		" qos-level\n  name: L\n  sl: 5\n  mtu-limit: 2\n"
		"  rate-limit: 3\n  packet-life: 9\n end-qos-level\n"
		" qos-level\n  name: P5\n  sl: 7\n  pkey: 0x0005\n"
		" end-qos-level\n"
		" qos-level\n  name: PD\n  sl: 8\n  pkey: 0x7fff\n"
		" end-qos-level\n"
		"end-qos-levels\n"
		"qos-match-rules\n"
		" qos-match-rule\n  service-id: 0x10\n  qos-level-name: L\n"
		" end-qos-match-rule\n"
		" qos-match-rule\n  qos-class: 3\n  qos-level-name: P5\n"
		" end-qos-match-rule\n"
		" qos-match-rule\n  qos-class: 4\n  qos-level-name: PD\n"
		" end-qos-match-rule\n"
		"end-qos-match-rules\n";
	const uint64_t sid = B(PR_SID_MSB) | B(PR_SID_LSB);
	struct qos_policy pol;
	struct qos_error e;
	struct sa_path_record t, r;
	uint8_t *part_sl;
	struct fx x;
	int32_t a, b;

	fx_load(&x, "tiny.net", 0);
	ck_assert_int_eq(qos_parse(policy, strlen(policy), &pol, &e), 0);
	a = by_desc(&x.f, "H0001 tiny host");
	b = by_desc(&x.f, "H0002 tiny host");
	x.v.qos = &pol;
	/* nothing matches: the default level's SL, the path as it is */
	pr_tmpl_lids(&t, lid_of(&x.f, a, 1), lid_of(&x.f, b, 1));
	ck_assert_uint_eq(pr_get(&x, &t, 0, &r, NULL), 1);
	ck_assert_uint_eq(be16toh(r.qos_class_sl) & 0xf, 1);
	ck_assert_uint_eq(r.pkt_life, 0x80 | 18);
	ck_assert_uint_gt(r.mtu & 0x3f, 2);
	ck_assert_uint_gt(r.rate & 0x3f, 3);
	ck_assert_uint_eq(be16toh(r.pkey), 0xffff);
	/* by service ID: SL, MTU and rate limits, packet lifetime */
	t.service_id = htobe64(0x10);
	ck_assert_uint_eq(pr_get(&x, &t, sid, &r, NULL), 1);
	ck_assert_uint_eq(be16toh(r.qos_class_sl) & 0xf, 5);
	ck_assert_uint_eq(r.mtu, 0x80 | 2);
	ck_assert_uint_eq(r.rate, 0x80 | 3);
	ck_assert_uint_eq(r.pkt_life, 0x80 | 9);
	/* half a ServiceID is none (OpenSM needs both halves) */
	ck_assert_uint_eq(pr_get(&x, &t, B(PR_SID_LSB), &r, NULL), 1);
	ck_assert_uint_eq(be16toh(r.qos_class_sl) & 0xf, 1);
	/* a requested SL: the level's, or no record */
	t.qos_class_sl = htobe16(4);
	ck_assert_uint_eq(pr_get(&x, &t, sid | B(PR_SL), &r, NULL), 0);
	t.qos_class_sl = htobe16(5);
	ck_assert_uint_eq(pr_get(&x, &t, sid | B(PR_SL), &r, NULL), 1);
	/* a selector asking for more than the level allows: no record */
	t.mtu = (uint8_t)(2 << 6 | 4);
	ck_assert_uint_eq(pr_get(&x, &t, sid | B(PR_MTU_SEL) | B(PR_MTU), &r,
				 NULL), 0);
	t.mtu = (uint8_t)(2 << 6 | 2);
	ck_assert_uint_eq(pr_get(&x, &t, sid | B(PR_MTU_SEL) | B(PR_MTU), &r,
				 NULL), 1);
	/* a level's P_Keys: none shared, no record; shared, its 15 bits */
	pr_tmpl_lids(&t, lid_of(&x.f, a, 1), lid_of(&x.f, b, 1));
	t.qos_class_sl = htobe16(3 << 4);
	ck_assert_uint_eq(pr_get(&x, &t, B(14), &r, NULL), 0);
	t.qos_class_sl = htobe16(4 << 4);
	ck_assert_uint_eq(pr_get(&x, &t, B(14), &r, NULL), 1);
	ck_assert_uint_eq(be16toh(r.pkey), 0x7fff);
	ck_assert_uint_eq(be16toh(r.qos_class_sl) & 0xf, 8);
	/* a requested P_Key the level does not name: no record */
	t.qos_class_sl = htobe16(3 << 4);
	t.pkey = htobe16(0xffff);
	ck_assert_uint_eq(pr_get(&x, &t, B(14) | B(PR_PKEY), &r, NULL), 0);
	x.v.qos = NULL;
	qos_policy_free(&pol);

	/* no policy: the partition's SL (partitions.conf sl=) */
	part_sl = calloc(0x8000, 1);
	ck_assert_ptr_nonnull(part_sl);
	part_sl[0x7fff] = 6;
	x.v.part_sl = part_sl;
	pr_tmpl_lids(&t, lid_of(&x.f, a, 1), lid_of(&x.f, b, 1));
	ck_assert_uint_eq(pr_get(&x, &t, 0, &r, NULL), 1);
	ck_assert_uint_eq(be16toh(r.qos_class_sl) & 0xf, 6);
	t.qos_class_sl = htobe16(2);
	ck_assert_uint_eq(pr_get(&x, &t, B(PR_SL), &r, NULL), 1);
	ck_assert_uint_eq(be16toh(r.qos_class_sl) & 0xf, 2);
	x.v.part_sl = NULL;
	free(part_sl);
	/* neither: SL 0 as before */
	pr_tmpl_lids(&t, lid_of(&x.f, a, 1), lid_of(&x.f, b, 1));
	ck_assert_uint_eq(pr_get(&x, &t, 0, &r, NULL), 1);
	ck_assert_uint_eq(be16toh(r.qos_class_sl), 0);
	fx_free(&x);
}
END_TEST

/* ---- PathRecord: GIDs, halves, the world ------------------------------ */

START_TEST(test_path_gids)
{
	struct fx x;
	struct sa_path_record t, r;
	struct sa_table tb;
	int32_t h1, h9;
	size_t ends;

	fx_load(&x, "fat2-small.net", 0);
	x.v.subnet_prefix = 0x20010db800000001ull;
	h1 = by_desc(&x.f, "H0001 HCA-1");
	h9 = by_desc(&x.f, "H0009 HCA-1");
	ends = n_endports(&x.f);
	memset(&t, 0, sizeof(t));
	/* link-local and subnet-prefix GIDs both name the port */
	gid_of(&x, h1, 1, t.sgid, 0xfe80000000000000ull);
	gid_of(&x, h9, 1, t.dgid, 0x20010db800000001ull);
	ck_assert_int_eq(query(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET,
			       B(PR_SGID) | B(PR_DGID), 0, &t, sizeof(t), &tb), 0);
	ck_assert_uint_eq(tb.count, 1);
	memcpy(&r, tb.buf, sizeof(r));
	free(tb.buf);
	ck_assert_uint_eq(be16toh(r.slid), lid_of(&x.f, h1, 1));
	ck_assert_uint_eq(be16toh(r.dlid), lid_of(&x.f, h9, 1));
	ck_assert_uint_eq(be64toh(*(uint64_t *)r.sgid), 0x20010db800000001ull);
	ck_assert_uint_eq(be64toh(*(uint64_t *)r.dgid), 0x20010db800000001ull);
	/* fe81:: is link-local too (fe80::/10) */
	t.sgid[1] = 0x81;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PATH_RECORD, B(PR_SGID) | B(PR_DGID),
				&t, sizeof(t)), 1);
	/* another subnet (no router), a multicast DGID, an unknown GUID */
	gid_of(&x, h1, 1, t.sgid, 0x2001000000000000ull);
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PATH_RECORD, B(PR_SGID) | B(PR_DGID),
				&t, sizeof(t)), 0);
	gid_of(&x, h1, 1, t.sgid, 0xfe80000000000000ull);
	t.dgid[0] = 0xff;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PATH_RECORD, B(PR_SGID) | B(PR_DGID),
				&t, sizeof(t)), 0);
	gid_of(&x, h9, 1, t.dgid, 0xfe80000000000000ull);
	t.dgid[15] ^= 0x55;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PATH_RECORD, B(PR_SGID) | B(PR_DGID),
				&t, sizeof(t)), 0);
	/* SGID with a DLID; with a SLID that is not the SGID port's */
	gid_of(&x, h9, 1, t.dgid, 0xfe80000000000000ull);
	t.dlid = htobe16(lid_of(&x.f, h9, 1));
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PATH_RECORD, B(PR_SGID) | B(PR_DLID),
				&t, sizeof(t)), 1);
	t.slid = htobe16(lid_of(&x.f, h9, 1));
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PATH_RECORD,
				B(PR_SGID) | B(PR_SLID) | B(PR_DLID), &t, sizeof(t)), 0);
	/* half queries: from one port to every end port, and back */
	memset(&t, 0, sizeof(t));
	gid_of(&x, h1, 1, t.sgid, 0xfe80000000000000ull);
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PATH_RECORD, B(PR_SGID), &t,
				sizeof(t)), ends);
	t.dlid = htobe16(lid_of(&x.f, h9, 1));
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PATH_RECORD, B(PR_DLID), &t,
				sizeof(t)), ends);
	ck_assert_int_eq(query(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET,
			       B(PR_DLID), 0, &t, sizeof(t), &tb), 0);
	ck_assert_uint_eq(tb.count, 1);
	free(tb.buf);
	/* the world: every ordered pair; a Get: the first one */
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PATH_RECORD, 0, NULL, 0), ends * ends);
	ck_assert_int_eq(query(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET, 0, 0,
			       NULL, 0, &tb), 0);
	ck_assert_uint_eq(tb.count, 1);
	free(tb.buf);
	/* unknown LIDs */
	pr_tmpl_lids(&t, lid_of(&x.f, h1, 1), (uint16_t)(x.f.max_lid + 1));
	ck_assert_uint_eq(pr_get(&x, &t, 0, NULL, NULL), 0);
	pr_tmpl_lids(&t, 0, lid_of(&x.f, h1, 1));
	ck_assert_uint_eq(pr_get(&x, &t, 0, NULL, NULL), 0);
	fx_free(&x);
}
END_TEST

START_TEST(test_path_world_limit)
{
	struct fx x;
	struct sa_table tb;

	/* 1234 end ports: 1.5 million paths, more than one answer may hold */
	fx_load(&x, "fat2-1152.net", 0);
	ck_assert_int_eq(query(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET_TABLE,
			       0, 0, NULL, 0, &tb), -SA_STATUS_NO_RESOURCES);
	free(tb.buf);
	fx_free(&x);
}
END_TEST

/* ---- PathRecord: selectors and the other inputs ----------------------- */

struct sel_case {
	uint64_t mask;
	uint8_t mtu, rate, pkt_life;
	int rc;
	size_t n;
	uint8_t want_mtu, want_rate, want_pl;
};

START_TEST(test_path_selectors)
{
	/* path H0001 -> H0009: MTU 4 (2048), rate 16 (100 Gb/s), life 18 */
	static const struct sel_case cases[] = {
		/* MTU */
		{ B(PR_MTU_SEL) | B(PR_MTU), 0 << 6 | 4, 0, 0, 0, 0, 0, 0, 0 },
		{ B(PR_MTU_SEL) | B(PR_MTU), 0 << 6 | 3, 0, 0, 0, 1, 4, 16, 18 },
		{ B(PR_MTU_SEL) | B(PR_MTU), 1 << 6 | 4, 0, 0, 0, 1, 3, 16, 18 },
		{ B(PR_MTU_SEL) | B(PR_MTU), 1 << 6 | 5, 0, 0, 0, 1, 4, 16, 18 },
		{ B(PR_MTU_SEL) | B(PR_MTU), 1 << 6 | 1, 0, 0, 0, 0, 0, 0, 0 },
		{ B(PR_MTU_SEL) | B(PR_MTU), 2 << 6 | 2, 0, 0, 0, 1, 2, 16, 18 },
		{ B(PR_MTU_SEL) | B(PR_MTU), 2 << 6 | 5, 0, 0, 0, 0, 0, 0, 0 },
		{ B(PR_MTU_SEL) | B(PR_MTU), 3 << 6 | 1, 0, 0, 0, 1, 4, 16, 18 },
		{ B(PR_MTU_SEL) | B(PR_MTU), 0 << 6 | 0, 0, 0,
		  -SA_STATUS_REQ_INVALID, 0, 0, 0, 0 },
		{ B(PR_MTU_SEL) | B(PR_MTU), 1 << 6 | 6, 0, 0,
		  -SA_STATUS_REQ_INVALID, 0, 0, 0, 0 },
		{ B(PR_MTU), 0 << 6 | 5, 0, 0, 0, 1, 4, 16, 18 },	/* no selector */
		{ B(PR_MTU_SEL), 0 << 6 | 0, 0, 0, 0, 1, 4, 16, 18 },	/* no value */
		/* Rate */
		{ B(PR_RATE_SEL) | B(PR_RATE), 0, 1 << 6 | 16, 0, 0, 1, 4, 10, 18 },
		{ B(PR_RATE_SEL) | B(PR_RATE), 0, 1 << 6 | 3, 0, 0, 1, 4, 5, 18 },
		{ B(PR_RATE_SEL) | B(PR_RATE), 0, 1 << 6 | 2, 0, 0, 0, 0, 0, 0 },
		{ B(PR_RATE_SEL) | B(PR_RATE), 0, 1 << 6 | 17, 0, 0, 1, 4, 16, 18 },
		{ B(PR_RATE_SEL) | B(PR_RATE), 0, 0 << 6 | 15, 0, 0, 1, 4, 16, 18 },
		{ B(PR_RATE_SEL) | B(PR_RATE), 0, 0 << 6 | 10, 0, 0, 1, 4, 16, 18 },
		{ B(PR_RATE_SEL) | B(PR_RATE), 0, 0 << 6 | 16, 0, 0, 0, 0, 0, 0 },
		{ B(PR_RATE_SEL) | B(PR_RATE), 0, 0 << 6 | 21, 0, 0, 0, 0, 0, 0 },
		{ B(PR_RATE_SEL) | B(PR_RATE), 0, 2 << 6 | 16, 0, 0, 1, 4, 16, 18 },
		{ B(PR_RATE_SEL) | B(PR_RATE), 0, 2 << 6 | 3, 0, 0, 0, 0, 0, 0 },
		{ B(PR_RATE_SEL) | B(PR_RATE), 0, 3 << 6 | 2, 0, 0, 1, 4, 16, 18 },
		{ B(PR_RATE_SEL) | B(PR_RATE), 0, 0 << 6 | 1, 0,
		  -SA_STATUS_REQ_INVALID, 0, 0, 0, 0 },
		{ B(PR_RATE_SEL) | B(PR_RATE), 0, 1 << 6 | 63, 0,
		  -SA_STATUS_REQ_INVALID, 0, 0, 0, 0 },
		/* PacketLifeTime */
		{ B(PR_PL_SEL) | B(PR_PL), 0, 0, 2 << 6 | 10, 0, 1, 4, 16, 10 },
		{ B(PR_PL_SEL) | B(PR_PL), 0, 0, 2 << 6 | 0, 0, 1, 4, 16, 0 },
		{ B(PR_PL_SEL) | B(PR_PL), 0, 0, 2 << 6 | 19, 0, 0, 0, 0, 0 },
		{ B(PR_PL_SEL) | B(PR_PL), 0, 0, 1 << 6 | 18, 0, 1, 4, 16, 17 },
		{ B(PR_PL_SEL) | B(PR_PL), 0, 0, 1 << 6 | 19, 0, 1, 4, 16, 18 },
		{ B(PR_PL_SEL) | B(PR_PL), 0, 0, 1 << 6 | 2, 0, 1, 4, 16, 1 },
		{ B(PR_PL_SEL) | B(PR_PL), 0, 0, 1 << 6 | 1, 0, 0, 0, 0, 0 },
		{ B(PR_PL_SEL) | B(PR_PL), 0, 0, 0 << 6 | 17, 0, 1, 4, 16, 18 },
		{ B(PR_PL_SEL) | B(PR_PL), 0, 0, 0 << 6 | 18, 0, 0, 0, 0, 0 },
		{ B(PR_PL_SEL) | B(PR_PL), 0, 0, 3 << 6 | 63, 0, 1, 4, 16, 18 },
		/* together */
		{ B(PR_MTU_SEL) | B(PR_MTU) | B(PR_RATE_SEL) | B(PR_RATE),
		  2 << 6 | 3, 1 << 6 | 7, 0, 0, 1, 3, 19, 18 },
	};
	struct fx x;
	int32_t h1, h9;

	fx_load(&x, "fat2-small.net", 0);
	h1 = by_desc(&x.f, "H0001 HCA-1");
	h9 = by_desc(&x.f, "H0009 HCA-1");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct sel_case *c = &cases[i];
		struct sa_path_record t, r;
		int rc;
		size_t n;

		pr_tmpl_lids(&t, lid_of(&x.f, h1, 1), lid_of(&x.f, h9, 1));
		t.mtu = c->mtu;
		t.rate = c->rate;
		t.pkt_life = c->pkt_life;
		n = pr_get(&x, &t, c->mask, &r, &rc);
		ck_assert_msg(rc == c->rc && n == c->n,
			      "case %zu: rc %d n %zu, want %d %zu", i, rc, n,
			      c->rc, c->n);
		if (!n)
			continue;
		ck_assert_msg(r.mtu == (0x80 | c->want_mtu) &&
			      r.rate == (0x80 | c->want_rate) &&
			      r.pkt_life == (0x80 | c->want_pl),
			      "case %zu: mtu %#x rate %#x life %#x", i, r.mtu,
			      r.rate, r.pkt_life);
	}
	fx_free(&x);
}
END_TEST

START_TEST(test_path_inputs)
{
	struct fx x;
	struct sa_path_record t, r;
	int32_t h1, h9;
	uint16_t s, d;

	fx_load(&x, "fat2-small.net", 0);
	h1 = by_desc(&x.f, "H0001 HCA-1");
	h9 = by_desc(&x.f, "H0009 HCA-1");
	s = lid_of(&x.f, h1, 1);
	d = lid_of(&x.f, h9, 1);
	/* P_Key: the default partition, either membership, is echoed */
	pr_tmpl_lids(&t, s, d);
	t.pkey = htobe16(0x7fff);
	ck_assert_uint_eq(pr_get(&x, &t, B(PR_PKEY), &r, NULL), 1);
	ck_assert_uint_eq(be16toh(r.pkey), 0x7fff);
	t.pkey = htobe16(0x8001);
	ck_assert_uint_eq(pr_get(&x, &t, B(PR_PKEY), &r, NULL), 0);
	t.pkey = 0;
	ck_assert_uint_eq(pr_get(&x, &t, B(PR_PKEY), &r, NULL), 0);
	/* raw traffic: no P_Key */
	pr_tmpl_lids(&t, s, d);
	t.hop_flow_raw = htobe32(0x80000000u);
	ck_assert_uint_eq(pr_get(&x, &t, B(PR_RAW), &r, NULL), 1);
	ck_assert_uint_eq(r.pkey, 0);
	ck_assert_uint_eq(r.hop_flow_raw, 0);
	t.pkey = htobe16(0xffff);		/* raw wins over a P_Key */
	ck_assert_uint_eq(pr_get(&x, &t, B(PR_RAW) | B(PR_PKEY), &r, NULL), 1);
	ck_assert_uint_eq(r.pkey, 0);
	/* SL: echoed; QoSClass ignored */
	pr_tmpl_lids(&t, s, d);
	t.qos_class_sl = htobe16(0x0125);
	ck_assert_uint_eq(pr_get(&x, &t, B(PR_SL), &r, NULL), 1);
	ck_assert_uint_eq(be16toh(r.qos_class_sl), 5);
	ck_assert_uint_eq(pr_get(&x, &t, B(14), &r, NULL), 1);
	ck_assert_uint_eq(be16toh(r.qos_class_sl), 0);
	/* ServiceID, FlowLabel, HopLimit, TClass, Preference: ignored */
	pr_tmpl_lids(&t, s, d);
	t.service_id = htobe64(0x1000000000000001ull);
	t.hop_flow_raw = htobe32(0x00012340 | 7);
	t.tclass = 0x20;
	t.preference = 1;
	ck_assert_uint_eq(pr_get(&x, &t, B(PR_SID_MSB) | B(PR_SID_LSB) | B(PR_FLOW) |
				 B(PR_HOP) | B(PR_TCLASS) | B(22), &r, NULL), 1);
	ck_assert_uint_eq(r.service_id, 0);
	ck_assert_uint_eq(r.hop_flow_raw, 0);
	ck_assert_uint_eq(r.tclass, 0);
	ck_assert_uint_eq(r.preference, 0);
	/* Reversible asked for and available */
	pr_tmpl_lids(&t, s, d);
	t.num_path = 0x80;
	ck_assert_uint_eq(pr_get(&x, &t, B(PR_REVERSIBLE), &r, NULL), 1);
	/* loopback */
	pr_tmpl_lids(&t, s, s);
	ck_assert_uint_eq(pr_get(&x, &t, 0, &r, NULL), 1);
	ck_assert_uint_eq(r.pkt_life, 0x80);
	ck_assert_uint_eq(r.mtu, 0x84);
	ck_assert(!memcmp(r.sgid, r.dgid, 16));
	fx_free(&x);
}
END_TEST

/* Broken LFTs: no path; a path that does not come back: not reversible. */
START_TEST(test_path_broken_routes)
{
	struct fx x;
	struct sa_path_record t, r;
	int32_t h1, h9, leaf1, leaf3;
	uint16_t s, d;

	fx_load(&x, "fat2-small.net", 0);
	h1 = by_desc(&x.f, "H0001 HCA-1");
	h9 = by_desc(&x.f, "H0009 HCA-1");
	leaf1 = by_desc(&x.f, "leaf-01");
	leaf3 = by_desc(&x.f, "leaf-03");
	s = lid_of(&x.f, h1, 1);
	d = lid_of(&x.f, h9, 1);
	/* leaf-03 loses its way back to H0001 */
	x.r.lft[leaf3].port[s] = LFT_NO_PATH;
	pr_tmpl_lids(&t, s, d);
	ck_assert_uint_eq(pr_get(&x, &t, 0, &r, NULL), 1);
	ck_assert_uint_eq(r.num_path, 0);
	t.num_path = 0x80;
	ck_assert_uint_eq(pr_get(&x, &t, B(PR_REVERSIBLE), &r, NULL), 0);
	t.num_path = 0;				/* reversible: don't care */
	ck_assert_uint_eq(pr_get(&x, &t, B(PR_REVERSIBLE), &r, NULL), 1);
	pr_tmpl_lids(&t, d, s);
	ck_assert_uint_eq(pr_get(&x, &t, 0, &r, NULL), 0);
	/* a loop between leaf-01 and a spine */
	x.r.lft[leaf3].port[s] = 5;
	x.r.lft[leaf1].port[d] = 5;
	int32_t spine = x.f.nodes[leaf1].ports[5].peer_node;
	uint8_t back = x.f.nodes[leaf1].ports[5].peer_port;

	x.r.lft[spine].port[d] = back;
	pr_tmpl_lids(&t, s, d);
	ck_assert_uint_eq(pr_get(&x, &t, 0, &r, NULL), 0);
	/* an LFT pointing at an uncabled port, one past the top */
	x.r.lft[leaf1].port[d] = 30;
	ck_assert_uint_eq(pr_get(&x, &t, 0, &r, NULL), 0);
	x.r.lft[leaf1].port[d] = 200;
	ck_assert_uint_eq(pr_get(&x, &t, 0, &r, NULL), 0);
	/* no routes at all: only a loopback */
	x.v.routes = NULL;
	ck_assert_uint_eq(pr_get(&x, &t, 0, &r, NULL), 0);
	pr_tmpl_lids(&t, s, s);
	ck_assert_uint_eq(pr_get(&x, &t, 0, &r, NULL), 1);
	fx_free(&x);
}
END_TEST

/* ---- PathRecord with LMC ---------------------------------------------- */

START_TEST(test_path_lmc)
{
	struct fx x;
	struct sa_path_record t;
	struct sa_table tb;
	int32_t h1, h9;
	uint16_t s, d;
	bool seen[4][4] = { { false } };

	fx_load(&x, "fat2-small.net", 2);
	h1 = by_desc(&x.f, "H0001 HCA-1");
	h9 = by_desc(&x.f, "H0009 HCA-1");
	s = lid_of(&x.f, h1, 1);
	d = lid_of(&x.f, h9, 1);
	ck_assert_uint_eq(x.f.nodes[h1].ports[1].lmc, 2);
	memset(&t, 0, sizeof(t));
	gid_of(&x, h1, 1, t.sgid, SUBNET_PREFIX);
	gid_of(&x, h9, 1, t.dgid, SUBNET_PREFIX);
	/* every LID pair, the four disjoint ones first */
	ck_assert_uint_eq(table(&x.v, SA_ATTR_PATH_RECORD, B(PR_SGID) | B(PR_DGID),
				&t, sizeof(t), &tb), 16);
	for (size_t i = 0; i < tb.count; i++) {
		const struct sa_path_record *p = REC(&tb, struct sa_path_record, i);
		unsigned so = be16toh(p->slid) - s, dof = be16toh(p->dlid) - d;

		ck_assert_uint_lt(so, 4);
		ck_assert_uint_lt(dof, 4);
		ck_assert(!seen[so][dof]);
		seen[so][dof] = true;
		ck_assert_uint_eq(p->preference, i < 4 ? 0 : 2);
		if (i < 4)
			ck_assert_uint_eq(so, dof);
		ck_assert_uint_eq(p->mtu, 0x84);
		ck_assert_uint_eq(p->num_path, 0x80);
	}
	free(tb.buf);
	/* NumbPath: at most that many; 0: none */
	t.num_path = 3;
	ck_assert_uint_eq(table(&x.v, SA_ATTR_PATH_RECORD,
				B(PR_SGID) | B(PR_DGID) | B(PR_NUMB_PATH), &t,
				sizeof(t), &tb), 3);
	for (size_t i = 0; i < 3; i++)
		ck_assert_uint_eq(be16toh(REC(&tb, struct sa_path_record, i)->slid), s + i);
	free(tb.buf);
	t.num_path = 0x80 | 5;			/* Reversible bit aside */
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PATH_RECORD,
				B(PR_SGID) | B(PR_DGID) | B(PR_NUMB_PATH), &t,
				sizeof(t)), 5);
	t.num_path = 0;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PATH_RECORD,
				B(PR_SGID) | B(PR_DGID) | B(PR_NUMB_PATH), &t,
				sizeof(t)), 0);
	t.num_path = 127;
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PATH_RECORD,
				B(PR_SGID) | B(PR_DGID) | B(PR_NUMB_PATH), &t,
				sizeof(t)), 16);
	/* a Get: one, the base LIDs */
	ck_assert_int_eq(query(&x.v, SA_ATTR_PATH_RECORD, MAD_METHOD_GET,
			       B(PR_SGID) | B(PR_DGID), 0, &t, sizeof(t), &tb), 0);
	ck_assert_uint_eq(tb.count, 1);
	ck_assert_uint_eq(be16toh(REC(&tb, struct sa_path_record, 0)->slid), s);
	ck_assert_uint_eq(be16toh(REC(&tb, struct sa_path_record, 0)->dlid), d);
	free(tb.buf);
	/* one SLID fixed: four paths */
	t.slid = htobe16((uint16_t)(s + 2));
	ck_assert_uint_eq(table(&x.v, SA_ATTR_PATH_RECORD,
				B(PR_SGID) | B(PR_DGID) | B(PR_SLID), &t,
				sizeof(t), &tb), 4);
	for (size_t i = 0; i < 4; i++)
		ck_assert_uint_eq(be16toh(REC(&tb, struct sa_path_record, i)->slid), s + 2);
	free(tb.buf);
	/* by LIDs inside the ranges */
	pr_tmpl_lids(&t, (uint16_t)(s + 3), (uint16_t)(d + 1));
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PATH_RECORD, B(PR_SLID) | B(PR_DLID),
				&t, sizeof(t)), 1);
	/* host to switch (LMC 0 on a base port 0): four */
	t.dlid = htobe16(lid_of(&x.f, by_desc(&x.f, "spine-01"), 0));
	ck_assert_uint_eq(count(&x.v, SA_ATTR_PATH_RECORD, B(PR_DLID), &t,
				sizeof(t)), n_endports(&x.f) + 3 * 16);
	fx_free(&x);
}
END_TEST

/* The index follows the model: new LIDs on the same arrays. */
START_TEST(test_index_follows_model)
{
	struct fx x;
	struct sa_node_record tm;
	struct sa_table t;
	int32_t h1, h2;
	uint16_t l1, l2;
	struct lid_policy pol = { .lmc = 1, .reassign = true };

	fx_load(&x, "fat2-small.net", 0);
	h1 = by_desc(&x.f, "H0001 HCA-1");
	h2 = by_desc(&x.f, "H0002 HCA-1");
	l1 = lid_of(&x.f, h1, 1);
	l2 = lid_of(&x.f, h2, 1);
	memset(&tm, 0, sizeof(tm));
	tm.lid = htobe16(l1);
	ck_assert_uint_eq(count(&x.v, SA_ATTR_NODE_RECORD, B(NR_LID), &tm, sizeof(tm)), 1);
	/* swap two hosts' LIDs in place: same arrays, same max_lid */
	x.f.nodes[h1].ports[1].lid = l2;
	x.f.nodes[h2].ports[1].lid = l1;
	ck_assert_uint_eq(table(&x.v, SA_ATTR_NODE_RECORD, B(NR_LID), &tm,
				sizeof(tm), &t), 1);
	ck_assert_uint_eq(be64toh(REC(&t, struct sa_node_record, 0)->node_info.node_guid),
			  x.f.nodes[h2].guid);
	free(t.buf);
	/* LMC 1 everywhere, new max_lid, new routes */
	ck_assert_int_eq(lid_assign(&x.f, NULL, &pol, NULL), 0);
	fx_route(&x);
	fx_view(&x);
	tm.lid = htobe16((uint16_t)(lid_of(&x.f, h1, 1) + 1));
	ck_assert_uint_eq(table(&x.v, SA_ATTR_NODE_RECORD, B(NR_LID), &tm,
				sizeof(tm), &t), 1);
	ck_assert_uint_eq(be64toh(REC(&t, struct sa_node_record, 0)->node_info.node_guid),
			  x.f.nodes[h1].guid);
	free(t.buf);
	fx_free(&x);
	/* another model altogether */
	fx_load(&x, "torus-4x4.net", 0);
	ck_assert_uint_eq(count(&x.v, SA_ATTR_NODE_RECORD, 0, NULL, 0),
			  n_endports(&x.f));
	tm.lid = htobe16(x.f.max_lid);
	ck_assert_uint_eq(count(&x.v, SA_ATTR_NODE_RECORD, B(NR_LID), &tm, sizeof(tm)), 1);
	fx_free(&x);
}
END_TEST

/* Random templates and masks through every generator: no crash, sane rc. */
START_TEST(test_random_queries)
{
	static const uint16_t ids[] = {
		SA_ATTR_CLASS_PORT_INFO, SA_ATTR_NODE_RECORD,
		SA_ATTR_PORT_INFO_RECORD, SA_ATTR_SWITCH_INFO_RECORD,
		SA_ATTR_LFT_RECORD, SA_ATTR_SM_INFO_RECORD, SA_ATTR_LINK_RECORD,
		SA_ATTR_GUID_INFO_RECORD, SA_ATTR_PATH_RECORD,
	};
	struct fx x;
	uint64_t rng = 42;

	fx_load(&x, "twoport-16.net", 1);
	for (unsigned n = 0; n < 5000; n++) {
		const struct sa_attr *a;
		uint8_t data[SA_DATA_SIZE];
		struct sa_query q;
		struct sa_table t;
		uint64_t mask;
		int rc;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		a = sa_attr_find(ids[(rng >> 33) % (sizeof(ids) / sizeof(ids[0]))]);
		for (size_t i = 0; i < sizeof(data); i++) {
			rng = rng * 6364136223846793005ull + 1442695040888963407ull;
			data[i] = (uint8_t)(rng >> 56);
		}
		/* LIDs the fabric has, in the first bytes, half the time */
		if (rng & 1) {
			uint16_t lid = htobe16((uint16_t)(1 + (rng >> 40) % x.f.max_lid));

			memcpy(data, &lid, 2);
			memcpy(data + 4, &lid, 2);
			memcpy(data + 40, &lid, 2);
			memcpy(data + 42, &lid, 2);
		}
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		mask = (rng >> 11) & (rng >> 7) & (rng >> 3);	/* sparse */
		if (a->nfields < 64)
			mask &= (1ull << a->nfields) - 1;
		q = (struct sa_query){ .method = rng & 1 ? MAD_METHOD_GET :
					       MAD_METHOD_GET_TABLE,
				       .attr_id = a->attr_id,
				       .attr_mod = (uint32_t)(rng >> 32),
				       .comp_mask = mask, .tmpl = data,
				       .tmpl_len = sizeof(data) };
		memset(&t, 0, sizeof(t));
		t.rec_size = a->rec_size;
		rc = a->gen(&x.v, &q, &t);
		ck_assert_msg(rc == 0 || rc == -SA_STATUS_REQ_INVALID,
			      "%s mask %#llx: rc %d", a->name,
			      (unsigned long long)mask, rc);
		if (a->attr_id == SA_ATTR_PATH_RECORD && q.method == MAD_METHOD_GET)
			ck_assert_uint_le(t.count, 1);
		free(t.buf);
	}
	fx_free(&x);
}
END_TEST

static Suite *sa_records_suite(void)
{
	Suite *s = suite_create("sa_records");
	TCase *tc = tcase_create("records");
	TCase *pr = tcase_create("paths");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_tables);
	tcase_add_test(tc, test_match_sub_byte);
	tcase_add_test(tc, test_empty_view);
	tcase_add_test(tc, test_class_port_info);
	tcase_add_test(tc, test_class_port_info_flags);
	tcase_add_test(tc, test_rate_original);
	tcase_add_test(tc, test_node_records);
	tcase_add_test(tc, test_node_record_fields);
	tcase_add_test(tc, test_port_info_records);
	tcase_add_test(tc, test_port_info_mkey_trusted);
	tcase_add_test(tc, test_port_info_sub_byte);
	tcase_add_test(tc, test_port_info_ext_speed);
	tcase_add_test(tc, test_link_records);
	tcase_add_test(tc, test_link_record_filters);
	tcase_add_test(tc, test_switch_info_records);
	tcase_add_test(tc, test_lft_records);
	tcase_add_test(tc, test_sm_info_record);
	tcase_add_test(tc, test_guid_info_records);
	tcase_add_test(tc, test_index_follows_model);
	tcase_add_test(tc, test_random_queries);
	suite_add_tcase(s, tc);

	tcase_set_timeout(pr, 600);
	tcase_add_test(pr, test_path_all_pairs);
	tcase_add_test(pr, test_path_tiny);
	tcase_add_test(pr, test_path_qos);
	tcase_add_test(pr, test_path_gids);
	tcase_add_test(pr, test_path_world_limit);
	tcase_add_test(pr, test_path_selectors);
	tcase_add_test(pr, test_path_inputs);
	tcase_add_test(pr, test_path_broken_routes);
	tcase_add_test(pr, test_path_lmc);
	suite_add_tcase(s, pr);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sa_records_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
