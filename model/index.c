/*
 * index.c - the lookup index of a fabric model (index.h): LID -> end
 * port and port GUID -> end port through an index built once per subnet
 * model, and the orders OpenSM lists nodes and end ports in.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/index.h"

/* The index of the current model (see struct midx). */
struct midx midx_cur;
unsigned long midx_builds;

static void index_free(void)
{
	free(midx_cur.by_lid);
	free(midx_cur.by_guid);
	free(midx_cur.nodes_sorted);
	free(midx_cur.ends);
	free(midx_cur.pk_base);
	free(midx_cur.pk_off);
	free(midx_cur.pk_keys);
	memset(&midx_cur, 0, sizeof(midx_cur));
}

/*
 * OpenSM keeps nodes and ports in maps keyed by the GUID in network order
 * and compared as a host integer, and answers tables in that order; we
 * list them in the same order so that answers compare line by line.
 */
static uint64_t guid_order(uint64_t guid)
{
	return htobe64(guid);
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_node(const void *a, const void *b)
{
	const struct fab_node *x = &midx_cur.f->nodes[*(const int32_t *)a];
	const struct fab_node *y = &midx_cur.f->nodes[*(const int32_t *)b];

	return cmp_u64(guid_order(x->guid), guid_order(y->guid));
}

static int cmp_end(const void *a, const void *b)
{
	const struct fab_ref *x = a, *y = b;

	return cmp_u64(guid_order(midx_cur.f->nodes[x->node].ports[x->port].guid),
		       guid_order(midx_cur.f->nodes[y->node].ports[y->port].guid));
}

/*
 * Is the index that of this model?  The generation says which model it
 * is; the sizes are checked too because the lookups index arrays of those
 * sizes (a test may change LIDs of a model in place).
 */
static bool index_current(const struct fabric *f)
{
	return midx_cur.built && midx_cur.f == f && midx_cur.gen == f->gen &&
	       midx_cur.n_nodes == f->n_nodes && midx_cur.max_lid == f->max_lid;
}

static void guid_insert(uint64_t guid, int32_t node, uint8_t port)
{
	size_t mask = midx_cur.guid_size - 1;

	for (size_t i = guid_hash(guid) & mask;; i = (i + 1) & mask) {
		if (midx_cur.by_guid[i].guid == guid)
			return;		/* duplicate GUID: first one wins */
		if (!midx_cur.by_guid[i].guid) {
			midx_cur.by_guid[i].guid = guid;
			midx_cur.by_guid[i].ref = (struct fab_ref){ node, port };
			return;
		}
	}
}

/*
 * The P_Keys of every end port, the empty entries left out (a table of
 * 32 or 64 entries holds a key or two): a port pair's partitions are then
 * compared in a few steps (path.c).  And which partitions have a full
 * member at all.  0 or -ENOMEM.
 */
static int index_pkeys(const struct fabric *f)
{
	size_t slots = 0, keys = 0;

	midx_cur.pk_base = malloc((f->n_nodes + 1) * sizeof(*midx_cur.pk_base));
	if (!midx_cur.pk_base)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_nodes; i++) {
		midx_cur.pk_base[i] = (uint32_t)slots;
		slots += f->nodes[i].num_ports + 1u;
	}
	midx_cur.pk_off = calloc(slots + 1, sizeof(*midx_cur.pk_off));
	if (!midx_cur.pk_off)
		return -ENOMEM;
	for (int pass = 0; pass < 2; pass++) {
		keys = 0;
		for (size_t i = 0; i < f->n_nodes; i++) {
			const struct fab_node *n = &f->nodes[i];

			for (unsigned pn = 0; pn <= n->num_ports; pn++) {
				struct fab_pkey_tab t;
				size_t s = midx_cur.pk_base[i] + pn;

				midx_cur.pk_off[s] = (uint32_t)keys;
				if (!fabric_is_endport(n, pn))
					continue;
				fabric_pkey_tab(&n->ports[pn], &t);
				for (unsigned k = 0; k < t.n; k++) {
					uint16_t key = fabric_pkey_at(&t, k);
					uint16_t base = FAB_PKEY_BASE(key);

					if (!base)
						continue;
					if (pass) {
						midx_cur.pk_keys[keys] = key;
					} else if (key & 0x8000) {
						midx_cur.pkey_full[base / 64] |=
							1ull << (base % 64);
					}
					keys++;
				}
			}
		}
		midx_cur.pk_off[slots] = (uint32_t)keys;
		if (!pass) {
			midx_cur.pk_keys = malloc((keys + 1) * sizeof(*midx_cur.pk_keys));
			if (!midx_cur.pk_keys)
				return -ENOMEM;
		}
	}
	return 0;
}

static int index_build(const struct fabric *f)
{
	size_t ends = 0;

	index_free();
	for (size_t i = 0; i < f->n_nodes; i++)
		for (unsigned pn = 0; pn <= f->nodes[i].num_ports; pn++)
			ends += fabric_is_endport(&f->nodes[i], pn);
	midx_cur.guid_size = 16;
	while (midx_cur.guid_size < 2 * ends)
		midx_cur.guid_size *= 2;
	midx_cur.by_lid = malloc(((size_t)f->max_lid + 1) * sizeof(*midx_cur.by_lid));
	midx_cur.by_guid = calloc(midx_cur.guid_size, sizeof(*midx_cur.by_guid));
	midx_cur.nodes_sorted = malloc((f->n_nodes + 1) * sizeof(*midx_cur.nodes_sorted));
	midx_cur.ends = malloc((ends + 1) * sizeof(*midx_cur.ends));
	if (!midx_cur.by_lid || !midx_cur.by_guid || !midx_cur.nodes_sorted || !midx_cur.ends) {
		index_free();
		return -ENOMEM;
	}
	for (size_t l = 0; l <= f->max_lid; l++)
		midx_cur.by_lid[l] = (struct fab_ref){ FAB_NONE, 0 };
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		midx_cur.nodes_sorted[i] = (int32_t)i;
		for (unsigned pn = 0; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (!fabric_is_endport(n, pn))
				continue;
			midx_cur.ends[midx_cur.n_ends++] = (struct fab_ref){ (int32_t)i,
								    (uint8_t)pn };
			if (p->guid)
				guid_insert(p->guid, (int32_t)i, (uint8_t)pn);
			for (uint32_t l = p->lid; p->lid && l <= fabric_lid_top(p) &&
			     l <= f->max_lid; l++)
				if (midx_cur.by_lid[l].node == FAB_NONE)
					midx_cur.by_lid[l] = (struct fab_ref){
						(int32_t)i, (uint8_t)pn };
		}
	}
	if (index_pkeys(f) < 0) {
		index_free();
		return -ENOMEM;
	}
	midx_cur.f = f;
	midx_cur.gen = f->gen;
	midx_cur.n_nodes = f->n_nodes;
	midx_cur.max_lid = f->max_lid;
	midx_builds++;
	qsort(midx_cur.nodes_sorted, f->n_nodes, sizeof(*midx_cur.nodes_sorted), cmp_node);
	qsort(midx_cur.ends, midx_cur.n_ends, sizeof(*midx_cur.ends), cmp_end);
	midx_cur.built = true;
	return 0;
}

/*
 * The index of model `f`, built on first use after a change of model
 * (generation).  The lookups still check every answer against the
 * model and rebuild once when it does not hold: a model changed in place
 * (same generation) is not served stale ends either.
 */
int midx_get(const struct fabric *f)
{
	if (index_current(f))
		return 0;
	return index_build(f);
}

static bool lid_ref_ok(const struct fabric *f, uint16_t lid, struct fab_ref r)
{
	return r.node != FAB_NONE && (size_t)r.node < f->n_nodes &&
	       fabric_is_endport(&f->nodes[r.node], r.port) &&
	       fabric_lid_in_range(&f->nodes[r.node].ports[r.port], lid);
}

/* The end port that owns `lid`: 1 (found, *out set), 0, or -ENOMEM. */
int midx_lid_lookup(const struct fabric *f, uint16_t lid, struct fab_ref *out)
{
	int rc;

	if (!f || !f->n_nodes || !lid || lid > f->max_lid)
		return 0;
	for (int tries = 0; tries < 2; tries++) {
		if ((rc = midx_get(f)) < 0)
			return rc;
		struct fab_ref r = midx_cur.by_lid[lid];

		if (r.node == FAB_NONE)
			return 0;
		if (lid_ref_ok(f, lid, r)) {
			*out = r;
			return 1;
		}
		midx_cur.built = false;	/* stale: rebuild and look again */
	}
	return 0;
}

/* The end port whose port GUID is `guid`: 1, 0 or -ENOMEM. */
int midx_guid_lookup(const struct fabric *f, uint64_t guid, struct fab_ref *out)
{
	int rc;

	if (!f || !f->n_nodes || !guid)
		return 0;
	for (int tries = 0; tries < 2; tries++) {
		size_t mask;
		bool stale = false;

		if ((rc = midx_get(f)) < 0)
			return rc;
		mask = midx_cur.guid_size - 1;
		for (size_t i = guid_hash(guid) & mask; midx_cur.by_guid[i].guid;
		     i = (i + 1) & mask) {
			struct fab_ref r = midx_cur.by_guid[i].ref;

			if (midx_cur.by_guid[i].guid != guid)
				continue;
			if ((size_t)r.node < f->n_nodes &&
			    fabric_is_endport(&f->nodes[r.node], r.port) &&
			    f->nodes[r.node].ports[r.port].guid == guid) {
				*out = r;
				return 1;
			}
			stale = true;
			break;
		}
		if (!stale)
			return 0;
		midx_cur.built = false;
	}
	return 0;
}
