/*
 * log.c - timestamped lines to a file or the terminal (see log.h).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "sm/log.h"

static FILE *log_fp;
static enum log_level log_level = LOG_LVL_INFO;

int log_open(const char *path, enum log_level level)
{
	log_level = level;
	if (!path || !strcmp(path, "stdout") || !strcmp(path, "-")) {
		log_fp = stdout;
		return 0;
	}
	FILE *fp = fopen(path, "a");
	if (!fp)
		return -errno;
	setvbuf(fp, NULL, _IOLBF, 0);
	log_fp = fp;
	return 0;
}

void log_close(void)
{
	if (log_fp && log_fp != stdout && log_fp != stderr)
		fclose(log_fp);
	log_fp = NULL;
}

void log_set_level(enum log_level level)
{
	log_level = level;
}

bool log_enabled(enum log_level level)
{
	return level <= log_level;
}

static void vlog(enum log_level level, const char *fmt, va_list ap)
{
	static const char *const tag[] = { "ERR", "WARN", "INFO", "DEBUG" };
	FILE *fp = log_fp ? log_fp : stderr;
	struct timeval tv;
	struct tm tm;
	char ts[32];

	if (!log_enabled(level))
		return;
	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%b %d %H:%M:%S", &tm);
	fprintf(fp, "%s.%06ld [%s] ", ts, (long)tv.tv_usec, tag[level]);
	vfprintf(fp, fmt, ap);
	fputc('\n', fp);
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
