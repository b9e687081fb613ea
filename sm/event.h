/*
 * event.h - news going up: the events the daemon's parts post to the
 * state machine (sm/ha/), and the bounded queue that carries them.
 *
 * Front ends (signals, the control socket, traps, main()) and workers
 * (heavy, light and quick sweeps, the SA's multicast joins) never start
 * a sweep nor change the SM's state themselves: they post an event, and
 * the state machine, the queue's one consumer, decides what it causes
 * (sm/ha/state.c: one table, state x event -> action).
 *
 * sm_post() queues the event; the loop drains the queue before it next
 * waits (an ev_prepare watcher, armed only while the queue holds
 * something), so an event costs no allocation and is handled within the
 * same loop iteration.  sm_post_wait() is for a poster that needs the
 * outcome now (the control socket's answer, a sweep that must stop
 * programming once a better master is known, a payload on the poster's
 * stack): the queue is drained in order, then its event handled, before
 * it returns.
 */
#ifndef IBSM_SM_EVENT_H
#define IBSM_SM_EVENT_H

#include <stdbool.h>
#include <stdint.h>
#include <ev.h>

struct sm;
struct fabric;
struct cfg_msgs;

enum sm_event {
	SM_EV_START,		/* port bound: begin discovering */
	SM_EV_SWEEP_DONE,	/* a heavy sweep brought the subnet up */
	SM_EV_SWEEP_FAILED,	/* a heavy sweep could not finish */
	SM_EV_CHANGE,		/* a heavy sweep is asked for (control
				 * socket, retry after a failure) */
	SM_EV_LIGHT_TIMER,	/* sweep_interval elapsed */
	SM_EV_LIGHT_DONE,	/* a light sweep finished (u.light: what it
				 * saw) */
	SM_EV_TRAP,		/* an accepted trap asks for a heavy sweep */
	SM_EV_PORT_UP,		/* the SM's own port, down, has a link again */
	SM_EV_STOP,		/* signal: shut down */
	SM_EV_ELECT_DONE,	/* the election's discovery found the SMs */
	SM_EV_MASTER_LOST,	/* standby: the master stopped answering */
	SM_EV_HANDOVER,		/* SubnSet(SMInfo, HANDOVER) accepted */
	SM_EV_YIELD,		/* master: a better SM is master or takes over */
	SM_EV_QUICK_DONE,	/* a quick sweep found nothing changed */
	SM_EV_QUICK_LOSSES,	/* a quick sweep read link losses: u.model */
	SM_EV_QUICK_CHANGE,	/* a quick sweep needs a full heavy sweep */
	SM_EV_RELOAD,		/* SIGHUP, control socket: -F and -P again,
				 * then a heavy sweep (u.reload) */
	SM_EV_REROUTE,		/* control socket: LFTs sent whole (rc: the
				 * switches forgotten, -EINPROGRESS: after
				 * the heavy sweep in progress) */
	SM_EV_LIGHT_ASK,	/* control socket: a light sweep now (rc) */
	SM_EV_MASTER_CLAIMED,	/* the sweep found the port of an SM that
				 * said it is a better master */
	SM_EV_TRAP_STANDBY,	/* standby: a trap (u.trap), may concern
				 * the master's link */
	SM_EV_TRAP_ISSM,	/* trap 144 IsSM from u.trap.lid */
	SM_EV_MCAST_CHANGED,	/* the SA changed a group's members */
	SM_EV_MFT_DONE,		/* -o: the MFT Sets the exit waited for are
				 * answered */
	SM_EV_COPY_FROM,	/* debug (IBSM_DEBUG_COPY_FROM): stand by
				 * and copy the SA state of the master at
				 * u.trap.lid, no sweep */
	SM_EV_PERF_DONE,	/* a counter sweep ended (sm/perf/) */
	SM_EV_N
};

/* One event and what comes with it. */
struct sm_msg {
	enum sm_event ev;
	int rc;				/* sm_post_wait(): the outcome */
	union {
		struct {
			struct cfg_msgs *report;	/* may be NULL */
			bool force;
		} reload;
		struct {
			struct fabric *f;	/* taken (left empty) */
			unsigned smps;
			double t0;
		} model;
		struct {
			uint16_t lid;
			unsigned num;
		} trap;
		struct {
			bool changed;		/* a heavy sweep is due */
			uint16_t foreign_lid;	/* ports name that SM */
		} light;
	} u;
};

/*
 * The queue (in struct sm), a ring of SM_EVQ_SIZE events.  Nothing is
 * dropped: a post that finds it full (a burst of traps within one loop
 * iteration) first handles what it holds, in order.
 */
#define SM_EVQ_SIZE	64
struct sm_evq {
	struct sm_msg ring[SM_EVQ_SIZE];
	unsigned head, n;
	bool draining;
	ev_prepare drain;
};

/* Queue `ev` (no payload); 0, or -ENOSPC when the queue is full. */
int  sm_post(struct sm *sm, enum sm_event ev);
/* Queue `m`, a copy of it is handled later; 0 or -ENOSPC. */
int  sm_post_msg(struct sm *sm, const struct sm_msg *m);
/* Handle what is queued, then `m`, now; returns m->rc. */
int  sm_post_wait(struct sm *sm, struct sm_msg *m);
const char *sm_event_name(enum sm_event ev);

/* sm/ha/queue.c: at exit, the queue's watcher stops, its events go. */
void sm_evq_stop(struct sm *sm);

#endif /* IBSM_SM_EVENT_H */
