/*
 * topo_load.h - build a fabric model from a topology file, the format
 * ibsim reads and ibnetdiscover (and ibsm --dump-fabric) writes.  Used by
 * unit tests and offline benchmarks that run routing without ibsim; the
 * file itself is read by topo_load() (sm/topo_file.h).
 */
#ifndef IBSM_MODEL_TOPO_LOAD_H
#define IBSM_MODEL_TOPO_LOAD_H

#include <stddef.h>

#include "model/fabric.h"

/*
 * Parse the content of topology file `name` (len bytes at buf, followed
 * by a NUL; parsed in place, so changed) into `f` (freshly initialised).  GUIDs come from the file
 * (switchguid=/caguid= lines, "S-<guid>"/"H-<guid>" names) or, for plain
 * ibsim files, are made up deterministically.  Every linked port gets a
 * PortInfo that says LinkUp/ACTIVE, 4x, with LocalPortNum set; the first
 * CA port in the file becomes the local (SM) port.  Returns 0, or -errno
 * with "FILE:LINE: what was expected" in err.
 */
int topo_parse(struct fabric *f, const char *name, char *buf, size_t len,
	       char *err, size_t errlen);

/*
 * topo_parse() with flags.  TOPO_LINK_AS_GIVEN: a link's width and speed
 * are those the file gives (ibsim's w=, ibnetdiscover's "4xQDR") and 0
 * where it gives none, instead of 4x SDR: a reference topology
 * (health/checks.h hc_reference()) compares only what it states.  The
 * node description is the file's, or the node's name when it has none
 * (what ibsim reports for such a node).
 */
#define TOPO_LINK_AS_GIVEN	0x1u
int topo_parse_flags(struct fabric *f, const char *name, char *buf,
		     size_t len, unsigned flags, char *err, size_t errlen);

#endif /* IBSM_MODEL_TOPO_LOAD_H */
