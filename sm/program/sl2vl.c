/*
 * sm/program/sl2vl.c - the SL to VL mapping tables: their images and the
 * Sets (see sm/program.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sm/program/internal.h"

/*
 * What each SLtoVLMappingTable holds as far as we know: the table a Set
 * answer carried, per (node GUID, input port, output port).  A table we
 * know nothing of, or know to differ, is Set; one known to match is not.
 * An unanswered Set leaves it unknown.
 */
struct sl2vl_image {
	uint64_t guid;			/* 0 = empty slot */
	uint8_t  in, out;
	uint8_t  kind;			/* 0: SL-to-VL; 1-4: VLArb block */
	bool     known;
	uint8_t  tab[SL2VL_BYTES];
};

struct sl2vl_images {
	struct sl2vl_image *slot;
	size_t size, used;
};

struct sl2vl_images *sl2vl_images_new(void)
{
	return calloc(1, sizeof(struct sl2vl_images));
}

void sl2vl_images_free(struct sl2vl_images *im)
{
	if (im)
		free(im->slot);
	free(im);
}

static size_t sl2vl_slot(uint64_t guid, unsigned in, unsigned out,
			 unsigned kind, size_t size)
{
	return guid_hash(guid * 65537 + in * 257 + out + kind * 0x10001) &
	       (size - 1);
}

static struct sl2vl_image *sl2vl_find(const struct sl2vl_images *im,
				      uint64_t guid, unsigned in, unsigned out,
				      unsigned kind)
{
	if (!im->size)
		return NULL;
	for (size_t i = sl2vl_slot(guid, in, out, kind, im->size);;
	     i = (i + 1) & (im->size - 1)) {
		struct sl2vl_image *s = &im->slot[i];

		if (!s->guid)
			return NULL;
		if (s->guid == guid && s->in == in && s->out == out &&
		    s->kind == kind)
			return s;
	}
}

static struct sl2vl_image *sl2vl_img_get(struct sl2vl_images *im, uint64_t guid,
				     unsigned in, unsigned out, unsigned kind)
{
	struct sl2vl_image *s = sl2vl_find(im, guid, in, out, kind);

	if (s)
		return s;
	if ((im->used + 1) * 2 > im->size) {
		size_t size = im->size ? im->size * 2 : 256;
		struct sl2vl_image *slot = calloc(size, sizeof(*slot));

		if (!slot)
			return NULL;
		for (size_t i = 0; i < im->size; i++) {
			struct sl2vl_image *o = &im->slot[i];

			if (!o->guid)
				continue;
			size_t j = sl2vl_slot(o->guid, o->in, o->out, o->kind,
					      size);
			while (slot[j].guid)
				j = (j + 1) & (size - 1);
			slot[j] = *o;
		}
		free(im->slot);
		im->slot = slot;
		im->size = size;
	}
	size_t i = sl2vl_slot(guid, in, out, kind, im->size);
	while (im->slot[i].guid)
		i = (i + 1) & (im->size - 1);
	s = &im->slot[i];
	memset(s, 0, sizeof(*s));
	s->guid = guid;
	s->in = (uint8_t)in;
	s->out = (uint8_t)out;
	s->kind = (uint8_t)kind;
	im->used++;
	return s;
}

void sl2vl_images_forget(struct sl2vl_images *im, uint64_t guid,
			 unsigned max_port)
{
	/* Probe the node's pairs: a scan of the whole table per node was
	 * quadratic (16,000 new nodes: 55% of a bring-up's CPU). */
	for (unsigned in = 0; im && im->used && in <= max_port; in++)
		for (unsigned out = 0; out <= max_port; out++)
			for (unsigned kind = 0; kind <= 4; kind++) {
				struct sl2vl_image *s =
					sl2vl_find(im, guid, in, out, kind);

				if (s)
					s->known = false;
			}
}

bool sl2vl_image_lookup(const struct sl2vl_images *im, uint64_t guid,
			unsigned in, unsigned out, uint8_t tab[SL2VL_BYTES])
{
	const struct sl2vl_image *s = im ? sl2vl_find(im, guid, in, out, 0) :
				      NULL;

	if (!s || !s->known)
		return false;
	memcpy(tab, s->tab, SL2VL_BYTES);
	return true;
}

/* Data VLs of an OperationalVLs encoding (14.2.5.6): 1, 2, 4, 8 or 15. */
unsigned op_vls_count(unsigned enc)
{
	static const uint8_t n[] = { 1, 1, 2, 4, 8, 15 };

	return enc < sizeof(n) ? n[enc] : 15;
}

void sl2vl_want(unsigned n_layers, unsigned vls, uint8_t tab[SL2VL_BYTES])
{
	memset(tab, 0, SL2VL_BYTES);
	for (unsigned sl = 0; sl < 16; sl++) {
		unsigned vl = sl < n_layers && sl < vls ? sl : 0;

		/* SL 2k in the high nibble of byte k, SL 2k+1 in the low */
		tab[sl / 2] |= (uint8_t)(sl % 2 ? vl : vl << 4);
	}
}

struct sl2vl_ctx {
	struct sl2vl_images *im;
	uint64_t guid;
	uint8_t in, out, kind;
	uint16_t attr;
	uint32_t mod;
	size_t len;			/* bytes of want */
	const uint8_t *path;		/* the node's or CA port's DR path */
	unsigned hops;
	uint8_t want[VLARB_BYTES];
};

/* What the image keeps of a table: an SL-to-VL table itself; of a
 * VLArbitrationTable block, a 64-bit FNV-1a digest of it. */
static void image_of(const uint8_t *data, size_t len, uint8_t tab[SL2VL_BYTES])
{
	uint64_t h = 0xcbf29ce484222325ULL;

	if (len <= SL2VL_BYTES) {
		memcpy(tab, data, SL2VL_BYTES);
		return;
	}
	for (size_t i = 0; i < len; i++)
		h = (h ^ data[i]) * 0x100000001b3ULL;
	memcpy(tab, &h, SL2VL_BYTES);
}

static void on_sl2vl(struct smp_batch *b, int32_t node, uint8_t port,
		     const uint8_t *data, void *arg)
{
	struct sl2vl_ctx *c = arg;
	struct sl2vl_image *img = sl2vl_img_get(c->im, c->guid, c->in, c->out,
						c->kind);

	(void)b;
	(void)node;
	(void)port;
	/* The answer to a Set holds the table as the port now has it.  A
	 * lost Set counts as failed (the sweep's policy decides); the next
	 * sweep sends it again. */
	if (img) {
		img->known = data != NULL;
		if (data)
			image_of(data, c->len, img->tab);
	}
	free(c);
}

/*
 * One table: nothing when the port is known to hold it, else a Set.  A
 * table not known yet is Set without reading it first: a Get costs the
 * same SMP, and on a fabric whose tables differ (every cold start: the
 * default maps SL i to VL i up to 14) reading first doubled the SMPs,
 * 1.1 million of the 1.57 million of a 1,000-switch bring-up.  Setting a
 * table to what it holds changes nothing on the port.
 */
int table_one(struct smp_batch *b, struct sl2vl_images *im, struct fabric *f,
	      int32_t id, const struct table_key *k, const uint8_t *want,
	      size_t len, unsigned *sets)
{
	struct fab_node *n = fabric_node(f, id);
	bool sw = n->type == NODE_TYPE_SWITCH;
	struct sl2vl_image *img = sl2vl_img_get(im, n->guid, k->in, k->out,
						k->kind);
	uint8_t mine[SL2VL_BYTES];
	struct sl2vl_ctx *c;
	int rc;

	if (!img || len > VLARB_BYTES)
		return -ENOMEM;
	image_of(want, len, mine);
	if (img->known && !memcmp(img->tab, mine, SL2VL_BYTES))
		return 0;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = (struct sl2vl_ctx){ .im = im, .guid = n->guid,
				 .in = (uint8_t)k->in, .out = (uint8_t)k->out,
				 .kind = (uint8_t)k->kind, .attr = k->attr,
				 .mod = k->mod, .len = len };
	memcpy(c->want, want, len);
	port_path(f, id, sw ? 0 : (uint8_t)k->out, &c->path, &c->hops);
	rc = batch_smp(b, MAD_METHOD_SET, c->path, c->hops, c->attr, c->mod,
		       c->want, len, id, sw ? 0 : (uint8_t)k->out, on_sl2vl, c);
	if (rc < 0) {
		free(c);
		return rc;
	}
	if (sets)
		++*sets;
	return 1;
}

int sl2vl_one(struct smp_batch *b, struct sl2vl_images *im,
	      struct fabric *f, int32_t id, unsigned in, unsigned out,
	      const uint8_t want[SL2VL_BYTES], unsigned *sets)
{
	bool sw = fabric_node(f, id)->type == NODE_TYPE_SWITCH;
	struct table_key k = { in, out, 0, SMP_ATTR_SL2VL_TABLE,
			       sw ? in << 8 | out : 0 };

	return table_one(b, im, f, id, &k, want, SL2VL_BYTES, sets);
}

void sl2vl_split_vls(const struct routing_result *r, unsigned max_op_vls,
		     const struct fabric *f, int32_t id, unsigned pn,
		     uint8_t vl[16])
{
	vlsplit_sl2vl(&r->split, op_vls_count(link_op_vls_max(max_op_vls, f,
					      id, (uint8_t)pn)), vl);
}

/* The table of port `pn` of node `id` for the layers of r. */
static void layers_want(const struct routing_result *r,
			const struct sm_config *cfg, struct fabric *f,
			int32_t id, unsigned pn, uint8_t tab[SL2VL_BYTES])
{
	uint8_t vl[16];

	if (!routing_split_active(r)) {
		sl2vl_want(r->n_layers, op_vls_count(link_op_vls(cfg, f, id,
							(uint8_t)pn)), tab);
		return;
	}
	sl2vl_split_vls(r, cfg->max_op_vls, f, id, pn, vl);
	memset(tab, 0, SL2VL_BYTES);
	for (unsigned sl = 0; sl < 16; sl++)
		tab[sl / 2] |= (uint8_t)(sl % 2 ? vl[sl] : vl[sl] << 4);
}

bool sl_mapping(const struct fab_port *p)
{
	return p->valid && (be32toh(p->pi.cap_mask) & PI_CAP_SL_MAP);
}

/* The table of a per-hop VL map (routing_result.port_class): the VL of
 * each SL for input `in` and output `out` of node `id`. */
static void hop_want(const struct routing_result *r, int32_t id, unsigned in,
		     unsigned out, uint8_t tab[SL2VL_BYTES])
{
	memset(tab, 0, SL2VL_BYTES);
	for (unsigned sl = 0; sl < 16; sl++) {
		unsigned vl = routing_hop_vl(r, id, in, out, sl) & 0xf;

		tab[sl / 2] |= (uint8_t)(sl % 2 ? vl : vl << 4);
	}
}

int program_sl2vl(struct smp_batch *b, struct sl2vl_images *im,
		  const struct sm_config *cfg, struct fabric *f, int32_t id,
		  const struct routing_result *r, unsigned *sets)
{
	struct fab_node *n = fabric_node(f, id);
	uint8_t want[SL2VL_BYTES];
	int queued = 0, rc;

	if (r->n_layers <= 1)
		return 0;
	if (n->type != NODE_TYPE_SWITCH) {
		/* A CA or router port's one table: what it sends on. */
		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (p->peer_node == FAB_NONE || !sl_mapping(p))
				continue;
			layers_want(r, cfg, f, id, pn, want);
			if (r->port_class)
				hop_want(r, id, 0, pn, want);
			if ((rc = sl2vl_one(b, im, f, id, 0, pn, want, sets)) < 0)
				return rc;
			queued += rc;
		}
		return queued;
	}
	/* A switch: one table per input and output port (its own port 0
	 * as an input: the SM's and the switch's own traffic), for every
	 * linked output, whose OperationalVLs bound the VLs (14.2.5.8).
	 * The switch's port 0 says whether it maps SLs at all. */
	if (!sl_mapping(&n->ports[0]))
		return 0;
	for (unsigned out = 1; out <= n->num_ports; out++) {
		const struct fab_port *po = &n->ports[out];

		if (!po->valid || po->peer_node == FAB_NONE)
			continue;
		layers_want(r, cfg, f, id, out, want);
		for (unsigned in = 0; in <= n->num_ports; in++) {
			const struct fab_port *pi = &n->ports[in];

			if (in && (!pi->valid || pi->peer_node == FAB_NONE))
				continue;
			if (r->port_class)
				hop_want(r, id, in, out, want);
			if ((rc = sl2vl_one(b, im, f, id, in, out, want, sets)) < 0)
				return rc;
			queued += rc;
		}
	}
	return queued;
}
