/*
 * checks_util.c - what the health checks share: link width and speed
 * arithmetic (checks.h) and naming a port of the model in a finding
 * (checks_int.h).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "health/checks.h"
#include "health/checks_int.h"

unsigned hc_width_lanes(unsigned code)
{
	switch (code) {
	case 1:  return 1;
	case 16: return 2;
	case 2:  return 4;
	case 4:  return 8;
	case 8:  return 12;
	default: return 0;
	}
}

unsigned hc_width_best(unsigned mask)
{
	static const uint8_t order[] = { 8, 4, 2, 16, 1 };	/* widest first */

	if (mask == 255)	/* "set to LinkWidthSupported": all of them */
		mask = 0x1f;
	for (size_t i = 0; i < sizeof(order); i++)
		if (mask & order[i])
			return hc_width_lanes(order[i]);
	return 0;
}

/* Per-lane rate of a LinkSpeed code (one bit) and of a LinkSpeedExt one. */
static unsigned speed_rate(unsigned bit)
{
	return bit == 1 ? 25 : bit == 2 ? 50 : bit == 4 ? 100 : 0;
}

static unsigned ext_rate(unsigned bit)
{
	return bit == 1 ? 140 : bit == 2 ? 250 : bit == 4 ? 500 :
	       bit == 8 ? 1000 : 0;
}

static unsigned best_bit(unsigned mask, unsigned (*rate)(unsigned))
{
	unsigned best = 0;

	for (unsigned b = 1; b <= 8; b <<= 1)
		if ((mask & b) && rate(b) > best)
			best = rate(b);
	return best;
}

unsigned hc_speed_active(const struct smp_port_info *pi, uint32_t cap_mask)
{
	if ((cap_mask & PI_CAP_HAS_EXT_SPEEDS) && pi_speed_ext_active(pi))
		return ext_rate(pi_speed_ext_active(pi));
	return speed_rate(pi_speed_active(pi));
}

/* LinkSpeedEnabled as a mask of speeds: 15 ("set to supported") is all. */
static unsigned speed_enabled(const struct smp_port_info *pi)
{
	unsigned m = pi_speed_enabled(pi);

	return m == 15 ? 7 : m & 7;
}

/* LinkSpeedExtEnabled: 30 disables extended speeds, 31 is all. */
static unsigned ext_enabled(const struct smp_port_info *pi, uint32_t cap)
{
	unsigned m = pi->speed_ext_enabled & 0x1f;

	if (!(cap & PI_CAP_HAS_EXT_SPEEDS) || m == 30)
		return 0;
	return m == 31 ? 0xf : m & 0xf;
}

unsigned hc_speed_best_common(const struct smp_port_info *a, uint32_t cap_a,
			      const struct smp_port_info *b, uint32_t cap_b)
{
	unsigned ext = ext_enabled(a, cap_a) & ext_enabled(b, cap_b);

	if (ext)
		return best_bit(ext, ext_rate);
	return best_bit(speed_enabled(a) & speed_enabled(b), speed_rate);
}

const char *hc_width_name(unsigned lanes)
{
	switch (lanes) {
	case 1:  return "1x";
	case 2:  return "2x";
	case 4:  return "4x";
	case 8:  return "8x";
	case 12: return "12x";
	default: return "?";
	}
}

const char *hc_speed_name(unsigned rate)
{
	switch (rate) {
	case 25:   return "SDR";
	case 50:   return "DDR";
	case 100:  return "QDR";
	case 140:  return "FDR";
	case 250:  return "EDR";
	case 500:  return "HDR";
	case 1000: return "NDR";
	default:   return "?";
	}
}

uint16_t hc_port_lid(const struct fab_node *n, unsigned pn)
{
	const struct fab_port *p;

	if (pn > n->num_ports)
		return 0;
	p = fabric_endport_of(n, pn);
	if (p->lid)
		return p->lid;
	return p->valid ? be16toh(p->pi.lid) : 0;
}

static void copy_desc(char *dst, const struct fab_node *n)
{
	const char *d = fab_node_label(n);	/* a node-name-map name first */
	size_t i;

	/* printable ASCII only: the text goes to logs, JSON and terminals */
	for (i = 0; i < HF_DESC_SIZE - 1 && d[i]; i++) {
		unsigned char c = (unsigned char)d[i];

		dst[i] = c >= 0x20 && c < 0x7f ? (char)c : ' ';
	}
	dst[i] = '\0';
}

void hc_where(struct hf_finding *x, const struct fabric *f, int32_t id,
	      unsigned pn)
{
	const struct fab_node *n;
	const struct fab_port *p;

	if (!f || id < 0 || (size_t)id >= f->n_nodes)
		return;
	n = fabric_node(f, id);
	x->guid = n->guid;
	x->port = (uint8_t)pn;
	/* a node as a whole (port 0): the LID SMPs reach it at */
	x->lid = pn ? hc_port_lid(n, pn) : fabric_node_lid(n);
	copy_desc(x->desc, n);
	if (pn < 1 || pn > n->num_ports)
		return;
	p = &n->ports[pn];
	if (p->peer_node == FAB_NONE || (size_t)p->peer_node >= f->n_nodes)
		return;
	n = fabric_node(f, p->peer_node);
	x->peer_guid = n->guid;
	x->peer_port = p->peer_port;
	x->peer_lid = hc_port_lid(n, p->peer_port);
	copy_desc(x->peer_desc, n);
}

void hc_where_guid(struct hf_finding *x, const struct fabric *f,
		   uint64_t guid, unsigned pn)
{
	int32_t id = f ? fabric_find(f, guid) : FAB_NONE;

	x->guid = guid;
	x->port = (uint8_t)pn;
	if (id != FAB_NONE)
		hc_where(x, f, id, pn <= fabric_node(f, id)->num_ports ? pn : 0);
	x->port = (uint8_t)pn;
}

void hc_text(struct hf_finding *x, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->text, sizeof(x->text), fmt, ap);
	va_end(ap);
}
