/*
 * log.h - the daemon's log.  Library code (mad/, routing/, the model)
 * returns -errno and never logs; the daemon decides what to say.
 *
 * Errors and warnings carry a stable four-digit code, OpenSM style,
 * written in the format itself: log_warnx("ERR 0102: ...").  Only
 * log_ratelimited() takes the code as an argument (it keys the budget)
 * and writes the "ERR NNNN: " itself.  Informational lines carry no
 * "ERR": grepping a log for ERR finds the errors and warnings.  The SM's
 * state changes, which tests and users look for by cause, are
 * informational lines tagged "SM NNNN: " instead.
 */
#ifndef IBSM_SM_LOG_H
#define IBSM_SM_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include "config/limits.h"
#include "config/log_level.h"

/* path: a file, or "stdout"/"-" for the terminal.  Returns 0 or -errno. */
int  log_open(const char *path, enum log_level level);
/* The same; `truncate`: the file starts empty (accum_log_file FALSE),
 * at this open only (never at log_reopen() or a rotation). */
int  log_open_trunc(const char *path, enum log_level level, bool truncate);
/* log_prefix: "PREFIX: " before the text of every line (file and
 * journal), as OpenSM; NULL or "": none.  At most 128 bytes of it. */
void log_set_prefix(const char *prefix);
/*
 * Open the log file again under its name (logrotate renamed it, then sent
 * SIGUSR1).  The old stream is kept when the new one cannot be opened.
 * A terminal log is left alone.  Returns 0 or -errno.
 */
int  log_reopen(void);
/* Rotate the log file (FILE -> FILE.1) once it grows past `bytes`; 0:
 * never (opensm.conf log_max_size, in MB). */
void log_set_max_size(uint64_t bytes);
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
/* The same, with ": " and the text of the error `err` (either sign). */
void log_stderr_rc(enum log_level level, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void log_err(const char *fmt, ...)   __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...)  __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * The same, with ": " and the text of the error `err` appended, as
 * OpenBSD's log_warn() appends strerror(errno): err is an errno value of
 * either sign (the -errno a library call returned, or errno itself).
 */
void log_err_rc(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_warn_rc(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_debug_rc(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Events with structured fields for the journal (with libsystemd; see
 * sm/log.c and ibsm(8), LOG): each field "NAME=value", NAME in capitals
 * (NODE_GUID, PORT, LID, PEER_GUID, ...), at most LOG_FIELDS_MAX of them;
 * more are ignored, as is one without "=".
 *
 *	struct log_fields lf = { 0 };
 *	log_field(&lf, "NODE_GUID=0x%016" PRIx64, guid);
 *	log_event(LOG_LVL_ERR, 103, &lf, "duplicate node GUID ...");
 *
 * The line's text is the same as log_err("ERR 0103: duplicate ...")'s
 * (an informational event's text carries no code); the journal entry
 * also has IBSM_CODE=0103 and MESSAGE_ID=LOG_MESSAGE_ID_BASE "0103".
 */
#define LOG_FIELDS_MAX	8
#define LOG_MESSAGE_ID_BASE "debb9365329649948ff2664af053"
struct log_fields {
	unsigned n;
	char kv[LOG_FIELDS_MAX][320];	/* a PATH= of 64 hops fits */
};
void log_field(struct log_fields *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_event(enum log_level level, unsigned code,
	       const struct log_fields *f, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Lines that a remote host can cause at will (one per trap, per failed
 * Report, ...) go through a token bucket per code: LOG_RL_BURST lines at
 * once, then LOG_RL_RATE per second.  An error or warning is written as
 * "ERR <code>: <message>", an informational line as "<message>"; the
 * first line of a code let through after some were dropped ends with
 * "(N similar messages suppressed)", and log_ratelimit_flush() (called
 * every few seconds by the daemon) writes "ERR <code>: N similar messages
 * suppressed" for codes that went quiet ("N similar messages suppressed
 * (code <code>)" for informational ones).
 * Codes beyond the table's LOG_RL_CODES slots share one bucket.
 * LOG_RL_BURST and LOG_RL_RATE (config/limits.h) are the defaults of
 * --log-burst and --log-rate (log_ratelimit_set()).
 */
#define LOG_RL_CODES	64
void log_ratelimited(enum log_level level, unsigned code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same, with the journal fields of an event (see log_event()). */
void log_ratelimited_event(enum log_level level, unsigned code,
			   const struct log_fields *f, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
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
