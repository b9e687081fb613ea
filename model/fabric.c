/*
 * fabric.c - the fabric model (see fabric.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/fabric.h"

void fabric_init(struct fabric *f)
{
	static uint64_t generation;

	memset(f, 0, sizeof(*f));
	f->local_node = FAB_NONE;
	f->gen = __atomic_add_fetch(&generation, 1, __ATOMIC_RELAXED);
}

void fabric_free(struct fabric *f)
{
	for (size_t i = 0; i < f->n_nodes; i++) {
		struct fab_node *n = &f->nodes[i];

		for (unsigned p = 0; n->ports && p <= n->num_ports; p++) {
			free(n->ports[p].pkeys);
			free(n->ports[p].want_pkeys);
		}
		free(n->ports);
		free(n->mft);
	}
	free(f->nodes);
	free(f->hash);
	fabric_init(f);
}

int32_t fabric_find(const struct fabric *f, uint64_t guid)
{
	if (!f->hash_size)
		return FAB_NONE;
	size_t mask = f->hash_size - 1;
	for (size_t i = guid_hash(guid) & mask;; i = (i + 1) & mask) {
		int32_t id = f->hash[i];

		if (id == FAB_NONE || f->nodes[id].guid == guid)
			return id;
	}
}

static void hash_put(struct fabric *f, int32_t id)
{
	size_t mask = f->hash_size - 1;
	size_t i = guid_hash(f->nodes[id].guid) & mask;

	while (f->hash[i] != FAB_NONE)
		i = (i + 1) & mask;
	f->hash[i] = id;
}

/* Keep the load factor under one half. */
static int hash_grow(struct fabric *f)
{
	size_t size = f->hash_size ? f->hash_size * 2 : 64;
	int32_t *h = malloc(size * sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < size; i++)
		h[i] = FAB_NONE;
	free(f->hash);
	f->hash = h;
	f->hash_size = size;
	for (size_t id = 0; id < f->n_nodes; id++)
		hash_put(f, (int32_t)id);
	return 0;
}

int32_t fabric_add_node(struct fabric *f, uint64_t guid, uint8_t type,
			uint8_t num_ports)
{
	struct fab_node *n;

	if (fabric_find(f, guid) != FAB_NONE)
		return -EEXIST;
	if (f->n_nodes == f->cap_nodes) {
		size_t cap = f->cap_nodes ? f->cap_nodes * 2 : 64;
		struct fab_node *nn = realloc(f->nodes, cap * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		f->nodes = nn;
		f->cap_nodes = cap;
	}
	if ((f->n_nodes + 1) * 2 > f->hash_size && hash_grow(f) < 0)
		return -ENOMEM;
	n = &f->nodes[f->n_nodes];
	memset(n, 0, sizeof(*n));
	n->ports = calloc((size_t)num_ports + 1, sizeof(*n->ports));
	if (!n->ports)
		return -ENOMEM;
	n->guid = guid;
	n->type = type;
	n->num_ports = num_ports;
	for (unsigned p = 0; p <= num_ports; p++) {
		n->ports[p].num = (uint8_t)p;
		n->ports[p].peer_node = FAB_NONE;
	}
	int32_t id = (int32_t)f->n_nodes++;
	hash_put(f, id);
	return id;
}

int fabric_link(struct fabric *f, int32_t a, uint8_t pa, int32_t b, uint8_t pb)
{
	if (a < 0 || b < 0 || (size_t)a >= f->n_nodes || (size_t)b >= f->n_nodes)
		return -EINVAL;
	struct fab_node *na = &f->nodes[a], *nb = &f->nodes[b];
	if (pa == 0 || pb == 0 || pa > na->num_ports || pb > nb->num_ports)
		return -EINVAL;
	/* Re-cabling: whoever was on either end before is unlinked. */
	struct fab_port *ends[2] = { &na->ports[pa], &nb->ports[pb] };
	for (int i = 0; i < 2; i++) {
		if (ends[i]->peer_node != FAB_NONE) {
			struct fab_node *o = &f->nodes[ends[i]->peer_node];
			o->ports[ends[i]->peer_port].peer_node = FAB_NONE;
			ends[i]->peer_node = FAB_NONE;
		}
	}
	na->ports[pa].peer_node = b;
	na->ports[pa].peer_port = pb;
	nb->ports[pb].peer_node = a;
	nb->ports[pb].peer_port = pa;
	return 0;
}

unsigned fabric_unlink_node(struct fabric *f, int32_t id)
{
	struct fab_node *n;
	unsigned undone = 0;

	if (id < 0 || (size_t)id >= f->n_nodes)
		return 0;
	n = &f->nodes[id];
	for (unsigned p = 1; p <= n->num_ports; p++) {
		struct fab_port *pt = &n->ports[p];

		if (pt->peer_node == FAB_NONE)
			continue;
		f->nodes[pt->peer_node].ports[pt->peer_port].peer_node = FAB_NONE;
		pt->peer_node = FAB_NONE;
		undone++;
	}
	return undone;
}

void fabric_count(const struct fabric *f, struct fabric_counts *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		if (n->type == NODE_TYPE_SWITCH)
			c->switches++;
		else if (n->type == NODE_TYPE_CA)
			c->cas++;
		else
			c->routers++;
		for (unsigned p = 1; p <= n->num_ports; p++) {
			const struct fab_port *pt = &n->ports[p];

			if (pt->valid)
				c->ports++;
			/* count each link from its lower end */
			if (pt->peer_node != FAB_NONE &&
			    ((size_t)pt->peer_node > i ||
			     ((size_t)pt->peer_node == i && pt->peer_port > p)))
				c->links++;
		}
	}
}

const char *fabric_node_type_str(uint8_t type)
{
	switch (type) {
	case NODE_TYPE_CA:	return "Ca";
	case NODE_TYPE_SWITCH:	return "Switch";
	case NODE_TYPE_ROUTER:	return "Rt";
	default:		return "Unknown";
	}
}

unsigned fabric_pkey_blocks(const struct fab_node *n, unsigned pn)
{
	const struct fab_port *p;
	unsigned cap;

	if (pn > n->num_ports)
		return 0;
	p = &n->ports[pn];
	if (n->type != NODE_TYPE_SWITCH || pn == 0) {
		if (n->type != NODE_TYPE_SWITCH && pn == 0)
			return 0;
		cap = n->partition_cap;
	} else {
		if (!n->has_switch_info || !p->valid ||
		    pi_port_state(&p->pi) < PORT_STATE_INIT)
			return 0;
		cap = be16toh(n->si.partition_enf_cap);
	}
	cap = (cap + PKEY_BLOCK_SIZE - 1) / PKEY_BLOCK_SIZE;
	return cap > PKEY_MAX_BLOCKS ? PKEY_MAX_BLOCKS : cap;
}

int fabric_pkey_alloc(struct fab_node *n, unsigned pn, unsigned blocks)
{
	struct fab_port *p = &n->ports[pn];

	free(p->pkeys);
	p->pkeys = NULL;
	p->pkey_blocks = p->pkey_read = 0;
	if (!blocks || blocks > PKEY_MAX_BLOCKS)
		return blocks ? -EINVAL : 0;
	p->pkeys = calloc((size_t)blocks * PKEY_BLOCK_SIZE, sizeof(*p->pkeys));
	if (!p->pkeys)
		return -ENOMEM;
	p->pkey_blocks = (uint16_t)blocks;
	return 0;
}

/* A malloc'd copy of `n` elements of `size` bytes, NULL for none. */
static void *dup_array(const void *src, size_t n, size_t size, bool *oom)
{
	void *d;

	if (!src || !n)
		return NULL;
	d = malloc(n * size);
	if (!d) {
		*oom = true;
		return NULL;
	}
	memcpy(d, src, n * size);
	return d;
}

int fabric_copy_subset(struct fabric *dst, const struct fabric *src,
		       const bool *keep)
{
	int32_t *map;
	bool oom = false;

	fabric_init(dst);
	map = malloc((src->n_nodes ? src->n_nodes : 1) * sizeof(*map));
	if (!map)
		return -ENOMEM;
	for (size_t i = 0; i < src->n_nodes; i++) {
		const struct fab_node *s = &src->nodes[i];
		int32_t id;

		map[i] = FAB_NONE;
		if (keep && !keep[i])
			continue;
		id = fabric_add_node(dst, s->guid, s->type, s->num_ports);
		if (id < 0) {
			free(map);
			fabric_free(dst);
			return id == -EEXIST ? -EINVAL : id;
		}
		map[i] = id;
		struct fab_node *d = &dst->nodes[id];
		struct fab_port *ports = d->ports;

		*d = *s;
		d->ports = ports;
		d->mft = dup_array(s->mft, (size_t)s->mft_entries *
				   s->mft_positions, sizeof(*s->mft), &oom);
		if (!d->mft)
			d->mft_entries = d->mft_positions = 0;
		memcpy(ports, s->ports, ((size_t)s->num_ports + 1) * sizeof(*ports));
		for (unsigned p = 0; p <= s->num_ports; p++) {
			struct fab_port *dp = &ports[p];
			const struct fab_port *sp = &s->ports[p];

			dp->pkeys = dup_array(sp->pkeys, (size_t)sp->pkey_blocks *
					      PKEY_BLOCK_SIZE, sizeof(*sp->pkeys),
					      &oom);
			if (!dp->pkeys)
				dp->pkey_blocks = dp->pkey_read = 0;
			dp->want_pkeys = NULL;
			dp->n_want_pkeys = 0;
		}
	}
	/* Links between kept nodes, by the new ids. */
	for (size_t i = 0; i < src->n_nodes; i++) {
		if (map[i] == FAB_NONE)
			continue;
		struct fab_node *d = &dst->nodes[map[i]];

		for (unsigned p = 0; p <= d->num_ports; p++) {
			struct fab_port *dp = &d->ports[p];

			if (dp->peer_node != FAB_NONE)
				dp->peer_node = map[dp->peer_node];
		}
	}
	dst->local_port_guid = src->local_port_guid;
	dst->local_port = src->local_port;
	dst->local_node = src->local_node == FAB_NONE ? FAB_NONE
			  : map[src->local_node];
	dst->max_lid = src->max_lid;
	free(map);
	if (oom) {
		fabric_free(dst);
		return -ENOMEM;
	}
	return 0;
}
