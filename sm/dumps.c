/*
 * dumps.c - opensm-subnet.lst and opensm-lfts.dump (see dumps.h).
 *
 * The formats follow OpenSM 3.3's so existing scripts keep working,
 * down to its quirks (the first VenID of a line has 6 digits, the second
 * 8).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sm/dumps.h"
#include "config/fileutil.h"
#include "sm/sm.h"
#include "model/topo_dump.h"

static const char *lst_type(const struct fabric *f, int32_t id)
{
	const struct fab_node *n = fabric_node(f, id);
	bool sm = id == f->local_node;

	switch (n->type) {
	case NODE_TYPE_SWITCH:	return sm ? "SW-SM" : "SW";
	case NODE_TYPE_CA:	return sm ? "CA-SM" : "CA";
	default:		return sm ? "Rt-SM" : "Rt";
	}
}

static unsigned port_lid_of(const struct fab_node *n, unsigned pn)
{
	return n->ports[n->type == NODE_TYPE_SWITCH ? 0 : pn].lid;
}

/*
 * The list is two ends per link, 70,000 lines and 24 MB on 11,664 hosts,
 * written before SUBNET UP (as OpenSM does): fprintf took 0.1 s of the
 * sweep, so the lines are built by hand.  What follows prints exactly
 * what "%0*X" / "%016" PRIx64 / "%s" would.
 */

/* v in hex, at least `w` digits (more when v needs them), no NUL. */
static char *put_hex(char *p, uint64_t v, int w, bool upper)
{
	const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[16];
	int n = 0;

	do {
		tmp[n++] = dig[v & 15];
		v >>= 4;
	} while (v);
	while (w-- > n)
		*p++ = '0';
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* One end: at most ~120 characters plus the description. */
#define LST_END_MAX	(160 + TOPO_DESC_SIZE)

static char *lst_end(char *p, const struct fabric *f, int32_t id, unsigned pn,
		     int vendor_digits)
{
	const struct fab_node *n = fabric_node(f, id);
	char desc[TOPO_DESC_SIZE];

	p = put_str(p, "{ ");
	p = put_str(p, lst_type(f, id));
	p = put_str(p, " Ports:");
	p = put_hex(p, n->num_ports, 2, true);
	p = put_str(p, " SystemGUID:");
	p = put_hex(p, n->sys_guid, 16, false);
	p = put_str(p, " NodeGUID:");
	p = put_hex(p, n->guid, 16, false);
	p = put_str(p, " PortGUID:");
	p = put_hex(p, n->ports[pn].guid, 16, false);
	p = put_str(p, " VenID:");
	p = put_hex(p, n->vendor_id, vendor_digits, true);
	p = put_str(p, " DevID:");
	p = put_hex(p, n->device_id, 4, true);
	p = put_str(p, " Rev:");
	p = put_hex(p, n->revision, 8, true);
	p = put_str(p, " {");
	p = put_str(p, topo_desc_clean(fab_node_label(n), desc));
	p = put_str(p, "} LID:");
	p = put_hex(p, port_lid_of(n, pn), 4, true);
	p = put_str(p, " PN:");
	p = put_hex(p, pn, 2, true);
	return put_str(p, " }");
}

static const char *speed_str(const struct smp_port_info *pi, uint32_t cap_mask)
{
	if (cap_mask & PI_CAP_HAS_EXT_SPEEDS) {
		switch (pi_speed_ext_active(pi)) {
		case 1: return "14";
		case 2: return "25";
		case 4: return "50";
		case 8: return "100";
		default: break;
		}
	}
	switch (pi_speed_active(pi)) {
	case 1: return "2.5";
	case 2: return "5";
	case 4: return "10";
	default: return "UNKNOWN";
	}
}

static const char *width_str(const struct smp_port_info *pi)
{
	switch (pi->link_width_active) {
	case 1: return "1x";
	case 2: return "4x";
	case 4: return "8x";
	case 8: return "12x";
	case 16: return "2x";
	default: return "??";
	}
}

static const char *state_str(unsigned s)
{
	static const char *const names[] = { "NOC", "DWN", "INI", "ARM", "ACT" };
	return s < 5 ? names[s] : "???";
}

/*
 * 0, or why a write to fp failed: stdio keeps only a flag, errno still
 * says what the last failed write(2) met (ENOSPC on a full disk, EDQUOT,
 * EIO), and nothing between it and here sets errno (the dumpers clear it
 * first and make no other library call that fails).
 */
static int stream_error(FILE *fp)
{
	if (!ferror(fp))
		return 0;
	return errno ? -errno : -EIO;
}

int dump_subnet_lst(const struct fabric *f, FILE *fp)
{
	errno = 0;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];

			char line[2 * LST_END_MAX + 64], *e;

			if (p->peer_node == FAB_NONE)
				continue;
			e = lst_end(line, f, (int32_t)i, pn, 6);
			*e++ = ' ';
			e = lst_end(e, f, p->peer_node, p->peer_port, 8);
			e = put_str(e, " PHY=");
			e = put_str(e, width_str(&p->pi));
			e = put_str(e, " LOG=");
			e = put_str(e, state_str(pi_port_state(&p->pi)));
			e = put_str(e, " SPD=");
			e = put_str(e, speed_str(&p->pi,
						 fabric_port_cap_mask(n, pn)));
			*e++ = '\n';
			fwrite(line, 1, (size_t)(e - line), fp);
		}
	}
	return stream_error(fp);
}

struct lid_owner {
	int32_t node;
	uint8_t port;
};

int dump_lfts(const struct fabric *f, const struct routing_result *r, FILE *fp)
{
	struct lid_owner *owner = calloc((size_t)f->max_lid + 1, sizeof(*owner));

	if (!owner)
		return -ENOMEM;
	errno = 0;
	for (unsigned l = 0; l <= f->max_lid; l++)
		owner[l].node = FAB_NONE;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		for (unsigned pn = 0; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (!p->lid || (n->type == NODE_TYPE_SWITCH) != (pn == 0))
				continue;
			for (unsigned l = p->lid;
			     l < p->lid + (1u << p->lmc) && l <= f->max_lid; l++)
				owner[l] = (struct lid_owner){ (int32_t)i,
							       (uint8_t)pn };
		}
	}
	for (size_t i = 0; i < f->n_nodes && i < r->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		const struct lft *t = &r->lft[i];
		unsigned dumped = 0;
		char desc[TOPO_DESC_SIZE];

		if (n->type != NODE_TYPE_SWITCH || !t->port)
			continue;
		fprintf(fp, "Unicast lids [0-%u] of switch Lid %u guid 0x%016"
			PRIx64 " ('%s'):\n", t->top, n->ports[0].lid, n->guid,
			topo_desc_clean(fab_node_label(n), desc));
		for (unsigned l = 1; l <= t->top && l <= f->max_lid; l++) {
			const struct lid_owner *o = &owner[l];

			if (o->node == FAB_NONE)
				continue;
			const struct fab_node *on = fabric_node(f, o->node);
			const char *kind = on->type == NODE_TYPE_SWITCH ? "Switch" :
				on->type == NODE_TYPE_CA ? "Channel Adapter" :
				"Router";
			if (t->port[l] == LFT_NO_PATH)
				fprintf(fp, "0x%04X UNREACHABLE", l);
			else
				fprintf(fp, "0x%04X %03u", l, t->port[l]);
			fprintf(fp, " # %s portguid 0x%016" PRIx64 ": '%s'\n",
				kind, on->ports[o->port].guid,
				topo_desc_clean(fab_node_label(on), desc));
			dumped++;
		}
		fprintf(fp, "%u lids dumped\n", dumped);
	}
	free(owner);
	return stream_error(fp);
}

struct lfts_arg {
	const struct fabric *f;
	const struct routing_result *r;
};

static int write_lst(FILE *fp, const void *arg)
{
	return dump_subnet_lst(arg, fp);
}

static int write_lfts(FILE *fp, const void *arg)
{
	const struct lfts_arg *a = arg;
	return dump_lfts(a->f, a->r, fp);
}

void dumps_write(struct sm *sm, const struct fabric *f,
		 const struct routing_result *r)
{
	char path[600];
	struct lfts_arg la = { f, r };
	int rc;

	if (!sm->cfg.dump_dir[0])
		return;
	rc = mkdir_p(sm->cfg.dump_dir);
	if (rc < 0) {
		log_warn_rc(rc, "ERR 0402: cannot create %s", sm->cfg.dump_dir);
		return;
	}
	snprintf(path, sizeof(path), "%s/opensm-subnet.lst", sm->cfg.dump_dir);
	rc = write_file_if_changed(path, write_lst, f, 0);
	if (rc >= 0 && sm->cfg.dump_lfts) {
		snprintf(path, sizeof(path), "%s/opensm-lfts.dump",
			 sm->cfg.dump_dir);
		rc = write_file_if_changed(path, write_lfts, &la, 0);
	}
	if (rc < 0)
		log_warn_rc(rc, "ERR 0401: cannot write %s", path);
}
