/*
 * ports.c - the port families, named, labelled and scaled as
 * treydock/infiniband_exporter does (its collectors/switch.go and hca.go),
 * so that dashboards built on it work on ibsm's endpoint:
 *
 *  - infiniband_{switch,hca}_port_<counter>_total{guid,port,...}: the
 *    performance manager's 64-bit totals (health/counters.h), data
 *    counters in bytes (the wire counts 4-byte words: x4).  To its
 *    labels guid and port ibsm adds the node's name (label `switch` or
 *    `hca`, as its info series call it) and the cable's other end:
 *    remote_guid, remote_port, remote_name;
 *  - infiniband_{switch,hca}_info{guid,switch|hca,lid} and
 *    infiniband_{switch,hca}_uplink_info{guid,port,switch|hca,uplink,
 *    uplink_guid,uplink_type,uplink_port,uplink_lid}: 1 per node / link;
 *  - infiniband_switch_port_{raw_,}rate_bytes_per_second{guid,port} and
 *    infiniband_hca_{raw_,}rate_bytes_per_second{guid}: the link's
 *    signalling and data rate (its lane rate table);
 *  - ibsm's own gauges: infiniband_{switch,hca}_port_link_width_lanes and
 *    infiniband_{switch,hca}_port_link_speed_bytes_per_second (per lane,
 *    signalling rate / 8) of every linked port.
 *
 * The labels of a port are rendered once per scrape, then copied into
 * each of its series: one scrape of a 1,152-host fat tree (4,608 ports,
 * 21 counters each) is a memcpy-bound pass over ~15 MB of text.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health/checks.h"
#include "health/counters.h"
#include "model/fabric.h"
#include "sm/metrics/metrics.h"
#include "sm/metrics/prom.h"
#include "sm/perf/perf.h"
#include "sm/sm.h"

/* A counter family: its pc_id, the name after infiniband_<kind>_port_,
 * the counter's name in the help text, the factor to bytes. */
struct cfam {
	enum pc_id id;
	const char *suffix;
	const char *field;
	unsigned    scale;
};

static const struct cfam cfams[] = {
	{ PC_XMIT_DATA, "transmit_data_bytes_total", "PortXmitData", 4 },
	{ PC_RCV_DATA, "receive_data_bytes_total", "PortRcvData", 4 },
	{ PC_XMIT_PKTS, "transmit_packets_total", "PortXmitPkts", 1 },
	{ PC_RCV_PKTS, "receive_packets_total", "PortRcvPkts", 1 },
	{ PC_UNI_XMIT_PKTS, "unicast_transmit_packets_total",
	  "PortUnicastXmitPkts", 1 },
	{ PC_UNI_RCV_PKTS, "unicast_receive_packets_total",
	  "PortUnicastRcvPkts", 1 },
	{ PC_MC_XMIT_PKTS, "multicast_transmit_packets_total",
	  "PortMulticastXmitPkts", 1 },
	{ PC_MC_RCV_PKTS, "multicast_receive_packets_total",
	  "PortMulticastRcvPkts", 1 },
	{ PC_SYMBOL_ERR, "symbol_error_total", "SymbolErrorCounter", 1 },
	{ PC_LINK_RECOVER, "link_error_recovery_total",
	  "LinkErrorRecoveryCounter", 1 },
	{ PC_LINK_DOWNED, "link_downed_total", "LinkDownedCounter", 1 },
	{ PC_RCV_ERR, "receive_errors_total", "PortRcvErrors", 1 },
	{ PC_RCV_REMOTE_PHYS, "receive_remote_physical_errors_total",
	  "PortRcvRemotePhysicalErrors", 1 },
	{ PC_RCV_SW_RELAY, "receive_switch_relay_errors_total",
	  "PortRcvSwitchRelayErrors", 1 },
	{ PC_XMIT_DISCARDS, "transmit_discards_total", "PortXmitDiscards", 1 },
	{ PC_XMIT_CONSTRAINT, "transmit_constraint_errors_total",
	  "PortXmitConstraintErrors", 1 },
	{ PC_RCV_CONSTRAINT, "receive_constraint_errors_total",
	  "PortRcvConstraintErrors", 1 },
	{ PC_LINK_INTEGRITY, "local_link_integrity_errors_total",
	  "LocalLinkIntegrityErrors", 1 },
	{ PC_BUF_OVERRUN, "excessive_buffer_overrun_errors_total",
	  "ExcessiveBufferOverrunErrors", 1 },
	{ PC_VL15_DROPPED, "vl15_dropped_total", "VL15Dropped", 1 },
	{ PC_XMIT_WAIT, "transmit_wait_total", "PortXmitWait", 1 },
};
#define N_CFAMS	(sizeof(cfams) / sizeof(cfams[0]))

/* A port with counters, and its labels rendered. */
struct cport {
	const struct pc_port *p;
	bool   sw;
	struct prom_labels *l;
};

static const char *kind(bool sw)
{
	return sw ? "switch" : "hca";
}

static const struct fab_port *model_port(const struct fabric *f,
					 uint64_t guid, unsigned pn,
					 const struct fab_node **node)
{
	int32_t id = fabric_find(f, guid);
	const struct fab_node *n;

	if (id == FAB_NONE)
		return NULL;
	n = fabric_node(f, id);
	if (pn > n->num_ports)
		return NULL;
	*node = n;
	return &n->ports[pn];
}

static uint16_t node_lid(const struct fab_node *n, unsigned pn)
{
	if (n->type == NODE_TYPE_SWITCH)
		return n->ports[0].lid;
	return n->ports[pn].lid ? n->ports[pn].lid : fabric_node_lid(n);
}

/* guid, port, switch|hca, remote_guid, remote_port, remote_name */
static void port_labels(struct prom_labels *l, const struct fabric *f,
			const struct fab_node *n, unsigned pn)
{
	const struct fab_port *p = &n->ports[pn];

	prom_lbl_reset(l);
	prom_lbl_guid(l, "guid", n->guid);
	prom_lbl_u(l, "port", pn);
	prom_lbl(l, kind(n->type == NODE_TYPE_SWITCH), fab_node_label(n));
	if (p->peer_node != FAB_NONE) {
		const struct fab_node *r = fabric_node(f, p->peer_node);

		prom_lbl_guid(l, "remote_guid", r->guid);
		prom_lbl_u(l, "remote_port", p->peer_port);
		prom_lbl(l, "remote_name", fab_node_label(r));
	}
}

/* The counter ports of the store that the model knows, with labels. */
static size_t counter_ports(const struct fabric *fab,
			    const struct pc_store *st, struct cport **out)
{
	size_t it = 0, n = 0, cap;
	const struct pc_port *pp;
	struct cport *v;

	*out = NULL;
	if (!st || !(cap = pc_store_count(st)))
		return 0;
	v = calloc(cap, sizeof(*v));
	if (!v)
		return 0;
	while ((pp = pc_next(st, &it)) && n < cap) {
		const struct fab_node *node;
		const struct fab_port *mp = model_port(fab,
						       pp->node_guid, pp->port,
						       &node);

		if (!mp || !pp->reads)
			continue;
		v[n].l = malloc(sizeof(*v[n].l));
		if (!v[n].l)
			break;
		v[n].p = pp;
		v[n].sw = node->type == NODE_TYPE_SWITCH;
		port_labels(v[n].l, fab, node, pp->port);
		n++;
	}
	*out = v;
	return n;
}

static void counters(const struct fabric *fab, const struct pc_store *st,
		     struct prom *p)
{
	struct cport *v;
	size_t n = counter_ports(fab, st, &v);
	char name[128], help[128];

	for (int sw = 1; sw >= 0; sw--)
		for (size_t f = 0; f < N_CFAMS; f++) {
			const struct cfam *c = &cfams[f];
			bool any = false;

			snprintf(name, sizeof(name), "infiniband_%s_port_%s",
				 kind(sw), c->suffix);
			snprintf(help, sizeof(help), "Infiniband %s port %s",
				 sw ? "switch" : "HCA", c->field);
			for (size_t i = 0; i < n; i++) {
				const struct pc_port *pp = v[i].p;

				if (v[i].sw != sw || !pp->seen[c->id])
					continue;
				if (!any)
					prom_family(p, name, "counter", help);
				any = true;
				prom_u64(p, name, v[i].l,
					 pp->total[c->id] * c->scale);
			}
		}
	for (size_t i = 0; i < n; i++)
		free(v[i].l);
	free(v);
}

/* treydock's lane rates: signalling and data Gb/s per lane. */
static bool lane_rates(unsigned rate, double *raw, double *eff)
{
	switch (rate) {
	case 25:   *raw = 2.5; *eff = 2; return true;
	case 50:   *raw = 5; *eff = 4; return true;
	case 100:  *raw = 10; *eff = 8; return true;
	case 140:  *raw = 14.0625; *eff = 13.64; return true;
	case 250:  *raw = 25.78125; *eff = 25; return true;
	case 500:  *raw = 50; *eff = 50; return true;
	case 1000: *raw = 100; *eff = 100; return true;
	default:   return false;
	}
}

static void info(const struct fabric *f, struct prom *p, bool sw)
{
	char name[64], help[64];
	struct prom_labels l;

	snprintf(name, sizeof(name), "infiniband_%s_info", kind(sw));
	snprintf(help, sizeof(help), "Infiniband %s information",
		 sw ? "switch" : "HCA");
	prom_family(p, name, "gauge", help);
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = fabric_node(f, (int32_t)i);

		if ((n->type == NODE_TYPE_SWITCH) != sw)
			continue;
		prom_lbl_reset(&l);
		prom_lbl_guid(&l, "guid", n->guid);
		prom_lbl(&l, kind(sw), fab_node_label(n));
		prom_lbl_u(&l, "lid", node_lid(n, 1 <= n->num_ports ? 1 : 0));
		prom_u64(p, name, &l, 1);
	}
}

static void uplinks(const struct fabric *f, struct prom *p, bool sw)
{
	char name[64], help[64];
	struct prom_labels l;

	snprintf(name, sizeof(name), "infiniband_%s_uplink_info", kind(sw));
	snprintf(help, sizeof(help), "Infiniband %s uplink information",
		 sw ? "switch" : "HCA");
	prom_family(p, name, "gauge", help);
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = fabric_node(f, (int32_t)i);

		if ((n->type == NODE_TYPE_SWITCH) != sw)
			continue;
		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			const struct fab_port *fp = &n->ports[pn];
			const struct fab_node *r;

			if (fp->peer_node == FAB_NONE)
				continue;
			r = fabric_node(f, fp->peer_node);
			prom_lbl_reset(&l);
			prom_lbl_guid(&l, "guid", n->guid);
			prom_lbl_u(&l, "port", pn);
			prom_lbl(&l, kind(sw), fab_node_label(n));
			prom_lbl(&l, "uplink", fab_node_label(r));
			prom_lbl_guid(&l, "uplink_guid", r->guid);
			prom_lbl(&l, "uplink_type", r->type == NODE_TYPE_SWITCH ?
				 "SW" : "CA");
			prom_lbl_u(&l, "uplink_port", fp->peer_port);
			prom_lbl_u(&l, "uplink_lid", node_lid(r, fp->peer_port));
			prom_u64(p, name, &l, 1);
		}
	}
}

/* What a linked port runs at: lanes and per-lane rate (hc_speed_active's
 * units of 100 Mb/s); false when unknown. */
static bool port_link(const struct fab_node *n, unsigned pn, unsigned *lanes,
		      unsigned *rate)
{
	const struct fab_port *fp = &n->ports[pn];

	if (fp->peer_node == FAB_NONE || !fp->valid)
		return false;
	*lanes = hc_width_lanes(fp->pi.link_width_active);
	*rate = hc_speed_active(&fp->pi, fabric_port_cap_mask(n, pn));
	return *lanes && *rate;
}

static void rates(const struct fabric *f, struct prom *p, bool sw,
		  bool raw_rate)
{
	char name[80], help[64];
	struct prom_labels l;

	snprintf(name, sizeof(name), "infiniband_%s_%s%srate_bytes_per_second",
		 kind(sw), sw ? "port_" : "", raw_rate ? "raw_" : "");
	snprintf(help, sizeof(help), "Infiniband %s%s %srate",
		 sw ? "switch" : "HCA", sw ? " port" : "",
		 raw_rate ? "raw " : "");
	prom_family(p, name, "gauge", help);
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = fabric_node(f, (int32_t)i);

		if ((n->type == NODE_TYPE_SWITCH) != sw)
			continue;
		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			unsigned lanes, rate;
			double r, e;

			if (!port_link(n, pn, &lanes, &rate) ||
			    !lane_rates(rate, &r, &e))
				continue;
			prom_lbl_reset(&l);
			prom_lbl_guid(&l, "guid", n->guid);
			if (sw)
				prom_lbl_u(&l, "port", pn);
			prom_dbl(p, name, &l, lanes * (raw_rate ? r : e) * 1e9 / 8);
			if (!sw)
				break;	/* one series per HCA, as its exporter */
		}
	}
}

/* ibsm's own: width (lanes) and lane speed of each linked port. */
static void link_gauges(const struct fabric *f, struct prom *p, bool sw,
			bool speed)
{
	char name[80];
	struct prom_labels l;

	snprintf(name, sizeof(name), "infiniband_%s_port_link_%s", kind(sw),
		 speed ? "speed_bytes_per_second" : "width_lanes");
	prom_family(p, name, "gauge", speed ?
		    "active link speed per lane (signalling rate)" :
		    "active link width (lanes)");
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = fabric_node(f, (int32_t)i);

		if ((n->type == NODE_TYPE_SWITCH) != sw)
			continue;
		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			unsigned lanes, rate;
			double r, e;

			if (!port_link(n, pn, &lanes, &rate))
				continue;
			prom_lbl_reset(&l);
			prom_lbl_guid(&l, "guid", n->guid);
			prom_lbl_u(&l, "port", pn);
			if (speed)
				prom_dbl(p, name, &l, lane_rates(rate, &r, &e) ?
					 r * 1e9 / 8 : rate * 1e8 / 8);
			else
				prom_u64(p, name, &l, lanes);
		}
	}
}

void metrics_render_ports_of(const struct fabric *f, const struct pc_store *st,
			     struct prom *p)
{
	counters(f, st, p);
	for (int sw = 1; sw >= 0; sw--) {
		info(f, p, sw);
		uplinks(f, p, sw);
		rates(f, p, sw, false);
		rates(f, p, sw, true);
		link_gauges(f, p, sw, false);
		link_gauges(f, p, sw, true);
	}
}

void metrics_render_ports(struct sm *sm, struct prom *p)
{
	metrics_render_ports_of(&sm->fabric, perf_store(sm->perf), p);
}
