/*
 * rxq.c - the bounded pump-to-loop queue and its drop policy (see rxq.h).
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad/rxq.h"

#define LIDS	65536

int rxq_init(struct rxq *q, unsigned cap)
{
	memset(q, 0, sizeof(*q));
	if (!cap)
		cap = RXQ_DEFAULT_CAP;
	if (cap < 16)
		cap = 16;
	if (cap > 65535)	/* per-LID counters are 16 bits */
		cap = 65535;
	q->ring = calloc(cap, sizeof(*q->ring));
	q->per_lid_req = calloc(LIDS, sizeof(*q->per_lid_req));
	q->per_lid_resp = calloc(LIDS, sizeof(*q->per_lid_resp));
	if (!q->ring || !q->per_lid_req || !q->per_lid_resp) {
		rxq_fini(q);
		return -ENOMEM;
	}
	q->cap = cap;
	q->src_mask = 0xffff;
	q->req_max = cap / 2;
	q->req_per_source = cap / 16;
	q->resp_per_source = cap / 8;
	q->resp_max = cap - cap / 4;
	q->lid_resp_max = cap / 4;
	q->stats.cap = cap;
	return 0;
}

void rxq_fini(struct rxq *q)
{
	free(q->ring);
	free(q->per_lid_req);
	free(q->per_lid_resp);
	memset(q, 0, sizeof(*q));
}

void rxq_set_source_lmc(struct rxq *q, unsigned lmc)
{
	q->src_mask = (uint16_t)~((1u << (lmc & 7)) - 1);
}

void rxq_set_tid_filter(struct rxq *q, const _Atomic uint16_t *wire_tids)
{
	q->tid_filter = wire_tids;
}

/* An SMP answer whose TID no request on the wire has (see rxq.h). */
static bool unexpected(const struct rxq *q, const uint8_t *mad, size_t len,
		       int status)
{
	const struct mad_hdr *h = (const struct mad_hdr *)mad;

	if (!q->tid_filter || status || len < MAD_HDR_SIZE)
		return false;
	if (h->mgmt_class != MAD_CLASS_SMI && h->mgmt_class != MAD_CLASS_SMI_DR)
		return false;
	uint32_t tid = (uint32_t)be64toh(h->tid);
	return atomic_load_explicit(&q->tid_filter[MAD_TID_FILTER_INDEX(tid)],
				    memory_order_relaxed) == 0;
}

bool rxq_is_response(const void *mad, size_t len, int status)
{
	const struct mad_hdr *h = mad;

	if (status)
		return true;	/* our own send, handed back by the kernel */
	if (len < MAD_HDR_SIZE)
		return false;
	return (h->method & MAD_METHOD_RESP) ||
	       h->method == MAD_METHOD_TRAP_REPRESS;
}

static int drop(struct rxq *q, bool resp, uint64_t *why)
{
	(*why)++;
	if (resp)
		q->stats.dropped_responses++;
	return -ENOBUFS;
}

int rxq_push(struct rxq *q, const void *mad, size_t len,
	     const struct mad_addr *from, int status)
{
	bool resp = rxq_is_response(mad, len, status);
	/* The permissive LID stays itself (directed-route answers). */
	uint16_t lid = from->lid == 0xffff ? 0xffff : from->lid & q->src_mask;

	if (len > MAD_SIZE)
		len = MAD_SIZE;
	if (resp && unexpected(q, mad, len, status))
		return drop(q, resp, &q->stats.dropped_unexpected);
	if (q->count == q->cap)
		return drop(q, resp, &q->stats.dropped_full);
	if (resp) {
		bool routed = lid != 0xffff && !status;

		if (q->responses >= q->resp_max ||
		    (routed && q->lid_responses >= q->lid_resp_max))
			return drop(q, resp, &q->stats.dropped_full);
		if (lid != 0xffff && q->per_lid_resp[lid] >= q->resp_per_source)
			return drop(q, resp, &q->stats.dropped_source);
	} else {
		if (q->requests >= q->req_max)
			return drop(q, resp, &q->stats.dropped_full);
		if (q->per_lid_req[lid] >= q->req_per_source)
			return drop(q, resp, &q->stats.dropped_source);
	}
	struct rxq_entry *e = &q->ring[(q->head + q->count) % q->cap];
	memcpy(e->mad, mad, len);
	e->len = len;
	e->status = status;
	e->from = *from;
	e->response = resp;
	e->key = lid;
	if (resp) {
		q->per_lid_resp[lid]++;
		q->responses++;
		if (lid != 0xffff && !status)
			q->lid_responses++;
	} else {
		q->per_lid_req[lid]++;
		q->requests++;
	}
	q->count++;
	q->stats.queued++;
	if (q->count > q->stats.high_water)
		q->stats.high_water = q->count;
	return 0;
}

void rxq_pop(struct rxq *q, unsigned n)
{
	if (n > q->count)
		n = q->count;
	for (unsigned i = 0; i < n; i++) {
		const struct rxq_entry *e = rxq_at(q, i);

		if (e->response) {
			q->per_lid_resp[e->key]--;
			q->responses--;
			if (e->from.lid != 0xffff && !e->status)
				q->lid_responses--;
		} else {
			q->per_lid_req[e->key]--;
			q->requests--;
		}
	}
	q->head = (q->head + n) % q->cap;
	q->count -= n;
}
