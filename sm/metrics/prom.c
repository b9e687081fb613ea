/*
 * prom.c - the Prometheus text format builder (prom.h).
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/metrics/prom.h"

void prom_init(struct prom *p, size_t initial)
{
	memset(p, 0, sizeof(*p));
	p->cap = initial ? initial : 4096;
	p->buf = malloc(p->cap);
	if (!p->buf) {
		p->cap = 0;
		p->oom = true;
	}
}

void prom_free(struct prom *p)
{
	free(p->buf);
	memset(p, 0, sizeof(*p));
}

char *prom_take(struct prom *p, size_t *len)
{
	char *b = p->buf;

	if (p->oom || !b) {
		prom_free(p);
		*len = 0;
		return NULL;
	}
	b[p->len] = '\0';
	*len = p->len;
	p->buf = NULL;
	prom_free(p);
	return b;
}

/* Room for n more bytes and the final NUL. */
static bool reserve(struct prom *p, size_t n)
{
	size_t cap;
	char *nb;

	if (p->oom)
		return false;
	if (p->len + n + 1 <= p->cap)
		return true;
	cap = p->cap ? p->cap : 4096;
	while (cap < p->len + n + 1)
		cap *= 2;
	nb = realloc(p->buf, cap);
	if (!nb) {
		p->oom = true;
		return false;
	}
	p->buf = nb;
	p->cap = cap;
	return true;
}

static inline void put(struct prom *p, const char *s, size_t n)
{
	if (!reserve(p, n))
		return;
	memcpy(p->buf + p->len, s, n);
	p->len += n;
}

static inline void puts_(struct prom *p, const char *s)
{
	put(p, s, strlen(s));
}

/* Decimal digits of v at the end of tmp[24]; returns the first. */
static inline char *u64_digits(char tmp[24], uint64_t v)
{
	char *e = tmp + 24;

	do {
		*--e = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return e;
}

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h ? h : 1;
}

/* HELP text: backslash and newline escaped (the format's rule). */
static void put_help(struct prom *p, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			put(p, "\\\\", 2);
		else if (*s == '\n')
			put(p, "\\n", 2);
		else
			put(p, s, 1);
	}
}

int prom_family(struct prom *p, const char *name, const char *type,
		const char *help)
{
	size_t nl = strlen(name);
	uint32_t h;

	if (nl == p->cur_len && !memcmp(p->cur, name, nl))
		return 0;
	h = fnv1a(name);
	for (unsigned i = 0; i < p->n_fam; i++)
		if (p->fam_hash[i] == h)
			return -EEXIST;
	if (p->n_fam >= PROM_MAX_FAMILIES || nl >= sizeof(p->cur))
		return -ENOSPC;
	p->fam_hash[p->n_fam++] = h;
	memcpy(p->cur, name, nl + 1);
	p->cur_len = nl;
	puts_(p, "# HELP ");
	put(p, name, nl);
	put(p, " ", 1);
	put_help(p, help);
	puts_(p, "\n# TYPE ");
	put(p, name, nl);
	put(p, " ", 1);
	puts_(p, type);
	put(p, "\n", 1);
	return 0;
}

size_t prom_escape_label(char *out, size_t outlen, const char *s)
{
	size_t o = 0;

	if (!outlen)
		return 0;
	for (; *s; s++) {
		const char *e = NULL;

		if (*s == '\\')
			e = "\\\\";
		else if (*s == '"')
			e = "\\\"";
		else if (*s == '\n')
			e = "\\n";
		if (e) {
			if (o + 2 >= outlen)
				break;
			out[o++] = e[0];
			out[o++] = e[1];
		} else {
			if (o + 1 >= outlen)
				break;
			out[o++] = *s;
		}
	}
	out[o] = '\0';
	return o;
}

void prom_lbl_reset(struct prom_labels *l)
{
	l->len = 0;
	l->s[0] = '\0';
	l->trunc = false;
}

/* name="<esc>": all of it, or nothing (trunc set). */
static void lbl_add(struct prom_labels *l, const char *name, const char *esc,
		    size_t elen)
{
	size_t nl = strlen(name), need = (l->len ? 1 : 0) + nl + 2 + elen + 1;

	if (l->len + need >= sizeof(l->s)) {
		l->trunc = true;
		return;
	}
	if (l->len)
		l->s[l->len++] = ',';
	memcpy(l->s + l->len, name, nl);
	l->len += nl;
	l->s[l->len++] = '=';
	l->s[l->len++] = '"';
	memcpy(l->s + l->len, esc, elen);
	l->len += elen;
	l->s[l->len++] = '"';
	l->s[l->len] = '\0';
}

void prom_lbl(struct prom_labels *l, const char *name, const char *value)
{
	char esc[PROM_LABELS_MAX];
	size_t n = prom_escape_label(esc, sizeof(esc), value ? value : "");

	lbl_add(l, name, esc, n);
}

void prom_lbl_u(struct prom_labels *l, const char *name, uint64_t value)
{
	char tmp[24], *d = u64_digits(tmp, value);

	lbl_add(l, name, d, (size_t)(tmp + 24 - d));
}

void prom_lbl_guid(struct prom_labels *l, const char *name, uint64_t guid)
{
	static const char hex[] = "0123456789abcdef";
	char g[18];

	g[0] = '0';
	g[1] = 'x';
	for (int i = 0; i < 16; i++)
		g[2 + i] = hex[(guid >> (60 - 4 * i)) & 0xf];
	lbl_add(l, name, g, sizeof(g));
}

void prom_lbl_cat(struct prom_labels *l, const struct prom_labels *o)
{
	if (!o->len)
		return;
	if (l->len + 1 + o->len >= sizeof(l->s)) {
		l->trunc = true;
		return;
	}
	if (l->len)
		l->s[l->len++] = ',';
	memcpy(l->s + l->len, o->s, o->len);
	l->len += o->len;
	l->s[l->len] = '\0';
	l->trunc |= o->trunc;
}

static void put_series(struct prom *p, const char *name,
		       const struct prom_labels *l)
{
	puts_(p, name);
	if (l && l->len) {
		put(p, "{", 1);
		put(p, l->s, l->len);
		put(p, "}", 1);
	}
	put(p, " ", 1);
}

void prom_u64(struct prom *p, const char *name, const struct prom_labels *l,
	      uint64_t v)
{
	char tmp[24], *d = u64_digits(tmp, v);

	put_series(p, name, l);
	put(p, d, (size_t)(tmp + 24 - d));
	put(p, "\n", 1);
}

static void put_dbl(struct prom *p, double v)
{
	char b[40];
	int n;

	if (isnan(v)) {
		puts_(p, "NaN");
		return;
	}
	if (isinf(v)) {
		puts_(p, v > 0 ? "+Inf" : "-Inf");
		return;
	}
	if (v == (double)(int64_t)v && fabs(v) < 1e15) {
		n = snprintf(b, sizeof(b), "%lld", (long long)v);
	} else if (fabs(v) >= 1e6 && fabs(v) < 1e15) {
		n = snprintf(b, sizeof(b), "%.3f", v);	/* Unix times */
	} else {
		n = snprintf(b, sizeof(b), "%.9g", v);
	}
	put(p, b, (size_t)n);
}

void prom_dbl(struct prom *p, const char *name, const struct prom_labels *l,
	      double v)
{
	put_series(p, name, l);
	put_dbl(p, v);
	put(p, "\n", 1);
}

void prom_histogram(struct prom *p, const char *name,
		    const struct prom_labels *l, const double *bounds,
		    const uint64_t *cumulative, size_t n, double sum,
		    uint64_t count)
{
	char nm[160];
	struct prom_labels b;
	char le[40];

	snprintf(nm, sizeof(nm), "%s_bucket", name);
	for (size_t i = 0; i <= n; i++) {
		prom_lbl_reset(&b);
		if (l)
			prom_lbl_cat(&b, l);
		if (i < n)
			snprintf(le, sizeof(le), "%g", bounds[i]);
		else
			snprintf(le, sizeof(le), "+Inf");
		prom_lbl(&b, "le", le);
		prom_u64(p, nm, &b, i < n ? cumulative[i] : count);
	}
	snprintf(nm, sizeof(nm), "%s_sum", name);
	prom_dbl(p, nm, l, sum);
	snprintf(nm, sizeof(nm), "%s_count", name);
	prom_u64(p, nm, l, count);
}
