/*
 * file.c - the "file" engine: forwarding tables from OpenSM's LFT dump
 * (lfts_file; what `opensm` writes as opensm-lfts.dump and `ibsmctl`/
 * `dump_lfts.sh` print), read as OpenSM's file engine reads it:
 *
 *   Unicast lids [0x0-0x1f] of switch Lid 3 guid 0x0002c90200000001 (...):
 *   0x0001 001 : (Channel Adapter portguid 0x0002c90200000011: 'h1')
 *   ...
 *
 * A switch header names the switch by node GUID; a switch we do not have
 * is skipped with its entries.  An entry gives a LID and the port; when
 * the port GUID after it names a port whose LIDs changed since the dump,
 * the entry moves to that port's LID (with the same offset in its LMC
 * range).  Port 255 (no route, as `ibroute -a` prints it) gives nothing.  Entries for LIDs the dump does not give keep what minhop
 * gives them, so every LID has a route; the summary counts both.
 *
 * No lfts_file, a file that cannot be read or does not parse (FILE:LINE
 * named), or a multicast dump: the engine fails and the list goes on to
 * the next engine (the daemon's list ends with minhop), as OpenSM falls
 * back to its default routing.  The tables claim no deadlock freedom.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"

struct port_ref {
	uint64_t guid;
	int32_t node;
	uint8_t port;
};

struct lfts_load {
	const struct fabric *f;
	struct routing_result *out;
	struct port_ref *ports;	/* by port GUID, sorted */
	size_t n_ports;
	uint8_t **given;	/* per switch node: entries the file gave */
	unsigned long set, skipped, moved;
};

static int cmp_ref(const void *a, const void *b)
{
	uint64_t x = ((const struct port_ref *)a)->guid;
	uint64_t y = ((const struct port_ref *)b)->guid;

	return x < y ? -1 : x > y;
}

static int index_ports(struct lfts_load *L)
{
	const struct fabric *f = L->f;
	size_t n = 0;

	for (size_t i = 0; i < f->n_nodes; i++)
		n += (size_t)f->nodes[i].num_ports + 1;
	L->ports = malloc((n + 1) * sizeof(*L->ports));
	if (!L->ports)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];

		for (unsigned p = 0; p <= nd->num_ports; p++)
			if (nd->ports[p].valid && nd->ports[p].guid &&
			    nd->ports[p].lid)
				L->ports[L->n_ports++] = (struct port_ref){
					nd->ports[p].guid, (int32_t)i,
					(uint8_t)p };
	}
	qsort(L->ports, L->n_ports, sizeof(*L->ports), cmp_ref);
	return 0;
}

/* The LID the entry means now (OpenSM's remap: same offset in the LMC
 * range of the port with that GUID). */
static unsigned long remap(struct lfts_load *L, unsigned long lid,
			   uint64_t guid)
{
	struct port_ref key = { .guid = guid }, *r;
	const struct fab_port *p;

	if (!guid)
		return lid;
	r = bsearch(&key, L->ports, L->n_ports, sizeof(*L->ports), cmp_ref);
	if (!r)
		return lid;
	p = &fabric_node(L->f, r->node)->ports[r->port];
	if (fabric_lid_in_range(p, (uint16_t)lid))
		return lid;
	L->moved++;
	return p->lid + (lid & ((1u << (p->lmc & 7)) - 1));
}

/* "0x0001 001 : (... portguid 0x...: '...')" for switch node sw. */
static int entry(struct lfts_load *L, int32_t sw, char *p, const char *file,
		 unsigned line, char *err, size_t errlen)
{
	const struct fab_node *nd = fabric_node(L->f, sw);
	unsigned long lid, port;
	uint64_t guid = 0;
	char *q;

	lid = strtoul(p + 2, &q, 16);
	if (q == p + 2 || !isspace((unsigned char)*q) || lid > 0xffff)
		goto bad;
	p = q;
	port = strtoul(p, &q, 10);
	if (q == p || (*q && !isspace((unsigned char)*q)))
		goto bad;
	if (port == LFT_NO_PATH) {	/* ibroute -a prints unrouted LIDs */
		L->skipped++;
		return 0;
	}
	if (port > nd->num_ports) {
		routing_fmt(err, errlen, "%s:%u: port %lu of a switch with %u"
			    " ports", file, line, port, nd->num_ports);
		return -EINVAL;
	}
	q = strstr(q, " portguid 0x");
	if (q)
		guid = strtoull(q + 12, NULL, 16);
	lid = remap(L, lid, guid);
	if (lid == 0 || lid > L->out->lft[sw].top) {
		L->skipped++;
		return 0;
	}
	L->out->lft[sw].port[lid] = (uint8_t)port;
	L->given[sw][lid] = 1;
	L->set++;
	return 0;
bad:
	routing_fmt(err, errlen, "%s:%u: expected \"0xLID PORT ...\"", file,
		    line);
	return -EINVAL;
}

/* One line; *sw the switch being read (-1: none or skipped). */
static int parse_line(struct lfts_load *L, char *p, int32_t *sw,
		      const char *file, unsigned line, char *err,
		      size_t errlen)
{
	while (isspace((unsigned char)*p))
		p++;
	if (*p == '#' || !*p)
		return 0;
	if (!strncmp(p, "Multicast mlids", 15)) {
		routing_fmt(err, errlen, "%s:%u: a multicast dump, not LFTs",
			    file, line);
		return -EINVAL;
	}
	if (!strncmp(p, "Unicast lids", 12)) {
		char *q = strstr(p, " guid 0x"), *e;
		uint64_t guid;
		int32_t id;

		if (!q) {
			routing_fmt(err, errlen, "%s:%u: switch header without"
				    " \"guid 0x\"", file, line);
			return -EINVAL;
		}
		guid = strtoull(q + 8, &e, 16);
		if (e == q + 8 || !isspace((unsigned char)*e)) {
			routing_fmt(err, errlen, "%s:%u: bad switch GUID",
				    file, line);
			return -EINVAL;
		}
		id = fabric_find(L->f, guid);
		*sw = id >= 0 && fabric_node(L->f, id)->type ==
			NODE_TYPE_SWITCH ? id : -1;
		return 0;
	}
	if (*sw >= 0 && !strncmp(p, "0x", 2))
		return entry(L, *sw, p, file, line, err, errlen);
	return 0;
}

static int load(struct lfts_load *L, const char *file, char *err,
		size_t errlen)
{
	FILE *fp = fopen(file, "r");
	char line[1024];
	unsigned n = 0;
	int32_t sw = -1;
	int rc = 0;

	if (!fp) {
		rc = -errno;
		routing_fmt(err, errlen, "%s: %s", file, strerror(-rc));
		return rc;
	}
	while (rc == 0 && fgets(line, sizeof(line), fp))
		rc = parse_line(L, line, &sw, file, ++n, err, errlen);
	fclose(fp);
	return rc;
}

static int file_route(const struct fabric *f, const struct routing_opts *o,
		      struct routing_result *out, char *err, size_t errlen)
{
	struct lfts_load L = { .f = f, .out = out };
	unsigned long kept = 0;
	int rc;

	if (!o || !o->lfts_file) {
		routing_fmt(err, errlen, "lfts_file not set");
		return -ENOENT;
	}
	rc = routing_minhop.route(f, o, out, err, errlen);
	if (rc < 0)
		return rc;
	out->engine = NULL;
	out->cdg_acyclic = false;
	L.given = calloc(f->n_nodes + 1, sizeof(*L.given));
	rc = L.given ? index_ports(&L) : -ENOMEM;
	for (size_t i = 0; rc == 0 && i < f->n_nodes; i++)
		if (out->lft[i].port &&
		    !(L.given[i] = calloc((size_t)out->lft[i].top + 1, 1)))
			rc = -ENOMEM;
	if (rc == 0)
		rc = load(&L, o->lfts_file, err, errlen);
	for (size_t i = 0; rc == 0 && i < f->n_nodes; i++)
		for (size_t l = 1; out->lft[i].port && l <= out->lft[i].top; l++)
			kept += !L.given[i][l] &&
				out->lft[i].port[l] != LFT_NO_PATH;
	if (rc == 0)
		routing_fmt(out->summary, sizeof(out->summary),
			    "%s: %lu entries loaded (%lu moved to the port's "
			    "LID now, %lu without a route or beyond the tables)"
			    ", %lu from minhop",
			    o->lfts_file, L.set, L.moved, L.skipped, kept);
	else if (rc == -ENOMEM)
		routing_fmt(err, errlen, "out of memory");
	if (rc < 0)
		routing_result_free(out);
	for (size_t i = 0; L.given && i < f->n_nodes; i++)
		free(L.given[i]);
	free(L.given);
	free(L.ports);
	return rc;
}

const struct routing_engine routing_file = {
	.name = "file",
	.route = file_route,
};
