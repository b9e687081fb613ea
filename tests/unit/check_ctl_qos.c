/*
 * check_ctl_qos.c - `qos show` of the control socket (sm/ctl/cmd_qos.c,
 * sm/ctl/cmd_qos_out.c) and its client (tools/ibsmctl_qos.c): the request
 * grammar and its percent-encoded ends, the ends found in a model (GUID,
 * LID, description, :PORT), and the answers as text and JSON for the
 * manual's worked example (doc/examples/qos), lines kept under the
 * socket's limit when lists are long.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/conf.h"
#include "model/fabric.h"
#include "qos/qos.h"
#include "sm/ctl/ctl.h"
#include "sm/ctl/qos.h"
#include "sm/sm.h"
#include "tools/ibsmctl.h"

static int parse(const char *s, struct ctl_request *r, char *err)
{
	return ctl_parse(s, strlen(s), r, err, 300);
}

START_TEST(request_grammar)
{
	struct ctl_request r;
	char err[300];

	ck_assert_int_eq(parse("qos show", &r, err), 0);
	ck_assert(r.cmd == CTL_CMD_QOS && !r.json && !r.qos.path);
	ck_assert_int_eq(parse("  qos\tshow json ", &r, err), 0);
	ck_assert(r.cmd == CTL_CMD_QOS && r.json);
	ck_assert_int_eq(parse("qos show src H0003 dst stor01%20HCA-1 sid"
			       " 0x1060cbc pkey 0x8001 class 12 json", &r, err),
			 0);
	ck_assert(r.qos.path && r.json);
	ck_assert_str_eq(r.qos.src, "H0003");
	ck_assert_str_eq(r.qos.dst, "stor01 HCA-1");
	ck_assert(r.qos.has_sid && r.qos.sid == 0x1060cbc);
	ck_assert(r.qos.has_pkey && r.qos.pkey == 0x8001);
	ck_assert(r.qos.has_class && r.qos.qos_class == 12);
	/* any order; the numbers optional */
	ck_assert_int_eq(parse("qos show dst 7 src 0x2c90300c0ff01", &r, err), 0);
	ck_assert(r.qos.path && !r.qos.has_sid && !r.qos.has_pkey);
	ck_assert_str_eq(r.qos.dst, "7");

	/* what is refused, with the expected form */
	static const char *const bad[] = {
		"qos", "qos list", "qos show src a", "qos show dst b",
		"qos show sid 1", "qos show src a dst b sid",
		"qos show src a dst b pkey 0x10000",
		"qos show src a dst b class 4096",
		"qos show src a dst b sid -1", "qos show src a dst b sid 1x",
		"qos show src a src b dst c", "qos show json json",
		"qos show src a%2 dst b", "qos show src %00 dst b",
		"qos show src a%zz dst b", "qos show src a dst b extra",
		"qos show src a dst b sid 1 pkey 2 class 3 json x y z w",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(parse(bad[i], &r, err) == -EINVAL, "%s", bad[i]);
		ck_assert_msg(strstr(err, "expected 'qos show"), "%s: %s",
			      bad[i], err);
	}
	/* only the word qos is taken there */
	ck_assert_int_eq(parse("qosx show", &r, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "unknown command"));
	ck_assert_ptr_nonnull(strstr(err, " qos or help"));
	/* an end longer than CTL_QOS_END - 1 decoded bytes */
	char line[CTL_MAX_LINE];
	snprintf(line, sizeof(line), "qos show src %0*d dst b", CTL_QOS_END, 0);
	ck_assert_int_eq(parse(line, &r, err), -EINVAL);
}
END_TEST

/*
 * Mutated qos requests (bytes flipped, inserted, dropped): parsing never
 * reads past the line, a line it takes has both ends or neither, and its
 * ends decode to at most CTL_QOS_END - 1 bytes (ASan/UBSan watch).
 */
START_TEST(mutated_requests)
{
	static const char *const seeds[] = {
		"qos show src H0003 dst stor01%20HCA-1 sid 0x1060cbc pkey"
		" 0x8001 class 3 json",
		"qos show json dst 7 src 0x2c90300c0ff01:1",
		"qos show src %41%42 dst b%25",
	};
	unsigned seed = 12345;
	struct ctl_request r;
	char err[300];

	for (int i = 0; i < 20000; i++) {
		char line[CTL_MAX_LINE];
		size_t n = strlen(seeds[i % 3]);
		char *heap;

		memcpy(line, seeds[i % 3], n);
		for (int k = 0; k < 1 + i % 4; k++) {
			size_t at;

			seed = seed * 1103515245u + 12345u;
			at = (seed >> 8) % (n ? n : 1);
			switch ((seed >> 4) % 3) {
			case 0:
				line[at] = (char)(seed >> 16);
				break;
			case 1:
				if (n + 1 < sizeof(line)) {
					memmove(line + at + 1, line + at, n - at);
					line[at] = "% x0\t"[(seed >> 16) % 5];
					n++;
				}
				break;
			default:
				if (n) {
					memmove(line + at, line + at + 1, n - at - 1);
					n--;
				}
			}
		}
		/* exactly n bytes on the heap: a read past them is caught */
		heap = malloc(n ? n : 1);
		memcpy(heap, line, n);
		if (ctl_parse(heap, n, &r, err, sizeof(err)) == 0 &&
		    r.cmd == CTL_CMD_QOS) {
			ck_assert(!r.qos.src[0] == !r.qos.dst[0]);
			ck_assert_uint_lt(strlen(r.qos.src), CTL_QOS_END);
			ck_assert_uint_lt(strlen(r.qos.dst), CTL_QOS_END);
		}
		free(heap);
	}
}
END_TEST

START_TEST(encode_decode)
{
	const char *ends[] = { "stor01 HCA-1", "100%", "a:b/P1",
			       "x\"y\\z\t", "\xc3\xa9t\xc3\xa9" };
	char enc[260], dec[CTL_QOS_END];

	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		ck_assert_int_eq(qos_encode_end(ends[i], enc, sizeof(enc)), 0);
		/* the encoded form is one printable word */
		for (const char *c = enc; *c; c++)
			ck_assert(*c > ' ' && *c < 0x7f);
		ck_assert_int_eq(ctl_qos_decode(enc, strlen(enc), dec,
						sizeof(dec)), 0);
		ck_assert_str_eq(dec, ends[i]);
	}
	ck_assert_int_eq(qos_encode_end("stor01 HCA-1", enc, sizeof(enc)), 0);
	ck_assert_str_eq(enc, "stor01%20HCA-1");
	ck_assert_int_eq(qos_encode_end("", enc, sizeof(enc)), -EINVAL);
	ck_assert_int_eq(qos_encode_end("abc d", enc, 6), -E2BIG);
	ck_assert_int_eq(ctl_qos_decode("%41%62", 6, dec, sizeof(dec)), 0);
	ck_assert_str_eq(dec, "Ab");
	ck_assert_int_eq(ctl_qos_decode("abc", 3, dec, 3), -E2BIG);
	ck_assert_int_eq(ctl_qos_decode("%4", 2, dec, sizeof(dec)), -EINVAL);
}
END_TEST

/* ----------------------------------------------------------- model */

static int32_t add(struct fabric *f, uint64_t guid, uint8_t type,
		   uint8_t ports, const char *desc, uint16_t lid)
{
	int32_t id = fabric_add_node(f, guid, type, ports);
	struct fab_node *n;

	ck_assert_int_ge(id, 0);
	n = fabric_node(f, id);
	snprintf(n->desc, sizeof(n->desc), "%s", desc);
	n->has_desc = true;
	for (unsigned p = 0; p <= ports; p++) {
		n->ports[p].valid = type == NODE_TYPE_SWITCH || p;
		n->ports[p].num = (uint8_t)p;
		n->ports[p].guid = type == NODE_TYPE_SWITCH ? guid : guid + p;
		if ((type == NODE_TYPE_SWITCH) == !p) {
			n->ports[p].lid = lid ? (uint16_t)(lid + (p > 1)) : 0;
			if (n->ports[p].lid > f->max_lid)
				f->max_lid = n->ports[p].lid;
		}
	}
	return id;
}

/* sw1 (LID 1), stor01/02, two nodes "node01 ..." (ambiguous first word),
 * a dual-port CA (LIDs 5, 6). */
static void model(struct fabric *f)
{
	fabric_init(f);
	add(f, 0x100, NODE_TYPE_SWITCH, 8, "sw1", 1);
	add(f, 0x200, NODE_TYPE_CA, 1, "stor01 HCA-1", 2);
	add(f, 0x300, NODE_TYPE_CA, 1, "stor02 HCA-1", 3);
	add(f, 0x400, NODE_TYPE_CA, 1, "node01 HCA-1", 4);
	add(f, 0x500, NODE_TYPE_CA, 2, "dual HCA-1", 5);
	add(f, 0x600, NODE_TYPE_CA, 1, "node01 HCA-2", 7);
	add(f, 0x700, NODE_TYPE_CA, 1, "node01", 8);
}

static void end_is(const struct fabric *f, const char *spec, uint64_t guid)
{
	struct fab_ref r;
	char err[200] = "";

	ck_assert_msg(ctl_qos_end(f, spec, &r, err, sizeof(err)) == 0,
		      "%s: %s", spec, err);
	ck_assert_msg(f->nodes[r.node].ports[r.port].guid == guid,
		      "%s: 0x%llx", spec,
		      (unsigned long long)f->nodes[r.node].ports[r.port].guid);
}

static void end_fails(const struct fabric *f, const char *spec,
		      const char *why)
{
	struct fab_ref r;
	char err[200] = "";

	ck_assert_int_eq(ctl_qos_end(f, spec, &r, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, why), "%s: %s", spec, err);
}

START_TEST(ends_in_model)
{
	struct fabric f;

	model(&f);
	end_is(&f, "0x201", 0x201);		/* a port GUID */
	end_is(&f, "0x200", 0x201);		/* a node GUID: its port */
	end_is(&f, "0x100", 0x100);		/* a switch: port 0 */
	end_is(&f, "0x500:2", 0x502);
	end_is(&f, "2", 0x201);			/* LIDs */
	end_is(&f, "6", 0x502);
	end_is(&f, "1", 0x100);
	end_is(&f, "stor02 HCA-1", 0x301);	/* descriptions */
	end_is(&f, "stor02", 0x301);
	end_is(&f, "dual:2", 0x502);
	end_is(&f, "dual HCA-1:1", 0x501);
	end_is(&f, "sw1", 0x100);
	/* a whole description beats the first words of others */
	end_is(&f, "node01", 0x701);
	end_is(&f, "node01 HCA-2", 0x601);
	end_fails(&f, "stor03", "no node \"stor03\"");
	end_fails(&f, "0x999", "no port or node GUID 0x999");
	end_fails(&f, "99", "no port with LID 99");
	end_fails(&f, "sw1:3", "has no port 3");
	end_fails(&f, "0x201:1", "no port or node GUID");
	fabric_free(&f);

	/* first words shared by two nodes and no whole match */
	fabric_init(&f);
	add(&f, 0x10, NODE_TYPE_CA, 1, "h1 HCA-1", 1);
	add(&f, 0x20, NODE_TYPE_CA, 1, "h1 HCA-2", 2);
	end_fails(&f, "h1", "names 2 nodes");
	fabric_free(&f);
	fabric_init(&f);
	end_fails(&f, "h1", "no fabric yet");
	fabric_free(&f);
}
END_TEST

/* ----------------------------------------------------------- answers */

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *buf = calloc(1, 1 << 18);
	size_t n;

	ck_assert_ptr_nonnull(fp);
	n = fread(buf, 1, (1 << 18) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

/* The value of `key` in the example's opensm.conf ("qos_sl2vl ..."). */
static const char *conf_value(const char *conf, const char *key, char *buf,
			      size_t size)
{
	char pat[64];
	const char *l;

	snprintf(pat, sizeof(pat), "\n%s ", key);
	l = strstr(conf, pat);
	ck_assert_msg(l != NULL, "%s", key);
	l += strlen(pat);
	snprintf(buf, size, "%.*s", (int)strcspn(l, "\n"), l);
	return buf;
}

/* The manual's example: its tables from the opensm.conf lines, its
 * policy file, two members in the storage group. */
static void example(struct qos_view *v, struct qos_policy *p, size_t *mem)
{
	char *conf = slurp(EXAMPLES "/opensm.conf");
	char high[100], low[100], sl2vl[100], err[200];
	struct qos_key_set base = { .high_limit = -1 }, cls = { .high_limit = -1 };
	struct qos_error e;

	base.vlarb_high = conf_value(conf, "qos_vlarb_high", high, sizeof(high));
	base.vlarb_low = conf_value(conf, "qos_vlarb_low", low, sizeof(low));
	base.sl2vl = conf_value(conf, "qos_sl2vl", sl2vl, sizeof(sl2vl));
	base.high_limit = 0;
	memset(v, 0, sizeof(*v));
	v->on = true;
	v->max_op_vls = 5;		/* OpenSM's default */
	v->file = "/etc/opensm/qos-policy.conf";
	v->loaded = 1795939200;		/* 2026-11-29 08:00:00 UTC */
	for (int c = QOS_CA; c < QOS_N_CLASSES; c++)
		ck_assert_int_eq(qos_build_tables(&v->tables[c], &cls, &base,
						  err, sizeof(err)), 0);
	ck_assert_int_eq(qos_load(EXAMPLES "/qos-policy.conf", p, &e), 0);
	v->pol = p;
	/* on the example's fabric both groups hold the two targets */
	for (size_t g = 0; g < p->n_groups; g++)
		mem[g] = 2;
	v->members = mem;
	free(conf);
}

static void lines_fit(const struct ctl_answer *a)
{
	const char *s = a->buf;

	while (s && *s) {
		size_t n = strcspn(s, "\n");

		ck_assert_uint_lt(n, 1024);
		s += n + (s[n] == '\n');
	}
}

#define HAS(a, s) ck_assert_msg(strstr((a)->buf, s), "missing:\n%s\nin:\n%s", \
				 s, (a)->buf)

START_TEST(show_text)
{
	struct ctl_answer a = { 0 };
	struct qos_policy p;
	struct qos_view v;
	size_t mem[8];

	example(&v, &p, mem);
	ck_assert_int_eq(ctl_qos_show(&a, &v, false), 0);
	HAS(&a, "QoS: on (qos TRUE)\npolicy file: /etc/opensm/qos-policy.conf\n"
	    "policy: loaded 2026-11-29 08:00:00 UTC: 1 port groups, 2 QoS"
	    " levels, 1 match rules, 2 qos-ulps rules\n");
	HAS(&a, "OperationalVLs: max_op_vls 5 (VL0-14) within each link's"
	    " VLCap; max_vls is checked, not used (as OpenSM)\n");
	HAS(&a, "class ca: max_vls 15, high_limit 0\n"
	    "  vlarb_high 0:0,1:0\n  vlarb_low  0:192,1:64\n"
	    "  sl2vl      0,1,0,0,0,0,0,0,0,0,0,0,0,0,0,0\n");
	HAS(&a, "class rtr: max_vls 15");
	HAS(&a, "  level               sl  mtu-limit  rate-limit  packet-life"
	    "  pkey / path-bits\n");
	HAS(&a, "  DEFAULT             0   -          -           -          "
	    "  - / -  (default)  \"compute and management traffic\"\n");
	HAS(&a, "  Storage             1   2048       -           -          "
	    "  - / -  \"storage traffic, VL 1, 25% of every link\"\n");
	HAS(&a, "  StorageTargets  2      port-group line 8  \"the SRP and iSER"
	    " targets, by node description\"\n");
	HAS(&a, "  _ULP_Targets_   2      qos-ulps line 44");
	HAS(&a, "  1   match-rule line 32: destination StorageTargets,"
	    " service-id 0x1060cbc -> level Storage (sl 1)\n"
	    "  2   qos-ulps line 44: destination _ULP_Targets_ -> level"
	    " SimpleQoSLevel_SL1 (sl 1)\n"
	    "  3   qos-ulps line 46: service-id 0x1060cbc -> level"
	    " SimpleQoSLevel_SL1 (sl 1)\n"
	    "  -   otherwise -> level DEFAULT (sl 0)\n");
	ck_assert_ptr_null(strstr(a.buf, "last load"));
	lines_fit(&a);
	ctl_answer_free(&a);

	/* a failed reload that kept the policy; then qos off, no policy */
	v.error = "/x/p.conf:24:13: expected an SL 0-15, found '16'";
	v.error_at = v.loaded + 60;
	ck_assert_int_eq(ctl_qos_show(&a, &v, false), 0);
	HAS(&a, "last load: 2026-11-29 08:01:00 UTC failed: /x/p.conf:24:13:"
	    " expected an SL 0-15, found '16'; the policy loaded before stays"
	    " in force\n");
	ctl_answer_free(&a);
	v.on = false;
	v.pol = NULL;
	v.error = NULL;
	ck_assert_int_eq(ctl_qos_show(&a, &v, false), 0);
	HAS(&a, "QoS: off (qos FALSE)");
	HAS(&a, "policy: none in force\n");
	ck_assert_ptr_null(strstr(a.buf, "class ca"));
	ck_assert_ptr_null(strstr(a.buf, "rules"));
	ctl_answer_free(&a);
	qos_policy_free(&p);
}
END_TEST

/* JSON: braces and brackets balance outside strings, and no raw control
 * character sits in a string. */
static void json_balanced(const char *s)
{
	int depth = 0;
	bool str = false;

	for (; *s; s++) {
		if (str) {
			ck_assert((unsigned char)*s >= 0x20);
			if (*s == '\\')
				s++;
			else if (*s == '"')
				str = false;
			continue;
		}
		if (*s == '"')
			str = true;
		else if (*s == '{' || *s == '[')
			depth++;
		else if (*s == '}' || *s == ']')
			ck_assert_int_ge(--depth, 0);
	}
	ck_assert(!str);
	ck_assert_int_eq(depth, 0);
}

START_TEST(show_json)
{
	struct ctl_answer a = { 0 };
	struct qos_policy p;
	struct qos_view v;
	size_t mem[8];

	example(&v, &p, mem);
	v.error = "p.conf:1:1: \"quoted\"\tand tab";
	v.error_at = v.loaded;
	ck_assert_int_eq(ctl_qos_show(&a, &v, true), 0);
	json_balanced(a.buf);
	HAS(&a, "{\"qos\": true, \"policy_file\": \"/etc/opensm/qos-policy.conf\","
	    " \"policy\": {\"loaded\": \"2026-11-29T08:00:00Z\", \"port_groups\":"
	    " 1, \"levels\": 2, \"match_rules\": 1, \"ulp_rules\": 2}");
	HAS(&a, "\"last_error\": {\"at\": \"2026-11-29T08:00:00Z\", \"message\":"
	    " \"p.conf:1:1: \\\"quoted\\\"\\u0009and tab\"}");
	HAS(&a, "\"max_op_vls\": 5, \"port_classes\": [{\"class\": \"ca\", \"max_vls\": 15, \"high_limit\": 0,"
	    " \"vlarb_high\": [{\"vl\": 0, \"weight\": 0}, {\"vl\": 1,"
	    " \"weight\": 0}], \"vlarb_low\": [{\"vl\": 0, \"weight\": 192},"
	    " {\"vl\": 1, \"weight\": 64}], \"sl2vl\": [0, 1, 0, 0, 0, 0, 0, 0,"
	    " 0, 0, 0, 0, 0, 0, 0, 0]}");
	HAS(&a, "{\"name\": \"Storage\", \"use\": \"storage traffic, VL 1, 25%"
	    " of every link\", \"sl\": 1, \"mtu_limit\": 4, \"rate_limit\":"
	    " null, \"packet_life\": null, \"pkey\": [], \"path_bits\": [],"
	    " \"default\": false, \"simple\": false, \"line\": 21}");
	HAS(&a, "\"simple\": true, \"line\": null}");
	HAS(&a, "{\"name\": \"StorageTargets\", \"use\": \"the SRP and iSER"
	    " targets, by node description\", \"members\": 2, \"generated\":"
	    " false, \"line\": 8}");
	HAS(&a, "{\"order\": 1, \"kind\": \"match-rule\", \"line\": 32, \"use\":"
	    " \"iSER (RDMA CM port 3260) to the storage targets\", \"qos_class\":"
	    " [], \"source\": [], \"destination\": [\"StorageTargets\"],"
	    " \"service_id\": [[\"0x1060cbc\", \"0x1060cbc\"]], \"pkey\": [],"
	    " \"level\": \"Storage\", \"sl\": 1}");
	HAS(&a, "\"default_level\": \"DEFAULT\"}");
	lines_fit(&a);
	ctl_answer_free(&a);

	v.pol = NULL;
	v.on = false;
	v.error = NULL;
	ck_assert_int_eq(ctl_qos_show(&a, &v, true), 0);
	json_balanced(a.buf);
	HAS(&a, "\"policy\": null, \"last_error\": null");
	HAS(&a, "\"port_classes\": []");
	HAS(&a, "\"rules\": [], \"default_level\": null}");
	ctl_answer_free(&a);
	qos_policy_free(&p);
}
END_TEST

/* A rule with 600 service ID ranges: its text and JSON wrap into lines
 * under the socket's limit, every range there. */
START_TEST(long_lists_wrap)
{
	char *text = malloc(64 * 1024), *at = text;
	struct ctl_answer a = { 0 };
	struct qos_policy p;
	struct qos_error e;
	struct qos_view v = { .on = true };

	at += sprintf(at, "qos-levels\nqos-level\nname: DEFAULT\nsl: 0\n"
		      "end-qos-level\nend-qos-levels\nqos-match-rules\n"
		      "qos-match-rule\nservice-id: ");
	for (int i = 0; i < 600; i++)
		at += sprintf(at, "%s0x%x-0x%x", i ? "," : "", 0x10000 + 4 * i,
			      0x10001 + 4 * i);
	sprintf(at, "\nqos-level-name: DEFAULT\nend-qos-match-rule\n"
		"end-qos-match-rules\n");
	ck_assert_int_eq(qos_parse(text, strlen(text), &p, &e), 0);
	v.pol = &p;
	for (int json = 0; json < 2; json++) {
		ck_assert_int_eq(ctl_qos_show(&a, &v, json), 0);
		lines_fit(&a);
		ck_assert_ptr_nonnull(strstr(a.buf, json ? "\"0x10000\"" :
					     "0x10000-0x10001"));
		ck_assert_ptr_nonnull(strstr(a.buf, json ? "\"0x1095d\"]]" :
					     "0x1095c-0x1095d -> level DEFAULT"));
		if (json)
			json_balanced(a.buf);
		ctl_answer_free(&a);
	}
	qos_policy_free(&p);
	free(text);
}
END_TEST

START_TEST(path_answers)
{
	struct ctl_answer a = { 0 };
	struct ctl_qos_req q = { .path = true, .has_sid = true, .sid = 0x1060cbc };
	struct qos_policy p;
	struct qos_view v;
	struct qos_path_view pv = {
		.src = { 0x401, 4, 1, NODE_TYPE_CA, "node01 HCA-1" },
		.dst = { 0x201, 2, 1, NODE_TYPE_CA, "stor01 HCA-1" },
		.q = &q, .rule = 0, .level = 1,
	};
	size_t mem[8];

	example(&v, &p, mem);
	ck_assert_str_eq(p.levels[1].name, "Storage");
	pv.pr.qos_class_sl = htobe16(1);
	pv.pr.mtu = 0x80 | 4;
	pv.pr.rate = 0x80 | 7;
	pv.pr.pkt_life = 0x80 | 18;
	pv.pr.pkey = htobe16(0xffff);
	ck_assert_int_eq(ctl_qos_path(&a, &v, &pv, false), 0);
	HAS(&a, "source:      0x0000000000000401 LID 4 port 1 \"node01 HCA-1\"\n"
	    "destination: 0x0000000000000201 LID 2 port 1 \"stor01 HCA-1\"\n"
	    "query:       service-id 0x1060cbc, pkey -, qos-class -\n"
	    "rule:        1, match-rule line 32: destination StorageTargets,"
	    " service-id 0x1060cbc\n"
	    "level:       Storage (sl 1, mtu-limit 2048, rate-limit -,"
	    " packet-life -)\n"
	    "PathRecord:  SL 1, MTU 4 (2048), rate 7 (40 Gb/s), packet life 18,"
	    " pkey 0xffff\n");
	ctl_answer_free(&a);
	ck_assert_int_eq(ctl_qos_path(&a, &v, &pv, true), 0);
	json_balanced(a.buf);
	HAS(&a, "{\"qos\": true, \"src\": {\"guid\": \"0x0000000000000401\","
	    " \"lid\": 4, \"port\": 1, \"node\": \"node01 HCA-1\"}, \"dst\":"
	    " {\"guid\": \"0x0000000000000201\", \"lid\": 2, \"port\": 1,"
	    " \"node\": \"stor01 HCA-1\"}, \"service_id\": \"0x1060cbc\","
	    " \"pkey\": null, \"qos_class\": null, \"rule\": {\"order\": 1,"
	    " \"kind\": \"match-rule\", \"line\": 32}, \"level\": \"Storage\","
	    " \"level_sl\": 1, \"path_record\": {\"sl\": 1, \"mtu\": 4,"
	    " \"mtu_bytes\": 2048, \"rate\": 7, \"rate_gbps\": 40,"
	    " \"packet_life\": 18, \"pkey\": \"0xffff\"}}");
	ctl_answer_free(&a);

	/* no rule: the default level; no record; 2.5 Gb/s stays a number */
	pv.rule = -1;
	pv.level = (long)p.default_level;
	pv.status = -1;
	q.has_pkey = true;
	q.pkey = 0x8001;
	ck_assert_int_eq(ctl_qos_path(&a, &v, &pv, false), 0);
	HAS(&a, "query:       service-id 0x1060cbc, pkey 0x8001, qos-class -\n"
	    "rule:        none matches: the default level\n"
	    "level:       DEFAULT (sl 0,");
	HAS(&a, "PathRecord:  none: the SA answers no record");
	ctl_answer_free(&a);
	ck_assert_int_eq(ctl_qos_path(&a, &v, &pv, true), 0);
	json_balanced(a.buf);
	HAS(&a, "\"rule\": null, \"level\": \"DEFAULT\", \"level_sl\": 0,"
	    " \"path_record\": null, \"sa_status\": 0}");
	ctl_answer_free(&a);
	pv.status = 0;
	pv.pr.rate = 2;
	ck_assert_int_eq(ctl_qos_path(&a, &v, &pv, true), 0);
	HAS(&a, "\"rate\": 2, \"rate_gbps\": 2.5,");
	ctl_answer_free(&a);

	/* qos off: no level */
	v.on = false;
	pv.level = pv.rule = -1;
	ck_assert_int_eq(ctl_qos_path(&a, &v, &pv, false), 0);
	HAS(&a, "rule:        none (qos FALSE)\n");
	ctl_answer_free(&a);
	ck_assert_int_eq(ctl_qos_path(&a, &v, &pv, true), 0);
	HAS(&a, "\"rule\": null, \"level\": null, \"level_sl\": null,");
	ctl_answer_free(&a);
	qos_policy_free(&p);
}
END_TEST

/* doc/ibsm.8 without the roff escapes of its example blocks. */
static char *manual(void)
{
	char *m = slurp(MANUAL), *o = m;

	for (const char *i = m; *i;) {
		if (i[0] == '\\' && i[1] == '-') {
			*o++ = '-';
			i += 2;
		} else if (i[0] == '\\' && i[1] == 'e') {
			*o++ = '\\';
			i += 2;
		} else if (i[0] == '\\' && i[1] == '&') {
			i += 2;
		} else {
			*o++ = *i++;
		}
	}
	*o = '\0';
	return m;
}

/*
 * ibsm(8) QOS prints the example files whole, and what `qos show` prints
 * for them as the formatter prints it: the manual cannot drift from the
 * files the fabric test runs, nor from the code.
 */
START_TEST(manual_example)
{
	char *man = manual(), *conf = slurp(EXAMPLES "/opensm.conf");
	char *pol = slurp(EXAMPLES "/qos-policy.conf");
	struct ctl_answer a = { 0 };
	struct ctl_qos_req q = { .path = true, .has_sid = true, .sid = 0x1060cbc };
	struct qos_policy p;
	struct qos_view v;
	size_t mem[8];

	ck_assert_msg(strstr(man, conf), "ibsm.8 lacks %s", EXAMPLES "/opensm.conf");
	ck_assert_msg(strstr(man, pol), "ibsm.8 lacks %s", EXAMPLES "/qos-policy.conf");
	example(&v, &p, mem);
	ck_assert_int_eq(ctl_qos_show(&a, &v, false), 0);
	ck_assert_msg(strstr(man, a.buf), "ibsm.8 lacks:\n%s", a.buf);
	ctl_answer_free(&a);

	/* ibsim's GUIDs and LIDs for H0003 and stor01 */
	struct qos_path_view pv = {
		.src = { 0x100005, 3, 1, NODE_TYPE_CA, "H0003" },
		.dst = { 0x0002c90300c0ff01, 5, 1, NODE_TYPE_CA, "stor01 HCA-1" },
		.q = &q, .rule = 0, .level = 1,
	};
	pv.pr.qos_class_sl = htobe16(1);
	pv.pr.mtu = 0x80 | 4;
	pv.pr.rate = 0x80 | 3;
	pv.pr.pkt_life = 0x80 | 18;
	pv.pr.pkey = htobe16(0xffff);
	ck_assert_int_eq(ctl_qos_path(&a, &v, &pv, false), 0);
	ck_assert_msg(strstr(man, a.buf), "ibsm.8 lacks:\n%s", a.buf);
	ctl_answer_free(&a);
	qos_policy_free(&p);
	free(man);
	free(conf);
	free(pol);
}
END_TEST

/* ------------------------------------------- on the daemon's struct */

static struct sm sm;
static struct cfg conf;

/* ctl_handle_line's answer; the terminator must be OK (or ERR). */
static void run(const char *line, struct ctl_answer *a, bool ok)
{
	memset(a, 0, sizeof(*a));
	ck_assert_int_eq(ctl_handle_line(&sm, line, strlen(line), a),
			 ok ? 0 : -1);
	ck_assert(a->len && a->buf[a->len - 1] == '\n');
}

/*
 * The command on a daemon's struct sm: qos FALSE; then the example's
 * keys and policy loaded (sm/qos_policy.c) and bound to a model of the
 * example's fabric (stor01/02 with the example's port GUIDs): the group
 * counts, each end form, the rule of each query; no routes, so the SA
 * answers no record; a broken policy on reload named, the old one kept.
 */
START_TEST(execute_on_sm)
{
	char *cf = slurp(EXAMPLES "/opensm.conf"), *pol;
	char high[100], low[100], sl2vl[100], bad[] = "/tmp/check_ctl_qos.XXXXXX";
	struct ctl_answer a;
	FILE *fp;
	int fd;

	memset(&sm, 0, sizeof(sm));
	fabric_init(&sm.fabric);
	sm.state = SM_NOTACTIVE;
	cfg_init(&conf);
	sm.conf = &conf;
	for (int c = 0; c < QOS_N_CLASSES; c++)
		sm.cfg.qos_keys[c].high_limit = -1;
	run("qos show", &a, true);
	HAS(&a, "QoS: off (qos FALSE)");
	HAS(&a, "policy: none in force\nOK\n");
	ctl_answer_free(&a);
	run("qos show src 1 dst 2", &a, false);
	HAS(&a, "ERR src 1: no fabric yet");
	ctl_answer_free(&a);

	sm.cfg.qos = true;
	sm.cfg.qos_keys[QOS_BASE].vlarb_high = conf_value(cf, "qos_vlarb_high", high, sizeof(high));
	sm.cfg.qos_keys[QOS_BASE].vlarb_low = conf_value(cf, "qos_vlarb_low", low, sizeof(low));
	sm.cfg.qos_keys[QOS_BASE].sl2vl = conf_value(cf, "qos_sl2vl", sl2vl, sizeof(sl2vl));
	sm.cfg.qos_keys[QOS_BASE].high_limit = 0;
	sm.cfg.qos_policy_file = EXAMPLES "/qos-policy.conf";
	add(&sm.fabric, 0x100, NODE_TYPE_SWITCH, 8, "sw1", 1);
	add(&sm.fabric, 0x0002c90300c0ff00, NODE_TYPE_CA, 1, "stor01 HCA-1", 2);
	add(&sm.fabric, 0x0002c90300c0ff02, NODE_TYPE_CA, 1, "stor02 HCA-1", 3);
	add(&sm.fabric, 0x400, NODE_TYPE_CA, 1, "H0003", 4);
	ck_assert_int_eq(sm_qos_load(&sm, true), 0);
	run("qos show", &a, true);
	HAS(&a, "QoS: on (qos TRUE)\npolicy file: " EXAMPLES "/qos-policy.conf\n"
	    "policy: loaded 2");
	HAS(&a, "  vlarb_low  0:192,1:64\n");
	HAS(&a, "  StorageTargets  2      port-group line 8");
	HAS(&a, "  _ULP_Targets_   2      qos-ulps line 44");
	ck_assert_ptr_null(strstr(a.buf, "last load"));
	ctl_answer_free(&a);

	run("qos show src H0003 dst stor01%20HCA-1 sid 0x1060cbc", &a, true);
	HAS(&a, "source:      0x0000000000000401 LID 4 port 1 \"H0003\"\n"
	    "destination: 0x0002c90300c0ff01 LID 2 port 1 \"stor01 HCA-1\"\n");
	HAS(&a, "rule:        1, match-rule line 32:");
	HAS(&a, "level:       Storage (sl 1,");
	HAS(&a, "PathRecord:  none: the SA answers no record");
	HAS(&a, "\nOK no PathRecord\n");
	ctl_answer_free(&a);
	run("qos show json src H0003 dst stor02", &a, true);
	HAS(&a, "\"rule\": {\"order\": 2, \"kind\": \"qos-ulps\", \"line\": 44},"
	    " \"level\": \"SimpleQoSLevel_SL1\", \"level_sl\": 1,");
	ctl_answer_free(&a);
	run("qos show src 4 dst 3 sid 0x1060cbc", &a, true);
	HAS(&a, "rule:        1, match-rule");
	ctl_answer_free(&a);
	run("qos show src 0x400 dst sw1 sid 0x1060cbc", &a, true);
	HAS(&a, "destination: 0x0000000000000100 LID 1 port 0 \"sw1\"");
	HAS(&a, "rule:        3, qos-ulps line 46:");
	ctl_answer_free(&a);
	run("qos show src H0003 dst sw1", &a, true);
	HAS(&a, "rule:        none matches: the default level\n"
	    "level:       DEFAULT (sl 0,");
	ctl_answer_free(&a);
	run("qos show src H0003 dst stor03", &a, false);
	HAS(&a, "ERR dst stor03: no node \"stor03\" in the fabric\n");
	ctl_answer_free(&a);

	/* a broken policy on reload: said, the policy in force stays */
	pol = slurp(EXAMPLES "/qos-policy.conf");
	*strstr(pol, "sl: 1\n") = '\0';
	fd = mkstemp(bad);
	ck_assert_int_ge(fd, 0);
	fp = fdopen(fd, "w");
	fprintf(fp, "%ssl: 16\n", pol);
	fclose(fp);
	sm.cfg.qos_policy_file = bad;
	ck_assert_int_lt(sm_qos_reload(&sm, NULL), 0);
	run("qos show", &a, true);
	HAS(&a, "policy file: " EXAMPLES "/qos-policy.conf\n");
	HAS(&a, " failed: ");
	HAS(&a, ":24:13: expected a number from 0 to 15, found '16'; the policy"
	    " loaded before stays in force\n");
	HAS(&a, "  Storage             1   2048");
	ctl_answer_free(&a);
	unlink(bad);
	sm_qos_free(&sm);
	fabric_free(&sm.fabric);
	cfg_free(&conf);
	free(pol);
	free(cf);
}
END_TEST

static Suite *ctl_qos_suite(void)
{
	Suite *s = suite_create("ctl_qos");
	TCase *tc = tcase_create("ctl_qos");

	tcase_add_test(tc, request_grammar);
	tcase_add_test(tc, mutated_requests);
	tcase_add_test(tc, encode_decode);
	tcase_add_test(tc, ends_in_model);
	tcase_add_test(tc, show_text);
	tcase_add_test(tc, show_json);
	tcase_add_test(tc, long_lists_wrap);
	tcase_add_test(tc, path_answers);
	tcase_add_test(tc, manual_example);
	tcase_add_test(tc, execute_on_sm);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ctl_qos_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
