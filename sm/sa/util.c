/*
 * util.c - record tables and ComponentMask matching (see sa.h), the walk
 * over nodes in OpenSM's order and the LFT of a switch (gen.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sm/sa/gen.h"

/* Grow buf to `cap` records, within max_bytes. */
static int table_grow(struct sa_table *t, size_t cap)
{
	size_t es = t->stride ? t->stride : t->rec_size;
	uint8_t *buf;

	if (t->max_bytes && cap * es > t->max_bytes) {
		t->wanted = cap * es;
		return -ENOBUFS;
	}
	if (!(buf = realloc(t->buf, cap * es)))
		return -ENOMEM;
	t->buf = buf;
	t->cap = cap;
	return 0;
}

int sa_table_reserve(struct sa_table *t, size_t n)
{
	return n <= t->cap || t->count_only ? 0 : table_grow(t, n);
}

int sa_table_add(struct sa_table *t, const void *rec)
{
	size_t es = t->stride ? t->stride : t->rec_size;
	int rc;

	if (t->count_only) {
		t->count++;
		return 0;
	}
	if (t->count == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;

		/* Doubling would pass the limit: as much as it allows. */
		if (t->max_bytes && cap * es > t->max_bytes &&
		    t->max_bytes / es > t->count)
			cap = t->max_bytes / es;
		if ((rc = table_grow(t, cap)) < 0) {
			if (rc == -ENOBUFS)
				t->wanted = (t->count + 1) * es;
			return rc;
		}
	}
	memcpy(t->buf + t->count * es, rec, t->rec_size);
	if (es > t->rec_size)
		memset(t->buf + t->count * es + t->rec_size, 0, es - t->rec_size);
	t->count++;
	return 0;
}

/* Bit `i` of a big-endian bit string (bit 0 = MSB of byte 0). */
static unsigned bit_at(const uint8_t *p, unsigned i)
{
	return (p[i / 8] >> (7 - i % 8)) & 1;
}

static bool field_equal(const struct sa_field *fd, const uint8_t *a,
			const uint8_t *b)
{
	unsigned off = fd->bit_off, n = fd->bits;

	/* Byte-aligned fields (nearly all of them): compare bytes. */
	if (off % 8 == 0 && n % 8 == 0)
		return !memcmp(a + off / 8, b + off / 8, n / 8);
	for (unsigned i = off; i < off + n; i++)
		if (bit_at(a, i) != bit_at(b, i))
			return false;
	return true;
}

bool sa_match(const struct sa_field *fields, unsigned nfields, uint64_t mask,
	      const void *rec, const void *tmpl)
{
	for (unsigned i = 0; i < nfields && mask; i++, mask >>= 1)
		if ((mask & 1) && !field_equal(&fields[i], rec, tmpl))
			return false;
	return true;
}

bool sa_mask_valid(unsigned nfields, uint64_t mask)
{
	return nfields >= 64 || !(mask >> nfields);
}

/*
 * Call fn for every node of the model, in OpenSM's order, until it fails.
 */
int each_node(const struct sa_view *v, const struct sa_query *q,
	      int (*fn)(const struct sa_view *, const struct sa_query *,
			int32_t, struct sa_table *),
	      struct sa_table *out)
{
	uint32_t local[4] = { 0 }, *k = &cursor_of(q, local)[0];
	int rc;

	if ((rc = midx_get(v->f)) < 0)
		return rc;
	for (; *k < midx_cur.n_nodes; ++*k) {
		int32_t id = midx_cur.nodes_sorted[*k];

		if (sa_slice_over(q))
			return SA_MORE;
		if (!sa_charge(q, 1u + v->f->nodes[id].num_ports))
			return -SA_STATUS_NO_RESOURCES;
		if ((rc = fn(v, q, id, out)) != 0)
			return rc;
	}
	return 0;
}

/* The LFT the SM computed for switch `id`, or NULL. */
const struct lft *lft_of(const struct sa_view *v, int32_t id)
{
	const struct routing_result *rr = v->routes;

	if (!rr || !rr->lft || (size_t)id >= rr->n_nodes ||
	    rr->n_nodes != v->f->n_nodes || !rr->lft[id].port)
		return NULL;
	return &rr->lft[id];
}
