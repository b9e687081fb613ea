/*
 * sync.h - a standby's copy of the master's SA state (sm/ha/sync.c).
 *
 * While STANDBY, the SM asks the master's SA, as any trusted SA client
 * (SM_Key SA_SM_KEY_TRUSTED), for four tables with GetTable and RMPP:
 * NodeRecords (port GUID -> LID: the guid2lid), MCMemberRecords (every
 * group with every member and JoinState), ServiceRecords (with the lease
 * that remains) and InformInfoRecords (subscriptions).  A round runs
 * every STANDBY_SYNC_INTERVAL seconds; a round that completes replaces
 * the copy, one that fails keeps the last good one.  At takeover
 * (standby_sync_adopt()) the copy is installed into the new master: the
 * LIDs into the guid2lid cache (the first sweep keeps them), groups with
 * their MLIDs and members, services, subscriptions.
 *
 * Everything the master sends is untrusted like any SA input: each table
 * is capped (the SA's own limits), each record checked (lengths, ranges,
 * a GID that names no port of the master's NodeRecords is dropped).
 *
 * The copy itself (sb_copy_*) is a library: no I/O, no logging.
 */
#ifndef IBSM_SM_STANDBY_SYNC_H
#define IBSM_SM_STANDBY_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <ev.h>

#include "mad/engine.h"
#include "mad/sa_wire.h"

#define STANDBY_SYNC_INTERVAL	2.0	/* s between rounds */
/* A copy at most this old (s) when installed counts as in sync. */
#define STANDBY_SYNC_FRESH	10.0
#define SB_MAX_LIDS		49151	/* unicast LIDs 1..0xBFFF */

struct sm;

struct sb_lid {
	uint64_t guid;			/* port GUID */
	uint16_t lid;			/* base LID */
};

struct sb_limits {
	size_t max_lids;		/* NodeRecords (0: SB_MAX_LIDS) */
	size_t max_members;		/* MCMemberRecords (0: the group
					 * table's default groups x 64) */
	size_t max_services;		/* 0: SA_DEF_MAX_SERVICES */
	size_t max_subscriptions;	/* 0: SA_DEF_MAX_SUBSCRIPTIONS */
	uint64_t subnet_prefix;		/* a GID's prefix must be this */
};

struct sb_copy {
	struct sb_lid *lids;		/* sorted by GUID */
	size_t n_lids;
	struct sa_mcmember_record *mcm;
	size_t n_mcm;
	struct sa_service_record *svc;	/* lease: what remained ... */
	size_t n_svc;
	ev_tstamp svc_at;		/* ... at this time */
	struct sa_inform_info_record *inf;
	size_t n_inf;
	uint64_t dropped;		/* records that failed a check */
	uint64_t over;			/* records beyond a cap */
};

void sb_copy_free(struct sb_copy *c);

/*
 * Take one table of the master (the payload of a GetTable answer,
 * records `stride` bytes apart) into the copy.  NodeRecords first: the
 * other tables' GIDs are checked against them.  0, or -EPROTO (stride
 * shorter than the record: the table is refused), -EINVAL (attribute),
 * -ENOMEM.  Bad records are counted in c->dropped, records beyond a cap
 * in c->over.
 */
int sb_copy_take(struct sb_copy *c, const struct sb_limits *lim,
		 uint16_t attr_id, const uint8_t *payload, size_t len,
		 size_t stride, ev_tstamp now);

/* The LID of a port GUID in the copy, 0 when none. */
uint16_t sb_copy_lid(const struct sb_copy *c, uint64_t guid);

struct sb_adopt_report {
	unsigned lids, groups, members, services, subscriptions;
	unsigned refused;		/* taken by the copy, refused here */
};

/*
 * Install a copy into `sm`: LIDs (base .. base + 2^lmc - 1, the SM's
 * LMC) into sm->lids (made when missing), groups and members into
 * sm->mc, services and subscriptions into the SA's state (when the SA
 * runs).  Things the new master holds already stay; what its limits
 * refuse is counted in r->refused.  0 or -ENOMEM.
 */
int sb_copy_install(struct sm *sm, const struct sb_copy *c, ev_tstamp now,
		    struct sb_adopt_report *r);

/* One line per record, for the hidden debug mode of sm/main.c
 * (IBSM_DEBUG_COPY_FROM) and tests/fabric/test_standby_sync.sh. */
void sb_copy_print(const struct sb_copy *c, FILE *fp);

/* At exit (sm/main.c): stop and free, whatever the state. */
void standby_sync_free(struct sm *sm);

/* The copy held now (NULL: none yet), for tests and the daemon's log. */
const struct sb_copy *standby_sync_copy(const struct sm *sm);

/* What `ibsmctl status` and the STATUS= line say about the copy. */
struct standby_sync_info {
	bool running;			/* rounds are being fetched */
	bool have;			/* a complete round is held */
	ev_tstamp at;			/* when that round ended */
	uint16_t from_lid;		/* the master it was fetched from */
	size_t lids, members, services, subscriptions;
	uint64_t dropped, over;		/* records refused by the checks */
	unsigned rounds, failures;	/* complete rounds; failed in a row */
};

/* false (and *out zeroed) when no copy was ever started. */
bool standby_sync_info(const struct sm *sm, struct standby_sync_info *out);

/*
 * sm/sa/sa.c: an SA MAD that matched no request and none of the SA's
 * own transfers: a later segment of a table being fetched.  true when
 * it was one.
 */
bool standby_sync_unmatched(struct sm *sm, const void *mad, size_t len,
			    const struct mad_addr *from);

#endif /* IBSM_SM_STANDBY_SYNC_H */
