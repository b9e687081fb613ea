/*
 * notify.c - tell systemd how the SM is doing (see notify.h).
 *
 * The protocol (sd_notify(3)) is a datagram of "KEY=VALUE" lines to the
 * unix socket named by $NOTIFY_SOCKET.  What to say is decided here;
 * sm/notify_send.h carries it (libsystemd's sd_notify() on a thread of
 * its own, or a non-blocking socket without libsystemd), so sending never
 * stalls the loop.
 *
 * READY=1 means "the subnet is managed": after the first SUBNET UP as
 * master, or on entering STANDBY (another SM is master).  Until then
 * `systemctl start` waits, and a unit ordered After=ibsm@X.service starts
 * with a fabric that is up.  WATCHDOG=1 comes from a loop timer, so a
 * loop that stops turning (a bug that blocks it) stops the pings and
 * systemd restarts the instance after WatchdogSec.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sm/notify.h"
#include "sm/notify_send.h"
#include "sm/ha/sync.h"

/* A send waiting this long on the manager is logged (ERR 0322). */
#define NOTIFY_STALL_S	5.0

static struct {
	int fd;				/* -1: no NOTIFY_SOCKET, else 0 */
	bool ready;			/* READY=1 sent */
	bool stopping;			/* STOPPING=1 sent */
	ev_timer watchdog;
	bool watchdog_on;
	char status[320];		/* the last STATUS= sent */
	/* The last completed sweep, for STATUS= */
	time_t last_sweep;
	bool last_light;
	struct fabric_counts counts;	/* of the model, after each heavy sweep */
	unsigned long failed;		/* send failures logged so far */
	bool stall_logged;		/* ERR 0322 said for this stall */
	ev_timer check;			/* polls the transport, once a second */
} nt = { .fd = -1 };

/*
 * What the transport reports: a send failed (the first failure only:
 * systemd gone away must not fill the log every half watchdog period),
 * or one has waited NOTIFY_STALL_S on a manager that does not read.
 */
static void poll_transport(void)
{
	unsigned long failed;
	double stalled;
	int err;

	notify_send_poll(&stalled, &failed, &err);
	if (failed && !nt.failed)
		log_warn_rc(err, "ERR 0320: cannot notify the service manager"
			    " (NOTIFY_SOCKET)");
	nt.failed = failed;
	if (stalled >= NOTIFY_STALL_S && !nt.stall_logged) {
		log_warnx("ERR 0322: the service manager has not taken a"
			  " notification for %.0f s (NOTIFY_SOCKET): newer ones"
			  " wait, merged; the SM goes on", stalled);
		nt.stall_logged = true;
	} else if (!stalled && nt.stall_logged) {
		log_info("the service manager takes notifications again");
		nt.stall_logged = false;
	}
}

/* Send one message (never blocks, see notify_send.h). */
static void send_msg(const char *msg)
{
	if (nt.fd < 0)
		return;
	(void)notify_send(msg);
	poll_transport();
}

static void on_check(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	poll_transport();
}

static void on_watchdog(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
	send_msg("WATCHDOG=1");
}

void notify_start(struct sm *sm)
{
	const char *name = getenv("NOTIFY_SOCKET");
	uint64_t usec;
	int rc;

	if (!name || !*name || nt.fd >= 0)
		return;
	rc = notify_send_open(name);
	if (rc < 0) {
		log_warn_rc(rc, "ERR 0321: NOTIFY_SOCKET=%s: expected a unix socket"
			  " path or @name", name);
		return;
	}
	nt.fd = 0;
	ev_timer_init(&nt.check, on_check, 1., 1.);
	ev_timer_start(sm->loop, &nt.check);
	ev_unref(sm->loop);
	usec = notify_watchdog_usec();
	if (usec) {
		/* Half the period, as sd_watchdog_enabled(3) advises. */
		double period = (double)usec / 2e6;

		ev_timer_init(&nt.watchdog, on_watchdog, 0., period);
		ev_timer_start(sm->loop, &nt.watchdog);
		/* The watchdog alone must not keep a finished loop running. */
		ev_unref(sm->loop);
		nt.watchdog_on = true;
		log_info("systemd watchdog: WATCHDOG=1 every %.3f s", period);
	}
	log_info("notifying the service manager at %s", name);
}

void notify_stop(struct sm *sm)
{
	if (nt.fd < 0)
		return;
	ev_ref(sm->loop);
	ev_timer_stop(sm->loop, &nt.check);
	/* STOPPING=1 out, unless the manager does not read. */
	notify_send_close(1.0);
	nt.fd = -1;
	if (nt.watchdog_on) {
		ev_ref(sm->loop);
		ev_timer_stop(sm->loop, &nt.watchdog);
		nt.watchdog_on = false;
	}
}

/* "YYYY-MM-DD HH:MM:SS UTC" of a wall-clock time. */
static void utc_time(double t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

/*
 * A standby: the master it follows and its copy of the master's SA
 * state (sm/ha/sync.c), e.g. "STANDBY: master 0x0002c90300000001 LID 1
 * priority 10; copy of 2026-11-23 17:55:01 UTC: 8 LIDs, 2 group
 * members, 0 services, 0 subscriptions, 0 records dropped".  The copy's
 * time is its age: a new round every STANDBY_SYNC_INTERVAL s.
 */
static void standby_status(const struct sm *sm, char *buf, size_t len)
{
	struct standby_sync_info si;
	char when[64];
	int n;

	n = snprintf(buf, len, "STANDBY: master 0x%016" PRIx64 " LID %u"
		     " priority %u", sm->master_guid, sm->master_lid,
		     sm->master_priority);
	if (n < 0 || (size_t)n >= len)
		return;
	if (!standby_sync_info(sm, &si) || !si.have) {
		snprintf(buf + n, len - (size_t)n, "; no copy of its SA state"
			 " yet");
		return;
	}
	utc_time(si.at, when, sizeof(when));
	snprintf(buf + n, len - (size_t)n, "; copy of %s: %zu LIDs, %zu group"
		 " members, %zu services, %zu subscriptions, %" PRIu64
		 " records dropped", when, si.lids, si.members, si.services,
		 si.subscriptions, si.dropped + si.over);
}

void notify_status_format(const struct sm *sm, char *buf, size_t len)
{
	const char *state = sm_state_name(sm->state);
	const struct fabric_counts *c = &nt.counts;
	size_t nodes = c->switches + c->cas + c->routers;
	char when[64] = "";
	int n;

	if (sm->state == SM_STANDBY) {
		standby_status(sm, buf, len);
		return;
	}
	if (nt.last_sweep)
		utc_time((double)nt.last_sweep, when, sizeof(when));
	if (!sm->subnet_up) {
		n = snprintf(buf, len, "%s: %s", state,
			     sm->state == SM_NOTACTIVE ? "stopping" :
			     sm->ha.port_down ? "waiting for the SM port's link" :
			     "first heavy sweep");
	} else {
		n = snprintf(buf, len, "%s: %zu nodes (%zu switches, %zu CAs),"
			     " LIDs 1-%u", state, nodes, c->switches, c->cas,
			     sm->fabric.max_lid);
	}
	if (n < 0 || (size_t)n >= len)
		return;
	if (nt.last_sweep)
		snprintf(buf + n, len - (size_t)n, "; last sweep %s at %s;"
			 " %u heavy, %u light sweeps",
			 nt.last_light ? "light" : "heavy", when,
			 sm->stats.heavy_sweeps, sm->stats.light_sweeps);
}

static void send_status(struct sm *sm);

void notify_event(struct sm *sm, enum sm_event ev)
{
	if (nt.fd < 0)
		return;
	if (ev == SM_EV_SWEEP_DONE || ev == SM_EV_LIGHT_DONE) {
		nt.last_sweep = time(NULL);
		nt.last_light = ev == SM_EV_LIGHT_DONE;
		/* The model changes in heavy sweeps only. */
		if (ev == SM_EV_SWEEP_DONE)
			fabric_count(&sm->fabric, &nt.counts);
	}
	if (ev == SM_EV_STOP) {
		if (nt.stopping)
			return;
		nt.stopping = true;
		send_msg("STOPPING=1\nSTATUS=NOTACTIVE: stopping");
		return;
	}
	send_status(sm);
}

/*
 * STATUS= when it says something new; READY=1 with it the first time
 * the SM is master of a subnet that is up, or stands by.
 */
static void send_status(struct sm *sm)
{
	char msg[sizeof(nt.status) + 32];
	bool ready = !nt.ready && ((sm->state == SM_MASTER && sm->subnet_up) ||
				   sm->state == SM_STANDBY);

	notify_status_format(sm, msg + 7, sizeof(nt.status));
	if (!ready && !strcmp(msg + 7, nt.status))
		return;		/* nothing new (a trap, a failed sweep) */
	memcpy(nt.status, msg + 7, sizeof(nt.status));	/* NUL within */
	memcpy(msg, "STATUS=", 7);
	if (ready) {
		/* One datagram: READY=1 with the status it is ready in. */
		size_t l = strlen(msg);

		snprintf(msg + l, sizeof(msg) - l, "\nREADY=1");
		nt.ready = true;
		log_info("READY=1 sent to the service manager (%s)",
			 sm_state_name(sm->state));
	}
	send_msg(msg);
}

/*
 * A change of state made outside an event (sm_transition(), from the
 * SMInfo protocol: entering STANDBY is one) or news of a standby's copy.
 * A master's STATUS= waits for its sweep's event, which brings the
 * counts it shows.
 */
void notify_state(struct sm *sm)
{
	if (nt.fd < 0 || nt.stopping || sm->state == SM_MASTER)
		return;
	send_status(sm);
}
