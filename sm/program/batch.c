/*
 * sm/program/batch.c - batches of SMP Sets: queued within the engine's
 * depth, retried, PortInfo Sets refused read back (see sm/program.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sm/program/internal.h"

struct batch_item {
	struct smp_batch *b;
	batch_item_cb cb;
	void *cb_arg;
	int32_t node;
	uint8_t port;
	uint8_t rounds;		/* times the engine gave up on it */
	bool    readback;	/* now a Get checking a refused PortInfo Set */
	bool by_lid;		/* last submitted LID-routed */
	uint16_t lid;		/* the node's LID (destination window) */
	struct smp_dr smp;	/* kept to submit again */
	uint8_t set_data[SMP_DATA_SIZE];	/* the Set's, while readback */
};

/* Rounds of retries a Set gets before it counts as failed (as for the
 * discovery's queries: cheaper than a whole new sweep). */
#define ITEM_ROUNDS	3

void batch_init(struct smp_batch *b, struct mad_engine *e, batch_done_cb done,
		void *arg)
{
	memset(b, 0, sizeof(*b));
	b->engine = e;
	b->done = done;
	b->arg = arg;
}

static void batch_pump(struct smp_batch *b)
{
	if (b->running)
		return;
	b->running = true;
	while (!b->sealed && b->pending < BATCH_DEPTH)
		if (!b->more(b, b->arg))
			b->sealed = true;
	b->running = false;
	if (b->sealed && !b->pending && b->done) {
		batch_done_cb done = b->done;

		b->done = NULL;		/* exactly once */
		done(b, b->arg);
	}
}

/*
 * A PortInfo Set answered "invalid field" may be the second attempt of a
 * Set whose first attempt did its work and lost its answer: the port is
 * ARMED already, and ARMED -> ARMED is not a valid transition (IB spec
 * 14.2.5.6), so the repeat is refused.  Read the port back; if it holds
 * what the Set asked for (its state at or past the one asked), the Set
 * is done and the read is its answer.
 */
static bool portinfo_as_set(const uint8_t *set_data, const uint8_t *got_data)
{
	struct smp_port_info want, got;

	memcpy(&want, set_data, sizeof(want));
	memcpy(&got, got_data, sizeof(got));
	/* What a refused repeat is about: the state, and the addresses the
	 * same Set carried (fields a port does not store are left to the
	 * next sweep's comparison, as after any Set). */
	if (want.lid != got.lid || want.master_sm_lid != got.master_sm_lid ||
	    pi_lmc(&want) != pi_lmc(&got))
		return false;
	unsigned ws = pi_port_state(&want), gs = pi_port_state(&got);

	return ws == PORT_STATE_NOP || gs == ws ||
	       (ws == PORT_STATE_ARMED && gs == PORT_STATE_ACTIVE);
}

static void on_item(void *arg, int status, const void *mad, size_t len);

static bool start_readback(struct batch_item *it, const struct smp_dr *ans)
{
	if (it->readback || it->smp.hdr.method != MAD_METHOD_SET ||
	    be16toh(it->smp.hdr.attr_id) != SMP_ATTR_PORT_INFO ||
	    (be16toh(ans->hdr.status) & 0x7fff) != MAD_STATUS_INVALID_FIELD)
		return false;
	memcpy(it->set_data, it->smp.data, SMP_DATA_SIZE);
	it->readback = true;
	it->smp.hdr.method = MAD_METHOD_GET;
	memset(it->smp.data, 0, SMP_DATA_SIZE);
	return mad_engine_submit_smp(it->b->engine, &it->smp, it->lid,
				     it->by_lid, on_item, it) == 0;
}

static void on_item(void *arg, int status, const void *mad, size_t len)
{
	struct batch_item *it = arg;
	struct smp_batch *b = it->b;
	const struct smp_dr *smp = mad;
	const uint8_t *data = NULL;

	/* A LID-routed Set lost (the engine fell back to directed route,
	 * or nothing answered at all): directed route for this node from
	 * now on, until the next completed sweep. */
	if (it->by_lid && (status < 0 || (mad && len == MAD_SIZE &&
			   smp->hdr.mgmt_class == MAD_CLASS_SMI_DR))) {
		b->lidf->nodes[it->node].smp_lid_failed = true;
		b->lid_fallbacks++;
		it->by_lid = false;
	}
	if (status == -ETIMEDOUT && ++it->rounds < ITEM_ROUNDS) {
		if (mad_engine_submit_smp(b->engine, &it->smp, it->lid, false,
					  on_item, it) == 0)
			return;
	}
	if (status == 0 && mad && len == MAD_SIZE && start_readback(it, smp))
		return;
	b->pending--;
	if (status == 0 && mad && len == MAD_SIZE &&
	    !(be16toh(smp->hdr.status) & 0x7fff) &&
	    (!it->readback || portinfo_as_set(it->set_data, smp->data))) {
		data = smp->data;
		if (it->readback)
			b->readbacks++;
	}
	else {
		b->failed++;
		b->unacked++;
		if (b->on_fail)
			b->on_fail(b, it->node, it->port,
				   be16toh(it->smp.hdr.attr_id), b->arg);
	}
	if (it->cb)
		it->cb(b, it->node, it->port, data, it->cb_arg);
	free(it);
	batch_pump(b);
}

int batch_smp(struct smp_batch *b, uint8_t method, const uint8_t *path,
	      unsigned hops, uint16_t attr, uint32_t mod, const void *data,
	      size_t len, int32_t node, uint8_t port, batch_item_cb cb,
	      void *cb_arg)
{
	struct batch_item *it;
	int rc;

	if (len > SMP_DATA_SIZE)
		return -EINVAL;
	it = malloc(sizeof(*it));
	if (!it)
		return -ENOMEM;
	it->b = b;
	it->cb = cb;
	it->cb_arg = cb_arg;
	it->node = node;
	it->port = port;
	it->rounds = 0;
	it->readback = false;
	it->by_lid = false;
	it->lid = 0;
	/* LID-routed where the sweep says the node's LID and routes are in
	 * place (fab_node.smp_lid, sm/sweep.c), else directed route. */
	if (b->lidf && node >= 0 && (size_t)node < b->lidf->n_nodes) {
		const struct fab_node *n = &b->lidf->nodes[node];

		/* both forms share the LID's destination window; a node
		 * never LID-routed keeps its path's, as in the discovery */
		it->lid = n->smp_lid;
		/* A CA's SMP acts on the port it arrives at (its P_Key
		 * table, its PortInfo): LID-routed only for the port that
		 * holds the LID, a second port's by its own directed route */
		it->by_lid = n->smp_lid && !n->smp_lid_failed &&
			     (n->type == NODE_TYPE_SWITCH ||
			      (port >= 1 && port <= n->num_ports &&
			       n->ports[port].lid == n->smp_lid));
	}
	mad_build_smp_dr(&it->smp, method, attr, mod, path, hops);
	if (data)
		memcpy(it->smp.data, data, len);
	rc = mad_engine_submit_smp(b->engine, &it->smp, it->lid, it->by_lid,
				   on_item, it);
	if (rc < 0) {
		free(it);
		return rc;
	}
	b->pending++;
	b->sent++;
	b->lid_sent += it->by_lid;
	return 0;
}

void batch_run(struct smp_batch *b, batch_more_cb more)
{
	b->more = more;
	batch_pump(b);
}
