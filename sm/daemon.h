/*
 * daemon.h - -B/--daemon (opensm.conf `daemon TRUE`): ibsm goes into the
 * background as OpenSM does, but only once its configuration has been
 * read and checked, so errors still reach the terminal and the exit
 * status of the command that started it.
 */
#ifndef IBSM_SM_DAEMON_H
#define IBSM_SM_DAEMON_H

#include <stdbool.h>

/*
 * Fork.  The parent waits until the child says it runs (daemon_ready())
 * and exits 0, or until the child exits first and exits with its status;
 * it never returns.  The child starts a new session (no controlling
 * terminal) and returns 0 with *ready_fd set; -errno when it cannot fork
 * (nothing changed then).  Must run before any thread or event loop
 * exists; stdio buffers are flushed first.
 */
int daemon_fork(int *ready_fd);

/*
 * The child runs (its pid file written): tell the parent and let go of
 * the terminal: stdin from /dev/null, stdout and stderr to /dev/null
 * unless `keep_out` (the log is written there and it is not a terminal:
 * a file or a pipe).  Does nothing the second time or with *ready_fd < 0.
 */
void daemon_ready(int *ready_fd, bool keep_out);

#endif /* IBSM_SM_DAEMON_H */
