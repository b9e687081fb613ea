/*
 * svg.c - the elements of the fabric map: cables, switches, host counts
 * (SVG), and the HTML page with its view switch, legend and findings.
 */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabmap/render_int.h"

#define MAX_TITLE_FINDINGS	12
#define MAX_TABLE_FINDINGS	2000

struct lk {
	int32_t a, b;			/* node ids */
	uint8_t pa, pb;
	int8_t sev;
	uint16_t par, npar;		/* among the parallel cables */
	double ratio;			/* load / ideal, -1: none */
};

static const char *desc_of(const struct fab_node *n)
{
	return n->name ? n->name : n->has_desc || n->desc[0] ? n->desc : "";
}

/* Does finding x name port `port` of node `guid` (either end)? */
static bool names_port(const struct hf_finding *x, uint64_t guid,
		       unsigned port)
{
	return (x->guid == guid && x->port == port) ||
	       (x->peer_guid == guid && x->peer_port == port);
}

/* The findings of list `e` as title lines (at most *left), but for those
 * that also name port `skip_port` of node `skip_guid` (listed with that
 * end already; skip_guid 0: none). */
static void title_findings(struct fm_ctx *c, int32_t e, unsigned *left,
			   uint64_t skip_guid, unsigned skip_port)
{
	for (; e >= 0 && *left; e = c->j->next[e]) {
		const struct hf_finding *x = &c->in->findings[e / 2];

		if (skip_guid && names_port(x, skip_guid, skip_port))
			continue;
		(*left)--;

		fm_put(c->b, "\n%s %s: ", hf_severity_name(x->severity),
		       hf_kind_name(x->kind));
		fm_esc(c->b, x->text);
	}
}

static void title_counters(struct fm_ctx *c, const struct fab_node *n,
			   unsigned port)
{
	const struct pc_port *p = fm_counters(c->j, n->guid, port);
	bool any = false;

	if (!p)
		return;
	fm_put(c->b, "\ncounters 0x%016" PRIx64 "/%u:", n->guid, port);
	for (unsigned i = 0; i <= PC_XMIT_WAIT; i++)
		if (p->total[i]) {
			fm_put(c->b, " %s %" PRIu64, pc_desc[i].name, p->total[i]);
			any = true;
		}
	if (!any)
		fm_put(c->b, " no errors");
	if (p->seen[PC_XMIT_DATA])
		fm_put(c->b, ", %" PRIu64 " bytes sent",
		       p->total[PC_XMIT_DATA] * 4);
}

static void link_title(struct fm_ctx *c, const struct lk *k)
{
	const struct fabric *f = c->in->f;
	const struct fab_node *a = fabric_node(f, k->a), *b = fabric_node(f, k->b);
	char rate[64];
	unsigned left = MAX_TITLE_FINDINGS;

	fm_put(c->b, "<title>");
	fm_esc(c->b, desc_of(a));
	fm_put(c->b, " (0x%016" PRIx64 ") port %u &lt;-&gt; ", a->guid, k->pa);
	fm_esc(c->b, desc_of(b));
	fm_put(c->b, " (0x%016" PRIx64 ") port %u", b->guid, k->pb);
	fm_link_rate(&a->ports[k->pa], rate, sizeof(rate));
	fm_put(c->b, "\n%s", rate);
	if (k->ratio >= 0) {
		const uint64_t *ld = c->in->loads;
		uint64_t la = ld[c->j->slot_off[k->a] + k->pa];
		uint64_t lb = ld[c->j->slot_off[k->b] + k->pb];

		fm_put(c->b, "\nload: %" PRIu64 " routes up, %" PRIu64
		       " down; %.2f x ideal", la, lb, k->ratio);
	}
	title_counters(c, a, k->pa);
	title_counters(c, b, k->pb);
	title_findings(c, c->j->head[c->j->slot_off[k->a] + k->pa], &left, 0, 0);
	title_findings(c, c->j->head[c->j->slot_off[k->b] + k->pb], &left,
		       a->guid, k->pa);
	fm_put(c->b, "</title>");
}

static int32_t sw_of(const struct fm_ctx *c, int32_t node)
{
	return c->g->idx[node];
}

/* The quadratic curve of cable k: straight between neighbours, bent for
 * cables within a tier, a grid's wrap-around and third dimension, and
 * parallel cables apart. */
static void link_path(struct fm_ctx *c, const struct lk *k)
{
	const struct fm_layout *l = c->l;
	int32_t ka = sw_of(c, k->a), kb = sw_of(c, k->b);
	double x1 = l->x[ka], y1 = l->y[ka], x2 = l->x[kb], y2 = l->y[kb];
	double dx = x2 - x1, dy = y2 - y1, len = sqrt(dx * dx + dy * dy);
	double bend = 0;

	if (ka == kb) {
		fm_put(c->b, " d=\"M%.1f %.1fC%.1f %.1f %.1f %.1f %.1f %.1f\"",
		       x1, y1, x1 + 25, y1 - 35, x1 - 25, y1 - 35, x1, y1);
		return;
	}
	if (l->kind == FM_TIERS && l->tier[ka] == l->tier[kb]) {
		bend = 0.3 * len;
	} else if (l->kind == FM_GRID) {
		const int *ca = &l->coord[3 * ka], *cb = &l->coord[3 * kb];
		int step = abs(ca[0] - cb[0]) + abs(ca[1] - cb[1]);

		if (ca[2] != cb[2] || step != 1)
			bend = 0.15 * len + 25;
	}
	bend += ((double)k->par - (k->npar - 1) / 2.0) * 6.0;
	if (bend == 0 || len < 1e-9) {
		fm_put(c->b, " d=\"M%.1f %.1fL%.1f %.1f\"", x1, y1, x2, y2);
		return;
	}
	double mx = (x1 + x2) / 2 - dy / len * bend;
	double my = (y1 + y2) / 2 + dx / len * bend;
	fm_put(c->b, " d=\"M%.1f %.1fQ%.1f %.1f %.1f %.1f\"", x1, y1, mx, my,
	       x2, y2);
}

/* The band of fabmap_load_colour(): 0 no route ... 4 twice the ideal. */
static int load_band(double ratio)
{
	return ratio == 0 ? 0 : ratio < 0.75 ? 1 : ratio < 1.25 ? 2 :
	       ratio < 2.0 ? 3 : 4;
}

static void link_elem(struct fm_ctx *c, const struct lk *k)
{
	const struct fabric *f = c->in->f;
	const char *hc = fm_health_colour(k->sev);
	const char *lc = fabmap_load_colour(k->ratio);
	bool load = c->in->load_view && c->in->loads;

	/* classes: health h0-h2 and load band l0-l4, for the widths */
	fm_put(c->b, "<path class=\"link h%d", k->sev < 0 ? 0 : k->sev + 1);
	if (k->ratio >= 0)
		fm_put(c->b, " l%d", load_band(k->ratio));
	fm_put(c->b, "\" data-a=\"0x%016" PRIx64 "/%u\""
	       " data-b=\"0x%016" PRIx64 "/%u\" data-health=\"%s\"",
	       fabric_node(f, k->a)->guid, k->pa, fabric_node(f, k->b)->guid,
	       k->pb, fm_health_name(k->sev));
	if (k->ratio >= 0)
		fm_put(c->b, " data-load=\"%.3f\"", k->ratio);
	fm_put(c->b, " data-hc=\"%s\" data-lc=\"%s\" stroke=\"%s\"", hc, lc,
	       load ? lc : hc);
	link_path(c, k);
	fm_put(c->b, ">");
	link_title(c, k);
	fm_put(c->b, "</path>\n");
}

/* Every cable between two switches once, with its place among the
 * parallel cables of its pair. */
static struct lk *collect_links(struct fm_ctx *c, size_t *nl)
{
	const struct fabric *f = c->in->f;
	const uint64_t *ld = c->in->loads;
	size_t n = 0, cap = 0;
	struct lk *v = NULL;
	uint16_t *cnt = calloc(c->g->n + 1, sizeof(*cnt));

	if (!cnt)
		return NULL;
	for (size_t k = 0; k < c->g->n; k++) {
		int32_t i = c->g->node[k];
		const struct fab_node *nd = fabric_node(f, i);
		size_t first = n;

		for (unsigned p = 1; p <= nd->num_ports; p++) {
			const struct fab_port *pt = &nd->ports[p];
			int32_t jn = pt->peer_node;

			if (jn == FAB_NONE || c->g->idx[jn] < 0 ||
			    (jn < i || (jn == i && pt->peer_port <= p)))
				continue;
			if (n == cap) {
				struct lk *nv = realloc(v, (cap = cap ? cap * 2 :
						1024) * sizeof(*v));
				if (!nv) {
					free(v);
					free(cnt);
					return NULL;
				}
				v = nv;
			}
			size_t sa = c->j->slot_off[i] + p;
			size_t sb = c->j->slot_off[jn] + pt->peer_port;
			struct lk *x = &v[n++];

			*x = (struct lk){ .a = i, .b = jn, .pa = (uint8_t)p,
					  .pb = pt->peer_port, .ratio = -1,
					  .par = cnt[c->g->idx[jn]]++ };
			x->sev = c->j->sev[sa] > c->j->sev[sb] ? c->j->sev[sa] :
				 c->j->sev[sb];
			if (ld && c->in->load_ideal > 0) {
				uint64_t m = ld[sa] > ld[sb] ? ld[sa] : ld[sb];

				x->ratio = (double)m / c->in->load_ideal;
			} else if (ld) {
				x->ratio = 0;
			}
		}
		for (size_t e = first; e < n; e++)
			v[e].npar = cnt[c->g->idx[v[e].b]];
		for (size_t e = first; e < n; e++)
			cnt[c->g->idx[v[e].b]] = 0;
	}
	free(cnt);
	*nl = n;
	if (!v)
		v = malloc(sizeof(*v));
	return v;
}

static void switch_title(struct fm_ctx *c, int32_t i, uint32_t hosts)
{
	const struct fabric *f = c->in->f;
	const struct fab_node *n = fabric_node(f, i);
	unsigned left = MAX_TITLE_FINDINGS;

	fm_put(c->b, "<title>");
	fm_esc(c->b, desc_of(n));
	fm_put(c->b, "\n0x%016" PRIx64 " LID %u, %u ports, %u hosts", n->guid,
	       n->ports[0].lid, n->num_ports, hosts);
	title_findings(c, c->j->node_head[i], &left, 0, 0);
	title_findings(c, c->j->head[c->j->slot_off[i]], &left, 0, 0);
	for (unsigned p = 1; p <= n->num_ports && left; p++) {
		int32_t peer = n->ports[p].peer_node;

		if (peer == FAB_NONE || c->g->idx[peer] >= 0)
			continue;
		title_findings(c, c->j->head[c->j->slot_off[i] + p], &left, 0, 0);
		title_findings(c, c->j->head[c->j->slot_off[peer] +
					     n->ports[p].peer_port], &left,
			       n->guid, p);
	}
	fm_put(c->b, "</title>");
}

/* Switches, their host counts and (on small fabrics) their names. */
static void switches(struct fm_ctx *c)
{
	const struct fm_layout *l = c->l;
	bool labels = c->g->n <= FM_LABEL_SWITCHES;

	for (size_t k = 0; k < c->g->n; k++) {
		int32_t i = c->g->node[k];
		const struct fab_node *n = fabric_node(c->in->f, i);
		int sev = c->j->node_sev[i];

		fm_put(c->b, "<circle class=\"sw\" id=\"sw-%016" PRIx64 "\""
		       " data-guid=\"0x%016" PRIx64 "\" data-health=\"%s\""
		       " data-hosts=\"%u\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\""
		       " fill=\"%s\">", n->guid, n->guid, fm_health_name(sev),
		       c->g->hosts[k], l->x[k], l->y[k], l->radius,
		       sev >= 0 ? fm_health_colour(sev) : "#546e7a");
		switch_title(c, i, c->g->hosts[k]);
		fm_put(c->b, "</circle>\n");
		if (c->g->hosts[k])
			fm_put(c->b, "<text class=\"hc\" x=\"%.1f\" y=\"%.1f\">"
			       "%u%s</text>\n", l->x[k], l->y[k] + l->radius + 11,
			       c->g->hosts[k], !labels ? "" : c->g->hosts[k] == 1 ?
			       " host" : " hosts");
		if (labels) {
			char name[25];
			size_t nl = strnlen(desc_of(n), sizeof(name) - 1);

			/* a cut UTF-8 sequence becomes '?' (fm_esc) */
			memcpy(name, desc_of(n), nl);
			name[nl] = '\0';
			fm_put(c->b, "<text class=\"nm\" x=\"%.1f\" y=\"%.1f\">",
			       l->x[k], l->y[k] - l->radius - 4);
			fm_esc(c->b, name);
			fm_put(c->b, "</text>\n");
		}
	}
}

static const char *layout_name(const struct fm_layout *l)
{
	return l->kind == FM_TIERS ? "tiers" : l->kind == FM_GRID ?
	       (l->torus ? "torus" : "mesh") : "force";
}

void fm_svg(struct fm_ctx *c, bool standalone)
{
	const struct fm_layout *l = c->l;
	size_t nl = 0;
	struct lk *v = collect_links(c, &nl);

	if (!v) {
		c->b->failed = true;
		return;
	}
	c->links = nl;
	c->hosts = 0;
	c->hot = 0;
	c->max_ratio = 0;
	for (size_t e = 0; e < nl; e++) {
		c->hot += v[e].ratio >= 1.25;
		c->max_ratio = fmax(c->max_ratio, v[e].ratio);
	}
	for (size_t k = 0; k < c->g->n; k++)
		c->hosts += c->g->hosts[k];
	if (standalone)
		fm_put(c->b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fm_put(c->b, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"map\""
	       " class=\"fabmap\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\""
	       " height=\"%.0f\" data-layout=\"%s\" data-switches=\"%zu\""
	       " data-links=\"%zu\" data-hosts=\"%zu\" data-view=\"%s\">\n",
	       l->width, l->height, l->width, l->height, layout_name(l),
	       c->g->n, nl, c->hosts, c->in->load_view && c->in->loads ?
	       "load" : "health");
	/* Widths in screen pixels whatever the scale: cables thin (and
	 * faint where there are many), faults and hot cables wide. */
	bool dense = nl > 1500;
	fm_put(c->b, "<style>.link{fill:none;vector-effect:non-scaling-stroke;"
	       "stroke-width:%s;stroke-opacity:%s}"
	       "#map[data-view=health] .h1,#map[data-view=load] .l3"
	       "{stroke-width:2.5;stroke-opacity:1}"
	       "#map[data-view=health] .h2,#map[data-view=load] .l4"
	       "{stroke-width:3.5;stroke-opacity:1}"
	       ".hc,.nm{font:9px sans-serif;fill:#455a64;text-anchor:middle}"
	       ".nm{font-size:10px;fill:#263238}"
	       ".tl{font-family:sans-serif;fill:#37474f}"
	       ".sw{stroke:#263238;stroke-width:1}</style>\n"
	       "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
	       dense ? "0.6" : "1.2", dense ? "0.5" : "0.9");
	if (l->kind == FM_TIERS)
		for (unsigned t = 0; t < l->tiers; t++) {
			for (size_t k = 0; k < c->g->n; k++)
				if (l->tier[k] == (int)t) {
					fm_put(c->b, "<text class=\"tl\" x=\"4\""
					       " y=\"%.1f\" font-size=\"%.0f\">"
					       "%s%.0u</text>\n",
					       l->y[k] + l->label_size / 3,
					       l->label_size, t ? "tier " :
					       "leaves", t);
					break;
				}
		}
	fm_put(c->b, "<g id=\"links\">\n");
	/* the worst last, on top: by health, then by load */
	for (int sev = -1; sev < HF_N_SEVERITIES; sev++)
		for (int band = -1; band <= 4; band++)
			for (size_t e = 0; e < nl; e++)
				if (v[e].sev == sev && (v[e].ratio < 0 ? -1 :
				    load_band(v[e].ratio)) == band)
					link_elem(c, &v[e]);
	fm_put(c->b, "</g>\n<g id=\"switches\">\n");
	switches(c);
	fm_put(c->b, "</g>\n</svg>\n");
	free(v);
}

/* ------------------------------------------------------------- page */

static void key(struct fabmap_buf *b, const char *colour, const char *text)
{
	fm_put(b, "<span class=\"key\" style=\"background:%s\"></span>%s",
	       colour, text);
}

static void findings_table(struct fm_ctx *c)
{
	const struct fabmap_input *in = c->in;
	size_t n = in->findings ? in->n_findings : 0;

	fm_put(c->b, "<h3>Findings (%zu)</h3>\n<table id=\"findings\">"
	       "<tr><th>severity</th><th>kind</th><th>where</th><th>peer</th>"
	       "<th>what</th></tr>\n", n);
	for (size_t i = 0; i < n && i < MAX_TABLE_FINDINGS; i++) {
		const struct hf_finding *x = &in->findings[i];

		fm_put(c->b, "<tr class=\"%s\"><td>%s</td><td>%s</td><td>",
		       hf_severity_name(x->severity),
		       hf_severity_name(x->severity), hf_kind_name(x->kind));
		fm_esc(c->b, x->desc);
		fm_put(c->b, " 0x%016" PRIx64 "/%u</td><td>", x->guid, x->port);
		if (x->peer_guid) {
			fm_esc(c->b, x->peer_desc);
			fm_put(c->b, " 0x%016" PRIx64 "/%u", x->peer_guid,
			       x->peer_port);
		}
		fm_put(c->b, "</td><td>");
		fm_esc(c->b, x->text);
		fm_put(c->b, "</td></tr>\n");
	}
	if (n > MAX_TABLE_FINDINGS)
		fm_put(c->b, "<tr><td colspan=\"5\">... and %zu more</td></tr>\n",
		       n - MAX_TABLE_FINDINGS);
	fm_put(c->b, "</table>\n");
}

static const char page_style[] =
	"body{margin:0;font:13px sans-serif;color:#212121;background:#fff}"
	"#bar{padding:6px 10px;border-bottom:1px solid #ccc;position:sticky;"
	"top:0;background:#fafafa;z-index:1}#bar button{margin-left:6px}"
	"#bar button.on{font-weight:bold}.key{display:inline-block;width:18px;"
	"height:5px;margin:0 3px 2px 10px}svg#map{display:block;width:100%;"
	"height:calc(100vh - 64px);min-height:300px;cursor:grab}table{border-collapse:collapse;margin:0 10px}"
	"td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}"
	"tr.critical td:first-child{color:#c62828}h3{margin:10px}";

/* The view switch (also from the address: #load, #health) and the zoom
 * (wheel) and pan (drag) of the map; for the benchmark, on the body:
 * data-ready-ms, the milliseconds from navigation to the end of the
 * script (the page parsed, its layout forced), and data-painted-ms, to
 * the second frame after it (painted once). */
static const char page_script[] =
	"(function(){\n"
	"var links=document.querySelectorAll('#map .link');\n"
	"function view(v){\n"
	" for(var i=0;i<links.length;i++){var e=links[i];\n"
	"  e.setAttribute('stroke',e.getAttribute(v=='load'?'data-lc':'data-hc'));}\n"
	" document.body.setAttribute('data-view',v);\n"
	" document.getElementById('map').setAttribute('data-view',v);\n"
	" document.getElementById('lg-health').hidden=v!='health';\n"
	" document.getElementById('lg-load').hidden=v!='load';\n"
	" document.getElementById('v-health').className=v=='health'?'on':'';\n"
	" document.getElementById('v-load').className=v=='load'?'on':'';}\n"
	"document.getElementById('v-health').addEventListener('click',"
	"function(){view('health');});\n"
	"document.getElementById('v-load').addEventListener('click',"
	"function(){view('load');});\n"
	"view(location.hash=='#load'&&!document.getElementById('v-load').disabled?"
	"'load':location.hash=='#health'?'health':"
	"document.body.getAttribute('data-view'));\n"
	"var svg=document.getElementById('map'),vb=svg.viewBox.baseVal,drag=null;\n"
	"svg.addEventListener('wheel',function(ev){ev.preventDefault();\n"
	" var r=svg.getBoundingClientRect(),s=ev.deltaY>0?1.25:0.8;\n"
	" var px=vb.x+(ev.clientX-r.left)/r.width*vb.width;\n"
	" var py=vb.y+(ev.clientY-r.top)/r.height*vb.height;\n"
	" vb.x=px-(px-vb.x)*s;vb.y=py-(py-vb.y)*s;vb.width*=s;vb.height*=s;},"
	"{passive:false});\n"
	"svg.addEventListener('mousedown',function(ev){drag=[ev.clientX,ev.clientY];});\n"
	"window.addEventListener('mouseup',function(){drag=null;});\n"
	"svg.addEventListener('mousemove',function(ev){if(!drag)return;\n"
	" var r=svg.getBoundingClientRect();\n"
	" vb.x-=(ev.clientX-drag[0])/r.width*vb.width;\n"
	" vb.y-=(ev.clientY-drag[1])/r.height*vb.height;\n"
	" drag=[ev.clientX,ev.clientY];});\n"
	"svg.getBoundingClientRect();\n"
	"document.body.setAttribute('data-ready-ms',Math.round(performance.now()));\n"
	"requestAnimationFrame(function(){requestAnimationFrame(function(){\n"
	" document.body.setAttribute('data-painted-ms',"
	"Math.round(performance.now()));});});\n"
	"})();\n";

static void page_bar(struct fm_ctx *c, const char *title)
{
	const struct fabmap_input *in = c->in;
	struct fabmap_buf *b = c->b;

	fm_put(b, "<div id=\"bar\"><b>");
	fm_esc(b, title);
	fm_put(b, "</b> &#8212; %zu switches, %zu hosts, %zu cables between"
	       " switches; layout: %s; findings: %u critical, %u warning%s",
	       c->g->n, c->hosts, c->links, layout_name(c->l),
	       c->j->count[HF_CRITICAL], c->j->count[HF_WARNING],
	       c->j->count[HF_WARNING] == 1 ? "" : "s");
	if (in->now > 0) {
		time_t t = (time_t)in->now;
		struct tm tm;
		char ts[32];

		gmtime_r(&t, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
		fm_put(b, "; %s", ts);
	}
	fm_put(b, "<br><button id=\"v-health\">Health</button>"
	       "<button id=\"v-load\"%s>Load</button><span id=\"lg-health\">",
	       in->loads ? "" : " disabled title=\"no routes\"");
	key(b, FABMAP_OK, "healthy");
	key(b, FABMAP_WARNING, "warning");
	key(b, FABMAP_CRITICAL, "critical");
	fm_put(b, "</span><span id=\"lg-load\" hidden>");
	key(b, fabmap_load_colour(0), "no route");
	key(b, fabmap_load_colour(0.5), "&lt; 0.75 x ideal");
	key(b, fabmap_load_colour(1), "about ideal");
	key(b, fabmap_load_colour(1.5), "1.25-2 x");
	key(b, fabmap_load_colour(2), "&#8805; 2 x ideal");
	if (in->loads)
		fm_put(b, " (ideal %.1f routes per cable; busiest %.2f x;"
		       " %zu cable%s at 1.25 x or more)", in->load_ideal,
		       c->max_ratio, c->hot, c->hot == 1 ? "" : "s");
	else
		fm_put(b, " (no routes)");
	fm_put(b, "</span> &#8212; wheel: zoom, drag: pan, hover: details"
	       "</div>\n");
}

void fm_html(struct fm_ctx *c)
{
	const struct fabmap_input *in = c->in;
	const char *title = in->title ? in->title : "ibsm fabric map";
	struct fabmap_buf svg = { 0 };
	struct fm_ctx sc = *c;

	/* the SVG first: the bar above it gives its counts */
	sc.b = &svg;
	fm_svg(&sc, false);
	c->links = sc.links;
	c->hosts = sc.hosts;
	c->hot = sc.hot;
	c->max_ratio = sc.max_ratio;
	if (svg.failed) {
		c->b->failed = true;
		fabmap_buf_free(&svg);
		return;
	}
	fm_put(c->b, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
	       "<meta charset=\"utf-8\"><title>");
	fm_esc(c->b, title);
	fm_put(c->b, "</title>\n<style>%s</style></head>\n<body data-view="
	       "\"%s\">\n", page_style, in->load_view && in->loads ?
	       "load" : "health");
	page_bar(c, title);
	fm_put(c->b, "%s", svg.data);
	fabmap_buf_free(&svg);
	findings_table(c);
	fm_put(c->b, "<script>\n%s</script>\n</body></html>\n", page_script);
}
