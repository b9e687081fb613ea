/*
 * health.c - the daemon's health state: the hooks that feed the history
 * (sweeps, traps, state changes, Set refusals), the rounds of checks
 * after each sweep and each counter sweep, the findings' log lines and
 * events, and the reference topology (see health.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "config/health_policy.h"
#include "model/topo_dump.h"
#include "sm/health/internal.h"
#include "sm/lid.h"
#include "sm/perf/perf.h"
#include "sm/sm.h"
#include "sm/topo_file.h"

double health_now(void)
{
	return ev_time();
}

/* The thresholds and choices of the configuration in force (padding
 * zeroed: policies are compared with memcmp()). */
static void policy_of(const struct sm *sm, struct health_policy *p)
{
	memset(p, 0, sizeof(*p));
	health_policy_from_config(&sm->cfg, p);
}

/* The policy from the configuration in force (a reload may change it). */
static void policy_refresh(struct sm_health *h)
{
	struct health_policy p;

	policy_of(h->sm, &p);
	if (memcmp(&p, &h->pol, sizeof(p))) {
		h->pol = p;
		hh_set_policy(&h->hist, &p);
	}
}

struct sm_health *health_get(struct sm *sm)
{
	struct sm_health *h = sm->health;

	if (h)
		return h;
	h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	h->sm = sm;
	policy_of(sm, &h->pol);
	fabric_init(&h->ref);
	evfile_init(&h->evf);
	hc_counter_state_init(&h->cst);
	if (hh_init(&h->hist, &h->pol) < 0) {
		free(h);
		return NULL;
	}
	if (hf_set_init(&h->findings, HEALTH_FINDINGS) < 0 ||
	    he_ring_init(&h->events, HEALTH_EVENTS) < 0) {
		hf_set_free(&h->findings);
		hh_free(&h->hist);
		free(h);
		return NULL;
	}
	sm->health = h;
	/* the counter checks after each counter sweep (SM_EV_PERF_DONE) */
	sm->perf_done_hook = sm_health_counters_done;
	return h;
}

void sm_health_free(struct sm *sm)
{
	struct sm_health *h = sm->health;

	if (!h)
		return;
	evfile_flush(&h->evf, &h->events, sm->cfg.dump_dir, health_now());
	evfile_close(&h->evf);
	he_ring_free(&h->events);
	hf_set_free(&h->findings);
	hh_free(&h->hist);
	hc_counter_state_free(&h->cst);
	fabric_free(&h->ref);
	free(h);
	sm->health = NULL;
	if (sm->perf_done_hook == sm_health_counters_done)
		sm->perf_done_hook = NULL;
}

void health_event(struct sm_health *h, enum he_type type, uint64_t guid,
		  uint8_t port, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	he_ring_vadd(&h->events, health_now(), type, guid, port, fmt, ap);
	va_end(ap);
	evfile_flush(&h->evf, &h->events, h->sm->cfg.dump_dir, health_now());
}

/* --------------------------------------------------------- the history */

static bool port_up(const struct fab_port *p)
{
	return p->valid && p->peer_node != FAB_NONE &&
	       pi_port_state(&p->pi) >= PORT_STATE_INIT;
}

static const char *desc_of(const struct fab_node *n, char *buf)
{
	return topo_desc_clean(n->has_desc ? n->desc : "", buf);
}

/*
 * Which end of a link speaks for it (its events, its history): the
 * switch end, else the end with the lower (GUID, port).  So a link
 * flapping is one finding, named from the switch port facing the host.
 */
static bool link_end(const struct fab_node *n, unsigned pn,
		     const struct fab_node *pe, unsigned pp)
{
	bool sw = n->type == NODE_TYPE_SWITCH, psw = pe->type == NODE_TYPE_SWITCH;

	if (sw != psw)
		return sw;
	return n->guid < pe->guid || (n->guid == pe->guid && pn < pp);
}

/* Whether port pn of node n (of `f`) speaks for its link: by its peer in
 * `f`, else by its peer in `other` (a link that went down), else yes. */
static bool speaks(const struct fabric *f, const struct fab_node *n,
		   unsigned pn, const struct fabric *other)
{
	const struct fab_port *p = &n->ports[pn];
	int32_t j;

	if (p->peer_node != FAB_NONE)
		return link_end(n, pn, fabric_node(f, p->peer_node), p->peer_port);
	j = fabric_find(other, n->guid);
	if (j == FAB_NONE || fabric_node(other, j)->num_ports < pn)
		return true;
	p = &fabric_node(other, j)->ports[pn];
	if (p->peer_node == FAB_NONE)
		return true;
	return link_end(n, pn, fabric_node(other, p->peer_node), p->peer_port);
}

/* Links of `a` that `b` lacks (same node GUID, port and peer), each link
 * once, from the end that speaks for it. */
static void links_gone(struct sm_health *h, const struct fabric *a,
		       const struct fabric *b, enum he_type type)
{
	char d1[TOPO_DESC_SIZE], d2[TOPO_DESC_SIZE];

	for (size_t i = 0; i < a->n_nodes; i++) {
		const struct fab_node *n = &a->nodes[i];
		int32_t j = fabric_find(b, n->guid);

		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (p->peer_node == FAB_NONE)
				continue;
			const struct fab_node *pe = fabric_node(a, p->peer_node);
			if (!link_end(n, pn, pe, p->peer_port))
				continue;
			if (j != FAB_NONE && fabric_node(b, j)->num_ports >= pn) {
				const struct fab_port *q =
					&fabric_node(b, j)->ports[pn];

				if (q->peer_node != FAB_NONE &&
				    fabric_node(b, q->peer_node)->guid == pe->guid &&
				    q->peer_port == p->peer_port)
					continue;
			}
			health_event(h, type, n->guid, (uint8_t)pn, "\"%s\" <->"
				     " 0x%016" PRIx64 " port %u \"%s\"",
				     desc_of(n, d1), pe->guid, p->peer_port,
				     desc_of(pe, d2));
		}
	}
}

/* Nodes of `a` that `b` lacks. */
static void nodes_gone(struct sm_health *h, const struct fabric *a,
		       const struct fabric *b, enum he_type type)
{
	char d[TOPO_DESC_SIZE];

	for (size_t i = 0; i < a->n_nodes; i++) {
		const struct fab_node *n = &a->nodes[i];

		if (fabric_find(b, n->guid) == FAB_NONE)
			health_event(h, type, n->guid, 0, "%s \"%s\"",
				     fabric_node_type_str(n->type), desc_of(n, d));
	}
}

static bool was_unanswered(const struct sm_health *h, uint64_t guid)
{
	for (unsigned i = 0; i < h->n_unanswered; i++)
		if (h->unanswered[i] == guid)
			return true;
	return false;
}

/*
 * Each link's state (from the end that speaks for it) and each node's
 * poll, for the classifier.  A
 * node of the old model missing from the new one behind a port that is
 * still up (the discovery's query across it got no answer) counts as a
 * poll it did not answer.
 */
static void feed_history(struct sm_health *h, const struct fabric *old,
			 const struct fabric *f, double now)
{
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		int32_t j = fabric_find(old, n->guid);

		/* discovered: it answered */
		hh_node_poll(&h->hist, n->guid, true, now);
		if (was_unanswered(h, n->guid))
			hh_set_refused(&h->hist, n->guid, now);
		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (!p->valid)
				continue;
			if (speaks(f, n, pn, old))
				hh_link_state(&h->hist, n->guid, (uint8_t)pn,
					      port_up(p), now);
			if (p->peer_node != FAB_NONE || j == FAB_NONE ||
			    pi_port_state(&p->pi) < PORT_STATE_INIT ||
			    fabric_node(old, j)->num_ports < pn)
				continue;
			const struct fab_port *o = &fabric_node(old, j)->ports[pn];
			if (o->peer_node == FAB_NONE)
				continue;
			uint64_t lost = fabric_node(old, o->peer_node)->guid;
			if (fabric_find(f, lost) == FAB_NONE)
				hh_node_poll(&h->hist, lost, false, now);
		}
	}
	/* ports of nodes that left: down */
	for (size_t i = 0; i < old->n_nodes; i++) {
		const struct fab_node *n = &old->nodes[i];

		if (fabric_find(f, n->guid) != FAB_NONE)
			continue;
		for (unsigned pn = 1; pn <= n->num_ports; pn++)
			if (n->ports[pn].peer_node != FAB_NONE &&
			    speaks(old, n, pn, f))
				hh_link_state(&h->hist, n->guid, (uint8_t)pn,
					      false, now);
	}
	h->n_unanswered = 0;
}

void sm_health_model(struct sm *sm, const struct fabric *next)
{
	struct sm_health *h = health_get(sm);
	const struct fabric *old = &sm->fabric;
	struct fabric_counts c;
	double t0 = health_now();

	if (!h)
		return;
	policy_refresh(h);
	if (!old->n_nodes) {
		fabric_count(next, &c);
		health_event(h, HE_NODE_IN, 0, 0, "fabric discovered: %zu"
			     " switches, %zu CAs, %zu routers, %zu links",
			     c.switches, c.cas, c.routers, c.links);
	} else {
		links_gone(h, old, next, HE_LINK_DOWN);
		nodes_gone(h, old, next, HE_NODE_OUT);
		nodes_gone(h, next, old, HE_NODE_IN);
		links_gone(h, next, old, HE_LINK_UP);
	}
	feed_history(h, old, next, health_now());
	log_debug("health: model compared and history fed (%.3f s)",
		  health_now() - t0);
}

void sm_health_discovered(struct sm *sm, const uint64_t *dup_guids, unsigned n)
{
	struct sm_health *h = health_get(sm);
	size_t max = sizeof(h->dup_guids) / sizeof(h->dup_guids[0]);

	if (!h)
		return;
	h->n_dup_guids = n < max ? n : (unsigned)max;
	memcpy(h->dup_guids, dup_guids, h->n_dup_guids * sizeof(*dup_guids));
}

void sm_health_lids(struct sm *sm, const struct lid_report *rep)
{
	struct sm_health *h = health_get(sm);
	size_t max = sizeof(h->lid_conf) / sizeof(h->lid_conf[0]);

	if (!h)
		return;
	h->n_lid_conf = 0;
	for (unsigned i = 0; i < rep->n_dups && h->n_lid_conf < max; i++) {
		struct hc_lid_conflict *c = &h->lid_conf[h->n_lid_conf++];

		c->lid = rep->dups[i].lid;
		c->port_guid = rep->dups[i].moved;
		c->other_port_guid = rep->dups[i].kept;
	}
}

void sm_health_unanswered(struct sm *sm, uint64_t node_guid, unsigned n)
{
	struct sm_health *h = health_get(sm);

	if (!h || !n || was_unanswered(h, node_guid) ||
	    h->n_unanswered == HEALTH_MAX_UNANSWERED)
		return;
	h->unanswered[h->n_unanswered++] = node_guid;
}

void sm_health_trap(struct sm *sm, uint16_t lid)
{
	struct sm_health *h = health_get(sm);

	if (h)
		hh_trap(&h->hist, lid, health_now());
}

void sm_health_state(struct sm *sm, const char *from, const char *to,
		     const char *why)
{
	struct sm_health *h = health_get(sm);

	if (h && strcmp(from, to))
		health_event(h, HE_SM_STATE, sm->port_guid, 0, "%s -> %s: %s",
			     from, to, why);
}

void sm_health_routes(struct sm *sm, const struct hc_routing_verdict *v,
		      const char *what)
{
	struct sm_health *h = health_get(sm);

	if (!h)
		return;
	h->routes = *v;
	h->have_routes = true;
	snprintf(h->routes_what, sizeof(h->routes_what), "%s", what);
}

/* ---------------------------------------------------------- findings */

static void finding_where(const struct hf_finding *f, char *buf, size_t len)
{
	int n;

	if (!f->guid) {
		snprintf(buf, len, "fabric");
		return;
	}
	n = snprintf(buf, len, "\"%s\" 0x%016" PRIx64, f->desc, f->guid);
	if (n > 0 && (size_t)n < len && f->port)
		n += snprintf(buf + n, len - (size_t)n, " port %u", f->port);
	if (n > 0 && (size_t)n < len && f->lid)
		n += snprintf(buf + n, len - (size_t)n, " lid %u", f->lid);
	if (n > 0 && (size_t)n < len && f->peer_guid)
		snprintf(buf + n, len - (size_t)n, " <-> \"%s\" 0x%016" PRIx64
			 " port %u", f->peer_desc, f->peer_guid, f->peer_port);
}

static void on_change(void *arg, const struct hf_finding *f, bool opened)
{
	struct sm_health *h = arg;
	char where[300];

	finding_where(f, where, sizeof(where));
	if (opened && f->severity == HF_CRITICAL)
		log_ratelimited(LOG_LVL_ERR, 1810, "health: critical %s: %s: %s",
				hf_kind_name(f->kind), where, f->text);
	else if (opened)
		log_ratelimited(LOG_LVL_WARN, 1811, "health: warning %s: %s: %s",
				hf_kind_name(f->kind), where, f->text);
	else
		log_ratelimited(LOG_LVL_INFO, 1812, "health: cleared %s %s: %s",
				hf_severity_name(f->severity),
				hf_kind_name(f->kind), where);
	health_event(h, opened ? HE_FINDING_OPENED : HE_FINDING_CLOSED,
		     f->guid, f->port, "%s %s: %s", hf_severity_name(f->severity),
		     hf_kind_name(f->kind), f->text);
}

/* ----------------------------------------------- reference topology */

/* The reference topology file configured (--topology-ref). */
static const char *health_ref_path(const struct sm *sm)
{
	return sm->cfg.topology_ref;
}

static void ref_drop(struct sm_health *h)
{
	fabric_free(&h->ref);
	fabric_init(&h->ref);
	h->have_ref = false;
	h->ref_path[0] = '\0';
	h->ref_stamped = false;
	h->ref_err[0] = '\0';
}

/* A reference topology file: what it states of each link, no more
 * (TOPO_LINK_AS_GIVEN).  0, or -errno with FILE:LINE and what was
 * expected (or FILE: why it could not be read) in err. */
static int ref_load(struct fabric *f, const char *path, char *err,
		    size_t errlen)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = read_file_max(path, HEALTH_REF_MAX, &buf, &len);

	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	rc = topo_parse_flags(f, path, buf, len, TOPO_LINK_AS_GIVEN, err,
			      errlen);
	free(buf);
	return rc;
}

const struct fabric *health_reference(struct sm_health *h)
{
	const char *path = health_ref_path(h->sm);
	struct file_stamp st;
	struct fabric nf;
	char err[300];
	int rc;

	if (!path || !path[0]) {
		if (h->have_ref)
			ref_drop(h);
		return NULL;
	}
	rc = file_stamp_get(path, &st);
	if (rc == 0 && h->ref_stamped && !strcmp(path, h->ref_path) &&
	    file_stamp_same(&st, &h->ref_stamp))
		return h->have_ref ? &h->ref : NULL;
	fabric_init(&nf);
	rc = ref_load(&nf, path, err, sizeof(err));
	if (rc < 0) {
		fabric_free(&nf);
		if (strcmp(err, h->ref_err)) {
			log_err("ERR 1813: reference topology %s%s", err,
				h->have_ref ? ": the last good reference stays"
					    : ": no reference in force");
			snprintf(h->ref_err, sizeof(h->ref_err), "%s", err);
		}
		return h->have_ref ? &h->ref : NULL;
	}
	fabric_free(&h->ref);
	h->ref = nf;
	h->have_ref = true;
	snprintf(h->ref_path, sizeof(h->ref_path), "%s", path);
	h->ref_stamp = st;
	h->ref_stamped = rc == 0;
	h->ref_err[0] = '\0';
	log_info("reference topology %s: %zu nodes", path, h->ref.n_nodes);
	return &h->ref;
}

/* ------------------------------------------------------------ rounds */

/* The SMs of another SM_Key heard from (sm/ha/rogue.h): one finding each,
 * critical while it says it is master. */
static void rogue_findings(struct sm *sm, struct hf_set *s, double now)
{
	sm_rogue_expire(sm);
	for (unsigned i = 0; i < SM_MAX_ROGUE; i++) {
		const struct sm_rogue *r = &sm->rogues[i];
		struct hf_finding x = { .kind = HF_ROGUE_SM,
					.severity = HF_WARNING };
		struct rogue_where w;

		if (!r->guid)
			continue;
		if (r->state == SM_STATE_MASTER)
			x.severity = HF_CRITICAL;
		x.guid = r->guid;
		x.lid = r->lid;
		if (sm_rogue_where(&sm->fabric, r->guid, &w)) {
			const struct fab_node *n = fabric_node(&sm->fabric,
							       w.node);

			x.guid = n->guid;
			x.port = w.port;
			snprintf(x.desc, sizeof(x.desc), "%s", n->desc);
			if (w.peer_node != FAB_NONE) {
				n = fabric_node(&sm->fabric, w.peer_node);
				x.peer_guid = n->guid;
				x.peer_port = w.peer_port;
				x.peer_lid = fabric_node_lid(n);
				snprintf(x.peer_desc, sizeof(x.peer_desc),
					 "%s", n->desc);
			}
		}
		x.value = r->priority;
		snprintf(x.text, sizeof(x.text), "SM 0x%016" PRIx64 " (priority"
			 " %u, %s) has another SM_Key: untrusted, %u SMInfo "
			 "Sets ignored", r->guid, r->priority,
			 sm_state_name((enum sm_state)r->state), r->sets);
		hf_set_report(s, &x, now);
	}
	for (unsigned i = 0; i < SM_MAX_BAD_MKEY; i++) {
		const struct sm_bad_mkey *b = &sm->bad_mkeys[i];
		struct hf_finding x = { .kind = HF_BAD_MKEY,
					.severity = HF_WARNING };
		int32_t id;

		if (!b->node_guid)
			continue;
		x.guid = b->node_guid;
		x.port = b->port;
		x.lid = b->lid;
		x.value = b->requester;
		id = fabric_find(&sm->fabric, b->node_guid);
		if (id != FAB_NONE)
			snprintf(x.desc, sizeof(x.desc), "%s",
				 fabric_node(&sm->fabric, id)->desc);
		snprintf(x.text, sizeof(x.text), "%u SMP(s) without its M_Key "
			 "refused (trap 256), the last from LID %u (DR SLID "
			 "%u): method 0x%02x, attribute 0x%04x", b->count,
			 b->requester, b->dr_slid, b->method, b->attr);
		hf_set_report(s, &x, now);
	}
}

void sm_health_sweep_done(struct sm *sm)
{
	struct sm_health *h = health_get(sm);
	struct hc_identity_in id = { 0 };
	double now = health_now();
	unsigned groups = HF_G_SWEEP | HF_G_HISTORY;

	if (!h)
		return;
	policy_refresh(h);
	const struct fabric *ref = health_reference(h);
	h->sweeps++;
	if (h->have_routes)
		groups |= HF_G_ROUTING;
	hf_set_begin(&h->findings, groups);
	hc_links(&sm->fabric, &h->pol, &h->findings, now);
	hc_reference(&sm->fabric, ref, &h->findings, now);
	id.dup_guids = h->dup_guids;
	id.n_dup_guids = h->n_dup_guids;
	id.lid_conflicts = h->lid_conf;
	id.n_lid_conflicts = h->n_lid_conf;
	hc_identity(&sm->fabric, &id, &h->findings, now);
	rogue_findings(sm, &h->findings, now);
	hc_unhealthy(&h->hist, &sm->fabric, &h->pol, &h->findings, now);
	if (h->have_routes)
		hc_routing(&h->routes, &h->findings, now);
	hf_set_end(&h->findings, now, on_change, h);
	iso_apply(h);
	log_debug("health: sweep round %u: %zu findings open (%.3f s)",
		  h->sweeps, hf_set_count(&h->findings), health_now() - now);
}

void sm_health_counters_done(struct sm *sm)
{
	struct sm_health *h = health_get(sm);
	const struct pc_store *st = perf_store(sm->perf);
	const struct pc_port *p;
	double now = health_now();
	size_t it = 0;

	if (!h || !st)
		return;
	policy_refresh(h);
	h->counters_at = now;
	hf_set_begin(&h->findings, HF_G_COUNTERS);
	while ((p = pc_next(st, &it)))
		hc_counter_port(&h->cst, p, &sm->fabric, &h->pol, &h->findings,
				now, hh_port_find(&h->hist, p->node_guid, p->port));
	hf_set_end(&h->findings, now, on_change, h);
}
