/*
 * metrics.h - the Prometheus endpoint (metrics_listen ADDR:PORT):
 * libmicrohttpd in external-select mode with epoll, driven by the libev
 * loop (one ev_io on MHD's epoll fd, one ev_timer for MHD's timeout), so
 * every answer is built on the loop thread, at scrape time, from the
 * model, the counter store and the SM's own counters, and nothing runs
 * while nobody scrapes.  Read-only: GET and HEAD of /metrics, /fabric
 * (the fabric map) and / (an index); any other path 404, any other
 * method 405.  Bounded: connections (in all, per address), the memory a
 * request may take, idle time; a built answer is shared by every scrape
 * within METRICS_CACHE_S, so a flood of scrapes costs one build per
 * period.
 */
#ifndef IBSM_SM_METRICS_METRICS_H
#define IBSM_SM_METRICS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sm;
struct prom;

#define METRICS_MAX_CONNECTIONS	64	/* connections at once */
#define METRICS_PER_IP		8	/* ... from one address */
#define METRICS_TIMEOUT_S	10	/* idle connection dropped after */
#define METRICS_MEMORY		16384	/* bytes a connection's request may take */
#define METRICS_CACHE_S		1.0	/* an answer is reused this long */

/*
 * Start serving on sm->cfg.metrics_listen (nothing when it is unset): 0,
 * or -errno with an ERR line logged (the SM runs on without metrics).
 */
int  metrics_start(struct sm *sm);
void metrics_stop(struct sm *sm);

/* The endpoint's own figures: requests, /metrics texts built, the last
 * one's CPU time (the loop thread's) and size.  false: not serving. */
struct metrics_self {
	uint64_t requests, builds;
	double   last_cpu;
	size_t   last_bytes;
};
bool metrics_self(const struct sm *sm, struct metrics_self *out);

/* The fabric map page (fabmap/) of the model in force, malloc'd into
 * *out (*len bytes): 0, -ENODATA before the first sweep, -ENOMEM. */
int  metrics_fabric_page(struct sm *sm, char **out, size_t *len);

/* The whole /metrics text (sm/metrics/sm_metrics.c and ports.c). */
void metrics_render(struct sm *sm, struct prom *p);
/* The SM's own families (ibsm_*). */
void metrics_render_sm(struct sm *sm, struct prom *p);
/* The port families (infiniband_switch_port_*, infiniband_hca_port_*,
 * infiniband_*_info) of the model and the counter store. */
void metrics_render_ports(struct sm *sm, struct prom *p);
/* The same for model `f` and counter store `st` (NULL: no counters). */
struct fabric;
struct pc_store;
void metrics_render_ports_of(const struct fabric *f, const struct pc_store *st,
			     struct prom *p);

#endif /* IBSM_SM_METRICS_METRICS_H */
