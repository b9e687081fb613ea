/*
 * log.c - timestamped lines to a file or the terminal (see log.h).
 *
 * Started by systemd, stdout and stderr are often a stream to the
 * journal; systemd then sets $JOURNAL_STREAM to "DEV:INODE" of that
 * stream.  A line written there may begin with "<N>", its syslog
 * priority (sd-daemon.h's SD_ERR "<3>", SD_WARNING "<4>", SD_INFO "<6>",
 * SD_DEBUG "<7>"), which journald strips and keeps as the entry's
 * priority: `journalctl -p err -u ibsm@1` then lists the errors.  So:
 * a log on such a stream gets the prefix (and no timestamp: the journal
 * has its own); a log in a file gets a copy of each error and warning
 * on stderr when stderr is the journal, so the journal holds what needs
 * attention and the file holds everything.
 *
 * With libsystemd (HAVE_LIBSYSTEMD), what goes to the journal goes as a
 * structured entry (sd_journal_sendv) instead of a prefixed line:
 * MESSAGE= the line's text, PRIORITY=, SYSLOG_IDENTIFIER=ibsm and, for a
 * line with a code (a log_event(), a rate-limited line, or a text
 * starting "ERR NNNN: " / "SM NNNN: "), IBSM_CODE=NNNN and
 * MESSAGE_ID=LOG_MESSAGE_ID_BASE followed by the four digits; a
 * log_event() adds its fields (NODE_GUID=, PORT=, LID=, ...).  Events are
 * copied to the journal at every level, not only errors and warnings,
 * since monitoring keys on them.  sd_journal_sendv() drops an entry
 * silently when journald's socket is missing (ENOENT), so the socket is
 * looked for when the log is opened (and reopened, SIGUSR1): without it,
 * or when a send fails, the line is written on the stream with its
 * prefix, as without libsystemd.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#ifdef HAVE_LIBSYSTEMD
/* CODE_FILE= and CODE_LINE= would name this file, not the caller. */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#endif

#include "sm/log.h"

static FILE *log_fp;
static char *log_path;		/* NULL: the terminal */
static enum log_level log_level = LOG_LVL_INFO;
static bool log_journal;	/* log_fp is the journal's stream */
static bool err_journal;	/* stderr is (a copy of errors goes there) */
static bool journal_native;	/* journald's socket is there (libsystemd) */
/* log_max_size: the file is rotated past this many bytes (0: never) */
static uint64_t log_max_bytes;
static uint64_t log_bytes;	/* the file's size as we wrote it */

/* sd-daemon.h's priorities (syslog's) of our levels. */
static const int journal_prio[] = { 3, 4, 6, 7 };

/* Is `fd` the stream systemd names in $JOURNAL_STREAM ("DEV:INODE")? */
static bool is_journal(int fd)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char tail;

	if (!e || sscanf(e, "%llu:%llu%c", &dev, &ino, &tail) != 2)
		return false;
	if (fstat(fd, &st) < 0)
		return false;
	return (unsigned long long)st.st_dev == dev &&
	       (unsigned long long)st.st_ino == ino;
}

/* log_prefix and its ": ", or "" */
static char log_pfx[136];

static FILE *open_file(const char *path, bool truncate)
{
	FILE *fp = fopen(path, truncate ? "w" : "a");
	struct stat st;

	if (fp) {
		setvbuf(fp, NULL, _IOLBF, 0);
		log_bytes = fstat(fileno(fp), &st) == 0 ? (uint64_t)st.st_size
							: 0;
	}
	return fp;
}

void log_set_max_size(uint64_t bytes)
{
	log_max_bytes = bytes;
}

/*
 * log_max_size reached: FILE becomes FILE.1 (an older FILE.1 goes) and a
 * new FILE starts, so the log takes at most about twice the size on disk.
 * OpenSM truncates its file there instead; keeping one generation loses
 * less.  Whoever rotates the log as well (logrotate and SIGUSR1) is not
 * in the way: the size is the file's own, read again at every open.
 */
static void rotate(void)
{
	char old[4096];
	FILE *fp;

	if (snprintf(old, sizeof(old), "%s.1", log_path) >= (int)sizeof(old) ||
	    rename(log_path, old) < 0)
		return;		/* not renamed: go on in the same file */
	fp = open_file(log_path, false);
	if (!fp)
		return;		/* FILE.1 stays open: nothing lost */
	fclose(log_fp);
	log_fp = fp;
	log_info("log: the previous %" PRIu64 " MB are in %s (log_max_size)",
		 log_max_bytes >> 20, old);
}

/* journald's native socket, where sd_journal_sendv() sends. */
static bool journald_there(void)
{
#ifdef HAVE_LIBSYSTEMD
	struct stat st;

	return stat("/run/systemd/journal/socket", &st) == 0 &&
	       S_ISSOCK(st.st_mode);
#else
	return false;
#endif
}

void log_set_prefix(const char *prefix)
{
	if (prefix && *prefix)
		snprintf(log_pfx, sizeof(log_pfx), "%.128s: ", prefix);
	else
		log_pfx[0] = '\0';
}

int log_open(const char *path, enum log_level level)
{
	return log_open_trunc(path, level, false);
}

int log_open_trunc(const char *path, enum log_level level, bool truncate)
{
	log_level = level;
	free(log_path);
	log_path = NULL;
	err_journal = is_journal(STDERR_FILENO);
	log_journal = false;
	journal_native = journald_there();
	if (!path || !strcmp(path, "stdout") || !strcmp(path, "-")) {
		log_fp = stdout;
		/* A pipe or the journal's socket: a line at a time. */
		setvbuf(stdout, NULL, _IOLBF, 0);
		log_journal = is_journal(STDOUT_FILENO);
		return 0;
	}
	FILE *fp = open_file(path, truncate);
	if (!fp)
		return -errno;
	log_path = strdup(path);
	if (!log_path) {
		fclose(fp);
		return -ENOMEM;
	}
	log_fp = fp;
	return 0;
}

int log_reopen(void)
{
	journal_native = journald_there();
	if (!log_path)
		return 0;
	FILE *fp = open_file(log_path, false);
	if (!fp)
		return -errno;
	if (log_fp && log_fp != stdout && log_fp != stderr)
		fclose(log_fp);
	log_fp = fp;
	return 0;
}

void log_close(void)
{
	if (log_fp && log_fp != stdout && log_fp != stderr)
		fclose(log_fp);
	log_fp = NULL;
	log_journal = false;
	free(log_path);
	log_path = NULL;
}

void log_set_level(enum log_level level)
{
	log_level = level;
}

bool log_enabled(enum log_level level)
{
	return level <= log_level;
}

static void log_line(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void log_code_line(enum log_level level, unsigned code,
			  const struct log_fields *f, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

void log_field(struct log_fields *f, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (f->n >= LOG_FIELDS_MAX)
		return;
	va_start(ap, fmt);
	n = vsnprintf(f->kv[f->n], sizeof(f->kv[f->n]), fmt, ap);
	va_end(ap);
	if (n > 0 && strchr(f->kv[f->n], '='))
		f->n++;
}

#ifdef HAVE_LIBSYSTEMD
/* The code a line's text starts with ("ERR 0103: ", "SM 1101: "), or 0. */
static unsigned text_code(const char *msg)
{
	unsigned code;
	char colon;

	if ((sscanf(msg, "ERR %4u%c", &code, &colon) == 2 ||
	     sscanf(msg, "SM %4u%c", &code, &colon) == 2) && colon == ':')
		return code;
	return 0;
}

/* One journal entry (see the top of this file); 0 or -errno. */
static int journal_send(enum log_level level, unsigned code,
			const struct log_fields *f, const char *msg)
{
	struct iovec iov[LOG_FIELDS_MAX + 5];
	char prio[16], codef[24], mid[48];
	size_t n = 0;
	char *m;
	int rc;

	if (asprintf(&m, "MESSAGE=%s%s", log_pfx, msg) < 0)
		return -ENOMEM;
	iov[n++] = (struct iovec){ m, strlen(m) };
	snprintf(prio, sizeof(prio), "PRIORITY=%d", journal_prio[level]);
	iov[n++] = (struct iovec){ prio, strlen(prio) };
	iov[n++] = (struct iovec){ "SYSLOG_IDENTIFIER=ibsm", 22 };
	if (!code)
		code = text_code(msg);
	if (code && code <= 9999) {
		snprintf(codef, sizeof(codef), "IBSM_CODE=%04u", code);
		snprintf(mid, sizeof(mid), "MESSAGE_ID=%s%04u",
			 LOG_MESSAGE_ID_BASE, code);
		iov[n++] = (struct iovec){ codef, strlen(codef) };
		iov[n++] = (struct iovec){ mid, strlen(mid) };
	}
	for (unsigned i = 0; f && i < f->n && n < sizeof(iov) / sizeof(iov[0]); i++)
		iov[n++] = (struct iovec){ (void *)f->kv[i], strlen(f->kv[i]) };
	rc = sd_journal_sendv(iov, (int)n);
	free(m);
	return rc;
}
#endif

/*
 * A line for the journal: an entry of its own (libsystemd), else the
 * text on `fp` with its priority prefix.
 */
static void to_journal(FILE *fp, enum log_level level, unsigned code,
		       const struct log_fields *f, const char *msg)
{
	static const char *const tag[] = { "ERR", "WARN", "INFO", "DEBUG" };

#ifdef HAVE_LIBSYSTEMD
	if (journal_native && journal_send(level, code, f, msg) >= 0)
		return;
#else
	(void)code;
	(void)f;
#endif
	fprintf(fp, "<%d>[%s] %s%s\n", journal_prio[level], tag[level],
		log_pfx, msg);
}

/*
 * Every log line comes here: `code` is its code when the caller knows
 * it (0 otherwise: taken from the text), `f` the fields of an event.
 */
static void vlog_ev(enum log_level level, unsigned code,
		    const struct log_fields *f, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
static void vlog_ev(enum log_level level, unsigned code,
		    const struct log_fields *f, const char *fmt, va_list ap)
{
	static const char *const tag[] = { "ERR", "WARN", "INFO", "DEBUG" };
	FILE *fp = log_fp ? log_fp : stderr;
	bool copy = err_journal && fp != stderr && level <= LOG_LVL_WARN;
	struct timeval tv;
	struct tm tm;
	char ts[32];
	char *msg;

	/* Events go to the journal at every level (see the top). */
	if (journal_native && err_journal && fp != stderr && f)
		copy = true;
	if (!log_enabled(level))
		return;
	if (vasprintf(&msg, fmt, ap) < 0)
		return;
	if (log_journal || (!log_fp && err_journal)) {
		to_journal(fp, level, code, f, msg);
		free(msg);
		return;
	}
	if (copy)
		to_journal(stderr, level, code, f, msg);
	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%b %d %H:%M:%S", &tm);
	int w = fprintf(fp, "%s.%06ld [%s] %s%s\n", ts, (long)tv.tv_usec,
			tag[level], log_pfx, msg);
	free(msg);
	if (!log_path || fp != log_fp)
		return;
	log_bytes += (uint64_t)(w > 0 ? w : 0);
	if (log_max_bytes && log_bytes > log_max_bytes)
		rotate();
}

static void vlog(enum log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
static void vlog(enum log_level level, const char *fmt, va_list ap)
{
	vlog_ev(level, 0, NULL, fmt, ap);
}

void log_event(enum log_level level, unsigned code,
	       const struct log_fields *f, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (level <= LOG_LVL_WARN)
		log_code_line(level, code, f, "ERR %04u: %s", code, msg);
	else
		log_code_line(level, code, f, "%s", msg);
}

static void vlog_stderr(enum log_level level, int err, const char *fmt,
			va_list ap) __attribute__((format(printf, 3, 0)));
static void vlog_stderr(enum log_level level, int err, const char *fmt,
			va_list ap)
{
	if (is_journal(STDERR_FILENO))
		fprintf(stderr, "<%d>", journal_prio[level]);
	fputs("ibsm: ", stderr);
	vfprintf(stderr, fmt, ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err < 0 ? -err : err));
	fputc('\n', stderr);
}

void log_stderr(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_stderr(level, 0, fmt, ap);
	va_end(ap);
}

void log_stderr_rc(enum log_level level, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_stderr(level, err, fmt, ap);
	va_end(ap);
}

static void log_line(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

static void log_code_line(enum log_level level, unsigned code,
			  const struct log_fields *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog_ev(level, code, f, fmt, ap);
	va_end(ap);
}

#define LOG_FN(name, level)					\
	void name(const char *fmt, ...)				\
	{							\
		va_list ap;					\
		va_start(ap, fmt);				\
		vlog(level, fmt, ap);				\
		va_end(ap);					\
	}

LOG_FN(log_err, LOG_LVL_ERR)
LOG_FN(log_warnx, LOG_LVL_WARN)
LOG_FN(log_info, LOG_LVL_INFO)
LOG_FN(log_debug, LOG_LVL_DEBUG)

static void vlog_rc(enum log_level level, int err, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
static void vlog_rc(enum log_level level, int err, const char *fmt, va_list ap)
{
	char msg[512];

	if (!log_enabled(level))
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_line(level, "%s: %s", msg, strerror(err < 0 ? -err : err));
}

#define LOG_RC_FN(name, level)					\
	void name(int err, const char *fmt, ...)		\
	{							\
		va_list ap;					\
		va_start(ap, fmt);				\
		vlog_rc(level, err, fmt, ap);			\
		va_end(ap);					\
	}

LOG_RC_FN(log_err_rc, LOG_LVL_ERR)
LOG_RC_FN(log_warn_rc, LOG_LVL_WARN)
LOG_RC_FN(log_debug_rc, LOG_LVL_DEBUG)

/* ------------------------------------------------------ rate limiting */

struct rl_bucket {
	unsigned code;			/* 0: free slot */
	double   tokens;
	double   last;			/* time of the last refill */
	unsigned long suppressed;	/* dropped since the last line written */
	unsigned long dropped;		/* dropped, all time */
	enum log_level level;
};

static struct rl_bucket rl_table[LOG_RL_CODES];
static double (*rl_clock)(void);
static double rl_burst = LOG_RL_BURST, rl_rate = LOG_RL_RATE;

static double rl_now(void)
{
	struct timespec ts;

	if (rl_clock)
		return rl_clock();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void log_ratelimit_clock(double (*now)(void))
{
	rl_clock = now;
}

/* The bucket of `code`; a full table hands out its last slot to all. */
static struct rl_bucket *rl_find(unsigned code, double now)
{
	for (unsigned i = 0; i < LOG_RL_CODES; i++) {
		struct rl_bucket *b = &rl_table[i];

		if (b->code == code)
			return b;
		if (!b->code) {
			b->code = code;
			b->tokens = rl_burst;
			b->last = now;
			return b;
		}
	}
	return &rl_table[LOG_RL_CODES - 1];
}

static void rl_refill(struct rl_bucket *b, double now)
{
	if (now > b->last) {
		b->tokens += (now - b->last) * rl_rate;
		if (b->tokens > rl_burst)
			b->tokens = rl_burst;
	}
	b->last = now;
}

void log_ratelimit_set(unsigned burst, double rate)
{
	rl_burst = burst ? burst : LOG_RL_BURST;
	rl_rate = rate > 0 ? rate : LOG_RL_RATE;
	for (unsigned i = 0; i < LOG_RL_CODES; i++)
		if (rl_table[i].tokens > rl_burst)
			rl_table[i].tokens = rl_burst;
}

static void vratelimited(enum log_level level, unsigned code,
			 const struct log_fields *f, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
static void vratelimited(enum log_level level, unsigned code,
			 const struct log_fields *f, const char *fmt, va_list ap)
{
	double now = rl_now();
	struct rl_bucket *b;
	char msg[512];

	if (!log_enabled(level))
		return;
	b = rl_find(code, now);
	rl_refill(b, now);
	b->level = level;
	if (b->tokens < 1.0) {
		b->suppressed++;
		b->dropped++;
		return;
	}
	b->tokens -= 1.0;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (level > LOG_LVL_WARN && b->suppressed)
		log_code_line(level, code, f, "%s (%lu similar messages"
			      " suppressed)", msg, b->suppressed);
	else if (level > LOG_LVL_WARN)
		log_code_line(level, code, f, "%s", msg);
	else if (b->suppressed)
		log_code_line(level, code, f, "ERR %04u: %s (%lu similar"
			      " messages suppressed)", code, msg, b->suppressed);
	else
		log_code_line(level, code, f, "ERR %04u: %s", code, msg);
	b->suppressed = 0;
}

void log_ratelimited(enum log_level level, unsigned code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vratelimited(level, code, NULL, fmt, ap);
	va_end(ap);
}

void log_ratelimited_event(enum log_level level, unsigned code,
			   const struct log_fields *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vratelimited(level, code, f, fmt, ap);
	va_end(ap);
}

void log_ratelimit_flush(void)
{
	for (unsigned i = 0; i < LOG_RL_CODES && rl_table[i].code; i++) {
		struct rl_bucket *b = &rl_table[i];

		if (!b->suppressed)
			continue;
		if (b->level > LOG_LVL_WARN)
			log_line(b->level, "%lu similar messages suppressed"
				 " (code %04u)", b->suppressed, b->code);
		else
			log_line(b->level, "ERR %04u: %lu similar messages"
				 " suppressed", b->code, b->suppressed);
		b->suppressed = 0;
	}
}

unsigned long log_ratelimit_dropped(unsigned code)
{
	for (unsigned i = 0; i < LOG_RL_CODES && rl_table[i].code; i++)
		if (rl_table[i].code == code)
			return rl_table[i].dropped;
	return 0;
}

unsigned long log_ratelimit_dropped_total(void)
{
	unsigned long n = 0;

	for (unsigned i = 0; i < LOG_RL_CODES; i++)
		n += rl_table[i].dropped;
	return n;
}
