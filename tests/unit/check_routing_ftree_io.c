/*
 * check_routing_ftree_io.c - the ftree engine with I/O nodes
 * (io_guid_file, max_reverse_hops) on a two-level fat tree of 4 leaves,
 * 3 spines and 3 hosts per leaf, with a storage CA on a spine:
 *
 *  - without io_guid_file the spine with the CA is a leaf linked to the
 *    leaves: "not a fat tree", refused (the chain falls back);
 *  - with the CA in io_guid_file every switch routes to its LID, every
 *    CA port reaches every LID, the compute nodes' LIDs route exactly as
 *    on the same tree without the I/O node, and the tables are
 *    deadlock-free; the spines without the CA reach it by a reverse hop
 *    (down to a leaf, up again) whatever max_reverse_hops says, since
 *    no host's path starts there;
 *  - max_reverse_hops counts where a host's path needs reverse hops: two
 *    I/O nodes on two spines (each spine reaches the other's only down
 *    and up again), a leaf that lost its link to the I/O spine: refused
 *    with 0, routed with 1;
 *  - an I/O node on every spine: the reverse hops close dependency
 *    cycles, and those paths move to SL 2;
 *  - a switch of I/O nodes linked to the spines is a leaf, the compute
 *    nodes' routes as without it.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing_fixture.h"

#define LEAVES	4
#define SPINES	3
#define HOSTS	3

#define IO_SWITCH	(1u << SPINES)	/* build(): a switch of I/O nodes */

struct tree {
	struct fabric f;
	int32_t spine[SPINES], leaf[LEAVES];
	int32_t io[SPINES];	/* I/O CA on spine s, -1 */
	int32_t io_sw, io_ca[2];	/* IO_SWITCH: its switch, its 2 CAs */
};

/*
 * The tree; an I/O CA on port LEAVES + 1 of each spine in io_on (a
 * bitmask of spines), and with IO_SWITCH a switch with 2 I/O CAs linked
 * to port LEAVES + 2 of every spine, created after every other node so
 * that the other nodes keep their GUIDs and LIDs.
 */
static void build(struct tree *t, unsigned io_on)
{
	struct fabric *f = &t->f;

	fabric_init(f);
	for (unsigned s = 0; s < SPINES; s++)
		t->spine[s] = rf_sw(f, LEAVES + 2);
	for (unsigned i = 0; i < LEAVES; i++) {
		t->leaf[i] = rf_sw(f, HOSTS + SPINES);
		for (unsigned h = 0; h < HOSTS; h++)
			rf_link(f, rf_ca(f), 1, t->leaf[i], h + 1);
		for (unsigned s = 0; s < SPINES; s++)
			rf_link(f, t->leaf[i], HOSTS + 1 + s, t->spine[s], i + 1);
	}
	for (unsigned s = 0; s < SPINES; s++) {
		t->io[s] = -1;
		if (io_on & 1u << s) {
			t->io[s] = rf_ca(f);
			rf_link(f, t->io[s], 1, t->spine[s], LEAVES + 1);
		}
	}
	t->io_sw = -1;
	if (io_on & IO_SWITCH) {
		t->io_sw = rf_sw(f, SPINES + 2);
		for (unsigned s = 0; s < SPINES; s++)
			rf_link(f, t->io_sw, s + 1, t->spine[s], LEAVES + 2);
		for (unsigned k = 0; k < 2; k++) {
			t->io_ca[k] = rf_ca(f);
			rf_link(f, t->io_ca[k], 1, t->io_sw, SPINES + 1 + k);
		}
	}
	/* CA port GUIDs: the node's + 1, as an HCA's first port */
	for (size_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].type != NODE_TYPE_SWITCH)
			f->nodes[i].ports[1].guid = f->nodes[i].guid + 1;
	ck_assert_int_eq(lid_assign_sequential(f, 0), 0);
}

static uint16_t lid_of(const struct fabric *f, int32_t ca)
{
	return f->nodes[ca].ports[1].lid;
}

/* io_guid_file: the port GUIDs of t's I/O CAs into g. */
static size_t io_guids(const struct tree *t, uint64_t *g)
{
	size_t n = 0;

	for (unsigned s = 0; s < SPINES; s++)
		if (t->io[s] >= 0)
			g[n++] = t->f.nodes[t->io[s]].ports[1].guid;
	for (unsigned k = 0; t->io_sw >= 0 && k < 2; k++)
		g[n++] = t->f.nodes[t->io_ca[k]].ports[1].guid;
	return n;
}

/* Walk the tables from switch x to `lid`: the node it arrives at (-1: no
 * entry, a loop or a dead end), the reverse hops (an up hop after a down
 * hop: towards a spine after having left one) into *rev. */
static int32_t walk(const struct tree *t, const struct routing_result *r,
		    int32_t x, uint16_t lid, unsigned *rev)
{
	const struct fabric *f = &t->f;
	bool down = false;

	*rev = 0;
	for (unsigned h = 0; h < 16; h++) {
		unsigned e = r->lft[x].port[lid];
		const struct fab_port *pt;
		bool to_spine, from_spine = false;

		if (e == LFT_NO_PATH)
			return -1;
		if (e == 0)
			return x;
		pt = &f->nodes[x].ports[e];
		if (pt->peer_node == FAB_NONE)
			return -1;
		if (f->nodes[pt->peer_node].type != NODE_TYPE_SWITCH)
			return pt->peer_node;
		for (unsigned s = 0; s < SPINES; s++)
			from_spine |= x == t->spine[s];
		to_spine = !from_spine;	/* the I/O switch hangs below too */
		if (to_spine && down)
			(*rev)++;
		down |= from_spine;
		x = pt->peer_node;
	}
	return -1;
}

/* Every switch reaches the CA `ca`; the most reverse hops any needs, and
 * the most from a leaf (a switch whose hosts' paths start there). */
static void check_all_reach(const struct tree *t,
			    const struct routing_result *r, int32_t ca,
			    unsigned *max_rev, unsigned *max_leaf_rev)
{
	uint16_t lid = lid_of(&t->f, ca);

	*max_rev = *max_leaf_rev = 0;
	for (size_t i = 0; i < t->f.n_nodes; i++) {
		unsigned rev;
		bool leaf = false;

		if (t->f.nodes[i].type != NODE_TYPE_SWITCH)
			continue;
		ck_assert_msg(walk(t, r, (int32_t)i, lid, &rev) == ca,
			      "switch %zu does not reach LID %u", i, lid);
		for (unsigned k = 0; k < LEAVES; k++)
			leaf |= (int32_t)i == t->leaf[k];
		if (rev > *max_rev)
			*max_rev = rev;
		if (leaf && rev > *max_leaf_rev)
			*max_leaf_rev = rev;
	}
}

static int route(const struct fabric *f, const struct routing_opts *o,
		 struct routing_result *r, char *err, size_t len)
{
	memset(r, 0, sizeof(*r));
	return routing_run_opts("ftree,no_fallback", f, o, r, err, len);
}

/* (a) Without io_guid_file: the spine with the CA is a leaf. */
START_TEST(test_no_io_file)
{
	struct tree t;
	struct routing_result r;
	char err[512];

	build(&t, 1);
	ck_assert_int_eq(route(&t.f, NULL, &r, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "links within its own level") &&
		      strstr(err, "not a fat tree"), "%s", err);
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(routing_run("ftree,minhop", &t.f, &r, err,
				     sizeof(err)), 0);
	ck_assert_str_eq(r.engine, "minhop");
	routing_result_free(&r);
	fabric_free(&t.f);
}
END_TEST

/*
 * (b), (c) One I/O node on spine 0: routed with max_reverse_hops 1 and 0
 * alike; compute-node LIDs as without it.  With 0, OpenSM 3.3.23 gives
 * spines 1 and 2 no entry for the I/O node's LID (its non-CN routing goes
 * down from spine 0 only with reverse-hop credit; without a
 * root_guid_file its ftree refuses this tree before that, ERR AB26).
 * ibsm routes them down to a leaf and up again all the same: no host's
 * path starts at a switch without CA ports, only its own traffic (traps,
 * SMP answers), and max_reverse_hops bounds the hosts' paths.
 */
START_TEST(test_io_on_spine)
{
	struct tree t, plain;
	struct routing_result r, p;
	struct routing_opts o = { 0 };
	uint64_t g[SPINES];
	char err[512];
	unsigned rev, leaf_rev;
	uint16_t io_lid;
	size_t cn_lids = 0;

	build(&plain, 0);
	ck_assert_int_eq(route(&plain.f, NULL, &p, err, sizeof(err)), 0);
	build(&t, 1);
	o.io_guids = g;
	o.n_io_guids = io_guids(&t, g);
	io_lid = lid_of(&t.f, t.io[0]);
	for (unsigned hops = 0; hops <= 1; hops++) {
		o.max_reverse_hops = hops;
		ck_assert_msg(route(&t.f, &o, &r, err, sizeof(err)) == 0,
			      "%s", err);
		ck_assert_str_eq(r.engine, "ftree");
		ck_assert_msg(strstr(r.summary, "4 leaves") &&
			      strstr(r.summary, "1 I/O LIDs") &&
			      strstr(r.summary, "2 routes with reverse hops"),
			      "%s", r.summary);
		check_all_reach(&t, &r, t.io[0], &rev, &leaf_rev);
		ck_assert_uint_eq(rev, 1);	/* spines 1, 2 */
		ck_assert_uint_eq(leaf_rev, 0);
		/* the I/O node reaches every LID, every CA reaches it */
		rf_assert_deadlock_free(&t.f, &r);
		/* the leaves go straight up to spine 0 */
		for (unsigned i = 0; i < LEAVES; i++)
			ck_assert_uint_eq(r.lft[t.leaf[i]].port[io_lid],
					  HOSTS + 1);
		/* compute nodes' LIDs: the same tables */
		cn_lids = 0;
		for (size_t i = 0; i < plain.f.n_nodes; i++) {
			uint16_t lid = plain.f.nodes[i].ports[1].lid;

			if (plain.f.nodes[i].type == NODE_TYPE_SWITCH)
				continue;
			ck_assert_uint_eq(lid, t.f.nodes[i].ports[1].lid);
			for (size_t x = 0; x < plain.f.n_nodes; x++)
				if (plain.f.nodes[x].type == NODE_TYPE_SWITCH)
					ck_assert_uint_eq(r.lft[x].port[lid],
							  p.lft[x].port[lid]);
			cn_lids++;
		}
		ck_assert_uint_eq(cn_lids, LEAVES * HOSTS);
		routing_result_free(&r);
	}
	/* auto takes it for a fat tree too (not without io_guid_file) */
	memset(&r, 0, sizeof(r));
	ck_assert_msg(routing_run_opts("auto", &t.f, &o, &r, err,
				       sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(r.engine, "ftree");
	ck_assert_msg(strstr(r.summary, "1 I/O LIDs"), "%s", r.summary);
	routing_result_free(&r);
	memset(&r, 0, sizeof(r));
	ck_assert_msg(routing_run_opts("auto", &t.f, NULL, &r, err,
				       sizeof(err)) == 0, "%s", err);
	ck_assert_str_ne(r.engine, "ftree");
	routing_result_free(&r);
	routing_result_free(&p);
	fabric_free(&plain.f);
	fabric_free(&t.f);
}
END_TEST

/*
 * Two I/O nodes on spines 0 and 1: each spine sends to the other's node
 * only down and up again, and its I/O node's paths start there.
 */
START_TEST(test_io_to_io)
{
	struct tree t;
	struct routing_result r;
	struct routing_opts o = { 0 };
	uint64_t g[SPINES];
	char err[512];
	unsigned rev, leaf_rev;

	build(&t, 3);
	o.io_guids = g;
	o.n_io_guids = io_guids(&t, g);
	ck_assert_uint_eq(o.n_io_guids, 2);
	o.max_reverse_hops = 0;
	ck_assert_int_eq(route(&t.f, &o, &r, err, sizeof(err)), -ENETUNREACH);
	ck_assert_msg(strstr(err, "reverse hops") &&
		      strstr(err, "max_reverse_hops 0") &&
		      strstr(err, "switch 0x"), "%s", err);

	o.max_reverse_hops = 1;
	ck_assert_msg(route(&t.f, &o, &r, err, sizeof(err)) == 0, "%s", err);
	for (unsigned s = 0; s < 2; s++) {
		check_all_reach(&t, &r, t.io[s], &rev, &leaf_rev);
		ck_assert_uint_eq(rev, 1);
		ck_assert_uint_eq(leaf_rev, 0);
	}
	rf_assert_deadlock_free(&t.f, &r);
	ck_assert(r.cdg_acyclic);
	routing_result_free(&r);
	fabric_free(&t.f);
}
END_TEST

/*
 * Leaf 0 lost its link to spine 0 (the I/O node's): its hosts reach the
 * I/O node only through another spine and another leaf, up again.
 */
START_TEST(test_io_link_lost)
{
	struct tree t;
	struct routing_result r;
	struct routing_opts o = { 0 };
	uint64_t g[SPINES];
	char err[512];
	unsigned rev, leaf_rev;
	struct fab_port *a;

	build(&t, 1);
	a = &t.f.nodes[t.leaf[0]].ports[HOSTS + 1];
	ck_assert_int_eq(a->peer_node, t.spine[0]);
	pi_set_port_state(&a->pi, PORT_STATE_DOWN);
	pi_set_port_state(&t.f.nodes[t.spine[0]].ports[a->peer_port].pi,
			  PORT_STATE_DOWN);
	o.io_guids = g;
	o.n_io_guids = io_guids(&t, g);
	o.max_reverse_hops = 0;
	ck_assert_int_eq(route(&t.f, &o, &r, err, sizeof(err)), -ENETUNREACH);
	ck_assert_msg(strstr(err, "sw-") && strstr(err, "with 1 reverse hops"),
		      "%s", err);

	o.max_reverse_hops = 1;
	ck_assert_msg(route(&t.f, &o, &r, err, sizeof(err)) == 0, "%s", err);
	check_all_reach(&t, &r, t.io[0], &rev, &leaf_rev);
	ck_assert_uint_eq(leaf_rev, 1);
	rf_assert_deadlock_free(&t.f, &r);
	routing_result_free(&r);
	fabric_free(&t.f);
}
END_TEST

/*
 * An I/O node on every spine: each spine sends to the others' down and up
 * again, and those turns close channel dependency cycles that moving the
 * switch LIDs to SL 1 leaves: the reverse-hop paths go to SL 2, alone.
 * With max_layers 2 that is refused.
 */
START_TEST(test_io_layer)
{
	struct tree t;
	struct routing_result r;
	struct routing_opts o = { 0 };
	uint64_t g[SPINES];
	char err[512];
	unsigned rev, leaf_rev, n2 = 0;

	build(&t, 7);
	o.io_guids = g;
	o.n_io_guids = io_guids(&t, g);
	o.max_reverse_hops = 1;
	ck_assert_msg(route(&t.f, &o, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(strstr(r.summary, "3 I/O LIDs, 6 routes with reverse "
				     "hops on SL 2") &&
		      strstr(r.summary, "switch LIDs on SL 1"), "%s", r.summary);
	ck_assert_uint_eq(r.n_layers, 3);
	rf_assert_deadlock_free(&t.f, &r);
	ck_assert(r.cdg_acyclic);
	for (unsigned s = 0; s < SPINES; s++) {
		uint16_t lid = lid_of(&t.f, t.io[s]);

		check_all_reach(&t, &r, t.io[s], &rev, &leaf_rev);
		ck_assert_uint_eq(rev, 1);
		ck_assert_uint_eq(leaf_rev, 0);
		for (unsigned k = 0; k < SPINES; k++)
			ck_assert_uint_eq(routing_layer(&r, t.spine[k], lid),
					  k == s ? 0 : 2);
		for (unsigned i = 0; i < LEAVES; i++)
			ck_assert_uint_eq(routing_layer(&r, t.leaf[i], lid), 0);
	}
	/* those paths back on SL 0: cycles */
	for (unsigned k = 0; k < SPINES; k++)
		for (unsigned s = 0; s < SPINES; s++)
			if (routing_layer(&r, t.spine[k], lid_of(&t.f, t.io[s])) == 2) {
				r.sl[t.spine[k]][lid_of(&t.f, t.io[s])] = 0;
				n2++;
			}
	ck_assert_uint_eq(n2, 6);
	ck_assert_uint_gt(rf_cycles(&t.f, &r, NULL), 0);
	routing_result_free(&r);

	o.max_layers = 2;
	ck_assert_int_eq(route(&t.f, &o, &r, err, sizeof(err)), -ENOSPC);
	ck_assert_msg(strstr(err, "third layer") &&
		      strstr(err, "max_layers is 2"), "%s", err);
	fabric_free(&t.f);
}
END_TEST

/*
 * A switch of I/O nodes linked to the spines: a leaf beside the others
 * (from the compute nodes' leaves alone it would be a third level above
 * the spines, the compute nodes' routes through it); no reverse hops.
 */
START_TEST(test_io_switch)
{
	struct tree t, plain;
	struct routing_result r, p;
	struct routing_opts o = { 0 };
	uint64_t g[SPINES + 2];
	char err[512];
	unsigned rev, leaf_rev;

	build(&plain, 0);
	ck_assert_int_eq(route(&plain.f, NULL, &p, err, sizeof(err)), 0);
	build(&t, IO_SWITCH);
	o.io_guids = g;
	o.n_io_guids = io_guids(&t, g);
	ck_assert_uint_eq(o.n_io_guids, 2);
	ck_assert_msg(route(&t.f, &o, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(strstr(r.summary, "2 levels, 5 leaves, 3 roots") &&
		      strstr(r.summary, "2 I/O LIDs, 0 routes with reverse"),
		      "%s", r.summary);
	for (unsigned k = 0; k < 2; k++) {
		check_all_reach(&t, &r, t.io_ca[k], &rev, &leaf_rev);
		ck_assert_uint_eq(rev, 0);
	}
	rf_assert_deadlock_free(&t.f, &r);
	/* the I/O switch's LID comes before the CAs': node by node */
	for (size_t i = 0; i < plain.f.n_nodes; i++) {
		uint16_t lp = plain.f.nodes[i].ports[1].lid;
		uint16_t lt = t.f.nodes[i].ports[1].lid;

		if (plain.f.nodes[i].type == NODE_TYPE_SWITCH)
			continue;
		for (size_t x = 0; x < plain.f.n_nodes; x++)
			if (plain.f.nodes[x].type == NODE_TYPE_SWITCH)
				ck_assert_uint_eq(r.lft[x].port[lt],
						  p.lft[x].port[lp]);
	}
	routing_result_free(&r);
	routing_result_free(&p);
	fabric_free(&plain.f);
	fabric_free(&t.f);
}
END_TEST

/* The busiest link's flows in a summary. */
static unsigned busiest(const char *summary)
{
	const char *b = strstr(summary, "busiest link ");
	unsigned n = 0;

	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(sscanf(b, "busiest link %u", &n), 1);
	return n;
}

/*
 * Three levels (tests/topologies/fat3-pods.net: 8 cores, 4 pods), an I/O
 * node on core-001: the core stays at the top (its lower neighbours, one
 * spine per pod, share no leaf: not leaf_like()), as with the cores as
 * root_guid_file, the same busiest link; the other 7 cores and the 12
 * spines not linked to it reach the I/O node down and up again (no
 * host's path starts there).  Without io_guid_file the core would be a
 * leaf.
 */
START_TEST(test_io_on_core)
{
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { 0 };
	uint64_t g[1], roots[8];
	char err[512];
	int32_t core = -1, io;
	size_t nr = 0;
	unsigned n;

	rf_load(&f, "fat3-pods.net", 0);
	for (size_t i = 0; i < f.n_nodes; i++) {
		if (!strcmp(f.nodes[i].desc, "core-001"))
			core = (int32_t)i;
		if (!strncmp(f.nodes[i].desc, "core-", 5) && nr < 8)
			roots[nr++] = f.nodes[i].guid;
	}
	ck_assert_int_ge(core, 0);
	ck_assert_uint_eq(nr, 8);
	ck_assert_int_eq(f.nodes[core].ports[36].peer_node, FAB_NONE);
	io = rf_ca(&f);
	f.nodes[io].ports[1].guid = f.nodes[io].guid + 1;
	rf_link(&f, io, 1, core, 36);
	ck_assert_int_eq(lid_assign_sequential(&f, 0), 0);
	g[0] = f.nodes[io].ports[1].guid;
	o.io_guids = g;
	o.n_io_guids = 1;
	o.max_reverse_hops = 1;

	ck_assert_msg(route(&f, &o, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(strstr(r.summary, "3 levels, 16 leaves, 8 roots;") &&
		      strstr(r.summary, "1 I/O LIDs, 19 routes with reverse"),
		      "%s", r.summary);
	rf_assert_deadlock_free(&f, &r);
	n = busiest(r.summary);
	routing_result_free(&r);

	o.root_guids = roots;
	o.n_root_guids = nr;
	ck_assert_msg(route(&f, &o, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(strstr(r.summary, "3 levels") &&
		      strstr(r.summary, "8 roots (root_guid_file)") &&
		      strstr(r.summary, "1 I/O LIDs, 19 routes with reverse"),
		      "%s", r.summary);
	rf_assert_deadlock_free(&f, &r);
	ck_assert_uint_eq(busiest(r.summary), n);
	routing_result_free(&r);

	/* without io_guid_file: a leaf (levels from every CA) */
	ck_assert_msg(route(&f, NULL, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(strstr(r.summary, "17 leaves, 7 roots"), "%s", r.summary);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/*
 * Three levels, a switch of 2 I/O nodes linked to the 4 spines of pod 1
 * as a leaf is: a leaf (from the compute nodes alone it would sit at the
 * cores' level), the busiest link as on the tree without it.
 */
START_TEST(test_io_leaf_in_pod)
{
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { 0 };
	uint64_t g[2];
	char err[512];
	int32_t sp[4], sw, ca;
	unsigned ns = 0, plain;

	rf_load(&f, "fat3-pods.net", 0);
	ck_assert_msg(route(&f, NULL, &r, err, sizeof(err)) == 0, "%s", err);
	plain = busiest(r.summary);
	routing_result_free(&r);
	fabric_free(&f);

	rf_load(&f, "fat3-pods.net", 0);
	for (size_t i = 0; i < f.n_nodes && ns < 4; i++)
		if (!strncmp(f.nodes[i].desc, "spine-p01-", 10))
			sp[ns++] = (int32_t)i;
	ck_assert_uint_eq(ns, 4);
	sw = rf_sw(&f, 6);
	for (unsigned k = 0; k < 4; k++) {
		ck_assert_int_eq(f.nodes[sp[k]].ports[36].peer_node, FAB_NONE);
		rf_link(&f, sw, k + 1, sp[k], 36);
	}
	for (unsigned k = 0; k < 2; k++) {
		ca = rf_ca(&f);
		f.nodes[ca].ports[1].guid = f.nodes[ca].guid + 1;
		g[k] = f.nodes[ca].ports[1].guid;
		rf_link(&f, ca, 1, sw, 5 + k);
	}
	ck_assert_int_eq(lid_assign_sequential(&f, 0), 0);
	o.io_guids = g;
	o.n_io_guids = 2;
	ck_assert_msg(route(&f, &o, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(strstr(r.summary, "3 levels, 17 leaves, 8 roots;") &&
		      strstr(r.summary, "2 I/O LIDs, 0 routes with reverse"),
		      "%s", r.summary);
	ck_assert_uint_eq(busiest(r.summary), plain);
	rf_assert_deadlock_free(&f, &r);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* Every CA port an I/O node: no leaves, refused with the reason. */
START_TEST(test_all_io)
{
	struct tree t;
	struct routing_result r;
	struct routing_opts o = { 0 };
	uint64_t *g;
	size_t n = 0;
	char err[512];

	build(&t, 1);
	g = calloc(t.f.n_nodes, sizeof(*g));
	ck_assert_ptr_nonnull(g);
	for (size_t i = 0; i < t.f.n_nodes; i++)
		if (t.f.nodes[i].type != NODE_TYPE_SWITCH)
			g[n++] = t.f.nodes[i].ports[1].guid;
	o.io_guids = g;
	o.n_io_guids = n;
	ck_assert_int_eq(route(&t.f, &o, &r, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "io_guid_file"), "%s", err);
	free(g);
	fabric_free(&t.f);
}
END_TEST

static Suite *ftree_io_suite(void)
{
	Suite *s = suite_create("routing_ftree_io");
	TCase *tc = tcase_create("io");

	tcase_add_test(tc, test_no_io_file);
	tcase_add_test(tc, test_io_on_spine);
	tcase_add_test(tc, test_io_to_io);
	tcase_add_test(tc, test_io_link_lost);
	tcase_add_test(tc, test_io_layer);
	tcase_add_test(tc, test_io_switch);
	tcase_add_test(tc, test_io_on_core);
	tcase_add_test(tc, test_io_leaf_in_pod);
	tcase_add_test(tc, test_all_io);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ftree_io_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
