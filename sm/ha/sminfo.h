/*
 * sminfo.h - the contract between the state machine (sm/ha/state.c), the
 * SM-to-SM protocol (sm/ha/sminfo.c) and the trap receiver (sm/trap.c).
 * Internal to the daemon: sm/sm.h has what the rest of ibsm uses.
 */
#ifndef IBSM_SM_SMINFO_H
#define IBSM_SM_SMINFO_H

#include <stdbool.h>

#include <ev.h>

struct sm;
struct fabric;
enum sm_state;

/* sm/ha/state.c: every change of state, logged with its cause (ERR 11xx). */
void sm_transition(struct sm *sm, enum sm_state s, unsigned code,
		   const char *why);
/* sm/ha/state.c: a heavy sweep now, or after the sweep that runs. */
void sm_heavy_sweep(struct sm *sm);
/* sm/ha/state.c: the election found no better SM: sweep to become master
 * (the one way out of standing down, besides a lost master or HANDOVER). */
void sm_sweep_to_master(struct sm *sm);
/* sm/ha/state.c: our sweep found the port of sm->master_claim: discover
 * again (the election reads its SMInfo) before programming anything. */
void sm_master_claimed(struct sm *sm);
/* The heavy sweep on a quick sweep's model (sweep_heavy_start_model());
 * a full one when it cannot start. */
void sm_heavy_sweep_model(struct sm *sm, struct fabric *f, unsigned smps,
			  double t0);

/* sm/ha/sminfo.c, called by the state machine. */
void sminfo_elect_start(struct sm *sm);		/* DISCOVERING: who is there */
void sminfo_elect_decide(struct sm *sm);	/* ... and the verdict */
void sminfo_master_lost(struct sm *sm, const char *why);
/* Standby: read the master's switch port; down means it is lost. */
void sminfo_master_check(struct sm *sm, bool trap);
void sminfo_standby_trap(struct sm *sm, uint16_t src, unsigned num);
void sminfo_query(struct sm *sm);		/* MASTER, after a sweep */
void sminfo_query_lid(struct sm *sm, uint16_t lid);	/* trap 144 IsSM */
void sminfo_standby_begin(struct sm *sm);	/* poll the master, copy */
void sminfo_standby_end(struct sm *sm);
void sminfo_stop_gracefully(struct sm *sm);	/* SIGTERM: handover first */
int sminfo_agent_start(struct sm *sm);		/* SMInfo Gets and Sets */
/* sm/ha/sminfo.c, for the SMInfo agent (sm/ha/sminfo_agent.c). */
struct smp_sm_info;
struct sm_remote;
void sminfo_fill(const struct sm *sm, struct smp_sm_info *si, bool with_key);
void sminfo_remote_note(struct sm *sm, const struct smp_sm_info *si,
			uint16_t lid, struct sm_remote **out);
void sminfo_master_consider(struct sm *sm, struct sm_remote *r, bool fresh);
void sminfo_enter_standby(struct sm *sm, const struct sm_remote *m,
			  unsigned code, const char *cause);
/* A keyed SMInfo Get from an SM that says it is master, while we are
 * master too: read that SM's SMInfo when it claims to be better. */
void sminfo_master_heard(struct sm *sm, const struct smp_sm_info *rq);
int sminfo_get_lid(struct sm *sm, uint16_t lid);	/* SMInfo Get, LID-routed */
void sminfo_send_control(struct sm *sm, uint16_t lid, uint32_t mod);
/* Its timers (the table of sm/ha/state.c). */
void sminfo_poll_timer(struct ev_loop *loop, ev_timer *w, int revents);
void sminfo_elect_timer(struct ev_loop *loop, ev_timer *w, int revents);
void sminfo_stop_timer(struct ev_loop *loop, ev_timer *w, int revents);
void sminfo_sms_timer(struct ev_loop *loop, ev_timer *w, int revents);
void sminfo_ism_timer(struct ev_loop *loop, ev_timer *w, int revents);

/* sm/ha/state.c: the pacing of trap-driven heavy sweeps (times in s). */
struct sm_trap_pace {
	double holdoff, interval;	/* --trap-holdoff-ms, -sweep-interval */
	ev_tstamp last;			/* the last trap sweep began; 0: none */
	double backoff;			/* spacing after it */
	ev_tstamp sweep_began, sweep_ended;	/* the last heavy sweep */
};
/* Seconds from `now` until a trap taken now may start its sweep. */
double sm_trap_wait(const struct sm_trap_pace *p, ev_tstamp now);
/* Did a trap taken `now` come back to back with the last heavy sweep? */
bool sm_trap_storm(const struct sm_trap_pace *p, ev_tstamp now, bool sweeping);
/* The backoff after a trap sweep that starts now, its trap a storm's
 * or not. */
double sm_trap_backoff(const struct sm_trap_pace *p, bool storm);

/* sm/trap.c: the trap receiver. */
int trap_agent_start(struct sm *sm);
/* sm/trap.c: trap 144 (IsSM, SM priority changed) to the master at
 * `lid`: tells a worse master that a better SM is there; 0 or -errno. */
int trap_send_sm_change(struct sm *sm, uint16_t lid);

#endif /* IBSM_SM_SMINFO_H */
