/*
 * diff.c - unified diffs of small texts.
 *
 * Common leading and trailing lines are cut off first; the middle is
 * aligned with a longest-common-subsequence table, which is cheap for
 * configuration files where edits touch a few lines.  A middle too
 * large for the table (over MAX_CELLS) is shown as removed and re-added:
 * still a correct diff, only not a minimal one.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tools/ibhost/diff.h"

#define CONTEXT		3
#define MAX_CELLS	(4u * 1024 * 1024)

enum op_kind { OP_EQ, OP_DEL, OP_ADD };

struct op {
	enum op_kind	kind;
	size_t		a, b;	/* line index in a (EQ, DEL) and b (EQ, ADD) */
};

/* The last line of a text without a final newline differs from one with. */
static bool noeol(const struct lines *l, size_t i)
{
	return i + 1 == l->n && !l->final_newline;
}

static bool line_eq(const struct lines *a, size_t i, const struct lines *b,
		    size_t j)
{
	return !strcmp(a->v[i], b->v[j]) && noeol(a, i) == noeol(b, j);
}

static void push(struct op **ops, size_t *n, size_t *cap, enum op_kind k,
		 size_t a, size_t b)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*ops = xrealloc(*ops, *cap * sizeof(**ops));
	}
	(*ops)[*n].kind = k;
	(*ops)[*n].a = a;
	(*ops)[*n].b = b;
	(*n)++;
}

/* Edit script for a -> b; returns the op count. */
static size_t edit_script(const struct lines *a, const struct lines *b,
			  struct op **ops)
{
	size_t pre = 0, suf = 0, n, m, nops = 0, cap = 0;

	*ops = NULL;
	while (pre < a->n && pre < b->n && line_eq(a, pre, b, pre))
		pre++;
	while (suf < a->n - pre && suf < b->n - pre &&
	       line_eq(a, a->n - 1 - suf, b, b->n - 1 - suf))
		suf++;
	n = a->n - pre - suf;
	m = b->n - pre - suf;

	for (size_t i = 0; i < pre; i++)
		push(ops, &nops, &cap, OP_EQ, i, i);
	if (n && m && (n + 1) * (m + 1) <= MAX_CELLS) {
		/* L[i][j]: LCS length of a[pre+i..] and b[pre+j..] */
		uint32_t *L = xcalloc((n + 1) * (m + 1), sizeof(*L));
		size_t i = 0, j = 0;

#define CELL(i, j)	L[(i) * (m + 1) + (j)]
		for (size_t x = n; x-- > 0;)
			for (size_t y = m; y-- > 0;)
				CELL(x, y) = line_eq(a, pre + x, b, pre + y) ?
					CELL(x + 1, y + 1) + 1 :
					CELL(x + 1, y) > CELL(x, y + 1) ?
					CELL(x + 1, y) : CELL(x, y + 1);
		while (i < n || j < m) {
			if (i < n && j < m &&
			    line_eq(a, pre + i, b, pre + j)) {
				push(ops, &nops, &cap, OP_EQ, pre + i, pre + j);
				i++;
				j++;
			} else if (i < n && (j == m ||
					     CELL(i + 1, j) >= CELL(i, j + 1))) {
				push(ops, &nops, &cap, OP_DEL, pre + i, pre + j);
				i++;
			} else {
				push(ops, &nops, &cap, OP_ADD, pre + i, pre + j);
				j++;
			}
		}
#undef CELL
		free(L);
	} else {
		for (size_t i = 0; i < n; i++)
			push(ops, &nops, &cap, OP_DEL, pre + i, pre);
		for (size_t j = 0; j < m; j++)
			push(ops, &nops, &cap, OP_ADD, pre + n, pre + j);
	}
	for (size_t i = 0; i < suf; i++)
		push(ops, &nops, &cap, OP_EQ, pre + n + i, pre + m + i);
	return nops;
}

static void range(struct sbuf *out, char sign, size_t start, size_t count)
{
	/* GNU diff: an empty range names the line before it. */
	if (count == 1)
		sb_printf(out, "%c%zu", sign, start + 1);
	else
		sb_printf(out, "%c%zu,%zu", sign, count ? start + 1 : start,
			  count);
}

static void hunk(struct sbuf *out, const struct op *ops, size_t from,
		 size_t to, const struct lines *a, const struct lines *b)
{
	size_t na = 0, nb = 0;

	for (size_t k = from; k < to; k++) {
		na += ops[k].kind != OP_ADD;
		nb += ops[k].kind != OP_DEL;
	}
	sb_add(out, "@@ ");
	range(out, '-', ops[from].a, na);
	sb_putc(out, ' ');
	range(out, '+', ops[from].b, nb);
	sb_add(out, " @@\n");
	for (size_t k = from; k < to; k++) {
		const struct op *o = &ops[k];
		const struct lines *l = o->kind == OP_ADD ? b : a;
		size_t i = o->kind == OP_ADD ? o->b : o->a;

		sb_printf(out, "%c%s\n", o->kind == OP_EQ ? ' ' :
			  o->kind == OP_DEL ? '-' : '+', l->v[i]);
		if (noeol(l, i))
			sb_add(out, "\\ No newline at end of file\n");
	}
}

bool diff_unified(struct sbuf *out, const char *label_a, const char *label_b,
		  const char *a, const char *b)
{
	struct lines la, lb;
	struct op *ops;
	size_t nops, k = 0;
	bool changed = false;

	lines_split(&la, a ? a : "");
	lines_split(&lb, b ? b : "");
	nops = edit_script(&la, &lb, &ops);
	while (k < nops) {
		size_t first, last, from, to;

		while (k < nops && ops[k].kind == OP_EQ)
			k++;
		if (k == nops)
			break;
		if (!changed)
			sb_printf(out, "--- %s\n+++ %s\n", label_a, label_b);
		changed = true;
		first = last = k;
		/* Join changes whose contexts would touch or overlap. */
		for (size_t j = k + 1; j < nops; j++) {
			if (ops[j].kind == OP_EQ)
				continue;
			if (j - last - 1 > 2 * CONTEXT)
				break;
			last = j;
		}
		from = first > CONTEXT ? first - CONTEXT : 0;
		to = last + 1 + CONTEXT < nops ? last + 1 + CONTEXT : nops;
		hunk(out, ops, from, to, &la, &lb);
		k = to;
	}
	free(ops);
	lines_free(&la);
	lines_free(&lb);
	return changed;
}
