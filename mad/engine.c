/*
 * engine.c - the MAD transaction engine (see engine.h).
 *
 * Life of a request:
 *
 *   QUEUED   submitted, waiting for a slot in the SMP or GMP window; lives
 *            on the per-kind FIFO `queue[kind]`.
 *   ON_WIRE  sent at least once; lives in the TID hash and on the wait
 *            list, which is kept in deadline order so that the single
 *            ev_timer only ever looks at its head.  When the deadline
 *            passes the MAD is sent again with the same TID (a late
 *            answer to an earlier attempt completes it just as well)
 *            until `retries` re-sends have been spent.
 *   done     the callback has run with the answer or -ETIMEDOUT; the
 *            request has left every list and its slot went to the next
 *            queued request.
 *
 * Only the low 32 bits of a TID belong to us: the kernel (and umad2sim)
 * write the agent number into the high half.  Those 32 bits are a counter
 * run through a keyed permutation (a 4-round Feistel network on 16-bit
 * halves, key from getrandom()): unique until the counter wraps, and not
 * predictable from the TIDs seen on the wire, so a host cannot forge the
 * answer to a request it did not see.  An answer must also come from the
 * request's destination (from_destination()).
 *
 * SMPs to one destination beyond smps_per_dest wait on that destination's
 * own FIFO (struct dest, in a small hash by path or LID) instead of the
 * kind's; when one of its SMPs completes, the first of them goes back to
 * the head of the SMP queue.  The SMP window itself is `cwnd` (AIMD, see
 * engine.h): grown on answers to first attempts, halved on a lost attempt
 * sent after the last cut.
 *
 * Bounds: each kind's FIFO holds at most max_queued_{smps,gmps} requests
 * (for SMPs counting those waiting for their destination);
 * a submit beyond that fails with -ENOBUFS (counted in `refused`) and the
 * caller decides (a sweep counts a failure, the SA drops a Report).
 */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "mad/engine.h"
#include "mad/sa_wire.h"

#define TID_BUCKETS	4096		/* power of two */
#define DEST_BUCKETS	1024		/* power of two */

/* Performance Management MADs have their own window and queue, so the
 * performance manager's reads never hold back the SA's Reports (GMPs)
 * nor the sweeps' SMPs, however many it has to make. */
enum txn_kind { KIND_SMP = 0, KIND_GMP = 1, KIND_PMA = 2, KIND_N };
enum txn_state { TXN_QUEUED, TXN_ON_WIRE };

struct dest;

struct txn {
	struct txn	*hash_next;	/* TID bucket chain (ON_WIRE) */
	struct dest	*dest;		/* counted there while ON_WIRE */
	uint64_t	 send_seq;	/* of its last attempt */
	struct txn	*prev, *next;	/* queue or wait list */
	uint32_t	 tid;
	enum txn_kind	 kind;
	enum txn_state	 state;
	unsigned	 attempts;	/* sends so far */
	ev_tstamp	 deadline;
	struct mad_addr	 addr;
	mad_done_cb	 cb;
	void		*arg;
	uint16_t	 key_lid;	/* destination window by this LID, or 0 */
	uint8_t		*dr;		/* LID-routed: its directed-route form */
	size_t		 len;
	uint8_t		 mad[MAD_SIZE];
};

static void txn_free(struct txn *t)
{
	free(t->dr);
	free(t);
}

/* A LID-routed request becomes its directed-route form (not on the
 * wire): same TID, a fresh retry budget. */
static void txn_to_dr(struct txn *t)
{
	memcpy(t->mad, t->dr, MAD_SIZE);
	((struct mad_hdr *)t->mad)->tid = htobe64(t->tid);
	free(t->dr);
	t->dr = NULL;
	t->addr = (struct mad_addr){ .lid = 0xffff };
	t->attempts = 0;
}

struct txn_list {
	struct txn *head, *tail;
	unsigned count;
};

/* One destination of SMPs with SMPs on the wire or waiting for it. */
struct dest {
	struct dest	*next;		/* bucket chain */
	uint64_t	 key;
	unsigned	 on_wire;
	double		 wnd;		/* its own window, 1..smps_per_dest */
	uint64_t	 cut_seq;	/* send_seq when it was last halved */
	bool		 lid_broken;	/* a LID-routed SMP to it fell back */
	struct txn_list	 waiting;	/* over the limit, in submit order */
};

/* Destinations kept while idle because their window is reduced. */
#define DEST_KEEP_MAX	65536

struct unsol_handler {
	struct unsol_handler *next;
	uint8_t  mgmt_class, method;
	uint16_t attr_id;
	mad_unsol_cb cb;
	void *arg;
};

struct mad_engine {
	struct ev_loop		*loop;
	mad_mkey_fn		 mkey_fn;	/* M_Key of an SMP's target */
	void			*mkey_arg;
	struct mad_transport	 tr;
	struct mad_engine_opts	 opts;
	struct mad_engine_stats	 stats;
	uint32_t		 tid_ctr;	/* next counter value */
	uint16_t		 tid_key[4];	/* round keys */
	unsigned		 max_queued[KIND_N]; /* per kind */
	struct txn_list		 queue[KIND_N];	/* QUEUED, per kind */
	unsigned		 outstanding[KIND_N];/* ON_WIRE, per kind */
	unsigned		 pma_window;	/* PMA MADs on the wire */
	struct txn_list		 wait;		/* ON_WIRE, deadline order */
	struct txn		*bucket[TID_BUCKETS];
	struct dest		*dests[DEST_BUCKETS];
	unsigned		 dest_waiting;	/* SMPs on dest FIFOs */
	unsigned		 n_dests;
	uint64_t		 flight_seq;	/* send_seq when this flight began */
	unsigned		 flight_lost;	/* SMP attempts lost in it */
	double			 cwnd;		/* the SMP window */
	double			 ssthresh;	/* growth slows above it */
	uint64_t		 send_seq;	/* attempts sent so far */
	uint64_t		 cut_seq;	/* send_seq when last halved */
	/* SMP attempts answered and lost lately (halved together when
	 * their sum passes 8,192): the retry budget's evidence */
	unsigned		 att_ok, att_lost;
	/* On-wire requests per low 16 bits of their TID, read by the
	 * receive side (mad_engine_wire_tids()), on any thread. */
	_Atomic uint16_t	 wire_tids[MAD_TID_FILTER_SIZE];
	ev_timer		 timer;
	struct unsol_handler	*handlers;
	struct unsol_handler	*unmatched;	/* per class, for RMPP */
	bool			 closing;	/* in mad_engine_free() */
};

static void list_remove(struct txn_list *l, struct txn *t)
{
	if (t->prev)
		t->prev->next = t->next;
	else
		l->head = t->next;
	if (t->next)
		t->next->prev = t->prev;
	else
		l->tail = t->prev;
	t->prev = t->next = NULL;
	l->count--;
}

static void list_append(struct txn_list *l, struct txn *t)
{
	t->next = NULL;
	t->prev = l->tail;
	if (l->tail)
		l->tail->next = t;
	else
		l->head = t;
	l->tail = t;
	l->count++;
}

static void list_prepend(struct txn_list *l, struct txn *t)
{
	t->prev = NULL;
	t->next = l->head;
	if (l->head)
		l->head->prev = t;
	else
		l->tail = t;
	l->head = t;
	l->count++;
}

/*
 * Insert into the wait list by deadline.  Deadlines are nearly always the
 * latest (same timeout for every request), so search from the tail.
 */
static void wait_insert(struct mad_engine *e, struct txn *t)
{
	struct txn *after = e->wait.tail;

	while (after && after->deadline > t->deadline)
		after = after->prev;
	if (!after) {
		t->prev = NULL;
		t->next = e->wait.head;
		if (e->wait.head)
			e->wait.head->prev = t;
		else
			e->wait.tail = t;
		e->wait.head = t;
	} else {
		t->prev = after;
		t->next = after->next;
		if (after->next)
			after->next->prev = t;
		else
			e->wait.tail = t;
		after->next = t;
	}
	e->wait.count++;
}

static struct txn **bucket_of(struct mad_engine *e, uint32_t tid)
{
	return &e->bucket[tid & (TID_BUCKETS - 1)];
}

static void hash_remove(struct mad_engine *e, struct txn *t)
{
	struct txn **pp = bucket_of(e, t->tid);

	while (*pp && *pp != t)
		pp = &(*pp)->hash_next;
	if (*pp) {
		*pp = t->hash_next;
		atomic_fetch_sub_explicit(&e->wire_tids[MAD_TID_FILTER_INDEX(t->tid)],
					  1, memory_order_relaxed);
	}
	t->hash_next = NULL;
}

static struct txn *hash_find(struct mad_engine *e, uint32_t tid)
{
	struct txn *t;

	for (t = *bucket_of(e, tid); t; t = t->hash_next)
		if (t->tid == tid)
			return t;
	return NULL;
}

/* Arm the timer for the head of the wait list (or stop it). */
static void timer_rearm(struct mad_engine *e)
{
	ev_timer_stop(e->loop, &e->timer);
	if (!e->wait.head)
		return;
	ev_tstamp in = e->wait.head->deadline - ev_now(e->loop);
	ev_timer_set(&e->timer, in > 0 ? in : 0, 0.);
	ev_timer_start(e->loop, &e->timer);
}

/* Count an SMP attempt's outcome for the retry budget. */
static void attempt_seen(struct mad_engine *e, const struct txn *t, bool ok)
{
	if (t->kind != KIND_SMP)
		return;
	if (ok)
		e->att_ok++;
	else
		e->att_lost++;
	if (e->att_ok + e->att_lost > 8192) {
		e->att_ok /= 2;
		e->att_lost /= 2;
	}
}

/* Whether the recent SMP attempts say "lossy but alive". */
static bool fabric_lossy(const struct mad_engine *e)
{
	return e->att_ok >= ENGINE_LOSSY_EVIDENCE &&
	       (uint64_t)e->att_lost * 1000 >=
	       (uint64_t)(e->att_ok + e->att_lost) * ENGINE_LOSSY_PERMILLE;
}

/* Re-sends `t` may have, as things look now.  A LID-routed SMP gets
 * one: its loss more likely means a broken route than a lossy one, and
 * it falls back to directed route with a budget of its own. */
static unsigned budget_of(const struct mad_engine *e, const struct txn *t)
{
	if (t->dr || t->kind == KIND_PMA)
		return e->opts.retries < 1 ? e->opts.retries : 1;
	if (t->kind == KIND_SMP && fabric_lossy(e) &&
	    e->opts.retries < ENGINE_LOSSY_RETRIES)
		return ENGINE_LOSSY_RETRIES;
	return e->opts.retries;
}

/* May `t`, just lost, be sent again?  See ENGINE_LOSSY_RETRIES. */
static bool may_resend(struct mad_engine *e, const struct txn *t)
{
	unsigned budget = budget_of(e, t);

	if (t->attempts > budget)
		return false;
	if (t->attempts > e->opts.retries)
		e->stats.lossy_resends++;
	return true;
}

static void txn_send(struct mad_engine *e, struct txn *t)
{
	t->attempts++;
	e->stats.sent++;
	if (t->kind == KIND_SMP)
		e->stats.smps_sent++;
	if (((const struct mad_hdr *)t->mad)->mgmt_class == MAD_CLASS_SMI)
		e->stats.smps_lid++;
	if (t->attempts > 1)
		e->stats.resends++;
	t->send_seq = ++e->send_seq;
	/* The clock now, not the loop's time of this iteration: a send
	 * after a long computation in the same callback (routing a large
	 * fabric) would otherwise be due before its answer can come. */
	t->deadline = ev_time() + e->opts.timeout_ms / 1000.0;
	/*
	 * A failed send is an attempt lost on the wire: the deadline will
	 * retry it.  The kernel needs a timeout to match the answer to the
	 * send; it gets the whole retry budget, so its own timeout report can
	 * only come after our last deadline (and then matches nothing),
	 * never in the middle of our retries as a second "lost" signal.
	 */
	(void)e->tr.send(e->tr.ctx, t->mad, t->len, &t->addr,
			 (int)(e->opts.timeout_ms * (budget_of(e, t) + 1)));
}

static unsigned window_of(const struct mad_engine *e, enum txn_kind k)
{
	return k == KIND_SMP ? e->stats.window :
	       k == KIND_PMA ? e->pma_window : e->opts.max_wire_gmps;
}

/* ------------------------------------------------- the adaptive window */

static bool window_adapts(const struct mad_engine *e)
{
	return e->opts.smp_window_max > e->opts.max_wire_smps;
}

static void window_set(struct mad_engine *e, double w)
{
	double lo = e->opts.max_wire_smps;
	double hi = window_adapts(e) ? e->opts.smp_window_max : lo;

	e->cwnd = w < lo ? lo : w > hi ? hi : w;
	e->stats.window = (unsigned)e->cwnd;
	if (e->stats.window > e->stats.window_high)
		e->stats.window_high = e->stats.window;
	if (e->stats.window < e->stats.window_low)
		e->stats.window_low = e->stats.window;
}

/*
 * An SMP answered on its first attempt: the fabric keeps up.  Both the
 * window and the destination's grow: by one per answer until the first
 * loss (slow start), then by one per window of answers.
 */
static void window_grow(struct mad_engine *e, const struct txn *t)
{
	struct dest *d = t->dest;

	if (t->kind != KIND_SMP || t->attempts != 1)
		return;
	if (d && d->wnd < e->opts.smps_per_dest) {
		d->wnd += 1 / d->wnd;
		if (d->wnd > e->opts.smps_per_dest)
			d->wnd = e->opts.smps_per_dest;
	}
	if (window_adapts(e))
		window_set(e, e->cwnd < e->ssthresh ? e->cwnd + 1 :
			   e->cwnd + 1 / e->cwnd);
}

/*
 * An attempt of `t` was lost.  Its destination's window halves (once for
 * what was on the wire to it together): a switch that drops SMPs gets
 * fewer at a time, while the others keep theirs.  The SMP window halves
 * when more than a quarter of one window's worth of attempts is lost at
 * destinations not yet throttled: loss everywhere, or at the switch every
 * SMP crosses first, not one bad switch nor a few random drops.
 */
static void window_cut(struct mad_engine *e, const struct txn *t)
{
	struct dest *d = t->dest;
	/* a loss where the destination is already throttled is explained
	 * by that destination: it does not count toward the SMP window */
	bool counts = !d || d->wnd >= e->opts.smps_per_dest;

	if (t->kind != KIND_SMP)
		return;
	if (d && t->send_seq > d->cut_seq) {
		d->cut_seq = e->send_seq;
		d->wnd = d->wnd / 2 < 1 ? 1 : d->wnd / 2;
		e->stats.dest_cuts++;
	}
	if (!counts || !window_adapts(e) || t->send_seq <= e->cut_seq)
		return;
	if (e->send_seq - e->flight_seq > e->stats.window) {
		e->flight_seq = e->send_seq;	/* a new flight */
		e->flight_lost = 0;
	}
	if (++e->flight_lost * 4 <= e->stats.window)
		return;
	e->cut_seq = e->flight_seq = e->send_seq;
	e->flight_lost = 0;
	e->stats.window_cuts++;
	window_set(e, e->cwnd / 2);
	e->ssthresh = e->cwnd;
}

/* ------------------------------------------------------- destinations */

static struct dest **dest_slot(struct mad_engine *e, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;
	struct dest **pp = &e->dests[(h >> 40) & (DEST_BUCKETS - 1)];

	while (*pp && (*pp)->key != key)
		pp = &(*pp)->next;
	return pp;
}

/* Where an SMP goes: its directed-route path, or its LID. */
static uint64_t dest_key_of(const void *mad, size_t len,
			    const struct mad_addr *addr)
{
	const struct mad_hdr *h = mad;

	if (h->mgmt_class == MAD_CLASS_SMI_DR && len >= MAD_SIZE) {
		const struct smp_dr *smp = mad;
		unsigned hops = smp_dr_hop_cnt(smp);
		uint64_t x = 0xcbf29ce484222325ull ^ hops;	/* FNV-1a */

		if (hops > 63)
			hops = 63;
		for (unsigned i = 1; i <= hops; i++)
			x = (x ^ smp->initial_path[i]) * 0x100000001b3ull;
		/* a DR path to a LID-routed part: the DLID counts too */
		return (x ^ be16toh(smp->dr_dlid)) | 1ull << 63;
	}
	return addr->lid;
}

static uint64_t dest_key(const struct txn *t)
{
	if (t->key_lid)		/* a node's SMPs, LID-routed or DR */
		return t->key_lid;
	return dest_key_of(t->mad, t->len, &t->addr);
}

unsigned mad_engine_dests_throttled(const struct mad_engine *e)
{
	unsigned n = 0;

	for (size_t b = 0; b < DEST_BUCKETS; b++)
		for (const struct dest *d = e->dests[b]; d; d = d->next)
			n += d->wnd < e->opts.smps_per_dest;
	return n;
}

unsigned mad_engine_dest_window(struct mad_engine *e, const void *mad,
				size_t len, const struct mad_addr *addr)
{
	const struct dest *d = *dest_slot(e, dest_key_of(mad, len, addr));

	return d ? (unsigned)d->wnd : e->opts.smps_per_dest;
}


/* Count `t` against its destination; false when it must wait (it is
 * then on the destination's FIFO). */
static bool dest_admit(struct mad_engine *e, struct txn *t)
{
	uint64_t key = dest_key(t);
	struct dest **pp = dest_slot(e, key), *d = *pp;

	if (!d) {
		d = calloc(1, sizeof(*d));
		if (!d)		/* no memory: send it uncounted */
			return true;
		d->key = key;
		d->wnd = e->opts.smps_per_dest;
		*pp = d;
		e->n_dests++;
	}
	/* its LID route failed lately: directed route at once */
	if (d->lid_broken && t->dr) {
		txn_to_dr(t);
		e->stats.lid_fallbacks++;
	}
	if (d->on_wire >= (unsigned)d->wnd) {
		list_append(&d->waiting, t);
		e->dest_waiting++;
		e->stats.dest_waits++;
		return false;
	}
	d->on_wire++;
	t->dest = d;
	return true;
}

/* `t` left the wire: the first SMP waiting for its destination goes to
 * the head of the queue; an idle destination is forgotten. */
static void dest_release(struct mad_engine *e, struct txn *t)
{
	struct dest *d = t->dest, **pp;

	if (!d)
		return;
	t->dest = NULL;
	d->on_wire--;
	if (d->waiting.head) {
		struct txn *w = d->waiting.head;

		list_remove(&d->waiting, w);
		e->dest_waiting--;
		list_prepend(&e->queue[KIND_SMP], w);
		return;
	}
	/* an idle one is forgotten unless it is throttled */
	if (d->on_wire || (d->wnd < e->opts.smps_per_dest &&
			   e->n_dests <= DEST_KEEP_MAX))
		return;
	pp = dest_slot(e, d->key);
	*pp = d->next;
	e->n_dests--;
	free(d);
}

/* Move queued requests onto the wire while the windows have room. */
static void pump(struct mad_engine *e)
{
	bool sent = false;

	for (int k = 0; k < KIND_N; k++) {
		while (e->queue[k].head && e->outstanding[k] < window_of(e, k)) {
			struct txn *t = e->queue[k].head;

			list_remove(&e->queue[k], t);
			if (k == KIND_SMP && e->opts.smps_per_dest &&
			    !dest_admit(e, t))
				continue;
			t->state = TXN_ON_WIRE;
			t->hash_next = *bucket_of(e, t->tid);
			*bucket_of(e, t->tid) = t;
			/* Counted before it is sent: its answer can only
			 * come after. */
			atomic_fetch_add_explicit(&e->wire_tids[MAD_TID_FILTER_INDEX(t->tid)],
						  1, memory_order_relaxed);
			e->outstanding[k]++;
			unsigned total = e->outstanding[0] + e->outstanding[1] +
					 e->outstanding[2];
			if (total > e->stats.max_outstanding)
				e->stats.max_outstanding = total;
			txn_send(e, t);
			wait_insert(e, t);
			sent = true;
		}
	}
	if (sent && !ev_is_active(&e->timer))
		timer_rearm(e);
}

/* Take an ON_WIRE request off every list; the caller completes it. */
static void txn_unlink(struct mad_engine *e, struct txn *t)
{
	hash_remove(e, t);
	list_remove(&e->wait, t);
	e->outstanding[t->kind]--;
	dest_release(e, t);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct mad_engine *e = w->data;
	ev_tstamp now = ev_now(loop);
	/* Requests that failed for good are completed after the scan, so a
	 * callback that submits new work cannot disturb it. */
	struct txn_list failed = { 0 };

	while (e->wait.head && e->wait.head->deadline <= now + 1e-4) {
		struct txn *t = e->wait.head;

		list_remove(&e->wait, t);
		window_cut(e, t);
		attempt_seen(e, t, false);
		if (may_resend(e, t)) {
			txn_send(e, t);
			wait_insert(e, t);
		} else if (t->dr) {
			/* A LID-routed SMP lost every attempt: the route may
			 * be broken.  Once more as directed route, fresh
			 * budget, same TID (a late LID-routed answer no
			 * longer matches its class and is dropped). */
			hash_remove(e, t);
			e->outstanding[t->kind]--;
			/* The SMPs waiting for the same node would each
			 * wait out their retries too: they go DR now, and
			 * so do later ones while the node is remembered. */
			if (t->dest) {
				t->dest->lid_broken = true;
				for (struct txn *q = t->dest->waiting.head; q; q = q->next)
					if (q->dr) {
						txn_to_dr(q);
						e->stats.lid_fallbacks++;
					}
			}
			dest_release(e, t);
			txn_to_dr(t);
			t->state = TXN_QUEUED;
			e->stats.lid_fallbacks++;
			list_prepend(&e->queue[KIND_SMP], t);
		} else {
			hash_remove(e, t);
			e->outstanding[t->kind]--;
			dest_release(e, t);
			e->stats.timeouts++;
			list_append(&failed, t);
		}
	}
	timer_rearm(e);
	while (failed.head) {
		struct txn *t = failed.head;

		list_remove(&failed, t);
		t->cb(t->arg, -ETIMEDOUT, NULL, 0);
		txn_free(t);
	}
	pump(e);
}

int mad_engine_new(struct mad_engine **out, struct ev_loop *loop,
		   const struct mad_transport *tr,
		   const struct mad_engine_opts *opts)
{
	struct mad_engine *e;

	if (!opts->max_wire_smps || !opts->max_wire_gmps || !opts->timeout_ms)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->loop = loop;
	e->tr = *tr;
	e->opts = *opts;
	e->max_queued[KIND_SMP] = ENGINE_MAX_QUEUED_SMPS;
	e->max_queued[KIND_GMP] = ENGINE_MAX_QUEUED_GMPS;
	e->max_queued[KIND_PMA] = ENGINE_MAX_QUEUED_PMAS;
	e->pma_window = opts->max_wire_pmas ? opts->max_wire_pmas :
			opts->max_wire_gmps;
	/* A random key and start, so TIDs differ from run to run and
	 * cannot be predicted from one another. */
	uint8_t seed[12];
	if (getrandom(seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 30 ^
			     (uint64_t)getpid() << 17 ^ (uintptr_t)e;
		for (size_t i = 0; i < sizeof(seed); i++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			seed[i] = (uint8_t)(x >> 56);
		}
	}
	memcpy(e->tid_key, seed, sizeof(e->tid_key));
	memcpy(&e->tid_ctr, seed + 8, sizeof(e->tid_ctr));
	ev_timer_init(&e->timer, on_timer, 0., 0.);
	e->timer.data = e;
	e->stats.window_low = e->stats.window_high = opts->max_wire_smps;
	e->ssthresh = opts->smp_window_max;	/* grow fast until a loss */
	window_set(e, opts->max_wire_smps);
	*out = e;
	return 0;
}

void mad_engine_set_pma_window(struct mad_engine *e, unsigned window)
{
	e->pma_window = window ? window : 1;
	pump(e);
}

void mad_engine_set_queue_limits(struct mad_engine *e, unsigned max_smps,
				 unsigned max_gmps)
{
	if (max_smps)
		e->max_queued[KIND_SMP] = max_smps;
	if (max_gmps)
		e->max_queued[KIND_GMP] = max_gmps;
}

static void fail_list(struct mad_engine *e, struct txn_list *l)
{
	while (l->head) {
		struct txn *t = l->head;

		list_remove(l, t);
		t->cb(t->arg, -ECANCELED, NULL, 0);
		txn_free(t);
	}
}

void mad_engine_free(struct mad_engine *e)
{
	if (!e)
		return;
	/* Callbacks of cancelled requests must not queue new ones. */
	e->closing = true;
	ev_timer_stop(e->loop, &e->timer);
	memset(e->bucket, 0, sizeof(e->bucket));
	fail_list(e, &e->wait);
	fail_list(e, &e->queue[KIND_SMP]);
	fail_list(e, &e->queue[KIND_GMP]);
	fail_list(e, &e->queue[KIND_PMA]);
	for (size_t b = 0; b < DEST_BUCKETS; b++)
		while (e->dests[b]) {
			struct dest *d = e->dests[b];

			e->dests[b] = d->next;
			fail_list(e, &d->waiting);
			free(d);
		}
	for (int i = 0; i < 2; i++) {
		struct unsol_handler **list = i ? &e->unmatched : &e->handlers;

		while (*list) {
			struct unsol_handler *h = *list;

			*list = h->next;
			free(h);
		}
	}
	free(e);
}

static bool is_smp_class(uint8_t c)
{
	return c == MAD_CLASS_SMI || c == MAD_CLASS_SMI_DR;
}

/* The method a response to `method` carries (13.4.5, table 106). */
static uint8_t response_method(uint8_t method)
{
	if (method == MAD_METHOD_SET)
		return MAD_METHOD_GET | MAD_METHOD_RESP;
	if (method == MAD_METHOD_TRAP)
		return MAD_METHOD_TRAP_REPRESS;
	return method | MAD_METHOD_RESP;
}

/* A bijection of 32-bit values under the engine's key. */
static uint32_t tid_permute(const uint16_t key[4], uint32_t x)
{
	uint16_t l = (uint16_t)(x >> 16), r = (uint16_t)x;

	for (int i = 0; i < 4; i++) {
		uint32_t f = (uint32_t)(r ^ key[i]) * 0x9e3779b1u;

		f ^= f >> 15;
		f *= 0x85ebca77u;
		f ^= f >> 13;
		uint16_t nr = (uint16_t)(l ^ (f >> 16));
		l = r;
		r = nr;
	}
	return (uint32_t)l << 16 | r;
}

static int submit_txn(struct mad_engine *e, const void *mad, size_t len,
		      const struct mad_addr *addr, mad_done_cb cb, void *arg,
		      uint16_t key_lid, const struct smp_dr *dr)
{
	const struct mad_hdr *h = mad;
	struct txn *t;

	if (e->closing)
		return -ECANCELED;
	if (len < MAD_HDR_SIZE || len > MAD_SIZE || !cb)
		return -EINVAL;
	if (h->method & MAD_METHOD_RESP || h->method == MAD_METHOD_TRAP_REPRESS)
		return -EINVAL;
	enum txn_kind kind = is_smp_class(h->mgmt_class) ? KIND_SMP :
			     h->mgmt_class == MAD_CLASS_PERF ? KIND_PMA : KIND_GMP;
	if (e->queue[kind].count + (kind == KIND_SMP ? e->dest_waiting : 0) >=
	    e->max_queued[kind]) {
		e->stats.refused++;
		return -ENOBUFS;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (dr) {
		t->dr = malloc(MAD_SIZE);
		if (!t->dr) {
			free(t);
			return -ENOMEM;
		}
		memcpy(t->dr, dr, MAD_SIZE);
	}
	t->key_lid = key_lid;
	memcpy(t->mad, mad, len);
	t->len = len;
	t->addr = *addr;
	t->cb = cb;
	t->arg = arg;
	t->kind = kind;
	t->state = TXN_QUEUED;
	/* Skip TIDs still in use after a wrap-around (practically never). */
	do {
		t->tid = tid_permute(e->tid_key, e->tid_ctr++);
	} while (t->tid == 0 || hash_find(e, t->tid));
	((struct mad_hdr *)t->mad)->tid = htobe64(t->tid);
	list_append(&e->queue[kind], t);
	pump(e);
	if (kind != KIND_PMA &&
	    e->queue[kind].count > e->stats.max_queued[kind])
		e->stats.max_queued[kind] = e->queue[kind].count;
	return 0;
}

void mad_engine_set_mkey(struct mad_engine *e, mad_mkey_fn fn, void *arg)
{
	e->mkey_fn = fn;
	e->mkey_arg = arg;
}

int mad_engine_submit(struct mad_engine *e, const void *mad, size_t len,
		      const struct mad_addr *addr, mad_done_cb cb, void *arg)
{
	struct smp_lid keyed;

	/* a LID-routed SMP: the M_Key of the port at that LID */
	if (e->mkey_fn && len == MAD_SIZE &&
	    ((const struct mad_hdr *)mad)->mgmt_class == MAD_CLASS_SMI) {
		memcpy(&keyed, mad, MAD_SIZE);
		keyed.mkey = htobe64(e->mkey_fn(e->mkey_arg, NULL, 0,
						addr->lid));
		mad = &keyed;
	}
	return submit_txn(e, mad, len, addr, cb, arg, 0, NULL);
}

int mad_engine_submit_smp(struct mad_engine *e, const struct smp_dr *smp,
			  uint16_t lid, bool by_lid, mad_done_cb cb, void *arg)
{
	struct mad_addr dr_addr = { .lid = 0xffff };
	struct mad_addr lid_addr = { .lid = lid };
	struct smp_lid l;
	struct smp_dr keyed;

	if (smp->hdr.mgmt_class != MAD_CLASS_SMI_DR)
		return -EINVAL;
	if (e->mkey_fn) {
		unsigned hops = smp_dr_hop_cnt(smp);

		keyed = *smp;
		keyed.mkey = htobe64(e->mkey_fn(e->mkey_arg, smp->initial_path,
						hops > SMP_MAX_HOPS ? SMP_MAX_HOPS : hops,
						lid));
		smp = &keyed;
	}
	if (!lid || lid >= 0xc000)	/* not a unicast LID */
		lid = 0, by_lid = false;
	if (!by_lid)
		return submit_txn(e, smp, MAD_SIZE, &dr_addr, cb, arg, lid, NULL);
	/* The same request LID-routed (14.2.1.1): no DR fields, the
	 * reserved bytes where the paths were are zero. */
	memset(&l, 0, sizeof(l));
	l.hdr = smp->hdr;
	l.hdr.mgmt_class = MAD_CLASS_SMI;
	l.hdr.status = 0;
	l.hdr.class_specific = 0;
	l.mkey = smp->mkey;
	memcpy(l.data, smp->data, SMP_DATA_SIZE);
	return submit_txn(e, &l, MAD_SIZE, &lid_addr, cb, arg, lid, smp);
}

int mad_engine_send_oneway(struct mad_engine *e, const void *mad, size_t len,
			   const struct mad_addr *addr)
{
	if (len < MAD_HDR_SIZE || len > MAD_SIZE)
		return -EINVAL;
	e->stats.sent++;
	if (is_smp_class(((const struct mad_hdr *)mad)->mgmt_class))
		e->stats.smps_sent++;
	return e->tr.send(e->tr.ctx, mad, len, addr, 0);
}

int mad_engine_on_unsolicited(struct mad_engine *e, uint8_t mgmt_class,
			      uint8_t method, uint16_t attr_id,
			      mad_unsol_cb cb, void *arg)
{
	struct unsol_handler *h = calloc(1, sizeof(*h));

	if (!h)
		return -ENOMEM;
	h->mgmt_class = mgmt_class;
	h->method = method;
	h->attr_id = attr_id;
	h->cb = cb;
	h->arg = arg;
	h->next = e->handlers;
	e->handlers = h;
	return 0;
}

int mad_engine_on_unmatched(struct mad_engine *e, uint8_t mgmt_class,
			    mad_unsol_cb cb, void *arg)
{
	struct unsol_handler *h;

	for (h = e->unmatched; h; h = h->next)
		if (h->mgmt_class == mgmt_class)
			return -EEXIST;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->mgmt_class = mgmt_class;
	h->cb = cb;
	h->arg = arg;
	h->next = e->unmatched;
	e->unmatched = h;
	return 0;
}

int mad_validate(const void *mad, size_t len)
{
	const struct mad_hdr *h = mad;

	if (!mad || len < MAD_HDR_SIZE || len > MAD_SIZE)
		return -EBADMSG;
	if (h->base_version != 1)
		return -EPROTO;
	switch (h->mgmt_class) {
	case MAD_CLASS_SMI:
	case MAD_CLASS_SMI_DR:
		if (len != MAD_SIZE || h->class_version != 1)
			return -EPROTO;
		if (h->mgmt_class == MAD_CLASS_SMI_DR) {
			const struct smp_dr *s = mad;

			if (smp_dr_hop_cnt(s) > SMP_MAX_HOPS ||
			    smp_dr_hop_ptr(s) > smp_dr_hop_cnt(s) + 1)
				return -EPROTO;
		}
		break;
	case MAD_CLASS_SA:
		if (h->class_version != 2)
			return -EPROTO;
		break;
	default:
		break;
	}
	return 0;
}

static void dispatch_unsolicited(struct mad_engine *e, const void *mad,
				 size_t len, const struct mad_addr *from)
{
	const struct mad_hdr *h = mad;
	uint16_t attr = be16toh(h->attr_id);

	struct unsol_handler *any = NULL;

	/* The most specific handler wins (exact method and attribute, then
	 * either one a wildcard), whatever the registration order. */
	int best = -1;
	for (struct unsol_handler *u = e->handlers; u; u = u->next) {
		if (u->mgmt_class != h->mgmt_class)
			continue;
		bool meth = u->method == h->method, att = u->attr_id == attr;
		if ((!meth && u->method != 0xff) || (!att && u->attr_id != 0xffff))
			continue;
		int score = meth * 2 + att;
		if (score > best) {
			best = score;
			any = u;
		}
	}
	if (any) {
		e->stats.unsolicited++;
		any->cb(any->arg, mad, len, from);
		return;
	}
	e->stats.dropped++;
}

/*
 * Does the answer's AttributeID fit the request's?  The same, except that
 * SubnAdmGetMultiResp answers a GetMulti(MultiPathRecord) with PathRecords
 * (IBA 15.2.5.20), and OpenSM names them so in AttributeID.
 */
static bool response_attr_ok(const struct mad_hdr *req, const struct mad_hdr *h)
{
	if (h->attr_id == req->attr_id)
		return true;
	return req->mgmt_class == MAD_CLASS_SA &&
	       req->method == MAD_METHOD_GETMULTI &&
	       be16toh(req->attr_id) == SA_ATTR_MULTIPATH_RECORD &&
	       be16toh(h->attr_id) == SA_ATTR_PATH_RECORD;
}

/*
 * Did this answer come from where the request went?  A directed-route
 * SMP comes back along the same path (14.2.2.2: the responder keeps
 * InitialPath and HopCount and sets the D bit); a LID-routed SMP from the
 * destination LID; a GMP from the destination LID and QP.  A request to
 * the permissive LID (LID-routed) can be answered by whoever is there.
 */
static bool from_destination(const struct txn *t, const void *mad,
			     const struct mad_addr *from)
{
	const struct mad_hdr *h = mad;

	if (h->mgmt_class == MAD_CLASS_SMI_DR) {
		const struct smp_dr *rq = (const struct smp_dr *)t->mad;
		const struct smp_dr *r = mad;
		unsigned hops = smp_dr_hop_cnt(rq);

		return smp_dr_hop_cnt(r) == hops &&
		       (be16toh(r->hdr.status) & SMP_DR_DIRECTION) &&
		       !memcmp(r->initial_path + 1, rq->initial_path + 1, hops);
	}
	if (t->addr.lid == 0xffff)
		return true;
	if (from->lid != t->addr.lid)
		return false;
	return h->mgmt_class == MAD_CLASS_SMI || from->qpn == t->addr.qpn;
}

void mad_engine_recv(struct mad_engine *e, const void *mad, size_t len,
		     const struct mad_addr *from, int status)
{
	const struct mad_hdr *h = mad;
	struct txn *t;

	if (mad_validate(mad, len) < 0) {
		e->stats.dropped++;
		return;
	}
	bool is_resp = (h->method & MAD_METHOD_RESP) ||
		       h->method == MAD_METHOD_TRAP_REPRESS;
	if (!is_resp && !status) {
		dispatch_unsolicited(e, mad, len, from);
		return;
	}
	t = hash_find(e, (uint32_t)be64toh(h->tid));
	if (!t) {
		for (struct unsol_handler *u = e->unmatched; u; u = u->next) {
			if (u->mgmt_class == h->mgmt_class && !status) {
				u->cb(u->arg, mad, len, from);
				return;
			}
		}
		e->stats.unmatched++;
		return;
	}
	const struct mad_hdr *req = (const struct mad_hdr *)t->mad;
	if (status) {
		/* The attempt was lost (ibsim reports a dropped MAD at once
		 * with status 110): resend at once if the budget allows, else
		 * let the deadline fail it. */
		window_cut(e, t);
		attempt_seen(e, t, false);
		if (may_resend(e, t)) {
			list_remove(&e->wait, t);
			txn_send(e, t);
			wait_insert(e, t);
			timer_rearm(e);
		}
		return;
	}
	if (h->mgmt_class != req->mgmt_class || !response_attr_ok(req, h) ||
	    h->method != response_method(req->method)) {
		e->stats.dropped++;
		return;
	}
	if (!from_destination(t, mad, from)) {
		e->stats.misrouted++;
		return;
	}
	bool was_head = e->wait.head == t;
	window_grow(e, t);
	attempt_seen(e, t, true);
	txn_unlink(e, t);
	if (was_head)
		timer_rearm(e);
	e->stats.answered++;
	t->cb(t->arg, 0, mad, len);
	txn_free(t);
	pump(e);
}

const _Atomic uint16_t *mad_engine_wire_tids(const struct mad_engine *e)
{
	return e->wire_tids;
}

unsigned mad_engine_pending(const struct mad_engine *e)
{
	return e->queue[0].count + e->queue[1].count + e->queue[2].count +
	       e->dest_waiting +
	       e->outstanding[0] + e->outstanding[1] + e->outstanding[2];
}

const struct mad_engine_stats *mad_engine_stats(const struct mad_engine *e)
{
	return &e->stats;
}

static void build_hdr(struct mad_hdr *h, uint8_t mgmt_class, uint8_t method,
		      uint16_t attr_id, uint32_t attr_mod)
{
	h->base_version = 1;
	h->mgmt_class = mgmt_class;
	h->class_version = 1;
	h->method = method;
	h->attr_id = htobe16(attr_id);
	h->attr_mod = htobe32(attr_mod);
}

void mad_build_smp_dr(struct smp_dr *smp, uint8_t method, uint16_t attr_id,
		      uint32_t attr_mod, const uint8_t *path, unsigned hops)
{
	memset(smp, 0, sizeof(*smp));
	build_hdr(&smp->hdr, MAD_CLASS_SMI_DR, method, attr_id, attr_mod);
	if (hops > SMP_MAX_HOPS)
		hops = SMP_MAX_HOPS;
	/* Outbound from the SM: hop pointer 0, both DR LIDs permissive. */
	smp_dr_set_hops(smp, 0, (uint8_t)hops);
	smp->dr_slid = htobe16(0xffff);
	smp->dr_dlid = htobe16(0xffff);
	if (hops)
		memcpy(smp->initial_path + 1, path + 1, hops);
}

void mad_build_smp_lid(struct smp_lid *smp, uint8_t method, uint16_t attr_id,
		       uint32_t attr_mod)
{
	memset(smp, 0, sizeof(*smp));
	build_hdr(&smp->hdr, MAD_CLASS_SMI, method, attr_id, attr_mod);
}
