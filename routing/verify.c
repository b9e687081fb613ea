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
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/verify.h"

enum { ST_UNKNOWN, ST_ON_WALK, ST_GOOD, ST_NOPATH, ST_LOOP, ST_MISROUTED };

struct owner {
	int32_t node;		/* FAB_NONE: nobody has this LID */
	uint8_t port;
};

/* Outcome of the first step at switch node `x` for LID `lid`. */
static int step(const struct fabric *f, const struct routing_result *r,
		int32_t x, uint16_t lid, const struct owner *o, int32_t *next)
{
	const struct fab_node *n = fabric_node(f, x);
	const struct lft *t = &r->lft[x];
	const struct fab_port *pt;
	unsigned e;

	*next = FAB_NONE;
	if (!t->port || lid > t->top || t->port[lid] == LFT_NO_PATH)
		return ST_NOPATH;
	e = t->port[lid];
	if (e == 0)
		return o->node == x && o->port == 0 ? ST_GOOD : ST_MISROUTED;
	if (e > n->num_ports)
		return ST_NOPATH;
	pt = &n->ports[e];
	if (!routing_port_up(f, pt))
		return ST_NOPATH;
	if (fabric_node(f, pt->peer_node)->type == NODE_TYPE_SWITCH) {
		*next = pt->peer_node;
		return ST_UNKNOWN;
	}
	return pt->peer_node == o->node && pt->peer_port == o->port ?
		ST_GOOD : ST_MISROUTED;
}

int routing_check(const struct fabric *f, const struct routing_result *r,
		  struct routing_check *c)
{
	size_t N = f->n_nodes, top = f->max_lid;
	struct owner *own = malloc((top + 1) * sizeof(*own));
	uint32_t *nsrc = calloc(N ? N : 1, sizeof(*nsrc));
	uint8_t *state = malloc(N ? N : 1);
	uint16_t *hops = malloc((N ? N : 1) * sizeof(*hops));
	int32_t *walk = malloc((N ? N : 1) * sizeof(*walk));
	int32_t *sw = malloc((N ? N : 1) * sizeof(*sw));
	size_t n_sw = 0;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	c->bad_switch = FAB_NONE;
	if (!own || !nsrc || !state || !hops || !walk || !sw) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t l = 0; l <= top; l++)
		own[l].node = FAB_NONE;
	for (size_t i = 0; i < N; i++) {
		const struct fab_node *n = &f->nodes[i];
		bool is_sw = n->type == NODE_TYPE_SWITCH;

		if (is_sw)
			sw[n_sw++] = (int32_t)i;
		for (unsigned p = is_sw ? 0 : 1; p <= (is_sw ? 0u : n->num_ports); p++) {
			const struct fab_port *pt = &n->ports[p];

			if (!pt->lid)
				continue;
			for (size_t l = pt->lid; l < (size_t)pt->lid + (1u << (pt->lmc & 7)) &&
			     l <= top; l++) {
				own[l].node = (int32_t)i;
				own[l].port = (uint8_t)p;
			}
			if (!is_sw && routing_port_up(f, pt) &&
			    fabric_node(f, pt->peer_node)->type == NODE_TYPE_SWITCH)
				nsrc[pt->peer_node]++;
		}
	}

	for (size_t l = 1; l <= top; l++) {
		if (own[l].node == FAB_NONE)
			continue;
		for (size_t k = 0; k < n_sw; k++)
			state[sw[k]] = ST_UNKNOWN;
		for (size_t k = 0; k < n_sw; k++) {
			int32_t x = sw[k], y;
			size_t len = 0;
			int st;
			uint16_t h = 0;

			if (state[x] != ST_UNKNOWN)
				goto tally;
			/* follow next hops until something is settled */
			for (y = x;;) {
				int32_t next;

				if (state[y] == ST_ON_WALK) {
					st = ST_LOOP;
					break;
				}
				if (state[y] != ST_UNKNOWN) {
					st = state[y];
					h = hops[y];
					break;
				}
				state[y] = ST_ON_WALK;
				walk[len++] = y;
				st = step(f, r, y, (uint16_t)l, &own[l], &next);
				if (st != ST_UNKNOWN) {
					h = 0;
					len--;		/* y settles by itself */
					state[y] = (uint8_t)st;
					hops[y] = 0;
					break;
				}
				y = next;
			}
			/* settle the walk back to front */
			while (len--) {
				if (st == ST_GOOD)
					h++;
				state[walk[len]] = (uint8_t)st;
				hops[walk[len]] = h;
			}
tally:
			if (!nsrc[x])
				continue;
			c->pairs += nsrc[x];
			switch (state[x]) {
			case ST_GOOD:
				c->hop_sum += (uint64_t)hops[x] * nsrc[x];
				if (hops[x] > c->max_hops)
					c->max_hops = hops[x];
				continue;
			case ST_LOOP:
				c->loops += nsrc[x];
				break;
			case ST_MISROUTED:
				c->misrouted += nsrc[x];
				break;
			default:
				c->unreachable += nsrc[x];
				break;
			}
			if (c->bad_switch == FAB_NONE) {
				c->bad_switch = x;
				c->bad_lid = (uint16_t)l;
			}
		}
	}
out:
	free(own);
	free(nsrc);
	free(state);
	free(hops);
	free(walk);
	free(sw);
	return rc;
}
