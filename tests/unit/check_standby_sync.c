/*
 * check_standby_sync.c - the standby's copy (sm/ha/sync.c): the
 * tables a master's SA answers (a first struct sm: groups, services,
 * subscriptions made on it), taken into a copy with hostile records
 * mixed in (dropped), bounded by caps, then installed into a second
 * struct sm whose SA answers the same records.
 */
#include "config.h"

#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/sa_wire.h"
#include "sm/mcast/mcast.h"
#include "sm/sa/mcmember.h"
#include "sm/sa/service.h"
#include "sm/ha/sync.h"
#include "tests/unit/agent_fixture.h"

#define PREFIX	0xfe80000000000000ull

static uint64_t guid_of_lid(struct agent_fx *x, uint16_t lid)
{
	for (size_t i = 0; i < x->sm.fabric.n_nodes; i++) {
		const struct fab_node *n = &x->sm.fabric.nodes[i];

		for (unsigned p = 0; p <= n->num_ports; p++)
			if (n->ports[p].lid == lid && n->ports[p].guid)
				return n->ports[p].guid;
	}
	ck_abort_msg("no port with LID %u", lid);
	return 0;
}

static void gid_of(uint64_t guid, uint8_t gid[16])
{
	uint64_t p = htobe64(PREFIX), g = htobe64(guid);

	memcpy(gid, &p, 8);
	memcpy(gid + 8, &g, 8);
}

/* NodeRecords of the model, as the master's SA lists them. */
static void node_table(struct agent_fx *x, struct sa_table *t)
{
	for (size_t i = 0; i < x->sm.fabric.n_nodes; i++) {
		const struct fab_node *n = &x->sm.fabric.nodes[i];

		for (unsigned p = 0; p <= n->num_ports; p++) {
			struct sa_node_record r;

			if (!n->ports[p].lid || !n->ports[p].guid)
				continue;
			memset(&r, 0, sizeof(r));
			r.lid = htobe16(n->ports[p].lid);
			r.node_info.node_type = n->type;
			r.node_info.port_guid = htobe64(n->ports[p].guid);
			ck_assert_int_eq(sa_table_add(t, &r), 0);
		}
	}
}

/* A trusted GetTable of `attr` answered by x's SA state. */
static void get_table(struct agent_fx *x, uint16_t attr, size_t rec_size,
		      struct sa_table *t)
{
	static uint8_t tmpl[SA_DATA_SIZE];
	static const uint8_t zero[16];
	struct sa_query q = {
		.method = MAD_METHOD_GET_TABLE, .attr_id = attr,
		.tmpl = tmpl, .tmpl_len = sizeof(tmpl),
		.requester_lid = x->ca_lid[3], .sm_key = SA_SM_KEY_TRUSTED,
	};
	int rc;

	memset(t, 0, sizeof(*t));
	t->rec_size = rec_size;
	t->stride = sa_record_stride(rec_size) * 8;
	if (attr == SA_ATTR_NODE_RECORD) {
		node_table(x, t);
		return;
	}
	if (attr == SA_ATTR_MCMEMBER_RECORD)
		rc = sa_mcmember_serve(&x->sm, &q, t);
	else if (attr == SA_ATTR_SERVICE_RECORD)
		rc = sa_service_request(sa_agent_state(&x->sm), &q, zero,
					ev_now(x->sm.loop), t);
	else
		rc = sa_inform_records(sa_agent_state(&x->sm), &q, t);
	ck_assert_int_eq(rc, 0);
}

static void take(struct sb_copy *c, const struct sb_limits *lim,
		 struct agent_fx *x, uint16_t attr, size_t rec_size,
		 void (*spoil)(struct sa_table *t))
{
	struct sa_table t;

	get_table(x, attr, rec_size, &t);
	if (spoil)
		spoil(&t);
	ck_assert_int_eq(sb_copy_take(c, lim, attr, t.buf, t.count * t.stride,
				      t.stride, ev_now(x->sm.loop)), 0);
	free(t.buf);
}

/* Hostile records appended to the master's answers. */
static void bad_members(struct sa_table *t)
{
	struct sa_mcmember_record r = *(struct sa_mcmember_record *)t->buf;

	r.port_gid[15] ^= 0x5a;			/* no port of the fabric */
	ck_assert_int_eq(sa_table_add(t, &r), 0);
	r = *(struct sa_mcmember_record *)t->buf;
	r.mlid = htobe16(0x1234);		/* a unicast LID */
	ck_assert_int_eq(sa_table_add(t, &r), 0);
	r = *(struct sa_mcmember_record *)t->buf;
	r.scope_state &= 0xf0;			/* JoinState 0 */
	ck_assert_int_eq(sa_table_add(t, &r), 0);
}

static void bad_services(struct sa_table *t)
{
	struct sa_service_record r = *(struct sa_service_record *)t->buf;

	r.service_gid[0] = 0x3f;		/* another subnet prefix */
	ck_assert_int_eq(sa_table_add(t, &r), 0);
}

static void bad_subs(struct sa_table *t)
{
	struct sa_inform_info_record r = *(struct sa_inform_info_record *)t->buf;

	r.inform_info.qpn_resp_time = 0;	/* Reports to QP 0 */
	ck_assert_int_eq(sa_table_add(t, &r), 0);
}

static void master_state(struct agent_fx *a, uint8_t mgid[2][16])
{
	int err;

	/* Two groups, the second at an MLID with a hole below it. */
	for (int i = 0; i < 2; i++) {
		struct mc_group *g;
		uint8_t gid[16];

		memset(mgid[i], 0, 16);
		mgid[i][0] = 0xff;
		mgid[i][1] = 0x12;
		mgid[i][15] = (uint8_t)(i + 1);
		g = mc_group_create_mlid(a->sm.mc, mgid[i], i ? 0xc010 : 0, &err);
		ck_assert_ptr_nonnull(g);
		g->pkey = 0xffff;
		g->qkey = 0x42 + i;
		g->mtu = 4;
		g->rate = 3;
		g->scope = 2;
		for (unsigned k = 0; k < 2u + i; k++) {
			gid_of(guid_of_lid(a, a->ca_lid[k]), gid);
			ck_assert_int_eq(mc_member_set(a->sm.mc, g, guid_of_lid(a, a->ca_lid[k]),
						       gid, k ? MC_JOIN_NON : MC_JOIN_FULL,
						       false), 0);
		}
	}
	/* A service of ca_lid[1] with a 100 s lease, one forever. */
	for (int i = 0; i < 2; i++) {
		uint8_t tmpl[SA_DATA_SIZE] = { 0 };
		struct sa_service_record *r = (void *)tmpl;
		struct sa_query q = {
			.method = MAD_METHOD_SET, .attr_id = SA_ATTR_SERVICE_RECORD,
			.comp_mask = 0x17, .tmpl = tmpl, .tmpl_len = sizeof(tmpl),
			.sm_key = SA_SM_KEY_TRUSTED,
		};
		struct sa_table t = { .rec_size = sizeof(*r) };
		uint8_t gid[16];

		r->service_id = htobe64(0x1000 + i);
		gid_of(guid_of_lid(a, a->ca_lid[1]), r->service_gid);
		r->service_pkey = htobe16(0xffff);
		r->service_lease = htobe32(i ? 0xffffffffu : 100);
		strcpy(r->service_name, "svc");
		gid_of(guid_of_lid(a, a->ca_lid[1]), gid);
		ck_assert_int_eq(sa_service_request(sa_agent_state(&a->sm), &q, gid,
						    ev_now(a->sm.loop), &t), 0);
		free(t.buf);
	}
	/* ca_lid[2] subscribes to trap 64 (QPN left 0: its request's QP). */
	{
		uint8_t tmpl[SA_DATA_SIZE] = { 0 };
		struct sa_inform_info *ii = (void *)tmpl;
		struct sa_query q = {
			.method = MAD_METHOD_SET, .attr_id = SA_ATTR_INFORM_INFO,
			.tmpl = tmpl, .tmpl_len = sizeof(tmpl),
		};
		struct mad_addr from = { .lid = a->ca_lid[2], .qpn = 1,
					 .qkey = 0x80010000u };
		struct sa_table t = { .rec_size = sizeof(*ii) };
		uint8_t gid[16];

		ii->lid_range_begin = htobe16(0xffff);
		ii->is_generic = 1;
		ii->subscribe = 1;
		ii->type = htobe16(0xffff);
		ii->trap_num = htobe16(64);
		gid_of(guid_of_lid(a, a->ca_lid[2]), gid);
		ck_assert_int_eq(sa_inform_set(sa_agent_state(&a->sm), &q, &from,
					       gid, &t), 0);
		free(t.buf);
	}
}

/* Records of two answers, the same set (order aside)? */
static void same_table(struct agent_fx *a, struct agent_fx *b, uint16_t attr,
		       size_t rec_size, size_t want, size_t cmp_len)
{
	struct sa_table ta, tb;

	get_table(a, attr, rec_size, &ta);
	get_table(b, attr, rec_size, &tb);
	ck_assert_uint_eq(ta.count, want);
	ck_assert_uint_eq(tb.count, want);
	for (size_t i = 0; i < ta.count; i++) {
		bool found = false;

		for (size_t j = 0; j < tb.count && !found; j++)
			found = !memcmp(ta.buf + i * ta.stride, tb.buf + j * tb.stride,
					cmp_len);
		ck_assert_msg(found, "attr 0x%x record %zu missing", attr, i);
	}
	free(ta.buf);
	free(tb.buf);
}

static void fx_free(struct agent_fx *x)
{
	standby_sync_free(&x->sm);
	mc_table_free(x->sm.mc);
	x->sm.mc = NULL;
	lid_cache_free(x->sm.lids);
	agent_fx_free(x);
}

START_TEST(test_copy_validate_adopt)
{
	struct agent_fx a, b;
	struct sb_copy c = { 0 };
	struct sb_limits lim = { .subnet_prefix = PREFIX };
	struct sb_adopt_report r;
	uint8_t mgid[2][16];

	agent_fx_init(&a, "fat2-small.net", true, 20, 1);
	a.sm.mc = mc_table_new(NULL);
	agent_fx_start(&a);
	master_state(&a, mgid);

	take(&c, &lim, &a, SA_ATTR_NODE_RECORD, sizeof(struct sa_node_record), NULL);
	ck_assert_uint_gt(c.n_lids, 8);
	ck_assert_uint_eq(c.dropped, 0);
	take(&c, &lim, &a, SA_ATTR_MCMEMBER_RECORD,
	     sizeof(struct sa_mcmember_record), bad_members);
	take(&c, &lim, &a, SA_ATTR_SERVICE_RECORD,
	     sizeof(struct sa_service_record), bad_services);
	take(&c, &lim, &a, SA_ATTR_INFORM_INFO_RECORD,
	     sizeof(struct sa_inform_info_record), bad_subs);
	ck_assert_uint_eq(c.n_mcm, 5);
	ck_assert_uint_eq(c.n_svc, 2);
	ck_assert_uint_eq(c.n_inf, 1);
	ck_assert_uint_eq(c.dropped, 5);
	/* The subscriber's QPN (0 in its request) came with the record. */
	ck_assert_uint_eq(be32toh(c.inf[0].inform_info.qpn_resp_time) >> 8, 1);

	/* A second SM (the standby) takes over. */
	agent_fx_init(&b, "fat2-small.net", true, 20, 1);
	b.sm.mc = mc_table_new(NULL);
	agent_fx_start(&b);
	ck_assert_int_eq(sb_copy_install(&b.sm, &c, ev_now(b.sm.loop), &r), 0);
	ck_assert_uint_eq(r.groups, 2);
	ck_assert_uint_eq(r.members, 5);
	ck_assert_uint_eq(r.services, 2);
	ck_assert_uint_eq(r.subscriptions, 1);
	ck_assert_uint_eq(r.refused, 0);
	ck_assert_uint_eq(r.lids, c.n_lids);
	/* MLIDs kept, LIDs in the guid2lid cache. */
	ck_assert_uint_eq(mc_find(b.sm.mc, mgid[1])->mlid, 0xc010);
	ck_assert_uint_eq(mc_find(b.sm.mc, mgid[0])->mlid,
			  mc_find(a.sm.mc, mgid[0])->mlid);
	{
		uint16_t lo, hi;
		uint64_t g = guid_of_lid(&a, a.ca_lid[2]);

		ck_assert(lid_cache_get(b.sm.lids, g, &lo, &hi));
		ck_assert_uint_eq(lo, a.ca_lid[2]);
	}
	/* The new master's SA answers what the old one did. */
	same_table(&a, &b, SA_ATTR_MCMEMBER_RECORD,
		   sizeof(struct sa_mcmember_record), 5,
		   sizeof(struct sa_mcmember_record));
	same_table(&a, &b, SA_ATTR_SERVICE_RECORD,
		   sizeof(struct sa_service_record), 2,
		   sizeof(struct sa_service_record));
	same_table(&a, &b, SA_ATTR_INFORM_INFO_RECORD,
		   sizeof(struct sa_inform_info_record), 1,
		   sizeof(struct sa_inform_info_record));
	/* Reports reach the subscriber: trap 64 goes to its LID, QP 1. */
	{
		struct mad_addr to = { .lid = a.ca_lid[2], .qpn = 1,
				       .qkey = 0x80010000u };

		ck_assert_uint_eq(sa_inform_dest_count(sa_agent_state(&b.sm), &to), 1);
	}
	sb_copy_free(&c);
	fx_free(&a);
	fx_free(&b);
}
END_TEST

/* Too many records: the cap holds; a stride shorter than the record is
 * refused; a lease that ran out meanwhile is not installed. */
START_TEST(test_caps_and_lengths)
{
	struct agent_fx a, b;
	struct sb_copy c = { 0 };
	struct sb_limits lim = { .subnet_prefix = PREFIX, .max_lids = 5,
				 .max_services = 1 };
	struct sb_adopt_report r;
	struct sa_table t;
	uint8_t mgid[2][16];

	agent_fx_init(&a, "fat2-small.net", true, 20, 1);
	a.sm.mc = mc_table_new(NULL);
	agent_fx_start(&a);
	master_state(&a, mgid);
	get_table(&a, SA_ATTR_NODE_RECORD, sizeof(struct sa_node_record), &t);
	ck_assert_int_eq(sb_copy_take(&c, &lim, SA_ATTR_NODE_RECORD, t.buf,
				      t.count * t.stride, 100, 0), -EPROTO);
	/* A cut record at the end is dropped, the rest taken. */
	ck_assert_int_eq(sb_copy_take(&c, &lim, SA_ATTR_NODE_RECORD, t.buf,
				      t.count * t.stride - 3, t.stride, 0), 0);
	ck_assert_uint_eq(c.n_lids, 5);
	ck_assert_uint_eq(c.over, t.count - 1 - 5);
	free(t.buf);
	sb_copy_free(&c);
	lim.max_lids = 0;
	take(&c, &lim, &a, SA_ATTR_NODE_RECORD, sizeof(struct sa_node_record), NULL);
	take(&c, &lim, &a, SA_ATTR_SERVICE_RECORD,
	     sizeof(struct sa_service_record), NULL);
	ck_assert_uint_eq(c.n_svc, 1);
	ck_assert_uint_eq(c.over, 1);
	/* 101 s later: a 100 s lease has run out (the infinite one stays). */
	agent_fx_init(&b, "fat2-small.net", true, 20, 1);
	b.sm.mc = mc_table_new(NULL);
	agent_fx_start(&b);
	c.svc_at = ev_now(b.sm.loop) - 101;
	ck_assert_int_eq(sb_copy_install(&b.sm, &c, ev_now(b.sm.loop), &r), 0);
	ck_assert_uint_eq(r.services,
			  be32toh(c.svc[0].service_lease) == 0xffffffffu ? 1 : 0);
	sb_copy_free(&c);
	fx_free(&a);
	fx_free(&b);
}
END_TEST

/*
 * The whole path: standby B fetches from master A through both MAD
 * engines (each fake transport's sent MADs handed to the other engine),
 * GetTable answered by A's SA agent with RMPP, ACKs back, then B takes
 * over.  `groups` groups of two members and `services` services on A.
 */
struct bridge {
	struct agent_fx *a, *b;
	size_t seen_a, seen_b;
	uint16_t a_lid, b_lid;
	bool spoil;		/* AttributeOffset 1 in A's answers */
};

static unsigned bridge_pump(struct bridge *br)
{
	unsigned moved = 0;

	ev_run(br->b->sm.loop, EVRUN_NOWAIT);
	ev_run(br->a->sm.loop, EVRUN_NOWAIT);
	while (br->seen_b < br->b->fk.n_sent) {
		struct fake_sent *f = &br->b->fk.sent[br->seen_b++];
		struct mad_addr from = { .lid = br->b_lid, .qpn = 1,
					 .qkey = 0x80010000u };

		if (f->addr.lid == br->a_lid && f->addr.qpn == 1) {
			mad_engine_recv(br->a->sm.engine, f->mad, f->len, &from, 0);
			moved++;
		}
	}
	while (br->seen_a < br->a->fk.n_sent) {
		struct fake_sent *f = &br->a->fk.sent[br->seen_a++];
		struct mad_addr from = { .lid = br->a_lid, .qpn = 1,
					 .qkey = 0x80010000u };

		if (f->addr.lid == br->b_lid && f->addr.qpn == 1) {
			if (br->spoil)
				((struct sa_mad *)f->mad)->attr_offset = htobe16(1);
			mad_engine_recv(br->b->sm.engine, f->mad, f->len, &from, 0);
			moved++;
		}
	}
	return moved;
}

static void many(struct agent_fx *a, unsigned groups, unsigned services)
{
	int err;

	for (unsigned i = 0; i < groups; i++) {
		uint8_t mgid[16] = { 0xff, 0x15, 0xa0, 0x1b };
		struct mc_group *g;

		mgid[14] = (uint8_t)(i >> 8);
		mgid[15] = (uint8_t)i;
		g = mc_group_create(a->sm.mc, mgid, &err);
		ck_assert_msg(g, "group %u: %d", i, err);
		g->pkey = 0xffff;
		g->qkey = 0x0b1b;
		g->mtu = 4;
		g->rate = 3;
		g->scope = 5;
		for (unsigned k = 0; k < 2; k++) {
			uint64_t guid = guid_of_lid(a, a->ca_lid[(i + k) % a->n_ca]);
			uint8_t gid[16];

			gid_of(guid, gid);
			ck_assert_int_eq(mc_member_set(a->sm.mc, g, guid, gid,
						       MC_JOIN_FULL, false), 0);
		}
	}
	for (unsigned i = 0; i < services; i++) {
		struct sa_service_record r;

		memset(&r, 0, sizeof(r));
		r.service_id = htobe64(0x5000 + i);
		gid_of(guid_of_lid(a, a->ca_lid[i % a->n_ca]), r.service_gid);
		r.service_pkey = htobe16(0xffff);
		snprintf(r.service_name, sizeof(r.service_name), "svc-%u", i);
		ck_assert_int_eq(sa_service_import(sa_agent_state(&a->sm), &r,
						   3600, ev_now(a->sm.loop)), 0);
	}
}

static void run_bridge(unsigned groups, unsigned services)
{
	struct agent_fx a, b;
	struct bridge br = { .a = &a, .b = &b };
	const struct sb_copy *c;
	uint8_t mgid[2][16];
	struct mc_limits ml = { .groups_per_port = 4096 };
	clock_t t0;
	ev_tstamp w0;
	unsigned rounds = 0;

	agent_fx_init(&a, "fat2-small.net", true, 200, 3);
	a.sm.mc = mc_table_new(&ml);
	a.sm.cfg.sa_services_per_port = 4096;
	agent_fx_start(&a);
	master_state(&a, mgid);
	many(&a, groups, services);
	agent_fx_init(&b, "fat2-small.net", false, 200, 3);
	b.sm.mc = mc_table_new(&ml);
	b.sm.cfg.sa_services_per_port = 4096;
	agent_fx_start(&b);
	b.sm.state = SM_STANDBY;
	br.a_lid = a.ca_lid[0];		/* where A's port is, for this test */
	br.b_lid = a.ca_lid[3];
	b.sm.master_lid = br.a_lid;

	standby_sync_start(&b.sm);
	t0 = clock();
	w0 = ev_time();
	while (!standby_sync_copy(&b.sm) && ++rounds < 200000)
		bridge_pump(&br);
	c = standby_sync_copy(&b.sm);
	ck_assert_msg(c, "no copy after %u pumps", rounds);
	fprintf(stderr, "standby copy of %u groups (%zu members), %zu services,"
		" %zu subscriptions, %zu LIDs: %.3f s of CPU for both sides"
		" (%.3f s wall), %zu MADs from the master, %zu to it\n",
		groups + 2, c->n_mcm, c->n_svc, c->n_inf, c->n_lids,
		(double)(clock() - t0) / CLOCKS_PER_SEC, ev_time() - w0,
		br.seen_a, br.seen_b);
	ck_assert_uint_eq(c->n_mcm, 5 + 2 * groups);
	ck_assert_uint_eq(c->n_svc, 2 + services);
	ck_assert_uint_eq(c->n_inf, 1);
	ck_assert_uint_eq(c->dropped, 0);

	/* The master dies; B becomes master and installs the copy. */
	b.sm.state = SM_MASTER;
	t0 = clock();
	ck_assert(standby_sync_adopt(&b.sm));	/* complete: in sync */
	fprintf(stderr, "installed in %.3f s of CPU\n",
		(double)(clock() - t0) / CLOCKS_PER_SEC);
	ck_assert_ptr_null(b.sm.sync);
	ck_assert_uint_eq(mc_table_count(b.sm.mc), groups + 2);
	ck_assert_uint_eq(mc_find(b.sm.mc, mgid[1])->mlid, 0xc010);
	same_table(&a, &b, SA_ATTR_MCMEMBER_RECORD,
		   sizeof(struct sa_mcmember_record), 5 + 2 * groups,
		   sizeof(struct sa_mcmember_record));
	/* Leases: the same record, the lease within a second. */
	same_table(&a, &b, SA_ATTR_SERVICE_RECORD,
		   sizeof(struct sa_service_record), 2 + services,
		   offsetof(struct sa_service_record, service_lease));
	same_table(&a, &b, SA_ATTR_INFORM_INFO_RECORD,
		   sizeof(struct sa_inform_info_record), 1,
		   sizeof(struct sa_inform_info_record));
	fx_free(&a);
	fx_free(&b);
}

START_TEST(test_fetch_through_sa)
{
	run_bridge(0, 0);
}
END_TEST

START_TEST(test_fetch_1000)
{
	run_bridge(1000, 1000);
}
END_TEST

/* Stopped in the middle of a round (the state machine left STANDBY):
 * nothing leaks, a late answer is ignored, there is no copy. */
START_TEST(test_stop_mid_round)
{
	struct agent_fx a, b;
	struct bridge br = { .a = &a, .b = &b };
	uint8_t mgid[2][16];

	agent_fx_init(&a, "fat2-small.net", true, 200, 3);
	a.sm.mc = mc_table_new(NULL);
	agent_fx_start(&a);
	master_state(&a, mgid);
	agent_fx_init(&b, "fat2-small.net", false, 200, 3);
	b.sm.mc = mc_table_new(NULL);
	agent_fx_start(&b);
	br.a_lid = a.ca_lid[0];
	br.b_lid = a.ca_lid[3];
	b.sm.master_lid = br.a_lid;
	standby_sync_start(&b.sm);
	for (int i = 0; i < 3; i++)
		bridge_pump(&br);
	standby_sync_stop(&b.sm);
	for (int i = 0; i < 50; i++)
		bridge_pump(&br);
	ck_assert_ptr_null(standby_sync_copy(&b.sm));
	/* Adopting without a copy leaves the new master empty, not in sync. */
	ck_assert(!standby_sync_adopt(&b.sm));
	ck_assert_uint_eq(mc_table_count(b.sm.mc), 0);
	fx_free(&a);
	fx_free(&b);
}
END_TEST

/* A master whose answers turn bad: the round fails, the last good copy
 * stays; when they are good again the next round replaces it. */
START_TEST(test_bad_round_keeps_copy)
{
	struct agent_fx a, b;
	struct bridge br = { .a = &a, .b = &b };
	const struct sb_copy *c;
	uint8_t mgid[2][16];
	ev_tstamp until;

	agent_fx_init(&a, "fat2-small.net", true, 200, 3);
	a.sm.mc = mc_table_new(NULL);
	agent_fx_start(&a);
	master_state(&a, mgid);
	agent_fx_init(&b, "fat2-small.net", false, 200, 3);
	b.sm.mc = mc_table_new(NULL);
	agent_fx_start(&b);
	br.a_lid = a.ca_lid[0];
	br.b_lid = a.ca_lid[3];
	b.sm.master_lid = br.a_lid;
	standby_sync_start(&b.sm);
	for (int i = 0; i < 1000 && !standby_sync_copy(&b.sm); i++)
		bridge_pump(&br);
	c = standby_sync_copy(&b.sm);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->n_mcm, 5);
	/* One more group on A; the answers are spoiled for the next round
	 * (a stride shorter than any record). */
	{
		struct mc_group *g;
		uint8_t m[16] = { 0xff, 0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9 };
		uint8_t gid[16];
		int err;

		g = mc_group_create(a.sm.mc, m, &err);
		ck_assert_ptr_nonnull(g);
		g->pkey = 0xffff;
		g->mtu = 4;
		g->rate = 3;
		gid_of(guid_of_lid(&a, a.ca_lid[0]), gid);
		ck_assert_int_eq(mc_member_set(a.sm.mc, g, guid_of_lid(&a, a.ca_lid[0]),
					       gid, MC_JOIN_FULL, false), 0);
	}
	br.spoil = true;
	until = ev_time() + 2.5;		/* one timer period and some */
	while (ev_time() < until)
		bridge_pump(&br);
	c = standby_sync_copy(&b.sm);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->n_mcm, 5);		/* the last good round */
	br.spoil = false;
	until = ev_time() + 2.5;
	while (ev_time() < until && standby_sync_copy(&b.sm)->n_mcm == 5)
		bridge_pump(&br);
	ck_assert_uint_eq(standby_sync_copy(&b.sm)->n_mcm, 6);
	fx_free(&a);
	fx_free(&b);
}
END_TEST

/* Services of a copy at once: duplicates keep the last, each port's
 * quota and the cap hold, in an empty table and in one that has some. */
START_TEST(test_service_import_all)
{
	struct sa_state_limits lim = { .max_services = 3, .services_per_port = 2 };
	struct sa_state *st = sa_state_new(&lim);
	struct sa_service_record r[6];
	uint32_t lease[6] = { 10, 20, 30, 40, 50, SA_LEASE_INFINITE };
	size_t imp, ref;

	ck_assert_ptr_nonnull(st);
	memset(r, 0, sizeof(r));
	for (int i = 0; i < 6; i++) {
		gid_of(i < 4 ? 0x1000 : 0x2000, r[i].service_gid);
		r[i].service_id = htobe64(0x10 + (uint64_t)i);
		r[i].service_pkey = htobe16(0xffff);
	}
	r[3].service_id = r[0].service_id;	/* a duplicate: the last wins */
	ck_assert_int_eq(sa_service_import_all(st, r, lease, 6, 100.0, &imp, &ref), 0);
	/* port 0x1000: ids 0x10 (lease 40), 0x11; 0x12 over its quota;
	 * port 0x2000: 0x14; 0x15 over the cap of 3. */
	ck_assert_uint_eq(imp, 3);
	ck_assert_uint_eq(ref, 3);
	ck_assert_uint_eq(sa_state_services(st), 3);
	{
		uint8_t tmpl[SA_DATA_SIZE] = { 0 };
		static const uint8_t zero[16];
		struct sa_query q = { .method = MAD_METHOD_GET_TABLE,
				      .attr_id = SA_ATTR_SERVICE_RECORD,
				      .tmpl = tmpl, .tmpl_len = sizeof(tmpl) };
		struct sa_table t = { .rec_size = sizeof(struct sa_service_record) };
		bool found = false;

		ck_assert_int_eq(sa_service_request(st, &q, zero, 100.0, &t), 0);
		ck_assert_uint_eq(t.count, 3);
		for (size_t i = 0; i < t.count; i++) {
			const struct sa_service_record *a =
				(const void *)(t.buf + i * sizeof(*a));

			if (be64toh(a->service_id) == 0x10) {
				found = true;
				ck_assert_uint_eq(be32toh(a->service_lease), 40);
			}
		}
		ck_assert(found);
		free(t.buf);
	}
	/* Not empty now: one by one, the same rules. */
	ck_assert_int_eq(sa_service_import_all(st, &r[5], &lease[5], 1, 100.0,
					       &imp, &ref), 0);
	ck_assert_uint_eq(imp, 0);
	ck_assert_uint_eq(ref, 1);
	sa_state_free(st);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("standby_sync");
	TCase *tc = tcase_create("copy");
	SRunner *sr;
	int failed;

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_copy_validate_adopt);
	tcase_add_test(tc, test_caps_and_lengths);
	tcase_add_test(tc, test_fetch_through_sa);
	tcase_add_test(tc, test_fetch_1000);
	tcase_add_test(tc, test_stop_mid_round);
	tcase_add_test(tc, test_bad_round_keeps_copy);
	tcase_add_test(tc, test_service_import_all);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
