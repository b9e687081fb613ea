/*
 * index.h - the lookup index of one fabric model, built once per model
 * generation and shared by the SA record generators and the trap
 * receiver: LID -> end port for every LID of every LMC range, port GUID
 * -> end port, the orders OpenSM lists nodes and end ports in, and the
 * non-empty P_Keys of every end port.
 */
#ifndef IBSM_MODEL_INDEX_H
#define IBSM_MODEL_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/fabric.h"

struct midx_guid_slot {
	uint64_t guid;			/* 0: empty slot */
	struct fab_ref ref;
};

/*
 * The index of one subnet model: LID -> end port for every LID of every
 * LMC range, port GUID -> end port.  The published model is const, so
 * the index lives here and is rebuilt when the model it was built from
 * changes (midx_get()): a model is known by its generation
 * (struct fabric.gen), not by where its arrays happen to be.  It is only
 * ever used on the loop thread.
 */
struct midx {
	bool built;
	/* what it was built from */
	const struct fabric *f;
	uint64_t gen;
	size_t n_nodes;
	uint16_t max_lid;
	/* the index proper */
	struct fab_ref *by_lid;		/* max_lid + 1 entries */
	struct midx_guid_slot *by_guid;
	size_t guid_size;		/* power of two */
	/* the orders OpenSM lists nodes and end ports in (see guid_order()) */
	int32_t *nodes_sorted;		/* n_nodes */
	struct fab_ref *ends;		/* n_ends */
	size_t n_ends;
	/* partitions (15-bit base) some end port is a full member of: a
	 * requested P_Key no one is full member of has no path at all */
	uint64_t pkey_full[32768 / 64];
	/* the non-empty P_Keys of every end port (fabric_pkey_tab()):
	 * port pn of node i is slot pk_base[i] + pn, its keys
	 * pk_keys[pk_off[slot] .. pk_off[slot + 1]) in table order */
	uint32_t *pk_base;		/* n_nodes */
	uint32_t *pk_off;		/* slots + 1 */
	uint16_t *pk_keys;
};
/* The index of the last model looked up (midx_get()). */
extern struct midx midx_cur;

/*
 * Make midx_cur the index of model `f`, built on first use after a
 * change: 0 or -ENOMEM.  Lookups return 1 (found, *out set), 0 (also for
 * a NULL or empty model), or -ENOMEM.
 */
int midx_get(const struct fabric *f);
/* Times the index was built (for tests: one build per model). */
extern unsigned long midx_builds;
int midx_lid_lookup(const struct fabric *f, uint16_t lid, struct fab_ref *out);
int midx_guid_lookup(const struct fabric *f, uint64_t guid, struct fab_ref *out);
/* The non-empty P_Keys of end port `r` of the indexed model. */
static inline const uint16_t *midx_port_pkeys(struct fab_ref r, unsigned *n)
{
	size_t s = midx_cur.pk_base[r.node] + r.port;

	*n = midx_cur.pk_off[s + 1] - midx_cur.pk_off[s];
	return midx_cur.pk_keys + midx_cur.pk_off[s];
}

/* Is some end port of the indexed model a full member of `base`? */
static inline bool midx_pkey_full(uint16_t base)
{
	base = FAB_PKEY_BASE(base);
	return midx_cur.pkey_full[base / 64] >> (base % 64) & 1;
}

#endif /* IBSM_MODEL_INDEX_H */
