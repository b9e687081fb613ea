/*
 * compat.c - OpenSM keys mapped onto ibsm's own features (see compat.h).
 */
#include "config.h"

#include <stdbool.h>
#include <string.h>

#include "config/compat.h"
#include "config/sm_config.h"

/* Key `name`'s value when the file or the command line set it, else NULL. */
static const char *set_value(const struct cfg *c, const char *name)
{
	size_t i;

	if (!cfg_key_find(name, &i) || c->v[i].src == CFG_SRC_DEFAULT)
		return NULL;
	return cfg_get(c, i);
}

void cfg_apply_compat(const struct cfg *c, struct sm_config *o,
		      struct cfg_msgs *notes)
{
	const char *console = set_value(c, "console");
	const char *cache = set_value(c, "use_ucast_cache");
	const char *v;

	if (console && !set_value(c, "control_socket")) {
		bool off = !strcmp(console, "off");

		if (off)
			o->control_socket = NULL;
		cfg_msgs_add(notes, "console %s: ibsm has no text console; %s%s",
			     console, off ? "no control socket either (set"
			     " control_socket for ibsmctl)" :
			     "ibsmctl talks to the control socket instead",
			     off || !strcmp(console, "local") ? "" :
			     " (console_port is not opened)");
	}
	if (cache && !set_value(c, "incremental_reroute")) {
		o->no_incremental_reroute = strcmp(cache, "TRUE") != 0;
		cfg_msgs_add(notes, "use_ucast_cache %s: ibsm's incremental"
			     " re-route is %s", cache,
			     o->no_incremental_reroute ? "off" : "on");
	}
	/* the keys set that ibsm leaves alone, with what it does instead
	 * (config/key_notes.c; Mellanox keys warn on their own) */
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);

	for (size_t i = 0; i < n; i++) {
		const char *note;
		enum cfg_status st = cfg_key_status(&keys[i], &note);

		if (note && (st == CFG_ST_NA || st == CFG_ST_IGNORED) &&
		    cfg_file_changed(c, i) && (v = cfg_get(c, i)))
			cfg_msgs_add(notes, "%s %s: %s", keys[i].name, v, note);
	}
}
