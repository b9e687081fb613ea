/*
 * rogue.c - the SMs of another SM_Key we have heard from (rogue.h).
 */
#include "config.h"

#include <endian.h>
#include <inttypes.h>
#include <string.h>

#include "mad/wire.h"
#include "model/fabric.h"
#include "sm/ha/rogue.h"
#include "sm/log.h"
#include "sm/sm.h"

static struct sm_rogue *slot_of(struct sm *sm, uint64_t guid, bool *fresh)
{
	struct sm_rogue *old = &sm->rogues[0];

	*fresh = false;
	for (unsigned i = 0; i < SM_MAX_ROGUE; i++) {
		struct sm_rogue *r = &sm->rogues[i];

		if (r->guid == guid)
			return r;
		if (!r->guid && old->guid)
			old = r;
		else if (r->guid && old->guid && r->seen < old->seen)
			old = r;
	}
	*fresh = true;
	memset(old, 0, sizeof(*old));
	old->guid = guid;
	return old;
}

static void describe(const struct sm *sm, uint64_t guid, char *buf, size_t n)
{
	struct rogue_where w;
	const struct fab_node *a, *b;

	if (!sm_rogue_where(&sm->fabric, guid, &w)) {
		snprintf(buf, n, "not in the model");
		return;
	}
	a = fabric_node(&sm->fabric, w.node);
	if (w.peer_node == FAB_NONE) {
		snprintf(buf, n, "port %u of \"%.64s\"", w.port, a->desc);
		return;
	}
	b = fabric_node(&sm->fabric, w.peer_node);
	snprintf(buf, n, "port %u of \"%.64s\", behind port %u of \"%.64s\" "
		 "(0x%016" PRIx64 ")", w.port, a->desc, w.peer_port, b->desc,
		 b->guid);
}

void sm_rogue_heard(struct sm *sm, const struct smp_sm_info *si,
		    uint16_t lid, bool set)
{
	uint64_t guid = be64toh(si->guid);
	ev_tstamp now = ev_now(sm->loop);
	struct sm_rogue *r;
	bool fresh;
	char where[200];

	if (!guid || guid == sm->port_guid)
		return;
	r = slot_of(sm, guid, &fresh);
	if (fresh)
		r->first = now;
	r->seen = now;
	if (!lid) {
		struct rogue_where w;

		if (sm_rogue_where(&sm->fabric, guid, &w))
			lid = fabric_node(&sm->fabric, w.node)->ports[w.port].lid;
	}
	if (lid)
		r->lid = lid;
	r->priority = si->prio_state >> 4;
	r->state = si->prio_state & 0xf;
	r->sm_key = be64toh(si->sm_key);
	r->heard++;
	if (set)
		r->sets++;
	if (!fresh)
		return;
	describe(sm, guid, where, sizeof(where));
	log_ratelimited(LOG_LVL_WARN, 1125, "SM 0x%016" PRIx64 " (LID %u, "
			"priority %u, %s) has another SM_Key: untrusted, not "
			"obeyed and never handed over to; %s", guid, lid,
			r->priority, sm_state_name((enum sm_state)r->state),
			where);
}

void sm_rogue_expire(struct sm *sm)
{
	ev_tstamp now = ev_now(sm->loop);

	for (unsigned i = 0; i < SM_MAX_ROGUE; i++)
		if (sm->rogues[i].guid &&
		    now - sm->rogues[i].seen > SM_ROGUE_FORGET_S)
			memset(&sm->rogues[i], 0, sizeof(sm->rogues[i]));
}

bool sm_rogue_where(const struct fabric *f, uint64_t guid,
		    struct rogue_where *w)
{
	w->node = w->peer_node = FAB_NONE;
	w->port = w->peer_port = 0;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		for (unsigned p = 0; p <= n->num_ports; p++) {
			if (!fabric_is_endport(n, p) || n->ports[p].guid != guid)
				continue;
			w->node = (int32_t)i;
			w->port = (uint8_t)p;
			w->peer_node = n->ports[p].peer_node;
			w->peer_port = n->ports[p].peer_port;
			return true;
		}
	}
	return false;
}

bool sm_rogue_master_heard(struct sm *sm)
{
	sm_rogue_expire(sm);
	for (unsigned i = 0; i < SM_MAX_ROGUE; i++)
		if (sm->rogues[i].guid &&
		    sm->rogues[i].state == SM_STATE_MASTER)
			return true;
	return false;
}
