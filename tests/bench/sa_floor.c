/*
 * sa_floor.c - the cheapest SA there can be: every SA request is answered
 * at once with its own bytes, method turned into the response and status
 * 0.  No decoding, no records, no fabric model; one thread blocking in
 * umad_recv() and calling umad_send().
 *
 *   sa_floor [-c COUNT]
 *
 * It measures what an SA that does no work costs with the usual blocking
 * receive: the CPU a process spends per SA query just to move the MADs
 * through libibumad (under ibsim: the umad2sim preload, its receiver
 * thread, the simulator's socket).  A design that wakes fewer threads per
 * MAD can spend less.
 * tests/bench/sa_paths.sh -f runs it on the SM's port after ibsm brought
 * the fabric up and left, and measures it exactly as it measures OpenSM
 * and ibsm.  The answers are not PathRecords; sa_pathbench counts only
 * that a status 0 answer came back.  A benchmark helper, not an SA.
 * With -c it exits after COUNT answers; otherwise on SIGTERM.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/umad.h>

#define SA_CLASS	0x03
#define SA_VERSION	2
#define MAD_LEN		256
#define M_GET		0x01
#define M_SET		0x02
#define M_GET_TABLE	0x12
#define M_DELETE	0x15
#define M_RESPONSE	0x80
#define QP1_QKEY	0x80010000

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	unsigned long count = 0, answered = 0;
	long mask[16 / sizeof(long)] = { 0 };
	uint64_t bits = 1ull << M_GET | 1ull << M_SET | 1ull << M_GET_TABLE |
			1ull << M_DELETE;
	int opt, portid, agent, issm_fd;
	char issm[256];
	void *buf;

	while ((opt = getopt(argc, argv, "c:")) != -1) {
		if (opt != 'c') {
			fprintf(stderr, "usage: sa_floor [-c COUNT]\n");
			return 2;
		}
		count = strtoul(optarg, NULL, 0);
	}
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	if (umad_init() < 0) {
		fprintf(stderr, "sa_floor: umad_init failed\n");
		return 1;
	}
	portid = umad_open_port(NULL, 0);
	if (portid < 0) {
		fprintf(stderr, "sa_floor: umad_open_port: %s\n",
			strerror(-portid));
		return 1;
	}
	memcpy(mask, &bits, sizeof(bits));
	agent = umad_register(portid, SA_CLASS, SA_VERSION, 0, mask);
	/* Switches send their traps to the SM's port: take them. */
	if (umad_register(portid, 0x01, 1, 0, NULL) < 0 ||
	    umad_register(portid, 0x81, 1, 0, NULL) < 0)
		agent = -1;
	/* ibsim hands requests only to a client that holds the port's issm
	 * device (IsSM set), as the kernel does for the SM's port.  After the
	 * agents: a MAD that arrives before its class is registered crashes
	 * umad2sim's receiver thread. */
	if (umad_get_issm_path(NULL, 0, issm, sizeof(issm)) < 0 ||
	    (issm_fd = open(issm, O_RDWR)) < 0) {
		fprintf(stderr, "sa_floor: cannot open the issm device\n");
		return 1;
	}
	buf = umad_alloc(1, umad_size() + MAD_LEN);
	if (agent < 0 || !buf) {
		fprintf(stderr, "sa_floor: umad_register/alloc failed\n");
		return 1;
	}
	printf("sa_floor: serving\n");
	fflush(stdout);
	while (!stop && (!count || answered < count)) {
		int len = MAD_LEN;
		struct ib_mad_addr *a;
		uint8_t *mad;

		if (umad_recv(portid, buf, &len, 200) < 0)
			continue;	/* timeout (checks stop) or error */
		mad = umad_get_mad(buf);
		if (len < 24 || mad[1] != SA_CLASS || (mad[3] & M_RESPONSE))
			continue;
		a = umad_get_mad_addr(buf);
		mad[3] = mad[3] == M_GET_TABLE ? 0x92 :
			 mad[3] == M_DELETE ? 0x95 : 0x81;
		mad[4] = mad[5] = 0;	/* status */
		umad_set_addr(buf, be16toh(a->lid), (int)be32toh(a->qpn),
			      a->sl, QP1_QKEY);
		if (umad_send(portid, agent, buf, MAD_LEN, 0, 0) == 0)
			answered++;
	}
	printf("sa_floor: %lu answered\n", answered);
	umad_free(buf);
	close(issm_fd);
	umad_close_port(portid);
	return 0;
}
