/*
 * ibsmctl_qos.c - `ibsmctl qos check FILE`: parse a QoS policy file
 * (qos/) and print the first error as FILE:LINE:COLUMN (exit 2) or a
 * summary of what it defines (exit 0).  Works on the file alone.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "qos/qos.h"
#include "tools/ibsmctl.h"

static void qos_usage(FILE *f)
{
	fputs("usage: ibsmctl qos check FILE\n", f);
}

static void summary(const char *file, const struct qos_policy *p)
{
	size_t groups = 0, levels = 0, ulps = 0;

	for (size_t i = 0; i < p->n_groups; i++)
		groups += !p->groups[i].generated;
	for (size_t i = 0; i < p->n_levels; i++)
		levels += !p->levels[i].simple;
	for (size_t i = 0; i < p->n_rules; i++)
		ulps += p->rules[i].from_ulp;
	printf("%s: OK: %zu port groups, %zu QoS levels, %zu match rules, "
	       "%zu qos-ulps rules, %zu vlarb scopes, %zu sl2vl scopes\n",
	       file, groups, levels, p->n_rules - ulps, ulps, p->n_vlarb,
	       p->n_sl2vl);
	for (size_t i = 0; i < p->n_levels; i++) {
		const struct qos_level *l = &p->levels[i];
		size_t used = 0;
		char sl[12] = "-";

		for (size_t r = 0; r < p->n_rules; r++)
			used += p->rules[r].level == i;
		if (l->sl >= 0)
			snprintf(sl, sizeof(sl), "%d", l->sl);
		printf("level %-24s sl %-2s rules %zu%s\n", l->name, sl, used,
		       i == p->default_level ? " (default)" : "");
	}
}

int qos_main(int argc, char **argv)
{
	struct qos_policy p;
	struct qos_error e;
	int rc;

	if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		qos_usage(stdout);
		return 0;
	}
	if (argc != 3 || strcmp(argv[1], "check")) {
		qos_usage(stderr);
		return 2;
	}
	rc = qos_load(argv[2], &p, &e);
	if (rc == -EINVAL || rc == -E2BIG) {
		fprintf(stderr, "%s:%u:%u: %s\n", argv[2], e.line, e.col, e.msg);
		return 2;
	}
	if (rc) {
		fprintf(stderr, "ibsmctl: %s: %s\n", argv[2], strerror(-rc));
		return 2;
	}
	summary(argv[2], &p);
	qos_policy_free(&p);
	return 0;
}
