/*
 * topo_file.h - topology files on disk: a fabric model read from one
 * (model/topo_load.h parses it) and written to one (model/topo_dump.h
 * formats it), through the file helpers (config/fileutil.h).
 */
#ifndef IBSM_SM_TOPO_FILE_H
#define IBSM_SM_TOPO_FILE_H

#include <stddef.h>

#include "model/fabric.h"
#include "model/topo_dump.h"
#include "model/topo_load.h"

/*
 * Load `path` into `f` (freshly initialised): topo_parse() of the whole
 * file.  Returns 0, or -errno with "FILE:LINE: what was expected" (or
 * "FILE: why it could not be read") in err.
 */
int topo_load(struct fabric *f, const char *path, char *err, size_t errlen);
/* The same with topo_parse_flags()' flags: a reference topology for the
 * health checks is loaded with TOPO_LINK_AS_GIVEN. */
int topo_load_flags(struct fabric *f, const char *path, unsigned flags,
		    char *err, size_t errlen);

/* Write to `path` atomically (temp file + rename), only when the content
 * changed.  Returns 0 or -errno. */
int topo_dump_file(const struct fabric *f, const char *path);

#endif /* IBSM_SM_TOPO_FILE_H */
