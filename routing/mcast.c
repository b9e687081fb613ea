/*
 * mcast.c - multicast trees (see mcast.h).
 *
 * Switches get compact indices in node id order; switch-to-switch links
 * form an adjacency list (both directions), each link carrying the number
 * of LIDs the unicast LFTs send over it, either way.
 *
 * Per group:
 *   1. Members map to member switches: a CA port to the switch it is
 *      linked to, a switch port 0 to its own switch.
 *   2. Root: the switch whose largest hop count to a member switch (its
 *      eccentricity over the members) is least.  With up to
 *      MCAST_EXACT_SWITCHES member switches this is exact: one BFS from
 *      each member switch.  With more, a BFS from a member switch finds
 *      the farthest member switch a, one from a finds the farthest b at
 *      distance D, one from b gives the switches midway between a and b;
 *      no root can do better than ceil(D / 2), and up to MCAST_CANDIDATES
 *      of the midway switches are tried (one BFS each) until one reaches
 *      that bound.  On fat trees the first candidate does (a spine); on
 *      other graphs the root found is at most the best found among them.
 *      Either way the work is a constant number of BFSes.
 *   3. A BFS from the root; each member switch, nearest first, walks
 *      towards the root, one hop closer each step, preferring a switch
 *      already on the tree (fewer switches carry the group), then the
 *      link the unicast routing loads least, then a hash of the seed.
 *      The walk stops where it meets the tree.  The tree is thus a
 *      subtree of a shortest-path tree from the root: loop-free, and
 *      its depth is the root's eccentricity.
 *   4. Every tree link's two ports go into their switches' masks, and
 *      the switch ports of receiving members into theirs.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "routing/mcast.h"

/* Member switches up to which the root is found exactly. */
#define MCAST_EXACT_SWITCHES	32
/* Midway switches tried beyond that. */
#define MCAST_CANDIDATES	8

#define UNREACHED	UINT32_MAX

struct mc_edge {
	uint32_t to;			/* compact switch index */
	uint8_t  port, peer_port;
	uint32_t load;			/* LIDs routed over the link, both ways */
};

struct mcast_ctx {
	const struct fabric *f;
	size_t    S;			/* switches */
	int32_t  *sw_node;		/* [S]: node id */
	int32_t  *sw_idx;		/* [n_nodes]: compact index or -1 */
	uint32_t *adj_off;		/* [S + 1] */
	struct mc_edge *adj;
	/* scratch, per tree */
	uint32_t *dist, *aux, *cnt, *queue;
	uint32_t *mstamp, *tstamp, stamp;
	uint32_t *mem, *tree;
	uint64_t (*mask)[MCAST_MASK_WORDS];
	/*
	 * Hop distances from a switch to every switch, kept per source
	 * switch for the life of the context (the model does not change
	 * under it): a burst of joins rebuilds the same groups' trees again
	 * and again, and their member switches are mostly the same leaves,
	 * so the BFS of each is done once.  At most MCAST_BFS_CACHE bytes;
	 * past that, BFS as before.
	 */
	uint32_t **rows;		/* [S]: row or NULL */
	size_t    rows_bytes;
};

#define MCAST_BFS_CACHE	(16u << 20)

void mcast_ctx_free(struct mcast_ctx *c)
{
	if (!c)
		return;
	free(c->sw_node);
	free(c->sw_idx);
	free(c->adj_off);
	free(c->adj);
	free(c->dist);
	free(c->aux);
	free(c->cnt);
	free(c->queue);
	free(c->mstamp);
	free(c->tstamp);
	free(c->mem);
	free(c->tree);
	free(c->mask);
	if (c->rows)
		for (size_t k = 0; k < c->S; k++)
			free(c->rows[k]);
	free(c->rows);
	free(c);
}

static bool is_switch(const struct fabric *f, int32_t id)
{
	return fabric_node(f, id)->type == NODE_TYPE_SWITCH;
}

/* The switch at the far end of port `pn` of node `id`, or FAB_NONE. */
static int32_t switch_peer(const struct fabric *f, int32_t id, unsigned pn)
{
	const struct fab_port *p = &fabric_node(f, id)->ports[pn];

	if (p->peer_node == FAB_NONE || p->peer_node < 0 ||
	    (size_t)p->peer_node >= f->n_nodes || !is_switch(f, p->peer_node))
		return FAB_NONE;
	return p->peer_node;
}

/*
 * Unicast load of every switch port: how many LIDs the LFT sends out of
 * it.  `base[k]` is switch k's first slot (num_ports + 1 slots each).
 */
static uint32_t *port_loads(const struct mcast_ctx *c,
			    const struct routing_result *r, size_t **basep)
{
	const struct fabric *f = c->f;
	size_t *base = calloc(c->S + 1, sizeof(*base));
	uint32_t *load;

	if (!base)
		return NULL;
	for (size_t k = 0; k < c->S; k++)
		base[k + 1] = base[k] + fabric_node(f, c->sw_node[k])->num_ports + 1u;
	load = calloc(base[c->S] ? base[c->S] : 1, sizeof(*load));
	if (!load) {
		free(base);
		return NULL;
	}
	if (r && r->lft && r->n_nodes == f->n_nodes) {
		for (size_t k = 0; k < c->S; k++) {
			int32_t id = c->sw_node[k];
			const struct lft *l = &r->lft[id];
			unsigned np = fabric_node(f, id)->num_ports;

			if (!l->port)
				continue;
			for (unsigned lid = 1; lid <= l->top; lid++)
				if (l->port[lid] <= np)
					load[base[k] + l->port[lid]]++;
		}
	}
	*basep = base;
	return load;
}

int mcast_ctx_new(struct mcast_ctx **out, const struct fabric *f,
		  const struct routing_result *r)
{
	struct mcast_ctx *c = calloc(1, sizeof(*c));
	size_t S = 0, E = 0, *base = NULL;
	uint32_t *load = NULL;

	*out = NULL;
	if (!c)
		return -ENOMEM;
	c->f = f;
	c->sw_idx = malloc((f->n_nodes ? f->n_nodes : 1) * sizeof(*c->sw_idx));
	if (!c->sw_idx)
		goto nomem;
	for (size_t i = 0; i < f->n_nodes; i++) {
		c->sw_idx[i] = -1;
		if (is_switch(f, (int32_t)i))
			c->sw_idx[i] = (int32_t)S++;
	}
	c->S = S;
	size_t n = S ? S : 1;
	c->sw_node = malloc(n * sizeof(*c->sw_node));
	c->adj_off = calloc(n + 1, sizeof(*c->adj_off));
	c->dist = malloc(n * sizeof(*c->dist));
	c->aux = malloc(n * sizeof(*c->aux));
	c->cnt = malloc(n * sizeof(*c->cnt));
	c->queue = malloc(n * sizeof(*c->queue));
	c->mstamp = calloc(n, sizeof(*c->mstamp));
	c->tstamp = calloc(n, sizeof(*c->tstamp));
	c->mem = malloc(n * sizeof(*c->mem));
	c->tree = malloc(n * sizeof(*c->tree));
	c->mask = malloc(n * sizeof(*c->mask));
	if (!c->sw_node || !c->adj_off || !c->dist || !c->aux || !c->cnt ||
	    !c->queue || !c->mstamp || !c->tstamp || !c->mem || !c->tree ||
	    !c->mask)
		goto nomem;
	for (size_t i = 0; i < f->n_nodes; i++)
		if (c->sw_idx[i] >= 0)
			c->sw_node[c->sw_idx[i]] = (int32_t)i;

	for (size_t k = 0; k < S; k++) {
		const struct fab_node *nd = fabric_node(f, c->sw_node[k]);

		for (unsigned pn = 1; pn <= nd->num_ports; pn++)
			if (switch_peer(f, c->sw_node[k], pn) != FAB_NONE)
				E++;
		c->adj_off[k + 1] = (uint32_t)E;
	}
	c->adj = malloc((E ? E : 1) * sizeof(*c->adj));
	load = port_loads(c, r, &base);
	if (!c->adj || !load)
		goto nomem;
	for (size_t k = 0, e = 0; k < S; k++) {
		int32_t id = c->sw_node[k];
		const struct fab_node *nd = fabric_node(f, id);

		for (unsigned pn = 1; pn <= nd->num_ports; pn++) {
			int32_t peer = switch_peer(f, id, pn);

			if (peer == FAB_NONE)
				continue;
			struct mc_edge *ed = &c->adj[e++];
			uint8_t pp = nd->ports[pn].peer_port;
			uint32_t to = (uint32_t)c->sw_idx[peer];

			ed->to = to;
			ed->port = (uint8_t)pn;
			ed->peer_port = pp;
			ed->load = load[base[k] + pn];
			if (pp <= fabric_node(f, peer)->num_ports)
				ed->load += load[base[to] + pp];
		}
	}
	free(load);
	free(base);
	*out = c;
	return 0;
nomem:
	free(load);
	free(base);
	mcast_ctx_free(c);
	return -ENOMEM;
}

void mcast_tree_free(struct mcast_tree *t)
{
	free(t->sw);
	memset(t, 0, sizeof(*t));
	t->root = FAB_NONE;
}

const struct mcast_sw *mcast_tree_find(const struct mcast_tree *t,
				       int32_t node)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->sw[mid].node == node)
			return &t->sw[mid];
		if (t->sw[mid].node < node)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Hop counts from switch `src` into d[] (UNREACHED elsewhere). */
static void bfs(struct mcast_ctx *c, uint32_t src, uint32_t *d)
{
	size_t head = 0, tail = 0, row = c->S * sizeof(*d);

	if (c->rows && c->rows[src]) {
		memcpy(d, c->rows[src], row);
		return;
	}
	for (size_t k = 0; k < c->S; k++)
		d[k] = UNREACHED;
	d[src] = 0;
	c->queue[tail++] = src;
	while (head < tail) {
		uint32_t v = c->queue[head++];

		for (uint32_t e = c->adj_off[v]; e < c->adj_off[v + 1]; e++) {
			uint32_t w = c->adj[e].to;

			if (d[w] == UNREACHED) {
				d[w] = d[v] + 1;
				c->queue[tail++] = w;
			}
		}
	}
	/* Keep it if there is room (no room, no memory: not kept). */
	if (c->rows_bytes + row > MCAST_BFS_CACHE)
		return;
	if (!c->rows && !(c->rows = calloc(c->S, sizeof(*c->rows))))
		return;
	if ((c->rows[src] = malloc(row))) {
		memcpy(c->rows[src], d, row);
		c->rows_bytes += row;
	}
}

static uint32_t mix(uint32_t a, uint32_t b)
{
	uint32_t h = a * 0x9e3779b1u ^ b * 0x85ebca6bu;

	h ^= h >> 15;
	h *= 0xc2b2ae35u;
	h ^= h >> 13;
	return h;
}

/* Eccentricity of the BFS in d[] over the K member switches, and how
 * many of them it reaches. */
static uint32_t member_ecc(const struct mcast_ctx *c, const uint32_t *d,
			   size_t K, size_t *reached)
{
	uint32_t ecc = 0;

	*reached = 0;
	for (size_t i = 0; i < K; i++) {
		uint32_t x = d[c->mem[i]];

		if (x == UNREACHED)
			continue;
		(*reached)++;
		if (x > ecc)
			ecc = x;
	}
	return ecc;
}

/* Exact root: a BFS from every member switch. */
static uint32_t root_exact(struct mcast_ctx *c, size_t K, uint32_t seed)
{
	uint32_t *ecc = c->aux, *cnt = c->cnt;
	size_t best_cnt = 0, ties = 0;
	uint32_t best_ecc = UNREACHED, root = c->mem[0];

	for (size_t k = 0; k < c->S; k++)
		ecc[k] = cnt[k] = 0;
	for (size_t i = 0; i < K; i++) {
		bfs(c, c->mem[i], c->dist);
		for (size_t k = 0; k < c->S; k++) {
			if (c->dist[k] == UNREACHED)
				continue;
			cnt[k]++;
			if (c->dist[k] > ecc[k])
				ecc[k] = c->dist[k];
		}
	}
	/* Most member switches reached first (a split fabric), then the
	 * least eccentricity; the seed picks among equals. */
	for (size_t k = 0; k < c->S; k++) {
		if (!cnt[k])
			continue;
		if (cnt[k] > best_cnt || (cnt[k] == best_cnt && ecc[k] < best_ecc)) {
			best_cnt = cnt[k];
			best_ecc = ecc[k];
			ties = 0;
		}
		if (cnt[k] == best_cnt && ecc[k] == best_ecc)
			ties++;
	}
	size_t pick = ties ? seed % ties : 0;
	for (size_t k = 0; k < c->S; k++) {
		if (cnt[k] == best_cnt && ecc[k] == best_ecc && !pick--) {
			root = (uint32_t)k;
			break;
		}
	}
	return root;
}

/* The member switch farthest in d[] (the first of equals), or `dflt`. */
static uint32_t farthest_member(const struct mcast_ctx *c, const uint32_t *d,
				size_t K, uint32_t dflt)
{
	uint32_t best = dflt, bd = 0;

	for (size_t i = 0; i < K; i++) {
		uint32_t x = d[c->mem[i]];

		if (x != UNREACHED && x > bd) {
			bd = x;
			best = c->mem[i];
		}
	}
	return best;
}

/* Root of many member switches: midway candidates (see the top). */
static uint32_t root_midway(struct mcast_ctx *c, size_t K, uint32_t seed)
{
	uint32_t *d1 = c->aux, *d2 = c->dist;
	size_t reach0, reached;

	bfs(c, c->mem[0], c->dist);
	member_ecc(c, c->dist, K, &reach0);
	uint32_t a = farthest_member(c, c->dist, K, c->mem[0]);
	bfs(c, a, d1);
	uint32_t b = farthest_member(c, d1, K, a);
	uint32_t D = d1[b], lb = (D + 1) / 2;
	bfs(c, b, d2);

	/* Midway switches: least max(d1, d2); listed in c->tree. */
	uint32_t key = UNREACHED;
	size_t nc = 0;
	for (size_t k = 0; k < c->S; k++) {
		if (d1[k] == UNREACHED || d2[k] == UNREACHED)
			continue;
		uint32_t x = d1[k] > d2[k] ? d1[k] : d2[k];
		if (x < key) {
			key = x;
			nc = 0;
		}
		if (x == key)
			c->tree[nc++] = (uint32_t)k;
	}
	if (!nc)
		return a;
	uint32_t best = c->tree[0], best_ecc = UNREACHED;
	size_t tries = nc < MCAST_CANDIDATES ? nc : MCAST_CANDIDATES;
	for (size_t t = 0; t < tries; t++) {
		uint32_t v = c->tree[(seed + t) % nc];

		bfs(c, v, c->dist);
		uint32_t e = member_ecc(c, c->dist, K, &reached);
		if (reached == reach0 && e < best_ecc) {
			best_ecc = e;
			best = v;
			if (e <= lb)
				break;		/* nothing can do better */
		}
	}
	return best;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Put switch k on the tree with an empty mask. */
static void tree_add(struct mcast_ctx *c, uint32_t k, size_t *T)
{
	c->tstamp[k] = c->stamp;
	memset(c->mask[k], 0, sizeof(c->mask[k]));
	c->tree[(*T)++] = k;
}

/* 1. The member switches, each once, into c->mem[]; returns their number. */
static size_t member_switches(struct mcast_ctx *c, const struct mcast_member *m,
			      size_t n)
{
	const struct fabric *f = c->f;
	size_t K = 0;

	for (size_t i = 0; i < n; i++) {
		int32_t id = m[i].node, sw = FAB_NONE;

		if (id >= 0 && (size_t)id < f->n_nodes) {
			if (is_switch(f, id))
				sw = m[i].port == 0 ? id : FAB_NONE;
			else if (m[i].port >= 1 &&
				 m[i].port <= fabric_node(f, id)->num_ports)
				sw = switch_peer(f, id, m[i].port);
		}
		if (sw == FAB_NONE)
			continue;
		uint32_t k = (uint32_t)c->sw_idx[sw];
		if (c->mstamp[k] != c->stamp) {
			c->mstamp[k] = c->stamp;
			c->mem[K++] = k;
		}
	}
	return K;
}

/*
 * The K member switches the BFS reached, nearest first (counting sort by
 * hop count), into a new array *order of *reached entries.
 */
static int members_by_distance(const struct mcast_ctx *c, size_t K,
			       uint32_t **order, size_t *reached)
{
	uint32_t maxd = 0;

	for (size_t i = 0; i < K; i++)
		if (c->dist[c->mem[i]] != UNREACHED && c->dist[c->mem[i]] > maxd)
			maxd = c->dist[c->mem[i]];
	uint32_t *bucket = calloc((size_t)maxd + 2, sizeof(*bucket));
	*order = malloc(K * sizeof(**order));
	if (!bucket || !*order) {
		free(bucket);
		free(*order);
		*order = NULL;
		return -ENOMEM;
	}
	*reached = 0;
	for (size_t i = 0; i < K; i++)
		if (c->dist[c->mem[i]] != UNREACHED) {
			bucket[c->dist[c->mem[i]] + 1]++;
			(*reached)++;
		}
	for (uint32_t d = 1; d <= maxd + 1; d++)
		bucket[d] += bucket[d - 1];
	for (size_t i = 0; i < K; i++)
		if (c->dist[c->mem[i]] != UNREACHED)
			(*order)[bucket[c->dist[c->mem[i]]]++] = c->mem[i];
	free(bucket);
	return 0;
}

/*
 * Graft switch v (not on the tree) onto it: walk BFS parents towards the
 * root, preferring a parent already on the tree, then the least loaded
 * link, then a hash of the seed, until the path meets the tree.
 */
static void graft(struct mcast_ctx *c, uint32_t root, uint32_t v,
		  uint32_t seed, size_t *T)
{
	tree_add(c, v, T);
	while (v != root) {
		const struct mc_edge *best = NULL;
		bool best_on = false;
		uint32_t best_h = 0;

		for (uint32_t e = c->adj_off[v]; e < c->adj_off[v + 1]; e++) {
			const struct mc_edge *ed = &c->adj[e];

			if (c->dist[ed->to] + 1 != c->dist[v])
				continue;
			bool on = c->tstamp[ed->to] == c->stamp;
			uint32_t h = mix(seed, ed->to * 256u + ed->port);
			if (!best || (on && !best_on) ||
			    (on == best_on && (ed->load < best->load ||
			     (ed->load == best->load && h < best_h)))) {
				best = ed;
				best_on = on;
				best_h = h;
			}
		}
		/* A BFS parent always exists for v != root. */
		mcast_mask_set(c->mask[v], best->port);
		uint32_t u = best->to;
		if (c->tstamp[u] != c->stamp) {
			tree_add(c, u, T);
			mcast_mask_set(c->mask[u], best->peer_port);
			v = u;
			continue;
		}
		mcast_mask_set(c->mask[u], best->peer_port);
		break;
	}
}

/* 4. Receiving members' ports on the tree; members out of reach counted. */
static void member_ports(struct mcast_ctx *c, const struct mcast_member *m,
			 size_t n, struct mcast_tree *out)
{
	const struct fabric *f = c->f;

	for (size_t i = 0; i < n; i++) {
		int32_t id = m[i].node, sw = FAB_NONE;
		unsigned port = 0;

		if (id >= 0 && (size_t)id < f->n_nodes) {
			if (is_switch(f, id))
				sw = m[i].port == 0 ? id : FAB_NONE;
			else if (m[i].port >= 1 &&
				 m[i].port <= fabric_node(f, id)->num_ports) {
				sw = switch_peer(f, id, m[i].port);
				if (sw != FAB_NONE)
					port = fabric_node(f, id)->ports[m[i].port].peer_port;
			}
		}
		if (sw == FAB_NONE || c->tstamp[c->sw_idx[sw]] != c->stamp) {
			out->unreached++;
			continue;
		}
		if (m[i].receives)
			mcast_mask_set(c->mask[c->sw_idx[sw]], port);
	}
}

int mcast_tree_build(struct mcast_ctx *c, const struct mcast_member *m,
		     size_t n, uint32_t seed, struct mcast_tree *out)
{
	size_t K, T = 0, reachedK;
	uint32_t *order;

	memset(out, 0, sizeof(*out));
	out->root = FAB_NONE;
	if (!c->S) {
		out->unreached = (unsigned)n;
		return 0;
	}
	if (++c->stamp == 0) {		/* wrapped: clear the marks */
		memset(c->mstamp, 0, c->S * sizeof(*c->mstamp));
		memset(c->tstamp, 0, c->S * sizeof(*c->tstamp));
		c->stamp = 1;
	}

	K = member_switches(c, m, n);
	if (!K) {
		out->unreached = (unsigned)n;
		return 0;
	}

	/* 2. root, 3. BFS from it, then the members grafted nearest first */
	uint32_t root = K == 1 ? c->mem[0]
		      : K <= MCAST_EXACT_SWITCHES ? root_exact(c, K, seed)
		      : root_midway(c, K, seed);
	bfs(c, root, c->dist);
	if (members_by_distance(c, K, &order, &reachedK) < 0)
		return -ENOMEM;
	tree_add(c, root, &T);
	for (size_t i = 0; i < reachedK; i++)
		if (c->tstamp[order[i]] != c->stamp)
			graft(c, root, order[i], seed, &T);
	free(order);

	member_ports(c, m, n, out);

	qsort(c->tree, T, sizeof(*c->tree), cmp_u32);
	out->sw = malloc(T * sizeof(*out->sw));
	if (!out->sw)
		return -ENOMEM;
	for (size_t i = 0; i < T; i++) {
		uint32_t k = c->tree[i];

		out->sw[i].node = c->sw_node[k];
		memcpy(out->sw[i].mask, c->mask[k], sizeof(out->sw[i].mask));
		if (c->dist[k] > out->depth)
			out->depth = c->dist[k];
	}
	out->n = T;
	out->root = c->sw_node[root];
	return 0;
}
