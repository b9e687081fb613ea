/*
 * simlink.c - a client of ibsim's own socket protocol (see simlink.h).
 *
 * The protocol, as ibsim 0.10 speaks it to its umad2sim preload: local
 * datagram sockets in the abstract namespace, named after
 * IBSIM_SOCKNAME (default "sim").  A control socket "<name>:ctl<pid>"
 * talks to ibsim's "<name>:ctl" with fixed-size control records: CONNECT
 * (our pid and the node to attach to, answered with a client id),
 * GET_PORTINFO, DISCONNECT.  The data socket "<name>:in<pid>" is then
 * connected to "<name>:out<client id>" and carries one fixed-size packet
 * per MAD: destination LID and QP, source QP, status, length and the
 * 256-byte MAD.  LIDs and QPNs travel as umad2sim stores them: the
 * network-order 16/32-bit value in a host-order 32-bit field.
 */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "simlink.h"

#define SIM_MAGIC		0xdeadbeefu
#define SIM_CTL_DATA		64
#define SIM_CTL_ERROR		0
#define SIM_CTL_CONNECT		1
#define SIM_CTL_DISCONNECT	2
#define SIM_CTL_GET_PORTINFO	8

struct sim_ctl {
	uint32_t magic;
	uint32_t clientid;
	uint32_t type;
	uint32_t len;
	uint8_t data[SIM_CTL_DATA];
};

struct sim_client_info {
	uint32_t id;		/* our pid in, client id out */
	uint32_t qp;
	uint32_t issm;
	char nodeid[32];
};

struct sim_packet {
	uint32_t dlid;		/* __be16 value */
	uint32_t slid;		/* __be16 value; 0: ibsim fills it in */
	uint32_t dqp;		/* __be32 value */
	uint32_t sqp;		/* __be32 value */
	uint32_t status;	/* __be32 value */
	uint64_t length;	/* __be64: bytes of mad[] used */
	uint8_t mad[256];
};
_Static_assert(sizeof(struct sim_packet) == 288, "ibsim packet is 288 bytes");
_Static_assert(offsetof(struct sim_packet, length) == 24, "length at 24");

/* Abstract socket address "\0<text>\0" (ibsim counts the terminating
 * NUL in the name); returns the address length, or 0 if the text did
 * not fit. */
static socklen_t sim_addr(struct sockaddr_un *a, const char *text)
{
	size_t len = strlen(text);

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	if (len + 2 > sizeof(a->sun_path))
		return 0;
	memcpy(a->sun_path + 1, text, len);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 2 + len);
}

static int sim_bind(int fd, const char *text)
{
	struct sockaddr_un a;
	socklen_t len = sim_addr(&a, text);

	return len && bind(fd, (struct sockaddr *)&a, len) == 0 ? 0 : -1;
}

static int sim_connect(int fd, const char *text)
{
	struct sockaddr_un a;
	socklen_t len = sim_addr(&a, text);

	return len && connect(fd, (struct sockaddr *)&a, len) == 0 ? 0 : -1;
}

/* One control exchange; the answer's data replaces `data` (len bytes). */
static int sim_ctl(struct simlink *l, uint32_t type, void *data, uint32_t len)
{
	struct sim_ctl c = { .magic = SIM_MAGIC, .clientid = l->clientid,
			     .type = type, .len = len };

	if (len > SIM_CTL_DATA)
		return -1;
	if (len)
		memcpy(c.data, data, len);
	if (write(l->ctl_fd, &c, sizeof(c)) != (ssize_t)sizeof(c))
		return -1;
	if (read(l->ctl_fd, &c, sizeof(c)) != (ssize_t)sizeof(c) ||
	    c.magic != SIM_MAGIC || c.type == SIM_CTL_ERROR)
		return -1;
	if (len)
		memcpy(data, c.data, len);
	return 0;
}

int simlink_open(struct simlink *l, const char *node)
{
	const char *base = getenv("IBSIM_SOCKNAME");
	struct sim_client_info info = { .id = (uint32_t)getpid() };
	uint8_t pi[SIM_CTL_DATA] = { 0 };	/* port 0: the attached port */
	char name[100];
	long pid = (long)getpid();

	memset(l, 0, sizeof(*l));
	if (!base || !*base)
		base = "sim";
	if (node)
		snprintf(info.nodeid, sizeof(info.nodeid), "%s", node);
	l->ctl_fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	l->data_fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (l->ctl_fd < 0 || l->data_fd < 0)
		goto fail;
	snprintf(name, sizeof(name), "%s:ctl%ld", base, pid);
	if (sim_bind(l->ctl_fd, name) < 0)
		goto fail;
	snprintf(name, sizeof(name), "%s:ctl", base);
	if (sim_connect(l->ctl_fd, name) < 0)
		goto fail;
	snprintf(name, sizeof(name), "%s:in%ld", base, pid);
	if (sim_bind(l->data_fd, name) < 0 ||
	    sim_ctl(l, SIM_CTL_CONNECT, &info, sizeof(info)) < 0)
		goto fail;
	l->clientid = info.id;
	l->connected = true;
	snprintf(name, sizeof(name), "%s:out%u", base, l->clientid);
	if (sim_connect(l->data_fd, name) < 0 ||
	    sim_ctl(l, SIM_CTL_GET_PORTINFO, pi, sizeof(pi)) < 0)
		goto fail;
	/* PortInfo (14.2.5.6): LID at byte 16, MasterSMLID at 18. */
	l->lid = (uint16_t)(pi[16] << 8 | pi[17]);
	l->sm_lid = (uint16_t)(pi[18] << 8 | pi[19]);
	return 0;
fail:
	simlink_close(l);
	return -1;
}

int simlink_send(struct simlink *l, uint16_t dlid, uint32_t dqp,
		 const void *mad, size_t len)
{
	struct sim_packet p = { 0 };

	if (len > sizeof(p.mad))
		return -1;
	p.dlid = htons(dlid);
	p.dqp = htonl(dqp);
	p.sqp = htonl(1);
	p.length = htobe64(len);
	memcpy(p.mad, mad, len);
	return write(l->data_fd, &p, sizeof(p)) == (ssize_t)sizeof(p) ? 0 : -1;
}

int simlink_recv(struct simlink *l, void *mad, size_t len, int timeout_ms)
{
	struct sim_packet p;
	ssize_t n;

	n = recv(l->data_fd, &p, sizeof(p), MSG_DONTWAIT);
	if (n < 0 && errno == EAGAIN && timeout_ms) {
		struct pollfd pfd = { .fd = l->data_fd, .events = POLLIN };
		int rc = poll(&pfd, 1, timeout_ms);

		if (rc <= 0)
			return rc == 0 ? -ETIMEDOUT : -errno;
		n = recv(l->data_fd, &p, sizeof(p), MSG_DONTWAIT);
	}
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	if ((size_t)n < offsetof(struct sim_packet, mad))
		return -EPROTO;
	n -= (ssize_t)offsetof(struct sim_packet, mad);
	if ((size_t)n > len)
		n = (ssize_t)len;
	memcpy(mad, p.mad, (size_t)n);
	return p.status ? -EIO : (int)n;
}

void simlink_close(struct simlink *l)
{
	if (l->connected)
		sim_ctl(l, SIM_CTL_DISCONNECT, NULL, 0);
	if (l->ctl_fd >= 0)
		close(l->ctl_fd);
	if (l->data_fd >= 0)
		close(l->data_fd);
	l->ctl_fd = l->data_fd = -1;
	l->connected = false;
}
