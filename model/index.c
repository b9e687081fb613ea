/*
 * index.c - the lookups the SA record generators share (index.h):
 * LID -> end port and port GUID -> end port through an index built once
 * per subnet model, the orders OpenSM lists nodes and end ports in, and
 * the LFT the SM computed for a switch.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/index.h"

/* The index of the current model (see struct sa_index). */
struct sa_index sa_idx;
unsigned long sa_index_builds;

static void index_free(void)
{
	free(sa_idx.by_lid);
	free(sa_idx.by_guid);
	free(sa_idx.nodes_sorted);
	free(sa_idx.ends);
	free(sa_idx.pk_base);
	free(sa_idx.pk_off);
	free(sa_idx.pk_keys);
	memset(&sa_idx, 0, sizeof(sa_idx));
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
	const struct fab_node *x = &sa_idx.f->nodes[*(const int32_t *)a];
	const struct fab_node *y = &sa_idx.f->nodes[*(const int32_t *)b];

	return cmp_u64(guid_order(x->guid), guid_order(y->guid));
}

static int cmp_end(const void *a, const void *b)
{
	const struct port_ref *x = a, *y = b;

	return cmp_u64(guid_order(sa_idx.f->nodes[x->node].ports[x->port].guid),
		       guid_order(sa_idx.f->nodes[y->node].ports[y->port].guid));
}

/*
 * Is the index that of this model?  The generation says which model it
 * is; the sizes are checked too because the lookups index arrays of those
 * sizes (a test may change LIDs of a model in place).
 */
static bool index_current(const struct fabric *f)
{
	return sa_idx.built && sa_idx.f == f && sa_idx.gen == f->gen &&
	       sa_idx.n_nodes == f->n_nodes && sa_idx.max_lid == f->max_lid;
}

static void guid_insert(uint64_t guid, int32_t node, uint8_t port)
{
	size_t mask = sa_idx.guid_size - 1;

	for (size_t i = guid_hash(guid) & mask;; i = (i + 1) & mask) {
		if (sa_idx.by_guid[i].guid == guid)
			return;		/* duplicate GUID: first one wins */
		if (!sa_idx.by_guid[i].guid) {
			sa_idx.by_guid[i].guid = guid;
			sa_idx.by_guid[i].ref = (struct port_ref){ node, port };
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

	sa_idx.pk_base = malloc((f->n_nodes + 1) * sizeof(*sa_idx.pk_base));
	if (!sa_idx.pk_base)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_nodes; i++) {
		sa_idx.pk_base[i] = (uint32_t)slots;
		slots += f->nodes[i].num_ports + 1u;
	}
	sa_idx.pk_off = calloc(slots + 1, sizeof(*sa_idx.pk_off));
	if (!sa_idx.pk_off)
		return -ENOMEM;
	for (int pass = 0; pass < 2; pass++) {
		keys = 0;
		for (size_t i = 0; i < f->n_nodes; i++) {
			const struct fab_node *n = &f->nodes[i];

			for (unsigned pn = 0; pn <= n->num_ports; pn++) {
				struct pkey_tab t;
				size_t s = sa_idx.pk_base[i] + pn;

				sa_idx.pk_off[s] = (uint32_t)keys;
				if (!is_endport(n, pn))
					continue;
				pkey_tab_of_port(&n->ports[pn], &t);
				for (unsigned k = 0; k < t.n; k++) {
					uint16_t key = pkey_at(&t, k);
					uint16_t base = PKEY_BASE(key);

					if (!base)
						continue;
					if (pass) {
						sa_idx.pk_keys[keys] = key;
					} else if (key & 0x8000) {
						sa_idx.pkey_full[base / 64] |=
							1ull << (base % 64);
					}
					keys++;
				}
			}
		}
		sa_idx.pk_off[slots] = (uint32_t)keys;
		if (!pass) {
			sa_idx.pk_keys = malloc((keys + 1) * sizeof(*sa_idx.pk_keys));
			if (!sa_idx.pk_keys)
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
			ends += is_endport(&f->nodes[i], pn);
	sa_idx.guid_size = 16;
	while (sa_idx.guid_size < 2 * ends)
		sa_idx.guid_size *= 2;
	sa_idx.by_lid = malloc(((size_t)f->max_lid + 1) * sizeof(*sa_idx.by_lid));
	sa_idx.by_guid = calloc(sa_idx.guid_size, sizeof(*sa_idx.by_guid));
	sa_idx.nodes_sorted = malloc((f->n_nodes + 1) * sizeof(*sa_idx.nodes_sorted));
	sa_idx.ends = malloc((ends + 1) * sizeof(*sa_idx.ends));
	if (!sa_idx.by_lid || !sa_idx.by_guid || !sa_idx.nodes_sorted || !sa_idx.ends) {
		index_free();
		return -ENOMEM;
	}
	for (size_t l = 0; l <= f->max_lid; l++)
		sa_idx.by_lid[l] = (struct port_ref){ FAB_NONE, 0 };
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		sa_idx.nodes_sorted[i] = (int32_t)i;
		for (unsigned pn = 0; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (!is_endport(n, pn))
				continue;
			sa_idx.ends[sa_idx.n_ends++] = (struct port_ref){ (int32_t)i,
								    (uint8_t)pn };
			if (p->guid)
				guid_insert(p->guid, (int32_t)i, (uint8_t)pn);
			for (uint32_t l = p->lid; p->lid && l <= lid_range_top(p) &&
			     l <= f->max_lid; l++)
				if (sa_idx.by_lid[l].node == FAB_NONE)
					sa_idx.by_lid[l] = (struct port_ref){
						(int32_t)i, (uint8_t)pn };
		}
	}
	if (index_pkeys(f) < 0) {
		index_free();
		return -ENOMEM;
	}
	sa_idx.f = f;
	sa_idx.gen = f->gen;
	sa_idx.n_nodes = f->n_nodes;
	sa_idx.max_lid = f->max_lid;
	sa_index_builds++;
	qsort(sa_idx.nodes_sorted, f->n_nodes, sizeof(*sa_idx.nodes_sorted), cmp_node);
	qsort(sa_idx.ends, sa_idx.n_ends, sizeof(*sa_idx.ends), cmp_end);
	sa_idx.built = true;
	return 0;
}

/*
 * The index of the view's model, built on first use after a change of
 * model (generation).  The lookups still check every answer against the
 * model and rebuild once when it does not hold: a model changed in place
 * (same generation) is not served stale ends either.
 */
int index_get(const struct sa_view *v)
{
	if (index_current(v->f))
		return 0;
	return index_build(v->f);
}

static bool lid_ref_ok(const struct fabric *f, uint16_t lid, struct port_ref r)
{
	return r.node != FAB_NONE && (size_t)r.node < f->n_nodes &&
	       is_endport(&f->nodes[r.node], r.port) &&
	       lid_in_range(&f->nodes[r.node].ports[r.port], lid);
}

/* The end port that owns `lid`: 1 (found, *out set), 0, or -ENOMEM. */
int lid_lookup(const struct sa_view *v, uint16_t lid, struct port_ref *out)
{
	const struct fabric *f = v->f;
	int rc;

	if (!has_fabric(v) || !lid || lid > f->max_lid)
		return 0;
	for (int tries = 0; tries < 2; tries++) {
		if ((rc = index_get(v)) < 0)
			return rc;
		struct port_ref r = sa_idx.by_lid[lid];

		if (r.node == FAB_NONE)
			return 0;
		if (lid_ref_ok(f, lid, r)) {
			*out = r;
			return 1;
		}
		sa_idx.built = false;	/* stale: rebuild and look again */
	}
	return 0;
}

/* The end port whose port GUID is `guid`: 1, 0 or -ENOMEM. */
int guid_lookup(const struct sa_view *v, uint64_t guid, struct port_ref *out)
{
	const struct fabric *f = v->f;
	int rc;

	if (!has_fabric(v) || !guid)
		return 0;
	for (int tries = 0; tries < 2; tries++) {
		size_t mask;
		bool stale = false;

		if ((rc = index_get(v)) < 0)
			return rc;
		mask = sa_idx.guid_size - 1;
		for (size_t i = guid_hash(guid) & mask; sa_idx.by_guid[i].guid;
		     i = (i + 1) & mask) {
			struct port_ref r = sa_idx.by_guid[i].ref;

			if (sa_idx.by_guid[i].guid != guid)
				continue;
			if ((size_t)r.node < f->n_nodes &&
			    is_endport(&f->nodes[r.node], r.port) &&
			    f->nodes[r.node].ports[r.port].guid == guid) {
				*out = r;
				return 1;
			}
			stale = true;
			break;
		}
		if (!stale)
			return 0;
		sa_idx.built = false;
	}
	return 0;
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

	if ((rc = index_get(v)) < 0)
		return rc;
	for (; *k < sa_idx.n_nodes; ++*k) {
		int32_t id = sa_idx.nodes_sorted[*k];

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
