/*
 * resolve.c - the parsed policy made usable: names checked unique, every
 * rule's level and port groups found, the qos-ulps rules on their SL-only
 * levels, the default level chosen; and the policy freed and dumped.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qos/values.h"

static int fail_at(struct qp *p, unsigned line, unsigned col,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail_at(struct qp *p, unsigned line, unsigned col,
		   const char *fmt, ...)
{
	va_list ap;

	p->err->line = line;
	p->err->col = col;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

long qos_level_find(const struct qos_policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_levels; i++)
		if (!p->levels[i].simple && !strcmp(p->levels[i].name, name))
			return (long)i;
	return -1;
}

/* The defined groups sorted by name (indexes), so that a file of
 * QOS_MAX_ITEMS names against QOS_MAX_GROUPS groups resolves in
 * n log n, and a repeated name is found next to its twin. */
static int by_name(const void *a, const void *b, void *arg)
{
	const struct qos_group *g = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = strcmp(g[i].name, g[j].name);

	return c ? c : (i > j) - (i < j);
}

static long group_find(const struct qos_policy *p, const size_t *idx,
		       size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(p->groups[idx[mid]].name, name);

		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && !strcmp(p->groups[idx[lo]].name, name))
		return (long)idx[lo];
	return -1;
}

/* The SL-only level of qos-ulps for `sl`, made on first use. */
static long simple_level(struct qp *p, unsigned sl)
{
	struct qos_policy *pol = p->pol;
	char name[32];
	struct qos_level *l;

	snprintf(name, sizeof(name), "SimpleQoSLevel_SL%u", sl);
	for (size_t i = 0; i < pol->n_levels; i++)
		if (pol->levels[i].simple && pol->levels[i].sl == (int)sl)
			return (long)i;
	l = qv_grow(pol->levels, pol->n_levels, sizeof(*l));
	if (!l)
		return -ENOMEM;
	pol->levels = l;
	l += pol->n_levels;
	memset(l, 0, sizeof(*l));
	l->name = strdup(name);
	if (!l->name)
		return -ENOMEM;
	l->sl = (int)sl;
	l->mtu_limit = l->rate_limit = l->packet_life = -1;
	l->simple = true;
	return (long)pol->n_levels++;
}

static int ends(struct qp *p, const size_t *idx, size_t n_idx,
		const struct qos_strs *names, size_t **v, size_t *n)
{
	for (size_t i = 0; i < names->n; i++) {
		long g = group_find(p->pol, idx, n_idx, names->v[i]);

		if (g < 0)
			return fail_at(p, names->line[i], names->col[i],
				       "expected a port-group defined in "
				       "port-groups, found '%s'", names->v[i]);
		size_t *nv = qv_grow(*v, *n, sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		nv[(*n)++] = (size_t)g;
	}
	return 0;
}

/* Group names and level names each used once; *idx gets the defined
 * groups sorted by name (the caller frees it). */
static int unique_names(struct qp *p, size_t **idx, size_t *n_idx)
{
	const struct qos_policy *pol = p->pol;
	size_t n = 0;

	*idx = malloc((pol->n_groups + 1) * sizeof(**idx));
	if (!*idx)
		return -ENOMEM;
	for (size_t i = 0; i < pol->n_groups; i++)
		if (!pol->groups[i].generated)
			(*idx)[n++] = i;
	*n_idx = n;
	qsort_r(*idx, n, sizeof(**idx), by_name, pol->groups);
	for (size_t k = 1; k < n; k++) {
		const struct qos_group *a = &pol->groups[(*idx)[k - 1]];
		const struct qos_group *b = &pol->groups[(*idx)[k]];

		if (!strcmp(a->name, b->name))
			return fail_at(p, b->line, b->col, "expected a "
				       "port-group name not used before, found "
				       "'%s' (also at line %u)", b->name,
				       a->line);
	}
	for (size_t i = 0; i < pol->n_levels; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(pol->levels[i].name, pol->levels[j].name))
				return fail_at(p, pol->levels[i].line,
					       pol->levels[i].col,
					       "expected a qos-level name not "
					       "used before, found '%s' (also "
					       "at line %u)", pol->levels[i].name,
					       pol->levels[j].line);
	return 0;
}

/* The qos-match-rules rules first, then the qos-ulps ones (OpenSM tries
 * the ulps only when no full rule matched), each kind in file order. */
static int ulps_last(struct qos_policy *pol)
{
	struct qos_rule *v;
	size_t k = 0;

	if (!pol->n_rules)
		return 0;
	v = malloc(pol->n_rules * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (int ulp = 0; ulp < 2; ulp++)
		for (size_t i = 0; i < pol->n_rules; i++)
			if (pol->rules[i].from_ulp == (bool)ulp)
				v[k++] = pol->rules[i];
	free(pol->rules);
	pol->rules = v;
	return 0;
}

static int resolve_rules(struct qp *p, const size_t *idx, size_t n_idx)
{
	struct qos_policy *pol = p->pol;
	long l;
	int rc;

	for (size_t i = 0; i < pol->n_rules; i++) {
		struct qos_rule *r = &pol->rules[i];

		if (r->from_ulp) {
			if ((l = simple_level(p, (unsigned)r->level)) < 0)
				return (int)l;
			r->level = (size_t)l;
			continue;
		}
		if ((l = qos_level_find(pol, r->level_name)) < 0)
			return fail_at(p, r->level_line, r->level_col,
				       "expected a qos-level defined in "
				       "qos-levels, found '%s'", r->level_name);
		r->level = (size_t)l;
		if ((rc = ends(p, idx, n_idx, &r->source, &r->src, &r->n_src)) ||
		    (rc = ends(p, idx, n_idx, &r->destination, &r->dst,
			       &r->n_dst)))
			return rc;
	}
	return 0;
}

int qp_resolve(struct qp *p)
{
	struct qos_policy *pol = p->pol;
	size_t *idx = NULL, n_idx = 0;
	long l;
	int rc;

	rc = unique_names(p, &idx, &n_idx);
	if (!rc)
		rc = ulps_last(pol);
	if (!rc)
		rc = resolve_rules(p, idx, n_idx);
	free(idx);
	if (rc)
		return rc;
	if ((l = qos_level_find(pol, "DEFAULT")) < 0 &&
	    pol->ulp_default_sl >= 0 &&
	    (l = simple_level(p, (unsigned)pol->ulp_default_sl)) < 0)
		return (int)l;
	if (l < 0) {
		p->at_eof = true;
		return qp_fail(p, "a qos-level named DEFAULT or a qos-ulps "
			       "default line");
	}
	pol->default_level = (size_t)l;
	return 0;
}

static void strs_free(struct qos_strs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	free(s->line);
	free(s->col);
}

void qos_policy_free(struct qos_policy *p)
{
	for (size_t i = 0; i < p->n_groups; i++) {
		struct qos_group *g = &p->groups[i];

		free(g->name);
		free(g->use);
		free(g->guids.v);
		free(g->pkeys.v);
		strs_free(&g->port_names);
		strs_free(&g->partitions);
	}
	for (size_t i = 0; i < p->n_levels; i++) {
		free(p->levels[i].name);
		free(p->levels[i].use);
		free(p->levels[i].path_bits.v);
		free(p->levels[i].pkeys.v);
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		struct qos_rule *r = &p->rules[i];

		free(r->use);
		free(r->level_name);
		free(r->qos_class.v);
		free(r->service_id.v);
		free(r->pkey.v);
		strs_free(&r->source);
		strs_free(&r->destination);
		free(r->src);
		free(r->dst);
	}
	for (size_t i = 0; i < p->n_vlarb; i++) {
		strs_free(&p->vlarb[i].groups);
		strs_free(&p->vlarb[i].across);
		free(p->vlarb[i].high);
		free(p->vlarb[i].low);
	}
	for (size_t i = 0; i < p->n_sl2vl; i++) {
		struct qos_sl2vl_scope *s = &p->sl2vl[i];

		strs_free(&s->groups);
		strs_free(&s->across);
		strs_free(&s->across_from);
		strs_free(&s->across_to);
		free(s->from.v);
		free(s->to.v);
	}
	free(p->groups);
	free(p->levels);
	free(p->rules);
	free(p->vlarb);
	free(p->sl2vl);
	memset(p, 0, sizeof(*p));
	p->ulp_default_sl = -1;
}
