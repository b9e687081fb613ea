/*
 * dump.c - the resolved policy as stable text: one line per item, the
 * golden tests compare it and ibsmctl prints it.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "qos/qos.h"

static void ranges(FILE *f, const char *key, const struct qos_ranges *r)
{
	if (!r->n)
		return;
	fprintf(f, "  %s", key);
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].lo == r->v[i].hi)
			fprintf(f, " 0x%llx", (unsigned long long)r->v[i].lo);
		else
			fprintf(f, " 0x%llx-0x%llx",
				(unsigned long long)r->v[i].lo,
				(unsigned long long)r->v[i].hi);
	fputc('\n', f);
}

static void strs(FILE *f, const char *key, const struct qos_strs *s)
{
	if (!s->n)
		return;
	fprintf(f, "  %s", key);
	for (size_t i = 0; i < s->n; i++)
		fprintf(f, " \"%s\"", s->v[i]);
	fputc('\n', f);
}

static void group(FILE *f, const struct qos_group *g)
{
	static const char *const nt[] = { "CA", "SWITCH", "ROUTER", "SELF",
					  "ALL" };

	fprintf(f, "port-group \"%s\"%s line %u\n", g->name,
		g->generated ? " generated" : "", g->line);
	if (g->use)
		fprintf(f, "  use \"%s\"\n", g->use);
	ranges(f, "port-guid", &g->guids);
	strs(f, "port-name", &g->port_names);
	strs(f, "partition", &g->partitions);
	ranges(f, "pkey", &g->pkeys);
	if (g->node_types) {
		fprintf(f, "  node-type");
		for (unsigned i = 0; i < 5; i++)
			if (g->node_types & (1u << i))
				fprintf(f, " %s", nt[i]);
		fputc('\n', f);
	}
}

static void level(FILE *f, const struct qos_level *l)
{
	fprintf(f, "qos-level \"%s\"%s", l->name, l->simple ? " simple" : "");
	if (!l->simple)
		fprintf(f, " line %u", l->line);
	fputc('\n', f);
	if (l->use)
		fprintf(f, "  use \"%s\"\n", l->use);
	if (l->sl >= 0)
		fprintf(f, "  sl %d\n", l->sl);
	if (l->mtu_limit >= 0)
		fprintf(f, "  mtu-limit %d\n", l->mtu_limit);
	if (l->rate_limit >= 0)
		fprintf(f, "  rate-limit %d\n", l->rate_limit);
	if (l->packet_life >= 0)
		fprintf(f, "  packet-life %d\n", l->packet_life);
	ranges(f, "path-bits", &l->path_bits);
	ranges(f, "pkey", &l->pkeys);
}

static void rule(FILE *f, const struct qos_policy *p, size_t i)
{
	const struct qos_rule *r = &p->rules[i];

	fprintf(f, "rule %zu%s line %u level \"%s\"\n", i + 1,
		r->from_ulp ? " qos-ulps" : "", r->line,
		p->levels[r->level].name);
	if (r->use)
		fprintf(f, "  use \"%s\"\n", r->use);
	ranges(f, "qos-class", &r->qos_class);
	for (size_t k = 0; k < r->n_src; k++)
		fprintf(f, "  source \"%s\"\n", p->groups[r->src[k]].name);
	for (size_t k = 0; k < r->n_dst; k++)
		fprintf(f, "  destination \"%s\"\n", p->groups[r->dst[k]].name);
	ranges(f, "service-id", &r->service_id);
	ranges(f, "pkey", &r->pkey);
}

static void setup(FILE *f, const struct qos_policy *p)
{
	for (size_t i = 0; i < p->n_vlarb; i++) {
		const struct qos_vlarb_scope *s = &p->vlarb[i];

		fprintf(f, "vlarb-scope line %u\n", s->line);
		strs(f, "group", &s->groups);
		strs(f, "across", &s->across);
		for (int h = 0; h < 2; h++) {
			size_t n = h ? s->n_low : s->n_high;
			const struct qos_vl_weight *v = h ? s->low : s->high;

			if (!n)
				continue;
			fprintf(f, "  vlarb-%s", h ? "low" : "high");
			for (size_t k = 0; k < n; k++)
				fprintf(f, " %u:%u", v[k].vl, v[k].weight);
			fputc('\n', f);
		}
		if (s->high_limit >= 0)
			fprintf(f, "  vl-high-limit %d\n", s->high_limit);
	}
	for (size_t i = 0; i < p->n_sl2vl; i++) {
		const struct qos_sl2vl_scope *s = &p->sl2vl[i];

		fprintf(f, "sl2vl-scope line %u\n", s->line);
		strs(f, "group", &s->groups);
		strs(f, "across", &s->across);
		strs(f, "across-from", &s->across_from);
		strs(f, "across-to", &s->across_to);
		if (s->from_all)
			fprintf(f, "  from *\n");
		ranges(f, "from", &s->from);
		if (s->to_all)
			fprintf(f, "  to *\n");
		ranges(f, "to", &s->to);
		if (s->has_table) {
			fprintf(f, "  sl2vl-table");
			for (int k = 0; k < 16; k++)
				fprintf(f, "%s%u", k ? "," : " ", s->table[k]);
			fputc('\n', f);
		}
	}
}

char *qos_dump(const struct qos_policy *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < p->n_groups; i++)
		group(f, &p->groups[i]);
	setup(f, p);
	for (size_t i = 0; i < p->n_levels; i++)
		level(f, &p->levels[i]);
	for (size_t i = 0; i < p->n_rules; i++)
		rule(f, p, i);
	fprintf(f, "default level \"%s\"\n", p->levels[p->default_level].name);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
