/*
 * sa_wire.h - Subnet Administration records (IB spec 15.2.5) as they
 * cross the wire inside SA MADs (struct sa_mad in wire.h).
 *
 * Sizes are those of the records proper; the SA MAD's AttributeOffset is
 * the record size rounded up to 8 bytes, in 8-byte words (15.2.1.1).
 */
#ifndef IBSM_MAD_SA_WIRE_H
#define IBSM_MAD_SA_WIRE_H

#include "mad/wire.h"

/* SA attribute IDs (15.2.5, table 206) */
enum {
	SA_ATTR_CLASS_PORT_INFO		= 0x0001,
	SA_ATTR_NOTICE			= 0x0002,
	SA_ATTR_INFORM_INFO		= 0x0003,
	SA_ATTR_NODE_RECORD		= 0x0011,
	SA_ATTR_PORT_INFO_RECORD	= 0x0012,
	SA_ATTR_SL2VL_RECORD		= 0x0013,
	SA_ATTR_SWITCH_INFO_RECORD	= 0x0014,
	SA_ATTR_LFT_RECORD		= 0x0015,
	SA_ATTR_RFT_RECORD		= 0x0016,
	SA_ATTR_MFT_RECORD		= 0x0017,
	SA_ATTR_SM_INFO_RECORD		= 0x0018,
	SA_ATTR_INFORM_INFO_RECORD	= 0x00f3,
	SA_ATTR_LINK_RECORD		= 0x0020,
	SA_ATTR_GUID_INFO_RECORD	= 0x0030,
	SA_ATTR_SERVICE_RECORD		= 0x0031,
	SA_ATTR_PKEY_TABLE_RECORD	= 0x0033,
	SA_ATTR_PATH_RECORD		= 0x0035,
	SA_ATTR_VL_ARB_RECORD		= 0x0036,
	SA_ATTR_MCMEMBER_RECORD		= 0x0038,
	SA_ATTR_MULTIPATH_RECORD	= 0x003a,
};

/* SA MAD status codes (15.2.1.2), in the class-specific status bits 8-15 */
enum {
	SA_STATUS_NO_RESOURCES		= 0x0100,
	SA_STATUS_REQ_INVALID		= 0x0200,
	SA_STATUS_NO_RECORDS		= 0x0300,
	SA_STATUS_TOO_MANY_RECORDS	= 0x0400,
	SA_STATUS_INVALID_GID		= 0x0500,
	SA_STATUS_INSUF_COMPONENTS	= 0x0600,
	SA_STATUS_DENIED		= 0x0700,
};

/* RMPP (13.6.2) */
enum {
	RMPP_TYPE_DATA = 1, RMPP_TYPE_ACK = 2, RMPP_TYPE_STOP = 3,
	RMPP_TYPE_ABORT = 4,
};
#define RMPP_FLAG_ACTIVE	0x01
#define RMPP_FLAG_FIRST		0x02
#define RMPP_FLAG_LAST		0x04
#define SA_HDR_SIZE		20	/* SM_Key .. ComponentMask */

/* ClassPortInfo (13.4.8.1) */
struct sa_class_port_info {
	uint8_t  base_version;
	uint8_t  class_version;
	__be16   cap_mask;
	__be32   cap_mask2_resp_time;	/* CapabilityMask2:27 RespTimeValue:5 */
	uint8_t  redirect_gid[16];
	__be32   redirect_tc_sl_fl;
	__be16   redirect_lid;
	__be16   redirect_pkey;
	__be32   redirect_qp;
	__be32   redirect_qkey;
	uint8_t  trap_gid[16];
	__be32   trap_tc_sl_fl;
	__be16   trap_lid;
	__be16   trap_pkey;
	__be32   trap_hl_qp;
	__be32   trap_qkey;
} __attribute__((packed));
static_assert(sizeof(struct sa_class_port_info) == 72, "ClassPortInfo is 72");

/* NodeRecord (15.2.5.2) */
struct sa_node_record {
	__be16   lid;
	__be16   resv;
	struct smp_node_info node_info;
	struct smp_node_desc node_desc;
} __attribute__((packed));
static_assert(sizeof(struct sa_node_record) == 108, "NodeRecord is 108");

/* PortInfoRecord (15.2.5.3) */
struct sa_port_info_record {
	__be16   lid;
	uint8_t  port_num;
	uint8_t  options;
	struct smp_port_info port_info;
} __attribute__((packed));
static_assert(sizeof(struct sa_port_info_record) == 68, "PortInfoRecord is 68");

/* SwitchInfoRecord (15.2.5.4) */
struct sa_switch_info_record {
	__be16   lid;
	__be16   resv;
	struct smp_switch_info switch_info;
} __attribute__((packed));
static_assert(sizeof(struct sa_switch_info_record) == 24, "SwitchInfoRecord is 24");

/* LinearForwardingTableRecord (15.2.5.6) */
struct sa_lft_record {
	__be16   lid;
	__be16   block_num;
	__be32   resv;
	uint8_t  lft[64];
} __attribute__((packed));
static_assert(sizeof(struct sa_lft_record) == 72, "LFTRecord is 72");

/* SMInfoRecord (15.2.5.9): SMInfo proper is 21 bytes */
struct sa_sm_info_record {
	__be16   lid;
	__be16   resv;
	__be64   guid;
	__be64   sm_key;
	__be32   act_count;
	uint8_t  prio_state;
	uint8_t  pad[3];
} __attribute__((packed));
static_assert(sizeof(struct sa_sm_info_record) == 28, "SMInfoRecord is 28");

/* LinkRecord (15.2.5.13) */
struct sa_link_record {
	__be16   from_lid;
	uint8_t  from_port;
	uint8_t  to_port;
	__be16   to_lid;
	__be16   pad;
} __attribute__((packed));
static_assert(sizeof(struct sa_link_record) == 8, "LinkRecord is 8");

/* PathRecord (15.2.5.16) */
struct sa_path_record {
	__be64   service_id;
	uint8_t  dgid[16];
	uint8_t  sgid[16];
	__be16   dlid;
	__be16   slid;
	__be32   hop_flow_raw;		/* RawTraffic:1 resv:3 FlowLabel:20 HopLimit:8 */
	uint8_t  tclass;
	uint8_t  num_path;		/* Reversible:1 NumbPath:7 */
	__be16   pkey;
	__be16   qos_class_sl;		/* QoSClass:12 SL:4 */
	uint8_t  mtu;			/* MTUSelector:2 MTU:6 */
	uint8_t  rate;			/* RateSelector:2 Rate:6 */
	uint8_t  pkt_life;		/* PacketLifeTimeSelector:2 PacketLifeTime:6 */
	uint8_t  preference;
	uint8_t  resv[6];
} __attribute__((packed));
static_assert(sizeof(struct sa_path_record) == 64, "PathRecord is 64");

/*
 * MultiPathRecord (15.2.5.20), the request of SubnAdmGetMulti: path
 * parameters like PathRecord's, then SGIDCount source GIDs followed by
 * DGIDCount destination GIDs (SDGID).  The GID list is variable: a
 * request may span several RMPP segments.  The fixed part is 24 bytes,
 * so one MAD's 200 data bytes hold 11 GIDs.  The answer is PathRecords.
 */
#define SA_MPR_FIXED_SIZE	24
#define SA_MPR_GIDS_ONE_MAD	((SA_DATA_SIZE - SA_MPR_FIXED_SIZE) / 16)
struct sa_multipath_record {
	__be32   hop_flow_raw;		/* RawTraffic:1 resv:3 FlowLabel:20 HopLimit:8 */
	uint8_t  tclass;
	uint8_t  num_path;		/* Reversible:1 NumbPath:7 */
	__be16   pkey;
	__be16   qos_class_sl;		/* QoSClass:12 SL:4 */
	uint8_t  mtu;			/* MTUSelector:2 MTU:6 */
	uint8_t  rate;			/* RateSelector:2 Rate:6 */
	uint8_t  pkt_life;		/* PacketLifeTimeSelector:2 PacketLifeTime:6 */
	uint8_t  service_id_msb;	/* ServiceID bits 63-56 */
	uint8_t  independence;		/* IndependenceSelector:2 resv:6 */
	uint8_t  sgid_count;
	uint8_t  dgid_count;
	uint8_t  service_id_lsb[7];	/* ServiceID bits 55-0 */
	uint8_t  gids[][16];		/* SGIDs, then DGIDs */
} __attribute__((packed));
static_assert(sizeof(struct sa_multipath_record) == SA_MPR_FIXED_SIZE,
	      "MultiPathRecord fixed part is 24");
static_assert(offsetof(struct sa_multipath_record, independence) == 14,
	      "IndependenceSelector at 14");
static_assert(offsetof(struct sa_multipath_record, sgid_count) == 15,
	      "SGIDCount at 15");
static_assert(offsetof(struct sa_multipath_record, service_id_lsb) == 17,
	      "ServiceID LSB at 17");
static_assert(offsetof(struct sa_multipath_record, gids) == 24, "SDGID at 24");
static_assert(SA_MPR_GIDS_ONE_MAD == 11, "11 GIDs fit one MAD");

/* Size of one record in an SA table: AttributeOffset words of 8 bytes. */
static inline unsigned sa_record_stride(size_t record_size)
{
	return (unsigned)((record_size + 7) / 8);
}


/* ServiceRecord (15.2.5.14) */
struct sa_service_record {
	__be64   service_id;
	uint8_t  service_gid[16];
	__be16   service_pkey;
	__be16   resv;
	__be32   service_lease;		/* seconds; 0xffffffff = forever */
	uint8_t  service_key[16];
	char     service_name[64];
	uint8_t  data8[16];
	__be16   data16[8];
	__be32   data32[4];
	__be64   data64[2];
} __attribute__((packed));
static_assert(sizeof(struct sa_service_record) == 176, "ServiceRecord is 176");

/* MCMemberRecord (15.2.5.17) */
struct sa_mcmember_record {
	uint8_t  mgid[16];
	uint8_t  port_gid[16];
	__be32   qkey;
	__be16   mlid;
	uint8_t  mtu;			/* MTUSelector:2 MTU:6 */
	uint8_t  tclass;
	__be16   pkey;
	uint8_t  rate;			/* RateSelector:2 Rate:6 */
	uint8_t  pkt_life;		/* PacketLifeTimeSelector:2 PacketLifeTime:6 */
	__be32   sl_flow_hop;		/* SL:4 FlowLabel:20 HopLimit:8 */
	uint8_t  scope_state;		/* Scope:4 JoinState:4 */
	uint8_t  proxy_join;		/* ProxyJoin:1 reserved:7 */
	uint8_t  resv[2];
} __attribute__((packed));
static_assert(sizeof(struct sa_mcmember_record) == 52, "MCMemberRecord is 52");

/* Its components (ComponentMask bits, 15.2.5.17). */
enum {
	MCM_MGID, MCM_PORT_GID, MCM_QKEY, MCM_MLID, MCM_MTU_SEL, MCM_MTU,
	MCM_TCLASS, MCM_PKEY, MCM_RATE_SEL, MCM_RATE, MCM_LIFE_SEL, MCM_LIFE,
	MCM_SL, MCM_FLOW_LABEL, MCM_HOP_LIMIT, MCM_SCOPE, MCM_JOIN_STATE,
	MCM_PROXY_JOIN,
};

/* JoinState bits (15.2.5.17 table 197 note). */
#define MC_JOIN_FULL		0x1	/* full member */
#define MC_JOIN_NON		0x2	/* non member */
#define MC_JOIN_SENDONLY	0x4	/* send-only non member */
#define MC_JOIN_SENDONLY_FULL	0x8	/* send-only full member (1.3) */

/* InformInfo (13.4.8.3), generic form */
struct sa_inform_info {
	uint8_t  gid[16];
	__be16   lid_range_begin;
	__be16   lid_range_end;
	__be16   resv;
	uint8_t  is_generic;
	uint8_t  subscribe;
	__be16   type;
	__be16   trap_num;		/* or DeviceID */
	__be32   qpn_resp_time;		/* QPN:24 resv:3 RespTimeValue:5 */
	uint8_t  resv2;
	uint8_t  producer[3];		/* ProducerType or VendorID */
} __attribute__((packed));
static_assert(sizeof(struct sa_inform_info) == 36, "InformInfo is 36");

/* InformInfoRecord (15.2.5.12) */
struct sa_inform_info_record {
	uint8_t  subscriber_gid[16];
	__be16   subscriber_enum;
	uint8_t  resv[6];
	struct sa_inform_info inform_info;
} __attribute__((packed));
static_assert(sizeof(struct sa_inform_info_record) == 60, "InformInfoRecord is 60");



/* GUIDInfoRecord (15.2.5.18) */
struct sa_guid_info_record {
	__be16   lid;
	uint8_t  block_num;
	uint8_t  resv;
	__be32   resv2;
	struct smp_guid_info guid_info;
} __attribute__((packed));
static_assert(sizeof(struct sa_guid_info_record) == 72, "GUIDInfoRecord is 72");
static_assert(offsetof(struct sa_guid_info_record, block_num) == 2, "BlockNum at 2");
static_assert(offsetof(struct sa_guid_info_record, guid_info) == 8, "GUIDInfo at 8");

/* SLtoVLMappingTableRecord (15.2.5.4): SLtoVLMappingTable is 16 x 4 bits */
struct sa_sl2vl_record {
	__be16   lid;
	uint8_t  in_port;
	uint8_t  out_port;
	__be32   resv;
	uint8_t  sl2vl[8];
} __attribute__((packed));
static_assert(sizeof(struct sa_sl2vl_record) == 16, "SL2VLTableRecord is 16");
static_assert(offsetof(struct sa_sl2vl_record, sl2vl) == 8, "SL2VL table at 8");

/* MulticastForwardingTableRecord (15.2.5.8): Position:4 resv:3 BlockNum:9 */
struct sa_mft_record {
	__be16   lid;
	__be16   position_block;
	__be32   resv;
	__be16   mft[32];		/* PortMask of 32 MLIDs */
} __attribute__((packed));
static_assert(sizeof(struct sa_mft_record) == 72, "MFTRecord is 72");
static_assert(offsetof(struct sa_mft_record, mft) == 8, "MFT at 8");

/* VLArbitrationTableRecord (15.2.5.9): 32 (VL, Weight) pairs */
struct sa_vlarb_record {
	__be16   lid;
	uint8_t  port_num;
	uint8_t  block_num;
	__be32   resv;
	uint8_t  vlarb[64];
} __attribute__((packed));
static_assert(sizeof(struct sa_vlarb_record) == 72, "VLArbTableRecord is 72");
static_assert(offsetof(struct sa_vlarb_record, vlarb) == 8, "VLArb table at 8");

/* P_KeyTableRecord (15.2.5.11) */
struct sa_pkey_table_record {
	__be16   lid;
	__be16   block_num;
	uint8_t  port_num;
	uint8_t  resv[3];
	__be16   pkeys[32];
} __attribute__((packed));
static_assert(sizeof(struct sa_pkey_table_record) == 72, "P_KeyTableRecord is 72");
static_assert(offsetof(struct sa_pkey_table_record, pkeys) == 8, "P_KeyTable at 8");

#endif /* IBSM_MAD_SA_WIRE_H */
