/*
 * report_lmc.c - how far the 2^LMC paths between two ports share links.
 *
 * For every destination port with LMC > 0 and every source switch with
 * CA/router ports, the path to each LID of the destination's range is
 * walked through the tables; two LIDs of one range whose paths cross a
 * common inter-switch channel (one direction of a link) make a sharing
 * pair.  Every CA/router port of the source switch (but the destination)
 * counts as a source: the tables route by destination LID alone.  APM and
 * multi-path MPI want pairs that share nothing.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "routing/cdgraph.h"
#include "routing/engines.h"
#include "routing/report.h"

#define LMC_MAX_HOPS	64
#define LMC_WORK_BOUND	200000000ULL	/* channel comparisons at most */

/* The channels of the path from switch v to lid into ch; their count
 * (0 also for a broken walk). */
static unsigned walk(const struct rgraph *g, const struct routing_result *r,
		     const uint32_t *slot, const size_t *slot_off, uint32_t v,
		     uint16_t lid, uint32_t *ch)
{
	unsigned n = 0;

	for (unsigned step = 0; step < LMC_MAX_HOPS; step++) {
		int32_t node = g->sw_node[v];
		const struct lft *t = &r->lft[node];
		unsigned p;
		uint32_t a;

		if (!t->port || lid > t->top)
			return 0;
		p = t->port[lid];
		if (!p || p > fabric_node(g->f, node)->num_ports)
			return n;
		a = slot[slot_off[node] + p];
		if (!a--)
			return n;
		ch[n++] = a;
		v = g->adj_nbr[a];
	}
	return 0;
}

static bool share(const uint32_t *a, unsigned na, const uint32_t *b,
		  unsigned nb)
{
	for (unsigned i = 0; i < na; i++)
		for (unsigned j = 0; j < nb; j++)
			if (a[i] == b[j])
				return true;
	return false;
}

/* One destination port's range from source switch v: sharing pairs. */
static uint64_t range_pairs(const struct rgraph *g,
			    const struct routing_result *r,
			    const uint32_t *slot, const size_t *slot_off,
			    uint32_t v, uint16_t base, unsigned n,
			    uint32_t (*ch)[LMC_MAX_HOPS], unsigned *len)
{
	uint64_t shared = 0;

	for (unsigned i = 0; i < n; i++)
		len[i] = walk(g, r, slot, slot_off, v, (uint16_t)(base + i),
			      ch[i]);
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++)
			shared += share(ch[i], len[i], ch[j], len[j]);
	return shared;
}

static int sharing(struct rgraph *g, const struct routing_result *r,
		   struct routing_report *rep, uint32_t *slot,
		   const size_t *slot_off)
{
	const struct fabric *f = g->f;
	uint32_t (*ch)[LMC_MAX_HOPS] = malloc(128 * sizeof(*ch));
	unsigned *len = malloc(128 * sizeof(*len));

	if (!ch || !len) {
		free(ch);
		free(len);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];

		if (nd->type == NODE_TYPE_SWITCH)
			continue;
		for (unsigned p = 1; p <= nd->num_ports; p++) {
			const struct fab_port *pt = &nd->ports[p];
			unsigned n = 1u << (pt->lmc & 7);
			int32_t home;

			if (!pt->lid || n < 2 || !routing_port_up(f, pt) ||
			    pt->lid + n - 1u > g->top)
				continue;
			home = g->sw_idx[pt->peer_node];
			for (uint32_t v = 0; v < g->S; v++) {
				uint64_t srcs = g->nhost[v] -
						((int32_t)v == home);

				if (!srcs)
					continue;
				rep->lmc_pairs += srcs * n * (n - 1) / 2;
				rep->lmc_shared += srcs * range_pairs(g, r,
					slot, slot_off, v, pt->lid, n, ch, len);
			}
		}
	}
	free(ch);
	free(len);
	return 0;
}

int routing_report_lmc(const struct fabric *f, const struct routing_result *r,
		       struct routing_report *rep)
{
	struct rgraph g = { 0 };
	uint32_t *slot = NULL;
	size_t *slot_off = NULL, slots = 0;
	char err[128];
	int rc;

	rep->lmc_pairs = rep->lmc_shared = 0;
	rep->lmc_skipped = false;
	rc = rg_build(&g, f, err, sizeof(err));
	if (rc < 0)
		return rc == -ENOMEM ? rc : 0;
	if ((uint64_t)g.S * g.top * 16 > LMC_WORK_BOUND) {
		rep->lmc_skipped = true;
		rg_free(&g);
		return 0;
	}
	slot_off = malloc((f->n_nodes + 1) * sizeof(*slot_off));
	if (!slot_off) {
		rg_free(&g);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->n_nodes; i++) {
		slot_off[i] = slots;
		slots += (size_t)f->nodes[i].num_ports + 1;
	}
	slot = calloc(slots + 1, sizeof(*slot));
	if (slot) {
		for (uint32_t v = 0; v < g.S; v++)
			for (uint32_t a = g.adj_off[v]; a < g.adj_off[v + 1];
			     a++)
				slot[slot_off[g.sw_node[v]] + g.adj_port[a]] =
					a + 1;
		rc = sharing(&g, r, rep, slot, slot_off);
	} else {
		rc = -ENOMEM;
	}
	free(slot);
	free(slot_off);
	rg_free(&g);
	return rc;
}
