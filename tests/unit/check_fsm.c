/*
 * check_fsm.c - the state machine's table (sm/ha/state.c), one test per
 * row: each (state, event) cell names the action the table below
 * expects, and dispatching the event in that state has that action's
 * effect.  The SM runs on a fake transport with no fabric behind it; a
 * heavy or light sweep "in progress" is a dummy pointer, so that a
 * heavy sweep asked for shows as change_pending and no sweep runs.
 * The sweeps themselves, the election and the trap pacing are tested
 * with a fabric in check_state.c.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <ev.h>

#include "mad/engine.h"
#include "sm/ha/fsm.h"
#include "sm/ha/sminfo.h"
#include "sm/ha/sync.h"
#include "sm/mcast/mft.h"
#include "sm/health/health.h"
#include "sm/sm.h"
#include "tests/unit/fake_transport.h"

static struct ev_loop *L;
static struct fake F;
static struct sm *S;
static char dummy;		/* what sm->sweep points to: "busy" */
static unsigned reloads;

static int fake_reload(struct sm *sm, struct cfg_msgs *report)
{
	(void)sm;
	(void)report;
	reloads++;
	return 0;
}

static void setup(void)
{
	struct mad_engine_opts o = { .max_wire_smps = 16, .max_wire_gmps = 16,
				     .timeout_ms = 200, .retries = 1 };

	L = ev_default_loop(0);
	ck_assert_int_eq(fake_init(&F, L, &o), 0);
	S = calloc(1, sizeof(*S));
	ck_assert_ptr_nonnull(S);
	S->loop = L;
	S->engine = F.engine;
	S->port_guid = 0x0002c90000000101ull;
	S->cfg = (struct sm_config){
		.log_file = "-", .log_level = LOG_LVL_INFO,
		.transaction_timeout = 200, .transaction_retries = 1,
		.sweep_interval = 10, .sm_key = 1, .sm_priority = 5,
		.sminfo_polling_timeout = 10000, .polling_retry_number = 4,
	};
	fabric_init(&S->fabric);
	S->reload = fake_reload;
	reloads = 0;
	sm_watchers_start(S);
}

static void teardown(void)
{
	sm_watchers_stop(S);
	S->sweep = NULL;
	S->light = NULL;
	S->elect_abort = true;
	mft_abort(S);
	standby_sync_free(S);
	sm_election_free(S);
	fake_fini(&F);
	sm_health_free(S);
	fabric_free(&S->fabric);
	free(S);
}

/* --------------------------------------------------------- the effects */

static const enum sm_state any_state[] = {
	SM_NOTACTIVE, SM_DISCOVERING, SM_STANDBY, SM_MASTER,
};

struct row {
	enum sm_state s;
	enum sm_event ev;
	const char *name;		/* the cell's action */
	void (*before)(void);		/* preconditions (may be NULL) */
	void (*check)(enum sm_state was, const struct sm_msg *m);
};

static void busy(void)
{
	S->sweep = (struct sweep *)(void *)&dummy;
}

static void chk_discovering(enum sm_state was, const struct sm_msg *m)
{
	(void)was;
	(void)m;
	ck_assert_int_eq(S->state, SM_DISCOVERING);
}

static void chk_master(enum sm_state was, const struct sm_msg *m)
{
	(void)was;
	(void)m;
	ck_assert_int_eq(S->state, SM_MASTER);
}

static void chk_subnet_up(enum sm_state was, const struct sm_msg *m)
{
	chk_master(was, m);
	ck_assert(S->subnet_up);
	ck_assert(ev_is_active(&S->light_timer));
}

static void chk_unchanged(enum sm_state was, const struct sm_msg *m)
{
	(void)m;
	ck_assert_int_eq(S->state, was);
	ck_assert(!S->ha.change_pending);
}

static void chk_sweep_ended(enum sm_state was, const struct sm_msg *m)
{
	chk_unchanged(was, m);
	ck_assert(S->ha.sweep_ended > 0.);
	ck_assert_uint_eq(S->failed_sweeps, 0);
	ck_assert(!S->subnet_up);
}

static void chk_retry(enum sm_state was, const struct sm_msg *m)
{
	chk_unchanged(was, m);
	ck_assert_uint_eq(S->failed_sweeps, 1);
	ck_assert(ev_is_active(&S->retry_timer));
}

/* A heavy sweep was asked for (the dummy one runs: it waits). */
static void chk_heavy(enum sm_state was, const struct sm_msg *m)
{
	(void)was;
	(void)m;
	ck_assert(S->ha.change_pending);
}

static void chk_heavy_topo(enum sm_state was, const struct sm_msg *m)
{
	chk_heavy(was, m);
	ck_assert(S->topo_changed);
}

static void chk_claim_cleared(enum sm_state was, const struct sm_msg *m)
{
	(void)m;
	ck_assert_uint_eq(S->master_claim, 0);
	ck_assert_int_eq(S->state, was == SM_MASTER ? SM_DISCOVERING : was);
}

static void pre_claim(void)
{
	S->master_claim = 0x0002c90000000301ull;
}

static void pre_deferred(void)
{
	S->ha.trap_deferred = true;
}

static void chk_deferred_go_on(enum sm_state was, const struct sm_msg *m)
{
	(void)was;
	(void)m;
	ck_assert(!S->ha.trap_deferred);
	ck_assert(ev_is_active(&S->trap_timer));
}

static void chk_deferred_dropped(enum sm_state was, const struct sm_msg *m)
{
	chk_unchanged(was, m);
	ck_assert(!S->ha.trap_deferred);
	ck_assert(!ev_is_active(&S->trap_timer));
}

static struct sm_msg row_msg;

/* The light sweep found ports naming the SM at LID 9. */
static void pre_foreign(void)
{
	row_msg.u.light.foreign_lid = 9;
}

static void chk_foreign(enum sm_state was, const struct sm_msg *m)
{
	(void)m;
	ck_assert_uint_eq(S->ha.foreign_lid, 0);
	/* master: asks that SM, sweeps after SM_FOREIGN_WAIT */
	ck_assert(S->topo_changed == (was == SM_MASTER));
	ck_assert(!!ev_is_active(&S->retry_timer) == (was == SM_MASTER));
}

static void chk_foreign_dropped(enum sm_state was, const struct sm_msg *m)
{
	chk_unchanged(was, m);
	ck_assert_uint_eq(S->ha.foreign_lid, 0);
	ck_assert(!S->topo_changed);
}

static void chk_trap(enum sm_state was, const struct sm_msg *m)
{
	(void)was;
	(void)m;
	ck_assert(S->topo_changed);
	ck_assert(ev_is_active(&S->trap_timer));
}

static void chk_trap_noted(enum sm_state was, const struct sm_msg *m)
{
	chk_unchanged(was, m);
	ck_assert(S->topo_changed);
	ck_assert(!ev_is_active(&S->trap_timer));
}

static void pre_port_down(void)
{
	busy();
	S->ha.port_down = true;
	ev_timer_set(&S->port_timer, 100., 0.);
	ev_timer_start(L, &S->port_timer);
}

static void chk_port_up(enum sm_state was, const struct sm_msg *m)
{
	chk_heavy(was, m);
	ck_assert(!S->ha.port_down);
	ck_assert(!ev_is_active(&S->port_timer));
}

static void chk_stopped(enum sm_state was, const struct sm_msg *m)
{
	(void)was;
	(void)m;
	ck_assert_int_eq(S->state, SM_NOTACTIVE);
	ck_assert(S->elect_abort);
}

static void chk_reloaded(enum sm_state was, const struct sm_msg *m)
{
	ck_assert_uint_eq(reloads, 1);
	ck_assert_int_eq(m->rc, 0);
	/* the heavy sweep follows in the states that sweep */
	ck_assert(S->ha.change_pending == (was == SM_DISCOVERING ||
					was == SM_MASTER));
}

static void chk_rerouted(enum sm_state was, const struct sm_msg *m)
{
	chk_heavy(was, m);
	/* during a heavy sweep: the next one forgets the LFT images */
	ck_assert(S->ha.reroute_pending);
	ck_assert_int_eq(m->rc, -EINPROGRESS);
}

static void chk_refused(enum sm_state was, const struct sm_msg *m)
{
	chk_unchanged(was, m);
	ck_assert_int_eq(m->rc, -EPERM);
}

static void chk_light_busy(enum sm_state was, const struct sm_msg *m)
{
	chk_unchanged(was, m);
	ck_assert_int_eq(m->rc, -EBUSY);
}

static void chk_light_timer(enum sm_state was, const struct sm_msg *m)
{
	chk_unchanged(was, m);
	ck_assert(ev_is_active(&S->light_timer));
}

static void chk_took_over(enum sm_state was, const struct sm_msg *m)
{
	(void)was;
	(void)m;
	ck_assert_int_eq(S->state, SM_DISCOVERING);
	ck_assert(S->takeover);
}

static void chk_issm(enum sm_state was, const struct sm_msg *m)
{
	(void)m;
	ck_assert_int_eq(S->state, was);
	/* a master reads that LID's SMInfo shortly (sm/ha/sminfo.c) */
	ck_assert_uint_eq(S->n_ism, was == SM_MASTER);
	ck_assert(!!ev_is_active(&S->ism_timer) == (was == SM_MASTER));
	if (was == SM_MASTER)
		ck_assert_uint_eq(S->ism_lids[0], 7);
}

static void chk_mft(enum sm_state was, const struct sm_msg *m)
{
	(void)m;
	ck_assert_int_eq(S->state, was);
	ck_assert_ptr_nonnull(S->mft);	/* an update is on its way */
}

static void chk_elect(enum sm_state was, const struct sm_msg *m)
{
	(void)m;
	(void)was;
	/* no other SM answered: this one sweeps to become master */
	ck_assert(S->ha.change_pending);
}

static void chk_standby_trap(enum sm_state was, const struct sm_msg *m)
{
	(void)m;
	ck_assert_int_eq(S->state, was);
	/* no master to watch: nothing read, nothing changed */
	ck_assert_uint_eq(F.n_sent, 0);
}

static void chk_copy_from(enum sm_state was, const struct sm_msg *m)
{
	(void)was;
	(void)m;
	ck_assert_int_eq(S->state, SM_STANDBY);
	ck_assert_uint_eq(S->master_lid, 7);
	ck_assert_ptr_nonnull(S->sync);		/* the copy runs */
}

static void on_late(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)revents;
	*(bool *)w->data = true;
}

/* In a running loop the event ends it (ev_break): a timer 2 s later
 * never fires. */
static void chk_loop_ends(enum sm_state was, const struct sm_msg *m)
{
	ev_timer t;
	bool fired = false;

	(void)m;
	ck_assert_int_eq(S->state, was);
	ev_timer_init(&t, on_late, 2., 0.);
	t.data = &fired;
	ev_timer_start(L, &t);
	ck_assert_int_eq(sm_post(S, SM_EV_MFT_DONE), 0);
	ev_run(L, 0);
	ck_assert(!fired);
	ev_timer_stop(L, &t);
}

static void pre_model(void);
static struct fabric quick_model;

static void chk_quick_model(enum sm_state was, const struct sm_msg *m)
{
	chk_heavy(was, m);
	fabric_free(&quick_model);
}

/* SM_EV_PERF_DONE runs the health glue's hook, and nothing else. */
static unsigned perf_hook_calls;

static void perf_hook(struct sm *sm)
{
	ck_assert_ptr_eq(sm, S);
	perf_hook_calls++;
}

static void pre_perf_hook(void)
{
	perf_hook_calls = 0;
	S->perf_done_hook = perf_hook;
}

static void chk_perf_hook(enum sm_state was, const struct sm_msg *m)
{
	(void)m;
	ck_assert_uint_eq(perf_hook_calls, 1);
	ck_assert_int_eq(S->state, was);
	S->perf_done_hook = NULL;
	/* without a hook the row does nothing */
	sm_fsm_dispatch(S, &(struct sm_msg){ .ev = SM_EV_PERF_DONE });
	ck_assert_uint_eq(perf_hook_calls, 1);
	chk_unchanged(was, m);
}

#define R(st, e, n, pre, chk)	{ st, e, n, pre, chk }
#define SW(e, n, pre, chk) \
	R(SM_DISCOVERING, e, n, pre, chk), R(SM_MASTER, e, n, pre, chk)
#define ID(e, n, pre, chk) \
	R(SM_NOTACTIVE, e, n, pre, chk), R(SM_STANDBY, e, n, pre, chk)
#define A4(e, n, pre, chk)	SW(e, n, pre, chk), ID(e, n, pre, chk)

/* The table as this test expects it: every cell that does something. */
static const struct row rows[] = {
	A4(SM_EV_START, "discover", busy, chk_discovering),
	SW(SM_EV_SWEEP_DONE, "subnet up", NULL, chk_subnet_up),
	ID(SM_EV_SWEEP_DONE, "sweep ended, nothing applied", NULL, chk_sweep_ended),
	SW(SM_EV_SWEEP_FAILED, "sweep again", NULL, chk_retry),
	ID(SM_EV_SWEEP_FAILED, "sweep ended, nothing applied", NULL, chk_sweep_ended),
	R(SM_DISCOVERING, SM_EV_ELECT_DONE, "election verdict", busy, chk_elect),
	R(SM_NOTACTIVE, SM_EV_ELECT_DONE, "election verdict", busy, chk_unchanged),
	R(SM_STANDBY, SM_EV_ELECT_DONE, "election verdict", busy, chk_unchanged),
	R(SM_MASTER, SM_EV_ELECT_DONE, "election verdict", busy, chk_unchanged),
	R(SM_STANDBY, SM_EV_MASTER_LOST, "take over", busy, chk_took_over),
	R(SM_DISCOVERING, SM_EV_HANDOVER, "master, heavy sweep", busy, chk_master),
	R(SM_STANDBY, SM_EV_HANDOVER, "master, heavy sweep", busy, chk_master),
	R(SM_MASTER, SM_EV_QUICK_DONE, "deferred traps go on", pre_deferred,
	  chk_deferred_go_on),
	R(SM_NOTACTIVE, SM_EV_QUICK_DONE, "deferred traps dropped", pre_deferred,
	  chk_deferred_dropped),
	R(SM_DISCOVERING, SM_EV_QUICK_DONE, "deferred traps dropped",
	  pre_deferred, chk_deferred_dropped),
	R(SM_STANDBY, SM_EV_QUICK_DONE, "deferred traps dropped", pre_deferred,
	  chk_deferred_dropped),
	R(SM_MASTER, SM_EV_QUICK_LOSSES, "heavy sweep on the quick model",
	  pre_model, chk_quick_model),
	R(SM_MASTER, SM_EV_QUICK_CHANGE, "heavy sweep", busy, chk_heavy_topo),
	SW(SM_EV_CHANGE, "heavy sweep", busy, chk_heavy),
	R(SM_MASTER, SM_EV_LIGHT_TIMER, "light sweep", busy, chk_light_timer),
	SW(SM_EV_LIGHT_DONE, "heavy sweep if changed", pre_foreign, chk_foreign),
	ID(SM_EV_LIGHT_DONE, "findings dropped", pre_foreign, chk_foreign_dropped),
	SW(SM_EV_TRAP, "trap hold-off, heavy sweep", NULL, chk_trap),
	ID(SM_EV_TRAP, "topology noted", NULL, chk_trap_noted),
	A4(SM_EV_PORT_UP, "heavy sweep if the port was down", pre_port_down,
	   chk_port_up),
	A4(SM_EV_STOP, "stop", NULL, chk_stopped),
	A4(SM_EV_RELOAD, "reload, heavy sweep", busy, chk_reloaded),
	SW(SM_EV_REROUTE, "forget LFTs, heavy sweep", busy, chk_rerouted),
	ID(SM_EV_REROUTE, "refused", busy, chk_refused),
	R(SM_MASTER, SM_EV_LIGHT_ASK, "light sweep", busy, chk_light_busy),
	R(SM_NOTACTIVE, SM_EV_LIGHT_ASK, "refused", NULL, chk_refused),
	R(SM_DISCOVERING, SM_EV_LIGHT_ASK, "refused", NULL, chk_refused),
	R(SM_STANDBY, SM_EV_LIGHT_ASK, "refused", NULL, chk_refused),
	A4(SM_EV_MASTER_CLAIMED, "discover again if master", pre_claim,
	   chk_claim_cleared),
	R(SM_STANDBY, SM_EV_TRAP_STANDBY, "check the master's link", NULL,
	  chk_standby_trap),
	A4(SM_EV_TRAP_ISSM, "read its SMInfo", NULL, chk_issm),
	A4(SM_EV_MCAST_CHANGED, "MFT update", NULL, chk_mft),
	A4(SM_EV_MFT_DONE, "exit (-o)", NULL, chk_loop_ends),
	R(SM_NOTACTIVE, SM_EV_COPY_FROM, "stand by, copy (debug)", NULL,
	  chk_copy_from),
	R(SM_MASTER, SM_EV_PERF_DONE, "counter checks", pre_perf_hook,
	  chk_perf_hook),
};
#define N_ROWS	(sizeof(rows) / sizeof(rows[0]))

static void pre_model(void)
{
	busy();
	fabric_init(&quick_model);
	row_msg.u.model.f = &quick_model;
}

/* One row: the cell names the expected action and has its effect. */
START_TEST(fsm_row)
{
	const struct row *r = &rows[_i];
	const struct sm_row *cell = sm_fsm_row(r->s, r->ev);

	ck_assert_msg(!strcmp(cell->name, r->name), "%s in %s: \"%s\","
		      " expected \"%s\"", sm_event_name(r->ev),
		      sm_state_name(r->s), cell->name, r->name);
	S->state = r->s;
	memset(&row_msg, 0, sizeof(row_msg));
	row_msg.ev = r->ev;
	if (r->ev == SM_EV_TRAP_ISSM || r->ev == SM_EV_TRAP_STANDBY ||
	    r->ev == SM_EV_COPY_FROM)
		row_msg.u.trap.lid = 7;
	if (r->before)
		r->before();
	sm_fsm_dispatch(S, &row_msg);
	r->check(r->s, &row_msg);
}
END_TEST

/* Every cell the rows above do not name does nothing. */
START_TEST(fsm_other_cells_ignored)
{
	unsigned named = 0;

	for (unsigned s = 0; s < 4; s++)
		for (unsigned ev = 0; ev < SM_EV_N; ev++) {
			bool listed = false;

			for (size_t i = 0; i < N_ROWS; i++)
				if (rows[i].s == any_state[s] &&
				    rows[i].ev == (enum sm_event)ev)
					listed = true;
			const struct sm_row *c = sm_fsm_row(any_state[s], ev);

			named += listed;
			if (!listed) {
				ck_assert_ptr_null(c->act);
				ck_assert_str_eq(c->name, "ignored");
			} else {
				ck_assert_ptr_nonnull(c->act);
			}
		}
	ck_assert_uint_eq(named, N_ROWS);	/* no row listed twice */
	/* and ignoring changes nothing */
	S->state = SM_STANDBY;
	busy();
	sm_event(S, SM_EV_CHANGE);
	chk_unchanged(SM_STANDBY, NULL);
}
END_TEST

/* The queue: events posted are handled in order when the loop turns,
 * not before; sm_post_wait() handles what is queued first. */
START_TEST(queue_order)
{
	S->state = SM_MASTER;
	busy();
	ck_assert_int_eq(sm_post(S, SM_EV_TRAP), 0);
	ck_assert_int_eq(sm_post(S, SM_EV_STOP), 0);
	ck_assert(!S->topo_changed);		/* not yet */
	ck_assert_int_eq(S->state, SM_MASTER);
	ev_run(L, EVRUN_NOWAIT);
	ck_assert(S->topo_changed);
	ck_assert_int_eq(S->state, SM_NOTACTIVE);
	ck_assert_uint_eq(S->evq.n, 0);
	/* more than the ring holds: nothing lost, the order kept */
	S->state = SM_MASTER;
	S->topo_changed = false;
	for (unsigned i = 0; i < 3 * SM_EVQ_SIZE; i++)
		ck_assert_int_eq(sm_post(S, SM_EV_RELOAD), 0);
	struct sm_msg m = { .ev = SM_EV_REROUTE };
	ck_assert_int_eq(sm_post_wait(S, &m), -EINPROGRESS);
	ck_assert_uint_eq(reloads, 3 * SM_EVQ_SIZE);
	ck_assert(S->ha.reroute_pending);
	ck_assert_uint_eq(S->evq.n, 0);
}
END_TEST

static Suite *fsm_suite(void)
{
	Suite *s = suite_create("fsm");
	TCase *tc = tcase_create("fsm");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, fsm_row, 0, (int)N_ROWS);
	tcase_add_test(tc, fsm_other_cells_ignored);
	tcase_add_test(tc, queue_order);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(fsm_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
