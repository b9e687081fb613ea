/*
 * umad_io.c - one umad port with a receive pump thread (see umad_io.h).
 *
 * The pump thread does exactly three things: block in umad_recv(), copy
 * the MAD into a queue entry, and ev_async_send() the loop.  It never
 * looks inside a MAD.  The loop drains the queue in arrival order.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/umad.h>

#include "mad/umad_io.h"

#define RECV_POLL_MS	50	/* how often the pump checks for shutdown */
#define RECV_BATCH	64	/* MADs handed over per loop wake-up */

struct rx_entry {
	struct rx_entry *next;
	size_t len;
	int status;
	struct mad_addr from;
	uint8_t mad[MAD_SIZE];
};

struct umad_io {
	struct ev_loop *loop;
	struct umad_port_info info;
	int portid;			/* umad_open_port() handle */
	int issm_fd;			/* holds IsSM while open */
	int agent[256];			/* agent id per management class */
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;
	ev_async wake;
	pthread_mutex_t lock;		/* protects rx_head/rx_tail */
	struct rx_entry *rx_head, *rx_tail;
	umad_io_recv_cb cb;
	void *cb_arg;
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

int umad_io_open(struct umad_io **out, struct ev_loop *loop, uint64_t guid,
		 const uint8_t *classes, unsigned nclasses, bool serve)
{
	struct umad_io *io;
	int rc;

	io = calloc(1, sizeof(*io));
	if (!io)
		return -ENOMEM;
	io->loop = loop;
	io->issm_fd = -1;
	for (int i = 0; i < 256; i++)
		io->agent[i] = -1;
	pthread_mutex_init(&io->lock, NULL);

	rc = choose_port(guid, &io->info);
	if (rc < 0)
		goto fail;
	io->portid = umad_open_port(io->info.ca, io->info.port);
	if (io->portid < 0) {
		rc = io->portid;
		goto fail;
	}
	for (unsigned i = 0; i < nclasses; i++) {
		uint8_t c = classes[i];
		int version = c == MAD_CLASS_SA ? 2 : 1;
		/* Methods we answer or receive unsolicited on this class. */
		long mask[16 / sizeof(long)] = { 0 };
		uint64_t bits = 0;

		if (serve) {
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
	pthread_mutex_destroy(&io->lock);
	free(io);
	return rc < 0 ? rc : -EIO;
}

int umad_io_set_sm(struct umad_io *io, bool on)
{
	char path[256];

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

/* Loop thread: deliver everything the pump queued, in order. */
static void on_wake(struct ev_loop *loop, ev_async *w, int revents)
{
	struct umad_io *io = w->data;
	struct rx_entry *list;

	pthread_mutex_lock(&io->lock);
	list = io->rx_head;
	io->rx_head = io->rx_tail = NULL;
	pthread_mutex_unlock(&io->lock);
	while (list) {
		struct rx_entry *next = list->next;

		io->cb(io->cb_arg, list->mad, list->len, &list->from,
		       list->status);
		free(list);
		list = next;
	}
}

/* Pump thread: the only code that runs off the loop thread. */
static void *pump_main(void *arg)
{
	struct umad_io *io = arg;
	size_t bufsz = umad_size() + MAD_SIZE;
	uint8_t *buf = malloc(bufsz);

	if (!buf)
		return NULL;
	while (!atomic_load(&io->stop)) {
		struct rx_entry *head = NULL, **tail = &head;
		int timeout = RECV_POLL_MS;

		/* Block for one MAD, then take whatever else is already
		 * queued without waiting, and wake the loop once for all. */
		for (int n = 0; n < RECV_BATCH; n++, timeout = 0) {
			int len = MAD_SIZE;

			if (umad_recv(io->portid, buf, &len, timeout) < 0)
				break;	/* timeout, or nothing was queued */
			if (len < 0 || len > MAD_SIZE)
				len = MAD_SIZE;	/* larger (RMPP) MADs are cut */
			struct rx_entry *e = malloc(sizeof(*e));
			if (!e)
				break;
			ib_mad_addr_t *a = umad_get_mad_addr(buf);
			e->next = NULL;
			e->len = (size_t)len;
			e->status = umad_status(buf);
			e->from.lid = be16toh(a->lid);
			e->from.qpn = be32toh(a->qpn);
			e->from.qkey = be32toh(a->qkey);
			e->from.sl = a->sl;
			memcpy(e->mad, umad_get_mad(buf), (size_t)len);
			*tail = e;
			tail = &e->next;
		}
		if (!head)
			continue;
		pthread_mutex_lock(&io->lock);
		if (io->rx_tail)
			io->rx_tail->next = head;
		else
			io->rx_head = head;
		for (io->rx_tail = head; io->rx_tail->next;)
			io->rx_tail = io->rx_tail->next;
		pthread_mutex_unlock(&io->lock);
		ev_async_send(io->loop, &io->wake);
	}
	free(buf);
	return NULL;
}

int umad_io_start(struct umad_io *io, umad_io_recv_cb cb, void *arg)
{
	io->cb = cb;
	io->cb_arg = arg;
	ev_async_init(&io->wake, on_wake);
	io->wake.data = io;
	ev_async_start(io->loop, &io->wake);
	if (pthread_create(&io->thread, NULL, pump_main, io) != 0) {
		ev_async_stop(io->loop, &io->wake);
		return -EAGAIN;
	}
	io->thread_started = true;
	return 0;
}

void umad_io_close(struct umad_io *io)
{
	if (!io)
		return;
	if (io->thread_started) {
		atomic_store(&io->stop, true);
		pthread_join(io->thread, NULL);
		ev_async_stop(io->loop, &io->wake);
	}
	while (io->rx_head) {
		struct rx_entry *n = io->rx_head->next;

		free(io->rx_head);
		io->rx_head = n;
	}
	if (io->issm_fd >= 0)
		close(io->issm_fd);
	umad_close_port(io->portid);
	pthread_mutex_destroy(&io->lock);
	free(io);
}

static int io_send(void *ctx, const void *mad, size_t len,
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

struct mad_transport umad_io_transport(struct umad_io *io)
{
	return (struct mad_transport){ .send = io_send, .ctx = io };
}
