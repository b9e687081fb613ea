/*
 * check_program.c - the Sets of sm/program.c against a scripted fabric
 * (fake_fabric.h): which LFT blocks and SwitchInfo Sets a forwarding
 * table produces given what the switch holds (the image diff), which
 * PortInfo and P_KeyTable Sets a port needs, and that Sets a switch
 * never acknowledges are counted and charged to that switch (issue 10
 * finding 5: the sweep names and excludes it).
 *
 * The model is built by a real discovery of the scripted fabric.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "sm/discover.h"
#include "sm/fabric.h"
#include "sm/log.h"
#include "sm/program.h"
#include "tests/unit/fake_transport.h"
#include "tests/unit/fake_fabric.h"

static struct ev_loop *L;
static struct fake F;
static struct fake_fabric FF;
static struct fabric M;
static struct lft_images *IM;
static struct smp_batch B;
static bool done;
static int sw, h1, h2, h3;
static int32_t sw_id;

static const struct sm_config cfg = {
	.subnet_prefix = 0xfe80000000000000ull, .subnet_timeout = 18,
	.packet_life_time = 0x12, .head_of_queue_lifetime = 0x12,
	.leaf_head_of_queue_lifetime = 0x10, .max_op_vls = 5,
};

static void on_guard(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(l, EVBREAK_ALL);
}

static void run_until_done(void)
{
	ev_timer guard;

	ev_timer_init(&guard, on_guard, 10., 0.);
	ev_timer_start(L, &guard);
	while (!done && ev_run(L, 0))
		;
	ev_timer_stop(L, &guard);
	ck_assert_msg(done, "did not finish");
}

static void on_discovered(void *arg, const struct discover_result *r)
{
	(void)arg;
	ck_assert_uint_eq(r->failed, 0);
	done = true;
	ev_break(L, EVBREAK_ALL);
}

/* H1 (the SM), H2, H3 on switch ports 1-3. */
static void setup(void)
{
	const struct mad_engine_opts o = {
		.max_wire_smps = 4, .max_wire_gmps = 4, .timeout_ms = 5,
		.retries = 1,
	};
	struct discovery *d;

	log_set_level(LOG_LVL_ERR);
	L = ev_loop_new(EVFLAG_AUTO);
	ck_assert_ptr_nonnull(L);
	ck_assert_int_eq(fake_init(&F, L, &o), 0);
	ff_init(&FF, &F);
	h1 = ff_add(&FF, NODE_TYPE_CA, 1, 0x100000, "H1");
	h2 = ff_add(&FF, NODE_TYPE_CA, 1, 0x100002, "H2");
	h3 = ff_add(&FF, NODE_TYPE_CA, 1, 0x100004, "H3");
	sw = ff_add(&FF, NODE_TYPE_SWITCH, 8, 0x200000, "leaf");
	ff_link(&FF, h1, 1, sw, 1);
	ff_link(&FF, h2, 1, sw, 2);
	ff_link(&FF, h3, 1, sw, 3);
	FF.local = h1;
	FF.local_port = 1;
	fabric_init(&M);
	done = false;
	ck_assert_int_eq(discover_start(&d, F.engine, &M, false, on_discovered,
					NULL), 0);
	run_until_done();
	discover_free(d);
	sw_id = fabric_find(&M, 0x200000);
	ck_assert_int_ne(sw_id, FAB_NONE);
	IM = lft_images_new();
	ck_assert_ptr_nonnull(IM);
}

static void teardown(void)
{
	lft_images_free(IM);
	fake_fini(&F);
	fabric_free(&M);
	ev_loop_destroy(L);
	L = NULL;
}

/* ---------------------------------------------------------- batches */

struct failure {
	int32_t node;
	uint8_t port;
	uint16_t attr;
};
static struct failure fails[64];
static unsigned n_fails;

static void on_done(struct smp_batch *b, void *arg)
{
	(void)b;
	(void)arg;
	done = true;
	ev_break(L, EVBREAK_ALL);
}

static void on_fail(struct smp_batch *b, int32_t node, uint8_t port,
		    uint16_t attr, void *arg)
{
	(void)b;
	(void)arg;
	if (n_fails < 64)
		fails[n_fails++] = (struct failure){ node, port, attr };
}

/* Program the switch with `lft` in one batch; returns Sets queued. */
static int program(const struct lft *lft)
{
	int queued;

	batch_init(&B, F.engine, on_done, NULL);
	B.on_fail = on_fail;
	n_fails = 0;
	done = false;
	queued = program_switch(&B, IM, &cfg, &M, sw_id, lft);
	ck_assert_int_ge(queued, 0);
	/* No producer: seal the batch by hand, as batch_run() would. */
	B.sealed = true;
	if (!B.pending)
		done = true;
	else
		run_until_done();
	/* What a new discovery would read back. */
	fabric_node(&M, sw_id)->si.lft_top = htobe16(FF.node[sw].lft_top);
	fabric_node(&M, sw_id)->si.life_psc_osl = FF.node[sw].life;
	return queued;
}

static uint8_t ports[200];

static struct lft table(unsigned top)
{
	for (unsigned i = 0; i < sizeof(ports); i++)
		ports[i] = (uint8_t)(i % 3 + 1);
	ports[0] = LFT_NO_PATH;
	return (struct lft){ .top = (uint16_t)top, .port = ports };
}

/* A fresh switch gets every block up to top and a SwitchInfo Set for
 * LinearFDBTop; the same table again gets nothing. */
START_TEST(lft_first_then_nothing)
{
	struct lft t = table(130);		/* blocks 0, 1, 2 */

	ck_assert_int_eq(program(&t), 4);
	ck_assert_uint_eq(FF.node[sw].sets[SMP_ATTR_LFT], 3);
	ck_assert_uint_eq(FF.node[sw].sets[SMP_ATTR_SWITCH_INFO], 1);
	ck_assert_uint_eq(FF.node[sw].lft_top, 130);
	ck_assert_uint_eq(B.failed, 0);
	ck_assert_int_eq(lft_images_top(IM, 0x200000), 130);

	ck_assert_int_eq(program(&t), 0);
	ck_assert_uint_eq(FF.node[sw].sets[SMP_ATTR_LFT], 3);
}
END_TEST

/* One entry changes: exactly its block is Set again. */
START_TEST(lft_one_block_differs)
{
	struct lft t = table(130);

	program(&t);
	ports[100] = ports[100] == 1 ? 2 : 1;	/* block 1 */
	ck_assert_int_eq(program(&t), 1);
	ck_assert_uint_eq(FF.node[sw].sets[SMP_ATTR_LFT], 4);
	ck_assert_uint_eq(FF.node[sw].last_lft_block, 1);
}
END_TEST

/* A switch whose top changed behind our back (reset, another SM): the
 * image is not trusted and every block is Set again. */
START_TEST(lft_top_changed_behind_our_back)
{
	struct lft t = table(130);

	program(&t);
	FF.node[sw].lft_top = 10;
	fabric_node(&M, sw_id)->si.lft_top = htobe16(10);
	ck_assert_int_eq(program(&t), 4);
	ck_assert_uint_eq(FF.node[sw].sets[SMP_ATTR_LFT], 6);
}
END_TEST

/* A switch that never acknowledges its LFT Sets (ibsim `Error "sw" 100
 * 0x19`): each Set is given up on after its retries, counted as failed
 * and unacknowledged and charged to the switch; the image does not claim
 * those blocks, so the next sweep sends them again. */
START_TEST(lft_sets_unacknowledged)
{
	struct lft t = table(130);

	FF.node[sw].drop_lft_sets = true;
	ck_assert_int_eq(program(&t), 4);
	ck_assert_uint_eq(B.failed, 3);
	ck_assert_uint_eq(B.unacked, 3);
	ck_assert_uint_eq(n_fails, 3);
	for (unsigned i = 0; i < n_fails; i++) {
		ck_assert_int_eq(fails[i].node, sw_id);
		ck_assert_uint_eq(fails[i].attr, SMP_ATTR_LFT);
	}
	/* Tried once per engine attempt and round (retries 1, 3 rounds). */
	ck_assert_uint_eq(FF.node[sw].sets[SMP_ATTR_LFT], 3 * 2 * 3);

	FF.node[sw].drop_lft_sets = false;
	ck_assert_int_eq(program(&t), 3);
	ck_assert_uint_eq(B.failed, 0);
	ck_assert_uint_eq(n_fails, 0);
}
END_TEST

/* A switch that acknowledges nothing: its SwitchInfo Set fails too. */
START_TEST(all_sets_unacknowledged)
{
	struct lft t = table(10);

	FF.node[sw].drop_sets = true;
	ck_assert_int_eq(program(&t), 2);
	ck_assert_uint_eq(B.unacked, 2);
	ck_assert_uint_eq(n_fails, 2);
	ck_assert(fails[0].attr == SMP_ATTR_SWITCH_INFO ||
		  fails[1].attr == SMP_ATTR_SWITCH_INFO);
	ck_assert_int_eq(lft_images_top(IM, 0x200000), 0);
}
END_TEST

/* An error status is no acknowledgement either. */
static bool refuse_lft(struct fake_fabric *ff, int id, uint8_t in_port,
		       struct smp_dr *resp, void *arg)
{
	(void)ff;
	(void)id;
	(void)in_port;
	(void)arg;
	if (be16toh(resp->hdr.attr_id) == SMP_ATTR_LFT)
		resp->hdr.status |= htobe16(MAD_STATUS_INVALID_FIELD);
	return true;
}

START_TEST(lft_sets_refused)
{
	struct lft t = table(63);

	FF.mutate = refuse_lft;
	ck_assert_int_eq(program(&t), 2);
	ck_assert_uint_eq(B.unacked, 1);
	ck_assert_uint_eq(n_fails, 1);
	ck_assert_uint_eq(fails[0].attr, SMP_ATTR_LFT);
	/* Refused once, not retried: an error status is an answer. */
	ck_assert_uint_eq(FF.node[sw].sets[SMP_ATTR_LFT], 1);
}
END_TEST

/* ------------------------------------------------------- PortInfo */

/* A CA port in INIT without a LID: a Set is due, with the LID, SM LID,
 * prefix, timeout and the state asked; once the port holds all of it,
 * none is. */
START_TEST(port_desired_endport)
{
	int32_t id = fabric_find(&M, 0x100002);
	struct fab_port *p = &fabric_node(&M, id)->ports[1];
	struct smp_port_info pi;

	p->lid = 7;
	ck_assert(port_desired(&cfg, &M, id, 1, 1, PORT_STATE_ARMED, false, &pi));
	ck_assert_uint_eq(be16toh(pi.lid), 7);
	ck_assert_uint_eq(be16toh(pi.master_sm_lid), 1);
	ck_assert_uint_eq(be64toh(pi.gid_prefix), cfg.subnet_prefix);
	ck_assert_uint_eq(pi_subnet_timeout(&pi), 18);
	ck_assert_uint_eq(pi_port_state(&pi), PORT_STATE_ARMED);

	p->pi = pi;
	pi_set_port_state(&p->pi, PORT_STATE_ARMED);
	ck_assert(!port_desired(&cfg, &M, id, 1, 1, PORT_STATE_NOP, false, &pi));
	ck_assert_uint_eq(pi_port_state(&pi), PORT_STATE_NOP);
	/* A new SM LID makes it due again. */
	ck_assert(port_desired(&cfg, &M, id, 1, 2, PORT_STATE_NOP, false, &pi));
	/* Client reregistration is always a Set on a CA. */
	p->pi.master_sm_lid = htobe16(1);
	ck_assert(port_desired(&cfg, &M, id, 1, 1, PORT_STATE_NOP, true, &pi));
	ck_assert_uint_eq(pi_client_rereg(&pi), 1);
}
END_TEST

/* A switch port facing a CA: link fields only (HOQ for a leaf port),
 * no LID. */
START_TEST(port_desired_switch_port)
{
	struct fab_port *p = &fabric_node(&M, sw_id)->ports[2];
	struct smp_port_info pi;

	ck_assert(port_desired(&cfg, &M, sw_id, 2, 1, PORT_STATE_NOP, false, &pi));
	ck_assert_uint_eq(pi.vl_stall_hoq_life & 0x1f, 0x10);
	ck_assert_uint_eq(be16toh(pi.lid), 0);
	p->pi = pi;
	ck_assert(!port_desired(&cfg, &M, sw_id, 2, 1, PORT_STATE_NOP, false, &pi));
}
END_TEST

/* ------------------------------------------------------- P_Keys */

/* The CA's table as read holds 0xFFFF at index 0: nothing to do.  With a
 * limited 0x7FFF at index 5 and a stray key, block 0 is Set once with
 * 0xFFFF at index 5 and nothing else. */
START_TEST(pkeys_diff)
{
	int32_t id = fabric_find(&M, 0x100002);
	struct fab_port *p = &fabric_node(&M, id)->ports[1];

	ck_assert(fabric_pkey_known(p));
	batch_init(&B, F.engine, on_done, NULL);
	ck_assert_int_eq(program_pkeys(&B, &M, id, 1), 0);

	memset(p->pkeys, 0, PKEY_BLOCK_SIZE * sizeof(*p->pkeys));
	p->pkeys[5] = htobe16(0x7fff);
	p->pkeys[9] = htobe16(0x8001);
	done = false;
	ck_assert_int_eq(program_pkeys(&B, &M, id, 1), 1);
	B.sealed = true;
	run_until_done();
	ck_assert_uint_eq(FF.node[h2].sets[SMP_ATTR_PKEY_TABLE], 1);
	/* The model holds what the port answered. */
	ck_assert_uint_eq(be16toh(p->pkeys[5]), 0xffff);
	ck_assert_uint_eq(be16toh(p->pkeys[9]), 0);
	ck_assert_int_eq(program_pkeys(&B, &M, id, 1), 0);
}
END_TEST

static Suite *program_suite(void)
{
	Suite *s = suite_create("program");
	TCase *tc = tcase_create("lft");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, lft_first_then_nothing);
	tcase_add_test(tc, lft_one_block_differs);
	tcase_add_test(tc, lft_top_changed_behind_our_back);
	tcase_add_test(tc, lft_sets_unacknowledged);
	tcase_add_test(tc, all_sets_unacknowledged);
	tcase_add_test(tc, lft_sets_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("ports");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, port_desired_endport);
	tcase_add_test(tc, port_desired_switch_port);
	tcase_add_test(tc, pkeys_diff);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(program_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
