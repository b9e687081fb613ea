/*
 * sm/program/lft.c - the linear forwarding table images of the switches
 * and the Sets that bring a switch to its routes (see sm/program.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sm/program/internal.h"

struct lft_image {
	uint64_t guid;
	uint16_t top;
	uint16_t cap;			/* entries allocated */
	uint8_t *port;
	uint8_t *known;			/* per 64-entry block: written by us */
};

struct lft_images {
	struct lft_image *v;		/* one per switch ever seen */
	size_t n, cap;
	struct guidmap map;		/* switch GUID -> index in v */
};

struct lft_images *lft_images_new(void)
{
	return calloc(1, sizeof(struct lft_images));
}

static void image_clear(struct lft_image *img)
{
	free(img->port);
	free(img->known);
	memset(img, 0, sizeof(*img));
}

void lft_images_free(struct lft_images *im)
{
	if (!im)
		return;
	for (size_t i = 0; i < im->n; i++)
		image_clear(&im->v[i]);
	free(im->v);
	guidmap_free(&im->map);
	free(im);
}

static struct lft_image *image_find(const struct lft_images *im, uint64_t guid)
{
	uint32_t i = guidmap_find(&im->map, guid);

	return i == GUIDMAP_NONE ? NULL : &im->v[i];
}

static struct lft_image *image_get(struct lft_images *im, uint64_t guid)
{
	struct lft_image *img = image_find(im, guid);

	if (img)
		return img;
	if (im->n == im->cap) {
		size_t cap = im->cap ? im->cap * 2 : 32;
		struct lft_image *v = realloc(im->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		im->v = v;
		im->cap = cap;
	}
	if (guidmap_insert(&im->map, guid, (uint32_t)im->n) < 0)
		return NULL;
	img = &im->v[im->n++];
	memset(img, 0, sizeof(*img));
	img->guid = guid;
	return img;
}

void lft_images_forget(struct lft_images *im, uint64_t guid)
{
	struct lft_image *img = image_find(im, guid);

	/* Keep the slot (tombstone-free table): just mark nothing known. */
	if (img) {
		free(img->port);
		free(img->known);
		img->port = img->known = NULL;
		img->top = img->cap = 0;
	}
}

int lft_images_top(const struct lft_images *im, uint64_t guid)
{
	const struct lft_image *img = image_find(im, guid);

	return img && img->port ? img->top : -1;
}

/* Make room for LIDs 0..top in the image (new entries unknown). */
static int image_reserve(struct lft_image *img, unsigned top)
{
	unsigned cap = (top / 64 + 1) * 64;

	if (cap <= img->cap)
		return 0;
	uint8_t *port = realloc(img->port, cap);
	uint8_t *known = realloc(img->known, cap / 64);
	if (port)
		img->port = port;
	if (known)
		img->known = known;
	if (!port || !known)
		return -ENOMEM;
	memset(img->port + img->cap, LFT_NO_PATH, cap - img->cap);
	memset(img->known + img->cap / 64, 0, (cap - img->cap) / 64);
	img->cap = (uint16_t)(cap > 0xffff ? 0xffff : cap);
	return 0;
}

struct block_ctx {
	struct lft_image *img;	/* stable: images move only on insert */
	struct lft_images *im;
	uint64_t guid;
	unsigned block;
	uint8_t ports[64];
	struct fab_node *node;	/* SwitchInfo Set: the model's node */
};

static void on_block_set(struct smp_batch *b, int32_t node, uint8_t port,
			 const uint8_t *data, void *arg)
{
	struct block_ctx *c = arg;
	struct lft_image *img = image_find(c->im, c->guid);

	/* Record only what the switch confirmed it now holds; a Set without
	 * an answer may or may not have been applied. */
	if (img && img->port && c->block < img->cap / 64u) {
		if (data)
			memcpy(img->port + c->block * 64, data, 64);
		img->known[c->block] = data != NULL;
	}
	free(c);
}

static void on_switch_info_set(struct smp_batch *b, int32_t node, uint8_t port,
			       const uint8_t *data, void *arg)
{
	struct block_ctx *c = arg;
	struct lft_image *img = image_find(c->im, c->guid);

	if (data && img) {
		const struct smp_switch_info *si = (const void *)data;
		img->top = be16toh(si->lft_top);
	}
	/* The model holds the SwitchInfo as it now is (LinearFDBTop for the
	 * SA, and for a model the next sweep starts from: sm/quick.c). */
	if (data && c->node && c->node->guid == c->guid)
		memcpy(&c->node->si, data, sizeof(c->node->si));
	free(c);
}

int program_switch(struct smp_batch *b, struct lft_images *im,
		   const struct sm_config *cfg, struct fabric *f, int32_t id,
		   const struct lft *lft)
{
	struct fab_node *n = fabric_node(f, id);
	struct lft_image *img;
	int queued = 0, rc;

	if (!lft->port || !n->has_switch_info)
		return 0;
	uint16_t cap = be16toh(n->si.lft_cap);
	unsigned top = lft->top;
	if (cap && top >= cap)
		top = cap - 1u;
	img = image_get(im, n->guid);
	if (!img || image_reserve(img, top) < 0)
		return -ENOMEM;
	/* The switch's top disagrees with what we set: someone else (or a
	 * reset) changed it, so trust nothing we remember. */
	if (img->top != be16toh(n->si.lft_top))
		memset(img->known, 0, img->cap / 64u);

	for (unsigned blk = 0; blk <= top / 64; blk++) {
		uint8_t want[64];

		for (unsigned i = 0; i < 64; i++) {
			unsigned lid = blk * 64 + i;
			want[i] = lid <= lft->top ? lft->port[lid] : LFT_NO_PATH;
		}
		if (img->known[blk] && !memcmp(img->port + blk * 64, want, 64))
			continue;
		struct block_ctx *c = malloc(sizeof(*c));
		if (!c)
			return -ENOMEM;
		*c = (struct block_ctx){ .img = img, .im = im, .guid = n->guid,
					 .block = blk };
		rc = batch_smp(b, MAD_METHOD_SET, n->path, n->hops, SMP_ATTR_LFT,
			       blk, want, 64, id, 0, on_block_set, c);
		if (rc < 0) {
			free(c);
			return rc;
		}
		queued++;
	}

	struct smp_switch_info si = n->si;
	si.lft_top = htobe16((uint16_t)top);
	/* LifeTimeValue:5, PortStateChange:1 (0: left alone; the discovery
	 * clears it before reading the ports), OSL2VL:2 */
	si.life_psc_osl = (uint8_t)((cfg->packet_life_time & 0x1f) << 3 |
				    (si.life_psc_osl & 3));
	if (be16toh(n->si.lft_top) != top ||
	    smp_switch_info_life(&n->si) != (cfg->packet_life_time & 0x1fu)) {
		struct block_ctx *c = malloc(sizeof(*c));
		if (!c)
			return -ENOMEM;
		*c = (struct block_ctx){ .img = img, .im = im, .guid = n->guid,
					 .node = n };
		rc = batch_smp(b, MAD_METHOD_SET, n->path, n->hops,
			       SMP_ATTR_SWITCH_INFO, 0, &si, sizeof(si), id, 0,
			       on_switch_info_set, c);
		if (rc < 0) {
			free(c);
			return rc;
		}
		queued++;
	} else {
		img->top = (uint16_t)top;
	}
	return queued;
}
