/*
 * sm.h - the subnet manager: its configuration, its state machine and the
 * objects every sm/ component shares.  One struct sm per daemon; all of it
 * lives on the loop thread.
 */
#ifndef IBSM_SM_SM_H
#define IBSM_SM_SM_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <ev.h>

#include "mad/engine.h"
#include "mad/umad_io.h"
#include "config/fileutil.h"
#include "config/limits.h"
#include "config/node_names.h"
#include "config/sm_config.h"
#include "sm/babble.h"
#include "routing/routing.h"
#include "model/fabric.h"
#include "sm/event.h"
#include "sm/ha/rogue.h"
#include "sm/lid.h"
#include "sm/mkey.h"
#include "sm/log.h"
#include "sm/metrics/hist.h"

struct sm;
struct cfg;
struct cfg_msgs;
struct ctl_server;

/* SMInfo:SMState (14.4.1); STANDBY is entered only by a later feature. */
enum sm_state {
	SM_NOTACTIVE = SM_STATE_NOTACTIVE,
	SM_DISCOVERING = SM_STATE_DISCOVERING,
	SM_STANDBY = SM_STATE_STANDBY,
	SM_MASTER = SM_STATE_MASTER,
};


/*
 * Another SM as its SMInfo last said (14.2.5.13).  The table of them is
 * bounded (SM_MAX_REMOTE); an SM not heard from for a while is dropped.
 */
#define SM_MAX_REMOTE	16
struct sm_remote {
	uint64_t  guid;			/* 0: free slot */
	uint16_t  lid;
	uint8_t   priority, state;
	uint32_t  act_count;
	ev_tstamp seen;
	uint8_t   hops;			/* DR path (discovery) */
	uint8_t   path[SMP_MAX_HOPS + 1];
};

/* The hold-off when the traps can be handled by a quick sweep (s). */
#define SM_TRAP_QUICK_HOLDOFF	0.01
/* SM port down: its PortInfo is read this often until the link is up. */
#define SM_PORT_POLL		1.0

struct trap_bucket {
	uint16_t  lid;			/* source LID; 0: free */
	double    tokens;
	ev_tstamp last;
};

struct sweep;
struct quick_sweep;
struct discovery;
struct light_sweep;
struct lft_images;
struct port_memos;
struct sl2vl_images;
struct sa_agent;
struct part_config;
struct mc_table;
struct mft_state;
struct standby_sync;
struct sm_health;
struct sm_metrics;
struct perfmgr;

struct sm_stats {
	unsigned heavy_sweeps;
	unsigned light_sweeps;
	unsigned traps;			/* trap MADs received */
	unsigned traps_rejected;	/* failed authentication or policy */
	unsigned traps_limited;		/* over their source's rate */
	unsigned trap_sweeps;		/* heavy sweeps started by traps */
	unsigned quick_sweeps;		/* quick sweeps (sm/quick.c) */
	unsigned foreign_sm_ports;	/* light sweeps: ports naming another
					 * master SM (set again) */
	/* From entering DISCOVERING (at start, or a standby taking over:
	 * not the time it stood by) to the first SUBNET UP. */
	double   first_up_seconds;
	ev_tstamp started;
	ev_tstamp discovering_since;	/* the last entry into DISCOVERING */
	/* the last heavy sweep that ended: when, how long, how it went */
	ev_tstamp last_heavy_end;
	double   last_heavy_seconds;
	bool     last_heavy_ok;
	/* sweep durations by kind, and -F/-P reloads by outcome (metrics) */
	struct sm_hist sweep_hist[SM_SWEEP_KINDS];
	unsigned reloads_ok, reloads_failed;
};

/*
 * Exit statuses.  SM_EXIT_CONFIG is every configuration error (a bad
 * option or value, an -F or -P file with errors or unreadable, what
 * --check-config finds): ibsm@.service does not restart on it
 * (RestartPreventExitStatus=2), since restarting cannot help.
 * SM_EXIT_FAIL is a failure a restart may cure (no port yet, ...).
 */
#define SM_EXIT_FAIL	1
#define SM_EXIT_CONFIG	2

/*
 * The state machine's own flags (sm/ha/state.c): written there only; the
 * sweeps read change_pending and standing_down, and the heavy sweep
 * consumes reroute_pending when it starts.
 */
struct sm_ha {
	bool     change_pending;	/* heavy sweep asked for during one */
	bool     reroute_pending;	/* reroute asked for during a heavy
					 * sweep: the next one forgets the
					 * LFT images (sweep_forget_lfts) */
	/* A better master is known (we stand by, are NOTACTIVE, or yielded
	 * as master and discover again): no sweep programs anything, a
	 * sweep in progress sends no more Sets. */
	bool     standing_down;
	/* The light sweep found ports naming the SM at this LID as their
	 * master (SM_EV_LIGHT_DONE); the state machine asks that SM first. */
	uint16_t foreign_lid;
	ev_tstamp last_trap_sweep;	/* when the hold-off last fired */
	double    trap_backoff;		/* s: storm spacing */
	bool      trap_deferred;	/* hold-off over during a sweep */
	bool      trap_storm;		/* its trap came back to back */
	ev_tstamp sweep_began, sweep_ended;	/* the last heavy sweep */
	bool     port_down;		/* our own link is down: waiting */
	bool     port_polling;		/* a PortInfo Get of it is in flight */
};

/* The all-to-all load of the tables programmed last (routing/report.h's
 * routing_report_load, as sm/route.c logs it). */
struct sm_route_load {
	bool     valid;
	uint64_t max;			/* routes on the busiest channel */
	double   mean;			/* the ideal: load / channels used */
	double   ratio;			/* max / mean */
	uint64_t channels, channels_used, routes;
};

struct sm {
	struct sm_config cfg;
	struct node_names names;	/* node_name_map_name, read at start */
	struct ev_loop *loop;
	struct umad_io *io;
	struct mad_engine *engine;
	uint64_t port_guid;		/* ours */

	enum sm_state state;
	uint32_t act_count;		/* SMInfo:ActCount */
	bool     subnet_up;		/* the last heavy sweep completed */
	bool     rereg_done;		/* client reregistration sent once */
	bool     incomplete;		/* last sweep accepted holes: re-sweep */
	unsigned failed_sweeps;		/* consecutive */
	/*
	 * Nodes excluded for not acknowledging their Sets (sm/sweep.c): no
	 * route crosses them and their links are not activated; each sweep
	 * names them and tries them again.  A bounded list: beyond it, such
	 * nodes just keep the sweep degraded.
	 */
#define SM_MAX_EXCLUDED	64
	uint64_t excluded[SM_MAX_EXCLUDED];
	unsigned n_excluded;

	struct fabric fabric;		/* model of the last completed sweep */
	struct routing_result routes;	/* its forwarding tables (for the SA) */
	unsigned route_runs;		/* routing computations (sm/route.c) */
	struct sm_route_load route_load;
	struct lid_cache *lids;
	/* M_Keys (sm/mkey.h): NULL until a heavy sweep finds m_key set or
	 * a guid2mkey file; then the engine's hook puts keys in SMPs */
	struct mkey_state *mkeys;
	struct mkey_hook mkey_hook;
	bool     mkey_dirty;		/* keys or links not written yet */
	struct lft_images *images;	/* what each switch holds, as we know */
	struct port_memos *memos;	/* PortInfo Sets each port settled on */
	struct sl2vl_images *sl2vl;	/* SL-to-VL tables, as we know (NULL until layers) */
	bool topo_changed;		/* a trap or a change since the last heavy
					 * sweep began: the next one is all
					 * directed route (sm/sweep.c) */
	struct sweep *sweep;		/* heavy sweep in progress */
	struct light_sweep *light;	/* light sweep in progress */
	/*
	 * Quick sweeps (sm/quick.c): the switches whose trap 128 came since
	 * the last sweep began, and whether any other trap asked for one.
	 */
	struct quick_sweep *quick;	/* quick sweep in progress */
#define SM_QUICK_MAX	16
	uint64_t quick_sw[SM_QUICK_MAX];
	unsigned n_quick_sw;
	bool     quick_full;
	struct sa_agent *sa;		/* Subnet Administration (sm/sa/sa.c) */
	struct part_config *parts;	/* partitions in force (sm/parts.c) */
	struct sm_qos *qos;		/* QoS policy in force (sm/qos_policy.c) */
	struct file_stamp parts_seen;	/* the -P file as last read */
	bool     parts_seen_ok;
	ev_timer parts_timer;		/* a look at the -P file every second */
	bool     parts_pending;		/* changed, not settled yet */
	unsigned parts_unknown;		/* GUID members named no port */
	unsigned mc_stale;		/* pre-created groups kept as joined */
	struct mc_table *mc;		/* multicast groups (sm/mcast/groups.c) */
	struct mft_state *mft;		/* MFTs as programmed (sm/mcast/mft.c) */

	ev_timer light_timer;
	ev_timer retry_timer;
	ev_timer trap_timer;		/* hold-off: a burst becomes one sweep */
	ev_timer trap_owed_timer;	/* a trap 128 dropped over its rate:
					 * its sweep once the rate allows */
	ev_tstamp trap_owed_at;		/* ... the last such trap came then */
	struct trap_bucket trap_buckets[SM_TRAP_SOURCES_MAX];
	struct babble_table babble;	/* repeated traps 129-131 (trap.c) */
	ev_timer port_timer;		/* polls our port while it is down */
	ev_timer log_timer;		/* writes "suppressed N" summaries */
	ev_signal sig_int, sig_term, sig_hup, sig_usr1;
	struct sm_stats stats;
	struct sm_evq evq;		/* events for the state machine */
	struct sm_ha ha;		/* the state machine's flags */
	int exit_code;			/* SM_EXIT_* or 0 */
	/* The configuration sm->cfg came from (config/conf.h), read again on
	 * SIGHUP and the control socket's reload by reload(),
	 * sm_config_reload() (sm/reload.c) as main() sets it, which the
	 * state machine calls on the event SM_EV_RELOAD before the
	 * partitions file (sm/ha/state.c); NULL in unit tests.  reload() adds its errors, warnings and
	 * changes to `report` when not NULL (the control socket's reload:
	 * sm/ctl/cmd_config.c). */
	struct cfg *conf;
	int      (*reload)(struct sm *sm, struct cfg_msgs *report);
	struct ctl_server *ctl;		/* control socket (sm/ctl/server.c) */

	/* Election and master/standby (sm/ha/election.c, sm/ha/state.c). */
	struct sm_remote remotes[SM_MAX_REMOTE];
	struct sm_rogue rogues[SM_MAX_ROGUE];	/* another SM_Key (rogue.h) */
	struct sm_bad_mkey bad_mkeys[SM_MAX_BAD_MKEY];	/* traps 256 */
	uint64_t master_guid;		/* the master we stand by for */
	ev_tstamp master_heard_at;	/* a better master's Get was checked */
	ev_tstamp told_worse_at;	/* trap 144 to a worse master (sminfo.c) */
	/* An SM that said it is a better master (its SMInfo Get) and that
	 * our model lacks: our next sweep discovers again first if it finds
	 * that SM's port (sm/sweep.c, sm_master_claimed()). */
	uint64_t master_claim;
	uint16_t master_lid;
	uint16_t port_lid;		/* our port's LID as it holds it */
	uint8_t  master_priority;
	unsigned poll_misses;		/* consecutive failed polls */
	bool     poll_inflight;
	bool     stopping;		/* SIGTERM: handing over, then exit */
	ev_tstamp stop_asked;		/* ... since then (a second: now) */
	bool     probing;		/* SIGTERM: looking for unheard SMs */
	unsigned probe_pending;		/* its PortInfo and SMInfo Gets */
	bool     elect_running;		/* the election's discovery runs */
	bool     elect_abort;		/* shutdown: its callback does nothing */
	bool     takeover;		/* DISCOVERING after the master was lost */
	bool     handing_over;		/* a HANDOVER Set is in flight */
	struct sminfo_guard *sminfo_guard;	/* SMInfo senders (sminfo_guard.h) */
	uint64_t handover_guid;		/* the last HANDOVER went to it ... */
	ev_tstamp handover_at;		/* ... then: its ACKNOWLEDGE may come */
	bool     adopt_lids;		/* was standby: keep the LIDs ports hold
					 * over our cache (sm/lid.c) */
	bool     lids_file_read;	/* guid2lid read into sm->lids */
	unsigned elect_waits;		/* waits for a better SM to take over */
	struct discovery *elect_disc;
	struct fabric elect_fabric;
	unsigned elect_pending;		/* SMInfo Gets of the election */
	/* Standby: where the master hangs (sm/ha/sminfo.c), from the election's
	 * model: the switch port facing the master's port, read directly
	 * when a poll fails or a trap concerns it. */
	struct {
		uint64_t master;	/* the master's port GUID; 0: none */
		uint64_t sw_guid;	/* its switch */
		uint16_t sw_lid;
		uint8_t  port;		/* the switch's port facing it */
		uint8_t  hops;
		uint8_t  path[SMP_MAX_HOPS + 1];
		bool     inflight;
		ev_tstamp last;
	} watch;
	ev_timer ism_timer;		/* master: trap 144 IsSM -> SMInfo Get */
#define SM_ISM_MAX	4
	uint16_t ism_lids[SM_ISM_MAX];	/* ... of these LIDs */
	unsigned n_ism;
	ev_timer poll_timer;		/* standby: next poll of the master */
	ev_timer elect_timer;		/* discovering: retry the election */
	ev_timer stop_timer;		/* SIGTERM: handover deadline */
	ev_timer sms_timer;		/* master: ask the other SMs again */
	ev_tstamp standby_since, master_since;
	ev_tstamp last_repair;		/* repair sweep after another master */
	char     last_transition[160];	/* cause of the last state change */
	struct standby_sync *sync;	/* the standby's copy (sm/ha/sync.c) */
	struct sm_health *health;	/* fabric health (sm/health/) */
	struct sm_metrics *metrics;	/* metrics endpoint (sm/metrics/) */
	struct perfmgr *perf;		/* performance manager (sm/perf/) */
	/* Run by SM_EV_PERF_DONE (as master) after each counter sweep: the
	 * health checks of the counters; NULL: nothing. */
	void (*perf_done_hook)(struct sm *sm);
};

/*
 * The contract with the standby's copy of the master's SA state
 * (sm/ha/sync.c, declared below).  sm_master_lid() is the
 * master's LID, 0 when this SM is master or knows none.
 */
uint16_t sm_master_lid(const struct sm *sm);

const char *sm_state_name(enum sm_state s);

/* sm/ha/state.c: register the SMInfo agent and the trap receiver. */
int sm_agents_start(struct sm *sm);
/* sm/mkey.c: M_Keys in use (m_key set, or keys in the cache: sm/mkey.h)
 * from now on; called by sm_agents_start() and before each heavy sweep. */
void sm_mkey_start(struct sm *sm);
/* sm/mkey.c: after a heavy sweep, the new model's links and the keys its
 * ports showed learnt, the files written when that is news. */
void sm_mkey_sweep_done(struct sm *sm);
/*
 * sm/ha/state.c: the loop's watchers: signals (INT/TERM stop, HUP asks for
 * a heavy sweep, USR1 reopens the log file) and the timers of the state
 * machine.  Stopped again by sm_watchers_stop().
 */
void sm_watchers_start(struct sm *sm);
void sm_watchers_stop(struct sm *sm);
/* sm/ha/state.c: after the engine is freed, what the election holds. */
void sm_election_free(struct sm *sm);

/* sm/sweep.c: heavy sweep: discover, LIDs, routes, program, activate. */
int  sweep_heavy_start(struct sm *sm);
/*
 * A heavy sweep on a model built without a discovery (a quick sweep's,
 * sm/quick.c): `f` is taken (left empty), `smps` and `t0` are the quick
 * sweep's SMPs and start, for the sweep's summary.  Runs from PLAN on,
 * all directed route.
 */
int  sweep_heavy_start_model(struct sm *sm, struct fabric *f, unsigned smps,
			     double t0);
void sweep_heavy_abort(struct sm *sm);
/*
 * Forget what every switch of the model holds in its LFT, so that the
 * next heavy sweep sends every block whole; only between heavy sweeps
 * (one in progress programs from the images).  Returns the number of
 * switches.
 */
unsigned sweep_forget_lfts(struct sm *sm);
/* sm/sweep.c: light sweep: SwitchInfo of every switch, PSC bits. */
int  sweep_light_start(struct sm *sm);
void sweep_light_abort(struct sm *sm);

/*
 * sm/parts.c: the partitions of -P.  sm_parts_load() reads the file (at
 * start: errors printed; later, SIGHUP: a bad file leaves the partitions
 * in force); 0 or -errno.  sm_parts_resolve() sets the desired P_Key
 * tables of a sweep's model, reading the file again first when it
 * changed on disk since it was last read (sm_parts_refresh()).  Without
 * -P all of them do nothing.
 */
int  sm_parts_load(struct sm *sm, bool startup);
/*
 * sm/reload.c: the -F file again (SIGHUP, the control socket's reload),
 * each error, warning and change logged and, with `report`, added to it
 * ("error: ", "warning: ", "changed: ", "refused: "); a file with errors
 * changes nothing.  0 or -errno.  main() sets sm->reload to it.
 */
int  sm_config_reload(struct sm *sm, struct cfg_msgs *report);
/* The same as a reload, each error and warning also added to `report`
 * (config/conf.h's cfg_msgs, "error: ..." lines; may be NULL).  A reload
 * that would drop every partition or every member the file defined (an
 * empty file, or one caught while being copied over) is refused unless
 * `force` (sm_parts_reload_force: ibsmctl partitions apply --force). */
int  sm_parts_reload(struct sm *sm, struct cfg_msgs *report);
int  sm_parts_reload_force(struct sm *sm, struct cfg_msgs *report,
			   bool force);
/* Read the file again if it changed on disk since it was last read (a
 * reload without force), unless it changed less than a second ago (then
 * sm_parts_watch's timer looks again).  1 when that applied a new
 * configuration, else 0. */
int  sm_parts_refresh(struct sm *sm);
/* Once the loop exists: while standing by, sm_parts_refresh() every
 * second, so that the last good partitions a standby holds are those on
 * disk when it takes over. */
void sm_parts_watch(struct sm *sm);
int  sm_parts_resolve(struct sm *sm, struct fabric *f);

/*
 * sm/qos_policy.c: the QoS policy file (qos_policy_file with qos TRUE).
 * sm_qos_load() reads it at start (errors printed: ibsm does not start);
 * sm_qos_reload() on SIGHUP / reload (a bad file: FILE:LINE:COLUMN
 * logged, the policy in force stays); sm_qos_bind() binds it to the
 * model just published (port names, partitions, SELF) and rebuilds the
 * partitions' SL table.  sm_qos_policy(): the policy in force and its
 * binding (*m), NULL with qos FALSE or no policy: which level a query
 * gets is then qos_match(p, *m, query, &rule) (qos/qos.h).
 * sm_part_sl(): the SL of each 15-bit P_Key (partitions.conf sl=), NULL
 * when no partition sets one.
 */
struct cfg_msgs;
struct qos_policy;
struct qos_members;
int  sm_qos_load(struct sm *sm, bool startup);
int  sm_qos_reload(struct sm *sm, struct cfg_msgs *report);
void sm_qos_bind(struct sm *sm);
const struct qos_policy *sm_qos_policy(const struct sm *sm,
				       const struct qos_members **m);
const uint8_t *sm_part_sl(const struct sm *sm);
void sm_qos_free(struct sm *sm);
/* For `ibsmctl qos show`: the policy file (the one in force, else the
 * configured one), when the policy in force was read (0: none), and the
 * error of the last load when it failed (NULL: it was good). */
struct sm_qos_status {
	const char *file;
	time_t loaded;
	const char *error;
	time_t error_at;
};
void sm_qos_status(const struct sm *sm, struct sm_qos_status *st);
void sm_parts_free(struct sm *sm);

/*
 * sm/mcast/mft.c: the members of a multicast group changed (a join or a
 * leave the SA accepted, a group created or deleted): the group's tree
 * and the MFT blocks it changes are sent soon, coalescing a burst of
 * joins into one update, or by the heavy sweep in progress.
 */
void mcast_changed(struct sm *sm);

/*
 * sm/ha/sync.c: the standby's copy of the master's SA state.  start
 * on entering STANDBY (copies from sm->master_lid every
 * STANDBY_SYNC_INTERVAL seconds), stop on leaving it, adopt when becoming
 * MASTER after a takeover, before the SA answers: installs the last copy
 * (LIDs into the guid2lid cache, groups, services, subscriptions);
 * adopt returns true when the copy is complete (every record installed,
 * taken at most STANDBY_SYNC_FRESH seconds before): no ClientReregister
 * is needed then.
 */
void standby_sync_start(struct sm *sm);
void standby_sync_stop(struct sm *sm);
bool standby_sync_adopt(struct sm *sm);

/* Our own port's LID as assigned, 0 before the first sweep. */
uint16_t sm_local_lid(const struct sm *sm);

/* The trap limits in force (the config's, or the defaults above). */
static inline unsigned sm_trap_sources(const struct sm *sm)
{
	unsigned n = SM_LIMIT(sm->cfg.trap_sources, SM_TRAP_SOURCES);

	return n < SM_TRAP_SOURCES_MAX ? n : SM_TRAP_SOURCES_MAX;
}
static inline double sm_trap_burst(const struct sm *sm)
{
	return SM_LIMIT(sm->cfg.trap_burst, SM_TRAP_BURST);
}
static inline double sm_trap_rate(const struct sm *sm)
{
	return SM_LIMIT(sm->cfg.trap_rate, SM_TRAP_RATE);
}
static inline double sm_trap_holdoff(const struct sm *sm)
{
	return sm->cfg.trap_holdoff_ms ? sm->cfg.trap_holdoff_ms / 1e3
				       : SM_TRAP_HOLDOFF;
}
static inline double sm_trap_sweep_interval(const struct sm *sm)
{
	return SM_LIMIT(sm->cfg.trap_sweep_interval, SM_TRAP_SWEEP_INTERVAL);
}

#endif /* IBSM_SM_SM_H */
