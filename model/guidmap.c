/*
 * model/guidmap.c - a hash table from 64-bit GUIDs to 32-bit values.
 */
#include "model/guidmap.h"

#include <errno.h>
#include <stdlib.h>

void guidmap_init(struct guidmap *m)
{
	m->slot = NULL;
	m->size = 0;
	m->n = 0;
}

void guidmap_free(struct guidmap *m)
{
	free(m->slot);
	guidmap_init(m);
}

void guidmap_clear(struct guidmap *m)
{
	for (size_t i = 0; i < m->size; i++)
		m->slot[i].val = GUIDMAP_NONE;
	m->n = 0;
}

/* The slot holding `guid`, or the empty slot where it would go. */
static size_t slot_of(const struct guidmap *m, uint64_t guid)
{
	size_t mask = m->size - 1, i = guid_hash(guid) & mask;

	while (m->slot[i].val != GUIDMAP_NONE && m->slot[i].guid != guid)
		i = (i + 1) & mask;
	return i;
}

int guidmap_reserve(struct guidmap *m, size_t n)
{
	size_t size = m->size ? m->size : 64;

	while (n * 2 > size)
		size *= 2;
	if (size == m->size)
		return 0;

	struct guidmap_slot *s = malloc(size * sizeof(*s));
	struct guidmap_slot *old = m->slot;
	size_t old_size = m->size;

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < size; i++)
		s[i].val = GUIDMAP_NONE;
	m->slot = s;
	m->size = size;
	for (size_t i = 0; i < old_size; i++)
		if (old[i].val != GUIDMAP_NONE)
			m->slot[slot_of(m, old[i].guid)] = old[i];
	free(old);
	return 0;
}

int guidmap_insert(struct guidmap *m, uint64_t guid, uint32_t val)
{
	if (val == GUIDMAP_NONE)
		return -EINVAL;

	int rc = guidmap_reserve(m, m->n + 1);

	if (rc < 0)
		return rc;

	struct guidmap_slot *s = &m->slot[slot_of(m, guid)];

	if (s->val == GUIDMAP_NONE) {
		s->guid = guid;
		m->n++;
	}
	s->val = val;
	return 0;
}

uint32_t guidmap_remove(struct guidmap *m, uint64_t guid)
{
	if (!m->n)
		return GUIDMAP_NONE;

	size_t mask = m->size - 1, i = slot_of(m, guid);
	uint32_t val = m->slot[i].val;

	if (val == GUIDMAP_NONE)
		return val;
	/*
	 * Pull later members of the probe chain back into the hole when
	 * their home slot does not lie cyclically in (hole, their slot].
	 */
	for (size_t j = (i + 1) & mask; m->slot[j].val != GUIDMAP_NONE;
	     j = (j + 1) & mask) {
		size_t home = guid_hash(m->slot[j].guid) & mask;

		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->slot[i] = m->slot[j];
			i = j;
		}
	}
	m->slot[i].val = GUIDMAP_NONE;
	m->n--;
	return val;
}
