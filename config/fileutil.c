/*
 * fileutil.c - the file helpers of the daemon and the tools: whole-file
 * reads, atomic file replacement (with a backup), replacement only when
 * the content changed, directories (see fileutil.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/fileutil.h"

/* Make a rename in the directory of `path` durable (the data is). */
static void fsync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];
	int dfd;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if ((size_t)(slash - path) + 2 > sizeof(dir))
		return;
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path) + 1, path);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		(void)fsync(dfd);
		close(dfd);
	}
}

int write_file_atomic(const char *path,
		      int (*fn)(FILE *fp, const void *arg), const void *arg)
{
	size_t len = strlen(path) + 16;
	char *tmp = malloc(len);
	FILE *fp;
	int rc, fd;

	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, len, "%s.tmpXXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		free(tmp);
		return rc;
	}
	if (fchmod(fd, 0644) < 0 || !(fp = fdopen(fd, "w"))) {
		rc = -errno;
		close(fd);
		goto out;
	}
	rc = fn(fp, arg);
	if (fflush(fp) || fsync(fileno(fp)))
		rc = rc ? rc : -errno;
	if (fclose(fp) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (!rc)
		fsync_dir(path);
out:
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

int mkdir_p(const char *dir)
{
	char path[4096];
	size_t len = strlen(dir);

	if (!len || len >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, len + 1);
	for (char *p = path + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = c;
		if (!c)
			return 0;
	}
}

/* The part of buf after its first `lines` lines. */
static const char *after_lines(const char *buf, size_t len, unsigned lines,
			       size_t *rest)
{
	const char *p = buf, *end = buf + len;

	while (lines-- && p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl ? nl + 1 : end;
	}
	*rest = (size_t)(end - p);
	return p;
}

struct mem_arg {
	const char *buf;
	size_t len;
};

static int write_mem(FILE *fp, const void *arg)
{
	const struct mem_arg *m = arg;

	return fwrite(m->buf, 1, m->len, fp) == m->len ? 0 : -EIO;
}

/* The whole content of `path` (malloc'd), or NULL. */
static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!fp)
		return NULL;
	for (;;) {
		if (n == cap) {
			char *nb = realloc(buf, cap ? cap * 2 : 65536);
			if (!nb) {
				free(buf);
				fclose(fp);
				return NULL;
			}
			buf = nb;
			cap = cap ? cap * 2 : 65536;
		}
		size_t got = fread(buf + n, 1, cap - n, fp);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(fp)) {
		free(buf);
		buf = NULL;
	}
	fclose(fp);
	*len = n;
	return buf;
}

int write_file_if_changed(const char *path, int (*fn)(FILE *fp, const void *arg),
			  const void *arg, unsigned skip_lines)
{
	char *buf = NULL, *old;
	size_t len = 0, old_len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int rc;

	if (!mem)
		return -errno;
	rc = fn(mem, arg);
	if (fclose(mem) && rc == 0)
		rc = -EIO;
	if (rc < 0) {
		free(buf);
		return rc;
	}
	old = slurp(path, &old_len);
	if (old) {
		size_t a_len, b_len;
		const char *a = after_lines(buf, len, skip_lines, &a_len);
		const char *b = after_lines(old, old_len, skip_lines, &b_len);
		bool same = a_len == b_len && !memcmp(a, b, a_len);

		free(old);
		if (same) {
			free(buf);
			return 1;
		}
	}
	struct mem_arg m = { buf, len };
	rc = write_file_atomic(path, write_mem, &m);
	free(buf);
	return rc;
}


/* Read all of fd (closed here), at most `max` bytes: -EFBIG beyond. */
static int read_fd(int fd, size_t max, char **buf, size_t *len)
{
	struct stat st;
	size_t cap, n = 0;
	char *b;

	cap = fstat(fd, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536;
	b = malloc(cap);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r;

		if (n + 1 == cap) {
			char *nb = realloc(b, cap * 2);

			if (!nb) {
				free(b);
				close(fd);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			free(b);
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {		/* it grew while we read */
			free(b);
			close(fd);
			return -EFBIG;
		}
	}
	close(fd);
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

int read_file_all(const char *path, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	return read_fd(fd, SIZE_MAX, buf, len);
}

int read_file_max(const char *path, size_t max, char **buf, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		int rc = fstat(fd, &st) < 0 ? -errno : -EINVAL;

		close(fd);
		return rc;
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return -EFBIG;
	}
	return read_fd(fd, max, buf, len);
}

struct bytes {
	const char *p;
	size_t n;
};

static int write_bytes(FILE *fp, const void *arg)
{
	const struct bytes *b = arg;

	return fwrite(b->p, 1, b->n, fp) == b->n ? 0 : -EIO;
}

int write_file_atomic_backup(const char *path, const char *suffix,
			     int (*fn)(FILE *fp, const void *arg),
			     const void *arg)
{
	char bak[4096];
	char *old = NULL;
	size_t len = 0;
	int rc;

	if ((size_t)snprintf(bak, sizeof(bak), "%s%s", path, suffix) >=
	    sizeof(bak))
		return -ENAMETOOLONG;
	rc = read_file_all(path, &old, &len);
	if (rc == 0) {
		struct bytes b = { old, len };

		rc = write_file_atomic(bak, write_bytes, &b);
		free(old);
	} else if (rc == -ENOENT) {
		rc = 0;		/* nothing to keep */
	}
	return rc < 0 ? rc : write_file_atomic(path, fn, arg);
}
