/*
 * verify_hop.c - the channel dependency check for tables whose VL changes
 * along a path (routing_result.port_class: torus datelines, Dragonfly+
 * detours).  A vertex is (channel, VL); a path that arrives on channel a
 * in VL x and leaves on channel b in VL y makes (b, y) depend on (a, x),
 * each VL given by routing_hop_vl() from the path's SL and the ports the
 * packet enters and leaves each switch by.  Paths are those of
 * routing_check_cdg(): from every switch with a CA/router port to every
 * assigned LID; per LID they form a tree through the tables, and each
 * switch hands the (input port class, SL) pairs of the paths through it
 * on to the next one in topological order (cost: switches x LIDs x the
 * pairs per switch, a few).  A depth-first search counts the edges
 * closing a cycle, per VL of the vertex they lead to.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "routing/cdgraph.h"
#include "routing/engines.h"
#include "routing/verify.h"

#define HOP_VLS	4	/* VLs a hop map may use */

struct hopcdg {
	struct rgraph g;
	uint32_t *slot;		/* node port slot -> channel + 1, 0: none */
	size_t *slot_off;	/* per node: first slot */
	uint32_t *dep_off;	/* per channel: its deps, one per channel out
				 * of the switch it reaches */
	uint16_t *dep;		/* bit x * 4 + y: (a, x) -> (b, y) */
	uint8_t *used;		/* VLs using each channel */
};

static void hc_free(struct hopcdg *h)
{
	rg_free(&h->g);
	free(h->slot);
	free(h->slot_off);
	free(h->dep_off);
	free(h->dep);
	free(h->used);
}

static int hc_alloc(struct hopcdg *h, const struct fabric *f)
{
	struct rgraph *g = &h->g;
	size_t slots = 0, n_chan, n_dep = 0;

	h->slot_off = malloc((f->n_nodes + 1) * sizeof(*h->slot_off));
	if (!h->slot_off)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_nodes; i++) {
		h->slot_off[i] = slots;
		slots += (size_t)f->nodes[i].num_ports + 1;
	}
	h->slot_off[f->n_nodes] = slots;
	n_chan = g->adj_off[g->S];
	h->slot = calloc(slots + 1, sizeof(*h->slot));
	h->dep_off = malloc((n_chan + 1) * sizeof(*h->dep_off));
	h->used = calloc(n_chan + 1, 1);
	if (!h->slot || !h->dep_off || !h->used)
		return -ENOMEM;
	for (uint32_t v = 0; v < g->S; v++)
		for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++) {
			uint32_t w = g->adj_nbr[a];

			h->slot[h->slot_off[g->sw_node[v]] + g->adj_port[a]] =
				a + 1;
			h->dep_off[a] = (uint32_t)n_dep;
			n_dep += g->adj_off[w + 1] - g->adj_off[w];
		}
	h->dep_off[n_chan] = (uint32_t)n_dep;
	h->dep = calloc(n_dep + 1, sizeof(*h->dep));
	return h->dep ? 0 : -ENOMEM;
}

/* Per LID scratch: every switch's channel towards the LID, the (input
 * class, SL) pairs of the paths through it, and a topological order. */
struct hop_lid {
	uint32_t *chan;		/* channel + 1, 0: leaves the grid here */
	uint64_t *mask;		/* bit cin * 16 + sl */
	uint32_t *indeg, *queue;
};

static unsigned class_of(const struct routing_result *r, int32_t node,
			 unsigned port)
{
	const uint8_t *pc = r->port_class[node];

	return pc ? pc[port] & 3 : ROUTING_CLASS_HOST;
}

static unsigned vl_of(const struct routing_result *r, int32_t node,
		      unsigned cin, unsigned out, unsigned sl)
{
	unsigned vl;

	if (!r->port_class[node])
		return 0;
	vl = r->vl_map[cin][class_of(r, node, out)][sl];
	return vl < HOP_VLS ? vl : HOP_VLS - 1;
}

/*
 * The dependencies of every path to `lid` at once: the paths form a tree
 * (or trees hanging off a loop of the tables, left to routing_check()),
 * so each switch passes the set of (input class, SL) of the paths that
 * reach it on to its next switch, in topological order, and records the
 * (channel, VL) -> (next channel, VL) edges of each.
 */
static void lid_deps(struct hopcdg *h, const struct routing_result *r,
		     struct hop_lid *w, uint16_t lid)
{
	const struct rgraph *g = &h->g;
	const struct fabric *f = g->f;
	uint32_t S = g->S, head = 0, tail = 0;

	for (uint32_t v = 0; v < S; v++) {
		int32_t node = g->sw_node[v];
		const struct lft *t = &r->lft[node];
		unsigned p = t->port && lid <= t->top ? t->port[lid] : 0;

		w->chan[v] = p && p <= fabric_node(f, node)->num_ports ?
			     h->slot[h->slot_off[node] + p] : 0;
		w->mask[v] = g->nhost[v] ? 1ULL << (ROUTING_CLASS_HOST * 16 +
				(routing_layer(r, node, lid) & 15)) : 0;
		w->indeg[v] = 0;
	}
	for (uint32_t v = 0; v < S; v++)
		if (w->chan[v])
			w->indeg[g->adj_nbr[w->chan[v] - 1]]++;
	for (uint32_t v = 0; v < S; v++)
		if (!w->indeg[v])
			w->queue[tail++] = v;
	while (head < tail) {
		uint32_t v = w->queue[head++], a, y;
		int32_t node = g->sw_node[v], ynode;
		unsigned out, in_y, cin_y;
		uint64_t m;

		if (!w->chan[v])
			continue;
		a = w->chan[v] - 1;
		y = g->adj_nbr[a];
		ynode = g->sw_node[y];
		out = g->adj_port[a];
		in_y = fabric_node(f, node)->ports[out].peer_port;
		cin_y = class_of(r, ynode, in_y);
		for (m = w->mask[v]; m; m &= m - 1) {
			unsigned bit = (unsigned)__builtin_ctzll(m);
			unsigned sl = bit % 16, vl1;

			vl1 = vl_of(r, node, bit / 16, out, sl);
			h->used[a] |= (uint8_t)(1u << vl1);
			w->mask[y] |= 1ULL << (cin_y * 16 + sl);
			if (w->chan[y]) {
				uint32_t b = w->chan[y] - 1;
				unsigned vl2 = vl_of(r, ynode, cin_y,
						     g->adj_port[b], sl);

				h->dep[h->dep_off[a] + (b - g->adj_off[y])] |=
					(uint16_t)(1u << (vl1 * HOP_VLS + vl2));
			}
		}
		if (!--w->indeg[y])
			w->queue[tail++] = y;
	}
}

/* Depth-first search over (channel, VL): back edges per VL. */
static int dfs(struct hopcdg *h, struct routing_cdg *c)
{
	const struct rgraph *g = &h->g;
	uint32_t n_chan = g->adj_off[g->S], n = n_chan * HOP_VLS;
	uint8_t *color = calloc((size_t)n + 1, 1);
	uint32_t *stk = malloc(((size_t)n + 1) * sizeof(*stk));
	uint32_t *pos = malloc(((size_t)n + 1) * sizeof(*pos));

	if (!color || !stk || !pos) {
		free(color);
		free(stk);
		free(pos);
		return -ENOMEM;
	}
	for (uint32_t s = 0; s < n; s++) {
		size_t sp = 0;

		if (color[s] || !(h->used[s / HOP_VLS] & (1u << (s % HOP_VLS))))
			continue;
		color[s] = 1;
		stk[sp] = s;
		pos[sp++] = 0;
		while (sp) {
			uint32_t x = stk[sp - 1], a = x / HOP_VLS;
			unsigned vl = x % HOP_VLS;
			uint32_t w = g->adj_nbr[a];
			uint32_t deg = g->adj_off[w + 1] - g->adj_off[w];
			bool pushed = false;

			while (pos[sp - 1] < deg * HOP_VLS) {
				uint32_t q = pos[sp - 1]++;
				uint32_t b = q / HOP_VLS, y = q % HOP_VLS, to;

				if (!(h->dep[h->dep_off[a] + b] &
				      (1u << (vl * HOP_VLS + y))))
					continue;
				c->deps[vl]++;
				to = (g->adj_off[w] + b) * HOP_VLS + y;
				if (color[to] == 1) {
					c->cycles[y]++;
				} else if (!color[to]) {
					color[to] = 1;
					stk[sp] = to;
					pos[sp++] = 0;
					pushed = true;
					break;
				}
			}
			if (!pushed) {
				color[x] = 2;
				sp--;
			}
		}
	}
	free(color);
	free(stk);
	free(pos);
	return 0;
}

int routing_check_cdg_hops(const struct fabric *f,
			   const struct routing_result *r,
			   struct routing_cdg *c)
{
	struct hopcdg h = { 0 };
	char err[128];
	int rc;

	memset(c, 0, sizeof(*c));
	rc = rg_build(&h.g, f, err, sizeof(err));
	if (rc == 0)
		rc = hc_alloc(&h, f);
	if (rc == 0) {
		struct hop_lid w;
		size_t S = h.g.S + 1;

		w.chan = malloc(S * sizeof(*w.chan));
		w.mask = malloc(S * sizeof(*w.mask));
		w.indeg = malloc(S * sizeof(*w.indeg));
		w.queue = malloc(S * sizeof(*w.queue));
		if (!w.chan || !w.mask || !w.indeg || !w.queue)
			rc = -ENOMEM;
		for (uint32_t lid = 1; rc == 0 && lid <= h.g.top; lid++)
			if (h.g.dest[lid].sw >= 0)
				lid_deps(&h, r, &w, (uint16_t)lid);
		free(w.chan);
		free(w.mask);
		free(w.indeg);
		free(w.queue);
	}
	if (rc == 0) {
		uint8_t all = 0;

		for (uint32_t a = 0; a < h.g.adj_off[h.g.S]; a++) {
			all |= h.used[a];
			c->channels += h.used[a] != 0;
		}
		c->layers = r->n_vls ? r->n_vls : 1;
		for (unsigned vl = 0; vl < HOP_VLS; vl++)
			if ((all & (1u << vl)) && vl + 1 > c->layers)
				c->layers = vl + 1;
		rc = dfs(&h, c);
	}
	hc_free(&h);
	return rc;
}
