/*
 * main.c - ibsm: command line, the event loop, and the sweep driver.
 *
 * One libev loop runs everything.  The only other thread is the umad
 * receive pump (mad/umad_io.c).  Signal handlers are libev watchers, so
 * they run on the loop like everything else (sm/state.c:
 * sm_watchers_start).
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <unistd.h>
#include <ev.h>

#include "mad/engine.h"
#include "mad/umad_io.h"
#include "sm/discover.h"
#include "sm/fileutil.h"
#include "sm/fabric.h"
#include "sm/limits.h"
#include "sm/log.h"
#include "sm/program.h"
#include "sm/sa/sa.h"
#include "sm/sm.h"
#include "sm/topo_dump.h"

static void usage(FILE *fp)
{
	fprintf(fp,
"Usage: ibsm [options]\n"
"InfiniBand subnet manager (OpenSM-compatible command line).\n\n"
"  -g, --guid GUID        bind to the local port with this port GUID\n"
"                         (default: the first port whose link is up)\n"
"  -o, --once             sweep once, report and exit\n"
"  -f, --log_file FILE    log file; 'stdout' or '-' for the terminal\n"
"                         (default /var/log/opensm.log, as OpenSM)\n"
"  -V, --verbose          maximum verbosity (debug log)\n"
"  -D, --debug FLAGS      OpenSM log flags: 0x01 error, 0x02 info,\n"
"                         0x04 and above debug (default 0x03)\n"
"  -t, --timeout MS       per-SMP timeout in ms (default 200)\n"
"      --retries N        re-sends of an unanswered SMP (default 3)\n"
"  -n, --maxsmps N        SMPs on the wire at once (default 4)\n"
"  -p, --priority N       SM priority 0-15 (default 0)\n"
"  -l, --lmc N            LMC 0-7: 2^N LIDs per CA port (default 0)\n"
"  -r, --reassign_lids    give every port a new LID (ignore the cache)\n"
"  -s, --sweep N          light sweep every N s, 0 = off (default 10)\n"
"  -R, --routing_engine L routing engines to try in order (default minhop)\n"
"  -J, --pidfile FILE     write the daemon's pid to FILE (atomically) once\n"
"                         it runs; removed at exit (ibsmctl partitions apply)\n"
"  -P, --Pconfig FILE     partitions.conf (OpenSM's format); without it\n"
"                         every port is in the default partition only\n"
"      --cache-dir DIR    guid2lid cache directory (default $OSM_CACHE_DIR\n"
"                         or /var/cache/opensm)\n"
"      --dump-dir DIR     opensm-subnet.lst, opensm-lfts.dump (default\n"
"                         $OSM_TMP_DIR or /var/log)\n"
"      --dump-lfts        also write opensm-lfts.dump (as -D 0x40 does;\n"
"                         one line per switch and LID: large fabrics give\n"
"                         large files)\n"
"      --dump-fabric FILE write the discovered fabric in ibnetdiscover's\n"
"                         topology format (atomically)\n"
"      --discover-only    discover, report and exit without changing anything\n"
"      --part_enforce WHAT partition enforcement on switch ports facing\n"
"                         partitioned end ports: both, in, out, off\n"
"                         (opensm.conf part_enforce; default both)\n"
"      --allow_both_pkeys a partition member may be both full and limited\n"
"                         (opensm.conf allow_both_pkeys)\n"
"      --keep_pkey_indexes TRUE|FALSE\n"
"                         a P_Key keeps its index in a port's table\n"
"                         across partition changes (opensm.conf\n"
"                         keep_pkey_indexes; default TRUE)\n"
"  -h, --help             this help\n"
"      --version          print the version and exit\n");
	limits_usage(fp);
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	unsigned long v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > max || s[0] == '-')
		return -EINVAL;
	*out = v;
	return 0;
}

static int bad_value(const char *opt, const char *val, const char *expected)
{
	fprintf(stderr, "ibsm: %s %s: expected %s\n", opt, val, expected);
	return -EINVAL;
}

static void dir_default(char *dst, size_t sz, const char *env, const char *def)
{
	const char *v = getenv(env);
	snprintf(dst, sz, "%s", v && *v ? v : def);
}

enum {
	OPT_RETRIES = 256, OPT_VERSION, OPT_DUMP_FABRIC, OPT_CACHE_DIR,
	OPT_DUMP_DIR, OPT_DISCOVER_ONLY, OPT_DUMP_LFTS,
	OPT_PART_ENFORCE, OPT_ALLOW_BOTH_PKEYS, OPT_KEEP_PKEY_INDEXES,
};

/* -J/--pidfile (OpenSM's spelling): where `ibsmctl partitions apply`
 * finds the pid to send SIGHUP to, until a control socket exists. */
static const char *pid_file;
/* The limits of sm/limits.h: getopt values from here on. */
enum { OPT_LIMIT_FIRST = 512 };

static int parse_options(int argc, char **argv, struct sm_config *o,
			 bool *discover_only)
{
	static const struct option longopts[] = {
		{ "guid", required_argument, NULL, 'g' },
		{ "once", no_argument, NULL, 'o' },
		{ "log_file", required_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'V' },
		{ "debug", required_argument, NULL, 'D' },
		{ "timeout", required_argument, NULL, 't' },
		{ "retries", required_argument, NULL, OPT_RETRIES },
		{ "maxsmps", required_argument, NULL, 'n' },
		{ "priority", required_argument, NULL, 'p' },
		{ "lmc", required_argument, NULL, 'l' },
		{ "reassign_lids", no_argument, NULL, 'r' },
		{ "sweep", required_argument, NULL, 's' },
		{ "routing_engine", required_argument, NULL, 'R' },
		{ "Pconfig", required_argument, NULL, 'P' },
		{ "pidfile", required_argument, NULL, 'J' },
		{ "cache-dir", required_argument, NULL, OPT_CACHE_DIR },
		{ "dump-dir", required_argument, NULL, OPT_DUMP_DIR },
		{ "dump-fabric", required_argument, NULL, OPT_DUMP_FABRIC },
		{ "discover-only", no_argument, NULL, OPT_DISCOVER_ONLY },
		{ "dump-lfts", no_argument, NULL, OPT_DUMP_LFTS },
		{ "part_enforce", required_argument, NULL, OPT_PART_ENFORCE },
		{ "allow_both_pkeys", no_argument, NULL, OPT_ALLOW_BOTH_PKEYS },
		{ "keep_pkey_indexes", required_argument, NULL,
		  OPT_KEEP_PKEY_INDEXES },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	/* longopts, then the limits of sm/limits.c, then the terminator. */
	struct option all[sizeof(longopts) / sizeof(longopts[0]) + 32];
	const size_t n_base = sizeof(longopts) / sizeof(longopts[0]) - 1;
	unsigned long v;
	int c;

	_Static_assert((int)OPT_LIMIT_FIRST > (int)OPT_KEEP_PKEY_INDEXES, "getopt values");
	memcpy(all, longopts, n_base * sizeof(all[0]));
	if (n_limit_opts > 31)
		abort();	/* all[] is too short: a programming error */
	all[n_base + limits_longopts(all + n_base, OPT_LIMIT_FIRST)] =
		(struct option){ NULL, 0, NULL, 0 };

	/* OpenSM's defaults (opensm -c). */
	*o = (struct sm_config){
		.log_file = "/var/log/opensm.log",
		.log_level = LOG_LVL_INFO,
		.transaction_timeout = 200,
		.transaction_retries = 3,
		.max_wire_smps = 4,
		.sweep_interval = 10,
		.subnet_prefix = 0xfe80000000000000ull,
		.subnet_timeout = 18,
		.packet_life_time = 0x12,
		.head_of_queue_lifetime = 0x12,
		.leaf_head_of_queue_lifetime = 0x10,
		.max_op_vls = 5,
	};
	limits_defaults(o);
	dir_default(o->cache_dir, sizeof(o->cache_dir), "OSM_CACHE_DIR",
		    "/var/cache/opensm");
	dir_default(o->dump_dir, sizeof(o->dump_dir), "OSM_TMP_DIR", "/var/log");
	*discover_only = false;
	while ((c = getopt_long(argc, argv, "g:of:VD:t:n:p:l:rs:R:P:J:h", all,
				NULL)) != -1) {
		switch (c) {
		case 'g': {
			char *end;
			errno = 0;
			o->guid = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end || !o->guid)
				return bad_value("-g", optarg, "a port GUID such"
						 " as 0x0002c90300001234");
			break;
		}
		case 'o':
			o->once = true;
			break;
		case 'f':
			o->log_file = optarg;
			break;
		case 'V':
			o->log_level = LOG_LVL_DEBUG;
			break;
		case 'D':
			if (parse_uint(optarg, 0xff, &v) < 0)
				return bad_value("-D", optarg, "log flags 0x00-0xff");
			/* OpenSM writes its LFT dump with OSM_LOG_ROUTING. */
			o->dump_lfts |= (v & 0x40) != 0;
			o->log_level = v >= 0x04 ? LOG_LVL_DEBUG :
				       v & 0x02 ? LOG_LVL_INFO :
				       v & 0x01 ? LOG_LVL_WARN : LOG_LVL_ERR;
			break;
		case 't':
			if (parse_uint(optarg, 60000, &v) < 0 || !v)
				return bad_value("-t", optarg, "a timeout of 1-60000 ms");
			o->transaction_timeout = (unsigned)v;
			break;
		case OPT_RETRIES:
			if (parse_uint(optarg, 100, &v) < 0)
				return bad_value("--retries", optarg, "0-100");
			o->transaction_retries = (unsigned)v;
			break;
		case 'n':
			if (parse_uint(optarg, 65535, &v) < 0 || !v)
				return bad_value("-n", optarg, "1-65535 SMPs");
			o->max_wire_smps = (unsigned)v;
			break;
		case 'p':
			if (parse_uint(optarg, 15, &v) < 0)
				return bad_value("-p", optarg, "a priority 0-15");
			o->sm_priority = (uint8_t)v;
			break;
		case 'l':
			if (parse_uint(optarg, 7, &v) < 0)
				return bad_value("-l", optarg, "an LMC 0-7");
			o->lmc = (uint8_t)v;
			break;
		case 'r':
			o->reassign_lids = true;
			break;
		case 's':
			if (parse_uint(optarg, 86400, &v) < 0)
				return bad_value("-s", optarg, "0-86400 seconds");
			o->sweep_interval = (unsigned)v;
			break;
		case 'R': {
			char list[256], *save = NULL;
			snprintf(list, sizeof(list), "%s", optarg);
			for (char *t = strtok_r(list, ",", &save); t;
			     t = strtok_r(NULL, ",", &save))
				if (!routing_find(t))
					return bad_value("-R", optarg,
							 "a comma list of routing"
							 " engines (known: minhop)");
			o->routing_engine = optarg;
			break;
		}
		case 'P':
			o->partition_config = optarg;
			break;
		case 'J':
			pid_file = optarg;
			break;
		case OPT_CACHE_DIR:
			snprintf(o->cache_dir, sizeof(o->cache_dir), "%s", optarg);
			break;
		case OPT_DUMP_DIR:
			snprintf(o->dump_dir, sizeof(o->dump_dir), "%s", optarg);
			break;
		case OPT_DUMP_FABRIC:
			o->dump_fabric = optarg;
			break;
		case OPT_DUMP_LFTS:
			o->dump_lfts = true;
			break;
		case OPT_PART_ENFORCE:
			/* opensm.conf part_enforce: the same four words */
			if (!strcmp(optarg, "both"))
				o->part_enforce = SM_PART_ENFORCE_BOTH;
			else if (!strcmp(optarg, "in"))
				o->part_enforce = SM_PART_ENFORCE_IN;
			else if (!strcmp(optarg, "out"))
				o->part_enforce = SM_PART_ENFORCE_OUT;
			else if (!strcmp(optarg, "off"))
				o->part_enforce = SM_PART_ENFORCE_OFF;
			else
				return bad_value("--part_enforce", optarg,
						 "both, in, out or off");
			break;
		case OPT_ALLOW_BOTH_PKEYS:
			o->allow_both_pkeys = true;
			break;
		case OPT_KEEP_PKEY_INDEXES:
			/* opensm.conf booleans: TRUE/FALSE */
			if (!strcasecmp(optarg, "TRUE"))
				o->no_keep_pkey_indexes = false;
			else if (!strcasecmp(optarg, "FALSE"))
				o->no_keep_pkey_indexes = true;
			else
				return bad_value("--keep_pkey_indexes", optarg,
						 "TRUE or FALSE");
			break;
		case OPT_DISCOVER_ONLY:
			*discover_only = true;
			o->once = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case OPT_VERSION:
			printf("ibsm %s\n", PACKAGE_VERSION);
			exit(0);
		default:
			if (c >= OPT_LIMIT_FIRST &&
			    c < OPT_LIMIT_FIRST + (int)n_limit_opts) {
				char err[160];

				if (limit_parse(o, (size_t)(c - OPT_LIMIT_FIRST),
						optarg, err, sizeof(err)) < 0) {
					fprintf(stderr, "ibsm: %s\n", err);
					return -EINVAL;
				}
				break;
			}
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ibsm: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	o->summary = o->once;
	return 0;
}

static void on_mad(void *arg, const void *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	struct sm *sm = arg;

	mad_engine_recv(sm->engine, mad, len, from, status);
}

/* The receive pump's error state changed (mad/pump.h): log it once. */
static void on_recv_error(void *arg, int err, uint64_t errors)
{
	if (err < 0)
		log_err("ERR 0601: receiving MADs fails: %s (%" PRIu64 " errors);"
			" retrying with back-off", strerror(-err), errors);
	else
		log_info("receiving MADs works again after %" PRIu64 " errors",
			 errors);
}

/* At exit: what the receive queue dropped and the engine refused. */
static void log_mad_counters(struct sm *sm)
{
	struct pump_stats ps;
	const struct mad_engine_stats *st = mad_engine_stats(sm->engine);

	if (umad_io_stats(sm->io, &ps) < 0)
		return;
	log_info("MADs: %" PRIu64 " received, %" PRIu64 " dropped (queue full),"
		 " %" PRIu64 " dropped (one source over its share), %" PRIu64
		 " of them answers, %" PRIu64 " SMP answers to no request on"
		 " the wire; queue peak %u of %u; %" PRIu64 " receive errors;"
		 " %" PRIu64 " unmatched, %" PRIu64 " misrouted answers; %" PRIu64
		 " requests refused (engine queue full), engine queue peaks"
		 " %u of %u SMPs, %u of %u GMPs",
		 ps.queue.queued, ps.queue.dropped_full, ps.queue.dropped_source,
		 ps.queue.dropped_responses, ps.queue.dropped_unexpected,
		 ps.queue.high_water, ps.queue.cap,
		 ps.recv_errors, st->unmatched, st->misrouted, st->refused,
		 st->max_queued[0], SM_LIMIT(sm->cfg.max_queued_smps,
					     ENGINE_MAX_QUEUED_SMPS),
		 st->max_queued[1], SM_LIMIT(sm->cfg.max_queued_gmps,
					     ENGINE_MAX_QUEUED_GMPS));
}

/* At exit: the traps and network-driven log lines, with their limits. */
static void log_trap_counters(const struct sm *sm)
{
	log_info("traps: %u received, %u rejected, %u over their source's"
		 " budget (%g at once, %g per second, %u sources); %u heavy"
		 " sweeps started by traps (hold-off %g ms, at most every %g s)",
		 sm->stats.traps, sm->stats.traps_rejected,
		 sm->stats.traps_limited, sm_trap_burst(sm), sm_trap_rate(sm),
		 sm_trap_sources(sm), sm->stats.trap_sweeps,
		 sm_trap_holdoff(sm) * 1e3, sm_trap_sweep_interval(sm));
	log_info("log: %lu rate-limited lines suppressed (%u at once, %g per"
		 " second per code)", log_ratelimit_dropped_total(),
		 SM_LIMIT(sm->cfg.log_burst, LOG_RL_BURST),
		 SM_LIMIT(sm->cfg.log_rate, LOG_RL_RATE));
}

/* At start: every limit of sm/limits.c in force. */
static void log_limits(const struct sm *sm)
{
	char buf[1024];

	limits_format(&sm->cfg, buf, sizeof(buf));
	log_info("limits: %s", buf);
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

/* --discover-only: one discovery sweep, a report, no Sets at all. */
struct discover_job {
	struct sm *sm;
	struct discovery *disc;
};

static void on_discovered_only(void *arg, const struct discover_result *r)
{
	struct discover_job *job = arg;
	struct sm *sm = job->sm;
	struct fabric_counts c;
	const struct mad_engine_stats *st = mad_engine_stats(sm->engine);

	fabric_count(&sm->fabric, &c);
	log_info("discovery: %zu switches, %zu CAs, %zu ports, %zu links in"
		 " %.3f s; %u SMPs, %" PRIu64 " re-sent, %u failed, %u dead ends",
		 c.switches, c.cas, c.ports, c.links, r->seconds, r->smps,
		 st->resends, r->failed, r->dead_ends);
	printf("discovered %zu switches, %zu CAs, %zu ports, %zu links in %.3f s:"
	       " smps=%u resent=%" PRIu64 " failed=%u dead_ends=%u"
	       " peak_rss_kb=%ld\n", c.switches, c.cas, c.ports, c.links,
	       r->seconds, r->smps, st->resends, r->failed, r->dead_ends,
	       peak_rss_kb());
	if (sm->fabric.local_node == FAB_NONE) {
		log_err("ERR 0001: the local node did not answer NodeInfo");
		sm->exit_code = 1;
	} else if (sm->cfg.dump_fabric) {
		int rc = topo_dump_file(&sm->fabric, sm->cfg.dump_fabric);
		if (rc < 0) {
			log_err("ERR 0002: cannot write %s: %s",
				sm->cfg.dump_fabric, strerror(-rc));
			sm->exit_code = 1;
		}
	}
	ev_break(sm->loop, EVBREAK_ALL);
}

static int write_pid(FILE *fp, const void *arg)
{
	(void)arg;
	return fprintf(fp, "%ld\n", (long)getpid()) < 0 ? -EIO : 0;
}

int main(int argc, char **argv)
{
	static const uint8_t classes[] = { MAD_CLASS_SMI, MAD_CLASS_SMI_DR,
					   MAD_CLASS_SA };
	struct sm sm = { 0 };
	struct discover_job job = { &sm, NULL };
	bool discover_only;
	int rc;

	if (parse_options(argc, argv, &sm.cfg, &discover_only) < 0)
		return 2;
#ifdef __GLIBC__
	/*
	 * SA answers of megabytes come and go (sm/sa/sa.c).  glibc raises
	 * its mmap threshold to the size of each mmapped block freed, after
	 * which such buffers come from the heap and their pages stay in the
	 * RSS for good; a fixed threshold keeps them mmapped, returned to
	 * the kernel when freed.
	 */
	mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
	rc = log_open(sm.cfg.log_file, sm.cfg.log_level);
	if (rc < 0) {
		fprintf(stderr, "ibsm: cannot open log file %s: %s\n",
			sm.cfg.log_file, strerror(-rc));
		return 1;
	}
	log_ratelimit_set(sm.cfg.log_burst, sm.cfg.log_rate);
	log_limits(&sm);
	if (sm_parts_load(&sm, true) < 0) {
		fprintf(stderr, "ibsm: %s: not started (see the errors above)\n",
			sm.cfg.partition_config);
		log_close();
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	sm.loop = ev_default_loop(EVFLAG_AUTO);
	fabric_init(&sm.fabric);
	sm.images = lft_images_new();
	sm.memos = port_memos_new();

	rc = umad_io_open(&sm.io, sm.loop, sm.cfg.guid, classes,
			  sizeof(classes), !discover_only);
	if (rc < 0) {
		if (sm.cfg.guid)
			fprintf(stderr, "ibsm: cannot open the port with GUID 0x%016"
				PRIx64 ": %s\n", sm.cfg.guid, strerror(-rc));
		else
			fprintf(stderr, "ibsm: cannot open an InfiniBand port: %s\n",
				strerror(-rc));
		log_err("ERR 0004: cannot open port: %s", strerror(-rc));
		port_memos_free(sm.memos);
		lft_images_free(sm.images);
		return 1;
	}
	const struct umad_port_info *pi = umad_io_port(sm.io);
	sm.port_guid = pi->port_guid;
	log_info("ibsm %s bound to %s port %d, port GUID 0x%016" PRIx64,
		 PACKAGE_VERSION, pi->ca, pi->port, pi->port_guid);
	umad_io_set_queue_len(sm.io, sm.cfg.rx_queue);

	struct mad_transport tr = umad_io_transport(sm.io);
	struct mad_engine_opts eo = {
		.max_wire_smps = sm.cfg.max_wire_smps,
		.max_wire_gmps = 64,
		.timeout_ms = sm.cfg.transaction_timeout,
		.retries = sm.cfg.transaction_retries,
	};
	rc = mad_engine_new(&sm.engine, sm.loop, &tr, &eo);
	if (rc == 0)
		mad_engine_set_queue_limits(sm.engine, sm.cfg.max_queued_smps,
					    sm.cfg.max_queued_gmps);
	if (rc == 0 && !discover_only)
		rc = sm_agents_start(&sm);
	if (rc == 0 && !discover_only)
		rc = sa_start(&sm);
	if (rc == 0 && !discover_only)
		rc = umad_io_set_sm(sm.io, true);
	if (rc == 0)
		rc = umad_io_start(sm.io, on_mad, &sm);
	if (rc < 0) {
		log_err("ERR 0005: cannot start the MAD engine: %s", strerror(-rc));
		umad_io_close(sm.io);
		return 1;
	}
	umad_io_on_error(sm.io, on_recv_error, &sm);
	sm_watchers_start(&sm);
	if (discover_only)
		rc = discover_start(&job.disc, sm.engine, &sm.fabric, false,
				    on_discovered_only, &job);
	else
		sm_event(&sm, SM_EV_START);
	/* The pid file once the SM runs, so a pid in it is one that takes
	 * SIGHUP; written whole (temp + rename), removed at exit. */
	if (rc == 0 && pid_file) {
		rc = write_file_atomic(pid_file, write_pid, NULL);
		if (rc < 0) {
			log_err("ERR 0008: cannot write the pid file %s: %s",
				pid_file, strerror(-rc));
			fprintf(stderr, "ibsm: cannot write the pid file %s: %s\n",
				pid_file, strerror(-rc));
			pid_file = NULL;
			sm.exit_code = 1;
		}
	}
	if (rc == 0)
		ev_run(sm.loop, 0);
	if (pid_file)
		unlink(pid_file);

	log_mad_counters(&sm);
	if (!discover_only)
		log_trap_counters(&sm);
	/* Stop the pump before the engine it feeds; cancelled requests call
	 * back into the sweeps, which are told to ignore them first. */
	umad_io_close(sm.io);
	sweep_heavy_abort(&sm);
	sweep_light_abort(&sm);
	sa_stop(&sm);
	mad_engine_free(sm.engine);
	sweep_heavy_abort(&sm);
	sweep_light_abort(&sm);
	discover_free(job.disc);
	fabric_free(&sm.fabric);
	routing_result_free(&sm.routes);
	lid_cache_free(sm.lids);
	lft_images_free(sm.images);
	port_memos_free(sm.memos);
	sm_parts_free(&sm);
	log_close();
	return sm.exit_code;
}
