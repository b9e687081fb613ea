/*
 * cmd_qos_out.c - the answers of `qos show` (sm/ctl/cmd_qos.c): the QoS in
 * force and a path's QoS as text for people or as one JSON document for
 * programs (the shape in ibsmctl(8)), from the plain structs of
 * sm/ctl/qos.h, so that unit tests print them without a daemon.
 */
#include "config.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "qos/qos.h"
#include "sm/ctl/ctl.h"
#include "sm/ctl/qos.h"

/* ------------------------------------------------------------- output */

/*
 * Output in lines under CTL_LINE_OUT: tokens are appended to the current
 * line; one that would make it too long starts a new line (after `cont`,
 * the continuation's indent).  JSON may break between any two tokens.
 */
#define QO_LINE	900

struct qo {
	struct ctl_answer *a;
	char	 buf[QO_LINE + 1];
	size_t	 n;
	const char *cont;
	bool	 json;
};

static void qo_flush(struct qo *o)
{
	if (o->n)
		ctl_line_add(o->a, "%s", o->buf);
	o->n = 0;
	o->buf[0] = '\0';
}

static void qo_put(struct qo *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void qo_put(struct qo *o, const char *fmt, ...)
{
	char tok[QO_LINE];
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(tok, sizeof(tok), fmt, ap);
	va_end(ap);
	if (w < 0)
		return;
	if ((size_t)w >= sizeof(tok))
		w = sizeof(tok) - 1;
	if (o->n && o->n + (size_t)w > QO_LINE) {
		qo_flush(o);
		o->n = (size_t)snprintf(o->buf, sizeof(o->buf), "%s",
					o->cont ? o->cont : "");
	}
	memcpy(o->buf + o->n, tok, (size_t)w);
	o->n += (size_t)w;
	o->buf[o->n] = '\0';
}

/* A JSON string of at most 128 bytes of `s` (longer ones are cut). */
static void qo_str(struct qo *o, const char *s)
{
	char buf[128 * 6 + 3];
	size_t n = 0;

	buf[n++] = '"';
	for (size_t i = 0; s && s[i] && i < 128; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			n += (size_t)sprintf(buf + n, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			n += (size_t)sprintf(buf + n, "\\u%04x", c);
		else
			buf[n++] = (char)c;
	}
	buf[n++] = '"';
	buf[n] = '\0';
	qo_put(o, "%s", s ? buf : "null");
}

/* -1 fields (not given): null in JSON, "-" in text. */
static void qo_opt(struct qo *o, int v)
{
	if (v >= 0)
		qo_put(o, "%d", v);
	else
		qo_put(o, "%s", o->json ? "null" : "-");
}

static void qo_ranges(struct qo *o, const struct qos_ranges *r, bool hex)
{
	if (o->json)
		qo_put(o, "[");
	for (size_t i = 0; i < r->n; i++) {
		const char *sep = i ? (o->json ? ", " : ",") : "";
		unsigned long long lo = r->v[i].lo, hi = r->v[i].hi;

		if (o->json && hex)
			qo_put(o, "%s[\"0x%llx\", \"0x%llx\"]", sep, lo, hi);
		else if (o->json)
			qo_put(o, "%s[%llu, %llu]", sep, lo, hi);
		else if (lo == hi)
			qo_put(o, hex ? "%s0x%llx" : "%s%llu", sep, lo);
		else
			qo_put(o, hex ? "%s0x%llx-0x%llx" : "%s%llu-%llu", sep,
			       lo, hi);
	}
	if (o->json)
		qo_put(o, "]");
}

const char *ctl_qos_mtu_name(int code)
{
	static const char *const m[] = { NULL, "256", "512", "1024", "2048",
					 "4096" };

	return code > 0 && code <= 5 ? m[code] : NULL;
}

const char *ctl_qos_rate_name(int code)
{
	static const char *const r[] = {
		NULL, NULL, "2.5", "10", "30", "5", "20", "40", "60", "80",
		"120", "14", "56", "112", "168", "25", "100", "200", "300",
		"28", "50", "400", "600", "800", "1200",
	};

	return code > 0 && code < (int)(sizeof(r) / sizeof(r[0])) ? r[code]
								   : NULL;
}

/* ---------------------------------------------------------- qos show */

static const char *const class_names[QOS_N_CLASSES] = {
	[QOS_BASE] = "base", [QOS_CA] = "ca", [QOS_SW0] = "sw0",
	[QOS_SWE] = "swe", [QOS_RTR] = "rtr",
};

/* The entries of a VL arbitration table up to its last non-empty one. */
static size_t vlarb_len(const struct qos_vlarb_entry *e)
{
	size_t n = QOS_VLARB_ENTRIES;

	while (n && !e[n - 1].vl && !e[n - 1].weight)
		n--;
	return n;
}

static void qo_vlarb(struct qo *o, const struct qos_vlarb_entry *e)
{
	size_t n = vlarb_len(e);

	if (o->json)
		qo_put(o, "[");
	for (size_t i = 0; i < n; i++)
		qo_put(o, o->json ? "%s{\"vl\": %u, \"weight\": %u}" : "%s%u:%u",
		       i ? (o->json ? ", " : ",") : "", e[i].vl, e[i].weight);
	if (o->json)
		qo_put(o, "]");
	else if (!n)
		qo_put(o, "-");
}

static void show_tables(struct qo *o, const struct qos_view *v)
{
	for (int c = QOS_CA; c < QOS_N_CLASSES; c++) {
		const struct qos_tables *t = &v->tables[c];

		if (o->json) {
			qo_put(o, "%s{\"class\": \"%s\", \"max_vls\": %u,"
			       " \"high_limit\": %u, \"vlarb_high\": ",
			       c == QOS_CA ? "" : ", ", class_names[c],
			       t->max_vls, t->high_limit);
			qo_vlarb(o, t->vlarb_high);
			qo_put(o, ", \"vlarb_low\": ");
			qo_vlarb(o, t->vlarb_low);
			qo_put(o, ", \"sl2vl\": [");
		} else {
			qo_put(o, "class %s: max_vls %u, high_limit %u",
			       class_names[c], t->max_vls, t->high_limit);
			qo_flush(o);
			qo_put(o, "  vlarb_high ");
			qo_vlarb(o, t->vlarb_high);
			qo_flush(o);
			qo_put(o, "  vlarb_low  ");
			qo_vlarb(o, t->vlarb_low);
			qo_flush(o);
			qo_put(o, "  sl2vl      ");
		}
		for (int sl = 0; sl < QOS_SL_N; sl++)
			qo_put(o, "%s%u", sl ? (o->json ? ", " : ",") : "",
			       t->sl2vl[sl]);
		qo_put(o, "%s", o->json ? "]}" : "");
		if (!o->json)
			qo_flush(o);
	}
}

static void fmt_time(char *buf, size_t size, time_t t, bool json)
{
	struct tm tm;

	if (!t || !gmtime_r(&t, &tm)) {
		snprintf(buf, size, "-");
		return;
	}
	strftime(buf, size, json ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%d %H:%M:%S UTC",
		 &tm);
}

static void policy_counts(const struct qos_policy *p, size_t *groups,
			  size_t *levels, size_t *rules, size_t *ulps)
{
	*groups = *levels = *rules = *ulps = 0;
	for (size_t i = 0; i < p->n_groups; i++)
		*groups += !p->groups[i].generated;
	for (size_t i = 0; i < p->n_levels; i++)
		*levels += !p->levels[i].simple;
	for (size_t i = 0; i < p->n_rules; i++)
		*(p->rules[i].from_ulp ? ulps : rules) += 1;
}

/* qos, the file, when it was loaded, the last error. */
static void show_head(struct qo *o, const struct qos_view *v)
{
	char at[40], err_at[40];
	size_t g = 0, l = 0, r = 0, u = 0;

	fmt_time(at, sizeof(at), v->loaded, o->json);
	fmt_time(err_at, sizeof(err_at), v->error_at, o->json);
	if (v->pol)
		policy_counts(v->pol, &g, &l, &r, &u);
	if (o->json) {
		qo_put(o, "{\"qos\": %s, \"policy_file\": ",
		       v->on ? "true" : "false");
		qo_str(o, v->file);
		if (v->pol)
			qo_put(o, ", \"policy\": {\"loaded\": \"%s\","
			       " \"port_groups\": %zu, \"levels\": %zu,"
			       " \"match_rules\": %zu, \"ulp_rules\": %zu}", at,
			       g, l, r, u);
		else
			qo_put(o, ", \"policy\": null");
		qo_put(o, ", \"last_error\": ");
		if (v->error) {
			qo_put(o, "{\"at\": \"%s\", \"message\": ", err_at);
			qo_str(o, v->error);
			qo_put(o, "}");
		} else {
			qo_put(o, "null");
		}
		qo_flush(o);
		return;
	}
	ctl_line_add(o->a, "QoS: %s", v->on ? "on (qos TRUE)" :
		     "off (qos FALSE): no table is programmed, no policy"
		     " applies");
	ctl_line_add(o->a, "policy file: %s", v->file ? v->file : "-");
	if (v->pol)
		ctl_line_add(o->a, "policy: loaded %s: %zu port groups, %zu"
			     " QoS levels, %zu match rules, %zu qos-ulps rules",
			     at, g, l, r, u);
	else
		ctl_line_add(o->a, "policy: none in force");
	if (v->error)
		ctl_line_add(o->a, "last load: %s failed: %s%s", err_at,
			     v->error, v->pol ? "; the policy loaded before"
			     " stays in force" : "");
}

static size_t name_width(const struct qos_policy *p, bool groups)
{
	size_t w = groups ? 5 : 5;
	size_t n = groups ? p->n_groups : p->n_levels;

	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(groups ? p->groups[i].name : p->levels[i].name);

		if (l > w)
			w = l;
	}
	return w > 40 ? 40 : w;
}

static void show_levels(struct qo *o, const struct qos_policy *p)
{
	int w = (int)name_width(p, false);

	if (!o->json) {
		ctl_line_add(o->a, "QoS levels:");
		ctl_line_add(o->a, "  %-*s  sl  mtu-limit  rate-limit"
			     "  packet-life  pkey / path-bits", w, "level");
	}
	for (size_t i = 0; i < p->n_levels; i++) {
		const struct qos_level *l = &p->levels[i];
		bool def = i == p->default_level;

		if (o->json) {
			qo_put(o, "%s{\"name\": ", i ? ", " : "");
			qo_str(o, l->name);
			qo_put(o, ", \"use\": ");
			qo_str(o, l->use);
			qo_put(o, ", \"sl\": ");
			qo_opt(o, l->sl);
			qo_put(o, ", \"mtu_limit\": ");
			qo_opt(o, l->mtu_limit);
			qo_put(o, ", \"rate_limit\": ");
			qo_opt(o, l->rate_limit);
			qo_put(o, ", \"packet_life\": ");
			qo_opt(o, l->packet_life);
			qo_put(o, ", \"pkey\": ");
			qo_ranges(o, &l->pkeys, true);
			qo_put(o, ", \"path_bits\": ");
			qo_ranges(o, &l->path_bits, false);
			qo_put(o, ", \"default\": %s, \"simple\": %s, \"line\": ",
			       def ? "true" : "false",
			       l->simple ? "true" : "false");
			qo_opt(o, l->simple ? -1 : (int)l->line);
			qo_put(o, "}");
			continue;
		}
		qo_put(o, "  %-*s  ", w, l->name);
		qo_opt(o, l->sl);
		qo_put(o, "%*s", l->sl >= 10 ? 2 : 3, "");
		qo_put(o, "%-9s  ", l->mtu_limit >= 0 ?
		       ctl_qos_mtu_name(l->mtu_limit) : "-");
		qo_put(o, "%-10s  ", l->rate_limit < 0 ? "-" :
		       ctl_qos_rate_name(l->rate_limit) ?
		       ctl_qos_rate_name(l->rate_limit) : "?");
		if (l->packet_life >= 0)
			qo_put(o, "%-11d  ", l->packet_life);
		else
			qo_put(o, "%-11s  ", "-");
		o->cont = "      ";
		if (l->pkeys.n)
			qo_ranges(o, &l->pkeys, true);
		else
			qo_put(o, "-");
		qo_put(o, " / ");
		if (l->path_bits.n)
			qo_ranges(o, &l->path_bits, false);
		else
			qo_put(o, "-");
		if (def)
			qo_put(o, "  (default)");
		if (l->use)
			qo_put(o, "  \"%.128s\"", l->use);
		qo_flush(o);
		o->cont = NULL;
	}
}

static void show_groups(struct qo *o, const struct qos_view *v)
{
	const struct qos_policy *p = v->pol;
	int w = (int)name_width(p, true);

	if (!o->json) {
		ctl_line_add(o->a, "port groups:");
		ctl_line_add(o->a, "  %-*s  ports  defined", w, "group");
	}
	for (size_t i = 0; i < p->n_groups; i++) {
		const struct qos_group *g = &p->groups[i];

		if (o->json) {
			qo_put(o, "%s{\"name\": ", i ? ", " : "");
			qo_str(o, g->name);
			qo_put(o, ", \"use\": ");
			qo_str(o, g->use);
			qo_put(o, ", \"members\": ");
			qo_opt(o, v->members ? (int)v->members[i] : -1);
			qo_put(o, ", \"generated\": %s, \"line\": %u}",
			       g->generated ? "true" : "false", g->line);
			continue;
		}
		if (v->members)
			ctl_line_add(o->a, "  %-*s  %-5zu  %s line %u%s%.128s%s",
				     w, g->name, v->members[i], g->generated ?
				     "qos-ulps" : "port-group", g->line,
				     g->use ? "  \"" : "", g->use ? g->use : "",
				     g->use ? "\"" : "");
		else
			ctl_line_add(o->a, "  %-*s  -      %s line %u", w,
				     g->name, g->generated ? "qos-ulps" :
				     "port-group", g->line);
	}
}

static void rule_groups(struct qo *o, const struct qos_policy *p,
			const size_t *idx, size_t n)
{
	if (o->json)
		qo_put(o, "[");
	for (size_t k = 0; k < n; k++) {
		if (o->json) {
			qo_put(o, "%s", k ? ", " : "");
			qo_str(o, p->groups[idx[k]].name);
		} else {
			qo_put(o, "%s%s", k ? "," : "", p->groups[idx[k]].name);
		}
	}
	if (o->json)
		qo_put(o, "]");
}

static void rule_text(struct qo *o, const struct qos_policy *p,
		      const struct qos_rule *r)
{
	const char *sep = "";

	if (r->qos_class.n) {
		qo_put(o, " qos-class ");
		qo_ranges(o, &r->qos_class, false);
		sep = ",";
	}
	if (r->n_src) {
		qo_put(o, "%s source ", sep);
		rule_groups(o, p, r->src, r->n_src);
		sep = ",";
	}
	if (r->n_dst) {
		qo_put(o, "%s destination ", sep);
		rule_groups(o, p, r->dst, r->n_dst);
		sep = ",";
	}
	if (r->service_id.n) {
		qo_put(o, "%s service-id ", sep);
		qo_ranges(o, &r->service_id, true);
		sep = ",";
	}
	if (r->pkey.n) {
		qo_put(o, "%s pkey ", sep);
		qo_ranges(o, &r->pkey, true);
		sep = ",";
	}
	if (!*sep)
		qo_put(o, " any path");
}

static void rule_json(struct qo *o, const struct qos_policy *p, size_t i)
{
	const struct qos_rule *r = &p->rules[i];

	qo_put(o, "%s{\"order\": %zu, \"kind\": \"%s\", \"line\": %u,"
	       " \"use\": ", i ? ", " : "", i + 1, r->from_ulp ? "qos-ulps" :
	       "match-rule", r->line);
	qo_str(o, r->use);
	qo_put(o, ", \"qos_class\": ");
	qo_ranges(o, &r->qos_class, false);
	qo_put(o, ", \"source\": ");
	rule_groups(o, p, r->src, r->n_src);
	qo_put(o, ", \"destination\": ");
	rule_groups(o, p, r->dst, r->n_dst);
	qo_put(o, ", \"service_id\": ");
	qo_ranges(o, &r->service_id, true);
	qo_put(o, ", \"pkey\": ");
	qo_ranges(o, &r->pkey, true);
	qo_put(o, ", \"level\": ");
	qo_str(o, p->levels[r->level].name);
	qo_put(o, ", \"sl\": ");
	qo_opt(o, p->levels[r->level].sl);
	qo_put(o, "}");
}

static void show_rules(struct qo *o, const struct qos_policy *p)
{
	const struct qos_level *d = &p->levels[p->default_level];

	if (!o->json)
		ctl_line_add(o->a, "rules, in precedence order (the first"
			     " that matches a PathRecord query applies):");
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct qos_rule *r = &p->rules[i];

		if (o->json) {
			rule_json(o, p, i);
			continue;
		}
		o->cont = "      ";
		qo_put(o, "  %-3zu %s line %u:", i + 1, r->from_ulp ?
		       "qos-ulps" : "match-rule", r->line);
		rule_text(o, p, r);
		qo_put(o, " -> level %s (sl ", p->levels[r->level].name);
		qo_opt(o, p->levels[r->level].sl);
		qo_put(o, ")");
		qo_flush(o);
		o->cont = NULL;
	}
	if (!o->json)
		ctl_line_add(o->a, "  -   otherwise -> level %s (sl %d)",
			     d->name, d->sl);
}

/* PortInfo:OperationalVLs codes (14.2.5.6) */
static const char *op_vls_name(unsigned code)
{
	static const char *const n[] = { "none", "VL0", "VL0-1", "VL0-3",
					 "VL0-7", "VL0-14" };

	return code < sizeof(n) / sizeof(n[0]) ? n[code] : "?";
}

int ctl_qos_show(struct ctl_answer *a, const struct qos_view *v, bool json)
{
	struct qo o = { .a = a, .json = json };

	show_head(&o, v);
	if (json) {
		qo_put(&o, ", \"max_op_vls\": %u, \"port_classes\": [",
		       v->max_op_vls);
		if (v->on)
			show_tables(&o, v);
		qo_put(&o, "]");
		qo_flush(&o);
	} else if (v->on) {
		ctl_line_add(a, "OperationalVLs: max_op_vls %u (%s) within each"
			     " link's VLCap; max_vls is checked, not used (as"
			     " OpenSM)", v->max_op_vls, op_vls_name(v->max_op_vls));
		ctl_line_add(a, "port class tables (qos_ca_*, qos_sw0_*,"
			     " qos_swe_*, qos_rtr_*, else qos_*):");
		show_tables(&o, v);
	}
	if (!v->pol) {
		if (json)
			ctl_line_add(a, ", \"levels\": [], \"port_groups\": [],"
				     " \"rules\": [], \"default_level\": null}");
		return 0;
	}
	qo_put(&o, "%s", json ? ", \"levels\": [" : "");
	show_levels(&o, v->pol);
	qo_put(&o, "%s", json ? "]" : "");
	qo_flush(&o);
	qo_put(&o, "%s", json ? ", \"port_groups\": [" : "");
	show_groups(&o, v);
	qo_put(&o, "%s", json ? "]" : "");
	qo_flush(&o);
	qo_put(&o, "%s", json ? ", \"rules\": [" : "");
	show_rules(&o, v->pol);
	if (json) {
		qo_put(&o, "], \"default_level\": ");
		qo_str(&o, v->pol->levels[v->pol->default_level].name);
		qo_put(&o, "}");
	}
	qo_flush(&o);
	return 0;
}

/* ---------------------------------------------------- qos show PATH */

static void path_end(struct qo *o, const char *key, const struct qos_path_end *e)
{
	if (o->json) {
		qo_put(o, "\"%s\": {\"guid\": \"0x%016" PRIx64 "\", \"lid\": %u,"
		       " \"port\": %u, \"node\": ", key, e->guid, e->lid, e->port);
		qo_str(o, e->desc);
		qo_put(o, "}, ");
		return;
	}
	qo_put(o, "%-12s 0x%016" PRIx64 " LID %u port %u", key, e->guid,
	       e->lid, e->port);
	if (e->desc)
		qo_put(o, " \"%.64s\"", e->desc);
	qo_flush(o);
}

static void path_query(struct qo *o, const struct ctl_qos_req *q)
{
	if (o->json) {
		if (q->has_sid)
			qo_put(o, "\"service_id\": \"0x%" PRIx64 "\", ", q->sid);
		else
			qo_put(o, "\"service_id\": null, ");
		if (q->has_pkey)
			qo_put(o, "\"pkey\": \"0x%04x\", ", q->pkey);
		else
			qo_put(o, "\"pkey\": null, ");
		qo_put(o, "\"qos_class\": ");
		qo_opt(o, q->has_class ? q->qos_class : -1);
		qo_put(o, ", ");
		return;
	}
	qo_put(o, "query:       service-id ");
	qo_put(o, q->has_sid ? "0x%" PRIx64 : "-", q->sid);
	qo_put(o, q->has_pkey ? ", pkey 0x%04x" : ", pkey -", q->pkey);
	qo_put(o, ", qos-class ");
	qo_opt(o, q->has_class ? q->qos_class : -1);
	qo_flush(o);
}

static void path_policy(struct qo *o, const struct qos_view *v,
			const struct qos_path_view *p)
{
	const struct qos_policy *pol = v->pol;
	const struct qos_rule *r = pol && p->rule >= 0 ? &pol->rules[p->rule]
						       : NULL;
	const struct qos_level *l = pol && p->level >= 0 ?
				    &pol->levels[p->level] : NULL;

	if (o->json) {
		if (r)
			qo_put(o, "\"rule\": {\"order\": %ld, \"kind\": \"%s\","
			       " \"line\": %u}, ", p->rule + 1, r->from_ulp ?
			       "qos-ulps" : "match-rule", r->line);
		else
			qo_put(o, "\"rule\": null, ");
		qo_put(o, "\"level\": ");
		qo_str(o, l ? l->name : NULL);
		qo_put(o, ", \"level_sl\": ");
		qo_opt(o, l ? l->sl : -1);
		qo_put(o, ", ");
		return;
	}
	if (!v->on || !pol) {
		ctl_line_add(o->a, "rule:        none (%s)", !v->on ?
			     "qos FALSE" : "no policy in force");
		return;
	}
	if (r) {
		o->cont = "             ";
		qo_put(o, "rule:        %ld, %s line %u:", p->rule + 1,
		       r->from_ulp ? "qos-ulps" : "match-rule", r->line);
		rule_text(o, pol, r);
		qo_flush(o);
		o->cont = NULL;
	} else {
		ctl_line_add(o->a, "rule:        none matches: the default"
			     " level");
	}
	qo_put(o, "level:       %s (sl ", l->name);
	qo_opt(o, l->sl);
	qo_put(o, ", mtu-limit %s, rate-limit %s, packet-life ",
	       l->mtu_limit >= 0 ? ctl_qos_mtu_name(l->mtu_limit) : "-",
	       l->rate_limit < 0 ? "-" : ctl_qos_rate_name(l->rate_limit) ?
	       ctl_qos_rate_name(l->rate_limit) : "?");
	qo_opt(o, l->packet_life);
	qo_put(o, ")");
	qo_flush(o);
}

static void path_record(struct qo *o, const struct qos_path_view *p)
{
	unsigned sl = be16toh(p->pr.qos_class_sl) & 0xf;
	unsigned mtu = p->pr.mtu & 0x3f, rate = p->pr.rate & 0x3f;
	unsigned life = p->pr.pkt_life & 0x3f, pkey = be16toh(p->pr.pkey);
	const char *mn = ctl_qos_mtu_name((int)mtu);
	const char *rn = ctl_qos_rate_name((int)rate);

	if (o->json) {
		if (p->status)
			qo_put(o, "\"path_record\": null, \"sa_status\": %d}",
			       p->status < 0 ? 0 : p->status);
		else
			qo_put(o, "\"path_record\": {\"sl\": %u, \"mtu\": %u,"
			       " \"mtu_bytes\": %s, \"rate\": %u, \"rate_gbps\":"
			       " %s, \"packet_life\": %u, \"pkey\": \"0x%04x\"}}",
			       sl, mtu, mn ? mn : "null", rate, rn ? rn : "null",
			       life, pkey);
		qo_flush(o);
		return;
	}
	if (p->status < 0)
		ctl_line_add(o->a, "PathRecord:  none: the SA answers no record"
			     " for this query (no shared partition, or no"
			     " route)");
	else if (p->status)
		ctl_line_add(o->a, "PathRecord:  none: the SA answers status"
			     " 0x%04x", p->status);
	else
		ctl_line_add(o->a, "PathRecord:  SL %u, MTU %u (%s), rate %u"
			     " (%s Gb/s), packet life %u, pkey 0x%04x", sl, mtu,
			     mn ? mn : "?", rate, rn ? rn : "?", life, pkey);
}

int ctl_qos_path(struct ctl_answer *a, const struct qos_view *v,
		 const struct qos_path_view *p, bool json)
{
	struct qo o = { .a = a, .json = json };

	if (json)
		qo_put(&o, "{\"qos\": %s, ", v->on ? "true" : "false");
	path_end(&o, json ? "src" : "source:", &p->src);
	path_end(&o, json ? "dst" : "destination:", &p->dst);
	path_query(&o, p->q);
	path_policy(&o, v, p);
	path_record(&o, p);
	return 0;
}

