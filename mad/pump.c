/*
 * pump.c - the receive pump and its hand-over to the loop (see
 * pump.h).
 *
 * The thread: block in recv() for one MAD, take whatever else is already
 * there without waiting, queue them (or count them dropped, by the rules
 * of mad/rxq.h), wake the loop once.  The loop: deliver up to PUMP_BATCH
 * MADs per wake-up, in arrival order, and wake itself again if more are
 * queued, so that a flood cannot hold the loop away from its timers.
 *
 * fd mode (pump_start_fd()): no thread.  The loop watches a real
 * descriptor; when it is readable the loop takes one round itself (the
 * same queue, rules and error back-off, without waiting) and delivers.
 *
 * Waker mode (pump_start_waker()): fd mode for a descriptor epoll cannot
 * watch.  A thread waits for it to become readable, only while the loop
 * has asked it to (armed), and then wakes the loop, which takes the MADs
 * itself as in fd mode: round after round while some are left, arming
 * the waker again once a round finds none.  While the loop is busy the
 * thread sleeps, so a burst of MADs costs no thread hand-over each.
 * Before arming, the loop waits PUMP_LINGER_MS for the next MAD itself:
 * under umad2sim the hand-over (the waker's wake-up, its eventfd write,
 * the loop's epoll) cost more than the MAD's own work when MADs come one
 * by one (SA requests, SMP answers through a window), and a cold 4,608-
 * host bring-up took 10% less wall and CPU with the linger.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/pump.h"

#define RECV_BATCH	64	/* MADs taken per wake-up of the loop */

struct pump {
	struct ev_loop	*loop;
	pump_recv_fn	 recv;
	void		*recv_ctx;
	pump_deliver_cb	 deliver;
	void		*arg;
	pump_error_cb	 err_cb;
	void		*err_arg;
	pthread_t	 thread;
	bool		 thread_started;
	int		 fd;		/* fd mode: watched by the loop, or -1 */
	ev_io		 readable;	/* fd mode: the fd has MADs */
	ev_timer	 resume;	/* fd mode: watch again after a back-off;
					 * waker mode: take another round */
	pump_wait_fn	 wait;		/* waker mode, or NULL */
	int		 linger_ms;	/* waker mode: the loop's own wait */
	_Atomic uint64_t lingers, linger_hits;	/* written by the loop */
	pthread_cond_t	 arm_cv;	/* waker mode: `armed` became true */
	bool		 armed;		/* waker mode, under lock */
	atomic_bool	 stop;
	ev_async	 wake;
	ev_timer	 more;		/* deliver the rest next iteration */
	pthread_mutex_t	 lock;		/* everything below */
	struct rxq	 q;
	uint64_t	 recv_errors;
	int		 last_error;
	unsigned	 in_a_row;	/* errors since the last MAD or idle poll */
	bool		 failing;
	bool		 told_failing;	/* what the loop was last told */
};

static bool nothing_yet(int rc)
{
	return rc == -ETIMEDOUT || rc == -EAGAIN || rc == -EWOULDBLOCK ||
	       rc == -EINTR;
}

/* Sleep ms milliseconds in slices, returning early on stop. */
static void backoff(struct pump *p, unsigned ms)
{
	while (ms && !atomic_load(&p->stop)) {
		unsigned slice = ms < PUMP_POLL_MS ? ms : PUMP_POLL_MS;
		struct timespec ts = { .tv_sec = 0,
				       .tv_nsec = (long)slice * 1000000L };

		nanosleep(&ts, NULL);
		ms -= slice;
	}
}

/*
 * One round of receiving: up to RECV_BATCH MADs, the first waiting at most
 * `timeout` ms, the rest only if already there, queued by the rules of
 * mad/rxq.h.  Returns whether the loop has something to hear (MADs or a
 * change of the error state); *pause is the back-off after an error (ms).
 */
static bool pump_take(struct pump *p, int timeout, unsigned *pause,
		      bool *drained)
{
	uint8_t mad[MAD_SIZE];
	int rc = 0;
	unsigned got = 0;
	bool wake = false;

	*pause = 0;
	for (int n = 0; n < RECV_BATCH; n++, timeout = 0) {
		size_t len = 0;
		struct mad_addr from = { 0 };
		int status = 0;

		rc = p->recv(p->recv_ctx, mad, &len, &from, &status, timeout);
		if (rc < 0)
			break;
		if (len > MAD_SIZE)
			len = MAD_SIZE;	/* larger (RMPP) MADs are cut */
		pthread_mutex_lock(&p->lock);
		(void)rxq_push(&p->q, mad, len, &from, status);
		p->in_a_row = 0;
		if (p->failing) {
			p->failing = false;
			wake = true;
		}
		pthread_mutex_unlock(&p->lock);
		got++;
	}
	if (got)
		wake = true;
	*drained = rc < 0;
	if (rc == -ETIMEDOUT && !got) {
		/* An idle poll: the device works, nothing came. */
		pthread_mutex_lock(&p->lock);
		p->in_a_row = 0;
		pthread_mutex_unlock(&p->lock);
	} else if (rc < 0 && !nothing_yet(rc)) {
		pthread_mutex_lock(&p->lock);
		p->recv_errors++;
		p->last_error = rc;
		p->in_a_row++;
		if (p->in_a_row >= PUMP_ERR_PERMANENT && !p->failing) {
			p->failing = true;
			wake = true;
		}
		unsigned shift = p->in_a_row - 1;
		*pause = shift >= 10 ? PUMP_BACKOFF_MAX_MS : 1u << shift;
		if (*pause > PUMP_BACKOFF_MAX_MS)
			*pause = PUMP_BACKOFF_MAX_MS;
		pthread_mutex_unlock(&p->lock);
	}
	return wake;
}

/* Pump thread: the only code that runs off the loop thread. */
static void *pump_main(void *arg)
{
	struct pump *p = arg;

	while (!atomic_load(&p->stop)) {
		unsigned pause;
		bool drained;

		if (pump_take(p, PUMP_POLL_MS, &pause, &drained))
			ev_async_send(p->loop, &p->wake);
		if (pause)
			backoff(p, pause);
	}
	return NULL;
}

static void on_more(struct ev_loop *loop, ev_timer *w, int revents);

/* Loop thread: a change of the error state first, then the MADs. */
static void on_wake(struct ev_loop *loop, ev_async *w, int revents)
{
	struct pump *p = w->data;
	bool tell = false, failing;
	int err;
	uint64_t errors;
	unsigned n;

	pthread_mutex_lock(&p->lock);
	n = rxq_count(&p->q);
	if (n > PUMP_BATCH)
		n = PUMP_BATCH;
	failing = p->failing;
	if (failing != p->told_failing) {
		tell = true;
		p->told_failing = failing;
	}
	err = p->last_error;
	errors = p->recv_errors;
	pthread_mutex_unlock(&p->lock);

	if (tell && p->err_cb)
		p->err_cb(p->err_arg, failing ? err : 0, errors);
	/* Slots [0, n) stay put until popped: the thread only writes past
	 * the queued ones, and only this thread moves the head. */
	for (unsigned i = 0; i < n; i++) {
		const struct rxq_entry *e = rxq_at(&p->q, i);

		p->deliver(p->arg, e->mad, e->len, &e->from, e->status);
	}
	pthread_mutex_lock(&p->lock);
	rxq_pop(&p->q, n);
	bool more = rxq_count(&p->q) > 0;
	pthread_mutex_unlock(&p->lock);
	/* The rest on the next iteration, after I/O and timers had a turn. */
	if (more && !ev_is_active(&p->more)) {
		ev_timer_set(&p->more, 0., 0.);
		ev_timer_start(loop, &p->more);
	}
}

static void on_more(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct pump *p = w->data;

	on_wake(loop, &p->wake, revents);
}

/* fd mode: the descriptor is readable; take and deliver on the loop. */
static void on_readable(struct ev_loop *loop, ev_io *w, int revents)
{
	struct pump *p = w->data;
	unsigned pause;
	bool drained;

	(void)revents;
	if (pump_take(p, 0, &pause, &drained))
		on_wake(loop, &p->wake, 0);
	if (pause) {
		/* a failing descriptor stays readable: do not spin on it */
		ev_io_stop(loop, &p->readable);
		ev_timer_set(&p->resume, pause / 1000., 0.);
		ev_timer_start(loop, &p->resume);
	}
}

static void on_resume(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct pump *p = w->data;

	(void)revents;
	ev_io_start(loop, &p->readable);
}

/* Waker thread: wait for MADs while armed, then wake the loop. */
static void *waker_main(void *arg)
{
	struct pump *p = arg;
	unsigned errors = 0;

	while (!atomic_load(&p->stop)) {
		pthread_mutex_lock(&p->lock);
		while (!p->armed && !atomic_load(&p->stop)) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += PUMP_POLL_MS * 1000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&p->arm_cv, &p->lock, &ts);
		}
		pthread_mutex_unlock(&p->lock);
		if (atomic_load(&p->stop))
			break;
		int rc = p->wait(p->recv_ctx, PUMP_POLL_MS);
		if (rc == 0 || rc == -EINTR)
			continue;	/* nothing yet: wait again */
		/* Readable, or the wait failed: the loop's receive finds out
		 * which and backs off on errors; a failing wait is not spun
		 * on here either. */
		if (rc < 0)
			backoff(p, errors < 10 ? 1u << errors++ : 1000);
		else
			errors = 0;
		pthread_mutex_lock(&p->lock);
		p->armed = false;
		pthread_mutex_unlock(&p->lock);
		ev_async_send(p->loop, &p->wake);
	}
	return NULL;
}

static void waker_arm(struct pump *p)
{
	pthread_mutex_lock(&p->lock);
	p->armed = true;
	pthread_cond_signal(&p->arm_cv);
	pthread_mutex_unlock(&p->lock);
}

/* Loop, waker mode: one round of receiving, delivered; then another
 * round next iteration, or, once none is left, a wait of at most
 * PUMP_LINGER_MS on the loop itself (up to PUMP_LINGER_ROUNDS rounds in a
 * row) and only then the waker armed. */
static void waker_round(struct ev_loop *loop, struct pump *p)
{
	unsigned pause;
	bool drained;

	for (unsigned round = 0;; round++) {
		if (pump_take(p, 0, &pause, &drained))
			on_wake(loop, &p->wake, 0);
		if (pause || !drained || round + 1 >= PUMP_LINGER_ROUNDS)
			break;
		/* A MAD that comes within the linger costs no hand-over by
		 * the waker (its wake-up, the eventfd, the loop's epoll);
		 * the other watchers wait that long at most. */
		int rc = p->linger_ms ? p->wait(p->recv_ctx, p->linger_ms) : 0;

		atomic_fetch_add_explicit(&p->lingers, 1, memory_order_relaxed);
		if (rc <= 0) {
			waker_arm(p);
			return;
		}
		atomic_fetch_add_explicit(&p->linger_hits, 1,
					  memory_order_relaxed);
		ev_now_update(loop);
	}
	if (!pause && drained) {
		waker_arm(p);
		return;
	}
	/* The next round after the loop's other watchers had a turn. */
	ev_timer_set(&p->resume, pause / 1000., 0.);
	ev_timer_start(loop, &p->resume);
}

static void on_waker_wake(struct ev_loop *loop, ev_async *w, int revents)
{
	(void)revents;
	waker_round(loop, w->data);
}

static void on_waker_resume(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)revents;
	waker_round(loop, w->data);
}

/* The queue, the watchers and the lock; no thread or fd watcher yet. */
static int pump_new(struct pump **out, struct ev_loop *loop,
		    pump_recv_fn recv, void *recv_ctx, unsigned queue_len,
		    pump_deliver_cb deliver, void *arg)
{
	struct pump *p;
	int rc;

	if (!recv || !deliver)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	rc = rxq_init(&p->q, queue_len);
	if (rc < 0) {
		free(p);
		return rc;
	}
	p->loop = loop;
	p->recv = recv;
	p->recv_ctx = recv_ctx;
	p->deliver = deliver;
	p->arg = arg;
	p->fd = -1;
	pthread_mutex_init(&p->lock, NULL);
	ev_async_init(&p->wake, on_wake);
	p->wake.data = p;
	ev_timer_init(&p->more, on_more, 0., 0.);
	p->more.data = p;
	ev_timer_init(&p->resume, on_resume, 0., 0.);
	p->resume.data = p;
	*out = p;
	return 0;
}

static void pump_free(struct pump *p)
{
	if (p->wait)
		pthread_cond_destroy(&p->arm_cv);
	pthread_mutex_destroy(&p->lock);
	rxq_fini(&p->q);
	free(p);
}

/* The wake-up watcher and the thread running fn; on failure p is freed. */
static int start_thread(struct pump **out, struct pump *p,
			void *(*fn)(void *))
{
	ev_async_start(p->loop, &p->wake);
	if (pthread_create(&p->thread, NULL, fn, p) != 0) {
		ev_async_stop(p->loop, &p->wake);
		pump_free(p);
		return -EAGAIN;
	}
	p->thread_started = true;
	*out = p;
	return 0;
}

int pump_start_fd(struct pump **out, struct ev_loop *loop, int fd,
		  pump_recv_fn recv, void *recv_ctx, unsigned queue_len,
		  pump_deliver_cb deliver, void *arg)
{
	struct pump *p;

	if (fd < 0)
		return -EBADF;
	int rc = pump_new(&p, loop, recv, recv_ctx, queue_len, deliver, arg);
	if (rc < 0)
		return rc;
	p->fd = fd;
	ev_io_init(&p->readable, on_readable, fd, EV_READ);
	p->readable.data = p;
	ev_io_start(loop, &p->readable);
	*out = p;
	return 0;
}

int pump_start_waker(struct pump **out, struct ev_loop *loop,
		     pump_wait_fn wait, pump_recv_fn recv, void *recv_ctx,
		     unsigned queue_len, pump_deliver_cb deliver, void *arg)
{
	struct pump *p;

	if (!wait)
		return -EINVAL;
	int rc = pump_new(&p, loop, recv, recv_ctx, queue_len, deliver, arg);
	if (rc < 0)
		return rc;
	if (pthread_cond_init(&p->arm_cv, NULL) != 0) {
		pump_free(p);
		return -ENOMEM;
	}
	p->wait = wait;
	p->linger_ms = PUMP_LINGER_MS;
	p->armed = true;
	ev_async_init(&p->wake, on_waker_wake);
	p->wake.data = p;
	ev_timer_init(&p->resume, on_waker_resume, 0., 0.);
	p->resume.data = p;
	return start_thread(out, p, waker_main);
}

int pump_start(struct pump **out, struct ev_loop *loop, pump_recv_fn recv,
	       void *recv_ctx, unsigned queue_len, pump_deliver_cb deliver,
	       void *arg)
{
	struct pump *p;
	int rc = pump_new(&p, loop, recv, recv_ctx, queue_len, deliver, arg);

	if (rc < 0)
		return rc;
	return start_thread(out, p, pump_main);
}

void pump_set_source_lmc(struct pump *p, unsigned lmc)
{
	pthread_mutex_lock(&p->lock);
	rxq_set_source_lmc(&p->q, lmc);
	pthread_mutex_unlock(&p->lock);
}

void pump_set_tid_filter(struct pump *p, const _Atomic uint16_t *wire_tids)
{
	pthread_mutex_lock(&p->lock);
	rxq_set_tid_filter(&p->q, wire_tids);
	pthread_mutex_unlock(&p->lock);
}

void pump_on_error(struct pump *p, pump_error_cb cb, void *arg)
{
	p->err_cb = cb;
	p->err_arg = arg;
}

void pump_stop(struct pump *p)
{
	if (!p)
		return;
	atomic_store(&p->stop, true);
	if (p->wait) {
		pthread_mutex_lock(&p->lock);
		pthread_cond_signal(&p->arm_cv);
		pthread_mutex_unlock(&p->lock);
	}
	if (p->thread_started)
		pthread_join(p->thread, NULL);
	ev_async_stop(p->loop, &p->wake);
	ev_timer_stop(p->loop, &p->more);
	if (p->fd >= 0)
		ev_io_stop(p->loop, &p->readable);
	ev_timer_stop(p->loop, &p->resume);
	pump_free(p);
}

void pump_stats(struct pump *p, struct pump_stats *out)
{
	pthread_mutex_lock(&p->lock);
	out->queue = p->q.stats;
	out->recv_errors = p->recv_errors;
	out->last_error = p->last_error;
	out->failing = p->failing;
	out->lingers = atomic_load_explicit(&p->lingers, memory_order_relaxed);
	out->linger_hits = atomic_load_explicit(&p->linger_hits,
						memory_order_relaxed);
	pthread_mutex_unlock(&p->lock);
}
