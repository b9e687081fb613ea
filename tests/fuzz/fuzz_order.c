/*
 * fuzz_order.c - libFuzzer target: the readers of guid_routing_order_file,
 * port_search_ordering_file and ids_guid_file (routing/order.c), and the
 * port ranks resolved on a small fabric (switches 0x1 and 0x2 of 8 and 36 ports, a
 * CA 0x3).
 *
 * Checked besides the sanitizers: both parsers return 0 (-ENOMEM only
 * when out of memory); every warning names the file and a line ("o:N:");
 * GUIDs are non-zero and distinct, their lines ascending (for the ids,
 * each GUID's line is the last that named it, so not ordered); a port line
 * lists 1-254 distinct ports, each in 1..254; resolving orders at most
 * the two switches, and each rank table is a permutation of 1..num_ports
 * with port 0 at 0, the listed ports first in line order.
 *
 * The same input as hop_weights_file and port_prof_ignore_file
 * (port_vals_parse(), port_vals_resolve()): ports 1..254 and weights
 * 1..255 (1 without weights); at most the two switches get a table,
 * whose entries are the default or a value some line set.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/fabric.h"
#include "routing/order.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void warn(void *ctx, const char *msg)
{
	(void)ctx;
	if (strncmp(msg, "o:", 2) || msg[2] < '1' || msg[2] > '9')
		abort();
}

static void check_guids(const uint8_t *data, size_t size)
{
	struct order_guids o;

	if (order_guids_parse(&o, (const char *)data, size, "o", warn, NULL))
		abort();
	for (size_t i = 0; i < o.n; i++) {
		if (!o.guid[i] || (i && o.line[i] <= o.line[i - 1]))
			abort();
		for (size_t j = 0; j < i && o.n < 64; j++)
			if (o.guid[j] == o.guid[i])
				abort();
	}
	order_guids_free(&o);
}

static void check_ids(const uint8_t *data, size_t size)
{
	struct node_ids o;

	if (node_ids_parse(&o, (const char *)data, size, "o", warn, NULL))
		abort();
	for (size_t i = 0; i < o.n; i++) {
		if (!o.guid[i] || !o.line[i])
			abort();
		for (size_t j = 0; j < i && o.n < 64; j++)
			if (o.guid[j] == o.guid[i] || o.line[j] == o.line[i])
				abort();
	}
	node_ids_free(&o);
}

static void check_rank(const struct fabric *f, uint8_t **rank, size_t id,
		       const struct port_order *po)
{
	const struct fab_node *n = &f->nodes[id];
	uint8_t seen[256] = { 0 };
	const struct port_order_line *l = NULL;

	if (!rank[id])
		return;
	if (n->type != NODE_TYPE_SWITCH || rank[id][0])
		abort();
	for (unsigned p = 1; p <= n->num_ports; p++) {
		if (!rank[id][p] || rank[id][p] > n->num_ports || seen[rank[id][p]])
			abort();
		seen[rank[id][p]] = 1;
	}
	for (size_t i = 0; i < po->n && !l; i++)
		if (po->e[i].guid == n->guid)
			l = &po->e[i];
	if (!l)
		abort();
	/* the first line naming the switch may have been skipped (a port
	 * above its count): then a later one counts; its ports come first */
	for (size_t i = 0; i < po->n; i++) {
		const struct port_order_line *m = &po->e[i];
		bool fits = m->guid == n->guid;

		for (unsigned k = 0; fits && k < m->n; k++)
			fits = m->port[k] <= n->num_ports;
		if (!fits)
			continue;
		for (unsigned k = 0; k < m->n; k++)
			if (rank[id][m->port[k]] != k + 1)
				abort();
		break;
	}
}

static void check_vals(const struct fabric *f, const uint8_t *data,
		       size_t size, bool weights)
{
	struct port_vals pv;
	uint8_t **v;
	long n;

	if (port_vals_parse(&pv, (const char *)data, size, "o", weights, warn,
			    NULL))
		abort();
	for (size_t i = 0; i < pv.n; i++)
		if (!pv.e[i].guid || pv.e[i].port < 1 ||
		    pv.e[i].port > ORDER_MAX_PORT || !pv.e[i].val ||
		    (!weights && pv.e[i].val != 1) ||
		    (i && pv.e[i].line <= pv.e[i - 1].line))
			abort();
	n = port_vals_resolve(f, &pv, "o", weights ? 1 : 0, &v, warn, NULL);
	if (n < 0 || n > 2 || (n == 0) != (v == NULL))
		abort();
	for (size_t id = 0; v && id < f->n_nodes; id++) {
		if (!v[id])
			continue;
		if (f->nodes[id].type != NODE_TYPE_SWITCH)
			abort();
		for (unsigned p = 0; p <= f->nodes[id].num_ports; p++) {
			bool set = false;

			for (size_t i = 0; i < pv.n && !set; i++)
				set = pv.e[i].guid == f->nodes[id].guid &&
				      pv.e[i].port == p && pv.e[i].val == v[id][p];
			if (v[id][p] != (weights ? 1 : 0) && !set)
				abort();
		}
	}
	free(v);
	port_vals_free(&pv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fabric f;
	static bool built;
	struct port_order po;
	uint8_t **rank;
	long n;

	if (!built) {
		fabric_init(&f);
		if (fabric_add_node(&f, 0x1, NODE_TYPE_SWITCH, 8) < 0 ||
		    fabric_add_node(&f, 0x2, NODE_TYPE_SWITCH, 36) < 0 ||
		    fabric_add_node(&f, 0x3, NODE_TYPE_CA, 2) < 0)
			abort();
		built = true;
	}
	check_guids(data, size);
	check_vals(&f, data, size, true);
	check_vals(&f, data, size, false);
	check_ids(data, size);
	if (port_order_parse(&po, (const char *)data, size, "o", warn, NULL))
		abort();
	for (size_t i = 0; i < po.n; i++) {
		uint8_t seen[256] = { 0 };

		if (!po.e[i].guid || po.e[i].n < 1 || po.e[i].n > ORDER_MAX_PORT)
			abort();
		for (unsigned k = 0; k < po.e[i].n; k++) {
			uint8_t p = po.e[i].port[k];

			if (p < 1 || p > ORDER_MAX_PORT || seen[p])
				abort();
			seen[p] = 1;
		}
	}
	n = port_order_resolve(&f, &po, "o", &rank, warn, NULL);
	if (n < 0 || n > 2 || (n == 0) != (rank == NULL))
		abort();
	for (size_t id = 0; rank && id < f.n_nodes; id++)
		check_rank(&f, rank, id, &po);
	free(rank);
	port_order_free(&po);
	return 0;
}
