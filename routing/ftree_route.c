/*
 * ftree_route.c - the ftree engine's routing of the LIDs (see ftree.c for
 * the tree and the two strategies): per destination LID, the chain
 * (choose_chain()) or the flow strategy (choose_flow()) picks each
 * switch's up-neighbour; route_dest() fills the tables, unroute_dest()
 * takes a LID's flows off the links for the second pass
 * (reroute_passes()); fix_layers puts switch LIDs whose detours close a
 * dependency cycle on SL 1.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/ftree_int.h"
#include "routing/verify.h"

static inline uint32_t used(const struct ftree *t, size_t i)
{
	return t->use_stamp[i] == t->ucur ? t->use[i] : 0;
}

static inline void use(struct ftree *t, size_t i)
{
	if (t->use_stamp[i] != t->ucur) {
		t->use_stamp[i] = t->ucur;
		t->use[i] = 0;
	}
	if (t->use[i] < 255)
		t->use[i]++;
}


/* Load of a link slot in 1/16 flows: committed plus this LID's tentative
 * (t->no_slot: no link, always 0). */
static inline uint64_t load(const struct ftree *t, uint32_t slot)
{
	return (uint64_t)t->cnt[slot] * 16 + t->tmp[slot];
}

static inline void add_tmp(struct ftree *t, uint32_t slot, uint32_t w)
{
	if (slot == t->no_slot || !w)
		return;
	if (!t->tmp[slot])
		t->touched[t->n_touched++] = slot;
	t->tmp[slot] += w;
}

static inline uint64_t max3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t m = a > b ? a : b;

	return m > c ? m : c;
}

/*
 * The cost for the flow strategy of going up a link loaded `first` to
 * the routed switch u and on along u's path to the destination switch:
 * the busiest link of the whole path first, then the sum of its loads
 * (both in 1/16 flows; the sum saturates).  The whole path counts, not
 * just the first links: when a core lost its link into the destination's
 * pod, or a spine its link to the leaf, the few down-links left are the
 * bottleneck, and only they tell the sources below to spread over the
 * cores and spines that still reach it.  Paths have at most twice the
 * levels in links.
 */
static inline uint64_t path_cost(const struct ftree *t, int32_t u,
				 uint64_t first)
{
	uint64_t m = first, sum = first, cap = (1u << 20) - 1;

	for (int32_t y = u; y >= 0 && y != t->dst; y = t->next[y]) {
		uint64_t l = load(t, t->oslot[y]);

		if (l > m)
			m = l;
		sum += l;
	}
	return (m << 20) + (sum < cap ? sum : cap);
}

/* Switch x forwards the LID on port p to switch y. */
static inline void hop(struct ftree *t, int32_t x, uint16_t lid, uint8_t p,
		       int32_t y)
{
	uint32_t slot = t->port_base[x] + p;

	t->lftp[x][lid] = p;
	t->routed[x] = t->rcur;
	t->next[x] = y;
	t->oslot[x] = slot;
	t->entry[x] = y == t->dst ? slot : t->entry[y];
}

/*
 * LMC: how much the path through slot (x's egress) into a switch whose
 * path enters s at `entry` overlaps the paths x chose for the port's
 * earlier LIDs.
 */
static inline uint64_t overlap(const struct ftree *t, int32_t x,
			       uint32_t slot, uint32_t entry)
{
	return used(t, t->S + slot) +
	       (t->pe_stamp[x] == t->ucur && t->prev_entry[x] == entry);
}

static inline void remember(struct ftree *t, int32_t x)
{
	use(t, t->S + t->oslot[x]);
	t->pe_stamp[x] = t->ucur;
	t->prev_entry[x] = t->entry[x];
}

/* Flow strategy: every switch picks on the loads (the top comment). */
static size_t choose_flow(struct ftree *t, int32_t s, uint16_t lid,
			  bool counted, bool lmc)
{
	size_t np = 0;

	/* ancestors, upwards: down towards s, least loaded (then the
	 * entry link into s) */
	for (size_t i = 0; i < t->n_anc; i++) {
		int32_t a = t->anc[i];
		uint32_t b = t->port_base[a];
		const uint8_t *c = t->cand + t->cand_off[a];
		uint64_t best_key = UINT64_MAX;
		uint8_t bp = c[0];

		for (uint32_t k = 0; k < t->cand_n[a]; k++) {
			int32_t y = t->pnbr[b + c[k]];
			uint32_t e = y == s ? b + c[k] : t->entry[y];
			uint64_t key = max3(load(t, b + c[k]), load(t, e), 0);

			if (lmc)
				key |= overlap(t, a, b + c[k], e) << 56;
			if (key < best_key) {
				best_key = key;
				bp = c[k];
			}
		}
		hop(t, a, lid, bp, t->pnbr[b + bp]);
		if (lmc)
			remember(t, a);
	}

	/*
	 * The rest, top down: up to the neighbour whose path is least
	 * loaded, judged on the link up, the neighbour's next link and the
	 * link into s; the switch's expected share of the sources is added
	 * to those as it chooses, so the sources of one destination spread
	 * instead of all following the same best path.
	 */
	for (size_t i = 0; i < t->n_order; i++) {
		int32_t x = t->order[i];
		uint32_t first = t->up_off[x], n = t->up_off[x + 1] - first;
		uint32_t b = t->port_base[x], start;
		uint64_t best_key = UINT64_MAX;
		uint8_t bp = 0;
		int32_t bu = -1;

		if (t->routed[x] == t->rcur)
			continue;
		start = n ? t->rot[x] % n : 0;
		for (uint32_t j = 0, k = start; j < n; j++, k++) {
			uint8_t p;
			int32_t u;
			uint64_t key;

			if (k == n)
				k = 0;
			p = t->uplist[first + k];
			u = t->pnbr[b + p];

			if (t->routed[u] != t->rcur)
				continue;
			key = path_cost(t, u, load(t, b + p));
			if (lmc)
				key |= overlap(t, x, b + p, t->entry[u]) << 56;
			if (key < best_key) {
				best_key = key;
				bp = p;
				bu = u;
			}
		}
		if (bu < 0) {
			t->pending[np++] = x;
			continue;
		}
		hop(t, x, lid, bp, bu);
		if (lmc)
			remember(t, x);
		if (counted)
			for (int32_t y = x; y >= 0 && y != s; y = t->next[y])
				add_tmp(t, t->oslot[y], t->est[x]);
	}

	for (size_t i = 0; i < t->n_touched; i++)
		t->tmp[t->touched[i]] = 0;
	t->n_touched = 0;
	return np;
}

/*
 * The up-port of x with the fewest destinations among those whose
 * neighbour is routed, 0 for none.  Counts only grow, so x keeps a lower
 * bound of its least count and a cursor (ports before it carry more):
 * the first routed port at or after the cursor that carries the bound
 * is a least one, found in amortised O(1) on a complete tree; else one
 * pass finds it and renews the bound.
 */
static uint8_t least_up(struct ftree *t, int32_t x)
{
	uint32_t first = t->up_off[x], n = t->up_off[x + 1] - first;
	uint32_t b = t->port_base[x], best = UINT32_MAX, low = UINT32_MAX;
	uint8_t bp = 0;

	for (uint32_t j = t->pidx[x]; j < n; j++) {
		uint8_t p = t->uplist[first + j];

		if (t->cnt[b + p] == t->pmin[x] &&
		    t->routed[t->pnbr[b + p]] == t->rcur) {
			t->pidx[x] = j;
			return p;
		}
	}
	for (uint32_t j = 0; j < n; j++) {
		uint8_t p = t->uplist[first + j];
		uint32_t c = t->cnt[b + p];

		if (c < low)
			low = c;
		if (c < best && t->routed[t->pnbr[b + p]] == t->rcur) {
			best = c;
			bp = p;
		}
	}
	t->pmin[x] = low;
	t->pidx[x] = 0;
	while (t->pidx[x] < n &&
	       t->cnt[b + t->uplist[first + t->pidx[x]]] != low)
		t->pidx[x]++;
	return bp;
}

/* Chain strategy: one chain per destination (the top comment). */
static size_t choose_chain(struct ftree *t, int32_t s, uint16_t lid,
			   bool counted, bool lmc)
{
	size_t nch = 0, np = 0;
	int32_t cur = s;

	/* the chain up to a top switch, counting destinations per link */
	t->chain[nch++] = s;
	for (;;) {
		uint32_t first = t->up_off[cur], n = t->up_off[cur + 1] - first;
		uint32_t b = t->port_base[cur], start;
		uint64_t best_key = UINT64_MAX;
		int32_t bu = -1;
		uint8_t bq = 0;

		if (!n)
			break;
		start = t->rot[cur] % n;
		for (uint32_t i = 0; i < n; i++) {
			uint8_t p = t->uplist[first + (start + i) % n];
			int32_t u = t->pnbr[b + p];
			uint8_t q = t->ppeer[b + p];
			size_t slot = t->port_base[u] + q;
			uint64_t key = (uint64_t)!t->top_reach[u] << 62 |
				       (uint64_t)(lmc ? used(t, (size_t)u) : 0) << 48 |
				       (uint64_t)(lmc ? used(t, t->S + slot) : 0) << 40 |
				       t->cnt[slot];

			if (key < best_key) {
				best_key = key;
				bu = u;
				bq = q;
			}
		}
		hop(t, bu, lid, bq, cur);
		if (counted)
			t->cnt[t->oslot[bu]]++;
		if (lmc) {
			use(t, (size_t)bu);
			use(t, t->S + t->port_base[bu] + bq);
		}
		t->chain[nch++] = bu;
		cur = bu;
	}

	/* the other ancestors go straight down, upwards from s */
	for (size_t i = 0; i < t->n_anc; i++) {
		int32_t a = t->anc[i];
		uint32_t b = t->port_base[a];
		const uint8_t *c = t->cand + t->cand_off[a];
		uint8_t bp = c[0];

		if (t->routed[a] == t->rcur)
			continue;
		for (uint32_t k = 1; k < t->cand_n[a]; k++)
			if (t->cnt[b + c[k]] < t->cnt[b + bp])
				bp = c[k];
		hop(t, a, lid, bp, t->pnbr[b + bp]);
	}

	/* going down from the chain, the lowest switch first: up to it */
	for (size_t i = 0; i < nch; i++) {
		size_t head = 0, tail = 0;

		t->queue[tail++] = t->chain[i];
		while (head < tail) {
			int32_t a = t->queue[head++];

			for (uint32_t g = t->dg_off[a]; g < t->dg_off[a + 1]; g++) {
				const struct dgroup *gr = &t->dg[g];
				const uint8_t *c = t->dpeers + gr->off;
				int32_t y = gr->nbr;
				uint32_t b = t->port_base[y];
				uint8_t bp = c[0];

				if (t->routed[y] == t->rcur)
					continue;
				for (uint32_t k = 1; k < gr->n; k++)
					if (t->cnt[b + c[k]] < t->cnt[b + bp])
						bp = c[k];
				hop(t, y, lid, bp, a);
				if (counted)
					t->cnt[t->oslot[y]]++;
				t->queue[tail++] = y;
			}
		}
	}

	/*
	 * Not below the chain (on a complete tree: switches whose subtree
	 * routes through another switch; with links missing: cut off from
	 * the chain): up to the routed neighbour on the port with the fewest
	 * destinations, so that the up-ports stay even.
	 */
	for (size_t i = 0; i < t->n_order; i++) {
		int32_t x = t->order[i];
		uint8_t p;

		if (t->routed[x] == t->rcur)
			continue;
		p = least_up(t, x);
		if (!p) {
			t->pending[np++] = x;
			continue;
		}
		hop(t, x, lid, p, t->pnbr[t->port_base[x] + p]);
		if (counted)
			t->cnt[t->oslot[x]]++;
	}
	return np;
}

/*
 * Mark the path from switch x to `lid` as not up/down (in r->sl, until
 * ftree_fix_layers() decides what becomes of such paths).
 */
static int set_layer(struct ftree *t, int32_t x, uint16_t lid)
{
	struct routing_result *r = t->cur;
	int32_t node = t->sw_node[x];

	if (!r->sl) {
		r->sl = calloc(r->n_nodes ? r->n_nodes : 1, sizeof(*r->sl));
		if (!r->sl)
			return -ENOMEM;
	}
	if (!r->sl[node]) {
		r->sl[node] = calloc((size_t)t->top + 1, 1);
		if (!r->sl[node])
			return -ENOMEM;
	}
	r->sl[node][lid] = 1;
	return 0;
}

/*
 * Switch LIDs in their own layer: up*\/down* on the order in which a
 * breadth-first search from one top switch meets the switches (a link
 * goes up towards the switch met first).  Every switch met after the
 * root has a neighbour met before it, so every switch reaches every
 * switch LID; a switch that reaches the LID going only down does so,
 * the others climb to the neighbour with the shortest legal path.
 */
static int route_switch_lids(struct ftree *t, struct routing_result *r,
			     const uint8_t *sw_lid)
{
	size_t S = t->S, n = 0;
	uint32_t *key = calloc(S ? S : 1, sizeof(*key));
	uint32_t *dist = calloc(S ? S : 1, sizeof(*dist));
	uint32_t *seen = calloc(S ? S : 1, sizeof(*seen));
	int32_t *bfs = calloc(S ? S : 1, sizeof(*bfs));
	uint8_t *via = calloc(S ? S : 1, 1);
	uint32_t stamp = 0;
	int rc = 0;

	if (!key || !dist || !seen || !bfs || !via) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t x = 0; x < S; x++)
		key[x] = UINT32_MAX;
	/* the root: the first top switch; then every switch it reaches */
	key[t->order[0]] = 0;
	bfs[n++] = t->order[0];
	for (size_t h = 0; h < n; h++) {
		int32_t x = bfs[h];
		uint32_t b = t->port_base[x], np = t->port_base[x + 1] - b;

		for (unsigned p = 1; p < np; p++) {
			int32_t y = t->pnbr[b + p];

			if (y >= 0 && key[y] == UINT32_MAX) {
				key[y] = (uint32_t)n;
				bfs[n++] = y;
			}
		}
	}
	r->sl = calloc(r->n_nodes ? r->n_nodes : 1, sizeof(*r->sl));
	if (!r->sl) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		int32_t node = t->sw_node[bfs[i]];

		r->sl[node] = calloc((size_t)t->top + 1, 1);
		if (!r->sl[node]) {
			rc = -ENOMEM;
			goto out;
		}
	}
	r->n_layers = 2;

	for (size_t l = 1; l <= t->top; l++) {
		size_t head = 0, tail = 0;
		int32_t s = -1;

		if (!sw_lid[l])
			continue;
		for (size_t i = 0; i < n && s < 0; i++)
			if (fabric_node(t->f, t->sw_node[bfs[i]])->ports[0].lid
			    == l)
				s = bfs[i];
		if (s < 0)
			continue;
		/* dist: all-down paths, searched backwards from s */
		stamp++;
		seen[s] = stamp;
		dist[s] = 0;
		t->queue[tail++] = s;
		while (head < tail) {
			int32_t w = t->queue[head++];
			uint32_t b = t->port_base[w], np = t->port_base[w + 1] - b;

			for (unsigned p = 1; p < np; p++) {
				int32_t v = t->pnbr[b + p];

				/* v -> w goes down when v was met first */
				if (v < 0 || key[v] > key[w] || seen[v] == stamp)
					continue;
				seen[v] = stamp;
				dist[v] = dist[w] + 1;
				via[v] = t->ppeer[b + p];
				t->queue[tail++] = v;
			}
		}
		/* the others climb, root side first */
		for (size_t i = 0; i < n; i++) {
			int32_t v = bfs[i];
			uint32_t b = t->port_base[v], np = t->port_base[v + 1] - b;
			uint32_t best = UINT32_MAX;
			uint8_t bp = 0;

			r->sl[t->sw_node[v]][l] = 1;
			if (v == s) {
				t->lftp[v][l] = 0;
				continue;
			}
			if (seen[v] == stamp) {
				t->lftp[v][l] = via[v];
				continue;
			}
			for (unsigned p = 1; p < np; p++) {
				int32_t u = t->pnbr[b + p];

				if (u >= 0 && key[u] < key[v] && seen[u] == stamp &&
				    dist[u] < best) {
					best = dist[u];
					bp = (uint8_t)p;
				}
			}
			if (!bp)
				continue;	/* cannot happen: the root reaches s */
			/* dist now: the legal path length, for those below */
			seen[v] = stamp;
			dist[v] = best + 1;
			t->lftp[v][l] = bp;
		}
	}
out:
	free(key);
	free(dist);
	free(seen);
	free(bfs);
	free(via);
	return rc;
}

/*
 * The paths with reverse hops (marked in marks) from switches with CA
 * ports to I/O LIDs, and from switches whose CA ports are all I/O
 * nodes' to CA LIDs, into layer 2 (SL 2), alone there; the check again
 * into *cdg.
 */
static int io_layer(struct ftree *t, struct routing_result *r,
		    const uint8_t *const *marks, struct routing_cdg *cdg)
{
	if (t->o->max_layers && t->o->max_layers < 3) {
		snprintf(t->err, t->errlen, "the reverse hops to I/O nodes "
			 "close channel dependency cycles: they need a third "
			 "layer (VL) and max_layers is %u", t->o->max_layers);
		return -ENOSPC;
	}
	for (size_t x = 0; x < t->S; x++) {
		int32_t node = t->sw_node[x];

		if (!t->has_ca[x] || !marks[node] || !r->sl[node])
			continue;
		for (size_t i = 0; i < t->dest_off[t->S]; i++) {
			uint16_t lid = t->dests[i].lid;

			if ((t->dests[i].io || (t->only_io[x] &&
			     t->dests[i].port)) && marks[node][lid])
				r->sl[node][lid] = 2;
		}
	}
	r->n_layers = 3;
	return routing_check_cdg(t->f, r, cdg);
}

/*
 * Deadlock freedom.  Paths that are not up/down (phase 5: a top switch
 * cut from part of the tree, the top switches' LIDs among themselves)
 * are harmless as long as the channel dependencies stay acyclic, which
 * they do on complete trees.  When they do not: paths to switch LIDs
 * move to layer 1 (SL 1, VL 1) on a single-root up*\/down* order of
 * their own; CA LIDs and layer 0 then carry up/down paths only for the
 * paths the check counts (from switches with CA ports).  When cycles
 * are left and some of those switches reach an I/O node only with
 * reverse hops, those paths move to layer 2 (io_layer()).
 */
int ftree_fix_layers(struct ftree *t, struct routing_result *r)
{
	uint8_t **marks = r->sl;
	uint8_t *sw_lid = NULL;
	struct routing_cdg cdg;
	int rc;

	r->sl = NULL;
	r->n_layers = 0;
	if (!marks)
		return 0;
	rc = routing_check_cdg(t->f, r, &cdg);
	if (rc == 0 && routing_cdg_cycles(&cdg) == 0) {
		r->cdg_acyclic = true;
		goto out;
	}
	if (rc < 0)
		goto out;
	if (t->o->max_layers == 1) {
		snprintf(t->err, t->errlen, "%s: the paths to switch LIDs "
			 "need a second layer (VL) and max_layers is 1",
			 t->n_io_rev || t->io_src_rev ?
			 "links missing or reverse hops to I/O nodes" :
			 "links missing");
		rc = -ENOSPC;
		goto out;
	}
	sw_lid = calloc((size_t)t->top + 1, 1);
	if (!sw_lid) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < t->dest_off[t->S]; i++)
		if (!t->dests[i].counted && !t->dests[i].port)
			sw_lid[t->dests[i].lid] = 1;
	/*
	 * The other marked entries (a switch without CA ports that reaches a
	 * host only by a path that is not up-then-down) stay: no host's path
	 * runs through them (a host path through that switch would be an
	 * up-then-down path from it), so they add no dependency the check
	 * counts, and without them that switch could not answer a LID-routed
	 * SMP from the host (the SM's, ibroute's): VL15, no credits.
	 */
	rc = route_switch_lids(t, r, sw_lid);
	if (rc == 0)
		rc = routing_check_cdg(t->f, r, &cdg);
	if (rc == 0 && routing_cdg_cycles(&cdg) &&
	    (t->n_io_rev || t->io_src_rev))
		rc = io_layer(t, r, (const uint8_t *const *)marks, &cdg);
	if (rc == 0 && routing_cdg_cycles(&cdg)) {
		snprintf(t->err, t->errlen, "%" PRIu64 " channel dependency "
			 "cycles left with switch LIDs in their own layer%s",
			 routing_cdg_cycles(&cdg),
			 t->n_io_rev || t->io_src_rev ?
			 " and the reverse hops to I/O nodes in a third" : "");
		rc = -ELOOP;
	} else if (rc == 0) {
		r->cdg_acyclic = true;
	}
out:
	if (marks)
		for (size_t i = 0; i < r->n_nodes; i++)
			free(marks[i]);
	free(marks);
	free(sw_lid);
	return rc;
}

/* Whether a switch whose CA ports are all I/O nodes' is pending. */
static bool pending_only_io(const struct ftree *t, size_t np)
{
	for (size_t i = 0; t->io && i < np; i++)
		if (t->only_io[t->pending[i]])
			return true;
	return false;
}

/*
 * Whether switch x may reach d by a path with rev reverse hops (the
 * rules above route_reverse()); the reason in t->err when not.
 */
static bool reverse_ok(struct ftree *t, int32_t x, const struct fdest *d,
		       unsigned rev)
{
	if (!t->has_ca[x] || (!d->counted && !d->io))
		return true;	/* no data path starts there */
	if (!d->io && !t->only_io[x]) {
		snprintf(t->err, t->errlen, "switch 0x%016" PRIx64 " \"%s\" "
			 "has no up-then-down path to LID %u (links "
			 "missing): the tree is cut", ftree_sw_guid(t, (size_t)x),
			 ftree_sw_desc(t, (size_t)x), d->lid);
		return false;
	}
	if (rev <= t->o->max_reverse_hops)
		return true;
	snprintf(t->err, t->errlen, "switch 0x%016" PRIx64 " \"%s\" reaches "
		 "%sLID %u only with %u reverse hops (max_reverse_hops %u)",
		 ftree_sw_guid(t, (size_t)x), ftree_sw_desc(t, (size_t)x),
		 d->io ? "I/O node " : "", d->lid, rev,
		 t->o->max_reverse_hops);
	return false;
}

/*
 * Reverse hops: the np switches choose_chain() or choose_flow() left
 * without a route to an I/O node's LID, or to another LID when one of
 * them is a switch whose CA ports are all I/O nodes' (no up*down* path
 * to s, all of them; the LID a CA's), route to a routed neighbour.  A
 * reverse hop is an up hop after a down hop on the path (a packet that
 * came down turns up again); rrev[x] counts them on x's path, rup[x] its
 * up hops.  Going up to y, x keeps y's reverse hops; going down to y,
 * every up hop of y's path becomes one.  Neither is less than y's, so
 * the switches settle in rounds of the least (reverse, up) hops, the
 * least loaded link first (cnt counts the I/O LIDs per link).  A switch
 * with CA ports (its hosts' paths start there) makes the engine refuse,
 * as for a cut tree, when it needs more than max_reverse_hops, or when
 * neither the LID nor its CA ports are I/O nodes' (compute nodes' paths
 * stay up*down*); the others (only the switch's own management traffic
 * starts there) take what they find.
 */
static int route_reverse(struct ftree *t, int32_t s, const struct fdest *d,
			 size_t np)
{
	uint16_t lid = d->lid;

	for (size_t i = 0; i < t->n_order; i++) {
		int32_t x = t->order[i];
		uint32_t up = 0;

		if (t->routed[x] != t->rcur)
			continue;
		for (int32_t y = x; y != s && t->next[y] >= 0; y = t->next[y])
			up += t->level[t->next[y]] > t->level[y];
		t->rrev[x] = 0;
		t->rup[x] = up;
	}
	while (np) {
		uint64_t low = UINT64_MAX;
		size_t keep = 0;

		for (size_t i = 0; i < np; i++) {
			int32_t x = t->pending[i];
			uint32_t b = t->port_base[x];
			uint32_t nports = t->port_base[x + 1] - b;

			t->rkey[x] = UINT64_MAX;
			for (unsigned p = 1; p < nports; p++) {
				int32_t y = t->pnbr[b + p];
				uint64_t rv, up, key;

				if (y < 0 || t->routed[y] != t->rcur)
					continue;
				if (t->level[y] > t->level[x]) {
					rv = t->rrev[y];
					up = (uint64_t)t->rup[y] + 1;
				} else {
					rv = up = t->rup[y];
				}
				key = rv << 44 | (up & 0xfff) << 32 | t->cnt[b + p];
				if (key < t->rkey[x]) {
					t->rkey[x] = key;
					t->rport[x] = (uint8_t)p;
				}
			}
			if (t->rkey[x] >> 32 < low)
				low = t->rkey[x] >> 32;
		}
		if (low == UINT64_MAX >> 32)
			break;		/* the rest is another component */
		for (size_t i = 0; i < np; i++) {
			int32_t x = t->pending[i];
			uint8_t p = t->rport[x];
			int32_t y;

			if (t->rkey[x] >> 32 != low) {
				t->pending[keep++] = x;
				continue;
			}
			if (!reverse_ok(t, x, d, (unsigned)(low >> 12)))
				return -ENETUNREACH;
			y = t->pnbr[t->port_base[x] + p];
			hop(t, x, lid, p, y);
			if (d->io)
				t->cnt[t->oslot[x]]++;
			t->rrev[x] = (uint32_t)(low >> 12);
			t->rup[x] = (uint32_t)(low & 0xfff);
			if (d->io)
				t->n_io_rev++;
			else
				t->io_src_rev = true;
			if (set_layer(t, x, lid) < 0)
				return -ENOMEM;
		}
		np = keep;
	}
	return 0;
}

/* Route one LID hanging off switch s (ftree_find_ancestors(s) done). */
static int route_dest(struct ftree *t, int32_t s, const struct fdest *d,
		      bool lmc)
{
	uint16_t lid = d->lid;
	bool counted = d->counted;
	uint32_t *flow = t->flow ? t->flow : t->cnt;
	size_t np;

	t->rcur++;
	t->dst = s;
	t->lftp[s][lid] = d->port;
	t->routed[s] = t->rcur;
	t->next[s] = -1;
	t->oslot[s] = t->no_slot;
	t->entry[s] = t->no_slot;
	np = t->flow ? choose_chain(t, s, lid, counted || d->io, lmc) :
		       choose_flow(t, s, lid, counted, lmc);
	if (np && (d->io || (counted && pending_only_io(t, np)))) {
		int rc = route_reverse(t, s, d, np);

		if (rc < 0)
			return rc;
		np = 0;
	}

	/* no up-then-down path: any routed neighbour (see the top comment) */
	while (np) {
		size_t keep = 0;

		for (size_t i = 0; i < np; i++) {
			int32_t x = t->pending[i];
			uint32_t b = t->port_base[x];
			uint32_t nports = t->port_base[x + 1] - b;
			int found = 0;

			for (unsigned p = 1; p < nports && !found; p++) {
				int32_t y = t->pnbr[b + p];

				if (y >= 0 && t->routed[y] == t->rcur) {
					if (t->has_ca[x] && counted) {
						snprintf(t->err, t->errlen,
							 "switch 0x%016" PRIx64
							 " \"%s\" has no up-then-down "
							 "path to LID %u (links "
							 "missing): the tree is cut",
							 ftree_sw_guid(t, (size_t)x),
							 ftree_sw_desc(t, (size_t)x), lid);
						return -ENETUNREACH;
					}
					hop(t, x, lid, (uint8_t)p, y);
					t->next[x] = -1;	/* carries no CA traffic */
					t->n_phase5++;
					if (set_layer(t, x, lid) < 0)
						return -ENOMEM;
					found = 1;
				}
			}
			if (!found)
				t->pending[keep++] = x;
		}
		if (keep == np)
			break;		/* the rest is another component */
		np = keep;
	}

	/* commit the real flows: sources climb, then come down to s */
	if (counted) {
		for (size_t i = t->n_order; i-- > 0;) {
			int32_t x = t->order[i];

			if (t->routed[x] != t->rcur || t->astamp[x] == t->acur)
				continue;
			t->mass[x] += t->src[x];
			if (t->next[x] >= 0 && t->mass[x]) {
				flow[t->oslot[x]] += t->mass[x];
				if (t->stop && flow[t->oslot[x]] > t->stop_above)
					t->stopped = true;
				t->mass[t->next[x]] += t->mass[x];
			}
			t->mass[x] = 0;
		}
		for (size_t i = t->n_anc; i-- > 0;) {
			int32_t a = t->anc[i];

			t->mass[a] += t->src[a];
			if (t->mass[a]) {
				flow[t->oslot[a]] += t->mass[a];
				if (t->stop && flow[t->oslot[a]] > t->stop_above)
					t->stopped = true;
				t->mass[t->next[a]] += t->mass[a];
			}
			t->mass[a] = 0;
		}
		t->mass[s] = 0;
	}
	return 0;
}

/*
 * Flow strategy, second pass: take the flows of a CA LID routed in the
 * first pass off the links (ftree_find_ancestors(s) done), walking its tables
 * the way route_dest() committed them: sources climb through the
 * switches that are not ancestors of s, lowest first, then come down
 * through the ancestors, highest first.
 */
static void unroute_dest(struct ftree *t, int32_t s, uint16_t lid)
{
	struct routing_result *r = t->cur;

	for (size_t i = t->n_order; i-- > 0;) {
		int32_t x = t->order[i], y;
		uint32_t slot;

		if (r->sl && r->sl[t->sw_node[x]])
			r->sl[t->sw_node[x]][lid] = 0;
		if (x == s || t->astamp[x] == t->acur)
			continue;
		t->mass[x] += t->src[x];
		slot = t->port_base[x] + t->lftp[x][lid];
		y = t->pnbr[slot];
		if (t->mass[x] && y >= 0) {
			t->cnt[slot] -= t->mass[x];
			t->mass[y] += t->mass[x];
		}
		t->mass[x] = 0;
	}
	for (size_t i = t->n_anc; i-- > 0;) {
		int32_t a = t->anc[i], y;
		uint32_t slot = t->port_base[a] + t->lftp[a][lid];

		t->mass[a] += t->src[a];
		y = t->pnbr[slot];
		if (t->mass[a] && y >= 0) {
			t->cnt[slot] -= t->mass[a];
			t->mass[y] += t->mass[a];
		}
		t->mass[a] = 0;
	}
	t->mass[s] = 0;
}

/* The port a destination LID belongs to; a new port (the LIDs of one
 * port come together) starts a new ucur round. */
static const struct fab_port *dest_port(struct ftree *t, const struct fdest *d,
					int32_t *owner, uint8_t *owner_port)
{
	if (d->owner != *owner || d->owner_port != *owner_port) {
		*owner = d->owner;
		*owner_port = d->owner_port;
		t->ucur++;
	}
	return &fabric_node(t->f, d->owner)->ports[d->owner_port];
}

/*
 * Flow strategy: route every CA LID a second time, its own first-pass
 * flows taken off, so that the early LIDs also see where the later ones
 * went (a greedy first pass fills the links the early LIDs chose).
 */
static int reroute_all(struct ftree *t, bool backwards, size_t start)
{
	int32_t owner = -1;
	uint8_t owner_port = 0;

	for (size_t k = 0; k < t->S; k++) {
		size_t x = ((backwards ? t->S - 1 - k : k) + start) % t->S;
		uint32_t a = t->dest_off[x], e = t->dest_off[x + 1];

		if (a == e || t->level[x] < 0)
			continue;
		ftree_find_ancestors(t, (int32_t)x);
		for (uint32_t i = a; i < e; i++) {
			const struct fdest *d = &t->dests[i];
			const struct fab_port *pt = dest_port(t, d, &owner,
							      &owner_port);
			int rc;

			if (!d->counted)
				continue;
			unroute_dest(t, (int32_t)x, d->lid);
			rc = route_dest(t, (int32_t)x, d, pt->lmc > 0);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

/*
 * Route the I/O nodes' LIDs into r by the chain strategy, their own
 * destinations counted per link so that they spread over the links
 * among themselves; the other LIDs, routed before, do not see them.
 */
int ftree_route_io(struct ftree *t, struct routing_result *r)
{
	uint32_t *keep = t->flow;
	int32_t owner = -1;
	uint8_t owner_port = 0;
	int rc = 0;

	if (!t->n_io_lids)
		return 0;
	if (!ALLOC(t->flow, t->port_base[t->S] + 1)) {
		t->flow = keep;
		return -ENOMEM;
	}
	memset(t->cnt, 0, t->port_base[t->S] * sizeof(*t->cnt));
	memset(t->pmin, 0, t->S * sizeof(*t->pmin));
	memset(t->pidx, 0, t->S * sizeof(*t->pidx));
	t->stop = t->stopped = false;
	t->cur = r;
	for (size_t x = 0; x < t->S; x++)
		t->lftp[x] = r->lft[t->sw_node[x]].port;
	for (size_t x = 0; x < t->S && rc == 0; x++) {
		uint32_t a = t->dest_off[x], e = t->dest_off[x + 1], i;

		for (i = a; i < e && !t->dests[i].io; i++)
			;
		if (i == e || t->level[x] < 0)
			continue;
		ftree_find_ancestors(t, (int32_t)x);
		for (; i < e && rc == 0; i++) {
			const struct fdest *d = &t->dests[i];
			const struct fab_port *pt;

			if (!d->io)
				continue;
			pt = dest_port(t, d, &owner, &owner_port);
			rc = route_dest(t, (int32_t)x, d, pt->lmc > 0);
		}
	}
	free(t->flow);
	t->flow = keep;
	return rc;
}

static int reroute_passes(struct ftree *t);

/* Route every LID with the current strategy into `out`. */
int ftree_route_all(struct ftree *t, struct routing_result *out)
{
	int32_t owner = -1;
	uint8_t owner_port = 0;
	int rc = routing_alloc_tables(t->f, out, t->top);

	if (rc < 0)
		return rc;
	memset(t->cnt, 0, t->port_base[t->S] * sizeof(*t->cnt));
	memset(t->pmin, 0, t->S * sizeof(*t->pmin));
	memset(t->pidx, 0, t->S * sizeof(*t->pidx));
	t->n_phase5 = 0;
	t->stopped = false;
	for (size_t x = 0; x < t->S; x++)
		t->lftp[x] = out->lft[t->sw_node[x]].port;
	t->cur = out;
	for (size_t x = 0; x < t->S; x++) {
		uint32_t a = t->dest_off[x], e = t->dest_off[x + 1];

		if (a == e)
			continue;
		if (t->level[x] < 0) {
			/* no leaf in its part of the fabric: its own LIDs */
			for (uint32_t i = a; i < e; i++)
				if (!t->dests[i].port)
					t->lftp[x][t->dests[i].lid] = 0;
			continue;
		}
		ftree_find_ancestors(t, (int32_t)x);
		for (uint32_t i = a; i < e; i++) {
			const struct fdest *d = &t->dests[i];
			const struct fab_port *pt;

			if (d->io)
				continue;	/* ftree_route_io() */
			pt = dest_port(t, d, &owner, &owner_port);
			rc = route_dest(t, (int32_t)x, d, pt->lmc > 0);
			if (rc < 0)
				return rc;
			if (t->stopped)
				return -ECANCELED;
		}
	}
	if (t->flow)
		return 0;
	return reroute_passes(t);
}

/*
 * The flow strategy's reroute passes: each routes every host LID again
 * with its own flows taken off.  On large fabrics at most one pass (a
 * pass costs as much as the first routing: 3 s on 11,664 hosts with
 * links cut), and none when the first routing is within 2% of the leaf
 * bound; on small ones up to FLOW_PASSES, keeping the best tables seen,
 * since a pass can also make the busiest link worse.
 */
#define FLOW_PASSES		6
#define FLOW_PASSES_ENTRIES	(1u << 18)	/* switches x LIDs */

static int reroute_passes(struct ftree *t)
{
	uint64_t bound = ftree_leaf_bound(t) * 1025 / 1024;
	uint64_t best = ftree_max_flow(t, t->cnt), m;
	size_t rows = (size_t)t->top + 1, nc = t->port_base[t->S];
	bool many = (uint64_t)t->S * rows <= FLOW_PASSES_ENTRIES;
	uint8_t *keep = NULL;
	uint32_t *keep_cnt = NULL;
	int rc = 0;

	if (best <= bound)
		return 0;
	/* Large: one pass, none when the first routing is within 2% of
	 * the bound (the pass then tends to make it worse: 4,608 hosts,
	 * 5,184 flows against a bound of 5,169 became 5,292, in 0.3 s). */
	if (!many)
		return best * 50 <= bound * 51 ? 0 : reroute_all(t, false, 0);
	keep = malloc(t->S * rows);
	keep_cnt = malloc((nc + 1) * sizeof(*keep_cnt));
	if (!keep || !keep_cnt) {
		rc = -ENOMEM;
		goto out;
	}
	for (unsigned p = 0; p < FLOW_PASSES && best > bound; p++) {
		for (size_t x = 0; x < t->S; x++)
			memcpy(keep + x * rows, t->lftp[x], rows);
		memcpy(keep_cnt, t->cnt, nc * sizeof(*keep_cnt));
		/* each pass in another order (backwards every other
		 * pass, starting elsewhere): a different order meets
		 * different counts */
		rc = reroute_all(t, p & 1, p / 2 * t->S / (FLOW_PASSES / 2));
		if (rc < 0)
			break;
		m = ftree_max_flow(t, t->cnt);
		if (m >= best) {
			/* no better: back to the best tables, next order */
			for (size_t x = 0; x < t->S; x++)
				memcpy(t->lftp[x], keep + x * rows, rows);
			memcpy(t->cnt, keep_cnt, nc * sizeof(*keep_cnt));
			continue;
		}
		best = m;
	}
out:
	free(keep);
	free(keep_cnt);
	return rc;
}

/* The most CA-to-CA flows on one inter-switch link (all-to-all). */
uint64_t ftree_max_flow(const struct ftree *t, const uint32_t *flow)
{
	uint64_t m = 0;

	for (size_t i = 0; i < t->port_base[t->S]; i++)
		if (flow[i] > m)
			m = flow[i];
	return m;
}

/*
 * A lower bound of the busiest link: the flows out of each leaf (its CA
 * ports to every CA LID elsewhere) spread at best evenly over its
 * up-links.  When the chain strategy meets it, no strategy can do better.
 */
uint64_t ftree_leaf_bound(const struct ftree *t)
{
	uint64_t total = 0, bound = 0;

	for (size_t i = 0; i < t->dest_off[t->S]; i++)
		total += t->dests[i].counted;
	for (size_t x = 0; x < t->S; x++) {
		uint64_t n = t->up_off[x + 1] - t->up_off[x], own = 0, flows;

		if (t->level[x] != 0 || !n)
			continue;
		for (uint32_t i = t->dest_off[x]; i < t->dest_off[x + 1]; i++)
			own += t->dests[i].counted;
		/* its sources to every CA LID elsewhere, and back */
		flows = (uint64_t)t->src[x] * (total - own);
		if ((flows + n - 1) / n > bound)
			bound = (flows + n - 1) / n;
	}
	return bound;
}
