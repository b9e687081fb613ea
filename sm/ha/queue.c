/*
 * queue.c - the event queue (sm/event.h): a bounded ring in struct sm,
 * drained by an ev_prepare watcher into the state machine
 * (sm_fsm_dispatch(), sm/ha/state.c), its one consumer.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "sm/event.h"
#include "sm/ha/fsm.h"
#include "sm/sm.h"

/* Handle every queued event, oldest first (events they post included). */
void sm_evq_drain(struct sm *sm)
{
	struct sm_evq *q = &sm->evq;

	while (q->n) {
		struct sm_msg m = q->ring[q->head];

		q->head = (q->head + 1) % SM_EVQ_SIZE;
		q->n--;
		sm_fsm_dispatch(sm, &m);
	}
	if (sm->loop && ev_is_active(&q->drain))
		ev_prepare_stop(sm->loop, &q->drain);
}

static void on_drain(struct ev_loop *loop, ev_prepare *w, int revents)
{
	(void)loop;
	(void)revents;
	sm_evq_drain(w->data);
}

int sm_post_msg(struct sm *sm, const struct sm_msg *m)
{
	struct sm_evq *q = &sm->evq;

	if ((unsigned)m->ev >= SM_EV_N)
		return -EINVAL;
	if (q->n == SM_EVQ_SIZE)
		sm_evq_drain(sm);		/* a burst: handled in order, now */
	q->ring[(q->head + q->n) % SM_EVQ_SIZE] = *m;
	q->n++;
	/* Before the loop next waits; it also keeps a loop whose last
	 * watcher just stopped running until the event is handled. */
	if (sm->loop && !ev_is_active(&q->drain)) {
		ev_prepare_init(&q->drain, on_drain);
		q->drain.data = sm;
		ev_prepare_start(sm->loop, &q->drain);
	}
	return 0;
}

int sm_post(struct sm *sm, enum sm_event ev)
{
	struct sm_msg m;

	memset(&m, 0, sizeof(m));
	m.ev = ev;
	return sm_post_msg(sm, &m);
}

int sm_post_wait(struct sm *sm, struct sm_msg *m)
{
	if ((unsigned)m->ev >= SM_EV_N)
		return -EINVAL;
	sm_evq_drain(sm);
	m->rc = 0;
	sm_fsm_dispatch(sm, m);
	return m->rc;
}

void sm_evq_stop(struct sm *sm)
{
	if (sm->loop)
		ev_prepare_stop(sm->loop, &sm->evq.drain);
	sm->evq.n = 0;
	sm->evq.head = 0;
}
