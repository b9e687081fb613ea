/*
 * check_state.c - the SM state machine (sm/ha/state.c) driven through the
 * real MAD engine, sweeps and SA on the fake transport.
 *
 * The fake answers the SM's directed-route SMPs as a three-node fabric:
 *
 *     CA A (the SM, LID 2) port 1 -- port 1 switch S (LID 1) port 2 -- CA B (LID 3)
 *
 * so heavy sweeps run to SUBNET UP in a few loop iterations, and tests
 * then feed trap MADs "from" a LID the way umad reports them.  What is
 * checked: the trap policy (issuer must be the sender, 128 only from a
 * switch, 64-67 never from the network), the per-source rate limit, a
 * burst becoming one heavy sweep, heavy sweeps waiting for a light sweep,
 * the SM port that is down, SIGUSR1 reopening the log.
 */
#include "config.h"

#include <check.h>
#include <endian.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <ev.h>

#include "mad/engine.h"
#include "mad/sa_wire.h"
#include "mad/wire.h"
#include "sm/lid.h"
#include "sm/mcast/mft.h"
#include "sm/program.h"
#include "sm/ha/election.h"
#include "sm/sa/sa.h"
#include "sm/health/health.h"
#include "sm/sm.h"
#include "sm/ha/fsm.h"
#include "sm/ha/sminfo.h"
#include "sm/ha/sync.h"
#include "tests/unit/fake_clock.h"
#include "tests/unit/fake_transport.h"

#define GUID_A	0x0002c90000000100ull
#define GUID_S	0x0002c90000000200ull
#define GUID_B	0x0002c90000000300ull

static struct ev_loop *L;
static struct fake F;
static struct sm *S;
static char tmpdir[64];
static bool local_down;		/* the SM's own port answers DOWN */
static bool hold_light;		/* SwitchInfo Gets go unanswered */
static unsigned held;		/* ... and how many were held */
/* CA B as another SM (IsSM on its port): its SMInfo, and whether it
 * answers at all (a killed SM does not). */
static bool b_sm, b_alive;
static uint8_t b_prio, b_state;
static uint64_t b_key;
static bool b_takes_handover;	/* B becomes MASTER on HANDOVER */
static int b_says = -1;		/* the state B's Sets say (-1: b_state) */
static bool b_link_down;	/* S port 2 down: B is cut off */
static uint32_t b_act;		/* B's ActCount */
static uint32_t trap_cap_mask;	/* trap 144's new CapabilityMask */
/* MasterSMLID every end port answers (the fake keeps no Sets): the SM's
 * LID 2 unless a test makes B's port name another SM. */
static uint16_t master_sm_lid_b;

/* ------------------------------------------------ the simulated fabric */

/* Which node a DR path of `hops` reaches: 0 A, 1 S, 2 B (or none). */
static int dr_target(const struct smp_dr *smp)
{
	unsigned hops = smp_dr_hop_cnt(smp);

	if (hops == 0)
		return 0;
	if (hops == 1 && smp->initial_path[1] == 1)
		return 1;
	if (hops == 2 && smp->initial_path[1] == 1 && smp->initial_path[2] == 2)
		return b_link_down ? -1 : 2;
	return -1;
}

static void fill_node_info(int node, struct smp_node_info *ni)
{
	static const uint64_t guid[] = { GUID_A, GUID_S, GUID_B };

	memset(ni, 0, sizeof(*ni));
	ni->base_version = 1;
	ni->class_version = 1;
	ni->node_type = node == 1 ? NODE_TYPE_SWITCH : NODE_TYPE_CA;
	ni->num_ports = node == 1 ? 4 : 1;
	ni->sys_guid = htobe64(guid[node]);
	ni->node_guid = htobe64(guid[node]);
	ni->port_guid = htobe64(guid[node] + (node == 1 ? 0 : 1));
	ni->partition_cap = htobe16(1);
	ni->local_port = 1;
}

static void fill_port_info(int node, unsigned pn, struct smp_port_info *pi)
{
	static const uint16_t lid[] = { 2, 1, 3 };
	bool up = node == 1 ? pn <= 2 : pn == 1;

	if (node == 1 && pn == 2 && b_link_down)
		up = false;

	if (node == 0 && local_down)
		up = false;
	memset(pi, 0, sizeof(*pi));
	pi->lid = htobe16(lid[node]);
	pi->local_port = (uint8_t)pn;
	pi->link_width_enabled = 2;
	pi->link_width_supported = 2;
	pi->link_width_active = 2;
	pi->speed_supported_state = 1u << 4;
	pi_set_port_state(pi, up ? PORT_STATE_ACTIVE : PORT_STATE_DOWN);
	pi_set_phys_state(pi, up ? PHYS_STATE_LINKUP : PHYS_STATE_POLLING);
	pi->speed_active_enabled = 1u << 4 | 1;
	pi_set_neighbor_mtu(pi, 4);
	pi->vl_cap_init_type = 1u << 4;
	pi->init_type_reply_mtu_cap = 4;
	pi_set_op_vls(pi, 1);
	pi->rereg_subnet_timeout = 18;
	if (node != 1 || pn == 0)
		pi->master_sm_lid = htobe16(node == 2 && master_sm_lid_b ?
					    master_sm_lid_b : 2);
	if (node == 2 && b_sm)
		pi->cap_mask = htobe32(PI_CAP_IS_SM);
}

static void fill_b_sminfo(struct smp_sm_info *si)
{
	memset(si, 0, sizeof(*si));
	si->guid = htobe64(GUID_B + 1);
	si->sm_key = htobe64(b_key);
	si->act_count = htobe32(b_act);
	si->prio_state = (uint8_t)(b_prio << 4 | b_state);
}

/* An SMInfo Get or Set for B, LID-routed to LID 3 or DR to node 2. */
static bool b_sminfo(const struct fake_sent *s, uint8_t *resp, uint32_t tid_high)
{
	const struct smp_lid *lr = (const void *)s->mad;
	const struct smp_dr *dr = (const void *)s->mad;
	bool is_dr = lr->hdr.mgmt_class == MAD_CLASS_SMI_DR;

	if (be16toh(lr->hdr.attr_id) != SMP_ATTR_SM_INFO || !b_sm || !b_alive ||
	    b_link_down)
		return false;
	if (is_dr ? dr_target(dr) != 2 : s->addr.lid != 3)
		return false;
	fake_make_response(s->mad, s->len, tid_high, resp);
	if (lr->hdr.method == MAD_METHOD_SET &&
	    be32toh(lr->hdr.attr_mod) == SMINFO_HANDOVER && b_takes_handover)
		b_state = SM_STATE_MASTER;
	fill_b_sminfo((struct smp_sm_info *)(resp + (is_dr ?
		offsetof(struct smp_dr, data) : offsetof(struct smp_lid, data))));
	return true;
}

/* Answer the SMPs of a sweep as the fabric above; everything else
 * (Trap Represses, SA answers, Reports) is only recorded. */
static enum fake_action fabric_policy(struct fake *fk, const struct fake_sent *s,
				      void *arg)
{
	const struct smp_dr *req = (const struct smp_dr *)s->mad;
	uint8_t resp[MAD_SIZE];
	struct smp_dr *r = (struct smp_dr *)resp;
	uint16_t attr = be16toh(req->hdr.attr_id);
	int node;

	(void)arg;
	if (s->timeout_ms && b_sminfo(s, resp, fk->tid_high)) {
		fake_schedule(fk, resp, MAD_SIZE, &s->addr, 0, 0.);
		return FAKE_DROP;
	}
	if (req->hdr.mgmt_class == MAD_CLASS_SMI && s->timeout_ms &&
	    attr == SMP_ATTR_PORT_INFO && req->hdr.method == MAD_METHOD_GET &&
	    s->addr.lid >= 1 && s->addr.lid <= 3 &&
	    !(s->addr.lid == 3 && b_link_down)) {
		/* LID-routed PortInfo (the probe of a master stopped with
		 * SIGTERM): LIDs 2, 1, 3 are nodes 0, 1, 2. */
		static const int by_lid[] = { -1, 1, 0, 2 };
		struct smp_lid *lr = (struct smp_lid *)resp;

		fake_make_response(s->mad, s->len, fk->tid_high, resp);
		fill_port_info(by_lid[s->addr.lid], be32toh(req->hdr.attr_mod),
			       (struct smp_port_info *)lr->data);
		fake_schedule(fk, resp, MAD_SIZE, &s->addr, 0, 0.);
		return FAKE_DROP;
	}
	if (req->hdr.mgmt_class != MAD_CLASS_SMI_DR || s->timeout_ms == 0)
		return FAKE_DROP;
	node = dr_target(req);
	if (node < 0)
		return FAKE_DROP;
	if (attr == SMP_ATTR_SWITCH_INFO && hold_light &&
	    req->hdr.method == MAD_METHOD_GET) {
		held++;
		return FAKE_DROP;
	}
	fake_make_response(s->mad, s->len, fk->tid_high, resp);
	if (req->hdr.method == MAD_METHOD_GET) {
		memset(r->data, 0, sizeof(r->data));
		switch (attr) {
		case SMP_ATTR_NODE_INFO:
			fill_node_info(node, (struct smp_node_info *)r->data);
			break;
		case SMP_ATTR_NODE_DESC:
			snprintf((char *)r->data, 64, "node %d", node);
			break;
		case SMP_ATTR_PORT_INFO:
			fill_port_info(node, be32toh(req->hdr.attr_mod),
				       (struct smp_port_info *)r->data);
			break;
		case SMP_ATTR_SWITCH_INFO: {
			struct smp_switch_info *si = (void *)r->data;
			si->lft_cap = htobe16(48 * 1024);
			si->lft_top = htobe16(3);
			si->life_psc_osl = 18u << 3;
			break;
		}
		case SMP_ATTR_PKEY_TABLE:
			r->data[0] = 0xff;
			r->data[1] = 0xff;
			break;
		default:
			break;
		}
	} else if (attr == SMP_ATTR_PORT_INFO) {
		/* A Set is answered with the port as it now is: the state
		 * stays what the link allows. */
		struct smp_port_info now, *pi = (void *)r->data;

		fill_port_info(node, be32toh(req->hdr.attr_mod), &now);
		pi->speed_supported_state = now.speed_supported_state;
		pi->phys_state_down_def = now.phys_state_down_def;
	}
	fake_schedule(fk, resp, MAD_SIZE, &s->addr, 0, 0.);
	return FAKE_DROP;
}

/* ------------------------------------------------------------ fixture */

static void setup(void)
{
	struct mad_engine_opts o = { .max_wire_smps = 16, .max_wire_gmps = 16,
				     .timeout_ms = 200, .retries = 1 };

	fake_clock_start();
	L = ev_default_loop(0);
	ck_assert_int_eq(fake_init(&F, L, &o), 0);
	F.policy = fabric_policy;
	local_down = hold_light = false;
	held = 0;
	b_sm = b_takes_handover = b_link_down = false;
	b_act = 7;
	trap_cap_mask = 0;
	master_sm_lid_b = 0;
	b_alive = true;
	b_prio = 0;
	b_state = SM_STATE_STANDBY;
	b_key = 1;
	b_says = -1;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_state.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));

	S = calloc(1, sizeof(*S));
	ck_assert_ptr_nonnull(S);
	S->loop = L;
	S->engine = F.engine;
	S->port_guid = GUID_A + 1;
	S->cfg = (struct sm_config){
		.log_file = "-", .log_level = LOG_LVL_INFO,
		.transaction_timeout = 200, .transaction_retries = 1,
		.max_wire_smps = 16, .sweep_interval = 0,
		.subnet_prefix = 0xfe80000000000000ull, .subnet_timeout = 18,
		.packet_life_time = 0x12, .head_of_queue_lifetime = 0x12,
		.leaf_head_of_queue_lifetime = 0x10, .max_op_vls = 5,
		.sm_key = 1, .sm_priority = 5,
		.sminfo_polling_timeout = 10000, .polling_retry_number = 4,
		.sweep_on_trap = true, .use_mfttop = true,
		.mcgroup_join_validation = true,
		.ipoib_mcgroup_creation_validation = true,
	};
	snprintf(S->cfg.cache_dir, sizeof(S->cfg.cache_dir), "%s", tmpdir);
	fabric_init(&S->fabric);
	S->images = lft_images_new();
	S->memos = port_memos_new();
	ck_assert_int_eq(sm_agents_start(S), 0);
	ck_assert_int_eq(sa_start(S), 0);
	sm_watchers_start(S);
}

static void teardown(void)
{
	char path[128];

	sm_watchers_stop(S);
	S->elect_abort = true;
	sweep_heavy_abort(S);
	sweep_light_abort(S);
	mft_abort(S);
	sa_stop(S);
	fake_fini(&F);
	standby_sync_free(S);	/* a test may end before the copy's use */
	sm_election_free(S);
	sweep_heavy_abort(S);
	sweep_light_abort(S);
	mft_abort(S);
	sm_health_free(S);
	fabric_free(&S->fabric);
	routing_result_free(&S->routes);
	lid_cache_free(S->lids);
	lft_images_free(S->images);
	port_memos_free(S->memos);
	free(S);
	snprintf(path, sizeof(path), "%s/guid2lid", tmpdir);
	unlink(path);
	rmdir(tmpdir);
}

/* Run the loop for `s` seconds (of the fake clock: setup() starts it,
 * so every timer fires at the same virtual moment however the machine
 * schedules this process). */
static void run_for(double s)
{
	ev_tstamp end = ev_time() + s;

	while (ev_time() < end) {
		ev_now_update(L);
		ev_run(L, EVRUN_NOWAIT);
		fake_clock_pause(0.001);
	}
}

/* Run the loop until `cond` holds or `limit` seconds passed. */
#define RUN_UNTIL(cond, limit) do {					\
	ev_tstamp end_ = ev_time() + (limit);				\
	while (!(cond) && ev_time() < end_) {				\
		ev_run(L, EVRUN_NOWAIT);				\
		fake_clock_pause(0.0005);				\
	}								\
} while (0)

/* Start the SM and wait for its first SUBNET UP. */
static void bring_up(void)
{
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->subnet_up && !S->sweep, 5.);
	ck_assert(S->subnet_up);
	ck_assert_int_eq(S->state, SM_MASTER);
	ck_assert_int_eq(S->stats.heavy_sweeps, 1);
	ck_assert_uint_eq(sm_local_lid(S), 2);
}

/* Hand a SubnTrap (LID-routed SMP) to the engine as coming from `src`. */
static void send_trap(uint16_t src, unsigned num, uint16_t issuer)
{
	static uint32_t tid = 1000;
	uint8_t mad[MAD_SIZE] = { 0 };
	struct smp_lid *smp = (struct smp_lid *)mad;
	struct smp_notice *n = (struct smp_notice *)smp->data;
	struct mad_addr from = { .lid = src, .qpn = 0 };

	smp->hdr.base_version = 1;
	smp->hdr.mgmt_class = MAD_CLASS_SMI;
	smp->hdr.class_version = 1;
	smp->hdr.method = MAD_METHOD_TRAP;
	smp->hdr.tid = htobe64(tid++);
	smp->hdr.attr_id = htobe16(SMP_ATTR_NOTICE);
	n->generic_type = 0x80 | 1;
	n->producer[2] = num == 128 ? 2 : 1;
	n->trap_num = htobe16((uint16_t)num);
	n->issuer_lid = htobe16(issuer);
	if (num == 144) {
		uint32_t cap = htobe32(trap_cap_mask);
		uint16_t lid = htobe16(issuer);

		memcpy(n->data_details + 2, &lid, 2);
		memcpy(n->data_details + 6, &cap, 4);
	}
	if (num == 256) {	/* bad M_Key: LID 9 (DR SLID 0xffff) Set PortInfo */
		uint16_t req = htobe16(9), drslid = htobe16(0xffff);
		uint16_t attr = htobe16(SMP_ATTR_PORT_INFO);
		uint64_t key = htobe64(0xbad);

		memcpy(n->data_details + 2, &req, 2);
		memcpy(n->data_details + 4, &drslid, 2);
		n->data_details[6] = MAD_METHOD_SET;
		memcpy(n->data_details + 8, &attr, 2);
		memcpy(n->data_details + 14, &key, 8);
		n->data_details[23] = 0x80 | 2;	/* DRNotice, 2 hops */
		n->data_details[25] = 3;
		n->data_details[26] = 1;
	}
	mad_engine_recv(F.engine, mad, MAD_SIZE, &from, 0);
}

/* Trap 256: the port that refused and the requester are remembered (the
 * health report's bad_m_key finding), counted per port. */
START_TEST(test_trap_bad_mkey)
{
	bring_up();
	send_trap(3, 256, 3);
	send_trap(3, 256, 3);
	run_for(0.01);
	ck_assert_uint_eq(S->bad_mkeys[0].node_guid, GUID_B);
	ck_assert_uint_eq(S->bad_mkeys[0].port, 1);
	ck_assert_uint_eq(S->bad_mkeys[0].lid, 3);
	ck_assert_uint_eq(S->bad_mkeys[0].requester, 9);
	ck_assert_uint_eq(S->bad_mkeys[0].attr, SMP_ATTR_PORT_INFO);
	ck_assert_uint_eq(S->bad_mkeys[0].method, MAD_METHOD_SET);
	ck_assert_uint_eq(S->bad_mkeys[0].count, 2);
	ck_assert_uint_eq(S->bad_mkeys[1].node_guid, 0);
	/* forgotten after SM_ROGUE_FORGET_S */
	run_for(SM_ROGUE_FORGET_S + 1);
	sm_rogue_expire(S);
	ck_assert_uint_eq(S->bad_mkeys[0].node_guid, 0);
}
END_TEST

/* Subscribe CA B (LID 3) to `trap` (InformInfo Set, 13.4.8.3); true
 * when the SA accepted it. */
static bool subscribe(unsigned trap)
{
	struct sa_mad m;
	struct sa_inform_info *ii = (struct sa_inform_info *)m.data;
	struct mad_addr from = { .lid = 3, .qpn = 1, .qkey = 0x80010000u };
	size_t before = F.n_sent;

	memset(&m, 0, sizeof(m));
	sa_request_hdr(&m, MAD_METHOD_SET, SA_ATTR_INFORM_INFO, 0);
	m.hdr.tid = htobe64(77);
	ii->lid_range_begin = htobe16(0xffff);
	ii->is_generic = 1;
	ii->subscribe = 1;
	ii->type = htobe16(0xffff);
	ii->trap_num = htobe16((uint16_t)trap);
	ii->qpn_resp_time = htobe32(1u << 8 | 18);
	ii->producer[0] = ii->producer[1] = ii->producer[2] = 0xff;
	mad_engine_recv(F.engine, &m, sizeof(m), &from, 0);
	run_for(0.01);
	for (size_t i = before; i < F.n_sent; i++) {
		const struct sa_mad *r = (const void *)F.sent[i].mad;
		if (r->hdr.mgmt_class == MAD_CLASS_SA &&
		    r->hdr.method == (MAD_METHOD_GET | MAD_METHOD_RESP))
			return r->hdr.status == 0;
	}
	return false;
}

/* SA Reports sent so far. */
static unsigned reports(void)
{
	unsigned n = 0;

	for (size_t i = 0; i < F.n_sent; i++) {
		const struct mad_hdr *h = (const void *)F.sent[i].mad;
		if (h->mgmt_class == MAD_CLASS_SA && h->method == MAD_METHOD_REPORT)
			n++;
	}
	return n;
}

/* Trap Represses sent to `lid` so far. */
static unsigned represses(uint16_t lid)
{
	unsigned n = 0;

	for (size_t i = 0; i < F.n_sent; i++) {
		const struct mad_hdr *h = (const void *)F.sent[i].mad;
		if (h->method == MAD_METHOD_TRAP_REPRESS && F.sent[i].addr.lid == lid)
			n++;
	}
	return n;
}

/* -------------------------------------------------------------- tests */

START_TEST(test_bring_up)
{
	bring_up();
	ck_assert_int_eq(S->fabric.n_nodes, 3);
}
END_TEST

/* After the hold-off: `n` traps were rejected, and none of them caused
 * a heavy sweep or a Report. */
static void rejected_quietly(unsigned n)
{
	run_for(SM_TRAP_HOLDOFF + 0.2);
	ck_assert_uint_eq(S->stats.traps_rejected, n);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 1);
	ck_assert_uint_eq(reports(), 0);
}

/* A genuine trap 128 from the switch: repressed, reported, and after
 * the hold-off (not at once) a quick sweep reads that switch
 * (sm/quick.c): nothing changed here, so no heavy sweep follows. */
START_TEST(test_trap_128_from_switch)
{
	bring_up();
	ck_assert(subscribe(128));
	send_trap(1, 128, 1);
	ck_assert_uint_eq(represses(1), 1);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 1);	/* held off */
	ck_assert_uint_eq(S->stats.quick_sweeps, 0);
	run_for(SM_TRAP_HOLDOFF + 0.2);
	RUN_UNTIL(!S->sweep && !S->quick, 5.);
	ck_assert_uint_eq(S->stats.trap_sweeps, 1);
	ck_assert_uint_eq(S->stats.quick_sweeps, 1);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 1);
	ck_assert_uint_eq(S->stats.traps_rejected, 0);
	ck_assert_uint_ge(reports(), 1);
}
END_TEST

/* The same with incremental_reroute FALSE: no quick sweep, one heavy
 * sweep after the hold-off. */
START_TEST(test_trap_128_heavy_sweep)
{
	bring_up();
	S->cfg.no_incremental_reroute = true;
	send_trap(1, 128, 1);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 1);	/* held off */
	run_for(SM_TRAP_HOLDOFF + 0.2);
	RUN_UNTIL(!S->sweep, 5.);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 2);
	ck_assert_uint_eq(S->stats.quick_sweeps, 0);
}
END_TEST

/* sweep_on_trap FALSE: the trap is still reported, no sweep follows. */
START_TEST(test_trap_128_no_sweep_on_trap)
{
	bring_up();
	S->cfg.sweep_on_trap = false;
	ck_assert(subscribe(128));
	send_trap(1, 128, 1);
	ck_assert_uint_eq(represses(1), 1);
	run_for(SM_TRAP_HOLDOFF + 0.2);
	ck_assert_ptr_null(S->sweep);
	ck_assert_ptr_null(S->quick);
	ck_assert_uint_eq(S->stats.trap_sweeps, 0);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 1);
	ck_assert_uint_eq(S->stats.quick_sweeps, 0);
	ck_assert_uint_ge(reports(), 1);
}
END_TEST

/* A trap 144 (capabilities changed) is not for a quick sweep: a heavy
 * sweep. */
START_TEST(test_trap_144_heavy_sweep)
{
	bring_up();
	send_trap(1, 144, 1);
	run_for(SM_TRAP_HOLDOFF + 0.2);
	RUN_UNTIL(!S->sweep, 5.);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 2);
	ck_assert_uint_eq(S->stats.quick_sweeps, 0);
}
END_TEST

/* IssuerLID is not the sender's: rejected, no sweep, no Report; still
 * repressed. */
START_TEST(test_trap_forged_issuer)
{
	bring_up();
	ck_assert(subscribe(144));
	send_trap(3, 144, 2);		/* B claims to be A */
	rejected_quietly(1);
	ck_assert_uint_eq(represses(3), 1);
}
END_TEST

/* Trap 128 from a CA (even naming itself): rejected. */
START_TEST(test_trap_128_from_ca)
{
	bring_up();
	ck_assert(subscribe(128));
	send_trap(3, 128, 3);
	rejected_quietly(1);
}
END_TEST

/* Traps 64-67 are the SM's own notices: never taken from a host. */
START_TEST(test_trap_sa_notices_from_host)
{
	bring_up();
	ck_assert(subscribe(65));
	for (unsigned t = 64; t <= 67; t++)
		send_trap(3, t, 3);
	rejected_quietly(4);
}
END_TEST

/* From a LID no port of the subnet has: rejected. */
START_TEST(test_trap_unknown_source)
{
	bring_up();
	send_trap(77, 128, 77);
	run_for(SM_TRAP_HOLDOFF + 0.2);
	ck_assert_uint_eq(S->stats.traps_rejected, 1);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 1);
}
END_TEST

/* 1,000 forged traps from a host (128 naming itself, 65, and 144 naming
 * another port), ~330/s: no heavy sweep, no Report, and all but a
 * source's burst and rate dropped before they are even judged. */
START_TEST(test_trap_flood_from_host)
{
	bring_up();
	ck_assert(subscribe(0xffff));
	for (unsigned i = 0; i < 1000; i++) {
		static const unsigned num[] = { 128, 65, 144 };
		unsigned t = num[i % 3];
		send_trap(3, t, t == 144 ? 1 : 3);
		if (i % 10 == 9)
			run_for(0.03);
	}
	run_for(SM_TRAP_HOLDOFF + 0.2);
	ck_assert_uint_eq(S->stats.traps, 1000);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 1);
	ck_assert_uint_eq(reports(), 0);
	/* Burst of 8, then 2/s over ~3 s. */
	ck_assert_uint_le(S->stats.traps_rejected, SM_TRAP_BURST + 10);
	ck_assert_uint_ge(S->stats.traps_limited, 1000 - SM_TRAP_BURST - 10);
}
END_TEST

/* Genuine traps from the switch in a burst and then steadily for ~3 s:
 * the burst becomes one heavy sweep; the steady traps get a few sweeps
 * spaced by the doubling backoff (0.25, 0.5, 1, 2 s: see
 * test_trap_pacing), not one per trap nor one per hold-off. */
START_TEST(test_trap_burst_coalesces)
{
	bring_up();
	for (unsigned i = 0; i < SM_TRAP_BURST; i++)
		send_trap(1, 128, 1);
	run_for(SM_TRAP_HOLDOFF + 0.2);
	RUN_UNTIL(!S->sweep && !S->quick, 5.);
	ck_assert_uint_eq(S->stats.trap_sweeps, 1);
	/* one sweep for the burst: a quick one (nothing changed) */
	ck_assert_uint_eq(S->stats.heavy_sweeps + S->stats.quick_sweeps, 2);
	ev_tstamp t0 = ev_time();
	for (unsigned i = 0; i < 1000; i++) {
		send_trap(1, 128, 1);
		if (i % 10 == 9)
			run_for(0.03);
	}
	RUN_UNTIL(!S->sweep, 5.);
	/* 3 s of traps on the fake clock (however long they took on this
	 * machine): the doubling backoff (0.25, 0.5, 1, 2, 4 s, then the
	 * 5 s interval) leaves room for one sweep per step that fits in
	 * that time, plus the burst's and one that was pending at the
	 * end: 7. */
	double spent = ev_time() - t0, step = 0.25, at = 0.;
	unsigned most = 2;
	while (at + step <= spent + 0.5) {
		at += step;
		most++;
		step = step * 2. < 5. ? step * 2. : 5.;
	}
	ck_assert_uint_ge(S->stats.trap_sweeps, 2);
	ck_assert_uint_le(S->stats.trap_sweeps, most + 2 > 7 ? most + 2 : 7);
	ck_assert_uint_le(S->stats.heavy_sweeps, S->stats.trap_sweeps + 2);
	ck_assert_uint_ge(S->stats.traps_limited, 900);
}
END_TEST

/* The pacing rule of trap sweeps (sm/ha/state.c), on simulated time. */
START_TEST(test_trap_pacing)
{
	struct sm_trap_pace p = { .holdoff = 0.2, .interval = 5. };

	/* An isolated event: the hold-off only, no backoff. */
	ck_assert(sm_trap_wait(&p, 100.) == 0.2);
	ck_assert(!sm_trap_storm(&p, 100., false));
	ck_assert(sm_trap_storm(&p, 100., true));	/* during a sweep */
	ck_assert(sm_trap_backoff(&p, false) == 0.);
	/* Right after a 1 s sweep: 3 x 1 s of idle first, and a trap then
	 * comes back to back; 4 s later it does not. */
	p.sweep_began = 100.;
	p.sweep_ended = 101.;
	ck_assert(sm_trap_wait(&p, 101.1) > 2.89 && sm_trap_wait(&p, 101.1) < 2.91);
	ck_assert(sm_trap_storm(&p, 103., false));
	ck_assert(!sm_trap_storm(&p, 105., false));
	/* ... long after it: the hold-off. */
	ck_assert(sm_trap_wait(&p, 110.) == 0.2);
	/* A 10 s sweep: never more than the interval. */
	p.sweep_ended = 110.;
	ck_assert(sm_trap_wait(&p, 110.) == 5.);
	/* The backoff doubles from 0.25 s to the interval, and a trap that
	 * finds the SM idle resets it. */
	p.backoff = 0.;
	double want[] = { 0.25, 0.5, 1., 2., 4., 5., 5. };
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		p.backoff = sm_trap_backoff(&p, true);
		ck_assert(p.backoff == want[i]);
	}
	ck_assert(sm_trap_backoff(&p, false) == 0.);

	/* Link flaps a second apart, sweeps of 30 ms: every event gets its
	 * own sweep after the hold-off alone. */
	p = (struct sm_trap_pace){ .holdoff = 0.2, .interval = 5. };
	for (double t = 10.; t < 60.; t += 1.) {
		bool storm = sm_trap_storm(&p, t, false);

		ck_assert(!storm);
		ck_assert(sm_trap_wait(&p, t) == 0.2);
		p.backoff = sm_trap_backoff(&p, storm);
		p.last = t + 0.2;
		p.sweep_began = t + 0.2;
		p.sweep_ended = t + 0.23;
	}

	/* A storm: a trap arrives during every sweep, so the next trap
	 * sweep is asked for when a sweep ends.  Sweeps of 0.01 s, then
	 * 0.5 s: spacing doubles to the interval and stays there, and the
	 * SM sweeps at most 1/(K+1) = 1/4 of the time. */
	for (int run = 0; run < 2; run++) {
		double d = run ? 0.5 : 0.01, t = 10., busy = 0., prev = 0.;
		unsigned n = 0;

		p = (struct sm_trap_pace){ .holdoff = 0.2, .interval = 5. };
		while (t < 70.) {
			p.backoff = sm_trap_backoff(&p, n > 0);
			p.last = t;
			p.sweep_began = t;
			p.sweep_ended = t + d;
			busy += d;
			n++;
			ck_assert(sm_trap_storm(&p, t + d / 2, true));
			double next = p.sweep_ended +
				      sm_trap_wait(&p, p.sweep_ended);
			/* spacing never shrinks within the storm */
			ck_assert(next - t >= prev - 1e-9);
			prev = next - t;
			t = next;
		}
		ck_assert(prev >= 5. && prev <= 5. + d + 0.2 + 1e-9);
		ck_assert_uint_le(n, 7 + 60 / 5);
		ck_assert(busy / (t - 10.) <= 0.25 + 1e-9);
	}
}
END_TEST

/* Over its rate a source's traps are dropped; another source keeps its
 * own budget. */
START_TEST(test_trap_rate_per_source)
{
	bring_up();
	for (unsigned i = 0; i < 50; i++)
		send_trap(3, 144, 3);
	ck_assert_uint_eq(S->stats.traps_limited, 50 - SM_TRAP_BURST);
	send_trap(1, 128, 1);
	ck_assert_uint_eq(S->stats.traps_limited, 50 - SM_TRAP_BURST);
	ck_assert_uint_eq(represses(3), 50);
}
END_TEST

/* A trap 128 that comes when its switch has used its budget (a link
 * that changed again right after the sweep its first traps caused) is
 * dropped, but the change it tells of still gets one sweep once the rate
 * allows: with no light sweeps nothing else would find it. */
START_TEST(test_trap_128_over_rate_owes_sweep)
{
	bring_up();
	S->cfg.sweep_interval = 0;
	send_trap(1, 128, 1);
	run_for(SM_TRAP_HOLDOFF + 0.2);
	RUN_UNTIL(!S->sweep && !S->quick, 5.);
	ck_assert_uint_eq(S->stats.trap_sweeps, 1);
	/* the switch's budget is spent: its next trap is dropped */
	for (unsigned i = 0; i < sm_trap_sources(S); i++)
		if (S->trap_buckets[i].lid == 1) {
			S->trap_buckets[i].tokens = 0;
			S->trap_buckets[i].last = ev_now(S->loop);
		}
	send_trap(1, 128, 1);
	send_trap(1, 128, 1);
	ck_assert_uint_eq(S->stats.traps_limited, 2);
	ck_assert_uint_eq(represses(1), 3);
	run_for(1.0 / sm_trap_rate(S) + SM_TRAP_HOLDOFF + 0.5);
	RUN_UNTIL(!S->sweep && !S->quick, 5.);
	/* one sweep for both dropped traps */
	ck_assert_uint_eq(S->stats.trap_sweeps, 2);
	run_for(2.0 / sm_trap_rate(S) + 1.0);
	ck_assert_uint_eq(S->stats.trap_sweeps, 2);
}
END_TEST

/* Sources no port of the subnet has take no slot of the source table
 * (so they cannot evict a genuine port's budget), and a port's LMC range
 * is one source. */
START_TEST(test_trap_sources_bounded)
{
	bring_up();
	for (unsigned i = 0; i < SM_TRAP_SOURCES + 100; i++)
		send_trap((uint16_t)(1000 + i), 128, (uint16_t)(1000 + i));
	ck_assert_uint_eq(S->stats.traps_limited, 0);
	ck_assert_uint_eq(S->stats.traps_rejected, SM_TRAP_SOURCES + 100);
	unsigned used = 0;
	for (unsigned i = 0; i < SM_TRAP_SOURCES; i++)
		used += S->trap_buckets[i].lid != 0;
	ck_assert_uint_eq(used, 0);
	/* The LMC 2 range below is the switch's and CA A's: give port B
	 * (LID 3) the range 40-43 in the model. */
	int32_t b = fabric_find(&S->fabric, GUID_B);
	ck_assert_int_ne(b, FAB_NONE);
	fabric_node(&S->fabric, b)->ports[1].lid = 40;
	fabric_node(&S->fabric, b)->ports[1].lmc = 2;
	if (S->fabric.max_lid < 43)
		S->fabric.max_lid = 43;	/* as lid_assign() would say */
	S->fabric.gen++;		/* as a new model */
	/* LMC 2: LIDs 40-43 are one port, one budget. */
	S->cfg.lmc = 2;
	for (unsigned i = 0; i < 12; i++)
		send_trap((uint16_t)(40 + i % 4), 128, 40);
	ck_assert_uint_eq(S->stats.traps_limited, 12 - SM_TRAP_BURST);
}
END_TEST

/*
 * The switch spends its burst; then traps from 300 LIDs no port has
 * (spoofed sources, more than the source table holds) must not give it
 * a fresh budget.  Before: each evicted the longest idle slot, the
 * switch's among them, and its next trap was accepted again.
 */
START_TEST(test_trap_spoofed_sources_keep_budgets)
{
	bring_up();
	for (unsigned i = 0; i < SM_TRAP_BURST; i++)
		send_trap(1, 144, 1);
	ck_assert_uint_eq(S->stats.traps_limited, 0);
	send_trap(1, 144, 1);
	ck_assert_uint_eq(S->stats.traps_limited, 1);
	for (unsigned i = 0; i < 300; i++)
		send_trap((uint16_t)(2000 + i), 144, (uint16_t)(2000 + i));
	ck_assert_uint_eq(S->stats.traps_rejected, 300);
	send_trap(1, 144, 1);
	ck_assert_uint_eq(S->stats.traps_limited, 2);
}
END_TEST

/* A heavy sweep asked for during a light sweep waits for its end. */
START_TEST(test_heavy_waits_for_light)
{
	bring_up();
	hold_light = true;
	sm_event(S, SM_EV_LIGHT_TIMER);
	ck_assert_ptr_nonnull(S->light);
	RUN_UNTIL(held > 0, 1.);
	ck_assert_uint_eq(held, 1);
	sm_event(S, SM_EV_CHANGE);		/* SIGHUP, say */
	ck_assert_ptr_null(S->sweep);		/* not during the light sweep */
	ck_assert(S->ha.change_pending);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 1);
	/* The light sweep ends (its SwitchInfo Get times out)... */
	hold_light = false;
	RUN_UNTIL(!S->light, 3.);
	ck_assert_ptr_null(S->light);
	/* ... and the heavy sweep it held back starts then. */
	RUN_UNTIL(S->stats.heavy_sweeps == 2 && !S->sweep, 5.);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 2);
	ck_assert_int_eq(S->state, SM_MASTER);
}
END_TEST

/* The SM's own port has no link: no SUBNET UP; when it comes up the SM
 * notices within a poll period and sweeps. */
START_TEST(test_sm_port_down_then_up)
{
	local_down = true;
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->ha.port_down, 5.);
	ck_assert(S->ha.port_down);
	ck_assert(!S->subnet_up);
	ck_assert_int_eq(S->state, SM_DISCOVERING);
	run_for(SM_PORT_POLL + 0.3);
	ck_assert(!S->subnet_up);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 1);	/* polled, not swept */
	local_down = false;
	RUN_UNTIL(S->subnet_up, SM_PORT_POLL * 2 + 3.);
	ck_assert(S->subnet_up);
	ck_assert(!S->ha.port_down);
	ck_assert_int_eq(S->state, SM_MASTER);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 2);
	ck_assert_int_eq(S->fabric.n_nodes, 3);
}
END_TEST

/* SIGUSR1 reopens the log under its name; the SM keeps running. */
START_TEST(test_sigusr1_reopens_log)
{
	char log[128], old[128], buf[4096];
	FILE *fp;
	size_t n;

	snprintf(log, sizeof(log), "%s/ibsm.log", tmpdir);
	snprintf(old, sizeof(old), "%s/ibsm.log.1", tmpdir);
	ck_assert_int_eq(log_open(log, LOG_LVL_INFO), 0);
	log_info("before rotation");
	ck_assert_int_eq(rename(log, old), 0);
	raise(SIGUSR1);
	run_for(0.05);
	log_info("after rotation");
	fp = fopen(log, "r");
	ck_assert_ptr_nonnull(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = 0;
	fclose(fp);
	ck_assert_ptr_nonnull(strstr(buf, "after rotation"));
	ck_assert_ptr_null(strstr(buf, "before rotation"));
	log_close();
	unlink(log);
	unlink(old);
}
END_TEST

/* -------------------------------------------------- log rate limiter */

static double fake_now;
static double fake_clock(void) { return fake_now; }

START_TEST(test_log_ratelimit)
{
	char log[128], buf[8192];
	FILE *fp;
	size_t n;

	snprintf(log, sizeof(log), "%s/rl.log", tmpdir);
	ck_assert_int_eq(log_open(log, LOG_LVL_INFO), 0);
	log_ratelimit_clock(fake_clock);
	fake_now = 100.;
	for (unsigned i = 0; i < 100; i++)
		log_ratelimited(LOG_LVL_WARN, 9901, "line %u", i);
	ck_assert_uint_eq(log_ratelimit_dropped(9901), 100 - LOG_RL_BURST);
	/* Another code has its own bucket. */
	log_ratelimited(LOG_LVL_WARN, 9902, "other");
	ck_assert_uint_eq(log_ratelimit_dropped(9902), 0);
	fake_now += 1.0 / LOG_RL_RATE;
	log_ratelimited(LOG_LVL_WARN, 9901, "line after");
	for (unsigned i = 0; i < 5; i++)
		log_ratelimited(LOG_LVL_WARN, 9901, "dropped %u", i);
	log_ratelimit_flush();
	log_ratelimit_clock(NULL);
	log_close();
	fp = fopen(log, "r");
	ck_assert_ptr_nonnull(fp);
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = 0;
	fclose(fp);
	ck_assert_ptr_nonnull(strstr(buf, "ERR 9901: line 9\n"));
	ck_assert_ptr_null(strstr(buf, "line 10\n"));
	ck_assert_ptr_nonnull(strstr(buf, "ERR 9901: line after (90 similar"
				     " messages suppressed)"));
	ck_assert_ptr_nonnull(strstr(buf, "ERR 9901: 5 similar messages"
				     " suppressed"));
	unlink(log);
}
END_TEST

/* ------------------------------------------- election (IB spec 14.4.1) */

/* SMInfo Sets with AttributeModifier `mod` sent to LID 3 so far. */
static unsigned sminfo_sets(uint32_t mod)
{
	unsigned n = 0;

	for (size_t i = 0; i < F.n_sent; i++) {
		const struct smp_lid *r = (const void *)F.sent[i].mad;
		if (r->hdr.mgmt_class == MAD_CLASS_SMI &&
		    r->hdr.method == MAD_METHOD_SET &&
		    be16toh(r->hdr.attr_id) == SMP_ATTR_SM_INFO &&
		    be32toh(r->hdr.attr_mod) == mod && F.sent[i].addr.lid == 3)
			n++;
	}
	return n;
}

/* SMInfo Gets LID-routed to LID 3 (polls of the master, queries). */
static unsigned sminfo_gets_to_b(void)
{
	unsigned n = 0;

	for (size_t i = 0; i < F.n_sent; i++) {
		const struct smp_lid *r = (const void *)F.sent[i].mad;
		if (r->hdr.mgmt_class == MAD_CLASS_SMI &&
		    r->hdr.method == MAD_METHOD_GET &&
		    be16toh(r->hdr.attr_id) == SMP_ATTR_SM_INFO &&
		    F.sent[i].addr.lid == 3)
			n++;
	}
	return n;
}

/* The last SMInfo answer (GetResp) we sent, or NULL. */
static const struct smp_sm_info *last_sminfo_resp(void)
{
	for (size_t i = F.n_sent; i-- > 0;) {
		const struct smp_lid *r = (const void *)F.sent[i].mad;
		if (r->hdr.method == (MAD_METHOD_GET | MAD_METHOD_RESP) &&
		    be16toh(r->hdr.attr_id) == SMP_ATTR_SM_INFO)
			return (const void *)r->data;
	}
	return NULL;
}

/* Hand B's SMInfo Get or Set (`mod`) to the engine, LID-routed from 3. */
static void from_b(uint8_t method, uint32_t mod, uint64_t key)
{
	static uint32_t tid = 5000;
	uint8_t mad[MAD_SIZE] = { 0 };
	struct smp_lid *smp = (struct smp_lid *)mad;
	struct mad_addr from = { .lid = 3, .qpn = 0 };

	smp->hdr.base_version = 1;
	smp->hdr.mgmt_class = MAD_CLASS_SMI;
	smp->hdr.class_version = 1;
	smp->hdr.method = method;
	smp->hdr.tid = htobe64(tid++);
	smp->hdr.attr_id = htobe16(SMP_ATTR_SM_INFO);
	smp->hdr.attr_mod = htobe32(mod);
	fill_b_sminfo((struct smp_sm_info *)smp->data);
	((struct smp_sm_info *)smp->data)->sm_key = htobe64(key);
	if (b_says >= 0)
		((struct smp_sm_info *)smp->data)->prio_state =
			(uint8_t)(b_prio << 4 | b_says);
	mad_engine_recv(F.engine, mad, MAD_SIZE, &from, 0);
	run_for(0.02);
}

/* DISCOVERING finds a master (even a worse one): STANDBY, no sweep. */
START_TEST(test_elect_standby_under_master)
{
	b_sm = true;
	b_state = SM_STATE_MASTER;
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->state == SM_STANDBY, 3.);
	ck_assert_int_eq(S->state, SM_STANDBY);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 0);
	ck_assert_uint_eq(sm_master_lid(S), 3);
	ck_assert_uint_eq(S->master_guid, GUID_B + 1);
	ck_assert(strstr(S->last_transition, "DISCOVERING -> STANDBY"));
	/* It polls the master (LID-routed SMInfo Gets) and stays. */
	run_for(2.2);
	ck_assert_uint_ge(sminfo_gets_to_b(), 2);
	ck_assert_int_eq(S->state, SM_STANDBY);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 0);
}
END_TEST

/* Traps 144 sent to `lid` with IsSM and the SM-priority flag. */
static unsigned traps_144_to(uint16_t lid)
{
	unsigned n = 0;

	for (size_t i = 0; i < F.n_sent; i++) {
		const struct smp_lid *r = (const void *)F.sent[i].mad;
		const struct smp_notice *no = (const void *)r->data;
		uint32_t cap;
		uint16_t flags;

		memcpy(&cap, no->data_details + 6, 4);
		memcpy(&flags, no->data_details + 10, 2);
		if (r->hdr.mgmt_class == MAD_CLASS_SMI &&
		    r->hdr.method == MAD_METHOD_TRAP &&
		    be16toh(r->hdr.attr_id) == SMP_ATTR_NOTICE &&
		    F.sent[i].addr.lid == lid && be16toh(no->trap_num) == 144 &&
		    (be32toh(cap) & PI_CAP_IS_SM) && be16toh(flags) == 0x0008)
			n++;
	}
	return n;
}

/* A standby under a worse master (it was master first) tells it, with
 * trap 144, that a better SM is there (it is for the master to hand
 * over, C14-60.2.1); under a better master it does not. */
START_TEST(test_standby_tells_worse_master)
{
	b_sm = true;
	b_state = SM_STATE_MASTER;
	b_prio = 12;
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->state == SM_STANDBY, 3.);
	run_for(1.2);
	ck_assert_uint_eq(traps_144_to(3), 0);
	b_prio = 2;
	run_for(1.2);
	ck_assert_int_eq(S->state, SM_STANDBY);
	ck_assert_uint_ge(traps_144_to(3), 1);
}
END_TEST

/* Two masters, the other worse (an OpenSM that swept before our port
 * had IsSM never learns of us): we tell it with trap 144 and repair. */
START_TEST(test_master_tells_worse_master)
{
	bring_up();
	b_sm = true;
	b_prio = 2;
	b_state = SM_STATE_MASTER;
	sm_event(S, SM_EV_CHANGE);
	RUN_UNTIL(S->stats.heavy_sweeps == 2 && !S->sweep, 3.);
	run_for(0.1);
	ck_assert_int_eq(S->state, SM_MASTER);
	ck_assert_uint_ge(traps_144_to(3), 1);
}
END_TEST

/* No master; B is discovering with a lower priority: we are master. */
START_TEST(test_elect_master_over_worse)
{
	b_sm = true;
	b_state = SM_STATE_DISCOVERING;
	b_prio = 4;
	bring_up();
	ck_assert_uint_eq(sm_master_lid(S), 0);
}
END_TEST

/* No master; B is better and standing by: wait, then stand by once it
 * is master. */
START_TEST(test_elect_waits_for_better)
{
	b_sm = true;
	b_state = SM_STATE_STANDBY;
	b_prio = 10;
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->elect_waits == 1, 3.);
	ck_assert_uint_eq(S->elect_waits, 1);
	ck_assert_int_eq(S->state, SM_DISCOVERING);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 0);
	b_state = SM_STATE_MASTER;
	RUN_UNTIL(S->state == SM_STANDBY, 3.);
	ck_assert_int_eq(S->state, SM_STANDBY);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 0);
}
END_TEST

/* The same priority: the lower GUID wins (B's GUID is higher). */
START_TEST(test_elect_equal_priority_lower_guid)
{
	b_sm = true;
	b_state = SM_STATE_DISCOVERING;
	b_prio = 5;
	bring_up();
}
END_TEST

/* STANDBY -> DISCOVERING -> MASTER when the master stops answering. */
START_TEST(test_standby_takeover)
{
	b_sm = true;
	b_state = SM_STATE_MASTER;
	b_prio = 10;
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->state == SM_STANDBY, 3.);
	ck_assert_int_eq(S->state, SM_STANDBY);
	b_alive = false;		/* kill -9 */
	ev_tstamp t0 = ev_time();
	RUN_UNTIL(S->state == SM_MASTER && S->subnet_up, 6.);
	ck_assert_int_eq(S->state, SM_MASTER);
	ck_assert(S->subnet_up);
	ck_assert_double_lt(ev_time() - t0, 5.);
	ck_assert_uint_eq(sm_master_lid(S), 0);
	ck_assert(strstr(S->last_transition, "took over"));
	/* The LIDs the ports hold were kept. */
	ck_assert_uint_eq(sm_local_lid(S), 2);
}
END_TEST

/* DR PortInfo Gets of switch S's port `pn` sent from F.sent[from] on. */
static unsigned s_port_gets(size_t from, unsigned pn)
{
	unsigned n = 0;

	for (size_t i = from; i < F.n_sent; i++) {
		const struct smp_dr *r = (const void *)F.sent[i].mad;
		if (r->hdr.mgmt_class == MAD_CLASS_SMI_DR &&
		    r->hdr.method == MAD_METHOD_GET &&
		    be16toh(r->hdr.attr_id) == SMP_ATTR_PORT_INFO &&
		    be32toh(r->hdr.attr_mod) == pn && dr_target(r) == 1)
			n++;
	}
	return n;
}

/* STANDBY, the master's link goes down: the first failed poll reads the
 * switch port facing the master, finds it down and takes over at once
 * (not after the remaining polls). */
START_TEST(test_standby_master_link_down)
{
	b_sm = true;
	b_state = SM_STATE_MASTER;
	b_prio = 10;
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->state == SM_STANDBY, 3.);
	ck_assert_int_eq(S->state, SM_STANDBY);
	/* The election's model placed the master: S port 2. */
	ck_assert_uint_eq(S->watch.master, GUID_B + 1);
	ck_assert_uint_eq(S->watch.sw_guid, GUID_S);
	ck_assert_uint_eq(S->watch.port, 2);
	ck_assert_uint_eq(S->watch.sw_lid, 1);
	RUN_UNTIL(!S->poll_inflight, 1.);
	unsigned polls = sminfo_gets_to_b();
	b_link_down = true;
	RUN_UNTIL(S->state != SM_STANDBY, 4.);
	ck_assert_int_eq(S->state, SM_DISCOVERING);
	ck_assert_msg(strstr(S->last_transition, "link is down (port 2 of"
			     " switch 0x0002c90000000200"), "%s",
		      S->last_transition);
	/* One poll failed; the second (sent at once) was not waited for:
	 * no "SMInfo polls unanswered" (the cause above). */
	ck_assert_uint_ge(sminfo_gets_to_b() - polls, 1);
	RUN_UNTIL(S->state == SM_MASTER && S->subnet_up, 5.);
	ck_assert_int_eq(S->state, SM_MASTER);
	ck_assert_uint_eq(sm_local_lid(S), 2);
}
END_TEST

/* STANDBY, the master's SM dies but its port stays up (kill -9): the
 * switch port is read, found up, and the poll rule decides. */
START_TEST(test_standby_master_port_up_polls_decide)
{
	b_sm = true;
	b_state = SM_STATE_MASTER;
	b_prio = 10;
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->state == SM_STANDBY, 3.);
	ck_assert_int_eq(S->state, SM_STANDBY);
	size_t from = F.n_sent;
	b_alive = false;
	RUN_UNTIL(S->state != SM_STANDBY, 6.);
	ck_assert_int_eq(S->state, SM_DISCOVERING);
	ck_assert_msg(strstr(S->last_transition, "SMInfo polls unanswered"),
		      "%s", S->last_transition);
	ck_assert_uint_ge(s_port_gets(from, 2), 1);
}
END_TEST

/* STANDBY: a trap 128 from the master's switch reads its port at once
 * (no poll needed); other traps and other sources do not. */
START_TEST(test_standby_trap_checks_master_link)
{
	b_sm = true;
	b_state = SM_STATE_MASTER;
	b_prio = 10;
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->state == SM_STANDBY, 3.);
	ck_assert_int_eq(S->state, SM_STANDBY);
	RUN_UNTIL(!S->poll_inflight, 1.);
	ev_timer_stop(L, &S->poll_timer);	/* polls out of the picture */
	size_t from = F.n_sent;
	send_trap(1, 144, 1);
	send_trap(3, 128, 3);
	run_for(0.1);
	ck_assert_uint_eq(s_port_gets(from, 2), 0);
	ck_assert_int_eq(S->state, SM_STANDBY);
	/* The link is up: the check finds it so and nothing happens. */
	send_trap(1, 128, 1);
	run_for(0.1);
	ck_assert_uint_eq(s_port_gets(from, 2), 1);
	ck_assert_int_eq(S->state, SM_STANDBY);
	/* Down: the next trap (after SM_WATCH_EVERY) takes over. */
	b_link_down = true;
	run_for(0.25);
	send_trap(1, 128, 1);
	RUN_UNTIL(S->state != SM_STANDBY, 1.);
	ck_assert_int_eq(S->state, SM_DISCOVERING);
	ck_assert_msg(strstr(S->last_transition, "link is down"), "%s",
		      S->last_transition);
}
END_TEST

/* MASTER: a brand-new standby (ActCount 0: it never swept) found after
 * our sweep needs no repair sweep; a fresh SM that stood down after
 * being master (ActCount > 0: a split fabric joined) does. */
START_TEST(test_new_standby_no_repair)
{
	bring_up();
	b_sm = true;
	b_prio = 0;
	b_state = SM_STATE_STANDBY;
	b_act = 0;
	sm_event(S, SM_EV_CHANGE);
	RUN_UNTIL(S->stats.heavy_sweeps == 2 && !S->sweep, 3.);
	run_for(SM_TRAP_HOLDOFF + 0.5);
	ck_assert_int_eq(S->state, SM_MASTER);
	bool heard = false;		/* it was asked and answered */
	for (unsigned i = 0; i < SM_MAX_REMOTE; i++)
		heard |= S->remotes[i].guid == GUID_B + 1 &&
			 S->remotes[i].state == SM_STATE_STANDBY;
	ck_assert(heard);
	ck_assert(S->last_repair == 0.);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 2);
}
END_TEST

START_TEST(test_former_master_standby_repaired)
{
	bring_up();
	b_sm = true;
	b_prio = 0;
	b_state = SM_STATE_STANDBY;
	b_act = 12;
	sm_event(S, SM_EV_CHANGE);
	RUN_UNTIL(S->stats.heavy_sweeps == 2 && !S->sweep, 3.);
	RUN_UNTIL(S->last_repair > 0., 1.);
	ck_assert(S->last_repair > 0.);
	RUN_UNTIL(S->stats.heavy_sweeps == 3 && !S->sweep, 3.);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 3);	/* the repair */
}
END_TEST

/* MASTER: a trap 144 saying a port now has IsSM makes us read that SM's
 * SMInfo 0.1 s later (not after the trap's sweep): a better one gets the
 * HANDOVER before the hold-off is over.  Without IsSM in the new mask,
 * no query. */
START_TEST(test_trap144_queries_new_sm)
{
	bring_up();
	b_sm = true;
	b_prio = 10;
	b_state = SM_STATE_STANDBY;
	b_act = 0;
	b_takes_handover = true;
	unsigned gets = sminfo_gets_to_b();
	trap_cap_mask = 0;
	send_trap(3, 144, 3);
	run_for(0.02);
	ck_assert_uint_eq(sminfo_gets_to_b(), gets);
	trap_cap_mask = PI_CAP_IS_SM;
	send_trap(3, 144, 3);
	run_for(0.15);		/* SM_ISM_DELAY (0.1 s), before the hold-off */
	/* our query, then (standing by) our first poll of the new master */
	ck_assert_uint_ge(sminfo_gets_to_b(), gets + 1);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 1);	/* no sweep needed */
	ck_assert_uint_eq(sminfo_sets(SMINFO_HANDOVER), 1);
	ck_assert_int_eq(S->state, SM_STANDBY);
}
END_TEST

/* STANDBY, a master that stood down (answers, not MASTER): re-elect. */
START_TEST(test_standby_master_stood_down)
{
	b_sm = true;
	b_state = SM_STATE_MASTER;
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->state == SM_STANDBY, 3.);
	b_state = SM_STATE_NOTACTIVE;
	RUN_UNTIL(S->state == SM_MASTER, 4.);
	ck_assert_int_eq(S->state, SM_MASTER);
}
END_TEST

/* STANDBY gets HANDOVER: answers as MASTER, ACKNOWLEDGEs, sweeps. */
START_TEST(test_standby_receives_handover)
{
	b_sm = true;
	b_state = SM_STATE_MASTER;
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->state == SM_STANDBY, 3.);
	from_b(MAD_METHOD_SET, SMINFO_HANDOVER, 1);
	ck_assert_int_eq(S->state, SM_MASTER);
	const struct smp_sm_info *r = last_sminfo_resp();
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->prio_state & 0xf, SM_STATE_MASTER);
	ck_assert_uint_eq(sminfo_sets(SMINFO_ACKNOWLEDGE), 1);
	/* The ACKNOWLEDGE says STANDBY (what OpenSM accepts), with our
	 * priority and GUID. */
	for (size_t i = 0; i < F.n_sent; i++) {
		const struct smp_lid *a = (const void *)F.sent[i].mad;
		if (a->hdr.method != MAD_METHOD_SET ||
		    be16toh(a->hdr.attr_id) != SMP_ATTR_SM_INFO ||
		    be32toh(a->hdr.attr_mod) != SMINFO_ACKNOWLEDGE)
			continue;
		const struct smp_sm_info *si = (const void *)a->data;
		ck_assert_uint_eq(si->prio_state & 0xf, SM_STATE_STANDBY);
		ck_assert_uint_eq(si->prio_state >> 4, 5);
		ck_assert_uint_eq(be64toh(si->guid), GUID_A + 1);
	}
	RUN_UNTIL(S->subnet_up && !S->sweep, 3.);
	ck_assert(S->subnet_up);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 1);
}
END_TEST

/* MASTER polled by a better standby: HANDOVER to it, then STANDBY. */
START_TEST(test_master_hands_over_to_better)
{
	bring_up();
	b_sm = true;
	b_prio = 10;
	b_state = SM_STATE_STANDBY;
	b_takes_handover = true;
	from_b(MAD_METHOD_GET, 0, 1);
	RUN_UNTIL(S->state == SM_STANDBY, 2.);
	ck_assert_uint_eq(sminfo_sets(SMINFO_HANDOVER), 1);
	ck_assert_int_eq(S->state, SM_STANDBY);
	ck_assert_uint_eq(sm_master_lid(S), 3);
}
END_TEST

/* MASTER polled by a worse standby: nothing. */
START_TEST(test_master_keeps_over_worse)
{
	bring_up();
	b_sm = true;
	b_prio = 1;
	from_b(MAD_METHOD_GET, 0, 1);
	run_for(0.2);
	ck_assert_uint_eq(sminfo_sets(SMINFO_HANDOVER), 0);
	ck_assert_int_eq(S->state, SM_MASTER);
}
END_TEST

/* Two masters meet (split fabric joined): after a sweep the worse one
 * stands by, naming why. */
START_TEST(test_split_brain_loser_stands_by)
{
	bring_up();
	b_sm = true;
	b_prio = 12;
	b_state = SM_STATE_MASTER;
	sm_event(S, SM_EV_CHANGE);
	RUN_UNTIL(S->state == SM_STANDBY, 3.);
	ck_assert_int_eq(S->state, SM_STANDBY);
	ck_assert(strstr(S->last_transition, "DISCOVERING -> STANDBY"));
	ck_assert_uint_eq(sm_master_lid(S), 3);
}
END_TEST

/* ... and the better one stays master. */
START_TEST(test_split_brain_winner_stays)
{
	bring_up();
	b_sm = true;
	b_prio = 2;
	b_state = SM_STATE_MASTER;
	sm_event(S, SM_EV_CHANGE);
	RUN_UNTIL(S->stats.heavy_sweeps == 2 && !S->sweep, 3.);
	run_for(0.1);
	ck_assert_int_eq(S->state, SM_MASTER);
}
END_TEST

/* Sets (any attribute) sent since F.sent[from]. */
static unsigned sets_since(size_t from)
{
	unsigned n = 0;

	for (size_t i = from; i < F.n_sent; i++) {
		const struct mad_hdr *h = (const void *)F.sent[i].mad;
		if ((h->mgmt_class == MAD_CLASS_SMI ||
		     h->mgmt_class == MAD_CLASS_SMI_DR) &&
		    h->method == MAD_METHOD_SET &&
		    be16toh(h->attr_id) != SMP_ATTR_SM_INFO)
			n++;
	}
	return n;
}

/* The light sweep reads the end ports: all naming us, nothing to do;
 * B's port naming another SM (LID 7) is counted and a heavy sweep sets
 * it again. */
START_TEST(test_light_sweep_finds_foreign_master_lid)
{
	bring_up();
	sm_event(S, SM_EV_LIGHT_TIMER);
	RUN_UNTIL(!S->light, 2.);
	run_for(0.05);
	ck_assert_uint_eq(S->stats.foreign_sm_ports, 0);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 1);
	master_sm_lid_b = 7;
	sm_event(S, SM_EV_LIGHT_TIMER);
	RUN_UNTIL(S->stats.heavy_sweeps == 2 && !S->sweep, 3.);
	ck_assert_uint_eq(S->stats.foreign_sm_ports, 1);
	ck_assert_uint_eq(S->stats.heavy_sweeps, 2);
	ck_assert_int_eq(S->state, SM_MASTER);
}
END_TEST

/* A master that yields (two masters met) while its heavy sweep runs:
 * the sweep sends no Set more, and the SM stands by under the better
 * master without programming anything. */
START_TEST(test_yield_stops_sweep)
{
	bring_up();
	b_sm = true;
	b_prio = 12;
	b_state = SM_STATE_MASTER;
	sm_event(S, SM_EV_CHANGE);
	ck_assert_ptr_nonnull(S->sweep);
	size_t mark = F.n_sent;
	sm_transition(S, SM_DISCOVERING, 1105, "two masters met (test)");
	ck_assert(S->ha.standing_down);
	sm_event(S, SM_EV_CHANGE);		/* asks for nothing now */
	RUN_UNTIL(S->state == SM_STANDBY && !S->sweep, 3.);
	ck_assert_int_eq(S->state, SM_STANDBY);
	ck_assert_ptr_null(S->sweep);
	run_for(0.3);
	ck_assert_uint_eq(sets_since(mark), 0);
	ck_assert_uint_eq(sm_master_lid(S), 3);
}
END_TEST

/* A better master reads our SMInfo (its own as the payload) while we
 * are master: we read its SMInfo by directed route and stand by at
 * once, without a sweep; a worse master's Get changes nothing. */
START_TEST(test_get_from_better_master_yields)
{
	bring_up();
	b_sm = true;
	b_prio = 2;
	b_state = SM_STATE_MASTER;
	sm_event(S, SM_EV_CHANGE);	/* the model learns B's IsSM */
	RUN_UNTIL(S->stats.heavy_sweeps == 2 && !S->sweep, 3.);
	run_for(0.7);			/* the repair of the worse master */
	RUN_UNTIL(!S->sweep, 3.);
	unsigned sweeps = S->stats.heavy_sweeps;
	from_b(MAD_METHOD_GET, 0, 1);
	run_for(0.1);
	ck_assert_int_eq(S->state, SM_MASTER);
	b_prio = 12;
	S->master_heard_at = 0.;
	size_t mark = F.n_sent;
	from_b(MAD_METHOD_GET, 0, 1);
	RUN_UNTIL(S->state == SM_STANDBY, 3.);
	ck_assert_int_eq(S->state, SM_STANDBY);
	ck_assert_uint_eq(S->stats.heavy_sweeps, sweeps);
	ck_assert_uint_eq(sets_since(mark), 0);
}
END_TEST

/* SIGTERM on a master with a standby: HANDOVER first, then exit. */
START_TEST(test_sigterm_hands_over)
{
	bring_up();
	b_sm = true;
	b_prio = 1;
	b_takes_handover = true;
	from_b(MAD_METHOD_GET, 0, 1);	/* a standby polls us */
	raise(SIGTERM);
	RUN_UNTIL(S->state == SM_NOTACTIVE, 2.);
	ck_assert_int_eq(S->state, SM_NOTACTIVE);
	ck_assert_uint_eq(sminfo_sets(SMINFO_HANDOVER), 1);
}
END_TEST

/* SIGTERM twice at once (GNU timeout signals the process, then its
 * group) is one request: the handover goes on; a later one stops now. */
START_TEST(test_sigterm_twice_is_once)
{
	bring_up();
	b_sm = true;
	b_prio = 1;
	from_b(MAD_METHOD_GET, 0, 1);	/* a standby polls us */
	b_alive = false;		/* ... and then answers nothing */
	raise(SIGTERM);
	run_for(0.01);
	ck_assert(S->stopping);
	ck_assert_uint_eq(sminfo_sets(SMINFO_HANDOVER), 1);
	raise(SIGTERM);
	run_for(0.02);
	ck_assert_int_eq(S->state, SM_MASTER);	/* still waiting for it */
	run_for(0.15);
	raise(SIGTERM);
	RUN_UNTIL(S->state == SM_NOTACTIVE, 0.5);
	ck_assert_int_eq(S->state, SM_NOTACTIVE);
}
END_TEST

/* SIGTERM on a master alone: exit at once, no Set. */
START_TEST(test_sigterm_alone)
{
	bring_up();
	raise(SIGTERM);
	RUN_UNTIL(S->state == SM_NOTACTIVE, 1.);
	ck_assert_int_eq(S->state, SM_NOTACTIVE);
	ck_assert_uint_eq(sminfo_sets(SMINFO_HANDOVER), 0);
}
END_TEST

/* Another SM_Key: a Set is ignored (no answer, no change), a Get gets
 * the key zeroed; the right key gets it back, and no key only from a
 * port with IsSM (read before the answer). */
START_TEST(test_sm_key)
{
	bring_up();
	size_t before = F.n_sent;
	from_b(MAD_METHOD_SET, SMINFO_DISABLE, 2);
	ck_assert_int_eq(S->state, SM_MASTER);
	ck_assert_uint_eq(F.n_sent, before);
	/* remembered as untrusted, with its LID and the Set ignored */
	ck_assert_uint_eq(S->rogues[0].guid, GUID_B + 1);
	ck_assert_uint_eq(S->rogues[0].lid, 3);
	ck_assert_uint_eq(S->rogues[0].sets, 1);
	from_b(MAD_METHOD_SET, SMINFO_HANDOVER, 2);
	ck_assert_int_eq(S->state, SM_MASTER);
	ck_assert_uint_eq(S->rogues[0].sets, 2);
	ck_assert_uint_eq(S->rogues[1].guid, 0);
	from_b(MAD_METHOD_GET, 0, 2);
	ck_assert_uint_eq(be64toh(last_sminfo_resp()->sm_key), 0);
	from_b(MAD_METHOD_GET, 0, 1);
	ck_assert_uint_eq(be64toh(last_sminfo_resp()->sm_key), 1);
	/* No key presented (OpenSM's empty payload) from a host: 0. */
	from_b(MAD_METHOD_GET, 0, 0);
	ck_assert_uint_eq(be64toh(last_sminfo_resp()->sm_key), 0);
	/* ... and from an SM's port (IsSM): the key. */
	b_sm = true;
	from_b(MAD_METHOD_GET, 0, 0);
	ck_assert_uint_eq(be64toh(last_sminfo_resp()->sm_key), 1);
}
END_TEST

START_TEST(test_sm_key_other_master_ignored)
{
	b_sm = true;
	b_state = SM_STATE_MASTER;
	b_prio = 15;
	b_key = 2;
	bring_up();
	/* its SMInfo answer named it: untrusted, master, priority 15 */
	unsigned k;
	for (k = 0; k < SM_MAX_ROGUE; k++)
		if (S->rogues[k].guid == GUID_B + 1)
			break;
	ck_assert_uint_lt(k, SM_MAX_ROGUE);
	ck_assert_uint_eq(S->rogues[k].priority, 15);
	ck_assert_uint_eq(S->rogues[k].state, SM_STATE_MASTER);
	ck_assert_uint_eq(S->rogues[k].sets, 0);
	/* forgotten after SM_ROGUE_FORGET_S of silence */
	b_sm = false;
	run_for(SM_ROGUE_FORGET_S + 5);
	sm_rogue_expire(S);
	ck_assert_uint_eq(S->rogues[k].guid, 0);
}
END_TEST

static uint16_t last_sminfo_status(void);

/* A master takes DISABLE (nor HANDOVER, STANDBY, DISCOVER) from no
 * other SM, whatever its payload says: refused with an error status. */
START_TEST(test_master_refuses_sets)
{
	static const uint32_t mods[] = { SMINFO_DISABLE, SMINFO_HANDOVER,
					 SMINFO_STANDBY, SMINFO_DISCOVER };

	bring_up();
	b_state = SM_STATE_MASTER;	/* only a master sends them */
	b_prio = 15;
	for (unsigned i = 0; i < 4; i++) {
		from_b(MAD_METHOD_SET, mods[i], 1);
		ck_assert_uint_eq(last_sminfo_status(), MAD_STATUS_INVALID_FIELD);
		ck_assert_int_eq(S->state, SM_MASTER);
	}
}
END_TEST

/* A standby takes DISABLE from its master -> NOTACTIVE; then DISCOVER
 * -> DISCOVERING (and an election). */
START_TEST(test_disable_and_discover)
{
	b_sm = true;			/* B the master, S its standby */
	b_state = SM_STATE_MASTER;
	b_prio = 10;
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->state == SM_STANDBY, 3.);
	ck_assert_int_eq(S->state, SM_STANDBY);
	from_b(MAD_METHOD_SET, SMINFO_DISABLE, 1);
	ck_assert_int_eq(S->state, SM_NOTACTIVE);
	ck_assert_uint_eq(last_sminfo_resp()->prio_state & 0xf, SM_STATE_NOTACTIVE);
	from_b(MAD_METHOD_SET, SMINFO_DISCOVER, 1);
	ck_assert(S->state == SM_DISCOVERING || S->state == SM_STANDBY);
	RUN_UNTIL(S->state == SM_STANDBY, 3.);
	ck_assert_int_eq(S->state, SM_STANDBY);
}
END_TEST

START_TEST(test_standby_set_while_discovering)
{
	b_sm = true;
	b_state = SM_STATE_STANDBY;
	b_prio = 10;		/* we wait for it */
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->elect_waits == 1, 3.);
	b_state = SM_STATE_MASTER;
	from_b(MAD_METHOD_SET, SMINFO_STANDBY, 1);
	ck_assert_int_eq(S->state, SM_STANDBY);
	ck_assert_uint_eq(sm_master_lid(S), 3);
}
END_TEST

/* An unknown AttributeModifier: answered with an error status. */
START_TEST(test_bad_control)
{
	bring_up();
	from_b(MAD_METHOD_SET, 9, 1);
	const struct smp_lid *r = (const void *)F.sent[F.n_sent - 1].mad;
	ck_assert_uint_eq(be16toh(r->hdr.status) & 0x7fff, MAD_STATUS_INVALID_FIELD);
	ck_assert_int_eq(S->state, SM_MASTER);
}
END_TEST

/* The status of the last SMInfo answer (GetResp) we sent. */
static uint16_t last_sminfo_status(void)
{
	for (size_t i = F.n_sent; i-- > 0;) {
		const struct smp_lid *r = (const void *)F.sent[i].mad;
		if (r->hdr.method == (MAD_METHOD_GET | MAD_METHOD_RESP) &&
		    be16toh(r->hdr.attr_id) == SMP_ATTR_SM_INFO)
			return be16toh(r->hdr.status) & 0x7fff;
	}
	return 0xffff;
}

/* 14.4.1: HANDOVER, DISABLE, STANDBY and DISCOVER come from a master
 * only: from an SM that says it is STANDBY (or DISCOVERING, NOTACTIVE)
 * they are refused with "invalid field" and change nothing. */
START_TEST(test_set_only_from_master)
{
	static const uint32_t mods[] = { SMINFO_HANDOVER, SMINFO_DISABLE,
					 SMINFO_STANDBY, SMINFO_DISCOVER };
	static const uint8_t states[] = { SM_STATE_STANDBY,
					  SM_STATE_DISCOVERING,
					  SM_STATE_NOTACTIVE };

	bring_up();
	for (unsigned i = 0; i < 4; i++)
		for (unsigned j = 0; j < 3; j++) {
			b_state = states[j];
			from_b(MAD_METHOD_SET, mods[i], 1);
			ck_assert_uint_eq(last_sminfo_status(),
					  MAD_STATUS_INVALID_FIELD);
			ck_assert_int_eq(S->state, SM_MASTER);
		}
}
END_TEST

/* STANDBY gets a directed-route HANDOVER from its master (as OpenSM
 * sends it): master, and the ACKNOWLEDGE goes LID-routed to that
 * master's LID, saying STANDBY. */
START_TEST(test_standby_receives_dr_handover)
{
	uint8_t mad[MAD_SIZE] = { 0 };
	struct smp_dr *smp = (struct smp_dr *)mad;
	uint8_t path[SMP_MAX_HOPS + 1] = { 0, 1, 1 };
	struct mad_addr from = { .lid = 0xffff, .qpn = 0 };

	b_sm = true;
	b_state = SM_STATE_MASTER;
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->state == SM_STANDBY, 3.);
	ck_assert_int_eq(S->state, SM_STANDBY);
	mad_build_smp_dr(smp, MAD_METHOD_SET, SMP_ATTR_SM_INFO, SMINFO_HANDOVER,
			 path, 2);
	smp->hdr.tid = htobe64(7777);
	fill_b_sminfo((struct smp_sm_info *)smp->data);
	((struct smp_sm_info *)smp->data)->sm_key = htobe64(1);
	/* The route it took, as the switches wrote it: not ours to B (a
	 * host claiming B's GUID): refused. */
	smp->return_path[1] = 3;
	smp->return_path[2] = 1;
	mad_engine_recv(F.engine, mad, MAD_SIZE, &from, 0);
	run_for(0.02);
	ck_assert_uint_eq(last_sminfo_status(), MAD_STATUS_INVALID_FIELD);
	ck_assert_int_eq(S->state, SM_STANDBY);
	/* B's port 1 -> switch port 2 -> our port 1: B's route. */
	smp->hdr.tid = htobe64(7778);
	smp->return_path[1] = 2;
	mad_engine_recv(F.engine, mad, MAD_SIZE, &from, 0);
	run_for(0.02);
	ck_assert_int_eq(S->state, SM_MASTER);
	ck_assert_uint_eq(sminfo_sets(SMINFO_ACKNOWLEDGE), 1);
	for (size_t i = 0; i < F.n_sent; i++) {
		const struct smp_lid *a = (const void *)F.sent[i].mad;
		if (a->hdr.method == MAD_METHOD_SET &&
		    be16toh(a->hdr.attr_id) == SMP_ATTR_SM_INFO &&
		    be32toh(a->hdr.attr_mod) == SMINFO_ACKNOWLEDGE)
			ck_assert_uint_eq(((const struct smp_sm_info *)a->data)
					  ->prio_state & 0xf, SM_STATE_STANDBY);
	}
}
END_TEST

/* A standby is not made master by a HANDOVER from a standby, nor stood
 * down by its DISABLE; the master's DISABLE is obeyed. */
START_TEST(test_standby_refuses_sets_of_standby)
{
	b_sm = true;
	b_state = SM_STATE_MASTER;
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->state == SM_STANDBY, 3.);
	ck_assert_int_eq(S->state, SM_STANDBY);
	/* B stays master for our polls; its Sets say STANDBY. */
	b_says = SM_STATE_STANDBY;
	from_b(MAD_METHOD_SET, SMINFO_HANDOVER, 1);
	ck_assert_uint_eq(last_sminfo_status(), MAD_STATUS_INVALID_FIELD);
	ck_assert_int_eq(S->state, SM_STANDBY);
	ck_assert_uint_eq(sminfo_sets(SMINFO_ACKNOWLEDGE), 0);
	from_b(MAD_METHOD_SET, SMINFO_DISABLE, 1);
	ck_assert_int_eq(S->state, SM_STANDBY);
	b_says = -1;
	from_b(MAD_METHOD_SET, SMINFO_DISABLE, 1);
	ck_assert_uint_eq(last_sminfo_status(), 0);
	ck_assert_int_eq(S->state, SM_NOTACTIVE);
}
END_TEST

/* ACKNOWLEDGE only from the SM we handed over to, after our HANDOVER. */
START_TEST(test_ack_only_after_handover)
{
	bring_up();
	b_state = SM_STATE_MASTER;
	from_b(MAD_METHOD_SET, SMINFO_ACKNOWLEDGE, 1);
	ck_assert_uint_eq(last_sminfo_status(), MAD_STATUS_INVALID_FIELD);
	ck_assert_int_eq(S->state, SM_MASTER);
	/* A better standby polls us: we hand over, it acknowledges. */
	b_sm = true;
	b_prio = 10;
	b_state = SM_STATE_STANDBY;
	b_takes_handover = true;
	from_b(MAD_METHOD_GET, 0, 1);
	RUN_UNTIL(S->state == SM_STANDBY, 2.);
	ck_assert_int_eq(S->state, SM_STANDBY);
	ck_assert_uint_eq(sminfo_sets(SMINFO_HANDOVER), 1);
	from_b(MAD_METHOD_SET, SMINFO_ACKNOWLEDGE, 1);
	ck_assert_uint_eq(last_sminfo_status(), 0);
	ck_assert_int_eq(S->state, SM_STANDBY);
}
END_TEST

/* A new standby polls its master at once (its SMInfo is the payload),
 * not one polling interval later. */
START_TEST(test_standby_polls_at_once)
{
	b_sm = true;
	b_state = SM_STATE_MASTER;
	b_prio = 10;
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->state == SM_STANDBY, 3.);
	ck_assert_int_eq(S->state, SM_STANDBY);
	run_for(0.1);
	ck_assert_uint_ge(sminfo_gets_to_b(), 1);
}
END_TEST

/* SIGTERM on a master that has not heard of a standby (it started after
 * the sweep, no poll yet): the probe finds IsSM on B's port (PortInfo),
 * reads its SMInfo and hands over before exiting. */
START_TEST(test_sigterm_finds_new_standby)
{
	bring_up();		/* B is no SM yet: no IsSM in the model */
	b_sm = true;
	b_prio = 1;
	b_state = SM_STATE_STANDBY;
	b_takes_handover = true;
	raise(SIGTERM);
	RUN_UNTIL(S->state == SM_NOTACTIVE, 2.);
	ck_assert_int_eq(S->state, SM_NOTACTIVE);
	ck_assert_uint_eq(sminfo_gets_to_b(), 1);
	ck_assert_uint_eq(sminfo_sets(SMINFO_HANDOVER), 1);
	ck_assert_int_eq(b_state, SM_STATE_MASTER);
}
END_TEST

/* sm_priority lowered at run time (SIGHUP, reload): the next light
 * sweep's SMInfo queries find a better standby and hand over. */
START_TEST(test_priority_change_hands_over)
{
	b_sm = true;		/* IsSM in the model of the sweep */
	b_prio = 3;
	b_takes_handover = true;
	bring_up();
	sm_event(S, SM_EV_LIGHT_TIMER);
	run_for(0.3);
	ck_assert_int_eq(S->state, SM_MASTER);
	ck_assert_uint_eq(sminfo_sets(SMINFO_HANDOVER), 0);
	S->cfg.sm_priority = 1;
	sm_event(S, SM_EV_LIGHT_TIMER);
	RUN_UNTIL(S->state == SM_STANDBY, 2.);
	ck_assert_uint_eq(sminfo_sets(SMINFO_HANDOVER), 1);
	ck_assert_int_eq(S->state, SM_STANDBY);
}
END_TEST

/* The pure rules (sm/ha/election.c). */
START_TEST(test_election_rules)
{
	struct sm_remote r[3] = { { 0 } };
	int who;

	ck_assert(sm_better(5, 9, 4, 1));
	ck_assert(!sm_better(4, 1, 5, 9));
	ck_assert(sm_better(5, 1, 5, 2));
	ck_assert(!sm_better(5, 2, 5, 1));
	ck_assert_int_eq(elect_decide(5, 10, r, 3, &who), ELECT_MASTER);
	r[0] = (struct sm_remote){ .guid = 20, .priority = 1,
				   .state = SM_STATE_MASTER };
	ck_assert_int_eq(elect_decide(5, 10, r, 3, &who), ELECT_STANDBY);
	ck_assert_int_eq(who, 0);
	r[1] = (struct sm_remote){ .guid = 30, .priority = 9,
				   .state = SM_STATE_MASTER };
	ck_assert_int_eq(elect_decide(5, 10, r, 3, &who), ELECT_STANDBY);
	ck_assert_int_eq(who, 1);		/* the better of two masters */
	r[0].state = r[1].state = SM_STATE_NOTACTIVE;
	ck_assert_int_eq(elect_decide(5, 10, r, 3, &who), ELECT_MASTER);
	r[2] = (struct sm_remote){ .guid = 5, .priority = 5,
				   .state = SM_STATE_DISCOVERING };
	ck_assert_int_eq(elect_decide(5, 10, r, 3, &who), ELECT_WAIT);
	ck_assert_int_eq(who, 2);
	ck_assert_int_eq(master_review(5, 10, &r[2]), MASTER_KEEP);
	r[2].state = SM_STATE_STANDBY;
	ck_assert_int_eq(master_review(5, 10, &r[2]), MASTER_HANDOVER);
	r[2].state = SM_STATE_MASTER;
	ck_assert_int_eq(master_review(5, 10, &r[2]), MASTER_YIELD);
	r[2].priority = 4;
	ck_assert_int_eq(master_review(5, 10, &r[2]), MASTER_KEEP);
	ck_assert_str_eq(sminfo_control_name(SMINFO_ACKNOWLEDGE), "ACKNOWLEDGE");
}
END_TEST

/* The table of other SMs is bounded: the longest unheard is replaced. */
START_TEST(test_remote_table_bounded)
{
	struct sm_remote t[2] = { { 0 } };

	sm_remote_note(t, 2, 1, 1, 0, SM_STATE_STANDBY, 0, 1.);
	sm_remote_note(t, 2, 2, 2, 0, SM_STATE_STANDBY, 0, 2.);
	sm_remote_note(t, 2, 1, 0, 3, SM_STATE_STANDBY, 0, 3.);
	ck_assert_uint_eq(t[0].lid, 1);		/* LID 0: kept */
	struct sm_remote *n = sm_remote_note(t, 2, 9, 9, 0, SM_STATE_MASTER, 0, 4.);
	ck_assert_ptr_eq(n, &t[1]);		/* 2 was heard from longest ago */
	ck_assert_ptr_eq(sm_best_standby(t, 2, 0.), &t[0]);
	ck_assert_ptr_null(sm_best_standby(t, 2, 3.5));
}
END_TEST

static Suite *state_suite(void)
{
	Suite *s = suite_create("state");
	TCase *tc = tcase_create("state");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_bring_up);
	tcase_add_test(tc, test_standby_tells_worse_master);
	tcase_add_test(tc, test_master_tells_worse_master);
	tcase_add_test(tc, test_light_sweep_finds_foreign_master_lid);
	tcase_add_test(tc, test_yield_stops_sweep);
	tcase_add_test(tc, test_get_from_better_master_yields);
	tcase_add_test(tc, test_trap_128_from_switch);
	tcase_add_test(tc, test_trap_128_heavy_sweep);
	tcase_add_test(tc, test_trap_128_no_sweep_on_trap);
	tcase_add_test(tc, test_trap_144_heavy_sweep);
	tcase_add_test(tc, test_trap_forged_issuer);
	tcase_add_test(tc, test_trap_128_from_ca);
	tcase_add_test(tc, test_trap_sa_notices_from_host);
	tcase_add_test(tc, test_trap_unknown_source);
	tcase_add_test(tc, test_trap_flood_from_host);
	tcase_add_test(tc, test_trap_burst_coalesces);
	tcase_add_test(tc, test_trap_pacing);
	tcase_add_test(tc, test_trap_rate_per_source);
	tcase_add_test(tc, test_trap_128_over_rate_owes_sweep);
	tcase_add_test(tc, test_trap_sources_bounded);
	tcase_add_test(tc, test_trap_spoofed_sources_keep_budgets);
	tcase_add_test(tc, test_heavy_waits_for_light);
	tcase_add_test(tc, test_sm_port_down_then_up);
	tcase_add_test(tc, test_sigusr1_reopens_log);
	tcase_add_test(tc, test_log_ratelimit);
	tcase_add_test(tc, test_elect_standby_under_master);
	tcase_add_test(tc, test_elect_master_over_worse);
	tcase_add_test(tc, test_elect_waits_for_better);
	tcase_add_test(tc, test_elect_equal_priority_lower_guid);
	tcase_add_test(tc, test_standby_takeover);
	tcase_add_test(tc, test_standby_master_link_down);
	tcase_add_test(tc, test_standby_master_port_up_polls_decide);
	tcase_add_test(tc, test_standby_trap_checks_master_link);
	tcase_add_test(tc, test_standby_master_stood_down);
	tcase_add_test(tc, test_standby_receives_handover);
	tcase_add_test(tc, test_standby_receives_dr_handover);
	tcase_add_test(tc, test_master_hands_over_to_better);
	tcase_add_test(tc, test_master_keeps_over_worse);
	tcase_add_test(tc, test_split_brain_loser_stands_by);
	tcase_add_test(tc, test_split_brain_winner_stays);
	tcase_add_test(tc, test_new_standby_no_repair);
	tcase_add_test(tc, test_former_master_standby_repaired);
	tcase_add_test(tc, test_trap144_queries_new_sm);
	tcase_add_test(tc, test_sigterm_hands_over);
	tcase_add_test(tc, test_sigterm_alone);
	tcase_add_test(tc, test_sigterm_twice_is_once);
	tcase_add_test(tc, test_sm_key);
	tcase_add_test(tc, test_trap_bad_mkey);
	tcase_add_test(tc, test_sm_key_other_master_ignored);
	tcase_add_test(tc, test_master_refuses_sets);
	tcase_add_test(tc, test_disable_and_discover);
	tcase_add_test(tc, test_standby_set_while_discovering);
	tcase_add_test(tc, test_bad_control);
	tcase_add_test(tc, test_election_rules);
	tcase_add_test(tc, test_priority_change_hands_over);
	tcase_add_test(tc, test_remote_table_bounded);
	tcase_add_test(tc, test_set_only_from_master);
	tcase_add_test(tc, test_standby_refuses_sets_of_standby);
	tcase_add_test(tc, test_ack_only_after_handover);
	tcase_add_test(tc, test_standby_polls_at_once);
	tcase_add_test(tc, test_sigterm_finds_new_standby);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(state_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
