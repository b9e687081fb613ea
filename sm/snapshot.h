/*
 * snapshot.h - the published, read-only picture of the subnet: the model
 * of the last completed heavy sweep, its routes, the SL-to-VL tables as
 * programmed, its generation and the SM's own LID in it.  Only a heavy
 * sweep, which the state machine alone starts (sm/ha/), replaces it;
 * readers (the SA, the control socket, the trap receiver) take it as it
 * is and post an event when they want something changed (sm/event.h).
 * The per-generation lookup index of the model is model/index.h's
 * midx_get(snapshot.model).
 */
#ifndef IBSM_SM_SNAPSHOT_H
#define IBSM_SM_SNAPSHOT_H

#include <stdint.h>

struct sm;
struct fabric;
struct routing_result;
struct sl2vl_images;

struct sm_snapshot {
	const struct fabric *model;
	const struct routing_result *routes;	/* may have n_nodes == 0 */
	const struct sl2vl_images *sl2vl;	/* NULL: none read */
	uint64_t gen;				/* model->gen */
	uint16_t own_lid;			/* 0 before the first sweep */
};

/* sm/sweep.c: the snapshot in force (valid until the next heavy sweep
 * publishes its model, on the loop thread). */
void sm_snapshot_of(const struct sm *sm, struct sm_snapshot *s);

#endif /* IBSM_SM_SNAPSHOT_H */
