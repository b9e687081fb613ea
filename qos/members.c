/*
 * members.c - a policy's port groups bound to one fabric: the ports its
 * port-name, partition, pkey and SELF entries name there, as OpenSM
 * resolves them when it reads the file (osm_qos_parser_y.y):
 *
 *   port-name "DESC/Pn": port n of the node whose NodeDescription is
 *       DESC (the one of lowest node GUID when several share it; a
 *       switch's ports are its port 0); a description no node has names
 *       nothing (reported), as does a port number the node lacks;
 *   partition NAME, pkey RANGES: every end port whose P_Key table holds
 *       the partition's key, full or limited, for a partition of the
 *       partitions configuration (one that is not there is reported);
 *   node-type SELF: the SM's own port.
 *
 * GUID ranges and the other node types are matched as they stand
 * (match.c).  The result is rebuilt whenever the fabric model or the
 * partitions change; bound to that many ports and names, it costs
 * O(ports x named partitions + names).
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/fabric.h"
#include "qos/qos.h"

struct qos_gm {
	uint64_t *guid;			/* sorted, unique (once built) */
	size_t n, cap;
};

struct qos_members {
	size_t n_groups;
	struct qos_gm *g;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

bool qos_members_has(const struct qos_members *m, size_t group, uint64_t guid)
{
	size_t lo = 0, hi;
	const uint64_t *v;

	if (!m || group >= m->n_groups || !m->g[group].n)
		return false;
	v = m->g[group].guid;
	hi = m->g[group].n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->g[group].n && v[lo] == guid;
}

size_t qos_members_count(const struct qos_members *m, size_t group)
{
	return m && group < m->n_groups ? m->g[group].n : 0;
}

static int add(struct qos_members *m, size_t group, uint64_t guid)
{
	struct qos_gm *g = &m->g[group];

	if (!guid)
		return 0;
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		uint64_t *nv = realloc(g->guid, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		g->guid = nv;
		g->cap = cap;
	}
	g->guid[g->n++] = guid;
	return 0;
}

static void warn(struct qos_bind_report *rep, unsigned line, unsigned col,
		 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void warn(struct qos_bind_report *rep, unsigned line, unsigned col,
		 const char *fmt, ...)
{
	struct qos_error *e;
	va_list ap;

	if (!rep)
		return;
	rep->n_warnings++;
	if (rep->n_detail >= QOS_BIND_DETAIL)
		return;
	e = &rep->detail[rep->n_detail++];
	e->line = line;
	e->col = col;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
}

/* The GUID of port `pn` of the first node (lowest node GUID) described
 * `desc`; 0 when no node is, -1 when that node has no such port. */
static int64_t port_by_name(const struct fabric *f, const char *desc,
			    unsigned pn)
{
	const struct fab_node *best = NULL;

	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		if (n->has_desc && !strcmp(n->desc, desc) &&
		    (!best || n->guid < best->guid))
			best = n;
	}
	if (!best)
		return 0;
	if (pn > best->num_ports || !best->ports[pn].valid)
		return -1;
	return (int64_t)best->ports[best->type == NODE_TYPE_SWITCH ? 0 : pn].guid;
}

static int add_name(struct qos_members *m, size_t gi, const struct fabric *f,
		    const char *name, unsigned line, unsigned col,
		    struct qos_bind_report *rep)
{
	const char *slash = strrchr(name, '/');
	char desc[QOS_NAME_MAX + 1];
	unsigned long pn;
	char *end;
	int64_t guid;

	if (!slash || (slash[1] != 'P' && slash[1] != 'p') ||
	    (size_t)(slash - name) > QOS_NAME_MAX) {
		warn(rep, line, col, "port-name '%s': expected "
		     "NodeDescription/Pnum", name);
		return 0;
	}
	pn = strtoul(slash + 2, &end, 0);
	if (!pn || *end || pn > 255) {
		warn(rep, line, col, "port-name '%s': no such port number",
		     name);
		return 0;
	}
	memcpy(desc, name, (size_t)(slash - name));
	desc[slash - name] = '\0';
	guid = port_by_name(f, desc, (unsigned)pn);
	if (guid == 0)
		warn(rep, line, col, "port-name '%s': no node has that "
		     "description", name);
	else if (guid < 0)
		warn(rep, line, col, "port-name '%s': the node has no such "
		     "port", name);
	else
		return add(m, gi, (uint64_t)guid);
	return 0;
}

/* Every end port whose table holds `base` (15 bits). */
static int add_pkey(struct qos_members *m, size_t gi, const struct fabric *f,
		    uint16_t base)
{
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		for (unsigned pn = 0; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];
			struct fab_pkey_tab t;
			int rc;

			if (!fabric_is_endport(n, pn))
				continue;
			fabric_pkey_tab(p, &t);
			for (unsigned k = 0; k < t.n; k++)
				if ((fabric_pkey_at(&t, k) & 0x7fff) == base) {
					if ((rc = add(m, gi, p->guid)) < 0)
						return rc;
					break;
				}
		}
	}
	return 0;
}

static const struct qos_part_ref *part_by_name(const struct qos_part_ref *v,
					       size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].name && !strcmp(v[i].name, name))
			return &v[i];
	return NULL;
}

static bool part_has_pkey(const struct qos_part_ref *v, size_t n,
			  uint16_t base)
{
	for (size_t i = 0; i < n; i++)
		if ((v[i].pkey & 0x7fff) == base)
			return true;
	return false;
}

/* The group's pkey entries: the partitions of the configuration whose
 * key is in the ranges (a range is walked only over the partitions). */
static int add_pkeys(struct qos_members *m, size_t gi, const struct fabric *f,
		     const struct qos_group *g, const struct qos_bind_in *in,
		     struct qos_bind_report *rep)
{
	int rc;

	for (size_t i = 0; i < in->n_parts; i++) {
		uint16_t base = in->parts[i].pkey & 0x7fff;

		if (qos_pkey_in(&g->pkeys, base) &&
		    (rc = add_pkey(m, gi, f, base)) < 0)
			return rc;
	}
	for (size_t r = 0; r < g->pkeys.n; r++) {
		uint16_t lo = g->pkeys.v[r].lo & 0x7fff;

		/* one word for the first key of a range that names none */
		if (g->pkeys.v[r].lo == g->pkeys.v[r].hi &&
		    !part_has_pkey(in->parts, in->n_parts, lo)) {
			warn(rep, g->line, g->col, "port-group pkey 0x%04x: "
			     "no partition has that P_Key", lo);
		}
	}
	return 0;
}

static int bind_group(struct qos_members *m, size_t gi, const struct fabric *f,
		      const struct qos_group *g, const struct qos_bind_in *in,
		      struct qos_bind_report *rep)
{
	int rc = 0;

	for (size_t i = 0; i < g->port_names.n && rc >= 0; i++)
		rc = add_name(m, gi, f, g->port_names.v[i],
			      g->port_names.line[i], g->port_names.col[i], rep);
	for (size_t i = 0; i < g->partitions.n && rc >= 0; i++) {
		const struct qos_part_ref *pr =
			part_by_name(in->parts, in->n_parts,
				     g->partitions.v[i]);

		if (!pr)
			warn(rep, g->partitions.line[i], g->partitions.col[i],
			     "partition '%s': not in the partitions "
			     "configuration", g->partitions.v[i]);
		else
			rc = add_pkey(m, gi, f, pr->pkey & 0x7fff);
	}
	if (rc >= 0 && g->pkeys.n)
		rc = add_pkeys(m, gi, f, g, in, rep);
	if (rc >= 0 && (g->node_types & QOS_NT_SELF))
		rc = add(m, gi, in->sm_guid);
	if (rc >= 0 && m->g[gi].n) {
		struct qos_gm *v = &m->g[gi];
		size_t k = 0;

		qsort(v->guid, v->n, sizeof(*v->guid), cmp_u64);
		for (size_t i = 0; i < v->n; i++)
			if (!k || v->guid[k - 1] != v->guid[i])
				v->guid[k++] = v->guid[i];
		v->n = k;
	}
	return rc;
}

int qos_members_build(const struct qos_policy *p, const struct fabric *f,
		      const struct qos_bind_in *in, struct qos_members **out,
		      struct qos_bind_report *rep)
{
	struct qos_members *m = calloc(1, sizeof(*m));
	int rc = 0;

	*out = NULL;
	if (rep)
		memset(rep, 0, sizeof(*rep));
	if (!m)
		return -ENOMEM;
	m->n_groups = p->n_groups;
	if (p->n_groups && !(m->g = calloc(p->n_groups, sizeof(*m->g)))) {
		free(m);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->n_groups && rc >= 0; i++)
		rc = bind_group(m, i, f, &p->groups[i], in, rep);
	if (rc < 0) {
		qos_members_free(m);
		return rc;
	}
	*out = m;
	return 0;
}

void qos_members_free(struct qos_members *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_groups; i++)
		free(m->g[i].guid);
	free(m->g);
	free(m);
}
