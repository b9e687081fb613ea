/*
 * sm/program/pkey.c - the P_Key tables of the ports (see sm/program.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sm/program/internal.h"

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
