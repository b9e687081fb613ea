/*
 * limits.h - the daemon's bounds on what the network can make it hold or
 * do, as long options: trap budgets, the log's rate limiter, the MAD
 * engine's queues, the receive queue, and the SA's jobs, work budget,
 * answer bytes, RMPP transfers, ServiceRecords, leases, subscriptions and
 * Reports.  One table
 * (limits.c) drives parsing with range checks, --help, the "limits:" log
 * line and the defaults, so that none of them can drift from the others.
 *
 * Every limit lives in struct sm_config (sm/sm.h).  A field left 0 (a
 * config built by a test, say) means the built-in default where the limit
 * is used; on the command line 0 is out of range and refused.
 */
#ifndef IBSM_CONFIG_LIMITS_H
#define IBSM_CONFIG_LIMITS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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
