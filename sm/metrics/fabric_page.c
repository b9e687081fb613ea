/*
 * fabric_page.c - the fabric map at /fabric: sm_fabric_map() (the model
 * in force, the open findings, the routed load per cable and the
 * counters, sm/fabric_map.h) as one self-contained HTML page, on the
 * loop thread.
 */
#include "config.h"

#include <errno.h>

#include "sm/fabric_map.h"
#include "sm/metrics/metrics.h"
#include "sm/sm.h"

int metrics_fabric_page(struct sm *sm, char **out, size_t *len)
{
	struct fabmap_buf b = { 0 };
	int rc;

	*out = NULL;
	*len = 0;
	if (!sm->fabric.n_nodes)
		return -ENODATA;
	rc = sm_fabric_map(sm, FABMAP_HTML, NULL, &b);
	if (rc < 0 || b.failed) {
		fabmap_buf_free(&b);
		return rc < 0 ? rc : -ENOMEM;
	}
	*out = b.data;
	*len = b.len;
	return 0;
}
