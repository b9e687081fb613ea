/*
 * check_routing_ftree.c - the ftree engine on model fat trees (the
 * bundled gen-topo fabrics): every pair reachable without loops, up/down
 * paths of shortest length, balance per level on complete trees, the
 * all-to-all link load against the ideal (whole and with links cut),
 * disjoint paths for the LIDs of a port with LMC 1-2, the root and
 * compute-node GUID options, and refusal with a reason on fabrics that
 * are not fat trees.
 *
 * The load: every CA port sends to every CA LID; a path adds one to
 * every directed inter-switch link it crosses; the ideal is the total
 * over the number of directed inter-switch links that are up (issue 15).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/routing.h"
#include "routing/verify.h"
#include "model/fabric.h"
#include "sm/lid.h"
#include "sm/topo_file.h"

static void load_topo(struct fabric *f, const char *name)
{
	char path[512], err[256];

	fabric_init(f);
	snprintf(path, sizeof(path), "%s/%s", TOPO_DIR, name);
	ck_assert_msg(topo_load(f, path, err, sizeof(err)) == 0, "%s", err);
}

static bool is_sw(const struct fabric *f, int32_t id)
{
	return f->nodes[id].type == NODE_TYPE_SWITCH;
}

static bool sw_link(const struct fabric *f, const struct fab_port *p)
{
	return p->peer_node != FAB_NONE && is_sw(f, p->peer_node) &&
	       pi_port_state(&p->pi) >= PORT_STATE_INIT;
}

/* Take down every `every`-th switch-to-switch link (both ends). */
static unsigned cut_links(struct fabric *f, unsigned every, unsigned first)
{
	unsigned k = 0, cut = 0;

	for (size_t i = 0; i < f->n_nodes; i++) {
		struct fab_node *n = &f->nodes[i];

		if (!is_sw(f, (int32_t)i))
			continue;
		for (unsigned p = 1; p <= n->num_ports; p++) {
			struct fab_port *pt = &n->ports[p];

			if (!sw_link(f, pt) || (size_t)pt->peer_node < i)
				continue;
			if (k++ % every != first)
				continue;
			pi_set_port_state(&pt->pi, PORT_STATE_DOWN);
			pi_set_port_state(&f->nodes[pt->peer_node]
					  .ports[pt->peer_port].pi, PORT_STATE_DOWN);
			cut++;
		}
	}
	return cut;
}

static void route_ftree(const struct fabric *f, const struct routing_opts *o,
			struct routing_result *r)
{
	char err[256];
	int rc = routing_run_opts("ftree", f, o, r, err, sizeof(err));

	ck_assert_msg(rc == 0, "ftree: %d %s", rc, err);
	ck_assert_str_eq(r->engine, "ftree");
	ck_assert_msg(strstr(r->summary, "fat tree"), "%s", r->summary);
}

/* Every CA port reaches every LID, no loops, at most max_hops hops. */
static void check_paths(const struct fabric *f, const struct routing_result *r,
			unsigned max_hops)
{
	struct routing_check c;

	ck_assert_int_eq(routing_check(f, r, &c), 0);
	ck_assert_uint_gt(c.pairs, 0);
	ck_assert_msg(routing_check_failures(&c) == 0,
		      "%llu unreachable, %llu loops, %llu misrouted (LID %u "
		      "from node %d)", (unsigned long long)c.unreachable,
		      (unsigned long long)c.loops,
		      (unsigned long long)c.misrouted, c.bad_lid, c.bad_switch);
	ck_assert_uint_le(c.max_hops, max_hops);
}

/*
 * Deadlock freedom: no cycle in any layer's channel dependency graph;
 * CA LIDs always on layer 0 (up/down paths), switch LIDs on layer 1 when
 * there are layers.
 */
static void check_cdg(const struct fabric *f, const struct routing_result *r)
{
	struct routing_cdg cdg;

	ck_assert_int_eq(routing_check_cdg(f, r, &cdg), 0);
	ck_assert_msg(routing_cdg_cycles(&cdg) == 0, "%llu dependency cycles",
		      (unsigned long long)routing_cdg_cycles(&cdg));
	ck_assert_uint_le(r->n_layers, 2);
	for (size_t i = 0; r->n_layers && i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		if (n->type != NODE_TYPE_SWITCH)
			continue;
		for (size_t j = 0; j < f->n_nodes; j++) {
			const struct fab_node *d = &f->nodes[j];
			bool sw = d->type == NODE_TYPE_SWITCH;
			uint16_t lid = sw ? d->ports[0].lid : d->ports[1].lid;

			if (lid)
				ck_assert_uint_eq(routing_layer(r, (int32_t)i, lid),
						  sw ? 1 : 0);
		}
	}
}

/* The switch LID `lid` belongs to, FAB_NONE for a CA LID. */
struct lidinfo {
	int32_t node;		/* owner */
	uint8_t port;
	bool ca;
};

static struct lidinfo *lid_table(const struct fabric *f)
{
	struct lidinfo *t = calloc((size_t)f->max_lid + 1, sizeof(*t));

	ck_assert_ptr_nonnull(t);
	for (size_t l = 0; l <= f->max_lid; l++)
		t[l].node = FAB_NONE;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		bool sw = is_sw(f, (int32_t)i);

		for (unsigned p = sw ? 0 : 1; p <= (sw ? 0u : n->num_ports); p++) {
			const struct fab_port *pt = &n->ports[p];

			if (!pt->lid)
				continue;
			for (unsigned k = 0; k < 1u << pt->lmc; k++) {
				t[pt->lid + k].node = (int32_t)i;
				t[pt->lid + k].port = (uint8_t)p;
				t[pt->lid + k].ca = !sw;
			}
		}
	}
	return t;
}

/* Sources (CA ports with a LID and a link) per switch node id. */
static uint32_t *sources(const struct fabric *f)
{
	uint32_t *src = calloc(f->n_nodes, sizeof(*src));

	ck_assert_ptr_nonnull(src);
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		if (is_sw(f, (int32_t)i))
			continue;
		for (unsigned p = 1; p <= n->num_ports; p++)
			if (n->ports[p].lid && n->ports[p].peer_node != FAB_NONE)
				src[n->ports[p].peer_node]++;
	}
	return src;
}

static uint64_t last_max;	/* load_ratio(): the busiest link's load */

/*
 * All-to-all: the busiest directed link's load over the ideal.  Every
 * CA-to-CA path must take at most max_hops switch-to-switch hops.
 */
static double load_ratio(const struct fabric *f, const struct routing_result *r,
			 unsigned max_hops)
{
	struct lidinfo *lt = lid_table(f);
	uint32_t *src = sources(f);
	uint64_t *load = calloc(f->n_nodes * 256, sizeof(*load));
	uint64_t total = 0, max = 0, links = 0;

	ck_assert_ptr_nonnull(load);
	for (size_t l = 1; l <= f->max_lid; l++) {
		if (!lt[l].ca)
			continue;
		for (size_t x = 0; x < f->n_nodes; x++) {
			int32_t cur = (int32_t)x;
			unsigned hops = 0;

			if (!src[x])
				continue;
			while (is_sw(f, cur) && hops++ < 16) {
				uint8_t q = r->lft[cur].port[l];
				const struct fab_port *o = &f->nodes[cur].ports[q];

				if (q == 0 || q == LFT_NO_PATH)
					break;
				if (!sw_link(f, o)) {
					cur = o->peer_node;	/* arrived */
					break;
				}
				load[(size_t)cur * 256 + q] += src[x];
				cur = o->peer_node;
			}
			ck_assert_msg(cur == lt[l].node && hops <= max_hops + 1,
				      "LID %zu from switch %zu: %u hops", l, x,
				      hops - 1);
		}
	}
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		if (!is_sw(f, (int32_t)i))
			continue;
		for (unsigned p = 1; p <= n->num_ports; p++) {
			if (!sw_link(f, &n->ports[p]))
				continue;
			links++;
			total += load[i * 256 + p];
			if (load[i * 256 + p] > max)
				max = load[i * 256 + p];
		}
	}
	free(lt);
	free(src);
	free(load);
	last_max = max;
	ck_assert_uint_gt(total, 0);
	return (double)max * (double)links / (double)total;
}

/*
 * Level of each switch from the leaves (BFS), for the balance check:
 * returns the highest level.
 */
static int levels(const struct fabric *f, const uint32_t *src, int *lvl)
{
	int32_t *q = malloc(f->n_nodes * sizeof(*q));
	size_t head = 0, tail = 0;
	int top = 0;

	for (size_t i = 0; i < f->n_nodes; i++) {
		lvl[i] = -1;
		if (is_sw(f, (int32_t)i) && src[i]) {
			lvl[i] = 0;
			q[tail++] = (int32_t)i;
		}
	}
	while (head < tail) {
		int32_t x = q[head++];

		for (unsigned p = 1; p <= f->nodes[x].num_ports; p++) {
			const struct fab_port *pt = &f->nodes[x].ports[p];

			if (sw_link(f, pt) && lvl[pt->peer_node] < 0) {
				lvl[pt->peer_node] = lvl[x] + 1;
				if (lvl[x] + 1 > top)
					top = lvl[x] + 1;
				q[tail++] = pt->peer_node;
			}
		}
	}
	free(q);
	return top;
}

/*
 * Balance on a complete tree: at every level, every up-port of every
 * switch carries the same number of CA destination LIDs, +-1.
 */
static void check_balance_within(const struct fabric *f,
				 const struct routing_result *r, uint32_t slack)
{
	struct lidinfo *lt = lid_table(f);
	uint32_t *src = sources(f);
	int *lvl = malloc(f->n_nodes * sizeof(*lvl));
	int top = levels(f, src, lvl);

	for (int l = 0; l < top; l++) {
		uint32_t lo = UINT32_MAX, hi = 0;

		for (size_t i = 0; i < f->n_nodes; i++) {
			const struct fab_node *n = &f->nodes[i];
			uint32_t cnt[256] = { 0 };

			if (lvl[i] != l)
				continue;
			for (size_t d = 1; d <= f->max_lid; d++)
				if (lt[d].ca)
					cnt[r->lft[i].port[d]]++;
			for (unsigned p = 1; p <= n->num_ports; p++) {
				const struct fab_port *pt = &n->ports[p];

				if (!sw_link(f, pt) || lvl[pt->peer_node] != l + 1)
					continue;
				if (cnt[p] < lo)
					lo = cnt[p];
				if (cnt[p] > hi)
					hi = cnt[p];
			}
		}
		ck_assert_msg(hi > 0 && hi - lo <= slack, "level %d up-ports carry "
			      "%u to %u destinations", l, lo, hi);
	}
	free(lt);
	free(src);
	free(lvl);
}


static void check_balance(const struct fabric *f, const struct routing_result *r)
{
	check_balance_within(f, r, 1);
}

/* ---- a k-ary n-tree built by hand (4 levels: gen-topo stops at 3) ---- */

static void port_up(struct fab_port *p)
{
	p->valid = true;
	memset(&p->pi, 0, sizeof(p->pi));
	p->pi.local_port = p->num;
	pi_set_port_state(&p->pi, PORT_STATE_ACTIVE);
	pi_set_phys_state(&p->pi, PHYS_STATE_LINKUP);
}

static void wire(struct fabric *f, int32_t a, unsigned pa, int32_t b,
		 unsigned pb)
{
	ck_assert_int_eq(fabric_link(f, a, (uint8_t)pa, b, (uint8_t)pb), 0);
	port_up(&f->nodes[a].ports[pa]);
	port_up(&f->nodes[b].ports[pb]);
}

/*
 * Levels 0 (leaves) .. n-1, k^(n-1) switches each, labelled by n-1
 * digits base k; switch (l, w) has down-ports 1..k and up-ports
 * k+1..2k, up-port k+1+j going to (l+1, w with digit l set to j).
 * Every leaf has k hosts.
 */
static void kary_ntree(struct fabric *f, unsigned k, unsigned n)
{
	unsigned per = 1, id = 0;
	int32_t sw[4][64];

	for (unsigned i = 1; i < n; i++)
		per *= k;
	ck_assert_uint_le(n, 4);
	ck_assert_uint_le(per, 64);
	fabric_init(f);
	for (unsigned l = 0; l < n; l++)
		for (unsigned w = 0; w < per; w++) {
			sw[l][w] = fabric_add_node(f, 0x100000 + id++,
						   NODE_TYPE_SWITCH,
						   (uint8_t)(2 * k));
			ck_assert_int_ge(sw[l][w], 0);
			port_up(&f->nodes[sw[l][w]].ports[0]);
		}
	for (unsigned l = 0; l + 1 < n; l++) {
		unsigned pow = 1;

		for (unsigned i = 0; i < l; i++)
			pow *= k;
		for (unsigned w = 0; w < per; w++) {
			unsigned digit = w / pow % k;

			for (unsigned j = 0; j < k; j++) {
				unsigned w2 = w - digit * pow + j * pow;

				wire(f, sw[l][w], k + 1 + j, sw[l + 1][w2],
				     digit + 1);
			}
		}
	}
	for (unsigned w = 0; w < per; w++)
		for (unsigned h = 0; h < k; h++) {
			int32_t ca = fabric_add_node(f, 0x200000 + id++ * 2,
						     NODE_TYPE_CA, 1);

			ck_assert_int_ge(ca, 0);
			f->nodes[ca].ports[1].guid = f->nodes[ca].guid + 1;
			wire(f, ca, 1, sw[0][w], h + 1);
		}
}

/* ---- tests ------------------------------------------------------------ */

/* Complete 2- and 3-level trees: all paths, shortest up/down lengths,
 * +-1 balance per level and the all-to-all load at the ideal. */
START_TEST(test_complete_trees)
{
	static const struct {
		const char *file;
		unsigned max_hops;	/* 2 x (levels - 1) */
		double ratio;		/* at most */
	} trees[] = {
		{ "fat2-small.net", 2, 1.0001 },
		{ "fat2-128.net", 2, 1.0001 },
		{ "fat2-1152.net", 2, 1.0001 },
		{ "twoport-16.net", 2, 1.0001 },
		/* 4 leaves under 4 spines, 2 cores over each: the spine-core
		 * links carry 4/3 of the mean, whatever the routing */
		{ "fat3-pods.net", 4, 1.3334 },
	};
	for (size_t i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
		struct fabric f;
		struct routing_result r;
		double ratio;

		load_topo(&f, trees[i].file);
		ck_assert_int_eq(lid_assign_sequential(&f, 0), 0);
		route_ftree(&f, NULL, &r);
		check_paths(&f, &r, trees[i].max_hops);
		check_cdg(&f, &r);
		ck_assert_uint_eq(r.n_layers, 0);	/* one VL is enough */
		/* the top switches' LIDs among themselves are not up/down:
		 * ftree checked the dependencies itself, and says so, so
		 * that the daemon does not walk them a second time */
		ck_assert_msg(r.cdg_acyclic, "%s", trees[i].file);
		check_balance(&f, &r);
		ratio = load_ratio(&f, &r, trees[i].max_hops);
		ck_assert_msg(ratio <= trees[i].ratio, "%s: max/ideal %.3f",
			      trees[i].file, ratio);
		routing_result_free(&r);
		fabric_free(&f);
	}
}
END_TEST

/*
 * 4 levels (a 3-ary 4-tree: 27 switches per level, 81 hosts).  Traffic
 * within a subtree stays below its top, so the upper links carry less
 * than a leaf's: the busiest link must carry exactly a leaf's flows over
 * its up-links, 3 x 78 / 3 (1.15 of the mean, the best possible).
 */
START_TEST(test_four_levels)
{
	struct fabric f;
	struct routing_result r;
	double ratio;

	kary_ntree(&f, 3, 4);
	ck_assert_int_eq(lid_assign_sequential(&f, 0), 0);
	route_ftree(&f, NULL, &r);
	ck_assert_msg(strstr(r.summary, "4 levels, 27 leaves, 27 roots"), "%s",
		      r.summary);
	check_paths(&f, &r, 6);
	check_cdg(&f, &r);
	ratio = load_ratio(&f, &r, 6);
	ck_assert_msg(last_max == 78 && ratio < 1.15, "max %llu, max/ideal "
		      "%.3f %s", (unsigned long long)last_max, ratio, r.summary);
	/* the up-ports' destination counts (carrying traffic or not) */
	check_balance_within(&f, &r, 2);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* minhop on the same tree is far from the ideal: the metric can fail. */
START_TEST(test_minhop_unbalanced)
{
	struct fabric f;
	struct routing_result r;
	char err[256];

	load_topo(&f, "fat3-pods.net");
	ck_assert_int_eq(lid_assign_sequential(&f, 0), 0);
	ck_assert_int_eq(routing_run("minhop", &f, &r, err, sizeof(err)), 0);
	ck_assert_double_gt(load_ratio(&f, &r, 4), 2.0);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/*
 * When a leaf's destinations cannot divide evenly over its links, the
 * flow strategy runs first and the chain stops once one of its links
 * carries more than the flow strategy's busiest (ftree.c): the summary
 * says so, and the busiest link it names is the one the walk of the
 * tables finds.  (That the tables are the ones the chain-first order
 * chose was checked on every bundled topology and the 4,608-host tree
 * by comparing routebench --dump output.)
 */
START_TEST(test_flow_first)
{
	struct fabric f;
	struct routing_result r;
	unsigned long long busiest = 0, over = 0;
	const char *p;

	load_topo(&f, "fat3-128-deg.net");
	ck_assert_int_eq(lid_assign_sequential(&f, 0), 0);
	route_ftree(&f, NULL, &r);
	check_paths(&f, &r, 8);
	check_cdg(&f, &r);
	p = strstr(r.summary, "flow: busiest link ");
	ck_assert_msg(p, "%s", r.summary);
	ck_assert_int_eq(sscanf(p, "flow: busiest link %llu flows (chain over "
				"%llu, stopped", &busiest, &over), 2);
	ck_assert_uint_eq(over, busiest);
	load_ratio(&f, &r, 4);
	ck_assert_uint_eq(last_max, busiest);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* About 5% of the switch links down: still all paths, still balanced
 * within 1.30 of the ideal on the 1,152-host tree, no fallback. */
START_TEST(test_degraded)
{
	for (unsigned first = 0; first < 3; first++) {
		struct fabric f;
		struct routing_result r;
		unsigned cut;
		double ratio;

		load_topo(&f, "fat2-1152.net");
		cut = cut_links(&f, 20, first * 7);
		ck_assert_uint_ge(cut, 55);
		ck_assert_int_eq(lid_assign_sequential(&f, 0), 0);
		route_ftree(&f, NULL, &r);
		/* a switch LID may need a detour: leaf, spine, leaf, spine */
		check_paths(&f, &r, 3);
		check_cdg(&f, &r);
		ratio = load_ratio(&f, &r, 2);
		ck_assert_msg(ratio <= 1.30, "%u links cut: max/ideal %.3f",
			      cut, ratio);
		routing_result_free(&r);
		fabric_free(&f);
	}
}
END_TEST

/* A 3-level tree with a few spine-core and leaf-spine links down. */
START_TEST(test_degraded_3level)
{
	struct fabric f;
	struct routing_result r;

	load_topo(&f, "fat3-pods.net");
	ck_assert_uint_ge(cut_links(&f, 24, 5), 4);
	ck_assert_int_eq(lid_assign_sequential(&f, 0), 0);
	route_ftree(&f, NULL, &r);
	check_paths(&f, &r, 6);
	load_ratio(&f, &r, 4);		/* CA to CA: up, then down */
	check_cdg(&f, &r);
	/* Whether the detours need a second layer depends on the paths the
	 * dependency check counts (switches with CAs as sources): when they
	 * do, the summary says so; either way check_cdg() found no cycle. */
	ck_assert(r.n_layers == 0 || r.n_layers == 2);
	ck_assert(r.cdg_acyclic);	/* whichever: checked as returned */
	if (r.n_layers == 2)
		ck_assert_msg(strstr(r.summary, "switch LIDs on SL 1"), "%s",
			      r.summary);
	unsigned layers = r.n_layers;
	routing_result_free(&r);

	/* one layer only: refused, with the reason, when a second is needed */
	{
		struct routing_opts o = { .max_layers = 1 };
		char err[256];
		int rc = routing_run_opts("ftree,no_fallback", &f, &o, &r, err,
					  sizeof(err));

		if (layers == 2) {
			ck_assert_int_eq(rc, -ENOSPC);
			ck_assert_msg(strstr(err, "second layer"), "%s", err);
		} else {
			ck_assert_int_eq(rc, 0);
			check_cdg(&f, &r);
			routing_result_free(&r);
		}
	}
	fabric_free(&f);
}
END_TEST

/*
 * A 3-level tree (8 pods x 2 leaves x 8 hosts, 8 spines per pod, 16
 * cores) with 13 of its 256 switch links cut, among them two cores'
 * links into one pod and a spine's link to a leaf of that pod: the
 * sources must steer that pod's traffic over the cores and spines that
 * still reach it.  Judging only the first links of a path, ftree put
 * 240 flows (1.96 of the mean) on a core's last link into the pod.
 */
START_TEST(test_degraded_pods)
{
	struct fabric f;
	struct routing_result r;
	double ratio;

	load_topo(&f, "fat3-128-deg.net");
	ck_assert_int_eq(lid_assign_sequential(&f, 0), 0);
	route_ftree(&f, NULL, &r);
	ck_assert_msg(strstr(r.summary, "3 levels, 16 leaves, 16 roots"), "%s",
		      r.summary);
	/* switch LIDs may need detours (any routed neighbour) */
	check_paths(&f, &r, 8);
	check_cdg(&f, &r);
	ratio = load_ratio(&f, &r, 4);	/* CA to CA: up, then down */
	ck_assert_msg(ratio <= 1.30, "max/ideal %.3f (max %llu) %s", ratio,
		      (unsigned long long)last_max, r.summary);
	/* every switch, with CA ports or not, has a route to every LID in
	 * use: a core cut from a pod must still answer LID-routed SMPs from
	 * the hosts there (the diags timed out on 12 switch LIDs when those
	 * routes were dropped) */
	for (size_t x = 0; x < f.n_nodes; x++) {
		if (f.nodes[x].type != NODE_TYPE_SWITCH)
			continue;
		for (size_t n = 0; n < f.n_nodes; n++) {
			const struct fab_node *d = &f.nodes[n];

			for (unsigned p = 0; p <= d->num_ports; p++) {
				uint16_t lid = d->ports[p].lid;

				if (!d->ports[p].valid || !lid ||
				    (d->type == NODE_TYPE_SWITCH && p))
					continue;
				ck_assert_msg(r.lft[x].port[lid] != LFT_NO_PATH,
				      "%s has no route to LID %u", f.nodes[x].desc,
				      lid);
			}
		}
	}
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/*
 * LMC 1 and 2: from every leaf, the LIDs of a remote port leave by as
 * many different up-links as there are LIDs (or up-links), and enter the
 * destination's leaf by as many different down-links.
 */
static void check_disjoint_cut(const char *file, unsigned lmc, unsigned cut)
{
	struct fabric f;
	struct routing_result r;
	struct lidinfo *lt;
	uint32_t *src;

	load_topo(&f, file);
	if (cut)
		ck_assert_uint_gt(cut_links(&f, cut, 3), 0);
	ck_assert_int_eq(lid_assign_sequential(&f, lmc), 0);
	route_ftree(&f, NULL, &r);
	check_paths(&f, &r, 4);
	if (cut)
		ck_assert_msg(strstr(r.summary, "; flow:"), "%s", r.summary);
	lt = lid_table(&f);
	src = sources(&f);
	for (size_t base = 1; base <= f.max_lid; base++) {
		int32_t leaf;
		unsigned dleaf_up = 0;

		if (!lt[base].ca || (base - 1) % (1u << lmc) ||
		    f.nodes[lt[base].node].ports[lt[base].port].lid != base)
			continue;
		leaf = f.nodes[lt[base].node].ports[lt[base].port].peer_node;
		for (unsigned p = 1; p <= f.nodes[leaf].num_ports; p++)
			dleaf_up += sw_link(&f, &f.nodes[leaf].ports[p]);
		for (size_t x = 0; x < f.n_nodes; x++) {
			uint8_t first[8], last[8];
			unsigned nf = 0, nl = 0, up = 0, want;

			if (!src[x] || (int32_t)x == leaf)
				continue;
			for (unsigned p = 1; p <= f.nodes[x].num_ports; p++)
				up += sw_link(&f, &f.nodes[x].ports[p]);
			for (unsigned k = 0; k < 1u << lmc; k++) {
				int32_t cur = (int32_t)x, prev = -1;
				uint8_t q = r.lft[x].port[base + k], in = 0;
				bool seen = false;

				for (unsigned i = 0; i < nf; i++)
					seen |= first[i] == q;
				if (!seen)
					first[nf++] = q;
				/* walk to the leaf: the port it arrives on */
				while (cur != leaf) {
					const struct fab_port *o =
						&f.nodes[cur].ports[r.lft[cur].port[base + k]];

					prev = cur;
					in = o->peer_port;
					cur = o->peer_node;
				}
				(void)prev;
				seen = false;
				for (unsigned i = 0; i < nl; i++)
					seen |= last[i] == in;
				if (!seen)
					last[nl++] = in;
			}
			want = 1u << lmc;
			ck_assert_msg(nf == (up < want ? up : want),
				      "%s LMC %u: LID %zu from switch %zu leaves "
				      "by %u up-links of %u", file, lmc, base, x,
				      nf, up);
			ck_assert_msg(nl == (dleaf_up < want ? dleaf_up : want),
				      "%s LMC %u: LID %zu from switch %zu enters "
				      "its leaf by %u links of %u", file, lmc, base,
				      x, nl, dleaf_up);
		}
	}
	free(lt);
	free(src);
	routing_result_free(&r);
	fabric_free(&f);
}

static void check_disjoint(const char *file, unsigned lmc)
{
	check_disjoint_cut(file, lmc, 0);
}

START_TEST(test_lmc_disjoint)
{
	check_disjoint("fat2-small.net", 1);
	check_disjoint("fat2-small.net", 2);
	check_disjoint("fat3-pods.net", 1);
	check_disjoint("fat3-pods.net", 2);
	check_disjoint("fat2-128.net", 2);
	/* links missing: the flow strategy's tables */
	check_disjoint_cut("fat2-1152.net", 1, 20);
}
END_TEST

/* Not fat trees: refused with the switch and the reason named. */
START_TEST(test_refuse)
{
	static const char *const files[] = {
		"torus-4x4.net", "torus-3x3x3.net", "mesh-4x4.net",
		"random-24.net", "dualrail-32.net",
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct fabric f;
		struct routing_result r;
		char err[256];
		int rc;

		load_topo(&f, files[i]);
		ck_assert_int_eq(lid_assign_sequential(&f, 0), 0);
		rc = routing_run("ftree,no_fallback", &f, &r, err, sizeof(err));
		ck_assert_int_eq(rc, -EINVAL);
		ck_assert_msg(strstr(err, "links within its own level") &&
			      strstr(err, "not a fat tree") &&
			      strstr(err, "switch 0x"), "%s: %s", files[i], err);
		ck_assert_ptr_null(r.lft);
		/* the chain falls back */
		ck_assert_int_eq(routing_run("ftree,minhop", &f, &r, err,
					     sizeof(err)), 0);
		ck_assert_str_eq(r.engine, "minhop");
		ck_assert_msg(strstr(r.fallback, "links within its own level"),
			      "%s", r.fallback);
		routing_result_free(&r);
		fabric_free(&f);
	}
}
END_TEST

static size_t guids_of(const struct fabric *f, const char *prefix,
		       uint64_t *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < f->n_nodes && n < max; i++)
		if (!strncmp(f->nodes[i].desc, prefix, strlen(prefix)))
			out[n++] = f->nodes[i].guid;
	return n;
}

/* root_guid_file: the cores as roots route as found; leaves as roots
 * are refused (the other leaves are at the wrong rank). */
START_TEST(test_root_guids)
{
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { 0 };
	uint64_t g[64];
	char err[256];

	load_topo(&f, "fat3-pods.net");
	ck_assert_int_eq(lid_assign_sequential(&f, 0), 0);
	o.root_guids = g;
	o.n_root_guids = guids_of(&f, "core", g, 64);
	ck_assert_uint_eq(o.n_root_guids, 8);
	route_ftree(&f, &o, &r);
	ck_assert_msg(strstr(r.summary, "3 levels") &&
		      strstr(r.summary, "root_guid_file"), "%s", r.summary);
	check_paths(&f, &r, 4);
	check_balance(&f, &r);
	routing_result_free(&r);

	o.n_root_guids = guids_of(&f, "leaf-p01", g, 64);
	ck_assert_uint_eq(o.n_root_guids, 4);
	ck_assert_int_eq(routing_run_opts("ftree,no_fallback", &f, &o, &r, err, sizeof(err)),
			 -EINVAL);
	ck_assert_msg(strstr(err, "rank"), "%s", err);

	g[0] = 0x1234;		/* nobody */
	o.n_root_guids = 1;
	ck_assert_int_eq(routing_run_opts("ftree,no_fallback", &f, &o, &r, err, sizeof(err)),
			 -ENOENT);
	ck_assert_msg(strstr(err, "root GUID"), "%s", err);
	fabric_free(&f);
}
END_TEST

/* cn_guid_file: the compute nodes make the leaves; none found: refused. */
START_TEST(test_cn_guids)
{
	struct fabric f;
	struct routing_result r;
	struct routing_opts o = { 0 };
	uint64_t g[64];
	size_t n = 0;
	char err[256];

	load_topo(&f, "fat2-small.net");
	ck_assert_int_eq(lid_assign_sequential(&f, 0), 0);
	for (size_t i = 0; i < f.n_nodes; i++)
		if (!is_sw(&f, (int32_t)i))
			g[n++] = f.nodes[i].ports[1].guid;
	o.cn_guids = g;
	o.n_cn_guids = n;
	route_ftree(&f, &o, &r);
	ck_assert_msg(strstr(r.summary, "4 leaves"), "%s", r.summary);
	check_paths(&f, &r, 2);
	routing_result_free(&r);

	g[0] = 0x1234;
	o.n_cn_guids = 1;
	ck_assert_int_eq(routing_run_opts("ftree,no_fallback", &f, &o, &r, err, sizeof(err)),
			 -ENOENT);
	ck_assert_msg(strstr(err, "cn_guid_file"), "%s", err);
	fabric_free(&f);
}
END_TEST

/*
 * The same fabric with its nodes in another order (a sweep that started
 * elsewhere: a standby taking over) routes to the same tables, switch by
 * switch (by GUID): ftree numbers switches by GUID, so a new master does
 * not reprogram every LFT.
 */
static void copy_permuted(const struct fabric *f, struct fabric *g)
{
	int32_t *map = calloc(f->n_nodes, sizeof(*map));

	ck_assert_ptr_nonnull(map);
	fabric_init(g);
	for (size_t k = 0; k < f->n_nodes; k++) {
		/* odd positions backwards, then even ones forwards */
		size_t i = k < f->n_nodes / 2 ? f->n_nodes - 1 - 2 * k
					       : 2 * (k - f->n_nodes / 2);
		const struct fab_node *n;

		if (i >= f->n_nodes)
			i = f->n_nodes - 1 - k;
		n = &f->nodes[i];
		map[i] = fabric_add_node(g, n->guid, n->type, n->num_ports);
		ck_assert_int_ge(map[i], 0);
	}
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		struct fab_node *m = &g->nodes[map[i]];

		memcpy(m->desc, n->desc, sizeof(m->desc));
		for (unsigned p = 0; p <= n->num_ports; p++) {
			const struct fab_port *a = &n->ports[p];

			m->ports[p].valid = a->valid;
			m->ports[p].guid = a->guid;
			m->ports[p].pi = a->pi;
			m->ports[p].lid = a->lid;
			m->ports[p].lmc = a->lmc;
			if (a->peer_node != FAB_NONE && (size_t)a->peer_node > i)
				ck_assert_int_eq(fabric_link(g, map[i], (uint8_t)p,
						 map[a->peer_node], a->peer_port), 0);
		}
	}
	g->max_lid = f->max_lid;
	free(map);
}

START_TEST(test_order_independent)
{
	struct fabric f, g;
	struct routing_result a = { 0 }, b = { 0 };
	unsigned same = 0;

	load_topo(&f, "fat3-pods.net");
	ck_assert_int_eq(lid_assign_sequential(&f, 0), 0);
	copy_permuted(&f, &g);
	route_ftree(&f, NULL, &a);
	route_ftree(&g, NULL, &b);
	for (size_t i = 0; i < f.n_nodes; i++) {
		int32_t j = fabric_find(&g, f.nodes[i].guid);

		if (!a.lft[i].port)
			continue;
		ck_assert_int_ne(j, FAB_NONE);
		ck_assert_uint_eq(a.lft[i].top, b.lft[j].top);
		ck_assert_mem_eq(a.lft[i].port, b.lft[j].port,
				 (size_t)a.lft[i].top + 1);
		same++;
	}
	ck_assert_uint_eq(same, 40);
	routing_result_free(&a);
	routing_result_free(&b);
	fabric_free(&f);
	fabric_free(&g);
}
END_TEST

static Suite *ftree_suite(void)
{
	Suite *s = suite_create("routing_ftree");
	TCase *tc = tcase_create("ftree");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_complete_trees);
	tcase_add_test(tc, test_four_levels);
	tcase_add_test(tc, test_minhop_unbalanced);
	tcase_add_test(tc, test_flow_first);
	tcase_add_test(tc, test_degraded);
	tcase_add_test(tc, test_degraded_3level);
	tcase_add_test(tc, test_degraded_pods);
	tcase_add_test(tc, test_lmc_disjoint);
	tcase_add_test(tc, test_refuse);
	tcase_add_test(tc, test_root_guids);
	tcase_add_test(tc, test_cn_guids);
	tcase_add_test(tc, test_order_independent);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ftree_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
