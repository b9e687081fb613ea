/*
 * sa_fuzz.c - send malformed SA MADs to the SM and count what comes back.
 *
 *   sa_fuzz [-n COUNT] [-s SEED] [-w WINDOW] [-d DLID]
 *
 * Each MAD is a random mix of valid and broken parts: methods (valid,
 * response bit set, unknown), attribute IDs (served and not), component
 * masks (random, all ones), base/class versions, RMPP flags, payload bytes,
 * and lengths (truncated to 24..255 bytes, oversized).  At most WINDOW are
 * unanswered at once; answers are counted by MAD status.  The SM must
 * answer or drop each one and stay up; the caller checks that it did.
 *
 * Prints "sent N answered M" and a status histogram; exit 0 unless the
 * port could not be opened.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ev.h>

#include "mad/engine.h"
#include "mad/sa_wire.h"
#include "mad/umad_io.h"

static const uint16_t attrs[] = {
	SA_ATTR_CLASS_PORT_INFO, SA_ATTR_NOTICE, SA_ATTR_INFORM_INFO,
	SA_ATTR_NODE_RECORD, SA_ATTR_PORT_INFO_RECORD, SA_ATTR_SL2VL_RECORD,
	SA_ATTR_SWITCH_INFO_RECORD, SA_ATTR_LFT_RECORD, SA_ATTR_MFT_RECORD,
	SA_ATTR_SM_INFO_RECORD, SA_ATTR_LINK_RECORD, SA_ATTR_GUID_INFO_RECORD,
	SA_ATTR_SERVICE_RECORD, SA_ATTR_PKEY_TABLE_RECORD,
	SA_ATTR_PATH_RECORD, SA_ATTR_VL_ARB_RECORD, SA_ATTR_MCMEMBER_RECORD,
	SA_ATTR_MULTIPATH_RECORD, SA_ATTR_INFORM_INFO_RECORD, 0x0000, 0xffff,
};
static const uint8_t methods[] = {
	MAD_METHOD_GET, MAD_METHOD_SET, MAD_METHOD_GET_TABLE,
	MAD_METHOD_GETMULTI, MAD_METHOD_DELETE, MAD_METHOD_REPORT,
	MAD_METHOD_GET_TRACE_TABLE, 0x00, 0x7f, 0x81, 0x92,
};

struct fuzz {
	struct ev_loop *loop;
	struct mad_engine *engine;
	struct mad_addr to;
	unsigned long count, sent, answered, last_answered;
	unsigned window, outstanding;
	ev_tstamp last_rx;		/* when the SM last sent us a MAD */
	unsigned long hist[8];		/* by status class */
	uint64_t rng;
	ev_timer tick;
};

static uint64_t next(struct fuzz *z)
{
	/* xorshift64*: deterministic for a seed */
	z->rng ^= z->rng >> 12;
	z->rng ^= z->rng << 25;
	z->rng ^= z->rng >> 27;
	return z->rng * 0x2545f4914f6cdd1dull;
}

static unsigned pick(struct fuzz *z, unsigned n)
{
	return (unsigned)(next(z) % n);
}

static void build(struct fuzz *z, struct sa_mad *m, size_t *len)
{
	uint8_t *raw = (uint8_t *)m;

	memset(m, 0, sizeof(*m));
	m->hdr.base_version = pick(z, 20) ? 1 : (uint8_t)next(z);
	m->hdr.mgmt_class = MAD_CLASS_SA;
	m->hdr.class_version = pick(z, 20) ? 2 : (uint8_t)next(z);
	m->hdr.method = pick(z, 10) ? methods[pick(z, sizeof(methods))]
				    : (uint8_t)next(z);
	m->hdr.attr_id = htobe16(pick(z, 10) ? attrs[pick(z, sizeof(attrs) / 2)]
					     : (uint16_t)next(z));
	m->hdr.attr_mod = pick(z, 4) ? 0 : (uint32_t)next(z);
	m->hdr.tid = htobe64(z->sent + 1);
	switch (pick(z, 4)) {
	case 0: m->comp_mask = 0; break;
	case 1: m->comp_mask = htobe64(~0ull); break;
	case 2: m->comp_mask = htobe64(1ull << pick(z, 64)); break;
	default: m->comp_mask = next(z); break;
	}
	if (!pick(z, 8))
		m->rmpp.resptime_flags = (uint8_t)next(z);
	if (!pick(z, 8))
		m->rmpp.version = (uint8_t)next(z);
	for (size_t i = 0; i < sizeof(m->data); i += 8) {
		uint64_t r = next(z);
		memcpy(m->data + i, &r, 8);
	}
	if (!pick(z, 3)) {	/* mostly zeros, like a real template */
		unsigned off = pick(z, sizeof(m->data));
		memset(m->data + off, 0, pick(z, sizeof(m->data) - off + 1));
	}
	*len = MAD_SIZE;
	if (!pick(z, 6))
		*len = MAD_HDR_SIZE + pick(z, MAD_SIZE - MAD_HDR_SIZE);
	if (!pick(z, 50))	/* a header that lies about the rest */
		memset(raw + 24, 0xff, 32);
}

static void on_answer(void *arg, const void *mad, size_t len,
		      const struct mad_addr *from)
{
	struct fuzz *z = arg;
	const struct mad_hdr *h = mad;
	unsigned st = be16toh(h->status);

	z->answered++;
	z->last_rx = ev_now(z->loop);
	if (z->outstanding)
		z->outstanding--;
	/* 0: ok, 1: MAD status (low byte), 2-7: SA status 1-6 (15.2.1.2) */
	unsigned idx = !st ? 0 : (st & 0xff) ? 1 : 1 + (st >> 8);
	z->hist[idx < 8 ? idx : 7]++;
}

static void pump(struct fuzz *z)
{
	while (z->sent < z->count && z->outstanding < z->window) {
		struct sa_mad m;
		size_t len;

		build(z, &m, &len);
		if (mad_engine_send_oneway(z->engine, &m, len, &z->to) == 0)
			z->outstanding++;
		z->sent++;
	}
}

/*
 * Answers the SM dropped never come: release the window now and then.
 * Once everything is sent, stop only after the SM has been quiet for
 * QUIET_S: it keeps re-sending the RMPP answers we never acknowledge for
 * a while, and a MAD that reaches umad2sim after the port is closed
 * crashes its receiver thread (a NULL queue), i.e. this client.
 */
#define QUIET_S		1.5

static void on_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct fuzz *z = w->data;

	if (z->answered == z->last_answered)
		z->outstanding = 0;
	z->last_answered = z->answered;
	pump(z);
	if (z->sent >= z->count && ev_now(loop) - z->last_rx >= QUIET_S)
		ev_break(loop, EVBREAK_ALL);
}

static void on_mad(void *arg, const void *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	struct fuzz *z = arg;

	mad_engine_recv(z->engine, mad, len, from, status);
	pump(z);
}

int main(int argc, char **argv)
{
	static const uint8_t classes[] = { MAD_CLASS_SA };
	struct fuzz z = { .count = 10000, .window = 32, .rng = 42 };
	struct umad_io *io;
	int opt, rc;

	while ((opt = getopt(argc, argv, "n:s:w:d:")) != -1) {
		switch (opt) {
		case 'n': z.count = strtoul(optarg, NULL, 0); break;
		case 's': z.rng = strtoull(optarg, NULL, 0) | 1; break;
		case 'w': z.window = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'd': z.to.lid = (uint16_t)strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: sa_fuzz [-n COUNT] [-s SEED]"
				" [-w WINDOW] [-d DLID]\n");
			return 2;
		}
	}
	if (!z.window)
		z.window = 1;
	z.loop = ev_default_loop(0);
	rc = umad_io_open(&io, z.loop, 0, classes, 1, false);
	if (rc < 0) {
		fprintf(stderr, "sa_fuzz: cannot open a port: %s\n", strerror(-rc));
		return 1;
	}
	if (!z.to.lid)
		z.to.lid = umad_io_port(io)->sm_lid;
	z.to.qpn = 1;
	z.to.qkey = 0x80010000u;
	struct mad_transport tr = umad_io_transport(io);
	struct mad_engine_opts eo = { .max_wire_smps = 4, .max_wire_gmps = 64,
					 .timeout_ms = 200, .retries = 0 };
	rc = mad_engine_new(&z.engine, z.loop, &tr, &eo);
	if (rc == 0)
		rc = mad_engine_on_unmatched(z.engine, MAD_CLASS_SA, on_answer, &z);
	if (rc == 0)
		rc = umad_io_start(io, on_mad, &z);
	if (rc < 0) {
		fprintf(stderr, "sa_fuzz: %s\n", strerror(-rc));
		return 1;
	}
	ev_timer_init(&z.tick, on_tick, 0.02, 0.02);
	z.tick.data = &z;
	ev_timer_start(z.loop, &z.tick);
	pump(&z);
	ev_run(z.loop, 0);
	umad_io_close(io);
	mad_engine_free(z.engine);
	printf("sent %lu answered %lu: ok %lu, mad-status %lu, sa-status"
	       " 1-6 %lu/%lu/%lu/%lu/%lu/%lu\n", z.sent, z.answered,
	       z.hist[0], z.hist[1], z.hist[2], z.hist[3], z.hist[4],
	       z.hist[5], z.hist[6], z.hist[7]);
	return 0;
}
