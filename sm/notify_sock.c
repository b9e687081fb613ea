/*
 * notify_sock.c - the notification transport without libsystemd (see
 * notify_send.h).
 *
 * The protocol (sd_notify(3)) is a datagram of "KEY=VALUE" lines to the
 * unix socket named by $NOTIFY_SOCKET (a path, or "@name" in the
 * abstract namespace).  Sent here on one non-blocking socket opened at
 * start: a message that does not fit is lost and the next one (at most
 * half a watchdog period later) carries on.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sm/notify_send.h"

static struct {
	int fd;				/* -1: not open */
	struct sockaddr_un addr;
	socklen_t addr_len;
	unsigned long failed;
	int last_err;
} ns = { .fd = -1 };

int notify_send_open(const char *name)
{
	size_t len = strlen(name);

	if ((name[0] != '/' && name[0] != '@') || len < 2 ||
	    len >= sizeof(ns.addr.sun_path))
		return -EINVAL;
	memset(&ns.addr, 0, sizeof(ns.addr));
	ns.addr.sun_family = AF_UNIX;
	memcpy(ns.addr.sun_path, name, len);
	if (name[0] == '@')
		ns.addr.sun_path[0] = '\0';
	ns.addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
				  (name[0] == '/'));
	ns.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	return ns.fd < 0 ? -errno : 0;
}

/* A full socket (EAGAIN) drops the message. */
int notify_send(const char *msg)
{
	ssize_t n;

	if (ns.fd < 0)
		return 0;
	n = sendto(ns.fd, msg, strlen(msg), MSG_DONTWAIT | MSG_NOSIGNAL,
		   (const struct sockaddr *)&ns.addr, ns.addr_len);
	if (n >= 0)
		return 0;
	ns.failed++;
	ns.last_err = errno;
	return -errno;
}

void notify_send_poll(double *stalled_s, unsigned long *failed, int *last_err)
{
	*stalled_s = 0;
	*failed = ns.failed;
	*last_err = ns.last_err;
}

void notify_send_close(double timeout_s)
{
	(void)timeout_s;
	if (ns.fd >= 0)
		close(ns.fd);
	ns.fd = -1;
}

uint64_t notify_watchdog_usec(void)
{
	const char *usec = getenv("WATCHDOG_USEC");
	const char *pid = getenv("WATCHDOG_PID");
	unsigned long long v;
	char *end;

	if (!usec || !*usec)
		return 0;
	if (pid && *pid) {
		errno = 0;
		v = strtoull(pid, &end, 10);
		if (errno || *end || v != (unsigned long long)getpid())
			return 0;
	}
	errno = 0;
	v = strtoull(usec, &end, 10);
	if (errno || *end || end == usec)
		return 0;
	return v;
}
