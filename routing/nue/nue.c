/*
 * nue.c - "nue": deadlock-free routing for any topology on 1 to 8 VLs,
 * in the manner of Nue (Domke, Hoefler and Matsuoka, HPDC 2016): routes
 * are chosen inside the channel dependency graph as it grows, so no
 * layer ever gets a cycle and no route is thrown away afterwards.
 *
 * Destination by destination.  Each LID belongs to one layer (SL, and VL
 * through the identity SLtoVL tables), spread over the switches (see
 * route_all()).  Its tree of routes grows from its switch outwards, cheapest
 * first (Dijkstra): a switch u joins the tree through a channel u -> v to
 * a switch v already in it, which adds one dependency to the layer, u -> v
 * followed by v's own channel.  The candidate is taken only when the
 * layer accepts that dependency (cdg.c: no cycle); otherwise u waits for
 * its next cheapest candidate.  Routes need not be minimal: a detour is
 * taken when it is cheaper in load or when the shorter way would close a
 * cycle.
 *
 * Balance.  A channel's cost grows with its load, the number of CA-to-LID
 * routes already over it (cost_of()); once a LID's tree is built, every
 * CA behind each switch adds one route to every channel of its path.
 * Above NUE_MAX_TREES LIDs, a few LIDs of one switch share a tree.
 *
 * Impasse.  A switch that no candidate can join leaves the LID incomplete:
 * the LID's tree is undone and tried in the other layers in turn, then
 * once more in its own with channels off the layer's escape tree costing
 * NUE_BIAS times more (routes near the tree fit the layer more often:
 * on one VL, 200 switches, 35 x ideal without this try, 11 x with it),
 * and when that fails too, it follows the escape tree, whose turns the
 * layer holds from the start (escape.c): that never fails.
 * There is no central root for the fabric: escape trees are per layer,
 * used per LID, and counted in the summary.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/nue/nue.h"

/*
 * A channel costs the mean channel load so far (plus one), what keeps
 * routes short, plus its load x, plus x^2 / that mean, what keeps any one
 * channel from taking much more than the mean.
 */
static uint64_t cost_of(uint64_t mean, uint64_t x)
{
	return mean + 1 + x + x * x / (mean + 1);
}

/* A candidate whose dependency does not fit its layer's order as it is
 * (it needs a search, which may reorder the layer or find a cycle) waits
 * this many hops' worth of cost behind those that fit. */
#define NUE_AGAIN	4

/*
 * Work bound.  A search of a layer (cdg.c) may visit at most search_max
 * channels; beyond, the dependency is refused as if it closed a cycle,
 * which is always safe.  Each tree may spend its share of what is left
 * of NUE_WORK channel visits (what one leaves, the next may use), and
 * one search what is left of that, within [NUE_SEARCH_MIN,
 * NUE_SEARCH_MAX].  Measured on random graphs of degree 8: 400 switches,
 * searches of up to 1024 channels give 1.39 x ideal, 64 1.57; 1,000
 * switches, 16 to 64 give 1.75-1.79 x in 4-5 s of CPU, while a share
 * spent on the first trees leaves the last ones stuck (5.2 x).
 */
#define NUE_WORK		(1ull << 25)
#define NUE_SEARCH_MIN		16
#define NUE_SEARCH_MAX		1024

/* Trees at most: above this many LIDs, the LIDs of a switch are routed a
 * few to a tree (one switch's LIDs then share their routes). */
#define NUE_MAX_TREES	4096

enum { HOW_HOME, HOW_MOVED, HOW_BIASED, HOW_ESCAPE };

/* In a last try, channels off the escape tree cost this many times more
 * (1 VL, 200 switches: 4: 23 x ideal, 16: 12 x, 64: 11 x). */
#define NUE_BIAS	64

struct nue_cand {
	uint64_t cost;
	uint32_t u, a;		/* switch u joins through channel a */
	bool again;		/* put back once: needs a search */
};

struct nue {
	struct rgraph g;
	struct nue_cdg cdg;
	struct nue_escape esc;
	struct routing_result *out;
	unsigned n_vl;
	uint32_t S, C;
	uint8_t  *cluster;	/* switch -> region (escape.c: escape roots) */
	uint8_t  *home;		/* switch -> layer its LIDs try first */
	uint64_t  work_end;	/* cdg.work at which this tree's share ends */
	const uint8_t *bias;	/* escape tree whose channels cost less */
	uint32_t  gsize;	/* LIDs of one switch routed as one tree */
	uint32_t *comp_size;	/* per switch: switches in its component */
	/* the tree being built */
	uint32_t *nx;		/* switch -> channel to its parent, NUE_NONE */
	uint8_t  *in;		/* in the tree */
	uint32_t *seq, n_seq;	/* switches in the order they joined */
	uint64_t *flow;
	struct nue_cand *heap;
	uint32_t n_heap, cap_heap;
	uint64_t total;		/* summed channel load */
	/* per LID its layer; statistics */
	uint8_t  *layer;
	uint8_t  *how;		/* per LID: HOW_ */
	uint32_t n_lids, n_moved, n_escape, n_biased;
	uint32_t per_vl[NUE_MAX_VLS];
};

static void heap_push(struct nue *n, uint64_t cost, uint32_t u, uint32_t a,
		      bool again)
{
	struct nue_cand c = { cost, u, a, again };
	uint32_t i = n->n_heap++;

	while (i) {
		uint32_t p = (i - 1) / 2;

		if (n->heap[p].cost <= cost)
			break;
		n->heap[i] = n->heap[p];
		i = p;
	}
	n->heap[i] = c;
}

static struct nue_cand heap_pop(struct nue *n)
{
	struct nue_cand top = n->heap[0], last = n->heap[--n->n_heap];
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= n->n_heap)
			break;
		if (c + 1 < n->n_heap && n->heap[c + 1].cost < n->heap[c].cost)
			c++;
		if (n->heap[c].cost >= last.cost)
			break;
		n->heap[i] = n->heap[c];
		i = c;
	}
	if (n->n_heap)
		n->heap[i] = last;
	return top;
}

static uint64_t weight(const struct nue *n, uint32_t a)
{
	return cost_of(n->C ? n->total / n->C : 0, n->g.load[a]);
}

/* u joins the tree through a; its neighbours outside become candidates. */
static void join(struct nue *n, uint32_t u, uint32_t a, uint64_t cost)
{
	const struct rgraph *g = &n->g;

	n->in[u] = 1;
	n->nx[u] = a;
	n->seq[n->n_seq++] = u;
	for (uint32_t b = g->adj_off[u]; b < g->adj_off[u + 1]; b++) {
		uint32_t x = g->adj_nbr[b], c = g->adj_rev[b];

		if (!n->in[x] && n->n_heap < n->cap_heap)
			heap_push(n, cost + weight(n, c) *
				  (n->bias && !n->bias[c] ? NUE_BIAS : 1),
				  x, c, false);
	}
}

/* Clear the tree of the last try. */
static void tree_reset(struct nue *n)
{
	for (uint32_t i = 0; i < n->n_seq; i++) {
		n->in[n->seq[i]] = 0;
		n->nx[n->seq[i]] = NUE_NONE;
	}
	n->n_seq = 0;
	n->n_heap = 0;
}

/* The tree of destination switch t in layer l, cheapest first; false
 * when some switch of t's component could not join (an impasse). */
static bool grow_tree(struct nue *n, uint32_t t, unsigned l)
{
	tree_reset(n);
	join(n, t, NUE_NONE, 0);
	while (n->n_heap && n->n_seq < n->comp_size[t]) {
		struct nue_cand c = heap_pop(n);
		uint32_t v;

		if (n->in[c.u])
			continue;
		v = n->g.adj_nbr[c.a];
		if (v != t && !c.again &&
		    !nue_cdg_free_dep(&n->cdg, l, c.a, n->nx[v])) {
			if (n->n_heap < n->cap_heap)
				heap_push(n, c.cost + NUE_AGAIN *
					  (n->total / (n->C ? n->C : 1) + 1),
					  c.u, c.a, true);
			continue;
		}
		if (v != t) {
			uint64_t left = n->work_end > n->cdg.work ?
					n->work_end - n->cdg.work : 0;

			n->cdg.search_max = (uint32_t)(left < NUE_SEARCH_MIN ?
				NUE_SEARCH_MIN : left > NUE_SEARCH_MAX ?
				NUE_SEARCH_MAX : left);
			if (!nue_cdg_add(&n->cdg, l, c.a, n->nx[v]))
				continue;
		}
		join(n, c.u, c.a, c.cost);
	}
	return n->n_seq == n->comp_size[t];
}

/* The escape tree of layer l towards t (breadth-first over its edges). */
static void escape_tree(struct nue *n, uint32_t t, unsigned l)
{
	const struct rgraph *g = &n->g;
	const uint8_t *tree = n->esc.tree + (size_t)l * n->C;

	tree_reset(n);
	n->in[t] = 1;
	n->seq[n->n_seq++] = t;
	for (uint32_t h = 0; h < n->n_seq; h++) {
		uint32_t v = n->seq[h];

		for (uint32_t b = g->adj_off[v]; b < g->adj_off[v + 1]; b++) {
			uint32_t x = g->adj_nbr[b];

			if (!tree[b] || n->in[x])
				continue;
			n->in[x] = 1;
			n->nx[x] = g->adj_rev[b];
			n->seq[n->n_seq++] = x;
		}
	}
}

/* The tree into the tables and the load for the `cnt` LIDs of one group
 * (one switch's): farthest first, each switch's CAs and those routed
 * through it load its channel, once per LID. */
static void commit(struct nue *n, const uint32_t *lids, uint32_t cnt,
		   unsigned l)
{
	struct rgraph *g = &n->g;
	const struct rg_dest *dst = &g->dest[lids[0]];

	for (uint32_t i = 0; i < n->n_seq; i++)
		n->flow[n->seq[i]] = g->nhost[n->seq[i]];
	for (uint32_t i = n->n_seq; i-- > 1;) {
		uint32_t u = n->seq[i], a = n->nx[u], v = g->adj_nbr[a];
		uint8_t *port = n->out->lft[g->sw_node[u]].port;
		uint8_t *sl = n->out->sl[g->sw_node[u]];

		n->flow[v] += n->flow[u];
		g->load[a] += n->flow[u] * cnt;
		g->cnt[a] += cnt;
		n->total += n->flow[u] * cnt;
		for (uint32_t k = 0; k < cnt; k++) {
			port[lids[k]] = g->adj_port[a];
			sl[lids[k]] = (uint8_t)l;
		}
	}
	for (uint32_t k = 0; k < cnt; k++) {
		dst = &g->dest[lids[k]];
		n->out->lft[g->sw_node[dst->sw]].port[lids[k]] = dst->port;
		n->out->sl[g->sw_node[dst->sw]][lids[k]] = (uint8_t)l;
		n->layer[lids[k]] = (uint8_t)l;
	}
	n->per_vl[l] += cnt;
}

/* One group of LIDs of one switch: its own layer, then the others, then
 * its layer's escape tree. */
static void route_group(struct nue *n, const uint32_t *lids, uint32_t cnt)
{
	uint32_t t = (uint32_t)n->g.dest[lids[0]].sw;
	unsigned home = n->home[t], how = HOW_ESCAPE, l = home;

	for (unsigned k = 0; k < n->n_vl && how == HOW_ESCAPE; k++) {
		l = (home + k) % n->n_vl;
		n->cdg.n_log = 0;
		if (grow_tree(n, t, l))
			how = k > 0 ? HOW_MOVED : HOW_HOME;
		else
			nue_cdg_undo(&n->cdg, 0);
	}
	if (how == HOW_ESCAPE) {
		/* once more in its own layer, along its escape tree where
		 * the load allows: the more of the tree, the likelier the
		 * routes fit the layer */
		l = home;
		n->bias = n->esc.tree + (size_t)l * n->C;
		n->cdg.n_log = 0;
		if (grow_tree(n, t, l))
			how = HOW_BIASED;
		else
			nue_cdg_undo(&n->cdg, 0);
		n->bias = NULL;
	}
	if (how == HOW_ESCAPE)
		escape_tree(n, t, l);
	for (uint32_t k = 0; k < cnt; k++)
		n->how[lids[k]] = (uint8_t)how;
	commit(n, lids, cnt, l);
}

/* VLs an inter-switch port takes: OperationalVLs, else VLCap; 0: unsaid */
static unsigned port_vls(const struct fab_port *p)
{
	static const unsigned vls[] = { 0, 1, 2, 4, 8, 15 };
	unsigned e = pi_op_vls(&p->pi);

	if (!e)
		e = pi_vl_cap(&p->pi);
	return e < 6 ? vls[e] : 15;
}

/* Layers: NUE_MAX_VLS, no more than every inter-switch port takes, nor
 * than the daemon allows (max_layers) or the nue key asks for. */
static unsigned vl_budget(const struct rgraph *g, const struct routing_opts *o,
			  unsigned asked)
{
	unsigned k = NUE_MAX_VLS;

	for (uint32_t v = 0; v < g->S; v++) {
		const struct fab_node *nd = fabric_node(g->f, g->sw_node[v]);

		for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++) {
			unsigned n_vl = port_vls(&nd->ports[g->adj_port[a]]);

			if (n_vl && n_vl < k)
				k = n_vl;
		}
	}
	if (o && o->max_layers && o->max_layers < k)
		k = o->max_layers;
	if (asked && asked < k)
		k = asked;
	return k ? k : 1;
}

static void nue_free(struct nue *n)
{
	free(n->cluster);
	free(n->home);
	free(n->comp_size);
	free(n->nx);
	free(n->in);
	free(n->seq);
	free(n->flow);
	free(n->heap);
	free(n->layer);
	free(n->how);
	nue_escape_free(&n->esc);
	nue_cdg_free(&n->cdg);
	rg_free(&n->g);
}

static int nue_alloc(struct nue *n)
{
	uint32_t S = n->S;

	n->cap_heap = 2 * n->C + S + 1;	/* each channel once, and once again */
	n->cluster = calloc((size_t)S + 1, 1);
	n->comp_size = calloc((size_t)S + 1, sizeof(*n->comp_size));
	n->nx = malloc(((size_t)S + 1) * sizeof(*n->nx));
	n->in = calloc((size_t)S + 1, 1);
	n->seq = malloc(((size_t)S + 1) * sizeof(*n->seq));
	n->flow = malloc(((size_t)S + 1) * sizeof(*n->flow));
	n->heap = malloc((size_t)n->cap_heap * sizeof(*n->heap));
	n->layer = calloc((size_t)n->g.top + 1, 1);
	n->how = calloc((size_t)n->g.top + 1, 1);
	n->home = calloc((size_t)S + 1, 1);
	if (!n->cluster || !n->comp_size || !n->nx || !n->in || !n->seq ||
	    !n->flow || !n->heap || !n->layer || !n->how || !n->home)
		return -ENOMEM;
	for (uint32_t v = 0; v < S; v++) {
		n->nx[v] = NUE_NONE;
		n->comp_size[n->g.comp[v]]++;
	}
	for (uint32_t v = 0; v < S; v++)
		n->comp_size[v] = n->comp_size[n->g.comp[v]];
	if (nue_cdg_init(&n->cdg, &n->g, n->n_vl, S + 1) < 0)
		return -ENOMEM;
	return 0;
}

static int alloc_sl(const struct nue *n, const struct fabric *f,
		    struct routing_result *out)
{
	out->sl = calloc(f->n_nodes, sizeof(*out->sl));
	if (!out->sl)
		return -ENOMEM;
	for (uint32_t v = 0; v < n->S; v++) {
		out->sl[n->g.sw_node[v]] = calloc((size_t)n->g.top + 1, 1);
		if (!out->sl[n->g.sw_node[v]])
			return -ENOMEM;
	}
	return 0;
}

/*
 * The LIDs in the order they are routed, in groups of the same switch:
 * by switch, then (stable) by rank within the switch divided by the group
 * size, so the first group of every switch comes first, then the second
 * ...  and the load of one switch's LIDs spreads as the trees are built.
 * *n_groups and grp[] (start of each group, grp[n_groups] = the end).
 */
static int order_lids(struct nue *n, uint32_t gsize, uint32_t *lids,
		      uint32_t *grp, uint32_t *n_groups)
{
	const struct rgraph *g = &n->g;
	uint32_t top = g->top, total = 0, max_b = 0;
	uint32_t *cnt = calloc((size_t)n->S + top + 2, sizeof(*cnt));
	uint32_t *tmp = malloc(((size_t)top + 1) * sizeof(*tmp));
	uint32_t *bkt = malloc(((size_t)top + 1) * sizeof(*bkt));

	if (!cnt || !tmp || !bkt) {
		free(cnt);
		free(tmp);
		free(bkt);
		return -ENOMEM;
	}
	for (uint32_t lid = 1; lid <= top; lid++)
		if (g->dest[lid].sw >= 0)
			cnt[g->dest[lid].sw + 1]++;
	for (uint32_t v = 1; v <= n->S; v++)
		cnt[v] += cnt[v - 1];
	for (uint32_t lid = 1; lid <= top; lid++)
		if (g->dest[lid].sw >= 0)
			tmp[cnt[g->dest[lid].sw]++] = lid;
	total = cnt[n->S - 1];
	/* bucket: rank within the switch / gsize (tmp is by switch) */
	for (uint32_t i = 0; i < total; i++) {
		uint32_t v = (uint32_t)g->dest[tmp[i]].sw;
		uint32_t start = v ? cnt[v - 1] : 0;

		bkt[i] = (i - start) / gsize;
		if (bkt[i] + 1 > max_b)
			max_b = bkt[i] + 1;
	}
	memset(cnt, 0, ((size_t)max_b + 2) * sizeof(*cnt));
	for (uint32_t i = 0; i < total; i++)
		cnt[bkt[i] + 1]++;
	for (uint32_t b = 1; b <= max_b; b++)
		cnt[b] += cnt[b - 1];
	for (uint32_t i = 0; i < total; i++)
		lids[cnt[bkt[i]]++] = tmp[i];
	*n_groups = 0;
	for (uint32_t i = 0; i < total; i++)
		if (!i || g->dest[lids[i]].sw != g->dest[lids[i - 1]].sw ||
		    i - grp[*n_groups - 1] == gsize)
			grp[(*n_groups)++] = i;
	grp[*n_groups] = total;
	n->n_lids = total;
	free(cnt);
	free(tmp);
	free(bkt);
	return 0;
}

/* Every group, each with its share of the work bound. */
static int route_all(struct nue *n)
{
	uint32_t top = n->g.top, n_lids = 0, gsize, n_groups = 0;
	uint32_t *lids = malloc(((size_t)top + 1) * sizeof(*lids));
	uint32_t *grp = malloc(((size_t)top + 2) * sizeof(*grp));
	int rc = lids && grp ? 0 : -ENOMEM;

	for (uint32_t lid = 1; lid <= top; lid++)
		n_lids += n->g.dest[lid].sw >= 0;
	gsize = (n_lids + NUE_MAX_TREES - 1) / NUE_MAX_TREES;
	n->gsize = gsize ? gsize : 1;
	/* each switch's LIDs go into a layer scattered over the switch
	 * numbers (neighbours rarely share one): on a 400-switch random
	 * graph 1.45 x ideal, against 1.73 with connected regions */
	for (uint32_t v = 0; v < n->S; v++)
		n->home[v] = (uint8_t)((uint64_t)v * 7919u % 104729u % n->n_vl);
	if (rc == 0 && n_lids)
		rc = order_lids(n, n->gsize, lids, grp, &n_groups);
	for (uint32_t i = 0; rc == 0 && i < n_groups; i++) {
		uint64_t left = n->cdg.work < NUE_WORK ? NUE_WORK - n->cdg.work
						       : 0;

		n->work_end = n->cdg.work + left / (n_groups - i);
		route_group(n, lids + grp[i], grp[i + 1] - grp[i]);
	}
	for (uint32_t i = 0; rc == 0 && i < n->n_lids; i++) {
		n->n_moved += n->how[lids[i]] == HOW_MOVED;
		n->n_escape += n->how[lids[i]] == HOW_ESCAPE;
		n->n_biased += n->how[lids[i]] == HOW_BIASED;
	}
	free(lids);
	free(grp);
	return rc;
}

static void summarize(const struct nue *n, struct routing_result *out)
{
	char per[96] = "";
	size_t used = 0;

	for (unsigned l = 0; l < n->n_vl && used < sizeof(per); l++) {
		int w = snprintf(per + used, sizeof(per) - used, "%s%u",
				 l ? "/" : "", n->per_vl[l]);

		if (w > 0)
			used += (size_t)w;
	}
	routing_fmt(out->summary, sizeof(out->summary),
		    "%u LIDs on %u VL%s (%s), %u in another VL than their "
		    "own, %u on escape trees (%u more near one), %u LID%s a "
		    "tree; %llu "
		    "dependency searches (%llu cut short, %.1f M channels "
		    "visited)", n->n_lids, n->n_vl, n->n_vl == 1 ? "" : "s",
		    per, n->n_moved, n->n_escape, n->n_biased, n->gsize,
		    n->gsize == 1 ? "" : "s",
		    (unsigned long long)n->cdg.searches,
		    (unsigned long long)n->cdg.bounded,
		    (double)n->cdg.work / 1e6);
}

static int nue_run(const struct fabric *f, const struct routing_opts *o,
		   unsigned asked, struct routing_result *out, char *err,
		   size_t errlen)
{
	struct nue n = { .out = out };
	int rc;


	rc = rg_build(&n.g, f, err, errlen);
	if (rc < 0)
		return rc;
	n.S = n.g.S;
	n.C = n.g.adj_off[n.S];
	n.n_vl = vl_budget(&n.g, o, asked);
	rc = nue_alloc(&n);
	if (rc == 0)
		rc = nue_escape_build(&n.g, &n.cdg, n.n_vl, n.cluster, &n.esc);
	if (rc == 0)
		rc = routing_alloc_tables(f, out, n.g.top);
	if (rc == 0)
		rc = alloc_sl(&n, f, out);
	if (rc == 0) {
		n.cdg.logging = true;
		rc = route_all(&n);
	}
	if (rc == 0) {
		out->n_layers = (uint8_t)n.n_vl;
		summarize(&n, out);
	} else {
		routing_fmt(err, errlen, "%s", rc == -ENOMEM ? "out of memory"
			    : "escape tree not acyclic (a bug)");
		routing_result_free(out);
	}
	nue_free(&n);
	return rc;
}

/* nue: as many VLs as nue_max_num_vls (0: as the fabric allows) */
static int nue_route(const struct fabric *f, const struct routing_opts *o,
		     struct routing_result *out, char *err, size_t errlen)
{
	return nue_run(f, o, o ? o->nue_max_vls : 0, out, err, errlen);
}

/* lash's promise is deadlock freedom on as few or many VLs as it takes */
static int nue_any_route(const struct fabric *f, const struct routing_opts *o,
			 struct routing_result *out, char *err, size_t errlen)
{
	return nue_run(f, o, 0, out, err, errlen);
}

const struct routing_engine routing_nue = {
	.name = "nue",
	.route = nue_route,
};

/* sssp's: balanced, on one VL (deadlock-free as well) */
static int nue_one_route(const struct fabric *f, const struct routing_opts *o,
			 struct routing_result *out, char *err, size_t errlen)
{
	return nue_run(f, o, 1, out, err, errlen);
}

/* The engines the OpenSM names lash, dor, torus-2QoS and sssp map to
 * (routing.c); they route as nue and say so. */
const struct routing_engine routing_nue_any = {
	.name = "nue",
	.route = nue_any_route,
};

const struct routing_engine routing_nue_one = {
	.name = "nue",
	.route = nue_one_route,
};
