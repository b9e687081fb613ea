/*
 * sa_pathbench.c - PathRecord queries per second against any SA.
 *
 *   sa_pathbench [-d] [-t SECONDS] [-w WINDOW] [-l MAXLID] [-s SEED]
 *   sa_pathbench [-d] -p PAIRS [-w WINDOW]
 *
 * -d: talk to ibsim's socket directly (mad/sim_io.h: SIM_HOST's port, no
 * umad2sim in this process) instead of through the first umad port.
 *
 * Sends PathRecord Gets (SLID = this port's LID, DLID = random LID in
 * 1..MAXLID) to the SM LID on QP1, keeping WINDOW queries outstanding,
 * for SECONDS.  Prints "answered N ok K errors E timeouts T in S s: Q qps".
 * Works against ibsm and OpenSM alike: single-MAD Get answers only.
 *
 * With -p it asks once for each "SLID DLID" line of the file PAIRS (any
 * pair, not only from this port) and prints the answers as a JSON list,
 * one object per pair in input order: {"slid", "dlid", "status",
 * "sgid", "dgid", "hop_limit"} (the record's fields; status is the MAD
 * status, the record fields are absent when it is not 0).  A Get answer
 * fits one MAD, so no record crosses the bytes umad2sim damages.  Lost
 * queries are asked again, three times at most (exit 1 then).
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
#include "mad/sim_io.h"

#define PR_COMP_DLID	(1ull << 4)
#define PR_COMP_SLID	(1ull << 5)
#define QP1_QKEY	0x80010000u
#define LOST_MS		500	/* no answer for this long: window lost */

struct bench {
	bool direct;			/* -d: ibsim's socket, not umad */
	struct sim_conn *link;
	int portid, agent;
	uint16_t slid, sm_lid, max_lid;
	uint64_t rng;
	uint32_t tid;
	void *sbuf, *rbuf;
	unsigned long sent, answered, ok, errors, timeouts;
	/* -p: the pairs, and per pair its state and answer */
	size_t npairs;
	uint16_t (*pairs)[2];
	struct pair_answer *ans;
};

struct pair_answer {
	uint8_t state;			/* 0 not sent, 1 in flight, 2 answered */
	uint8_t tries;
	uint16_t status;
	struct sa_path_record rec;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int send_get(struct bench *b, uint16_t slid, uint16_t dlid,
		    uint32_t tid)
{
	struct sa_mad *m = umad_get_mad(b->sbuf);
	struct sa_path_record *pr = (struct sa_path_record *)m->data;

	memset(m, 0, sizeof(*m));
	sa_request_hdr(m, MAD_METHOD_GET, SA_ATTR_PATH_RECORD,
		       PR_COMP_DLID | PR_COMP_SLID);
	m->hdr.tid = htobe64(tid);
	pr->slid = htobe16(slid);
	pr->dlid = htobe16(dlid);
	if (b->direct) {
		struct mad_addr to = { .lid = b->sm_lid, .qpn = 1,
				       .qkey = QP1_QKEY };
		return sim_conn_send(b->link, m, sizeof(*m), &to, 0) < 0 ? -1 : 0;
	}
	umad_set_addr(b->sbuf, b->sm_lid, 1, 0, QP1_QKEY);
	if (umad_send(b->portid, b->agent, b->sbuf, (int)sizeof(*m), 0, 0) < 0)
		return -1;
	return 0;
}

/* Receive one MAD into b->rbuf's MAD, waiting up to timeout_ms.  Returns
 * its length, -1 when nothing came, -2 for a MAD to ignore (a failed
 * send reported back). */
static int recv_mad(struct bench *b, int timeout_ms)
{
	int len = MAD_SIZE;

	if (b->direct) {
		size_t n = 0;
		struct mad_addr from;
		int status = 0;
		int rc = sim_conn_recv(b->link, umad_get_mad(b->rbuf), &n,
				       &from, &status, timeout_ms);
		if (rc == -ETIMEDOUT || rc == -EAGAIN)
			return -1;
		return rc < 0 || status ? -2 : (int)n;
	}
	if (umad_recv(b->portid, b->rbuf, &len, timeout_ms) < 0)
		return -1;
	return umad_status(b->rbuf) ? -2 : len;
}

static int send_one(struct bench *b)
{
	uint16_t dlid;

	b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull;
	dlid = (uint16_t)(1 + (b->rng >> 33) % b->max_lid);
	if (send_get(b, b->slid, dlid, ++b->tid) < 0)
		return -1;
	b->sent++;
	return 0;
}

/* -p: read "SLID DLID" lines.  Returns 0 or -1 (bad input, no memory). */
static int read_pairs(struct bench *b, const char *path)
{
	FILE *in = fopen(path, "r");
	unsigned s, d;
	size_t cap = 0;
	int n;

	if (!in) {
		perror(path);
		return -1;
	}
	while ((n = fscanf(in, "%u %u", &s, &d)) == 2) {
		if (!s || !d || s > 0xbfff || d > 0xbfff) {
			fprintf(stderr, "%s: pair %zu: LIDs 1-0xbfff\n",
				path, b->npairs + 1);
			fclose(in);
			return -1;
		}
		if (b->npairs == cap) {
			cap = cap ? 2 * cap : 1024;
			void *np = realloc(b->pairs, cap * sizeof(*b->pairs));
			if (!np) {
				fclose(in);
				return -1;
			}
			b->pairs = np;
		}
		b->pairs[b->npairs][0] = (uint16_t)s;
		b->pairs[b->npairs][1] = (uint16_t)d;
		b->npairs++;
	}
	fclose(in);
	if (n != EOF || !b->npairs) {
		fprintf(stderr, "%s: pair %zu: want \"SLID DLID\" lines\n",
			path, b->npairs + 1);
		return -1;
	}
	b->ans = calloc(b->npairs + 1, sizeof(*b->ans));
	return b->ans ? 0 : -1;
}

static void print_gid(const char *key, const uint8_t *g)
{
	printf(", \"%s\": \"", key);
	for (int i = 0; i < 16; i += 2)
		printf("%s%02x%02x", i ? ":" : "", g[i], g[i + 1]);
	printf("\"");
}

static void print_answers(const struct bench *b)
{
	printf("[\n");
	for (size_t i = 0; i < b->npairs; i++) {
		const struct pair_answer *a = &b->ans[i];

		printf("  {\"slid\": %u, \"dlid\": %u, \"status\": %u",
		       b->pairs[i][0], b->pairs[i][1], a->status);
		if (a->state == 2 && !a->status) {
			print_gid("sgid", a->rec.sgid);
			print_gid("dgid", a->rec.dgid);
			printf(", \"rec_slid\": %u, \"rec_dlid\": %u, "
			       "\"hop_limit\": %u", be16toh(a->rec.slid),
			       be16toh(a->rec.dlid),
			       be32toh(a->rec.hop_flow_raw) & 0xff);
		}
		printf("}%s\n", i + 1 < b->npairs ? "," : "");
	}
	printf("]\n");
}

/*
 * -p: every pair once, WINDOW in flight; TID = base + pair index.  When
 * nothing arrives for LOST_MS, what is in flight is asked again.
 */
static int run_pairs(struct bench *b, unsigned window)
{
	size_t next = 0, done = 0, inflight = 0;

	while (done < b->npairs) {
		while (inflight < window && next < b->npairs) {
			if (send_get(b, b->pairs[next][0], b->pairs[next][1],
				     b->tid + (uint32_t)next) < 0)
				return -1;
			b->ans[next].state = 1;
			b->ans[next].tries = 1;
			next++, inflight++;
		}
		const struct sa_mad *m = umad_get_mad(b->rbuf);
		int len = recv_mad(b, LOST_MS);

		if (len == -1) {
			for (size_t i = 0; i < next; i++) {
				struct pair_answer *a = &b->ans[i];

				if (a->state != 1)
					continue;
				if (a->tries >= 3) {
					fprintf(stderr, "sa_pathbench: no answer "
						"for %u -> %u\n", b->pairs[i][0],
						b->pairs[i][1]);
					return -1;
				}
				a->tries++;
				if (send_get(b, b->pairs[i][0], b->pairs[i][1],
					     b->tid + (uint32_t)i) < 0)
					return -1;
			}
			continue;
		}
		if (len < (int)sizeof(*m) - SA_DATA_SIZE +
		    (int)sizeof(struct sa_path_record) ||
		    m->hdr.method != (MAD_METHOD_GET | MAD_METHOD_RESP))
			continue;
		size_t i = (uint32_t)be64toh(m->hdr.tid) - b->tid;
		if (i >= next || b->ans[i].state != 1)
			continue;	/* late duplicate, or not ours */
		b->ans[i].state = 2;
		b->ans[i].status = be16toh(m->hdr.status);
		memcpy(&b->ans[i].rec, m->data, sizeof(b->ans[i].rec));
		done++, inflight--;
	}
	print_answers(b);
	return 0;
}

/* An answer to a query of this run: low 32 bits of the TID (the kernel
 * owns the high ones) among the TIDs sent so far. */
static bool ours(const struct bench *b, const struct sa_mad *m)
{
	uint32_t tid = (uint32_t)be64toh(m->hdr.tid);

	return (uint32_t)(b->tid - tid) < b->sent;
}

/* The port: SIM_HOST's port through ibsim's socket (-d), else the first
 * umad port.  Sets slid and sm_lid.  0, or -1 with a message. */
static int open_port(struct bench *b)
{
	umad_port_t port;

	if (b->direct) {
		struct sim_port_facts f;
		const char *why = NULL;
		int rc = sim_conn_open(&b->link, getenv("SIM_HOST"), &f, &why);
		if (rc < 0) {
			fprintf(stderr, "sa_pathbench: cannot attach to ibsim (%s): %s\n",
				why, strerror(-rc));
			return -1;
		}
		b->slid = f.lid;
		b->sm_lid = f.sm_lid;
		return 0;
	}
	if (umad_init() < 0 || umad_get_port(NULL, 0, &port) < 0) {
		fprintf(stderr, "sa_pathbench: no umad port\n");
		return -1;
	}
	b->slid = (uint16_t)port.base_lid;
	b->sm_lid = (uint16_t)port.sm_lid;
	b->portid = umad_open_port(port.ca_name, port.portnum);
	umad_release_port(&port);
	if (b->portid < 0) {
		fprintf(stderr, "sa_pathbench: cannot open the port\n");
		return -1;
	}
	b->agent = umad_register(b->portid, MAD_CLASS_SA, 2, 0, NULL);
	if (b->agent < 0) {
		fprintf(stderr, "sa_pathbench: cannot register the SA class\n");
		return -1;
	}
	return 0;
}

static void close_port(struct bench *b)
{
	if (b->direct)
		sim_conn_close(b->link);
	else
		umad_close_port(b->portid);
}

int main(int argc, char **argv)
{
	struct bench b = { .max_lid = 1, .rng = 1 };
	double secs = 3, t0, end, t;
	unsigned window = 16, inflight = 0;
	const char *pairs = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "dp:t:w:l:s:")) != -1) {
		switch (opt) {
		case 'd': b.direct = true; break;
		case 'p': pairs = optarg; break;
		case 't': secs = strtod(optarg, NULL); break;
		case 'w': window = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'l': b.max_lid = (uint16_t)strtoul(optarg, NULL, 0); break;
		case 's': b.rng = strtoull(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: sa_pathbench [-d] [-t SECONDS] [-w WINDOW]"
				" [-l MAXLID] [-s SEED]\n"
				"       sa_pathbench [-d] -p PAIRS [-w WINDOW]\n");
			return 2;
		}
	}
	if (!window)
		window = 1;
	if (!b.max_lid)
		b.max_lid = 1;
	if (open_port(&b) < 0)
		return 1;
	/* After umad_init(): umad_size() is the header size of the ABI the
	 * library found. */
	b.sbuf = calloc(1, umad_size() + MAD_SIZE);
	b.rbuf = calloc(1, umad_size() + MAD_SIZE);
	if (!b.sbuf || !b.rbuf)
		return 1;
	/* TIDs of this run start from the clock so that a late answer to a
	 * previous client of the same simulated port is not counted. */
	b.tid = (uint32_t)time(NULL) << 8;
	if (pairs) {
		int rc = read_pairs(&b, pairs) < 0 || run_pairs(&b, window) < 0;

		close_port(&b);
		free(b.sbuf);
		free(b.rbuf);
		free(b.pairs);
		free(b.ans);
		return rc;
	}

	t0 = now_s();
	end = t0 + secs;
	while (inflight < window && send_one(&b) == 0)
		inflight++;
	for (t = t0; inflight > 0; ) {
		const struct sa_mad *m = umad_get_mad(b.rbuf);
		int len = recv_mad(&b, LOST_MS);

		if (len == -1) {
			/* The whole window is lost: count it, start over. */
			b.timeouts += inflight;
			inflight = 0;
		} else if (len >= (int)sizeof(m->hdr) &&
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
	close_port(&b);
	free(b.sbuf);
	free(b.rbuf);
	return b.answered ? 0 : 1;
}
