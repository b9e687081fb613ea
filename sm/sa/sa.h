/*
 * sa.h - Subnet Administration: the agent that answers class 0x03 MADs
 * (sm/sa/sa.c) and the record generators it calls (sm/sa/records.c).
 *
 * The SA answers from the fabric model of the last completed heavy sweep
 * (struct sm.fabric and .routes), never from a sweep in progress, so a
 * query during a sweep sees the subnet as it was at the last SUBNET UP.
 */
#ifndef IBSM_SM_SA_SA_H
#define IBSM_SM_SA_SA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/sa_wire.h"
#include "routing/routing.h"
#include "sm/fabric.h"

struct sm;

/*
 * One component of a record for ComponentMask matching: component i of
 * the record (bit i of the mask) is `bits` bits starting `bit_off` bits
 * into the record, in wire order (15.2.1.1: components are numbered in
 * the order fields appear, reserved fields included).
 */
struct sa_field {
	uint16_t bit_off;
	uint16_t bits;
};

/* The records of one answer, appended one by one. */
struct sa_table {
	uint8_t *buf;
	size_t   rec_size;
	size_t   count, cap;
};

/* Append one record (rec_size bytes).  Returns 0 or -ENOMEM. */
int sa_table_add(struct sa_table *t, const void *rec);

/* What a request asks for, validated by the agent. */
struct sa_query {
	uint8_t  method;		/* MAD_METHOD_GET, _GET_TABLE, ... */
	uint16_t attr_id;
	uint32_t attr_mod;
	uint64_t comp_mask;
	const uint8_t *tmpl;		/* the request's record (SA data) */
	size_t   tmpl_len;		/* SA_DATA_SIZE */
	uint16_t requester_lid;
	uint64_t sm_key;		/* SA header SM_Key: 1 = trusted (15.2.2.1) */
};

/* What a generator sees: the subnet as of the last SUBNET UP. */
struct sa_view {
	const struct fabric *f;
	const struct routing_result *routes;	/* may have n_nodes == 0 */
	uint64_t sm_port_guid;
	uint16_t sm_lid;
	uint8_t  sm_priority, sm_state;
	uint32_t act_count;
	uint64_t subnet_prefix;
	uint8_t  subnet_timeout;
	uint8_t  packet_life_time;	/* SwitchInfo:LifeTimeValue we program */
};

/*
 * A record type the SA serves.  gen() appends every record of the subnet
 * that matches the query's template under its component mask (use
 * sa_match()); it returns 0, or a negative SA/MAD status to answer with
 * (-SA_STATUS_REQ_INVALID, -SA_STATUS_INSUF_COMPONENTS, ...), or -ENOMEM.
 */
struct sa_attr {
	uint16_t attr_id;
	const char *name;
	size_t   rec_size;
	const struct sa_field *fields;
	unsigned nfields;
	int (*gen)(const struct sa_view *v, const struct sa_query *q,
		   struct sa_table *out);
};

/* The record types sm/sa/records.c provides, and a lookup. */
const struct sa_attr *sa_attr_find(uint16_t attr_id);

/* Does `rec` match `tmpl` in every component selected by `mask`? */
bool sa_match(const struct sa_field *fields, unsigned nfields, uint64_t mask,
	      const void *rec, const void *tmpl);
/* A mask that selects components the record does not have. */
bool sa_mask_valid(unsigned nfields, uint64_t mask);

/*
 * Forward a notice (an SMP trap the SM received, or one the SM makes
 * itself, e.g. 64/65 GID in/out of service) to every subscriber whose
 * InformInfo asks for it, as an SA Report re-sent until ReportResp.
 * `lid` is the LID the notice is about (LIDRange filtering).
 */
void sa_report_notice(struct sm *sm, const struct smp_notice *n, uint16_t lid);

/*
 * A heavy sweep published a new model (sm->fabric): remove the
 * subscriptions of ports that left it or whose LID moved.
 */
void sa_fabric_changed(struct sm *sm);

/* sm/sa/sa.c: register the SA agent on the engine.  Returns 0 or -errno. */
int sa_start(struct sm *sm);
void sa_stop(struct sm *sm);

#endif /* IBSM_SM_SA_SA_H */
