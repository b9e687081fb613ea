/*
 * fsm.h - the state machine's table (sm/ha/state.c), for the queue
 * (sm/ha/queue.c) that feeds it and the unit tests that check it row by
 * row.  Internal to sm/ha/: everyone else posts (sm/event.h).
 */
#ifndef IBSM_SM_HA_FSM_H
#define IBSM_SM_HA_FSM_H

#include "sm/event.h"

struct sm;
enum sm_state;

/* One cell of the table: what an event does in a state (NULL: nothing). */
typedef void sm_action(struct sm *sm, struct sm_msg *m);
struct sm_row {
	sm_action  *act;
	const char *name;	/* "heavy sweep", ...: the debug log's */
};

/* The cell of (state, ev); the row of "ignored" for an empty cell. */
const struct sm_row *sm_fsm_row(enum sm_state s, enum sm_event ev);
/* Handle one event now: its cell's action, logged at debug level as
 * "event: NAME in STATE -> ACTION". */
void sm_fsm_dispatch(struct sm *sm, struct sm_msg *m);
/* An event without payload, handled now (after those queued). */
void sm_event(struct sm *sm, enum sm_event ev);
/* sm/ha/queue.c: handle what is queued, oldest first. */
void sm_evq_drain(struct sm *sm);

#endif /* IBSM_SM_HA_FSM_H */
