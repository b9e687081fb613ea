/*
 * sa.c - the Subnet Administration agent (see sa.h).
 *
 * Every SA request arrives here as an unsolicited class 0x03 MAD.  It is
 * checked (method, attribute, component mask), handed to the record
 * generator of its attribute (sm/sa/records.c) together with a view of
 * the subnet as of the last SUBNET UP, and answered:
 *
 *   Get         exactly one record, else NO_RECORDS / TOO_MANY_RECORDS
 *   GetTable    every matching record, through RMPP (mad/rmpp.c), like
 *               OpenSM even when they fit one MAD
 *   GetMulti    MultiPathRecord (15.2.5.20): a request that is itself an
 *               RMPP transfer (one segment supported), answered like
 *               GetTable with PathRecords
 *
 * Anything else is answered with the status the spec gives it and never
 * crashes the SM: every request is untrusted.
 *
 * Bounded work (sa.h): a request is checked first (sm/sa/request.c), then
 * its generator runs with the request's work budget, one slice at a time.
 * Most requests end within their first slice, run at once.  One that does
 * not becomes a job: it keeps its copy of the MAD, its query, its table so
 * far and its cursor, and the loop's idle watcher runs one slice of one
 * job at a time, round robin, whenever no MAD or timer is waiting.  At
 * most SA_MAX_JOBS jobs exist at once and SA_MAX_JOBS_PER_PORT per
 * requesting port (its base LID, so that the LIDs of an LMC range count
 * as one requester); a request that finds no slot is answered BUSY before
 * any work is done.  A job whose model was replaced by a sweep meanwhile
 * (struct fabric.gen) starts again from nothing on the new model, with a
 * new budget, at most SA_JOB_RESTARTS times, so that every answer comes
 * from one model; after that, or when the SM left MASTER, it is answered
 * BUSY and the client asks again.
 *
 * Bounded memory: the bytes an answer holds (a job's table, then the
 * payload of its RMPP transfer until the client has acknowledged it or the
 * retries give up) count against its requesting port, at most
 * answer_bytes (--sa-answer-bytes, 8 MiB), and against all ports together,
 * at most SA_ANSWER_BYTES_ALL times that.  A table never grows beyond what
 * is left to its port (struct sa_table.max_bytes, set before each slice);
 * an answer that would need more than the port may hold at all is
 * NO_RESOURCES, one that would fit once the port's other answers are gone
 * is BUSY.  The table is built at the wire stride and handed to RMPP as
 * its payload: one copy of the records, never three.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mad/rmpp.h"
#include "sm/sa/sa.h"
#include "model/index.h"
#include "sm/sa/mcmember.h"
#include "sm/ha/sync.h"
#include "sm/sa/service.h"
#include "sm/sm.h"
#include "sm/snapshot.h"

#define SA_QKEY			0x80010000u

/*
 * RMPP answers in flight: at most max_transfers at once, and at most
 * transfers_per_port to one requesting port, so that a host that never
 * ACKs (each of its transfers lives until the RMPP timeouts or its
 * lifetime give up, mad/rmpp.h) cannot take every slot.  When the pool
 * is full, a requester holding less than its fair share (the pool over
 * the requesters holding transfers, itself included) takes the oldest
 * transfer of the requester holding the most, if that one holds more
 * than its share: the transfer is aborted (RMPP ABORT, ResX).  Else, or
 * over the per-port quota: NO_RESOURCES, as for a full table.
 * (Defaults: SA_DEF_MAX_TRANSFERS, SA_DEF_TRANSFERS_PER_PORT in sa.h.)
 */

/*
 * Reports (13.4.8.2): one in flight per subscriber address (LID, QPN),
 * re-sent by the engine until ReportResp; up to report_queue more wait
 * behind it; a notice equal to one in flight or waiting is coalesced with
 * it, one over the queue is dropped (both counted).  After
 * report_failures Reports in a row that got no ReportResp, the address's
 * subscriptions are removed: it is gone or not listening (OpenSM keeps
 * sending to it, one error line per Report).  Defaults in sa.h.
 */
#define SA_NOTICE_LEN			80	/* Notice (13.4.8.2) + IssuerGID */

/* While refusals or drops happen, an "SA limits:" line at most this often
 * (s); sa_stop() logs it always. */
#define SA_STATS_PERIOD			300.

/* Bytes of answers (tables being built, RMPP payloads) one requesting
 * port may hold (SA_DEF_ANSWER_BYTES, sa.h), and all ports together:
 * SA_ANSWER_BYTES_ALL x that. */
#define SA_ANSWER_BYTES_ALL		8

/* Restarts of a job on a newer model before it is answered BUSY. */
#define SA_JOB_RESTARTS		2

/* A request answered in slices (see the top of this file). */
struct sa_job {
	struct sa_job *next;
	struct sa_mad req;		/* the request, headers and template */
	struct mad_addr from;
	const struct sa_attr *a;
	struct sa_query q;		/* q.tmpl points into req */
	struct sa_table t;		/* the records so far */
	struct sa_work work;		/* budget spent, cursor */
	uint64_t gen;			/* the model it is answered from */
	unsigned restarts;		/* on a newer model, so far */
	uint16_t owner;			/* requesting port's base LID */
	uint64_t who;			/* requester_key(): whose bytes */
};

struct transfer {
	struct transfer *next;
	struct sa_agent *sa;
	struct rmpp_sender *sender;
	uint64_t who;			/* requester: port GUID, or LID */
	size_t bytes;			/* its payload */
};

struct report_dest {
	struct report_dest *next;
	struct sa_agent *sa;
	struct mad_addr to;
	bool busy;			/* a Report in flight */
	bool overflow_logged;
	unsigned fails;			/* Reports in a row without ReportResp */
	uint8_t in_flight[SA_NOTICE_LEN];
	unsigned head, n_queued;	/* ring of report_queue notices */
	uint8_t queue[][SA_NOTICE_LEN];
};

struct sa_agent {
	struct sm *sm;
	struct transfer *transfers;
	unsigned n_transfers;
	unsigned max_transfers, transfers_per_port;
	size_t answer_bytes, answer_bytes_all;	/* per port, all ports */
	struct report_dest *dests;
	unsigned report_queue, report_failures;
	struct sa_state *state;		/* services, subscriptions */
	ev_timer expire;		/* service leases, limits line */
	uint64_t logged_events;		/* limit_events() at the last line */
	ev_tstamp logged_at;
	struct sa_job *jobs, **jobs_tail;	/* round robin, FIFO */
	unsigned n_jobs;
	ev_idle slices;			/* runs the jobs' slices */
	struct {
		uint64_t requests, answered, errors, rmpp, reports;
		uint64_t xfer_port_quota, xfer_full, xfer_preempted;
		uint64_t reports_answered, reports_failed;
		uint64_t reports_coalesced, reports_dropped, subscribers_dropped;
		uint64_t mem_too_big, mem_busy;	/* answers over the byte caps */
		size_t mem_peak;		/* most bytes held at once */
	} stats;
	struct {
		uint64_t jobs, slices, busy, exhausted, stale, restarted;
		double longest;		/* s, the longest slice */
	} work_stats;
	/* answers by (attribute, status); the last slot takes what does
	 * not fit */
	struct sa_answer_count counts[SA_ANSWER_COUNTS];
	unsigned n_counts;
	uint64_t requests_dropped;	/* too short or malformed: no answer */
	uint64_t requests_bad_key;	/* a non-zero SM_Key not sa_key */
};

/* One answer of `status` to a request for attribute `attr_id` (wire
 * order): a short linear search, the table holds a few dozen pairs. */
static void count_answer(struct sa_agent *sa, __be16 attr_id, uint16_t status)
{
	uint16_t attr = be16toh(attr_id);
	unsigned i;

	for (i = 0; i < sa->n_counts; i++)
		if (sa->counts[i].attr_id == attr &&
		    sa->counts[i].status == status)
			break;
	if (i == sa->n_counts) {
		if (sa->n_counts == SA_ANSWER_COUNTS - 1) {
			i = SA_ANSWER_COUNTS - 1;
			attr = 0xffff;
			status = 0xffff;
		} else {
			sa->n_counts++;
		}
		sa->counts[i].attr_id = attr;
		sa->counts[i].status = status;
	}
	sa->counts[i].n++;
}

size_t sa_answer_counts(const struct sm *sm, const struct sa_answer_count **out,
			uint64_t *requests, uint64_t *dropped)
{
	const struct sa_agent *sa = sm->sa;

	*out = NULL;
	*requests = *dropped = 0;
	if (!sa)
		return 0;
	*out = sa->counts;
	*requests = sa->stats.requests;
	*dropped = sa->requests_dropped;
	return sa->counts[SA_ANSWER_COUNTS - 1].n ? SA_ANSWER_COUNTS
						   : sa->n_counts;
}

uint64_t sa_bad_key_drops(const struct sm *sm)
{
	return sm->sa ? sm->sa->requests_bad_key : 0;
}

void sa_view_of(const struct sm *sm, struct sa_view *v)
{
	struct sm_snapshot snap;

	sm_snapshot_of(sm, &snap);
	memset(v, 0, sizeof(*v));
	v->f = snap.model;
	v->routes = snap.routes;
	v->sm_port_guid = sm->port_guid;
	v->sm_lid = snap.own_lid;
	v->sm_priority = sm->cfg.sm_priority;
	v->sm_state = (uint8_t)sm->state;
	v->act_count = sm->act_count;
	v->subnet_prefix = sm->cfg.subnet_prefix;
	v->subnet_timeout = sm->cfg.subnet_timeout;
	v->packet_life_time = sm->cfg.packet_life_time;
	v->gen = snap.gen;
	v->sl2vl = snap.sl2vl;
	v->qos = sm_qos_policy(sm, &v->qos_members);
	v->part_sl = sm_part_sl(sm);
	v->qos_on = sm->cfg.qos;
	v->mcast_off = sm->cfg.disable_multicast;
	v->mfttop_off = !sm->cfg.use_mfttop;
	v->no_join_check = !sm->cfg.mcgroup_join_validation;
	v->no_ipoib_check = !sm->cfg.ipoib_mcgroup_creation_validation;
	v->rates_original = sm->cfg.use_original_extended_sa_rates_only;
}

static uint8_t response_method(uint8_t method)
{
	switch (method) {
	case MAD_METHOD_GET:
	case MAD_METHOD_SET:
		return MAD_METHOD_GET | MAD_METHOD_RESP;
	default:
		return method | MAD_METHOD_RESP;
	}
}

/* GID of the port with `lid` (subnet prefix + port GUID), zero if none. */
static void gid_of_lid(const struct sm *sm, uint16_t lid, uint8_t gid[16])
{
	struct sa_view v;
	struct fab_ref r;
	uint64_t prefix, guid;

	memset(gid, 0, 16);
	sa_view_of(sm, &v);
	if (midx_lid_lookup(v.f, lid, &r) != 1)
		return;
	prefix = htobe64(v.subnet_prefix);
	guid = htobe64(v.f->nodes[r.node].ports[r.port].guid);
	memcpy(gid, &prefix, 8);
	memcpy(gid + 8, &guid, 8);
}

static struct mad_addr reply_addr(const struct mad_addr *from)
{
	return (struct mad_addr){ .lid = from->lid, .qpn = from->qpn,
				  .qkey = SA_QKEY, .sl = from->sl };
}

/* A one-MAD answer: the request's headers, our status, optional data. */
static void answer(struct sa_agent *sa, const struct sa_mad *req,
		   const struct mad_addr *from, uint16_t status,
		   const void *rec, size_t rec_size)
{
	struct sa_mad resp = *req;
	struct mad_addr to = reply_addr(from);

	resp.hdr.method = response_method(req->hdr.method);
	resp.hdr.status = htobe16(status);
	memset(&resp.rmpp, 0, sizeof(resp.rmpp));
	/*
	 * AttributeOffset gives the record stride of a table (15.2.1.1); an
	 * error answer carries no record and says 0, as OpenSM's do.
	 */
	resp.attr_offset = status ? 0 :
			   htobe16((uint16_t)sa_record_stride(rec_size));
	memset(resp.data, 0, sizeof(resp.data));
	if (rec && rec_size <= sizeof(resp.data))
		memcpy(resp.data, rec, rec_size);
	if (status)
		sa->stats.errors++;
	else
		sa->stats.answered++;
	count_answer(sa, req->hdr.attr_id, status);
	mad_engine_send_oneway(sa->sm->engine, &resp, sizeof(resp), &to);
}

static void transfer_done(void *arg, int status)
{
	struct transfer *t = arg;
	struct sa_agent *sa = t->sa;

	for (struct transfer **pp = &sa->transfers; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	sa->n_transfers--;
	if (status)
		log_debug_rc(status, "SA: RMPP transfer ended");
	rmpp_sender_free(t->sender);
	free(t);
}

/*
 * Who a request counts against: the requester's port GUID (all the LIDs
 * of an LMC range are one port), or its LID when the model has no port
 * there (top bit set, so it cannot equal a GUID of the model).
 */
static uint64_t requester_key(const struct sm *sm, uint16_t lid)
{
	uint8_t gid[16];
	uint64_t guid;

	gid_of_lid(sm, lid, gid);
	memcpy(&guid, gid + 8, 8);
	guid = be64toh(guid);
	return guid ? guid : 1ull << 63 | lid;
}

/*
 * Bytes held by answers: of requester `who` (and, in *all, of everyone),
 * jobs' tables and transfers' payloads, leaving out job `except`.
 */
static size_t bytes_held(const struct sa_agent *sa, uint64_t who,
			 const struct sa_job *except, size_t *all)
{
	size_t mine = 0, sum = 0, b;

	for (const struct sa_job *j = sa->jobs; j; j = j->next) {
		if (j == except)
			continue;
		b = sa_table_bytes(&j->t);
		sum += b;
		mine += j->who == who ? b : 0;
	}
	for (const struct transfer *t = sa->transfers; t; t = t->next) {
		sum += t->bytes;
		mine += t->who == who ? t->bytes : 0;
	}
	*all = sum;
	return mine;
}

/* Note the bytes held now, plus `extra` not yet in any list. */
static void note_peak(struct sa_agent *sa, size_t extra)
{
	size_t all;

	bytes_held(sa, 0, NULL, &all);
	if (all + extra > sa->stats.mem_peak)
		sa->stats.mem_peak = all + extra;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The pool is full and `who` holds `mine` transfers: abort the oldest
 * transfer of the requester holding the most when that one holds more
 * than its fair share and `who` less.  Runs only when the pool is full:
 * one sort of the holders.  True when a slot was freed.
 */
static bool preempt(struct sa_agent *sa, uint64_t who, unsigned mine)
{
	uint64_t *v = malloc(sa->n_transfers * sizeof(*v)), top = 0;
	unsigned holders = mine ? 0 : 1, most = 0, share;
	size_t n = 0;
	struct transfer *victim = NULL;

	if (!v)
		return false;
	for (const struct transfer *t = sa->transfers; t; t = t->next)
		v[n++] = t->who;
	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i; j < n && v[j] == v[i]; j++)
			;
		holders++;
		if (j - i > most) {
			most = (unsigned)(j - i);
			top = v[i];
		}
	}
	free(v);
	share = sa->max_transfers / holders;
	if (!share)
		share = 1;
	if (mine >= share || most <= share || top == who)
		return false;
	/* the list is newest first: the last of top's is its oldest */
	for (struct transfer *t = sa->transfers; t; t = t->next)
		if (t->who == top)
			victim = t;
	log_debug("SA: RMPP transfer of 0x%016" PRIx64 " (%u of %u slots) "
		  "aborted for 0x%016" PRIx64 " (fair share %u)", top, most,
		  sa->max_transfers, who, share);
	rmpp_sender_cancel(victim->sender, RMPP_STATUS_RESX);	/* frees it */
	return true;
}

/* GetTable answer: records padded to the stride, sent through RMPP. */
static void answer_table(struct sa_agent *sa, const struct sa_mad *req,
			 const struct mad_addr *from, struct sa_table *t)
{
	struct sm *sm = sa->sm;
	unsigned stride = sa_record_stride(t->rec_size) * 8;
	size_t len = t->count * stride;
	struct mad_addr to = reply_addr(from);
	struct sa_mad hdr = *req;
	struct transfer *tr;
	uint8_t *payload, *payload2;
	int rc;

	hdr.hdr.method = response_method(req->hdr.method);
	hdr.hdr.status = 0;
	hdr.attr_offset = htobe16((uint16_t)(stride / 8));
	if (len <= RMPP_SEG_DATA) {
		/* One segment: no acknowledgement round to wait for. */
		size_t es = t->stride ? t->stride : t->rec_size;

		memset(hdr.data, 0, sizeof(hdr.data));
		for (size_t i = 0; i < t->count; i++)
			memcpy(hdr.data + i * stride, t->buf + i * es,
			       t->rec_size);
		rmpp_set_single(&hdr, len);
		sa->stats.answered++;
		count_answer(sa, req->hdr.attr_id, 0);
		/* Only the headers and the records, as OpenSM sends them: a
		 * client without kernel RMPP (umad2sim) counts records from
		 * the length it receives. */
		mad_engine_send_oneway(sm->engine, &hdr,
				       offsetof(struct sa_mad, data) + len, &to);
		return;
	}
	uint64_t who = requester_key(sm, from->lid);
	unsigned mine = 0;

	for (const struct transfer *o = sa->transfers; o; o = o->next)
		mine += o->who == who;
	if (sa->n_transfers >= sa->max_transfers &&
	    mine < sa->transfers_per_port && preempt(sa, who, mine))
		sa->stats.xfer_preempted++;
	if (sa->n_transfers >= sa->max_transfers ||
	    mine >= sa->transfers_per_port) {
		if (mine >= sa->transfers_per_port)
			sa->stats.xfer_port_quota++;
		else
			sa->stats.xfer_full++;
		answer(sa, req, from, SA_STATUS_NO_RESOURCES, NULL, t->rec_size);
		return;
	}
	if (!(tr = calloc(1, sizeof(*tr)))) {
		answer(sa, req, from, SA_STATUS_NO_RESOURCES, NULL, t->rec_size);
		return;
	}
	if (t->stride == stride) {
		/* The table is the payload: take it, its unused tail given
		 * back (a shrinking realloc does not move it). */
		payload = t->buf;
		t->buf = NULL;
		t->cap = 0;
		if (len && (payload2 = realloc(payload, len)))
			payload = payload2;
	} else {
		/* A table of records at their own size (a caller that did
		 * not set the stride): one strided copy. */
		if (!(payload = calloc(1, len ? len : 1))) {
			free(tr);
			answer(sa, req, from, SA_STATUS_NO_RESOURCES, NULL,
			       t->rec_size);
			return;
		}
		for (size_t i = 0; i < t->count; i++)
			memcpy(payload + i * stride, t->buf + i * t->rec_size,
			       t->rec_size);
	}
	tr->sa = sa;
	tr->who = who;
	tr->bytes = len;
	note_peak(sa, len);
	/* rmpp_send takes the payload, also when it fails. */
	rc = rmpp_send(&tr->sender, sm->loop, sm->engine, &hdr, payload, len,
		       &to, sm->cfg.transaction_timeout,
		       sm->cfg.transaction_retries, transfer_done, tr);
	if (rc < 0) {
		free(tr);
		answer(sa, req, from, SA_STATUS_NO_RESOURCES, NULL, t->rec_size);
		return;
	}
	tr->next = sa->transfers;
	sa->transfers = tr;
	sa->n_transfers++;
	sa->stats.answered++;
	sa->stats.rmpp++;
	count_answer(sa, req->hdr.attr_id, 0);
}

static void on_unmatched(void *arg, const void *mad, size_t len,
			 const struct mad_addr *from);

/* Answer a request once its records are all there (or it failed: rc). */
static void finish(struct sa_agent *sa, const struct sa_mad *req,
		   const struct mad_addr *from, const struct sa_attr *a,
		   uint8_t method, struct sa_table *t, int rc)
{
	if (rc == -ENOBUFS) {
		/* Over the bytes its port may hold: for good when the answer
		 * alone needs more, else until the port's others are gone. */
		bool never = t->wanted > sa->answer_bytes ||
			     t->wanted > sa->answer_bytes_all;

		if (never)
			sa->stats.mem_too_big++;
		else
			sa->stats.mem_busy++;
		answer(sa, req, from, never ? SA_STATUS_NO_RESOURCES :
		       MAD_STATUS_BUSY, NULL, a->rec_size);
	} else if (rc < 0) {
		uint16_t st = rc == -ENOMEM ? SA_STATUS_NO_RESOURCES
					    : (uint16_t)-rc;

		if (rc == -SA_STATUS_NO_RESOURCES)
			sa->work_stats.exhausted++;
		answer(sa, req, from, st, NULL, a->rec_size);
	} else if (method == MAD_METHOD_GET_TABLE) {
		answer_table(sa, req, from, t);
	} else if (method == MAD_METHOD_GETMULTI) {
		/* GetMultiResp carries PathRecords (15.2.5.20); OpenSM names
		 * them so in AttributeID too. */
		struct sa_mad resp_hdr = *req;

		resp_hdr.hdr.attr_id = htobe16(SA_ATTR_PATH_RECORD);
		answer_table(sa, &resp_hdr, from, t);
	} else if (t->count == 0) {
		answer(sa, req, from, SA_STATUS_NO_RECORDS, NULL, a->rec_size);
	} else if (t->count > 1 && method != MAD_METHOD_DELETE) {
		answer(sa, req, from, SA_STATUS_TOO_MANY_RECORDS, NULL, a->rec_size);
	} else {
		answer(sa, req, from, 0, t->buf, a->rec_size);
	}
}

/* The requesting port: the base LID of the end port that owns `lid`. */
static uint16_t requester_of(const struct sm *sm, uint16_t lid)
{
	struct sa_view v;
	struct fab_ref r;

	sa_view_of(sm, &v);
	if (midx_lid_lookup(v.f, lid, &r) != 1)
		return lid;
	return v.f->nodes[r.node].ports[r.port].lid;
}

static unsigned jobs_of(const struct sa_agent *sa, uint16_t owner)
{
	unsigned n = 0;

	for (const struct sa_job *j = sa->jobs; j; j = j->next)
		n += j->owner == owner;
	return n;
}

/* One slice of a job's generator: 0/<0 done (rc), SA_MORE. */
static int job_slice(struct sa_agent *sa, struct sa_job *j)
{
	struct sa_view v;
	ev_tstamp t0 = ev_time(), dt;
	size_t all, mine = bytes_held(sa, j->who, j, &all);
	int rc;

	sa_view_of(sa->sm, &v);
	/* What its port and everyone may still hold; 1: nothing more. */
	j->t.max_bytes = 1;
	if (mine < sa->answer_bytes && all < sa->answer_bytes_all) {
		size_t left = sa->answer_bytes - mine;

		if (sa->answer_bytes_all - all < left)
			left = sa->answer_bytes_all - all;
		j->t.max_bytes = left > 1 ? left : 1;
	}
	j->work.slice_end = j->work.used + SA_SLICE_UNITS;
	sa->work_stats.slices++;
	rc = j->a->gen(&v, &j->q, &j->t);
	note_peak(sa, sa_table_bytes(&j->t));
	dt = ev_time() - t0;
	if (dt > sa->work_stats.longest)
		sa->work_stats.longest = dt;
	return rc;
}

static void job_free(struct sa_job *j)
{
	free(j->t.buf);
	free(j);
}

/*
 * A sweep published another model while the job was being answered: its
 * records so far and its cursor belong to the old one.  Start over on the
 * new model with the whole budget again (restarts are bounded).
 */
static void job_restart(struct sa_agent *sa, struct sa_job *j)
{
	uint64_t budget = j->work.budget;

	free(j->t.buf);
	j->t.buf = NULL;
	j->t.count = j->t.cap = j->t.wanted = 0;
	j->t.count_only = false;
	memset(&j->work, 0, sizeof(j->work));
	j->work.budget = budget;
	j->gen = sa->sm->fabric.gen;
	j->restarts++;
	sa->work_stats.restarted++;
}

/*
 * The idle watcher: one slice of the job at the head of the list, which
 * then goes to the tail (or is answered).  libev runs idle watchers only
 * when no other event is pending, so every MAD that arrives meanwhile is
 * handled between two slices.
 */
static void on_slice(struct ev_loop *loop, ev_idle *w, int revents)
{
	struct sa_agent *sa = w->data;
	struct sm *sm = sa->sm;
	struct sa_job *j = sa->jobs;
	int rc;

	(void)revents;
	if (!j) {
		ev_idle_stop(loop, w);
		return;
	}
	sa->jobs = j->next;
	if (!sa->jobs)
		sa->jobs_tail = &sa->jobs;
	j->next = NULL;
	if (j->gen != sm->fabric.gen && j->restarts < SA_JOB_RESTARTS &&
	    sm->state == SM_MASTER && sm->subnet_up)
		job_restart(sa, j);
	if (j->gen != sm->fabric.gen || sm->state != SM_MASTER ||
	    !sm->subnet_up) {
		/* The model keeps changing, or we are no longer master:
		 * ask again later. */
		sa->work_stats.stale++;
		answer(sa, &j->req, &j->from, MAD_STATUS_BUSY, NULL,
		       j->a->rec_size);
		rc = 0;
	} else if ((rc = job_slice(sa, j)) == SA_MORE) {
		*sa->jobs_tail = j;
		sa->jobs_tail = &j->next;
		return;
	} else {
		finish(sa, &j->req, &j->from, j->a, j->q.method, &j->t, rc);
	}
	sa->n_jobs--;
	job_free(j);
	if (!sa->jobs)
		ev_idle_stop(loop, w);
}

/*
 * A request the model answers: its first slice now, the rest as a job.
 * BUSY without any work when no job slot is free for its port.
 */
static void run_generator(struct sa_agent *sa, const struct sa_mad *req,
			  const struct mad_addr *from, const struct sa_attr *a,
			  const struct sa_query *q)
{
	struct sm *sm = sa->sm;
	uint16_t owner = requester_of(sm, from->lid);
	struct sa_job *j;
	int rc;

	if (sa->n_jobs >= SM_LIMIT(sm->cfg.sa_max_jobs, SA_MAX_JOBS) ||
	    jobs_of(sa, owner) >= SM_LIMIT(sm->cfg.sa_jobs_per_port,
					   SA_MAX_JOBS_PER_PORT)) {
		sa->work_stats.busy++;
		answer(sa, req, from, MAD_STATUS_BUSY, NULL, a->rec_size);
		return;
	}
	if (!(j = calloc(1, sizeof(*j)))) {
		answer(sa, req, from, SA_STATUS_NO_RESOURCES, NULL, a->rec_size);
		return;
	}
	j->req = *req;
	j->from = *from;
	j->a = a;
	j->q = *q;
	j->q.tmpl = j->req.data;
	j->q.work = &j->work;
	j->t.rec_size = a->rec_size;
	j->t.stride = sa_record_stride(a->rec_size) * 8;
	j->t.max_ever = sa->answer_bytes < sa->answer_bytes_all ?
			sa->answer_bytes : sa->answer_bytes_all;
	j->who = requester_key(sm, from->lid);
	j->work.budget = sm->cfg.sa_work_budget ? sm->cfg.sa_work_budget
						: SA_WORK_BUDGET_DEFAULT;
	j->gen = sm->fabric.gen;
	j->owner = owner;
	if ((rc = job_slice(sa, j)) != SA_MORE) {
		finish(sa, req, from, a, q->method, &j->t, rc);
		job_free(j);
		return;
	}
	sa->work_stats.jobs++;
	sa->n_jobs++;
	*sa->jobs_tail = j;
	sa->jobs_tail = &j->next;
	ev_idle_start(sm->loop, &sa->slices);
}

static void on_request(void *arg, const void *mad, size_t len,
		       const struct mad_addr *from)
{
	struct sa_agent *sa = arg;
	struct sm *sm = sa->sm;
	const struct sa_mad *req = mad;
	const struct sa_attr *a;
	struct sa_query q;
	int rc;

	/* An ACK, STOP or ABORT for one of our RMPP answers.  The kernel's
	 * RMPP (and ibsmctl) sends ACKs with the request method (R bit
	 * clear), so they arrive here rather than as unmatched responses. */
	if (len == MAD_SIZE && (req->rmpp.resptime_flags & RMPP_FLAG_ACTIVE) &&
	    req->rmpp.type != RMPP_TYPE_DATA) {
		on_unmatched(sa, mad, len, from);
		return;
	}
	sa->stats.requests++;
	rc = sa_request_parse(mad, len, from->lid, &q, &a);
	if (rc < 0) {
		sa->stats.errors++;
		sa->requests_dropped++;
		return;
	}
	if (rc > 0) {
		answer(sa, req, from, (uint16_t)rc, NULL, a ? a->rec_size : 0);
		return;
	}
	/* Trust (15.2.2.1) comes from presenting sa_key.  As OpenSM, a
	 * request with a non-zero SM_Key that is not sa_key gets no answer
	 * at all; one with 0 is served untrusted.  The handlers compare with
	 * SA_SM_KEY_TRUSTED, so a match becomes that value and 0 stays 0. */
	if (q.sm_key && q.sm_key != sm->cfg.sa_key) {
		sa->requests_bad_key++;
		log_ratelimited(LOG_LVL_WARN, 504, "SA request from LID %u "
				"(attribute 0x%04x) dropped: its SM_Key "
				"0x%016" PRIx64 " is not sa_key", from->lid,
				q.attr_id, q.sm_key);
		return;
	}
	q.sm_key = q.sm_key ? SA_SM_KEY_TRUSTED : 0;
	if (sm->state != SM_MASTER || !sm->subnet_up) {
		answer(sa, req, from, MAD_STATUS_BUSY, NULL, a->rec_size);
		return;
	}
	if (a->gen) {
		run_generator(sa, req, from, a, &q);
		return;
	}
	struct sa_table t = { .rec_size = a->rec_size,
			      .stride = sa_record_stride(a->rec_size) * 8 };
	if (q.attr_id == SA_ATTR_SERVICE_RECORD) {
		uint8_t gid[16];
		gid_of_lid(sm, from->lid, gid);
		rc = sa_service_request(sa->state, &q, gid, ev_now(sm->loop), &t);
	} else if (q.attr_id == SA_ATTR_INFORM_INFO) {
		uint8_t gid[16];
		gid_of_lid(sm, from->lid, gid);
		rc = sa_inform_set(sa->state, &q, from, gid, &t);
	} else if (q.attr_id == SA_ATTR_INFORM_INFO_RECORD) {
		rc = sa_inform_records(sa->state, &q, &t);
	} else if (q.attr_id == SA_ATTR_MCMEMBER_RECORD) {
		rc = sa_mcmember_serve(sm, &q, &t);
	} else {
		rc = -MAD_STATUS_ATTR_UNSUPP;
	}
	finish(sa, req, from, a, q.method, &t, rc);
	free(t.buf);
}

/* ACK, STOP or ABORT of one of our RMPP answers. */
static void on_unmatched(void *arg, const void *mad, size_t len,
			 const struct mad_addr *from)
{
	struct sa_agent *sa = arg;
	const struct sa_mad *m = mad;

	if (len != MAD_SIZE || rmpp_validate(m) < 0 ||
	    !(rmpp_flags(&m->rmpp) & RMPP_FLAG_ACTIVE))
		return;
	for (struct transfer *t = sa->transfers; t; t = t->next) {
		if (rmpp_sender_matches(t->sender, m->hdr.tid, from)) {
			rmpp_sender_input(t->sender, m);	/* may free t */
			return;
		}
	}
	/* Segments of a table a standby fetches from its master. */
	standby_sync_unmatched(sa->sm, mad, len, from);
}

struct sa_state *sa_agent_state(struct sm *sm)
{
	return sm->sa ? sm->sa->state : NULL;
}

static void report_next(struct report_dest *d);

static void dest_free(struct report_dest *d)
{
	struct sa_agent *sa = d->sa;

	for (struct report_dest **pp = &sa->dests; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	}
	free(d);
}

static void on_report_done(void *arg, int status, const void *mad, size_t len)
{
	struct report_dest *d = arg;
	struct sa_agent *sa = d->sa;
	unsigned trap = be16toh(((const struct smp_notice *)d->in_flight)->trap_num);

	(void)mad;
	(void)len;
	d->busy = false;
	if (!sa) {
		free(d);		/* orphaned by sa_stop() */
		return;
	}
	if (status == -ECANCELED) {
		dest_free(d);		/* the engine is going away */
		return;
	}
	if (status == 0) {
		sa->stats.reports_answered++;
		d->fails = 0;
	} else {
		sa->stats.reports_failed++;
		/* One line when a subscriber stops answering, not one per
		 * Report: the rest are counted (sa_stop's summary). */
		if (d->fails++ == 0)
			log_ratelimited(LOG_LVL_WARN, 501, "Report of trap %u"
					" to LID %u QPN %u got no ReportResp:"
					" %s", trap, d->to.lid, d->to.qpn,
					strerror(-status));
		if (d->fails >= sa->report_failures) {
			size_t n = sa_inform_drop_dest(sa->state, &d->to);

			sa->stats.subscribers_dropped++;
			sa->stats.reports_dropped += d->n_queued;
			log_ratelimited(LOG_LVL_WARN, 502, "LID %u QPN %u"
					" answered none of %u Reports in a row:"
					" %zu subscriptions removed, %u queued"
					" Reports dropped", d->to.lid,
					d->to.qpn, d->fails, n, d->n_queued);
			dest_free(d);
			return;
		}
	}
	report_next(d);
}

/* Send the next queued Report to d, or let d go when nothing waits and
 * there is no failure streak to remember. */
static void report_next(struct report_dest *d)
{
	struct sa_agent *sa = d->sa;
	struct sa_mad mad;

	while (d->n_queued) {
		memcpy(d->in_flight, d->queue[d->head], SA_NOTICE_LEN);
		d->head = (d->head + 1) % sa->report_queue;
		d->n_queued--;
		memset(&mad, 0, sizeof(mad));
		mad.hdr.base_version = 1;
		mad.hdr.mgmt_class = MAD_CLASS_SA;
		mad.hdr.class_version = 2;
		mad.hdr.method = MAD_METHOD_REPORT;
		mad.hdr.attr_id = htobe16(SA_ATTR_NOTICE);
		memcpy(mad.data, d->in_flight, SA_NOTICE_LEN);
		/* The engine fills the TID and re-sends until ReportResp; it
		 * calls back from the loop, never from inside submit. */
		d->busy = true;
		if (mad_engine_submit(sa->sm->engine, &mad, sizeof(mad), &d->to,
				      on_report_done, d) == 0) {
			sa->stats.reports++;
			return;
		}
		d->busy = false;
		sa->stats.reports_dropped++;
	}
	if (!d->fails || !sa_inform_dest_count(sa->state, &d->to))
		dest_free(d);
}

struct report_ctx {
	struct sa_agent *sa;
	uint8_t notice[SA_NOTICE_LEN];
};

/* Queue one notice for one subscriber address. */
static void report_to(void *arg, const struct mad_addr *to)
{
	struct report_ctx *rc = arg;
	struct sa_agent *sa = rc->sa;
	struct report_dest *d;

	for (d = sa->dests; d; d = d->next)
		if (d->to.lid == to->lid && d->to.qpn == to->qpn)
			break;
	if (!d) {
		d = calloc(1, sizeof(*d) + (size_t)sa->report_queue * SA_NOTICE_LEN);
		if (!d) {
			sa->stats.reports_dropped++;
			return;
		}
		d->sa = sa;
		d->to = *to;
		d->next = sa->dests;
		sa->dests = d;
	}
	/* The same notice already on its way or waiting: one Report says it. */
	if (d->busy && !memcmp(d->in_flight, rc->notice, SA_NOTICE_LEN))
		goto coalesced;
	for (unsigned i = 0; i < d->n_queued; i++)
		if (!memcmp(d->queue[(d->head + i) % sa->report_queue],
			    rc->notice, SA_NOTICE_LEN))
			goto coalesced;
	if (d->n_queued == sa->report_queue) {
		sa->stats.reports_dropped++;
		if (!d->overflow_logged)
			log_ratelimited(LOG_LVL_WARN, 503, "Reports to LID %u"
					" QPN %u: %u waiting, more are dropped"
					" (counted)", d->to.lid, d->to.qpn,
					d->n_queued);
		d->overflow_logged = true;
		return;
	}
	memcpy(d->queue[(d->head + d->n_queued) % sa->report_queue],
	       rc->notice, SA_NOTICE_LEN);
	d->n_queued++;
	if (!d->busy)
		report_next(d);
	return;
coalesced:
	sa->stats.reports_coalesced++;
}

void sa_report_notice(struct sm *sm, const struct smp_notice *n, uint16_t lid)
{
	struct sa_agent *sa = sm->sa;
	struct report_ctx rc;
	uint8_t gid[16];

	if (!sa || !notice_is_generic(n))
		return;
	memset(&rc, 0, sizeof(rc));
	rc.sa = sa;
	/* Notice in SA form: the 64 bytes of the trap plus IssuerGID. */
	memcpy(rc.notice, n, 64);
	gid_of_lid(sm, be16toh(n->issuer_lid), gid);
	memcpy(rc.notice + 64, gid, 16);
	sa_subscribers_for(sa->state, be16toh(n->trap_num), notice_type(n), lid,
			   report_to, &rc);
}

/* Is the port with `guid` still in the model at `lid`? */
struct lid_map {
	uint64_t *guid_at;		/* by LID */
	size_t n;
};

static bool port_present(void *arg, uint64_t guid, uint16_t lid)
{
	const struct lid_map *m = arg;

	return guid && lid < m->n && m->guid_at[lid] == guid;
}

void sa_fabric_changed(struct sm *sm)
{
	struct sa_agent *sa = sm->sa;
	const struct fabric *f = &sm->fabric;
	struct lid_map m = { NULL, (size_t)f->max_lid + 1 };
	size_t gone;

	if (!sa)
		return;
	m.guid_at = calloc(m.n, sizeof(*m.guid_at));
	if (!m.guid_at)
		return;		/* pruned after the next sweep */
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		for (unsigned pn = 0; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];
			size_t lo = p->lid, hi = lo + (1u << (p->lmc & 7));

			for (size_t l = lo; lo && l < hi && l < m.n; l++)
				m.guid_at[l] = p->guid;
		}
	}
	gone = sa_state_prune(sa->state, port_present, &m);
	free(m.guid_at);
	sa_mcast_prune(sm);
	if (gone)
		log_info("SA: %zu subscriptions of ports that left the fabric"
			 " removed", gone);
	/* Failure streaks of addresses nobody subscribes from any more. */
	for (struct report_dest *d = sa->dests, *next; d; d = next) {
		next = d->next;
		if (!d->busy && !d->n_queued &&
		    !sa_inform_dest_count(sa->state, &d->to))
			dest_free(d);
	}
}

/* The limits in force and what each refused or removed so far. */
static void log_limits(const struct sa_agent *sa)
{
	const struct sa_state_stats *ss = sa_state_stats(sa->state);
	const struct sa_state_limits *sl = sa_state_limits(sa->state);

	log_info("SA limits: transfers %u (%u/port): refused %" PRIu64 " full,"
		 " %" PRIu64 " over quota, %" PRIu64 " preempted; services %u"
		 " (%u/port, lease <= %u s):"
		 " refused %" PRIu64 " full, %" PRIu64 " over quota, %" PRIu64
		 " not owner, %" PRIu64 " leases cut; subscriptions %u (%u/port):"
		 " refused %" PRIu64 " full, %" PRIu64 " over quota, %" PRIu64
		 " pruned, %" PRIu64 " dropped; Reports (queue %u, drop after"
		 " %u): %" PRIu64 " answered, %" PRIu64 " unanswered, %" PRIu64
		 " coalesced, %" PRIu64 " dropped, %" PRIu64 " subscribers"
		 " dropped; answer bytes %zu/port (%zu in all): refused %" PRIu64
		 " too big, %" PRIu64 " busy, peak %zu",
		 sa->max_transfers, sa->transfers_per_port, sa->stats.xfer_full,
		 sa->stats.xfer_port_quota, sa->stats.xfer_preempted,
		 sl->max_services,
		 sl->services_per_port, sl->max_lease, ss->svc_full,
		 ss->svc_quota, ss->svc_not_owner, ss->svc_lease_cut,
		 sl->max_subscriptions, sl->subscriptions_per_port, ss->sub_full,
		 ss->sub_quota, ss->sub_pruned, ss->sub_dropped,
		 sa->report_queue, sa->report_failures,
		 sa->stats.reports_answered, sa->stats.reports_failed,
		 sa->stats.reports_coalesced, sa->stats.reports_dropped,
		 sa->stats.subscribers_dropped, sa->answer_bytes,
		 sa->answer_bytes_all, sa->stats.mem_too_big,
		 sa->stats.mem_busy, sa->stats.mem_peak);
}

/* Everything log_limits() counts, summed: has anything moved? */
static uint64_t limit_events(const struct sa_agent *sa)
{
	const struct sa_state_stats *ss = sa_state_stats(sa->state);

	return sa->stats.xfer_full + sa->stats.xfer_port_quota +
	       sa->stats.xfer_preempted +
	       ss->svc_full + ss->svc_quota + ss->svc_not_owner +
	       ss->svc_lease_cut + ss->sub_full + ss->sub_quota +
	       ss->sub_pruned + ss->sub_dropped + sa->stats.reports_failed +
	       sa->stats.reports_coalesced + sa->stats.reports_dropped +
	       sa->stats.mem_too_big + sa->stats.mem_busy;
}

static void on_expire(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sa_agent *sa = w->data;
	ev_tstamp now = ev_now(loop);
	uint64_t events = limit_events(sa);

	sa_service_expire(sa->state, now);
	/* A running SM shows its limits at work too: one line when a
	 * counter moved, at most every SA_STATS_PERIOD seconds. */
	if (events != sa->logged_events &&
	    (!sa->logged_at || now - sa->logged_at >= SA_STATS_PERIOD)) {
		log_limits(sa);
		sa->logged_events = events;
		sa->logged_at = now;
	}
}

void sa_answer_bytes(const struct sm *sm, size_t *now, size_t *peak)
{
	const struct sa_agent *sa = sm->sa;

	*now = *peak = 0;
	if (!sa)
		return;
	bytes_held(sa, 0, NULL, now);
	*peak = sa->stats.mem_peak;
}

int sa_start(struct sm *sm)
{
	struct sa_agent *sa = calloc(1, sizeof(*sa));
	int rc;

	if (!sa)
		return -ENOMEM;
	sa->sm = sm;
	sa->max_transfers = sm->cfg.sa_max_transfers ? sm->cfg.sa_max_transfers
						      : SA_DEF_MAX_TRANSFERS;
	sa->transfers_per_port = sm->cfg.sa_transfers_per_port ?
		sm->cfg.sa_transfers_per_port : SA_DEF_TRANSFERS_PER_PORT;
	sa->answer_bytes = sm->cfg.sa_answer_bytes ?
		(size_t)sm->cfg.sa_answer_bytes : SA_DEF_ANSWER_BYTES;
	sa->answer_bytes_all = sa->answer_bytes * SA_ANSWER_BYTES_ALL;
	sa->report_queue = sm->cfg.sa_report_queue ? sm->cfg.sa_report_queue
						   : SA_DEF_REPORT_QUEUE;
	sa->report_failures = sm->cfg.sa_report_failures ?
		sm->cfg.sa_report_failures : SA_DEF_REPORT_FAILURES;
	struct sa_state_limits lim = {
		.max_services = sm->cfg.sa_max_services,
		.services_per_port = sm->cfg.sa_services_per_port,
		.max_lease = sm->cfg.sa_max_lease,
		.max_subscriptions = sm->cfg.sa_max_subscriptions,
		.subscriptions_per_port = sm->cfg.sa_subscriptions_per_port,
	};
	sa->state = sa_state_new(&lim);
	if (!sa->state) {
		free(sa);
		return -ENOMEM;
	}
	ev_timer_init(&sa->expire, on_expire, 1., 1.);
	sa->expire.data = sa;
	sa->jobs_tail = &sa->jobs;
	ev_idle_init(&sa->slices, on_slice);
	sa->slices.data = sa;
	ev_timer_start(sm->loop, &sa->expire);
	rc = mad_engine_on_unsolicited(sm->engine, MAD_CLASS_SA, 0xff, 0xffff,
				       on_request, sa);
	if (rc == 0)
		rc = mad_engine_on_unmatched(sm->engine, MAD_CLASS_SA,
					     on_unmatched, sa);
	if (rc < 0) {
		ev_timer_stop(sm->loop, &sa->expire);
		sa_state_free(sa->state);
		free(sa);
		return rc;
	}
	sm->sa = sa;
	return 0;
}

void sa_stop(struct sm *sm)
{
	struct sa_agent *sa = sm->sa;

	if (!sa)
		return;
	log_info("SA: %" PRIu64 " requests, %" PRIu64 " answered, %" PRIu64
		 " errors, %" PRIu64 " RMPP transfers, %" PRIu64 " reports, %"
		 PRIu64 " dropped for an SM_Key that is not sa_key",
		 sa->stats.requests, sa->stats.answered, sa->stats.errors,
		 sa->stats.rmpp, sa->stats.reports, sa->requests_bad_key);
	log_limits(sa);
	log_info("SA: %" PRIu64 " requests answered in slices (%" PRIu64
		 " slices, the longest %.1f ms), %" PRIu64 " BUSY for want of"
		 " a slot, %" PRIu64 " over their work budget, %" PRIu64
		 " restarted on a new model, %" PRIu64 " outlived their"
		 " model", sa->work_stats.jobs,
		 sa->work_stats.slices, sa->work_stats.longest * 1e3,
		 sa->work_stats.busy, sa->work_stats.exhausted,
		 sa->work_stats.restarted, sa->work_stats.stale);
	ev_timer_stop(sm->loop, &sa->expire);
	ev_idle_stop(sm->loop, &sa->slices);
	while (sa->jobs) {
		struct sa_job *j = sa->jobs;

		sa->jobs = j->next;
		job_free(j);
	}
	sa_state_free(sa->state);
	while (sa->transfers) {
		struct transfer *t = sa->transfers;

		sa->transfers = t->next;
		rmpp_sender_free(t->sender);
		free(t);
	}
	/* A Report in flight belongs to the engine until it calls back
	 * (-ECANCELED when the engine goes): orphan it, free the rest. */
	while (sa->dests) {
		struct report_dest *d = sa->dests;

		sa->dests = d->next;
		if (d->busy)
			d->sa = NULL;
		else
			free(d);
	}
	free(sa);
	sm->sa = NULL;
}
