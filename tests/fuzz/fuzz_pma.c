/*
 * fuzz_pma.c - libFuzzer target: the Performance Management decoder
 * (mad/pma.c) on answers from a hostile node, and the counter store
 * (health/counters.c) fed what it decodes.
 *
 * Input: byte 0 the port asked for, byte 1 options, then the answer.
 * The answer goes, exactly as long as it is, to the three decoders:
 * one that succeeds must have seen a whole GetResp of its attribute for
 * that port; one that fails must leave its output untouched.  Then the
 * rest of the input is read as a series of answers: 256-byte windows
 * made into well-formed PortCounters (and, option bit 0, also
 * PortCountersExtended) answers whose counters are the fuzzer's, decoded
 * and folded into one port of the store, option bits 1-7 the seconds
 * between readings.  Checked: totals never go down, a narrow counter's
 * delta is below 2^width, a 64-bit delta within what the elapsed time
 * allows (PC_MAX_PER_S per second, at least one second's worth), and a
 * reading equal to the last one adds nothing.
 */
#include "config.h"

#include <endian.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "health/counters.h"
#include "mad/pma.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void decoders(const uint8_t *mad, size_t len, uint8_t port)
{
	struct pma_cpi cpi, cpi0;
	struct pma_counters pc, pc0;
	struct pma_counters_ext pe, pe0;
	const struct mad_hdr *h = (const void *)mad;

	memset(&cpi, 0x5a, sizeof(cpi));
	memset(&pc, 0x5a, sizeof(pc));
	memset(&pe, 0x5a, sizeof(pe));
	cpi0 = cpi;
	pc0 = pc;
	pe0 = pe;
	if (pma_decode_cpi(mad, len, &cpi) == 0) {
		if (len != MAD_SIZE || h->mgmt_class != MAD_CLASS_PERF ||
		    h->method != 0x81 || be16toh(h->attr_id) != 1)
			abort();
		if (cpi.redirected && (cpi.redirect_lid >= 0xc000 ||
				       !cpi.redirect_qp || cpi.resp_time > 31))
			abort();
	} else if (memcmp(&cpi, &cpi0, sizeof(cpi))) {
		abort();
	}
	if (pma_decode_counters(mad, len, port, &pc) == 0) {
		if (len != MAD_SIZE || pc.port != port || h->status ||
		    be16toh(h->attr_id) != PMA_ATTR_PORT_COUNTERS ||
		    pc.link_integrity > 15 || pc.buf_overrun > 15)
			abort();
	} else if (memcmp(&pc, &pc0, sizeof(pc))) {
		abort();
	}
	if (pma_decode_counters_ext(mad, len, port, &pe) == 0) {
		if (len != MAD_SIZE || pe.port != port || h->status ||
		    be16toh(h->attr_id) != PMA_ATTR_PORT_COUNTERS_EXT)
			abort();
	} else if (memcmp(&pe, &pe0, sizeof(pe))) {
		abort();
	}
}

/* A well-formed answer of `attr` for `port` with the fuzzer's data. */
static void answer(struct pma_mad *m, const uint8_t *win, uint16_t attr,
		   uint8_t port)
{
	memcpy(m, win, MAD_SIZE);
	m->hdr.base_version = 1;
	m->hdr.mgmt_class = MAD_CLASS_PERF;
	m->hdr.class_version = 1;
	m->hdr.method = 0x81;
	m->hdr.status = 0;
	m->hdr.attr_id = htobe16(attr);
	m->hdr.attr_mod = 0;
	m->data[1] = port;
}

static void readings(const uint8_t *d, size_t n, uint8_t port, uint8_t opt)
{
	struct pc_store *st;
	struct pc_port *p;
	uint64_t prev_total[PC_N] = { 0 };
	struct pma_sample last;
	bool have_last = false;
	double now = 1000.0, step = (opt >> 1) + 0.5;

	if (pc_store_new(&st, 4) < 0)
		abort();
	p = pc_get(st, 0x1234, port);
	for (size_t off = 0; off + MAD_SIZE <= n; off += MAD_SIZE / 2) {
		struct pma_mad m;
		struct pma_sample s = { 0 };
		struct pc_result r;
		uint8_t width[PC_N];

		answer(&m, d + off, PMA_ATTR_PORT_COUNTERS, port);
		if (pma_decode_counters(&m, sizeof(m), port, &s.pc) < 0)
			abort();
		if (opt & 1) {
			answer(&m, d + off, PMA_ATTR_PORT_COUNTERS_EXT, port);
			if (pma_decode_counters_ext(&m, sizeof(m), port, &s.ext) < 0)
				abort();
			s.has_ext = true;
		}
		memcpy(width, p->width, sizeof(width));
		bool same = have_last && !memcmp(&s, &last, sizeof(s));
		now += step;
		pc_update(p, 7, &s, now, &r);
		for (int i = 0; i < PC_N; i++) {
			if (p->total[i] < prev_total[i])
				abort();
			prev_total[i] = p->total[i];
			if (p->width[i] && p->width[i] < 64 &&
			    p->delta[i] >= 1ull << p->width[i])
				abort();
			if (p->width[i] == 64 && width[i] == 64 && p->reads > 1 &&
			    p->delta[i] > (uint64_t)(PC_MAX_PER_S * (step < 1 ? 1 : step)))
				abort();
			if (same && p->delta[i])
				abort();
		}
		if (same && (r.increased || r.ext_clear))
			abort();
		(void)pc_needs_clear(p);
		last = s;
		have_last = true;
	}
	pc_store_free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	uint8_t port = data[0], opt = data[1];
	size_t len = size - 2;
	/* exactly `len` bytes, so ASan sees any read beyond */
	uint8_t *mad = malloc(len ? len : 1);

	if (!mad)
		return 0;
	memcpy(mad, data + 2, len);
	decoders(mad, len, port);
	readings(mad, len, port, opt);
	free(mad);
	return 0;
}
