/*
 * sm/program/port.c - the directed route to a port and the PortInfo a port
 * should have (see sm/program.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sm/mkey.h"
#include "sm/program/internal.h"

void port_path(const struct fabric *f, int32_t id, uint8_t pn,
	       const uint8_t **path, unsigned *hops)
{
	const struct fab_node *n = fabric_node(f, id);
	const struct fab_port *p = &n->ports[pn];

	if (n->type != NODE_TYPE_SWITCH && pn && (p->hops || p->guid)) {
		*path = p->path;
		*hops = p->hops;
	} else {
		*path = n->path;
		*hops = n->hops;
	}
}

/*
 * PortInfo:PartitionEnforcementInbound (0x8) and Outbound (0x4) of byte
 * 43 (14.2.5.6) as opensm.conf part_enforce sets them on a switch port
 * facing an end port with partitions: both, in, out, or neither.  The
 * switch then drops packets whose P_Key that port's table lacks
 * (10.9.3).  Without partitions (no want_pkeys) the bits are left as
 * they are: nothing changes on the wire.  A port without a table
 * (PartitionEnforcementCap 0) gets none: see port_desired().
 */
static unsigned pi_part_enforce_bits(enum sm_part_enforce e)
{
	switch (e) {
	case SM_PART_ENFORCE_BOTH:
		return PI_PART_ENFORCE_IN | PI_PART_ENFORCE_OUT;
	case SM_PART_ENFORCE_IN:
		return PI_PART_ENFORCE_IN;
	case SM_PART_ENFORCE_OUT:
		return PI_PART_ENFORCE_OUT;
	case SM_PART_ENFORCE_OFF:
		break;
	}
	return 0;
}

static unsigned min3(unsigned a, unsigned b, unsigned c)
{
	unsigned m = a < b ? a : b;
	return m < c ? m : c;
}

/*
 * PortInfo:OperationalVLs (its encoding: 1 VL0, 2 VL0-1, 3 VL0-3, 4 VL0-7,
 * 5 VL0-14) a linked port `pn` should run: the least VLCap of both ends,
 * at most max_op_vls.  0 when the port's VLCap is 0 (unknown).
 */
unsigned link_op_vls(const struct sm_config *cfg, const struct fabric *f,
		     int32_t id, uint8_t pn)
{
	const struct fab_port *p = &fabric_node(f, id)->ports[pn];
	unsigned vls = pi_vl_cap(&p->pi);

	if (p->peer_node != FAB_NONE) {
		const struct fab_port *pp =
			&fabric_node(f, p->peer_node)->ports[p->peer_port];

		if (pp->valid)
			return min3(vls, pi_vl_cap(&pp->pi), cfg->max_op_vls);
	}
	return vls < cfg->max_op_vls ? vls : cfg->max_op_vls;
}

bool port_desired(const struct sm_config *cfg, const struct fabric *f,
		  int32_t id, uint8_t pn, uint16_t sm_lid, unsigned want_state,
		  bool rereg, struct smp_port_info *out)
{
	const struct fab_node *n = fabric_node(f, id);
	const struct fab_port *p = &n->ports[pn];
	const struct smp_port_info *cur = &p->pi;
	bool endport = n->type != NODE_TYPE_SWITCH || pn == 0;
	bool differs = false;

	*out = *cur;
	/* Fields whose zero means "no change" on a Set. */
	pi_set_port_state(out, want_state);
	pi_set_phys_state(out, 0);
	out->phys_state_down_def &= 0xf0;
	pi_set_client_rereg(out, 0);

	if (endport) {
		/* M_Key, its protection and lease (sm/mkey.h; m_key 0:
		 * none, as OpenSM) */
		out->mkey = htobe64(mkey_want(cfg, p->guid));
		out->gid_prefix = htobe64(cfg->subnet_prefix);
		out->lid = htobe16(p->lid);
		out->master_sm_lid = htobe16(sm_lid);
		out->mkey_lease_period = htobe16(cfg->m_key ? (uint16_t)
						 cfg->m_key_lease_period : 0);
		out->mkey_prot_lmc = (uint8_t)(cfg->m_key ?
			(cfg->m_key_protection_level & 3u) << 6 : 0);
		pi_set_lmc(out, p->lmc);
		out->neighbor_mtu_sm_sl &= 0xf0;	/* MasterSMSL 0 */
		pi_set_subnet_timeout(out, cfg->subnet_timeout);
		if (rereg && n->type != NODE_TYPE_SWITCH) {
			pi_set_client_rereg(out, 1);
			differs = true;
		}
		differs |= cur->mkey != out->mkey ||
			   cur->mkey_lease_period != out->mkey_lease_period ||
			   pi_mkey_prot(cur) != pi_mkey_prot(out) ||
			   cur->gid_prefix != out->gid_prefix ||
			   cur->lid != out->lid ||
			   cur->master_sm_lid != out->master_sm_lid ||
			   pi_lmc(cur) != p->lmc ||
			   pi_sm_sl(cur) != 0 ||
			   pi_subnet_timeout(cur) != cfg->subnet_timeout;
	}
	if (pn && p->peer_node != FAB_NONE) {
		const struct fab_node *peer = fabric_node(f, p->peer_node);
		const struct fab_port *pp = &peer->ports[p->peer_port];
		unsigned mtu = pi_mtu_cap(cur), vls = link_op_vls(cfg, f, id, pn);

		if (pp->valid && pi_mtu_cap(&pp->pi) < mtu)
			mtu = pi_mtu_cap(&pp->pi);
		if (mtu && mtu != pi_neighbor_mtu(cur)) {
			pi_set_neighbor_mtu(out, mtu);
			differs = true;
		}
		if (vls && vls != pi_op_vls(cur)) {
			pi_set_op_vls(out, vls);
			differs = true;
		}
		/* qos TRUE: the port class's VLHighLimit (OpenSM's, with
		 * the same fallbacks as the tables) */
		if (cfg->qos) {
			enum qos_class c = qos_port_class(f, id, pn);
			uint8_t hl = qos_high_limit(&cfg->qos_keys[c],
						    &cfg->qos_keys[QOS_BASE]);

			if (hl != cur->vl_high_limit) {
				out->vl_high_limit = hl;
				differs = true;
			}
		}
		/* Enable every width and speed the port supports (OpenSM's
		 * force_link_width 255 / force_link_speed 15 defaults): 0xff
		 * and 15 mean "set to LinkWidth/SpeedSupported".  Only while
		 * the link is being brought up: on an ACTIVE link a new
		 * enable set makes the port retrain, a flap for no gain. */
		bool bringing_up = pi_port_state(cur) == PORT_STATE_INIT;
		if (bringing_up &&
		    cur->link_width_enabled != cur->link_width_supported) {
			out->link_width_enabled = 0xff;
			differs = true;
		}
		if (bringing_up &&
		    pi_speed_enabled(cur) != pi_speed_supported(cur)) {
			out->speed_active_enabled = (uint8_t)
				((cur->speed_active_enabled & 0xf0) | 0xf);
			differs = true;
		}
		if (n->type == NODE_TYPE_SWITCH &&
		    peer->type != NODE_TYPE_SWITCH &&
		    (pp->want_pkeys || p->want_pkeys)) {
			/* A switch whose SwitchInfo:PartitionEnforcementCap
			 * is 0 has no table on its external ports: nothing to
			 * enforce with, so no bits (bits someone else set
			 * there are cleared).  OpenSM 3.3.23 skips such a
			 * port and leaves its bits as they are. */
			bool table = n->has_switch_info &&
				     n->si.partition_enf_cap && p->pkey_blocks;
			unsigned bits = table ?
				pi_part_enforce_bits(cfg->part_enforce) : 0;

			if ((cur->op_vls_enforce & PI_PART_ENFORCE_MASK) != bits) {
				out->op_vls_enforce = (uint8_t)
					((out->op_vls_enforce & ~PI_PART_ENFORCE_MASK) |
					 bits);
				differs = true;
			}
		}
		if (n->type == NODE_TYPE_SWITCH) {
			unsigned hoq = peer->type == NODE_TYPE_SWITCH
				       ? cfg->head_of_queue_lifetime
				       : cfg->leaf_head_of_queue_lifetime;
			if ((cur->vl_stall_hoq_life & 0x1f) != (hoq & 0x1f)) {
				out->vl_stall_hoq_life = (uint8_t)
					((cur->vl_stall_hoq_life & 0xe0) | (hoq & 0x1f));
				differs = true;
			}
		}
	}
	if (want_state != PORT_STATE_NOP && want_state != pi_port_state(cur))
		differs = true;
	return differs;
}
