/*
 * order.c - guid_routing_order_file, port_search_ordering_file and
 * ids_guid_file (see order.h): the parsers, the per-switch port ranks
 * and the LID order the engines follow.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/order.h"

/* Whitespace as isspace() in the C locale, without a locale lookup. */
static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' ||
	       c == '\r';
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

enum num_rc { NUM_OK, NUM_BAD, NUM_RANGE };

/*
 * A number at p (before end) as strtoull base 0 reads one: 0x/0X and hex
 * digits, a leading 0 and octal digits, else decimal.  It must end at
 * `end`, a blank or '#'.  No sign.  *next: where it ended.
 */
static enum num_rc parse_num(const char *p, const char *end, uint64_t *v,
			     const char **next)
{
	unsigned base = 10;
	uint64_t x = 0;
	bool over = false;
	const char *s = p;

	if (p < end && *p == '0') {
		base = 8;
		if (end - p > 2 && (p[1] == 'x' || p[1] == 'X') &&
		    hex_digit(p[2]) >= 0) {
			base = 16;
			s = p + 2;
		}
	}
	for (; s < end; s++) {
		int d = hex_digit(*s);

		if (d < 0 || (unsigned)d >= base)
			break;
		if (x > (UINT64_MAX - (unsigned)d) / base)
			over = true;
		x = x * base + (unsigned)d;
	}
	*next = s;
	if (s == p || (s < end && !is_blank(*s) && *s != '#'))
		return NUM_BAD;
	*v = x;
	return over ? NUM_RANGE : NUM_OK;
}

/* `tok` (up to a blank) for a message: at most 40 printable characters. */
static void quote(const char *tok, const char *end, char *buf, size_t len)
{
	size_t n = 0;

	for (; tok < end && !is_blank(*tok) && n + 4 < len && n < 40; tok++)
		buf[n++] = *tok >= 0x20 && *tok < 0x7f ? *tok : '?';
	if (tok < end && !is_blank(*tok) && n + 4 < len)
		for (int i = 0; i < 3; i++)
			buf[n++] = '.';
	buf[n] = '\0';
}

__attribute__((format(printf, 4, 5)))
static void warnf(order_warn_fn *warn, void *ctx, bool *any,
		  const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	if (any)
		*any = true;
	if (!warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	warn(ctx, msg);
}

/* The next line of text: [*p, *e) without the newline; false at the end. */
static bool next_line(const char *text, size_t len, size_t *pos,
		      const char **p, const char **e)
{
	const char *nl;

	if (*pos >= len)
		return false;
	*p = text + *pos;
	nl = memchr(*p, '\n', len - *pos);
	*e = nl ? nl : text + len;
	*pos = (size_t)(*e - text) + 1;
	return true;
}

/* Blanks skipped; NULL for a line with nothing or a comment from here. */
static const char *content(const char *p, const char *e)
{
	while (p < e && is_blank(*p))
		p++;
	return p == e || *p == '#' ? NULL : p;
}

/* ------------------------------------------------ guid_routing_order_file */

/* GUID -> index into o, open addressing; first line wins. */
struct gset {
	uint64_t *key;
	uint32_t *at;
	size_t cap, n;
};

static size_t ghash(uint64_t g)
{
	g ^= g >> 33;
	g *= 0xff51afd7ed558ccdull;
	g ^= g >> 33;
	return (size_t)g;
}

static int gset_grow(struct gset *s)
{
	size_t cap = s->cap ? s->cap * 2 : 256;
	uint64_t *key = calloc(cap, sizeof(*key));
	uint32_t *at = malloc(cap * sizeof(*at));

	if (!key || !at) {
		free(key);
		free(at);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->cap; i++) {
		size_t j;

		if (!s->key[i])
			continue;
		for (j = ghash(s->key[i]) & (cap - 1); key[j]; j = (j + 1) & (cap - 1))
			;
		key[j] = s->key[i];
		at[j] = s->at[i];
	}
	free(s->key);
	free(s->at);
	s->key = key;
	s->at = at;
	s->cap = cap;
	return 0;
}

/* Add g (non-zero) as entry `idx`: -1 when added, the entry that holds
 * it already, or INT64_MIN when out of memory. */
static int64_t gset_add(struct gset *s, uint64_t g, uint32_t idx)
{
	size_t j;

	if ((s->n + 1) * 2 > s->cap && gset_grow(s) < 0)
		return INT64_MIN;
	for (j = ghash(g) & (s->cap - 1); s->key[j]; j = (j + 1) & (s->cap - 1))
		if (s->key[j] == g)
			return s->at[j];
	s->key[j] = g;
	s->at[j] = idx;
	s->n++;
	return -1;
}

static void gset_free(struct gset *s)
{
	free(s->key);
	free(s->at);
}

void order_guids_free(struct order_guids *o)
{
	free(o->guid);
	free(o->line);
	memset(o, 0, sizeof(*o));
}

/* Room for one more entry. */
static int guids_room(struct order_guids *o, size_t *cap)
{
	size_t c;
	uint64_t *g;
	unsigned *l;

	if (o->n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 64;
	g = realloc(o->guid, c * sizeof(*g));
	if (!g)
		return -ENOMEM;
	o->guid = g;
	l = realloc(o->line, c * sizeof(*l));
	if (!l)
		return -ENOMEM;
	o->line = l;
	*cap = c;
	return 0;
}

int order_guids_parse(struct order_guids *o, const char *text, size_t len,
		      const char *name, order_warn_fn *warn, void *ctx)
{
	struct gset seen = { 0 };
	size_t pos = 0, cap = 0;
	unsigned line = 0;
	const char *p, *e, *next;
	char tok[64];

	memset(o, 0, sizeof(*o));
	while (next_line(text, len, &pos, &p, &e)) {
		uint64_t g;
		enum num_rc rc;
		int64_t was;

		line++;
		if (!(p = content(p, e)))
			continue;
		rc = parse_num(p, e, &g, &next);
		quote(p, e, tok, sizeof(tok));
		if (rc != NUM_OK || !g) {
			warnf(warn, ctx, NULL, "%s:%u: '%s': expected a port GUID"
			      " (0x and hexadecimal digits)%s; line skipped",
			      name, line, tok, rc == NUM_RANGE ?
			      ", it has more than 64 bits" : !g && rc == NUM_OK ?
			      ", not 0" : "");
			continue;
		}
		if (o->n == ORDER_MAX_ENTRIES) {
			warnf(warn, ctx, NULL, "%s:%u: more than %u GUIDs: the rest"
			      " is ignored", name, line, ORDER_MAX_ENTRIES);
			break;
		}
		was = gset_add(&seen, g, (uint32_t)o->n);
		if (was == INT64_MIN)
			goto nomem;
		if (was >= 0) {
			warnf(warn, ctx, NULL, "%s:%u: 0x%016" PRIx64 " is listed"
			      " already on line %u; line skipped", name, line,
			      g, o->line[was]);
			continue;
		}
		if (guids_room(o, &cap) < 0)
			goto nomem;
		o->guid[o->n] = g;
		o->line[o->n++] = line;
	}
	gset_free(&seen);
	return 0;
nomem:
	gset_free(&seen);
	order_guids_free(o);
	return -ENOMEM;
}

/* ---------------------------------------------------------- ids_guid_file */

void node_ids_free(struct node_ids *o)
{
	free(o->guid);
	free(o->id);
	free(o->line);
	memset(o, 0, sizeof(*o));
}

/* Room for one more entry. */
static int ids_room(struct node_ids *o, size_t *cap)
{
	size_t c;
	void *q;

	if (o->n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 64;
	if (!(q = realloc(o->guid, c * sizeof(*o->guid))))
		return -ENOMEM;
	o->guid = q;
	if (!(q = realloc(o->id, c * sizeof(*o->id))))
		return -ENOMEM;
	o->id = q;
	if (!(q = realloc(o->line, c * sizeof(*o->line))))
		return -ENOMEM;
	o->line = q;
	*cap = c;
	return 0;
}

/* The GUID and id of one line at p into *g, *id; false (warned) if bad. */
static bool ids_line(const char *p, const char *e, const char *name,
		     unsigned line, uint64_t *g, uint64_t *id,
		     order_warn_fn *warn, void *ctx)
{
	const char *next;
	enum num_rc rc = parse_num(p, e, g, &next);
	char tok[64];

	quote(p, e, tok, sizeof(tok));
	if (rc != NUM_OK || !*g) {
		warnf(warn, ctx, NULL, "%s:%u: '%s': expected a switch node "
		      "GUID (0x and hexadecimal digits)%s; line skipped", name,
		      line, tok, rc == NUM_RANGE ? ", it has more than 64 bits"
		      : rc == NUM_OK ? ", not 0" : "");
		return false;
	}
	p = next;
	while (p < e && is_blank(*p))
		p++;
	if (p == e || *p == '#') {
		warnf(warn, ctx, NULL, "%s:%u: 0x%016" PRIx64 " has no id "
		      "(expected '<GUID> <id>'); line skipped", name, line, *g);
		return false;
	}
	rc = parse_num(p, e, id, &next);
	quote(p, e, tok, sizeof(tok));
	if (rc != NUM_OK) {
		warnf(warn, ctx, NULL, "%s:%u: '%s': expected an id (a number,"
		      " 0x for hexadecimal)%s; line skipped", name, line, tok,
		      rc == NUM_RANGE ? ", it has more than 64 bits" : "");
		return false;
	}
	return true;
}

int node_ids_parse(struct node_ids *o, const char *text, size_t len,
		   const char *name, order_warn_fn *warn, void *ctx)
{
	struct gset seen = { 0 };
	size_t pos = 0, cap = 0;
	unsigned line = 0;
	const char *p, *e;

	memset(o, 0, sizeof(*o));
	while (next_line(text, len, &pos, &p, &e)) {
		uint64_t g, id;
		int64_t was;

		line++;
		if (!(p = content(p, e)) ||
		    !ids_line(p, e, name, line, &g, &id, warn, ctx))
			continue;
		if (o->n == ORDER_MAX_ENTRIES) {
			warnf(warn, ctx, NULL, "%s:%u: more than %u GUIDs: the rest"
			      " is ignored", name, line, ORDER_MAX_ENTRIES);
			break;
		}
		was = gset_add(&seen, g, (uint32_t)o->n);
		if (was == INT64_MIN)
			goto nomem;
		if (was >= 0) {
			warnf(warn, ctx, NULL, "%s:%u: 0x%016" PRIx64 " is listed"
			      " already on line %u; this line's id %" PRIu64
			      " replaces that one's", name, line, g,
			      o->line[was], id);
			o->id[was] = id;
			o->line[was] = line;
			continue;
		}
		if (ids_room(o, &cap) < 0)
			goto nomem;
		o->guid[o->n] = g;
		o->id[o->n] = id;
		o->line[o->n++] = line;
	}
	gset_free(&seen);
	return 0;
nomem:
	gset_free(&seen);
	node_ids_free(o);
	return -ENOMEM;
}

/* ---------------------------------------------- port_search_ordering_file */

void port_order_free(struct port_order *o)
{
	free(o->e);
	memset(o, 0, sizeof(*o));
}

/* The ports of one line after its GUID into l; false (warned) when bad. */
static bool parse_ports(struct port_order_line *l, const char *p,
			const char *e, const char *name, order_warn_fn *warn,
			void *ctx)
{
	uint8_t seen[ORDER_MAX_PORT + 1] = { 0 };
	char tok[64];

	l->n = 0;
	for (;;) {
		uint64_t v;
		const char *next;
		enum num_rc rc;

		while (p < e && is_blank(*p))
			p++;
		if (p == e || *p == '#')
			break;
		rc = parse_num(p, e, &v, &next);
		quote(p, e, tok, sizeof(tok));
		if (rc == NUM_BAD) {
			warnf(warn, ctx, NULL, "%s:%u: '%s': expected a port "
			      "number; line skipped", name, l->line, tok);
			return false;
		}
		if (rc == NUM_RANGE || v < 1 || v > ORDER_MAX_PORT) {
			warnf(warn, ctx, NULL, "%s:%u: port '%s': expected 1-%u;"
			      " line skipped", name, l->line, tok,
			      ORDER_MAX_PORT);
			return false;
		}
		if (seen[v]) {
			warnf(warn, ctx, NULL, "%s:%u: port %" PRIu64 " is listed"
			      " twice; line skipped", name, l->line, v);
			return false;
		}
		seen[v] = 1;
		l->port[l->n++] = (uint8_t)v;
		p = next;
	}
	if (!l->n) {
		warnf(warn, ctx, NULL, "%s:%u: switch 0x%016" PRIx64 ": expected"
		      " port numbers after the GUID; line skipped", name,
		      l->line, l->guid);
		return false;
	}
	return true;
}

int port_order_parse(struct port_order *o, const char *text, size_t len,
		     const char *name, order_warn_fn *warn, void *ctx)
{
	size_t pos = 0, cap = 0;
	unsigned line = 0;
	const char *p, *e, *next;
	char tok[64];

	memset(o, 0, sizeof(*o));
	while (next_line(text, len, &pos, &p, &e)) {
		struct port_order_line *l;
		enum num_rc rc;
		uint64_t g;

		line++;
		if (!(p = content(p, e)))
			continue;
		rc = parse_num(p, e, &g, &next);
		if (rc != NUM_OK || !g) {
			quote(p, e, tok, sizeof(tok));
			warnf(warn, ctx, NULL, "%s:%u: '%s': expected a switch "
			      "node GUID (0x and hexadecimal digits), then port "
			      "numbers; line skipped", name, line, tok);
			continue;
		}
		if (o->n == ORDER_MAX_ENTRIES) {
			warnf(warn, ctx, NULL, "%s:%u: more than %u lines: the "
			      "rest is ignored", name, line, ORDER_MAX_ENTRIES);
			break;
		}
		if (o->n == cap) {
			size_t c = cap ? cap * 2 : 16;
			struct port_order_line *ne = realloc(o->e, c * sizeof(*ne));

			if (!ne) {
				port_order_free(o);
				return -ENOMEM;
			}
			o->e = ne;
			cap = c;
		}
		l = &o->e[o->n];
		l->guid = g;
		l->line = line;
		if (parse_ports(l, next, e, name, warn, ctx))
			o->n++;
	}
	return 0;
}

/* Is line l usable on f: a switch, its ports, not set yet?  The node. */
static int32_t resolve_line(const struct fabric *f,
			    const struct port_order_line *l,
			    const unsigned *first, const char *name,
			    order_warn_fn *warn, void *ctx)
{
	int32_t id = fabric_find(f, l->guid);
	const struct fab_node *n;

	if (id < 0 || fabric_node(f, id)->type != NODE_TYPE_SWITCH) {
		warnf(warn, ctx, NULL, "%s:%u: 0x%016" PRIx64 " is no switch "
		      "of the fabric; line skipped", name, l->line, l->guid);
		return -1;
	}
	n = fabric_node(f, id);
	for (unsigned i = 0; i < l->n; i++)
		if (l->port[i] > n->num_ports) {
			warnf(warn, ctx, NULL, "%s:%u: port %u: switch 0x%016"
			      PRIx64 " has ports 1-%u; line skipped", name,
			      l->line, l->port[i], l->guid, n->num_ports);
			return -1;
		}
	if (first[id]) {
		warnf(warn, ctx, NULL, "%s:%u: switch 0x%016" PRIx64 " is "
		      "ordered already on line %u; line skipped", name,
		      l->line, l->guid, first[id]);
		return -1;
	}
	return id;
}

long port_order_resolve(const struct fabric *f, const struct port_order *po,
			const char *name, uint8_t ***rank,
			order_warn_fn *warn, void *ctx)
{
	size_t bytes, ptrs = (f->n_nodes ? f->n_nodes : 1) * sizeof(uint8_t *);
	unsigned *first = calloc(f->n_nodes + 1, sizeof(*first));
	size_t *which = malloc((po->n + 1) * sizeof(*which));
	size_t n_sw = 0;
	uint8_t **r, *data;

	*rank = NULL;
	if (!first || !which) {
		free(first);
		free(which);
		return -ENOMEM;
	}
	bytes = ptrs;
	for (size_t i = 0; i < po->n; i++) {
		int32_t id = resolve_line(f, &po->e[i], first, name, warn, ctx);

		if (id < 0)
			continue;
		first[id] = po->e[i].line;
		which[n_sw++] = i;
		bytes += (size_t)fabric_node(f, id)->num_ports + 1;
	}
	r = n_sw ? calloc(1, bytes) : NULL;
	if (n_sw && !r) {
		free(first);
		free(which);
		return -ENOMEM;
	}
	data = r ? (uint8_t *)r + ptrs : NULL;
	for (size_t k = 0; k < n_sw; k++) {
		const struct port_order_line *l = &po->e[which[k]];
		int32_t id = fabric_find(f, l->guid);
		unsigned np = fabric_node(f, id)->num_ports, at = 1;

		r[id] = data;
		data += np + 1;
		/* rank 0 marks "not placed yet" below; port 0 keeps it */
		for (unsigned i = 0; i < l->n; i++)
			r[id][l->port[i]] = (uint8_t)at++;
		for (unsigned p = 1; p <= np; p++)
			if (!r[id][p])
				r[id][p] = (uint8_t)at++;
	}
	free(first);
	free(which);
	*rank = r;
	return (long)n_sw;
}

/* ------------------------------ hop_weights_file, port_prof_ignore_file */

void port_vals_free(struct port_vals *pv)
{
	free(pv->e);
	memset(pv, 0, sizeof(*pv));
}

/*
 * The number at p (after blanks) into *v when it is in lo .. hi; `what`
 * names it in the warning.  NULL (warned) when it is missing or bad,
 * else where it ended.
 */
static const char *val_field(const char *p, const char *e, uint64_t lo,
			     uint64_t hi, uint64_t *v, const char *what,
			     const char *name, unsigned line,
			     order_warn_fn *warn, void *ctx)
{
	const char *next;
	enum num_rc rc;
	char tok[64];

	while (p < e && is_blank(*p))
		p++;
	if (p == e || *p == '#') {
		warnf(warn, ctx, NULL, "%s:%u: expected a %s after the switch "
		      "GUID; line skipped", name, line, what);
		return NULL;
	}
	rc = parse_num(p, e, v, &next);
	quote(p, e, tok, sizeof(tok));
	if (rc != NUM_OK || *v < lo || *v > hi) {
		warnf(warn, ctx, NULL, "%s:%u: %s '%s': expected %" PRIu64
		      "-%" PRIu64 "; line skipped", name, line, what, tok, lo,
		      hi);
		return NULL;
	}
	return next;
}

/* Room for one more line. */
static int vals_room(struct port_vals *pv, size_t *cap)
{
	size_t c;
	struct port_val_line *ne;

	if (pv->n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	ne = realloc(pv->e, c * sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	pv->e = ne;
	*cap = c;
	return 0;
}

int port_vals_parse(struct port_vals *pv, const char *text, size_t len,
		    const char *name, bool weights, order_warn_fn *warn,
		    void *ctx)
{
	size_t pos = 0, cap = 0;
	unsigned line = 0;
	const char *p, *e, *next;
	char tok[64];

	memset(pv, 0, sizeof(*pv));
	while (next_line(text, len, &pos, &p, &e)) {
		uint64_t g, port, w = 1;
		enum num_rc rc;

		line++;
		if (!(p = content(p, e)))
			continue;
		rc = parse_num(p, e, &g, &next);
		if (rc != NUM_OK || !g) {
			quote(p, e, tok, sizeof(tok));
			warnf(warn, ctx, NULL, "%s:%u: '%s': expected a switch "
			      "node GUID (0x and hexadecimal digits), then a "
			      "port%s; line skipped", name, line, tok,
			      weights ? " and a weight" : "");
			continue;
		}
		next = val_field(next, e, 1, ORDER_MAX_PORT, &port, "port",
				 name, line, warn, ctx);
		if (next && weights)
			next = val_field(next, e, 1, 255, &w, "weight", name,
					 line, warn, ctx);
		if (!next)
			continue;
		if (pv->n == ORDER_MAX_ENTRIES) {
			warnf(warn, ctx, NULL, "%s:%u: more than %u lines: the "
			      "rest is ignored", name, line, ORDER_MAX_ENTRIES);
			break;
		}
		if (vals_room(pv, &cap) < 0) {
			port_vals_free(pv);
			return -ENOMEM;
		}
		pv->e[pv->n++] = (struct port_val_line){
			.guid = g, .line = line, .port = (uint8_t)port,
			.val = (uint8_t)w };
	}
	return 0;
}

/* The switch line l names, when it has the port; else -1 (warned). */
static int32_t val_switch(const struct fabric *f,
			  const struct port_val_line *l, const char *name,
			  order_warn_fn *warn, void *ctx)
{
	int32_t id = fabric_find(f, l->guid);
	const struct fab_node *n;

	if (id < 0 || fabric_node(f, id)->type != NODE_TYPE_SWITCH) {
		warnf(warn, ctx, NULL, "%s:%u: 0x%016" PRIx64 " is no switch "
		      "of the fabric; line skipped", name, l->line, l->guid);
		return -1;
	}
	n = fabric_node(f, id);
	if (l->port > n->num_ports) {
		warnf(warn, ctx, NULL, "%s:%u: port %u: switch 0x%016" PRIx64
		      " has ports 1-%u; line skipped", name, l->line, l->port,
		      l->guid, n->num_ports);
		return -1;
	}
	return id;
}

long port_vals_resolve(const struct fabric *f, const struct port_vals *pv,
		       const char *name, uint8_t def, uint8_t ***val,
		       order_warn_fn *warn, void *ctx)
{
	size_t bytes, ptrs = (f->n_nodes ? f->n_nodes : 1) * sizeof(uint8_t *);
	int32_t *id = malloc((pv->n + 1) * sizeof(*id));
	uint8_t *named = calloc(f->n_nodes + 1, 1);
	uint8_t **v, *data;
	long n_sw = 0;

	*val = NULL;
	if (!id || !named) {
		free(id);
		free(named);
		return -ENOMEM;
	}
	bytes = ptrs;
	for (size_t i = 0; i < pv->n; i++) {
		id[i] = val_switch(f, &pv->e[i], name, warn, ctx);
		if (id[i] < 0 || named[id[i]])
			continue;
		named[id[i]] = 1;
		n_sw++;
		bytes += (size_t)fabric_node(f, id[i])->num_ports + 1;
	}
	v = n_sw ? calloc(1, bytes) : NULL;
	if (n_sw && !v) {
		free(id);
		free(named);
		return -ENOMEM;
	}
	data = v ? (uint8_t *)v + ptrs : NULL;
	for (size_t i = 0; i < pv->n; i++) {
		if (id[i] < 0)
			continue;
		if (!v[id[i]]) {
			size_t np = (size_t)fabric_node(f, id[i])->num_ports + 1;

			v[id[i]] = data;
			memset(data, def, np);
			data += np;
		}
		v[id[i]][pv->e[i].port] = pv->e[i].val;
	}
	free(id);
	free(named);
	*val = v;
	return n_sw;
}

/* --------------------------------------------------------- the LID order */

struct pguid {
	uint64_t guid;
	uint16_t lid;
	uint8_t lmc;
};

static int cmp_pguid(const void *a, const void *b)
{
	uint64_t x = ((const struct pguid *)a)->guid;
	uint64_t y = ((const struct pguid *)b)->guid;

	return x < y ? -1 : x > y;
}

/* The ports of f that have LIDs, sorted by port GUID; how many, or -1. */
static long port_guids(const struct fabric *f, struct pguid **out)
{
	size_t n = 0, cap = 0;
	struct pguid *v = NULL;

	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		bool sw = nd->type == NODE_TYPE_SWITCH;

		for (unsigned p = sw ? 0 : 1; p <= (sw ? 0u : nd->num_ports); p++) {
			const struct fab_port *pt = &nd->ports[p];

			if (!pt->lid || !pt->guid)
				continue;
			if (n == cap) {
				size_t c = cap ? cap * 2 : 256;
				struct pguid *nv = realloc(v, c * sizeof(*nv));

				if (!nv) {
					free(v);
					return -1;
				}
				v = nv;
				cap = c;
			}
			v[n++] = (struct pguid){ pt->guid, pt->lid, pt->lmc & 7 };
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_pguid);
	*out = v;
	return (long)n;
}

int routing_lid_order(const struct fabric *f, const struct routing_opts *o,
		      uint16_t top, uint16_t **lids, size_t *n_first)
{
	struct pguid *pg = NULL, key;
	uint8_t *taken;
	uint16_t *v;
	size_t n = 0;
	long np;

	*lids = NULL;
	*n_first = 0;
	if (!o || !o->n_order_guids || !top)
		return 0;
	np = port_guids(f, &pg);
	if (np < 0)
		return -ENOMEM;
	v = malloc((size_t)top * sizeof(*v));
	taken = calloc((size_t)top + 1, 1);
	if (!v || !taken) {
		free(pg);
		free(v);
		free(taken);
		return -ENOMEM;
	}
	for (size_t i = 0; np && i < o->n_order_guids; i++) {
		const struct pguid *hit;

		key.guid = o->order_guids[i];
		hit = bsearch(&key, pg, (size_t)np, sizeof(*pg), cmp_pguid);
		if (!hit)
			continue;
		for (size_t l = hit->lid; l < (size_t)hit->lid + (1u << hit->lmc) &&
		     l <= top; l++)
			if (!taken[l]) {
				taken[l] = 1;
				v[n++] = (uint16_t)l;
			}
	}
	free(pg);
	*n_first = n;
	if (!n) {
		free(v);
		free(taken);
		return 0;
	}
	for (size_t l = 1; l <= top; l++)
		if (!taken[l])
			v[n++] = (uint16_t)l;
	free(taken);
	*lids = v;
	return 0;
}
