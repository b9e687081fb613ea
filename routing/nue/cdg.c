/*
 * cdg.c - the layers' channel dependency graphs for the nue engine (see
 * nue.h), kept acyclic one dependency at a time.
 *
 * Each layer keeps a topological order of its channels (ord: a
 * dependency a -> b needs ord[a] < ord[b]).  A new dependency that agrees
 * with the order costs one comparison.  One that does not is the case of
 * Pearce and Kelly's dynamic topological sort: search forward from b
 * among channels placed before a (F) and backward from a among channels
 * placed after b (B); reaching a from b means a cycle, and the dependency
 * is refused; otherwise B's channels, then F's, take the positions the
 * two sets held between them, in their old relative order.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "routing/nue/nue.h"

void nue_cdg_free(struct nue_cdg *d)
{
	free(d->dep_off);
	free(d->dep);
	free(d->owner);
	free(d->ord);
	free(d->mark);
	free(d->stk);
	free(d->lf);
	free(d->lb);
	free(d->pos);
	free(d->log);
	free(d->log_l);
	memset(d, 0, sizeof(*d));
}

int nue_cdg_init(struct nue_cdg *d, const struct rgraph *g, unsigned n_vl,
		 uint32_t log_cap)
{
	uint32_t S = g->S, C = g->adj_off[S];
	size_t n = 0;

	memset(d, 0, sizeof(*d));
	d->g = g;
	d->C = C;
	d->n_vl = n_vl;
	d->cap_log = log_cap;
	d->dep_off = malloc(((size_t)C + 1) * sizeof(*d->dep_off));
	d->owner = malloc(((size_t)C + 1) * sizeof(*d->owner));
	d->ord = malloc(((size_t)C * n_vl + 1) * sizeof(*d->ord));
	d->mark = calloc((size_t)C + 1, sizeof(*d->mark));
	d->stk = malloc(((size_t)C + 1) * sizeof(*d->stk));
	d->lf = malloc(((size_t)C + 1) * sizeof(*d->lf));
	d->lb = malloc(((size_t)C + 1) * sizeof(*d->lb));
	d->pos = malloc((2 * (size_t)C + 1) * sizeof(*d->pos));
	d->log = malloc(((size_t)log_cap + 1) * sizeof(*d->log));
	d->log_l = malloc((size_t)log_cap + 1);
	if (!d->dep_off || !d->owner || !d->ord || !d->mark || !d->stk ||
	    !d->lf || !d->lb || !d->pos || !d->log || !d->log_l)
		return -ENOMEM;
	for (uint32_t v = 0; v < S; v++)
		for (uint32_t a = g->adj_off[v]; a < g->adj_off[v + 1]; a++)
			d->owner[a] = v;
	for (uint32_t c = 0; c < C; c++) {
		uint32_t w = g->adj_nbr[c];

		d->dep_off[c] = (uint32_t)n;
		n += g->adj_off[w + 1] - g->adj_off[w];
	}
	d->dep_off[C] = (uint32_t)n;
	for (unsigned l = 0; l < n_vl; l++)
		for (uint32_t c = 0; c < C; c++)
			d->ord[(size_t)l * C + c] = c;
	d->dep = calloc(n + 1, 1);
	return d->dep ? 0 : -ENOMEM;
}

static uint32_t slot_of(const struct nue_cdg *d, uint32_t a, uint32_t b)
{
	return d->dep_off[a] + (b - d->g->adj_off[d->g->adj_nbr[a]]);
}

/* The channel that dependency slot q of channel x leads to. */
static uint32_t slot_to(const struct nue_cdg *d, uint32_t x, uint32_t q)
{
	return d->g->adj_off[d->g->adj_nbr[x]] + (q - d->dep_off[x]);
}

bool nue_cdg_has(const struct nue_cdg *d, unsigned l, uint32_t a, uint32_t b)
{
	return d->dep[slot_of(d, a, b)] >> l & 1;
}

bool nue_cdg_free_dep(const struct nue_cdg *d, unsigned l, uint32_t a,
		      uint32_t b)
{
	const uint32_t *ord = d->ord + (size_t)l * d->C;

	return (d->dep[slot_of(d, a, b)] >> l & 1) || ord[a] < ord[b];
}

static void set_dep(struct nue_cdg *d, unsigned l, uint32_t s)
{
	d->dep[s] |= (uint8_t)(1u << l);
	if (d->logging && d->n_log < d->cap_log) {
		d->log[d->n_log] = s;
		d->log_l[d->n_log++] = (uint8_t)l;
	}
}

void nue_cdg_undo(struct nue_cdg *d, uint32_t from)
{
	while (d->n_log > from) {
		d->n_log--;
		d->dep[d->log[d->n_log]] &= (uint8_t)~(1u << d->log_l[d->n_log]);
	}
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* F: the channels reachable from b placed before ub; false when a is one
 * of them or the search passes its bound. */
static bool search_fwd(struct nue_cdg *d, const uint32_t *ord, uint8_t bit,
		       uint32_t a, uint32_t b, uint32_t *nf)
{
	uint32_t sp = 0, ub = ord[a];

	d->stk[sp++] = b;
	d->mark[b] = d->stamp;
	while (sp) {
		uint32_t x = d->stk[--sp];

		if (d->search_max && *nf >= d->search_max) {
			d->bounded++;
			return false;
		}
		d->lf[(*nf)++] = (uint64_t)ord[x] << 32 | x;
		d->work++;
		for (uint32_t q = d->dep_off[x]; q < d->dep_off[x + 1]; q++) {
			uint32_t y;

			if (!(d->dep[q] & bit))
				continue;
			y = slot_to(d, x, q);
			if (y == a)
				return false;
			if (ord[y] < ub && d->mark[y] != d->stamp) {
				d->mark[y] = d->stamp;
				d->stk[sp++] = y;
			}
		}
	}
	return true;
}

/* B: the channels that reach a placed after lb. */
static void search_back(struct nue_cdg *d, const uint32_t *ord, uint8_t bit,
			uint32_t a, uint32_t lb, uint32_t *nb)
{
	const struct rgraph *g = d->g;
	uint32_t sp = 0;

	d->stk[sp++] = a;
	d->mark[a] = d->stamp;
	while (sp) {
		uint32_t x = d->stk[--sp], v = d->owner[x];
		uint32_t j = x - g->adj_off[v];

		d->lb[(*nb)++] = (uint64_t)ord[x] << 32 | x;
		d->work++;
		for (uint32_t e = g->adj_off[v]; e < g->adj_off[v + 1]; e++) {
			uint32_t p = g->adj_rev[e];

			if (!(d->dep[d->dep_off[p] + j] & bit))
				continue;
			if (ord[p] > lb && d->mark[p] != d->stamp) {
				d->mark[p] = d->stamp;
				d->stk[sp++] = p;
			}
		}
	}
}

bool nue_cdg_add(struct nue_cdg *d, unsigned l, uint32_t a, uint32_t b)
{
	uint32_t *ord = d->ord + (size_t)l * d->C;
	uint8_t bit = (uint8_t)(1u << l);
	uint32_t s = slot_of(d, a, b), nf = 0, nb = 0;

	if (d->dep[s] & bit)
		return true;
	if (ord[a] < ord[b]) {
		set_dep(d, l, s);
		return true;
	}
	d->searches++;
	d->stamp++;
	if (!d->stamp) {
		memset(d->mark, 0, ((size_t)d->C + 1) * sizeof(*d->mark));
		d->stamp = 1;
	}
	if (!search_fwd(d, ord, bit, a, b, &nf))
		return false;
	search_back(d, ord, bit, a, ord[b], &nb);
	qsort(d->lf, nf, sizeof(*d->lf), cmp_u64);
	qsort(d->lb, nb, sizeof(*d->lb), cmp_u64);
	/* the positions both sets held, in order: B's go first */
	{
		uint32_t i = 0, j = 0, k = 0;

		while (i < nb || j < nf) {
			bool take_b = j == nf ||
				      (i < nb && d->lb[i] >> 32 < d->lf[j] >> 32);

			d->pos[k++] = take_b ? (uint32_t)(d->lb[i++] >> 32)
					     : (uint32_t)(d->lf[j++] >> 32);
		}
	}
	for (uint32_t i = 0; i < nb; i++)
		ord[(uint32_t)d->lb[i]] = d->pos[i];
	for (uint32_t i = 0; i < nf; i++)
		ord[(uint32_t)d->lf[i]] = d->pos[nb + i];
	set_dep(d, l, s);
	return true;
}

bool nue_cdg_acyclic(struct nue_cdg *d, unsigned l)
{
	uint8_t bit = (uint8_t)(1u << l);
	uint8_t *color = calloc((size_t)d->C + 1, 1);
	uint32_t *at = malloc(((size_t)d->C + 1) * sizeof(*at));
	bool ok = color && at;

	for (uint32_t s = 0; ok && s < d->C; s++) {
		uint32_t sp = 0;

		if (color[s])
			continue;
		color[s] = 1;
		d->stk[sp] = s;
		at[sp++] = d->dep_off[s];
		while (ok && sp) {
			uint32_t c = d->stk[sp - 1], q = at[sp - 1];

			if (q == d->dep_off[c + 1]) {
				color[c] = 2;
				sp--;
				continue;
			}
			at[sp - 1]++;
			if (!(d->dep[q] & bit))
				continue;
			c = slot_to(d, c, q);
			if (color[c] == 1)
				ok = false;
			else if (!color[c]) {
				color[c] = 1;
				d->stk[sp] = c;
				at[sp++] = d->dep_off[c];
			}
		}
	}
	free(color);
	free(at);
	return ok;
}
