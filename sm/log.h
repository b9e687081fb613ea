/*
 * log.h - the daemon's log.  Library code (mad/, routing/, the model)
 * returns -errno and never logs; the daemon decides what to say.
 *
 * Lines carry a stable four-digit code where a user may want to grep for
 * them, OpenSM style: log_warnx("ERR 0102: ...").
 */
#ifndef IBSM_SM_LOG_H
#define IBSM_SM_LOG_H

#include <stdbool.h>

enum log_level { LOG_LVL_ERR = 0, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };

/* path: a file, or "stdout"/"-" for the terminal.  Returns 0 or -errno. */
int  log_open(const char *path, enum log_level level);
void log_close(void);
void log_set_level(enum log_level level);
bool log_enabled(enum log_level level);

void log_err(const char *fmt, ...)   __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...)  __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* IBSM_SM_LOG_H */
