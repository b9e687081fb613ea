/*
 * sa.c - the Subnet Administration agent (see sa.h).
 *
 * Every SA request arrives here as an unsolicited class 0x03 MAD.  It is
 * checked (method, attribute, component mask), handed to the record
 * generator of its attribute (sm/sa_records.c) together with a view of
 * the subnet as of the last SUBNET UP, and answered:
 *
 *   Get         exactly one record, else NO_RECORDS / TOO_MANY_RECORDS
 *   GetTable    every matching record, through RMPP (mad/rmpp.c), like
 *               OpenSM even when they fit one MAD
 *
 * Anything else is answered with the status the spec gives it and never
 * crashes the SM: every request is untrusted.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mad/rmpp.h"
#include "sm/sa.h"
#include "sm/sm.h"

#define SA_QKEY			0x80010000u
#define SA_MAX_TRANSFERS	256	/* RMPP answers in flight at once */

struct transfer {
	struct transfer *next;
	struct sa_agent *sa;
	struct rmpp_sender *sender;
};

struct sa_agent {
	struct sm *sm;
	struct transfer *transfers;
	unsigned n_transfers;
	struct {
		uint64_t requests, answered, errors, rmpp;
	} stats;
};

static void sa_view_of(const struct sm *sm, struct sa_view *v)
{
	memset(v, 0, sizeof(*v));
	v->f = &sm->fabric;
	v->routes = &sm->routes;
	v->sm_port_guid = sm->port_guid;
	v->sm_lid = sm_local_lid(sm);
	v->sm_priority = sm->cfg.sm_priority;
	v->sm_state = (uint8_t)sm->state;
	v->act_count = sm->act_count;
	v->subnet_prefix = sm->cfg.subnet_prefix;
	v->subnet_timeout = sm->cfg.subnet_timeout;
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
	resp.attr_offset = htobe16((uint16_t)sa_record_stride(rec_size));
	memset(resp.data, 0, sizeof(resp.data));
	if (rec && rec_size <= sizeof(resp.data))
		memcpy(resp.data, rec, rec_size);
	if (status)
		sa->stats.errors++;
	else
		sa->stats.answered++;
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
		log_debug("SA: RMPP transfer ended: %s", strerror(-status));
	rmpp_sender_free(t->sender);
	free(t);
}

/* GetTable answer: records padded to the stride, sent through RMPP. */
static void answer_table(struct sa_agent *sa, const struct sa_mad *req,
			 const struct mad_addr *from, const struct sa_table *t)
{
	struct sm *sm = sa->sm;
	unsigned stride = sa_record_stride(t->rec_size) * 8;
	size_t len = t->count * stride;
	struct mad_addr to = reply_addr(from);
	struct sa_mad hdr = *req;
	struct transfer *tr;
	uint8_t *payload;
	int rc;

	hdr.hdr.method = response_method(req->hdr.method);
	hdr.hdr.status = 0;
	hdr.attr_offset = htobe16((uint16_t)(stride / 8));
	if (len <= RMPP_SEG_DATA) {
		/* One segment: no acknowledgement round to wait for. */
		memset(hdr.data, 0, sizeof(hdr.data));
		for (size_t i = 0; i < t->count; i++)
			memcpy(hdr.data + i * stride, t->buf + i * t->rec_size,
			       t->rec_size);
		rmpp_set_single(&hdr, len);
		sa->stats.answered++;
		mad_engine_send_oneway(sm->engine, &hdr, sizeof(hdr), &to);
		return;
	}
	if (sa->n_transfers >= SA_MAX_TRANSFERS) {
		answer(sa, req, from, SA_STATUS_NO_RESOURCES, NULL, t->rec_size);
		return;
	}
	payload = calloc(1, len ? len : 1);
	tr = calloc(1, sizeof(*tr));
	if (!payload || !tr) {
		free(payload);
		free(tr);
		answer(sa, req, from, SA_STATUS_NO_RESOURCES, NULL, t->rec_size);
		return;
	}
	for (size_t i = 0; i < t->count; i++)
		memcpy(payload + i * stride, t->buf + i * t->rec_size, t->rec_size);
	tr->sa = sa;
	rc = rmpp_send(&tr->sender, sm->loop, sm->engine, &hdr, payload, len,
		       &to, sm->cfg.transaction_timeout,
		       sm->cfg.transaction_retries, transfer_done, tr);
	free(payload);
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
}

static void on_request(void *arg, const void *mad, size_t len,
		       const struct mad_addr *from)
{
	struct sa_agent *sa = arg;
	struct sm *sm = sa->sm;
	const struct sa_mad *req = mad;
	const struct sa_attr *a;
	struct sa_query q;
	struct sa_view v;
	int rc;

	sa->stats.requests++;
	if (len != MAD_SIZE) {
		/* A short MAD cannot be answered with its own headers safely. */
		sa->stats.errors++;
		return;
	}
	uint16_t attr = be16toh(req->hdr.attr_id);
	a = sa_attr_find(attr);
	if (req->hdr.method != MAD_METHOD_GET &&
	    req->hdr.method != MAD_METHOD_GET_TABLE) {
		answer(sa, req, from, MAD_STATUS_METHOD_UNSUPP, NULL, 0);
		return;
	}
	if (!a) {
		answer(sa, req, from, MAD_STATUS_ATTR_UNSUPP, NULL, 0);
		return;
	}
	if (req->rmpp.resptime_flags & RMPP_FLAG_ACTIVE) {
		/* A request is one MAD; a multi-packet request is not ours. */
		answer(sa, req, from, SA_STATUS_REQ_INVALID, NULL, a->rec_size);
		return;
	}
	if (sm->state != SM_MASTER || !sm->subnet_up) {
		answer(sa, req, from, MAD_STATUS_BUSY, NULL, a->rec_size);
		return;
	}
	q = (struct sa_query){
		.method = req->hdr.method,
		.attr_id = attr,
		.attr_mod = be32toh(req->hdr.attr_mod),
		.comp_mask = be64toh(req->comp_mask),
		.tmpl = req->data,
		.tmpl_len = sizeof(req->data),
		.requester_lid = from->lid,
	};
	if (!sa_mask_valid(a->nfields, q.comp_mask)) {
		answer(sa, req, from, SA_STATUS_REQ_INVALID, NULL, a->rec_size);
		return;
	}
	sa_view_of(sm, &v);
	struct sa_table t = { .rec_size = a->rec_size };
	rc = a->gen(&v, &q, &t);
	if (rc < 0) {
		uint16_t st = rc == -ENOMEM ? SA_STATUS_NO_RESOURCES
					    : (uint16_t)-rc;
		answer(sa, req, from, st, NULL, a->rec_size);
	} else if (q.method == MAD_METHOD_GET_TABLE) {
		answer_table(sa, req, from, &t);
	} else if (t.count == 0) {
		answer(sa, req, from, SA_STATUS_NO_RECORDS, NULL, a->rec_size);
	} else if (t.count > 1) {
		answer(sa, req, from, SA_STATUS_TOO_MANY_RECORDS, NULL, a->rec_size);
	} else {
		answer(sa, req, from, 0, t.buf, a->rec_size);
	}
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
}

int sa_start(struct sm *sm)
{
	struct sa_agent *sa = calloc(1, sizeof(*sa));
	int rc;

	if (!sa)
		return -ENOMEM;
	sa->sm = sm;
	rc = mad_engine_on_unsolicited(sm->engine, MAD_CLASS_SA, 0xff, 0xffff,
				       on_request, sa);
	if (rc == 0)
		rc = mad_engine_on_unmatched(sm->engine, MAD_CLASS_SA,
					     on_unmatched, sa);
	if (rc < 0) {
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
		 " errors, %" PRIu64 " RMPP transfers", sa->stats.requests,
		 sa->stats.answered, sa->stats.errors, sa->stats.rmpp);
	while (sa->transfers) {
		struct transfer *t = sa->transfers;

		sa->transfers = t->next;
		rmpp_sender_free(t->sender);
		free(t);
	}
	free(sa);
	sm->sa = NULL;
}
