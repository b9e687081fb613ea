/*
 * checks_int.h - helpers the health checks share (not for callers).
 */
#ifndef IBSM_HEALTH_CHECKS_INT_H
#define IBSM_HEALTH_CHECKS_INT_H

#include <stdarg.h>

#include "health/checks.h"

/* The LID a port answers at: its end port's assigned LID, else the one
 * its PortInfo shows; 0 none. */
uint16_t hc_port_lid(const struct fab_node *n, unsigned pn);
/* Fill where a finding is: node `id` of `f`, port pn, its LID and
 * description, and the peer at the other end of pn's cable. */
void hc_where(struct hf_finding *x, const struct fabric *f, int32_t id,
	      unsigned pn);
/* The same by node GUID; only GUID and port when f lacks the node. */
void hc_where_guid(struct hf_finding *x, const struct fabric *f,
		   uint64_t guid, unsigned pn);
void hc_text(struct hf_finding *x, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* IBSM_HEALTH_CHECKS_INT_H */
