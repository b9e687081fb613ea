/*
 * fuzz_discover.c - libFuzzer target: hostile SMP answers to the
 * discovery (sm/discover.c).
 *
 * The discovery runs against a small scripted fabric (tests/unit/
 * fake_fabric.h: a leaf, two spines in a loop, four CAs and a two-port
 * CA) through the fake transport on a real libev loop.  The fuzz input
 * is a script applied to the answers in the order the fabric sends them
 * (NodeInfo, NodeDescription, SwitchInfo, PortInfo, P_KeyTable, and the
 * PortStateChange Set): one control byte per answer,
 *
 *   0x00-0x7f   the answer as the node gives it
 *   0x80|0      the 64 data bytes replaced by the next 64 input bytes
 *   0x80|1      one data byte: offset (next byte & 63), value (next byte)
 *   0x80|2      MAD status (next 2 bytes; the direction bit is kept)
 *   0x80|3      dropped (at most 4 per input: each costs a timeout)
 *   0x80|4      NodeGUID (and PortGUID) of a NodeInfo replaced by one of
 *               the fabric's GUIDs (next byte): twins
 *   0x80|5      NodeType, NumPorts, LocalPortNum of a NodeInfo (next 3)
 *   0x80|6,7    the answer as the node gives it
 *
 * and answers after the end of the input are left alone, so every run
 * ends.  The model of a clean sweep of the same fabric is the "last
 * sweep" (discover_set_previous()), so twins of CA ports can take the
 * eviction path too.  After the sweep the model must hold together: links symmetric,
 * every port number within its node, one peer per port.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "sm/discover.h"
#include "model/fabric.h"
#include "sm/log.h"
#include "tests/unit/fake_transport.h"
#include "tests/unit/fake_fabric.h"

#define MAX_DROPS	4

struct script {
	const uint8_t *p;
	size_t left;
	unsigned drops;
};

static uint8_t next_byte(struct script *s)
{
	if (!s->left)
		return 0;
	s->left--;
	return *s->p++;
}

static bool rewrite(struct fake_fabric *ff, int id, uint8_t in_port,
		    struct smp_dr *r, void *arg)
{
	struct script *s = arg;
	struct smp_node_info *ni = (void *)r->data;
	bool is_ni = be16toh(r->hdr.attr_id) == SMP_ATTR_NODE_INFO;
	uint8_t c, off;
	uint16_t st;

	(void)id;
	(void)in_port;
	if (!s->left)
		return true;
	c = next_byte(s);
	if (!(c & 0x80))
		return true;
	switch (c & 7) {
	case 0:
		for (unsigned i = 0; i < SMP_DATA_SIZE; i++)
			r->data[i] = next_byte(s);
		break;
	case 1:
		off = next_byte(s) & 63;
		r->data[off] = next_byte(s);
		break;
	case 2:
		st = (uint16_t)(next_byte(s) << 8);
		st |= next_byte(s);
		r->hdr.status = htobe16((uint16_t)((st & 0x7fff) | SMP_DR_DIRECTION));
		break;
	case 3:
		if (s->drops < MAX_DROPS) {
			s->drops++;
			return false;
		}
		break;
	case 4:
		if (is_ni) {
			const struct ff_node *n = &ff->node[next_byte(s) % ff->n];

			ni->node_guid = htobe64(n->guid);
			ni->port_guid = htobe64(n->port_guid);
		}
		break;
	case 5:
		if (is_ni) {
			ni->node_type = next_byte(s);
			ni->num_ports = next_byte(s);
			ni->local_port = next_byte(s);
		}
		break;
	default:
		break;
	}
	return true;
}

static void build_fabric(struct fake_fabric *ff)
{
	int h[6], leaf, sp1, sp2;
	char d[16];

	for (int i = 1; i <= 4; i++) {
		snprintf(d, sizeof(d), "H%d", i);
		h[i] = ff_add(ff, NODE_TYPE_CA, 1, 0x100000u + 2u * (unsigned)i, d);
	}
	h[5] = ff_add(ff, NODE_TYPE_CA, 2, 0x10000a, "H5");
	leaf = ff_add(ff, NODE_TYPE_SWITCH, 8, 0x200001, "leaf");
	sp1 = ff_add(ff, NODE_TYPE_SWITCH, 8, 0x200002, "spine-1");
	sp2 = ff_add(ff, NODE_TYPE_SWITCH, 8, 0x200003, "spine-2");
	for (int i = 1; i <= 4; i++)
		ff_link(ff, h[i], 1, leaf, (uint8_t)i);
	ff_link(ff, leaf, 5, sp1, 1);
	ff_link(ff, leaf, 6, sp2, 1);
	ff_link(ff, sp1, 2, sp2, 2);
	ff_link(ff, h[5], 1, sp1, 3);
	ff_link(ff, h[5], 2, sp2, 3);
	ff->local = h[1];
	ff->local_port = 1;
}

/* The model holds together whatever the answers said. */
static void check_model(const struct fabric *f)
{
	if (f->local_node != FAB_NONE && (size_t)f->local_node >= f->n_nodes)
		abort();
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		if (fabric_find(f, n->guid) != (int32_t)i)
			abort();		/* one node per GUID */
		for (unsigned p = 0; p <= n->num_ports; p++) {
			const struct fab_port *pt = &n->ports[p];
			const struct fab_node *o;

			if (pt->peer_node == FAB_NONE)
				continue;
			if (p == 0 || (size_t)pt->peer_node >= f->n_nodes)
				abort();
			o = &f->nodes[pt->peer_node];
			if (pt->peer_port == 0 || pt->peer_port > o->num_ports)
				abort();
			if (o->ports[pt->peer_port].peer_node != (int32_t)i ||
			    o->ports[pt->peer_port].peer_port != p)
				abort();	/* one peer per port, both ways */
		}
	}
}

static struct ev_loop *loop;
static bool done;
static struct fabric prev;
static void clean_sweep(void);

static void on_done(void *arg, const struct discover_result *r)
{
	(void)arg;
	(void)r;
	done = true;
	ev_break(loop, EVBREAK_ALL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct mad_engine_opts o = {
		.max_wire_smps = 8, .max_wire_gmps = 4, .timeout_ms = 1,
		.retries = 0,
	};
	static struct fake fk;
	static struct fake_fabric ff;
	struct script s = { .p = data, .left = size };
	struct discovery *d = NULL;
	struct fabric f;

	if (!loop) {
		loop = ev_loop_new(EVFLAG_AUTO);
		if (!loop || log_open("/dev/null", LOG_LVL_ERR) < 0)
			abort();
		clean_sweep();
	}
	if (fake_init(&fk, loop, &o) < 0)
		abort();
	ff_init(&ff, &fk);
	build_fabric(&ff);
	ff.mutate = rewrite;
	ff.mutate_arg = &s;
	fabric_init(&f);
	done = false;
	if (discover_start(&d, fk.engine, &f, true, on_done, NULL) == 0) {
		/* The fabric as a clean sweep saw it: twins of CA ports are
		 * weighed against it (prefer_previous()). */
		discover_set_previous(d, &prev);
		while (!done && ev_run(loop, 0))
			;
		if (!done)
			abort();
		discover_free(d);
	}
	check_model(&f);
	fake_fini(&fk);
	fabric_free(&f);
	return 0;
}

/* Once: the model of a sweep with no hostile answer. */
static void clean_sweep(void)
{
	static const struct mad_engine_opts o = {
		.max_wire_smps = 8, .max_wire_gmps = 4, .timeout_ms = 1,
		.retries = 0,
	};
	static struct fake fk;
	static struct fake_fabric ff;
	struct discovery *d = NULL;

	if (fake_init(&fk, loop, &o) < 0)
		abort();
	ff_init(&ff, &fk);
	build_fabric(&ff);
	fabric_init(&prev);
	done = false;
	if (discover_start(&d, fk.engine, &prev, true, on_done, NULL) < 0)
		abort();
	while (!done && ev_run(loop, 0))
		;
	discover_free(d);
	fake_fini(&fk);
	if (!done || !prev.n_nodes)
		abort();
}
