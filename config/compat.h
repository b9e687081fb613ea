/*
 * compat.h - OpenSM keys ibsm answers with a feature of its own rather
 * than OpenSM's: console/console_port (the control socket),
 * use_ucast_cache (incremental_reroute), and the keys naming OpenSM
 * features ibsm replaces (event plugins, prefix routes, torus-2QoS's
 * file, per-module logging).  Library code: notes as text, no logging.
 */
#ifndef IBSM_CONFIG_COMPAT_H
#define IBSM_CONFIG_COMPAT_H

#include "config/conf.h"

struct sm_config;

/*
 * After cfg_apply(): an ibsm key set in the file or on the command line
 * wins; otherwise the OpenSM key, when set, decides:
 *	console off		no control socket
 *	console local|loopback|socket	the control socket (control_socket)
 *	use_ucast_cache		incremental_reroute
 * and every OpenSM key of a feature ibsm does differently, when set to
 * something other than its default, gets one line in `notes` saying what
 * ibsm does instead.
 */
void cfg_apply_compat(const struct cfg *c, struct sm_config *o,
		      struct cfg_msgs *notes);

#endif /* IBSM_CONFIG_COMPAT_H */
