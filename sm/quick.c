/*
 * quick.c - the quick sweep (see quick.h).
 *
 * Reads go by directed route in rounds: a round reads the switches that
 * trapped and that a path reaches without passing through a switch that
 * trapped and was not read yet (such a switch may be the end of the lost
 * link); a switch read in an earlier round is passed through by its ports
 * it found up.  Each round is three batches: SwitchInfo, the Set that
 * clears PortStateChange where it is set (before the ports are read, as
 * the discovery does, so a change after the read sets it again), PortInfo
 * of every port.  Any read that fails ends the quick sweep in a heavy
 * sweep.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/log.h"
#include "sm/program.h"
#include "sm/quick.h"
#include "sm/sm.h"
#include "sm/ha/sminfo.h"
#include "sm/worker.h"

/* ------------------------------------------------------- the model side */

/* Key of one port of one node, for the sorted list of lost ports. */
static uint64_t port_key(int32_t node, unsigned port)
{
	return (uint64_t)(uint32_t)node << 8 | port;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool is_lost(const uint64_t *lost, size_t n, int32_t node, unsigned port)
{
	uint64_t k = port_key(node, port);

	return n && bsearch(&k, lost, n, sizeof(*lost), cmp_u64) != NULL;
}

/*
 * Walk a directed route through `f` from the SM's node.  Returns the node
 * it ends at (its arrival port in *arrival, 0 for no hop) or FAB_NONE when
 * a hop has no link.
 */
static int32_t walk(const struct fabric *f, const uint8_t *path, unsigned hops,
		    uint8_t *arrival)
{
	int32_t cur = f->local_node;
	uint8_t in = 0;

	for (unsigned i = 1; i <= hops; i++) {
		const struct fab_node *n = fabric_node(f, cur);

		if (path[i] == 0 || path[i] > n->num_ports ||
		    n->ports[path[i]].peer_node == FAB_NONE)
			return FAB_NONE;
		/* only switches forward, and the SM's own node sends */
		if (i > 1 && n->type != NODE_TYPE_SWITCH)
			return FAB_NONE;
		in = n->ports[path[i]].peer_port;
		cur = n->ports[path[i]].peer_node;
	}
	*arrival = in;
	return cur;
}

struct bfs {
	int32_t *queue;
	uint8_t *hops;			/* per node: hops from the SM, 0xff unseen */
	uint8_t (*path)[SMP_MAX_HOPS + 1];
};

static void bfs_free(struct bfs *b)
{
	free(b->queue);
	free(b->hops);
	free(b->path);
}

/*
 * Shortest directed routes from the SM's node over `f`, leaving nodes
 * only where the discovery would (switches, and the SM's own node).
 */
static int bfs_run(const struct fabric *f, struct bfs *b)
{
	size_t n = f->n_nodes, head = 0, tail = 0;

	b->queue = malloc(n * sizeof(*b->queue));
	b->hops = malloc(n);
	b->path = calloc(n, sizeof(*b->path));
	if (!b->queue || !b->hops || !b->path) {
		bfs_free(b);
		return -ENOMEM;
	}
	memset(b->hops, 0xff, n);
	b->hops[f->local_node] = 0;
	b->queue[tail++] = f->local_node;
	while (head < tail) {
		int32_t u = b->queue[head++];
		const struct fab_node *un = fabric_node(f, u);

		if (u != f->local_node && un->type != NODE_TYPE_SWITCH)
			continue;
		if (b->hops[u] >= SMP_MAX_HOPS)
			continue;
		for (unsigned p = 1; p <= un->num_ports; p++) {
			int32_t v = un->ports[p].peer_node;

			if (v == FAB_NONE || b->hops[v] != 0xff)
				continue;
			b->hops[v] = (uint8_t)(b->hops[u] + 1);
			memcpy(b->path[v], b->path[u], b->hops[u] + 1u);
			b->path[v][b->hops[v]] = (uint8_t)p;
			b->queue[tail++] = v;
		}
	}
	return 0;
}

/* Mark a port down in the model: no link, the state a down port reads. */
static void port_gone(struct fab_node *n, unsigned pn)
{
	struct fab_port *p = &n->ports[pn];

	p->peer_node = FAB_NONE;
	free(p->pkeys);
	p->pkeys = NULL;
	p->pkey_blocks = p->pkey_read = 0;
	if (n->type == NODE_TYPE_SWITCH) {
		pi_set_port_state(&p->pi, PORT_STATE_DOWN);
		pi_set_phys_state(&p->pi, PHYS_STATE_POLLING);
		return;
	}
	/* A CA port the SM no longer reaches: a discovery would not have
	 * read it (nor given it a LID). */
	p->valid = false;
	p->lid = 0;
	p->lmc = 0;
	p->hops = 0;
	memset(p->path, 0, sizeof(p->path));
}

/*
 * Directed routes in the new model: a node keeps its route when it still
 * leads there, else takes a shortest one; so does each CA port.
 */
static int fix_paths(struct fabric *f)
{
	struct bfs b;
	int rc = bfs_run(f, &b);

	if (rc < 0)
		return rc;
	for (size_t i = 0; i < f->n_nodes; i++) {
		struct fab_node *n = &f->nodes[i];
		uint8_t in;

		if (n->type != NODE_TYPE_SWITCH) {
			/* each port by the link it hangs on */
			bool node_ok = false;

			for (unsigned pn = 1; pn <= n->num_ports; pn++) {
				struct fab_port *p = &n->ports[pn];
				int32_t s = p->peer_node;

				if (!p->valid || (!p->hops && !p->guid))
					continue;
				if ((int32_t)i == f->local_node) {
					/* the SM's own ports: no hop */
				} else if (walk(f, p->path, p->hops, &in) != (int32_t)i ||
					   in != pn) {
					if (s == FAB_NONE || b.hops[s] == 0xff ||
					    b.hops[s] >= SMP_MAX_HOPS) {
						rc = -EINVAL;
						goto out;
					}
					p->hops = (uint8_t)(b.hops[s] + 1);
					memcpy(p->path, b.path[s], b.hops[s] + 1u);
					p->path[p->hops] = p->peer_port;
				}
				if (p->hops == n->hops &&
				    !memcmp(p->path, n->path, n->hops + 1u))
					node_ok = true;
			}
			if (node_ok || (int32_t)i == f->local_node)
				continue;
			/* the node's route: that of its first port reached */
			for (unsigned pn = 1; pn <= n->num_ports; pn++) {
				struct fab_port *p = &n->ports[pn];

				if (p->valid && (p->hops || p->guid)) {
					n->hops = p->hops;
					memcpy(n->path, p->path, sizeof(n->path));
					break;
				}
			}
			continue;
		}
		if ((int32_t)i == f->local_node ||
		    walk(f, n->path, n->hops, &in) == (int32_t)i)
			continue;
		if (b.hops[i] == 0xff) {
			rc = -EINVAL;
			goto out;
		}
		n->hops = b.hops[i];
		memset(n->path, 0, sizeof(n->path));
		memcpy(n->path, b.path[i], b.hops[i] + 1u);
	}
out:
	bfs_free(&b);
	return rc;
}

#define OTHER(...) do {							\
		snprintf(res->what, sizeof(res->what), __VA_ARGS__);	\
		rc = QUICK_OTHER;					\
		goto out;						\
	} while (0)

int quick_apply(const struct fabric *old, const struct quick_read *r,
		unsigned n, struct fabric *out, struct quick_result *res)
{
	uint64_t *lost = NULL;
	size_t n_lost = 0, cap = 0;
	bool *keep = NULL;
	struct bfs b = { 0 };
	int rc;

	memset(res, 0, sizeof(*res));
	fabric_init(out);
	for (unsigned i = 0; i < n; i++)
		cap += 2u * fabric_node(old, r[i].node)->num_ports;
	lost = malloc((cap ? cap : 1) * sizeof(*lost));
	if (!lost)
		return -ENOMEM;

	/* What changed on the switches read. */
	for (unsigned i = 0; i < n; i++) {
		const struct fab_node *sn = fabric_node(old, r[i].node);

		if (be16toh(r[i].pi[0].lid) != sn->ports[0].lid)
			OTHER("switch 0x%016" PRIx64 ": LID %u, not %u",
			      sn->guid, be16toh(r[i].pi[0].lid), sn->ports[0].lid);
		for (unsigned pn = 1; pn <= sn->num_ports; pn++) {
			const struct fab_port *o = &sn->ports[pn];
			unsigned now = pi_port_state(&r[i].pi[pn]);
			unsigned was = o->valid ? pi_port_state(&o->pi)
						: PORT_STATE_DOWN;

			if (o->peer_node != FAB_NONE && now == PORT_STATE_DOWN) {
				/* both ends (a link read from both sides is
				 * listed twice until the sort below) */
				lost[n_lost++] = port_key(r[i].node, pn);
				lost[n_lost++] = port_key(o->peer_node,
							  o->peer_port);
				continue;
			}
			if (now != was)
				OTHER("switch 0x%016" PRIx64 " port %u: state %u,"
				      " was %u", sn->guid, pn, now, was);
		}
	}
	if (!n_lost) {
		snprintf(res->what, sizeof(res->what), "no link changed");
		rc = QUICK_NOTHING;
		goto out;
	}
	qsort(lost, n_lost, sizeof(*lost), cmp_u64);
	/* a link both of whose ends were read is listed twice: once */
	size_t w = 0;
	for (size_t i = 0; i < n_lost; i++)
		if (!w || lost[w - 1] != lost[i])
			lost[w++] = lost[i];
	n_lost = w;
	res->links_lost = (unsigned)(n_lost / 2);

	/* What the SM still reaches without them. */
	keep = calloc(old->n_nodes ? old->n_nodes : 1, sizeof(*keep));
	b.queue = malloc((old->n_nodes ? old->n_nodes : 1) * sizeof(*b.queue));
	if (!keep || !b.queue) {
		rc = -ENOMEM;
		goto out;
	}
	size_t head = 0, tail = 0;
	keep[old->local_node] = true;
	b.queue[tail++] = old->local_node;
	while (head < tail) {
		int32_t u = b.queue[head++];
		const struct fab_node *un = fabric_node(old, u);

		if (u != old->local_node && un->type != NODE_TYPE_SWITCH)
			continue;
		for (unsigned pn = 1; pn <= un->num_ports; pn++) {
			int32_t v = un->ports[pn].peer_node;

			if (v == FAB_NONE || keep[v] || is_lost(lost, n_lost, u, pn))
				continue;
			keep[v] = true;
			b.queue[tail++] = v;
		}
	}
	res->nodes_gone = (unsigned)(old->n_nodes - tail);

	rc = fabric_copy_subset(out, old, keep);
	if (rc < 0)
		goto out;
	/* The lost links, undone; the switches read, as read. */
	for (size_t i = 0; i < n_lost; i++) {
		int32_t on = (int32_t)(lost[i] >> 8);
		unsigned pn = (unsigned)(lost[i] & 0xff);
		int32_t id = fabric_find(out, fabric_node(old, on)->guid);

		if (id == FAB_NONE)
			continue;
		port_gone(fabric_node(out, id), pn);
	}
	for (unsigned i = 0; i < n; i++) {
		const struct fab_node *sn = fabric_node(old, r[i].node);
		int32_t id = fabric_find(out, sn->guid);

		if (id == FAB_NONE)
			continue;
		struct fab_node *dn = fabric_node(out, id);
		dn->si = r[i].si;
		for (unsigned pn = 0; pn <= dn->num_ports; pn++) {
			dn->ports[pn].pi = r[i].pi[pn];
			dn->ports[pn].valid = true;
		}
	}
	for (size_t i = 0; i < out->n_nodes; i++) {
		out->nodes[i].smp_lid = 0;
		out->nodes[i].smp_lid_failed = false;
	}
	if (fix_paths(out) < 0) {
		fabric_free(out);
		OTHER("no directed route to every node is left");
	}
	{
		int32_t a = (int32_t)(lost[0] >> 8);
		const struct fab_node *an = fabric_node(old, a);
		const struct fab_port *ap = &an->ports[lost[0] & 0xff];

		const struct fab_node *bn = fabric_node(old, ap->peer_node);

		/* by node description (what an administrator named it),
		 * the GUID beside it */
		snprintf(res->what, sizeof(res->what), "\"%s\" 0x%016" PRIx64
			 " port %u - \"%s\" 0x%016" PRIx64 " port %u",
			 fab_node_label(an), an->guid,
			 (unsigned)(lost[0] & 0xff), fab_node_label(bn),
			 bn->guid, ap->peer_port);
		res->node_guid = an->guid;
		res->port = (unsigned)(lost[0] & 0xff);
		res->peer_guid = bn->guid;
		res->peer_port = ap->peer_port;
	}
	rc = QUICK_LOSSES;
out:
	if (rc != QUICK_LOSSES && rc >= 0)
		fabric_free(out);
	if (rc < 0)
		fabric_free(out);
	free(b.queue);
	free(keep);
	free(lost);
	return rc;
}

/* ------------------------------------------------------- the SMP side */

enum quick_stage { QS_SWITCH_INFO, QS_PSC_CLEAR, QS_PORT_INFO };

struct quick_sweep {
	struct sm *sm;
	struct smp_batch batch;
	bool aborted;
	bool failed;			/* a read got no valid answer */
	enum quick_stage stage;
	unsigned n;			/* switches to read */
	struct quick_read *r;
	struct qsw {
		bool    read;		/* done in an earlier round */
		bool    now;		/* in this round */
		bool    psc;		/* PortStateChange was set */
		uint8_t hops;
		uint8_t path[SMP_MAX_HOPS + 1];
	} *w;
	size_t cursor;			/* producer: switch, then port */
	unsigned port_cursor;
	unsigned smps;
	ev_tstamp t0;
};

static void quick_free(struct quick_sweep *q)
{
	for (unsigned i = 0; q->r && i < q->n; i++)
		free(q->r[i].pi);
	free(q->r);
	free(q->w);
	free(q);
}

void quick_note_trap(struct sm *sm, uint64_t guid)
{
	if (!guid || sm->n_quick_sw >= SM_QUICK_MAX) {
		sm->quick_full = true;
		return;
	}
	for (unsigned i = 0; i < sm->n_quick_sw; i++)
		if (sm->quick_sw[i] == guid)
			return;
	sm->quick_sw[sm->n_quick_sw++] = guid;
}

bool quick_eligible(const struct sm *sm)
{
	return !sm->cfg.no_incremental_reroute && !sm->cfg.once &&
	       sm->state == SM_MASTER && sm->subnet_up && !sm->incomplete &&
	       !sm->failed_sweeps && !sm->n_excluded && !sm->ha.change_pending &&
	       !sm->quick_full && sm->n_quick_sw && sm->fabric.n_nodes &&
	       sm->fabric.local_node != FAB_NONE && sm->routes.lft &&
	       !sm->sweep && !sm->light && !sm->quick;
}

/* Which of q's switches is model node `id`, or -1. */
static int switch_index(const struct quick_sweep *q, int32_t id)
{
	for (unsigned i = 0; i < q->n; i++)
		if (q->r[i].node == id)
			return (int)i;
	return -1;
}

/*
 * The next round: directed routes to the switches not read yet that can
 * be reached passing only through switches that did not trap, or that
 * were read (by their ports found up).  Returns how many.
 */
static int plan_round(struct quick_sweep *q)
{
	const struct fabric *f = &q->sm->fabric;
	size_t nn = f->n_nodes, head = 0, tail = 0;
	int32_t *queue = malloc(nn * sizeof(*queue));
	uint8_t *hops = malloc(nn);
	uint8_t (*path)[SMP_MAX_HOPS + 1] = malloc(nn * sizeof(*path));
	int found = 0;

	if (!queue || !hops || !path) {
		found = -ENOMEM;
		goto out;
	}
	memset(hops, 0xff, nn);
	hops[f->local_node] = 0;
	memset(path[f->local_node], 0, sizeof(path[0]));
	queue[tail++] = f->local_node;
	for (unsigned i = 0; i < q->n; i++)
		q->w[i].now = false;
	while (head < tail) {
		int32_t u = queue[head++];
		const struct fab_node *un = fabric_node(f, u);
		int k = switch_index(q, u);

		if (k >= 0 && !q->w[k].read) {
			if (!q->w[k].now) {
				q->w[k].now = true;
				q->w[k].hops = hops[u];
				memcpy(q->w[k].path, path[u], sizeof(path[u]));
				found++;
			}
			if (u != f->local_node)
				continue;	/* not through it yet */
		}
		if ((u != f->local_node && un->type != NODE_TYPE_SWITCH) ||
		    hops[u] >= SMP_MAX_HOPS)
			continue;
		for (unsigned p = 1; p <= un->num_ports; p++) {
			int32_t v = un->ports[p].peer_node;

			if (v == FAB_NONE || hops[v] != 0xff)
				continue;
			/* a read switch: only by its ports that are up, on
			 * either end of the link */
			if (k >= 0 && q->w[k].read &&
			    pi_port_state(&q->r[k].pi[p]) < PORT_STATE_INIT)
				continue;
			int kv = switch_index(q, v);
			if (kv >= 0 && q->w[kv].read &&
			    pi_port_state(&q->r[kv].pi[un->ports[p].peer_port]) <
			    PORT_STATE_INIT)
				continue;
			hops[v] = (uint8_t)(hops[u] + 1);
			memcpy(path[v], path[u], sizeof(path[u]));
			path[v][hops[v]] = (uint8_t)p;
			queue[tail++] = v;
		}
	}
out:
	free(path);
	free(hops);
	free(queue);
	return found;
}

static void stage_run(struct quick_sweep *q, enum quick_stage st);
static void quick_end(struct quick_sweep *q);

static void on_read(struct smp_batch *b, int32_t node, uint8_t port,
		    const uint8_t *data, void *arg)
{
	struct quick_sweep *q = arg;
	struct quick_read *r = &q->r[node];

	(void)b;
	if (q->aborted)
		return;
	if (!data) {
		q->failed = true;
		return;
	}
	switch (q->stage) {
	case QS_SWITCH_INFO:
		memcpy(&r->si, data, sizeof(r->si));
		q->w[node].psc = smp_switch_info_psc(&r->si);
		break;
	case QS_PSC_CLEAR:
		memcpy(&r->si, data, sizeof(r->si));
		break;
	case QS_PORT_INFO:
		memcpy(&r->pi[port], data, sizeof(r->pi[port]));
		break;
	}
}

static bool more_reads(struct smp_batch *b, void *arg)
{
	struct quick_sweep *q = arg;
	const struct fabric *f = &q->sm->fabric;

	while (q->cursor < q->n) {
		struct qsw *w = &q->w[q->cursor];
		struct quick_read *r = &q->r[q->cursor];
		unsigned ports = fabric_node(f, r->node)->num_ports;
		int rc;

		if (!w->now || (q->stage == QS_PSC_CLEAR && !w->psc)) {
			q->cursor++;
			continue;
		}
		if (q->stage == QS_PORT_INFO) {
			rc = batch_smp(b, MAD_METHOD_GET, w->path, w->hops,
				       SMP_ATTR_PORT_INFO, q->port_cursor, NULL,
				       0, (int32_t)q->cursor,
				       (uint8_t)q->port_cursor, on_read, q);
			if (++q->port_cursor > ports) {
				q->port_cursor = 0;
				q->cursor++;
			}
		} else {
			struct smp_switch_info si = r->si;

			/* as read, PortStateChange written 1 to clear it */
			si.life_psc_osl |= 1u << 2;
			rc = batch_smp(b, q->stage == QS_PSC_CLEAR ?
				       MAD_METHOD_SET : MAD_METHOD_GET, w->path,
				       w->hops, SMP_ATTR_SWITCH_INFO, 0,
				       q->stage == QS_PSC_CLEAR ? &si : NULL,
				       sizeof(si), (int32_t)q->cursor, 0,
				       on_read, q);
			q->cursor++;
		}
		if (rc < 0) {
			q->failed = true;
			b->failed++;
			return false;
		}
		q->smps++;
		return true;
	}
	return false;
}

static void stage_done(struct smp_batch *b, void *arg)
{
	struct quick_sweep *q = arg;

	(void)b;
	if (q->aborted)
		return;
	if (q->failed || b->failed) {
		q->failed = true;
		quick_end(q);
		return;
	}
	if (q->stage != QS_PORT_INFO) {
		stage_run(q, q->stage + 1);
		return;
	}
	for (unsigned i = 0; i < q->n; i++)
		if (q->w[i].now)
			q->w[i].read = true;
	int more = plan_round(q);
	if (more > 0) {
		stage_run(q, QS_SWITCH_INFO);
		return;
	}
	for (unsigned i = 0; i < q->n; i++)
		if (!q->w[i].read)
			q->failed = true;	/* no way there left */
	quick_end(q);
}

static void stage_run(struct quick_sweep *q, enum quick_stage st)
{
	q->stage = st;
	q->cursor = 0;
	q->port_cursor = 0;
	batch_init(&q->batch, q->sm->engine, stage_done, q);
	batch_run(&q->batch, more_reads);
}

/* The reads are in (or failed): decide, and hand over to the sweeps. */
static void quick_end(struct quick_sweep *q)
{
	struct sm *sm = q->sm;
	struct quick_result res;
	struct fabric nf;
	int v = QUICK_OTHER;

	sm->quick = NULL;
	memset(&res, 0, sizeof(res));
	fabric_init(&nf);
	if (q->failed)
		snprintf(res.what, sizeof(res.what), "a switch did not answer");
	else
		v = quick_apply(&sm->fabric, q->r, q->n, &nf, &res);
	double dt = ev_time() - q->t0;
	sm_hist_observe(&sm->stats.sweep_hist[SM_SWEEP_QUICK], dt);
	if (v == -ENOMEM)
		snprintf(res.what, sizeof(res.what), "out of memory");
	/* Meanwhile the SM may have stood down, or a heavy sweep was asked
	 * for (SIGHUP, the light sweep): that one covers this. */
	if (sm->state != SM_MASTER) {
		fabric_free(&nf);
		quick_free(q);
		return;
	}
	if (v == QUICK_LOSSES && !sm->ha.change_pending) {
		struct log_fields lf = { 0 };

		log_field(&lf, "NODE_GUID=0x%016" PRIx64, res.node_guid);
		log_field(&lf, "PORT=%u", res.port);
		log_field(&lf, "PEER_GUID=0x%016" PRIx64, res.peer_guid);
		log_field(&lf, "PEER_PORT=%u", res.peer_port);
		log_field(&lf, "LINKS_LOST=%u", res.links_lost);
		log_event(LOG_LVL_WARN, 315, &lf, "quick sweep: %u switch(es)"
			  " read, %u SMPs, %.3f s: %u link(s) lost (%s), %u"
			  " node(s) no longer reached: the heavy sweep starts"
			  " from the model", q->n, q->smps, dt, res.links_lost,
			  res.what, res.nodes_gone);
		struct sm_msg m = { .ev = SM_EV_QUICK_LOSSES };

		m.u.model.f = &nf;	/* taken by the heavy sweep, now */
		m.u.model.smps = q->smps;
		m.u.model.t0 = q->t0;
		(void)sm_post_wait(sm, &m);
		fabric_free(&nf);
	} else if (v == QUICK_NOTHING && !sm->ha.change_pending) {
		log_info("quick sweep: %u switch(es) read, %u SMPs, %.3f s: %s",
			 q->n, q->smps, dt, res.what);
		(void)sm_post(sm, SM_EV_QUICK_DONE);
	} else {
		fabric_free(&nf);
		if (!sm->ha.change_pending)
			log_info("quick sweep: %u switch(es) read, %.3f s: %s:"
				 " heavy sweep", q->n, dt, res.what);
		(void)sm_post(sm, SM_EV_QUICK_CHANGE);
	}
	quick_free(q);
}

int quick_sweep_start(struct sm *sm)
{
	struct quick_sweep *q;
	unsigned n = sm->n_quick_sw;

	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->sm = sm;
	q->t0 = ev_time();
	q->r = calloc(n, sizeof(*q->r));
	q->w = calloc(n, sizeof(*q->w));
	if (!q->r || !q->w) {
		quick_free(q);
		return -ENOMEM;
	}
	q->n = n;
	for (unsigned i = 0; i < n; i++) {
		int32_t id = fabric_find(&sm->fabric, sm->quick_sw[i]);
		const struct fab_node *sn;

		if (id == FAB_NONE ||
		    (sn = fabric_node(&sm->fabric, id))->type != NODE_TYPE_SWITCH) {
			quick_free(q);
			return -ENOENT;
		}
		q->r[i].node = id;
		q->r[i].pi = calloc((size_t)sn->num_ports + 1, sizeof(*q->r[i].pi));
		if (!q->r[i].pi) {
			quick_free(q);
			return -ENOMEM;
		}
	}
	int rc = plan_round(q);
	if (rc <= 0) {
		quick_free(q);
		return rc < 0 ? rc : -EHOSTUNREACH;
	}
	/* the notes are this sweep's now */
	sm->n_quick_sw = 0;
	sm->quick = q;
	sm->stats.quick_sweeps++;
	stage_run(q, QS_SWITCH_INFO);
	return 0;
}

void quick_sweep_abort(struct sm *sm)
{
	struct quick_sweep *q = sm->quick;

	if (!q || !worker_abort_step(&q->aborted))
		return;
	sm->quick = NULL;
	quick_free(q);
}
