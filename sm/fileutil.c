/*
 * fileutil.c - atomic file replacement (see fileutil.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sm/fileutil.h"

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
	fd = mkstemp(tmp);
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
out:
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}
