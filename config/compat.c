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

/* The same, only when it differs from the key's default. */
static const char *changed_value(const struct cfg *c, const char *name)
{
	size_t i;
	const struct cfg_key *k = cfg_key_find(name, &i);
	const char *v = set_value(c, name);

	return v && k && strcmp(v, k->def) ? v : NULL;
}

/* The OpenSM features ibsm has another answer to. */
static const struct {
	const char *key;
	const char *instead;
} replaced[] = {
	{ "event_plugin_name", "ibsm loads no OpenSM event plugins: its"
	  " events go to the log, the control socket (ibsmctl) and the"
	  " metrics endpoint (metrics_listen)" },
	{ "event_plugin_options", "ibsm loads no OpenSM event plugins" },
	{ "prefix_routes_file", "ibsm routes no traffic between subnets:"
	  " PathRecords to another subnet prefix get no router" },
	{ "torus_config", "ibsm's torus engine finds the torus's dimensions"
	  " and datelines from the fabric itself; the file is not read" },
	{ "per_module_logging_file", "ibsm's log has one level for every"
	  " part (log_flags); the file is not read" },
	{ "virt_enabled", "ibsm manages no virtual ports (vports): virtual"
	  " functions are not given LIDs" },
};

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
	for (size_t i = 0; i < sizeof(replaced) / sizeof(replaced[0]); i++)
		if ((v = changed_value(c, replaced[i].key)))
			cfg_msgs_add(notes, "%s %s: %s", replaced[i].key, v,
				     replaced[i].instead);
}
