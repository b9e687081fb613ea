/*
 * ibsmctl_map.c - ibsmctl fabric --html FILE | --svg FILE: the fabric map
 * (fabmap/fabmap.h) of the running subnet or of a topology file.
 *
 * Live: the model through the SA (ibsmctl_fabric.c), the findings
 * (`health json`), the port counters (`counters json`) and the routed
 * load per cable (`routes loads`) from ibsm's control socket; without the socket the map has no findings
 * and no load view (said on stderr).  Offline (--topology FILE): the
 * model from the file, routed here with the engine list of --routing,
 * compared with --reference FILE (findings of the reference check).
 * Either way --findings FILE adds findings in the form `ibsmctl health
 * --json` prints.
 *
 * Exit status: 0 written, 1 no model or the file not written, 2 usage.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/fileutil.h"
#include "fabmap/fabmap.h"
#include "health/checks.h"
#include "routing/report.h"
#include "routing/routing.h"
#include "sm/lid.h"
#include "sm/topo_file.h"
#include "tools/ibsmctl.h"
#include "tools/ibsmctl_fabric.h"

#define MAX_FINDINGS_FILE	(16u << 20)
#define MAX_FINDINGS		100000

struct map_opts {
	const char *html, *svg;
	const char *topology, *routing, *reference, *findings;
	const char *sock, *instance, *title;
	bool load_view;
	struct sa_fabric_opts sa;
};

struct map_data {
	struct fabric f;
	struct pc_store *counters;	/* live: `counters json`, else NULL */
	struct hf_finding *fd;
	size_t n_fd, cap_fd;
	uint64_t *loads;
	double ideal;
};

static void map_usage(FILE *f)
{
	fprintf(f,
"usage: ibsmctl fabric --html FILE | --svg FILE [options]\n"
"  the fabric map: switches by tier, on their grid or by a force layout,\n"
"  cables coloured by health or routed load (FILE '-': standard output)\n"
"live (the subnet through the SA, findings and loads from ibsm):\n"
"  -g, --guid PORTGUID   local port to use (default: first port that is up)\n"
"  -s, --sm-lid LID      ask this LID instead of the port's SM LID\n"
"      --socket PATH     ibsm's control socket\n"
"  -i, --instance NAME   the socket of ibsm@NAME.service\n"
"offline:\n"
"      --topology FILE   the fabric of a topology file (ibnetdiscover or\n"
"                        ibsim .net), routed here for the load view\n"
"      --routing LIST    engine list for that (default auto; none: no\n"
"                        routing, no load view)\n"
"      --reference FILE  findings of the comparison with this reference\n"
"either:\n"
"      --findings FILE   findings as `ibsmctl health --json` prints them\n"
"      --load            show the load view first\n"
"      --title TEXT      the page's title\n");
}

/* ------------------------------------------------------------ findings */

/* The JSON string value of "key" in line into buf (escapes decoded,
 * \\uXXXX below 0x80 kept, others '?'); false when absent. */
static bool json_str_field(const char *line, const char *key, char *buf,
			   size_t len)
{
	char k[48];
	const char *p;
	size_t o = 0;

	snprintf(k, sizeof(k), "\"%s\": \"", key);
	p = strstr(line, k);
	if (!p || !len)
		return false;
	for (p += strlen(k); *p && *p != '"' && o + 1 < len; p++) {
		char c = *p;

		if (c == '\\' && p[1]) {
			p++;
			switch (*p) {
			case 'n': c = ' '; break;
			case 't': c = ' '; break;
			case 'u': {
				unsigned v = 0;

				if (sscanf(p + 1, "%4x", &v) == 1 &&
				    strlen(p + 1) >= 4)
					p += 4;
				c = v >= 0x20 && v < 0x7f ? (char)v : '?';
				break;
			}
			default: c = *p; break;
			}
		}
		buf[o++] = c;
	}
	buf[o] = '\0';
	return true;
}

static bool json_num_field(const char *line, const char *key,
			   unsigned long long *v)
{
	char k[48];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\": ", key);
	p = strstr(line, k);
	if (!p)
		return false;
	p += strlen(k);
	if (*p == '"')
		p++;
	errno = 0;
	*v = strtoull(p, NULL, 0);
	return errno == 0;
}

static int kind_by_name(const char *s)
{
	for (int k = 0; k < HF_N_KINDS; k++)
		if (!strcmp(hf_kind_name((enum hf_kind)k), s))
			return k;
	return -1;
}

/* One finding line of `health json` ("{"severity": ...}"): 1 taken,
 * 0 not a finding line, -1 malformed (what is wrong in why). */
static int parse_finding(const char *line, struct hf_finding *x,
			 char *why, size_t wlen)
{
	char sev[32], kind[48];
	unsigned long long v;
	int k;

	if (!strstr(line, "\"severity\": "))
		return 0;
	memset(x, 0, sizeof(*x));
	if (!json_str_field(line, "severity", sev, sizeof(sev)) ||
	    !json_str_field(line, "kind", kind, sizeof(kind)) ||
	    !json_num_field(line, "node_guid", &v)) {
		snprintf(why, wlen, "expected severity, kind and node_guid");
		return -1;
	}
	k = kind_by_name(kind);
	if (k < 0 || (strcmp(sev, "warning") && strcmp(sev, "critical"))) {
		snprintf(why, wlen, "unknown severity \"%s\" or kind \"%s\"",
			 sev, kind);
		return -1;
	}
	x->kind = (enum hf_kind)k;
	x->severity = strcmp(sev, "critical") ? HF_WARNING : HF_CRITICAL;
	x->guid = v;
	if (json_num_field(line, "port", &v) && v <= 255)
		x->port = (uint8_t)v;
	if (json_num_field(line, "peer_guid", &v))
		x->peer_guid = v;
	if (json_num_field(line, "peer_port", &v) && v <= 255)
		x->peer_port = (uint8_t)v;
	if (json_num_field(line, "detail", &v))
		x->detail = (uint32_t)v;
	if (json_num_field(line, "value", &v))
		x->value = v;
	if (json_num_field(line, "limit", &v))
		x->limit = v;
	json_str_field(line, "node_desc", x->desc, sizeof(x->desc));
	json_str_field(line, "peer_desc", x->peer_desc, sizeof(x->peer_desc));
	json_str_field(line, "text", x->text, sizeof(x->text));
	return 1;
}

static int add_finding(struct map_data *d, const struct hf_finding *x)
{
	if (d->n_fd >= MAX_FINDINGS)
		return 0;
	if (d->n_fd == d->cap_fd) {
		size_t nc = d->cap_fd ? 2 * d->cap_fd : 64;
		struct hf_finding *n = realloc(d->fd, nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		d->fd = n;
		d->cap_fd = nc;
	}
	d->fd[d->n_fd++] = *x;
	return 0;
}

/* The end of the JSON object that starts at p ('{'): the '}' closing it
 * (strings and their escapes skipped), or NULL when the text ends first.
 * Finding objects hold no nested object. */
static const char *object_end(const char *p)
{
	bool str = false;

	for (p++; *p; p++) {
		if (str) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '"')
				str = false;
		} else if (*p == '"') {
			str = true;
		} else if (*p == '{') {
			return NULL;
		} else if (*p == '}') {
			return p;
		}
	}
	return NULL;
}

/* Every finding object in `text` (`health json`'s answer, whose objects
 * span lines, or a file of them); name for messages.  0 or -1 (said
 * why, with the line the object starts on). */
static int findings_from_text(struct map_data *d, const char *text,
			      const char *name)
{
	const char *p = text;
	char why[128];

	while ((p = strstr(p, "{\"severity\": "))) {
		const char *end = object_end(p);
		unsigned ln = 1;
		struct hf_finding x;
		char *obj;
		int rc;

		for (const char *q = text; q < p; q++)
			ln += *q == '\n';
		if (!end) {
			fprintf(stderr, "ibsmctl: %s:%u: a finding that does not"
				" end\n", name, ln);
			return -1;
		}
		obj = strndup(p, (size_t)(end - p + 1));
		if (!obj) {
			fprintf(stderr, "ibsmctl: out of memory\n");
			return -1;
		}
		rc = parse_finding(obj, &x, why, sizeof(why));
		free(obj);
		if (rc < 0) {
			fprintf(stderr, "ibsmctl: %s:%u: %s\n", name, ln, why);
			return -1;
		}
		if (rc && add_finding(d, &x) < 0) {
			fprintf(stderr, "ibsmctl: out of memory\n");
			return -1;
		}
		p = end + 1;
	}
	return 0;
}

static int findings_file(struct map_data *d, const char *path)
{
	char *buf;
	size_t len;
	int rc = read_file_max(path, MAX_FINDINGS_FILE, &buf, &len);

	if (rc < 0) {
		fprintf(stderr, "ibsmctl: %s: %s\n", path, strerror(-rc));
		return -1;
	}
	rc = findings_from_text(d, buf, path);
	free(buf);
	return rc;
}

/* ------------------------------------------------------------- offline */

static int offline_reference(struct map_data *d, const char *path)
{
	struct fabric ref;
	struct hf_set set;
	char *buf, err[600];
	size_t len;
	int rc = read_file_all(path, &buf, &len);

	if (rc < 0) {
		fprintf(stderr, "ibsmctl: %s: %s\n", path, strerror(-rc));
		return -1;
	}
	fabric_init(&ref);
	rc = topo_parse_flags(&ref, path, buf, len, TOPO_LINK_AS_GIVEN, err,
			      sizeof(err));
	free(buf);
	if (rc < 0) {
		fprintf(stderr, "ibsmctl: %s\n", err);
		fabric_free(&ref);
		return -1;
	}
	rc = hf_set_init(&set, MAX_FINDINGS);
	if (rc == 0) {
		double now = (double)time(NULL);

		hf_set_begin(&set, HF_G_SWEEP);
		hc_reference(&d->f, &ref, &set, now);
		hf_set_end(&set, now, NULL, NULL);
		for (size_t i = 0; i < hf_set_count(&set) && rc == 0; i++)
			rc = add_finding(d, hf_set_at(&set, i));
		hf_set_free(&set);
	}
	fabric_free(&ref);
	if (rc < 0)
		fprintf(stderr, "ibsmctl: out of memory\n");
	return rc < 0 ? -1 : 0;
}

static int offline(const struct map_opts *o, struct map_data *d)
{
	struct routing_opts ro = { 0 };
	struct routing_result r;
	struct routing_report rep;
	char err[600];
	int rc = topo_load(&d->f, o->topology, err, sizeof(err));

	if (rc < 0) {
		fprintf(stderr, "ibsmctl: %s\n", err);
		return -1;
	}
	if (lid_assign_sequential(&d->f, 0) < 0) {
		fprintf(stderr, "ibsmctl: %s: not enough unicast LIDs\n",
			o->topology);
		return -1;
	}
	if (o->reference && offline_reference(d, o->reference) < 0)
		return -1;
	if (o->routing && !strcmp(o->routing, "none"))
		return 0;
	memset(&r, 0, sizeof(r));
	rc = routing_run_opts(o->routing ? o->routing : "auto", &d->f, &ro, &r,
			      err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "ibsmctl: %s: routing failed (no load view):"
			" %s\n", o->topology, err);
		return 0;
	}
	d->loads = calloc(routing_port_slots(&d->f) + 1, sizeof(*d->loads));
	rc = d->loads ? routing_report_port_loads(&d->f, &r, &rep, d->loads)
		      : -ENOMEM;
	routing_result_free(&r);
	if (rc < 0) {
		fprintf(stderr, "ibsmctl: routed load: %s\n", strerror(-rc));
		return -1;
	}
	d->ideal = rep.load_mean;
	return 0;
}

/* ---------------------------------------------------------------- live */

/* `routes loads`: "ideal X", then "0xGUID PORT:LOAD ..." lines. */
static void loads_from_reply(struct map_data *d, const struct ctl_reply *r)
{
	size_t slots = routing_port_slots(&d->f), *off;

	off = malloc((d->f.n_nodes + 1) * sizeof(*off));
	d->loads = calloc(slots + 1, sizeof(*d->loads));
	if (!off || !d->loads) {
		free(off);
		free(d->loads);
		d->loads = NULL;
		return;
	}
	slots = 0;
	for (size_t i = 0; i < d->f.n_nodes; i++) {
		off[i] = slots;
		slots += (size_t)d->f.nodes[i].num_ports + 1;
	}
	for (size_t i = 0; i + 1 < r->n; i++) {
		unsigned long long guid, load;
		unsigned port;
		int32_t id;
		int used;
		const char *l = r->lines[i];

		if (sscanf(l, "ideal %lf", &d->ideal) == 1)
			continue;
		if (sscanf(l, "%llx%n", &guid, &used) != 1)
			continue;
		id = fabric_find(&d->f, guid);
		if (id == FAB_NONE)
			continue;
		/* " PORT:LOAD" pairs */
		for (l += used; sscanf(l, " %u:%llu%n", &port, &load, &used) == 2;
		     l += used)
			if (port <= d->f.nodes[id].num_ports)
				d->loads[off[id] + port] = load;
	}
	free(off);
}

/* `counters json`: a port object starts with its "guid" and "port", then
 * one counter a line ("Name":{"total":N,...}). */
static void counters_from_reply(struct map_data *d, const struct ctl_reply *r)
{
	struct pc_port *cur = NULL;

	if (pc_store_new(&d->counters, 1u << 16) < 0)
		return;
	for (size_t i = 0; i + 1 < r->n; i++) {
		const char *l = r->lines[i], *g = strstr(l, "{\"guid\":\"");
		unsigned long long guid, total;
		unsigned port;
		char name[48];
		int id;

		if (g && sscanf(g, "{\"guid\":\"%llx\",\"port\":%u", &guid,
				&port) == 2 && port <= 255) {
			cur = pc_get(d->counters, guid, (uint8_t)port);
			continue;
		}
		if (*l == ',')
			l++;
		if (!cur || sscanf(l, "\"%47[^\"]\":{\"total\":%llu", name,
				   &total) != 2)
			continue;
		id = pc_id_by_name(name);
		if (id >= 0) {
			cur->total[id] = total;
			cur->seen[id] = true;
		}
	}
}

static void live_daemon(const struct map_opts *o, struct map_data *d)
{
	char path[512];
	struct ctl_reply r;

	if (ctl_socket_path(o->sock, o->instance, path, sizeof(path)) != 0) {
		fprintf(stderr, "ibsmctl: no control socket: the map shows no"
			" findings and no load\n");
		return;
	}
	if (ctl_request(path, "health json", &r) == 0) {
		/* the lines before the terminator, as one text */
		size_t len = 1;
		char *all;

		for (size_t i = 0; i + 1 < r.n; i++)
			len += strlen(r.lines[i]) + 1;
		all = r.ok ? malloc(len) : NULL;
		len = 0;
		for (size_t i = 0; all && i + 1 < r.n; i++)
			len += (size_t)sprintf(all + len, "%s\n", r.lines[i]);
		if (all) {
			all[len] = '\0';
			findings_from_text(d, all, "health json");
		}
		free(all);
		if (!r.ok)
			fprintf(stderr, "ibsmctl: health: %s\n",
				ctl_reply_text(&r));
		ctl_reply_free(&r);
	}
	/* the performance manager's counters, for the tooltips (ERR when
	 * it is off: the map shows none) */
	if (ctl_request(path, "counters json", &r) == 0) {
		if (r.ok)
			counters_from_reply(d, &r);
		ctl_reply_free(&r);
	}
	if (ctl_request(path, "routes loads", &r) == 0) {
		if (r.ok)
			loads_from_reply(d, &r);
		if (r.ok && strstr(ctl_reply_text(&r), "answer cut"))
			fprintf(stderr, "ibsmctl: routes loads: the answer was"
				" cut: cables left out show no load\n");
		else
			fprintf(stderr, "ibsmctl: routes loads: %s (no load"
				" view)\n", ctl_reply_text(&r));
		ctl_reply_free(&r);
	}
}

static int live(const struct map_opts *o, struct map_data *d)
{
	struct sa_fabric_info info;
	char err[600];
	int rc = sa_fabric_read(&o->sa, &d->f, &info, err, sizeof(err));

	if (rc < 0) {
		fprintf(stderr, "ibsmctl: %s\n", err);
		return -1;
	}
	live_daemon(o, d);
	return 0;
}

/* ---------------------------------------------------------------- main */

static int write_buf(FILE *fp, const void *arg)
{
	const struct fabmap_buf *b = arg;

	return fwrite(b->data, 1, b->len, fp) == b->len ? 0 : -EIO;
}

static int parse_map_args(int argc, char **argv, struct map_opts *o)
{
	static const struct option opts[] = {
		{ "html", required_argument, NULL, 'H' },
		{ "svg", required_argument, NULL, 'S' },
		{ "topology", required_argument, NULL, 'T' },
		{ "routing", required_argument, NULL, 'R' },
		{ "reference", required_argument, NULL, 'F' },
		{ "findings", required_argument, NULL, 'f' },
		{ "socket", required_argument, NULL, 'k' },
		{ "instance", required_argument, NULL, 'i' },
		{ "title", required_argument, NULL, 't' },
		{ "load", no_argument, NULL, 'l' },
		{ "guid", required_argument, NULL, 'g' },
		{ "sm-lid", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	o->sa.sm_lid = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "g:s:i:h", opts, NULL)) != -1) {
		char *end = NULL;

		switch (c) {
		case 'H': o->html = optarg; break;
		case 'S': o->svg = optarg; break;
		case 'T': o->topology = optarg; break;
		case 'R': o->routing = optarg; break;
		case 'F': o->reference = optarg; break;
		case 'f': o->findings = optarg; break;
		case 'k': o->sock = optarg; break;
		case 'i': o->instance = optarg; break;
		case 't': o->title = optarg; break;
		case 'l': o->load_view = true; break;
		case 'g':
			o->sa.guid = strtoull(optarg, &end, 0);
			break;
		case 's':
			o->sa.sm_lid = strtol(optarg, &end, 0);
			if (o->sa.sm_lid <= 0 || o->sa.sm_lid > 0xbfff)
				end = optarg;
			break;
		case 'h':
			map_usage(stdout);
			return 0;
		default:
			map_usage(stderr);
			return 2;
		}
		if (end && (*end || end == optarg)) {
			fprintf(stderr, "ibsmctl: bad number %s\n", optarg);
			return 2;
		}
	}
	if (optind != argc || !o->html == !o->svg) {
		map_usage(stderr);
		return 2;
	}
	if (!o->topology && (o->reference || o->routing)) {
		fprintf(stderr, "ibsmctl: --reference and --routing go with "
			"--topology\n");
		return 2;
	}
	return -1;
}

int map_main(int argc, char **argv)
{
	struct map_opts o = { 0 };
	struct map_data d = { .ideal = 0 };
	struct fabmap_buf b = { 0 };
	const char *out;
	int rc = parse_map_args(argc, argv, &o);

	if (rc >= 0)
		return rc;
	fabric_init(&d.f);
	rc = o.topology ? offline(&o, &d) : live(&o, &d);
	if (rc == 0 && o.findings)
		rc = findings_file(&d, o.findings);
	if (rc == 0) {
		struct fabmap_input in = {
			.f = &d.f, .findings = d.fd, .n_findings = d.n_fd,
			.loads = d.loads, .load_ideal = d.ideal,
			.counters = d.counters,
			.title = o.title, .now = (double)time(NULL),
			.load_view = o.load_view,
		};

		rc = fabmap_render(&in, o.html ? FABMAP_HTML : FABMAP_SVG, &b);
		if (rc < 0)
			fprintf(stderr, "ibsmctl: out of memory\n");
	}
	out = o.html ? o.html : o.svg;
	if (rc == 0 && !strcmp(out, "-")) {
		rc = fwrite(b.data, 1, b.len, stdout) == b.len ? 0 : -EIO;
		if (rc < 0)
			fprintf(stderr, "ibsmctl: cannot write the map\n");
	} else if (rc == 0) {
		rc = write_file_atomic(out, write_buf, &b);
		if (rc < 0)
			fprintf(stderr, "ibsmctl: %s: %s\n", out, strerror(-rc));
	}
	fabmap_buf_free(&b);
	free(d.fd);
	free(d.loads);
	pc_store_free(d.counters);
	fabric_free(&d.f);
	return rc == 0 ? 0 : 1;
}
