/*
 * pma.h - Performance Management wire formats (IBA 16.1: class 0x04,
 * class version 1) and their builders and decoder.
 *
 * The structures are the exact byte images of the attributes (big-endian,
 * packed), as in mad/wire.h.  The decoder trusts nothing in an answer: it
 * checks the length, versions, class, method, attribute, status and that
 * the PortSelect echoed back is the port asked for before it fills a
 * host-order sample.  Pure: no I/O, no logging; errors are negative errno.
 */
#ifndef IBSM_MAD_PMA_H
#define IBSM_MAD_PMA_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/wire.h"

#define PMA_CLASS_VERSION	1
#define PMA_DATA_OFFSET		64	/* 24-byte header, 40 reserved */
#define PMA_DATA_SIZE		192
#define PMA_QKEY		0x80010000u	/* the well-known GSI Q_Key */

/* Attribute IDs (16.1.2) */
enum {
	PMA_ATTR_CLASS_PORT_INFO	= 0x0001,
	PMA_ATTR_PORT_COUNTERS		= 0x0012,
	PMA_ATTR_PORT_COUNTERS_EXT	= 0x001d,
};

/* ClassPortInfo:CapabilityMask of the PMA (16.1.3.1, Table 199) */
enum {
	PMA_CAP_ALL_PORT_SELECT		= 1u << 8,
	PMA_CAP_EXT_WIDTH		= 1u << 9,  /* PortCountersExtended */
	PMA_CAP_EXT_WIDTH_NOIETF	= 1u << 10, /* ... without the IETF part */
	PMA_CAP_SAMPLES_ONLY		= 1u << 11,
	PMA_CAP_XMIT_WAIT		= 1u << 12, /* PortXmitWait counts */
};

/* Performance Management MAD (16.1.1) */
struct pma_mad {
	struct mad_hdr hdr;
	uint8_t  resv[40];
	uint8_t  data[PMA_DATA_SIZE];
} __attribute__((packed));
static_assert(sizeof(struct pma_mad) == MAD_SIZE, "PMA MAD is 256 bytes");
static_assert(offsetof(struct pma_mad, data) == PMA_DATA_OFFSET, "PMA data at 64");

/* ClassPortInfo (13.4.8.1) */
struct pma_class_port_info {
	uint8_t  base_version;
	uint8_t  class_version;
	__be16   cap_mask;
	__be32   cap_mask2_resp_time;	/* CapabilityMask2:27 | RespTimeValue:5 */
	uint8_t  redirect_gid[16];
	__be32   redirect_tc_sl_fl;	/* TC:8 | SL:4 | FlowLabel:20 */
	__be16   redirect_lid;
	__be16   redirect_pkey;
	__be32   redirect_qp;		/* Reserved:8 | QP:24 */
	__be32   redirect_qkey;
	uint8_t  trap_gid[16];
	__be32   trap_tc_sl_fl;
	__be16   trap_lid;
	__be16   trap_pkey;
	__be32   trap_hl_qp;		/* HopLimit:8 | QP:24 */
	__be32   trap_qkey;
} __attribute__((packed));
static_assert(sizeof(struct pma_class_port_info) == 72, "ClassPortInfo is 72 bytes");
static_assert(offsetof(struct pma_class_port_info, redirect_gid) == 8, "RedirectGID at 8");
static_assert(offsetof(struct pma_class_port_info, redirect_lid) == 28, "RedirectLID at 28");
static_assert(offsetof(struct pma_class_port_info, redirect_qp) == 32, "RedirectQP at 32");
static_assert(offsetof(struct pma_class_port_info, redirect_qkey) == 36, "RedirectQ_Key at 36");
static_assert(offsetof(struct pma_class_port_info, trap_gid) == 40, "TrapGID at 40");
static_assert(offsetof(struct pma_class_port_info, trap_qkey) == 68, "TrapQ_Key at 68");

/* PortCounters (16.1.3.5) */
struct pma_port_counters {
	uint8_t  resv0;
	uint8_t  port_select;
	__be16   counter_select;
	__be16   symbol_err;
	uint8_t  link_recover;
	uint8_t  link_downed;
	__be16   rcv_err;
	__be16   rcv_remote_phys;
	__be16   rcv_sw_relay;
	__be16   xmit_discards;
	uint8_t  xmit_constraint;
	uint8_t  rcv_constraint;
	uint8_t  counter_select2;	/* bit 0: PortXmitWait */
	uint8_t  integrity_overrun;	/* LocalLinkIntegrity:4 | ExcessiveBufferOverrun:4 */
	__be16   qp1_dropped;
	__be16   vl15_dropped;
	__be32   xmit_data;
	__be32   rcv_data;
	__be32   xmit_pkts;
	__be32   rcv_pkts;
	__be32   xmit_wait;
} __attribute__((packed));
static_assert(sizeof(struct pma_port_counters) == 44, "PortCounters is 44 bytes");
static_assert(offsetof(struct pma_port_counters, symbol_err) == 4, "SymbolErrorCounter at 4");
static_assert(offsetof(struct pma_port_counters, rcv_err) == 8, "PortRcvErrors at 8");
static_assert(offsetof(struct pma_port_counters, xmit_constraint) == 16, "PortXmitConstraintErrors at 16");
static_assert(offsetof(struct pma_port_counters, integrity_overrun) == 19, "LocalLinkIntegrity at 19");
static_assert(offsetof(struct pma_port_counters, vl15_dropped) == 22, "VL15Dropped at 22");
static_assert(offsetof(struct pma_port_counters, xmit_data) == 24, "PortXmitData at 24");
static_assert(offsetof(struct pma_port_counters, xmit_wait) == 40, "PortXmitWait at 40");

/* PortCounters:CounterSelect (16.1.3.5) */
enum {
	PMA_SEL_SYMBOL_ERR	= 1u << 0,
	PMA_SEL_LINK_RECOVER	= 1u << 1,
	PMA_SEL_LINK_DOWNED	= 1u << 2,
	PMA_SEL_RCV_ERR		= 1u << 3,
	PMA_SEL_RCV_REMOTE_PHYS	= 1u << 4,
	PMA_SEL_RCV_SW_RELAY	= 1u << 5,
	PMA_SEL_XMIT_DISCARDS	= 1u << 6,
	PMA_SEL_XMIT_CONSTRAINT	= 1u << 7,
	PMA_SEL_RCV_CONSTRAINT	= 1u << 8,
	PMA_SEL_LINK_INTEGRITY	= 1u << 9,
	PMA_SEL_BUF_OVERRUN	= 1u << 10,
	PMA_SEL_VL15_DROPPED	= 1u << 11,
	PMA_SEL_XMIT_DATA	= 1u << 12,
	PMA_SEL_RCV_DATA	= 1u << 13,
	PMA_SEL_XMIT_PKTS	= 1u << 14,
	PMA_SEL_RCV_PKTS	= 1u << 15,
	PMA_SEL_ERRORS		= 0x0fff,	/* every error counter */
	PMA_SEL2_XMIT_WAIT	= 1u << 0,	/* in CounterSelect2 */
};

/* PortCountersExtended (16.1.4.8), without the optional error counters
 * that follow when CapabilityMask2 says so */
struct pma_port_counters_ext {
	uint8_t  resv0;
	uint8_t  port_select;
	__be16   counter_select;
	__be32   resv1;
	__be64   xmit_data;
	__be64   rcv_data;
	__be64   xmit_pkts;
	__be64   rcv_pkts;
	__be64   uni_xmit_pkts;
	__be64   uni_rcv_pkts;
	__be64   mc_xmit_pkts;
	__be64   mc_rcv_pkts;
} __attribute__((packed));
static_assert(sizeof(struct pma_port_counters_ext) == 72, "PortCountersExtended is 72 bytes");
static_assert(offsetof(struct pma_port_counters_ext, xmit_data) == 8, "PortXmitData at 8");
static_assert(offsetof(struct pma_port_counters_ext, mc_rcv_pkts) == 64, "PortMulticastRcvPkts at 64");

#define PMA_EXT_SEL_ALL		0x00ff	/* the eight counters above */

/* What the decoder gives: host order. */
struct pma_cpi {
	uint16_t cap_mask;
	uint32_t cap_mask2;
	uint8_t  resp_time;		/* RespTimeValue, 0..31 */
	bool     redirected;		/* the answer said "go elsewhere" */
	uint16_t redirect_lid;		/* 0: the same LID */
	uint32_t redirect_qp;
	uint32_t redirect_qkey;
	uint16_t redirect_pkey;
	uint8_t  redirect_sl;
};

struct pma_counters {
	uint8_t  port;
	uint16_t symbol_err;
	uint8_t  link_recover, link_downed;
	uint16_t rcv_err, rcv_remote_phys, rcv_sw_relay, xmit_discards;
	uint8_t  xmit_constraint, rcv_constraint;
	uint8_t  link_integrity, buf_overrun;	/* 4 bits each */
	uint16_t vl15_dropped;
	uint32_t xmit_data, rcv_data, xmit_pkts, rcv_pkts, xmit_wait;
};

struct pma_counters_ext {
	uint8_t  port;
	uint64_t xmit_data, rcv_data, xmit_pkts, rcv_pkts;
	uint64_t uni_xmit_pkts, uni_rcv_pkts, mc_xmit_pkts, mc_rcv_pkts;
};

/* One port's reading: PortCounters and, when read, PortCountersExtended. */
struct pma_sample {
	struct pma_counters pc;
	bool has_ext;
	struct pma_counters_ext ext;
};

/*
 * Builders.  The TID is left to the engine.  pma_build_get() asks for
 * `attr` of `port` (ClassPortInfo ignores the port); pma_build_clear()
 * is a Set of PortCounters (select: CounterSelect, select2:
 * CounterSelect2) or of PortCountersExtended (select only) that clears
 * the selected counters of `port`.
 */
void pma_build_get(struct pma_mad *m, uint16_t attr, uint8_t port);
void pma_build_clear(struct pma_mad *m, uint16_t attr, uint8_t port,
		     uint16_t select, uint8_t select2);

/*
 * Decoders of an answer (GetResp) to the request built above.  Each
 * returns 0, or:
 *   -EBADMSG  short or long MAD, wrong base or class version, class,
 *             method or attribute;
 *   -EAGAIN   status BUSY;
 *   -EPROTO   any other non-zero status (ClassPortInfo: except REDIRECT,
 *             which sets cpi->redirected);
 *   -ERANGE   a field out of range (PortSelect not the port asked for,
 *             a redirect to a multicast or reserved LID or to QP 0).
 * Nothing is written to *out unless 0 is returned.
 */
int pma_decode_cpi(const void *mad, size_t len, struct pma_cpi *out);
int pma_decode_counters(const void *mad, size_t len, uint8_t port,
			struct pma_counters *out);
int pma_decode_counters_ext(const void *mad, size_t len, uint8_t port,
			    struct pma_counters_ext *out);

#endif /* IBSM_MAD_PMA_H */
