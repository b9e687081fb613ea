/*
 * sa_records.c - the records the SA serves from the fabric model (15.2.5):
 * ClassPortInfo, NodeRecord, PortInfoRecord, SwitchInfoRecord,
 * LinearForwardingTableRecord, SMInfoRecord, LinkRecord, GUIDInfoRecord
 * and PathRecord, each with its ComponentMask table (see sa.h).
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
 *     Reversible) rather than values to compare; see the PathRecord part.
 *
 * Tables list nodes and end ports in the order OpenSM does (its GUID maps,
 * see guid_order()), so that answers of the two SAs diff line by line.
 *
 * Lookups by LID and by port GUID go through an index built once per
 * subnet model (index_get()), so a Get by LID or a PathRecord between two
 * ports costs O(1) + O(path length), not O(fabric).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sm/sa.h"
#include "sm/sa_tables.h"

#define BIT(n)		(1ull << (n))
#define FLD(off, n)	{ (uint16_t)(off), (uint16_t)(n) }
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

/* The default partition: P_Key 0x7fff/0xffff (10.9.1.2). */
#define DEFAULT_PKEY		0xffff
#define PKEY_BASE(p)		((p) & 0x7fff)

/* SA QP1 Q_Key (13.5.1) */
#define QP1_QKEY		0x80010000u

/*
 * A GetTable PathRecord over the whole subnet (no endpoint given) returns
 * N^2 records.  OpenSM builds them all; we stop at this many and answer
 * NO_RESOURCES rather than grow a table of gigabytes on a large fabric.
 */
#define PR_MAX_RECORDS		(1u << 20)

/* ------------------------------------------------------------------ */
/* The fabric model: end ports, their LIDs, and a per-model index      */

/* A port of the model: node id and port number. */
struct port_ref {
	int32_t node;			/* FAB_NONE: no such port */
	uint8_t port;
};

struct guid_slot {
	uint64_t guid;			/* 0: empty slot */
	struct port_ref ref;
};

/*
 * The index of one subnet model: LID -> end port for every LID of every
 * LMC range, port GUID -> end port.  The view is rebuilt per sweep and is
 * const, so the index lives here and is rebuilt when the model it was
 * built from changes (index_get()).  It is only ever used on the loop
 * thread.
 */
static struct sa_index {
	bool built;
	/* what it was built from */
	const struct fabric *f;
	const struct fab_node *nodes;
	size_t n_nodes;
	uint16_t max_lid;
	int32_t *hash;
	/* the index proper */
	struct port_ref *by_lid;	/* max_lid + 1 entries */
	struct guid_slot *by_guid;
	size_t guid_size;		/* power of two */
	/* the orders OpenSM lists nodes and end ports in (see guid_order()) */
	int32_t *nodes_sorted;		/* n_nodes */
	struct port_ref *ends;		/* n_ends */
	size_t n_ends;
} idx;

static bool has_fabric(const struct sa_view *v)
{
	return v->f && v->f->n_nodes;
}

/* Does port `pn` of `n` carry a LID (CA/router port, switch port 0)? */
static bool is_endport(const struct fab_node *n, unsigned pn)
{
	if (pn > n->num_ports || !n->ports[pn].valid)
		return false;
	return n->type == NODE_TYPE_SWITCH ? pn == 0 : pn != 0;
}

/* The end port that gives port `pn` of `n` its LID: switch port 0. */
static const struct fab_port *endport_of(const struct fab_node *n, unsigned pn)
{
	return &n->ports[n->type == NODE_TYPE_SWITCH ? 0 : pn];
}

static uint16_t lid_range_top(const struct fab_port *p)
{
	return (uint16_t)(p->lid + (1u << (p->lmc & 7)) - 1);
}

/* Is `lid` in the LMC range of end port `p`? */
static bool lid_in_range(const struct fab_port *p, uint16_t lid)
{
	return p->lid && lid >= p->lid && lid <= lid_range_top(p);
}

static void index_free(void)
{
	free(idx.by_lid);
	free(idx.by_guid);
	free(idx.nodes_sorted);
	free(idx.ends);
	memset(&idx, 0, sizeof(idx));
}

/*
 * OpenSM keeps nodes and ports in maps keyed by the GUID in network order
 * and compared as a host integer, and answers tables in that order; we
 * list them in the same order so that answers compare line by line.
 */
static uint64_t guid_order(uint64_t guid)
{
	return htobe64(guid);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_node(const void *a, const void *b)
{
	const struct fab_node *x = &idx.f->nodes[*(const int32_t *)a];
	const struct fab_node *y = &idx.f->nodes[*(const int32_t *)b];

	return cmp_u64(guid_order(x->guid), guid_order(y->guid));
}

static int cmp_end(const void *a, const void *b)
{
	const struct port_ref *x = a, *y = b;

	return cmp_u64(guid_order(idx.f->nodes[x->node].ports[x->port].guid),
		       guid_order(idx.f->nodes[y->node].ports[y->port].guid));
}

static bool index_current(const struct fabric *f)
{
	return idx.built && idx.f == f && idx.nodes == f->nodes &&
	       idx.n_nodes == f->n_nodes && idx.max_lid == f->max_lid &&
	       idx.hash == f->hash;
}

static void guid_insert(uint64_t guid, int32_t node, uint8_t port)
{
	size_t mask = idx.guid_size - 1;

	for (size_t i = guid_hash(guid) & mask;; i = (i + 1) & mask) {
		if (idx.by_guid[i].guid == guid)
			return;		/* duplicate GUID: first one wins */
		if (!idx.by_guid[i].guid) {
			idx.by_guid[i].guid = guid;
			idx.by_guid[i].ref = (struct port_ref){ node, port };
			return;
		}
	}
}

static int index_build(const struct fabric *f)
{
	size_t ends = 0;

	index_free();
	for (size_t i = 0; i < f->n_nodes; i++)
		for (unsigned pn = 0; pn <= f->nodes[i].num_ports; pn++)
			ends += is_endport(&f->nodes[i], pn);
	idx.guid_size = 16;
	while (idx.guid_size < 2 * ends)
		idx.guid_size *= 2;
	idx.by_lid = malloc(((size_t)f->max_lid + 1) * sizeof(*idx.by_lid));
	idx.by_guid = calloc(idx.guid_size, sizeof(*idx.by_guid));
	idx.nodes_sorted = malloc((f->n_nodes + 1) * sizeof(*idx.nodes_sorted));
	idx.ends = malloc((ends + 1) * sizeof(*idx.ends));
	if (!idx.by_lid || !idx.by_guid || !idx.nodes_sorted || !idx.ends) {
		index_free();
		return -ENOMEM;
	}
	for (size_t l = 0; l <= f->max_lid; l++)
		idx.by_lid[l] = (struct port_ref){ FAB_NONE, 0 };
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		idx.nodes_sorted[i] = (int32_t)i;
		for (unsigned pn = 0; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (!is_endport(n, pn))
				continue;
			idx.ends[idx.n_ends++] = (struct port_ref){ (int32_t)i,
								    (uint8_t)pn };
			if (p->guid)
				guid_insert(p->guid, (int32_t)i, (uint8_t)pn);
			for (uint32_t l = p->lid; p->lid && l <= lid_range_top(p) &&
			     l <= f->max_lid; l++)
				if (idx.by_lid[l].node == FAB_NONE)
					idx.by_lid[l] = (struct port_ref){
						(int32_t)i, (uint8_t)pn };
		}
	}
	idx.f = f;
	idx.nodes = f->nodes;
	idx.n_nodes = f->n_nodes;
	idx.max_lid = f->max_lid;
	idx.hash = f->hash;
	qsort(idx.nodes_sorted, f->n_nodes, sizeof(*idx.nodes_sorted), cmp_node);
	qsort(idx.ends, idx.n_ends, sizeof(*idx.ends), cmp_end);
	idx.built = true;
	return 0;
}

/*
 * The index of the view's model, built on first use after a change.  The
 * model is recognised by its arrays and sizes; a model that reuses the
 * freed arrays of the last one with the same sizes is caught by the
 * lookups, which check every answer against the model and rebuild once
 * when it does not hold.
 */
static int index_get(const struct sa_view *v)
{
	if (index_current(v->f))
		return 0;
	return index_build(v->f);
}

static bool lid_ref_ok(const struct fabric *f, uint16_t lid, struct port_ref r)
{
	return r.node != FAB_NONE && (size_t)r.node < f->n_nodes &&
	       is_endport(&f->nodes[r.node], r.port) &&
	       lid_in_range(&f->nodes[r.node].ports[r.port], lid);
}

/* The end port that owns `lid`: 1 (found, *out set), 0, or -ENOMEM. */
static int lid_lookup(const struct sa_view *v, uint16_t lid, struct port_ref *out)
{
	const struct fabric *f = v->f;
	int rc;

	if (!has_fabric(v) || !lid || lid > f->max_lid)
		return 0;
	for (int tries = 0; tries < 2; tries++) {
		if ((rc = index_get(v)) < 0)
			return rc;
		struct port_ref r = idx.by_lid[lid];

		if (r.node == FAB_NONE)
			return 0;
		if (lid_ref_ok(f, lid, r)) {
			*out = r;
			return 1;
		}
		idx.built = false;	/* stale: rebuild and look again */
	}
	return 0;
}

/* The end port whose port GUID is `guid`: 1, 0 or -ENOMEM. */
static int guid_lookup(const struct sa_view *v, uint64_t guid, struct port_ref *out)
{
	const struct fabric *f = v->f;
	int rc;

	if (!has_fabric(v) || !guid)
		return 0;
	for (int tries = 0; tries < 2; tries++) {
		size_t mask;
		bool stale = false;

		if ((rc = index_get(v)) < 0)
			return rc;
		mask = idx.guid_size - 1;
		for (size_t i = guid_hash(guid) & mask; idx.by_guid[i].guid;
		     i = (i + 1) & mask) {
			struct port_ref r = idx.by_guid[i].ref;

			if (idx.by_guid[i].guid != guid)
				continue;
			if ((size_t)r.node < f->n_nodes &&
			    is_endport(&f->nodes[r.node], r.port) &&
			    f->nodes[r.node].ports[r.port].guid == guid) {
				*out = r;
				return 1;
			}
			stale = true;
			break;
		}
		if (!stale)
			return 0;
		idx.built = false;
	}
	return 0;
}

/*
 * Call fn for every node of the model, in OpenSM's order, until it fails.
 */
static int each_node(const struct sa_view *v, const struct sa_query *q,
		     int (*fn)(const struct sa_view *, const struct sa_query *,
			       int32_t, struct sa_table *),
		     struct sa_table *out)
{
	int rc;

	if ((rc = index_get(v)) < 0)
		return rc;
	for (size_t k = 0; k < idx.n_nodes && rc == 0; k++)
		rc = fn(v, q, idx.nodes_sorted[k], out);
	return rc;
}

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
	r.cap_mask = htobe16((uint16_t)SA_CAP_MASK);
	r.cap_mask2_resp_time = htobe32((uint32_t)SA_CAP_MASK2 << 5 |
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
 * and LocalPortNum are that port's.  The model keeps no PartitionCap.
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

	if (!is_endport(n, pn))
		return 0;
	if ((q->comp_mask & BIT(NR_LID)) && !lid_in_range(p, be16toh(t->lid)))
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
	struct port_ref r;
	int rc;

	if (!has_fabric(v))
		return 0;
	if (q->comp_mask & BIT(NR_LID)) {
		rc = lid_lookup(v, be16toh(t->lid), &r);
		return rc <= 0 ? rc : nr_one(v, q, r.node, r.port, out);
	}
	if (q->comp_mask & BIT(NR_PORT_GUID)) {
		rc = guid_lookup(v, be64toh(t->node_info.port_guid), &r);
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
	ep = endport_of(n, pn);
	ext = fabric_port_cap_mask(n, pn) & PI_CAP_HAS_EXT_SPEEDS;
	if ((q->comp_mask & BIT(PIR_LID)) && !lid_in_range(ep, be16toh(t->lid)))
		return 0;
	memset(&r, 0, sizeof(r));
	r.lid = htobe16(ep->lid);
	r.port_num = (uint8_t)pn;
	r.port_info = p->pi;
	r.port_info.mkey = 0;		/* never disclosed (15.2.5.3) */
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
	struct port_ref r;
	int rc = 0;

	if (!has_fabric(v))
		return 0;
	if (q->comp_mask & BIT(PIR_LID)) {
		rc = lid_lookup(v, be16toh(t->lid), &r);
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

/* The LFT the SM computed for switch `id`, or NULL. */
static const struct lft *lft_of(const struct sa_view *v, int32_t id)
{
	const struct routing_result *rr = v->routes;

	if (!rr || !rr->lft || (size_t)id >= rr->n_nodes ||
	    rr->n_nodes != v->f->n_nodes || !rr->lft[id].port)
		return NULL;
	return &rr->lft[id];
}

/* Switch `id` when the query's LID component (if any) is one of its LIDs. */
static bool switch_lid_ok(const struct sa_view *v, const struct sa_query *q,
			  int bit, uint16_t lid, int32_t id)
{
	const struct fab_node *n = fabric_node(v->f, id);

	if (n->type != NODE_TYPE_SWITCH || !n->ports[0].valid)
		return false;
	return !(q->comp_mask & BIT(bit)) || lid_in_range(&n->ports[0], lid);
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
	struct port_ref r;
	int rc = 0;

	if (!has_fabric(v))
		return 0;
	if (q->comp_mask & BIT(lid_bit)) {
		rc = lid_lookup(v, lid, &r);
		if (rc <= 0)
			return rc;
		return switch_lid_ok(v, q, lid_bit, lid, r.node) ?
		       fn(v, q, r.node, out) : 0;
	}
	if ((rc = index_get(v)) < 0)
		return rc;
	for (size_t k = 0; k < idx.n_nodes && rc == 0; k++)
		if (switch_lid_ok(v, q, lid_bit, lid, idx.nodes_sorted[k]))
			rc = fn(v, q, idx.nodes_sorted[k], out);
	return rc;
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
	if (l)			/* LinearFDBTop as the SM programs it */
		r.switch_info.lft_top = htobe16(l->top);
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
	struct port_ref ref;
	int rc;

	if (!has_fabric(v) || !v->sm_lid)
		return 0;
	if (q->comp_mask & BIT(SMIR_LID)) {
		uint16_t lid = be16toh(t->lid);

		if (lid != v->sm_lid) {
			rc = lid_lookup(v, lid, &ref);
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
	from = endport_of(n, pn);
	to = endport_of(m, p->peer_port);
	if ((q->comp_mask & BIT(LR_FROM_LID)) &&
	    !lid_in_range(from, be16toh(t->from_lid)))
		return 0;
	if ((q->comp_mask & BIT(LR_TO_LID)) &&
	    !lid_in_range(to, be16toh(t->to_lid)))
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
	struct port_ref r;
	int rc = 0;

	if (!has_fabric(v))
		return 0;
	if (q->comp_mask & BIT(LR_FROM_LID)) {
		rc = lid_lookup(v, be16toh(t->from_lid), &r);
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

	if (!is_endport(n, pn) || !p->pi.guid_cap)
		return 0;
	if ((q->comp_mask & BIT(GIR_LID)) && !lid_in_range(p, be16toh(t->lid)))
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
	struct port_ref r;
	int rc = 0;

	if (!has_fabric(v))
		return 0;
	if (q->comp_mask & BIT(GIR_LID)) {
		rc = lid_lookup(v, be16toh(t->lid), &r);
		return rc <= 0 ? rc : gir_port(v, q, r.node, r.port, out);
	}
	return each_node(v, q, gir_node, out);
}

/* ------------------------------------------------------------------ */
/* PathRecord (15.2.5.16)                                               */

enum { PR_SID_MSB, PR_SID_LSB, PR_DGID, PR_SGID, PR_DLID, PR_SLID, PR_RAW,
       PR_RESV0, PR_FLOW_LABEL, PR_HOP_LIMIT, PR_TCLASS, PR_REVERSIBLE,
       PR_NUMB_PATH, PR_PKEY, PR_QOS_CLASS, PR_SL, PR_MTU_SEL, PR_MTU,
       PR_RATE_SEL, PR_RATE, PR_PKT_LIFE_SEL, PR_PKT_LIFE, PR_PREFERENCE };

static const struct sa_field pr_fields[] = {
	FLD(0, 32),	/* 0 ServiceID (high 32 bits) */
	FLD(32, 32),	/* 1 ServiceID (low 32 bits) */
	FLD(64, 128),	/* 2 DGID */
	FLD(192, 128),	/* 3 SGID */
	FLD(320, 16),	/* 4 DLID */
	FLD(336, 16),	/* 5 SLID */
	FLD(352, 1),	/* 6 RawTraffic */
	FLD(353, 3),	/* 7 Reserved */
	FLD(356, 20),	/* 8 FlowLabel */
	FLD(376, 8),	/* 9 HopLimit */
	FLD(384, 8),	/* 10 TClass */
	FLD(392, 1),	/* 11 Reversible */
	FLD(393, 7),	/* 12 NumbPath */
	FLD(400, 16),	/* 13 P_Key */
	FLD(416, 12),	/* 14 QoSClass */
	FLD(428, 4),	/* 15 SL */
	FLD(432, 2),	/* 16 MTUSelector */
	FLD(434, 6),	/* 17 MTU */
	FLD(440, 2),	/* 18 RateSelector */
	FLD(442, 6),	/* 19 Rate */
	FLD(448, 2),	/* 20 PacketLifeTimeSelector */
	FLD(450, 6),	/* 21 PacketLifeTime */
	FLD(456, 8),	/* 22 Preference */
	FLD(464, 48),	/* 23 Reserved */
};

/* Selectors (15.2.5.16, table 205 and later errata) */
enum { SEL_GT = 0, SEL_LT = 1, SEL_EQ = 2, SEL_BEST = 3 };

#define MTU_MIN		1	/* 256 */
#define MTU_MAX		5	/* 4096 */
#define PR_REVERSIBLE_BIT 0x80

/*
 * Path rates by bandwidth: code -> "equivalent" rate in 0.25 Gb/s, the
 * nominal rate for 8b/10b links and 1.25 x nominal for 64b/66b ones, so
 * that comparisons follow the data each code really carries (OpenSM's
 * ordered_rates gives the same order).  0: not a rate.
 */
static const uint16_t rate_equiv[] = {
	[2] = 10,	/* 2.5 */
	[3] = 40,	/* 10 */
	[4] = 120,	/* 30 */
	[5] = 20,	/* 5 */
	[6] = 80,	/* 20 */
	[7] = 160,	/* 40 */
	[8] = 240,	/* 60 */
	[9] = 320,	/* 80 */
	[10] = 480,	/* 120 */
	[11] = 70,	/* 14 (FDR 1x) */
	[12] = 280,	/* 56 */
	[13] = 560,	/* 112 */
	[14] = 840,	/* 168 */
	[15] = 125,	/* 25 (EDR 1x) */
	[16] = 500,	/* 100 */
	[17] = 1000,	/* 200 */
	[18] = 1500,	/* 300 */
	[19] = 140,	/* 28 */
	[20] = 250,	/* 50 */
	[21] = 2000,	/* 400 */
	[22] = 3000,	/* 600 */
	[23] = 4000,	/* 800 */
	[24] = 6000,	/* 1200 */
};

static bool rate_valid(unsigned code)
{
	return code < NELEM(rate_equiv) && rate_equiv[code];
}

/* <0, 0, >0 as rate code a carries less, as much, more than b. */
static int rate_cmp(unsigned a, unsigned b)
{
	return (int)rate_equiv[a] - (int)rate_equiv[b];
}

/* The next lower rate than `code`, or 0. */
static unsigned rate_below(unsigned code)
{
	unsigned best = 0;

	for (unsigned c = 2; c < NELEM(rate_equiv); c++)
		if (rate_equiv[c] && rate_equiv[c] < rate_equiv[code] &&
		    (!best || rate_equiv[c] > rate_equiv[best]))
			best = c;
	return best;
}

/*
 * The rate code of a port's active link: lanes (LinkWidthActive) times
 * the lane rate, extended speeds when the port has them (FDR 14, EDR 25,
 * HDR 50, NDR 100 Gb/s per lane), else LinkSpeedActive (2.5, 5, 10).
 * Unknown widths count as 1x and unknown speeds as 2.5 Gb/s, as OpenSM.
 */
static uint8_t port_rate(const struct fab_node *n, unsigned pn)
{
	static const struct { uint16_t gbps10; uint8_t code; } codes[] = {
		{ 25, 2 }, { 50, 5 }, { 100, 3 }, { 200, 6 }, { 300, 4 },
		{ 400, 7 }, { 600, 8 }, { 800, 9 }, { 1200, 10 },
		{ 140, 11 }, { 280, 19 }, { 560, 12 }, { 1120, 13 },
		{ 1680, 14 }, { 250, 15 }, { 500, 20 }, { 1000, 16 },
		{ 2000, 17 }, { 3000, 18 }, { 4000, 21 }, { 6000, 22 },
		{ 8000, 23 }, { 12000, 24 },
	};
	const struct smp_port_info *pi = &n->ports[pn].pi;
	unsigned lanes, lane = 0, total;

	switch (pi->link_width_active) {
	case 2:  lanes = 4; break;
	case 4:  lanes = 8; break;
	case 8:  lanes = 12; break;
	case 16: lanes = 2; break;
	default: lanes = 1; break;
	}
	if (fabric_port_cap_mask(n, pn) & PI_CAP_HAS_EXT_SPEEDS) {
		switch (pi_speed_ext_active(pi)) {
		case 1: lane = 140; break;
		case 2: lane = 250; break;
		case 4: lane = 500; break;
		case 8: lane = 1000; break;
		}
	}
	if (!lane) {
		switch (pi_speed_active(pi)) {
		case 2:  lane = 50; break;
		case 4:  lane = 100; break;
		case 1:  lane = 25; break;
		default: return 2;
		}
	}
	total = lane * lanes;
	for (size_t i = 0; i < NELEM(codes); i++)
		if (codes[i].gbps10 == total)
			return codes[i].code;
	return 2;
}

/* What the generator works from: the query, decoded once. */
struct pr_ctx {
	const struct sa_view *v;
	const struct sa_query *q;
	const struct sa_path_record *t;
	struct sa_table *out;
	unsigned iterations;		/* records per port pair */
	bool get;			/* SubnAdmGet: one record in all */
};

struct path_parms {
	uint8_t mtu, rate, pkt_life;
};

/* Fold port `pn` of node `id` into the path's MTU and rate. */
static bool path_port(const struct sa_view *v, int32_t id, unsigned pn,
		      struct path_parms *pp)
{
	const struct fab_node *n = fabric_node(v->f, id);
	uint8_t rate;

	if (pn > n->num_ports || !n->ports[pn].valid)
		return false;
	if (pi_mtu_cap(&n->ports[pn].pi) < pp->mtu)
		pp->mtu = (uint8_t)pi_mtu_cap(&n->ports[pn].pi);
	rate = port_rate(n, pn);
	if (rate_cmp(rate, pp->rate) < 0)
		pp->rate = rate;
	return true;
}

/* Where switch `id` forwards `lid`, or -1. */
static int lft_out(const struct sa_view *v, int32_t id, uint16_t lid)
{
	const struct lft *l = lft_of(v, id);

	if (!l || lid > l->top || l->port[lid] == LFT_NO_PATH ||
	    l->port[lid] > fabric_node(v->f, id)->num_ports)
		return -1;
	return l->port[lid];
}

/*
 * Walk from end port `src` to `dlid` (a LID of end port `dst`) the way
 * packets go: out of the source (a switch source leaves through its LFT
 * port), through each switch's LFT, into the destination (a switch
 * destination is its port 0).  MTU and rate are the least MTUCap and the
 * slowest link rate of every port passed, both ends of each link, as
 * OpenSM computes them.  False when the LFTs do not lead there.
 */
static bool path_walk(const struct sa_view *v, struct port_ref src,
		      struct port_ref dst, uint16_t dlid, struct path_parms *pp)
{
	const struct fabric *f = v->f;
	struct port_ref cur = src;
	int out;

	pp->mtu = MTU_MAX;
	pp->rate = 24;
	if (!path_port(v, src.node, src.port, pp))
		return false;
	if (fabric_node(f, src.node)->type == NODE_TYPE_SWITCH) {
		if ((out = lft_out(v, src.node, dlid)) < 0)
			return false;
		cur.port = (uint8_t)out;
	}
	for (unsigned hops = 0; cur.node != dst.node || cur.port != dst.port; hops++) {
		const struct fab_port *p = &fabric_node(f, cur.node)->ports[cur.port];
		struct port_ref in = { p->peer_node, p->peer_port };

		if (hops > SMP_MAX_HOPS || !cur.port || in.node == FAB_NONE ||
		    (size_t)in.node >= f->n_nodes)
			return false;
		if (in.node == dst.node && in.port == dst.port) {
			cur = in;
			break;
		}
		if (fabric_node(f, in.node)->type != NODE_TYPE_SWITCH ||
		    !path_port(v, in.node, in.port, pp) ||
		    (out = lft_out(v, in.node, dlid)) < 0)
			return false;
		cur = (struct port_ref){ in.node, (uint8_t)out };
		if (!path_port(v, cur.node, cur.port, pp))
			return false;
	}
	return path_port(v, cur.node, cur.port, pp);
}

/* The MTU, rate and PacketLifeTime selectors, when both parts are given. */
static bool path_select(const struct pr_ctx *c, struct path_parms *pp)
{
	uint64_t m = c->q->comp_mask;
	const struct sa_path_record *t = c->t;

	if ((m & BIT(PR_MTU_SEL)) && (m & BIT(PR_MTU))) {
		unsigned want = t->mtu & 0x3f;

		switch (t->mtu >> 6) {
		case SEL_GT:
			if (pp->mtu <= want)
				return false;
			break;
		case SEL_LT:
			if (pp->mtu >= want) {
				if (want <= MTU_MIN)
					return false;
				pp->mtu = (uint8_t)(want - 1);
			}
			break;
		case SEL_EQ:
			if (pp->mtu < want)
				return false;
			pp->mtu = (uint8_t)want;
			break;
		}
	}
	if ((m & BIT(PR_RATE_SEL)) && (m & BIT(PR_RATE))) {
		unsigned want = t->rate & 0x3f;

		switch (t->rate >> 6) {
		case SEL_GT:
			if (rate_cmp(pp->rate, want) <= 0)
				return false;
			break;
		case SEL_LT:
			if (rate_cmp(pp->rate, want) >= 0) {
				unsigned below = rate_below(want);

				if (!below)
					return false;
				pp->rate = (uint8_t)below;
			}
			break;
		case SEL_EQ:		/* OpenSM: no rounding down here */
			if (pp->rate != want)
				return false;
			break;
		}
	}
	if ((m & BIT(PR_PKT_LIFE_SEL)) && (m & BIT(PR_PKT_LIFE))) {
		unsigned want = t->pkt_life & 0x3f;

		switch (t->pkt_life >> 6) {
		case SEL_GT:
			if (pp->pkt_life <= want)
				return false;
			break;
		case SEL_LT:
			if (pp->pkt_life >= want) {
				if (want <= 1)
					return false;
				pp->pkt_life = (uint8_t)(want - 1);
			}
			break;
		case SEL_EQ:
			if (pp->pkt_life < want)
				return false;
			pp->pkt_life = (uint8_t)want;
			break;
		}
	}
	return true;
}

/* Path parameters from `src` to `dlid` on `dst`, or false: no path. */
static bool path_parms(const struct pr_ctx *c, struct port_ref src,
		       struct port_ref dst, uint16_t dlid, struct path_parms *pp)
{
	if (!path_walk(c->v, src, dst, dlid, pp))
		return false;
	/* 0 on a loopback path (15.2.5.16, PacketLifeTime) */
	pp->pkt_life = src.node == dst.node && src.port == dst.port ? 0 :
		       c->v->subnet_timeout & 0x3f;
	return path_select(c, pp);
}

/*
 * The P_Key of the path: the requested one when both ends share it, else
 * the default partition's; 0 for raw traffic.  Partitions other than the
 * default one are not modelled yet: every port is a full member of it.
 */
static bool path_pkey(const struct pr_ctx *c, uint16_t *pkey)
{
	uint64_t m = c->q->comp_mask;

	if ((m & BIT(PR_RAW)) && (be32toh(c->t->hop_flow_raw) & 0x80000000u)) {
		*pkey = 0;
		return true;
	}
	if (m & BIT(PR_PKEY)) {
		*pkey = be16toh(c->t->pkey);
		return PKEY_BASE(*pkey) == PKEY_BASE(DEFAULT_PKEY);
	}
	*pkey = DEFAULT_PKEY;
	return true;
}

static void port_gid(const struct sa_view *v, struct port_ref r, uint8_t gid[16])
{
	uint64_t prefix = htobe64(v->subnet_prefix);
	uint64_t guid = htobe64(fabric_node(v->f, r.node)->ports[r.port].guid);

	memcpy(gid, &prefix, 8);
	memcpy(gid + 8, &guid, 8);
}

/* The components the record must still agree on once it is built (the
 * P_Key is path_pkey()'s: raw traffic answers 0 whatever was asked). */
#define PR_MATCHED	(BIT(PR_DLID) | BIT(PR_SLID) | BIT(PR_SL))

/* One record for (slid, dlid), when the path exists and qualifies. */
static int pr_lid_pair(struct pr_ctx *c, struct port_ref src,
		       struct port_ref dst, uint16_t slid, uint16_t dlid,
		       uint8_t preference, bool *added)
{
	const struct sa_query *q = c->q;
	struct path_parms fwd, rev;
	struct sa_path_record r;
	bool reversible;
	uint16_t pkey;

	*added = false;
	if (!path_parms(c, src, dst, dlid, &fwd) || !path_pkey(c, &pkey))
		return 0;
	reversible = path_parms(c, dst, src, slid, &rev);
	if ((q->comp_mask & BIT(PR_REVERSIBLE)) &&
	    (c->t->num_path & PR_REVERSIBLE_BIT) && !reversible)
		return 0;
	memset(&r, 0, sizeof(r));
	port_gid(c->v, dst, r.dgid);
	port_gid(c->v, src, r.sgid);
	r.dlid = htobe16(dlid);
	r.slid = htobe16(slid);
	r.num_path = reversible ? PR_REVERSIBLE_BIT : 0;
	r.pkey = htobe16(pkey);
	if (q->comp_mask & BIT(PR_SL))
		r.qos_class_sl = htobe16(be16toh(c->t->qos_class_sl) & 0xf);
	r.mtu = (uint8_t)(SEL_EQ << 6 | fwd.mtu);
	r.rate = (uint8_t)(SEL_EQ << 6 | fwd.rate);
	r.pkt_life = (uint8_t)(SEL_EQ << 6 | fwd.pkt_life);
	r.preference = preference;
	if (!sa_match(pr_fields, NELEM(pr_fields), q->comp_mask & PR_MATCHED,
		      &r, c->t))
		return 0;
	if (c->out->count >= PR_MAX_RECORDS)
		return -SA_STATUS_NO_RESOURCES;
	*added = true;
	return sa_table_add(c->out, &r);
}

/*
 * The LID range of end port `r` a query may use: its whole LMC range, or
 * the one LID the query names (which must be one of them).
 */
static bool pr_lids(const struct pr_ctx *c, struct port_ref r, int bit,
		    uint16_t lid, uint16_t *lo, uint16_t *hi)
{
	const struct fab_port *p = &fabric_node(c->v->f, r.node)->ports[r.port];

	if (!p->lid)
		return false;
	if (c->q->comp_mask & BIT(bit)) {
		if (!lid_in_range(p, lid))
			return false;
		*lo = *hi = lid;
	} else {
		*lo = p->lid;
		*hi = lid_range_top(p);
	}
	return true;
}

/*
 * The paths between two end ports, best first, as OpenSM orders them:
 * first the LID pairs that step through both LMC ranges together
 * (preference 0: disjoint from each other), then every other pair
 * (preference 2), at most `iterations` of them.
 */
static int pr_port_pair(struct pr_ctx *c, struct port_ref src,
			struct port_ref dst)
{
	uint16_t slo, shi, dlo, dhi;
	unsigned n = 0;
	bool added;
	int rc;

	if (!pr_lids(c, src, PR_SLID, be16toh(c->t->slid), &slo, &shi) ||
	    !pr_lids(c, dst, PR_DLID, be16toh(c->t->dlid), &dlo, &dhi))
		return 0;
	for (uint32_t s = slo, d = dlo; n < c->iterations && s <= shi && d <= dhi;
	     s++, d++) {
		if ((rc = pr_lid_pair(c, src, dst, (uint16_t)s, (uint16_t)d, 0,
				      &added)) < 0)
			return rc;
		n += added;
	}
	for (uint32_t s = slo; s <= shi && n < c->iterations; s++) {
		for (uint32_t d = dlo; d <= dhi && n < c->iterations; d++) {
			if (s - slo == d - dlo)
				continue;	/* a preference 0 pair */
			if ((rc = pr_lid_pair(c, src, dst, (uint16_t)s,
					      (uint16_t)d, 2, &added)) < 0)
				return rc;
			n += added;
		}
	}
	return 0;
}

/* Is the GID one of this subnet's (link-local fe80::/10 or our prefix)? */
static bool gid_local(const struct sa_view *v, const uint8_t gid[16])
{
	uint64_t prefix;

	memcpy(&prefix, gid, 8);
	if (gid[0] == 0xfe && (gid[1] & 0xc0) == 0x80)
		return true;
	return be64toh(prefix) == v->subnet_prefix;
}

/*
 * One end of the path from its GID or LID component: 1 (found), 0 (the
 * query names no port: any), or <0: -ENOENT (names one that is not here:
 * no records), -ENOMEM.
 */
static int pr_endpoint(const struct pr_ctx *c, int gid_bit, const uint8_t gid[16],
		       int lid_bit, uint16_t lid, struct port_ref *r)
{
	uint64_t guid;
	int rc;

	if (c->q->comp_mask & BIT(gid_bit)) {
		if (gid[0] == 0xff || !gid_local(c->v, gid))
			return -ENOENT;	/* multicast groups, routers: none */
		memcpy(&guid, gid + 8, 8);
		rc = guid_lookup(c->v, be64toh(guid), r);
	} else if (c->q->comp_mask & BIT(lid_bit)) {
		rc = lid_lookup(c->v, lid, r);
	} else {
		return 0;
	}
	return rc < 0 ? rc : rc ? 1 : -ENOENT;
}

/* A Get is answered by its first record. */
static bool pr_done(const struct pr_ctx *c)
{
	return c->get && c->out->count;
}

/* 0 when the selector components carry values the SA cannot compare. */
static bool pr_selectors_valid(const struct sa_query *q,
			       const struct sa_path_record *t)
{
	if ((q->comp_mask & BIT(PR_MTU_SEL)) && (q->comp_mask & BIT(PR_MTU))) {
		unsigned mtu = t->mtu & 0x3f;

		if (mtu < MTU_MIN || mtu > MTU_MAX)
			return false;
	}
	if ((q->comp_mask & BIT(PR_RATE_SEL)) && (q->comp_mask & BIT(PR_RATE)) &&
	    !rate_valid(t->rate & 0x3f))
		return false;
	return true;
}

/*
 * PathRecord, as OpenSM 3.3.23 answers it.  The ends come from SGID/DGID
 * (this subnet's prefix or link-local) or SLID/DLID; an end left open is
 * every end port, switches included.  Get returns the first path found
 * (NumbPath 1, 1.2 erratum); GetTable returns up to NumbPath paths per
 * port pair when NumbPath is given, else every LID pair of the two LMC
 * ranges.  MTU, Rate and PacketLifeTime selectors take effect only with
 * their value component and adjust the answer (less than: the next lower
 * value); an MTU or Rate value that is not one is REQ_INVALID.  ServiceID,
 * FlowLabel, HopLimit, TClass, QoSClass and Preference in the request are
 * ignored: every answer has them 0, HopLimit too (no router is crossed).
 */
static int gen_path_record(const struct sa_view *v, const struct sa_query *q,
			   struct sa_table *out)
{
	const struct sa_path_record *t = (const void *)q->tmpl;
	struct pr_ctx c = { .v = v, .q = q, .t = t, .out = out,
			    .get = q->method == MAD_METHOD_GET };
	struct port_ref src, dst;
	int has_src, has_dst, rc = 0;

	if (!pr_selectors_valid(q, t))
		return -SA_STATUS_REQ_INVALID;
	if (!has_fabric(v))
		return 0;
	if (c.get)
		c.iterations = 1;
	else if (q->comp_mask & BIT(PR_NUMB_PATH))
		c.iterations = t->num_path & 0x7f;
	else
		c.iterations = ~0u;
	if (!c.iterations)
		return 0;
	has_src = pr_endpoint(&c, PR_SGID, t->sgid, PR_SLID, be16toh(t->slid), &src);
	has_dst = pr_endpoint(&c, PR_DGID, t->dgid, PR_DLID, be16toh(t->dlid), &dst);
	if (has_src == -ENOMEM || has_dst == -ENOMEM)
		return -ENOMEM;
	if (has_src < 0 || has_dst < 0)
		return 0;
	if (has_src && has_dst)
		return pr_port_pair(&c, src, dst);
	/*
	 * An open end is every end port (in OpenSM's order), destinations
	 * outermost.
	 */
	if ((rc = index_get(v)) < 0)
		return rc;
	for (size_t j = 0; rc == 0 && !pr_done(&c) &&
	     j < (has_dst ? 1 : idx.n_ends); j++) {
		struct port_ref b = has_dst ? dst : idx.ends[j];

		for (size_t i = 0; rc == 0 && !pr_done(&c) &&
		     i < (has_src ? 1 : idx.n_ends); i++)
			rc = pr_port_pair(&c, has_src ? src : idx.ends[i], b);
	}
	return rc;
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
};

const struct sa_attr *sa_attr_find(uint16_t attr_id)
{
	for (size_t i = 0; i < NELEM(attrs); i++)
		if (attrs[i].attr_id == attr_id)
			return &attrs[i];
	return sa_tables_find(attr_id);
}
