/*
 * minhop.c - min-hop routing with per-port load balancing, the routing
 * OpenSM does by default.
 *
 * Every switch forwards every LID on a shortest path to the switch the LID
 * is attached to (a CA or router port is one hop beyond its switch).
 * Among the egress ports on shortest paths the switch picks the one that
 * carries the fewest CA/router LIDs so far, the lowest port number on a
 * tie (or the port port_search_ordering_file ranks first on that
 * switch); LIDs are taken in ascending order (the LIDs of the ports of
 * guid_routing_order_file first, in its order), so the hosts behind one
 * leaf spread round-robin over its uplinks.  Switch LIDs follow the same
 * rule but are not counted, as in OpenSM, unless port_profile_switch_nodes
 * says so (then after all other LIDs, see route_switch()); routes leaving by a port that port_prof_ignore_file names are
 * not counted either.  With hop_weights_file a path's length is the sum
 * of the weights of the ports it leaves switches by (1 where the file
 * sets none), and "shortest" means least summed weight (see
 * build_wdist()).  The further LIDs of a port with LMC > 0 prefer the next-hop
 * switch, then the egress port, that the port's earlier LIDs use least,
 * then the load, so they take different paths wherever the fabric has
 * them.  Every hop gets strictly closer to the destination switch, so
 * the tables are loop-free by construction.  Links count when both ends'
 * PortInfo says INIT or better.
 *
 * How it stays fast (768 switches and 4,608 hosts: 30 ms; 3,920 switches
 * and 43,904 hosts: about a second, most of it writing 180 MB of tables):
 *
 * 1. Hop counts between all switch pairs come from a bit-parallel BFS:
 *    reach[x] is the set of switches within d hops of x, and one level is
 *    reach'[x] = reach[x] | OR of reach[n] over x's neighbours, a word at
 *    a time.  We keep only the hop count mod 3, as two bit planes.
 *
 * 2. For one switch x, neighbour n is on a shortest path to t when
 *    dist(n, t) = dist(x, t) - 1.  A neighbour is never more than one hop
 *    nearer or farther than x, so the hop counts mod 3 decide it: a few
 *    word operations per neighbour give the set of targets it leads to,
 *    and a 64 x 64 bit transpose turns those sets into one neighbour mask
 *    per target switch.  Targets with the same mask share one "class":
 *    its list of egress ports, in search order.  A leaf has few classes
 *    (itself, "all uplinks", one per spine), a spine a few dozen.
 *
 * 3. Picking the least-loaded port of a class must not cost a scan of the
 *    class per LID.  Counts only grow, so each class keeps a lower bound
 *    m of its minimum count and a cursor: ports before the cursor carry
 *    more than m.  A pick returns the first port at or after the cursor
 *    whose count is m (that is the first least-loaded port of the list);
 *    when none is left, one pass finds the new minimum and its first
 *    port.  This gives exactly the choice of a full scan, in amortised
 *    O(1) when a class's LIDs come in runs, as sequential LIDs do.
 *
 * Memory beyond the tables: three S x S bit matrices (reach and the two
 * planes), O(S) scratch per switch, and one descriptor per LID; with
 * hop weights an S x S matrix of weighted distances instead of the bits.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/order.h"

#define LID_FREE	(-2)		/* dest.sw: LID owned by nobody */

/* What the LFTs must do for one LID. */
struct dest {
	int32_t  sw;		/* switch index it hangs off, -1 unreachable */
	uint8_t  port;		/* egress port at that switch (0: the switch) */
	uint8_t  off;		/* LID - base LID */
	uint8_t  lmc;
	uint8_t  counted;	/* counts for the balance: a CA/router LID (and
				 * a switch's with port_profile_switch_nodes) */
	uint8_t  sw_lid;	/* a switch's LID */
};

/* Egress ports of one switch towards a set of equally good targets. */
struct eclass {
	uint32_t off, n;	/* ports[off .. off + n) */
	uint32_t m;		/* lower bound of the least count among them */
	uint32_t idx;		/* cursor: ports before it carry more than m */
};

struct minhop {
	const struct fabric *f;
	const struct routing_opts *o;
	struct routing_result *out;
	uint16_t top;
	uint16_t *lid_order;	/* guid_routing_order_file: top LIDs, or NULL */

	size_t   S;		/* switches */
	int32_t *sw_node;	/* switch index -> node id */
	int32_t *sw_idx;	/* node id -> switch index, -1 */
	uint32_t *nbr_off;	/* neighbours of switch x: nbr[nbr_off[x] ..] */
	int32_t *nbr;		/* distinct neighbour switches, up links only */
	uint32_t *port_off;	/* port_nbr[port_off[x] + p]: p's neighbour */
	int16_t *port_nbr;	/* index into x's neighbour list, -1 */
	size_t   W;		/* 64-bit words per set of switches */
	uint64_t *reach;	/* reach[x * W ..]: switches x can reach */
	uint64_t *lo, *hi;	/* hop count mod 3 is 1 (lo) or 2 (hi) */
	struct dest *dest;	/* top + 1 */

	/* scratch for one switch at a time */
	size_t   nw;		/* 64-bit words per neighbour mask */
	uint64_t *cand;		/* per neighbour: targets it is closer to */
	uint64_t *tmp;		/* 3 * W */
	uint64_t *mask;		/* S * nw */
	int32_t *cls_of;	/* S: class of each target switch, -1 */
	struct eclass *cls;
	uint64_t *cls_mask;	/* per class, nw words */
	size_t   n_cls;
	int32_t *hash;		/* mask -> class */
	size_t   hash_size;
	uint8_t *ports;		/* class port lists */
	size_t   n_ports, cap_ports;
	uint32_t cnt[256];	/* CA/router LIDs routed through each port */
	/* LMC: uses of each egress port and next hop by the LIDs of the
	 * port being routed; valid where the stamp is the current one */
	uint32_t stamp;
	uint32_t port_stamp[256];
	uint8_t  port_use[256];
	uint32_t *nbr_stamp;
	uint8_t  *nbr_use;
	uint32_t np_off[257];	/* this switch's ports by neighbour ... */
	uint8_t  np[256];	/* ... np[np_off[j] .. np_off[j + 1]) */

	/* hop_weights_file: class masks are port masks (nw = 4) and
	 * wdist[t * S + x] the least summed weight from x to t */
	bool     weighted;
	uint32_t *wdist;
};

static void minhop_free(struct minhop *m)
{
	free(m->sw_node);
	free(m->sw_idx);
	free(m->nbr_off);
	free(m->nbr);
	free(m->port_off);
	free(m->port_nbr);
	free(m->reach);
	free(m->lo);
	free(m->hi);
	free(m->cand);
	free(m->tmp);
	free(m->dest);
	free(m->mask);
	free(m->cls_of);
	free(m->cls);
	free(m->cls_mask);
	free(m->hash);
	free(m->ports);
	free(m->nbr_stamp);
	free(m->nbr_use);
	free(m->lid_order);
	free(m->wdist);
}

/* Switches, their distinct neighbour switches and a port -> neighbour map. */
static int build_graph(struct minhop *m)
{
	const struct fabric *f = m->f;
	size_t n_nbr = 0, n_port = 0, S = 0;
	int32_t *last;

	m->sw_idx = malloc((f->n_nodes ? f->n_nodes : 1) * sizeof(*m->sw_idx));
	if (!m->sw_idx)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		m->sw_idx[i] = -1;
		if (n->type != NODE_TYPE_SWITCH)
			continue;
		m->sw_idx[i] = (int32_t)S++;
		n_port += (size_t)n->num_ports + 1;
		n_nbr += n->num_ports;
	}
	m->S = S;
	m->W = (S + 63) / 64;
	m->sw_node = malloc((S ? S : 1) * sizeof(*m->sw_node));
	m->nbr_off = malloc((S + 1) * sizeof(*m->nbr_off));
	m->nbr = malloc((n_nbr ? n_nbr : 1) * sizeof(*m->nbr));
	m->port_off = malloc((S + 1) * sizeof(*m->port_off));
	m->port_nbr = malloc((n_port ? n_port : 1) * sizeof(*m->port_nbr));
	last = malloc((S ? S : 1) * sizeof(*last));	/* neighbour dedup */
	if (!m->sw_node || !m->nbr_off || !m->nbr || !m->port_off ||
	    !m->port_nbr || !last) {
		free(last);
		return -ENOMEM;
	}
	for (size_t i = 0; i < f->n_nodes; i++)
		if (m->sw_idx[i] >= 0)
			m->sw_node[m->sw_idx[i]] = (int32_t)i;
	for (size_t y = 0; y < S; y++)
		last[y] = -1;

	/* last[y] = position of y in the current switch's list, if listed */
	n_nbr = n_port = 0;
	for (size_t x = 0; x < S; x++) {
		const struct fab_node *n = fabric_node(f, m->sw_node[x]);
		uint32_t first = (uint32_t)n_nbr;

		m->nbr_off[x] = first;
		m->port_off[x] = (uint32_t)n_port;
		m->port_nbr[n_port] = -1;		/* port 0 */
		for (unsigned p = 1; p <= n->num_ports; p++) {
			const struct fab_port *pt = &n->ports[p];
			int32_t y;

			m->port_nbr[n_port + p] = -1;
			if (!routing_port_up(f, pt))
				continue;
			y = m->sw_idx[pt->peer_node];
			if (y < 0 || (size_t)y == x)
				continue;
			/* `last` is stale from earlier switches unless it
			 * points into this switch's part of the list */
			if (last[y] < (int32_t)first || last[y] >= (int32_t)n_nbr ||
			    m->nbr[last[y]] != y) {
				last[y] = (int32_t)n_nbr;
				m->nbr[n_nbr++] = y;
			}
			m->port_nbr[n_port + p] = (int16_t)(last[y] - (int32_t)first);
		}
		n_port += (size_t)n->num_ports + 1;
	}
	m->nbr_off[S] = (uint32_t)n_nbr;
	m->port_off[S] = (uint32_t)n_port;
	free(last);
	return 0;
}

/*
 * All-pairs switch hop counts by bit-parallel BFS (see the top comment),
 * kept as hop count mod 3 in two bit planes plus the set each switch
 * reaches: enough to tell a neighbour one hop closer (below).
 */
static int build_dist(struct minhop *m)
{
	size_t S = m->S, W = m->W;
	uint64_t *cur, *nxt;
	bool changed = true;

	cur = calloc(S * W + 1, sizeof(*cur));
	nxt = malloc((S * W + 1) * sizeof(*nxt));
	m->lo = calloc(S * W + 1, sizeof(*m->lo));
	m->hi = calloc(S * W + 1, sizeof(*m->hi));
	if (!cur || !nxt || !m->lo || !m->hi) {
		free(cur);
		free(nxt);
		return -ENOMEM;
	}
	for (size_t x = 0; x < S; x++)
		cur[x * W + x / 64] |= 1ull << (x % 64);
	for (unsigned level = 1; changed; level++) {
		uint64_t *plane = level % 3 == 1 ? m->lo : level % 3 == 2 ? m->hi : NULL;

		changed = false;
		for (size_t x = 0; x < S; x++) {
			uint64_t *row = nxt + x * W;
			const uint64_t *old = cur + x * W;

			memcpy(row, old, W * sizeof(*row));
			for (uint32_t j = m->nbr_off[x]; j < m->nbr_off[x + 1]; j++) {
				const uint64_t *nr = cur + (size_t)m->nbr[j] * W;

				for (size_t w = 0; w < W; w++)
					row[w] |= nr[w];
			}
			for (size_t w = 0; w < W; w++) {
				uint64_t diff = row[w] & ~old[w];

				changed |= diff != 0;
				if (plane)
					plane[x * W + w] |= diff;
			}
		}
		uint64_t *tmp = cur;
		cur = nxt;
		nxt = tmp;
	}
	m->reach = cur;
	free(nxt);
	return 0;
}

/* Transpose a 64 x 64 bit matrix: bit c of a[r] <-> bit r of a[c]. */
static void transpose64(uint64_t a[64])
{
	uint64_t mask = 0x00000000ffffffffull;

	for (unsigned j = 32; j; j >>= 1, mask ^= mask << j)
		for (unsigned k = 0; k < 64; k = ((k | j) + 1) & ~j) {
			uint64_t t = ((a[k] >> j) ^ a[k | j]) & mask;

			a[k | j] ^= t;
			a[k] ^= t << j;
		}
}

static int set_dest(struct minhop *m, uint16_t lid, const struct dest *d,
		    const struct fab_node *n, unsigned port, char *err,
		    size_t errlen)
{
	if (lid > m->top) {
		snprintf(err, errlen, "LID %u of node 0x%016" PRIx64 " port %u "
			 "is above max_lid %u", lid, n->guid, port, m->top);
		return -EINVAL;
	}
	if (m->dest[lid].sw != LID_FREE) {
		snprintf(err, errlen, "LID %u of node 0x%016" PRIx64 " port %u "
			 "is assigned twice", lid, n->guid, port);
		return -EINVAL;
	}
	m->dest[lid] = *d;
	return 0;
}

/* One descriptor per LID: which switch it hangs off and through which port. */
static int build_dests(struct minhop *m, char *err, size_t errlen)
{
	const struct fabric *f = m->f;

	m->dest = malloc(((size_t)m->top + 1) * sizeof(*m->dest));
	if (!m->dest)
		return -ENOMEM;
	for (size_t l = 0; l <= m->top; l++)
		m->dest[l].sw = LID_FREE;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		bool sw = n->type == NODE_TYPE_SWITCH;

		for (unsigned p = sw ? 0 : 1; p <= (sw ? 0u : n->num_ports); p++) {
			const struct fab_port *pt = &n->ports[p];
			struct dest d = { .sw = -1, .lmc = pt->lmc };

			if (!pt->lid)
				continue;
			if (pt->lmc > 7) {
				snprintf(err, errlen, "LMC %u of node 0x%016" PRIx64
					 " port %u is above 7", pt->lmc, n->guid, p);
				return -EINVAL;
			}
			if (sw) {
				d.sw = m->sw_idx[i];
				d.counted = m->o && m->o->profile_switch_nodes;
				d.sw_lid = 1;
			} else if (routing_port_up(f, pt) &&
				   m->sw_idx[pt->peer_node] >= 0) {
				d.sw = m->sw_idx[pt->peer_node];
				d.port = pt->peer_port;
				d.counted = 1;
			}
			for (unsigned k = 0; k < 1u << pt->lmc; k++) {
				int rc;

				d.off = (uint8_t)k;
				rc = set_dest(m, (uint16_t)(pt->lid + k), &d, n, p,
					      err, errlen);
				if (rc < 0)
					return rc;
			}
		}
	}
	return 0;
}

static int alloc_scratch(struct minhop *m)
{
	size_t S = m->S, maxk = 0;

	for (size_t x = 0; x < S; x++)
		if (m->nbr_off[x + 1] - m->nbr_off[x] > maxk)
			maxk = m->nbr_off[x + 1] - m->nbr_off[x];
	m->nw = (maxk + 63) / 64;
	if (!m->nw)
		m->nw = 1;
	if (m->weighted)
		m->nw = 4;	/* ports 0 .. 255 */
	m->hash_size = 64;
	while (m->hash_size < 2 * S)
		m->hash_size *= 2;
	m->cap_ports = 4096;
	m->mask = malloc((m->W * 64 + 1) * m->nw * sizeof(*m->mask));
	m->cand = malloc((maxk * m->W + 1) * sizeof(*m->cand));
	m->tmp = malloc((3 * m->W + 1) * sizeof(*m->tmp));
	m->cls_of = malloc((S ? S : 1) * sizeof(*m->cls_of));
	m->cls = malloc((S ? S : 1) * sizeof(*m->cls));
	m->cls_mask = malloc((S ? S : 1) * m->nw * sizeof(*m->cls_mask));
	m->hash = malloc(m->hash_size * sizeof(*m->hash));
	m->ports = malloc(m->cap_ports);
	m->nbr_stamp = calloc(maxk + 1, sizeof(*m->nbr_stamp));
	m->nbr_use = calloc(maxk + 1, sizeof(*m->nbr_use));
	if (!m->mask || !m->cls_of || !m->cls || !m->cls_mask || !m->hash ||
	    !m->ports || !m->nbr_stamp || !m->nbr_use || !m->cand || !m->tmp)
		return -ENOMEM;
	return 0;
}

static size_t mask_hash(const uint64_t *w, size_t nw)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < nw; i++) {
		h ^= w[i];
		h *= 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	return (size_t)h;
}

/* Port p into class c's list: insertion sort (lists are short) into port
 * order, or port_search_ordering_file's. */
static void class_add(struct minhop *m, const struct eclass *c,
		      const uint8_t *rank, uint8_t p)
{
	size_t at = m->n_ports++;

	while (at > c->off && (rank ? rank[m->ports[at - 1]] > rank[p]
				    : m->ports[at - 1] > p)) {
		m->ports[at] = m->ports[at - 1];
		at--;
	}
	m->ports[at] = p;
}

/* The class of targets whose shortest-path neighbour mask (port mask when
 * weighted) is `w`. */
static int class_for(struct minhop *m, size_t x, const uint64_t *w)
{
	size_t nw = m->nw, mask = m->hash_size - 1;
	size_t i = mask_hash(w, nw) & mask;
	const struct fab_node *n = fabric_node(m->f, m->sw_node[x]);
	const uint8_t *rank = routing_port_rank(m->o, m->sw_node[x]);
	struct eclass *c;

	for (; m->hash[i] >= 0; i = (i + 1) & mask)
		if (!memcmp(m->cls_mask + (size_t)m->hash[i] * nw, w,
			    nw * sizeof(*w)))
			return m->hash[i];

	if (m->n_ports + n->num_ports > m->cap_ports) {
		size_t cap = m->cap_ports * 2 + n->num_ports;
		uint8_t *np = realloc(m->ports, cap);

		if (!np)
			return -ENOMEM;
		m->ports = np;
		m->cap_ports = cap;
	}
	c = &m->cls[m->n_cls];
	c->off = (uint32_t)m->n_ports;
	c->m = 0;
	c->idx = 0;
	/* bit j: neighbour j (its ports), or port j when weighted */
	for (size_t wi = 0; wi < nw; wi++)
		for (uint64_t bits = w[wi]; bits; bits &= bits - 1) {
			size_t j = wi * 64 + (size_t)__builtin_ctzll(bits);

			if (m->weighted) {
				class_add(m, c, rank, (uint8_t)j);
				continue;
			}
			for (uint32_t q = m->np_off[j]; q < m->np_off[j + 1]; q++)
				class_add(m, c, rank, m->np[q]);
		}
	c->n = (uint32_t)m->n_ports - c->off;
	memcpy(m->cls_mask + m->n_cls * nw, w, nw * sizeof(*w));
	m->hash[i] = (int32_t)m->n_cls;
	return (int32_t)m->n_cls++;
}

/*
 * Group the targets of switch x into classes of equal egress-port sets.
 *
 * Neighbour n is one hop closer to t than x when dist(n, t) = dist(x, t)
 * - 1.  Neighbours differ from x by at most one hop, so comparing hop
 * counts mod 3 decides it, 64 targets per word: one bitset per neighbour
 * ("closer to t"), then a bit-matrix transpose turns those into one
 * neighbour mask per target.
 */
static int build_classes(struct minhop *m, size_t x)
{
	size_t S = m->S, W = m->W, nw = m->nw;
	uint32_t first = m->nbr_off[x], k = m->nbr_off[x + 1] - first;
	const uint64_t *xr = m->reach + x * W, *xl = m->lo + x * W,
		       *xh = m->hi + x * W;
	uint64_t *want_lo = m->tmp, *want_hi = m->tmp + W, *tgt = m->tmp + 2 * W;

	/* ports of x per neighbour: np[np_off[j] .. np_off[j + 1]) */
	const struct fab_node *n = fabric_node(m->f, m->sw_node[x]);
	const int16_t *pn = m->port_nbr + m->port_off[x];

	memset(m->np_off, 0, (k + 2) * sizeof(*m->np_off));
	for (unsigned p = 1; p <= n->num_ports; p++)
		if (pn[p] >= 0)
			m->np_off[pn[p] + 2]++;
	for (uint32_t j = 0; j < k; j++)
		m->np_off[j + 2] += m->np_off[j + 1];
	for (unsigned p = 1; p <= n->num_ports; p++)
		if (pn[p] >= 0)
			m->np[m->np_off[pn[p] + 1]++] = (uint8_t)p;

	/* targets: reachable, not x; wanted neighbour hops: dist - 1 mod 3,
	 * i.e. 0 -> 2 (hi), 1 -> 0, 2 -> 1 (lo) */
	for (size_t w = 0; w < W; w++) {
		tgt[w] = xr[w];
		want_lo[w] = xh[w];
		want_hi[w] = xr[w] & ~xl[w] & ~xh[w];
	}
	tgt[x / 64] &= ~(1ull << (x % 64));
	for (uint32_t j = 0; j < k; j++) {
		size_t y = (size_t)m->nbr[first + j];
		const uint64_t *yl = m->lo + y * W, *yh = m->hi + y * W;
		uint64_t *c = m->cand + (size_t)j * W;

		for (size_t w = 0; w < W; w++)
			c[w] = tgt[w] & ~(yl[w] ^ want_lo[w]) & ~(yh[w] ^ want_hi[w]);
	}
	/* mask[t] word rb = transpose of rows j = 64 rb .. 64 rb + 63 */
	for (size_t b = 0; b < W; b++) {
		for (size_t rb = 0; rb < nw; rb++) {
			uint64_t blk[64];
			size_t rows = k > rb * 64 ? k - rb * 64 : 0;

			if (rows > 64)
				rows = 64;
			for (size_t i = 0; i < 64; i++)
				blk[i] = i < rows ? m->cand[(rb * 64 + i) * W + b] : 0;
			transpose64(blk);
			for (size_t u = 0; u < 64 && b * 64 + u < S; u++)
				m->mask[(b * 64 + u) * nw + rb] = blk[u];
		}
	}

	for (size_t i = 0; i < m->hash_size; i++)
		m->hash[i] = -1;
	m->n_cls = 0;
	m->n_ports = 0;
	for (size_t t = 0; t < S; t++) {
		int32_t c = -1;

		if (tgt[t / 64] >> (t % 64) & 1) {
			c = class_for(m, x, m->mask + t * nw);
			if (c < 0)
				return c;
		}
		m->cls_of[t] = c;
	}
	return 0;
}

/* ------------------------------------------------------- hop weights */

/* The weight of port p of switch x (hop_weights_file; 1 by default). */
static uint32_t port_wf(const struct minhop *m, size_t x, unsigned p)
{
	const uint8_t *wf = routing_node_vals(m->o->hop_wf, m->o->n_hop_wf,
					      m->sw_node[x]);

	return wf && wf[p] ? wf[p] : 1;
}

struct wheap {
	uint64_t *v;		/* distance << 32 | switch */
	size_t n;
};

static void wheap_push(struct wheap *h, uint64_t v)
{
	size_t i = h->n++;

	for (; i && h->v[(i - 1) / 2] > v; i = (i - 1) / 2)
		h->v[i] = h->v[(i - 1) / 2];
	h->v[i] = v;
}

static uint64_t wheap_pop(struct wheap *h)
{
	uint64_t top = h->v[0], last = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1] < h->v[c])
			c++;
		if (h->v[c] >= last)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

/*
 * Weighted distances between all switches: d(x, t) = least, over the
 * ports p of x to a switch y, of weight(x, p) + d(y, t), as OpenSM's
 * min-hop tables add a port's weight to the hops its neighbour reports.
 * One Dijkstra per target t over the reversed links (an array rin of
 * (x, least weight from x to y) per y).  Positive weights make every
 * hop of a path strictly nearer its target: the tables stay loop-free.
 */
static int build_wdist(struct minhop *m)
{
	size_t S = m->S, n_in = 0;
	uint32_t *in_off = calloc(S + 2, sizeof(*in_off));
	uint64_t *rin = NULL;	/* weight << 32 | x, per y */
	struct wheap h = { 0 };
	int rc = -ENOMEM;

	m->wdist = malloc((S * S + 1) * sizeof(*m->wdist));
	if (!in_off || !m->wdist)
		goto out_off;
	for (size_t x = 0; x < S; x++)
		for (uint32_t j = m->nbr_off[x]; j < m->nbr_off[x + 1]; j++)
			in_off[m->nbr[j] + 2]++;
	for (size_t y = 0; y < S; y++)
		in_off[y + 2] += in_off[y + 1];
	n_in = in_off[S + 1];
	rin = malloc((n_in + 1) * sizeof(*rin));
	h.v = malloc((n_in + S + 1) * sizeof(*h.v));
	if (!rin || !h.v)
		goto out;
	for (size_t x = 0; x < S; x++) {
		const struct fab_node *n = fabric_node(m->f, m->sw_node[x]);
		const int16_t *pn = m->port_nbr + m->port_off[x];
		uint32_t first = m->nbr_off[x], k = m->nbr_off[x + 1] - first;
		uint32_t least[256];

		for (uint32_t j = 0; j < k; j++)
			least[j] = UINT32_MAX;
		for (unsigned p = 1; p <= n->num_ports; p++)
			if (pn[p] >= 0 && port_wf(m, x, p) < least[pn[p]])
				least[pn[p]] = port_wf(m, x, p);
		for (uint32_t j = 0; j < k; j++)
			rin[in_off[m->nbr[first + j] + 1]++] =
				(uint64_t)least[j] << 32 | x;
	}
	for (size_t t = 0; t < S; t++) {
		uint32_t *d = m->wdist + t * S;

		for (size_t x = 0; x < S; x++)
			d[x] = UINT32_MAX;
		d[t] = 0;
		h.n = 0;
		wheap_push(&h, t);
		while (h.n) {
			uint64_t e = wheap_pop(&h);
			uint32_t y = (uint32_t)e, dy = (uint32_t)(e >> 32);

			if (dy != d[y])
				continue;
			for (uint32_t i = in_off[y]; i < in_off[y + 1]; i++) {
				uint32_t x = (uint32_t)rin[i];
				uint32_t dx = dy + (uint32_t)(rin[i] >> 32);

				if (dx < d[x]) {
					d[x] = dx;
					wheap_push(&h, (uint64_t)dx << 32 | x);
				}
			}
		}
	}
	rc = 0;
out:
	free(rin);
	free(h.v);
out_off:
	free(in_off);
	return rc;
}

/*
 * The classes of switch x's targets when weighted: target t's mask has
 * bit p for each port p to a switch y with weight(x, p) + d(y, t) =
 * d(x, t), the ports on a path of least weight.
 */
static int build_classes_wf(struct minhop *m, size_t x)
{
	size_t S = m->S;
	const struct fab_node *n = fabric_node(m->f, m->sw_node[x]);
	const int16_t *pn = m->port_nbr + m->port_off[x];
	const int32_t *nb = m->nbr + m->nbr_off[x];

	for (size_t i = 0; i < m->hash_size; i++)
		m->hash[i] = -1;
	m->n_cls = 0;
	m->n_ports = 0;
	for (size_t t = 0; t < S; t++) {
		const uint32_t *d = m->wdist + t * S;
		uint64_t pm[4] = { 0 };
		int32_t c = -1;

		if (t != x && d[x] != UINT32_MAX) {
			for (unsigned p = 1; p <= n->num_ports; p++) {
				uint32_t dy;

				if (pn[p] < 0)
					continue;
				dy = d[nb[pn[p]]];
				if (dy != UINT32_MAX && dy + port_wf(m, x, p) == d[x])
					pm[p / 64] |= 1ull << (p % 64);
			}
			c = class_for(m, x, pm);
			if (c < 0)
				return c;
		}
		m->cls_of[t] = c;
	}
	return 0;
}

/* The first least-loaded port of class c's list (see the top comment). */
static uint8_t class_pick(struct minhop *m, struct eclass *c)
{
	const uint8_t *ports = m->ports + c->off;
	uint32_t least = UINT32_MAX, at = 0;

	if (c->n == 1)
		return ports[0];
	for (; c->idx < c->n; c->idx++)
		if (m->cnt[ports[c->idx]] == c->m)
			return ports[c->idx];
	/* none left at m: the new minimum and the first port carrying it */
	for (uint32_t i = 0; i < c->n; i++)
		if (m->cnt[ports[i]] < least) {
			least = m->cnt[ports[i]];
			at = i;
		}
	c->m = least;
	c->idx = at;
	return ports[at];
}

/*
 * Another LID of a port whose base LID this switch routed already: prefer
 * the next-hop switch, then the egress port, that the port's other LIDs
 * use least (unused first), then the load, then the first in the class
 * list (search order).
 */
static uint8_t class_pick_lmc(struct minhop *m, size_t x, const struct eclass *c)
{
	const uint8_t *ports = m->ports + c->off;
	const int16_t *pn = m->port_nbr + m->port_off[x];
	uint64_t best_key = UINT64_MAX;
	uint8_t best = ports[0];

	for (uint32_t i = 0; i < c->n; i++) {
		uint8_t p = ports[i];
		uint64_t nh = m->nbr_stamp[pn[p]] == m->stamp ? m->nbr_use[pn[p]] : 0;
		uint64_t pu = m->port_stamp[p] == m->stamp ? m->port_use[p] : 0;
		uint64_t key = nh << 48 | pu << 40 | m->cnt[p];

		if (key < best_key) {
			best_key = key;
			best = p;
		}
	}
	return best;
}

/* Count a use of port p (and its next hop) by the current port's LIDs. */
static void lmc_use(struct minhop *m, const int16_t *pn, uint8_t p)
{
	int16_t j = pn[p];

	if (m->port_stamp[p] != m->stamp) {
		m->port_stamp[p] = m->stamp;
		m->port_use[p] = 0;
	}
	m->port_use[p]++;
	if (m->nbr_stamp[j] != m->stamp) {
		m->nbr_stamp[j] = m->stamp;
		m->nbr_use[j] = 0;
	}
	m->nbr_use[j]++;
}

/* The LFT entry of one LID at switch x; counts it for the balance. */
static void route_lid(struct minhop *m, size_t x, size_t lid, uint8_t *lft,
		      const int16_t *pn, const uint8_t *ign)
{
	const struct dest *d = &m->dest[lid];
	int32_t ci;
	uint8_t p;

	if (d->sw < 0)
		return;
	if ((size_t)d->sw == x) {
		lft[lid] = d->port;
		return;
	}
	ci = m->cls_of[d->sw];
	if (ci < 0)
		return;
	if (d->lmc && d->off) {
		/* the least-loaded port, unless the port's LIDs use it
		 * or its next hop already: then the full preference */
		p = class_pick(m, &m->cls[ci]);
		if (m->port_stamp[p] == m->stamp ||
		    m->nbr_stamp[pn[p]] == m->stamp)
			p = class_pick_lmc(m, x, &m->cls[ci]);
	} else {
		p = class_pick(m, &m->cls[ci]);
		if (d->lmc)
			m->stamp++;
	}
	if (d->lmc)
		lmc_use(m, pn, p);
	m->cnt[p] += d->counted && !(ign && ign[p]);
	lft[lid] = p;
}

/*
 * Switch x's LFT.  With port_profile_switch_nodes the switch LIDs, which
 * then count, come after all others, as OpenSM routes switch ports after
 * the end ports: they spread over what the hosts left, and the hosts'
 * routes are those without the key.
 */
static void route_switch(struct minhop *m, size_t x)
{
	uint8_t *lft = m->out->lft[m->sw_node[x]].port;
	const int16_t *pn = m->port_nbr + m->port_off[x];
	const uint8_t *ign = m->o ? routing_node_vals(m->o->prof_ignore,
						      m->o->n_prof_ignore,
						      m->sw_node[x]) : NULL;
	bool later = m->o && m->o->profile_switch_nodes;

	memset(m->cnt, 0, sizeof(m->cnt));
	for (unsigned pass = 0; pass < (later ? 2u : 1u); pass++)
		for (size_t i = 1; i <= m->top; i++) {
			size_t lid = m->lid_order ? m->lid_order[i - 1] : i;

			if (!later || m->dest[lid].sw_lid == pass)
				route_lid(m, x, lid, lft, pn, ign);
		}
}

static int minhop_route(const struct fabric *f, const struct routing_opts *o,
			struct routing_result *out,
			char *err, size_t errlen)
{
	struct minhop m = { .f = f, .o = o, .out = out, .top = f->max_lid,
			    .weighted = o && o->hop_wf };
	size_t n_first;
	int rc;

	if (!f->max_lid) {
		snprintf(err, errlen, "no LIDs assigned");
		return -EINVAL;
	}
	rc = routing_lid_order(f, o, m.top, &m.lid_order, &n_first);
	if (rc == 0)
		rc = build_graph(&m);
	if (rc == 0)
		rc = build_dests(&m, err, errlen);
	if (rc == 0)
		rc = m.weighted ? build_wdist(&m) : build_dist(&m);
	if (rc == 0)
		rc = alloc_scratch(&m);
	if (rc == 0)
		rc = routing_alloc_tables(f, out, m.top);
	for (size_t x = 0; rc == 0 && x < m.S; x++) {
		rc = m.weighted ? build_classes_wf(&m, x) : build_classes(&m, x);
		if (rc == 0)
			route_switch(&m, x);
	}
	if (rc == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (rc < 0)
		routing_result_free(out);
	minhop_free(&m);
	return rc;
}

const struct routing_engine routing_minhop = {
	.name = "minhop",
	.route = minhop_route,
};
