/*
 * topo_load.h - build a fabric model from a topology file, the format
 * ibsim reads and ibnetdiscover (and ibsm --dump-fabric) writes.  Used by
 * unit tests and offline benchmarks that run routing without ibsim.
 */
#ifndef IBSM_SM_TOPO_LOAD_H
#define IBSM_SM_TOPO_LOAD_H

#include <stddef.h>

#include "model/fabric.h"

/*
 * Load `path` into `f` (freshly initialised).  GUIDs come from the file
 * (switchguid=/caguid= lines, "S-<guid>"/"H-<guid>" names) or, for plain
 * ibsim files, are made up deterministically.  Every linked port gets a
 * PortInfo that says LinkUp/ACTIVE, 4x, with LocalPortNum set; the first
 * CA port in the file becomes the local (SM) port.  Returns 0, or -errno
 * with "FILE:LINE: what was expected" in err.
 */
int topo_load(struct fabric *f, const char *path, char *err, size_t errlen);

#endif /* IBSM_SM_TOPO_LOAD_H */
