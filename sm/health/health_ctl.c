/*
 * health_ctl.c - the control socket's health commands (sm/ctl/parse.c parses
 * them): health [json], events [since T] [json], topology save FILE and
 * port enable NODE PORT.  Answers are bounded so that one fits
 * CTL_MAX_ANSWER whole (findings, the least severe last, up to the room
 * left; the last HEALTH_CTL_MAX_EVENTS events), and the JSON forms stay
 * valid when the lists are cut (the count left out is given).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/topo_dump.h"
#include "sm/ctl/ctl.h"
#include "sm/health/internal.h"
#include "sm/sm.h"
#include "sm/topo_file.h"

#define HEALTH_CTL_MAX_EVENTS	400

/* s as a JSON string (quotes included) into buf. */
static const char *jstr(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	if (len < 3)
		return "\"\"";
	buf[o++] = '"';
	for (; *s && o + 8 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)c;
		} else if (c < 0x20 || c >= 0x7f) {
			o += (size_t)snprintf(buf + o, len - o, "\\u%04x", c);
		} else {
			buf[o++] = (char)c;
		}
	}
	buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

static void iso_time(double t, char *buf, size_t len)
{
	time_t s = (time_t)t;
	struct tm tm;

	gmtime_r(&s, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int by_severity(const void *a, const void *b)
{
	const struct hf_finding *x = *(const struct hf_finding *const *)a;
	const struct hf_finding *y = *(const struct hf_finding *const *)b;

	if (x->severity != y->severity)
		return x->severity > y->severity ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return x->detail < y->detail ? -1 : x->detail > y->detail;
}

static void finding_text(struct sm_health *h, struct ctl_answer *a,
			 const struct hf_finding *fd)
{
	char first[32], peer[400] = "", where[400];
	struct hf_finding named, *f = &named;
	int n;

	iso_name(h, fd, &named);
	iso_time(f->first_seen, first, sizeof(first));
	if (!f->guid)
		snprintf(where, sizeof(where), "fabric");
	else {
		n = snprintf(where, sizeof(where), "\"%s\" 0x%016" PRIx64,
			     f->desc, f->guid);
		if (n > 0 && (size_t)n < sizeof(where) && f->port)
			n += snprintf(where + n, sizeof(where) - (size_t)n,
				      " port %u", f->port);
		if (n > 0 && (size_t)n < sizeof(where) && f->lid)
			snprintf(where + n, sizeof(where) - (size_t)n,
				 " lid %u", f->lid);
	}
	if (f->peer_guid) {
		n = snprintf(peer, sizeof(peer), ", peer \"%s\" 0x%016" PRIx64,
			     f->peer_desc, f->peer_guid);
		if (n > 0 && (size_t)n < sizeof(peer) && f->peer_port)
			n += snprintf(peer + n, sizeof(peer) - (size_t)n,
				      " port %u", f->peer_port);
		if (n > 0 && (size_t)n < sizeof(peer) && f->peer_lid)
			snprintf(peer + n, sizeof(peer) - (size_t)n, " lid %u",
				 f->peer_lid);
	}
	ctl_line_add(a, "%-8s %-21s %s%s: %s (since %s)",
		     hf_severity_name(f->severity), hf_kind_name(f->kind),
		     where, peer, f->text, first);
}

/*
 * One finding as a JSON object over three answer lines (each within an
 * answer line's bound whatever the descriptions hold); `first` false:
 * a comma before it.
 */
static void finding_json(struct sm_health *h, struct ctl_answer *a,
			 const struct hf_finding *fd, bool first)
{
	struct hf_finding named, *f = &named;
	char d[HF_DESC_SIZE * 6 + 3], pd[HF_DESC_SIZE * 6 + 3];
	char t[HF_TEXT_SIZE * 6 + 3], t0[32], t1[32];

	iso_name(h, fd, &named);
	iso_time(f->first_seen, t0, sizeof(t0));
	iso_time(f->last_seen, t1, sizeof(t1));
	ctl_line_add(a, "%s{\"severity\": \"%s\", \"kind\": \"%s\", \"node_guid\":"
		     " \"0x%016" PRIx64 "\", \"node_desc\": %s, \"port\": %u,"
		     " \"lid\": %u,", first ? "" : ", ",
		     hf_severity_name(f->severity), hf_kind_name(f->kind),
		     f->guid, jstr(f->desc, d, sizeof(d)), f->port, f->lid);
	ctl_line_add(a, " \"peer_guid\": \"0x%016" PRIx64 "\", \"peer_desc\": %s,"
		     " \"peer_port\": %u, \"peer_lid\": %u, \"detail\": %u,"
		     " \"value\": %" PRIu64 ", \"limit\": %" PRIu64 ",",
		     f->peer_guid, jstr(f->peer_desc, pd, sizeof(pd)),
		     f->peer_port, f->peer_lid, f->detail, f->value, f->limit);
	ctl_line_add(a, " \"text\": %s,", jstr(f->text, t, sizeof(t)));
	ctl_line_add(a, " \"first_seen\": \"%s\", \"last_seen\": \"%s\","
		     " \"first_seen_s\": %.3f, \"last_seen_s\": %.3f}", t0, t1,
		     f->first_seen, f->last_seen);
}

/* Room for one more finding or event in the answer (a few lines of at
 * most an answer line each, and the closing lines). */
static bool answer_room(const struct ctl_answer *a)
{
	return a->len + 8 * 1024 < CTL_MAX_ANSWER;
}

int sm_health_ctl_report(struct sm *sm, bool json, struct ctl_answer *a,
			 char *msg, size_t len)
{
	struct sm_health *h = health_get(sm);
	struct hf_summary sum;
	const struct hf_finding **v;
	size_t n, shown = 0;

	if (!h) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	n = hf_set_count(&h->findings);
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = hf_set_at(&h->findings, i);
	qsort(v, n, sizeof(*v), by_severity);
	hf_set_summary(&h->findings, &sum);
	unsigned crit = sum.count[HF_CRITICAL], warn = sum.count[HF_WARNING];
	if (json) {
		ctl_line_add(a, "{\"healthy\": %s, \"critical\": %u, \"warnings\":"
			     " %u, \"sweeps\": %u, \"subnet_up\": %s,"
			     " \"dropped\": %u, \"findings\": [",
			     n ? "false" : "true", crit, warn, h->sweeps,
			     sm->subnet_up ? "true" : "false", sum.dropped);
		for (; shown < n && answer_room(a); shown++)
			finding_json(h, a, v[shown], shown == 0);
		ctl_line_add(a, "], \"omitted\": %zu}", n - shown);
	} else {
		if (!n)
			ctl_line_add(a, "fabric healthy%s", h->sweeps ? "" :
				     " (no sweep has completed yet)");
		else
			ctl_line_add(a, "%u critical, %u warning%s", crit, warn,
				     warn == 1 ? "" : "s");
		for (; shown < n && answer_room(a); shown++)
			finding_text(h, a, v[shown]);
		if (n > shown)
			ctl_line_add(a, "... and %zu more", n - shown);
	}
	free(v);
	snprintf(msg, len, "%u critical, %u warnings", crit, warn);
	return 0;
}

/* One event as answer lines: JSON (a comma after it unless `last`) or
 * text.  Returns the bytes it adds (measure: `a` NULL, nothing added). */
static size_t event_lines(struct ctl_answer *a, const struct he_event *e,
			  bool json, bool last)
{
	/* the text on a line of its own, within an answer line's bound (a
	 * text of unusual bytes is cut, still a JSON string) */
	char l1[256], l2[1000], ts[32], t[960];

	if (!json) {
		evfile_format(e, l2, sizeof(l2));
		if (a)
			ctl_line_add(a, "%s", l2);
		return strlen(l2) + 1;
	}
	iso_time(e->time, ts, sizeof(ts));
	snprintf(l1, sizeof(l1), "{\"seq\": %" PRIu64 ", \"time\": \"%s\","
		 " \"time_s\": %.3f, \"type\": \"%s\", \"guid\": \"0x%016"
		 PRIx64 "\", \"port\": %u,", e->seq, ts, e->time,
		 he_type_name(e->type), e->guid, e->port);
	snprintf(l2, sizeof(l2), " \"text\": %s}%s",
		 jstr(e->text, t, sizeof(t)), last ? "" : ",");
	if (a) {
		ctl_line_add(a, "%s", l1);
		ctl_line_add(a, "%s", l2);
	}
	return strlen(l1) + strlen(l2) + 2;
}

int sm_health_ctl_events(struct sm *sm, double since, bool json,
			 struct ctl_answer *a, char *msg, size_t len)
{
	struct sm_health *h = health_get(sm);
	const struct he_event *e;
	uint64_t cur, start;
	size_t total = 0, skip, i = 0, *sz, room;

	if (!h) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	start = cur = he_ring_since(&h->events, since);
	while (he_ring_next(&h->events, &cur))
		total++;
	/* the newest events that fit the answer, at most
	 * HEALTH_CTL_MAX_EVENTS */
	sz = malloc((total ? total : 1) * sizeof(*sz));
	if (!sz) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	cur = start;
	while ((e = he_ring_next(&h->events, &cur)) && i < total)
		sz[i++] = event_lines(NULL, e, json, false);
	room = CTL_MAX_ANSWER - a->len - 8 * 1024;
	for (skip = total; skip > 0 && total - skip < HEALTH_CTL_MAX_EVENTS &&
	     sz[skip - 1] <= room; skip--)
		room -= sz[skip - 1];
	free(sz);
	if (json)
		ctl_line_add(a, "{\"omitted\": %zu, \"events\": [", skip);
	else if (skip)
		ctl_line_add(a, "... %zu earlier events left out", skip);
	cur = start;
	i = 0;
	while ((e = he_ring_next(&h->events, &cur)) && i < total) {
		if (i++ < skip)
			continue;
		event_lines(a, e, json, i == total);
	}
	if (json)
		ctl_line_add(a, "]}");
	snprintf(msg, len, "%zu events", total - skip);
	return 0;
}

static int write_topo(FILE *fp, const void *arg)
{
	return topo_dump(arg, fp);
}

int sm_health_ctl_topo_save(struct sm *sm, const char *path,
			    struct ctl_answer *a, char *msg, size_t len)
{
	struct fabric_counts c;
	int rc;

	(void)a;
	if (path[0] != '/') {
		snprintf(msg, len, "topology save: expected an absolute path");
		return -EINVAL;
	}
	if (!sm->fabric.n_nodes) {
		snprintf(msg, len, "topology save: no sweep has completed");
		return -EAGAIN;
	}
	rc = write_file_atomic(path, write_topo, &sm->fabric);
	if (rc < 0) {
		snprintf(msg, len, "topology save: cannot write %s: %s", path,
			 strerror(-rc));
		return rc;
	}
	fabric_count(&sm->fabric, &c);
	log_info("control socket: topology saved to %s", path);
	snprintf(msg, len, "%zu switches, %zu CAs, %zu links saved to %s",
		 c.switches, c.cas, c.links, path);
	return 0;
}

/* The node owning `lid` (a switch's port 0, a CA port's LMC range). */
static int32_t node_by_lid(const struct fabric *f, uint16_t lid)
{
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		bool sw = n->type == NODE_TYPE_SWITCH;

		for (unsigned pn = sw ? 0 : 1; pn <= (sw ? 0 : n->num_ports);
		     pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (p->valid && p->lid && lid >= p->lid &&
			    lid < p->lid + (1u << p->lmc))
				return (int32_t)i;
		}
	}
	return FAB_NONE;
}

/* The node of a node GUID, or of a CA's port GUID. */
static int32_t node_by_guid(const struct fabric *f, uint64_t guid)
{
	int32_t id = fabric_find(f, guid);

	for (size_t i = 0; id == FAB_NONE && i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		for (unsigned pn = 1; pn <= n->num_ports; pn++)
			if (n->ports[pn].valid && n->ports[pn].guid == guid)
				return (int32_t)i;
	}
	return id;
}

int sm_health_ctl_port_enable(struct sm *sm, uint64_t guid, uint16_t lid,
			      uint8_t port, struct ctl_answer *a, char *msg,
			      size_t len)
{
	struct sm_health *h = health_get(sm);
	int32_t id;
	int rc;

	(void)a;
	if (!h) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	if (sm->state != SM_MASTER || sm->ha.standing_down) {
		snprintf(msg, len, "port enable: the SM is %s: only the master"
			 " sends Sets", sm_state_name(sm->state));
		return -EPERM;
	}
	id = guid ? node_by_guid(&sm->fabric, guid)
		  : node_by_lid(&sm->fabric, lid);
	if (id == FAB_NONE) {
		if (guid)
			snprintf(msg, len, "port enable: no node 0x%016" PRIx64
				 " in the subnet", guid);
		else
			snprintf(msg, len, "port enable: no node has LID %u",
				 lid);
		return -ENOENT;
	}
	rc = iso_enable(h, id, port, msg, len);
	if (rc < 0)
		return rc;
	snprintf(msg, len, "port %u of node 0x%016" PRIx64 " set to Polling;"
		 " heavy sweep requested once it answers", port,
		 fabric_node(&sm->fabric, id)->guid);
	return 0;
}
