/*
 * mft.c - MulticastForwardingTables (14.2.5.12): the trees of the groups
 * composed into each switch's MFT, and the blocks that differ sent.
 *
 * When: after every heavy sweep (mft_sweep_done(), the new model) and
 * once the SA's joins and leaves (mcast_changed()) pause for MFT_COALESCE,
 * or MFT_COALESCE_MAX after the first of them, so that a burst of joins
 * becomes one update, or one per MFT_COALESCE_MAX while it lasts.  A
 * heavy sweep in progress does the work itself when it ends; an update
 * asked for while Sets of the last one are out runs when they are
 * answered.
 *
 * What: a tree per MLID (groups that share an MLID share one tree over
 * all their members).  Each tree remembers a signature of its groups'
 * MGIDs and generations (mc_group.gen moves on every member change), so a
 * join or leave rebuilds the trees whose groups changed and no other; a
 * new model builds them all again, but a tree the topology change did not
 * touch (found intact by GUID, tree_carry()) is kept when it is as
 * shallow as the new build, so that only the trees the change touched
 * move and get MFT Sets.  Only the MFT blocks of the MLIDs whose
 * trees changed are compared on a join (every block on a new model).
 *
 * What the switches hold: an image per switch GUID, surviving sweeps,
 * of the PortMasks each switch confirmed (the answer to a Set carries the
 * block as the switch now holds it).  A switch we have not seen before is
 * taken to hold an empty table above its MulticastFDBTop (below it, when
 * it reports one, every block is written, cleared where no group is), so
 * it gets the blocks that have a bit set; a Set without an answer leaves its block unknown, and an unknown
 * block is sent again whatever it should hold.  A switch that leaves the
 * fabric loses its image (it may come back reset).  The model's
 * fab_node.mft mirrors the image, so the SA's
 * MulticastForwardingTableRecords show what the switches confirmed.
 *
 * MulticastFDBTop (SwitchInfo, 14.2.5.4) is set as OpenSM sets it, where
 * port 0's CapabilityMask has IsMulticastFDBTopSupported: the last MLID
 * of the highest block in use, 0xBFFF when none is.  A switch that does
 * not keep the value is not asked again for the same one.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "routing/mcast.h"
#include "sm/mcast/mcast.h"
#include "sm/mcast/mft.h"
#include "sm/program.h"
#include "sm/sm.h"
#include "sm/worker.h"

#define MLIDS		(MC_MLID_MAX - MC_MLID_MIN + 1)	/* 16383 */
#define MFT_BLOCK	32			/* MLIDs per MFT block */
#define MFT_BLOCKS	((MLIDS + MFT_BLOCK - 1) / MFT_BLOCK)	/* 512 */
#define MFT_POSITIONS	16			/* 16-port groups, 0..255 */
/* PortInfo:CapabilityMask IsMulticastFDBTopSupported (14.2.5.6) */
#define PI_CAP_MCAST_FDB_TOP	(1u << 30)
#define MFT_TOP_EMPTY	0xbfff

/* What one switch holds, as it confirmed. */
struct mft_image {
	uint64_t guid;			/* node GUID */
	uint16_t entries;		/* MLIDs covered (multiple of 32) */
	uint8_t  positions;
	bool     seen;			/* in the model being programmed */
	bool     fresh;			/* not programmed by us yet */
	__be16  *mask;			/* [mlid index * positions + pos] */
	uint8_t *unknown;		/* [block * positions + pos] */
	/* MulticastFDBTop: what we asked for and what the switch answered */
	bool     top_memo;
	uint16_t top_want, top_got;
};

struct mlid_tree {
	uint64_t sig;			/* of the groups it was built for */
	struct mcast_tree t;
	/*
	 * Node GUIDs of t.sw[] and of the root: on a new model the tree is
	 * found again by GUID (tree_carry()), since node ids change.
	 */
	uint64_t *guid;
	uint64_t root_guid;
};

/* An end port of the model, found by port GUID through mft_state.pm. */
struct pm_port {
	int32_t  node;
	uint8_t  port;
};

struct mft_state {
	struct sm *sm;
	ev_timer timer;
	bool     stopped;		/* shutting down: ignore callbacks */
	bool     busy;			/* Sets of an update are out */
	bool     again;			/* another update asked for meanwhile */
	bool     exit_after;		/* -o: break the loop when done */
	bool     rescan;		/* next update compares every block */
	unsigned retries;		/* updates in a row with lost Sets */
	/* Joins and leaves no update has started for yet: when the first
	 * and the last came (ev_time()); first_change 0: none. */
	ev_tstamp first_change, last_change;

	uint64_t model_gen;		/* sm->fabric.gen the trees are for */
	bool     carry;			/* trees are of an older model */
	struct mcast_ctx *ctx;
	struct guidmap pm;		/* port GUID -> index in pm_port */
	struct pm_port *pm_port;
	struct mlid_tree *trees[MLIDS];
	size_t   tree_hi;		/* trees[tree_hi ..] are all NULL */
	uint64_t sig[MLIDS];		/* scratch: this update's signatures */
	uint32_t off[MLIDS + 1];	/* scratch: members per MLID */
	uint8_t  dirty[MFT_BLOCKS];	/* blocks to compare in this update */
	bool     all_blocks;
	/*
	 * Not all_blocks: mark[node id] == stamp for the switches on a tree
	 * of an MLID of a dirty block.  The others hold nothing there now,
	 * so only their images are looked at (a join's update then costs
	 * the few switches of its trees, not 32 tree look-ups per dirty
	 * block on every switch).
	 */
	uint32_t *mark;
	size_t   mark_len;
	uint32_t stamp;
	uint16_t want_entries;		/* MLIDs covered by trees, rounded up */

	struct mft_image *img;		/* one per switch, dense */
	size_t   img_n, img_cap;
	struct guidmap img_map;		/* node GUID -> index in img */

	struct smp_batch batch;
	size_t   cursor;		/* next node id for the producer */
	ev_tstamp t0;
	unsigned sets0, tops0, failed0;
	struct mft_stats st;
};

/* ------------------------------------------------------------ images */

static struct mft_image *img_find(const struct mft_state *s, uint64_t guid)
{
	uint32_t i = guidmap_find(&s->img_map, guid);

	return i == GUIDMAP_NONE ? NULL : &s->img[i];
}

static void img_clear(struct mft_image *im)
{
	free(im->mask);
	free(im->unknown);
	memset(im, 0, sizeof(*im));
}

/* A new model: switches gone (images not marked seen) lose theirs. */
static void img_drop_unseen(struct mft_state *s)
{
	size_t n = 0;

	guidmap_clear(&s->img_map);
	for (size_t i = 0; i < s->img_n; i++) {
		if (!s->img[i].seen) {
			img_clear(&s->img[i]);
			continue;
		}
		s->img[n] = s->img[i];
		/* Fewer entries than before: the map does not grow. */
		guidmap_insert(&s->img_map, s->img[n].guid, (uint32_t)n);
		n++;
	}
	s->img_n = n;
}

static struct mft_image *img_get(struct mft_state *s, uint64_t guid)
{
	struct mft_image *im = img_find(s, guid);

	if (im)
		return im;
	if (s->img_n == s->img_cap) {
		size_t cap = s->img_cap ? s->img_cap * 2 : 32;

		im = realloc(s->img, cap * sizeof(*im));
		if (!im)
			return NULL;
		s->img = im;
		s->img_cap = cap;
	}
	if (guidmap_insert(&s->img_map, guid, (uint32_t)s->img_n) < 0)
		return NULL;
	im = &s->img[s->img_n++];
	memset(im, 0, sizeof(*im));
	im->guid = guid;
	im->fresh = true;
	return im;
}

/*
 * Make the image cover `entries` MLIDs with `positions` positions.  New
 * entries hold nothing (a switch's table starts empty) and are known; a
 * change of positions (a different switch behind the GUID) starts over.
 */
static int img_reserve(struct mft_image *im, unsigned entries,
		       unsigned positions)
{
	if (im->positions != positions) {
		free(im->mask);
		free(im->unknown);
		im->mask = NULL;
		im->unknown = NULL;
		im->entries = 0;
		im->positions = (uint8_t)positions;
		im->top_memo = false;
	}
	if (entries <= im->entries)
		return 0;
	__be16 *mask = realloc(im->mask, (size_t)entries * positions *
			       sizeof(*mask));
	if (!mask)
		return -ENOMEM;
	im->mask = mask;
	uint8_t *unk = realloc(im->unknown, (size_t)entries / MFT_BLOCK *
			       positions);
	if (!unk)
		return -ENOMEM;
	im->unknown = unk;
	memset(mask + (size_t)im->entries * positions, 0,
	       (size_t)(entries - im->entries) * positions * sizeof(*mask));
	memset(unk + (size_t)im->entries / MFT_BLOCK * positions, 0,
	       (size_t)(entries - im->entries) / MFT_BLOCK * positions);
	im->entries = (uint16_t)entries;
	return 0;
}

/* The model's copy of a switch's image (what the SA answers with). */
static int mirror(struct fab_node *n, const struct mft_image *im)
{
	size_t sz = (size_t)im->entries * im->positions * sizeof(*n->mft);

	if (n->mft_entries != im->entries || n->mft_positions != im->positions) {
		__be16 *m = realloc(n->mft, sz ? sz : 1);

		if (!m)
			return -ENOMEM;
		n->mft = m;
		n->mft_entries = im->entries;
		n->mft_positions = im->positions;
	}
	if (sz)
		memcpy(n->mft, im->mask, sz);
	return 0;
}

/* ---------------------------------------------------------- port map */

static int pm_build(struct mft_state *s, const struct fabric *f)
{
	size_t ports = 0, n = 0;

	for (size_t i = 0; i < f->n_nodes; i++)
		ports += f->nodes[i].type == NODE_TYPE_SWITCH ? 1
			 : f->nodes[i].num_ports;

	struct pm_port *pp = malloc((ports ? ports : 1) * sizeof(*pp));

	if (!pp)
		return -ENOMEM;
	if (guidmap_reserve(&s->pm, ports) < 0) {
		free(pp);
		return -ENOMEM;
	}
	guidmap_clear(&s->pm);
	free(s->pm_port);
	s->pm_port = pp;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		bool sw = nd->type == NODE_TYPE_SWITCH;

		for (unsigned pn = sw ? 0 : 1; pn <= (sw ? 0u : nd->num_ports); pn++) {
			const struct fab_port *p = &nd->ports[pn];
			uint64_t g = p->guid;

			if (!g || (!sw && !p->valid))
				continue;
			if (guidmap_find(&s->pm, g) != GUIDMAP_NONE)
				continue;	/* a twin: the first one counts */
			pp[n] = (struct pm_port){ (int32_t)i, (uint8_t)pn };
			guidmap_insert(&s->pm, g, (uint32_t)n++);	/* reserved */
		}
	}
	return 0;
}

static const struct pm_port *pm_find(const struct mft_state *s, uint64_t g)
{
	uint32_t i = g ? guidmap_find(&s->pm, g) : GUIDMAP_NONE;

	return i == GUIDMAP_NONE ? NULL : &s->pm_port[i];
}

/* ------------------------------------------------------------- trees */

static void tree_release(struct mlid_tree *t)
{
	mcast_tree_free(&t->t);
	free(t->guid);
	t->guid = NULL;
}

static void trees_clear(struct mft_state *s)
{
	for (size_t i = 0; i < MLIDS; i++) {
		if (!s->trees[i])
			continue;
		tree_release(s->trees[i]);
		free(s->trees[i]);
		s->trees[i] = NULL;
	}
	s->tree_hi = 0;
}

/* Record the GUIDs of a tree just built over the model: 0 or -ENOMEM. */
static int tree_note_guids(const struct fabric *f, struct mlid_tree *t)
{
	free(t->guid);
	t->guid = malloc((t->t.n ? t->t.n : 1) * sizeof(*t->guid));
	if (!t->guid)
		return -ENOMEM;
	for (size_t i = 0; i < t->t.n; i++)
		t->guid[i] = fabric_node(f, t->t.sw[i].node)->guid;
	t->root_guid = t->t.root == FAB_NONE ? 0
		       : fabric_node(f, t->t.root)->guid;
	return 0;
}

static int cmp_sw_node(const void *a, const void *b)
{
	const struct mcast_sw *x = a, *y = b;

	return (x->node > y->node) - (x->node < y->node);
}

/* Where member `m` hangs off the tree's switches: the switch and the
 * port a packet to it leaves by; FAB_NONE when it hangs off none. */
static int32_t member_attach(const struct fabric *f, const struct mcast_member *m,
			     unsigned *port)
{
	const struct fab_node *n;
	const struct fab_port *p;

	*port = 0;
	if (m->node < 0 || (size_t)m->node >= f->n_nodes)
		return FAB_NONE;
	n = fabric_node(f, m->node);
	if (n->type == NODE_TYPE_SWITCH)
		return m->port == 0 ? m->node : FAB_NONE;
	if (m->port < 1 || m->port > n->num_ports)
		return FAB_NONE;
	p = &n->ports[m->port];
	if (p->peer_node < 0 || (size_t)p->peer_node >= f->n_nodes ||
	    fabric_node(f, p->peer_node)->type != NODE_TYPE_SWITCH)
		return FAB_NONE;
	*port = p->peer_port;
	return p->peer_node;
}

/*
 * A topology change (a new model) need not move a tree it did not touch.
 * Find `old` (built on an earlier model, for the same members) again in
 * the current model: every switch by GUID, every PortMask bit either a
 * link to another switch of the tree whose mask has the far port, or the
 * port of a receiving member; every member hanging off a switch of the
 * tree; the links still forming one tree from the root.  On success
 * `out` is that tree in the current model's node ids, with its depth,
 * and true is returned.  Such a tree is still loop-free and reaches every
 * member; the caller keeps it unless a new build is shallower (a link or
 * switch that appeared may allow that; one that went cannot).
 */
static bool tree_carry(struct mft_state *s, const struct mlid_tree *old,
		       const struct mcast_member *m, size_t nm,
		       struct mcast_tree *out)
{
	const struct fabric *f = &s->sm->fabric;
	size_t T = old->t.n;
	uint64_t (*expect)[MCAST_MASK_WORDS] = NULL;
	int32_t *queue = NULL;
	unsigned *dist = NULL;
	size_t links = 0, head = 0, tail = 0;
	bool ok = false;

	memset(out, 0, sizeof(*out));
	out->root = FAB_NONE;
	if (old->t.unreached || !T || !old->guid)
		return false;
	out->sw = malloc(T * sizeof(*out->sw));
	expect = calloc(T, sizeof(*expect));
	queue = malloc(T * sizeof(*queue));
	dist = malloc(T * sizeof(*dist));
	if (!out->sw || !expect || !queue || !dist)
		goto done;
	out->n = T;
	for (size_t i = 0; i < T; i++) {
		int32_t id = fabric_find(f, old->guid[i]);

		if (id == FAB_NONE || fabric_node(f, id)->type != NODE_TYPE_SWITCH)
			goto done;
		out->sw[i].node = id;
		memcpy(out->sw[i].mask, old->t.sw[i].mask, sizeof(out->sw[i].mask));
	}
	qsort(out->sw, T, sizeof(*out->sw), cmp_sw_node);
	for (size_t i = 1; i < T; i++)
		if (out->sw[i].node == out->sw[i - 1].node)
			goto done;	/* two GUIDs, one node: no */
	out->root = fabric_find(f, old->root_guid);
	if (out->root == FAB_NONE || !mcast_tree_find(out, out->root))
		goto done;
	/* Members: each on the tree; receivers' ports expected. */
	for (size_t i = 0; i < nm; i++) {
		unsigned port;
		int32_t sw = member_attach(f, &m[i], &port);
		const struct mcast_sw *w = sw == FAB_NONE ? NULL
					   : mcast_tree_find(out, sw);

		if (!w)
			goto done;
		if (m[i].receives)
			mcast_mask_set(expect[w - out->sw], port);
	}
	/* Links: both ends in the tree, both bits set. */
	for (size_t i = 0; i < T; i++) {
		const struct fab_node *n = fabric_node(f, out->sw[i].node);

		for (unsigned p = 1; p <= n->num_ports && p < 64 * MCAST_MASK_WORDS; p++) {
			const struct fab_port *pp = &n->ports[p];
			const struct mcast_sw *w;

			if (!mcast_mask_has(out->sw[i].mask, p) ||
			    mcast_mask_has(expect[i], p))
				continue;
			if (pp->peer_node < 0 ||
			    !(w = mcast_tree_find(out, pp->peer_node)) ||
			    !mcast_mask_has(w->mask, pp->peer_port))
				goto done;
			mcast_mask_set(expect[i], p);
			links++;
		}
		if (memcmp(expect[i], out->sw[i].mask, sizeof(expect[i])))
			goto done;	/* a bit no member or link explains */
	}
	/* T switches, T - 1 links (counted from both ends), all reached
	 * from the root: a tree.  Its depth by a walk from the root. */
	if (links != 2 * (T - 1))
		goto done;
	for (size_t i = 0; i < T; i++)
		dist[i] = UINT32_MAX;
	{
		const struct mcast_sw *r = mcast_tree_find(out, out->root);

		dist[r - out->sw] = 0;
		queue[tail++] = (int32_t)(r - out->sw);
	}
	while (head < tail) {
		int32_t k = queue[head++];
		const struct fab_node *n = fabric_node(f, out->sw[k].node);

		if (dist[k] > out->depth)
			out->depth = dist[k];
		for (unsigned p = 1; p <= n->num_ports && p < 64 * MCAST_MASK_WORDS; p++) {
			const struct mcast_sw *w;

			if (!mcast_mask_has(out->sw[k].mask, p) ||
			    n->ports[p].peer_node < 0 ||
			    !(w = mcast_tree_find(out, n->ports[p].peer_node)) ||
			    dist[w - out->sw] != UINT32_MAX)
				continue;
			dist[w - out->sw] = dist[k] + 1;
			queue[tail++] = (int32_t)(w - out->sw);
		}
	}
	ok = tail == T;
done:
	free(expect);
	free(queue);
	free(dist);
	if (!ok)
		mcast_tree_free(out);
	return ok;
}

static uint64_t group_sig(const struct mc_group *g)
{
	uint64_t a, b;

	memcpy(&a, g->mgid, 8);
	memcpy(&b, g->mgid + 8, 8);
	return guid_hash(a ^ guid_hash(b ^ guid_hash(g->gen))) | 1;
}

static size_t group_count(const struct sm *sm)
{
	return sm->mc ? mc_table_count(sm->mc) : 0;
}

/*
 * Rebuild the trees whose groups changed and mark the MFT blocks of
 * their MLIDs.  On a new model every tree is built again, but one whose
 * groups did not change keeps its old tree when tree_carry() finds it
 * intact in the new model and it is as shallow as the new build: a
 * topology change moves only the trees it touched (or that it let become
 * shallower), so MFT Sets go only to those.  0 or -ENOMEM.
 */
static int trees_update(struct mft_state *s, unsigned *built, unsigned *kept)
{
	struct sm *sm = s->sm;
	size_t ng = group_count(sm);
	size_t total = 0, lim = s->tree_hi;
	int rc = 0;

	*built = 0;
	*kept = 0;
	/* MLID indexes beyond every group's and every tree's are left
	 * alone: a few hundred groups need not cost 16,383 steps a join */
	for (size_t i = 0; i < ng; i++) {
		const struct mc_group *g = mc_table_at(sm->mc, i);

		if (g->mlid >= MC_MLID_MIN && g->mlid <= MC_MLID_MAX &&
		    (size_t)(g->mlid - MC_MLID_MIN) + 1 > lim)
			lim = (size_t)(g->mlid - MC_MLID_MIN) + 1;
	}
	memset(s->sig, 0, lim * sizeof(*s->sig));
	memset(s->off, 0, (lim + 1) * sizeof(*s->off));
	for (size_t i = 0; i < ng; i++) {
		const struct mc_group *g = mc_table_at(sm->mc, i);

		if (g->mlid < MC_MLID_MIN || g->mlid > MC_MLID_MAX)
			continue;
		s->sig[g->mlid - MC_MLID_MIN] += group_sig(g);
	}
	/* Changed MLIDs: count their members (off[] as counts first). */
	for (size_t i = 0; i < ng; i++) {
		const struct mc_group *g = mc_table_at(sm->mc, i);

		if (g->mlid < MC_MLID_MIN || g->mlid > MC_MLID_MAX)
			continue;
		size_t x = g->mlid - MC_MLID_MIN;
		if (s->trees[x] && s->trees[x]->sig == s->sig[x] && !s->carry)
			continue;
		s->off[x + 1] += (uint32_t)g->n_members;
		total += g->n_members;
	}
	for (size_t x = 0; x < lim; x++)
		s->off[x + 1] += s->off[x];
	struct mcast_member *mem = malloc((total ? total : 1) * sizeof(*mem));
	uint32_t *fill = calloc(lim ? lim : 1, sizeof(*fill));
	if (!mem || !fill) {
		free(mem);
		free(fill);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ng; i++) {
		const struct mc_group *g = mc_table_at(sm->mc, i);

		if (g->mlid < MC_MLID_MIN || g->mlid > MC_MLID_MAX)
			continue;
		size_t x = g->mlid - MC_MLID_MIN;
		if (s->trees[x] && s->trees[x]->sig == s->sig[x] && !s->carry)
			continue;
		for (size_t j = 0; j < g->n_members; j++) {
			const struct mc_member *m = &g->members[j];
			const struct pm_port *p = pm_find(s, m->port_guid);
			struct mcast_member *o = &mem[s->off[x] + fill[x]++];

			/* A member the model does not have (gone since it
			 * joined) is left out of the tree. */
			o->node = p ? p->node : FAB_NONE;
			o->port = p ? p->port : 0;
			o->receives = mc_member_receives(m);
		}
	}
	free(fill);

	uint16_t hi = 0;
	for (size_t x = 0; x < lim; x++) {
		bool has = s->sig[x] != 0;
		bool same = s->trees[x] && s->trees[x]->sig == s->sig[x];
		const struct mcast_member *mx = mem + s->off[x];
		size_t nx = s->off[x + 1] - s->off[x];
		struct mcast_tree nt, ct;

		if (same && !s->carry) {
			hi = (uint16_t)(x + 1);
			continue;
		}
		if (!has && !s->trees[x])
			continue;
		if (!has) {
			s->dirty[x / MFT_BLOCK] = 1;
			tree_release(s->trees[x]);
			free(s->trees[x]);
			s->trees[x] = NULL;
			continue;
		}
		rc = mcast_tree_build(s->ctx, mx, nx, (uint32_t)(MC_MLID_MIN + x),
				      &nt);
		if (rc < 0)
			break;
		(*built)++;
		hi = (uint16_t)(x + 1);
		if (same && tree_carry(s, s->trees[x], mx, nx, &ct)) {
			if (ct.depth <= nt.depth) {
				mcast_tree_free(&nt);
				nt = ct;
				(*kept)++;
			} else {
				mcast_tree_free(&ct);
				s->dirty[x / MFT_BLOCK] = 1;
			}
		} else {
			s->dirty[x / MFT_BLOCK] = 1;
		}
		if (!s->trees[x]) {
			s->trees[x] = calloc(1, sizeof(*s->trees[x]));
			if (!s->trees[x]) {
				mcast_tree_free(&nt);
				rc = -ENOMEM;
				break;
			}
		} else {
			tree_release(s->trees[x]);
		}
		s->trees[x]->t = nt;
		s->trees[x]->sig = s->sig[x];
		rc = tree_note_guids(&s->sm->fabric, s->trees[x]);
		if (rc < 0) {
			tree_release(s->trees[x]);
			free(s->trees[x]);
			s->trees[x] = NULL;
			break;
		}
	}
	if (rc == 0)
		s->carry = false;
	s->tree_hi = lim;
	while (s->tree_hi && !s->trees[s->tree_hi - 1])
		s->tree_hi--;
	free(mem);
	s->want_entries = (uint16_t)((hi + MFT_BLOCK - 1) / MFT_BLOCK * MFT_BLOCK);
	return rc;
}

/* Node `id` in the tree of MLID index x, NULL when not on it. */
static const struct mcast_sw *tree_switch(const struct mft_state *s, size_t x,
					  int32_t id)
{
	const struct mlid_tree *t = x < MLIDS ? s->trees[x] : NULL;

	return t ? mcast_tree_find(&t->t, id) : NULL;
}

/* --------------------------------------------------------- the Sets */

struct set_ctx {
	struct mft_state *s;
	uint64_t guid, gen;
	int32_t  node;
	uint16_t block;
	uint8_t  pos;
	uint16_t top;			/* SwitchInfo Sets: the top asked for */
};

static void on_block_set(struct smp_batch *b, int32_t node, uint8_t port,
			 const uint8_t *data, void *arg)
{
	struct set_ctx *c = arg;
	struct mft_state *s = c->s;
	struct mft_image *im;

	(void)b;
	(void)port;
	if (s->stopped || !(im = img_find(s, c->guid)) ||
	    (unsigned)c->block * MFT_BLOCK >= im->entries ||
	    c->pos >= im->positions) {
		free(c);
		return;
	}
	size_t u = (size_t)c->block * im->positions + c->pos;
	if (!data) {
		im->unknown[u] = 1;
		s->st.failed++;
		free(c);
		return;
	}
	const __be16 *got = (const void *)data;
	struct fabric *f = &s->sm->fabric;
	struct fab_node *n = f->gen == c->gen && node >= 0 &&
			     (size_t)node < f->n_nodes ? fabric_node(f, node) : NULL;
	if (n && (n->guid != c->guid || n->mft_positions != im->positions))
		n = NULL;
	im->unknown[u] = 0;
	for (unsigned i = 0; i < MFT_BLOCK; i++) {
		size_t x = (size_t)c->block * MFT_BLOCK + i;

		im->mask[x * im->positions + c->pos] = got[i];
		if (n && n->mft && x < n->mft_entries)
			n->mft[x * n->mft_positions + c->pos] = got[i];
	}
	free(c);
}

static void on_top_set(struct smp_batch *b, int32_t node, uint8_t port,
		       const uint8_t *data, void *arg)
{
	struct set_ctx *c = arg;
	struct mft_state *s = c->s;
	struct mft_image *im;

	(void)b;
	(void)node;
	(void)port;
	if (!s->stopped && (im = img_find(s, c->guid))) {
		if (data) {
			const struct smp_switch_info *si = (const void *)data;

			im->top_memo = true;
			im->top_want = c->top;
			im->top_got = be16toh(si->mft_top);
		} else {
			im->top_memo = false;
			s->st.failed++;
		}
	}
	free(c);
}

static int queue_block(struct mft_state *s, int32_t id, const uint64_t guid,
		       unsigned blk, unsigned pos, const __be16 want[MFT_BLOCK])
{
	const struct fab_node *n = fabric_node(&s->sm->fabric, id);
	struct set_ctx *c = malloc(sizeof(*c));
	int rc;

	if (!c)
		return -ENOMEM;
	*c = (struct set_ctx){ .s = s, .guid = guid, .gen = s->model_gen,
			       .node = id, .block = (uint16_t)blk,
			       .pos = (uint8_t)pos };
	/* AttributeModifier: block in bits 0-8, position in bits 28-31. */
	rc = batch_smp(&s->batch, MAD_METHOD_SET, n->path, n->hops, SMP_ATTR_MFT,
		       (uint32_t)pos << 28 | blk, want, MFT_BLOCK * sizeof(*want),
		       id, 0, on_block_set, c);
	if (rc < 0)
		free(c);
	else
		s->st.sets++;
	return rc;
}

/* SwitchInfo Set of MulticastFDBTop, when the switch supports it. */
static int queue_top(struct mft_state *s, int32_t id, struct mft_image *im,
		     unsigned entries)
{
	struct sm *sm = s->sm;
	const struct fab_node *n = fabric_node(&sm->fabric, id);
	uint16_t want = entries ? (uint16_t)(MC_MLID_MIN + entries - 1)
				: MFT_TOP_EMPTY;
	uint16_t now = im->top_memo ? im->top_got : be16toh(n->si.mft_top);

	if (!sm->cfg.use_mfttop ||
	    !(fabric_port_cap_mask(n, 0) & PI_CAP_MCAST_FDB_TOP) || now == want)
		return 0;
	/* Asked before, and the switch answered with what it still holds:
	 * it does not keep the value; asking again changes nothing. */
	if (im->top_memo && im->top_want == want)
		return 0;

	struct smp_switch_info si = n->si;
	int lft_top = lft_images_top(sm->images, n->guid);
	if (lft_top >= 0)
		si.lft_top = htobe16((uint16_t)lft_top);
	/* As program_switch() sets them; PortStateChange 0: left alone. */
	si.life_psc_osl = (uint8_t)((sm->cfg.packet_life_time & 0x1f) << 3 |
				    (si.life_psc_osl & 3));
	si.mft_top = htobe16(want);

	struct set_ctx *c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = (struct set_ctx){ .s = s, .guid = n->guid, .gen = s->model_gen,
			       .node = id, .top = want };
	int rc = batch_smp(&s->batch, MAD_METHOD_SET, n->path, n->hops,
			   SMP_ATTR_SWITCH_INFO, 0, &si, sizeof(si), id, 0,
			   on_top_set, c);
	if (rc < 0)
		free(c);
	else
		s->st.top_sets++;
	return rc;
}

/* MLIDs a switch's table has room for, by its MulticastFDBCap. */
static unsigned switch_mlids(const struct fab_node *n)
{
	unsigned cap = be16toh(n->si.mft_cap);

	return cap < MLIDS ? cap : MLIDS;
}

/*
 * Queue what switch `id` needs: every MFT block (and position) it should
 * hold that differs from its image, among the blocks of this update.
 */
static int program_mft(struct mft_state *s, int32_t id)
{
	struct fab_node *n = fabric_node(&s->sm->fabric, id);
	unsigned cap = switch_mlids(n);
	unsigned positions = (n->num_ports + 1u + 15u) / 16u;
	struct mft_image *im;
	int rc;

	if (n->type != NODE_TYPE_SWITCH || !n->has_switch_info || !cap)
		return 0;
	if (positions > MFT_POSITIONS)
		positions = MFT_POSITIONS;
	im = img_get(s, n->guid);
	if (!im)
		return -ENOMEM;
	im->seen = true;
	unsigned want = s->want_entries < cap ? s->want_entries : cap;
	unsigned entries = (want + MFT_BLOCK - 1) / MFT_BLOCK * MFT_BLOCK;
	/*
	 * A switch we never programmed may hold entries from an SM before
	 * us: up to its MulticastFDBTop, when it reports one, its blocks
	 * are unknown and get written (cleared where no group is).
	 */
	unsigned stale = 0, top = be16toh(n->si.mft_top);
	if (im->fresh && top >= MC_MLID_MIN && top - MC_MLID_MIN < cap)
		stale = (top - MC_MLID_MIN) / MFT_BLOCK * MFT_BLOCK + MFT_BLOCK;
	bool grew = entries > im->entries || stale > im->entries ||
		    im->positions != positions;
	if (img_reserve(im, entries > stale ? entries : stale, positions) < 0)
		return -ENOMEM;
	if (im->fresh) {
		memset(im->unknown, 1, stale / MFT_BLOCK * positions);
		im->fresh = false;
	}
	if (grew || !n->mft || n->mft_entries != im->entries)
		if (mirror(n, im) < 0)
			return -ENOMEM;

	for (unsigned blk = 0; blk < im->entries / MFT_BLOCK; blk++) {
		if (!s->all_blocks && !s->dirty[blk] &&
		    !(blk < stale / MFT_BLOCK))
			continue;
		/* this switch in the trees of the block's MLIDs, once for
		 * all its positions (on none of them: see mark) */
		const struct mcast_sw *on[MFT_BLOCK];
		bool none = !s->all_blocks && !(blk < stale / MFT_BLOCK) &&
			    ((size_t)id >= s->mark_len || s->mark[id] != s->stamp);

		for (unsigned i = 0; i < MFT_BLOCK; i++) {
			size_t x = (size_t)blk * MFT_BLOCK + i;

			on[i] = x < cap && !none ? tree_switch(s, x, id) : NULL;
		}
		for (unsigned pos = 0; pos < positions; pos++) {
			__be16 w[MFT_BLOCK];
			bool same = !im->unknown[blk * positions + pos];

			for (unsigned i = 0; i < MFT_BLOCK; i++) {
				size_t x = (size_t)blk * MFT_BLOCK + i;

				w[i] = htobe16(on[i] ? mcast_mask_word16(on[i]->mask,
									pos) : 0);
				if (w[i] != im->mask[x * positions + pos])
					same = false;
			}
			if (same)
				continue;
			rc = queue_block(s, id, n->guid, blk, pos, w);
			if (rc < 0)
				return rc;
		}
	}
	return queue_top(s, id, im, want);
}

static void update_done(struct smp_batch *b, void *arg);
static void update_run(struct mft_state *s);

/* The marks of this update: the switches of the dirty blocks' trees. */
static int marks_set(struct mft_state *s)
{
	size_t n = s->sm->fabric.n_nodes;

	if (n > s->mark_len) {
		uint32_t *m = realloc(s->mark, n * sizeof(*m));

		if (!m)
			return -ENOMEM;
		memset(m + s->mark_len, 0, (n - s->mark_len) * sizeof(*m));
		s->mark = m;
		s->mark_len = n;
	}
	if (++s->stamp == 0) {		/* wrapped: no stale mark may match */
		memset(s->mark, 0, s->mark_len * sizeof(*s->mark));
		s->stamp = 1;
	}
	for (size_t blk = 0; blk * MFT_BLOCK < s->tree_hi; blk++) {
		if (!s->dirty[blk])
			continue;
		for (size_t x = blk * MFT_BLOCK;
		     x < (blk + 1) * MFT_BLOCK && x < s->tree_hi; x++) {
			const struct mlid_tree *t = s->trees[x];

			for (size_t j = 0; t && j < t->t.n; j++)
				if ((size_t)t->t.sw[j].node < s->mark_len)
					s->mark[t->t.sw[j].node] = s->stamp;
		}
	}
	return 0;
}

/* Producer: one switch per call. */
static bool more_mft(struct smp_batch *b, void *arg)
{
	struct mft_state *s = arg;
	const struct fabric *f = &s->sm->fabric;

	if (s->stopped || s->sm->fabric.gen != s->model_gen)
		return false;		/* the model went: the next update */
	while (s->cursor < f->n_nodes) {
		int32_t id = (int32_t)s->cursor++;

		if (f->nodes[id].type != NODE_TYPE_SWITCH)
			continue;
		int rc = program_mft(s, id);
		if (rc < 0) {
			log_err_rc(rc, "ERR 0851: cannot queue MFT Sets for switch 0x%016"
				   PRIx64, f->nodes[id].guid);
			b->failed++;
			return false;
		}
		return true;
	}
	return false;
}

static void update_done(struct smp_batch *b, void *arg)
{
	struct mft_state *s = arg;
	unsigned sets = s->st.sets - s->sets0, tops = s->st.top_sets - s->tops0;
	unsigned failed = s->st.failed - s->failed0;

	(void)b;
	s->busy = false;
	if (s->stopped)
		return;
	s->st.updates++;
	s->st.last_sets = sets;
	if (sets || tops || s->st.last_trees)
		log_ratelimited(LOG_LVL_INFO, 850, "multicast: %u groups, %u"
				" trees rebuilt (%.3f ms, %u kept as they were),"
				" %u MFT block Sets, %u"
				" MulticastFDBTop Sets in %.3f ms",
				s->st.last_groups, s->st.last_trees,
				s->st.last_build_s * 1e3, s->st.last_kept,
				sets, tops,
				(ev_time() - s->t0) * 1e3);
	if (!failed) {
		s->retries = 0;
	} else if (s->retries < MFT_RETRIES) {
		s->retries++;
		s->rescan = true;
		log_ratelimited(LOG_LVL_ERR, 852, "%u MFT or SwitchInfo Sets not"
				" acknowledged: sent again in %.1f s (try %u of"
				" %u)", failed, MFT_RETRY_DELAY, s->retries,
				MFT_RETRIES);
		if (!ev_is_active(&s->timer)) {
			ev_timer_set(&s->timer, MFT_RETRY_DELAY, 0.);
			ev_timer_start(s->sm->loop, &s->timer);
		}
	} else {
		s->rescan = true;
		log_ratelimited(LOG_LVL_ERR, 852, "%u MFT or SwitchInfo Sets not"
				" acknowledged after %u tries: sent again at the"
				" next heavy sweep or change", failed, MFT_RETRIES);
	}
	if (s->again) {
		s->again = false;
		update_run(s);
	}
	if (s->exit_after && !s->busy) {
		s->exit_after = false;
		(void)sm_post(s->sm, SM_EV_MFT_DONE);	/* -o: the end */
	}
}

/* A new model: context, port map and images for it; every tree anew. */
static int model_prepare(struct mft_state *s)
{
	struct sm *sm = s->sm;
	const struct fabric *f = &sm->fabric;
	int rc;

	/* The trees stay, to be found again in the new model (carry). */
	s->carry = true;
	mcast_ctx_free(s->ctx);
	s->ctx = NULL;
	s->model_gen = 0;
	rc = mcast_ctx_new(&s->ctx, f, &sm->routes);
	if (rc == 0)
		rc = pm_build(s, f);
	if (rc < 0)
		return rc;
	/* Switches gone from the fabric lose their images. */
	for (size_t i = 0; i < s->img_n; i++)
		s->img[i].seen = false;
	for (size_t i = 0; i < f->n_nodes; i++) {
		struct mft_image *im;

		if (f->nodes[i].type == NODE_TYPE_SWITCH &&
		    (im = img_find(s, f->nodes[i].guid)))
			im->seen = true;
	}
	img_drop_unseen(s);
	s->model_gen = f->gen;
	return 0;
}

static void update_run(struct mft_state *s)
{
	struct sm *sm = s->sm;
	unsigned built = 0, kept = 0;
	int rc;

	if (s->stopped)
		return;
	if (s->busy) {
		s->again = true;
		return;
	}
	if (!sm->fabric.n_nodes || sm->fabric.local_node == FAB_NONE)
		return;
	s->first_change = 0;		/* this update carries them */
	s->t0 = ev_time();
	memset(s->dirty, 0, sizeof(s->dirty));
	s->all_blocks = s->rescan;
	s->rescan = false;
	if (sm->fabric.gen != s->model_gen) {
		rc = model_prepare(s);
		if (rc < 0) {
			log_err_rc(rc, "ERR 0851: cannot prepare multicast trees");
			return;
		}
		s->all_blocks = true;
	}
	rc = trees_update(s, &built, &kept);
	s->st.trees += built;
	s->st.last_trees = built;
	s->st.last_kept = kept;
	s->st.last_groups = (unsigned)group_count(sm);
	s->st.last_build_s = ev_time() - s->t0;
	if (rc < 0) {
		log_err_rc(rc, "ERR 0851: the MFTs are rebuilt at the next"
			   " sweep: cannot build multicast trees");
		s->model_gen = 0;	/* start over next time */
		return;
	}
	if (!s->all_blocks && marks_set(s) < 0)
		s->all_blocks = true;	/* no memory for marks: look everywhere */
	s->busy = true;
	s->cursor = 0;
	s->sets0 = s->st.sets;
	s->tops0 = s->st.top_sets;
	s->failed0 = s->st.failed;
	batch_init(&s->batch, sm->engine, update_done, s);
	batch_run(&s->batch, more_mft);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct mft_state *s = w->data;

	(void)loop;
	(void)revents;
	/* The heavy sweep under way rebuilds everything when it ends; look
	 * again later in case it fails. */
	if (s->sm->sweep) {
		ev_timer_set(&s->timer, MFT_SWEEP_POLL, 0.);
		ev_timer_start(s->sm->loop, &s->timer);
		return;
	}
	/* A better master is known: its MFTs, not ours.  Becoming master
	 * again starts with a heavy sweep, which rebuilds every tree. */
	if (s->sm->ha.standing_down) {
		s->first_change = 0;
		return;
	}
	/* Joins still coming: wait for a pause, up to MFT_COALESCE_MAX
	 * after the first of them.  ev_time(), not ev_now(): the pump may
	 * have served MADs for a while in this loop iteration. */
	if (s->first_change) {
		ev_tstamp now = ev_time();
		ev_tstamp quiet = now - s->last_change;
		ev_tstamp age = now - s->first_change;

		if (quiet < MFT_COALESCE && age < MFT_COALESCE_MAX) {
			ev_tstamp wait = MFT_COALESCE - quiet;

			if (wait > MFT_COALESCE_MAX - age)
				wait = MFT_COALESCE_MAX - age;
			ev_timer_set(&s->timer, wait, 0.);
			ev_timer_start(s->sm->loop, &s->timer);
			return;
		}
	}
	update_run(s);
}

static struct mft_state *state_get(struct sm *sm)
{
	struct mft_state *s = sm->mft;

	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->sm = sm;
	ev_timer_init(&s->timer, on_timer, MFT_COALESCE, 0.);
	s->timer.data = s;
	sm->mft = s;
	return s;
}

void mcast_changed(struct sm *sm)
{
	struct mft_state *s;

	if (sm->cfg.disable_multicast)
		return;		/* no MFT is ever programmed */
	s = state_get(sm);

	if (!s) {
		log_err("ERR 0851: out of memory: the MFTs follow at the next"
			" sweep");
		return;
	}
	if (s->stopped)
		return;
	s->last_change = ev_time();
	if (!s->first_change)
		s->first_change = s->last_change;
	/* Already due soon (a burst in progress, or a sweep being waited
	 * for): that update covers this change too (on_timer() waits for
	 * the burst to pause).  A retry due later is brought forward. */
	if (ev_is_active(&s->timer)) {
		if (ev_timer_remaining(sm->loop, &s->timer) <= MFT_SWEEP_POLL)
			return;
		ev_timer_stop(sm->loop, &s->timer);
	}
	ev_timer_set(&s->timer, MFT_COALESCE, 0.);
	ev_timer_start(sm->loop, &s->timer);
}

/*
 * The MLID ceiling: every switch on a tree must hold the MLID, so MLIDs
 * go up to the smallest MulticastFDBCap (switches without a table, cap
 * 0, hold none and are left out).
 */
static void mlid_ceiling(struct sm *sm)
{
	const struct fabric *f = &sm->fabric;
	unsigned cap = 0;

	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		unsigned c;

		if (n->type != NODE_TYPE_SWITCH || !n->has_switch_info ||
		    !(c = switch_mlids(n)))
			continue;
		if (!cap || c < cap)
			cap = c;
	}
	if (!cap || !sm->mc)
		return;
	uint16_t top = (uint16_t)(MC_MLID_MIN + cap - 1);
	if (top == mc_table_mlid_top(sm->mc))
		return;
	mc_table_set_mlid_top(sm->mc, top);
	size_t above = 0;
	for (size_t i = 0; i < mc_table_count(sm->mc); i++)
		if (mc_table_at(sm->mc, i)->mlid > top)
			above++;
	if (above)
		log_warnx("ERR 0853: MLIDs now end at 0x%04x (the smallest"
			  " MulticastFDBCap is %u): %zu groups hold MLIDs above"
			  " it and are not forwarded by switches too small for"
			  " them", top, cap, above);
	else
		log_info("multicast: MLIDs 0x%04x-0x%04x (smallest"
			 " MulticastFDBCap %u)", MC_MLID_MIN, top, cap);
}

void mft_sweep_done(struct sm *sm)
{
	struct mft_state *s;

	mlid_ceiling(sm);
	/* No group has ever been programmed: nothing to hold or clear.
	 * disable_multicast: the switches' MFTs are left as they are. */
	if ((!sm->mft && !group_count(sm)) || sm->cfg.disable_multicast)
		return;
	s = state_get(sm);
	if (!s) {
		log_err("ERR 0851: out of memory: no multicast forwarding");
		return;
	}
	if (s->stopped)
		return;
	ev_timer_stop(sm->loop, &s->timer);	/* this update covers it */
	update_run(s);
}

void mft_abort(struct sm *sm)
{
	struct mft_state *s = sm->mft;

	if (!s)
		return;
	if (!worker_abort_step(&s->stopped)) {
		ev_timer_stop(sm->loop, &s->timer);
		return;
	}
	trees_clear(s);
	mcast_ctx_free(s->ctx);
	guidmap_free(&s->pm);
	free(s->pm_port);
	free(s->mark);
	for (size_t i = 0; i < s->img_n; i++)
		img_clear(&s->img[i]);
	free(s->img);
	guidmap_free(&s->img_map);
	free(s);
	sm->mft = NULL;
}

bool mft_hold_exit(struct sm *sm)
{
	struct mft_state *s = sm->mft;

	if (!s || !s->busy || s->stopped)
		return false;
	s->exit_after = true;
	return true;
}

const struct mft_stats *mft_stats(const struct sm *sm, bool *busy)
{
	const struct mft_state *s = sm->mft;

	if (busy)
		*busy = s && s->busy;
	return s ? &s->st : NULL;
}
