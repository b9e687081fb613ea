/*
 * limits.h - the daemon's bounds on what the network can make it hold or
 * do, as long options: trap budgets, the log's rate limiter, the MAD
 * engine's queues, the receive queue, and the SA's jobs, work budget,
 * answer bytes, RMPP transfers, ServiceRecords, leases, subscriptions and
 * Reports.  They are keys of config/'s one table (config/keys.c, from
 * the list below), which drives parsing with range checks, --help, the
 * "limits:" log line, the defaults, opensm.conf and dump-config, so that
 * none of them can drift from the others.
 *
 * Every limit lives in struct sm_config (config/sm_config.h).  A field
 * left 0 (a config built by a test, say) means the built-in default where
 * the limit is used; on the command line 0 is out of range and refused.
 */
#ifndef IBSM_CONFIG_LIMITS_H
#define IBSM_CONFIG_LIMITS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "config/conf.h"

/*
 * The built-in defaults of the limits, where the daemon falls back on
 * them for a field left 0.
 *
 * Traps (sm/ha/state.c): per-source token buckets, SM_TRAP_BURST traps at
 * once then SM_TRAP_RATE per second from one source LID; the table holds
 * SM_TRAP_SOURCES sources (the longest idle one is reused).  An accepted
 * trap that asks for a heavy sweep starts a hold-off of SM_TRAP_HOLDOFF
 * seconds that collects the rest of a burst; trap-driven heavy sweeps
 * start at most once per SM_TRAP_SWEEP_INTERVAL seconds.  These are the
 * defaults of --trap-sources, --trap-burst, --trap-rate, --trap-holdoff-ms
 * and --trap-sweep-interval (struct sm_config); the table has room
 * for SM_TRAP_SOURCES_MAX sources and uses trap_sources of them.
 */
#define SM_TRAP_SOURCES_MAX	4096
#define SM_TRAP_SOURCES		256
#define SM_TRAP_BURST		8
#define SM_TRAP_RATE		2.0
#define SM_TRAP_HOLDOFF		0.2
#define SM_TRAP_SWEEP_INTERVAL	5.0
/*
 * SA requests answered in slices (sm/sa/sa.c): jobs at once and per
 * requesting port; the defaults of --sa-max-jobs and --sa-jobs-per-port.
 */
#define SA_MAX_JOBS		16
#define SA_MAX_JOBS_PER_PORT	2
/* The log's token buckets per code (sm/log.c). */
#define LOG_RL_BURST	10
#define LOG_RL_RATE	1.0	/* lines per second per code, after a burst */
/* The SA's work per request (sm/sa/sa.h) and its agent (sm/sa/sa.c). */
#define SA_WORK_BUDGET_DEFAULT	(1u << 21)	/* units per request */
#define SA_DEF_MAX_TRANSFERS		256	/* RMPP answers in flight */
#define SA_DEF_TRANSFERS_PER_PORT	4	/* ... to one requesting port */
#define SA_DEF_REPORT_QUEUE		4	/* Reports waiting per subscriber */
#define SA_DEF_REPORT_FAILURES		3	/* unanswered in a row: dropped */
#define SA_DEF_ANSWER_BYTES		(8u << 20) /* answer bytes per port */
/* ServiceRecords, leases and subscriptions (sm/sa/service.c). */
#define SA_DEF_MAX_SERVICES		4096	/* ServiceRecords, all ports */
#define SA_DEF_SERVICES_PER_PORT	64	/* ServiceRecords per ServiceGID */
#define SA_DEF_MAX_LEASE		86400u	/* s; a longer lease is cut to it */
#define SA_DEF_MAX_SUBSCRIPTIONS	1024	/* InformInfo, all ports */
#define SA_DEF_SUBSCRIPTIONS_PER_PORT	16	/* InformInfo per subscriber port */
/* The multicast group table (sm/mcast/groups.c). */
#define MC_DEF_MAX_GROUPS		4096
#define MC_DEF_MEMBERS_PER_GROUP	65536
#define MC_DEF_GROUPS_PER_PORT		256
/* The MAD engine's queues and the receive queue are mad/'s own:
 * ENGINE_MAX_QUEUED_SMPS, ENGINE_MAX_QUEUED_GMPS (mad/engine.h),
 * RXQ_DEFAULT_CAP (mad/rxq.h). */

struct sm_config;

/*
 * The limits, one line each, in the order of --help and the "limits:"
 * line: U an unsigned field of struct sm_config, W a uint64_t, R a
 * double; then the option (and opensm.conf key), the field, the accepted
 * range (both ends included; the minimum above 0, the "default" marker),
 * the built-in default, what the number counts and a line for --help.
 * config/keys.c expands the list into the last n_limit_opts keys of its
 * table (CFG_LIMIT); the engine's and the receive queue's defaults come
 * from mad/engine.h and mad/rxq.h there.
 */
#define CFG_LIMITS(U, W, R) \
	U("trap-sources", trap_sources, 1, SM_TRAP_SOURCES_MAX, \
	  SM_TRAP_SOURCES, "sources", "sources with a trap budget") \
	U("trap-burst", trap_burst, 1, 100000, SM_TRAP_BURST, "traps", \
	  "traps at once from one source LID") \
	R("trap-rate", trap_rate, 0.001, 100000, SM_TRAP_RATE, \
	  "traps per second", "... then traps per second") \
	U("trap-holdoff-ms", trap_holdoff_ms, 1, 60000, \
	  SM_TRAP_HOLDOFF * 1000, "ms", "wait after a trap for the rest") \
	R("trap-sweep-interval", trap_sweep_interval, 0.1, 3600, \
	  SM_TRAP_SWEEP_INTERVAL, "seconds", \
	  "s between trap-driven heavy sweeps") \
	U("log-burst", log_burst, 1, 1000000, LOG_RL_BURST, "lines", \
	  "log lines of one code at once") \
	R("log-rate", log_rate, 0.001, 1000000, LOG_RL_RATE, \
	  "lines per second", "... then lines per second") \
	U("max-queued-smps", max_queued_smps, 256, 1u << 24, \
	  ENGINE_MAX_QUEUED_SMPS, "SMPs", "SMPs waiting for the wire") \
	U("max-queued-gmps", max_queued_gmps, 16, 1u << 20, \
	  ENGINE_MAX_QUEUED_GMPS, "GMPs", "GMPs waiting for the wire") \
	U("rx-queue", rx_queue, 16, 65535, RXQ_DEFAULT_CAP, "MADs", \
	  "received MADs waiting for the loop") \
	U("sa-max-jobs", sa_max_jobs, 1, 4096, SA_MAX_JOBS, "requests", \
	  "SA requests in slices at once") \
	U("sa-jobs-per-port", sa_jobs_per_port, 1, 4096, \
	  SA_MAX_JOBS_PER_PORT, "requests", "... from one requesting port") \
	W("sa-work-budget", sa_work_budget, 1000, 1e9, \
	  SA_WORK_BUDGET_DEFAULT, "work units", \
	  "work units one SA request may cost") \
	W("sa-answer-bytes", sa_answer_bytes, 65536, 4294967296., \
	  SA_DEF_ANSWER_BYTES, "bytes", \
	  "bytes of SA answers one port may hold") \
	U("sa-max-transfers", sa_max_transfers, 1, 65535, \
	  SA_DEF_MAX_TRANSFERS, "transfers", "RMPP answers in flight") \
	U("sa-transfers-per-port", sa_transfers_per_port, 1, 65535, \
	  SA_DEF_TRANSFERS_PER_PORT, "transfers", \
	  "... to one requesting port") \
	U("sa-max-services", sa_max_services, 1, 1000000, \
	  SA_DEF_MAX_SERVICES, "records", "ServiceRecords kept") \
	U("sa-services-per-port", sa_services_per_port, 1, 1000000, \
	  SA_DEF_SERVICES_PER_PORT, "records", "... per ServiceGID") \
	U("sa-max-lease", sa_max_lease, 1, 4294967295., SA_DEF_MAX_LEASE, \
	  "seconds", "longest lease (4294967295: infinite)") \
	U("sa-max-subscriptions", sa_max_subscriptions, 1, 1000000, \
	  SA_DEF_MAX_SUBSCRIPTIONS, "subscriptions", \
	  "InformInfo subscriptions kept") \
	U("sa-subscriptions-per-port", sa_subscriptions_per_port, 1, \
	  1000000, SA_DEF_SUBSCRIPTIONS_PER_PORT, "subscriptions", \
	  "... per subscriber port") \
	U("sa-report-queue", sa_report_queue, 1, 1024, SA_DEF_REPORT_QUEUE, \
	  "Reports", "Reports waiting per subscriber") \
	U("sa-report-failures", sa_report_failures, 1, 1000, \
	  SA_DEF_REPORT_FAILURES, "Reports", \
	  "unanswered Reports: unsubscribed") \
	U("mc-max-groups", mc_max_groups, 1, 65536, MC_DEF_MAX_GROUPS, \
	  "groups", "multicast groups kept") \
	U("mc-members-per-group", mc_members_per_group, 1, 65536, \
	  MC_DEF_MEMBERS_PER_GROUP, "members", "... ports in one group") \
	U("mc-groups-per-port", mc_groups_per_port, 1, 65536, \
	  MC_DEF_GROUPS_PER_PORT, "groups", "... groups one port joins")

/* How many: a constant the compiler counts from the list. */
#define CFG_LIMIT_ONE_(...)	+ 1
#define N_LIMITS	(0 CFG_LIMITS(CFG_LIMIT_ONE_, CFG_LIMIT_ONE_, \
				      CFG_LIMIT_ONE_))

/*
 * The limits' keys in the table of config/keys.c (conf.h's struct
 * cfg_key: name, type CFG_INT or CFG_REAL, range, `num` the default,
 * `off` and `size` the field, `unit`, `help`), limit_opts[0 ..
 * n_limit_opts).
 */
extern const struct cfg_key *const limit_opts;
extern const size_t n_limit_opts;

/* Set every limit of `c` to its default. */
void limits_defaults(struct sm_config *c);

/*
 * Parse `arg` as the value of limit_opts[i] into `c`.  0, or -EINVAL with
 * a message for the user in err ("--trap-rate 0: expected 0.01-10000
 * traps per second").  cfg_limit_parse() does it for the limit's key k.
 */
int limit_parse(struct sm_config *c, size_t i, const char *arg, char *err,
		size_t errlen);
int cfg_limit_parse(struct sm_config *c, const struct cfg_key *k,
		    const char *arg, char *err, size_t errlen);

/* The value of limit_opts[i] in force: the field, or its default if 0. */
double limit_value(const struct sm_config *c, size_t i);

/*
 * Fill out[0 .. n_limit_opts) with getopt_long entries for the limits,
 * each returning first_val + its index.  Returns n_limit_opts.
 */
size_t limits_longopts(struct option *out, int first_val);

/* The --help lines of the limits. */
void limits_usage(FILE *fp);

/*
 * "trap-sources 256, trap-burst 8, ..., sa-jobs-per-port 2": every limit
 * in force, as the "limits:" line of the log shows them.  Returns what
 * snprintf returns.
 */
int limits_format(const struct sm_config *c, char *buf, size_t len);

#endif /* IBSM_CONFIG_LIMITS_H */
