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
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "sm/log.h"

static FILE *log_fp;
static char *log_path;		/* NULL: the terminal */
static enum log_level log_level = LOG_LVL_INFO;
static bool log_journal;	/* log_fp is the journal's stream */
static bool err_journal;	/* stderr is (a copy of errors goes there) */
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

static FILE *open_file(const char *path)
{
	FILE *fp = fopen(path, "a");
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
	fp = open_file(log_path);
	if (!fp)
		return;		/* FILE.1 stays open: nothing lost */
	fclose(log_fp);
	log_fp = fp;
	log_info("log: the previous %" PRIu64 " MB are in %s (log_max_size)",
		 log_max_bytes >> 20, old);
}

int log_open(const char *path, enum log_level level)
{
	log_level = level;
	free(log_path);
	log_path = NULL;
	err_journal = is_journal(STDERR_FILENO);
	log_journal = false;
	if (!path || !strcmp(path, "stdout") || !strcmp(path, "-")) {
		log_fp = stdout;
		/* A pipe or the journal's socket: a line at a time. */
		setvbuf(stdout, NULL, _IOLBF, 0);
		log_journal = is_journal(STDOUT_FILENO);
		return 0;
	}
	FILE *fp = open_file(path);
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
	if (!log_path)
		return 0;
	FILE *fp = open_file(log_path);
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

/* The va_list helper of every log function: a format checked at the
 * callers (their attributes), passed on here. */
static void vlog(enum log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
static void vlog(enum log_level level, const char *fmt, va_list ap)
{
	static const char *const tag[] = { "ERR", "WARN", "INFO", "DEBUG" };
	FILE *fp = log_fp ? log_fp : stderr;
	struct timeval tv;
	struct tm tm;
	char ts[32];

	if (!log_enabled(level))
		return;
	if (log_journal || (!log_fp && err_journal)) {
		fprintf(fp, "<%d>[%s] ", journal_prio[level], tag[level]);
		vfprintf(fp, fmt, ap);
		fputc('\n', fp);
		return;
	}
	if (err_journal && level <= LOG_LVL_WARN && fp != stderr) {
		va_list cp;

		va_copy(cp, ap);
		fprintf(stderr, "<%d>[%s] ", journal_prio[level], tag[level]);
		vfprintf(stderr, fmt, cp);
		fputc('\n', stderr);
		va_end(cp);
	}
	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%b %d %H:%M:%S", &tm);
	int a = fprintf(fp, "%s.%06ld [%s] ", ts, (long)tv.tv_usec, tag[level]);
	int b = vfprintf(fp, fmt, ap);
	fputc('\n', fp);
	if (!log_path || fp != log_fp)
		return;
	log_bytes += (uint64_t)(a > 0 ? a : 0) + (uint64_t)(b > 0 ? b : 0) + 1;
	if (log_max_bytes && log_bytes > log_max_bytes)
		rotate();
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
	__attribute__((format(printf, 2, 3)));
static void log_line(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, fmt, ap);
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

void log_ratelimited(enum log_level level, unsigned code, const char *fmt, ...)
{
	double now = rl_now();
	struct rl_bucket *b;
	char msg[512];
	va_list ap;

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
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (level > LOG_LVL_WARN && b->suppressed)
		log_line(level, "%s (%lu similar messages suppressed)", msg,
			 b->suppressed);
	else if (level > LOG_LVL_WARN)
		log_line(level, "%s", msg);
	else if (b->suppressed)
		log_line(level, "ERR %04u: %s (%lu similar messages suppressed)",
			 code, msg, b->suppressed);
	else
		log_line(level, "ERR %04u: %s", code, msg);
	b->suppressed = 0;
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
