/*
 * check_sa_mcmember.c - MCMemberRecord (sm/sa/mcmember.c): creation,
 * joins, leaves and queries with the statuses OpenSM 3.3.23 answers, the
 * seeds' rule (a port slower or with a smaller MTU than the group cannot
 * join), P_Key and ProxyJoin rules, limits, traps 66/67; then the same
 * through the SA agent (tests/unit/agent_fixture.h): the MAD methods of
 * the answers and the pruning of ports that left the fabric.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/sa_wire.h"
#include "partitions/partitions.h"
#include "routing/routing.h"
#include "model/fabric.h"
#include "sm/lid.h"
#include "sm/mcast/mcast.h"
#include "sm/sa/gen.h"
#include "sm/sa/mcmember.h"
#include "sm/sa/sa.h"
#include "sm/sa/service.h"
#include "sm/topo_file.h"
#include "tests/unit/agent_fixture.h"

#define PREFIX		0xfe80000000000000ull
#define JOIN_MASK	(BIT(MCM_MGID) | BIT(MCM_PORT_GID) | BIT(MCM_JOIN_STATE))
#define CREATE_MASK	(JOIN_MASK | BIT(MCM_QKEY) | BIT(MCM_TCLASS) | \
			 BIT(MCM_PKEY) | BIT(MCM_FLOW_LABEL) | BIT(MCM_SL))

/*
 * Four hosts: H0004's link is 1x SDR (2.5 Gb/s, rate code 2), the others
 * 4x SDR (10 Gb/s, code 3); every port's MTU 2048 (code 4) unless a test
 * lowers one.
 */
static const char topology[] =
	"Hca 1 \"H0001\"\n[1]\t\"sw-a\"[1]\n\n"
	"Switch 8 \"sw-a\"\n[1]\t\"H0001\"[1]\n[2]\t\"H0003\"[1]\n"
	"[3]\t\"sw-b\"[3]\n\n"
	"Switch 8 \"sw-b\"\n[1]\t\"H0002\"[1]\n[3]\t\"sw-a\"[3]\n"
	"[5]\t\"H0004\"[1] w=1 s=1\n\n"
	"Hca 1 \"H0002\"\n[1]\t\"sw-b\"[1]\n\n"
	"Hca 1 \"H0003\"\n[1]\t\"sw-a\"[2]\n\n"
	"Hca 1 \"H0004\"\n[1]\t\"sw-b\"[5] w=1 s=1\n";

struct fx {
	struct fabric f;
	struct routing_result routes;
	struct sa_view v;
	struct mc_table *mc;
	struct fab_ref host[4];	/* H0001..H0004 port 1 */
	uint16_t lid[4];
	uint64_t guid[4];
	struct sa_table out;
	struct mcm_outcome o;
	uint8_t tmpl[SA_DATA_SIZE];
};

static void fx_setup(struct fx *x, const struct mc_limits *lim)
{
	char path[] = "/tmp/check_sa_mcmember.XXXXXX", err[256];
	struct lid_policy pol = { 0 };
	int fd = mkstemp(path);
	FILE *fp;

	memset(x, 0, sizeof(*x));
	ck_assert_int_ge(fd, 0);
	fp = fdopen(fd, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(topology, fp);
	fclose(fp);
	fabric_init(&x->f);
	ck_assert_msg(topo_load(&x->f, path, err, sizeof(err)) == 0, "%s", err);
	unlink(path);
	ck_assert_int_eq(lid_assign(&x->f, NULL, &pol, NULL), 0);
	x->v.f = &x->f;
	x->v.routes = &x->routes;
	x->v.subnet_prefix = PREFIX;
	x->v.gen = x->f.gen;
	for (size_t i = 0; i < x->f.n_nodes; i++) {
		const struct fab_node *n = &x->f.nodes[i];
		unsigned h;

		if (n->type != NODE_TYPE_CA || sscanf(n->desc, "H%u", &h) != 1 ||
		    h < 1 || h > 4)
			continue;
		x->host[h - 1] = (struct fab_ref){ (int32_t)i, 1 };
		x->lid[h - 1] = n->ports[1].lid;
		x->guid[h - 1] = n->ports[1].guid;
	}
	for (unsigned h = 0; h < 4; h++)
		ck_assert_uint_ne(x->lid[h], 0);
	x->mc = mc_table_new(lim);
	ck_assert_ptr_nonnull(x->mc);
	x->out.rec_size = sizeof(struct sa_mcmember_record);
}

static void fx_teardown(struct fx *x)
{
	free(x->out.buf);
	mc_table_free(x->mc);
	fabric_free(&x->f);
}

static struct fab_port *port_of(struct fx *x, unsigned h)
{
	return &x->f.nodes[x->host[h].node].ports[1];
}

/* Give host h this P_Key table (as partitions would). */
static void set_pkeys(struct fx *x, unsigned h, const uint16_t *keys, unsigned n)
{
	struct fab_port *p = port_of(x, h);

	free(p->want_pkeys);
	p->want_pkeys = calloc(n, sizeof(uint16_t));
	ck_assert_ptr_nonnull(p->want_pkeys);
	memcpy(p->want_pkeys, keys, n * sizeof(uint16_t));
	p->n_want_pkeys = (uint16_t)n;
}

static void port_gid(struct fx *x, unsigned h, uint8_t gid[16])
{
	uint64_t p = htobe64(PREFIX), g = htobe64(x->guid[h]);

	memcpy(gid, &p, 8);
	memcpy(gid + 8, &g, 8);
}

static void mgid_n(uint8_t mgid[16], unsigned n)
{
	memset(mgid, 0, 16);
	mgid[0] = 0xff;
	mgid[1] = 0x15;
	mgid[2] = 0xa0;
	mgid[3] = 0x1c;
	mgid[15] = (uint8_t)n;
}

/* A record for host h: MGID, PortGID, JoinState; the group parameters
 * a creation gives (Q_Key 0x1234, P_Key 0xffff, SL 0, ...). */
static void rec_init(struct fx *x, struct sa_mcmember_record *r, unsigned n,
		     unsigned h, uint8_t join)
{
	memset(r, 0, sizeof(*r));
	mgid_n(r->mgid, n);
	port_gid(x, h, r->port_gid);
	r->qkey = htobe32(0x1234);
	r->pkey = htobe16(0xffff);
	r->scope_state = (uint8_t)(5 << 4 | join);
}

/* One request from host `from`; returns the status (0 or >0). */
static int req(struct fx *x, uint8_t method, uint64_t mask,
	       const struct sa_mcmember_record *r, unsigned from, uint64_t sm_key)
{
	struct sa_query q;
	int rc;

	memset(&q, 0, sizeof(q));
	memset(x->tmpl, 0, sizeof(x->tmpl));
	memcpy(x->tmpl, r, sizeof(*r));
	q.method = method;
	q.attr_id = SA_ATTR_MCMEMBER_RECORD;
	q.comp_mask = mask;
	q.tmpl = x->tmpl;
	q.tmpl_len = SA_DATA_SIZE;
	q.requester_lid = x->lid[from];
	q.sm_key = sm_key;
	x->out.count = 0;
	rc = sa_mcmember_request(x->mc, &x->v, &q, &x->o, &x->out);
	ck_assert_int_le(rc, 0);
	return -rc;
}

static const struct sa_mcmember_record *rec_at(struct fx *x, size_t i)
{
	ck_assert_uint_gt(x->out.count, i);
	return (const struct sa_mcmember_record *)(x->out.buf + i * x->out.rec_size);
}

static int join(struct fx *x, unsigned n, unsigned h, uint8_t js, uint64_t mask)
{
	struct sa_mcmember_record r;

	rec_init(x, &r, n, h, js);
	return req(x, MAD_METHOD_SET, mask, &r, h, 0);
}

static int leave(struct fx *x, unsigned n, unsigned h, uint8_t js, unsigned from,
		 uint64_t sm_key)
{
	struct sa_mcmember_record r;

	rec_init(x, &r, n, h, js);
	return req(x, MAD_METHOD_DELETE, JOIN_MASK, &r, from, sm_key);
}

START_TEST(test_create_join_query_leave)
{
	struct fx x;
	struct sa_mcmember_record r;
	const struct sa_mcmember_record *a;
	uint8_t mgid[16];

	fx_setup(&x, NULL);
	ck_assert_int_eq(join(&x, 1, 0, MC_JOIN_FULL, CREATE_MASK), 0);
	ck_assert_uint_eq(x.out.count, 1);
	a = rec_at(&x, 0);
	ck_assert_uint_eq(be16toh(a->mlid), 0xc000);
	ck_assert_uint_eq(a->mtu, 0x80 | 4);	/* the port's: exactly 2048 */
	ck_assert_uint_eq(a->rate, 0x80 | 3);	/* exactly 10 Gb/s */
	ck_assert_uint_eq(a->scope_state, 0x51);
	ck_assert_uint_eq(be32toh(a->qkey), 0x1234);
	ck_assert_uint_eq(x.o.trap, MC_TRAP_CREATED);
	ck_assert(x.o.changed);
	mgid_n(mgid, 1);
	ck_assert(!memcmp(x.o.trap_mgid, mgid, 16));

	/* H0002 joins as non member with just the join components. */
	ck_assert_int_eq(join(&x, 1, 1, MC_JOIN_NON, JOIN_MASK), 0);
	ck_assert_uint_eq(x.o.trap, 0);
	ck_assert_uint_eq(rec_at(&x, 0)->scope_state & 0xf, MC_JOIN_NON);
	ck_assert_uint_eq(be16toh(rec_at(&x, 0)->mlid), 0xc000);
	/* Joining again with the state held changes nothing. */
	ck_assert_int_eq(join(&x, 1, 1, MC_JOIN_NON, JOIN_MASK), 0);
	ck_assert(!x.o.changed);

	/* GetTable, untrusted: one record per group, member fields zero. */
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(req(&x, MAD_METHOD_GET_TABLE, 0, &r, 2, 0), 0);
	ck_assert_uint_eq(x.out.count, 1);
	a = rec_at(&x, 0);
	ck_assert(!memcmp(a->mgid, mgid, 16));
	for (unsigned i = 0; i < 16; i++)
		ck_assert_uint_eq(a->port_gid[i], 0);
	ck_assert_uint_eq(a->scope_state & 0xf, 0);
	/* Trusted: one per member, with its JoinState. */
	ck_assert_int_eq(req(&x, MAD_METHOD_GET_TABLE, 0, &r, 2,
			     SA_SM_KEY_TRUSTED), 0);
	ck_assert_uint_eq(x.out.count, 2);
	/* ... and JoinState as a component selects among them. */
	r.scope_state = MC_JOIN_NON;
	ck_assert_int_eq(req(&x, MAD_METHOD_GET_TABLE, BIT(MCM_JOIN_STATE), &r, 2,
			     SA_SM_KEY_TRUSTED), 0);
	ck_assert_uint_eq(x.out.count, 1);
	/* A component that no group has: nothing. */
	r.qkey = htobe32(0x999);
	ck_assert_int_eq(req(&x, MAD_METHOD_GET_TABLE, BIT(MCM_QKEY), &r, 2, 0), 0);
	ck_assert_uint_eq(x.out.count, 0);
	/* MTU selector "less than 4096" matches the 2048 group. */
	r.mtu = 1 << 6 | 5;
	ck_assert_int_eq(req(&x, MAD_METHOD_GET_TABLE, BIT(MCM_MTU_SEL) |
			     BIT(MCM_MTU), &r, 2, 0), 0);
	ck_assert_uint_eq(x.out.count, 1);

	/* Leaves: the non member, then the creator (trap 67, MLID free). */
	ck_assert_int_eq(leave(&x, 1, 1, MC_JOIN_NON, 1, 0), 0);
	ck_assert_uint_eq(rec_at(&x, 0)->scope_state & 0xf, 0);
	ck_assert_uint_eq(x.o.trap, 0);
	ck_assert_int_eq(leave(&x, 1, 0, MC_JOIN_FULL, 0, 0), 0);
	ck_assert_uint_eq(x.o.trap, MC_TRAP_DELETED);
	ck_assert_uint_eq(mc_table_count(x.mc), 0);
	ck_assert_uint_eq(mc_table_mlids_used(x.mc), 0);
	fx_teardown(&x);
}
END_TEST

START_TEST(test_component_and_gid_statuses)
{
	struct fx x;
	struct sa_mcmember_record r;

	fx_setup(&x, NULL);
	/* Set without JoinState, Delete without PortGID: INSUF_COMPONENTS. */
	ck_assert_int_eq(join(&x, 1, 0, MC_JOIN_FULL, JOIN_MASK & ~BIT(MCM_JOIN_STATE)),
			 SA_STATUS_INSUF_COMPONENTS);
	rec_init(&x, &r, 1, 0, MC_JOIN_FULL);
	ck_assert_int_eq(req(&x, MAD_METHOD_DELETE, BIT(MCM_MGID) |
			     BIT(MCM_JOIN_STATE), &r, 0, 0),
			 SA_STATUS_INSUF_COMPONENTS);
	/* A creation without Q_Key: INSUF_COMPONENTS (o15-0.2.3). */
	ck_assert_int_eq(join(&x, 1, 0, MC_JOIN_FULL, CREATE_MASK & ~BIT(MCM_QKEY)),
			 SA_STATUS_INSUF_COMPONENTS);
	/* Another subnet's prefix: INVALID_GID. */
	rec_init(&x, &r, 1, 0, MC_JOIN_FULL);
	r.port_gid[0] = 0xfe;
	r.port_gid[1] = 0xc0;
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, CREATE_MASK, &r, 0, 0),
			 SA_STATUS_INVALID_GID);
	/* A port not in the subnet: REQ_INVALID. */
	rec_init(&x, &r, 1, 0, MC_JOIN_FULL);
	r.port_gid[15] ^= 0x5a;
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, CREATE_MASK, &r, 0, 0),
			 SA_STATUS_REQ_INVALID);
	/* Only full or send-only full members create (o15-0.1.9). */
	ck_assert_int_eq(join(&x, 1, 0, MC_JOIN_NON | MC_JOIN_SENDONLY,
			      CREATE_MASK), SA_STATUS_REQ_INVALID);
	/* A rate code that does not exist. */
	rec_init(&x, &r, 1, 0, MC_JOIN_FULL);
	r.rate = 2 << 6 | 1;
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, CREATE_MASK | BIT(MCM_RATE_SEL) |
			     BIT(MCM_RATE), &r, 0, 0), SA_STATUS_REQ_INVALID);
	/* Reserved MGID flags; 0xA01B with link-local scope. */
	rec_init(&x, &r, 1, 0, MC_JOIN_FULL);
	r.mgid[1] = 0x35;
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, CREATE_MASK, &r, 0, 0),
			 SA_STATUS_REQ_INVALID);
	rec_init(&x, &r, 1, 0, MC_JOIN_FULL);
	r.mgid[1] = 0x12;
	r.mgid[2] = 0xa0;
	r.mgid[3] = 0x1b;
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, CREATE_MASK, &r, 0, 0),
			 SA_STATUS_REQ_INVALID);
	/* MGID 0: the SA assigns one, ff1S:a01b:<prefix>... */
	rec_init(&x, &r, 1, 0, MC_JOIN_FULL);
	memset(r.mgid, 0, 16);
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, CREATE_MASK | BIT(MCM_SCOPE),
			     &r, 0, 0), 0);
	ck_assert_uint_eq(rec_at(&x, 0)->mgid[0], 0xff);
	ck_assert_uint_eq(rec_at(&x, 0)->mgid[1], 0x15);
	ck_assert_uint_eq(rec_at(&x, 0)->mgid[2], 0xa0);
	ck_assert_uint_eq(rec_at(&x, 0)->mgid[3], 0x1b);
	ck_assert_ptr_nonnull(mc_find(x.mc, rec_at(&x, 0)->mgid));
	ck_assert_uint_eq(mc_table_count(x.mc), 1);
	fx_teardown(&x);
}
END_TEST

START_TEST(test_parameter_mismatch)
{
	struct fx x;
	struct sa_mcmember_record r;

	fx_setup(&x, NULL);
	ck_assert_int_eq(join(&x, 1, 0, MC_JOIN_FULL, CREATE_MASK), 0);
	/* Q_Key, TClass, SL, P_Key base, MTU and rate selectors that the
	 * group does not meet: REQ_INVALID, as OpenSM answers. */
	rec_init(&x, &r, 1, 1, MC_JOIN_FULL);
	r.qkey = htobe32(0x4321);
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, JOIN_MASK | BIT(MCM_QKEY), &r, 1, 0),
			 SA_STATUS_REQ_INVALID);
	rec_init(&x, &r, 1, 1, MC_JOIN_FULL);
	r.tclass = 7;
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, JOIN_MASK | BIT(MCM_TCLASS), &r, 1, 0),
			 SA_STATUS_REQ_INVALID);
	rec_init(&x, &r, 1, 1, MC_JOIN_FULL);
	r.sl_flow_hop = htobe32(3u << 28);
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, JOIN_MASK | BIT(MCM_SL), &r, 1, 0),
			 SA_STATUS_REQ_INVALID);
	rec_init(&x, &r, 1, 1, MC_JOIN_FULL);
	r.pkey = htobe16(0x8001);
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, JOIN_MASK | BIT(MCM_PKEY), &r, 1, 0),
			 SA_STATUS_REQ_INVALID);
	rec_init(&x, &r, 1, 1, MC_JOIN_FULL);
	r.mtu = 2 << 6 | 5;			/* exactly 4096 */
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, JOIN_MASK | BIT(MCM_MTU_SEL) |
			     BIT(MCM_MTU), &r, 1, 0), SA_STATUS_REQ_INVALID);
	rec_init(&x, &r, 1, 1, MC_JOIN_FULL);
	r.rate = 0 << 6 | 3;			/* greater than 10 Gb/s */
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, JOIN_MASK | BIT(MCM_RATE_SEL) |
			     BIT(MCM_RATE), &r, 1, 0), SA_STATUS_REQ_INVALID);
	/* The limited P_Key of the group's partition matches (base). */
	rec_init(&x, &r, 1, 1, MC_JOIN_FULL);
	r.pkey = htobe16(0x7fff);
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, JOIN_MASK | BIT(MCM_PKEY), &r, 1, 0), 0);
	ck_assert_uint_eq(mc_find(x.mc, r.mgid)->n_members, 2);
	fx_teardown(&x);
}
END_TEST

/* The seeds' rule: the group's rate and MTU are enforced on joins. */
START_TEST(test_port_rate_and_mtu)
{
	struct fx x;
	struct fab_port *p;
	struct sa_mcmember_record r;

	fx_setup(&x, NULL);
	ck_assert_int_eq(join(&x, 1, 0, MC_JOIN_FULL, CREATE_MASK), 0);
	/* H0004 links at 2.5 Gb/s: below the group's 10. */
	ck_assert_int_eq(join(&x, 1, 3, MC_JOIN_NON, JOIN_MASK), SA_STATUS_REQ_INVALID);
	ck_assert_uint_eq(x.o.code, MCM_LOG_PORT_CAPS);
	ck_assert_ptr_nonnull(strstr(x.o.why, "rate"));
	/* H0003 with a 1024 MTU: below the group's 2048. */
	p = port_of(&x, 2);
	p->pi.init_type_reply_mtu_cap = (uint8_t)((p->pi.init_type_reply_mtu_cap & 0xf0) | 3);
	ck_assert_int_eq(join(&x, 1, 2, MC_JOIN_FULL, JOIN_MASK), SA_STATUS_REQ_INVALID);
	ck_assert_uint_eq(x.o.code, MCM_LOG_PORT_CAPS);
	ck_assert_ptr_nonnull(strstr(x.o.why, "MTU"));
	{
		uint8_t mgid[16];

		mgid_n(mgid, 1);
		ck_assert_uint_eq(mc_find(x.mc, mgid)->n_members, 1);
	}
	/* A group H0004 creates itself is at its rate: it may join that. */
	ck_assert_int_eq(join(&x, 2, 3, MC_JOIN_FULL, CREATE_MASK), 0);
	ck_assert_uint_eq(rec_at(&x, 0)->rate, 0x80 | 2);
	/* ... and may not create one above its rate ("exactly 10 Gb/s"). */
	rec_init(&x, &r, 3, 3, MC_JOIN_FULL);
	r.rate = 2 << 6 | 3;
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, CREATE_MASK | BIT(MCM_RATE_SEL) |
			     BIT(MCM_RATE), &r, 3, 0), SA_STATUS_REQ_INVALID);
	ck_assert_ptr_null(mc_find(x.mc, r.mgid));
	ck_assert_uint_eq(mc_table_mlids_used(x.mc), 2);
	fx_teardown(&x);
}
END_TEST

START_TEST(test_pkeys_and_proxy)
{
	struct fx x;
	const uint16_t limited[] = { 0x7fff }, other[] = { 0x8002 };
	const uint16_t both[] = { 0xffff, 0x8002 };

	fx_setup(&x, NULL);
	/* A limited member may not create ... */
	set_pkeys(&x, 1, limited, 1);
	ck_assert_int_eq(join(&x, 1, 1, MC_JOIN_FULL, CREATE_MASK), SA_STATUS_REQ_INVALID);
	ck_assert_uint_eq(mc_table_count(x.mc), 0);
	/* ... but joins a group of its partition. */
	ck_assert_int_eq(join(&x, 1, 0, MC_JOIN_FULL, CREATE_MASK), 0);
	ck_assert_int_eq(join(&x, 1, 1, MC_JOIN_NON, JOIN_MASK), 0);
	/* A port outside the partition may not join. */
	set_pkeys(&x, 2, other, 1);
	ck_assert_int_eq(join(&x, 1, 2, MC_JOIN_NON, JOIN_MASK), SA_STATUS_REQ_INVALID);
	/* It does not see the group either. */
	{
		struct sa_mcmember_record r;

		memset(&r, 0, sizeof(r));
		ck_assert_int_eq(req(&x, MAD_METHOD_GET_TABLE, 0, &r, 2, 0), 0);
		ck_assert_uint_eq(x.out.count, 0);
		ck_assert_int_eq(req(&x, MAD_METHOD_GET_TABLE, 0, &r, 0, 0), 0);
		ck_assert_uint_eq(x.out.count, 1);
	}
	/* ProxyJoin: H0003 (P_Key 0x8002 only) for H0001: no shared P_Key. */
	{
		struct sa_mcmember_record r;

		rec_init(&x, &r, 1, 0, MC_JOIN_NON);
		ck_assert_int_eq(req(&x, MAD_METHOD_SET, JOIN_MASK, &r, 2, 0),
				 SA_STATUS_REQ_INVALID);
		/* trusted: allowed */
		ck_assert_int_eq(req(&x, MAD_METHOD_SET, JOIN_MASK, &r, 2,
				     SA_SM_KEY_TRUSTED), 0);
	}
	/* H0003 shares 0xffff now: proxy-joins H0004... no, H0004 is slow;
	 * proxy-join H0002 in a group of its own MTU and rate. */
	set_pkeys(&x, 2, both, 2);
	ck_assert_int_eq(join(&x, 5, 2, MC_JOIN_FULL, CREATE_MASK), 0);
	{
		struct sa_mcmember_record r;

		rec_init(&x, &r, 5, 1, MC_JOIN_NON);
		/* H0002 is a limited member of 0x7fff, H0003 full: shared,
		 * still no ProxyJoin without the SM_Key ... */
		ck_assert_int_eq(req(&x, MAD_METHOD_SET, JOIN_MASK, &r, 2, 0),
				 SA_STATUS_REQ_INVALID);
		ck_assert_ptr_null(mc_group_member(mc_find(x.mc, r.mgid),
						   x.guid[1]));
		/* ... with it, yes */
		ck_assert_int_eq(req(&x, MAD_METHOD_SET, JOIN_MASK, &r, 2,
				     SA_SM_KEY_TRUSTED), 0);
		ck_assert(mc_group_member(mc_find(x.mc, r.mgid), x.guid[1])->proxy);
	}
	/* A host outside partition 0x8002 (H0004: default partition only)
	 * may not put H0003 (in both) into 0x8002's group: no MLID, no
	 * Q_Key for it. */
	{
		const uint16_t dflt[] = { 0xffff };
		struct sa_mcmember_record r;

		set_pkeys(&x, 3, dflt, 1);
		rec_init(&x, &r, 6, 2, MC_JOIN_FULL);
		r.pkey = htobe16(0x8002);
		ck_assert_int_eq(req(&x, MAD_METHOD_SET, CREATE_MASK, &r, 2, 0), 0);
		rec_init(&x, &r, 6, 2, MC_JOIN_NON);
		ck_assert_int_eq(req(&x, MAD_METHOD_SET, JOIN_MASK, &r, 3, 0),
				 SA_STATUS_REQ_INVALID);
		ck_assert_uint_eq(x.out.count, 0);
	}
	/* A ProxyJoin membership: any port of the partition may end it;
	 * H0001's own membership only H0001 (or a trusted requester). */
	ck_assert_int_eq(leave(&x, 5, 1, MC_JOIN_NON, 0, 0), 0);
	ck_assert_int_eq(leave(&x, 1, 1, MC_JOIN_NON, 2, 0), SA_STATUS_REQ_INVALID);
	ck_assert_uint_eq(x.o.code, MCM_LOG_LEAVE);
	ck_assert_int_eq(leave(&x, 1, 1, MC_JOIN_NON, 2, SA_SM_KEY_TRUSTED), 0);
	/* Leaves of states not held, of non members, of no group. */
	ck_assert_int_eq(leave(&x, 1, 0, MC_JOIN_SENDONLY, 0, 0), SA_STATUS_REQ_INVALID);
	ck_assert_int_eq(leave(&x, 1, 3, MC_JOIN_FULL, 3, 0), SA_STATUS_REQ_INVALID);
	ck_assert_int_eq(leave(&x, 9, 0, MC_JOIN_FULL, 0, 0), SA_STATUS_REQ_INVALID);
	fx_teardown(&x);
}
END_TEST

START_TEST(test_no_resources)
{
	struct mc_limits lim = { .max_groups = 2, .groups_per_port = 2 };
	struct fx x;

	fx_setup(&x, &lim);
	ck_assert_int_eq(join(&x, 1, 0, MC_JOIN_FULL, CREATE_MASK), 0);
	ck_assert_int_eq(join(&x, 2, 0, MC_JOIN_FULL, CREATE_MASK), 0);
	/* the group table is full */
	ck_assert_int_eq(join(&x, 3, 1, MC_JOIN_FULL, CREATE_MASK),
			 SA_STATUS_NO_RESOURCES);
	ck_assert_uint_eq(x.o.code, MCM_LOG_NO_ROOM);
	fx_teardown(&x);

	/* MLIDs exhausted: one MLID only */
	fx_setup(&x, NULL);
	mc_table_set_mlid_top(x.mc, MC_MLID_MIN);
	ck_assert_int_eq(join(&x, 1, 0, MC_JOIN_FULL, CREATE_MASK), 0);
	ck_assert_int_eq(join(&x, 2, 0, MC_JOIN_FULL, CREATE_MASK),
			 SA_STATUS_NO_RESOURCES);
	ck_assert_uint_eq(mc_table_count(x.mc), 1);
	/* freed by the leave, reused by the next creation */
	ck_assert_int_eq(leave(&x, 1, 0, MC_JOIN_FULL, 0, 0), 0);
	ck_assert_int_eq(join(&x, 2, 0, MC_JOIN_FULL, CREATE_MASK), 0);
	ck_assert_uint_eq(be16toh(rec_at(&x, 0)->mlid), MC_MLID_MIN);
	fx_teardown(&x);

	/* groups per port: a join that would exceed it; the new group it
	 * would have created is not left behind */
	lim.max_groups = 0;
	lim.groups_per_port = 1;
	fx_setup(&x, &lim);
	ck_assert_int_eq(join(&x, 1, 0, MC_JOIN_FULL, CREATE_MASK), 0);
	ck_assert_int_eq(join(&x, 2, 0, MC_JOIN_FULL, CREATE_MASK),
			 SA_STATUS_NO_RESOURCES);
	ck_assert_uint_eq(mc_table_count(x.mc), 1);
	ck_assert_uint_eq(mc_table_mlids_used(x.mc), 1);
	fx_teardown(&x);
}
END_TEST

/* IPoIB: a partition's broadcast group comes first, and the others
 * take its parameters. */
START_TEST(test_ipoib_rules)
{
	struct fx x;
	struct part_config c;
	struct mc_precreate_report pr;
	struct sa_mcmember_record r;
	const uint8_t allhosts[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0,
				       0, 0, 0, 0, 0, 0, 0, 1 };

	fx_setup(&x, NULL);
	rec_init(&x, &r, 0, 0, MC_JOIN_FULL);
	memcpy(r.mgid, allhosts, 16);
	r.qkey = htobe32(0x0b1b);
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, CREATE_MASK, &r, 0, 0),
			 SA_STATUS_REQ_INVALID);
	ck_assert_ptr_nonnull(strstr(x.o.why, "broadcast"));
	ck_assert_int_eq(part_config_default(&c), 0);
	ck_assert_int_eq(mc_precreate(x.mc, &c, 18, &pr), 0);
	part_config_free(&c);
	/* a Q_Key other than the broadcast group's */
	r.qkey = htobe32(0x1111);
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, CREATE_MASK, &r, 0, 0),
			 SA_STATUS_REQ_INVALID);
	r.qkey = htobe32(0x0b1b);
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, CREATE_MASK, &r, 0, 0), 0);
	ck_assert_uint_eq(be16toh(rec_at(&x, 0)->mlid), 0xc001);
	/* The broadcast group: joined with IPoIB's components. */
	memcpy(r.mgid, allhosts, 16);
	r.mgid[15] = 0xff;
	r.mgid[14] = 0xff;
	r.mgid[13] = 0xff;
	r.mgid[12] = 0xff;
	ck_assert_int_eq(req(&x, MAD_METHOD_SET, JOIN_MASK | BIT(MCM_PKEY) |
			     BIT(MCM_QKEY), &r, 0, 0), 0);
	ck_assert_uint_eq(be16toh(rec_at(&x, 0)->mlid), 0xc000);
	ck_assert_uint_eq(x.o.trap, MC_TRAP_CREATED);
	/* its last full member leaves: trap 67, the group and MLID stay */
	r.scope_state = MC_JOIN_FULL;
	ck_assert_int_eq(req(&x, MAD_METHOD_DELETE, JOIN_MASK, &r, 0, 0), 0);
	ck_assert_uint_eq(x.o.trap, MC_TRAP_DELETED);
	ck_assert_ptr_nonnull(mc_find(x.mc, r.mgid));
	ck_assert_uint_eq(mc_find(x.mc, r.mgid)->mlid, 0xc000);
	fx_teardown(&x);
}
END_TEST

/*
 * consolidate_ipv6_snm_req: the solicited-node groups of hosts 1-3 get
 * one MLID in the answers and queries; the MLID goes with the last of
 * them.  Off: one each.  And an MLID named in the record.
 */
START_TEST(test_snm_and_requested_mlid)
{
	struct fx x;
	struct part_config c;
	struct mc_precreate_report pr;
	struct sa_mcmember_record r;
	uint16_t mlid[3];

	for (int on = 0; on <= 1; on++) {
		fx_setup(&x, NULL);
		ck_assert_int_eq(part_config_default(&c), 0);
		ck_assert_int_eq(mc_precreate(x.mc, &c, 18, &pr), 0);
		part_config_free(&c);
		mc_table_set_snm_consolidation(x.mc, on);
		for (unsigned h = 0; h < 3; h++) {
			rec_init(&x, &r, 0, h, MC_JOIN_FULL);
			const uint8_t snm[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff,
				0xff, 0, 0, 0, 0, 0, 1, 0xff, 0x10, 0x20,
				(uint8_t)(0x30 + h) };
			memcpy(r.mgid, snm, 16);
			r.qkey = htobe32(0x0b1b);
			ck_assert_int_eq(req(&x, MAD_METHOD_SET, CREATE_MASK, &r,
					     h, 0), 0);
			mlid[h] = be16toh(rec_at(&x, 0)->mlid);
		}
		if (on) {
			ck_assert_uint_eq(mlid[0], 0xc001);
			ck_assert_uint_eq(mlid[1], 0xc001);
			ck_assert_uint_eq(mlid[2], 0xc001);
			ck_assert_uint_eq(mc_table_mlids_used(x.mc), 2);
		} else {
			ck_assert_uint_ne(mlid[0], mlid[1]);
			ck_assert_uint_ne(mlid[1], mlid[2]);
			ck_assert_uint_ne(mlid[0], mlid[2]);
			ck_assert_uint_eq(mc_table_mlids_used(x.mc), 4);
		}
		/* A GetTable by MLID finds the three groups (trusted). */
		memset(&r, 0, sizeof(r));
		r.mlid = htobe16(mlid[1]);
		ck_assert_int_eq(req(&x, MAD_METHOD_GET_TABLE, BIT(MCM_MLID), &r,
				     0, SA_SM_KEY_TRUSTED), 0);
		ck_assert_uint_eq(x.out.count, on ? 3 : 1);
		/* Leaves: the shared MLID stays until the last one goes. */
		for (unsigned h = 0; h < 3; h++) {
			rec_init(&x, &r, 0, h, MC_JOIN_FULL);
			const uint8_t snm[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff,
				0xff, 0, 0, 0, 0, 0, 1, 0xff, 0x10, 0x20,
				(uint8_t)(0x30 + h) };
			memcpy(r.mgid, snm, 16);
			ck_assert_int_eq(req(&x, MAD_METHOD_DELETE, JOIN_MASK, &r,
					     h, 0), 0);
			ck_assert_uint_eq(mc_table_mlids_used(x.mc),
					  on ? (h < 2 ? 2u : 1u) : 3u - h);
		}

		/* An MLID named in the record: honoured when free ... */
		rec_init(&x, &r, 1, 0, MC_JOIN_FULL);
		r.mlid = htobe16(0xc123);
		ck_assert_int_eq(req(&x, MAD_METHOD_SET, CREATE_MASK | BIT(MCM_MLID),
				     &r, 0, 0), 0);
		ck_assert_uint_eq(be16toh(rec_at(&x, 0)->mlid), 0xc123);
		/* ... not without its component bit, not when held, not
		 * above the switches' MulticastFDBCap: the SA's choice. */
		rec_init(&x, &r, 2, 0, MC_JOIN_FULL);
		r.mlid = htobe16(0xc200);
		ck_assert_int_eq(req(&x, MAD_METHOD_SET, CREATE_MASK, &r, 0, 0), 0);
		ck_assert_uint_eq(be16toh(rec_at(&x, 0)->mlid), 0xc001);
		rec_init(&x, &r, 3, 0, MC_JOIN_FULL);
		r.mlid = htobe16(0xc123);
		ck_assert_int_eq(req(&x, MAD_METHOD_SET, CREATE_MASK | BIT(MCM_MLID),
				     &r, 0, 0), 0);
		ck_assert_uint_eq(be16toh(rec_at(&x, 0)->mlid), 0xc002);
		mc_table_set_mlid_top(x.mc, 0xc1ff);
		rec_init(&x, &r, 4, 0, MC_JOIN_FULL);
		r.mlid = htobe16(0xc200);
		ck_assert_int_eq(req(&x, MAD_METHOD_SET, CREATE_MASK | BIT(MCM_MLID),
				     &r, 0, 0), 0);
		ck_assert_uint_eq(be16toh(rec_at(&x, 0)->mlid), 0xc003);
		fx_teardown(&x);
	}
}
END_TEST

/* GetTable over many groups is charged: a small budget runs out. */
START_TEST(test_query_budget)
{
	struct fx x;
	struct sa_mcmember_record r;
	struct sa_query q;
	struct sa_work w;
	int rc;

	fx_setup(&x, NULL);
	for (unsigned n = 1; n <= 50; n++)
		ck_assert_int_eq(join(&x, n, 0, MC_JOIN_FULL, CREATE_MASK), 0);
	memset(&r, 0, sizeof(r));
	memset(&q, 0, sizeof(q));
	memset(x.tmpl, 0, sizeof(x.tmpl));
	q.method = MAD_METHOD_GET_TABLE;
	q.attr_id = SA_ATTR_MCMEMBER_RECORD;
	q.tmpl = x.tmpl;
	q.tmpl_len = SA_DATA_SIZE;
	q.requester_lid = x.lid[0];
	q.sm_key = SA_SM_KEY_TRUSTED;
	memset(&w, 0, sizeof(w));
	w.budget = 20;
	q.work = &w;
	x.out.count = 0;
	rc = sa_mcmember_request(x.mc, &x.v, &q, &x.o, &x.out);
	ck_assert_int_eq(rc, -SA_STATUS_NO_RESOURCES);
	w.used = 0;
	w.budget = 200;
	x.out.count = 0;
	rc = sa_mcmember_request(x.mc, &x.v, &q, &x.o, &x.out);
	ck_assert_int_eq(rc, 0);
	ck_assert_uint_eq(x.out.count, 50);
	ck_assert_uint_le(w.used, 100);
	fx_teardown(&x);
}
END_TEST

/* ---- through the agent ---- */

static void agent_req(struct agent_fx *x, uint8_t method, uint64_t mask,
		      const struct sa_mcmember_record *r, uint16_t lid)
{
	struct sa_mad m;
	struct mad_addr from = { .lid = lid, .qpn = 1, .qkey = 0x80010000u };

	memset(&m, 0, sizeof(m));
	sa_request_hdr(&m, method, SA_ATTR_MCMEMBER_RECORD, mask);
	m.hdr.tid = htobe64(++x->tid);
	memcpy(m.data, r, sizeof(*r));
	mad_engine_recv(x->sm.engine, &m, sizeof(m), &from, 0);
}

static const struct sa_mad *last_sent(const struct agent_fx *x)
{
	ck_assert_uint_gt(x->fk.n_sent, 0);
	return (const struct sa_mad *)x->fk.sent[x->fk.n_sent - 1].mad;
}

/* The last Report of trap `trap` sent to `lid`, or NULL. */
static const struct sa_mad *report_to(const struct agent_fx *x, uint16_t lid,
				      unsigned trap)
{
	for (size_t i = x->fk.n_sent; i-- > 0;) {
		const struct sa_mad *m = (const struct sa_mad *)x->fk.sent[i].mad;
		const struct smp_notice *n = (const struct smp_notice *)m->data;

		if (x->fk.sent[i].addr.lid == lid &&
		    m->hdr.method == MAD_METHOD_REPORT &&
		    be16toh(m->hdr.attr_id) == SA_ATTR_NOTICE &&
		    be16toh(n->trap_num) == trap)
			return m;
	}
	return NULL;
}

/* Run the loop until the Report of trap `trap` to `lid` is sent (the
 * engine sends Reports from the loop, each after the ReportResp or the
 * timeout of the one before it to the same subscriber), for at most 5 s:
 * that Report, or NULL. */
static const struct sa_mad *run_until_report(struct agent_fx *x, uint16_t lid,
					     unsigned trap)
{
	const struct sa_mad *rep = report_to(x, lid, trap);

	for (unsigned i = 0; !rep && i < 500; i++) {
		agent_fx_run(x, 0.01);
		rep = report_to(x, lid, trap);
	}
	return rep;
}

static uint64_t guid_of_lid(struct agent_fx *x, uint16_t lid, struct fab_port **pp)
{
	for (size_t i = 0; i < x->sm.fabric.n_nodes; i++) {
		struct fab_node *n = &x->sm.fabric.nodes[i];

		if (n->type == NODE_TYPE_CA && n->ports[1].lid == lid) {
			*pp = &n->ports[1];
			return n->ports[1].guid;
		}
	}
	ck_abort_msg("no port with LID %u", lid);
	return 0;
}

START_TEST(test_agent_methods_and_prune)
{
	struct agent_fx x;
	struct sa_mcmember_record r;
	const struct sa_mad *a;
	const struct sa_mcmember_record *ar;
	struct fab_port *p1, *p2;
	uint64_t g1, g2, prefix = htobe64(PREFIX), be;

	agent_fx_init(&x, "fat2-small.net", true, 20, 1);
	x.sm.mc = mc_table_new(NULL);
	ck_assert_ptr_nonnull(x.sm.mc);
	agent_fx_start(&x);
	sa_mcast_precreate(&x.sm);		/* the default broadcast group */
	ck_assert_uint_eq(mc_table_count(x.sm.mc), 1);
	/* ca_lid[2] subscribes to every generic trap */
	{
		struct sa_mad m;
		struct sa_inform_info *ii = (struct sa_inform_info *)m.data;
		struct mad_addr from = { .lid = x.ca_lid[2], .qpn = 1,
					 .qkey = 0x80010000u };

		memset(&m, 0, sizeof(m));
		sa_request_hdr(&m, MAD_METHOD_SET, SA_ATTR_INFORM_INFO, 0);
		m.hdr.tid = htobe64(++x.tid);
		ii->lid_range_begin = htobe16(0xffff);
		ii->is_generic = 1;
		ii->subscribe = 1;
		ii->type = htobe16(0xffff);
		ii->trap_num = htobe16(0xffff);
		ii->qpn_resp_time = htobe32(1u << 8);
		mad_engine_recv(x.sm.engine, &m, sizeof(m), &from, 0);
		ck_assert_uint_eq(be16toh(last_sent(&x)->hdr.status), 0);
	}
	g1 = guid_of_lid(&x, x.ca_lid[0], &p1);
	g2 = guid_of_lid(&x, x.ca_lid[1], &p2);

	/* Set: GetResp with the group's record. */
	memset(&r, 0, sizeof(r));
	mgid_n(r.mgid, 7);
	memcpy(r.port_gid, &prefix, 8);
	be = htobe64(g1);
	memcpy(r.port_gid + 8, &be, 8);
	r.qkey = htobe32(0x42);
	r.pkey = htobe16(0xffff);
	r.scope_state = 0x51;
	agent_req(&x, MAD_METHOD_SET, CREATE_MASK, &r, x.ca_lid[0]);
	a = last_sent(&x);
	ck_assert_uint_eq(be16toh(a->hdr.status), 0);
	ck_assert_uint_eq(a->hdr.method, MAD_METHOD_GET | MAD_METHOD_RESP);
	ar = (const struct sa_mcmember_record *)a->data;
	ck_assert_uint_eq(be16toh(ar->mlid), 0xc001);
	/* trap 66 went to the subscriber, the MGID in its data details */
	{
		const struct sa_mad *rep = report_to(&x, x.ca_lid[2], 66);
		const struct smp_notice *n;

		ck_assert_ptr_nonnull(rep);
		n = (const struct smp_notice *)rep->data;
		ck_assert_uint_eq(n->generic_type, 0x80 | 3);
		ck_assert(!memcmp(n->data_details + 6, r.mgid, 16));
		ck_assert_ptr_null(report_to(&x, x.ca_lid[2], 67));
	}
	/* another port joins */
	be = htobe64(g2);
	memcpy(r.port_gid + 8, &be, 8);
	r.scope_state = 0x52;
	agent_req(&x, MAD_METHOD_SET, JOIN_MASK, &r, x.ca_lid[1]);
	ck_assert_uint_eq(be16toh(last_sent(&x)->hdr.status), 0);
	/* a refusal carries its status */
	r.port_gid[0] = 0x11;
	agent_req(&x, MAD_METHOD_SET, JOIN_MASK, &r, x.ca_lid[1]);
	ck_assert_uint_eq(be16toh(last_sent(&x)->hdr.status), SA_STATUS_INVALID_GID);
	r.port_gid[0] = 0xfe;
	/* Delete: DeleteResp */
	agent_req(&x, MAD_METHOD_DELETE, JOIN_MASK, &r, x.ca_lid[1]);
	a = last_sent(&x);
	ck_assert_uint_eq(be16toh(a->hdr.status), 0);
	ck_assert_uint_eq(a->hdr.method, MAD_METHOD_DELETE | MAD_METHOD_RESP);
	/* GetTable is served (an RMPP answer goes out) */
	{
		size_t before = x.fk.n_sent;

		agent_req(&x, MAD_METHOD_GET_TABLE, 0, &r, x.ca_lid[1]);
		ck_assert_uint_gt(x.fk.n_sent, before);
		a = last_sent(&x);
		ck_assert_uint_eq(be16toh(a->hdr.status), 0);
		ck_assert_uint_eq(a->hdr.method, MAD_METHOD_GET_TABLE | MAD_METHOD_RESP);
		/* both groups (the broadcast group and this one), 56 bytes
		 * apart (AttributeOffset 7) */
		ck_assert_uint_eq(be16toh(a->attr_offset), 7);
		ck_assert_uint_eq(a->data[0], 0xff);
		ck_assert_uint_eq(a->data[56], 0xff);
		ck_assert_uint_eq(a->data[112], 0);
	}

	/* The creator leaves the fabric (its GUID is gone from the model):
	 * after the sweep its memberships go and the group with them. */
	agent_req(&x, MAD_METHOD_SET, JOIN_MASK, &r, x.ca_lid[1]);
	ck_assert_uint_eq(be16toh(last_sent(&x)->hdr.status), 0);
	ck_assert_uint_eq(mc_find(x.sm.mc, r.mgid)->n_members, 2);
	p1->guid = 0x0badc0de0badc0deull;
	x.sm.fabric.gen += 1000003;
	sa_fabric_changed(&x.sm);
	ck_assert_ptr_null(mc_find(x.sm.mc, r.mgid));
	ck_assert_uint_eq(mc_table_count(x.sm.mc), 1);
	ck_assert_ptr_nonnull(run_until_report(&x, x.ca_lid[2], 67));
	ck_assert_uint_eq(mc_table_mlids_used(x.sm.mc), 1);
	p1->guid = g1;
	mc_table_free(x.sm.mc);
	x.sm.mc = NULL;
	agent_fx_free(&x);
}
END_TEST

static Suite *sa_mcmember_suite(void)
{
	Suite *s = suite_create("sa_mcmember");
	TCase *tc = tcase_create("mcmember");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_create_join_query_leave);
	tcase_add_test(tc, test_component_and_gid_statuses);
	tcase_add_test(tc, test_parameter_mismatch);
	tcase_add_test(tc, test_port_rate_and_mtu);
	tcase_add_test(tc, test_pkeys_and_proxy);
	tcase_add_test(tc, test_no_resources);
	tcase_add_test(tc, test_ipoib_rules);
	tcase_add_test(tc, test_snm_and_requested_mlid);
	tcase_add_test(tc, test_query_budget);
	tcase_add_test(tc, test_agent_methods_and_prune);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sa_mcmember_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
