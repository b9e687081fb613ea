/*
 * fuzz_standby_copy.c - libFuzzer target: a standby's copy of a master's
 * SA tables (sm/ha/sync.c), the master being the attacker.
 *
 * Input: byte 0 picks the table (NodeRecord, MCMemberRecord,
 * ServiceRecord, InformInfoRecord), byte 1 the AttributeOffset in 8-byte
 * words, the rest is the table's payload.  Before it, a fixed NodeRecord
 * table of four ports is taken, so that GIDs can name ports.  The copy
 * is then installed into an SM with a group table and a guid2lid cache.
 * Checked besides the sanitizers: no table beyond its cap; LIDs sorted,
 * unique and unicast; every record kept passes the copy's own checks
 * (MLID multicast, JoinState set, the GID's GUID a port of the copy);
 * every group installed holds the MLID some record of the copy gave its
 * MGID, and the install counts what it did.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa_wire.h"
#include "mad/wire.h"
#include "sm/lid.h"
#include "sm/mcast/mcast.h"
#include "sm/sm.h"
#include "sm/ha/sync.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PREFIX	0xfe80000000000000ull
#define CAP	16

static const uint16_t attrs[4] = {
	SA_ATTR_NODE_RECORD, SA_ATTR_MCMEMBER_RECORD, SA_ATTR_SERVICE_RECORD,
	SA_ATTR_INFORM_INFO_RECORD,
};

static void base_nodes(struct sb_copy *c, const struct sb_limits *lim)
{
	struct sa_node_record r[4];

	memset(r, 0, sizeof(r));
	for (int i = 0; i < 4; i++) {
		r[i].lid = htobe16((uint16_t)(i + 1));
		r[i].node_info.node_type = NODE_TYPE_CA;
		r[i].node_info.port_guid = htobe64(0x1000u + (unsigned)i);
	}
	if (sb_copy_take(c, lim, SA_ATTR_NODE_RECORD, (const uint8_t *)r,
			 sizeof(r), sizeof(r[0]), 0) != 0 || c->n_lids != 4)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sb_limits lim = { .max_lids = CAP, .max_members = CAP,
				 .max_services = CAP, .max_subscriptions = CAP,
				 .subnet_prefix = PREFIX };
	struct sb_copy c = { 0 };
	struct sb_adopt_report r;
	struct sm *sm;
	int rc;

	if (size < 2)
		return 0;
	base_nodes(&c, &lim);
	rc = sb_copy_take(&c, &lim, attrs[data[0] & 3], data + 2, size - 2,
			  (size_t)data[1] * 8, 0);
	if (rc != 0 && rc != -EPROTO && rc != -ENOMEM)
		abort();
	if (c.n_lids > CAP || c.n_mcm > CAP || c.n_svc > CAP || c.n_inf > CAP)
		abort();
	for (size_t i = 0; i < c.n_lids; i++) {
		if (!c.lids[i].lid || c.lids[i].lid > 0xbfff || !c.lids[i].guid)
			abort();
		if (i && c.lids[i - 1].guid >= c.lids[i].guid)
			abort();
	}
	for (size_t i = 0; i < c.n_mcm; i++) {
		uint64_t g;
		uint16_t mlid = be16toh(c.mcm[i].mlid);

		memcpy(&g, c.mcm[i].port_gid + 8, 8);
		if (mlid < MC_MLID_MIN || mlid > MC_MLID_MAX ||
		    !(c.mcm[i].scope_state & 0x0f) ||
		    !sb_copy_lid(&c, be64toh(g)))
			abort();
	}

	sm = calloc(1, sizeof(*sm));
	if (!sm)
		abort();
	sm->cfg.subnet_prefix = PREFIX;
	sm->mc = mc_table_new(NULL);
	if (!sm->mc)
		abort();
	rc = sb_copy_install(sm, &c, 0, &r);
	if (rc != 0 && rc != -ENOMEM)
		abort();
	if (rc == 0) {
		if (r.lids + r.refused < c.n_lids || r.groups != mc_table_count(sm->mc))
			abort();
		for (size_t i = 0; i < mc_table_count(sm->mc); i++) {
			const struct mc_group *g = mc_table_at(sm->mc, i);
			bool found = false;

			for (size_t k = 0; k < c.n_mcm && !found; k++)
				found = !memcmp(c.mcm[k].mgid, g->mgid, 16) &&
					be16toh(c.mcm[k].mlid) == g->mlid;
			if (!found)
				abort();
		}
	}
	mc_table_free(sm->mc);
	lid_cache_free(sm->lids);
	free(sm);
	sb_copy_free(&c);
	return 0;
}
