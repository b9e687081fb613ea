/*
 * fuzz_partitions.c - libFuzzer target: the partitions.conf parser and the
 * resolution of partitions/.
 *
 * The input is parsed as a partitions.conf (its first byte, when odd,
 * turns allow_both_pkeys on) and, when it parses, resolved against a
 * small hand-built fabric: two switches, three CAs (one with a tiny
 * PartitionCap), a switch that does not enforce.  Checked besides the
 * sanitizers: an error-free parse returns 0 and a parse with errors
 * -EINVAL; every error and warning has a line within the input and a
 * column >= 1, and its message says what was expected; every table fits
 * its port's capacity, holds no 0 entry, and the SM's port has the full
 * default key.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "partitions/partitions.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void build(struct fabric *f)
{
	int32_t s1, s2, c1, c2, c3;

	fabric_init(f);
	s1 = fabric_add_node(f, 0x200000, NODE_TYPE_SWITCH, 8);
	s2 = fabric_add_node(f, 0x200001, NODE_TYPE_SWITCH, 8);
	c1 = fabric_add_node(f, 0x100000, NODE_TYPE_CA, 1);
	c2 = fabric_add_node(f, 0x100002, NODE_TYPE_CA, 2);
	c3 = fabric_add_node(f, 0x100004, NODE_TYPE_ROUTER, 1);
	if (s1 < 0 || s2 < 0 || c1 < 0 || c2 < 0 || c3 < 0)
		abort();
	fabric_link(f, s1, 1, c1, 1);
	fabric_link(f, s1, 2, c2, 1);
	fabric_link(f, s2, 1, c2, 2);
	fabric_link(f, s2, 2, c3, 1);
	fabric_link(f, s1, 8, s2, 8);
	for (size_t i = 0; i < f->n_nodes; i++) {
		struct fab_node *n = &f->nodes[i];

		n->partition_cap = 32;
		for (unsigned p = 0; p <= n->num_ports; p++)
			n->ports[p].guid = n->type == NODE_TYPE_SWITCH ?
					   n->guid : n->guid + p;
	}
	f->nodes[c3].partition_cap = 2;
	f->nodes[s1].has_switch_info = true;
	f->nodes[s1].si.partition_enf_cap = htobe16(4);
	f->nodes[s2].has_switch_info = true;	/* enforces nothing */
	f->local_node = c1;
	f->local_port = 1;
	f->local_port_guid = 0x100001;
}

static unsigned lines_of(const uint8_t *data, size_t size)
{
	unsigned n = 1;

	for (size_t i = 0; i < size; i++)
		n += data[i] == '\n';
	return n;
}

static void check_diag(const struct part_error *e, size_t n, unsigned lines)
{
	char buf[512];

	for (size_t i = 0; i < n; i++) {
		if (e[i].line < 1 || e[i].line > lines || e[i].col < 1 ||
		    !strstr(e[i].msg, "expected"))
			abort();
		if (part_error_format(NULL, "f.conf", &e[i], buf, sizeof(buf)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct part_options opt = { .allow_both_pkeys = size && (data[0] & 1) };
	struct part_config c;
	struct part_diag d;
	struct part_resolve_report r;
	struct fabric f;
	unsigned lines = lines_of(data, size);
	int rc;

	rc = part_parse("f.conf", (const char *)data, size, &opt, &c, &d);
	if (rc != (d.n_errors ? -EINVAL : 0))
		abort();
	check_diag(d.errors, d.n_errors, lines);
	check_diag(d.warnings, d.n_warnings, lines);
	part_diag_free(&d);
	if (rc)
		return 0;
	build(&f);
	/* The P_Key tables the end ports hold now come from the network: the
	 * input's bytes, read as tables (keep_pkey_indexes lays the new ones
	 * out from them). */
	for (size_t i = 0, at = 0; i < f.n_nodes; i++) {
		struct fab_node *n = &f.nodes[i];
		unsigned last = n->type == NODE_TYPE_SWITCH ? 0 : n->num_ports;

		for (unsigned p = n->type == NODE_TYPE_SWITCH ? 0 : 1; p <= last;
		     p++) {
			struct fab_port *pt = &n->ports[p];

			if (fabric_pkey_alloc(n, p, 1))
				abort();
			for (unsigned k = 0; k < PKEY_BLOCK_SIZE; k++, at += 2)
				pt->pkeys[k] = size ? (__be16)(data[at % size] |
					data[(at + 1) % size] << 8) : 0;
			pt->pkey_read = 1;
		}
	}
	if (part_resolve(&c, &f, f.local_port_guid, &r))
		abort();
	for (size_t i = 0; i < f.n_nodes; i++) {
		const struct fab_node *n = &f.nodes[i];

		for (unsigned p = 0; p <= n->num_ports; p++) {
			const struct fab_port *pt = &n->ports[p];
			unsigned cap = n->type == NODE_TYPE_SWITCH && p ?
				       be16toh(n->si.partition_enf_cap) :
				       n->partition_cap;

			if (!pt->want_pkeys)
				continue;
			if (!pt->n_want_pkeys || pt->n_want_pkeys > cap)
				abort();
			/* index 0 and the last index used hold keys; holes
			 * (0) only between them; no key twice */
			if (!(pt->want_pkeys[0] & 0x7fff) ||
			    !(pt->want_pkeys[pt->n_want_pkeys - 1] & 0x7fff))
				abort();
			for (unsigned k = 0; k < pt->n_want_pkeys; k++)
				for (unsigned j = 0; j < k; j++)
					if (pt->want_pkeys[k] &&
					    pt->want_pkeys[k] == pt->want_pkeys[j])
						abort();
		}
	}
	const struct fab_port *sm = &f.nodes[2].ports[1];
	if (!sm->want_pkeys)
		abort();
	bool full_default = false;
	for (unsigned k = 0; k < sm->n_want_pkeys; k++)
		full_default |= sm->want_pkeys[k] == 0xffff;
	/* the default key ranks first or second: it always fits 32 */
	if (!full_default)
		abort();
	fabric_free(&f);
	part_config_free(&c);
	return 0;
}
