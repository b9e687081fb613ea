/*
 * http.c - the metrics endpoint's HTTP side (metrics.h): libmicrohttpd
 * in external-select mode with its epoll fd watched by the loop.
 *
 * mhd.run() is called when the epoll fd is readable and when MHD's own
 * timeout (idle connections) expires; after each call the timer is set
 * again from mhd.get_timeout(), which is 0 while MHD still has ready
 * connections to serve (its epoll is edge-triggered inside).  The
 * listening socket is made here (a precise error when the address is
 * taken or not ours) and handed to MHD.
 */
#include "config.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "config/listen.h"
#include "sm/fabric_map.h"
#include "sm/metrics/metrics.h"
#include "sm/metrics/prom.h"
#include "sm/sm.h"

enum page { PAGE_METRICS, PAGE_FABRIC, PAGE_INDEX, PAGE_N };

struct sm_metrics {
	struct sm *sm;
	struct MHD_Daemon *d;
	int      lfd;
	ev_io    io;
	ev_timer timer;
	ev_timer drop;			/* lets go of the answers kept */
	/* built answers, shared by the scrapes of one period */
	struct MHD_Response *resp[PAGE_N];
	ev_tstamp at[PAGE_N];
	size_t   last_len;
	struct metrics_self self;
};

/*
 * libmicrohttpd is loaded when metrics are configured, not linked: its
 * TLS dependencies (gnutls and a dozen more libraries, about 3 MB of
 * resident memory) cost nothing to an SM that serves no metrics.
 */
#define MHD_SONAME	"libmicrohttpd.so.12"
static struct {
	void *lib;
#define MHD_FN(f)	__typeof__(&MHD_##f) f;
	MHD_FN(add_response_header) MHD_FN(create_response_from_buffer)
	MHD_FN(destroy_response) MHD_FN(get_daemon_info) MHD_FN(get_timeout)
	MHD_FN(queue_response) MHD_FN(run) MHD_FN(start_daemon)
	MHD_FN(stop_daemon)
#undef MHD_FN
} mhd;

/* 0, or -ENOENT with the loader's reason in why. */
static int mhd_load(const char **why)
{
	void *l;

	if (mhd.lib)
		return 0;
	l = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!l) {
		*why = dlerror();
		return -ENOENT;
	}
#define MHD_SYM(f) \
	if (!(*(void **)&mhd.f = dlsym(l, "MHD_" #f))) { \
		*why = "a symbol is missing"; \
		dlclose(l); \
		return -ENOENT; \
	}
	MHD_SYM(add_response_header) MHD_SYM(create_response_from_buffer)
	MHD_SYM(destroy_response) MHD_SYM(get_daemon_info) MHD_SYM(get_timeout)
	MHD_SYM(queue_response) MHD_SYM(run) MHD_SYM(start_daemon)
	MHD_SYM(stop_daemon)
#undef MHD_SYM
	mhd.lib = l;
	return 0;
}

static const char index_html[] =
	"<!DOCTYPE html>\n<html><head><title>ibsm</title></head><body>\n"
	"<h1>ibsm</h1>\n<ul>\n"
	"<li><a href=\"/metrics\">/metrics</a> (Prometheus)</li>\n"
	"<li><a href=\"/fabric\">/fabric</a> (fabric map)</li>\n"
	"</ul>\n</body></html>\n";

static struct MHD_Response *text_response(const char *s, const char *type)
{
	struct MHD_Response *r = mhd.create_response_from_buffer(strlen(s),
		(void *)s, MHD_RESPMEM_PERSISTENT);

	if (r)
		mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	return r;
}

static enum MHD_Result reply_static(struct MHD_Connection *c, unsigned code,
				    const char *text, bool allow)
{
	struct MHD_Response *r = text_response(text, "text/plain; charset=utf-8");
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	if (allow)
		mhd.add_response_header(r, "Allow", "GET, HEAD");
	rc = mhd.queue_response(c, code, r);
	mhd.destroy_response(r);
	return rc;
}

/* The /metrics text, built now. */
static struct MHD_Response *build_metrics(struct sm_metrics *m)
{
	struct prom p;
	struct MHD_Response *r;
	char *text;
	size_t len;

	struct timespec t0, t1;

	prom_init(&p, m->last_len ? m->last_len + m->last_len / 8 : 65536);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	metrics_render(m->sm, &p);
	text = prom_take(&p, &len);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	if (!text)
		return NULL;
	/* shown by the next build (this one is written already) */
	m->self.builds++;
	m->self.last_cpu = (double)(t1.tv_sec - t0.tv_sec) +
			   (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	m->self.last_bytes = len;
	r = mhd.create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return NULL;
	}
	m->last_len = len;
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; version=0.0.4; charset=utf-8");
	return r;
}

/* The /fabric page, built now; *code the HTTP status when NULL. */
static struct MHD_Response *build_fabric(struct sm_metrics *m, unsigned *code)
{
	struct MHD_Response *r;
	char *page;
	size_t len;
	int rc = metrics_fabric_page(m->sm, &page, &len);

	if (rc < 0) {
		*code = rc == -ENODATA ? MHD_HTTP_SERVICE_UNAVAILABLE :
			MHD_HTTP_INTERNAL_SERVER_ERROR;
		return NULL;
	}
	r = mhd.create_response_from_buffer(len, page, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(page);
		return NULL;
	}
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/html; charset=utf-8");
	return r;
}

/* The answer for `pg`: the one built within METRICS_CACHE_S, or a new one. */
static struct MHD_Response *page(struct sm_metrics *m, enum page pg,
				 unsigned *code)
{
	ev_tstamp now = ev_time();
	struct MHD_Response *r = NULL;

	if (m->resp[pg] && now - m->at[pg] < METRICS_CACHE_S)
		return m->resp[pg];
	switch (pg) {
	case PAGE_METRICS:
		r = build_metrics(m);
		break;
	case PAGE_FABRIC:
		r = build_fabric(m, code);
		break;
	case PAGE_INDEX:
		r = text_response(index_html, "text/html; charset=utf-8");
		break;
	default:
		break;
	}
	if (!r)
		return NULL;
	if (m->resp[pg])
		mhd.destroy_response(m->resp[pg]);	/* queued ones keep theirs */
	m->resp[pg] = r;
	m->at[pg] = now;
	/* kept no longer than it is reused: between scrapes ibsm holds no
	 * answer (megabytes on a large fabric) */
	if (!ev_is_active(&m->drop)) {
		ev_timer_set(&m->drop, METRICS_CACHE_S, 0.);
		ev_timer_start(m->sm->loop, &m->drop);
	}
	return r;
}

static void drop_answers(struct sm_metrics *m)
{
	for (int i = 0; i < PAGE_N; i++)
		if (m->resp[i]) {
			mhd.destroy_response(m->resp[i]);
			m->resp[i] = NULL;
		}
}

static void on_drop(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sm_metrics *m = w->data;
	ev_tstamp now = ev_time(), next = 0;

	(void)loop;
	(void)revents;
	/* drop what is older than the period; look again for the rest */
	for (int i = 0; i < PAGE_N; i++) {
		if (!m->resp[i])
			continue;
		if (now - m->at[i] >= METRICS_CACHE_S) {
			mhd.destroy_response(m->resp[i]);
			m->resp[i] = NULL;
		} else if (!next || m->at[i] + METRICS_CACHE_S - now < next) {
			next = m->at[i] + METRICS_CACHE_S - now;
		}
	}
	if (next > 0) {
		ev_timer_set(&m->drop, next, 0.);
		ev_timer_start(m->sm->loop, &m->drop);
	}
}

bool metrics_self(const struct sm *sm, struct metrics_self *out)
{
	if (!sm->metrics)
		return false;
	*out = sm->metrics->self;
	return true;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
				  const char *url, const char *method,
				  const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct sm_metrics *m = cls;
	struct MHD_Response *r;
	enum page pg;
	unsigned code = MHD_HTTP_INTERNAL_SERVER_ERROR;

	m->self.requests++;
	(void)version;
	(void)upload;
	(void)upload_size;
	(void)con_cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_static(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				    "method not allowed: GET or HEAD\n", true);
	if (!strcmp(url, "/metrics"))
		pg = PAGE_METRICS;
	else if (!strcmp(url, "/fabric"))
		pg = PAGE_FABRIC;
	else if (!strcmp(url, "/"))
		pg = PAGE_INDEX;
	else
		return reply_static(c, MHD_HTTP_NOT_FOUND,
				    "not found: /metrics, /fabric or /\n", false);
	r = page(m, pg, &code);
	if (!r)
		return reply_static(c, code, code ==
				    MHD_HTTP_SERVICE_UNAVAILABLE ?
				    "no fabric yet: no sweep has completed\n" :
				    "out of memory\n", false);
	return mhd.queue_response(c, MHD_HTTP_OK, r);
}

static void rearm(struct sm_metrics *m)
{
	MHD_UNSIGNED_LONG_LONG ms;

	ev_timer_stop(m->sm->loop, &m->timer);
	if (mhd.get_timeout(m->d, &ms) == MHD_YES) {
		ev_timer_set(&m->timer, (double)ms / 1e3, 0.);
		ev_timer_start(m->sm->loop, &m->timer);
	}
}

static void on_io(struct ev_loop *loop, ev_io *w, int revents)
{
	struct sm_metrics *m = w->data;

	(void)loop;
	(void)revents;
	mhd.run(m->d);
	rearm(m);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct sm_metrics *m = w->data;

	(void)loop;
	(void)revents;
	mhd.run(m->d);
	rearm(m);
}

static int listen_on(const struct sockaddr_storage *ss, socklen_t len)
{
	int one = 1;
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK |
			SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss->ss_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
				 sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, len) < 0 ||
	    listen(fd, METRICS_MAX_CONNECTIONS) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static void metrics_free(struct sm_metrics *m)
{
	if (m->d) {
		ev_io_stop(m->sm->loop, &m->io);
		ev_timer_stop(m->sm->loop, &m->timer);
		ev_timer_stop(m->sm->loop, &m->drop);
		mhd.stop_daemon(m->d);
	}
	drop_answers(m);
	if (m->lfd >= 0)
		close(m->lfd);
	free(m);
}

int metrics_start(struct sm *sm)
{
	const char *addr = sm->cfg.metrics_listen;
	struct sockaddr_storage ss;
	socklen_t len;
	struct sm_metrics *m;
	const union MHD_DaemonInfo *di;
	int rc;

	if (!addr)
		return 0;
	if (cfg_parse_listen(addr, &ss, &len) < 0) {
		log_err("ERR 2001: metrics_listen %s: expected %s", addr,
			CFG_LISTEN_EXPECTED);
		return -EINVAL;
	}
	const char *why = "";

	if (mhd_load(&why) < 0) {
		log_err("ERR 2004: metrics: cannot load %s (%s); no metrics"
			" served", MHD_SONAME, why);
		return -ENOENT;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->sm = sm;
	m->lfd = listen_on(&ss, len);
	if (m->lfd < 0) {
		rc = m->lfd;
		log_err_rc(rc, "ERR 2002: metrics: cannot listen on %s; no"
			   " metrics served", addr);
		m->lfd = -1;
		metrics_free(m);
		return rc;
	}
	m->d = mhd.start_daemon(MHD_USE_EPOLL |
				(ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				0, NULL, NULL, on_request, m,
				MHD_OPTION_LISTEN_SOCKET, m->lfd,
				MHD_OPTION_CONNECTION_LIMIT,
				(unsigned)METRICS_MAX_CONNECTIONS,
				MHD_OPTION_PER_IP_CONNECTION_LIMIT,
				(unsigned)METRICS_PER_IP,
				MHD_OPTION_CONNECTION_TIMEOUT,
				(unsigned)METRICS_TIMEOUT_S,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				(size_t)METRICS_MEMORY,
				MHD_OPTION_END);
	if (m->d)
		m->lfd = -1;		/* MHD's now: MHD_stop_daemon closes it */
	di = m->d ? mhd.get_daemon_info(m->d, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (!di) {
		log_err("ERR 2003: metrics: cannot start the HTTP server on %s;"
			" no metrics served", addr);
		metrics_free(m);
		return -EIO;
	}
	ev_io_init(&m->io, on_io, di->epoll_fd, EV_READ);
	m->io.data = m;
	ev_init(&m->timer, on_timer);
	m->timer.data = m;
	ev_init(&m->drop, on_drop);
	m->drop.data = m;
	ev_io_start(sm->loop, &m->io);
	rearm(m);
	sm->metrics = m;
	log_info("metrics: serving http://%s/metrics", addr);
	return 0;
}

void metrics_stop(struct sm *sm)
{
	if (!sm->metrics)
		return;
	metrics_free(sm->metrics);
	sm->metrics = NULL;
	sm_fabric_map_free();		/* the loads /fabric kept */
}

void metrics_render(struct sm *sm, struct prom *p)
{
	metrics_render_sm(sm, p);
	metrics_render_ports(sm, p);
}
