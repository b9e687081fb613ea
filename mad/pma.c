/*
 * pma.c - Performance Management MADs: builders and decoders (pma.h).
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#include "mad/pma.h"

static void pma_hdr(struct pma_mad *m, uint8_t method, uint16_t attr)
{
	memset(m, 0, sizeof(*m));
	m->hdr.base_version = 1;
	m->hdr.mgmt_class = MAD_CLASS_PERF;
	m->hdr.class_version = PMA_CLASS_VERSION;
	m->hdr.method = method;
	m->hdr.attr_id = htobe16(attr);
}

void pma_build_get(struct pma_mad *m, uint16_t attr, uint8_t port)
{
	pma_hdr(m, MAD_METHOD_GET, attr);
	/* PortSelect sits at byte 1 of both counter attributes */
	if (attr != PMA_ATTR_CLASS_PORT_INFO)
		m->data[1] = port;
}

void pma_build_clear(struct pma_mad *m, uint16_t attr, uint8_t port,
		     uint16_t select, uint8_t select2)
{
	pma_hdr(m, MAD_METHOD_SET, attr);
	if (attr == PMA_ATTR_PORT_COUNTERS) {
		struct pma_port_counters *pc = (void *)m->data;

		pc->port_select = port;
		pc->counter_select = htobe16(select);
		pc->counter_select2 = select2;
	} else {
		struct pma_port_counters_ext *pe = (void *)m->data;

		pe->port_select = port;
		pe->counter_select = htobe16(select);
	}
}

/*
 * The checks every answer passes: one whole MAD (a PMA answer is never
 * segmented), version 1 of the base and of the class, class 0x04,
 * GetResp (the answer to a Set is a GetResp too: 13.4.5), the attribute
 * asked for with modifier 0.  Returns the MAD status or -EBADMSG.
 */
static int pma_check(const void *mad, size_t len, uint16_t attr)
{
	const struct mad_hdr *h = mad;

	if (!mad || len != MAD_SIZE)
		return -EBADMSG;
	if (h->base_version != 1 || h->mgmt_class != MAD_CLASS_PERF ||
	    h->class_version != PMA_CLASS_VERSION ||
	    h->method != (MAD_METHOD_GET | MAD_METHOD_RESP) ||
	    be16toh(h->attr_id) != attr || h->attr_mod != 0)
		return -EBADMSG;
	return be16toh(h->status);
}

static int status_error(int status)
{
	if (status & MAD_STATUS_BUSY)
		return -EAGAIN;
	return status ? -EPROTO : 0;
}

int pma_decode_cpi(const void *mad, size_t len, struct pma_cpi *out)
{
	int st = pma_check(mad, len, PMA_ATTR_CLASS_PORT_INFO);

	if (st < 0)
		return st;
	if (st & ~MAD_STATUS_REDIRECT)
		return status_error(st & ~MAD_STATUS_REDIRECT);

	const struct pma_class_port_info *c =
		(const void *)((const struct pma_mad *)mad)->data;
	struct pma_cpi r = { 0 };

	if (c->base_version != 1 || c->class_version != PMA_CLASS_VERSION)
		return -EBADMSG;
	r.cap_mask = be16toh(c->cap_mask);
	uint32_t m2 = be32toh(c->cap_mask2_resp_time);
	r.cap_mask2 = m2 >> 5;
	r.resp_time = m2 & 0x1f;
	if (st & MAD_STATUS_REDIRECT) {
		r.redirected = true;
		r.redirect_lid = be16toh(c->redirect_lid);
		r.redirect_qp = be32toh(c->redirect_qp) & 0xffffff;
		r.redirect_qkey = be32toh(c->redirect_qkey);
		r.redirect_pkey = be16toh(c->redirect_pkey);
		r.redirect_sl = (be32toh(c->redirect_tc_sl_fl) >> 20) & 0xf;
		/* A unicast LID (0: the same one) and a QP that is not the
		 * SMI's: anything else cannot be where a PMA lives. */
		if (r.redirect_lid >= 0xc000 || r.redirect_qp == 0)
			return -ERANGE;
	}
	*out = r;
	return 0;
}

int pma_decode_counters(const void *mad, size_t len, uint8_t port,
			struct pma_counters *out)
{
	int st = pma_check(mad, len, PMA_ATTR_PORT_COUNTERS);

	if (st < 0)
		return st;
	if (st)
		return status_error(st);

	const struct pma_port_counters *p =
		(const void *)((const struct pma_mad *)mad)->data;

	if (p->port_select != port)
		return -ERANGE;
	*out = (struct pma_counters){
		.port = p->port_select,
		.symbol_err = be16toh(p->symbol_err),
		.link_recover = p->link_recover,
		.link_downed = p->link_downed,
		.rcv_err = be16toh(p->rcv_err),
		.rcv_remote_phys = be16toh(p->rcv_remote_phys),
		.rcv_sw_relay = be16toh(p->rcv_sw_relay),
		.xmit_discards = be16toh(p->xmit_discards),
		.xmit_constraint = p->xmit_constraint,
		.rcv_constraint = p->rcv_constraint,
		.link_integrity = p->integrity_overrun >> 4,
		.buf_overrun = p->integrity_overrun & 0xf,
		.vl15_dropped = be16toh(p->vl15_dropped),
		.xmit_data = be32toh(p->xmit_data),
		.rcv_data = be32toh(p->rcv_data),
		.xmit_pkts = be32toh(p->xmit_pkts),
		.rcv_pkts = be32toh(p->rcv_pkts),
		.xmit_wait = be32toh(p->xmit_wait),
	};
	return 0;
}

int pma_decode_counters_ext(const void *mad, size_t len, uint8_t port,
			    struct pma_counters_ext *out)
{
	int st = pma_check(mad, len, PMA_ATTR_PORT_COUNTERS_EXT);

	if (st < 0)
		return st;
	if (st)
		return status_error(st);

	const struct pma_port_counters_ext *p =
		(const void *)((const struct pma_mad *)mad)->data;

	if (p->port_select != port)
		return -ERANGE;
	*out = (struct pma_counters_ext){
		.port = p->port_select,
		.xmit_data = be64toh(p->xmit_data),
		.rcv_data = be64toh(p->rcv_data),
		.xmit_pkts = be64toh(p->xmit_pkts),
		.rcv_pkts = be64toh(p->rcv_pkts),
		.uni_xmit_pkts = be64toh(p->uni_xmit_pkts),
		.uni_rcv_pkts = be64toh(p->uni_rcv_pkts),
		.mc_xmit_pkts = be64toh(p->mc_xmit_pkts),
		.mc_rcv_pkts = be64toh(p->mc_rcv_pkts),
	};
	return 0;
}
