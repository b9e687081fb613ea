/*
 * fileutil.c - the file helpers of the daemon and the tools: whole-file
 * reads, atomic file replacement (with a backup), replacement only when
 * the content changed, directories (see fileutil.h).
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
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
 * The file that writing `path` should replace: the end of its chain of
 * symbolic links (also when that file does not exist yet), else `path`
 * itself.  0, or -ENAMETOOLONG.
 */
static int target_of(const char *path, char *out, size_t size)
{
	char link[4096], *real = realpath(path, NULL);
	unsigned hops = 0;

	if (real) {
		int n = snprintf(out, size, "%s", real);

		free(real);
		return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
	}
	/* A link to a file not created yet: follow it by hand. */
	if (snprintf(out, size, "%s", path) >= (int)size)
		return -ENAMETOOLONG;
	for (;;) {
		ssize_t n = readlink(out, link, sizeof(link) - 1);
		const char *slash;

		if (n < 0 || ++hops > 40)
			return 0;
		link[n] = '\0';
		slash = strrchr(out, '/');
		if (link[0] == '/' || !slash) {
			if (snprintf(out, size, "%s", link) >= (int)size)
				return -ENAMETOOLONG;
		} else {
			char dir[4096];

			snprintf(dir, sizeof(dir), "%.*s", (int)(slash - out), out);
			if (snprintf(out, size, "%s/%s", dir, link) >= (int)size)
				return -ENAMETOOLONG;
		}
	}
}

/* Directory and last component of `path`. */
static void split_path(const char *path, char *dir, size_t dsize,
		       const char **base)
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		snprintf(dir, dsize, ".");
		*base = path;
	} else {
		snprintf(dir, dsize, "%.*s", slash == path ? 1 :
			 (int)(slash - path), path);
		*base = slash + 1;
	}
}

/* NAME.tmpXXXXXX as mkostemp() makes them for `base`. */
static bool is_our_tmp(const char *name, const char *base)
{
	size_t bl = strlen(base);

	if (strncmp(name, base, bl) || strncmp(name + bl, ".tmp", 4) ||
	    strlen(name + bl + 4) != 6)
		return false;
	for (const char *c = name + bl + 4; *c; c++)
		if (!isalnum((unsigned char)*c))
			return false;
	return true;
}

/*
 * Remove the temp files of `path` a killed writer left: our naming
 * pattern only, regular files of this user only, older than
 * FILE_TMP_STALE_S only (a live writer's file is seconds old), and a
 * bounded number of entries looked at and removed.
 */
static void sweep_stale_tmp(const char *path)
{
	char dir[4096];
	const char *base;
	struct dirent *de;
	unsigned seen = 0, removed = 0;
	time_t now = time(NULL);
	DIR *d;

	split_path(path, dir, sizeof(dir), &base);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)) && seen++ < FILE_TMP_SCAN &&
	       removed < FILE_TMP_SWEEP) {
		struct stat st;

		if (!is_our_tmp(de->d_name, base) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		    st.st_mtime > now - FILE_TMP_STALE_S)
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) == 0)
			removed++;
	}
	closedir(d);
}

/*
 * A temp file beside `path` ("path.tmpXXXXXX") opened for writing and
 * reading, with the mode, owner and group of `like` (the file it
 * replaces, or the one a backup copies; mode 0644 when there is none;
 * owner and group as far as this user may set them); its name in *tmp
 * (malloc'd).  NULL with errno set.
 */
static FILE *open_tmp_like(const char *path, const char *like, char **tmp)
{
	size_t len = strlen(path) + 16;
	struct stat old;
	bool have_old = stat(like, &old) == 0 && S_ISREG(old.st_mode);
	FILE *fp;
	int fd;

	sweep_stale_tmp(path);
	*tmp = malloc(len);
	if (!*tmp)
		return NULL;
	snprintf(*tmp, len, "%s.tmpXXXXXX", path);
	fd = mkostemp(*tmp, O_CLOEXEC);
	if (fd < 0)
		goto fail;
	if (have_old && fchown(fd, old.st_uid, old.st_gid) < 0)
		(void)!fchown(fd, (uid_t)-1, old.st_gid);
	if (fchmod(fd, have_old ? old.st_mode & 07777 : 0644) < 0 ||
	    !(fp = fdopen(fd, "w+"))) {
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

static FILE *open_tmp(const char *path, char **tmp)
{
	return open_tmp_like(path, path, tmp);
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

/*
 * Whole-file writes replace regular files only: renaming a temp file over
 * a device, a FIFO or a directory (`ibsm -c /dev/null`) would replace the
 * node itself.  0 when `target` is a regular file or does not exist.
 */
static int replaceable(const char *target)
{
	struct stat st;

	if (stat(target, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	return S_ISREG(st.st_mode) ? 0 : -EINVAL;
}

int write_file_atomic(const char *path,
		      int (*fn)(FILE *fp, const void *arg), const void *arg)
{
	char target[4096], *tmp;
	FILE *fp;
	int rc = target_of(path, target, sizeof(target));

	if (rc < 0 || (rc = replaceable(target)) < 0)
		return rc;
	fp = open_tmp(target, &tmp);
	if (!fp)
		return -errno;
	return commit_tmp(fp, tmp, target, fn(fp, arg));
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
	char target[4096], *tmp;
	FILE *fp, *old;
	int rc = target_of(path, target, sizeof(target));

	if (rc < 0 || (rc = replaceable(target)) < 0)
		return rc;
	path = target;
	fp = open_tmp(path, &tmp);
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
	char bak[4096], target[4096];
	char *old = NULL;
	size_t len = 0;
	int rc = target_of(path, target, sizeof(target));

	if (rc < 0 || (rc = replaceable(target)) < 0)
		return rc;
	path = target;		/* the backup goes beside the file edited */
	if ((size_t)snprintf(bak, sizeof(bak), "%s%s", path, suffix) >=
	    sizeof(bak))
		return -ENAMETOOLONG;
	rc = read_file_all(path, &old, &len);
	if (rc == 0) {
		struct bytes b = { old, len };
		char *tmp;
		/* The backup as private as the file it copies. */
		FILE *fp = open_tmp_like(bak, path, &tmp);

		rc = fp ? commit_tmp(fp, tmp, bak, write_bytes(fp, &b)) : -errno;
		free(old);
	} else if (rc == -ENOENT) {
		rc = 0;		/* nothing to keep */
	}
	return rc < 0 ? rc : write_file_atomic(path, fn, arg);
}

int file_lock(const char *path, bool wait)
{
	char target[4096], dir[4096], lock[4096 + 16];
	const char *base;
	int fd, rc = target_of(path, target, sizeof(target));

	if (rc < 0)
		return rc;
	split_path(target, dir, sizeof(dir), &base);
	if ((size_t)snprintf(lock, sizeof(lock), "%s/.%s.lock", dir, base) >=
	    sizeof(lock))
		return -ENAMETOOLONG;
	/* flock needs no write access: read-only opens lock as well. */
	fd = open(lock, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB)) < 0) {
		if (errno == EINTR)
			continue;
		rc = -errno;
		close(fd);
		return rc;
	}
	return fd;
}

void file_unlock(int fd)
{
	if (fd >= 0)
		close(fd);	/* the flock goes with the last descriptor */
}

static void stamp_of(const struct stat *s, struct file_stamp *st)
{
	st->dev = (unsigned long long)s->st_dev;
	st->ino = (unsigned long long)s->st_ino;
	st->size = (unsigned long long)s->st_size;
	st->mtime_s = s->st_mtim.tv_sec;
	st->mtime_ns = s->st_mtim.tv_nsec;
	st->ctime_s = s->st_ctim.tv_sec;
	st->ctime_ns = s->st_ctim.tv_nsec;
}

int file_stamp_get(const char *path, struct file_stamp *st)
{
	struct stat s;

	if (stat(path, &s) < 0)
		return -errno;
	stamp_of(&s, st);
	return 0;
}

bool file_stamp_same(const struct file_stamp *a, const struct file_stamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_s == b->mtime_s && a->mtime_ns == b->mtime_ns &&
	       a->ctime_s == b->ctime_s && a->ctime_ns == b->ctime_ns;
}

int read_file_stable(const char *path, size_t max, unsigned tries,
		     char **buf, size_t *len, struct file_stamp *st)
{
	for (unsigned t = 0; t < tries; t++) {
		struct file_stamp before, after, named;
		struct stat s;
		int fd = open(path, O_RDONLY | O_CLOEXEC), keep, rc;

		if (fd < 0)
			return -errno;
		rc = fstat(fd, &s) < 0 ? -errno :
		     !S_ISREG(s.st_mode) ? -EINVAL :
		     (uint64_t)s.st_size > max ? -EFBIG : 0;
		if (rc < 0) {
			close(fd);
			return rc;
		}
		stamp_of(&s, &before);
		keep = dup(fd);		/* read_fd() closes fd */
		if (keep < 0) {
			rc = -errno;
			close(fd);
			return rc;
		}
		rc = read_fd(fd, max, buf, len);
		if (rc == 0 && fstat(keep, &s) < 0) {
			rc = -errno;
			free(*buf);
		}
		close(keep);
		if (rc < 0)
			return rc;
		stamp_of(&s, &after);
		if (file_stamp_get(path, &named) == 0 &&
		    file_stamp_same(&before, &after) &&
		    file_stamp_same(&before, &named)) {
			if (st)
				*st = before;
			return 0;
		}
		free(*buf);
		*buf = NULL;
	}
	return -EAGAIN;
}
