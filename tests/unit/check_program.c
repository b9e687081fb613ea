/*
 * check_program.c - the Sets of sm/program/ against a scripted fabric
 * (fake_fabric.h): which LFT blocks and SwitchInfo Sets a forwarding
 * table produces given what the switch holds (the image diff), which
 * PortInfo and P_KeyTable Sets a port needs, and that Sets a switch
 * never acknowledges are counted and charged to that switch (so that the
 * sweep can name and exclude it).
 *
 * The model is built by a real discovery of the scripted fabric.
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "sm/discover.h"
#include "model/fabric.h"
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

/* ------------------------------------------- refused repeated PortInfo */

static unsigned pi_answers;
static bool pi_lie;		/* the read-back shows another LID */

/* H2's first PortInfo answer is lost (the Set took effect), the repeat
 * is refused as an invalid transition (ARMED -> ARMED, as ibsim and
 * devices do), the read-back is answered (or lies about the LID). */
static bool repeat_refused(struct fake_fabric *ff, int id, uint8_t in_port,
			   struct smp_dr *resp, void *arg)
{
	(void)ff;
	(void)in_port;
	(void)arg;
	if (id != h2 || be16toh(resp->hdr.attr_id) != SMP_ATTR_PORT_INFO)
		return true;
	switch (++pi_answers) {
	case 1:
		return false;
	case 2:
		resp->hdr.status |= htobe16(MAD_STATUS_INVALID_FIELD);
		return true;
	default:
		if (pi_lie) {
			struct smp_port_info pi;

			memcpy(&pi, resp->data, sizeof(pi));
			pi.lid = htobe16(99);
			memcpy(resp->data, &pi, sizeof(pi));
		}
		return true;
	}
}

static const uint8_t *pi_data;
static bool pi_called;

static void on_pi(struct smp_batch *b, int32_t node, uint8_t port,
		  const uint8_t *data, void *arg)
{
	(void)b;
	(void)node;
	(void)port;
	(void)arg;
	pi_called = true;
	pi_data = data;
}

/* Queue H2's PortInfo Set (LID 7, ARMED) alone in a batch and run it. */
static void arm_h2(void)
{
	int32_t id = fabric_find(&M, 0x100002);
	struct smp_port_info pi = fabric_node(&M, id)->ports[1].pi;
	const uint8_t *path;
	unsigned hops;

	pi.lid = htobe16(7);
	pi.master_sm_lid = 0;
	pi.speed_supported_state = (uint8_t)((pi.speed_supported_state & 0xf0) |
					     PORT_STATE_ARMED);
	batch_init(&B, F.engine, on_done, NULL);
	B.on_fail = on_fail;
	n_fails = 0;
	done = false;
	pi_answers = 0;
	pi_called = false;
	FF.mutate = repeat_refused;
	port_path(&M, id, 1, &path, &hops);
	ck_assert_int_eq(batch_smp(&B, MAD_METHOD_SET, path, hops,
				   SMP_ATTR_PORT_INFO, 1, &pi, sizeof(pi), id,
				   1, on_pi, NULL), 0);
	B.sealed = true;
	run_until_done();
	ck_assert(pi_called);
	ck_assert_uint_eq(pi_answers, 3);	/* Set, repeat, read-back */
}

/* The read-back shows the port ARMED with the LID asked: the Set is done. */
START_TEST(portinfo_repeat_refused_found_done)
{
	pi_lie = false;
	arm_h2();
	ck_assert_uint_eq(B.unacked, 0);
	ck_assert_uint_eq(B.readbacks, 1);
	ck_assert_ptr_nonnull(pi_data);
	ck_assert_uint_eq(n_fails, 0);
}
END_TEST

/* The read-back disagrees: the refusal stands. */
START_TEST(portinfo_repeat_refused_not_done)
{
	pi_lie = true;
	arm_h2();
	ck_assert_uint_eq(B.unacked, 1);
	ck_assert_uint_eq(B.readbacks, 0);
	ck_assert_ptr_null(pi_data);
	ck_assert_uint_eq(n_fails, 1);
	ck_assert_uint_eq(fails[0].attr, SMP_ATTR_PORT_INFO);
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

/* qos TRUE: a switch port facing a CA gets the qos_swe_ high limit, or
 * the base qos_ one; qos FALSE leaves VLHighLimit as the port has it. */
START_TEST(port_desired_qos_high_limit)
{
	struct fab_port *p = &fabric_node(&M, sw_id)->ports[2];
	struct sm_config q = cfg;
	struct smp_port_info pi;

	ck_assert(port_desired(&cfg, &M, sw_id, 2, 1, PORT_STATE_NOP, false, &pi));
	p->pi = pi;
	p->pi.vl_high_limit = 3;
	ck_assert(!port_desired(&cfg, &M, sw_id, 2, 1, PORT_STATE_NOP, false, &pi));
	for (int c = 0; c < QOS_N_CLASSES; c++)
		q.qos_keys[c] = (struct qos_key_set){ 0, -1, NULL, NULL, NULL };
	q.qos = true;
	q.qos_keys[QOS_BASE].high_limit = 9;
	ck_assert(port_desired(&q, &M, sw_id, 2, 1, PORT_STATE_NOP, false, &pi));
	ck_assert_uint_eq(pi.vl_high_limit, 9);
	q.qos_keys[QOS_SWE].high_limit = 200;
	q.qos_keys[QOS_CA].high_limit = 1;
	ck_assert(port_desired(&q, &M, sw_id, 2, 1, PORT_STATE_NOP, false, &pi));
	ck_assert_uint_eq(pi.vl_high_limit, 200);
	p->pi.vl_high_limit = 200;
	ck_assert(!port_desired(&q, &M, sw_id, 2, 1, PORT_STATE_NOP, false, &pi));
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

/* ---------------------------------------------- partitions' tables */

/* The P_KeyTable Sets to node `node` in F.sent from index `from` on:
 * their AttributeModifiers in `mods` and their blocks in `blocks`. */
static unsigned pkey_sets(size_t from, uint32_t *mods, __be16 (*blocks)[32],
			  unsigned max)
{
	unsigned n = 0;

	for (size_t i = from; i < F.n_sent && n < max; i++) {
		const struct smp_dr *s = (const void *)F.sent[i].mad;

		if (s->hdr.method != MAD_METHOD_SET ||
		    be16toh(s->hdr.attr_id) != SMP_ATTR_PKEY_TABLE)
			continue;
		mods[n] = be32toh(s->hdr.attr_mod);
		memcpy(blocks[n], s->data, sizeof(blocks[n]));
		n++;
	}
	return n;
}

static int run_pkeys(int32_t id, unsigned pn)
{
	int queued;

	batch_init(&B, F.engine, on_done, NULL);
	done = false;
	queued = program_pkeys(&B, &M, id, pn);
	ck_assert_int_ge(queued, 0);
	B.sealed = true;
	if (B.pending)
		run_until_done();
	return queued;
}

/* A CA with a 3-block table (96 entries) and want_pkeys of 40 entries:
 * block 0 and block 1 differ from what the port holds and are Set with
 * exactly the wanted entries (the rest of block 1 empty); block 2, empty
 * already, is not sent.  A second run sends nothing; one changed entry in
 * block 1 sends block 1 only. */
START_TEST(pkeys_want_blocks)
{
	int32_t id = fabric_find(&M, 0x100002);
	struct fab_node *n = fabric_node(&M, id);
	struct fab_port *p = &n->ports[1];
	uint32_t mods[8];
	__be16 blocks[8][32];

	ck_assert_int_eq(fabric_pkey_alloc(n, 1, 3), 0);
	p->pkey_read = 3;
	p->pkeys[0] = htobe16(0xffff);		/* as read */
	p->want_pkeys = calloc(40, sizeof(*p->want_pkeys));
	ck_assert_ptr_nonnull(p->want_pkeys);
	p->n_want_pkeys = 40;
	p->want_pkeys[0] = 0xffff;
	p->want_pkeys[1] = 0x8002;
	p->want_pkeys[2] = 0x0003;
	p->want_pkeys[33] = 0x8004;
	p->want_pkeys[39] = 0x0005;

	size_t from = F.n_sent;
	ck_assert_int_eq(run_pkeys(id, 1), 2);
	ck_assert_uint_eq(pkey_sets(from, mods, blocks, 8), 2);
	ck_assert_uint_eq(mods[0], 0);
	ck_assert_uint_eq(mods[1], 1);
	ck_assert_uint_eq(be16toh(blocks[0][0]), 0xffff);
	ck_assert_uint_eq(be16toh(blocks[0][1]), 0x8002);
	ck_assert_uint_eq(be16toh(blocks[0][2]), 0x0003);
	ck_assert_uint_eq(be16toh(blocks[0][3]), 0);
	ck_assert_uint_eq(be16toh(blocks[1][0]), 0);
	ck_assert_uint_eq(be16toh(blocks[1][1]), 0x8004);
	ck_assert_uint_eq(be16toh(blocks[1][7]), 0x0005);
	ck_assert_uint_eq(be16toh(blocks[1][8]), 0);
	/* The model holds what the port answered. */
	ck_assert_uint_eq(be16toh(p->pkeys[33]), 0x8004);
	ck_assert_uint_eq(be16toh(p->pkeys[39]), 0x0005);

	from = F.n_sent;
	ck_assert_int_eq(run_pkeys(id, 1), 0);
	ck_assert_uint_eq(pkey_sets(from, mods, blocks, 8), 0);

	p->want_pkeys[39] = 0x8005;
	from = F.n_sent;
	ck_assert_int_eq(run_pkeys(id, 1), 1);
	ck_assert_uint_eq(pkey_sets(from, mods, blocks, 8), 1);
	ck_assert_uint_eq(mods[0], 1);
	ck_assert_uint_eq(be16toh(blocks[0][7]), 0x8005);
}
END_TEST

/* want_pkeys larger than the port's table (64 entries for a 1-block
 * port): only block 0 is ever written, never a block past the port's
 * size.  On a switch external port the AttributeModifier carries the
 * port number (14.2.5.7). */
START_TEST(pkeys_want_bigger_than_port)
{
	struct fab_node *n = fabric_node(&M, sw_id);
	struct fab_port *p = &n->ports[2];
	uint32_t mods[8];
	__be16 blocks[8][32];

	ck_assert(fabric_pkey_known(p));
	ck_assert_uint_eq(p->pkey_blocks, 1);
	p->want_pkeys = calloc(64, sizeof(*p->want_pkeys));
	ck_assert_ptr_nonnull(p->want_pkeys);
	p->n_want_pkeys = 64;
	for (unsigned i = 0; i < 64; i++)
		p->want_pkeys[i] = (uint16_t)(0x8000 | (i + 1));

	size_t from = F.n_sent;
	ck_assert_int_eq(run_pkeys(sw_id, 2), 1);
	ck_assert_uint_eq(pkey_sets(from, mods, blocks, 8), 1);
	ck_assert_uint_eq(mods[0], 2u << 16 | 0);
	ck_assert_uint_eq(be16toh(blocks[0][0]), 0x8001);
	ck_assert_uint_eq(be16toh(blocks[0][31]), 0x8020);
}
END_TEST

/* A table the discovery could not read entirely: every block is Set. */
START_TEST(pkeys_want_unread_table)
{
	int32_t id = fabric_find(&M, 0x100004);
	struct fab_node *n = fabric_node(&M, id);
	struct fab_port *p = &n->ports[1];

	ck_assert_int_eq(fabric_pkey_alloc(n, 1, 2), 0);
	p->pkey_read = 1;		/* block 1 never answered */
	p->want_pkeys = calloc(1, sizeof(*p->want_pkeys));
	ck_assert_ptr_nonnull(p->want_pkeys);
	p->n_want_pkeys = 1;
	p->want_pkeys[0] = 0xffff;
	ck_assert_int_eq(run_pkeys(id, 1), 2);
}
END_TEST

/* Without want_pkeys nothing changes: the default partition as before. */
START_TEST(pkeys_no_want_default)
{
	int32_t id = fabric_find(&M, 0x100002);
	struct fab_port *p = &fabric_node(&M, id)->ports[1];

	ck_assert_ptr_null(p->want_pkeys);
	ck_assert_int_eq(run_pkeys(id, 1), 0);
	p->pkeys[0] = htobe16(0x8002);
	ck_assert_int_eq(run_pkeys(id, 1), 1);
	ck_assert_uint_eq(be16toh(p->pkeys[0]), 0xffff);
}
END_TEST

/* ------------------------------------------------------ enforcement */

/*
 * The PortInfo Set of a switch port facing a CA with partitions carries
 * PartitionEnforcementInbound (0x8) and Outbound (0x4) as part_enforce
 * says (OpenSM: both 0xc, in 0x8, out 0x4, off 0).  port_desired()'s
 * answer is the payload the sweep sends.  A switch port facing a CA
 * without partitions, and the CA port itself, keep their bits.
 */
START_TEST(enforce_bits_per_setting)
{
	static const struct { enum sm_part_enforce e; unsigned bits; } rows[] = {
		{ SM_PART_ENFORCE_BOTH, 0xc }, { SM_PART_ENFORCE_IN, 0x8 },
		{ SM_PART_ENFORCE_OUT, 0x4 }, { SM_PART_ENFORCE_OFF, 0x0 },
	};
	int32_t h2_id = fabric_find(&M, 0x100002);
	struct fab_port *ca = &fabric_node(&M, h2_id)->ports[1];
	struct fab_port *swp = &fabric_node(&M, sw_id)->ports[2];
	struct fab_port *swp3 = &fabric_node(&M, sw_id)->ports[3];
	struct smp_port_info pi;
	struct sm_config c = cfg;

	/* Settle every other field first. */
	ck_assert(port_desired(&cfg, &M, sw_id, 2, 1, PORT_STATE_NOP, false, &pi));
	swp->pi = pi;
	ck_assert(port_desired(&cfg, &M, sw_id, 3, 1, PORT_STATE_NOP, false, &pi));
	swp3->pi = pi;
	ck_assert(!port_desired(&cfg, &M, sw_id, 2, 1, PORT_STATE_NOP, false, &pi));

	ca->want_pkeys = calloc(1, sizeof(*ca->want_pkeys));
	ck_assert_ptr_nonnull(ca->want_pkeys);
	ca->n_want_pkeys = 1;
	ca->want_pkeys[0] = 0xffff;
	for (unsigned r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		c.part_enforce = rows[r].e;
		swp->pi.op_vls_enforce = (uint8_t)(swp->pi.op_vls_enforce & 0xf0);
		bool due = port_desired(&c, &M, sw_id, 2, 1, PORT_STATE_NOP,
					false, &pi);
		ck_assert_msg(due == (rows[r].bits != 0), "row %u", r);
		ck_assert_uint_eq(pi.op_vls_enforce & 0x0c, rows[r].bits);
		/* OperationalVLs and FilterRaw bits untouched. */
		ck_assert_uint_eq(pi_op_vls(&pi), pi_op_vls(&swp->pi));
		ck_assert_uint_eq(pi.op_vls_enforce & 0x3, swp->pi.op_vls_enforce & 0x3);
		/* Once the port holds them, nothing is due. */
		swp->pi = pi;
		ck_assert(!port_desired(&c, &M, sw_id, 2, 1, PORT_STATE_NOP,
					false, &pi));
		/* The other switch port faces a CA without partitions. */
		ck_assert(!port_desired(&c, &M, sw_id, 3, 1, PORT_STATE_NOP,
					false, &pi));
	}
	/* "off" clears bits someone else set. */
	swp->pi.op_vls_enforce |= 0x0c;
	c.part_enforce = SM_PART_ENFORCE_OFF;
	ck_assert(port_desired(&c, &M, sw_id, 2, 1, PORT_STATE_NOP, false, &pi));
	ck_assert_uint_eq(pi.op_vls_enforce & 0x0c, 0);
}
END_TEST

/* ibsim does not store the enforcement bits: the memo settles such a
 * port, and a new part_enforce makes the Set due again (the bits are in
 * the memo's key). */
START_TEST(enforce_memo_key)
{
	int32_t h2_id = fabric_find(&M, 0x100002);
	struct fab_port *ca = &fabric_node(&M, h2_id)->ports[1];
	struct fab_port *swp = &fabric_node(&M, sw_id)->ports[2];
	struct smp_port_info pi;
	struct pi_key want, got, want2;
	struct sm_config c = cfg;
	struct port_memos *memos = port_memos_new();

	ck_assert_ptr_nonnull(memos);
	ca->want_pkeys = calloc(1, sizeof(*ca->want_pkeys));
	ck_assert_ptr_nonnull(ca->want_pkeys);
	ca->n_want_pkeys = 1;
	ca->want_pkeys[0] = 0xffff;
	ck_assert(port_desired(&c, &M, sw_id, 2, 1, PORT_STATE_NOP, false, &pi));
	swp->pi = pi;
	swp->pi.op_vls_enforce &= 0xf3;		/* what ibsim answers */
	pi_key_of(&pi, &want);
	pi_key_of(&swp->pi, &got);
	ck_assert_uint_eq(want.enforce, 0xc);
	port_memos_record(memos, 0x200000, 2, &want, &got);
	ck_assert(port_desired(&c, &M, sw_id, 2, 1, PORT_STATE_NOP, false, &pi));
	pi_key_of(&pi, &want2);
	ck_assert(port_memos_settled(memos, 0x200000, 2, &want2, &got));
	c.part_enforce = SM_PART_ENFORCE_IN;
	ck_assert(port_desired(&c, &M, sw_id, 2, 1, PORT_STATE_NOP, false, &pi));
	pi_key_of(&pi, &want2);
	ck_assert(!port_memos_settled(memos, 0x200000, 2, &want2, &got));
	port_memos_free(memos);
}
END_TEST

/*
 * A switch whose SwitchInfo:PartitionEnforcementCap is 0 has no P_Key
 * table on its external ports: the PortInfo Set of a port facing a CA
 * with partitions carries no enforcement bits (nothing to enforce with:
 * the switch would drop every packet it cannot check), and bits someone
 * else left there are cleared.  With a table the same port gets both.
 */
START_TEST(enforce_none_without_table)
{
	int32_t h2_id = fabric_find(&M, 0x100002);
	struct fab_node *swn = fabric_node(&M, sw_id);
	struct fab_port *ca = &fabric_node(&M, h2_id)->ports[1];
	struct fab_port *swp = &swn->ports[2];
	struct smp_port_info pi;
	__be16 cap = swn->si.partition_enf_cap;

	ck_assert(cap != 0);
	ck_assert(port_desired(&cfg, &M, sw_id, 2, 1, PORT_STATE_NOP, false, &pi));
	swp->pi = pi;
	swp->pi.op_vls_enforce &= 0xf3;
	ca->want_pkeys = calloc(1, sizeof(*ca->want_pkeys));
	ck_assert_ptr_nonnull(ca->want_pkeys);
	ca->n_want_pkeys = 1;
	ca->want_pkeys[0] = 0xffff;

	/* With a table: both bits (part_enforce's default). */
	ck_assert(port_desired(&cfg, &M, sw_id, 2, 1, PORT_STATE_NOP, false, &pi));
	ck_assert_uint_eq(pi.op_vls_enforce & 0x0c, 0x0c);

	/* No table: nothing due, no bits in what would be sent. */
	swn->si.partition_enf_cap = 0;
	ck_assert(!port_desired(&cfg, &M, sw_id, 2, 1, PORT_STATE_NOP, false,
				&pi));
	ck_assert_uint_eq(pi.op_vls_enforce & 0x0c, 0);
	/* Bits left by someone else: the Set clears them, and only them. */
	swp->pi.op_vls_enforce |= 0x0c;
	ck_assert(port_desired(&cfg, &M, sw_id, 2, 1, PORT_STATE_NOP, false, &pi));
	ck_assert_uint_eq(pi.op_vls_enforce & 0x0c, 0);
	ck_assert_uint_eq(pi.op_vls_enforce & 0xf3, swp->pi.op_vls_enforce & 0xf3);
	swn->si.partition_enf_cap = cap;
}
END_TEST

/* ------------------------------------------------------ SL to VL */

static struct sl2vl_images *SLI;
static unsigned sl_sets;

/* Give node `ff` (and the model's copy) IsSLMappingSupported. */
static void sl_map_on(int ff, uint64_t guid)
{
	int32_t id = fabric_find(&M, guid);
	struct fab_node *n = fabric_node(&M, id);

	FF.node[ff].sl_map = true;
	for (unsigned pn = 0; pn <= n->num_ports; pn++)
		if (n->type != NODE_TYPE_SWITCH ? pn > 0 : pn == 0)
			n->ports[pn].pi.cap_mask |= htobe32(PI_CAP_SL_MAP);
}

/* One batch with node `guid`'s tables for `layers` layers; SMPs queued
 * at once (Gets and Sets: Sets from Get answers come later). */
static int run_sl2vl(const struct sm_config *c, uint64_t guid, unsigned layers)
{
	struct routing_result r = { .n_layers = (uint8_t)layers };
	int queued;

	if (!SLI)
		SLI = sl2vl_images_new();
	ck_assert_ptr_nonnull(SLI);
	batch_init(&B, F.engine, on_done, NULL);
	B.on_fail = on_fail;
	n_fails = 0;
	done = false;
	sl_sets = 0;
	queued = program_sl2vl(&B, SLI, c, &M, fabric_find(&M, guid), &r,
			       &sl_sets);
	ck_assert_int_ge(queued, 0);
	B.sealed = true;
	if (B.pending)
		run_until_done();
	return queued;
}

static unsigned vl_of(const uint8_t t[8], unsigned sl)
{
	return sl % 2 ? t[sl / 2] & 0xf : t[sl / 2] >> 4;
}

static void sl2vl_teardown(void)
{
	sl2vl_images_free(SLI);
	SLI = NULL;
	teardown();
}

/* The wanted table: SL i on VL i for the layers the port's VLs hold,
 * every other SL on VL 0. */
START_TEST(sl2vl_want_table)
{
	uint8_t t[8];

	sl2vl_want(3, 8, t);
	ck_assert_uint_eq(t[0], 0x01);
	ck_assert_uint_eq(t[1], 0x20);
	for (unsigned i = 2; i < 8; i++)
		ck_assert_uint_eq(t[i], 0);
	sl2vl_want(15, 15, t);
	for (unsigned sl = 0; sl < 16; sl++)
		ck_assert_uint_eq(vl_of(t, sl), sl < 15 ? sl : 0);
	sl2vl_want(6, 4, t);		/* a port with VL0-3 only */
	for (unsigned sl = 0; sl < 16; sl++)
		ck_assert_uint_eq(vl_of(t, sl), sl < 4 ? sl : 0);
}
END_TEST

/* A switch with layers: every (input, output) pair of its linked ports
 * and port 0 as an input (4 x 3 tables here) is Set, unread, with the
 * input and output port in the modifier; the same layers again send
 * nothing; the CA's one table likewise. */
START_TEST(sl2vl_switch_then_nothing)
{
	sl_map_on(sw, 0x200000);
	ck_assert_int_eq(run_sl2vl(&cfg, 0x200000, 3), 12);
	ck_assert_uint_eq(FF.node[sw].gets[SMP_ATTR_SL2VL_TABLE], 0);
	ck_assert_uint_eq(FF.node[sw].sets[SMP_ATTR_SL2VL_TABLE], 12);
	ck_assert_uint_eq(sl_sets, 12);
	ck_assert_uint_eq(B.failed, 0);
	for (unsigned in = 0; in <= 8; in++)
		for (unsigned out = 0; out <= 8; out++) {
			bool mapped = out >= 1 && out <= 3 && in <= 3;

			for (unsigned sl = 0; sl < 16; sl++)
				ck_assert_uint_eq(vl_of(FF.node[sw].sl2vl[in][out], sl),
						  mapped && sl < 3 ? sl : 0);
			ck_assert(!mapped || FF.node[sw].sl2vl[in][out][0] == 0x01);
		}
	/* again: known and as wanted, no SMP at all */
	ck_assert_int_eq(run_sl2vl(&cfg, 0x200000, 3), 0);
	ck_assert_uint_eq(FF.node[sw].gets[SMP_ATTR_SL2VL_TABLE], 0);
	ck_assert_uint_eq(FF.node[sw].sets[SMP_ATTR_SL2VL_TABLE], 12);
	/* more layers: known and different, Sets again */
	ck_assert_int_eq(run_sl2vl(&cfg, 0x200000, 4), 12);
	ck_assert_uint_eq(FF.node[sw].gets[SMP_ATTR_SL2VL_TABLE], 0);
	ck_assert_uint_eq(FF.node[sw].sets[SMP_ATTR_SL2VL_TABLE], 24);
	ck_assert_uint_eq(vl_of(FF.node[sw].sl2vl[2][3], 3), 3);

	/* a CA: one table, modifier 0 */
	sl_map_on(h2, 0x100002);
	ck_assert_int_eq(run_sl2vl(&cfg, 0x100002, 3), 1);
	ck_assert_uint_eq(FF.node[h2].sets[SMP_ATTR_SL2VL_TABLE], 1);
	ck_assert_uint_eq(FF.node[h2].sl2vl[0][1][0], 0x01);
	ck_assert_uint_eq(FF.node[h2].sl2vl[0][1][1], 0x20);
	ck_assert_int_eq(run_sl2vl(&cfg, 0x100002, 3), 0);
}
END_TEST

/* Tables never seen are Set even when they hold the map already (one
 * SMP each, as a Get would be), and the one that differed is right; a
 * node forgotten (new or reset) gets its tables again. */
START_TEST(sl2vl_already_right)
{
	uint8_t t[8];

	sl_map_on(sw, 0x200000);
	sl2vl_want(2, 8, t);
	for (unsigned in = 0; in <= 8; in++)
		for (unsigned out = 0; out <= 8; out++)
			memcpy(FF.node[sw].sl2vl[in][out], t, 8);
	/* one table differs */
	FF.node[sw].sl2vl[3][1][0] = 0x11;
	ck_assert_int_eq(run_sl2vl(&cfg, 0x200000, 2), 12);
	ck_assert_uint_eq(FF.node[sw].gets[SMP_ATTR_SL2VL_TABLE], 0);
	ck_assert_uint_eq(FF.node[sw].sets[SMP_ATTR_SL2VL_TABLE], 12);
	ck_assert_uint_eq(sl_sets, 12);
	ck_assert_uint_eq(FF.node[sw].sl2vl[3][1][0], 0x01);
	ck_assert_int_eq(run_sl2vl(&cfg, 0x200000, 2), 0);
	sl2vl_images_forget(SLI, 0x200000, 8);
	ck_assert_int_eq(run_sl2vl(&cfg, 0x200000, 2), 12);
	ck_assert_uint_eq(FF.node[sw].sets[SMP_ATTR_SL2VL_TABLE], 24);
}
END_TEST

/* No layers, or one: the tables are left as they are (no SMP).  A
 * switch without IsSLMappingSupported: nothing either. */
START_TEST(sl2vl_no_layers)
{
	ck_assert_int_eq(run_sl2vl(&cfg, 0x200000, 3), 0);	/* no SL map */
	sl_map_on(sw, 0x200000);
	ck_assert_int_eq(run_sl2vl(&cfg, 0x200000, 0), 0);
	ck_assert_int_eq(run_sl2vl(&cfg, 0x200000, 1), 0);
	ck_assert_uint_eq(FF.node[sw].gets[SMP_ATTR_SL2VL_TABLE], 0);
	ck_assert_uint_eq(FF.node[sw].sets[SMP_ATTR_SL2VL_TABLE], 0);
}
END_TEST

/* OperationalVLs bound the VLs: with max_op_vls 2 (VL0-1) the third
 * layer's SL goes to VL 0. */
START_TEST(sl2vl_op_vls_bound)
{
	struct sm_config c = cfg;

	c.max_op_vls = 2;
	sl_map_on(sw, 0x200000);
	ck_assert_int_eq(run_sl2vl(&c, 0x200000, 3), 12);
	ck_assert_uint_eq(vl_of(FF.node[sw].sl2vl[1][2], 1), 1);
	ck_assert_uint_eq(vl_of(FF.node[sw].sl2vl[1][2], 2), 0);
}
END_TEST

/*
 * QoS classes sharing the VLs with 2 layers (routing/vlsplit.h): QoS SLs
 * 0 and 4 on 8 VLs; class 0 (SL 0) on VL 0-1, class 1 (SL 4) on VL 2-3,
 * layer 1 of each on SLs 1 and 2; every other SL on VL 0.  The switch's
 * tables and the CA's hold that combination; 4 VLs (max_op_vls 3) still
 * hold it, 2 VLs give each class one.
 */
START_TEST(sl2vl_qos_classes)
{
	struct vl_qos q = { .sls = 1u << 0 | 1u << 4 };
	struct routing_result r = { .n_layers = 2 };
	uint8_t *no_sl[1] = { NULL };
	static const uint8_t want[16] = { 0, 1, 3, 0, 2 };
	int queued;

	for (unsigned i = 0; i < 16; i++)
		q.vl[i] = (uint8_t)(i < 15 ? i : 7);
	ck_assert_int_eq(vlsplit_plan(&q, 8, 0, &r.split), 0);
	vlsplit_layout(&r.split, 2);
	r.sl = no_sl;
	ck_assert(routing_split_active(&r));
	sl_map_on(sw, 0x200000);
	sl_map_on(h2, 0x100002);
	if (!SLI)
		SLI = sl2vl_images_new();
	batch_init(&B, F.engine, on_done, NULL);
	B.on_fail = on_fail;
	done = false;
	queued = program_sl2vl(&B, SLI, &cfg, &M, fabric_find(&M, 0x200000),
			       &r, &sl_sets);
	queued += program_sl2vl(&B, SLI, &cfg, &M, fabric_find(&M, 0x100002),
				&r, &sl_sets);
	ck_assert_int_eq(queued, 13);
	B.sealed = true;
	run_until_done();
	for (unsigned sl = 0; sl < 16; sl++) {
		ck_assert_uint_eq(vl_of(FF.node[sw].sl2vl[2][3], sl), want[sl]);
		ck_assert_uint_eq(vl_of(FF.node[sw].sl2vl[0][1], sl), want[sl]);
		ck_assert_uint_eq(vl_of(FF.node[h2].sl2vl[0][1], sl), want[sl]);
	}
	/* 2 VLs on the ports: one per class, the layers folded in it */
	{
		uint8_t vl[16];

		sl2vl_split_vls(&r, 2, &M, fabric_find(&M, 0x200000), 1, vl);
		ck_assert_uint_eq(vl[0], 0);
		ck_assert_uint_eq(vl[1], 0);
		ck_assert_uint_eq(vl[4], 1);
		ck_assert_uint_eq(vl[2], 1);
		sl2vl_split_vls(&r, 3, &M, fabric_find(&M, 0x200000), 1, vl);
		ck_assert_uint_eq(vl[2], 3);
	}
	r.sl = NULL;
}
END_TEST

/* Sets never acknowledged: retried, counted as failed and charged to
 * the switch; the tables stay unknown, so the next run Sets them again. */
START_TEST(sl2vl_sets_unacknowledged)
{
	sl_map_on(sw, 0x200000);
	/* first the tables are Set, then known */
	ck_assert_int_eq(run_sl2vl(&cfg, 0x200000, 3), 12);
	ck_assert_uint_eq(run_sl2vl(&cfg, 0x200000, 3), 0);
	ck_assert_int_eq(run_sl2vl(&cfg, 0x200000, 5), 12);	/* Sets */
	FF.node[sw].drop_sets = true;
	ck_assert_int_eq(run_sl2vl(&cfg, 0x200000, 4), 12);
	ck_assert_uint_eq(B.unacked, 12);
	ck_assert_uint_eq(n_fails, 12);
	for (unsigned i = 0; i < n_fails; i++) {
		ck_assert_int_eq(fails[i].node, sw_id);
		ck_assert_uint_eq(fails[i].attr, SMP_ATTR_SL2VL_TABLE);
	}
	/* tried once per engine attempt and round (retries 1, 3 rounds) */
	ck_assert_uint_eq(FF.node[sw].sets[SMP_ATTR_SL2VL_TABLE], 24 + 12 * 2 * 3);
	FF.node[sw].drop_sets = false;
	/* unknown now: Set again (never read) */
	ck_assert_int_eq(run_sl2vl(&cfg, 0x200000, 4), 12);
	ck_assert_uint_eq(FF.node[sw].sets[SMP_ATTR_SL2VL_TABLE],
			  24 + 12 * 2 * 3 + 12);
	ck_assert_uint_eq(FF.node[sw].gets[SMP_ATTR_SL2VL_TABLE], 0);
	ck_assert_uint_eq(B.failed, 0);
	ck_assert_uint_eq(vl_of(FF.node[sw].sl2vl[0][3], 3), 3);
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
	tcase_add_test(tc, portinfo_repeat_refused_found_done);
	tcase_add_test(tc, portinfo_repeat_refused_not_done);
	suite_add_tcase(s, tc);

	tc = tcase_create("ports");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, port_desired_endport);
	tcase_add_test(tc, port_desired_switch_port);
	tcase_add_test(tc, port_desired_qos_high_limit);
	tcase_add_test(tc, pkeys_diff);
	suite_add_tcase(s, tc);

	tc = tcase_create("partitions");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, pkeys_want_blocks);
	tcase_add_test(tc, pkeys_want_bigger_than_port);
	tcase_add_test(tc, pkeys_want_unread_table);
	tcase_add_test(tc, pkeys_no_want_default);
	tcase_add_test(tc, enforce_bits_per_setting);
	tcase_add_test(tc, enforce_memo_key);
	tcase_add_test(tc, enforce_none_without_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("sl2vl");
	tcase_add_checked_fixture(tc, setup, sl2vl_teardown);
	tcase_add_test(tc, sl2vl_want_table);
	tcase_add_test(tc, sl2vl_switch_then_nothing);
	tcase_add_test(tc, sl2vl_already_right);
	tcase_add_test(tc, sl2vl_no_layers);
	tcase_add_test(tc, sl2vl_op_vls_bound);
	tcase_add_test(tc, sl2vl_qos_classes);
	tcase_add_test(tc, sl2vl_sets_unacknowledged);
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
