/*
 * check_mkey.c - M_Key protection (sm/mkey.h) against a scripted fabric
 * whose end ports enforce the M_Key rules of IBA 14.2.4 (fake_fabric.h:
 * protection levels 0-3, M_KeyViolations, trap 256, the lease).
 *
 * The whole SM runs (discovery, Sets, light sweeps) on a fake clock:
 * it protects every end port with the key and level configured; a
 * manager without the key is refused as each level says; a restart
 * finds the keys (per port) again in its cache; the SM's sweeps renew
 * the lease; m_key 0 changes nothing.
 */
#include "config.h"

#include <check.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#include "mad/engine.h"
#include "mad/wire.h"
#include "sm/health/health.h"
#include "sm/ha/fsm.h"
#include "sm/ha/sminfo.h"
#include "sm/ha/sync.h"
#include "sm/ha/election.h"
#include "sm/lid.h"
#include "sm/mcast/mft.h"
#include "sm/mkey.h"
#include "sm/program.h"
#include "sm/sa/sa.h"
#include "sm/sm.h"
#include "tests/unit/fake_clock.h"
#include "tests/unit/fake_transport.h"
#include "tests/unit/fake_fabric.h"

#define KEY	0x1122334455667788ull

static struct ev_loop *L;
static struct fake F;
static struct fake_fabric FF;
static struct sm *S;
static char tmpdir[64];
static int h1, h2, h3, sw;

static void sm_up(const struct sm_config *c)
{
	S = calloc(1, sizeof(*S));
	ck_assert_ptr_nonnull(S);
	S->loop = L;
	S->engine = F.engine;
	S->port_guid = FF.node[h1].port_guid;
	S->cfg = *c;
	snprintf(S->cfg.cache_dir, sizeof(S->cfg.cache_dir), "%s", tmpdir);
	fabric_init(&S->fabric);
	S->images = lft_images_new();
	S->memos = port_memos_new();
	ck_assert_int_eq(sm_agents_start(S), 0);
	ck_assert_int_eq(sa_start(S), 0);
	sm_watchers_start(S);
}

static void sm_down(void)
{
	struct mad_engine_opts o = { .max_wire_smps = 16, .max_wire_gmps = 16,
				     .timeout_ms = 100, .retries = 1 };

	sm_watchers_stop(S);
	S->elect_abort = true;
	sweep_heavy_abort(S);
	sweep_light_abort(S);
	mft_abort(S);
	sa_stop(S);
	/* the engine fails what is in flight: a sweep's answers end it */
	fake_fini(&F);
	standby_sync_free(S);
	sm_election_free(S);
	sweep_heavy_abort(S);
	sweep_light_abort(S);
	mft_abort(S);
	sm_health_free(S);
	fabric_free(&S->fabric);
	routing_result_free(&S->routes);
	lid_cache_free(S->lids);
	mkey_free(S->mkeys);
	lft_images_free(S->images);
	port_memos_free(S->memos);
	free(S);
	S = NULL;
	/* a new transport and engine, as a restarted process has; the
	 * fabric stays as the SM left it */
	ck_assert_int_eq(fake_init(&F, L, &o), 0);
	F.policy = ff_policy;
	F.policy_arg = &FF;
	FF.fk = &F;
}

static struct sm_config base_cfg(void)
{
	return (struct sm_config){
		.log_file = "-", .log_level = LOG_LVL_ERR,
		.transaction_timeout = 100, .transaction_retries = 1,
		.max_wire_smps = 16, .sweep_interval = 0,
		.subnet_prefix = 0xfe80000000000000ull, .subnet_timeout = 18,
		.packet_life_time = 0x12, .head_of_queue_lifetime = 0x12,
		.leaf_head_of_queue_lifetime = 0x10, .max_op_vls = 5,
		.sm_key = 1, .sa_key = 1, .sm_priority = 5,
		.sminfo_polling_timeout = 10000, .polling_retry_number = 4,
		.m_key_lookup = true,
	};
}

static void setup(void)
{
	struct mad_engine_opts o = { .max_wire_smps = 16, .max_wire_gmps = 16,
				     .timeout_ms = 100, .retries = 1 };

	fake_clock_start();
	L = ev_default_loop(0);
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
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/check_mkey.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	S = NULL;
}

static void teardown(void)
{
	char path[128];
	static const char *files[] = { "guid2lid", "guid2mkey", "neighbors" };

	if (S)
		sm_down();
	fake_fini(&F);
	for (unsigned i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, files[i]);
		unlink(path);
	}
	rmdir(tmpdir);
}

#define RUN_UNTIL(cond, limit) do {					\
	ev_tstamp end_ = ev_time() + (limit);				\
	while (!(cond) && ev_time() < end_) {				\
		ev_run(L, EVRUN_NOWAIT);				\
		fake_clock_pause(0.0005);				\
	}								\
} while (0)

static void run_for(double s)
{
	ev_tstamp end = ev_time() + s;

	while (ev_time() < end) {
		ev_now_update(L);
		ev_run(L, EVRUN_NOWAIT);
		fake_clock_pause(0.001);
	}
}

static bool bring_up(void)
{
	sm_event(S, SM_EV_START);
	RUN_UNTIL(S->subnet_up && !S->sweep, 10.);
	return S->subnet_up && S->state == SM_MASTER;
}

/* A request of another manager to end port `ep` of node `id`: its
 * answer, or false when the port refuses it. */
static bool rogue(int id, bool set, uint64_t key, struct smp_port_info *pi)
{
	struct smp_dr req, resp;
	struct smp_port_info w;
	uint8_t in = FF.node[id].type == NODE_TYPE_SWITCH ? 0 : 1;

	memset(&req, 0, sizeof(req));
	req.hdr.method = set ? MAD_METHOD_SET : MAD_METHOD_GET;
	req.hdr.attr_id = htobe16(SMP_ATTR_PORT_INFO);
	req.hdr.attr_mod = htobe32(in);
	req.mkey = htobe64(key);
	ff_port_info(&FF.node[id], in, &w);
	w.lid = htobe16(0x77);			/* what a rogue would do */
	memcpy(req.data, &w, sizeof(w));
	memset(&resp, 0, sizeof(resp));
	if (!ff_answer(&FF, id, in, &req, &resp))
		return false;
	if (pi)
		memcpy(pi, resp.data, sizeof(*pi));
	return true;
}

static const struct ff_mkey *mk(int id)
{
	return &FF.node[id].mk[FF.node[id].type == NODE_TYPE_SWITCH ? 0 : 1];
}

/* Each level: the SM protects every end port (switch port 0 too); a
 * manager without the key is refused what the level refuses. */
START_TEST(test_levels)
{
	unsigned level = (unsigned)_i;
	struct sm_config c = base_cfg();
	struct smp_port_info pi;
	const int ends[] = { h1, h2, h3, sw };

	c.m_key = KEY;
	c.m_key_protection_level = (uint8_t)level;
	sm_up(&c);
	ck_assert(bring_up());
	for (unsigned i = 0; i < 4; i++) {
		ck_assert_uint_eq(mk(ends[i])->key, KEY);
		ck_assert_uint_eq(mk(ends[i])->prot, level);
	}
	ck_assert_uint_eq(mkey_count(S->mkeys), 4);
	/* the rogue's Set: refused from level 1 */
	ck_assert(rogue(h2, true, 0xbad, NULL) == (level == 0));
	/* its Get: refused at 3; at 2 the key reads 0; at 1 it shows */
	bool got = rogue(h3, false, 0xbad, &pi);
	ck_assert(got == (level < 3));
	if (got)
		ck_assert_uint_eq(be64toh(pi.mkey), level == 2 ? 0 : KEY);
	ck_assert_uint_eq(mk(h2)->violations, level >= 1);
	ck_assert_uint_eq(mk(h3)->traps, level == 3);
	/* with the key, anything goes */
	ck_assert(rogue(h2, false, KEY, &pi));
	ck_assert_uint_eq(be64toh(pi.mkey), KEY);
	/* the SM itself never met a refusal */
	ck_assert_uint_eq(mk(h1)->violations, 0);
	ck_assert_uint_eq(mk(sw)->violations, 0);
}
END_TEST

/* m_key_per_port: each port its own key; a restart finds them in its
 * cache (guid2mkey, neighbors) and brings the fabric up at level 3;
 * without the cache it cannot read the protected ports. */
START_TEST(test_restart_per_port)
{
	struct sm_config c = base_cfg();
	char path[128];

	c.m_key = KEY;
	c.m_key_protection_level = 3;
	c.m_key_per_port = true;
	sm_up(&c);
	ck_assert(bring_up());
	ck_assert_uint_ne(mk(h2)->key, mk(h3)->key);
	ck_assert_uint_ne(mk(h2)->key, KEY);
	ck_assert_uint_eq(mk(h2)->key, mkey_want(&c, FF.node[h2].port_guid));
	sm_down();
	/* a restart: the keys come from the cache */
	sm_up(&c);
	ck_assert(bring_up());
	ck_assert_uint_eq(S->fabric.n_nodes, 4);
	ck_assert_uint_eq(mk(h1)->violations, 0);
	ck_assert_uint_eq(mk(h2)->violations, 0);
	ck_assert_uint_eq(mk(sw)->violations, 0);
	ck_assert_uint_gt(S->mkey_hook.by_cache, 0);
	sm_down();
	/* without it: m_key alone opens no port */
	snprintf(path, sizeof(path), "%s/guid2mkey", tmpdir);
	ck_assert_int_eq(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/neighbors", tmpdir);
	ck_assert_int_eq(unlink(path), 0);
	sm_up(&c);
	sm_event(S, SM_EV_START);
	run_for(3.);
	ck_assert_uint_gt(mk(h2)->violations + mk(sw)->violations, 0);
}
END_TEST

/* The lease: a failed check starts it; the SM's sweeps present the key
 * within it and the protection stays; without them it runs out and the
 * protection drops to 0. */
START_TEST(test_lease)
{
	struct sm_config c = base_cfg();
	char note[160];

	c.m_key = KEY;
	c.m_key_protection_level = 3;
	c.m_key_lease_period = 10;
	c.sweep_interval = 4;
	mkey_fix_lease(&c, note, sizeof(note));
	ck_assert_str_eq(note, "");
	sm_up(&c);
	ck_assert(bring_up());
	ck_assert_uint_eq(mk(h2)->lease, 10);
	ck_assert(!rogue(h2, false, 0xbad, NULL));
	ck_assert(mk(h2)->lease_on);
	run_for(12.);			/* light sweeps read H2 with the key */
	ck_assert(!mk(h2)->lease_on);
	ck_assert_uint_eq(mk(h2)->prot, 3);
	ck_assert(!rogue(h2, true, 0xbad, NULL));
	/* no SM: the lease runs out */
	sm_down();
	run_for(11.);
	ck_assert(rogue(h2, true, 0xbad, NULL));	/* level 0 now */
	ck_assert_uint_eq(FF.node[h2].port[1].lid, 0x77);
}
END_TEST

/* OpenSM's rule: sweeps must renew a lease. */
START_TEST(test_fix_lease)
{
	struct sm_config c = base_cfg();
	char note[160];

	c.m_key = KEY;
	c.m_key_protection_level = 2;
	c.m_key_lease_period = 10;
	c.sweep_interval = 0;
	mkey_fix_lease(&c, note, sizeof(note));
	ck_assert_uint_eq(c.sweep_interval, 9);
	ck_assert_ptr_nonnull(strstr(note, "sweep_interval 9"));
	c.sweep_interval = 30;
	mkey_fix_lease(&c, note, sizeof(note));
	ck_assert_uint_eq(c.m_key_lease_period, 31);
	c.m_key_protection_level = 0;
	c.sweep_interval = 0;
	mkey_fix_lease(&c, note, sizeof(note));
	ck_assert_uint_eq(c.sweep_interval, 0);
	ck_assert_str_eq(note, "");
}
END_TEST

/* m_key 0: no key anywhere, no hook, no file. */
START_TEST(test_off)
{
	struct sm_config c = base_cfg();
	char path[128];

	sm_up(&c);
	ck_assert(bring_up());
	ck_assert_ptr_null(S->mkeys);
	ck_assert_uint_eq(mk(h2)->key, 0);
	ck_assert(rogue(h2, true, 0xbad, NULL));
	snprintf(path, sizeof(path), "%s/guid2mkey", tmpdir);
	ck_assert_int_ne(access(path, F_OK), 0);
	for (size_t i = 0; i < F.n_sent; i++) {
		const struct smp_dr *s = (const void *)F.sent[i].mad;

		if (s->hdr.mgmt_class == MAD_CLASS_SMI_DR)
			ck_assert_uint_eq(s->mkey, 0);
	}
}
END_TEST

/* Keys per port: stable, distinct, never 0; and the files round-trip,
 * bad records skipped and named. */
static unsigned warned;
static void on_warn(void *arg, const char *msg)
{
	(void)arg;
	ck_assert_ptr_nonnull(strstr(msg, ":5: expected"));
	warned++;
}

START_TEST(test_keys_and_files)
{
	struct sm_config c = base_cfg();
	struct mkey_state *m = mkey_new(), *m2 = mkey_new();
	char path[128];
	FILE *fp;

	c.m_key = KEY;
	ck_assert_uint_eq(mkey_want(&c, 5), KEY);
	c.m_key_per_port = true;
	ck_assert_uint_eq(mkey_want(&c, 5), mkey_want(&c, 5));
	ck_assert_uint_ne(mkey_want(&c, 5), mkey_want(&c, 6));
	ck_assert_uint_ne(mkey_want(&c, 5), 0);
	c.m_key = 0;
	ck_assert_uint_eq(mkey_want(&c, 5), 0);
	ck_assert(mkey_record(m, 0x10, 0xaa));
	ck_assert(!mkey_record(m, 0x10, 0xaa));
	ck_assert(mkey_record(m, 0x11, 0xbb));
	ck_assert(!mkey_record(m, 0x12, 0));	/* unprotected, unknown */
	ck_assert_int_eq(mkey_save(m, tmpdir), 0);
	snprintf(path, sizeof(path), "%s/guid2mkey", tmpdir);
	fp = fopen(path, "a");
	ck_assert_ptr_nonnull(fp);
	fprintf(fp, "garbage here\n\n0x0000000000000099 0x0000000000000000\n");
	fclose(fp);
	warned = 0;
	/* records on lines 1 and 3, the garbage on line 5; line 7 is an
	 * unprotected port (OpenSM writes those too): not a key */
	ck_assert_int_eq(mkey_load(m2, tmpdir, on_warn, NULL), 2);
	ck_assert_uint_eq(mkey_of(m2, &c, 0x11), 0xbb);
	mkey_free(m);
	mkey_free(m2);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("mkey");
	TCase *tc = tcase_create("mkey");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_levels, 0, 4);
	tcase_add_test(tc, test_restart_per_port);
	tcase_add_test(tc, test_lease);
	tcase_add_test(tc, test_fix_lease);
	tcase_add_test(tc, test_off);
	tcase_add_test(tc, test_keys_and_files);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
