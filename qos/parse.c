/*
 * parse.c - the QoS policy file parser: a line lexer and a descent over
 * sections, blocks and "key: value" entries (see qos.h).  The nesting is
 * fixed (at most three levels), so the descent is a few loops, not
 * recursion on the input.  The first error stops the parse and names
 * FILE:LINE:COLUMN (the caller adds FILE), what was expected and what
 * was found.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qos/qos.h"
#include "qos/qos_int.h"

/* ---- the lexer: one line at a time, a cursor inside it ---- */

static bool next_line(struct qp *p)
{
	size_t e;

	if (p->next >= p->len)
		return false;
	p->ls = p->next;
	for (e = p->ls; e < p->len && p->text[e] != '\n'; e++)
		;
	p->next = e < p->len ? e + 1 : e;
	p->le = e;
	if (p->le > p->ls && p->text[p->le - 1] == '\r')
		p->le--;
	/* a '#' outside quotes ends the line */
	bool q = false;
	for (size_t i = p->ls; i < p->le; i++) {
		if (p->text[i] == '"')
			q = !q;
		else if (p->text[i] == '#' && !q) {
			p->le = i;
			break;
		}
	}
	p->lineno++;
	p->c = p->ls;
	return true;
}

void qp_ws(struct qp *p)
{
	while (p->c < p->le && (p->text[p->c] == ' ' || p->text[p->c] == '\t' ||
				p->text[p->c] == '\r'))
		p->c++;
}

bool qp_eol(struct qp *p)
{
	qp_ws(p);
	return p->c >= p->le;
}

/* What the cursor is on, for messages. */
static void found(const struct qp *p, char *buf, size_t size)
{
	size_t i = p->c, n = 0;

	if (p->at_eof) {
		snprintf(buf, size, "end of file");
		return;
	}
	if (i >= p->le) {
		snprintf(buf, size, "end of line");
		return;
	}
	buf[n++] = '\'';
	if (strchr(":,-*\"", p->text[i]))
		buf[n++] = p->text[i];
	else
		while (i < p->le && n + 3 < size && n < 40 &&
		       !isspace((unsigned char)p->text[i]) &&
		       !strchr(":,", p->text[i]))
			buf[n++] = isprint((unsigned char)p->text[i]) ?
				   p->text[i++] : (i++, '?');
	buf[n++] = '\'';
	buf[n] = 0;
}

int qp_fail(struct qp *p, const char *fmt, ...)
{
	char what[160], tok[48];
	va_list ap;

	if (p->err->msg[0])
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	found(p, tok, sizeof(tok));
	p->err->line = p->lineno ? p->lineno : 1;
	p->err->col = (unsigned)(p->c - p->ls) + 1;
	if (p->at_eof) {
		/* just past the last byte: the start of the line after a
		 * final newline, else the end of the last line */
		bool nl = p->len && p->text[p->len - 1] == '\n';

		p->err->line = p->lineno + (nl || !p->lineno);
		p->err->col = nl || !p->lineno ? 1 :
			      (unsigned)(p->len - p->ls) + 1;
	}
	snprintf(p->err->msg, sizeof(p->err->msg), "expected %s, found %s",
		 what, tok);
	return -EINVAL;
}

/* A keyword: letters, digits, '-' and '_' from the cursor. */
size_t qp_word(struct qp *p, char *buf, size_t size)
{
	size_t n = 0;

	qp_ws(p);
	while (p->c + n < p->le && n + 1 < size &&
	       (isalnum((unsigned char)p->text[p->c + n]) ||
		p->text[p->c + n] == '-' || p->text[p->c + n] == '_'))
		n++;
	memcpy(buf, p->text + p->c, n);
	buf[n] = 0;
	return n;
}

int qp_expect_eol(struct qp *p)
{
	if (!qp_eol(p))
		return qp_fail(p, "end of line");
	return 0;
}

/* ---- sections ---- */

/* A block; its entry() returns 1 for a key it does not know. */
struct block {
	const char *start, *end;
	int (*entry)(struct qp *p, const char *key);	/* inside */
	int (*open)(struct qp *p);			/* at start */
	int (*close)(struct qp *p);			/* at end */
	const char *expected;
};

/*
 * Lines up to `end`: blank lines, "start" (which opens an inner block
 * when `inner` is given, else an entry when `b->entry`).  The nesting is
 * at most three deep, fixed by the tables below.
 */
static int run_block(struct qp *p, const struct block *b,
		     const struct block *inner);

static int run_inner(struct qp *p, const struct block *in)
{
	int rc;

	if (in->open && (rc = in->open(p)))
		return rc;
	rc = run_block(p, in, NULL);
	if (!rc && in->close)
		rc = in->close(p);
	return rc;
}

static int run_block(struct qp *p, const struct block *b,
		     const struct block *inner)
{
	char key[40];
	int rc;

	for (;;) {
		if (!next_line(p)) {
			p->at_eof = true;
			return qp_fail(p, "%s", b->end);
		}
		if (qp_eol(p))
			continue;
		size_t kc = p->c;
		qp_word(p, key, sizeof(key));
		if (!strcmp(key, b->end)) {
			p->c += strlen(key);
			return qp_expect_eol(p);
		}
		if (inner && !strcmp(key, inner->start)) {
			p->c += strlen(key);
			if ((rc = qp_expect_eol(p)))
				return rc;
			p->c = kc;
			p->blk_line = p->lineno;
			p->blk_col = (unsigned)(kc - p->ls) + 1;
			if ((rc = run_inner(p, inner)))
				return rc;
			continue;
		}
		if (!inner && b->entry) {
			rc = b->entry(p, key);
			if (rc == 1)	/* not one of its keys */
				return qp_fail(p, "%s", b->expected);
			if (rc)
				return rc;
			continue;
		}
		return qp_fail(p, "%s", b->expected);
	}
}

static const struct block port_group = {
	"port-group", "end-port-group", qp_group_entry, qp_group_open,
	qp_group_close, "name, use, port-guid, port-name, partition, pkey, "
	"node-type or end-port-group",
};
static const struct block port_groups = {
	"port-groups", "end-port-groups", NULL, NULL, NULL,
	"port-group or end-port-groups",
};
static const struct block qos_level = {
	"qos-level", "end-qos-level", qp_level_entry, qp_level_open,
	qp_level_close, "name, use, sl, mtu-limit, rate-limit, packet-life, "
	"path-bits, pkey or end-qos-level",
};
static const struct block qos_levels = {
	"qos-levels", "end-qos-levels", NULL, NULL, NULL,
	"qos-level or end-qos-levels",
};
static const struct block match_rule = {
	"qos-match-rule", "end-qos-match-rule", qp_rule_entry, qp_rule_open,
	qp_rule_close, "use, qos-class, source, destination, service-id, "
	"pkey, qos-level-name or end-qos-match-rule",
};
static const struct block match_rules = {
	"qos-match-rules", "end-qos-match-rules", NULL, NULL, NULL,
	"qos-match-rule or end-qos-match-rules",
};
static const struct block vlarb_scope = {
	"vlarb-scope", "end-vlarb-scope", qp_vlarb_entry, qp_vlarb_open, NULL,
	"group, across, vlarb-high, vlarb-low, vl-high-limit or "
	"end-vlarb-scope",
};
static const struct block vlarb_tables = {
	"vlarb-tables", "end-vlarb-tables", NULL, NULL, NULL,
	"vlarb-scope or end-vlarb-tables",
};
static const struct block sl2vl_scope = {
	"sl2vl-scope", "end-sl2vl-scope", qp_sl2vl_entry, qp_sl2vl_open, NULL,
	"group, across, across-from, across-to, from, to, sl2vl-table or "
	"end-sl2vl-scope",
};
static const struct block sl2vl_tables = {
	"sl2vl-tables", "end-sl2vl-tables", NULL, NULL, NULL,
	"sl2vl-scope or end-sl2vl-tables",
};
static const struct block ulps = {
	"qos-ulps", "end-qos-ulps", qp_ulp_entry, NULL, NULL,
	"default, sdp, rds, iser, srp, ipoib, any or end-qos-ulps",
};

/* qos-setup holds two kinds of inner sections, so it has its own loop. */
static int run_setup(struct qp *p)
{
	char key[40];
	int rc;

	for (;;) {
		if (!next_line(p)) {
			p->at_eof = true;
			return qp_fail(p, "end-qos-setup");
		}
		if (qp_eol(p))
			continue;
		qp_word(p, key, sizeof(key));
		const struct block *outer = !strcmp(key, "vlarb-tables") ?
			&vlarb_tables : !strcmp(key, "sl2vl-tables") ?
			&sl2vl_tables : NULL;
		p->c += strlen(key);
		if (!strcmp(key, "end-qos-setup"))
			return qp_expect_eol(p);
		if (!outer) {
			p->c -= strlen(key);
			return qp_fail(p, "vlarb-tables, sl2vl-tables or "
				       "end-qos-setup");
		}
		if ((rc = qp_expect_eol(p)))
			return rc;
		rc = run_block(p, outer, outer == &vlarb_tables ?
			       &vlarb_scope : &sl2vl_scope);
		if (rc)
			return rc;
	}
}

static int run_top(struct qp *p)
{
	static const struct { const struct block *b, *inner; } tops[] = {
		{ &port_groups, &port_group },
		{ &qos_levels, &qos_level },
		{ &match_rules, &match_rule },
		{ &ulps, NULL },
	};
	char key[40];
	int rc;

	while (next_line(p)) {
		if (qp_eol(p))
			continue;
		qp_word(p, key, sizeof(key));
		size_t i;
		for (i = 0; i < sizeof(tops) / sizeof(tops[0]); i++)
			if (!strcmp(key, tops[i].b->start))
				break;
		bool setup = !strcmp(key, "qos-setup");
		if (i == sizeof(tops) / sizeof(tops[0]) && !setup)
			return qp_fail(p, "port-groups, qos-setup, qos-levels, "
				       "qos-match-rules or qos-ulps");
		p->c += strlen(key);
		if ((rc = qp_expect_eol(p)))
			return rc;
		rc = setup ? run_setup(p) : run_block(p, tops[i].b,
						      tops[i].inner);
		if (rc)
			return rc;
	}
	p->at_eof = true;
	return 0;
}

int qos_parse(const char *text, size_t len, struct qos_policy *out,
	      struct qos_error *err)
{
	struct qp p = { .text = text, .len = len, .pol = out, .err = err };
	int rc;

	memset(out, 0, sizeof(*out));
	memset(err, 0, sizeof(*err));
	out->ulp_default_sl = -1;
	if (len > QOS_MAX_FILE) {
		err->line = 1;
		err->col = 1;
		snprintf(err->msg, sizeof(err->msg),
			 "expected a file of at most %u bytes, found %zu",
			 QOS_MAX_FILE, len);
		return -E2BIG;
	}
	const char *z = memchr(text, 0, len);
	if (z) {
		/* text only: name where the first NUL byte is */
		err->line = 1;
		for (const char *t = text; t < z; t++)
			if (*t == '\n') {
				err->line++;
				err->col = 0;
			} else {
				err->col++;
			}
		err->col++;
		snprintf(err->msg, sizeof(err->msg),
			 "expected text, found a NUL byte");
		return -EINVAL;
	}
	rc = run_top(&p);
	if (!rc)
		rc = qp_resolve(&p);
	if (rc) {
		qos_policy_free(out);
		if (rc == -EINVAL && !err->msg[0])
			rc = qp_fail(&p, "a valid policy");
	}
	return rc;
}

int qos_load(const char *path, struct qos_policy *out, struct qos_error *err)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(err, 0, sizeof(*err));
	if (!f)
		return -errno;
	buf = malloc(QOS_MAX_FILE + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, QOS_MAX_FILE + 1, f);
	rc = ferror(f) ? -EIO : 0;
	fclose(f);
	if (!rc)
		rc = qos_parse(buf, n, out, err);
	free(buf);
	return rc;
}
