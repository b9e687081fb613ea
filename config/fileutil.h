/*
 * fileutil.h - the one home of file helpers for the daemon and the tools
 * (ibsmctl, ibhost): reading a whole file, and writing files so that a reader never sees half of one and
 * a crash never loses the previous version: temp file in the same
 * directory, fsync, rename.
 */
#ifndef IBSM_CONFIG_FILEUTIL_H
#define IBSM_CONFIG_FILEUTIL_H

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

/*
 * Write `path` atomically: fn(fp, arg) writes the content and returns 0 or
 * -errno.  The file gets mode 0644.  Returns 0 or -errno; on failure the
 * old file is untouched and no temp file is left behind.
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

/* Create `dir` and its missing parents (mode 0755).  Returns 0 or -errno. */
int mkdir_p(const char *dir);

#endif /* IBSM_CONFIG_FILEUTIL_H */
