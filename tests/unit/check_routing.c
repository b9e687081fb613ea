/*
 * check_routing.c - the engine table, the fallback chain, minhop on
 * hand-built fabrics (line, ring, fat tree, parallel links, dual rail,
 * LMC) and the table verifier.
 *
 * Every routed fabric goes through check_tables(): a walk from every
 * switch to every LID through the LFTs must arrive at the port that owns
 * the LID in exactly the BFS hop count of the switch graph (min hop), own
 * LIDs go to port 0, and the verifier agrees.
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

#define NET_EXAMPLES	"/usr/share/doc/ibsim-utils/net-examples"

/* ---- building fabrics by hand ---------------------------------------- */

static void port_up(struct fab_port *p)
{
	p->valid = true;
	memset(&p->pi, 0, sizeof(p->pi));
	p->pi.local_port = p->num;
	pi_set_port_state(&p->pi, PORT_STATE_ACTIVE);
	pi_set_phys_state(&p->pi, PHYS_STATE_LINKUP);
}

static int32_t add_node(struct fabric *f, uint8_t type, unsigned nports)
{
	uint64_t base = type == NODE_TYPE_SWITCH ? 0x1000000 : 0x2000000;
	int32_t id = fabric_add_node(f, base + f->n_nodes * 0x100, type,
				     (uint8_t)nports);

	ck_assert_int_ge(id, 0);
	snprintf(f->nodes[id].desc, sizeof(f->nodes[id].desc), "%s-%d",
		 type == NODE_TYPE_SWITCH ? "sw" : "ca", id);
	if (type == NODE_TYPE_SWITCH)
		port_up(&f->nodes[id].ports[0]);
	return id;
}

static int32_t add_sw(struct fabric *f, unsigned nports)
{
	return add_node(f, NODE_TYPE_SWITCH, nports);
}

static int32_t add_ca(struct fabric *f, unsigned nports)
{
	return add_node(f, NODE_TYPE_CA, nports);
}

static void connect(struct fabric *f, int32_t a, unsigned pa, int32_t b,
		    unsigned pb)
{
	ck_assert_int_eq(fabric_link(f, a, (uint8_t)pa, b, (uint8_t)pb), 0);
	port_up(&f->nodes[a].ports[pa]);
	port_up(&f->nodes[b].ports[pb]);
}

/* Sequential LIDs: switches (LMC 0), then linked CA/router ports. */
static void assign_lids(struct fabric *f, unsigned lmc)
{
	ck_assert_int_eq(lid_assign_sequential(f, lmc), 0);
}

static void route(const struct fabric *f, struct routing_result *r)
{
	char err[256];
	int rc = routing_run("minhop", f, r, err, sizeof(err));

	ck_assert_msg(rc == 0, "minhop: %d %s", rc, err);
	ck_assert_str_eq(r->engine, "minhop");
	ck_assert_uint_eq(r->n_nodes, f->n_nodes);
}

/* ---- checking the tables --------------------------------------------- */

static bool up(const struct fabric *f, const struct fab_port *p)
{
	const struct fab_port *q;

	if (!p->valid || p->peer_node == FAB_NONE ||
	    pi_port_state(&p->pi) < PORT_STATE_INIT)
		return false;
	q = &f->nodes[p->peer_node].ports[p->peer_port];
	return q->valid && pi_port_state(&q->pi) >= PORT_STATE_INIT;
}

static bool is_sw(const struct fabric *f, int32_t id)
{
	return f->nodes[id].type == NODE_TYPE_SWITCH;
}

/* Hop counts from switch `src` to every node id (switches only), -1 far. */
static void bfs(const struct fabric *f, int32_t src, int *dist)
{
	int32_t *queue = malloc(f->n_nodes * sizeof(*queue));
	size_t head = 0, tail = 0;

	for (size_t i = 0; i < f->n_nodes; i++)
		dist[i] = -1;
	dist[src] = 0;
	queue[tail++] = src;
	while (head < tail) {
		int32_t x = queue[head++];
		const struct fab_node *n = &f->nodes[x];

		for (unsigned p = 1; p <= n->num_ports; p++) {
			const struct fab_port *pt = &n->ports[p];

			if (!up(f, pt) || !is_sw(f, pt->peer_node) ||
			    dist[pt->peer_node] >= 0)
				continue;
			dist[pt->peer_node] = dist[x] + 1;
			queue[tail++] = pt->peer_node;
		}
	}
	free(queue);
}

struct owner {
	int32_t node;		/* FAB_NONE: free LID */
	unsigned port;
	int32_t sw;		/* switch it hangs off, FAB_NONE: none */
};

static struct owner *owners(const struct fabric *f)
{
	struct owner *o = calloc((size_t)f->max_lid + 1, sizeof(*o));

	for (size_t l = 0; l <= f->max_lid; l++)
		o[l].node = o[l].sw = FAB_NONE;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		bool sw = n->type == NODE_TYPE_SWITCH;

		for (unsigned p = sw ? 0 : 1; p <= (sw ? 0u : n->num_ports); p++) {
			const struct fab_port *pt = &n->ports[p];
			int32_t att = FAB_NONE;

			if (!pt->lid)
				continue;
			if (sw)
				att = (int32_t)i;
			else if (up(f, pt) && is_sw(f, pt->peer_node))
				att = pt->peer_node;
			for (unsigned k = 0; k < 1u << pt->lmc; k++) {
				ck_assert_int_eq(o[pt->lid + k].node, FAB_NONE);
				o[pt->lid + k] = (struct owner){ (int32_t)i, p, att };
			}
		}
	}
	return o;
}

/*
 * Walk from switch s to LID l; returns switch hops, or -1 when the walk
 * does not arrive at the owner (dead end, wrong port, loop).
 */
static int walk(const struct fabric *f, const struct routing_result *r,
		int32_t s, unsigned l, const struct owner *o)
{
	for (int hops = 0; hops <= (int)f->n_nodes; hops++) {
		const struct lft *t = &r->lft[s];
		const struct fab_port *pt;
		unsigned e;

		ck_assert_ptr_nonnull(t->port);
		ck_assert_uint_eq(t->top, f->max_lid);
		e = t->port[l];
		if (e == LFT_NO_PATH)
			return -1;
		if (e == 0)
			return o->node == s && o->port == 0 ? hops : -1;
		ck_assert_uint_le(e, f->nodes[s].num_ports);
		pt = &f->nodes[s].ports[e];
		if (!up(f, pt))
			return -1;
		if (!is_sw(f, pt->peer_node))
			return pt->peer_node == o->node && pt->peer_port == o->port ?
				hops : -1;
		s = pt->peer_node;
	}
	return -1;				/* a loop */
}

/*
 * Every switch reaches every LID whose owner hangs off a switch it can
 * reach, in the BFS hop count; the rest is LFT_NO_PATH.  Returns the
 * number of (CA port, LID) pairs the verifier walked.
 */
static uint64_t check_tables(const struct fabric *f, const struct routing_result *r)
{
	struct owner *o = owners(f);
	int *dist = malloc(f->n_nodes * sizeof(*dist));
	struct routing_check chk;
	bool all_reachable = true;

	for (size_t s = 0; s < f->n_nodes; s++) {
		if (!is_sw(f, (int32_t)s)) {
			ck_assert_ptr_null(r->lft[s].port);
			continue;
		}
		bfs(f, (int32_t)s, dist);
		ck_assert_uint_eq(r->lft[s].port[0], LFT_NO_PATH);
		for (unsigned l = 1; l <= f->max_lid; l++) {
			int want = o[l].sw == FAB_NONE ? -1 : dist[o[l].sw];
			int got = walk(f, r, (int32_t)s, l, &o[l]);

			if (o[l].node == FAB_NONE || want < 0) {
				ck_assert_msg(r->lft[s].port[l] == LFT_NO_PATH,
					      "switch %zu LID %u: port %u, want "
					      "none", s, l, r->lft[s].port[l]);
				if (o[l].node != FAB_NONE)
					all_reachable = false;
				continue;
			}
			ck_assert_msg(got == want, "switch %zu LID %u: %d hops, "
				      "BFS says %d", s, l, got, want);
			if (o[l].node == (int32_t)s)
				ck_assert_uint_eq(r->lft[s].port[l], 0);
		}
	}
	ck_assert_int_eq(routing_check(f, r, &chk), 0);
	if (all_reachable)
		ck_assert_msg(routing_check_failures(&chk) == 0, "verifier: %llu "
			      "unreachable %llu loops %llu misrouted",
			      (unsigned long long)chk.unreachable,
			      (unsigned long long)chk.loops,
			      (unsigned long long)chk.misrouted);
	free(o);
	free(dist);
	return chk.pairs;
}

/* CA/router LIDs switch s sends out of port p. */
static unsigned ca_lids_via(const struct fabric *f, const struct routing_result *r,
			    int32_t s, unsigned p)
{
	struct owner *o = owners(f);
	unsigned n = 0;

	for (unsigned l = 1; l <= f->max_lid; l++)
		if (o[l].node != FAB_NONE && !is_sw(f, o[l].node) &&
		    r->lft[s].port[l] == p)
			n++;
	free(o);
	return n;
}

/* ---- fabrics ----------------------------------------------------------- */

/* n switches in a line (port 1 left, 2 right), `cas` CAs on ports 3... */
static void build_line(struct fabric *f, unsigned n, unsigned cas)
{
	fabric_init(f);
	for (unsigned i = 0; i < n; i++) {
		int32_t s = add_sw(f, 2 + cas);

		if (i)
			connect(f, s - 1 - (int32_t)cas, 2, s, 1);
		for (unsigned c = 0; c < cas; c++)
			connect(f, add_ca(f, 1), 1, s, 3 + c);
	}
}

/* n switches in a ring (port 1 to the previous, 2 to the next), one CA */
static void build_ring(struct fabric *f, unsigned n, int32_t *sw)
{
	fabric_init(f);
	for (unsigned i = 0; i < n; i++) {
		sw[i] = add_sw(f, 3);
		connect(f, add_ca(f, 1), 1, sw[i], 3);
	}
	for (unsigned i = 0; i < n; i++)
		connect(f, sw[i], 2, sw[(i + 1) % n], 1);
}

/*
 * Two-level fat tree: leaf ports 1..hosts to CAs, hosts+1.. to the spines
 * (uplink j to spine j); spine port i+1 to leaf i.
 */
static void build_fat2(struct fabric *f, unsigned leaves, unsigned spines,
		       unsigned hosts, int32_t *leaf, int32_t *spine)
{
	fabric_init(f);
	for (unsigned s = 0; s < spines; s++)
		spine[s] = add_sw(f, leaves);
	for (unsigned i = 0; i < leaves; i++) {
		leaf[i] = add_sw(f, hosts + spines);
		for (unsigned h = 0; h < hosts; h++)
			connect(f, add_ca(f, 1), 1, leaf[i], h + 1);
		for (unsigned s = 0; s < spines; s++)
			connect(f, leaf[i], hosts + 1 + s, spine[s], i + 1);
	}
}

/* ---- tests: engine table and chain ------------------------------------ */

START_TEST(engine_table)
{
	const struct routing_engine *e = routing_find("minhop");

	ck_assert_ptr_nonnull(e);
	ck_assert_str_eq(e->name, "minhop");
	ck_assert_ptr_nonnull(e->route);
	ck_assert_ptr_null(routing_find("bogus"));
	ck_assert_ptr_null(routing_find(""));
	ck_assert_ptr_null(routing_find("minhop,"));
}
END_TEST

START_TEST(engine_chain)
{
	struct fabric f;
	struct routing_result r;
	char err[256];

	build_line(&f, 2, 1);
	assign_lids(&f, 0);

	/* an unknown name anywhere in the list is an error, naming it */
	ck_assert_int_eq(routing_run("bogus,minhop", &f, &r, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "\"bogus\""));
	ck_assert_ptr_null(r.lft);
	ck_assert_int_eq(routing_run("minhop,updn2", &f, &r, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "\"updn2\""));
	ck_assert_int_eq(routing_run("", &f, &r, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(routing_run("minhop,", &f, &r, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(routing_run(",minhop", &f, &r, err, sizeof(err)), -EINVAL);

	/* known names, with blanks, repeated: the first that works wins */
	ck_assert_int_eq(routing_run(" minhop , minhop", &f, &r, err, sizeof(err)), 0);
	ck_assert_str_eq(r.engine, "minhop");
	ck_assert_str_eq(err, "");
	check_tables(&f, &r);
	routing_result_free(&r);
	ck_assert_ptr_null(r.lft);
	routing_result_free(&r);		/* twice is harmless */

	/* every engine failing: the reasons, per engine, in err */
	f.max_lid = 0;
	ck_assert_int_eq(routing_run("minhop,minhop", &f, &r, err, sizeof(err)),
			 -EINVAL);
	ck_assert_str_eq(err, "minhop: no LIDs assigned; minhop: no LIDs assigned");
	ck_assert_ptr_null(r.lft);
	fabric_free(&f);
}
END_TEST

START_TEST(bad_lids)
{
	struct fabric f;
	struct routing_result r;
	char err[256];

	build_line(&f, 2, 2);
	assign_lids(&f, 0);
	/* two ports with one LID */
	f.nodes[2].ports[1].lid = f.nodes[1].ports[1].lid;	/* two CAs */
	ck_assert_int_eq(routing_run("minhop", &f, &r, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "assigned twice"));
	/* a LID above max_lid */
	assign_lids(&f, 0);
	f.max_lid--;
	ck_assert_int_eq(routing_run("minhop", &f, &r, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "above max_lid"));
	fabric_free(&f);
}
END_TEST

/* ---- tests: minhop ---------------------------------------------------- */

START_TEST(line)
{
	struct fabric f;
	struct routing_result r;

	build_line(&f, 5, 2);
	assign_lids(&f, 0);
	route(&f, &r);
	/* 10 CA ports x 15 LIDs */
	ck_assert_uint_eq(check_tables(&f, &r), 150);
	/* the first switch sends everything beyond it out of port 2 */
	for (unsigned l = 2; l <= f.max_lid; l++) {
		unsigned p = r.lft[0].port[l];

		ck_assert(p == 2 || (l >= 6 && (p == 3 || p == 4)));
	}
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

START_TEST(ring)
{
	struct fabric f;
	struct routing_result r;
	int32_t sw[7];

	/* odd ring: every destination has exactly one shortest way */
	build_ring(&f, 7, sw);
	assign_lids(&f, 0);
	route(&f, &r);
	check_tables(&f, &r);
	routing_result_free(&r);

	/* even ring: the opposite switch is two ways away; both may be used */
	fabric_free(&f);
	build_ring(&f, 6, sw);
	assign_lids(&f, 0);
	route(&f, &r);
	check_tables(&f, &r);
	routing_result_free(&r);

	/* take the link sw[0]-sw[1] down at one end: routes go around */
	pi_set_port_state(&f.nodes[sw[0]].ports[2].pi, PORT_STATE_DOWN);
	route(&f, &r);
	check_tables(&f, &r);
	ck_assert_uint_eq(r.lft[sw[0]].port[f.nodes[sw[1]].ports[0].lid], 1);
	ck_assert_uint_eq(r.lft[sw[1]].port[f.nodes[sw[0]].ports[0].lid], 2);
	routing_result_free(&r);

	/* INIT counts as up (ARMED and ACTIVE too) */
	pi_set_port_state(&f.nodes[sw[0]].ports[2].pi, PORT_STATE_INIT);
	route(&f, &r);
	check_tables(&f, &r);
	ck_assert_uint_eq(r.lft[sw[0]].port[f.nodes[sw[1]].ports[0].lid], 2);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

START_TEST(fat_tree_balance)
{
	enum { LEAVES = 6, SPINES = 4, HOSTS = 7 };
	struct fabric f;
	struct routing_result r;
	int32_t leaf[LEAVES], spine[SPINES];

	build_fat2(&f, LEAVES, SPINES, HOSTS, leaf, spine);
	assign_lids(&f, 0);
	route(&f, &r);
	check_tables(&f, &r);
	for (unsigned i = 0; i < LEAVES; i++) {
		unsigned min = ~0u, max = 0, sum = 0;

		for (unsigned s = 0; s < SPINES; s++) {
			unsigned n = ca_lids_via(&f, &r, leaf[i], HOSTS + 1 + s);

			min = n < min ? n : min;
			max = n > max ? n : max;
			sum += n;
		}
		/* all remote hosts, spread within one LID */
		ck_assert_uint_eq(sum, (LEAVES - 1) * HOSTS);
		ck_assert_msg(max - min <= 1, "leaf %u uplinks: %u..%u", i, min, max);
	}
	/* a spine has one way down to each leaf */
	for (unsigned s = 0; s < SPINES; s++)
		for (unsigned i = 0; i < LEAVES; i++)
			ck_assert_uint_eq(ca_lids_via(&f, &r, spine[s], i + 1), HOSTS);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* k-ary three-level fat tree (k = 4: 4 pods, 16 hosts, 20 switches). */
START_TEST(fat_tree_3level)
{
	enum { K = 4, H = K / 2 };
	struct fabric f;
	struct routing_result r;
	int32_t core[H * H], spine[K][H], leaf[K][H];

	fabric_init(&f);
	for (unsigned c = 0; c < H * H; c++)
		core[c] = add_sw(&f, K);
	for (unsigned p = 0; p < K; p++) {
		for (unsigned s = 0; s < H; s++) {
			spine[p][s] = add_sw(&f, K);
			for (unsigned c = 0; c < H; c++)
				connect(&f, spine[p][s], H + 1 + c, core[s * H + c], p + 1);
		}
		for (unsigned l = 0; l < H; l++) {
			leaf[p][l] = add_sw(&f, K);
			for (unsigned h = 0; h < H; h++)
				connect(&f, add_ca(&f, 1), 1, leaf[p][l], h + 1);
			for (unsigned s = 0; s < H; s++)
				connect(&f, leaf[p][l], H + 1 + s, spine[p][s], l + 1);
		}
	}
	for (unsigned lmc = 0; lmc <= 1; lmc++) {
		assign_lids(&f, lmc);
		route(&f, &r);
		ck_assert_uint_eq(check_tables(&f, &r), (uint64_t)K * H * H *
				  ((K * H * H << lmc) + K * H * 2 + H * H));
		/* each leaf spreads the other 14 hosts' LIDs 7 and 7 */
		for (unsigned p = 0; p < K; p++)
			for (unsigned l = 0; l < H; l++) {
				unsigned a = ca_lids_via(&f, &r, leaf[p][l], H + 1);
				unsigned b = ca_lids_via(&f, &r, leaf[p][l], H + 2);

				ck_assert_uint_eq(a + b, (K * H * H - H) << lmc);
				ck_assert_uint_le(a > b ? a - b : b - a, 1);
			}
		routing_result_free(&r);
	}
	fabric_free(&f);
}
END_TEST

/* A switch with more than 64 neighbour switches (masks of two words). */
START_TEST(many_neighbours)
{
	enum { LEAVES = 100 };
	struct fabric f;
	struct routing_result r;
	int32_t hub1, hub2, leaf[LEAVES];

	fabric_init(&f);
	hub1 = add_sw(&f, LEAVES);
	hub2 = add_sw(&f, LEAVES);
	for (unsigned i = 0; i < LEAVES; i++) {
		leaf[i] = add_sw(&f, 4);
		connect(&f, leaf[i], 1, hub1, i + 1);
		connect(&f, leaf[i], 2, hub2, i + 1);
		connect(&f, add_ca(&f, 1), 1, leaf[i], 3);
	}
	/* a chain among the leaves adds one-hop shortcuts */
	for (unsigned i = 0; i + 1 < LEAVES; i += 2)
		connect(&f, leaf[i], 4, leaf[i + 1], 4);
	assign_lids(&f, 0);
	route(&f, &r);
	check_tables(&f, &r);
	/* leaf 0 reaches most others through both hubs, evenly */
	{
		unsigned a = ca_lids_via(&f, &r, leaf[0], 1);
		unsigned b = ca_lids_via(&f, &r, leaf[0], 2);

		ck_assert_uint_eq(ca_lids_via(&f, &r, leaf[0], 4), 1);
		ck_assert_uint_eq(a + b, LEAVES - 2);
		ck_assert_uint_le(a > b ? a - b : b - a, 1);
	}
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* Irregular graphs: random switch links (a fixed LCG), min hop holds. */
START_TEST(random_graphs)
{
	enum { N = 40, DEG = 5 };
	uint32_t seed = 12345;

	for (unsigned round = 0; round < 8; round++) {
		struct fabric f;
		struct routing_result r;
		int32_t sw[N];
		unsigned next[N];

		fabric_init(&f);
		for (unsigned i = 0; i < N; i++) {
			sw[i] = add_sw(&f, DEG + 2);
			next[i] = 1;
			connect(&f, add_ca(&f, 1), 1, sw[i], DEG + 1);
		}
		/* some random links, parallel ones included; maybe disconnected */
		for (unsigned e = 0; e < N * DEG / 2; e++) {
			unsigned a, b;

			seed = seed * 1103515245u + 12345u;
			a = (seed >> 8) % N;
			seed = seed * 1103515245u + 12345u;
			b = (seed >> 8) % N;
			if (a == b || next[a] > DEG || next[b] > DEG)
				continue;
			connect(&f, sw[a], next[a]++, sw[b], next[b]++);
		}
		assign_lids(&f, round % 3);
		route(&f, &r);
		check_tables(&f, &r);
		routing_result_free(&r);
		fabric_free(&f);
	}
}
END_TEST

/* Three parallel links between two switches share the load. */
START_TEST(parallel_links)
{
	struct fabric f;
	struct routing_result r;
	int32_t a, b;

	fabric_init(&f);
	a = add_sw(&f, 9);
	b = add_sw(&f, 9);
	for (unsigned p = 1; p <= 3; p++)
		connect(&f, a, p, b, p);
	for (unsigned c = 0; c < 6; c++) {
		connect(&f, add_ca(&f, 1), 1, a, 4 + c);
		connect(&f, add_ca(&f, 1), 1, b, 4 + c);
	}
	assign_lids(&f, 0);
	route(&f, &r);
	check_tables(&f, &r);
	for (unsigned p = 1; p <= 3; p++) {
		ck_assert_uint_eq(ca_lids_via(&f, &r, a, p), 2);
		ck_assert_uint_eq(ca_lids_via(&f, &r, b, p), 2);
	}
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/*
 * A CA with one port on each of two leaves: each port's LID is routed to
 * that port; with the planes joined by a spine everything is reachable,
 * as two separate planes each plane only reaches its own LIDs.
 */
START_TEST(dual_rail)
{
	struct fabric f;
	struct routing_result r;
	struct routing_check chk;
	int32_t l1, l2, sp, ca, other;
	uint16_t lid1, lid2;

	fabric_init(&f);
	l1 = add_sw(&f, 8);
	l2 = add_sw(&f, 8);
	sp = add_sw(&f, 8);
	ca = add_ca(&f, 2);
	other = add_ca(&f, 2);
	connect(&f, ca, 1, l1, 1);
	connect(&f, ca, 2, l2, 1);
	connect(&f, other, 1, l1, 2);
	connect(&f, other, 2, l2, 2);
	connect(&f, l1, 8, sp, 1);
	connect(&f, l2, 8, sp, 2);
	assign_lids(&f, 0);
	route(&f, &r);
	ck_assert_uint_eq(check_tables(&f, &r), 4 * 7);
	lid1 = f.nodes[ca].ports[1].lid;
	lid2 = f.nodes[ca].ports[2].lid;
	ck_assert_uint_ne(lid1, lid2);
	ck_assert_uint_eq(r.lft[l1].port[lid1], 1);
	ck_assert_uint_eq(r.lft[l1].port[lid2], 8);	/* via the spine */
	ck_assert_uint_eq(r.lft[l2].port[lid2], 1);
	ck_assert_uint_eq(r.lft[sp].port[lid1], 1);
	ck_assert_uint_eq(r.lft[sp].port[lid2], 2);
	routing_result_free(&r);

	/* unplug the spine: two planes */
	pi_set_port_state(&f.nodes[sp].ports[1].pi, PORT_STATE_DOWN);
	pi_set_port_state(&f.nodes[sp].ports[2].pi, PORT_STATE_DOWN);
	route(&f, &r);
	check_tables(&f, &r);
	ck_assert_uint_eq(r.lft[l1].port[lid1], 1);
	ck_assert_uint_eq(r.lft[l1].port[lid2], LFT_NO_PATH);
	ck_assert_uint_eq(r.lft[l2].port[lid1], LFT_NO_PATH);
	ck_assert_uint_eq(r.lft[l1].port[f.nodes[l2].ports[0].lid], LFT_NO_PATH);
	ck_assert_int_eq(routing_check(&f, &r, &chk), 0);
	/* 4 ports x 7 LIDs; per plane 2 ports reach 2 CA LIDs + 1 switch */
	ck_assert_uint_eq(chk.pairs, 28);
	ck_assert_uint_eq(chk.unreachable, 28 - 2 * 2 * 3);
	ck_assert_uint_eq(chk.loops + chk.misrouted, 0);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* LMC 1 and 2: the LIDs of one port leave a remote leaf on different
 * uplinks (so through different spines) where there are enough. */
START_TEST(lmc_paths)
{
	enum { LEAVES = 4, SPINES = 4, HOSTS = 5 };
	struct fabric f;
	struct routing_result r;
	int32_t leaf[LEAVES], spine[SPINES];

	for (unsigned lmc = 1; lmc <= 2; lmc++) {
		build_fat2(&f, LEAVES, SPINES, HOSTS, leaf, spine);
		assign_lids(&f, lmc);
		route(&f, &r);
		check_tables(&f, &r);
		for (size_t n = 0; n < f.n_nodes; n++) {
			const struct fab_port *pt = &f.nodes[n].ports[1];

			if (is_sw(&f, (int32_t)n))
				continue;
			ck_assert_uint_eq(pt->lmc, lmc);
			for (unsigned i = 0; i < LEAVES; i++) {
				unsigned used = 0;

				if (pt->peer_node == leaf[i])
					continue;
				for (unsigned k = 0; k < 1u << lmc; k++) {
					unsigned p = r.lft[leaf[i]].port[pt->lid + k];

					ck_assert_uint_gt(p, HOSTS);
					ck_assert_msg(!(used & 1u << p), "leaf %u "
						      "LID %u: port %u again", i,
						      pt->lid + k, p);
					used |= 1u << p;
				}
			}
		}
		/* balance still holds per leaf */
		for (unsigned i = 0; i < LEAVES; i++) {
			unsigned min = ~0u, max = 0;

			for (unsigned s = 0; s < SPINES; s++) {
				unsigned c = ca_lids_via(&f, &r, leaf[i], HOSTS + 1 + s);

				min = c < min ? c : min;
				max = c > max ? c : max;
			}
			ck_assert_uint_le(max - min, 1);
		}
		routing_result_free(&r);
		fabric_free(&f);
	}
}
END_TEST

/* LMC 2 over two spines: the four LIDs use both, two each. */
START_TEST(lmc_fewer_paths)
{
	struct fabric f;
	struct routing_result r;
	int32_t leaf[3], spine[2];

	build_fat2(&f, 3, 2, 2, leaf, spine);
	assign_lids(&f, 2);
	route(&f, &r);
	check_tables(&f, &r);
	for (size_t n = 0; n < f.n_nodes; n++) {
		const struct fab_port *pt = &f.nodes[n].ports[1];
		unsigned cnt[3] = { 0 };

		if (is_sw(&f, (int32_t)n) || pt->peer_node == leaf[0])
			continue;
		for (unsigned k = 0; k < 4; k++)
			cnt[r.lft[leaf[0]].port[pt->lid + k] - 2]++;
		ck_assert_uint_eq(cnt[1], 2);
		ck_assert_uint_eq(cnt[2], 2);
	}
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* Switch LID ranges (enhanced port 0 with LMC), routers, CA-to-CA links,
 * unlinked ports and unassigned LIDs. */
START_TEST(odd_endpoints)
{
	struct fabric f;
	struct routing_result r;
	int32_t a, b, ca, rt, lone, c1, c2;
	uint16_t blid;

	fabric_init(&f);
	a = add_sw(&f, 4);
	b = add_sw(&f, 4);
	connect(&f, a, 1, b, 1);
	ca = add_ca(&f, 1);
	connect(&f, ca, 1, a, 2);
	rt = add_node(&f, NODE_TYPE_ROUTER, 2);
	connect(&f, rt, 2, b, 2);
	lone = add_ca(&f, 1);			/* no link at all */
	c1 = add_ca(&f, 1);
	c2 = add_ca(&f, 1);
	connect(&f, c1, 1, c2, 1);		/* back to back, no switch */
	assign_lids(&f, 0);
	ck_assert_uint_eq(f.max_lid, 6);
	ck_assert_uint_eq(f.nodes[lone].ports[1].lid, 0);
	/* b: LIDs 8-11 (LMC 2); 2, 7, 12 and 13 belong to nobody */
	blid = 8;
	f.nodes[b].ports[0].lid = blid;
	f.nodes[b].ports[0].lmc = 2;
	f.max_lid = 13;
	route(&f, &r);
	check_tables(&f, &r);
	for (unsigned k = 0; k < 4; k++) {
		ck_assert_uint_eq(r.lft[b].port[blid + k], 0);
		ck_assert_uint_eq(r.lft[a].port[blid + k], 1);
	}
	ck_assert_uint_eq(r.lft[a].port[f.nodes[rt].ports[2].lid], 1);
	ck_assert_uint_eq(r.lft[b].port[f.nodes[rt].ports[2].lid], 2);
	ck_assert_uint_eq(r.lft[b].port[f.nodes[ca].ports[1].lid], 1);
	ck_assert_uint_eq(r.lft[a].port[f.nodes[c1].ports[1].lid], LFT_NO_PATH);
	for (unsigned l = 12; l <= 13; l++)
		ck_assert_uint_eq(r.lft[a].port[l], LFT_NO_PATH);
	ck_assert_uint_eq(r.lft[a].port[2], LFT_NO_PATH);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* A fabric with no switches routes to empty results. */
START_TEST(no_switches)
{
	struct fabric f;
	struct routing_result r;
	int32_t c1, c2;

	fabric_init(&f);
	c1 = add_ca(&f, 1);
	c2 = add_ca(&f, 1);
	connect(&f, c1, 1, c2, 1);
	assign_lids(&f, 0);
	route(&f, &r);
	ck_assert_ptr_null(r.lft[0].port);
	ck_assert_ptr_null(r.lft[1].port);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* The ibsim examples, loaded from their files, route cleanly. */
START_TEST(ibsim_examples)
{
	static const char *const files[] = {
		"net", "net.1", "net.2sw2path", "net.2sw2path4hca",
		"net.2sw2path4hca2port",
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct fabric f;
		struct routing_result r;
		char path[256], err[256];

		snprintf(path, sizeof(path), "%s/%s", NET_EXAMPLES, files[i]);
		fabric_init(&f);
		ck_assert_msg(topo_load(&f, path, err, sizeof(err)) == 0, "%s", err);
		assign_lids(&f, 1);
		route(&f, &r);
		ck_assert_uint_gt(check_tables(&f, &r), 0);
		routing_result_free(&r);
		fabric_free(&f);
	}
}
END_TEST

/* ---- tests: the verifier finds what is wrong ----------------------------- */

START_TEST(verify_catches_each_kind)
{
	struct fabric f;
	struct routing_result r;
	struct routing_check chk;
	int32_t sw[6];
	uint16_t lid;

	build_ring(&f, 6, sw);
	assign_lids(&f, 0);
	lid = f.nodes[sw[3] + 1].ports[1].lid;	/* the CA on sw[3] */

	/* a loop between sw[0] and sw[1]: the 2 CAs there never arrive */
	route(&f, &r);
	r.lft[sw[0]].port[lid] = 2;
	r.lft[sw[1]].port[lid] = 1;
	ck_assert_int_eq(routing_check(&f, &r, &chk), 0);
	ck_assert_uint_eq(chk.loops, 2);
	ck_assert_uint_eq(chk.unreachable + chk.misrouted, 0);
	ck_assert_uint_eq(chk.bad_lid, lid);
	routing_result_free(&r);

	/* no path at the last switch */
	route(&f, &r);
	r.lft[sw[3]].port[lid] = LFT_NO_PATH;
	ck_assert_int_eq(routing_check(&f, &r, &chk), 0);
	ck_assert_uint_eq(chk.unreachable, 6);
	ck_assert_uint_eq(chk.loops + chk.misrouted, 0);
	routing_result_free(&r);

	/* the last switch sends it to the wrong CA port, or to port 0 */
	route(&f, &r);
	r.lft[sw[3]].port[lid] = 2;		/* on to sw[4] ... */
	r.lft[sw[4]].port[lid] = 3;		/* ... and its CA */
	ck_assert_int_eq(routing_check(&f, &r, &chk), 0);
	ck_assert_uint_gt(chk.misrouted, 0);
	r.lft[sw[3]].port[lid] = 0;
	ck_assert_int_eq(routing_check(&f, &r, &chk), 0);
	ck_assert_uint_eq(chk.misrouted, 6);
	routing_result_free(&r);

	/* a port that is down */
	route(&f, &r);
	pi_set_port_state(&f.nodes[sw[3]].ports[3].pi, PORT_STATE_DOWN);
	ck_assert_int_eq(routing_check(&f, &r, &chk), 0);
	/* 5 sources left (the CA on sw[3] is cut off too); of their 12
	 * LIDs only that CA's fails */
	ck_assert_uint_eq(chk.pairs, 5 * 12);
	ck_assert_uint_eq(chk.unreachable, 5);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* A switch whose LinearFDBCap is below a LID cannot forward it. */
START_TEST(verify_catches_past_cap)
{
	struct fabric f;
	struct routing_result r;
	struct routing_check chk;
	int32_t sw[6];
	uint16_t lid;

	build_ring(&f, 6, sw);
	assign_lids(&f, 0);
	lid = f.max_lid;
	route(&f, &r);
	ck_assert_int_eq(routing_check(&f, &r, &chk), 0);
	ck_assert_uint_eq(routing_check_failures(&chk) + chk.past_cap, 0);

	/* a cap of max_lid: the top LID has no entry on sw[2] */
	f.nodes[sw[2]].has_switch_info = true;
	f.nodes[sw[2]].si.lft_cap = htobe16(lid);
	ck_assert_int_eq(routing_check(&f, &r, &chk), 0);
	ck_assert_uint_eq(chk.past_cap, 1);
	ck_assert_uint_eq(chk.cap_lid, lid);
	ck_assert_uint_gt(chk.unreachable, 0);
	ck_assert_uint_eq(chk.loops + chk.misrouted, 0);

	/* a cap above every LID bounds nothing */
	f.nodes[sw[2]].si.lft_cap = htobe16((uint16_t)(lid + 1));
	ck_assert_int_eq(routing_check(&f, &r, &chk), 0);
	ck_assert_uint_eq(routing_check_failures(&chk) + chk.past_cap, 0);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

static Suite *routing_suite(void)
{
	Suite *s = suite_create("routing");
	TCase *tc = tcase_create("engines");
	TCase *mh = tcase_create("minhop");
	TCase *vf = tcase_create("verify");

	tcase_add_test(tc, engine_table);
	tcase_add_test(tc, engine_chain);
	tcase_add_test(tc, bad_lids);
	suite_add_tcase(s, tc);

	tcase_set_timeout(mh, 60);
	tcase_add_test(mh, line);
	tcase_add_test(mh, ring);
	tcase_add_test(mh, fat_tree_balance);
	tcase_add_test(mh, fat_tree_3level);
	tcase_add_test(mh, many_neighbours);
	tcase_add_test(mh, random_graphs);
	tcase_add_test(mh, parallel_links);
	tcase_add_test(mh, dual_rail);
	tcase_add_test(mh, lmc_paths);
	tcase_add_test(mh, lmc_fewer_paths);
	tcase_add_test(mh, odd_endpoints);
	tcase_add_test(mh, no_switches);
	tcase_add_test(mh, ibsim_examples);
	suite_add_tcase(s, mh);

	tcase_add_test(vf, verify_catches_each_kind);
	tcase_add_test(vf, verify_catches_past_cap);
	suite_add_tcase(s, vf);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(routing_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
