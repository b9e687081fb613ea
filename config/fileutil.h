/*
 * fileutil.h - the one home of file helpers for the daemon and the tools
 * (ibsmctl, ibhost): reading a whole file, and writing files so that a reader never sees half of one and
 * a crash never loses the previous version: temp file in the same
 * directory, fsync, rename.
 */
#ifndef IBSM_CONFIG_FILEUTIL_H
#define IBSM_CONFIG_FILEUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * The whole file `path` into *buf (malloc'd, NUL-terminated; *len bytes
 * without the NUL, which the content may also hold).  0 or -errno.
 */
int read_file_all(const char *path, char **buf, size_t *len);
/* The same for a regular file of at most `max` bytes: -EFBIG beyond it,
 * -EINVAL for a directory, a fifo, a device. */
int read_file_max(const char *path, size_t max, char **buf, size_t *len);

/* What stat says of a file's identity and content: a file replaced
 * (rename), rewritten or truncated gets another stamp. */
struct file_stamp {
	unsigned long long dev, ino, size;
	long long mtime_s, mtime_ns, ctime_s, ctime_ns;
};

/* The stamp of `path` (following links).  0 or -errno. */
int file_stamp_get(const char *path, struct file_stamp *st);
bool file_stamp_same(const struct file_stamp *a, const struct file_stamp *b);

/*
 * read_file_max() of a file that may be being written: the stamp of the
 * open file before the read must equal its stamp after it and the stamp
 * of `path` after it (nothing renamed over it), else the file is read
 * again, at most `tries` times in all; -EAGAIN when it never held still.
 * The stamp of what was read goes to *st (may be NULL).
 */
int read_file_stable(const char *path, size_t max, unsigned tries,
		     char **buf, size_t *len, struct file_stamp *st);

/*
 * Write `path` atomically: fn(fp, arg) writes the content and returns 0 or
 * -errno.  Returns 0 or -errno; on failure the old file is untouched and
 * no temp file is left behind.  A symbolic link is followed: the file it
 * points to is replaced and the link stays.  The new file keeps the old
 * one's mode and (as far as the writer may set them) owner and group; a
 * new file gets mode 0644.  Temp files of this writer ("NAME.tmpXXXXXX"
 * beside the file) that a killed writer left behind, older than
 * FILE_TMP_STALE_S seconds, are removed (at most FILE_TMP_SWEEP per
 * write, among the first FILE_TMP_SCAN directory entries).
 */
int write_file_atomic(const char *path,
		      int (*fn)(FILE *fp, const void *arg), const void *arg);

/*
 * Write `path` atomically (write_file_atomic) only when what fn writes
 * differs from the file's content, ignoring the first `skip_lines` lines
 * of both (a timestamp header).  Every heavy sweep rewrites the dumps and
 * the guid2lid cache; most sweeps change nothing, and an unchanged file
 * costs neither the write nor its fsync on the loop thread.  Returns 1
 * when the file was left as it was, 0 when written, or -errno.
 */
int write_file_if_changed(const char *path, int (*fn)(FILE *fp, const void *arg),
			  const void *arg, unsigned skip_lines);

/*
 * write_file_atomic, the previous content of `path` (if any) kept first
 * as path + suffix (itself written atomically): "partitions.conf~".
 */
int write_file_atomic_backup(const char *path, const char *suffix,
			     int (*fn)(FILE *fp, const void *arg),
			     const void *arg);

#define FILE_TMP_STALE_S	600
#define FILE_TMP_SWEEP		16
#define FILE_TMP_SCAN		4096

/*
 * An exclusive lock for a read-modify-write of `path` (an flock on a lock
 * file ".NAME.lock" beside the file a link points to, created 0600 when
 * missing and never removed, so every writer locks the same inode).  With
 * `wait` false, -EWOULDBLOCK when another holds it.  Returns the lock's
 * descriptor (file_unlock() releases it) or -errno.
 */
int file_lock(const char *path, bool wait);
void file_unlock(int fd);

/* Create `dir` and its missing parents (mode 0755).  Returns 0 or -errno. */
int mkdir_p(const char *dir);

#endif /* IBSM_CONFIG_FILEUTIL_H */
