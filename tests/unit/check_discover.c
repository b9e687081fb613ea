/*
 * check_discover.c - the discovery (sm/discover.c) against scripted
 * fabrics (fake_fabric.h) on a real libev loop: what the model holds
 * after legitimate loops and multi-port CAs, and after hostile answers:
 * duplicate GUIDs (twins), insane NodeInfo, error statuses, answers lost
 * for good.
 *
 * The "twins" and "hostile" cases: a twin CA (a second CA with a GUID
 * already seen) must not be linked in place of the genuine port (the
 * genuine switch port would lose its peer), and is counted.
 */
#include "config.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "sm/discover.h"
#include "model/fabric.h"
#include "sm/log.h"
#include "tests/unit/fake_transport.h"
#include "tests/unit/fake_fabric.h"

static struct ev_loop *L;
static struct fake F;
static struct fake_fabric FF;
static struct fabric M;			/* the model the discovery builds */
static struct discover_result R;
static bool done;
static char logpath[64];
static const struct fabric *PREV;	/* the last sweep's model, or NULL */
static unsigned MAXN;			/* discover_set_max_nodes(), 0: default */
static bool LIDR;			/* discover_set_lid_routes() */
static bool DEFER;			/* discover_set_defer_pkeys() */
static unsigned DEFER_QUEUED;		/* its bound, 0: the default */
static struct discover_result R1;	/* DEFER: the first callback's */
static unsigned PKEY_GETS1;		/* DEFER: P_Key reads by then */

static void setup(void)
{
	const struct mad_engine_opts o = {
		.max_wire_smps = 4, .max_wire_gmps = 4, .timeout_ms = 5,
		.retries = 1,
	};
	int fd;

	L = ev_loop_new(EVFLAG_AUTO);
	ck_assert_ptr_nonnull(L);
	ck_assert_int_eq(fake_init(&F, L, &o), 0);
	ff_init(&FF, &F);
	fabric_init(&M);
	memset(&R, 0, sizeof(R));
	done = false;
	PREV = NULL;
	MAXN = 0;
	LIDR = false;
	DEFER = false;
	DEFER_QUEUED = 0;
	memset(&R1, 0, sizeof(R1));
	PKEY_GETS1 = 0;
	snprintf(logpath, sizeof(logpath), "/tmp/check_discover.XXXXXX");
	fd = mkstemp(logpath);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(log_open(logpath, LOG_LVL_INFO), 0);
}

static void teardown(void)
{
	log_close();
	unlink(logpath);
	fake_fini(&F);
	fabric_free(&M);
	ev_loop_destroy(L);
	L = NULL;
}

/* Whether the log holds a line with every one of the strings. */
static bool log_has(const char *a, const char *b, const char *c)
{
	char line[1024];
	bool found = false;
	FILE *fp = fopen(logpath, "r");

	ck_assert_ptr_nonnull(fp);
	while (!found && fgets(line, sizeof(line), fp))
		found = strstr(line, a) && (!b || strstr(line, b)) &&
			(!c || strstr(line, c));
	fclose(fp);
	return found;
}

static void on_done(void *arg, const struct discover_result *r)
{
	(void)arg;
	R = *r;
	done = true;
	ev_break(L, EVBREAK_ALL);
}

static void on_guard(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(l, EVBREAK_ALL);
}

static unsigned pkey_gets(void)
{
	unsigned n = 0;

	for (int i = 0; i < FF.n; i++)
		n += FF.node[i].gets[SMP_ATTR_PKEY_TABLE];
	return n;
}

static void run_until_done(void)
{
	ev_timer guard;

	ev_timer_init(&guard, on_guard, 10., 0.);
	ev_timer_start(L, &guard);
	while (!done && ev_run(L, 0))
		;
	ev_timer_stop(L, &guard);
	ck_assert_msg(done, "discovery did not finish");
}

/* Run a whole discovery of FF into M.  DEFER: the P_Key tables after the
 * rest (R1, PKEY_GETS1: what the first callback saw; R: the second's). */
static void discover(void)
{
	struct discovery *d = NULL;

	ck_assert_int_eq(discover_start(&d, F.engine, &M, true, on_done, NULL), 0);
	discover_set_previous(d, PREV);
	discover_set_max_nodes(d, MAXN);
	discover_set_lid_routes(d, LIDR);
	discover_set_defer_pkeys(d, DEFER, DEFER_QUEUED);
	run_until_done();
	if (DEFER) {
		R1 = R;
		PKEY_GETS1 = pkey_gets();
		memset(&R, 0, sizeof(R));
		done = false;
		if (discover_read_pkeys(d, on_done, NULL))
			run_until_done();
	}
	discover_free(d);
}

static const struct fab_node *node(uint64_t guid)
{
	int32_t id = fabric_find(&M, guid);

	ck_assert_msg(id != FAB_NONE, "GUID 0x%llx not in the model",
		      (unsigned long long)guid);
	return fabric_node(&M, id);
}

/* Is port pa of GUID a linked to port pb of GUID b in the model? */
static bool linked(uint64_t a, unsigned pa, uint64_t b, unsigned pb)
{
	const struct fab_node *na = node(a);
	const struct fab_port *p = &na->ports[pa];

	return p->peer_node != FAB_NONE &&
	       fabric_node(&M, p->peer_node)->guid == b && p->peer_port == pb;
}

static bool unlinked(uint64_t a, unsigned pa)
{
	return node(a)->ports[pa].peer_node == FAB_NONE;
}

/*
 * The SM on H1; one leaf with H1..H4 on ports 1-4, two spines each
 * linked to the leaf by ports 5 and 6 (a loop through the spines), and
 * H5 a two-port CA on both spines.
 */
#define G_H(i)		(0x100000ull + 2 * (i))
#define G_SW(i)		(0x200000ull + (i))
static int h[6], leaf, sp1, sp2;

static void small_fabric(void)
{
	char d[16];

	for (int i = 1; i <= 4; i++) {
		snprintf(d, sizeof(d), "H%d", i);
		h[i] = ff_add(&FF, NODE_TYPE_CA, 1, G_H(i), d);
	}
	h[5] = ff_add(&FF, NODE_TYPE_CA, 2, G_H(5), "H5");
	leaf = ff_add(&FF, NODE_TYPE_SWITCH, 8, G_SW(1), "leaf");
	sp1 = ff_add(&FF, NODE_TYPE_SWITCH, 8, G_SW(2), "spine-1");
	sp2 = ff_add(&FF, NODE_TYPE_SWITCH, 8, G_SW(3), "spine-2");
	for (int i = 1; i <= 4; i++)
		ff_link(&FF, h[i], 1, leaf, (uint8_t)i);
	ff_link(&FF, leaf, 5, sp1, 1);
	ff_link(&FF, leaf, 6, sp2, 1);
	ff_link(&FF, sp1, 2, sp2, 2);		/* spine to spine: a loop */
	ff_link(&FF, h[5], 1, sp1, 3);
	ff_link(&FF, h[5], 2, sp2, 3);
	FF.local = h[1];
	FF.local_port = 1;
}

/* ------------------------------------------------------------ legit */

START_TEST(loops_and_multiport_ca)
{
	struct fabric_counts c;

	small_fabric();
	discover();
	fabric_count(&M, &c);
	ck_assert_uint_eq(c.switches, 3);
	ck_assert_uint_eq(c.cas, 5);
	ck_assert_uint_eq(c.links, 9);
	ck_assert_uint_eq(R.dup_guids, 0);
	ck_assert_uint_eq(R.failed, 0);
	ck_assert_uint_eq(R.dead_ends, 0);
	ck_assert(linked(G_SW(2), 2, G_SW(3), 2));
	ck_assert(linked(G_H(5), 1, G_SW(2), 3));
	ck_assert(linked(G_H(5), 2, G_SW(3), 3));
	ck_assert_uint_eq(node(G_H(5))->ports[2].guid, G_H(5) + 2);
	ck_assert_int_eq(M.local_node, fabric_find(&M, G_H(1)));
	ck_assert_str_eq(node(G_SW(2))->desc, "spine-1");
	ck_assert(!log_has("ERR 0103", NULL, NULL));
}
END_TEST

/* Two links between the same two switches: a loop, not a twin. */
START_TEST(parallel_links)
{
	small_fabric();
	ff_link(&FF, leaf, 7, sp1, 7);
	discover();
	ck_assert_uint_eq(R.dup_guids, 0);
	ck_assert(linked(G_SW(1), 5, G_SW(2), 1));
	ck_assert(linked(G_SW(1), 7, G_SW(2), 7));
}
END_TEST

/* ------------------------------------------------------------ twins */

/* ibsim `Guid "H4" <H2's GUID>`: H4 answers with H2's node and port GUID. */
START_TEST(twin_ca)
{
	struct fabric_counts c;

	small_fabric();
	FF.node[h[4]].guid = G_H(2);
	FF.node[h[4]].port_guid = G_H(2) + 1;
	discover();
	fabric_count(&M, &c);
	ck_assert_uint_eq(R.dup_guids, 1);
	/* the twin's GUID is kept for the health checks */
	ck_assert_uint_eq(R.n_dup_guid, 1);
	ck_assert_uint_eq(R.dup_guid[0], G_H(2));
	ck_assert_uint_eq(c.cas, 4);
	/* The genuine port keeps its link and its route; the twin's switch
	 * port stays unlinked (not armed, not routed). */
	ck_assert(linked(G_SW(1), 2, G_H(2), 1));
	ck_assert(unlinked(G_SW(1), 4));
	ck_assert_uint_eq(node(G_H(2))->ports[1].hops, 2);
	ck_assert_uint_eq(node(G_H(2))->ports[1].path[2], 2);
	ck_assert_msg(log_has("ERR 0103", "path 0,1,4", "path 0,1,2"),
		      "the ERR line names both routes");
}
END_TEST

/* The twin answers with its own port GUID: still the same port number of
 * the same node GUID reached a second time. */
START_TEST(twin_ca_other_port_guid)
{
	small_fabric();
	FF.node[h[3]].guid = G_H(4);
	discover();
	ck_assert_uint_eq(R.dup_guids, 1);
	ck_assert(linked(G_SW(1), 3, G_H(4), 1) != linked(G_SW(1), 4, G_H(4), 1));
}
END_TEST

/* A twin of the SM's own node. */
START_TEST(twin_of_local_node)
{
	small_fabric();
	FF.node[h[3]].guid = G_H(1);
	FF.node[h[3]].port_guid = G_H(1) + 1;
	discover();
	ck_assert_uint_eq(R.dup_guids, 1);
	ck_assert_uint_eq(R.n_dup_guid, 1);
	ck_assert_uint_eq(R.dup_guid[0], G_H(1));
	ck_assert(linked(G_SW(1), 1, G_H(1), 1));
	ck_assert(unlinked(G_SW(1), 3));
	ck_assert_int_eq(M.local_node, fabric_find(&M, G_H(1)));
}
END_TEST

/* Two CAs cabled port 1 to port 1, the far one with the SM's node GUID:
 * the answer through port 1 names port 1 of the SM's own node, a link
 * from a port to itself (OpenSM's fatal condition, the sweep's to act
 * on); the twin stays out. */
START_TEST(self_link_back_to_back)
{
	int a = ff_add(&FF, NODE_TYPE_CA, 1, G_H(1), "H1");
	int b = ff_add(&FF, NODE_TYPE_CA, 1, G_H(2), "H2");

	ff_link(&FF, a, 1, b, 1);
	FF.local = a;
	FF.local_port = 1;
	FF.node[b].guid = G_H(1);
	discover();
	ck_assert_uint_eq(R.self_link_guid, G_H(1));
	ck_assert_uint_eq(R.self_link_port, 1);
	ck_assert_uint_eq(R.dup_guids, 1);
	ck_assert(unlinked(G_H(1), 1));
}
END_TEST

/* Not a link to itself: another port number, or a switch already seen
 * (a twin behind a switch is told apart otherwise, as in OpenSM). */
START_TEST(self_link_only_port_to_same_port)
{
	int a = ff_add(&FF, NODE_TYPE_CA, 2, G_H(1), "H1");
	int b = ff_add(&FF, NODE_TYPE_CA, 2, G_H(2), "H2");

	ff_link(&FF, a, 1, b, 2);
	FF.local = a;
	FF.local_port = 1;
	FF.node[b].guid = G_H(1);
	discover();
	/* (indistinguishable from a loopback cable between the ports of
	 * one CA, which is what the model shows) */
	ck_assert_uint_eq(R.self_link_port, 0);
}
END_TEST

START_TEST(self_link_not_through_switch)
{
	small_fabric();
	FF.node[h[3]].guid = G_H(1);
	FF.node[h[3]].port_guid = G_H(1) + 1;
	discover();
	ck_assert_uint_eq(R.self_link_port, 0);
	ck_assert_uint_eq(R.dup_guids, 1);
}
END_TEST

/* Two switches with one GUID, entered at a port number the first one has
 * linked already. */
START_TEST(twin_switch)
{
	int t;

	small_fabric();
	t = ff_add(&FF, NODE_TYPE_SWITCH, 8, G_SW(2), "twin of spine-1");
	ff_link(&FF, leaf, 8, t, 1);		/* spine-1's port 1 is the leaf's 5 */
	discover();
	ck_assert_uint_eq(R.dup_guids, 1);
	ck_assert(linked(G_SW(1), 5, G_SW(2), 1));
	ck_assert(unlinked(G_SW(1), 8));
	ck_assert(log_has("ERR 0103", "path 0,1,8", "path 0,1,5"));
}
END_TEST

/* A twin switch entered at a port that is down on the switch first seen:
 * whichever of NodeInfo and PortInfo comes first, the twin stays out. */
START_TEST(twin_switch_down_port)
{
	int t;

	small_fabric();
	t = ff_add(&FF, NODE_TYPE_SWITCH, 8, G_SW(2), "twin of spine-1");
	ff_link(&FF, leaf, 8, t, 6);		/* spine-1's port 6 is down */
	discover();
	ck_assert_uint_eq(R.dup_guids, 1);
	ck_assert_uint_eq(R.n_dup_guid, 1);
	ck_assert_uint_eq(R.dup_guid[0], G_SW(2));
	ck_assert(unlinked(G_SW(1), 8));
	ck_assert(unlinked(G_SW(2), 6));
	ck_assert(linked(G_SW(1), 5, G_SW(2), 1));
}
END_TEST

/*
 * A twin closer to the SM than the node it copies: H2 (path 0,1,2) takes
 * the GUIDs of H6 (0,1,5,4, behind spine-1).  Without a previous model
 * the first seen wins; with the model of a sweep before the twin came,
 * the port at the route the SM knew keeps the GUID, its link and its
 * PortInfo, and the twin's link is undone whichever answered first.
 */
static int h6;

static void far_twin(void)
{
	small_fabric();
	h6 = ff_add(&FF, NODE_TYPE_CA, 1, G_H(6), "H6");
	ff_link(&FF, h6, 1, sp1, 4);
}

START_TEST(twin_closer_first_seen_wins)
{
	far_twin();
	FF.node[h[2]].guid = G_H(6);
	FF.node[h[2]].port_guid = G_H(6) + 1;
	discover();
	ck_assert_uint_eq(R.dup_guids, 1);
	ck_assert(linked(G_SW(1), 2, G_H(6), 1));
	ck_assert(unlinked(G_SW(2), 4));
}
END_TEST

START_TEST(twin_closer_previous_model_wins)
{
	struct fabric prev;
	const struct fab_node *n;

	far_twin();
	discover();			/* the sweep before the twin */
	ck_assert_uint_eq(R.dup_guids, 0);
	prev = M;
	fabric_init(&M);
	FF.node[h[2]].guid = G_H(6);
	FF.node[h[2]].port_guid = G_H(6) + 1;
	strcpy(FF.node[h[2]].desc, "impostor");
	PREV = &prev;
	done = false;
	discover();
	ck_assert_uint_eq(R.dup_guids, 1);
	ck_assert_uint_eq(R.n_dup_guid, 1);
	ck_assert_uint_eq(R.dup_guid[0], G_H(6));
	ck_assert(linked(G_SW(2), 4, G_H(6), 1));
	ck_assert(unlinked(G_SW(1), 2));
	n = node(G_H(6));
	ck_assert_uint_eq(n->ports[1].hops, 3);
	ck_assert_uint_eq(n->ports[1].path[2], 5);
	ck_assert(n->ports[1].valid);
	ck_assert_str_eq(n->desc, "H6");
	ck_assert(fabric_pkey_known(&n->ports[1]));
	ck_assert(log_has("ERR 0103", "the last sweep had it at path 0,1,5,4",
			  "the node at path 0,1,2 is left out"));
	fabric_free(&prev);
}
END_TEST

/* Same GUID, another type or port count: H5 (a CA with two ports,
 * reached on each) answers with the leaf's GUID; both reaches are twins. */
START_TEST(twin_other_model)
{
	struct fabric_counts c;

	small_fabric();
	FF.node[h[5]].guid = G_SW(1);
	discover();
	fabric_count(&M, &c);
	ck_assert_uint_eq(R.dup_guids, 2);
	ck_assert_uint_eq(c.cas, 4);
	ck_assert_uint_eq(c.switches, 3);
	ck_assert(unlinked(G_SW(2), 3));
	ck_assert(unlinked(G_SW(3), 3));
	ck_assert(linked(G_SW(1), 5, G_SW(2), 1));
	ck_assert(log_has("ERR 0103", "a Ca with 2 ports", "Switch with 8"));
}
END_TEST

/* ---------------------------------------------------------- hostile */

struct rewrite {
	int node;
	uint16_t attr;
	void (*fn)(struct smp_dr *resp);
	unsigned times;
};

static bool mutate(struct fake_fabric *ff, int id, uint8_t in_port,
		   struct smp_dr *resp, void *arg)
{
	struct rewrite *rw = arg;

	(void)ff;
	(void)in_port;
	if (id == rw->node && be16toh(resp->hdr.attr_id) == rw->attr) {
		rw->times++;
		rw->fn(resp);
	}
	return true;
}

static void ni_zero_ports(struct smp_dr *r)
{
	((struct smp_node_info *)r->data)->num_ports = 0;
}

static void ni_port_too_big(struct smp_dr *r)
{
	struct smp_node_info *ni = (void *)r->data;
	ni->local_port = (uint8_t)(ni->num_ports + 1);
}

static void ni_bad_type(struct smp_dr *r)
{
	((struct smp_node_info *)r->data)->node_type = 7;
}

static void ni_port_zero(struct smp_dr *r)
{
	((struct smp_node_info *)r->data)->local_port = 0;
}

static void ni_guid_zero(struct smp_dr *r)
{
	((struct smp_node_info *)r->data)->node_guid = 0;
}

static void status_invalid(struct smp_dr *r)
{
	r->hdr.status |= htobe16(MAD_STATUS_INVALID_FIELD);
}

/*
 * Discover small_fabric() with every `attr` answer of node *which (an
 * index small_fabric() fills in) rewritten by fn; returns how many were.
 */
static unsigned discover_rewriting(const int *which, uint16_t attr,
				   void (*fn)(struct smp_dr *))
{
	struct rewrite rw = { .attr = attr, .fn = fn };

	small_fabric();
	rw.node = *which;
	FF.mutate = mutate;
	FF.mutate_arg = &rw;
	discover();
	FF.mutate = NULL;
	FF.mutate_arg = NULL;
	return rw.times;
}

/* A NodeInfo that is not sane: the node is left out, the query failed. */
static void insane_node_info(void (*fn)(struct smp_dr *), int which,
			     uint64_t guid)
{
	ck_assert_uint_gt(discover_rewriting(which == 0 ? &h[3] : &sp2,
					     SMP_ATTR_NODE_INFO, fn), 0);
	ck_assert_uint_ge(R.failed, 1);
	ck_assert_int_eq(fabric_find(&M, guid), FAB_NONE);
	ck_assert(log_has("ERR 0102", NULL, NULL));
}

START_TEST(ca_zero_ports)		{ insane_node_info(ni_zero_ports, 0, G_H(3)); }
END_TEST
START_TEST(ca_port_beyond_ports)	{ insane_node_info(ni_port_too_big, 0, G_H(3)); }
END_TEST
START_TEST(ca_unknown_type)		{ insane_node_info(ni_bad_type, 0, G_H(3)); }
END_TEST
START_TEST(ca_local_port_zero)		{ insane_node_info(ni_port_zero, 0, G_H(3)); }
END_TEST
START_TEST(switch_bad_type)		{ insane_node_info(ni_bad_type, 1, G_SW(3)); }
END_TEST

/* A switch entered over a link cannot be entered at its port 0 (only
 * the SM's own switch can): before, such a node joined the model with a
 * link that could not be made. */
START_TEST(switch_local_port_zero_over_link)
{
	insane_node_info(ni_port_zero, 1, G_SW(3));
}
END_TEST

START_TEST(node_guid_zero)
{
	discover_rewriting(&h[2], SMP_ATTR_NODE_INFO, ni_guid_zero);
	ck_assert_uint_ge(R.failed, 1);
	ck_assert_int_eq(fabric_find(&M, 0), FAB_NONE);
	ck_assert(unlinked(G_SW(1), 2));
}
END_TEST

/* An error status on a NodeInfo answer: a failed query, nothing added. */
START_TEST(node_info_error_status)
{
	discover_rewriting(&h[4], SMP_ATTR_NODE_INFO, status_invalid);
	ck_assert_uint_ge(R.failed, 1);
	ck_assert_int_eq(fabric_find(&M, G_H(4)), FAB_NONE);
}
END_TEST

/* A NodeInfo answer cut short (every answer of H4 is 200 bytes): never
 * read, the query fails after its retries like a lost one. */
static bool cut_h4(struct fake_fabric *ff, int id, uint8_t in_port,
		   struct smp_dr *resp, void *arg)
{
	(void)in_port;
	(void)resp;
	if (id == *(int *)arg)
		ff->cut_to = 200;
	return true;
}

START_TEST(truncated_answer)
{
	small_fabric();
	FF.mutate = cut_h4;
	FF.mutate_arg = &h[4];
	discover();
	ck_assert_uint_eq(R.dead_ends, 1);
	ck_assert_int_eq(fabric_find(&M, G_H(4)), FAB_NONE);
	ck_assert(unlinked(G_SW(1), 4));
	ck_assert_uint_gt(mad_engine_stats(F.engine)->dropped, 0);
}
END_TEST

/* SwitchInfo refused: the switch's ports are still read. */
START_TEST(switch_info_error_status)
{
	discover_rewriting(&leaf, SMP_ATTR_SWITCH_INFO, status_invalid);
	ck_assert_uint_ge(R.failed, 1);
	ck_assert(!node(G_SW(1))->has_switch_info);
	ck_assert(linked(G_SW(1), 2, G_H(2), 1));
	ck_assert(node(G_SW(1))->ports[5].valid);
}
END_TEST

/* PortInfo of a CA port refused: the port is not valid, no P_Keys read. */
START_TEST(port_info_error_status)
{
	discover_rewriting(&h[2], SMP_ATTR_PORT_INFO, status_invalid);
	ck_assert_uint_ge(R.failed, 1);
	ck_assert(!node(G_H(2))->ports[1].valid);
	ck_assert_ptr_null(node(G_H(2))->ports[1].pkeys);
}
END_TEST

/* A NodeDescription of 64 bytes without a terminator. */
static void nd_full(struct smp_dr *r)
{
	memset(r->data, 'x', 64);
}

START_TEST(node_desc_unterminated)
{
	discover_rewriting(&h[2], SMP_ATTR_NODE_DESC, nd_full);
	ck_assert_uint_eq(strlen(node(G_H(2))->desc), 64);
	ck_assert_uint_eq(R.failed, 0);
}
END_TEST

/* A node that stops answering after its NodeInfo: its queries fail after
 * the retries, the sweep counts them, the rest is discovered. */
static bool mute_after_node_info(struct fake_fabric *ff, int id,
				 uint8_t in_port, struct smp_dr *resp, void *arg)
{
	(void)ff;
	(void)in_port;
	return id != *(int *)arg ||
	       be16toh(resp->hdr.attr_id) == SMP_ATTR_NODE_INFO;
}

START_TEST(mute_switch)
{
	struct fabric_counts c;

	small_fabric();
	FF.mutate = mute_after_node_info;
	FF.mutate_arg = &sp2;
	discover();
	fabric_count(&M, &c);
	ck_assert_uint_ge(R.failed, 2);		/* NodeDescription, SwitchInfo */
	ck_assert(!node(G_SW(3))->has_switch_info);
	ck_assert_uint_eq(c.cas, 5);		/* H5 through spine-1 */
	ck_assert(linked(G_SW(1), 6, G_SW(3), 1));
}
END_TEST

/* Dead end: a port that is up but nothing answers behind it. */
static bool drop_node_info(struct fake_fabric *ff, int id, uint8_t in_port,
			   struct smp_dr *resp, void *arg)
{
	(void)ff;
	(void)in_port;
	return id != *(int *)arg ||
	       be16toh(resp->hdr.attr_id) != SMP_ATTR_NODE_INFO;
}

START_TEST(dead_end)
{
	small_fabric();
	FF.mutate = drop_node_info;
	FF.mutate_arg = &h[3];
	discover();
	ck_assert_uint_eq(R.dead_ends, 1);
	ck_assert_int_eq(fabric_find(&M, G_H(3)), FAB_NONE);
	ck_assert(log_has("ERR 0105", "0,1,3", NULL));
}
END_TEST

/* PartitionCap / PartitionEnforcementCap of 65,535 (2,048 blocks). */
static void ni_pcap_max(struct smp_dr *r)
{
	((struct smp_node_info *)r->data)->partition_cap = htobe16(0xffff);
}

static void si_enf_cap_max(struct smp_dr *r)
{
	((struct smp_switch_info *)r->data)->partition_enf_cap = htobe16(0xffff);
}

static bool pkey_caps_max(struct fake_fabric *ff, int id, uint8_t in_port,
			  struct smp_dr *resp, void *arg)
{
	const int *which = arg;

	(void)ff;
	(void)in_port;
	if (id != which[0] && id != which[1])
		return true;
	if (be16toh(resp->hdr.attr_id) == SMP_ATTR_NODE_INFO)
		ni_pcap_max(resp);
	if (be16toh(resp->hdr.attr_id) == SMP_ATTR_SWITCH_INFO)
		si_enf_cap_max(resp);
	return true;
}

/*
 * Nodes that advertise the largest P_Key tables: at most 64 blocks are
 * read per port and 512 per node (before: 2,048 per port, 71,680 SMPs
 * for the 36-port switch below), with ERR 0107 naming the node.
 */
/* small_fabric() and a 36-port switch cabled to itself, it and H5
 * advertising the largest tables (which[] must outlive the discovery). */
static void huge_pkey_fabric(int which[2])
{
	int big;

	small_fabric();
	big = ff_add(&FF, NODE_TYPE_SWITCH, 36, G_SW(9), "big");
	ff_link(&FF, leaf, 7, big, 1);
	for (uint8_t p = 2; p < 36; p += 2)
		ff_link(&FF, big, p, big, (uint8_t)(p + 1));
	which[0] = h[5];
	which[1] = big;
	FF.mutate = pkey_caps_max;
	FF.mutate_arg = which;
}

START_TEST(pkey_cap_huge)
{
	int which[2];

	huge_pkey_fabric(which);
	int big = which[1];
	discover();
	ck_assert_uint_eq(R.dup_guids, 0);
	/* The 2-port CA: 64 blocks on each port. */
	ck_assert_uint_eq(FF.node[h[5]].gets[SMP_ATTR_PKEY_TABLE], 2 * 64);
	ck_assert_uint_eq(node(G_H(5))->ports[1].pkey_blocks, 64);
	ck_assert_uint_eq(node(G_H(5))->ports[1].pkey_read, 64);
	/* The 36-port switch: 512 blocks, and one at least for every port
	 * that is managed after the node's budget is spent. */
	unsigned got = FF.node[big].gets[SMP_ATTR_PKEY_TABLE];
	ck_assert_uint_ge(got, 512);
	ck_assert_uint_le(got, 512 + 36);
	unsigned blocks = 0;
	for (unsigned p = 0; p <= 36; p++)
		blocks += node(G_SW(9))->ports[p].pkey_blocks;
	ck_assert_uint_eq(blocks, got);
	ck_assert(log_has("ERR 0107", "0x0000000000200009", "advertises 2048"));
	ck_assert(log_has("ERR 0107", "0x000000000010000a", NULL));
	ck_assert(!log_has("ERR 0107", "0x0000000000200001", NULL));
	/* Only the first block of a port holds the default P_Key here. */
	ck_assert_uint_eq(be16toh(node(G_H(5))->ports[1].pkeys[0]), 0xffff);
}
END_TEST

/*
 * The switches answer every NodeInfo with a GUID never seen: every turn
 * of the leaf-spine loops leads to "new" switches, a made-up fabric that
 * doubles every three hops as deep as directed routes go.  The model stops at the node limit, with
 * ERR 0108 once and the sweep counted incomplete.  Before: no limit (a
 * node answering for a made-up tree of 255-port switches could grow the
 * model and the SMPs without bound).
 */
static bool fresh_switch_guids(struct fake_fabric *ff, int id, uint8_t in_port,
			      struct smp_dr *resp, void *arg)
{
	static uint64_t next = 0x900000;
	struct smp_node_info *ni = (void *)resp->data;

	(void)ff;
	(void)in_port;
	(void)arg;
	if ((id == leaf || id == sp1 || id == sp2) &&
	    be16toh(resp->hdr.attr_id) == SMP_ATTR_NODE_INFO) {
		ni->node_guid = htobe64(next);
		ni->port_guid = htobe64(next++);
	}
	return true;
}

START_TEST(made_up_fabric_bounded)
{
	small_fabric();
	FF.mutate = fresh_switch_guids;
	MAXN = 24;
	discover();
	ck_assert_uint_eq(M.n_nodes, 24);
	ck_assert_uint_ge(R.failed, 1);
	ck_assert(log_has("ERR 0108", "more than 24 nodes", NULL));
	ck_assert_int_eq(M.local_node, fabric_find(&M, G_H(1)));
}
END_TEST

/* How many lines of the log hold `s`. */
static unsigned log_count(const char *s)
{
	char line[1024];
	unsigned n = 0;
	FILE *fp = fopen(logpath, "r");

	ck_assert_ptr_nonnull(fp);
	while (fgets(line, sizeof(line), fp))
		n += strstr(line, s) != NULL;
	fclose(fp);
	return n;
}

static bool refuse_desc_and_pkeys(struct fake_fabric *ff, int id,
				  uint8_t in_port, struct smp_dr *resp, void *arg)
{
	uint16_t attr = be16toh(resp->hdr.attr_id);

	(void)ff;
	(void)id;
	(void)in_port;
	(void)arg;
	if (attr == SMP_ATTR_NODE_DESC || attr == SMP_ATTR_PKEY_TABLE)
		status_invalid(resp);
	return true;
}

/*
 * Every node refuses its NodeDescription and P_Key blocks (a failed
 * query each): the log gets a burst of ERR 0106 lines, not one line per
 * hostile answer (lines a remote host can cause are rate-limited).
 */
/*
 * Deferred P_Key tables (the sweep reads them while the routing runs):
 * none is read before the first callback, and afterwards the model holds
 * exactly the tables, sizes and bounds an ordinary discovery reads, for
 * the same SMPs.  The fabric has the huge tables of pkey_cap_huge (the
 * per-node bound depends on the order ports are read in) and H5 reached
 * on both its ports.
 */
START_TEST(deferred_pkeys_same_tables)
{
	struct fabric def;
	int which[2];

	huge_pkey_fabric(which);
	DEFER = true;
	DEFER_QUEUED = 3;
	discover();
	ck_assert_uint_eq(PKEY_GETS1, 0);
	ck_assert_uint_eq(R1.failed, 0);
	ck_assert_uint_eq(R.failed, 0);
	unsigned gets = pkey_gets(), smps = R.smps;
	ck_assert_uint_gt(gets, 512);
	ck_assert_uint_eq(smps, gets);
	/* Port by port (64 blocks at most) until 3 are queued, topped up as
	 * they are answered: not the 600 at once (nor as many as the
	 * ordinary discovery below queues, reads among the PortInfo). */
	unsigned peak = mad_engine_stats(F.engine)->max_queued[0];
	ck_assert_uint_le(peak, 3 + 64);
	def = M;
	fabric_init(&M);
	for (int i = 0; i < FF.n; i++)
		memset(FF.node[i].gets, 0, sizeof(FF.node[i].gets));
	DEFER = false;
	done = false;
	discover();			/* the reference */
	ck_assert_uint_eq(pkey_gets(), gets);
	ck_assert_uint_gt(mad_engine_stats(F.engine)->max_queued[0], peak);
	ck_assert_uint_eq(M.n_nodes, def.n_nodes);
	unsigned known = 0, big_a = 0, big_b = 0;
	for (size_t i = 0; i < M.n_nodes; i++) {
		const struct fab_node *a = &M.nodes[i];
		const struct fab_node *b = fabric_node(&def, fabric_find(&def, a->guid));

		for (unsigned p = 0; p <= a->num_ports; p++) {
			const struct fab_port *x = &a->ports[p], *y = &b->ports[p];

			if (a->guid == G_SW(9)) {
				/* which ports spend the node's 512 blocks
				 * depends on the order PortInfo came back */
				big_a += x->pkey_blocks;
				big_b += y->pkey_blocks;
				ck_assert_uint_eq(y->pkey_read, y->pkey_blocks);
				continue;
			}
			ck_assert_uint_eq(x->pkey_blocks, y->pkey_blocks);
			ck_assert_uint_eq(x->pkey_read, y->pkey_read);
			ck_assert(!x->pkey_blocks ||
				  !memcmp(x->pkeys, y->pkeys, x->pkey_blocks *
					  PKEY_BLOCK_SIZE * sizeof(*x->pkeys)));
			known += fabric_pkey_known(y);
		}
	}
	ck_assert_uint_eq(big_a, big_b);
	ck_assert_uint_ge(big_b, 512);
	/* 5 CAs' 6 ports, 3 switches' port 0 and their linked ports */
	ck_assert_uint_ge(known, 6 + 3 + 8);
	ck_assert_uint_eq(be16toh(fabric_node(&def, fabric_find(&def, G_H(5)))
				  ->ports[2].pkeys[0]), 0xffff);
	fabric_free(&def);
}
END_TEST

/* Deferred P_Key reads that fail are counted in the second callback, the
 * first one clean. */
static bool refuse_pkeys(struct fake_fabric *ff, int id, uint8_t in_port,
			 struct smp_dr *resp, void *arg)
{
	(void)ff;
	(void)in_port;
	if (id == *(const int *)arg &&
	    be16toh(resp->hdr.attr_id) == SMP_ATTR_PKEY_TABLE)
		status_invalid(resp);
	return true;
}

START_TEST(deferred_pkeys_failures_counted)
{
	small_fabric();
	FF.mutate = refuse_pkeys;
	FF.mutate_arg = &h[3];
	DEFER = true;
	discover();
	ck_assert_uint_eq(R1.failed, 0);
	ck_assert_uint_eq(R.failed, FF.node[h[3]].gets[SMP_ATTR_PKEY_TABLE]);
	ck_assert_uint_ge(R.failed, 1);
	ck_assert(!fabric_pkey_known(&node(G_H(3))->ports[1]));
	ck_assert(fabric_pkey_known(&node(G_H(2))->ports[1]));
}
END_TEST

START_TEST(error_lines_rate_limited)
{
	small_fabric();
	FF.mutate = refuse_desc_and_pkeys;
	discover();
	ck_assert_uint_ge(R.failed, 2 * (LOG_RL_BURST + 1));
	ck_assert_uint_ge(log_count("ERR 0106"), 1);
	ck_assert_uint_le(log_count("ERR 0106"), LOG_RL_BURST + 1);
}
END_TEST


/* ------------------------------------------------------- LID-routed */

/*
 * The fake fabric answers directed-route SMPs only.  This policy answers
 * LID-routed ones too, as a fabric with working LFTs does: the node whose
 * port holds the DLID answers, from that LID (a switch's port 0; a CA's
 * port, entered there).  DLIDs in LID_BROKEN are lost on the way (a
 * broken route).
 */
static uint16_t LID_BROKEN;
static unsigned H5_PORT;		/* H5's port on its directed route */

static enum fake_action lid_policy(struct fake *fk, const struct fake_sent *s,
				   void *arg)
{
	struct fake_fabric *ff = arg;
	const struct smp_lid *req = (const void *)s->mad;
	uint8_t resp[MAD_SIZE];
	struct smp_dr dr;

	if (req->hdr.mgmt_class != MAD_CLASS_SMI)
		return ff_policy(fk, s, arg);
	if (s->addr.lid == LID_BROKEN)
		return FAKE_DROP;
	for (int id = 0; id < ff->n; id++) {
		const struct ff_node *n = &ff->node[id];
		unsigned first = n->type == NODE_TYPE_SWITCH ? 0 : 1;
		unsigned last = n->type == NODE_TYPE_SWITCH ? 0 : n->nports;

		for (unsigned pn = first; pn <= last; pn++) {
			if (n->port[pn].lid != s->addr.lid)
				continue;
			/* the same request in DR shape, for ff_answer() */
			memcpy(&dr, req, MAD_SIZE);
			fake_make_response(s->mad, s->len, fk->tid_high, resp);
			if (!ff_answer(ff, id, (uint8_t)pn, &dr, (struct smp_dr *)resp))
				return FAKE_DROP;
			((struct mad_hdr *)resp)->status &= htobe16(0x7fff);
			fake_schedule(fk, resp, MAD_SIZE, &s->addr, 0, 0.);
			return FAKE_DROP;	/* answered already */
		}
	}
	return FAKE_DROP;
}

/* small_fabric() with LIDs in place: H1..H5 port 1 LIDs 1..5, H5 port 2
 * LID 6, leaf 10, spines 11 and 12; discovered once into *prev (all by
 * directed route), which then says leaf, spine-1, H2 and H5 are
 * LID-reachable at their LIDs.  Returns with M fresh for the next sweep. */
static void lid_fabric(struct fabric *prev)
{
	small_fabric();
	for (int i = 1; i <= 5; i++)
		FF.node[h[i]].port[1].lid = (uint16_t)i;
	FF.node[h[5]].port[2].lid = 6;
	FF.node[leaf].port[0].lid = 10;
	FF.node[sp1].port[0].lid = 11;
	FF.node[sp2].port[0].lid = 12;
	F.policy = lid_policy;
	discover();
	ck_assert_uint_eq(R.lid_smps, 0);
	for (size_t i = 0; i < F.n_sent; i++)
		ck_assert_uint_eq(fake_class(&F, i), MAD_CLASS_SMI_DR);
	*prev = M;
	fabric_init(&M);
	fabric_node(prev, fabric_find(prev, G_SW(1)))->smp_lid = 10;
	fabric_node(prev, fabric_find(prev, G_SW(2)))->smp_lid = 11;
	fabric_node(prev, fabric_find(prev, G_H(2)))->smp_lid = 2;
	/* H5's LID is that of the port its directed route reaches */
	struct fab_node *h5 = fabric_node(prev, fabric_find(prev, G_H(5)));
	H5_PORT = h5->ports[1].hops == h5->hops &&
		  !memcmp(h5->ports[1].path, h5->path, h5->hops + 1u) ? 1 : 2;
	h5->smp_lid = H5_PORT == 1 ? 5 : 6;
	PREV = prev;
	done = false;
	memset(&R, 0, sizeof(R));
	F.n_sent = 0;
}

/* Which SMPs go LID-routed: the reads of nodes the last sweep marked,
 * never NodeInfo, only on the node's directed route of then (H5's second
 * port is read DR), nothing to unmarked nodes; the model is the same. */
START_TEST(lid_routed_reads_of_known_nodes)
{
	struct fabric prev;
	struct fabric_counts c;
	unsigned by_lid[16] = { 0 };

	lid_fabric(&prev);
	LIDR = true;
	discover();
	for (size_t i = 0; i < F.n_sent; i++) {
		const struct mad_hdr *mh = (const void *)F.sent[i].mad;

		if (mh->mgmt_class != MAD_CLASS_SMI)
			continue;
		ck_assert_uint_ne(be16toh(mh->attr_id), SMP_ATTR_NODE_INFO);
		ck_assert_uint_lt(F.sent[i].addr.lid, 16);
		by_lid[F.sent[i].addr.lid]++;
		if (F.sent[i].addr.lid == (H5_PORT == 1 ? 5 : 6) &&
		    be16toh(mh->attr_id) == SMP_ATTR_PORT_INFO)
			ck_assert_uint_eq(be32toh(mh->attr_mod), H5_PORT);
	}
	ck_assert_uint_gt(by_lid[10], 8);	/* SwitchInfo, 9 PortInfo, ... */
	ck_assert_uint_gt(by_lid[11], 8);
	ck_assert_uint_gt(by_lid[2], 0);
	ck_assert_uint_gt(by_lid[H5_PORT == 1 ? 5 : 6], 0);
	ck_assert_uint_eq(by_lid[12] + by_lid[1] + by_lid[3] + by_lid[4] +
			  by_lid[H5_PORT == 1 ? 6 : 5], 0);
	ck_assert_uint_eq(R.lid_smps, by_lid[10] + by_lid[11] + by_lid[2] +
			  by_lid[5] + by_lid[6]);
	ck_assert_uint_eq(R.lid_fallbacks, 0);
	ck_assert_uint_eq(R.failed, 0);
	fabric_count(&M, &c);
	ck_assert_uint_eq(c.switches, 3);
	ck_assert_uint_eq(c.cas, 5);
	ck_assert_uint_eq(c.links, 9);
	ck_assert(node(G_SW(1))->has_switch_info);
	ck_assert_str_eq(node(G_SW(2))->desc, "spine-1");
	ck_assert(node(G_H(5))->ports[2].valid);
	ck_assert(!node(G_SW(1))->smp_lid_failed);
	fabric_free(&prev);
}
END_TEST

/* Off (the first sweep, or the SM without a LID): everything DR. */
START_TEST(lid_routes_off_all_dr)
{
	struct fabric prev;

	lid_fabric(&prev);
	LIDR = false;
	discover();
	for (size_t i = 0; i < F.n_sent; i++)
		ck_assert_uint_eq(fake_class(&F, i), MAD_CLASS_SMI_DR);
	ck_assert_uint_eq(R.lid_smps, 0);
	fabric_free(&prev);
}
END_TEST

/* A node found at another directed route than the last sweep's (it
 * moved, or the way to it changed) is read DR. */
START_TEST(lid_routes_need_same_path)
{
	struct fabric prev;
	struct fab_node *o;

	lid_fabric(&prev);
	o = fabric_node(&prev, fabric_find(&prev, G_SW(2)));
	o->path[1] = (uint8_t)(o->path[1] == 6 ? 5 : 6);
	LIDR = true;
	discover();
	for (size_t i = 0; i < F.n_sent; i++)
		if (fake_class(&F, i) == MAD_CLASS_SMI)
			ck_assert_uint_ne(F.sent[i].addr.lid, 11);
	ck_assert_uint_gt(R.lid_smps, 0);	/* the leaf's still */
	fabric_free(&prev);
}
END_TEST

/* The route to the leaf's LID is broken: its LID-routed reads are lost,
 * sent again by DR, the node is marked, later reads to it go DR at once,
 * and the discovery completes with the whole model and no failure. */
START_TEST(lid_routed_lost_falls_back)
{
	struct fabric prev;
	struct fabric_counts c;
	unsigned lid10 = 0;

	lid_fabric(&prev);
	LIDR = true;
	LID_BROKEN = 10;
	discover();
	LID_BROKEN = 0;
	for (size_t i = 0; i < F.n_sent; i++)
		lid10 += fake_class(&F, i) == MAD_CLASS_SMI &&
			 F.sent[i].addr.lid == 10;
	ck_assert_uint_gt(R.lid_fallbacks, 0);
	/* only what was asked before the first loss: SwitchInfo and
	 * NodeDescription, each with its retry; the 9 PortInfo came after */
	ck_assert_uint_le(lid10, 4);
	ck_assert(node(G_SW(1))->smp_lid_failed);
	ck_assert(!node(G_SW(2))->smp_lid_failed);
	ck_assert_uint_eq(R.failed, 0);
	ck_assert_uint_eq(R.dead_ends, 0);
	fabric_count(&M, &c);
	ck_assert_uint_eq(c.switches, 3);
	ck_assert_uint_eq(c.cas, 5);
	ck_assert_uint_eq(c.links, 9);
	ck_assert(node(G_SW(1))->has_switch_info);
	for (unsigned p = 0; p <= 8; p++)
		ck_assert(node(G_SW(1))->ports[p].valid);
	fabric_free(&prev);
}
END_TEST

static Suite *discover_suite(void)
{
	Suite *s = suite_create("discover");
	TCase *tc;

	tc = tcase_create("legit");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, loops_and_multiport_ca);
	tcase_add_test(tc, parallel_links);
	suite_add_tcase(s, tc);

	tc = tcase_create("lid_routed");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, lid_routed_reads_of_known_nodes);
	tcase_add_test(tc, lid_routes_off_all_dr);
	tcase_add_test(tc, lid_routes_need_same_path);
	tcase_add_test(tc, lid_routed_lost_falls_back);
	suite_add_tcase(s, tc);

	tc = tcase_create("twins");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, twin_ca);
	tcase_add_test(tc, twin_ca_other_port_guid);
	tcase_add_test(tc, twin_of_local_node);
	tcase_add_test(tc, self_link_back_to_back);
	tcase_add_test(tc, self_link_only_port_to_same_port);
	tcase_add_test(tc, self_link_not_through_switch);
	tcase_add_test(tc, twin_switch);
	tcase_add_test(tc, twin_switch_down_port);
	tcase_add_test(tc, twin_other_model);
	tcase_add_test(tc, twin_closer_first_seen_wins);
	tcase_add_test(tc, twin_closer_previous_model_wins);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, ca_zero_ports);
	tcase_add_test(tc, ca_port_beyond_ports);
	tcase_add_test(tc, ca_unknown_type);
	tcase_add_test(tc, ca_local_port_zero);
	tcase_add_test(tc, switch_bad_type);
	tcase_add_test(tc, switch_local_port_zero_over_link);
	tcase_add_test(tc, node_guid_zero);
	tcase_add_test(tc, node_info_error_status);
	tcase_add_test(tc, truncated_answer);
	tcase_add_test(tc, switch_info_error_status);
	tcase_add_test(tc, port_info_error_status);
	tcase_add_test(tc, node_desc_unterminated);
	tcase_add_test(tc, mute_switch);
	tcase_add_test(tc, dead_end);
	tcase_add_test(tc, pkey_cap_huge);
	tcase_add_test(tc, made_up_fabric_bounded);
	tcase_add_test(tc, error_lines_rate_limited);
	suite_add_tcase(s, tc);

	tc = tcase_create("deferred_pkeys");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, deferred_pkeys_same_tables);
	tcase_add_test(tc, deferred_pkeys_failures_counted);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(discover_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
