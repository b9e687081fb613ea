/*
 * service.h - ServiceRecords and InformInfo subscriptions the SA keeps
 * (sm/sa/service.c).  All functions return 0 or a negative MAD/SA status
 * (-SA_STATUS_*, -MAD_STATUS_*) or -ENOMEM; records to answer with are
 * appended to `out`.
 */
#ifndef IBSM_SM_SA_SERVICE_H
#define IBSM_SM_SA_SERVICE_H

#include <ev.h>

#include "mad/engine.h"
#include "sm/sa/sa.h"

struct sa_state;

struct sa_state *sa_state_new(void);
void sa_state_free(struct sa_state *st);
size_t sa_state_services(const struct sa_state *st);
size_t sa_state_subscribers(const struct sa_state *st);

/* ServiceRecord Set (register/refresh), Get, GetTable, Delete. */
int sa_service_request(struct sa_state *st, const struct sa_query *q,
		       ev_tstamp now, struct sa_table *out);
/* Drop services whose lease has run out. */
void sa_service_expire(struct sa_state *st, ev_tstamp now);

/* InformInfo Set: subscribe (1) or unsubscribe (0) the requester. */
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

#endif /* IBSM_SM_SA_SERVICE_H */
