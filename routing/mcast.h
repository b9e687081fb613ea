/*
 * mcast.h - multicast trees: a pure function from the fabric model and a
 * group's member end ports to the PortMask each switch on the group's
 * tree forwards to (the MulticastForwardingTable entry of its MLID,
 * 14.2.5.12).  No I/O, no logging; sm/mcast/mft.c composes the masks of
 * every MLID into MFT blocks and sends them.
 *
 * The tree: one spanning tree over the switches the members hang off,
 * through switches only, rooted at a switch that minimises the largest
 * hop count to a member switch (the tree is a shortest-path tree from
 * that root, so its depth is that minimum), a path through the links the
 * unicast routing loads least where several are equally short.  Every
 * switch on the tree forwards on all of its tree links; a switch never
 * sends a multicast packet back out the port it came in on, so whatever
 * enters the tree anywhere reaches every branch once.  The
 * switch port of a member that receives (full or non member) is in the
 * mask; that of a send-only member is not: it sends into the tree and
 * hears nothing.
 *
 * A context (mcast_ctx) holds what every group of one model shares: the
 * switch graph and the unicast load of each link.  Building it costs
 * O(switches + links + switches x LIDs); a tree then costs
 * O(switches + links) times a small constant (see mcast.c for the root
 * search).
 */
#ifndef IBSM_ROUTING_MCAST_H
#define IBSM_ROUTING_MCAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "routing/routing.h"
#include "model/fabric.h"

/* PortMask of ports 0..255 (bit p of word p / 64). */
#define MCAST_MASK_WORDS	4

/* One member end port: a CA or router port, or a switch's port 0. */
struct mcast_member {
	int32_t node;			/* model node id */
	uint8_t port;
	bool    receives;		/* full or non member; false: send-only */
};

/* One switch on a tree and the ports it forwards the MLID to. */
struct mcast_sw {
	int32_t  node;
	uint64_t mask[MCAST_MASK_WORDS];
};

struct mcast_tree {
	struct mcast_sw *sw;		/* sorted by node id */
	size_t   n;
	int32_t  root;			/* FAB_NONE for an empty tree */
	unsigned depth;			/* hops from the root to the farthest
					 * member switch */
	unsigned unreached;		/* members not attached to a switch, or
					 * in another part of a split fabric */
};

struct mcast_ctx;

/*
 * Prepare the trees of model `f`.  `r`, when given, is the unicast
 * routing of the same model: its LFTs give each link's load.  The model
 * must stay unchanged while the context is used.  0, -ENOMEM.
 */
int  mcast_ctx_new(struct mcast_ctx **out, const struct fabric *f,
		   const struct routing_result *r);
void mcast_ctx_free(struct mcast_ctx *c);

/*
 * Build the tree of one group over `n` members (duplicates allowed:
 * a port that receives in any of its entries receives).  `seed` (the
 * MLID, say) picks among equally good roots and links, so that groups
 * spread over a fabric's spines instead of all meeting at one.  `out` is
 * overwritten (mcast_tree_free() it afterwards).  0, -ENOMEM.
 */
int  mcast_tree_build(struct mcast_ctx *c, const struct mcast_member *m,
		      size_t n, uint32_t seed, struct mcast_tree *out);
void mcast_tree_free(struct mcast_tree *t);

/* The mask of `node` on tree `t`, or NULL when the tree avoids it. */
const struct mcast_sw *mcast_tree_find(const struct mcast_tree *t,
				       int32_t node);

static inline bool mcast_mask_has(const uint64_t m[MCAST_MASK_WORDS],
				  unsigned port)
{
	return port < 64 * MCAST_MASK_WORDS && (m[port / 64] >> (port % 64) & 1);
}

static inline void mcast_mask_set(uint64_t m[MCAST_MASK_WORDS], unsigned port)
{
	if (port < 64 * MCAST_MASK_WORDS)
		m[port / 64] |= 1ull << (port % 64);
}

/*
 * The 16 bits of position `pos` (ports 16 * pos .. 16 * pos + 15) of a
 * mask, host order: the PortMask of one MFT entry (bit i = port
 * 16 * pos + i).
 */
static inline uint16_t mcast_mask_word16(const uint64_t m[MCAST_MASK_WORDS],
					 unsigned pos)
{
	if (pos >= 4 * MCAST_MASK_WORDS)
		return 0;
	return (uint16_t)(m[pos / 4] >> (16 * (pos % 4)));
}

#endif /* IBSM_ROUTING_MCAST_H */
