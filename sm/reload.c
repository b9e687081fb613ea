/*
 * reload.c - the daemon's configuration read again (SIGHUP, the control
 * socket's reload): the worker the state machine runs on SM_EV_RELOAD
 * (sm/ha/state.c), before the partitions file and the heavy sweep.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/compat.h"
#include "config/conf.h"
#include "sm/log.h"
#include "sm/mkey.h"
#include "sm/sm.h"

/*
 * SIGHUP and the control socket's reload (SM_EV_RELOAD: the state
 * machine calls it, through sm->reload, before the heavy sweep it asks
 * for): the -F file again.
 * Keys OpenSM re-applies at run time take their new values now, each
 * change logged; the others keep their old values until a restart,
 * named in a warning; a file with errors changes nothing.  Command-line
 * values stay over the file.  With `report`, every line logged here also
 * goes to the caller ("error: ", "warning: ", "changed: ").
 */
int sm_config_reload(struct sm *sm, struct cfg_msgs *report)
{
	struct cfg *conf = sm->conf, next;
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);
	char restart[1024] = "", ignored[1024] = "";
	/* the log says who asked: the signal, or ibsmctl reload */
	const char *by = report ? "control socket reload" : "SIGHUP";
	int rc;

	if (!conf || !conf->file)
		return 0;
	cfg_init(&next);
	for (size_t i = 0; i < n; i++)
		if (conf->v[i].src == CFG_SRC_CMDLINE) {
			next.v[i] = conf->v[i];
			next.v[i].val = strdup(conf->v[i].val);
		}
	rc = cfg_read_file(&next, conf->file);
	if (rc < 0) {
		if (rc != -EINVAL) {
			log_err("ERR 0901: %s: cannot read %s: %s; the"
				" configuration in force stays", by, conf->file,
				strerror(-rc));
			if (report)
				cfg_msgs_add(report, "error: cannot read %s: %s;"
					     " the configuration in force stays",
					     conf->file, strerror(-rc));
		}
		for (size_t i = 0; i < next.errors.n; i++) {
			log_err("ERR 0902: %s", next.errors.msg[i]);
			if (report)
				cfg_msgs_add(report, "error: %s",
					     next.errors.msg[i]);
		}
		if (rc == -EINVAL) {
			log_err("ERR 0901: %s: %s has %zu error%s: nothing"
				" changed; the configuration in force stays",
				by, conf->file, next.errors.n,
				next.errors.n == 1 ? "" : "s");
			if (report)
				cfg_msgs_add(report, "refused: %s has %zu error%s:"
					     " nothing changed; the configuration"
					     " in force stays", conf->file,
					     next.errors.n,
					     next.errors.n == 1 ? "" : "s");
		}
		cfg_free(&next);
		return rc;
	}
	for (size_t i = 0; i < next.unknown.n; i++) {
		log_warnx("ERR 0903: %s (ignored)", next.unknown.msg[i]);
		if (report)
			cfg_msgs_add(report, "warning: %s (ignored)",
				     next.unknown.msg[i]);
	}
	for (size_t i = 0; i < next.warnings.n; i++) {
		log_warnx("ERR 0906: %s", next.warnings.msg[i]);
		if (report)
			cfg_msgs_add(report, "warning: %s", next.warnings.msg[i]);
	}
	/* the warnings in force are the new file's (dump-config) */
	cfg_msgs_free(&conf->unknown);
	cfg_msgs_free(&conf->warnings);
	conf->unknown = next.unknown;
	conf->warnings = next.warnings;
	next.unknown = (struct cfg_msgs){ NULL, 0 };
	next.warnings = (struct cfg_msgs){ NULL, 0 };
	for (size_t i = 0; i < n; i++) {
		const char *was = cfg_get(conf, i), *now = cfg_get(&next, i);
		char *list = keys[i].flags & CFG_IMPL ? restart : ignored;
		size_t used;

		if (cfg_value_eq(&keys[i], was, now))
			continue;	/* 0x07 and 7 are one value */
		if (keys[i].flags & CFG_RT && keys[i].flags & CFG_IMPL) {
			log_info("config: %s %s -> %s", keys[i].name, was, now);
			if (report)
				cfg_msgs_add(report, "changed: %s %s -> %s",
					     keys[i].name, was, now);
			free(conf->v[i].val);
			conf->v[i] = next.v[i];
			next.v[i].val = NULL;
			continue;
		}
		if (keys[i].flags & CFG_RT && !(keys[i].flags & CFG_IMPL)) {
			/* kept, to be reported as not implemented */
			free(conf->v[i].val);
			conf->v[i] = next.v[i];
			next.v[i].val = NULL;
		}
		used = strlen(list);
		snprintf(list + used, 1024 - used, "%s%s", used ? ", " : "",
			 keys[i].name);
	}
	if (*restart) {
		log_warnx("ERR 0904: %s: %s changed in %s but take effect"
			  " only at a restart; the values in force stay",
			  by, restart, conf->file);
		if (report)
			cfg_msgs_add(report, "warning: %s changed in %s but take"
				     " effect only at a restart; the values in"
				     " force stay", restart, conf->file);
	}
	if (*ignored) {
		log_warnx("ERR 0905: %s: %s changed in %s: not implemented"
			  " in ibsm yet; ignored", by, ignored, conf->file);
		if (report)
			cfg_msgs_add(report, "warning: %s changed in %s: not"
				     " implemented in ibsm yet; ignored",
				     ignored, conf->file);
	}
	cfg_free(&next);
	if (cfg_apply(conf, &sm->cfg) < 0)
		return -EINVAL;	/* checked values: cannot happen */
	/* the OpenSM keys mapped on ibsm's (said at start, not again) */
	struct cfg_msgs notes = { NULL, 0 };
	cfg_apply_compat(conf, &sm->cfg, &notes);
	cfg_msgs_free(&notes);
	char note[160];
	mkey_fix_lease(&sm->cfg, note, sizeof(note));
	if (*note)
		log_warnx("ERR 0909: %s", note);
	log_set_level(sm->cfg.log_level);
	log_set_prefix(sm->cfg.log_prefix);
	log_set_max_size((uint64_t)sm->cfg.log_max_size << 20);
	log_ratelimit_set(sm->cfg.log_burst, sm->cfg.log_rate);
	return 0;
}
