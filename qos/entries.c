/*
 * entries.c - the entries of each block: port-group, qos-level,
 * qos-match-rule, vlarb-scope, sl2vl-scope and the qos-ulps lines.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "qos/values.h"

/* Grow an array of `size`-byte items by one (bounded by `max`). */
static void *grow(struct qp *p, void **v, size_t *n, size_t size, size_t max,
		  const char *what, int *rc)
{
	char *nv;

	if (*n >= max) {
		*rc = qp_fail(p, "at most %zu %s", max, what);
		return NULL;
	}
	nv = qv_grow(*v, *n, size);
	if (!nv) {
		*rc = -ENOMEM;
		return NULL;
	}
	*v = nv;
	memset(nv + *n * size, 0, size);
	*rc = 0;
	return nv + (*n)++ * size;
}

/* ---- port-group ---- */

int qp_group_open(struct qp *p)
{
	struct qos_policy *pol = p->pol;
	struct qos_group *g;
	int rc;

	g = grow(p, (void **)&pol->groups, &pol->n_groups, sizeof(*g),
		 QOS_MAX_GROUPS, "port groups", &rc);
	if (!g)
		return rc;
	g->line = p->blk_line;
	g->col = p->blk_col;
	return 0;
}

int qp_group_close(struct qp *p)
{
	struct qos_group *g = &p->pol->groups[p->pol->n_groups - 1];

	if (!g->name) {
		p->c = p->ls;
		qp_ws(p);
		return qp_fail(p, "name: in the port-group of line %u", g->line);
	}
	return 0;
}

static int node_types(struct qp *p, unsigned *bits)
{
	static const struct { const char *n; unsigned bit; } t[] = {
		{ "CA", QOS_NT_CA }, { "SWITCH", QOS_NT_SWITCH },
		{ "ROUTER", QOS_NT_ROUTER }, { "SELF", QOS_NT_SELF },
		{ "ALL", QOS_NT_ALL },
	};
	char w[16];
	int rc;

	if ((rc = qv_key(p, "node-type")))
		return rc;
	for (;;) {
		size_t n = qp_word(p, w, sizeof(w)), i;

		for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
			if (n && !strcasecmp(w, t[i].n))
				break;
		if (i == sizeof(t) / sizeof(t[0]))
			return qp_fail(p, "CA, SWITCH, ROUTER, SELF or ALL");
		*bits |= t[i].bit;
		p->c += n;
		qp_ws(p);
		if (p->c < p->le && p->text[p->c] == ',') {
			p->c++;
			continue;
		}
		return qp_expect_eol(p);
	}
}

int qp_group_entry(struct qp *p, const char *key)
{
	struct qos_group *g = &p->pol->groups[p->pol->n_groups - 1];

	if (!strcmp(key, "name"))
		return qv_text(p, key, &g->name);
	if (!strcmp(key, "use"))
		return qv_text(p, key, &g->use);
	if (!strcmp(key, "port-guid"))
		return qv_ranges(p, key, UINT64_MAX, &g->guids);
	if (!strcmp(key, "port-name"))
		return qv_strs(p, key, &g->port_names);
	if (!strcmp(key, "partition"))
		return qv_strs(p, key, &g->partitions);
	if (!strcmp(key, "pkey"))
		return qv_ranges(p, key, 0xffff, &g->pkeys);
	if (!strcmp(key, "node-type"))
		return node_types(p, &g->node_types);
	return 1;
}

/* ---- qos-level ---- */

static struct qos_level *new_level(struct qp *p, int *rc)
{
	struct qos_policy *pol = p->pol;
	struct qos_level *l;

	l = grow(p, (void **)&pol->levels, &pol->n_levels, sizeof(*l),
		 QOS_MAX_LEVELS, "QoS levels", rc);
	if (l)
		l->sl = l->mtu_limit = l->rate_limit = l->packet_life = -1;
	return l;
}

int qp_level_open(struct qp *p)
{
	struct qos_level *l;
	int rc;

	if (!(l = new_level(p, &rc)))
		return rc;
	l->line = p->blk_line;
	l->col = p->blk_col;
	return 0;
}

int qp_level_close(struct qp *p)
{
	struct qos_level *l = &p->pol->levels[p->pol->n_levels - 1];

	if (!l->name) {
		p->c = p->ls;
		qp_ws(p);
		return qp_fail(p, "name: in the qos-level of line %u", l->line);
	}
	if (l->sl < 0) {	/* OpenSM requires it too */
		p->c = p->ls;
		qp_ws(p);
		return qp_fail(p, "sl: in the qos-level of line %u", l->line);
	}
	return 0;
}

int qp_level_entry(struct qp *p, const char *key)
{
	struct qos_level *l = &p->pol->levels[p->pol->n_levels - 1];

	if (!strcmp(key, "name"))
		return qv_text(p, key, &l->name);
	if (!strcmp(key, "use"))
		return qv_text(p, key, &l->use);
	if (!strcmp(key, "sl"))
		return qv_single(p, key, 0, 15, &l->sl);
	/* MTU codes 1 (256) to 5 (4096); rate codes 2 (2.5 Gb/s) and up
	 * as PathRecord encodes them; PacketLifeTime is 6 bits */
	if (!strcmp(key, "mtu-limit"))
		return qv_single(p, key, 1, 5, &l->mtu_limit);
	if (!strcmp(key, "rate-limit"))
		return qv_single(p, key, 2, 24, &l->rate_limit);
	if (!strcmp(key, "packet-life"))
		return qv_single(p, key, 0, 63, &l->packet_life);
	if (!strcmp(key, "path-bits"))
		return qv_ranges(p, key, 127, &l->path_bits);
	if (!strcmp(key, "pkey"))
		return qv_ranges(p, key, 0xffff, &l->pkeys);
	return 1;
}

/* ---- qos-match-rule ---- */

static struct qos_rule *new_rule(struct qp *p, int *rc)
{
	struct qos_policy *pol = p->pol;

	return grow(p, (void **)&pol->rules, &pol->n_rules,
		    sizeof(struct qos_rule), QOS_MAX_RULES, "match rules", rc);
}

int qp_rule_open(struct qp *p)
{
	struct qos_rule *r;
	int rc;

	if (!(r = new_rule(p, &rc)))
		return rc;
	r->line = p->blk_line;
	r->col = p->blk_col;
	return 0;
}

int qp_rule_close(struct qp *p)
{
	struct qos_rule *r = &p->pol->rules[p->pol->n_rules - 1];

	if (!r->level_name) {
		p->c = p->ls;
		qp_ws(p);
		return qp_fail(p, "qos-level-name: in the qos-match-rule of "
			       "line %u", r->line);
	}
	return 0;
}

int qp_rule_entry(struct qp *p, const char *key)
{
	struct qos_rule *r = &p->pol->rules[p->pol->n_rules - 1];

	if (!strcmp(key, "use"))
		return qv_text(p, key, &r->use);
	if (!strcmp(key, "qos-class"))
		return qv_ranges(p, key, 0xfff, &r->qos_class);
	if (!strcmp(key, "source"))
		return qv_strs(p, key, &r->source);
	if (!strcmp(key, "destination"))
		return qv_strs(p, key, &r->destination);
	if (!strcmp(key, "service-id"))
		return qv_ranges(p, key, UINT64_MAX, &r->service_id);
	if (!strcmp(key, "pkey"))
		return qv_ranges(p, key, 0xffff, &r->pkey);
	if (!strcmp(key, "qos-level-name")) {
		int rc;

		if (r->level_name)
			return qp_fail(p, "one qos-level-name: in this block");
		if ((rc = qv_key(p, key)))
			return rc;
		r->level_line = p->lineno;
		r->level_col = (unsigned)(p->c - p->ls) + 1;
		return qv_text_value(p, &r->level_name);
	}
	return 1;
}

/* ---- qos-setup scopes ---- */

int qp_vlarb_open(struct qp *p)
{
	struct qos_policy *pol = p->pol;
	struct qos_vlarb_scope *s;
	int rc;

	s = grow(p, (void **)&pol->vlarb, &pol->n_vlarb, sizeof(*s),
		 QOS_MAX_SCOPES, "vlarb scopes", &rc);
	if (!s)
		return rc;
	s->high_limit = -1;
	s->line = p->blk_line;
	return 0;
}

int qp_vlarb_entry(struct qp *p, const char *key)
{
	struct qos_vlarb_scope *s = &p->pol->vlarb[p->pol->n_vlarb - 1];

	if (!strcmp(key, "group"))
		return qv_strs(p, key, &s->groups);
	if (!strcmp(key, "across"))
		return qv_strs(p, key, &s->across);
	if (!strcmp(key, "vlarb-high"))
		return qv_vlw(p, key, &s->high, &s->n_high);
	if (!strcmp(key, "vlarb-low"))
		return qv_vlw(p, key, &s->low, &s->n_low);
	if (!strcmp(key, "vl-high-limit"))
		return qv_single(p, key, 0, 255, &s->high_limit);
	return 1;
}

int qp_sl2vl_open(struct qp *p)
{
	struct qos_policy *pol = p->pol;
	struct qos_sl2vl_scope *s;
	int rc;

	s = grow(p, (void **)&pol->sl2vl, &pol->n_sl2vl, sizeof(*s),
		 QOS_MAX_SCOPES, "sl2vl scopes", &rc);
	if (!s)
		return rc;
	s->line = p->blk_line;
	return 0;
}

static int ports(struct qp *p, const char *key, struct qos_ranges *r,
		 bool *all)
{
	int rc = qv_key(p, key);

	if (rc)
		return rc;
	if (p->c < p->le && p->text[p->c] == '*') {
		p->c++;
		*all = true;
		return qp_expect_eol(p);
	}
	return qv_ranges_to(p, 254, false, r);
}

static int sl2vl_table(struct qp *p, struct qos_sl2vl_scope *s)
{
	uint64_t v;
	int rc;

	if (s->has_table)
		return qp_fail(p, "one sl2vl-table: in this block");
	if ((rc = qv_key(p, "sl2vl-table")))
		return rc;
	for (unsigned i = 0; i < 16; i++) {
		if (i) {
			qp_ws(p);
			if (p->c >= p->le || p->text[p->c] != ',')
				return qp_fail(p, "',' and 16 VLs in all");
			p->c++;
		}
		if ((rc = qv_num(p, 15, &v)))
			return rc;
		s->table[i] = (uint8_t)v;
	}
	s->has_table = true;
	return qp_expect_eol(p);
}

int qp_sl2vl_entry(struct qp *p, const char *key)
{
	struct qos_sl2vl_scope *s = &p->pol->sl2vl[p->pol->n_sl2vl - 1];

	if (!strcmp(key, "group"))
		return qv_strs(p, key, &s->groups);
	if (!strcmp(key, "across"))
		return qv_strs(p, key, &s->across);
	if (!strcmp(key, "across-from"))
		return qv_strs(p, key, &s->across_from);
	if (!strcmp(key, "across-to"))
		return qv_strs(p, key, &s->across_to);
	if (!strcmp(key, "from"))
		return ports(p, key, &s->from, &s->from_all);
	if (!strcmp(key, "to"))
		return ports(p, key, &s->to, &s->to_all);
	if (!strcmp(key, "sl2vl-table"))
		return sl2vl_table(p, s);
	return 1;
}
