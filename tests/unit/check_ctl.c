/*
 * check_ctl.c - the control socket (sm/ctl/): request framing and
 * parsing, the peer check, command dispatch on a struct sm without a
 * fabric, and the socket itself on a private loop (0600, a stale file
 * replaced, a live one left alone, a request answered without blocking).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config/conf.h"
#include "sm/ctl/ctl.h"
#include "sm/health/health.h"
#include "sm/sm.h"

static int parse(const char *s, struct ctl_request *r, char *err)
{
	return ctl_parse(s, strlen(s), r, err, 200);
}

START_TEST(line_framing)
{
	char big[CTL_MAX_LINE + 10];
	size_t ll = 99;

	ck_assert_int_eq(ctl_line("stat", 4, &ll), 0);
	ck_assert_int_eq(ctl_line("status\nreload\n", 14, &ll), 7);
	ck_assert_uint_eq(ll, 6);
	ck_assert_int_eq(ctl_line("status\r\n", 8, &ll), 8);
	ck_assert_uint_eq(ll, 6);
	ck_assert_int_eq(ctl_line("\n", 1, &ll), 1);
	ck_assert_uint_eq(ll, 0);
	/* CTL_MAX_LINE - 1 bytes and '\n' fit; CTL_MAX_LINE without one not */
	memset(big, 'a', sizeof(big));
	big[CTL_MAX_LINE - 1] = '\n';
	ck_assert_int_eq(ctl_line(big, CTL_MAX_LINE, &ll), CTL_MAX_LINE);
	ck_assert_uint_eq(ll, CTL_MAX_LINE - 1);
	memset(big, 'a', sizeof(big));
	ck_assert_int_eq(ctl_line(big, CTL_MAX_LINE - 1, &ll), 0);
	ck_assert_int_eq(ctl_line(big, CTL_MAX_LINE, &ll), -E2BIG);
	/* a '\n' beyond the limit does not count */
	big[CTL_MAX_LINE + 2] = '\n';
	ck_assert_int_eq(ctl_line(big, sizeof(big), &ll), -E2BIG);
}
END_TEST

START_TEST(parse_commands)
{
	struct ctl_request r;
	char err[200];

	ck_assert_int_eq(parse("status", &r, err), 0);
	ck_assert_int_eq(r.cmd, CTL_CMD_STATUS);
	ck_assert_int_eq(parse("  status\t ", &r, err), 0);
	ck_assert_int_eq(parse("resweep", &r, err), 0);
	ck_assert(r.cmd == CTL_CMD_RESWEEP && r.heavy);
	ck_assert_int_eq(parse("resweep light", &r, err), 0);
	ck_assert(r.cmd == CTL_CMD_RESWEEP && !r.heavy);
	ck_assert_int_eq(parse("resweep heavy", &r, err), 0);
	ck_assert(r.heavy);
	ck_assert_int_eq(parse("reroute", &r, err), 0);
	ck_assert_int_eq(r.cmd, CTL_CMD_REROUTE);
	ck_assert_int_eq(parse("loglevel debug", &r, err), 0);
	ck_assert(r.cmd == CTL_CMD_LOGLEVEL && r.level == LOG_LVL_DEBUG);
	ck_assert_int_eq(parse("loglevel 1", &r, err), 0);
	ck_assert_int_eq(r.level, LOG_LVL_WARN);
	/* numbers are OpenSM's log flags (-D), as -D maps them */
	ck_assert_int_eq(parse("loglevel 0x03", &r, err), 0);
	ck_assert(r.level == LOG_LVL_INFO && r.flags == 3);
	ck_assert_int_eq(parse("loglevel 3", &r, err), 0);
	ck_assert_int_eq(r.level, LOG_LVL_INFO);
	ck_assert_int_eq(parse("loglevel 0x0F", &r, err), 0);
	ck_assert_int_eq(r.level, LOG_LVL_DEBUG);
	ck_assert_int_eq(parse("loglevel 4", &r, err), 0);
	ck_assert_int_eq(r.level, LOG_LVL_DEBUG);
	ck_assert_int_eq(parse("loglevel 0", &r, err), 0);
	ck_assert(r.level == LOG_LVL_ERR && r.flags == 0);
	ck_assert_int_eq(parse("loglevel info", &r, err), 0);
	ck_assert_int_eq(r.flags, -1);
	ck_assert_int_eq(parse("loglevel error", &r, err), 0);
	ck_assert_int_eq(r.level, LOG_LVL_ERR);
	ck_assert_int_eq(parse("reload", &r, err), 0);
	ck_assert_int_eq(r.cmd, CTL_CMD_RELOAD);
	ck_assert(!r.force);
	ck_assert_int_eq(parse("reload force", &r, err), 0);
	ck_assert(r.cmd == CTL_CMD_RELOAD && r.force);
	ck_assert_int_eq(parse("dump-config", &r, err), 0);
	ck_assert_int_eq(r.cmd, CTL_CMD_DUMP_CONFIG);
	ck_assert_int_eq(parse("help", &r, err), 0);
	ck_assert_int_eq(r.cmd, CTL_CMD_HELP);
}
END_TEST

/* counters [NODE|GUID|LID[:PORT]] [errors] [json], in any order. */
START_TEST(parse_counters)
{
	struct ctl_request r;
	char err[200];

	ck_assert_int_eq(parse("counters", &r, err), 0);
	ck_assert(r.cmd == CTL_CMD_COUNTERS && !r.errors && !r.json &&
		  !r.target[0]);
	ck_assert_int_eq(parse("counters 0x0002c903000e0b72:3 errors json",
			       &r, err), 0);
	ck_assert_str_eq(r.target, "0x0002c903000e0b72:3");
	ck_assert(r.errors && r.json);
	ck_assert_int_eq(parse("counters json sw-a", &r, err), 0);
	ck_assert_str_eq(r.target, "sw-a");
	ck_assert(r.json && !r.errors);
	/* two targets, a target too long: refused */
	ck_assert_int_eq(parse("counters a b", &r, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "counters: expected"));
	ck_assert_int_eq(parse("counters a json errors b", &r, err), -EINVAL);
	char longer[300] = "counters ";
	memset(longer + 9, 'x', 200);
	ck_assert_int_eq(parse(longer, &r, err), -EINVAL);
}
END_TEST

START_TEST(parse_errors)
{
	struct ctl_request r;
	char err[200];

	ck_assert_int_eq(parse("", &r, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "empty request"));
	ck_assert_int_eq(parse("   ", &r, err), -EINVAL);
	ck_assert_int_eq(parse("STATUS", &r, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "unknown command 'STATUS'"));
	ck_assert_int_eq(parse("status now", &r, err), -EINVAL);
	ck_assert_str_eq(err, "status takes no argument");
	ck_assert_int_eq(parse("resweep sideways", &r, err), -EINVAL);
	ck_assert_int_eq(parse("resweep heavy light", &r, err), -EINVAL);
	ck_assert_int_eq(parse("loglevel", &r, err), -EINVAL);
	ck_assert_int_eq(parse("loglevel 0x100", &r, err), -EINVAL);
	ck_assert_int_eq(parse("loglevel 256", &r, err), -EINVAL);
	ck_assert_int_eq(parse("loglevel -1", &r, err), -EINVAL);
	ck_assert_int_eq(parse("loglevel 0x", &r, err), -EINVAL);
	ck_assert_int_eq(parse("loglevel 3x", &r, err), -EINVAL);
	ck_assert_int_eq(parse("loglevel loud", &r, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "err, warn, info or debug"));
	ck_assert_ptr_nonnull(strstr(err, "OpenSM's log flags 0-255"));
	ck_assert_int_eq(parse("reload please", &r, err), -EINVAL);
	ck_assert_int_eq(parse("reload force now", &r, err), -EINVAL);
	ck_assert_int_eq(parse("routes", &r, err), -EINVAL);
	ck_assert_str_eq(err, "routes: expected 'routes report', 'routes"
			 " report json' or 'routes loads'");
	ck_assert_int_eq(parse("routes loads", &r, err), 0);
	ck_assert_int_eq(r.cmd, CTL_CMD_ROUTES_LOADS);
	ck_assert_int_eq(parse("routes loads json", &r, err), -EINVAL);
	ck_assert_int_eq(parse("routes show", &r, err), -EINVAL);
	ck_assert_int_eq(parse("routes report xml", &r, err), -EINVAL);
	ck_assert_int_eq(parse("routes report json now", &r, err), -EINVAL);
	ck_assert_int_eq(parse("routes report", &r, err), 0);
	ck_assert_int_eq(r.cmd, CTL_CMD_ROUTES_REPORT);
	ck_assert(!r.json);
	ck_assert_int_eq(parse("routes  report\tjson", &r, err), 0);
	ck_assert_int_eq(r.cmd, CTL_CMD_ROUTES_REPORT);
	ck_assert(r.json);
	ck_assert_int_eq(parse("a b c d e f", &r, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "too many words"));
	/* a NUL, an escape, a byte above 0x7e */
	ck_assert_int_eq(ctl_parse("sta\0us", 6, &r, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "byte 0x00 at 4"));
	ck_assert_int_eq(parse("status\x1b[2J", &r, err), -EINVAL);
	ck_assert_int_eq(parse("st\xc3\xa4tus", &r, err), -EINVAL);
	/* the unknown word is quoted at most 40 bytes long */
	char longw[300];
	memset(longw, 'x', sizeof(longw) - 1);
	longw[sizeof(longw) - 1] = '\0';
	ck_assert_int_eq(parse(longw, &r, err), -EINVAL);
	ck_assert_uint_lt(strlen(err), 200);
}
END_TEST

START_TEST(parse_health_commands)
{
	struct ctl_request r;
	char err[200];

	ck_assert_int_eq(parse("health", &r, err), 0);
	ck_assert(r.cmd == CTL_CMD_HEALTH && !r.json);
	ck_assert_int_eq(parse("health json", &r, err), 0);
	ck_assert(r.cmd == CTL_CMD_HEALTH && r.json);
	ck_assert_int_eq(parse("health xml", &r, err), -EINVAL);
	ck_assert_str_eq(err, "health: expected 'health' or 'health json'");
	ck_assert_int_eq(parse("health json json", &r, err), -EINVAL);

	ck_assert_int_eq(parse("events", &r, err), 0);
	ck_assert(r.cmd == CTL_CMD_EVENTS && !r.json && r.since == 0 &&
		  r.since_ago < 0);
	ck_assert_int_eq(parse("events json", &r, err), 0);
	ck_assert(r.json);
	ck_assert_int_eq(parse("events since 1700000000", &r, err), 0);
	ck_assert(r.since == 1700000000.0 && r.since_ago < 0);
	ck_assert_int_eq(parse("events since 10m json", &r, err), 0);
	ck_assert(r.since_ago == 600.0 && r.json);
	ck_assert_int_eq(parse("events since 2h", &r, err), 0);
	ck_assert(r.since_ago == 7200.0);
	ck_assert_int_eq(parse("events since 1d", &r, err), 0);
	ck_assert(r.since_ago == 86400.0);
	ck_assert_int_eq(parse("events since 2023-11-14T22:13:20Z", &r, err), 0);
	ck_assert(r.since == 1700000000.0);
	ck_assert_int_eq(parse("events since 2023-11-14T22:13:20", &r, err), 0);
	ck_assert(r.since == 1700000000.0);
	ck_assert_int_eq(parse("events since", &r, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "events since: expected a time"));
	ck_assert_int_eq(parse("events since -5", &r, err), -EINVAL);
	ck_assert_int_eq(parse("events since 5y", &r, err), -EINVAL);
	ck_assert_int_eq(parse("events since 5mm", &r, err), -EINVAL);
	ck_assert_int_eq(parse("events since yesterday", &r, err), -EINVAL);
	ck_assert_int_eq(parse("events since 2023-13-99T99:99:99Z", &r, err),
			 -EINVAL);
	ck_assert_int_eq(parse("events json since 5m", &r, err), -EINVAL);
	ck_assert_str_eq(err, "events: expected 'events [since T] [json]'");

	ck_assert_int_eq(parse("topology save /tmp/ref.net", &r, err), 0);
	ck_assert(r.cmd == CTL_CMD_TOPO_SAVE);
	ck_assert_str_eq(r.path, "/tmp/ref.net");
	ck_assert_int_eq(parse("topology save ref.net", &r, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "absolute path"));
	ck_assert_int_eq(parse("topology save", &r, err), -EINVAL);
	ck_assert_int_eq(parse("topology load /tmp/ref.net", &r, err), -EINVAL);

	ck_assert_int_eq(parse("port enable 0x0002c90300000001 3", &r, err), 0);
	ck_assert(r.cmd == CTL_CMD_PORT_ENABLE && r.port == 3 && !r.lid);
	ck_assert(r.guid == 0x0002c90300000001ull);
	ck_assert_int_eq(parse("port enable 12 1", &r, err), 0);
	ck_assert(r.lid == 12 && !r.guid && r.port == 1);
	ck_assert_int_eq(parse("port enable 0x1f 2", &r, err), 0);
	ck_assert(r.lid == 31 && !r.guid);
	ck_assert_int_eq(parse("port enable 12", &r, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "port enable NODE PORT"));
	ck_assert_int_eq(parse("port enable 12 0", &r, err), -EINVAL);
	ck_assert_int_eq(parse("port enable 12 255", &r, err), -EINVAL);
	ck_assert_int_eq(parse("port enable 0 1", &r, err), -EINVAL);
	ck_assert_int_eq(parse("port enable 49152 1", &r, err), -EINVAL);
	ck_assert_int_eq(parse("port enable -1 1", &r, err), -EINVAL);
	ck_assert_int_eq(parse("port enable 12 +1", &r, err), -EINVAL);
	ck_assert_int_eq(parse("port enable 0x10000000000000000 1", &r, err),
			 -EINVAL);
	ck_assert_int_eq(parse("port disable 12 1", &r, err), -EINVAL);
}
END_TEST

START_TEST(peer_check)
{
	ck_assert(ctl_peer_allowed(0, 0));
	ck_assert(ctl_peer_allowed(0, 1000));
	ck_assert(ctl_peer_allowed(1000, 1000));
	ck_assert(!ctl_peer_allowed(1001, 1000));
	ck_assert(!ctl_peer_allowed(1000, 0));
}
END_TEST

/* ------------------------------------------------------------ dispatch */

static struct sm sm;
static struct cfg conf;

static void sm_setup(void)
{
	memset(&sm, 0, sizeof(sm));
	fabric_init(&sm.fabric);
	sm.state = SM_NOTACTIVE;
	sm.cfg.sm_priority = 5;
	sm.cfg.log_level = LOG_LVL_INFO;
	cfg_init(&conf);
	sm.conf = &conf;
}

static void sm_teardown(void)
{
	fabric_free(&sm.fabric);
	cfg_free(&conf);
	log_set_level(LOG_LVL_INFO);
}

/* The last line of an answer (its terminator). */
static const char *last_line(const struct ctl_answer *a)
{
	static char buf[1024];
	size_t e = a->len, s;

	ck_assert_uint_gt(e, 0);
	ck_assert_int_eq(a->buf[e - 1], '\n');
	for (s = e - 1; s > 0 && a->buf[s - 1] != '\n'; s--)
		;
	snprintf(buf, sizeof(buf), "%.*s", (int)(e - 1 - s), a->buf + s);
	return buf;
}

/* Every line but the last is no terminator. */
static void check_framing(const struct ctl_answer *a)
{
	const char *p = a->buf, *end = a->buf + a->len;
	unsigned finals = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		ck_assert_ptr_nonnull(nl);
		if (!strncmp(p, "ERR", 3) ||
		    (!strncmp(p, "OK", 2) && (p[2] == '\n' || p[2] == ' ')))
			finals++;
		for (const char *c = p; c < nl; c++)
			ck_assert((unsigned char)*c >= 0x20);
		p = nl + 1;
		if (finals)
			ck_assert_ptr_eq(p, end);
	}
	ck_assert_uint_eq(finals, 1);
}

static int run(const char *line, struct ctl_answer *a)
{
	int rc;

	memset(a, 0, sizeof(*a));
	rc = ctl_handle_line(&sm, line, strlen(line), a);
	check_framing(a);
	return rc;
}

START_TEST(status_lines)
{
	struct ctl_answer a;

	ck_assert_int_eq(run("status", &a), 0);
	ck_assert_str_eq(last_line(&a), "OK");
	ck_assert_ptr_nonnull(strstr(a.buf, "state NOTACTIVE\n"));
	ck_assert_ptr_nonnull(strstr(a.buf, "\npriority 5\n"));
	ck_assert_ptr_nonnull(strstr(a.buf, "\nswitches 0\n"));
	ck_assert_ptr_nonnull(strstr(a.buf, "\nsubnet_up no\n"));
	ck_assert_ptr_nonnull(strstr(a.buf, "\nlog_level info\n"));
	ck_assert_ptr_nonnull(strstr(a.buf, "\nperfmgr off\n"));
	ctl_answer_free(&a);
}
END_TEST

START_TEST(errors_answered)
{
	struct ctl_answer a;

	ck_assert_int_eq(run("bogus", &a), -1);
	ck_assert_str_eq(last_line(&a), "ERR unknown command 'bogus': expected"
			 " status, resweep, reroute, loglevel, reload,"
			 " dump-config, sms, routes, counters, health, events,"
			 " topology, port, qos or help");
	ctl_answer_free(&a);
	/* counters without a performance manager: ERR, not a crash */
	ck_assert_int_eq(run("counters json", &a), -1);
	ck_assert_ptr_nonnull(strstr(last_line(&a), "perfmgr is FALSE"));
	ctl_answer_free(&a);
	/* no sweep when the SM is not active */
	ck_assert_int_eq(run("resweep", &a), -1);
	ck_assert_str_eq(last_line(&a), "ERR no sweep: the SM is NOTACTIVE");
	ctl_answer_free(&a);
	ck_assert_int_eq(run("reroute", &a), -1);
	ctl_answer_free(&a);
	/* no report before a sweep has routed */
	ck_assert_int_eq(run("routes report", &a), -1);
	ck_assert_str_eq(last_line(&a), "ERR no routes yet: no sweep has"
			 " completed");
	ctl_answer_free(&a);
	ck_assert_int_eq(run("routes loads", &a), -1);
	ck_assert_str_eq(last_line(&a), "ERR no routes yet: no sweep has"
			 " completed");
	ctl_answer_free(&a);
	sm.state = SM_STANDBY;
	ck_assert_int_eq(run("resweep light", &a), -1);
	ck_assert_str_eq(last_line(&a), "ERR no sweep: the SM is STANDBY");
	ctl_answer_free(&a);
}
END_TEST

/* health, events, topology save and port enable without a fabric */
START_TEST(health_answers)
{
	struct ctl_answer a;

	ck_assert_int_eq(run("health", &a), 0);
	ck_assert_str_eq(last_line(&a), "OK 0 critical, 0 warnings");
	ck_assert_ptr_nonnull(strstr(a.buf, "fabric healthy (no sweep has"
				     " completed yet)\n"));
	ctl_answer_free(&a);
	ck_assert_int_eq(run("health json", &a), 0);
	ck_assert_ptr_nonnull(strstr(a.buf, "{\"healthy\": true,"));
	ck_assert_ptr_nonnull(strstr(a.buf, "\"findings\": [\n], \"omitted\": 0}\n"));
	ctl_answer_free(&a);
	ck_assert_int_eq(run("events json", &a), 0);
	ck_assert_str_eq(last_line(&a), "OK 0 events");
	ck_assert_ptr_nonnull(strstr(a.buf, "{\"omitted\": 0, \"events\": [\n]}"));
	ctl_answer_free(&a);
	ck_assert_int_eq(run("topology save /nonexistent/ref.net", &a), -1);
	ck_assert_str_eq(last_line(&a), "ERR topology save: no sweep has"
			 " completed");
	ctl_answer_free(&a);
	ck_assert_int_eq(run("port enable 5 1", &a), -1);
	ck_assert_str_eq(last_line(&a), "ERR port enable: the SM is NOTACTIVE:"
			 " only the master sends Sets");
	ctl_answer_free(&a);
	sm.state = SM_MASTER;
	ck_assert_int_eq(run("port enable 0x0002c90300000001 1", &a), -1);
	ck_assert_str_eq(last_line(&a), "ERR port enable: no node"
			 " 0x0002c90300000001 in the subnet");
	ctl_answer_free(&a);
	ck_assert_int_eq(run("port enable 5 1", &a), -1);
	ck_assert_str_eq(last_line(&a), "ERR port enable: no node has LID 5");
	ctl_answer_free(&a);
	sm_health_free(&sm);
}
END_TEST

START_TEST(loglevel_applied)
{
	struct ctl_answer a;

	ck_assert_int_eq(run("loglevel debug", &a), 0);
	ck_assert_str_eq(last_line(&a), "OK log level info -> debug");
	ck_assert_int_eq(sm.cfg.log_level, LOG_LVL_DEBUG);
	ck_assert(log_enabled(LOG_LVL_DEBUG));
	ctl_answer_free(&a);
	ck_assert_int_eq(run("loglevel warn", &a), 0);
	ck_assert(!log_enabled(LOG_LVL_INFO));
	ck_assert(log_enabled(LOG_LVL_WARN));
	ctl_answer_free(&a);
	/* OpenSM's default flags: errors and info; the answer says how the
	 * number was read */
	ck_assert_int_eq(run("loglevel 0x03", &a), 0);
	ck_assert_str_eq(last_line(&a), "OK log level warn -> info (OpenSM log"
			 " flags 0x03)");
	ck_assert(log_enabled(LOG_LVL_INFO));
	ck_assert(!log_enabled(LOG_LVL_DEBUG));
	ctl_answer_free(&a);
}
END_TEST

START_TEST(dump_config_sources)
{
	struct ctl_answer a;
	size_t i;
	char err[200];
	const char *file = "sm_priority 7\n# comment\nlmc 2\n";

	ck_assert_ptr_nonnull(cfg_key_find("sm_priority", &i));
	ck_assert_int_eq(cfg_set(&conf, i, "3", CFG_SRC_CMDLINE, 0, err,
				 sizeof(err)), 0);
	ck_assert_int_eq(cfg_read_text(&conf, "/etc/x.conf", file,
				       strlen(file)), 0);
	setenv("OSM_CACHE_DIR", "/tmp/cache-x", 1);
	ck_assert_int_eq(run("dump-config", &a), 0);
	unsetenv("OSM_CACHE_DIR");
	ck_assert_ptr_nonnull(strstr(a.buf, "\nsm_priority 3 # command line\n"));
	ck_assert_ptr_nonnull(strstr(a.buf, "\nlmc 2 # /etc/x.conf:3\n"));
	ck_assert_ptr_nonnull(strstr(a.buf, "\nreassign_lids FALSE # default\n"));
	ck_assert_ptr_nonnull(strstr(a.buf, "\navoid_throttled_links FALSE # default"
				     " (not implemented)\n"));
	ck_assert_ptr_nonnull(strstr(a.buf, "\nqos FALSE # default\n"));
	ck_assert_ptr_nonnull(strstr(a.buf, "\ncache_dir /tmp/cache-x #"
				     " environment OSM_CACHE_DIR\n"));
	ck_assert_ptr_nonnull(strstr(a.buf, "\ncontrol_socket"
				     " /run/ibsm/ibsm.sock # default\n"));
	ck_assert_ptr_nonnull(strstr(last_line(&a), " keys"));
	ctl_answer_free(&a);
	sm.conf = NULL;
	ck_assert_int_eq(run("dump-config", &a), -1);
	ctl_answer_free(&a);
}
END_TEST

/* A reload whose -F file has errors: every message comes back. */
static int fake_reload(struct sm *s, struct cfg_msgs *report)
{
	(void)s;
	if (report) {
		cfg_msgs_add(report, "error: /etc/x.conf:4: lmc 9: expected an"
			     " integer 0-7");
		cfg_msgs_add(report, "refused: /etc/x.conf has 1 error");
	}
	return -EINVAL;
}

static int good_reload(struct sm *s, struct cfg_msgs *report)
{
	(void)s;
	if (report)
		cfg_msgs_add(report, "changed: sm_priority 0 -> 5");
	return 0;
}

START_TEST(reload_outcome)
{
	struct ctl_answer a;

	sm.reload = fake_reload;
	ck_assert_int_eq(run("reload", &a), -1);
	ck_assert_ptr_nonnull(strstr(a.buf, "error: /etc/x.conf:4: lmc 9:"
				     " expected an integer 0-7\n"));
	ck_assert_ptr_nonnull(strstr(a.buf, "refused: /etc/x.conf has 1 error\n"));
	ck_assert_str_eq(last_line(&a), "ERR reload: 1 error: the files with"
			 " errors were not applied (heavy sweep requested)");
	ctl_answer_free(&a);
	sm.reload = good_reload;
	ck_assert_int_eq(run("reload", &a), 0);
	ck_assert_ptr_nonnull(strstr(a.buf, "changed: sm_priority 0 -> 5\n"));
	ctl_answer_free(&a);
}
END_TEST

/* Data lines never pass for a terminator; control bytes are masked. */
START_TEST(answer_lines_safe)
{
	struct ctl_answer a;
	char err[200];

	memset(&a, 0, sizeof(a));
	ctl_line_add(&a, "%s", "OK fine");
	ctl_line_add(&a, "%s", "ERR no");
	ctl_line_add(&a, "%s", "bell\a and\nnewline");
	ck_assert_str_eq(a.buf, "- OK fine\n- ERR no\nbell? and?newline\n");
	ctl_answer_free(&a);
	/* an answer past CTL_MAX_ANSWER is cut and ends in ERR */
	memset(&a, 0, sizeof(a));
	memset(err, 'x', 150);
	err[150] = '\0';
	for (unsigned i = 0; i < CTL_MAX_ANSWER / 100; i++)
		ctl_line_add(&a, "%s", err);
	ck_assert(a.full);
	ck_assert_uint_le(a.len, CTL_MAX_ANSWER);
	ctl_answer_free(&a);
}
END_TEST

/* -------------------------------------------------------------- socket */

static char dir[48], path[96];

static void sock_setup(void)
{
	sm_setup();
	snprintf(dir, sizeof(dir), "/tmp/check_ctl.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sub/ibsm.sock", dir);
	sm.loop = ev_loop_new(EVFLAG_AUTO);
	sm.cfg.control_socket = path;
}

static void sock_teardown(void)
{
	char sub[160];

	ctl_stop(&sm);
	ev_loop_destroy(sm.loop);
	unlink(path);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	rmdir(sub);
	rmdir(dir);
	sm_teardown();
}

static int connect_to(const char *p)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", p);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Turn the loop until fd has an answer ending in a terminator line. */
static void read_answer(int fd, char *buf, size_t len)
{
	size_t got = 0;

	for (int i = 0; i < 2000; i++) {
		ssize_t n;

		ev_run(sm.loop, EVRUN_NOWAIT);
		n = recv(fd, buf + got, len - 1 - got, 0);
		if (n > 0) {
			got += (size_t)n;
			buf[got] = '\0';
			if (strstr(buf, "\nOK") || !strncmp(buf, "ERR", 3) ||
			    strstr(buf, "\nERR"))
				if (buf[got - 1] == '\n')
					return;
		}
		usleep(1000);
	}
	ck_abort_msg("no answer: '%s'", buf);
}

START_TEST(socket_serves)
{
	struct stat st;
	char buf[8192];
	int fd;

	ck_assert_int_eq(ctl_start(&sm), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(S_ISSOCK(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	fd = connect_to(path);
	ck_assert_int_ge(fd, 0);
	/* two requests in one write, the second malformed */
	ck_assert_int_eq(send(fd, "status\nsta\x01tus\n", 15, 0), 15);
	read_answer(fd, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "state NOTACTIVE\n"));
	ck_assert_ptr_nonnull(strstr(buf, "\nOK\n"));
	if (!strstr(buf, "\nERR malformed"))
		read_answer(fd, buf, sizeof(buf));
	close(fd);
	/* an oversized line: ERR, then the connection is closed */
	fd = connect_to(path);
	char big[CTL_MAX_LINE + 1];
	memset(big, 'a', sizeof(big));
	ck_assert_int_eq(send(fd, big, sizeof(big), 0), (ssize_t)sizeof(big));
	read_answer(fd, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "ERR request longer than 511 bytes"));
	for (int i = 0; i < 100; i++) {
		ev_run(sm.loop, EVRUN_NOWAIT);
		if (recv(fd, buf, sizeof(buf), 0) == 0)
			break;
		usleep(1000);
		ck_assert_int_lt(i, 99);
	}
	close(fd);
	ctl_stop(&sm);
	ck_assert_int_eq(stat(path, &st), -1);	/* removed at stop */
}
END_TEST

START_TEST(socket_stale_and_live)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	int other;

	/* stale: a socket file nobody listens on is replaced */
	ck_assert_int_eq(ctl_start(&sm), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	{
		/* leave the file behind as a crashed daemon would */
		char keep[160];
		snprintf(keep, sizeof(keep), "%s.keep", path);
		ck_assert_int_eq(link(path, keep), 0);
		ctl_stop(&sm);
		ck_assert_int_eq(rename(keep, path), 0);
	}
	ck_assert_int_eq(ctl_start(&sm), 0);
	ctl_stop(&sm);

	/* live: another process's socket is left alone */
	other = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	ck_assert_int_eq(bind(other, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(other, 4), 0);
	ck_assert_int_eq(ctl_start(&sm), -EADDRINUSE);
	ck_assert_ptr_null(sm.ctl);
	ck_assert_int_eq(stat(path, &st), 0);
	close(other);
	unlink(path);

	/* not a socket: never removed */
	FILE *fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	fclose(fp);
	ck_assert_int_lt(ctl_start(&sm), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ctl");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, line_framing);
	tcase_add_test(tc, parse_commands);
	tcase_add_test(tc, parse_counters);
	tcase_add_test(tc, parse_errors);
	tcase_add_test(tc, parse_health_commands);
	tcase_add_test(tc, peer_check);
	suite_add_tcase(s, tc);
	tc = tcase_create("dispatch");
	tcase_add_checked_fixture(tc, sm_setup, sm_teardown);
	tcase_add_test(tc, status_lines);
	tcase_add_test(tc, errors_answered);
	tcase_add_test(tc, health_answers);
	tcase_add_test(tc, loglevel_applied);
	tcase_add_test(tc, dump_config_sources);
	tcase_add_test(tc, reload_outcome);
	tcase_add_test(tc, answer_lines_safe);
	suite_add_tcase(s, tc);
	tc = tcase_create("socket");
	tcase_add_checked_fixture(tc, sock_setup, sock_teardown);
	tcase_add_test(tc, socket_serves);
	tcase_add_test(tc, socket_stale_and_live);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
