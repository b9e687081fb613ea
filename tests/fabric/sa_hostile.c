/*
 * sa_hostile.c - a hostile SA client and a well-behaved one, for the
 * bounded-work test and benchmark: PathRecord GetTables for a P_Key
 * nobody holds, over every pair of ports.
 *
 *   sa_hostile flood [-r RATE] [-t SECONDS] [-k PKEY|none] [-s]
 *   sa_hostile probe [-r RATE] [-t SECONDS] [-l MAXLID]
 *   sa_hostile slowack [-n TRANSFERS] [-i INTERVAL] [-t SECONDS]
 *
 * flood sends RATE PathRecord GetTables a second with both ends left
 * open, with P_Key PKEY in the ComponentMask (default 0x1234, a partition
 * nobody is in; "none": no P_Key component, the default partition: every
 * pair of the subnet), for SECONDS, and counts the answers by status
 * (-s: the source is this port's GID, the destination open: "all my
 * paths", a legitimate question that a flood repeats):
 *   "flood sent N answered A ok O busy B no_resources R other X"
 *
 * probe asks what a normal host asks, RATE times a second in all,
 * alternately: a PathRecord Get from this port to a random LID 1..MAXLID
 * (default: the SM's LID), and an SMInfo Get (LID-routed SMP) to the SM.
 * It measures each answer's latency and prints, per kind,
 *   "probe path sent N answered A lost L p50 X p99 Y max Z ms"
 *   "probe sminfo sent N answered A lost L p50 X p99 Y max Z ms"
 * Exit status 0 when every probe was answered (whatever its MAD status),
 * 1 when some were lost (no answer within 2 s), 2 on bad usage.
 *
 * slowack holds RMPP answers open: it keeps TRANSFERS (default 4)
 * NodeRecord GetTables in flight, and every INTERVAL s (default 0.3)
 * ACKs segment 1 with window 1 of each answer that has started, again
 * and again, for SECONDS.  An answer ABORTed by the SA is replaced by a
 * new request at once, as is one refused; at the end it prints
 *   "slowack requests N held H aborted A refused R max_held X s"
 * (held: answers whose first segment came; max_held: the longest time
 * from an answer's first segment to its ABORT, or to the end for one
 * still held then).
 *
 * Lean like tests/bench/sa_pathbench.c: one thread, umad_recv() with a
 * timeout, no event loop, so that it costs the shared cores little.
 */
#include "config.h"

#include <endian.h>
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
#define PR_COMP_SGID	(1ull << 3)
#define PR_COMP_PKEY	(1ull << 13)
#define QP1_QKEY	0x80010000u
#define MAD_CLASS_SUBN_LID	0x01
#define ATTR_SM_INFO		0x0020
#define LOST_S		2.0
#define MAX_OUT		65536

struct client {
	int portid, sa_agent, smp_agent;
	uint16_t slid, sm_lid, max_lid;
	uint8_t gid[16];		/* this port's GID (link-local) */
	uint64_t rng;
	void *sbuf, *rbuf;
	uint32_t tid;
	/* per TID (low 16 bits): when it left, its kind, 0 when answered */
	double sent_at[MAX_OUT];
	uint8_t kind[MAX_OUT];
};

enum { K_NONE, K_FLOOD, K_PATH, K_SMINFO, K_N };
static const char *const kind_name[K_N] = { "", "flood", "path", "sminfo" };

struct tally {
	unsigned long sent, answered, lost, ok, busy, nores, other;
	double *lat;
	size_t nlat, cap;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int open_port(struct client *c)
{
	umad_port_t port;

	if (umad_init() < 0 || umad_get_port(NULL, 0, &port) < 0) {
		fprintf(stderr, "sa_hostile: no umad port\n");
		return -1;
	}
	c->slid = (uint16_t)port.base_lid;
	c->gid[0] = 0xfe;
	c->gid[1] = 0x80;
	memcpy(c->gid + 8, &port.port_guid, 8);	/* network order already */
	c->sm_lid = (uint16_t)port.sm_lid;
	c->portid = umad_open_port(port.ca_name, port.portnum);
	umad_release_port(&port);
	if (c->portid < 0) {
		fprintf(stderr, "sa_hostile: cannot open the port\n");
		return -1;
	}
	c->sa_agent = umad_register(c->portid, MAD_CLASS_SA, 2, 0, NULL);
	c->smp_agent = umad_register(c->portid, MAD_CLASS_SUBN_LID, 1, 0, NULL);
	if (c->sa_agent < 0 || c->smp_agent < 0) {
		fprintf(stderr, "sa_hostile: cannot register agents\n");
		return -1;
	}
	c->sbuf = umad_alloc(1, umad_size() + MAD_SIZE);
	c->rbuf = umad_alloc(1, umad_size() + MAD_SIZE);
	return c->sbuf && c->rbuf ? 0 : -1;
}

static int send_kind(struct client *c, int kind, int pkey, bool src)
{
	struct sa_mad *m = umad_get_mad(c->sbuf);
	struct sa_path_record *pr = (struct sa_path_record *)m->data;
	uint32_t tid = ++c->tid;
	int agent = c->sa_agent, qp = 1;

	memset(m, 0, sizeof(*m));
	switch (kind) {
	case K_FLOOD:
		sa_request_hdr(m, MAD_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD,
			       (pkey >= 0 ? PR_COMP_PKEY : 0) |
			       (src ? PR_COMP_SGID : 0));
		if (pkey >= 0)
			pr->pkey = htobe16((uint16_t)pkey);
		if (src)
			memcpy(pr->sgid, c->gid, 16);
		break;
	case K_PATH:
		c->rng = c->rng * 6364136223846793005ull + 1442695040888963407ull;
		sa_request_hdr(m, MAD_METHOD_GET, SA_ATTR_PATH_RECORD,
			       PR_COMP_DLID | PR_COMP_SLID);
		pr->slid = htobe16(c->slid);
		pr->dlid = htobe16((uint16_t)(1 + (c->rng >> 33) % c->max_lid));
		break;
	case K_SMINFO:
		/* SubnGet(SMInfo), LID-routed (14.2.1.2, 14.2.5.13) */
		m->hdr.base_version = 1;
		m->hdr.mgmt_class = MAD_CLASS_SUBN_LID;
		m->hdr.class_version = 1;
		m->hdr.method = MAD_METHOD_GET;
		m->hdr.attr_id = htobe16(ATTR_SM_INFO);
		agent = c->smp_agent;
		qp = 0;
		break;
	}
	m->hdr.tid = htobe64(tid);
	c->sent_at[tid % MAX_OUT] = now();
	c->kind[tid % MAX_OUT] = (uint8_t)kind;
	umad_set_addr(c->sbuf, c->sm_lid, qp, 0, qp ? QP1_QKEY : 0);
	return umad_send(c->portid, agent, c->sbuf, MAD_SIZE, 0, 0) < 0 ? -1 : 0;
}

static void add_lat(struct tally *t, double ms)
{
	if (t->nlat == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		double *p = realloc(t->lat, cap * sizeof(*p));

		if (!p)
			return;
		t->lat = p;
		t->cap = cap;
	}
	t->lat[t->nlat++] = ms;
}

/* One answer: match its TID, count its status, its latency. */
static void on_answer(struct client *c, struct tally *ty)
{
	const struct sa_mad *m = umad_get_mad(c->rbuf);
	uint32_t tid = (uint32_t)be64toh(m->hdr.tid);
	unsigned slot = tid % MAX_OUT;
	struct tally *t;
	uint16_t st;

	if (!(m->hdr.method & MAD_METHOD_RESP) || (uint32_t)(c->tid - tid) >= MAX_OUT ||
	    c->kind[slot] == K_NONE)
		return;
	t = &ty[c->kind[slot]];
	c->kind[slot] = K_NONE;
	t->answered++;
	add_lat(t, (now() - c->sent_at[slot]) * 1e3);
	st = be16toh(m->hdr.status);
	if (st == 0)
		t->ok++;
	else if (st == MAD_STATUS_BUSY)
		t->busy++;
	else if (st == SA_STATUS_NO_RESOURCES)
		t->nores++;
	else
		t->other++;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const struct tally *t, double p)
{
	size_t i;

	if (!t->nlat)
		return 0;
	i = (size_t)(p * (double)(t->nlat - 1) + 0.5);
	return t->lat[i];
}

/* ---- slowack ---- */

#define SLOW_MAX	64

struct slow {
	uint64_t tid;		/* as the answer carries it, 0: free slot */
	uint32_t own_tid;	/* as we sent it */
	double first;		/* first segment came, 0: not yet */
};

static int slow_request(struct client *c, struct slow *s)
{
	struct sa_mad *m = umad_get_mad(c->sbuf);

	memset(m, 0, sizeof(*m));
	sa_request_hdr(m, MAD_METHOD_GET_TABLE, SA_ATTR_NODE_RECORD, 0);
	s->own_tid = ++c->tid;
	s->tid = 0;
	s->first = 0;
	m->hdr.tid = htobe64(s->own_tid);
	umad_set_addr(c->sbuf, c->sm_lid, 1, 0, QP1_QKEY);
	return umad_send(c->portid, c->sa_agent, c->sbuf, MAD_SIZE, 0, 0) < 0 ?
	       -1 : 0;
}

static void slow_ack(struct client *c, const struct slow *s)
{
	struct sa_mad *m = umad_get_mad(c->sbuf);

	memset(m, 0, sizeof(*m));
	sa_request_hdr(m, MAD_METHOD_GET_TABLE, SA_ATTR_NODE_RECORD, 0);
	m->hdr.tid = htobe64(s->tid);
	m->rmpp.version = 1;
	m->rmpp.type = 2;			/* ACK */
	m->rmpp.resptime_flags = 0x1f << 3 | 1;	/* ACTIVE */
	m->rmpp.data1 = htobe32(1);		/* segment 1 */
	m->rmpp.data2 = htobe32(1);		/* window: 1 */
	umad_set_addr(c->sbuf, c->sm_lid, 1, 0, QP1_QKEY);
	umad_send(c->portid, c->sa_agent, c->sbuf, MAD_SIZE, 0, 0);
}

static int slowack(struct client *c, unsigned n, double interval, double secs)
{
	struct slow sl[SLOW_MAX];
	unsigned long requests = 0, held = 0, aborted = 0, refused = 0;
	double t0 = now(), end = t0 + secs, next_ack = t0 + interval;
	double max_held = 0;

	memset(sl, 0, sizeof(sl));
	for (unsigned i = 0; i < n; i++)
		if (slow_request(c, &sl[i]) == 0)
			requests++;
	while (now() < end) {
		const struct sa_mad *m = umad_get_mad(c->rbuf);
		int len = MAD_SIZE, wait_ms;
		double t = now();

		if (t >= next_ack) {
			for (unsigned i = 0; i < n; i++)
				if (sl[i].first)
					slow_ack(c, &sl[i]);
			next_ack += interval;
			continue;
		}
		wait_ms = (int)((next_ack - t) * 1e3) + 1;
		if (umad_recv(c->portid, c->rbuf, &len, wait_ms) < 0 ||
		    umad_status(c->rbuf) || len < 36)
			continue;
		t = now();
		for (unsigned i = 0; i < n; i++) {
			struct slow *s = &sl[i];
			uint64_t tid = be64toh(m->hdr.tid);

			if ((uint32_t)tid != s->own_tid)
				continue;
			if (m->hdr.status) {		/* refused */
				refused++;
			} else if (!(m->rmpp.resptime_flags & 1)) {
				continue;		/* not RMPP */
			} else if (m->rmpp.type == 1) {	/* DATA */
				if (!s->first) {
					s->first = t;
					s->tid = tid;
					held++;
				}
				break;
			} else if (m->rmpp.type == 3 || m->rmpp.type == 4) {
				/* STOP or ABORT */
				aborted++;
				if (s->first && t - s->first > max_held)
					max_held = t - s->first;
			} else {
				break;
			}
			if (slow_request(c, s) == 0)
				requests++;
			break;
		}
	}
	for (unsigned i = 0; i < n; i++)
		if (sl[i].first && end - sl[i].first > max_held)
			max_held = end - sl[i].first;
	printf("slowack requests %lu held %lu aborted %lu refused %lu"
	       " max_held %.2f s\n", requests, held, aborted, refused,
	       max_held);
	return 0;
}

int main(int argc, char **argv)
{
	struct client *c = calloc(1, sizeof(*c));
	struct tally ty[K_N];
	double rate = 10, secs = 5, t0, end, next;
	int pkey = 0x1234, opt, flood, slow;
	unsigned nslow = 4;
	double interval = 0.3;
	bool src = false;
	unsigned long n = 0;

	if (!c || argc < 2)
		goto usage;
	flood = !strcmp(argv[1], "flood");
	slow = !strcmp(argv[1], "slowack");
	if (!flood && !slow && strcmp(argv[1], "probe"))
		goto usage;
	optind = 2;
	c->rng = 1;
	while ((opt = getopt(argc, argv, "r:t:k:l:sn:i:")) != -1) {
		switch (opt) {
		case 'n': nslow = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'i': interval = strtod(optarg, NULL); break;
		case 'r': rate = strtod(optarg, NULL); break;
		case 't': secs = strtod(optarg, NULL); break;
		case 'k':
			pkey = !strcmp(optarg, "none") ? -1 :
			       (int)(strtoul(optarg, NULL, 0) & 0xffff);
			break;
		case 's': src = true; break;
		case 'l': c->max_lid = (uint16_t)strtoul(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	if (rate <= 0 || secs <= 0 || interval <= 0 || !nslow ||
	    nslow > SLOW_MAX)
		goto usage;
	if (open_port(c) < 0)
		return 1;
	if (slow) {
		int rc = slowack(c, nslow, interval, secs);

		umad_free(c->sbuf);
		umad_free(c->rbuf);
		umad_close_port(c->portid);
		free(c);
		return rc;
	}
	if (!c->max_lid)
		c->max_lid = c->sm_lid ? c->sm_lid : 1;
	memset(ty, 0, sizeof(ty));
	t0 = next = now();
	end = t0 + secs;
	/* send on schedule, receive in between; then wait for stragglers */
	for (;;) {
		double t = now();
		int len = MAD_SIZE, wait_ms;

		if (t < end && t >= next) {
			int kind = flood ? K_FLOOD : n % 2 ? K_SMINFO : K_PATH;

			if (send_kind(c, kind, pkey, src) == 0)
				ty[kind].sent++;
			n++;
			next = t0 + (double)n / rate;
			continue;
		}
		if (t >= end + LOST_S)
			break;
		wait_ms = (int)(((t < end ? next : end + LOST_S) - t) * 1e3) + 1;
		if (umad_recv(c->portid, c->rbuf, &len, wait_ms) < 0)
			continue;
		if (umad_status(c->rbuf) || len < 24)
			continue;
		on_answer(c, ty);
	}
	for (int k = K_FLOOD; k < K_N; k++) {
		struct tally *t = &ty[k];

		if (!t->sent)
			continue;
		t->lost = t->sent - t->answered;
		qsort(t->lat, t->nlat, sizeof(double), cmp_double);
		if (k == K_FLOOD)
			printf("flood sent %lu answered %lu ok %lu busy %lu"
			       " no_resources %lu other %lu\n", t->sent,
			       t->answered, t->ok, t->busy, t->nores, t->other);
		else
			printf("probe %s sent %lu answered %lu lost %lu p50 %.2f"
			       " p99 %.2f max %.2f ms\n", kind_name[k], t->sent,
			       t->answered, t->lost, pct(t, .5), pct(t, .99),
			       t->nlat ? t->lat[t->nlat - 1] : 0);
	}
	int rc = 0;

	for (int k = K_PATH; k < K_N; k++)
		if (ty[k].sent && ty[k].lost)
			rc = 1;
	for (int k = 0; k < K_N; k++)
		free(ty[k].lat);
	umad_free(c->sbuf);
	umad_free(c->rbuf);
	umad_close_port(c->portid);
	free(c);
	return rc;
usage:
	free(c);
	fprintf(stderr, "usage: sa_hostile flood [-r RATE] [-t SECONDS] [-k PKEY|none] [-s]\n"
		"       sa_hostile probe [-r RATE] [-t SECONDS] [-l MAXLID]\n"
		"       sa_hostile slowack [-n TRANSFERS] [-i INTERVAL] [-t SECONDS]\n");
	return 2;
}
