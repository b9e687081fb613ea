/*
 * updn.c - up*\/down* routing ("updn") and its mirror ("dnup"), with roots
 * that are always found.
 *
 * Up*\/down* (Schroeder et al., Autonet): order the switches; a channel
 * that leads to a lower switch in the order goes up, the others go down.
 * A legal path climbs zero or more channels, then descends; no path turns
 * from a descending channel onto a climbing one, so every dependency
 * between channels leads from up to up, up to down or down to down, and
 * down-to-down and up-to-up dependencies follow the order: the channel
 * dependency graph is acyclic on a single VL, whatever the destinations.
 *
 * The order is (rank, switch index), rank being the hop count from the
 * nearest root; with an ids_guid_file (updn only) (rank, id, index),
 * each switch's id from the file or else its node GUID, as OpenSM,
 * whose tie-break is the GUID.  Which roots: the node GUIDs of root_guid_file when given;
 * otherwise, when some switches have no CA/router ports, the switches
 * farthest from any host (the top level of a fat tree; for dnup, whose
 * paths first descend and then climb, the switches with hosts, with the
 * order reversed, which gives the same fat-tree paths); otherwise, or when
 * that choice leaves a pair of switches without a legal path (several
 * roots need not share a descendant), the most central switch of each
 * connected component (least eccentricity, then least total distance):
 * with one root every switch climbs to it and descends anywhere, so a
 * legal path always exists.  OpenSM's updn gives up ("no roots") on tori
 * and random graphs and falls back to minhop; this one does not.
 *
 * Destination-based tables need every switch's single next hop to suit
 * every path through it.  Per destination switch t: Dd[v] is the length of
 * the shortest all-descending path from v to t; a switch that has one
 * descends on it (its next hop w has Dd[w] = Dd[v] - 1, so the path stays
 * descending to the end); the others climb to the up-neighbour with the
 * shortest such path, L[v] = 1 + min L[u].  Every switch's path is then
 * legal, and so is every suffix of it.  Among the equally short choices
 * a switch takes the port that carries the fewest CA/router LIDs so far,
 * the lowest port number on a tie, as minhop does (with a
 * port_search_ordering_file line for the switch: the port it lists
 * first).  LIDs are taken destination switch by destination switch;
 * with a guid_routing_order_file, the LIDs of its ports come first, in
 * its order.  Cost: O(switches x channels) for the distances plus
 * O(LIDs x channels) for the choices.
 *
 * connect_roots (updn only): no pair of switches is left without a path
 * here, but two roots may have only paths that turn down and then up
 * (two leaves named roots in a fat tree), and a root with hosts without a
 * legal path to another is dropped from the roots.  With connect_roots
 * the LIDs on root switches are routed by plain shortest paths from every
 * switch (distances() with conn set), so the roots stay, as in OpenSM;
 * when that closes a cycle in the channel dependency graph of the host
 * paths (connect_check()), the tables are made again without it.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/cdgraph.h"
#include "routing/engines.h"
#include "routing/order.h"
#include "routing/verify.h"

struct updn {
	struct rgraph *g;
	const uint32_t *key;	/* a permutation of 0 .. S-1 */
	uint32_t *by_key;	/* switch with key k */
	uint32_t *dd, *len;	/* Dd and L of the current destination */
	uint32_t *hop;		/* plain hop counts, when some L is infinite */
	uint32_t *order;
	uint32_t bad;		/* switches with hosts without a legal path */
	uint32_t n_any;		/* switches without hosts without one */
	uint32_t *cnt;		/* counting sort */
	struct rg_tree tr;
	uint32_t *queue;
	uint32_t *lid_off;	/* LIDs of switch t: lids[lid_off[t] ..] */
	uint16_t *lids;
	/* guid_routing_order_file: these LIDs first (updn_set_order()) */
	const uint16_t *first;
	size_t n_first;
	uint8_t *is_first;	/* per LID */
	/* connect_roots: per switch, whether its LIDs go by shortest paths
	 * from every switch (NULL: none) */
	const uint8_t *conn;
};

void updn_free(struct updn *u)
{
	if (!u)
		return;
	free(u->by_key);
	free(u->dd);
	free(u->len);
	free(u->hop);
	free(u->order);
	free(u->cnt);
	rg_tree_free(&u->tr);
	free(u->queue);
	free(u->lid_off);
	free(u->lids);
	free(u->is_first);
	free(u);
}

struct updn *updn_new(struct rgraph *g, const uint32_t *key)
{
	struct updn *u = calloc(1, sizeof(*u));
	uint32_t S = g->S, n = 0;

	if (!u)
		return NULL;
	u->g = g;
	u->key = key;
	u->by_key = malloc((S + 1) * sizeof(*u->by_key));
	u->dd = malloc((S + 1) * sizeof(*u->dd));
	u->len = malloc((S + 1) * sizeof(*u->len));
	u->hop = malloc((S + 1) * sizeof(*u->hop));
	u->order = malloc((S + 1) * sizeof(*u->order));
	u->cnt = malloc((2 * (size_t)S + 3) * sizeof(*u->cnt));
	u->queue = malloc((S + 1) * sizeof(*u->queue));
	u->lid_off = calloc(S + 2, sizeof(*u->lid_off));
	u->lids = malloc(((size_t)g->top + 1) * sizeof(*u->lids));
	if (!u->by_key || !u->dd || !u->len || !u->queue || !u->lid_off ||
	    !u->lids || !u->hop || !u->order || !u->cnt ||
	    rg_tree_init(&u->tr, g) < 0) {
		updn_free(u);
		return NULL;
	}
	for (uint32_t v = 0; v < S; v++)
		u->by_key[key[v]] = v;
	/* bucket the LIDs by the switch they hang off */
	for (size_t l = 1; l <= g->top; l++)
		if (g->dest[l].sw >= 0)
			u->lid_off[g->dest[l].sw + 1]++;
	for (uint32_t v = 0; v < S; v++)
		u->lid_off[v + 1] += u->lid_off[v];
	for (size_t l = 1; l <= g->top; l++)
		if (g->dest[l].sw >= 0) {
			uint32_t *at = &u->lid_off[g->dest[l].sw];

			u->lids[(*at)++] = (uint16_t)l;
			n++;
		}
	for (uint32_t v = S; v > 0; v--)
		u->lid_off[v] = u->lid_off[v - 1];
	u->lid_off[0] = 0;
	(void)n;
	return u;
}

/*
 * Dd and L towards switch t, and how many switches of t's component are
 * left without a legal path (u->bad: those with hosts; u->n_any: the
 * others).  Several roots can leave a switch without one (in a fat tree
 * whose cores each serve one spine per pod: a core towards a leaf that
 * lost its link into that plane).  That is fine for a switch without
 * hosts: no data enters the fabric there (its own SMPs travel on VL15,
 * which cannot deadlock), so it takes a plain shortest path (u->hop) to
 * where a legal one starts, and no host's path ever passes it.
 */
static void distances(struct updn *u, uint32_t t)
{
	const struct rgraph *g = u->g;
	const uint32_t *key = u->key;
	uint32_t head = 0, tail = 0;

	u->bad = u->n_any = 0;
	for (uint32_t v = 0; v < g->S; v++)
		u->dd[v] = u->len[v] = RG_INF;
	u->dd[t] = 0;
	if (u->conn && u->conn[t]) {
		/* a connected root: every switch by plain hop counts */
		u->len[t] = 0;
		u->n_any = 1;
		rg_bfs(g, t, u->hop, u->order);
		return;
	}
	u->queue[tail++] = t;
	while (head < tail) {
		uint32_t x = u->queue[head++];

		/* v -> x descends when x comes after v in the order */
		for (uint32_t a = g->adj_off[x]; a < g->adj_off[x + 1]; a++) {
			uint32_t v = g->adj_nbr[a];

			if (key[v] < key[x] && u->dd[v] == RG_INF) {
				u->dd[v] = u->dd[x] + 1;
				u->queue[tail++] = v;
			}
		}
	}
	for (uint32_t k = 0; k < g->S; k++) {
		uint32_t v = u->by_key[k], best = RG_INF;

		if (u->dd[v] != RG_INF) {
			u->len[v] = u->dd[v];
			continue;
		}
		for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++) {
			uint32_t w = g->adj_nbr[a];

			if (key[w] < key[v] && u->len[w] < best)
				best = u->len[w];
		}
		if (best != RG_INF) {
			u->len[v] = best + 1;
		} else if (g->comp[v] == g->comp[t]) {
			if (g->nhost[v])
				u->bad++;
			else
				u->n_any++;
		}
	}
	if (u->n_any)
		rg_bfs(g, t, u->hop, u->order);
}

/* May switch v forward over channel a towards the current destination? */
static bool legal_next(void *ctx, uint32_t v, uint32_t a)
{
	const struct updn *u = ctx;
	const uint32_t *key = u->key;
	uint32_t w = u->g->adj_nbr[a];

	if (u->len[v] == RG_INF)	/* VL15 only, or a connected root:
					 * any shortest */
		return u->hop[w] + 1 == u->hop[v];
	if (u->dd[v] != RG_INF)			/* descending to the end */
		return key[w] > key[v] && u->dd[w] + 1 == u->dd[v];
	return key[w] < key[v] && u->len[w] + 1 == u->len[v];
}

/*
 * The switches of t's component that have a path, each after every switch
 * it may forward to: by L, then those left without a legal path by hop
 * count (they forward by hop count, to either kind).  Returns how many.
 */
static uint32_t tree_order(struct updn *u, uint32_t t)
{
	const struct rgraph *g = u->g;
	uint32_t n = 0, max = 0;

	for (uint32_t v = 0; v < g->S; v++) {
		if (u->len[v] != RG_INF && u->len[v] > max)
			max = u->len[v];
		if (u->n_any && u->len[v] == RG_INF && u->hop[v] != RG_INF &&
		    u->hop[v] > max)
			max = u->hop[v];
	}
	/* counting sort on L into u->queue (free again after distances) */
	memset(u->cnt, 0, (max + 2) * sizeof(*u->cnt));
	for (uint32_t v = 0; v < g->S; v++)
		if (u->len[v] != RG_INF)
			u->cnt[u->len[v] + 1]++;
	for (uint32_t k = 0; k <= max; k++)
		u->cnt[k + 1] += u->cnt[k];
	for (uint32_t v = 0; v < g->S; v++)
		if (u->len[v] != RG_INF) {
			u->queue[u->cnt[u->len[v]]++] = v;
			n++;
		}
	(void)t;
	if (!u->n_any)
		return n;
	for (uint32_t h = 1; h <= max; h++)
		for (uint32_t v = 0; v < g->S; v++)
			if (u->len[v] == RG_INF && u->hop[v] == h)
				u->queue[n++] = v;
	return n;
}

int updn_set_order(struct updn *u, const uint16_t *lids, size_t n)
{
	free(u->is_first);
	u->is_first = NULL;
	u->first = lids;
	u->n_first = n;
	if (!n)
		return 0;
	u->is_first = calloc((size_t)u->g->top + 1, 1);
	if (!u->is_first)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (lids[i] <= u->g->top)
			u->is_first[lids[i]] = 1;
	return 0;
}

/* The tree of `lid` (on switch t, whose tree_order() is in u->queue[0 ..
 * n)) into the tables. */
static void route_lid(struct updn *u, struct routing_result *out,
		      uint32_t t, uint32_t n, uint16_t lid)
{
	struct rgraph *g = u->g;

	out->lft[g->sw_node[t]].port[lid] = g->dest[lid].port;
	rg_tree_build(g, &u->tr, lid, u->queue, n, legal_next, u);
	for (uint32_t k = 1; k < n; k++) {
		uint32_t v = u->queue[k];

		if (u->tr.nxt[v] != RG_INF)
			out->lft[g->sw_node[v]].port[lid] =
				g->adj_port[u->tr.nxt[v]];
	}
}

int64_t updn_route(struct updn *u, struct routing_result *out,
		   bool (*want)(void *ctx, uint16_t lid), void *ctx)
{
	struct rgraph *g = u->g;
	int64_t bad = 0;
	uint32_t last = RG_INF, n = 0;

	/* the listed LIDs first, in their order: the distances again
	 * whenever the destination switch changes */
	for (size_t i = 0; i < u->n_first; i++) {
		uint16_t lid = u->first[i];
		int32_t t = lid <= g->top ? g->dest[lid].sw : -1;

		if (t < 0 || (want && !want(ctx, lid)))
			continue;
		if ((uint32_t)t != last) {
			distances(u, (uint32_t)t);
			n = tree_order(u, (uint32_t)t);
			last = (uint32_t)t;
		}
		bad += u->bad;
		route_lid(u, out, (uint32_t)t, n, lid);
	}
	for (uint32_t t = 0; t < g->S; t++) {
		bool any = false;

		for (uint32_t i = u->lid_off[t]; i < u->lid_off[t + 1]; i++)
			if ((!want || want(ctx, u->lids[i])) &&
			    !(u->is_first && u->is_first[u->lids[i]]))
				any = true;
		if (!any)
			continue;
		distances(u, t);
		n = tree_order(u, t);
		for (uint32_t i = u->lid_off[t]; i < u->lid_off[t + 1]; i++) {
			uint16_t lid = u->lids[i];

			if ((want && !want(ctx, lid)) ||
			    (u->is_first && u->is_first[lid]))
				continue;
			bad += u->bad;
			route_lid(u, out, t, n, lid);
		}
	}
	return bad;
}

/*
 * Does every switch with hosts have a legal path to every switch on `key`
 * (but the switches conn names, which every switch reaches by shortest
 * paths)?  1 yes, 0 no (then bad[v] is set for the switches that lack one), or
 * -ENOMEM.
 */
static int key_works(struct rgraph *g, const uint32_t *key, uint8_t *bad,
		     const uint8_t *conn)
{
	struct updn *u = updn_new(g, key);
	int ok = 1;

	if (!u)
		return -ENOMEM;
	u->conn = conn;
	memset(bad, 0, g->S);
	for (uint32_t t = 0; t < g->S; t++) {
		distances(u, t);
		if (!u->bad)
			continue;
		ok = 0;
		for (uint32_t v = 0; v < g->S; v++)
			if (u->len[v] == RG_INF && g->comp[v] == g->comp[t] &&
			    g->nhost[v])
				bad[v] = 1;
	}
	updn_free(u);
	return ok;
}

struct rank_id {
	uint32_t rank, v;
	uint64_t id;
};

static int cmp_rank_id(const void *a, const void *b)
{
	const struct rank_id *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->v < y->v ? -1 : x->v > y->v;
}

/*
 * key = order by (rank, index), or with `id` (ids_guid_file) by (rank,
 * id[v], index); rank[v] RG_INF sorts last.  Between switches of equal
 * rank the one with the lower id is the upper one, as in OpenSM (a step
 * to a lower id goes up).  0, or -ENOMEM.
 */
static int key_from_rank(const struct rgraph *g, const uint32_t *rank,
			 uint32_t *key, bool reverse, const uint64_t *id)
{
	uint32_t k = 0, max = 0;
	struct rank_id *ri;

	if (id) {
		ri = malloc(((size_t)g->S + 1) * sizeof(*ri));
		if (!ri)
			return -ENOMEM;
		for (uint32_t v = 0; v < g->S; v++)
			ri[v] = (struct rank_id){ rank[v], v, id[v] };
		qsort(ri, g->S, sizeof(*ri), cmp_rank_id);
		for (uint32_t i = 0; i < g->S; i++)
			key[ri[i].v] = reverse ? g->S - 1 - i : i;
		free(ri);
		return 0;
	}
	for (uint32_t v = 0; v < g->S; v++)
		if (rank[v] != RG_INF && rank[v] > max)
			max = rank[v];
	for (uint32_t r = 0; r <= max + 1; r++)
		for (uint32_t v = 0; v < g->S; v++)
			if (rank[v] == r || (r == max + 1 && rank[v] == RG_INF))
				key[v] = reverse ? g->S - 1 - k++ : k++;
	return 0;
}

/* Multi-source BFS from the switches with is_root set. */
static void rank_from(const struct rgraph *g, const uint8_t *is_root,
		      uint32_t *rank, uint32_t *queue)
{
	uint32_t head = 0, tail = 0;

	for (uint32_t v = 0; v < g->S; v++) {
		rank[v] = RG_INF;
		if (is_root[v]) {
			rank[v] = 0;
			queue[tail++] = v;
		}
	}
	while (head < tail) {
		uint32_t v = queue[head++];

		for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++) {
			uint32_t w = g->adj_nbr[a];

			if (rank[w] == RG_INF) {
				rank[w] = rank[v] + 1;
				queue[tail++] = w;
			}
		}
	}
}

/* Every component without a root gets its most central switch. */
static void add_central(const struct rgraph *g, uint8_t *is_root,
			uint32_t *dist, uint32_t *order, bool all)
{
	uint32_t S = g->S;
	uint8_t *has = calloc(S + 1, 1);
	uint32_t *best_ecc = malloc((S + 1) * sizeof(*best_ecc));
	uint64_t *best_sum = malloc((S + 1) * sizeof(*best_sum));
	uint32_t *best = malloc((S + 1) * sizeof(*best));

	if (!has || !best_ecc || !best_sum || !best)
		goto out;
	for (uint32_t v = 0; v < S; v++) {
		if (is_root[v] && !all)
			has[g->comp[v]] = 1;
		best_ecc[v] = RG_INF;
		best[v] = RG_INF;
	}
	if (all)
		memset(is_root, 0, S);
	for (uint32_t v = 0; v < S; v++) {
		uint32_t c = g->comp[v], n, ecc = 0;
		uint64_t sum = 0;

		if (has[c])
			continue;
		n = rg_bfs(g, v, dist, order);
		for (uint32_t i = 0; i < n; i++) {
			sum += dist[order[i]];
			if (dist[order[i]] > ecc)
				ecc = dist[order[i]];
		}
		if (ecc < best_ecc[c] || (ecc == best_ecc[c] && sum < best_sum[c])) {
			best_ecc[c] = ecc;
			best_sum[c] = sum;
			best[c] = v;
		}
	}
	for (uint32_t c = 0; c < S; c++)
		if (best[c] != RG_INF)
			is_root[best[c]] = 1;
out:
	free(has);
	free(best_ecc);
	free(best_sum);
	free(best);
}

/* What updn_pick() and its steps work with. */
struct pick {
	struct rgraph *g;
	uint8_t *is_root;
	uint32_t *rank, *queue, *dist, *key;
	const uint64_t *id;	/* ids_guid_file per switch, NULL: none */
	bool connect;		/* connect_roots: roots need no legal path */
};

/*
 * Rank from the roots in is_root and check; while roots are among the
 * switches left without a legal path (a core of a fat tree that lost its
 * only link into a pod), drop them from the roots and try again: they then
 * climb to a root that has the link.  1 when a key works, 0 when not.
 */
static int try_roots(struct pick *pk, bool reverse, uint32_t *n_roots)
{
	struct rgraph *g = pk->g;
	uint8_t *bad = malloc((size_t)g->S + 1);
	int rc = 0;

	if (!bad)
		return -ENOMEM;
	for (unsigned round = 0; round < 16; round++) {
		bool dropped = false;

		add_central(g, pk->is_root, pk->dist, pk->queue, false);
		rank_from(g, pk->is_root, pk->rank, pk->queue);
		rc = key_from_rank(g, pk->rank, pk->key, reverse, pk->id);
		if (rc == 0)
			rc = key_works(g, pk->key, bad,
				       pk->connect ? pk->is_root : NULL);
		if (rc != 0)
			break;
		for (uint32_t v = 0; v < g->S; v++)
			if (bad[v] && pk->is_root[v] && *n_roots > 1) {
				pk->is_root[v] = 0;
				(*n_roots)--;
				dropped = true;
			}
		if (!dropped)
			break;
	}
	free(bad);
	return rc;
}

/* Step 1: the roots of root_guid_file.  1 when they work, 0 when not
 * (why says so), -ENOMEM. */
static int pick_file(struct pick *pk, const struct routing_opts *o,
		     char *what, size_t whatlen, const char **why)
{
	struct rgraph *g = pk->g;
	uint32_t n_roots = 0;
	int rc;

	for (uint32_t v = 0; v < g->S; v++)
		for (size_t i = 0; i < o->n_root_guids; i++)
			if (fabric_node(g->f, g->sw_node[v])->guid ==
			    o->root_guids[i]) {
				pk->is_root[v] = 1;
				n_roots++;
			}
	if (!n_roots) {
		*why = "no root_guid_file GUID is a switch, ";
		return 0;
	}
	rc = try_roots(pk, false, &n_roots);
	if (rc > 0)
		snprintf(what, whatlen, "%u roots from root_guid_file", n_roots);
	else if (rc == 0)
		*why = "root_guid_file roots leave pairs without a legal path, ";
	return rc;
}

/*
 * updn_pick() with the extras of the updn engine itself: ids (per switch,
 * NULL: none) and connect (connect_roots).  is_root (S entries) gets the
 * roots of the key chosen.
 */
static int pick_order(struct rgraph *g, const struct routing_opts *o,
		      bool dnup, struct pick *pk, char *what, size_t whatlen)
{
	uint32_t S = g->S, n_roots = 0, maxlvl = 0;
	uint8_t *is_root = pk->is_root;
	const char *why = "";
	int rc;

	/* 1. root_guid_file */
	if (o && o->n_root_guids && !dnup) {
		rc = pick_file(pk, o, what, whatlen, &why);
		if (rc != 0)
			return rc < 0 ? rc : 0;
	}

	/* 2. a fat tree: levels counted from the switches with hosts */
	memset(is_root, 0, S);
	for (uint32_t v = 0; v < S; v++)
		is_root[v] = g->nhost[v] > 0;
	rank_from(g, is_root, pk->rank, pk->queue);
	for (uint32_t v = 0; v < S; v++)
		if (pk->rank[v] != RG_INF && pk->rank[v] > maxlvl)
			maxlvl = pk->rank[v];
	if (maxlvl > 0) {
		if (!dnup)
			for (uint32_t v = 0; v < S; v++) {
				is_root[v] = pk->rank[v] == maxlvl;
				n_roots += is_root[v];
			}
		else
			for (uint32_t v = 0; v < S; v++)
				n_roots += is_root[v];
		rc = try_roots(pk, dnup, &n_roots);
		if (rc < 0)
			return rc;
		if (rc) {
			snprintf(what, whatlen, "%s%u-level tree, %u %s", why,
				 maxlvl + 1, n_roots, dnup ? "leaves" : "roots");
			return 0;
		}
	}

	/* 3. the most central switch of each component */
	add_central(g, is_root, pk->dist, pk->queue, true);
	n_roots = 0;
	for (uint32_t v = 0; v < S; v++)
		n_roots += is_root[v];
	rank_from(g, is_root, pk->rank, pk->queue);
	rc = key_from_rank(g, pk->rank, pk->key, false, pk->id);
	snprintf(what, whatlen, "%s%u central root%s", why, n_roots,
		 n_roots == 1 ? "" : "s");
	return rc;
}

static int pick_alloc(struct pick *pk, struct rgraph *g, uint32_t *key)
{
	uint32_t S = g->S;

	memset(pk, 0, sizeof(*pk));
	pk->g = g;
	pk->key = key;
	pk->is_root = calloc(S + 1, 1);
	pk->rank = malloc((S + 1) * sizeof(*pk->rank));
	pk->queue = malloc((S + 1) * sizeof(*pk->queue));
	pk->dist = malloc((S + 1) * sizeof(*pk->dist));
	return pk->is_root && pk->rank && pk->queue && pk->dist ? 0 : -ENOMEM;
}

static void pick_free(struct pick *pk)
{
	free(pk->is_root);
	free(pk->rank);
	free(pk->queue);
	free(pk->dist);
}

int updn_pick(struct rgraph *g, const struct routing_opts *o, bool dnup,
	      uint32_t *key, char *what, size_t whatlen)
{
	struct pick pk;
	int rc = pick_alloc(&pk, g, key);

	if (rc == 0)
		rc = pick_order(g, o, dnup, &pk, what, whatlen);
	pick_free(&pk);
	return rc;
}

/*
 * ids_guid_file on the switches of g: each switch's id, its node GUID
 * when the file does not list it (as OpenSM, where the id replaces the
 * GUID).  NULL in *id when no listed GUID is a switch of g.  0 or -ENOMEM.
 */
static int switch_ids(const struct rgraph *g, const struct routing_opts *o,
		      uint64_t **id)
{
	bool any = false;

	*id = NULL;
	if (!o || !o->n_ids)
		return 0;
	*id = malloc(((size_t)g->S + 1) * sizeof(**id));
	if (!*id)
		return -ENOMEM;
	for (uint32_t v = 0; v < g->S; v++) {
		const struct fab_node *n = fabric_node(g->f, g->sw_node[v]);

		(*id)[v] = n->guid;
		for (size_t i = 0; i < o->n_ids; i++)
			if (o->id_guids[i] == n->guid) {
				(*id)[v] = o->ids[i];
				any = true;
			}
	}
	if (!any) {
		free(*id);
		*id = NULL;
	}
	return 0;
}

/* One pass: the order (pk->connect as set), then every LID into out. */
static int route_pass(const struct fabric *f, const struct routing_opts *o,
		      struct rgraph *g, struct pick *pk, bool dnup,
		      const uint16_t *order, size_t n_first,
		      struct routing_result *out, char *what, size_t whatlen,
		      char *err, size_t errlen)
{
	struct updn *u = NULL;
	int64_t bad;
	int rc;

	/* the channel loads of an earlier pass start afresh */
	memset(g->load, 0, ((size_t)g->adj_off[g->S] + 1) * sizeof(*g->load));
	memset(g->cnt, 0, ((size_t)g->adj_off[g->S] + 1) * sizeof(*g->cnt));
	rc = pick_order(g, o, dnup, pk, what, whatlen);
	if (rc == 0)
		rc = routing_alloc_tables(f, out, g->top);
	if (rc == 0) {
		u = updn_new(g, pk->key);
		if (!u || updn_set_order(u, order, n_first) < 0)
			rc = -ENOMEM;
	}
	if (rc == 0) {
		u->conn = pk->connect ? pk->is_root : NULL;
		bad = updn_route(u, out, NULL, NULL);
		if (bad < 0) {
			rc = (int)bad;
		} else if (bad) {
			/* cannot happen with a key pick_order() checked */
			snprintf(err, errlen, "%lld switch/LID pairs without a "
				 "legal path", (long long)bad);
			rc = -EHOSTUNREACH;
		}
	}
	updn_free(u);
	return rc;
}

/*
 * connect_roots: the roots' LIDs went by shortest paths.  When that closes
 * a cycle in the channel dependency graph of the host paths, route again
 * without (conn gets why); else the check stands (cdg_acyclic).  0 or
 * -errno.
 */
static int connect_check(const struct fabric *f, const struct routing_opts *o,
			 struct rgraph *g, struct pick *pk,
			 const uint16_t *order, size_t n_first,
			 struct routing_result *out, char *what, size_t whatlen,
			 char *conn, size_t connlen, char *err, size_t errlen)
{
	struct routing_cdg cdg;
	uint64_t cycles;
	uint32_t n_roots = 0;
	int rc;

	for (uint32_t v = 0; v < g->S; v++)
		n_roots += pk->is_root[v];
	if (n_roots < 2) {
		snprintf(conn, connlen, ", 1 root: connect_roots moot");
		return 0;
	}
	rc = routing_check_cdg(f, out, &cdg);
	if (rc < 0)
		return rc;
	cycles = routing_cdg_cycles(&cdg);
	if (!cycles) {
		out->cdg_acyclic = true;
		snprintf(conn, connlen, ", roots connected (connect_roots)");
		return 0;
	}
	snprintf(conn, connlen, ", connect_roots not applied: it closes %llu"
		 " channel dependency cycles", (unsigned long long)cycles);
	routing_result_free(out);
	pk->connect = false;
	return route_pass(f, o, g, pk, false, order, n_first, out, what,
			  whatlen, err, errlen);
}

static int updn_engine(const struct fabric *f, const struct routing_opts *o,
		       struct routing_result *out, char *err, size_t errlen,
		       bool dnup)
{
	struct rgraph g;
	struct pick pk;
	uint32_t *key = NULL;
	uint64_t *id = NULL;
	uint16_t *order = NULL;
	size_t n_first = 0;
	char what[120], conn[100] = "";
	int rc;

	rc = rg_build_opts(&g, f, o, err, errlen);
	if (rc < 0)
		return rc;
	memset(&pk, 0, sizeof(pk));
	key = malloc((g.S + 1) * sizeof(*key));
	rc = key ? pick_alloc(&pk, &g, key) : -ENOMEM;
	if (rc == 0)
		rc = routing_lid_order(f, o, g.top, &order, &n_first);
	/* OpenSM's dnup has no ids and connects anything without a
	 * legal path (as updn_route() always does for hostless switches) */
	if (rc == 0 && !dnup)
		rc = switch_ids(&g, o, &id);
	pk.id = id;
	pk.connect = !dnup && o && o->connect_roots;
	if (rc == 0)
		rc = route_pass(f, o, &g, &pk, dnup, order, n_first, out,
				what, sizeof(what), err, errlen);
	if (rc == 0 && pk.connect)
		rc = connect_check(f, o, &g, &pk, order, n_first, out, what,
				   sizeof(what), conn, sizeof(conn), err, errlen);
	if (rc == 0)
		snprintf(out->summary, sizeof(out->summary), "%s: %s%s%s, 1 VL",
			 dnup ? "down*/up*" : "up*/down*", what,
			 id ? ", ids from ids_guid_file" : "", conn);
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (rc < 0)
		routing_result_free(out);
	pick_free(&pk);
	free(key);
	free(id);
	free(order);
	rg_free(&g);
	return rc;
}

static int updn_route_fn(const struct fabric *f, const struct routing_opts *o,
			 struct routing_result *out, char *err, size_t errlen)
{
	return updn_engine(f, o, out, err, errlen, false);
}

static int dnup_route_fn(const struct fabric *f, const struct routing_opts *o,
			 struct routing_result *out, char *err, size_t errlen)
{
	return updn_engine(f, o, out, err, errlen, true);
}

const struct routing_engine routing_updn = {
	.name = "updn",
	.route = updn_route_fn,
};

const struct routing_engine routing_dnup = {
	.name = "dnup",
	.route = dnup_route_fn,
};
