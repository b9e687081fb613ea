/*
 * events_file.c - the event history appended to ibsm-events.log in the
 * dump directory, one line per event, rotated by size.
 *
 * The loop writes: each line is one write() to a file opened O_APPEND
 * (no fsync), so a flush costs a few system calls.  Past
 * HEALTH_EVFILE_MAX bytes the file becomes .1 (.1 becomes .2 ..., the
 * oldest beyond HEALTH_EVFILE_KEEP goes) and a new one starts.  A write
 * that fails (a full disk: ENOSPC) is cut back to the last whole line,
 * the file is closed and tried again HEALTH_EVFILE_RETRY seconds later;
 * events in between stay in memory (the ring), and those the ring
 * dropped meanwhile are counted in a line of the file.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sm/health/internal.h"
#include "sm/log.h"

void evfile_init(struct evfile *ef)
{
	memset(ef, 0, sizeof(*ef));
	ef->fd = -1;
	ef->max_size = HEALTH_EVFILE_MAX;
	ef->keep = HEALTH_EVFILE_KEEP;
}

void evfile_close(struct evfile *ef)
{
	if (ef->fd >= 0)
		close(ef->fd);
	ef->fd = -1;
}

void evfile_format(const struct he_event *e, char *buf, size_t len)
{
	time_t t = (time_t)e->time;
	struct tm tm;
	char ts[32];
	int n;

	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	n = snprintf(buf, len, "%s.%03dZ %s", ts,
		     (int)((e->time - (double)t) * 1000.0) % 1000,
		     he_type_name(e->type));
	if (n < 0 || (size_t)n >= len)
		return;
	if (e->guid)
		n += snprintf(buf + n, len - (size_t)n, " 0x%016" PRIx64, e->guid);
	if ((size_t)n < len && e->guid && e->port)
		n += snprintf(buf + n, len - (size_t)n, " port %u", e->port);
	if ((size_t)n < len && e->text[0])
		snprintf(buf + n, len - (size_t)n, " %s", e->text);
	/* one line: whatever a description holds */
	for (char *c = buf; *c; c++)
		if ((unsigned char)*c < 0x20 || (unsigned char)*c == 0x7f)
			*c = ' ';
}

/* path.N -> path.N+1 ..., path -> path.1; the oldest is overwritten. */
static void rotate(struct evfile *ef)
{
	char from[640], to[640];

	evfile_close(ef);
	if (!ef->keep) {
		(void)unlink(ef->path);
		return;
	}
	for (unsigned i = ef->keep; i > 1; i--) {
		snprintf(from, sizeof(from), "%s.%u", ef->path, i - 1);
		snprintf(to, sizeof(to), "%s.%u", ef->path, i);
		(void)rename(from, to);
	}
	snprintf(to, sizeof(to), "%s.1", ef->path);
	if (rename(ef->path, to) < 0 && errno != ENOENT)
		log_ratelimited(LOG_LVL_WARN, 1801, "cannot rotate %s: %s",
				ef->path, strerror(errno));
}

static int open_file(struct evfile *ef, const char *dir)
{
	struct stat st;
	int rc;

	if ((size_t)snprintf(ef->path, sizeof(ef->path), "%s/%s", dir,
			     HEALTH_EVFILE_NAME) >= sizeof(ef->path))
		return -ENAMETOOLONG;
	rc = mkdir_p(dir);
	if (rc < 0)
		return rc;
	ef->fd = open(ef->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC |
		      O_NOCTTY | O_NONBLOCK, 0644);
	if (ef->fd < 0)
		return -errno;
	if (fstat(ef->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = S_ISREG(st.st_mode) ? -errno : -EINVAL;
		evfile_close(ef);
		return rc;
	}
	ef->size = st.st_size;
	return 0;
}

/* One whole line, or nothing: a short write is cut back.  0 or -errno. */
static int put_line(struct evfile *ef, const char *line, size_t len)
{
	ssize_t w = write(ef->fd, line, len);

	if (w == (ssize_t)len) {
		ef->size += (off_t)len;
		return 0;
	}
	int rc = w < 0 ? -errno : -ENOSPC;
	if (w > 0)
		(void)!ftruncate(ef->fd, ef->size);
	return rc;
}

static void failed(struct evfile *ef, int rc, double now)
{
	if (rc != ef->last_err)
		log_ratelimited(LOG_LVL_WARN, 1802, "cannot write the event"
				" history to %s: %s; kept in memory, tried again"
				" in %.0f s", ef->path[0] ? ef->path : "?",
				strerror(-rc), HEALTH_EVFILE_RETRY);
	ef->last_err = rc;
	evfile_close(ef);
	ef->retry_at = now + HEALTH_EVFILE_RETRY;
}

void evfile_flush(struct evfile *ef, const struct he_ring *r,
		  const char *dir, double now)
{
	const struct he_event *e;
	char line[HE_TEXT_SIZE + 128];
	int rc;

	if (!dir || !dir[0])
		return;
	if (ef->fd < 0) {
		if (now < ef->retry_at)
			return;
		rc = open_file(ef, dir);
		if (rc < 0) {
			failed(ef, rc, now);
			return;
		}
	}
	uint64_t want = ef->cursor;
	while ((e = he_ring_next(r, &ef->cursor))) {
		size_t n;

		if (want && e->seq > want) {
			/* the ring dropped these before they were written */
			ef->dropped += e->seq - want;
			n = (size_t)snprintf(line, sizeof(line), "# %" PRIu64
					     " events lost before they were"
					     " written\n", e->seq - want);
			(void)put_line(ef, line, n);
		}
		evfile_format(e, line, sizeof(line) - 1);
		n = strlen(line);
		line[n++] = '\n';
		rc = put_line(ef, line, n);
		if (rc < 0) {
			ef->cursor = e->seq;	/* this one again later */
			failed(ef, rc, now);
			return;
		}
		want = e->seq + 1;
		if (ef->size >= ef->max_size) {
			rotate(ef);
			rc = open_file(ef, dir);
			if (rc < 0) {
				failed(ef, rc, now);
				return;
			}
		}
	}
	if (ef->last_err) {
		log_info("event history: writing %s again", ef->path);
		ef->last_err = 0;
	}
}
