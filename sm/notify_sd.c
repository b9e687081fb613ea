/*
 * notify_sd.c - the notification transport through libsystemd's
 * sd_notify(3) (see notify_send.h).
 *
 * sd_notify() (libsystemd 252, Debian 12) opens a blocking datagram
 * socket and sendmsg()s without MSG_DONTWAIT: when the manager's socket
 * holds net.unix.max_dgram_qlen unread datagrams (10 by default), the
 * call waits until it reads one, for ever if it never does (measured:
 * the 12th WATCHDOG=1 to a socket nobody reads does not return).  So
 * the loop never calls it: notify_send() puts the message's lines in a
 * small table under a mutex and wakes one thread, which sends what the
 * table holds as one datagram.  While that thread waits on the manager,
 * new messages are merged into the table by key (the newest STATUS=
 * wins, READY=1 / WATCHDOG=1 / STOPPING=1 stay set), so the table never
 * grows and the loop never waits.  The loop learns about a stall or a
 * failure through notify_send_poll() and logs it; the thread never logs.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "sm/notify_send.h"

#define NS_KEYS		8	/* READY STATUS WATCHDOG STOPPING, and spare */
#define NS_KEY_LEN	24
#define NS_VAL_LEN	336

struct ns_kv {
	char key[NS_KEY_LEN];
	char val[NS_VAL_LEN];
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t wake;		/* to the thread: something queued */
	pthread_cond_t idle;		/* from it: the table is sent */
	bool running;
	bool quit;
	struct ns_kv kv[NS_KEYS];
	unsigned nkv;
	double busy_since;		/* CLOCK_MONOTONIC; 0: not sending */
	unsigned long failed;
	int last_err;
} sd = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
	.idle = PTHREAD_COND_INITIALIZER,
};

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The table as one message of "KEY=VALUE" lines; empties the table. */
static void take_message(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < sd.nkv && off < len; i++) {
		int n = snprintf(buf + off, len - off, "%s%s=%s", off ? "\n" : "",
				 sd.kv[i].key, sd.kv[i].val);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	sd.nkv = 0;
}

static void *sender(void *arg)
{
	char msg[NS_KEYS * (NS_KEY_LEN + NS_VAL_LEN + 2)];

	(void)arg;
	pthread_mutex_lock(&sd.mu);
	for (;;) {
		while (!sd.nkv && !sd.quit)
			pthread_cond_wait(&sd.wake, &sd.mu);
		if (!sd.nkv && sd.quit)
			break;
		take_message(msg, sizeof(msg));
		sd.busy_since = mono_now();
		pthread_mutex_unlock(&sd.mu);
		/* May wait for as long as the manager does not read. */
		int rc = sd_notify(0, msg);
		pthread_mutex_lock(&sd.mu);
		sd.busy_since = 0;
		if (rc < 0) {
			sd.failed++;
			sd.last_err = -rc;
		}
		if (!sd.nkv)
			pthread_cond_broadcast(&sd.idle);
	}
	sd.running = false;
	pthread_cond_broadcast(&sd.idle);
	pthread_mutex_unlock(&sd.mu);
	return NULL;
}

int notify_send_open(const char *name)
{
	pthread_attr_t attr;
	pthread_t t;
	int rc;

	if ((name[0] != '/' && name[0] != '@') || !name[1])
		return -EINVAL;
	if (sd.running)
		return 0;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sd.quit = false;
	rc = pthread_create(&t, &attr, sender, NULL);
	pthread_attr_destroy(&attr);
	if (rc)
		return -rc;
	sd.running = true;
	return 0;
}

/* Put one "KEY=VALUE" line into the table (same key: replaced). */
static void put_line(const char *line, size_t len)
{
	const char *eq = memchr(line, '=', len);
	size_t klen, vlen;
	unsigned i;

	if (!eq || eq == line || (size_t)(eq - line) >= NS_KEY_LEN)
		return;
	klen = (size_t)(eq - line);
	vlen = len - klen - 1;
	if (vlen >= NS_VAL_LEN)
		vlen = NS_VAL_LEN - 1;
	for (i = 0; i < sd.nkv; i++)
		if (strlen(sd.kv[i].key) == klen &&
		    !memcmp(sd.kv[i].key, line, klen))
			break;
	if (i == sd.nkv) {
		if (sd.nkv == NS_KEYS)
			return;
		sd.nkv++;
		memcpy(sd.kv[i].key, line, klen);
		sd.kv[i].key[klen] = '\0';
	}
	memcpy(sd.kv[i].val, eq + 1, vlen);
	sd.kv[i].val[vlen] = '\0';
}

int notify_send(const char *msg)
{
	int err;

	pthread_mutex_lock(&sd.mu);
	if (!sd.running) {
		pthread_mutex_unlock(&sd.mu);
		return 0;
	}
	while (*msg) {
		const char *nl = strchr(msg, '\n');
		size_t len = nl ? (size_t)(nl - msg) : strlen(msg);

		put_line(msg, len);
		msg += len + (nl != NULL);
	}
	pthread_cond_signal(&sd.wake);
	err = sd.last_err;
	pthread_mutex_unlock(&sd.mu);
	return -err;
}

void notify_send_poll(double *stalled_s, unsigned long *failed, int *last_err)
{
	pthread_mutex_lock(&sd.mu);
	*stalled_s = sd.busy_since ? mono_now() - sd.busy_since : 0;
	*failed = sd.failed;
	*last_err = sd.last_err;
	pthread_mutex_unlock(&sd.mu);
}

void notify_send_close(double timeout_s)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)timeout_s;
	until.tv_nsec += (long)((timeout_s - (double)(time_t)timeout_s) * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&sd.mu);
	sd.quit = true;
	pthread_cond_signal(&sd.wake);
	while (sd.running && (sd.nkv || sd.busy_since))
		if (pthread_cond_timedwait(&sd.idle, &sd.mu, &until) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&sd.mu);
}

uint64_t notify_watchdog_usec(void)
{
	uint64_t usec = 0;

	/* WATCHDOG_USEC, checked against WATCHDOG_PID by the library. */
	if (sd_watchdog_enabled(0, &usec) <= 0)
		return 0;
	return usec;
}
