/*
 * incr.h - incremental re-routing: after links or switches went away,
 * change only the routes that crossed them.
 *
 * An engine routes the whole model (ftree on 11,664 hosts takes a few
 * tenths of a second, on 1,152 hosts 2 ms); what changes on the switches
 * is what matters, because every changed LFT block is a Set and a moment
 * in which traffic of that block's LIDs may take a new path.  So after a
 * removal the daemon keeps, for every destination LID whose forwarding
 * tree did not cross what was lost, the table entries the switches hold
 * already, and takes the new engine's entries only for the destinations
 * whose trees did (every switch's entry for one LID from one computation,
 * so each destination's tree stays whole and loop-free).  The merged
 * tables are verified like any others (reachability, loops, and per-layer
 * channel dependencies when the routes claim deadlock freedom); if they
 * fail, the daemon programs the full new tables.
 *
 * Pure functions on the fabric model; no I/O.
 */
#ifndef IBSM_ROUTING_INCR_H
#define IBSM_ROUTING_INCR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "routing/routing.h"

struct incr_stats {
	unsigned dests;		/* destination LIDs on the model */
	unsigned rerouted;	/* of them, trees that crossed a loss */
	unsigned gone;		/* LIDs routed before, not on the model now */
	uint64_t entries;	/* LFT entries the merge changed */
	uint64_t blocks_incr;	/* LFT blocks differing from `prev`: merged */
	uint64_t blocks_full;	/* ... and with the full new tables */
};

/*
 * `prev` and `full` are tables for the model `f` (indexed by its node
 * ids; prev: what the switches hold, re-indexed by switch GUID; full: the
 * engine's new tables).  Fill `out` (zeroed on entry) with prev's entries
 * for every LID whose tree in prev only uses ports linked on f, and
 * full's entries (and layers) for the others (LIDs some switch forwards
 * out of a port that is no longer linked, LIDs no longer on f, LIDs only
 * full reaches): at every switch, or with `per_switch` only at the
 * switches whose path in prev to that LID is broken.  Per switch changes
 * the fewest entries (the switches before a lost up-link keep theirs),
 * but joins old and new path pieces, which up/down or layered routes may
 * not allow: the caller verifies, and falls back to per LID, then to
 * full.  Both must have tables for the same switches, and with layers in
 * one, both.  Counts go to st.  Returns 0, -EINVAL when prev and full do
 * not fit together, or -ENOMEM.
 */
int routing_merge_incremental(const struct fabric *f,
			      const struct routing_result *prev,
			      const struct routing_result *full,
			      bool per_switch, struct routing_result *out,
			      struct incr_stats *st);

/* LFT blocks (64 LIDs) in which the tables of a and b differ, over the
 * switches both have tables for (a block past one's top counts when the
 * other has an entry there). */
uint64_t routing_blocks_differing(const struct routing_result *a,
				  const struct routing_result *b);

#endif /* IBSM_ROUTING_INCR_H */
