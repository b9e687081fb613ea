/*
 * fake_transport.h - a scriptable MAD transport for unit tests.
 *
 * It records every MAD the engine hands it and, per MAD, drops it, answers
 * it on the next loop iteration, answers it after a delay, or reports it
 * back as timed out by the "kernel" (the request itself with a non-zero
 * status, as umad does).  Answers are always delivered from an ev_timer on
 * the loop, never from inside send(): the real transport (mad/umad_io.c)
 * hands received MADs over through an ev_async, so the engine is never
 * re-entered from its own send call.
 *
 * Tests can also inject any MAD at any moment with fake_deliver(), from
 * test code between loop runs.
 *
 * Header-only (static inline) so any Check program can include it.
 */
#ifndef IBSM_TESTS_FAKE_TRANSPORT_H
#define IBSM_TESTS_FAKE_TRANSPORT_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <ev.h>

#include "mad/engine.h"
#include "mad/wire.h"

enum fake_action {
	FAKE_DROP,		/* lost on the wire */
	FAKE_ANSWER,		/* answered on the next loop iteration */
	FAKE_ANSWER_AFTER,	/* answered after fake.delay seconds */
	FAKE_KERNEL_TIMEOUT,	/* sent back with status ETIMEDOUT after fake.delay */
};

struct fake_sent {
	uint8_t		 mad[MAD_SIZE];
	size_t		 len;
	struct mad_addr	 addr;
	int		 timeout_ms;
	ev_tstamp	 at;		/* ev_now() when sent */
};

struct fake;
/* Per-MAD decision; NULL policy: fake.action for every MAD. */
typedef enum fake_action (*fake_policy_fn)(struct fake *fk, const struct fake_sent *s,
					   void *arg);

struct fake_delivery {
	ev_timer		 w;
	struct fake		*fk;
	struct fake_delivery	*next;
	uint8_t			 mad[MAD_SIZE];
	size_t			 len;
	struct mad_addr		 from;
	int			 status;
};

struct fake {
	struct ev_loop		*loop;
	struct mad_engine	*engine;
	struct fake_sent	*sent;
	size_t			 n_sent, cap;
	int			 send_rc;	/* what send() returns */
	enum fake_action	 action;
	ev_tstamp		 delay;
	uint32_t		 tid_high;	/* "agent number" written into answers */
	fake_policy_fn		 policy;
	void			*policy_arg;
	struct fake_delivery	*pending;
	unsigned		 delivered;
};

/* The response a well-behaved responder returns for a request. */
static inline size_t fake_make_response(const void *req, size_t len, uint32_t tid_high,
					uint8_t *out)
{
	const struct mad_hdr *rq = req;
	struct mad_hdr *h = (struct mad_hdr *)out;
	uint64_t tid;

	memset(out, 0, MAD_SIZE);
	memcpy(out, req, len);
	if (rq->method == MAD_METHOD_SET)
		h->method = MAD_METHOD_GET | MAD_METHOD_RESP;	/* GetResp */
	else if (rq->method == MAD_METHOD_TRAP)
		h->method = MAD_METHOD_TRAP_REPRESS;
	else
		h->method = rq->method | MAD_METHOD_RESP;
	if (rq->mgmt_class == MAD_CLASS_SMI_DR) {
		struct smp_dr *s = (struct smp_dr *)out;

		s->hdr.status = htobe16(SMP_DR_DIRECTION);
		smp_dr_set_hops(s, 0, smp_dr_hop_cnt(s));
	}
	tid = be64toh(h->tid);
	h->tid = htobe64((uint64_t)tid_high << 32 | (tid & 0xffffffffu));
	return len;
}

/* Hand a MAD to the engine now, from `from` (call from test code, not
 * from send()). */
static inline void fake_deliver_from(struct fake *fk, const void *mad, size_t len,
				     const struct mad_addr *from, int status)
{
	fk->delivered++;
	mad_engine_recv(fk->engine, mad, len, from, status);
}

/* The same from the permissive LID, as directed-route answers come. */
static inline void fake_deliver(struct fake *fk, const void *mad, size_t len, int status)
{
	struct mad_addr from = { .lid = 0xffff, .qpn = 0 };

	fake_deliver_from(fk, mad, len, &from, status);
}

/* Answer the n-th sent MAD now, from where it went. */
static inline void fake_answer(struct fake *fk, size_t n)
{
	uint8_t resp[MAD_SIZE];
	size_t len = fake_make_response(fk->sent[n].mad, fk->sent[n].len,
					fk->tid_high, resp);

	fake_deliver_from(fk, resp, len, &fk->sent[n].addr, 0);
}

static inline void fake_unlink(struct fake *fk, struct fake_delivery *d)
{
	for (struct fake_delivery **pp = &fk->pending; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			return;
		}
	}
}

static inline void fake_on_delivery(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct fake_delivery *d = (struct fake_delivery *)w;
	struct fake *fk = d->fk;

	(void)loop;
	(void)revents;
	fake_unlink(fk, d);
	fk->delivered++;
	mad_engine_recv(fk->engine, d->mad, d->len, &d->from, d->status);
	free(d);
}

static inline void fake_schedule(struct fake *fk, const void *mad, size_t len,
				 const struct mad_addr *from, int status,
				 ev_tstamp after)
{
	struct fake_delivery *d = calloc(1, sizeof(*d));

	if (!d)
		abort();
	d->fk = fk;
	memcpy(d->mad, mad, len);
	d->len = len;
	d->from = *from;
	d->status = status;
	d->next = fk->pending;
	fk->pending = d;
	ev_timer_init(&d->w, fake_on_delivery, after, 0.);
	ev_timer_start(fk->loop, &d->w);
}

static inline int fake_send(void *ctx, const void *mad, size_t len,
			    const struct mad_addr *addr, int timeout_ms)
{
	struct fake *fk = ctx;
	struct fake_sent *s;
	enum fake_action act;

	if (fk->n_sent == fk->cap) {
		size_t cap = fk->cap ? fk->cap * 2 : 64;
		struct fake_sent *ns = realloc(fk->sent, cap * sizeof(*ns));

		if (!ns)
			abort();
		fk->sent = ns;
		fk->cap = cap;
	}
	s = &fk->sent[fk->n_sent++];
	memset(s, 0, sizeof(*s));
	memcpy(s->mad, mad, len);
	s->len = len;
	s->addr = *addr;
	s->timeout_ms = timeout_ms;
	s->at = ev_now(fk->loop);

	act = fk->policy ? fk->policy(fk, s, fk->policy_arg) : fk->action;
	if (timeout_ms == 0 && act != FAKE_DROP)	/* one-way: nobody answers */
		act = FAKE_DROP;
	switch (act) {
	case FAKE_DROP:
		break;
	case FAKE_ANSWER:
	case FAKE_ANSWER_AFTER: {
		uint8_t resp[MAD_SIZE];
		size_t rlen = fake_make_response(mad, len, fk->tid_high, resp);

		/* A well-behaved responder answers from where the request
		 * went (the engine checks it). */
		fake_schedule(fk, resp, rlen, addr, 0,
			      act == FAKE_ANSWER ? 0. : fk->delay);
		break;
	}
	case FAKE_KERNEL_TIMEOUT:
		fake_schedule(fk, mad, len, addr, ETIMEDOUT, fk->delay);
		break;
	}
	return fk->send_rc;
}

static inline int fake_init(struct fake *fk, struct ev_loop *loop,
			    const struct mad_engine_opts *opts)
{
	struct mad_transport tr = { .send = fake_send, .ctx = fk };

	memset(fk, 0, sizeof(*fk));
	fk->loop = loop;
	fk->action = FAKE_DROP;
	return mad_engine_new(&fk->engine, loop, &tr, opts);
}

/* Free the engine (cancelling what it holds), then undelivered answers. */
static inline void fake_fini(struct fake *fk)
{
	mad_engine_free(fk->engine);
	fk->engine = NULL;
	while (fk->pending) {
		struct fake_delivery *d = fk->pending;

		fk->pending = d->next;
		ev_timer_stop(fk->loop, &d->w);
		free(d);
	}
	free(fk->sent);
	fk->sent = NULL;
	fk->n_sent = fk->cap = 0;
}

/* Header fields of a recorded MAD, host order. */
static inline uint64_t fake_tid(const struct fake *fk, size_t n)
{
	return be64toh(((const struct mad_hdr *)fk->sent[n].mad)->tid);
}

static inline uint32_t fake_attr_mod(const struct fake *fk, size_t n)
{
	return be32toh(((const struct mad_hdr *)fk->sent[n].mad)->attr_mod);
}

static inline uint8_t fake_class(const struct fake *fk, size_t n)
{
	return ((const struct mad_hdr *)fk->sent[n].mad)->mgmt_class;
}

#endif /* IBSM_TESTS_FAKE_TRANSPORT_H */
