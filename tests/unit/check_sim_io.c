/*
 * check_sim_io.c - ibsim's client protocol (mad/sim_io.c) against a fake
 * simulator: the socket names, the control exchange (CONNECT, NodeInfo,
 * PortInfo, IsSM, DISCONNECT) and the datagram format both ways.  The
 * fabric test tests/fabric/test_sim_transport.sh runs the real ibsim.
 */
#include "config.h"

#include <check.h>
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "mad/sim_io.h"
#include "mad/wire.h"

/* The simulator's structures, as it lays them out (include/ibsim.h). */
struct fake_ctl {
	uint32_t magic, client, type, len;
	uint8_t data[64];
};
struct fake_hello {
	uint32_t id, qp, issm;
	char node[32];
};
struct fake_req {
	uint32_t dlid, slid, dqp, sqp, status;
	uint64_t length;
	uint8_t mad[256];
};

static char base[64];
static int ctl_fd = -1, out_fd = -1;
static pthread_t server;
static struct {
	uint32_t client_id;	/* what CONNECT carried */
	char node[32];
	int issm_sets[4];
	int n_issm;
	bool disconnected;
} seen;

static socklen_t name_of(struct sockaddr_un *a, const char *tail)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	int n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "%s:%s",
			 base, tail);
	/* ibsim's names include their terminating NUL */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 2 + n);
}

static int bound(const char *tail)
{
	struct sockaddr_un a;
	socklen_t l = name_of(&a, tail);
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, l), 0);
	return fd;
}

/* The simulator's control loop, until DISCONNECT. */
static void *serve(void *arg)
{
	(void)arg;
	for (;;) {
		struct fake_ctl c;
		struct sockaddr_un from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(ctl_fd, &c, sizeof(c), 0,
				     (struct sockaddr *)&from, &fl);
		if (n != sizeof(c))
			return NULL;
		bool stop = false;
		switch (c.type) {
		case 1: {	/* CONNECT */
			struct fake_hello h;
			memcpy(&h, c.data, sizeof(h));
			seen.client_id = h.id;
			memcpy(seen.node, h.node, sizeof(seen.node));
			if (!strcmp(h.node, "nowhere")) {	/* unknown node */
				c.type = 0;
				break;
			}
			char tail[32];
			snprintf(tail, sizeof(tail), "in%u", h.id);
			struct sockaddr_un a;
			socklen_t l = name_of(&a, tail);
			if (connect(out_fd, (struct sockaddr *)&a, l) < 0) {
				c.type = 0;
				break;
			}
			h.id = 0;		/* client index 0: "out0" */
			memcpy(c.data, &h, sizeof(h));
			break;
		}
		case 7: {	/* NodeInfo: a CA, node GUID 0x1000 */
			struct smp_node_info ni = { .base_version = 1,
						    .node_type = 1,
						    .num_ports = 1 };
			ni.node_guid = htobe64(0x1000);
			ni.port_guid = htobe64(0x1000);
			memcpy(c.data, &ni, sizeof(ni));
			break;
		}
		case 8: {	/* PortInfo: LID 7, SM LID 1, port 1, ACTIVE */
			struct smp_port_info pi;
			memset(&pi, 0, sizeof(pi));
			pi.lid = htobe16(7);
			pi.master_sm_lid = htobe16(1);
			pi.local_port = 1;
			pi_set_port_state(&pi, 4);
			memcpy(c.data, &pi, sizeof(pi));
			break;
		}
		case 9: {	/* IsSM */
			int v;
			memcpy(&v, c.data, sizeof(v));
			if (seen.n_issm < 4)
				seen.issm_sets[seen.n_issm++] = v;
			break;
		}
		case 2:
			seen.disconnected = true;
			stop = true;
			break;
		default:
			c.type = 0;
		}
		(void)sendto(ctl_fd, &c, sizeof(c), 0, (struct sockaddr *)&from,
			     fl);
		if (stop)
			return NULL;
	}
}

static void setup(void)
{
	memset(&seen, 0, sizeof(seen));
	snprintf(base, sizeof(base), "ibsm-check-%d", (int)getpid());
	setenv("IBSIM_SOCKNAME", base, 1);
	ctl_fd = bound("ctl");
	out_fd = bound("out0");
	ck_assert_int_eq(pthread_create(&server, NULL, serve, NULL), 0);
}

static void teardown(void)
{
	/* the server ends at DISCONNECT; wake it if the test did not */
	if (!seen.disconnected) {
		struct fake_ctl c = { .magic = 0xdeadbeef, .type = 2 };
		struct sockaddr_un a;
		socklen_t l = name_of(&a, "ctl");
		int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
		(void)sendto(fd, &c, sizeof(c), 0, (struct sockaddr *)&a, l);
		close(fd);
	}
	pthread_join(server, NULL);
	close(ctl_fd);
	close(out_fd);
}

START_TEST(sim_attach_and_exchange)
{
	struct sim_conn *c = NULL;
	struct sim_port_facts f;
	const char *why = "unset";

	ck_assert_int_eq(sim_conn_open(&c, "H0042", &f, &why), 0);
	ck_assert_ptr_null(why);
	ck_assert_str_eq(seen.node, "H0042");
	ck_assert_uint_eq(seen.client_id & (1u << 30), 1u << 30);
	ck_assert_uint_eq(f.node_guid, 0x1000);
	ck_assert_uint_eq(f.port_guid, 0x1001);	/* a CA's port 1 */
	ck_assert_int_eq(f.port, 1);
	ck_assert_uint_eq(f.lid, 7);
	ck_assert_uint_eq(f.sm_lid, 1);
	ck_assert_int_eq(f.state, 4);
	ck_assert_int_eq(sim_conn_set_sm(c, true), 0);
	ck_assert_int_eq(sim_conn_set_sm(c, true), 0);	/* no second ctl */
	ck_assert_int_eq(seen.n_issm, 1);
	ck_assert_int_eq(seen.issm_sets[0], 1);

	/* a directed-route SMP out: permissive DLID, QP0, its length */
	uint8_t mad[MAD_SIZE] = { 1, MAD_CLASS_SMI_DR, 1, MAD_METHOD_GET };
	struct mad_addr to = { .lid = 0xffff, .qpn = 0 };
	ck_assert_int_eq(sim_conn_send(c, mad, MAD_SIZE, &to, 100), 0);
	struct fake_req r;
	ck_assert_int_eq(recv(out_fd, &r, sizeof(r), 0), (ssize_t)sizeof(r));
	ck_assert_uint_eq(ntohs((uint16_t)r.dlid), 0xffff);
	ck_assert_uint_eq(r.slid, 0xffff);
	ck_assert_uint_eq(ntohl(r.dqp), 0);
	ck_assert_uint_eq(ntohl(r.sqp), 0);
	ck_assert_uint_eq(be64toh(r.length), MAD_SIZE);
	ck_assert_int_eq(memcmp(r.mad, mad, MAD_SIZE), 0);
	/* an SA answer out: LID routed, QP1 both ends, source left to ibsim */
	uint8_t sa[MAD_SIZE] = { 1, MAD_CLASS_SA, 2, MAD_METHOD_GET | MAD_METHOD_RESP };
	to = (struct mad_addr){ .lid = 0x1234, .qpn = 1, .qkey = 0x80010000 };
	ck_assert_int_eq(sim_conn_send(c, sa, MAD_SIZE, &to, 100), 0);
	ck_assert_int_eq(recv(out_fd, &r, sizeof(r), 0), (ssize_t)sizeof(r));
	ck_assert_uint_eq(ntohs((uint16_t)r.dlid), 0x1234);
	ck_assert_uint_eq(r.slid, 0);
	ck_assert_uint_eq(ntohl(r.dqp), 1);
	ck_assert_uint_eq(ntohl(r.sqp), 1);

	/* nothing queued yet */
	uint8_t got[MAD_SIZE];
	size_t len = 0;
	struct mad_addr from;
	int status = -1;
	ck_assert_int_eq(sim_conn_recv(c, got, &len, &from, &status, 0), -EAGAIN);
	ck_assert_int_eq(sim_conn_recv(c, got, &len, &from, &status, 20),
			 -ETIMEDOUT);
	/* a dropped SMP comes back with status 110 */
	memset(&r, 0, sizeof(r));
	r.slid = htons(5);
	r.sqp = htonl(1);
	r.status = htonl(110);
	r.length = htobe64(MAD_SIZE);
	r.mad[1] = MAD_CLASS_SA;
	r.mad[3] = 0x81;
	ck_assert_int_eq(send(out_fd, &r, sizeof(r), 0), (ssize_t)sizeof(r));
	ck_assert_int_eq(sim_conn_recv(c, got, &len, &from, &status, 100), 0);
	ck_assert_uint_eq(len, MAD_SIZE);
	ck_assert_uint_eq(from.lid, 5);
	ck_assert_uint_eq(from.qpn, 1);
	ck_assert_int_eq(status, 110);
	ck_assert_int_eq(memcmp(got, r.mad, MAD_SIZE), 0);
	/* a short datagram is refused, not read past */
	ck_assert_int_eq(send(out_fd, &r, 100, 0), 100);
	ck_assert_int_eq(sim_conn_recv(c, got, &len, &from, &status, 100),
			 -EPROTO);

	sim_conn_close(c);
	ck_assert(seen.disconnected);
	ck_assert_int_eq(seen.n_issm, 2);
	ck_assert_int_eq(seen.issm_sets[1], 0);
}
END_TEST

static void on_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(loop, EVBREAK_ONE);
}

/* The simulator's socket fills (it holds max_dgram_qlen datagrams): with
 * a loop, sends never wait; what the socket refuses waits in order and
 * leaves when the socket is writable again. */
START_TEST(sim_send_never_blocks_the_loop)
{
	struct sim_conn *c = NULL;
	struct sim_port_facts f;
	const char *why = NULL;
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);

	ck_assert_int_eq(sim_conn_open(&c, "H0001", &f, &why), 0);
	sim_conn_use_loop(c, loop);
	uint8_t mad[MAD_SIZE] = { 1, MAD_CLASS_SA, 2, MAD_METHOD_GET };
	struct mad_addr to = { .lid = 1, .qpn = 1 };
	const uint32_t n = 600;		/* beyond any default queue length */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t be = htonl(i);
		memcpy(mad + 12, &be, 4);	/* low TID: the sequence */
		ck_assert_int_eq(sim_conn_send(c, mad, MAD_SIZE, &to, 0), 0);
	}
	struct sim_send_stats st;
	sim_conn_send_stats(c, &st);
	ck_assert_uint_eq(st.sent, n);
	ck_assert_uint_gt(st.deferred, 0);	/* the socket did fill */
	ck_assert_uint_eq(st.waiting, st.deferred);
	/* the simulator reads; the loop sends the rest, in order */
	uint32_t got = 0;
	ev_timer tick;
	ev_timer_init(&tick, on_tick, 0.001, 0.001);
	ev_timer_start(loop, &tick);
	for (int round = 0; round < 2000 && got < n; round++) {
		struct fake_req r;
		while (recv(out_fd, &r, sizeof(r), MSG_DONTWAIT) == sizeof(r)) {
			uint32_t seq;
			memcpy(&seq, r.mad + 12, 4);
			ck_assert_uint_eq(ntohl(seq), got);
			got++;
		}
		ev_run(loop, EVRUN_ONCE);
	}
	ev_timer_stop(loop, &tick);
	ck_assert_uint_eq(got, n);
	sim_conn_send_stats(c, &st);
	ck_assert_uint_eq(st.waiting, 0);
	ck_assert_uint_eq(st.refused + st.failed, 0);
	sim_conn_close(c);
	ev_loop_destroy(loop);
}
END_TEST

/* An unknown node: the simulator answers ERROR; nothing is left attached
 * and the step is named. */
START_TEST(sim_attach_refused)
{
	struct sim_conn *c = NULL;
	struct sim_port_facts f;
	const char *why = NULL;

	int rc = sim_conn_open(&c, "nowhere", &f, &why);
	ck_assert_int_eq(rc, -ECONNREFUSED);
	ck_assert_ptr_nonnull(why);
	ck_assert_ptr_nonnull(strstr(why, "attaching"));
	ck_assert(!seen.disconnected);	/* never attached: no DISCONNECT */
}
END_TEST

/* No simulator at all: the control connect fails at once. */
START_TEST(sim_no_simulator)
{
	struct sim_conn *c = NULL;
	struct sim_port_facts f;
	const char *why = NULL;

	setenv("IBSIM_SOCKNAME", "ibsm-check-nobody-here", 1);
	ck_assert_int_eq(sim_conn_open(&c, NULL, &f, &why), -ECONNREFUSED);
	ck_assert_str_eq(why, "connecting to the simulator");
}
END_TEST

START_TEST(sim_codec_bounds)
{
	uint8_t dg[400], mad[MAD_SIZE] = { 1, MAD_CLASS_SA, 2, 1 };
	struct mad_addr to = { .lid = 3, .qpn = 1 };

	ck_assert_uint_eq(sim_dgram_size(), 288);
	ck_assert_int_eq(sim_encode(dg, 100, mad, MAD_SIZE, &to, 1), -EINVAL);
	ck_assert_int_eq(sim_encode(dg, sizeof(dg), mad, MAD_SIZE + 1, &to, 1),
			 -EINVAL);
	ck_assert_int_eq(sim_encode(dg, sizeof(dg), mad, 10, &to, 1), -EINVAL);
	ck_assert_int_eq(sim_encode(dg, sizeof(dg), mad, MAD_SIZE, &to, 1), 288);
	uint8_t out[MAD_SIZE];
	size_t len;
	struct mad_addr from;
	int status;
	ck_assert_int_eq(sim_decode(dg, 288, out, &len, &from, &status), 0);
	ck_assert_uint_eq(len, MAD_SIZE);
	ck_assert_int_eq(memcmp(out, mad, MAD_SIZE), 0);
	ck_assert_int_eq(sim_decode(dg, 287, out, &len, &from, &status), -EPROTO);
	ck_assert_int_eq(sim_decode(dg, 289, out, &len, &from, &status), -EPROTO);
	/* a length field beyond 256 is read as 256, never past the MAD */
	struct fake_req r;
	memcpy(&r, dg, sizeof(r));
	r.length = htobe64(1u << 20);
	ck_assert_int_eq(sim_decode(&r, 288, out, &len, &from, &status), 0);
	ck_assert_uint_eq(len, MAD_SIZE);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sim_io");
	TCase *tc = tcase_create("fake simulator");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, sim_attach_and_exchange);
	tcase_add_test(tc, sim_attach_refused);
	tcase_add_test(tc, sim_send_never_blocks_the_loop);
	suite_add_tcase(s, tc);
	tc = tcase_create("codec");
	tcase_add_test(tc, sim_no_simulator);
	tcase_add_test(tc, sim_codec_bounds);
	suite_add_tcase(s, tc);

	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
