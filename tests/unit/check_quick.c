/*
 * check_quick.c - the quick sweep's model side (sm/quick.c quick_apply())
 * and the copy it starts from (fabric_copy_subset()).
 *
 * The fabric: two leaves and two spines, the SM on H0.
 *
 *	      S0          S1		spines: port 1 to L0, 2 to L1
 *	     /  \        /  \
 *	    L0 ---------+    L1		leaves: 1-2 hosts, 3 to S0, 4 to S1,
 *	   /  \             /  \	        5 cabled to nothing (down)
 *	  H0  H1           H2  H3
 *
 * Directed routes as a discovery from H0 finds them: L1 (and H2, H3)
 * through S0.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sm/quick.h"
#include "tests/unit/routing_fixture.h"

static struct fabric F;
static int32_t S0, S1, L0, L1, H0, H1, H2, H3;

/* Breadth-first directed routes from the SM's node, lowest port first,
 * leaving only switches and the SM's node (as the discovery does). */
static void set_paths(struct fabric *f)
{
	int32_t q[64];
	unsigned head = 0, tail = 0;
	bool seen[64] = { false };

	q[tail++] = f->local_node;
	seen[f->local_node] = true;
	while (head < tail) {
		int32_t u = q[head++];
		struct fab_node *un = &f->nodes[u];

		if (u != f->local_node && un->type != NODE_TYPE_SWITCH)
			continue;
		for (unsigned p = 1; p <= un->num_ports; p++) {
			int32_t v = un->ports[p].peer_node;
			struct fab_node *vn;

			if (v == FAB_NONE || seen[v])
				continue;
			seen[v] = true;
			vn = &f->nodes[v];
			vn->hops = (uint8_t)(un->hops + 1);
			memcpy(vn->path, un->path, sizeof(vn->path));
			vn->path[vn->hops] = (uint8_t)p;
			if (vn->type != NODE_TYPE_SWITCH) {
				struct fab_port *cp = &vn->ports[un->ports[p].peer_port];

				cp->hops = vn->hops;
				memcpy(cp->path, vn->path, sizeof(cp->path));
			}
			q[tail++] = v;
		}
	}
}

static void setup(void)
{
	fabric_init(&F);
	S0 = rf_sw(&F, 2);
	S1 = rf_sw(&F, 2);
	L0 = rf_sw(&F, 5);
	L1 = rf_sw(&F, 5);
	H0 = rf_ca(&F);
	H1 = rf_ca(&F);
	H2 = rf_ca(&F);
	H3 = rf_ca(&F);
	rf_link(&F, L0, 1, H0, 1);
	rf_link(&F, L0, 2, H1, 1);
	rf_link(&F, L1, 1, H2, 1);
	rf_link(&F, L1, 2, H3, 1);
	rf_link(&F, L0, 3, S0, 1);
	rf_link(&F, L0, 4, S1, 1);
	rf_link(&F, L1, 3, S0, 2);
	rf_link(&F, L1, 4, S1, 2);
	/* the leaves' port 5: read, down */
	rf_port_up(&F.nodes[L0].ports[5]);
	pi_set_port_state(&F.nodes[L0].ports[5].pi, PORT_STATE_DOWN);
	rf_port_up(&F.nodes[L1].ports[5]);
	pi_set_port_state(&F.nodes[L1].ports[5].pi, PORT_STATE_DOWN);
	for (size_t i = 0; i < F.n_nodes; i++) {
		struct fab_node *n = &F.nodes[i];

		n->has_switch_info = n->type == NODE_TYPE_SWITCH;
		for (unsigned p = 0; p <= n->num_ports; p++)
			n->ports[p].guid = n->guid + (n->type == NODE_TYPE_SWITCH
						      ? 0 : p);
	}
	ck_assert_int_eq(lid_assign_sequential(&F, 0), 0);
	F.local_node = H0;
	F.local_port = 1;
	F.local_port_guid = F.nodes[H0].ports[1].guid;
	set_paths(&F);
	ck_assert_int_eq(F.nodes[L1].hops, 3);		/* through S0 */
	ck_assert_int_eq(F.nodes[L1].path[2], 3);
}

static void teardown(void)
{
	fabric_free(&F);
}

/* A switch as the model has it, to be changed by the test. */
static struct quick_read read_of(int32_t id)
{
	const struct fab_node *n = &F.nodes[id];
	struct quick_read r = { .node = id, .si = n->si };

	r.pi = calloc((size_t)n->num_ports + 1, sizeof(*r.pi));
	ck_assert_ptr_nonnull(r.pi);
	for (unsigned p = 0; p <= n->num_ports; p++)
		r.pi[p] = n->ports[p].pi;
	return r;
}

static void port_down(struct quick_read *r, unsigned p)
{
	pi_set_port_state(&r->pi[p], PORT_STATE_DOWN);
	pi_set_phys_state(&r->pi[p], PHYS_STATE_POLLING);
}

/* Follow a directed route: the node it ends at, or FAB_NONE. */
static int32_t follow(const struct fabric *f, const uint8_t *path,
		      unsigned hops, uint8_t *in)
{
	int32_t cur = f->local_node;

	*in = 0;
	for (unsigned i = 1; i <= hops; i++) {
		const struct fab_port *p = &f->nodes[cur].ports[path[i]];

		if (path[i] > f->nodes[cur].num_ports || p->peer_node == FAB_NONE)
			return FAB_NONE;
		*in = p->peer_port;
		cur = p->peer_node;
	}
	return cur;
}

/* Every link is seen from both ends; every node's route leads to it, so
 * does every CA port's; the LID of every CA is where its route is. */
static void check_model(const struct fabric *f)
{
	uint8_t in;

	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		ck_assert_int_eq(follow(f, n->path, n->hops, &in), (int32_t)i);
		ck_assert_int_eq(n->smp_lid, 0);
		for (unsigned p = 1; p <= n->num_ports; p++) {
			const struct fab_port *pt = &n->ports[p];

			if (pt->peer_node != FAB_NONE) {
				const struct fab_port *o =
					&f->nodes[pt->peer_node].ports[pt->peer_port];
				ck_assert_int_eq(o->peer_node, (int32_t)i);
				ck_assert_uint_eq(o->peer_port, p);
			}
			if (n->type != NODE_TYPE_SWITCH && pt->valid) {
				ck_assert_int_eq(follow(f, pt->path, pt->hops, &in),
						 (int32_t)i);
				ck_assert_uint_eq((int32_t)i == f->local_node ? p : in, p);
			}
		}
		if (n->type != NODE_TYPE_SWITCH)
			ck_assert_uint_ne(fabric_node_lid(n), 0);
	}
}

START_TEST(test_nothing_changed)
{
	struct quick_read r = read_of(L1);
	struct quick_result res;
	struct fabric out;

	ck_assert_int_eq(quick_apply(&F, &r, 1, &out, &res), QUICK_NOTHING);
	ck_assert_uint_eq(out.n_nodes, 0);
	ck_assert_uint_eq(res.links_lost, 0);
	free(r.pi);
}
END_TEST

START_TEST(test_spine_link_lost)
{
	struct quick_read r = read_of(L1);
	struct quick_result res;
	struct fabric out;

	port_down(&r, 3);		/* L1 - S0, on the routes to L1 */
	ck_assert_int_eq(quick_apply(&F, &r, 1, &out, &res), QUICK_LOSSES);
	ck_assert_uint_eq(res.links_lost, 1);
	ck_assert_uint_eq(res.nodes_gone, 0);
	ck_assert_uint_eq(out.n_nodes, F.n_nodes);
	ck_assert_uint_eq(out.gen != F.gen, 1);

	const struct fab_node *l1 = &out.nodes[fabric_find(&out, F.nodes[L1].guid)];
	const struct fab_node *s0 = &out.nodes[fabric_find(&out, F.nodes[S0].guid)];
	ck_assert_int_eq(l1->ports[3].peer_node, FAB_NONE);
	ck_assert_int_eq(s0->ports[2].peer_node, FAB_NONE);
	ck_assert_uint_eq(pi_port_state(&l1->ports[3].pi), PORT_STATE_DOWN);
	ck_assert_uint_eq(pi_port_state(&s0->ports[2].pi), PORT_STATE_DOWN);
	/* the rest of S0 and L1 as they were */
	ck_assert_int_ne(s0->ports[1].peer_node, FAB_NONE);
	ck_assert_int_ne(l1->ports[4].peer_node, FAB_NONE);
	/* L1, H2 and H3 are now reached through S1 (L0 port 4) */
	ck_assert_int_eq(l1->hops, 3);
	ck_assert_int_eq(l1->path[2], 4);
	const struct fab_node *h2 = &out.nodes[fabric_find(&out, F.nodes[H2].guid)];
	ck_assert_int_eq(h2->ports[1].hops, 4);
	ck_assert_int_eq(h2->ports[1].path[2], 4);
	/* H1 kept its route (nothing of it crossed the link) */
	const struct fab_node *h1 = &out.nodes[fabric_find(&out, F.nodes[H1].guid)];
	ck_assert_mem_eq(h1->path, F.nodes[H1].path, sizeof(h1->path));
	/* LIDs kept */
	for (size_t i = 0; i < out.n_nodes; i++)
		ck_assert_uint_eq(fabric_node_lid(&out.nodes[i]),
				  fabric_node_lid(&F.nodes[i]));
	check_model(&out);
	/* the old model is untouched */
	ck_assert_int_eq(F.nodes[L1].ports[3].peer_node, S0);
	fabric_free(&out);
	free(r.pi);
}
END_TEST

START_TEST(test_both_ends_read)
{
	struct quick_read r[2] = { read_of(S0), read_of(L1) };
	struct quick_result res;
	struct fabric out;

	port_down(&r[0], 2);
	port_down(&r[1], 3);
	ck_assert_int_eq(quick_apply(&F, r, 2, &out, &res), QUICK_LOSSES);
	ck_assert_uint_eq(res.links_lost, 1);
	check_model(&out);
	fabric_free(&out);
	free(r[0].pi);
	free(r[1].pi);
}
END_TEST

START_TEST(test_host_lost)
{
	struct quick_read r = read_of(L1);
	struct quick_result res;
	struct fabric out;
	uint64_t h2 = F.nodes[H2].guid, h3 = F.nodes[H3].guid;

	port_down(&r, 1);		/* H2 */
	ck_assert_int_eq(quick_apply(&F, &r, 1, &out, &res), QUICK_LOSSES);
	ck_assert_uint_eq(res.links_lost, 1);
	ck_assert_uint_eq(res.nodes_gone, 1);
	ck_assert_uint_eq(out.n_nodes, F.n_nodes - 1);
	ck_assert_int_eq(fabric_find(&out, h2), FAB_NONE);
	/* H3 came after H2: its id moved down, its link with it */
	int32_t i3 = fabric_find(&out, h3);
	ck_assert_int_eq(i3, H3 - 1);
	int32_t l1 = fabric_find(&out, F.nodes[L1].guid);
	ck_assert_int_eq(out.nodes[l1].ports[2].peer_node, i3);
	ck_assert_int_eq(out.nodes[l1].ports[1].peer_node, FAB_NONE);
	ck_assert_int_eq(out.local_node, H0);
	check_model(&out);
	fabric_free(&out);
	free(r.pi);
}
END_TEST

START_TEST(test_leaf_cut_off)
{
	struct quick_read r[2] = { read_of(S0), read_of(S1) };
	struct quick_result res;
	struct fabric out;

	port_down(&r[0], 2);
	port_down(&r[1], 2);		/* L1 has no way up left */
	ck_assert_int_eq(quick_apply(&F, r, 2, &out, &res), QUICK_LOSSES);
	ck_assert_uint_eq(res.links_lost, 2);
	ck_assert_uint_eq(res.nodes_gone, 3);	/* L1, H2, H3 */
	ck_assert_uint_eq(out.n_nodes, F.n_nodes - 3);
	check_model(&out);
	fabric_free(&out);
	free(r[0].pi);
	free(r[1].pi);
}
END_TEST

START_TEST(test_port_came_up)
{
	struct quick_read r = read_of(L1);
	struct quick_result res;
	struct fabric out;

	port_down(&r, 3);
	pi_set_port_state(&r.pi[5], PORT_STATE_INIT);	/* a new link */
	ck_assert_int_eq(quick_apply(&F, &r, 1, &out, &res), QUICK_OTHER);
	ck_assert_ptr_nonnull(strstr(res.what, "port 5"));
	ck_assert_uint_eq(out.n_nodes, 0);
	free(r.pi);
}
END_TEST

START_TEST(test_link_bounced)
{
	struct quick_read r = read_of(L1);
	struct quick_result res;
	struct fabric out;

	/* down and up again before the read: INIT, maybe another peer */
	pi_set_port_state(&r.pi[4], PORT_STATE_INIT);
	ck_assert_int_eq(quick_apply(&F, &r, 1, &out, &res), QUICK_OTHER);
	ck_assert_uint_eq(out.n_nodes, 0);
	free(r.pi);
}
END_TEST

START_TEST(test_lid_changed)
{
	struct quick_read r = read_of(L1);
	struct quick_result res;
	struct fabric out;

	port_down(&r, 3);
	r.pi[0].lid = htobe16(0x99);
	ck_assert_int_eq(quick_apply(&F, &r, 1, &out, &res), QUICK_OTHER);
	ck_assert_ptr_nonnull(strstr(res.what, "LID"));
	free(r.pi);
}
END_TEST

START_TEST(test_copy_subset)
{
	struct fabric c;
	struct fab_port *p = &F.nodes[H1].ports[1];
	bool keep[16];

	ck_assert_int_eq(fabric_pkey_alloc(&F.nodes[H1], 1, 1), 0);
	p->pkeys[0] = htobe16(0xffff);
	p->pkey_read = 1;
	p->want_pkeys = malloc(sizeof(*p->want_pkeys));
	p->want_pkeys[0] = 0xffff;
	p->n_want_pkeys = 1;
	for (size_t i = 0; i < F.n_nodes; i++)
		keep[i] = (int32_t)i != S1;
	ck_assert_int_eq(fabric_copy_subset(&c, &F, keep), 0);
	ck_assert_uint_eq(c.n_nodes, F.n_nodes - 1);
	int32_t h1 = fabric_find(&c, F.nodes[H1].guid);
	const struct fab_port *cp = &c.nodes[h1].ports[1];
	ck_assert_ptr_nonnull(cp->pkeys);
	ck_assert_ptr_ne(cp->pkeys, p->pkeys);
	ck_assert_uint_eq(be16toh(cp->pkeys[0]), 0xffff);
	ck_assert_uint_eq(cp->pkey_read, 1);
	ck_assert_ptr_null(cp->want_pkeys);	/* resolved by each sweep */
	/* links to S1 are gone on the kept side */
	int32_t l0 = fabric_find(&c, F.nodes[L0].guid);
	ck_assert_int_eq(c.nodes[l0].ports[4].peer_node, FAB_NONE);
	ck_assert_int_eq(c.nodes[l0].ports[3].peer_node,
			 fabric_find(&c, F.nodes[S0].guid));
	fabric_free(&c);
}
END_TEST

static Suite *quick_suite(void)
{
	Suite *s = suite_create("quick");
	TCase *tc = tcase_create("apply");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_nothing_changed);
	tcase_add_test(tc, test_spine_link_lost);
	tcase_add_test(tc, test_both_ends_read);
	tcase_add_test(tc, test_host_lost);
	tcase_add_test(tc, test_leaf_cut_off);
	tcase_add_test(tc, test_port_came_up);
	tcase_add_test(tc, test_link_bounced);
	tcase_add_test(tc, test_lid_changed);
	tcase_add_test(tc, test_copy_subset);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(quick_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
