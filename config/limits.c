/*
 * limits.c - the limits as options (see limits.h); their keys are the
 * last of config/keys.c's table.
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

#include "config/conf.h"
#include "config/limits.h"
#include "config/sm_config.h"

/* The field of limit key k in c; a double (CFG_REAL), else an unsigned
 * or a uint64_t by its size. */
static void *field(struct sm_config *c, const struct cfg_key *k)
{
	return (char *)c + k->off;
}

static bool is_real(const struct cfg_key *k)
{
	return k->type == CFG_REAL;
}

static bool is_wide(const struct cfg_key *k)
{
	return k->type != CFG_REAL && k->size == sizeof(uint64_t);
}

static void set(struct sm_config *c, const struct cfg_key *k, double v)
{
	if (is_real(k))
		*(double *)field(c, k) = v;
	else if (is_wide(k))
		*(uint64_t *)field(c, k) = (uint64_t)v;
	else
		*(unsigned *)field(c, k) = (unsigned)v;
}

void limits_defaults(struct sm_config *c)
{
	for (size_t i = 0; i < n_limit_opts; i++)
		set(c, &limit_opts[i], limit_opts[i].num);
}

double limit_value(const struct sm_config *c, size_t i)
{
	const struct cfg_key *k = &limit_opts[i];
	const void *f = (const char *)c + k->off;
	double v = is_real(k) ? *(const double *)f
		   : is_wide(k) ? (double)*(const uint64_t *)f
		   : (double)*(const unsigned *)f;

	return v > 0 ? v : k->num;
}

int limit_parse(struct sm_config *c, size_t i, const char *arg, char *err,
		size_t errlen)
{
	return cfg_limit_parse(c, &limit_opts[i], arg, err, errlen);
}

int cfg_limit_parse(struct sm_config *c, const struct cfg_key *l,
		    const char *arg, char *err, size_t errlen)
{
	const char *s = arg;
	char *end;
	double v;

	while (*s == ' ' || *s == '\t')
		s++;
	errno = 0;
	if (is_real(l)) {
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
			 l->name, arg, is_real(l) ? "" : "an integer ",
			 l->min, l->max, l->unit);
		return -EINVAL;
	}
	set(c, l, v);
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
			limit_opts[i].num);
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
