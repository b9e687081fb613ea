/*
 * discover.h - the discovery sweep: directed routes from the SM port,
 * breadth first, many SMPs in flight, building a fresh fabric model.
 */
#ifndef IBSM_SM_DISCOVER_H
#define IBSM_SM_DISCOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "mad/engine.h"
#include "model/fabric.h"

struct discovery;

struct discover_result {
	unsigned smps;		/* requests this sweep made (not re-sends) */
	unsigned failed;	/* requests that got no valid answer */
	unsigned dead_ends;	/* up ports whose far side never answered */
	unsigned dup_guids;	/* twins left out (ERR 0103 each) */
	/* the first DISCOVER_DUP_GUIDS distinct node GUIDs of those twins,
	 * for the health checks (health/checks.h hc_identity()) */
#define DISCOVER_DUP_GUIDS	16
	uint64_t dup_guid[DISCOVER_DUP_GUIDS];
	unsigned n_dup_guid;
	/* a NodeInfo answer naming the node and port it was asked through
	 * (two CAs with one GUID cabled port to port, no switch seen):
	 * OpenSM's fatal "duplicate GUID found by link from a port to
	 * itself"; self_link_port 0: none */
	uint64_t self_link_guid;
	uint8_t  self_link_port;
	unsigned lid_smps;	/* requests sent LID-routed */
	unsigned lid_fallbacks;	/* of those, lost and sent again by DR */
	double   seconds;
};

/* Called once, on the loop thread, when nothing is outstanding any more. */
typedef void (*discover_done_cb)(void *arg, const struct discover_result *r);

/*
 * Discover the fabric reachable from the local port into `f` (which must
 * be freshly initialised).  With clear_psc, a switch whose SwitchInfo
 * shows PortStateChange has it cleared before its ports are read (the
 * only Set a discovery sends).  Returns 0 or -errno; the callback runs
 * later.
 */
int discover_start(struct discovery **out, struct mad_engine *e,
		   struct fabric *f, bool clear_psc, discover_done_cb cb,
		   void *arg);
/*
 * The model of the last completed sweep, consulted when two CA ports have
 * one GUID and port number: the one at the route the last sweep knew wins
 * over one seen earlier in this sweep.  `prev` must not change until the
 * callback has run.  Call right after discover_start() (no answer is
 * handled before the loop runs).
 */
void discover_set_previous(struct discovery *d, const struct fabric *prev);
/*
 * Let queries to nodes the previous model (discover_set_previous()) marks
 * LID-reachable (fab_node.smp_lid) go LID-routed, except NodeInfo; see
 * query_lid() in discover.c.  Off by default.  Call right after
 * discover_set_previous().
 */
void discover_set_lid_routes(struct discovery *d, bool on);
/*
 * At most this many nodes per sweep (0: DISCOVER_MAX_NODES, one per
 * unicast LID); a new GUID beyond is not added or explored, the query
 * counts as failed and ERR 0108 is logged once.  Call right after
 * discover_start(), like discover_set_previous().
 */
#define DISCOVER_MAX_NODES	0xbfff
void discover_set_max_nodes(struct discovery *d, unsigned n);
/*
 * Leave the P_Key tables out of the discovery (its callback runs when the
 * rest is known) for discover_read_pkeys() to read afterwards, with at
 * most `queued` reads handed to the engine at a time (0: 2,048; the
 * engine's window is far smaller, and each waiting read holds a request).
 * Call right after discover_start().
 */
void discover_set_defer_pkeys(struct discovery *d, bool on, unsigned queued);
/*
 * After a deferred discovery's callback: read the P_Key tables now.  Only
 * the P_Key fields of the model's ports (pkeys, pkey_blocks, pkey_read)
 * and nodes' smp_lid_failed are written meanwhile, so another thread may
 * read the rest of the model (the routing does).  `cb` runs when all are
 * answered, with this phase's counts, unless nothing was sent: returns 0
 * then (and never calls `cb`), else a positive number.
 */
unsigned discover_read_pkeys(struct discovery *d, discover_done_cb cb,
			     void *arg);
void discover_free(struct discovery *d);

#endif /* IBSM_SM_DISCOVER_H */
