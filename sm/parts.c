/*
 * parts.c - the daemon's partitions: the file given with -P (OpenSM's
 * --Pconfig), read at start, on every SIGHUP, and at every heavy sweep
 * (a new master's first one too) when it changed on disk since it was
 * last read, as OpenSM reads it every heavy sweep; resolved into the
 * desired P_Key table of every port during each heavy sweep.  A file is
 * read whole while nobody writes it (config/fileutil.c), and a reload
 * that would drop every partition or member in force is refused unless
 * forced.
 *
 * A bad file never takes effect: at start ibsm refuses to run (every
 * error logged and printed as FILE:LINE:COLUMN), on a reload it keeps the
 * partitions in force and says so (OpenSM falls back to ALL=full on one
 * bad line, dropping every partition boundary).  Without -P the default
 * partition is set up as OpenSM does without a partitions.conf
 * (sm/program/pkey.c), and nothing here runs.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/conf.h"
#include "partitions/partitions.h"
#include "sm/sa/mcmember.h"
#include "sm/sm.h"

/* How often a standby stats the -P file (a stat: negligible). */
#define PART_STANDBY_LOOK_S	1.0
/* A file changed less than this long ago is still being written: an
 * automatic re-read waits (a SIGHUP or `reload` reads at once). */
#define PART_SETTLE_S		1.0

/*
 * Log (and with `to_stderr`, print) every error and warning of a parse;
 * with `out`, also hand them to the caller of a reload (sm/ctl/cmd_config.c).
 */
static void report(const char *file, const struct part_diag *d,
		   bool to_stderr, struct cfg_msgs *out)
{
	char line[320];

	for (size_t i = 0; i < d->n_errors; i++) {
		part_error_format(NULL, file, &d->errors[i], line, sizeof(line));
		log_err("ERR 0701: %s", line);
		if (to_stderr)
			log_stderr(LOG_LVL_ERR, "%s", line);
		if (out)
			cfg_msgs_add(out, "error: %s", line);
	}
	for (size_t i = 0; i < d->n_warnings; i++) {
		part_error_format(NULL, file, &d->warnings[i], line,
				  sizeof(line));
		log_warnx("ERR 0702: %s", line);
		if (to_stderr)
			log_stderr(LOG_LVL_WARN, "warning: %s", line);
		if (out)
			cfg_msgs_add(out, "warning: %s", line);
	}
}

static const struct part *find_pkey(const struct part_config *c, uint16_t pkey)
{
	for (size_t i = 0; i < c->n_parts; i++)
		if (c->parts[i].pkey == pkey)
			return &c->parts[i];
	return NULL;
}

/* Same partition, same flags and members (what the ports would hold). */
static bool same_part(const struct part *a, const struct part *b)
{
	if (a->ipoib != b->ipoib || a->indx0 != b->indx0 ||
	    a->defmember != b->defmember || a->n_members != b->n_members ||
	    a->rate != b->rate || a->mtu != b->mtu || a->sl != b->sl)
		return false;
	for (size_t i = 0; i < a->n_members; i++) {
		const struct part_member *x = &a->members[i], *y = &b->members[i];

		if (x->kind != y->kind || x->guid != y->guid ||
		    x->membership != y->membership)
			return false;
	}
	return true;
}

/* One line per partition added, removed or changed by a reload. */
static void log_changes(const struct part_config *old,
			const struct part_config *now, struct cfg_msgs *out)
{
	unsigned added = 0, removed = 0, changed = 0;

	for (size_t i = 0; i < now->n_parts; i++) {
		const struct part *p = &now->parts[i];
		const struct part *o = find_pkey(old, p->pkey);

		if (!o) {
			log_info("partitions: added %s (0x%04x)", p->name, p->pkey);
			added++;
		} else if (!same_part(o, p)) {
			log_info("partitions: changed %s (0x%04x)", p->name,
				 p->pkey);
			changed++;
		}
	}
	for (size_t i = 0; i < old->n_parts; i++) {
		if (!find_pkey(now, old->parts[i].pkey)) {
			log_info("partitions: removed %s (0x%04x)",
				 old->parts[i].name, old->parts[i].pkey);
			removed++;
		}
	}
	log_info("partitions: %u added, %u removed, %u changed; applied in"
		 " the next heavy sweep", added, removed, changed);
	if (out)
		cfg_msgs_add(out, "changed: partitions: %u added, %u removed,"
			     " %u changed", added, removed, changed);
}

/* What a configuration defines beyond what every one has (the default
 * partition with its built-in members): partitions and members. */
static void defined(const struct part_config *c, size_t *parts,
		    size_t *members)
{
	*parts = *members = 0;
	for (size_t i = 0; c && i < c->n_parts; i++) {
		*parts += c->parts[i].pkey != PART_PKEY_DEFAULT;
		for (size_t k = 0; k < c->parts[i].n_members; k++)
			*members += c->parts[i].members[k].line != 0;
	}
}

/*
 * A reload that would take away every partition, or every member, that
 * the configuration in force defines (an emptied file, a comment-only
 * one, or one read between a copy's truncation and its write), or whose
 * partitions name no port of the subnet where those in force do (the
 * model of the last sweep): every port stripped.  Refused unless
 * forced; the message says how to force it.
 */
static bool drastic(struct sm *sm, const struct part_config *now,
		    const char *path, struct cfg_msgs *out)
{
	size_t op, om, np, nm;
	int reach_old, reach_now;

	defined(sm->parts, &op, &om);
	defined(now, &np, &nm);
	if ((op && !np) || (om && !nm)) {
		log_err("ERR 0708: %s defines %zu partitions and %zu members"
			" where %zu and %zu are in force: not applied, the"
			" partitions in force stay (an emptied file, or one read"
			" while being copied?); `ibsmctl partitions apply"
			" --force` applies it", path, np, nm, op, om);
		if (out)
			cfg_msgs_add(out, "error: %s defines %zu partitions and"
				     " %zu members where %zu and %zu are in"
				     " force: not applied; `ibsmctl partitions"
				     " apply --force` applies it", path, np,
				     nm, op, om);
		return true;
	}
	/* Partitions left, but none naming a port of the subnet (every
	 * GUID wrong: a file from another subnet?) strips every port. */
	if (!sm->fabric.n_nodes)
		return false;
	reach_old = part_reach(sm->parts, &sm->fabric);
	reach_now = part_reach(now, &sm->fabric);
	if (reach_old <= 0 || reach_now != 0)
		return false;
	log_err("ERR 0708: %s: none of its %zu partitions names a port of the"
		" subnet (%d of those in force do): not applied, the"
		" partitions in force stay; `ibsmctl partitions apply --force`"
		" applies it", path, np, reach_old);
	if (out)
		cfg_msgs_add(out, "error: %s: none of its %zu partitions names a"
			     " port of the subnet (%d of those in force do): not"
			     " applied; `ibsmctl partitions apply --force`"
			     " applies it", path, np, reach_old);
	return true;
}

/* A read or parse that failed: say so; the partitions in force stay. */
static int load_failed(const char *path, int rc, bool startup,
		       struct cfg_msgs *out)
{
	if (rc != -EINVAL) {
		const char *why = rc == -EAGAIN ? "it kept changing while"
			" being read" : strerror(-rc);

		log_err("ERR 0703: cannot read %s: %s", path, why);
		if (out)
			cfg_msgs_add(out, "error: cannot read %s: %s", path,
				     why);
		if (startup)
			log_stderr(LOG_LVL_ERR, "cannot read %s: %s", path,
				   why);
	}
	if (!startup)
		log_err("ERR 0704: %s not applied: the partitions in"
			" force stay as they were", path);
	if (out)
		cfg_msgs_add(out, "refused: %s not applied: the"
			     " partitions in force stay as they were", path);
	return rc;
}

static int parts_load(struct sm *sm, bool startup, struct cfg_msgs *out,
		      bool force)
{
	const char *path = sm->cfg.partition_config;
	struct part_options opt = { .allow_both_pkeys = sm->cfg.allow_both_pkeys };
	struct part_config now;
	struct part_diag diag;
	struct file_stamp st;
	int rc;

	if (!path)
		return 0;
	memset(&now, 0, sizeof(now));
	memset(&diag, 0, sizeof(diag));
	memset(&st, 0, sizeof(st));
	rc = part_load_stamped(path, &opt, &now, &diag, &st);
	/* The content read (good or bad) is not read again until it
	 * changes (sm_parts_refresh). */
	sm->parts_seen_ok = st.ino != 0;
	if (sm->parts_seen_ok)
		sm->parts_seen = st;
	sm->parts_pending = false;
	report(path, &diag, startup, out);
	part_diag_free(&diag);
	if (rc < 0) {
		part_config_free(&now);
		return load_failed(path, rc, startup, out);
	}
	if (sm->parts && !force && drastic(sm, &now, path, out)) {
		part_config_free(&now);
		return load_failed(path, -EINVAL, startup, out);
	}
	if (sm->parts) {
		log_changes(sm->parts, &now, out);
		part_config_free(sm->parts);
	} else {
		sm->parts = calloc(1, sizeof(*sm->parts));
		if (!sm->parts) {
			part_config_free(&now);
			return -ENOMEM;
		}
		log_info("partitions: %zu from %s", now.n_parts, path);
	}
	*sm->parts = now;
	sa_mcast_precreate(sm);		/* no-op at start: sm->mc comes later */
	if (sm->mc_stale && out)
		cfg_msgs_add(out, "warning: %u pre-created multicast groups"
			     " keep the MTU and rate their members joined with"
			     " until they are empty (ERR 0805 in the log)",
			     sm->mc_stale);
	return 0;
}

int sm_parts_load(struct sm *sm, bool startup)
{
	return parts_load(sm, startup, NULL, false);
}

int sm_parts_reload(struct sm *sm, struct cfg_msgs *report)
{
	return parts_load(sm, false, report, false);
}

int sm_parts_reload_force(struct sm *sm, struct cfg_msgs *report, bool force)
{
	return parts_load(sm, false, report, force);
}

/* Written less than PART_SETTLE_S ago (a clock behind the file's time
 * counts as settled, so that skew cannot hold a file back forever). */
static bool too_young(const struct file_stamp *st)
{
	double age = ev_time() - ((double)st->mtime_s + st->mtime_ns * 1e-9);

	return age >= 0 && age < PART_SETTLE_S;
}

int sm_parts_refresh(struct sm *sm)
{
	const char *path = sm->cfg.partition_config;
	struct file_stamp st;
	int rc;

	if (!path || !sm->parts)
		return 0;
	rc = file_stamp_get(path, &st);
	if (rc < 0) {
		/* gone or unreadable: the partitions in force stay; said
		 * once, until the file is back */
		if (sm->parts_seen_ok) {
			log_err("ERR 0703: cannot read %s: %s; the partitions"
				" in force stay", path, strerror(-rc));
			sm->parts_seen_ok = false;
		}
		return 0;
	}
	if (sm->parts_seen_ok && file_stamp_same(&st, &sm->parts_seen))
		return 0;
	/* Being written (an editor's or a copy's chunks): looked at again
	 * by the timer once it has settled. */
	if (too_young(&st)) {
		if (!sm->parts_pending)
			log_debug("partitions: %s changed less than %.0f s ago:"
				  " read once it has settled", path,
				  PART_SETTLE_S);
		sm->parts_pending = true;
		return 0;
	}
	sm->parts_pending = false;
	log_info("partitions: %s changed on disk since it was read: reading"
		 " it again", path);
	return parts_load(sm, false, NULL, false) == 0;
}

void sm_parts_free(struct sm *sm)
{
	if (sm->loop)
		ev_timer_stop(sm->loop, &sm->parts_timer);
	if (!sm->parts)
		return;
	part_config_free(sm->parts);
	free(sm->parts);
	sm->parts = NULL;
}

/*
 * The keys that did not fit (enforcement stays on: the port drops the
 * partitions it does not hold).  One line per port and key, rate-limited
 * under one code so that a fabric-wide shortfall (every switch of a model
 * with a small PartitionEnforcementCap) cannot flood the log: the report
 * describes the first PART_DROP_DETAIL, and the summary counts them all.
 */
static void log_drops(const struct part_config *c, const struct fabric *f,
		      const struct part_resolve_report *rep)
{
	if (!rep->dropped)
		return;
	for (unsigned i = 0; i < rep->n_drops; i++) {
		const struct part_drop *d = &rep->drops[i];
		const struct fab_node *n = (size_t)d->node < f->n_nodes
					   ? &f->nodes[d->node] : NULL;
		const struct part *p = find_pkey(c, d->key & 0x7fff);

		log_ratelimited(LOG_LVL_WARN, 707, "node 0x%016" PRIx64
				" (%s) port %u: no room for P_Key 0x%04x of"
				" partition %s (%s member)", d->node_guid,
				n ? fab_node_label(n) : "",
				d->port, d->key, p ? p->name : "?",
				d->key & PART_FULL_BIT ? "full" : "limited");
	}
	log_warnx("ERR 0706: %u P_Keys did not fit the tables of %u ports"
		  " (%u listed under ERR 0707; enforcement stays on: see the"
		  " partitions section of ibsm(8))", rep->dropped,
		  rep->drop_ports, rep->n_drops);
}

/*
 * GUID members that name no port of the subnet (a typo, or a host that is
 * down): each of the first PART_UNKNOWN_DETAIL named with FILE:LINE:COLUMN,
 * when the count differs from the last sweep's (a host that stays down
 * is not told again every sweep).
 */
static void log_unknown(struct sm *sm, const struct part_resolve_report *rep)
{
	const char *file = sm->cfg.partition_config;

	if (rep->unknown_guids == sm->parts_unknown)
		return;
	sm->parts_unknown = rep->unknown_guids;
	if (!rep->unknown_guids) {
		log_info("partitions: every member GUID is a port of the subnet");
		return;
	}
	for (unsigned i = 0; i < rep->n_unknown; i++) {
		const struct part_member *m = rep->unknown[i];

		log_warnx("ERR 0709: %s:%u:%u: member 0x%016" PRIx64 " is no"
			  " port of the subnet (a switch's node GUID or an"
			  " end port's GUID expected)", file, m->line, m->col,
			  m->guid);
	}
	log_warnx("ERR 0709: %u member GUIDs of %s are no port of the subnet"
		  "%s", rep->unknown_guids, file, rep->unknown_guids >
		  rep->n_unknown ? " (the first listed above)" : "");
}

/*
 * Every second: a standby follows the file as it changes (a good file
 * becomes its last good one, a bad one is named with FILE:LINE), so that
 * when it takes over it applies what the master applied from the same
 * file, even when the file on disk is broken by then; nothing is
 * programmed here.  A master reads a file that a heavy sweep found too
 * young once it has settled, and asks for a heavy sweep when that
 * changed the partitions.
 */
static void on_parts_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sm *sm = w->data;

	(void)loop;
	(void)revents;
	if (sm->state == SM_STANDBY) {
		(void)sm_parts_refresh(sm);
	} else if (sm->parts_pending && sm->state == SM_MASTER &&
		   sm_parts_refresh(sm)) {
		/* A change a heavy sweep put off until the file settled:
		 * applied by another heavy sweep. */
		(void)sm_post(sm, SM_EV_CHANGE);
	}
}

void sm_parts_watch(struct sm *sm)
{
	if (!sm->cfg.partition_config || !sm->loop || sm->cfg.once ||
	    ev_is_active(&sm->parts_timer))
		return;
	ev_timer_init(&sm->parts_timer, on_parts_timer, PART_STANDBY_LOOK_S,
		      PART_STANDBY_LOOK_S);
	sm->parts_timer.data = sm;
	ev_timer_start(sm->loop, &sm->parts_timer);
}

int sm_parts_resolve(struct sm *sm, struct fabric *f)
{
	struct part_resolve_report rep;
	const struct part_resolve_opts opts = {
		.keep_pkey_indexes = !sm->cfg.no_keep_pkey_indexes,
	};
	int rc;

	if (!sm->parts)
		return 0;
	(void)sm_parts_refresh(sm);
	/* Groups that kept old parameters while they had members: those
	 * that are empty now take the partition's. */
	if (sm->mc_stale)
		sa_mcast_precreate(sm);
	memset(&rep, 0, sizeof(rep));
	rc = part_resolve_opts(sm->parts, f, sm->port_guid, &opts, &rep);
	if (rc < 0) {
		log_err_rc(rc, "ERR 0705: cannot resolve the partitions");
		return rc;
	}
	log_drops(sm->parts, f, &rep);
	if (rep.moved)
		log_info("partitions: %u P_Keys could not keep their index"
			 " (keep_pkey_indexes)", rep.moved);
	log_unknown(sm, &rep);
	log_debug("partitions: tables for %u ports", rep.ports);
	return 0;
}
