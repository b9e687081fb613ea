/*
 * fatal.h - exit_on_fatal (opensm.conf; -y/--stay_on_fatal sets it
 * FALSE): the two conditions OpenSM treats as fatal, a guid2lid file its
 * reader gives up on and a duplicate GUID seen as a link from a port to
 * itself, stop ibsm with exit status 1 when the key is TRUE.
 */
#ifndef IBSM_SM_FATAL_H
#define IBSM_SM_FATAL_H

#include <stdbool.h>

struct sm;

/*
 * A fatal condition, said in `fmt` (ERR `code` in the log).  With
 * exit_on_fatal TRUE: "FATAL: ..." in the log and on standard error (a
 * service manager that restarts ibsm shows why), sm->exit_code 1 and the
 * loop stopped (when it runs); returns true, the caller stops too.  With
 * FALSE: an ERR line that says ibsm carries on; returns false.
 */
bool sm_fatal(struct sm *sm, unsigned code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The guid2lid file of cache_dir, checked at start as OpenSM's reader
 * would take it (lid_cache_check(); not with reassign_lids, which reads
 * no file).  Returns true when ibsm must stop (sm_fatal()).
 */
bool sm_guid2lid_fatal(struct sm *sm);

#endif /* IBSM_SM_FATAL_H */
