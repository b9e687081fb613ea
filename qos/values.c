/*
 * values.c - the values of "key: value" entries: text, lists of names,
 * numbers, ranges, VL:weight lists; every list bounded (QOS_MAX_LIST per
 * key, QOS_MAX_ITEMS in the file).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "qos/values.h"

void *qv_grow(void *v, size_t n, size_t size)
{
	if (n && (n < 4 || (n & (n - 1))))
		return v;		/* room left: capacity 4, 8, 16, ... */
	return realloc(v, (n ? 2 * n : 4) * size);
}

int qv_key(struct qp *p, const char *key)
{
	p->c += strlen(key);
	qp_ws(p);
	if (p->c >= p->le || p->text[p->c] != ':')
		return qp_fail(p, "':' after %s", key);
	p->c++;
	qp_ws(p);
	return 0;
}

static int count(struct qp *p, size_t n)
{
	if (n >= QOS_MAX_LIST)
		return qp_fail(p, "at most %u items in one list", QOS_MAX_LIST);
	if (++p->pol->n_items > QOS_MAX_ITEMS)
		return qp_fail(p, "at most %u list items in the file",
			       QOS_MAX_ITEMS);
	return 0;
}

/* One name: "quoted" or up to ',' (lists) or the end of the line. */
static int one_text(struct qp *p, bool list, bool keep_blanks, char **out)
{
	size_t s, e;
	bool quoted;

	qp_ws(p);
	quoted = p->c < p->le && p->text[p->c] == '"';
	if (quoted) {
		s = ++p->c;
		while (p->c < p->le && p->text[p->c] != '"')
			p->c++;
		if (p->c >= p->le)
			return qp_fail(p, "a closing '\"'");
		e = p->c++;
	} else {
		s = p->c;
		while (p->c < p->le && !(list && p->text[p->c] == ','))
			p->c++;
		e = p->c;
		while (e > s && (p->text[e - 1] == ' ' ||
				 p->text[e - 1] == '\t'))
			e--;
		if (e == s) {
			p->c = s;
			return qp_fail(p, "a name");
		}
	}
	if (e - s > QOS_NAME_MAX) {
		p->c = s;
		return qp_fail(p, "a name of at most %u characters",
			       QOS_NAME_MAX);
	}
	*out = strndup(p->text + s, e - s);
	if (!*out)
		return -ENOMEM;
	/* OpenSM keeps the blanks of a quoted name and of use: text only;
	 * elsewhere "Virtual Servers" is the name "VirtualServers" */
	if (!keep_blanks && !quoted) {
		char *w = *out;

		for (char *r = *out; *r; r++)
			if (*r != ' ' && *r != '\t')
				*w++ = *r;
		*w = 0;
	}
	return 0;
}

int qv_text(struct qp *p, const char *key, char **out)
{
	int rc;

	if (*out)
		return qp_fail(p, "one %s: in this block", key);
	if ((rc = qv_key(p, key)) ||
	    (rc = one_text(p, false, !strcmp(key, "use"), out)))
		return rc;
	return qp_expect_eol(p);
}

int qv_text_value(struct qp *p, char **out)
{
	int rc = one_text(p, false, false, out);

	return rc ? rc : qp_expect_eol(p);
}

int qv_strs(struct qp *p, const char *key, struct qos_strs *s)
{
	int rc;

	if ((rc = qv_key(p, key)))
		return rc;
	for (;;) {
		unsigned line = p->lineno, col;
		char *v = NULL;

		qp_ws(p);
		col = (unsigned)(p->c - p->ls) + 1;
		if ((rc = count(p, s->n)) || (rc = one_text(p, true, false, &v)))
			return rc;
		char **nv = qv_grow(s->v, s->n, sizeof(*nv));
		unsigned *nl = nv ? qv_grow(s->line, s->n, sizeof(*nl)) : NULL;
		unsigned *nc = nl ? qv_grow(s->col, s->n, sizeof(*nc)) : NULL;
		if (nv)
			s->v = nv;
		if (nl)
			s->line = nl;
		if (!nc) {
			free(v);
			return -ENOMEM;
		}
		s->col = nc;
		s->v[s->n] = v;
		s->line[s->n] = line;
		s->col[s->n++] = col;
		qp_ws(p);
		if (p->c < p->le && p->text[p->c] == ',') {
			p->c++;
			continue;
		}
		return qp_expect_eol(p);
	}
}

int qv_num(struct qp *p, uint64_t max, uint64_t *out)
{
	const char *t = p->text;
	size_t c = p->c;
	uint64_t v = 0;
	unsigned base = 10, digits = 0;

	qp_ws(p);
	c = p->c;
	if (c + 1 < p->le && t[c] == '0' && (t[c + 1] == 'x' || t[c + 1] == 'X')) {
		base = 16;
		c += 2;
	}
	for (; c < p->le; c++, digits++) {
		unsigned d;
		char ch = t[c];

		if (ch >= '0' && ch <= '9')
			d = (unsigned)(ch - '0');
		else if (base == 16 && ch >= 'a' && ch <= 'f')
			d = (unsigned)(ch - 'a' + 10);
		else if (base == 16 && ch >= 'A' && ch <= 'F')
			d = (unsigned)(ch - 'A' + 10);
		else
			break;
		if (v > (UINT64_MAX - d) / base)
			return qp_fail(p, "a number of at most 64 bits");
		v = v * base + d;
	}
	if (!digits || (c < p->le && (isalnum_c(t[c]))))
		return qp_fail(p, "a number");
	if (v > max)
		return qp_fail(p, "a number from 0 to %llu",
			       (unsigned long long)max);
	p->c = c;
	*out = v;
	return 0;
}

int qv_single(struct qp *p, const char *key, uint64_t lo, uint64_t hi,
	      int *out)
{
	uint64_t v;
	size_t at;
	int rc;

	if (*out >= 0)
		return qp_fail(p, "one %s: in this block", key);
	if ((rc = qv_key(p, key)))
		return rc;
	at = p->c;
	if ((rc = qv_num(p, UINT64_MAX, &v)))
		return rc;
	if (v < lo || v > hi) {
		p->c = at;
		return qp_fail(p, "a number from %llu to %llu",
			       (unsigned long long)lo, (unsigned long long)hi);
	}
	*out = (int)v;
	return qp_expect_eol(p);
}

/* num[-num][, ...], up to the end of the line or (ulps) a ':'. */
int qv_ranges_to(struct qp *p, uint64_t max, bool to_colon,
		 struct qos_ranges *r)
{
	int rc;

	for (;;) {
		struct qos_range x;

		if ((rc = count(p, r->n)) || (rc = qv_num(p, max, &x.lo)))
			return rc;
		x.hi = x.lo;
		qp_ws(p);
		if (p->c < p->le && p->text[p->c] == '-') {
			p->c++;
			size_t at = p->c;
			if ((rc = qv_num(p, max, &x.hi)))
				return rc;
			if (x.hi < x.lo) {
				p->c = at;
				qp_ws(p);
				return qp_fail(p, "a range end not below its "
					       "start");
			}
		}
		struct qos_range *nv = qv_grow(r->v, r->n, sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		r->v = nv;
		r->v[r->n++] = x;
		qp_ws(p);
		if (p->c < p->le && p->text[p->c] == ',') {
			p->c++;
			continue;
		}
		if (to_colon)
			return 0;
		return qp_expect_eol(p);
	}
}

int qv_ranges(struct qp *p, const char *key, uint64_t max,
	      struct qos_ranges *r)
{
	int rc = qv_key(p, key);

	return rc ? rc : qv_ranges_to(p, max, false, r);
}

int qv_vlw(struct qp *p, const char *key, struct qos_vl_weight **v,
	   size_t *n)
{
	int rc;

	if ((rc = qv_key(p, key)))
		return rc;
	for (;;) {
		uint64_t vl, w;

		if ((rc = count(p, *n)) || (rc = qv_num(p, 15, &vl)))
			return rc;
		qp_ws(p);
		if (p->c >= p->le || p->text[p->c] != ':')
			return qp_fail(p, "':' between VL and weight");
		p->c++;
		if ((rc = qv_num(p, 255, &w)))
			return rc;
		struct qos_vl_weight *nv = qv_grow(*v, *n, sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		*v = nv;
		nv[*n].vl = (uint8_t)vl;
		nv[(*n)++].weight = (uint8_t)w;
		qp_ws(p);
		if (p->c < p->le && p->text[p->c] == ',') {
			p->c++;
			continue;
		}
		return qp_expect_eol(p);
	}
}
