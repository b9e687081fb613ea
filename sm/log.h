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

#include "config/limits.h"
#include "config/log_level.h"

/* path: a file, or "stdout"/"-" for the terminal.  Returns 0 or -errno. */
int  log_open(const char *path, enum log_level level);
/*
 * Open the log file again under its name (logrotate renamed it, then sent
 * SIGUSR1).  The old stream is kept when the new one cannot be opened.
 * A terminal log is left alone.  Returns 0 or -errno.
 */
int  log_reopen(void);
void log_close(void);
void log_set_level(enum log_level level);
bool log_enabled(enum log_level level);

/*
 * A message for standard error, outside the log (option and file errors,
 * before the log is open): "ibsm: " and the line, preceded by the syslog
 * priority of `level` ("<3>", "<4>") when standard error is the journal's
 * stream ($JOURNAL_STREAM), as the log's own lines there are.
 */
void log_stderr(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void log_err(const char *fmt, ...)   __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...)  __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Lines that a remote host can cause at will (one per trap, per failed
 * Report, ...) go through a token bucket per code: LOG_RL_BURST lines at
 * once, then LOG_RL_RATE per second.  The line is written as
 * "ERR <code>: <message>"; the first line of a code let through after
 * some were dropped ends with "(N similar messages suppressed)", and
 * log_ratelimit_flush() (called every few seconds by the daemon) writes
 * "ERR <code>: N similar messages suppressed" for codes that went quiet.
 * Codes beyond the table's LOG_RL_CODES slots share one bucket.
 * LOG_RL_BURST and LOG_RL_RATE (config/limits.h) are the defaults of
 * --log-burst and --log-rate (log_ratelimit_set()).
 */
#define LOG_RL_CODES	64
void log_ratelimited(enum log_level level, unsigned code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void log_ratelimit_flush(void);
/*
 * Change the budget of every code: burst lines at once, then rate per
 * second (0 for either: its default).  Buckets already full keep at most
 * the new burst.
 */
void log_ratelimit_set(unsigned burst, double rate);
/* Lines of `code` dropped so far (all time), for tests and summaries. */
unsigned long log_ratelimit_dropped(unsigned code);
/* Lines of every code dropped so far (all time), for the exit summary. */
unsigned long log_ratelimit_dropped_total(void);
/* Tests: a clock in seconds instead of CLOCK_MONOTONIC (NULL: back). */
void log_ratelimit_clock(double (*now)(void));

#endif /* IBSM_SM_LOG_H */
