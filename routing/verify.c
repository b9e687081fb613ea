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
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	struct owner *own;	/* per LID */
	uint8_t *blk;		/* S x BLK table entries */
	uint8_t *state;
	uint16_t *hops;
	uint32_t *walk;
};

static void verify_free(struct verify *v)
{
	free(v->sw_node);
	free(v->sw_idx);
	free(v->exit_off);
	free(v->exit);
	free(v->nsrc);
	free(v->own);
	free(v->blk);
	free(v->state);
	free(v->hops);
	free(v->walk);
}

static int setup(struct verify *v)
{
	const struct fabric *f = v->f;
	size_t N = f->n_nodes, S = 0, n_exit = 0, top = f->max_lid;

	v->sw_idx = malloc((N + 1) * sizeof(*v->sw_idx));
	if (!v->sw_idx)
		return -ENOMEM;
	for (size_t i = 0; i < N; i++) {
		v->sw_idx[i] = -1;
		if (f->nodes[i].type == NODE_TYPE_SWITCH) {
			v->sw_idx[i] = (int32_t)S++;
			n_exit += (size_t)f->nodes[i].num_ports + 1;
		}
	}
	v->S = S;
	v->sw_node = malloc((S + 1) * sizeof(*v->sw_node));
	v->exit_off = malloc((S + 1) * sizeof(*v->exit_off));
	v->exit = malloc((n_exit + 1) * sizeof(*v->exit));
	v->nsrc = calloc(S + 1, sizeof(*v->nsrc));
	v->own = malloc((top + 1) * sizeof(*v->own));
	v->blk = malloc(S * BLK + 1);
	v->state = malloc(S + 1);
	v->hops = malloc((S + 1) * sizeof(*v->hops));
	v->walk = malloc((S + 1) * sizeof(*v->walk));
	if (!v->sw_node || !v->exit_off || !v->exit || !v->nsrc || !v->own ||
	    !v->blk || !v->state || !v->hops || !v->walk)
		return -ENOMEM;

	for (size_t l = 0; l <= top; l++)
		v->own[l].node = FAB_NONE;
	n_exit = 0;
	for (size_t i = 0; i < N; i++) {
		const struct fab_node *n = &f->nodes[i];
		bool is_sw = n->type == NODE_TYPE_SWITCH;

		if (is_sw) {
			int32_t k = v->sw_idx[i];

			v->sw_node[k] = (int32_t)i;
			v->exit_off[k] = (uint32_t)n_exit;
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

/* Copy LFT entries base .. base + BLK - 1 of every switch into v->blk. */
static void load_block(struct verify *v, size_t base)
{
	for (size_t k = 0; k < v->S; k++) {
		const struct lft *t = &v->r->lft[v->sw_node[k]];
		uint8_t *b = v->blk + k * BLK;
		size_t n = 0;

		if (t->port && base <= t->top) {
			n = (size_t)t->top + 1 - base;
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

int routing_check(const struct fabric *f, const struct routing_result *r,
		  struct routing_check *c)
{
	struct verify v = { .f = f, .r = r };
	int rc;

	memset(c, 0, sizeof(*c));
	c->bad_switch = FAB_NONE;
	rc = setup(&v);
	for (size_t base = 0; rc == 0 && base <= f->max_lid; base += BLK) {
		load_block(&v, base);
		for (size_t l = base ? base : 1; l < base + BLK && l <= f->max_lid; l++)
			if (v.own[l].node != FAB_NONE)
				check_lid(&v, l, c);
	}
	verify_free(&v);
	return rc;
}
