/*
 * isolate.c - the isolation policy (health_unhealthy_policy isolate): a
 * port found unhealthy has the port facing it, the switch side of its
 * cable, set to Disabled by a PortInfo Set (PortPhysicalState 3, IBA
 * 14.2.5.6), so the bad cable or HCA stops disturbing the fabric.
 *
 * Never the SM's own link, never the last active link of a switch, never
 * a link whose loss would cut the SM off from any node but the one
 * behind the cable.  Isolated ports are remembered: the sweeps never
 * change a port's physical state (port_desired() asks "no change"), and
 * one found enabled again while still isolated (a reset switch) is
 * disabled again.  `port enable` (iso_enable()) sets PortPhysicalState 2
 * (Polling: the port trains again) and forgets the isolation.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mad/engine.h"
#include "model/topo_dump.h"
#include "sm/health/internal.h"
#include "sm/program.h"
#include "sm/sm.h"

struct iso_set {
	struct sm *sm;
	uint64_t guid;
	uint8_t  port;
	uint8_t  phys;
};

const struct health_iso *iso_find(const struct sm_health *h, uint64_t guid,
				  uint8_t port)
{
	for (unsigned i = 0; i < h->n_iso; i++)
		if (h->iso[i].guid == guid && h->iso[i].port == port)
			return &h->iso[i];
	return NULL;
}

/* Either end of the link at (guid, port) / (peer_guid, peer_port). */
static bool link_isolated(const struct sm_health *h, uint64_t a, uint8_t ap,
			  uint64_t b, uint8_t bp)
{
	for (unsigned i = 0; i < h->n_iso; i++) {
		const struct health_iso *s = &h->iso[i];

		if ((s->guid == a && s->port == ap) ||
		    (s->guid == b && s->port == bp) ||
		    (s->peer_guid == a && s->peer_port == ap) ||
		    (s->peer_guid == b && s->peer_port == bp))
			return true;
	}
	return false;
}

static bool is_active(const struct fab_port *p)
{
	return p->valid && pi_port_state(&p->pi) == PORT_STATE_ACTIVE;
}

/* Active links of a switch other than through port `except`. */
static unsigned other_active(const struct fabric *f, int32_t id,
			     unsigned except)
{
	const struct fab_node *n = fabric_node(f, id);
	unsigned k = 0;

	for (unsigned pn = 1; pn <= n->num_ports; pn++)
		k += pn != except && n->ports[pn].peer_node != FAB_NONE &&
		     is_active(&n->ports[pn]);
	return k;
}

/* Nodes the SM's node reaches without the link at (id, pn), minus one. */
static long unreached_without(const struct fabric *f, int32_t id, uint8_t pn)
{
	const struct fab_port *cut = &fabric_node(f, id)->ports[pn];
	int32_t *queue;
	uint8_t *seen;
	size_t head = 0, tail = 0;
	long reached = 0;

	if (f->local_node == FAB_NONE || !f->n_nodes)
		return -1;
	queue = malloc(f->n_nodes * sizeof(*queue));
	seen = calloc(f->n_nodes, 1);
	if (!queue || !seen) {
		free(queue);
		free(seen);
		return -1;
	}
	queue[tail++] = f->local_node;
	seen[f->local_node] = 1;
	while (head < tail) {
		int32_t u = queue[head++];
		const struct fab_node *n = fabric_node(f, u);

		reached++;
		for (unsigned p = 1; p <= n->num_ports; p++) {
			int32_t v = n->ports[p].peer_node;

			if (v == FAB_NONE || seen[v] ||
			    (u == id && p == pn) ||
			    (u == cut->peer_node && p == cut->peer_port))
				continue;
			seen[v] = 1;
			queue[tail++] = v;
		}
	}
	free(queue);
	free(seen);
	return (long)f->n_nodes - reached;
}

const char *iso_refusal(const struct fabric *f, int32_t id, uint8_t pn)
{
	const struct fab_node *n = fabric_node(f, id);
	const struct fab_port *p;

	if (!pn || pn > n->num_ports)
		return "no such port";
	p = &n->ports[pn];
	if (p->peer_node == FAB_NONE)
		return "the port has no link";
	const struct fab_node *peer = fabric_node(f, p->peer_node);
	if ((id == f->local_node && (pn == f->local_port ||
				     n->type != NODE_TYPE_SWITCH)) ||
	    (p->peer_node == f->local_node &&
	     (p->peer_port == f->local_port || peer->type != NODE_TYPE_SWITCH)))
		return "it is the SM's own link";
	if (n->type == NODE_TYPE_SWITCH && !other_active(f, id, pn))
		return "it is the switch's last active link";
	if (peer->type == NODE_TYPE_SWITCH &&
	    !other_active(f, p->peer_node, p->peer_port))
		return "it is the last active link of the switch at its other end";
	long lost = unreached_without(f, id, pn);
	if (lost < 0)
		return "out of memory";
	/* the node behind the cable may go (a CA's only link); no other */
	int32_t far = n->type == NODE_TYPE_SWITCH ? p->peer_node : id;
	if (lost > 1 || (lost == 1 &&
			 fabric_node(f, far)->type == NODE_TYPE_SWITCH))
		return "it would cut the SM off from other nodes";
	return NULL;
}

static void node_name(const struct fab_node *n, char *buf, size_t len)
{
	char desc[TOPO_DESC_SIZE];

	snprintf(buf, len, "%s 0x%016" PRIx64 " \"%s\"",
		 fabric_node_type_str(n->type), n->guid,
		 topo_desc_clean(fab_node_label(n), desc));
}

static struct health_iso *iso_get(struct sm_health *h, uint64_t guid,
				  uint8_t port)
{
	return (struct health_iso *)iso_find(h, guid, port);
}

static void on_set(void *arg, int status, const void *mad, size_t len)
{
	struct iso_set *c = arg;
	struct sm *sm = c->sm;
	struct sm_health *h = sm->health;
	struct health_iso *s = h ? iso_get(h, c->guid, c->port) : NULL;
	bool ok = status >= 0 && len >= MAD_SIZE &&
		  !(be16toh(((const struct mad_hdr *)mad)->status) & 0x7fff);

	if (status == -ECANCELED) {
		free(c);
		return;
	}
	if (c->phys == PHYS_STATE_DISABLED && s) {
		s->inflight = false;
		s->done = ok;
		if (ok)
			log_warnx("ERR 1805: port %u of node 0x%016" PRIx64
				  " is disabled (isolation: %s)", c->port,
				  c->guid, s->why);
	}
	if (!ok)
		log_ratelimited(LOG_LVL_ERR, 1806, "PortInfo Set (PortPhysical"
				"State %u) to port %u of node 0x%016" PRIx64
				" failed: %s", c->phys, c->port, c->guid,
				status < 0 ? strerror(-status) : "error status");
	else if (c->phys == PHYS_STATE_POLLING)
		log_info("port %u of node 0x%016" PRIx64 " enabled (Polling)",
			 c->port, c->guid);
	/* the model changes: a heavy sweep sees it */
	if (ok)
		(void)sm_post(sm, SM_EV_CHANGE);
	free(c);
}

/* A PortInfo Set of PortPhysicalState `phys` to port pn of node id of
 * the published model.  0 or -errno. */
static int send_phys(struct sm *sm, int32_t id, uint8_t pn, unsigned phys)
{
	const struct fabric *f = &sm->fabric;
	struct mad_addr addr = { .lid = 0xffff, .qpn = 0 };
	struct smp_port_info pi;
	struct smp_dr smp;
	const uint8_t *path;
	unsigned hops;
	struct iso_set *c;
	int rc;

	if (!sm->engine)
		return -ENOTCONN;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = (struct iso_set){ sm, fabric_node(f, id)->guid, pn, (uint8_t)phys };
	/* the port's PortInfo as a sweep would set it, no state change */
	(void)port_desired(&sm->cfg, f, id, pn, sm_local_lid(sm),
			   PORT_STATE_NOP, false, &pi);
	pi_set_phys_state(&pi, phys);
	port_path(f, id, pn, &path, &hops);
	mad_build_smp_dr(&smp, MAD_METHOD_SET, SMP_ATTR_PORT_INFO, pn, path,
			 hops);
	memcpy(smp.data, &pi, sizeof(pi));
	rc = mad_engine_submit(sm->engine, &smp, sizeof(smp), &addr, on_set, c);
	if (rc < 0)
		free(c);
	return rc;
}

/* The port to disable for an unhealthy (id, pn): the switch side of the
 * cable, else the port facing it.  False when there is no link. */
static bool facing_port(const struct fabric *f, int32_t id, uint8_t pn,
			int32_t *tid, uint8_t *tpn)
{
	const struct fab_node *n = fabric_node(f, id);
	const struct fab_port *p;

	if (!pn || pn > n->num_ports)
		return false;
	p = &n->ports[pn];
	if (p->peer_node == FAB_NONE)
		return false;
	if (n->type == NODE_TYPE_SWITCH &&
	    fabric_node(f, p->peer_node)->type != NODE_TYPE_SWITCH) {
		*tid = id;
		*tpn = pn;
	} else {
		*tid = p->peer_node;
		*tpn = p->peer_port;
	}
	return true;
}

/* The LID port pn of a node answers at (a switch's port 0). */
static uint16_t node_lid(const struct fab_node *n, uint8_t pn)
{
	return n->ports[n->type == NODE_TYPE_SWITCH ? 0 : pn].lid;
}

void iso_name(const struct sm_health *h, const struct hf_finding *f,
	      struct hf_finding *out)
{
	*out = *f;
	for (unsigned i = 0; i < h->n_iso && f->guid; i++) {
		const struct health_iso *s = &h->iso[i];
		bool near = s->guid == f->guid && s->port == f->port;
		bool far = s->peer_guid == f->guid && s->peer_port == f->port;

		if (!near && !far)
			continue;
		if (!out->desc[0])
			snprintf(out->desc, sizeof(out->desc), "%s",
				 near ? s->desc : s->peer_desc);
		if (!out->lid)
			out->lid = near ? s->lid : s->peer_lid;
		if (!out->peer_guid) {
			out->peer_guid = near ? s->peer_guid : s->guid;
			out->peer_port = near ? s->peer_port : s->port;
			out->peer_lid = near ? s->peer_lid : s->lid;
			snprintf(out->peer_desc, sizeof(out->peer_desc), "%s",
				 near ? s->peer_desc : s->desc);
		}
		return;
	}
}

/* Disable port pn of node id for `kind`: `text`.  True when the Set went
 * out (or the link is isolated already). */
static bool isolate_port(struct sm_health *h, int32_t id, uint8_t pn,
			 const char *kind, const char *text)
{
	struct sm *sm = h->sm;
	const struct fabric *f = &sm->fabric;
	const struct fab_node *n = fabric_node(f, id);
	const struct fab_port *p = &n->ports[pn];
	const struct fab_node *peer = fabric_node(f, p->peer_node);
	char a[120], b[120];
	const char *no;

	if (link_isolated(h, n->guid, pn, peer->guid, p->peer_port))
		return true;
	node_name(n, a, sizeof(a));
	node_name(peer, b, sizeof(b));
	no = iso_refusal(f, id, pn);
	if (no) {
		log_ratelimited(LOG_LVL_WARN, 1803, "not isolating port %u of %s"
				" (facing port %u of %s, %s): %s", pn, a,
				p->peer_port, b, kind, no);
		return false;
	}
	if (h->n_iso == HEALTH_MAX_ISOLATED) {
		log_ratelimited(LOG_LVL_WARN, 1804, "not isolating port %u of"
				" %s: %u ports are isolated already", pn, a,
				HEALTH_MAX_ISOLATED);
		return false;
	}
	struct health_iso *s = &h->iso[h->n_iso++];
	memset(s, 0, sizeof(*s));
	s->guid = n->guid;
	s->port = pn;
	s->peer_guid = peer->guid;
	s->peer_port = p->peer_port;
	s->lid = node_lid(n, pn);
	s->peer_lid = node_lid(peer, p->peer_port);
	topo_desc_clean(fab_node_label(n), s->desc);
	topo_desc_clean(fab_node_label(peer), s->peer_desc);
	s->since = health_now();
	snprintf(s->why, sizeof(s->why), "%s: %s", kind, text);
	log_warnx("ERR 1805: isolating port %u of %s, facing port %u of %s"
		  " (%s): PortPhysicalState Disabled", pn, a, p->peer_port, b,
		  s->why);
	health_event(h, HE_LINK_DOWN, n->guid, pn, "isolated: disabled,"
		     " facing 0x%016" PRIx64 " port %u (%s)", peer->guid,
		     p->peer_port, kind);
	if (send_phys(sm, id, pn, PHYS_STATE_DISABLED) == 0) {
		s->inflight = true;
		s->sets++;
	}
	return true;
}

int sm_health_isolate(struct sm *sm, int32_t id, uint8_t pn,
		      const char *kind, const char *why)
{
	struct sm_health *h = health_get(sm);
	const struct fabric *f = &sm->fabric;

	if (!h)
		return -ENOMEM;
	if (id < 0 || (size_t)id >= f->n_nodes || !pn ||
	    pn > fabric_node(f, id)->num_ports ||
	    fabric_node(f, id)->ports[pn].peer_node == FAB_NONE)
		return -EINVAL;
	return isolate_port(h, id, pn, kind, why) ? 0 : -EPERM;
}


static bool isolates(enum hf_kind k)
{
	return k == HF_FLAPPING || k == HF_NOISY || k == HF_UNRESPONSIVE ||
	       k == HF_REFUSING_SETS;
}

/* Isolated ports found enabled again (not Disabled in the model) get
 * their Set again, unless one is on its way. */
static void iso_reapply(struct sm_health *h)
{
	const struct fabric *f = &h->sm->fabric;

	for (unsigned i = 0; i < h->n_iso; i++) {
		struct health_iso *s = &h->iso[i];
		int32_t id = fabric_find(f, s->guid);

		if (s->inflight || id == FAB_NONE ||
		    s->port > fabric_node(f, id)->num_ports)
			continue;
		const struct fab_port *p = &fabric_node(f, id)->ports[s->port];
		if (!p->valid || pi_phys_state(&p->pi) == PHYS_STATE_DISABLED)
			continue;
		if (s->done)
			log_warnx("ERR 1805: port %u of node 0x%016" PRIx64 " is"
				  " isolated but no longer disabled: disabling"
				  " it again", s->port, s->guid);
		if (send_phys(h->sm, id, s->port, PHYS_STATE_DISABLED) == 0) {
			s->inflight = true;
			s->sets++;
		}
	}
}

void iso_apply(struct sm_health *h)
{
	const struct fabric *f = &h->sm->fabric;

	if (h->sm->state != SM_MASTER || h->sm->ha.standing_down)
		return;
	iso_reapply(h);
	if (h->pol.unhealthy_action != HEALTH_ISOLATE)
		return;
	for (size_t i = 0; i < hf_set_count(&h->findings); i++) {
		const struct hf_finding *fd = hf_set_at(&h->findings, i);
		int32_t id, tid;
		uint8_t tpn;

		if (!isolates(fd->kind) || !fd->guid ||
		    (id = fabric_find(f, fd->guid)) == FAB_NONE)
			continue;
		const struct fab_node *n = fabric_node(f, id);
		if (fd->port) {
			if (facing_port(f, id, fd->port, &tid, &tpn))
				isolate_port(h, tid, tpn,
					     hf_kind_name(fd->kind), fd->text);
			continue;
		}
		/* a node as a whole: a CA's or router's links, never a
		 * switch's */
		if (n->type == NODE_TYPE_SWITCH)
			continue;
		for (unsigned pn = 1; pn <= n->num_ports; pn++)
			if (facing_port(f, id, (uint8_t)pn, &tid, &tpn))
				isolate_port(h, tid, tpn,
					     hf_kind_name(fd->kind), fd->text);
	}
}

/* A port's flaps are forgotten (the history keeps its last state). */
static void forget_flaps(struct health_history *hist, uint64_t guid,
			 uint8_t port)
{
	struct hh_port *p = (struct hh_port *)hh_port_find(hist, guid, port);

	if (p) {
		p->n_flaps = 0;
		p->flap_head = 0;
	}
}

int iso_enable(struct sm_health *h, int32_t id, uint8_t pn, char *err,
	       size_t errlen)
{
	struct sm *sm = h->sm;
	const struct fab_node *n = fabric_node(&sm->fabric, id);
	int rc;

	if (!pn || pn > n->num_ports || !n->ports[pn].valid) {
		snprintf(err, errlen, "node 0x%016" PRIx64 " has no port %u",
			 n->guid, pn);
		return -EINVAL;
	}
	rc = send_phys(sm, id, pn, PHYS_STATE_POLLING);
	if (rc < 0) {
		snprintf(err, errlen, "cannot send the PortInfo Set: %s",
			 strerror(-rc));
		return rc;
	}
	/* the flaps that caused it are history: judged afresh, both ends */
	forget_flaps(&h->hist, n->guid, pn);
	if (n->ports[pn].peer_node != FAB_NONE)
		forget_flaps(&h->hist, fabric_node(&sm->fabric,
				n->ports[pn].peer_node)->guid,
			       n->ports[pn].peer_port);
	for (unsigned i = 0; i < h->n_iso; i++)
		if (h->iso[i].guid == n->guid && h->iso[i].port == pn) {
			forget_flaps(&h->hist, h->iso[i].peer_guid,
				       h->iso[i].peer_port);
			h->iso[i] = h->iso[--h->n_iso];
			break;
		}
	log_warnx("ERR 1807: port %u of node 0x%016" PRIx64 " enabled by the"
		  " control socket (PortPhysicalState Polling); isolation"
		  " forgotten", pn, n->guid);
	return 0;
}
