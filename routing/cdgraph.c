/*
 * cdgraph.c - the switch graph the deadlock-free engines share (see
 * cdgraph.h).  Links count when both ends say INIT or better, as for
 * minhop; a CA or router port counts where it is linked to a switch.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/cdgraph.h"
#include "routing/engines.h"

void rg_free(struct rgraph *g)
{
	free(g->sw_node);
	free(g->sw_idx);
	free(g->adj_off);
	free(g->adj_nbr);
	free(g->adj_port);
	free(g->adj_rev);
	free(g->nhost);
	free(g->comp);
	free(g->dest);
	free(g->load);
	free(g->cnt);
	memset(g, 0, sizeof(*g));
}

static int build_switches(struct rgraph *g, const struct routing_opts *o)
{
	const struct fabric *f = g->f;
	size_t n_adj = 0;
	uint32_t S = 0;

	g->sw_idx = malloc((f->n_nodes + 1) * sizeof(*g->sw_idx));
	if (!g->sw_idx)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_nodes; i++) {
		g->sw_idx[i] = -1;
		if (f->nodes[i].type == NODE_TYPE_SWITCH) {
			g->sw_idx[i] = (int32_t)S++;
			n_adj += f->nodes[i].num_ports;
		}
	}
	g->S = S;
	g->sw_node = malloc((S + 1) * sizeof(*g->sw_node));
	g->adj_off = malloc((S + 1) * sizeof(*g->adj_off));
	g->adj_nbr = malloc((n_adj + 1) * sizeof(*g->adj_nbr));
	g->adj_port = malloc(n_adj + 1);
	g->adj_rev = malloc((n_adj + 1) * sizeof(*g->adj_rev));
	g->nhost = calloc(S + 1, sizeof(*g->nhost));
	g->comp = malloc((S + 1) * sizeof(*g->comp));
	if (!g->sw_node || !g->adj_off || !g->adj_nbr || !g->adj_port ||
	    !g->adj_rev || !g->nhost || !g->comp)
		return -ENOMEM;

	n_adj = 0;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		int32_t v = g->sw_idx[i];
		const uint8_t *rank;
		uint8_t by_rank[256];

		if (v < 0)
			continue;
		rank = routing_port_rank(o, (int32_t)i);
		g->sw_node[v] = (int32_t)i;
		g->adj_off[v] = (uint32_t)n_adj;
		/* channels in port order, or in the switch's search order */
		for (unsigned p = 1; p <= n->num_ports; p++)
			by_rank[rank ? rank[p] : p] = (uint8_t)p;
		for (unsigned k = 1; k <= n->num_ports; k++) {
			unsigned p = by_rank[k];
			const struct fab_port *pt = &n->ports[p];
			int32_t w;

			if (!routing_port_up(f, pt))
				continue;
			w = g->sw_idx[pt->peer_node];
			if (w < 0) {
				g->nhost[v]++;
				continue;
			}
			if (w == v)
				continue;	/* a loopback cable */
			g->adj_nbr[n_adj] = (uint32_t)w;
			g->adj_port[n_adj] = (uint8_t)p;
			n_adj++;
		}
	}
	g->adj_off[S] = (uint32_t)n_adj;

	/* the channel back: the one of the peer that leaves by the peer port */
	for (uint32_t v = 0; v < S; v++)
		for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++) {
			const struct fab_port *pt =
				&fabric_node(f, g->sw_node[v])->ports[g->adj_port[a]];
			uint32_t w = g->adj_nbr[a];

			g->adj_rev[a] = a;
			for (uint32_t b = g->adj_off[w]; b < g->adj_off[w + 1]; b++)
				if (g->adj_port[b] == pt->peer_port) {
					g->adj_rev[a] = b;
					break;
				}
		}
	g->load = calloc(n_adj + 1, sizeof(*g->load));
	g->cnt = calloc(n_adj + 1, sizeof(*g->cnt));
	return g->load && g->cnt ? 0 : -ENOMEM;
}

static int build_dests(struct rgraph *g, char *err, size_t errlen)
{
	const struct fabric *f = g->f;

	g->dest = malloc(((size_t)g->top + 1) * sizeof(*g->dest));
	if (!g->dest)
		return -ENOMEM;
	for (size_t l = 0; l <= g->top; l++)
		g->dest[l] = (struct rg_dest){ .sw = -1 };
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		bool sw = n->type == NODE_TYPE_SWITCH;

		for (unsigned p = sw ? 0 : 1; p <= (sw ? 0u : n->num_ports); p++) {
			const struct fab_port *pt = &n->ports[p];
			struct rg_dest d = { .sw = -1, .host = !sw };
			size_t end;

			if (!pt->lid)
				continue;
			end = (size_t)pt->lid + (1u << (pt->lmc & 7));
			if (end > (size_t)g->top + 1) {
				snprintf(err, errlen, "LID range %u+%u of node "
					 "0x%016llx beyond max LID %u", pt->lid,
					 1u << (pt->lmc & 7),
					 (unsigned long long)n->guid, g->top);
				return -EINVAL;
			}
			if (sw) {
				d.sw = g->sw_idx[i];
			} else if (routing_port_up(f, pt) &&
				   g->sw_idx[pt->peer_node] >= 0) {
				d.sw = g->sw_idx[pt->peer_node];
				d.port = pt->peer_port;
			}
			for (size_t l = pt->lid; l < end; l++)
				g->dest[l] = d;
		}
	}
	return 0;
}

uint32_t rg_bfs(const struct rgraph *g, uint32_t t, uint32_t *dist,
		uint32_t *order)
{
	uint32_t head = 0, tail = 0;

	for (uint32_t v = 0; v < g->S; v++)
		dist[v] = RG_INF;
	dist[t] = 0;
	order[tail++] = t;
	while (head < tail) {
		uint32_t v = order[head++];

		for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++) {
			uint32_t w = g->adj_nbr[a];

			if (dist[w] == RG_INF) {
				dist[w] = dist[v] + 1;
				order[tail++] = w;
			}
		}
	}
	return tail;
}

int rg_build(struct rgraph *g, const struct fabric *f, char *err,
	     size_t errlen)
{
	return rg_build_opts(g, f, NULL, err, errlen);
}

int rg_build_opts(struct rgraph *g, const struct fabric *f,
		  const struct routing_opts *o, char *err, size_t errlen)
{
	uint32_t *dist, *order;
	int rc;

	memset(g, 0, sizeof(*g));
	g->f = f;
	g->top = f->max_lid;
	if (!f->max_lid) {
		snprintf(err, errlen, "no LIDs assigned");
		return -EINVAL;
	}
	rc = build_switches(g, o);
	if (rc == 0)
		rc = build_dests(g, err, errlen);
	if (rc < 0)
		goto fail;
	dist = malloc((g->S + 1) * sizeof(*dist));
	order = malloc((g->S + 1) * sizeof(*order));
	if (!dist || !order) {
		free(dist);
		free(order);
		rc = -ENOMEM;
		goto fail;
	}
	for (uint32_t v = 0; v < g->S; v++)
		g->comp[v] = RG_INF;
	for (uint32_t v = 0; v < g->S; v++) {
		uint32_t n;

		if (g->comp[v] != RG_INF)
			continue;
		n = rg_bfs(g, v, dist, order);
		for (uint32_t i = 0; i < n; i++)
			g->comp[order[i]] = v;
	}
	free(dist);
	free(order);
	return 0;
fail:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	rg_free(g);
	return rc;
}

int rg_tree_init(struct rg_tree *tr, const struct rgraph *g)
{
	size_t S = g->S, C = g->adj_off[g->S];

	memset(tr, 0, sizeof(*tr));
	tr->nxt = malloc((S + 1) * sizeof(*tr->nxt));
	tr->act = malloc(S + 1);
	tr->cost = malloc((S + 1) * sizeof(*tr->cost));
	tr->flow = malloc((S + 1) * sizeof(*tr->flow));
	tr->pending = calloc(C + 1, sizeof(*tr->pending));
	tr->touched = malloc((C + 1) * sizeof(*tr->touched));
	return tr->nxt && tr->act && tr->cost && tr->flow && tr->pending &&
	       tr->touched ? 0 : -ENOMEM;
}

void rg_tree_free(struct rg_tree *tr)
{
	free(tr->nxt);
	free(tr->act);
	free(tr->cost);
	free(tr->flow);
	free(tr->pending);
	free(tr->touched);
	memset(tr, 0, sizeof(*tr));
}

void rg_tree_build(struct rgraph *g, struct rg_tree *tr, uint16_t lid,
		   const uint32_t *order, uint32_t n,
		   bool (*ok)(void *ctx, uint32_t v, uint32_t a), void *ctx)
{
	const struct rg_dest *dst = &g->dest[lid];
	uint32_t t = order[0];

	for (uint32_t v = 0; v < g->S; v++) {
		tr->flow[v] = g->nhost[v];
		tr->act[v] = g->nhost[v] > 0;
		tr->nxt[v] = RG_INF;
	}
	/*
	 * Nearest first: the path of least summed load.  The host paths of
	 * the switches that chose already count too (pending, along their
	 * whole path), so that the leaves of a fat tree spread one LID's
	 * traffic over the planes instead of all taking the one that was
	 * least loaded before it.
	 */
	tr->cost[t] = 0;
	tr->n_touched = 0;
	for (uint32_t i = 1; i < n; i++) {
		uint32_t v = order[i], at = RG_INF;
		uint64_t best = UINT64_MAX, cost = 0;

		for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++) {
			uint32_t w = g->adj_nbr[a];
			uint64_t key, c;

			if (!ok(ctx, v, a))
				continue;
			c = g->load[a] + tr->cost[w];
			if (tr->n_touched) {
				c += tr->pending[a];
				for (uint32_t x = w; x != t;) {
					uint32_t b = tr->nxt[x];

					c += tr->pending[b];
					x = g->adj_nbr[b];
				}
			}
			key = c << 20 | (g->cnt[a] & 0xfffff);
			if (key < best) {
				best = key;
				at = a;
				cost = g->load[a] + tr->cost[w];
			}
		}
		tr->nxt[v] = at;
		tr->cost[v] = cost;
		if (at == RG_INF || !dst->host || !g->nhost[v])
			continue;
		for (uint32_t b = at;;) {
			if (!tr->pending[b])
				tr->touched[tr->n_touched++] = b;
			tr->pending[b] += g->nhost[v];
			if (g->adj_nbr[b] == t)
				break;
			b = tr->nxt[g->adj_nbr[b]];
		}
	}
	for (uint32_t i = 0; i < tr->n_touched; i++)
		tr->pending[tr->touched[i]] = 0;

	/* farthest first: the host paths each channel takes on */
	for (uint32_t i = n; i-- > 1;) {
		uint32_t v = order[i], at = tr->nxt[v], w;

		if (at == RG_INF)
			continue;
		w = g->adj_nbr[at];
		if (dst->host) {
			g->load[at] += tr->flow[v];
			g->cnt[at]++;
		}
		tr->flow[w] += tr->flow[v];
		tr->act[w] |= tr->act[v];
	}
}
