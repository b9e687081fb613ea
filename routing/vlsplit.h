/*
 * vlsplit.h - QoS classes and virtual layers sharing the SL and VL space
 * (`qos TRUE` with a layered, deadlock-free engine).  Pure: no I/O, no
 * logging.
 *
 * The rule (ibsm(8) VIRTUAL LAYERS):
 *
 *   1. Classes.  The QoS SLs in use (the SLs the SA hands out: the QoS
 *      policy's levels, partitions' sl=, the default SL) are grouped by
 *      the VL the QoS SL-to-VL table (qos_swe_sl2vl) gives them: one
 *      class per distinct VL, classes numbered in VL order.  SLs the
 *      table sends to VL 15 (dropped) form no class.  When the fabric's
 *      inter-switch ports hold fewer data VLs V than there are classes,
 *      classes merge as the QoS tables themselves would on such ports:
 *      by VL & (V - 1) (V = 1, 2, 4 or 8).
 *   2. Budget.  Each of the N classes gets L = floor(V / N) VLs, also
 *      bounded by the 16 SLs (each class's extra layers need SLs of their
 *      own: SLs in use + N x (L - 1) <= 16) and by the engine's own
 *      budget (max_op_vls).  The engine routes with at most L layers.
 *   3. Layout, once the engine has said how many layers it used (L'):
 *      class c owns VLs c*L' .. c*L' + L' - 1; layer j of class c travels
 *      on VL c*L' + j.  Its SL: layer 0 keeps the QoS SL itself (every SL
 *      of the class maps to VL c*L'); layer j >= 1 of class c gets an SL
 *      no class uses, taken in ascending order, layer by layer and class
 *      by class.  Other SLs map to their class's layer-0 VL (their class
 *      by the QoS table, else the default SL's class).
 *
 * With one class (no policy: the default SL alone) this is SL i on VL i,
 * the layout without QoS.  Torus-2QoS does the same with two fixed
 * classes (SL bit 3, VL bit 2); OpenSM's dfsssp and LASH override the
 * QoS SL with the layer's and leave the VL space to the site.
 */
#ifndef IBSM_ROUTING_VLSPLIT_H
#define IBSM_ROUTING_VLSPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VLS_SL_N	16	/* service levels */
#define VLS_MAX		15	/* data VLs 0..14, at most 15 classes/layers */

/* What QoS asks for (routing_opts.qos). */
struct vl_qos {
	uint16_t sls;			/* QoS SLs in use, one bit each */
	uint8_t  vl[VLS_SL_N];		/* the QoS SL-to-VL table */
	uint8_t  default_sl;		/* SL of the paths nothing else names */
};

struct vl_split {
	uint8_t  n_classes;		/* 0: no split (no QoS, or no layers) */
	uint8_t  layers;		/* layers (path SLs) per class */
	/* VLs per class: = layers when layer j travels on VL j (every
	 * engine so far); an engine with per-hop VLs (n_vls) sets it */
	uint8_t  class_vls;
	uint8_t  vls;			/* data VLs of the inter-switch ports */
	uint8_t  qos_classes;		/* classes before merging */
	uint8_t  wanted;		/* layers the engine had without QoS */
	uint8_t  budget;		/* layers per class it was given */
	uint8_t  sl_budget;		/* SLs per class the 16 SLs allow */
	bool     sl_bound;		/* the budget came from the 16 SLs */
	uint16_t sls;			/* the QoS SLs in use (classes') */
	uint16_t reserved;		/* every SL QoS names (VL 15 too):
					 * never a layer's */
	uint8_t  class_vl[VLS_MAX];	/* per class: its VL in the QoS table
					 * (masked when merged) */
	uint8_t  home[VLS_SL_N];	/* per SL: its class by the QoS table */
	uint8_t  class_of[VLS_SL_N];	/* per SL, layer SLs included */
	uint8_t  layer_of[VLS_SL_N];	/* per SL: the layer it carries */
	uint8_t  vl_of[VLS_SL_N];	/* per SL: its VL (ports with >= vls) */
	uint8_t  sl[VLS_MAX][VLS_MAX];	/* [class][layer]: the SL */
};

/*
 * Steps 1 and 2: the classes of `q` on a fabric whose inter-switch ports
 * hold `vls` data VLs (1-15), and the layers each class may have, at
 * most `max_layers` (0: no bound).  Fills s (layers = the budget).
 * -EINVAL when q names no SL.
 */
int vlsplit_plan(const struct vl_qos *q, unsigned vls, unsigned max_layers,
		 struct vl_split *s);

/* Step 3: the layout for the `used` layers the engine used (1 .. the
 * budget; clamped). */
void vlsplit_layout(struct vl_split *s, unsigned used);

/* The SL of a path whose QoS SL is `qos_sl` in layer `layer`. */
unsigned vlsplit_path_sl(const struct vl_split *s, unsigned qos_sl,
			 unsigned layer);

/* The VL of split VL `vl` (c * class_vls + j) on a port holding
 * `port_vls` data VLs, as vlsplit_sl2vl() maps its SLs there. */
unsigned vlsplit_port_vl(const struct vl_split *s, unsigned vl,
			 unsigned port_vls);

/*
 * The SL-to-VL table of a port holding `port_vls` data VLs (0: unknown,
 * taken as all): vl_of; on a port with fewer VLs than the split (a CA's
 * link: no credit loop passes it) each class gets port_vls / N of them
 * (its layers beyond share the last), or, with fewer VLs than classes,
 * VL class % port_vls.
 */
void vlsplit_sl2vl(const struct vl_split *s, unsigned port_vls,
		   uint8_t vl[VLS_SL_N]);

/* The classes as a line for the log: "2 QoS classes (SL 0 on VL 0-1,
 * SL 1,3 on VL 2-3), 2 layers each". */
void vlsplit_describe(const struct vl_split *s, char *buf, size_t len);

/* What was reduced to fit, "" when nothing: classes merged, layers
 * capped (by the VLs or by the SLs) when the engine used every layer it
 * had and said it was `short` of layers. */
void vlsplit_reduced(const struct vl_split *s, unsigned used, bool short_,
		     char *buf, size_t len);

/* Data VLs of the inter-switch links of `f` that are up: the least of
 * OperationalVLs (else VLCap) over their ports, at most `cap` (0: 15). */
struct fabric;
unsigned vlsplit_fabric_vls(const struct fabric *f, unsigned cap);

#endif /* IBSM_ROUTING_VLSPLIT_H */
