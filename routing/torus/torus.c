/*
 * torus.c - the "torus" engine: dimension-order routing on 2D/3D tori and
 * meshes, deadlock-free with a dateline per ring (the scheme of OpenSM's
 * torus-2QoS, see its doc/current-routing.txt; this code is ibsm's own).
 *
 * Routing: a packet at switch m for a LID of switch t corrects the first
 * dimension (x, then y, then z) in which m and t differ, along the ring
 * or line of that dimension, the shorter way that is whole (links up,
 * switches present); equal ways alternate by LID and position.  Every
 * decision depends on (m, LID) alone, as a forwarding table needs.
 *
 * Deadlock freedom, pristine: a path's SL has bit d set when it crosses
 * the dateline (the wrap-around link) of dimension d; every hop leaving
 * by a port of dimension d travels on VL (SL >> d) & 1 (the SL-to-VL
 * table of each output port says so).  On a ring, minimal paths are at
 * most half the ring long, so the crossing ones (VL 1) never cover the
 * whole ring and neither do the others (VL 0); turns only go from lower
 * to higher dimensions.  2 VLs, 2^D SLs.
 *
 * Failures: a ring that lost a link or a switch is a line and cannot
 * close a cycle, so paths on it take whichever way is whole.  When the
 * switch a path would turn at is missing, the path turns early into the
 * next dimension it must correct and comes back (a y-x turn, which DOR
 * forbids); the hop after such a turn travels on VL bit 1 (the input
 * port's dimension is above the output's), as torus-2QoS does: 4 VLs.
 * Those tables are checked for dependency cycles before they are given
 * out; a fabric the rules cannot route, or whose routes would close a
 * cycle, is not treated as a torus (the caller's next engine routes it).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/report.h"
#include "routing/torus/torus.h"
#include "routing/verify.h"

struct trun {
	struct torus t;
	struct routing_result *out;
	int8_t (*pdir)[256];	/* per switch: direction of each port, -1 */
	uint8_t *whole;		/* per switch: bit d, its ring or line in
				 * dimension d has every switch and link */
	unsigned max_vl;	/* highest VL a path uses */
	unsigned *turns;	/* per switch: early turns taken so far */
	unsigned care;		/* 0: every detour below; 1: turns into y
				 * go one way at every break; 2: that, and
				 * no late_dir() turns; 3: classic_dir(),
				 * 4: the same for want of SLs, 5: for
				 * less load */
	uint32_t lates;		/* (switch, LID) pairs it turned */
	bool conf;		/* laid out by torus_config */
	uint32_t early;		/* (switch, LID) pairs that turn early */
};

/* Steps from m along direction k to coordinate `to` in k's dimension
 * over links that are up, or 0 when that way is broken. */
static unsigned way(const struct torus *t, uint32_t m, int k, unsigned to)
{
	unsigned d = (unsigned)k / 2, steps = 0;
	uint32_t cur = m;

	while (t->coord[cur][d] != to) {
		uint16_t c[TORUS_MAX_DIMS];
		int32_t nxt;

		if (!t->dir[cur][k].n || ++steps > t->size[d])
			return 0;
		memcpy(c, t->coord[cur], sizeof(c));
		if (k & 1)
			c[d] = (uint16_t)((c[d] + t->size[d] - 1) % t->size[d]);
		else
			c[d] = (uint16_t)((c[d] + 1u) % t->size[d]);
		nxt = t->at[torus_cell(t, c)];
		if (nxt < 0)
			return 0;
		cur = (uint32_t)nxt;
	}
	return steps;
}

/* The direction along dimension d toward coordinate `to`: the shorter
 * whole way, ties split by LID and position; -1: both broken. */
static int ring_dir(const struct torus *t, uint32_t m, unsigned d,
		    unsigned to, uint16_t lid)
{
	unsigned up = way(t, m, (int)(2 * d), to);
	unsigned dn = way(t, m, (int)(2 * d + 1), to);

	if (!up && !dn)
		return -1;
	if (!dn || (up && up < dn))
		return (int)(2 * d);
	if (!up || dn < up)
		return (int)(2 * d + 1);
	return (int)(2 * d + ((lid + t->coord[m][d]) & 1));
}

/* The shorter direction along dimension d from m to coordinate `to`,
 * holes and missing links aside (ties split by LID and position). */
static int min_dir(const struct torus *t, uint32_t m, unsigned d, unsigned to,
		   uint16_t lid)
{
	unsigned from = t->coord[m][d], n = t->size[d];
	unsigned up = (to + n - from) % n, dn = (from + n - to) % n;

	if (!t->wrap[d])
		return (int)(2 * d + (to < from));
	if (up != dn)
		return (int)(2 * d + (dn < up));
	return (int)(2 * d + ((lid + from) & 1));
}

/* Whether the way from m along k to coordinate `to` first runs into a
 * missing switch (rather than a missing link). */
static bool hole_ahead(const struct torus *t, uint32_t m, int k, unsigned to)
{
	unsigned d = (unsigned)k / 2;
	uint32_t cur = m;

	for (unsigned steps = 0; steps < t->size[d]; steps++) {
		uint16_t c[TORUS_MAX_DIMS];
		int32_t nxt;

		memcpy(c, t->coord[cur], sizeof(c));
		if (c[d] == to)
			return false;
		if (k & 1)
			c[d] = (uint16_t)((c[d] + t->size[d] - 1) % t->size[d]);
		else
			c[d] = (uint16_t)((c[d] + 1u) % t->size[d]);
		nxt = t->at[torus_cell(t, c)];
		if (nxt < 0)
			return true;
		if (!t->dir[cur][k].n)
			return false;
		cur = (uint32_t)nxt;
	}
	return false;
}

/* Whether one step from m in direction k is up (the link and the switch
 * behind it are there). */
static bool step_ok(const struct torus *t, uint32_t m, int k)
{
	return t->dir[m][k].n > 0;
}

/*
 * The turn a path to switch `tgt` takes at switch m, the last before a
 * break in the direction k it must go: into one of the later dimensions
 * (the next switch then crosses k's dimension on its own ring or line and
 * the path comes back later).  Into a dimension the path must correct
 * anyway, only the way it goes (so the two parts make one shortest
 * move); into one it need not, either way (a hop there and a hop back).
 * The options are taken in turn per switch so that the detours spread
 * over every neighbouring ring; -1: none.
 */
static int detour_dir(struct trun *r, uint32_t m, uint32_t tgt, int k)
{
	const struct torus *t = &r->t;
	const uint16_t *mc = t->coord[m], *tc = t->coord[tgt];
	int opts[TORUS_DIRS], n = 0;
	uint16_t c[TORUS_MAX_DIMS];
	bool hole;

	memcpy(c, mc, sizeof(c));
	c[k / 2] = (uint16_t)((c[k / 2] + (k & 1 ? t->size[k / 2] - 1 : 1)) %
			      t->size[k / 2]);
	hole = t->at[torus_cell(t, c)] < 0;
	for (unsigned e = (unsigned)k / 2 + 1; e < t->dims; e++) {
		unsigned up = (tc[e] + t->size[e] - mc[e]) % t->size[e];
		unsigned dn = (mc[e] + t->size[e] - tc[e]) % t->size[e];

		if (!t->wrap[e] && mc[e] != tc[e]) {
			up = tc[e] > mc[e];
			dn = !up;
		}
		for (unsigned s = 0; s < 2; s++) {
			int ke = (int)(2 * e + s);
			bool toward = s ? dn <= up : up <= dn;

			/* around a missing switch (at every break from
			 * care 1 on), turns into y go one way only: with
			 * late_dir()'s paths in the rings on both sides,
			 * both ways would close a loop around the hole */
			if (e == 1 && s == 0 && (hole || r->care))
				continue;
			if (step_ok(t, m, ke) && (mc[e] == tc[e] || toward))
				opts[n++] = ke;
		}
	}
	if (!n)
		return -1;
	return opts[r->turns[m]++ % (unsigned)n];
}

/*
 * Half the paths to a switch whose y ring is broken (a missing switch or
 * link in the ring the path would take after correcting x) correct y
 * first, in the ring one hop short in x, all of it, and take the x hop
 * last (a turn DOR forbids: a detour; d is x, the other dimensions are
 * left to detour_dir(), as late turns there closed cycles).  The paths around the break then
 * split between the rings on both sides of the broken one and the early
 * turns of detour_dir() from its own ring.  The direction to take at m
 * when m is on such a path, -1 when it is not.
 */
static int late_dir(const struct trun *r, uint32_t m, uint32_t tgt,
		    unsigned d, uint16_t lid)
{
	const struct torus *t = &r->t;
	const uint16_t *mc = t->coord[m], *tc = t->coord[tgt];
	unsigned n = t->size[d], e = d + 1, h;
	uint16_t c[TORUS_MAX_DIMS];
	int32_t nb, m2;
	int k, ke;

	/* half of the LIDs: by LID and target position, so that neither the
	 * ties of min_dir() nor the hosts' LID order line up with it */
	h = lid;
	for (unsigned i = 0; i < t->dims; i++)
		h += tc[i];
	if (h & 1)
		return -1;
	while (e < t->dims && mc[e] == tc[e])
		e++;
	if (r->care > 1 || d != 0 || e != 1)
		return -1;
	k = min_dir(t, m, d, tc[d], lid);
	if ((k & 1 ? (mc[d] + n - tc[d]) % n : (tc[d] + n - mc[d]) % n) != 1)
		return -1;
	memcpy(c, mc, sizeof(c));
	c[d] = tc[d];
	nb = t->at[torus_cell(t, c)];
	if (nb >= 0 && (r->whole[nb] >> e & 1))
		return -1;
	/* this ring whole to the target's coordinate, the hop in d there */
	ke = min_dir(t, m, e, tc[e], lid);
	memcpy(c, mc, sizeof(c));
	c[e] = tc[e];
	m2 = t->at[torus_cell(t, c)];
	c[d] = tc[d];
	if (m2 < 0 || !way(t, m, ke, tc[e]) || !step_ok(t, (uint32_t)m2, k) ||
	    t->at[torus_cell(t, c)] < 0)
		return -1;
	return ke;
}

/*
 * next_dir() as a last resort (care 3), with the VL rule of fill_vlmap()
 * for it: the first dimension to correct goes the shorter way; when
 * that way is broken (a missing switch or link ahead) and a later
 * dimension needs correcting too, the path still heads that way and turns
 * into the later dimension at the switch before the break (an early turn,
 * as torus-2QoS does); when no later dimension differs it takes the ring's
 * other way, if whole.
 */
static int classic_dir(const struct trun *r, uint32_t m, uint32_t tgt,
		       uint16_t lid, bool *early)
{
	const struct torus *t = &r->t;
	const uint16_t *mc = t->coord[m], *tc = t->coord[tgt];

	*early = false;
	for (unsigned d = 0; d < t->dims; d++) {
		uint16_t c[TORUS_MAX_DIMS];
		int k;

		if (mc[d] == tc[d])
			continue;
		k = min_dir(t, m, d, tc[d], lid);
		if ((r->whole[m] >> d & 1) || way(t, m, k, tc[d]))
			return k;
		memcpy(c, mc, sizeof(c));
		c[d] = tc[d];
		/* a missing switch on the way (not at the turning point):
		 * the ring is a line, the other way is as good */
		if (t->at[torus_cell(t, c)] >= 0 && hole_ahead(t, m, k, tc[d]) &&
		    way(t, m, k ^ 1, tc[d]))
			return k ^ 1;
		for (unsigned e = d + 1; e < t->dims; e++) {
			int ke;

			if (mc[e] == tc[e])
				continue;
			if (step_ok(t, m, k))
				return k;	/* on towards the break */
			ke = min_dir(t, m, e, tc[e], lid);
			if (!step_ok(t, m, ke))
				ke ^= 1;
			if (!step_ok(t, m, ke))
				return -1;
			*early = true;
			/* an x break: a third of the detours go by the
			 * z ring on either side, spreading them */
			if (d == 0 && e == 1 && t->dims == 3) {
				unsigned pick = (lid / 2u + mc[1]) % 3;

				if (pick && step_ok(t, m, 3 + (int)pick))
					return 3 + (int)pick;
			}
			return ke;
		}
		return ring_dir(t, m, d, tc[d], lid);
	}
	return -1;
}

/*
 * The direction switch m sends `lid` (owned by switch `tgt`) in, -1:
 * none found.  The first dimension to correct goes the shorter way; when
 * that way is broken (a missing switch or link ahead) and a later
 * dimension exists, the path still heads that way and turns into a later
 * dimension at the switch before the break (an early turn, as torus-2QoS
 * does; detour_dir() picks which); in the last dimension it takes the
 * ring's other way, if whole.
 */
static int next_dir(struct trun *r, uint32_t m, uint32_t tgt,
		    uint16_t lid, bool *early)
{
	const struct torus *t = &r->t;
	const uint16_t *mc = t->coord[m], *tc = t->coord[tgt];

	if (r->care > 2)
		return classic_dir(r, m, tgt, lid, early);
	*early = false;
	for (unsigned d = 0; d < t->dims; d++) {
		int k;

		if (mc[d] == tc[d])
			continue;
		if (d + 1 < t->dims && (k = late_dir(r, m, tgt, d, lid)) >= 0) {
			r->lates++;
			return k;
		}
		k = min_dir(t, m, d, tc[d], lid);
		if ((r->whole[m] >> d & 1) || way(t, m, k, tc[d]))
			return k;
		if (d + 1 < t->dims) {
			int ke;

			if (step_ok(t, m, k))
				return k;	/* on towards the break */
			ke = detour_dir(r, m, tgt, k);
			if (ke >= 0) {
				*early = true;
				return ke;
			}
		}
		return ring_dir(t, m, d, tc[d], lid);
	}
	return -1;
}

static int fill_lfts(struct trun *r, char *err, size_t errlen)
{
	struct torus *t = &r->t;
	const struct rgraph *g = &t->g;

	for (uint32_t lid = 1; lid <= g->top; lid++) {
		const struct rg_dest *dst = &g->dest[lid];

		if (dst->sw < 0)
			continue;
		for (uint32_t m = 0; m < g->S; m++) {
			uint8_t *port = &r->out->lft[g->sw_node[m]].port[lid];
			const struct torus_dirports *dp;
			bool early;
			int k;

			if (m == (uint32_t)dst->sw) {
				*port = dst->port;
				continue;
			}
			k = next_dir(r, m, (uint32_t)dst->sw, (uint16_t)lid,
				     &early);
			if (k < 0) {
				routing_fmt(err, errlen, "no dimension-order "
					    "way from switch 0x%016llx to LID "
					    "%u", (unsigned long long)
					    fabric_node(g->f, g->sw_node[m])->guid,
					    lid);
				return -EHOSTUNREACH;
			}
			r->early += early;
			dp = &t->dir[m][k];
			*port = dp->port[(lid / 2) % dp->n];
		}
	}
	return 0;
}

/* Switch v's next switch and hop direction towards `lid`; false when the
 * table leaves the grid there. */
static bool hop(const struct trun *r, uint32_t v, uint16_t lid,
		uint32_t *nxt, int *k)
{
	const struct rgraph *g = &r->t.g;
	int32_t node = g->sw_node[v];
	unsigned p = r->out->lft[node].port[lid];
	const struct fab_port *pt;

	*k = r->pdir[v][p];
	if (*k < 0)
		return false;
	pt = &fabric_node(g->f, node)->ports[p];
	*nxt = (uint32_t)g->sw_idx[pt->peer_node];
	return true;
}

/*
 * The SL of every path: its dateline crossings; and the VLs it uses.
 * Per LID the paths form a tree: a switch's SL is its next switch's plus
 * the crossing of its own hop, settled once per switch (state: 0 not yet,
 * 1 on the walk being settled, 2 done).
 */
static int fill_sls(struct trun *r, char *err, size_t errlen)
{
	const struct torus *t = &r->t;
	const struct rgraph *g = &t->g;
	uint8_t *state = malloc(g->S + 1), *sl = malloc(g->S + 1);
	uint32_t *stk = malloc((g->S + 1) * sizeof(*stk));
	int rc = state && sl && stk ? 0 : -ENOMEM;

	for (uint32_t lid = 1; rc == 0 && lid <= g->top; lid++) {
		int32_t dst = g->dest[lid].sw;

		if (dst < 0)
			continue;
		memset(state, 0, g->S);
		state[dst] = 2;
		sl[dst] = 0;
		for (uint32_t v = 0; rc == 0 && v < g->S; v++) {
			uint32_t n = 0, cur = v, nxt;
			int k;

			while (state[cur] == 0) {
				state[cur] = 1;
				stk[n++] = cur;
				if (!hop(r, cur, (uint16_t)lid, &cur, &k)) {
					rc = -ELOOP;
					break;
				}
			}
			if (rc == 0 && state[cur] == 1)
				rc = -ELOOP;
			while (rc == 0 && n--) {
				unsigned d, s;
				int kn;

				cur = stk[n];
				hop(r, cur, (uint16_t)lid, &nxt, &k);
				d = (unsigned)k / 2;
				s = sl[nxt];
				if (t->wrap[d] && t->coord[cur][d] ==
				    (k & 1 ? 0 : t->size[d] - 1))
					s |= 1u << d;
				/* a turn DOR forbids at the next switch:
				 * the path is a detour */
				if (nxt != (uint32_t)dst &&
				    hop(r, nxt, (uint16_t)lid, &cur, &kn) &&
				    kn / 2 < (int)d) {
					if (r->care < 3)
						s |= 1u << t->dims;
					r->max_vl = 3;
				}
				sl[stk[n]] = (uint8_t)s;
				state[stk[n]] = 2;
				r->out->sl[g->sw_node[stk[n]]][lid] = (uint8_t)s;
				if (s && !r->max_vl)
					r->max_vl = 1;
			}
		}
		if (rc == -ELOOP)
			routing_fmt(err, errlen, "the tables loop for LID %u",
				    lid);
	}
	free(state);
	free(sl);
	free(stk);
	return rc;
}

/* Port classes (a port's dimension; hosts 3) and the VL rule. */
static int fill_vlmap(struct trun *r)
{
	const struct torus *t = &r->t;
	const struct rgraph *g = &t->g;
	struct routing_result *out = r->out;

	out->port_class = calloc(g->f->n_nodes + 1, sizeof(*out->port_class));
	if (!out->port_class)
		return -ENOMEM;
	for (uint32_t v = 0; v < g->S; v++) {
		const struct fab_node *n = fabric_node(g->f, g->sw_node[v]);
		uint8_t *pc = malloc((size_t)n->num_ports + 1);

		if (!pc)
			return -ENOMEM;
		out->port_class[g->sw_node[v]] = pc;
		for (unsigned p = 0; p <= n->num_ports; p++)
			pc[p] = r->pdir[v][p] >= 0 ? (uint8_t)(r->pdir[v][p] / 2)
						   : ROUTING_CLASS_HOST;
	}
	for (unsigned ci = 0; ci < ROUTING_PORT_CLASSES; ci++)
		for (unsigned co = 0; co < ROUTING_PORT_CLASSES; co++)
			for (unsigned sl = 0; sl < 16; sl++) {
				unsigned vl = 0;

				if (co != ROUTING_CLASS_HOST)
					vl = (sl >> co) & 1;
				/* a detour path: VLs 2-3 all along; for
				 * classic_dir(), the hop after a turn DOR
				 * forbids */
				if (co != ROUTING_CLASS_HOST && r->max_vl > 1 &&
				    r->care < 3)
					vl |= ((sl >> t->dims) & 1) << 1;
				else if (co != ROUTING_CLASS_HOST &&
					 r->max_vl > 1 &&
					 ci != ROUTING_CLASS_HOST && ci > co)
					vl |= 2;
				out->vl_map[ci][co][sl] = (uint8_t)vl;
			}
	return 0;
}

/* Whether the ring (or line) through m in dimension d is whole. */
static bool line_whole(const struct torus *t, uint32_t m, unsigned d)
{
	uint32_t cur = m;
	unsigned steps = t->wrap[d] ? t->size[d] : 0;

	if (!t->wrap[d]) {
		/* a line: from its start to its end */
		while (t->dir[cur][2 * d + 1].n) {
			uint16_t c[TORUS_MAX_DIMS];

			memcpy(c, t->coord[cur], sizeof(c));
			if (!c[d] || t->at[(c[d]--, torus_cell(t, c))] < 0)
				return false;
			cur = (uint32_t)t->at[torus_cell(t, c)];
		}
		if (t->coord[cur][d])
			return false;
		steps = t->size[d] - 1;
	}
	for (unsigned i = 0; i < steps; i++) {
		uint16_t c[TORUS_MAX_DIMS];
		int32_t nxt;

		if (!t->dir[cur][2 * d].n)
			return false;
		memcpy(c, t->coord[cur], sizeof(c));
		c[d] = (uint16_t)((c[d] + 1u) % t->size[d]);
		nxt = t->at[torus_cell(t, c)];
		if (nxt < 0)
			return false;
		cur = (uint32_t)nxt;
	}
	return !t->wrap[d] || cur == m;
}

static int alloc_run(struct trun *r, const struct fabric *f)
{
	const struct rgraph *g = &r->t.g;

	r->pdir = malloc((g->S + 1) * sizeof(*r->pdir));
	if (!r->pdir || routing_alloc_tables(f, r->out, g->top) < 0)
		return -ENOMEM;
	memset(r->pdir, -1, (g->S + 1) * sizeof(*r->pdir));
	r->whole = calloc(g->S + 1, 1);
	r->turns = calloc(g->S + 1, sizeof(*r->turns));
	if (!r->whole || !r->turns)
		return -ENOMEM;
	for (uint32_t v = 0; v < g->S; v++)
		for (unsigned d = 0; d < r->t.dims; d++)
			if (line_whole(&r->t, v, d))
				r->whole[v] |= (uint8_t)(1u << d);
	for (uint32_t v = 0; v < g->S; v++)
		for (int k = 0; k < (int)(2 * r->t.dims); k++)
			for (unsigned i = 0; i < r->t.dir[v][k].n; i++)
				r->pdir[v][r->t.dir[v][k].port[i]] = (int8_t)k;
	r->out->sl = calloc(f->n_nodes + 1, sizeof(*r->out->sl));
	if (!r->out->sl)
		return -ENOMEM;
	for (uint32_t v = 0; v < g->S; v++) {
		r->out->sl[g->sw_node[v]] = calloc((size_t)g->top + 1, 1);
		if (!r->out->sl[g->sw_node[v]])
			return -ENOMEM;
	}
	return 0;
}

/* VLs every inter-switch port takes (OperationalVLs, else VLCap). */
static unsigned vl_budget(const struct rgraph *g, const struct routing_opts *o)
{
	static const unsigned vls[] = { 0, 1, 2, 4, 8, 15 };
	unsigned k = 15;

	for (uint32_t v = 0; v < g->S; v++) {
		const struct fab_node *n = fabric_node(g->f, g->sw_node[v]);

		for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++) {
			const struct fab_port *p = &n->ports[g->adj_port[a]];
			unsigned e = pi_op_vls(&p->pi);

			if (!e)
				e = pi_vl_cap(&p->pi);
			if (e && (e < 6 ? vls[e] : 15) < k)
				k = e < 6 ? vls[e] : 15;
		}
	}
	if (o && o->max_layers && o->max_layers < k)
		k = o->max_layers;
	return k;
}

static void describe(const struct trun *r, char *buf, size_t len)
{
	static const char *const care_note[] = {
		"", " (y turns one way: freer detours closed a cycle)",
		" (no late turns: freer detours closed a cycle)",
		" (classic detours: freer ones closed a cycle)",
		" (classic detours: QoS leaves too few SLs for others)",
		" (classic detours: less load than the spread ones here)",
	};
	const struct torus *t = &r->t;
	bool rings = false, lines = false;
	char dims[48];
	int w = 0;

	for (unsigned d = 0; d < t->dims; d++) {
		rings = rings || t->wrap[d];
		lines = lines || !t->wrap[d];
	}
	for (unsigned d = 0; d < t->dims && w >= 0 && (size_t)w < sizeof(dims);
	     d++)
		w += snprintf(dims + w, sizeof(dims) - (size_t)w, "%s%u%s",
			      d ? "x" : "", t->size[d],
			      rings && !t->wrap[d] ? "m" : "");
	routing_fmt(buf, len, "%uD %s %s%s, %u switch(es) and %u link(s) "
		    "missing; dimension order with datelines, %u SLs on %u "
		    "VLs%s%s%s", t->dims, rings ? "torus" : "mesh", dims,
		    rings && lines ? " (m: a mesh dimension)" : "", t->holes,
		    t->links_missing, r->out->n_layers, r->out->n_vls,
		    r->early && r->lates ? ", early and late turns around "
		    "breaks" : r->early ? ", early turns around breaks" : "",
		    r->care ? care_note[r->care] : "",
		    r->conf ? "; axes and datelines from torus_config" : "");
}

/* Route once with detours as free as `care` allows: 0, or -errno with
 * the reason (not a torus, cannot route). */
static int route_once(const struct fabric *f, const struct routing_opts *o,
		      struct routing_result *out, char *err, size_t errlen,
		      unsigned care)
{
	struct trun r = { .out = out, .care = care };
	unsigned budget;
	int rc = rg_build(&r.t.g, f, err, errlen);

	if (rc == 0)
		rc = torus_shape(&r.t, err, errlen);
	if (rc == 0 && o && o->torus_conf) {
		rc = torus_conf_apply(&r.t, o->torus_conf, err, errlen);
		r.conf = true;
	}
	if (rc == 0)
		rc = alloc_run(&r, f);
	if (rc == 0)
		rc = fill_lfts(&r, err, errlen);
	if (rc == 0)
		rc = fill_sls(&r, err, errlen);
	if (rc == 0)
		rc = fill_vlmap(&r);
	if (rc == 0) {
		budget = vl_budget(&r.t.g, o);
		out->n_vls = (uint8_t)(r.max_vl + 1);
		out->n_layers = (uint8_t)(1u << (r.t.dims + (r.max_vl > 1 &&
							       care < 3)));
		if (out->n_vls > budget) {
			routing_fmt(err, errlen, "needs %u VLs, the fabric "
				    "allows %u", out->n_vls, budget);
			rc = -ENOSPC;
		} else if (o && o->max_sls && out->n_layers > o->max_sls &&
			   care < 3) {
			/* the detour SL bit does not fit: the classic
			 * rules need none */
			routing_fmt(err, errlen, "needs %u SLs, QoS leaves "
				    "%u", out->n_layers, o->max_sls);
			rc = -E2BIG;
		}
	}
	if (rc == 0 && (r.t.holes || r.t.links_missing)) {
		struct routing_cdg cdg;

		rc = routing_check_cdg(f, out, &cdg);
		if (rc == 0 && routing_cdg_cycles(&cdg)) {
			routing_fmt(err, errlen, "routes around %u missing "
				    "switch(es) and %u link(s) would close %llu "
				    "dependency cycle(s)", r.t.holes,
				    r.t.links_missing, (unsigned long long)
				    routing_cdg_cycles(&cdg));
			rc = -EDEADLK;
		}
		out->cdg_acyclic = rc == 0;
	}
	if (rc == 0)
		describe(&r, out->summary, sizeof(out->summary));
	if (rc == -ENOMEM)
		routing_fmt(err, errlen, "out of memory");
	if (rc < 0)
		routing_result_free(out);
	free(r.pdir);
	free(r.whole);
	free(r.turns);
	torus_free(&r.t);
	return rc;
}

/* The classic rules' tables instead of out's when their busiest link
 * carries less (small tori, where the spread detours have few rings to
 * spread over). */
static void keep_lighter(const struct fabric *f, const struct routing_opts *o,
			 struct routing_result *out)
{
	struct routing_result alt = { 0 };
	struct routing_report a, b;
	char err[256];

	if (route_once(f, o, &alt, err, sizeof(err), 5) < 0)
		return;
	if (routing_report_load(f, out, &a) == 0 &&
	    routing_report_load(f, &alt, &b) == 0 && b.ratio < a.ratio) {
		routing_result_free(out);
		*out = alt;
		return;
	}
	routing_result_free(&alt);
}

/* Route; when the detours would close a dependency cycle (the
 * verifier says so, with two or more breaks close together), route
 * again with fewer kinds of detour; when QoS leaves too few SLs for
 * the detour SL bit, with the classic rules (which need none). */
static int torus_route(const struct fabric *f, const struct routing_opts *o,
		       struct routing_result *out, char *err, size_t errlen)
{
	int rc = -EDEADLK;
	unsigned care;

	for (care = 0; care < 4 && rc == -EDEADLK; care++)
		rc = route_once(f, o, out, err, errlen, care);
	if (rc == -E2BIG)	/* the classic rules, for the SLs */
		rc = route_once(f, o, out, err, errlen, 4);
	else if (rc == 0 && care <= 3 && out->n_vls > 2)
		keep_lighter(f, o, out);	/* spread detours (care ran
						 * one past the one routed) */
	return rc;
}

int routing_is_torus(const struct fabric *f, char *why, size_t whylen)
{
	struct torus t = { 0 };
	int rc = rg_build(&t.g, f, why, whylen);

	if (rc == 0)
		rc = torus_shape(&t, why, whylen);
	if (rc == 0)
		routing_fmt(why, whylen, "%uD %s, %u switch(es) and %u "
			    "link(s) missing", t.dims,
			    t.wrap[0] || t.wrap[1] || t.wrap[2] ? "torus" :
			    "mesh", t.holes, t.links_missing);
	torus_free(&t);
	return rc == -ENOMEM ? rc : rc == 0;
}

const struct routing_engine routing_torus = {
	.name = "torus",
	.route = torus_route,
};
