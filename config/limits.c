/*
 * limits.c - the limits as options (see limits.h).
 *
 * Where each is used: the trap budgets and hold-off in sm/ha/state.c, the
 * log's token buckets in sm/log.c, the engine's queues in mad/engine.c
 * (mad_engine_set_queue_limits), the receive queue in mad/rxq.c (its
 * shares are fractions of it: requests half, one source 1/16 of requests
 * and 1/4 of answers), the SA's jobs, budget, answer bytes, transfers and
 * Reports in sm/sa/sa.c, its ServiceRecords, leases and subscriptions in
 * sm/sa/service.c.  main.c applies the first ones; the SA reads its own.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config/limits.h"
#include "config/sm_config.h"
#include "mad/engine.h"
#include "mad/rxq.h"

#define U(name, field, lo, hi, def, unit, help) \
	{ name, offsetof(struct sm_config, field), false, false, lo, hi, def, \
	  unit, help }
#define W(name, field, lo, hi, def, unit, help) \
	{ name, offsetof(struct sm_config, field), false, true, lo, hi, def, \
	  unit, help }
#define R(name, field, lo, hi, def, unit, help) \
	{ name, offsetof(struct sm_config, field), true, false, lo, hi, def, \
	  unit, help }

const struct limit_opt limit_opts[] = {
	U("trap-sources", trap_sources, 1, SM_TRAP_SOURCES_MAX,
	  SM_TRAP_SOURCES, "sources",
	  "sources with a trap budget"),
	U("trap-burst", trap_burst, 1, 100000, SM_TRAP_BURST, "traps",
	  "traps at once from one source LID"),
	R("trap-rate", trap_rate, 0.001, 100000, SM_TRAP_RATE,
	  "traps per second",
	  "... then traps per second"),
	U("trap-holdoff-ms", trap_holdoff_ms, 1, 60000,
	  SM_TRAP_HOLDOFF * 1000, "ms",
	  "wait after a trap for the rest"),
	R("trap-sweep-interval", trap_sweep_interval, 0.1, 3600,
	  SM_TRAP_SWEEP_INTERVAL, "seconds",
	  "s between trap-driven heavy sweeps"),
	U("log-burst", log_burst, 1, 1000000, LOG_RL_BURST, "lines",
	  "log lines of one code at once"),
	R("log-rate", log_rate, 0.001, 1000000, LOG_RL_RATE,
	  "lines per second",
	  "... then lines per second"),
	U("max-queued-smps", max_queued_smps, 256, 1u << 24,
	  ENGINE_MAX_QUEUED_SMPS, "SMPs",
	  "SMPs waiting for the wire"),
	U("max-queued-gmps", max_queued_gmps, 16, 1u << 20,
	  ENGINE_MAX_QUEUED_GMPS, "GMPs",
	  "GMPs waiting for the wire"),
	U("rx-queue", rx_queue, 16, 65535, RXQ_DEFAULT_CAP, "MADs",
	  "received MADs waiting for the loop"),
	U("sa-max-jobs", sa_max_jobs, 1, 4096, SA_MAX_JOBS, "requests",
	  "SA requests in slices at once"),
	U("sa-jobs-per-port", sa_jobs_per_port, 1, 4096,
	  SA_MAX_JOBS_PER_PORT, "requests",
	  "... from one requesting port"),
	W("sa-work-budget", sa_work_budget, 1000, 1e9, SA_WORK_BUDGET_DEFAULT,
	  "work units", "work units one SA request may cost"),
	W("sa-answer-bytes", sa_answer_bytes, 65536, 4294967296.,
	  SA_DEF_ANSWER_BYTES, "bytes",
	  "bytes of SA answers one port may hold"),
	U("sa-max-transfers", sa_max_transfers, 1, 65535, SA_DEF_MAX_TRANSFERS,
	  "transfers", "RMPP answers in flight"),
	U("sa-transfers-per-port", sa_transfers_per_port, 1, 65535,
	  SA_DEF_TRANSFERS_PER_PORT, "transfers",
	  "... to one requesting port"),
	U("sa-max-services", sa_max_services, 1, 1000000, SA_DEF_MAX_SERVICES,
	  "records", "ServiceRecords kept"),
	U("sa-services-per-port", sa_services_per_port, 1, 1000000,
	  SA_DEF_SERVICES_PER_PORT, "records", "... per ServiceGID"),
	U("sa-max-lease", sa_max_lease, 1, 4294967295., SA_DEF_MAX_LEASE,
	  "seconds", "longest lease (4294967295: infinite)"),
	U("sa-max-subscriptions", sa_max_subscriptions, 1, 1000000,
	  SA_DEF_MAX_SUBSCRIPTIONS, "subscriptions",
	  "InformInfo subscriptions kept"),
	U("sa-subscriptions-per-port", sa_subscriptions_per_port, 1, 1000000,
	  SA_DEF_SUBSCRIPTIONS_PER_PORT, "subscriptions",
	  "... per subscriber port"),
	U("sa-report-queue", sa_report_queue, 1, 1024, SA_DEF_REPORT_QUEUE,
	  "Reports", "Reports waiting per subscriber"),
	U("sa-report-failures", sa_report_failures, 1, 1000,
	  SA_DEF_REPORT_FAILURES, "Reports",
	  "unanswered Reports: unsubscribed"),
	U("mc-max-groups", mc_max_groups, 1, 65536, MC_DEF_MAX_GROUPS,
	  "groups", "multicast groups kept"),
	U("mc-members-per-group", mc_members_per_group, 1, 65536,
	  MC_DEF_MEMBERS_PER_GROUP, "members", "... ports in one group"),
	U("mc-groups-per-port", mc_groups_per_port, 1, 65536,
	  MC_DEF_GROUPS_PER_PORT, "groups", "... groups one port joins"),
};
const size_t n_limit_opts = sizeof(limit_opts) / sizeof(limit_opts[0]);

#undef U
#undef W
#undef R

static void *field(struct sm_config *c, size_t i)
{
	return (char *)c + limit_opts[i].off;
}

static void set(struct sm_config *c, size_t i, double v)
{
	if (limit_opts[i].real)
		*(double *)field(c, i) = v;
	else if (limit_opts[i].wide)
		*(uint64_t *)field(c, i) = (uint64_t)v;
	else
		*(unsigned *)field(c, i) = (unsigned)v;
}

void limits_defaults(struct sm_config *c)
{
	for (size_t i = 0; i < n_limit_opts; i++)
		set(c, i, limit_opts[i].def);
}

double limit_value(const struct sm_config *c, size_t i)
{
	const void *f = (const char *)c + limit_opts[i].off;
	double v = limit_opts[i].real ? *(const double *)f
		   : limit_opts[i].wide ? (double)*(const uint64_t *)f
		   : (double)*(const unsigned *)f;

	return v > 0 ? v : limit_opts[i].def;
}

int limit_parse(struct sm_config *c, size_t i, const char *arg, char *err,
		size_t errlen)
{
	const struct limit_opt *l = &limit_opts[i];
	const char *s = arg;
	char *end;
	double v;

	while (*s == ' ' || *s == '\t')
		s++;
	errno = 0;
	if (l->real) {
		v = strtod(s, &end);
	} else {
		unsigned long u = *s == '-' || *s == '+' ? 0 : strtoul(s, &end, 0);
		if (*s == '-' || *s == '+')
			end = (char *)s;
		v = (double)u;
	}
	if (errno || end == s || *end || !isfinite(v) || v < l->min ||
	    v > l->max) {
		snprintf(err, errlen, "--%s %s: expected %s%.15g-%.15g %s",
			 limit_opts[i].name, arg, l->real ? "" : "an integer ",
			 l->min, l->max, l->unit);
		return -EINVAL;
	}
	set(c, i, v);
	return 0;
}

size_t limits_longopts(struct option *out, int first_val)
{
	for (size_t i = 0; i < n_limit_opts; i++)
		out[i] = (struct option){ limit_opts[i].name, required_argument, NULL,
					  first_val + (int)i };
	return n_limit_opts;
}

void limits_usage(FILE *fp)
{
	fprintf(fp, "  Limits (ranges and their use: ibsm(8)):\n");
	for (size_t i = 0; i < n_limit_opts; i++) {
		char opt[48];

		snprintf(opt, sizeof(opt), "--%s N", limit_opts[i].name);
		fprintf(fp, "      %-24s %s (%.15g)\n", opt, limit_opts[i].help,
			limit_opts[i].def);
	}
}

int limits_format(const struct sm_config *c, char *buf, size_t len)
{
	size_t n = 0;
	int rc = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < n_limit_opts; i++) {
		rc = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0,
			      "%s%s %.15g", i ? ", " : "", limit_opts[i].name,
			      limit_value(c, i));
		if (rc < 0)
			return rc;
		n += (size_t)rc;
	}
	return (int)n;
}
