/*
 * light.c - the light sweep: SwitchInfo of every switch (a set
 * port-state-change bit means a link came or went, which asks for a
 * heavy sweep) and the PortInfo of every end port the last heavy sweep
 * made ACTIVE (each must name us as its master SM).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "mad/wire.h"
#include "sm/metrics/hist.h"
#include "sm/program.h"
#include "sm/sm.h"
#include "sm/worker.h"

/*
 * The light sweep reads, every sweep interval, the SwitchInfo of every
 * switch (a PortStateChange means a link came or went: heavy sweep) and
 * the PortInfo of every end port the last heavy sweep made ACTIVE: each
 * must name us as its master SM (MasterSMLID, MasterSMSL 0).  A port
 * that names another SM was set by one that was master meanwhile (a
 * standby that took over while we could not be reached, a split fabric
 * joined): hosts would send their SA queries and traps there.  The heavy
 * sweep that follows sets those ports again.
 */
struct light_sweep {
	struct sm *sm;
	struct smp_batch batch;
	size_t cursor;
	bool aborted;
	unsigned changed;
	uint16_t sm_lid;		/* what every port must name */
	unsigned foreign;		/* ports that name another SM */
	uint64_t first_guid;		/* the first of them, for the log */
	uint8_t first_port;
	uint16_t first_lid, first_sl;
	double t0;			/* began (ev_time) */
};

static void on_light_pi(struct smp_batch *b, int32_t node, uint8_t port,
			const uint8_t *data, void *arg)
{
	struct light_sweep *ls = arg;

	(void)b;
	if (ls->aborted || !data)
		return;		/* a port gone: its switch's PSC tells */
	const struct smp_port_info *pi = (const void *)data;
	uint16_t lid = be16toh(pi->master_sm_lid);
	unsigned sl = pi_sm_sl(pi);

	if (pi_port_state(pi) < PORT_STATE_ARMED ||
	    (lid == ls->sm_lid && sl == 0))
		return;
	if (ls->foreign++ == 0) {
		ls->first_guid = fabric_node(&ls->sm->fabric, node)->guid;
		ls->first_port = port;
		ls->first_lid = lid;
		ls->first_sl = (uint16_t)sl;
	}
}

static void on_light_si(struct smp_batch *b, int32_t node, uint8_t port,
			const uint8_t *data, void *arg)
{
	struct light_sweep *ls = arg;

	if (ls->aborted)
		return;
	if (!data) {
		ls->changed++;	/* a switch that stopped answering */
		return;
	}
	const struct smp_switch_info *si = (const void *)data;
	if (smp_switch_info_psc(si)) {
		const struct fab_node *n = fabric_node(&ls->sm->fabric, node);

		struct log_fields lf = { 0 };

		log_field(&lf, "NODE_GUID=0x%016" PRIx64, n->guid);
		log_field(&lf, "NODE_DESC=%s", n->has_desc ? n->desc : "");
		log_event(LOG_LVL_INFO, 331, &lf, "light sweep: port state change"
			  " on switch 0x%016" PRIx64 " \"%s\"", n->guid,
			  fab_node_label(n));
		ls->changed++;
	}
}

static void on_light_done(struct smp_batch *b, void *arg)
{
	struct light_sweep *ls = arg;
	struct sm *sm = ls->sm;

	if (ls->aborted)
		return;
	sm->light = NULL;
	sm_hist_observe(&sm->stats.sweep_hist[SM_SWEEP_LIGHT],
			ev_time() - ls->t0);
	struct sm_msg m = { .ev = SM_EV_LIGHT_DONE };

	if (ls->changed) {
		m.u.light.changed = true;
		sm->topo_changed = true;	/* the heavy sweep: all DR */
	}
	if (ls->foreign) {
		log_ratelimited(LOG_LVL_WARN, 231, "light sweep: %u port(s)"
				" name another master SM than us (LID %u), e.g."
				" node 0x%016" PRIx64 " port %u: MasterSMLID %u"
				" MasterSMSL %u: heavy sweep to set them again",
				ls->foreign, ls->sm_lid, ls->first_guid,
				ls->first_port, ls->first_lid, ls->first_sl);
		sm->stats.foreign_sm_ports += ls->foreign;
		m.u.light.changed = true;
		m.u.light.foreign_lid = ls->first_lid;
	}
	free(ls);
	/* A heavy sweep asked for meanwhile waited for this one: the state
	 * machine starts it now (never during a light sweep, which reads
	 * the model a heavy sweep replaces). */
	(void)sm_post_msg(sm, &m);
}

/* Of the end ports of node `id`, those the light sweep reads: ACTIVE
 * in the model (a switch's port 0, a CA's linked ports). */
static bool light_port(const struct fab_node *n, unsigned pn)
{
	const struct fab_port *p = &n->ports[pn];

	return p->valid && p->lid &&
	       pi_port_state(&p->pi) == PORT_STATE_ACTIVE;
}

/* Producer of a light sweep: one node per call, the SwitchInfo of a
 * switch and the PortInfo of its end ports. */
static bool more_light(struct smp_batch *b, void *arg)
{
	struct light_sweep *ls = arg;
	const struct fabric *f = &ls->sm->fabric;
	int rc = 0;

	if (ls->cursor >= f->n_nodes)
		return false;
	int32_t id = (int32_t)ls->cursor++;
	const struct fab_node *n = fabric_node(f, id);

	if (n->type == NODE_TYPE_SWITCH) {
		rc = batch_smp(b, MAD_METHOD_GET, n->path, n->hops,
			       SMP_ATTR_SWITCH_INFO, 0, NULL, 0, id, 0,
			       on_light_si, ls);
		if (rc == 0 && light_port(n, 0))
			rc = batch_smp(b, MAD_METHOD_GET, n->path, n->hops,
				       SMP_ATTR_PORT_INFO, 0, NULL, 0, id, 0,
				       on_light_pi, ls);
	} else {
		for (unsigned pn = 1; pn <= n->num_ports && rc == 0; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (light_port(n, pn))
				rc = batch_smp(b, MAD_METHOD_GET, p->path,
					       p->hops, SMP_ATTR_PORT_INFO, pn,
					       NULL, 0, id, (uint8_t)pn,
					       on_light_pi, ls);
		}
	}
	if (rc < 0) {
		b->failed++;
		return false;
	}
	return true;
}

int sweep_light_start(struct sm *sm)
{
	struct light_sweep *ls;

	if (sm->light || sm->sweep || sm->quick)
		return -EBUSY;
	ls = calloc(1, sizeof(*ls));
	if (!ls)
		return -ENOMEM;
	ls->sm = sm;
	ls->t0 = ev_time();
	ls->sm_lid = sm_local_lid(sm);
	sm->light = ls;
	sm->stats.light_sweeps++;
	sm->act_count++;
	batch_init(&ls->batch, sm->engine, on_light_done, ls);
	/* switches the last heavy sweep verified are read LID-routed */
	ls->batch.lidf = &sm->fabric;
	batch_run(&ls->batch, more_light);
	return 0;
}

void sweep_light_abort(struct sm *sm)
{
	struct light_sweep *ls = sm->light;

	if (!ls || !worker_abort_step(&ls->aborted))
		return;
	sm->light = NULL;
	free(ls);
}
