/*
 * mcmember.h - MCMemberRecord (IB spec 15.2.5.17, 15.4.3, 15.4.4): the
 * SA's multicast joins, leaves and queries over the group table of
 * sm/mcast/groups.c (sm/sa/mcmember.c).
 */
#ifndef IBSM_SM_SA_MCMEMBER_H
#define IBSM_SM_SA_MCMEMBER_H

#include "sm/mcast/mcast.h"
#include "sm/sa/sa.h"

/* MCMemberRecord has 18 components (MCM_* in mad/sa_wire.h). */
#define MCM_NFIELDS	18

/*
 * Log codes of multicast (08xx, see ibsm(8) MULTICAST), for the lines a
 * host causes, which log_ratelimited() keys by code.
 */
enum {
	MCM_LOG_PORT_CAPS	= 801,	/* join refused: port rate or MTU */
	MCM_LOG_REFUSED		= 802,	/* join refused: rules, parameters */
	MCM_LOG_NO_ROOM		= 803,	/* join refused: limits, MLIDs */
	MCM_LOG_LEAVE		= 804,	/* leave refused */
	/* 805, 806: pre-created groups skipped or without room, written
	 * "ERR 0805: ...", "ERR 0806: ..." by sa_mcast_precreate() */
	MCM_LOG_NOMEM		= 807,	/* out of memory */
	MCM_LOG_GROUP		= 808,	/* group created or deleted (info) */
};

/* What a request did, for the daemon to act on and log. */
struct mcm_outcome {
	bool     changed;		/* members or groups changed */
	unsigned trap;			/* MC_TRAP_CREATED/_DELETED or 0 */
	uint8_t  trap_mgid[16];
	unsigned code;			/* MCM_LOG_* of a refusal, or 0 */
	char     why[200];		/* the refusal, for the log */
};

/*
 * One MCMemberRecord request (Set = join or create, Delete = leave, Get,
 * GetTable) against `mc`, with the model of `v` naming ports and P_Keys.
 * The requester is q->requester_lid; q->sm_key == SA_SM_KEY_TRUSTED makes
 * it trusted.  Returns 0 with the answer's records in `out`, or a
 * negative SA/MAD status (-SA_STATUS_*), or -ENOMEM.
 */
int sa_mcmember_request(struct mc_table *mc, const struct sa_view *v,
			const struct sa_query *q, struct mcm_outcome *o,
			struct sa_table *out);

struct sm;
/* The daemon's side: serve a request (logs, traps, mcast_changed()). */
int sa_mcmember_serve(struct sm *sm, const struct sa_query *q,
		      struct sa_table *out);
/* Pre-create the partitions' groups (at start, after a reload). */
void sa_mcast_precreate(struct sm *sm);
/* After a heavy sweep: ports that left the fabric leave every group. */
void sa_mcast_prune(struct sm *sm);
/* The view the SA answers from (sm/sa/sa.c). */
void sa_view_of(const struct sm *sm, struct sa_view *v);

#endif /* IBSM_SM_SA_MCMEMBER_H */
