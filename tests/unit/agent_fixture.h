/*
 * agent_fixture.h - a struct sm as the daemon builds it, for tests of the
 * SA agent (sm/sa/sa.c): the fake transport of fake_transport.h under its
 * engine, the model of a bundled topology (tests/topologies, TOPO_DIR)
 * with LIDs from lid_assign() and minhop routes, the SM master (or not
 * yet).  The test sets what it wants in sm.cfg, then starts the SA.
 *
 * Header-only; the test program is built with -DTOPO_DIR.
 */
#ifndef IBSM_TESTS_AGENT_FIXTURE_H
#define IBSM_TESTS_AGENT_FIXTURE_H

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "routing/routing.h"
#include "model/fabric.h"
#include "sm/lid.h"
#include "sm/mcast/mft.h"
#include "sm/sa/sa.h"
#include "sm/sm.h"
#include "sm/topo_file.h"
#include "tests/unit/fake_transport.h"

struct agent_fx {
	struct sm sm;
	struct fake fk;
	uint16_t ca_lid[8];		/* LIDs of the first CA ports */
	unsigned n_ca;
	uint64_t tid;
};

/* Everything but the SA itself (agent_fx_start()). */
static inline void agent_fx_init(struct agent_fx *x, const char *topo, bool up,
				 unsigned timeout_ms, unsigned retries)
{
	char path[512], err[256];
	struct lid_policy pol = { 0 };
	struct mad_engine_opts eo = { .max_wire_smps = 4, .max_wire_gmps = 64,
				      .timeout_ms = timeout_ms, .retries = retries };

	memset(x, 0, sizeof(*x));
	x->sm.loop = ev_loop_new(EVFLAG_AUTO);
	ck_assert_ptr_nonnull(x->sm.loop);
	ck_assert_int_eq(fake_init(&x->fk, x->sm.loop, &eo), 0);
	x->sm.engine = x->fk.engine;
	x->sm.cfg.transaction_timeout = timeout_ms;
	x->sm.cfg.transaction_retries = retries;
	x->sm.cfg.subnet_prefix = 0xfe80000000000000ull;
	x->sm.cfg.subnet_timeout = 18;
	x->sm.cfg.sm_key = 1;		/* opensm.conf sm_key default */
	x->sm.cfg.sa_key = 1;		/* and sa_key */
	fabric_init(&x->sm.fabric);
	snprintf(path, sizeof(path), "%s/%s", TOPO_DIR, topo);
	ck_assert_msg(topo_load(&x->sm.fabric, path, err, sizeof(err)) == 0,
		      "%s: %s", path, err);
	ck_assert_int_eq(lid_assign(&x->sm.fabric, NULL, &pol, NULL), 0);
	ck_assert_msg(routing_run("minhop", &x->sm.fabric, &x->sm.routes, err,
				  sizeof(err)) == 0, "minhop: %s", err);
	x->sm.port_guid = x->sm.fabric.local_port_guid;
	x->sm.state = up ? SM_MASTER : SM_DISCOVERING;
	x->sm.subnet_up = up;
	for (size_t i = 0; i < x->sm.fabric.n_nodes && x->n_ca < 8; i++) {
		const struct fab_node *n = &x->sm.fabric.nodes[i];

		if (n->type == NODE_TYPE_CA && n->ports[1].lid)
			x->ca_lid[x->n_ca++] = n->ports[1].lid;
	}
	ck_assert_uint_ge(x->n_ca, 4);
}

static inline void agent_fx_start(struct agent_fx *x)
{
	ck_assert_int_eq(sa_start(&x->sm), 0);
}

static inline void agent_fx_free(struct agent_fx *x)
{
	sa_stop(&x->sm);
	mft_abort(&x->sm);	/* an MFT update a join started: stop it */
	fake_fini(&x->fk);
	mft_abort(&x->sm);	/* ... and free it, the engine gone */
	routing_result_free(&x->sm.routes);
	fabric_free(&x->sm.fabric);
	ev_loop_destroy(x->sm.loop);
}

static inline void agent_fx_on_stop(struct ev_loop *loop, ev_timer *w,
				    int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ALL);
}

/* Let the loop run for `s` seconds (slices, timeouts, retries). */
static inline void agent_fx_run(struct agent_fx *x, double s)
{
	ev_timer t;

	ev_timer_init(&t, agent_fx_on_stop, s, 0.);
	ev_timer_start(x->sm.loop, &t);
	ev_run(x->sm.loop, 0);
	ev_timer_stop(x->sm.loop, &t);
}

#endif /* IBSM_TESTS_AGENT_FIXTURE_H */
