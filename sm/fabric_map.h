/*
 * fabric_map.h - the fabric map (fabmap/fabmap.h) of the daemon's own
 * state, for whoever serves it (the metrics endpoint's /fabric).
 */
#ifndef IBSM_SM_FABRIC_MAP_H
#define IBSM_SM_FABRIC_MAP_H

#include "fabmap/fabmap.h"
#include "health/counters.h"

struct sm;

/*
 * Render the map of sm->fabric into `out` (zeroed by the caller; free it
 * with fabmap_buf_free()): the findings in force (sm->health), the
 * routed load of the tables in force (sm->routes; the load view is left
 * out before the first routing) and the port counters of `counters`
 * (NULL: the performance manager's, when it runs).  The loads cost what `routes report` costs (about a
 * second on the largest fabrics) and are kept until the model or the
 * tables change, so a page asked again costs only the drawing (tens of
 * milliseconds).  Loop thread only: it reads the live model.  0 or
 * -ENOMEM.
 */
int sm_fabric_map(struct sm *sm, enum fabmap_format fmt,
		  const struct pc_store *counters, struct fabmap_buf *out);

/* Drop the kept loads (at exit). */
void sm_fabric_map_free(void);

#endif /* IBSM_SM_FABRIC_MAP_H */
