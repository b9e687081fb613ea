/*
 * check_routing_order.c - guid_routing_order_file and
 * port_search_ordering_file (routing/order.h): the parsers on good and
 * malformed text (garbage, long lines, NUL bytes, duplicates, port 0,
 * ports out of range), the ranks resolved on a fabric, the LID order, and
 * their effect on minhop, updn, dnup and dfsssp: the destinations listed
 * first get the best spread, and the port listed first wins a tie.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/order.h"
#include "routing_fixture.h"

static void guids(struct order_guids *o, struct rf_warns *w, const char *text)
{
	memset(w, 0, sizeof(*w));
	ck_assert_int_eq(order_guids_parse(o, text, strlen(text), "f", rf_collect,
					   w), 0);
}

START_TEST(guids_good)
{
	struct order_guids o;
	struct rf_warns w;

	guids(&o, &w, "# hosts first\n"
		      "0x0002c90300000001\n"
		      "  0X0002C90300000002   # a comment\n"
		      "\n"
		      "\t0x10 host-name ignored, as OpenSM\r\n"
		      "42\n"		/* decimal, as strtoull base 0 */
		      "010\n"		/* octal */
		      "0xffffffffffffffff");
	ck_assert_uint_eq(w.n, 0);
	ck_assert_uint_eq(o.n, 6);
	ck_assert_uint_eq(o.guid[0], 0x0002c90300000001ull);
	ck_assert_uint_eq(o.guid[1], 0x0002c90300000002ull);
	ck_assert_uint_eq(o.guid[2], 0x10);
	ck_assert_uint_eq(o.guid[3], 42);
	ck_assert_uint_eq(o.guid[4], 8);
	ck_assert_uint_eq(o.guid[5], UINT64_MAX);
	ck_assert_uint_eq(o.line[0], 2);
	ck_assert_uint_eq(o.line[2], 5);
	ck_assert_uint_eq(o.line[5], 8);
	order_guids_free(&o);

	guids(&o, &w, "");
	ck_assert_uint_eq(o.n + w.n, 0);
	order_guids_free(&o);
}
END_TEST

START_TEST(guids_bad)
{
	struct order_guids o;
	struct rf_warns w;

	guids(&o, &w, "0x1\n"
		      "garbage\n"			/* 2 */
		      "0x\n"				/* 3 */
		      "0x12zz\n"			/* 4 */
		      "0002c903\n"			/* 5: octal stops at c */
		      "0x0\n"				/* 6 */
		      "0x10000000000000000\n"		/* 7: 65 bits */
		      "0x1\n"				/* 8: again */
		      "-5\n"				/* 9 */
		      "0x2,0x3\n"			/* 10 */
		      "0x4");
	ck_assert_uint_eq(o.n, 2);
	ck_assert_uint_eq(o.guid[0], 1);
	ck_assert_uint_eq(o.guid[1], 4);
	ck_assert_uint_eq(o.line[1], 11);
	ck_assert_uint_eq(w.n, 9);
	ck_assert(rf_warned(&w, "f:2:", "'garbage': expected a port GUID"));
	ck_assert(rf_warned(&w, "f:3:", "'0x'"));
	ck_assert(rf_warned(&w, "f:4:", "'0x12zz'"));
	ck_assert(rf_warned(&w, "f:5:", "'0002c903'"));
	ck_assert(rf_warned(&w, "f:6:", "not 0"));
	ck_assert(rf_warned(&w, "f:7:", "more than 64 bits"));
	ck_assert(rf_warned(&w, "f:8:", "listed already on line 1"));
	ck_assert(rf_warned(&w, "f:9:", "'-5'"));
	ck_assert(rf_warned(&w, "f:10:", "line skipped"));
	order_guids_free(&o);
}
END_TEST

/* A line of 100,000 characters, NUL bytes, no newline at the end. */
START_TEST(guids_long_and_binary)
{
	size_t len = 100000;
	char *text = malloc(len + 64);
	struct order_guids o;
	struct rf_warns w = { 0 };
	size_t n;

	memset(text, '7', len);		/* one huge decimal: too large */
	n = len;
	n += (size_t)sprintf(text + n, "\n0x5\n0x6");
	text[n++] = '\0';
	n += (size_t)sprintf(text + n, "x\n0x7");
	ck_assert_int_eq(order_guids_parse(&o, text, n, "f", rf_collect, &w), 0);
	ck_assert_uint_eq(o.n, 2);
	ck_assert_uint_eq(o.guid[0], 5);
	ck_assert_uint_eq(o.guid[1], 7);
	ck_assert_uint_eq(w.n, 2);
	ck_assert(rf_warned(&w, "f:1:", "more than 64 bits"));
	ck_assert(rf_warned(&w, "f:3:", "'0x6?x'"));
	/* the quoted token is cut */
	ck_assert_uint_lt(strlen(w.msg[0]), 200);
	order_guids_free(&o);
	free(text);

	/* no callback: the same, silently */
	ck_assert_int_eq(order_guids_parse(&o, "x\n0x9\n", 6, "f", NULL, NULL), 0);
	ck_assert_uint_eq(o.n, 1);
	order_guids_free(&o);
}
END_TEST

static void ports(struct port_order *o, struct rf_warns *w, const char *text)
{
	memset(w, 0, sizeof(*w));
	ck_assert_int_eq(port_order_parse(o, text, strlen(text), "p", rf_collect,
					  w), 0);
}

START_TEST(ports_good)
{
	struct port_order o;
	struct rf_warns w;

	ports(&o, &w, "# switch ports\n"
		      "0x1000200 6 5\n"
		      "  0x1000700\t3   1 0x2 # comment\n"
		      "0x1000800 254#x\n");
	ck_assert_uint_eq(w.n, 0);
	ck_assert_uint_eq(o.n, 3);
	ck_assert_uint_eq(o.e[0].guid, 0x1000200);
	ck_assert_uint_eq(o.e[0].line, 2);
	ck_assert_uint_eq(o.e[0].n, 2);
	ck_assert_uint_eq(o.e[0].port[0], 6);
	ck_assert_uint_eq(o.e[0].port[1], 5);
	ck_assert_uint_eq(o.e[1].n, 3);
	ck_assert_uint_eq(o.e[1].port[0], 3);
	ck_assert_uint_eq(o.e[1].port[1], 1);
	ck_assert_uint_eq(o.e[1].port[2], 2);
	ck_assert_uint_eq(o.e[2].n, 1);
	ck_assert_uint_eq(o.e[2].port[0], 254);
	port_order_free(&o);
}
END_TEST

START_TEST(ports_bad)
{
	struct port_order o;
	struct rf_warns w;
	char *text, *p;

	ports(&o, &w, "0x1 1 2\n"
		      "0x2 0 1\n"		/* 2: port 0 */
		      "0x3 1 255\n"		/* 3: out of range */
		      "0x4 3 1 3\n"		/* 4: twice */
		      "0x5 3,4\n"		/* 5 */
		      "0x6\n"			/* 6: no ports */
		      "0x7 # none\n"		/* 7 */
		      "junk 1 2\n"		/* 8 */
		      "0x8 99999999999999999999999\n"	/* 9 */
		      "0x9 x\n"			/* 10 */
		      "0 1\n"			/* 11 */
		      "0xa -1\n"		/* 12 */
		      "0xb 2");
	ck_assert_uint_eq(o.n, 2);
	ck_assert_uint_eq(o.e[0].guid, 1);
	ck_assert_uint_eq(o.e[1].guid, 0xb);
	ck_assert_uint_eq(o.e[1].line, 13);
	ck_assert_uint_eq(w.n, 11);
	ck_assert(rf_warned(&w, "p:2:", "port '0': expected 1-254"));
	ck_assert(rf_warned(&w, "p:3:", "port '255': expected 1-254"));
	ck_assert(rf_warned(&w, "p:4:", "port 3 is listed twice"));
	ck_assert(rf_warned(&w, "p:5:", "'3,4': expected a port number"));
	ck_assert(rf_warned(&w, "p:6:", "expected port numbers after the GUID"));
	ck_assert(rf_warned(&w, "p:7:", "expected port numbers"));
	ck_assert(rf_warned(&w, "p:8:", "'junk': expected a switch node GUID"));
	ck_assert(rf_warned(&w, "p:9:", "expected 1-254"));
	ck_assert(rf_warned(&w, "p:10:", "'x': expected a port number"));
	ck_assert(rf_warned(&w, "p:11:", "'0': expected a switch node GUID"));
	ck_assert(rf_warned(&w, "p:12:", "'-1'"));
	port_order_free(&o);

	/* a long line: every port 1..254 (fine), then one more (twice) */
	text = malloc(4096);
	p = text + sprintf(text, "0x1");
	for (unsigned i = 254; i >= 1; i--)
		p += sprintf(p, " %u", i);
	p += sprintf(p, "\n0x2");
	for (unsigned i = 1; i <= 254; i++)
		p += sprintf(p, " %u", i);
	sprintf(p, " 7\n");
	ports(&o, &w, text);
	ck_assert_uint_eq(o.n, 1);
	ck_assert_uint_eq(o.e[0].n, 254);
	ck_assert_uint_eq(o.e[0].port[0], 254);
	ck_assert_uint_eq(o.e[0].port[253], 1);
	ck_assert_uint_eq(w.n, 1);
	ck_assert(rf_warned(&w, "p:2:", "port 7 is listed twice"));
	port_order_free(&o);
	free(text);
}
END_TEST

/*
 * 2 spines, 2 leaves of 4 hosts (rf_fat2): node ids spine 0, 1; leaf 2
 * with CAs 3-6 on ports 1-4; leaf 7 with CAs 8-11; each leaf's ports 5
 * and 6 go to spine 0 and 1.  CA port GUID: node GUID + 1.
 */
#define LEAF0	2
#define LEAF1	7
#define CA(i)	(3 + (i))	/* hosts A..D = CA(0)..CA(3) behind leaf 0 */

static void fat(struct fabric *f, unsigned lmc)
{
	rf_fat2(f, 2, 2, 4);
	for (size_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].type == NODE_TYPE_CA)
			f->nodes[i].ports[1].guid = f->nodes[i].guid + 1;
		else
			f->nodes[i].ports[0].guid = f->nodes[i].guid;
	if (lmc)
		ck_assert_int_eq(lid_assign_sequential(f, lmc), 0);
	ck_assert_uint_eq(f->nodes[LEAF0].type, NODE_TYPE_SWITCH);
	ck_assert_uint_eq(f->nodes[LEAF1].type, NODE_TYPE_SWITCH);
	ck_assert_int_eq(f->nodes[CA(0)].ports[1].peer_node, LEAF0);
	ck_assert_int_eq(f->nodes[CA(3)].ports[1].peer_port, 4);
}

static uint64_t pguid(const struct fabric *f, int32_t ca)
{
	return f->nodes[ca].ports[1].guid;
}

START_TEST(resolve_ranks)
{
	struct fabric f;
	struct port_order po;
	struct rf_warns w;
	uint8_t **rank;
	char text[512];
	long n;

	fat(&f, 0);
	snprintf(text, sizeof(text),
		 "0x%" PRIx64 " 6 5\n"		/* 1: leaf 1 */
		 "0x%" PRIx64 " 6\n"		/* 2: leaf 1 again */
		 "0x%" PRIx64 " 1\n"		/* 3: a CA */
		 "0x77 1\n"			/* 4: nobody */
		 "0x%" PRIx64 " 7\n"		/* 5: leaf 0 has 6 ports */
		 "0x%" PRIx64 " 3 2\n",		/* 6: spine 0 has 2 */
		 f.nodes[LEAF1].guid, f.nodes[LEAF1].guid, f.nodes[CA(0)].guid,
		 f.nodes[LEAF0].guid, f.nodes[0].guid);
	ports(&po, &w, text);
	ck_assert_uint_eq(po.n, 6);
	ck_assert_uint_eq(w.n, 0);
	n = port_order_resolve(&f, &po, "p", &rank, rf_collect, &w);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(w.n, 5);
	ck_assert(rf_warned(&w, "p:2:", "ordered already on line 1"));
	ck_assert(rf_warned(&w, "p:3:", "is no switch of the fabric"));
	ck_assert(rf_warned(&w, "p:4:", "0x0000000000000077 is no switch"));
	ck_assert(rf_warned(&w, "p:5:", "port 7: switch"));
	ck_assert(rf_warned(&w, "p:5:", "has ports 1-6"));
	ck_assert(rf_warned(&w, "p:6:", "port 3: switch"));
	ck_assert_ptr_nonnull(rank);
	for (size_t i = 0; i < f.n_nodes; i++)
		if (i != LEAF1)
			ck_assert_ptr_null(rank[i]);
	/* 6, 5, then 1-4 */
	ck_assert_uint_eq(rank[LEAF1][0], 0);
	ck_assert_uint_eq(rank[LEAF1][6], 1);
	ck_assert_uint_eq(rank[LEAF1][5], 2);
	for (unsigned p = 1; p <= 4; p++)
		ck_assert_uint_eq(rank[LEAF1][p], p + 2);
	free(rank);
	port_order_free(&po);

	/* nothing usable: no table */
	ports(&po, &w, "0x77 1\n");
	ck_assert_int_eq(port_order_resolve(&f, &po, "p", &rank, NULL, NULL), 0);
	ck_assert_ptr_null(rank);
	port_order_free(&po);
	fabric_free(&f);
}
END_TEST

START_TEST(lid_order)
{
	struct fabric f;
	uint64_t list[4];
	struct routing_opts o = { .order_guids = list, .n_order_guids = 4 };
	uint16_t *lids;
	size_t n_first;
	uint16_t c, a;

	fat(&f, 1);
	c = f.nodes[CA(2)].ports[1].lid;
	a = f.nodes[CA(0)].ports[1].lid;
	ck_assert_uint_eq(f.nodes[CA(2)].ports[1].lmc, 1);
	list[0] = pguid(&f, CA(2));
	list[1] = 0x4242;			/* no port: passed over */
	list[2] = pguid(&f, CA(0));
	list[3] = f.nodes[LEAF1].guid;		/* a switch's port 0 */
	ck_assert_int_eq(routing_lid_order(&f, &o, f.max_lid, &lids, &n_first), 0);
	ck_assert_ptr_nonnull(lids);
	ck_assert_uint_eq(n_first, 5);
	ck_assert_uint_eq(lids[0], c);
	ck_assert_uint_eq(lids[1], c + 1);
	ck_assert_uint_eq(lids[2], a);
	ck_assert_uint_eq(lids[3], a + 1);
	ck_assert_uint_eq(lids[4], f.nodes[LEAF1].ports[0].lid);
	/* then the others ascending: a permutation of 1..max_lid */
	{
		uint8_t *seen = calloc(f.max_lid + 1u, 1);

		for (size_t i = 0; i < f.max_lid; i++) {
			ck_assert_uint_ge(lids[i], 1);
			ck_assert_uint_le(lids[i], f.max_lid);
			ck_assert(!seen[lids[i]]);
			seen[lids[i]] = 1;
			if (i > n_first)
				ck_assert_uint_gt(lids[i], lids[i - 1]);
		}
		free(seen);
	}
	free(lids);

	/* no list, or nothing in it on the fabric: the engine's order */
	o.n_order_guids = 0;
	ck_assert_int_eq(routing_lid_order(&f, &o, f.max_lid, &lids, &n_first), 0);
	ck_assert_ptr_null(lids);
	o.n_order_guids = 2;
	list[0] = 0x4343;
	ck_assert_int_eq(routing_lid_order(&f, &o, f.max_lid, &lids, &n_first), 0);
	ck_assert_ptr_null(lids);
	ck_assert_uint_eq(n_first, 0);
	fabric_free(&f);
}
END_TEST

static const char *const engines[] = { "minhop", "updn", "dnup", "dfsssp" };

/* The egress port of switch `sw` towards host `ca`. */
static unsigned egress(const struct fabric *f, const struct routing_result *r,
		       int32_t sw, int32_t ca)
{
	return r->lft[sw].port[f->nodes[ca].ports[1].lid];
}

/*
 * Without an order, leaf 1 sends A and C (the first and third host LIDs)
 * up the same link; with hosts A and C listed first they take different
 * up-links, and so do B and D after them.
 */
START_TEST(guid_order_spreads_listed_first)
{
	const char *e = engines[_i];
	struct fabric f;
	struct routing_result r;
	uint64_t list[2];
	struct routing_opts o = { .order_guids = list, .n_order_guids = 2 };

	fat(&f, 0);
	rf_route(&f, e, NULL, &r);
	ck_assert_msg(egress(&f, &r, LEAF1, CA(0)) ==
		      egress(&f, &r, LEAF1, CA(2)),
		      "%s: A and C differ without an order", e);
	ck_assert_uint_ne(egress(&f, &r, LEAF1, CA(0)),
			  egress(&f, &r, LEAF1, CA(1)));
	routing_result_free(&r);

	list[0] = pguid(&f, CA(0));
	list[1] = pguid(&f, CA(2));
	rf_route(&f, e, &o, &r);
	rf_assert_reachable(&f, &r);
	ck_assert_msg(egress(&f, &r, LEAF1, CA(0)) !=
		      egress(&f, &r, LEAF1, CA(2)),
		      "%s: A and C share an up-link with the order", e);
	ck_assert_uint_eq(egress(&f, &r, LEAF1, CA(0)), 5);
	ck_assert_uint_eq(egress(&f, &r, LEAF1, CA(2)), 6);
	ck_assert_uint_ne(egress(&f, &r, LEAF1, CA(1)),
			  egress(&f, &r, LEAF1, CA(3)));
	routing_result_free(&r);

	/* C listed alone: it is routed first and takes the first up-link */
	list[0] = pguid(&f, CA(2));
	o.n_order_guids = 1;
	rf_route(&f, e, &o, &r);
	ck_assert_uint_eq(egress(&f, &r, LEAF1, CA(2)), 5);
	ck_assert_uint_eq(egress(&f, &r, LEAF1, CA(0)), 6);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* Leaf 1 searches port 6 before 5: the first destination goes up 6. */
START_TEST(port_order_breaks_ties)
{
	const char *e = engines[_i];
	struct fabric f;
	struct routing_result r;
	struct port_order po;
	struct rf_warns w;
	uint8_t **rank;
	char text[64];
	struct routing_opts o = { 0 };

	fat(&f, 0);
	rf_route(&f, e, NULL, &r);
	ck_assert_uint_eq(egress(&f, &r, LEAF1, CA(0)), 5);
	ck_assert_uint_eq(egress(&f, &r, LEAF1, CA(1)), 6);
	routing_result_free(&r);

	snprintf(text, sizeof(text), "0x%" PRIx64 " 6 5\n", f.nodes[LEAF1].guid);
	ports(&po, &w, text);
	ck_assert_int_eq(port_order_resolve(&f, &po, "p", &rank, rf_collect, &w), 1);
	port_order_free(&po);
	o.port_rank = (const uint8_t *const *)rank;
	o.n_port_rank = f.n_nodes;
	rf_route(&f, e, &o, &r);
	rf_assert_reachable(&f, &r);
	ck_assert_msg(egress(&f, &r, LEAF1, CA(0)) == 6,
		      "%s: the first destination left by port %u", e,
		      egress(&f, &r, LEAF1, CA(0)));
	ck_assert_uint_eq(egress(&f, &r, LEAF1, CA(1)), 5);
	ck_assert_uint_eq(egress(&f, &r, LEAF1, CA(2)), 6);
	/* the other leaf keeps port order */
	ck_assert_uint_eq(egress(&f, &r, LEAF0, LEAF1 + 1), 5);
	routing_result_free(&r);
	free(rank);
	fabric_free(&f);
}
END_TEST

/* Both files together, with LMC 1 and on a random graph: still every
 * pair reachable, no loops (and for updn/dfsssp no cycle). */
START_TEST(orders_keep_tables_sound)
{
	const char *e = engines[_i];
	struct fabric f;
	struct routing_result r;
	uint64_t list[8];
	uint8_t **rank = NULL;
	struct port_order po;
	struct rf_warns w;
	char text[256];
	struct routing_opts o = { .order_guids = list, .n_order_guids = 0 };
	size_t k = 0;

	rf_random(&f, 12, 4, 2, 1, 7);
	for (size_t i = 0; i < f.n_nodes; i++)
		if (f.nodes[i].type == NODE_TYPE_CA) {
			f.nodes[i].ports[1].guid = f.nodes[i].guid + 1;
			if (k < 8 && i % 3 == 0)
				list[k++] = f.nodes[i].guid + 1;
		}
	o.n_order_guids = k;
	snprintf(text, sizeof(text), "0x%" PRIx64 " 4 3 2 1\n0x%" PRIx64 " 2\n",
		 f.nodes[0].guid, f.nodes[f.n_nodes - 3].guid);
	ports(&po, &w, text);
	ck_assert_int_ge(port_order_resolve(&f, &po, "p", &rank, NULL, NULL), 1);
	port_order_free(&po);
	o.port_rank = (const uint8_t *const *)rank;
	o.n_port_rank = f.n_nodes;
	rf_route(&f, e, &o, &r);
	if (strcmp(e, "minhop"))
		rf_assert_deadlock_free(&f, &r);
	else
		rf_assert_reachable(&f, &r);
	routing_result_free(&r);
	free(rank);
	fabric_free(&f);
}
END_TEST

static Suite *order_suite(void)
{
	Suite *s = suite_create("routing_order");
	TCase *tc = tcase_create("order");
	int n = (int)(sizeof(engines) / sizeof(engines[0]));

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, guids_good);
	tcase_add_test(tc, guids_bad);
	tcase_add_test(tc, guids_long_and_binary);
	tcase_add_test(tc, ports_good);
	tcase_add_test(tc, ports_bad);
	tcase_add_test(tc, resolve_ranks);
	tcase_add_test(tc, lid_order);
	tcase_add_loop_test(tc, guid_order_spreads_listed_first, 0, n);
	tcase_add_loop_test(tc, port_order_breaks_ties, 0, n);
	tcase_add_loop_test(tc, orders_keep_tables_sound, 0, n);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(order_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
