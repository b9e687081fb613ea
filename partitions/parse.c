/*
 * parse.c - OpenSM 3.3.23's partitions.conf, read the way OpenSM reads it
 * (osm_prtn_config.c, doc/partition-config.txt), with every error placed
 * at LINE:COLUMN instead of one "bad PortGUID" that throws the file away.
 *
 * What OpenSM does, and so what this parser does:
 *  - '#' ends a line's content; ';' ends a definition; a definition's
 *    header (name, P_Key, flags) and its ':' sit on one line, its members
 *    may continue over later lines.  ',' separates members and flags;
 *    empty members ("a,,b", a trailing ',') are nothing.
 *  - Flag names, member keywords and membership words match by prefix
 *    in OpenSM's order ("m" is mtu, "s" is scope, "A" is ALL, "ALL_" is
 *    ALL_CAS, "f" is full); indx0 and mgid must be spelt out.
 *  - A header whose name starts with a digit and has no '=' is the P_Key.
 *    Only the low 15 bits name the partition; 0 means none given.  A
 *    definition without a P_Key joins an earlier partition of the same
 *    name, else gets the lowest unused key counting up from 1 (at the time
 *    it is read).  Definitions with the same P_Key merge; the first name
 *    stays.
 *  - OpenSM always creates "Default" 0x7fff with ALL=limited, SELF=full
 *    before reading the file (doc: "the default partition will be created
 *    unconditionally"); the file's definitions of 0x7fff add to it.
 *  - mgid=GID[,flag]... takes the rest of its line (up to ';').
 *  - A last definition without ';' is still applied.
 *
 * Errors (OpenSM rejects the file): no ':' in a header, a P_Key that is no
 * number, a member that is no keyword and no non-zero number.  Errors
 * too, though OpenSM accepts them, for typos that change what the file
 * means: a membership word that is none of full, limited, both (OpenSM
 * reads it as limited; defmember= likewise) and a P_Key past 16 bits
 * (OpenSM keeps its low 15: another partition).  Warnings
 * (OpenSM accepts but guesses): unknown flags, flag
 * values OpenSM skips or truncates, `both` without allow_both_pkeys (read
 * as full), an mgid that is not multicast (OpenSM skips the group), a
 * missing final ';'.  After an error the parser skips to the next ';' (or,
 * inside a member list, to the next member) and goes on, so every error
 * in the file is reported.
 */
#include "config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/fileutil.h"
#include "partitions/partitions.h"

/* OpenSM's osm_prtn_t.name holds 31 characters. */
#define PART_NAME_MAX	31

/* A piece of the current line: [b, e) in the text. */
struct span {
	const char *b, *e;
};

struct parser {
	const char *text;		/* whole input */
	const char *line;		/* start of the current line */
	unsigned lineno;
	const struct part_options *opt;
	struct part_config *c;
	struct part_diag *d;
	bool content;			/* anything but blanks and comments */
	int32_t *by_pkey;		/* 0x8000 entries: part index or -1 */
	uint16_t gen_counter;		/* OpenSM's global_pkey_counter */
	int err;			/* -ENOMEM */
	/* the definition being read */
	bool in_def;
	bool skipping;			/* after an error, up to the next ';' */
	int32_t cur;			/* part index */
	enum part_membership defmember;
	bool indx0;
	struct part_mgroup flags;	/* the definition's group flags */
	unsigned def_line, def_col;
};

static int grow(void **arr, size_t n, size_t size)
{
	if ((n & (n - 1)) == 0) {	/* n is 0 or a power of two: double */
		size_t cap = n ? n * 2 : 4;
		void *na = realloc(*arr, cap * size);

		if (!na)
			return -ENOMEM;
		*arr = na;
	}
	return 0;
}

static unsigned col_of(const struct parser *p, const char *at)
{
	return (unsigned)(at - p->line) + 1;
}

static void add_diag(struct parser *p, bool error, unsigned col,
		     const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add_diag(struct parser *p, bool error, unsigned col,
		     const char *fmt, ...)
{
	struct part_error **arr = error ? &p->d->errors : &p->d->warnings;
	size_t *n = error ? &p->d->n_errors : &p->d->n_warnings;
	struct part_error *e;
	va_list ap;

	if (grow((void **)arr, *n, sizeof(**arr))) {
		p->err = -ENOMEM;
		return;
	}
	e = &(*arr)[(*n)++];
	e->line = p->lineno;
	e->col = col;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

static bool is_ws(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' ||
	       ch == '\f';
}

static struct span trim(struct span s)
{
	while (s.b < s.e && is_ws(*s.b))
		s.b++;
	while (s.e > s.b && is_ws(s.e[-1]))
		s.e--;
	return s;
}

static size_t span_len(struct span s)
{
	return (size_t)(s.e - s.b);
}

/* OpenSM's strncmp(word, keyword, strlen(word)) == 0: word is a prefix. */
static bool prefix_of(struct span w, const char *kw)
{
	size_t n = span_len(w);

	return n <= strlen(kw) && memcmp(w.b, kw, n) == 0;
}

static bool span_is(struct span w, const char *kw)
{
	return span_len(w) == strlen(kw) && memcmp(w.b, kw, span_len(w)) == 0;
}

/* Split "name[=value]" (trimmed); has_val tells whether '=' was there. */
static void split_eq(struct span s, struct span *name, struct span *val,
		     bool *has_val)
{
	const char *q = memchr(s.b, '=', span_len(s));

	*has_val = q != NULL;
	if (q) {
		*name = trim((struct span){ s.b, q });
		*val = trim((struct span){ q + 1, s.e });
	} else {
		*name = trim(s);
		*val = (struct span){ s.e, s.e };
	}
}

/* strtoull(base 0) over a span; *full: the whole span was the number. */
static unsigned long long span_num(struct span s, bool *ok, bool *full)
{
	char buf[64];
	size_t n = span_len(s);
	char *end;
	unsigned long long v;

	*ok = *full = false;
	if (n == 0)
		return 0;
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, s.b, n);
	buf[n] = '\0';
	errno = 0;
	v = strtoull(buf, &end, 0);
	*ok = end != buf;
	*full = *ok && *end == '\0' && span_len(s) < sizeof(buf);
	return v;
}


static int32_t new_part(struct parser *p, const char *name, size_t nlen,
			uint16_t pkey, bool given)
{
	struct part_config *c = p->c;
	struct part *pt;

	if (grow((void **)&c->parts, c->n_parts, sizeof(*c->parts))) {
		p->err = -ENOMEM;
		return -1;
	}
	pt = &c->parts[c->n_parts];
	memset(pt, 0, sizeof(*pt));
	if (nlen >= sizeof(pt->name))
		nlen = sizeof(pt->name) - 1;
	memcpy(pt->name, name, nlen);
	pt->pkey = pkey;
	pt->pkey_given = given;
	pt->defmember = PART_LIMITED;
	pt->line = p->lineno;
	p->by_pkey[pkey] = (int32_t)c->n_parts;
	return (int32_t)c->n_parts++;
}

static void add_member(struct parser *p, enum part_member_kind kind,
		       uint64_t guid, enum part_membership m, unsigned col)
{
	struct part *pt = &p->c->parts[p->cur];
	struct part_member *mb;

	if (grow((void **)&pt->members, pt->n_members, sizeof(*mb))) {
		p->err = -ENOMEM;
		return;
	}
	mb = &pt->members[pt->n_members++];
	mb->kind = kind;
	mb->guid = guid;
	mb->membership = m;
	mb->indx0 = p->indx0;
	mb->line = p->lineno;
	mb->col = col;
}

/*
 * A group flag (partition header or mgid line): mtu, rate, scope, Q_Key,
 * TClass, sl, FlowLabel, by prefix in that order as OpenSM tries them.
 * Returns false when the word is none of them.
 */
static bool group_flag(struct parser *p, struct span flag, struct span val,
		       bool has_val, struct part_mgroup *g)
{
	static const struct {
		const char *name;
		unsigned long long max;
	} gf[] = {
		{ "mtu", 0xff }, { "rate", 0xff }, { "scope", 0xf },
		{ "Q_Key", 0xffffffffull }, { "TClass", 0xff }, { "sl", 15 },
		{ "FlowLabel", 0xfffff },
	};
	unsigned col = col_of(p, flag.b);
	size_t i;
	bool ok, full;
	unsigned long long v;

	for (i = 0; i < sizeof(gf) / sizeof(gf[0]); i++)
		if (prefix_of(flag, gf[i].name))
			break;
	if (i == sizeof(gf) / sizeof(gf[0]))
		return false;
	v = span_num(val, &ok, &full);
	if (!has_val || !ok) {
		add_diag(p, false, col, "expected %s=N; OpenSM skips this flag",
			 gf[i].name);
		return true;
	}
	if (v > gf[i].max) {
		add_diag(p, false, col_of(p, val.b), "expected %s at most %llu; "
			 "skipped", gf[i].name, gf[i].max);
		return true;
	}
	if (!full) {
		add_diag(p, false, col_of(p, val.b), "expected a number for %s; "
			 "OpenSM reads only its first digits%s", gf[i].name,
			 i == 5 || i == 6 ? " and skips the flag" : "");
		if (i == 5 || i == 6)
			return true;
	}
	if (v == 0 && i <= 2) {
		add_diag(p, false, col_of(p, val.b), "expected %s=N with N > 0; "
			 "OpenSM skips this flag", gf[i].name);
		return true;
	}
	switch (i) {
	case 0: g->mtu = (uint8_t)v; break;
	case 1: g->rate = (uint8_t)v; break;
	case 2: g->scope = (uint8_t)v; break;
	case 3: g->qkey = (uint32_t)v; break;
	case 4: g->tclass = (uint8_t)v; break;
	case 5: g->sl = (uint8_t)v; break;
	default: g->flow_label = (uint32_t)v; break;
	}
	return true;
}

/* full | limited | both by prefix; NULL span (no '='): the default. */
static enum part_membership membership(struct parser *p, struct span w,
				       bool has_val, enum part_membership def)
{
	enum part_membership m;

	if (!has_val)
		return def;
	if (span_len(w) == 0) {
		add_diag(p, false, col_of(p, w.b), "expected full, limited or "
			 "both after '='; OpenSM reads nothing as full");
		m = PART_FULL;
	} else if (prefix_of(w, "full")) {
		m = PART_FULL;
	} else if (prefix_of(w, "both")) {
		m = PART_BOTH;
	} else if (prefix_of(w, "limited")) {
		m = PART_LIMITED;
	} else {
		/* OpenSM reads any other word as limited: a typo of "full"
		 * would silently demote the member. */
		add_diag(p, true, col_of(p, w.b), "expected full, limited or "
			 "both, not '%.*s' (OpenSM would read it as limited)",
			 (int)span_len(w), w.b);
		m = PART_LIMITED;
	}
	if (m == PART_BOTH && !p->opt->allow_both_pkeys) {
		add_diag(p, false, col_of(p, w.b), "expected full or "
			 "limited: 'both' needs allow_both_pkeys; read as "
			 "full, as OpenSM does");
		m = PART_FULL;
	}
	return m;
}

/* The header "[Name][=PKey][,flag[=val]]..." in [b, e) before the ':'. */
static bool header(struct parser *p, struct span h)
{
	const char *q = memchr(h.b, ',', span_len(h));
	struct span first = { h.b, q ? q : h.e }, name, id;
	bool has_id, ok, full, no_name = false;
	uint16_t pkey = 0;
	unsigned long long v;

	split_eq(first, &name, &id, &has_id);
	if (!has_id && span_len(name) && isdigit((unsigned char)*name.b)) {
		id = name;
		has_id = true;
		no_name = true;		/* OpenSM: name NULL, no lookup */
		name = (struct span){ name.b, name.b };
	}
	if (has_id) {
		v = span_num(id, &ok, &full);
		if (!full) {
			if (no_name)
				add_diag(p, true, col_of(p, id.b), "expected a "
					 "P_Key (a number such as 0x7fff): a "
					 "name that starts with a digit is one");
			else
				add_diag(p, true, col_of(p, id.b), "expected a "
					 "P_Key (a number such as 0x7fff) "
					 "after '='");
			return false;
		}
		if (v > 0xffff) {
			/* OpenSM keeps the low 15 bits: another partition. */
			add_diag(p, true, col_of(p, id.b), "expected a P_Key of "
				 "16 bits at most (0x0001-0xffff), not %.*s",
				 (int)span_len(id), id.b);
			return false;
		}
		pkey = (uint16_t)v & 0x7fff;
		if (!pkey)
			add_diag(p, false, col_of(p, id.b), "expected a non-zero "
				 "P_Key; one is generated, as OpenSM does");
	}

	p->defmember = PART_LIMITED;
	p->indx0 = false;
	memset(&p->flags, 0, sizeof(p->flags));
	bool ipoib = false;
	while (q) {
		const char *s = q + 1;
		struct span flag, val;
		bool has_val;

		q = memchr(s, ',', (size_t)(h.e - s));
		split_eq((struct span){ s, q ? q : h.e }, &flag, &val, &has_val);
		if (group_flag(p, flag, val, has_val, &p->flags))
			continue;
		if (prefix_of(flag, "ipoib")) {
			ipoib = true;
		} else if (prefix_of(flag, "defmember")) {
			if (has_val && (!span_len(val) ||
			    prefix_of(val, "full") || prefix_of(val, "both") ||
			     prefix_of(val, "limited")))
				p->defmember = membership(p, val, true,
							  PART_LIMITED);
			else if (has_val)
				add_diag(p, true, col_of(p, val.b), "expected "
					 "defmember=full, limited or both, not "
					 "'%.*s' (OpenSM would skip the flag: "
					 "members limited)", (int)span_len(val),
					 val.b);
			else
				add_diag(p, false, col_of(p, flag.b), "expected "
					 "defmember=full, limited or both; "
					 "OpenSM skips this flag");
		} else if (span_is(flag, "indx0")) {
			p->indx0 = true;
		} else {
			add_diag(p, false, col_of(p, flag.b), "expected a partition "
				 "flag (ipoib, indx0, defmember, mtu, rate, sl, "
				 "scope, Q_Key, TClass, FlowLabel), not '%.*s'; "
				 "OpenSM ignores it",
				 (int)span_len(flag), flag.b);
		}
	}

	/* OpenSM's osm_prtn_make_new(): by P_Key, else by name, else new. */
	int32_t idx = -1;
	if (pkey) {
		idx = p->by_pkey[pkey];
	} else {
		/* OpenSM compares the stored name (31 characters at most,
		 * never empty) with the whole name given: an empty or longer
		 * name never finds a partition. */
		if (!no_name && span_len(name) && span_len(name) <= PART_NAME_MAX) {
			for (size_t i = 0; i < p->c->n_parts; i++)
				if (strlen(p->c->parts[i].name) == span_len(name) &&
				    !memcmp(p->c->parts[i].name, name.b,
					    span_len(name))) {
					idx = (int32_t)i;
					break;
				}
		}
		if (idx < 0) {
			while (p->gen_counter < PART_PKEY_DEFAULT - 1) {
				uint16_t k = ++p->gen_counter;

				if (p->by_pkey[k] < 0) {
					pkey = k;
					break;
				}
			}
			if (!pkey) {
				add_diag(p, true, col_of(p, first.b), "expected a "
					 "P_Key: every generated P_Key is taken");
				return false;
			}
		}
	}
	if (idx < 0) {
		char hex[8];

		if (!span_len(name)) {	/* OpenSM names it after its key */
			snprintf(hex, sizeof(hex), "%04x", pkey);
			name = (struct span){ hex, hex + 4 };
		} else if (span_len(name) > PART_NAME_MAX) {
			add_diag(p, false, col_of(p, name.b), "expected a name of "
				 "at most %d characters; OpenSM keeps the first "
				 "%d", PART_NAME_MAX, PART_NAME_MAX);
			name.e = name.b + PART_NAME_MAX;
		}
		idx = new_part(p, name.b, span_len(name), pkey, has_id);
		if (idx < 0)
			return false;
	}
	struct part *pt = &p->c->parts[idx];
	pt->ipoib |= ipoib;
	pt->indx0 |= p->indx0;
	if (p->defmember != PART_LIMITED)
		pt->defmember = p->defmember;
	if (p->flags.mtu) pt->mtu = p->flags.mtu;
	if (p->flags.rate) pt->rate = p->flags.rate;
	if (p->flags.sl) pt->sl = p->flags.sl;
	if (p->flags.scope) pt->scope = p->flags.scope;
	if (p->flags.qkey) pt->qkey = p->flags.qkey;
	if (p->flags.tclass) pt->tclass = p->flags.tclass;
	if (p->flags.flow_label) pt->flow_label = p->flags.flow_label;
	p->cur = idx;
	return true;
}

/* mgid=GID[,flag]...: GID in `gid`, flags in [s, e). */
static void mgid_line(struct parser *p, struct span gid, const char *s,
		      const char *e)
{
	struct part *pt = &p->c->parts[p->cur];
	struct part_mgroup g = p->flags;
	char buf[INET6_ADDRSTRLEN + 8];
	size_t n = span_len(gid);

	g.tclass = 0;		/* OpenSM's groups inherit all flags but TClass */
	g.line = p->lineno;
	if (n >= sizeof(buf) - 1)
		n = sizeof(buf) - 1;
	memcpy(buf, gid.b, n);
	buf[n] = '\0';
	while (s && s < e) {
		const char *q = memchr(s, ',', (size_t)(e - s));
		struct span flag, val;
		bool has_val;

		split_eq((struct span){ s, q ? q : e }, &flag, &val, &has_val);
		if (!group_flag(p, flag, val, has_val, &g))
			add_diag(p, false, col_of(p, flag.b), "expected a group "
				 "flag (mtu, rate, sl, scope, Q_Key, TClass, "
				 "FlowLabel), not '%.*s'; OpenSM ignores it",
				 (int)span_len(flag), flag.b);
		s = q ? q + 1 : e;
	}
	if (inet_pton(AF_INET6, buf, g.mgid) != 1 || g.mgid[0] != 0xff) {
		add_diag(p, false, col_of(p, gid.b), "expected a multicast GID "
			 "(ff..::..) after mgid=; OpenSM skips this group");
		return;
	}
	if (grow((void **)&pt->mgroups, pt->n_mgroups, sizeof(g))) {
		p->err = -ENOMEM;
		return;
	}
	pt->mgroups[pt->n_mgroups++] = g;
}

/* Members in [s, e) (one line's piece of a definition). */
static void members(struct parser *p, const char *s, const char *e)
{
	while (s < e) {
		const char *q = memchr(s, ',', (size_t)(e - s));
		struct span name, val;
		bool has_val, ok, full;

		split_eq((struct span){ s, q ? q : e }, &name, &val, &has_val);
		s = q ? q + 1 : e;
		if (!span_len(name))
			continue;
		if (span_is(name, "mgid")) {
			mgid_line(p, val, q ? q + 1 : NULL, e);
			return;		/* it takes the rest of the line */
		}
		unsigned col = col_of(p, name.b);
		if (prefix_of(name, "NONE"))
			continue;
		enum part_member_kind kind;
		uint64_t g = 0;

		if (prefix_of(name, "ALL"))
			kind = PART_M_ALL;
		else if (prefix_of(name, "ALL_CAS"))
			kind = PART_M_ALL_CAS;
		else if (prefix_of(name, "ALL_SWITCHES"))
			kind = PART_M_ALL_SWITCHES;
		else if (prefix_of(name, "ALL_ROUTERS"))
			kind = PART_M_ALL_ROUTERS;
		else if (prefix_of(name, "SELF"))
			kind = PART_M_SELF;
		else {
			kind = PART_M_GUID;
			g = span_num(name, &ok, &full);
			if (!full || !g) {
				add_diag(p, true, col, "expected a port GUID (a "
					 "non-zero number) or ALL, ALL_CAS, "
					 "ALL_SWITCHES, ALL_ROUTERS, SELF, NONE");
				(void)membership(p, val, has_val, p->defmember);
				continue;
			}
		}
		add_member(p, kind, g, membership(p, val, has_val,
						  p->defmember), col);
	}
}

/* One line, '#' comment already cut: [b, e). */
static void parse_line(struct parser *p, const char *b, const char *e)
{
	const char *s = b;

	while (s < e && !p->err) {
		while (s < e && is_ws(*s))
			s++;
		if (s == e)
			break;
		p->content = true;
		const char *semi = memchr(s, ';', (size_t)(e - s));
		const char *se = semi ? semi : e;

		if (p->skipping) {
			/* nothing until the ';' that ends the bad definition */
		} else if (!p->in_def) {
			const char *colon = memchr(s, ':', (size_t)(se - s));

			p->def_line = p->lineno;
			p->def_col = col_of(p, s);
			if (!colon) {
				add_diag(p, true, col_of(p, se), "expected ':' "
					 "after the partition name and flags");
				p->skipping = true;
			} else if (!header(p, (struct span){ s, colon })) {
				p->skipping = true;
			} else {
				p->in_def = true;
				members(p, colon + 1, se);
			}
		} else {
			members(p, s, se);
		}
		if (semi) {
			p->in_def = false;
			p->skipping = false;
			s = semi + 1;
		} else {
			s = e;
		}
	}
}

static void add_builtin_member(struct part *pt, enum part_member_kind kind,
			       enum part_membership m)
{
	struct part_member *mb = &pt->members[pt->n_members++];

	memset(mb, 0, sizeof(*mb));
	mb->kind = kind;
	mb->membership = m;
}

/* "Default" 0x7fff with ALL=`all`, SELF=full, ipoib as given. */
static int make_default(struct part_config *c, enum part_membership all,
			bool ipoib)
{
	struct part *pt;

	c->parts = calloc(4, sizeof(*c->parts));
	if (!c->parts)
		return -ENOMEM;
	pt = &c->parts[0];
	c->n_parts = 1;
	snprintf(pt->name, sizeof(pt->name), "Default");
	pt->pkey = PART_PKEY_DEFAULT;
	pt->pkey_given = true;
	pt->ipoib = ipoib;
	pt->defmember = PART_LIMITED;
	pt->members = calloc(4, sizeof(*pt->members));
	if (!pt->members)
		return -ENOMEM;
	add_builtin_member(pt, PART_M_ALL, all);
	add_builtin_member(pt, PART_M_SELF, PART_FULL);
	return 0;
}

int part_config_default(struct part_config *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	rc = make_default(out, PART_FULL, true);
	if (rc)
		part_config_free(out);
	return rc;
}

int part_parse(const char *file, const char *text, size_t len,
	       const struct part_options *opt, struct part_config *out,
	       struct part_diag *diag)
{
	static const struct part_options no_opt;
	struct parser p;
	const char *s = text, *end = text + len;
	bool cr_told = false;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(diag, 0, sizeof(*diag));
	snprintf(out->file, sizeof(out->file), "%s", file ? file : "");
	memset(&p, 0, sizeof(p));
	p.text = text;
	p.opt = opt ? opt : &no_opt;
	p.c = out;
	p.d = diag;
	p.by_pkey = malloc(0x8000 * sizeof(*p.by_pkey));
	if (!p.by_pkey)
		return -ENOMEM;
	for (unsigned i = 0; i < 0x8000; i++)
		p.by_pkey[i] = -1;
	rc = make_default(out, PART_LIMITED, false);
	if (rc)
		goto fail;
	p.by_pkey[PART_PKEY_DEFAULT] = 0;

	while (s < end && !p.err) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *le = nl ? nl : end;
		const char *hash = memchr(s, '#', (size_t)(le - s));
		const char *nul = memchr(s, '\0', (size_t)(le - s));

		p.lineno++;
		p.line = s;
		if (!cr_told && le > s && le[-1] == '\r') {
			add_diag(&p, false, col_of(&p, le - 1), "expected a line "
				 "end without '\\r' (DOS line ends): ibsm reads "
				 "it as white space, OpenSM does not");
			cr_told = true;
		}
		if (nul) {
			add_diag(&p, false, col_of(&p, nul), "expected text, "
				 "not a NUL byte; the rest of the line is "
				 "ignored, as OpenSM does");
			if (!hash || nul < hash)
				hash = nul;
		}
		parse_line(&p, s, hash ? hash : le);
		s = nl ? nl + 1 : end;
	}
	if (!p.err && p.in_def) {
		p.lineno = p.def_line;	/* the warning names the definition */
		add_diag(&p, false, p.def_col, "expected ';' at the end of this "
			 "definition (OpenSM applies it anyway)");
	}
	rc = p.err;
	if (!rc && diag->n_errors)
		rc = -EINVAL;
	if (rc)
		goto fail;
	free(p.by_pkey);
	if (!p.content) {
		/* OpenSM finds no definition, takes the file as in error
		 * and falls back to its configuration without a file. */
		p.lineno = 1;
		p.line = text;
		add_diag(&p, false, 1, "expected a partition definition: the "
			 "file has none, so every port is a full member of the "
			 "default partition, as OpenSM does without a file");
		part_config_free(out);
		rc = p.err ? p.err : part_config_default(out);
		snprintf(out->file, sizeof(out->file), "%s", file ? file : "");
	}
	return rc;
fail:
	free(p.by_pkey);
	part_config_free(out);
	return rc;
}

int part_load(const char *path, const struct part_options *opt,
	      struct part_config *out, struct part_diag *diag)
{
	return part_load_stamped(path, opt, out, diag, NULL);
}

int part_load_stamped(const char *path, const struct part_options *opt,
		      struct part_config *out, struct part_diag *diag,
		      struct file_stamp *st)
{
	char *buf;
	size_t got;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(diag, 0, sizeof(*diag));
	if (st)
		memset(st, 0, sizeof(*st));
	/* A partitions.conf, not a disk; read whole while no one writes
	 * it (a copy over it in progress is read again). */
	rc = read_file_stable(path, 64 << 20, PART_READ_TRIES, &buf, &got, st);
	if (rc < 0)
		return rc;
	rc = part_parse(path, buf, got, opt, out, diag);
	free(buf);
	return rc;
}

void part_config_free(struct part_config *c)
{
	for (size_t i = 0; c->parts && i < c->n_parts; i++) {
		free(c->parts[i].members);
		free(c->parts[i].mgroups);
	}
	free(c->parts);
	memset(c, 0, sizeof(*c));
}

void part_diag_free(struct part_diag *d)
{
	free(d->errors);
	free(d->warnings);
	memset(d, 0, sizeof(*d));
}

int part_error_format(const struct part_config *c, const char *file,
		      const struct part_error *e, char *buf, size_t len)
{
	int n;

	if (!file)
		file = c && c->file[0] ? c->file : "partitions.conf";
	n = snprintf(buf, len, "%s:%u:%u: %s", file, e->line, e->col, e->msg);
	if (n < 0)
		return -EINVAL;
	return (size_t)n < len ? 0 : -ENOSPC;
}
