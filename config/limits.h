/*
 * limits.h - the daemon's bounds on what the network can make it hold or
 * do, as long options: trap budgets, the log's rate limiter, the MAD
 * engine's queues, the receive queue, and the SA's jobs, work budget,
 * answer bytes, RMPP transfers, ServiceRecords, leases, subscriptions and
 * Reports.  One table
 * (limits.c) drives parsing with range checks, --help, the "limits:" log
 * line and the defaults, so that none of them can drift from the others.
 *
 * Every limit lives in struct sm_config (config/sm_config.h).  A field left 0 (a
 * config built by a test, say) means the built-in default where the limit
 * is used; on the command line 0 is out of range and refused.
 */
#ifndef IBSM_CONFIG_LIMITS_H
#define IBSM_CONFIG_LIMITS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * The built-in defaults of the limits, where the daemon falls back on
 * them for a field left 0.
 */
/*
 * Traps (sm/ha/state.c): per-source token buckets, SM_TRAP_BURST traps at
 * once then SM_TRAP_RATE per second from one source LID; the table holds
 * SM_TRAP_SOURCES sources (the longest idle one is reused).  An accepted
 * trap that asks for a heavy sweep starts a hold-off of SM_TRAP_HOLDOFF
 * seconds that collects the rest of a burst; trap-driven heavy sweeps
 * start at most once per SM_TRAP_SWEEP_INTERVAL seconds.  These are the
 * defaults of --trap-sources, --trap-burst, --trap-rate, --trap-holdoff-ms
 * and --trap-sweep-interval (struct sm_config, below); the table has room
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

struct limit_opt {
	const char *name;	/* the long option without "--" */
	size_t	 off;		/* its field in struct sm_config */
	bool	 real;		/* a double; else an integer: */
	bool	 wide;		/* ... a uint64_t, else an unsigned */
	double	 min, max;	/* accepted range, both included */
	double	 def;		/* the built-in default */
	const char *unit;	/* what the number counts, for messages */
	const char *help;	/* one line for --help */
};

extern const struct limit_opt limit_opts[];
extern const size_t n_limit_opts;

/* Set every limit of `c` to its default. */
void limits_defaults(struct sm_config *c);

/*
 * Parse `arg` as the value of limit_opts[i] into `c`.  0, or -EINVAL with
 * a message for the user in err ("--trap-rate 0: expected 0.01-10000
 * traps per second").
 */
int limit_parse(struct sm_config *c, size_t i, const char *arg, char *err,
		size_t errlen);

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
