/*
 * verify.h - check forwarding tables against the fabric model by walking
 * them, for tests and offline benchmarks (routebench), not the daemon's
 * hot path.
 */
#ifndef IBSM_ROUTING_VERIFY_H
#define IBSM_ROUTING_VERIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "routing/routing.h"

struct routing_check {
	uint64_t pairs;		/* (source port, destination LID) pairs walked */
	uint64_t unreachable;	/* ran into LFT_NO_PATH or a port that is down */
	uint64_t loops;		/* came back to a switch already on the path */
	uint64_t misrouted;	/* left the fabric at a port not owning the LID */
	uint64_t past_cap;	/* assigned LIDs at or past some switch's
				 * LinearFDBCap (no entry for them there; the
				 * paths to them count as unreachable too) */
	uint16_t cap_lid;	/* the first of them, 0: none */
	uint64_t hop_sum;	/* switch-to-switch hops over the good pairs */
	unsigned max_hops;
	/* the first failure found, for the message: LID and source switch */
	uint16_t bad_lid;
	int32_t  bad_switch;	/* node id, FAB_NONE when all is well */
};

static inline uint64_t routing_check_failures(const struct routing_check *c)
{
	return c->unreachable + c->loops + c->misrouted;
}

/*
 * Walk, from every CA/router port that has a LID and an up link to a
 * switch, to every assigned LID (CA/router port ranges and switch LIDs)
 * through the tables in `r`, and count how each walk ends.  The walk
 * arrives when a switch forwards to port 0 for its own LID or out of the
 * port linked to the CA/router port owning the LID.  A switch has no
 * entry for a LID at or past its LinearFDBCap (SwitchInfo): a walk that
 * needs one is unreachable, and each such LID counts in past_cap.  Cost: one step per
 * switch and LID (each switch's outcome for a LID is computed once).
 * Returns 0 or -ENOMEM.
 */
int routing_check(const struct fabric *f, const struct routing_result *r,
		  struct routing_check *c);

/*
 * Deadlock freedom (Dally and Seitz): a channel is one direction of an
 * inter-switch link; a path that arrives on channel a and leaves on
 * channel b makes b a dependency of a, in the path's layer (VL).  The
 * routes cannot deadlock when every layer's channel dependency graph is
 * acyclic.  Paths are those of routing_layer() through the LFTs, from
 * every switch that has a CA/router port (where data enters the fabric) to
 * every assigned LID.  Paths from switches without hosts are not counted:
 * they carry the switches' own management traffic (SMPs, on VL15, which
 * has no credit flow control, and GMP answers).
 */
struct routing_cdg {
	/* layers examined: max(1, n_layers); per VL (routing_check_cdg_vl):
	 * the highest VL in use + 1, and the arrays below are per VL */
	unsigned layers;
	bool per_vl;
	uint64_t channels;		/* inter-switch channels in use */
	uint64_t deps[ROUTING_MAX_LAYERS];	/* dependency edges per layer */
	/* per layer: dependency edges that close a cycle (the back edges of
	 * a depth-first search): 0 exactly when the layer is acyclic */
	uint64_t cycles[ROUTING_MAX_LAYERS];
};

static inline uint64_t routing_cdg_cycles(const struct routing_cdg *c)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < c->layers && i < ROUTING_MAX_LAYERS; i++)
		n += c->cycles[i];
	return n;
}

/* Build every layer's channel dependency graph and count its cycles.
 * Cost O(switches x LIDs + dependency edges).  0 or -ENOMEM. */
int routing_check_cdg(const struct fabric *f, const struct routing_result *r,
		      struct routing_cdg *c);
/* The same for tables with a per-hop VL map (r->port_class): layers are
 * VLs, a dependency may lead from one VL to another (verify_hop.c);
 * routing_check_cdg() calls it for such tables. */
int routing_check_cdg_hops(const struct fabric *f,
			   const struct routing_result *r,
			   struct routing_cdg *c);

/*
 * Deadlock freedom after the SL-to-VL mapping, as the packets travel:
 * each path of layer l once for every SL of layer_sls[l] (the SLs the SA
 * hands out for that layer: one per QoS class), and at every hop on the
 * VL vl(ctx, switch node, output port, SL) gives (the switch's
 * SLtoVLMappingTable, taken to be the same for every input port; a VL
 * of 15 or more: dropped).  The graph has one vertex per (channel, VL);
 * a dependency links the VLs the SL takes on both channels, so maps
 * that change VLs along a path are checked too.  c->deps and c->cycles
 * count per VL (of the channel the dependency leaves); 0 cycles in all
 * means no credit loop on any VL.  0 or -ENOMEM.
 */
struct routing_vlmap {
	unsigned (*vl)(void *ctx, int32_t node, unsigned out, unsigned sl);
	void *ctx;
	uint16_t layer_sls[ROUTING_MAX_LAYERS];
};

int routing_check_cdg_vl(const struct fabric *f,
			 const struct routing_result *r,
			 const struct routing_vlmap *m, struct routing_cdg *c);

/* For routes with a QoS split (routing_split_active()): layer_sls from
 * it (layer 0: every QoS SL in use and each class's; layer j: the SLs
 * of layer j); vl and ctx are left to the caller. */
void routing_vlmap_from_split(const struct routing_result *r,
			      struct routing_vlmap *m);

/*
 * Threads for both walks: 0 (the default) picks them from the fabric's
 * size (none below 2 M switch-LID pairs) and the online CPUs, at most 4;
 * n >= 1 uses n whatever the size (tests; at most 4).  The results do
 * not depend on it.
 */
void routing_verify_set_threads(unsigned n);

#endif /* IBSM_ROUTING_VERIFY_H */
