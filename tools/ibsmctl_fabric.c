/*
 * ibsmctl_fabric.c - the fabric model read through the SA (see
 * ibsmctl_fabric.h).
 *
 * A walk from the SM's port along LinkRecords: every LID found is asked
 * for its NodeRecord; every port of that node for its PortInfoRecord,
 * and a port that is not down for its LinkRecord (the far end's LID joins
 * the walk); every switch for its SwitchInfoRecord.  Then every port that has a P_Key table in the SM's
 * model (fabric_pkey_blocks(), as the SM's discovery decides) is asked
 * for each block's P_KeyTableRecord.  Requests go out together through the
 * MAD engine (its window and queue) and are answered from the loop; each
 * answer is checked (status, attribute, length, the record's own keys)
 * before it is used.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "mad/engine.h"
#include "mad/sa_wire.h"
#include "mad/umad_io.h"
#include "tools/ibsmctl_fabric.h"

#define SA_QKEY			0x80010000u
#define SA_TRUSTED_SM_KEY	1ull	/* OpenSM's default sa_key (15.2.2.1) */
#define MAX_UCAST_LID		0xbfff
#define BUSY_TRIES		5

/* ComponentMask bits of the records asked for (15.2.5) */
#define NR_LID		(1ull << 0)
#define PIR_LID		(1ull << 0)
#define PIR_PORT	(1ull << 1)
#define LR_FROM_LID	(1ull << 0)
#define LR_FROM_PORT	(1ull << 1)
#define SIR_LID		(1ull << 0)
#define PKTR_LID	(1ull << 0)
#define PKTR_BLOCK	(1ull << 1)
#define PKTR_PORT	(1ull << 2)

struct rd;
typedef void (*rec_cb)(struct rd *r, const uint8_t *rec, size_t len,
		       uint16_t lid, unsigned port, unsigned block);

struct req {
	struct rd *r;
	rec_cb cb;
	uint16_t lid;
	uint8_t port;
	uint16_t block;
	unsigned busy;
	struct sa_mad m;
};

/* A link as LinkRecord gave it, joined up once every LID is known. */
struct lr {
	uint16_t from_lid, to_lid;
	uint8_t from_port, to_port;
};

struct rd {
	struct ev_loop *loop;
	struct umad_io *io;
	struct mad_engine *engine;
	struct mad_addr sa;
	struct fabric *f;
	struct sa_fabric_info *info;
	unsigned outstanding;
	int err;
	char *msg;
	size_t msglen;
	/* LID -> node id + 1 and port (0: unknown) */
	int32_t *lid_node;
	uint8_t *lid_port;
	uint8_t *seen;			/* LIDs asked for */
	struct lr *links;
	size_t n_links, cap_links;
};

static void fail(struct rd *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(struct rd *r, int err, const char *fmt, ...)
{
	va_list ap;

	if (r->err)
		return;
	r->err = err;
	va_start(ap, fmt);
	vsnprintf(r->msg, r->msglen, fmt, ap);
	va_end(ap);
}

static const char *attr_name(uint16_t a)
{
	switch (a) {
	case SA_ATTR_NODE_RECORD:	 return "NodeRecord";
	case SA_ATTR_PORT_INFO_RECORD:	 return "PortInfoRecord";
	case SA_ATTR_LINK_RECORD:	 return "LinkRecord";
	case SA_ATTR_SWITCH_INFO_RECORD: return "SwitchInfoRecord";
	case SA_ATTR_PKEY_TABLE_RECORD:	 return "P_KeyTableRecord";
	default:			 return "record";
	}
}

static void on_answer(void *arg, int status, const void *mad, size_t len);

static int submit(struct req *q)
{
	struct rd *r = q->r;
	int rc = mad_engine_submit(r->engine, &q->m, sizeof(q->m), &r->sa,
				   on_answer, q);

	if (rc < 0)
		fail(r, rc, "cannot send an SA request: %s", strerror(-rc));
	return rc;
}

static void on_answer(void *arg, int status, const void *mad, size_t len)
{
	struct req *q = arg;
	struct rd *r = q->r;
	const struct sa_mad *a = mad;
	uint16_t attr = be16toh(q->m.hdr.attr_id);

	if (status < 0 || r->err) {
		if (status < 0)
			fail(r, status, "no answer from the SA at LID %u to a %s"
			     " query (LID %u): %s", r->sa.lid, attr_name(attr),
			     q->lid, status == -ETIMEDOUT ? "timed out" :
			     strerror(-status));
		goto done;
	}
	if (len < sizeof(*a) || a->hdr.mgmt_class != MAD_CLASS_SA ||
	    be16toh(a->hdr.attr_id) != attr) {
		fail(r, -EPROTO, "malformed answer from the SA to a %s query",
		     attr_name(attr));
		goto done;
	}
	uint16_t st = be16toh(a->hdr.status);
	if ((st & MAD_STATUS_BUSY) && q->busy++ < BUSY_TRIES) {
		if (submit(q) == 0)
			return;		/* asked again: still outstanding */
		goto done;
	}
	if (st == SA_STATUS_NO_RECORDS) {
		q->cb(r, NULL, 0, q->lid, q->port, q->block);
		goto done;
	}
	if (st) {
		fail(r, -EPROTO, "the SA answered a %s query (LID %u) with MAD "
		     "status 0x%04x%s", attr_name(attr), q->lid, st,
		     st == SA_STATUS_REQ_INVALID &&
		     attr == SA_ATTR_PKEY_TABLE_RECORD ?
		     " (it does not trust SM_Key 1)" : "");
		goto done;
	}
	r->info->queries++;
	q->cb(r, a->data, sizeof(a->data), q->lid, q->port, q->block);
done:
	r->outstanding--;
	free(q);
}

/* Ask for one record: SubnAdmGet(attr) with the template `tmpl`. */
static void ask(struct rd *r, uint16_t attr, uint64_t mask, const void *tmpl,
		size_t tlen, rec_cb cb, uint16_t lid, unsigned port,
		unsigned block)
{
	struct req *q;

	if (r->err)
		return;
	q = calloc(1, sizeof(*q));
	if (!q) {
		fail(r, -ENOMEM, "out of memory");
		return;
	}
	*q = (struct req){ .r = r, .cb = cb, .lid = lid, .port = (uint8_t)port,
			   .block = (uint16_t)block };
	sa_request_hdr(&q->m, MAD_METHOD_GET, attr, mask);
	q->m.sm_key = htobe64(SA_TRUSTED_SM_KEY);
	memcpy(q->m.data, tmpl, tlen);
	if (submit(q) < 0) {
		free(q);
		return;
	}
	r->outstanding++;
}

/* Run the loop until every request is answered (or one failed). */
static void drain(struct rd *r)
{
	while (r->outstanding && !r->err)
		ev_run(r->loop, EVRUN_ONCE);
}

static struct fab_node *node_of_lid(struct rd *r, uint16_t lid, unsigned *port)
{
	int32_t id = r->lid_node[lid] - 1;

	if (id < 0)
		return NULL;
	*port = r->lid_port[lid];
	return fabric_node(r->f, id);
}

/* ------------------------------------------------------------ records */

static void on_link(struct rd *r, const uint8_t *rec, size_t len,
		    uint16_t lid, unsigned port, unsigned block);

static void on_portinfo(struct rd *r, const uint8_t *rec, size_t len,
			uint16_t lid, unsigned port, unsigned block)
{
	struct sa_port_info_record pir;
	unsigned lp;
	struct fab_node *n = node_of_lid(r, lid, &lp);

	(void)block;
	(void)len;
	if (!rec || !n)
		return;		/* no record: the port stays without PortInfo */
	memcpy(&pir, rec, sizeof(pir));
	if (be16toh(pir.lid) != lid || pir.port_num != port ||
	    port > n->num_ports) {
		fail(r, -EPROTO, "the SA answered PortInfoRecord LID %u port %u"
		     " for LID %u port %u", be16toh(pir.lid), pir.port_num,
		     lid, port);
		return;
	}
	n->ports[port].pi = pir.port_info;
	n->ports[port].valid = true;
	r->info->ports++;
	/* A port that is down has no link to ask about. */
	if (port && pi_port_state(&pir.port_info) >= PORT_STATE_INIT) {
		struct sa_link_record lr = { .from_lid = htobe16(lid),
					     .from_port = (uint8_t)port };

		ask(r, SA_ATTR_LINK_RECORD, LR_FROM_LID | LR_FROM_PORT, &lr,
		    sizeof(lr), on_link, lid, port, 0);
	}
}

static void visit(struct rd *r, uint16_t lid);

static void on_link(struct rd *r, const uint8_t *rec, size_t len,
		    uint16_t lid, unsigned port, unsigned block)
{
	struct sa_link_record lr;

	(void)len;
	(void)block;
	if (!rec)
		return;		/* not linked */
	memcpy(&lr, rec, sizeof(lr));
	uint16_t to = be16toh(lr.to_lid);
	if (be16toh(lr.from_lid) != lid || lr.from_port != port || !to ||
	    to > MAX_UCAST_LID || !lr.to_port) {
		fail(r, -EPROTO, "bad LinkRecord from the SA for LID %u port %u",
		     lid, port);
		return;
	}
	if (r->n_links == r->cap_links) {
		size_t nc = r->cap_links ? r->cap_links * 2 : 256;
		struct lr *nl = realloc(r->links, nc * sizeof(*nl));

		if (!nl) {
			fail(r, -ENOMEM, "out of memory");
			return;
		}
		r->links = nl;
		r->cap_links = nc;
	}
	r->links[r->n_links++] = (struct lr){ .from_lid = lid, .to_lid = to,
		.from_port = (uint8_t)port, .to_port = lr.to_port };
	visit(r, to);
}

static void on_switchinfo(struct rd *r, const uint8_t *rec, size_t len,
			  uint16_t lid, unsigned port, unsigned block)
{
	struct sa_switch_info_record sir;
	unsigned lp;
	struct fab_node *n = node_of_lid(r, lid, &lp);

	(void)len;
	(void)port;
	(void)block;
	if (!rec || !n)
		return;
	memcpy(&sir, rec, sizeof(sir));
	if (be16toh(sir.lid) != lid) {
		fail(r, -EPROTO, "bad SwitchInfoRecord from the SA for LID %u",
		     lid);
		return;
	}
	n->si = sir.switch_info;
	n->has_switch_info = true;
}

/* The port of a CA or router that owns a LID, or port 0 of a switch: its
 * PortInfo (then its link: on_portinfo()); on a switch every port's. */
static void ask_ports(struct rd *r, struct fab_node *n, uint16_t lid,
		      unsigned lp)
{
	struct sa_port_info_record pir = { .lid = htobe16(lid) };
	unsigned first = lp, last = lp;

	if (n->type == NODE_TYPE_SWITCH) {
		struct sa_switch_info_record sir = { .lid = htobe16(lid) };

		ask(r, SA_ATTR_SWITCH_INFO_RECORD, SIR_LID, &sir, sizeof(sir),
		    on_switchinfo, lid, 0, 0);
		first = 0;
		last = n->num_ports;
	}
	for (unsigned p = first; p <= last; p++) {
		pir.port_num = (uint8_t)p;
		ask(r, SA_ATTR_PORT_INFO_RECORD, PIR_LID | PIR_PORT, &pir,
		    sizeof(pir), on_portinfo, lid, p, 0);
	}
}

static void on_node(struct rd *r, const uint8_t *rec, size_t len,
		    uint16_t lid, unsigned port, unsigned block)
{
	struct sa_node_record nr;
	const struct smp_node_info *ni = &nr.node_info;
	int32_t id;
	unsigned lp;

	(void)len;
	(void)port;
	(void)block;
	if (!rec)
		return;		/* the LID went away meanwhile */
	memcpy(&nr, rec, sizeof(nr));
	if (be16toh(nr.lid) != lid || !ni->num_ports ||
	    (ni->node_type != NODE_TYPE_CA && ni->node_type != NODE_TYPE_SWITCH &&
	     ni->node_type != NODE_TYPE_ROUTER)) {
		fail(r, -EPROTO, "bad NodeRecord from the SA for LID %u", lid);
		return;
	}
	lp = ni->node_type == NODE_TYPE_SWITCH ? 0 : ni->local_port;
	if (lp > ni->num_ports || (ni->node_type != NODE_TYPE_SWITCH && !lp)) {
		fail(r, -EPROTO, "NodeRecord for LID %u: port %u of %u", lid,
		     ni->local_port, ni->num_ports);
		return;
	}
	uint64_t guid = be64toh(ni->node_guid);
	id = fabric_find(r->f, guid);
	if (id == FAB_NONE) {
		id = fabric_add_node(r->f, guid, ni->node_type, ni->num_ports);
		if (id < 0) {
			fail(r, id, "cannot add a node: %s", strerror(-id));
			return;
		}
		struct fab_node *n = fabric_node(r->f, id);

		n->sys_guid = be64toh(ni->sys_guid);
		n->partition_cap = be16toh(ni->partition_cap);
		n->device_id = be16toh(ni->device_id);
		n->revision = be32toh(ni->revision);
		n->vendor_id = smp_node_info_vendor(ni);
		memcpy(n->desc, nr.node_desc.desc, sizeof(nr.node_desc.desc));
		n->desc[sizeof(n->desc) - 1] = '\0';
		n->has_desc = true;
		r->info->nodes++;
	}
	struct fab_node *n = fabric_node(r->f, id);
	if (n->type != ni->node_type || n->num_ports != ni->num_ports) {
		fail(r, -EPROTO, "NodeRecords disagree on node 0x%016" PRIx64,
		     guid);
		return;
	}
	n->ports[lp].guid = be64toh(ni->port_guid);
	n->ports[lp].lid = lid;
	r->lid_node[lid] = id + 1;
	r->lid_port[lid] = (uint8_t)lp;
	if (lid == r->sa.lid) {
		r->f->local_node = id;
		r->f->local_port = (uint8_t)lp;
		r->f->local_port_guid = n->ports[lp].guid;
	}
	ask_ports(r, n, lid, lp);
}

static void visit(struct rd *r, uint16_t lid)
{
	struct sa_node_record nr = { .lid = htobe16(lid) };

	if (!lid || lid > MAX_UCAST_LID || r->seen[lid])
		return;
	r->seen[lid] = 1;
	ask(r, SA_ATTR_NODE_RECORD, NR_LID, &nr, sizeof(nr), on_node, lid, 0, 0);
}

static void on_pkeys(struct rd *r, const uint8_t *rec, size_t len,
		     uint16_t lid, unsigned port, unsigned block)
{
	struct sa_pkey_table_record pk;
	unsigned lp;
	struct fab_node *n = node_of_lid(r, lid, &lp);
	struct fab_port *p;

	(void)len;
	if (!rec || !n)
		return;		/* unread: the table stays unknown */
	p = &n->ports[port];
	memcpy(&pk, rec, sizeof(pk));
	/* BlockNum comes in either byte order (OpenSM and ibsm write it in
	 * host order, see sm/sa/tables.c); the LID must be ours. */
	if (be16toh(pk.lid) != lid || !p->pkeys || block >= p->pkey_blocks) {
		fail(r, -EPROTO, "bad P_KeyTableRecord from the SA for LID %u "
		     "port %u block %u", lid, port, block);
		return;
	}
	memcpy(p->pkeys + (size_t)block * PKEY_BLOCK_SIZE, pk.pkeys,
	       sizeof(pk.pkeys));
	p->pkey_read++;
	r->info->pkey_blocks++;
}

/* Every P_Key block of every port the SM manages (fabric_pkey_blocks). */
static void ask_pkeys(struct rd *r)
{
	for (size_t i = 0; i < r->f->n_nodes && !r->err; i++) {
		struct fab_node *n = &r->f->nodes[i];
		bool sw = n->type == NODE_TYPE_SWITCH;

		for (unsigned pn = 0; pn <= n->num_ports; pn++) {
			struct fab_port *p = &n->ports[pn];
			uint16_t lid = n->ports[sw ? 0 : pn].lid;
			unsigned blocks = fabric_pkey_blocks(n, pn);

			if (!lid || (!sw && !p->valid) || !blocks)
				continue;
			if (fabric_pkey_alloc(n, pn, blocks) < 0) {
				fail(r, -ENOMEM, "out of memory");
				return;
			}
			for (unsigned b = 0; b < blocks; b++) {
				struct sa_pkey_table_record t = {
					.lid = htobe16(lid),
					.block_num = htobe16((uint16_t)b),
					.port_num = (uint8_t)pn,
				};

				ask(r, SA_ATTR_PKEY_TABLE_RECORD,
				    PKTR_LID | PKTR_BLOCK | PKTR_PORT, &t,
				    sizeof(t), on_pkeys, lid, pn, b);
			}
		}
	}
}

/* Join the links seen from both ends (each is seen twice). */
static void join_links(struct rd *r)
{
	for (size_t i = 0; i < r->n_links && !r->err; i++) {
		const struct lr *l = &r->links[i];
		int32_t a = r->lid_node[l->from_lid] - 1;
		int32_t b = r->lid_node[l->to_lid] - 1;

		if (a < 0 || b < 0)
			continue;	/* a LID whose NodeRecord went away */
		if (fabric_link(r->f, a, l->from_port, b, l->to_port) < 0) {
			fail(r, -EPROTO, "LinkRecord LID %u port %u to LID %u "
			     "port %u names no port", l->from_lid, l->from_port,
			     l->to_lid, l->to_port);
			return;
		}
	}
}

/* ------------------------------------------------------------- public */

static void on_mad(void *arg, const void *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	struct rd *r = arg;

	mad_engine_recv(r->engine, mad, len, from, status);
}

int sa_fabric_read(const struct sa_fabric_opts *o, struct fabric *f,
		   struct sa_fabric_info *info, char *err, size_t errlen)
{
	static const uint8_t classes[] = { MAD_CLASS_SA };
	struct rd r = { .f = f, .info = info, .msg = err, .msglen = errlen };
	const struct umad_port_info *pt;
	int rc;

	memset(info, 0, sizeof(*info));
	if (errlen)
		err[0] = '\0';
	r.loop = ev_loop_new(EVFLAG_AUTO);
	r.lid_node = calloc(MAX_UCAST_LID + 1, sizeof(*r.lid_node));
	r.lid_port = calloc(MAX_UCAST_LID + 1, 1);
	r.seen = calloc(MAX_UCAST_LID + 1, 1);
	if (!r.loop || !r.lid_node || !r.lid_port || !r.seen) {
		fail(&r, -ENOMEM, "out of memory");
		goto out;
	}
	rc = umad_io_open(&r.io, r.loop, o->guid, classes, 1, false);
	if (rc < 0) {
		fail(&r, rc, "cannot open %s: %s", o->guid ? "that local port" :
		     "a local port", strerror(-rc));
		goto out;
	}
	pt = umad_io_port(r.io);
	if (pt->state != PORT_STATE_ACTIVE) {
		fail(&r, -ENETDOWN, "local port %s/%d is not active: no SM "
		     "reachable", pt->ca, pt->port);
		goto out;
	}
	if (o->sm_lid < 0 && !pt->sm_lid) {
		fail(&r, -ENETDOWN, "local port %s/%d knows no SM LID", pt->ca,
		     pt->port);
		goto out;
	}
	info->sm_lid = o->sm_lid >= 0 ? (uint16_t)o->sm_lid : pt->sm_lid;
	r.sa = (struct mad_addr){ .lid = info->sm_lid, .qpn = 1,
				  .qkey = SA_QKEY };

	struct mad_transport tr = umad_io_transport(r.io);
	struct mad_engine_opts eo = {
		.max_wire_smps = 1, .max_wire_gmps = 8,
		.timeout_ms = o->timeout_ms ? o->timeout_ms : 500,
		.retries = o->timeout_ms ? o->retries : 3,
	};
	rc = mad_engine_new(&r.engine, r.loop, &tr, &eo);
	if (rc == 0) {
		/* A walk queues a block request per P_Key block at once. */
		mad_engine_set_queue_limits(r.engine, 0, 1u << 22);
		rc = umad_io_start(r.io, on_mad, &r);
	}
	if (rc < 0) {
		fail(&r, rc, "cannot set up the MAD engine: %s", strerror(-rc));
		goto out;
	}
	/* The walk: every answer may add requests; drain() runs them all. */
	visit(&r, info->sm_lid);
	drain(&r);
	if (!r.err && f->local_node == FAB_NONE)
		fail(&r, -ENOENT, "the SA has no NodeRecord for the SM's LID %u",
		     info->sm_lid);
	join_links(&r);
	if (!r.err) {
		info->sm_port_guid = f->local_port_guid;
		ask_pkeys(&r);
		drain(&r);
	}
out:
	if (r.io)
		umad_io_close(r.io);	/* no more MADs after this */
	mad_engine_free(r.engine);
	if (r.loop)
		ev_loop_destroy(r.loop);
	free(r.lid_node);
	free(r.lid_port);
	free(r.seen);
	free(r.links);
	return r.err;
}
