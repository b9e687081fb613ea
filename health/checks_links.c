/*
 * checks_links.c - the link and identity checks (checks.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "health/checks.h"
#include "health/checks_int.h"

/*
 * Which end of a link a finding about the whole link is filed at: the
 * end with the lower (node GUID, port), so a link is reported once.
 */
static bool report_here(const struct fabric *f, const struct fab_node *n,
			unsigned pn)
{
	const struct fab_port *p = &n->ports[pn];
	const struct fab_node *o;

	if (p->peer_node == FAB_NONE)
		return true;
	o = fabric_node(f, p->peer_node);
	if (!o->ports[p->peer_port].valid)
		return true;
	return n->guid < o->guid || (n->guid == o->guid && pn < p->peer_port);
}

static void link_state(const struct fabric *f, int32_t id, unsigned pn,
		       struct hf_set *s, double now)
{
	const struct fab_node *n = fabric_node(f, id);
	const struct fab_port *p = &n->ports[pn];
	static const char *const states[] = {
		"NOP", "DOWN", "INIT", "ARMED", "ACTIVE",
	};
	unsigned st = pi_port_state(&p->pi);
	struct hf_finding x = { .kind = HF_LINK_NOT_ACTIVE,
				.severity = HF_CRITICAL };

	hc_where(&x, f, id, pn);
	x.value = st;
	hc_text(&x, "link is physically up but %s, not ACTIVE",
		st < sizeof(states) / sizeof(states[0]) ? states[st] : "?");
	hf_set_report(s, &x, now);
}

/* Active width/speed of an ACTIVE link against what both ends enable and
 * what the administrator declares. */
static void link_speed(const struct fabric *f, int32_t id, unsigned pn,
		       const struct health_policy *pol, struct hf_set *s,
		       double now)
{
	const struct fab_node *n = fabric_node(f, id);
	const struct fab_port *p = &n->ports[pn];
	uint32_t cap = fabric_port_cap_mask(n, pn);
	unsigned lanes = hc_width_lanes(p->pi.link_width_active);
	unsigned rate = hc_speed_active(&p->pi, cap);

	if (p->peer_node != FAB_NONE) {
		const struct fab_node *o = fabric_node(f, p->peer_node);
		const struct fab_port *q = &o->ports[p->peer_port];
		unsigned best_w, best_s;

		if (q->valid) {
			best_w = hc_width_best(p->pi.link_width_enabled &
					       q->pi.link_width_enabled);
			best_s = hc_speed_best_common(&p->pi, cap, &q->pi,
					fabric_port_cap_mask(o, p->peer_port));
			if ((lanes && best_w > lanes) || (rate && best_s > rate)) {
				struct hf_finding x = { .kind = HF_LINK_DEGRADED,
							.severity = HF_WARNING };

				hc_where(&x, f, id, pn);
				x.value = (uint64_t)lanes << 32 | rate;
				x.limit = (uint64_t)best_w << 32 | best_s;
				hc_text(&x, "link runs %s%s, both ends enable %s%s",
					hc_width_name(lanes), hc_speed_name(rate),
					hc_width_name(best_w), hc_speed_name(best_s));
				hf_set_report(s, &x, now);
			}
		}
	}
	if ((pol->expected_width && lanes && lanes < pol->expected_width) ||
	    (pol->expected_speed && rate && rate < pol->expected_speed)) {
		struct hf_finding x = { .kind = HF_LINK_BELOW_EXPECTED,
					.severity = HF_WARNING };

		hc_where(&x, f, id, pn);
		x.value = (uint64_t)lanes << 32 | rate;
		x.limit = (uint64_t)pol->expected_width << 32 | pol->expected_speed;
		hc_text(&x, "link runs %s%s, expected %s%s",
			hc_width_name(lanes), hc_speed_name(rate),
			pol->expected_width ? hc_width_name(pol->expected_width) : "",
			pol->expected_speed ? hc_speed_name(pol->expected_speed) : "");
		hf_set_report(s, &x, now);
	}
}

void hc_links(const struct fabric *f, const struct health_policy *pol,
	      struct hf_set *s, double now)
{
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (!p->valid || pi_phys_state(&p->pi) != PHYS_STATE_LINKUP)
				continue;
			if (!report_here(f, n, pn))
				continue;
			if (pi_port_state(&p->pi) != PORT_STATE_ACTIVE) {
				link_state(f, (int32_t)i, pn, s, now);
				continue;
			}
			/* the other end may be the one left behind */
			if (p->peer_node != FAB_NONE) {
				const struct fab_port *q = &fabric_node(f,
					p->peer_node)->ports[p->peer_port];

				if (q->valid &&
				    pi_phys_state(&q->pi) == PHYS_STATE_LINKUP &&
				    pi_port_state(&q->pi) != PORT_STATE_ACTIVE) {
					link_state(f, p->peer_node, p->peer_port,
						   s, now);
					continue;
				}
			}
			link_speed(f, (int32_t)i, pn, pol, s, now);
		}
	}
}

/* Duplicate descriptions: nodes sorted by (type, description, GUID). */
struct dnode {
	const struct fab_node *n;
	int32_t id;
};

static int by_desc(const void *a, const void *b)
{
	const struct fab_node *x = ((const struct dnode *)a)->n;
	const struct fab_node *y = ((const struct dnode *)b)->n;
	int c;

	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	c = strcmp(x->desc, y->desc);
	if (c)
		return c;
	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

/* At most this many findings for one shared description: a fabric of
 * unnamed hosts all alike is one problem, not thousands. */
#define DUP_DESC_MAX	16

static void dup_run(const struct fabric *f, const struct dnode *ids,
		    size_t n, struct hf_set *s, double now)
{
	const struct fab_node *first = ids[0].n;

	for (size_t k = 0; k < n && k < DUP_DESC_MAX; k++) {
		struct hf_finding x = { .kind = HF_DUP_DESC,
					.severity = HF_WARNING };
		const struct fab_node *other = ids[k ? 0 : 1].n;

		hc_where(&x, f, ids[k].id, 0);
		x.peer_guid = other->guid;
		x.peer_lid = hc_port_lid(other, 0);
		memcpy(x.peer_desc, x.desc, sizeof(x.desc));
		x.value = n;
		hc_text(&x, "%s description shared by %zu nodes (also 0x%016"
			PRIx64 ")", fabric_node_type_str(first->type), n,
			other->guid);
		hf_set_report(s, &x, now);
	}
}

static void dup_descs(const struct fabric *f, struct hf_set *s, double now)
{
	struct dnode *ids = malloc(f->n_nodes * sizeof(*ids) + 1);
	size_t n = 0;

	if (!ids)
		return;
	for (size_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].has_desc && f->nodes[i].desc[0])
			ids[n++] = (struct dnode){ &f->nodes[i], (int32_t)i };
	qsort(ids, n, sizeof(*ids), by_desc);
	for (size_t i = 0, j; i < n; i = j) {
		const struct fab_node *a = ids[i].n;

		for (j = i + 1; j < n; j++) {
			const struct fab_node *b = ids[j].n;

			if (b->type != a->type || strcmp(a->desc, b->desc))
				break;
		}
		if (j - i > 1)
			dup_run(f, ids + i, j - i, s, now);
	}
	free(ids);
}

/* The node and port of a port GUID (a switch's: port 0), by a scan. */
static bool port_by_guid(const struct fabric *f, uint64_t guid, int32_t *id,
			 unsigned *pn)
{
	for (size_t i = 0; guid && i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		for (unsigned p = 0; p <= n->num_ports; p++)
			if (fabric_is_endport(n, p) && n->ports[p].guid == guid) {
				*id = (int32_t)i;
				*pn = p;
				return true;
			}
	}
	return false;
}

static void lid_conflict(const struct fabric *f,
			 const struct hc_lid_conflict *c, struct hf_set *s,
			 double now)
{
	struct hf_finding x = { .kind = HF_LID_CONFLICT,
				.severity = HF_WARNING };
	struct hf_finding y = { 0 };
	int32_t id;
	unsigned pn;

	if (port_by_guid(f, c->port_guid, &id, &pn))
		hc_where(&x, f, id, pn);
	else
		x.guid = c->port_guid;
	if (port_by_guid(f, c->other_port_guid, &id, &pn)) {
		hc_where(&y, f, id, pn);
		x.peer_guid = y.guid;
		x.peer_port = y.port;
		memcpy(x.peer_desc, y.desc, sizeof(y.desc));
	} else {
		x.peer_guid = c->other_port_guid;
		x.peer_port = 0;
		x.peer_desc[0] = '\0';
	}
	x.peer_lid = c->lid;
	x.detail = c->lid;
	x.value = c->lid;
	hc_text(&x, "LID %u was also claimed by port 0x%016" PRIx64 ", which "
		"kept it: port 0x%016" PRIx64 " got another", c->lid,
		c->other_port_guid, c->port_guid);
	hf_set_report(s, &x, now);
}

void hc_identity(const struct fabric *f, const struct hc_identity_in *in,
		 struct hf_set *s, double now)
{
	dup_descs(f, s, now);
	if (!in)
		return;
	for (size_t i = 0; i < in->n_dup_guids; i++) {
		struct hf_finding x = { .kind = HF_DUP_GUID,
					.severity = HF_CRITICAL };

		hc_where_guid(&x, f, in->dup_guids[i], 0);
		hc_text(&x, "node GUID 0x%016" PRIx64 " is on two nodes: the "
			"one found second is left out of the fabric",
			in->dup_guids[i]);
		hf_set_report(s, &x, now);
	}
	for (size_t i = 0; i < in->n_lid_conflicts; i++)
		lid_conflict(f, &in->lid_conflicts[i], s, now);
}
