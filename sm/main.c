/*
 * main.c - ibsm: command line, the event loop, and the sweep driver.
 *
 * One libev loop runs everything.  The only other thread is the umad
 * receive pump (mad/umad_io.c), and with --transport ibsim there is none
 * (mad/sim_io.c: the loop reads the simulator's socket).  Signal handlers are libev watchers, so
 * they run on the loop like everything else (sm/ha/state.c:
 * sm_watchers_start).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
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
#include <sys/resource.h>
#include <unistd.h>
#include <ev.h>

#include "config/compat.h"
#include "config/conf.h"
#include "config/fileutil.h"
#include "config/opts.h"
#include "mad/engine.h"
#include "mad/sendq.h"
#include "mad/umad_io.h"
#include "mad/sim_io.h"
#include "sm/discover.h"
#include "sm/health/health.h"
#include "model/fabric.h"
#include "config/limits.h"
#include "sm/log.h"
#include "partitions/partitions.h"
#include "qos/qos.h"
#include "sm/mcast/mcast.h"
#include "sm/mcast/mft.h"
#include "sm/program.h"
#include "sm/sa/mcmember.h"
#include "sm/sa/sa.h"
#include "sm/ha/sync.h"
#include "sm/route.h"
#include "sm/quick.h"
#include "sm/perf/perf.h"
#include "sm/mkey.h"
#include "sm/sm.h"
#include "sm/ctl/ctl.h"
#include "sm/metrics/metrics.h"
#include "sm/pidfile.h"
#include "sm/daemon.h"
#include "sm/fatal.h"
#include "sm/topo_file.h"
#include "routing/torus_conf.h"

/*
 * The command line and the config file (config/conf.h, config/opts.h):
 * options set opensm.conf keys, the -F file fills in the keys the
 * command line left alone, and the keys in force are copied into
 * struct sm_config.  What else the command line asks for is here.
 */
struct run_opts {
	bool	 discover_only;
	bool	 check;			/* --check-config */
	bool	 strict;		/* --strict */
	const char *config_file;	/* -F */
	const char *create_file;	/* -c */
	const char *route_only;		/* --route-only FILE */
	bool	 json;			/* --json */
	char	 notes[1024];		/* options ibsm ignores, for the log */
};

/* The not-implemented note of an option (once per key), to stderr now
 * and to the log once it is open. */
static void note_ignored(struct run_opts *r, const char *spell,
			 const char *key)
{
	size_t n = strlen(r->notes);

	if (strstr(r->notes, key))
		return;
	log_stderr(LOG_LVL_WARN, "%s: %s is not implemented yet; ignored",
		spell, key);
	snprintf(r->notes + n, sizeof(r->notes) - n, "%s%s (%s)",
		 n ? ", " : "", spell, key);
}

static int set_key(struct cfg *conf, struct run_opts *r, const char *spell,
		   const char *key, const char *val)
{
	size_t i;
	const struct cfg_key *k = cfg_key_find(key, &i);
	char err[200], mapped[512], note[300];

	if (!k)
		abort();	/* the option table names a missing key */
	if (!strcmp(key, "routing_engine") &&
	    cfg_map_engines(val, mapped, sizeof(mapped), note,
			    sizeof(note)) > 0) {
		log_stderr(LOG_LVL_WARN, "warning: %s %s: %s", spell, val, note);
		val = mapped;
	}
	if (cfg_set(conf, i, val, CFG_SRC_CMDLINE, 0, err, sizeof(err)) < 0) {
		log_stderr(LOG_LVL_ERR, "%s %s: expected %s", spell, val, err);
		return -EINVAL;
	}
	if (!(k->flags & CFG_IMPL))
		note_ignored(r, spell, key);
	return 0;
}

/* OpenSM's -d N debug switches. */
static int debug_switch(struct cfg *conf, struct run_opts *r,
			const char *spell, const char *arg)
{
	static const char *const keys[] = { "ignore_other_sm", "single_thread",
					    "force_log_flush",
					    "disable_multicast" };
	char *end;
	long v = strtol(arg, &end, 0);

	if (*arg && !*end && v >= 0 && v <= 3)
		return set_key(conf, r, spell, keys[v], "TRUE");
	if (*arg && !*end && v == 10) {
		note_ignored(r, spell, "testability mode");
		return 0;
	}
	log_stderr(LOG_LVL_ERR, "%s %s: expected 0, 1, 2, 3 or 10", spell, arg);
	return -EINVAL;
}

/* -v: one more level of log flags, as OpenSM counts them. */
static int verbose_more(struct cfg *conf, struct run_opts *r)
{
	size_t i;
	char v[16];

	cfg_key_find("log_flags", &i);
	snprintf(v, sizeof(v), "0x%02lx",
		 ((strtoul(cfg_get(conf, i), NULL, 0) << 1) | 1) & 0xff);
	return set_key(conf, r, "-v", "log_flags", v);
}

static int parse_options(int argc, char **argv, struct sm_config *o,
			 struct cfg *conf, struct run_opts *r)
{
	struct option *longs;
	char shorts[256], spell[64];
	int c, rc = 0;

	memset(r, 0, sizeof(*r));
	cfg_init(conf);
	if (cfg_opts_getopt(shorts, sizeof(shorts), &longs) < 0)
		return -ENOMEM;
	opterr = 0;
	while (rc == 0 && (c = getopt_long(argc, argv, shorts, longs,
					   NULL)) != -1) {
		const struct cfg_opt *op = cfg_opt_of(c);

		if (c >= OPT_LIMIT_BASE &&
		    c < OPT_LIMIT_BASE + (int)n_limit_opts) {
			const char *name = limit_opts[c - OPT_LIMIT_BASE].name;

			snprintf(spell, sizeof(spell), "--%s", name);
			rc = set_key(conf, r, spell, name, optarg);
			continue;
		}
		if (c == '?' || c == ':') {
			/* getopt's own errors (opterr is 0); "-?" is help */
			if (c == '?' && optopt == '?') {
				op = cfg_opt_of('h');
			} else {
				const struct cfg_opt *lo = cfg_opt_of(optopt);

				if (optopt >= OPT_LONG_BASE && lo)
					snprintf(spell, sizeof(spell), "--%s",
						 lo->lng);
				else if (optopt >= OPT_LIMIT_BASE)
					snprintf(spell, sizeof(spell), "--%s",
						 limit_opts[optopt -
							    OPT_LIMIT_BASE].name);
				else if (optopt > 0 && optopt < 256)
					snprintf(spell, sizeof(spell), "-%c", optopt);
				else
					snprintf(spell, sizeof(spell), "%s",
						 argv[optind - 1]);
				log_stderr(LOG_LVL_ERR, "%s: %s (ibsm --help lists"
					" the options)", spell, c == ':' ?
					"expected an argument" : "unknown option");
				rc = -EINVAL;
				break;
			}
		}
		if (!op) {
			cfg_opts_usage(stderr);
			rc = -EINVAL;
			break;
		}
		if (c >= OPT_LONG_BASE || !op->sht)
			snprintf(spell, sizeof(spell), "--%s", op->lng);
		else
			snprintf(spell, sizeof(spell), "-%c", op->sht);
		if (op->key) {
			rc = set_key(conf, r, spell, op->key,
				     op->fixed ? op->fixed : optarg);
			continue;
		}
		switch (op->sp) {
		case OPT_SP_NONE:
			break;
		case OPT_SP_CONFIG:
			r->config_file = optarg;
			break;
		case OPT_SP_CREATE:
			r->create_file = optarg;
			break;
		case OPT_SP_CHECK:
			r->check = true;
			break;
		case OPT_SP_ONCE:
			o->once = true;
			break;
		case OPT_SP_HELP:
			cfg_opts_usage(stdout);
			free(longs);
			cfg_free(conf);
			exit(0);
		case OPT_SP_VERSION:
			printf("ibsm %s\n", PACKAGE_VERSION);
#ifdef HAVE_LIBSYSTEMD
			printf("built with libsystemd (sd_notify, journal fields)\n");
#else
			printf("built without libsystemd\n");
#endif
			free(longs);
			cfg_free(conf);
			exit(0);
		case OPT_SP_VERBOSE:
			rc = verbose_more(conf, r);
			break;
		case OPT_SP_DEBUG:
			rc = debug_switch(conf, r, spell, optarg);
			break;
		case OPT_SP_DUMP_FABRIC:
			o->dump_fabric = optarg;
			break;
		case OPT_SP_DISCOVER_ONLY:
			r->discover_only = true;
			o->once = true;
			break;
		case OPT_SP_DUMP_LFTS:
			o->dump_lfts = true;
			break;
		case OPT_SP_ROUTE_ONLY:
			r->route_only = optarg;
			break;
		case OPT_SP_JSON:
			r->json = true;
			break;
		case OPT_SP_STRICT:
			r->strict = true;
			break;
		}
	}
	free(longs);
	if (rc < 0)
		return rc;
	if (optind < argc) {
		log_stderr(LOG_LVL_ERR, "unexpected argument '%s'", argv[optind]);
		return -EINVAL;
	}
	o->summary = o->once;
	return 0;
}

/*
 * The -F file: 0, or -EINVAL after printing every error (the daemon does
 * not start on a file with errors: bad values of keys it implements).
 * Its warnings (unknown keys, bad values of keys ibsm does not implement,
 * Mellanox OpenSM 5.x keys and engine names) are printed once here.
 */
static int read_config(struct cfg *conf, const struct run_opts *r)
{
	int rc;

	if (!r->config_file)
		return 0;
	rc = cfg_read_file(conf, r->config_file);
	if (rc < 0 && rc != -EINVAL) {
		log_stderr_rc(LOG_LVL_ERR, rc, "cannot read %s", r->config_file);
		return rc;
	}
	for (size_t i = 0; i < conf->errors.n; i++)
		log_stderr(LOG_LVL_ERR, "%s", conf->errors.msg[i]);
	for (size_t i = 0; i < conf->unknown.n; i++)
		log_stderr(LOG_LVL_WARN, "warning: %s (ignored)",
			conf->unknown.msg[i]);
	for (size_t i = 0; i < conf->warnings.n; i++)
		log_stderr(LOG_LVL_WARN, "warning: %s", conf->warnings.msg[i]);
	return rc;
}

/* Where key i was set, for messages: "FILE:LINE" or "command line". */
static void key_where(const struct cfg *conf, size_t i, char *buf, size_t len)
{
	if (conf->v[i].src == CFG_SRC_FILE)
		snprintf(buf, len, "%s:%u", conf->file, conf->v[i].line);
	else
		snprintf(buf, len, "command line");
}

static bool qos_on(const struct cfg *conf)
{
	size_t i;

	return cfg_key_find("qos", &i) && !strcmp(cfg_get(conf, i), "TRUE");
}

/* --check-config of qos_policy_file: the whole policy grammar (1: bad). */
static size_t check_qos_file(const char *path)
{
	struct qos_policy p;
	struct qos_error e;
	int rc = qos_load(path, &p, &e);

	if (rc == 0) {
		qos_policy_free(&p);
		return 0;
	}
	if (rc == -EINVAL)
		log_stderr(LOG_LVL_ERR, "%s:%u:%u: %s", path, e.line, e.col,
			   e.msg);
	else
		log_stderr_rc(LOG_LVL_ERR, -rc, "%s: cannot read", path);
	return 1;
}

/* partitions.conf parsed in full: its errors, and its warnings as
 * `ibsmctl partitions check` prints them.  The number of errors. */
static size_t check_partitions(const struct cfg *conf, const char *path,
			       size_t *warnings)
{
	struct part_options po = { .allow_both_pkeys = false };
	struct part_config pc;
	struct part_diag d;
	char line[400];
	size_t ab, errors;

	if (cfg_key_find("allow_both_pkeys", &ab))
		po.allow_both_pkeys = !strcmp(cfg_get(conf, ab), "TRUE");
	memset(&pc, 0, sizeof(pc));
	memset(&d, 0, sizeof(d));
	(void)part_load(path, &po, &pc, &d);
	for (size_t e = 0; e < d.n_errors; e++) {
		part_error_format(NULL, path, &d.errors[e], line, sizeof(line));
		log_stderr(LOG_LVL_ERR, "%s", line);
	}
	for (size_t w = 0; w < d.n_warnings; w++)
		log_stderr(LOG_LVL_WARN, "%s:%u:%u: warning: %s", path,
			d.warnings[w].line, d.warnings[w].col,
			d.warnings[w].msg);
	errors = d.n_errors;
	*warnings += d.n_warnings;
	part_diag_free(&d);
	part_config_free(&pc);
	return errors;
}

/*
 * A file that does not exist where OpenSM starts anyway (and so does
 * ibsm): a partitions.conf named in the -F file (the default partition
 * then), a QoS policy file, root and compute-node GUID files (the engine
 * finds its roots itself).  True after the warning.
 */
static bool missing_ok(const struct cfg *conf, size_t i, const char *v,
		       const char *where)
{
	const char *name = cfg_keys(NULL)[i].name, *then;

	if (access(v, F_OK) == 0 || errno != ENOENT)
		return false;
	if (!strcmp(name, "partition_config_file") &&
	    conf->v[i].src == CFG_SRC_FILE)
		then = "no partitions file: the default partition"
		       " (Default=0x7fff, ALL full members), as OpenSM";
	else if (!strcmp(name, "qos_policy_file"))
		then = "QoS from the qos_* keys alone, as OpenSM";
	else if (!strcmp(name, "root_guid_file") ||
		 !strcmp(name, "cn_guid_file"))
		then = "routing goes on without it (the engines find the"
		       " roots themselves), as OpenSM";
	else if (!strcmp(name, "guid_routing_order_file") ||
		 !strcmp(name, "port_search_ordering_file") ||
		 !strcmp(name, "hop_weights_file") ||
		 !strcmp(name, "port_prof_ignore_file") ||
		 !strcmp(name, "ids_guid_file"))
		then = "routing goes on without it, as OpenSM";
	else if (!strcmp(name, "io_guid_file"))
		then = "routing goes on without it: no I/O nodes";
	else if (!strcmp(name, "node_name_map_name"))
		then = "nodes go by their NodeDescriptions, as OpenSM";
	else if (!strcmp(name, "torus_config"))
		then = "the torus engine finds the torus' shape itself"
		       " (OpenSM's torus-2QoS fails without it and the next"
		       " engine routes)";
	else
		return false;
	log_stderr(LOG_LVL_WARN, "warning: %s: %s %s: does not exist; %s",
		where, name, v, then);
	return true;
}

/*
 * Every file named by a key ibsm implements, set in the file or on the
 * command line: readable, and parsed where ibsm reads it at start.  A
 * file at OpenSM's default path may be missing, as for OpenSM; the files
 * of keys ibsm ignores need not exist.  The number of errors.
 */
static size_t check_files(const struct cfg *conf, size_t *warnings)
{
	size_t n, errors = 0;
	const struct cfg_key *keys = cfg_keys(&n);
	char where[600], line[400];

	for (size_t i = 0; i < n; i++) {
		const char *v = cfg_get(conf, i), *name = keys[i].name;

		if (keys[i].type != CFG_PATH || !(keys[i].flags & CFG_IMPL) ||
		    conf->v[i].src == CFG_SRC_DEFAULT || !strcmp(v, "(null)") ||
		    !strcmp(name, "log_file") || !strcmp(name, "pidfile") ||
		    !strcmp(name, "lid_matrix_dump_file") ||
		    !strcmp(name, "event_db_dump_file"))
			continue;	/* files ibsm or OpenSM would write */
		key_where(conf, i, where, sizeof(where));
		if (!strcmp(v, keys[i].def) && access(v, F_OK) < 0)
			continue;
		if (missing_ok(conf, i, v, where)) {
			(*warnings)++;
			continue;
		}
		if (access(v, R_OK) < 0) {
			log_stderr_rc(LOG_LVL_ERR, errno, "%s: %s %s: cannot read",
				where, name, v);
			errors++;
			continue;
		}
		if (!strcmp(name, "torus_config")) {
			struct torus_conf *tc = malloc(sizeof(*tc));

			if (!tc || torus_conf_load(tc, v, line,
						   sizeof(line)) < 0) {
				log_stderr(LOG_LVL_ERR, "%s", tc ? line :
					   "out of memory");
				errors++;
			}
			free(tc);
		}
		if (!strcmp(name, "root_guid_file") ||
		    !strcmp(name, "cn_guid_file") ||
		    !strcmp(name, "io_guid_file")) {
			uint64_t *g;

			if (sm_guid_file_load(v, &g, line, sizeof(line)) < 0) {
				log_stderr(LOG_LVL_ERR, "%s", line);
				errors++;
			}
			free(g);
		}
		/* bad lines are skipped when routing: warnings */
		if (!strcmp(name, "guid_routing_order_file") ||
		    !strcmp(name, "port_search_ordering_file") ||
		    !strcmp(name, "hop_weights_file") ||
		    !strcmp(name, "port_prof_ignore_file") ||
		    !strcmp(name, "ids_guid_file"))
			*warnings += sm_order_file_check(name, v);
		if (!strcmp(name, "node_name_map_name")) {
			struct node_names nn;

			if (node_names_load(&nn, v, line, sizeof(line)) < 0) {
				log_stderr(LOG_LVL_ERR, "%s", line);
				errors++;
			}
			node_names_free(&nn);
		}
		if (!strcmp(name, "topology_ref")) {
			struct fabric ref;

			fabric_init(&ref);
			if (topo_load_flags(&ref, v, TOPO_LINK_AS_GIVEN, line,
					    sizeof(line)) < 0) {
				log_stderr(LOG_LVL_ERR, "%s", line);
				errors++;
			}
			fabric_free(&ref);
		}
		/* OpenSM reads the policy only with qos TRUE */
		if (!strcmp(name, "qos_policy_file") && qos_on(conf))
			errors += check_qos_file(v);
		if (!strcmp(name, "partition_config_file"))
			errors += check_partitions(conf, v, warnings);
	}
	return errors;
}

/*
 * The keys of the file ibsm does not implement: one warning per key set
 * to a value other than its default (compared as values), with what ibsm
 * does instead; one line naming those set to their defaults.  Returns
 * the number of warnings (mapped keys are not: ibsm does their work).
 */
static size_t check_unimplemented(const struct cfg *conf, size_t *listed)
{
	static const char *const word[] = {
		[CFG_ST_MAPPED] = "mapped", [CFG_ST_NA] = "not applicable",
		[CFG_ST_IGNORED] = "not implemented, ignored",
	};
	size_t n, warnings = 0, n_def = 0;
	const struct cfg_key *keys = cfg_keys(&n);
	char *defaults = NULL;
	size_t dlen = 0;
	FILE *dl = open_memstream(&defaults, &dlen);

	*listed = 0;
	for (size_t i = 0; i < n; i++) {
		const char *note;
		enum cfg_status st = cfg_key_status(&keys[i], &note);

		/* an alias of an implemented key was named where it was read */
		if (st == CFG_ST_IMPL || conf->v[i].src != CFG_SRC_FILE ||
		    cfg_key_implemented(&keys[i]))
			continue;
		(*listed)++;
		if (!cfg_file_changed(conf, i)) {
			if (dl)
				fprintf(dl, "%s%s", n_def++ ? ", " : "",
					keys[i].name);
			continue;
		}
		log_stderr(LOG_LVL_WARN, "warning: %s:%u: %s %s: %s%s%s",
			conf->file, conf->v[i].line, keys[i].name,
			conf->v[i].val, word[st], note ? ": " : "",
			note ? note : "");
		warnings += st != CFG_ST_MAPPED;
	}
	if (dl)
		fclose(dl);
	if (n_def)
		log_stderr(LOG_LVL_INFO, "%s: %zu key%s set to %s default%s,"
			" not implemented either: %s", conf->file, n_def,
			n_def == 1 ? "" : "s", n_def == 1 ? "its" : "their",
			n_def == 1 ? "" : "s", defaults ? defaults : "");
	free(defaults);
	return warnings;
}

/*
 * The QoS table keys of the file while qos is FALSE: inert, for OpenSM
 * as for ibsm.  One warning naming them; the number of warnings (0, 1).
 */
static size_t check_qos_inert(const struct cfg *conf)
{
	size_t n, q, named = 0, first = 0;
	const struct cfg_key *keys = cfg_keys(&n);
	char list[512] = "";

	if (!cfg_key_find("qos", &q) || !strcmp(cfg_get(conf, q), "TRUE"))
		return 0;
	for (size_t i = 0; i < n; i++) {
		size_t used = strlen(list);

		if (strncmp(keys[i].name, "qos_", 4) ||
		    !strcmp(keys[i].name, "qos_policy_file") ||
		    !cfg_file_changed(conf, i))
			continue;
		if (!named++)
			first = i;
		snprintf(list + used, sizeof(list) - used, "%s%s",
			 used ? ", " : "", keys[i].name);
	}
	if (!named)
		return 0;
	log_stderr(LOG_LVL_WARN, "warning: %s:%u: %s: set while qos is FALSE:"
		" OpenSM and ibsm apply them only with qos TRUE (or -Q)",
		conf->file, conf->v[first].line, list);
	return 1;
}

/*
 * --check-config: the -F file (its errors and warnings, printed by
 * read_config), every file it names, and the keys it sets that ibsm does
 * not implement.  0 when the daemon would start with it (with --strict:
 * and there is no warning), else SM_EXIT_CONFIG.
 */
static int check_config(const struct cfg *conf, const struct run_opts *r)
{
	const char *name = r->config_file ? r->config_file : "command line";
	size_t errors = conf->errors.n, listed = 0;
	size_t warnings = conf->unknown.n + conf->warnings.n;

	errors += check_files(conf, &warnings);
	if (r->config_file) {
		warnings += check_unimplemented(conf, &listed);
		warnings += check_qos_inert(conf);
	}
	if (errors) {
		log_stderr(LOG_LVL_ERR, "%s: %zu error%s, %zu warning%s: ibsm"
			" would not start", name, errors, errors == 1 ? "" : "s",
			warnings, warnings == 1 ? "" : "s");
		return SM_EXIT_CONFIG;
	}
	if (warnings && r->strict) {
		log_stderr(LOG_LVL_ERR, "%s: %zu warning%s, errors under"
			" --strict", name, warnings, warnings == 1 ? "" : "s");
		return SM_EXIT_CONFIG;
	}
	if (!warnings && !listed)
		printf("ibsm: %s: no errors\n", name);
	else
		printf("ibsm: %s: ibsm starts with it: %zu warning%s, %zu key%s"
		       " set that ibsm does not implement\n", name, warnings,
		       warnings == 1 ? "" : "s", listed, listed == 1 ? "" : "s");
	return 0;
}

static int write_conf(FILE *fp, const void *arg)
{
	return cfg_write(fp, arg);
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
		log_err_rc(err, "ERR 0601: receiving MADs fails (%" PRIu64
			   " errors), retrying with back-off", errors);
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
		 " %" PRIu64 " lingers for the next, %" PRIu64 " with one;"
		 " %" PRIu64 " unmatched, %" PRIu64 " misrouted answers; %" PRIu64
		 " requests refused (engine queue full), engine queue peaks"
		 " %u of %u SMPs, %u of %u GMPs",
		 ps.queue.queued, ps.queue.dropped_full, ps.queue.dropped_source,
		 ps.queue.dropped_responses, ps.queue.dropped_unexpected,
		 ps.queue.high_water, ps.queue.cap,
		 ps.recv_errors, ps.lingers, ps.linger_hits,
		 st->unmatched, st->misrouted, st->refused,
		 st->max_queued[0], SM_LIMIT(sm->cfg.max_queued_smps,
					     ENGINE_MAX_QUEUED_SMPS),
		 st->max_queued[1], SM_LIMIT(sm->cfg.max_queued_gmps,
					     ENGINE_MAX_QUEUED_GMPS));
	struct sim_send_stats ss;
	if (umad_io_sim_stats(sm->io, &ss) == 0)
		log_info("ibsim transport: %" PRIu64 " MADs sent, %" PRIu64
			 " of them waited for the simulator's socket (at most"
			 " %u at once), %" PRIu64 " refused (queue full), %"
			 PRIu64 " send errors", ss.sent, ss.deferred, ss.peak,
			 ss.refused, ss.failed);
	struct sendq_stats qs;
	if (umad_io_send_stats(sm->io, &qs) == 0)
		log_info("send queue: %" PRIu64 " MADs sent, %" PRIu64 " send"
			 " errors, %" PRIu64 " refused (queue full), %" PRIu64
			 " answers refused (one destination over its share);"
			 " at most %u waiting", qs.sent, qs.failed,
			 qs.refused_full, qs.refused_dest, qs.peak);
}

/* At exit: the traps and network-driven log lines, with their limits. */
static void log_trap_counters(const struct sm *sm)
{
	log_info("traps: %u received, %u rejected, %u over their source's"
		 " budget (%g at once, %g per second, %u sources); %u"
		 " sweeps started by traps, %u of them quick sweeps (hold-off"
		 " %g ms, at most every %g s)",
		 sm->stats.traps, sm->stats.traps_rejected,
		 sm->stats.traps_limited, sm_trap_burst(sm), sm_trap_rate(sm),
		 sm_trap_sources(sm), sm->stats.trap_sweeps,
		 sm->stats.quick_sweeps,
		 sm_trap_holdoff(sm) * 1e3, sm_trap_sweep_interval(sm));
	log_info("log: %lu rate-limited lines suppressed (%u at once, %g per"
		 " second per code)", log_ratelimit_dropped_total(),
		 SM_LIMIT(sm->cfg.log_burst, LOG_RL_BURST),
		 SM_LIMIT(sm->cfg.log_rate, LOG_RL_RATE));
}

/* At start: every limit of config/limits.h in force. */
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
		sm->exit_code = SM_EXIT_FAIL;
	} else if (sm->cfg.dump_fabric) {
		int rc = topo_dump_file(&sm->fabric, sm->cfg.dump_fabric);
		if (rc < 0) {
			log_err_rc(rc, "ERR 0002: cannot write %s",
				sm->cfg.dump_fabric);
			sm->exit_code = SM_EXIT_FAIL;
		}
	}
	ev_break(sm->loop, EVBREAK_ALL);
}

/*
 * Hidden debug mode (tests/fabric/test_standby_sync.sh), until the state
 * machine has a STANDBY: IBSM_DEBUG_COPY_FROM=LID makes this ibsm a
 * standby of the SM at LID (no sweep), print its first complete copy of
 * that SM's SA state on stdout (sb_copy_print()) and exit; 20 s without
 * one: exit 1.
 */
static ev_timer debug_copy_timer;
static unsigned debug_copy_ticks;

static void on_debug_copy(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sm *sm = w->data;
	const struct sb_copy *c = standby_sync_copy(sm);

	(void)revents;
	if (!c && ++debug_copy_ticks < 200)
		return;
	if (c) {
		sb_copy_print(c, stdout);
		fflush(stdout);
	} else {
		sm->exit_code = SM_EXIT_FAIL;
	}
	ev_timer_stop(loop, w);
	standby_sync_stop(sm);
	ev_break(loop, EVBREAK_ALL);
}

static int debug_copy_start(struct sm *sm, const char *lid)
{
	char *end;
	unsigned long v = strtoul(lid, &end, 0);

	if (*end || v == 0 || v > 0xbfff) {
		log_stderr(LOG_LVL_ERR, "IBSM_DEBUG_COPY_FROM: expected a unicast"
			" LID, not \"%s\"", lid);
		return -EINVAL;
	}
	struct sm_msg m = { .ev = SM_EV_COPY_FROM };

	m.u.trap.lid = (uint16_t)v;
	(void)sm_post_msg(sm, &m);
	ev_timer_init(&debug_copy_timer, on_debug_copy, 0.1, 0.1);
	debug_copy_timer.data = sm;
	ev_timer_start(sm->loop, &debug_copy_timer);
	return 0;
}

/*
 * Descriptors 0-2 closed by whoever started us would be the first ones
 * open() hands out: the log file, the loop's, a socket; then "-f stdout"
 * and every stray write to stderr (a sanitizer's, a library's) would go
 * into those.  /dev/null takes their place before anything is opened.
 */
static void hold_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int n;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		n = open("/dev/null", O_RDWR);	/* the lowest free: fd */
		if (n < 0)
			_exit(1);
		if (n != fd) {
			dup2(n, fd);
			close(n);
		}
	}
}

/* What ibsm does instead of some OpenSM keys (config/compat.h): said
 * once at start, on standard error and in the log. */
static struct cfg_msgs compat_notes;

/*
 * The command line and the configuration file into sm->cfg and conf.
 * Returns -1 to go on starting, or the exit code of a run that ends here
 * (--check, --create-config, --route-only, or a bad configuration).
 */
static int configure(int argc, char **argv, struct sm *sm, struct cfg *conf,
		     struct run_opts *ro)
{
	int rc;

	if (parse_options(argc, argv, &sm->cfg, conf, ro) < 0)
		return SM_EXIT_CONFIG;
	if (!ro->config_file)
		ro->config_file = cfg_default_file(NULL);
	rc = read_config(conf, ro);
	if (ro->check)
		return rc < 0 && rc != -EINVAL ? SM_EXIT_CONFIG
					       : check_config(conf, ro);
	if (rc < 0) {
		log_stderr(LOG_LVL_ERR, "%s: not started (see the errors above)",
			ro->config_file);
		return SM_EXIT_CONFIG;
	}
	if (ro->strict && conf->unknown.n + conf->warnings.n) {
		log_stderr(LOG_LVL_ERR, "%s: not started: --strict and %zu"
			" warnings above", ro->config_file,
			conf->unknown.n + conf->warnings.n);
		return SM_EXIT_CONFIG;
	}
	if (ro->create_file) {
		rc = write_file_atomic(ro->create_file, write_conf, conf);
		if (rc < 0)
			log_stderr_rc(LOG_LVL_ERR, rc, "cannot write %s",
				ro->create_file);
		else
			printf("ibsm: configuration written to %s\n",
			       ro->create_file);
		return rc < 0 ? SM_EXIT_FAIL : 0;
	}
	if (cfg_apply(conf, &sm->cfg) < 0)
		return SM_EXIT_CONFIG;	/* values were checked: cannot happen */
	cfg_apply_compat(conf, &sm->cfg, &compat_notes);
	if (ro->route_only)
		/* offline: no port, no log file, the report on stdout */
		return sm_route_offline(ro->route_only, &sm->cfg, ro->json,
					stdout, stderr);
	return -1;
}

/*
 * Open the log and write what the configuration left aside and the
 * limits in force.  Returns -1 to go on, or the exit code.
 */
static int open_log(struct sm *sm, const struct cfg *conf,
		    const struct run_opts *ro)
{
	char unimpl[1024];
	size_t n_unimpl;
	int rc;

	cfg_unimplemented(conf, unimpl, sizeof(unimpl), &n_unimpl);
	if (n_unimpl && ro->config_file)
		log_stderr(LOG_LVL_WARN, "%s: %zu key%s not implemented yet and"
			" ignored: %s", ro->config_file, n_unimpl,
			n_unimpl == 1 ? "" : "s", unimpl);
	log_set_prefix(sm->cfg.log_prefix);
	rc = log_open_trunc(sm->cfg.log_file, sm->cfg.log_level,
			    !sm->cfg.accum_log_file);
	if (rc < 0) {
		log_stderr_rc(LOG_LVL_ERR, rc, "cannot open log file %s",
			sm->cfg.log_file);
		/* a directory that is not there or not ours: the
		 * configuration names the wrong file; a full or read-only
		 * disk may pass */
		return rc == -ENOENT || rc == -ENOTDIR || rc == -EISDIR ||
		       rc == -EACCES ? SM_EXIT_CONFIG : SM_EXIT_FAIL;
	}
	log_ratelimit_set(sm->cfg.log_burst, sm->cfg.log_rate);
	log_set_max_size((uint64_t)sm->cfg.log_max_size << 20);
	if (ro->config_file)
		log_info("config: %s", ro->config_file);
	for (size_t i = 0; i < conf->unknown.n; i++)
		log_warnx("ERR 0903: %s (ignored)", conf->unknown.msg[i]);
	for (size_t i = 0; i < conf->warnings.n; i++)
		log_warnx("ERR 0906: %s", conf->warnings.msg[i]);
	if (n_unimpl && ro->config_file)
		log_warnx("ERR 0905: %s: %zu key%s not implemented yet and"
			  " ignored: %s", ro->config_file, n_unimpl,
			  n_unimpl == 1 ? "" : "s", unimpl);
	if (*ro->notes)
		log_warnx("ERR 0905: options not implemented yet and ignored:"
			  " %s", ro->notes);
	for (size_t i = 0; i < compat_notes.n; i++) {
		log_stderr(LOG_LVL_WARN, "%s", compat_notes.msg[i]);
		log_info("config: %s", compat_notes.msg[i]);
	}
	cfg_msgs_free(&compat_notes);
	log_limits(sm);
	char note[160];
	mkey_fix_lease(&sm->cfg, note, sizeof(note));
	if (*note)
		log_warnx("ERR 0909: %s", note);
	return -1;
}

/*
 * node_name_map_name: the names shown for nodes, read once at start (a
 * SIGHUP keeps them, as OpenSM).  0, or -errno after saying why on
 * standard error and in the log.
 */
static int load_node_names(struct sm *sm)
{
	char err[300];
	int rc;

	if (!sm->cfg.node_name_map)
		return 0;
	rc = node_names_load(&sm->names, sm->cfg.node_name_map, err,
			     sizeof(err));
	if (rc < 0 && rc != -EINVAL && rc != -E2BIG && rc != -ENOMEM) {
		/* a file that is not there: OpenSM starts without it too */
		log_stderr(LOG_LVL_WARN, "warning: node_name_map_name: %s;"
			   " nodes go by their descriptions", err);
		log_warnx("ERR 0907: node_name_map_name: %s; nodes go by their"
			  " descriptions", err);
		return 0;
	}
	if (rc < 0) {
		log_stderr(LOG_LVL_ERR, "node_name_map_name: %s", err);
		log_err("ERR 0907: node_name_map_name: %s", err);
		return rc;
	}
	log_info("node names: %zu from %s", sm->names.n,
		 sm->cfg.node_name_map);
	return 0;
}

/* The log goes to stdout (log_open()'s names for it). */
static bool log_to_stdio(const char *path)
{
	return !path || !strcmp(path, "stdout") || !strcmp(path, "-");
}

/* The pid file locked: 0, or -errno after saying why not. */
static int lock_pid_file(const struct sm *sm, struct pidfile *pid)
{
	pid_t holder;
	int rc;

	if (!sm->cfg.pid_file)
		return 0;
	rc = pidfile_open(pid, sm->cfg.pid_file, &holder);
	if (rc == 0)
		return 0;
	if (rc == -EWOULDBLOCK)
		log_stderr(LOG_LVL_ERR, "the pid file %s is held by"
			" another ibsm (pid %ld): not started",
			sm->cfg.pid_file, (long)holder);
	else
		log_stderr_rc(LOG_LVL_ERR, rc, "cannot open the pid file %s",
			sm->cfg.pid_file);
	log_err("ERR 0008: pid file %s: %s%s", sm->cfg.pid_file,
		rc == -EWOULDBLOCK ? "held by another process" :
		strerror(-rc), rc == -EWOULDBLOCK ? "; not started" : "");
	return rc;
}

/* The port: 0, or -errno after saying why not. */
static int open_port(struct sm *sm, bool discover_only)
{
	/* PerfMgt as a client only (answers to our Gets): umad_io_open()
	 * gives it no method mask, the kernel answers PMA MADs to our own
	 * port itself. */
	const uint8_t classes[] = { MAD_CLASS_SMI, MAD_CLASS_SMI_DR,
				    MAD_CLASS_SA, MAD_CLASS_PERF };
	unsigned nclasses = sm->cfg.perfmgr ? 4 : 3;
	const char *why = NULL;
	int rc;

	if (sm->cfg.transport == SM_TRANSPORT_IBSIM)
		rc = umad_io_open_ibsim(&sm->io, sm->loop, &why);
	else
		rc = umad_io_open(&sm->io, sm->loop, sm->cfg.guid, classes,
				  nclasses, !discover_only);
	if (rc < 0) {
		if (why)
			log_stderr_rc(LOG_LVL_ERR, rc, "cannot attach to ibsim (%s)",
				why);
		else if (sm->cfg.guid)
			log_stderr_rc(LOG_LVL_ERR, rc, "cannot open the port"
				" with GUID 0x%016" PRIx64, sm->cfg.guid);
		else
			log_stderr_rc(LOG_LVL_ERR, rc, "cannot open an InfiniBand port");
		log_err_rc(rc, "ERR 0004: cannot open port");
		return rc;
	}
	const struct umad_port_info *pi = umad_io_port(sm->io);
	sm->port_guid = pi->port_guid;
	log_info("ibsm %s bound to %s port %d, port GUID 0x%016" PRIx64,
		 PACKAGE_VERSION, pi->ca, pi->port, pi->port_guid);
	umad_io_set_queue_len(sm->io, sm->cfg.rx_queue);
	return 0;
}

/* The MAD engine, the SM's agents and the SA on the open port: 0 or -errno. */
static int start_engine(struct sm *sm, bool discover_only)
{
	struct mad_transport tr = umad_io_transport(sm->io);
	struct mad_engine_opts eo = {
		.max_wire_smps = sm->cfg.max_wire_smps,
		.max_wire_gmps = 64,
		.timeout_ms = sm->cfg.transaction_timeout,
		.retries = sm->cfg.transaction_retries,
		.smp_window_max = sm->cfg.smp_window_max,
		.smps_per_dest = sm->cfg.smps_per_node,
	};
	int rc = mad_engine_new(&sm->engine, sm->loop, &tr, &eo);

	if (rc == 0)
		mad_engine_set_queue_limits(sm->engine, sm->cfg.max_queued_smps,
					    sm->cfg.max_queued_gmps);
	if (rc == 0 && !discover_only)
		rc = sm_agents_start(sm);
	if (rc == 0 && !discover_only)
		rc = sa_start(sm);
	if (rc == 0 && !discover_only)
		rc = umad_io_set_sm(sm->io, true);
	if (rc == 0)
		rc = umad_io_start(sm->io, on_mad, sm);
	if (rc < 0)
		log_err_rc(rc, "ERR 0005: cannot start the MAD engine");
	return rc;
}

/* After the loop: the counters, then everything stopped and freed. */
static void shut_down(struct sm *sm, struct discover_job *job,
		      bool discover_only)
{
	log_mad_counters(sm);
	if (!discover_only)
		log_trap_counters(sm);
	/* Stop the pump before the engine it feeds; cancelled requests call
	 * back into the sweeps, which are told to ignore them first. */
	umad_io_close(sm->io);
	sweep_heavy_abort(sm);
	sweep_light_abort(sm);
	quick_sweep_abort(sm);
	mft_abort(sm);
	perf_abort(sm);
	sa_stop(sm);
	standby_sync_free(sm);		/* the standby's copy, if any */
	mad_engine_free(sm->engine);
	sm_election_free(sm);
	sweep_heavy_abort(sm);
	sweep_light_abort(sm);
	quick_sweep_abort(sm);
	mft_abort(sm);
	perf_abort(sm);
	discover_free(job->disc);
	fabric_free(&sm->fabric);
	routing_result_free(&sm->routes);
	lid_cache_free(sm->lids);
	mkey_free(sm->mkeys);
	lft_images_free(sm->images);
	port_memos_free(sm->memos);
	sl2vl_images_free(sm->sl2vl);
	sm_parts_free(sm);
	sm_qos_free(sm);
	mc_table_free(sm->mc);
	sm_health_free(sm);
	node_names_free(&sm->names);
	log_close();
}

/*
 * A daemon's (not -o's) services beside the SM: the control socket, the
 * metrics endpoint when metrics_listen is set, the performance manager.
 * Each logs its own failure; ibsm runs on without it.
 */
static void start_services(struct sm *sm)
{
	(void)ctl_start(sm);
	(void)metrics_start(sm);
	if (perf_start(sm) < 0)
		log_err("ERR 5409: perfmgr: cannot start: out of memory");
}

int main(int argc, char **argv)
{
	struct sm sm = { 0 };
	struct discover_job job = { &sm, NULL };
	static struct cfg conf;
	struct run_opts ro;
	bool discover_only;
	struct pidfile pid = { -1, NULL };
	int rc, ready_fd = -1;

	hold_std_fds();
	rc = configure(argc, argv, &sm, &conf, &ro);
	if (rc >= 0) {
		cfg_free(&conf);
		return rc;
	}
	discover_only = ro.discover_only;
	sm.conf = &conf;
	sm.reload = sm_config_reload;
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
	rc = open_log(&sm, &conf, &ro);
	if (rc >= 0)
		return rc;
	/* The pid file is locked before anything touches the fabric: a
	 * second daemon given the same file stops here. */
	if (lock_pid_file(&sm, &pid) < 0) {
		log_close();
		return SM_EXIT_FAIL;
	}
	/* exit_on_fatal: a guid2lid file OpenSM would not read stops us
	 * here, before the fabric is touched, still on standard error
	 * (--discover-only gives no LIDs, reads no file). */
	if (!discover_only && sm_guid2lid_fatal(&sm)) {
		log_close();
		pidfile_close(&pid);
		return SM_EXIT_FAIL;
	}
	/* -B: into the background now, the configuration read and checked,
	 * before any thread or loop exists; the lock on the pid file is the
	 * child's from here (flock: shared with the open file). */
	if (sm.cfg.daemon && !discover_only) {
		rc = daemon_fork(&ready_fd);
		if (rc < 0) {
			log_stderr_rc(LOG_LVL_ERR, rc, "-B: cannot fork");
			log_err_rc(rc, "ERR 0009: cannot go into the background");
			log_close();
			pidfile_close(&pid);
			return SM_EXIT_FAIL;
		}
		log_info("running in the background (-B), pid %ld",
			 (long)getpid());
	}
	if (sm_parts_load(&sm, true) < 0) {
		log_stderr(LOG_LVL_ERR, "%s: not started (see the errors above)",
			sm.cfg.partition_config);
		log_close();
		pidfile_close(&pid);
		return SM_EXIT_CONFIG;
	}
	if (sm_qos_load(&sm, true) < 0) {
		log_stderr(LOG_LVL_ERR, "%s: not started (see the errors above)",
			   sm.cfg.qos_policy_file);
		sm_qos_free(&sm);
		sm_parts_free(&sm);
		log_close();
		pidfile_close(&pid);
		return SM_EXIT_CONFIG;
	}
	/* Multicast groups live as long as the daemon (sm/mcast/mcast.h);
	 * the partitions' groups exist from the start. */
	sm.mc = mc_table_new(&(struct mc_limits){
		.max_groups = sm.cfg.mc_max_groups,
		.members_per_group = sm.cfg.mc_members_per_group,
		.groups_per_port = sm.cfg.mc_groups_per_port,
	});
	if (!sm.mc) {
		log_stderr(LOG_LVL_ERR, "out of memory");
		log_close();
		pidfile_close(&pid);
		return SM_EXIT_FAIL;
	}
	signal(SIGPIPE, SIG_IGN);
	sm.loop = ev_default_loop(EVFLAG_AUTO);
	sa_mcast_precreate(&sm);
	sm_parts_watch(&sm);
	fabric_init(&sm.fabric);
	sm.images = lft_images_new();
	sm.memos = port_memos_new();

	if (open_port(&sm, discover_only) < 0) {
		port_memos_free(sm.memos);
		lft_images_free(sm.images);
		mc_table_free(sm.mc);
		pidfile_close(&pid);
		return SM_EXIT_FAIL;
	}
	if (start_engine(&sm, discover_only) < 0) {
		umad_io_close(sm.io);
		pidfile_close(&pid);
		return SM_EXIT_FAIL;
	}
	umad_io_on_error(sm.io, on_recv_error, &sm);
	sm_watchers_start(&sm);
	if (!discover_only && !sm.cfg.once)
		start_services(&sm);
	rc = load_node_names(&sm);
	if (rc < 0)
		sm.exit_code = SM_EXIT_CONFIG;
	else if (discover_only)
		rc = discover_start(&job.disc, sm.engine, &sm.fabric, false,
				    on_discovered_only, &job);
	else if (getenv("IBSM_DEBUG_COPY_FROM"))
		rc = debug_copy_start(&sm, getenv("IBSM_DEBUG_COPY_FROM"));
	else if (sm.cfg.sm_inactive && !sm.cfg.once)
		log_info("SM 1127: inactive (sm_inactive, -I): NOTACTIVE until"
			 " a master's SMInfo DISCOVER; no sweep, no election");
	else
		(void)sm_post(&sm, SM_EV_START);
	/* The pid once the SM runs, so a pid in the file is one that takes
	 * SIGHUP; in the file locked at start, removed at exit. */
	if (rc == 0 && pid.fd >= 0) {
		rc = pidfile_write(&pid);
		if (rc < 0) {
			log_err_rc(rc, "ERR 0008: cannot write the pid file %s",
				pid.path);
			log_stderr_rc(LOG_LVL_ERR, rc, "cannot write the pid file %s",
				pid.path);
			sm.exit_code = SM_EXIT_FAIL;
		}
	}
	/* -B: the daemon runs; the command that started it returns */
	if (rc == 0)
		daemon_ready(&ready_fd, log_to_stdio(sm.cfg.log_file));
	if (rc == 0)
		ev_run(sm.loop, 0);
	pidfile_close(&pid);
	metrics_stop(&sm);
	ctl_stop(&sm);
	shut_down(&sm, &job, discover_only);
	cfg_free(&conf);
	return sm.exit_code;
}
