/*
 * opts.c - the command line (see opts.h).
 *
 * OpenSM 3.3.23's options as its --help and opensm(8) list them, in that
 * order, then ibsm's own.  An option whose key ibsm does not implement is
 * accepted like any other; the daemon says once that it is ignored.
 */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/conf.h"
#include "config/opts.h"
#include "config/limits.h"

#define N no_argument
#define A required_argument
/* An option that sets key to its argument / a flag that sets key to v. */
#define KA(l, s, key, meta, help) { l, s, A, key, NULL, OPT_SP_NONE, meta, help }
#define KF(l, s, key, v, help) { l, s, N, key, v, OPT_SP_NONE, NULL, help }
#define SP(l, s, arg, sp, meta, help) { l, s, arg, NULL, NULL, sp, meta, help }

const struct cfg_opt cfg_opts[] = {
	SP("version", 0, N, OPT_SP_VERSION, NULL, "print the version and exit"),
	SP("config", 'F', A, OPT_SP_CONFIG, "FILE",
	   "read opensm.conf FILE (the command line wins over it)"),
	SP("create-config", 'c', A, OPT_SP_CREATE, "FILE",
	   "write the configuration in force to FILE in opensm.conf format,"
	   " commented, and exit"),
	SP("check-config", 0, N, OPT_SP_CHECK, NULL,
	   "check the -F file and every file it names, list its warnings and"
	   " the keys it sets that ibsm does not implement; exit 0 when ibsm"
	   " would start with it, else 2"),
	SP("strict", 0, N, OPT_SP_STRICT, NULL,
	   "the warnings of the -F file (unknown keys, bad values of keys ibsm"
	   " does not implement, keys set that it does not implement) are"
	   " errors"),
	KA("guid", 'g', "guid", "GUID",
	   "bind to the local port with this port GUID (0: first port up)"),
	KA("lmc", 'l', "lmc", "N", "LMC 0-7: 2^N LIDs per CA port"),
	KA("priority", 'p', "sm_priority", "N", "SM priority 0-15"),
	KA("subnet_prefix", 0, "subnet_prefix", "PREFIX", "subnet prefix"),
	KA("smkey", 'k', "sm_key", "KEY", "SM_Key"),
	KA("sm_key", 0, "sm_key", "KEY", NULL),
	KF("reassign_lids", 'r', "reassign_lids", "TRUE",
	   "give every port a new LID (ignore the cache)"),
	KA("routing_engine", 'R', "routing_engine", "LIST",
	   "routing engines to try in order (default auto)"),
	KF("do_mesh_analysis", 0, "do_mesh_analysis", "TRUE", "lash: mesh analysis"),
	KA("lash_start_vl", 0, "lash_start_vl", "VL", "lash: first VL"),
	KA("sm_sl", 0, "sm_sl", "SL", "SL of SM traffic"),
	KA("nue_max_num_vls", 0, "nue_max_num_vls", "N", "nue: VLs"),
	KF("connect_roots", 'z', "connect_roots", "TRUE", "updn: root LIDs by shortest paths"),
	KF("ucast_cache", 'A', "use_ucast_cache", "TRUE", "unicast routing cache"),
	KA("lid_matrix_file", 'M', "lid_matrix_dump_file", "FILE", "file routing: LID matrix"),
	KA("lfts_file", 'U', "lfts_file", "FILE", "file routing: LFTs"),
	KA("sadb_file", 'S', "sa_db_file", "FILE", "SA database file"),
	KA("root_guid_file", 'a', "root_guid_file", "FILE", "updn/ftree: root GUIDs"),
	KA("cn_guid_file", 'u', "cn_guid_file", "FILE", "ftree: compute node GUIDs"),
	KA("io_guid_file", 'G', "io_guid_file", "FILE", "ftree: I/O node GUIDs"),
	KF("port-shifting", 0, "port_shifting", "TRUE", "port shifting"),
	KA("scatter-ports", 0, "scatter_ports", "SEED", "scatter ports (random seed)"),
	KA("max_reverse_hops", 'H', "max_reverse_hops", "N", "ftree: reverse hops"),
	KA("ids_guid_file", 'm', "ids_guid_file", "FILE", "updn: switch ids for equal ranks"),
	KA("guid_routing_order_file", 'X', "guid_routing_order_file", "FILE",
	   "routing order of GUIDs"),
	KA("torus_config", 0, "torus_config", "FILE", "torus-2QoS configuration"),
	SP("once", 'o', N, OPT_SP_ONCE, NULL, "sweep once, report and exit"),
	KA("sweep", 's', "sweep_interval", "N",
	   "light sweep every N s, 0 = off"),
	KA("timeout", 't', "transaction_timeout", "MS", "per-SMP timeout in ms"),
	KA("retries", 0, "transaction_retries", "N",
	   "re-sends of an unanswered SMP"),
	KA("maxsmps", 'n', "max_wire_smps", "N", "SMPs on the wire at once"),
	KA("console", 'q', "console", "MODE", "console: off, local, loopback"),
	KA("console-port", 'C', "console_port", "PORT", "console port"),
	KA("ignore_guids", 'i', "port_prof_ignore_file", "FILE",
	   "minhop: switch ports its balance does not count"),
	KA("hop_weights_file", 'w', "hop_weights_file", "FILE",
	   "minhop: switch port weights"),
	KA("port_search_ordering_file", 'O', "port_search_ordering_file", "FILE",
	   "port search ordering"),
	KA("dimn_ports_file", 0, "port_search_ordering_file", "FILE", NULL),
	KF("honor_guid2lid", 'x', "honor_guid2lid_file", "TRUE",
	   "honor the guid2lid file"),
	KA("dump_files_dir", 0, "dump_files_dir", "DIR",
	   "opensm-subnet.lst, opensm-lfts.dump ($OSM_TMP_DIR)"),
	KA("log_file", 'f', "log_file", "FILE",
	   "log file; 'stdout' or '-' for the terminal"),
	KA("log_limit", 'L', "log_max_size", "MB", "log size limit"),
	KF("erase_log_file", 'e', "accum_log_file", "FALSE",
	   "start a new log file"),
	KA("Pconfig", 'P', "partition_config_file", "FILE",
	   "partitions.conf (OpenSM's format)"),
	KF("no_part_enforce", 'N', "no_partition_enforcement", "TRUE",
	   "no partition enforcement (deprecated: -Z off)"),
	KA("part_enforce", 'Z', "part_enforce", "WHAT",
	   "partition enforcement: both, in, out, off"),
	KF("allow_both_pkeys", 'W', "allow_both_pkeys", "TRUE",
	   "a partition member may be both full and limited"),
	KA("keep_pkey_indexes", 0, "keep_pkey_indexes", "TRUE|FALSE",
	   "a P_Key keeps its index in a port's table (default TRUE)"),
	KF("qos", 'Q', "qos", "TRUE", "QoS"),
	KA("qos_policy_file", 'Y', "qos_policy_file", "FILE", "QoS policy"),
	KF("congestion_control", 0, "congestion_control", "TRUE",
	   "congestion control"),
	KA("cc_key", 0, "cc_key", "KEY", "congestion control key"),
	KF("stay_on_fatal", 'y', "exit_on_fatal", "FALSE",
	   "stay up on fatal errors"),
	KF("daemon", 'B', "daemon", "TRUE", "run in the background"),
	KF("inactive", 'I', "sm_inactive", "TRUE", "start inactive"),
	KF("perfmgr", 0, "perfmgr", "TRUE", "performance manager"),
	KA("perfmgr_sweep_time_s", 0, "perfmgr_sweep_time_s", "S",
	   "performance manager sweep"),
	KA("prefix_routes_file", 0, "prefix_routes_file", "FILE", "prefix routes"),
	KF("consolidate_ipv6_snm_req", 0, "consolidate_ipv6_snm_req", "TRUE",
	   "consolidate IPv6 solicited-node joins"),
	KF("guid_routing_order_no_scatter", 0, "guid_routing_order_no_scatter",
	   "TRUE", "no scatter with guid_routing_order_file"),
	KA("log_prefix", 0, "log_prefix", "TEXT", "syslog prefix"),
	SP("verbose", 'v', N, OPT_SP_VERBOSE, NULL,
	   "one more level of log flags (repeatable)"),
	KF("V", 'V', "log_flags", "0xFF", "maximum verbosity (debug log)"),
	KA("D", 'D', "log_flags", "FLAGS",
	   "log flags: 0x01 error, 0x02 info, 0x04 and above debug"),
	SP("debug", 'd', A, OPT_SP_DEBUG, "N",
	   "0: ignore other SMs, 1: single thread, 2: flush the log,"
	   " 3: no multicast, 10: testability"),
	KA("pidfile", 'J', "pidfile", "FILE",
	   "write the daemon's pid to FILE once it runs; removed at exit"),
	SP("help", 'h', N, OPT_SP_HELP, NULL, "this help"),
	SP(NULL, '?', N, OPT_SP_HELP, NULL, NULL),
	/* ibsm's own */
	KA("cache-dir", 0, "cache_dir", "DIR",
	   "guid2lid cache directory ($OSM_CACHE_DIR)"),
	KA("dump-dir", 0, "dump_files_dir", "DIR", "as --dump_files_dir"),
	KA("transport", 0, "transport", "umad|ibsim",
	   "ibsim: speak the simulator's protocol, no umad2sim (tests)"),
	KA("control-socket", 0, "control_socket", "PATH",
	   "control socket for ibsmctl ('(null)': none)"),
	KA("metrics-listen", 0, "metrics_listen", "ADDR:PORT",
	   "serve Prometheus metrics over HTTP there (e.g. 127.0.0.1:9683)"),
	SP("dump-lfts", 0, N, OPT_SP_DUMP_LFTS, NULL,
	   "also write opensm-lfts.dump (as -D 0x40 does)"),
	KA("topology-ref", 0, "topology_ref", "FILE",
	   "reference topology (ibnetdiscover format) for the health checks"),
	SP("dump-fabric", 0, A, OPT_SP_DUMP_FABRIC, "FILE",
	   "write the discovered fabric in ibnetdiscover's format"),
	SP("discover-only", 0, N, OPT_SP_DISCOVER_ONLY, NULL,
	   "discover, report and exit without changing anything"),
	SP("route-only", 0, A, OPT_SP_ROUTE_ONLY, "FILE",
	   "route a topology file offline (no fabric), print the quality"
	   " report and exit 0 when every check passes"),
	SP("json", 0, N, OPT_SP_JSON, NULL, "--route-only: the report in JSON"),
};
const size_t n_cfg_opts = sizeof(cfg_opts) / sizeof(cfg_opts[0]);
/* cfg_opt_of() tells an option from a limit by its getopt value. */
static_assert(OPT_LONG_BASE + sizeof(cfg_opts) / sizeof(cfg_opts[0]) <=
	      OPT_LIMIT_BASE, "options' getopt values run into the limits'");

int cfg_opts_getopt(char *shorts, size_t len, struct option **longs)
{
	size_t n = 1, k = 0;
	struct option *lo = calloc(n_cfg_opts + n_limit_opts + 1, sizeof(*lo));

	if (!lo)
		return -ENOMEM;
	shorts[0] = ':';	/* a missing argument returns ':', not '?' */
	for (size_t i = 0; i < n_cfg_opts; i++) {
		const struct cfg_opt *o = &cfg_opts[i];

		if (o->sht && o->sht != '?' && n + 3 < len) {
			shorts[n++] = o->sht;
			if (o->arg == required_argument)
				shorts[n++] = ':';
		}
		if (o->lng)
			lo[k++] = (struct option){ o->lng, o->arg, NULL,
						   OPT_LONG_BASE + (int)i };
	}
	shorts[n] = '\0';
	for (size_t i = 0; i < n_limit_opts; i++)
		lo[k++] = (struct option){ limit_opts[i].name, required_argument,
					   NULL, OPT_LIMIT_BASE + (int)i };
	*longs = lo;
	return 0;
}

const struct cfg_opt *cfg_opt_of(int c)
{
	if (c >= OPT_LONG_BASE && c < OPT_LONG_BASE + (int)n_cfg_opts)
		return &cfg_opts[c - OPT_LONG_BASE];
	for (size_t i = 0; i < n_cfg_opts; i++)
		if (c > 0 && c != '?' && cfg_opts[i].sht == c)
			return &cfg_opts[i];
	return NULL;
}

void cfg_opts_usage(FILE *fp)
{
	fprintf(fp,
"Usage: ibsm [options]\n"
"InfiniBand subnet manager with OpenSM's command line and opensm.conf.\n"
"Every OpenSM 3.3.23 option is accepted; those whose feature ibsm lacks\n"
"say so once at start and are ignored.  [key] is the opensm.conf key set.\n\n");
	for (size_t i = 0; i < n_cfg_opts; i++) {
		const struct cfg_opt *o = &cfg_opts[i];
		const struct cfg_key *k = o->key ? cfg_key_find(o->key, NULL) : NULL;
		char spell[64];

		if (!o->help)
			continue;
		if (o->sht)
			snprintf(spell, sizeof(spell), "-%c, --%s%s%s", o->sht,
				 o->lng, o->meta ? " " : "",
				 o->meta ? o->meta : "");
		else
			snprintf(spell, sizeof(spell), "    --%s%s%s", o->lng,
				 o->meta ? " " : "", o->meta ? o->meta : "");
		fprintf(fp, "  %-32s %s", spell, o->help);
		if (k) {
			const char *note;
			enum cfg_status st = cfg_key_status(k, &note);

			fprintf(fp, " [%s%s]", k->name,
				st == CFG_ST_IMPL ? "" : st == CFG_ST_MAPPED ?
				": mapped" : st == CFG_ST_NA ?
				": not applicable" : ": not implemented");
		}
		fputc('\n', fp);
	}
	limits_usage(fp);
}
