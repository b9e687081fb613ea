/*
 * quick.h - the quick sweep: link losses that traps report, handled from
 * the model of the last sweep instead of a whole new discovery.
 *
 * Trap 128 (PortStateChange) names a switch, not a port.  A heavy sweep
 * answers it by discovering the whole fabric again: 17,820 SMPs and about
 * 170 ms on the 1,152-host fat tree, for one link.  The quick sweep reads
 * only the switches that trapped (SwitchInfo, PortStateChange cleared,
 * then PortInfo of every port: about 40 SMPs each, by directed routes
 * that do not pass through another switch that trapped) and compares
 * what it read with the model:
 *
 *   nothing changed       done, nothing is sent (say the far end's trap of
 *                         a link the near end's already reported)
 *   links went down,      the new model is the old one without those
 *   nothing else          links and without the nodes only they reached;
 *                         the heavy sweep runs on it from PLAN on
 *                         (sweep_heavy_start_model(), sm/sweep.c): LIDs,
 *                         routes re-computed incrementally (sm/route.c),
 *                         only the Sets that differ
 *   anything else         a port came up or changed state, a LID moved, a
 *                         read failed, too many switches trapped: an
 *                         ordinary heavy sweep, as without this
 *
 * A link that went down can only lose paths, so the model without it is
 * what a full discovery would find, as long as the rest of the fabric did
 * not change without a trap; the light sweep (PortStateChange bits) and
 * the next heavy sweep catch what no trap reported, as they always do.
 *
 * Used when incremental_reroute is on (the default), the SM is master of
 * a subnet its last sweep brought up whole (no holes, no excluded node)
 * and every trap since asked about switch ports (128) only.
 */
#ifndef IBSM_SM_QUICK_H
#define IBSM_SM_QUICK_H

#include <stdbool.h>
#include <stdint.h>

#include "mad/wire.h"
#include "model/fabric.h"

struct sm;

/* What a quick sweep read of one switch. */
struct quick_read {
	int32_t  node;			/* its id in the model */
	struct smp_switch_info si;	/* after PortStateChange was cleared */
	struct smp_port_info *pi;	/* ports 0..num_ports */
};

enum quick_verdict {
	QUICK_NOTHING,			/* the model stands as it is */
	QUICK_LOSSES,			/* *out: the model without lost links */
	QUICK_OTHER,			/* something else: a heavy sweep */
};

struct quick_result {
	unsigned links_lost;		/* links gone (each once) */
	unsigned nodes_gone;		/* nodes no longer reachable */
	char     what[320];		/* the first loss, or why QUICK_OTHER */
	/* QUICK_LOSSES: the first lost link's ends (for the journal) */
	uint64_t node_guid, peer_guid;
	unsigned port, peer_port;
};

/*
 * Compare `n` switches as read with the model `old` and, when only links
 * went down, build the new model in `out` (fabric_init'ed here; left
 * empty otherwise): those links undone (the far end's port marked down),
 * nodes no longer reachable from the SM's port left out, the read
 * PortInfo and SwitchInfo in place, directed routes that crossed a lost
 * link replaced by a shortest one, no node LID-routed.  Pure: no I/O.
 * -ENOMEM, or QUICK_*.
 */
int quick_apply(const struct fabric *old, const struct quick_read *r,
		unsigned n, struct fabric *out, struct quick_result *res);

/* A trap 128 from this switch (node GUID), or any other trap that asks
 * for a sweep (guid 0): noted for the next quick sweep. */
void quick_note_trap(struct sm *sm, uint64_t guid);
/* Can the traps noted since the last sweep be handled by a quick sweep? */
bool quick_eligible(const struct sm *sm);
/* Start one for them (the notes are taken).  0, or -errno (then a heavy
 * sweep is due).  It ends by starting a heavy sweep (on the new model,
 * or a full one) or, when nothing changed, with SM_EV_QUICK_DONE. */
int quick_sweep_start(struct sm *sm);
/* Shutdown: as sweep_heavy_abort() (mark, then free on the second call). */
void quick_sweep_abort(struct sm *sm);

#endif /* IBSM_SM_QUICK_H */
