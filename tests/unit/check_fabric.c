/*
 * check_fabric.c - the fabric model (model/fabric.c): the GUID hash, nodes,
 * links and counts.
 *
 * The "regressions" case holds tests of defects found and fixed.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/fabric.h"

#define BIG	50000

/* ck_assert*() reports every passing check to the runner (a write per
 * call), which hot loops cannot afford: they use CHECK(). */
#define CHECK(expr, ...)	do { if (!(expr)) ck_abort_msg(__VA_ARGS__); } while (0)

static struct fabric F;

static void setup(void)
{
	fabric_init(&F);
}

static void teardown(void)
{
	fabric_free(&F);
}

/* GUID generators: i -> GUID, injective. */
static uint64_t guid_seq(size_t i)
{
	return 0x0002c90300000000ull + i;	/* one vendor, sequential */
}

static uint64_t guid_rand(size_t i)
{
	/* odd multiplies and xor-shifts are bijections of 64-bit words */
	uint64_t x = (uint64_t)(i + 1) * 0xd1342543de82ef95ull;

	x ^= x >> 32;
	x *= 0xaf251af3b0f025b5ull;
	x ^= x >> 29;
	return x;
}

static uint64_t guid_high(size_t i)
{
	/* identical low bits, the index only in the top bits */
	return (uint64_t)i << 40 | 0x1234;
}

typedef uint64_t (*guid_fn)(size_t);

/* Every node's ports as fabric_add_node must leave them. */
static void check_fresh_node(int32_t id, uint64_t guid, uint8_t type, uint8_t nports)
{
	const struct fab_node *n = fabric_node(&F, id);
	struct fab_node want_n;
	struct fab_port want_p;

	ck_assert_ptr_nonnull(n->ports);
	memset(&want_n, 0, sizeof(want_n));
	want_n.guid = guid;
	want_n.type = type;
	want_n.num_ports = nports;
	want_n.ports = n->ports;
	ck_assert_mem_eq(n, &want_n, sizeof(want_n));
	for (unsigned p = 0; p <= nports; p++) {
		memset(&want_p, 0, sizeof(want_p));
		want_p.num = (uint8_t)p;
		want_p.peer_node = FAB_NONE;
		CHECK(!memcmp(&n->ports[p], &want_p, sizeof(want_p)),
		      "node %d port %u not as fabric_add_node should leave it", id, p);
	}
}

/* ------------------------------------------------------------------ */
/* Nodes and the GUID hash                                              */
/* ------------------------------------------------------------------ */

START_TEST(empty_fabric)
{
	struct fabric_counts c;
	struct fabric zero;

	fabric_init(&zero);
	/* all but the generation, new at each fabric_init() */
	ck_assert_mem_eq(&F, &zero, offsetof(struct fabric, gen));
	ck_assert_int_eq(F.local_node, FAB_NONE);
	ck_assert_uint_eq(F.n_nodes, 0);
	ck_assert_int_eq(fabric_find(&F, 0), FAB_NONE);
	ck_assert_int_eq(fabric_find(&F, guid_seq(0)), FAB_NONE);
	ck_assert_int_eq(fabric_find(&F, ~0ull), FAB_NONE);
	fabric_count(&F, &c);
	ck_assert_uint_eq(c.switches + c.cas + c.routers + c.ports + c.links, 0);
	ck_assert_int_eq(fabric_link(&F, 0, 1, 0, 2), -EINVAL);
	fabric_free(&F);
	fabric_free(&F);
	/* all but the generation, new at each fabric_init() */
	ck_assert_mem_eq(&F, &zero, offsetof(struct fabric, gen));
}
END_TEST

static const struct {
	const char *name;
	guid_fn fn;
} guid_sets[] = {
	{ "sequential", guid_seq },
	{ "random", guid_rand },
	{ "high bits", guid_high },
};

START_TEST(add_find_many)
{
	guid_fn g = guid_sets[_i].fn;
	size_t next_check = 1;

	for (size_t i = 0; i < BIG; i++) {
		uint8_t type = (uint8_t)(i % 3 + 1);
		uint8_t np = (uint8_t)(i % 5);
		int32_t id = fabric_add_node(&F, g(i), type, np);

		CHECK(id == (int32_t)i, "%s: node %zu got id %d", guid_sets[_i].name, i, id);
		CHECK(fabric_find(&F, g(i)) == id, "%s: node %zu not found", guid_sets[_i].name, i);
		CHECK(F.n_nodes == i + 1, "n_nodes %zu after %zu adds", F.n_nodes, i + 1);
		/* load factor at most one half, table a power of two */
		CHECK(2 * F.n_nodes <= F.hash_size, "%zu nodes in a hash of %zu",
		      F.n_nodes, F.hash_size);
		CHECK((F.hash_size & (F.hash_size - 1)) == 0, "hash size %zu", F.hash_size);
		if (i + 1 == next_check || i + 1 == BIG) {
			/* around every growth: everything still there, exactly */
			for (size_t j = 0; j <= i; j++)
				CHECK(fabric_find(&F, g(j)) == (int32_t)j,
				      "%s: node %zu lost after %zu adds",
				      guid_sets[_i].name, j, i + 1);
			next_check *= 2;
		}
	}
	/* absent GUIDs are absent */
	for (size_t i = BIG; i < 2 * BIG; i++)
		CHECK(fabric_find(&F, g(i)) == FAB_NONE, "%s: GUID %zu found but never added",
		      guid_sets[_i].name, i);
	/* and every node is as it was added */
	for (size_t i = 0; i < BIG; i += 997)
		check_fresh_node((int32_t)i, g(i), (uint8_t)(i % 3 + 1), (uint8_t)(i % 5));
}
END_TEST

START_TEST(extreme_guids)
{
	const uint64_t g[] = { 0, 1, ~0ull, 0x8000000000000000ull, 0x7fffffffffffffffull };
	const size_t n = sizeof(g) / sizeof(g[0]);

	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(fabric_add_node(&F, g[i], NODE_TYPE_CA, 1), (int32_t)i);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(fabric_find(&F, g[i]), (int32_t)i);
		ck_assert_int_eq(fabric_add_node(&F, g[i], NODE_TYPE_CA, 1), -EEXIST);
	}
	ck_assert_int_eq(fabric_find(&F, 2), FAB_NONE);
	ck_assert_uint_eq(F.n_nodes, n);
}
END_TEST

START_TEST(duplicate_guid)
{
	int32_t a = fabric_add_node(&F, guid_seq(7), NODE_TYPE_SWITCH, 36);

	ck_assert_int_eq(a, 0);
	/* same GUID, same or different shape: refused, nothing changes */
	ck_assert_int_eq(fabric_add_node(&F, guid_seq(7), NODE_TYPE_SWITCH, 36), -EEXIST);
	ck_assert_int_eq(fabric_add_node(&F, guid_seq(7), NODE_TYPE_CA, 2), -EEXIST);
	ck_assert_uint_eq(F.n_nodes, 1);
	check_fresh_node(a, guid_seq(7), NODE_TYPE_SWITCH, 36);
	/* still refused once the table has grown many times */
	for (size_t i = 100; i < 100 + BIG / 5; i++)
		CHECK(fabric_add_node(&F, guid_seq(i), NODE_TYPE_CA, 1) >= 0, "add %zu", i);
	ck_assert_int_eq(fabric_add_node(&F, guid_seq(7), NODE_TYPE_CA, 1), -EEXIST);
	ck_assert_int_eq(fabric_add_node(&F, guid_seq(100), NODE_TYPE_CA, 1), -EEXIST);
	ck_assert_int_eq(fabric_add_node(&F, guid_seq(100 + BIG / 5 - 1), NODE_TYPE_CA, 1),
			 -EEXIST);
	ck_assert_uint_eq(F.n_nodes, 1 + BIG / 5);
	check_fresh_node(a, guid_seq(7), NODE_TYPE_SWITCH, 36);
	ck_assert_int_eq(fabric_find(&F, guid_seq(7)), a);
}
END_TEST

START_TEST(port_arrays)
{
	const uint8_t np[] = { 0, 1, 2, 36, 254, 255 };

	for (size_t i = 0; i < sizeof(np); i++) {
		int32_t id = fabric_add_node(&F, guid_rand(i), NODE_TYPE_SWITCH, np[i]);

		ck_assert_int_eq(id, (int32_t)i);
		check_fresh_node(id, guid_rand(i), NODE_TYPE_SWITCH, np[i]);
	}
	/* the last port of the widest node is usable (ASan checks the array) */
	ck_assert_int_eq(fabric_link(&F, 5, 255, 4, 254), 0);
	ck_assert_int_eq(fabric_node(&F, 5)->ports[255].peer_node, 4);
	ck_assert_int_eq(fabric_node(&F, 4)->ports[254].peer_port, 255);
}
END_TEST

/* Node pointers move when the array grows; ids stay. */
START_TEST(ids_survive_growth)
{
	int32_t first = fabric_add_node(&F, 42, NODE_TYPE_SWITCH, 4);

	fabric_node(&F, first)->sys_guid = 0xabc;
	snprintf(fabric_node(&F, first)->desc, sizeof(fabric_node(&F, first)->desc), "first");
	for (size_t i = 0; i < 5000; i++)
		CHECK(fabric_add_node(&F, guid_rand(i), NODE_TYPE_CA, 1) >= 0, "add %zu", i);
	ck_assert_uint_ge(F.cap_nodes, F.n_nodes);
	ck_assert_int_eq(fabric_find(&F, 42), first);
	ck_assert_uint_eq(fabric_node(&F, first)->sys_guid, 0xabc);
	ck_assert_str_eq(fabric_node(&F, first)->desc, "first");
	ck_assert_uint_eq(fabric_node(&F, first)->num_ports, 4);
	ck_assert_ptr_eq(fabric_node(&F, first), &F.nodes[first]);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Links                                                                */
/* ------------------------------------------------------------------ */

/* Every linked port's peer points back at it. */
static void check_symmetric(void)
{
	for (size_t i = 0; i < F.n_nodes; i++) {
		const struct fab_node *n = &F.nodes[i];

		CHECK(n->ports[0].peer_node == FAB_NONE, "node %zu port 0 linked", i);
		for (unsigned p = 1; p <= n->num_ports; p++) {
			const struct fab_port *pt = &n->ports[p];
			const struct fab_port *back;

			if (pt->peer_node == FAB_NONE)
				continue;
			CHECK(pt->peer_node >= 0 && pt->peer_node < (int32_t)F.n_nodes &&
			      pt->peer_port >= 1 &&
			      pt->peer_port <= F.nodes[pt->peer_node].num_ports,
			      "node %zu port %u -> node %d port %u: no such port", i, p,
			      pt->peer_node, pt->peer_port);
			back = &F.nodes[pt->peer_node].ports[pt->peer_port];
			CHECK(back->peer_node == (int32_t)i && back->peer_port == p,
			      "node %zu port %u -> node %d port %u -> node %d port %u",
			      i, p, pt->peer_node, pt->peer_port, back->peer_node,
			      back->peer_port);
		}
	}
}

/* peer_node/peer_port of every port, to see that a refusal changed nothing */
static size_t snapshot(int32_t *out, size_t max)
{
	size_t k = 0;

	for (size_t i = 0; i < F.n_nodes; i++)
		for (unsigned p = 0; p <= F.nodes[i].num_ports && k + 2 <= max; p++) {
			out[k++] = F.nodes[i].ports[p].peer_node;
			out[k++] = F.nodes[i].ports[p].peer_port;
		}
	return k;
}

START_TEST(link_validation)
{
	int32_t sw, ca, bare, before[128], after[128];
	size_t n;
	const struct {
		int32_t a;
		uint8_t pa;
		int32_t b;
		uint8_t pb;
	} bad[] = {
		{ 0, 0, 1, 1 },		/* port 0 (switch management port) */
		{ 0, 1, 1, 0 },
		{ 0, 0, 0, 0 },
		{ 0, 9, 1, 1 },		/* beyond the node's ports */
		{ 0, 1, 1, 3 },
		{ 0, 255, 1, 1 },
		{ 1, 1, 2, 1 },		/* a node with no ports at all */
		{ 2, 1, 2, 1 },
		{ -1, 1, 1, 1 },	/* node ids */
		{ 0, 1, -1, 1 },
		{ FAB_NONE, 1, FAB_NONE, 1 },
		{ 3, 1, 1, 1 },
		{ 0, 1, 3, 1 },
		{ INT32_MAX, 1, 1, 1 },
		{ 0, 1, INT32_MIN, 1 },
	};

	sw = fabric_add_node(&F, 1, NODE_TYPE_SWITCH, 8);
	ca = fabric_add_node(&F, 2, NODE_TYPE_CA, 2);
	bare = fabric_add_node(&F, 3, NODE_TYPE_ROUTER, 0);
	ck_assert_int_eq(sw, 0);
	ck_assert_int_eq(ca, 1);
	ck_assert_int_eq(bare, 2);
	ck_assert_int_eq(fabric_link(&F, sw, 2, ca, 2), 0);
	n = snapshot(before, 128);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(fabric_link(&F, bad[i].a, bad[i].pa, bad[i].b, bad[i].pb) == -EINVAL,
			      "link %d/%u - %d/%u accepted", bad[i].a, bad[i].pa, bad[i].b,
			      bad[i].pb);
		ck_assert_uint_eq(snapshot(after, 128), n);
		ck_assert_mem_eq(after, before, n * sizeof(before[0]));
	}
	/* the edges that are fine */
	ck_assert_int_eq(fabric_link(&F, sw, 8, ca, 1), 0);
	ck_assert_int_eq(fabric_link(&F, sw, 1, sw, 7), 0);
	check_symmetric();
}
END_TEST

START_TEST(link_symmetric)
{
	int32_t a = fabric_add_node(&F, 10, NODE_TYPE_SWITCH, 8);
	int32_t b = fabric_add_node(&F, 20, NODE_TYPE_CA, 2);
	int32_t c = fabric_add_node(&F, 30, NODE_TYPE_SWITCH, 8);

	ck_assert_int_eq(fabric_link(&F, a, 3, b, 2), 0);
	ck_assert_int_eq(F.nodes[a].ports[3].peer_node, b);
	ck_assert_uint_eq(F.nodes[a].ports[3].peer_port, 2);
	ck_assert_int_eq(F.nodes[b].ports[2].peer_node, a);
	ck_assert_uint_eq(F.nodes[b].ports[2].peer_port, 3);
	/* recorded from the other end: the same link */
	ck_assert_int_eq(fabric_link(&F, c, 8, a, 5), 0);
	ck_assert_int_eq(F.nodes[a].ports[5].peer_node, c);
	ck_assert_uint_eq(F.nodes[a].ports[5].peer_port, 8);
	/* recording a link twice is harmless (both ends explore it) */
	ck_assert_int_eq(fabric_link(&F, a, 5, c, 8), 0);
	ck_assert_int_eq(fabric_link(&F, c, 8, a, 5), 0);
	/* other ports untouched */
	ck_assert_int_eq(F.nodes[a].ports[4].peer_node, FAB_NONE);
	ck_assert_int_eq(F.nodes[b].ports[1].peer_node, FAB_NONE);
	ck_assert_int_eq(F.nodes[a].ports[0].peer_node, FAB_NONE);
	check_symmetric();
}
END_TEST

/* A larger fabric: a ring of 36-port switches with CAs hanging off. */
START_TEST(ring_with_hosts)
{
	enum { NSW = 200, HOSTS = 30 };
	struct fabric_counts c;
	size_t links = 0;

	for (int32_t s = 0; s < NSW; s++)
		ck_assert_int_eq(fabric_add_node(&F, guid_rand((size_t)s), NODE_TYPE_SWITCH, 36), s);
	for (int32_t s = 0; s < NSW; s++) {
		/* port 35 to the next switch's port 36 */
		CHECK(fabric_link(&F, s, 35, (s + 1) % NSW, 36) == 0, "ring link %d", s);
		links++;
		for (unsigned h = 0; h < HOSTS; h++) {
			int32_t ca = fabric_add_node(&F, guid_seq((size_t)s * HOSTS + h),
						     NODE_TYPE_CA, 1);

			CHECK(ca >= NSW, "host %u of switch %d: %d", h, s, ca);
			CHECK(fabric_link(&F, ca, 1, s, (uint8_t)(h + 1)) == 0,
			      "host %u of switch %d not linked", h, s);
			links++;
			F.nodes[ca].ports[1].valid = true;
		}
		for (unsigned p = 0; p <= 36; p++)
			F.nodes[s].ports[p].valid = true;
	}
	check_symmetric();
	fabric_count(&F, &c);
	ck_assert_uint_eq(c.switches, NSW);
	ck_assert_uint_eq(c.cas, NSW * HOSTS);
	ck_assert_uint_eq(c.routers, 0);
	ck_assert_uint_eq(c.links, links);
	/* switch ports 1..36 and the CA ports; never port 0 */
	ck_assert_uint_eq(c.ports, NSW * 36 + NSW * HOSTS);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Counting                                                             */
/* ------------------------------------------------------------------ */

static void build_small(bool reverse)
{
	/* ids: S0 S1 S2 C0 C1 C2 C3 R0 */
	const struct { uint64_t g; uint8_t t, n; } nodes[] = {
		{ 0x100, NODE_TYPE_SWITCH, 8 }, { 0x101, NODE_TYPE_SWITCH, 8 },
		{ 0x102, NODE_TYPE_SWITCH, 4 }, { 0x200, NODE_TYPE_CA, 2 },
		{ 0x201, NODE_TYPE_CA, 2 }, { 0x202, NODE_TYPE_CA, 1 },
		{ 0x203, NODE_TYPE_CA, 1 }, { 0x300, NODE_TYPE_ROUTER, 2 },
	};
	const struct { int32_t a; uint8_t pa; int32_t b; uint8_t pb; } links[] = {
		{ 0, 1, 1, 1 }, { 0, 2, 1, 2 },	/* parallel S0-S1 */
		{ 1, 3, 2, 1 },
		{ 0, 5, 0, 6 },			/* a cable from S0 to itself */
		{ 3, 1, 0, 3 }, { 3, 2, 1, 4 },	/* a dual-homed CA */
		{ 4, 1, 2, 2 }, { 5, 1, 2, 3 },
		{ 7, 1, 1, 5 },			/* the router */
		/* C3 and C1 port 2 are not cabled */
	};

	for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++)
		ck_assert_int_eq(fabric_add_node(&F, nodes[i].g, nodes[i].t, nodes[i].n),
				 (int32_t)i);
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		if (reverse)
			ck_assert_int_eq(fabric_link(&F, links[i].b, links[i].pb,
						     links[i].a, links[i].pa), 0);
		else
			ck_assert_int_eq(fabric_link(&F, links[i].a, links[i].pa,
						     links[i].b, links[i].pb), 0);
	}
	/* PortInfo read: all of S0 (port 0 too), S1 1-5, S2 1-3, cabled CA
	 * and router ports, and C3's uncabled port */
	for (unsigned p = 0; p <= 8; p++)
		F.nodes[0].ports[p].valid = true;
	for (unsigned p = 1; p <= 5; p++)
		F.nodes[1].ports[p].valid = true;
	for (unsigned p = 1; p <= 3; p++)
		F.nodes[2].ports[p].valid = true;
	F.nodes[3].ports[1].valid = F.nodes[3].ports[2].valid = true;
	F.nodes[4].ports[1].valid = true;
	F.nodes[5].ports[1].valid = true;
	F.nodes[6].ports[1].valid = true;
	F.nodes[7].ports[1].valid = true;
}

START_TEST(count_small)
{
	struct fabric_counts c, again;

	build_small(_i == 1);
	check_symmetric();
	fabric_count(&F, &c);
	ck_assert_uint_eq(c.switches, 3);
	ck_assert_uint_eq(c.cas, 4);
	ck_assert_uint_eq(c.routers, 1);
	ck_assert_uint_eq(c.links, 9);
	ck_assert_uint_eq(c.ports, 8 + 5 + 3 + 2 + 1 + 1 + 1 + 1);
	/* the self-cabled ports point at each other */
	ck_assert_int_eq(F.nodes[0].ports[5].peer_node, 0);
	ck_assert_uint_eq(F.nodes[0].ports[5].peer_port, 6);
	ck_assert_uint_eq(F.nodes[0].ports[6].peer_port, 5);
	/* counting changes nothing and gives the same answer */
	memset(&again, 0xff, sizeof(again));
	fabric_count(&F, &again);
	ck_assert_mem_eq(&c, &again, sizeof(c));
}
END_TEST

START_TEST(count_self_loop_only)
{
	struct fabric_counts c;
	int32_t s = fabric_add_node(&F, 77, NODE_TYPE_SWITCH, 4);

	ck_assert_int_eq(fabric_link(&F, s, 4, s, 1), 0);
	fabric_count(&F, &c);
	ck_assert_uint_eq(c.links, 1);
	ck_assert_uint_eq(c.switches, 1);
	ck_assert_uint_eq(c.ports, 0);		/* no PortInfo read */
	check_symmetric();
}
END_TEST

START_TEST(node_type_str)
{
	ck_assert_str_eq(fabric_node_type_str(NODE_TYPE_CA), "Ca");
	ck_assert_str_eq(fabric_node_type_str(NODE_TYPE_SWITCH), "Switch");
	ck_assert_str_eq(fabric_node_type_str(NODE_TYPE_ROUTER), "Rt");
	ck_assert_str_eq(fabric_node_type_str(0), "Unknown");
	ck_assert_str_eq(fabric_node_type_str(4), "Unknown");
	ck_assert_str_eq(fabric_node_type_str(255), "Unknown");
}
END_TEST

/* ------------------------------------------------------------------ */
/* Free and reuse                                                       */
/* ------------------------------------------------------------------ */

START_TEST(free_and_reuse)
{
	struct fabric zero;
	struct fabric_counts c;

	fabric_init(&zero);
	for (int round = 0; round < 3; round++) {
		build_small(round == 1);
		for (size_t i = 0; i < 3000; i++)
			CHECK(fabric_add_node(&F, guid_rand(i), NODE_TYPE_CA, 2) == (int32_t)(8 + i),
			      "round %d: node %zu", round, i);
		F.local_node = 3;
		F.local_port = 1;
		F.local_port_guid = 0x200;
		fabric_count(&F, &c);
		ck_assert_uint_eq(c.cas, 4 + 3000);
		ck_assert_uint_eq(c.links, 9);

		fabric_free(&F);
		/* all but the generation, new at each fabric_init() */
		ck_assert_mem_eq(&F, &zero, offsetof(struct fabric, gen));
		ck_assert_int_eq(F.local_node, FAB_NONE);
		ck_assert_int_eq(fabric_find(&F, 0x100), FAB_NONE);
		ck_assert_int_eq(fabric_find(&F, guid_rand(5)), FAB_NONE);
		fabric_count(&F, &c);
		ck_assert_uint_eq(c.switches + c.cas + c.routers + c.ports + c.links, 0);
	}
	/* and once more without freeing: teardown frees it */
	build_small(false);
	ck_assert_int_eq(fabric_find(&F, 0x300), 7);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Regressions: defects found by these tests and fixed                  */
/* ------------------------------------------------------------------ */

/*
 * Re-linking a port to a different peer leaves the old peer pointing at
 * it: the model is no longer symmetric and fabric_count() counts a link
 * that is gone.  (Discovery records a port's link again when it reaches
 * the same GUID twice, e.g. two nodes sharing a GUID.)
 */
START_TEST(regress_relink_leaves_stale_peer)
{
	struct fabric_counts c;
	int32_t a = fabric_add_node(&F, 1, NODE_TYPE_SWITCH, 4);
	int32_t b = fabric_add_node(&F, 2, NODE_TYPE_SWITCH, 4);
	int32_t d = fabric_add_node(&F, 3, NODE_TYPE_SWITCH, 4);

	ck_assert_int_eq(fabric_link(&F, a, 1, b, 1), 0);
	ck_assert_int_eq(fabric_link(&F, a, 1, d, 2), 0);
	ck_assert_int_eq(F.nodes[a].ports[1].peer_node, d);
	fabric_count(&F, &c);
	ck_assert_uint_eq(c.links, 1);
	ck_assert_msg(F.nodes[b].ports[1].peer_node == FAB_NONE,
		      "node %d port 1 still points at node %d port %u, which now points at node %d",
		      b, F.nodes[b].ports[1].peer_node, F.nodes[b].ports[1].peer_port,
		      F.nodes[a].ports[1].peer_node);
	check_symmetric();
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *fabric_suite(void)
{
	Suite *s = suite_create("fabric");
	TCase *tc;

	tc = tcase_create("nodes");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, empty_fabric);
	tcase_add_loop_test(tc, add_find_many, 0,
			    (int)(sizeof(guid_sets) / sizeof(guid_sets[0])));
	tcase_add_test(tc, extreme_guids);
	tcase_add_test(tc, duplicate_guid);
	tcase_add_test(tc, port_arrays);
	tcase_add_test(tc, ids_survive_growth);
	suite_add_tcase(s, tc);

	tc = tcase_create("links");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, link_validation);
	tcase_add_test(tc, link_symmetric);
	tcase_add_test(tc, ring_with_hosts);
	suite_add_tcase(s, tc);

	tc = tcase_create("count");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, count_small, 0, 2);
	tcase_add_test(tc, count_self_loop_only);
	tcase_add_test(tc, node_type_str);
	tcase_add_test(tc, free_and_reuse);
	suite_add_tcase(s, tc);

	{
		tc = tcase_create("regressions");
		tcase_add_checked_fixture(tc, setup, teardown);
		tcase_add_test(tc, regress_relink_leaves_stale_peer);
		suite_add_tcase(s, tc);
	}
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(fabric_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
