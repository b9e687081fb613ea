/*
 * topo_fixture.h - a subnet model for SA unit tests: a bundled topology
 * (tests/topologies, TOPO_DIR) loaded into a fabric, LIDs from
 * lid_assign() with a given LMC, LFTs from minhop, and the SA view of it.
 *
 * Header-only; the test program is built with -DTOPO_DIR.
 */
#ifndef IBSM_TESTS_TOPO_FIXTURE_H
#define IBSM_TESTS_TOPO_FIXTURE_H

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "routing/routing.h"
#include "model/fabric.h"
#include "sm/lid.h"
#include "sm/sa/sa.h"
#include "sm/topo_file.h"

#define SUBNET_PREFIX	0xfe80000000000000ull

struct fx {
	struct fabric f;
	struct routing_result r;
	struct sa_view v;
};

static inline void fx_load(struct fx *x, const char *name, unsigned lmc)
{
	char path[512], err[256];
	struct lid_policy pol = { .lmc = (uint8_t)lmc };

	memset(x, 0, sizeof(*x));
	fabric_init(&x->f);
	snprintf(path, sizeof(path), "%s/%s", TOPO_DIR, name);
	ck_assert_msg(topo_load(&x->f, path, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(lid_assign(&x->f, NULL, &pol, NULL), 0);
	ck_assert_msg(routing_run("minhop", &x->f, &x->r, err, sizeof(err)) == 0,
		      "minhop: %s", err);
	x->v.f = &x->f;
	x->v.routes = &x->r;
	x->v.subnet_prefix = SUBNET_PREFIX;
	x->v.subnet_timeout = 18;
}

static inline void fx_free(struct fx *x)
{
	routing_result_free(&x->r);
	fabric_free(&x->f);
}

/* The node whose NodeDescription is `desc` (the test fails without). */
static inline int32_t by_desc(const struct fabric *f, const char *desc)
{
	for (size_t i = 0; i < f->n_nodes; i++)
		if (!strcmp(f->nodes[i].desc, desc))
			return (int32_t)i;
	ck_abort_msg("no node '%s'", desc);
	return -1;
}

#endif /* IBSM_TESTS_TOPO_FIXTURE_H */
