/*
 * path.c - PathRecord (15.2.5.16): the paths between end ports as the
 * LFTs the SM programmed route them, with MTU, rate and packet lifetime
 * along the path, selectors, P_Key (only between ports sharing a
 * partition with a full member), SL, Reversible, NumbPath and the LID
 * pairs of LMC ranges.  MultiPathRecord (at the end of this file) answers with
 * the same records.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qos/qos.h"
#include "sm/program.h"
#include "sm/sa/gen.h"

/*
 * A GetTable PathRecord over the whole subnet (no endpoint given) returns
 * N^2 records.  OpenSM builds them all; we stop at this many (8 MB: every
 * path of one host to 2,000 others with LMC 3) and answer NO_RESOURCES
 * rather than grow a table of gigabytes on a large fabric; NumbPath or a
 * named end keeps a query under it.  What a query may cost is bounded by
 * the request's work budget (sa.h): a port pair, a LID pair and a hop
 * walked are one unit each, records found or not, so a query that
 * matches nothing is bounded too.
 */
#define PR_MAX_RECORDS		(1u << 17)

/*
 * Memory.  How many records a GetTable with an end open may
 * give is known before any walk: at most the LID pairs of its ends, or
 * port pairs x NumbPath (pr_bound()).  Up to PR_COUNT_FIRST the table
 * grows as records come.  Up to PR_MAX_RECORDS it is allocated at that
 * bound at once (a block of its own, mmapped: pages no record reaches
 * are never touched) and cut to what it holds when sent: no doubling,
 * no copy; when the requester's other answers leave too little room for
 * that (struct sa_table.max_bytes, but it fits max_ever), -ENOBUFS at
 * once: BUSY, with no walk.  Beyond PR_MAX_RECORDS (every pair of a
 * large subnet), or when the bound is more than the requester may hold
 * at all, the query is walked twice: the first pass counts the records
 * and stores none, so a query that ends NO_RESOURCES never held a byte
 * for them; the second allocates exactly what was counted and builds it.
 * The two passes share the request's budget, half each (the second
 * spends what the first did).  work->phase says which pass it is.
 */
#define PR_COUNT_FIRST		4096u
enum { PR_PHASE_START, PR_PHASE_BUILD, PR_PHASE_COUNT, PR_PHASE_COUNTED };

enum { PR_SID_MSB, PR_SID_LSB, PR_DGID, PR_SGID, PR_DLID, PR_SLID, PR_RAW,
       PR_RESV0, PR_FLOW_LABEL, PR_HOP_LIMIT, PR_TCLASS, PR_REVERSIBLE,
       PR_NUMB_PATH, PR_PKEY, PR_QOS_CLASS, PR_SL, PR_MTU_SEL, PR_MTU,
       PR_RATE_SEL, PR_RATE, PR_PKT_LIFE_SEL, PR_PKT_LIFE, PR_PREFERENCE };

const struct sa_field pr_fields[PR_NFIELDS] = {
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
 * use_original_extended_sa_rates_only: the rate codes up to 18 (300 Gb/s,
 * 12x EDR) are the ones older clients know; a newer code (2x widths, HDR
 * and up: 19-24) becomes the fastest of those that carries no more than
 * it, as OpenSM reduces it (ib_path_get_reduced_rate).
 */
#define RATE_ORIGINAL_MAX	18

static unsigned rate_original(unsigned code)
{
	unsigned best = 2;

	if (code <= RATE_ORIGINAL_MAX || !rate_valid(code))
		return code;
	for (unsigned c = 2; c <= RATE_ORIGINAL_MAX; c++)
		if (rate_equiv[c] && rate_equiv[c] <= rate_equiv[code] &&
		    rate_equiv[c] > rate_equiv[best])
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
	bool pkey_raw;			/* raw traffic: P_Key 0, no check */
	bool pkey_given;		/* the query names a P_Key (pkey) */
	uint16_t pkey;			/* the P_Key the pair's records carry */
	/* The QoS level of the port pair (v->qos), NULL without a policy. */
	const struct qos_level *lvl;
	/*
	 * Where the query is (the work's cursor): pos[0], pos[1] the port
	 * pair (the caller's), pos[2] the LID pair within it and pos[3] the
	 * records it gave so far (pr_port_pair()).
	 */
	uint32_t *pos;
};

struct path_parms {
	uint8_t mtu, rate, pkt_life;
	unsigned steps;			/* hops walked (work) */
	uint16_t sl_ok;			/* qos TRUE: SLs not sent to VL 15 */
};

/*
 * With qos TRUE (OpenSM's valid_sl_mask): drop from pp->sl_ok the SLs
 * that the SL-to-VL table of port `out` of node `id`, for packets in
 * from port `in`, sends to VL 15.  A table the SM does not know (never
 * read or set) drops none.  Called only with v->qos_on and v->sl2vl.
 */
static void path_sl_mask(const struct sa_view *v, int32_t id, unsigned in,
			 unsigned out, struct path_parms *pp)
{
	uint8_t tab[SL2VL_BYTES];

	if (!sl2vl_image_lookup(v->sl2vl, fabric_node(v->f, id)->guid, in,
				out, tab))
		return;
	for (unsigned sl = 0; sl < 16; sl++) {
		unsigned vl = sl % 2 ? tab[sl / 2] & 0xf : tab[sl / 2] >> 4;

		if (vl == 15)
			pp->sl_ok &= (uint16_t)~(1u << sl);
	}
}

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
	if (v->rates_original)
		rate = (uint8_t)rate_original(rate);
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
static bool path_walk(const struct sa_view *v, struct fab_ref src,
		      struct fab_ref dst, uint16_t dlid, struct path_parms *pp)
{
	const struct fabric *f = v->f;
	struct fab_ref cur = src;
	bool slvl = v->qos_on && v->sl2vl;
	int out;

	pp->mtu = MTU_MAX;
	pp->rate = 24;
	pp->steps = 1;
	pp->sl_ok = 0xffff;
	if (!path_port(v, src.node, src.port, pp))
		return false;
	if (fabric_node(f, src.node)->type == NODE_TYPE_SWITCH) {
		if ((out = lft_out(v, src.node, dlid)) < 0)
			return false;
		cur.port = (uint8_t)out;
	}
	if (slvl)
		path_sl_mask(v, cur.node, 0, cur.port, pp);
	for (unsigned hops = 0; cur.node != dst.node || cur.port != dst.port; hops++) {
		const struct fab_port *p = &fabric_node(f, cur.node)->ports[cur.port];
		struct fab_ref in = { p->peer_node, p->peer_port };

		pp->steps++;
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
		cur = (struct fab_ref){ in.node, (uint8_t)out };
		if (!path_port(v, cur.node, cur.port, pp))
			return false;
		if (slvl)
			path_sl_mask(v, cur.node, in.port, cur.port, pp);
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
static bool path_parms(const struct pr_ctx *c, struct fab_ref src,
		       struct fab_ref dst, uint16_t dlid, struct path_parms *pp)
{
	const struct qos_level *l = c->lvl;

	if (!path_walk(c->v, src, dst, dlid, pp))
		return false;
	/* The QoS level's limits come before the query's selectors, as in
	 * OpenSM: a query asking for more gets no record. */
	if (l && l->mtu_limit > 0 && pp->mtu > l->mtu_limit)
		pp->mtu = (uint8_t)l->mtu_limit;
	if (l && l->rate_limit > 0 && (unsigned)l->rate_limit < NELEM(rate_equiv) &&
	    rate_cmp(pp->rate, (unsigned)l->rate_limit) > 0)
		pp->rate = (uint8_t)l->rate_limit;
	/* 0 on a loopback path (15.2.5.16, PacketLifeTime) */
	if (src.node == dst.node && src.port == dst.port)
		pp->pkt_life = 0;
	else if (l && l->packet_life >= 0)
		pp->pkt_life = (uint8_t)l->packet_life;
	else
		pp->pkt_life = c->v->subnet_timeout & 0x3f;
	return path_select(c, pp);
}

/*
 * The P_Key part of the query, decided once before any pair: raw traffic
 * (no BTH, so no partition check: P_Key 0 in the record, as before), a
 * requested P_Key, or none (each pair gets the one its ends share).  A
 * requested P_Key whose low 15 bits are 0 names no partition (10.9.1.2:
 * the invalid P_Key) and matches no pair: the query costs nothing.
 */
static bool path_pkey(struct pr_ctx *c)
{
	uint64_t m = c->q->comp_mask;

	c->pkey_raw = false;
	c->pkey_given = false;
	if ((m & BIT(PR_RAW)) && (be32toh(c->t->hop_flow_raw) & 0x80000000u)) {
		c->pkey_raw = true;
		c->pkey = 0;
		return true;
	}
	if (m & BIT(PR_PKEY)) {
		c->pkey_given = true;
		c->pkey = be16toh(c->t->pkey);
		return FAB_PKEY_BASE(c->pkey) != 0;
	}
	c->pkey = FAB_DEFAULT_PKEY;
	return true;
}

/* Does table `t` hold partition `base`: 0 no, 1 limited, 2 full. */
static unsigned pkey_member(const struct fab_pkey_tab *t, uint16_t base)
{
	unsigned got = 0;

	for (unsigned i = 0; i < t->n && got < 2; i++) {
		uint16_t k = fabric_pkey_at(t, i);

		if (FAB_PKEY_BASE(k) == base)
			got = k & 0x8000 ? 2 : 1;
	}
	return got;
}

/*
 * OpenSM looks for a shared P_Key in the order of its per-port key map:
 * keys sorted by the 15-bit base in network byte order read as a host
 * integer, on the little-endian hosts it runs on: low byte first.  So
 * with Default (0x7fff) and 0x0002 both shared, 0x0002 comes first.
 */
static inline uint16_t osm_pkey_order(uint16_t base)
{
	return (uint16_t)((base & 0xff) << 8 | base >> 8);
}

/*
 * The P_Key of a pair whose QoS level names P_Keys and whose query names
 * none: the lowest key of the level's ranges that the ends share with a
 * full member among them, its 15 bits alone, as OpenSM's
 * osm_qos_level_get_shared_pkey() finds it (OpenSM ERR 1F1E: none).
 * Walks the source's table (a few keys), not the ranges.
 */
static int level_pkey(const struct pr_ctx *c, const struct fab_pkey_tab *a,
		      const struct fab_pkey_tab *b, uint16_t *pkey)
{
	bool found = false;
	uint16_t best = 0;

	if (!sa_charge(c->q, (a->n * (uint64_t)(a->n + b->n)) / 64))
		return -SA_STATUS_NO_RESOURCES;
	for (unsigned i = 0; i < a->n; i++) {
		uint16_t base = FAB_PKEY_BASE(fabric_pkey_at(a, i));
		unsigned ma, mb;

		if (!base || (found && base >= best) ||
		    !qos_pkey_in(&c->lvl->pkeys, base))
			continue;
		ma = pkey_member(a, base);
		mb = pkey_member(b, base);
		if (!ma || !mb || (ma < 2 && mb < 2))
			continue;
		found = true;
		best = base;
	}
	if (!found)
		return 0;
	*pkey = best;
	return 1;
}

/*
 * The P_Key of the paths between `src` and `dst` (10.9.3, 15.2.5.16):
 * they must share a partition in which at least one of them is a full
 * member; two limited members cannot talk.  A requested P_Key must be
 * such a partition (its low 15 bits; the record carries it as asked, as
 * OpenSM's does).  Without one, the shared partition OpenSM picks
 * (osm_physp_find_common_pkey(): the first in its map order, above),
 * with the source's membership bit.  The tables come from the SA's
 * index without their empty entries (a key or two per port: a pair costs
 * a few comparisons); comparisons are charged to the query's budget at
 * 64 per unit, before any path is walked (a port that claims thousands
 * of keys cannot make a pair unbounded work).
 * 1: shared (*pkey set), 0: none, -SA_STATUS_NO_RESOURCES: out of budget.
 */
static int pair_pkey(const struct pr_ctx *c, struct fab_ref src,
		     struct fab_ref dst, uint16_t *pkey)
{
	struct fab_pkey_tab a, b;
	unsigned nz = 0;
	bool found = false;
	uint16_t best = 0, key = 0;

	if (c->pkey_raw) {
		*pkey = 0;
		return 1;
	}
	if (midx_get(c->v->f) == 0) {
		/* the tables without their empty entries: a key or two */
		a.net = b.net = NULL;
		a.host = midx_port_pkeys(src, &a.n);
		b.host = midx_port_pkeys(dst, &b.n);
	} else {
		pkey_tab_of(c->v, src, &a);
		pkey_tab_of(c->v, dst, &b);
	}
	if (c->pkey_given) {
		uint16_t base = FAB_PKEY_BASE(c->pkey);
		unsigned ma, mb;

		if (!sa_charge(c->q, (a.n + b.n) / 64))
			return -SA_STATUS_NO_RESOURCES;
		ma = pkey_member(&a, base);
		mb = pkey_member(&b, base);
		if (!ma || !mb || (ma < 2 && mb < 2))
			return 0;
		/* a level with P_Keys allows only those (OpenSM ERR 1F1D) */
		if (c->lvl && c->lvl->pkeys.n &&
		    !qos_pkey_in(&c->lvl->pkeys, base))
			return 0;
		*pkey = c->pkey;
		return 1;
	}
	if (c->lvl && c->lvl->pkeys.n)
		return level_pkey(c, &a, &b, pkey);
	for (unsigned i = 0; i < a.n; i++)
		nz += FAB_PKEY_BASE(fabric_pkey_at(&a, i)) != 0;
	if (!sa_charge(c->q, (a.n + (uint64_t)nz * (a.n + b.n)) / 64))
		return -SA_STATUS_NO_RESOURCES;
	for (unsigned i = 0; i < a.n; i++) {
		uint16_t k = fabric_pkey_at(&a, i), base = FAB_PKEY_BASE(k);
		unsigned ma = k & 0x8000 ? 2 : 1, mb;

		if (!base || (found && osm_pkey_order(base) >= best))
			continue;
		mb = pkey_member(&b, base);
		if (ma < 2)
			ma = pkey_member(&a, base);	/* a full entry later? */
		if (!mb || (ma < 2 && mb < 2))
			continue;
		found = true;
		best = osm_pkey_order(base);
		key = (uint16_t)(base | (ma == 2 ? 0x8000 : 0));
	}
	if (!found)
		return 0;
	*pkey = key;
	return 1;
}

/* Can PacketLifeTime `life` pass the query's selector? */
static bool pkt_life_possible(const struct pr_ctx *c, unsigned life)
{
	struct path_parms pp = { .mtu = MTU_MAX, .rate = 24,
				 .pkt_life = (uint8_t)life };
	struct sa_query q = *c->q;
	struct pr_ctx one = *c;

	q.comp_mask &= BIT(PR_PKT_LIFE_SEL) | BIT(PR_PKT_LIFE);
	one.q = &q;
	return path_select(&one, &pp);
}

/*
 * The checks that need no path: false when no pair of ends can give a
 * record, whatever the paths are.  An invalid P_Key (above); an MTU selector
 * asking for more than 4096 or less than 256; a rate selector asking for
 * more than the fastest rate or less than the slowest; a PacketLifeTime
 * selector that neither a loopback path (0) nor any other (SubnetTimeout)
 * passes.  Sets c->pkey.
 */
static bool pr_possible(struct pr_ctx *c)
{
	uint64_t m = c->q->comp_mask;
	const struct sa_path_record *t = c->t;

	if (!path_pkey(c))
		return false;
	/* A requested P_Key no end port is a full member of: no pair can
	 * share it, and the query costs no pair (a GetTable for such a key
	 * over every pair is the cheapest way to keep the SA busy).
	 * Without the index (no memory) the pairs decide. */
	if (c->pkey_given && midx_get(c->v->f) == 0 &&
	    !midx_pkey_full(c->pkey))
		return false;
	if ((m & BIT(PR_MTU_SEL)) && (m & BIT(PR_MTU))) {
		unsigned sel = t->mtu >> 6, want = t->mtu & 0x3f;

		if ((sel == SEL_GT && want >= MTU_MAX) ||
		    (sel == SEL_LT && want <= MTU_MIN))
			return false;
	}
	if ((m & BIT(PR_RATE_SEL)) && (m & BIT(PR_RATE))) {
		unsigned sel = t->rate >> 6, want = t->rate & 0x3f;
		bool faster = false;

		for (unsigned r = 2; r < NELEM(rate_equiv); r++)
			faster |= rate_valid(r) && rate_cmp(r, want) > 0;
		if ((sel == SEL_GT && !faster) ||
		    (sel == SEL_LT && !rate_below(want)))
			return false;
	}
	/* a QoS level may give another lifetime: the pairs decide */
	return c->v->qos || pkt_life_possible(c, 0) ||
	       pkt_life_possible(c, c->v->subnet_timeout & 0x3f);
}

static void port_gid(const struct sa_view *v, struct fab_ref r, uint8_t gid[16])
{
	uint64_t prefix = htobe64(v->subnet_prefix);
	uint64_t guid = htobe64(fabric_node(v->f, r.node)->ports[r.port].guid);

	memcpy(gid, &prefix, 8);
	memcpy(gid + 8, &guid, 8);
}

/*
 * The SL of the paths from `src` to `dlid` when the routing engine split
 * the paths into virtual layers (routing.h): the layer of the path from
 * the switch the packet enters the fabric at (the switch `src` hangs off,
 * or `src` itself when it is a switch's port 0) to `dlid`.  That SL maps
 * to the layer's VL on every port (sm/program/sl2vl.c, SLtoVLMappingTable), so
 * a host that uses it keeps its traffic on a VL whose channel dependency
 * graph is acyclic.  With QoS classes too, the SL of that layer within
 * the class of the path's QoS SL `qos_sl` (routing_path_sl()).  -1
 * without layers: the SL is what it was before (0, or the one the query
 * asks for).
 */
static int path_layer_sl(const struct sa_view *v, struct fab_ref src,
			 uint16_t dlid, unsigned qos_sl)
{
	const struct routing_result *rr = v->routes;
	const struct fab_node *n = fabric_node(v->f, src.node);
	int32_t sw = src.node;

	if (!rr || !rr->n_layers || !rr->sl || rr->n_nodes != v->f->n_nodes)
		return -1;
	if (n->type != NODE_TYPE_SWITCH) {
		const struct fab_port *p = &n->ports[src.port];

		if (p->peer_node == FAB_NONE ||
		    (size_t)p->peer_node >= v->f->n_nodes ||
		    fabric_node(v->f, p->peer_node)->type != NODE_TYPE_SWITCH)
			return -1;
		sw = p->peer_node;
	}
	return (int)routing_path_sl(rr, qos_sl, sw, dlid);
}

/* The components the record must still agree on once it is built (the
 * P_Key is pair_pkey()'s: raw traffic answers 0 whatever was asked). */
#define PR_MATCHED	(BIT(PR_DLID) | BIT(PR_SLID) | BIT(PR_SL))

/*
 * The SL of the pair's records, as OpenSM chooses it: the one the query
 * asks for (-1, no record, when the pair's QoS level gives another:
 * OpenSM ERR 1F1F); else the level's; else the SL of the partition of
 * the record's P_Key (partitions.conf sl=, 0 by default).
 */
static int pr_sl(const struct pr_ctx *c)
{
	const struct qos_level *l = c->lvl;

	if (c->q->comp_mask & BIT(PR_SL)) {
		int want = be16toh(c->t->qos_class_sl) & 0xf;

		return l && l->sl >= 0 && l->sl != want ? -1 : want;
	}
	if (l && l->sl >= 0)
		return l->sl;
	if (c->v->part_sl && c->pkey)
		return c->v->part_sl[FAB_PKEY_BASE(c->pkey)];
	return 0;
}

/*
 * The QoS level of the port pair (NULL without a policy): matched on the
 * ends, the ServiceID (when both halves are given), the P_Key and the
 * QoSClass of the query (qos/match.c).
 */
static const struct qos_level *pr_level(const struct pr_ctx *c,
					struct fab_ref src, struct fab_ref dst)
{
	const struct qos_policy *p = c->v->qos;
	const struct fab_node *sn = fabric_node(c->v->f, src.node);
	const struct fab_node *dn = fabric_node(c->v->f, dst.node);
	uint64_t m = c->q->comp_mask;
	struct qos_query qq = {
		.src_guid = fabric_endport_of(sn, src.port)->guid,
		.dst_guid = fabric_endport_of(dn, dst.port)->guid,
		.src_type = sn->type, .dst_type = dn->type,
		.service_id = be64toh(c->t->service_id),
		.pkey = be16toh(c->t->pkey),
		.qos_class = be16toh(c->t->qos_class_sl) >> 4,
		.has_sid = (m & BIT(PR_SID_MSB)) && (m & BIT(PR_SID_LSB)),
		.has_pkey = m & BIT(PR_PKEY),
		.has_class = m & BIT(PR_QOS_CLASS),
	};

	return &p->levels[qos_match(p, c->v->qos_members, &qq, NULL)];
}

/* One record for (slid, dlid), when the path exists and qualifies. */
static int pr_lid_pair(struct pr_ctx *c, struct fab_ref src,
		       struct fab_ref dst, uint16_t slid, uint16_t dlid,
		       uint8_t preference, bool *added)
{
	const struct sa_query *q = c->q;
	struct path_parms fwd, rev;
	struct sa_path_record r;
	bool reversible, ok;
	int sl, layer_sl;

	*added = false;
	ok = path_parms(c, src, dst, dlid, &fwd);
	if (!sa_charge(q, 1 + fwd.steps))
		return -SA_STATUS_NO_RESOURCES;
	if (!ok)
		return 0;
	reversible = path_parms(c, dst, src, slid, &rev);
	if (!sa_charge(q, rev.steps))
		return -SA_STATUS_NO_RESOURCES;
	if ((q->comp_mask & BIT(PR_REVERSIBLE)) &&
	    (c->t->num_path & PR_REVERSIBLE_BIT) && !reversible)
		return 0;
	memset(&r, 0, sizeof(r));
	port_gid(c->v, dst, r.dgid);
	port_gid(c->v, src, r.sgid);
	r.dlid = htobe16(dlid);
	r.slid = htobe16(slid);
	r.num_path = reversible ? PR_REVERSIBLE_BIT : 0;
	r.pkey = htobe16(c->pkey);
	/* qos TRUE: an SL the path sends to VL 15 gets no record (OpenSM
	 * ERR 1F24), nor does a path that leaves no SL */
	if ((sl = pr_sl(c)) < 0 || !(fwd.sl_ok & (1u << sl)))
		return 0;
	/* With layers the SL is the layer's (within the class of the QoS
	 * SL when QoS classes share the VLs): a query asking for another SL
	 * gets no record (OpenSM's dfsssp answers the same, ERR 1F2A). */
	layer_sl = path_layer_sl(c->v, src, dlid, (unsigned)sl);
	if (layer_sl >= 0)
		sl = layer_sl;
	r.qos_class_sl = htobe16((uint16_t)sl);
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
static bool pr_lids(const struct pr_ctx *c, struct fab_ref r, int bit,
		    uint16_t lid, uint16_t *lo, uint16_t *hi)
{
	const struct fab_port *p = &fabric_node(c->v->f, r.node)->ports[r.port];

	if (!p->lid)
		return false;
	if (c->q->comp_mask & BIT(bit)) {
		if (!fabric_lid_in_range(p, lid))
			return false;
		*lo = *hi = lid;
	} else {
		*lo = p->lid;
		*hi = fabric_lid_top(p);
	}
	return true;
}

/*
 * The paths between two end ports, best first, as OpenSM orders them:
 * first the LID pairs that step through both LMC ranges together
 * (preference 0: disjoint from each other), then every other pair
 * (preference 2), at most `iterations` of them.  The pairs are numbered
 * k = 0.. in that order, so that a query resumes at c->pos[2] with
 * c->pos[3] records given: SA_MORE when the slice is spent (the pair to
 * go on with saved), 0 when this port pair is done (cursor reset).
 */
static int pr_port_pair(struct pr_ctx *c, struct fab_ref src,
			struct fab_ref dst)
{
	uint16_t slo, shi, dlo, dhi;
	uint32_t *k = &c->pos[2], *n = &c->pos[3], ns, nd, diag, total;
	bool added, first = true;
	int rc;

	c->lvl = c->v->qos ? pr_level(c, src, dst) : NULL;
	/* Ports in no common partition have no path: decided before the
	 * LIDs and any walk (the tables are small). */
	if ((rc = pair_pkey(c, src, dst, &c->pkey)) <= 0) {
		*k = *n = 0;
		return rc;
	}
	if (!pr_lids(c, src, PR_SLID, be16toh(c->t->slid), &slo, &shi) ||
	    !pr_lids(c, dst, PR_DLID, be16toh(c->t->dlid), &dlo, &dhi)) {
		*k = *n = 0;
		return 0;
	}
	ns = (uint32_t)(shi - slo) + 1;
	nd = (uint32_t)(dhi - dlo) + 1;
	diag = ns < nd ? ns : nd;
	total = diag + ns * nd;
	for (; *k < total && *n < c->iterations; ++*k) {
		uint32_t s, d, e = *k - diag;
		uint8_t pref = 0;

		if (*k < diag) {
			s = *k;
			d = *k;
		} else {
			s = e / nd;
			d = e % nd;
			if (s == d)
				continue;	/* a preference 0 pair */
			pref = 2;
		}
		/* at least one pair per call: a slice always gets on */
		if (!first && sa_slice_over(c->q))
			return SA_MORE;
		first = false;
		if ((rc = pr_lid_pair(c, src, dst, (uint16_t)(slo + s),
				      (uint16_t)(dlo + d), pref, &added)) < 0)
			return rc;
		*n += added;
	}
	*k = *n = 0;
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
		       int lid_bit, uint16_t lid, struct fab_ref *r)
{
	uint64_t guid;
	int rc;

	if (c->q->comp_mask & BIT(gid_bit)) {
		if (gid[0] == 0xff || !gid_local(c->v, gid))
			return -ENOENT;	/* multicast groups, routers: none */
		memcpy(&guid, gid + 8, 8);
		rc = midx_guid_lookup(c->v->f, be64toh(guid), r);
	} else if (c->q->comp_mask & BIT(lid_bit)) {
		rc = midx_lid_lookup(c->v->f, lid, r);
	} else {
		return 0;
	}
	return rc < 0 ? rc : rc ? 1 : -ENOENT;
}

/* The LIDs a query may use at end `r` (pr_lids()), 0 when none; bit < 0:
 * an open end, its whole LMC range. */
static uint64_t pr_nlids(const struct pr_ctx *c, struct fab_ref r, int bit,
			 uint16_t lid)
{
	const struct fab_port *p = &fabric_node(c->v->f, r.node)->ports[r.port];
	uint16_t lo, hi;

	if (bit < 0)
		return p->lid ? 1u << (p->lmc & 7) : 0;
	return pr_lids(c, r, bit, lid, &lo, &hi) ? (uint64_t)(hi - lo) + 1 : 0;
}

/*
 * At most how many records a query with an open end gives: the LID pairs
 * of its ends (an open end has every LID of every end port), or port
 * pairs x NumbPath when that is less.
 */
static uint64_t pr_bound(const struct pr_ctx *c, const struct fab_ref *src,
			 const struct fab_ref *dst)
{
	uint64_t all = 0, ns, nd, ps, pd;

	for (size_t i = 0; i < midx_cur.n_ends; i++)
		all += pr_nlids(c, midx_cur.ends[i], -1, 0);
	ns = src ? pr_nlids(c, *src, PR_SLID, be16toh(c->t->slid)) : all;
	nd = dst ? pr_nlids(c, *dst, PR_DLID, be16toh(c->t->dlid)) : all;
	ps = src ? 1 : midx_cur.n_ends;
	pd = dst ? 1 : midx_cur.n_ends;
	if (ps * pd * c->iterations < ns * nd)
		return ps * pd * c->iterations;
	return ns * nd;
}

/*
 * How to build a table with an open end (see PR_COUNT_FIRST): as it
 * comes, at its bound at once, or counted first with half the budget.
 * 0 or -ENOMEM.
 */
static int pr_plan(struct pr_ctx *c, const struct fab_ref *src,
		   const struct fab_ref *dst)
{
	struct sa_work *w = c->q->work;
	uint64_t bound = pr_bound(c, src, dst);
	int rc;

	w->phase = PR_PHASE_BUILD;
	if (bound <= PR_COUNT_FIRST)
		return 0;
	if (bound <= PR_MAX_RECORDS) {
		if ((rc = sa_table_reserve(c->out, bound)) != -ENOBUFS)
			return rc;
		/* It would fit were the requester's other answers gone:
		 * BUSY now (ask again), not a walk to find out. */
		if (c->out->max_ever && c->out->wanted <= c->out->max_ever)
			return rc;
	}
	w->phase = PR_PHASE_COUNT;
	c->out->count_only = true;
	w->full_budget = w->budget;
	if (w->budget && w->budget > w->used)
		w->budget = w->used + (w->budget - w->used) / 2;
	return 0;
}

/*
 * The first pass of a counted table is over (see PR_COUNT_FIRST): make
 * room for exactly the records it counted and start the second.
 */
static int pr_counted(const struct sa_query *q, struct sa_table *out)
{
	struct sa_work *w = q->work;
	size_t n = out->count;
	int rc;

	out->count = 0;
	out->count_only = false;
	if (!n)
		return 0;
	if ((rc = sa_table_reserve(out, n)) < 0)
		return rc;
	memset(w->pos, 0, sizeof(w->pos));
	w->phase = PR_PHASE_COUNTED;
	w->budget = w->full_budget;	/* the first spent at most half */
	return SA_MORE;
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
 * value); an MTU or Rate value that is not one is REQ_INVALID.
 *
 * With a QoS policy in force (qos TRUE and qos_policy_file, v->qos),
 * each port pair's level (qos/match.c: the ends, the ServiceID when both
 * halves are given, the P_Key and the QoSClass of the request) limits
 * the MTU and rate before the selectors act, gives the PacketLifeTime,
 * restricts the P_Key to the level's (a requested one outside them, or
 * none shared: no record) and gives the SL; a requested SL other than
 * the level's gets no record.  Without a level's SL the record has the
 * SL of its P_Key's partition (partitions.conf sl=, taken with qos TRUE
 * as in OpenSM: v->part_sl), else 0.
 * A deadlock-free routing's layer SL comes last, as OpenSM's path_sl.
 * FlowLabel, HopLimit, TClass and Preference in the request are ignored;
 * answers carry QoSClass 0, HopLimit 0 (no router is crossed).
 */
int gen_path_record(const struct sa_view *v, const struct sa_query *q,
		    struct sa_table *out)
{
	const struct sa_path_record *t = (const void *)q->tmpl;
	uint32_t local[4] = { 0 };
	struct pr_ctx c = { .v = v, .q = q, .t = t, .out = out,
			    .get = q->method == MAD_METHOD_GET,
			    .pos = cursor_of(q, local) };
	uint32_t *j = &c.pos[0], *i = &c.pos[1];
	struct fab_ref src, dst;
	int has_src, has_dst, rc = 0;
	size_t nj, ni;

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
	/* No path to walk when no pair could give a record. */
	if (!c.iterations || !pr_possible(&c))
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
	 * outermost; each port pair costs a unit even when its LIDs rule
	 * it out.
	 */
	if ((rc = midx_get(v->f)) < 0)
		return rc;
	if (q->work && q->work->phase == PR_PHASE_START && !c.get &&
	    (rc = pr_plan(&c, has_src ? &src : NULL, has_dst ? &dst : NULL)) < 0)
		return rc;
	nj = has_dst ? 1 : midx_cur.n_ends;
	ni = has_src ? 1 : midx_cur.n_ends;
	for (; *j < nj && !pr_done(&c); ++*j, *i = 0) {
		struct fab_ref b = has_dst ? dst : midx_cur.ends[*j];

		for (; *i < ni && !pr_done(&c); ++*i) {
			if (sa_slice_over(q))
				return SA_MORE;
			if (!sa_charge(q, 1))
				return -SA_STATUS_NO_RESOURCES;
			rc = pr_port_pair(&c, has_src ? src : midx_cur.ends[*i], b);
			if (rc != 0)
				return rc;
		}
	}
	if (q->work && q->work->phase == PR_PHASE_COUNT)
		return pr_counted(q, out);
	return 0;
}


/* ------------------------------------------------------------------ */
/* MultiPathRecord (15.2.5.20)                                          */

enum { MPR_RAW, MPR_RESV0, MPR_FLOW_LABEL, MPR_HOP_LIMIT, MPR_TCLASS,
       MPR_REVERSIBLE, MPR_NUMB_PATH, MPR_PKEY, MPR_QOS_CLASS, MPR_SL,
       MPR_MTU_SEL, MPR_MTU, MPR_RATE_SEL, MPR_RATE, MPR_PKT_LIFE_SEL,
       MPR_PKT_LIFE, MPR_SID_MSB, MPR_INDEP_SEL, MPR_RESV3, MPR_SGID_COUNT,
       MPR_DGID_COUNT, MPR_SID_LSB };

const struct sa_field mpr_fields[MPR_NFIELDS] = {
	FLD(0, 1),	/* 0 RawTraffic */
	FLD(1, 3),	/* 1 Reserved */
	FLD(4, 20),	/* 2 FlowLabel */
	FLD(24, 8),	/* 3 HopLimit */
	FLD(32, 8),	/* 4 TClass */
	FLD(40, 1),	/* 5 Reversible */
	FLD(41, 7),	/* 6 NumbPath */
	FLD(48, 16),	/* 7 P_Key */
	FLD(64, 12),	/* 8 QoSClass */
	FLD(76, 4),	/* 9 SL */
	FLD(80, 2),	/* 10 MTUSelector */
	FLD(82, 6),	/* 11 MTU */
	FLD(88, 2),	/* 12 RateSelector */
	FLD(90, 6),	/* 13 Rate */
	FLD(96, 2),	/* 14 PacketLifeTimeSelector */
	FLD(98, 6),	/* 15 PacketLifeTime */
	FLD(104, 8),	/* 16 ServiceID (bits 63-56) */
	FLD(112, 2),	/* 17 IndependenceSelector */
	FLD(114, 6),	/* 18 Reserved */
	FLD(120, 8),	/* 19 SGIDCount */
	FLD(128, 8),	/* 20 DGIDCount */
	FLD(136, 56),	/* 21 ServiceID (bits 55-0) */
};

/*
 * MultiPathRecord components that mean what the PathRecord component of
 * the same name does: the request is turned into a PathRecord query and
 * answered by the PathRecord code, one SGID/DGID pair at a time.
 */
static const struct { uint8_t mpr, pr; } mpr_to_pr[] = {
	{ MPR_RAW, PR_RAW }, { MPR_FLOW_LABEL, PR_FLOW_LABEL },
	{ MPR_HOP_LIMIT, PR_HOP_LIMIT }, { MPR_TCLASS, PR_TCLASS },
	{ MPR_REVERSIBLE, PR_REVERSIBLE }, { MPR_NUMB_PATH, PR_NUMB_PATH },
	{ MPR_PKEY, PR_PKEY }, { MPR_QOS_CLASS, PR_QOS_CLASS },
	{ MPR_SL, PR_SL }, { MPR_MTU_SEL, PR_MTU_SEL }, { MPR_MTU, PR_MTU },
	{ MPR_RATE_SEL, PR_RATE_SEL }, { MPR_RATE, PR_RATE },
	{ MPR_PKT_LIFE_SEL, PR_PKT_LIFE_SEL }, { MPR_PKT_LIFE, PR_PKT_LIFE },
	{ MPR_SID_MSB, PR_SID_MSB }, { MPR_SID_LSB, PR_SID_LSB },
};

/*
 * The end port of one GID of the request: 1, or -SA_STATUS_INVALID_GID
 * for a GID that names no end port of this subnet (multicast, another
 * subnet's prefix, an unknown GUID), or -ENOMEM.
 */
static int mpr_gid(const struct sa_view *v, const uint8_t gid[16],
		   struct fab_ref *r)
{
	uint64_t guid;
	int rc;

	if (gid[0] == 0xff || !gid_local(v, gid))
		return -SA_STATUS_INVALID_GID;
	memcpy(&guid, gid + 8, 8);
	rc = midx_guid_lookup(v->f, be64toh(guid), r);
	return rc < 0 ? rc : rc ? 1 : -SA_STATUS_INVALID_GID;
}

/*
 * MultiPathRecord (SubnAdmGetMulti): the PathRecords from each of the
 * SGIDCount source GIDs to each of the DGIDCount destination GIDs, sources
 * outermost, each pair's paths best first as PathRecord gives them (with
 * LMC, the LID pairs that step through both ranges together come first:
 * distinct SLID/DLID pairs).  NumbPath bounds the whole answer, as in
 * OpenSM; without it every LID pair of every GID pair is returned.  The
 * selectors, P_Key, SL and Reversible act as for PathRecord.
 *
 * IndependenceSelector is accepted and not acted on beyond that ordering
 * (distinct LID pairs first): the paths are not checked for sharing
 * links or switches.  ServiceID, P_Key and QoSClass select the QoS level
 * as for PathRecord; FlowLabel, HopLimit and TClass are ignored.
 *
 * The GID list is untrusted: q->tmpl_len is the payload the request
 * carried (from its RMPP PayloadLength), and counts that reach beyond it
 * are REQ_INVALID, as are counts of 0.  Missing counts are
 * INSUF_COMPONENTS; a GID that names no port here is INVALID_GID.
 */
int gen_multipath_record(const struct sa_view *v, const struct sa_query *q,
			 struct sa_table *out)
{
	const struct sa_multipath_record *m = (const void *)q->tmpl;
	const uint8_t (*gids)[16];
	struct sa_path_record t;
	struct sa_query pq = *q;
	uint32_t local[4] = { 0 };
	struct pr_ctx c = { .v = v, .q = &pq, .t = &t, .out = out,
			    .pos = cursor_of(q, local) };
	unsigned ns, nd, limit;
	int rc = 0;

	if (q->tmpl_len < SA_MPR_FIXED_SIZE)
		return -SA_STATUS_REQ_INVALID;
	if (!(q->comp_mask & BIT(MPR_SGID_COUNT)) ||
	    !(q->comp_mask & BIT(MPR_DGID_COUNT)))
		return -SA_STATUS_INSUF_COMPONENTS;
	ns = m->sgid_count;
	nd = m->dgid_count;
	if (!ns || !nd ||
	    SA_MPR_FIXED_SIZE + (size_t)(ns + nd) * 16 > q->tmpl_len)
		return -SA_STATUS_REQ_INVALID;
	gids = (const void *)(q->tmpl + SA_MPR_FIXED_SIZE);

	/* The same query as a PathRecord template. */
	memset(&t, 0, sizeof(t));
	t.hop_flow_raw = m->hop_flow_raw;
	t.tclass = m->tclass;
	t.num_path = m->num_path;
	t.pkey = m->pkey;
	t.qos_class_sl = m->qos_class_sl;
	t.mtu = m->mtu;
	t.rate = m->rate;
	t.pkt_life = m->pkt_life;
	{
		uint64_t sid = m->service_id_msb;

		for (unsigned i = 0; i < 7; i++)
			sid = sid << 8 | m->service_id_lsb[i];
		t.service_id = htobe64(sid);
	}
	pq.comp_mask = 0;
	for (size_t i = 0; i < NELEM(mpr_to_pr); i++)
		if (q->comp_mask & BIT(mpr_to_pr[i].mpr))
			pq.comp_mask |= BIT(mpr_to_pr[i].pr);
	if (!pr_selectors_valid(&pq, &t))
		return -SA_STATUS_REQ_INVALID;

	/* Every GID first: one that is not here fails the whole request. */
	for (unsigned i = 0; i < ns + nd; i++) {
		struct fab_ref r;

		if ((rc = mpr_gid(v, gids[i], &r)) < 0)
			return rc;
	}
	rc = 0;
	if (!pr_possible(&c))
		return 0;
	limit = q->comp_mask & BIT(MPR_NUMB_PATH) ? m->num_path & 0x7f : ~0u;
	for (uint32_t *s = &c.pos[0]; *s < ns; ++*s, c.pos[1] = 0) {
		for (uint32_t *d = &c.pos[1]; *d < nd; ++*d) {
			struct fab_ref src, dst;

			if (out->count >= limit)
				return 0;
			if (!sa_charge(q, 1))
				return -SA_STATUS_NO_RESOURCES;
			if ((rc = mpr_gid(v, gids[*s], &src)) < 0 ||
			    (rc = mpr_gid(v, gids[ns + *d], &dst)) < 0)
				return rc;
			/* out->count holds the pair's records so far (pos[3]) */
			c.iterations = limit - (unsigned)(out->count - c.pos[3]);
			if ((rc = pr_port_pair(&c, src, dst)) != 0)
				return rc;
		}
	}
	return 0;
}

/* For MCMemberRecord (sm/sa/mcmember.c): the same rate order and port
 * rates as paths use. */
bool sa_rate_valid(unsigned code)
{
	return rate_valid(code);
}

int sa_rate_cmp(unsigned a, unsigned b)
{
	return rate_cmp(a, b);
}

unsigned sa_rate_below(unsigned code)
{
	return rate_below(code);
}

unsigned sa_rate_original(unsigned code)
{
	return rate_original(code);
}

uint8_t sa_port_rate(const struct fab_node *n, unsigned pn)
{
	return port_rate(n, pn);
}
