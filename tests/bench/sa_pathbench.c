/*
 * sa_pathbench.c - PathRecord queries per second against any SA.
 *
 *   sa_pathbench [-t SECONDS] [-w WINDOW] [-l MAXLID] [-s SEED]
 *
 * Sends PathRecord Gets (SLID = this port's LID, DLID = random LID in
 * 1..MAXLID) to the SM LID on QP1, keeping WINDOW queries outstanding,
 * for SECONDS.  Prints "answered N ok K errors E timeouts T in S s: Q qps".
 * Works against ibsm and OpenSM alike: single-MAD Get answers only.
 *
 * The client is deliberately lean: one thread, blocking umad_recv(), no
 * event loop and no receive pump.  Under ibsim every process shares the
 * machine's cores, so whatever the client burns is taken from the SM
 * being measured; a client that costs little per query lets the rate
 * depend on the SM rather than on the measuring instrument.  Both SMs are
 * measured with the same client.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/umad.h>

#include "mad/sa_wire.h"

#define PR_COMP_DLID	(1ull << 4)
#define PR_COMP_SLID	(1ull << 5)
#define QP1_QKEY	0x80010000u
#define LOST_MS		500	/* no answer for this long: window lost */

struct bench {
	int portid, agent;
	uint16_t slid, sm_lid, max_lid;
	uint64_t rng;
	uint32_t tid;
	void *sbuf, *rbuf;
	unsigned long sent, answered, ok, errors, timeouts;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int send_one(struct bench *b)
{
	struct sa_mad *m = umad_get_mad(b->sbuf);
	struct sa_path_record *pr = (struct sa_path_record *)m->data;
	uint16_t dlid;

	b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull;
	dlid = (uint16_t)(1 + (b->rng >> 33) % b->max_lid);
	memset(m, 0, sizeof(*m));
	m->hdr.base_version = 1;
	m->hdr.mgmt_class = MAD_CLASS_SA;
	m->hdr.class_version = 2;
	m->hdr.method = MAD_METHOD_GET;
	m->hdr.tid = htobe64(++b->tid);
	m->hdr.attr_id = htobe16(SA_ATTR_PATH_RECORD);
	m->comp_mask = htobe64(PR_COMP_DLID | PR_COMP_SLID);
	pr->slid = htobe16(b->slid);
	pr->dlid = htobe16(dlid);
	umad_set_addr(b->sbuf, b->sm_lid, 1, 0, QP1_QKEY);
	if (umad_send(b->portid, b->agent, b->sbuf, (int)sizeof(*m), 0, 0) < 0)
		return -1;
	b->sent++;
	return 0;
}

/* An answer to a query of this run: low 32 bits of the TID (the kernel
 * owns the high ones) among the TIDs sent so far. */
static bool ours(const struct bench *b, const struct sa_mad *m)
{
	uint32_t tid = (uint32_t)be64toh(m->hdr.tid);

	return (uint32_t)(b->tid - tid) < b->sent;
}

int main(int argc, char **argv)
{
	struct bench b = { .max_lid = 1, .rng = 1 };
	double secs = 3, t0, end, t;
	unsigned window = 16, inflight = 0;
	umad_port_t port;
	int opt;

	while ((opt = getopt(argc, argv, "t:w:l:s:")) != -1) {
		switch (opt) {
		case 't': secs = strtod(optarg, NULL); break;
		case 'w': window = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'l': b.max_lid = (uint16_t)strtoul(optarg, NULL, 0); break;
		case 's': b.rng = strtoull(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: sa_pathbench [-t SECONDS] [-w WINDOW]"
				" [-l MAXLID] [-s SEED]\n");
			return 2;
		}
	}
	if (!window)
		window = 1;
	if (!b.max_lid)
		b.max_lid = 1;
	if (umad_init() < 0 || umad_get_port(NULL, 0, &port) < 0) {
		fprintf(stderr, "sa_pathbench: no umad port\n");
		return 1;
	}
	b.slid = (uint16_t)port.base_lid;
	b.sm_lid = (uint16_t)port.sm_lid;
	b.portid = umad_open_port(port.ca_name, port.portnum);
	umad_release_port(&port);
	if (b.portid < 0) {
		fprintf(stderr, "sa_pathbench: cannot open the port\n");
		return 1;
	}
	b.agent = umad_register(b.portid, MAD_CLASS_SA, 2, 0, NULL);
	b.sbuf = calloc(1, umad_size() + MAD_SIZE);
	b.rbuf = calloc(1, umad_size() + MAD_SIZE);
	if (b.agent < 0 || !b.sbuf || !b.rbuf) {
		fprintf(stderr, "sa_pathbench: cannot register the SA class\n");
		return 1;
	}
	/* TIDs of this run start from the clock so that a late answer to a
	 * previous client of the same simulated port is not counted. */
	b.tid = (uint32_t)time(NULL) << 8;

	t0 = now_s();
	end = t0 + secs;
	while (inflight < window && send_one(&b) == 0)
		inflight++;
	for (t = t0; inflight > 0; ) {
		int len = MAD_SIZE;
		const struct sa_mad *m = umad_get_mad(b.rbuf);

		if (umad_recv(b.portid, b.rbuf, &len, LOST_MS) < 0) {
			/* The whole window is lost: count it, start over. */
			b.timeouts += inflight;
			inflight = 0;
		} else if (umad_status(b.rbuf) == 0 &&
			   len >= (int)sizeof(m->hdr) &&
			   m->hdr.method == (MAD_METHOD_GET | MAD_METHOD_RESP) &&
			   ours(&b, m)) {
			inflight--;
			b.answered++;
			if (m->hdr.status)
				b.errors++;
			else
				b.ok++;
		} else {
			continue;	/* not one of ours */
		}
		t = now_s();
		if (t >= end)
			continue;	/* drain what is still in flight */
		while (inflight < window && send_one(&b) == 0)
			inflight++;
	}
	printf("answered %lu ok %lu errors %lu timeouts %lu in %.2f s: %.0f qps\n",
	       b.answered, b.ok, b.errors, b.timeouts, t - t0,
	       (double)b.answered / (t - t0));
	umad_close_port(b.portid);
	free(b.sbuf);
	free(b.rbuf);
	return b.answered ? 0 : 1;
}
