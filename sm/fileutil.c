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
