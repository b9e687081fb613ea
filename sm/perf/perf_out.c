/*
 * perf_out.c - the counters as the control socket's `counters` command
 * shows them and as event_db_dump_file holds them (perf.h).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sm/ctl/ctl.h"
#include "sm/perf/perf.h"
#include "sm/sm.h"

/* Which ports a request names. */
struct sel {
	bool     all;
	uint64_t guid;		/* a node GUID ... */
	uint16_t lid;		/* ... or a LID ... */
	const char *desc;	/* ... or a node description */
	int      port;		/* -1: every port */
};

static bool all_digits(const char *s, size_t n)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* TARGET: NODE|GUID|LID, optionally ":PORT".  0 or -EINVAL. */
static int parse_target(const char *t, struct sel *s, char *desc, size_t dlen)
{
	const char *colon = strrchr(t, ':');
	size_t n = strlen(t);
	char *end;

	memset(s, 0, sizeof(*s));
	s->port = -1;
	if (!t[0]) {
		s->all = true;
		return 0;
	}
	if (colon && all_digits(colon + 1, strlen(colon + 1))) {
		unsigned long p = strtoul(colon + 1, NULL, 10);

		if (p > 254)
			return -EINVAL;
		s->port = (int)p;
		n = (size_t)(colon - t);
	}
	if (!n || n >= dlen)
		return -EINVAL;
	memcpy(desc, t, n);
	desc[n] = 0;
	if (n > 2 && desc[0] == '0' && (desc[1] == 'x' || desc[1] == 'X')) {
		errno = 0;
		s->guid = strtoull(desc + 2, &end, 16);
		if (!*end && !errno && s->guid)
			return 0;
	}
	s->guid = 0;
	if (all_digits(desc, n)) {
		unsigned long l = strtoul(desc, NULL, 10);

		if (!l || l >= 0xc000)
			return -EINVAL;
		s->lid = (uint16_t)l;
		return 0;
	}
	s->guid = 0;
	s->desc = desc;
	return 0;
}

static const struct fab_node *model_node(const struct sm *sm, uint64_t guid)
{
	int32_t id = fabric_find(&sm->fabric, guid);

	return id == FAB_NONE ? NULL : &sm->fabric.nodes[id];
}

/* A GUID that is no node's may be a port's: that node and port. */
static void port_guid_to_node(const struct sm *sm, struct sel *s)
{
	const struct fabric *f = &sm->fabric;

	if (!s->guid || fabric_find(f, s->guid) != FAB_NONE)
		return;
	for (size_t i = 0; i < f->n_nodes; i++)
		for (unsigned p = 1; p <= f->nodes[i].num_ports; p++)
			if (f->nodes[i].ports[p].guid == s->guid &&
			    f->nodes[i].type != NODE_TYPE_SWITCH) {
				s->guid = f->nodes[i].guid;
				if (s->port < 0)
					s->port = (int)p;
				return;
			}
}

/* The whole description, or its first word ("node01" of "node01 HCA-1"). */
static bool desc_matches(const char *desc, const char *want)
{
	size_t n = strlen(want);

	return !strcmp(desc, want) ||
	       (!strncmp(desc, want, n) && (desc[n] == ' ' || desc[n] == '\t'));
}

static bool selected(const struct sm *sm, const struct sel *s,
		     const struct pc_port *p)
{
	const struct fab_node *n;

	if (s->port >= 0 && p->port != s->port)
		return false;
	if (s->all)
		return true;
	if (s->guid)
		return p->node_guid == s->guid;
	if (s->lid) {
		n = model_node(sm, p->node_guid);
		if (!n)
			return p->lid == s->lid;
		if (n->type == NODE_TYPE_SWITCH)
			return n->ports[0].lid == s->lid;
		/* a CA's LID names its port, unless a port is given */
		return s->port >= 0 ? fabric_node_lid(n) == s->lid ||
				      p->lid == s->lid : p->lid == s->lid;
	}
	n = model_node(sm, p->node_guid);
	return n && n->has_desc && desc_matches(n->desc, s->desc);
}

static int port_cmp(const void *a, const void *b)
{
	const struct pc_port *x = *(const struct pc_port *const *)a;
	const struct pc_port *y = *(const struct pc_port *const *)b;

	if (x->node_guid != y->node_guid)
		return x->node_guid < y->node_guid ? -1 : 1;
	return (int)x->port - (int)y->port;
}

static bool has_errors(const struct pc_port *p)
{
	for (int i = 0; i < PC_N_ERRORS; i++)
		if (p->total[i])
			return true;
	return false;
}

/* A JSON string's content: quotes, backslashes and control bytes escaped. */
static size_t json_str(char *out, size_t len, const char *s)
{
	size_t o = 0;

	for (; *s && o + 7 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			o += (size_t)snprintf(out + o, len - o, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(out + o, len - o, "\\u%04x", c);
		else
			out[o++] = (char)c;
	}
	out[o < len ? o : len - 1] = 0;
	return o;
}

struct ends {
	char desc[140], peer_desc[140];
	uint64_t peer_guid;
	int peer_port;		/* -1: not linked */
};

static void port_ends(const struct sm *sm, const struct pc_port *p,
		      struct ends *e)
{
	const struct fab_node *n = model_node(sm, p->node_guid);

	e->desc[0] = e->peer_desc[0] = 0;
	e->peer_guid = 0;
	e->peer_port = -1;
	if (!n)
		return;
	json_str(e->desc, sizeof(e->desc), fab_node_label(n));
	if (p->port > n->num_ports || n->ports[p->port].peer_node == FAB_NONE)
		return;
	const struct fab_node *pn = &sm->fabric.nodes[n->ports[p->port].peer_node];
	e->peer_guid = pn->guid;
	e->peer_port = n->ports[p->port].peer_port;
	json_str(e->peer_desc, sizeof(e->peer_desc), fab_node_label(pn));
}

#define LINE_MAX_LEN	1000	/* under the socket's line length */

/* One port as JSON, a few lines: its identity, then a counter a line
 * (lines stay short; the whole is one object).  Returns the bytes. */
static size_t json_port(struct ctl_answer *a, const struct sm *sm,
			const struct pc_port *p, bool errors, bool comma)
{
	struct ends e;
	char b[LINE_MAX_LEN];
	size_t o, bytes;
	int last = errors ? PC_N_ERRORS : PC_N;

	port_ends(sm, p, &e);
	o = (size_t)snprintf(b, sizeof(b), "%s{\"guid\":\"0x%016" PRIx64
			     "\",\"port\":%u,\"lid\":%u,\"desc\":\"%s\",",
			     comma ? "," : "", p->node_guid, p->port, p->lid,
			     e.desc);
	if (e.peer_port >= 0 && o < sizeof(b))
		o += (size_t)snprintf(b + o, sizeof(b) - o, "\"peer\":{\"guid\":"
				      "\"0x%016" PRIx64 "\",\"port\":%d,"
				      "\"desc\":\"%s\"},", e.peer_guid,
				      e.peer_port, e.peer_desc);
	ctl_line_add(a, "%s", b);
	bytes = o;
	o = (size_t)snprintf(b, sizeof(b), "\"reads\":%u,\"misses\":%u,"
			     "\"ext_clears\":%u,\"sm_clears\":%u,"
			     "\"unresponsive\":%s,\"last_read\":%.3f,"
			     "\"interval\":%.3f,\"counters\":{",
			     p->reads, p->misses, p->ext_clears, p->sm_clears,
			     perf_node_unresponsive(sm->perf, p->node_guid) ?
			     "true" : "false", p->last_read,
			     p->prev_read ? p->last_read - p->prev_read : 0.0);
	ctl_line_add(a, "%s", b);
	bytes += o;
	bool first = true;
	for (int i = 0; i < last; i++) {
		if (!p->seen[i])
			continue;
		o = (size_t)snprintf(b, sizeof(b), "%s\"%s\":{\"total\":%" PRIu64
				     ",\"delta\":%" PRIu64 ",\"value\":%" PRIu64
				     "}", first ? "" : ",", pc_desc[i].name,
				     p->total[i], p->delta[i], p->raw[i]);
		ctl_line_add(a, "%s", b);
		bytes += o;
		first = false;
	}
	ctl_line_add(a, "}}");
	return bytes;
}

static void text_port(struct ctl_answer *a, const struct sm *sm,
		      const struct pc_port *p, bool errors)
{
	struct ends e;
	int last = errors ? PC_N_ERRORS : PC_N;

	port_ends(sm, p, &e);
	if (e.peer_port >= 0)
		ctl_line_add(a, "\"%s\" 0x%016" PRIx64 " port %u lid %u, linked"
			     " to \"%s\" 0x%016" PRIx64 " port %d: reads %u,"
			     " cleared by others %u%s", e.desc, p->node_guid,
			     p->port, p->lid, e.peer_desc, e.peer_guid,
			     e.peer_port, p->reads, p->ext_clears,
			     perf_node_unresponsive(sm->perf, p->node_guid) ?
			     ", unresponsive" : "");
	else
		ctl_line_add(a, "\"%s\" 0x%016" PRIx64 " port %u lid %u: reads"
			     " %u, cleared by others %u%s", e.desc,
			     p->node_guid, p->port, p->lid, p->reads,
			     p->ext_clears,
			     perf_node_unresponsive(sm->perf, p->node_guid) ?
			     ", unresponsive" : "");
	for (int i = 0; i < last; i++) {
		if (!p->seen[i] || (errors && !p->total[i]))
			continue;
		ctl_line_add(a, "    %-30s %20" PRIu64 " %+21" PRId64 "",
			     pc_desc[i].name, p->total[i], (int64_t)p->delta[i]);
	}
}

/* The ports `s` names, sorted; NULL with *n = 0 when none or no memory. */
static const struct pc_port **pick(const struct sm *sm, const struct sel *s,
				   bool errors, size_t *n)
{
	const struct pc_store *st = perf_store(sm->perf);
	const struct pc_port **v, *p;
	size_t it = 0, k = 0;

	*n = 0;
	v = malloc((pc_store_count(st) + 1) * sizeof(*v));
	if (!v)
		return NULL;
	while ((p = pc_next(st, &it)))
		if (selected(sm, s, p) && (!errors || has_errors(p)))
			v[k++] = p;
	qsort(v, k, sizeof(*v), port_cmp);
	*n = k;
	return v;
}

int perf_ctl_counters(struct sm *sm, const char *target, bool errors,
		      bool json, struct ctl_answer *a, char *msg,
		      size_t msglen)
{
	struct sel s;
	char desc[128];
	size_t n, shown = 0;
	const struct pc_port **v;

	if (!sm->perf) {
		snprintf(msg, msglen, "no performance manager: perfmgr is FALSE");
		return -1;
	}
	if (parse_target(target ? target : "", &s, desc, sizeof(desc)) < 0) {
		snprintf(msg, msglen, "counters: expected a node description,"
			 " a node GUID (0x...) or a LID, each optionally"
			 " followed by :PORT");
		return -1;
	}
	port_guid_to_node(sm, &s);
	v = pick(sm, &s, errors, &n);
	if (!v) {
		snprintf(msg, msglen, "out of memory");
		return -1;
	}
	if (!n && !s.all && !errors) {
		free(v);
		snprintf(msg, msglen, "no counters of '%s': no such port read",
			 target);
		return -1;
	}
	const struct perf_stats *st = perf_stats(sm->perf);
	if (json)
		ctl_line_add(a, "{\"sweeps\":%u,\"last_sweep_s\":%.3f,"
			     "\"ports\":[", st->sweeps, st->last_seconds);
	else
		ctl_line_add(a, "# %u counter sweeps; totals since first read,"
			     " then the last sweep's increase", st->sweeps);
	for (size_t i = 0; i < n; i++) {
		/* Room for a whole port and the closing line, or stop here:
		 * the answer stays whole (and, as JSON, valid). */
		if (a->len + (size_t)(PC_N + 4) * 120 + 256 > CTL_MAX_ANSWER)
			break;
		if (json)
			json_port(a, sm, v[i], errors, shown > 0);
		else
			text_port(a, sm, v[i], errors);
		shown++;
	}
	if (json)
		ctl_line_add(a, "],\"shown\":%zu,\"matched\":%zu}", shown, n);
	snprintf(msg, msglen, "%zu ports%s", shown,
		 shown < n ? " (answer full: name a node or port for the rest)" : "");
	free(v);
	return 0;
}

void perf_ctl_status(const struct sm *sm, struct ctl_answer *a)
{
	const struct perf_stats *st = perf_stats(sm->perf);

	ctl_line_add(a, "perfmgr %s", st ? "on" : "off");
	if (!st)
		return;
	ctl_line_add(a, "perfmgr_sweeps %u", st->sweeps);
	ctl_line_add(a, "perfmgr_last_sweep_s %.3f", st->last_seconds);
	ctl_line_add(a, "perfmgr_last_sweep_ports %u", st->last_ports);
	ctl_line_add(a, "perfmgr_last_sweep_mads %" PRIu64, st->last_mads);
	ctl_line_add(a, "perfmgr_ports_kept %zu", pc_store_count(perf_store(sm->perf)));
	ctl_line_add(a, "perfmgr_unresponsive_nodes %u", st->unresponsive);
	ctl_line_add(a, "perfmgr_failed_reads %" PRIu64, st->failed_reads);
	ctl_line_add(a, "perfmgr_bad_answers %" PRIu64, st->bad_answers);
	ctl_line_add(a, "perfmgr_clears %" PRIu64, st->clears);
}

/* ---------------------------------------------------------- dump file */

int perf_dump_write(FILE *fp, const void *arg)
{
	const struct sm *sm = arg;
	const struct pc_store *st = perf_store(sm->perf);
	const struct perf_stats *ps = perf_stats(sm->perf);
	struct sel all = { .all = true, .port = -1 };
	size_t n;
	const struct pc_port **v;

	if (!st)
		return -EINVAL;
	v = pick(sm, &all, false, &n);
	if (!v)
		return -ENOMEM;
	fprintf(fp, "# ibsm port counters after counter sweep %u at %.0f: %zu"
		" ports\n# node_guid port lid reads ext_clears sm_clears"
		" then NAME=TOTAL/DELTA for each counter read\n",
		ps->sweeps, ps->last_end, n);
	for (size_t i = 0; i < n; i++) {
		const struct pc_port *p = v[i];

		fprintf(fp, "0x%016" PRIx64 " %u %u %u %u %u", p->node_guid,
			p->port, p->lid, p->reads, p->ext_clears, p->sm_clears);
		for (int k = 0; k < PC_N; k++)
			if (p->seen[k])
				fprintf(fp, " %s=%" PRIu64 "/%" PRIu64,
					pc_desc[k].name, p->total[k],
					p->delta[k]);
		fputc('\n', fp);
	}
	free(v);
	return ferror(fp) ? -EIO : 0;
}
