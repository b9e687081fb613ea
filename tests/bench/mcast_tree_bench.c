/*
 * mcast_bench.c - offline timing of multicast trees (routing/mcast.c):
 * load a topology file, assign LIDs, route with minhop, then time the
 * per-model context and the tree of one group holding every host (and
 * of groups of a few random hosts).  Then the group table's side
 * (sm/mcast/groups.c) of a group holding every host: joins as the SA
 * does them (a member lookup, mc_join()), repeated joins and leaves, per
 * operation.  No fabric, no ibsim.
 *
 *   tests/bench/mcast_tree_bench tests/topologies/fat2-1152.net [rounds]
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "routing/mcast.h"
#include "sm/mcast/mcast.h"
#include "routing/routing.h"
#include "model/fabric.h"
#include "sm/lid.h"
#include "sm/topo_file.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct fabric f;
	struct routing_result r = { 0 };
	struct lid_policy pol = { 0 };
	struct mcast_ctx *c;
	struct mcast_tree t;
	char err[256];
	unsigned rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 100;

	if (argc < 2 || !rounds) {
		fprintf(stderr, "usage: %s TOPOLOGY [rounds]\n", argv[0]);
		return 2;
	}
	fabric_init(&f);
	if (topo_load(&f, argv[1], err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], err);
		return 1;
	}
	if (lid_assign(&f, NULL, &pol, NULL) < 0 ||
	    routing_run("minhop", &f, &r, err, sizeof(err)) < 0) {
		fprintf(stderr, "routing: %s\n", err);
		return 1;
	}
	struct mcast_member *m = malloc(f.n_nodes * sizeof(*m));
	size_t n = 0;
	for (size_t i = 0; i < f.n_nodes; i++)
		if (f.nodes[i].type != NODE_TYPE_SWITCH)
			m[n++] = (struct mcast_member){ (int32_t)i, 1, true };

	double t0 = now();
	if (mcast_ctx_new(&c, &f, &r) < 0)
		return 1;
	double t_ctx = now() - t0;

	t0 = now();
	for (unsigned i = 0; i < rounds; i++) {
		if (mcast_tree_build(c, m, n, 0xc000 + i, &t) < 0)
			return 1;
		if (i + 1 < rounds)
			mcast_tree_free(&t);
	}
	double t_all = (now() - t0) / rounds;
	printf("%s: %zu hosts; context %.3f ms; tree of all hosts %.3f ms"
	       " (%zu switches, depth %u)\n", argv[1], n, t_ctx * 1e3,
	       t_all * 1e3, t.n, t.depth);
	mcast_tree_free(&t);

	/* Groups of 8 random hosts, the IPoIB-group-of-a-few case. */
	uint32_t x = 1;
	struct mcast_member few[8];
	t0 = now();
	for (unsigned i = 0; i < rounds * 10; i++) {
		for (unsigned k = 0; k < 8; k++) {
			x = x * 1103515245u + 12345u;
			few[k] = m[(x >> 8) % n];
		}
		if (mcast_tree_build(c, few, 8, i, &t) < 0)
			return 1;
		mcast_tree_free(&t);
	}
	printf("tree of 8 random hosts %.3f ms\n",
	       (now() - t0) / (rounds * 10) * 1e3);

	/*
	 * One group holding every host's port (the IPoIB broadcast group of
	 * the partition): the SA looks the member up before mc_join() (for
	 * may_modify() and the JoinState before), as do_join() does.
	 */
	struct mc_table *tab = mc_table_new(NULL);
	static const uint8_t mgid[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff,
		[12] = 0xff, 0xff, 0xff, 0xff };
	static const uint8_t gid[16];
	double t_join = 0, t_rejoin = 0, t_leave = 0;
	int e;
	struct mc_group *g = tab ? mc_group_create(tab, mgid, &e) : NULL;
	uint8_t held;
	bool del;

	if (!g)
		return 1;
	g->precreated = true;	/* stays when its last member leaves */
	for (unsigned i = 0; i < rounds; i++) {
		t0 = now();
		for (size_t k = 0; k < n; k++) {
			uint64_t guid = f.nodes[m[k].node].ports[1].guid;

			if (mc_group_member(g, guid) ||
			    mc_join(tab, g, guid, gid, MC_JOIN_FULL, false, &held) < 0)
				return 1;
		}
		t_join += now() - t0;
		t0 = now();
		for (size_t k = 0; k < n; k++) {
			uint64_t guid = f.nodes[m[k].node].ports[1].guid;

			if (!mc_group_member(g, guid) ||
			    mc_join(tab, g, guid, gid, MC_JOIN_NON, false, &held) < 0)
				return 1;
		}
		t_rejoin += now() - t0;
		t0 = now();
		for (size_t k = 0; k < n; k++) {
			uint64_t guid = f.nodes[m[(k * 7) % n].node].ports[1].guid;

			if (!mc_group_member(g, guid) ||
			    mc_leave(tab, g, guid, MC_JOIN_NON, &held, &del) < 0)
				return 1;
		}
		for (size_t k = 0; k < n; k++) {
			uint64_t guid = f.nodes[m[k].node].ports[1].guid;

			if (mc_leave(tab, g, guid, MC_JOIN_FULL, &held, &del) < 0 &&
			    g->n_members)
				return 1;
		}
		t_leave += now() - t0;
		if (g->n_members)
			return 1;
	}
	printf("group of %zu members: join %.1f ns, repeated join %.1f ns,"
	       " leave %.1f ns per member\n", n,
	       t_join / rounds / n * 1e9, t_rejoin / rounds / n * 1e9,
	       t_leave / rounds / (2 * n) * 1e9);
	mc_table_free(tab);

	mcast_ctx_free(c);
	free(m);
	routing_result_free(&r);
	fabric_free(&f);
	return 0;
}
