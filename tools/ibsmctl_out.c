/*
 * ibsmctl_out.c - the output table of ibsmctl (see ibsmctl.h).
 *
 * Cells are kept as two strings, what the plain table shows and the JSON
 * value, so that each record formatter says once what a field is.  Text
 * from the wire (node descriptions, service names) is untrusted: control
 * characters never reach the terminal, and JSON strings are valid UTF-8
 * with every byte that is not replaced by U+FFFD.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/ibsmctl.h"

struct col {
	char *key, *hdr;
	bool right;
	size_t width;
};

struct cell {
	char *text, *json;
};

struct out {
	struct col *cols;
	size_t ncols, ccols;
	struct cell *cells;		/* rows x ncols once columns are known */
	size_t ncells, ccells;
	size_t rows, cur;		/* cur: cell index within the row */
	bool nomem;
};

struct out *out_new(void)
{
	return calloc(1, sizeof(struct out));
}

void out_free(struct out *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->ncells; i++) {
		free(o->cells[i].text);
		free(o->cells[i].json);
	}
	for (size_t i = 0; i < o->ncols; i++) {
		free(o->cols[i].key);
		free(o->cols[i].hdr);
	}
	free(o->cells);
	free(o->cols);
	free(o);
}

void out_row(struct out *o)
{
	o->rows++;
	o->cur = 0;
}

size_t out_rows(const struct out *o)
{
	return o->rows;
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	size_t n = *cap ? *cap * 2 : 16;
	while (n < need)
		n *= 2;
	void *np = realloc(p, n * size);
	if (np)
		*cap = n;
	return np;
}

/* Takes ownership of text and json (either may be NULL on ENOMEM). */
static void add(struct out *o, const char *key, const char *hdr, bool right,
		char *text, char *json)
{
	if (!text || !json || o->nomem)
		goto nomem;
	if (o->rows == 1) {
		struct col *c = grow(o->cols, &o->ccols, o->ncols + 1, sizeof(*c));
		if (!c)
			goto nomem;
		o->cols = c;
		c = &o->cols[o->ncols];
		c->key = strdup(key);
		c->hdr = strdup(hdr);
		c->right = right;
		c->width = strlen(hdr);
		if (!c->key || !c->hdr) {
			free(c->key);
			free(c->hdr);
			goto nomem;
		}
		o->ncols++;
	}
	if (o->cur >= o->ncols)		/* a row with more cells than the first */
		goto drop;
	struct cell *cl = grow(o->cells, &o->ccells, o->ncells + 1, sizeof(*cl));
	if (!cl)
		goto nomem;
	o->cells = cl;
	o->cells[o->ncells++] = (struct cell){ text, json };
	size_t w = strlen(text);
	if (w > o->cols[o->cur].width)
		o->cols[o->cur].width = w;
	o->cur++;
	return;
nomem:
	o->nomem = true;
drop:
	free(text);
	free(json);
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

void out_num(struct out *o, const char *key, const char *hdr, uint64_t v)
{
	add(o, key, hdr, true, fmt("%" PRIu64, v), fmt("%" PRIu64, v));
}

void out_hex(struct out *o, const char *key, const char *hdr, uint64_t v,
	     int digits)
{
	add(o, key, hdr, false, fmt("0x%0*" PRIx64, digits, v),
	    fmt("\"0x%0*" PRIx64 "\"", digits, v));
}

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;		/* overlong, surrogate, out of range */
	return len;
}

/*
 * Both renderings of untrusted text: for the table, control characters
 * and invalid bytes become '?' (valid UTF-8 is kept); for JSON, a quoted
 * string with escapes and U+FFFD for invalid bytes.
 */
static void render_text(const char *s, size_t max, char **text, char **json)
{
	size_t n = strnlen(s, max);
	char *t = malloc(n + 1), *j = malloc(n * 6 + 3);
	size_t ti = 0, ji = 0;
	const unsigned char *u = (const unsigned char *)s;

	if (!t || !j) {
		free(t);
		free(j);
		*text = *json = NULL;
		return;
	}
	j[ji++] = '"';
	for (size_t i = 0; i < n;) {
		size_t l = utf8_len(u + i, n - i);

		if (l == 0) {
			t[ti++] = '?';
			memcpy(j + ji, "\\ufffd", 6);
			ji += 6;
			i++;
			continue;
		}
		if (l > 1) {
			memcpy(t + ti, u + i, l);
			memcpy(j + ji, u + i, l);
			ti += l;
			ji += l;
			i += l;
			continue;
		}
		unsigned char c = u[i++];
		if (c < 0x20 || c == 0x7f) {
			t[ti++] = '?';
			ji += (size_t)sprintf(j + ji, "\\u%04x", c);
		} else {
			t[ti++] = (char)c;
			if (c == '"' || c == '\\')
				j[ji++] = '\\';
			j[ji++] = (char)c;
		}
	}
	t[ti] = 0;
	j[ji++] = '"';
	j[ji] = 0;
	*text = t;
	*json = j;
}

void out_str(struct out *o, const char *key, const char *hdr,
	     const char *s, size_t max)
{
	char *text, *json;

	render_text(s, max, &text, &json);
	add(o, key, hdr, false, text, json);
}

void out_raw(struct out *o, const char *key, const char *hdr,
	     const char *text, const char *json, bool right)
{
	add(o, key, hdr, right, strdup(text), strdup(json));
}

static void print_json(struct out *o, FILE *f, bool single)
{
	size_t i = 0;

	if (!single)
		fputs("[", f);
	for (size_t r = 0; r < o->rows; r++) {
		fputs(single ? "{" : (r ? ",\n  {" : "\n  {"), f);
		for (size_t c = 0; c < o->ncols && i < o->ncells; c++, i++)
			fprintf(f, "%s\"%s\": %s", c ? ", " : "", o->cols[c].key,
				o->cells[i].json);
		fputs("}", f);
	}
	fputs(single ? "\n" : (o->rows ? "\n]\n" : "]\n"), f);
}

/* Width in terminal columns: UTF-8 continuation bytes take none. */
static size_t text_cols(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static void pad(FILE *f, size_t n)
{
	while (n--)
		fputc(' ', f);
}

static void print_cell(FILE *f, const struct col *c, const char *s, bool last)
{
	size_t w = text_cols(s);
	size_t fill = c->width > w ? c->width - w : 0;

	if (c->right)
		pad(f, fill);
	fputs(s, f);
	if (!c->right && !last)
		pad(f, fill);
	fputs(last ? "\n" : "  ", f);
}

static void print_header(struct out *o, FILE *f)
{
	for (size_t c = 0; c < o->ncols; c++)
		print_cell(f, &o->cols[c], o->cols[c].hdr, c + 1 == o->ncols);
}

static void print_table(struct out *o, FILE *f)
{
	size_t i = 0;

	print_header(o, f);
	for (size_t r = 0; r < o->rows; r++)
		for (size_t c = 0; c < o->ncols && i < o->ncells; c++, i++)
			print_cell(f, &o->cols[c], o->cells[i].text,
				   c + 1 == o->ncols);
}

static int flush_out(FILE *f)
{
	if (fflush(f) != 0 || ferror(f))
		return -EIO;
	return 0;
}

int out_print_header(struct out *o, FILE *f)
{
	if (o->nomem)
		return -ENOMEM;
	/* Header widths only: forget the widths the cells asked for. */
	for (size_t c = 0; c < o->ncols; c++)
		o->cols[c].width = strlen(o->cols[c].hdr);
	print_header(o, f);
	return flush_out(f);
}

int out_print(struct out *o, FILE *f, bool json, bool single)
{
	if (o->nomem)
		return -ENOMEM;
	if (json)
		print_json(o, f, single && o->rows == 1);
	else if (o->rows)
		print_table(o, f);
	return flush_out(f);
}
