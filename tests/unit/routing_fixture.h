/*
 * routing_fixture.h - hand-built and generated fabrics for the routing
 * engine tests (updn, dfsssp) and the checks every deadlock-free engine
 * must pass: every pair reachable without loops, no cycle in any layer's
 * channel dependency graph.
 *
 * Header-only; the test program is built with -DTOPO_DIR.
 */
#ifndef IBSM_TESTS_ROUTING_FIXTURE_H
#define IBSM_TESTS_ROUTING_FIXTURE_H

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/routing.h"
#include "routing/verify.h"
#include "model/fabric.h"
#include "sm/lid.h"
#include "sm/topo_file.h"

static inline void rf_port_up(struct fab_port *p)
{
	p->valid = true;
	memset(&p->pi, 0, sizeof(p->pi));
	p->pi.local_port = p->num;
	pi_set_port_state(&p->pi, PORT_STATE_ACTIVE);
	pi_set_phys_state(&p->pi, PHYS_STATE_LINKUP);
}

static inline int32_t rf_add(struct fabric *f, uint8_t type, unsigned nports)
{
	uint64_t base = type == NODE_TYPE_SWITCH ? 0x1000000 : 0x2000000;
	int32_t id = fabric_add_node(f, base + f->n_nodes * 0x100, type,
				     (uint8_t)nports);

	ck_assert_int_ge(id, 0);
	snprintf(f->nodes[id].desc, sizeof(f->nodes[id].desc), "%s-%d",
		 type == NODE_TYPE_SWITCH ? "sw" : "ca", id);
	if (type == NODE_TYPE_SWITCH)
		rf_port_up(&f->nodes[id].ports[0]);
	return id;
}

static inline int32_t rf_sw(struct fabric *f, unsigned nports)
{
	return rf_add(f, NODE_TYPE_SWITCH, nports);
}

static inline int32_t rf_ca(struct fabric *f)
{
	return rf_add(f, NODE_TYPE_CA, 1);
}

static inline void rf_link(struct fabric *f, int32_t a, unsigned pa, int32_t b,
			   unsigned pb)
{
	ck_assert_int_eq(fabric_link(f, a, (uint8_t)pa, b, (uint8_t)pb), 0);
	rf_port_up(&f->nodes[a].ports[pa]);
	rf_port_up(&f->nodes[b].ports[pb]);
}

/* n switches in a ring (port 1 to the previous, 2 to the next), one CA
 * on port 3 of each; LIDs assigned. */
static inline void rf_ring(struct fabric *f, unsigned n, int32_t *sw)
{
	fabric_init(f);
	for (unsigned i = 0; i < n; i++) {
		sw[i] = rf_sw(f, 3);
		rf_link(f, rf_ca(f), 1, sw[i], 3);
	}
	for (unsigned i = 0; i < n; i++)
		rf_link(f, sw[i], 2, sw[(i + 1) % n], 1);
	ck_assert_int_eq(lid_assign_sequential(f, 0), 0);
}

/* Two-level fat tree: leaf ports 1..hosts to CAs, then one uplink per
 * spine; LIDs assigned. */
static inline void rf_fat2(struct fabric *f, unsigned leaves, unsigned spines,
			   unsigned hosts)
{
	int32_t spine[64];

	fabric_init(f);
	for (unsigned s = 0; s < spines; s++)
		spine[s] = rf_sw(f, leaves);
	for (unsigned i = 0; i < leaves; i++) {
		int32_t leaf = rf_sw(f, hosts + spines);

		for (unsigned h = 0; h < hosts; h++)
			rf_link(f, rf_ca(f), 1, leaf, h + 1);
		for (unsigned s = 0; s < spines; s++)
			rf_link(f, leaf, hosts + 1 + s, spine[s], i + 1);
	}
	ck_assert_int_eq(lid_assign_sequential(f, 0), 0);
}

/*
 * A random connected graph of n switches of degree at most deg (a random
 * spanning tree, then random extra links, parallel ones included) with
 * `hosts` CAs per switch; LIDs assigned with `lmc`.
 */
static inline void rf_random(struct fabric *f, unsigned n, unsigned deg,
			     unsigned hosts, unsigned lmc, uint32_t seed)
{
	int32_t *sw = calloc(n, sizeof(*sw));
	unsigned *next = calloc(n, sizeof(*next));

	fabric_init(f);
	for (unsigned i = 0; i < n; i++) {
		sw[i] = rf_sw(f, deg + hosts);
		next[i] = 1;
		for (unsigned h = 0; h < hosts; h++)
			rf_link(f, rf_ca(f), 1, sw[i], deg + 1 + h);
	}
	for (unsigned i = 1; i < n; i++) {
		unsigned a;

		do {
			seed = seed * 1103515245u + 12345u;
			a = (seed >> 8) % i;
		} while (next[a] > deg);
		rf_link(f, sw[i], next[i]++, sw[a], next[a]++);
	}
	for (unsigned e = 0; e < n * deg; e++) {
		unsigned a, b;

		seed = seed * 1103515245u + 12345u;
		a = (seed >> 8) % n;
		seed = seed * 1103515245u + 12345u;
		b = (seed >> 8) % n;
		if (a == b || next[a] > deg || next[b] > deg)
			continue;
		rf_link(f, sw[a], next[a]++, sw[b], next[b]++);
	}
	ck_assert_int_eq(lid_assign_sequential(f, lmc), 0);
	free(sw);
	free(next);
}

/* An X x Y torus (X, Y >= 3): ports 1/2 to -x/+x, 3/4 to -y/+y, hosts on
 * 5...; LIDs assigned.  VLCap 8 VLs on every port, as ibsim's. */
static inline void rf_torus(struct fabric *f, unsigned X, unsigned Y,
			    unsigned hosts)
{
	int32_t *sw = calloc((size_t)X * Y, sizeof(*sw));

	fabric_init(f);
	for (unsigned i = 0; i < X * Y; i++) {
		sw[i] = rf_sw(f, 4 + hosts);
		for (unsigned h = 0; h < hosts; h++)
			rf_link(f, rf_ca(f), 1, sw[i], 5 + h);
	}
	for (unsigned y = 0; y < Y; y++)
		for (unsigned x = 0; x < X; x++) {
			rf_link(f, sw[y * X + x], 2, sw[y * X + (x + 1) % X], 1);
			rf_link(f, sw[y * X + x], 4, sw[((y + 1) % Y) * X + x], 3);
		}
	for (size_t i = 0; i < f->n_nodes; i++)
		for (unsigned p = 0; p <= f->nodes[i].num_ports; p++)
			SET_HI4(f->nodes[i].ports[p].pi.vl_cap_init_type, 4);
	ck_assert_int_eq(lid_assign_sequential(f, 0), 0);
	free(sw);
}

/*
 * The quality figure: every CA port sends to every CA LID; the
 * load of a directed inter-switch link is the number of such routes that
 * cross it.  Returns max load / (total load / links carrying any).
 * Walks every pair: for small test fabrics only.
 */
static inline double rf_load_ratio(const struct fabric *f,
				   const struct routing_result *r)
{
	size_t N = f->n_nodes;
	uint64_t *load = calloc(N * 256, sizeof(*load)), total = 0, max = 0,
		 links = 0;

	for (size_t i = 0; i < N; i++) {
		const struct fab_node *src = &f->nodes[i];

		if (src->type == NODE_TYPE_SWITCH)
			continue;
		for (unsigned sp = 1; sp <= src->num_ports; sp++) {
			const struct fab_port *s = &src->ports[sp];

			if (!s->lid || s->peer_node == FAB_NONE)
				continue;
			for (size_t j = 0; j < N; j++) {
				const struct fab_node *dn = &f->nodes[j];

				if (dn->type == NODE_TYPE_SWITCH || j == i)
					continue;
				for (unsigned dp = 1; dp <= dn->num_ports; dp++) {
					unsigned lid = dn->ports[dp].lid;
					int32_t x = s->peer_node;

					if (!lid)
						continue;
					for (unsigned hop = 0; hop < 64; hop++) {
						unsigned e = r->lft[x].port[lid];
						const struct fab_port *pt;

						ck_assert_uint_ne(e, LFT_NO_PATH);
						ck_assert_uint_ne(e, 0);
						pt = &f->nodes[x].ports[e];
						if (f->nodes[pt->peer_node].type !=
						    NODE_TYPE_SWITCH)
							break;
						load[(size_t)x * 256 + e]++;
						x = pt->peer_node;
					}
				}
			}
		}
	}
	for (size_t k = 0; k < N * 256; k++)
		if (load[k]) {
			total += load[k];
			links++;
			if (load[k] > max)
				max = load[k];
		}
	free(load);
	ck_assert_uint_gt(links, 0);
	return (double)max * (double)links / (double)total;
}

/* A bundled topology (tests/topologies), LIDs assigned. */
static inline void rf_load(struct fabric *f, const char *name, unsigned lmc)
{
	char path[512], err[256];

	fabric_init(f);
	snprintf(path, sizeof(path), "%s/%s", TOPO_DIR, name);
	ck_assert_msg(topo_load(f, path, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(lid_assign_sequential(f, lmc), 0);
}

/* Route with `engines`; the test fails when the chain fails. */
static inline void rf_route(const struct fabric *f, const char *engines,
			    const struct routing_opts *o,
			    struct routing_result *r)
{
	char err[512];
	int rc = routing_run_opts(engines, f, o, r, err, sizeof(err));

	ck_assert_msg(rc == 0, "%s: %d %s", engines, rc, err);
	ck_assert_uint_eq(r->n_nodes, f->n_nodes);
}

/* Every (CA port, LID) pair arrives; returns the pairs walked. */
static inline uint64_t rf_assert_reachable(const struct fabric *f,
					   const struct routing_result *r)
{
	struct routing_check chk;

	ck_assert_int_eq(routing_check(f, r, &chk), 0);
	ck_assert_msg(routing_check_failures(&chk) == 0,
		      "%s: %" PRIu64 " unreachable %" PRIu64 " loops %" PRIu64
		      " misrouted (LID %u)", r->engine, chk.unreachable,
		      chk.loops, chk.misrouted, chk.bad_lid);
	ck_assert_uint_gt(chk.pairs, 0);
	return chk.pairs;
}

/* Channel-dependency cycles over every layer. */
static inline uint64_t rf_cycles(const struct fabric *f,
				 const struct routing_result *r,
				 struct routing_cdg *c)
{
	struct routing_cdg tmp;

	if (!c)
		c = &tmp;
	ck_assert_int_eq(routing_check_cdg(f, r, c), 0);
	return routing_cdg_cycles(c);
}

/* Reachable and deadlock-free in every layer it uses. */
static inline void rf_assert_deadlock_free(const struct fabric *f,
					   const struct routing_result *r)
{
	struct routing_cdg c;
	uint64_t n;

	rf_assert_reachable(f, r);
	n = rf_cycles(f, r, &c);
	ck_assert_msg(n == 0, "%s: %" PRIu64 " CDG back edges over %u layers",
		      r->engine, n, c.layers);
	ck_assert_uint_ge(c.layers, 1);
	ck_assert_uint_le(c.layers, r->n_layers ? r->n_layers : 1);
}

/* The warnings a routing file parser gave (routing/order.h's
 * order_warn_fn), one string each: rf_collect is the callback. */
struct rf_warns {
	unsigned n;
	char msg[32][320];
};

static inline void rf_collect(void *ctx, const char *msg)
{
	struct rf_warns *w = ctx;

	if (w->n < 32)
		snprintf(w->msg[w->n], sizeof(w->msg[0]), "%s", msg);
	w->n++;
}

/* Some warning starts with `prefix` ("f:3:", or "") and holds `what`. */
static inline bool rf_warned(const struct rf_warns *w, const char *prefix,
			     const char *what)
{
	for (unsigned i = 0; i < w->n && i < 32; i++)
		if (!strncmp(w->msg[i], prefix, strlen(prefix)) &&
		    strstr(w->msg[i], what))
			return true;
	return false;
}

#endif /* IBSM_TESTS_ROUTING_FIXTURE_H */
