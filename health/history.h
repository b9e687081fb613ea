/*
 * history.h - what the daemon saw of each port and node over time, for
 * the unhealthy-port classifier (UFM's definition): flapping links,
 * unresponsive nodes, noisy trap sources, nodes refusing Sets.
 *
 * Pure: no I/O.  The daemon (sm/health/) feeds it: each sweep's link
 * state per port (and link traps), each sweep's poll of a node (did it
 * answer anything), each trap received, each Set refused.  Bounded: at
 * most policy max_ports ports, max_nodes nodes and max_trap_lids trap
 * sources are tracked; a new one beyond the bound replaces the one seen
 * least recently.  Thresholds come from struct health_policy.
 */
#ifndef IBSM_HEALTH_HISTORY_H
#define IBSM_HEALTH_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "health/policy.h"
#include "model/guidmap.h"

/* Down->up transitions remembered per port (flap_count is capped here). */
#define HH_MAX_FLAPS	32
/* Polls remembered per node (unresponsive_n is capped here). */
#define HH_MAX_POLLS	32
/* Trap rate: one minute in buckets of this many seconds. */
#define HH_TRAP_BUCKET_S	10
#define HH_TRAP_BUCKETS		6

struct hh_port {
	uint64_t guid;		/* node GUID */
	uint8_t  port;
	bool     known, up;	/* last state seen */
	uint8_t  n_flaps;	/* transitions held in flaps[] */
	uint8_t  flap_head;
	double   flaps[HH_MAX_FLAPS];	/* times of down->up transitions */
	uint32_t changes;		/* up<->down changes seen (wraps) */
	double   last_seen;
};

struct hh_node {
	uint64_t guid;
	uint32_t polls_unanswered;	/* bit i: poll i back answered nothing */
	uint32_t polls_refused;		/* bit i: a Set was refused in poll i */
	uint8_t  n_polls;		/* polls held, <= HH_MAX_POLLS */
	double   last_seen;
};

struct hh_trap_src {
	uint16_t lid;
	uint32_t count[HH_TRAP_BUCKETS];
	int64_t  bucket;		/* index (time / bucket) of count[last] */
	double   last_seen;
};

struct health_history {
	struct health_policy pol;
	struct hh_port *ports;
	struct guidmap port_map;	/* (guid, port) key -> index */
	size_t n_ports, cap_ports;
	struct hh_node *nodes;
	struct guidmap node_map;
	size_t n_nodes, cap_nodes;
	struct hh_trap_src *traps;
	struct guidmap trap_map;	/* LID -> index */
	size_t n_traps, cap_traps;
	unsigned evicted;		/* entries dropped to stay bounded */
};

/* Copy of `p` kept (its bounds size the tables).  0 or -ENOMEM. */
int hh_init(struct health_history *h, const struct health_policy *p);
void hh_free(struct health_history *h);
/* New thresholds (a reload): bounds shrink by dropping the oldest. */
void hh_set_policy(struct health_history *h, const struct health_policy *p);

/* The link of (guid, port) is up or down now (a sweep's PortInfo, or a
 * link trap); a down->up change counts as one transition. */
void hh_link_state(struct health_history *h, uint64_t guid, uint8_t port,
		   bool up, double now);
/* A sweep polled node `guid`: `answered` is false when the node answered
 * none of the SMPs sent to it. */
void hh_node_poll(struct health_history *h, uint64_t guid, bool answered,
		  double now);
/* A Set to node `guid` was refused (an error status, or no answer to a
 * Set while it answered Gets): counts in its latest poll. */
void hh_set_refused(struct health_history *h, uint64_t guid, double now);
/* A trap from source LID `lid` arrived. */
void hh_trap(struct health_history *h, uint16_t lid, double now);
/* Forget a node and its ports (it left the fabric and stays out). */
void hh_forget_node(struct health_history *h, uint64_t guid);

/* The classifiers.  Each returns whether the threshold is met and, when
 * `value` is not NULL, the figure it judged. */
bool hh_flapping(const struct health_history *h, const struct hh_port *p,
		 double now, unsigned *value);
bool hh_unresponsive(const struct health_history *h, const struct hh_node *n,
		     unsigned *value);
bool hh_refusing(const struct health_history *h, const struct hh_node *n,
		 unsigned *value);
bool hh_noisy(const struct health_history *h, const struct hh_trap_src *t,
	      double now, unsigned *per_minute);

/* Lookups (NULL: not tracked). */
const struct hh_port *hh_port_find(const struct health_history *h,
				   uint64_t guid, uint8_t port);
const struct hh_node *hh_node_find(const struct health_history *h,
				   uint64_t guid);
const struct hh_trap_src *hh_trap_find(const struct health_history *h,
				       uint16_t lid);

#endif /* IBSM_HEALTH_HISTORY_H */
