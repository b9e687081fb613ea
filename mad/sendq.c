/*
 * sendq.c - the bounded send queue and its thread (see sendq.h).
 *
 * A ring of `cap` slots under one mutex: the loop appends (a copy of
 * 256 bytes, a few counters); the thread takes the head, releases the
 * lock and sends, so a send that waits holds nobody else.  The loop
 * wakes a sleeping thread once per batch (sendq_flush() before it waits,
 * or when SENDQ_BATCH MADs wait), not once per MAD: a wake-up per MAD
 * cost more CPU than the MAD itself.
 * A response counts against its destination (the LID it goes to; every
 * directed-route answer shares one key) until the thread has taken it.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sendq.h"
#include "mad/wire.h"

struct sendq_slot {
	struct mad_addr addr;
	int      timeout_ms;
	uint16_t len;
	uint16_t dest;			/* per-destination key */
	bool     counted;		/* a response: holds a dest count */
	uint8_t  mad[MAD_SIZE];
};

struct sendq {
	pthread_mutex_t mu;
	pthread_cond_t  cv;
	pthread_t       thread;
	sendq_send_fn   fn;
	void           *ctx;
	struct sendq_slot *ring;
	unsigned cap, per_dest, head, count;
	uint16_t *dest_count;		/* 65536 counters */
	bool     stop;
	bool     sleeping;		/* the thread waits on cv */
	struct sendq_stats st;
};

static void *sendq_main(void *arg)
{
	struct sendq *q = arg;
	struct sendq_slot s;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (!q->count && !q->stop) {
			q->sleeping = true;
			pthread_cond_wait(&q->cv, &q->mu);
			q->sleeping = false;
		}
		if (!q->count)
			break;
		s = q->ring[q->head];
		q->head = (q->head + 1) % q->cap;
		q->count--;
		if (s.counted && q->dest_count[s.dest])
			q->dest_count[s.dest]--;
		pthread_mutex_unlock(&q->mu);
		int rc = q->fn(q->ctx, s.mad, s.len, &s.addr, s.timeout_ms);
		pthread_mutex_lock(&q->mu);
		if (rc < 0)
			q->st.failed++;
		else
			q->st.sent++;
	}
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

int sendq_start(struct sendq **out, sendq_send_fn fn, void *ctx,
		unsigned cap, unsigned per_dest)
{
	struct sendq *q = calloc(1, sizeof(*q));
	int rc;

	if (!q)
		return -ENOMEM;
	q->fn = fn;
	q->ctx = ctx;
	q->cap = cap ? cap : SENDQ_DEFAULT_CAP;
	q->per_dest = per_dest ? per_dest : SENDQ_DEFAULT_PER_DEST;
	q->ring = calloc(q->cap, sizeof(*q->ring));
	q->dest_count = calloc(65536, sizeof(*q->dest_count));
	if (!q->ring || !q->dest_count) {
		rc = -ENOMEM;
		goto fail;
	}
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	rc = -pthread_create(&q->thread, NULL, sendq_main, q);
	if (rc < 0) {
		pthread_cond_destroy(&q->cv);
		pthread_mutex_destroy(&q->mu);
		goto fail;
	}
	*out = q;
	return 0;
fail:
	free(q->ring);
	free(q->dest_count);
	free(q);
	return rc;
}

int sendq_push(struct sendq *q, const void *mad, size_t len,
	       const struct mad_addr *addr, int timeout_ms)
{
	const struct mad_hdr *h = mad;
	bool resp = len >= MAD_HDR_SIZE && (h->method & MAD_METHOD_RESP);
	uint16_t dest = addr->lid;
	int rc = 0;

	if (len > MAD_SIZE)
		return -EINVAL;
	pthread_mutex_lock(&q->mu);
	if (q->count == q->cap) {
		q->st.refused_full++;
		rc = -ENOBUFS;
	} else if (resp && q->dest_count[dest] >= q->per_dest) {
		q->st.refused_dest++;
		rc = -ENOBUFS;
	} else {
		struct sendq_slot *s = &q->ring[(q->head + q->count) % q->cap];

		s->addr = *addr;
		s->timeout_ms = timeout_ms;
		s->len = (uint16_t)len;
		s->dest = dest;
		s->counted = resp;
		memcpy(s->mad, mad, len);
		if (resp)
			q->dest_count[dest]++;
		q->count++;
		q->st.queued++;
		if (q->count > q->st.peak)
			q->st.peak = q->count;
		if (q->sleeping && q->count >= SENDQ_BATCH)
			pthread_cond_signal(&q->cv);
	}
	pthread_mutex_unlock(&q->mu);
	return rc;
}

void sendq_flush(struct sendq *q)
{
	pthread_mutex_lock(&q->mu);
	if (q->sleeping && q->count)
		pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

void sendq_get_stats(struct sendq *q, struct sendq_stats *out)
{
	pthread_mutex_lock(&q->mu);
	*out = q->st;
	out->waiting = q->count;
	pthread_mutex_unlock(&q->mu);
}

void sendq_stop(struct sendq *q)
{
	if (!q)
		return;
	pthread_mutex_lock(&q->mu);
	q->stop = true;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	pthread_join(q->thread, NULL);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	free(q->ring);
	free(q->dest_count);
	free(q);
}
