/*
 * mft.h - MulticastForwardingTables as the SM programs them (mft.c).
 *
 * sm->mft holds, per switch GUID and across sweeps, the MFT each switch
 * holds as far as its answers told us; the trees of the groups (from
 * routing/mcast.c) give the MFT each should hold, and only the blocks
 * that differ are sent.  Entry points:
 *
 *   mcast_changed() (sm.h)  a join or leave: an update a few ms later
 *   mft_sweep_done()        a heavy sweep published a new model
 *   mft_abort()             shutdown, called around mad_engine_free()
 *                           like sweep_heavy_abort()
 */
#ifndef IBSM_SM_MCAST_MFT_H
#define IBSM_SM_MCAST_MFT_H

#include <stdbool.h>

struct sm;

/*
 * Coalescing after mcast_changed(), seconds: an update starts once no
 * join or leave came for MFT_COALESCE, or MFT_COALESCE_MAX after the
 * first change it will carry, whichever is sooner.  A burst of joins then
 * costs one update (trees rebuilt once, each block sent once) per
 * MFT_COALESCE_MAX instead of one per MFT_COALESCE, and its last join is
 * still programmed MFT_COALESCE after it (plus the update's own time).
 */
#define MFT_COALESCE		0.005
#define MFT_COALESCE_MAX	0.05
/* While a heavy sweep runs, a pending update looks again this often. */
#define MFT_SWEEP_POLL		0.02
/*
 * Sets not acknowledged: every block is compared again (the unanswered
 * ones are sent again) after MFT_RETRY_DELAY seconds, up to MFT_RETRIES
 * updates in a row; after that, at the next heavy sweep.
 */
#define MFT_RETRY_DELAY		0.5
#define MFT_RETRIES		3

/*
 * Called by the heavy sweep once its model is sm->fabric: set the MLID
 * ceiling of the group table from the switches' MulticastFDBCap, rebuild
 * every tree over the new model and send the MFT blocks (and
 * MulticastFDBTop) that differ.
 */
void mft_sweep_done(struct sm *sm);

/*
 * -o: the subnet is up; true when MFT Sets are still out, and the loop
 * is then broken (ev_break) once they are answered instead.
 */
bool mft_hold_exit(struct sm *sm);

/* Shutdown: first call marks the state so cancelled Sets are ignored;
 * second call (after the engine is freed) frees it. */
void mft_abort(struct sm *sm);

struct mft_stats {
	unsigned updates;		/* updates finished */
	unsigned trees;			/* trees built, in all */
	unsigned sets;			/* MFT block Sets sent */
	unsigned top_sets;		/* SwitchInfo Sets for MulticastFDBTop */
	unsigned failed;		/* Sets not acknowledged */
	/* The last update: */
	unsigned last_groups, last_trees, last_sets;
	unsigned last_kept;		/* of last_trees: old trees kept on a
					 * new model (the change missed them) */
	double   last_build_s;		/* trees and composition, seconds */
};

/* NULL before the first update; `busy` is true while Sets are out. */
const struct mft_stats *mft_stats(const struct sm *sm, bool *busy);

#endif /* IBSM_SM_MCAST_MFT_H */
