/*
 * precreate.c - the groups partitions.conf asks for (see mc_precreate()
 * in mcast.h), made as OpenSM 3.3.23 makes them in osm_prtn_config.c and
 * osm_prtn.c: at start, and again after each partitions reload.  No I/O,
 * no logging: the daemon (sm/sa/mcmember.c) logs the report.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "partitions/partitions.h"
#include "sm/mcast/mcast.h"

/* OpenSM's defaults (osm_base.h): OSM_DEFAULT_MGRP_RATE, _MTU, _SCOPE,
 * OSM_IPOIB_BROADCAST_MGRP_QKEY. */
#define PC_DEF_RATE		3	/* 10 Gb/s */
#define PC_DEF_MTU		4	/* 2048 */
#define PC_DEF_SCOPE		2	/* link-local */
#define PC_IPOIB_QKEY		0x0b1b
#define PC_MAX_HOP		0xff

struct pc_params {
	uint16_t pkey;			/* full bit set */
	uint32_t qkey, flow_label;
	uint8_t  rate, mtu, sl, scope, tclass;
};

/* ff12:401b:ffff::ffff:ffff, OpenSM's osm_ipoib_broadcast_mgid. */
static const uint8_t ipv4_bcast[16] = {
	0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0,
	0xff, 0xff, 0xff, 0xff,
};

static bool mgid_is_ip(const uint8_t mgid[16])
{
	return (mgid[2] == 0x40 || mgid[2] == 0x60) && mgid[3] == 0x1b;
}

static void set_params(struct mc_group *g, const struct pc_params *p,
		       uint8_t pkt_life)
{
	g->pkey = p->pkey;
	g->qkey = p->qkey;
	g->mtu = p->mtu;
	g->rate = p->rate;
	g->pkt_life = pkt_life & 0x3f;
	g->sl = p->sl;
	g->scope = p->scope;
	g->tclass = p->tclass;
	g->flow_label = p->flow_label & 0xfffff;
	g->hop_limit = p->scope == PC_DEF_SCOPE ? 0 : PC_MAX_HOP;
}

/* The group already has what the partition now gives it. */
static bool same_params(const struct mc_group *g, const struct pc_params *p,
			uint8_t pkt_life)
{
	struct mc_group w = *g;

	set_params(&w, p, pkt_life);
	return w.pkey == g->pkey && w.qkey == g->qkey && w.mtu == g->mtu &&
	       w.rate == g->rate && w.pkt_life == g->pkt_life &&
	       w.sl == g->sl && w.scope == g->scope && w.tclass == g->tclass &&
	       w.flow_label == g->flow_label && w.hop_limit == g->hop_limit;
}

/*
 * The group with `mgid` exists and is pre-created, with the parameters
 * `p` gives.  An existing group with other parameters takes them when it
 * has no member; one with members keeps its own until it is empty
 * (counted in r->stale: OpenSM's find_or_create never changes it).
 * *seen marks the groups of this pass.  0, or -ENOBUFS / -ENOSPC / -ENOMEM from mc_group_create().
 */
static int ensure(struct mc_table *t, uint8_t mgid[16],
		  const struct pc_params *p, uint8_t pkt_life,
		  struct mc_group ***seen, size_t *n_seen,
		  struct mc_precreate_report *r)
{
	struct mc_group *g, **ns;
	int err;

	/* 15.2.5.17: the MCMemberRecord's Scope and the MGID's agree. */
	mgid[1] = (uint8_t)((mgid[1] & 0xf0) | (p->scope & 0xf));
	g = mc_find(t, mgid);
	if (g && same_params(g, p, pkt_life)) {
		r->kept++;
	} else if (g && g->n_members) {
		/* Its members joined with these parameters (an IPoIB
		 * interface's MTU is the group's): they stay until the group
		 * is empty; counted and told. */
		r->kept++;
		if (!r->stale++) {
			memcpy(r->first_stale, mgid, 16);
			r->stale_mtu = g->mtu;
			r->stale_rate = g->rate;
			r->want_mtu = p->mtu;
			r->want_rate = p->rate;
		}
	} else {
		if (g) {
			r->updated++;	/* no member: the new parameters */
		} else {
			g = mc_group_create(t, mgid, &err);
			if (!g)
				return err;
			r->created++;
		}
		set_params(g, p, pkt_life);
	}
	g->precreated = true;
	ns = realloc(*seen, (*n_seen + 1) * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	ns[(*n_seen)++] = g;
	*seen = ns;
	return 0;
}

static void note_skip(struct mc_precreate_report *r, const uint8_t mgid[16],
		      unsigned *counter)
{
	if (!r->skipped && !r->failed)
		memcpy(r->first_skipped, mgid, 16);
	(*counter)++;
}

int mc_precreate(struct mc_table *t, const struct part_config *c,
		 uint8_t pkt_life, struct mc_precreate_report *r)
{
	return mc_precreate_qos(t, c, pkt_life, false, r);
}

int mc_precreate_qos(struct mc_table *t, const struct part_config *c,
		     uint8_t pkt_life, bool qos, struct mc_precreate_report *r)
{
	struct mc_group **before = NULL, **seen = NULL;
	size_t n_before = 0, n_seen = 0;
	int rc = 0;

	memset(r, 0, sizeof(*r));
	/* The groups pre-created so far: those not named again lose it. */
	for (size_t i = 0; i < mc_table_count(t); i++) {
		struct mc_group *g = mc_table_at(t, i), **nb;

		if (!g->precreated)
			continue;
		nb = realloc(before, (n_before + 1) * sizeof(*nb));
		if (!nb) {
			free(before);
			return -ENOMEM;
		}
		before = nb;
		before[n_before++] = g;
	}
	for (size_t i = 0; c && i < c->n_parts && rc != -ENOMEM; i++) {
		const struct part *pt = &c->parts[i];
		struct pc_params base = {
			.pkey = (uint16_t)(pt->pkey | PART_FULL_BIT),
			.rate = pt->rate ? pt->rate : PC_DEF_RATE,
			.mtu = pt->mtu ? pt->mtu : PC_DEF_MTU,
			/* without QoS OpenSM uses OSM_DEFAULT_SL */
			.sl = qos ? pt->sl : 0,
			.tclass = pt->tclass,
			.flow_label = pt->flow_label,
		};
		uint8_t mgid[16];
		int err;

		if (pt->ipoib) {
			/* The broadcast group ignores the partition's scope:
			 * OpenSM builds it with scope 0, i.e. link-local. */
			struct pc_params p = base;

			p.scope = PC_DEF_SCOPE;
			p.qkey = pt->qkey ? pt->qkey : PC_IPOIB_QKEY;
			memcpy(mgid, ipv4_bcast, 16);
			mgid[4] = (uint8_t)(p.pkey >> 8);
			mgid[5] = (uint8_t)p.pkey;
			err = ensure(t, mgid, &p, pkt_life, &seen, &n_seen, r);
			if (err == -ENOMEM)
				rc = err;
			else if (err)
				note_skip(r, mgid, &r->failed);
		}
		for (size_t k = 0; k < pt->n_mgroups && rc != -ENOMEM; k++) {
			const struct part_mgroup *m = &pt->mgroups[k];
			struct pc_params p = base;

			memcpy(mgid, m->mgid, 16);
			p.rate = m->rate ? m->rate : PC_DEF_RATE;
			p.mtu = m->mtu ? m->mtu : PC_DEF_MTU;
			p.scope = m->scope ? m->scope : PC_DEF_SCOPE;
			p.qkey = m->qkey;
			p.tclass = m->tclass;
			p.flow_label = m->flow_label;
			/* An SL on the mgid= line itself is kept (without
			 * QoS the partition's is overridden, as above). */
			p.sl = qos || m->sl != pt->sl ? m->sl : 0;
			if (mgid[0] != 0xff) {
				note_skip(r, mgid, &r->skipped);
				continue;
			}
			if (mgid_is_ip(mgid)) {
				/* IPoIB groups: the partition's own P_Key (or
				 * none, or the default broadcast MGID), its
				 * broadcast rate and MTU; Q_Key 0x0b1b. */
				uint16_t mk = (uint16_t)(mgid[4] << 8 | mgid[5]);

				if ((memcmp(mgid, ipv4_bcast, 16) && mk &&
				     mk != p.pkey) || p.rate != base.rate ||
				    p.mtu != base.mtu) {
					note_skip(r, mgid, &r->skipped);
					continue;
				}
				mgid[4] = (uint8_t)(p.pkey >> 8);
				mgid[5] = (uint8_t)p.pkey;
				if (!p.qkey)
					p.qkey = PC_IPOIB_QKEY;
			}
			err = ensure(t, mgid, &p, pkt_life, &seen, &n_seen, r);
			if (err == -ENOMEM)
				rc = err;
			else if (err)
				note_skip(r, mgid, &r->failed);
		}
	}
	/* Pre-created before, not now: an ordinary group from here on,
	 * deleted at once when no member holds full membership. */
	for (size_t i = 0; rc == 0 && i < n_before; i++) {
		struct mc_group *g = before[i];
		bool again = false;

		for (size_t k = 0; k < n_seen && !again; k++)
			again = seen[k] == g;
		if (again)
			continue;
		g->precreated = false;
		r->released++;
		if (!g->n_full) {
			while (g->n_members)
				mc_member_remove(t, g, g->members[0].port_guid);
			mc_group_delete(t, g);
			r->deleted++;
		}
	}
	free(before);
	free(seen);
	return rc;
}
