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

/*
 * A temp file beside `path` ("path.tmpXXXXXX", mode 0644) opened for
 * writing and reading; its name in *tmp (malloc'd).  NULL with errno set.
 */
static FILE *open_tmp(const char *path, char **tmp)
{
	size_t len = strlen(path) + 16;
	FILE *fp;
	int fd;

	*tmp = malloc(len);
	if (!*tmp)
		return NULL;
	snprintf(*tmp, len, "%s.tmpXXXXXX", path);
	fd = mkostemp(*tmp, O_CLOEXEC);
	if (fd < 0)
		goto fail;
	if (fchmod(fd, 0644) < 0 || !(fp = fdopen(fd, "w+"))) {
		int e = errno;

		close(fd);
		unlink(*tmp);
		errno = e;
		goto fail;
	}
	return fp;
fail:
	free(*tmp);
	*tmp = NULL;
	return NULL;
}

/*
 * Finish a temp file from open_tmp(): with rc 0 make its data durable and
 * rename it over `path`; otherwise (or if that fails) remove it.  Closes
 * fp, frees tmp; returns rc or the first error.
 */
static int commit_tmp(FILE *fp, char *tmp, const char *path, int rc)
{
	if (!rc && (fflush(fp) || fsync(fileno(fp))))
		rc = -errno;
	if (fclose(fp) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (!rc)
		fsync_dir(path);
	else
		unlink(tmp);
	free(tmp);
	return rc;
}

int write_file_atomic(const char *path,
		      int (*fn)(FILE *fp, const void *arg), const void *arg)
{
	char *tmp;
	FILE *fp = open_tmp(path, &tmp);

	if (!fp)
		return -errno;
	return commit_tmp(fp, tmp, path, fn(fp, arg));
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

/* Read past the first `lines` lines of fp. */
static void skip_lines_of(FILE *fp, unsigned lines)
{
	int ch;

	while (lines && (ch = getc(fp)) != EOF)
		if (ch == '\n')
			lines--;
}

/*
 * Whether the rest of a and b (after `skip` lines each) is the same,
 * compared a block at a time (the files can be tens of MB: the subnet
 * list of a 10,000-node fabric is 24 MB).
 */
static bool same_content(FILE *a, FILE *b, unsigned skip)
{
	enum { BLK = 65536 };
	char *x = malloc(2 * BLK), *y = x + BLK;
	bool same = x != NULL;

	skip_lines_of(a, skip);
	skip_lines_of(b, skip);
	while (same) {
		size_t na = fread(x, 1, BLK, a), nb = fread(y, 1, BLK, b);

		if (na != nb || memcmp(x, y, na))
			same = false;
		else if (na < BLK)
			break;
	}
	same = same && !ferror(a) && !ferror(b);
	free(x);
	return same;
}

int write_file_if_changed(const char *path, int (*fn)(FILE *fp, const void *arg),
			  const void *arg, unsigned skip_lines)
{
	char *tmp;
	FILE *fp = open_tmp(path, &tmp), *old;
	int rc;

	if (!fp)
		return -errno;
	/* Written to the temp file straight away: no copy in memory. */
	rc = fn(fp, arg);
	if (!rc && fflush(fp))
		rc = -errno;
	if (!rc && (old = fopen(path, "re"))) {
		rewind(fp);
		bool same = same_content(fp, old, skip_lines);

		fclose(old);
		if (same) {
			fclose(fp);
			unlink(tmp);
			free(tmp);
			return 1;
		}
	}
	return commit_tmp(fp, tmp, path, rc);
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

	errno = 0;
	return fwrite(b->p, 1, b->n, fp) == b->n ? 0 : errno ? -errno : -EIO;
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
