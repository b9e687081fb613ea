/*
 * vlsplit.c - QoS classes and virtual layers sharing the SL and VL space
 * (see vlsplit.h for the rule).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/vlsplit.h"

#define NO_CLASS	0xff

/* The key a QoS VL is grouped by on `vls` VLs: the VL itself, or, when
 * the classes must merge, the VL as the QoS tables mask it there. */
static unsigned class_key(unsigned vl, unsigned vls, bool merge)
{
	return merge && vls < VLS_MAX ? vl & (vls - 1) : vl;
}

/* Classes by key, in key order; returns how many. */
static unsigned make_classes(const struct vl_qos *q, unsigned vls,
			     bool merge, struct vl_split *s)
{
	bool seen[16] = { false };
	unsigned n = 0;

	for (unsigned sl = 0; sl < VLS_SL_N; sl++)
		if ((q->sls >> sl & 1) && q->vl[sl] < 15)
			seen[class_key(q->vl[sl], vls, merge)] = true;
	for (unsigned k = 0; k < 16; k++)
		if (seen[k] && n < VLS_MAX)
			s->class_vl[n++] = (uint8_t)k;
	return n;
}

static unsigned class_of_key(const struct vl_split *s, unsigned key)
{
	for (unsigned c = 0; c < s->n_classes; c++)
		if (s->class_vl[c] == key)
			return c;
	return NO_CLASS;
}

int vlsplit_plan(const struct vl_qos *q, unsigned vls, unsigned max_layers,
		 struct vl_split *s)
{
	unsigned n, merged, l, in_use = 0, sl_cap;
	bool merge;

	memset(s, 0, sizeof(*s));
	if (vls < 1)
		vls = 1;
	if (vls > VLS_MAX)
		vls = VLS_MAX;
	/* a power of two below 15: the VLs OperationalVLs can give */
	while (vls < VLS_MAX && (vls & (vls - 1)))
		vls &= vls - 1;
	n = make_classes(q, vls, false, s);
	if (!n)
		return -EINVAL;
	merge = n > vls;
	merged = merge ? make_classes(q, vls, true, s) : n;
	s->n_classes = (uint8_t)merged;
	s->qos_classes = (uint8_t)n;
	s->vls = (uint8_t)vls;
	s->reserved = q->sls;
	for (unsigned sl = 0; sl < VLS_SL_N; sl++) {
		s->class_of[sl] = NO_CLASS;
		if ((q->sls >> sl & 1) && q->vl[sl] < 15) {
			s->sls |= (uint16_t)(1u << sl);
			s->class_of[sl] = (uint8_t)class_of_key(s,
					  class_key(q->vl[sl], vls, merge));
			in_use++;
		}
	}
	/* unnamed SLs: their QoS VL's class, else the default SL's */
	for (unsigned sl = 0; sl < VLS_SL_N; sl++) {
		unsigned c;

		if (s->class_of[sl] != NO_CLASS)
			continue;
		c = q->vl[sl] < 15 ? class_of_key(s, class_key(q->vl[sl], vls,
							       merge))
				   : NO_CLASS;
		if (c == NO_CLASS)
			c = s->class_of[q->default_sl & 15];
		s->class_of[sl] = (uint8_t)(c == NO_CLASS ? 0 : c);
	}
	memcpy(s->home, s->class_of, sizeof(s->home));
	s->wanted = (uint8_t)(max_layers && max_layers < vls ? max_layers
							     : vls);
	l = vls / merged;
	for (unsigned sl = 0; sl < VLS_SL_N; sl++)
		if ((q->sls >> sl & 1) && q->vl[sl] >= 15)
			in_use++;		/* named, but dropped: kept out */
	sl_cap = 1 + (VLS_SL_N - in_use) / merged;
	s->sl_budget = (uint8_t)sl_cap;
	if (sl_cap < l) {
		l = sl_cap;
		s->sl_bound = true;
	}
	if (max_layers && max_layers < l) {
		l = max_layers;
		s->sl_bound = false;
	}
	s->budget = (uint8_t)(l ? l : 1);
	vlsplit_layout(s, s->budget);
	return 0;
}

void vlsplit_layout(struct vl_split *s, unsigned used)
{
	unsigned next = 0, n = s->n_classes;

	if (!n)
		return;
	if (used < 1)
		used = 1;
	if (used > s->budget)
		used = s->budget;
	s->layers = (uint8_t)used;
	s->class_vls = (uint8_t)used;
	memset(s->sl, 0, sizeof(s->sl));
	memcpy(s->class_of, s->home, sizeof(s->class_of));
	/* layer 0: the class's lowest QoS SL stands for it */
	for (unsigned c = 0; c < n; c++)
		for (unsigned sl = VLS_SL_N; sl-- > 0;)
			if ((s->sls >> sl & 1) && s->class_of[sl] == c)
				s->sl[c][0] = (uint8_t)sl;
	for (unsigned sl = 0; sl < VLS_SL_N; sl++) {
		s->layer_of[sl] = 0;
		s->vl_of[sl] = (uint8_t)(s->class_of[sl] * used);
	}
	/* layers 1..: free SLs in ascending order, layer by layer */
	for (unsigned j = 1; j < used; j++)
		for (unsigned c = 0; c < n; c++) {
			while (next < VLS_SL_N && (s->reserved >> next & 1))
				next++;
			if (next >= VLS_SL_N)	/* the plan left room: a bug */
				return;
			s->sl[c][j] = (uint8_t)next;
			s->class_of[next] = (uint8_t)c;
			s->layer_of[next] = (uint8_t)j;
			s->vl_of[next] = (uint8_t)(c * used + j);
			next++;
		}
}

unsigned vlsplit_path_sl(const struct vl_split *s, unsigned qos_sl,
			 unsigned layer)
{
	unsigned c;

	qos_sl &= 15;
	if (!s->n_classes)
		return layer & 15;
	if (layer >= s->layers)
		layer = s->layers ? s->layers - 1u : 0;
	if (layer == 0 && (s->sls >> qos_sl & 1))
		return qos_sl;
	c = s->class_of[qos_sl];
	return s->sl[c < s->n_classes ? c : 0][layer];
}

unsigned vlsplit_port_vl(const struct vl_split *s, unsigned vl,
			 unsigned port_vls)
{
	unsigned n = s->n_classes ? s->n_classes : 1, per, c, j;

	if (!s->class_vls || !port_vls || port_vls >= n * s->class_vls)
		return vl;
	c = vl / s->class_vls;
	j = vl % s->class_vls;
	per = port_vls / n;
	return per ? c * per + (j < per ? j : per - 1) : c % port_vls;
}

void vlsplit_sl2vl(const struct vl_split *s, unsigned port_vls,
		   uint8_t vl[VLS_SL_N])
{
	unsigned n = s->n_classes ? s->n_classes : 1, per;

	if (!port_vls || port_vls >= (unsigned)n * s->layers) {
		memcpy(vl, s->vl_of, VLS_SL_N);
		return;
	}
	per = port_vls / n;
	for (unsigned sl = 0; sl < VLS_SL_N; sl++) {
		unsigned c = s->class_of[sl], j = s->layer_of[sl];

		if (per)
			vl[sl] = (uint8_t)(c * per + (j < per ? j : per - 1));
		else
			vl[sl] = (uint8_t)(c % port_vls);
	}
}

/* "0,2" for the QoS SLs of class c */
static void class_sls(const struct vl_split *s, unsigned c, char *buf,
		      size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned sl = 0; sl < VLS_SL_N && o < len; sl++)
		if ((s->sls >> sl & 1) && s->class_of[sl] == c)
			o += (size_t)snprintf(buf + o, len - o, "%s%u",
					      o ? "," : "", sl);
}

void vlsplit_describe(const struct vl_split *s, char *buf, size_t len)
{
	size_t o;
	unsigned l = s->layers;

	o = (size_t)snprintf(buf, len, "%u QoS class%s (", s->n_classes,
			     s->n_classes == 1 ? "" : "es");
	for (unsigned c = 0; c < s->n_classes && o < len; c++) {
		char sls[48];

		class_sls(s, c, sls, sizeof(sls));
		if (l > 1)
			o += (size_t)snprintf(buf + o, len - o, "%sSL %s on VL "
					      "%u-%u", c ? ", " : "", sls,
					      c * l, c * l + l - 1);
		else
			o += (size_t)snprintf(buf + o, len - o, "%sSL %s on VL "
					      "%u", c ? ", " : "", sls, c);
	}
	if (o < len)
		snprintf(buf + o, len - o, "), %u layer%s each of %u VLs", l,
			 l == 1 ? "" : "s", s->vls);
}

void vlsplit_reduced(const struct vl_split *s, unsigned used, bool short_,
		     char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	if (s->n_classes < s->qos_classes)
		o += (size_t)snprintf(buf, len, "%u QoS classes do not fit %u "
				      "VLs: merged into %u by VL & %u (as the "
				      "QoS tables on %u VLs)", s->qos_classes,
				      s->vls, s->n_classes, s->vls - 1u,
				      s->vls);
	if (o < len && s->budget < s->wanted && used >= s->budget && short_)
		snprintf(buf + o, len - o, "%slayers capped at %u per class "
			 "(the engine may use %u without QoS) by %s", o ? "; " :
			 "", s->budget, s->wanted, s->sl_bound ?
			 "the 16 SLs (QoS SLs in use plus one SL per class "
			 "and extra layer)" : "the VLs each class gets");
}

unsigned vlsplit_fabric_vls(const struct fabric *f, unsigned cap)
{
	static const unsigned n_vl[] = { 0, 1, 2, 4, 8, 15 };
	unsigned k = cap && cap < VLS_MAX ? cap : VLS_MAX;

	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		if (n->type != NODE_TYPE_SWITCH)
			continue;
		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn], *q;
			unsigned a, b;

			if (!routing_port_up(f, p) ||
			    fabric_node(f, p->peer_node)->type !=
			    NODE_TYPE_SWITCH)
				continue;
			q = &fabric_node(f, p->peer_node)->ports[p->peer_port];
			a = pi_vl_cap(&p->pi);
			b = pi_vl_cap(&q->pi);
			if (b < a)
				a = b;
			if (a && a < 6 && n_vl[a] < k)
				k = n_vl[a];
		}
	}
	return k;
}
