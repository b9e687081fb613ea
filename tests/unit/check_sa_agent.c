/*
 * check_sa_agent.c - the SA agent (sm/sa/sa.c) as the network sees it.
 *
 * A struct sm as the daemon builds it, with the fake transport of
 * fake_transport.h under its engine and the model of a bundled topology
 * (LIDs from lid_assign(), minhop routes).  SA MADs go in through
 * mad_engine_recv() from chosen LIDs; what the agent sends is read back
 * from the transport: answers and their status, RMPP segments, Reports.
 *
 * Timeouts are tens of milliseconds so that retries run for real.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/rmpp.h"
#include "mad/sa_wire.h"
#include "routing/routing.h"
#include "model/fabric.h"
#include "sm/lid.h"
#include "sm/sa/sa.h"
#include "sm/sa/service.h"
#include "sm/sm.h"
#include "sm/topo_file.h"
#include "tests/unit/agent_fixture.h"

#define TIMEOUT_MS	20
#define RETRIES		1

/* SA limits off their defaults for the next fx_init() (0: default). */
static size_t fx_answer_bytes;
static unsigned fx_transfers_per_port;

static void fx_init(struct agent_fx *x, const char *topo, bool up)
{
	agent_fx_init(x, topo, up, TIMEOUT_MS, RETRIES);
	x->sm.cfg.sa_answer_bytes = fx_answer_bytes;
	x->sm.cfg.sa_transfers_per_port = fx_transfers_per_port;
	agent_fx_start(x);
}

#define fx_free	agent_fx_free
#define fx_run	agent_fx_run

static void req_build(struct agent_fx *x, struct sa_mad *m, uint8_t method,
		      uint16_t attr, uint64_t mask)
{
	memset(m, 0, sizeof(*m));
	sa_request_hdr(m, method, attr, mask);
	m->hdr.tid = htobe64(++x->tid);
}

/* Hand one request to the engine as if it came from `lid`. */
static void fx_send(struct agent_fx *x, const void *mad, size_t len, uint16_t lid)
{
	struct mad_addr from = { .lid = lid, .qpn = 1, .qkey = 0x80010000u };

	mad_engine_recv(x->sm.engine, mad, len, &from, 0);
}

static const struct sa_mad *sent(const struct agent_fx *x, size_t i)
{
	return (const struct sa_mad *)x->fk.sent[i].mad;
}

/* The status of the last thing sent, which must be an answer to `lid`. */
static unsigned last_status(const struct agent_fx *x, uint16_t lid)
{
	ck_assert_uint_gt(x->fk.n_sent, 0);
	ck_assert_uint_eq(x->fk.sent[x->fk.n_sent - 1].addr.lid, lid);
	return be16toh(sent(x, x->fk.n_sent - 1)->hdr.status);
}

START_TEST(test_busy_before_subnet_up)
{
	struct agent_fx x;
	struct sa_mad m;

	fx_init(&x, "fat2-small.net", false);
	req_build(&x, &m, MAD_METHOD_GET_TABLE, SA_ATTR_NODE_RECORD, 0);
	fx_send(&x, &m, sizeof(m), x.ca_lid[0]);
	ck_assert_uint_eq(x.fk.n_sent, 1);
	ck_assert_uint_eq(last_status(&x, x.ca_lid[0]), MAD_STATUS_BUSY);
	ck_assert_uint_eq(sent(&x, 0)->hdr.method,
			  MAD_METHOD_GET_TABLE | MAD_METHOD_RESP);
	ck_assert(sent(&x, 0)->hdr.tid == m.hdr.tid);
	fx_free(&x);
}
END_TEST


/* 15.2.2.1 as OpenSM applies it: a non-zero SM_Key that is not sa_key
 * gets no answer and is counted; 0 and sa_key are answered. */
START_TEST(test_sa_key_checked)
{
	struct agent_fx x;
	struct sa_mad m;
	uint16_t lid;
	size_t n;

	fx_init(&x, "fat2-small.net", true);
	lid = x.ca_lid[0];
	const uint64_t keys[] = { 0, 1, 2, 7, 0xffffffffffffffffull };
	const bool answered[] = { true, true, false, false, false };
	for (unsigned i = 0; i < 5; i++) {
		req_build(&x, &m, MAD_METHOD_GET_TABLE, SA_ATTR_NODE_RECORD, 0);
		m.sm_key = htobe64(keys[i]);
		n = x.fk.n_sent;
		fx_send(&x, &m, sizeof(m), lid);
		ck_assert_uint_eq(x.fk.n_sent > n, answered[i]);
	}
	ck_assert_uint_eq(sa_bad_key_drops(&x.sm), 3);
	/* another sa_key: 1 is no longer trusted, 7 is */
	x.sm.cfg.sa_key = 7;
	req_build(&x, &m, MAD_METHOD_GET_TABLE, SA_ATTR_NODE_RECORD, 0);
	m.sm_key = htobe64(1);
	n = x.fk.n_sent;
	fx_send(&x, &m, sizeof(m), lid);
	ck_assert_uint_eq(x.fk.n_sent, n);
	m.sm_key = htobe64(7);
	fx_send(&x, &m, sizeof(m), lid);
	ck_assert_uint_gt(x.fk.n_sent, n);
	ck_assert_uint_eq(sa_bad_key_drops(&x.sm), 4);
	fx_free(&x);
}
END_TEST

/* The answers counted by attribute and status (the metrics' source): a
 * BUSY before SUBNET UP, unknown attributes, a truncated MAD dropped, and
 * the table bounded, what does not fit counted in its last entry. */
static uint64_t answers(const struct sm *sm, uint16_t attr, uint16_t status)
{
	const struct sa_answer_count *c;
	uint64_t req, dropped, n = 0;
	size_t k = sa_answer_counts(sm, &c, &req, &dropped);

	for (size_t i = 0; i < k; i++)
		if (c[i].attr_id == attr && c[i].status == status)
			n += c[i].n;
	return n;
}

START_TEST(test_answers_counted)
{
	struct agent_fx x;
	struct sa_mad m;
	const struct sa_answer_count *c;
	uint64_t req, dropped;
	uint16_t lid;

	fx_init(&x, "fat2-small.net", false);
	lid = x.ca_lid[0];
	req_build(&x, &m, MAD_METHOD_GET_TABLE, SA_ATTR_NODE_RECORD, 0);
	fx_send(&x, &m, sizeof(m), lid);
	fx_send(&x, &m, sizeof(m), lid);
	ck_assert_uint_eq(answers(&x.sm, SA_ATTR_NODE_RECORD, MAD_STATUS_BUSY), 2);
	req_build(&x, &m, MAD_METHOD_GET, SA_ATTR_NODE_RECORD, 0);
	fx_send(&x, &m, 100, lid);			/* truncated */
	(void)sa_answer_counts(&x.sm, &c, &req, &dropped);
	ck_assert_uint_eq(req, 3);
	ck_assert_uint_eq(dropped, 1);
	/* 100 unknown attributes: 63 entries of their own, the rest in the
	 * last one */
	for (uint16_t a = 0x7000; a < 0x7064; a++) {
		req_build(&x, &m, MAD_METHOD_GET, a, 0);
		fx_send(&x, &m, sizeof(m), lid);
	}
	ck_assert_uint_eq(sa_answer_counts(&x.sm, &c, &req, &dropped),
			  SA_ANSWER_COUNTS);
	ck_assert_uint_eq(answers(&x.sm, 0x7000, MAD_STATUS_ATTR_UNSUPP), 1);
	ck_assert_uint_eq(c[SA_ANSWER_COUNTS - 1].attr_id, 0xffff);
	ck_assert_uint_eq(c[SA_ANSWER_COUNTS - 1].status, 0xffff);
	/* 1 NodeRecord/BUSY entry + 62 attributes of their own */
	ck_assert_uint_eq(c[SA_ANSWER_COUNTS - 1].n, 100 - 62);
	fx_free(&x);
}
END_TEST

START_TEST(test_malformed_answered)
{
	struct agent_fx x;
	struct sa_mad m;
	uint16_t lid;

	fx_init(&x, "fat2-small.net", true);
	lid = x.ca_lid[1];

	/* Unknown method: METHOD_UNSUPP. */
	req_build(&x, &m, 0x7f, SA_ATTR_NODE_RECORD, 0);
	fx_send(&x, &m, sizeof(m), lid);
	ck_assert_uint_eq(last_status(&x, lid), MAD_STATUS_METHOD_UNSUPP);
	/* Unknown attribute, and InformInfo with Get: ATTR_UNSUPP. */
	req_build(&x, &m, MAD_METHOD_GET, 0x7777, 0);
	fx_send(&x, &m, sizeof(m), lid);
	ck_assert_uint_eq(last_status(&x, lid), MAD_STATUS_ATTR_UNSUPP);
	req_build(&x, &m, MAD_METHOD_GET, SA_ATTR_INFORM_INFO, 0);
	fx_send(&x, &m, sizeof(m), lid);
	ck_assert_uint_eq(last_status(&x, lid), MAD_STATUS_ATTR_UNSUPP);
	/* GetMulti as an RMPP transfer of several segments: REQ_INVALID. */
	req_build(&x, &m, MAD_METHOD_GETMULTI, SA_ATTR_MULTIPATH_RECORD, 0);
	rmpp_set(&m.rmpp, RMPP_TYPE_DATA, RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST, 1, 0);
	fx_send(&x, &m, sizeof(m), lid);
	ck_assert_uint_eq(last_status(&x, lid), SA_STATUS_REQ_INVALID);
	/* A ServiceRecord Delete without the record identity. */
	req_build(&x, &m, MAD_METHOD_DELETE, SA_ATTR_SERVICE_RECORD, 0);
	fx_send(&x, &m, sizeof(m), lid);
	ck_assert_uint_eq(last_status(&x, lid), SA_STATUS_INSUF_COMPONENTS);
	/* A truncated MAD is dropped, not answered from bytes it lacks. */
	size_t before = x.fk.n_sent;
	req_build(&x, &m, MAD_METHOD_GET, SA_ATTR_NODE_RECORD, 0);
	fx_send(&x, &m, 100, lid);
	ck_assert_uint_eq(x.fk.n_sent, before);
	/* Still serving: a Get of the SM's own NodeRecord by LID. */
	req_build(&x, &m, MAD_METHOD_GET, SA_ATTR_NODE_RECORD, 1);
	((struct sa_node_record *)m.data)->lid = htobe16(lid);
	fx_send(&x, &m, sizeof(m), lid);
	ck_assert_uint_eq(last_status(&x, lid), 0);
	fx_free(&x);
}
END_TEST

/* Answers to `lid` so far: transfers begun (first RMPP DATA segments of
 * distinct TIDs, re-sends not counted), NO_RESOURCES answers. */
static bool first_segment(const struct sa_mad *m)
{
	return (m->rmpp.resptime_flags & RMPP_FLAG_ACTIVE) &&
	       m->rmpp.type == RMPP_TYPE_DATA && be32toh(m->rmpp.data1) == 1 &&
	       !m->hdr.status;
}

static void count_answers(const struct agent_fx *x, uint16_t lid, unsigned *first,
			  unsigned *nores)
{
	*first = *nores = 0;
	for (size_t i = 0; i < x->fk.n_sent; i++) {
		const struct sa_mad *m = sent(x, i);
		bool again = false;

		if (x->fk.sent[i].addr.lid != lid ||
		    !(m->hdr.method & MAD_METHOD_RESP))
			continue;
		if (be16toh(m->hdr.status) == SA_STATUS_NO_RESOURCES) {
			(*nores)++;
			continue;
		}
		if (!first_segment(m))
			continue;
		for (size_t j = 0; j < i && !again; j++)
			again = x->fk.sent[j].addr.lid == lid &&
				first_segment(sent(x, j)) &&
				sent(x, j)->hdr.tid == m->hdr.tid;
		*first += !again;
	}
}

START_TEST(test_transfer_quota_per_port)
{
	struct agent_fx x;
	struct sa_mad m;
	unsigned first, nores;

	fx_init(&x, "fat2-small.net", true);
	/* One host asks for 10 NodeRecord tables and never ACKs. */
	for (int i = 0; i < 10; i++) {
		req_build(&x, &m, MAD_METHOD_GET_TABLE, SA_ATTR_NODE_RECORD, 0);
		fx_send(&x, &m, sizeof(m), x.ca_lid[0]);
	}
	count_answers(&x, x.ca_lid[0], &first, &nores);
	ck_assert_uint_eq(first, 4);
	ck_assert_uint_eq(nores, 6);
	/* Another host is served meanwhile. */
	req_build(&x, &m, MAD_METHOD_GET_TABLE, SA_ATTR_NODE_RECORD, 0);
	fx_send(&x, &m, sizeof(m), x.ca_lid[1]);
	count_answers(&x, x.ca_lid[1], &first, &nores);
	ck_assert_uint_eq(first, 1);
	ck_assert_uint_eq(nores, 0);
	/* Once its transfers time out the first host has its slots back. */
	fx_run(&x, (TIMEOUT_MS / 1000. + 0.02) * (RETRIES + 2) * 4);
	req_build(&x, &m, MAD_METHOD_GET_TABLE, SA_ATTR_NODE_RECORD, 0);
	fx_send(&x, &m, sizeof(m), x.ca_lid[0]);
	count_answers(&x, x.ca_lid[0], &first, &nores);
	ck_assert_uint_eq(first, 5);
	ck_assert_uint_eq(nores, 6);
	fx_free(&x);
}
END_TEST

/* Answers to `lid` with MAD status `st` (not RMPP segments of tables). */
static unsigned count_status(const struct agent_fx *x, uint16_t lid, unsigned st)
{
	unsigned n = 0;

	for (size_t i = 0; i < x->fk.n_sent; i++) {
		const struct sa_mad *m = sent(x, i);

		n += x->fk.sent[i].addr.lid == lid &&
		     (m->hdr.method & MAD_METHOD_RESP) &&
		     be16toh(m->hdr.status) == st;
	}
	return n;
}

/* A PathRecord GetTable from `lid`: SLID = `slid` (0: both ends open). */
static void path_table(struct agent_fx *x, uint16_t lid, uint16_t slid)
{
	struct sa_mad m;

	req_build(x, &m, MAD_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD,
		  slid ? 1ull << 5 : 0);
	((struct sa_path_record *)m.data)->slid = htobe16(slid);
	fx_send(x, &m, sizeof(m), lid);
}

/*
 * Bounded memory: with 64 KiB of answers per port (and 64
 * transfers, so that bytes are what binds), one host that never ACKs.
 * Every pair of fat2-128 (1.25 MB) is NO_RESOURCES without a byte held
 * (counted first); its own paths (about 9 KB each) are answered until
 * its 64 KiB are taken, then BUSY; another host is served meanwhile; the
 * bytes held never pass the cap and all come back when the transfers
 * time out.
 */
START_TEST(test_answer_bytes_bounded)
{
	const size_t cap = 65536;
	unsigned first, nores, busy, again;
	size_t now, peak, each;
	struct agent_fx x;
	uint16_t a, b;

	fx_answer_bytes = cap;
	fx_transfers_per_port = 64;
	fx_init(&x, "fat2-128.net", true);
	fx_answer_bytes = 0;
	fx_transfers_per_port = 0;
	a = x.ca_lid[0];
	b = x.ca_lid[1];

	path_table(&x, a, 0);
	for (int i = 0; i < 100 && !count_status(&x, a, SA_STATUS_NO_RESOURCES); i++)
		fx_run(&x, 0.01);
	ck_assert_uint_eq(count_status(&x, a, SA_STATUS_NO_RESOURCES), 1);
	sa_answer_bytes(&x.sm, &now, &peak);
	ck_assert_uint_eq(now, 0);
	ck_assert_uint_eq(peak, 0);		/* counted, never stored */

	for (int i = 0; i < 20; i++)
		path_table(&x, a, a);
	count_answers(&x, a, &first, &nores);
	busy = count_status(&x, a, MAD_STATUS_BUSY);
	sa_answer_bytes(&x.sm, &now, &peak);
	ck_assert_uint_ge(first, 2);
	ck_assert_uint_eq(first + busy, 20);
	ck_assert_uint_eq(nores, 1);
	each = now / first;
	ck_assert_uint_eq(each % 64, 0);	/* PathRecords at their stride */
	ck_assert_uint_le(now, cap);
	ck_assert_uint_le(peak, cap);
	ck_assert_uint_gt(now + each, cap);	/* the next would not fit */

	/* Another port has its own bytes. */
	path_table(&x, b, b);
	count_answers(&x, b, &first, &nores);
	ck_assert_uint_eq(first, 1);
	ck_assert_uint_eq(count_status(&x, b, MAD_STATUS_BUSY), 0);

	/* The transfers give up: every byte is back, a is served again. */
	fx_run(&x, (TIMEOUT_MS / 1000. + 0.02) * (RETRIES + 2) * 4);
	sa_answer_bytes(&x.sm, &now, &peak);
	ck_assert_uint_eq(now, 0);
	ck_assert_uint_le(peak, 2 * cap);	/* a's and b's, each within its cap */
	count_answers(&x, a, &first, &nores);
	path_table(&x, a, a);
	count_answers(&x, a, &again, &nores);
	ck_assert_uint_eq(again, first + 1);
	fx_free(&x);
}
END_TEST

/* InformInfo Set from `lid`: every generic trap to its QP 1. */
static void subscribe_all(struct agent_fx *x, uint16_t lid)
{
	struct sa_mad m;
	struct sa_inform_info *ii = (struct sa_inform_info *)m.data;

	req_build(x, &m, MAD_METHOD_SET, SA_ATTR_INFORM_INFO, 0);
	ii->lid_range_begin = htobe16(0xffff);
	ii->is_generic = 1;
	ii->subscribe = 1;
	ii->type = htobe16(0xffff);
	ii->trap_num = htobe16(0xffff);
	ii->qpn_resp_time = htobe32(1u << 8);
	fx_send(x, &m, sizeof(m), lid);
	ck_assert_uint_eq(last_status(x, lid), 0);
}

static void notice(struct smp_notice *n, unsigned trap, uint16_t lid)
{
	memset(n, 0, sizeof(*n));
	n->generic_type = 0x80 | 1;		/* generic, urgent */
	n->trap_num = htobe16((uint16_t)trap);
	n->issuer_lid = htobe16(lid);
}

/* Reports sent to `lid`: all sends, and distinct TIDs (Reports, not
 * re-sends). */
static void count_reports(const struct agent_fx *x, uint16_t lid, unsigned *sends,
			  unsigned *distinct)
{
	*sends = *distinct = 0;
	for (size_t i = 0; i < x->fk.n_sent; i++) {
		const struct sa_mad *m = sent(x, i);
		bool seen = false;

		if (x->fk.sent[i].addr.lid != lid ||
		    m->hdr.method != MAD_METHOD_REPORT)
			continue;
		(*sends)++;
		for (size_t j = 0; j < i && !seen; j++)
			seen = sent(x, j)->hdr.method == MAD_METHOD_REPORT &&
			       sent(x, j)->hdr.tid == m->hdr.tid;
		*distinct += !seen;
	}
}

START_TEST(test_reports_coalesced_and_bounded)
{
	struct agent_fx x;
	struct smp_notice n;
	unsigned sends, distinct;
	uint16_t sub;

	fx_init(&x, "fat2-small.net", true);
	sub = x.ca_lid[2];
	subscribe_all(&x, sub);

	/* 20 copies of one notice: one Report. */
	notice(&n, 128, x.ca_lid[3]);
	for (int i = 0; i < 20; i++)
		sa_report_notice(&x.sm, &n, x.ca_lid[3]);
	count_reports(&x, sub, &sends, &distinct);
	ck_assert_uint_eq(distinct, 1);
	/* 20 different notices: the one in flight plus 4 waiting; the old
	 * agent queued one transaction for each. */
	for (unsigned i = 0; i < 20; i++) {
		notice(&n, 128, (uint16_t)(100 + i));
		sa_report_notice(&x.sm, &n, (uint16_t)(100 + i));
	}
	count_reports(&x, sub, &sends, &distinct);
	ck_assert_uint_eq(distinct, 1);		/* still one at a time */

	/* The subscriber never answers: after 3 Reports without ReportResp
	 * (each re-sent RETRIES times) its subscription is gone. */
	fx_run(&x, 1.0);
	count_reports(&x, sub, &sends, &distinct);
	ck_assert_uint_eq(distinct, 3);
	ck_assert_uint_eq(sends, 3 * (RETRIES + 1));
	notice(&n, 128, 999);
	sa_report_notice(&x.sm, &n, 999);
	fx_run(&x, 0.1);
	count_reports(&x, sub, &sends, &distinct);
	ck_assert_uint_eq(distinct, 3);
	fx_free(&x);
}
END_TEST

/* Answer Report `i` with a ReportResp from the subscriber's LID. */
static void report_resp(struct agent_fx *x, size_t i)
{
	struct sa_mad r = *sent(x, i);

	r.hdr.method = MAD_METHOD_REPORT | MAD_METHOD_RESP;
	fx_send(x, &r, sizeof(r), x->fk.sent[i].addr.lid);
}

START_TEST(test_reports_answered_in_order)
{
	struct agent_fx x;
	struct smp_notice n;
	unsigned sends, distinct;
	uint16_t sub;

	fx_init(&x, "fat2-small.net", true);
	sub = x.ca_lid[2];
	subscribe_all(&x, sub);
	for (unsigned i = 0; i < 3; i++) {
		notice(&n, 128, (uint16_t)(200 + i));
		sa_report_notice(&x.sm, &n, (uint16_t)(200 + i));
	}
	/* Each ReportResp lets the next one go, in the order of the traps. */
	for (unsigned i = 0; i < 3; i++) {
		size_t last = x.fk.n_sent - 1;
		const struct smp_notice *got =
			(const struct smp_notice *)sent(&x, last)->data;

		ck_assert_uint_eq(sent(&x, last)->hdr.method, MAD_METHOD_REPORT);
		ck_assert_uint_eq(be16toh(got->issuer_lid), 200 + i);
		report_resp(&x, last);
		count_reports(&x, sub, &sends, &distinct);
		ck_assert_uint_eq(distinct, i + (i < 2 ? 2 : 1));
	}
	/* A subscriber that answers keeps its subscription. */
	fx_run(&x, 0.3);
	notice(&n, 128, 300);
	sa_report_notice(&x.sm, &n, 300);
	count_reports(&x, sub, &sends, &distinct);
	ck_assert_uint_eq(distinct, 4);
	fx_free(&x);
}
END_TEST

/* Two ports: each owns its ServiceRecord; the other cannot take it. */
START_TEST(test_service_owner_by_lid)
{
	struct agent_fx x;
	struct sa_mad m;
	struct sa_service_record *sr = (struct sa_service_record *)m.data;
	uint64_t prefix = htobe64(0xfe80000000000000ull), guid = 0;

	fx_init(&x, "fat2-small.net", true);
	for (size_t i = 0; i < x.sm.fabric.n_nodes; i++)
		if (x.sm.fabric.nodes[i].type == NODE_TYPE_CA &&
		    x.sm.fabric.nodes[i].ports[1].lid == x.ca_lid[0])
			guid = htobe64(x.sm.fabric.nodes[i].ports[1].guid);
	ck_assert(guid != 0);
	req_build(&x, &m, MAD_METHOD_SET, SA_ATTR_SERVICE_RECORD, 0x7);
	sr->service_id = htobe64(0x42);
	memcpy(sr->service_gid, &prefix, 8);
	memcpy(sr->service_gid + 8, &guid, 8);
	sr->service_pkey = htobe16(0xffff);
	/* From another port: refused; from the port itself: registered. */
	fx_send(&x, &m, sizeof(m), x.ca_lid[1]);
	ck_assert_uint_eq(last_status(&x, x.ca_lid[1]), SA_STATUS_REQ_INVALID);
	fx_send(&x, &m, sizeof(m), x.ca_lid[0]);
	ck_assert_uint_eq(last_status(&x, x.ca_lid[0]), 0);
	/* Delete: refused from the other port, done by the owner. */
	m.hdr.method = MAD_METHOD_DELETE;
	fx_send(&x, &m, sizeof(m), x.ca_lid[1]);
	ck_assert_uint_eq(last_status(&x, x.ca_lid[1]), SA_STATUS_REQ_INVALID);
	fx_send(&x, &m, sizeof(m), x.ca_lid[0]);
	ck_assert_uint_eq(last_status(&x, x.ca_lid[0]), 0);
	fx_send(&x, &m, sizeof(m), x.ca_lid[0]);
	ck_assert_uint_eq(last_status(&x, x.ca_lid[0]), SA_STATUS_NO_RECORDS);
	fx_free(&x);
}
END_TEST

/* A heavy sweep without the subscriber's port: its subscription goes. */
START_TEST(test_subscription_pruned_when_port_leaves)
{
	struct agent_fx x;
	struct smp_notice n;
	unsigned sends, distinct;
	uint16_t sub;

	fx_init(&x, "fat2-small.net", true);
	sub = x.ca_lid[2];
	subscribe_all(&x, sub);
	sa_fabric_changed(&x.sm);		/* same model: kept */
	notice(&n, 128, 7);
	sa_report_notice(&x.sm, &n, 7);
	count_reports(&x, sub, &sends, &distinct);
	ck_assert_uint_eq(distinct, 1);
	report_resp(&x, x.fk.n_sent - 1);

	/* The port's LID is no longer in the model. */
	for (size_t i = 0; i < x.sm.fabric.n_nodes; i++)
		if (x.sm.fabric.nodes[i].type == NODE_TYPE_CA &&
		    x.sm.fabric.nodes[i].ports[1].lid == sub)
			x.sm.fabric.nodes[i].ports[1].lid = 0;
	sa_fabric_changed(&x.sm);
	notice(&n, 128, 8);
	sa_report_notice(&x.sm, &n, 8);
	count_reports(&x, sub, &sends, &distinct);
	ck_assert_uint_eq(distinct, 1);
	fx_free(&x);
}
END_TEST

static Suite *sa_agent_suite(void)
{
	Suite *s = suite_create("sa_agent");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_busy_before_subnet_up);
	tcase_add_test(tc, test_sa_key_checked);
	tcase_add_test(tc, test_malformed_answered);
	tcase_add_test(tc, test_answers_counted);
	tcase_add_test(tc, test_transfer_quota_per_port);
	tcase_add_test(tc, test_answer_bytes_bounded);
	tcase_add_test(tc, test_reports_coalesced_and_bounded);
	tcase_add_test(tc, test_reports_answered_in_order);
	tcase_add_test(tc, test_service_owner_by_lid);
	tcase_add_test(tc, test_subscription_pruned_when_port_leaves);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sa_agent_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
