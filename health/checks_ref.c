/*
 * checks_ref.c - the fabric against a reference topology (checks.h).
 *
 * Nodes are matched by GUID.  Links are compared as pairs of (node GUID,
 * port), each link taken once, from its end with the lower (GUID, port).
 * A reference link missing from the fabric and a fabric link missing
 * from the reference that join the same two nodes are one cable moved
 * to other ports: both lists are sorted by their pair of nodes and
 * matched in one walk.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "health/checks.h"
#include "health/checks_int.h"

struct rlink {
	uint64_t g1, g2;	/* g1 <= g2 */
	uint8_t  p1, p2;
};

struct rlist {
	struct rlink *v;
	size_t n, cap;
};

static void rlist_add(struct rlist *l, uint64_t ga, uint8_t pa, uint64_t gb,
		      uint8_t pb)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct rlink *nv = realloc(l->v, cap * sizeof(*nv));

		if (!nv)
			return;		/* out of memory: fewer findings */
		l->v = nv;
		l->cap = cap;
	}
	if (ga > gb || (ga == gb && pa > pb))
		l->v[l->n++] = (struct rlink){ gb, ga, pb, pa };
	else
		l->v[l->n++] = (struct rlink){ ga, gb, pa, pb };
}

static int by_pair(const void *a, const void *b)
{
	const struct rlink *x = a, *y = b;

	if (x->g1 != y->g1)
		return x->g1 < y->g1 ? -1 : 1;
	if (x->g2 != y->g2)
		return x->g2 < y->g2 ? -1 : 1;
	if (x->p1 != y->p1)
		return x->p1 < y->p1 ? -1 : 1;
	return (x->p2 > y->p2) - (x->p2 < y->p2);
}

/* The link of port pn of node n, taken from its lower end only. */
static bool lower_end(const struct fabric *f, const struct fab_node *n,
		      unsigned pn)
{
	const struct fab_port *p = &n->ports[pn];
	const struct fab_node *o;

	if (p->peer_node == FAB_NONE)
		return false;
	o = fabric_node(f, p->peer_node);
	return n->guid < o->guid || (n->guid == o->guid && pn < p->peer_port);
}

/* Does `f` link (ga, pa) to (gb, pb)? */
static bool has_link(const struct fabric *f, uint64_t ga, unsigned pa,
		     uint64_t gb, unsigned pb, int32_t *ida)
{
	int32_t a = fabric_find(f, ga);
	const struct fab_node *n;
	const struct fab_port *p;

	*ida = a;
	if (a == FAB_NONE)
		return false;
	n = fabric_node(f, a);
	if (pa > n->num_ports)
		return false;
	p = &n->ports[pa];
	return p->peer_node != FAB_NONE && p->peer_port == pb &&
	       fabric_node(f, p->peer_node)->guid == gb;
}

static void below_ref(const struct fabric *f, int32_t id, unsigned pn,
		      const struct fab_node *rn, unsigned rpn,
		      struct hf_set *s, double now)
{
	const struct fab_node *n = fabric_node(f, id);
	const struct fab_port *p = &n->ports[pn], *rp = &rn->ports[rpn];
	unsigned lanes, rate, rlanes, rrate;

	if (!p->valid || pi_port_state(&p->pi) < PORT_STATE_INIT)
		return;		/* a link that is down is no slower */
	lanes = hc_width_lanes(p->pi.link_width_active);
	rate = hc_speed_active(&p->pi, fabric_port_cap_mask(n, pn));
	rlanes = hc_width_lanes(rp->pi.link_width_active);
	rrate = hc_speed_active(&rp->pi, fabric_port_cap_mask(rn, rpn));
	if ((lanes && rlanes && lanes < rlanes) || (rate && rrate && rate < rrate)) {
		struct hf_finding x = { .kind = HF_LINK_BELOW_REF,
					.severity = HF_WARNING };

		hc_where(&x, f, id, pn);
		x.value = (uint64_t)lanes << 32 | rate;
		x.limit = (uint64_t)rlanes << 32 | rrate;
		hc_text(&x, "link runs %s%s, the reference has %s%s",
			hc_width_name(lanes), hc_speed_name(rate),
			rlanes ? hc_width_name(rlanes) : "",
			rrate ? hc_speed_name(rrate) : "");
		hf_set_report(s, &x, now);
	}
}

/* Descriptions compared as topology files write them: a byte outside
 * printable ASCII is a space (model/topo_dump.c). */
static bool desc_differs(const char *a, const char *b)
{
	for (size_t i = 0; i < HF_DESC_SIZE - 1; i++) {
		unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];

		if (!x || !y)
			return x != y;
		if (x < 0x20 || x >= 0x7f)
			x = ' ';
		if (y < 0x20 || y >= 0x7f)
			y = ' ';
		if (x != y)
			return true;
	}
	return false;
}

static void ref_nodes(const struct fabric *f, const struct fabric *ref,
		      struct hf_set *s, double now)
{
	for (size_t i = 0; i < ref->n_nodes; i++) {
		const struct fab_node *rn = &ref->nodes[i];
		int32_t id = fabric_find(f, rn->guid);
		struct hf_finding x = { .severity = HF_WARNING };

		if (id == FAB_NONE) {
			x.kind = HF_REF_MISSING_NODE;
			x.severity = HF_CRITICAL;
			hc_where(&x, ref, (int32_t)i, 0);
			x.lid = 0;	/* the reference's LIDs are history */
			hc_text(&x, "%s in the reference topology is missing",
				fabric_node_type_str(rn->type));
			hf_set_report(s, &x, now);
		} else if (rn->has_desc && fabric_node(f, id)->has_desc &&
			   desc_differs(rn->desc, fabric_node(f, id)->desc)) {
			struct hf_finding y = { 0 };

			x.kind = HF_REF_DESC_CHANGED;
			hc_where(&x, f, id, 0);
			hc_where(&y, ref, (int32_t)i, 0);
			hc_text(&x, "description was \"%.60s\" in the reference",
				y.desc);
			hf_set_report(s, &x, now);
		}
	}
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		struct hf_finding x = { .kind = HF_REF_UNEXPECTED_NODE,
					.severity = HF_WARNING };

		if (fabric_find(ref, n->guid) != FAB_NONE)
			continue;
		hc_where(&x, f, (int32_t)i, 0);
		hc_text(&x, "%s is not in the reference topology",
			fabric_node_type_str(n->type));
		hf_set_report(s, &x, now);
	}
}

/*
 * Links of `a` whose two nodes are both in `b` but which `b` does not
 * have, into `out`.  With check_speed, a link both have is compared
 * (a is the reference, b the fabric).
 */
static void links_not_in(const struct fabric *a, const struct fabric *b,
			 bool check_speed, struct rlist *out,
			 struct hf_set *s, double now)
{
	for (size_t i = 0; i < a->n_nodes; i++) {
		const struct fab_node *n = &a->nodes[i];

		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];
			const struct fab_node *o;
			int32_t id;

			if (!lower_end(a, n, pn))
				continue;
			o = fabric_node(a, p->peer_node);
			if (fabric_find(b, n->guid) == FAB_NONE ||
			    fabric_find(b, o->guid) == FAB_NONE)
				continue;	/* the node's own finding says it */
			if (!has_link(b, n->guid, pn, o->guid, p->peer_port, &id))
				rlist_add(out, n->guid, (uint8_t)pn, o->guid,
					  p->peer_port);
			else if (check_speed)
				below_ref(b, id, pn, n, pn, s, now);
		}
	}
}

static void report_link(const struct fabric *f, const struct fabric *ref,
			enum hf_kind kind, const struct rlink *l,
			const struct rlink *now_at, struct hf_set *s,
			double now)
{
	struct hf_finding x = { .kind = kind, .severity = HF_WARNING };
	struct hf_finding peer = { 0 };

	/* both nodes are in the fabric (else their own findings say it):
	 * named as they are now */
	(void)ref;
	hc_where_guid(&x, f, l->g1, l->p1);
	hc_where_guid(&peer, f, l->g2, l->p2);
	x.peer_guid = l->g2;
	x.peer_port = l->p2;
	x.peer_lid = peer.lid;
	memcpy(x.peer_desc, peer.desc, sizeof(peer.desc));
	switch (kind) {
	case HF_REF_MISSING_LINK:
		hc_text(&x, "link to 0x%016" PRIx64 "[%u] in the reference "
			"topology is missing", l->g2, l->p2);
		break;
	case HF_REF_UNEXPECTED_LINK:
		hc_text(&x, "link to 0x%016" PRIx64 "[%u] is not in the "
			"reference topology", l->g2, l->p2);
		break;
	default:
		x.value = (uint64_t)now_at->p1 << 8 | now_at->p2;
		hc_text(&x, "cable to 0x%016" PRIx64 " moved: the reference "
			"has [%u] - [%u], the fabric [%u] - [%u]", l->g2, l->p1,
			l->p2, now_at->p1, now_at->p2);
		break;
	}
	hf_set_report(s, &x, now);
}

void hc_reference(const struct fabric *f, const struct fabric *ref,
		  struct hf_set *s, double now)
{
	struct rlist miss = { 0 }, extra = { 0 };
	size_t i = 0, j = 0;

	if (!ref)
		return;
	ref_nodes(f, ref, s, now);
	links_not_in(ref, f, true, &miss, s, now);
	links_not_in(f, ref, false, &extra, s, now);
	if (miss.n)
		qsort(miss.v, miss.n, sizeof(*miss.v), by_pair);
	if (extra.n)
		qsort(extra.v, extra.n, sizeof(*extra.v), by_pair);
	/* one walk: equal node pairs are moves, the rest missing or extra */
	while (i < miss.n || j < extra.n) {
		const struct rlink *m = i < miss.n ? &miss.v[i] : NULL;
		const struct rlink *e = j < extra.n ? &extra.v[j] : NULL;

		if (m && e && m->g1 == e->g1 && m->g2 == e->g2) {
			report_link(f, ref, HF_REF_CABLE_MOVED, m, e, s, now);
			i++;
			j++;
		} else if (m && (!e || m->g1 < e->g1 ||
				 (m->g1 == e->g1 && m->g2 < e->g2))) {
			report_link(f, ref, HF_REF_MISSING_LINK, m, NULL, s, now);
			i++;
		} else {
			report_link(f, ref, HF_REF_UNEXPECTED_LINK, e, NULL, s, now);
			j++;
		}
	}
	free(miss.v);
	free(extra.v);
}
