/*
 * verify.c - walk forwarding tables (see verify.h).
 *
 * For one destination LID the tables make every switch point at one next
 * hop, so the switches form a functional graph: each switch either reaches
 * the LID, or runs into a dead end, a wrong port, or a cycle.  We settle
 * each switch once per LID by following next hops until a settled switch
 * (or a switch on the current walk: a loop), then give every switch on
 * the walk that outcome, counting hops back from its end.  A source port
 * shares the outcome of the switch it is plugged into.
 *
 * Reading LFT[x][lid] for every switch x and one LID touches one cache
 * line per switch, so we copy the tables 64 LIDs at a time into a
 * switch-major block first: on 4,000 switches x 48,000 LIDs that is the
 * difference between seconds and a fraction of one.
 *
 * The LIDs are independent, so on large fabrics both walks split them
 * over a few threads (contiguous ranges of whole blocks, each thread
 * with its own scratch; the calling thread takes the first range) and
 * merge what the threads found: sums, maxima, the first failure by LID,
 * the union of the dependencies.  The result is the same as one
 * thread's.  11,664 hosts on 2 cores: 0.2 s -> 0.1 s for each walk.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "routing/engines.h"
#include "routing/verify.h"

#define BLK	64

enum { ST_UNKNOWN, ST_ON_WALK, ST_GOOD, ST_NOPATH, ST_LOOP, ST_MISROUTED };

struct owner {
	int32_t node;		/* FAB_NONE: nobody has this LID */
	uint8_t port;
};

/* Where a switch port leads. */
struct exit {
	int32_t sw;		/* switch index, or -1 */
	int32_t node;		/* CA/router node id, or FAB_NONE (also: down) */
	uint8_t port;		/* its port */
};

struct verify {
	const struct fabric *f;
	const struct routing_result *r;
	size_t S;
	int32_t *sw_node;	/* switch index -> node id */
	int32_t *sw_idx;	/* node id -> switch index, -1 */
	uint32_t *exit_off;	/* exits of switch k: exit[exit_off[k] + p] */
	struct exit *exit;
	uint32_t *nsrc;		/* source ports per switch */
	uint32_t *cap;		/* LinearFDBCap per switch, 0: unknown */
	size_t min_cap;		/* smallest of them, SIZE_MAX: none */
	struct owner *own;	/* per LID */
	uint8_t *blk;		/* S x BLK table entries */
	uint8_t *state;
	uint16_t *hops;
	uint32_t *walk;
};

/*
 * Threads: none below VERIFY_PAR_MIN (switches x LIDs; 1,152 hosts are
 * 0.1 M), else one per online CPU up to VERIFY_MAX_THREADS.
 */
#define VERIFY_PAR_MIN		(1u << 21)
#define VERIFY_MAX_THREADS	4

static unsigned forced_threads;

void routing_verify_set_threads(unsigned n)
{
	forced_threads = n > VERIFY_MAX_THREADS ? VERIFY_MAX_THREADS : n;
}

static unsigned verify_threads(size_t S, size_t top)
{
	long c;

	if (forced_threads)
		return forced_threads;
	if ((uint64_t)S * top < VERIFY_PAR_MIN)
		return 1;
	c = sysconf(_SC_NPROCESSORS_ONLN);
	if (c < 1)
		return 1;
	return c > VERIFY_MAX_THREADS ? VERIFY_MAX_THREADS : (unsigned)c;
}

/* The blocks of thread i of n: [*b0, *b1). */
static void verify_range(size_t top, unsigned i, unsigned n, size_t *b0,
			 size_t *b1)
{
	size_t nb = top / BLK + 1;

	*b0 = nb * i / n;
	*b1 = nb * (i + 1) / n;
}

/* A walker's own scratch; the rest of *v is shared, read-only. */
static int scratch_alloc(struct verify *v)
{
	size_t S = v->S;

	v->blk = malloc(S * BLK + 1);
	v->state = malloc(S + 1);
	v->hops = malloc((S + 1) * sizeof(*v->hops));
	v->walk = malloc((S + 1) * sizeof(*v->walk));
	return v->blk && v->state && v->hops && v->walk ? 0 : -ENOMEM;
}

static void scratch_free(struct verify *v)
{
	free(v->blk);
	free(v->state);
	free(v->hops);
	free(v->walk);
	v->blk = v->state = NULL;
	v->hops = NULL;
	v->walk = NULL;
}

static void verify_free(struct verify *v)
{
	free(v->sw_node);
	free(v->sw_idx);
	free(v->exit_off);
	free(v->exit);
	free(v->nsrc);
	free(v->cap);
	free(v->own);
	scratch_free(v);
}

static int setup(struct verify *v)
{
	const struct fabric *f = v->f;
	size_t S, n_exit, top = f->max_lid;
	long ns = routing_number_switches(f, &v->sw_idx, &n_exit);

	if (ns < 0)
		return (int)ns;
	v->S = S = (size_t)ns;
	v->sw_node = malloc((S + 1) * sizeof(*v->sw_node));
	v->exit_off = malloc((S + 1) * sizeof(*v->exit_off));
	v->exit = malloc((n_exit + 1) * sizeof(*v->exit));
	v->nsrc = calloc(S + 1, sizeof(*v->nsrc));
	v->cap = calloc(S + 1, sizeof(*v->cap));
	v->own = malloc((top + 1) * sizeof(*v->own));
	if (!v->sw_node || !v->exit_off || !v->exit || !v->nsrc || !v->cap ||
	    !v->own || scratch_alloc(v) < 0)
		return -ENOMEM;
	v->min_cap = SIZE_MAX;

	for (size_t l = 0; l <= top; l++)
		v->own[l].node = FAB_NONE;
	n_exit = 0;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		bool is_sw = n->type == NODE_TYPE_SWITCH;

		if (is_sw) {
			int32_t k = v->sw_idx[i];

			v->sw_node[k] = (int32_t)i;
			v->exit_off[k] = (uint32_t)n_exit;
			if (n->has_switch_info)
				v->cap[k] = be16toh(n->si.lft_cap);
			if (v->cap[k] && v->cap[k] < v->min_cap)
				v->min_cap = v->cap[k];
			for (unsigned p = 0; p <= n->num_ports; p++) {
				const struct fab_port *pt = &n->ports[p];
				struct exit *e = &v->exit[n_exit + p];

				e->sw = -1;
				e->node = FAB_NONE;
				e->port = 0;
				if (p == 0 || !routing_port_up(f, pt))
					continue;
				if (v->sw_idx[pt->peer_node] >= 0) {
					e->sw = v->sw_idx[pt->peer_node];
				} else {
					e->node = pt->peer_node;
					e->port = pt->peer_port;
				}
			}
			n_exit += (size_t)n->num_ports + 1;
		}
		for (unsigned p = is_sw ? 0 : 1; p <= (is_sw ? 0u : n->num_ports); p++) {
			const struct fab_port *pt = &n->ports[p];

			if (!pt->lid)
				continue;
			for (size_t l = pt->lid; l < (size_t)pt->lid + (1u << (pt->lmc & 7)) &&
			     l <= top; l++) {
				v->own[l].node = (int32_t)i;
				v->own[l].port = (uint8_t)p;
			}
			if (!is_sw && routing_port_up(f, pt) &&
			    v->sw_idx[pt->peer_node] >= 0)
				v->nsrc[v->sw_idx[pt->peer_node]]++;
		}
	}
	v->exit_off[S] = (uint32_t)n_exit;
	return 0;
}

/*
 * Copy LFT entries base .. base + BLK - 1 of every switch into v->blk.
 * A switch holds no entry at or past its LinearFDBCap: it drops packets
 * for such LIDs whatever the computed table says.
 */
static void load_block(struct verify *v, size_t base)
{
	for (size_t k = 0; k < v->S; k++) {
		const struct lft *t = &v->r->lft[v->sw_node[k]];
		uint8_t *b = v->blk + k * BLK;
		size_t n = 0, top = t->top;

		if (v->cap[k] && top >= v->cap[k])
			top = v->cap[k] - 1u;
		if (t->port && base <= top) {
			n = top + 1 - base;
			if (n > BLK)
				n = BLK;
			memcpy(b, t->port + base, n);
		}
		memset(b + n, LFT_NO_PATH, BLK - n);
	}
}

/* Outcome of the first step at switch k; *next is the next switch. */
static int step(const struct verify *v, size_t k, unsigned e,
		const struct owner *o, int32_t *next)
{
	const struct exit *x;

	if (e == LFT_NO_PATH)
		return ST_NOPATH;
	if (e == 0)
		return o->node == v->sw_node[k] && o->port == 0 ?
			ST_GOOD : ST_MISROUTED;
	if (v->exit_off[k] + e >= v->exit_off[k + 1])
		return ST_NOPATH;		/* beyond the switch's ports */
	x = &v->exit[v->exit_off[k] + e];
	if (x->sw >= 0) {
		*next = x->sw;
		return ST_UNKNOWN;
	}
	if (x->node == FAB_NONE)
		return ST_NOPATH;
	return x->node == o->node && x->port == o->port ? ST_GOOD : ST_MISROUTED;
}

static void check_lid(struct verify *v, size_t lid, struct routing_check *c)
{
	const struct owner *o = &v->own[lid];
	size_t col = lid % BLK;

	memset(v->state, ST_UNKNOWN, v->S);
	for (size_t k = 0; k < v->S; k++) {
		size_t len = 0;
		int32_t y = (int32_t)k;
		uint16_t h = 0;
		int st;

		/* follow next hops until something is settled */
		if (v->state[k] == ST_UNKNOWN) {
			for (;;) {
				int32_t next = -1;

				if (v->state[y] == ST_ON_WALK) {
					st = ST_LOOP;
					break;
				}
				if (v->state[y] != ST_UNKNOWN) {
					st = v->state[y];
					h = v->hops[y];
					break;
				}
				v->state[y] = ST_ON_WALK;
				v->walk[len++] = (uint32_t)y;
				st = step(v, (size_t)y,
					  v->blk[(size_t)y * BLK + col], o, &next);
				if (st == ST_UNKNOWN) {
					y = next;
					continue;
				}
				len--;			/* y settles by itself */
				v->state[y] = (uint8_t)st;
				v->hops[y] = 0;
				break;
			}
			/* settle the walk back to front */
			while (len--) {
				if (st == ST_GOOD)
					h++;
				v->state[v->walk[len]] = (uint8_t)st;
				v->hops[v->walk[len]] = h;
			}
		}
		if (!v->nsrc[k])
			continue;
		c->pairs += v->nsrc[k];
		switch (v->state[k]) {
		case ST_GOOD:
			c->hop_sum += (uint64_t)v->hops[k] * v->nsrc[k];
			if (v->hops[k] > c->max_hops)
				c->max_hops = v->hops[k];
			continue;
		case ST_LOOP:
			c->loops += v->nsrc[k];
			break;
		case ST_MISROUTED:
			c->misrouted += v->nsrc[k];
			break;
		default:
			c->unreachable += v->nsrc[k];
			break;
		}
		if (c->bad_switch == FAB_NONE) {
			c->bad_switch = v->sw_node[k];
			c->bad_lid = (uint16_t)lid;
		}
	}
}

/* One thread's share of routing_check(): blocks b0 .. b1 - 1. */
struct check_job {
	struct verify v;
	size_t b0, b1;
	struct routing_check c;
	pthread_t th;
	bool running;
};

static void *check_range(void *arg)
{
	struct check_job *j = arg;
	struct verify *v = &j->v;
	size_t top = v->f->max_lid;

	memset(&j->c, 0, sizeof(j->c));
	j->c.bad_switch = FAB_NONE;
	for (size_t b = j->b0; b < j->b1; b++) {
		size_t base = b * BLK;

		load_block(v, base);
		for (size_t l = base ? base : 1; l < base + BLK && l <= top; l++) {
			if (v->own[l].node == FAB_NONE)
				continue;
			if (l >= v->min_cap) {
				j->c.past_cap++;
				if (!j->c.cap_lid)
					j->c.cap_lid = (uint16_t)l;
			}
			check_lid(v, l, &j->c);
		}
	}
	return NULL;
}

int routing_check(const struct fabric *f, const struct routing_result *r,
		  struct routing_check *c)
{
	struct check_job job[VERIFY_MAX_THREADS];
	unsigned n = 1;
	int rc;

	memset(c, 0, sizeof(*c));
	c->bad_switch = FAB_NONE;
	memset(job, 0, sizeof(job));
	job[0].v = (struct verify){ .f = f, .r = r };
	rc = setup(&job[0].v);
	if (rc == 0)
		n = verify_threads(job[0].v.S, f->max_lid);
	for (unsigned i = 0; rc == 0 && i < n; i++) {
		verify_range(f->max_lid, i, n, &job[i].b0, &job[i].b1);
		if (i == 0)
			continue;
		job[i].v = job[0].v;		/* shared tables */
		rc = scratch_alloc(&job[i].v);
		if (rc == 0)
			job[i].running = pthread_create(&job[i].th, NULL,
							check_range, &job[i]) == 0;
	}
	if (rc == 0)
		check_range(&job[0]);
	for (unsigned i = 1; i < n; i++) {
		if (job[i].running)
			pthread_join(job[i].th, NULL);
		else if (rc == 0)
			check_range(&job[i]);	/* no thread: here */
	}
	for (unsigned i = 0; rc == 0 && i < n; i++) {
		const struct routing_check *x = &job[i].c;

		c->pairs += x->pairs;
		c->unreachable += x->unreachable;
		c->loops += x->loops;
		c->misrouted += x->misrouted;
		c->past_cap += x->past_cap;
		if (!c->cap_lid)
			c->cap_lid = x->cap_lid;
		c->hop_sum += x->hop_sum;
		if (x->max_hops > c->max_hops)
			c->max_hops = x->max_hops;
		if (c->bad_switch == FAB_NONE && x->bad_switch != FAB_NONE) {
			c->bad_switch = x->bad_switch;
			c->bad_lid = x->bad_lid;
		}
	}
	for (unsigned i = 1; i < n; i++)
		scratch_free(&job[i].v);
	verify_free(&job[0].v);
	return rc;
}

/*
 * Channel dependency graphs (routing_check_cdg).
 *
 * Which paths count: data traffic enters the fabric at CA and router
 * ports, so every switch with such a port sources paths to every LID.
 * The switches' own traffic is left out: SMPs travel on VL15, the
 * management lane without credit flow control, which cannot take part in
 * a credit loop; what a switch's management port answers to GMPs is a
 * trickle the engines do not layer (in a fat tree such paths go down and
 * up again; a core that lost its link into a pod has no up*\/down* path
 * to its hosts).
 *
 * A channel is one direction of an inter-switch link: switch k's port p.
 * For one destination LID the tables give every switch one next hop, so
 * the paths towards that LID form a forest (or, with a loop in the tables,
 * trees hanging off a cycle).  A path from source switch s travels in
 * layer routing_layer(s, lid) all the way, so the set of layers that use
 * channel (x -> y) towards the LID is the set of layers of the paths that
 * pass x: x's own layer plus the sets of every switch whose next hop is x.
 * Taking the switches in topological order (Kahn: a switch once all its
 * predecessors are done) settles each set in one step per switch; the
 * switches on a cycle of the tables (left over by Kahn) all share the
 * union of what enters the cycle.  Each switch x with next hop y whose own
 * next hop leaves over another inter-switch port q then adds dependency
 * (x -> y) => (y -> q) in the layers of x's set.
 *
 * Dependencies are kept as one 16-bit layer mask per (channel, egress port
 * of the switch the channel leads to), so a dependency found for many
 * LIDs costs one OR.  Last, a depth-first search per layer counts the
 * edges that lead back to a channel still on the search stack: zero
 * exactly when that layer's graph is acyclic.
 */
struct cdg {
	struct verify v;
	uint32_t *chan_off;	/* channel of switch k, port p: chan_off[k] + p */
	uint32_t  n_chan;
	uint32_t *dep_off;	/* deps of channel c: dep[dep_off[c] + q] */
	uint16_t *dep;		/* layer mask per (channel, next port q) */
	uint16_t *used;		/* layers using each channel */
	uint8_t  *slblk;	/* S x BLK layers, like v.blk */
	uint16_t *lay;		/* per switch: layers of the paths through it */
	int32_t  *next;		/* per switch: next switch, -1 */
	uint32_t *indeg;
	uint32_t *queue;
	unsigned  top_layer;	/* highest layer seen */
	/* routing_check_cdg_vl(): per layer, the SLs of its paths; the
	 * masks in dep and used are then SL masks.  NULL: layer masks. */
	const uint16_t *layer_mask;
};

/* A walker's own scratch and dependency sets (cdg_setup() sized them). */
static int cdg_scratch_alloc(struct cdg *g, size_t n_dep)
{
	size_t S = g->v.S;
	int rc = scratch_alloc(&g->v);	/* first: all four replaced */

	g->slblk = malloc(S * BLK + 1);
	g->lay = malloc((S + 1) * sizeof(*g->lay));
	g->next = malloc((S + 1) * sizeof(*g->next));
	g->indeg = malloc((S + 1) * sizeof(*g->indeg));
	g->queue = malloc((S + 1) * sizeof(*g->queue));
	g->used = calloc(g->n_chan + 1, sizeof(*g->used));
	g->dep = calloc(n_dep + 1, sizeof(*g->dep));
	g->top_layer = 0;
	if (rc < 0 || !g->slblk || !g->lay || !g->next || !g->indeg ||
	    !g->queue || !g->used || !g->dep)
		return -ENOMEM;
	return 0;
}

static void cdg_scratch_free(struct cdg *g)
{
	scratch_free(&g->v);
	free(g->dep);
	free(g->used);
	free(g->slblk);
	free(g->lay);
	free(g->next);
	free(g->indeg);
	free(g->queue);
}

static void cdg_free(struct cdg *g)
{
	cdg_scratch_free(g);
	verify_free(&g->v);
	free(g->chan_off);
	free(g->dep_off);
}

static int cdg_setup(struct cdg *g)
{
	struct verify *v = &g->v;
	size_t S, n_chan = 0, n_dep = 0;
	int rc = setup(v);

	if (rc < 0)
		return rc;
	S = v->S;
	g->chan_off = malloc((S + 1) * sizeof(*g->chan_off));
	if (!g->chan_off)
		return -ENOMEM;
	/* channels are numbered like the exits: one per switch port */
	for (size_t k = 0; k < S; k++) {
		g->chan_off[k] = (uint32_t)n_chan;
		n_chan += v->exit_off[k + 1] - v->exit_off[k];
	}
	g->chan_off[S] = (uint32_t)n_chan;
	g->n_chan = (uint32_t)n_chan;
	g->dep_off = malloc((n_chan + 1) * sizeof(*g->dep_off));
	if (!g->dep_off)
		return -ENOMEM;
	for (size_t k = 0; k < S; k++)
		for (uint32_t e = v->exit_off[k]; e < v->exit_off[k + 1]; e++) {
			int32_t y = v->exit[e].sw;

			g->dep_off[e] = (uint32_t)n_dep;
			if (y >= 0)
				n_dep += v->exit_off[y + 1] - v->exit_off[y];
		}
	g->dep_off[n_chan] = (uint32_t)n_dep;
	/* the main walker's own: setup() gave it its verify scratch */
	scratch_free(v);
	return cdg_scratch_alloc(g, n_dep);
}

/* Copy layers base .. base + BLK - 1 of every switch into g->slblk. */
static void load_sl_block(struct cdg *g, size_t base)
{
	const struct routing_result *r = g->v.r;

	for (size_t k = 0; k < g->v.S; k++) {
		int32_t node = g->v.sw_node[k];
		uint8_t *b = g->slblk + k * BLK;
		size_t n = 0;

		if (r->sl && (size_t)node < r->n_nodes && r->sl[node] &&
		    base <= r->lft[node].top) {
			n = (size_t)r->lft[node].top + 1 - base;
			if (n > BLK)
				n = BLK;
			memcpy(b, r->sl[node] + base, n);
		}
		memset(b + n, 0, BLK - n);
	}
}

/* The switch that switch k's table sends `lid` to (-1: none). */
static int32_t next_switch(const struct verify *v, size_t k, unsigned e)
{
	if (e == 0 || e == LFT_NO_PATH ||
	    v->exit_off[k] + e >= v->exit_off[k + 1])
		return -1;
	return v->exit[v->exit_off[k] + e].sw;
}

static void cdg_lid(struct cdg *g, size_t lid)
{
	struct verify *v = &g->v;
	size_t S = v->S, col = lid % BLK, head = 0, tail = 0;

	for (size_t k = 0; k < S; k++) {
		unsigned sl = g->slblk[k * BLK + col];

		if (sl >= ROUTING_MAX_LAYERS)
			sl = ROUTING_MAX_LAYERS - 1;
		g->lay[k] = 0;
		if (v->nsrc[k]) {
			if (sl > g->top_layer)
				g->top_layer = sl;
			g->lay[k] = g->layer_mask ? g->layer_mask[sl] :
				    (uint16_t)(1u << sl);
		}
		g->next[k] = next_switch(v, k, v->blk[k * BLK + col]);
		g->indeg[k] = 0;
	}
	for (size_t k = 0; k < S; k++)
		if (g->next[k] >= 0)
			g->indeg[g->next[k]]++;
	for (size_t k = 0; k < S; k++)
		if (!g->indeg[k])
			g->queue[tail++] = (uint32_t)k;
	while (head < tail) {
		uint32_t k = g->queue[head++];
		int32_t y = g->next[k];

		if (y < 0)
			continue;
		g->lay[y] |= g->lay[k];
		if (!--g->indeg[y])
			g->queue[tail++] = (uint32_t)y;
	}
	/* what is left lies on cycles of the tables: each cycle's switches
	 * carry the union of everything that enters it */
	for (size_t k = 0; tail < S && k < S; k++) {
		uint16_t u = 0;
		int32_t y = (int32_t)k;

		if (!g->indeg[k])
			continue;
		do {
			u |= g->lay[y];
			y = g->next[y];
		} while (y != (int32_t)k);
		do {
			g->lay[y] = u;
			g->indeg[y] = 0;
			tail++;
			y = g->next[y];
		} while (y != (int32_t)k);
	}
	/* dependencies (x -> y) => (y -> z) */
	for (size_t x = 0; x < S; x++) {
		int32_t y = g->next[x];
		unsigned ex = v->blk[x * BLK + col], ey;
		uint32_t c;

		if (y < 0)
			continue;
		c = g->chan_off[x] + ex;
		g->used[c] |= g->lay[x];
		ey = v->blk[(size_t)y * BLK + col];
		if (next_switch(v, (size_t)y, ey) < 0)
			continue;
		g->dep[g->dep_off[c] + ey] |= g->lay[x];
	}
}

/* Depth-first search of layer `l`: the number of back edges. */
static uint64_t cdg_dfs(struct cdg *g, unsigned l, uint8_t *color,
			uint32_t *stk, uint32_t *pos, uint64_t *deps)
{
	const struct verify *v = &g->v;
	uint16_t bit = (uint16_t)(1u << l);
	uint64_t back = 0;

	*deps = 0;
	memset(color, 0, g->n_chan);
	for (uint32_t s = 0; s < g->n_chan; s++) {
		size_t sp = 0;

		if (color[s] || !(g->used[s] & bit))
			continue;
		color[s] = 1;
		stk[sp] = s;
		pos[sp++] = 0;
		while (sp) {
			uint32_t c = stk[sp - 1];
			uint32_t n = g->dep_off[c + 1] - g->dep_off[c];
			const uint16_t *d = g->dep + g->dep_off[c];
			bool pushed = false;

			while (pos[sp - 1] < n) {
				uint32_t q = pos[sp - 1]++, y, to;

				if (!(d[q] & bit))
					continue;
				(*deps)++;
				/* channel c leads to switch y; its port q */
				y = (uint32_t)v->exit[c].sw;
				to = g->chan_off[y] + q;
				if (color[to] == 1) {
					back++;
				} else if (!color[to]) {
					color[to] = 1;
					stk[sp] = to;
					pos[sp++] = 0;
					pushed = true;
					break;
				}
			}
			if (!pushed) {
				color[c] = 2;
				sp--;
			}
		}
	}
	return back;
}

/* One thread's share of the dependencies: blocks b0 .. b1 - 1. */
struct cdg_job {
	struct cdg g;
	size_t b0, b1;
	pthread_t th;
	bool running;
};

static void *cdg_range(void *arg)
{
	struct cdg_job *j = arg;
	struct cdg *g = &j->g;
	size_t top = g->v.f->max_lid;

	for (size_t b = j->b0; b < j->b1; b++) {
		size_t base = b * BLK;

		load_block(&g->v, base);
		load_sl_block(g, base);
		for (size_t l = base ? base : 1; l < base + BLK && l <= top; l++)
			if (g->v.own[l].node != FAB_NONE)
				cdg_lid(g, l);
	}
	return NULL;
}

/* The dependencies of every LID into job[0].g, over n threads. */
static int cdg_walk(struct cdg_job *job, unsigned n)
{
	struct cdg *g = &job[0].g;
	size_t top = g->v.f->max_lid, n_dep = g->dep_off[g->n_chan];
	int rc = 0;

	for (unsigned i = 0; i < n; i++) {
		verify_range(top, i, n, &job[i].b0, &job[i].b1);
		if (i == 0)
			continue;
		job[i].g = *g;			/* shared tables */
		rc = cdg_scratch_alloc(&job[i].g, n_dep);
		if (rc < 0)
			break;
		job[i].running = pthread_create(&job[i].th, NULL, cdg_range,
						&job[i]) == 0;
	}
	if (rc == 0)
		cdg_range(&job[0]);
	for (unsigned i = 1; i < n; i++) {
		struct cdg *x = &job[i].g;

		if (job[i].running)
			pthread_join(job[i].th, NULL);
		else if (rc == 0)
			cdg_range(&job[i]);	/* no thread: here */
		if (rc == 0) {
			for (size_t k = 0; k < n_dep; k++)
				g->dep[k] |= x->dep[k];
			for (uint32_t k = 0; k < g->n_chan; k++)
				g->used[k] |= x->used[k];
			if (x->top_layer > g->top_layer)
				g->top_layer = x->top_layer;
		}
	}
	for (unsigned i = 1; i < n; i++)
		cdg_scratch_free(&job[i].g);
	return rc;
}

int routing_check_cdg(const struct fabric *f, const struct routing_result *r,
		      struct routing_cdg *c)
{
	struct cdg_job job[VERIFY_MAX_THREADS];
	struct cdg *gp = &job[0].g;
	uint8_t *color = NULL;
	uint32_t *stk = NULL, *pos = NULL;
	int rc;

	if (r->port_class)
		return routing_check_cdg_hops(f, r, c);
	memset(c, 0, sizeof(*c));
	memset(job, 0, sizeof(job));
	gp->v = (struct verify){ .f = f, .r = r };
	rc = cdg_setup(gp);
	if (rc == 0)
		rc = cdg_walk(job, verify_threads(gp->v.S, f->max_lid));
	if (rc == 0) {
		color = malloc(gp->n_chan + 1);
		stk = malloc((gp->n_chan + 1) * sizeof(*stk));
		pos = malloc((gp->n_chan + 1) * sizeof(*pos));
		if (!color || !stk || !pos)
			rc = -ENOMEM;
	}
	if (rc == 0) {
		c->layers = r->n_layers ? r->n_layers : 1;
		if (gp->top_layer + 1 > c->layers)
			c->layers = gp->top_layer + 1;
		for (uint32_t ch = 0; ch < gp->n_chan; ch++)
			if (gp->used[ch])
				c->channels++;
		for (unsigned l = 0; l < c->layers; l++)
			c->cycles[l] = cdg_dfs(gp, l, color, stk, pos,
					       &c->deps[l]);
	}
	free(color);
	free(stk);
	free(pos);
	cdg_free(gp);
	return rc;
}

/*
 * Per VL, after the SL-to-VL mapping (routing_check_cdg_vl).  The walk
 * above runs with SL masks: a path of layer l counts once for each SL
 * of m->layer_sls[l], so dep[] says which SLs make channel c depend on
 * the channel out of port q of the switch c leads to.  The graph
 * searched has one vertex per (channel, VL): on channel c an SL s
 * travels on VL vt[c][s] (the map of the switch c leaves), and a
 * dependency c => d of SL s links (c, vt[c][s]) to (d, vt[d][s]).
 */
#define VT_NONE	0xff

static uint8_t *vl_table(const struct cdg *g, const struct routing_vlmap *m)
{
	const struct verify *v = &g->v;
	uint8_t *vt = malloc((size_t)g->n_chan * VLS_SL_N + 1);

	if (!vt)
		return NULL;
	memset(vt, VT_NONE, (size_t)g->n_chan * VLS_SL_N);
	for (size_t k = 0; k < v->S; k++)
		for (uint32_t e = v->exit_off[k]; e < v->exit_off[k + 1]; e++) {
			unsigned port = e - v->exit_off[k];

			if (v->exit[e].sw < 0)
				continue;
			for (unsigned sl = 0; sl < VLS_SL_N; sl++) {
				unsigned vl = m->vl(m->ctx, v->sw_node[k],
						    port, sl);

				if (vl < VLS_MAX)
					vt[(size_t)e * VLS_SL_N + sl] =
						(uint8_t)vl;
			}
		}
	return vt;
}

/* The SLs of mask `sls` that travel on VL `vl` over channel c. */
static uint16_t sls_on(const uint8_t *vt, uint32_t c, unsigned vl,
		       uint16_t sls)
{
	uint16_t out = 0;

	for (unsigned s = 0; s < VLS_SL_N; s++)
		if ((sls >> s & 1) && vt[(size_t)c * VLS_SL_N + s] == vl)
			out |= (uint16_t)(1u << s);
	return out;
}

/* The VLs that the SLs `sls` take over channel c. */
static uint16_t vls_of(const uint8_t *vt, uint32_t c, uint16_t sls)
{
	uint16_t out = 0;

	for (unsigned s = 0; s < VLS_SL_N; s++)
		if ((sls >> s & 1) && vt[(size_t)c * VLS_SL_N + s] < VLS_MAX)
			out |= (uint16_t)(1u << vt[(size_t)c * VLS_SL_N + s]);
	return out;
}

/*
 * The next vertex from (c, vl) at or after *pos (q * 16 + target VL):
 * the vertex, or UINT32_MAX when c has no more.
 */
static uint32_t vc_next(const struct cdg *g, const uint8_t *vt, uint32_t c,
			unsigned vl, uint32_t *pos)
{
	uint32_t n = g->dep_off[c + 1] - g->dep_off[c];
	uint32_t y = (uint32_t)g->v.exit[c].sw;

	for (; *pos < n * 16; (*pos)++) {
		uint32_t q = *pos / 16, t = *pos % 16, to;
		uint16_t s = g->dep[g->dep_off[c] + q];

		if (!s || (t == 0 && !(s = sls_on(vt, c, vl, s)))) {
			*pos |= 15;		/* next q */
			continue;
		}
		to = g->chan_off[y] + q;
		if (!(vls_of(vt, to, sls_on(vt, c, vl, s)) >> t & 1))
			continue;
		(*pos)++;
		return to * 16 + t;
	}
	return UINT32_MAX;
}

static void vc_dfs(const struct cdg *g, const uint8_t *vt, uint8_t *color,
		   uint32_t *stk, uint32_t *pos, struct routing_cdg *c)
{
	size_t nv = (size_t)g->n_chan * 16;

	memset(color, 0, nv);
	for (uint32_t s = 0; s < nv; s++) {
		size_t sp = 0;

		if (color[s] || !(vls_of(vt, s / 16, g->used[s / 16]) >>
				  (s % 16) & 1))
			continue;
		color[s] = 1;
		stk[sp] = s;
		pos[sp++] = 0;
		while (sp) {
			uint32_t u = stk[sp - 1];
			uint32_t w = vc_next(g, vt, u / 16, u % 16, &pos[sp - 1]);

			if (w == UINT32_MAX) {
				color[u] = 2;
				sp--;
				continue;
			}
			c->deps[u % 16]++;
			if (color[w] == 1) {
				c->cycles[u % 16]++;
			} else if (!color[w]) {
				color[w] = 1;
				stk[sp] = w;
				pos[sp++] = 0;
			}
		}
	}
}

int routing_check_cdg_vl(const struct fabric *f,
			 const struct routing_result *r,
			 const struct routing_vlmap *m, struct routing_cdg *c)
{
	struct cdg_job job[VERIFY_MAX_THREADS];
	struct cdg *gp = &job[0].g;
	uint8_t *color = NULL, *vt = NULL;
	uint32_t *stk = NULL, *pos = NULL;
	size_t nv;
	int rc;

	memset(c, 0, sizeof(*c));
	memset(job, 0, sizeof(job));
	gp->v = (struct verify){ .f = f, .r = r };
	gp->layer_mask = m->layer_sls;
	rc = cdg_setup(gp);
	if (rc == 0)
		rc = cdg_walk(job, verify_threads(gp->v.S, f->max_lid));
	nv = (size_t)gp->n_chan * 16 + 1;
	if (rc == 0) {
		vt = vl_table(gp, m);
		color = malloc(nv);
		stk = malloc(nv * sizeof(*stk));
		pos = malloc(nv * sizeof(*pos));
		if (!vt || !color || !stk || !pos)
			rc = -ENOMEM;
	}
	if (rc == 0) {
		c->per_vl = true;
		for (uint32_t ch = 0; ch < gp->n_chan; ch++) {
			uint16_t u = vls_of(vt, ch, gp->used[ch]);

			if (u)
				c->channels++;
			for (unsigned l = 0; l < VLS_MAX; l++)
				if ((u >> l & 1) && l + 1 > c->layers)
					c->layers = l + 1;
		}
		if (!c->layers)
			c->layers = 1;
		vc_dfs(gp, vt, color, stk, pos, c);
	}
	free(vt);
	free(color);
	free(stk);
	free(pos);
	cdg_free(gp);
	return rc;
}

void routing_vlmap_from_split(const struct routing_result *r,
			      struct routing_vlmap *m)
{
	const struct vl_split *s = &r->split;

	memset(m->layer_sls, 0, sizeof(m->layer_sls));
	for (unsigned j = 0; j < s->layers && j < ROUTING_MAX_LAYERS; j++)
		for (unsigned c = 0; c < s->n_classes; c++)
			m->layer_sls[j] |= (uint16_t)(1u << s->sl[c][j]);
	m->layer_sls[0] |= s->sls;
	/* a layer past the split's (none: the engine used n_layers) rides
	 * on the last one's SLs, as vlsplit_path_sl() answers */
	for (unsigned j = s->layers; j < ROUTING_MAX_LAYERS && s->layers; j++)
		m->layer_sls[j] = m->layer_sls[s->layers - 1];
}
