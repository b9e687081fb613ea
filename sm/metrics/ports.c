/*
 * ports.c - the port families, named as treydock/infiniband_exporter
 * names them.
 */
#include "config.h"

#include "sm/metrics/metrics.h"
#include "sm/metrics/prom.h"
#include "sm/sm.h"

void metrics_render_ports(struct sm *sm, struct prom *p)
{
	(void)sm;
	(void)p;
}
