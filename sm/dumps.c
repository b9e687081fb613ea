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
#include "sm/topo_dump.h"

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

static void lst_end(FILE *fp, const struct fabric *f, int32_t id, unsigned pn,
		    int vendor_digits)
{
	const struct fab_node *n = fabric_node(f, id);
	char desc[TOPO_DESC_SIZE];

	fprintf(fp, "{ %s Ports:%02X SystemGUID:%016" PRIx64 " NodeGUID:%016"
		PRIx64 " PortGUID:%016" PRIx64 " VenID:%0*X DevID:%04X"
		" Rev:%08X {%s} LID:%04X PN:%02X }", lst_type(f, id),
		n->num_ports, n->sys_guid, n->guid, n->ports[pn].guid,
		vendor_digits, n->vendor_id, n->device_id, n->revision,
		topo_desc_clean(n->desc, desc), port_lid_of(n, pn), pn);
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

int dump_subnet_lst(const struct fabric *f, FILE *fp)
{
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (p->peer_node == FAB_NONE)
				continue;
			lst_end(fp, f, (int32_t)i, pn, 6);
			fputc(' ', fp);
			lst_end(fp, f, p->peer_node, p->peer_port, 8);
			fprintf(fp, " PHY=%s LOG=%s SPD=%s\n", width_str(&p->pi),
				state_str(pi_port_state(&p->pi)),
				speed_str(&p->pi, fabric_port_cap_mask(n, pn)));
		}
	}
	return ferror(fp) ? -EIO : 0;
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
			topo_desc_clean(n->desc, desc));
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
				topo_desc_clean(on->desc, desc));
			dumped++;
		}
		fprintf(fp, "%u lids dumped\n", dumped);
	}
	free(owner);
	return ferror(fp) ? -EIO : 0;
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
		log_warnx("ERR 0402: cannot create %s: %s", sm->cfg.dump_dir,
			  strerror(-rc));
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
		log_warnx("ERR 0401: cannot write %s: %s", path, strerror(-rc));
}
