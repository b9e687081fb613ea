/*
 * check_mcast_tree.c - multicast trees (routing/mcast.c) on model
 * fabrics and the MFT Sets sm/mcast/mft.c sends for them.
 *
 * Trees: on fat trees, a torus, a random graph from the bundled
 * topologies and a larger random graph built here, every tree is checked
 * by an independent oracle: the masks are symmetric along switch links
 * (loop-free: links = switches - 1, connected), a packet sent by any
 * member reaches every receiving member exactly once and no other host,
 * send-only members' ports are in no mask, and the depth is the least
 * any root can give (brute force over every switch).
 *
 * MFTs: a struct sm over a model with the fake transport answering every
 * Set: the blocks sent are the trees' masks, only blocks that differ are
 * sent (nothing on a second model of the same fabric, only the changed
 * switches on a join), a Set left unanswered is sent again, a leave
 * clears the entries, MulticastFDBTop where supported, the MLID ceiling.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "routing/mcast.h"
#include "sm/log.h"
#include "sm/mcast/mcast.h"
#include "sm/mcast/mft.h"
#include "sm/program.h"
#include "sm/sm.h"
#include "tests/unit/fake_transport.h"
#include "tests/unit/topo_fixture.h"

static uint32_t rng = 12345;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

/* ------------------------------------------------------------ oracle */

/* The node named `name` in its description ("H0001 HCA-1", "leaf-01"). */
static int32_t node_named(const struct fabric *f, const char *name)
{
	size_t l = strlen(name);

	for (size_t i = 0; i < f->n_nodes; i++)
		if (!strncmp(f->nodes[i].desc, name, l) &&
		    (f->nodes[i].desc[l] == ' ' || !f->nodes[i].desc[l]))
			return (int32_t)i;
	ck_abort_msg("no node '%s'", name);
	return -1;
}

static bool is_sw(const struct fabric *f, int32_t id)
{
	return id >= 0 && fabric_node(f, id)->type == NODE_TYPE_SWITCH;
}

/* Hop counts between switches from `src` (-1: unreached). */
static void sw_bfs(const struct fabric *f, int32_t src, int *d)
{
	int32_t *q = malloc(f->n_nodes * sizeof(*q));
	size_t h = 0, t = 0;

	for (size_t i = 0; i < f->n_nodes; i++)
		d[i] = -1;
	d[src] = 0;
	q[t++] = src;
	while (h < t) {
		int32_t v = q[h++];
		const struct fab_node *n = fabric_node(f, v);

		for (unsigned p = 1; p <= n->num_ports; p++) {
			int32_t w = n->ports[p].peer_node;

			if (w != FAB_NONE && is_sw(f, w) && d[w] < 0) {
				d[w] = d[v] + 1;
				q[t++] = w;
			}
		}
	}
	free(q);
}

/* The switch a member hangs off and its port there. */
static int32_t member_switch(const struct fabric *f,
			     const struct mcast_member *m, unsigned *port)
{
	const struct fab_port *p;

	if (is_sw(f, m->node)) {
		*port = 0;
		return m->node;
	}
	p = &fabric_node(f, m->node)->ports[m->port];
	*port = p->peer_port;
	return p->peer_node;
}

/* Least eccentricity over the member switches of any switch. */
static int best_depth(const struct fabric *f, const struct mcast_member *m,
		      size_t n)
{
	int *d = malloc(f->n_nodes * sizeof(*d)), best = -1;

	for (size_t s = 0; s < f->n_nodes; s++) {
		if (!is_sw(f, (int32_t)s))
			continue;
		sw_bfs(f, (int32_t)s, d);
		int ecc = 0;
		for (size_t i = 0; i < n; i++) {
			unsigned port;
			int32_t w = member_switch(f, &m[i], &port);

			if (d[w] > ecc)
				ecc = d[w];
		}
		if (best < 0 || ecc < best)
			best = ecc;
	}
	free(d);
	return best;
}

static const uint64_t *mask_of(const struct mcast_tree *t, int32_t node)
{
	const struct mcast_sw *w = mcast_tree_find(t, node);

	return w ? w->mask : NULL;
}

/*
 * Flood one packet from member `src` the way switches forward it: into
 * its switch, then out of every mask port but the arrival port.  Counts
 * deliveries per node (CA ports and switch port 0).  Returns false when
 * the flood does not end (a loop): more hops than links could carry.
 */
static bool flood(const struct fabric *f, const struct mcast_tree *t,
		  const struct mcast_member *src, unsigned *got)
{
	struct hop { int32_t sw; unsigned in; } *q;
	size_t h = 0, tl = 0, cap = 4 * f->n_nodes + 16, steps = 0;
	unsigned in;
	int32_t s = member_switch(f, src, &in);

	q = malloc(cap * sizeof(*q));
	memset(got, 0, f->n_nodes * sizeof(*got));
	/* A switch member sends from its port 0 into its own switch. */
	q[tl++] = (struct hop){ s, in };
	while (h < tl) {
		struct hop x = q[h++];
		const uint64_t *mk = mask_of(t, x.sw);
		const struct fab_node *n = fabric_node(f, x.sw);

		if (++steps > cap || !mk) {
			free(q);
			return mk != NULL ? false : true;
		}
		for (unsigned p = 0; p <= n->num_ports; p++) {
			if (p == x.in || !mcast_mask_has(mk, p))
				continue;
			if (p == 0) {
				got[x.sw]++;
				continue;
			}
			int32_t w = n->ports[p].peer_node;
			if (w == FAB_NONE)
				continue;
			if (!is_sw(f, w)) {
				got[w]++;
				continue;
			}
			if (tl == cap) {
				free(q);
				return false;
			}
			q[tl++] = (struct hop){ w, n->ports[p].peer_port };
		}
	}
	free(q);
	return true;
}

static void check_tree(const struct fabric *f, const struct mcast_member *m,
		       size_t n, const struct mcast_tree *t, bool want_best)
{
	unsigned *got = calloc(f->n_nodes, sizeof(*got));
	bool *recv = calloc(f->n_nodes, sizeof(*recv));
	size_t links2 = 0;

	ck_assert_uint_eq(t->unreached, 0);
	ck_assert_uint_gt(t->n, 0);
	for (size_t i = 0; i < n; i++)
		if (m[i].receives)
			recv[m[i].node] = true;

	/* Masks: switch links symmetric; hosts only receiving members. */
	for (size_t i = 0; i < t->n; i++) {
		const struct fab_node *nd = fabric_node(f, t->sw[i].node);

		ck_assert(is_sw(f, t->sw[i].node));
		if (i)
			ck_assert_int_lt(t->sw[i - 1].node, t->sw[i].node);
		for (unsigned p = 0; p < 256; p++) {
			if (!mcast_mask_has(t->sw[i].mask, p))
				continue;
			if (p > nd->num_ports)
				ck_abort_msg("port %u of %s in a mask", p, nd->desc);
			if (p == 0) {
				ck_assert(recv[t->sw[i].node]);
				continue;
			}
			int32_t w = nd->ports[p].peer_node;
			ck_assert_int_ne(w, FAB_NONE);
			if (!is_sw(f, w)) {
				ck_assert_msg(recv[w], "host %s in a mask but"
					      " receives nothing",
					      fabric_node(f, w)->desc);
				continue;
			}
			const uint64_t *wm = mask_of(t, w);
			ck_assert_ptr_nonnull(wm);
			ck_assert(mcast_mask_has(wm, nd->ports[p].peer_port));
			links2++;
		}
	}
	/* A tree: as many links as switches less one. */
	ck_assert_uint_eq(links2 / 2 + 1, t->n);

	/* Every member's packet reaches every receiver once, nobody else. */
	for (size_t i = 0; i < n; i++) {
		if (!flood(f, t, &m[i], got))
			ck_abort_msg("forwarding loops");
		for (size_t v = 0; v < f->n_nodes; v++) {
			bool self = (int32_t)v == m[i].node;
			unsigned want = recv[v] && !self ? 1 : 0;

			if (is_sw(f, (int32_t)v) && !recv[v])
				want = 0;
			/* (if + abort: a passing ck_assert costs a write to
			 * Check's pipe, millions of them here) */
			if (got[v] != want)
				ck_abort_msg("member %zu: node %s got %u copies,"
					     " expected %u", i,
					     fabric_node(f, (int32_t)v)->desc,
					     got[v], want);
		}
	}

	/* Depth: the tree's own depth from its root, and the least. */
	int *d = malloc(f->n_nodes * sizeof(*d));
	sw_bfs(f, t->root, d);
	int deepest = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned port;
		int32_t w = member_switch(f, &m[i], &port);

		ck_assert_ptr_nonnull(mask_of(t, w));
		if (d[w] > deepest)
			deepest = d[w];
	}
	ck_assert_int_eq(deepest, (int)t->depth);
	int best = best_depth(f, m, n);
	if (want_best)
		ck_assert_int_eq((int)t->depth, best);
	else
		ck_assert_int_le((int)t->depth, 2 * best);
	free(d);
	free(got);
	free(recv);
}

/* `k` distinct random CA ports (port 1); a share of them send-only. */
static size_t pick_members(const struct fabric *f, size_t k, unsigned sendonly_pct,
			   struct mcast_member *out)
{
	int32_t *cas = malloc(f->n_nodes * sizeof(*cas));
	size_t nc = 0;

	for (size_t i = 0; i < f->n_nodes; i++)
		if (!is_sw(f, (int32_t)i) &&
		    fabric_node(f, (int32_t)i)->ports[1].peer_node != FAB_NONE)
			cas[nc++] = (int32_t)i;
	if (k > nc)
		k = nc;
	for (size_t i = 0; i < k; i++) {
		size_t j = i + rnd() % (nc - i);
		int32_t x = cas[i];

		cas[i] = cas[j];
		cas[j] = x;
		out[i] = (struct mcast_member){ cas[i], 1,
						rnd() % 100 >= sendonly_pct };
	}
	free(cas);
	return k;
}

static void trees_on(const struct fabric *f, const struct routing_result *r,
		     const size_t *sizes, size_t nsizes, bool want_best)
{
	struct mcast_ctx *c;
	struct mcast_member *m = malloc(f->n_nodes * sizeof(*m));

	ck_assert_int_eq(mcast_ctx_new(&c, f, r), 0);
	for (size_t s = 0; s < nsizes; s++) {
		for (unsigned round = 0; round < 3; round++) {
			struct mcast_tree t;
			size_t n = pick_members(f, sizes[s], round * 25, m);

			ck_assert_int_eq(mcast_tree_build(c, m, n, 0xc000 + round,
							  &t), 0);
			check_tree(f, m, n, &t, want_best);
			mcast_tree_free(&t);
		}
	}
	mcast_ctx_free(c);
	free(m);
}

static const size_t sizes[] = { 1, 2, 3, 7, 20, 60, 100000 };

START_TEST(tree_fat2)
{
	struct fx x;

	fx_load(&x, "fat2-128.net", 0);
	trees_on(&x.f, &x.r, sizes, 7, true);
	fx_free(&x);
}
END_TEST

START_TEST(tree_fat3)
{
	struct fx x;

	fx_load(&x, "fat3-pods.net", 0);
	trees_on(&x.f, &x.r, sizes, 7, true);
	fx_free(&x);
}
END_TEST

/* 64 leaves: more member switches than the exact search takes, so the
 * midway candidates find the root, still the best one. */
START_TEST(tree_fat2_1152)
{
	struct fx x;
	const size_t big[] = { 40, 600, 100000 };

	fx_load(&x, "fat2-1152.net", 0);
	trees_on(&x.f, &x.r, big, 3, true);
	fx_free(&x);
}
END_TEST

START_TEST(tree_torus)
{
	struct fx x;

	fx_load(&x, "torus-3x3x3.net", 0);
	trees_on(&x.f, &x.r, sizes, 7, true);
	fx_free(&x);
}
END_TEST

START_TEST(tree_random24)
{
	struct fx x;

	fx_load(&x, "random-24.net", 0);
	trees_on(&x.f, &x.r, sizes, 7, true);
	fx_free(&x);
}
END_TEST

/*
 * A random graph of `ns` 12-port switches (a ring plus random chords,
 * some parallel), one host each on port 1.
 */
static void random_graph(struct fabric *f, unsigned ns)
{
	fabric_init(f);
	for (unsigned i = 0; i < ns; i++) {
		int32_t s = fabric_add_node(f, 0x1000 + i, NODE_TYPE_SWITCH, 12);
		int32_t h = fabric_add_node(f, 0x100000 + i, NODE_TYPE_CA, 1);

		ck_assert_int_ge(s, 0);
		ck_assert_int_ge(h, 0);
		snprintf(fabric_node(f, h)->desc, 64, "H%u", i);
		snprintf(fabric_node(f, s)->desc, 64, "S%u", i);
		fabric_node(f, h)->ports[1].valid = true;
		fabric_node(f, h)->ports[1].guid = 0x100000 + i;
		ck_assert_int_eq(fabric_link(f, h, 1, s, 1), 0);
	}
	for (unsigned i = 0; i < ns; i++)	/* ring on port 2 -> 3 */
		ck_assert_int_eq(fabric_link(f, (int32_t)(2 * i), 2,
			(int32_t)(2 * ((i + 1) % ns)), 3), 0);
	for (unsigned tries = 0; tries < ns * 6; tries++) {
		unsigned a = rnd() % ns, b = rnd() % ns, pa = 0, pb = 0;

		if (a == b)
			continue;
		for (unsigned p = 4; p <= 12 && !pa; p++)
			if (fabric_node(f, (int32_t)(2 * a))->ports[p].peer_node == FAB_NONE)
				pa = p;
		for (unsigned p = 4; p <= 12 && !pb; p++)
			if (fabric_node(f, (int32_t)(2 * b))->ports[p].peer_node == FAB_NONE)
				pb = p;
		if (pa && pb)
			fabric_link(f, (int32_t)(2 * a), (uint8_t)pa,
				    (int32_t)(2 * b), (uint8_t)pb);
	}
}

/* Up to 32 member switches the root is exact on any graph. */
START_TEST(tree_random_exact)
{
	struct fabric f;
	const size_t small[] = { 2, 9, 32 };

	random_graph(&f, 150);
	trees_on(&f, NULL, small, 3, true);
	fabric_free(&f);
}
END_TEST

/* Beyond that: still a loop-free tree that reaches everyone; depth
 * within twice the least. */
START_TEST(tree_random_many)
{
	struct fabric f;
	const size_t many[] = { 33, 80, 150 };

	random_graph(&f, 150);
	trees_on(&f, NULL, many, 3, false);
	fabric_free(&f);
}
END_TEST

/* Send-only members: their switch is on the tree, their port in no mask. */
START_TEST(tree_sendonly)
{
	struct fx x;
	struct mcast_ctx *c;
	struct mcast_tree t;
	struct mcast_member m[3];
	unsigned p1, p3;

	fx_load(&x, "fat2-128.net", 0);
	m[0] = (struct mcast_member){ node_named(&x.f, "H0001"), 1, true };
	m[1] = (struct mcast_member){ node_named(&x.f, "H0002"), 1, false };
	m[2] = (struct mcast_member){ node_named(&x.f, "H0128"), 1, false };
	ck_assert_int_eq(mcast_ctx_new(&c, &x.f, &x.r), 0);
	ck_assert_int_eq(mcast_tree_build(c, m, 3, 7, &t), 0);
	check_tree(&x.f, m, 3, &t, true);
	int32_t s1 = member_switch(&x.f, &m[0], &p1);
	int32_t s3 = member_switch(&x.f, &m[2], &p3);
	ck_assert(mcast_mask_has(mask_of(&t, s1), p1));
	ck_assert_ptr_nonnull(mask_of(&t, s3));		/* on the tree */
	ck_assert(!mcast_mask_has(mask_of(&t, s3), p3));
	ck_assert_uint_eq(t.depth, 1);
	mcast_tree_free(&t);
	mcast_ctx_free(c);
	fx_free(&x);
}
END_TEST

/* Two parallel links: the one the unicast LFTs load less carries it. */
START_TEST(tree_prefers_unloaded_link)
{
	struct fabric f;
	struct routing_result r = { 0 };
	uint8_t lft0[8], lft1[8];
	struct mcast_ctx *c;
	struct mcast_tree t;

	fabric_init(&f);
	int32_t s0 = fabric_add_node(&f, 1, NODE_TYPE_SWITCH, 8);
	int32_t s1 = fabric_add_node(&f, 2, NODE_TYPE_SWITCH, 8);
	int32_t h0 = fabric_add_node(&f, 3, NODE_TYPE_CA, 1);
	int32_t h1 = fabric_add_node(&f, 4, NODE_TYPE_CA, 1);
	ck_assert_int_eq(fabric_link(&f, s0, 1, s1, 1), 0);
	ck_assert_int_eq(fabric_link(&f, s0, 2, s1, 2), 0);
	ck_assert_int_eq(fabric_link(&f, h0, 1, s0, 5), 0);
	ck_assert_int_eq(fabric_link(&f, h1, 1, s1, 5), 0);
	r.n_nodes = f.n_nodes;
	r.lft = calloc(f.n_nodes, sizeof(*r.lft));
	for (unsigned which = 1; which <= 2; which++) {
		/* LIDs 1-7 all routed over the other link, both ways */
		memset(lft0, which == 1 ? 2 : 1, sizeof(lft0));
		memset(lft1, which == 1 ? 2 : 1, sizeof(lft1));
		r.lft[s0] = (struct lft){ .top = 7, .port = lft0 };
		r.lft[s1] = (struct lft){ .top = 7, .port = lft1 };
		struct mcast_member m[2] = { { h0, 1, true }, { h1, 1, true } };
		for (uint32_t seed = 0; seed < 8; seed++) {
			ck_assert_int_eq(mcast_ctx_new(&c, &f, &r), 0);
			ck_assert_int_eq(mcast_tree_build(c, m, 2, seed, &t), 0);
			ck_assert_uint_eq(t.n, 2);
			ck_assert(mcast_mask_has(mask_of(&t, s0), which));
			ck_assert(!mcast_mask_has(mask_of(&t, s0), 3 - which));
			ck_assert(mcast_mask_has(mask_of(&t, s1), which));
			ck_assert(mcast_mask_has(mask_of(&t, s0), 5));
			mcast_tree_free(&t);
			mcast_ctx_free(c);
		}
	}
	free(r.lft);
	fabric_free(&f);
}
END_TEST

/* Different MLIDs spread over the spines of a fat tree. */
START_TEST(tree_roots_spread)
{
	struct fx x;
	struct mcast_ctx *c;
	struct mcast_member m[2];
	bool root[4096] = { false };
	unsigned roots = 0;

	fx_load(&x, "fat2-128.net", 0);
	m[0] = (struct mcast_member){ node_named(&x.f, "H0001"), 1, true };
	m[1] = (struct mcast_member){ node_named(&x.f, "H0128"), 1, true };
	ck_assert_int_eq(mcast_ctx_new(&c, &x.f, &x.r), 0);
	for (uint32_t mlid = 0xc000; mlid < 0xc040; mlid++) {
		struct mcast_tree t;

		ck_assert_int_eq(mcast_tree_build(c, m, 2, mlid, &t), 0);
		ck_assert_uint_eq(t.depth, 1);
		if (!root[t.root]) {
			root[t.root] = true;
			roots++;
		}
		mcast_tree_free(&t);
	}
	ck_assert_uint_eq(roots, 4);	/* every spine */
	mcast_ctx_free(c);
	fx_free(&x);
}
END_TEST

/* Members that no switch connects: counted, no tree. */
START_TEST(tree_unreached)
{
	struct fx x;
	struct mcast_ctx *c;
	struct mcast_tree t;
	struct mcast_member m[2] = { { FAB_NONE, 1, true },
				     { 0, 7, true } };

	fx_load(&x, "fat2-128.net", 0);
	ck_assert_int_eq(mcast_ctx_new(&c, &x.f, &x.r), 0);
	m[1].node = node_named(&x.f, "H0001");	/* port 7 does not exist */
	ck_assert_int_eq(mcast_tree_build(c, m, 2, 0, &t), 0);
	ck_assert_uint_eq(t.n, 0);
	ck_assert_uint_eq(t.unreached, 2);
	mcast_tree_free(&t);
	mcast_ctx_free(c);
	fx_free(&x);
}
END_TEST

/* -------------------------------------------------------------- MFTs */

static struct ev_loop *L;
static struct fake F;
static struct sm S;
static struct fx X;

static void on_guard(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(l, EVBREAK_ALL);
}

/* Run the loop until `updates` updates are done and nothing is out. */
static void run_updates(unsigned updates)
{
	ev_timer guard;
	const struct mft_stats *st;
	bool busy = true;

	ev_timer_init(&guard, on_guard, 10., 0.);
	ev_timer_start(L, &guard);
	while ((st = mft_stats(&S, &busy)) == NULL || busy ||
	       st->updates < updates) {
		if (!ev_is_active(&guard))
			break;
		ev_run(L, EVRUN_ONCE);
	}
	ev_timer_stop(L, &guard);
	ck_assert_ptr_nonnull(st);
	ck_assert(!busy);
	ck_assert_uint_ge(st->updates, updates);
}

/* Give the fixture's model the path fields the SM would have. */
static void publish(struct fx *x)
{
	fabric_free(&S.fabric);
	routing_result_free(&S.routes);
	S.fabric = x->f;
	S.routes = x->r;
	fabric_init(&x->f);
	memset(&x->r, 0, sizeof(x->r));
	S.fabric.local_node = node_named(&S.fabric, "H0001");
	S.fabric.local_port = 1;
	/* A one-hop "path" naming each switch, to tell Sets apart. */
	for (size_t i = 0; i < S.fabric.n_nodes; i++) {
		S.fabric.nodes[i].hops = 1;
		S.fabric.nodes[i].path[1] = (uint8_t)(i + 1);
	}
}

static void mft_setup(void)
{
	const struct mad_engine_opts o = {
		.max_wire_smps = 64, .max_wire_gmps = 4, .timeout_ms = 5,
		.retries = 0,
	};

	log_set_level(LOG_LVL_ERR);
	L = ev_loop_new(EVFLAG_AUTO);
	ck_assert_int_eq(fake_init(&F, L, &o), 0);
	F.action = FAKE_ANSWER;
	memset(&S, 0, sizeof(S));
	S.loop = L;
	S.engine = F.engine;
	S.cfg.packet_life_time = 0x12;
	S.cfg.use_mfttop = true;	/* opensm.conf's default */
	S.images = lft_images_new();
	S.mc = mc_table_new(NULL);
	fabric_init(&S.fabric);
	fx_load(&X, "fat2-128.net", 0);
	publish(&X);
}

static void mft_teardown(void)
{
	mft_abort(&S);
	fake_fini(&F);
	mft_abort(&S);
	mc_table_free(S.mc);
	lft_images_free(S.images);
	fabric_free(&S.fabric);
	routing_result_free(&S.routes);
	ev_loop_destroy(L);
}

static struct mc_group *group(uint8_t tag)
{
	uint8_t mgid[16] = { 0xff, 0x12, 0x40, 0x1b, [15] = tag };
	int err = 0;
	struct mc_group *g = mc_group_create(S.mc, mgid, &err);

	ck_assert_ptr_nonnull(g);
	return g;
}

static void join(struct mc_group *g, const char *host, uint8_t state)
{
	const struct fab_node *n = fabric_node(&S.fabric,
					       node_named(&S.fabric, host));
	uint8_t gid[16] = { 0xfe, 0x80 };

	ck_assert_int_eq(mc_member_set(S.mc, g, n->ports[1].guid, gid, state,
				       false), 0);
}

/* MFT Sets sent from index `from` on. */
static unsigned mft_sets(size_t from)
{
	unsigned n = 0;

	for (size_t i = from; i < F.n_sent; i++)
		if (be16toh(((const struct mad_hdr *)F.sent[i].mad)->attr_id) ==
		    SMP_ATTR_MFT)
			n++;
	return n;
}

/* (switch, position) pairs whose entry for `mlid` is not 0 in the SA's
 * copy (fab_node.mft), and a check that it equals `expect`'s masks. */
static unsigned entries_nonzero(uint16_t mlid)
{
	unsigned n = 0;

	for (size_t i = 0; i < S.fabric.n_nodes; i++) {
		const struct fab_node *nd = &S.fabric.nodes[i];
		size_t x = mlid - 0xc000u;

		if (nd->type != NODE_TYPE_SWITCH)
			continue;
		ck_assert_ptr_nonnull(nd->mft);
		ck_assert_uint_eq(nd->mft_positions, 3);
		if (x >= nd->mft_entries)
			continue;
		for (unsigned pos = 0; pos < nd->mft_positions; pos++)
			if (nd->mft[x * nd->mft_positions + pos])
				n++;
	}
	return n;
}

/* The SA's copy as a tree over the model, checked by the oracle. */
static void check_programmed(struct mc_group *g)
{
	struct mcast_tree t = { 0 };
	struct mcast_member *m = calloc(g->n_members + 1, sizeof(*m));
	size_t x = g->mlid - 0xc000u;

	t.sw = calloc(S.fabric.n_nodes, sizeof(*t.sw));
	for (size_t i = 0; i < S.fabric.n_nodes; i++) {
		const struct fab_node *nd = &S.fabric.nodes[i];
		struct mcast_sw w = { .node = (int32_t)i };
		bool any = false;

		if (nd->type != NODE_TYPE_SWITCH || x >= nd->mft_entries)
			continue;
		for (unsigned pos = 0; pos < nd->mft_positions; pos++) {
			uint16_t b = be16toh(nd->mft[x * nd->mft_positions + pos]);

			w.mask[pos / 4] |= (uint64_t)b << (16 * (pos % 4));
			any |= b != 0;
		}
		if (any)
			t.sw[t.n++] = w;
	}
	for (size_t i = 0; i < g->n_members; i++) {
		for (size_t j = 0; j < S.fabric.n_nodes; j++)
			if (S.fabric.nodes[j].type != NODE_TYPE_SWITCH &&
			    S.fabric.nodes[j].ports[1].guid == g->members[i].port_guid)
				m[i] = (struct mcast_member){ (int32_t)j, 1,
					mc_member_receives(&g->members[i]) };
	}
	/* The root is not in the MFTs: find one giving the tree's depth. */
	int *d = malloc(S.fabric.n_nodes * sizeof(*d));
	int best = -1;
	for (size_t i = 0; i < t.n; i++) {
		sw_bfs(&S.fabric, t.sw[i].node, d);
		int ecc = 0;
		for (size_t k = 0; k < g->n_members; k++) {
			unsigned port;
			int32_t w = member_switch(&S.fabric, &m[k], &port);
			if (d[w] > ecc)
				ecc = d[w];
		}
		if (best < 0 || ecc < best) {
			best = ecc;
			t.root = t.sw[i].node;
			t.depth = (unsigned)ecc;
		}
	}
	free(d);
	check_tree(&S.fabric, m, g->n_members, &t, true);
	free(t.sw);
	free(m);
}

/* A group's first MFTs: exactly the tree's nonzero entries, one block;
 * the same groups on a new model of the same fabric: nothing sent. */
START_TEST(mft_first_then_nothing)
{
	struct mc_group *g = group(1);

	join(g, "H0001", MC_JOIN_FULL);
	join(g, "H0017", MC_JOIN_FULL);
	join(g, "H0100", MC_JOIN_NON);
	join(g, "H0128", MC_JOIN_SENDONLY);
	mft_sweep_done(&S);
	run_updates(1);
	/* MLID 0xC000 is in block 0: one Set per (switch, position) that
	 * holds a bit; none for the rest. */
	ck_assert_uint_eq(mft_sets(0), entries_nonzero(0xc000));
	ck_assert_uint_gt(mft_sets(0), 0);
	ck_assert_uint_eq(mft_stats(&S, NULL)->last_trees, 1);
	check_programmed(g);

	size_t before = F.n_sent;
	fx_load(&X, "fat2-128.net", 0);		/* a new sweep's model */
	publish(&X);
	mft_sweep_done(&S);
	run_updates(2);
	ck_assert_uint_eq(F.n_sent, before);
	ck_assert_uint_eq(mft_stats(&S, NULL)->last_trees, 1);
	check_programmed(g);			/* mirrored into the new model */
}
END_TEST

/* A join changes one group's tree: only that tree is rebuilt and only
 * the entries that change are sent, a few ms later. */
START_TEST(mft_join_sends_changed_only)
{
	struct mc_group *g1 = group(1), *g2 = group(2);

	join(g1, "H0001", MC_JOIN_FULL);
	join(g1, "H0002", MC_JOIN_FULL);
	join(g2, "H0033", MC_JOIN_FULL);
	join(g2, "H0064", MC_JOIN_FULL);
	mft_sweep_done(&S);
	run_updates(1);
	ck_assert_uint_eq(mft_stats(&S, NULL)->last_trees, 2);

	/* Snapshot the SA's copy, join H128 to g1. */
	size_t words = 0;
	for (size_t i = 0; i < S.fabric.n_nodes; i++)
		words += S.fabric.nodes[i].type == NODE_TYPE_SWITCH ? 32 * 3 : 0;
	__be16 *old = calloc(words, sizeof(*old));
	size_t k = 0;
	for (size_t i = 0; i < S.fabric.n_nodes; i++) {
		const struct fab_node *nd = &S.fabric.nodes[i];
		if (nd->type == NODE_TYPE_SWITCH) {
			ck_assert_uint_eq(nd->mft_entries, 32);
			memcpy(old + k, nd->mft, 32 * 3 * sizeof(*old));
			k += 32 * 3;
		}
	}
	size_t before = F.n_sent;
	join(g1, "H0128", MC_JOIN_FULL);
	mcast_changed(&S);
	mcast_changed(&S);			/* a burst: one update */
	run_updates(2);
	ck_assert_uint_eq(mft_stats(&S, NULL)->updates, 2);
	ck_assert_uint_eq(mft_stats(&S, NULL)->last_trees, 1);
	/* One Set per (switch, position) whose block 0 changed. */
	unsigned changed = 0;
	k = 0;
	for (size_t i = 0; i < S.fabric.n_nodes; i++) {
		const struct fab_node *nd = &S.fabric.nodes[i];
		if (nd->type != NODE_TYPE_SWITCH)
			continue;
		for (unsigned pos = 0; pos < 3; pos++) {
			bool diff = false;
			for (unsigned e = 0; e < 32; e++)
				diff |= old[k + e * 3 + pos] != nd->mft[e * 3 + pos];
			changed += diff;
		}
		k += 32 * 3;
	}
	ck_assert_uint_gt(changed, 0);
	ck_assert_uint_eq(mft_sets(before), changed);
	ck_assert_uint_eq(F.n_sent - before, changed);
	check_programmed(g1);
	check_programmed(g2);
	free(old);
}
END_TEST

/*
 * A burst of joins, one every millisecond: the update waits for the
 * burst to pause (MFT_COALESCE) but no longer than MFT_COALESCE_MAX after
 * the first join it carries.  A 1 ms tick never leaves a 5 ms pause, so
 * the burst's 127 joins (>= 127 ms, more on a loaded machine) take a
 * handful of updates, not one per join or per 5 ms; and updates do run
 * while it lasts.  After the last join every member is programmed.
 */
struct burst {
	struct mc_group *g;
	unsigned next;			/* next host number to join */
	unsigned updates_during;	/* updates finished before the end */
	ev_timer tick;
};

static void on_burst_tick(struct ev_loop *l, ev_timer *w, int revents)
{
	struct burst *b = w->data;
	char host[8];

	(void)revents;
	snprintf(host, sizeof(host), "H%04u", b->next++);
	join(b->g, host, MC_JOIN_FULL);
	mcast_changed(&S);
	if (b->next > 128) {
		ev_timer_stop(l, w);
		b->updates_during = mft_stats(&S, NULL)->updates;
	}
}

START_TEST(mft_burst_coalesced)
{
	struct burst b = { .g = group(1), .next = 2 };

	join(b.g, "H0001", MC_JOIN_FULL);
	mft_sweep_done(&S);
	run_updates(1);
	ck_assert_uint_eq(mft_stats(&S, NULL)->updates, 1);
	ev_timer_init(&b.tick, on_burst_tick, 0.001, 0.001);
	b.tick.data = &b;
	ev_timer_start(L, &b.tick);
	while (ev_is_active(&b.tick))
		ev_run(L, EVRUN_ONCE);
	/* MFT_COALESCE_MAX (50 ms) bounds the wait: at least one update
	 * ran during the >= 127 ms burst. */
	ck_assert_uint_ge(b.updates_during, 2);
	run_updates(b.updates_during + 1);
	unsigned updates = mft_stats(&S, NULL)->updates;
	/* 1 ms apart, the old 5 ms coalescing ran an update every few ms
	 * (about 25 for this burst); now one per 50 ms of burst and one
	 * after it, with room for a loaded machine's stalls. */
	ck_assert_uint_le(updates - 1, 8);
	check_programmed(b.g);
	ck_assert_uint_eq(b.g->n_members, 128);
}
END_TEST

/* MLIDs in another block: only that block goes out on a join. */
START_TEST(mft_blocks_apart)
{
	struct mc_group *g[40];

	for (unsigned i = 0; i < 40; i++) {
		g[i] = group((uint8_t)(i + 1));
		join(g[i], "H0001", MC_JOIN_FULL);
	}
	ck_assert_uint_eq(g[39]->mlid, 0xc027);	/* block 1 */
	mft_sweep_done(&S);
	run_updates(1);
	size_t before = F.n_sent;
	join(g[39], "H0128", MC_JOIN_FULL);
	mcast_changed(&S);
	run_updates(2);
	ck_assert_uint_gt(F.n_sent - before, 0);
	for (size_t i = before; i < F.n_sent; i++)
		ck_assert_uint_eq(fake_attr_mod(&F, i) & 0x1ff, 1);
	check_programmed(g[39]);
	check_programmed(g[0]);
}
END_TEST

/* The last member leaves, the group goes: every entry is cleared. */
START_TEST(mft_leave_clears)
{
	struct mc_group *g = group(1);

	join(g, "H0001", MC_JOIN_FULL);
	join(g, "H0128", MC_JOIN_FULL);
	mft_sweep_done(&S);
	run_updates(1);
	ck_assert_uint_gt(entries_nonzero(0xc000), 0);
	unsigned nz = entries_nonzero(0xc000);
	size_t before = F.n_sent;
	mc_group_delete(S.mc, g);
	mcast_changed(&S);
	run_updates(2);
	ck_assert_uint_eq(entries_nonzero(0xc000), 0);
	ck_assert_uint_eq(mft_sets(before), nz);
}
END_TEST

/*
 * The highest MLID in use goes away, then the only one left: an update
 * looks only as far as the highest group or tree (mft.c), and must still
 * clear the entries of a tree above every group that is left.
 */
START_TEST(mft_highest_mlid_goes)
{
	struct mc_group *g[100];

	for (unsigned i = 0; i < 100; i++) {
		g[i] = group((uint8_t)(i + 1));
		join(g[i], i % 2 ? "H0001" : "H0128", MC_JOIN_FULL);
	}
	ck_assert_uint_eq(g[99]->mlid, 0xc063);		/* block 3 */
	join(g[99], "H0001", MC_JOIN_FULL);
	mft_sweep_done(&S);
	run_updates(1);
	check_programmed(g[99]);
	ck_assert_uint_gt(entries_nonzero(0xc063), 0);
	/* all but the last go: only 0xc063 keeps entries */
	for (unsigned i = 0; i < 99; i++)
		mc_group_delete(S.mc, g[i]);
	mcast_changed(&S);
	run_updates(2);
	for (unsigned i = 0; i < 99; i++)
		ck_assert_uint_eq(entries_nonzero((uint16_t)(0xc000 + i)), 0);
	check_programmed(g[99]);
	ck_assert_uint_gt(entries_nonzero(0xc063), 0);
	/* and the last: no group left, its tree's entries cleared */
	size_t before = F.n_sent;
	mc_group_delete(S.mc, g[99]);
	mcast_changed(&S);
	run_updates(3);			/* updates so far, all told */
	ck_assert_uint_gt(mft_sets(before), 0);
	ck_assert_uint_eq(entries_nonzero(0xc063), 0);
	/* a new group takes the lowest MLID and is programmed */
	g[0] = group(200);
	join(g[0], "H0001", MC_JOIN_FULL);
	join(g[0], "H0128", MC_JOIN_FULL);
	ck_assert_uint_eq(g[0]->mlid, 0xc000);
	mcast_changed(&S);
	run_updates(4);
	check_programmed(g[0]);
	ck_assert_uint_gt(entries_nonzero(0xc000), 0);
}
END_TEST

static void on_stop(struct ev_loop *l, ev_timer *w, int revents);
static uint8_t drop_path;		/* MFT Sets to this switch are lost */

static enum fake_action drop_one(struct fake *fk, const struct fake_sent *s,
				 void *arg)
{
	const struct smp_dr *d = (const void *)s->mad;

	(void)fk;
	(void)arg;
	if (be16toh(d->hdr.attr_id) == SMP_ATTR_MFT &&
	    d->initial_path[1] == drop_path)
		return FAKE_DROP;
	return FAKE_ANSWER;
}

/* Sets a switch never answers: its blocks are sent again at the next
 * update even though nothing changed, and only they. */
START_TEST(mft_unanswered_resent)
{
	struct mc_group *g = group(1);
	int32_t leaf = node_named(&S.fabric, "leaf-01");

	join(g, "H0001", MC_JOIN_FULL);
	join(g, "H0128", MC_JOIN_FULL);
	drop_path = (uint8_t)(leaf + 1);
	F.policy = drop_one;
	mft_sweep_done(&S);
	run_updates(1);
	unsigned lost = mft_stats(&S, NULL)->failed;
	ck_assert_uint_gt(lost, 0);
	/* The SA shows what was confirmed: nothing on leaf-01. */
	const struct fab_node *n = fabric_node(&S.fabric, leaf);
	for (unsigned pos = 0; pos < 3; pos++)
		ck_assert_uint_eq(n->mft[pos], 0);

	size_t before = F.n_sent;
	drop_path = 0;
	fx_load(&X, "fat2-128.net", 0);
	publish(&X);
	mft_sweep_done(&S);
	run_updates(2);
	ck_assert_uint_eq(mft_sets(before), lost);
	for (size_t i = before; i < F.n_sent; i++)
		ck_assert_uint_eq(((const struct smp_dr *)F.sent[i].mad)
				  ->initial_path[1], leaf + 1);
	check_programmed(g);
}
END_TEST

/* A switch we never programmed that reports a MulticastFDBTop may hold
 * an earlier SM's entries: every block up to it is written once. */
START_TEST(mft_stale_below_top)
{
	struct mc_group *g = group(1);
	int32_t leaf = node_named(&S.fabric, "leaf-08");

	fabric_node(&S.fabric, leaf)->si.mft_top = htobe16(0xc05f);
	join(g, "H0001", MC_JOIN_FULL);
	join(g, "H0002", MC_JOIN_FULL);		/* leaf-08 not on the tree */
	mft_sweep_done(&S);
	run_updates(1);
	unsigned to_leaf = 0, blocks = 0;
	for (size_t i = 0; i < F.n_sent; i++)
		if (((const struct smp_dr *)F.sent[i].mad)->initial_path[1] ==
		    leaf + 1) {
			to_leaf++;
			blocks |= 1u << (fake_attr_mod(&F, i) & 0x1ff);
		}
	ck_assert_uint_eq(to_leaf, 3 * 3);	/* blocks 0-2, 3 positions */
	ck_assert_uint_eq(blocks, 7);
	ck_assert_uint_eq(fabric_node(&S.fabric, leaf)->mft_entries, 96);
	check_programmed(g);
	/* Once written, not again. */
	size_t before = F.n_sent;
	fx_load(&X, "fat2-128.net", 0);
	publish(&X);
	fabric_node(&S.fabric, leaf)->si.mft_top = htobe16(0xc05f);
	mft_sweep_done(&S);
	run_updates(2);
	ck_assert_uint_eq(F.n_sent, before);
}
END_TEST

/* Groups sharing an MLID (consolidated IPv6 solicited-node groups):
 * one tree over all their members; a change in either rebuilds it. */
START_TEST(mft_shared_mlid)
{
	struct mc_group *g1 = group(1), *g2 = group(2);
	uint16_t own = g2->mlid;
	int32_t l1 = node_named(&S.fabric, "leaf-01");
	int32_t l8 = node_named(&S.fabric, "leaf-08");

	join(g1, "H0001", MC_JOIN_FULL);
	join(g2, "H0128", MC_JOIN_FULL);
	g2->mlid = g1->mlid;		/* as a consolidating SA would */
	mft_sweep_done(&S);
	run_updates(1);
	ck_assert_uint_eq(mft_stats(&S, NULL)->last_trees, 1);
	/* MLID 0xC000: H0001 is leaf-01 port 1 (position 0, bit 1), H0128
	 * leaf-08 port 16 (position 1, bit 0); 0xC001 holds nothing. */
	const struct fab_node *a = fabric_node(&S.fabric, l1);
	const struct fab_node *b = fabric_node(&S.fabric, l8);
	ck_assert_uint_eq(be16toh(a->mft[0]) & 0x2, 0x2);
	ck_assert_uint_eq(be16toh(b->mft[1]) & 0x1, 0x1);
	ck_assert_uint_eq(entries_nonzero(0xc001), 0);
	/* A member of the second group leaves: that MLID's tree shrinks. */
	mc_member_remove(S.mc, g2, fabric_node(&S.fabric,
		node_named(&S.fabric, "H0128"))->ports[1].guid);
	mcast_changed(&S);
	run_updates(2);
	ck_assert_uint_eq(mft_stats(&S, NULL)->last_trees, 1);
	ck_assert_uint_eq(be16toh(b->mft[1]), 0);
	ck_assert_uint_eq(be16toh(a->mft[0]), 0x2);	/* H0001 alone */
	g2->mlid = own;
}
END_TEST

/* The PortMasks of `mlid` on every switch (SA copy), by switch name. */
static void mlid_snapshot(uint16_t mlid, uint16_t *out, size_t max)
{
	size_t k = 0, x = mlid - 0xc000u;

	memset(out, 0, max * sizeof(*out));
	for (size_t i = 0; i < S.fabric.n_nodes && k + 3 <= max; i++) {
		const struct fab_node *nd = &S.fabric.nodes[i];

		if (nd->type != NODE_TYPE_SWITCH)
			continue;
		for (unsigned pos = 0; pos < 3; pos++, k++)
			out[k] = x < nd->mft_entries ?
				 be16toh(nd->mft[x * nd->mft_positions + pos]) : 0;
	}
}

/* MFT Sets since `from` for block `blk`. */
static unsigned mft_sets_block(size_t from, unsigned blk)
{
	unsigned n = 0;

	for (size_t i = from; i < F.n_sent; i++) {
		const struct mad_hdr *h = (const void *)F.sent[i].mad;

		if (be16toh(h->attr_id) == SMP_ATTR_MFT &&
		    (be32toh(h->attr_mod) & 0x1ff) == blk)
			n++;
	}
	return n;
}

/*
 * A topology change moves only the trees it touches: a leaf-spine link
 * of group 1's tree goes down (a new model without it); group 2 (other
 * leaves, its MLID in another MFT block) keeps its tree, gets no Set;
 * group 1 gets a new tree that avoids the link.  When the link comes
 * back, both trees are intact and as shallow as a new build: kept, no
 * Set at all (a rebuild from scratch moved group 1 back).
 */
START_TEST(mft_topology_change_touched_only)
{
	struct mc_group *g1 = group(1);
	uint8_t mgid[16] = { 0xff, 0x12, 0x40, 0x1b, [15] = 2 };
	int err;
	struct mc_group *g2 = mc_group_create_mlid(S.mc, mgid, 0xc040, &err);
	uint16_t snap[3 * 12], snap2[3 * 12];

	ck_assert_ptr_nonnull(g2);
	join(g1, "H0001", MC_JOIN_FULL);	/* leaf-01 */
	join(g1, "H0033", MC_JOIN_FULL);	/* leaf-03 */
	join(g2, "H0065", MC_JOIN_FULL);	/* leaf-05 */
	join(g2, "H0113", MC_JOIN_NON);		/* leaf-08 */
	mft_sweep_done(&S);
	run_updates(1);
	check_programmed(g1);
	check_programmed(g2);
	mlid_snapshot(0xc040, snap, 36);

	/* g1's link from leaf-01 up to its spine. */
	const struct fab_node *l1 = fabric_node(&S.fabric,
					       node_named(&S.fabric, "leaf-01"));
	unsigned up = 0;
	for (unsigned p = 1; p <= l1->num_ports && !up; p++)
		if ((be16toh(l1->mft[p / 16]) >> (p % 16) & 1) &&
		    l1->ports[p].peer_node >= 0 &&
		    S.fabric.nodes[l1->ports[p].peer_node].type == NODE_TYPE_SWITCH)
			up = p;
	ck_assert_uint_ne(up, 0);

	size_t before = F.n_sent;
	fx_load(&X, "fat2-128.net", 0);
	struct fab_node *n1 = fabric_node(&X.f, node_named(&X.f, "leaf-01"));
	struct fab_port *pp = &n1->ports[up];
	struct fab_node *sp = fabric_node(&X.f, pp->peer_node);
	sp->ports[pp->peer_port].peer_node = FAB_NONE;
	pp->peer_node = FAB_NONE;
	publish(&X);
	mft_sweep_done(&S);
	run_updates(2);
	ck_assert_uint_eq(mft_stats(&S, NULL)->last_trees, 2);
	ck_assert_uint_eq(mft_stats(&S, NULL)->last_kept, 1);
	ck_assert_uint_gt(mft_sets_block(before, 0), 0);
	ck_assert_uint_eq(mft_sets_block(before, 2), 0);
	check_programmed(g1);
	check_programmed(g2);
	mlid_snapshot(0xc040, snap2, 36);
	ck_assert(!memcmp(snap, snap2, sizeof(snap)));
	l1 = fabric_node(&S.fabric, node_named(&S.fabric, "leaf-01"));
	ck_assert_uint_eq(be16toh(l1->mft[up / 16]) >> (up % 16) & 1, 0);

	/* The link is back: nothing moves. */
	mlid_snapshot(0xc000, snap, 36);
	before = F.n_sent;
	fx_load(&X, "fat2-128.net", 0);
	publish(&X);
	mft_sweep_done(&S);
	run_updates(3);
	ck_assert_uint_eq(mft_stats(&S, NULL)->last_trees, 2);
	ck_assert_uint_eq(mft_stats(&S, NULL)->last_kept, 2);
	ck_assert_uint_eq(mft_sets(before), 0);
	mlid_snapshot(0xc000, snap2, 36);
	ck_assert(!memcmp(snap, snap2, sizeof(snap)));
	check_programmed(g1);
	check_programmed(g2);

	/* A member's port moves to another leaf (recabled): its tree is
	 * rebuilt to reach it there; the other is kept. */
	before = F.n_sent;
	fx_load(&X, "fat2-128.net", 0);
	{
		struct fab_node *h = fabric_node(&X.f, node_named(&X.f, "H0113"));
		struct fab_node *h2 = fabric_node(&X.f, node_named(&X.f, "H0050"));
		struct fab_port *a = &h->ports[1], *b = &h2->ports[1];
		int32_t an = a->peer_node, bn = b->peer_node;
		uint8_t ap = a->peer_port, bp = b->peer_port;

		/* swap the two hosts' cables */
		a->peer_node = bn;
		a->peer_port = bp;
		b->peer_node = an;
		b->peer_port = ap;
		X.f.nodes[bn].ports[bp].peer_node = node_named(&X.f, "H0113");
		X.f.nodes[an].ports[ap].peer_node = node_named(&X.f, "H0050");
	}
	publish(&X);
	mft_sweep_done(&S);
	run_updates(4);
	ck_assert_uint_eq(mft_stats(&S, NULL)->last_kept, 1);
	ck_assert_uint_gt(mft_sets_block(before, 2), 0);
	ck_assert_uint_eq(mft_sets_block(before, 0), 0);
	check_programmed(g1);
	check_programmed(g2);
}
END_TEST

/* Without a sweep: lost Sets are retried a moment later, and only they
 * are sent; a switch that never answers is given up after a few tries. */
START_TEST(mft_lost_retried)
{
	struct mc_group *g = group(1);
	int32_t leaf = node_named(&S.fabric, "leaf-01");

	join(g, "H0001", MC_JOIN_FULL);
	join(g, "H0128", MC_JOIN_FULL);
	drop_path = (uint8_t)(leaf + 1);
	F.policy = drop_one;
	mft_sweep_done(&S);
	run_updates(1);
	unsigned lost = mft_stats(&S, NULL)->failed;
	ck_assert_uint_gt(lost, 0);
	size_t before = F.n_sent;
	drop_path = 0;
	run_updates(2);				/* the retry */
	ck_assert_uint_eq(mft_sets(before), lost);
	ck_assert_uint_eq(mft_stats(&S, NULL)->failed, lost);
	check_programmed(g);

	/* Now leaf-01 never answers: 1 + MFT_RETRIES updates, then quiet. */
	join(g, "H0002", MC_JOIN_FULL);
	drop_path = (uint8_t)(leaf + 1);
	mcast_changed(&S);
	run_updates(3 + MFT_RETRIES);
	unsigned n = mft_stats(&S, NULL)->updates;
	ev_timer t;
	ev_timer_init(&t, on_stop, 2 * MFT_RETRY_DELAY, 0.);
	ev_timer_start(L, &t);
	ev_run(L, 0);
	ck_assert_uint_eq(mft_stats(&S, NULL)->updates, n);
}
END_TEST

/* MulticastFDBTop where port 0 says it is supported; once. */
START_TEST(mft_top)
{
	struct mc_group *g = group(1);
	int32_t leaf = node_named(&S.fabric, "leaf-01");
	struct fab_node *n = fabric_node(&S.fabric, leaf);

	n->ports[0].valid = true;
	n->ports[0].pi.cap_mask = htobe32(1u << 30);
	n->si.lft_top = htobe16(200);
	join(g, "H0001", MC_JOIN_FULL);
	mft_sweep_done(&S);
	run_updates(1);
	unsigned si = 0;
	for (size_t i = 0; i < F.n_sent; i++) {
		const struct smp_dr *s = (const void *)F.sent[i].mad;
		if (be16toh(s->hdr.attr_id) != SMP_ATTR_SWITCH_INFO)
			continue;
		const struct smp_switch_info *w = (const void *)s->data;
		ck_assert_uint_eq(be16toh(w->mft_top), 0xc01f);
		ck_assert_uint_eq(be16toh(w->lft_top), 200);
		si++;
	}
	ck_assert_uint_eq(si, 1);
	ck_assert_uint_eq(mft_stats(&S, NULL)->top_sets, 1);
	/* A new member: same top, no SwitchInfo Set. */
	join(g, "H0002", MC_JOIN_FULL);
	mcast_changed(&S);
	run_updates(2);
	ck_assert_uint_eq(mft_stats(&S, NULL)->top_sets, 1);
}
END_TEST

/* use_mfttop FALSE: no SwitchInfo Set, whatever port 0 says; the MFT
 * blocks go out all the same.  disable_multicast: nothing at all. */
START_TEST(mft_top_off)
{
	struct mc_group *g = group(1);
	int32_t leaf = node_named(&S.fabric, "leaf-01");
	struct fab_node *n = fabric_node(&S.fabric, leaf);

	n->ports[0].valid = true;
	n->ports[0].pi.cap_mask = htobe32(1u << 30);
	S.cfg.use_mfttop = false;
	join(g, "H0001", MC_JOIN_FULL);
	mft_sweep_done(&S);
	run_updates(1);
	unsigned si = 0, mft = 0;
	for (size_t i = 0; i < F.n_sent; i++) {
		const struct smp_dr *s = (const void *)F.sent[i].mad;
		si += be16toh(s->hdr.attr_id) == SMP_ATTR_SWITCH_INFO;
		mft += be16toh(s->hdr.attr_id) == SMP_ATTR_MFT;
	}
	ck_assert_uint_eq(si, 0);
	ck_assert_uint_gt(mft, 0);
	ck_assert_uint_eq(mft_stats(&S, NULL)->top_sets, 0);

	size_t before = F.n_sent;
	S.cfg.disable_multicast = true;
	join(g, "H0002", MC_JOIN_FULL);
	mcast_changed(&S);
	mft_sweep_done(&S);
	ck_assert_uint_eq(F.n_sent, before);
}
END_TEST

static void on_stop(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(l, EVBREAK_ALL);
}

/* A join during a heavy sweep waits for it; if the sweep brings no new
 * model (it failed), the join's update still goes out after it. */
START_TEST(mft_join_waits_for_sweep)
{
	struct mc_group *g = group(1);
	ev_timer t;

	join(g, "H0001", MC_JOIN_FULL);
	mft_sweep_done(&S);
	run_updates(1);
	size_t before = F.n_sent;
	S.sweep = (struct sweep *)&t;		/* a heavy sweep runs */
	join(g, "H0128", MC_JOIN_FULL);
	mcast_changed(&S);
	ev_timer_init(&t, on_stop, 0.1, 0.);
	ev_timer_start(L, &t);
	ev_run(L, 0);
	ck_assert_uint_eq(F.n_sent, before);	/* nothing meanwhile */
	ck_assert_uint_eq(mft_stats(&S, NULL)->updates, 1);
	S.sweep = NULL;				/* it failed: no new model */
	run_updates(2);
	ck_assert_uint_gt(F.n_sent, before);
	check_programmed(g);
}
END_TEST

/* The MLID ceiling follows the smallest MulticastFDBCap. */
START_TEST(mft_mlid_ceiling)
{
	fabric_node(&S.fabric, node_named(&S.fabric, "leaf-03"))->si.mft_cap =
		htobe16(64);
	mft_sweep_done(&S);
	ck_assert_uint_eq(mc_table_mlid_top(S.mc), 0xc03f);
	/* No group yet: nothing is programmed, nothing held. */
	ck_assert_uint_eq(F.n_sent, 0);
	ck_assert_ptr_null(mft_stats(&S, NULL));
	/* MLIDs past it are refused. */
	for (unsigned i = 0; i < 64; i++)
		group((uint8_t)i);
	uint8_t mgid[16] = { 0xff, 0x12, 0x40, 0x1b, [14] = 1 };
	int err = 0;
	ck_assert_ptr_null(mc_group_create(S.mc, mgid, &err));
	ck_assert_int_eq(err, -ENOSPC);
}
END_TEST

static Suite *mcast_suite(void)
{
	Suite *s = suite_create("mcast");
	TCase *tc = tcase_create("tree");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, tree_fat2);
	tcase_add_test(tc, tree_fat3);
	tcase_add_test(tc, tree_fat2_1152);
	tcase_add_test(tc, tree_torus);
	tcase_add_test(tc, tree_random24);
	tcase_add_test(tc, tree_random_exact);
	tcase_add_test(tc, tree_random_many);
	tcase_add_test(tc, tree_sendonly);
	tcase_add_test(tc, tree_prefers_unloaded_link);
	tcase_add_test(tc, tree_roots_spread);
	tcase_add_test(tc, tree_unreached);
	suite_add_tcase(s, tc);

	tc = tcase_create("mft");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, mft_setup, mft_teardown);
	tcase_add_test(tc, mft_first_then_nothing);
	tcase_add_test(tc, mft_join_sends_changed_only);
	tcase_add_test(tc, mft_burst_coalesced);
	tcase_add_test(tc, mft_blocks_apart);
	tcase_add_test(tc, mft_leave_clears);
	tcase_add_test(tc, mft_highest_mlid_goes);
	tcase_add_test(tc, mft_unanswered_resent);
	tcase_add_test(tc, mft_top);
	tcase_add_test(tc, mft_top_off);
	tcase_add_test(tc, mft_lost_retried);
	tcase_add_test(tc, mft_shared_mlid);
tcase_add_test(tc, mft_topology_change_touched_only);
	tcase_add_test(tc, mft_stale_below_top);
	tcase_add_test(tc, mft_join_waits_for_sweep);
	tcase_add_test(tc, mft_mlid_ceiling);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(mcast_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
