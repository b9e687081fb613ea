/*
 * check_fabmap.c - the fabric map: the layout finds tiers, grids and
 * falls back to the force layout without overlapping switches; the
 * rendered page holds one element per switch and per cable, coloured by
 * the findings and loads given, with fabric text escaped.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabmap/fabmap.h"
#include "fabmap/layout.h"
#include "model/fabric.h"
#include "routing/report.h"
#include "routing/routing.h"
#include "sm/fabric_map.h"
#include "sm/lid.h"
#include "sm/sm.h"
#include "sm/topo_file.h"

static void load(struct fabric *f, const char *name)
{
	char path[512], err[256];

	snprintf(path, sizeof(path), "%s/%s", TOPO_DIR, name);
	fabric_init(f);
	ck_assert_msg(topo_load(f, path, err, sizeof(err)) == 0, "%s", err);
}

static void lay(const char *name, struct fabric *f, struct fm_graph *g,
		struct fm_layout *l)
{
	load(f, name);
	ck_assert_int_eq(fm_graph_build(f, g), 0);
	ck_assert_int_eq(fm_layout_compute(g, l), 0);
}

static void done(struct fabric *f, struct fm_graph *g, struct fm_layout *l)
{
	fm_layout_free(l);
	fm_graph_free(g);
	fabric_free(f);
}

/* No two switch marks overlap. */
static void assert_apart(const struct fm_graph *g, const struct fm_layout *l)
{
	for (size_t a = 0; a < g->n; a++)
		for (size_t b = a + 1; b < g->n; b++) {
			double dx = l->x[a] - l->x[b], dy = l->y[a] - l->y[b];

			ck_assert_msg(sqrt(dx * dx + dy * dy) >= 2 * l->radius,
				      "switches %zu and %zu overlap", a, b);
		}
}

static const char *desc(const struct fabric *f, const struct fm_graph *g,
			size_t k)
{
	return f->nodes[g->node[k]].desc;
}

START_TEST(tiers_fat3)
{
	struct fabric f;
	struct fm_graph g;
	struct fm_layout l;
	unsigned per[3] = { 0 };

	lay("fat3-pods.net", &f, &g, &l);
	ck_assert_int_eq(l.kind, FM_TIERS);
	ck_assert_uint_eq(l.tiers, 3);
	for (size_t k = 0; k < g.n; k++) {
		const char *d = desc(&f, &g, k);
		int want = !strncmp(d, "leaf", 4) ? 0 :
			   !strncmp(d, "spine", 5) ? 1 : 2;

		ck_assert_msg(l.tier[k] == want, "%s in tier %d", d, l.tier[k]);
		per[want]++;
		if (want == 0)
			ck_assert_uint_eq(g.hosts[k], 4);
	}
	ck_assert_uint_eq(per[0], 16);
	ck_assert_uint_eq(per[1], 16);
	ck_assert_uint_eq(per[2], 8);
	/* leaves at the bottom: a larger y than every spine, spines than cores */
	for (size_t a = 0; a < g.n; a++)
		for (size_t b = 0; b < g.n; b++)
			if (l.tier[a] < l.tier[b])
				ck_assert(l.y[a] > l.y[b]);
	/* the leaves of a pod side by side: leaf-p01-* left of leaf-p02-* */
	for (size_t a = 0; a < g.n; a++)
		for (size_t b = 0; b < g.n; b++)
			if (l.tier[a] == 0 && l.tier[b] == 0 &&
			    strncmp(desc(&f, &g, a), desc(&f, &g, b), 8) < 0)
				ck_assert(l.x[a] < l.x[b]);
	assert_apart(&g, &l);
	done(&f, &g, &l);
}
END_TEST

START_TEST(tiers_fat2)
{
	struct fabric f;
	struct fm_graph g;
	struct fm_layout l;

	lay("fat2-small.net", &f, &g, &l);
	ck_assert_int_eq(l.kind, FM_TIERS);
	ck_assert_uint_eq(l.tiers, 2);
	assert_apart(&g, &l);
	done(&f, &g, &l);
}
END_TEST

/* A host cabled to a spine (the SM's, a storage server) leaves the
 * spines a tier above the leaves. */
START_TEST(tiers_host_on_spine)
{
	struct fabric f;
	struct fm_graph g;
	struct fm_layout l;
	int32_t spine = FAB_NONE, h;

	load(&f, "fat2-small.net");
	for (int32_t i = 0; i < (int32_t)f.n_nodes; i++)
		if (!strcmp(f.nodes[i].desc, "spine-01"))
			spine = i;
	ck_assert_int_ne(spine, FAB_NONE);
	h = fabric_add_node(&f, 0x999000, NODE_TYPE_CA, 1);
	ck_assert_int_ge(h, 0);
	ck_assert_int_eq(fabric_link(&f, h, 1, spine, 20), 0);
	ck_assert_int_eq(fm_graph_build(&f, &g), 0);
	ck_assert_int_eq(fm_layout_compute(&g, &l), 0);
	ck_assert_int_eq(l.kind, FM_TIERS);
	ck_assert_uint_eq(l.tiers, 2);
	for (size_t k = 0; k < g.n; k++)
		ck_assert_int_eq(l.tier[k],
				 strncmp(desc(&f, &g, k), "leaf", 4) ? 1 : 0);
	ck_assert_uint_eq(g.hosts[g.idx[spine]], 1);
	done(&f, &g, &l);
}
END_TEST

/* Every cable joins grid neighbours; every place is taken once. */
static void assert_grid(const struct fabric *f, const struct fm_graph *g,
			const struct fm_layout *l)
{
	(void)f;
	for (size_t a = 0; a < g->n; a++) {
		const int *ca = &l->coord[3 * a];

		for (size_t b = a + 1; b < g->n; b++) {
			const int *cb = &l->coord[3 * b];

			ck_assert(memcmp(ca, cb, 3 * sizeof(int)));
		}
		for (uint32_t e = g->off[a]; e < g->off[a + 1]; e++) {
			const int *cb = &l->coord[3 * g->adj[e]];
			unsigned diff = 0;

			for (unsigned d = 0; d < 3; d++) {
				int dl = abs(ca[d] - cb[d]);

				if (!dl)
					continue;
				diff++;
				ck_assert(dl == 1 || (l->torus &&
						      dl == (int)l->size[d] - 1));
			}
			ck_assert_uint_eq(diff, 1);
		}
	}
	assert_apart(g, l);
}

START_TEST(grid_torus_2d)
{
	struct fabric f;
	struct fm_graph g;
	struct fm_layout l;

	lay("torus-4x4.net", &f, &g, &l);
	ck_assert_int_eq(l.kind, FM_GRID);
	ck_assert(l.torus);
	ck_assert_uint_eq(l.dims, 2);
	ck_assert_uint_eq(l.size[0], 4);
	ck_assert_uint_eq(l.size[1], 4);
	assert_grid(&f, &g, &l);
	done(&f, &g, &l);
}
END_TEST

START_TEST(grid_torus_3d)
{
	struct fabric f;
	struct fm_graph g;
	struct fm_layout l;

	lay("torus-3x3x3.net", &f, &g, &l);
	ck_assert_int_eq(l.kind, FM_GRID);
	ck_assert(l.torus);
	ck_assert_uint_eq(l.dims, 3);
	for (unsigned d = 0; d < 3; d++)
		ck_assert_uint_eq(l.size[d], 3);
	assert_grid(&f, &g, &l);
	done(&f, &g, &l);
}
END_TEST

START_TEST(grid_mesh)
{
	struct fabric f;
	struct fm_graph g;
	struct fm_layout l;

	lay("mesh-4x4.net", &f, &g, &l);
	ck_assert_int_eq(l.kind, FM_GRID);
	ck_assert(!l.torus);
	ck_assert_uint_eq(l.dims, 2);
	assert_grid(&f, &g, &l);
	/* a corner (2 neighbours) at a corner of the grid */
	for (size_t k = 0; k < g.n; k++)
		if (g.off[k + 1] - g.off[k] == 2)
			ck_assert((l.coord[3 * k] == 0 || l.coord[3 * k] == 3) &&
				  (l.coord[3 * k + 1] == 0 ||
				   l.coord[3 * k + 1] == 3));
	done(&f, &g, &l);
}
END_TEST

START_TEST(force_random)
{
	struct fabric f;
	struct fm_graph g;
	struct fm_layout l;

	lay("random-24.net", &f, &g, &l);
	ck_assert_int_eq(l.kind, FM_FORCE);
	ck_assert_int_eq(fm_layout_tiers(&g, &(struct fm_layout){ 0 }), -ENOENT);
	assert_apart(&g, &l);
	done(&f, &g, &l);
}
END_TEST

/* 1,000 switches of degree ~4 in a random graph: laid out, apart. */
START_TEST(force_thousand)
{
	struct fabric f;
	struct fm_graph g;
	struct fm_layout l;
	uint32_t seed = 12345;
	int32_t sw[1000];

	fabric_init(&f);
	for (unsigned i = 0; i < 1000; i++)
		sw[i] = fabric_add_node(&f, 0x1000 + i, NODE_TYPE_SWITCH, 8);
	for (unsigned i = 0; i < 1000; i++)
		for (unsigned c = 0; c < 2; c++) {
			unsigned j, pi = 1, pj = 1;

			seed = seed * 1103515245u + 12345u;
			j = (seed >> 8) % 1000;
			while (pi <= 8 && f.nodes[sw[i]].ports[pi].peer_node != FAB_NONE)
				pi++;
			while (pj <= 8 && f.nodes[sw[j]].ports[pj].peer_node != FAB_NONE)
				pj++;
			if (j != i && pi <= 8 && pj <= 8)
				ck_assert_int_eq(fabric_link(&f, sw[i], (uint8_t)pi,
							     sw[j], (uint8_t)pj), 0);
		}
	ck_assert_int_eq(fm_graph_build(&f, &g), 0);
	ck_assert_int_eq(fm_layout_compute(&g, &l), 0);
	ck_assert_int_eq(l.kind, FM_FORCE);
	assert_apart(&g, &l);
	done(&f, &g, &l);
}
END_TEST

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

/* The element of the cable with end a (its whole start tag). */
static char *link_tag(const char *s, const char *a)
{
	char key[64];
	const char *p, *start, *end;

	snprintf(key, sizeof(key), "\"%s\"", a);
	p = strstr(s, key);
	ck_assert_msg(p != NULL, "no cable with end %s", a);
	for (start = p; start > s && *start != '<'; start--)
		;
	end = strchr(p, '>');
	return strndup(start, (size_t)(end - start + 1));
}

START_TEST(render_health_and_load)
{
	struct fabric f;
	struct fabmap_buf b = { 0 };
	struct hf_finding x[2] = { 0 };
	char a[64], *tag;
	int32_t leaf, spine;
	uint64_t *loads;
	size_t slots, spine_slot = 0;
	unsigned lp = 0, sp;

	load(&f, "fat2-small.net");
	/* the first leaf's first uplink, a finding on it; a name to escape */
	for (leaf = 0; f.nodes[leaf].type != NODE_TYPE_SWITCH ||
	     strncmp(f.nodes[leaf].desc, "leaf", 4); leaf++)
		;
	for (unsigned p = 1; !lp; p++) {
		int32_t pe = f.nodes[leaf].ports[p].peer_node;

		if (pe != FAB_NONE && f.nodes[pe].type == NODE_TYPE_SWITCH)
			lp = p;
	}
	spine = f.nodes[leaf].ports[lp].peer_node;
	sp = f.nodes[leaf].ports[lp].peer_port;
	snprintf(f.nodes[spine].desc, sizeof(f.nodes[spine].desc),
		 "spine <\"&'>\x01\xff");
	snprintf(f.nodes[leaf].desc, sizeof(f.nodes[leaf].desc),
		 "leaf \xc3\xa9\xe2\x82\xac \xed\xa0\x80\xe0\x80\xaf\xef\xbf\xbf");
	x[0] = (struct hf_finding){ .kind = HF_LINK_BELOW_REF,
		.severity = HF_CRITICAL, .guid = f.nodes[leaf].guid,
		.port = (uint8_t)lp, .peer_guid = f.nodes[spine].guid,
		.peer_port = (uint8_t)sp };
	snprintf(x[0].text, sizeof(x[0].text), "1X below the reference 4X");
	x[1] = (struct hf_finding){ .kind = HF_UNRESPONSIVE,
		.severity = HF_WARNING, .guid = f.nodes[spine].guid };
	slots = routing_port_slots(&f);
	loads = calloc(slots, sizeof(*loads));
	for (int32_t i = 0; i < spine; i++)
		spine_slot += f.nodes[i].num_ports + 1u;
	loads[spine_slot + sp] = 300;		/* 3 x the ideal of 100 */

	struct fabmap_input in = { .f = &f, .findings = x, .n_findings = 2,
				   .loads = loads, .load_ideal = 100 };
	ck_assert_int_eq(fabmap_render(&in, FABMAP_HTML, &b), 0);
	ck_assert_uint_eq(b.len, strlen(b.data));
	ck_assert_uint_eq(count(b.data, "<circle class=\"sw\""), 6);
	ck_assert_uint_eq(count(b.data, "<path class=\"link "), 8);
	ck_assert_uint_eq(count(b.data, "data-health=\"critical\""), 1);
	snprintf(a, sizeof(a), "0x%016" PRIx64 "/%u", f.nodes[leaf].guid, lp);
	tag = link_tag(b.data, a);
	ck_assert_ptr_nonnull(strstr(tag, "data-health=\"critical\""));
	ck_assert_ptr_nonnull(strstr(tag, "stroke=\"" FABMAP_CRITICAL "\""));
	ck_assert_ptr_nonnull(strstr(tag, "data-load=\"3.000\""));
	ck_assert_ptr_nonnull(strstr(tag, fabmap_load_colour(3.0)));
	free(tag);
	/* the spine itself: warning */
	snprintf(a, sizeof(a), "data-guid=\"0x%016" PRIx64 "\" data-health="
		 "\"warning\"", f.nodes[spine].guid);
	ck_assert_ptr_nonnull(strstr(b.data, a));
	/* its name escaped, nothing raw from the fabric */
	ck_assert_ptr_nonnull(strstr(b.data, "spine &lt;&quot;&amp;&#39;&gt;??"));
	/* UTF-8 kept; a surrogate, an overlong form and U+FFFF refused */
	ck_assert_ptr_nonnull(strstr(b.data, "leaf \xc3\xa9\xe2\x82\xac ?????????\n0x"));
	ck_assert_ptr_null(strstr(b.data, "spine <"));
	/* nothing fetched */
	ck_assert_ptr_null(strstr(b.data, "src="));
	ck_assert_ptr_null(strstr(b.data, "href"));
	ck_assert_ptr_null(strstr(b.data, "url("));
	fabmap_buf_free(&b);

	/* the SVG alone, load view first */
	in.load_view = true;
	ck_assert_int_eq(fabmap_render(&in, FABMAP_SVG, &b), 0);
	ck_assert(!strncmp(b.data, "<?xml", 5));
	ck_assert_ptr_null(strstr(b.data, "<script"));
	snprintf(a, sizeof(a), "0x%016" PRIx64 "/%u", f.nodes[leaf].guid, lp);
	tag = link_tag(b.data, a);
	char want[64];
	snprintf(want, sizeof(want), "stroke=\"%s\"", fabmap_load_colour(3.0));
	ck_assert_ptr_nonnull(strstr(tag, want));
	free(tag);
	fabmap_buf_free(&b);
	free(loads);
	fabric_free(&f);
}
END_TEST

/* The per-port loads add up to the report's figures, on switch ports
 * towards switches only. */
START_TEST(port_loads_match_report)
{
	struct fabric f;
	struct routing_opts o = { 0 };
	struct routing_result r = { 0 };
	struct routing_report rep, rep2;
	char err[256];
	uint64_t *loads, sum = 0, max = 0, used = 0;
	size_t slot = 0;

	load(&f, "fat3-pods.net");
	ck_assert_int_eq(lid_assign_sequential(&f, 0), 0);
	ck_assert_int_eq(routing_run_opts("minhop", &f, &o, &r, err,
					  sizeof(err)), 0);
	loads = calloc(routing_port_slots(&f), sizeof(*loads));
	memset(loads, 0xff, routing_port_slots(&f) * sizeof(*loads));
	ck_assert_int_eq(routing_report_port_loads(&f, &r, &rep, loads), 0);
	ck_assert_int_eq(routing_report_load(&f, &r, &rep2), 0);
	for (size_t i = 0; i < f.n_nodes; i++)
		for (unsigned p = 0; p <= f.nodes[i].num_ports; p++, slot++) {
			const struct fab_port *pt = &f.nodes[i].ports[p];
			uint64_t l = loads[slot];

			if (l)
				ck_assert(f.nodes[i].type == NODE_TYPE_SWITCH && p &&
					  pt->peer_node != FAB_NONE &&
					  f.nodes[pt->peer_node].type ==
					  NODE_TYPE_SWITCH);
			sum += l;
			max = l > max ? l : max;
			used += l != 0;
		}
	ck_assert_uint_eq(slot, routing_port_slots(&f));
	ck_assert_uint_gt(sum, 0);
	ck_assert_uint_eq(sum, rep.load_total);
	ck_assert_uint_eq(sum, rep2.load_total);
	ck_assert_uint_eq(max, rep.load_max);
	ck_assert_uint_eq(used, rep.channels_used);
	free(loads);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* The daemon's map: its model, its tables' loads (kept for the next
 * page), no findings before the health state exists. */
START_TEST(daemon_map)
{
	struct sm *sm = calloc(1, sizeof(*sm));
	struct routing_opts o = { 0 };
	struct fabmap_buf a = { 0 }, b = { 0 };
	char err[256];

	ck_assert_ptr_nonnull(sm);
	load(&sm->fabric, "torus-4x4.net");
	ck_assert_int_eq(lid_assign_sequential(&sm->fabric, 0), 0);
	/* no tables yet: no load view */
	ck_assert_int_eq(sm_fabric_map(sm, FABMAP_SVG, NULL, &a), 0);
	ck_assert_ptr_null(strstr(a.data, "data-load="));
	fabmap_buf_free(&a);
	ck_assert_int_eq(routing_run_opts("minhop", &sm->fabric, &o, &sm->routes,
					  err, sizeof(err)), 0);
	ck_assert_int_eq(sm_fabric_map(sm, FABMAP_HTML, NULL, &a), 0);
	ck_assert_int_eq(sm_fabric_map(sm, FABMAP_HTML, NULL, &b), 0);
	ck_assert_uint_eq(count(a.data, "<circle class=\"sw\""), 16);
	ck_assert_uint_eq(count(a.data, "<path class=\"link "), 64);
	ck_assert_uint_eq(count(a.data, "data-load=\""), 64);
	ck_assert_ptr_null(strstr(a.data, "data-health=\"warning\""));
	/* the same drawing again (the kept loads) but for the time shown */
	ck_assert_uint_eq(count(b.data, "data-load=\""), 64);
	ck_assert_int_eq(a.len, b.len);
	fabmap_buf_free(&a);
	fabmap_buf_free(&b);
	sm_fabric_map_free();
	routing_result_free(&sm->routes);
	fabric_free(&sm->fabric);
	free(sm);
}
END_TEST

/* Every '<' opens a tag the map writes, every '&' an entity it writes,
 * no control character but newline: nothing from the fabric got out
 * unescaped. */
static void assert_clean(const char *s)
{
	static const char *const tags[] = {
		"?xml ", "!DOCTYPE", "html", "/html", "head", "/head", "meta",
		"title", "/title", "style", "/style", "body", "/body", "div",
		"/div", "b>", "/b>", "br>", "button", "/button", "span", "/span",
		"svg", "/svg", "rect", "text", "/text", "g ", "g>", "/g>", "path",
		"/path", "circle", "/circle", "h3", "/h3", "table", "/table",
		"tr", "/tr", "th", "/th", "td", "/td", "script", "/script",
	};
	static const char *const ents[] = { "amp;", "lt;", "gt;", "quot;",
					    "#39;", "#8212;", "#8805;" };
	const char *script = strstr(s, "<script>");

	for (const char *p = s; *p; p++) {
		if (script && p > script)
			break;		/* our own script: '<' and '&&' in it */
		ck_assert_msg((unsigned char)*p >= 0x20 || *p == '\n',
			      "control byte 0x%02x at %zu", *p, (size_t)(p - s));
		if (*p == '<') {
			bool ok = false;

			for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
				ok |= !strncmp(p + 1, tags[i], strlen(tags[i]));
			ck_assert_msg(ok, "stray '<' at %zu: %.20s", (size_t)(p - s), p);
		}
		if (*p == '&') {
			bool ok = false;

			for (size_t i = 0; i < sizeof(ents) / sizeof(ents[0]); i++)
				ok |= !strncmp(p + 1, ents[i], strlen(ents[i]));
			ck_assert_msg(ok, "stray '&' at %zu: %.20s", (size_t)(p - s), p);
		}
	}
}

static uint32_t rnd(uint32_t *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

/* A hostile model: descriptions of any bytes, PortInfo of random bytes,
 * findings with random text naming nodes and ports that exist or not,
 * counters of any value. */
START_TEST(render_hostile)
{
	struct fabric f;
	struct hf_finding *x = calloc(200, sizeof(*x));
	struct pc_store *st;
	struct fabmap_buf b = { 0 };
	uint32_t seed = 99 + (uint32_t)_i;
#define RND() rnd(&seed)

	load(&f, _i % 2 ? "torus-3x3x3.net" : "fat3-pods.net");
	ck_assert_int_eq(pc_store_new(&st, 1000), 0);
	for (size_t i = 0; i < f.n_nodes; i++) {
		struct fab_node *n = &f.nodes[i];

		for (size_t k = 0; k + 1 < sizeof(n->desc); k++)
			n->desc[k] = (char)(RND() % 255 + 1);
		n->desc[RND() % sizeof(n->desc)] = '\0';
		for (unsigned p = 0; p <= n->num_ports; p++) {
			uint8_t *pi = (uint8_t *)&n->ports[p].pi;

			for (size_t k = 0; k < sizeof(n->ports[p].pi); k++)
				pi[k] = (uint8_t)RND();
			struct pc_port *c = pc_get(st, n->guid, (uint8_t)p);
			if (c)
				for (int k = 0; k < PC_N; k++) {
					uint64_t hi = RND();

					c->total[k] = hi << 40 | RND();
					c->seen[k] = RND() % 2;
				}
		}
	}
	for (size_t i = 0; i < 200; i++) {
		x[i].kind = (enum hf_kind)(RND() % (HF_N_KINDS + 2));
		x[i].severity = (enum hf_severity)(RND() % 3);
		x[i].guid = RND() % 3 ? f.nodes[RND() % f.n_nodes].guid : RND();
		x[i].port = (uint8_t)RND();
		x[i].peer_guid = RND() % 2 ? f.nodes[RND() % f.n_nodes].guid : 0;
		x[i].peer_port = (uint8_t)(RND() % 40);
		for (size_t k = 0; k + 1 < sizeof(x[i].text); k++)
			x[i].text[k] = (char)(RND() % 255 + 1);
		for (size_t k = 0; k + 1 < sizeof(x[i].desc); k++)
			x[i].desc[k] = (char)(RND() % 255 + 1);
	}
	struct fabmap_input in = { .f = &f, .findings = x, .n_findings = 200,
				   .counters = st, .title = "<&\x01>" };
	ck_assert_int_eq(fabmap_render(&in, FABMAP_HTML, &b), 0);
	assert_clean(b.data);
	fabmap_buf_free(&b);
	ck_assert_int_eq(fabmap_render(&in, FABMAP_SVG, &b), 0);
	assert_clean(b.data);
	fabmap_buf_free(&b);
	pc_store_free(st);
	free(x);
	fabric_free(&f);
#undef RND
}
END_TEST

/* No switch, one switch, two switches and a cable: drawn. */
START_TEST(render_tiny)
{
	struct fabric f;
	struct fabmap_buf b = { 0 };
	struct fabmap_input in = { .f = &f };

	fabric_init(&f);
	ck_assert_int_eq(fabmap_render(&in, FABMAP_HTML, &b), 0);
	ck_assert_ptr_nonnull(strstr(b.data, "data-switches=\"0\""));
	fabmap_buf_free(&b);
	int32_t a = fabric_add_node(&f, 0x10, NODE_TYPE_SWITCH, 4);
	ck_assert_int_eq(fabmap_render(&in, FABMAP_SVG, &b), 0);
	ck_assert_uint_eq(count(b.data, "<circle class=\"sw\""), 1);
	fabmap_buf_free(&b);
	int32_t c = fabric_add_node(&f, 0x20, NODE_TYPE_SWITCH, 4);
	ck_assert_int_eq(fabric_link(&f, a, 1, c, 1), 0);
	ck_assert_int_eq(fabric_link(&f, a, 2, a, 3), 0);	/* a loopback */
	ck_assert_int_eq(fabmap_render(&in, FABMAP_SVG, &b), 0);
	ck_assert_uint_eq(count(b.data, "<circle class=\"sw\""), 2);
	ck_assert_uint_eq(count(b.data, "<path class=\"link "), 2);
	assert_clean(b.data);
	fabmap_buf_free(&b);
	fabric_free(&f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fabmap");
	TCase *t = tcase_create("layout");
	SRunner *r;
	int failed;

	tcase_set_timeout(t, 60);
	tcase_add_test(t, tiers_fat3);
	tcase_add_test(t, tiers_fat2);
	tcase_add_test(t, tiers_host_on_spine);
	tcase_add_test(t, grid_torus_2d);
	tcase_add_test(t, grid_torus_3d);
	tcase_add_test(t, grid_mesh);
	tcase_add_test(t, force_random);
	tcase_add_test(t, force_thousand);
	tcase_add_test(t, render_health_and_load);
	tcase_add_test(t, port_loads_match_report);
	tcase_add_test(t, daemon_map);
	tcase_add_test(t, render_tiny);
	tcase_add_loop_test(t, render_hostile, 0, 4);
	suite_add_tcase(s, t);
	r = srunner_create(s);
	srunner_run_all(r, CK_NORMAL);
	failed = srunner_ntests_failed(r);
	srunner_free(r);
	return failed ? 1 : 0;
}
