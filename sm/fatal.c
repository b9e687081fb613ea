/*
 * fatal.c - exit_on_fatal (see fatal.h).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sm/fatal.h"
#include "sm/lid.h"
#include "sm/log.h"
#include "sm/sm.h"

bool sm_fatal(struct sm *sm, unsigned code, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (!sm->cfg.exit_on_fatal) {
		log_err("ERR %04u: %s (exit_on_fatal FALSE: carrying on)",
			code, what);
		return false;
	}
	log_err("ERR %04u: FATAL: %s; exiting (exit_on_fatal TRUE;"
		" -y to stay up)", code, what);
	log_stderr(LOG_LVL_ERR, "FATAL: %s; exiting (exit_on_fatal TRUE;"
		   " -y to stay up)", what);
	sm->exit_code = SM_EXIT_FAIL;
	if (sm->loop)
		ev_break(sm->loop, EVBREAK_ALL);
	return true;
}

bool sm_guid2lid_fatal(struct sm *sm)
{
	char path[600];
	unsigned line;
	int n, rc;

	if (sm->cfg.reassign_lids || !sm->cfg.cache_dir[0])
		return false;
	n = snprintf(path, sizeof(path), "%s/guid2lid", sm->cfg.cache_dir);
	if (n < 0 || (size_t)n >= sizeof(path))
		return false;
	rc = lid_cache_check(path, &line);
	if (rc == -EBADMSG)
		return sm_fatal(sm, 213, "%s:%u: corrupt guid2lid file: a"
				" record starts with a blank or a NUL byte"
				" (expected 0xGUID 0xMINLID 0xMAXLID)", path,
				line);
	if (rc < 0)
		return sm_fatal(sm, 213, "cannot read the guid2lid file %s: %s",
				path, strerror(-rc));
	return false;
}
