/*
 * sm/program/qos.c - the QoS tables of `qos TRUE` (see sm/program.h):
 * each port's class SL-to-VL and VL arbitration tables from the qos_*
 * keys.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "sm/program/internal.h"

enum qos_class qos_port_class(const struct fabric *f, int32_t id,
			      unsigned pn)
{
	const struct fab_node *n = fabric_node(f, id);

	if (n->type == NODE_TYPE_SWITCH)
		return pn ? QOS_SWE : QOS_SW0;
	return n->type == NODE_TYPE_ROUTER ? QOS_RTR : QOS_CA;
}

/* The class's table as sent on a port running `op` (its OperationalVLs
 * encoding): VL 15 kept, other VLs masked to the port's VLs, as OpenSM
 * does. */
static void qos_want(const struct qos_tables *t, unsigned op,
		     uint8_t tab[SL2VL_BYTES])
{
	unsigned mask = op ? (1u << (op - 1)) - 1 : 0;

	memset(tab, 0, SL2VL_BYTES);
	for (unsigned sl = 0; sl < QOS_SL_N; sl++) {
		unsigned vl = t->sl2vl[sl];

		if (vl != 15)
			vl &= mask;
		tab[sl / 2] |= (uint8_t)(sl % 2 ? vl : vl << 4);
	}
}

static int class_tables(const struct sm_config *cfg, enum qos_class c,
			struct qos_tables *t)
{
	char err[160];

	/* the keys were checked when read: this fails only on a bug */
	return qos_build_tables(t, &cfg->qos_keys[c], &cfg->qos_keys[QOS_BASE],
				err, sizeof(err));
}

/*
 * A VL arbitration list for QoS classes sharing the VLs with layers
 * (routing/vlsplit.h): each entry of weight > 0 that names a class's VL
 * in the QoS table becomes one entry per VL of that class, with the same
 * weight, in list order (every class has as many VLs, so the classes'
 * shares stay as configured); entries of weight 0 or naming a VL no
 * class has carry nothing and are left out.  At most 64 entries.
 */
static void split_vlarb(const struct vl_split *s,
			const struct qos_vlarb_entry *in,
			struct qos_vlarb_entry *out)
{
	bool merged = s->n_classes < s->qos_classes;
	unsigned n = 0;

	memset(out, 0, QOS_VLARB_ENTRIES * sizeof(*out));
	for (unsigned i = 0; i < QOS_VLARB_ENTRIES; i++) {
		unsigned key = merged && s->vls < 15 ? in[i].vl & (s->vls - 1u)
						     : in[i].vl;

		if (!in[i].weight)
			continue;
		for (unsigned c = 0; c < s->n_classes; c++) {
			if (s->class_vl[c] != key)
				continue;
			for (unsigned j = 0; j < s->class_vls &&
			     n < QOS_VLARB_ENTRIES; j++) {
				out[n].vl = (uint8_t)(c * s->class_vls + j);
				out[n++].weight = in[i].weight;
			}
		}
	}
}

/*
 * The VLArbitrationTable blocks of port `pn` as OpenSM sends them: low
 * entries 0-31 (block 1) when VLArbitrationLowCap > 0, 32-63 (block 2)
 * when it is > 32, the same for the high table (blocks 3, 4); a block's
 * entries past the cap (OpenSM: min(cap, 32), then cap % 32) are zero,
 * VLs masked to the port's OperationalVLs.  The modifier: block << 16,
 * and on a switch the port.
 */
static int vlarb_port(struct smp_batch *b, struct sl2vl_images *im,
		      const struct sm_config *cfg, struct fabric *f,
		      int32_t id, unsigned pn, const struct qos_tables *t,
		      const struct routing_result *r, unsigned *sets)
{
	const struct fab_port *p = &fabric_node(f, id)->ports[pn];
	bool sw = fabric_node(f, id)->type == NODE_TYPE_SWITCH;
	unsigned op = link_op_vls(cfg, f, id, (uint8_t)pn);
	unsigned mask = op ? (1u << (op - 1)) - 1 : 0;
	int queued = 0, rc;

	for (unsigned blk = 0; blk < 4; blk++) {
		const struct qos_vlarb_entry *e = blk < 2 ? t->vlarb_low :
						   t->vlarb_high;
		unsigned cap = blk < 2 ? p->pi.vl_arb_low_cap :
			       p->pi.vl_arb_high_cap;
		unsigned half = blk % 2, len;
		uint8_t want[VLARB_BYTES];

		if (!half)
			len = cap < QOS_VLARB_BLOCK ? cap : QOS_VLARB_BLOCK;
		else
			len = cap > QOS_VLARB_BLOCK ? cap % QOS_VLARB_BLOCK : 0;
		if (!cap || (half && cap <= QOS_VLARB_BLOCK))
			continue;
		memset(want, 0, sizeof(want));
		for (unsigned i = 0; i < len; i++) {
			unsigned vl = e[half * QOS_VLARB_BLOCK + i].vl;

			/* a split's VL where the port has fewer VLs: the
			 * one its SL-to-VL table gives (vlsplit.h) */
			if (r)
				vl = vlsplit_port_vl(&r->split, vl,
						     op_vls_count(op));
			want[2 * i] = (uint8_t)(vl & mask);
			want[2 * i + 1] = e[half * QOS_VLARB_BLOCK + i].weight;
		}
		struct table_key k = { 0, pn, blk + 1, SMP_ATTR_VL_ARB_TABLE,
				       (blk + 1) << 16 | (sw ? pn : 0) };
		if ((rc = table_one(b, im, f, id, &k, want, VLARB_BYTES,
				    sets)) < 0)
			return rc;
		queued += rc;
	}
	return queued;
}

int program_qos_vlarb(struct smp_batch *b, struct sl2vl_images *im,
		      const struct sm_config *cfg, struct fabric *f,
		      int32_t id, const struct routing_result *r,
		      unsigned *sets)
{
	struct fab_node *n = fabric_node(f, id);
	struct qos_tables t;
	int queued = 0, rc;

	if (class_tables(cfg, qos_port_class(f, id, 1), &t) < 0)
		return -EINVAL;
	if (r && routing_split_active(r)) {
		struct qos_vlarb_entry e[QOS_VLARB_ENTRIES];

		split_vlarb(&r->split, t.vlarb_high, e);
		memcpy(t.vlarb_high, e, sizeof(e));
		split_vlarb(&r->split, t.vlarb_low, e);
		memcpy(t.vlarb_low, e, sizeof(e));
	}
	for (unsigned pn = 1; pn <= n->num_ports; pn++) {
		const struct fab_port *p = &n->ports[pn];

		if (!p->valid || p->peer_node == FAB_NONE)
			continue;
		if ((rc = vlarb_port(b, im, cfg, f, id, pn, &t,
				     r && routing_split_active(r) ? r : NULL,
				     sets)) < 0)
			return rc;
		queued += rc;
	}
	return queued;
}

int program_qos_sl2vl(struct smp_batch *b, struct sl2vl_images *im,
		      const struct sm_config *cfg, struct fabric *f,
		      int32_t id, unsigned *sets)
{
	struct fab_node *n = fabric_node(f, id);
	struct qos_tables t;
	uint8_t want[SL2VL_BYTES];
	int queued = 0, rc;

	if (n->type != NODE_TYPE_SWITCH) {
		if (class_tables(cfg, qos_port_class(f, id, 1), &t) < 0)
			return -EINVAL;
		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (p->peer_node == FAB_NONE || !sl_mapping(p))
				continue;
			qos_want(&t, link_op_vls(cfg, f, id, (uint8_t)pn), want);
			if ((rc = sl2vl_one(b, im, f, id, 0, pn, want, sets)) < 0)
				return rc;
			queued += rc;
		}
		return queued;
	}
	if (!sl_mapping(&n->ports[0]) ||
	    class_tables(cfg, QOS_SWE, &t) < 0)
		return 0;
	/* every input port, linked or not (OpenSM sets them all) */
	for (unsigned out = 1; out <= n->num_ports; out++) {
		const struct fab_port *po = &n->ports[out];

		if (!po->valid || po->peer_node == FAB_NONE)
			continue;
		qos_want(&t, link_op_vls(cfg, f, id, (uint8_t)out), want);
		for (unsigned in = 0; in <= n->num_ports; in++) {
			if ((rc = sl2vl_one(b, im, f, id, in, out, want, sets)) < 0)
				return rc;
			queued += rc;
		}
	}
	return queued;
}
