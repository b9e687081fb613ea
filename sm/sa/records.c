/*
 * records.c - the records the SA serves from the fabric model (15.2.5):
 * ClassPortInfo, NodeRecord, PortInfoRecord, SwitchInfoRecord,
 * LinearForwardingTableRecord, SMInfoRecord, LinkRecord, GUIDInfoRecord,
 * each with its ComponentMask table (see sa.h); PathRecord is in
 * sm/sa/path.c, the LID/GUID index in model/index.c.
 *
 * Every generator builds each candidate record the way OpenSM 3.3.23
 * answers it and keeps it when sa_match() accepts it.  A few components
 * do not compare by equality, in OpenSM as here, and are taken out of the
 * mask given to sa_match() and checked by the generator instead:
 *
 *   - a LID component (NodeRecord:LID, PortInfoRecord:EndportLID,
 *     LinkRecord:FromLID/ToLID, ...) matches every LID of the port's LMC
 *     range; the record carries the base LID;
 *   - NodeRecord:NodeDescription compares as a string (strncmp);
 *   - PortInfoRecord:CapabilityMask(2) with AttributeModifier bit 31 set
 *     matches ports that have every bit of the template (IBA 1.2 erratum,
 *     ClassPortInfo:IsPortInfoCapMaskMatchSupported); LinkSpeedExt*
 *     components only constrain ports that have extended speeds;
 *   - PathRecord components are inputs (endpoints, selectors, NumbPath,
 *     Reversible) rather than values to compare; see sm/sa/path.c.
 *
 * Tables list nodes and end ports in the order OpenSM does (its GUID maps,
 * see guid_order()), so that answers of the two SAs diff line by line.
 *
 * Lookups by LID and by port GUID go through an index built once per
 * subnet model (midx_get()), so a Get by LID or a PathRecord between two
 * ports costs O(1) + O(path length), not O(fabric).
 *
 * Tables over the whole model go node by node through each_node() or
 * each_switch(), which charge the request's work budget and yield
 * between nodes when its slice is spent (SA_MORE, sa.h); the per-node
 * work is bounded by the node's ports (LFT blocks: charged one each).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sm/sa/gen.h"
#include "sm/sa/service.h"
#include "sm/sa/tables.h"

/* SA QP1 Q_Key (13.5.1) */
#define QP1_QKEY		0x80010000u

/* ------------------------------------------------------------------ */
/* ClassPortInfo (13.4.8.1, 15.2.5.1)                                   */

/* ClassPortInfo:CapabilityMask of the SA (table 188 and errata) */
#define SA_CAP_IS_NOTICE		BIT(1)
#define SA_CAP_IS_UD_MCAST		BIT(9)
#define SA_CAP_IS_MULTIPATH		BIT(10)
#define SA_CAP_IS_PI_CAPMASK_MATCH	BIT(13)
/* ClassPortInfo:CapabilityMask2 of the SA */
#define SA_CAP2_IS_MCAST_TOP		BIT(3)
#define SA_CAP2_IS_ALIAS_GUIDS		BIT(5)
#define SA_CAP2_IS_FULL_PIR		BIT(6)
#define SA_CAP2_IS_EXT_SPEEDS		BIT(7)
#define SA_CAP2_IS_MCAST_SERVICE_RECS	BIT(8)
#define SA_CAP2_IS_PI_CAPMASK2_MATCH	BIT(10)
#define SA_CAP2_IS_SEND_ONLY_FULL	BIT(12)
#define SA_CAP2_IS_LINK_WIDTH_2X	BIT(13)
#define SA_CAP2_IS_LINK_SPEED_HDR	BIT(15)

/*
 * What OpenSM 3.3.23 advertises with its defaults (0x2602 / 0xb5e8), so
 * clients that tune themselves on these bits behave as they do there.
 */
#define SA_CAP_MASK	(SA_CAP_IS_NOTICE | SA_CAP_IS_UD_MCAST | \
			 SA_CAP_IS_MULTIPATH | SA_CAP_IS_PI_CAPMASK_MATCH)
#define SA_CAP_MASK2	(SA_CAP2_IS_MCAST_TOP | SA_CAP2_IS_ALIAS_GUIDS | \
			 SA_CAP2_IS_FULL_PIR | SA_CAP2_IS_EXT_SPEEDS | \
			 SA_CAP2_IS_MCAST_SERVICE_RECS | \
			 SA_CAP2_IS_PI_CAPMASK2_MATCH | \
			 SA_CAP2_IS_SEND_ONLY_FULL | SA_CAP2_IS_LINK_WIDTH_2X | \
			 SA_CAP2_IS_LINK_SPEED_HDR)

/* OpenSM's transaction_timeout default (ms), from which it derives the
 * RespTimeValue it advertises; the view does not carry ours. */
#define SA_TRANSACTION_TIMEOUT_MS	200

static const struct sa_field cpi_fields[] = {
	FLD(0, 8),	/* 0 BaseVersion */
	FLD(8, 8),	/* 1 ClassVersion */
	FLD(16, 16),	/* 2 CapabilityMask */
	FLD(32, 27),	/* 3 CapabilityMask2 */
	FLD(59, 5),	/* 4 RespTimeValue */
	FLD(64, 128),	/* 5 RedirectGID */
	FLD(192, 8),	/* 6 RedirectTC */
	FLD(200, 4),	/* 7 RedirectSL */
	FLD(204, 20),	/* 8 RedirectFL */
	FLD(224, 16),	/* 9 RedirectLID */
	FLD(240, 16),	/* 10 RedirectP_Key */
	FLD(256, 8),	/* 11 Reserved */
	FLD(264, 24),	/* 12 RedirectQP */
	FLD(288, 32),	/* 13 RedirectQ_Key */
	FLD(320, 128),	/* 14 TrapGID */
	FLD(448, 8),	/* 15 TrapTC */
	FLD(456, 4),	/* 16 TrapSL */
	FLD(460, 20),	/* 17 TrapFL */
	FLD(480, 16),	/* 18 TrapLID */
	FLD(496, 16),	/* 19 TrapP_Key */
	FLD(512, 8),	/* 20 TrapHL */
	FLD(520, 24),	/* 21 TrapQP */
	FLD(544, 32),	/* 22 TrapQ_Key */
};

/*
 * RespTimeValue: 4.096 us * 2^value covers the transaction timeout, never
 * below 8 (about 1 ms), as OpenSM computes it (200 ms -> 16).
 */
static unsigned resp_time_value(unsigned timeout_ms)
{
	unsigned v = 8;

	while (v < 31 && (4096ull << v) < (uint64_t)timeout_ms * 1000000)
		v++;
	return v;
}

/*
 * ClassPortInfo is not a table: one record describes the SA.  Its
 * ComponentMask is ignored (OpenSM ignores it too).
 */
static int gen_class_port_info(const struct sa_view *v, const struct sa_query *q,
			       struct sa_table *out)
{
	struct sa_class_port_info r;

	if (q->method != MAD_METHOD_GET)
		return -SA_STATUS_REQ_INVALID;
	memset(&r, 0, sizeof(r));
	r.base_version = 1;
	r.class_version = 2;
	/* disable_multicast: the SA says it has no UD multicast (OpenSM) */
	r.cap_mask = htobe16((uint16_t)(SA_CAP_MASK & ~(v->mcast_off ?
					SA_CAP_IS_UD_MCAST : 0)));
	/* use_mfttop FALSE: no IsMulticastFDBTopSupported either */
	r.cap_mask2_resp_time = htobe32((uint32_t)(SA_CAP_MASK2 & ~(v->mfttop_off ?
				SA_CAP2_IS_MCAST_TOP : 0)) << 5 |
			resp_time_value(SA_TRANSACTION_TIMEOUT_MS));
	r.redirect_qp = htobe32(1);
	r.redirect_qkey = htobe32(QP1_QKEY);
	r.trap_qkey = htobe32(QP1_QKEY);
	return sa_table_add(out, &r);
}

/* ------------------------------------------------------------------ */
/* NodeRecord (15.2.5.2)                                                */

enum { NR_LID, NR_RESV, NR_BASE_VER, NR_CLASS_VER, NR_NODE_TYPE, NR_NUM_PORTS,
       NR_SYS_GUID, NR_NODE_GUID, NR_PORT_GUID, NR_PART_CAP, NR_DEV_ID, NR_REV,
       NR_PORT_NUM, NR_VENDOR_ID, NR_NODE_DESC };

static const struct sa_field nr_fields[] = {
	FLD(0, 16),	/* 0 LID */
	FLD(16, 16),	/* 1 Reserved */
	FLD(32, 8),	/* 2 BaseVersion */
	FLD(40, 8),	/* 3 ClassVersion */
	FLD(48, 8),	/* 4 NodeType */
	FLD(56, 8),	/* 5 NumPorts */
	FLD(64, 64),	/* 6 SystemImageGUID */
	FLD(128, 64),	/* 7 NodeGUID */
	FLD(192, 64),	/* 8 PortGUID */
	FLD(256, 16),	/* 9 PartitionCap */
	FLD(272, 16),	/* 10 DeviceID */
	FLD(288, 32),	/* 11 Revision */
	FLD(320, 8),	/* 12 LocalPortNum */
	FLD(328, 24),	/* 13 VendorID */
	FLD(352, 512),	/* 14 NodeDescription */
};

/*
 * NodeInfo as the node answered it, seen through end port `pn`: PortGUID
 * and LocalPortNum are that port's.
 */
static void node_info_of(const struct fab_node *n, unsigned pn,
			 struct smp_node_info *ni)
{
	memset(ni, 0, sizeof(*ni));
	ni->base_version = 1;
	ni->class_version = 1;
	ni->node_type = n->type;
	ni->num_ports = n->num_ports;
	ni->sys_guid = htobe64(n->sys_guid);
	ni->node_guid = htobe64(n->guid);
	ni->port_guid = htobe64(n->ports[pn].guid);
	ni->partition_cap = htobe16(n->partition_cap);
	ni->device_id = htobe16(n->device_id);
	ni->revision = htobe32(n->revision);
	ni->local_port = (uint8_t)pn;
	ni->vendor_id[0] = (uint8_t)(n->vendor_id >> 16);
	ni->vendor_id[1] = (uint8_t)(n->vendor_id >> 8);
	ni->vendor_id[2] = (uint8_t)n->vendor_id;
}

static int nr_one(const struct sa_view *v, const struct sa_query *q,
		  int32_t id, unsigned pn, struct sa_table *out)
{
	const struct sa_node_record *t = (const void *)q->tmpl;
	const struct fab_node *n = fabric_node(v->f, id);
	const struct fab_port *p = &n->ports[pn];
	uint64_t mask = q->comp_mask & ~(BIT(NR_LID) | BIT(NR_NODE_DESC));
	struct sa_node_record r;

	if (!fabric_is_endport(n, pn))
		return 0;
	if ((q->comp_mask & BIT(NR_LID)) && !fabric_lid_in_range(p, be16toh(t->lid)))
		return 0;
	memset(&r, 0, sizeof(r));
	r.lid = htobe16(p->lid);
	node_info_of(n, pn, &r.node_info);
	memcpy(r.node_desc.desc, n->desc, sizeof(r.node_desc.desc));
	if ((q->comp_mask & BIT(NR_NODE_DESC)) &&
	    strncmp(r.node_desc.desc, t->node_desc.desc, sizeof(r.node_desc.desc)))
		return 0;
	if (!sa_match(nr_fields, NELEM(nr_fields), mask, &r, t))
		return 0;
	return sa_table_add(out, &r);
}

static int nr_node(const struct sa_view *v, const struct sa_query *q,
		   int32_t id, struct sa_table *out)
{
	const struct fab_node *n = fabric_node(v->f, id);
	int rc = 0;

	for (unsigned pn = 0; pn <= n->num_ports && rc == 0; pn++)
		rc = nr_one(v, q, id, pn, out);
	return rc;
}

/* One record per end port: switch port 0, every CA/router port. */
static int gen_node_record(const struct sa_view *v, const struct sa_query *q,
			   struct sa_table *out)
{
	const struct sa_node_record *t = (const void *)q->tmpl;
	struct fab_ref r;
	int rc;

	if (!has_fabric(v))
		return 0;
	if (q->comp_mask & BIT(NR_LID)) {
		rc = midx_lid_lookup(v->f, be16toh(t->lid), &r);
		return rc <= 0 ? rc : nr_one(v, q, r.node, r.port, out);
	}
	if (q->comp_mask & BIT(NR_PORT_GUID)) {
		rc = midx_guid_lookup(v->f, be64toh(t->node_info.port_guid), &r);
		return rc <= 0 ? rc : nr_one(v, q, r.node, r.port, out);
	}
	if (q->comp_mask & BIT(NR_NODE_GUID)) {
		int32_t id = fabric_find(v->f, be64toh(t->node_info.node_guid));

		return id == FAB_NONE ? 0 : nr_node(v, q, id, out);
	}
	return each_node(v, q, nr_node, out);
}

/* ------------------------------------------------------------------ */
/* PortInfoRecord (15.2.5.3)                                            */

enum { PIR_LID, PIR_PORT_NUM, PIR_OPTIONS, PIR_MKEY, PIR_GID_PREFIX,
       PIR_BASE_LID, PIR_SM_LID, PIR_CAP_MASK,
       PIR_CAP_MASK2 = 53, PIR_SPEED_EXT_ACTIVE, PIR_SPEED_EXT_SUPP,
       PIR_RESV7, PIR_SPEED_EXT_ENABLED };

static const struct sa_field pir_fields[] = {
	FLD(0, 16),	/* 0 EndportLID */
	FLD(16, 8),	/* 1 PortNum */
	FLD(24, 8),	/* 2 Options */
	FLD(32, 64),	/* 3 M_Key */
	FLD(96, 64),	/* 4 GidPrefix */
	FLD(160, 16),	/* 5 LID */
	FLD(176, 16),	/* 6 MasterSMLID */
	FLD(192, 32),	/* 7 CapabilityMask */
	FLD(224, 16),	/* 8 DiagCode */
	FLD(240, 16),	/* 9 M_KeyLeasePeriod */
	FLD(256, 8),	/* 10 LocalPortNum */
	FLD(264, 8),	/* 11 LinkWidthEnabled */
	FLD(272, 8),	/* 12 LinkWidthSupported */
	FLD(280, 8),	/* 13 LinkWidthActive */
	FLD(288, 4),	/* 14 LinkSpeedSupported */
	FLD(292, 4),	/* 15 PortState */
	FLD(296, 4),	/* 16 PortPhysicalState */
	FLD(300, 4),	/* 17 LinkDownDefaultState */
	FLD(304, 2),	/* 18 M_KeyProtectBits */
	FLD(306, 3),	/* 19 Reserved */
	FLD(309, 3),	/* 20 LMC */
	FLD(312, 4),	/* 21 LinkSpeedActive */
	FLD(316, 4),	/* 22 LinkSpeedEnabled */
	FLD(320, 4),	/* 23 NeighborMTU */
	FLD(324, 4),	/* 24 MasterSMSL */
	FLD(328, 4),	/* 25 VLCap */
	FLD(332, 4),	/* 26 InitType */
	FLD(336, 8),	/* 27 VLHighLimit */
	FLD(344, 8),	/* 28 VLArbitrationHighCap */
	FLD(352, 8),	/* 29 VLArbitrationLowCap */
	FLD(360, 4),	/* 30 InitTypeReply */
	FLD(364, 4),	/* 31 MTUCap */
	FLD(368, 3),	/* 32 VLStallCount */
	FLD(371, 5),	/* 33 HOQLife */
	FLD(376, 4),	/* 34 OperationalVLs */
	FLD(380, 1),	/* 35 PartitionEnforcementInbound */
	FLD(381, 1),	/* 36 PartitionEnforcementOutbound */
	FLD(382, 1),	/* 37 FilterRawInbound */
	FLD(383, 1),	/* 38 FilterRawOutbound */
	FLD(384, 16),	/* 39 M_KeyViolations */
	FLD(400, 16),	/* 40 P_KeyViolations */
	FLD(416, 16),	/* 41 Q_KeyViolations */
	FLD(432, 8),	/* 42 GUIDCap */
	FLD(440, 1),	/* 43 ClientReregister */
	FLD(441, 2),	/* 44 MulticastPKeyTrapSuppressionEnabled */
	FLD(443, 5),	/* 45 SubnetTimeOut */
	FLD(448, 3),	/* 46 Reserved */
	FLD(451, 5),	/* 47 RespTimeValue */
	FLD(456, 4),	/* 48 LocalPhyErrors */
	FLD(460, 4),	/* 49 OverrunErrors */
	FLD(464, 16),	/* 50 MaxCreditHint */
	FLD(480, 8),	/* 51 Reserved */
	FLD(488, 24),	/* 52 LinkRoundTripLatency */
	FLD(512, 16),	/* 53 CapabilityMask2 */
	FLD(528, 4),	/* 54 LinkSpeedExtActive */
	FLD(532, 4),	/* 55 LinkSpeedExtSupported */
	FLD(536, 3),	/* 56 Reserved */
	FLD(539, 5),	/* 57 LinkSpeedExtEnabled */
};

/* PortInfoRecord:Options bit 7: no QDR bit added for extended speeds */
#define PIR_OPT_NO_LEGACY_SPEED	0x80
#define LINK_SPEED_QDR		4

/* Template bits all set in the port's (AttributeModifier bit 31). */
static bool bits_subset(uint32_t tmpl, uint32_t port)
{
	return (tmpl & port) == tmpl;
}

static int pir_one(const struct sa_view *v, const struct sa_query *q,
		   int32_t id, unsigned pn, struct sa_table *out)
{
	const struct sa_port_info_record *t = (const void *)q->tmpl;
	const struct fab_node *n = fabric_node(v->f, id);
	const struct fab_port *p, *ep;
	bool enhanced = q->attr_mod & 0x80000000u, ext;
	uint64_t mask = q->comp_mask & ~(BIT(PIR_LID) | BIT(PIR_OPTIONS));
	struct sa_port_info_record r;

	if (pn > n->num_ports || !n->ports[pn].valid)
		return 0;
	p = &n->ports[pn];
	ep = fabric_endport_of(n, pn);
	ext = fabric_port_cap_mask(n, pn) & PI_CAP_HAS_EXT_SPEEDS;
	if ((q->comp_mask & BIT(PIR_LID)) && !fabric_lid_in_range(ep, be16toh(t->lid)))
		return 0;
	memset(&r, 0, sizeof(r));
	r.lid = htobe16(ep->lid);
	r.port_num = (uint8_t)pn;
	r.port_info = p->pi;
	/* the M_Key only to a trusted requester (15.2.5.3, as OpenSM) */
	if (q->sm_key != SA_SM_KEY_TRUSTED)
		r.port_info.mkey = 0;
	if (enhanced) {
		mask &= ~(BIT(PIR_CAP_MASK) | BIT(PIR_CAP_MASK2));
		if ((q->comp_mask & BIT(PIR_CAP_MASK)) &&
		    !bits_subset(be32toh(t->port_info.cap_mask),
				 be32toh(r.port_info.cap_mask)))
			return 0;
		if ((q->comp_mask & BIT(PIR_CAP_MASK2)) &&
		    !bits_subset(be16toh(t->port_info.cap_mask2),
				 be16toh(r.port_info.cap_mask2)))
			return 0;
	}
	if (!ext)
		mask &= ~(BIT(PIR_SPEED_EXT_ACTIVE) | BIT(PIR_SPEED_EXT_SUPP) |
			  BIT(PIR_SPEED_EXT_ENABLED));
	if (!sa_match(pir_fields, NELEM(pir_fields), mask, &r, t))
		return 0;
	if (q->comp_mask & BIT(PIR_OPTIONS))
		r.options = t->options;
	/*
	 * Clients that know only LinkSpeedActive see an extended-speed link
	 * as QDR: OpenSM adds the QDR bit unless Options bit 7 asks it not to.
	 */
	if (!(r.options & PIR_OPT_NO_LEGACY_SPEED) && ext &&
	    pi_speed_ext_active(&r.port_info)) {
		struct smp_port_info *pi = &r.port_info;

		SET_HI4(pi->speed_supported_state,
			HI4(pi->speed_supported_state) | LINK_SPEED_QDR);
		SET_HI4(pi->speed_active_enabled,
			HI4(pi->speed_active_enabled) | LINK_SPEED_QDR);
		SET_LO4(pi->speed_active_enabled,
			LO4(pi->speed_active_enabled) | LINK_SPEED_QDR);
	}
	return sa_table_add(out, &r);
}

static int pir_node(const struct sa_view *v, const struct sa_query *q,
		    int32_t id, struct sa_table *out)
{
	const struct sa_port_info_record *t = (const void *)q->tmpl;
	const struct fab_node *n = fabric_node(v->f, id);
	int rc = 0;

	if (q->comp_mask & BIT(PIR_PORT_NUM))
		return pir_one(v, q, id, t->port_num, out);
	for (unsigned pn = 0; pn <= n->num_ports && rc == 0; pn++)
		rc = pir_one(v, q, id, pn, out);
	return rc;
}

/* One record per port with PortInfo, switch ports 1..N included. */
static int gen_port_info_record(const struct sa_view *v, const struct sa_query *q,
				struct sa_table *out)
{
	const struct sa_port_info_record *t = (const void *)q->tmpl;
	struct fab_ref r;
	int rc = 0;

	if (!has_fabric(v))
		return 0;
	if (q->comp_mask & BIT(PIR_LID)) {
		rc = midx_lid_lookup(v->f, be16toh(t->lid), &r);
		return rc <= 0 ? rc : pir_node(v, q, r.node, out);
	}
	return each_node(v, q, pir_node, out);
}

/* ------------------------------------------------------------------ */
/* SwitchInfoRecord (15.2.5.4) and LinearForwardingTableRecord (15.2.5.6) */

enum { SWIR_LID };

static const struct sa_field swir_fields[] = {
	FLD(0, 16),	/* 0 LID */
	FLD(16, 16),	/* 1 Reserved */
	FLD(32, 16),	/* 2 LinearFDBCap */
	FLD(48, 16),	/* 3 RandomFDBCap */
	FLD(64, 16),	/* 4 MulticastFDBCap */
	FLD(80, 16),	/* 5 LinearFDBTop */
	FLD(96, 8),	/* 6 DefaultPort */
	FLD(104, 8),	/* 7 DefaultMulticastPrimaryPort */
	FLD(112, 8),	/* 8 DefaultMulticastNotPrimaryPort */
	FLD(120, 5),	/* 9 LifeTimeValue */
	FLD(125, 1),	/* 10 PortStateChange */
	FLD(126, 2),	/* 11 OptimizedSLtoVLMappingProgramming */
	FLD(128, 16),	/* 12 LIDsPerPort */
	FLD(144, 16),	/* 13 PartitionEnforcementCap */
	FLD(160, 1),	/* 14 InboundEnforcementCap */
	FLD(161, 1),	/* 15 OutboundEnforcementCap */
	FLD(162, 1),	/* 16 FilterRawInboundCap */
	FLD(163, 1),	/* 17 FilterRawOutboundCap */
	FLD(164, 1),	/* 18 EnhancedPort0 */
	FLD(165, 11),	/* 19 Reserved */
	FLD(176, 16),	/* 20 MulticastFDBTop */
};

enum { LFTR_LID, LFTR_BLOCK };

static const struct sa_field lftr_fields[] = {
	FLD(0, 16),	/* 0 LID */
	FLD(16, 16),	/* 1 BlockNum */
	FLD(32, 32),	/* 2 Reserved */
	FLD(64, 512),	/* 3 LinearForwardingTable */
};

/* Switch `id` when the query's LID component (if any) is one of its LIDs. */
static bool switch_lid_ok(const struct sa_view *v, const struct sa_query *q,
			  int bit, uint16_t lid, int32_t id)
{
	const struct fab_node *n = fabric_node(v->f, id);

	if (n->type != NODE_TYPE_SWITCH || !n->ports[0].valid)
		return false;
	return !(q->comp_mask & BIT(bit)) || fabric_lid_in_range(&n->ports[0], lid);
}

/*
 * Iterate the switches a LID-keyed query can match: the owner of the LID
 * when one is given, else every node.  Returns 0 / -errno from `fn`.
 */
static int each_switch(const struct sa_view *v, const struct sa_query *q,
		       int lid_bit, uint16_t lid,
		       int (*fn)(const struct sa_view *, const struct sa_query *,
				 int32_t, struct sa_table *),
		       struct sa_table *out)
{
	struct fab_ref r;
	int rc = 0;

	if (!has_fabric(v))
		return 0;
	if (q->comp_mask & BIT(lid_bit)) {
		rc = midx_lid_lookup(v->f, lid, &r);
		if (rc <= 0)
			return rc;
		return switch_lid_ok(v, q, lid_bit, lid, r.node) ?
		       fn(v, q, r.node, out) : 0;
	}
	if ((rc = midx_get(v->f)) < 0)
		return rc;
	uint32_t local[4] = { 0 }, *k = &cursor_of(q, local)[0];

	for (; *k < midx_cur.n_nodes; ++*k) {
		int32_t id = midx_cur.nodes_sorted[*k];

		if (sa_slice_over(q))
			return SA_MORE;
		if (!sa_charge(q, 1))
			return -SA_STATUS_NO_RESOURCES;
		if (switch_lid_ok(v, q, lid_bit, lid, id) &&
		    (rc = fn(v, q, id, out)) != 0)
			return rc;
	}
	return 0;
}

static int swir_one(const struct sa_view *v, const struct sa_query *q,
		    int32_t id, struct sa_table *out)
{
	const struct fab_node *n = fabric_node(v->f, id);
	const struct lft *l = lft_of(v, id);
	struct sa_switch_info_record r;

	if (!n->has_switch_info)
		return 0;
	memset(&r, 0, sizeof(r));
	r.lid = htobe16(n->ports[0].lid);
	r.switch_info = n->si;
	/*
	 * LinearFDBTop and LifeTimeValue as the SM programs them
	 * (program_switch()): the model holds SwitchInfo as discovery read
	 * it, before the Set, which a client must not see (OpenSM answers
	 * from its model updated by the Set's GetResp).
	 */
	if (l) {
		r.switch_info.lft_top = htobe16(l->top);
		r.switch_info.life_psc_osl = (uint8_t)
			((v->packet_life_time & 0x1f) << 3 |
			 (r.switch_info.life_psc_osl & 7));
	}
	if (!sa_match(swir_fields, NELEM(swir_fields),
		      q->comp_mask & ~BIT(SWIR_LID), &r, q->tmpl))
		return 0;
	return sa_table_add(out, &r);
}

static int gen_switch_info_record(const struct sa_view *v,
				  const struct sa_query *q, struct sa_table *out)
{
	const struct sa_switch_info_record *t = (const void *)q->tmpl;

	return each_switch(v, q, SWIR_LID, be16toh(t->lid), swir_one, out);
}

static int lftr_block(const struct sa_view *v, const struct sa_query *q,
		      int32_t id, const struct lft *l, unsigned block,
		      struct sa_table *out)
{
	struct sa_lft_record r;

	if (!sa_charge(q, 1))
		return -SA_STATUS_NO_RESOURCES;
	memset(&r, 0, sizeof(r));
	r.lid = htobe16(fabric_node(v->f, id)->ports[0].lid);
	r.block_num = htobe16((uint16_t)block);
	for (unsigned i = 0; i < 64; i++) {
		unsigned lid = block * 64 + i;

		r.lft[i] = lid <= l->top ? l->port[lid] : LFT_NO_PATH;
	}
	if (!sa_match(lftr_fields, NELEM(lftr_fields),
		      q->comp_mask & ~BIT(LFTR_LID), &r, q->tmpl))
		return 0;
	return sa_table_add(out, &r);
}

/* Blocks 0..LinearFDBTop/64 of one switch (BlockNum: that one). */
static int lftr_one(const struct sa_view *v, const struct sa_query *q,
		    int32_t id, struct sa_table *out)
{
	const struct sa_lft_record *t = (const void *)q->tmpl;
	const struct lft *l = lft_of(v, id);
	unsigned last, first = 0;
	int rc = 0;

	if (!l)
		return 0;
	last = l->top / 64;
	if (q->comp_mask & BIT(LFTR_BLOCK)) {
		first = be16toh(t->block_num);
		if (first > last)
			return 0;
		last = first;
	}
	for (unsigned b = first; b <= last && rc == 0; b++)
		rc = lftr_block(v, q, id, l, b, out);
	return rc;
}

static int gen_lft_record(const struct sa_view *v, const struct sa_query *q,
			  struct sa_table *out)
{
	const struct sa_lft_record *t = (const void *)q->tmpl;

	return each_switch(v, q, LFTR_LID, be16toh(t->lid), lftr_one, out);
}

/* ------------------------------------------------------------------ */
/* SMInfoRecord (15.2.5.9)                                              */

enum { SMIR_LID, SMIR_RESV, SMIR_GUID, SMIR_SM_KEY };

static const struct sa_field smir_fields[] = {
	FLD(0, 16),	/* 0 LID */
	FLD(16, 16),	/* 1 Reserved */
	FLD(32, 64),	/* 2 GUID */
	FLD(96, 64),	/* 3 SM_Key */
	FLD(160, 32),	/* 4 ActCount */
	FLD(192, 4),	/* 5 Priority */
	FLD(196, 4),	/* 6 SMState */
};

/*
 * The SMs the SA knows of: this one.  SM_Key is never disclosed (0), so
 * never compared either.
 */
static int gen_sm_info_record(const struct sa_view *v, const struct sa_query *q,
			      struct sa_table *out)
{
	const struct sa_sm_info_record *t = (const void *)q->tmpl;
	struct sa_sm_info_record r;
	struct fab_ref ref;
	int rc;

	if (!has_fabric(v) || !v->sm_lid)
		return 0;
	if (q->comp_mask & BIT(SMIR_LID)) {
		uint16_t lid = be16toh(t->lid);

		if (lid != v->sm_lid) {
			rc = midx_lid_lookup(v->f, lid, &ref);
			if (rc <= 0)
				return rc;
			if (fabric_node(v->f, ref.node)->ports[ref.port].guid !=
			    v->sm_port_guid)
				return 0;
		}
	}
	memset(&r, 0, sizeof(r));
	r.lid = htobe16(v->sm_lid);
	r.guid = htobe64(v->sm_port_guid);
	r.act_count = htobe32(v->act_count);
	r.prio_state = (uint8_t)((v->sm_priority & 0xf) << 4 | (v->sm_state & 0xf));
	if (!sa_match(smir_fields, NELEM(smir_fields),
		      q->comp_mask & ~(BIT(SMIR_LID) | BIT(SMIR_SM_KEY)), &r, t))
		return 0;
	return sa_table_add(out, &r);
}

/* ------------------------------------------------------------------ */
/* LinkRecord (15.2.5.13)                                               */

enum { LR_FROM_LID, LR_FROM_PORT, LR_TO_PORT, LR_TO_LID };

static const struct sa_field lr_fields[] = {
	FLD(0, 16),	/* 0 FromLID */
	FLD(16, 8),	/* 1 FromPort */
	FLD(24, 8),	/* 2 ToPort */
	FLD(32, 16),	/* 3 ToLID */
};

static int lr_port(const struct sa_view *v, const struct sa_query *q,
		   int32_t id, unsigned pn, struct sa_table *out)
{
	const struct sa_link_record *t = (const void *)q->tmpl;
	const struct fabric *f = v->f;
	const struct fab_node *n = fabric_node(f, id), *m;
	const struct fab_port *p, *from, *to;
	struct sa_link_record r;

	if (pn == 0 || pn > n->num_ports)
		return 0;
	p = &n->ports[pn];
	if (!p->valid || p->peer_node == FAB_NONE ||
	    (size_t)p->peer_node >= f->n_nodes)
		return 0;
	m = fabric_node(f, p->peer_node);
	if (p->peer_port > m->num_ports || !m->ports[p->peer_port].valid)
		return 0;
	from = fabric_endport_of(n, pn);
	to = fabric_endport_of(m, p->peer_port);
	if ((q->comp_mask & BIT(LR_FROM_LID)) &&
	    !fabric_lid_in_range(from, be16toh(t->from_lid)))
		return 0;
	if ((q->comp_mask & BIT(LR_TO_LID)) &&
	    !fabric_lid_in_range(to, be16toh(t->to_lid)))
		return 0;
	memset(&r, 0, sizeof(r));
	r.from_lid = htobe16(from->lid);
	r.from_port = (uint8_t)pn;
	r.to_port = p->peer_port;
	r.to_lid = htobe16(to->lid);
	if (!sa_match(lr_fields, NELEM(lr_fields),
		      q->comp_mask & ~(BIT(LR_FROM_LID) | BIT(LR_TO_LID)), &r, t))
		return 0;
	return sa_table_add(out, &r);
}

static int lr_node(const struct sa_view *v, const struct sa_query *q,
		   int32_t id, struct sa_table *out)
{
	const struct sa_link_record *t = (const void *)q->tmpl;
	const struct fab_node *n = fabric_node(v->f, id);
	int rc = 0;

	if (q->comp_mask & BIT(LR_FROM_PORT))
		return lr_port(v, q, id, t->from_port, out);
	for (unsigned pn = 1; pn <= n->num_ports && rc == 0; pn++)
		rc = lr_port(v, q, id, pn, out);
	return rc;
}

/* Every cabled port, each link seen from both ends. */
static int gen_link_record(const struct sa_view *v, const struct sa_query *q,
			   struct sa_table *out)
{
	const struct sa_link_record *t = (const void *)q->tmpl;
	struct fab_ref r;
	int rc = 0;

	if (!has_fabric(v))
		return 0;
	if (q->comp_mask & BIT(LR_FROM_LID)) {
		rc = midx_lid_lookup(v->f, be16toh(t->from_lid), &r);
		return rc <= 0 ? rc : lr_node(v, q, r.node, out);
	}
	return each_node(v, q, lr_node, out);
}

/* ------------------------------------------------------------------ */
/* GUIDInfoRecord (15.2.5.18)                                           */

enum { GIR_LID, GIR_BLOCK };

static const struct sa_field gir_fields[] = {
	FLD(0, 16),	/* 0 LID */
	FLD(16, 8),	/* 1 BlockNum */
	FLD(24, 8),	/* 2 Reserved */
	FLD(32, 32),	/* 3 Reserved */
	FLD(64, 64),	/* 4 GUID0 */
	FLD(128, 64),	/* 5 GUID1 */
	FLD(192, 64),	/* 6 GUID2 */
	FLD(256, 64),	/* 7 GUID3 */
	FLD(320, 64),	/* 8 GUID4 */
	FLD(384, 64),	/* 9 GUID5 */
	FLD(448, 64),	/* 10 GUID6 */
	FLD(512, 64),	/* 11 GUID7 */
};

/*
 * GUIDCap/8 blocks per end port (none when GUIDCap is 0, as in OpenSM);
 * the SM assigns no alias GUIDs, so only block 0 entry 0 is set: the port
 * GUID.
 */
static int gir_port(const struct sa_view *v, const struct sa_query *q,
		    int32_t id, unsigned pn, struct sa_table *out)
{
	const struct sa_guid_info_record *t = (const void *)q->tmpl;
	const struct fab_node *n = fabric_node(v->f, id);
	const struct fab_port *p = &n->ports[pn];
	unsigned blocks, first = 0, last;
	int rc = 0;

	if (!fabric_is_endport(n, pn) || !p->pi.guid_cap)
		return 0;
	if ((q->comp_mask & BIT(GIR_LID)) && !fabric_lid_in_range(p, be16toh(t->lid)))
		return 0;
	blocks = (p->pi.guid_cap + 7u) / 8;
	last = blocks - 1;
	if (q->comp_mask & BIT(GIR_BLOCK)) {
		if (t->block_num >= blocks)
			return 0;
		first = last = t->block_num;
	}
	for (unsigned b = first; b <= last && rc == 0; b++) {
		struct sa_guid_info_record r;

		memset(&r, 0, sizeof(r));
		r.lid = htobe16(p->lid);
		r.block_num = (uint8_t)b;
		if (b == 0)
			r.guid_info.guid[0] = htobe64(p->guid);
		if (sa_match(gir_fields, NELEM(gir_fields),
			     q->comp_mask & ~BIT(GIR_LID), &r, t))
			rc = sa_table_add(out, &r);
	}
	return rc;
}

static int gir_node(const struct sa_view *v, const struct sa_query *q,
		    int32_t id, struct sa_table *out)
{
	const struct fab_node *n = fabric_node(v->f, id);
	int rc = 0;

	for (unsigned pn = 0; pn <= n->num_ports && rc == 0; pn++)
		rc = gir_port(v, q, id, pn, out);
	return rc;
}

static int gen_guid_info_record(const struct sa_view *v, const struct sa_query *q,
				struct sa_table *out)
{
	const struct sa_guid_info_record *t = (const void *)q->tmpl;
	struct fab_ref r;
	int rc = 0;

	if (!has_fabric(v))
		return 0;
	if (q->comp_mask & BIT(GIR_LID)) {
		rc = midx_lid_lookup(v->f, be16toh(t->lid), &r);
		return rc <= 0 ? rc : gir_port(v, q, r.node, r.port, out);
	}
	return each_node(v, q, gir_node, out);
}

/* ------------------------------------------------------------------ */

static const struct sa_attr attrs[] = {
	{ SA_ATTR_CLASS_PORT_INFO, "ClassPortInfo",
	  sizeof(struct sa_class_port_info), cpi_fields, NELEM(cpi_fields),
	  gen_class_port_info },
	{ SA_ATTR_NODE_RECORD, "NodeRecord", sizeof(struct sa_node_record),
	  nr_fields, NELEM(nr_fields), gen_node_record },
	{ SA_ATTR_PORT_INFO_RECORD, "PortInfoRecord",
	  sizeof(struct sa_port_info_record), pir_fields, NELEM(pir_fields),
	  gen_port_info_record },
	{ SA_ATTR_SWITCH_INFO_RECORD, "SwitchInfoRecord",
	  sizeof(struct sa_switch_info_record), swir_fields,
	  NELEM(swir_fields), gen_switch_info_record },
	{ SA_ATTR_LFT_RECORD, "LinearForwardingTableRecord",
	  sizeof(struct sa_lft_record), lftr_fields, NELEM(lftr_fields),
	  gen_lft_record },
	{ SA_ATTR_SM_INFO_RECORD, "SMInfoRecord",
	  sizeof(struct sa_sm_info_record), smir_fields, NELEM(smir_fields),
	  gen_sm_info_record },
	{ SA_ATTR_LINK_RECORD, "LinkRecord", sizeof(struct sa_link_record),
	  lr_fields, NELEM(lr_fields), gen_link_record },
	{ SA_ATTR_GUID_INFO_RECORD, "GUIDInfoRecord",
	  sizeof(struct sa_guid_info_record), gir_fields, NELEM(gir_fields),
	  gen_guid_info_record },
	{ SA_ATTR_PATH_RECORD, "PathRecord", sizeof(struct sa_path_record),
	  pr_fields, NELEM(pr_fields), gen_path_record },
	/* GetMulti only; rec_size is that of the PathRecords it answers. */
	{ SA_ATTR_MULTIPATH_RECORD, "MultiPathRecord",
	  sizeof(struct sa_path_record), mpr_fields, NELEM(mpr_fields),
	  gen_multipath_record },
};

const struct sa_attr *sa_attr_find(uint16_t attr_id)
{
	for (size_t i = 0; i < NELEM(attrs); i++)
		if (attrs[i].attr_id == attr_id)
			return &attrs[i];
	return sa_tables_find(attr_id);
}
