/*
 * sm/program/memo.c - what a port answered to the PortInfo it was sent, so
 * a port that keeps a value of its own is not set again every sweep (see
 * sm/program.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sm/program/internal.h"

void pi_key_of(const struct smp_port_info *pi, struct pi_key *k)
{
	memset(k, 0, sizeof(*k));
	k->prefix = pi->gid_prefix;
	k->mkey = pi->mkey;
	k->mkey_lease = pi->mkey_lease_period;
	k->mkey_prot = (uint8_t)pi_mkey_prot(pi);
	k->lid = pi->lid;
	k->sm_lid = pi->master_sm_lid;
	k->lmc = (uint8_t)pi_lmc(pi);
	k->sm_sl = (uint8_t)pi_sm_sl(pi);
	k->timeout = (uint8_t)pi_subnet_timeout(pi);
	k->mtu = (uint8_t)pi_neighbor_mtu(pi);
	k->vls = (uint8_t)pi_op_vls(pi);
	k->hoq = pi->vl_stall_hoq_life & 0x1f;
	k->enforce = pi->op_vls_enforce & PI_PART_ENFORCE_MASK;
}

struct port_memo {
	uint64_t guid;			/* node GUID; 0 = empty */
	uint8_t  pn;
	struct pi_key want, got;
};

struct port_memos {
	struct port_memo *slot;
	size_t size, used;
};

struct port_memos *port_memos_new(void)
{
	return calloc(1, sizeof(struct port_memos));
}

void port_memos_free(struct port_memos *m)
{
	if (m)
		free(m->slot);
	free(m);
}

static size_t memo_slot(uint64_t guid, uint8_t pn, size_t size)
{
	return guid_hash(guid * 257 + pn) & (size - 1);
}

static struct port_memo *memo_find(const struct port_memos *m, uint64_t guid,
				   uint8_t pn)
{
	if (!m->size)
		return NULL;
	for (size_t i = memo_slot(guid, pn, m->size);; i = (i + 1) & (m->size - 1)) {
		struct port_memo *s = &m->slot[i];

		if (!s->guid)
			return NULL;
		if (s->guid == guid && s->pn == pn)
			return s;
	}
}

static int memo_grow(struct port_memos *m)
{
	size_t size = m->size ? m->size * 2 : 256;
	struct port_memo *slot = calloc(size, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < m->size; i++) {
		struct port_memo *s = &m->slot[i];

		if (!s->guid)
			continue;
		size_t j = memo_slot(s->guid, s->pn, size);
		while (slot[j].guid)
			j = (j + 1) & (size - 1);
		slot[j] = *s;
	}
	free(m->slot);
	m->slot = slot;
	m->size = size;
	return 0;
}

void port_memos_record(struct port_memos *m, uint64_t guid, uint8_t pn,
		       const struct pi_key *want, const struct pi_key *got)
{
	struct port_memo *s = memo_find(m, guid, pn);

	if (!s) {
		/* Filled up to 3/4: 80 bytes a slot, one per port (70,000
		 * ports on an 11,664-host fabric: 10 MB, not 21). */
		if ((m->used + 1) * 4 > m->size * 3 && memo_grow(m) < 0)
			return;		/* no memo: the port is just re-sent */
		size_t i = memo_slot(guid, pn, m->size);
		while (m->slot[i].guid)
			i = (i + 1) & (m->size - 1);
		s = &m->slot[i];
		s->guid = guid;
		s->pn = pn;
		m->used++;
	}
	s->want = *want;
	s->got = *got;
}

bool port_memos_settled(const struct port_memos *m, uint64_t guid, uint8_t pn,
			const struct pi_key *want, const struct pi_key *now)
{
	const struct port_memo *s = memo_find(m, guid, pn);

	return s && !memcmp(&s->want, want, sizeof(*want)) &&
	       !memcmp(&s->got, now, sizeof(*now));
}
