/*
 * report.c - the quality report of a routing result (see report.h).
 *
 * For one destination LID the tables make every switch point at one next
 * hop, so the switches that reach the LID form a tree rooted at the
 * switch the destination port hangs off.  Walking every (source, LID)
 * pair would cost ports x LIDs x hops; instead, per LID, each switch
 * gets its distance to the root along the tree (settled once, as in
 * verify.c), and then, from the farthest switches inward, each switch
 * adds what it carries (its own source ports plus what its children
 * hand it) to the channel towards its parent and to the parent's count.
 * That is one step per switch and LID: O(switches x LIDs).
 *
 * Shortest paths for the stretch come from one breadth-first search per
 * switch over the links that are up, kept as a switches x switches byte
 * matrix (8192 switches: 64 MiB, the cap).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/report.h"

#define FAR	0xff		/* no path in the distance matrix */

enum { ST_UNKNOWN, ST_ON_WALK, ST_GOOD, ST_BAD };

struct rep {
	const struct fabric *f;
	const struct routing_result *r;
	size_t S;
	int32_t *sw_node;	/* switch index -> node id */
	int32_t *sw_idx;	/* node id -> switch index, -1 */
	uint32_t *chan_off;	/* channel of switch k port p: chan_off[k] + p */
	int32_t *next_sw;	/* per channel: the switch index at the far end, -1 */
	uint32_t *nsrc;		/* source ports per switch */
	uint64_t *load;		/* per channel */
	uint8_t *dist;		/* S x S shortest hops, FAR; NULL: no stretch */
	/* per LID scratch */
	uint8_t *state;
	uint16_t *hops;
	uint8_t *port;		/* the LFT entry each switch uses */
	uint64_t *acc;
	uint32_t *walk;
	uint32_t *order;
	uint32_t *bucket;	/* hop-count histogram for the ordering */
};

static void rep_free(struct rep *v)
{
	free(v->sw_node);
	free(v->sw_idx);
	free(v->chan_off);
	free(v->next_sw);
	free(v->nsrc);
	free(v->load);
	free(v->dist);
	free(v->state);
	free(v->hops);
	free(v->port);
	free(v->acc);
	free(v->walk);
	free(v->order);
	free(v->bucket);
}

static bool peer_is_switch(const struct fabric *f, const struct fab_port *p)
{
	return fabric_node(f, p->peer_node)->type == NODE_TYPE_SWITCH;
}

static int setup(struct rep *v, struct routing_report *rep)
{
	const struct fabric *f = v->f;
	size_t S, n_chan;
	long ns = routing_number_switches(f, &v->sw_idx, &n_chan);

	if (ns < 0)
		return (int)ns;
	v->S = S = (size_t)ns;
	v->sw_node = malloc((S + 1) * sizeof(*v->sw_node));
	v->chan_off = malloc((S + 1) * sizeof(*v->chan_off));
	v->next_sw = malloc((n_chan + 1) * sizeof(*v->next_sw));
	v->nsrc = calloc(S + 1, sizeof(*v->nsrc));
	v->load = calloc(n_chan + 1, sizeof(*v->load));
	v->state = malloc(S + 1);
	v->hops = malloc((S + 1) * sizeof(*v->hops));
	v->port = malloc(S + 1);
	v->acc = malloc((S + 1) * sizeof(*v->acc));
	v->walk = malloc((S + 1) * sizeof(*v->walk));
	v->order = malloc((S + 1) * sizeof(*v->order));
	v->bucket = malloc((S + 2) * sizeof(*v->bucket));
	if (!v->sw_node || !v->chan_off || !v->next_sw || !v->nsrc ||
	    !v->load || !v->state || !v->hops || !v->port || !v->acc ||
	    !v->walk || !v->order || !v->bucket)
		return -ENOMEM;

	n_chan = 0;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		if (n->type == NODE_TYPE_SWITCH) {
			int32_t k = v->sw_idx[i];

			v->sw_node[k] = (int32_t)i;
			v->chan_off[k] = (uint32_t)n_chan;
			for (unsigned p = 0; p <= n->num_ports; p++) {
				const struct fab_port *pt = &n->ports[p];

				v->next_sw[n_chan + p] = -1;
				if (p && routing_port_up(f, pt) &&
				    peer_is_switch(f, pt)) {
					v->next_sw[n_chan + p] =
						v->sw_idx[pt->peer_node];
					rep->channels++;
				}
			}
			n_chan += (size_t)n->num_ports + 1;
			continue;
		}
		for (unsigned p = 1; p <= n->num_ports; p++) {
			const struct fab_port *pt = &n->ports[p];

			if (pt->lid && routing_port_up(f, pt) &&
			    peer_is_switch(f, pt)) {
				v->nsrc[v->sw_idx[pt->peer_node]]++;
				rep->ports++;
			}
		}
	}
	rep->switches = S;
	return 0;
}

/* Shortest switch-to-switch hops, one BFS per switch. */
static int distances(struct rep *v)
{
	size_t S = v->S;
	uint32_t *queue;

	if (S > REPORT_MAX_STRETCH_SWITCHES)
		return 0;
	v->dist = malloc(S * S + 1);
	queue = malloc((S + 1) * sizeof(*queue));
	if (!v->dist || !queue) {
		free(queue);
		return -ENOMEM;
	}
	memset(v->dist, FAR, S * S);
	for (size_t s = 0; s < S; s++) {
		uint8_t *d = v->dist + s * S;
		size_t head = 0, tail = 0;

		d[s] = 0;
		queue[tail++] = (uint32_t)s;
		while (head < tail) {
			uint32_t k = queue[head++];
			const struct fab_node *n =
				fabric_node(v->f, v->sw_node[k]);

			if (d[k] == FAR - 1)
				continue;
			for (unsigned p = 1; p <= n->num_ports; p++) {
				int32_t m = v->next_sw[v->chan_off[k] + p];

				if (m >= 0 && d[m] == FAR) {
					d[m] = (uint8_t)(d[k] + 1);
					queue[tail++] = (uint32_t)m;
				}
			}
		}
	}
	free(queue);
	return 0;
}

/*
 * Settle switch k for the LID whose port hangs off switch `root` at port
 * `root_port`: follow next hops until a settled switch or a switch on
 * this walk (a loop), then give the walk its outcome.
 */
static void settle(struct rep *v, uint32_t k, uint32_t root,
		   uint8_t root_port)
{
	size_t len = 0;
	uint8_t outcome;
	uint16_t base = 0;

	for (;;) {
		uint8_t p;
		int32_t m;

		if (v->state[k] == ST_GOOD) {
			outcome = ST_GOOD;
			base = v->hops[k];
			break;
		}
		if (v->state[k] != ST_UNKNOWN) {	/* bad, or a loop */
			outcome = ST_BAD;
			break;
		}
		p = v->port[k];
		if (k == root && p == root_port) {
			v->state[k] = ST_GOOD;
			v->hops[k] = 0;
			outcome = ST_GOOD;
			base = 0;
			break;
		}
		v->state[k] = ST_ON_WALK;
		v->walk[len++] = k;
		m = p == LFT_NO_PATH || p == 0 ||
		    p > fabric_node(v->f, v->sw_node[k])->num_ports ? -1 :
		    v->next_sw[v->chan_off[k] + p];
		if (m < 0) {
			outcome = ST_BAD;
			break;
		}
		k = (uint32_t)m;
	}
	while (len) {
		uint32_t w = v->walk[--len];

		v->state[w] = outcome;
		if (outcome == ST_GOOD)
			v->hops[w] = ++base;
	}
}

static void one_lid(struct rep *v, struct routing_report *rep, uint16_t lid,
		    uint32_t root, uint8_t root_port, uint16_t *layers_seen)
{
	const struct routing_result *r = v->r;
	size_t S = v->S;
	uint16_t max_h = 0;
	uint32_t n_good = 0;

	for (size_t k = 0; k < S; k++) {
		const struct lft *t = &r->lft[v->sw_node[k]];

		v->state[k] = ST_UNKNOWN;
		v->port[k] = t->port && lid <= t->top ? t->port[lid]
						      : LFT_NO_PATH;
	}
	for (size_t k = 0; k < S; k++)
		if (v->state[k] == ST_UNKNOWN)
			settle(v, (uint32_t)k, root, root_port);

	/* counting sort of the good switches by hops, farthest first */
	memset(v->bucket, 0, (S + 2) * sizeof(*v->bucket));
	for (size_t k = 0; k < S; k++) {
		if (v->state[k] != ST_GOOD)
			continue;
		v->acc[k] = v->nsrc[k];
		v->bucket[v->hops[k]]++;
		n_good++;
		if (v->hops[k] > max_h)
			max_h = v->hops[k];
		if (!v->nsrc[k])
			continue;
		rep->routes += v->nsrc[k];
		rep->hops_mean += (double)v->nsrc[k] * v->hops[k];
		if (v->hops[k] > rep->hops_max)
			rep->hops_max = v->hops[k];
		if (v->dist) {
			unsigned sh = v->dist[(size_t)root * S + k];

			rep->shortest_mean += (double)v->nsrc[k] * sh;
			if (v->hops[k] > sh && v->hops[k] - sh > rep->extra_max)
				rep->extra_max = v->hops[k] - sh;
		}
		*layers_seen |= (uint16_t)(1u << routing_layer(r, v->sw_node[k],
							       lid));
	}
	{
		uint32_t pos = 0;

		for (int h = max_h; h >= 0; h--) {
			uint32_t c = v->bucket[h];

			v->bucket[h] = pos;
			pos += c;
		}
	}
	for (size_t k = 0; k < S; k++)
		if (v->state[k] == ST_GOOD)
			v->order[v->bucket[v->hops[k]]++] = (uint32_t)k;
	for (uint32_t i = 0; i < n_good; i++) {
		uint32_t k = v->order[i];
		uint32_t c;

		if (v->hops[k] == 0)
			break;		/* the root, last */
		c = v->chan_off[k] + v->port[k];
		v->load[c] += v->acc[k];
		v->acc[v->next_sw[c]] += v->acc[k];
	}
}

/* The busiest channel: switch k's port p, load l. */
static void note_busiest(const struct rep *v, struct routing_report *rep,
			 size_t k, unsigned p)
{
	const struct fab_node *n = fabric_node(v->f, v->sw_node[k]);
	const struct fab_port *pt = &n->ports[p];
	const struct fab_node *m = fabric_node(v->f, pt->peer_node);

	rep->busiest_guid = n->guid;
	rep->busiest_port = (uint8_t)p;
	snprintf(rep->busiest_desc, sizeof(rep->busiest_desc), "%s",
		 n->has_desc ? n->desc : "");
	rep->busiest_peer_guid = m->guid;
	rep->busiest_peer_port = pt->peer_port;
	snprintf(rep->busiest_peer_desc, sizeof(rep->busiest_peer_desc), "%s",
		 m->has_desc ? m->desc : "");
}

/* The report's per-VL map: the split's table on each link's VLCap. */
struct vl_ctx {
	const struct fabric *f;
	const struct routing_result *r;
};

static unsigned link_vl(void *arg, int32_t node, unsigned out, unsigned sl)
{
	static const unsigned n_vl[] = { 0, 1, 2, 4, 8, 15 };
	const struct vl_ctx *x = arg;
	const struct fab_port *p = &fabric_node(x->f, node)->ports[out];
	unsigned cap = pi_vl_cap(&p->pi);
	uint8_t vl[VLS_SL_N];

	if (p->peer_node != FAB_NONE) {
		const struct fab_port *q =
			&fabric_node(x->f, p->peer_node)->ports[p->peer_port];

		if (pi_vl_cap(&q->pi) < cap)
			cap = pi_vl_cap(&q->pi);
	}
	vlsplit_sl2vl(&x->r->split, cap < 6 ? n_vl[cap] : 0, vl);
	return vl[sl & 15];
}

static int cdg_per_vl(const struct fabric *f, const struct routing_result *r,
		      struct routing_cdg *c)
{
	struct vl_ctx x = { f, r };
	struct routing_vlmap m;

	routing_vlmap_from_split(r, &m);
	m.vl = link_vl;
	m.ctx = &x;
	return routing_check_cdg_vl(f, r, &m, c);
}

/* The whole report, or (loads_only) the load part alone: the same code,
 * so the same figures. */
static int compute(const struct fabric *f, const struct routing_result *r,
		   struct routing_report *rep, bool loads_only,
		   uint64_t *port_loads)
{
	struct rep v = { .f = f, .r = r };
	size_t *slot_of = NULL;		/* switch index -> its first port slot */
	uint16_t layers_seen = 0;
	int rc;

	memset(rep, 0, sizeof(*rep));
	rep->route_seconds = -1;
	rep->peak_rss_kib = -1;
	rep->engine = r->engine ? r->engine : "";
	snprintf(rep->summary, sizeof(rep->summary), "%s", r->summary);
	snprintf(rep->fallback, sizeof(rep->fallback), "%s", r->fallback);
	rep->n_layers = r->n_layers;
	rep->n_vls = r->port_class ? r->n_vls : 0;

	if (r->split.n_classes) {
		vlsplit_describe(&r->split, rep->qos, sizeof(rep->qos));
		vlsplit_reduced(&r->split, r->n_layers, r->layers_short,
				rep->qos_reduced, sizeof(rep->qos_reduced));
	}
	if (!loads_only) {
		rc = routing_check(f, r, &rep->check);
		if (rc == 0 && routing_split_active(r))
			rc = cdg_per_vl(f, r, &rep->cdg);
		else if (rc == 0)
			rc = routing_check_cdg(f, r, &rep->cdg);
		if (rc < 0)
			return rc;
		rep->cdg_required = routing_claims_deadlock_free(r);
		rc = routing_report_lmc(f, r, rep);
		if (rc < 0)
			return rc;
	}
	rc = setup(&v, rep);
	if (rc == 0 && !loads_only)
		rc = distances(&v);
	if (rc < 0)
		goto out;
	rep->has_stretch = v.dist != NULL;

	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		if (n->type == NODE_TYPE_SWITCH)
			continue;
		for (unsigned p = 1; p <= n->num_ports; p++) {
			const struct fab_port *pt = &n->ports[p];

			if (!pt->lid)
				continue;
			rep->dest_lids += 1u << pt->lmc;
			if (!routing_port_up(f, pt) || !peer_is_switch(f, pt))
				continue;
			for (unsigned o = 0; o < (1u << pt->lmc); o++) {
				unsigned lid = pt->lid + o;

				if (lid > f->max_lid || lid >= 0xc000)
					break;
				one_lid(&v, rep, (uint16_t)lid,
					(uint32_t)v.sw_idx[pt->peer_node],
					pt->peer_port, &layers_seen);
			}
		}
	}

	if (port_loads) {
		size_t slot = 0;

		slot_of = malloc((v.S + 1) * sizeof(*slot_of));
		if (!slot_of) {
			rc = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < f->n_nodes; i++) {
			if (v.sw_idx[i] >= 0)
				slot_of[v.sw_idx[i]] = slot;
			slot += (size_t)f->nodes[i].num_ports + 1;
		}
		memset(port_loads, 0, slot * sizeof(*port_loads));
	}
	for (size_t k = 0; k < v.S; k++) {
		const struct fab_node *n = fabric_node(f, v.sw_node[k]);

		for (unsigned p = 1; p <= n->num_ports; p++) {
			uint64_t l = v.load[v.chan_off[k] + p];

			if (port_loads)
				port_loads[slot_of[k] + p] = l;
			if (!l)
				continue;
			rep->channels_used++;
			rep->load_total += l;
			if (l > rep->load_max) {
				rep->load_max = l;
				note_busiest(&v, rep, k, p);
			}
		}
	}
	if (rep->channels_used) {
		rep->load_mean = (double)rep->load_total /
				 (double)rep->channels_used;
		rep->ratio = (double)rep->load_max / rep->load_mean;
	}
	if (rep->routes) {
		rep->hops_mean /= (double)rep->routes;
		rep->shortest_mean /= (double)rep->routes;
	}
	if (rep->has_stretch)
		rep->stretch = rep->shortest_mean > 0 ?
			       rep->hops_mean / rep->shortest_mean : 1.0;
	for (unsigned i = 0; i < 16; i++)
		if (layers_seen & (1u << i))
			rep->layers_used++;
out:
	free(slot_of);
	rep_free(&v);
	return rc;
}

int routing_report_compute(const struct fabric *f,
			   const struct routing_result *r,
			   struct routing_report *rep)
{
	return compute(f, r, rep, false, NULL);
}

int routing_report_load(const struct fabric *f,
			const struct routing_result *r,
			struct routing_report *rep)
{
	return compute(f, r, rep, true, NULL);
}

size_t routing_port_slots(const struct fabric *f)
{
	size_t n = 0;

	for (size_t i = 0; i < f->n_nodes; i++)
		n += (size_t)f->nodes[i].num_ports + 1;
	return n;
}

int routing_report_port_loads(const struct fabric *f,
			      const struct routing_result *r,
			      struct routing_report *rep, uint64_t *loads)
{
	return compute(f, r, rep, true, loads);
}

int routing_report_busiest(const struct routing_report *rep, char *buf,
			   size_t len)
{
	if (!rep->busiest_guid)
		return snprintf(buf, len, "none");
	return snprintf(buf, len, "0x%016" PRIx64 " \"%s\" port %u -> 0x%016"
			PRIx64 " \"%s\" port %u, %" PRIu64 " routes",
			rep->busiest_guid, rep->busiest_desc, rep->busiest_port,
			rep->busiest_peer_guid, rep->busiest_peer_desc,
			rep->busiest_peer_port, rep->load_max);
}

bool routing_claims_deadlock_free(const struct routing_result *r)
{
	static const char *const free_by_design[] = { "updn", "dnup", "ftree",
						      "dfsssp", "nue" };

	if (r->n_layers)
		return true;
	for (size_t i = 0; r->engine && i < sizeof(free_by_design) /
					    sizeof(free_by_design[0]); i++)
		if (!strcmp(r->engine, free_by_design[i]))
			return true;
	return false;
}

bool routing_report_ok(const struct routing_report *rep)
{
	return routing_check_failures(&rep->check) == 0 &&
	       (!rep->cdg_required || routing_cdg_cycles(&rep->cdg) == 0);
}

/* ----------------------------------------------------------- output */

struct out {
	char *buf;
	size_t len, used;
};

__attribute__((format(printf, 2, 3)))
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int w;

	va_start(ap, fmt);
	w = vsnprintf(o->used < o->len ? o->buf + o->used : NULL,
		      o->used < o->len ? o->len - o->used : 0, fmt, ap);
	va_end(ap);
	if (w > 0)
		o->used += (size_t)w;
}

static void start(struct out *o, char *buf, size_t len)
{
	o->buf = buf;
	o->len = len;
	o->used = 0;
	if (len)
		buf[0] = '\0';
}

/* A JSON string: the summary is ours, but quote what must be quoted. */
static void put_json_str(struct out *o, const char *s)
{
	put(o, "\"");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			put(o, "\\%c", c);
		else if (c < 0x20)
			put(o, "\\u%04x", c);
		else
			put(o, "%c", c);
	}
	put(o, "\"");
}

size_t routing_report_text(const struct routing_report *rep, char *buf,
			   size_t len)
{
	const struct routing_check *c = &rep->check;
	struct out o;

	start(&o, buf, len);
	put(&o, "engine: %s%s%s\n", rep->engine[0] ? rep->engine : "-",
	    rep->summary[0] ? ": " : "", rep->summary);
	if (rep->fallback[0])
		put(&o, "fallback: %s\n", rep->fallback);
	put(&o, "fabric: %zu switches, %zu CA/router ports, %zu destination "
	    "LIDs, %" PRIu64 " inter-switch channels\n", rep->switches,
	    rep->ports, rep->dest_lids, rep->channels);
	put(&o, "load: %" PRIu64 " routes, %" PRIu64 " channels used, max %"
	    PRIu64 " mean %.1f, max/ideal %.2f\n", rep->routes,
	    rep->channels_used, rep->load_max, rep->load_mean, rep->ratio);
	{
		char b[256];

		routing_report_busiest(rep, b, sizeof(b));
		put(&o, "busiest: %s\n", b);
	}
	if (rep->has_stretch)
		put(&o, "hops: mean %.2f max %u, shortest mean %.2f, stretch "
		    "%.3f, at most %u extra\n", rep->hops_mean, rep->hops_max,
		    rep->shortest_mean, rep->stretch, rep->extra_max);
	else
		put(&o, "hops: mean %.2f max %u (stretch not computed: over "
		    "%d switches)\n", rep->hops_mean, rep->hops_max,
		    REPORT_MAX_STRETCH_SWITCHES);
	put(&o, "layers: %u used of %u\n", rep->layers_used,
	    rep->n_layers ? rep->n_layers : 1);
	if (rep->qos[0])
		put(&o, "qos: %s%s%s\n", rep->qos, rep->qos_reduced[0] ?
		    "; reduced: " : "", rep->qos_reduced);
	if (rep->n_vls)
		put(&o, "vls: %u (a hop's VL from its SL and the ports it "
		    "enters and leaves by)\n", rep->n_vls);
	put(&o, "cdg: %" PRIu64 " channels, cycles per %s:",
	    rep->cdg.channels, rep->cdg.per_vl || rep->n_vls ? "VL" : "layer");
	for (unsigned i = 0; i < rep->cdg.layers && i < ROUTING_MAX_LAYERS; i++)
		put(&o, " %" PRIu64, rep->cdg.cycles[i]);
	put(&o, "%s\n", rep->cdg_required ? "" :
	    " (not required: no deadlock-freedom claimed)");
	if (rep->lmc_pairs)
		put(&o, "lmc: %" PRIu64 " LID pairs between the same two ports,"
		    " %" PRIu64 " share an inter-switch link (%.1f%%)\n",
		    rep->lmc_pairs, rep->lmc_shared,
		    100.0 * (double)rep->lmc_shared / (double)rep->lmc_pairs);
	else if (rep->lmc_skipped)
		put(&o, "lmc: path pairs not counted (fabric too large)\n");
	put(&o, "verify: %" PRIu64 " paths, %" PRIu64 " unreachable, %" PRIu64
	    " loops, %" PRIu64 " misrouted", c->pairs, c->unreachable,
	    c->loops, c->misrouted);
	if (routing_check_failures(c))
		put(&o, " (first: LID %u from node %d)", c->bad_lid,
		    c->bad_switch);
	put(&o, "\n");
	if (rep->route_seconds >= 0 || rep->peak_rss_kib >= 0) {
		put(&o, "cost:");
		if (rep->route_seconds >= 0)
			put(&o, " routing %.3f s", rep->route_seconds);
		if (rep->peak_rss_kib >= 0)
			put(&o, "%s peak RSS %.1f MiB",
			    rep->route_seconds >= 0 ? "," : "",
			    (double)rep->peak_rss_kib / 1024.0);
		put(&o, "\n");
	}
	put(&o, "result: %s\n", routing_report_ok(rep) ? "ok" : "FAILED");
	return o.used;
}

size_t routing_report_json(const struct routing_report *rep, char *buf,
			   size_t len)
{
	const struct routing_check *c = &rep->check;
	struct out o;

	start(&o, buf, len);
	put(&o, "{\n  \"engine\":");
	put_json_str(&o, rep->engine);
	put(&o, ",\n  \"summary\":");
	put_json_str(&o, rep->summary);
	put(&o, ",\n  \"fallback\":");
	put_json_str(&o, rep->fallback);
	put(&o, ",\n  \"switches\":%zu,\n  \"ports\":%zu,\n  \"dest_lids\":%zu,"
	    "\n  \"channels\":%" PRIu64 ",\n  \"channels_used\":%" PRIu64
	    ",\n  \"routes\":%" PRIu64 ",\n  \"load_total\":%" PRIu64
	    ",\n  \"load_max\":%" PRIu64 ",\n  \"load_mean\":%.3f,\n  \"ratio\":%.4f",
	    rep->switches, rep->ports, rep->dest_lids, rep->channels,
	    rep->channels_used, rep->routes, rep->load_total, rep->load_max,
	    rep->load_mean, rep->ratio);
	if (rep->busiest_guid) {
		put(&o, ",\n  \"busiest\":{\"switch\":\"0x%016" PRIx64
		    "\",\"desc\":", rep->busiest_guid);
		put_json_str(&o, rep->busiest_desc);
		put(&o, ",\"port\":%u,\"peer\":\"0x%016" PRIx64 "\",\"peer_desc\":",
		    rep->busiest_port, rep->busiest_peer_guid);
		put_json_str(&o, rep->busiest_peer_desc);
		put(&o, ",\"peer_port\":%u,\"load\":%" PRIu64 "}",
		    rep->busiest_peer_port, rep->load_max);
	}
	put(&o, ",\n  \"hops_mean\":%.4f,\n  \"hops_max\":%u", rep->hops_mean,
	    rep->hops_max);
	if (rep->has_stretch)
		put(&o, ",\n  \"shortest_mean\":%.4f,\n  \"stretch\":%.4f,"
		    "\n  \"extra_max\":%u", rep->shortest_mean, rep->stretch,
		    rep->extra_max);
	put(&o, ",\n  \"layers\":%u,\n  \"layers_used\":%u", rep->n_layers,
	    rep->layers_used);
	put(&o, ",\n  \"paths\":%" PRIu64 ",\n  \"unreachable\":%" PRIu64
	    ",\n  \"loops\":%" PRIu64 ",\n  \"misrouted\":%" PRIu64, c->pairs,
	    c->unreachable, c->loops, c->misrouted);
	put(&o, ",\n  \"vls\":%u", rep->n_vls);
	put(&o, ",\n  \"lmc_pairs\":%" PRIu64 ",\n  \"lmc_shared\":%" PRIu64,
	    rep->lmc_pairs, rep->lmc_shared);
	put(&o, ",\n  \"cdg_cycles\":[");
	for (unsigned i = 0; i < rep->cdg.layers && i < ROUTING_MAX_LAYERS; i++)
		put(&o, "%s%" PRIu64, i ? "," : "", rep->cdg.cycles[i]);
	put(&o, "],\n  \"cdg_per_vl\":%s,\n  \"cdg_required\":%s",
	    rep->cdg.per_vl ? "true" : "false",
	    rep->cdg_required ? "true" : "false");
	if (rep->qos[0]) {
		put(&o, ",\n  \"qos\":");
		put_json_str(&o, rep->qos);
		put(&o, ",\n  \"qos_reduced\":");
		put_json_str(&o, rep->qos_reduced);
	}
	if (routing_check_failures(c))
		put(&o, ",\n  \"bad_lid\":%u,\n  \"bad_node\":%d", c->bad_lid,
		    c->bad_switch);
	if (rep->route_seconds >= 0)
		put(&o, ",\n  \"route_seconds\":%.6f", rep->route_seconds);
	if (rep->peak_rss_kib >= 0)
		put(&o, ",\n  \"peak_rss_kib\":%ld", rep->peak_rss_kib);
	put(&o, ",\n  \"ok\":%s\n}\n", routing_report_ok(rep) ? "true" : "false");
	return o.used;
}
