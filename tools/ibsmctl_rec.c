/*
 * ibsmctl_rec.c - one table row per SA record (IB spec 15.2.5), for
 * `ibsmctl query KIND`.
 *
 * Records arrive as packed big-endian bytes at an 8-byte-aligned stride;
 * each formatter copies its record into the wire struct of mad/sa_wire.h
 * (no unaligned access) and emits the main fields, decoded (port states,
 * widths, speeds, MTUs, rates by name) where a number alone says little.
 */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa_wire.h"
#include "tools/ibsmctl.h"

static const char *pick(const char *const *names, size_t n, unsigned i)
{
	return i < n && names[i] ? names[i] : "?";
}
#define PICK(tbl, i)	pick(tbl, sizeof(tbl) / sizeof(tbl[0]), i)

static const char *const node_types[] = { NULL, "CA", "Switch", "Router" };
static const char *const port_states[] = {
	"NoChange", "Down", "Init", "Armed", "Active",
};
static const char *const phys_states[] = {
	"NoChange", "Sleep", "Polling", "Disabled", "Training", "LinkUp",
	"ErrorRecovery", "PhyTest",
};
static const char *const sm_states[] = {
	"NOTACTIVE", "DISCOVERING", "STANDBY", "MASTER",
};
/* MTU codes (14.2.5.6, 15.2.5.16) */
static const char *const mtus[] = {
	NULL, "256", "512", "1024", "2048", "4096",
};
/* Rate codes of PathRecord (15.2.5.16, table 205), in Gb/s */
static const char *const rates[] = {
	NULL, NULL, "2.5", "10", "30", "5", "20", "40", "60", "80", "120",
	"14", "56", "112", "168", "25", "100", "200", "300", "28", "50",
	"400", "600", "800", "1200",
};

const char *sm_state_name(unsigned state)
{
	return PICK(sm_states, state);
}

const char *mad_status_name(uint16_t status)
{
	static const char *const sa[] = {
		NULL, "ERR_NO_RESOURCES", "ERR_REQ_INVALID", "ERR_NO_RECORDS",
		"ERR_TOO_MANY_RECORDS", "ERR_REQ_INVALID_GID",
		"ERR_REQ_INSUFFICIENT_COMPONENTS", "ERR_REQ_DENIED",
	};

	if (status & 0xff00)
		return PICK(sa, status >> 8);
	if (status & MAD_STATUS_BUSY)
		return "BUSY";
	if (status & MAD_STATUS_REDIRECT)
		return "REDIRECT";
	switch (status & MAD_STATUS_MASK) {
	case MAD_STATUS_BAD_VERSION:	return "BAD_VERSION";
	case MAD_STATUS_METHOD_UNSUPP:	return "METHOD_UNSUPPORTED";
	case MAD_STATUS_ATTR_UNSUPP:	return "METHOD_ATTR_UNSUPPORTED";
	case MAD_STATUS_INVALID_FIELD:	return "INVALID_FIELD";
	case 0:				return "SUCCESS";
	default:			return "?";
	}
}

static const char *width_name(unsigned w)
{
	switch (w) {
	case 1:  return "1X";
	case 2:  return "4X";
	case 4:  return "8X";
	case 8:  return "12X";
	case 16: return "2X";
	default: return "?";
	}
}

const char *pi_speed_name(const struct smp_port_info *pi, uint32_t cap_mask)
{
	if (cap_mask & PI_CAP_HAS_EXT_SPEEDS) {
		switch (pi_speed_ext_active(pi)) {
		case 1: return "FDR";
		case 2: return "EDR";
		case 4: return "HDR";
		case 8: return "NDR";
		default: break;
		}
	}
	switch (pi_speed_active(pi)) {
	case 1: return "SDR";
	case 2: return "DDR";
	case 4: return "QDR";
	default: return "?";
	}
}

/*
 * A switch's external ports have no CapabilityMask of their own (IB spec
 * 14.2.5.6: switch port 0's speaks for them, IsExtendedSpeedsSupported
 * included).  The PortInfoRecords of a table: port 0's mask by LID, for
 * the rows of the other ports of that LID.  Only switches have a port 0.
 */
struct port0_cap {
	uint16_t lid;
	uint32_t cap;
};
static struct port0_cap *port0_caps;
static size_t n_port0_caps;

static int port0_cmp(const void *a, const void *b)
{
	const struct port0_cap *x = a, *y = b;

	return (x->lid > y->lid) - (x->lid < y->lid);
}

static void port_prepare(const uint8_t *recs, size_t n, size_t stride)
{
	struct sa_port_info_record r;
	size_t k = 0;

	free(port0_caps);
	port0_caps = n ? calloc(n, sizeof(*port0_caps)) : NULL;
	n_port0_caps = 0;
	if (!port0_caps)
		return;		/* each row falls back on its own mask */
	for (size_t i = 0; i < n; i++) {
		memcpy(&r, recs + i * stride, sizeof(r));
		if (r.port_num != 0)
			continue;
		port0_caps[k].lid = be16toh(r.lid);
		port0_caps[k++].cap = be32toh(r.port_info.cap_mask);
	}
	n_port0_caps = k;
	qsort(port0_caps, k, sizeof(*port0_caps), port0_cmp);
}

/* The CapabilityMask that speaks for a record's port (see above). */
static uint32_t port_cap_mask(const struct sa_port_info_record *r)
{
	struct port0_cap key = { .lid = be16toh(r->lid) }, *p0;

	if (r->port_num != 0 && n_port0_caps) {
		p0 = bsearch(&key, port0_caps, n_port0_caps,
			     sizeof(*port0_caps), port0_cmp);
		if (p0)
			return p0->cap;
	}
	return be32toh(r->port_info.cap_mask);
}

static void gid_text(const uint8_t gid[16], char *buf, size_t len)
{
	if (!inet_ntop(AF_INET6, gid, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

static void out_gid(struct out *o, const char *key, const char *hdr,
		    const uint8_t gid[16])
{
	char text[INET6_ADDRSTRLEN], json[INET6_ADDRSTRLEN + 2];

	gid_text(gid, text, sizeof(text));
	snprintf(json, sizeof(json), "\"%s\"", text);
	out_raw(o, key, hdr, text, json, false);
}

static void out_name(struct out *o, const char *key, const char *hdr,
		     const char *name)
{
	out_str(o, key, hdr, name, strlen(name));
}

/* ------------------------------------------------------------ records */

static void node_row(struct out *o, const uint8_t *rec)
{
	struct sa_node_record r;
	const struct smp_node_info *ni = &r.node_info;

	memcpy(&r, rec, sizeof(r));
	out_num(o, "lid", "LID", be16toh(r.lid));
	out_name(o, "type", "Type", PICK(node_types, ni->node_type));
	out_num(o, "ports", "Ports", ni->num_ports);
	out_hex(o, "node_guid", "NodeGUID", be64toh(ni->node_guid), 16);
	out_hex(o, "port_guid", "PortGUID", be64toh(ni->port_guid), 16);
	out_num(o, "local_port", "Port", ni->local_port);
	out_hex(o, "vendor_id", "VendorID", smp_node_info_vendor(ni), 6);
	out_hex(o, "device_id", "DeviceID", be16toh(ni->device_id), 4);
	out_str(o, "description", "Description", r.node_desc.desc,
		sizeof(r.node_desc.desc));
}

static void port_row(struct out *o, const uint8_t *rec)
{
	struct sa_port_info_record r;
	const struct smp_port_info *pi = &r.port_info;

	memcpy(&r, rec, sizeof(r));
	out_num(o, "lid", "LID", be16toh(r.lid));
	out_num(o, "port", "Port", r.port_num);
	out_name(o, "state", "State", PICK(port_states, pi_port_state(pi)));
	out_name(o, "phys_state", "Physical", PICK(phys_states, pi_phys_state(pi)));
	out_name(o, "width", "Width", width_name(pi->link_width_active));
	out_name(o, "speed", "Speed", pi_speed_name(pi, port_cap_mask(&r)));
	out_name(o, "mtu", "MTU", PICK(mtus, pi_neighbor_mtu(pi)));
	out_num(o, "port_lid", "PortLID", be16toh(pi->lid));
	out_num(o, "lmc", "LMC", pi_lmc(pi));
	out_num(o, "sm_lid", "SMLID", be16toh(pi->master_sm_lid));
	out_hex(o, "cap_mask", "CapMask", be32toh(pi->cap_mask), 8);
}

static void link_row(struct out *o, const uint8_t *rec)
{
	struct sa_link_record r;

	memcpy(&r, rec, sizeof(r));
	out_num(o, "from_lid", "FromLID", be16toh(r.from_lid));
	out_num(o, "from_port", "FromPort", r.from_port);
	out_num(o, "to_lid", "ToLID", be16toh(r.to_lid));
	out_num(o, "to_port", "ToPort", r.to_port);
}

static void switch_row(struct out *o, const uint8_t *rec)
{
	struct sa_switch_info_record r;
	const struct smp_switch_info *si = &r.switch_info;

	memcpy(&r, rec, sizeof(r));
	out_num(o, "lid", "LID", be16toh(r.lid));
	out_num(o, "lft_cap", "LinearCap", be16toh(si->lft_cap));
	out_num(o, "lft_top", "LinearTop", be16toh(si->lft_top));
	out_num(o, "mft_cap", "MulticastCap", be16toh(si->mft_cap));
	out_num(o, "default_port", "DefPort", si->default_port);
	out_num(o, "life_time", "LifeTime", smp_switch_info_life(si));
	out_num(o, "port_state_change", "PSC", smp_switch_info_psc(si));
	out_num(o, "enhanced_port0", "EnhPort0",
		smp_switch_info_enhanced_port0(si));
}

static void lft_row(struct out *o, const uint8_t *rec)
{
	struct sa_lft_record r;
	char text[64 * 4 + 1], json[64 * 4 + 3];
	size_t t = 0, j = 0;
	unsigned valid = 0;

	memcpy(&r, rec, sizeof(r));
	uint16_t block = be16toh(r.block_num);

	json[j++] = '[';
	for (int i = 0; i < 64; i++) {
		uint8_t p = r.lft[i];

		valid += p != 0xff;
		if (p == 0xff)
			t += (size_t)snprintf(text + t, sizeof(text) - t, "%s-", i ? " " : "");
		else
			t += (size_t)snprintf(text + t, sizeof(text) - t, "%s%u", i ? " " : "", p);
		j += (size_t)snprintf(json + j, sizeof(json) - j, "%s%u", i ? "," : "", p);
	}
	json[j++] = ']';
	json[j] = 0;
	out_num(o, "lid", "LID", be16toh(r.lid));
	out_num(o, "block", "Block", block);
	out_num(o, "first_lid", "FirstLID", (uint64_t)block * 64);
	out_num(o, "valid", "Valid", valid);
	out_raw(o, "ports", "Ports", text, json, false);
}

static void path_row(struct out *o, const uint8_t *rec)
{
	struct sa_path_record r;
	char pkey[8], pkey_json[10];

	memcpy(&r, rec, sizeof(r));
	uint16_t pk = be16toh(r.pkey);
	snprintf(pkey, sizeof(pkey), "0x%04x", pk);
	snprintf(pkey_json, sizeof(pkey_json), "\"0x%04x\"", pk);
	out_num(o, "slid", "SLID", be16toh(r.slid));
	out_num(o, "dlid", "DLID", be16toh(r.dlid));
	out_gid(o, "sgid", "SGID", r.sgid);
	out_gid(o, "dgid", "DGID", r.dgid);
	out_raw(o, "pkey", "P_Key", pkey, pkey_json, false);
	out_num(o, "sl", "SL", be16toh(r.qos_class_sl) & 0xf);
	out_name(o, "mtu", "MTU", PICK(mtus, r.mtu & 0x3f));
	out_name(o, "rate", "Rate", PICK(rates, r.rate & 0x3f));
	out_num(o, "pkt_life", "PktLife", r.pkt_life & 0x3f);
	out_num(o, "hop_limit", "HopLimit", be32toh(r.hop_flow_raw) & 0xff);
	out_num(o, "reversible", "Rev", r.num_path >> 7);
}

static void service_row(struct out *o, const uint8_t *rec)
{
	struct sa_service_record r;
	char lease[16];

	memcpy(&r, rec, sizeof(r));
	uint32_t l = be32toh(r.service_lease);
	if (l == 0xffffffffu)
		snprintf(lease, sizeof(lease), "forever");
	else
		snprintf(lease, sizeof(lease), "%u", l);
	out_hex(o, "service_id", "ServiceID", be64toh(r.service_id), 16);
	out_gid(o, "service_gid", "ServiceGID", r.service_gid);
	out_hex(o, "pkey", "P_Key", be16toh(r.service_pkey), 4);
	if (l == 0xffffffffu)
		out_raw(o, "lease", "Lease", lease, "null", true);
	else
		out_raw(o, "lease", "Lease", lease, lease, true);
	out_str(o, "name", "Name", r.service_name, sizeof(r.service_name));
}

static const struct rec_kind kinds[] = {
	{ "nodes", SA_ATTR_NODE_RECORD, sizeof(struct sa_node_record), node_row, NULL },
	{ "ports", SA_ATTR_PORT_INFO_RECORD, sizeof(struct sa_port_info_record), port_row,
	  port_prepare },
	{ "links", SA_ATTR_LINK_RECORD, sizeof(struct sa_link_record), link_row, NULL },
	{ "switches", SA_ATTR_SWITCH_INFO_RECORD, sizeof(struct sa_switch_info_record), switch_row, NULL },
	{ "lfts", SA_ATTR_LFT_RECORD, sizeof(struct sa_lft_record), lft_row, NULL },
	{ "paths", SA_ATTR_PATH_RECORD, sizeof(struct sa_path_record), path_row, NULL },
	/* GetMulti(MultiPathRecord): answered with PathRecords */
	{ "multipath", SA_ATTR_MULTIPATH_RECORD, sizeof(struct sa_path_record), path_row, NULL },
	{ "services", SA_ATTR_SERVICE_RECORD, sizeof(struct sa_service_record), service_row, NULL },
};

const struct rec_kind *rec_kind_find(const char *name)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i].name, name))
			return &kinds[i];
	return NULL;
}

const struct rec_kind *rec_kinds(size_t *n)
{
	*n = sizeof(kinds) / sizeof(kinds[0]);
	return kinds;
}
