/*
 * routing.h - routing engines: pure functions from the fabric model to
 * linear forwarding tables.  No I/O, no logging: an engine reads the
 * model (links, node types, assigned LIDs in fab_port.lid/lmc) and fills
 * one table per switch; the daemon decides what to send.
 */
#ifndef IBSM_ROUTING_ROUTING_H
#define IBSM_ROUTING_ROUTING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/fabric.h"
#include "routing/vlsplit.h"

#define LFT_NO_PATH	0xff	/* LFT entry for an unreachable LID */

/* The LFT of one switch: port[lid] for lid 0..top (port 0 = the switch). */
struct lft {
	uint16_t top;		/* highest LID with an entry */
	uint8_t *port;		/* top + 1 entries; LFT_NO_PATH when unreachable */
};

/*
 * Virtual layers (deadlock-free engines).  A path is the walk through the
 * LFTs from the switch a packet enters the fabric at (the switch a CA or
 * router port hangs off, or the switch itself for its own traffic) to a
 * destination LID.  An engine that splits paths into layers gives each
 * (source switch, destination LID) pair a layer; the layer is the SL the
 * SA hands out in PathRecords and, through SLtoVLMappingTables that map
 * SL i to VL i on every port, the VL the packet travels on at every hop.
 * Engines that need no layers leave n_layers 0 and sl NULL: SL 0, VL 0.
 */
#define ROUTING_MAX_LAYERS	15	/* data VLs 0..14 */
#define ROUTING_PORT_CLASSES	4	/* port classes of a hop VL map */
#define ROUTING_CLASS_HOST	3	/* port 0, CA/router ports, ports to them */

struct routing_result {
	size_t n_nodes;		/* = fabric n_nodes when computed */
	struct lft *lft;	/* indexed by node id; .port NULL for non-switches */
	const char *engine;	/* name of the engine that produced it */

	/* Layers: 0 (no layers: every path SL 0) or 1..ROUTING_MAX_LAYERS. */
	uint8_t n_layers;
	/*
	 * sl[node][lid], for switch node ids and LIDs 0..lft[node].top: the
	 * layer of the path from that switch to that LID.  NULL when
	 * n_layers is 0; sl[node] NULL for non-switches.  Freed by
	 * routing_result_free().
	 */
	uint8_t **sl;
	/* One line on what the engine found and chose ("fat tree, 3 levels,
	 * 36 roots"; "torus-like, 2 layers"), or "" */
	char summary[320];
	/*
	 * The engines of the chain that failed before the one that produced
	 * these tables, with their reasons ("ftree: not a fat tree; updn:
	 * ..."), or "" when the first engine worked.  The daemon logs it: a
	 * fallback is never silent.
	 */
	char fallback[256];
	/*
	 * The engine ran routing_check_cdg() on exactly these tables and
	 * layers and found no cycle in any layer (ftree does, to decide
	 * on its layers), so the daemon's check before programming need
	 * not walk them again (11,664 hosts: 0.2 s).  Whatever changes
	 * lft or sl afterwards must clear it.
	 */
	bool cdg_acyclic;
	/*
	 * With routing_opts.qos: the QoS classes and how the layers share
	 * the SL and VL space with them (routing/vlsplit.h), laid out for
	 * n_layers; n_classes 0 without QoS.  It takes effect when the
	 * engine used more than one layer (routing_split_active()).
	 */
	struct vl_split split;
	/*
	 * The engine wanted more layers than routing_opts.max_layers gave it
	 * and routed the rest otherwise (dfsssp: up*\/down* in its last
	 * layer): the daemon says so when QoS took the VLs (never silent).
	 */
	bool layers_short;

	/*
	 * Per-hop VLs (torus, dfplus): when port_class is set, the VL of a
	 * hop is not the path's SL but vl_map[class of the port the packet
	 * entered the switch by][class of the port it leaves by][SL], the
	 * classes those of port_class[node][port] (port 0 of a switch and a
	 * CA's own port: ROUTING_CLASS_HOST).  The SL-to-VL tables are
	 * programmed from it per input and output port; n_vls counts the VLs
	 * it uses (n_layers then counts SLs, up to 16).  NULL: layer i on
	 * VL i as above.
	 */
	uint8_t n_vls;
	uint8_t **port_class;	/* [node][0 .. num_ports] */
	uint8_t vl_map[ROUTING_PORT_CLASSES][ROUTING_PORT_CLASSES][16];
};

/*
 * What the daemon tells the engines (opensm.conf keys and their files).
 * Every field may be zero/NULL: engines then decide from the fabric.
 */
struct routing_opts {
	/* root_guid_file: node GUIDs of the root (top-level) switches */
	const uint64_t *root_guids;
	size_t n_root_guids;
	/* cn_guid_file: port GUIDs of the compute nodes (ftree) */
	const uint64_t *cn_guids;
	size_t n_cn_guids;
	/* Layers a deadlock-free engine may use: at most this many, and at
	 * most what every inter-switch port's OperationalVLs (or VLCap, when
	 * OperationalVLs is 0) allows.  0: from the fabric alone. */
	unsigned max_layers;
	/* "no_fallback" in the engine list: auto runs only the engine it
	 * picks (routing_run_opts sets it from the list) */
	bool no_fallback;
	/* OpenSM's rule for the daemon's list: when every listed engine
	 * fails, try minhop last, unless the list names minhop or auto or
	 * says no_fallback (false: the list alone, as for tests) */
	bool minhop_last;
	/*
	 * `qos TRUE`: the QoS SLs in use and their VLs.  routing_run_opts()
	 * then splits the VLs between the QoS classes (routing/vlsplit.h)
	 * and lowers max_layers to one class's share before running the
	 * engines, which need not know: they only obey max_layers.  NULL:
	 * no QoS, the layers have every VL.
	 */
	const struct vl_qos *qos;
	/* SLs an engine may give paths, per QoS class (0: 16).  Engines
	 * whose layer j travels on VL j stay within max_layers, which is
	 * never more; an engine with per-hop VLs may use up to max_sls
	 * SLs on its max_layers VLs. */
	unsigned max_sls;
	/* nue_max_num_vls: VLs the nue engine may use (0: as many as the
	 * fabric and max_layers allow) */
	unsigned nue_max_vls;
	/* lfts_file: OpenSM's LFT dump for the file engine (NULL: none) */
	const char *lfts_file;
	/* torus_config as read (routing/torus_conf.h; NULL: none) */
	const struct torus_conf *torus_conf;
	/*
	 * guid_routing_order_file (routing/order.h): port GUIDs whose LIDs
	 * minhop, updn, dnup and dfsssp route first, in this order, before
	 * every other LID (routing_lid_order()).  NULL: the engine's order.
	 */
	const uint64_t *order_guids;
	size_t n_order_guids;
	/*
	 * port_search_ordering_file resolved on the fabric being routed
	 * (port_order_resolve()): port_rank[node id] is NULL or the search
	 * rank of each of that switch's ports 0 .. num_ports, lower first.
	 * Among equally good egress ports minhop, updn, dnup and dfsssp take
	 * the one ranked first where they would take the lowest-numbered.
	 * n_port_rank: the entries (the fabric's n_nodes).  NULL: port order.
	 */
	const uint8_t *const *port_rank;
	size_t n_port_rank;
	/* io_guid_file: port GUIDs of the I/O nodes (ftree): not compute
	 * nodes; their LIDs may be reached with max_reverse_hops reverse
	 * (down-then-up) hops */
	const uint64_t *io_guids;
	size_t n_io_guids;
	unsigned max_reverse_hops;
	/*
	 * hop_weights_file resolved on the fabric (port_vals_resolve()):
	 * hop_wf[node id] NULL or the weight (1-255) of each of that
	 * switch's ports 0 .. num_ports, 1 where the file sets none.  minhop
	 * then takes paths of least summed weight of the ports a packet
	 * leaves switches by (instead of least hops).  NULL: every port 1.
	 */
	const uint8_t *const *hop_wf;
	size_t n_hop_wf;
	/*
	 * port_prof_ignore_file resolved likewise: prof_ignore[node id] NULL
	 * or non-zero for each port whose routes minhop does not count in
	 * that switch's per-port load.  NULL: every port counts.
	 */
	const uint8_t *const *prof_ignore;
	size_t n_prof_ignore;
	/* port_profile_switch_nodes: minhop counts the routes to switch
	 * LIDs in the per-port load too (false: CA/router LIDs only) */
	bool profile_switch_nodes;
	/* connect_roots: updn routes the LIDs of its root switches (their
	 * own and their CAs') by shortest paths from every switch, as
	 * OpenSM, when that keeps the routes free of credit loops
	 * (routing/updn.c) */
	bool connect_roots;
	/* ids_guid_file (routing/order.h): id_guids[i] (a switch node GUID)
	 * has id ids[i] where updn breaks ties between equal ranks */
	const uint64_t *id_guids;
	const uint64_t *ids;
	size_t n_ids;
};

/* The byte array of switch `node` in a per-node table (hop_wf,
 * prof_ignore), or NULL when it has none. */
static inline const uint8_t *routing_node_vals(const uint8_t *const *v,
					       size_t n, int32_t node)
{
	if (!v || node < 0 || (size_t)node >= n)
		return NULL;
	return v[node];
}

/* The search rank of switch `node`'s ports (routing_opts.port_rank), or
 * NULL when it has none. */
static inline const uint8_t *routing_port_rank(const struct routing_opts *o,
					       int32_t node)
{
	if (!o || !o->port_rank || node < 0 || (size_t)node >= o->n_port_rank)
		return NULL;
	return o->port_rank[node];
}

struct routing_engine {
	const char *name;
	/*
	 * Fill `out` (zeroed by the caller) for every switch of `f`.  Returns
	 * 0, or -errno with a one-line reason in err (e.g. -ENOENT "no root
	 * switches found") so the chain can fall back to the next engine.
	 */
	int (*route)(const struct fabric *f, const struct routing_opts *o,
		     struct routing_result *out, char *err, size_t errlen);
};

/* The engine called `name` (an OpenSM name ibsm maps to another
 * engine: that engine), or NULL. */
const struct routing_engine *routing_find(const char *name);

/* Whether `list` is a valid engine list for routing_run() (0 or -EINVAL
 * with the reason in err). */
int routing_check_list(const char *list, char *err, size_t errlen);

/* The known engine names, comma-separated, into buf (for messages). */
void routing_engine_names(char *buf, size_t len);

/* What the OpenSM names in `list` that ibsm maps to another engine map
 * to and why ("lash -> nue (deadlock-free ...)"), "; "-separated, into
 * buf; "" when the list has none.  For the daemon to log. */
void routing_aliases(const char *list, char *buf, size_t len);

/*
 * Run a comma-separated list of engines ("minhop", "updn,minhop") in order
 * until one succeeds.  Unknown names are an error (-EINVAL, named in err).
 * The word "no_fallback" names no engine; with o->minhop_last (the
 * daemon, as OpenSM's routing_engine), minhop is tried last when every
 * listed engine fails, unless the list names minhop or auto or holds
 * "no_fallback".  On success out->engine names the engine that produced
 * the tables and out->fallback the engines that failed before it.
 */
int routing_run(const char *list, const struct fabric *f,
		struct routing_result *out, char *err, size_t errlen);
/* The same with options (NULL: none); `o` is passed to every engine. */
int routing_run_opts(const char *list, const struct fabric *f,
		     const struct routing_opts *o, struct routing_result *out,
		     char *err, size_t errlen);

/* The layer (SL) of the path from switch `sw` to `lid`: 0 without layers. */
static inline unsigned routing_layer(const struct routing_result *r,
				     int32_t sw, uint16_t lid)
{
	if (!r->sl || sw < 0 || (size_t)sw >= r->n_nodes || !r->sl[sw] ||
	    lid > r->lft[sw].top)
		return 0;
	return r->sl[sw][lid];
}

/* QoS classes and layers share the SL/VL space (both in force). */
static inline bool routing_split_active(const struct routing_result *r)
{
	return r->split.n_classes && r->n_layers > 1 && r->sl;
}

/*
 * The SL a path from switch `sw` to `lid` travels on when its QoS SL
 * (the SA's choice: the query's, the QoS level's, the partition's or the
 * default) is `qos_sl`: qos_sl itself without layers; the layer without
 * QoS (SL i on VL i); with both, the SL of that layer within the QoS
 * SL's class (vlsplit_path_sl()).
 */
static inline unsigned routing_path_sl(const struct routing_result *r,
				       unsigned qos_sl, int32_t sw,
				       uint16_t lid)
{
	if (!r->sl || !r->n_layers || (r->split.n_classes && r->n_layers < 2))
		return qos_sl & 15;
	if (r->split.n_classes)
		return vlsplit_path_sl(&r->split, qos_sl,
				       routing_layer(r, sw, lid));
	return routing_layer(r, sw, lid) & 15;
}

/* The VL of the hop leaving switch (or CA) `node` by port `out` for a
 * packet that entered by port `in` (0: the node itself) on SL `sl`. */
static inline unsigned routing_hop_vl(const struct routing_result *r,
				      int32_t node, unsigned in, unsigned out,
				      unsigned sl)
{
	const uint8_t *pc;

	if (!r->port_class)
		return sl;
	if (node < 0 || (size_t)node >= r->n_nodes ||
	    !(pc = r->port_class[node]))
		return 0;
	return r->vl_map[pc[in] & 3][pc[out] & 3][sl & 15];
}

void routing_result_free(struct routing_result *r);

#endif /* IBSM_ROUTING_ROUTING_H */
