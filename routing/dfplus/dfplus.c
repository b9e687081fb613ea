/*
 * dfplus.c - the "dfplus" engine: Dragonfly+ (Shpiner et al., HiPINEB
 * 2017), recognised from the wiring and routed on at most 2 VLs.
 *
 * Shape: leaves are the switches with CA/router ports, spines those
 * without.  A group is a set of leaves and spines joined by local links
 * (each leaf to each spine of its group: a 2-level Clos); global links
 * join spines of different groups, ideally every group to every other.
 * Anything else (a leaf-leaf link, a spine-spine link inside a group, a
 * leaf missing a spine of its group) is not Dragonfly+.
 *
 * Routes: minimal paths go up (leaf to spine), across one global link,
 * down; a leaf spreads destinations over the spines that have a global
 * link to the destination group, a spine over its global links to it.
 * When no spine of a group reaches the destination group (global links
 * failed), the path goes non-minimally through an intermediate group:
 * up, global to a spine that has a link to the destination group, global,
 * down (SL 1); failing that, global to a spine of a group that reaches
 * the destination group, down to a leaf there and up to its spine that
 * does, global, down (SL 2).
 *
 * Deadlock freedom: ports are classed (0: a leaf's port to a spine, 1: a
 * spine's port to a leaf, 2: a spine's port to a spine, 3: host).  On
 * VL 0 channels follow up < global < down and never turn back.  A hop
 * leaving a spine that it entered by a global port travels on VL 1 for
 * SL 1 and 2 (the second global hop of a detour and what follows), a
 * hop leaving a spine for a global link that it entered from a leaf on
 * VL 1 for SL 2, and a hop from a spine back up to a spine at a leaf on
 * VL 1 for every SL (the last hop of a path to a spine's own LID, the
 * turn inside an SL 2 detour's intermediate group).  SL 0 and 1 cannot
 * close a cycle; SL 2 detours can when groups serve as each other's
 * intermediates, so tables with detours are checked for dependency
 * cycles before use, and the engine refuses with the reason when there
 * is one (auto then runs dfsssp).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/cdgraph.h"
#include "routing/engines.h"
#include "routing/verify.h"

enum { C_UP = 0, C_DOWN = 1, C_GLOBAL = 2 };

struct dfp {
	struct rgraph g;
	struct routing_result *out;
	uint32_t G;		/* groups */
	uint32_t *grp;		/* per switch */
	uint8_t *leaf;		/* per switch */
	uint32_t *gsp_off, *gsp;	/* spines of each group */
	uint32_t *glf_off, *glf;	/* leaves of each group */
	uint8_t *reach;		/* G x G: a global link from group i to j */
	uint8_t *to_grp;	/* S x G: the switch has a global link to group j */
	uint32_t missing;	/* ordered group pairs without a link */
	uint32_t detours;
};

static void dfp_free(struct dfp *d)
{
	rg_free(&d->g);
	free(d->grp);
	free(d->leaf);
	free(d->gsp_off);
	free(d->gsp);
	free(d->glf_off);
	free(d->glf);
	free(d->reach);
	free(d->to_grp);
}

/* Groups: components over leaf-spine links.  0, -ENOENT (why), -ENOMEM. */
static int find_groups(struct dfp *d, char *why, size_t len)
{
	struct rgraph *g = &d->g;
	uint32_t *q = malloc((g->S + 1) * sizeof(*q));

	d->grp = malloc((g->S + 1) * sizeof(*d->grp));
	d->leaf = calloc(g->S + 1, 1);
	if (!q || !d->grp || !d->leaf) {
		free(q);
		return -ENOMEM;
	}
	for (uint32_t v = 0; v < g->S; v++) {
		d->grp[v] = UINT32_MAX;
		d->leaf[v] = g->nhost[v] > 0;
	}
	for (uint32_t s = 0; s < g->S; s++) {
		uint32_t h = 0, n = 0;

		if (d->grp[s] != UINT32_MAX || !d->leaf[s])
			continue;
		d->grp[s] = d->G;
		q[n++] = s;
		while (h < n) {
			uint32_t v = q[h++];

			for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1];
			     a++) {
				uint32_t w = g->adj_nbr[a];

				if (d->leaf[v] == d->leaf[w] ||
				    d->grp[w] != UINT32_MAX)
					continue;
				d->grp[w] = d->G;
				q[n++] = w;
			}
		}
		d->G++;
	}
	free(q);
	for (uint32_t v = 0; v < g->S; v++)
		if (d->grp[v] == UINT32_MAX) {
			routing_fmt(why, len, "switch 0x%016llx has no leaf "
				    "in reach", (unsigned long long)
				    fabric_node(g->f, g->sw_node[v])->guid);
			return -ENOENT;
		}
	if (d->G < 3) {
		routing_fmt(why, len, "%u group(s) of leaves and spines "
			    "(3 or more make a Dragonfly+)", d->G);
		return -ENOENT;
	}
	return 0;
}

static int list_members(struct dfp *d)
{
	struct rgraph *g = &d->g;
	uint32_t *cs, *cl;

	d->gsp_off = calloc(d->G + 2, sizeof(*d->gsp_off));
	d->glf_off = calloc(d->G + 2, sizeof(*d->glf_off));
	d->gsp = malloc((g->S + 1) * sizeof(*d->gsp));
	d->glf = malloc((g->S + 1) * sizeof(*d->glf));
	d->reach = calloc((size_t)d->G * d->G + 1, 1);
	d->to_grp = calloc((size_t)g->S * d->G + 1, 1);
	if (!d->gsp_off || !d->glf_off || !d->gsp || !d->glf || !d->reach ||
	    !d->to_grp)
		return -ENOMEM;
	for (uint32_t v = 0; v < g->S; v++)
		(d->leaf[v] ? d->glf_off : d->gsp_off)[d->grp[v] + 2]++;
	for (uint32_t i = 0; i < d->G; i++) {
		d->gsp_off[i + 2] += d->gsp_off[i + 1];
		d->glf_off[i + 2] += d->glf_off[i + 1];
	}
	cs = d->gsp_off + 1;
	cl = d->glf_off + 1;
	for (uint32_t v = 0; v < g->S; v++) {
		if (d->leaf[v])
			d->glf[cl[d->grp[v]]++] = v;
		else
			d->gsp[cs[d->grp[v]]++] = v;
	}
	return 0;
}

/* The wiring rules; 0 or -ENOENT with the reason. */
static int check_shape(struct dfp *d, char *why, size_t len)
{
	struct rgraph *g = &d->g;

	for (uint32_t v = 0; v < g->S; v++) {
		uint32_t spines = 0;
		const char *bad = NULL;

		for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++) {
			uint32_t w = g->adj_nbr[a];

			if (d->leaf[v] && d->leaf[w])
				bad = "a link between two leaves";
			else if (!d->leaf[v] && !d->leaf[w] &&
				 d->grp[v] == d->grp[w])
				bad = "a link between spines of one group";
			else if (!d->leaf[v] && !d->leaf[w]) {
				d->reach[(size_t)d->grp[v] * d->G + d->grp[w]] = 1;
				d->to_grp[(size_t)v * d->G + d->grp[w]] = 1;
			}
			else if (d->leaf[v] && (a == g->adj_off[v] ||
						g->adj_nbr[a - 1] != w))
				spines++;
		}
		if (d->leaf[v] && spines != d->gsp_off[d->grp[v] + 1] -
					    d->gsp_off[d->grp[v]])
			bad = "a leaf not linked to every spine of its group";
		if (bad) {
			routing_fmt(why, len, "%s (switch 0x%016llx)", bad,
				    (unsigned long long)
				    fabric_node(g->f, g->sw_node[v])->guid);
			return -ENOENT;
		}
	}
	for (uint32_t i = 0; i < d->G; i++)
		for (uint32_t j = 0; j < d->G; j++)
			if (i != j && !d->reach[(size_t)i * d->G + j])
				d->missing++;
	if (d->missing * 2 > d->G * (d->G - 1)) {
		routing_fmt(why, len, "%u groups, %u of %u group pairs without "
			    "a global link (not all-to-all)", d->G, d->missing,
			    d->G * (d->G - 1));
		return -ENOENT;
	}
	return 0;
}

/* How many channels of v lead to a switch for which want() holds; the
 * i-th of them (i taken modulo the count) in *pick. */
static uint32_t nth_chan(const struct dfp *d, uint32_t v, uint32_t i,
			 bool (*want)(const struct dfp *, uint32_t, uint32_t),
			 uint32_t arg, uint32_t *pick)
{
	const struct rgraph *g = &d->g;
	uint32_t n = 0;

	for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++)
		n += want(d, g->adj_nbr[a], arg);
	if (!n)
		return 0;
	i %= n;
	for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++)
		if (want(d, g->adj_nbr[a], arg) && !i--) {
			*pick = a;
			break;
		}
	return n;
}

static bool is_sw(const struct dfp *d, uint32_t w, uint32_t t)
{
	(void)d;
	return w == t;
}

static bool in_group(const struct dfp *d, uint32_t w, uint32_t grp)
{
	return !d->leaf[w] && d->grp[w] == grp;
}

static bool is_leaf(const struct dfp *d, uint32_t w, uint32_t unused)
{
	(void)unused;
	return d->leaf[w];
}

/* A spine with a global link to group t. */
static bool spine_to(const struct dfp *d, uint32_t w, uint32_t t)
{
	return d->to_grp[(size_t)w * d->G + t] != 0;
}

/* A spine with a global link to a spine that reaches group t (detour). */
static bool spine_via(const struct dfp *d, uint32_t w, uint32_t t)
{
	const struct rgraph *g = &d->g;

	if (d->leaf[w])
		return false;
	for (uint32_t a = g->adj_off[w]; a < g->adj_off[w + 1]; a++) {
		uint32_t x = g->adj_nbr[a];

		if (!d->leaf[x] && d->grp[x] != d->grp[w] && d->grp[x] != t &&
		    spine_to(d, x, t))
			return true;
	}
	return false;
}

/* A spine of another group whose group reaches group t. */
static bool group_to(const struct dfp *d, uint32_t w, uint32_t t)
{
	return !d->leaf[w] && d->grp[w] != t &&
	       d->reach[(size_t)d->grp[w] * d->G + t];
}

/* A spine with a global link to a spine whose group reaches group t
 * (detour down and up again inside that group). */
static bool spine_via2(const struct dfp *d, uint32_t w, uint32_t t)
{
	const struct rgraph *g = &d->g;

	if (d->leaf[w])
		return false;
	for (uint32_t a = g->adj_off[w]; a < g->adj_off[w + 1]; a++) {
		uint32_t x = g->adj_nbr[a];

		if (!d->leaf[x] && d->grp[x] != d->grp[w] && group_to(d, x, t))
			return true;
	}
	return false;
}

/* The channel switch m sends LID `lid` (on switch t) by; UINT32_MAX when
 * it leaves by a host port or port 0 (the caller knows) or has none. */
static uint32_t next_chan(const struct dfp *d, uint32_t m, uint32_t t,
			  uint16_t lid)
{
	uint32_t gt = d->grp[t], gm = d->grp[m], a = UINT32_MAX;
	uint32_t i = lid + m;

	if (gm == gt) {
		if (nth_chan(d, m, 0, is_sw, t, &a))
			return a;	/* the leaf's spine, the spine's leaf */
		nth_chan(d, m, i, d->leaf[m] ? in_group : is_leaf,
			 d->leaf[m] ? gt : 0, &a);
		return a;
	}
	if (!d->leaf[m]) {
		if (!d->leaf[t] && nth_chan(d, m, i, is_sw, t, &a))
			return a;	/* a global link to that spine */
		if (nth_chan(d, m, i, in_group, gt, &a))
			return a;
		if (!d->reach[(size_t)gm * d->G + gt] &&
		    (nth_chan(d, m, i, spine_to, gt, &a) ||
		     nth_chan(d, m, i, group_to, gt, &a)))
			return a;
		nth_chan(d, m, i, is_leaf, 0, &a);
		return a;
	}
	if (d->reach[(size_t)gm * d->G + gt])
		nth_chan(d, m, i, spine_to, gt, &a);
	else if (!nth_chan(d, m, i, spine_via, gt, &a))
		nth_chan(d, m, i, spine_via2, gt, &a);
	return a;
}

static int fill(struct dfp *d, char *err, size_t errlen)
{
	const struct rgraph *g = &d->g;
	struct routing_result *out = d->out;

	for (uint32_t lid = 1; lid <= g->top; lid++) {
		const struct rg_dest *dst = &g->dest[lid];

		if (dst->sw < 0)
			continue;
		for (uint32_t m = 0; m < g->S; m++) {
			int32_t node = g->sw_node[m];
			uint32_t a;

			if (m == (uint32_t)dst->sw) {
				out->lft[node].port[lid] = dst->port;
				continue;
			}
			a = next_chan(d, m, (uint32_t)dst->sw, (uint16_t)lid);
			if (a == UINT32_MAX) {
				routing_fmt(err, errlen, "no Dragonfly+ path "
					    "from switch 0x%016llx to LID %u",
					    (unsigned long long)
					    fabric_node(g->f, node)->guid, lid);
				return -EHOSTUNREACH;
			}
			out->lft[node].port[lid] = g->adj_port[a];
		}
	}
	return 0;
}

/*
 * The SL of every path: 0 minimal; 1 through a spine of a third group
 * that has a link to the destination group (global, global); 2 down and
 * up again inside the third group first.
 */
static int fill_sls(struct dfp *d, char *err, size_t errlen)
{
	const struct rgraph *g = &d->g;
	struct routing_result *out = d->out;

	for (uint32_t lid = 1; lid <= g->top; lid++) {
		int32_t t = g->dest[lid].sw;

		if (t < 0)
			continue;
		for (uint32_t m = 0; m < g->S; m++) {
			uint32_t cur = m, gm = d->grp[m], globals = 0, steps;
			unsigned sl = 0;

			if (gm == d->grp[t] || d->reach[(size_t)gm * d->G +
							 d->grp[t]])
				continue;
			for (steps = 0; cur != (uint32_t)t && steps < 8; steps++) {
				int32_t node = g->sw_node[cur];
				uint8_t p = out->lft[node].port[lid];
				uint32_t a, nxt = UINT32_MAX;

				for (a = g->adj_off[cur]; a < g->adj_off[cur + 1];
				     a++)
					if (g->adj_port[a] == p) {
						nxt = g->adj_nbr[a];
						break;
					}
				if (nxt == UINT32_MAX)
					break;
				globals += !d->leaf[cur] && !d->leaf[nxt];
				if (d->leaf[nxt] && d->grp[nxt] != gm &&
				    d->grp[nxt] != d->grp[t] && globals)
					sl = 2;
				cur = nxt;
			}
			if (cur != (uint32_t)t) {
				routing_fmt(err, errlen, "detour from switch "
					    "0x%016llx to LID %u does not arrive",
					    (unsigned long long)fabric_node(g->f,
					    g->sw_node[m])->guid, lid);
				return -EHOSTUNREACH;
			}
			if (!sl && globals > 1)
				sl = 1;
			out->sl[g->sw_node[m]][lid] = (uint8_t)sl;
			d->detours += sl != 0;
		}
	}
	return 0;
}

static int fill_classes(struct dfp *d)
{
	const struct rgraph *g = &d->g;
	struct routing_result *out = d->out;

	out->port_class = calloc(g->f->n_nodes + 1, sizeof(*out->port_class));
	out->sl = calloc(g->f->n_nodes + 1, sizeof(*out->sl));
	if (!out->port_class || !out->sl)
		return -ENOMEM;
	for (uint32_t v = 0; v < g->S; v++) {
		int32_t node = g->sw_node[v];
		const struct fab_node *n = fabric_node(g->f, node);
		uint8_t *pc = malloc((size_t)n->num_ports + 1);

		out->port_class[node] = pc;
		out->sl[node] = calloc((size_t)g->top + 1, 1);
		if (!pc || !out->sl[node])
			return -ENOMEM;
		memset(pc, ROUTING_CLASS_HOST, (size_t)n->num_ports + 1);
		for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++)
			pc[g->adj_port[a]] = d->leaf[v] ? C_UP :
					     d->leaf[g->adj_nbr[a]] ? C_DOWN :
								      C_GLOBAL;
	}
	for (unsigned sl = 0; sl < 16; sl++) {
		out->vl_map[C_UP][C_UP][sl] = 1;
		out->vl_map[C_GLOBAL][C_GLOBAL][sl] = sl != 0;
		out->vl_map[C_GLOBAL][C_DOWN][sl] = sl != 0;
		out->vl_map[C_DOWN][C_GLOBAL][sl] = sl == 2;
	}
	return 0;
}

static int dfplus_route(const struct fabric *f, const struct routing_opts *o,
			struct routing_result *out, char *err, size_t errlen)
{
	struct dfp d = { .out = out };
	int rc = rg_build(&d.g, f, err, errlen);

	if (rc == 0)
		rc = find_groups(&d, err, errlen);
	if (rc == 0)
		rc = list_members(&d);
	if (rc == 0)
		rc = check_shape(&d, err, errlen);
	if (rc == 0)
		rc = routing_alloc_tables(f, out, d.g.top);
	if (rc == 0)
		rc = fill_classes(&d);
	if (rc == 0)
		rc = fill(&d, err, errlen);
	if (rc == 0)
		rc = fill_sls(&d, err, errlen);
	if (rc == 0 && d.detours) {
		struct routing_cdg cdg;

		out->n_nodes = f->n_nodes;
		rc = routing_check_cdg(f, out, &cdg);
		if (rc == 0 && routing_cdg_cycles(&cdg)) {
			routing_fmt(err, errlen, "detours for %u group pairs "
				    "without a global link would close %llu "
				    "dependency cycle(s)", d.missing,
				    (unsigned long long)routing_cdg_cycles(&cdg));
			rc = -EDEADLK;
		}
		out->cdg_acyclic = rc == 0;
	}
	if (rc == 0) {
		out->n_vls = 2;
		out->n_layers = 3;
		if (o && o->max_layers == 1 && d.missing) {
			routing_fmt(err, errlen, "detours need 2 VLs, 1 "
				    "allowed");
			rc = -ENOSPC;
		}
	}
	if (rc == 0)
		routing_fmt(out->summary, sizeof(out->summary),
			    "Dragonfly+, %u groups (%u/%u leaves/spines in "
			    "the first), %u of %u group pairs without a global "
			    "link (%u paths detour on VL 1); 3 SLs on 2 VLs",
			    d.G, d.glf_off[1] - d.glf_off[0],
			    d.gsp_off[1] - d.gsp_off[0], d.missing,
			    d.G * (d.G - 1), d.detours);
	if (rc == -ENOMEM)
		routing_fmt(err, errlen, "out of memory");
	if (rc < 0)
		routing_result_free(out);
	dfp_free(&d);
	return rc;
}

int routing_is_dfplus(const struct fabric *f, char *why, size_t whylen)
{
	struct dfp d = { 0 };
	int rc = rg_build(&d.g, f, why, whylen);

	if (rc == 0)
		rc = find_groups(&d, why, whylen);
	if (rc == 0)
		rc = list_members(&d);
	if (rc == 0)
		rc = check_shape(&d, why, whylen);
	if (rc == 0)
		routing_fmt(why, whylen, "Dragonfly+, %u groups, %u of %u "
			    "group pairs without a global link", d.G,
			    d.missing, d.G * (d.G - 1));
	dfp_free(&d);
	return rc == -ENOMEM ? rc : rc == 0;
}

const struct routing_engine routing_dfplus = {
	.name = "dfplus",
	.route = dfplus_route,
};
