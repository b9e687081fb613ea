/*
 * notify_send.h - how sm/notify.c's messages reach the service manager.
 *
 * Two transports, one chosen at build time:
 *   sm/notify_sd.c    libsystemd's sd_notify(3), called from a thread of
 *                     its own: sd_notify() sends on a blocking socket, and
 *                     a manager that does not read would stall the loop.
 *   sm/notify_sock.c  without libsystemd: the same protocol on a
 *                     non-blocking socket of our own.
 * Either way notify_send() never blocks the caller.
 */
#ifndef IBSM_SM_NOTIFY_SEND_H
#define IBSM_SM_NOTIFY_SEND_H

#include <stdint.h>

/* Open the transport to $NOTIFY_SOCKET `name`; 0 or -errno. */
int notify_send_open(const char *name);
/*
 * Queue or send one message of "KEY=VALUE" lines; never blocks.  The
 * libsystemd transport merges messages not sent yet by key (the newest
 * STATUS= wins; READY=1, WATCHDOG=1, STOPPING=1 are kept).  0 or -errno
 * (the error of this send, or of the last one the thread made).
 */
int notify_send(const char *msg);
/*
 * State for the loop's log: *stalled_s is how long the send in progress
 * has been waiting (0: none), *failed the sends that failed so far.
 */
void notify_send_poll(double *stalled_s, unsigned long *failed, int *last_err);
/*
 * At exit: wait up to timeout_s for what is queued (STOPPING=1) to be
 * sent, then stop.  A thread stuck on a manager that does not read is
 * left to the process's exit.
 */
void notify_send_close(double timeout_s);
/* $WATCHDOG_USEC when the watchdog is meant for this process, else 0. */
uint64_t notify_watchdog_usec(void);

#endif /* IBSM_SM_NOTIFY_SEND_H */
