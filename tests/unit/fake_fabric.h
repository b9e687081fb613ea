/*
 * fake_fabric.h - a scripted fabric behind the fake transport: switches,
 * CAs and links in plain arrays, answering directed-route SMPs the way
 * nodes do (NodeInfo, NodeDescription, SwitchInfo, PortInfo, P_KeyTable,
 * LFT), for unit tests and fuzz targets of the discovery and the Sets.
 *
 * A DR SMP is walked hop by hop from the local node along its initial
 * path; a hop through a port that does not exist, is not linked or is
 * down, or through a CA, loses the SMP (it times out, as on a fabric).
 * Each node can be made to drop Sets (all, or only LFT Sets: ibsim's
 * `Error "node" 100 0x19`), and a test hook can rewrite or drop any
 * answer before it is delivered: hostile nodes.
 *
 * Header-only; include after fake_transport.h.
 */
#ifndef IBSM_TESTS_FAKE_FABRIC_H
#define IBSM_TESTS_FAKE_FABRIC_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "mad/wire.h"
#include "tests/unit/fake_transport.h"

#define FF_MAX_NODES	64
#define FF_MAX_PORTS	36

struct ff_port {
	int	 peer;			/* node index, -1: not linked */
	uint8_t	 peer_port;
	uint8_t	 state;			/* PORT_STATE_*; 0: as the link says */
	uint16_t lid;			/* as Set */
};

struct ff_node {
	uint64_t guid;			/* NodeGUID */
	uint64_t port_guid;		/* switch: port 0; CA: port 1 (port n: +n-1) */
	uint8_t	 type;			/* NODE_TYPE_* */
	uint8_t	 nports;
	char	 desc[64];
	struct ff_port port[FF_MAX_PORTS + 1];
	bool	 drop_sets;		/* never acknowledges a Set */
	bool	 drop_lft_sets;		/* never acknowledges an LFT Set */
	uint16_t lft_top;		/* SwitchInfo:LinearFDBTop as Set */
	uint8_t	 life;			/* SwitchInfo:LifeTimeValue (<< 3) as Set */
	unsigned sets[0x20];		/* Sets received, by attribute ID (< 0x20) */
	unsigned gets[0x20];
	uint32_t last_lft_block;	/* AttributeModifier of the last LFT Set */
	bool	 sl_map;		/* CapabilityMask:IsSLMappingSupported */
	/* SLtoVLMappingTables by [input][output] port (a CA's: [0][port]) */
	uint8_t	 sl2vl[FF_MAX_PORTS + 1][FF_MAX_PORTS + 1][8];
	/* M_Key of each end port (a CA's ports, a switch's port 0) */
	struct ff_mkey {
		uint64_t key;
		uint16_t lease;		/* M_KeyLeasePeriod, s (0: forever) */
		uint8_t	 prot;		/* M_KeyProtectBits */
		bool	 lease_on;	/* the lease timer runs */
		double	 lease_end;
		uint16_t violations;	/* M_KeyViolations */
		unsigned traps;		/* traps 256 the port sends */
	} mk[FF_MAX_PORTS + 1];
};

struct fake_fabric;
/* Rewrite the answer `resp` of node `node` (entered at `in_port`); return
 * false to drop it instead. */
typedef bool (*ff_mutate_fn)(struct fake_fabric *ff, int node, uint8_t in_port,
			     struct smp_dr *resp, void *arg);

struct fake_fabric {
	struct fake	*fk;
	struct ff_node	 node[FF_MAX_NODES];
	int		 n;
	int		 local;		/* the SM's node */
	uint8_t		 local_port;
	ff_mutate_fn	 mutate;
	void		*mutate_arg;
	size_t		 cut_to;	/* set by mutate: deliver only this many bytes */
	unsigned	 answered, lost;
};

static inline int ff_add(struct fake_fabric *ff, uint8_t type, uint8_t nports,
			 uint64_t guid, const char *desc)
{
	struct ff_node *n = &ff->node[ff->n];

	memset(n, 0, sizeof(*n));
	n->guid = guid;
	n->port_guid = type == NODE_TYPE_SWITCH ? guid : guid + 1;
	n->type = type;
	n->nports = nports;
	strncpy(n->desc, desc, sizeof(n->desc) - 1);
	for (unsigned p = 0; p <= FF_MAX_PORTS; p++)
		n->port[p].peer = -1;
	return ff->n++;
}

static inline void ff_link(struct fake_fabric *ff, int a, uint8_t pa, int b,
			   uint8_t pb)
{
	ff->node[a].port[pa].peer = b;
	ff->node[a].port[pa].peer_port = pb;
	ff->node[b].port[pb].peer = a;
	ff->node[b].port[pb].peer_port = pa;
}

/* State of a port as PortInfo reports it. */
static inline unsigned ff_state(const struct ff_node *n, unsigned p)
{
	if (n->port[p].state)
		return n->port[p].state;
	if (p == 0 && n->type == NODE_TYPE_SWITCH)
		return PORT_STATE_ACTIVE;
	return n->port[p].peer >= 0 ? PORT_STATE_INIT : PORT_STATE_DOWN;
}

/* Follow the initial path of a DR SMP: the node reached and the port it
 * was entered at, or -1 when the SMP is lost on the way. */
static inline int ff_walk(const struct fake_fabric *ff, const struct smp_dr *s,
			  uint8_t *in_port)
{
	unsigned hops = smp_dr_hop_cnt(s);
	int cur = ff->local;
	uint8_t in = ff->local_port;

	for (unsigned i = 1; i <= hops; i++) {
		const struct ff_node *n = &ff->node[cur];
		unsigned p = s->initial_path[i];

		/* A CA or router forwards nothing; only the SM's own node
		 * sends out of one of its ports. */
		if (i > 1 && n->type != NODE_TYPE_SWITCH)
			return -1;
		if (p == 0 || p > n->nports || n->port[p].peer < 0 ||
		    ff_state(n, p) < PORT_STATE_INIT)
			return -1;
		in = n->port[p].peer_port;
		cur = n->port[p].peer;
	}
	*in_port = in;
	return cur;
}

static inline void ff_port_info(const struct ff_node *n, unsigned p,
				struct smp_port_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->lid = htobe16(n->port[p].lid);
	pi->local_port = (uint8_t)p;
	pi->link_width_enabled = pi->link_width_supported = 2;
	pi->link_width_active = 2;
	pi->speed_supported_state = (uint8_t)(1u << 4 | ff_state(n, p));
	pi->phys_state_down_def = (uint8_t)((ff_state(n, p) >= PORT_STATE_INIT
					     ? 5u : 2u) << 4 | 2u);
	pi->speed_active_enabled = 1u << 4 | 1u;
	pi->neighbor_mtu_sm_sl = 5u << 4;
	pi->vl_cap_init_type = 4u << 4;
	pi->init_type_reply_mtu_cap = 5;
	pi->op_vls_enforce = 4u << 4;
	if (n->type != NODE_TYPE_SWITCH || p == 0) {
		pi->cap_mask = htobe32((n->type == NODE_TYPE_SWITCH ? 0 : 1u << 16) |
				       (n->sl_map ? PI_CAP_SL_MAP : 0));
		pi->mkey = htobe64(n->mk[p].key);
		pi->mkey_lease_period = htobe16(n->mk[p].lease);
		pi->mkey_prot_lmc = (uint8_t)(n->mk[p].prot << 6);
		pi->mkey_violations = htobe16(n->mk[p].violations);
	}
}

/*
 * The M_Key check of an SMP at end port `ep` (IBA 14.2.4.1-3): it passes
 * when the port's M_Key is 0 or the SMP carries it (and stops a running
 * lease timer).  Otherwise, by M_KeyProtectBits: 0, everything goes; 1,
 * Gets go, Sets fail; 2, Gets go with the M_Key read as 0, Sets fail; 3,
 * both fail.  A failure gets no answer, counts in M_KeyViolations, sends
 * trap 256 and starts the lease timer (M_KeyLeasePeriod not 0): when it
 * runs out the protection bits drop to 0.
 */
enum ff_mk_verdict { FF_MK_OK, FF_MK_HIDE, FF_MK_FAIL };

static inline enum ff_mk_verdict ff_mkey_check(struct fake_fabric *ff,
					       struct ff_node *n, unsigned ep,
					       const struct smp_dr *req, bool set)
{
	struct ff_mkey *m = &n->mk[ep];
	double now = ev_now(ff->fk->loop);

	if (m->lease_on && now >= m->lease_end) {
		m->prot = 0;
		m->lease_on = false;
	}
	if (!m->key || be64toh(req->mkey) == m->key) {
		m->lease_on = false;
		return FF_MK_OK;
	}
	if (m->prot == 0 || (!set && m->prot == 1))
		return FF_MK_OK;
	if (!set && m->prot == 2)
		return FF_MK_HIDE;
	m->violations++;
	m->traps++;
	if (m->lease && !m->lease_on) {
		m->lease_on = true;
		m->lease_end = now + m->lease;
	}
	return FF_MK_FAIL;
}

/* Fill in the answer to one SMP; false when the node would not answer. */
static inline bool ff_answer(struct fake_fabric *ff, int id, uint8_t in_port,
			     const struct smp_dr *req, struct smp_dr *resp)
{
	struct ff_node *n = &ff->node[id];
	uint16_t attr = be16toh(req->hdr.attr_id);
	uint32_t mod = be32toh(req->hdr.attr_mod);
	bool set = req->hdr.method == MAD_METHOD_SET;

	unsigned ep = n->type == NODE_TYPE_SWITCH ? 0 : in_port;
	enum ff_mk_verdict mk = ff_mkey_check(ff, n, ep, req, set);

	if (mk == FF_MK_FAIL)
		return false;
	if (attr < 0x20)
		(set ? n->sets : n->gets)[attr]++;
	if (set && (n->drop_sets || (n->drop_lft_sets && attr == SMP_ATTR_LFT)))
		return false;
	switch (attr) {
	case SMP_ATTR_NODE_INFO: {
		struct smp_node_info ni = { .base_version = 1, .class_version = 1 };

		ni.node_type = n->type;
		ni.num_ports = n->nports;
		ni.sys_guid = htobe64(n->guid);
		ni.node_guid = htobe64(n->guid);
		ni.port_guid = htobe64(n->type == NODE_TYPE_SWITCH ? n->port_guid
				       : n->port_guid + in_port - 1);
		ni.partition_cap = htobe16(32);
		ni.local_port = in_port;
		memcpy(resp->data, &ni, sizeof(ni));
		break;
	}
	case SMP_ATTR_NODE_DESC:
		memcpy(resp->data, n->desc, 64);
		break;
	case SMP_ATTR_SWITCH_INFO: {
		struct smp_switch_info si = { 0 };

		if (n->type != NODE_TYPE_SWITCH) {
			resp->hdr.status |= htobe16(MAD_STATUS_ATTR_UNSUPP);
			break;
		}
		if (set) {
			const struct smp_switch_info *w = (const void *)req->data;

			n->lft_top = be16toh(w->lft_top);
			n->life = w->life_psc_osl & 0xf8;
		}
		si.lft_cap = htobe16(0xc000);
		si.lft_top = htobe16(n->lft_top);
		si.partition_enf_cap = htobe16(32);
		si.life_psc_osl = n->life;
		memcpy(resp->data, &si, sizeof(si));
		break;
	}
	case SMP_ATTR_PORT_INFO: {
		struct smp_port_info pi;
		unsigned p = mod || n->type == NODE_TYPE_SWITCH ? mod : in_port;

		if (p > n->nports) {
			resp->hdr.status |= htobe16(MAD_STATUS_INVALID_FIELD);
			break;
		}
		if (set) {
			const struct smp_port_info *w = (const void *)req->data;
			unsigned want = pi_port_state(w);

			n->port[p].lid = be16toh(w->lid);
			if (want == PORT_STATE_ARMED || want == PORT_STATE_ACTIVE)
				n->port[p].state = (uint8_t)want;
			if (n->type != NODE_TYPE_SWITCH || p == 0) {
				n->mk[p].key = be64toh(w->mkey);
				n->mk[p].lease = be16toh(w->mkey_lease_period);
				n->mk[p].prot = w->mkey_prot_lmc >> 6;
			}
		}
		ff_port_info(n, p, &pi);
		if (mk == FF_MK_HIDE)
			pi.mkey = 0;
		memcpy(resp->data, &pi, sizeof(pi));
		break;
	}
	case SMP_ATTR_PKEY_TABLE: {
		__be16 keys[32] = { 0 };

		if (set)
			memcpy(keys, req->data, sizeof(keys));
		else if ((mod & 0xffff) == 0)
			keys[0] = htobe16(0xffff);
		memcpy(resp->data, keys, sizeof(keys));
		break;
	}
	case SMP_ATTR_SL2VL_TABLE: {
		/* switches: InputPortNum << 8 | OutputPortNum (14.2.5.8) */
		unsigned in = n->type == NODE_TYPE_SWITCH ? (mod >> 8) & 0xff : 0;
		unsigned out = n->type == NODE_TYPE_SWITCH ? mod & 0xff : in_port;

		if (in > n->nports || out > n->nports || !n->sl_map) {
			resp->hdr.status |= htobe16(MAD_STATUS_INVALID_FIELD);
			break;
		}
		if (set)
			memcpy(n->sl2vl[in][out], req->data, 8);
		memcpy(resp->data, n->sl2vl[in][out], 8);
		break;
	}
	case SMP_ATTR_LFT:
		if (set)
			n->last_lft_block = mod;
		break;		/* the request's data is echoed */
	default:
		resp->hdr.status |= htobe16(MAD_STATUS_ATTR_UNSUPP);
		break;
	}
	return true;
}

/* The fake transport's policy: answer through the fabric, next iteration. */
static inline enum fake_action ff_policy(struct fake *fk,
					 const struct fake_sent *s, void *arg)
{
	struct fake_fabric *ff = arg;
	const struct smp_dr *req = (const void *)s->mad;
	uint8_t resp[MAD_SIZE], in_port = 0;
	int id;

	if (req->hdr.mgmt_class != MAD_CLASS_SMI_DR || s->len != MAD_SIZE)
		return FAKE_DROP;
	id = ff_walk(ff, req, &in_port);
	fake_make_response(s->mad, s->len, fk->tid_high, resp);
	if (id < 0 || !ff_answer(ff, id, in_port, req, (struct smp_dr *)resp) ||
	    (ff->mutate && !ff->mutate(ff, id, in_port, (struct smp_dr *)resp,
				       ff->mutate_arg))) {
		ff->lost++;
		return FAKE_DROP;
	}
	ff->answered++;
	fake_schedule(fk, resp, ff->cut_to && ff->cut_to < MAD_SIZE ? ff->cut_to
				: MAD_SIZE, &s->addr, 0, 0.);
	ff->cut_to = 0;
	return FAKE_DROP;	/* the answer is scheduled already */
}

static inline void ff_init(struct fake_fabric *ff, struct fake *fk)
{
	memset(ff, 0, sizeof(*ff));
	ff->fk = fk;
	fk->policy = ff_policy;
	fk->policy_arg = ff;
}

#endif /* IBSM_TESTS_FAKE_FABRIC_H */
