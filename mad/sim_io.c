/*
 * sim_io.c - ibsim's client protocol spoken directly (see sim_io.h).
 *
 * The protocol, as ibsim 0.12 serves it (ibsim/ibsim.c, include/ibsim.h
 * of the ibsim sources; written here from that description):
 *
 *  - control: a datagram socket bound to the abstract name
 *    "<base>:ctl<id>" and connected to "<base>:ctl".  Each request is one
 *    struct sim_ctl (magic, client id, type, length, 64 bytes of data);
 *    the simulator answers with the same struct, type ERROR on failure.
 *    CONNECT carries {id, qp, issm, node name} and returns the client
 *    index and the node the client was attached to; GET_NODEINFO and
 *    GET_PORTINFO return the raw 64-byte SMP attributes of the port.
 *  - data: a datagram socket bound to "<base>:in<id>", connected to
 *    "<base>:out<index>".  Every MAD, either way, is one struct
 *    sim_request: DLID, SLID, DQP, SQP and status in network order in
 *    32-bit fields, the MAD length as a big-endian 64-bit number, then
 *    the 256-byte MAD.  A MAD the simulator dropped comes back to its
 *    sender with status 110 (ETIMEDOUT).
 *
 * ibsim keys its clients by the id given in CONNECT (umad2sim uses the
 * pid) and names the data socket after it; ours is the pid with bit 30
 * set, so a process that also loaded umad2sim cannot collide with it.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "mad/sim_io.h"
#include "mad/wire.h"

#define SIM_MAGIC		0xdeadbeefu
#define SIM_CTL_DATA		64
#define SIM_STATUS_DROPPED	110
#define SIM_CTL_TIMEOUT_MS	2000
#define SIM_OUTQ_CAP		4096	/* datagrams waiting for the simulator */
#define SIM_RX_BATCH		32	/* datagrams taken per recvmmsg() */

enum {
	SIM_CTL_ERROR = 0,
	SIM_CTL_CONNECT = 1,
	SIM_CTL_DISCONNECT = 2,
	SIM_CTL_GET_NODEINFO = 7,
	SIM_CTL_GET_PORTINFO = 8,
	SIM_CTL_SET_ISSM = 9,
};

struct sim_ctl_msg {
	uint32_t magic;
	uint32_t client;
	uint32_t type;
	uint32_t len;
	uint8_t  data[SIM_CTL_DATA];
};

struct sim_hello {
	uint32_t id;
	uint32_t qp;
	uint32_t issm;
	char     node[32];
};

struct sim_dgram {
	uint32_t dlid;
	uint32_t slid;
	uint32_t dqp;
	uint32_t sqp;
	uint32_t status;
	uint64_t length;
	uint8_t  mad[MAD_SIZE];
};
_Static_assert(sizeof(struct sim_dgram) == 288, "ibsim's sim_request");
_Static_assert(sizeof(struct sim_hello) <= SIM_CTL_DATA, "fits a ctl");

struct sim_conn {
	int ctl_fd;
	int data_fd;
	uint32_t client;	/* index the simulator gave us */
	bool attached;		/* CONNECT succeeded: DISCONNECT at the end */
	bool issm;
	/* With a loop: datagrams the simulator's full socket refused, in
	 * order, sent when it is writable again (sim_conn_use_loop()). */
	struct ev_loop *loop;
	ev_io writable;
	struct sim_dgram *outq;
	unsigned out_head, out_count;
	struct sim_send_stats st;
	/* Datagrams taken in one recvmmsg(), handed out one per recv. */
	struct sim_dgram *inb;
	size_t in_len[SIM_RX_BATCH];
	unsigned in_n, in_i;
	bool drained;		/* the last batch emptied the socket */
};

size_t sim_dgram_size(void)
{
	return sizeof(struct sim_dgram);
}

/* The abstract Unix socket address "<base>:<what><n>" ("<base>:ctl"
 * for the simulator's own control socket: what "ctl", n < 0). */
static socklen_t sim_name(struct sockaddr_un *a, const char *what, long n)
{
	const char *base = getenv("IBSIM_SOCKNAME");
	char tail[32];

	if (!base || !*base)
		base = "sim";
	if (n < 0)
		snprintf(tail, sizeof(tail), "%s", what);
	else
		snprintf(tail, sizeof(tail), "%s%ld", what, n);
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	int len = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "%s:%s",
			   base, tail);
	if (len < 0 || (size_t)len >= sizeof(a->sun_path) - 2)
		len = (int)sizeof(a->sun_path) - 3;
	/* the simulator's names carry their terminating NUL */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			   (size_t)len + 1);
}

/* One control request and its answer (bounded wait).  0 or -errno. */
static int sim_ctl(struct sim_conn *c, uint32_t type, void *data, size_t len)
{
	struct sim_ctl_msg m = { .magic = SIM_MAGIC, .client = c->client,
				 .type = type, .len = (uint32_t)len };
	struct pollfd pfd = { .fd = c->ctl_fd, .events = POLLIN };

	if (len > SIM_CTL_DATA)
		return -EINVAL;
	if (len)
		memcpy(m.data, data, len);
	if (write(c->ctl_fd, &m, sizeof(m)) != (ssize_t)sizeof(m))
		return errno ? -errno : -EIO;
	int rc = poll(&pfd, 1, SIM_CTL_TIMEOUT_MS);
	if (rc == 0)
		return -ETIMEDOUT;
	if (rc < 0)
		return -errno;
	if (read(c->ctl_fd, &m, sizeof(m)) != (ssize_t)sizeof(m))
		return -EPROTO;
	if (m.magic != SIM_MAGIC || m.type == SIM_CTL_ERROR)
		return -ECONNREFUSED;
	if (len)
		memcpy(data, m.data, len);
	return 0;
}

static int sim_socket(const char *what, uint32_t id)
{
	struct sockaddr_un a;
	socklen_t n = sim_name(&a, what, (long)id);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, n) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static int sim_connect_to(int fd, const char *what, long n)
{
	struct sockaddr_un a;
	socklen_t len = sim_name(&a, what, n);

	return connect(fd, (struct sockaddr *)&a, len) < 0 ? -errno : 0;
}

int sim_conn_open(struct sim_conn **out, const char *host,
		  struct sim_port_facts *facts, const char **why)
{
	struct sim_conn *c = calloc(1, sizeof(*c));
	uint32_t id = (uint32_t)getpid() | 1u << 30;
	struct sim_hello hello = { .id = id };
	uint8_t attr[SIM_CTL_DATA];
	int rc;

	*why = "out of memory";
	if (!c)
		return -ENOMEM;
	c->ctl_fd = c->data_fd = -1;
	*why = "control socket";
	rc = c->ctl_fd = sim_socket("ctl", id);
	if (rc < 0)
		goto fail;
	*why = "connecting to the simulator";
	rc = sim_connect_to(c->ctl_fd, "ctl", -1);
	if (rc < 0)
		goto fail;
	*why = "data socket";
	rc = c->data_fd = sim_socket("in", id);
	if (rc < 0)
		goto fail;
	if (host)
		snprintf(hello.node, sizeof(hello.node), "%s", host);
	*why = "attaching (unknown node, or the simulator is full)";
	rc = sim_ctl(c, SIM_CTL_CONNECT, &hello, sizeof(hello));
	if (rc < 0)
		goto fail;
	c->client = hello.id;
	c->attached = true;
	*why = "data socket";
	rc = sim_connect_to(c->data_fd, "out", (long)c->client);
	if (rc < 0)
		goto fail;
	/* Read without blocking: the loop's watcher says when. */
	rc = fcntl(c->data_fd, F_GETFL);
	if (rc < 0 || fcntl(c->data_fd, F_SETFL, rc | O_NONBLOCK) < 0) {
		rc = -errno;
		goto fail;
	}

	memset(facts, 0, sizeof(*facts));
	memcpy(facts->node, hello.node, sizeof(hello.node) - 1);
	*why = "reading NodeInfo";
	memset(attr, 0, sizeof(attr));
	rc = sim_ctl(c, SIM_CTL_GET_NODEINFO, attr, sizeof(attr));
	if (rc < 0)
		goto fail;
	struct smp_node_info ni;
	memcpy(&ni, attr, sizeof(ni));
	facts->node_guid = be64toh(ni.node_guid);
	facts->port_guid = be64toh(ni.port_guid);
	*why = "reading PortInfo";
	memset(attr, 0, sizeof(attr));		/* byte 0: port 0 = ours */
	rc = sim_ctl(c, SIM_CTL_GET_PORTINFO, attr, sizeof(attr));
	if (rc < 0)
		goto fail;
	struct smp_port_info pi;
	memcpy(&pi, attr, sizeof(pi));
	facts->port = pi.local_port;
	/* The simulator keeps one NodeInfo per node and fills PortGUID in
	 * per port when it answers; its rule: a switch's ports carry the
	 * node GUID, a CA's port n carries the node GUID + n. */
	if (ni.node_type != 2)
		facts->port_guid = facts->node_guid + (uint64_t)pi.local_port;
	facts->lid = be16toh(pi.lid);
	facts->sm_lid = be16toh(pi.master_sm_lid);
	facts->state = (int)pi_port_state(&pi);
	facts->phys_state = (int)pi_phys_state(&pi);
	*why = NULL;
	*out = c;
	return 0;
fail:
	if (c->attached)
		(void)sim_ctl(c, SIM_CTL_DISCONNECT, NULL, 0);
	if (c->data_fd >= 0)
		close(c->data_fd);
	if (c->ctl_fd >= 0)
		close(c->ctl_fd);
	free(c);
	return rc < 0 ? rc : -EIO;
}

int sim_conn_set_sm(struct sim_conn *c, bool on)
{
	int v = on;

	if (c->issm == on)
		return 0;
	int rc = sim_ctl(c, SIM_CTL_SET_ISSM, &v, sizeof(v));
	if (rc == 0)
		c->issm = on;
	return rc;
}

int sim_conn_fd(const struct sim_conn *c)
{
	return c->data_fd;
}

int sim_decode(const void *dgram, size_t n, void *mad, size_t *len,
	       struct mad_addr *from, int *status)
{
	struct sim_dgram d;

	if (n != sizeof(d))
		return -EPROTO;
	memcpy(&d, dgram, sizeof(d));
	uint64_t l = be64toh(d.length);
	if (l < MAD_HDR_SIZE || l > MAD_SIZE)
		l = MAD_SIZE;	/* the simulator always carries 256 bytes */
	memcpy(mad, d.mad, (size_t)l);
	*len = (size_t)l;
	/* 16-bit LIDs travel in network order in the low half of the field */
	from->lid = ntohs((uint16_t)d.slid);
	from->qpn = ntohl(d.sqp);
	from->qkey = 0;
	from->sl = 0;
	*status = (int)ntohl(d.status);
	return 0;
}

long sim_encode(void *dgram, size_t room, const void *mad, size_t len,
		const struct mad_addr *to, uint32_t sqp)
{
	struct sim_dgram d;

	if (room < sizeof(d) || len > MAD_SIZE || len < MAD_HDR_SIZE)
		return -EINVAL;
	memset(&d, 0, sizeof(d));
	d.dlid = htons(to->lid);
	/* 0: the simulator fills in our LID; directed route stays 0xffff */
	d.slid = to->lid == 0xffff ? 0xffff : 0;
	d.dqp = htonl(to->qpn);
	d.sqp = htonl(sqp);
	d.length = htobe64((uint64_t)len);
	memcpy(d.mad, mad, len);
	memcpy(dgram, &d, sizeof(d));
	return (long)sizeof(d);
}

/* Take what is queued on the socket, up to SIM_RX_BATCH datagrams in one
 * system call.  Returns how many, or -errno (-EAGAIN: none). */
static int take_batch(struct sim_conn *c)
{
	struct mmsghdr m[SIM_RX_BATCH];
	struct iovec v[SIM_RX_BATCH];

	if (!c->inb) {
		c->inb = malloc(SIM_RX_BATCH * sizeof(*c->inb));
		if (!c->inb)
			return -ENOMEM;
	}
	memset(m, 0, sizeof(m));
	for (unsigned i = 0; i < SIM_RX_BATCH; i++) {
		v[i] = (struct iovec){ .iov_base = &c->inb[i],
				       .iov_len = sizeof(c->inb[i]) };
		m[i].msg_hdr.msg_iov = &v[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
	/* MSG_TRUNC: each length is the datagram's own, so an oversized
	 * one is seen as such (and refused), not silently cut */
	int n = recvmmsg(c->data_fd, m, SIM_RX_BATCH, MSG_DONTWAIT | MSG_TRUNC,
			 NULL);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++)
		c->in_len[i] = m[i].msg_len;
	c->in_n = (unsigned)n;
	c->in_i = 0;
	c->drained = n < SIM_RX_BATCH;
	return n;
}

int sim_conn_recv(void *ctx, void *mad, size_t *len, struct mad_addr *from,
		  int *status, int timeout_ms)
{
	struct sim_conn *c = ctx;

	while (c->in_i >= c->in_n) {
		/* The batch was all there was: say so without asking the
		 * socket again (the loop's watcher is level-triggered, a
		 * datagram that came since wakes it again). */
		if (c->drained && timeout_ms <= 0) {
			c->drained = false;
			return -EAGAIN;
		}
		c->drained = false;
		int n = take_batch(c);

		if (n > 0)
			break;
		if (n == 0)
			n = -EAGAIN;
		if (n != -EAGAIN || timeout_ms <= 0)
			return n;
		struct pollfd pfd = { .fd = c->data_fd, .events = POLLIN };
		int rc = poll(&pfd, 1, timeout_ms);
		if (rc <= 0)
			return rc == 0 ? -ETIMEDOUT : -errno;
		timeout_ms = 0;
	}
	unsigned i = c->in_i++;
	return sim_decode(&c->inb[i], c->in_len[i], mad, len, from, status);
}

/* Send what waits, oldest first, until the socket refuses one. */
static void outq_flush(struct sim_conn *c)
{
	while (c->out_count) {
		const struct sim_dgram *d = &c->outq[c->out_head];

		if (send(c->data_fd, d, sizeof(*d), MSG_DONTWAIT) < 0) {
			if (errno == EAGAIN || errno == ENOBUFS)
				return;
			c->st.failed++;		/* the simulator went away */
		}
		c->out_head = (c->out_head + 1) % SIM_OUTQ_CAP;
		c->out_count--;
	}
	if (c->loop)
		ev_io_stop(c->loop, &c->writable);
}

static void on_writable(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	outq_flush(w->data);
}

void sim_conn_use_loop(struct sim_conn *c, struct ev_loop *loop)
{
	c->loop = loop;
	ev_io_init(&c->writable, on_writable, c->data_fd, EV_WRITE);
	c->writable.data = c;
}

void sim_conn_send_stats(const struct sim_conn *c, struct sim_send_stats *out)
{
	*out = c->st;
	out->waiting = c->out_count;
}

int sim_conn_send(void *ctx, const void *mad, size_t len,
		  const struct mad_addr *addr, int timeout_ms)
{
	struct sim_conn *c = ctx;
	const struct mad_hdr *h = mad;
	struct sim_dgram d;
	/* SMPs leave from QP0, everything else from QP1 */
	uint32_t sqp = h->mgmt_class == MAD_CLASS_SMI ||
		       h->mgmt_class == MAD_CLASS_SMI_DR ? 0 : 1;
	long n = sim_encode(&d, sizeof(d), mad, len, addr, sqp);

	(void)timeout_ms;	/* the engine keeps its own timers */
	if (n < 0)
		return (int)n;
	if (c->loop && c->out_count)
		outq_flush(c);
	for (int tries = 0; !c->out_count; tries++) {
		if (send(c->data_fd, &d, sizeof(d), MSG_DONTWAIT) == (ssize_t)n) {
			c->st.sent++;
			return 0;
		}
		if (errno != EAGAIN && errno != ENOBUFS) {
			c->st.failed++;
			return -errno;
		}
		if (c->loop)
			break;
		/* No loop (a client tool): wait a little, bounded. */
		if (tries >= 100) {
			c->st.failed++;
			return -EAGAIN;
		}
		struct pollfd pfd = { .fd = c->data_fd, .events = POLLOUT };
		(void)poll(&pfd, 1, 1);
	}
	/*
	 * The simulator's socket is full: it holds at most
	 * net.unix.max_dgram_qlen datagrams (10 by default) and the
	 * simulator may itself be waiting to write to us.  Blocking here
	 * would stop the loop from reading and deadlock both; keep the
	 * datagram, in order, and send it when the socket is writable.
	 */
	if (!c->outq) {
		c->outq = malloc(SIM_OUTQ_CAP * sizeof(*c->outq));
		if (!c->outq)
			return -ENOMEM;
	}
	if (c->out_count == SIM_OUTQ_CAP) {
		c->st.refused++;
		return -ENOBUFS;
	}
	c->outq[(c->out_head + c->out_count) % SIM_OUTQ_CAP] = d;
	c->out_count++;
	c->st.sent++;
	c->st.deferred++;
	if (c->out_count > c->st.peak)
		c->st.peak = c->out_count;
	ev_io_start(c->loop, &c->writable);
	return 0;
}

void sim_conn_close(struct sim_conn *c)
{
	if (!c)
		return;
	if (c->loop)
		ev_io_stop(c->loop, &c->writable);
	if (c->issm)
		(void)sim_conn_set_sm(c, false);
	(void)sim_ctl(c, SIM_CTL_DISCONNECT, NULL, 0);
	close(c->data_fd);
	close(c->ctl_fd);
	free(c->inb);
	free(c->outq);
	free(c);
}
