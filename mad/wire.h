/*
 * wire.h - InfiniBand MAD wire formats used by the SM.
 *
 * Every structure here is the exact byte image of a MAD or of an attribute
 * as it crosses the wire (big-endian, packed).  Multi-byte fields carry
 * their byte order in the type (__be16/__be32/__be64); sub-byte fields are
 * read and written through the small accessors below, never through C
 * bitfields, whose layout the compiler is free to choose.
 *
 * Section numbers refer to the InfiniBand Architecture Specification,
 * Volume 1, Release 1.3.
 */
#ifndef IBSM_MAD_WIRE_H
#define IBSM_MAD_WIRE_H

#include <assert.h>
#include <endian.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#define MAD_SIZE		256
#define MAD_HDR_SIZE		24
#define SMP_DATA_SIZE		64
#define SMP_MAX_HOPS		63
#define SA_DATA_SIZE		200

/* Management classes (13.4.4) */
enum {
	MAD_CLASS_SMI		= 0x01,	/* LID-routed SMP */
	MAD_CLASS_SA		= 0x03,
	MAD_CLASS_PERF		= 0x04,
	MAD_CLASS_SMI_DR	= 0x81,	/* directed-route SMP */
};

/* Methods (13.4.5) */
enum {
	MAD_METHOD_GET		= 0x01,
	MAD_METHOD_SET		= 0x02,
	MAD_METHOD_SEND		= 0x03,
	MAD_METHOD_TRAP		= 0x05,
	MAD_METHOD_REPORT	= 0x06,
	MAD_METHOD_TRAP_REPRESS	= 0x07,
	MAD_METHOD_GET_TABLE	= 0x12,
	MAD_METHOD_GET_TRACE_TABLE = 0x13,
	MAD_METHOD_GETMULTI	= 0x14,
	MAD_METHOD_DELETE	= 0x15,
	MAD_METHOD_RESP		= 0x80,	/* response bit */
};

/* SMP attribute IDs (14.2.5) */
enum {
	SMP_ATTR_NOTICE		= 0x0002,
	SMP_ATTR_NODE_DESC	= 0x0010,
	SMP_ATTR_NODE_INFO	= 0x0011,
	SMP_ATTR_SWITCH_INFO	= 0x0012,
	SMP_ATTR_GUID_INFO	= 0x0014,
	SMP_ATTR_PORT_INFO	= 0x0015,
	SMP_ATTR_PKEY_TABLE	= 0x0016,
	SMP_ATTR_SL2VL_TABLE	= 0x0017,
	SMP_ATTR_VL_ARB_TABLE	= 0x0018,
	SMP_ATTR_LFT		= 0x0019,
	SMP_ATTR_RFT		= 0x001a,
	SMP_ATTR_MFT		= 0x001b,
	SMP_ATTR_SM_INFO	= 0x0020,
};

/* MAD status bits (13.4.7) */
enum {
	MAD_STATUS_BUSY			= 0x0001,
	MAD_STATUS_REDIRECT		= 0x0002,
	MAD_STATUS_BAD_VERSION		= 0x0004,
	MAD_STATUS_METHOD_UNSUPP	= 0x0008,
	MAD_STATUS_ATTR_UNSUPP		= 0x000c,
	MAD_STATUS_INVALID_FIELD	= 0x001c,
	MAD_STATUS_MASK			= 0x001c,
};

enum { NODE_TYPE_CA = 1, NODE_TYPE_SWITCH = 2, NODE_TYPE_ROUTER = 3 };

/* PortInfo:PortState (14.2.5.6) */
enum {
	PORT_STATE_NOP = 0, PORT_STATE_DOWN = 1, PORT_STATE_INIT = 2,
	PORT_STATE_ARMED = 3, PORT_STATE_ACTIVE = 4,
};

/* PortInfo:PortPhysicalState */
enum {
	PHYS_STATE_SLEEP = 1, PHYS_STATE_POLLING = 2, PHYS_STATE_DISABLED = 3,
	PHYS_STATE_TRAINING = 4, PHYS_STATE_LINKUP = 5,
	PHYS_STATE_ERROR_RECOVERY = 6, PHYS_STATE_PHY_TEST = 7,
};

/* MAD: common MAD header (13.4.2) */
struct mad_hdr {
	uint8_t  base_version;		/* 1 */
	uint8_t  mgmt_class;
	uint8_t  class_version;
	uint8_t  method;		/* bit 7: response */
	__be16   status;		/* DR SMP: bit 15 = D (direction) */
	__be16   class_specific;	/* DR SMP: hop pointer, hop count */
	__be64   tid;
	__be16   attr_id;
	__be16   resv;
	__be32   attr_mod;
} __attribute__((packed));
static_assert(sizeof(struct mad_hdr) == MAD_HDR_SIZE, "MAD header is 24 bytes");
static_assert(offsetof(struct mad_hdr, tid) == 8, "TID at 8");
static_assert(offsetof(struct mad_hdr, attr_mod) == 20, "AttributeModifier at 20");

/* SMP, LID routed (14.2.1.1) */
struct smp_lid {
	struct mad_hdr hdr;
	__be64   mkey;
	uint8_t  resv[32];
	uint8_t  data[SMP_DATA_SIZE];
	uint8_t  resv2[128];
} __attribute__((packed));
static_assert(sizeof(struct smp_lid) == MAD_SIZE, "SMP is 256 bytes");
static_assert(offsetof(struct smp_lid, data) == 64, "SMP data at 64");

/* SMP, directed route (14.2.1.2) */
struct smp_dr {
	struct mad_hdr hdr;
	__be64   mkey;
	__be16   dr_slid;
	__be16   dr_dlid;
	uint8_t  resv[28];
	uint8_t  data[SMP_DATA_SIZE];
	uint8_t  initial_path[64];
	uint8_t  return_path[64];
} __attribute__((packed));
static_assert(sizeof(struct smp_dr) == MAD_SIZE, "DR SMP is 256 bytes");
static_assert(offsetof(struct smp_dr, dr_slid) == 32, "DrSLID at 32");
static_assert(offsetof(struct smp_dr, data) == 64, "DR SMP data at 64");
static_assert(offsetof(struct smp_dr, initial_path) == 128, "InitialPath at 128");
static_assert(offsetof(struct smp_dr, return_path) == 192, "ReturnPath at 192");

#define SMP_DR_DIRECTION	0x8000	/* in hdr.status: set on the way back */

static inline uint8_t smp_dr_hop_ptr(const struct smp_dr *s)
{ return (uint8_t)(be16toh(s->hdr.class_specific) >> 8); }
static inline uint8_t smp_dr_hop_cnt(const struct smp_dr *s)
{ return (uint8_t)(be16toh(s->hdr.class_specific) & 0xff); }
static inline void smp_dr_set_hops(struct smp_dr *s, uint8_t ptr, uint8_t cnt)
{ s->hdr.class_specific = htobe16((uint16_t)(ptr << 8 | cnt)); }

/* RMPP header (13.6.2.1) */
struct rmpp_hdr {
	uint8_t  version;
	uint8_t  type;
	uint8_t  resptime_flags;	/* RRespTime:5 | RMPPFlags:3 */
	uint8_t  status;
	__be32   data1;			/* SegmentNumber */
	__be32   data2;			/* PayloadLength / NewWindowLast */
} __attribute__((packed));
static_assert(sizeof(struct rmpp_hdr) == 12, "RMPP header is 12 bytes");

/* SA MAD (15.2.1) */
struct sa_mad {
	struct mad_hdr hdr;
	struct rmpp_hdr rmpp;
	__be64   sm_key;
	__be16   attr_offset;		/* in 8-byte words */
	__be16   resv;
	__be64   comp_mask;
	uint8_t  data[SA_DATA_SIZE];
} __attribute__((packed));
static_assert(sizeof(struct sa_mad) == MAD_SIZE, "SA MAD is 256 bytes");
static_assert(offsetof(struct sa_mad, sm_key) == 36, "SM_Key at 36");
static_assert(offsetof(struct sa_mad, comp_mask) == 48, "ComponentMask at 48");
static_assert(offsetof(struct sa_mad, data) == 56, "SA data at 56");

/* Header of an SA request (class 0x03, version 2): the common MAD fields
 * (13.4.2) and the ComponentMask; TID, SM_Key and data are left as they
 * are. */
static inline void sa_request_hdr(struct sa_mad *m, uint8_t method,
				  uint16_t attr_id, uint64_t comp_mask)
{
	m->hdr.base_version = 1;
	m->hdr.mgmt_class = MAD_CLASS_SA;
	m->hdr.class_version = 2;
	m->hdr.method = method;
	m->hdr.attr_id = htobe16(attr_id);
	m->comp_mask = htobe64(comp_mask);
}

/* NodeDescription (14.2.5.2) */
struct smp_node_desc {
	char desc[64];			/* UTF-8, not necessarily terminated */
} __attribute__((packed));
static_assert(sizeof(struct smp_node_desc) == 64, "NodeDescription is 64");

/* NodeInfo (14.2.5.3) */
struct smp_node_info {
	uint8_t  base_version;
	uint8_t  class_version;
	uint8_t  node_type;
	uint8_t  num_ports;
	__be64   sys_guid;
	__be64   node_guid;
	__be64   port_guid;
	__be16   partition_cap;
	__be16   device_id;
	__be32   revision;
	uint8_t  local_port;
	uint8_t  vendor_id[3];
} __attribute__((packed));
static_assert(sizeof(struct smp_node_info) == 40, "NodeInfo is 40 bytes");
static_assert(offsetof(struct smp_node_info, node_guid) == 12, "NodeGUID at 12");
static_assert(offsetof(struct smp_node_info, local_port) == 36, "LocalPortNum at 36");

static inline uint32_t smp_node_info_vendor(const struct smp_node_info *n)
{ return (uint32_t)n->vendor_id[0] << 16 | n->vendor_id[1] << 8 | n->vendor_id[2]; }

/* SwitchInfo (14.2.5.4) */
struct smp_switch_info {
	__be16   lft_cap;
	__be16   rft_cap;
	__be16   mft_cap;
	__be16   lft_top;
	uint8_t  default_port;
	uint8_t  default_mcast_primary_port;
	uint8_t  default_mcast_not_primary_port;
	uint8_t  life_psc_osl;		/* LifeTimeValue:5 PortStateChange:1 OSL2VL:2 */
	__be16   lids_per_port;
	__be16   partition_enf_cap;
	uint8_t  enf_caps;		/* InbEnf OutbEnf FiltRawIn FiltRawOut EnhPort0 resv:3 */
	uint8_t  resv;
	__be16   mft_top;
} __attribute__((packed));
static_assert(sizeof(struct smp_switch_info) == 20, "SwitchInfo is 20 bytes");

static inline unsigned smp_switch_info_life(const struct smp_switch_info *s)
{ return s->life_psc_osl >> 3; }
static inline unsigned smp_switch_info_psc(const struct smp_switch_info *s)
{ return (s->life_psc_osl >> 2) & 1; }
static inline unsigned smp_switch_info_enhanced_port0(const struct smp_switch_info *s)
{ return (s->enf_caps >> 3) & 1; }

/* PortInfo (14.2.5.6) */
struct smp_port_info {
	__be64   mkey;
	__be64   gid_prefix;
	__be16   lid;
	__be16   master_sm_lid;
	__be32   cap_mask;
	__be16   diag_code;
	__be16   mkey_lease_period;
	uint8_t  local_port;
	uint8_t  link_width_enabled;
	uint8_t  link_width_supported;
	uint8_t  link_width_active;
	uint8_t  speed_supported_state;	/* LinkSpeedSupported:4 PortState:4 */
	uint8_t  phys_state_down_def;	/* PortPhysicalState:4 LinkDownDefaultState:4 */
	uint8_t  mkey_prot_lmc;		/* M_KeyProtectBits:2 resv:3 LMC:3 */
	uint8_t  speed_active_enabled;	/* LinkSpeedActive:4 LinkSpeedEnabled:4 */
	uint8_t  neighbor_mtu_sm_sl;	/* NeighborMTU:4 MasterSMSL:4 */
	uint8_t  vl_cap_init_type;	/* VLCap:4 InitType:4 */
	uint8_t  vl_high_limit;
	uint8_t  vl_arb_high_cap;
	uint8_t  vl_arb_low_cap;
	uint8_t  init_type_reply_mtu_cap; /* InitTypeReply:4 MTUCap:4 */
	uint8_t  vl_stall_hoq_life;	/* VLStallCount:3 HOQLife:5 */
	uint8_t  op_vls_enforce;	/* OperationalVLs:4 PEI:1 PEO:1 FRI:1 FRO:1 */
	__be16   mkey_violations;
	__be16   pkey_violations;
	__be16   qkey_violations;
	uint8_t  guid_cap;
	uint8_t  rereg_subnet_timeout;	/* ClientReregister:1 McastPKeyTrapSupp:2 SubnetTimeOut:5 */
	uint8_t  resp_time_value;	/* resv:3 RespTimeValue:5 */
	uint8_t  phy_overrun_errors;	/* LocalPhyErrors:4 OverrunErrors:4 */
	__be16   max_credit_hint;
	uint8_t  link_roundtrip_latency[4]; /* resv:8 LinkRoundTripLatency:24 */
	__be16   cap_mask2;
	uint8_t  speed_ext_active_supp;	/* LinkSpeedExtActive:4 LinkSpeedExtSupported:4 */
	uint8_t  speed_ext_enabled;	/* resv:3 LinkSpeedExtEnabled:5 */
} __attribute__((packed));
static_assert(sizeof(struct smp_port_info) == 64, "PortInfo is 64 bytes");
static_assert(offsetof(struct smp_port_info, lid) == 16, "LID at 16");
static_assert(offsetof(struct smp_port_info, local_port) == 28, "LocalPortNum at 28");
static_assert(offsetof(struct smp_port_info, speed_supported_state) == 32, "PortState at 32");
static_assert(offsetof(struct smp_port_info, op_vls_enforce) == 43, "OperationalVLs at 43");
static_assert(offsetof(struct smp_port_info, guid_cap) == 50, "GUIDCap at 50");
static_assert(offsetof(struct smp_port_info, cap_mask2) == 60, "CapabilityMask2 at 60");

/* Nibble helpers for the packed PortInfo bytes. */
#define HI4(b)		((unsigned)((b) >> 4) & 0xf)
#define LO4(b)		((unsigned)(b) & 0xf)
#define SET_HI4(b, v)	((b) = (uint8_t)(((b) & 0x0f) | (((v) & 0xf) << 4)))
#define SET_LO4(b, v)	((b) = (uint8_t)(((b) & 0xf0) | ((v) & 0xf)))

static inline unsigned pi_port_state(const struct smp_port_info *p) { return LO4(p->speed_supported_state); }
static inline unsigned pi_speed_supported(const struct smp_port_info *p) { return HI4(p->speed_supported_state); }
static inline unsigned pi_phys_state(const struct smp_port_info *p) { return HI4(p->phys_state_down_def); }
static inline unsigned pi_lmc(const struct smp_port_info *p) { return p->mkey_prot_lmc & 0x7; }
static inline unsigned pi_mkey_prot(const struct smp_port_info *p) { return p->mkey_prot_lmc >> 6; }
static inline unsigned pi_speed_active(const struct smp_port_info *p) { return HI4(p->speed_active_enabled); }
static inline unsigned pi_speed_enabled(const struct smp_port_info *p) { return LO4(p->speed_active_enabled); }
static inline unsigned pi_neighbor_mtu(const struct smp_port_info *p) { return HI4(p->neighbor_mtu_sm_sl); }
static inline unsigned pi_sm_sl(const struct smp_port_info *p) { return LO4(p->neighbor_mtu_sm_sl); }
static inline unsigned pi_vl_cap(const struct smp_port_info *p) { return HI4(p->vl_cap_init_type); }
static inline unsigned pi_mtu_cap(const struct smp_port_info *p) { return LO4(p->init_type_reply_mtu_cap); }
static inline unsigned pi_op_vls(const struct smp_port_info *p) { return HI4(p->op_vls_enforce); }
static inline unsigned pi_subnet_timeout(const struct smp_port_info *p) { return p->rereg_subnet_timeout & 0x1f; }
static inline unsigned pi_client_rereg(const struct smp_port_info *p) { return p->rereg_subnet_timeout >> 7; }
static inline unsigned pi_speed_ext_active(const struct smp_port_info *p) { return HI4(p->speed_ext_active_supp); }
static inline void pi_set_port_state(struct smp_port_info *p, unsigned v) { SET_LO4(p->speed_supported_state, v); }
static inline void pi_set_phys_state(struct smp_port_info *p, unsigned v) { SET_HI4(p->phys_state_down_def, v); }
static inline void pi_set_lmc(struct smp_port_info *p, unsigned v) { p->mkey_prot_lmc = (uint8_t)((p->mkey_prot_lmc & ~0x7u) | (v & 0x7)); }
static inline void pi_set_neighbor_mtu(struct smp_port_info *p, unsigned v) { SET_HI4(p->neighbor_mtu_sm_sl, v); }
static inline void pi_set_op_vls(struct smp_port_info *p, unsigned v) { SET_HI4(p->op_vls_enforce, v); }
static inline void pi_set_subnet_timeout(struct smp_port_info *p, unsigned v)
{ p->rereg_subnet_timeout = (uint8_t)((p->rereg_subnet_timeout & 0xe0) | (v & 0x1f)); }
static inline void pi_set_client_rereg(struct smp_port_info *p, unsigned v)
{ p->rereg_subnet_timeout = (uint8_t)((p->rereg_subnet_timeout & 0x7f) | ((v & 1) << 7)); }

/* PortInfo byte 43: PartitionEnforcementInbound/Outbound (14.2.5.6) */
#define PI_PART_ENFORCE_IN	0x08u
#define PI_PART_ENFORCE_OUT	0x04u
#define PI_PART_ENFORCE_MASK	(PI_PART_ENFORCE_IN | PI_PART_ENFORCE_OUT)

/* PortInfo:CapabilityMask bits used by the SM */
#define PI_CAP_IS_SM		(1u << 1)
#define PI_CAP_SL_MAP		(1u << 6)	/* IsSLMappingSupported */
#define PI_CAP_HAS_EXT_SPEEDS	(1u << 14)

/* P_KeyTable block (14.2.5.7) */
struct smp_pkey_table {
	__be16   pkey[32];
} __attribute__((packed));
static_assert(sizeof(struct smp_pkey_table) == 64, "P_KeyTable block is 64");

/* SLtoVLMappingTable (14.2.5.8): SL 2n in the high nibble of byte n */
struct smp_sl2vl_table {
	uint8_t  vl[8];
} __attribute__((packed));
static_assert(sizeof(struct smp_sl2vl_table) == 8, "SL2VL table is 8 bytes");

static inline unsigned sl2vl_get(const struct smp_sl2vl_table *t, unsigned sl)
{ return sl & 1 ? LO4(t->vl[sl / 2]) : HI4(t->vl[sl / 2]); }
static inline void sl2vl_set(struct smp_sl2vl_table *t, unsigned sl, unsigned vl)
{ if (sl & 1) SET_LO4(t->vl[sl / 2], vl); else SET_HI4(t->vl[sl / 2], vl); }

/* VLArbitrationTable block (14.2.5.9) */
struct smp_vl_arb_entry {
	uint8_t  vl;			/* resv:4 VL:4 */
	uint8_t  weight;
} __attribute__((packed));
struct smp_vl_arb_table {
	struct smp_vl_arb_entry entry[32];
} __attribute__((packed));
static_assert(sizeof(struct smp_vl_arb_table) == 64, "VLArbitrationTable is 64");

/* LinearForwardingTable block (14.2.5.10): 64 egress ports */
struct smp_lft_block {
	uint8_t  port[64];
} __attribute__((packed));
static_assert(sizeof(struct smp_lft_block) == 64, "LFT block is 64");

/* MulticastForwardingTable block (14.2.5.12): 32 MLIDs x 16-port mask */
struct smp_mft_block {
	__be16   mask[32];
} __attribute__((packed));
static_assert(sizeof(struct smp_mft_block) == 64, "MFT block is 64");

/* GUIDInfo block (14.2.5.5) */
struct smp_guid_info {
	__be64   guid[8];
} __attribute__((packed));
static_assert(sizeof(struct smp_guid_info) == 64, "GUIDInfo block is 64");

/* SMInfo (14.2.5.13) */
enum {
	SM_STATE_NOTACTIVE = 0, SM_STATE_DISCOVERING = 1,
	SM_STATE_STANDBY = 2, SM_STATE_MASTER = 3,
};
struct smp_sm_info {
	__be64   guid;
	__be64   sm_key;
	__be32   act_count;
	uint8_t  prio_state;		/* Priority:4 SMState:4 */
	uint8_t  resv[3];
} __attribute__((packed));
static_assert(sizeof(struct smp_sm_info) == 24, "SMInfo (with padding) is 24");
static_assert(offsetof(struct smp_sm_info, prio_state) == 20, "Priority at 20");

/* Notice (14.2.5.1, 13.4.8.2): traps and reports */
struct smp_notice {
	uint8_t  generic_type;		/* IsGeneric:1 Type:7 */
	uint8_t  producer[3];		/* ProducerType or VendorID */
	__be16   trap_num;		/* TrapNumber or DeviceID */
	__be16   issuer_lid;
	__be16   toggle_count;		/* NoticeToggle:1 NoticeCount:15 */
	uint8_t  data_details[54];
	uint8_t  issuer_gid[16];
} __attribute__((packed));
static_assert(sizeof(struct smp_notice) == 80, "Notice is 80 bytes");
static_assert(offsetof(struct smp_notice, issuer_gid) == 64, "IssuerGID at 64");

static inline unsigned notice_is_generic(const struct smp_notice *n) { return n->generic_type >> 7; }
static inline unsigned notice_type(const struct smp_notice *n) { return n->generic_type & 0x7f; }
static inline uint32_t notice_producer(const struct smp_notice *n)
{ return (uint32_t)n->producer[0] << 16 | n->producer[1] << 8 | n->producer[2]; }

#endif /* IBSM_MAD_WIRE_H */
