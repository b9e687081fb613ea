/*
 * sa_pathbench.c - PathRecord queries per second against any SA.
 *
 *   sa_pathbench [-t SECONDS] [-w WINDOW] [-l MAXLID] [-s SEED]
 *
 * Sends PathRecord Gets (SLID = this port's LID, DLID = random LID in
 * 1..MAXLID) to the SM LID on QP1, keeping WINDOW queries outstanding,
 * for SECONDS.  Prints "answered N ok K errors E timeouts T in S s: Q qps".
 * Works against ibsm and OpenSM alike: single-MAD Get answers only.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ev.h>

#include "mad/engine.h"
#include "mad/sa_wire.h"
#include "mad/umad_io.h"

#define PR_COMP_DLID	(1ull << 4)
#define PR_COMP_SLID	(1ull << 5)

struct bench {
	struct ev_loop *loop;
	struct mad_engine *engine;
	struct mad_addr sa;
	uint16_t slid, max_lid;
	uint64_t rng;
	bool stopping;
	unsigned long answered, ok, errors, timeouts;
	unsigned inflight;
	ev_tstamp t0;
};

static void on_answer(void *arg, int status, const void *mad, size_t len);

static void send_one(struct bench *b)
{
	struct sa_mad m;
	struct sa_path_record *pr = (struct sa_path_record *)m.data;

	b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull;
	uint16_t dlid = (uint16_t)(1 + (b->rng >> 33) % b->max_lid);
	memset(&m, 0, sizeof(m));
	m.hdr.base_version = 1;
	m.hdr.mgmt_class = MAD_CLASS_SA;
	m.hdr.class_version = 2;
	m.hdr.method = MAD_METHOD_GET;
	m.hdr.attr_id = htobe16(SA_ATTR_PATH_RECORD);
	m.comp_mask = htobe64(PR_COMP_DLID | PR_COMP_SLID);
	pr->slid = htobe16(b->slid);
	pr->dlid = htobe16(dlid);
	if (mad_engine_submit(b->engine, &m, sizeof(m), &b->sa, on_answer, b) == 0)
		b->inflight++;
}

static void on_answer(void *arg, int status, const void *mad, size_t len)
{
	struct bench *b = arg;
	const struct sa_mad *m = mad;

	b->inflight--;
	if (status < 0)
		b->timeouts++;
	else if (m->hdr.status)
		b->errors++, b->answered++;
	else
		b->ok++, b->answered++;
	if (!b->stopping)
		send_one(b);
	else if (!b->inflight)
		ev_break(b->loop, EVBREAK_ALL);
}

static void on_stop(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct bench *b = w->data;

	b->stopping = true;
	printf("answered %lu ok %lu errors %lu timeouts %lu in %.2f s: %.0f qps\n",
	       b->answered, b->ok, b->errors, b->timeouts, ev_now(loop) - b->t0,
	       b->answered / (ev_now(loop) - b->t0));
	fflush(stdout);
	if (!b->inflight)
		ev_break(loop, EVBREAK_ALL);
}

static void on_mad(void *arg, const void *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	mad_engine_recv(((struct bench *)arg)->engine, mad, len, from, status);
}

int main(int argc, char **argv)
{
	static const uint8_t classes[] = { MAD_CLASS_SA };
	struct bench b = { .max_lid = 1, .rng = 1 };
	double secs = 3;
	unsigned window = 16;
	struct umad_io *io;
	ev_timer stop;
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
	b.loop = ev_default_loop(0);
	if (umad_io_open(&io, b.loop, 0, classes, 1, false) < 0) {
		fprintf(stderr, "sa_pathbench: cannot open a port\n");
		return 1;
	}
	b.slid = umad_io_port(io)->lid;
	b.sa = (struct mad_addr){ .lid = umad_io_port(io)->sm_lid, .qpn = 1,
				  .qkey = 0x80010000u };
	struct mad_transport tr = umad_io_transport(io);
	struct mad_engine_opts eo = { 4, window ? window : 1, 1000, 1 };
	if (mad_engine_new(&b.engine, b.loop, &tr, &eo) < 0 ||
	    umad_io_start(io, on_mad, &b) < 0)
		return 1;
	ev_timer_init(&stop, on_stop, secs, 0.);
	stop.data = &b;
	ev_timer_start(b.loop, &stop);
	ev_now_update(b.loop);
	b.t0 = ev_now(b.loop);
	for (unsigned i = 0; i < (window ? window : 1); i++)
		send_one(&b);
	ev_run(b.loop, 0);
	umad_io_close(io);
	mad_engine_free(b.engine);
	return b.answered ? 0 : 1;
}
