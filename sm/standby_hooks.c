/*
 * standby_hooks.c - minimal versions of the standby's SA copy hooks
 * (sm/sm.h) so that the state machine builds and runs before the copy
 * exists.  REPLACED by the sync branch (sm14-sync, sm/standby/), which
 * deletes this file and provides the real ones.  They keep no copy:
 * adopt says "not in sync", so a takeover sends ClientReregister.
 */
#include "config.h"

#include "sm/sm.h"

void standby_sync_start(struct sm *sm)
{
	(void)sm;
	log_debug("standby: no SA copy kept (sync not built in)");
}

void standby_sync_stop(struct sm *sm)
{
	(void)sm;
	log_debug("standby: SA copy stopped");
}

bool standby_sync_adopt(struct sm *sm)
{
	(void)sm;
	log_debug("standby: no SA copy to adopt");
	return false;
}
