/*
 * program.c - batches of SMP Sets, forwarding-table images and the
 * desired PortInfo of a port (see program.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sm/program.h"

/* ------------------------------------------------------------ batches */

struct batch_item {
	struct smp_batch *b;
	batch_item_cb cb;
	void *cb_arg;
	int32_t node;
	uint8_t port;
	uint8_t rounds;		/* times the engine gave up on it */
	bool    readback;	/* now a Get checking a refused PortInfo Set */
	bool by_lid;		/* last submitted LID-routed */
	uint16_t lid;		/* the node's LID (destination window) */
	struct smp_dr smp;	/* kept to submit again */
	uint8_t set_data[SMP_DATA_SIZE];	/* the Set's, while readback */
};

/* Rounds of retries a Set gets before it counts as failed (as for the
 * discovery's queries: cheaper than a whole new sweep). */
#define ITEM_ROUNDS	3

void batch_init(struct smp_batch *b, struct mad_engine *e, batch_done_cb done,
		void *arg)
{
	memset(b, 0, sizeof(*b));
	b->engine = e;
	b->done = done;
	b->arg = arg;
}

static void batch_pump(struct smp_batch *b)
{
	if (b->running)
		return;
	b->running = true;
	while (!b->sealed && b->pending < BATCH_DEPTH)
		if (!b->more(b, b->arg))
			b->sealed = true;
	b->running = false;
	if (b->sealed && !b->pending && b->done) {
		batch_done_cb done = b->done;

		b->done = NULL;		/* exactly once */
		done(b, b->arg);
	}
}

/*
 * A PortInfo Set answered "invalid field" may be the second attempt of a
 * Set whose first attempt did its work and lost its answer: the port is
 * ARMED already, and ARMED -> ARMED is not a valid transition (IB spec
 * 14.2.5.6), so the repeat is refused.  Read the port back; if it holds
 * what the Set asked for (its state at or past the one asked), the Set
 * is done and the read is its answer.
 */
static bool portinfo_as_set(const uint8_t *set_data, const uint8_t *got_data)
{
	struct smp_port_info want, got;

	memcpy(&want, set_data, sizeof(want));
	memcpy(&got, got_data, sizeof(got));
	/* What a refused repeat is about: the state, and the addresses the
	 * same Set carried (fields a port does not store are left to the
	 * next sweep's comparison, as after any Set). */
	if (want.lid != got.lid || want.master_sm_lid != got.master_sm_lid ||
	    pi_lmc(&want) != pi_lmc(&got))
		return false;
	unsigned ws = pi_port_state(&want), gs = pi_port_state(&got);

	return ws == PORT_STATE_NOP || gs == ws ||
	       (ws == PORT_STATE_ARMED && gs == PORT_STATE_ACTIVE);
}

static void on_item(void *arg, int status, const void *mad, size_t len);

static bool start_readback(struct batch_item *it, const struct smp_dr *ans)
{
	if (it->readback || it->smp.hdr.method != MAD_METHOD_SET ||
	    be16toh(it->smp.hdr.attr_id) != SMP_ATTR_PORT_INFO ||
	    (be16toh(ans->hdr.status) & 0x7fff) != MAD_STATUS_INVALID_FIELD)
		return false;
	memcpy(it->set_data, it->smp.data, SMP_DATA_SIZE);
	it->readback = true;
	it->smp.hdr.method = MAD_METHOD_GET;
	memset(it->smp.data, 0, SMP_DATA_SIZE);
	return mad_engine_submit_smp(it->b->engine, &it->smp, it->lid,
				     it->by_lid, on_item, it) == 0;
}

static void on_item(void *arg, int status, const void *mad, size_t len)
{
	struct batch_item *it = arg;
	struct smp_batch *b = it->b;
	const struct smp_dr *smp = mad;
	const uint8_t *data = NULL;

	/* A LID-routed Set lost (the engine fell back to directed route,
	 * or nothing answered at all): directed route for this node from
	 * now on, until the next completed sweep. */
	if (it->by_lid && (status < 0 || (mad && len == MAD_SIZE &&
			   smp->hdr.mgmt_class == MAD_CLASS_SMI_DR))) {
		b->lidf->nodes[it->node].smp_lid_failed = true;
		b->lid_fallbacks++;
		it->by_lid = false;
	}
	if (status == -ETIMEDOUT && ++it->rounds < ITEM_ROUNDS) {
		if (mad_engine_submit_smp(b->engine, &it->smp, it->lid, false,
					  on_item, it) == 0)
			return;
	}
	if (status == 0 && mad && len == MAD_SIZE && start_readback(it, smp))
		return;
	b->pending--;
	if (status == 0 && mad && len == MAD_SIZE &&
	    !(be16toh(smp->hdr.status) & 0x7fff) &&
	    (!it->readback || portinfo_as_set(it->set_data, smp->data))) {
		data = smp->data;
		if (it->readback)
			b->readbacks++;
	}
	else {
		b->failed++;
		b->unacked++;
		if (b->on_fail)
			b->on_fail(b, it->node, it->port,
				   be16toh(it->smp.hdr.attr_id), b->arg);
	}
	if (it->cb)
		it->cb(b, it->node, it->port, data, it->cb_arg);
	free(it);
	batch_pump(b);
}

int batch_smp(struct smp_batch *b, uint8_t method, const uint8_t *path,
	      unsigned hops, uint16_t attr, uint32_t mod, const void *data,
	      size_t len, int32_t node, uint8_t port, batch_item_cb cb,
	      void *cb_arg)
{
	struct batch_item *it;
	int rc;

	if (len > SMP_DATA_SIZE)
		return -EINVAL;
	it = malloc(sizeof(*it));
	if (!it)
		return -ENOMEM;
	it->b = b;
	it->cb = cb;
	it->cb_arg = cb_arg;
	it->node = node;
	it->port = port;
	it->rounds = 0;
	it->readback = false;
	it->by_lid = false;
	it->lid = 0;
	/* LID-routed where the sweep says the node's LID and routes are in
	 * place (fab_node.smp_lid, sm/sweep.c), else directed route. */
	if (b->lidf && node >= 0 && (size_t)node < b->lidf->n_nodes) {
		const struct fab_node *n = &b->lidf->nodes[node];

		/* both forms share the LID's destination window; a node
		 * never LID-routed keeps its path's, as in the discovery */
		it->lid = n->smp_lid;
		/* A CA's SMP acts on the port it arrives at (its P_Key
		 * table, its PortInfo): LID-routed only for the port that
		 * holds the LID, a second port's by its own directed route */
		it->by_lid = n->smp_lid && !n->smp_lid_failed &&
			     (n->type == NODE_TYPE_SWITCH ||
			      (port >= 1 && port <= n->num_ports &&
			       n->ports[port].lid == n->smp_lid));
	}
	mad_build_smp_dr(&it->smp, method, attr, mod, path, hops);
	if (data)
		memcpy(it->smp.data, data, len);
	rc = mad_engine_submit_smp(b->engine, &it->smp, it->lid, it->by_lid,
				   on_item, it);
	if (rc < 0) {
		free(it);
		return rc;
	}
	b->pending++;
	b->sent++;
	b->lid_sent += it->by_lid;
	return 0;
}

void batch_run(struct smp_batch *b, batch_more_cb more)
{
	b->more = more;
	batch_pump(b);
}

/* --------------------------------------------------------- LFT images */

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

/* ------------------------------------------------------- port config */

void port_path(const struct fabric *f, int32_t id, uint8_t pn,
	       const uint8_t **path, unsigned *hops)
{
	const struct fab_node *n = fabric_node(f, id);
	const struct fab_port *p = &n->ports[pn];

	if (n->type != NODE_TYPE_SWITCH && pn && (p->hops || p->guid)) {
		*path = p->path;
		*hops = p->hops;
	} else {
		*path = n->path;
		*hops = n->hops;
	}
}

/*
 * PortInfo:PartitionEnforcementInbound (0x8) and Outbound (0x4) of byte
 * 43 (14.2.5.6) as opensm.conf part_enforce sets them on a switch port
 * facing an end port with partitions: both, in, out, or neither.  The
 * switch then drops packets whose P_Key that port's table lacks
 * (10.9.3).  Without partitions (no want_pkeys) the bits are left as
 * they are: nothing changes on the wire.  A port without a table
 * (PartitionEnforcementCap 0) gets none: see port_desired().
 */
static unsigned pi_part_enforce_bits(enum sm_part_enforce e)
{
	switch (e) {
	case SM_PART_ENFORCE_BOTH:
		return PI_PART_ENFORCE_IN | PI_PART_ENFORCE_OUT;
	case SM_PART_ENFORCE_IN:
		return PI_PART_ENFORCE_IN;
	case SM_PART_ENFORCE_OUT:
		return PI_PART_ENFORCE_OUT;
	case SM_PART_ENFORCE_OFF:
		break;
	}
	return 0;
}

static unsigned min3(unsigned a, unsigned b, unsigned c)
{
	unsigned m = a < b ? a : b;
	return m < c ? m : c;
}

/*
 * PortInfo:OperationalVLs (its encoding: 1 VL0, 2 VL0-1, 3 VL0-3, 4 VL0-7,
 * 5 VL0-14) a linked port `pn` should run: the least VLCap of both ends,
 * at most max_op_vls.  0 when the port's VLCap is 0 (unknown).
 */
static unsigned link_op_vls(const struct sm_config *cfg, const struct fabric *f,
			    int32_t id, uint8_t pn)
{
	const struct fab_port *p = &fabric_node(f, id)->ports[pn];
	unsigned vls = pi_vl_cap(&p->pi);

	if (p->peer_node != FAB_NONE) {
		const struct fab_port *pp =
			&fabric_node(f, p->peer_node)->ports[p->peer_port];

		if (pp->valid)
			return min3(vls, pi_vl_cap(&pp->pi), cfg->max_op_vls);
	}
	return vls < cfg->max_op_vls ? vls : cfg->max_op_vls;
}

bool port_desired(const struct sm_config *cfg, const struct fabric *f,
		  int32_t id, uint8_t pn, uint16_t sm_lid, unsigned want_state,
		  bool rereg, struct smp_port_info *out)
{
	const struct fab_node *n = fabric_node(f, id);
	const struct fab_port *p = &n->ports[pn];
	const struct smp_port_info *cur = &p->pi;
	bool endport = n->type != NODE_TYPE_SWITCH || pn == 0;
	bool differs = false;

	*out = *cur;
	/* Fields whose zero means "no change" on a Set. */
	pi_set_port_state(out, want_state);
	pi_set_phys_state(out, 0);
	out->phys_state_down_def &= 0xf0;
	pi_set_client_rereg(out, 0);

	if (endport) {
		out->mkey = 0;
		out->gid_prefix = htobe64(cfg->subnet_prefix);
		out->lid = htobe16(p->lid);
		out->master_sm_lid = htobe16(sm_lid);
		out->mkey_lease_period = 0;
		out->mkey_prot_lmc = 0;
		pi_set_lmc(out, p->lmc);
		out->neighbor_mtu_sm_sl &= 0xf0;	/* MasterSMSL 0 */
		pi_set_subnet_timeout(out, cfg->subnet_timeout);
		if (rereg && n->type != NODE_TYPE_SWITCH) {
			pi_set_client_rereg(out, 1);
			differs = true;
		}
		differs |= cur->mkey != out->mkey ||
			   cur->gid_prefix != out->gid_prefix ||
			   cur->lid != out->lid ||
			   cur->master_sm_lid != out->master_sm_lid ||
			   pi_lmc(cur) != p->lmc ||
			   pi_sm_sl(cur) != 0 ||
			   pi_subnet_timeout(cur) != cfg->subnet_timeout;
	}
	if (pn && p->peer_node != FAB_NONE) {
		const struct fab_node *peer = fabric_node(f, p->peer_node);
		const struct fab_port *pp = &peer->ports[p->peer_port];
		unsigned mtu = pi_mtu_cap(cur), vls = link_op_vls(cfg, f, id, pn);

		if (pp->valid && pi_mtu_cap(&pp->pi) < mtu)
			mtu = pi_mtu_cap(&pp->pi);
		if (mtu && mtu != pi_neighbor_mtu(cur)) {
			pi_set_neighbor_mtu(out, mtu);
			differs = true;
		}
		if (vls && vls != pi_op_vls(cur)) {
			pi_set_op_vls(out, vls);
			differs = true;
		}
		/* Enable every width and speed the port supports (OpenSM's
		 * force_link_width 255 / force_link_speed 15 defaults): 0xff
		 * and 15 mean "set to LinkWidth/SpeedSupported".  Only while
		 * the link is being brought up: on an ACTIVE link a new
		 * enable set makes the port retrain, a flap for no gain. */
		bool bringing_up = pi_port_state(cur) == PORT_STATE_INIT;
		if (bringing_up &&
		    cur->link_width_enabled != cur->link_width_supported) {
			out->link_width_enabled = 0xff;
			differs = true;
		}
		if (bringing_up &&
		    pi_speed_enabled(cur) != pi_speed_supported(cur)) {
			out->speed_active_enabled = (uint8_t)
				((cur->speed_active_enabled & 0xf0) | 0xf);
			differs = true;
		}
		if (n->type == NODE_TYPE_SWITCH &&
		    peer->type != NODE_TYPE_SWITCH &&
		    (pp->want_pkeys || p->want_pkeys)) {
			/* A switch whose SwitchInfo:PartitionEnforcementCap
			 * is 0 has no table on its external ports: nothing to
			 * enforce with, so no bits (bits someone else set
			 * there are cleared).  OpenSM 3.3.23 skips such a
			 * port and leaves its bits as they are. */
			bool table = n->has_switch_info &&
				     n->si.partition_enf_cap && p->pkey_blocks;
			unsigned bits = table ?
				pi_part_enforce_bits(cfg->part_enforce) : 0;

			if ((cur->op_vls_enforce & PI_PART_ENFORCE_MASK) != bits) {
				out->op_vls_enforce = (uint8_t)
					((out->op_vls_enforce & ~PI_PART_ENFORCE_MASK) |
					 bits);
				differs = true;
			}
		}
		if (n->type == NODE_TYPE_SWITCH) {
			unsigned hoq = peer->type == NODE_TYPE_SWITCH
				       ? cfg->head_of_queue_lifetime
				       : cfg->leaf_head_of_queue_lifetime;
			if ((cur->vl_stall_hoq_life & 0x1f) != (hoq & 0x1f)) {
				out->vl_stall_hoq_life = (uint8_t)
					((cur->vl_stall_hoq_life & 0xe0) | (hoq & 0x1f));
				differs = true;
			}
		}
	}
	if (want_state != PORT_STATE_NOP && want_state != pi_port_state(cur))
		differs = true;
	return differs;
}

/* ------------------------------------------------------------- memos */

void pi_key_of(const struct smp_port_info *pi, struct pi_key *k)
{
	memset(k, 0, sizeof(*k));
	k->prefix = pi->gid_prefix;
	k->mkey = pi->mkey;
	k->lid = pi->lid;
	k->sm_lid = pi->master_sm_lid;
	k->lmc = (uint8_t)pi_lmc(pi);
	k->sm_sl = (uint8_t)pi_sm_sl(pi);
	k->timeout = (uint8_t)pi_subnet_timeout(pi);
	k->mtu = (uint8_t)pi_neighbor_mtu(pi);
	k->vls = (uint8_t)pi_op_vls(pi);
	k->hoq = pi->vl_stall_hoq_life & 0x1f;
	k->enforce = pi->op_vls_enforce & PI_PART_ENFORCE_MASK;
}

struct port_memo {
	uint64_t guid;			/* node GUID; 0 = empty */
	uint8_t  pn;
	struct pi_key want, got;
};

struct port_memos {
	struct port_memo *slot;
	size_t size, used;
};

struct port_memos *port_memos_new(void)
{
	return calloc(1, sizeof(struct port_memos));
}

void port_memos_free(struct port_memos *m)
{
	if (m)
		free(m->slot);
	free(m);
}

static size_t memo_slot(uint64_t guid, uint8_t pn, size_t size)
{
	return guid_hash(guid * 257 + pn) & (size - 1);
}

static struct port_memo *memo_find(const struct port_memos *m, uint64_t guid,
				   uint8_t pn)
{
	if (!m->size)
		return NULL;
	for (size_t i = memo_slot(guid, pn, m->size);; i = (i + 1) & (m->size - 1)) {
		struct port_memo *s = &m->slot[i];

		if (!s->guid)
			return NULL;
		if (s->guid == guid && s->pn == pn)
			return s;
	}
}

static int memo_grow(struct port_memos *m)
{
	size_t size = m->size ? m->size * 2 : 256;
	struct port_memo *slot = calloc(size, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < m->size; i++) {
		struct port_memo *s = &m->slot[i];

		if (!s->guid)
			continue;
		size_t j = memo_slot(s->guid, s->pn, size);
		while (slot[j].guid)
			j = (j + 1) & (size - 1);
		slot[j] = *s;
	}
	free(m->slot);
	m->slot = slot;
	m->size = size;
	return 0;
}

void port_memos_record(struct port_memos *m, uint64_t guid, uint8_t pn,
		       const struct pi_key *want, const struct pi_key *got)
{
	struct port_memo *s = memo_find(m, guid, pn);

	if (!s) {
		/* Filled up to 3/4: 80 bytes a slot, one per port (70,000
		 * ports on an 11,664-host fabric: 10 MB, not 21). */
		if ((m->used + 1) * 4 > m->size * 3 && memo_grow(m) < 0)
			return;		/* no memo: the port is just re-sent */
		size_t i = memo_slot(guid, pn, m->size);
		while (m->slot[i].guid)
			i = (i + 1) & (m->size - 1);
		s = &m->slot[i];
		s->guid = guid;
		s->pn = pn;
		m->used++;
	}
	s->want = *want;
	s->got = *got;
}

bool port_memos_settled(const struct port_memos *m, uint64_t guid, uint8_t pn,
			const struct pi_key *want, const struct pi_key *now)
{
	const struct port_memo *s = memo_find(m, guid, pn);

	return s && !memcmp(&s->want, want, sizeof(*want)) &&
	       !memcmp(&s->got, now, sizeof(*now));
}

/* ---------------------------------------------------------- P_Keys */

/*
 * The default partition as OpenSM 3.3.23 programs it with no
 * partitions.conf: P_Key 0xFFFF (full member of the default partition,
 * 10.9.1.2) in every managed table and nothing else.  OpenSM keeps a key
 * at the index it already has (a limited 0x7FFF becomes 0xFFFF in place)
 * and clears every entry that is in no partition; a key it adds goes to
 * the first free index, 0 once the rest is cleared.
 */
static unsigned pkey_default_index(const struct fab_port *p)
{
	for (unsigned i = 0; i < (unsigned)p->pkey_blocks * PKEY_BLOCK_SIZE; i++)
		if ((be16toh(p->pkeys[i]) & 0x7fff) == 0x7fff)
			return i;
	return 0;
}

/*
 * Which table port `pn` should hold: its own default (CA and router
 * ports, switch port 0), or the table of the CA behind it (a switch port
 * facing an end node: OpenSM copies the end port's table there so the
 * switch can enforce it).  Returns the index of 0xFFFF or -1 when the
 * SM leaves the table alone (switch-to-switch links, unknown tables).
 */
static int pkey_want_index(const struct fabric *f, int32_t id, unsigned pn)
{
	const struct fab_node *n = fabric_node(f, id);
	const struct fab_port *p = &n->ports[pn];

	if (!fabric_pkey_known(p))
		return -1;
	if (n->type != NODE_TYPE_SWITCH || pn == 0)
		return (int)pkey_default_index(p);
	if (p->peer_node == FAB_NONE)
		return -1;
	const struct fab_node *peer = fabric_node(f, p->peer_node);
	const struct fab_port *pp = &peer->ports[p->peer_port];
	if (peer->type == NODE_TYPE_SWITCH || !fabric_pkey_known(pp))
		return -1;
	return (int)pkey_default_index(pp);
}

struct pkey_ctx {
	struct fabric *f;
	uint16_t block;
};

static void on_pkey_set(struct smp_batch *b, int32_t node, uint8_t port,
			const uint8_t *data, void *arg)
{
	struct pkey_ctx *c = arg;
	struct fab_port *p = &fabric_node(c->f, node)->ports[port];

	/* The answer carries the table as the port now holds it. */
	if (data && p->pkeys && c->block < p->pkey_blocks)
		memcpy(p->pkeys + (size_t)c->block * PKEY_BLOCK_SIZE, data,
		       PKEY_BLOCK_SIZE * sizeof(*p->pkeys));
	free(c);
}

/*
 * Block `blk` of the table port `p` should hold: the partitions' table
 * (want_pkeys, entries past n_want_pkeys empty) when the model has one,
 * else the default partition's 0xFFFF at index `at`.
 */
static void pkey_want_block(const struct fab_port *p, int at, unsigned blk,
			    __be16 want[PKEY_BLOCK_SIZE])
{
	memset(want, 0, PKEY_BLOCK_SIZE * sizeof(*want));
	if (p->want_pkeys) {
		for (unsigned i = 0; i < PKEY_BLOCK_SIZE; i++) {
			unsigned idx = blk * PKEY_BLOCK_SIZE + i;

			if (idx < p->n_want_pkeys)
				want[i] = htobe16(p->want_pkeys[idx]);
		}
	} else if (at >= 0 && (unsigned)at / PKEY_BLOCK_SIZE == blk) {
		want[at % PKEY_BLOCK_SIZE] = htobe16(0xffff);
	}
}

/*
 * Does the SM manage the table of port `pn`, and from what: the
 * partitions' table (want_pkeys, *at = -1), or without partitions the
 * default partition's 0xFFFF at index *at.
 */
static bool pkey_managed(const struct fabric *f, int32_t id, unsigned pn,
			 int *at)
{
	const struct fab_port *p = &fabric_node(f, id)->ports[pn];

	*at = -1;
	if (p->want_pkeys) {
		/* The partitions say what the table holds.  A table the
		 * discovery could not read entirely is written whole: we
		 * cannot tell which blocks already hold the keys.  Entries
		 * beyond the port's own size (pkey_blocks) are never sent:
		 * the resolution sizes the table, this is the last guard. */
		return p->pkey_blocks != 0;
	}
	*at = pkey_want_index(f, id, pn);
	if (*at < 0)
		return false;
	if ((unsigned)*at >= (unsigned)p->pkey_blocks * PKEY_BLOCK_SIZE)
		*at = 0;	/* the CA's index does not fit this table */
	return true;
}

bool program_pkey_block(const struct fabric *f, int32_t id, unsigned pn,
			unsigned blk, __be16 want[PKEY_BLOCK_SIZE])
{
	const struct fab_port *p = &fabric_node(f, id)->ports[pn];
	int at;

	if (!pkey_managed(f, id, pn, &at) || blk >= p->pkey_blocks)
		return false;
	pkey_want_block(p, at, blk, want);
	return true;
}

int program_pkeys(struct smp_batch *b, struct fabric *f, int32_t id,
		  unsigned pn)
{
	struct fab_node *n = fabric_node(f, id);
	struct fab_port *p = &n->ports[pn];
	bool known = fabric_pkey_known(p);
	int at;
	const uint8_t *path;
	unsigned hops;
	int queued = 0;

	if (!pkey_managed(f, id, pn, &at))
		return 0;
	port_path(f, id, (uint8_t)pn, &path, &hops);
	for (unsigned blk = 0; blk < p->pkey_blocks; blk++) {
		__be16 want[PKEY_BLOCK_SIZE];

		pkey_want_block(p, at, blk, want);
		if (known && !memcmp(want, p->pkeys + (size_t)blk * PKEY_BLOCK_SIZE,
				     sizeof(want)))
			continue;
		struct pkey_ctx *c = malloc(sizeof(*c));
		if (!c)
			return -ENOMEM;
		*c = (struct pkey_ctx){ .f = f, .block = (uint16_t)blk };
		uint32_t mod = n->type == NODE_TYPE_SWITCH
			       ? (uint32_t)pn << 16 | blk : blk;
		int rc = batch_smp(b, MAD_METHOD_SET, path, hops,
				   SMP_ATTR_PKEY_TABLE, mod, want, sizeof(want),
				   id, (uint8_t)pn, on_pkey_set, c);
		if (rc < 0) {
			free(c);
			return rc;
		}
		queued++;
	}
	return queued;
}

/* ------------------------------------------------- SL to VL tables */

/*
 * What each SLtoVLMappingTable holds as far as we know: the table a Set
 * answer carried, per (node GUID, input port, output port).  A table we
 * know nothing of, or know to differ, is Set; one known to match is not.
 * An unanswered Set leaves it unknown.
 */
struct sl2vl_image {
	uint64_t guid;			/* 0 = empty slot */
	uint8_t  in, out;
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

static size_t sl2vl_slot(uint64_t guid, unsigned in, unsigned out, size_t size)
{
	return guid_hash(guid * 65537 + in * 257 + out) & (size - 1);
}

static struct sl2vl_image *sl2vl_find(const struct sl2vl_images *im,
				      uint64_t guid, unsigned in, unsigned out)
{
	if (!im->size)
		return NULL;
	for (size_t i = sl2vl_slot(guid, in, out, im->size);;
	     i = (i + 1) & (im->size - 1)) {
		struct sl2vl_image *s = &im->slot[i];

		if (!s->guid)
			return NULL;
		if (s->guid == guid && s->in == in && s->out == out)
			return s;
	}
}

static struct sl2vl_image *sl2vl_img_get(struct sl2vl_images *im, uint64_t guid,
				     unsigned in, unsigned out)
{
	struct sl2vl_image *s = sl2vl_find(im, guid, in, out);

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
			size_t j = sl2vl_slot(o->guid, o->in, o->out, size);
			while (slot[j].guid)
				j = (j + 1) & (size - 1);
			slot[j] = *o;
		}
		free(im->slot);
		im->slot = slot;
		im->size = size;
	}
	size_t i = sl2vl_slot(guid, in, out, im->size);
	while (im->slot[i].guid)
		i = (i + 1) & (im->size - 1);
	s = &im->slot[i];
	memset(s, 0, sizeof(*s));
	s->guid = guid;
	s->in = (uint8_t)in;
	s->out = (uint8_t)out;
	im->used++;
	return s;
}

void sl2vl_images_forget(struct sl2vl_images *im, uint64_t guid,
			 unsigned max_port)
{
	/* Probe the node's pairs: a scan of the whole table per node was
	 * quadratic (16,000 new nodes: 55% of a bring-up's CPU). */
	for (unsigned in = 0; im && im->used && in <= max_port; in++)
		for (unsigned out = 0; out <= max_port; out++) {
			struct sl2vl_image *s = sl2vl_find(im, guid, in, out);

			if (s)
				s->known = false;
		}
}

bool sl2vl_image_lookup(const struct sl2vl_images *im, uint64_t guid,
			unsigned in, unsigned out, uint8_t tab[SL2VL_BYTES])
{
	const struct sl2vl_image *s = im ? sl2vl_find(im, guid, in, out) : NULL;

	if (!s || !s->known)
		return false;
	memcpy(tab, s->tab, SL2VL_BYTES);
	return true;
}

/* Data VLs of an OperationalVLs encoding (14.2.5.6): 1, 2, 4, 8 or 15. */
static unsigned op_vls_count(unsigned enc)
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
	uint8_t in, out;
	uint32_t mod;
	const uint8_t *path;		/* the node's or CA port's DR path */
	unsigned hops;
	uint8_t want[SL2VL_BYTES];
};


static void on_sl2vl(struct smp_batch *b, int32_t node, uint8_t port,
		     const uint8_t *data, void *arg)
{
	struct sl2vl_ctx *c = arg;
	struct sl2vl_image *img = sl2vl_img_get(c->im, c->guid, c->in, c->out);

	(void)b;
	(void)node;
	(void)port;
	/* The answer to a Set holds the table as the port now has it.  A
	 * lost Set counts as failed (the sweep's policy decides); the next
	 * sweep sends it again. */
	if (img) {
		img->known = data != NULL;
		if (data)
			memcpy(img->tab, data, SL2VL_BYTES);
	}
	free(c);
}

static int sl2vl_send(struct smp_batch *b, struct sl2vl_ctx *c, int32_t node,
		      uint8_t port)
{
	return batch_smp(b, MAD_METHOD_SET, c->path, c->hops,
			 SMP_ATTR_SL2VL_TABLE, c->mod, c->want, SL2VL_BYTES,
			 node, port, on_sl2vl, c);
}

/*
 * One table: nothing when the port is known to hold it, else a Set.  A
 * table not known yet is Set without reading it first: a Get costs the
 * same SMP, and on a fabric whose tables differ (every cold start: the
 * default maps SL i to VL i up to 14) reading first doubled the SMPs,
 * 1.1 million of the 1.57 million of a 1,000-switch bring-up.  Setting a
 * table to what it holds changes nothing on the port.
 */
static int sl2vl_one(struct smp_batch *b, struct sl2vl_images *im,
		     struct fabric *f, int32_t id, unsigned in, unsigned out,
		     const uint8_t want[SL2VL_BYTES], unsigned *sets)
{
	struct fab_node *n = fabric_node(f, id);
	bool sw = n->type == NODE_TYPE_SWITCH;
	struct sl2vl_image *img = sl2vl_img_get(im, n->guid, in, out);
	struct sl2vl_ctx *c;
	int rc;

	if (!img)
		return -ENOMEM;
	if (img->known && !memcmp(img->tab, want, SL2VL_BYTES))
		return 0;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = (struct sl2vl_ctx){ .im = im, .guid = n->guid, .in = (uint8_t)in,
				 .out = (uint8_t)out,
				 .mod = sw ? in << 8 | out : 0 };
	memcpy(c->want, want, SL2VL_BYTES);
	port_path(f, id, sw ? 0 : (uint8_t)out, &c->path, &c->hops);
	rc = sl2vl_send(b, c, id, sw ? 0 : (uint8_t)out);
	if (rc < 0) {
		free(c);
		return rc;
	}
	if (sets)
		++*sets;
	return 1;
}

static bool sl_mapping(const struct fab_port *p)
{
	return p->valid && (be32toh(p->pi.cap_mask) & PI_CAP_SL_MAP);
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
			sl2vl_want(r->n_layers, op_vls_count(
				   link_op_vls(cfg, f, id, (uint8_t)pn)), want);
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
		sl2vl_want(r->n_layers, op_vls_count(
			   link_op_vls(cfg, f, id, (uint8_t)out)), want);
		for (unsigned in = 0; in <= n->num_ports; in++) {
			const struct fab_port *pi = &n->ports[in];

			if (in && (!pi->valid || pi->peer_node == FAB_NONE))
				continue;
			if ((rc = sl2vl_one(b, im, f, id, in, out, want, sets)) < 0)
				return rc;
			queued += rc;
		}
	}
	return queued;
}
