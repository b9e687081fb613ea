/*
 * health.h - the daemon's side of fabric health: it feeds the sweep and
 * trap history of the pure library (health/), runs its checks after each
 * heavy or quick sweep and each counter sweep, keeps the findings, logs
 * each one opened and closed, appends the event history to a file in
 * the dump directory, and isolates unhealthy ports when the policy says
 * so.  Everything runs on the loop thread; struct sm holds one
 * struct sm_health (sm->health), made on first use.
 *
 * The hooks below are called from one line each in the sweeps
 * (sm/sweep.c), the trap receiver (sm/trap.c), the state machine
 * (sm/ha/state.c), the routing (sm/route.c) and the performance manager.
 * Each does nothing when sm->health cannot be made (no memory).
 */
#ifndef IBSM_SM_HEALTH_HEALTH_H
#define IBSM_SM_HEALTH_HEALTH_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "health/checks.h"

struct sm;
struct fabric;
struct ctl_answer;
struct lid_report;

/*
 * A heavy sweep (or one on a quick sweep's model) completed: `next` is
 * about to replace sm->fabric.  Links that went down or came up, nodes
 * that joined or left are compared and recorded.  Called before the
 * model is replaced.
 */
void sm_health_model(struct sm *sm, const struct fabric *next);
/* The new model is published (sm->fabric, sm->routes): the checks run,
 * findings are opened and closed, isolation is applied. */
void sm_health_sweep_done(struct sm *sm);
/* A heavy sweep's discovery ended: the node GUIDs it found twice (and
 * left out the second time), for the identity check. */
void sm_health_discovered(struct sm *sm, const uint64_t *dup_guids, unsigned n);
/* A heavy sweep's LID assignment: the LID conflicts it found (and
 * fixed), for the identity check. */
void sm_health_lids(struct sm *sm, const struct lid_report *rep);
/* `n` Sets to a node went unacknowledged in this sweep while the node
 * answered the discovery's Gets: counted in the history as Sets refused
 * in this sweep's poll of it.  (A node whose Gets go unanswered is
 * missing from the model behind a port still up: sm_health_model()
 * counts that as a poll it did not answer.) */
void sm_health_unanswered(struct sm *sm, uint64_t node_guid, unsigned n);
/* A trap from source LID `lid`, a port of the model (before the rate
 * limit: a noisy source is judged by all it sends). */
void sm_health_trap(struct sm *sm, uint16_t lid);
/* The SM changed state (sm/ha/state.c's sm_transition()). */
void sm_health_state(struct sm *sm, const char *from, const char *to,
		     const char *why);
/* The verdict on the tables that will be programmed (sm/route.c), and
 * what failed in words ("" when every check passed). */
void sm_health_routes(struct sm *sm, const struct hc_routing_verdict *v,
		      const char *what);
/* The performance manager finished a counter sweep: the error-rate
 * checks run on its store (sm->perf_done_hook, set when sm->health is
 * made). */
void sm_health_counters_done(struct sm *sm);

/*
 * Disable port `pn` of node `id` of the published model (PortInfo Set,
 * PortPhysicalState Disabled) as an isolation: kept disabled by the
 * sweeps, listed and undone like the isolation policy's (`ibsmctl port
 * enable`), logged (ERR 1805) with both ends of the link and
 * "kind: why".  The isolation's refusals hold (never the SM's own link,
 * a switch's last active link, a link whose loss cuts the SM off from
 * other nodes: ERR 1803).  0 (also when the link is isolated already),
 * -EPERM when refused, -EINVAL for a port without a link.
 */
int sm_health_isolate(struct sm *sm, int32_t id, uint8_t pn,
		      const char *kind, const char *why);

void sm_health_free(struct sm *sm);

/* ------------------------------------------------------ control socket */

/*
 * The control socket's commands (sm/ctl/): each adds its data lines to
 * `a` and returns 0 (answer OK) or -errno (ERR), with the terminator's
 * text in msg.
 *
 * health [json]: the findings in force, a summary line first; msg is
 * "N critical, M warnings" (ibsmctl's exit status comes from it).
 */
int  sm_health_ctl_report(struct sm *sm, bool json, struct ctl_answer *a,
			  char *msg, size_t len);
/* events [since T] [json]: the event history from `since` (Unix time). */
int  sm_health_ctl_events(struct sm *sm, double since, bool json,
			  struct ctl_answer *a, char *msg, size_t len);
/* topology save FILE: the model as a reference topology, atomically. */
int  sm_health_ctl_topo_save(struct sm *sm, const char *path,
			     struct ctl_answer *a, char *msg, size_t len);
/* port enable: the node by GUID (or by LID when guid is 0) and port. */
int  sm_health_ctl_port_enable(struct sm *sm, uint64_t guid, uint16_t lid,
			       uint8_t port, struct ctl_answer *a, char *msg,
			       size_t len);

#endif /* IBSM_SM_HEALTH_HEALTH_H */
