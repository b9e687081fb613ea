/*
 * mcmember.c - MCMemberRecord (15.2.5.17): multicast joins (SubnAdmSet,
 * 15.4.3), leaves (SubnAdmDelete, 15.4.4) and queries (Get, GetTable)
 * over the group table (sm/mcast/groups.c).
 *
 * The rules are the spec's as OpenSM 3.3.23 applies them
 * (osm_sa_mcmember_record.c, osm_multicast.c), with the differences said
 * where they are made:
 *
 *   Set      MGID, PortGID and JoinState are required (INSUF_COMPONENTS);
 *            the PortGID's prefix is the subnet's or the default
 *            fe80:: (INVALID_GID); the port must be in the model and so
 *            must the requester (REQ_INVALID; OpenSM drops a request from
 *            an unknown requester without an answer).  A requester that
 *            is not the port (ProxyJoin) must be trusted (our SM_Key;
 *            OpenSM only asks it to share a P_Key with the port, any
 *            P_Key, not the group's).  A group that does not exist is
 *            created when the JoinState has full or send-only full
 *            membership, the components of o15-0.2.3 are given
 *            (INSUF_COMPONENTS otherwise) and the port is a full member
 *            of the P_Key (ibsm's rule: only full members create); MGID 0
 *            asks the SA for an MGID (ff1S:a01b:...).  The new group's
 *            MLID is the record's when its MLID component is given, the
 *            MLID lies below the switches' MulticastFDBCap and no group
 *            holds it; else (no refusal, as OpenSM) a solicited-node
 *            group's class MLID with consolidate_ipv6_snm_req, else the
 *            lowest free one (mc_group_create_req()).  Every other
 *            refusal is REQ_INVALID, as OpenSM answers them: parameters
 *            that do not match the group (Q_Key, P_Key, TClass, SL,
 *            FlowLabel, HopLimit, MTU and rate selectors), a port that
 *            does not hold the group's P_Key, and the seeds' rule: a port
 *            whose link rate or MTU is below the group's.  Limits (groups,
 *            members per group, groups per port, MLIDs): NO_RESOURCES.
 *            The groups a port creates, for itself or by ProxyJoin, count
 *            against its groups-per-port quota too, and its share of the
 *            MLIDs (mc_group_create_for()).
 *   Delete   MGID, PortGID and JoinState required; the port must be a
 *            member holding every bit it gives up, and the requester the
 *            port itself (or, for a ProxyJoin membership, a port of the
 *            group's partition); else REQ_INVALID.
 *   Get(Table) every group the requester's port shares the P_Key of,
 *            matched on the components given; a trusted requester that
 *            names no PortGID sees one record per member, others one per
 *            group with PortGID, JoinState and ProxyJoin zero (15.2.5.17
 *            p. 923).  Work is charged per group and per member.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partitions/partitions.h"
#include "sm/sa/gen.h"
#include "sm/sa/mcmember.h"
#include "sm/sa/service.h"
#include "sm/sm.h"

/* MCMemberRecord components, in wire bits (15.2.5.17 table 197). */
static const struct sa_field mcm_fields[MCM_NFIELDS] = {
	FLD(0, 128), FLD(128, 128), FLD(256, 32), FLD(288, 16),
	FLD(304, 2), FLD(306, 6), FLD(312, 8), FLD(320, 16),
	FLD(336, 2), FLD(338, 6), FLD(344, 2), FLD(346, 6),
	FLD(352, 4), FLD(356, 20), FLD(376, 8), FLD(384, 4),
	FLD(388, 4), FLD(392, 1),
};

#define M(c)		BIT(MCM_##c)
/* Components every Set and Delete names (o15-0.1.13, o15-0.1.14). */
#define MCM_JOIN_MASK	(M(MGID) | M(PORT_GID) | M(JOIN_STATE))
/* ... and that creating a group needs besides (o15-0.2.3). */
#define MCM_CREATE_MASK	(MCM_JOIN_MASK | M(QKEY) | M(TCLASS) | M(PKEY) | \
			 M(FLOW_LABEL) | M(SL))
/* Compared as they are on a query. */
#define MCM_EXACT_MASK	(M(MGID) | M(MLID) | M(QKEY) | M(TCLASS) | M(SL) | \
			 M(FLOW_LABEL) | M(HOP_LIMIT))

#define SEL_GT		0
#define SEL_LT		1
#define SEL_EQ		2
#define MTU_MIN		1		/* 256 */
#define MTU_MAX_CODE	5		/* 4096 */
#define DEFAULT_PREFIX	0xfe80000000000000ull

/* A request decoded once. */
struct mcm_req {
	const struct sa_view *v;
	const struct sa_query *q;
	struct mc_table *mc;
	struct mcm_outcome *o;
	struct sa_mcmember_record rec;	/* the request's record */
	uint64_t mask;
	bool trusted;
	struct fab_ref requester;
	uint8_t join_state, scope, sl, hop;
	uint32_t flow;
};

static void fmt_gid(const uint8_t gid[16], char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, gid, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

__attribute__((format(printf, 3, 4)))
static int refuse(struct mcm_req *r, unsigned code, const char *fmt, ...)
{
	va_list ap;

	r->o->code = code;
	va_start(ap, fmt);
	vsnprintf(r->o->why, sizeof(r->o->why), fmt, ap);
	va_end(ap);
	return code == MCM_LOG_NO_ROOM ? -SA_STATUS_NO_RESOURCES
				       : -SA_STATUS_REQ_INVALID;
}

static uint64_t be64_at(const uint8_t *p)
{
	uint64_t x;

	memcpy(&x, p, 8);
	return be64toh(x);
}

/* The MTU a port can carry: its NeighborMTU once the SM set it, never
 * more than its MTUCap (OpenSM compares NeighborMTU). */
static uint8_t port_mtu(const struct sa_view *v, struct fab_ref r)
{
	const struct smp_port_info *pi = &fabric_node(v->f, r.node)->ports[r.port].pi;
	unsigned cap = pi_mtu_cap(pi), nb = pi_neighbor_mtu(pi);

	return (uint8_t)(nb && nb < cap ? nb : cap);
}

static uint8_t port_rate_of(const struct sa_view *v, struct fab_ref r)
{
	uint8_t rate = sa_port_rate(fabric_node(v->f, r.node), r.port);

	return v->rates_original ? (uint8_t)sa_rate_original(rate) : rate;
}

/* Does the port hold P_Key `pkey` (its 15-bit base; `full`: as a full
 * member)?  10.9.1.2: base 0 is no partition. */
static bool port_has_pkey(const struct sa_view *v, struct fab_ref r,
			  uint16_t pkey, bool full)
{
	struct fab_pkey_tab t;

	if (!FAB_PKEY_BASE(pkey))
		return false;
	pkey_tab_of(v, r, &t);
	for (unsigned i = 0; i < t.n; i++) {
		uint16_t k = fabric_pkey_at(&t, i);

		if (FAB_PKEY_BASE(k) == FAB_PKEY_BASE(pkey) && (!full || (k & 0x8000)))
			return true;
	}
	return false;
}

/* The group's record: its components, JoinState and PortGID zero. */
static void group_record(const struct mc_group *g,
			 struct sa_mcmember_record *rec)
{
	memset(rec, 0, sizeof(*rec));
	memcpy(rec->mgid, g->mgid, 16);
	rec->qkey = htobe32(g->qkey);
	rec->mlid = htobe16(g->mlid);
	rec->mtu = (uint8_t)(SEL_EQ << 6 | (g->mtu & 0x3f));
	rec->tclass = g->tclass;
	rec->pkey = htobe16(g->pkey);
	rec->rate = (uint8_t)(SEL_EQ << 6 | (g->rate & 0x3f));
	rec->pkt_life = (uint8_t)(SEL_EQ << 6 | (g->pkt_life & 0x3f));
	rec->sl_flow_hop = htobe32((uint32_t)(g->sl & 0xf) << 28 |
				   (g->flow_label & 0xfffff) << 8 | g->hop_limit);
	rec->scope_state = (uint8_t)(g->scope << 4);
}

/* Does `have` satisfy selector `sel` against `want`?  cmp: <0, 0, >0. */
static bool sel_ok(unsigned sel, int cmp)
{
	switch (sel) {
	case SEL_GT: return cmp > 0;
	case SEL_LT: return cmp < 0;
	case SEL_EQ: return cmp == 0;
	default:     return true;
	}
}

/*
 * The request's MTU and rate selectors against the group (o15-0.2.4 item
 * 5); PacketLifeTime is not compared, as in OpenSM.
 */
static bool selectors_match(const struct mcm_req *r, const struct mc_group *g)
{
	if ((r->mask & M(MTU_SEL)) &&
	    !sel_ok(r->rec.mtu >> 6, (int)g->mtu - (int)(r->rec.mtu & 0x3f)))
		return false;
	if ((r->mask & M(RATE_SEL)) &&
	    !sel_ok(r->rec.rate >> 6, sa_rate_valid(g->rate) &&
		    sa_rate_valid(r->rec.rate & 0x3f) ?
		    sa_rate_cmp(g->rate, r->rec.rate & 0x3f) :
		    (int)g->rate - (int)(r->rec.rate & 0x3f)))
		return false;
	return true;
}

/*
 * The other components the request gives against the group's (OpenSM's
 * validate_other_comp_fields): NULL when they match, else what differs.
 */
static const char *params_differ(const struct mcm_req *r,
				 const struct mc_group *g)
{
	uint16_t pkey = be16toh(r->rec.pkey);

	if ((r->mask & M(QKEY)) && be32toh(r->rec.qkey) != g->qkey)
		return "Q_Key";
	if (r->mask & M(PKEY)) {
		if (!((pkey | g->pkey) & 0x8000))
			return "P_Key (both limited)";
		if (FAB_PKEY_BASE(pkey) != FAB_PKEY_BASE(g->pkey))
			return "P_Key";
	}
	if ((r->mask & M(TCLASS)) && r->rec.tclass != g->tclass)
		return "TClass";
	if ((r->mask & M(SL)) && r->sl != g->sl)
		return "SL";
	if ((r->mask & M(FLOW_LABEL)) && r->flow != g->flow_label)
		return "FlowLabel";
	if ((r->mask & M(HOP_LIMIT)) && r->hop != g->hop_limit)
		return "HopLimit";
	return NULL;
}

static bool mtu_code_valid(unsigned c)
{
	return c >= MTU_MIN && c <= MTU_MAX_CODE;
}

/* Rates and MTUs the request gives must be codes that exist (OpenSM's
 * rate_is_valid, mtu_is_valid). */
static bool codes_valid(const struct mcm_req *r)
{
	if ((r->mask & M(RATE_SEL)) && (r->mask & M(RATE)) &&
	    !sa_rate_valid(r->rec.rate & 0x3f))
		return false;
	if ((r->mask & M(MTU_SEL)) && (r->mask & M(MTU)) &&
	    !mtu_code_valid(r->rec.mtu & 0x3f))
		return false;
	return true;
}

/*
 * The PortGID names a port of this subnet: its prefix is the subnet's,
 * or the default prefix (OpenSM takes that one for the subnet's too).
 */
static bool port_gid_prefix_ok(const struct mcm_req *r)
{
	uint64_t prefix = be64_at(r->rec.port_gid);

	return prefix == r->v->subnet_prefix || prefix == DEFAULT_PREFIX;
}

/*
 * A requested MGID a group may be created with (o15-0.1.5 as OpenSM
 * reads it; IPoIB MGIDs are the IETF's and skip the flag checks), and
 * the IPoIB rule: a partition's IPv4 broadcast group must exist before
 * any other IPoIB group of its P_Key and scope, and the new group must
 * match its parameters (not with ipoib_mcgroup_creation_validation
 * FALSE, which OpenSM reads as no check at all: the format checks stay
 * here).  NULL or why not.
 */
static const char *mgid_refused(const struct mcm_req *r)
{
	const uint8_t *mgid = r->rec.mgid;
	uint16_t sig = (uint16_t)(mgid[2] << 8 | mgid[3]);
	uint8_t bcast[16] = { 0xff, 0x10, 0x40, 0x1b, 0, 0, 0, 0, 0, 0, 0, 0,
			      0xff, 0xff, 0xff, 0xff };
	const struct mc_group *b;

	if (mgid[0] != 0xff)
		return "MGID is not multicast (0xff...)";
	if (sig != 0x401b && sig != 0x601b) {
		if (mgid[1] & 0xe0)
			return "MGID uses reserved flags";
		if (sig == 0xa01b && (mgid[1] & 0xf) == 2)
			return "MGID has the SA's signature 0xA01B with link-local scope";
		return NULL;
	}
	if (r->v->no_ipoib_check)
		return NULL;
	bcast[1] |= mgid[1] & 0xf;
	bcast[4] = mgid[4];
	bcast[5] = mgid[5];
	if (!memcmp(bcast, mgid, 16))
		return NULL;
	b = mc_find(r->mc, bcast);
	if (!b)
		return "IPoIB group before its partition's broadcast group";
	if (params_differ(r, b))
		return "IPoIB group parameters differ from the broadcast group's";
	return NULL;
}

/*
 * The MTU and rate of a group created by this request: what the
 * selectors ask, within what the port can carry; no selector: the
 * port's own (OpenSM's mgrp_request_is_realizable).  false: not possible.
 */
static bool realizable(const struct mcm_req *r, struct fab_ref port,
		       uint8_t *mtu, uint8_t *rate)
{
	unsigned pm = port_mtu(r->v, port), pr = port_rate_of(r->v, port);
	unsigned want, sel;

	*mtu = (uint8_t)pm;
	if ((r->mask & M(MTU)) && (r->mask & M(MTU_SEL)) &&
	    (sel = r->rec.mtu >> 6) != 3) {
		want = r->rec.mtu & 0x3f;
		if (sel == SEL_GT) {
			if (want >= pm)
				return false;
			*mtu = (uint8_t)pm;
		} else if (sel == SEL_LT) {
			*mtu = (uint8_t)(want > pm ? pm : want - 1);
		} else {
			*mtu = (uint8_t)want;
		}
		if (!mtu_code_valid(*mtu))
			return false;
	}
	*rate = (uint8_t)pr;
	if ((r->mask & M(RATE)) && (r->mask & M(RATE_SEL)) &&
	    (sel = r->rec.rate >> 6) != 3) {
		want = r->rec.rate & 0x3f;
		if (sel == SEL_GT) {
			if (sa_rate_cmp(want, pr) >= 0)
				return false;
			*rate = (uint8_t)pr;
		} else if (sel == SEL_LT) {
			*rate = (uint8_t)(sa_rate_cmp(want, pr) > 0 ? pr
						  : sa_rate_below(want));
		} else {
			*rate = (uint8_t)want;
		}
		if (!sa_rate_valid(*rate))
			return false;
	}
	return true;
}

/*
 * o15-0.2.1: a membership may be changed only by its port, or, when it
 * was made by ProxyJoin, by a port of the group's partition.  A trusted
 * requester may change any.
 */
static bool may_modify(const struct mcm_req *r, const struct mc_group *g,
		       const struct mc_member *m, struct fab_ref port)
{
	if (r->trusted)
		return true;
	if (!m->proxy)
		return r->requester.node == port.node &&
		       r->requester.port == port.port;
	return port_has_pkey(r->v, r->requester, g->pkey, false);
}

/* The answer to a Set or Delete: the request's record with the group's
 * components (a join) and the JoinState the port holds now. */
static int answer_member(struct mcm_req *r, const struct mc_group *g,
			 uint8_t held, uint8_t scope, struct sa_table *out)
{
	struct sa_mcmember_record rec = r->rec;

	if (g) {
		struct sa_mcmember_record gr;

		group_record(g, &gr);
		memcpy(rec.mgid, gr.mgid, 16);
		rec.qkey = gr.qkey;
		rec.mlid = gr.mlid;
		rec.mtu = gr.mtu;
		rec.tclass = gr.tclass;
		rec.pkey = gr.pkey;
		rec.rate = gr.rate;
		rec.pkt_life = gr.pkt_life;
		rec.sl_flow_hop = gr.sl_flow_hop;
		scope = g->scope;
	}
	rec.scope_state = (uint8_t)(scope << 4 | (held & 0xf));
	return sa_table_add(out, &rec);
}

static void note_trap(struct mcm_req *r, int trap, const uint8_t mgid[16])
{
	if (trap <= 0)
		return;
	r->o->trap = (unsigned)trap;
	memcpy(r->o->trap_mgid, mgid, 16);
}

/* SubnAdmSet(MCMemberRecord): join, creating the group if need be. */
/* The requesting port's GUID: whose the groups it creates are. */
static uint64_t requester_guid(const struct mcm_req *r)
{
	const struct fab_node *n = fabric_node(r->v->f, r->requester.node);

	return n->ports[r->requester.port].guid ?
	       n->ports[r->requester.port].guid : n->guid;
}

static int do_join(struct mcm_req *r, struct sa_table *out)
{
	struct fab_ref port;
	uint64_t guid = be64_at(r->rec.port_gid + 8);
	uint8_t gid[16], mtu = 0, rate = 0, held, before = 0;
	struct mc_group *g;
	struct mc_member *m;
	const char *why;
	char gs[INET6_ADDRSTRLEN];
	bool created = false;
	int rc, err;

	fmt_gid(r->rec.mgid, gs, sizeof(gs));
	if ((r->mask & MCM_JOIN_MASK) != MCM_JOIN_MASK)
		return -SA_STATUS_INSUF_COMPONENTS;
	if (!codes_valid(r))
		return refuse(r, MCM_LOG_REFUSED, "join %s: rate or MTU is no"
			      " valid code", gs);
	if (!port_gid_prefix_ok(r))
		return -SA_STATUS_INVALID_GID;
	if ((rc = midx_guid_lookup(r->v->f, guid, &port)) < 0)
		return rc;
	if (rc == 0)
		return refuse(r, MCM_LOG_REFUSED, "join %s: port 0x%016" PRIx64
			      " is not in the subnet", gs, guid);
	/* A ProxyJoin puts another port in a group and answers with the
	 * group's MLID and Q_Key: only for a requester with our SM_Key, as
	 * OpenSM asks for its other proxy operations. */
	if ((r->requester.node != port.node || r->requester.port != port.port) &&
	    !r->trusted)
		return refuse(r, MCM_LOG_REFUSED, "join %s: ProxyJoin of port"
			      " 0x%016" PRIx64 " without the SM_Key", gs, guid);
	if ((r->mask & M(PKEY)) && !FAB_PKEY_BASE(be16toh(r->rec.pkey)))
		return refuse(r, MCM_LOG_REFUSED, "join %s: invalid P_Key"
			      " 0x%04x", gs, be16toh(r->rec.pkey));
	if (!r->join_state)
		return refuse(r, MCM_LOG_REFUSED, "join %s: JoinState 0", gs);
	/* the group's GID of the member: the subnet's prefix, its GUID */
	{
		uint64_t p = htobe64(r->v->subnet_prefix), gg = htobe64(guid);

		memcpy(gid, &p, 8);
		memcpy(gid + 8, &gg, 8);
	}
	g = mc_find(r->mc, r->rec.mgid);
	if (!g) {
		uint8_t zero[16] = { 0 };
		bool assign = !memcmp(r->rec.mgid, zero, 16);

		/* o15-0.1.9: only a full (or send-only full) member creates. */
		if (!(r->join_state & MC_JOIN_COUNTS))
			return refuse(r, MCM_LOG_REFUSED, "join %s: no such group"
				      " and JoinState 0x%x cannot create it",
				      gs, r->join_state);
		if ((r->mask & MCM_CREATE_MASK) != MCM_CREATE_MASK)
			return -SA_STATUS_INSUF_COMPONENTS;
		if (!assign && (why = mgid_refused(r)))
			return refuse(r, MCM_LOG_REFUSED, "create %s: %s", gs, why);
		if (!realizable(r, port, &mtu, &rate))
			return refuse(r, MCM_LOG_PORT_CAPS, "create %s: the MTU"
				      " or rate asked for is beyond port 0x%016"
				      PRIx64, gs, guid);
		if (!port_has_pkey(r->v, port, be16toh(r->rec.pkey), true))
			return refuse(r, MCM_LOG_REFUSED, "create %s: port"
				      " 0x%016" PRIx64 " is no full member of"
				      " P_Key 0x%04x", gs, guid,
				      be16toh(r->rec.pkey));
		if (assign && mc_assign_mgid(r->mc, (r->mask & M(SCOPE)) ?
					     r->scope : 2, r->v->subnet_prefix,
					     r->rec.mgid) < 0)
			return refuse(r, MCM_LOG_NO_ROOM, "create: no free MGID");
		/* An MLID named in the record is the group's if it is free
		 * and below the switches' MulticastFDBCap; else the SA picks
		 * one, as OpenSM does (no refusal). */
		g = mc_group_create_for(r->mc, r->rec.mgid, (r->mask & M(MLID)) ?
					be16toh(r->rec.mlid) : 0,
					requester_guid(r), &err);
		if (!g) {
			if (err == -ENOMEM)
				return -ENOMEM;
			return refuse(r, MCM_LOG_NO_ROOM, "create %s by port "
				      "0x%016" PRIx64 ": %s", gs,
				      requester_guid(r), err == -ENOBUFS ?
				      "the group table is full" :
				      err == -EDQUOT ? "the requester created"
				      " its most groups, or its share of the"
				      " multicast LIDs" :
				      "no multicast LID left");
		}
		created = true;
		g->qkey = be32toh(r->rec.qkey);
		g->pkey = (uint16_t)(be16toh(r->rec.pkey) | 0x8000);
		g->mtu = mtu;
		g->rate = rate;
		g->pkt_life = r->rec.pkt_life & 0x3f;
		g->sl = r->sl;
		g->flow_label = r->flow;
		g->hop_limit = r->hop;
		g->tclass = r->rec.tclass;
		g->scope = (r->mask & M(SCOPE)) ? r->scope : (r->rec.mgid[1] & 0xf);
	} else if (!r->v->no_join_check && (why = params_differ(r, g))) {
		return refuse(r, MCM_LOG_REFUSED, "join %s by port 0x%016" PRIx64
			      ": %s differs from the group's", gs, guid, why);
	}
	rc = 0;
	if (!selectors_match(r, g))
		rc = refuse(r, MCM_LOG_REFUSED, "join %s by port 0x%016" PRIx64
			    ": MTU or rate selector does not match the group's",
			    gs, guid);
	else if (port_mtu(r->v, port) < g->mtu)
		rc = refuse(r, MCM_LOG_PORT_CAPS, "join %s by port 0x%016" PRIx64
			    ": its MTU code %u is below the group's %u", gs,
			    guid, port_mtu(r->v, port), g->mtu);
	else if (sa_rate_cmp(port_rate_of(r->v, port), g->rate) < 0)
		rc = refuse(r, MCM_LOG_PORT_CAPS, "join %s by port 0x%016" PRIx64
			    ": its rate code %u is below the group's %u", gs,
			    guid, port_rate_of(r->v, port), g->rate);
	else if (!port_has_pkey(r->v, port, g->pkey, false))
		rc = refuse(r, MCM_LOG_REFUSED, "join %s by port 0x%016" PRIx64
			    ": not a member of P_Key 0x%04x", gs, guid, g->pkey);
	else if ((m = mc_group_member(g, guid)) && !may_modify(r, g, m, port))
		rc = refuse(r, MCM_LOG_REFUSED, "join %s: port 0x%016" PRIx64
			    "'s membership may not be changed by this requester",
			    gs, guid);
	if (rc == 0) {
		m = mc_group_member(g, guid);
		before = m ? m->join_state : 0;
		rc = mc_join(r->mc, g, guid, gid, r->join_state,
			     r->requester.node != port.node ||
			     r->requester.port != port.port, &held);
		if (rc == -ENOBUFS || rc == -EDQUOT)
			rc = refuse(r, MCM_LOG_NO_ROOM, "join %s by port 0x%016"
				    PRIx64 ": %s", gs, guid, rc == -ENOBUFS ?
				    "the group has its most members" :
				    "the port is in its most groups");
	}
	if (rc < 0) {
		if (created)
			mc_group_delete(r->mc, g);
		return rc;
	}
	note_trap(r, rc, g->mgid);
	r->o->changed = created || held != before;
	return answer_member(r, g, held, 0, out);
}

/* SubnAdmDelete(MCMemberRecord): leave. */
static int do_leave(struct mcm_req *r, struct sa_table *out)
{
	uint64_t guid = be64_at(r->rec.port_gid + 8);
	struct mc_group *g;
	struct mc_member *m;
	struct fab_ref port = { FAB_NONE, 0 };
	uint8_t held, mgid[16], scope;
	char gs[INET6_ADDRSTRLEN];
	bool deleted;
	int rc;

	fmt_gid(r->rec.mgid, gs, sizeof(gs));
	if ((r->mask & MCM_JOIN_MASK) != MCM_JOIN_MASK)
		return -SA_STATUS_INSUF_COMPONENTS;
	if (!codes_valid(r))
		return -SA_STATUS_REQ_INVALID;
	if (!port_gid_prefix_ok(r))
		return -SA_STATUS_INVALID_GID;
	g = mc_find(r->mc, r->rec.mgid);
	if (!g)
		return refuse(r, MCM_LOG_LEAVE, "leave %s: no such group", gs);
	m = mc_group_member(g, guid);
	if (!m)
		return refuse(r, MCM_LOG_LEAVE, "leave %s: port 0x%016" PRIx64
			      " is no member", gs, guid);
	if (!r->join_state || (r->join_state & ~m->join_state))
		return refuse(r, MCM_LOG_LEAVE, "leave %s by port 0x%016" PRIx64
			      ": JoinState 0x%x, held 0x%x", gs, guid,
			      r->join_state, m->join_state);
	if ((rc = midx_guid_lookup(r->v->f, guid, &port)) < 0)
		return rc;
	if (!may_modify(r, g, m, port))
		return refuse(r, MCM_LOG_LEAVE, "leave %s: port 0x%016" PRIx64
			      "'s membership may not be changed by this"
			      " requester", gs, guid);
	memcpy(mgid, g->mgid, 16);
	scope = g->scope;
	rc = mc_leave(r->mc, g, guid, r->join_state, &held, &deleted);
	if (rc < 0)
		return -SA_STATUS_REQ_INVALID;
	note_trap(r, rc, mgid);
	r->o->changed = true;
	/* OpenSM answers the request's record with the JoinState left. */
	return answer_member(r, NULL, held, scope, out);
}

/* Records of one group for a query (OpenSM's mcmr_by_comp_mask). */
static int query_group(struct mcm_req *r, const struct mc_group *g,
		       struct sa_table *out)
{
	struct sa_mcmember_record rec;
	uint8_t smask = (uint8_t)(((r->mask & M(SCOPE)) ? 0xf0 : 0) |
				  ((r->mask & M(JOIN_STATE)) ? 0x0f : 0));
	uint8_t want = r->rec.scope_state & smask;
	int rc;

	group_record(g, &rec);
	if (!sa_match(mcm_fields, MCM_NFIELDS, r->mask & MCM_EXACT_MASK, &rec,
		      &r->rec))
		return 0;
	if (!port_has_pkey(r->v, r->requester, g->pkey, false))
		return 0;
	if (params_differ(r, g) || !selectors_match(r, g))
		return 0;
	if (r->trusted && !(r->mask & M(PORT_GID))) {
		for (size_t i = 0; i < g->n_members; i++) {
			const struct mc_member *m = &g->members[i];

			if (!sa_charge(r->q, 1))
				return -SA_STATUS_NO_RESOURCES;
			rec.scope_state = (uint8_t)(g->scope << 4 | m->join_state);
			memcpy(rec.port_gid, m->port_gid, 16);
			rec.proxy_join = m->proxy ? 0x80 : 0;
			if ((rec.scope_state & smask) != want ||
			    ((r->mask & M(PROXY_JOIN)) &&
			     (rec.proxy_join ^ r->rec.proxy_join) & 0x80))
				continue;
			if ((rc = sa_table_add(out, &rec)) < 0)
				return rc;
		}
		return 0;
	}
	/* One record: the port's, or the group's own. */
	rec.scope_state = (uint8_t)(g->scope << 4 | MC_JOIN_FULL);
	if (r->mask & M(PORT_GID)) {
		const struct mc_member *m =
			mc_group_member((struct mc_group *)g,
					be64_at(r->rec.port_gid + 8));

		if (!m)
			return 0;
		rec.scope_state = (uint8_t)(g->scope << 4 | m->join_state);
		memcpy(rec.port_gid, m->port_gid, 16);
		rec.proxy_join = m->proxy ? 0x80 : 0;
	}
	if ((rec.scope_state & smask) != want ||
	    ((r->mask & M(PROXY_JOIN)) &&
	     (rec.proxy_join ^ r->rec.proxy_join) & 0x80))
		return 0;
	if (!r->trusted) {
		/* 15.2.5.17: PortGID, JoinState, ProxyJoin are zero unless
		 * the requester is trusted. */
		memset(rec.port_gid, 0, 16);
		rec.scope_state &= 0xf0;
		rec.proxy_join = 0;
	}
	return sa_table_add(out, &rec);
}

static int do_query(struct mcm_req *r, struct sa_table *out)
{
	size_t n = mc_table_count(r->mc);
	int rc;

	if (!codes_valid(r))
		return -SA_STATUS_REQ_INVALID;
	/* MGID given: one lookup, not a walk. */
	if (r->mask & M(MGID)) {
		const struct mc_group *g = mc_find(r->mc, r->rec.mgid);

		if (!sa_charge(r->q, 1))
			return -SA_STATUS_NO_RESOURCES;
		return g ? query_group(r, g, out) : 0;
	}
	for (size_t i = 0; i < n; i++) {
		const struct mc_group *g = mc_table_at(r->mc, i);

		if (!sa_charge(r->q, 1))
			return -SA_STATUS_NO_RESOURCES;
		if ((rc = query_group(r, g, out)) < 0)
			return rc;
	}
	return 0;
}

int sa_mcmember_request(struct mc_table *mc, const struct sa_view *v,
			const struct sa_query *q, struct mcm_outcome *o,
			struct sa_table *out)
{
	struct mcm_req r;
	uint32_t sfh;
	int rc;

	memset(o, 0, sizeof(*o));
	if (!mc || !has_fabric(v) || q->tmpl_len < sizeof(r.rec))
		return -SA_STATUS_REQ_INVALID;
	memset(&r, 0, sizeof(r));
	r.v = v;
	r.q = q;
	r.mc = mc;
	r.o = o;
	memcpy(&r.rec, q->tmpl, sizeof(r.rec));
	r.mask = q->comp_mask;
	r.trusted = q->sm_key == SA_SM_KEY_TRUSTED;
	r.join_state = r.rec.scope_state & 0xf;
	r.scope = r.rec.scope_state >> 4;
	sfh = be32toh(r.rec.sl_flow_hop);
	r.sl = (uint8_t)(sfh >> 28);
	r.flow = (sfh >> 8) & 0xfffff;
	r.hop = (uint8_t)sfh;
	rc = midx_lid_lookup(v->f, q->requester_lid, &r.requester);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return refuse(&r, MCM_LOG_REFUSED, "request from LID %u, no"
			      " port of the subnet", q->requester_lid);
	switch (q->method) {
	case MAD_METHOD_SET:
		return do_join(&r, out);
	case MAD_METHOD_DELETE:
		return do_leave(&r, out);
	case MAD_METHOD_GET:
	case MAD_METHOD_GET_TABLE:
		return do_query(&r, out);
	default:
		return -MAD_STATUS_ATTR_UNSUPP;
	}
}

/* Trap 66 or 67 about a group (14.2.5.1 table 120, o14-12.1.11): the
 * SM is the issuer; the data details carry the MGID after 6 reserved
 * bytes, as OpenSM's ntc_64_67. */
static void group_notice(struct sm *sm, unsigned trap, const uint8_t mgid[16])
{
	struct smp_notice n;
	uint64_t prefix = htobe64(sm->cfg.subnet_prefix);
	uint64_t guid = htobe64(sm->port_guid);

	memset(&n, 0, sizeof(n));
	n.generic_type = 0x80 | 3;		/* generic, subnet management */
	n.producer[2] = 4;			/* class manager */
	n.trap_num = htobe16((uint16_t)trap);
	n.issuer_lid = htobe16(sm_local_lid(sm));
	memcpy(n.data_details + 6, mgid, 16);
	memcpy(n.issuer_gid, &prefix, 8);
	memcpy(n.issuer_gid + 8, &guid, 8);
	sa_report_notice(sm, &n, sm_local_lid(sm));
}

static void log_group_event(unsigned trap, const uint8_t mgid[16])
{
	char gs[INET6_ADDRSTRLEN];

	fmt_gid(mgid, gs, sizeof(gs));
	/* Rate-limited: a burst of IPoIB joins creates a group every few
	 * joins, and a line each cost a write() per group in the SA's
	 * path (tests/bench/mcast_bench.sh). */
	log_ratelimited(LOG_LVL_INFO, MCM_LOG_GROUP, "multicast: group %s %s",
			gs, trap == MC_TRAP_CREATED ?
			"has a full member (trap 66)" :
			"lost its last full member (trap 67)");
}

int sa_mcmember_serve(struct sm *sm, const struct sa_query *q,
		      struct sa_table *out)
{
	struct sa_view v;
	struct sa_work w = { 0 };
	struct sa_query qq = *q;
	struct mcm_outcome o;
	int rc;

	sa_view_of(sm, &v);
	/* A reload may have changed it: the value in force for this one. */
	if (sm->mc)
		mc_table_set_snm_consolidation(sm->mc,
					       sm->cfg.consolidate_ipv6_snm_req);
	w.budget = sm->cfg.sa_work_budget ? sm->cfg.sa_work_budget
					  : SA_WORK_BUDGET_DEFAULT;
	qq.work = &w;
	out->max_bytes = sm->cfg.sa_answer_bytes ? (size_t)sm->cfg.sa_answer_bytes
						 : SA_DEF_ANSWER_BYTES;
	rc = sa_mcmember_request(sm->mc, &v, &qq, &o, out);
	if (rc == -ENOMEM)
		log_ratelimited(LOG_LVL_ERR, MCM_LOG_NOMEM, "multicast: out of"
				" memory answering an MCMemberRecord request");
	if (o.code)
		log_ratelimited(o.code == MCM_LOG_PORT_CAPS ||
				o.code == MCM_LOG_NO_ROOM ? LOG_LVL_WARN :
				LOG_LVL_INFO, o.code, "multicast: %s", o.why);
	if (o.trap) {
		log_group_event(o.trap, o.trap_mgid);
		group_notice(sm, o.trap, o.trap_mgid);
	}
	if (o.changed)
		(void)sm_post(sm, SM_EV_MCAST_CHANGED);
	return rc;
}

void sa_mcast_precreate(struct sm *sm)
{
	struct part_config def;
	const struct part_config *c = sm->parts;
	struct mc_precreate_report r;
	char gs[INET6_ADDRSTRLEN];
	int rc;

	if (!sm->mc)
		return;
	mc_table_set_snm_consolidation(sm->mc, sm->cfg.consolidate_ipv6_snm_req);
	memset(&def, 0, sizeof(def));
	if (!c) {
		if (part_config_default(&def) < 0) {
			log_err("ERR 0807: multicast: out of memory");
			return;
		}
		c = &def;
	}
	rc = mc_precreate_qos(sm->mc, c, sm->cfg.subnet_timeout, sm->cfg.qos,
			      &r);
	if (c == &def)
		part_config_free(&def);
	if (rc < 0)
		log_err_rc(rc, "ERR 0807: multicast: pre-creating groups");
	fmt_gid(r.first_skipped, gs, sizeof(gs));
	if (r.skipped)
		log_warnx("ERR 0805: multicast: %u mgid= groups not created"
			  " (an IPoIB MGID with another partition's P_Key, rate"
			  " or MTU; or not multicast), the first %s",
			  r.skipped, gs);
	if (r.failed)
		log_err("ERR 0806: multicast: %u pre-created groups did not fit"
			" (group table or MLIDs full), the first %s",
			r.failed, gs);
	if (r.stale) {
		fmt_gid(r.first_stale, gs, sizeof(gs));
		log_warnx("ERR 0805: multicast: %u pre-created groups keep the"
			  " MTU and rate their members joined with until they"
			  " are empty, the first %s: MTU %u rate %u kept,"
			  " the partition now says MTU %u rate %u",
			  r.stale, gs, r.stale_mtu,
			  r.stale_rate, r.want_mtu, r.want_rate);
	}
	sm->mc_stale = r.stale;
	log_info("multicast: pre-created groups: %u created, %u kept, %u"
		 " given new parameters, %u no longer pre-created (%u of them"
		 " deleted); %zu groups, %zu MLIDs in use", r.created, r.kept,
		 r.updated, r.released, r.deleted, mc_table_count(sm->mc),
		 mc_table_mlids_used(sm->mc));
	/* Before the first SUBNET UP the heavy sweep programs every group
	 * anyway; after it, the MFT code learns of the change here. */
	if ((r.created || r.deleted || r.updated) && sm->subnet_up)
		(void)sm_post(sm, SM_EV_MCAST_CHANGED);
}

void sa_mcast_prune(struct sm *sm)
{
	struct sa_view v;
	struct fab_ref pr;
	size_t left = 0, deleted = 0;
	bool changed = false;

	if (!sm->mc)
		return;
	sa_view_of(sm, &v);
	/* Backwards: a deleted group swaps the last one into its place. */
	for (size_t i = mc_table_count(sm->mc); i-- > 0;) {
		struct mc_group *g = mc_table_at(sm->mc, i);
		bool gone = false;

		for (size_t k = g->n_members; k-- > 0 && !gone;) {
			struct mc_member *m = &g->members[k];
			uint8_t mgid[16], held;
			int rc;

			if (k >= g->n_members)
				continue;	/* emptied by a last full leave */
			rc = midx_guid_lookup(v.f, m->port_guid, &pr);
			if (rc != 0)
				continue;	/* present, or no index: keep */
			memcpy(mgid, g->mgid, 16);
			rc = mc_leave(sm->mc, g, m->port_guid, m->join_state,
				      &held, &gone);
			left++;
			changed = true;
			if (rc == MC_TRAP_DELETED) {
				log_group_event((unsigned)rc, mgid);
				group_notice(sm, (unsigned)rc, mgid);
				deleted += gone;
			}
		}
	}
	if (left)
		log_info("multicast: %zu memberships of ports that left the"
			 " fabric removed, %zu groups deleted", left, deleted);
	if (changed)
		(void)sm_post(sm, SM_EV_MCAST_CHANGED);
}
