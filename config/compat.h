/*
 * compat.h - OpenSM keys ibsm answers with a feature of its own rather
 * than OpenSM's: console/console_port (the control socket),
 * use_ucast_cache (incremental_reroute).  Library code: notes as text,
 * no logging.
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
 * each decision with a line in `notes`, and so does every key ibsm leaves
 * alone that the file sets to something other than its default, with
 * what ibsm does instead (its note in config/key_notes.c).
 */
void cfg_apply_compat(const struct cfg *c, struct sm_config *o,
		      struct cfg_msgs *notes);

#endif /* IBSM_CONFIG_COMPAT_H */
