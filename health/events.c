/*
 * events.c - the bounded event ring (events.h).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health/events.h"

int he_ring_init(struct he_ring *r, size_t cap)
{
	memset(r, 0, sizeof(*r));
	if (!cap)
		return -EINVAL;
	r->ev = calloc(cap, sizeof(*r->ev));
	if (!r->ev)
		return -ENOMEM;
	r->cap = cap;
	r->next_seq = 1;
	return 0;
}

void he_ring_free(struct he_ring *r)
{
	free(r->ev);
	memset(r, 0, sizeof(*r));
}

uint64_t he_ring_vadd(struct he_ring *r, double time, enum he_type type,
		      uint64_t guid, uint8_t port, const char *fmt, va_list ap)
{
	struct he_event *e;

	if (!r->cap)
		return 0;
	if (r->n == r->cap) {
		e = &r->ev[r->head];
		r->head = (r->head + 1) % r->cap;
	} else {
		e = &r->ev[(r->head + r->n) % r->cap];
		r->n++;
	}
	e->seq = r->next_seq++;
	e->time = time;
	e->type = type;
	e->guid = guid;
	e->port = port;
	e->text[0] = '\0';
	if (fmt)
		vsnprintf(e->text, sizeof(e->text), fmt, ap);
	for (char *c = e->text; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	return e->seq;
}

uint64_t he_ring_add(struct he_ring *r, double time, enum he_type type,
		     uint64_t guid, uint8_t port, const char *fmt, ...)
{
	va_list ap;
	uint64_t seq;

	va_start(ap, fmt);
	seq = he_ring_vadd(r, time, type, guid, port, fmt, ap);
	va_end(ap);
	return seq;
}

/* The i-th oldest event held. */
static const struct he_event *at(const struct he_ring *r, size_t i)
{
	return &r->ev[(r->head + i) % r->cap];
}

const struct he_event *he_ring_next(const struct he_ring *r, uint64_t *cursor)
{
	uint64_t first;
	const struct he_event *e;

	if (!r->n || *cursor >= r->next_seq)
		return NULL;
	first = at(r, 0)->seq;
	if (*cursor < first)
		*cursor = first;
	/* seqs are consecutive in the ring */
	e = at(r, (size_t)(*cursor - first));
	*cursor = e->seq + 1;
	return e;
}

uint64_t he_ring_since(const struct he_ring *r, double since)
{
	size_t lo = 0, hi = r->n;

	/* times are added in order (the caller's clock); a clock stepped
	 * back only makes the search land a little off, never outside */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (at(r, mid)->time < since)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n ? at(r, lo)->seq : r->next_seq;
}

const char *he_type_name(enum he_type t)
{
	static const char *const names[HE_N_TYPES] = {
		[HE_LINK_UP] = "link_up", [HE_LINK_DOWN] = "link_down",
		[HE_NODE_IN] = "node_in", [HE_NODE_OUT] = "node_out",
		[HE_SM_STATE] = "sm_state",
		[HE_FINDING_OPENED] = "finding_opened",
		[HE_FINDING_CLOSED] = "finding_closed",
	};

	return (unsigned)t < HE_N_TYPES ? names[t] : "?";
}
