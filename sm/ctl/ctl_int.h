/*
 * ctl_int.h - what sm/ctl/'s files share: the answer's terminator and
 * the commands ctl_execute() (exec.c) hands a request to.  Each command
 * adds its data lines to `a`, then its terminator: 0 for OK, -1 for ERR.
 */
#ifndef IBSM_SM_CTL_CTL_INT_H
#define IBSM_SM_CTL_CTL_INT_H

#include <stdbool.h>

#include "sm/ctl/ctl.h"

struct sm;

#define CTL_LINE_OUT		1024	/* bytes of one answer line */

/* answer.c: the terminator, "OK[ text]" or "ERR text" (an answer cut at
 * CTL_MAX_ANSWER ends in ERR whatever `ok` says); 0 for OK, -1 for ERR. */
int ctl_finish(struct ctl_answer *a, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* cmd_config.c: the names of enum log_level's values, by value. */
extern const char *const ctl_level_names[4];

/* cmd_status.c */
int ctl_cmd_status(struct sm *sm, struct ctl_answer *a);
int ctl_cmd_sms(struct sm *sm, struct ctl_answer *a);
/* cmd_sweep.c */
int ctl_cmd_resweep(struct sm *sm, bool heavy, struct ctl_answer *a);
int ctl_cmd_reroute(struct sm *sm, struct ctl_answer *a);
/* cmd_config.c */
int ctl_cmd_loglevel(struct sm *sm, int level, int flags,
		     struct ctl_answer *a);
int ctl_cmd_reload(struct sm *sm, bool force, struct ctl_answer *a);
int ctl_cmd_dump_config(struct sm *sm, struct ctl_answer *a);
/* cmd_routes.c */
int ctl_cmd_routes_report(struct sm *sm, bool json, struct ctl_answer *a);
int ctl_cmd_routes_loads(struct sm *sm, struct ctl_answer *a);

#endif /* IBSM_SM_CTL_CTL_INT_H */
