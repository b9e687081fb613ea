/*
 * check_perf.c - the performance manager (sm/perf/) against hostile PMAs
 * on a fake transport: answers of the wrong length, for another port,
 * with an error status, 64-bit counters jumping by 2^63, and a node that
 * answers nothing.  Every counter sweep still ends, nothing is counted
 * from a refused answer, no error increment appears where the counters
 * did not rise, the silent node is marked unresponsive and only probed
 * afterwards, the PMA window holds, clears go out at 75% and nodes that
 * left the model are dropped.
 */
#include "config.h"

#include <check.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ev.h>

#include "mad/pma.h"
#include "sm/perf/perf.h"
#include "sm/sm.h"
#include "tests/unit/fake_transport.h"

#define N_CA		5
#define SW_PORTS	8	/* all read, linked or not */
#define DEAD_LID	(2 + N_CA - 1)	/* the last CA answers nothing */
#define WINDOW		4

static struct ev_loop *L;
static bool dead_alive;		/* DEAD_LID answers again */
static struct fake F;
static struct sm *S;
static unsigned hook_calls;

static void hook(struct sm *sm)
{
	(void)sm;
	hook_calls++;
}

/* A switch (LID 1) with CA i (GUID 0x20 + i, LID 2 + i) on port i + 1. */
static void build_fabric(struct fabric *f, bool without_first_ca)
{
	fabric_init(f);
	int32_t sw = fabric_add_node(f, 0x10, NODE_TYPE_SWITCH, SW_PORTS);
	ck_assert_int_ge(sw, 0);
	f->nodes[sw].ports[0].lid = 1;
	for (unsigned i = without_first_ca; i < N_CA; i++) {
		int32_t ca = fabric_add_node(f, 0x20 + i, NODE_TYPE_CA, 1);

		ck_assert_int_ge(ca, 0);
		sw = fabric_find(f, 0x10);
		f->nodes[ca].ports[1].lid = (uint16_t)(2 + i);
		f->nodes[ca].ports[1].guid = 0x120 + i;
		ck_assert_int_eq(fabric_link(f, sw, (uint8_t)(i + 1), ca, 1), 0);
	}
}

static void setup(void)
{
	struct mad_engine_opts o = { .max_wire_smps = 4, .max_wire_gmps = 4,
				     .timeout_ms = 10, .retries = 3 };

	L = ev_default_loop(0);
	ck_assert_int_eq(fake_init(&F, L, &o), 0);
	S = calloc(1, sizeof(*S));
	ck_assert_ptr_nonnull(S);
	S->loop = L;
	S->engine = F.engine;
	S->cfg = (struct sm_config){
		.log_file = "-", .log_level = LOG_LVL_ERR,
		.transaction_timeout = 10, .transaction_retries = 3,
		.perfmgr = true, .perfmgr_sweep_time_s = 0,
		.perfmgr_max_outstanding_queries = WINDOW,
		.perfmgr_log_errors = true, .perfmgr_rm_nodes = true,
		.perfmgr_query_cpi = true,
	};
	S->state = SM_MASTER;
	S->subnet_up = true;
	S->perf_done_hook = hook;
	hook_calls = 0;
	dead_alive = false;
	build_fabric(&S->fabric, false);
	ck_assert_int_eq(perf_start(S), 0);
	ck_assert_ptr_nonnull(S->perf);
}

static void teardown(void)
{
	perf_abort(S);
	fake_fini(&F);
	perf_abort(S);
	ck_assert_ptr_null(S->perf);
	sm_evq_stop(S);
	fabric_free(&S->fabric);
	free(S);
	S = NULL;
}

enum mode { GOOD, SHORT, WRONG_PORT, BAD_STATUS, WRONG_ATTR, EXT_JUMP };

/* What the PMAs hold (host order); answers are built from it. */
static uint16_t sym_err = 10;
static uint64_t ext_data = 1000;
static uint64_t clears_seen;

static size_t make_answer(const struct fake_sent *q, enum mode mode,
			  uint8_t *out)
{
	struct pma_mad *m = (struct pma_mad *)out;
	uint16_t attr;
	size_t len = fake_make_response(q->mad, q->len, F.tid_high, out);

	attr = be16toh(m->hdr.attr_id);
	if (attr == PMA_ATTR_CLASS_PORT_INFO) {
		struct pma_class_port_info *c = (void *)m->data;

		c->base_version = 1;
		c->class_version = 1;
		c->cap_mask = htobe16(PMA_CAP_EXT_WIDTH);
		return len;
	}
	if (attr == PMA_ATTR_PORT_COUNTERS) {
		struct pma_port_counters *p = (void *)m->data;

		if (m->hdr.method == (MAD_METHOD_GET | MAD_METHOD_RESP) &&
		    ((const struct mad_hdr *)q->mad)->method == MAD_METHOD_SET)
			clears_seen++;
		p->symbol_err = htobe16(sym_err);
		p->xmit_data = htobe32((uint32_t)ext_data);
	} else {
		struct pma_port_counters_ext *p = (void *)m->data;

		p->xmit_data = htobe64(ext_data + (mode == EXT_JUMP ? 1ull << 63 : 0));
	}
	switch (mode) {
	case SHORT:
		return 100;
	case WRONG_PORT:
		m->data[1] ^= 1;
		break;
	case BAD_STATUS:
		m->hdr.status = htobe16(MAD_STATUS_INVALID_FIELD);
		break;
	case WRONG_ATTR:
		m->hdr.attr_id = htobe16(attr == PMA_ATTR_PORT_COUNTERS ?
					 PMA_ATTR_PORT_COUNTERS_EXT :
					 PMA_ATTR_PORT_COUNTERS);
		break;
	default:
		break;
	}
	return len;
}

/* Answer the counter sweep in progress until it ends (see sweep()). */
static void answer_sweep(enum mode mode, unsigned before, size_t done)
{
	for (int turn = 0; turn < 2000 && perf_stats(S->perf)->sweeps == before;
	     turn++) {
		size_t fresh = F.n_sent - done;
		unsigned dead = 0;

		for (size_t i = done; i < F.n_sent; i++)
			dead += F.sent[i].addr.lid == DEAD_LID;
		/* each turn answers all but the dead: at most the window
		 * is on the wire */
		ck_assert_uint_le(fresh, WINDOW + 1);
		for (; done < F.n_sent; done++) {
			const struct fake_sent *q = &F.sent[done];
			uint8_t ans[MAD_SIZE];

			ck_assert_uint_eq(((const struct mad_hdr *)q->mad)->mgmt_class,
					  MAD_CLASS_PERF);
			ck_assert_uint_eq(q->addr.qpn, 1);
			ck_assert_uint_eq(q->addr.qkey, PMA_QKEY);
			if (q->addr.lid == DEAD_LID && !dead_alive)
				continue;
			size_t len = make_answer(q, mode, ans);
			fake_deliver_from(&F, ans, len, &q->addr, 0);
		}
		(void)dead;
		ev_run(L, EVRUN_ONCE);
	}
	ck_assert_uint_eq(perf_stats(S->perf)->sweeps, before + 1);
	ev_run(L, EVRUN_NOWAIT);	/* SM_EV_PERF_DONE */
}

/* One counter sweep, every MAD answered in `mode` (ClassPortInfo always
 * well), except to DEAD_LID; checks the window on the way. */
static void sweep(enum mode mode)
{
	unsigned before = perf_stats(S->perf)->sweeps;
	size_t done = F.n_sent;

	ck_assert_int_eq(perf_sweep_now(S), 0);
	ck_assert_int_eq(perf_sweep_now(S), -EBUSY);
	answer_sweep(mode, before, done);
}

static const struct pc_port *port_of(uint64_t guid, uint8_t port)
{
	return pc_find((struct pc_store *)perf_store(S->perf), guid, port);
}

static void assert_no_error_deltas(void)
{
	size_t it = 0;
	const struct pc_port *p;

	while ((p = pc_next(perf_store(S->perf), &it)))
		for (int i = 0; i < PC_N_ERRORS; i++)
			ck_assert_msg(p->delta[i] == 0, "0x%llx port %u %s +%llu",
				      (unsigned long long)p->node_guid, p->port,
				      pc_desc[i].name,
				      (unsigned long long)p->delta[i]);
}

START_TEST(hostile_answers)
{
	const struct pc_port *p;

	sym_err = 10;
	ext_data = 1000;
	sweep(GOOD);
	ck_assert_uint_eq(hook_calls, 1);
	/* the silent node's ClassPortInfo went unanswered (a Get and one
	 * re-send): its port was not tried at all */
	size_t dead_sends = 0;
	for (size_t i = 0; i < F.n_sent; i++)
		dead_sends += F.sent[i].addr.lid == DEAD_LID;
	ck_assert_uint_eq(dead_sends, 2);
	/* 8 switch ports + 4 live CA ports read; the dead CA is marked */
	ck_assert_uint_eq(perf_stats(S->perf)->last_ports, SW_PORTS + N_CA - 1);
	ck_assert(perf_node_unresponsive(S->perf, 0x20 + N_CA - 1));
	ck_assert(!perf_node_unresponsive(S->perf, 0x20));
	ck_assert_ptr_null(port_of(0x20 + N_CA - 1, 1));
	ck_assert_ptr_nonnull(port_of(0x10, SW_PORTS));	/* not linked */
	p = port_of(0x10, 1);
	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(p->total[PC_SYMBOL_ERR], 10);
	ck_assert_uint_eq(p->width[PC_XMIT_DATA], 64);	/* extended read */
	ck_assert_uint_eq(p->total[PC_XMIT_DATA], 1000);

	/* hostile answers: nothing counted, every sweep ends */
	static const enum mode bad[] = { SHORT, WRONG_PORT, BAD_STATUS,
					 WRONG_ATTR };
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		sym_err = (uint16_t)(500 + k);	/* would be an increment */
		sweep(bad[k]);
		p = port_of(0x10, 1);
		ck_assert_uint_eq(p->reads, 1);
		ck_assert_uint_eq(p->total[PC_SYMBOL_ERR], 10);
		ck_assert_uint_eq(perf_stats(S->perf)->last_ports, 0);
	}
	ck_assert_uint_eq(hook_calls, 5);
	/* no reading, no increment: the first sweep's is not seen again */
	assert_no_error_deltas();
	/* no answer at all is not a bad answer, and the dead CA, only
	 * probed, costs one ClassPortInfo Get per sweep */
	ck_assert(perf_node_unresponsive(S->perf, 0x20 + N_CA - 1));
	size_t to_dead = 0;
	size_t from = F.n_sent;
	sym_err = 10;
	sweep(GOOD);
	for (size_t i = from; i < F.n_sent; i++)
		if (F.sent[i].addr.lid == DEAD_LID)
			to_dead++;
	ck_assert_uint_le(to_dead, 2);		/* one Get, one re-send */
	assert_no_error_deltas();

	/* a 64-bit counter jumping by 2^63: a new base, no increment */
	sweep(EXT_JUMP);
	p = port_of(0x10, 2);
	ck_assert_uint_eq(p->delta[PC_XMIT_DATA], 0);
	ck_assert_uint_eq(p->total[PC_XMIT_DATA], 1000);
	ck_assert_uint_ge(p->ext_clears, 1);
	assert_no_error_deltas();
	/* and back down: cleared again, the delta the new value at most */
	ext_data = 1500;
	sweep(GOOD);
	p = port_of(0x10, 2);
	ck_assert_uint_le(p->delta[PC_XMIT_DATA], 1500);
	assert_no_error_deltas();

	/* the silent node answers its probe again: its port is read in
	 * that same sweep */
	dead_alive = true;
	sweep(GOOD);
	dead_alive = false;
	ck_assert(!perf_node_unresponsive(S->perf, 0x20 + N_CA - 1));
	ck_assert_ptr_nonnull(port_of(0x20 + N_CA - 1, 1));
}
END_TEST

/* Past 75% of a 16-bit counter: a Set with CounterSelect clears it, and
 * the next reading counts from 0 without taking it for an outside clear. */
START_TEST(clears_at_75_percent)
{
	const struct pc_port *p;
	size_t from;

	sym_err = 10;
	ext_data = 1000;
	sweep(GOOD);
	sym_err = 0xc000;
	from = F.n_sent;
	clears_seen = 0;
	sweep(GOOD);
	unsigned sets = 0;
	for (size_t i = from; i < F.n_sent; i++) {
		const struct pma_mad *m = (const void *)F.sent[i].mad;

		if (m->hdr.method != MAD_METHOD_SET)
			continue;
		sets++;
		ck_assert_uint_eq(be16toh(m->hdr.attr_id), PMA_ATTR_PORT_COUNTERS);
		const struct pma_port_counters *pc = (const void *)m->data;
		/* errors only: the data counters are read extended */
		ck_assert_uint_eq(be16toh(pc->counter_select), PMA_SEL_ERRORS);
		ck_assert_uint_eq(pc->counter_select2, PMA_SEL2_XMIT_WAIT);
	}
	ck_assert_uint_eq(sets, SW_PORTS + N_CA - 1);
	ck_assert_uint_eq(perf_stats(S->perf)->clears, sets);
	p = port_of(0x10, 1);
	ck_assert_uint_eq(p->sm_clears, 1);
	/* the PMA cleared: it counts from 0 now */
	sym_err = 3;
	sweep(GOOD);
	p = port_of(0x10, 1);
	ck_assert_uint_eq(p->ext_clears, 0);
	ck_assert_uint_eq(p->delta[PC_SYMBOL_ERR], 3);
	ck_assert_uint_eq(p->total[PC_SYMBOL_ERR], 0xc000 + 3);
}
END_TEST

/* While a heavy sweep runs the counter sweep sends nothing; the subnet's
 * coming up lets it go on. */
START_TEST(waits_for_heavy_sweep)
{
	static char busy;
	unsigned before = perf_stats(S->perf)->sweeps;
	size_t done = F.n_sent;

	S->sweep = (struct sweep *)&busy;
	ck_assert_int_eq(perf_sweep_now(S), 0);
	ev_tstamp until = ev_time() + 0.5;
	while (ev_time() < until)
		ev_run(L, EVRUN_ONCE);		/* the resume timer looks */
	ck_assert_uint_eq(F.n_sent, done);
	S->sweep = NULL;
	perf_subnet_up(S);
	ck_assert_uint_gt(F.n_sent, done);
	answer_sweep(GOOD, before, done);
	ck_assert_ptr_nonnull(port_of(0x10, 1));
}
END_TEST

/* perfmgr_ignore_cas: switches only; perfmgr_query_cpi FALSE: no
 * ClassPortInfo, so no PortCountersExtended either; event_db_dump_file
 * holds every port read. */
START_TEST(keys_honoured)
{
	char dir[] = "/tmp/check_perf.XXXXXX", path[64];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/counters.dump", dir);
	S->cfg.perfmgr_ignore_cas = true;
	S->cfg.perfmgr_query_cpi = false;
	S->cfg.event_db_dump_file = path;
	sym_err = 7;
	size_t from = F.n_sent;
	sweep(GOOD);
	ck_assert_uint_eq(perf_stats(S->perf)->last_ports, SW_PORTS);
	for (size_t i = from; i < F.n_sent; i++) {
		const struct mad_hdr *h = (const void *)F.sent[i].mad;

		ck_assert_uint_eq(F.sent[i].addr.lid, 1);	/* the switch */
		ck_assert_uint_eq(be16toh(h->attr_id), PMA_ATTR_PORT_COUNTERS);
	}
	ck_assert_uint_eq(F.n_sent - from, SW_PORTS);
	ck_assert_uint_eq(port_of(0x10, 1)->width[PC_XMIT_DATA], 32);
	ck_assert_ptr_null(port_of(0x20, 1));

	FILE *fp = fopen(path, "r");
	char line[2048];
	unsigned lines = 0;
	bool found = false;

	ck_assert_ptr_nonnull(fp);
	while (fgets(line, sizeof(line), fp)) {
		if (line[0] == '#')
			continue;
		lines++;
		if (!strncmp(line, "0x0000000000000010 3 1 1 0 0 ", 29) &&
		    strstr(line, " SymbolErrorCounter=7/7 "))
			found = true;
	}
	fclose(fp);
	ck_assert_uint_eq(lines, SW_PORTS);
	ck_assert(found);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* A node gone from the model is dropped from the store after a sweep. */
START_TEST(nodes_that_left)
{
	sym_err = 1;
	sweep(GOOD);
	ck_assert_ptr_nonnull(port_of(0x20, 1));
	fabric_free(&S->fabric);
	build_fabric(&S->fabric, true);
	sweep(GOOD);
	ck_assert_ptr_null(port_of(0x20, 1));
	ck_assert_ptr_nonnull(port_of(0x21, 1));
	ck_assert_ptr_nonnull(port_of(0x10, 2));
	/* not master: no sweep */
	S->state = SM_STANDBY;
	ck_assert_int_eq(perf_sweep_now(S), -EAGAIN);
	S->state = SM_MASTER;
}
END_TEST

int main(void)
{
	Suite *s = suite_create("perf");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int nf;

	tcase_set_timeout(tc, 30);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, hostile_answers);
	tcase_add_test(tc, clears_at_75_percent);
	tcase_add_test(tc, nodes_that_left);
	tcase_add_test(tc, waits_for_heavy_sweep);
	tcase_add_test(tc, keys_honoured);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	nf = srunner_ntests_failed(sr);
	srunner_free(sr);
	return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
