/*
 * discover.c - breadth-first directed-route discovery (see discover.h).
 *
 * Every query carries the DR path it was sent on.  The sweep starts with
 * NodeInfo on the empty path (the SM's own node).  Then:
 *
 *   NodeInfo answered   new GUID: add the node and ask NodeDescription,
 *                       SwitchInfo and PortInfo of every port (switch) or
 *                       of the arrival port (CA, router).  Known GUID: a
 *                       loop, or another port of a multi-port CA, and the
 *                       link we came over is recorded; or a twin (another
 *                       node with that GUID, see twin_reason()), which is
 *                       left out.
 *   PortInfo answered   a switch port (or the SM's own CA port) that is
 *                       up and not yet linked is explored with NodeInfo
 *                       one hop further.  The port's P_Key table is read
 *                       block by block when the SM manages it (CA and
 *                       router ports, switch port 0, switch ports that are
 *                       up: the ports OpenSM 3.3.23 reads, see
 *                       fabric_pkey_blocks()); or, with
 *                       discover_set_defer_pkeys(), later, when the caller
 *                       asks (discover_read_pkeys()).
 *
 * SLtoVLMappingTable and VLArbitrationTable are not read: OpenSM 3.3.23
 * with QoS off neither reads nor sets them (checked on ibsim: no SMP of
 * either attribute in a whole bring-up), and its SA answers them from
 * zero-filled tables.  Reading them would cost (N+1)^2 SMPs per N-port
 * switch for SL2VL alone; see sm/sa/tables.c.
 *
 * The engine keeps the window full, so whole levels of the tree are in
 * flight at once.  The sweep ends when no query is outstanding.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sm/discover.h"
#include "sm/log.h"

enum query_kind {
	Q_NODE_INFO, Q_NODE_DESC, Q_SWITCH_INFO, Q_PORT_INFO,
	Q_PSC_CLEAR,		/* SwitchInfo Set that clears PortStateChange */
	Q_PKEY,			/* one block of a port's P_KeyTable */
};

struct discovery {
	struct mad_engine *engine;
	struct fabric *fabric;
	discover_done_cb cb;
	void *cb_arg;
	unsigned outstanding;
	struct discover_result result;
	struct timespec start;
	bool finished;
	bool clear_psc;
	const struct fabric *prev;	/* last sweep's model, or NULL */
	bool lid_routes;		/* LID-routed SMPs allowed (from prev) */
	unsigned max_nodes;		/* DISCOVER_MAX_NODES, or a test's */
	bool full;			/* max_nodes reached (ERR 0108 told) */
	bool defer_pkeys;		/* P_Key tables: discover_read_pkeys() */
	/* discover_read_pkeys(): the next port to read, as node id and port
	 * number; pk_node == n_nodes when all are asked */
	bool pk_phase;
	size_t pk_node;
	unsigned pk_port;
	unsigned pk_queued;		/* PKEY_QUEUED, or a test's */
};

/*
 * At most this many deferred P_Key reads are queued at once: the engine
 * keeps its window full from them, and 140,000 of them queued at once
 * (11,664 hosts) would hold 50 MB of requests.
 */
#define PKEY_QUEUED	2048

struct query {
	struct discovery *d;
	enum query_kind kind;
	int32_t from_node;	/* NodeInfo: the node and port we left by */
	uint8_t from_port;
	int32_t node;		/* other kinds: the node asked */
	uint8_t port;		/* PortInfo, P_KeyTable: which port */
	uint16_t block;		/* P_KeyTable: which block */
	uint8_t hops;
	uint8_t rounds;		/* times the engine gave up on it so far */
	bool by_lid;		/* last submitted LID-routed */
	uint8_t path[SMP_MAX_HOPS + 1];
};

/*
 * A query the engine gave up on (all its retries lost) is submitted
 * again this many times before the sweep counts it as failed: on a lossy
 * fabric a hole in the model costs a whole new sweep, one more round of
 * retries for one query costs nothing.
 */
#define QUERY_ROUNDS	3

static const uint16_t query_attr[] = {
	[Q_NODE_INFO] = SMP_ATTR_NODE_INFO,
	[Q_NODE_DESC] = SMP_ATTR_NODE_DESC,
	[Q_SWITCH_INFO] = SMP_ATTR_SWITCH_INFO,
	[Q_PORT_INFO] = SMP_ATTR_PORT_INFO,
	[Q_PSC_CLEAR] = SMP_ATTR_SWITCH_INFO,
	[Q_PKEY] = SMP_ATTR_PKEY_TABLE,
};

/* AttributeModifier of a query: PortInfo takes the port number; P_KeyTable
 * the block (15:0) and, on a switch, the port (31:16) (14.2.5.7). */
static uint32_t query_mod(const struct discovery *d, const struct query *q)
{
	switch (q->kind) {
	case Q_PORT_INFO:
		return q->port;
	case Q_PKEY:
		if (fabric_node(d->fabric, q->node)->type == NODE_TYPE_SWITCH)
			return (uint32_t)q->port << 16 | q->block;
		return q->block;
	default:
		return 0;
	}
}

static void on_answer(void *arg, int status, const void *mad, size_t len);
static void pkeys_fill(struct discovery *d);

static bool same_path(const uint8_t *a, unsigned ha, const uint8_t *b,
		      unsigned hb);

/*
 * How a query goes.  NodeInfo always by directed route: it is what finds
 * out what lies at the end of a path, links included.  The other queries
 * of a node the last completed sweep reached LID-routed (fab_node.smp_lid)
 * go LID-routed to that LID when the node is at the same directed route
 * as then (its NodeInfo, answered by DR in this sweep, named its GUID
 * there; for a CA, only queries on that route, not its other ports') and
 * no LID-routed SMP to it was lost since.  Anything else: directed route,
 * counted against the node's LID when known.  Returns that LID or 0.
 */
static uint16_t query_lid(const struct discovery *d, const struct query *q,
			  bool *by_lid)
{
	const struct fab_node *n, *o;
	int32_t id;

	*by_lid = false;
	if (!d->prev || q->kind == Q_NODE_INFO || q->node == FAB_NONE)
		return 0;
	n = fabric_node(d->fabric, q->node);
	id = fabric_find(d->prev, n->guid);
	if (id == FAB_NONE)
		return 0;
	o = fabric_node(d->prev, id);
	if (!o->smp_lid)
		return 0;
	*by_lid = d->lid_routes && !n->smp_lid_failed && !o->smp_lid_failed &&
		  q->hops && same_path(q->path, q->hops, o->path, o->hops) &&
		  same_path(n->path, n->hops, o->path, o->hops);
	return o->smp_lid;
}

/* Hand a query to the engine.  Returns 0 or -errno (q is not freed). */
static int submit_query(struct discovery *d, struct query *q)
{
	struct smp_dr smp;
	int rc;

	mad_build_smp_dr(&smp, q->kind == Q_PSC_CLEAR ? MAD_METHOD_SET
						       : MAD_METHOD_GET,
			 query_attr[q->kind], query_mod(d, q), q->path, q->hops);
	if (q->kind == Q_PSC_CLEAR) {
		/* Everything as read, PortStateChange written 1 to clear it. */
		struct smp_switch_info si = fabric_node(d->fabric, q->node)->si;
		si.life_psc_osl |= 1u << 2;
		memcpy(smp.data, &si, sizeof(si));
	}
	uint16_t lid = query_lid(d, q, &q->by_lid);
	rc = mad_engine_submit_smp(d->engine, &smp, lid, q->by_lid, on_answer, q);
	if (rc == 0) {
		d->outstanding++;
		d->result.lid_smps += q->by_lid;
	}
	return rc;
}

static void path_str(const uint8_t *path, unsigned hops, char *buf, size_t sz)
{
	size_t off = (size_t)snprintf(buf, sz, "0");
	for (unsigned i = 1; i <= hops && off < sz; i++)
		off += (size_t)snprintf(buf + off, sz - off, ",%u", path[i]);
}

static void maybe_finish(struct discovery *d)
{
	struct timespec now;

	if (d->outstanding || d->finished)
		return;
	d->finished = true;
	clock_gettime(CLOCK_MONOTONIC, &now);
	d->result.seconds = (double)(now.tv_sec - d->start.tv_sec) +
			    (double)(now.tv_nsec - d->start.tv_nsec) / 1e9;
	d->cb(d->cb_arg, &d->result);
}

static void send_query(struct discovery *d, enum query_kind kind,
		       const uint8_t *path, unsigned hops, int32_t node,
		       uint8_t port, int32_t from_node, uint8_t from_port)
{
	struct query *q = malloc(sizeof(*q));

	if (!q) {
		d->result.failed++;
		return;
	}
	q->d = d;
	q->kind = kind;
	q->node = node;
	q->port = port;
	q->block = 0;
	q->from_node = from_node;
	q->from_port = from_port;
	q->hops = (uint8_t)hops;
	q->rounds = 0;
	memcpy(q->path, path, hops + 1);
	if (submit_query(d, q) < 0) {
		free(q);
		d->result.failed++;
		return;
	}
	d->result.smps++;
}

/*
 * How much of a P_Key table is read.  PartitionCap (NodeInfo) and
 * PartitionEnforcementCap (SwitchInfo) come from the node and may say
 * 65,535: OpenSM 3.3.23 then reads all 2,048 blocks of every such port,
 * so one node with 255 ports would cost half a million SMPs and 32 MB per
 * sweep.  Real devices have a few blocks per port (HCAs 128 P_Keys, switch
 * ports 32), and the SM never needs more entries than the partitions it
 * configures; so at most PKEY_READ_PORT_BLOCKS blocks are read per port
 * and PKEY_READ_NODE_BLOCKS per node (every managed port still gets block
 * 0, where the default P_Key lives).  The rest of the table is treated as
 * not there: nothing is read or written beyond what was read.
 */
#define PKEY_READ_PORT_BLOCKS	64	/* 2,048 P_Keys */
#define PKEY_READ_NODE_BLOCKS	512

/* Ask the blocks of the P_Key table of port `pn` (when managed), within
 * the bounds above. */
static void read_pkeys(struct discovery *d, int32_t id, uint8_t pn,
		       const uint8_t *path, unsigned hops)
{
	struct fab_node *n = fabric_node(d->fabric, id);
	unsigned blocks = fabric_pkey_blocks(n, pn), want = blocks, used = 0;

	if (!blocks)
		return;
	bool told = false;	/* an earlier port of the node was cut */
	for (unsigned i = 0; i <= n->num_ports; i++) {
		if (i == pn)
			continue;
		used += n->ports[i].pkey_blocks;
		if (n->ports[i].pkey_blocks &&
		    n->ports[i].pkey_blocks < fabric_pkey_blocks(n, i))
			told = true;
	}
	if (blocks > PKEY_READ_PORT_BLOCKS)
		blocks = PKEY_READ_PORT_BLOCKS;
	if (used + blocks > PKEY_READ_NODE_BLOCKS)
		blocks = used < PKEY_READ_NODE_BLOCKS ?
			 PKEY_READ_NODE_BLOCKS - used : 1;
	if (blocks < want && !told) {	/* one line per node and sweep */
		char ps[4 * (SMP_MAX_HOPS + 1)];

		path_str(path, hops, ps, sizeof(ps));
		log_ratelimited(LOG_LVL_ERR, 107, "node 0x%016" PRIx64
				" (path %s) port %u advertises %u P_Key blocks:"
				" reading %u (at most %u per port, %u per node)",
				n->guid, ps, pn, want, blocks,
				PKEY_READ_PORT_BLOCKS, PKEY_READ_NODE_BLOCKS);
	}
	if (fabric_pkey_alloc(n, pn, blocks) < 0) {
		d->result.failed++;
		return;
	}
	for (unsigned b = 0; b < blocks; b++) {
		struct query *q = malloc(sizeof(*q));

		if (!q) {
			d->result.failed++;
			continue;
		}
		*q = (struct query){ .d = d, .kind = Q_PKEY, .node = id,
				     .port = pn, .block = (uint16_t)b,
				     .from_node = FAB_NONE, .hops = (uint8_t)hops };
		memcpy(q->path, path, hops + 1);
		if (submit_query(d, q) < 0) {
			free(q);
			d->result.failed++;
			continue;
		}
		d->result.smps++;
	}
}

/*
 * A CA or router port, or a node's description, can be taken over by the
 * genuine node after a twin was seen first (prefer_previous()); answers
 * still on their way from the twin are then stale and ignored.
 */
static bool same_path(const uint8_t *a, unsigned ha, const uint8_t *b,
		      unsigned hb)
{
	return ha == hb && !memcmp(a, b, ha + 1);
}

static bool answer_stale(const struct discovery *d, const struct query *q)
{
	const struct fab_node *n;

	if (q->kind == Q_NODE_INFO)
		return false;
	n = fabric_node(d->fabric, q->node);
	if (n->type == NODE_TYPE_SWITCH)
		return false;
	if (q->kind == Q_NODE_DESC)
		return !same_path(q->path, q->hops, n->path, n->hops);
	if (q->port && (q->kind == Q_PORT_INFO || q->kind == Q_PKEY))
		return !same_path(q->path, q->hops, n->ports[q->port].path,
				  n->ports[q->port].hops);
	return false;
}

static void got_pkeys(struct discovery *d, const struct query *q,
		      const uint8_t *data)
{
	struct fab_port *p = &fabric_node(d->fabric, q->node)->ports[q->port];

	/* The table was sized when the reads were sent. */
	if (!p->pkeys || q->block >= p->pkey_blocks)
		return;
	memcpy(p->pkeys + (size_t)q->block * PKEY_BLOCK_SIZE, data,
	       PKEY_BLOCK_SIZE * sizeof(*p->pkeys));
	p->pkey_read++;
}

/* Ask NodeInfo one hop beyond `port` of node `id`. */
static void explore(struct discovery *d, int32_t id, uint8_t port,
		    const uint8_t *path, unsigned hops)
{
	uint8_t next[SMP_MAX_HOPS + 1];

	if (hops >= SMP_MAX_HOPS) {
		log_ratelimited(LOG_LVL_WARN, 101, "path %u hops deep at node"
				" 0x%016" PRIx64 " port %u: not exploring further",
				hops, fabric_node(d->fabric, id)->guid, port);
		return;
	}
	memcpy(next, path, hops + 1);
	next[hops + 1] = port;
	send_query(d, Q_NODE_INFO, next, hops + 1, FAB_NONE, 0, id, port);
}

/*
 * NodeInfo (14.2.5.3) as any node may answer it: a type we know, at
 * least one port, a GUID, and a LocalPortNum that is one of its ports.
 * Port 0 is a switch's management port: only the SM's own node (no hop)
 * can be entered there; a node reached over a link is entered at a
 * physical port.
 */
static bool node_info_sane(const struct smp_node_info *ni, unsigned hops)
{
	if (ni->node_type < NODE_TYPE_CA || ni->node_type > NODE_TYPE_ROUTER)
		return false;
	if (ni->num_ports == 0 || !ni->node_guid)
		return false;
	if (ni->local_port > ni->num_ports)
		return false;
	if (ni->local_port == 0 &&
	    (ni->node_type != NODE_TYPE_SWITCH || hops > 0))
		return false;
	return true;
}

/* The DR path by which port `pn` of node `n` was first reached. */
static void first_path(const struct fab_node *n, unsigned pn, char *buf,
		       size_t sz)
{
	const struct fab_port *p = &n->ports[pn];

	if (n->type != NODE_TYPE_SWITCH && pn && (p->hops || p->guid))
		path_str(p->path, p->hops, buf, sz);
	else
		path_str(n->path, n->hops, buf, sz);
}

/*
 * A NodeInfo answer names a GUID the sweep already holds.  That is
 * legitimate in two cases only: a loop between switches (the same switch
 * reached again, over a link we had not followed yet) and a multi-port
 * CA or router reached on another of its ports.  One port cannot have
 * two peers, so the answer is from another node with the same GUID (a
 * twin) when:
 *
 *   - type or port count differ from the node first seen;
 *   - the port it arrived at is already linked to someone other than the
 *     port we left by, or the port we left by is already linked to
 *     someone else (the same link seen from both sides is fine);
 *   - for a CA or router: that port was already reached by another
 *     route (the same port twice means two ports), or its port GUID
 *     differs;
 *   - for a switch: that port is down on the node first seen.
 *
 * Returns NULL or why (in buf).
 */
static const char *twin_reason(const struct discovery *d, const struct query *q,
			       int32_t id, const struct smp_node_info *ni,
			       char *buf, size_t sz)
{
	const struct fabric *f = d->fabric;
	const struct fab_node *n = fabric_node(f, id);
	uint8_t lp = ni->local_port;
	const struct fab_port *p;

	if (n->type != ni->node_type || n->num_ports != ni->num_ports) {
		snprintf(buf, sz, "a %s with %u ports, first seen as a %s with"
			 " %u ports", fabric_node_type_str(ni->node_type),
			 ni->num_ports, fabric_node_type_str(n->type),
			 n->num_ports);
		return buf;
	}
	p = &n->ports[lp];
	if (p->peer_node != FAB_NONE &&
	    (p->peer_node != q->from_node || p->peer_port != q->from_port)) {
		snprintf(buf, sz, "its port %u is already linked to 0x%016"
			 PRIx64 " port %u", lp,
			 fabric_node(f, p->peer_node)->guid, p->peer_port);
		return buf;
	}
	if (q->from_node != FAB_NONE) {
		const struct fab_port *fp =
			&fabric_node(f, q->from_node)->ports[q->from_port];

		if (fp->peer_node != FAB_NONE &&
		    (fp->peer_node != id || fp->peer_port != lp)) {
			snprintf(buf, sz, "the port it was reached by is"
				 " already linked to 0x%016" PRIx64 " port %u",
				 fabric_node(f, fp->peer_node)->guid,
				 fp->peer_port);
			return buf;
		}
	}
	if (n->type != NODE_TYPE_SWITCH) {
		if (p->guid && p->guid != be64toh(ni->port_guid)) {
			snprintf(buf, sz, "port %u has GUID 0x%016" PRIx64
				 ", first seen as 0x%016" PRIx64, lp,
				 be64toh(ni->port_guid), p->guid);
			return buf;
		}
		if ((p->hops || p->guid) && p->peer_node == FAB_NONE) {
			snprintf(buf, sz, "its port %u was already reached", lp);
			return buf;
		}
	} else if (p->valid && pi_port_state(&p->pi) < PORT_STATE_INIT) {
		snprintf(buf, sz, "it was entered at port %u, which is down on"
			 " the switch first seen", lp);
		return buf;
	}
	return NULL;
}

/* Is `path` the route by which the last sweep reached port `pn` of the
 * CA or router `guid`? */
static bool previous_path(const struct discovery *d, uint64_t guid,
			  unsigned pn, const uint8_t *path, unsigned hops)
{
	int32_t id;
	const struct fab_node *n;
	const struct fab_port *p;

	if (!d->prev || (id = fabric_find(d->prev, guid)) == FAB_NONE)
		return false;
	n = fabric_node(d->prev, id);
	if (n->type == NODE_TYPE_SWITCH || pn == 0 || pn > n->num_ports)
		return false;
	p = &n->ports[pn];
	return (p->hops || p->guid) && same_path(p->path, p->hops, path, hops);
}

/*
 * Two CA (or router) ports with one GUID and port number: which is the
 * genuine one?  The first seen, unless the last sweep's model had the
 * port at the route of the second and not at that of the first: a twin
 * closer to the SM than the node it copies must not take its LID and
 * routes.  Then the first is evicted (its link undone) and the port is
 * re-read by the second's route.  Returns true when the second one wins;
 * `why` (the twin_reason()) is logged either way.
 */
/* A twin left out: counted, and its GUID kept for the health checks. */
static void note_twin(struct discovery *d, uint64_t guid)
{
	struct discover_result *r = &d->result;

	r->dup_guids++;
	for (unsigned i = 0; i < r->n_dup_guid; i++)
		if (r->dup_guid[i] == guid)
			return;
	if (r->n_dup_guid < DISCOVER_DUP_GUIDS)
		r->dup_guid[r->n_dup_guid++] = guid;
}

/*
 * The journal's fields of an ERR 0103 (sm/log.h): the GUID, the path
 * that reached the twin and the path of the node first seen, the port
 * entered (0: not known) and the node and port the twin hangs off.
 */
static void dup_guid_fields(struct log_fields *lf, const struct discovery *d,
			    const struct query *q, uint64_t guid,
			    const char *path, const char *first, unsigned port)
{
	log_field(lf, "NODE_GUID=0x%016" PRIx64, guid);
	log_field(lf, "PATH=%s", path);
	log_field(lf, "FIRST_PATH=%s", first);
	if (port)
		log_field(lf, "PORT=%u", port);
	if (q->from_node != FAB_NONE) {
		log_field(lf, "PEER_GUID=0x%016" PRIx64,
			  fabric_node(d->fabric, q->from_node)->guid);
		log_field(lf, "PEER_PORT=%u", q->from_port);
	}
}

/*
 * The node and port a NodeInfo was asked through answered as the node
 * reached: a port linked to itself, which only two nodes with one GUID
 * cabled back to back can show.  OpenSM checks this while it has seen
 * no switch (through a switch the twins are told apart otherwise) and
 * never for port 0; the sweep decides what to do (exit_on_fatal).
 */
static void note_self_link(struct discovery *d, const struct query *q,
			   int32_t id, uint8_t lp)
{
	const struct fabric *f = d->fabric;

	if (lp == 0 || q->from_node != id || q->from_port != lp ||
	    d->result.self_link_port)
		return;
	for (size_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].type == NODE_TYPE_SWITCH)
			return;
	d->result.self_link_guid = fabric_node(f, id)->guid;
	d->result.self_link_port = lp;
}

static bool prefer_previous(struct discovery *d, const struct query *q,
			    int32_t id, const struct smp_node_info *ni,
			    const char *why)
{
	struct fabric *f = d->fabric;
	struct fab_node *n = fabric_node(f, id);
	uint8_t lp = ni->local_port;
	struct fab_port *p;
	char ps[4 * (SMP_MAX_HOPS + 1)], old[4 * (SMP_MAX_HOPS + 1)];
	struct log_fields lf = { 0 };

	if (n->type == NODE_TYPE_SWITCH || n->type != ni->node_type ||
	    n->num_ports != ni->num_ports || q->from_node == FAB_NONE)
		return false;
	p = &n->ports[lp];
	/* The SM's own port is never the twin. */
	if (id == f->local_node && lp == f->local_port)
		return false;
	if (fabric_node(f, q->from_node)->ports[q->from_port].peer_node != FAB_NONE)
		return false;
	if (!previous_path(d, n->guid, lp, q->path, q->hops) ||
	    previous_path(d, n->guid, lp, p->path, p->hops))
		return false;

	path_str(q->path, q->hops, ps, sizeof(ps));
	path_str(p->path, p->hops, old, sizeof(old));
	dup_guid_fields(&lf, d, q, n->guid, ps, old, 0);
	log_event(LOG_LVL_ERR, 103, &lf, "duplicate node GUID 0x%016" PRIx64
		  ": path %s reaches a node first seen at path %s (%s), but the"
		  " last sweep had it at path %s: the node at path %s is left"
		  " out", n->guid, ps, old, why, ps, old);
	note_twin(d, n->guid);
	if (p->peer_node != FAB_NONE) {
		fabric_node(f, p->peer_node)->ports[p->peer_port].peer_node = FAB_NONE;
		p->peer_node = FAB_NONE;
	}
	if (same_path(n->path, n->hops, p->path, p->hops)) {
		n->hops = q->hops;
		memcpy(n->path, q->path, q->hops + 1);
		n->sys_guid = be64toh(ni->sys_guid);
		n->device_id = be16toh(ni->device_id);
		n->partition_cap = be16toh(ni->partition_cap);
		n->revision = be32toh(ni->revision);
		n->vendor_id = smp_node_info_vendor(ni);
		n->has_desc = false;
		send_query(d, Q_NODE_DESC, q->path, q->hops, id, 0, FAB_NONE, 0);
	}
	fabric_pkey_alloc(n, lp, 0);
	memset(&p->pi, 0, sizeof(p->pi));
	p->valid = false;
	p->guid = be64toh(ni->port_guid);
	p->hops = q->hops;
	memcpy(p->path, q->path, q->hops + 1);
	send_query(d, Q_PORT_INFO, q->path, q->hops, id, lp, FAB_NONE, 0);
	return true;
}

static void got_node_info(struct discovery *d, struct query *q,
			  const struct smp_node_info *ni)
{
	struct fabric *f = d->fabric;
	uint64_t guid = be64toh(ni->node_guid);
	uint8_t lp = ni->local_port;
	int32_t id = fabric_find(f, guid);
	struct fab_node *n;
	char ps[4 * (SMP_MAX_HOPS + 1)];

	if (!node_info_sane(ni, q->hops)) {
		path_str(q->path, q->hops, ps, sizeof(ps));
		log_ratelimited(LOG_LVL_WARN, 102, "path %s: invalid NodeInfo"
				" (type %u, ports %u, local port %u): node ignored",
				ps, ni->node_type, ni->num_ports, ni->local_port);
		d->result.failed++;
		return;
	}
	if (id == FAB_NONE && f->n_nodes >= d->max_nodes) {
		/* A node that answers for a whole made-up fabric behind it
		 * (a new GUID on every path) must not grow the model for
		 * ever: a subnet cannot hold more nodes than unicast LIDs. */
		if (!d->full) {
			path_str(q->path, q->hops, ps, sizeof(ps));
			log_err("ERR 0108: path %s: more than %u nodes: the"
				" subnet has no LIDs for more; nodes beyond are"
				" not explored this sweep", ps, d->max_nodes);
		}
		d->full = true;
		d->result.failed++;
		return;
	}
	if (id == FAB_NONE) {
		id = fabric_add_node(f, guid, ni->node_type, ni->num_ports);
		if (id < 0) {
			d->result.failed++;
			return;
		}
		n = fabric_node(f, id);
		n->sys_guid = be64toh(ni->sys_guid);
		n->device_id = be16toh(ni->device_id);
		n->partition_cap = be16toh(ni->partition_cap);
		n->revision = be32toh(ni->revision);
		n->vendor_id = smp_node_info_vendor(ni);
		n->hops = q->hops;
		memcpy(n->path, q->path, q->hops + 1);
		if (q->hops == 0) {
			f->local_node = id;
			f->local_port = lp;
			f->local_port_guid = be64toh(ni->port_guid);
		}
		send_query(d, Q_NODE_DESC, q->path, q->hops, id, 0, FAB_NONE, 0);
		if (n->type == NODE_TYPE_SWITCH) {
			/* Ports are read after SwitchInfo (switch_ports()). */
			for (unsigned p = 0; p <= n->num_ports; p++)
				n->ports[p].guid = be64toh(ni->port_guid);
			send_query(d, Q_SWITCH_INFO, q->path, q->hops, id, 0,
				   FAB_NONE, 0);
		}
	} else {
		char why[160], first[4 * (SMP_MAX_HOPS + 1)];
		struct log_fields lf = { 0 };

		why[0] = '\0';
		note_self_link(d, q, id, lp);
		if (twin_reason(d, q, id, ni, why, sizeof(why)) &&
		    prefer_previous(d, q, id, ni, why)) {
			n = fabric_node(f, id);
		} else if (why[0]) {
			/* The node first seen keeps the GUID, its LID and its
			 * routes; this one stays out of the model: not
			 * linked, not explored, not given a LID. */
			n = fabric_node(f, id);
			path_str(q->path, q->hops, ps, sizeof(ps));
			/* lp is one of the twin's ports, maybe not of n's. */
			first_path(n, n->type == NODE_TYPE_SWITCH ||
				   lp > n->num_ports ? 0 : lp,
				   first, sizeof(first));
			dup_guid_fields(&lf, d, q, guid, ps, first, 0);
			log_event(LOG_LVL_ERR, 103, &lf, "duplicate node GUID"
				  " 0x%016" PRIx64 ": path %s reaches a node first"
				  " seen at path %s (%s): the node at path %s is"
				  " left out", guid, ps, first, why, ps);
			note_twin(d, guid);
			return;
		}
		n = fabric_node(f, id);
	}
	if (n->type != NODE_TYPE_SWITCH) {
		struct fab_port *p = &n->ports[lp];

		/* First time this CA/router port is reached: remember the way. */
		if (!p->hops && !p->guid) {
			p->guid = be64toh(ni->port_guid);
			p->hops = q->hops;
			memcpy(p->path, q->path, q->hops + 1);
			send_query(d, Q_PORT_INFO, q->path, q->hops, id, lp,
				   FAB_NONE, 0);
		}
	}
	if (q->from_node != FAB_NONE &&
	    fabric_link(f, q->from_node, q->from_port, id, lp) < 0) {
		path_str(q->path, q->hops, ps, sizeof(ps));
		log_ratelimited(LOG_LVL_WARN, 104, "path %s: cannot link port %u",
				ps, lp);
	}
}

/*
 * PortInfo of a switch port says it is down, yet a NodeInfo answer
 * entered this switch (its GUID) through it: that answer came from
 * another switch with the same GUID, reached before this port was read.
 * The link it made is undone; the twin stays out.
 */
static void twin_behind_down_port(struct discovery *d, const struct query *q)
{
	struct fabric *f = d->fabric;
	struct fab_node *n = fabric_node(f, q->node);
	struct fab_port *p = &n->ports[q->port];
	struct fab_node *o = fabric_node(f, p->peer_node);
	struct fab_port *op = &o->ports[p->peer_port];
	char ps[4 * (SMP_MAX_HOPS + 1) + 4], first[4 * (SMP_MAX_HOPS + 1)];
	struct log_fields lf = { 0 };
	size_t len;

	first_path(o, p->peer_port, ps, sizeof(ps) - 4);
	len = strlen(ps);
	snprintf(ps + len, sizeof(ps) - len, ",%u", p->peer_port);
	path_str(n->path, n->hops, first, sizeof(first));
	dup_guid_fields(&lf, d, q, n->guid, ps, first, q->port);
	log_event(LOG_LVL_ERR, 103, &lf, "duplicate node GUID 0x%016" PRIx64
		  ": path %s reaches a node first seen at path %s (it was"
		  " entered at port %u, which is down on the switch first"
		  " seen): the node at path %s is left out", n->guid, ps, first,
		  q->port, ps);
	op->peer_node = FAB_NONE;
	p->peer_node = FAB_NONE;
	note_twin(d, n->guid);
}

static void got_port_info(struct discovery *d, struct query *q,
			  const struct smp_port_info *pi)
{
	struct fabric *f = d->fabric;
	struct fab_node *n = fabric_node(f, q->node);
	struct fab_port *p = &n->ports[q->port];
	bool from_here;

	p->pi = *pi;
	p->valid = true;
	if (q->port && p->peer_node != FAB_NONE &&
	    pi_port_state(pi) < PORT_STATE_INIT)
		twin_behind_down_port(d, q);
	if (!d->defer_pkeys)
		read_pkeys(d, q->node, q->port, q->path, q->hops);
	/* A port whose physical link is off (Sleep, Polling, Disabled)
	 * carries nothing, whatever its LinkState says (ibsim leaves it
	 * ACTIVE under a PortPhysicalState Set): not crossed, like a port
	 * that is down.  Training and error recovery are passing states of
	 * a link that is there: crossed. */
	if (q->port == 0 || pi_port_state(pi) < PORT_STATE_INIT ||
	    (pi_phys_state(pi) && pi_phys_state(pi) <= PHYS_STATE_DISABLED) ||
	    p->peer_node != FAB_NONE)
		return;
	/* Switches forward; a CA or router is only left by the SM itself. */
	from_here = n->type == NODE_TYPE_SWITCH ||
		    (q->hops == 0 && q->node == f->local_node);
	if (from_here)
		explore(d, q->node, q->port, q->path, q->hops);
}

/*
 * Read every port of a switch.  This comes after SwitchInfo (and after
 * clearing its PortStateChange bit, when set): a port that changes from
 * now on sets the bit again, and the next light sweep sees it.  Clearing
 * it after reading the ports could wipe out a change made in between.
 */
static void switch_ports(struct discovery *d, const struct query *q)
{
	const struct fab_node *n = fabric_node(d->fabric, q->node);

	for (unsigned p = 0; p <= n->num_ports; p++)
		send_query(d, Q_PORT_INFO, q->path, q->hops, q->node, (uint8_t)p,
			   FAB_NONE, 0);
}

static void on_answer(void *arg, int status, const void *mad, size_t len)
{
	struct query *q = arg;
	struct discovery *d = q->d;
	const struct smp_dr *smp = mad;
	char ps[4 * (SMP_MAX_HOPS + 1)];

	d->outstanding--;
	/* A LID-routed query lost (answered by DR after the engine's
	 * fallback, or not at all): directed route for this node from now
	 * until the next completed sweep. */
	if (q->by_lid && (status < 0 || (mad && len == MAD_SIZE &&
			  smp->hdr.mgmt_class == MAD_CLASS_SMI_DR))) {
		fabric_node(d->fabric, q->node)->smp_lid_failed = true;
		d->result.lid_fallbacks++;
		q->by_lid = false;
	}
	if (status == -ETIMEDOUT && ++q->rounds < QUERY_ROUNDS &&
	    submit_query(d, q) == 0)
		return;
	/* The engine passes only whole SMPs; a short one is no answer. */
	if (status == 0 && (!mad || len != MAD_SIZE))
		status = -EBADMSG;
	if (answer_stale(d, q)) {
		free(q);
		if (d->pk_phase)
			pkeys_fill(d);
		maybe_finish(d);
		return;
	}
	if (status < 0 || (be16toh(smp->hdr.status) & 0x7fff)) {
		path_str(q->path, q->hops, ps, sizeof(ps));
		if (status < 0 && q->kind == Q_NODE_INFO && q->hops) {
			d->result.dead_ends++;
			log_ratelimited(LOG_LVL_WARN, 105, "path %s: no answer to"
					" NodeInfo (%s): dead end", ps,
					strerror(-status));
		} else {
			log_ratelimited(LOG_LVL_WARN, 106, "path %s: attribute"
					" 0x%04x port %u failed: %s", ps,
					query_attr[q->kind], q->port, status < 0 ?
					strerror(-status) : "bad MAD status");
		}
		d->result.failed++;
		if (q->kind == Q_SWITCH_INFO || q->kind == Q_PSC_CLEAR)
			switch_ports(d, q);
	} else {
		switch (q->kind) {
		case Q_NODE_INFO:
			got_node_info(d, q, (const void *)smp->data);
			break;
		case Q_NODE_DESC: {
			struct fab_node *n = fabric_node(d->fabric, q->node);
			memcpy(n->desc, smp->data, 64);
			n->desc[64] = '\0';
			n->has_desc = true;
			break;
		}
		case Q_SWITCH_INFO: {
			struct fab_node *n = fabric_node(d->fabric, q->node);
			memcpy(&n->si, smp->data, sizeof(n->si));
			n->has_switch_info = true;
			if (d->clear_psc && smp_switch_info_psc(&n->si))
				send_query(d, Q_PSC_CLEAR, q->path, q->hops,
					   q->node, 0, FAB_NONE, 0);
			else
				switch_ports(d, q);
			break;
		}
		case Q_PSC_CLEAR: {
			struct fab_node *n = fabric_node(d->fabric, q->node);
			memcpy(&n->si, smp->data, sizeof(n->si));
			switch_ports(d, q);
			break;
		}
		case Q_PORT_INFO:
			got_port_info(d, q, (const void *)smp->data);
			break;
		case Q_PKEY:
			got_pkeys(d, q, smp->data);
			break;
		}
	}
	free(q);
	if (d->pk_phase)
		pkeys_fill(d);
	maybe_finish(d);
}

int discover_start(struct discovery **out, struct mad_engine *e,
		   struct fabric *f, bool clear_psc, discover_done_cb cb,
		   void *arg)
{
	struct discovery *d = calloc(1, sizeof(*d));
	uint8_t path[SMP_MAX_HOPS + 1] = { 0 };

	if (!d)
		return -ENOMEM;
	d->engine = e;
	d->fabric = f;
	d->cb = cb;
	d->cb_arg = arg;
	d->clear_psc = clear_psc;
	d->max_nodes = DISCOVER_MAX_NODES;
	d->pk_queued = PKEY_QUEUED;
	clock_gettime(CLOCK_MONOTONIC, &d->start);
	*out = d;
	send_query(d, Q_NODE_INFO, path, 0, FAB_NONE, 0, FAB_NONE, 0);
	if (!d->outstanding) {
		*out = NULL;
		free(d);
		return -ENOMEM;
	}
	return 0;
}

void discover_set_previous(struct discovery *d, const struct fabric *prev)
{
	d->prev = prev && prev->n_nodes ? prev : NULL;
}

void discover_set_lid_routes(struct discovery *d, bool on)
{
	d->lid_routes = on;
}

void discover_set_max_nodes(struct discovery *d, unsigned n)
{
	d->max_nodes = n ? n : DISCOVER_MAX_NODES;
}

void discover_set_defer_pkeys(struct discovery *d, bool on, unsigned queued)
{
	d->defer_pkeys = on;
	d->pk_queued = queued ? queued : PKEY_QUEUED;
}

/*
 * The P_Key tables a deferred discovery left unread, now: the ports whose
 * PortInfo it read, each on the route it was read on (a switch's own
 * route; a CA port's, which twin handling may have changed since), with
 * the same bounds as when they are read along the way; port by port until
 * PKEY_QUEUED reads are outstanding, topped up as they are answered.
 */
static void pkeys_fill(struct discovery *d)
{
	const struct fabric *f = d->fabric;

	while (d->outstanding < d->pk_queued && d->pk_node < f->n_nodes) {
		const struct fab_node *n = &f->nodes[d->pk_node];
		unsigned pn = d->pk_port;

		if (pn > n->num_ports) {
			d->pk_node++;
			d->pk_port = 0;
			continue;
		}
		d->pk_port++;
		const struct fab_port *p = &n->ports[pn];
		bool sw = n->type == NODE_TYPE_SWITCH;

		if (!p->valid || p->pkeys)
			continue;
		read_pkeys(d, (int32_t)d->pk_node, (uint8_t)pn,
			   sw ? n->path : p->path, sw ? n->hops : p->hops);
	}
}

unsigned discover_read_pkeys(struct discovery *d, discover_done_cb cb,
			     void *arg)
{
	d->cb = cb;
	d->cb_arg = arg;
	memset(&d->result, 0, sizeof(d->result));
	clock_gettime(CLOCK_MONOTONIC, &d->start);
	d->pk_phase = true;
	d->pk_node = 0;
	d->pk_port = 0;
	pkeys_fill(d);		/* `finished` still holds off the callback */
	if (!d->outstanding)
		return 0;
	d->finished = false;
	return d->outstanding;
}

void discover_free(struct discovery *d)
{
	free(d);
}
