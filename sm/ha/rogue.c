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
	if (!sm->loop)
		return;
	ev_tstamp now = ev_now(sm->loop);

	for (unsigned i = 0; i < SM_MAX_ROGUE; i++)
		if (sm->rogues[i].guid &&
		    now - sm->rogues[i].seen > SM_ROGUE_FORGET_S)
			memset(&sm->rogues[i], 0, sizeof(sm->rogues[i]));
	for (unsigned i = 0; i < SM_MAX_BAD_MKEY; i++)
		if (sm->bad_mkeys[i].node_guid &&
		    now - sm->bad_mkeys[i].seen > SM_ROGUE_FORGET_S)
			memset(&sm->bad_mkeys[i], 0, sizeof(sm->bad_mkeys[i]));
}

/*
 * Trap 256's DataDetails (14.2.5.1): 2 reserved bytes, the requester's
 * LID, its DR SLID, the method, a reserved byte, the attribute, its
 * modifier, the M_Key it carried, a reserved byte, DRNotice:1
 * DRPathTruncated:1 DRHopCount:6, and the directed route's return path
 * (30 bytes, hop i at i).
 */
void sm_bad_mkey_heard(struct sm *sm, const struct smp_notice *n,
		       uint64_t node_guid, uint8_t port, uint16_t lid)
{
	const uint8_t *d = n->data_details;
	struct sm_bad_mkey *b = NULL, *old = &sm->bad_mkeys[0];
	uint16_t req, drslid, attr;
	uint32_t mod;
	uint64_t key;
	char path[3 * 30 + 1] = "";
	unsigned hops = d[23] & 0x3f;

	memcpy(&req, d + 2, 2);
	memcpy(&drslid, d + 4, 2);
	memcpy(&attr, d + 8, 2);
	memcpy(&mod, d + 10, 4);
	memcpy(&key, d + 14, 8);
	if (d[23] & 0x80)
		for (unsigned i = 1; i <= hops && i < 30; i++)
			snprintf(path + strlen(path), sizeof(path) - strlen(path),
				 "%s%u", i > 1 ? "," : "", d[24 + i]);
	for (unsigned i = 0; i < SM_MAX_BAD_MKEY && !b; i++) {
		struct sm_bad_mkey *e = &sm->bad_mkeys[i];

		if (e->node_guid == node_guid && e->port == port)
			b = e;
		else if (!e->node_guid ? old->node_guid != 0 :
			 old->node_guid && e->seen < old->seen)
			old = e;
	}
	if (!b) {
		b = old;
		memset(b, 0, sizeof(*b));
	}
	b->node_guid = node_guid;
	b->port = port;
	b->lid = lid;
	b->requester = be16toh(req);
	b->dr_slid = be16toh(drslid);
	b->method = d[6];
	b->attr = be16toh(attr);
	b->count++;
	b->seen = ev_now(sm->loop);
	log_ratelimited(LOG_LVL_WARN, 316, "trap 256 (bad M_Key) from LID %u "
			"(node 0x%016" PRIx64 " port %u): LID %u (DR SLID %u) "
			"sent method 0x%02x of attribute 0x%04x modifier 0x%x "
			"with M_Key 0x%016" PRIx64 "%s%s%s", lid, node_guid,
			port, b->requester, b->dr_slid, b->method, b->attr,
			be32toh(mod), be64toh(key), *path ? " along " : "",
			path, *path ? " (return path)" : "");
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
