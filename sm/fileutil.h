/*
 * fileutil.h - writing files so that a reader never sees half of one and
 * a crash never loses the previous version: temp file in the same
 * directory, fsync, rename.
 */
#ifndef IBSM_SM_FILEUTIL_H
#define IBSM_SM_FILEUTIL_H

#include <stdio.h>

/*
 * Write `path` atomically: fn(fp, arg) writes the content and returns 0 or
 * -errno.  The file gets mode 0644.  Returns 0 or -errno; on failure the
 * old file is untouched and no temp file is left behind.
 */
int write_file_atomic(const char *path,
		      int (*fn)(FILE *fp, const void *arg), const void *arg);

/* Create `dir` and its missing parents (mode 0755).  Returns 0 or -errno. */
int mkdir_p(const char *dir);

#endif /* IBSM_SM_FILEUTIL_H */
