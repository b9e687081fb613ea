/*
 * topo_load.c - read an ibsim .net file or ibnetdiscover output into the
 * fabric model (see topo_load.h).
 *
 * Both formats are the same record structure:
 *
 *     vendid=0x2c9                     ibnetdiscover; ibsim reads them too
 *     devid=0xbd36
 *     sysimgguid=0x2c90000000000
 *     switchguid=0x2c90000000000(2c90000000000)
 *     Switch  36 "S-0002c90000000000"  # "desc" enhanced port 0 lid 1 lmc 0
 *     [1]     "H-0002c90100000000"[1](2c90100000001)  # "peer desc" lid 2 4xQDR
 *     [2]     "Switch2"[3]  w=3        ibsim: plain names, optional width
 *
 *     caguid=0x2c90100000000
 *     Ca      2 "H-0002c90100000000"   # "host1 HCA-1"     ("Hca" in ibsim)
 *     [1](2c90100000001)  "S-0002c90000000000"[1]  # lid 2 lmc 0 "desc" ...
 *
 * We follow ibsim where the two differ: its GUID numbering (below), a
 * missing peer [port] meaning port 1, an unquoted description, the link
 * width and speed from the "4xQDR" at the end of a port line's comment,
 * "do" lines skipped.  We are stricter where ibsim would silently guess:
 * unknown lines, bad numbers and links whose two ends disagree are errors
 * ("FILE:LINE: expected ..."); "include", "module=" and "@alias" lines
 * are refused rather than half supported.
 *
 * The file, read whole by the caller, is parsed in one pass into a list of node
 * records and a list of port lines; names are resolved and links made in
 * a second pass over the port lines, so a record may name nodes defined
 * further down.  A link may be listed on one end or both.  Loading a
 * 50,000-node file takes well under 0.1 s: the cost is the read and one
 * hash lookup per port line.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/topo_load.h"

/*
 * Node GUIDs are numbered the way ibsim numbers them, so a model loaded
 * here has the GUIDs ibsm discovers when ibsim runs the same file: one
 * counter per node type, starting at these, set by "switchguid=",
 * "caguid=" ("hcaguids=") or "rtguid=" lines (absolute, or "+N" from the
 * last absolute value).  A switch takes one GUID, a CA or router one for
 * the node and one per port (port p is node GUID + p).  ibnetdiscover
 * output sets the counter before every record, so each node gets its
 * own GUID.  Without a GUID line a name like "S-0002c903000a1b2c" gives
 * the GUID; otherwise the counter does.
 */
#define GUID_BASE_CA		0x100000ull
#define GUID_BASE_SWITCH	0x200000ull
#define GUID_BASE_ROUTER	0x300000ull	/* ibsim has none: ours */

#define MAX_PORTS		254	/* 255 is LFT "no path" */

/* One node record: the header line and the key=value lines before it. */
struct rec {
	const char *name;		/* NUL-terminated inside the file buffer */
	const char *desc;		/* from the "# "desc"" comment, or NULL */
	size_t   desc_len;
	uint64_t guid, port0_guid, sys_guid;
	uint32_t vendor_id;
	uint16_t device_id;
	uint32_t line;
	uint8_t  type, num_ports;
	bool     has_port0_guid, has_sys_guid, enhanced0;
	int32_t  id;			/* node id in the fabric */
};

/* One port line: "[port](guid) "peer"[peer_port](peer guid) w=N". */
struct ent {
	const char *peer;
	uint64_t guid, peer_guid;
	uint32_t rec, line;
	uint8_t  port, peer_port;
	uint8_t  width;			/* LinkWidthActive code, 0: not given */
	uint8_t  wmask;			/* ibsim's w=: LinkWidthEnabled, 0: none */
	uint8_t  speed, ext_speed;	/* LinkSpeed(Ext)Active, 0: not given */
	bool     has_guid, has_peer_guid;
};

struct loader {
	const char *path;
	char *err;
	size_t errlen;
	uint32_t line;

	struct rec *recs;
	size_t n_recs, cap_recs;
	struct ent *ents;
	size_t n_ents, cap_ents;
	int32_t *names;			/* hash of record names -> rec index */
	size_t names_size;

	/* key=value lines: vendid, sysimgguid and a switch's port 0 GUID
	 * apply to the next node; devid to all that follow (as in ibsim) */
	struct rec pending;
	uint16_t device_id;
	/* per node type (NODE_TYPE_*): GUID counter, its last absolute
	 * value, and whether a GUID line set it since that type's last node */
	uint64_t next_guid[4], abs_guid[4];
	bool guid_set[4];
	size_t base;			/* f->n_nodes before loading */
	unsigned flags;			/* TOPO_* of topo_parse_flags() */
};

static int fail(struct loader *l, uint32_t line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct loader *l, uint32_t line, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (l->errlen) {
		n = snprintf(l->err, l->errlen, "%s:%u: ", l->path, line);
		if (n < 0 || (size_t)n >= l->errlen)
			return -EINVAL;
		va_start(ap, fmt);
		vsnprintf(l->err + n, l->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Unsigned decimal (base 10) or hex (base 16, optional 0x) number. */
static const char *parse_num(const char *s, int base, uint64_t *out)
{
	uint64_t v = 0;
	const char *start;

	if (base == 16 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	start = s;
	for (;; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			break;
		if (s - start >= (base == 16 ? 16 : 10))
			return NULL;		/* too long to be sane */
		v = v * (uint64_t)base + d;
	}
	if (s == start)
		return NULL;
	*out = v;
	return s;
}

/* A quoted name: terminates it in place and returns the char after. */
static char *parse_quoted(struct loader *l, char *s, const char **name,
			  int *rc)
{
	char *end;

	if (*s != '"') {
		*rc = fail(l, l->line, "expected a quoted name");
		return NULL;
	}
	end = strchr(s + 1, '"');
	if (!end) {
		*rc = fail(l, l->line, "expected a closing quote after %.40s", s);
		return NULL;
	}
	if (end == s + 1) {
		*rc = fail(l, l->line, "expected a non-empty name");
		return NULL;
	}
	*end = '\0';
	*name = s + 1;
	return end + 1;
}

/* "[N]" with 1 <= N <= max. */
static char *parse_port(struct loader *l, char *s, unsigned max, uint8_t *port,
			int *rc)
{
	uint64_t v;
	const char *e;

	if (*s != '[') {
		*rc = fail(l, l->line, "expected [port]");
		return NULL;
	}
	e = parse_num(s + 1, 10, &v);
	if (!e || *e != ']') {
		*rc = fail(l, l->line, "expected [port] with a decimal port number");
		return NULL;
	}
	if (v < 1 || v > max) {
		*rc = fail(l, l->line, "expected a port number 1-%u, got %" PRIu64,
			   max, v);
		return NULL;
	}
	*port = (uint8_t)v;
	return (char *)e + 1;
}

/* Optional "(hexguid)". */
static char *parse_opt_guid(struct loader *l, char *s, uint64_t *guid,
			    bool *has, int *rc)
{
	const char *e;

	*has = false;
	if (*s != '(')
		return s;
	e = parse_num(s + 1, 16, guid);
	if (!e || *e != ')') {
		*rc = fail(l, l->line, "expected (hex port GUID)");
		return NULL;
	}
	*has = true;
	return (char *)e + 1;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;		/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static int names_grow(struct loader *l)
{
	size_t size = l->names_size ? l->names_size * 2 : 1024;
	int32_t *h = malloc(size * sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < size; i++)
		h[i] = -1;
	for (size_t r = 0; r < l->n_recs; r++) {
		size_t i = name_hash(l->recs[r].name) & (size - 1);

		while (h[i] >= 0)
			i = (i + 1) & (size - 1);
		h[i] = (int32_t)r;
	}
	free(l->names);
	l->names = h;
	l->names_size = size;
	return 0;
}

/* Slot of `name` in the hash: holds its record index or -1. */
static size_t names_slot(const struct loader *l, const char *name)
{
	size_t mask = l->names_size - 1;
	size_t i = name_hash(name) & mask;

	while (l->names[i] >= 0 && strcmp(l->recs[l->names[i]].name, name))
		i = (i + 1) & mask;
	return i;
}

/*
 * "switchguid=0x..(..)", "caguid=0x..", "caguid+0x10", "vendid=0x..", ...
 * ibsim's global link defaults (width=, speed=, extspeed=) and its parser
 * debug switch are accepted and ignored.
 */
static int parse_keyval(struct loader *l, char *s, size_t klen)
{
	enum { VENDID, DEVID, SYSIMG, GUID, IGNORED };
	static const struct { const char *key; int what; uint8_t type; } keys[] = {
		{ "vendid", VENDID, 0 }, { "devid", DEVID, 0 },
		{ "sysimgguid", SYSIMG, 0 },
		{ "switchguid", GUID, NODE_TYPE_SWITCH },
		{ "caguid", GUID, NODE_TYPE_CA }, { "hcaguids", GUID, NODE_TYPE_CA },
		{ "rtguid", GUID, NODE_TYPE_ROUTER },
		{ "width", IGNORED, 0 }, { "speed", IGNORED, 0 },
		{ "extspeed", IGNORED, 0 }, { "pdebug", IGNORED, 0 },
	};
	bool relative = s[klen] == '+';
	uint64_t v, v2;
	const char *e;
	int what = -1;
	uint8_t type = 0;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i].key) == klen && !strncmp(keys[i].key, s, klen)) {
			what = keys[i].what;
			type = keys[i].type;
		}
	if (what < 0)
		return fail(l, l->line, "expected vendid=, devid=, sysimgguid=, "
			    "switchguid=, caguid= or rtguid=, got %.*s%c",
			    (int)(klen > 32 ? 32 : klen), s, s[klen]);
	if (relative && what != GUID)
		return fail(l, l->line, "expected %.*s=, not %.*s+", (int)klen,
			    s, (int)klen, s);
	if (what == IGNORED)
		return 0;
	e = parse_num(s + klen + 1, 16, &v);
	if (!e)
		return fail(l, l->line, "expected a hex number after %.*s%c",
			    (int)klen, s, s[klen]);
	switch (what) {
	case VENDID:
		l->pending.vendor_id = (uint32_t)v;
		break;
	case DEVID:
		l->device_id = (uint16_t)v;
		break;
	case SYSIMG:
		l->pending.sys_guid = v;
		l->pending.has_sys_guid = true;
		break;
	case GUID:
		if (relative)
			v += l->abs_guid[type];
		else
			l->abs_guid[type] = v;
		l->next_guid[type] = v;
		l->guid_set[type] = true;
		if (*e == '(') {
			e = parse_num(e + 1, 16, &v2);
			if (!e || *e != ')')
				return fail(l, l->line, "expected (hex port GUID)"
					    " after the GUID");
			if (type == NODE_TYPE_SWITCH) {
				l->pending.port0_guid = v2;
				l->pending.has_port0_guid = true;
			}
			e++;
		}
		break;
	}
	e = skip_ws(e);
	if (*e && *e != '#')
		return fail(l, l->line, "expected end of line after %.*s%c...",
			    (int)klen, s, s[klen]);
	return 0;
}

/* GUID encoded in an ibnetdiscover name: "S-0002c903000a1b2c". */
static bool guid_from_name(const char *name, uint64_t *guid)
{
	const char *e;

	if ((name[0] != 'S' && name[0] != 'H' && name[0] != 'R') || name[1] != '-')
		return false;
	e = parse_num(name + 2, 16, guid);
	return e && !*e;
}

/* `Switch 36 "name" # "desc" ...`, `Ca 2 "name"`, `Hca`, `Rt`. */
static int parse_header(struct loader *l, char *s, uint8_t type, size_t kwlen)
{
	struct rec *r;
	uint64_t nports;
	const char *e, *rest;
	char *p;
	int rc = 0;

	if (l->n_recs == l->cap_recs) {
		size_t cap = l->cap_recs ? l->cap_recs * 2 : 256;
		struct rec *nr = realloc(l->recs, cap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		l->recs = nr;
		l->cap_recs = cap;
	}
	if ((l->n_recs + 1) * 2 > l->names_size && names_grow(l) < 0)
		return -ENOMEM;

	r = &l->recs[l->n_recs];
	*r = l->pending;
	memset(&l->pending, 0, sizeof(l->pending));
	r->type = type;
	r->line = l->line;
	r->id = FAB_NONE;

	p = (char *)skip_ws(s + kwlen);
	if (p == s + kwlen)
		return fail(l, l->line, "expected whitespace after %.*s",
			    (int)kwlen, s);
	e = parse_num(p, 10, &nports);
	if (!e)
		return fail(l, l->line, "expected a port count after %.*s",
			    (int)kwlen, s);
	if (nports < 1 || nports > MAX_PORTS)
		return fail(l, l->line, "expected a port count 1-%u, got %" PRIu64,
			    MAX_PORTS, nports);
	r->num_ports = (uint8_t)nports;
	p = (char *)skip_ws(e);
	p = parse_quoted(l, p, &r->name, &rc);
	if (!p)
		return rc;

	/* The rest is free text; ibnetdiscover puts "# "desc" ..." there,
	 * ibsim also takes an unquoted description up to " lid " etc. */
	rest = p;
	p = strchr(p, '#');
	if (p) {
		char *q = (char *)skip_ws(p + 1), *end = NULL;

		/* Up to the line's last quote: a description may hold
		 * quotes (ibnetdiscover and topo_dump keep them). */
		if (*q == '"' && (end = strrchr(q + 1, '"'))) {
			r->desc = q + 1;
			r->desc_len = (size_t)(end - q - 1);
		} else if (*q && *q != '"') {
			static const char *const stops[] = {
				" enhanced port ", " base port ", " lid ", " lmc ",
			};

			end = q + strlen(q);
			for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++) {
				char *x = strstr(q, stops[i]);

				if (x && x < end)
					end = x;
			}
			while (end > q && (end[-1] == ' ' || end[-1] == '\t'))
				end--;
			r->desc = q;
			r->desc_len = (size_t)(end - q);
		}
		if (end)
			rest = end;
	}
	r->enhanced0 = strstr(rest, "enhanced port 0") != NULL;

	/* GUID: a GUID line's, the name's, or the type's counter (see top) */
	if (!l->guid_set[type] && guid_from_name(r->name, &r->guid)) {
		/* counter untouched */
	} else {
		r->guid = l->next_guid[type];
		l->next_guid[type] += type == NODE_TYPE_SWITCH ? 1 : nports + 1;
	}
	l->guid_set[type] = false;
	r->device_id = l->device_id;

	size_t slot = names_slot(l, r->name);
	if (l->names[slot] >= 0)
		return fail(l, l->line, "expected a new node name, \"%s\" is "
			    "already defined at line %u", r->name,
			    l->recs[l->names[slot]].line);
	l->names[slot] = (int32_t)l->n_recs++;
	return 0;
}

/*
 * ibnetdiscover ends a port line's comment with the link, "4xEDR", and
 * ibsim takes the link's width and speed from there: so do we.  Quoted
 * descriptions are skipped; anything else is ignored.
 */
static void parse_link_comment(struct ent *e, const char *s)
{
	static const struct { const char *name; uint8_t speed, ext; } speeds[] = {
		{ "SDR", 1, 0 }, { "DDR", 2, 0 }, { "QDR", 4, 0 },
		{ "FDR", 1, 1 }, { "EDR", 1, 2 }, { "HDR", 1, 4 }, { "NDR", 1, 8 },
	};

	while (*s) {
		const char *tok;
		uint64_t w;
		size_t len;

		s = skip_ws(s);
		if (*s == '"') {
			/* One quoted description per comment, which may
			 * itself hold quotes: skip to the last one. */
			const char *end = strrchr(s + 1, '"');

			if (!end)
				return;
			s = end + 1;
			continue;
		}
		tok = s;
		while (*s && *s != ' ' && *s != '\t' && *s != '"')
			s++;
		len = (size_t)(s - tok);
		const char *x = parse_num(tok, 10, &w);
		if (!x || *x != 'x' || (size_t)(x + 1 - tok) + 3 != len)
			continue;
		for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++) {
			if (strncmp(x + 1, speeds[i].name, 3))
				continue;
			switch (w) {
			case 1:  e->width = 1; break;
			case 4:  e->width = 2; break;
			case 8:  e->width = 4; break;
			case 12: e->width = 8; break;
			case 2:  e->width = 16; break;
			default: break;
			}
			e->speed = speeds[i].speed;
			e->ext_speed = speeds[i].ext;
		}
	}
}

/* `[1](guid) "peer"[2](guid)  w=3  # comment` */
static int parse_port_line(struct loader *l, char *s)
{
	struct rec *r;
	struct ent *e;
	char *p;
	int rc = 0;

	if (!l->n_recs)
		return fail(l, l->line, "expected a node header (Switch, Ca, "
			    "Hca or Rt) before the first port line");
	r = &l->recs[l->n_recs - 1];
	if (l->n_ents == l->cap_ents) {
		size_t cap = l->cap_ents ? l->cap_ents * 2 : 1024;
		struct ent *ne = realloc(l->ents, cap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		l->ents = ne;
		l->cap_ents = cap;
	}
	e = &l->ents[l->n_ents];
	memset(e, 0, sizeof(*e));
	e->rec = (uint32_t)(l->n_recs - 1);
	e->line = l->line;

	p = parse_port(l, s, r->num_ports, &e->port, &rc);
	if (!p)
		return rc;
	p = parse_opt_guid(l, p, &e->guid, &e->has_guid, &rc);
	if (!p)
		return rc;
	p = (char *)skip_ws(p);
	p = parse_quoted(l, p, &e->peer, &rc);
	if (!p)
		return rc;
	/* The peer's port count is unknown yet: range-checked when linking.
	 * ibsim takes a missing [port] as port 1. */
	if (*p == '[') {
		p = parse_port(l, p, 255, &e->peer_port, &rc);
		if (!p)
			return rc;
	} else {
		e->peer_port = 1;
	}
	p = parse_opt_guid(l, p, &e->peer_guid, &e->has_peer_guid, &rc);
	if (!p)
		return rc;

	/* Options up to the comment: ibsim's w=MASK, the port's
	 * LinkWidthEnabled (1 1x, 2 4x, 4 8x, 8 12x, 16 2x, or a sum of
	 * them); others ignored. */
	for (p = (char *)skip_ws(p); *p && *p != '#'; p = (char *)skip_ws(p)) {
		if (p[0] == 'w' && p[1] == '=') {
			uint64_t w;
			const char *end = parse_num(p + 2, 10, &w);

			if (!end)
				return fail(l, l->line, "expected a number after w=");
			if (w < 1 || w > 31)
				return fail(l, l->line, "expected w=1-31 (a sum of "
					    "1 1x, 2 4x, 4 8x, 8 12x, 16 2x), "
					    "got w=%" PRIu64, w);
			e->wmask = (uint8_t)w;
			p = (char *)end;
		}
		while (*p && *p != ' ' && *p != '\t')
			p++;
	}
	if (*p == '#')
		parse_link_comment(e, p + 1);
	l->n_ents++;
	return 0;
}

static bool keyword(const char *s, const char *kw, size_t *len)
{
	size_t n = strlen(kw);

	if (strncasecmp(s, kw, n) || (s[n] && s[n] != ' ' && s[n] != '\t'))
		return false;
	*len = n;
	return true;
}

static int parse_line(struct loader *l, char *s)
{
	size_t kwlen;

	s = (char *)skip_ws(s);
	if (!*s || *s == '#')
		return 0;
	if (*s == '[')
		return parse_port_line(l, s);
	if (keyword(s, "Switch", &kwlen))
		return parse_header(l, s, NODE_TYPE_SWITCH, kwlen);
	if (keyword(s, "Ca", &kwlen) || keyword(s, "Hca", &kwlen))
		return parse_header(l, s, NODE_TYPE_CA, kwlen);
	if (keyword(s, "Rt", &kwlen))
		return parse_header(l, s, NODE_TYPE_ROUTER, kwlen);
	if (keyword(s, "do", &kwlen))
		return 0;	/* ibsim console command: nothing to model */
	if (keyword(s, "include", &kwlen))
		return fail(l, l->line, "expected a node record: include is "
			    "not supported");
	if (*s == '@')
		return fail(l, l->line, "expected [port]: ibsim @aliases are not "
			    "supported");
	if (keyword(s, "module", &kwlen) || !strncmp(s, "module=", 7))
		return fail(l, l->line, "expected a node record: ibsim module= "
			    "prefixes are not supported");
	if (isalpha((unsigned char)*s)) {
		const char *q = s;

		while (isalnum((unsigned char)*q))
			q++;
		if (*q == '=' || *q == '+')
			return parse_keyval(l, s, (size_t)(q - s));
	}
	return fail(l, l->line, "expected Switch, Ca, Hca, Rt, key=value or "
		    "[port], got \"%.20s\"", s);
}


/* Add every record to the fabric, in file order. */
static int add_nodes(struct loader *l, struct fabric *f)
{
	for (size_t i = 0; i < l->n_recs; i++) {
		struct rec *r = &l->recs[i];
		struct fab_node *n;
		int32_t id;
		size_t dl;

		id = fabric_add_node(f, r->guid, r->type, r->num_ports);
		if (id == -EEXIST) {
			size_t other = (size_t)fabric_find(f, r->guid);

			if (other < l->base)	/* f was not empty */
				return fail(l, r->line, "expected a unique node "
					    "GUID, 0x%016" PRIx64 " is in the "
					    "fabric already", r->guid);
			return fail(l, r->line, "expected a unique node GUID, "
				    "0x%016" PRIx64 " is also \"%s\" at line %u",
				    r->guid, l->recs[other - l->base].name,
				    l->recs[other - l->base].line);
		}
		if (id < 0)
			return id;
		n = fabric_node(f, id);
		r->id = id;
		dl = r->desc ? r->desc_len : strlen(r->name);
		if (dl > sizeof(n->desc) - 1)
			dl = sizeof(n->desc) - 1;
		memcpy(n->desc, r->desc ? r->desc : r->name, dl);
		n->desc[dl] = '\0';
		n->has_desc = true;
		n->sys_guid = r->has_sys_guid ? r->sys_guid : r->guid;
		n->vendor_id = r->vendor_id;
		n->device_id = r->device_id;
		if (r->type == NODE_TYPE_SWITCH) {
			/* What ibsim's switches report (no file says). */
			n->has_switch_info = true;
			n->si.lft_cap = htobe16(0xc000);
			n->si.mft_cap = htobe16(1024);
			if (r->enhanced0)
				n->si.enf_caps |= 1u << 3;
		}
	}
	return 0;
}

static const char *peer_name(const struct loader *l, const struct fab_port *pt)
{
	return l->recs[(size_t)pt->peer_node - l->base].name;
}

/*
 * Link every port line, checking both ends agree.  link_line[] remembers,
 * per port, the line that linked it, for the message when a later line
 * disagrees.
 */
/* The widest width of a LinkWidthEnabled mask, as its code; 0: none. */
static uint8_t widest(uint8_t mask)
{
	static const uint8_t order[] = { 8, 4, 2, 16, 1 };	/* 12x ... 1x */

	for (size_t i = 0; i < sizeof(order); i++)
		if (mask & order[i])
			return order[i];
	return 0;
}

/*
 * A link one of whose ends has ibsim's w= runs, as ibsim makes it, at
 * the widest width both ends enable (an end without w= enables 4x
 * alone); a width the comment gives (ibnetdiscover's "4xQDR") wins.
 * Ends that enable no width in common: ibsim refuses the file, so do we.
 */
static int link_widths(struct loader *l, struct fabric *f)
{
	for (size_t i = 0; i < l->n_ents; i++) {
		const struct ent *e = &l->ents[i];
		struct fab_node *n = fabric_node(f, l->recs[e->rec].id);
		struct fab_port *a = &n->ports[e->port], *b;
		uint8_t ma, mb, w;

		if (a->peer_node == FAB_NONE || a->pi.link_width_active)
			continue;
		b = &fabric_node(f, a->peer_node)->ports[a->peer_port];
		if (!a->pi.link_width_enabled && !b->pi.link_width_enabled)
			continue;
		ma = a->pi.link_width_enabled ? a->pi.link_width_enabled : 2;
		mb = b->pi.link_width_enabled ? b->pi.link_width_enabled : 2;
		w = widest(ma & mb);
		if (!w)
			return fail(l, e->line, "expected both ends of the link "
				    "to enable a width in common, got w=%u and "
				    "w=%u at the other end", ma, mb);
		a->pi.link_width_active = w;
		b->pi.link_width_active = w;
	}
	return 0;
}

static int add_links(struct loader *l, struct fabric *f)
{
	size_t *base = malloc((l->n_recs + 1) * sizeof(*base));
	uint32_t *link_line = NULL;
	int rc = 0;

	if (!base)
		return -ENOMEM;
	base[0] = 0;
	for (size_t r = 0; r < l->n_recs; r++)
		base[r + 1] = base[r] + l->recs[r].num_ports + 1u;
	link_line = calloc(base[l->n_recs] + 1, sizeof(*link_line));
	if (!link_line) {
		free(base);
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->n_ents && !rc; i++) {
		struct ent *e = &l->ents[i];
		struct rec *ra = &l->recs[e->rec], *rb;
		struct fab_port *a, *b;
		int32_t rb_idx;

		rb_idx = l->names[names_slot(l, e->peer)];
		if (rb_idx < 0) {
			rc = fail(l, e->line, "expected a known node, \"%s\" has "
				  "no Switch/Ca record", e->peer);
			break;
		}
		rb = &l->recs[rb_idx];
		if (e->peer_port > rb->num_ports) {
			rc = fail(l, e->line, "expected a port 1-%u of \"%s\", "
				  "got [%u]", rb->num_ports, rb->name,
				  e->peer_port);
			break;
		}
		if (ra == rb && e->port == e->peer_port) {
			rc = fail(l, e->line, "expected a link to another "
				  "port, [%u] links to itself", e->port);
			break;
		}
		a = &fabric_node(f, ra->id)->ports[e->port];
		b = &fabric_node(f, rb->id)->ports[e->peer_port];
		if (a->peer_node != FAB_NONE &&
		    (a->peer_node != rb->id || a->peer_port != e->peer_port)) {
			rc = fail(l, e->line, "expected \"%s\"[%u] -> \"%s\"[%u] "
				  "to agree with line %u, which links \"%s\"[%u] "
				  "to \"%s\"[%u]", ra->name, e->port, rb->name,
				  e->peer_port, link_line[base[e->rec] + e->port],
				  ra->name, e->port, peer_name(l, a), a->peer_port);
			break;
		}
		if (b->peer_node != FAB_NONE &&
		    (b->peer_node != ra->id || b->peer_port != e->port)) {
			rc = fail(l, e->line, "expected \"%s\"[%u] -> \"%s\"[%u] "
				  "to agree with line %u, which links \"%s\"[%u] "
				  "to \"%s\"[%u]", ra->name, e->port, rb->name,
				  e->peer_port,
				  link_line[base[rb_idx] + e->peer_port],
				  rb->name, e->peer_port, peer_name(l, b),
				  b->peer_port);
			break;
		}
		if (a->peer_node == FAB_NONE) {
			if (fabric_link(f, ra->id, e->port, rb->id, e->peer_port) < 0) {
				rc = fail(l, e->line, "expected a valid link");
				break;
			}
			link_line[base[e->rec] + e->port] = e->line;
			link_line[base[rb_idx] + e->peer_port] = e->line;
		}
		/* Port GUIDs: a port's own line wins over its peer's line. */
		if (e->has_guid)
			a->guid = e->guid;
		if (e->has_peer_guid && !b->guid)
			b->guid = e->peer_guid;
		/* Link attributes, kept in PortInfo until init_port; w= is
		 * this end's alone (link_widths() settles the link). */
		if (e->wmask)
			a->pi.link_width_enabled = e->wmask;
		if (e->width) {
			a->pi.link_width_active = e->width;
			b->pi.link_width_active = e->width;
		}
		if (e->speed) {
			a->pi.speed_active_enabled = e->speed;
			b->pi.speed_active_enabled = e->speed;
			a->pi.speed_ext_active_supp = e->ext_speed;
			b->pi.speed_ext_active_supp = e->ext_speed;
		}
	}
	free(base);
	free(link_line);
	return rc ? rc : link_widths(l, f);
}

/*
 * PortInfo of a linked port as an ibsim port reports it: LinkUp, ACTIVE,
 * 4x SDR unless the file said otherwise (add_links left the link's width
 * and speeds in the PortInfo).
 */
static void init_port(struct fab_node *n, unsigned pn, uint64_t port0_guid,
		      unsigned flags)
{
	struct fab_port *p = &n->ports[pn];
	bool dflt = !(flags & TOPO_LINK_AS_GIVEN);
	uint8_t width = p->pi.link_width_active ? p->pi.link_width_active :
			dflt ? 2 : 0;
	uint8_t speed = p->pi.speed_active_enabled ? p->pi.speed_active_enabled :
			dflt ? 1 : 0;
	uint8_t ext = p->pi.speed_ext_active_supp;
	uint8_t enabled = p->pi.link_width_enabled;	/* w=, 0: none */

	p->valid = true;
	if (n->type == NODE_TYPE_SWITCH)
		p->guid = port0_guid;
	else if (!p->guid)
		p->guid = n->guid + pn;
	memset(&p->pi, 0, sizeof(p->pi));
	p->pi.local_port = (uint8_t)pn;
	/* w= as given, else 1x, 4x and the active width */
	p->pi.link_width_enabled = enabled ? enabled : (uint8_t)(3 | width);
	p->pi.link_width_supported = (uint8_t)(3 | width);
	p->pi.link_width_active = width;
	SET_HI4(p->pi.speed_supported_state, speed);
	pi_set_port_state(&p->pi, PORT_STATE_ACTIVE);
	pi_set_phys_state(&p->pi, PHYS_STATE_LINKUP);
	SET_LO4(p->pi.phys_state_down_def, 2);		/* default: polling */
	SET_HI4(p->pi.speed_active_enabled, speed);
	SET_LO4(p->pi.speed_active_enabled, speed);
	if (ext) {
		p->pi.cap_mask = htobe32(PI_CAP_HAS_EXT_SPEEDS);
		SET_HI4(p->pi.speed_ext_active_supp, ext);
		SET_LO4(p->pi.speed_ext_active_supp, ext);
		p->pi.speed_ext_enabled = ext;
	}
	pi_set_neighbor_mtu(&p->pi, 4);			/* 2048 */
	SET_HI4(p->pi.vl_cap_init_type, 4);		/* VL0-7 */
	SET_LO4(p->pi.init_type_reply_mtu_cap, 4);	/* 2048 */
	pi_set_op_vls(&p->pi, 4);
}

static void init_ports(struct loader *l, struct fabric *f)
{
	f->local_node = FAB_NONE;
	for (size_t i = 0; i < l->n_recs; i++) {
		struct rec *r = &l->recs[i];
		struct fab_node *n = fabric_node(f, r->id);
		uint64_t p0 = r->has_port0_guid ? r->port0_guid : n->guid;

		if (n->type == NODE_TYPE_SWITCH)
			init_port(n, 0, p0, l->flags);
		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			if (n->ports[pn].peer_node == FAB_NONE)
				continue;
			init_port(n, pn, p0, l->flags);
			/* a switch's CapabilityMask is port 0's (14.2.5.6) */
			if (n->type == NODE_TYPE_SWITCH && n->ports[pn].pi.cap_mask)
				n->ports[0].pi.cap_mask |= n->ports[pn].pi.cap_mask;
			if (f->local_node == FAB_NONE && n->type == NODE_TYPE_CA) {
				f->local_node = r->id;
				f->local_port = (uint8_t)pn;
				f->local_port_guid = n->ports[pn].guid;
			}
		}
	}
}

int topo_parse(struct fabric *f, const char *name, char *buf, size_t len,
	       char *err, size_t errlen)
{
	return topo_parse_flags(f, name, buf, len, 0, err, errlen);
}

int topo_parse_flags(struct fabric *f, const char *name, char *buf,
		     size_t len, unsigned flags, char *err, size_t errlen)
{
	struct loader l = {
		.path = name, .err = err, .errlen = errlen, .base = f->n_nodes,
		.flags = flags,
		.next_guid = { 0, GUID_BASE_CA, GUID_BASE_SWITCH, GUID_BASE_ROUTER },
		.abs_guid = { 0, GUID_BASE_CA, GUID_BASE_SWITCH, GUID_BASE_ROUTER },
	};
	char *s, *nl;
	int rc = 0;

	if (errlen)
		err[0] = '\0';
	for (s = buf; s < buf + len && rc == 0; s = nl + 1) {
		l.line++;
		nl = memchr(s, '\n', (size_t)(buf + len - s));
		if (!nl)
			nl = buf + len;
		*nl = '\0';
		if (nl > s && nl[-1] == '\r')
			nl[-1] = '\0';
		rc = parse_line(&l, s);
	}
	if (rc == 0 && !l.n_recs)
		rc = fail(&l, l.line, "expected at least one Switch or Ca record");
	if (rc == 0)
		rc = add_nodes(&l, f);
	if (rc == 0)
		rc = add_links(&l, f);
	if (rc == 0)
		init_ports(&l, f);
	if (rc == -ENOMEM && errlen)
		snprintf(err, errlen, "%s: out of memory", name);
	free(l.recs);
	free(l.ents);
	free(l.names);
	return rc;
}
