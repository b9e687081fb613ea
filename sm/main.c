/*
 * main.c - ibsm: command line, the event loop, and the sweep driver.
 *
 * One libev loop runs everything.  The only other thread is the umad
 * receive pump (mad/umad_io.c).  Signal handlers are libev watchers, so
 * they run on the loop like everything else.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <ev.h>

#include "mad/engine.h"
#include "mad/umad_io.h"
#include "sm/discover.h"
#include "sm/fabric.h"
#include "sm/log.h"
#include "sm/topo_dump.h"

struct options {
	uint64_t guid;
	bool once;
	const char *log_file;
	enum log_level log_level;
	unsigned timeout_ms;
	unsigned retries;
	unsigned max_smps;
	const char *dump_fabric;
};

struct ibsm {
	struct options opt;
	struct ev_loop *loop;
	struct umad_io *io;
	struct mad_engine *engine;
	struct fabric fabric;
	struct discovery *disc;
	bool sweep_again;		/* SIGHUP during a sweep */
	ev_signal sig_int, sig_term, sig_hup;
	int exit_code;
};

static void usage(FILE *fp)
{
	fprintf(fp,
"Usage: ibsm [options]\n"
"InfiniBand subnet manager (OpenSM-compatible command line).\n\n"
"  -g, --guid GUID        bind to the local port with this port GUID\n"
"                         (default: the first port whose link is up)\n"
"  -o, --once             sweep once, report and exit\n"
"  -f, --log_file FILE    log file; 'stdout' or '-' for the terminal\n"
"                         (default /var/log/ibsm.log)\n"
"  -V, --verbose          maximum verbosity (debug log)\n"
"  -D, --debug FLAGS      OpenSM log flags: 0x01 error, 0x02 info,\n"
"                         0x04 and above debug (default 0x03)\n"
"  -t, --timeout MS       per-SMP timeout in ms (default 200)\n"
"      --retries N        re-sends of an unanswered SMP (default 3)\n"
"  -n, --maxsmps N        SMPs on the wire at once (default 4)\n"
"      --dump-fabric FILE write the discovered fabric in ibnetdiscover's\n"
"                         topology format (atomically)\n"
"  -h, --help             this help\n"
"      --version          print the version and exit\n");
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

static int parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_RETRIES = 256, OPT_VERSION, OPT_DUMP_FABRIC };
	static const struct option longopts[] = {
		{ "guid", required_argument, NULL, 'g' },
		{ "once", no_argument, NULL, 'o' },
		{ "log_file", required_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'V' },
		{ "debug", required_argument, NULL, 'D' },
		{ "timeout", required_argument, NULL, 't' },
		{ "retries", required_argument, NULL, OPT_RETRIES },
		{ "maxsmps", required_argument, NULL, 'n' },
		{ "dump-fabric", required_argument, NULL, OPT_DUMP_FABRIC },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	int c;

	*o = (struct options){
		.log_file = "/var/log/ibsm.log",
		.log_level = LOG_LVL_INFO,
		.timeout_ms = 200,
		.retries = 3,
		.max_smps = 4,
	};
	while ((c = getopt_long(argc, argv, "g:of:VD:t:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'g': {
			char *end;
			errno = 0;
			o->guid = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end || !o->guid) {
				fprintf(stderr, "ibsm: -g %s: expected a port GUID"
					" such as 0x0002c90300001234\n", optarg);
				return -EINVAL;
			}
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
			if (parse_uint(optarg, 0xff, &v) < 0) {
				fprintf(stderr, "ibsm: -D %s: expected log flags"
					" 0x00-0xff\n", optarg);
				return -EINVAL;
			}
			o->log_level = v >= 0x04 ? LOG_LVL_DEBUG :
				       v & 0x02 ? LOG_LVL_INFO :
				       v & 0x01 ? LOG_LVL_WARN : LOG_LVL_ERR;
			break;
		case 't':
			if (parse_uint(optarg, 60000, &v) < 0 || !v) {
				fprintf(stderr, "ibsm: -t %s: expected a timeout"
					" of 1-60000 ms\n", optarg);
				return -EINVAL;
			}
			o->timeout_ms = (unsigned)v;
			break;
		case OPT_RETRIES:
			if (parse_uint(optarg, 100, &v) < 0) {
				fprintf(stderr, "ibsm: --retries %s: expected"
					" 0-100\n", optarg);
				return -EINVAL;
			}
			o->retries = (unsigned)v;
			break;
		case 'n':
			if (parse_uint(optarg, 65535, &v) < 0 || !v) {
				fprintf(stderr, "ibsm: -n %s: expected 1-65535"
					" SMPs\n", optarg);
				return -EINVAL;
			}
			o->max_smps = (unsigned)v;
			break;
		case OPT_DUMP_FABRIC:
			o->dump_fabric = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case OPT_VERSION:
			printf("ibsm %s\n", PACKAGE_VERSION);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ibsm: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static void on_mad(void *arg, const void *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	struct ibsm *sm = arg;

	mad_engine_recv(sm->engine, mad, len, from, status);
}

static long peak_rss_kb(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

static void sweep_start(struct ibsm *sm);

static void on_discovered(void *arg, const struct discover_result *r)
{
	struct ibsm *sm = arg;
	struct fabric_counts c;
	const struct mad_engine_stats *st = mad_engine_stats(sm->engine);

	fabric_count(&sm->fabric, &c);
	log_info("discovery: %zu switches, %zu CAs, %zu routers, %zu ports,"
		 " %zu links in %.3f s; %u SMPs, %" PRIu64 " re-sent, %u failed,"
		 " %u dead ends", c.switches, c.cas, c.routers, c.ports, c.links,
		 r->seconds, r->smps, st->resends, r->failed, r->dead_ends);
	if (sm->opt.once)
		printf("discovered %zu switches, %zu CAs, %zu ports, %zu links"
		       " in %.3f s: smps=%u resent=%" PRIu64 " failed=%u"
		       " dead_ends=%u peak_rss_kb=%ld\n", c.switches, c.cas,
		       c.ports, c.links, r->seconds, r->smps, st->resends,
		       r->failed, r->dead_ends, peak_rss_kb());
	discover_free(sm->disc);
	sm->disc = NULL;
	if (sm->fabric.local_node == FAB_NONE) {
		log_err("ERR 0001: the local node did not answer NodeInfo:"
			" nothing discovered");
		sm->exit_code = 1;
	}
	if (sm->opt.dump_fabric && sm->fabric.local_node != FAB_NONE) {
		int rc = topo_dump_file(&sm->fabric, sm->opt.dump_fabric);
		if (rc < 0) {
			log_err("ERR 0002: cannot write %s: %s",
				sm->opt.dump_fabric, strerror(-rc));
			sm->exit_code = 1;
		}
	}
	if (sm->opt.once) {
		ev_break(sm->loop, EVBREAK_ALL);
		return;
	}
	if (sm->sweep_again) {
		sm->sweep_again = false;
		sweep_start(sm);
	}
}

/* A heavy sweep: rediscover the fabric from scratch into a new model. */
static void sweep_start(struct ibsm *sm)
{
	int rc;

	if (sm->disc) {
		sm->sweep_again = true;
		return;
	}
	fabric_free(&sm->fabric);
	fabric_init(&sm->fabric);
	rc = discover_start(&sm->disc, sm->engine, &sm->fabric, on_discovered, sm);
	if (rc < 0) {
		log_err("ERR 0003: cannot start discovery: %s", strerror(-rc));
		sm->exit_code = 1;
		ev_break(sm->loop, EVBREAK_ALL);
	}
}

static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
	struct ibsm *sm = w->data;

	if (w->signum == SIGHUP) {
		log_info("SIGHUP: heavy sweep requested");
		sweep_start(sm);
		return;
	}
	log_info("signal %d: exiting", w->signum);
	ev_break(loop, EVBREAK_ALL);
}

static void signals_start(struct ibsm *sm)
{
	ev_signal *w[] = { &sm->sig_int, &sm->sig_term, &sm->sig_hup };
	int num[] = { SIGINT, SIGTERM, SIGHUP };

	for (int i = 0; i < 3; i++) {
		ev_signal_init(w[i], on_signal, num[i]);
		w[i]->data = sm;
		ev_signal_start(sm->loop, w[i]);
	}
}

int main(int argc, char **argv)
{
	static const uint8_t classes[] = { MAD_CLASS_SMI, MAD_CLASS_SMI_DR };
	struct ibsm sm = { 0 };
	int rc;

	if (parse_options(argc, argv, &sm.opt) < 0)
		return 2;
	rc = log_open(sm.opt.log_file, sm.opt.log_level);
	if (rc < 0) {
		fprintf(stderr, "ibsm: cannot open log file %s: %s\n",
			sm.opt.log_file, strerror(-rc));
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	sm.loop = ev_default_loop(EVFLAG_AUTO);
	fabric_init(&sm.fabric);

	rc = umad_io_open(&sm.io, sm.loop, sm.opt.guid, classes,
			  sizeof(classes), true);
	if (rc < 0) {
		if (sm.opt.guid)
			fprintf(stderr, "ibsm: cannot open the port with GUID 0x%016"
				PRIx64 ": %s\n", sm.opt.guid, strerror(-rc));
		else
			fprintf(stderr, "ibsm: cannot open an InfiniBand port: %s\n",
				strerror(-rc));
		log_err("ERR 0004: cannot open port: %s", strerror(-rc));
		return 1;
	}
	const struct umad_port_info *pi = umad_io_port(sm.io);
	log_info("ibsm %s bound to %s port %d, port GUID 0x%016" PRIx64,
		 PACKAGE_VERSION, pi->ca, pi->port, pi->port_guid);

	struct mad_transport tr = umad_io_transport(sm.io);
	struct mad_engine_opts eo = {
		.max_wire_smps = sm.opt.max_smps,
		.max_wire_gmps = 64,
		.timeout_ms = sm.opt.timeout_ms,
		.retries = sm.opt.retries,
	};
	rc = mad_engine_new(&sm.engine, sm.loop, &tr, &eo);
	if (rc == 0)
		rc = umad_io_start(sm.io, on_mad, &sm);
	if (rc < 0) {
		log_err("ERR 0005: cannot start the MAD engine: %s", strerror(-rc));
		umad_io_close(sm.io);
		return 1;
	}
	signals_start(&sm);
	sweep_start(&sm);
	ev_run(sm.loop, 0);

	/* The pump must stop before the engine it feeds goes away. */
	umad_io_close(sm.io);
	discover_free(sm.disc);
	mad_engine_free(sm.engine);
	fabric_free(&sm.fabric);
	log_close();
	return sm.exit_code;
}
