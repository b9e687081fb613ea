/*
 * check_mcast_groups.c - the multicast group table (sm/mcast/groups.c)
 * and the pre-created groups (sm/mcast/precreate.c): every JoinState
 * transition, group life (the last full member), MLID allocation,
 * exhaustion and reuse, the limits, long join/leave runs that must leave
 * nothing behind (linux-rdma/opensm PR #43's leak), and the groups
 * partitions.conf pre-creates, as OpenSM 3.3.23 creates them.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "partitions/partitions.h"
#include "sm/mcast/mcast.h"

static const uint8_t zero_gid[16];

static void mgid_of(unsigned n, uint8_t mgid[16])
{
	memset(mgid, 0, 16);
	mgid[0] = 0xff;
	mgid[1] = 0x15;
	mgid[2] = 0xa0;
	mgid[3] = 0x1c;
	mgid[12] = (uint8_t)(n >> 24);
	mgid[13] = (uint8_t)(n >> 16);
	mgid[14] = (uint8_t)(n >> 8);
	mgid[15] = (uint8_t)n;
}

static struct mc_group *make(struct mc_table *t, unsigned n)
{
	uint8_t mgid[16];
	int err = 1;
	struct mc_group *g;

	mgid_of(n, mgid);
	g = mc_group_create(t, mgid, &err);
	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(err, 0);
	return g;
}

START_TEST(test_first_full_join_and_last_full_leave)
{
	struct mc_table *t = mc_table_new(NULL);
	struct mc_group *g = make(t, 1);
	uint8_t held, mgid[16];
	bool deleted;

	memcpy(mgid, g->mgid, 16);
	/* The first full member: trap 66; another: none. */
	ck_assert_int_eq(mc_join(t, g, 0xa, zero_gid, MC_JOIN_FULL, false, &held),
			 MC_TRAP_CREATED);
	ck_assert_uint_eq(held, MC_JOIN_FULL);
	ck_assert_int_eq(mc_join(t, g, 0xb, zero_gid, MC_JOIN_NON, false, &held), 0);
	ck_assert_int_eq(mc_join(t, g, 0xa, zero_gid, MC_JOIN_NON, false, &held), 0);
	ck_assert_uint_eq(held, MC_JOIN_FULL | MC_JOIN_NON);
	ck_assert_uint_eq(g->n_full, 1);
	ck_assert_uint_eq(g->n_members, 2);
	/* Leaves that do not hold the bits: refused, nothing changes. */
	ck_assert_int_eq(mc_leave(t, g, 0xb, MC_JOIN_FULL, &held, &deleted), -EINVAL);
	ck_assert_int_eq(mc_leave(t, g, 0xb, 0, &held, &deleted), -EINVAL);
	ck_assert_int_eq(mc_leave(t, g, 0xc, MC_JOIN_NON, &held, &deleted), -ENOENT);
	ck_assert_uint_eq(g->n_members, 2);
	/* A partial leave keeps the other state. */
	ck_assert_int_eq(mc_leave(t, g, 0xa, MC_JOIN_NON, &held, &deleted), 0);
	ck_assert_uint_eq(held, MC_JOIN_FULL);
	ck_assert(!deleted);
	/* The last full member leaves: the non member goes, the group and
	 * its MLID too, trap 67. */
	ck_assert_uint_eq(mc_table_mlids_used(t), 1);
	ck_assert_int_eq(mc_leave(t, g, 0xa, MC_JOIN_FULL, &held, &deleted),
			 MC_TRAP_DELETED);
	ck_assert(deleted);
	ck_assert_uint_eq(held, 0);
	ck_assert_ptr_null(mc_find(t, mgid));
	ck_assert_uint_eq(mc_table_mlids_used(t), 0);
	ck_assert_uint_eq(mc_port_groups(t, 0xa), 0);
	ck_assert_uint_eq(mc_port_groups(t, 0xb), 0);
	mc_table_free(t);
}
END_TEST

/*
 * Every JoinState a port may hold (1..15) and every leave (1..15), with
 * another full member keeping the group: the port keeps exactly the bits
 * it did not give up, or the leave is refused when it names a bit the
 * port does not hold (o15-0.1.14).
 */
START_TEST(test_every_transition)
{
	struct mc_table *t = mc_table_new(NULL);
	struct mc_group *g = make(t, 2);
	uint8_t held;
	bool deleted;

	ck_assert_int_eq(mc_join(t, g, 0x1, zero_gid, MC_JOIN_FULL, false, &held),
			 MC_TRAP_CREATED);
	for (unsigned have = 1; have <= 15; have++) {
		for (unsigned give = 1; give <= 15; give++) {
			int rc;

			ck_assert_int_eq(mc_join(t, g, 0x2, zero_gid, (uint8_t)have,
						 false, &held), 0);
			ck_assert_uint_eq(held, have);
			ck_assert_uint_eq(g->n_full, 1 + ((have & MC_JOIN_COUNTS) != 0));
			rc = mc_leave(t, g, 0x2, (uint8_t)give, &held, &deleted);
			if (give & ~have) {
				ck_assert_int_eq(rc, -EINVAL);
				ck_assert_uint_eq(mc_group_member(g, 0x2)->join_state,
						  have);
			} else {
				ck_assert_int_eq(rc, 0);
				ck_assert(!deleted);
				ck_assert_uint_eq(held, have & ~give);
				if (held)
					ck_assert_uint_eq(mc_group_member(g, 0x2)->join_state,
							  held);
				else
					ck_assert_ptr_null(mc_group_member(g, 0x2));
			}
			{
				unsigned final = rc < 0 ? have : have & ~give;

				ck_assert_uint_eq(g->n_full,
						  1 + ((final & MC_JOIN_COUNTS) != 0));
			}
			/* back to no membership for the next pair */
			if (mc_group_member(g, 0x2))
				ck_assert_int_eq(mc_leave(t, g, 0x2,
					mc_group_member(g, 0x2)->join_state,
					&held, &deleted), 0);
			ck_assert_uint_eq(g->n_full, 1);
		}
	}
	/* JoinState 0 is no join. */
	ck_assert_int_eq(mc_join(t, g, 0x2, zero_gid, 0, false, &held), -EINVAL);
	mc_table_free(t);
}
END_TEST

/* A port that keeps send-only full membership still keeps the group;
 * only the last counting bit of the last port deletes it. */
START_TEST(test_send_only_full_counts)
{
	struct mc_table *t = mc_table_new(NULL);
	struct mc_group *g = make(t, 3);
	uint8_t held;
	bool deleted;

	ck_assert_int_eq(mc_join(t, g, 0x5, zero_gid, MC_JOIN_SENDONLY_FULL,
				 false, &held), MC_TRAP_CREATED);
	ck_assert_int_eq(mc_join(t, g, 0x5, zero_gid, MC_JOIN_FULL, false, &held), 0);
	ck_assert_uint_eq(held, MC_JOIN_FULL | MC_JOIN_SENDONLY_FULL);
	/* OpenSM removes the port here and keeps counting it (PR #43). */
	ck_assert_int_eq(mc_leave(t, g, 0x5, MC_JOIN_FULL, &held, &deleted), 0);
	ck_assert_uint_eq(held, MC_JOIN_SENDONLY_FULL);
	ck_assert_uint_eq(g->n_full, 1);
	ck_assert_ptr_nonnull(mc_group_member(g, 0x5));
	ck_assert_int_eq(mc_leave(t, g, 0x5, MC_JOIN_SENDONLY_FULL, &held,
				  &deleted), MC_TRAP_DELETED);
	ck_assert(deleted);
	ck_assert_uint_eq(mc_table_mlids_used(t), 0);
	mc_table_free(t);
}
END_TEST

START_TEST(test_mlid_exhaustion_and_reuse)
{
	struct mc_table *t = mc_table_new(NULL);
	struct mc_group *g[4];
	uint8_t mgid[16];
	int err = 0;

	mc_table_set_mlid_top(t, MC_MLID_MIN + 3);
	ck_assert_uint_eq(mc_table_mlid_top(t), MC_MLID_MIN + 3);
	for (unsigned i = 0; i < 4; i++) {
		g[i] = make(t, 10 + i);
		ck_assert_uint_eq(g[i]->mlid, MC_MLID_MIN + i);
		ck_assert_ptr_eq(mc_find_mlid(t, g[i]->mlid), g[i]);
	}
	mgid_of(99, mgid);
	ck_assert_ptr_null(mc_group_create(t, mgid, &err));
	ck_assert_int_eq(err, -ENOSPC);
	/* The same MGID twice: EEXIST. */
	ck_assert_ptr_null(mc_group_create(t, g[0]->mgid, &err));
	ck_assert_int_eq(err, -EEXIST);
	/* A freed MLID is the next one handed out (the lowest free). */
	mc_group_delete(t, g[1]);
	ck_assert_ptr_null(mc_find_mlid(t, MC_MLID_MIN + 1));
	ck_assert_uint_eq(mc_table_mlids_used(t), 3);
	g[1] = mc_group_create(t, mgid, &err);
	ck_assert_ptr_nonnull(g[1]);
	ck_assert_uint_eq(g[1]->mlid, MC_MLID_MIN + 1);
	ck_assert_uint_eq(mc_table_mlids_used(t), 4);
	/* Bounds of the top. */
	mc_table_set_mlid_top(t, 5);
	ck_assert_uint_eq(mc_table_mlid_top(t), MC_MLID_MIN);
	mc_table_set_mlid_top(t, 0xffff);
	ck_assert_uint_eq(mc_table_mlid_top(t), MC_MLID_MAX);
	mc_table_free(t);
}
END_TEST

START_TEST(test_limits)
{
	struct mc_limits lim = { .max_groups = 3, .members_per_group = 2,
				 .groups_per_port = 2 };
	struct mc_table *t = mc_table_new(&lim);
	struct mc_group *a = make(t, 1), *b = make(t, 2), *c = make(t, 3);
	uint8_t mgid[16], held;
	bool deleted;
	int err = 0;

	mgid_of(4, mgid);
	ck_assert_ptr_null(mc_group_create(t, mgid, &err));
	ck_assert_int_eq(err, -ENOBUFS);
	/* members per group */
	ck_assert_int_eq(mc_join(t, a, 0x1, zero_gid, MC_JOIN_FULL, false, &held),
			 MC_TRAP_CREATED);
	ck_assert_int_eq(mc_join(t, a, 0x2, zero_gid, MC_JOIN_NON, false, &held), 0);
	ck_assert_int_eq(mc_join(t, a, 0x3, zero_gid, MC_JOIN_NON, false, &held),
			 -ENOBUFS);
	ck_assert_ptr_null(mc_group_member(a, 0x3));
	/* a member changing its state is no new member */
	ck_assert_int_eq(mc_join(t, a, 0x2, zero_gid, MC_JOIN_SENDONLY, false,
				 &held), 0);
	/* groups per port */
	ck_assert_int_eq(mc_join(t, b, 0x1, zero_gid, MC_JOIN_FULL, false, &held),
			 MC_TRAP_CREATED);
	ck_assert_uint_eq(mc_port_groups(t, 0x1), 2);
	ck_assert_int_eq(mc_join(t, c, 0x1, zero_gid, MC_JOIN_FULL, false, &held),
			 -EDQUOT);
	ck_assert_uint_eq(c->n_members, 0);
	ck_assert_uint_eq(mc_port_groups(t, 0x1), 2);
	/* a leave makes room again */
	ck_assert_int_eq(mc_leave(t, b, 0x1, MC_JOIN_FULL, &held, &deleted),
			 MC_TRAP_DELETED);
	ck_assert_uint_eq(mc_port_groups(t, 0x1), 1);
	ck_assert_int_eq(mc_join(t, c, 0x1, zero_gid, MC_JOIN_FULL, false, &held),
			 MC_TRAP_CREATED);
	ck_assert_uint_eq(mc_table_limits(t)->groups_per_port, 2);
	mc_table_free(t);
}
END_TEST

/* Many ports in many groups: the per-port counts stay exact through
 * growth and backward-shift deletion. */
START_TEST(test_port_counts)
{
	struct mc_table *t = mc_table_new(NULL);
	struct mc_group *g[8];
	uint8_t held;
	bool deleted;

	for (unsigned i = 0; i < 8; i++) {
		g[i] = make(t, 100 + i);
		ck_assert_int_eq(mc_join(t, g[i], 0xffff, zero_gid, MC_JOIN_FULL,
					 false, &held), MC_TRAP_CREATED);
	}
	for (uint64_t p = 1; p <= 2000; p++)
		for (unsigned i = 0; i < p % 8 + 1; i++)
			ck_assert_int_eq(mc_join(t, g[i], p * 0x9e3779b97f4a7c15ull,
						 zero_gid, MC_JOIN_NON, false,
						 &held), 0);
	for (uint64_t p = 1; p <= 2000; p++)
		ck_assert_uint_eq(mc_port_groups(t, p * 0x9e3779b97f4a7c15ull),
				  p % 8 + 1);
	for (uint64_t p = 1; p <= 2000; p += 2)
		for (unsigned i = 0; i < p % 8 + 1; i++)
			ck_assert_int_eq(mc_leave(t, g[i], p * 0x9e3779b97f4a7c15ull,
						  MC_JOIN_NON, &held, &deleted), 0);
	for (uint64_t p = 1; p <= 2000; p++)
		ck_assert_uint_eq(mc_port_groups(t, p * 0x9e3779b97f4a7c15ull),
				  p % 2 ? 0 : p % 8 + 1);
	/* deleting a group uncounts its members */
	ck_assert_int_eq(mc_leave(t, g[0], 0xffff, MC_JOIN_FULL, &held, &deleted),
			 MC_TRAP_DELETED);
	ck_assert(deleted);
	ck_assert_uint_eq(mc_port_groups(t, 2 * 0x9e3779b97f4a7c15ull), 2);
	mc_table_free(t);
}
END_TEST

/*
 * 5,000 join/leave cycles, among them OpenSM's leaking sequence
 * (send-only full join, full join, full leave, then the rest): the MLIDs
 * and groups in use and the per-port counts end as they began, and
 * create/delete of ever new MGIDs keeps the MGID hash usable (tombstones
 * are swept) with a small max_groups.
 */
START_TEST(test_cycles_leave_nothing)
{
	struct mc_limits lim = { .max_groups = 4 };
	struct mc_table *t = mc_table_new(&lim);
	struct mc_group *keep = make(t, 0), *g;
	uint8_t held;
	bool deleted;
	uint16_t first_mlid = 0;

	keep->precreated = true;
	ck_assert_uint_eq(mc_table_mlids_used(t), 1);
	for (unsigned i = 1; i <= 5000; i++) {
		g = make(t, i);
		if (!first_mlid)
			first_mlid = g->mlid;
		ck_assert_uint_eq(g->mlid, first_mlid);
		ck_assert_int_eq(mc_join(t, g, 0x77, zero_gid,
					 MC_JOIN_SENDONLY_FULL, false, &held),
				 MC_TRAP_CREATED);
		ck_assert_int_eq(mc_join(t, keep, 0x77, zero_gid, MC_JOIN_NON,
					 false, &held), i == 1 ? 0 : 0);
		switch (i % 3) {
		case 0:		/* PR #43: full join, full leave, then the rest */
			ck_assert_int_eq(mc_join(t, g, 0x77, zero_gid, MC_JOIN_FULL,
						 false, &held), 0);
			ck_assert_int_eq(mc_leave(t, g, 0x77, MC_JOIN_FULL, &held,
						  &deleted), 0);
			ck_assert_uint_eq(held, MC_JOIN_SENDONLY_FULL);
			ck_assert_int_eq(mc_leave(t, g, 0x77, MC_JOIN_SENDONLY_FULL,
						  &held, &deleted), MC_TRAP_DELETED);
			break;
		case 1:		/* full join, one leave of both */
			ck_assert_int_eq(mc_join(t, g, 0x77, zero_gid, MC_JOIN_FULL,
						 false, &held), 0);
			ck_assert_int_eq(mc_leave(t, g, 0x77, MC_JOIN_FULL |
						  MC_JOIN_SENDONLY_FULL, &held,
						  &deleted), MC_TRAP_DELETED);
			break;
		default:	/* a second port, then the send-only full leaves */
			ck_assert_int_eq(mc_join(t, g, 0x78, zero_gid, MC_JOIN_NON,
						 false, &held), 0);
			ck_assert_int_eq(mc_leave(t, g, 0x77, MC_JOIN_SENDONLY_FULL,
						  &held, &deleted), MC_TRAP_DELETED);
			break;
		}
		ck_assert(deleted);
		ck_assert_int_eq(mc_leave(t, keep, 0x77, MC_JOIN_NON, &held,
					  &deleted), 0);
		ck_assert(!deleted);
	}
	ck_assert_uint_eq(mc_table_mlids_used(t), 1);
	ck_assert_uint_eq(mc_table_count(t), 1);
	ck_assert_uint_eq(mc_port_groups(t, 0x77), 0);
	ck_assert_uint_eq(mc_port_groups(t, 0x78), 0);
	ck_assert_ptr_eq(mc_find(t, keep->mgid), keep);
	/* A pre-created group outlives its last full member, MLID and all. */
	ck_assert_int_eq(mc_join(t, keep, 0x79, zero_gid, MC_JOIN_FULL, false,
				 &held), MC_TRAP_CREATED);
	ck_assert_int_eq(mc_leave(t, keep, 0x79, MC_JOIN_FULL, &held, &deleted),
			 MC_TRAP_DELETED);
	ck_assert(!deleted);
	ck_assert_uint_eq(keep->mlid, MC_MLID_MIN);
	ck_assert_uint_eq(mc_table_mlids_used(t), 1);
	mc_table_free(t);
}
END_TEST

START_TEST(test_assign_mgid)
{
	struct mc_table *t = mc_table_new(NULL);
	uint8_t a[16], b[16];

	ck_assert_int_eq(mc_assign_mgid(t, 5, 0xfe80000000000000ull, a), 0);
	ck_assert_uint_eq(a[0], 0xff);
	ck_assert_uint_eq(a[1], 0x15);
	ck_assert_uint_eq(a[2], 0xa0);
	ck_assert_uint_eq(a[3], 0x1b);
	ck_assert_uint_eq(a[4], 0xfe);
	ck_assert_uint_eq(a[5], 0x80);
	ck_assert_int_eq(mc_assign_mgid(t, 5, 0xfe80000000000000ull, b), 0);
	ck_assert(memcmp(a, b, 16) != 0);
	mc_table_free(t);
}
END_TEST

static const uint8_t bcast_default[16] = {
	0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0,
	0xff, 0xff, 0xff, 0xff,
};

/* Without a partitions.conf: OpenSM's default broadcast group. */
START_TEST(test_precreate_default)
{
	struct mc_table *t = mc_table_new(NULL);
	struct part_config c;
	struct mc_precreate_report r;
	struct mc_group *g;

	ck_assert_int_eq(part_config_default(&c), 0);
	ck_assert_int_eq(mc_precreate(t, &c, 18, &r), 0);
	ck_assert_uint_eq(r.created, 1);
	g = mc_find(t, bcast_default);
	ck_assert_ptr_nonnull(g);
	ck_assert(g->precreated);
	ck_assert_uint_eq(g->mlid, 0xc000);
	ck_assert_uint_eq(g->pkey, 0xffff);
	ck_assert_uint_eq(g->qkey, 0x0b1b);
	ck_assert_uint_eq(g->rate, 3);
	ck_assert_uint_eq(g->mtu, 4);
	ck_assert_uint_eq(g->sl, 0);
	ck_assert_uint_eq(g->scope, 2);
	ck_assert_uint_eq(g->hop_limit, 0);
	ck_assert_uint_eq(g->pkt_life, 18);
	/* again: nothing new */
	ck_assert_int_eq(mc_precreate(t, &c, 18, &r), 0);
	ck_assert_uint_eq(r.created, 0);
	ck_assert_uint_eq(r.kept, 1);
	ck_assert_uint_eq(mc_table_count(t), 1);
	part_config_free(&c);
	mc_table_free(t);
}
END_TEST

static void parse(const char *text, struct part_config *c)
{
	struct part_options opt = { 0 };
	struct part_diag d;

	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(part_parse("t.conf", text, strlen(text), &opt, c, &d), 0);
	part_diag_free(&d);
}

/* With qos TRUE the groups take the partition's sl= (OpenSM keeps a
 * partition's SL only then); an mgid= line's own SL stays. */
START_TEST(test_precreate_qos_sl)
{
	struct mc_table *t = mc_table_new(NULL);
	struct part_config c;
	struct mc_precreate_report r;
	const uint8_t b0002[16] = { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x02, 0, 0, 0,
				    0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	const uint8_t inherit[16] = { 0xff, 0x12, 0xa0, 0x1c, 0, 0, 0, 0, 0, 0,
				      0, 0, 0, 0, 0, 8 };
	const uint8_t own[16] = { 0xff, 0x12, 0xa0, 0x1c, 0, 0, 0, 0, 0, 0, 0,
				  0, 0, 0, 0, 9 };
	struct mc_group *g;

	parse("Default=0x7fff, ipoib : ALL=full ;\n"
	      "p2=0x0002, ipoib, sl=3 :\n"
	      "  mgid=ff12:a01c::8, Q_Key=0x1234\n"
	      "  mgid=ff12:a01c::9, Q_Key=0x1234, sl=2\n"
	      "  ALL=full ;\n", &c);
	ck_assert_int_eq(mc_precreate_qos(t, &c, 18, true, &r), 0);
	ck_assert_ptr_nonnull(g = mc_find(t, b0002));
	ck_assert_uint_eq(g->sl, 3);
	ck_assert_ptr_nonnull(g = mc_find(t, inherit));
	ck_assert_uint_eq(g->sl, 3);
	ck_assert_ptr_nonnull(g = mc_find(t, own));
	ck_assert_uint_eq(g->sl, 2);
	/* qos FALSE again (a reload): the empty groups take SL 0, the
	 * mgid= line's own SL stays */
	ck_assert_int_eq(mc_precreate_qos(t, &c, 18, false, &r), 0);
	ck_assert_uint_eq(mc_find(t, b0002)->sl, 0);
	ck_assert_uint_eq(mc_find(t, inherit)->sl, 0);
	ck_assert_uint_eq(mc_find(t, own)->sl, 2);
	part_config_free(&c);
	mc_table_free(t);
}
END_TEST

START_TEST(test_precreate_partitions_and_reload)
{
	struct mc_table *t = mc_table_new(NULL);
	struct part_config c, c2;
	struct mc_precreate_report r;
	const uint8_t b7fff[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0,
				    0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	const uint8_t b0002[16] = { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x02, 0, 0, 0,
				    0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	/* mgid= lines: an IPv6 all-nodes group (P_Key filled in, Q_Key
	 * 0x0b1b, the partition's scope 5), a non-IP group with its own
	 * Q_Key and SL, and an IPoIB group with a foreign rate (skipped). */
	const uint8_t v6[16] = { 0xff, 0x15, 0x60, 0x1b, 0x80, 0x02, 0, 0, 0, 0,
				 0, 0, 0, 0, 0, 1 };
	const uint8_t other[16] = { 0xff, 0x15, 0xa0, 0x1c, 0, 0, 0, 0, 0, 0, 0,
				    0, 0, 0, 0, 9 };
	struct mc_group *g;
	uint8_t held;
	bool deleted;

	parse("Default=0x7fff, ipoib : ALL=full ;\n"
	      "p2=0x0002, ipoib, rate=7, mtu=5, sl=3, scope=5 :\n"
	      "  mgid=ff12:601b::1\n"
	      "  mgid=ff12:a01c::9, Q_Key=0x1234, sl=2\n"
	      "  mgid=ff12:401b::2, rate=3\n"
	      "  ALL=full ;\n", &c);
	ck_assert_int_eq(mc_precreate(t, &c, 18, &r), 0);
	ck_assert_uint_eq(r.created, 4);
	ck_assert_uint_eq(r.skipped, 1);
	g = mc_find(t, b7fff);
	ck_assert_ptr_nonnull(g);
	g = mc_find(t, b0002);
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(g->pkey, 0x8002);
	ck_assert_uint_eq(g->rate, 7);
	ck_assert_uint_eq(g->mtu, 5);
	ck_assert_uint_eq(g->sl, 0);		/* no QoS: OpenSM's SL 0 */
	ck_assert_uint_eq(g->scope, 2);		/* broadcast: link-local */
	ck_assert_uint_eq(g->qkey, 0x0b1b);
	g = mc_find(t, v6);
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(g->scope, 5);
	ck_assert_uint_eq(g->hop_limit, 0xff);
	ck_assert_uint_eq(g->qkey, 0x0b1b);
	ck_assert_uint_eq(g->rate, 7);
	g = mc_find(t, other);
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(g->qkey, 0x1234);
	ck_assert_uint_eq(g->sl, 2);
	ck_assert_uint_eq(g->pkey, 0x8002);
	ck_assert_uint_eq(mc_table_mlids_used(t), 4);

	/* p2 gone: its groups stop being pre-created; the one with a full
	 * member lives until that member leaves, the others go now. */
	g = mc_find(t, b0002);
	ck_assert_int_eq(mc_join(t, g, 0x42, zero_gid, MC_JOIN_FULL, false,
				 &held), MC_TRAP_CREATED);
	parse("Default=0x7fff, ipoib : ALL=full ;\n", &c2);
	ck_assert_int_eq(mc_precreate(t, &c2, 18, &r), 0);
	ck_assert_uint_eq(r.kept, 1);
	ck_assert_uint_eq(r.released, 3);
	ck_assert_uint_eq(r.deleted, 2);
	ck_assert_ptr_null(mc_find(t, v6));
	ck_assert_ptr_null(mc_find(t, other));
	ck_assert_ptr_eq(mc_find(t, b0002), g);
	ck_assert(!g->precreated);
	ck_assert_int_eq(mc_leave(t, g, 0x42, MC_JOIN_FULL, &held, &deleted),
			 MC_TRAP_DELETED);
	ck_assert(deleted);
	ck_assert_uint_eq(mc_table_count(t), 1);
	ck_assert_uint_eq(mc_table_mlids_used(t), 1);
	part_config_free(&c);
	part_config_free(&c2);
	mc_table_free(t);
}
END_TEST

/* A partition's MTU or rate changed: its empty pre-created groups take
 * the new values, one with members keeps what they joined with until a
 * later pass finds it empty. */
START_TEST(test_precreate_params_change)
{
	struct mc_table *t = mc_table_new(NULL);
	struct part_config c1, c2;
	struct mc_precreate_report r;
	const uint8_t b7fff[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0,
				    0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	const uint8_t b0002[16] = { 0xff, 0x12, 0x40, 0x1b, 0x80, 0x02, 0, 0, 0,
				    0, 0, 0, 0xff, 0xff, 0xff, 0xff };
	struct mc_group *g, *e;
	uint8_t held;
	bool deleted;

	parse("Default=0x7fff, ipoib, mtu=5 : ALL=full ;\n"
	      "p2=0x0002, ipoib, mtu=5, rate=7 : ALL=full ;\n", &c1);
	parse("Default=0x7fff, ipoib, mtu=4 : ALL=full ;\n"
	      "p2=0x0002, ipoib, mtu=4, rate=6 : ALL=full ;\n", &c2);
	ck_assert_int_eq(mc_precreate(t, &c1, 18, &r), 0);
	g = mc_find(t, b7fff);
	e = mc_find(t, b0002);
	ck_assert_uint_eq(g->mtu, 5);
	ck_assert_int_ge(mc_join(t, g, 0x42, zero_gid, MC_JOIN_FULL, false,
				 &held), 0);
	ck_assert_int_eq(mc_precreate(t, &c2, 18, &r), 0);
	ck_assert_uint_eq(r.updated, 1);	/* p2's: empty */
	ck_assert_uint_eq(e->mtu, 4);
	ck_assert_uint_eq(e->rate, 6);
	ck_assert_uint_eq(r.stale, 1);		/* Default's: a member */
	ck_assert_uint_eq(g->mtu, 5);
	ck_assert_mem_eq(r.first_stale, b7fff, 16);
	ck_assert_uint_eq(r.stale_mtu, 5);
	ck_assert_uint_eq(r.want_mtu, 4);
	ck_assert_int_ge(mc_leave(t, g, 0x42, MC_JOIN_FULL, &held, &deleted), 0);
	ck_assert(!deleted);			/* pre-created: it stays */
	ck_assert_int_eq(mc_precreate(t, &c2, 18, &r), 0);
	ck_assert_uint_eq(r.stale, 0);
	ck_assert_uint_eq(r.updated, 1);
	ck_assert_ptr_eq(mc_find(t, b7fff), g);	/* same group, same MLID */
	ck_assert_uint_eq(g->mtu, 4);
	ck_assert_int_eq(mc_precreate(t, &c2, 18, &r), 0);
	ck_assert_uint_eq(r.updated, 0);
	ck_assert_uint_eq(r.kept, 2);
	part_config_free(&c1);
	part_config_free(&c2);
	mc_table_free(t);
}
END_TEST

/* ff1<scope>:601b:<pkey>::1:ff<id>: an IPv6 solicited-node MGID. */
static void snm_of(uint8_t scope, uint16_t pkey, uint32_t id, uint8_t mgid[16])
{
	memset(mgid, 0, 16);
	mgid[0] = 0xff;
	mgid[1] = (uint8_t)(0x10 | scope);
	mgid[2] = 0x60;
	mgid[3] = 0x1b;
	mgid[4] = (uint8_t)(pkey >> 8);
	mgid[5] = (uint8_t)pkey;
	mgid[11] = 0x01;
	mgid[12] = 0xff;
	mgid[13] = (uint8_t)(id >> 16);
	mgid[14] = (uint8_t)(id >> 8);
	mgid[15] = (uint8_t)id;
}

START_TEST(test_snm_match)
{
	uint8_t m[16];

	snm_of(2, 0xffff, 0x123456, m);
	ck_assert(mc_mgid_is_ipv6_snm(m));
	m[1] = 0x05;		/* no T flag */
	ck_assert(!mc_mgid_is_ipv6_snm(m));
	snm_of(2, 0xffff, 1, m);
	m[3] = 0x1c;		/* not IPv6 over IB */
	ck_assert(!mc_mgid_is_ipv6_snm(m));
	snm_of(2, 0xffff, 1, m);
	m[12] = 0xfe;		/* not solicited-node */
	ck_assert(!mc_mgid_is_ipv6_snm(m));
	snm_of(2, 0xffff, 1, m);
	m[11] = 0x03;		/* bits OpenSM's mask leaves free */
	ck_assert(mc_mgid_is_ipv6_snm(m));
	m[11] = 0x00;
	ck_assert(!mc_mgid_is_ipv6_snm(m));
	snm_of(2, 0xffff, 1, m);
	m[7] = 1;
	ck_assert(!mc_mgid_is_ipv6_snm(m));
}
END_TEST

START_TEST(test_snm_consolidation)
{
	struct mc_table *t = mc_table_new(NULL);
	struct mc_group *a, *b, *c, *d, *e, *o;
	uint8_t m[16], held;
	bool deleted;
	int err;

	/* Off (the default): one MLID each. */
	snm_of(2, 0xffff, 1, m);
	a = mc_group_create(t, m, &err);
	snm_of(2, 0xffff, 2, m);
	b = mc_group_create(t, m, &err);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_ne(a->mlid, b->mlid);
	mc_table_set_snm_consolidation(t, true);
	/* On: a new one of the class shares an existing one's MLID ... */
	snm_of(2, 0xffff, 3, m);
	c = mc_group_create(t, m, &err);
	ck_assert_ptr_nonnull(c);
	ck_assert(c->mlid == a->mlid || c->mlid == b->mlid);
	snm_of(2, 0xffff, 4, m);
	d = mc_group_create(t, m, &err);
	ck_assert_uint_eq(d->mlid, c->mlid);
	ck_assert_uint_eq(mc_mlid_groups(t, c->mlid), 3);
	ck_assert_uint_eq(mc_table_mlids_used(t), 2);
	/* ... not one of another P_Key, scope, or not solicited-node. */
	snm_of(2, 0x8001, 4, m);
	e = mc_group_create(t, m, &err);
	ck_assert_uint_ne(e->mlid, a->mlid);
	ck_assert_uint_ne(e->mlid, b->mlid);
	snm_of(5, 0xffff, 4, m);
	o = mc_group_create(t, m, &err);
	ck_assert_uint_ne(o->mlid, a->mlid);
	ck_assert_uint_ne(o->mlid, b->mlid);
	ck_assert_uint_ne(o->mlid, e->mlid);
	mc_group_delete(t, o);
	o = make(t, 77);
	ck_assert_uint_eq(mc_mlid_groups(t, o->mlid), 1);
	ck_assert_uint_eq(mc_table_mlids_used(t), 4);

	/* The shared MLID stays while any of its groups does, and is then
	 * free (and reused). */
	uint16_t shared = d->mlid;
	struct mc_group *order[3] = { c, d, shared == a->mlid ? a : b };
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(mc_join(t, order[i], 0x10 + (unsigned)i, zero_gid,
					 MC_JOIN_FULL, false, &held), MC_TRAP_CREATED);
	}
	for (int i = 0; i < 3; i++) {
		ck_assert_ptr_nonnull(mc_find_mlid(t, shared));
		ck_assert_uint_eq(mc_find_mlid(t, shared)->mlid, shared);
		ck_assert_int_eq(mc_leave(t, order[i], 0x10 + (unsigned)i,
					  MC_JOIN_FULL, &held, &deleted),
				 MC_TRAP_DELETED);
		ck_assert(deleted);
		ck_assert_uint_eq(mc_mlid_groups(t, shared), 2u - (unsigned)i);
	}
	ck_assert_ptr_null(mc_find_mlid(t, shared));
	ck_assert_uint_eq(mc_table_mlids_used(t), 3);
	ck_assert_uint_eq(mc_group_create(t, (snm_of(9, 1, 1, m), m), &err)->mlid,
			  shared);

	/* Off again: existing groups keep their MLIDs, new ones get theirs. */
	mc_table_set_snm_consolidation(t, false);
	snm_of(2, 0x8001, 5, m);
	ck_assert_uint_ne(mc_group_create(t, m, &err)->mlid, e->mlid);
	/* A standby's copy of a consolidated MLID is accepted for the same
	 * class, refused for anything else. */
	snm_of(2, 0x8001, 6, m);
	ck_assert_ptr_nonnull(mc_group_create_mlid(t, m, e->mlid, &err));
	ck_assert_uint_eq(mc_mlid_groups(t, e->mlid), 2);
	mgid_of(99, m);
	ck_assert_ptr_null(mc_group_create_mlid(t, m, e->mlid, &err));
	ck_assert_int_eq(err, -EADDRINUSE);
	snm_of(3, 0x8001, 6, m);
	ck_assert_ptr_null(mc_group_create_mlid(t, m, e->mlid, &err));
	ck_assert_int_eq(err, -EADDRINUSE);
	mc_table_free(t);
}
END_TEST

START_TEST(test_requested_mlid)
{
	struct mc_table *t = mc_table_new(NULL);
	struct mc_group *a, *b;
	uint8_t m[16];
	int err;

	mc_table_set_mlid_top(t, MC_MLID_MIN + 63);	/* MulticastFDBCap 64 */
	/* Free and below the cap: honoured. */
	mgid_of(1, m);
	a = mc_group_create_req(t, m, MC_MLID_MIN + 40, &err);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->mlid, MC_MLID_MIN + 40);
	ck_assert_ptr_eq(mc_find_mlid(t, MC_MLID_MIN + 40), a);
	/* The top itself is fine. */
	mgid_of(2, m);
	ck_assert_uint_eq(mc_group_create_req(t, m, MC_MLID_MIN + 63, &err)->mlid,
			  MC_MLID_MIN + 63);
	/* Held, above the cap, unicast, permissive: the lowest free one. */
	mgid_of(3, m);
	b = mc_group_create_req(t, m, MC_MLID_MIN + 40, &err);
	ck_assert_uint_eq(b->mlid, MC_MLID_MIN);
	mgid_of(4, m);
	ck_assert_uint_eq(mc_group_create_req(t, m, MC_MLID_MIN + 64, &err)->mlid,
			  MC_MLID_MIN + 1);
	mgid_of(5, m);
	ck_assert_uint_eq(mc_group_create_req(t, m, 0x0005, &err)->mlid,
			  MC_MLID_MIN + 2);
	mgid_of(6, m);
	ck_assert_uint_eq(mc_group_create_req(t, m, 0xffff, &err)->mlid,
			  MC_MLID_MIN + 3);
	/* A freed one may be asked for again. */
	mc_group_delete(t, a);
	mgid_of(7, m);
	ck_assert_uint_eq(mc_group_create_req(t, m, MC_MLID_MIN + 40, &err)->mlid,
			  MC_MLID_MIN + 40);
	/* The asked-for MLID comes before a solicited-node class's. */
	mc_table_set_snm_consolidation(t, true);
	snm_of(2, 0xffff, 1, m);
	a = mc_group_create(t, m, &err);
	snm_of(2, 0xffff, 2, m);
	ck_assert_uint_eq(mc_group_create_req(t, m, MC_MLID_MIN + 50, &err)->mlid,
			  MC_MLID_MIN + 50);
	snm_of(2, 0xffff, 3, m);
	ck_assert_uint_eq(mc_group_create_req(t, m, MC_MLID_MIN + 40, &err)->mlid,
			  a->mlid);
	mc_table_free(t);
}
END_TEST

/*
 * A 1,152-member group (a fat2-1152 partition's broadcast group): the
 * member index finds every member and no other port through joins,
 * partial leaves, full leaves in scattered order and re-joins, checked
 * against a plain array after every step; its size stays bounded.
 */
#define BIG	1152
START_TEST(test_big_group_index)
{
	struct mc_table *t = mc_table_new(NULL);
	struct mc_group *g = make(t, 5);
	static uint8_t want[BIG];		/* JoinState, 0: not a member */
	uint64_t guid[BIG];
	uint8_t held;
	bool deleted;

	/* GUIDs as a vendor hands them out (consecutive), and some that
	 * differ only in high bits (the same low bits collide more). */
	for (unsigned i = 0; i < BIG; i++)
		guid[i] = i % 3 ? 0x0002c90300001000ull + i
				: ((uint64_t)i << 40) | 0x77;
	memset(want, 0, sizeof(want));
	for (unsigned i = 0; i < BIG; i++) {
		uint8_t js = i % 4 ? MC_JOIN_FULL : MC_JOIN_NON | MC_JOIN_SENDONLY;

		ck_assert_int_ge(mc_join(t, g, guid[i], zero_gid, js, false, &held), 0);
		want[i] = js;
	}
	for (int round = 0; round < 3; round++) {
		/* Every port: a member with its state, or none. */
		size_t n = 0;
		for (unsigned i = 0; i < BIG; i++) {
			struct mc_member *m = mc_group_member(g, guid[i]);

			if (want[i]) {
				ck_assert_ptr_nonnull(m);
				ck_assert_uint_eq(m->port_guid, guid[i]);
				ck_assert_uint_eq(m->join_state, want[i]);
				ck_assert_uint_eq(mc_port_groups(t, guid[i]), 1);
				n++;
			} else {
				ck_assert_ptr_null(m);
				ck_assert_uint_eq(mc_port_groups(t, guid[i]), 0);
			}
			ck_assert_ptr_null(mc_group_member(g, guid[i] ^ 0x1000000000ull));
		}
		ck_assert_uint_eq(g->n_members, n);
		ck_assert_uint_le(g->midx.size, 4 * 2048);
		/* Leaves in a scattered order: partial, then whole. */
		for (unsigned k = 0; k < BIG; k++) {
			unsigned i = (k * 7 + (unsigned)round) % BIG;

			if (!want[i] || (k + (unsigned)round) % 3)
				continue;
			if (want[i] & MC_JOIN_NON) {
				ck_assert_int_eq(mc_leave(t, g, guid[i], MC_JOIN_NON,
							  &held, &deleted), 0);
				want[i] &= (uint8_t)~MC_JOIN_NON;
			} else {
				ck_assert_int_ge(mc_leave(t, g, guid[i], want[i],
							  &held, &deleted), 0);
				ck_assert(!deleted);
				want[i] = 0;
			}
			ck_assert_uint_eq(held, want[i]);
		}
		/* Some come back. */
		for (unsigned i = (unsigned)round; i < BIG; i += 5) {
			if (want[i])
				continue;
			ck_assert_int_ge(mc_join(t, g, guid[i], zero_gid,
						 MC_JOIN_FULL, false, &held), 0);
			want[i] = MC_JOIN_FULL;
		}
	}
	/* Everyone leaves: the last full member takes the group along. */
	for (unsigned i = 0; i < BIG; i++) {
		if (!want[i] || want[i] & MC_JOIN_FULL)
			continue;
		ck_assert_int_eq(mc_leave(t, g, guid[i], want[i], &held, &deleted), 0);
		want[i] = 0;
	}
	size_t left = 0;
	for (unsigned i = 0; i < BIG; i++)
		left += want[i] != 0;
	for (unsigned i = 0; i < BIG; i++) {
		if (!want[i])
			continue;
		int rc = mc_leave(t, g, guid[i], want[i], &held, &deleted);
		if (--left) {
			ck_assert_int_eq(rc, 0);
			ck_assert_ptr_null(mc_group_member(g, guid[i]));
		} else {
			ck_assert_int_eq(rc, MC_TRAP_DELETED);
			ck_assert(deleted);
		}
	}
	ck_assert_uint_eq(mc_table_count(t), 0);
	for (unsigned i = 0; i < BIG; i++)
		ck_assert_uint_eq(mc_port_groups(t, guid[i]), 0);
	mc_table_free(t);
}
END_TEST

/* Group n created by requesting port `owner`: 0 or the error. */
static int create_by(struct mc_table *t, unsigned n, uint64_t owner)
{
	uint8_t mgid[16];
	int err = 1;
	struct mc_group *g;

	mgid_of(n, mgid);
	g = mc_group_create_for(t, mgid, 0, owner, &err);
	ck_assert_int_eq(g != NULL, err == 0);
	if (g)
		ck_assert_uint_eq(g->owner, owner);
	return err;
}

/*
 * 1,024 MLIDs (ibsim's MulticastFDBCap), 256 groups per port: four hosts
 * creating groups in turn as fast as they can cannot take the last MLIDs
 * from a fifth, nor the reserve from pre-created and IPoIB broadcast
 * groups.
 */
START_TEST(test_mlid_fair_share)
{
	struct mc_table *t = mc_table_new(NULL);
	unsigned got[6] = { 0 }, n = 0, first_refused = 0;
	struct mc_share sh;
	uint8_t mgid[16];
	int err;

	ck_assert_ptr_nonnull(t);
	mc_table_set_mlid_top(t, MC_MLID_MIN + 1023);
	for (unsigned round = 0; round < 256; round++)
		for (unsigned h = 1; h <= 4; h++) {
			int rc = create_by(t, n++, 0x100 + h);

			if (rc == 0)
				got[h]++;
			else if (!first_refused)
				first_refused = n;
			ck_assert(rc == 0 || rc == -EDQUOT);
		}
	/* they were stopped while free MLIDs remained */
	ck_assert_uint_gt(first_refused, 0);
	mc_mlid_share(t, 0x105, &sh);
	ck_assert_uint_eq(sh.reserve, MC_MLID_RESERVE);
	ck_assert_uint_gt(sh.free, sh.reserve);
	ck_assert_uint_eq(sh.mine, 0);
	for (unsigned h = 1; h <= 4; h++) {
		ck_assert_uint_lt(got[h], 256);
		ck_assert_uint_ge(got[h], 150);
	}
	/* a fifth host finds MLIDs, and more than a token few */
	while (create_by(t, n++, 0x105) == 0)
		got[5]++;
	ck_assert_uint_ge(got[5], 16);
	/* a fifth host's own groups count: the four are still refused */
	ck_assert_int_eq(create_by(t, n++, 0x101), -EDQUOT);
	/* and a sixth still finds some */
	while (create_by(t, n++, 0x106) == 0)
		got[0]++;
	ck_assert_uint_ge(got[0], 1);

	/* the reserve: IPoIB broadcast of any host, pre-created groups */
	mc_mlid_share(t, 0x107, &sh);
	ck_assert_uint_le(sh.free, sh.reserve);
	ck_assert_int_eq(create_by(t, n++, 0x107), -ENOSPC);
	memset(mgid, 0, 16);
	mgid[0] = 0xff;
	mgid[1] = 0x12;
	mgid[2] = 0x40;
	mgid[3] = 0x1b;
	mgid[4] = 0x80;
	mgid[5] = 0x01;
	memset(mgid + 12, 0xff, 4);
	ck_assert(mc_mgid_is_ipoib_broadcast(mgid));
	ck_assert_ptr_nonnull(mc_group_create_for(t, mgid, 0, 0x107, &err));
	mgid_of(0x7fffffff, mgid);
	ck_assert_ptr_nonnull(mc_group_create(t, mgid, &err));

	/* deleting frees the share: a refused host may create again */
	for (size_t i = 0; i < mc_table_count(t); i++) {
		struct mc_group *g = mc_table_at(t, i);

		if (g->owner == 0x101) {
			mc_group_delete(t, g);
			i--;
		}
	}
	ck_assert_uint_eq(mc_port_created(t, 0x101), 0);
	ck_assert_int_eq(create_by(t, n++, 0x101), 0);
	mc_table_free(t);
}
END_TEST

/* The groups-per-port quota counts the groups a port creates, also those
 * it creates by ProxyJoin for other ports. */
START_TEST(test_creator_quota)
{
	struct mc_limits lim = { .groups_per_port = 3 };
	struct mc_table *t = mc_table_new(&lim);

	ck_assert_ptr_nonnull(t);
	for (unsigned i = 0; i < 3; i++)
		ck_assert_int_eq(create_by(t, i, 0x200), 0);
	ck_assert_uint_eq(mc_port_created(t, 0x200), 3);
	ck_assert_uint_eq(mc_port_groups(t, 0x200), 0);	/* no member */
	ck_assert_int_eq(create_by(t, 3, 0x200), -EDQUOT);
	ck_assert_int_eq(create_by(t, 3, 0x201), 0);
	ck_assert_ptr_nonnull(make(t, 4));		/* no owner: no quota */
	mc_table_free(t);
}
END_TEST

static Suite *mcast_groups_suite(void)
{
	Suite *s = suite_create("mcast_groups");
	TCase *tc = tcase_create("groups");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_first_full_join_and_last_full_leave);
	tcase_add_test(tc, test_every_transition);
	tcase_add_test(tc, test_send_only_full_counts);
	tcase_add_test(tc, test_mlid_exhaustion_and_reuse);
	tcase_add_test(tc, test_limits);
	tcase_add_test(tc, test_port_counts);
	tcase_add_test(tc, test_cycles_leave_nothing);
	tcase_add_test(tc, test_assign_mgid);
	tcase_add_test(tc, test_precreate_default);
	tcase_add_test(tc, test_precreate_partitions_and_reload);
	tcase_add_test(tc, test_precreate_qos_sl);
	tcase_add_test(tc, test_precreate_params_change);
	tcase_add_test(tc, test_snm_match);
	tcase_add_test(tc, test_snm_consolidation);
	tcase_add_test(tc, test_requested_mlid);
	tcase_add_test(tc, test_big_group_index);
	tcase_add_test(tc, test_mlid_fair_share);
	tcase_add_test(tc, test_creator_quota);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(mcast_groups_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
