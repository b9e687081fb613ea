/*
 * history.c - the sweep and trap history (history.h).
 *
 * Three bounded tables (ports, nodes, trap sources), each an array with
 * a guidmap index.  When a table is full, the entry seen least recently
 * makes room (one scan of the table: only when full, and a table is
 * full only in a fabric larger than its bound or under a flood of new
 * trap sources, which sm/trap.c already limits).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "health/history.h"

/* Key of a port: the node GUID mixed (a bijection) with the port number
 * folded in; entries are checked against their own GUID and port, so a
 * collision only costs tracking one of the two. */
static uint64_t port_key(uint64_t guid, uint8_t port)
{
	return (uint64_t)guid_hash(guid) ^ port;
}

static unsigned clamp_u(unsigned v, unsigned lo, unsigned hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static void fix_policy(struct health_policy *p)
{
	p->flap_count = clamp_u(p->flap_count, 1, HH_MAX_FLAPS);
	p->unresponsive_n = clamp_u(p->unresponsive_n, 1, HH_MAX_POLLS);
	p->unresponsive_k = clamp_u(p->unresponsive_k, 1, p->unresponsive_n);
	p->max_ports = clamp_u(p->max_ports, 1, 1u << 24);
	p->max_nodes = clamp_u(p->max_nodes, 1, 1u << 24);
	p->max_trap_lids = clamp_u(p->max_trap_lids, 1, 65536);
}

int hh_init(struct health_history *h, const struct health_policy *p)
{
	memset(h, 0, sizeof(*h));
	h->pol = *p;
	fix_policy(&h->pol);
	guidmap_init(&h->port_map);
	guidmap_init(&h->node_map);
	guidmap_init(&h->trap_map);
	return 0;
}

void hh_free(struct health_history *h)
{
	free(h->ports);
	free(h->nodes);
	free(h->traps);
	guidmap_free(&h->port_map);
	guidmap_free(&h->node_map);
	guidmap_free(&h->trap_map);
	memset(h, 0, sizeof(*h));
}

/*
 * A generic bounded table: entries of `size` bytes in *arr, n of them,
 * room for *cap; `map` indexes them by key.  key_of and seen_of read an
 * entry's key and last_seen.
 */
struct table {
	void **arr;
	size_t *n, *cap, size, max;
	struct guidmap *map;
	uint64_t (*key_of)(const void *e);
	double (*seen_of)(const void *e);
};

static void *entry(const struct table *t, size_t i)
{
	return (char *)*t->arr + i * t->size;
}

/* Remove entry i: the last one moves into its place. */
static void table_remove(struct table *t, size_t i)
{
	size_t last = *t->n - 1;

	guidmap_remove(t->map, t->key_of(entry(t, i)));
	if (i != last) {
		memcpy(entry(t, i), entry(t, last), t->size);
		guidmap_insert(t->map, t->key_of(entry(t, i)), (uint32_t)i);
	}
	(*t->n)--;
}

static size_t oldest(const struct table *t)
{
	size_t o = 0;

	for (size_t i = 1; i < *t->n; i++)
		if (t->seen_of(entry(t, i)) < t->seen_of(entry(t, o)))
			o = i;
	return o;
}

/* A new zeroed entry for `key` (the oldest dropped when full), or NULL
 * when out of memory.  *evicted counts drops. */
static void *table_add(struct table *t, uint64_t key, unsigned *evicted)
{
	void *e;

	while (*t->n >= t->max) {
		table_remove(t, oldest(t));
		(*evicted)++;
	}
	if (*t->n == *t->cap) {
		size_t cap = *t->cap ? *t->cap * 2 : 64;
		void *na;

		if (cap > t->max)
			cap = t->max;
		na = realloc(*t->arr, cap * t->size);
		if (!na)
			return NULL;
		*t->arr = na;
		*t->cap = cap;
	}
	if (guidmap_insert(t->map, key, (uint32_t)*t->n) < 0)
		return NULL;
	e = entry(t, (*t->n)++);
	memset(e, 0, t->size);
	return e;
}

static uint64_t pkey_of(const void *e)
{
	const struct hh_port *p = e;

	return port_key(p->guid, p->port);
}
static double pseen_of(const void *e) { return ((const struct hh_port *)e)->last_seen; }
static uint64_t nkey_of(const void *e) { return ((const struct hh_node *)e)->guid; }
static double nseen_of(const void *e) { return ((const struct hh_node *)e)->last_seen; }
static uint64_t tkey_of(const void *e) { return ((const struct hh_trap_src *)e)->lid; }
static double tseen_of(const void *e) { return ((const struct hh_trap_src *)e)->last_seen; }

/* Port table capacity is size_t in the struct; the tables below view it. */
static struct table port_table(struct health_history *h, size_t *cap)
{
	return (struct table){ (void **)&h->ports, &h->n_ports, cap,
		sizeof(struct hh_port), h->pol.max_ports, &h->port_map,
		pkey_of, pseen_of };
}

static struct table node_table(struct health_history *h, size_t *cap)
{
	return (struct table){ (void **)&h->nodes, &h->n_nodes, cap,
		sizeof(struct hh_node), h->pol.max_nodes, &h->node_map,
		nkey_of, nseen_of };
}

static struct table trap_table(struct health_history *h, size_t *cap)
{
	return (struct table){ (void **)&h->traps, &h->n_traps, cap,
		sizeof(struct hh_trap_src), h->pol.max_trap_lids,
		&h->trap_map, tkey_of, tseen_of };
}

const struct hh_port *hh_port_find(const struct health_history *h,
				   uint64_t guid, uint8_t port)
{
	uint32_t i = guidmap_find(&h->port_map, port_key(guid, port));

	if (i == GUIDMAP_NONE || h->ports[i].guid != guid ||
	    h->ports[i].port != port)
		return NULL;
	return &h->ports[i];
}

const struct hh_node *hh_node_find(const struct health_history *h,
				   uint64_t guid)
{
	uint32_t i = guidmap_find(&h->node_map, guid);

	return i == GUIDMAP_NONE ? NULL : &h->nodes[i];
}

const struct hh_trap_src *hh_trap_find(const struct health_history *h,
				       uint16_t lid)
{
	uint32_t i = guidmap_find(&h->trap_map, lid);

	return i == GUIDMAP_NONE ? NULL : &h->traps[i];
}

void hh_link_state(struct health_history *h, uint64_t guid, uint8_t port,
		   bool up, double now)
{
	struct hh_port *p = (struct hh_port *)hh_port_find(h, guid, port);

	if (!p) {
		struct table t = port_table(h, &h->cap_ports);

		if (guidmap_find(&h->port_map, port_key(guid, port)) != GUIDMAP_NONE)
			return;		/* a key collision: not tracked */
		p = table_add(&t, port_key(guid, port), &h->evicted);
		if (!p)
			return;
		p->guid = guid;
		p->port = port;
	}
	if (p->known && !p->up && up) {
		p->flaps[p->flap_head] = now;
		p->flap_head = (uint8_t)((p->flap_head + 1) % HH_MAX_FLAPS);
		if (p->n_flaps < HH_MAX_FLAPS)
			p->n_flaps++;
	}
	if (p->known && p->up != up)
		p->changes++;
	p->known = true;
	p->up = up;
	p->last_seen = now;
}

static struct hh_node *node_get(struct health_history *h, uint64_t guid,
				double now)
{
	struct hh_node *n = (struct hh_node *)hh_node_find(h, guid);

	if (!n) {
		struct table t = node_table(h, &h->cap_nodes);

		n = table_add(&t, guid, &h->evicted);
		if (!n)
			return NULL;
		n->guid = guid;
	}
	n->last_seen = now;
	return n;
}

void hh_node_poll(struct health_history *h, uint64_t guid, bool answered,
		  double now)
{
	struct hh_node *n = node_get(h, guid, now);

	if (!n)
		return;
	n->polls_unanswered = (n->polls_unanswered << 1) | !answered;
	n->polls_refused <<= 1;
	if (n->n_polls < HH_MAX_POLLS)
		n->n_polls++;
}

void hh_set_refused(struct health_history *h, uint64_t guid, double now)
{
	struct hh_node *n = node_get(h, guid, now);

	if (!n)
		return;
	if (!n->n_polls)
		n->n_polls = 1;		/* a refusal before any poll */
	n->polls_refused |= 1;
}

/* The trap bucket a time falls in (times before 0 all in bucket 0 or
 * below: the caller's clock is seconds since some epoch). */
static int64_t bucket_of(double now)
{
	double b = now / HH_TRAP_BUCKET_S;

	if (b < -9e15 || b > 9e15)
		return 0;
	return (int64_t)b - (b < (double)(int64_t)b);
}

void hh_trap(struct health_history *h, uint16_t lid, double now)
{
	struct hh_trap_src *t = (struct hh_trap_src *)hh_trap_find(h, lid);
	int64_t b = bucket_of(now);

	if (!t) {
		struct table tb = trap_table(h, &h->cap_traps);

		t = table_add(&tb, lid, &h->evicted);
		if (!t)
			return;
		t->lid = lid;
		t->bucket = b;
	}
	if (b > t->bucket) {
		int64_t shift = b - t->bucket;

		if (shift >= HH_TRAP_BUCKETS) {
			memset(t->count, 0, sizeof(t->count));
		} else {
			memmove(t->count, t->count + shift,
				(size_t)(HH_TRAP_BUCKETS - shift) * sizeof(t->count[0]));
			memset(t->count + HH_TRAP_BUCKETS - shift, 0,
			       (size_t)shift * sizeof(t->count[0]));
		}
		t->bucket = b;
	}
	/* a clock stepped back counts in the current bucket */
	if (t->count[HH_TRAP_BUCKETS - 1] < UINT32_MAX)
		t->count[HH_TRAP_BUCKETS - 1]++;
	t->last_seen = now;
}

void hh_forget_node(struct health_history *h, uint64_t guid)
{
	struct table pt = port_table(h, &h->cap_ports);
	struct table nt = node_table(h, &h->cap_nodes);
	uint32_t i;

	for (size_t k = h->n_ports; k-- > 0;)
		if (h->ports[k].guid == guid)
			table_remove(&pt, k);
	i = guidmap_find(&h->node_map, guid);
	if (i != GUIDMAP_NONE)
		table_remove(&nt, i);
}

void hh_set_policy(struct health_history *h, const struct health_policy *p)
{
	struct table pt, nt, tt;

	h->pol = *p;
	fix_policy(&h->pol);
	pt = port_table(h, &h->cap_ports);
	nt = node_table(h, &h->cap_nodes);
	tt = trap_table(h, &h->cap_traps);
	while (h->n_ports > h->pol.max_ports)
		table_remove(&pt, oldest(&pt));
	while (h->n_nodes > h->pol.max_nodes)
		table_remove(&nt, oldest(&nt));
	while (h->n_traps > h->pol.max_trap_lids)
		table_remove(&tt, oldest(&tt));
}

bool hh_flapping(const struct health_history *h, const struct hh_port *p,
		 double now, unsigned *value)
{
	unsigned n = 0;

	for (unsigned i = 0; i < p->n_flaps; i++) {
		double t = p->flaps[(p->flap_head + HH_MAX_FLAPS - 1 - i) %
				    HH_MAX_FLAPS];

		if (now - t <= h->pol.flap_window_s)
			n++;
	}
	if (value)
		*value = n;
	return n >= h->pol.flap_count;
}

static unsigned bits_in_last(uint32_t bits, unsigned held, unsigned n)
{
	uint32_t mask;

	if (n > held)
		n = held;
	mask = n >= 32 ? UINT32_MAX : (1u << n) - 1;
	return (unsigned)__builtin_popcount(bits & mask);
}

bool hh_unresponsive(const struct health_history *h, const struct hh_node *n,
		     unsigned *value)
{
	unsigned c = bits_in_last(n->polls_unanswered, n->n_polls,
				  h->pol.unresponsive_n);

	if (value)
		*value = c;
	return c >= h->pol.unresponsive_k;
}

bool hh_refusing(const struct health_history *h, const struct hh_node *n,
		 unsigned *value)
{
	unsigned c = bits_in_last(n->polls_refused, n->n_polls,
				  h->pol.unresponsive_n);

	if (value)
		*value = c;
	return c >= h->pol.unresponsive_k;
}

bool hh_noisy(const struct health_history *h, const struct hh_trap_src *t,
	      double now, unsigned *per_minute)
{
	int64_t b = bucket_of(now);
	int64_t age = b - t->bucket;
	uint64_t sum = 0;

	/* buckets that have slid out of the minute since the last trap */
	for (int64_t i = age < 0 ? 0 : age; i < HH_TRAP_BUCKETS; i++)
		sum += t->count[i];
	if (per_minute)
		*per_minute = sum > UINT32_MAX ? UINT32_MAX : (unsigned)sum;
	return h->pol.trap_rate && sum > h->pol.trap_rate;
}
