/*
 * render.c - the fabric map as SVG and HTML (see fabmap.h): findings and
 * counters joined to the switches and cables they concern, every
 * element written with its data attributes, the page around it.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabmap/fabmap.h"
#include "fabmap/layout.h"
#include "fabmap/render_int.h"

/* ------------------------------------------------------------ buffer */

void fabmap_buf_free(struct fabmap_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

static bool reserve(struct fabmap_buf *b, size_t more)
{
	if (b->failed)
		return false;
	if (b->len + more + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 65536;
	while (cap < b->len + more + 1)
		cap *= 2;
	char *d = realloc(b->data, cap);
	if (!d) {
		b->failed = true;
		return false;
	}
	b->data = d;
	b->cap = cap;
	return true;
}

void fm_put(struct fabmap_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!reserve(b, 256))
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		if (!reserve(b, (size_t)n))
			return;
		va_start(ap, fmt);
		vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
}

/* Length of the UTF-8 sequence at s of a character XML allows (0: not
 * one): no overlong form, no surrogate, nothing above U+10FFFF, not
 * U+FFFE or U+FFFF. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 :
		   s[0] >= 0xe0 && s[0] <= 0xef ? 3 :
		   s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : 0;

	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90) ||
	    (s[0] == 0xef && s[1] == 0xbf && s[2] >= 0xbe))
		return 0;
	return n;
}

/* Text from the fabric (node descriptions, findings) in XML text and
 * attribute values: markup characters as entities, control characters
 * and bytes that are not UTF-8 as '?'. */
void fm_esc(struct fabmap_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n;

		if (!reserve(b, 8))
			return;
		switch (*p) {
		case '&': fm_put(b, "&amp;"); p++; continue;
		case '<': fm_put(b, "&lt;"); p++; continue;
		case '>': fm_put(b, "&gt;"); p++; continue;
		case '"': fm_put(b, "&quot;"); p++; continue;
		case '\'': fm_put(b, "&#39;"); p++; continue;
		default: break;
		}
		if (*p < 0x80) {
			b->data[b->len++] = *p >= 0x20 && *p != 0x7f ? (char)*p : '?';
			p++;
			continue;
		}
		n = utf8_len(p);
		if (!n) {
			b->data[b->len++] = '?';
			p++;
			continue;
		}
		memcpy(b->data + b->len, p, n);
		b->len += n;
		p += n;
	}
	if (b->data)
		b->data[b->len] = '\0';
}

/* ------------------------------------------------------------ names */

const char *fabmap_load_colour(double ratio)
{
	if (ratio < 0)
		return FABMAP_NO_DATA;
	if (ratio == 0)
		return "#cfd8dc";	/* carries no route */
	if (ratio < 0.75)
		return "#90caf9";	/* below the ideal */
	if (ratio < 1.25)
		return "#1e88e5";	/* about the ideal */
	if (ratio < 2.0)
		return "#fb8c00";	/* hot */
	return "#d81b60";		/* twice the ideal or more */
}

const char *fm_health_colour(int sev)
{
	return sev == HF_CRITICAL ? FABMAP_CRITICAL :
	       sev == HF_WARNING ? FABMAP_WARNING : FABMAP_OK;
}

const char *fm_health_name(int sev)
{
	return sev == HF_CRITICAL ? "critical" :
	       sev == HF_WARNING ? "warning" : "ok";
}

static const char *width_name(unsigned w)
{
	switch (w) {
	case 1:  return "1X";
	case 2:  return "4X";
	case 4:  return "8X";
	case 8:  return "12X";
	case 16: return "2X";
	default: return "?";
	}
}

static const char *speed_name(const struct smp_port_info *pi)
{
	switch (pi_speed_ext_active(pi)) {
	case 1: return "FDR";
	case 2: return "EDR";
	case 4: return "HDR";
	case 8: return "NDR";
	default: break;
	}
	switch (pi_speed_active(pi)) {
	case 1: return "SDR";
	case 2: return "DDR";
	case 4: return "QDR";
	default: return "?";
	}
}

void fm_link_rate(const struct fab_port *p, char *buf, size_t len)
{
	if (!p->valid)
		snprintf(buf, len, "width/speed unknown");
	else
		snprintf(buf, len, "%s %s", width_name(p->pi.link_width_active),
			 speed_name(&p->pi));
}

/* ------------------------------------------------------------ joins */

void fm_join_free(struct fm_join *j)
{
	free(j->slot_off);
	free(j->sev);
	free(j->node_sev);
	free(j->head);
	free(j->node_head);
	free(j->next);
	free(j->ctr);
	memset(j, 0, sizeof(*j));
}

static void note(struct fm_join *j, const struct fabric *f, size_t fi,
		 unsigned end, uint64_t guid, unsigned port, int sev)
{
	int32_t id = guid ? fabric_find(f, guid) : FAB_NONE;
	const struct fab_node *n;
	size_t e = 2 * fi + end;

	if (id == FAB_NONE)
		return;
	n = fabric_node(f, id);
	if (port && port <= n->num_ports) {
		size_t s = j->slot_off[id] + port;
		int32_t peer = n->ports[port].peer_node;

		j->sev[s] = sev > j->sev[s] ? (int8_t)sev : j->sev[s];
		j->next[e] = j->head[s];
		j->head[s] = (int32_t)e;
		/* a host's cable: the host's switch shows it */
		if (n->type != NODE_TYPE_SWITCH && peer != FAB_NONE &&
		    fabric_node(f, peer)->type == NODE_TYPE_SWITCH)
			id = peer;
		else if (n->type != NODE_TYPE_SWITCH || (peer != FAB_NONE &&
			 fabric_node(f, peer)->type == NODE_TYPE_SWITCH))
			return;		/* the cable's element shows it */
	} else {
		j->next[e] = j->node_head[id];
		j->node_head[id] = (int32_t)e;
	}
	j->node_sev[id] = sev > j->node_sev[id] ? (int8_t)sev : j->node_sev[id];
}

static int ctr_cmp(const void *a, const void *b)
{
	const struct pc_port *x = *(const struct pc_port *const *)a;
	const struct pc_port *y = *(const struct pc_port *const *)b;

	if (x->node_guid != y->node_guid)
		return x->node_guid < y->node_guid ? -1 : 1;
	return (int)x->port - (int)y->port;
}

const struct pc_port *fm_counters(const struct fm_join *j, uint64_t guid,
				  unsigned port)
{
	struct pc_port key = { .node_guid = guid, .port = (uint8_t)port };
	const struct pc_port *k = &key, *const *r;

	if (!j->n_ctr)
		return NULL;
	r = bsearch(&k, j->ctr, j->n_ctr, sizeof(*j->ctr), ctr_cmp);
	return r ? *r : NULL;
}

int fm_join_build(const struct fabmap_input *in, struct fm_join *j)
{
	const struct fabric *f = in->f;
	size_t slots = 0;

	memset(j, 0, sizeof(*j));
	j->slot_off = malloc((f->n_nodes + 1) * sizeof(*j->slot_off));
	if (!j->slot_off)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_nodes; i++) {
		j->slot_off[i] = slots;
		slots += (size_t)f->nodes[i].num_ports + 1;
	}
	j->slots = slots;
	j->sev = malloc(slots + 1);
	j->head = malloc((slots + 1) * sizeof(*j->head));
	j->node_sev = malloc(f->n_nodes + 1);
	j->node_head = malloc((f->n_nodes + 1) * sizeof(*j->node_head));
	j->next = malloc((2 * in->n_findings + 1) * sizeof(*j->next));
	if (!j->sev || !j->head || !j->node_sev || !j->node_head || !j->next)
		return -ENOMEM;
	memset(j->sev, -1, slots + 1);
	memset(j->node_sev, -1, f->n_nodes + 1);
	for (size_t s = 0; s <= slots; s++)
		j->head[s] = -1;
	for (size_t i = 0; i <= f->n_nodes; i++)
		j->node_head[i] = -1;
	for (size_t i = 0; in->findings && i < in->n_findings; i++) {
		const struct hf_finding *x = &in->findings[i];
		int sev = x->severity == HF_CRITICAL ? HF_CRITICAL : HF_WARNING;

		j->count[sev]++;
		note(j, f, i, 0, x->guid, x->port, sev);
		if (x->peer_guid != x->guid || x->peer_port != x->port)
			note(j, f, i, 1, x->peer_guid, x->peer_port, sev);
	}
	if (in->counters) {
		size_t it = 0, n = pc_store_count(in->counters);
		const struct pc_port *p;

		j->ctr = malloc((n + 1) * sizeof(*j->ctr));
		if (!j->ctr)
			return -ENOMEM;
		while ((p = pc_next(in->counters, &it)) && j->n_ctr < n)
			j->ctr[j->n_ctr++] = p;
		qsort(j->ctr, j->n_ctr, sizeof(*j->ctr), ctr_cmp);
	}
	return 0;
}

/* ------------------------------------------------------------ render */

int fabmap_render(const struct fabmap_input *in, enum fabmap_format fmt,
		  struct fabmap_buf *out)
{
	struct fm_graph g;
	struct fm_layout l;
	struct fm_join j;
	int rc;

	rc = fm_graph_build(in->f, &g);
	if (rc < 0)
		return rc;
	rc = fm_layout_compute(&g, &l);
	if (rc < 0) {
		fm_graph_free(&g);
		return rc;
	}
	rc = fm_join_build(in, &j);
	if (rc == 0) {
		struct fm_ctx c = { .in = in, .g = &g, .l = &l, .j = &j,
				    .b = out };

		if (fmt == FABMAP_HTML)
			fm_html(&c);
		else
			fm_svg(&c, true);
		rc = out->failed ? -ENOMEM : 0;
	}
	fm_join_free(&j);
	fm_layout_free(&l);
	fm_graph_free(&g);
	return rc;
}
