/*
 * groups.c - the multicast group table: groups by MGID and by MLID, MLID
 * allocation, members.  No I/O, no logging (see mcast.h).
 *
 * Groups are held by pointer (a group's address never changes while it
 * lives), in an array for iteration (deleting swaps the last one in), an
 * open-addressing hash by MGID for lookups, and arrays indexed by
 * MLID - MC_MLID_MIN for MLID lookups and allocation: a group holding
 * each MLID and how many do (more than one only for IPv6 solicited-node
 * groups consolidated onto one MLID).  Each group indexes its members by
 * port GUID (see midx_slot()).  Deleted groups
 * leave tombstones in the hash; when they reach a quarter of it, the hash
 * is rebuilt from the array, so that a table that creates and deletes
 * groups for ever keeps short probes and always an empty slot.
 *
 * The groups of each port are counted in a second open-addressing hash
 * (port GUID -> count; linear probing with backward-shift deletion, so a
 * port whose count drops to 0 leaves no trace): the groups_per_port quota.
 * A third one counts the groups each requesting port created (its own or
 * by ProxyJoin): the same quota, and the MLID fair share.
 *
 * MLID fair share.  The MLIDs up to top are one pool for every host: the
 * last MC_MLID_RESERVE of them (at most an eighth of the pool) are kept
 * for groups without a requester (pre-created from partitions.conf) and
 * for IPoIB broadcast groups, which a partition cannot work without.
 * While more than a quarter of the rest is free, any requester may take
 * one; below that, a requester that created as many groups as its share
 * (the rest over the number of requesters holding groups, itself
 * included, plus one: room for a newcomer) is refused, so that the
 * requesters under their share, and the next one to come, still find
 * MLIDs however many hosts grab them first.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/fabric.h"
#include "sm/mcast/mcast.h"

#define MC_MLIDS	(MC_MLID_MAX - MC_MLID_MIN + 1)

struct port_count {
	uint64_t guid;			/* 0: empty */
	uint32_t n;
};

struct counts {
	struct port_count *v;
	size_t size, used;		/* power of two; slots in use */
};

struct mc_table {
	struct mc_limits lim;
	struct mc_group **groups;
	size_t   n, cap;
	struct mc_group **hash;		/* NULL: empty; MC_TOMB: deleted */
	size_t   hash_size;		/* power of two, > 2 * max_groups */
	struct mc_group **by_mlid;	/* MC_MLIDS entries: a holder */
	uint32_t *mlid_refs;		/* MC_MLIDS entries: groups holding it */
	bool     snm_consolidate;	/* consolidate_ipv6_snm_req */
	size_t   tombs;			/* MC_TOMB slots in hash */
	uint16_t top;			/* highest MLID handed out */
	size_t   mlids_used;
	struct counts pc;		/* groups per member port */
	struct counts oc;		/* groups per creating port */
	uint32_t mgid_counter;		/* mc_assign_mgid() */
};

static struct mc_group mc_tomb;
#define MC_TOMB	(&mc_tomb)

static size_t mgid_hash(const uint8_t mgid[16])
{
	uint64_t a, b;

	memcpy(&a, mgid, 8);
	memcpy(&b, mgid + 8, 8);
	return guid_hash(a ^ guid_hash(b));
}

struct mc_table *mc_table_new(const struct mc_limits *lim)
{
	struct mc_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (lim)
		t->lim = *lim;
	if (!t->lim.max_groups)
		t->lim.max_groups = MC_DEF_MAX_GROUPS;
	if (!t->lim.members_per_group)
		t->lim.members_per_group = MC_DEF_MEMBERS_PER_GROUP;
	if (!t->lim.groups_per_port)
		t->lim.groups_per_port = MC_DEF_GROUPS_PER_PORT;
	t->hash_size = 16;
	while (t->hash_size < 2 * (size_t)t->lim.max_groups + 1)
		t->hash_size <<= 1;
	t->hash = calloc(t->hash_size, sizeof(*t->hash));
	t->by_mlid = calloc(MC_MLIDS, sizeof(*t->by_mlid));
	t->mlid_refs = calloc(MC_MLIDS, sizeof(*t->mlid_refs));
	t->top = MC_MLID_MAX;
	t->pc.size = t->oc.size = 64;
	t->pc.v = calloc(t->pc.size, sizeof(*t->pc.v));
	t->oc.v = calloc(t->oc.size, sizeof(*t->oc.v));
	if (!t->hash || !t->by_mlid || !t->mlid_refs || !t->pc.v || !t->oc.v) {
		mc_table_free(t);
		return NULL;
	}
	return t;
}

static void group_free(struct mc_group *g)
{
	free(g->members);
	free(g->midx);
	free(g);
}

/*
 * The member index of a group: open addressing by port GUID over
 * positions in g->members (position + 1; 0: empty), linear probing,
 * backward-shift deletion (no tombstones), sized a power of two at least
 * twice the members array's capacity, so it is at most half full and
 * bounded by members_per_group like the array.  It replaces a scan of
 * the members on each of the ~4 lookups of a join or leave (a 1,152-host
 * broadcast group made that 1,152 compares per lookup).
 */
static size_t midx_home(const struct mc_group *g, uint64_t guid)
{
	return guid_hash(guid) & (g->midx_size - 1);
}

/* Slot holding `guid`, or the empty slot where it would go. */
static size_t midx_slot(const struct mc_group *g, uint64_t guid)
{
	size_t mask = g->midx_size - 1, i = midx_home(g, guid);

	while (g->midx[i] && g->members[g->midx[i] - 1].port_guid != guid)
		i = (i + 1) & mask;
	return i;
}

/* Index sized for the array's capacity, rebuilt: 0 or -ENOMEM. */
static int midx_rebuild(struct mc_group *g)
{
	size_t size = 16;
	uint32_t *idx;

	while (size < 2 * g->cap_members)
		size <<= 1;
	if (size != g->midx_size) {
		idx = calloc(size, sizeof(*idx));
		if (!idx)
			return -ENOMEM;
		free(g->midx);
		g->midx = idx;
		g->midx_size = size;
	} else {
		memset(g->midx, 0, size * sizeof(*g->midx));
	}
	for (size_t k = 0; k < g->n_members; k++)
		g->midx[midx_slot(g, g->members[k].port_guid)] = (uint32_t)k + 1;
	return 0;
}

/* Empty slot i, moving later entries of its probe run back into it. */
static void midx_delete(struct mc_group *g, size_t i)
{
	size_t mask = g->midx_size - 1, j;

	for (j = (i + 1) & mask; g->midx[j]; j = (j + 1) & mask) {
		size_t home = midx_home(g, g->members[g->midx[j] - 1].port_guid);

		/* Leave j where it is when its home lies in (i, j]. */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		g->midx[i] = g->midx[j];
		i = j;
	}
	g->midx[i] = 0;
}

void mc_table_free(struct mc_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		group_free(t->groups[i]);
	free(t->groups);
	free(t->hash);
	free(t->by_mlid);
	free(t->mlid_refs);
	free(t->pc.v);
	free(t->oc.v);
	free(t);
}

const struct mc_limits *mc_table_limits(const struct mc_table *t)
{
	return &t->lim;
}

/* Slot of `guid` in counts c, or the empty slot it would take. */
static size_t pc_slot(const struct counts *c, uint64_t guid)
{
	size_t mask = c->size - 1, i = guid_hash(guid) & mask;

	while (c->v[i].guid && c->v[i].guid != guid)
		i = (i + 1) & mask;
	return i;
}

static size_t pc_get(const struct counts *c, uint64_t guid)
{
	size_t i = pc_slot(c, guid);

	return c->v[i].guid ? c->v[i].n : 0;
}

size_t mc_port_groups(const struct mc_table *t, uint64_t port_guid)
{
	return pc_get(&t->pc, port_guid);
}

size_t mc_port_created(const struct mc_table *t, uint64_t port_guid)
{
	return pc_get(&t->oc, port_guid);
}

/* Room for one more port (kept at most half full): 0 or -ENOMEM. */
static int pc_reserve(struct counts *c)
{
	struct port_count *old = c->v;
	size_t old_size = c->size;

	if (2 * (c->used + 1) <= c->size)
		return 0;
	c->v = calloc(2 * old_size, sizeof(*c->v));
	if (!c->v) {
		c->v = old;
		return -ENOMEM;
	}
	c->size = 2 * old_size;
	for (size_t i = 0; i < old_size; i++)
		if (old[i].guid)
			c->v[pc_slot(c, old[i].guid)] = old[i];
	free(old);
	return 0;
}

/* One more for a port (pc_reserve() done). */
static void pc_inc(struct counts *c, uint64_t guid)
{
	size_t i = pc_slot(c, guid);

	if (!c->v[i].guid) {
		c->v[i].guid = guid;
		c->used++;
	}
	c->v[i].n++;
}

/* One less; at 0 the slot is emptied by backward shift. */
static void pc_dec(struct counts *c, uint64_t guid)
{
	size_t mask = c->size - 1, i = pc_slot(c, guid), j;

	if (!c->v[i].guid || --c->v[i].n)
		return;
	c->used--;
	for (j = (i + 1) & mask; c->v[j].guid; j = (j + 1) & mask) {
		size_t home = guid_hash(c->v[j].guid) & mask;

		/* Move j into the hole at i unless its home lies in (i, j]. */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		c->v[i] = c->v[j];
		i = j;
	}
	c->v[i].guid = 0;
	c->v[i].n = 0;
}

void mc_table_set_mlid_top(struct mc_table *t, uint16_t top)
{
	if (top < MC_MLID_MIN)
		top = MC_MLID_MIN;
	if (top > MC_MLID_MAX)
		top = MC_MLID_MAX;
	t->top = top;
}

uint16_t mc_table_mlid_top(const struct mc_table *t)
{
	return t->top;
}

size_t mc_table_count(const struct mc_table *t)
{
	return t->n;
}

struct mc_group *mc_table_at(struct mc_table *t, size_t i)
{
	return i < t->n ? t->groups[i] : NULL;
}

size_t mc_table_mlids_used(const struct mc_table *t)
{
	return t->mlids_used;
}

/* Slot of `mgid` in the hash: its group's, or the empty slot ending the
 * probe (the first tombstone on the way when `for_insert`). */
static size_t hash_slot(const struct mc_table *t, const uint8_t mgid[16],
			bool for_insert)
{
	size_t mask = t->hash_size - 1, i = mgid_hash(mgid) & mask;
	size_t tomb = SIZE_MAX;

	for (;; i = (i + 1) & mask) {
		struct mc_group *g = t->hash[i];

		if (!g)
			return for_insert && tomb != SIZE_MAX ? tomb : i;
		if (g == MC_TOMB) {
			if (tomb == SIZE_MAX)
				tomb = i;
			continue;
		}
		if (!memcmp(g->mgid, mgid, 16))
			return i;
	}
}

struct mc_group *mc_find(struct mc_table *t, const uint8_t mgid[16])
{
	struct mc_group *g = t->hash[hash_slot(t, mgid, false)];

	return g == MC_TOMB ? NULL : g;
}

struct mc_group *mc_find_mlid(struct mc_table *t, uint16_t mlid)
{
	if (mlid < MC_MLID_MIN || mlid > MC_MLID_MAX)
		return NULL;
	return t->by_mlid[mlid - MC_MLID_MIN];
}

/*
 * IPv6 solicited-node multicast MGIDs (RFC 4391 section 4 maps the IPv6
 * group ff02::1:ffXX:XXXX onto ff1S:601b:<P_Key>::1:ffXX:XXXX), matched
 * with OpenSM 3.3.23's masks: 0xff1? (the flags nibble's T bit set),
 * 601b, any P_Key, 0000, then 0000:000? (bits 1-3 of byte 11 free),
 * 0x01 in its low bit, 0xff, and any last 24 bits.  Two of them are of
 * one class (may share an MLID) when their first 13 bytes are equal:
 * the same flags, scope and P_Key.
 */
bool mc_mgid_is_ipv6_snm(const uint8_t m[16])
{
	return m[0] == 0xff && (m[1] & 0x10) && m[2] == 0x60 && m[3] == 0x1b &&
	       m[6] == 0 && m[7] == 0 && m[8] == 0 && m[9] == 0 &&
	       m[10] == 0 && (m[11] & 0xf1) == 0x01 && m[12] == 0xff;
}

static bool snm_same_class(const uint8_t a[16], const uint8_t b[16])
{
	return !memcmp(a, b, 13);
}

void mc_table_set_snm_consolidation(struct mc_table *t, bool on)
{
	t->snm_consolidate = on;
}

size_t mc_mlid_groups(const struct mc_table *t, uint16_t mlid)
{
	if (mlid < MC_MLID_MIN || mlid > MC_MLID_MAX)
		return 0;
	return t->mlid_refs[mlid - MC_MLID_MIN];
}

/*
 * The MLID of a solicited-node group of the class of `mgid`, or 0.
 * A scan of the groups: it runs only when such a group is created with
 * consolidation on, and stops at the first of its class.
 */
static uint16_t snm_class_mlid(const struct mc_table *t, const uint8_t mgid[16])
{
	for (size_t i = 0; i < t->n; i++) {
		const struct mc_group *g = t->groups[i];

		if (g->mlid && mc_mgid_is_ipv6_snm(g->mgid) &&
		    snm_same_class(g->mgid, mgid))
			return g->mlid;
	}
	return 0;
}

static uint16_t lowest_free_mlid(const struct mc_table *t)
{
	for (unsigned mlid = MC_MLID_MIN; mlid <= t->top; mlid++)
		if (!t->mlid_refs[mlid - MC_MLID_MIN])
			return (uint16_t)mlid;
	return 0;
}

/* Add a group holding `mlid` (chosen) to the table; NULL on -ENOMEM. */
static struct mc_group *group_insert(struct mc_table *t, const uint8_t mgid[16],
				     uint16_t mlid, int *err)
{
	struct mc_group *g;
	size_t h, x = mlid - MC_MLID_MIN;

	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct mc_group **ng = realloc(t->groups, cap * sizeof(*ng));

		if (!ng) {
			*err = -ENOMEM;
			return NULL;
		}
		t->groups = ng;
		t->cap = cap;
	}
	g = calloc(1, sizeof(*g));
	if (!g) {
		*err = -ENOMEM;
		return NULL;
	}
	memcpy(g->mgid, mgid, 16);
	g->mlid = mlid;
	g->gen = 1;
	t->groups[t->n++] = g;
	h = hash_slot(t, mgid, true);
	if (t->hash[h] == MC_TOMB)
		t->tombs--;
	t->hash[h] = g;
	if (!t->mlid_refs[x]++) {
		t->by_mlid[x] = g;
		t->mlids_used++;
	}
	*err = 0;
	return g;
}

static bool create_checks(struct mc_table *t, const uint8_t mgid[16], int *err)
{
	if (mc_find(t, mgid)) {
		*err = -EEXIST;
		return false;
	}
	if (t->n >= t->lim.max_groups) {
		*err = -ENOBUFS;
		return false;
	}
	return true;
}

struct mc_group *mc_group_create(struct mc_table *t, const uint8_t mgid[16],
				 int *err)
{
	return mc_group_create_req(t, mgid, 0, err);
}

/* IPoIB's IPv4 broadcast group: ff1S:401b:<P_Key>::ffff:ffff. */
bool mc_mgid_is_ipoib_broadcast(const uint8_t m[16])
{
	static const uint8_t tail[10] = { 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff,
					  0xff };

	return m[0] == 0xff && (m[1] & 0xf0) == 0x10 && m[2] == 0x40 &&
	       m[3] == 0x1b && !memcmp(m + 6, tail, sizeof(tail));
}

void mc_mlid_share(const struct mc_table *t, uint64_t owner,
		   struct mc_share *sh)
{
	size_t pool = t->top >= MC_MLID_MIN ? t->top - MC_MLID_MIN + 1u : 0;
	size_t mine = owner ? pc_get(&t->oc, owner) : 0;
	size_t holders = t->oc.used + (owner && !mine ? 1 : 0);

	sh->reserve = pool / 8 < MC_MLID_RESERVE ? pool / 8 : MC_MLID_RESERVE;
	sh->free = t->mlids_used < pool ? pool - t->mlids_used : 0;
	sh->share = (pool - sh->reserve) / (holders + 1);
	sh->mine = mine;
	sh->contended = sh->free < sh->reserve + (pool - sh->reserve) / 4;
}

/* May `owner` take a new MLID for group `mgid`?  0 or -errno. */
static int mlid_allowed(const struct mc_table *t, const uint8_t mgid[16],
			uint64_t owner)
{
	struct mc_share sh;

	if (!owner || mc_mgid_is_ipoib_broadcast(mgid))
		return 0;
	mc_mlid_share(t, owner, &sh);
	if (sh.free <= sh.reserve)
		return -ENOSPC;
	if (sh.contended && sh.mine >= sh.share)
		return -EDQUOT;
	return 0;
}

struct mc_group *mc_group_create_req(struct mc_table *t, const uint8_t mgid[16],
				     uint16_t requested, int *err)
{
	return mc_group_create_for(t, mgid, requested, 0, err);
}

struct mc_group *mc_group_create_for(struct mc_table *t, const uint8_t mgid[16],
				     uint16_t requested, uint64_t owner,
				     int *err)
{
	uint16_t mlid = 0;
	struct mc_group *g;

	if (!create_checks(t, mgid, err))
		return NULL;
	if (owner && pc_get(&t->oc, owner) >= t->lim.groups_per_port) {
		*err = -EDQUOT;
		return NULL;
	}
	if (owner && pc_reserve(&t->oc) < 0) {
		*err = -ENOMEM;
		return NULL;
	}
	/* OpenSM's order (get_new_mlid()): the MLID asked for when it is
	 * one the switches hold and nobody has it, then the class's MLID
	 * for a solicited-node group, then the lowest free one. */
	if (requested >= MC_MLID_MIN && requested <= t->top &&
	    !t->mlid_refs[requested - MC_MLID_MIN])
		mlid = requested;
	if (!mlid && t->snm_consolidate && mc_mgid_is_ipv6_snm(mgid))
		mlid = snm_class_mlid(t, mgid);
	if (!mlid || !t->mlid_refs[mlid - MC_MLID_MIN]) {
		/* a new MLID out of the shared pool */
		int rc = mlid_allowed(t, mgid, owner);

		if (rc < 0) {
			*err = rc;
			return NULL;
		}
	}
	if (!mlid)
		mlid = lowest_free_mlid(t);
	if (!mlid) {
		*err = -ENOSPC;
		return NULL;
	}
	g = group_insert(t, mgid, mlid, err);
	if (g && owner) {
		g->owner = owner;
		pc_inc(&t->oc, owner);
	}
	return g;
}

struct mc_group *mc_group_create_mlid(struct mc_table *t, const uint8_t mgid[16],
				      uint16_t want, int *err)
{
	if (!want)
		return mc_group_create_req(t, mgid, 0, err);
	if (!create_checks(t, mgid, err))
		return NULL;
	/* A group that had this MLID on another master keeps it: hosts
	 * attached their QPs to it.  Above top is fine (as a group whose
	 * top was lowered, see mc_table_set_mlid_top). */
	if (want < MC_MLID_MIN || want > MC_MLID_MAX) {
		*err = -EINVAL;
		return NULL;
	}
	/* Held already: only by solicited-node groups of this one's class,
	 * which the other master consolidated (whatever our setting). */
	if (t->mlid_refs[want - MC_MLID_MIN]) {
		const struct mc_group *h = t->by_mlid[want - MC_MLID_MIN];

		if (!mc_mgid_is_ipv6_snm(mgid) || !mc_mgid_is_ipv6_snm(h->mgid) ||
		    !snm_same_class(mgid, h->mgid)) {
			*err = -EADDRINUSE;
			return NULL;
		}
	}
	return group_insert(t, mgid, want, err);
}

void mc_group_delete(struct mc_table *t, struct mc_group *g)
{
	size_t h = hash_slot(t, g->mgid, false);

	if (t->hash[h] == g) {
		t->hash[h] = MC_TOMB;
		t->tombs++;
	}
	for (size_t i = 0; i < g->n_members; i++)
		pc_dec(&t->pc, g->members[i].port_guid);
	if (g->owner)
		pc_dec(&t->oc, g->owner);
	for (size_t i = 0; i < t->n; i++) {
		if (t->groups[i] == g) {
			t->groups[i] = t->groups[--t->n];
			break;
		}
	}
	/* The MLID is free when its last group goes (consolidated
	 * solicited-node groups share one); else another holder names it. */
	if (g->mlid >= MC_MLID_MIN && t->mlid_refs[g->mlid - MC_MLID_MIN]) {
		size_t x = g->mlid - MC_MLID_MIN;

		if (!--t->mlid_refs[x]) {
			t->by_mlid[x] = NULL;
			t->mlids_used--;
		} else if (t->by_mlid[x] == g) {
			for (size_t i = 0; i < t->n; i++)
				if (t->groups[i]->mlid == g->mlid) {
					t->by_mlid[x] = t->groups[i];
					break;
				}
		}
	}
	group_free(g);
	/* A table of tombstones probes long: rebuild it from the array. */
	if (t->tombs > t->hash_size / 4 || t->n == 0) {
		memset(t->hash, 0, t->hash_size * sizeof(*t->hash));
		t->tombs = 0;
		for (size_t i = 0; i < t->n; i++)
			t->hash[hash_slot(t, t->groups[i]->mgid, true)] =
				t->groups[i];
	}
}

struct mc_member *mc_group_member(struct mc_group *g, uint64_t port_guid)
{
	uint32_t k;

	if (!g->n_members)
		return NULL;
	k = g->midx[midx_slot(g, port_guid)];
	return k ? &g->members[k - 1] : NULL;
}

bool mc_member_remove(struct mc_table *t, struct mc_group *g,
		      uint64_t port_guid)
{
	size_t s, last;
	uint32_t k;

	if (!g->n_members)
		return false;
	s = midx_slot(g, port_guid);
	if (!(k = g->midx[s]))
		return false;
	if (g->members[k - 1].join_state & MC_JOIN_COUNTS)
		g->n_full--;
	pc_dec(&t->pc, port_guid);
	midx_delete(g, s);
	/* The last member fills the hole: its slot names the new place. */
	last = g->n_members - 1;
	if (k - 1 != last) {
		g->midx[midx_slot(g, g->members[last].port_guid)] = k;
		g->members[k - 1] = g->members[last];
	}
	g->n_members--;
	g->gen++;
	return true;
}

int mc_member_set(struct mc_table *t, struct mc_group *g, uint64_t port_guid,
		  const uint8_t port_gid[16], uint8_t join_state, bool proxy)
{
	struct mc_member *m = mc_group_member(g, port_guid);

	if (!join_state) {
		mc_member_remove(t, g, port_guid);
		return 0;
	}
	if (!m) {
		if (g->n_members >= t->lim.members_per_group)
			return -ENOBUFS;
		if (mc_port_groups(t, port_guid) >= t->lim.groups_per_port)
			return -EDQUOT;
		if (pc_reserve(&t->pc) < 0)
			return -ENOMEM;
		if (g->n_members == g->cap_members) {
			size_t cap = g->cap_members ? 2 * g->cap_members : 8;
			struct mc_member *nm;

			nm = realloc(g->members, cap * sizeof(*nm));
			if (!nm)
				return -ENOMEM;
			g->members = nm;
			g->cap_members = cap;
		}
		/* The index grows with the array (a failure leaves the
		 * array larger and the index as it was, still right and
		 * grown at the next join). */
		if (g->midx_size < 2 * g->cap_members && midx_rebuild(g) < 0)
			return -ENOMEM;
		m = &g->members[g->n_members++];
		memset(m, 0, sizeof(*m));
		m->port_guid = port_guid;
		g->midx[midx_slot(g, port_guid)] = (uint32_t)g->n_members;
		pc_inc(&t->pc, port_guid);
	}
	if ((m->join_state & MC_JOIN_COUNTS) && !(join_state & MC_JOIN_COUNTS))
		g->n_full--;
	else if (!(m->join_state & MC_JOIN_COUNTS) && (join_state & MC_JOIN_COUNTS))
		g->n_full++;
	memcpy(m->port_gid, port_gid, 16);
	m->join_state = join_state;
	m->proxy = proxy;
	g->gen++;
	return 0;
}

int mc_join(struct mc_table *t, struct mc_group *g, uint64_t port_guid,
	    const uint8_t port_gid[16], uint8_t join_state, bool proxy,
	    uint8_t *held)
{
	struct mc_member *m = mc_group_member(g, port_guid);
	uint8_t now = (uint8_t)((m ? m->join_state : 0) | (join_state & MC_JOIN_ALL));
	bool first = g->n_full == 0 && (now & MC_JOIN_COUNTS);
	int rc;

	if (!(join_state & MC_JOIN_ALL))
		return -EINVAL;
	/* A repeated join keeps how the port first joined (ProxyJoin). */
	rc = mc_member_set(t, g, port_guid, port_gid, now, m ? m->proxy : proxy);
	if (rc < 0)
		return rc;
	*held = now;
	return first ? MC_TRAP_CREATED : 0;
}

int mc_leave(struct mc_table *t, struct mc_group *g, uint64_t port_guid,
	     uint8_t join_state, uint8_t *held, bool *deleted)
{
	struct mc_member *m = mc_group_member(g, port_guid);
	bool had_full = g->n_full > 0;
	uint8_t now;

	*deleted = false;
	join_state &= MC_JOIN_ALL;
	if (!m)
		return -ENOENT;
	/* o15-0.1.14: some bit held, and none that is not. */
	if (!join_state || (join_state & ~m->join_state))
		return -EINVAL;
	now = m->join_state & (uint8_t)~join_state;
	*held = now;
	if (now) {
		uint8_t gid[16];

		memcpy(gid, m->port_gid, 16);
		mc_member_set(t, g, port_guid, gid, now, m->proxy);
	}
	else
		mc_member_remove(t, g, port_guid);
	if (!had_full || g->n_full)
		return 0;
	/* The last member that counts left: the others go with it. */
	while (g->n_members)
		mc_member_remove(t, g, g->members[g->n_members - 1].port_guid);
	if (!g->precreated) {
		mc_group_delete(t, g);
		*deleted = true;
	}
	return MC_TRAP_DELETED;
}

int mc_assign_mgid(struct mc_table *t, uint8_t scope, uint64_t subnet_prefix,
		   uint8_t mgid[16])
{
	uint64_t prefix = htobe64(subnet_prefix);

	for (unsigned i = 0; i < 1000; i++) {
		uint32_t id = htobe32(t->mgid_counter++);

		mgid[0] = 0xff;
		mgid[1] = (uint8_t)(0x10 | (scope & 0xf));
		mgid[2] = 0xa0;
		mgid[3] = 0x1b;
		memcpy(mgid + 4, &prefix, 8);
		memcpy(mgid + 10, &id, 4);
		if (!mc_find(t, mgid))
			return 0;
	}
	return -ENOSPC;
}
