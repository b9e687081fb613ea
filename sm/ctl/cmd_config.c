/*
 * cmd_config.c - the control socket's loglevel, reload and dump-config:
 * the log level in force, the -F and -P files read again (local files,
 * as SIGHUP does) with what was found, the keys in force and where each
 * value came from.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "config/conf.h"
#include "sm/ctl/ctl.h"
#include "sm/ctl/ctl_int.h"
#include "sm/sm.h"

const char *const ctl_level_names[] = { "err", "warn", "info", "debug" };

int ctl_cmd_loglevel(struct sm *sm, int level, int flags,
		     struct ctl_answer *a)
{
	enum log_level was = sm->cfg.log_level;
	char how[48] = "";

	if (flags >= 0)
		snprintf(how, sizeof(how), " (OpenSM log flags 0x%02x)", flags);
	sm->cfg.log_level = (enum log_level)level;
	log_set_level(sm->cfg.log_level);
	log_info("control socket: log level %s -> %s%s",
		 was <= LOG_LVL_DEBUG ? ctl_level_names[was] : "?",
		 ctl_level_names[level], how);
	return ctl_finish(a, true, "log level %s -> %s%s",
			  was <= LOG_LVL_DEBUG ? ctl_level_names[was] : "?",
			  ctl_level_names[level], how);
}

int ctl_cmd_reload(struct sm *sm, bool force, struct ctl_answer *a)
{
	struct cfg_msgs rep = { NULL, 0 };
	size_t errors = 0;
	int rc;
	bool files = (sm->conf && sm->conf->file) || sm->cfg.partition_config;

	log_info("control socket: reload%s requested", force ? " force" : "");
	struct sm_msg m = { .ev = SM_EV_RELOAD };

	m.u.reload.report = &rep;
	m.u.reload.force = force;
	rc = sm_post_wait(sm, &m);
	for (size_t i = 0; i < rep.n; i++) {
		ctl_line_add(a, "%s", rep.msg[i]);
		errors += !strncmp(rep.msg[i], "error: ", 7);
	}
	cfg_msgs_free(&rep);
	if (rc < 0)
		return ctl_finish(a, false, "reload: %zu error%s: the files with"
				  " errors were not applied (heavy sweep"
				  " requested)", errors, errors == 1 ? "" : "s");
	return ctl_finish(a, true, "%s; heavy sweep requested", files ?
			  "reloaded" : "nothing to reload (no -F, no -P)");
}

int ctl_cmd_dump_config(struct sm *sm, struct ctl_answer *a)
{
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);
	char src[600];

	if (!sm->conf)
		return ctl_finish(a, false, "no configuration");
	ctl_line_add(a, "# the configuration in force: key value # where it"
		     " came from");
	for (size_t i = 0; i < sm->conf->unknown.n; i++)
		ctl_line_add(a, "# warning: %s (ignored)",
			     sm->conf->unknown.msg[i]);
	for (size_t i = 0; i < sm->conf->warnings.n; i++)
		ctl_line_add(a, "# warning: %s", sm->conf->warnings.msg[i]);
	for (size_t i = 0; i < n; i++) {
		cfg_source(sm->conf, i, src, sizeof(src));
		const char *note;
		enum cfg_status st = cfg_key_status(&keys[i], &note);

		if (keys[i].flags & CFG_ALIAS)
			continue;	/* its value is its key's */
		ctl_line_add(a, "%s %s # %s%s", keys[i].name,
			     cfg_effective(sm->conf, i), src,
			     st == CFG_ST_IMPL ? "" : st == CFG_ST_MAPPED ?
			     " (mapped)" : st == CFG_ST_NA ?
			     " (not applicable)" : " (not implemented)");
	}
	return ctl_finish(a, true, "%zu keys", n);
}
