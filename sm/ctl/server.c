/*
 * server.c - the control socket (see ctl.h for the protocol).
 *
 * Who may talk: the socket file is created 0600 (under umask 0177, so it
 * never exists with wider rights), and every connection's peer is checked
 * with SO_PEERCRED when it is accepted: root or the user the daemon runs
 * as (the socket's owner), nobody else, whatever the file's mode is
 * changed to later.  A refused peer gets one "ERR" line and is closed.
 *
 * How it stays off the loop's critical path: the listening socket and
 * every connection are non-blocking and watched by libev io watchers.  A
 * connection is read only while it has no answer waiting to be written,
 * so at most one answer (CTL_MAX_ANSWER bytes) and one request line
 * (CTL_MAX_LINE bytes) are buffered per client, and at most
 * CTL_MAX_CLIENTS clients are connected.  A line longer than CTL_MAX_LINE
 * gets "ERR" and the connection is closed after it (what follows cannot be
 * told apart from the rest of that line); a malformed line gets "ERR" and
 * the connection goes on.  A client that makes no progress, reading or
 * writing, for CTL_IDLE_TIMEOUT seconds is dropped.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sm/ctl/ctl.h"
#include "sm/ctl/ctl_int.h"
#include "sm/sm.h"

#define CTL_ACCEPT_BURST	16	/* connections accepted per wakeup */

struct ctl_client {
	struct ctl_server *srv;
	int	 fd;
	uid_t	 uid;
	ev_io	 io;
	ev_timer timer;
	char	 in[CTL_MAX_LINE];
	size_t	 in_len;
	struct ctl_answer out;
	size_t	 out_off;
	bool	 eof;			/* the peer sent all it will */
	bool	 closing;		/* close once the answer is written */
};

struct ctl_server {
	struct sm *sm;
	int	 fd;
	ev_io	 io;
	char	 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t	 dev;			/* the socket file we made */
	ino_t	 ino;
	uid_t	 owner;
	struct ctl_client *clients[CTL_MAX_CLIENTS];
};

/* ------------------------------------------------------------ framing */

long ctl_line(const char *buf, size_t len, size_t *line_len)
{
	size_t scan = len < CTL_MAX_LINE ? len : CTL_MAX_LINE;
	const char *nl = memchr(buf, '\n', scan);
	size_t l;

	if (!nl)
		return len >= CTL_MAX_LINE ? -E2BIG : 0;
	l = (size_t)(nl - buf);
	*line_len = l && buf[l - 1] == '\r' ? l - 1 : l;
	return (long)(l + 1);
}

bool ctl_peer_allowed(uid_t peer, uid_t owner)
{
	return peer == 0 || peer == owner;
}

/* -------------------------------------------------------------- socket */

static void client_drop(struct ctl_client *c)
{
	struct ctl_server *s = c->srv;

	for (unsigned i = 0; i < CTL_MAX_CLIENTS; i++)
		if (s->clients[i] == c)
			s->clients[i] = NULL;
	ev_io_stop(s->sm->loop, &c->io);
	ev_timer_stop(s->sm->loop, &c->timer);
	close(c->fd);
	ctl_answer_free(&c->out);
	free(c);
}

/* Read while no answer waits, write while one does. */
static void client_watch(struct ctl_client *c)
{
	struct ev_loop *loop = c->srv->sm->loop;
	int want = c->out.len > c->out_off ? EV_WRITE : EV_READ;

	if (ev_is_active(&c->io) && (c->io.events & (EV_READ | EV_WRITE)) == want)
		return;
	ev_io_stop(loop, &c->io);
	ev_io_set(&c->io, c->fd, want);
	ev_io_start(loop, &c->io);
}

static void client_progress(struct ctl_client *c)
{
	ev_timer_again(c->srv->sm->loop, &c->timer);
}

/* Answer the next complete request in c->in, if no answer is waiting. */
static void client_requests(struct ctl_client *c)
{
	struct sm *sm = c->srv->sm;

	while (!c->closing && c->out.len == 0) {
		size_t ll = 0;
		long used = ctl_line(c->in, c->in_len, &ll);
		struct ctl_request req;
		char err[200];

		if (used == 0)
			break;
		if (used < 0) {
			ctl_finish(&c->out, false, "request longer than %d bytes:"
				   " closing", CTL_MAX_LINE - 1);
			c->closing = true;
			c->in_len = 0;
			break;
		}
		if (ctl_parse(c->in, ll, &req, err, sizeof(err)) < 0) {
			log_debug("control socket: uid %u: %s", (unsigned)c->uid,
				  err);
			ctl_finish(&c->out, false, "%s", err);
		} else {
			if (req.cmd != CTL_CMD_STATUS &&
			    req.cmd != CTL_CMD_DUMP_CONFIG &&
			    req.cmd != CTL_CMD_HELP)
				log_info("control socket: uid %u: %.*s",
					 (unsigned)c->uid, (int)ll, c->in);
			ctl_execute(sm, &req, &c->out);
		}
		memmove(c->in, c->in + used, c->in_len - (size_t)used);
		c->in_len -= (size_t)used;
	}
	if (c->eof && c->out.len == 0)
		c->closing = true;	/* answered all it sent */
}

static void on_client(struct ev_loop *loop, ev_io *w, int revents)
{
	struct ctl_client *c = w->data;

	(void)loop;
	if (revents & EV_WRITE && c->out.len > c->out_off) {
		ssize_t n = send(c->fd, c->out.buf + c->out_off,
				 c->out.len - c->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR) {
			client_drop(c);
			return;
		}
		if (n > 0) {
			c->out_off += (size_t)n;
			client_progress(c);
		}
		if (c->out_off == c->out.len) {
			c->out.len = 0;
			c->out_off = 0;
			c->out.full = false;
			if (c->closing) {
				client_drop(c);
				return;
			}
			client_requests(c);
		}
	} else if (revents & EV_READ && c->in_len < sizeof(c->in)) {
		ssize_t n = recv(c->fd, c->in + c->in_len,
				 sizeof(c->in) - c->in_len, MSG_DONTWAIT);

		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK &&
		    errno != EINTR) {
			client_drop(c);
			return;
		}
		if (n == 0) {
			/* Whatever whole lines came are answered; a half
			 * line is dropped with the connection. */
			c->eof = true;
		} else if (n > 0) {
			c->in_len += (size_t)n;
			client_progress(c);
		}
		client_requests(c);
	}
	if (c->closing && c->out.len == c->out_off) {
		client_drop(c);
		return;
	}
	if (c->eof && c->out.len == c->out_off) {
		client_drop(c);
		return;
	}
	client_watch(c);
}

static void on_client_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct ctl_client *c = w->data;

	(void)loop;
	(void)revents;
	log_debug("control socket: uid %u: no progress for %g s: dropped",
		  (unsigned)c->uid, CTL_IDLE_TIMEOUT);
	client_drop(c);
}

/* One line to a connection we will not serve, then close it. */
static void refuse(int fd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void refuse(int fd, const char *fmt, ...)
{
	char line[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	(void)!send(fd, line, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
	close(fd);
}

static void on_accept(struct ev_loop *loop, ev_io *w, int revents)
{
	struct ctl_server *s = w->data;

	(void)revents;
	for (int k = 0; k < CTL_ACCEPT_BURST; k++) {
		struct ucred cred;
		socklen_t cl = sizeof(cred);
		struct ctl_client *c;
		unsigned slot;
		int fd = accept4(s->fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK &&
			    errno != EINTR && errno != ECONNABORTED)
				log_ratelimited(LOG_LVL_WARN, 1005, "control"
						" socket: accept: %s",
						strerror(errno));
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
			refuse(fd, "ERR cannot check the peer's credentials");
			continue;
		}
		if (!ctl_peer_allowed(cred.uid, s->owner)) {
			log_ratelimited(LOG_LVL_WARN, 1003, "control socket:"
					" pid %ld uid %u refused: neither root"
					" nor the socket's owner (uid %u)",
					(long)cred.pid, (unsigned)cred.uid,
					(unsigned)s->owner);
			refuse(fd, "ERR permission denied: uid %u is neither"
			       " root nor the socket's owner", (unsigned)cred.uid);
			continue;
		}
		for (slot = 0; slot < CTL_MAX_CLIENTS && s->clients[slot]; slot++)
			;
		if (slot == CTL_MAX_CLIENTS) {
			log_ratelimited(LOG_LVL_WARN, 1004, "control socket:"
					" %d clients connected: one more"
					" refused", CTL_MAX_CLIENTS);
			refuse(fd, "ERR busy: %d clients connected already",
			       CTL_MAX_CLIENTS);
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			refuse(fd, "ERR out of memory");
			continue;
		}
		c->srv = s;
		c->fd = fd;
		c->uid = cred.uid;
		ev_io_init(&c->io, on_client, fd, EV_READ);
		c->io.data = c;
		ev_init(&c->timer, on_client_timer);
		c->timer.repeat = CTL_IDLE_TIMEOUT;
		c->timer.data = c;
		s->clients[slot] = c;
		ev_io_start(loop, &c->io);
		ev_timer_again(loop, &c->timer);
	}
}

/* The socket's directory (/run/ibsm): made when missing, one level. */
static void make_dir(const char *path)
{
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return;	/* bind() says why */
}

/*
 * A socket file at our path: another daemon's (it accepts: in use), or
 * one left by a daemon that died (connection refused: stale).  0 when it
 * was stale and is gone, else -errno.  Only sockets are ever removed.
 */
static int remove_stale(const struct sockaddr_un *addr)
{
	struct stat st;
	int fd, rc;

	if (lstat(addr->sun_path, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	rc = connect(fd, (const struct sockaddr *)addr, sizeof(*addr));
	if (rc == 0 || errno == EAGAIN || errno == EINPROGRESS) {
		close(fd);
		return -EADDRINUSE;
	}
	rc = errno;
	close(fd);
	if (rc != ECONNREFUSED)
		return -rc;
	return unlink(addr->sun_path) < 0 ? -errno : 0;
}

int ctl_start(struct sm *sm)
{
	const char *path = sm->cfg.control_socket;
	struct sockaddr_un addr;
	struct ctl_server *s;
	struct stat st;
	mode_t old;
	int fd, rc;

	if (!path || !*path)
		return 0;
	if (strlen(path) >= sizeof(addr.sun_path)) {
		log_warnx("ERR 1001: running without a control socket: %s:"
			  " expected a path shorter than %zu bytes", path,
			  sizeof(addr.sun_path));
		return -ENAMETOOLONG;
	}
	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	memcpy(addr.sun_path, path, strlen(path));
	make_dir(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		log_warn_rc(rc, "ERR 1001: running without a control socket: %s",
			    path);
		return rc;
	}
	/* 0600 from the start: no moment where others could connect. */
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
	if (rc < 0 && errno == EADDRINUSE) {
		rc = remove_stale(&addr);
		if (rc == 0)
			rc = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
		else
			errno = -rc;
	}
	umask(old);
	if (rc < 0) {
		rc = -errno;
		close(fd);
		if (rc == -EADDRINUSE)
			log_warnx("ERR 1002: control socket %s is in use by another"
				  " process (another ibsm?); running without a"
				  " control socket", path);
		else
			log_warn_rc(rc, "ERR 1001: running without a"
				    " control socket: %s", path);
		return rc;
	}
	if (listen(fd, CTL_MAX_CLIENTS) < 0 || stat(path, &st) < 0 ||
	    chmod(path, 0600) < 0) {
		rc = -errno;
		log_warn_rc(rc, "ERR 1001: running without a control socket: %s",
			    path);
		unlink(path);
		close(fd);
		return rc;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		unlink(path);
		close(fd);
		return -ENOMEM;
	}
	s->sm = sm;
	s->fd = fd;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	s->owner = geteuid();
	snprintf(s->path, sizeof(s->path), "%s", path);
	ev_io_init(&s->io, on_accept, fd, EV_READ);
	s->io.data = s;
	ev_io_start(sm->loop, &s->io);
	/* Like the log flush timer: no reason by itself to keep the loop
	 * running once everything else has stopped. */
	ev_unref(sm->loop);
	sm->ctl = s;
	log_info("control socket %s (mode 0600, root and uid %u)", path,
		 (unsigned)s->owner);
	return 0;
}

void ctl_stop(struct sm *sm)
{
	struct ctl_server *s = sm->ctl;
	struct stat st;

	if (!s)
		return;
	for (unsigned i = 0; i < CTL_MAX_CLIENTS; i++)
		if (s->clients[i])
			client_drop(s->clients[i]);
	ev_ref(sm->loop);
	ev_io_stop(sm->loop, &s->io);
	close(s->fd);
	/* Only our own file: a later daemon may have replaced it. */
	if (stat(s->path, &st) == 0 && st.st_dev == s->dev &&
	    st.st_ino == s->ino)
		unlink(s->path);
	free(s);
	sm->ctl = NULL;
}
