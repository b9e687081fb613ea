/*
 * dfsssp.c - deadlock-free balanced shortest paths for any topology
 * ("dfsssp", OpenSM's name, so that opensm.conf files keep working).
 *
 * Paths.  Every LID gets its own tree of shortest paths (hop count) from
 * every switch.  As in DFSSSP, a channel weighs what the LIDs routed so
 * far load it with (all-to-all: the host paths that cross it), and each
 * switch takes, among its next hops on a shortest path, the one whose
 * path to the LID has the least summed weight (nearest switches first, so
 * a switch knows its neighbours' sums; ties: fewer LIDs, lower port, or
 * the port the switch's port_search_ordering_file line lists first).
 * LIDs go in ascending order, those of guid_routing_order_file's ports
 * first, in its order.
 * Then, farthest first, the host paths of each switch (its own CA/router
 * ports and those that flow into it) are added to the channels it chose.
 * Unlike DFSSSP the paths stay minimal in hops, and the weights are
 * searched over the BFS layering of one destination switch: one BFS per
 * destination switch and two passes over the channels per LID,
 * O(LIDs x channels), instead of one Dijkstra per LID.
 *
 * Layers.  A path keeps one layer (SL, and VL through the identity
 * SLtoVL tables) from its source to its destination; a layer is safe
 * while its channel dependency graph (routing/verify.h) is acyclic.  We
 * give whole destinations layers (every path towards one LID shares it,
 * so SL only depends on the destination LID): a LID's tree adds the
 * dependencies (v -> w) => (w -> x) wherever a path enters v, and goes
 * into the first layer that stays acyclic with them.  A LID whose tree
 * fits no layer whole has its paths placed one source switch at a time,
 * as DFSSSP places paths (out->sl then differs between the sources of one
 * LID); all of them or none.  The check is a topological order per layer,
 * kept up to date one dependency at a time (Pearce and Kelly): a new
 * dependency that agrees with it costs nothing; otherwise a search of the
 * part of the layer between its two ends either finds the cycle it would
 * close or reorders that part.  First, though, every LID goes into layer
 * 0 unchecked and one depth-first search decides: on a fat tree, whose
 * shortest paths never turn from down to up, that is all it takes.
 *
 * Layers allowed: at most o->max_layers (when set) and what every
 * inter-switch port takes (OperationalVLs, or VLCap while that is 0).
 * When the LIDs do not all fit, the last allowed layer is kept for the
 * LIDs that did not fit elsewhere and these are routed up*\/down* there
 * (updn.c: up*\/down* trees never close a cycle, whatever the
 * destinations); with a single VL, if the shortest paths are not already
 * acyclic, the whole fabric is routed up*\/down*.  out->summary says which.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/cdgraph.h"
#include "routing/engines.h"
#include "routing/order.h"

#define TENTATIVE	0x8000u		/* dependency bit of the LID being placed */
#define NOT_PLACED	0xff

struct dfsssp {
	struct rgraph g;
	struct routing_result *out;
	uint16_t *lid_order;	/* guid_routing_order_file: top LIDs, or NULL */
	size_t n_first;		/* ... the first n_first from the file */
	unsigned budget;	/* layers allowed */
	uint32_t C;		/* channels */
	/* the tree being built */
	uint32_t *dist, *order;	/* BFS from the destination switch */
	int32_t  last_t;	/* destination switch of dist */
	struct rg_tree tr;
	/* channel dependency graphs: dep[dep_off[c] + j] = layers in which
	 * channel c is followed by the j-th channel of the switch it leads to */
	uint32_t *dep_off;
	uint16_t *dep;
	uint32_t *slots;	/* dependencies of the LID being placed */
	uint32_t *slot_c;	/* ... and the channel each one follows */
	uint32_t  n_slots;
	uint32_t  n_reach;	/* switches in order */
	uint32_t *ord;		/* per layer: topological position per channel */
	uint32_t *new_ord;	/* the order a search is building */
	uint32_t *owner;	/* per channel: the switch it leaves */
	uint32_t *mark, stamp;	/* visited in the current search */
	uint64_t *listf, *listb;	/* (position, channel) of F and B */
	uint32_t *pos_all;
	uint32_t *added, n_added;	/* dependencies this LID added ... */
	uint8_t  *added_l;		/* ... and their layers */
	uint32_t *pslot, *pslot_c;	/* one source's path */
	uint32_t  n_split;		/* LIDs placed path by path */
	uint8_t  *color;
	uint32_t *stk, *pos;
	uint8_t  *layer;	/* per LID, NOT_PLACED */
	uint64_t  dfs_runs;
	uint32_t  untried;	/* LIDs the last pass did not try (full) */
	uint64_t  gave_up;	/* work at which a pass stopped, hopeless */
	uint64_t  work;		/* channels visited by add_dep() this pass */
};

/*
 * Layers that are full: once a pass has failed DFSSSP_FULL_RUN LIDs in a
 * row, the layers are taken as full and the LIDs after are left for
 * up*\/down* without being tried.
 * On a 1,000-switch random graph with 8 VLs nearly every LID fails every
 * layer: trying them all took 138 s for the same tables.
 */
#define DFSSSP_FULL_RUN	256

/*
 * And once a pass has visited DFSSSP_WORK_MAX channels keeping the layers'
 * orders (add_dep()), about 1-1.5 s, the same: the routing runs on the
 * loop and must not hold it.  A 200-switch random graph with 1,000 hosts
 * takes half of that; the 1,000-switch one above took 277 million.
 */
#define DFSSSP_WORK_MAX	(1ull << 24)

/*
 * A pass that cannot succeed stops early.  The first layered pass is of
 * use only if every LID fits (all or none), the second only if more than
 * half do (else the whole fabric goes up*\/down*, see dfsssp_route()).
 * Once a pass has spent 1/16 of DFSSSP_WORK_MAX, its work so far per LID
 * tried, times the LIDs it still needs to place, says whether it can get
 * there within the bound; when even twice the bound would not do, it
 * stops.  The estimate errs towards going on: later LIDs meet fuller
 * layers and cost more, not less.  The 1,000-switch random graph placed
 * 137 LIDs in 1.4 s per pass before the bound stopped it, twice, for the
 * same tables; a 200-switch graph, which fits, never comes near.
 */
#define DFSSSP_PROJECT_AFTER	(DFSSSP_WORK_MAX / 16)

static void df_free(struct dfsssp *d)
{
	free(d->dist);
	free(d->order);
	free(d->dep_off);
	free(d->dep);
	free(d->slots);
	free(d->slot_c);
	free(d->new_ord);
	free(d->owner);
	free(d->mark);
	free(d->listf);
	free(d->listb);
	free(d->pos_all);
	free(d->added);
	free(d->added_l);
	free(d->pslot);
	free(d->pslot_c);
	free(d->ord);
	free(d->color);
	free(d->stk);
	free(d->pos);
	free(d->layer);
	free(d->lid_order);
	rg_tree_free(&d->tr);
	rg_free(&d->g);
}

/* VLs a port takes: OperationalVLs, else VLCap; 0 when neither says. */
static unsigned port_vls(const struct fab_port *p)
{
	static const unsigned vls[] = { 0, 1, 2, 4, 8, 15 };
	unsigned e = pi_op_vls(&p->pi);

	if (!e)
		e = pi_vl_cap(&p->pi);
	return e < 6 ? vls[e] : 15;
}

static unsigned layer_budget(const struct rgraph *g,
			     const struct routing_opts *o)
{
	unsigned k = ROUTING_MAX_LAYERS;

	for (uint32_t v = 0; v < g->S; v++) {
		const struct fab_node *n = fabric_node(g->f, g->sw_node[v]);

		for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++) {
			unsigned n_vl = port_vls(&n->ports[g->adj_port[a]]);

			if (n_vl && n_vl < k)
				k = n_vl;
		}
	}
	if (o && o->max_layers && o->max_layers < k)
		k = o->max_layers;
	return k;
}

/* Dependency slots: one per (channel, channel out of the switch it
 * reaches). */
static size_t n_dep_total(const struct rgraph *g)
{
	size_t n = 0;

	for (uint32_t c = 0; c < g->adj_off[g->S]; c++) {
		uint32_t w = g->adj_nbr[c];

		n += g->adj_off[w + 1] - g->adj_off[w];
	}
	return n;
}

static int df_alloc(struct dfsssp *d)
{
	struct rgraph *g = &d->g;
	uint32_t S = g->S, C = g->adj_off[S];
	size_t n_dep = 0;

	d->C = C;
	d->dist = malloc((S + 1) * sizeof(*d->dist));
	d->order = malloc((S + 1) * sizeof(*d->order));
	d->dep_off = malloc(((size_t)C + 1) * sizeof(*d->dep_off));
	d->slots = malloc((S + 1) * sizeof(*d->slots));
	d->slot_c = malloc((S + 1) * sizeof(*d->slot_c));
	d->new_ord = malloc(((size_t)C + 1) * sizeof(*d->new_ord));
	d->owner = malloc(((size_t)C + 1) * sizeof(*d->owner));
	d->mark = calloc((size_t)C + 1, sizeof(*d->mark));
	d->listf = malloc(((size_t)C + 1) * sizeof(*d->listf));
	d->listb = malloc(((size_t)C + 1) * sizeof(*d->listb));
	d->pos_all = malloc((2 * (size_t)C + 1) * sizeof(*d->pos_all));
	/* one LID adds each (layer, dependency) once: at most every
	 * dependency of every source's path, S x S, capped by the graph */
	{
		size_t cap = (size_t)S * S + 1;

		if (cap > (size_t)d->budget * (n_dep_total(g) + 1))
			cap = (size_t)d->budget * (n_dep_total(g) + 1);
		d->added = malloc(cap * sizeof(*d->added));
		d->added_l = malloc(cap);
	}
	d->pslot = malloc((S + 1) * sizeof(*d->pslot));
	d->pslot_c = malloc((S + 1) * sizeof(*d->pslot_c));
	d->ord = malloc(((size_t)C * d->budget + 1) * sizeof(*d->ord));
	d->color = malloc((size_t)C + 1);
	d->stk = malloc(((size_t)C + 1) * sizeof(*d->stk));
	d->pos = malloc(((size_t)C + 1) * sizeof(*d->pos));
	d->layer = malloc((size_t)g->top + 1);
	if (!d->dist || !d->order || !d->dep_off || !d->slots || !d->ord ||
	    !d->color || !d->stk || !d->pos || !d->layer || !d->slot_c ||
	    !d->new_ord || !d->owner || !d->mark || !d->listf || !d->listb ||
	    !d->pos_all || !d->added || !d->added_l || !d->pslot ||
	    !d->pslot_c || rg_tree_init(&d->tr, g) < 0)
		return -ENOMEM;
	for (uint32_t v = 0; v < S; v++)
		for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++)
			d->owner[a] = v;
	for (uint32_t c = 0; c < C; c++) {
		uint32_t w = g->adj_nbr[c];

		d->dep_off[c] = (uint32_t)n_dep;
		n_dep += g->adj_off[w + 1] - g->adj_off[w];
	}
	d->dep_off[C] = (uint32_t)n_dep;
	d->dep = calloc(n_dep + 1, sizeof(*d->dep));
	return d->dep ? 0 : -ENOMEM;
}

/* Start over: no load, no dependencies, nothing placed. */
static void df_reset(struct dfsssp *d)
{
	struct rgraph *g = &d->g;

	memset(g->load, 0, (size_t)d->C * sizeof(*g->load));
	memset(g->cnt, 0, (size_t)d->C * sizeof(*g->cnt));
	memset(d->dep, 0, (size_t)d->dep_off[d->C] * sizeof(*d->dep));
	memset(d->layer, NOT_PLACED, (size_t)g->top + 1);
	for (unsigned l = 0; l < d->budget; l++)
		for (uint32_t c = 0; c < d->C; c++)
			d->ord[(size_t)l * d->C + c] = c;
	d->last_t = -1;
}

/* Channel a of switch v leads one hop nearer the destination switch. */
static bool on_shortest(void *ctx, uint32_t v, uint32_t a)
{
	const struct dfsssp *d = ctx;

	return d->dist[d->g.adj_nbr[a]] + 1 == d->dist[v];
}

/* The tree of LID `lid` into the tables and its dependencies into slots. */
static void route_lid(struct dfsssp *d, uint16_t lid)
{
	struct rgraph *g = &d->g;
	const struct rg_dest *dst = &g->dest[lid];
	uint32_t t = (uint32_t)dst->sw, n;

	if (d->last_t != dst->sw) {
		d->n_reach = rg_bfs(g, t, d->dist, d->order);
		d->last_t = dst->sw;
	}
	n = d->n_reach;		/* order: the switches that reach t, t first */
	d->out->lft[g->sw_node[t]].port[lid] = dst->port;
	rg_tree_build(g, &d->tr, lid, d->order, n, on_shortest, d);
	for (uint32_t i = 1; i < n; i++) {
		uint32_t v = d->order[i];

		d->out->lft[g->sw_node[v]].port[lid] = g->adj_port[d->tr.nxt[v]];
	}
	/* dependencies (v -> w) => (w -> x) of the paths entering v */
	d->n_slots = 0;
	for (uint32_t i = 1; i < n; i++) {
		uint32_t v = d->order[i], a = d->tr.nxt[v], w = g->adj_nbr[a];

		if (!d->tr.act[v] || w == t)
			continue;
		d->slot_c[d->n_slots] = a;
		d->slots[d->n_slots++] = d->dep_off[a] + d->tr.nxt[w] -
					 g->adj_off[w];
	}
}

/* The channel dependency slot s leads to. */
static uint32_t slot_to(const struct dfsssp *d, uint32_t c, uint32_t s)
{
	uint32_t w = d->g.adj_nbr[c];

	return d->g.adj_off[w] + (s - d->dep_off[c]);
}

/*
 * Is layer l acyclic with the TENTATIVE dependencies?  A depth-first
 * search; when it is, the reverse post-order becomes the layer's order.
 */
static bool layer_acyclic(struct dfsssp *d, unsigned l)
{
	uint16_t mask = (uint16_t)(1u << l | TENTATIVE);
	uint32_t *ord = d->new_ord, post = d->C;

	d->dfs_runs++;
	memset(d->color, 0, d->C);
	for (uint32_t s = 0; s < d->C; s++) {
		size_t sp = 0;

		if (d->color[s])
			continue;
		d->color[s] = 1;
		d->stk[sp] = s;
		d->pos[sp++] = d->dep_off[s];
		while (sp) {
			uint32_t c = d->stk[sp - 1];
			bool pushed = false;

			while (d->pos[sp - 1] < d->dep_off[c + 1]) {
				uint32_t q = d->pos[sp - 1]++, to;

				if (!(d->dep[q] & mask))
					continue;
				to = slot_to(d, c, q);
				if (d->color[to] == 1)
					return false;
				if (!d->color[to]) {
					d->color[to] = 1;
					d->stk[sp] = to;
					d->pos[sp++] = d->dep_off[to];
					pushed = true;
					break;
				}
			}
			if (!pushed) {
				d->color[c] = 2;
				ord[c] = --post;
				sp--;
			}
		}
	}
	memcpy(d->ord + (size_t)l * d->C, ord, (size_t)d->C * sizeof(*ord));
	return true;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void qsort_u32(uint32_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u32);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Add dependency slot s (channel c -> channel `to`) to layer l, keeping
 * the layer's topological order (Pearce and Kelly's dynamic topological
 * sort): when ord[to] < ord[c], the channels reachable from `to` below
 * ord[c] (F) and those reaching c above ord[to] (B) take the positions
 * the two sets held, B first.  Returns false, adding nothing, when `to`
 * reaches c: the dependency would close a cycle.
 */
static bool add_dep(struct dfsssp *d, unsigned l, uint32_t c, uint32_t s)
{
	const struct rgraph *g = &d->g;
	uint32_t *ord = d->ord + (size_t)l * d->C;
	uint16_t bit = (uint16_t)(1u << l);
	uint32_t to = slot_to(d, c, s), ub = ord[c], lb = ord[to];
	uint32_t nf = 0, nb = 0, sp;

	if (d->dep[s] & bit)
		return true;
	if (lb > ub) {
		d->dep[s] |= bit;
		d->added[d->n_added] = s;
		d->added_l[d->n_added++] = (uint8_t)l;
		return true;
	}
	/* F: forward from `to`, below ub */
	d->stamp++;
	sp = 0;
	d->stk[sp++] = to;
	d->mark[to] = d->stamp;
	while (sp) {
		uint32_t x = d->stk[--sp];

		d->listf[nf++] = (uint64_t)ord[x] << 32 | x;
		d->work++;
		for (uint32_t q = d->dep_off[x]; q < d->dep_off[x + 1]; q++) {
			uint32_t y;

			if (!(d->dep[q] & bit))
				continue;
			y = slot_to(d, x, q);
			if (y == c)
				return false;
			if (ord[y] < ub && d->mark[y] != d->stamp) {
				d->mark[y] = d->stamp;
				d->stk[sp++] = y;
			}
		}
	}
	/* B: backward from c, above lb */
	sp = 0;
	d->stk[sp++] = c;
	d->mark[c] = d->stamp;
	while (sp) {
		uint32_t x = d->stk[--sp], v = d->owner[x];
		uint32_t j = x - g->adj_off[v];

		d->listb[nb++] = (uint64_t)ord[x] << 32 | x;
		d->work++;
		for (uint32_t b = g->adj_off[v]; b < g->adj_off[v + 1]; b++) {
			uint32_t p = g->adj_rev[b];

			if (!(d->dep[d->dep_off[p] + j] & bit))
				continue;
			if (ord[p] > lb && d->mark[p] != d->stamp) {
				d->mark[p] = d->stamp;
				d->stk[sp++] = p;
			}
		}
	}
	qsort(d->listf, nf, sizeof(*d->listf), cmp_u64);
	qsort(d->listb, nb, sizeof(*d->listb), cmp_u64);
	for (uint32_t i = 0; i < nb; i++)
		d->pos_all[i] = (uint32_t)(d->listb[i] >> 32);
	for (uint32_t i = 0; i < nf; i++)
		d->pos_all[nb + i] = (uint32_t)(d->listf[i] >> 32);
	qsort_u32(d->pos_all, nb + nf);
	for (uint32_t i = 0; i < nb; i++)
		ord[(uint32_t)d->listb[i]] = d->pos_all[i];
	for (uint32_t i = 0; i < nf; i++)
		ord[(uint32_t)d->listf[i]] = d->pos_all[nb + i];
	d->dep[s] |= bit;
	d->added[d->n_added] = s;
	d->added_l[d->n_added++] = (uint8_t)l;
	return true;
}

/* Undo what the current LID added from entry `from` on. */
static void undo(struct dfsssp *d, uint32_t from)
{
	while (d->n_added > from) {
		d->n_added--;
		d->dep[d->added[d->n_added]] &=
			(uint16_t)~(1u << d->added_l[d->n_added]);
	}
}

/* Put the current LID's dependencies into the first layer < n that takes
 * them all; its number, or NOT_PLACED. */
static uint8_t place(struct dfsssp *d, unsigned n)
{
	for (unsigned l = 0; l < n; l++) {
		bool ok = true;

		d->n_added = 0;
		for (uint32_t i = 0; ok && i < d->n_slots; i++)
			ok = add_dep(d, l, d->slot_c[i], d->slots[i]);
		if (ok)
			return (uint8_t)l;
		/* the order stays valid for fewer dependencies */
		undo(d, 0);
	}
	return NOT_PLACED;
}

#define PER_PATH	0xfe	/* layer[lid]: see out->sl per source */

/*
 * A LID whose tree fits no layer whole: give each source switch's path
 * the first layer that takes it (out->sl per source, as DFSSSP places
 * paths).  All or nothing: PER_PATH, or NOT_PLACED with nothing added.
 */
static uint8_t place_paths(struct dfsssp *d, uint16_t lid, unsigned n)
{
	const struct rgraph *g = &d->g;
	uint32_t t = (uint32_t)g->dest[lid].sw;

	d->n_added = 0;
	for (uint32_t i = 1; i < d->n_reach; i++) {
		uint32_t v = d->order[i], a = d->tr.nxt[v], w, len = 0;
		bool ok = false;

		if (!g->nhost[v])
			continue;
		for (w = g->adj_nbr[a]; w != t; w = g->adj_nbr[a]) {
			uint32_t b = d->tr.nxt[w];

			d->pslot_c[len] = a;
			d->pslot[len++] = d->dep_off[a] + b - g->adj_off[w];
			a = b;
		}
		for (unsigned l = 0; !ok && l < n; l++) {
			uint32_t from = d->n_added;

			ok = true;
			for (uint32_t k = 0; ok && k < len; k++)
				ok = add_dep(d, l, d->pslot_c[k], d->pslot[k]);
			if (ok)
				d->out->sl[g->sw_node[v]][lid] = (uint8_t)l;
			else
				undo(d, from);
		}
		if (!ok) {
			undo(d, 0);
			return NOT_PLACED;
		}
	}
	if (g->nhost[t])
		d->out->sl[g->sw_node[t]][lid] = 0;
	d->n_split++;
	return PER_PATH;
}

/*
 * Route every LID and place it in layers 0 .. n-1; the LIDs left over.
 * n = 0: everything into layer 0 unchecked, then one search of it: on a
 * fat tree, where shortest paths never turn from down to up, that is all
 * it takes (LIDs left: 0, or all of them when layer 0 has a cycle).
 * all_or_none: stop at the first LID that fits no layer and return 1
 * (the caller throws such a pass away).
 */
static uint32_t count_lids(const struct rgraph *g);

/* Whether a pass that has tried `tried` LIDs and placed `placed` cannot
 * place `need` within twice DFSSSP_WORK_MAX at its rate so far. */
static bool hopeless(const struct dfsssp *d, uint32_t tried, uint32_t placed,
		     uint32_t need)
{
	if (d->work < DFSSSP_PROJECT_AFTER || placed >= need || !tried)
		return false;
	double per = (double)d->work / tried;

	return (double)d->work + per * (need - placed) > 2.0 * DFSSSP_WORK_MAX;
}

static uint32_t route_all(struct dfsssp *d, unsigned n, bool all_or_none)
{
	uint32_t left = 0, lids = 0, run = 0;
	uint32_t total = n ? count_lids(&d->g) : 0;
	uint32_t need = all_or_none ? total : total / 2 + 1;
	bool full = false;

	df_reset(d);
	d->n_split = 0;
	d->untried = 0;
	d->gave_up = 0;
	d->work = 0;
	for (uint32_t k = 1; k <= d->g.top; k++) {
		uint32_t l = d->lid_order ? d->lid_order[k - 1] : k;

		if (d->g.dest[l].sw < 0)
			continue;
		if (full) {
			d->layer[l] = NOT_PLACED;
			d->untried++;
			left++;
			continue;
		}
		route_lid(d, (uint16_t)l);
		lids++;
		if (!n) {
			for (uint32_t i = 0; i < d->n_slots; i++)
				d->dep[d->slots[i]] |= 1;
			d->layer[l] = 0;
			continue;
		}
		d->layer[l] = place(d, n);
		if (d->layer[l] == NOT_PLACED)
			d->layer[l] = place_paths(d, (uint16_t)l, n);
		if (d->layer[l] == NOT_PLACED) {
			if (all_or_none)
				return 1;
			left++;
			run++;
			full = run >= DFSSSP_FULL_RUN;
		} else {
			run = 0;
		}
		if (d->work > DFSSSP_WORK_MAX)
			full = true;
		if (!full && hopeless(d, lids, lids - left, need)) {
			d->gave_up = d->work;
			if (all_or_none)
				return 1;
			full = true;
		}
	}
	if (!n && !layer_acyclic(d, 0))
		left = lids;
	return left;
}

/* LIDs in use (destinations). */
static uint32_t count_lids(const struct rgraph *g)
{
	uint32_t n = 0;

	for (uint32_t l = 1; l <= g->top; l++)
		n += g->dest[l].sw >= 0;
	return n;
}

static bool not_placed(void *ctx, uint16_t lid)
{
	const struct dfsssp *d = ctx;

	return d->g.dest[lid].sw >= 0 && d->layer[lid] == NOT_PLACED;
}

/* Route the LIDs left over up*\/down* in layer `l` (all: whole fabric). */
static int updn_rest(struct dfsssp *d, const struct routing_opts *o,
		     unsigned l, char *what, size_t whatlen)
{
	uint32_t *key = malloc((d->g.S + 1) * sizeof(*key));
	struct updn *u = NULL;
	int64_t bad;
	int rc;

	if (!key)
		return -ENOMEM;
	rc = updn_pick(&d->g, o, false, key, what, whatlen);
	if (rc == 0 && (!(u = updn_new(&d->g, key)) ||
			updn_set_order(u, d->lid_order, d->n_first) < 0))
		rc = -ENOMEM;
	if (rc == 0) {
		bad = updn_route(u, d->out, not_placed, d);
		if (bad < 0)
			rc = (int)bad;
		else if (bad)
			rc = -EHOSTUNREACH;
	}
	if (rc == 0)
		for (uint32_t lid = 1; lid <= d->g.top; lid++)
			if (not_placed(d, (uint16_t)lid))
				d->layer[lid] = (uint8_t)l;
	updn_free(u);
	free(key);
	return rc;
}

static int dfsssp_route(const struct fabric *f, const struct routing_opts *o,
			struct routing_result *out, char *err, size_t errlen)
{
	struct dfsssp d = { .out = out };
	char what[120] = "";
	uint32_t left = 0, n_updn = 0;
	bool few = false;	/* layers held too few LIDs: all up*\/down* */
	unsigned used = 0;
	int rc;

	rc = rg_build_opts(&d.g, f, o, err, errlen);
	if (rc < 0)
		return rc;
	d.budget = layer_budget(&d.g, o);
	rc = df_alloc(&d);
	if (rc == 0)
		rc = routing_lid_order(f, o, d.g.top, &d.lid_order, &d.n_first);
	if (rc == 0)
		rc = routing_alloc_tables(f, out, d.g.top);
	if (rc == 0) {
		out->sl = calloc(f->n_nodes, sizeof(*out->sl));
		if (!out->sl)
			rc = -ENOMEM;
	}
	for (uint32_t v = 0; rc == 0 && v < d.g.S; v++) {
		out->sl[d.g.sw_node[v]] = calloc((size_t)d.g.top + 1, 1);
		if (!out->sl[d.g.sw_node[v]])
			rc = -ENOMEM;
	}
	if (rc == 0) {
		left = route_all(&d, 0, false);
		if (left)
			left = route_all(&d, d.budget, d.budget > 1);
		if (left && d.budget > 1)
			left = route_all(&d, d.budget - 1, false);
		n_updn = left;
		/* Layers that filled up holding less than half of the LIDs
		 * (a graph too large for per-destination layers) buy little
		 * balance, the rest being up*\/down*'s anyway, for every VL
		 * and every switch's SL-to-VL tables: one VL up*\/down* then.
		 * A 1,000-switch random graph: 8 VLs and 567,000 table Sets
		 * for 24.50x ideal, or 1 VL and none for 24.56x. */
		if (left && (d.budget == 1 ||
			     (d.untried && left * 2 > count_lids(&d.g)))) {
			few = d.budget > 1;
			memset(d.layer, NOT_PLACED, (size_t)d.g.top + 1);
			rc = updn_rest(&d, o, 0, what, sizeof(what));
		} else if (left) {
			rc = updn_rest(&d, o, d.budget - 1, what, sizeof(what));
		}
	}
	for (uint32_t v = 0; rc == 0 && v < d.g.S; v++) {
		uint8_t *sl = out->sl[d.g.sw_node[v]];

		for (size_t lid = 1; lid <= d.g.top; lid++) {
			if (d.g.dest[lid].sw < 0)
				continue;
			if (d.layer[lid] < ROUTING_MAX_LAYERS)
				sl[lid] = d.layer[lid];
			else if (d.layer[lid] != PER_PATH)
				sl[lid] = 0;
			if (sl[lid] + 1u > used)
				used = sl[lid] + 1u;
		}
	}
	if (!used)
		used = 1;
	if (rc == 0) {
		out->n_layers = (uint8_t)used;
		out->layers_short = n_updn > 0;
		if (!n_updn)
			snprintf(out->summary, sizeof(out->summary),
				 "shortest paths, %u layer%s of %u allowed "
				 "(%u LIDs layered per source)", used,
				 used == 1 ? "" : "s", d.budget, d.n_split);
		else if (d.budget == 1)
			snprintf(out->summary, sizeof(out->summary),
				 "1 VL: shortest paths not acyclic, whole fabric "
				 "up*/down* (%s)", what);
		else if (few && d.gave_up)
			snprintf(out->summary, sizeof(out->summary),
				 "%u of %u LIDs fit no layer of %u (layers full,"
				 " gave up after %.1f M channel visits):"
				 " whole fabric up*/down* on 1 VL (%s)", n_updn,
				 count_lids(&d.g), d.budget - 1,
				 (double)d.gave_up / 1e6, what);
		else if (few)
			snprintf(out->summary, sizeof(out->summary),
				 "%u of %u LIDs fit no layer of %u (layers full):"
				 " whole fabric up*/down* on 1 VL (%s)", n_updn,
				 count_lids(&d.g), d.budget - 1, what);
		else
			snprintf(out->summary, sizeof(out->summary),
				 "shortest paths in %u layers (%u LIDs layered "
				 "per source), %u LIDs up*/down* in layer %u (%s)"
				 "; %u allowed%s", d.budget - 1, d.n_split, n_updn,
				 d.budget - 1, what, d.budget,
				 d.untried ? "; layers full" : "");
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	else if (rc == -EHOSTUNREACH)
		snprintf(err, errlen, "up*/down* left pairs without a path");
	if (rc < 0)
		routing_result_free(out);
	df_free(&d);
	return rc;
}

const struct routing_engine routing_dfsssp = {
	.name = "dfsssp",
	.route = dfsssp_route,
};
