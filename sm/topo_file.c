/*
 * topo_file.c - topology files on disk (see topo_file.h).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/fileutil.h"
#include "sm/topo_file.h"

int topo_load(struct fabric *f, const char *path, char *err, size_t errlen)
{
	return topo_load_flags(f, path, 0, err, errlen);
}

int topo_load_flags(struct fabric *f, const char *path, unsigned flags,
		    char *err, size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	int rc;

	if (errlen)
		err[0] = '\0';
	rc = read_file_all(path, &buf, &len);
	if (rc < 0) {
		if (errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	rc = topo_parse_flags(f, path, buf, len, flags, err, errlen);
	free(buf);
	return rc;
}

static int write_topo(FILE *fp, const void *arg)
{
	return topo_dump(arg, fp);
}

/* The first 3 lines (the "generated on" header) do not count as a change. */
int topo_dump_file(const struct fabric *f, const char *path)
{
	int rc = write_file_if_changed(path, write_topo, f, 3);
	return rc < 0 ? rc : 0;
}
