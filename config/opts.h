/*
 * opts.h - ibsm's command line: every option of OpenSM 3.3.23 (opensm
 * --help, opensm(8)) with OpenSM's spelling and meaning, and ibsm's own.
 * Most set an opensm.conf key of config/keys.c (the value given, or a
 * fixed one for a flag such as -r: reassign_lids TRUE); the rest are
 * actions the daemon carries out (OPT_SP_*).  The getopt tables and the
 * --help text are built from this one table.
 */
#ifndef IBSM_CONFIG_OPTS_H
#define IBSM_CONFIG_OPTS_H

#include <getopt.h>
#include <stdio.h>

enum opt_special {
	OPT_SP_NONE,		/* sets `key` */
	OPT_SP_CONFIG,		/* -F FILE */
	OPT_SP_CREATE,		/* -c FILE */
	OPT_SP_CHECK,		/* --check-config */
	OPT_SP_ONCE,		/* -o */
	OPT_SP_HELP,		/* -h, -? */
	OPT_SP_VERSION,		/* --version */
	OPT_SP_VERBOSE,		/* -v: one more level of log_flags */
	OPT_SP_DEBUG,		/* -d N: OpenSM's debug switches */
	OPT_SP_DUMP_FABRIC,	/* --dump-fabric FILE */
	OPT_SP_DISCOVER_ONLY,	/* --discover-only */
	OPT_SP_DUMP_LFTS,	/* --dump-lfts */
	OPT_SP_ROUTE_ONLY,	/* --route-only FILE */
	OPT_SP_JSON,		/* --json (with --route-only) */
	OPT_SP_STRICT,		/* --strict: warnings of the -F file are fatal */
};

struct cfg_opt {
	const char *lng;	/* long option, without "--" */
	char	 sht;		/* short option, or 0 */
	int	 arg;		/* no_argument, required_argument, ... */
	const char *key;	/* the opensm.conf key it sets */
	const char *fixed;	/* no_argument: the value it sets the key to */
	enum opt_special sp;
	const char *meta;	/* the argument in --help */
	const char *help;	/* one line for --help; NULL: not listed */
};

extern const struct cfg_opt cfg_opts[];
extern const size_t n_cfg_opts;

/* getopt values of long options: OPT_LONG_BASE + index in cfg_opts;
 * of the limits (config/limits.h): OPT_LIMIT_BASE + index in limit_opts. */
#define OPT_LONG_BASE	1000
#define OPT_LIMIT_BASE	2000

/*
 * The getopt_long tables: shorts (":F:c:...", the leading ':' for
 * missing arguments), and *longs (malloc'd, with
 * the limits of config/limits.h and a terminator).  Returns 0 or -ENOMEM.
 */
int cfg_opts_getopt(char *shorts, size_t len, struct option **longs);

/* Which option getopt_long returned (not a limit); NULL if none. */
const struct cfg_opt *cfg_opt_of(int c);

/* The --help text. */
void cfg_opts_usage(FILE *fp);

#endif /* IBSM_CONFIG_OPTS_H */
