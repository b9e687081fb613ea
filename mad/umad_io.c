/*
 * umad_io.c - one umad port with its receive pump (see umad_io.h).
 *
 * The pump (waker mode), its bounded queue and its error handling are
 * mad/pump.c; this file gives it poll() on the umad fd as the wait and
 * umad_recv() without waiting as the receive function.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/umad.h>

#include "mad/sendq.h"
#include "mad/sim_io.h"
#include "mad/umad_io.h"

struct umad_io {
	struct ev_loop *loop;
	struct umad_port_info info;
	int portid;			/* umad_open_port() handle */
	int issm_fd;			/* holds IsSM while open */
	int agent[256];			/* agent id per management class */
	struct pump *pump;		/* the receive pump and its queue */
	unsigned queue_len;		/* its capacity (0: default) */
	unsigned src_lmc;		/* its source key (rxq_set_source_lmc) */
	const _Atomic uint16_t *wire_tids;	/* its TID filter, or NULL */
	uint8_t *rxbuf;			/* umad header + one MAD, pump only */
	struct sim_conn *sim;		/* --transport ibsim: no umad at all */
	bool serve;			/* an SM: answers others' requests */
	struct sendq *sendq;		/* serve: sends leave from its thread */
	ev_prepare flush;		/* wakes it before the loop waits */
};

static void port_info_fill(struct umad_port_info *pi, const char *ca,
			   const umad_port_t *p, uint64_t node_guid)
{
	memset(pi, 0, sizeof(*pi));
	snprintf(pi->ca, sizeof(pi->ca), "%.*s", (int)sizeof(pi->ca) - 1, ca);
	pi->port = p->portnum;
	pi->port_guid = be64toh(p->port_guid);
	pi->node_guid = node_guid;
	pi->lid = (uint16_t)p->base_lid;
	pi->sm_lid = (uint16_t)p->sm_lid;
	pi->state = (int)p->state;
	pi->phys_state = (int)p->phys_state;
}

int umad_io_list_ports(struct umad_port_info *out, int max)
{
	char cas[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
	int n = 0, ncas;

	if (umad_init() < 0)
		return -EIO;
	ncas = umad_get_cas_names(cas, UMAD_MAX_DEVICES);
	for (int c = 0; c < ncas && n < max; c++) {
		umad_ca_t ca;

		if (umad_get_ca(cas[c], &ca) < 0)
			continue;
		for (int p = 0; p < UMAD_CA_MAX_PORTS && n < max; p++) {
			if (!ca.ports[p])
				continue;
			port_info_fill(&out[n++], cas[c], ca.ports[p],
				       be64toh(ca.node_guid));
		}
		umad_release_ca(&ca);
	}
	return n;
}

/* Pick the port: by GUID, else the first whose physical link is up. */
static int choose_port(uint64_t guid, struct umad_port_info *chosen)
{
	struct umad_port_info ports[64];
	int n = umad_io_list_ports(ports, 64);

	if (n < 0)
		return n;
	if (n == 0)
		return -ENODEV;
	for (int i = 0; i < n; i++) {
		if (guid ? ports[i].port_guid == guid
			 : ports[i].phys_state == PHYS_STATE_LINKUP) {
			*chosen = ports[i];
			return 0;
		}
	}
	if (guid)
		return -ENXIO;
	*chosen = ports[0];	/* nothing up: take the first, like OpenSM */
	return 0;
}

/* A port not opened yet: no agents, no IsSM.  NULL when out of memory. */
static struct umad_io *io_new(struct ev_loop *loop)
{
	struct umad_io *io = calloc(1, sizeof(*io));

	if (!io)
		return NULL;
	io->loop = loop;
	io->issm_fd = -1;
	for (int i = 0; i < 256; i++)
		io->agent[i] = -1;
	return io;
}

int umad_io_open(struct umad_io **out, struct ev_loop *loop, uint64_t guid,
		 const uint8_t *classes, unsigned nclasses, bool serve)
{
	struct umad_io *io = io_new(loop);
	int rc;

	if (!io)
		return -ENOMEM;

	rc = choose_port(guid, &io->info);
	if (rc < 0)
		goto fail;
	io->portid = umad_open_port(io->info.ca, io->info.port);
	if (io->portid < 0) {
		rc = io->portid;
		goto fail;
	}
	io->serve = serve;
	for (unsigned i = 0; i < nclasses; i++) {
		uint8_t c = classes[i];
		int version = c == MAD_CLASS_SA ? 2 : 1;
		/* Methods we answer or receive unsolicited on this class. */
		long mask[16 / sizeof(long)] = { 0 };
		uint64_t bits = 0;

		/* PerfMgt: a client only; the kernel answers PMA MADs of
		 * the port itself */
		if (serve && c != MAD_CLASS_PERF) {
			bits = 1ull << MAD_METHOD_GET | 1ull << MAD_METHOD_SET |
			       1ull << MAD_METHOD_TRAP |
			       1ull << MAD_METHOD_TRAP_REPRESS |
			       1ull << MAD_METHOD_REPORT;
			if (c == MAD_CLASS_SA)
				bits |= 1ull << MAD_METHOD_GET_TABLE |
					1ull << MAD_METHOD_GETMULTI |
					1ull << MAD_METHOD_DELETE;
		}
		memcpy(mask, &bits, sizeof(bits));
		io->agent[c] = umad_register(io->portid, c, version, 0,
					     serve ? mask : NULL);
		if (io->agent[c] < 0) {
			rc = io->agent[c];
			goto fail;
		}
	}
	*out = io;
	return 0;
fail:
	if (io->portid > 0)
		umad_close_port(io->portid);
	free(io);
	return rc < 0 ? rc : -EIO;
}

int umad_io_open_ibsim(struct umad_io **out, struct ev_loop *loop,
		       const char **why)
{
	struct umad_io *io = io_new(loop);
	struct sim_port_facts f;

	*why = "out of memory";
	if (!io)
		return -ENOMEM;
	int rc = sim_conn_open(&io->sim, getenv("SIM_HOST"), &f, why);
	if (rc < 0) {
		free(io);
		return rc;
	}
	sim_conn_use_loop(io->sim, loop);
	snprintf(io->info.ca, sizeof(io->info.ca), "ibsim:%s", f.node);
	io->info.port = f.port;
	io->info.port_guid = f.port_guid;
	io->info.node_guid = f.node_guid;
	io->info.lid = f.lid;
	io->info.sm_lid = f.sm_lid;
	io->info.state = f.state;
	io->info.phys_state = f.phys_state;
	*out = io;
	return 0;
}

int umad_io_set_sm(struct umad_io *io, bool on)
{
	char path[256];

	if (io->sim)
		return sim_conn_set_sm(io->sim, on);

	if (!on) {
		if (io->issm_fd >= 0)
			close(io->issm_fd);
		io->issm_fd = -1;
		return 0;
	}
	if (io->issm_fd >= 0)
		return 0;
	if (umad_get_issm_path(io->info.ca, io->info.port, path,
			       (int)sizeof(path)) < 0)
		return -ENODEV;
	io->issm_fd = open(path, O_RDWR);
	return io->issm_fd < 0 ? -errno : 0;
}

const struct umad_port_info *umad_io_port(const struct umad_io *io)
{
	return &io->info;
}

/*
 * Loop: one umad_recv() into the port's own buffer, without waiting:
 * with timeout 0 libibumad skips its poll() and read()s at once, and
 * the umad fd is non-blocking (umad_open_port() opens it O_NONBLOCK;
 * umad2sim's read() never blocks), so an empty port answers -EAGAIN or
 * -EWOULDBLOCK instead of holding the loop.  umad_recv()
 * returns a negative value and leaves the reason in errno (poll errors
 * come back as -EIO with the real errno, e.g. EINTR).
 */
static int io_recv(void *ctx, void *mad, size_t *len, struct mad_addr *from,
		   int *status, int timeout_ms)
{
	struct umad_io *io = ctx;
	int l = MAD_SIZE;

	errno = 0;
	if (umad_recv(io->portid, io->rxbuf, &l, timeout_ms) < 0)
		return errno ? -errno : -EIO;
	if (l < 0 || l > MAD_SIZE)
		l = MAD_SIZE;	/* larger (RMPP) MADs are cut */
	ib_mad_addr_t *a = umad_get_mad_addr(io->rxbuf);
	*len = (size_t)l;
	*status = umad_status(io->rxbuf);
	from->lid = be16toh(a->lid);
	from->qpn = be32toh(a->qpn);
	from->qkey = be32toh(a->qkey);
	from->sl = a->sl;
	memcpy(mad, umad_get_mad(io->rxbuf), (size_t)l);
	return 0;
}

static int io_send_now(void *ctx, const void *mad, size_t len,
		       const struct mad_addr *addr, int timeout_ms);

/*
 * Waker thread: wait until the port has a MAD.  Under umad2sim, poll() on
 * its fake descriptor waits on the preload's queue; on hardware it is the
 * kernel's poll.  A failed poll is reported as "may have one": the loop's
 * umad_recv() then says what is wrong, and the pump backs off.
 */
static int io_wait(void *ctx, int timeout_ms)
{
	struct umad_io *io = ctx;
	struct pollfd pfd = { .fd = io->portid, .events = POLLIN };
	int rc;

	/* the loop's linger: what it queued leaves before it waits */
	if (io->sendq)
		sendq_flush(io->sendq);
	rc = poll(&pfd, 1, timeout_ms);

	if (rc < 0)
		return errno == EINTR ? -EINTR : -EIO;
	return rc;
}

/* Before the loop blocks: the sends of this iteration leave together. */
static void on_flush(struct ev_loop *loop, ev_prepare *w, int revents)
{
	struct umad_io *io = w->data;

	(void)loop;
	(void)revents;
	sendq_flush(io->sendq);
}

int umad_io_start(struct umad_io *io, umad_io_recv_cb cb, void *arg)
{
	int rc;

	if (io->sim) {
		/* a real socket: the loop reads it, no thread */
		rc = pump_start_fd(&io->pump, io->loop, sim_conn_fd(io->sim),
				   sim_conn_recv, io->sim, io->queue_len, cb, arg);
	} else {
		if (!io->rxbuf)
			io->rxbuf = malloc(umad_size() + MAD_SIZE);
		if (!io->rxbuf)
			return -ENOMEM;
		if (io->serve && !io->sendq) {
			rc = sendq_start(&io->sendq, io_send_now, io, 0, 0);
			if (rc < 0)
				return rc;
			ev_prepare_init(&io->flush, on_flush);
			io->flush.data = io;
			ev_prepare_start(io->loop, &io->flush);
			ev_unref(io->loop);	/* keeps no loop alive */
		}
		rc = pump_start_waker(&io->pump, io->loop, io_wait, io_recv,
				      io, io->queue_len, cb, arg);
	}
	if (rc == 0) {
		pump_set_source_lmc(io->pump, io->src_lmc);
		pump_set_tid_filter(io->pump, io->wire_tids);
	}
	return rc;
}

void umad_io_set_tid_filter(struct umad_io *io, const _Atomic uint16_t *wire_tids)
{
	io->wire_tids = wire_tids;
	if (io->pump)
		pump_set_tid_filter(io->pump, wire_tids);
}

void umad_io_set_source_lmc(struct umad_io *io, unsigned lmc)
{
	io->src_lmc = lmc;
	if (io->pump)
		pump_set_source_lmc(io->pump, lmc);
}

void umad_io_set_queue_len(struct umad_io *io, unsigned n)
{
	io->queue_len = n;
}

void umad_io_on_error(struct umad_io *io, pump_error_cb cb, void *arg)
{
	if (io->pump)
		pump_on_error(io->pump, cb, arg);
}

int umad_io_stats(struct umad_io *io, struct pump_stats *out)
{
	if (!io->pump)
		return -ENOTCONN;
	pump_stats(io->pump, out);
	return 0;
}

int umad_io_send_stats(struct umad_io *io, struct sendq_stats *out)
{
	if (!io->sendq)
		return -ENOTCONN;
	sendq_get_stats(io->sendq, out);
	return 0;
}

int umad_io_sim_stats(struct umad_io *io, struct sim_send_stats *out)
{
	if (!io->sim)
		return -ENOTCONN;
	sim_conn_send_stats(io->sim, out);
	return 0;
}

/*
 * ibsim's umad2sim preload cannot drop a MAD for an agent that is gone:
 * its receiver thread looks the agent's queue up, finds none and locks it
 * anyway, and the process dies of a NULL dereference.  Such MADs come
 * late, after the caller has what it wanted: an RMPP segment the SM sent
 * again because our ACK reached it late, the answer to a request we sent
 * again.  So under the preload the port and its agents stay registered
 * until the process exits (the preload's exit handler releases them, and
 * a late MAD just waits in a queue nobody reads).  Every caller closes
 * the port on its way out, so nothing piles up.
 */
static bool under_umad2sim(void)
{
	const char *preload = getenv("LD_PRELOAD");

	return preload && strstr(preload, "umad2sim");
}

void umad_io_close(struct umad_io *io)
{
	if (!io)
		return;
	pump_stop(io->pump);	/* joins the thread first */
	if (io->sendq && ev_is_active(&io->flush)) {
		ev_ref(io->loop);
		ev_prepare_stop(io->loop, &io->flush);
	}
	sendq_stop(io->sendq);	/* what waits goes out first */
	if (io->sim) {
		sim_conn_close(io->sim);
		free(io);
		return;
	}
	free(io->rxbuf);
	if (io->issm_fd >= 0)
		close(io->issm_fd);
	if (!under_umad2sim())
		umad_close_port(io->portid);
	free(io);
}

/* umad_send() itself: from the send thread when there is one. */
static int io_send_now(void *ctx, const void *mad, size_t len,
		       const struct mad_addr *addr, int timeout_ms)
{
	struct umad_io *io = ctx;
	const struct mad_hdr *h = mad;
	int agent = io->agent[h->mgmt_class];
	uint8_t buf[512];

	if (agent < 0 || umad_size() + len > sizeof(buf))
		return -EINVAL;
	memset(buf, 0, umad_size());
	umad_set_addr(buf, addr->lid, (int)addr->qpn, addr->sl,
		      (int)addr->qkey);
	memcpy(umad_get_mad(buf), mad, len);
	int rc = umad_send(io->portid, agent, buf, (int)len, timeout_ms, 0);
	return rc < 0 ? rc : 0;
}

/* The loop's send: an SM's goes through its send queue (mad/sendq.h),
 * so that a device that does not take it now cannot stop the loop. */
static int io_send(void *ctx, const void *mad, size_t len,
		   const struct mad_addr *addr, int timeout_ms)
{
	struct umad_io *io = ctx;

	if (io->sendq)
		return sendq_push(io->sendq, mad, len, addr, timeout_ms);
	return io_send_now(ctx, mad, len, addr, timeout_ms);
}

struct mad_transport umad_io_transport(struct umad_io *io)
{
	if (io->sim)
		return (struct mad_transport){ .send = sim_conn_send,
					       .ctx = io->sim };
	return (struct mad_transport){ .send = io_send, .ctx = io };
}
