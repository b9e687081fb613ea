/*
 * counters.c - the port counter store (counters.h).
 *
 * A flat array of ports and a chained hash of indices into it by (node
 * GUID, port), its buckets doubled as the ports come (about one port per
 * bucket).  Removal swaps the last port into the hole and rebuilds the
 * hash: it happens at most once per counter sweep, the lookups once per
 * reading.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "health/counters.h"

const struct pc_desc pc_desc[PC_N] = {
	[PC_SYMBOL_ERR]		= { "SymbolErrorCounter", 16 },
	[PC_LINK_RECOVER]	= { "LinkErrorRecoveryCounter", 8 },
	[PC_LINK_DOWNED]	= { "LinkDownedCounter", 8 },
	[PC_RCV_ERR]		= { "PortRcvErrors", 16 },
	[PC_RCV_REMOTE_PHYS]	= { "PortRcvRemotePhysicalErrors", 16 },
	[PC_RCV_SW_RELAY]	= { "PortRcvSwitchRelayErrors", 16 },
	[PC_XMIT_DISCARDS]	= { "PortXmitDiscards", 16 },
	[PC_XMIT_CONSTRAINT]	= { "PortXmitConstraintErrors", 8 },
	[PC_RCV_CONSTRAINT]	= { "PortRcvConstraintErrors", 8 },
	[PC_LINK_INTEGRITY]	= { "LocalLinkIntegrityErrors", 4 },
	[PC_BUF_OVERRUN]	= { "ExcessiveBufferOverrunErrors", 4 },
	[PC_VL15_DROPPED]	= { "VL15Dropped", 16 },
	[PC_XMIT_WAIT]		= { "PortXmitWait", 32 },
	[PC_XMIT_DATA]		= { "PortXmitData", 32 },
	[PC_RCV_DATA]		= { "PortRcvData", 32 },
	[PC_XMIT_PKTS]		= { "PortXmitPkts", 32 },
	[PC_RCV_PKTS]		= { "PortRcvPkts", 32 },
	[PC_UNI_XMIT_PKTS]	= { "PortUnicastXmitPkts", 0 },
	[PC_UNI_RCV_PKTS]	= { "PortUnicastRcvPkts", 0 },
	[PC_MC_XMIT_PKTS]	= { "PortMulticastXmitPkts", 0 },
	[PC_MC_RCV_PKTS]	= { "PortMulticastRcvPkts", 0 },
};

#define NO_INDEX	UINT32_MAX

struct pc_store {
	struct pc_port	*ports;
	uint32_t	*next;		/* hash chain, per port */
	uint32_t	*bucket;
	size_t		 n, cap, max, nbuckets;
};

static size_t hash_of(const struct pc_store *s, uint64_t guid, uint8_t port)
{
	uint64_t h = (guid ^ ((uint64_t)port << 56)) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (s->nbuckets - 1);
}

int pc_store_new(struct pc_store **out, size_t max_ports)
{
	struct pc_store *s;

	if (!max_ports || max_ports > (1u << 24))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->max = max_ports;
	s->nbuckets = 64;
	s->bucket = malloc(s->nbuckets * sizeof(*s->bucket));
	if (!s->bucket) {
		free(s);
		return -ENOMEM;
	}
	memset(s->bucket, 0xff, s->nbuckets * sizeof(*s->bucket));
	*out = s;
	return 0;
}

void pc_store_free(struct pc_store *s)
{
	if (!s)
		return;
	free(s->ports);
	free(s->next);
	free(s->bucket);
	free(s);
}

size_t pc_store_count(const struct pc_store *s) { return s->n; }
size_t pc_store_max(const struct pc_store *s) { return s->max; }

struct pc_port *pc_find(struct pc_store *s, uint64_t guid, uint8_t port)
{
	for (uint32_t i = s->bucket[hash_of(s, guid, port)]; i != NO_INDEX;
	     i = s->next[i])
		if (s->ports[i].node_guid == guid && s->ports[i].port == port)
			return &s->ports[i];
	return NULL;
}

static int grow(struct pc_store *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;

	if (cap > s->max)
		cap = s->max;
	struct pc_port *p = realloc(s->ports, cap * sizeof(*p));
	if (!p)
		return -ENOMEM;
	s->ports = p;
	uint32_t *nx = realloc(s->next, cap * sizeof(*nx));
	if (!nx)
		return -ENOMEM;
	s->next = nx;
	s->cap = cap;
	return 0;
}

static void rehash(struct pc_store *s);

/* Twice the buckets (up to 2^20) once there are as many ports. */
static void grow_buckets(struct pc_store *s)
{
	if (s->n < s->nbuckets || s->nbuckets >= (1u << 20))
		return;
	uint32_t *b = malloc(2 * s->nbuckets * sizeof(*b));
	if (!b)
		return;		/* longer chains, still correct */
	free(s->bucket);
	s->bucket = b;
	s->nbuckets *= 2;
	rehash(s);
}

struct pc_port *pc_get(struct pc_store *s, uint64_t guid, uint8_t port)
{
	struct pc_port *p = pc_find(s, guid, port);

	if (p)
		return p;
	if (s->n >= s->max || (s->n == s->cap && grow(s) < 0))
		return NULL;
	grow_buckets(s);
	p = &s->ports[s->n];
	memset(p, 0, sizeof(*p));
	p->node_guid = guid;
	p->port = port;
	size_t b = hash_of(s, guid, port);
	s->next[s->n] = s->bucket[b];
	s->bucket[b] = (uint32_t)s->n;
	s->n++;
	return p;
}

const struct pc_port *pc_next(const struct pc_store *s, size_t *it)
{
	return *it < s->n ? &s->ports[(*it)++] : NULL;
}

static void rehash(struct pc_store *s)
{
	memset(s->bucket, 0xff, s->nbuckets * sizeof(*s->bucket));
	for (size_t i = 0; i < s->n; i++) {
		size_t b = hash_of(s, s->ports[i].node_guid, s->ports[i].port);
		s->next[i] = s->bucket[b];
		s->bucket[b] = (uint32_t)i;
	}
}

size_t pc_remove_if(struct pc_store *s,
		    bool (*keep)(void *arg, const struct pc_port *p),
		    void *arg)
{
	size_t gone = 0;

	for (size_t i = 0; i < s->n;) {
		if (keep(arg, &s->ports[i])) {
			i++;
			continue;
		}
		s->ports[i] = s->ports[--s->n];
		gone++;
	}
	if (gone)
		rehash(s);
	return gone;
}

void pc_expire_deltas(struct pc_store *s, double t)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->ports[i].last_read < t)
			memset(s->ports[i].delta, 0, sizeof(s->ports[i].delta));
}

struct one { uint64_t guid; uint8_t port; };

static bool not_it(void *arg, const struct pc_port *p)
{
	const struct one *o = arg;

	return p->node_guid != o->guid || p->port != o->port;
}

int pc_remove(struct pc_store *s, uint64_t guid, uint8_t port)
{
	struct one o = { guid, port };

	return pc_remove_if(s, not_it, &o) ? 0 : -ENOENT;
}

int pc_id_by_name(const char *name)
{
	for (int i = 0; i < PC_N; i++)
		if (!strcasecmp(pc_desc[i].name, name))
			return i;
	return -1;
}

/* ------------------------------------------------------------ readings */

/* The reading as (value, width) per counter. */
static void sample_values(const struct pma_sample *smp, uint64_t v[PC_N],
			  uint8_t w[PC_N])
{
	const struct pma_counters *c = &smp->pc;

	v[PC_SYMBOL_ERR] = c->symbol_err;
	v[PC_LINK_RECOVER] = c->link_recover;
	v[PC_LINK_DOWNED] = c->link_downed;
	v[PC_RCV_ERR] = c->rcv_err;
	v[PC_RCV_REMOTE_PHYS] = c->rcv_remote_phys;
	v[PC_RCV_SW_RELAY] = c->rcv_sw_relay;
	v[PC_XMIT_DISCARDS] = c->xmit_discards;
	v[PC_XMIT_CONSTRAINT] = c->xmit_constraint;
	v[PC_RCV_CONSTRAINT] = c->rcv_constraint;
	v[PC_LINK_INTEGRITY] = c->link_integrity & 0xf;
	v[PC_BUF_OVERRUN] = c->buf_overrun & 0xf;
	v[PC_VL15_DROPPED] = c->vl15_dropped;
	v[PC_XMIT_WAIT] = c->xmit_wait;
	v[PC_XMIT_DATA] = c->xmit_data;
	v[PC_RCV_DATA] = c->rcv_data;
	v[PC_XMIT_PKTS] = c->xmit_pkts;
	v[PC_RCV_PKTS] = c->rcv_pkts;
	for (int i = 0; i < PC_N; i++)
		w[i] = pc_desc[i].bits;
	if (!smp->has_ext)
		return;
	const struct pma_counters_ext *e = &smp->ext;
	v[PC_XMIT_DATA] = e->xmit_data;
	v[PC_RCV_DATA] = e->rcv_data;
	v[PC_XMIT_PKTS] = e->xmit_pkts;
	v[PC_RCV_PKTS] = e->rcv_pkts;
	v[PC_UNI_XMIT_PKTS] = e->uni_xmit_pkts;
	v[PC_UNI_RCV_PKTS] = e->uni_rcv_pkts;
	v[PC_MC_XMIT_PKTS] = e->mc_xmit_pkts;
	v[PC_MC_RCV_PKTS] = e->mc_rcv_pkts;
	for (int i = PC_XMIT_DATA; i < PC_N; i++)
		w[i] = 64;
}

/* The most a 64-bit counter can plausibly advance in dt seconds. */
static uint64_t jump_bound(double dt)
{
	if (!(dt >= 1.0))
		dt = 1.0;
	double b = dt * (double)PC_MAX_PER_S;

	return b >= 0x1p62 ? (1ull << 62) : (uint64_t)b;
}

/*
 * The increment of one counter from `old` to `v` (width bits), or what to
 * do instead.  Returns the delta; *clear says an outside clear (or an
 * implausible jump) was seen.
 */
static uint64_t counter_delta(uint64_t old, uint64_t v, uint8_t bits,
			      double dt, bool *clear)
{
	if (bits < 64) {
		if (v >= old)
			return v - old;	/* saturated at all ones: 0 */
		*clear = true;		/* saturating counters never wrap */
		return v;
	}
	uint64_t bound = jump_bound(dt);
	if (v >= old) {
		if (v - old <= bound)
			return v - old;
		*clear = true;		/* not countable in dt: a new base */
		return 0;
	}
	*clear = true;
	return v <= bound ? v : 0;
}

void pc_update(struct pc_port *p, uint16_t lid, const struct pma_sample *smp,
	       double now, struct pc_result *res)
{
	uint64_t v[PC_N] = { 0 };
	uint8_t w[PC_N] = { 0 };
	double dt = p->reads ? now - p->last_read : 0;

	*res = (struct pc_result){ .first = p->reads == 0 };
	sample_values(smp, v, w);
	for (int i = 0; i < PC_N; i++) {
		uint64_t d;

		if (!w[i]) {
			/* not read this time (extended only) */
			p->delta[i] = 0;
			continue;
		}
		if (!p->seen[i])
			d = v[i];
		else if (p->width[i] != w[i])
			d = 0;		/* another counter now: new base */
		else
			d = counter_delta(p->raw[i], v[i], w[i], dt,
					  &res->ext_clear);
		p->delta[i] = d;
		/* saturating: a hostile first reading near 2^64 must not
		 * make the total wrap to a small number later */
		p->total[i] = p->total[i] + d < p->total[i] ? UINT64_MAX :
			      p->total[i] + d;
		p->raw[i] = v[i];
		p->width[i] = w[i];
		p->seen[i] = true;
		if (d && i <= PC_XMIT_WAIT)
			res->increased |= 1u << i;
	}
	if (res->ext_clear)
		p->ext_clears++;
	if (!p->reads)
		p->first_read = now;
	p->prev_read = p->reads ? p->last_read : 0;
	p->last_read = now;
	p->reads++;
	p->misses = 0;
	p->lid = lid;
}

/* ------------------------------------------------------------- clears */

/* CounterSelect bit of a counter of PortCounters, or -1 (CounterSelect2's
 * PortXmitWait and the extended-only counters). */
static int select_bit(int i)
{
	if (i < PC_N_ERRORS)
		return i;	/* the error counters are in the wire's order */
	switch (i) {
	case PC_XMIT_DATA:	return 12;
	case PC_RCV_DATA:	return 13;
	case PC_XMIT_PKTS:	return 14;
	case PC_RCV_PKTS:	return 15;
	default:		return -1;
	}
}

bool pc_needs_clear(const struct pc_port *p)
{
	for (int i = 0; i < PC_N; i++) {
		uint8_t b = p->width[i];

		if (!p->seen[i] || !b || b > 32)
			continue;
		/* raw >= 3/4 of 2^b */
		if (p->raw[i] * 4 >= 3ull << b)
			return true;
	}
	return false;
}

void pc_clear_select(const struct pc_port *p, uint16_t *select,
		     uint8_t *select2)
{
	uint16_t s = PMA_SEL_ERRORS;

	for (int i = PC_XMIT_DATA; i <= PC_RCV_PKTS; i++)
		if (p->width[i] != 64)
			s |= (uint16_t)(1u << select_bit(i));
	*select = s;
	*select2 = PMA_SEL2_XMIT_WAIT;
}

void pc_cleared(struct pc_port *p, uint16_t select, uint8_t select2)
{
	for (int i = 0; i < PC_N; i++) {
		int b = select_bit(i);
		bool hit = b >= 0 ? (select >> b & 1) :
			   i == PC_XMIT_WAIT && (select2 & PMA_SEL2_XMIT_WAIT);

		if (hit && p->width[i] && p->width[i] <= 32)
			p->raw[i] = 0;
	}
	p->sm_clears++;
}
