/*
 * fake_clock.h - virtual time for a unit test program.
 *
 * The program defines clock_gettime() and gettimeofday() itself, so every
 * caller in the process (libev's ev_time() and loop clock, the SM's own
 * clock reads, the log's time stamps) gets them from here instead of
 * libc.  Until fake_clock_start() they pass the kernel's clocks through;
 * after it each clock stands still at its value of that moment plus the
 * virtual time fake_clock_advance() added.  A test that runs its loop
 * with EVRUN_NOWAIT and advances the clock between iterations then sees
 * the same timers fire in the same order on a loaded machine as on an
 * idle one: nothing depends on how the process is scheduled.
 *
 * Work on another thread would still take real time while the loop's
 * virtual time runs ahead of it, so while the clock is fake
 * pthread_create() fails (EAGAIN) and what the code would hand to a
 * thread runs where it is asked for (the sweep routes on the loop,
 * route verification in the caller: their no-thread paths).
 *
 * Header-only, for ONE translation unit of a program.
 */
#ifndef IBSM_TESTS_FAKE_CLOCK_H
#define IBSM_TESTS_FAKE_CLOCK_H

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define FAKE_CLOCK_IDS 16	/* CLOCK_REALTIME .. CLOCK_TAI and more */

static bool fake_clock_on;
static int64_t fake_clock_ns;	/* virtual time added since the start */
static struct timespec fake_clock_base[FAKE_CLOCK_IDS];
static bool fake_clock_known[FAKE_CLOCK_IDS];

static inline int fake_clock_real(clockid_t id, struct timespec *ts)
{
	return (int)syscall(SYS_clock_gettime, id, ts);
}

static inline int64_t fake_clock_ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

/* From now on every clock stands still but for fake_clock_advance(). */
static inline void fake_clock_start(void)
{
	fake_clock_ns = 0;
	for (int id = 0; id < FAKE_CLOCK_IDS; id++)
		fake_clock_known[id] = false;
	fake_clock_on = true;
}

static inline void fake_clock_advance(double seconds)
{
	fake_clock_ns += (int64_t)(seconds * 1e9);
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	int64_t ns;

	/* CPU-time clocks (negative ids) and unknown ones: the kernel's. */
	if (!fake_clock_on || id < 0 || id >= FAKE_CLOCK_IDS)
		return fake_clock_real(id, ts);
	if (!fake_clock_known[id]) {
		struct timespec now;

		if (fake_clock_real(id, &now) != 0)
			return -1;
		/* A clock first read now starts at its real value. */
		ns = fake_clock_ts_ns(&now) - fake_clock_ns;
		fake_clock_base[id].tv_sec = ns / 1000000000;
		fake_clock_base[id].tv_nsec = ns % 1000000000;
		fake_clock_known[id] = true;
	}
	ns = fake_clock_ts_ns(&fake_clock_base[id]) + fake_clock_ns;
	ts->tv_sec = ns / 1000000000;
	ts->tv_nsec = ns % 1000000000;
	return 0;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;

	(void)tz;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

int pthread_create(pthread_t *restrict th, const pthread_attr_t *restrict attr,
		   void *(*fn)(void *), void *restrict arg)
{
	static int (*real)(pthread_t *restrict, const pthread_attr_t *restrict,
			   void *(*)(void *), void *restrict);

	if (fake_clock_on)
		return EAGAIN;
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
	return real ? real(th, attr, fn, arg) : EAGAIN;
}

/* Let `seconds` pass: virtual time when the clock is fake, else sleep. */
static inline void fake_clock_pause(double seconds)
{
	if (fake_clock_on)
		fake_clock_advance(seconds);
	else
		usleep((useconds_t)(seconds * 1e6));
}

#endif /* IBSM_TESTS_FAKE_CLOCK_H */
