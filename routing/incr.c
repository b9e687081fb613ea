/*
 * incr.c - incremental re-routing (see incr.h).
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/incr.h"

/* LIDs on the model: switch port 0 and CA/router ports, LMC ranges. */
static uint8_t *lids_on(const struct fabric *f, size_t n)
{
	uint8_t *on = calloc(n, 1);

	if (!on)
		return NULL;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		unsigned p0 = nd->type == NODE_TYPE_SWITCH ? 0 : 1;
		unsigned p1 = nd->type == NODE_TYPE_SWITCH ? 0 : nd->num_ports;

		for (unsigned p = p0; p <= p1; p++) {
			const struct fab_port *pt = &nd->ports[p];

			if (!pt->lid)
				continue;
			for (size_t l = pt->lid;
			     l < (size_t)pt->lid + (1u << (pt->lmc & 7)) && l < n;
			     l++)
				on[l] = 1;
		}
	}
	return on;
}

static uint8_t entry(const struct lft *t, size_t l)
{
	return t->port && l <= t->top ? t->port[l] : LFT_NO_PATH;
}

/* Mark the LIDs whose tree in prev crosses a port not linked on f, that
 * are gone from f, or that only full reaches. */
static void find_affected(const struct fabric *f,
			  const struct routing_result *prev,
			  const struct routing_result *full,
			  const uint8_t *on, uint8_t *aff, size_t n)
{
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		const struct lft *pt = &prev->lft[i], *ft = &full->lft[i];

		if (!pt->port)
			continue;
		for (size_t l = 1; l < n; l++) {
			uint8_t q = entry(pt, l);

			if (aff[l])
				continue;
			if (q == LFT_NO_PATH) {
				aff[l] = on[l] && entry(ft, l) != LFT_NO_PATH;
				continue;
			}
			if (!on[l] || (q && (q > nd->num_ports ||
					     nd->ports[q].peer_node == FAB_NONE)))
				aff[l] = 1;
		}
	}
}

enum { W_UNKNOWN, W_OK, W_BROKEN, W_WALKING };

/*
 * For destination l: which switches' paths in prev reach it without a
 * lost port (W_OK) and which do not (W_BROKEN), in state[] (per node id,
 * reset by the caller).  A path is followed hop by hop, each switch's
 * verdict remembered, so all switches cost O(switches) together.
 */
static void walk_paths(const struct fabric *f, const struct routing_result *prev,
		       size_t l, uint8_t *state, int32_t *stack)
{
	for (size_t s0 = 0; s0 < f->n_nodes; s0++) {
		size_t depth = 0;
		uint8_t verdict = W_BROKEN;
		int32_t x = (int32_t)s0;

		if (!prev->lft[s0].port || state[s0] != W_UNKNOWN)
			continue;
		for (;;) {
			const struct fab_node *nd = &f->nodes[x];
			uint8_t q = entry(&prev->lft[x], l);

			if (state[x] == W_OK || state[x] == W_BROKEN) {
				verdict = state[x];
				break;
			}
			if (state[x] == W_WALKING)	/* a loop */
				break;
			state[x] = W_WALKING;
			stack[depth++] = x;
			if (q == 0) {			/* its own LID */
				verdict = W_OK;
				break;
			}
			if (q == LFT_NO_PATH || q > nd->num_ports ||
			    nd->ports[q].peer_node == FAB_NONE)
				break;
			x = nd->ports[q].peer_node;
			if (f->nodes[x].type != NODE_TYPE_SWITCH) {
				verdict = W_OK;		/* out to an end port */
				break;
			}
			if (!prev->lft[x].port)
				break;
		}
		while (depth)
			state[stack[--depth]] = verdict;
	}
}

int routing_merge_incremental(const struct fabric *f,
			      const struct routing_result *prev,
			      const struct routing_result *full,
			      bool per_switch, struct routing_result *out,
			      struct incr_stats *st)
{
	size_t n = 1;
	uint8_t *on = NULL, *aff = NULL, *state = NULL;
	int32_t *stack = NULL;
	int rc = -ENOMEM;

	memset(st, 0, sizeof(*st));
	if (prev->n_nodes != f->n_nodes || full->n_nodes != f->n_nodes ||
	    !prev->lft || !full->lft || !prev->sl != !full->sl ||
	    (full->sl && prev->n_layers != full->n_layers))
		return -EINVAL;
	for (size_t i = 0; i < f->n_nodes; i++) {
		if (!prev->lft[i].port != !full->lft[i].port)
			return -EINVAL;
		if (prev->lft[i].port && (size_t)prev->lft[i].top + 1 > n)
			n = (size_t)prev->lft[i].top + 1;
		if (full->lft[i].port && (size_t)full->lft[i].top + 1 > n)
			n = (size_t)full->lft[i].top + 1;
	}
	on = lids_on(f, n);
	aff = calloc(n, 1);
	state = malloc(f->n_nodes ? f->n_nodes : 1);
	stack = malloc((f->n_nodes ? f->n_nodes : 1) * sizeof(*stack));
	if (!on || !aff || !state || !stack)
		goto out;
	find_affected(f, prev, full, on, aff, n);
	for (size_t l = 1; l < n; l++) {
		st->dests += on[l];
		st->rerouted += on[l] && aff[l];
		st->gone += !on[l] && aff[l];
	}

	out->n_nodes = f->n_nodes;
	out->lft = calloc(f->n_nodes ? f->n_nodes : 1, sizeof(*out->lft));
	if (full->sl)
		out->sl = calloc(f->n_nodes ? f->n_nodes : 1, sizeof(*out->sl));
	if (!out->lft || (full->sl && !out->sl))
		goto fail;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct lft *pt = &prev->lft[i], *ft = &full->lft[i];
		size_t len;

		if (!ft->port)
			continue;
		len = (size_t)ft->top + 1;
		out->lft[i].top = ft->top;
		out->lft[i].port = malloc(len);
		if (out->sl && full->sl[i])
			out->sl[i] = malloc(len);
		if (!out->lft[i].port || (out->sl && full->sl[i] && !out->sl[i]))
			goto fail;
		for (size_t l = 0; l < len; l++)
			out->lft[i].port[l] = l > pt->top ? ft->port[l] : pt->port[l];
		if (out->sl && out->sl[i])
			for (size_t l = 0; l < len; l++)
				out->sl[i][l] = l > pt->top || !prev->sl[i]
						? full->sl[i][l] : prev->sl[i][l];
	}
	/* The destinations that crossed a loss: the new engine's entries,
	 * at every switch (per LID) or where the old path broke (per
	 * switch: a broken switch's new next hop leads, along the new tree,
	 * to a switch whose old path is whole, or to the destination). */
	for (size_t l = 1; l < n; l++) {
		if (!aff[l])
			continue;
		if (per_switch && on[l]) {
			memset(state, W_UNKNOWN, f->n_nodes);
			walk_paths(f, prev, l, state, stack);
		}
		for (size_t i = 0; i < f->n_nodes; i++) {
			const struct lft *ft = &full->lft[i];

			if (!ft->port || l > ft->top ||
			    (per_switch && on[l] && state[i] == W_OK))
				continue;
			if (out->lft[i].port[l] != ft->port[l])
				st->entries++;
			out->lft[i].port[l] = ft->port[l];
			if (out->sl && out->sl[i])
				out->sl[i][l] = full->sl[i][l];
		}
	}
	out->n_layers = full->n_layers;
	out->split = full->split;
	out->layers_short = full->layers_short;
	out->engine = full->engine;
	/* the summary's figures are the engine's, of its full tables */
	routing_fmt(out->summary, sizeof(out->summary), "incremental merge;"
		    " the engine's full tables: %s", full->summary);
	memcpy(out->fallback, full->fallback, sizeof(out->fallback));
	st->blocks_incr = routing_blocks_differing(prev, out);
	st->blocks_full = routing_blocks_differing(prev, full);
	rc = 0;
	goto out;
fail:
	routing_result_free(out);
out:
	free(on);
	free(aff);
	free(state);
	free(stack);
	return rc;
}

uint64_t routing_blocks_differing(const struct routing_result *a,
				  const struct routing_result *b)
{
	size_t nn = a->n_nodes < b->n_nodes ? a->n_nodes : b->n_nodes;
	uint64_t blocks = 0;

	for (size_t i = 0; i < nn; i++) {
		const struct lft *x = &a->lft[i], *y = &b->lft[i];
		size_t top;

		if (!x->port || !y->port)
			continue;
		top = x->top > y->top ? x->top : y->top;
		for (size_t blk = 0; blk * 64 <= top; blk++)
			for (size_t l = blk * 64; l < blk * 64 + 64 && l <= top;
			     l++)
				if (entry(x, l) != entry(y, l)) {
					blocks++;
					break;
				}
	}
	return blocks;
}
