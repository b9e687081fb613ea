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

#include "config/limits.h"
#include "mad/sa_wire.h"
#include "routing/routing.h"
#include "model/fabric.h"

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

/*
 * The records of one answer, appended one by one.  Each takes `stride`
 * bytes of buf (0: rec_size), the record then zeros: the agent sets the
 * wire stride (AttributeOffset x 8, 15.2.1.1) so that buf is the RMPP
 * payload itself, sent without a copy.
 *
 * Memory: buf never grows beyond max_bytes (0: no limit); an
 * add or reserve that would need more fails with -ENOBUFS and leaves in
 * `wanted` the bytes it needed (max_ever tells a generator whether
 * asking again later could help).  A table with count_only set stores
 * nothing: it counts the records added (a generator's first pass over an
 * answer that may be large, see sm/sa/path.c).
 */
struct sa_table {
	uint8_t *buf;
	size_t   rec_size;
	size_t   count, cap;
	size_t   stride;		/* bytes per record in buf; 0: rec_size */
	size_t   max_bytes;		/* buf's limit; 0: none */
	size_t   max_ever;		/* the limit were nothing else held; 0: unknown */
	size_t   wanted;		/* bytes the last -ENOBUFS asked for */
	bool     count_only;		/* count records, store none */
};

/* Append one record (rec_size bytes).  Returns 0, -ENOMEM or -ENOBUFS. */
int sa_table_add(struct sa_table *t, const void *rec);
/* Make room for `n` records in all (exactly, when it must grow): 0,
 * -ENOMEM or -ENOBUFS (over max_bytes). */
int sa_table_reserve(struct sa_table *t, size_t n);
/* Bytes of buf (its capacity), what the table holds. */
static inline size_t sa_table_bytes(const struct sa_table *t)
{
	return t->cap * (t->stride ? t->stride : t->rec_size);
}

/*
 * Bounded work.  Every request the SA answers from
 * the model carries a budget of work units: one per candidate a generator
 * examines (a node, a port, a port pair, a LID pair of two LMC ranges, a
 * table block) and one per hop a PathRecord walks, whether or not a record
 * comes of it.  A request that spends its budget is answered
 * NO_RESOURCES (15.2.4 table 194: "insufficient resources to complete the
 * request"), never a table cut short that a client would take for the
 * whole answer; OpenSM answers NO_RESOURCES too when it cannot build a
 * table.  The budget is --sa-work-budget (struct sm_config; its default
 * SA_WORK_BUDGET_DEFAULT in config/limits.h).
 *
 * The work is also done in slices of at most SA_SLICE_UNITS units: a
 * generator that has spent its slice saves where it is in the cursor and
 * returns SA_MORE; the agent calls it again with the same query and table
 * from the loop's idle time (sm/sa/sa.c), so no request holds the loop
 * for longer than one slice.  SA_SLICE_UNITS is about 1-2 ms of path
 * walks on the 1,152-host fat tree (see doc/design.md).
 */
#define SA_SLICE_UNITS		20000u		/* units per slice */
#define SA_MORE			1		/* generator: call again */

struct sa_work {
	uint64_t used;			/* units spent, all slices so far */
	uint64_t budget;		/* 0: no limit */
	uint64_t slice_end;		/* yield at this `used`; 0: never */
	uint32_t pos[4];		/* the generator's cursor, 0 at start */
	uint32_t phase;			/* the generator's pass (path.c), 0 at start */
	uint64_t full_budget;		/* path.c: the budget of a counted query */
};

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
	struct sa_work *work;		/* NULL: no budget, no slices */
};

/* Charge `n` units to the query: false when that spends its budget. */
static inline bool sa_charge(const struct sa_query *q, uint64_t n)
{
	struct sa_work *w = q->work;

	if (!w)
		return true;
	w->used += n;
	return !w->budget || w->used <= w->budget;
}

/* Has the query used up its slice (time to save the cursor and yield)? */
static inline bool sa_slice_over(const struct sa_query *q)
{
	const struct sa_work *w = q->work;

	return w && w->slice_end && w->used >= w->slice_end;
}

/* What a generator sees: the subnet as of the last SUBNET UP. */
struct sl2vl_images;
struct qos_policy;
struct qos_members;

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
	uint64_t gen;			/* f->gen when the request began */
	/* SL-to-VL tables as programmed (sm/program.h); NULL: none read */
	const struct sl2vl_images *sl2vl;
	/* The QoS policy in force and its binding to f (sm/qos_policy.c):
	 * PathRecord's levels; NULL with qos FALSE or no policy. */
	const struct qos_policy *qos;
	const struct qos_members *qos_members;
	/* The SL of each 15-bit P_Key (partitions.conf sl=); NULL: all 0 */
	const uint8_t *part_sl;
	bool qos_on;			/* qos TRUE: SLs sent to VL 15 dropped */
	bool mcast_off;			/* disable_multicast: no UD multicast */
	bool mfttop_off;		/* use_mfttop FALSE */
	bool no_join_check;		/* mcgroup_join_validation FALSE */
	bool no_ipoib_check;		/* ipoib_mcgroup_creation_validation FALSE */
	bool rates_original;		/* use_original_extended_sa_rates_only */
};

/*
 * A record type the SA serves.  gen() appends every record of the subnet
 * that matches the query's template under its component mask (use
 * sa_match()); it returns 0, or a negative SA/MAD status to answer with
 * (-SA_STATUS_REQ_INVALID, -SA_STATUS_INSUF_COMPONENTS, ...), or -ENOMEM,
 * or SA_MORE when q->work's slice is spent: call it again with the same
 * query, table and work (it resumes from work->pos).  Generators charge
 * their work with sa_charge() and fail with -SA_STATUS_NO_RESOURCES when
 * the budget is spent.
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

/*
 * sm/sa/request.c: the checks every SA request goes through before any
 * work, with no I/O (the agent and tests/fuzz/fuzz_sa.c share them).
 * `mad` is `len` bytes from the network.  Returns 0 with *q and *a set
 * (q->tmpl points into `mad`; q->work is NULL), the MAD/SA status to
 * answer with (> 0), or -1: not a request to answer at all (a short MAD).
 */
int sa_request_parse(const void *mad, size_t len, uint16_t requester_lid,
		     struct sa_query *q, const struct sa_attr **a);
/* Attributes whose records live in the SA itself (sm/sa/service.c). */
bool sa_attr_stateful(uint16_t attr_id);

/*
 * Bytes SA answers hold now (tables being built, RMPP payloads in flight)
 * and the most they held at once since sa_start(): what the byte caps
 * (--sa-answer-bytes) bound.
 */
void sa_answer_bytes(const struct sm *sm, size_t *now, size_t *peak);

/*
 * SA answers by attribute and status (MAD status, SA status in bits 8-14;
 * BUSY 0x0001, NO_RESOURCES 0x0100 for a request over its work budget or
 * byte caps), for the metrics: *out points to the agent's table of the
 * returned number of entries.  Pairs beyond SA_ANSWER_COUNTS - 1 are
 * counted in the last entry as attribute 0xffff, status 0xffff.
 * *requests: requests received; *dropped: those too short or malformed
 * to answer at all.  0 entries before sa_start().
 */
#define SA_ANSWER_COUNTS	64
struct sa_answer_count {
	uint16_t attr_id, status;
	uint64_t n;
};
size_t sa_answer_counts(const struct sm *sm, const struct sa_answer_count **out,
			uint64_t *requests, uint64_t *dropped);
/* Requests dropped for a non-zero SM_Key that is not sa_key. */
uint64_t sa_bad_key_drops(const struct sm *sm);

/* sm/sa/sa.c: register the SA agent on the engine.  Returns 0 or -errno. */
/* The agent's services and subscriptions (NULL before sa_start()). */
struct sa_state *sa_agent_state(struct sm *sm);
int sa_start(struct sm *sm);
void sa_stop(struct sm *sm);

#endif /* IBSM_SM_SA_SA_H */
