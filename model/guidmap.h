/*
 * model/guidmap.h - a hash table from 64-bit GUIDs to 32-bit values.
 *
 * The fabric model, the LID cache, the LFT images, the multicast tables
 * and the SA index each look nodes and ports up by GUID on hot paths (a
 * 4,608-host bring-up, PathRecord queries).  They share this one table:
 * open addressing with linear probing over a flat array of (guid, value)
 * pairs, load factor at most one half, deletion by backward shift (no
 * tombstones).  A user that keeps bigger entries stores them in an array
 * of its own and keeps their index here.
 *
 * Why not a library: uthash is intrusive and chains one allocated handle
 * per entry (pointer chasing on every probe); glib's GHashTable boxes
 * 64-bit keys and is a heavy dependency for the daemon.  A flat array of
 * pairs costs no allocation per entry and keeps a probe within a cache
 * line or two.
 */
#ifndef IBSM_MODEL_GUIDMAP_H
#define IBSM_MODEL_GUIDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value of no entry: guidmap_find() returns it for a missing key. */
#define GUIDMAP_NONE UINT32_MAX

struct guidmap_slot {
	uint64_t guid;
	uint32_t val;		/* GUIDMAP_NONE: empty slot */
};

struct guidmap {
	struct guidmap_slot *slot;
	size_t size;		/* 0 or a power of two */
	size_t n;		/* entries in use */
};

/* 64-bit mix (splitmix64 finaliser): GUIDs are often sequential, so the
 * low bits alone would cluster. */
static inline size_t guid_hash(uint64_t g)
{
	g ^= g >> 30;
	g *= 0xbf58476d1ce4e5b9ull;
	g ^= g >> 27;
	g *= 0x94d049bb133111ebull;
	g ^= g >> 31;
	return (size_t)g;
}

void guidmap_init(struct guidmap *m);
void guidmap_free(struct guidmap *m);
/* Drop every entry, keep the memory. */
void guidmap_clear(struct guidmap *m);
/* Make room for `n` entries in all without growing later: 0 or -ENOMEM. */
int guidmap_reserve(struct guidmap *m, size_t n);
/* Set `guid` to `val` (< GUIDMAP_NONE), replacing any value: 0 or -ENOMEM. */
int guidmap_insert(struct guidmap *m, uint64_t guid, uint32_t val);
/* Remove `guid`; its value, or GUIDMAP_NONE if it was not there. */
uint32_t guidmap_remove(struct guidmap *m, uint64_t guid);

/* The value of `guid`, or GUIDMAP_NONE. */
static inline uint32_t guidmap_find(const struct guidmap *m, uint64_t guid)
{
	if (!m->n)
		return GUIDMAP_NONE;

	size_t mask = m->size - 1;

	for (size_t i = guid_hash(guid) & mask;; i = (i + 1) & mask) {
		const struct guidmap_slot *s = &m->slot[i];

		if (s->val == GUIDMAP_NONE || s->guid == guid)
			return s->val;
	}
}

static inline size_t guidmap_count(const struct guidmap *m)
{
	return m->n;
}

#endif
