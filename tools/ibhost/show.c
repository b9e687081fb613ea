/*
 * show.c - `ibhost show`: the inventory as aligned tables or as JSON.
 *
 * Three tables: RDMA devices, their ports, IPoIB interfaces.  The JSON
 * form has the same facts with numbers as numbers and GUIDs as
 * "0x%016x" strings; a field sysfs did not have is null.
 */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tools/ibhost/inventory.h"
#include "tools/ibhost/util.h"

#define MAX_COLS	12

struct table {
	size_t	  ncols;
	char	**cells;	/* row-major, ncols per row */
	size_t	  nrows;
};

static void row_add(struct table *t, const char *const *cells)
{
	t->cells = xrealloc(t->cells,
			    (t->nrows + 1) * t->ncols * sizeof(char *));
	for (size_t i = 0; i < t->ncols; i++)
		t->cells[t->nrows * t->ncols + i] = xstrdup(cells[i]);
	t->nrows++;
}

static void table_reset(struct table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	t->cells = NULL;
	t->nrows = 0;
}

/* Columns two spaces apart; the last one is not padded. */
static void table_print(FILE *fp, struct table *t)
{
	size_t w[MAX_COLS] = { 0 };

	for (size_t r = 0; r < t->nrows; r++)
		for (size_t c = 0; c < t->ncols; c++) {
			size_t n = strlen(t->cells[r * t->ncols + c]);

			if (n > w[c])
				w[c] = n;
		}
	for (size_t r = 0; r < t->nrows; r++) {
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = t->cells[r * t->ncols + c];

			if (c + 1 == t->ncols)
				fprintf(fp, "%s\n", s);
			else
				fprintf(fp, "%-*s  ", (int)w[c], s);
		}
	}
	table_reset(t);
}

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

static void fmt_guid(char *buf, size_t len, uint64_t guid)
{
	if (guid)
		snprintf(buf, len, "0x%016" PRIx64, guid);
	else
		snprintf(buf, len, "-");
}

/* IPoIB interfaces on a port, and an Ethernet port's own netdev. */
static void port_netdevs(struct sbuf *b, const struct inventory *inv,
			 size_t d, size_t p, const char *sep)
{
	const struct inv_port *pt = &inv->devs[d].ports[p];

	if (pt->netdev[0])
		sb_add(b, pt->netdev);
	for (size_t i = 0; i < inv->nnets; i++)
		if (inv->nets[i].dev == (int)d && inv->nets[i].port == (int)p)
			sb_printf(b, "%s%s", b->len ? sep : "",
				  inv->nets[i].name);
}

static void devices_table(FILE *fp, const struct inventory *inv)
{
	static const char *const hdr[] = { "DEVICE", "TYPE", "NODE GUID",
					   "SYS IMAGE GUID", "FIRMWARE",
					   "PORTS" };
	struct table t = { .ncols = ARRAY_SIZE(hdr) };
	char g1[24], g2[24], nports[16];

	row_add(&t, hdr);
	for (size_t d = 0; d < inv->ndevs; d++) {
		const struct inv_dev *dev = &inv->devs[d];
		const char *row[ARRAY_SIZE(hdr)];

		fmt_guid(g1, sizeof(g1), dev->node_guid);
		fmt_guid(g2, sizeof(g2), dev->sys_image_guid);
		snprintf(nports, sizeof(nports), "%zu", dev->nports);
		row[0] = dev->name;
		row[1] = or_dash(dev->node_type);
		row[2] = g1;
		row[3] = g2;
		row[4] = or_dash(dev->fw_ver);
		row[5] = nports;
		row_add(&t, row);
	}
	table_print(fp, &t);
}

static void ports_table(FILE *fp, const struct inventory *inv)
{
	static const char *const hdr[] = { "DEVICE", "PORT", "LINK LAYER",
					   "STATE", "PHYS STATE", "LID",
					   "SM LID", "PORT GUID", "RATE",
					   "NETDEV" };
	struct table t = { .ncols = ARRAY_SIZE(hdr) };

	row_add(&t, hdr);
	for (size_t d = 0; d < inv->ndevs; d++) {
		for (size_t p = 0; p < inv->devs[d].nports; p++) {
			const struct inv_port *pt = &inv->devs[d].ports[p];
			char num[12], lid[16], smlid[16], guid[24];
			struct sbuf nets = { 0 };
			const char *row[ARRAY_SIZE(hdr)];

			snprintf(num, sizeof(num), "%u", pt->num);
			snprintf(lid, sizeof(lid), "0x%04x", pt->lid);
			snprintf(smlid, sizeof(smlid), "0x%04x", pt->sm_lid);
			fmt_guid(guid, sizeof(guid), pt->guid);
			port_netdevs(&nets, inv, d, p, ",");
			row[0] = inv->devs[d].name;
			row[1] = num;
			row[2] = or_dash(pt->link_layer);
			row[3] = or_dash(pt->state);
			row[4] = or_dash(pt->phys_state);
			row[5] = lid;
			row[6] = smlid;
			row[7] = guid;
			row[8] = or_dash(pt->rate);
			row[9] = or_dash(sb_str(&nets));
			row_add(&t, row);
			sb_free(&nets);
		}
	}
	table_print(fp, &t);
}

static void ipoib_table(FILE *fp, const struct inventory *inv)
{
	static const char *const hdr[] = { "IPOIB", "DEVICE", "PORT", "MODE",
					   "MTU", "PKEY", "PARENT", "STATE",
					   "PORT GUID" };
	struct table t = { .ncols = ARRAY_SIZE(hdr) };

	row_add(&t, hdr);
	for (size_t i = 0; i < inv->nnets; i++) {
		const struct inv_netdev *nd = &inv->nets[i];
		char port[12], mtu[12], pkey[16], guid[24];
		const char *row[ARRAY_SIZE(hdr)];

		if (nd->type != ARPHRD_INFINIBAND_TYPE)
			continue;
		snprintf(port, sizeof(port), "%u", nd->dev >= 0 ?
			 inv->devs[nd->dev].ports[nd->port].num : 0);
		snprintf(mtu, sizeof(mtu), "%u", nd->mtu);
		if (nd->pkey >= 0)
			snprintf(pkey, sizeof(pkey), "0x%04x", nd->pkey);
		else
			snprintf(pkey, sizeof(pkey), "-");
		fmt_guid(guid, sizeof(guid), nd->guid);
		row[0] = nd->name;
		row[1] = nd->dev >= 0 ? inv->devs[nd->dev].name : "-";
		row[2] = nd->dev >= 0 ? port : "-";
		row[3] = or_dash(nd->mode);
		row[4] = mtu;
		row[5] = pkey;
		row[6] = or_dash(nd->parent);
		row[7] = or_dash(nd->operstate);
		row[8] = guid;
		row_add(&t, row);
	}
	if (t.nrows > 1)
		table_print(fp, &t);
	else {
		fputs("no IPoIB interfaces\n", fp);
		table_reset(&t);
	}
}

void show_table(FILE *fp, const struct inventory *inv)
{
	if (inv->ndevs == 0) {
		fputs("no RDMA devices\n", fp);
	} else {
		devices_table(fp, inv);
		fputc('\n', fp);
		ports_table(fp, inv);
	}
	fputc('\n', fp);
	ipoib_table(fp, inv);
}

/* ---------------------------------------------------------------------
 * JSON
 */

static void json_str(FILE *fp, const char *s)
{
	if (!s || !*s) {
		fputs("null", fp);
		return;
	}
	fputc('"', fp);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", fp);
		else if (c == '\t')
			fputs("\\t", fp);
		else if (c < 0x20 || c == 0x7f)
			fprintf(fp, "\\u%04x", c);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

static void json_guid(FILE *fp, uint64_t guid)
{
	if (guid)
		fprintf(fp, "\"0x%016" PRIx64 "\"", guid);
	else
		fputs("null", fp);
}

static void json_port(FILE *fp, const struct inventory *inv, size_t d,
		      size_t p)
{
	const struct inv_port *pt = &inv->devs[d].ports[p];
	bool first = true;

	fprintf(fp, "        {\n          \"port\": %u,\n", pt->num);
	fputs("          \"link_layer\": ", fp);
	json_str(fp, pt->link_layer);
	fputs(",\n          \"state\": ", fp);
	json_str(fp, pt->state);
	fputs(",\n          \"phys_state\": ", fp);
	json_str(fp, pt->phys_state);
	fprintf(fp, ",\n          \"lid\": %u,\n          \"sm_lid\": %u,\n"
		"          \"lmc\": %u,\n          \"port_guid\": ",
		pt->lid, pt->sm_lid, pt->lmc);
	json_guid(fp, pt->guid);
	fputs(",\n          \"rate\": ", fp);
	json_str(fp, pt->rate);
	fputs(",\n          \"active_mtu\": ", fp);
	if (pt->active_mtu)
		fprintf(fp, "%u", pt->active_mtu);
	else
		fputs("null", fp);
	fputs(",\n          \"netdevs\": [", fp);
	if (pt->netdev[0]) {
		json_str(fp, pt->netdev);
		first = false;
	}
	for (size_t i = 0; i < inv->nnets; i++)
		if (inv->nets[i].dev == (int)d && inv->nets[i].port == (int)p) {
			fputs(first ? "" : ", ", fp);
			json_str(fp, inv->nets[i].name);
			first = false;
		}
	fputs("]\n        }", fp);
}

void show_json(FILE *fp, const struct inventory *inv)
{
	bool first = true;

	fputs("{\n  \"devices\": [", fp);
	for (size_t d = 0; d < inv->ndevs; d++) {
		const struct inv_dev *dev = &inv->devs[d];

		fputs(d ? ",\n    {\n" : "\n    {\n", fp);
		fputs("      \"name\": ", fp);
		json_str(fp, dev->name);
		fputs(",\n      \"node_type\": ", fp);
		json_str(fp, dev->node_type);
		fputs(",\n      \"node_guid\": ", fp);
		json_guid(fp, dev->node_guid);
		fputs(",\n      \"sys_image_guid\": ", fp);
		json_guid(fp, dev->sys_image_guid);
		fputs(",\n      \"fw_ver\": ", fp);
		json_str(fp, dev->fw_ver);
		fputs(",\n      \"hca_type\": ", fp);
		json_str(fp, dev->hca_type);
		fputs(",\n      \"ports\": [", fp);
		for (size_t p = 0; p < dev->nports; p++) {
			fputs(p ? ",\n" : "\n", fp);
			json_port(fp, inv, d, p);
		}
		fputs(dev->nports ? "\n      ]\n    }" : "]\n    }", fp);
	}
	fputs(inv->ndevs ? "\n  ],\n  \"ipoib\": [" : "],\n  \"ipoib\": [", fp);
	for (size_t i = 0; i < inv->nnets; i++) {
		const struct inv_netdev *nd = &inv->nets[i];

		if (nd->type != ARPHRD_INFINIBAND_TYPE)
			continue;
		fputs(first ? "\n    {\n" : ",\n    {\n", fp);
		first = false;
		fputs("      \"name\": ", fp);
		json_str(fp, nd->name);
		fputs(",\n      \"device\": ", fp);
		json_str(fp, nd->dev >= 0 ? inv->devs[nd->dev].name : NULL);
		fputs(",\n      \"port\": ", fp);
		if (nd->dev >= 0)
			fprintf(fp, "%u", inv->devs[nd->dev].ports[nd->port].num);
		else
			fputs("null", fp);
		fputs(",\n      \"port_guid\": ", fp);
		json_guid(fp, nd->guid);
		fputs(",\n      \"mode\": ", fp);
		json_str(fp, nd->mode);
		fprintf(fp, ",\n      \"mtu\": %u,\n      \"pkey\": ", nd->mtu);
		if (nd->pkey >= 0)
			fprintf(fp, "\"0x%04x\"", nd->pkey);
		else
			fputs("null", fp);
		fputs(",\n      \"parent\": ", fp);
		json_str(fp, nd->parent);
		fputs(",\n      \"operstate\": ", fp);
		json_str(fp, nd->operstate);
		fputs(",\n      \"address\": ", fp);
		json_str(fp, nd->address);
		fputs("\n    }", fp);
	}
	fputs(first ? "]\n}\n" : "\n  ]\n}\n", fp);
}
