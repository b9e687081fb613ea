/*
 * findings.c - the findings set (findings.h): an array of open findings
 * and an open-addressing hash of their keys, rebuilt at the end of each
 * round after the closed ones are compacted away.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "health/findings.h"
#include "model/guidmap.h"

static const struct {
	const char *name;
	unsigned group;
} kinds[HF_N_KINDS] = {
	[HF_LINK_NOT_ACTIVE]	 = { "link_not_active", HF_G_SWEEP },
	[HF_LINK_DEGRADED]	 = { "link_degraded", HF_G_SWEEP },
	[HF_LINK_BELOW_REF]	 = { "link_below_reference", HF_G_SWEEP },
	[HF_LINK_BELOW_EXPECTED] = { "link_below_expected", HF_G_SWEEP },
	[HF_REF_MISSING_NODE]	 = { "missing_node", HF_G_SWEEP },
	[HF_REF_UNEXPECTED_NODE] = { "unexpected_node", HF_G_SWEEP },
	[HF_REF_MISSING_LINK]	 = { "missing_link", HF_G_SWEEP },
	[HF_REF_UNEXPECTED_LINK] = { "unexpected_link", HF_G_SWEEP },
	[HF_REF_CABLE_MOVED]	 = { "cable_moved", HF_G_SWEEP },
	[HF_REF_DESC_CHANGED]	 = { "description_changed", HF_G_SWEEP },
	[HF_DUP_DESC]		 = { "duplicate_description", HF_G_SWEEP },
	[HF_DUP_GUID]		 = { "duplicate_guid", HF_G_SWEEP },
	[HF_LID_CONFLICT]	 = { "lid_conflict", HF_G_SWEEP },
	[HF_ROGUE_SM]		 = { "untrusted_sm", HF_G_SWEEP },
	[HF_BAD_MKEY]		 = { "bad_m_key", HF_G_SWEEP },
	[HF_ERROR_RATE]		 = { "error_rate", HF_G_COUNTERS },
	[HF_CONGESTION]		 = { "congestion", HF_G_COUNTERS },
	[HF_FLAPPING]		 = { "flapping", HF_G_HISTORY },
	[HF_UNRESPONSIVE]	 = { "unresponsive", HF_G_HISTORY },
	[HF_NOISY]		 = { "noisy", HF_G_HISTORY },
	[HF_REFUSING_SETS]	 = { "refusing_sets", HF_G_HISTORY },
	[HF_ROUTING_CYCLE]	 = { "routing_cycle", HF_G_ROUTING },
	[HF_ROUTING_UNREACHABLE] = { "routing_unreachable", HF_G_ROUTING },
};

const char *hf_kind_name(enum hf_kind k)
{
	return (unsigned)k < HF_N_KINDS ? kinds[k].name : "?";
}

unsigned hf_kind_group(enum hf_kind k)
{
	return (unsigned)k < HF_N_KINDS ? kinds[k].group : 0;
}

const char *hf_severity_name(enum hf_severity s)
{
	switch (s) {
	case HF_WARNING:  return "warning";
	case HF_CRITICAL: return "critical";
	default:          return "?";
	}
}

static size_t key_hash(const struct hf_finding *f)
{
	return guid_hash(f->guid ^ ((uint64_t)f->kind << 56) ^
			 ((uint64_t)f->port << 48) ^
			 ((uint64_t)f->detail * 0x9e3779b97f4a7c15ull));
}

/* Slot of f's key: holds index + 1 of the finding, or 0. */
static size_t slot_of(const struct hf_set *s, const struct hf_finding *f)
{
	size_t mask = s->hash_size - 1;
	size_t i = key_hash(f) & mask;

	while (s->hash[i] && !hf_same(&s->f[s->hash[i] - 1], f))
		i = (i + 1) & mask;
	return i;
}

static void rehash(struct hf_set *s)
{
	memset(s->hash, 0, s->hash_size * sizeof(*s->hash));
	for (size_t i = 0; i < s->n; i++)
		s->hash[slot_of(s, &s->f[i])] = (uint32_t)(i + 1);
}

int hf_set_init(struct hf_set *s, size_t cap)
{
	memset(s, 0, sizeof(*s));
	if (!cap || cap > UINT32_MAX / 4)
		return -EINVAL;
	s->hash_size = 1;
	while (s->hash_size < cap * 2)
		s->hash_size <<= 1;
	s->f = calloc(cap, sizeof(*s->f));
	s->seen = calloc(cap, 1);
	s->fresh = calloc(cap, 1);
	s->hash = calloc(s->hash_size, sizeof(*s->hash));
	if (!s->f || !s->seen || !s->fresh || !s->hash) {
		hf_set_free(s);
		return -ENOMEM;
	}
	s->cap = cap;
	return 0;
}

void hf_set_free(struct hf_set *s)
{
	free(s->f);
	free(s->seen);
	free(s->fresh);
	free(s->hash);
	memset(s, 0, sizeof(*s));
}

void hf_set_begin(struct hf_set *s, unsigned groups)
{
	s->round_groups = groups & HF_G_ALL;
	if (s->cap)
		memset(s->seen, 0, s->cap);
}

const struct hf_finding *hf_set_find(const struct hf_set *s,
				     const struct hf_finding *key)
{
	size_t i;

	if (!s->n)
		return NULL;
	i = slot_of(s, key);
	return s->hash[i] ? &s->f[s->hash[i] - 1] : NULL;
}

/* Copy what a report says into entry `e` (times excepted). */
static void take(struct hf_finding *e, const struct hf_finding *f)
{
	double first = e->first_seen;

	*e = *f;
	e->first_seen = first;
	e->desc[sizeof(e->desc) - 1] = '\0';
	e->peer_desc[sizeof(e->peer_desc) - 1] = '\0';
	e->text[sizeof(e->text) - 1] = '\0';
}

int hf_set_report(struct hf_set *s, const struct hf_finding *f, double now)
{
	size_t slot, i;

	if (!s->round_groups || !s->cap)
		return -EINVAL;
	if (!(hf_kind_group(f->kind) & s->round_groups) ||
	    (unsigned)f->severity >= HF_N_SEVERITIES)
		return -EINVAL;
	slot = slot_of(s, f);
	if (s->hash[slot]) {
		i = s->hash[slot] - 1;
		take(&s->f[i], f);
		s->f[i].last_seen = now;
		s->seen[i] = 1;
		return 0;
	}
	if (s->n == s->cap) {
		s->dropped++;
		return -ENOSPC;
	}
	i = s->n++;
	s->f[i].first_seen = now;
	take(&s->f[i], f);
	s->f[i].last_seen = now;
	s->seen[i] = 1;
	s->fresh[i] = 1;
	s->hash[slot] = (uint32_t)(i + 1);
	return 1;
}

void hf_set_end(struct hf_set *s, double now, hf_change_cb cb, void *arg)
{
	size_t out = 0;

	(void)now;
	if (!s->round_groups)
		return;
	for (size_t i = 0; i < s->n; i++) {
		bool in_round = hf_kind_group(s->f[i].kind) & s->round_groups;

		if (in_round && !s->seen[i]) {
			if (cb)
				cb(arg, &s->f[i], false);
			continue;
		}
		if (s->fresh[i] && cb)
			cb(arg, &s->f[i], true);
		if (out != i)
			s->f[out] = s->f[i];
		s->fresh[out] = 0;
		out++;
	}
	for (size_t i = out; i < s->n; i++)
		s->fresh[i] = 0;
	s->n = out;
	s->round_groups = 0;
	rehash(s);
}

void hf_set_summary(const struct hf_set *s, struct hf_summary *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (size_t i = 0; i < s->n; i++)
		if ((unsigned)s->f[i].severity < HF_N_SEVERITIES)
			sum->count[s->f[i].severity]++;
	sum->dropped = s->dropped;
}
