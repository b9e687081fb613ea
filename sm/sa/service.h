/*
 * service.h - ServiceRecords and InformInfo subscriptions the SA keeps
 * (sm/sa/service.c).  All functions return 0 or a negative MAD/SA status
 * (-SA_STATUS_*, -MAD_STATUS_*) or -ENOMEM; records to answer with are
 * appended to `out`.
 *
 * Every table is bounded twice: a global cap, and a quota per port (the
 * port GUID of the owner), so that one host cannot take every slot.
 */
#ifndef IBSM_SM_SA_SERVICE_H
#define IBSM_SM_SA_SERVICE_H

#include <ev.h>

#include "config/limits.h"
#include "mad/engine.h"
#include "sm/sa/sa.h"

#define SA_LEASE_INFINITE		0xffffffffu

/*
 * The SM_Key a trusted requester puts in the SA header (15.2.2.1): the
 * SM's own key, which ibsm keeps at 1 (sm/sa/tables.c serves
 * P_KeyTableRecords to it).  A trusted request may register or delete a
 * ServiceRecord for any port.
 */
#define SA_SM_KEY_TRUSTED		1ull

struct sa_state_limits {
	unsigned max_services;
	unsigned services_per_port;
	uint32_t max_lease;		/* SA_LEASE_INFINITE: no cap */
	unsigned max_subscriptions;
	unsigned subscriptions_per_port;
};

/* Refusals and removals, for the SA's log summary. */
struct sa_state_stats {
	uint64_t svc_not_owner;		/* Set/Delete of another port's record */
	uint64_t svc_quota;		/* Set over the per-port quota */
	uint64_t svc_full;		/* Set over the global cap */
	uint64_t svc_lease_cut;		/* leases cut to max_lease */
	uint64_t sub_quota;		/* InformInfo over the per-port quota */
	uint64_t sub_full;		/* InformInfo over the global cap */
	uint64_t sub_pruned;		/* removed: port left the fabric */
	uint64_t sub_dropped;		/* removed: Reports never answered */
};

struct sa_state;

/* lim NULL: the SA_DEF_* limits; a zero field takes its default too. */
struct sa_state *sa_state_new(const struct sa_state_limits *lim);
void sa_state_free(struct sa_state *st);
size_t sa_state_services(const struct sa_state *st);
size_t sa_state_subscribers(const struct sa_state *st);
const struct sa_state_stats *sa_state_stats(const struct sa_state *st);
const struct sa_state_limits *sa_state_limits(const struct sa_state *st);

/*
 * ServiceRecord Set (register/refresh), Get, GetTable, Delete.
 * requester_gid is the GID of the port the request came from (zero when
 * its LID is not in the fabric model): unless q->sm_key is
 * SA_SM_KEY_TRUSTED, Set and Delete take only records whose ServiceGID is
 * that GID.
 */
int sa_service_request(struct sa_state *st, const struct sa_query *q,
		       const uint8_t requester_gid[16], ev_tstamp now,
		       struct sa_table *out);
/* Drop services whose lease has run out. */
void sa_service_expire(struct sa_state *st, ev_tstamp now);

/* InformInfo Set: subscribe (1) or unsubscribe (0) the requester, whose
 * GID (zero: unknown, refused) names the port the quota counts. */
int sa_inform_set(struct sa_state *st, const struct sa_query *q,
		  const struct mad_addr *from, const uint8_t subscriber_gid[16],
		  struct sa_table *out);
/* InformInfoRecord Get/GetTable. */
int sa_inform_records(const struct sa_state *st, const struct sa_query *q,
		      struct sa_table *out);

/* Call cb for every subscriber that wants trap `trap_num` of `type`
 * about `lid`. */
void sa_subscribers_for(const struct sa_state *st, unsigned trap_num,
			unsigned type, uint16_t lid,
			void (*cb)(void *arg, const struct mad_addr *to),
			void *arg);

/*
 * After a heavy sweep: remove the subscriptions of ports that left the
 * fabric, i.e. for which present(arg, port GUID, LID Reports go to) is
 * false.  ServiceRecords stay until their lease runs out, as in OpenSM.
 * Returns how many subscriptions went.
 */
size_t sa_state_prune(struct sa_state *st,
		      bool (*present)(void *arg, uint64_t guid, uint16_t lid),
		      void *arg);

/* Remove every subscription whose Reports go to `to` (LID and QPN): the
 * subscriber stopped answering them.  Returns how many went. */
size_t sa_inform_drop_dest(struct sa_state *st, const struct mad_addr *to);

/* How many subscriptions send their Reports to `to` (LID and QPN). */
size_t sa_inform_dest_count(const struct sa_state *st, const struct mad_addr *to);

/*
 * A standby's copy at takeover (sm/ha/sync.c): a ServiceRecord with
 * the lease that remained on the old master (SA_LEASE_INFINITE: none),
 * charged to its ServiceGID's port; a subscription whose Reports go to
 * `to`.  0, or -EINVAL, -ENOBUFS (the cap), -EDQUOT (the port's quota),
 * -ENOMEM.  A record already held is replaced (service) or kept
 * (subscription).
 */
int sa_service_import(struct sa_state *st, const struct sa_service_record *rec,
		      uint32_t remaining, ev_tstamp now);
/*
 * Every service of a copy at once: into an empty table in O(n log n)
 * (sorted: a duplicate identity keeps its last record, each port's quota
 * and the cap hold), else one by one.  0 or -ENOMEM; *imported and
 * *refused count the records.
 */
int sa_service_import_all(struct sa_state *st, const struct sa_service_record *recs,
			  const uint32_t *remaining, size_t n, ev_tstamp now,
			  size_t *imported, size_t *refused);
int sa_inform_import(struct sa_state *st, const struct sa_inform_info *ii,
		     const uint8_t subscriber_gid[16], const struct mad_addr *to);

#endif /* IBSM_SM_SA_SERVICE_H */
