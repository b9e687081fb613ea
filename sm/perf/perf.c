/*
 * perf.c - the performance manager (perf.h): counter sweeps.
 *
 * A counter sweep runs in two phases over a copy of what it needs from
 * the model (the model may be replaced by a heavy sweep meanwhile):
 *
 *   CPI    ClassPortInfo of every node that needs it: nodes not seen
 *          before (perfmgr_query_cpi) and nodes marked unresponsive,
 *          whose ClassPortInfo is the probe that tells whether to read
 *          their ports at all;
 *   PORTS  per port (a switch's 1..N, a CA's linked ones):
 *          PortCounters Get, then PortCountersExtended Get when the
 *          node's CapabilityMask has it, then the reading
 *          goes into the store, then a clearing Set when a narrow
 *          counter passed 75% of its range.
 *
 * A port in progress has exactly one MAD on the wire, so `in_flight`
 * (ports and ClassPortInfo Gets in progress) is also the number of PMA
 * MADs outstanding, held at perfmgr_max_outstanding_queries.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mad/pma.h"
#include "sm/perf/perf.h"
#include "sm/sm.h"
#include "sm/worker.h"

/* A node's PMA as learned (kept from sweep to sweep, sorted by GUID). */
struct pm_node {
	struct perfmgr *pm;		/* callback context */
	uint64_t guid;
	uint16_t lid;			/* its ClassPortInfo goes there */
	uint8_t  type;
	bool     cpi_known;
	bool     unresponsive;
	bool     redirected;
	uint16_t cap_mask;
	uint16_t rlid;			/* redirect: 0 the same LID */
	uint32_t rqp, rqkey;
	/* this sweep */
	bool     probe;			/* its ClassPortInfo is asked for */
	bool     was_unresponsive;	/* at the start of the sweep */
	unsigned answered, lost;
};

enum pm_step { STEP_PC, STEP_EXT, STEP_CLEAR };

/* One port to read in this sweep. */
struct pm_target {
	struct perfmgr *pm;
	uint32_t node;			/* index in pm->nodes */
	uint16_t lid;
	uint8_t  port;
	uint8_t  step;
	uint16_t select;		/* of the clear in flight */
	uint8_t  select2;
	struct pma_sample smp;
};

struct perfmgr {
	struct sm *sm;
	struct pc_store *store;
	ev_timer timer;			/* the sweep period */
	ev_timer resume;		/* paused behind a heavy sweep */
	bool aborted, running, started_once;
	bool due;			/* its period ended during a heavy sweep */
	struct pm_node *nodes;
	size_t n_nodes;
	struct pm_target *targets;
	size_t n_targets;
	size_t next_cpi, next_target;
	unsigned in_flight, cpi_pending;
	unsigned sweep_no;
	uint64_t mads;			/* this sweep */
	unsigned ports_read;
	double t0;
	double began;			/* ev_now() at its start */
	struct perf_stats st;
};

static void pm_pump(struct perfmgr *pm);

static unsigned pm_window(const struct perfmgr *pm)
{
	unsigned w = pm->sm->cfg.perfmgr_max_outstanding_queries;

	return w < 1 ? 1 : w > PERF_WINDOW_MAX ? PERF_WINDOW_MAX : w;
}

const struct pc_store *perf_store(const struct perfmgr *pm)
{
	return pm ? pm->store : NULL;
}

const struct perf_stats *perf_stats(const struct perfmgr *pm)
{
	return pm ? &pm->st : NULL;
}

static int node_cmp(const void *a, const void *b)
{
	const struct pm_node *x = a, *y = b;

	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

static struct pm_node *node_find(struct pm_node *nodes, size_t n,
				 uint64_t guid)
{
	struct pm_node key = { .guid = guid };

	return n ? bsearch(&key, nodes, n, sizeof(*nodes), node_cmp) : NULL;
}

bool perf_node_unresponsive(const struct perfmgr *pm, uint64_t guid)
{
	const struct pm_node *n;

	if (!pm)
		return false;
	n = node_find(pm->nodes, pm->n_nodes, guid);
	return n && n->unresponsive;
}

/* ------------------------------------------------------------- logging */

/* "desc" 0xGUID port N of a port, from the model in force. */
static void port_name(const struct sm *sm, uint64_t guid, uint8_t port,
		      char *buf, size_t len)
{
	int32_t id = fabric_find(&sm->fabric, guid);
	const char *desc = id != FAB_NONE ?
			   fab_node_label(&sm->fabric.nodes[id]) : "?";

	snprintf(buf, len, "\"%s\" 0x%016" PRIx64 " port %u", desc, guid, port);
}

/* The port at the other end of the cable, named; "nothing" if none. */
static void peer_name(const struct sm *sm, uint64_t guid, uint8_t port,
		      char *buf, size_t len)
{
	int32_t id = fabric_find(&sm->fabric, guid);
	const struct fab_node *n = id != FAB_NONE ? &sm->fabric.nodes[id] : NULL;

	if (!n || port > n->num_ports || n->ports[port].peer_node == FAB_NONE) {
		snprintf(buf, len, "nothing known");
		return;
	}
	const struct fab_port *p = &n->ports[port];
	port_name(sm, sm->fabric.nodes[p->peer_node].guid, p->peer_port, buf,
		  len);
}

/* One line per reading that raised error counters, naming both ends. */
static void log_reading(struct perfmgr *pm, const struct pc_port *p,
			const struct pc_result *r)
{
	const struct sm_config *c = &pm->sm->cfg;
	uint32_t errs = r->increased & ((1u << PC_N_ERRORS) - 1);
	char me[128], peer[128], what[640];
	size_t o = 0;

	if (!(c->perfmgr_log_errors && errs) && !r->ext_clear &&
	    !(c->perfmgr_xmit_wait_log &&
	      p->delta[PC_XMIT_WAIT] > c->perfmgr_xmit_wait_threshold))
		return;
	port_name(pm->sm, p->node_guid, p->port, me, sizeof(me));
	peer_name(pm->sm, p->node_guid, p->port, peer, sizeof(peer));
	if (r->ext_clear)
		log_ratelimited(LOG_LVL_INFO, 5403, "perfmgr: counters of %s"
				" (LID %u) were cleared by someone else",
				me, p->lid);
	if (c->perfmgr_log_errors && errs) {
		what[0] = 0;
		for (int i = 0; i < PC_N_ERRORS && o < sizeof(what) - 80; i++)
			if (errs & 1u << i)
				o += (size_t)snprintf(what + o, sizeof(what) - o,
					"%s%s +%" PRIu64 " (total %" PRIu64 ")",
					o ? ", " : "", pc_desc[i].name,
					p->delta[i], p->total[i]);
		log_ratelimited(LOG_LVL_WARN, 5401, "perfmgr: %s (LID %u),"
				" linked to %s: %s", me, p->lid, peer, what);
	}
	if (c->perfmgr_xmit_wait_log &&
	    p->delta[PC_XMIT_WAIT] > c->perfmgr_xmit_wait_threshold)
		log_ratelimited(LOG_LVL_WARN, 5402, "perfmgr: congestion on %s"
				" (LID %u), linked to %s: PortXmitWait +%" PRIu64
				" (threshold %u)", me, p->lid, peer,
				p->delta[PC_XMIT_WAIT],
				c->perfmgr_xmit_wait_threshold);
}

/* -------------------------------------------------------------- sends */

static int pm_send(struct perfmgr *pm, const struct pm_node *n, uint16_t lid,
		   const struct pma_mad *m, mad_done_cb cb, void *arg)
{
	struct mad_addr a = { .lid = lid, .qpn = 1, .qkey = PMA_QKEY };
	int rc;

	if (n->redirected && pm->sm->cfg.perfmgr_redir &&
	    m->hdr.attr_id != htobe16(PMA_ATTR_CLASS_PORT_INFO)) {
		if (n->rlid)
			a.lid = n->rlid;
		a.qpn = n->rqp;
		a.qkey = n->rqkey;
	}
	rc = mad_engine_submit(pm->sm->engine, m, sizeof(*m), &a, cb, arg);
	if (rc == 0) {
		pm->mads++;
		pm->st.mads++;
	}
	return rc;
}

/* An answer came (any, even one refused), or the request was lost. */
static void node_heard(struct pm_node *n, int status)
{
	if (status == -ETIMEDOUT)
		n->lost++;
	else if (status == 0)
		n->answered++;
}

static void bad_answer(struct perfmgr *pm, const struct pm_node *n,
		       const char *what, int rc)
{
	pm->st.bad_answers++;
	log_ratelimited(LOG_LVL_WARN, 5405, "perfmgr: %s of node 0x%016" PRIx64
			" (LID %u) refused: %s", what, n->guid, n->lid,
			strerror(-rc));
}

/* -------------------------------------------------------- ClassPortInfo */

static void on_cpi(void *arg, int status, const void *mad, size_t len)
{
	struct pm_node *n = arg;
	struct perfmgr *pm = n->pm;
	struct pma_cpi cpi;

	if (pm->aborted)
		return;
	pm->in_flight--;
	pm->cpi_pending--;
	node_heard(n, status);
	if (status == 0) {
		int rc = pma_decode_cpi(mad, len, &cpi);

		n->unresponsive = false;	/* its ports are read now */
		if (rc == 0) {
			n->cpi_known = true;
			n->cap_mask = cpi.cap_mask;
			n->redirected = cpi.redirected;
			n->rlid = cpi.redirect_lid;
			n->rqp = cpi.redirect_qp;
			n->rqkey = cpi.redirect_qkey;
		} else {
			bad_answer(pm, n, "ClassPortInfo", rc);
		}
	} else if (status == -ETIMEDOUT) {
		/* silent: its ports would only time out too */
		n->unresponsive = true;
	}
	pm_pump(pm);
}

/* Issue the next ClassPortInfo Get the CPI phase needs; false when the
 * phase has nothing more to send. */
static bool next_cpi(struct perfmgr *pm)
{
	struct pma_mad m;

	while (pm->next_cpi < pm->n_nodes) {
		struct pm_node *n = &pm->nodes[pm->next_cpi++];

		if (!n->probe)
			continue;
		pma_build_get(&m, PMA_ATTR_CLASS_PORT_INFO, 0);
		if (pm_send(pm, n, n->lid, &m, on_cpi, n) < 0)
			continue;
		pm->in_flight++;
		pm->cpi_pending++;
		return true;
	}
	return false;
}

/* --------------------------------------------------------------- ports */

static void on_port(void *arg, int status, const void *mad, size_t len);
static void target_read(struct perfmgr *pm, struct pm_target *t);

static void target_done(struct perfmgr *pm)
{
	pm->in_flight--;
	pm_pump(pm);
}

/* The next MAD of a port in progress; one that cannot be queued ends
 * the port's turn (an extended Get: the reading counts without it). */
static void target_send(struct perfmgr *pm, struct pm_target *t,
			struct pma_mad *m)
{
	if (pm_send(pm, &pm->nodes[t->node], t->lid, m, on_port, t) == 0)
		return;
	if (t->step == STEP_EXT)
		target_read(pm, t);
	else
		target_done(pm);
}

/* The reading is complete: into the store, logged, maybe a clear. */
static void target_read(struct perfmgr *pm, struct pm_target *t)
{
	const struct pm_node *n = &pm->nodes[t->node];
	struct pc_port *p = pc_get(pm->store, n->guid, t->port);
	struct pc_result r;

	if (!p) {
		log_ratelimited(LOG_LVL_WARN, 5407, "perfmgr: the counter store"
				" is full (%zu ports): 0x%016" PRIx64 " port %u"
				" not kept", pc_store_max(pm->store), n->guid,
				t->port);
		target_done(pm);
		return;
	}
	pc_update(p, t->lid, &t->smp, ev_now(pm->sm->loop), &r);
	pm->ports_read++;
	log_reading(pm, p, &r);
	if (!pc_needs_clear(p)) {
		target_done(pm);
		return;
	}
	struct pma_mad m;

	pc_clear_select(p, &t->select, &t->select2);
	pma_build_clear(&m, PMA_ATTR_PORT_COUNTERS, t->port, t->select,
			t->select2);
	t->step = STEP_CLEAR;
	target_send(pm, t, &m);
}

static void port_failed(struct perfmgr *pm, struct pm_target *t)
{
	struct pc_port *p = pc_find(pm->store, pm->nodes[t->node].guid, t->port);

	if (p)
		p->misses++;
	pm->st.failed_reads++;
	target_done(pm);
}

static void on_port(void *arg, int status, const void *mad, size_t len)
{
	struct pm_target *t = arg;
	struct perfmgr *pm = t->pm;
	struct pm_node *n;
	struct pma_mad m;
	int rc;

	if (pm->aborted)
		return;
	n = &pm->nodes[t->node];
	node_heard(n, status);
	switch ((enum pm_step)t->step) {
	case STEP_PC:
		if (status < 0)
			return port_failed(pm, t);
		rc = pma_decode_counters(mad, len, t->port, &t->smp.pc);
		if (rc < 0) {
			bad_answer(pm, n, "PortCounters", rc);
			return port_failed(pm, t);
		}
		if (n->cap_mask & (PMA_CAP_EXT_WIDTH | PMA_CAP_EXT_WIDTH_NOIETF)) {
			pma_build_get(&m, PMA_ATTR_PORT_COUNTERS_EXT, t->port);
			t->step = STEP_EXT;
			return target_send(pm, t, &m);
		}
		return target_read(pm, t);
	case STEP_EXT:
		/* Without the extended counters the reading still counts. */
		rc = status < 0 ? status :
		     pma_decode_counters_ext(mad, len, t->port, &t->smp.ext);
		t->smp.has_ext = rc == 0;
		if (rc < 0 && status == 0)
			bad_answer(pm, n, "PortCountersExtended", rc);
		return target_read(pm, t);
	case STEP_CLEAR:
		/* The answer to a Set is a GetResp of PortCounters with
		 * the counters as they are after the clear. */
		rc = status < 0 ? status :
		     pma_decode_counters(mad, len, t->port, &t->smp.pc);
		if (rc == 0) {
			struct pc_port *p = pc_find(pm->store, n->guid, t->port);

			if (p)
				pc_cleared(p, t->select, t->select2);
			pm->st.clears++;
		}
		return target_done(pm);
	}
}

/* Issue the next port's first Get; false when there is none. */
static bool next_port(struct perfmgr *pm)
{
	struct pma_mad m;

	while (pm->next_target < pm->n_targets) {
		struct pm_target *t = &pm->targets[pm->next_target++];

		if (pm->nodes[t->node].unresponsive)
			continue;
		t->step = STEP_PC;
		memset(&t->smp, 0, sizeof(t->smp));
		pma_build_get(&m, PMA_ATTR_PORT_COUNTERS, t->port);
		if (pm_send(pm, &pm->nodes[t->node], t->lid, &m, on_port, t) < 0) {
			pm->st.failed_reads++;
			continue;
		}
		pm->in_flight++;
		return true;
	}
	return false;
}

/* -------------------------------------------------------------- sweeps */

/* The nodes of the model the sweep reads, with what earlier sweeps
 * learned of them, sorted by GUID; then the ports.  0 or -ENOMEM. */
static int plan(struct perfmgr *pm)
{
	const struct fabric *f = &pm->sm->fabric;
	const struct sm_config *c = &pm->sm->cfg;
	struct pm_node *nodes = calloc(f->n_nodes ? f->n_nodes : 1, sizeof(*nodes));
	size_t n = 0, nt = 0;

	if (!nodes)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *fn = &f->nodes[i];
		uint16_t lid = fabric_node_lid(fn);

		if (!lid || (c->perfmgr_ignore_cas && fn->type == NODE_TYPE_CA))
			continue;
		struct pm_node *old = node_find(pm->nodes, pm->n_nodes, fn->guid);
		struct pm_node *x = &nodes[n++];

		if (old)
			*x = *old;
		x->pm = pm;
		x->guid = fn->guid;
		x->lid = lid;
		x->type = fn->type;
		x->answered = x->lost = 0;
		x->was_unresponsive = x->unresponsive;
		x->probe = x->unresponsive ||
			   (c->perfmgr_query_cpi && !x->cpi_known);
		nt += fn->num_ports;
	}
	qsort(nodes, n, sizeof(*nodes), node_cmp);
	struct pm_target *t = calloc(nt ? nt : 1, sizeof(*t));
	if (!t) {
		free(nodes);
		return -ENOMEM;
	}
	nt = 0;
	for (size_t k = 0; k < n; k++) {
		const struct fab_node *fn = &f->nodes[fabric_find(f, nodes[k].guid)];

		for (unsigned p = 1; p <= fn->num_ports; p++) {
			const struct fab_port *fp = &fn->ports[p];
			uint16_t lid = fn->type == NODE_TYPE_SWITCH ?
				       fn->ports[0].lid : fp->lid;

			/* every port of a switch, linked or not (a link that
			 * went down counted it there: LinkDownedCounter), as
			 * OpenSM reads them; a CA's at its own LID */
			if (!lid || (fn->type != NODE_TYPE_SWITCH &&
				     fp->peer_node == FAB_NONE))
				continue;
			t[nt++] = (struct pm_target){ .pm = pm, .node = (uint32_t)k,
						      .lid = lid, .port = (uint8_t)p };
		}
	}
	free(pm->nodes);
	free(pm->targets);
	pm->nodes = nodes;
	pm->n_nodes = n;
	pm->targets = t;
	pm->n_targets = nt;
	return 0;
}

static bool sweeps_allowed(const struct sm *sm)
{
	return sm->state == SM_MASTER && sm->subnet_up && !sm->ha.standing_down;
}

static bool keep_present(void *arg, const struct pc_port *p)
{
	const struct sm *sm = arg;

	return fabric_find(&sm->fabric, p->node_guid) != FAB_NONE;
}

/* Nodes that answered nothing at all this sweep are unresponsive; those
 * that answered anything are not (any more). */
static void judge_nodes(struct perfmgr *pm)
{
	unsigned un = 0;

	for (size_t i = 0; i < pm->n_nodes; i++) {
		struct pm_node *n = &pm->nodes[i];
		bool was = n->was_unresponsive;

		if (n->answered)
			n->unresponsive = false;
		else if (n->lost)
			n->unresponsive = true;
		if (n->unresponsive && !was)
			log_ratelimited(LOG_LVL_WARN, 5404, "perfmgr: the PMA of"
					" node 0x%016" PRIx64 " (LID %u) answers"
					" nothing: only probed from now on",
					n->guid, n->lid);
		else if (was && !n->unresponsive)
			log_info("perfmgr: the PMA of node 0x%016" PRIx64
				 " (LID %u) answers again", n->guid, n->lid);
		un += n->unresponsive;
	}
	pm->st.unresponsive = un;
}

static void sweep_end(struct perfmgr *pm)
{
	struct sm *sm = pm->sm;
	double now = ev_now(sm->loop);
	int rc;

	pm->running = false;
	judge_nodes(pm);
	pc_expire_deltas(pm->store, pm->began);
	if (sm->cfg.perfmgr_rm_nodes)
		(void)pc_remove_if(pm->store, keep_present, sm);
	pm->st.sweeps++;
	pm->st.last_ports = pm->ports_read;
	pm->st.last_mads = pm->mads;
	pm->st.last_seconds = ev_time() - pm->t0;
	pm->st.last_end = now;
	log_info("perfmgr: sweep %u done: %u ports, %" PRIu64 " MADs, %.3f s",
		 pm->sweep_no, pm->ports_read, pm->mads, pm->st.last_seconds);
	if (sm->cfg.event_db_dump_file) {
		rc = write_file_atomic(sm->cfg.event_db_dump_file,
				       perf_dump_write, sm);
		if (rc < 0)
			log_ratelimited(LOG_LVL_ERR, 5406, "perfmgr: cannot"
					" write %s: %s",
					sm->cfg.event_db_dump_file,
					strerror(-rc));
	}
	(void)sm_post(sm, SM_EV_PERF_DONE);
}

/* Send what the window allows; end the sweep when all is answered. */
static void pm_pump(struct perfmgr *pm)
{
	if (!pm->running || pm->aborted)
		return;
	if (pm->sm->sweep) {
		/* a heavy sweep runs: nothing new until it is over */
		if (!ev_is_active(&pm->resume))
			ev_timer_start(pm->sm->loop, &pm->resume);
		return;
	}
	unsigned w = pm_window(pm);

	while (pm->in_flight < w) {
		if (pm->next_cpi < pm->n_nodes) {
			if (!next_cpi(pm))
				continue;
		} else if (pm->cpi_pending) {
			break;		/* ports after their node's CPI */
		} else if (!next_port(pm)) {
			break;
		}
	}
	if (!pm->in_flight && pm->next_cpi >= pm->n_nodes &&
	    pm->next_target >= pm->n_targets)
		sweep_end(pm);
}

static int sweep_begin(struct perfmgr *pm)
{
	int rc;

	if (pm->running)
		return -EBUSY;
	if (!sweeps_allowed(pm->sm))
		return -EAGAIN;
	rc = plan(pm);
	if (rc < 0) {
		log_err_rc(rc, "ERR 5408: perfmgr: cannot plan a counter sweep");
		return rc;
	}
	pm->running = true;
	pm->started_once = true;
	pm->due = false;
	pm->sweep_no++;
	pm->next_cpi = pm->next_target = 0;
	pm->mads = 0;
	pm->ports_read = 0;
	pm->t0 = ev_time();
	pm->began = ev_now(pm->sm->loop);
	mad_engine_set_pma_window(pm->sm->engine, pm_window(pm));
	log_debug("perfmgr: sweep %u: %zu nodes, %zu ports", pm->sweep_no,
		  pm->n_nodes, pm->n_targets);
	pm_pump(pm);
	return 0;
}

int perf_sweep_now(struct sm *sm)
{
	if (!sm->perf)
		return -ENOTSUP;
	return sweep_begin(sm->perf);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct perfmgr *pm = w->data;

	(void)loop;
	(void)revents;
	/* A heavy sweep runs: the subnet's coming up starts it; not
	 * master: the next period tries again. */
	if (pm->sm->sweep)
		pm->due = true;
	else
		(void)sweep_begin(pm);
}

static void on_resume(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct perfmgr *pm = w->data;

	(void)revents;
	ev_timer_stop(loop, w);
	pm_pump(pm);
}

void perf_subnet_up(struct sm *sm)
{
	struct perfmgr *pm = sm->perf;

	if (!pm)
		return;
	if (pm->running)
		pm_pump(pm);
	else if (!pm->started_once || pm->due)
		(void)sweep_begin(pm);
}

int perf_start(struct sm *sm)
{
	struct perfmgr *pm;
	int rc;

	if (!sm->cfg.perfmgr || sm->perf)
		return 0;
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	rc = pc_store_new(&pm->store, PERF_MAX_PORTS);
	if (rc < 0) {
		free(pm);
		return rc;
	}
	pm->sm = sm;
	ev_timer_init(&pm->timer, on_timer, sm->cfg.perfmgr_sweep_time_s,
		      sm->cfg.perfmgr_sweep_time_s);
	pm->timer.data = pm;
	ev_timer_init(&pm->resume, on_resume, 0.2, 0.2);
	pm->resume.data = pm;
	if (sm->cfg.perfmgr_sweep_time_s)
		ev_timer_start(sm->loop, &pm->timer);
	mad_engine_set_pma_window(sm->engine, pm_window(pm));
	sm->perf = pm;
	log_info("perfmgr: on, a counter sweep every %u s, at most %u PMA"
		 " MADs in flight", sm->cfg.perfmgr_sweep_time_s, pm_window(pm));
	return 0;
}

void perf_abort(struct sm *sm)
{
	struct perfmgr *pm = sm->perf;

	if (!pm)
		return;
	if (!worker_abort_step(&pm->aborted)) {
		ev_timer_stop(sm->loop, &pm->timer);
		ev_timer_stop(sm->loop, &pm->resume);
		return;
	}
	pc_store_free(pm->store);
	free(pm->nodes);
	free(pm->targets);
	free(pm);
	sm->perf = NULL;
}
