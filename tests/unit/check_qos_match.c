/*
 * check_qos_match.c - qos/match.c and qos/members.c: which QoS level a
 * PathRecord query gets, by OpenSM's rules (osm_qos_policy.c):
 * qos-match-rules in file order, first match wins; then the rules of the
 * qos-ulps lines, whatever their place in the file; else the default
 * level (the level named DEFAULT, else the qos-ulps default SL).  A
 * rule's qos-class, service-id and pkey need the query to set that
 * component; P_Keys compare on 15 bits; source and destination groups
 * both must hold their end.  Port groups bound to a fabric: port-name,
 * partition, pkey, SELF.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/fabric.h"
#include "qos/qos.h"

static struct qos_policy pol;

static void parse(const char *text)
{
	struct qos_error e;
	int rc = qos_parse(text, strlen(text), &pol, &e);

	ck_assert_msg(rc == 0, "parse: %d at %u:%u: %s", rc, e.line, e.col,
		      e.msg);
}

static void teardown(void)
{
	qos_policy_free(&pol);
	memset(&pol, 0, sizeof(pol));
}

/* The level name a query gets (m may be NULL). */
static const char *level_of(const struct qos_members *m,
			    const struct qos_query *q, long *rule)
{
	return pol.levels[qos_match(&pol, m, q, rule)].name;
}

#define LEVELS \
	"qos-levels\n" \
	" qos-level\n  name: DEFAULT\n  sl: 1\n end-qos-level\n" \
	" qos-level\n  name: A\n  sl: 2\n end-qos-level\n" \
	" qos-level\n  name: B\n  sl: 3\n end-qos-level\n" \
	" qos-level\n  name: C\n  sl: 4\n end-qos-level\n" \
	"end-qos-levels\n"

#define CA 1
#define SW 2

START_TEST(test_first_rule_wins)
{
	struct qos_query q = { .src_guid = 1, .dst_guid = 2, .src_type = CA,
			       .dst_type = CA, .has_sid = true,
			       .service_id = 0x1005, .has_class = true,
			       .qos_class = 7 };
	long rule;

	parse(LEVELS "qos-match-rules\n"
	      " qos-match-rule\n  service-id: 0x1000-0x1fff\n"
	      "  qos-level-name: A\n end-qos-match-rule\n"
	      " qos-match-rule\n  service-id: 0x1005\n  qos-class: 7\n"
	      "  qos-level-name: B\n end-qos-match-rule\n"
	      "end-qos-match-rules\n");
	/* the second is more specific: order decides all the same */
	ck_assert_str_eq(level_of(NULL, &q, &rule), "A");
	ck_assert_int_eq(rule, 0);
	q.service_id = 0x2005;
	ck_assert_str_eq(level_of(NULL, &q, &rule), "DEFAULT");
	ck_assert_int_eq(rule, -1);
}
END_TEST

START_TEST(test_components_needed)
{
	struct qos_query q = { .service_id = 0x10, .qos_class = 3,
			       .pkey = 0x0002 };

	parse(LEVELS "qos-match-rules\n"
	      " qos-match-rule\n  service-id: 0x10\n"
	      "  qos-level-name: A\n end-qos-match-rule\n"
	      " qos-match-rule\n  qos-class: 3\n"
	      "  qos-level-name: B\n end-qos-match-rule\n"
	      " qos-match-rule\n  pkey: 0x0002\n"
	      "  qos-level-name: C\n end-qos-match-rule\n"
	      "end-qos-match-rules\n");
	/* the values match but the query sets none of the components */
	ck_assert_str_eq(level_of(NULL, &q, NULL), "DEFAULT");
	q.has_pkey = true;
	ck_assert_str_eq(level_of(NULL, &q, NULL), "C");
	q.has_class = true;
	ck_assert_str_eq(level_of(NULL, &q, NULL), "B");
	q.has_sid = true;
	ck_assert_str_eq(level_of(NULL, &q, NULL), "A");
	q.service_id = 0x11;
	ck_assert_str_eq(level_of(NULL, &q, NULL), "B");
}
END_TEST

START_TEST(test_all_components_of_a_rule)
{
	struct qos_query q = { .has_sid = true, .service_id = 0x10,
			       .has_class = true, .qos_class = 4 };

	parse(LEVELS "qos-match-rules\n"
	      " qos-match-rule\n  service-id: 0x10\n  qos-class: 3,5-9\n"
	      "  qos-level-name: A\n end-qos-match-rule\n"
	      "end-qos-match-rules\n");
	ck_assert_str_eq(level_of(NULL, &q, NULL), "DEFAULT");
	q.qos_class = 5;
	ck_assert_str_eq(level_of(NULL, &q, NULL), "A");
	q.qos_class = 9;
	ck_assert_str_eq(level_of(NULL, &q, NULL), "A");
	q.qos_class = 10;
	ck_assert_str_eq(level_of(NULL, &q, NULL), "DEFAULT");
}
END_TEST

START_TEST(test_pkey_15_bits)
{
	struct qos_query q = { .has_pkey = true, .pkey = 0x8002 };

	/* written with the full bit: OpenSM masks the ranges to 15 bits */
	parse(LEVELS "qos-match-rules\n"
	      " qos-match-rule\n  pkey: 0x8002\n"
	      "  qos-level-name: A\n end-qos-match-rule\n"
	      "end-qos-match-rules\n");
	ck_assert_str_eq(level_of(NULL, &q, NULL), "A");
	q.pkey = 0x0002;
	ck_assert_str_eq(level_of(NULL, &q, NULL), "A");
	q.pkey = 0x0003;
	ck_assert_str_eq(level_of(NULL, &q, NULL), "DEFAULT");
}
END_TEST

#define GROUPS \
	"port-groups\n" \
	" port-group\n  name: G1\n  port-guid: 0x11-0x13\n end-port-group\n" \
	" port-group\n  name: G2\n  port-guid: 0x21\n end-port-group\n" \
	" port-group\n  name: Sw\n  node-type: SWITCH\n end-port-group\n" \
	" port-group\n  name: Any\n  node-type: ALL\n end-port-group\n" \
	"end-port-groups\n"

START_TEST(test_ends)
{
	struct qos_query q = { .src_type = CA, .dst_type = CA };

	parse(GROUPS LEVELS "qos-match-rules\n"
	      " qos-match-rule\n  source: G1\n  destination: G2\n"
	      "  qos-level-name: A\n end-qos-match-rule\n"
	      " qos-match-rule\n  source: G2\n"
	      "  qos-level-name: B\n end-qos-match-rule\n"
	      " qos-match-rule\n  destination: Sw\n"
	      "  qos-level-name: C\n end-qos-match-rule\n"
	      "end-qos-match-rules\n");
	q.src_guid = 0x12, q.dst_guid = 0x21;
	ck_assert_str_eq(level_of(NULL, &q, NULL), "A");
	/* both groups named: both ends must be in theirs */
	q.src_guid = 0x14;
	ck_assert_str_eq(level_of(NULL, &q, NULL), "DEFAULT");
	/* source only */
	q.src_guid = 0x21, q.dst_guid = 0x99;
	ck_assert_str_eq(level_of(NULL, &q, NULL), "B");
	/* destination only, by node type */
	q.src_guid = 0x99, q.dst_type = SW;
	ck_assert_str_eq(level_of(NULL, &q, NULL), "C");
	/* the destination's group does not hold the source */
	q.dst_type = CA, q.src_type = SW;
	ck_assert_str_eq(level_of(NULL, &q, NULL), "DEFAULT");
	/* ALL: every node type */
	ck_assert(qos_group_has(&pol, NULL, 3, 0x5, CA));
	ck_assert(qos_group_has(&pol, NULL, 3, 0x5, SW));
	ck_assert(qos_group_has(&pol, NULL, 3, 0x5, 3));
	ck_assert(!qos_group_has(&pol, NULL, 2, 0x5, CA));
}
END_TEST

START_TEST(test_ulps_after_rules)
{
	struct qos_query q = { .has_sid = true, .service_id = 0x500,
			       .src_type = CA, .dst_type = CA };
	long rule;

	/* qos-ulps written first still come after the match rules */
	parse("qos-ulps\n default : 5\n any, service-id 0x500 : 6\n"
	      " any, target-port-guid 0x30 : 7\nend-qos-ulps\n"
	      LEVELS "qos-match-rules\n"
	      " qos-match-rule\n  service-id: 0x400-0x5ff\n"
	      "  qos-level-name: B\n end-qos-match-rule\n"
	      "end-qos-match-rules\n");
	ck_assert_str_eq(level_of(NULL, &q, &rule), "B");
	ck_assert_int_eq(rule, 0);
	q.service_id = 0x600;
	q.dst_guid = 0x30;
	/* the ULP rule of the target GUID; its level only sets the SL */
	ck_assert_int_eq(pol.levels[qos_match(&pol, NULL, &q, &rule)].sl, 7);
	ck_assert(pol.rules[rule].from_ulp);
	ck_assert_int_eq(pol.levels[qos_match(&pol, NULL, &q, NULL)].mtu_limit,
			 -1);
	/* a DEFAULT level is there: it wins over "default : 5" */
	q.dst_guid = 0x31;
	ck_assert_str_eq(level_of(NULL, &q, NULL), "DEFAULT");
}
END_TEST

START_TEST(test_ulp_default)
{
	struct qos_query q = { .has_pkey = true, .pkey = 0xffff };

	parse("qos-ulps\n default : 5\n ipoib : 6\n"
	      " any, pkey 0x10-0x20 : 7\nend-qos-ulps\n");
	ck_assert_int_eq(pol.levels[qos_match(&pol, NULL, &q, NULL)].sl, 6);
	q.pkey = 0x8015;
	ck_assert_int_eq(pol.levels[qos_match(&pol, NULL, &q, NULL)].sl, 7);
	q.pkey = 0x8021;
	ck_assert_int_eq(pol.levels[qos_match(&pol, NULL, &q, NULL)].sl, 5);
	q.has_pkey = false;
	q.pkey = 0xffff;
	ck_assert_int_eq(pol.levels[qos_match(&pol, NULL, &q, NULL)].sl, 5);
}
END_TEST

START_TEST(test_pkey_in)
{
	struct qos_range v[] = { { 0x8005, 0x8007 }, { 0x7fff, 0x7fff } };
	struct qos_ranges r = { v, 2 };

	ck_assert(qos_pkey_in(&r, 0x0006));
	ck_assert(qos_pkey_in(&r, 0x8005));
	ck_assert(qos_pkey_in(&r, 0xffff));
	ck_assert(!qos_pkey_in(&r, 0x0008));
}
END_TEST

/*
 * A switch (node GUID 0x100, port GUID 0x100) and three CAs: "h1"
 * (port GUID 0x201), "h2" (0x202), and "h1" again (0x203: a node of
 * higher GUID with the same description).  h2 and 0x203 hold P_Key
 * 0x0005.
 */
static void small_fabric(struct fabric *f)
{
	static const char *desc[] = { "h1", "h2", "h1" };

	fabric_init(f);
	int32_t sw = fabric_add_node(f, 0x100, NODE_TYPE_SWITCH, 4);

	ck_assert_int_ge(sw, 0);
	f->nodes[sw].ports[0].valid = true;
	f->nodes[sw].ports[0].guid = 0x100;
	snprintf(f->nodes[sw].desc, sizeof(f->nodes[sw].desc), "sw");
	f->nodes[sw].has_desc = true;
	for (unsigned i = 0; i < 3; i++) {
		int32_t id = fabric_add_node(f, 0x1000 + i, NODE_TYPE_CA, 1);
		struct fab_node *n;

		ck_assert_int_ge(id, 0);
		n = &f->nodes[id];
		n->ports[1].valid = true;
		n->ports[1].guid = 0x201 + i;
		snprintf(n->desc, sizeof(n->desc), "%s", desc[i]);
		n->has_desc = true;
		f->nodes[sw].ports[i + 1].valid = true;
		ck_assert_int_eq(fabric_link(f, sw, (uint8_t)(i + 1), id, 1), 0);
		if (i) {
			n->ports[1].want_pkeys = malloc(2 * sizeof(uint16_t));
			ck_assert_ptr_nonnull(n->ports[1].want_pkeys);
			n->ports[1].want_pkeys[0] = 0xffff;
			n->ports[1].want_pkeys[1] = 0x0005;
			n->ports[1].n_want_pkeys = 2;
		}
	}
}

START_TEST(test_members)
{
	static const struct qos_part_ref parts[] = {
		{ "Default", 0x7fff }, { "five", 0x0005 },
	};
	struct qos_bind_in in = { .parts = parts, .n_parts = 2,
				  .sm_guid = 0x202 };
	struct qos_bind_report rep;
	struct qos_members *m;
	struct fabric f;

	parse("port-groups\n"
	      " port-group\n  name: Names\n"
	      "  port-name: h1/P1, sw/P3, nosuch/P1, h2/P2\n end-port-group\n"
	      " port-group\n  name: Part\n  partition: five, missing\n"
	      " end-port-group\n"
	      " port-group\n  name: Key\n  pkey: 0x8005\n end-port-group\n"
	      " port-group\n  name: Me\n  node-type: SELF\n end-port-group\n"
	      "end-port-groups\n" LEVELS);
	small_fabric(&f);
	ck_assert_int_eq(qos_members_build(&pol, &f, &in, &m, &rep), 0);
	/* port-name: the lowest node GUID of that description; a switch
	 * port is the switch's port 0 */
	ck_assert(qos_members_has(m, 0, 0x201));
	ck_assert(!qos_members_has(m, 0, 0x203));
	ck_assert(qos_members_has(m, 0, 0x100));
	ck_assert_uint_eq(qos_members_count(m, 0), 2);
	/* partition by name and by P_Key: the ports holding the key */
	ck_assert(qos_members_has(m, 1, 0x202));
	ck_assert(qos_members_has(m, 1, 0x203));
	ck_assert(!qos_members_has(m, 1, 0x201));
	ck_assert_uint_eq(qos_members_count(m, 2), 2);
	ck_assert(qos_members_has(m, 2, 0x203));
	/* SELF */
	ck_assert(qos_members_has(m, 3, 0x202));
	ck_assert_uint_eq(qos_members_count(m, 3), 1);
	ck_assert(qos_group_has(&pol, m, 3, 0x202, CA));
	ck_assert(!qos_group_has(&pol, m, 3, 0x201, CA));
	/* what named nothing: the unknown description, the missing port,
	 * the unknown partition, each with its place */
	ck_assert_uint_eq(rep.n_warnings, 3);
	ck_assert_ptr_nonnull(strstr(rep.detail[0].msg, "nosuch/P1"));
	ck_assert_uint_eq(rep.detail[0].line, 4);
	ck_assert_ptr_nonnull(strstr(rep.detail[1].msg, "h2/P2"));
	ck_assert_ptr_nonnull(strstr(rep.detail[2].msg, "missing"));
	ck_assert_uint_eq(rep.detail[2].line, 8);
	qos_members_free(m);
	fabric_free(&f);
}
END_TEST

START_TEST(test_members_in_rules)
{
	static const struct qos_part_ref parts[] = { { "five", 0x0005 } };
	struct qos_bind_in in = { .parts = parts, .n_parts = 1 };
	struct qos_query q = { .src_guid = 0x202, .dst_guid = 0x203,
			       .src_type = CA, .dst_type = CA };
	struct qos_members *m;
	struct fabric f;

	parse("port-groups\n"
	      " port-group\n  name: Part\n  partition: five\n end-port-group\n"
	      "end-port-groups\n" LEVELS "qos-match-rules\n"
	      " qos-match-rule\n  source: Part\n  destination: Part\n"
	      "  qos-level-name: C\n end-qos-match-rule\n"
	      "end-qos-match-rules\n");
	small_fabric(&f);
	ck_assert_int_eq(qos_members_build(&pol, &f, &in, &m, NULL), 0);
	ck_assert_str_eq(level_of(m, &q, NULL), "C");
	q.dst_guid = 0x201;
	ck_assert_str_eq(level_of(m, &q, NULL), "DEFAULT");
	/* unbound: no partition members */
	q.dst_guid = 0x203;
	ck_assert_str_eq(level_of(NULL, &q, NULL), "DEFAULT");
	qos_members_free(m);
	fabric_free(&f);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("qos_match");
	TCase *tc = tcase_create("match");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, test_first_rule_wins);
	tcase_add_test(tc, test_components_needed);
	tcase_add_test(tc, test_all_components_of_a_rule);
	tcase_add_test(tc, test_pkey_15_bits);
	tcase_add_test(tc, test_ends);
	tcase_add_test(tc, test_ulps_after_rules);
	tcase_add_test(tc, test_ulp_default);
	tcase_add_test(tc, test_pkey_in);
	tcase_add_test(tc, test_members);
	tcase_add_test(tc, test_members_in_rules);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
