/*
 * notify.h - the service manager's notifications (systemd's sd_notify
 * protocol, sd_notify(3)): READY=1, STATUS=, WATCHDOG=1, STOPPING=1.
 *
 * Without NOTIFY_SOCKET in the environment (not started by systemd with
 * Type=notify) all of it does nothing.  Sending never stalls the loop
 * (sm/notify_send.h: libsystemd's sd_notify() on a thread of its own, or
 * a non-blocking socket without libsystemd).
 */
#ifndef IBSM_SM_NOTIFY_H
#define IBSM_SM_NOTIFY_H

#include <stddef.h>

#include "sm/sm.h"

/*
 * Read NOTIFY_SOCKET and WATCHDOG_USEC/WATCHDOG_PID; with a watchdog,
 * start a loop timer that sends WATCHDOG=1 every half period.  Called
 * once the loop exists (sm_watchers_start).
 */
void notify_start(struct sm *sm);
/*
 * The state machine's hook, after every event it handles: READY=1 once
 * the first SUBNET UP made us MASTER, or on entering STANDBY; a new
 * STATUS= line when state, sweep counts or the fabric changed;
 * STOPPING=1 when the SM stops.
 */
void notify_event(struct sm *sm, enum sm_event ev);
/*
 * A change of state outside an event (sm_transition()) or a new copy
 * of a standby: READY=1 on entering STANDBY, a new STATUS= line.
 */
void notify_state(struct sm *sm);
/* Stop the watchdog timer (sm_watchers_stop). */
void notify_stop(struct sm *sm);

/*
 * The STATUS= text for the SM as it is (without "STATUS="), e.g.
 * "MASTER: 12 nodes (4 switches, 8 CAs), LIDs 1-12; last sweep light
 * at 2026-11-23 17:55:01 UTC; 3 heavy, 20 light sweeps", or for a
 * standby the master it follows and its copy (sm/notify.c).  Exposed
 * for tests.
 */
void notify_status_format(const struct sm *sm, char *buf, size_t len);

#endif /* IBSM_SM_NOTIFY_H */
