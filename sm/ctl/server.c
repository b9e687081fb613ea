/*
 * server.c - the control socket (see ctl.h for the protocol).
 *
 * Who may talk: the socket file is created 0600 (under umask 0177, so it
 * never exists with wider rights), and every connection's peer is checked
 * with SO_PEERCRED when it is accepted: root or the user the daemon runs
 * as (the socket's owner), nobody else, whatever the file's mode is
 * changed to later.  A refused peer gets one "ERR" line and is closed.
 *
 * How it stays off the loop's critical path: the listening socket and
 * every connection are non-blocking and watched by libev io watchers.  A
 * connection is read only while it has no answer waiting to be written,
 * so at most one answer (CTL_MAX_ANSWER bytes) and one request line
 * (CTL_MAX_LINE bytes) are buffered per client, and at most
 * CTL_MAX_CLIENTS clients are connected.  A line longer than CTL_MAX_LINE
 * gets "ERR" and the connection is closed after it (what follows cannot be
 * told apart from the rest of that line); a malformed line gets "ERR" and
 * the connection goes on.  A client that makes no progress, reading or
 * writing, for CTL_IDLE_TIMEOUT seconds is dropped.
 *
 * The commands run on the loop like a signal's handler: status and
 * dump-config read the model, resweep/reroute ask the state machine for a
 * sweep (which runs later, as for a trap), reload reads the -F and -P
 * files (local files, as SIGHUP does) and answers with what it found.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "config/conf.h"
#include "sm/ctl/ctl.h"
#include "sm/health/health.h"
#include "sm/mcast/mcast.h"
#include "sm/mcast/mft.h"
#include "sm/perf/perf.h"
#include "sm/program.h"
#include "sm/sm.h"
#include "sm/ha/sync.h"
#include "partitions/partitions.h"
#include "routing/report.h"

#define CTL_ACCEPT_BURST	16	/* connections accepted per wakeup */
#define CTL_LINE_OUT		1024	/* bytes of one answer line */

struct ctl_client {
	struct ctl_server *srv;
	int	 fd;
	uid_t	 uid;
	ev_io	 io;
	ev_timer timer;
	char	 in[CTL_MAX_LINE];
	size_t	 in_len;
	struct ctl_answer out;
	size_t	 out_off;
	bool	 eof;			/* the peer sent all it will */
	bool	 closing;		/* close once the answer is written */
};

struct ctl_server {
	struct sm *sm;
	int	 fd;
	ev_io	 io;
	char	 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t	 dev;			/* the socket file we made */
	ino_t	 ino;
	uid_t	 owner;
	struct ctl_client *clients[CTL_MAX_CLIENTS];
};

/* ------------------------------------------------------------ protocol */

long ctl_line(const char *buf, size_t len, size_t *line_len)
{
	size_t scan = len < CTL_MAX_LINE ? len : CTL_MAX_LINE;
	const char *nl = memchr(buf, '\n', scan);
	size_t l;

	if (!nl)
		return len >= CTL_MAX_LINE ? -E2BIG : 0;
	l = (size_t)(nl - buf);
	*line_len = l && buf[l - 1] == '\r' ? l - 1 : l;
	return (long)(l + 1);
}

static const char *const level_names[] = { "err", "warn", "info", "debug" };

/*
 * loglevel's argument: a level by name, or a number (decimal or 0x hex,
 * 0-255) read as OpenSM's log flags (-D, log_flags, OpenSM's console
 * loglevel), mapped as -D is (cfg_log_level_of_flags()); *flags is that
 * number, or -1 for a name.  Returns the level or -1.
 */
static int parse_level(const char *w, size_t n, int *flags)
{
	static const struct { const char *name; int level; } words[] = {
		{ "err", LOG_LVL_ERR }, { "error", LOG_LVL_ERR },
		{ "warn", LOG_LVL_WARN }, { "warning", LOG_LVL_WARN },
		{ "info", LOG_LVL_INFO }, { "debug", LOG_LVL_DEBUG },
	};
	char num[8], *end;
	unsigned long v;

	*flags = -1;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i].name) == n && !memcmp(words[i].name, w, n))
			return words[i].level;
	if (n == 0 || n >= sizeof(num) || !isdigit((unsigned char)w[0]))
		return -1;
	memcpy(num, w, n);
	num[n] = 0;
	errno = 0;
	v = strtoul(num, &end, 0);
	if (errno || *end || v > 0xff)
		return -1;
	*flags = (int)v;
	return cfg_log_level_of_flags((unsigned)v);
}

static bool word_is(const char *w, size_t n, const char *s)
{
	return strlen(s) == n && !memcmp(w, s, n);
}

/*
 * events since T: seconds since the epoch ("1700000000"), a UTC time
 * ("2026-11-29T07:50:00Z", the Z optional), or a time ago: a number
 * with s, m, h or d ("10m").  0 or -1.
 */
static int parse_since(const char *w, size_t n, struct ctl_request *req)
{
	char buf[40], *end;
	struct tm tm;
	double v;

	if (!n || n >= sizeof(buf))
		return -1;
	memcpy(buf, w, n);
	buf[n] = '\0';
	memset(&tm, 0, sizeof(tm));
	end = strptime(buf, "%Y-%m-%dT%H:%M:%S", &tm);
	if (end && (!*end || !strcmp(end, "Z"))) {
		req->since = (double)timegm(&tm);
		return 0;
	}
	if (buf[0] < '0' || buf[0] > '9')
		return -1;
	errno = 0;
	v = strtod(buf, &end);
	if (errno || v < 0 || v > 1e12)
		return -1;
	if (!*end) {
		req->since = v;
		return 0;
	}
	if (end[1])
		return -1;
	switch (*end) {
	case 's': req->since_ago = v; break;
	case 'm': req->since_ago = v * 60; break;
	case 'h': req->since_ago = v * 3600; break;
	case 'd': req->since_ago = v * 86400; break;
	default: return -1;
	}
	return 0;
}

/* A number of at most `max` (decimal, or hexadecimal with 0x). */
static int parse_uint(const char *w, size_t n, unsigned long long max,
		      unsigned long long *v)
{
	char buf[24], *end;

	if (!n || n >= sizeof(buf) || w[0] == '-' || w[0] == '+')
		return -1;
	memcpy(buf, w, n);
	buf[n] = '\0';
	errno = 0;
	*v = strtoull(buf, &end, 0);
	return errno || *end || *v > max ? -1 : 0;
}

/* port enable NODE PORT: NODE a GUID (0x and 16 hex digits at most) or
 * a unicast LID. */
static int parse_port_enable(const char *const *w, const size_t *wl,
			     size_t nw, struct ctl_request *req)
{
	unsigned long long v, p;

	if (nw != 4 || !word_is(w[1], wl[1], "enable") ||
	    parse_uint(w[2], wl[2], UINT64_MAX, &v) < 0 || !v ||
	    parse_uint(w[3], wl[3], 254, &p) < 0 || !p)
		return -1;
	if (wl[2] > 2 && w[2][0] == '0' && (w[2][1] == 'x' || w[2][1] == 'X') &&
	    wl[2] > 6) {
		req->guid = v;
	} else {
		if (v > 0xbfff)
			return -1;
		req->lid = (uint16_t)v;
	}
	req->port = (uint8_t)p;
	return 0;
}

/* health [json] | events [since T] [json] | topology save FILE */
static int parse_health(const char *const *w, const size_t *wl, size_t nw,
			struct ctl_request *req, char *err, size_t errlen)
{
	size_t i = 1;

	if (word_is(w[0], wl[0], "health")) {
		req->cmd = CTL_CMD_HEALTH;
		if (nw > 2 || (nw == 2 && !(req->json = word_is(w[1], wl[1],
								 "json")))) {
			snprintf(err, errlen, "health: expected 'health' or"
				 " 'health json'");
			return -EINVAL;
		}
		return 0;
	}
	if (word_is(w[0], wl[0], "events")) {
		req->cmd = CTL_CMD_EVENTS;
		if (i < nw && word_is(w[i], wl[i], "since")) {
			if (i + 1 >= nw || parse_since(w[i + 1], wl[i + 1],
						       req) < 0) {
				snprintf(err, errlen, "events since: expected a"
					 " time: seconds since the epoch, a UTC"
					 " time YYYY-MM-DDTHH:MM:SSZ or a time"
					 " ago (30s, 10m, 2h, 1d)");
				return -EINVAL;
			}
			i += 2;
		}
		if (i < nw && word_is(w[i], wl[i], "json")) {
			req->json = true;
			i++;
		}
		if (i != nw) {
			snprintf(err, errlen, "events: expected 'events [since"
				 " T] [json]'");
			return -EINVAL;
		}
		return 0;
	}
	if (word_is(w[0], wl[0], "topology")) {
		req->cmd = CTL_CMD_TOPO_SAVE;
		if (nw != 3 || !word_is(w[1], wl[1], "save") || w[2][0] != '/' ||
		    wl[2] >= sizeof(req->path)) {
			snprintf(err, errlen, "topology: expected 'topology save"
				 " FILE', FILE an absolute path without blanks");
			return -EINVAL;
		}
		memcpy(req->path, w[2], wl[2]);
		req->path[wl[2]] = '\0';
		return 0;
	}
	req->cmd = CTL_CMD_PORT_ENABLE;
	if (parse_port_enable(w, wl, nw, req) < 0) {
		snprintf(err, errlen, "port: expected 'port enable NODE PORT',"
			 " NODE a node GUID (0x...) or a LID, PORT 1-254");
		return -EINVAL;
	}
	return 0;
}

int ctl_parse(const char *line, size_t len, struct ctl_request *req,
	      char *err, size_t errlen)
{
	const char *w[CTL_MAX_ARGS + 1];
	size_t wl[CTL_MAX_ARGS + 1], nw = 0, i = 0;

	memset(req, 0, sizeof(*req));
	req->since_ago = -1;
	for (size_t k = 0; k < len; k++) {
		unsigned char ch = (unsigned char)line[k];

		if ((ch < 0x20 && ch != '\t') || ch >= 0x7f) {
			snprintf(err, errlen, "malformed request: byte 0x%02x at"
				 " %zu: expected a printable command line", ch,
				 k + 1);
			return -EINVAL;
		}
	}
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	if (len - i >= 3 && !memcmp(line + i, "qos", 3) &&
	    (len - i == 3 || line[i + 3] == ' ' || line[i + 3] == '\t'))
		return ctl_qos_parse(line, len, req, err, errlen);
	while (i < len) {
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == len)
			break;
		if (nw == CTL_MAX_ARGS + 1) {
			snprintf(err, errlen, "too many words: expected a"
				 " command and at most %d arguments",
				 CTL_MAX_ARGS);
			return -EINVAL;
		}
		w[nw] = line + i;
		while (i < len && line[i] != ' ' && line[i] != '\t')
			i++;
		wl[nw] = (size_t)(line + i - w[nw]);
		nw++;
	}
	if (!nw) {
		snprintf(err, errlen, "empty request: expected a command"
			 " ('help' lists them)");
		return -EINVAL;
	}
#define NOARGS(name) do { if (nw > 1) { \
		snprintf(err, errlen, "%s takes no argument", name); \
		return -EINVAL; } } while (0)
	if (word_is(w[0], wl[0], "status")) {
		NOARGS("status");
		req->cmd = CTL_CMD_STATUS;
	} else if (word_is(w[0], wl[0], "resweep")) {
		req->cmd = CTL_CMD_RESWEEP;
		req->heavy = true;
		if (nw > 2 || (nw == 2 && !word_is(w[1], wl[1], "heavy") &&
			       !word_is(w[1], wl[1], "light"))) {
			snprintf(err, errlen, "resweep: expected 'resweep',"
				 " 'resweep heavy' or 'resweep light'");
			return -EINVAL;
		}
		if (nw == 2)
			req->heavy = word_is(w[1], wl[1], "heavy");
	} else if (word_is(w[0], wl[0], "reroute")) {
		NOARGS("reroute");
		req->cmd = CTL_CMD_REROUTE;
	} else if (word_is(w[0], wl[0], "loglevel")) {
		req->cmd = CTL_CMD_LOGLEVEL;
		if (nw != 2 ||
		    (req->level = parse_level(w[1], wl[1], &req->flags)) < 0) {
			snprintf(err, errlen, "loglevel: expected one level: err,"
				 " warn, info or debug, or OpenSM's log flags"
				 " 0-255 (-D, e.g. 0x03: info)");
			return -EINVAL;
		}
	} else if (word_is(w[0], wl[0], "reload")) {
		req->cmd = CTL_CMD_RELOAD;
		if (nw > 2 || (nw == 2 && !(req->force = word_is(w[1], wl[1],
								 "force")))) {
			snprintf(err, errlen, "reload: expected 'reload' or"
				 " 'reload force'");
			return -EINVAL;
		}
	} else if (word_is(w[0], wl[0], "dump-config")) {
		NOARGS("dump-config");
		req->cmd = CTL_CMD_DUMP_CONFIG;
	} else if (word_is(w[0], wl[0], "sms")) {
		NOARGS("sms");
		req->cmd = CTL_CMD_SMS;
	} else if (word_is(w[0], wl[0], "routes")) {
		req->cmd = CTL_CMD_ROUTES_REPORT;
		if (nw == 2 && word_is(w[1], wl[1], "loads")) {
			req->cmd = CTL_CMD_ROUTES_LOADS;
		} else if (nw < 2 || nw > 3 || !word_is(w[1], wl[1], "report") ||
		    (nw == 3 && !(req->json = word_is(w[2], wl[2], "json")))) {
			snprintf(err, errlen, "routes: expected 'routes report'"
				 ", 'routes report json' or 'routes loads'");
			return -EINVAL;
		}
	} else if (word_is(w[0], wl[0], "health") ||
		   word_is(w[0], wl[0], "events") ||
		   word_is(w[0], wl[0], "topology") ||
		   word_is(w[0], wl[0], "port")) {
		if (parse_health(w, wl, nw, req, err, errlen) < 0)
			return -EINVAL;
	} else if (word_is(w[0], wl[0], "counters")) {
		req->cmd = CTL_CMD_COUNTERS;
		for (size_t k = 1; k < nw; k++) {
			if (word_is(w[k], wl[k], "errors") && !req->errors)
				req->errors = true;
			else if (word_is(w[k], wl[k], "json") && !req->json)
				req->json = true;
			else if (!req->target[0] && wl[k] < sizeof(req->target))
				memcpy(req->target, w[k], wl[k]);
			else {
				snprintf(err, errlen, "counters: expected"
					 " 'counters [NODE|GUID|LID[:PORT]]"
					 " [errors] [json]'");
				return -EINVAL;
			}
		}
	} else if (word_is(w[0], wl[0], "help")) {
		NOARGS("help");
		req->cmd = CTL_CMD_HELP;
	} else {
		snprintf(err, errlen, "unknown command '%.*s': expected status,"
			 " resweep, reroute, loglevel, reload, dump-config,"
			 " sms, routes, counters, health, events, topology, port,"
			 " qos or help", (int)(wl[0] > 40 ? 40 : wl[0]), w[0]);
		return -EINVAL;
	}
#undef NOARGS
	return 0;
}

/* ------------------------------------------------------------- answers */

static void answer_put(struct ctl_answer *a, const char *s, size_t n)
{
	if (a->len + n + 1 > a->cap) {
		size_t cap = a->cap ? a->cap : 1024;
		char *b;

		while (cap < a->len + n + 1)
			cap *= 2;
		b = realloc(a->buf, cap);
		if (!b) {
			a->full = true;
			return;
		}
		a->buf = b;
		a->cap = cap;
	}
	memcpy(a->buf + a->len, s, n);
	a->len += n;
	a->buf[a->len] = '\0';
}

static bool looks_final(const char *s)
{
	return !strncmp(s, "ERR", 3) ||
	       (!strncmp(s, "OK", 2) && (s[2] == '\0' || s[2] == ' '));
}

/*
 * One data line: printed after two bytes of room, which become "- " when
 * the line would pass for a terminator (ctl.h); control characters made
 * harmless; '\n' added.  Past CTL_MAX_ANSWER the answer is marked full.
 */
static void vline(struct ctl_answer *a, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
static void vline(struct ctl_answer *a, const char *fmt, va_list ap)
{
	char buf[CTL_LINE_OUT + 3], *line = buf + 2;
	int w = vsnprintf(line, CTL_LINE_OUT, fmt, ap);
	size_t n = w < 0 ? 0 : (size_t)w;

	if (n > CTL_LINE_OUT - 1)
		n = CTL_LINE_OUT - 1;
	line[n] = '\0';
	if (looks_final(line)) {
		line = buf;
		line[0] = '-';
		line[1] = ' ';
		n += 2;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = '?';
	line[n++] = '\n';
	if (a->len + n > CTL_MAX_ANSWER) {
		a->full = true;
		return;
	}
	answer_put(a, line, n);
}

void ctl_line_add(struct ctl_answer *a, const char *fmt, ...)
{
	va_list ap;

	if (a->full)
		return;
	va_start(ap, fmt);
	vline(a, fmt, ap);
	va_end(ap);
}

static int answer_end(struct ctl_answer *a, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The terminator: "OK[ text]" or "ERR text". */
static int answer_end(struct ctl_answer *a, bool ok, const char *fmt, ...)
{
	char text[CTL_LINE_OUT - 8], line[CTL_LINE_OUT];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (a->full) {
		a->full = false;	/* room for the terminator */
		ok = false;
		snprintf(text, sizeof(text), "answer longer than %d bytes: cut",
			 CTL_MAX_ANSWER);
	}
	snprintf(line, sizeof(line), "%s%s%s", ok ? "OK" : "ERR",
		 *text ? " " : "", text);
	n = strlen(line);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = '?';
	answer_put(a, line, n);
	answer_put(a, "\n", 1);
	return ok ? 0 : -1;
}

void ctl_answer_free(struct ctl_answer *a)
{
	free(a->buf);
	memset(a, 0, sizeof(*a));
}

/* ------------------------------------------------------------ commands */

static bool sweeps_allowed(const struct sm *sm)
{
	return sm->state != SM_NOTACTIVE && sm->state != SM_STANDBY;
}

/*
 * The master this SM follows (a standby, or one discovering after it
 * lost it: 0 otherwise) and the standby's copy of the master's SA state
 * (sm/ha/sync.c): when its last complete round ended, what it holds and
 * how many records the checks dropped.  "standby_copy none" when no
 * copy was ever started (a master that never stood by).
 */
static void status_standby(const struct sm *sm, struct ctl_answer *a)
{
	struct standby_sync_info si;
	bool following = sm->state != SM_MASTER && sm->master_guid;

	ctl_line_add(a, "master_guid 0x%016" PRIx64, following ?
		     sm->master_guid : sm->state == SM_MASTER ? sm->port_guid : 0);
	ctl_line_add(a, "master_lid %u", following ? sm->master_lid :
		     sm->state == SM_MASTER ? sm_local_lid(sm) : 0);
	if (!standby_sync_info(sm, &si)) {
		ctl_line_add(a, "standby_copy none");
		return;
	}
	ctl_line_add(a, "standby_copy %s", si.have ? (si.running ? "current" :
		     "kept") : si.running ? "fetching" : "none");
	if (si.have)
		ctl_line_add(a, "standby_copy_age_s %.3f", ev_time() - si.at);
	else
		ctl_line_add(a, "standby_copy_age_s none");
	ctl_line_add(a, "standby_copy_from_lid %u", si.from_lid);
	ctl_line_add(a, "standby_copy_lids %zu", si.lids);
	ctl_line_add(a, "standby_copy_group_members %zu", si.members);
	ctl_line_add(a, "standby_copy_services %zu", si.services);
	ctl_line_add(a, "standby_copy_subscriptions %zu", si.subscriptions);
	ctl_line_add(a, "standby_copy_dropped %" PRIu64, si.dropped);
	ctl_line_add(a, "standby_copy_over_caps %" PRIu64, si.over);
	ctl_line_add(a, "standby_copy_rounds %u", si.rounds);
	ctl_line_add(a, "standby_copy_failures %u", si.failures);
}

static int cmd_status(struct sm *sm, struct ctl_answer *a)
{
	struct fabric_counts c;
	bool mft_busy = false;
	const struct mft_stats *ms = mft_stats(sm, &mft_busy);

	fabric_count(&sm->fabric, &c);
	ctl_line_add(a, "state %s", sm_state_name(sm->state));
	ctl_line_add(a, "priority %u", sm->cfg.sm_priority);
	ctl_line_add(a, "port_guid 0x%016" PRIx64, sm->port_guid);
	/* The election (sm/ha/state.c): whom we stand by for, and why. */
	if (sm->state == SM_MASTER)
		ctl_line_add(a, "master self");
	else if (sm->master_guid)
		ctl_line_add(a, "master 0x%016" PRIx64 " lid %u priority %u",
			     sm->master_guid, sm->master_lid,
			     sm->master_priority);
	else
		ctl_line_add(a, "master none");
	ctl_line_add(a, "act_count %u", sm->act_count);
	ctl_line_add(a, "last_transition %s", sm->last_transition[0] ?
		     sm->last_transition : "none");
	/* Our port's LID: as our sweep assigned it, or (a standby, which
	 * does not sweep) as the port holds it. */
	ctl_line_add(a, "sm_lid %u", sm_local_lid(sm) ? sm_local_lid(sm) :
		     sm->port_lid);
	/* Up: brought up by our sweep, or a standby's master answers. */
	ctl_line_add(a, "subnet_up %s", sm->subnet_up ||
		     (sm->state == SM_STANDBY && sm->master_guid &&
		      !sm->poll_misses) ? "yes" : "no");
	status_standby(sm, a);
	ctl_line_add(a, "sweeping %s", sm->sweep ? "heavy" :
		     sm->light ? "light" : "none");
	ctl_line_add(a, "heavy_sweeps %u", sm->stats.heavy_sweeps);
	ctl_line_add(a, "light_sweeps %u", sm->stats.light_sweeps);
	ctl_line_add(a, "failed_sweeps %u", sm->failed_sweeps);
	/* The last heavy sweep that ended: how long ago, its length. */
	if (sm->stats.last_heavy_end > 0) {
		ctl_line_add(a, "last_heavy_sweep %s", sm->stats.last_heavy_ok ?
			     "done" : "failed");
		ctl_line_add(a, "last_heavy_sweep_ago_s %.3f",
			     ev_time() - sm->stats.last_heavy_end);
		ctl_line_add(a, "last_heavy_sweep_s %.3f",
			     sm->stats.last_heavy_seconds);
	} else {
		ctl_line_add(a, "last_heavy_sweep none");
	}
	ctl_line_add(a, "uptime_s %.3f", sm->stats.started > 0 ?
		     ev_time() - sm->stats.started : 0.);
	ctl_line_add(a, "first_up_s %.3f", sm->stats.first_up_seconds);
	ctl_line_add(a, "switches %zu", c.switches);
	ctl_line_add(a, "cas %zu", c.cas);
	ctl_line_add(a, "routers %zu", c.routers);
	ctl_line_add(a, "ports %zu", c.ports);
	ctl_line_add(a, "links %zu", c.links);
	ctl_line_add(a, "max_lid %u", sm->fabric.max_lid);
	ctl_line_add(a, "excluded_nodes %u", sm->n_excluded);
	ctl_line_add(a, "partitions %zu", sm->parts ? sm->parts->n_parts : 0);
	ctl_line_add(a, "mcast_groups %zu", sm->mc ? mc_table_count(sm->mc) : 0);
	ctl_line_add(a, "mcast_mlids %zu",
		     sm->mc ? mc_table_mlids_used(sm->mc) : 0);
	ctl_line_add(a, "mft_updates %u", ms ? ms->updates : 0);
	ctl_line_add(a, "mft_sets %u", ms ? ms->sets : 0);
	ctl_line_add(a, "mft_busy %s", mft_busy ? "yes" : "no");
	ctl_line_add(a, "traps %u", sm->stats.traps);
	ctl_line_add(a, "traps_rejected %u", sm->stats.traps_rejected);
	ctl_line_add(a, "traps_limited %u", sm->stats.traps_limited);
	ctl_line_add(a, "trap_sweeps %u", sm->stats.trap_sweeps);
	ctl_line_add(a, "quick_sweeps %u", sm->stats.quick_sweeps);
	ctl_line_add(a, "foreign_sm_ports %u", sm->stats.foreign_sm_ports);
	perf_ctl_status(sm, a);
	if (sm->engine) {
		const struct mad_engine_stats *st = mad_engine_stats(sm->engine);

		ctl_line_add(a, "mads_sent %" PRIu64, st->sent);
		ctl_line_add(a, "smps_sent %" PRIu64, st->smps_sent);
		ctl_line_add(a, "smps_dr %" PRIu64, st->smps_sent - st->smps_lid);
		ctl_line_add(a, "smps_lid_routed %" PRIu64, st->smps_lid);
		ctl_line_add(a, "smp_lid_fallbacks %" PRIu64, st->lid_fallbacks);
		ctl_line_add(a, "mads_resent %" PRIu64, st->resends);
		ctl_line_add(a, "mad_timeouts %" PRIu64, st->timeouts);
		ctl_line_add(a, "smp_window %u", st->window);
		ctl_line_add(a, "smp_window_range %u-%u", st->window_low,
			     st->window_high);
		ctl_line_add(a, "smp_window_cuts %" PRIu64, st->window_cuts);
		ctl_line_add(a, "smp_dest_waits %" PRIu64, st->dest_waits);
		ctl_line_add(a, "smp_dest_cuts %" PRIu64, st->dest_cuts);
		ctl_line_add(a, "smp_dests_throttled %u",
			     mad_engine_dests_throttled(sm->engine));
	}
	ctl_line_add(a, "log_level %s", sm->cfg.log_level <= LOG_LVL_DEBUG ?
		     level_names[sm->cfg.log_level] : "?");
	return answer_end(a, true, "%s", "");
}

static int cmd_resweep(struct sm *sm, bool heavy, struct ctl_answer *a)
{
	int rc;

	if (!sweeps_allowed(sm))
		return answer_end(a, false, "no sweep: the SM is %s",
				  sm_state_name(sm->state));
	if (heavy) {
		bool busy = sm->sweep || sm->light;

		log_info("control socket: heavy sweep requested");
		(void)sm_post(sm, SM_EV_CHANGE);
		return answer_end(a, true, "heavy sweep requested%s", busy ?
				  " (after the sweep in progress)" : "");
	}
	if (sm->state != SM_MASTER)
		return answer_end(a, false, "no light sweep: the SM is %s",
				  sm_state_name(sm->state));
	if (sm->sweep || sm->light || sm->quick)
		return answer_end(a, false, "no light sweep: a %s sweep is in"
				  " progress", sm->sweep ? "heavy" :
				  sm->light ? "light" : "quick");
	log_info("control socket: light sweep requested");
	rc = sm_post_wait(sm, &(struct sm_msg){ .ev = SM_EV_LIGHT_ASK });
	if (rc < 0)
		return answer_end(a, false, "cannot start a light sweep: %s",
				  strerror(-rc));
	return answer_end(a, true, "light sweep started");
}

/* reroute: the heavy sweep, every switch's LFT sent whole (the state
 * machine forgets the images, now or after the sweep in progress). */
static int cmd_reroute(struct sm *sm, struct ctl_answer *a)
{
	struct sm_msg m = { .ev = SM_EV_REROUTE };
	int n;

	if (!sweeps_allowed(sm))
		return answer_end(a, false, "no sweep: the SM is %s",
				  sm_state_name(sm->state));
	n = sm_post_wait(sm, &m);
	if (n == -EINPROGRESS) {
		log_info("control socket: reroute: heavy sweep requested after"
			 " the sweep in progress, every LFT sent whole then");
		return answer_end(a, true, "heavy sweep requested after the"
				  " sweep in progress: routes computed again,"
				  " every switch's LFT sent whole then");
	}
	log_info("control socket: reroute: heavy sweep requested, LFTs of %d"
		 " switches sent whole", n);
	return answer_end(a, true, "heavy sweep requested: routes computed"
			  " again, LFTs of %d switches sent whole%s", n,
			  sm->light || sm->quick ?
			  " (after the sweep in progress)" : "");
}

static int cmd_loglevel(struct sm *sm, int level, int flags,
			struct ctl_answer *a)
{
	enum log_level was = sm->cfg.log_level;
	char how[48] = "";

	if (flags >= 0)
		snprintf(how, sizeof(how), " (OpenSM log flags 0x%02x)", flags);
	sm->cfg.log_level = (enum log_level)level;
	log_set_level(sm->cfg.log_level);
	log_info("control socket: log level %s -> %s%s",
		 was <= LOG_LVL_DEBUG ? level_names[was] : "?",
		 level_names[level], how);
	return answer_end(a, true, "log level %s -> %s%s",
			  was <= LOG_LVL_DEBUG ? level_names[was] : "?",
			  level_names[level], how);
}

static int cmd_reload(struct sm *sm, bool force, struct ctl_answer *a)
{
	struct cfg_msgs rep = { NULL, 0 };
	size_t errors = 0;
	int rc;
	bool files = (sm->conf && sm->conf->file) || sm->cfg.partition_config;

	log_info("control socket: reload%s requested", force ? " force" : "");
	struct sm_msg m = { .ev = SM_EV_RELOAD };

	m.u.reload.report = &rep;
	m.u.reload.force = force;
	rc = sm_post_wait(sm, &m);
	for (size_t i = 0; i < rep.n; i++) {
		ctl_line_add(a, "%s", rep.msg[i]);
		errors += !strncmp(rep.msg[i], "error: ", 7);
	}
	cfg_msgs_free(&rep);
	if (rc < 0)
		return answer_end(a, false, "reload: %zu error%s: the files with"
				  " errors were not applied (heavy sweep"
				  " requested)", errors, errors == 1 ? "" : "s");
	return answer_end(a, true, "%s; heavy sweep requested", files ?
			  "reloaded" : "nothing to reload (no -F, no -P)");
}

static int cmd_dump_config(struct sm *sm, struct ctl_answer *a)
{
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);
	char src[600];

	if (!sm->conf)
		return answer_end(a, false, "no configuration");
	ctl_line_add(a, "# the configuration in force: key value # where it"
		     " came from");
	for (size_t i = 0; i < sm->conf->unknown.n; i++)
		ctl_line_add(a, "# warning: %s (ignored)",
			     sm->conf->unknown.msg[i]);
	for (size_t i = 0; i < sm->conf->warnings.n; i++)
		ctl_line_add(a, "# warning: %s", sm->conf->warnings.msg[i]);
	for (size_t i = 0; i < n; i++) {
		cfg_source(sm->conf, i, src, sizeof(src));
		const char *note;
		enum cfg_status st = cfg_key_status(&keys[i], &note);

		if (keys[i].flags & CFG_ALIAS)
			continue;	/* its value is its key's */
		ctl_line_add(a, "%s %s # %s%s", keys[i].name,
			     cfg_effective(sm->conf, i), src,
			     st == CFG_ST_IMPL ? "" : st == CFG_ST_MAPPED ?
			     " (mapped)" : st == CFG_ST_NA ?
			     " (not applicable)" : " (not implemented)");
	}
	return answer_end(a, true, "%zu keys", n);
}

/*
 * sms: this SM and every other SM it heard from (SMInfo answers to its
 * Gets, polls and Sets from them: sm/ha/state.c), one line each, with the
 * seconds since it was last heard from.
 */
static int cmd_sms(struct sm *sm, struct ctl_answer *a)
{
	ev_tstamp now = ev_now(sm->loop);
	unsigned n = 1;

	ctl_line_add(a, "# guid lid priority state act_count heard_s");
	ctl_line_add(a, "0x%016" PRIx64 " %u %u %s %u self", sm->port_guid,
		     sm_local_lid(sm) ? sm_local_lid(sm) : sm->port_lid,
		     sm->cfg.sm_priority, sm_state_name(sm->state),
		     sm->act_count);
	for (unsigned i = 0; i < SM_MAX_REMOTE; i++) {
		const struct sm_remote *r = &sm->remotes[i];

		if (!r->guid)
			continue;
		ctl_line_add(a, "0x%016" PRIx64 " %u %u %s %u %.1f", r->guid,
			     r->lid, r->priority,
			     sm_state_name((enum sm_state)r->state),
			     r->act_count, now - r->seen);
		n++;
	}
	sm_rogue_expire(sm);
	for (unsigned i = 0; i < SM_MAX_ROGUE; i++) {
		const struct sm_rogue *r = &sm->rogues[i];
		struct rogue_where w;
		char where[120] = "";

		if (!r->guid)
			continue;
		if (sm_rogue_where(&sm->fabric, r->guid, &w) &&
		    w.peer_node != FAB_NONE)
			snprintf(where, sizeof(where), " behind 0x%016" PRIx64
				 "[%u]", fabric_node(&sm->fabric,
						     w.peer_node)->guid,
				 w.peer_port);
		ctl_line_add(a, "0x%016" PRIx64 " %u %u %s - %.1f untrusted: "
			     "another SM_Key (%u SMInfo, %u Sets ignored)%s",
			     r->guid, r->lid, r->priority,
			     sm_state_name((enum sm_state)r->state),
			     now - r->seen, r->heard, r->sets, where);
		n++;
	}
	return answer_end(a, true, "%u SMs", n);
}

/*
 * routes report: the quality of the tables in force (routing/report.h),
 * one line of the report per answer line.  Computed on the loop on
 * demand: one pass over switches x LIDs (milliseconds on a thousand
 * hosts, about a second on the largest fabrics), for root only.
 */
static int cmd_routes_report(struct sm *sm, bool json, struct ctl_answer *a)
{
	struct routing_report rep;
	char *text, *line, *save = NULL;
	size_t len;
	int rc;

	if (!sm->routes.lft || sm->routes.n_nodes != sm->fabric.n_nodes)
		return answer_end(a, false, "no routes yet: no sweep has"
				  " completed");
	rc = routing_report_compute(&sm->fabric, &sm->routes, &rep);
	if (rc < 0)
		return answer_end(a, false, "report: %s", strerror(-rc));
	len = json ? routing_report_json(&rep, NULL, 0)
		   : routing_report_text(&rep, NULL, 0);
	text = malloc(len + 1);
	if (!text)
		return answer_end(a, false, "report: out of memory");
	if (json)
		routing_report_json(&rep, text, len + 1);
	else
		routing_report_text(&rep, text, len + 1);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		ctl_line_add(a, "%s", line);
	free(text);
	return answer_end(a, true, "%s", "");
}

/*
 * routes loads: the all-to-all load of the tables in force per channel
 * (routing_report_port_loads), for the fabric map: "ideal X" (the mean
 * load of the channels used), then per switch "0xGUID PORT:LOAD ..." for
 * its ports that carry routes (a switch on several lines when it has
 * more than LOADS_PER_LINE of them; about 150 KiB for the 4,608-host
 * tree).  Same cost as routes report's load part.
 */
#define LOADS_PER_LINE	40	/* " 255:18446744073709551615" < 1024 / 40 */
static int cmd_routes_loads(struct sm *sm, struct ctl_answer *a)
{
	struct routing_report rep;
	uint64_t *loads;
	size_t slot = 0, n = 0;
	int rc;

	if (!sm->routes.lft || sm->routes.n_nodes != sm->fabric.n_nodes)
		return answer_end(a, false, "no routes yet: no sweep has"
				  " completed");
	loads = calloc(routing_port_slots(&sm->fabric) + 1, sizeof(*loads));
	if (!loads)
		return answer_end(a, false, "loads: out of memory");
	rc = routing_report_port_loads(&sm->fabric, &sm->routes, &rep, loads);
	if (rc < 0) {
		free(loads);
		return answer_end(a, false, "loads: %s", strerror(-rc));
	}
	ctl_line_add(a, "ideal %.3f", rep.load_mean);
	for (size_t i = 0; i < sm->fabric.n_nodes; i++) {
		const struct fab_node *nd = &sm->fabric.nodes[i];
		char line[CTL_LINE_OUT];
		size_t o = 0;
		unsigned in_line = 0;

		/* a switch a line, at most LOADS_PER_LINE ports each */
		for (unsigned p = 0; p <= nd->num_ports; p++, slot++) {
			if (!loads[slot])
				continue;
			if (!in_line)
				o = (size_t)snprintf(line, sizeof(line),
						     "0x%016" PRIx64, nd->guid);
			o += (size_t)snprintf(line + o, sizeof(line) - o,
					      " %u:%" PRIu64, p, loads[slot]);
			n++;
			if (++in_line == LOADS_PER_LINE) {
				ctl_line_add(a, "%s", line);
				in_line = 0;
			}
		}
		if (in_line)
			ctl_line_add(a, "%s", line);
	}
	free(loads);
	return answer_end(a, true, "%zu channels%s", n, a->full ?
			  " (answer cut)" : "");
}

/* health, events, topology save, port enable (sm/health/health_ctl.c) */
static int cmd_health(struct sm *sm, const struct ctl_request *req,
		      struct ctl_answer *a)
{
	char msg[700] = "";
	int rc = -EINVAL;

	switch (req->cmd) {
	case CTL_CMD_HEALTH:
		rc = sm_health_ctl_report(sm, req->json, a, msg, sizeof(msg));
		break;
	case CTL_CMD_EVENTS:
		rc = sm_health_ctl_events(sm, req->since_ago >= 0 ?
					  ev_time() - req->since_ago : req->since,
					  req->json, a, msg, sizeof(msg));
		break;
	case CTL_CMD_TOPO_SAVE:
		rc = sm_health_ctl_topo_save(sm, req->path, a, msg, sizeof(msg));
		break;
	case CTL_CMD_PORT_ENABLE:
		if (req->guid)
			log_info("control socket: port enable 0x%016" PRIx64
				 " port %u", req->guid, req->port);
		else
			log_info("control socket: port enable LID %u port %u",
				 req->lid, req->port);
		rc = sm_health_ctl_port_enable(sm, req->guid, req->lid, req->port,
					       a, msg, sizeof(msg));
		break;
	default:
		break;
	}
	return answer_end(a, rc == 0, "%s", msg);
}

static int cmd_help(struct ctl_answer *a)
{
	ctl_line_add(a, "status                 state, sweeps, timings, counts");
	ctl_line_add(a, "resweep [heavy|light]  ask for a sweep (default heavy)");
	ctl_line_add(a, "reroute                heavy sweep, every LFT sent whole");
	ctl_line_add(a, "loglevel LEVEL         err, warn, info or debug, or"
		     " OpenSM's -D flags (0x03: info)");
	ctl_line_add(a, "reload [force]         as SIGHUP, with its outcome; force:"
		     " also a partitions file that drops every partition");
	ctl_line_add(a, "dump-config            the keys in force and their source");
	ctl_line_add(a, "sms                    every SM known from SMInfo");
	ctl_line_add(a, "routes report [json]   quality of the routes in force");
	ctl_line_add(a, "routes loads           routed load per switch port");
	ctl_line_add(a, "health [json]          fabric health: the findings in force");
	ctl_line_add(a, "events [since T] [json] the event history (T: epoch s,"
		     " UTC time or 10m ago)");
	ctl_line_add(a, "topology save FILE     the fabric as a reference topology");
	ctl_line_add(a, "port enable NODE PORT  PortPhysicalState Polling; ends"
		     " an isolation");
	ctl_line_add(a, "counters [NODE|GUID|LID[:PORT]] [errors] [json]"
		     "  port counters: totals, last increase");
	ctl_line_add(a, "qos show [json] [src END dst END [sid N] [pkey P]"
		     " [class C]]  QoS in force; a path's level and SL");
	return answer_end(a, true, "%s", "");
}

int ctl_execute(struct sm *sm, const struct ctl_request *req,
		struct ctl_answer *a)
{
	switch (req->cmd) {
	case CTL_CMD_STATUS:
		return cmd_status(sm, a);
	case CTL_CMD_RESWEEP:
		return cmd_resweep(sm, req->heavy, a);
	case CTL_CMD_REROUTE:
		return cmd_reroute(sm, a);
	case CTL_CMD_LOGLEVEL:
		return cmd_loglevel(sm, req->level, req->flags, a);
	case CTL_CMD_RELOAD:
		return cmd_reload(sm, req->force, a);
	case CTL_CMD_DUMP_CONFIG:
		return cmd_dump_config(sm, a);
	case CTL_CMD_HELP:
		return cmd_help(a);
	case CTL_CMD_SMS:
		return cmd_sms(sm, a);
	case CTL_CMD_ROUTES_REPORT:
		return cmd_routes_report(sm, req->json, a);
	case CTL_CMD_ROUTES_LOADS:
		return cmd_routes_loads(sm, a);
	case CTL_CMD_HEALTH:
	case CTL_CMD_EVENTS:
	case CTL_CMD_TOPO_SAVE:
	case CTL_CMD_PORT_ENABLE:
		return cmd_health(sm, req, a);
	case CTL_CMD_COUNTERS: {
		char msg[160];
		int rc = perf_ctl_counters(sm, req->target, req->errors,
					   req->json, a, msg, sizeof(msg));
		return answer_end(a, rc == 0, "%s", msg);
	}
	case CTL_CMD_QOS: {
		char msg[300] = "";
		int rc = ctl_qos_execute(sm, req, a, msg, sizeof(msg));
		return answer_end(a, rc == 0, "%s", msg);
	}
	}
	return answer_end(a, false, "unknown command");
}

int ctl_handle_line(struct sm *sm, const char *line, size_t len,
		    struct ctl_answer *a)
{
	struct ctl_request req;
	char err[200];

	if (ctl_parse(line, len, &req, err, sizeof(err)) < 0)
		return answer_end(a, false, "%s", err);
	return ctl_execute(sm, &req, a);
}

bool ctl_peer_allowed(uid_t peer, uid_t owner)
{
	return peer == 0 || peer == owner;
}

/* -------------------------------------------------------------- socket */

static void client_drop(struct ctl_client *c)
{
	struct ctl_server *s = c->srv;

	for (unsigned i = 0; i < CTL_MAX_CLIENTS; i++)
		if (s->clients[i] == c)
			s->clients[i] = NULL;
	ev_io_stop(s->sm->loop, &c->io);
	ev_timer_stop(s->sm->loop, &c->timer);
	close(c->fd);
	ctl_answer_free(&c->out);
	free(c);
}

/* Read while no answer waits, write while one does. */
static void client_watch(struct ctl_client *c)
{
	struct ev_loop *loop = c->srv->sm->loop;
	int want = c->out.len > c->out_off ? EV_WRITE : EV_READ;

	if (ev_is_active(&c->io) && (c->io.events & (EV_READ | EV_WRITE)) == want)
		return;
	ev_io_stop(loop, &c->io);
	ev_io_set(&c->io, c->fd, want);
	ev_io_start(loop, &c->io);
}

static void client_progress(struct ctl_client *c)
{
	ev_timer_again(c->srv->sm->loop, &c->timer);
}

/* Answer the next complete request in c->in, if no answer is waiting. */
static void client_requests(struct ctl_client *c)
{
	struct sm *sm = c->srv->sm;

	while (!c->closing && c->out.len == 0) {
		size_t ll = 0;
		long used = ctl_line(c->in, c->in_len, &ll);
		struct ctl_request req;
		char err[200];

		if (used == 0)
			break;
		if (used < 0) {
			answer_end(&c->out, false, "request longer than %d bytes:"
				   " closing", CTL_MAX_LINE - 1);
			c->closing = true;
			c->in_len = 0;
			break;
		}
		if (ctl_parse(c->in, ll, &req, err, sizeof(err)) < 0) {
			log_debug("control socket: uid %u: %s", (unsigned)c->uid,
				  err);
			answer_end(&c->out, false, "%s", err);
		} else {
			if (req.cmd != CTL_CMD_STATUS &&
			    req.cmd != CTL_CMD_DUMP_CONFIG &&
			    req.cmd != CTL_CMD_HELP)
				log_info("control socket: uid %u: %.*s",
					 (unsigned)c->uid, (int)ll, c->in);
			ctl_execute(sm, &req, &c->out);
		}
		memmove(c->in, c->in + used, c->in_len - (size_t)used);
		c->in_len -= (size_t)used;
	}
	if (c->eof && c->out.len == 0)
		c->closing = true;	/* answered all it sent */
}

static void on_client(struct ev_loop *loop, ev_io *w, int revents)
{
	struct ctl_client *c = w->data;

	(void)loop;
	if (revents & EV_WRITE && c->out.len > c->out_off) {
		ssize_t n = send(c->fd, c->out.buf + c->out_off,
				 c->out.len - c->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR) {
			client_drop(c);
			return;
		}
		if (n > 0) {
			c->out_off += (size_t)n;
			client_progress(c);
		}
		if (c->out_off == c->out.len) {
			c->out.len = 0;
			c->out_off = 0;
			c->out.full = false;
			if (c->closing) {
				client_drop(c);
				return;
			}
			client_requests(c);
		}
	} else if (revents & EV_READ && c->in_len < sizeof(c->in)) {
		ssize_t n = recv(c->fd, c->in + c->in_len,
				 sizeof(c->in) - c->in_len, MSG_DONTWAIT);

		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR) {
			client_drop(c);
			return;
		}
		if (n == 0) {
			/* Whatever whole lines came are answered; a half
			 * line is dropped with the connection. */
			c->eof = true;
		} else if (n > 0) {
			c->in_len += (size_t)n;
			client_progress(c);
		}
		client_requests(c);
	}
	if (c->closing && c->out.len == c->out_off) {
		client_drop(c);
		return;
	}
	if (c->eof && c->out.len == c->out_off) {
		client_drop(c);
		return;
	}
	client_watch(c);
}

static void on_client_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct ctl_client *c = w->data;

	(void)loop;
	(void)revents;
	log_debug("control socket: uid %u: no progress for %g s: dropped",
		  (unsigned)c->uid, CTL_IDLE_TIMEOUT);
	client_drop(c);
}

/* One line to a connection we will not serve, then close it. */
static void refuse(int fd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void refuse(int fd, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	(void)!send(fd, line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
	struct ctl_server *s = w->data;

	(void)revents;
	for (int k = 0; k < CTL_ACCEPT_BURST; k++) {
		struct ucred cred;
		socklen_t cl = sizeof(cred);
		struct ctl_client *c;
		unsigned slot;
		int fd = accept4(s->fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED)
				log_ratelimited(LOG_LVL_WARN, 1005, "control"
						" socket: accept: %s",
						strerror(errno));
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
			refuse(fd, "ERR cannot check the peer's credentials");
			continue;
		}
		if (!ctl_peer_allowed(cred.uid, s->owner)) {
			log_ratelimited(LOG_LVL_WARN, 1003, "control socket:"
					" pid %ld uid %u refused: neither root"
					" nor the socket's owner (uid %u)",
					(long)cred.pid, (unsigned)cred.uid,
					(unsigned)s->owner);
			refuse(fd, "ERR permission denied: uid %u is neither"
			       " root nor the socket's owner", (unsigned)cred.uid);
			continue;
		}
		for (slot = 0; slot < CTL_MAX_CLIENTS && s->clients[slot]; slot++)
			;
		if (slot == CTL_MAX_CLIENTS) {
			log_ratelimited(LOG_LVL_WARN, 1004, "control socket:"
					" %d clients connected: one more"
					" refused", CTL_MAX_CLIENTS);
			refuse(fd, "ERR busy: %d clients connected already",
			       CTL_MAX_CLIENTS);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			refuse(fd, "ERR out of memory");
			continue;
		}
		c->srv = s;
		c->fd = fd;
		c->uid = cred.uid;
		ev_io_init(&c->io, on_client, fd, EV_READ);
		c->io.data = c;
		ev_init(&c->timer, on_client_timer);
		c->timer.repeat = CTL_IDLE_TIMEOUT;
		c->timer.data = c;
		s->clients[slot] = c;
		ev_io_start(loop, &c->io);
		ev_timer_again(loop, &c->timer);
	}
}

/* The socket's directory (/run/ibsm): made when missing, one level. */
static void make_dir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return;	/* bind() says why */
}

/*
 * A socket file at our path: another daemon's (it accepts: in use), or
 * one left by a daemon that died (connection refused: stale).  0 when it
 * was stale and is gone, else -errno.  Only sockets are ever removed.
 */
static int remove_stale(const struct sockaddr_un *addr)
{
	struct stat st;
	int fd, rc;

	if (lstat(addr->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	rc = connect(fd, (const struct sockaddr *)addr, sizeof(*addr));
	if (rc == 0 || errno == EAGAIN || errno == EINPROGRESS) {
		close(fd);
		return -EADDRINUSE;
	}
	rc = errno;
	close(fd);
	if (rc != ECONNREFUSED)
		return -rc;
	return unlink(addr->sun_path) < 0 ? -errno : 0;
}

int ctl_start(struct sm *sm)
{
	const char *path = sm->cfg.control_socket;
	struct sockaddr_un addr;
	struct ctl_server *s;
	struct stat st;
	mode_t old;
	int fd, rc;

	if (!path || !*path)
		return 0;
	if (strlen(path) >= sizeof(addr.sun_path)) {
		log_warnx("ERR 1001: running without a control socket: %s:"
			  " expected a path shorter than %zu bytes", path,
			  sizeof(addr.sun_path));
		return -ENAMETOOLONG;
	}
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	memcpy(addr.sun_path, path, strlen(path));
	make_dir(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		log_warn_rc(rc, "ERR 1001: running without a control socket: %s",
			    path);
		return rc;
	}
	/* 0600 from the start: no moment where others could connect. */
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
	if (rc < 0 && errno == EADDRINUSE) {
		rc = remove_stale(&addr);
		if (rc == 0)
			rc = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
		else
			errno = -rc;
	}
	umask(old);
	if (rc < 0) {
		rc = -errno;
		close(fd);
		if (rc == -EADDRINUSE)
			log_warnx("ERR 1002: control socket %s is in use by another"
				  " process (another ibsm?); running without a"
				  " control socket", path);
		else
			log_warn_rc(rc, "ERR 1001: running without a"
				    " control socket: %s", path);
		return rc;
	}
	if (listen(fd, CTL_MAX_CLIENTS) < 0 || stat(path, &st) < 0 ||
	    chmod(path, 0600) < 0) {
		rc = -errno;
		log_warn_rc(rc, "ERR 1001: running without a control socket: %s",
			    path);
		unlink(path);
		close(fd);
		return rc;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		unlink(path);
		close(fd);
		return -ENOMEM;
	}
	s->sm = sm;
	s->fd = fd;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->owner = geteuid();
	snprintf(s->path, sizeof(s->path), "%s", path);
	ev_io_init(&s->io, on_accept, fd, EV_READ);
	s->io.data = s;
	ev_io_start(sm->loop, &s->io);
	/* Like the log flush timer: no reason by itself to keep the loop
	 * running once everything else has stopped. */
	ev_unref(sm->loop);
	sm->ctl = s;
	log_info("control socket %s (mode 0600, root and uid %u)", path,
		 (unsigned)s->owner);
	return 0;
}

void ctl_stop(struct sm *sm)
{
	struct ctl_server *s = sm->ctl;
	struct stat st;

	if (!s)
		return;
	for (unsigned i = 0; i < CTL_MAX_CLIENTS; i++)
		if (s->clients[i])
			client_drop(s->clients[i]);
	ev_ref(sm->loop);
	ev_io_stop(sm->loop, &s->io);
	close(s->fd);
	/* Only our own file: a later daemon may have replaced it. */
	if (stat(s->path, &st) == 0 && st.st_dev == s->dev &&
	    st.st_ino == s->ino)
		unlink(s->path);
	free(s);
	sm->ctl = NULL;
}
