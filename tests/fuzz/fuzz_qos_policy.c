/*
 * fuzz_qos_policy.c - libFuzzer target: the QoS policy file parser of
 * qos/.
 *
 * Checked besides the sanitizers: a parse returns 0 or -EINVAL (the input
 * is below QOS_MAX_FILE); an error has a line within the input, a column
 * >= 1 and says what was expected and what was found, and leaves the
 * policy empty; a policy has a default level, every rule's level and port
 * groups exist, the qos-ulps rules come after the others, the bounds
 * hold, and the dump is text that a second parse of the same input
 * reproduces.  The policy is then bound to an empty model and queried
 * (qos/match.c) with ends, ServiceIDs, P_Keys and QoS classes taken from
 * the input: every answer is a level of the policy, the rule it names
 * gives that level and matches the query, and no earlier rule does.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/fabric.h"
#include "qos/qos.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned lines_of(const uint8_t *data, size_t size)
{
	unsigned n = 1;

	for (size_t i = 0; i < size; i++)
		n += data[i] == '\n';
	return n;
}

static void check_policy(const struct qos_policy *p)
{
	bool ulp = false;

	if (p->default_level >= p->n_levels || p->n_groups > QOS_MAX_GROUPS ||
	    p->n_rules > QOS_MAX_RULES || p->n_levels > QOS_MAX_LEVELS + 16)
		abort();
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct qos_rule *r = &p->rules[i];

		if (r->level >= p->n_levels || (ulp && !r->from_ulp))
			abort();
		ulp = r->from_ulp;
		for (size_t k = 0; k < r->n_src; k++)
			if (r->src[k] >= p->n_groups)
				abort();
		for (size_t k = 0; k < r->n_dst; k++)
			if (r->dst[k] >= p->n_groups)
				abort();
		if (p->levels[r->level].sl > 15)
			abort();
	}
}

/* A 64-bit value from the input at `at` (wrapping), for the queries. */
static uint64_t word(const uint8_t *data, size_t size, size_t at)
{
	uint64_t v = 0;

	for (size_t i = 0; i < 8 && size; i++)
		v = v << 8 | data[(at + i) % size];
	return v;
}

static void check_matches(const struct qos_policy *p, const uint8_t *data,
			  size_t size)
{
	static const struct qos_part_ref parts[] = { { "Default", 0x7fff } };
	struct qos_bind_in in = { .parts = parts, .n_parts = 1,
				  .sm_guid = word(data, size, 3) };
	struct qos_bind_report rep;
	struct qos_members *m;
	struct fabric f;

	fabric_init(&f);
	if (qos_members_build(p, &f, &in, &m, &rep) < 0)
		abort();
	if (rep.n_detail > QOS_BIND_DETAIL || rep.n_detail > rep.n_warnings)
		abort();
	for (size_t k = 0; k < 16 && size; k++) {
		uint64_t w = word(data, size, k * 5);
		struct qos_query qq = {
			.src_guid = word(data, size, k * 7),
			.dst_guid = word(data, size, k * 11),
			.src_type = (uint8_t)(w & 3), .dst_type = (uint8_t)(w >> 2 & 3),
			.service_id = word(data, size, k * 13),
			.pkey = (uint16_t)(w >> 8), .qos_class = (uint16_t)(w >> 24 & 0xfff),
			.has_sid = w >> 40 & 1, .has_pkey = w >> 41 & 1,
			.has_class = w >> 42 & 1,
		};
		long rule;
		size_t l = qos_match(p, m, &qq, &rule);

		if (l >= p->n_levels || rule < -1 || rule >= (long)p->n_rules)
			abort();
		if (rule < 0 ? l != p->default_level :
		    l != p->rules[rule].level ||
		    !qos_rule_matches(p, m, &p->rules[rule], &qq))
			abort();
		for (long i = 0; i < (rule < 0 ? (long)p->n_rules : rule); i++)
			if (qos_rule_matches(p, m, &p->rules[i], &qq))
				abort();
	}
	qos_members_free(m);
	fabric_free(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qos_policy p, q;
	struct qos_error e;
	char *d1, *d2;
	int rc;

	rc = qos_parse((const char *)data, size, &p, &e);
	if (rc == -EINVAL) {
		if (e.line < 1 || e.line > lines_of(data, size) || e.col < 1 ||
		    !strstr(e.msg, "expected") || !strstr(e.msg, "found") ||
		    p.levels || p.groups || p.rules)
			abort();
		return 0;
	}
	if (rc)
		abort();
	check_policy(&p);
	check_matches(&p, data, size);
	d1 = qos_dump(&p);
	if (!d1 || qos_parse((const char *)data, size, &q, &e))
		abort();
	d2 = qos_dump(&q);
	if (!d2 || strcmp(d1, d2))
		abort();
	free(d1);
	free(d2);
	qos_policy_free(&p);
	qos_policy_free(&q);
	return 0;
}
