/*
 * sweep.c - heavy and light sweeps.
 *
 * A heavy sweep takes the fabric from whatever state it is in to SUBNET UP:
 *
 *   DISCOVER   directed-route discovery into a new model (sm/discover.c)
 *   PLAN       LIDs (sm/lid.c, guid2lid cache), routes (routing/)
 *   PROGRAM    every Set that changes something, all in flight together,
 *              per node: P_Key blocks that differ from what the port
 *              should hold (partitions, or the default partition),
 *              SwitchInfo, LFT blocks that differ from the switch's image,
 *              PortInfo (LIDs, link parameters, enforcement, INIT -> ARMED)
 *   ACTIVATE   PortInfo ARMED -> ACTIVE (both ends are ARMED by now)
 *   UP         the new model replaces the old one; dumps are written
 *
 * The light sweep is in sm/light.c.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sm/discover.h"
#include "config/fileutil.h"
#include "sm/mcast/mft.h"
#include "sm/dumps.h"
#include "sm/fatal.h"
#include "sm/health/health.h"
#include "sm/ha/sminfo.h"
#include "sm/program.h"
#include "sm/route.h"
#include "sm/sa/sa.h"
#include "sm/sm.h"
#include "sm/snapshot.h"
#include "sm/sweep_policy.h"
#include "sm/topo_file.h"
#include "sm/worker.h"

enum sweep_stage { ST_DISCOVER, ST_PROGRAM, ST_ACTIVATE, ST_DONE };

/* Why a sweep ends when sm->ha.standing_down is set under it. */
#define STOOD_DOWN	"a better master is known: nothing more is sent"

struct sweep {
	struct sm *sm;
	enum sweep_stage stage;
	bool aborted;
	struct fabric f;
	struct discovery *disc;
	struct routing_result routes;
	struct smp_batch batch;
	size_t cursor;			/* next node for the batch producer */
	bool rereg;
	uint16_t sm_lid;
	ev_tstamp t0, t_disc, t_prog;
	unsigned disc_smps, prog_smps, act_smps, failed;
	unsigned pkey_sets;		/* P_KeyTable blocks queued in PROGRAM */
	unsigned sl2vl_sets;		/* SLtoVLMappingTable Sets (layers) */
	unsigned vlarb_sets;		/* VLArbitrationTable Sets (qos) */
	unsigned readbacks;		/* refused PortInfo repeats found done */
	/* What went wrong, for the failure policy (sm/sweep_policy.c). */
	unsigned holes_failed, holes_dead, twins;	/* accepted from discovery */
	unsigned unacked;		/* Sets never acknowledged */
	struct node_fault *faults;	/* per node id, or NULL */
	/* engine counters at the start: SMP attempts, LID-routed ones,
	 * LID-routed SMPs sent again by directed route */
	uint64_t smps0, lid0, fb0;
	unsigned lid_planned;		/* nodes LID-routed in this sweep */
	bool no_lid;			/* a change started it: all directed route */
	bool quick;			/* on a quick sweep's model (sm/quick.c) */
	/* PLAN: the routing runs on a thread of its own (route_main()),
	 * on `f` and `job` alone, while the loop goes on serving; `routed`
	 * tells the loop it is done. */
	struct sm_route_job job;
	pthread_t route_th;
	bool routing;			/* the thread runs (not joined yet) */
	ev_async routed;
	/* Meanwhile the loop reads the P_Key tables (discover_read_pkeys());
	 * PROGRAM starts when both are done (plan_joined()). */
	bool routes_pending, pkeys_pending;
	ev_tstamp t_pkeys;		/* P_Key reads done */
	unsigned pkey_smps, pkey_failed;
};

/* Sets a node did not acknowledge in this sweep, by attribute. */
struct node_fault {
	unsigned lft, switch_info, port_info, pkey, other;
};

uint16_t sm_local_lid(const struct sm *sm)
{
	const struct fabric *f = &sm->fabric;

	if (f->local_node == FAB_NONE)
		return 0;
	return fabric_node(f, f->local_node)->ports[f->local_port].lid;
}

void sm_snapshot_of(const struct sm *sm, struct sm_snapshot *s)
{
	s->model = &sm->fabric;
	s->routes = &sm->routes;
	s->sl2vl = sm->sl2vl;
	s->gen = sm->fabric.gen;
	s->own_lid = sm_local_lid(sm);
}

/* The routing thread, if one runs: joined (shutdown waits for it). */
static void route_join(struct sweep *sw)
{
	if (!sw->routing)
		return;
	pthread_join(sw->route_th, NULL);
	ev_async_stop(sw->sm->loop, &sw->routed);
	sw->routing = false;
}

static void sweep_free(struct sweep *sw)
{
	if (sw->sm->mkey_hook.f == &sw->f)
		sw->sm->mkey_hook.f = &sw->sm->fabric;
	route_join(sw);
	sm_route_job_free(&sw->job);
	discover_free(sw->disc);
	routing_result_free(&sw->routes);
	fabric_free(&sw->f);
	free(sw->faults);
	free(sw);
}

/* Trap 64 or 65 (GID in/out of service, 14.2.5.1) about one port, made
 * by the SM itself and reported to SA subscribers. */
static void gid_notice(struct sm *sm, unsigned trap, uint64_t port_guid,
		       uint16_t lid)
{
	struct smp_notice n;
	uint64_t prefix = htobe64(sm->cfg.subnet_prefix), guid = htobe64(port_guid);

	memset(&n, 0, sizeof(n));
	n.generic_type = 0x80 | 4;		/* generic, informational */
	n.producer[2] = 4;			/* class manager */
	n.trap_num = htobe16((uint16_t)trap);
	n.issuer_lid = htobe16(sm_local_lid(sm));
	memcpy(n.data_details + 6, &prefix, 8);
	memcpy(n.data_details + 14, &guid, 8);
	sa_report_notice(sm, &n, lid);
}

/* End ports present in `a` but not in `b` (same port GUID and number). */
static void ports_missing(struct sm *sm, const struct fabric *a,
			  const struct fabric *b, unsigned trap)
{
	for (size_t i = 0; i < a->n_nodes; i++) {
		const struct fab_node *n = &a->nodes[i];
		int32_t j = fabric_find(b, n->guid);

		if (n->type == NODE_TYPE_SWITCH)
			continue;
		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (!p->valid || !p->lid)
				continue;
			if (j != FAB_NONE && fabric_node(b, j)->num_ports >= pn &&
			    fabric_node(b, j)->ports[pn].valid)
				continue;
			gid_notice(sm, trap, p->guid, p->lid);
		}
	}
}

static void sweep_finish(struct sweep *sw, bool ok, const char *why)
{
	struct sm *sm = sw->sm;

	sm->sweep = NULL;
	sm->stats.last_heavy_end = ev_time();
	sm->stats.last_heavy_seconds = sm->stats.last_heavy_end - sw->t0;
	sm->stats.last_heavy_ok = ok;
	sm_hist_observe(&sm->stats.sweep_hist[SM_SWEEP_HEAVY],
			sm->stats.last_heavy_seconds);
	if (ok) {
		if (sm->fabric.n_nodes) {
			ports_missing(sm, &sw->f, &sm->fabric, 64);
			ports_missing(sm, &sm->fabric, &sw->f, 65);
		}
		sm_health_model(sm, &sw->f);
		/* The new model becomes the subnet as the SA will see it. */
		fabric_free(&sm->fabric);
		sm->fabric = sw->f;
		fabric_init(&sw->f);
		routing_result_free(&sm->routes);
		sm->routes = sw->routes;
		memset(&sw->routes, 0, sizeof(sw->routes));
		/* Without layers or QoS the SL-to-VL tables are neither
		 * read nor set (as OpenSM without QoS): forget them, so that
		 * the SA answers zeros again and layers coming back read
		 * them anew. */
		if (sm->routes.n_layers <= 1 && !sm->cfg.qos && sm->sl2vl) {
			sl2vl_images_free(sm->sl2vl);
			sm->sl2vl = NULL;
		}
		sa_fabric_changed(sm);
		sm_qos_bind(sm);	/* the QoS policy on the new model */
		/* LFTs are in place: the multicast trees of the new model and
		 * the MFT blocks that differ (sm/mcast/mft.c). */
		mft_sweep_done(sm);
		sm_mkey_sweep_done(sm);
		sm_health_sweep_done(sm);
	} else if (sm->ha.standing_down) {
		log_info("heavy sweep stopped: %s", why);
	} else {
		log_warnx("ERR 0201: heavy sweep failed: %s", why);
		/* something is off: the retry sends nothing LID-routed */
		sm->topo_changed = true;
	}
	sweep_free(sw);
	const struct mad_engine_stats *st = mad_engine_stats(sm->engine);
	log_info("SMP window: %u now, %u-%u so far, halved %" PRIu64 " times;"
		 " %" PRIu64 " SMPs waited for their destination; %u destinations"
		 " throttled after %" PRIu64 " losses there; %" PRIu64
		 " re-sends beyond the retry budget (lossy fabric)",
		 st->window, st->window_low, st->window_high, st->window_cuts,
		 st->dest_waits, mad_engine_dests_throttled(sm->engine),
		 st->dest_cuts, st->lossy_resends);
	(void)sm_post(sm, ok ? SM_EV_SWEEP_DONE : SM_EV_SWEEP_FAILED);
}

/* ------------------------------------------------------------ stages */

struct port_set {
	struct sweep *sw;
	struct pi_key want;
};

static void on_port_set(struct smp_batch *b, int32_t node, uint8_t port,
			const uint8_t *data, void *arg)
{
	struct port_set *ps = arg;
	struct sweep *sw = ps->sw;

	if (data && !sw->aborted) {
		struct fab_node *n = fabric_node(&sw->f, node);
		struct fab_port *p = &n->ports[port];
		struct pi_key got;

		memcpy(&p->pi, data, sizeof(p->pi));
		pi_key_of(&p->pi, &got);
		port_memos_record(sw->sm->memos, n->guid, port, &ps->want, &got);
		/* the port took a Set with the key it held: it holds ours */
		if (sw->sm->mkeys && fabric_is_endport(n, port))
			sw->sm->mkey_dirty |= mkey_record(sw->sm->mkeys,
				n->ports[port].guid, be64toh(ps->want.mkey));
	}
	free(ps);
}

/* Queue one PortInfo Set when the port needs one.  Returns -errno. */
static int set_port(struct sweep *sw, int32_t id, uint8_t pn, unsigned want,
		    bool rereg)
{
	struct sm *sm = sw->sm;
	struct fab_node *n = fabric_node(&sw->f, id);
	struct smp_port_info pi;
	struct pi_key now;
	struct port_set *ps;
	const uint8_t *path;
	unsigned hops;
	int rc;

	/* A forced LinkWidth/SpeedEnabled value (force_link_*, not "all
	 * supported") goes in a Set of its own, before the one that arms the
	 * port, as OpenSM sends it: the link retrains on it (and ibsim takes
	 * it only from a Set without a state). */
	const struct smp_port_info *cur = &n->ports[pn].pi;
	if (want != PORT_STATE_NOP &&
	    port_desired(&sm->cfg, &sw->f, id, pn, sw->sm_lid, PORT_STATE_NOP,
			 false, &pi) &&
	    ((pi.link_width_enabled != cur->link_width_enabled &&
	      pi.link_width_enabled != 0xff) ||
	     (pi_speed_enabled(&pi) != pi_speed_enabled(cur) &&
	      pi_speed_enabled(&pi) != 0xf) ||
	     (pi.speed_ext_enabled != cur->speed_ext_enabled &&
	      (pi.speed_ext_enabled & 0x1f) != 0x1f))) {
		rc = set_port(sw, id, pn, PORT_STATE_NOP, false);
		if (rc < 0)
			return rc;
	}
	if (!port_desired(&sm->cfg, &sw->f, id, pn, sw->sm_lid, want, rereg, &pi))
		return 0;
	ps = malloc(sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	ps->sw = sw;
	pi_key_of(&pi, &ps->want);
	pi_key_of(&n->ports[pn].pi, &now);
	/* Same request as last time and the port unchanged since it answered
	 * it: what still differs is what the port does not store. */
	if (want == PORT_STATE_NOP && !rereg &&
	    port_memos_settled(sm->memos, n->guid, pn, &ps->want, &now)) {
		free(ps);
		return 0;
	}
	port_path(&sw->f, id, pn, &path, &hops);
	if (log_enabled(LOG_LVL_DEBUG)) {
		log_debug("PortInfo Set 0x%016" PRIx64 " port %u: state %u->%u"
			  " lid %u->%u mtu %u->%u vls %u->%u timeout %u->%u"
			  " hoq %u->%u mkey 0x%016" PRIx64 " prot %u lease %u",
			  fabric_node(&sw->f, id)->guid, pn,
			  pi_port_state(cur), want, be16toh(cur->lid),
			  be16toh(pi.lid), pi_neighbor_mtu(cur),
			  pi_neighbor_mtu(&pi), pi_op_vls(cur), pi_op_vls(&pi),
			  pi_subnet_timeout(cur), pi_subnet_timeout(&pi),
			  cur->vl_stall_hoq_life & 0x1fu,
			  pi.vl_stall_hoq_life & 0x1fu, be64toh(pi.mkey),
			  pi_mkey_prot(&pi), be16toh(pi.mkey_lease_period));
	}
	/* Attribute modifier bit 31, SMSupportsExtendedSpeeds: a port
	 * whose CapabilityMask has IsExtendedSpeedsSupported takes
	 * LinkSpeedExtEnabled only with it (14.2.5.6, as OpenSM) */
	rc = batch_smp(&sw->batch, MAD_METHOD_SET, path, hops,
		       SMP_ATTR_PORT_INFO, pn | (fabric_port_cap_mask(n, pn) &
		       PI_CAP_HAS_EXT_SPEEDS ? 0x80000000u : 0), &pi,
		       sizeof(pi), id, pn, on_port_set, ps);
	if (rc < 0)
		free(ps);
	return rc;
}

static bool port_is_linked(const struct fab_port *p)
{
	return p->valid && p->num && p->peer_node != FAB_NONE;
}

static void stage_done(struct smp_batch *b, void *arg);

/* Producer of the ACTIVATE stage: ARMED -> ACTIVE, one node per call. */
static bool more_activate(struct smp_batch *b, void *arg)
{
	struct sweep *sw = arg;
	struct fabric *f = &sw->f;

	if (sw->cursor >= f->n_nodes || sw->sm->ha.standing_down)
		return false;
	int32_t id = (int32_t)sw->cursor++;
	struct fab_node *n = fabric_node(f, id);
	for (unsigned pn = 1; pn <= n->num_ports; pn++) {
		struct fab_port *p = &n->ports[pn];

		if (port_is_linked(p) && pi_port_state(&p->pi) == PORT_STATE_ARMED &&
		    set_port(sw, id, (uint8_t)pn, PORT_STATE_ACTIVE, false) < 0) {
			b->failed++;
			return false;
		}
	}
	return true;
}

/* Producer of the PROGRAM stage: every Set one node needs, per call. */
static bool more_program(struct smp_batch *b, void *arg)
{
	struct sweep *sw = arg;
	struct sm *sm = sw->sm;
	struct fabric *f = &sw->f;
	int rc = 0;

	/* A better master took over meanwhile: not one Set more. */
	if (sw->cursor >= f->n_nodes || sm->ha.standing_down)
		return false;
	int32_t id = (int32_t)sw->cursor++;
	struct fab_node *n = fabric_node(f, id);
	bool endport = n->type != NODE_TYPE_SWITCH;

	/*
	 * P_Key tables before the PortInfo Sets: a switch port's enforcement
	 * bits ride on its PortInfo Set, and must never enforce the table it
	 * held before (OpenSM orders them the same way).
	 */
	for (unsigned pn = 0; pn <= n->num_ports && rc >= 0; pn++) {
		rc = program_pkeys(b, f, id, pn);
		if (rc > 0)
			sw->pkey_sets += (unsigned)rc;
		if (rc > 0)
			log_debug("P_KeyTable Set 0x%016" PRIx64 " port %u: %d "
				  "block(s)", n->guid, pn, rc);
	}
	if (!endport && rc >= 0) {
		rc = program_switch(b, sm->images, &sm->cfg, f, id,
				    &sw->routes.lft[id]);
		if (rc >= 0 && n->ports[0].valid)
			rc = set_port(sw, id, 0, PORT_STATE_NOP, false);
	}
	/* Virtual layers: SL i on VL i at every port (sm/program/sl2vl.c),
	 * with `qos TRUE` too the QoS classes' VL ranges with the layers
	 * inside (routing/vlsplit.h); else with `qos TRUE`, the port
	 * classes' QoS tables (qos.c). */
	if (rc >= 0 && (sw->routes.n_layers > 1 || sm->cfg.qos)) {
		if (!sm->sl2vl)
			sm->sl2vl = sl2vl_images_new();
		if (!sm->sl2vl)
			rc = -ENOMEM;
		/* A node the last sweep did not see may be new or reset:
		 * Set its tables again rather than trust what we knew. */
		if (rc >= 0 && fabric_find(&sm->fabric, n->guid) == FAB_NONE)
			sl2vl_images_forget(sm->sl2vl, n->guid, n->num_ports);
		if (rc >= 0 && sw->routes.n_layers > 1)
			rc = program_sl2vl(b, sm->sl2vl, &sm->cfg, f, id,
					   &sw->routes, &sw->sl2vl_sets);
		else if (rc >= 0)
			rc = program_qos_sl2vl(b, sm->sl2vl, &sm->cfg, f, id,
					       &sw->sl2vl_sets);
		if (rc >= 0 && sm->cfg.qos)
			rc = program_qos_vlarb(b, sm->sl2vl, &sm->cfg, f, id,
					       &sw->routes,
					       &sw->vlarb_sets);
	}
	for (unsigned pn = 1; pn <= n->num_ports && rc >= 0; pn++) {
		struct fab_port *p = &n->ports[pn];

		if (!p->valid || (!endport && p->peer_node == FAB_NONE))
			continue;
		unsigned want = port_is_linked(p) &&
			pi_port_state(&p->pi) == PORT_STATE_INIT
			? PORT_STATE_ARMED : PORT_STATE_NOP;
		rc = set_port(sw, id, (uint8_t)pn, want, sw->rereg && endport);
	}
	if (rc < 0) {
		log_err_rc(rc, "ERR 0202: cannot queue Sets");
		b->failed++;
		return false;
	}
	return true;
}

/* A Set given up on: charge it to its node (see stage_done()). */
static void on_set_failed(struct smp_batch *b, int32_t node, uint8_t port,
			  uint16_t attr, void *arg)
{
	struct sweep *sw = arg;
	struct node_fault *nf;

	if (sw->aborted || node < 0 || (size_t)node >= sw->f.n_nodes)
		return;
	sw->unacked++;
	if (!sw->faults) {
		sw->faults = calloc(sw->f.n_nodes, sizeof(*sw->faults));
		if (!sw->faults)
			return;
	}
	nf = &sw->faults[node];
	switch (attr) {
	case SMP_ATTR_LFT:		nf->lft++; break;
	case SMP_ATTR_SWITCH_INFO:	nf->switch_info++; break;
	case SMP_ATTR_PORT_INFO:	nf->port_info++; break;
	case SMP_ATTR_PKEY_TABLE:	nf->pkey++; break;
	default:			nf->other++; break;
	}
	(void)port;
}

static unsigned fault_total(const struct node_fault *nf)
{
	return nf->lft + nf->switch_info + nf->port_info + nf->pkey + nf->other;
}

static int excluded_find(const struct sm *sm, uint64_t guid)
{
	for (unsigned i = 0; i < sm->n_excluded; i++)
		if (sm->excluded[i] == guid)
			return (int)i;
	return -1;
}

static void excluded_drop(struct sm *sm, unsigned i)
{
	sm->excluded[i] = sm->excluded[--sm->n_excluded];
}

/*
 * Name every node that did not acknowledge Sets in this sweep, and fill
 * the policy's counts: nodes already excluded apart from the others.
 */
static void faults_tally(struct sweep *sw, struct sweep_tally *t)
{
	struct sm *sm = sw->sm;

	for (size_t i = 0; sw->faults && i < sw->f.n_nodes; i++) {
		const struct node_fault *nf = &sw->faults[i];
		const struct fab_node *n = fabric_node(&sw->f, (int32_t)i);
		bool excl = excluded_find(sm, n->guid) >= 0;

		if (!fault_total(nf))
			continue;
		sm_health_unanswered(sm, n->guid, fault_total(nf));
		if (excl)
			t->unacked_excluded++;
		else
			t->unacked_nodes++;
		log_err("ERR 0220: %s 0x%016" PRIx64 " \"%s\" did not acknowledge"
			" %u LFT, %u SwitchInfo, %u PortInfo, %u P_KeyTable and"
			" %u other Sets%s", fabric_node_type_str(n->type), n->guid,
			fab_node_label(n), nf->lft, nf->switch_info,
			nf->port_info, nf->pkey, nf->other,
			excl ? ": still excluded" : "");
	}
}

/*
 * After the verdict: excluded nodes that acknowledged everything this
 * sweep (or left the fabric) are taken back; the next heavy sweep routes
 * through them again.  Returns how many came back.
 */
static unsigned excluded_review(struct sweep *sw)
{
	struct sm *sm = sw->sm;
	unsigned back = 0;

	for (unsigned i = 0; i < sm->n_excluded;) {
		int32_t id = fabric_find(&sw->f, sm->excluded[i]);

		if (id != FAB_NONE && sw->faults &&
		    fault_total(&sw->faults[id])) {
			i++;
			continue;
		}
		log_info("node 0x%016" PRIx64 " %s: no longer excluded",
			 sm->excluded[i], id == FAB_NONE ? "left the fabric"
				: "acknowledges its Sets again");
		excluded_drop(sm, i);
		back++;
	}
	return back;
}

/* SWEEP_EXCLUDE: every node with unacknowledged Sets joins the list. */
static unsigned excluded_add(struct sweep *sw)
{
	struct sm *sm = sw->sm;
	unsigned added = 0;

	for (size_t i = 0; sw->faults && i < sw->f.n_nodes; i++) {
		const struct fab_node *n = fabric_node(&sw->f, (int32_t)i);

		/* The SM's own node is never excluded: without its links
		 * there would be no subnet to bring up. */
		if (!fault_total(&sw->faults[i]) ||
		    (int32_t)i == sw->f.local_node ||
		    excluded_find(sm, n->guid) >= 0)
			continue;
		if (sm->n_excluded == SM_MAX_EXCLUDED) {
			log_err("ERR 0221: cannot exclude 0x%016" PRIx64 ": %u"
				" nodes are excluded already", n->guid,
				SM_MAX_EXCLUDED);
			continue;
		}
		log_err("ERR 0221: excluding %s 0x%016" PRIx64 " \"%s\" after %u"
			" sweeps without acknowledged Sets: no route will"
			" cross it and its links are not armed or activated",
			fabric_node_type_str(n->type), n->guid,
			fab_node_label(n), sm->failed_sweeps + 1);
		sm->excluded[sm->n_excluded++] = n->guid;
		added++;
	}
	return added;
}

/* ------------------------------------------------ LID-routed SMPs */

/* The port whose LID SMPs to node `n` are addressed to (fabric_node_lid()),
 * or -1. */
static int node_lid_port(const struct fab_node *n)
{
	uint16_t lid = fabric_node_lid(n);

	if (!lid)
		return -1;
	if (n->type == NODE_TYPE_SWITCH)
		return 0;
	for (unsigned pn = 1; pn <= n->num_ports; pn++)
		if (n->ports[pn].lid == lid)
			return (int)pn;
	return -1;
}

/* The node's LID as assigned and as the port holds it (read by this
 * sweep, or the answer to our Set), or 0 when they differ. */
static uint16_t lid_in_place(const struct fab_node *n)
{
	int pn = node_lid_port(n);

	if (pn < 0 || be16toh(n->ports[pn].pi.lid) != n->ports[pn].lid ||
	    !n->ports[pn].valid)
		return 0;
	return n->ports[pn].lid;
}

/*
 * Does a LID-routed packet from port `pn` of node `from` to `dlid` reach
 * port `to_port` of node `to` (any port of a switch) through this sweep's
 * forwarding tables, every switch on the way having acknowledged all its
 * LFT and SwitchInfo Sets, and with `active` over links whose ports this
 * sweep read ACTIVE?  At most SMP_MAX_HOPS switches.
 */
static bool port_active(const struct fab_port *p)
{
	return p->valid && pi_port_state(&p->pi) == PORT_STATE_ACTIVE;
}

/* A link both of whose ends were read ACTIVE. */
static bool link_active(const struct fabric *f, const struct fab_port *p)
{
	return port_active(p) &&
	       port_active(&fabric_node(f, p->peer_node)->ports[p->peer_port]);
}

static bool lft_walk(const struct sweep *sw, int32_t from, uint8_t pn,
		     uint16_t dlid, int32_t to, uint8_t to_port, bool active)
{
	const struct fabric *f = &sw->f;
	const struct fab_node *tn = fabric_node(f, to);
	int32_t cur = from;

	if (fabric_node(f, from)->type != NODE_TYPE_SWITCH) {
		const struct fab_port *p = &fabric_node(f, from)->ports[pn];

		if (p->peer_node == FAB_NONE || (active && !link_active(f, p)))
			return false;
		if (p->peer_node == to && tn->type != NODE_TYPE_SWITCH)
			return p->peer_port == to_port;
		cur = p->peer_node;
	}
	for (unsigned hop = 0; hop <= SMP_MAX_HOPS; hop++) {
		const struct fab_node *n = fabric_node(f, cur);
		const struct lft *l;

		if (n->type != NODE_TYPE_SWITCH || (size_t)cur >= sw->routes.n_nodes)
			return false;
		l = &sw->routes.lft[cur];
		if (!l->port || dlid > l->top)
			return false;
		if (sw->faults && (sw->faults[cur].lft || sw->faults[cur].switch_info))
			return false;
		unsigned out = l->port[dlid];
		if (out == 0)
			return cur == to;
		if (out > n->num_ports)
			return false;
		const struct fab_port *p = &n->ports[out];
		if (p->peer_node == FAB_NONE || (active && !link_active(f, p)))
			return false;
		if (p->peer_node == to && tn->type != NODE_TYPE_SWITCH)
			return p->peer_port == to_port;
		cur = p->peer_node;
	}
	return false;
}

/*
 * After a completed heavy sweep: which nodes later sweeps may send
 * LID-routed SMPs (fab_node.smp_lid).  A node qualifies when its LID is
 * the one assigned and its port holds it, the SM's port holds the SM's
 * LID, the forwarding tables lead from the SM's port to the node's LID
 * and from the node back to the SM's LID (a LID-routed answer travels by
 * the LFTs too: IBA 14.2.2.1), every switch on both ways acknowledged
 * every LFT and SwitchInfo Set of the sweep, and no Set to the node
 * itself was lost, nor a LID-routed SMP to it.  The SM's own node keeps
 * directed route (it costs no hop).  O(nodes x hops).
 */
static unsigned lid_reach_mark(struct sweep *sw)
{
	struct fabric *f = &sw->f;
	const struct fab_node *ln = fabric_node(f, f->local_node);
	uint8_t lp = f->local_port;
	unsigned n_ok = 0;
	bool sm_ok = sw->sm_lid &&
		     (ln->type == NODE_TYPE_SWITCH ? lid_in_place(ln) == sw->sm_lid
		      : (ln->ports[lp].valid &&
			 be16toh(ln->ports[lp].pi.lid) == sw->sm_lid));

	for (size_t i = 0; i < f->n_nodes; i++) {
		struct fab_node *n = &f->nodes[i];
		uint16_t lid = sm_ok ? lid_in_place(n) : 0;
		int pn = node_lid_port(n);

		if ((int32_t)i == f->local_node || n->smp_lid_failed ||
		    (sw->faults && fault_total(&sw->faults[i])) || !lid ||
		    !lft_walk(sw, f->local_node, lp, lid, (int32_t)i, (uint8_t)pn,
			      false) ||
		    !lft_walk(sw, (int32_t)i, (uint8_t)pn, sw->sm_lid,
			      f->local_node, lp, false))
			lid = 0;
		n->smp_lid = lid;
		n->smp_lid_failed = false;
		n_ok += lid != 0;
	}
	return n_ok;
}

/*
 * Before PROGRAM: the nodes this sweep's Sets may reach LID-routed.  A
 * node the last completed sweep marked (lid_reach_mark()), at the same
 * directed route, holding the same LID as then and as assigned now (read
 * by this sweep's discovery), no LID-routed SMP to it lost in this
 * sweep's discovery, not excluded, with the SM's LID unchanged, and the
 * new routes to it and back crossing only links read ACTIVE (while the
 * LFTs change, a switch may forward by old or new entries; a link that
 * came back is not ACTIVE before this sweep's ACTIVATE, and drops
 * LID-routed SMPs).  Anything else (new parts, moved parts, changed LIDs)
 * gets directed route; a route broken elsewhere costs a fallback.
 */
static unsigned lid_reach_plan(struct sweep *sw)
{
	struct sm *sm = sw->sm;
	const struct fabric *o = &sm->fabric;
	unsigned n_ok = 0;

	if (!o->n_nodes || !sw->sm_lid || sm_local_lid(sm) != sw->sm_lid ||
	    sw->no_lid)
		return 0;
	for (size_t i = 0; i < sw->f.n_nodes; i++) {
		struct fab_node *n = &sw->f.nodes[i];
		int32_t j = fabric_find(o, n->guid);
		const struct fab_node *on;

		n->smp_lid = 0;
		if (j == FAB_NONE || (int32_t)i == sw->f.local_node ||
		    n->smp_lid_failed || excluded_find(sm, n->guid) >= 0)
			continue;
		on = fabric_node(o, j);
		int pn = node_lid_port(n);
		if (!on->smp_lid || on->smp_lid_failed || on->hops != n->hops ||
		    memcmp(on->path, n->path, (size_t)n->hops + 1) ||
		    lid_in_place(n) != on->smp_lid || pn < 0 ||
		    !lft_walk(sw, sw->f.local_node, sw->f.local_port,
			      on->smp_lid, (int32_t)i, (uint8_t)pn, true) ||
		    !lft_walk(sw, (int32_t)i, (uint8_t)pn, sw->sm_lid,
			      sw->f.local_node, sw->f.local_port, true))
			continue;
		n->smp_lid = on->smp_lid;
		n_ok++;
	}
	return n_ok;
}

static void stage_start(struct sweep *sw, enum sweep_stage stage)
{
	sw->stage = stage;
	sw->cursor = 0;
	sw->rereg = !sw->sm->rereg_done;
	batch_init(&sw->batch, sw->sm->engine, stage_done, sw);
	sw->batch.on_fail = on_set_failed;
	sw->batch.lidf = &sw->f;
	batch_run(&sw->batch, stage == ST_PROGRAM ? more_program : more_activate);
}

static void stage_done(struct smp_batch *b, void *arg)
{
	struct sweep *sw = arg;
	struct sm *sm = sw->sm;

	if (sw->aborted)
		return;
	if (sm->ha.standing_down) {
		sweep_finish(sw, false, STOOD_DOWN);
		return;
	}
	sw->failed += b->failed;
	sw->readbacks += b->readbacks;
	if (sw->stage == ST_PROGRAM) {
		sw->t_prog = ev_time();
		sw->prog_smps = b->sent;
		stage_start(sw, ST_ACTIVATE);
		return;
	}
	sw->act_smps = b->sent;
	ev_tstamp now = ev_time();
	if (sw->failed > sw->unacked || (sw->unacked && !sw->faults)) {
		/* Sets we could not even queue, or no memory to say whose
		 * were lost: nothing to blame a node for. */
		sweep_finish(sw, false, "Sets could not be queued");
		return;
	}
	struct sweep_tally t = {
		.failed_queries = sw->holes_failed, .dead_ends = sw->holes_dead,
		.twins = sw->twins, .failed_sweeps = sm->failed_sweeps,
		.once = sm->cfg.once,
	};
	faults_tally(sw, &t);
	enum sweep_verdict v = sweep_decide(&t);
	if (v == SWEEP_EXCLUDE && !excluded_add(sw))
		v = SWEEP_DEGRADED;	/* the list is full: live with them */
	if (v == SWEEP_RETRY || v == SWEEP_EXCLUDE) {
		char why[128];
		snprintf(why, sizeof(why), "%u Sets were not acknowledged by %u"
			 " node(s)%s", sw->unacked, t.unacked_nodes,
			 v == SWEEP_EXCLUDE ? "; sweeping again without them" : "");
		sweep_finish(sw, false, why);
		return;
	}
	unsigned back = excluded_review(sw);
	/* Excluded nodes are tried again (and named) every sweep; one that
	 * came back is routed through by the next one. */
	sm->incomplete = sw->holes_failed + sw->holes_dead != 0 ||
			 sm->n_excluded != 0 || back != 0;
	if (v == SWEEP_DEGRADED) {
		log_err("ERR 0222: subnet degraded: %u node(s) excluded for"
			" unacknowledged Sets, %u duplicate GUID(s) left out,"
			" %u discovery queries failed, %u dead ends",
			sm->n_excluded, sw->twins, sw->holes_failed, sw->holes_dead);
		if (sm->cfg.once)
			sm->exit_code = 2;
	} else if (sm->cfg.once) {
		sm->exit_code = 0;
	}
	sm->rereg_done = true;
	struct fabric_counts c;
	fabric_count(&sw->f, &c);
	char pk[96] = "";
	if (sw->pkey_smps)	/* read while the routing ran */
		snprintf(pk, sizeof(pk), ", P_KeyTable reads %.3f s (%u SMPs)",
			 sw->t_pkeys - sw->t_disc, sw->pkey_smps);
	log_info("heavy sweep: %zu switches, %zu CAs, %zu links, max LID %u,"
		 " routing %s; %s %.3f s (%u SMPs)%s, program %.3f s"
		 " (%u Sets, %u of them P_KeyTable), activate %.3f s (%u Sets)",
		 c.switches, c.cas, c.links, sw->f.max_lid, sw->routes.engine,
		 sw->quick ? "quick sweep" : "discovery",
		 sw->t_disc - sw->t0, sw->disc_smps, pk, sw->t_prog - sw->t_disc,
		 sw->prog_smps, sw->pkey_sets, now - sw->t_prog, sw->act_smps);
	if (sw->readbacks)
		log_info("PortInfo Sets: %u repeats refused as invalid transitions"
			 " were found done by a read (their first attempt's"
			 " answer was lost)", sw->readbacks);
	if (routing_split_active(&sw->routes))
		log_info("virtual layers: %u in each of %u QoS classes (layer j"
			 " of class c on VL c x %u + j), %u SLtoVLMappingTable"
			 " Sets", sw->routes.n_layers,
			 sw->routes.split.n_classes, sw->routes.split.class_vls,
			 sw->sl2vl_sets);
	else if (sw->routes.n_layers > 1)
		log_info("virtual layers: %u (SL i on VL i), %u SLtoVLMappingTable"
			 " Sets", sw->routes.n_layers, sw->sl2vl_sets);
	else if (sm->cfg.qos)
		log_info("qos TRUE: %u SLtoVLMappingTable Sets",
			 sw->sl2vl_sets);
	if (sm->cfg.qos)
		log_info("qos TRUE: %u VLArbitrationTable Sets",
			 sw->vlarb_sets);
	{
		const struct mad_engine_stats *es = mad_engine_stats(sm->engine);
		uint64_t all = es->smps_sent - sw->smps0, lid = es->smps_lid - sw->lid0;
		uint64_t fb = es->lid_fallbacks - sw->fb0;
		unsigned lost = 0;

		for (size_t i = 0; i < sw->f.n_nodes; i++)
			lost += sw->f.nodes[i].smp_lid_failed;
		unsigned reach = lid_reach_mark(sw);
		log_info("heavy sweep SMPs: %" PRIu64 " directed route, %" PRIu64
			 " LID-routed (to %u nodes), %" PRIu64 " fell back to"
			 " directed route; %u of %zu nodes LID-routed next sweep",
			 all - lid, lid, sw->lid_planned, fb, reach, sw->f.n_nodes);
		if (fb || lost)
			log_warnx("ERR 0230: %" PRIu64 " LID-routed SMPs were lost"
				  " and sent again by directed route: %u node(s)"
				  " get directed route until a sweep verifies"
				  " their routes again", fb, lost);
	}
	sw->stage = ST_DONE;
	dumps_write(sm, &sw->f, &sw->routes);
	if (sm->cfg.dump_fabric) {
		int rc = topo_dump_file(&sw->f, sm->cfg.dump_fabric);
		if (rc < 0)
			log_err_rc(rc, "ERR 0203: cannot write %s",
				sm->cfg.dump_fabric);
	}
	sweep_finish(sw, true, NULL);
}

static void cache_warn(void *arg, const char *msg)
{
	log_warnx("ERR 0204: %s", msg);
}

static int cache_path(const struct sm *sm, char *buf, size_t sz)
{
	int n = snprintf(buf, sz, "%s/guid2lid", sm->cfg.cache_dir);
	return n < 0 || (size_t)n >= sz ? -ENAMETOOLONG : 0;
}

/*
 * Load the guid2lid cache once, the first time a sweep needs it.  A
 * standby's cache may hold only its master's copy (sm/ha/sync.c); with
 * honor_guid2lid_file the file is read into it too when the standby
 * takes over, its entries winning, as OpenSM restores the file then.
 */
static int cache_ensure(struct sm *sm)
{
	char path[600];

	if (sm->lids && (sm->lids_file_read || !sm->adopt_lids ||
			 !sm->cfg.honor_guid2lid_file))
		return 0;
	if (!sm->lids && !(sm->lids = lid_cache_new()))
		return -ENOMEM;
	sm->lids_file_read = true;
	if (cache_path(sm, path, sizeof(path)) < 0 || sm->cfg.reassign_lids)
		return 0;
	int n = lid_cache_load(sm->lids, path, cache_warn, NULL);
	if (n < 0)
		log_warn_rc(n, "ERR 0205: cannot read %s", path);
	else if (n > 0)
		log_info("guid2lid: %d entries from %s", n, path);
	return 0;
}

static void cache_save(struct sm *sm)
{
	char path[600];

	if (cache_path(sm, path, sizeof(path)) < 0)
		return;
	int rc = mkdir_p(sm->cfg.cache_dir);
	if (rc < 0) {
		log_err_rc(rc, "ERR 0206: LIDs will not survive a restart:"
			   " cannot create %s", sm->cfg.cache_dir);
		return;
	}
	rc = lid_cache_save(sm->lids, path);
	if (rc < 0)
		log_warn_rc(rc, "ERR 0207: cannot write %s", path);
}

static void sweep_plan(struct sweep *sw);

/*
 * Holes in the model (queries that got no answer, dead ends) judged by
 * the sweep policy (sm/sweep_policy.c): false when the sweep ended, to be
 * tried again; true when the fabric is taken as it is, with ERR 0211 if it
 * has holes.  `holes` says what they are.
 */
static bool holes_accepted(struct sweep *sw, const struct sweep_tally *t,
			   const char *holes)
{
	if (sweep_decide(t) == SWEEP_RETRY) {
		char why[160];

		snprintf(why, sizeof(why), "discovery incomplete: %s", holes);
		sweep_finish(sw, false, why);
		return false;
	}
	if (t->failed_queries || t->dead_ends)
		log_err("ERR 0211: bringing up an incomplete fabric after %u"
			" failed sweeps: %s", sw->sm->failed_sweeps, holes);
	return true;
}

/* Has the model a port of this GUID with IsSM set? */
static bool has_sm_port(const struct fabric *f, uint64_t guid)
{
	for (size_t id = 0; id < f->n_nodes; id++) {
		const struct fab_node *n = &f->nodes[id];
		bool sw = n->type == NODE_TYPE_SWITCH;

		for (unsigned pn = sw ? 0 : 1; pn <= (sw ? 0 : n->num_ports);
		     pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (p->valid && p->guid == guid &&
			    (be32toh(p->pi.cap_mask) & PI_CAP_IS_SM))
				return true;
		}
	}
	return false;
}

static void on_discovered(void *arg, const struct discover_result *r)
{
	struct sweep *sw = arg;
	struct sm *sm = sw->sm;

	if (sw->aborted)
		return;
	sw->t_disc = ev_time();
	sw->disc_smps = r->smps;
	/* node_name_map_name: what the log, dumps and findings call them */
	for (size_t i = 0; i < sw->f.n_nodes && sm->names.n; i++)
		sw->f.nodes[i].name = node_names_find(&sm->names,
						      sw->f.nodes[i].guid);
	if (r->dup_guids)
		log_err("ERR 0208: %u duplicate GUIDs in the fabric: the nodes"
			" first seen keep them, the others are left out",
			r->dup_guids);
	if (r->self_link_port &&
	    sm_fatal(sm, 109, "duplicate GUID found by a link from a port to"
		     " itself: node 0x%016" PRIx64 " port %u is linked to"
		     " node 0x%016" PRIx64 " port %u", r->self_link_guid,
		     r->self_link_port, r->self_link_guid, r->self_link_port)) {
		sweep_finish(sw, false, "fatal error (exit_on_fatal)");
		return;
	}
	/*
	 * Queries that got no answer leave holes in the model: switches
	 * without SwitchInfo, ports without PortInfo, whole subtrees missing.
	 * The policy (sm/sweep_policy.c) fails and retries such a sweep, and
	 * lets a daemon accept an incomplete fabric after a few tries.
	 */
	struct sweep_tally t = {
		.failed_queries = r->failed, .dead_ends = r->dead_ends,
		.twins = r->dup_guids, .failed_sweeps = sm->failed_sweeps,
		.once = sm->cfg.once,
	};
	char holes[96];
	snprintf(holes, sizeof(holes), "%u queries failed, %u dead ends",
		 r->failed, r->dead_ends);
	if (!holes_accepted(sw, &t, holes))
		return;
	sm->incomplete = r->failed + r->dead_ends != 0;
	sm_health_discovered(sm, r->dup_guid, r->n_dup_guid);
	sw->holes_failed = r->failed;
	sw->holes_dead = r->dead_ends;
	sw->twins = r->dup_guids;
	/* r lives in the discovery: not to be read after this.  The
	 * discovery stays for the P_Key tables (sweep_plan()). */
	r = NULL;
	if (sm->state == SM_MASTER && sm->master_claim &&
	    has_sm_port(&sw->f, sm->master_claim))
		/* stands down now: the election decides */
		(void)sm_post_wait(sm, &(struct sm_msg){
			.ev = SM_EV_MASTER_CLAIMED });
	if (sm->ha.standing_down) {
		sweep_finish(sw, false, STOOD_DOWN);
		return;
	}
	if (sw->f.local_node == FAB_NONE) {
		sweep_finish(sw, false, "the local port did not answer NodeInfo");
		return;
	}
	sweep_plan(sw);
}

static void *route_main(void *arg);
static void on_routed(struct ev_loop *loop, ev_async *w, int revents);
static void on_pkeys(void *arg, const struct discover_result *r);
static void plan_joined(struct sweep *sw);
static void route_done(struct sweep *sw);

/* "0x..., 0x... and N more": the first port GUIDs of a report list. */
static void guid_list(char *buf, size_t len, const uint64_t *g, unsigned n,
		      unsigned total)
{
	size_t at = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < n && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s0x%016" PRIx64,
				       i ? ", " : "", g[i]);
	if (total > n && at < len)
		snprintf(buf + at, len - at, " and %u more", total - n);
}

/* Ports that got fewer LIDs than the LMC asks, or none: named. */
static void log_lid_shortage(const struct sm *sm, const struct lid_report *r)
{
	char names[LID_REPORT_NAMES * 20 + 32], why[64];

	if (r->limit_switch)
		snprintf(why, sizeof(why), "LinearFDBCap of switch 0x%016"
			 PRIx64, r->limit_switch);
	else
		snprintf(why, sizeof(why), "the unicast LID space");
	if (r->reduced) {
		guid_list(names, sizeof(names), r->reduced_guid,
			  r->reduced < LID_REPORT_NAMES ? r->reduced :
			  LID_REPORT_NAMES, r->reduced);
		log_err("ERR 0212: LMC %u does not fit below LID %u (%s): %u "
			"ports get LMC %u (%u LIDs each): %s", sm->cfg.lmc,
			r->limit + 1u, why, r->reduced, r->lmc, 1u << r->lmc,
			names);
	}
	if (r->exhausted) {
		guid_list(names, sizeof(names), r->without, r->n_without,
			  r->exhausted);
		log_err("ERR 0209: ran out of LIDs below LID %u (%s): %u ports "
			"without a LID: %s", r->limit + 1u, why, r->exhausted,
			names);
	}
}

/* PLAN: LIDs, partitions and routes for the new model, then PROGRAM. */
static void sweep_plan(struct sweep *sw)
{
	struct sm *sm = sw->sm;
	struct lid_report rep;
	int rc;

	struct lid_policy pol = { .lmc = sm->cfg.lmc,
				  .reassign = sm->cfg.reassign_lids,
				  .lmc_esp0 = sm->cfg.lmc_esp0,
				  .prefer_fabric = sm->adopt_lids &&
						   !sm->cfg.honor_guid2lid_file };
	if (cache_ensure(sm) < 0) {
		sweep_finish(sw, false, "out of memory");
		return;
	}
	rc = lid_assign(&sw->f, sm->lids, &pol, &rep);
	if (rc < 0 && rc != -ENOSPC) {
		sweep_finish(sw, false, "LID assignment failed");
		return;
	}
	log_lid_shortage(sm, &rep);
	sm_health_lids(sm, &rep);
	if (rep.fixed_dup || rep.fixed_range)
		log_warnx("ERR 0210: fixed %u duplicate and %u invalid LIDs",
			  rep.fixed_dup, rep.fixed_range);
	log_debug("LIDs: %u from cache, %u kept, %u new; max LID %u",
		  rep.kept_cache, rep.kept_fabric, rep.assigned, sw->f.max_lid);
	cache_save(sm);

	struct fab_node *ln = fabric_node(&sw->f, sw->f.local_node);
	sw->sm_lid = ln->ports[sw->f.local_port].lid;

	/* Excluded nodes keep their LIDs but lose their links: routing goes
	 * around them and their links are neither armed nor activated. */
	for (unsigned i = 0; i < sm->n_excluded; i++) {
		int32_t id = fabric_find(&sw->f, sm->excluded[i]);

		if (id != FAB_NONE)
			fabric_unlink_node(&sw->f, id);
	}
	/*
	 * Routes, verified; the previous ones when they fail (sm/route.c).
	 * The engines and the checks run on a thread (0.4-1 s on 5,000 to
	 * 12,000 hosts), so that the loop answers the SA, traps and the
	 * control socket meanwhile.  Nothing on the loop touches sw->f nor
	 * the job until plan_joined(), but for the P_Key tables: routing
	 * needs none of them, so the discovery reads them now (half its
	 * SMPs on a fabric of 8-block HCA tables), while the thread routes.
	 * No thread: the routing runs here, as before, the reads after it.
	 */
	sm_route_prepare(sm, &sw->f, &sw->job);
	sw->routes_pending = true;
	if (sw->disc) {
		sw->pkey_smps = discover_read_pkeys(sw->disc, on_pkeys, sw);
		sw->pkeys_pending = sw->pkey_smps != 0;
	}
	ev_async_init(&sw->routed, on_routed);
	sw->routed.data = sw;
	ev_async_start(sm->loop, &sw->routed);
	sw->routing = pthread_create(&sw->route_th, NULL, route_main, sw) == 0;
	if (!sw->routing) {
		ev_async_stop(sm->loop, &sw->routed);
		sm_route_compute(&sw->job);
		sw->routes_pending = false;
		plan_joined(sw);
	}
}

/* Loop: the P_Key tables are read. */
static void on_pkeys(void *arg, const struct discover_result *r)
{
	struct sweep *sw = arg;

	if (sw->aborted)
		return;
	sw->pkeys_pending = false;
	sw->t_pkeys = ev_time();
	sw->pkey_smps = r->smps;
	sw->pkey_failed = r->failed;
	plan_joined(sw);
}

/* The routing thread: the heavy part of sm_route(), then a word to the
 * loop.  It reads sw->f and writes sw->job, nothing else. */
static void *route_main(void *arg)
{
	struct sweep *sw = arg;

	sm_route_compute(&sw->job);
	ev_async_send(sw->sm->loop, &sw->routed);
	return NULL;
}

/* Loop: the routing thread is done. */
static void on_routed(struct ev_loop *loop, ev_async *w, int revents)
{
	struct sweep *sw = w->data;

	(void)loop;
	(void)revents;
	route_join(sw);
	if (sw->aborted)
		return;		/* shutdown: sweep_heavy_abort() frees it */
	sw->routes_pending = false;
	plan_joined(sw);
}

/*
 * The P_Key reads' holes, judged as the discovery's were (on_discovered()):
 * false when the sweep ended for them.
 */
static bool pkey_holes_ok(struct sweep *sw)
{
	struct sm *sm = sw->sm;

	if (!sw->pkey_failed)
		return true;
	struct sweep_tally t = {
		.failed_queries = sw->holes_failed + sw->pkey_failed,
		.dead_ends = sw->holes_dead, .twins = sw->twins,
		.failed_sweeps = sm->failed_sweeps, .once = sm->cfg.once,
	};
	char holes[64];
	snprintf(holes, sizeof(holes), "%u P_KeyTable reads failed",
		 sw->pkey_failed);
	if (!holes_accepted(sw, &t, holes))
		return false;
	sw->holes_failed += sw->pkey_failed;
	sm->incomplete = true;
	return true;
}

/* PLAN, second half, once the routing and the P_Key reads are both done:
 * the partitions' tables, what the routing found, then PROGRAM. */
static void plan_joined(struct sweep *sw)
{
	if (sw->routes_pending || sw->pkeys_pending)
		return;
	discover_free(sw->disc);
	sw->disc = NULL;
	if (sw->sm->ha.standing_down) {
		sweep_finish(sw, false, STOOD_DOWN);
		return;
	}
	if (!pkey_holes_ok(sw))
		return;
	/* The partitions' P_Key tables for this model (-P; sm/program/pkey.c). */
	if (sm_parts_resolve(sw->sm, &sw->f) < 0) {
		sweep_finish(sw, false, "partitions could not be resolved");
		return;
	}
	route_done(sw);
}

/* What the routing found, then PROGRAM. */
static void route_done(struct sweep *sw)
{
	char err[512];
	int rc = sm_route_finish(sw->sm, &sw->job, &sw->routes, err,
				 sizeof(err));

	if (rc < 0) {
		sweep_finish(sw, false, err);
		return;
	}
	sw->lid_planned = lid_reach_plan(sw);
	stage_start(sw, ST_PROGRAM);
}

/* A new heavy sweep, registered as the one in progress; NULL: no memory. */
static struct sweep *sweep_new(struct sm *sm)
{
	struct sweep *sw = calloc(1, sizeof(*sw));

	if (!sw)
		return NULL;
	sw->sm = sm;
	sw->t0 = ev_time();
	fabric_init(&sw->f);
	sm->sweep = sw;
	sm->stats.heavy_sweeps++;
	sm->act_count++;
	const struct mad_engine_stats *es = mad_engine_stats(sm->engine);
	sw->smps0 = es->smps_sent;
	sw->lid0 = es->smps_lid;
	sw->fb0 = es->lid_fallbacks;
	return sw;
}

unsigned sweep_forget_lfts(struct sm *sm)
{
	const struct fabric *f = &sm->fabric;
	unsigned n = 0;

	if (sm->sweep || !sm->images)
		return 0;
	for (size_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].type == NODE_TYPE_SWITCH) {
			lft_images_forget(sm->images, f->nodes[i].guid);
			n++;
		}
	return n;
}

/* A reroute asked for during the last heavy sweep: this one sends every
 * LFT whole. */
static void reroute_deferred(struct sm *sm)
{
	if (!sm->ha.reroute_pending)
		return;
	sm->ha.reroute_pending = false;
	log_info("reroute: LFTs of %u switches sent whole (asked for during"
		 " the last sweep)", sweep_forget_lfts(sm));
}

int sweep_heavy_start_model(struct sm *sm, struct fabric *f, unsigned smps,
			    double t0)
{
	struct sweep *sw;

	if (sm->sweep)
		return -EBUSY;
	if (f->local_node == FAB_NONE)
		return -EINVAL;
	reroute_deferred(sm);
	sw = sweep_new(sm);
	if (!sw)
		return -ENOMEM;
	fabric_free(&sw->f);
	sw->f = *f;
	fabric_init(f);
	sw->quick = true;
	sw->t0 = t0;
	sw->t_disc = ev_time();
	sw->disc_smps = smps;
	sw->no_lid = true;		/* links were lost: all directed route */
	sm->topo_changed = false;
	sm->incomplete = false;
	sweep_plan(sw);
	return 0;
}

int sweep_heavy_start(struct sm *sm)
{
	struct sweep *sw;
	int rc;

	if (sm->sweep)
		return -EBUSY;
	sm_mkey_start(sm);	/* m_key set by a reload */
	reroute_deferred(sm);
	sw = sweep_new(sm);
	if (!sw)
		return -ENOMEM;
	sm->mkey_hook.f = &sw->f;	/* keys by the links found so far */
	/* the whole fabric is read again: what traps said is in it */
	sm->n_quick_sw = 0;
	sm->quick_full = false;
	rc = discover_start(&sw->disc, sm->engine, &sw->f, true, on_discovered,
			    sw);
	if (rc == 0) {	/* twins: the port the last sweep knew is genuine */
		discover_set_previous(sw->disc, &sm->fabric);
		/* and the nodes it reached LID-routed get LID-routed reads,
		 * unless something changed: a lost link may lie on the old
		 * routes, and every SMP over it would wait out its deadline
		 * before falling back (0.4 s of a sweep on fat2-small) */
		sw->no_lid = sm->topo_changed;
		discover_set_lid_routes(sw->disc, sm_local_lid(sm) != 0 &&
					!sw->no_lid);
		discover_set_defer_pkeys(sw->disc, true, 0);
		sm->topo_changed = false;
	}
	if (rc < 0) {
		sm->sweep = NULL;
		sweep_free(sw);
	}
	return rc;
}

/*
 * Shutdown: the engine is about to cancel everything, and cancelled
 * requests call back into the sweep; mark it so callbacks do nothing.
 * The caller frees the engine first, then calls this again to free.
 */
void sweep_heavy_abort(struct sm *sm)
{
	struct sweep *sw = sm->sweep;

	if (!sw || !worker_abort_step(&sw->aborted))
		return;
	sm->sweep = NULL;
	sweep_free(sw);
}
