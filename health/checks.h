/*
 * checks.h - the health checks: each a pure function over its inputs
 * (the fabric model, a reference topology, the counters, the history,
 * the routing verdict) that reports what it finds into a findings set
 * (health/findings.h).  The caller opens a round of the check's group
 * with hf_set_begin() and closes it with hf_set_end().
 *
 * Link width and speed are compared as lanes (1, 2, 4, 8, 12) and as
 * the per-lane rate in 100 Mb/s units (25 SDR, 50 DDR, 100 QDR, 140 FDR,
 * 250 EDR, 500 HDR, 1000 NDR), never against LinkWidthSupported or
 * LinkSpeedSupported (ibsim reports fixed values there).
 */
#ifndef IBSM_HEALTH_CHECKS_H
#define IBSM_HEALTH_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include "health/counters.h"
#include "health/findings.h"
#include "health/history.h"
#include "health/policy.h"
#include "model/fabric.h"

/* Lanes of a LinkWidth code (1: 1x, 16: 2x, 2: 4x, 4: 8x, 8: 12x), 0
 * for none or several bits. */
unsigned hc_width_lanes(unsigned code);
/* The widest lanes in a LinkWidthEnabled/Supported mask, 0: none. */
unsigned hc_width_best(unsigned mask);
/* The active per-lane rate of a port (LinkSpeedExtActive when the port
 * has extended speeds and it is set, else LinkSpeedActive), 0 unknown. */
unsigned hc_speed_active(const struct smp_port_info *pi, uint32_t cap_mask);
/* The best per-lane rate both ends enable (LinkSpeedEnabled and, when
 * both have extended speeds, LinkSpeedExtEnabled), 0 when unknown. */
unsigned hc_speed_best_common(const struct smp_port_info *a, uint32_t cap_a,
			      const struct smp_port_info *b, uint32_t cap_b);
/* "4x", "QDR" ...: names of lanes and rates ("?" when unknown). */
const char *hc_width_name(unsigned lanes);
const char *hc_speed_name(unsigned rate);

/*
 * Links (group HF_G_SWEEP), each link looked at once: a port physically
 * up (LinkUp) whose state is not ACTIVE (critical); active width or
 * speed below the best both ends enable (warning); below the declared
 * p->expected_width / expected_speed (warning).
 */
void hc_links(const struct fabric *f, const struct health_policy *p,
	      struct hf_set *s, double now);

/*
 * The fabric against a reference topology (topo_parse() of an
 * ibnetdiscover file), matched by node GUID (group HF_G_SWEEP): nodes
 * missing (critical) and unexpected (warning); links missing and
 * unexpected (warning); a cable between the same two nodes found on
 * other ports reported once as moved rather than as a missing and an
 * unexpected link; description changes; links below the reference's
 * width or speed (where the file gives them).  Nothing when ref is NULL.
 */
void hc_reference(const struct fabric *f, const struct fabric *ref,
		  struct hf_set *s, double now);

/*
 * Identity (group HF_G_SWEEP): nodes of the same type (switches among
 * switches, CAs among CAs) sharing a node description (warning, one
 * finding per node, at most 16 per description), duplicate node GUIDs
 * the discovery found and left out of the model (critical; sm/discover.h
 * discover_result dup_guid[]), and LID conflicts the LID assignment
 * found and settled by moving a port (warning; sm/lid.h lid_report
 * dups[]).
 */
struct hc_lid_conflict {
	uint16_t lid;
	uint64_t port_guid;	/* the port that claimed it and was moved */
	uint64_t other_port_guid; /* the port that kept it */
};

struct hc_identity_in {
	const uint64_t *dup_guids;	/* node GUIDs seen on two nodes */
	size_t n_dup_guids;
	const struct hc_lid_conflict *lid_conflicts;
	size_t n_lid_conflicts;
};

void hc_identity(const struct fabric *f, const struct hc_identity_in *in,
		 struct hf_set *s, double now);

/*
 * Error rates and congestion of the ports in the counter store (group
 * HF_G_COUNTERS).  For each error counter, the increments over a sliding
 * window of p->err_window_s (kept in `st`, between half the window and
 * all of it), scaled to an hour but never from less than an hour (so a
 * burst is judged by its count): at or above the counter's threshold a
 * warning, at err_critical_factor times it critical.  PortXmitWait
 * likewise is congestion (warning).
 *
 * Counters that go backwards, are cleared or jump absurdly never make a
 * false critical: the store's deltas are used (it accounts for wraps and
 * its own clears), a clear by someone else (pc_port ext_clears moved:
 * the administrator acknowledged the errors) restarts the port's window,
 * and a delta larger than the counter's width allows between two reads
 * (a PMA answering garbage) restarts it too, uncounted.  What a port's
 * first read finds (errors since its counters were last cleared, over
 * an unknown time) is counted, but makes a warning at most, until the
 * window slides past it.
 *
 * `st` keeps a window for each port that had an increment (bounded by
 * p->max_ports, the least recently updated dropped); `f` (may be NULL)
 * names the port's node and its peer.
 */
struct hc_cwin {
	uint64_t guid;
	uint8_t  port;
	uint32_t ext_clears;		/* as last seen */
	double   base_time, mid_time, last_read;
	uint64_t base[PC_N_ERRORS + 1];	/* totals at base_time (and
					 * PortXmitWait's last) */
	uint64_t mid[PC_N_ERRORS + 1];	/* totals at mid_time */
	uint32_t link_changes;		/* the link's changes (struct hh_port)
					 * as last seen */
	bool     unknown_age;		/* the window holds what a first read
					 * found: counted since the counters'
					 * last clear, at no known rate */
};

struct hc_counter_state {
	struct hc_cwin *win;
	struct guidmap map;		/* (guid, port) key -> index */
	size_t n, cap;
};

void hc_counter_state_init(struct hc_counter_state *st);
void hc_counter_state_free(struct hc_counter_state *st);

/*
 * Judge one port's counters.  `link` is what the history knows of the
 * port's link (NULL: nothing): PortXmitDiscards counted while the link
 * was down, or since it last went down or came back, are that change's
 * doing (the flapping check judges it), so the discard count of the
 * window starts again at such a read.
 */
void hc_counter_port(struct hc_counter_state *st, const struct pc_port *cp,
		     const struct fabric *f, const struct health_policy *p,
		     struct hf_set *s, double now, const struct hh_port *link);
/* perfquery's name of a counter judged (enum pc_id), "?" for others. */
const char *hc_counter_name(unsigned c);
/* Every port of an array (the store's), as hc_counter_port() with no
 * link history. */
void hc_counters(struct hc_counter_state *st, const struct pc_port *ports,
		 size_t n, const struct fabric *f,
		 const struct health_policy *p, struct hf_set *s, double now);

/*
 * Unhealthy ports and nodes from the history (group HF_G_HISTORY):
 * flapping ports (critical), unresponsive nodes (critical), noisy trap
 * sources (warning) and nodes refusing Sets (warning).  `f` names them
 * and their peers (a trap source by its LID).
 */
void hc_unhealthy(const struct health_history *h, const struct fabric *f,
		  const struct health_policy *p, struct hf_set *s, double now);

/*
 * Routing (group HF_G_ROUTING), from the verifier's verdict
 * (routing/verify.h: routing_cdg_cycles(), routing_check's unreachable
 * pairs) as plain numbers: dependency cycles (critical: the routes can
 * deadlock) and unreachable pairs (critical).  bad_lid / bad_switch_guid
 * name the first failure when known (0: not).
 */
struct hc_routing_verdict {
	uint64_t cycles;
	uint64_t unreachable;
	uint64_t pairs;
	uint16_t bad_lid;
	uint64_t bad_switch_guid;
};

void hc_routing(const struct hc_routing_verdict *v, struct hf_set *s,
		double now);

#endif /* IBSM_HEALTH_CHECKS_H */
