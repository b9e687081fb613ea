/*
 * parse.c - the control socket's requests: a line into a struct
 * ctl_request, or what was expected (pure: the unit test and the fuzz
 * target call it directly).  "qos ..." is parsed by sm/ctl/cmd_qos.c.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/conf.h"
#include "sm/ctl/ctl.h"
#include "sm/log.h"

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
