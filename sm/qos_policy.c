/*
 * qos_policy.c - the daemon's QoS policy file (qos_policy_file, with
 * `qos TRUE`, as OpenSM): read at start and on every SIGHUP or control
 * socket reload, bound to the model of each heavy sweep (its port-name,
 * partition, pkey and SELF entries resolved against the subnet: qos/
 * members.c) and to the partitions in force, and handed to the SA
 * (sm/sa/path.c), which gives PathRecord and MultiPathRecord answers the
 * SL, MTU, rate, packet lifetime and P_Key limits of the level each
 * query matches.
 *
 * A bad file never takes effect: at start ibsm refuses to run (the error
 * printed and logged as FILE:LINE:COLUMN); on a reload the error is
 * logged the same way and the policy in force stays (OpenSM drops its
 * policy then); the next reload of a fixed file applies it.  The file
 * at OpenSM's default path that does not exist is no policy, as in
 * OpenSM; another path that cannot be read is an error.
 *
 * Also the partitions' SL (partitions.conf sl=) for the SA, with qos TRUE
 * (OpenSM sets a partition's SL to 0 without QoS): a table of the 15-bit
 * P_Keys' SLs, built only when a partition gives one, so that the SA's
 * path costs nothing more without.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config/conf.h"
#include "partitions/partitions.h"
#include "qos/qos.h"
#include "sm/sm.h"

#define QOS_DEFAULT_POLICY_FILE	"/etc/opensm/qos-policy.conf"

struct sm_qos {
	struct qos_policy pol;
	bool loaded;			/* pol holds a policy */
	char *file;			/* ... read from this file */
	struct qos_members *mem;	/* ... bound to the model of gen */
	uint64_t mem_gen;
	unsigned last_warnings;		/* the last bind's, logged once */
	uint8_t *part_sl;		/* SL by 15-bit P_Key; NULL: all 0 */
	time_t loaded_at;		/* when pol was read */
	char *error;			/* the last load's error; NULL: it was good */
	time_t error_at;
};

static struct sm_qos *state(struct sm *sm)
{
	if (!sm->qos)
		sm->qos = calloc(1, sizeof(*sm->qos));
	return sm->qos;
}

static void drop_policy(struct sm_qos *q)
{
	if (q->loaded)
		qos_policy_free(&q->pol);
	memset(&q->pol, 0, sizeof(q->pol));
	q->loaded = false;
	free(q->file);
	q->file = NULL;
	qos_members_free(q->mem);
	q->mem = NULL;
	q->mem_gen = 0;
	q->last_warnings = 0;
}

/* The partitions in force by name and P_Key (Default alone without -P). */
static struct qos_part_ref *part_refs(const struct sm *sm, size_t *n)
{
	const struct part_config *c = sm->parts;
	struct qos_part_ref *v;

	*n = c ? c->n_parts : 1;
	v = calloc(*n ? *n : 1, sizeof(*v));
	if (!v)
		return NULL;
	if (!c) {
		v[0].name = "Default";
		v[0].pkey = PART_PKEY_DEFAULT;
		return v;
	}
	for (size_t i = 0; i < c->n_parts; i++) {
		v[i].name = c->parts[i].name;
		v[i].pkey = c->parts[i].pkey;
	}
	return v;
}

static bool part_known(const struct qos_part_ref *v, size_t n, uint16_t base)
{
	for (size_t i = 0; i < n; i++)
		if ((v[i].pkey & 0x7fff) == base)
			return true;
	return false;
}

/* Does any configured partition fall in [lo, hi]? */
static bool part_in(const struct qos_part_ref *v, size_t n, uint16_t lo,
		    uint16_t hi)
{
	for (size_t i = 0; i < n; i++)
		if ((v[i].pkey & 0x7fff) >= lo && (v[i].pkey & 0x7fff) <= hi)
			return true;
	return false;
}

/* One P_Key range of a rule or level against the partitions (OpenSM
 * ERR AC14: a warning, the rule stays). */
static void check_range(const char *file, const char *what, unsigned line,
			unsigned col, const struct qos_range *r,
			const struct qos_part_ref *v, size_t n,
			struct cfg_msgs *out)
{
	uint16_t lo = r->lo & 0x7fff, hi = r->hi & 0x7fff;

	if (lo > hi) {
		uint16_t t = lo;

		lo = hi;
		hi = t;
	}
	if (lo == hi ? part_known(v, n, lo) : part_in(v, n, lo, hi))
		return;
	if (lo == hi)
		log_warnx("ERR 3204: %s:%u:%u: %s pkey 0x%04x: no partition"
			  " has that P_Key", file, line, col, what, lo);
	else
		log_warnx("ERR 3204: %s:%u:%u: %s pkey 0x%04x-0x%04x: no"
			  " partition has a P_Key in that range", file, line,
			  col, what, lo, hi);
	if (out)
		cfg_msgs_add(out, "warning: %s:%u:%u: %s P_Key 0x%04x%s names"
			     " no partition", file, line, col, what, lo,
			     lo == hi ? "" : " (range)");
}

/* The P_Keys the policy names, checked against the partitions. */
static void check_pkeys(const struct sm *sm, const struct qos_policy *p,
			const char *file, struct cfg_msgs *out)
{
	size_t n;
	struct qos_part_ref *v = part_refs(sm, &n);

	if (!v)
		return;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct qos_rule *r = &p->rules[i];

		for (size_t k = 0; k < r->pkey.n; k++)
			check_range(file, r->from_ulp ? "qos-ulps" :
				    "qos-match-rule", r->line, r->col,
				    &r->pkey.v[k], v, n, out);
	}
	for (size_t i = 0; i < p->n_levels; i++) {
		const struct qos_level *l = &p->levels[i];

		for (size_t k = 0; k < l->pkeys.n; k++)
			check_range(file, "qos-level", l->line, l->col,
				    &l->pkeys.v[k], v, n, out);
	}
	free(v);
}

static int load_failed(const char *file, int rc, const struct qos_error *e,
		       bool startup, struct cfg_msgs *out)
{
	if (rc == -EINVAL) {
		log_err("ERR 3201: %s:%u:%u: %s", file, e->line, e->col,
			e->msg);
		if (startup)
			log_stderr(LOG_LVL_ERR, "%s:%u:%u: %s", file, e->line,
				   e->col, e->msg);
		if (out)
			cfg_msgs_add(out, "error: %s:%u:%u: %s", file, e->line,
				     e->col, e->msg);
	} else {
		log_err("ERR 3201: cannot read %s: %s", file, strerror(-rc));
		if (startup)
			log_stderr(LOG_LVL_ERR, "cannot read %s: %s", file,
				   strerror(-rc));
		if (out)
			cfg_msgs_add(out, "error: cannot read %s: %s", file,
				     strerror(-rc));
	}
	if (!startup) {
		log_err("ERR 3202: %s not applied: the QoS policy in force"
			" stays as it was", file);
		if (out)
			cfg_msgs_add(out, "refused: %s not applied: the QoS"
				     " policy in force stays as it was", file);
	}
	return rc;
}

/* What the last load of `file` came to, for sm_qos_status(). */
static void note_load(struct sm_qos *q, const char *file, int rc,
		      const struct qos_error *e)
{
	char buf[400];

	free(q->error);
	q->error = NULL;
	if (rc >= 0)
		return;
	if (rc == -EINVAL || rc == -E2BIG)
		snprintf(buf, sizeof(buf), "%s:%u:%u: %s", file, e->line,
			 e->col, e->msg);
	else
		snprintf(buf, sizeof(buf), "cannot read %s: %s", file,
			 strerror(-rc));
	q->error = strdup(buf);
	q->error_at = time(NULL);
}

static int policy_load(struct sm *sm, bool startup, struct cfg_msgs *out)
{
	const char *file = sm->cfg.qos_policy_file;
	struct sm_qos *q = sm->qos;
	struct qos_policy now;
	struct qos_error err;
	int rc;

	if (!q && (!sm->cfg.qos || !file))
		return 0;
	if (!q && !(q = state(sm)))
		return -ENOMEM;
	if (!sm->cfg.qos || !file) {
		if (q->loaded)
			log_info("qos: no QoS policy in force now (%s)",
				 sm->cfg.qos ? "no qos_policy_file" :
				 "qos FALSE");
		drop_policy(q);
		return 0;
	}
	memset(&now, 0, sizeof(now));
	memset(&err, 0, sizeof(err));
	rc = qos_load(file, &now, &err);
	if (rc == -ENOENT && !strcmp(file, QOS_DEFAULT_POLICY_FILE)) {
		if (q->loaded)
			log_info("qos: %s is gone: no QoS policy in force now",
				 file);
		drop_policy(q);
		return 0;
	}
	note_load(q, file, rc == -ENOENT && !strcmp(file,
			QOS_DEFAULT_POLICY_FILE) ? 0 : rc, &err);
	if (rc < 0)
		return load_failed(file, rc, &err, startup, out);
	check_pkeys(sm, &now, file, out);
	log_info("qos: policy %s%s: %zu port groups, %zu levels, %zu match"
		 " rules (qos-ulps included)", file, q->loaded ? " again" : "",
		 now.n_groups, now.n_levels, now.n_rules);
	if (out)
		cfg_msgs_add(out, "changed: qos policy %s: %zu levels, %zu match"
			     " rules", file, now.n_levels, now.n_rules);
	drop_policy(q);
	q->pol = now;
	q->loaded = true;
	q->file = strdup(file);
	q->loaded_at = time(NULL);
	sm_qos_bind(sm);
	return 0;
}

int sm_qos_load(struct sm *sm, bool startup)
{
	return policy_load(sm, startup, NULL);
}

int sm_qos_reload(struct sm *sm, struct cfg_msgs *report)
{
	return policy_load(sm, false, report);
}

static bool part_sl_any(const struct part_config *c)
{
	for (size_t i = 0; c && i < c->n_parts; i++)
		if (c->parts[i].sl)
			return true;
	return false;
}

/* partitions.conf sl=: the SL of each 15-bit P_Key, when any is set and
 * qos is TRUE (OpenSM takes a partition's SL only then). */
static void part_sl_build(struct sm *sm, struct sm_qos *q)
{
	const struct part_config *c = sm->parts;

	free(q->part_sl);
	q->part_sl = NULL;
	if (!sm->cfg.qos || !part_sl_any(c) || !(q->part_sl = calloc(0x8000, 1)))
		return;
	for (size_t i = 0; i < c->n_parts; i++)
		q->part_sl[c->parts[i].pkey & 0x7fff] = c->parts[i].sl & 0xf;
}

void sm_qos_bind(struct sm *sm)
{
	struct sm_qos *q;
	struct qos_bind_report rep;
	struct qos_members *m;
	struct qos_part_ref *v;
	size_t n;

	/* nothing to keep: no state (unit tests, qos FALSE, no sl=) */
	if (!sm->qos && (!sm->cfg.qos || !part_sl_any(sm->parts)))
		return;
	if (!(q = state(sm)))
		return;
	part_sl_build(sm, q);
	/* before the first sweep there is nothing to bind to */
	if (!q->loaded || !sm->fabric.n_nodes)
		return;
	if (!(v = part_refs(sm, &n)))
		return;
	if (qos_members_build(&q->pol, &sm->fabric,
			      &(struct qos_bind_in){ .parts = v, .n_parts = n,
						     .sm_guid = sm->port_guid },
			      &m, &rep) < 0) {
		free(v);
		log_err("ERR 3203: qos: out of memory binding %s to the"
			" subnet; the previous binding stays", q->file);
		return;
	}
	free(v);
	qos_members_free(q->mem);
	q->mem = m;
	q->mem_gen = sm->fabric.gen;
	if (rep.n_warnings == q->last_warnings)
		return;
	q->last_warnings = rep.n_warnings;
	for (unsigned i = 0; i < rep.n_detail; i++)
		log_warnx("ERR 3205: %s:%u:%u: %s", q->file,
			  rep.detail[i].line, rep.detail[i].col,
			  rep.detail[i].msg);
	if (rep.n_warnings > rep.n_detail)
		log_warnx("ERR 3205: %s: %u more port-group entries name no"
			  " port", q->file, rep.n_warnings - rep.n_detail);
}

const struct qos_policy *sm_qos_policy(const struct sm *sm,
				       const struct qos_members **m)
{
	const struct sm_qos *q = sm->qos;

	if (m)
		*m = q ? q->mem : NULL;
	if (!q || !q->loaded || !sm->cfg.qos)
		return NULL;
	return &q->pol;
}

const uint8_t *sm_part_sl(const struct sm *sm)
{
	return sm->qos ? sm->qos->part_sl : NULL;
}

void sm_qos_free(struct sm *sm)
{
	if (!sm->qos)
		return;
	drop_policy(sm->qos);
	free(sm->qos->error);
	free(sm->qos->part_sl);
	free(sm->qos);
	sm->qos = NULL;
}

void sm_qos_status(const struct sm *sm, struct sm_qos_status *st)
{
	const struct sm_qos *q = sm->qos;

	memset(st, 0, sizeof(*st));
	st->file = q && q->loaded ? q->file : sm->cfg.qos_policy_file;
	if (!q)
		return;
	st->loaded = q->loaded ? q->loaded_at : 0;
	st->error = q->error;
	st->error_at = q->error ? q->error_at : 0;
}
