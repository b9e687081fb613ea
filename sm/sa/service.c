/*
 * service.c - the state the SA keeps for its clients: registered
 * ServiceRecords (with leases) and event subscriptions (InformInfo).
 *
 * Both are small lists: a subnet has tens of services and subscribers,
 * not thousands.  Nothing here sends MADs; sa.c answers and reports.
 *
 * Every request is untrusted, so both lists have owners and bounds:
 *  - a ServiceRecord belongs to the port its ServiceGID names.  Only that
 *    port (the requester's GID, from its LID through the fabric model) or
 *    a trusted requester (SM_Key, 15.2.2.1) may create, replace or delete
 *    it (15.2.5.14; OpenSM checks only P_Keys, which lets any host take
 *    over another's record).  Set and Delete must name the record
 *    identity (ServiceID, ServiceGID, ServiceP_Key): a Delete never
 *    removes more than that one record.
 *  - leases are cut to max_lease seconds (the answer says the lease
 *    granted), so an "infinite" lease cannot hold a slot for ever.
 *  - a port may hold services_per_port records and subscriptions_per_port
 *    subscriptions, besides the global caps; over them the answer is
 *    NO_RESOURCES.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sm/sa/sa.h"
#include "sm/sa/service.h"

/* ServiceRecord components (15.2.5.14): 0-6 the fixed fields, then one per
 * ServiceData8/16/32/64 element. */
static struct sa_field service_fields[37];

static void service_fields_init(void)
{
	static const struct sa_field fixed[] = {
		{ 0, 64 }, { 64, 128 }, { 192, 16 }, { 208, 16 }, { 224, 32 },
		{ 256, 128 }, { 384, 512 },
	};
	unsigned n = 0;

	if (service_fields[1].bits)
		return;
	for (unsigned i = 0; i < 7; i++)
		service_fields[n++] = fixed[i];
	for (unsigned i = 0; i < 16; i++)
		service_fields[n++] = (struct sa_field){ (uint16_t)(896 + 8 * i), 8 };
	for (unsigned i = 0; i < 8; i++)
		service_fields[n++] = (struct sa_field){ (uint16_t)(1024 + 16 * i), 16 };
	for (unsigned i = 0; i < 4; i++)
		service_fields[n++] = (struct sa_field){ (uint16_t)(1152 + 32 * i), 32 };
	for (unsigned i = 0; i < 2; i++)
		service_fields[n++] = (struct sa_field){ (uint16_t)(1280 + 64 * i), 64 };
}

/* InformInfoRecord components (15.2.5.12, 13.4.8.3). */
static const struct sa_field inform_record_fields[] = {
	{ 0, 128 }, { 128, 16 }, { 144, 48 },		/* GID, Enum, resv */
	{ 192, 128 }, { 320, 16 }, { 336, 16 }, { 352, 16 }, /* GID, LID range, resv */
	{ 368, 8 }, { 376, 8 }, { 384, 16 }, { 400, 16 }, /* IsGeneric Subscribe Type Trap */
	{ 416, 24 }, { 440, 3 }, { 443, 5 },		/* QPN resv RespTime */
	{ 448, 8 }, { 456, 24 },			/* resv Producer */
};

struct service {
	struct sa_service_record rec;
	ev_tstamp expires;		/* 0: never */
	uint8_t by[16];			/* GID of the port whose quota it uses */
};

struct subscriber {
	struct sa_inform_info ii;
	uint8_t gid[16];		/* subscriber's GID */
	struct mad_addr to;
	uint16_t enumr;
};

struct sa_state {
	struct service *svc;
	size_t n_svc;
	struct subscriber *sub;
	size_t n_sub;
	uint16_t next_enum;
	struct sa_state_limits lim;
	struct sa_state_stats stats;
};

struct sa_state *sa_state_new(const struct sa_state_limits *lim)
{
	struct sa_state *st;

	service_fields_init();
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	if (lim)
		st->lim = *lim;
	if (!st->lim.max_services)
		st->lim.max_services = SA_DEF_MAX_SERVICES;
	if (!st->lim.services_per_port)
		st->lim.services_per_port = SA_DEF_SERVICES_PER_PORT;
	if (!st->lim.max_lease)
		st->lim.max_lease = SA_DEF_MAX_LEASE;
	if (!st->lim.max_subscriptions)
		st->lim.max_subscriptions = SA_DEF_MAX_SUBSCRIPTIONS;
	if (!st->lim.subscriptions_per_port)
		st->lim.subscriptions_per_port = SA_DEF_SUBSCRIPTIONS_PER_PORT;
	return st;
}

const struct sa_state_stats *sa_state_stats(const struct sa_state *st)
{
	return &st->stats;
}

const struct sa_state_limits *sa_state_limits(const struct sa_state *st)
{
	return &st->lim;
}

/* The port GUID of a GID (its interface ID), host order. */
static uint64_t gid_guid(const uint8_t gid[16])
{
	uint64_t g;

	memcpy(&g, gid + 8, 8);
	return be64toh(g);
}

void sa_state_free(struct sa_state *st)
{
	if (!st)
		return;
	free(st->svc);
	free(st->sub);
	free(st);
}

size_t sa_state_services(const struct sa_state *st)
{
	return st->n_svc;
}

size_t sa_state_subscribers(const struct sa_state *st)
{
	return st->n_sub;
}

void sa_service_expire(struct sa_state *st, ev_tstamp now)
{
	size_t j = 0;

	for (size_t i = 0; i < st->n_svc; i++)
		if (!st->svc[i].expires || st->svc[i].expires > now)
			st->svc[j++] = st->svc[i];
	st->n_svc = j;
}

/* The record identity: ServiceID, ServiceGID, ServiceP_Key (15.2.5.14). */
static bool same_rid(const struct sa_service_record *a,
		     const struct sa_service_record *b)
{
	return a->service_id == b->service_id && a->service_pkey == b->service_pkey &&
	       !memcmp(a->service_gid, b->service_gid, 16);
}

static const uint64_t RID_MASK = 0x7;	/* ServiceID, GID, P_Key */

/*
 * Records charged to the port of `gid`.  A record is charged to the port
 * that registered it: its own ServiceGID's port, or a trusted requester's
 * port when that one registered it for another GID.  The SM_Key is the
 * SM's well-known default (SA_SM_KEY_TRUSTED), so trust lets a host act
 * for any port but not hold more than its own quota: before, one host
 * with that key filled the global table by naming 64 made-up GIDs.
 */
static size_t services_of(const struct sa_state *st, const uint8_t gid[16])
{
	size_t n = 0;

	for (size_t i = 0; i < st->n_svc; i++)
		if (!memcmp(st->svc[i].by, gid, 16))
			n++;
	return n;
}

/*
 * May this request change the record with ServiceGID `gid`?  The owner
 * is the port the GID names; a trusted requester may act for any port.
 */
static bool may_change(const struct sa_query *q, const uint8_t requester_gid[16],
		       const uint8_t gid[16])
{
	static const uint8_t zero[16];

	if (q->sm_key == SA_SM_KEY_TRUSTED)
		return true;
	return memcmp(requester_gid, zero, 16) && !memcmp(requester_gid, gid, 16);
}

/*
 * Append a record to an answer.  ServiceKey goes only to trusted
 * requesters (15.2.5.14; OpenSM zeroes it in every other answer): it is
 * the registering client's secret, not something any host may read.
 */
static int answer_add(const struct sa_query *q, struct sa_table *out,
		      const struct sa_service_record *rec)
{
	struct sa_service_record r = *rec;

	if (q->sm_key != SA_SM_KEY_TRUSTED)
		memset(r.service_key, 0, sizeof(r.service_key));
	return sa_table_add(out, &r);
}

/*
 * A Get/GetTable answer gives the lease that remains (whole seconds,
 * rounded up): ServiceLease is the lease period remaining (15.2.5.14).
 * OpenSM 3.3.23 counts it down internally and answers the lease as
 * registered.  A standby that copies the table (sm/ha/sync.c) then
 * knows when each record runs out.
 */
static int answer_remaining(const struct sa_query *q, struct sa_table *out,
			    const struct service *s, ev_tstamp now)
{
	struct sa_service_record r = s->rec;

	if (s->expires) {
		double left = s->expires - now;
		uint32_t sec = left <= 0 ? 0 : (uint32_t)left;

		if (left > sec)
			sec++;
		r.service_lease = htobe32(sec);
	}
	return answer_add(q, out, &r);
}

static int service_set(struct sa_state *st, const struct sa_query *q,
		       const uint8_t requester_gid[16], ev_tstamp now,
		       struct sa_table *out)
{
	static const uint8_t zero[16];
	const struct sa_service_record *t = (const void *)q->tmpl;
	struct service *s = NULL;

	/* A registration names its service completely. */
	if ((q->comp_mask & RID_MASK) != RID_MASK ||
	    !memcmp(t->service_gid, zero, 16))
		return -SA_STATUS_INSUF_COMPONENTS;
	if (!may_change(q, requester_gid, t->service_gid)) {
		st->stats.svc_not_owner++;
		return -SA_STATUS_REQ_INVALID;
	}
	for (size_t i = 0; i < st->n_svc && !s; i++)
		if (same_rid(&st->svc[i].rec, t))
			s = &st->svc[i];
	if (!s) {
		if (st->n_svc >= st->lim.max_services) {
			st->stats.svc_full++;
			return -SA_STATUS_NO_RESOURCES;
		}
		/* Charged to the requester (the ServiceGID's port unless a
		 * trusted requester acts for it; a trusted one the model
		 * does not know is charged to the ServiceGID). */
		const uint8_t *by = memcmp(requester_gid, zero, 16) ?
				    requester_gid : t->service_gid;
		if (services_of(st, by) >= st->lim.services_per_port) {
			st->stats.svc_quota++;
			return -SA_STATUS_NO_RESOURCES;
		}
		struct service *n = realloc(st->svc, (st->n_svc + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		st->svc = n;
		s = &st->svc[st->n_svc++];
		memcpy(s->by, by, 16);
	}
	s->rec = *t;
	/* ServiceLease not given: infinite, as OpenSM takes it; then cut. */
	uint32_t lease = q->comp_mask & (1u << 4) ? be32toh(t->service_lease)
						  : SA_LEASE_INFINITE;
	if (st->lim.max_lease != SA_LEASE_INFINITE && lease > st->lim.max_lease) {
		lease = st->lim.max_lease;
		st->stats.svc_lease_cut++;
	}
	s->rec.service_lease = htobe32(lease);
	s->expires = lease == SA_LEASE_INFINITE ? 0 : now + lease;
	return answer_add(q, out, &s->rec);
}

/*
 * Delete removes the one record the identity names (and that also
 * matches any further component given); a Delete without the identity is
 * refused rather than taken as "every record".
 */
static int service_delete(struct sa_state *st, const struct sa_query *q,
			  const uint8_t requester_gid[16], struct sa_table *out)
{
	const struct sa_service_record *t = (const void *)q->tmpl;
	int rc;

	if ((q->comp_mask & RID_MASK) != RID_MASK)
		return -SA_STATUS_INSUF_COMPONENTS;
	if (!may_change(q, requester_gid, t->service_gid)) {
		st->stats.svc_not_owner++;
		return -SA_STATUS_REQ_INVALID;
	}
	for (size_t i = 0; i < st->n_svc; i++) {
		if (!same_rid(&st->svc[i].rec, t) ||
		    !sa_match(service_fields, 37, q->comp_mask, &st->svc[i].rec, t))
			continue;
		if ((rc = answer_add(q, out, &st->svc[i].rec)) < 0)
			return rc;
		st->svc[i] = st->svc[--st->n_svc];
		return 0;
	}
	return 0;	/* the agent answers NO_RECORDS */
}

int sa_service_request(struct sa_state *st, const struct sa_query *q,
		       const uint8_t requester_gid[16], ev_tstamp now,
		       struct sa_table *out)
{
	const struct sa_service_record *t = (const void *)q->tmpl;
	int rc;

	if (!sa_mask_valid(37, q->comp_mask))
		return -SA_STATUS_REQ_INVALID;
	sa_service_expire(st, now);
	switch (q->method) {
	case MAD_METHOD_SET:
		return service_set(st, q, requester_gid, now, out);
	case MAD_METHOD_GET:
	case MAD_METHOD_GET_TABLE:
		for (size_t i = 0; i < st->n_svc; i++)
			if (sa_match(service_fields, 37, q->comp_mask,
				     &st->svc[i].rec, t) &&
			    (rc = answer_remaining(q, out, &st->svc[i], now)) < 0)
				return rc;
		return 0;
	case MAD_METHOD_DELETE:
		return service_delete(st, q, requester_gid, out);
	default:
		return -MAD_STATUS_METHOD_UNSUPP;
	}
}

static bool same_subscription(const struct subscriber *s,
			      const struct sa_inform_info *ii,
			      const struct mad_addr *to)
{
	return s->to.lid == to->lid && s->to.qpn == to->qpn &&
	       s->ii.trap_num == ii->trap_num && s->ii.type == ii->type &&
	       s->ii.is_generic == ii->is_generic &&
	       s->ii.lid_range_begin == ii->lid_range_begin &&
	       s->ii.lid_range_end == ii->lid_range_end &&
	       !memcmp(s->ii.gid, ii->gid, 16);
}

int sa_inform_set(struct sa_state *st, const struct sa_query *q,
		  const struct mad_addr *from, const uint8_t subscriber_gid[16],
		  struct sa_table *out)
{
	const struct sa_inform_info *ii = (const void *)q->tmpl;
	struct mad_addr to = *from;
	uint32_t qpn = be32toh(ii->qpn_resp_time) >> 8;

	if (q->method != MAD_METHOD_SET)
		return -MAD_STATUS_METHOD_UNSUPP;
	if (ii->subscribe > 1 || !ii->is_generic)
		return -SA_STATUS_REQ_INVALID;	/* vendor traps: not forwarded */
	/* Reports go to the QP the subscriber names (or it came from). */
	if (qpn)
		to.qpn = qpn;
	to.qkey = 0x80010000u;
	if (ii->subscribe) {
		static const uint8_t zero[16];
		size_t mine = 0;

		/* A subscriber the fabric model does not know has no port to
		 * count against (OpenSM refuses it the same way). */
		if (!memcmp(subscriber_gid, zero, 16))
			return -SA_STATUS_REQ_INVALID;
		for (size_t i = 0; i < st->n_sub; i++) {
			if (same_subscription(&st->sub[i], ii, &to))
				return sa_table_add(out, ii);	/* already */
			if (!memcmp(st->sub[i].gid, subscriber_gid, 16))
				mine++;
		}
		if (st->n_sub >= st->lim.max_subscriptions) {
			st->stats.sub_full++;
			return -SA_STATUS_NO_RESOURCES;
		}
		if (mine >= st->lim.subscriptions_per_port) {
			st->stats.sub_quota++;
			return -SA_STATUS_NO_RESOURCES;
		}
		struct subscriber *n = realloc(st->sub, (st->n_sub + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		st->sub = n;
		struct subscriber *s = &st->sub[st->n_sub++];
		memset(s, 0, sizeof(*s));
		s->ii = *ii;
		s->to = to;
		s->enumr = st->next_enum++;
		memcpy(s->gid, subscriber_gid, 16);
	} else {
		size_t j = 0;
		bool found = false;

		for (size_t i = 0; i < st->n_sub; i++) {
			if (same_subscription(&st->sub[i], ii, &to)) {
				found = true;
				continue;
			}
			st->sub[j++] = st->sub[i];
		}
		st->n_sub = j;
		if (!found)
			return -SA_STATUS_REQ_INVALID;
	}
	return sa_table_add(out, ii);
}

int sa_inform_records(const struct sa_state *st, const struct sa_query *q,
		      struct sa_table *out)
{
	const unsigned n = sizeof(inform_record_fields) / sizeof(inform_record_fields[0]);
	int rc;

	if (!sa_mask_valid(n, q->comp_mask))
		return -SA_STATUS_REQ_INVALID;
	for (size_t i = 0; i < st->n_sub; i++) {
		struct sa_inform_info_record r;

		memset(&r, 0, sizeof(r));
		memcpy(r.subscriber_gid, st->sub[i].gid, 16);
		r.subscriber_enum = htobe16(st->sub[i].enumr);
		r.inform_info = st->sub[i].ii;
		/* The QPN Reports go to, also when the subscriber left it 0
		 * (its request's QP): a standby's copy needs it. */
		if (!(be32toh(r.inform_info.qpn_resp_time) >> 8))
			r.inform_info.qpn_resp_time |=
				htobe32((st->sub[i].to.qpn & 0xffffffu) << 8);
		if (sa_match(inform_record_fields, n, q->comp_mask, &r, q->tmpl) &&
		    (rc = sa_table_add(out, &r)) < 0)
			return rc;
	}
	return 0;
}

void sa_subscribers_for(const struct sa_state *st, unsigned trap_num,
			unsigned type, uint16_t lid,
			void (*cb)(void *arg, const struct mad_addr *to),
			void *arg)
{
	for (size_t i = 0; i < st->n_sub; i++) {
		const struct sa_inform_info *ii = &st->sub[i].ii;
		unsigned t = be16toh(ii->trap_num), ty = be16toh(ii->type);
		unsigned lo = be16toh(ii->lid_range_begin);
		unsigned hi = be16toh(ii->lid_range_end);

		if (t != 0xffff && t != trap_num)
			continue;
		if (ty != 0xffff && ty != type)
			continue;
		/* LIDRangeBegin 0xffff: all LIDs (13.4.8.3) */
		if (lo != 0xffff && (lid < lo || lid > (hi ? hi : lo)))
			continue;
		cb(arg, &st->sub[i].to);
	}
}

size_t sa_state_prune(struct sa_state *st,
		      bool (*present)(void *arg, uint64_t guid, uint16_t lid),
		      void *arg)
{
	size_t j = 0, gone;

	for (size_t i = 0; i < st->n_sub; i++)
		if (present(arg, gid_guid(st->sub[i].gid), st->sub[i].to.lid))
			st->sub[j++] = st->sub[i];
	gone = st->n_sub - j;
	st->n_sub = j;
	st->stats.sub_pruned += gone;
	return gone;
}

size_t sa_inform_drop_dest(struct sa_state *st, const struct mad_addr *to)
{
	size_t j = 0, gone;

	for (size_t i = 0; i < st->n_sub; i++)
		if (st->sub[i].to.lid != to->lid || st->sub[i].to.qpn != to->qpn)
			st->sub[j++] = st->sub[i];
	gone = st->n_sub - j;
	st->n_sub = j;
	st->stats.sub_dropped += gone;
	return gone;
}

size_t sa_inform_dest_count(const struct sa_state *st, const struct mad_addr *to)
{
	size_t n = 0;

	for (size_t i = 0; i < st->n_sub; i++)
		n += st->sub[i].to.lid == to->lid && st->sub[i].to.qpn == to->qpn;
	return n;
}

/*
 * Imports of a standby's copy (sm/ha/sync.c) at takeover.  Both keep
 * the table's caps and per-port quotas, so a copy can never hold more
 * than the SA itself would have taken.
 */
int sa_service_import(struct sa_state *st, const struct sa_service_record *rec,
		      uint32_t remaining, ev_tstamp now)
{
	static const uint8_t zero[16];
	struct service *s = NULL;

	if (!memcmp(rec->service_gid, zero, 16))
		return -EINVAL;
	if (remaining != SA_LEASE_INFINITE && st->lim.max_lease != SA_LEASE_INFINITE &&
	    remaining > st->lim.max_lease)
		remaining = st->lim.max_lease;
	for (size_t i = 0; i < st->n_svc && !s; i++)
		if (same_rid(&st->svc[i].rec, rec))
			s = &st->svc[i];
	if (!s) {
		if (st->n_svc >= st->lim.max_services)
			return -ENOBUFS;
		if (services_of(st, rec->service_gid) >= st->lim.services_per_port)
			return -EDQUOT;
		struct service *n = realloc(st->svc, (st->n_svc + 1) * sizeof(*n));
		if (!n)
			return -ENOMEM;
		st->svc = n;
		s = &st->svc[st->n_svc++];
		/* Charged to its ServiceGID's port: the copy does not say
		 * which port registered it. */
		memcpy(s->by, rec->service_gid, 16);
	}
	s->rec = *rec;
	s->rec.service_lease = htobe32(remaining);
	s->expires = remaining == SA_LEASE_INFINITE ? 0 : now + remaining;
	return 0;
}

/* Order of a bulk import: ServiceGID, ServiceID, ServiceP_Key, then
 * position (the last of equal identities wins). */
struct import_ref {
	const struct sa_service_record *rec;
	uint32_t lease;
	size_t pos;
};

static int cmp_import(const void *a, const void *b)
{
	const struct import_ref *x = a, *y = b;
	int c = memcmp(x->rec->service_gid, y->rec->service_gid, 16);

	if (c)
		return c;
	if (x->rec->service_id != y->rec->service_id)
		return be64toh(x->rec->service_id) < be64toh(y->rec->service_id) ? -1 : 1;
	if (x->rec->service_pkey != y->rec->service_pkey)
		return be16toh(x->rec->service_pkey) < be16toh(y->rec->service_pkey) ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int sa_service_import_all(struct sa_state *st, const struct sa_service_record *recs,
			  const uint32_t *remaining, size_t n, ev_tstamp now,
			  size_t *imported, size_t *refused)
{
	struct import_ref *ref;
	size_t i, k, per_gid = 0;
	int rc = 0;

	*imported = *refused = 0;
	if (st->n_svc) {
		/* Records held already: one by one (each checks them all). */
		for (i = 0; i < n; i++) {
			rc = sa_service_import(st, &recs[i], remaining[i], now);
			if (rc == -ENOMEM)
				return rc;
			if (rc < 0)
				(*refused)++;
			else
				(*imported)++;
		}
		return 0;
	}
	/* An empty table (a new master): sorted, so that duplicates and
	 * each port's quota are found in one pass. */
	if (!n)
		return 0;
	ref = malloc(n * sizeof(*ref));
	if (!ref)
		return -ENOMEM;
	{
		size_t room = n < st->lim.max_services ? n : st->lim.max_services;
		struct service *nv = realloc(st->svc, room * sizeof(*nv));

		if (!nv) {
			free(ref);
			return -ENOMEM;
		}
		st->svc = nv;
	}
	for (i = 0; i < n; i++)
		ref[i] = (struct import_ref){ &recs[i], remaining[i], i };
	qsort(ref, n, sizeof(*ref), cmp_import);
	for (i = 0; i < n; i = k) {
		const struct sa_service_record *r;
		static const uint8_t zero[16];
		struct service *s;

		/* The last of a run of equal identities. */
		for (k = i + 1; k < n && same_rid(ref[k].rec, ref[i].rec); k++)
			(*refused)++;
		r = ref[k - 1].rec;
		if (i == 0 || memcmp(r->service_gid, ref[i - 1].rec->service_gid, 16))
			per_gid = 0;
		if (!memcmp(r->service_gid, zero, 16) ||
		    st->n_svc >= st->lim.max_services ||
		    per_gid >= st->lim.services_per_port) {
			(*refused)++;
			continue;
		}
		uint32_t lease = ref[k - 1].lease;
		if (lease != SA_LEASE_INFINITE && st->lim.max_lease != SA_LEASE_INFINITE &&
		    lease > st->lim.max_lease)
			lease = st->lim.max_lease;
		s = &st->svc[st->n_svc++];
		s->rec = *r;
		s->rec.service_lease = htobe32(lease);
		s->expires = lease == SA_LEASE_INFINITE ? 0 : now + lease;
		memcpy(s->by, r->service_gid, 16);
		per_gid++;
		(*imported)++;
	}
	free(ref);
	return rc;
}

int sa_inform_import(struct sa_state *st, const struct sa_inform_info *ii,
		     const uint8_t subscriber_gid[16], const struct mad_addr *to)
{
	static const uint8_t zero[16];
	size_t mine = 0;

	if (ii->subscribe != 1 || !ii->is_generic || !memcmp(subscriber_gid, zero, 16) ||
	    !to->lid)
		return -EINVAL;
	for (size_t i = 0; i < st->n_sub; i++) {
		if (same_subscription(&st->sub[i], ii, to))
			return 0;
		if (!memcmp(st->sub[i].gid, subscriber_gid, 16))
			mine++;
	}
	if (st->n_sub >= st->lim.max_subscriptions)
		return -ENOBUFS;
	if (mine >= st->lim.subscriptions_per_port)
		return -EDQUOT;
	struct subscriber *n = realloc(st->sub, (st->n_sub + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	st->sub = n;
	struct subscriber *s = &st->sub[st->n_sub++];
	memset(s, 0, sizeof(*s));
	s->ii = *ii;
	s->to = *to;
	s->enumr = st->next_enum++;
	memcpy(s->gid, subscriber_gid, 16);
	return 0;
}
