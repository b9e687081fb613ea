/*
 * events.h - a bounded in-memory history of what happened to the fabric:
 * links up and down, nodes in and out, SM state changes, findings opened
 * and closed.  The oldest event goes when the ring is full.
 *
 * Pure: no I/O.  The daemon (sm/health/) adds events, appends them to
 * the event file in the dump directory (keeping a cursor of what it
 * wrote) and answers `ibsmctl events --since T` from here.
 */
#ifndef IBSM_HEALTH_EVENTS_H
#define IBSM_HEALTH_EVENTS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

enum he_type {
	HE_LINK_UP,
	HE_LINK_DOWN,
	HE_NODE_IN,
	HE_NODE_OUT,
	HE_SM_STATE,		/* text: the new state */
	HE_FINDING_OPENED,	/* text: the finding's kind and text */
	HE_FINDING_CLOSED,
	HE_N_TYPES
};

#define HE_TEXT_SIZE	192

struct he_event {
	uint64_t seq;		/* 1, 2, ... in the order added */
	double   time;		/* the caller's clock, seconds */
	enum he_type type;
	uint64_t guid;		/* node GUID, 0: none */
	uint8_t  port;
	char     text[HE_TEXT_SIZE];
};

struct he_ring {
	struct he_event *ev;
	size_t cap;
	size_t n;		/* events held, <= cap */
	size_t head;		/* slot of the oldest */
	uint64_t next_seq;	/* seq of the next event added */
};

/* A ring of `cap` (>= 1) events.  0 or -ENOMEM / -EINVAL. */
int he_ring_init(struct he_ring *r, size_t cap);
void he_ring_free(struct he_ring *r);

/* Add an event (text printf-style, cut to fit; fmt may be NULL).  The
 * oldest is dropped when the ring is full.  Returns the event's seq. */
uint64_t he_ring_add(struct he_ring *r, double time, enum he_type type,
		     uint64_t guid, uint8_t port, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
uint64_t he_ring_vadd(struct he_ring *r, double time, enum he_type type,
		      uint64_t guid, uint8_t port, const char *fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));

/*
 * Iteration: *cursor is a seq.  he_ring_next() returns the oldest event
 * held whose seq is >= *cursor and moves *cursor past it, or NULL when
 * there is none (events already dropped are skipped: compare the seq
 * returned with the cursor to tell that some were lost).  A writer
 * keeps its cursor between calls; start at 0 for everything held.
 */
const struct he_event *he_ring_next(const struct he_ring *r, uint64_t *cursor);

/* The cursor of the first event held at or after `since` (time); the
 * seq after the newest when there is none. */
uint64_t he_ring_since(const struct he_ring *r, double since);

/* Stable names: "link_up", "link_down", "node_in", "node_out",
 * "sm_state", "finding_opened", "finding_closed"; "?" out of range. */
const char *he_type_name(enum he_type t);

#endif /* IBSM_HEALTH_EVENTS_H */
