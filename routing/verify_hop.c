/*
 * verify_hop.c - the channel dependency check for tables whose VL changes
 * along a path (routing_result.port_class: torus datelines, Dragonfly+
 * detours).  A vertex is (channel, VL); a path that arrives on channel a
 * in VL x and leaves on channel b in VL y makes (b, y) depend on (a, x),
 * each VL given by routing_hop_vl() from the path's SL and the ports the
 * packet enters and leaves each switch by.  Paths are those of
 * routing_check_cdg(): from every switch with a CA/router port to every
 * assigned LID, walked hop by hop (cost: switches x LIDs x hops; the
 * engines that need this route by coordinates and are short).  A depth-
 * first search counts the edges closing a cycle, per VL of the vertex
 * they lead to.
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

/* Walk the path from switch v to `lid` and record its dependencies. */
static void walk(struct hopcdg *h, const struct routing_result *r,
		 uint32_t v, uint16_t lid)
{
	const struct rgraph *g = &h->g;
	const struct fabric *f = g->f;
	unsigned sl = routing_layer(r, g->sw_node[v], lid), in = 0, pvl = 0;
	uint32_t prev = UINT32_MAX, cur = v;

	for (uint32_t step = 0; step <= g->S; step++) {
		int32_t node = g->sw_node[cur];
		const struct lft *t = &r->lft[node];
		unsigned p, vl;
		uint32_t a;

		if (!t->port || lid > t->top)
			return;
		p = t->port[lid];
		if (!p || p > fabric_node(f, node)->num_ports)
			return;
		a = h->slot[h->slot_off[node] + p];
		if (!a--)
			return;		/* leaves the fabric here */
		vl = routing_hop_vl(r, node, in, p, sl);
		if (vl >= HOP_VLS)
			vl = HOP_VLS - 1;
		h->used[a] |= (uint8_t)(1u << vl);
		if (prev != UINT32_MAX)
			h->dep[h->dep_off[prev] + (a - g->adj_off[cur])] |=
				(uint16_t)(1u << (pvl * HOP_VLS + vl));
		prev = a;
		pvl = vl;
		in = fabric_node(f, node)->ports[p].peer_port;
		cur = g->adj_nbr[a];
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
	for (uint32_t v = 0; rc == 0 && v < h.g.S; v++) {
		if (!h.g.nhost[v])
			continue;
		for (uint32_t lid = 1; lid <= h.g.top; lid++)
			if (h.g.dest[lid].sw >= 0)
				walk(&h, r, v, (uint16_t)lid);
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
