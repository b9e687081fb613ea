/*
 * checks_counters.c - error rates and congestion from the counter store,
 * unhealthy ports from the history, and the routing verdict (checks.h).
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "health/checks.h"
#include "health/checks_int.h"

#define XW	PC_N_ERRORS	/* PortXmitWait's slot in a window */

/* The counters judged here are the error counters and PortXmitWait
 * (XW): pc_desc (health/counters.h) names them and gives their widths. */

const char *hc_counter_name(unsigned c)
{
	if (c == PC_XMIT_WAIT)
		c = XW;
	return c <= XW ? pc_desc[c].name : "?";
}

static uint64_t win_key(uint64_t guid, uint8_t port)
{
	return (uint64_t)guid_hash(guid) ^ port;
}

void hc_counter_state_init(struct hc_counter_state *st)
{
	memset(st, 0, sizeof(*st));
	guidmap_init(&st->map);
}

void hc_counter_state_free(struct hc_counter_state *st)
{
	free(st->win);
	guidmap_free(&st->map);
	memset(st, 0, sizeof(*st));
}

static void win_remove(struct hc_counter_state *st, size_t i)
{
	guidmap_remove(&st->map, win_key(st->win[i].guid, st->win[i].port));
	if (i != st->n - 1) {
		st->win[i] = st->win[st->n - 1];
		guidmap_insert(&st->map, win_key(st->win[i].guid,
						 st->win[i].port), (uint32_t)i);
	}
	st->n--;
}

static struct hc_cwin *win_find(struct hc_counter_state *st,
				const struct pc_port *cp)
{
	uint32_t i = guidmap_find(&st->map, win_key(cp->node_guid, cp->port));

	if (i == GUIDMAP_NONE || st->win[i].guid != cp->node_guid ||
	    st->win[i].port != cp->port)
		return NULL;
	return &st->win[i];
}

/* Start a window at the port's totals as they were before its last read. */
static void win_start(struct hc_cwin *w, const struct pc_port *cp, bool before)
{
	for (unsigned c = 0; c < PC_N_ERRORS; c++)
		w->base[c] = cp->total[c] - (before ? cp->delta[c] : 0);
	w->base[XW] = cp->total[PC_XMIT_WAIT] -
		      (before ? cp->delta[PC_XMIT_WAIT] : 0);
	memcpy(w->mid, w->base, sizeof(w->mid));
	w->base_time = w->mid_time = before ? cp->prev_read : cp->last_read;
	w->ext_clears = cp->ext_clears;
	w->last_read = cp->last_read;
}

static struct hc_cwin *win_new(struct hc_counter_state *st,
			       const struct pc_port *cp, size_t max)
{
	struct hc_cwin *w;

	if (guidmap_find(&st->map, win_key(cp->node_guid, cp->port)) !=
	    GUIDMAP_NONE)
		return NULL;		/* a key collision: not tracked */
	while (st->n >= max && st->n) {
		size_t o = 0;

		for (size_t i = 1; i < st->n; i++)
			if (st->win[i].last_read < st->win[o].last_read)
				o = i;
		win_remove(st, o);
	}
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 64;
		struct hc_cwin *nw = realloc(st->win, cap * sizeof(*nw));

		if (!nw)
			return NULL;
		st->win = nw;
		st->cap = cap;
	}
	if (guidmap_insert(&st->map, win_key(cp->node_guid, cp->port),
			   (uint32_t)st->n) < 0)
		return NULL;
	w = &st->win[st->n++];
	memset(w, 0, sizeof(*w));
	w->guid = cp->node_guid;
	w->port = cp->port;
	win_start(w, cp, true);
	if (cp->reads <= 1) {
		/* the first read: its values are of unknown age; the next
		 * slide leaves them out */
		w->unknown_age = true;
		w->base_time = cp->last_read;
		for (unsigned c = 0; c < PC_N_ERRORS; c++)
			w->mid[c] = cp->total[c];
		w->mid[XW] = cp->total[PC_XMIT_WAIT];
		w->mid_time = cp->last_read;
	}
	return w;
}

/* A delta no counter of its width could make between two reads: the
 * PMA answered garbage (or the store was fed it). */
static bool absurd(const struct pc_port *cp)
{
	for (unsigned c = 0; c <= XW; c++) {
		uint64_t d = cp->delta[c == XW ? PC_XMIT_WAIT : c];

		if (d > (1ull << pc_desc[c].bits))
			return true;
	}
	return false;
}

/* A total below the window's start: the store's totals began again. */
static bool went_back(const struct hc_cwin *w, const struct pc_port *cp)
{
	for (unsigned c = 0; c < PC_N_ERRORS; c++)
		if (cp->total[c] < w->base[c] || cp->total[c] < w->mid[c])
			return true;
	return cp->total[PC_XMIT_WAIT] < w->base[XW] ||
	       cp->total[PC_XMIT_WAIT] < w->mid[XW];
}

static bool any_increment(const struct pc_port *cp)
{
	for (unsigned c = 0; c <= PC_XMIT_WAIT; c++)
		if (cp->delta[c])
			return true;
	return false;
}

static void judge(const struct hc_cwin *w, const struct pc_port *cp,
		  unsigned c, const struct fabric *f,
		  const struct health_policy *p, struct hf_set *s, double now)
{
	uint64_t total = c == XW ? cp->total[PC_XMIT_WAIT] : cp->total[c];
	uint64_t limit = c == XW ? p->xmit_wait_per_hour : p->err_per_hour[c];
	double span = cp->last_read - w->base_time;
	uint64_t count, rate;
	struct hf_finding x = { .kind = c == XW ? HF_CONGESTION : HF_ERROR_RATE,
				.severity = HF_WARNING };

	if (!limit || total <= w->base[c])
		return;
	count = total - w->base[c];
	/* per hour, never extrapolated from less than an hour */
	rate = span > 3600 ? (uint64_t)((double)count * 3600.0 / span) : count;
	if (rate < limit)
		return;
	if (c != XW && p->err_critical_factor && !w->unknown_age &&
	    rate / p->err_critical_factor >= limit)
		x.severity = HF_CRITICAL;
	hc_where_guid(&x, f, cp->node_guid, cp->port);
	if (!x.lid)
		x.lid = cp->lid;
	x.detail = c == XW ? PC_XMIT_WAIT : c;
	x.value = rate;
	x.limit = limit;
	if (w->unknown_age)
		hc_text(&x, "%s: %" PRIu64 " since the counters were last "
			"cleared (threshold %" PRIu64 " per hour)",
			pc_desc[c].name, count, limit);
	else
		hc_text(&x, "%s: %" PRIu64 " per hour (threshold %" PRIu64 ")",
			pc_desc[c].name, rate, limit);
	hf_set_report(s, &x, now);
}

/* Discards at a read after a link change (or while down): see checks.h. */
static void link_rebase(struct hc_cwin *w, const struct pc_port *cp,
			const struct hh_port *link, bool fresh)
{
	if (!link || !link->known)
		return;
	if (!link->up || (!fresh && link->changes != w->link_changes)) {
		w->base[PC_XMIT_DISCARDS] = cp->total[PC_XMIT_DISCARDS];
		w->mid[PC_XMIT_DISCARDS] = cp->total[PC_XMIT_DISCARDS];
	}
	w->link_changes = link->changes;
}

void hc_counter_port(struct hc_counter_state *st, const struct pc_port *cp,
		     const struct fabric *f, const struct health_policy *p,
		     struct hf_set *s, double now, const struct hh_port *link)
{
	bool fresh = false;

	struct hc_cwin *w = win_find(st, cp);
	double half = p->err_window_s > 0 ? p->err_window_s / 2 : 1800;

	if (!cp->reads || cp->last_read < cp->prev_read)
		return;
	if (w && cp->last_read == w->last_read)
		goto judge_all;		/* no new read since the last round */
	if (absurd(cp)) {
		if (w)
			win_start(w, cp, false);
		return;
	}
	if (!w) {
		if (!any_increment(cp))
			return;		/* a clean port needs no window */
		w = win_new(st, cp, p->max_ports ? p->max_ports : 65536);
		if (!w)
			return;
		fresh = true;
	} else if (cp->ext_clears != w->ext_clears || went_back(w, cp)) {
		/* someone cleared the counters: the errors are acknowledged;
		 * or the store started the port afresh (it left and came
		 * back): the window starts again too */
		win_start(w, cp, false);
		return;
	}
	w->last_read = cp->last_read;
	link_rebase(w, cp, link, fresh);
	/* slide: the window spans between half of err_window_s and all */
	if (cp->last_read - w->mid_time >= half) {
		memcpy(w->base, w->mid, sizeof(w->base));
		w->base_time = w->mid_time;
		for (unsigned c = 0; c < PC_N_ERRORS; c++)
			w->mid[c] = cp->total[c];
		w->mid[XW] = cp->total[PC_XMIT_WAIT];
		w->mid_time = cp->last_read;
		w->unknown_age = false;
	}
judge_all:
	for (unsigned c = 0; c <= XW; c++)
		judge(w, cp, c, f, p, s, now);
}

void hc_counters(struct hc_counter_state *st, const struct pc_port *ports,
		 size_t n, const struct fabric *f,
		 const struct health_policy *p, struct hf_set *s, double now)
{
	for (size_t i = 0; i < n; i++)
		hc_counter_port(st, &ports[i], f, p, s, now, NULL);
}

/*
 * Trap sources by LID: the end ports' LID ranges, built on the first
 * noisy source (one scan of the model), so a flood of sources costs one
 * lookup each.  Entry: node id << 8 | port, + 1; 0 for none.
 */
#define LID_MAP_SIZE	0xc000

struct lid_map {
	uint32_t *v;
	bool built;
};

static bool by_lid(struct lid_map *m, const struct fabric *f, uint16_t lid,
		   int32_t *id, unsigned *pn)
{
	if (!f || lid >= LID_MAP_SIZE)
		return false;
	if (!m->built) {
		m->built = true;
		m->v = calloc(LID_MAP_SIZE, sizeof(*m->v));
		for (size_t i = 0; m->v && i < f->n_nodes; i++) {
			const struct fab_node *n = &f->nodes[i];

			for (unsigned p = 0; p <= n->num_ports; p++) {
				const struct fab_port *pt = &n->ports[p];

				if (!fabric_is_endport(n, p) || !pt->lid)
					continue;
				for (unsigned l = pt->lid; l <= fabric_lid_top(pt) &&
				     l < LID_MAP_SIZE; l++)
					m->v[l] = (uint32_t)((i << 8 | p) + 1);
			}
		}
	}
	if (!m->v || !m->v[lid])
		return false;
	*id = (int32_t)((m->v[lid] - 1) >> 8);
	*pn = (m->v[lid] - 1) & 0xff;
	return true;
}

/*
 * Both ends of a flapping link flap: while the model has the link, it is
 * reported once, at its end with the lower (GUID, port).  True when the
 * peer of hp's port is that end and flaps too.
 */
static bool peer_reports(const struct health_history *h,
			 const struct fabric *f, const struct hh_port *hp,
			 double now)
{
	int32_t id = f ? fabric_find(f, hp->guid) : FAB_NONE;
	const struct fab_node *n, *o;
	const struct fab_port *p;
	const struct hh_port *q;

	if (id == FAB_NONE)
		return false;
	n = fabric_node(f, id);
	if (hp->port < 1 || hp->port > n->num_ports)
		return false;
	p = &n->ports[hp->port];
	if (p->peer_node == FAB_NONE)
		return false;
	o = fabric_node(f, p->peer_node);
	if (o->guid > hp->guid || (o->guid == hp->guid && p->peer_port > hp->port))
		return false;
	q = hh_port_find(h, o->guid, p->peer_port);
	return q && hh_flapping(h, q, now, NULL);
}

static void unhealthy_ports(const struct health_history *h,
			    const struct fabric *f, struct hf_set *s,
			    double now)
{
	for (size_t i = 0; i < h->n_ports; i++) {
		const struct hh_port *hp = &h->ports[i];
		struct hf_finding x = { .kind = HF_FLAPPING,
					.severity = HF_CRITICAL };
		unsigned v;

		if (!hh_flapping(h, hp, now, &v) || peer_reports(h, f, hp, now))
			continue;
		hc_where_guid(&x, f, hp->guid, hp->port);
		x.value = v;
		x.limit = h->pol.flap_count;
		hc_text(&x, "link went down and up %u times in %.0f s", v,
			h->pol.flap_window_s);
		hf_set_report(s, &x, now);
	}
}

static void unhealthy_nodes(const struct health_history *h,
			    const struct fabric *f, struct hf_set *s,
			    double now)
{
	for (size_t i = 0; i < h->n_nodes; i++) {
		const struct hh_node *hn = &h->nodes[i];
		struct hf_finding x = { .severity = HF_CRITICAL };
		unsigned v;

		if (hh_unresponsive(h, hn, &v)) {
			x.kind = HF_UNRESPONSIVE;
			hc_where_guid(&x, f, hn->guid, 0);
			x.value = v;
			x.limit = h->pol.unresponsive_k;
			hc_text(&x, "answered no SMP in %u of its last %u sweeps",
				v, h->pol.unresponsive_n);
			hf_set_report(s, &x, now);
		}
		if (hh_refusing(h, hn, &v)) {
			memset(&x, 0, sizeof(x));
			x.kind = HF_REFUSING_SETS;
			x.severity = HF_WARNING;
			hc_where_guid(&x, f, hn->guid, 0);
			x.value = v;
			x.limit = h->pol.unresponsive_k;
			hc_text(&x, "refused Sets in %u of its last %u sweeps",
				v, h->pol.unresponsive_n);
			hf_set_report(s, &x, now);
		}
	}
}

void hc_unhealthy(const struct health_history *h, const struct fabric *f,
		  const struct health_policy *p, struct hf_set *s, double now)
{
	struct lid_map lids = { 0 };

	(void)p;	/* the history holds the thresholds it was given */
	unhealthy_ports(h, f, s, now);
	unhealthy_nodes(h, f, s, now);
	for (size_t i = 0; i < h->n_traps; i++) {
		const struct hh_trap_src *t = &h->traps[i];
		struct hf_finding x = { .kind = HF_NOISY,
					.severity = HF_WARNING };
		unsigned v, pn;
		int32_t id;

		if (!hh_noisy(h, t, now, &v))
			continue;
		if (by_lid(&lids, f, t->lid, &id, &pn))
			hc_where(&x, f, id, pn);
		x.lid = t->lid;
		x.detail = t->lid;
		x.value = v;
		x.limit = h->pol.trap_rate;
		hc_text(&x, "%u traps in the last minute from LID %u "
			"(threshold %u)", v, t->lid, h->pol.trap_rate);
		hf_set_report(s, &x, now);
	}
	free(lids.v);
}

void hc_routing(const struct hc_routing_verdict *v, struct hf_set *s,
		double now)
{
	if (v->cycles) {
		struct hf_finding x = { .kind = HF_ROUTING_CYCLE,
					.severity = HF_CRITICAL };

		x.value = v->cycles;
		hc_text(&x, "the routes' channel dependency graph has %" PRIu64
			" cycle edge(s): traffic can deadlock", v->cycles);
		hf_set_report(s, &x, now);
	}
	if (v->unreachable) {
		struct hf_finding x = { .kind = HF_ROUTING_UNREACHABLE,
					.severity = HF_CRITICAL };

		/* the fabric as a whole (guid 0): the first failure named
		 * changes from one routing to the next */
		x.peer_guid = v->bad_switch_guid;
		x.peer_lid = v->bad_lid;
		x.value = v->unreachable;
		x.limit = v->pairs;
		hc_text(&x, "%" PRIu64 " of %" PRIu64 " source-destination pairs "
			"are unreachable (first: LID %u)", v->unreachable,
			v->pairs, v->bad_lid);
		hf_set_report(s, &x, now);
	}
}
