/*
 * fuzz_rmpp.c - libFuzzer target: the RMPP receiver (mad/rmpp_recv.c)
 * fed a first answer and then a sequence of segments, all from the input.
 *
 * Input: one options byte, then records of
 *     flags (1 byte), length (1 byte: 0 means 256), that many MAD bytes
 * (a short tail is zero-padded).  The first record is the answer that
 * completed the request (rmpp_recv_start); the others go to
 * rmpp_receiver_input() when rmpp_receiver_matches() says they belong to
 * the transfer, as rmpp_client does.  Flags help the fuzzer reach deep
 * states: bit 0 copies the first record's TID, method and AttributeID;
 * bit 1 sets RMPPVersion 1 and the ACTIVE flag; bit 2 numbers the
 * segment by its position; bit 3 makes it come from another LID.
 *
 * Options: bit 0 ACKs with the response method; bits 1-3 the window
 * (1 << n segments); bits 4-7 max_len (0: the default, else n x 600
 * bytes, so that STOP for too large a transfer is reached).
 *
 * Checked: no memory error or UB (the sanitizers), done runs at most
 * once, a complete transfer's length is within max_len and every byte of
 * its payload is readable.
 */
#include "config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ev.h>

#include "mad/engine.h"
#include "mad/rmpp.h"
#include "mad/rmpp_recv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct ev_loop *loop;
static struct mad_engine *engine;
static unsigned sent;

/* ACKs, ABORTs and STOPs go nowhere. */
static int fake_send(void *ctx, const void *mad, size_t len,
		     const struct mad_addr *addr, int timeout_ms)
{
	sent++;
	return 0;
}

static void setup(void)
{
	struct mad_transport tr = { .send = fake_send };
	struct mad_engine_opts eo = { .max_wire_smps = 4, .max_wire_gmps = 4,
				      .timeout_ms = 100, .retries = 0 };

	loop = ev_loop_new(EVFLAG_AUTO);
	if (!loop || mad_engine_new(&engine, loop, &tr, &eo) < 0)
		abort();
}

struct outcome {
	int calls;
	size_t max_len;
};

static void on_done(void *arg, const struct rmpp_result *res)
{
	struct outcome *o = arg;
	volatile uint8_t sum = 0;

	if (++o->calls > 1)
		abort();			/* done runs once */
	if (res->status == 0) {
		if (res->len > o->max_len || (res->len && !res->payload))
			abort();
		for (size_t i = 0; i < res->len; i++)
			sum ^= res->payload[i];	/* every byte readable */
	}
	if (res->first)
		sum ^= res->first->hdr.method;
	(void)sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mad_addr peer = { .lid = 1, .qpn = 1, .qkey = 0x80010000u };
	struct mad_addr other = { .lid = 2, .qpn = 1, .qkey = 0x80010000u };
	struct rmpp_recv_opts opts = { 0 };
	struct rmpp_receiver *r = NULL;
	struct outcome o = { 0 };
	uint8_t first[MAD_SIZE];
	size_t first_len = 0;
	uint32_t index = 0;

	if (!loop)
		setup();
	if (size < 1)
		return 0;
	uint8_t op = *data++;
	size--;
	opts.ack_response_method = op & 1;
	opts.window = 1u << ((op >> 1) & 7);
	opts.max_len = (op >> 4) ? (size_t)(op >> 4) * 600 : 0;
	rmpp_recv_opts_default(&opts);
	o.max_len = opts.max_len;

	while (size >= 2) {
		uint8_t flags = data[0];
		size_t len = data[1] ? data[1] : MAD_SIZE;
		uint8_t mad[MAD_SIZE];
		struct sa_mad *m = (struct sa_mad *)mad;

		data += 2;
		size -= 2;
		memset(mad, 0, sizeof(mad));
		memcpy(mad, data, len < size ? len : size);
		data += len < size ? len : size;
		size -= len < size ? len : size;

		if (!r) {
			if (len < MAD_HDR_SIZE)
				continue;	/* the engine drops runts */
			if (flags & 2) {
				m->rmpp.version = 1;
				m->rmpp.resptime_flags |= RMPP_FLAG_ACTIVE;
			}
			if (flags & 4)
				m->rmpp.data1 = htobe32(1);
			memcpy(first, mad, len);
			first_len = len;
			if (rmpp_recv_start(&r, loop, engine, mad, len, &peer,
					    &opts, on_done, &o) < 0)
				abort();	/* valid arguments */
			index = 1;
			ev_run(loop, EVRUN_NOWAIT);
			continue;
		}
		index++;
		if (flags & 1) {
			const struct mad_hdr *f = (const struct mad_hdr *)first;

			m->hdr.tid = f->tid;
			m->hdr.method = f->method;
			m->hdr.attr_id = f->attr_id;
		}
		if (flags & 2) {
			m->rmpp.version = 1;
			m->rmpp.resptime_flags |= RMPP_FLAG_ACTIVE;
		}
		if (flags & 4)
			m->rmpp.data1 = htobe32(index);
		const struct mad_addr *from = flags & 8 ? &other : &peer;
		if (rmpp_receiver_matches(r, be64toh(m->hdr.tid), from))
			rmpp_receiver_input(r, mad, len);
		ev_run(loop, EVRUN_NOWAIT);	/* a deferred done runs */
	}
	(void)first_len;
	rmpp_receiver_free(r);
	return 0;
}
