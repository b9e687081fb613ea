/*
 * babble.c - babbling_port_policy's bookkeeping (see babble.h).
 */
#include "config.h"

#include <string.h>

#include "model/fabric.h"
#include "sm/babble.h"

uint64_t babble_hash(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static bool same_key(const struct babble_key *a, const struct babble_key *b)
{
	return a->slid == b->slid && a->lid == b->lid && a->port == b->port &&
	       a->hash == b->hash;
}

struct babble_slot *babble_count(struct babble_table *t,
				 const struct babble_key *k, double now)
{
	struct babble_slot *s = NULL, *victim = &t->s[0];

	for (unsigned i = 0; i < BABBLE_SLOTS; i++) {
		struct babble_slot *x = &t->s[i];

		if (x->used && same_key(&x->k, k)) {
			s = x;
			break;
		}
		if (!x->used || x->expires <= now) {
			if (victim->used && victim->expires > now)
				victim = x;
		} else if (victim->used && x->expires < victim->expires) {
			victim = x;
		}
	}
	if (s && s->expires > now) {
		s->repeats++;
	} else {
		if (!s)
			s = victim;
		memset(s, 0, sizeof(*s));
		s->k = *k;
		s->used = true;
	}
	s->expires = now + (s->repeats >= BABBLE_NOISY ? BABBLE_AGE_NOISY
						       : BABBLE_AGE);
	return s;
}

enum babble_verdict babble_decide(struct babble_slot *s, bool policy,
				  bool own_port)
{
	if (s->repeats < BABBLE_REPEATS)
		return BABBLE_COUNTING;
	if (s->acted)
		return BABBLE_DONE;
	s->acted = true;
	if (!policy)
		return BABBLE_POLICY_OFF;
	return own_port ? BABBLE_DISABLE : BABBLE_FOREIGN;
}

/* Hops from the SM to port pn of node id: a switch's ports are one
 * node's; a CA's or router's port has the route it was reached by. */
static unsigned hops_to(const struct fabric *f, int32_t id, uint8_t pn)
{
	const struct fab_node *n = fabric_node(f, id);
	const struct fab_port *p = &n->ports[pn];

	if (n->type != NODE_TYPE_SWITCH && (p->hops || p->guid))
		return p->hops;
	return n->hops;
}

bool babble_target(const struct fabric *f, int32_t id, uint8_t pn,
		   int32_t *tid, uint8_t *tpn)
{
	const struct fab_node *n = fabric_node(f, id);
	const struct fab_port *p;

	if (!pn || pn > n->num_ports)
		return false;
	p = &n->ports[pn];
	if (p->peer_node == FAB_NONE)
		return false;
	if (hops_to(f, p->peer_node, p->peer_port) < hops_to(f, id, pn)) {
		*tid = p->peer_node;
		*tpn = p->peer_port;
	} else {
		*tid = id;
		*tpn = pn;
	}
	return true;
}
