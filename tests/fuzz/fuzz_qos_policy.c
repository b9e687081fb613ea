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
 * reproduces.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
