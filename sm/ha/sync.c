/*
 * sync.c - the standby's copy of the master's SA state (see sync.h).
 *
 * Why through the SA: it is the master's own view, it needs nothing from
 * the master beyond what every SA client gets, and an OpenSM master
 * answers the same queries.  A round asks for the four tables one after
 * the other (one GetTable in flight, so a round costs the master four
 * requests every STANDBY_SYNC_INTERVAL seconds) and is bounded: each
 * answer may be at most its cap of records (larger ones are STOPped by
 * the RMPP receiver), and a round that lasts longer than the interval
 * lets the timer skip a turn.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/rmpp_recv.h"
#include "mad/wire.h"
#include "sm/lid.h"
#include "sm/mcast/mcast.h"
#include "sm/notify.h"
#include "sm/sa/sa.h"
#include "sm/sa/service.h"
#include "sm/sm.h"
#include "sm/ha/sync.h"

#define SA_QKEY	0x80010000u	/* the well-known GSI Q_Key */

/* ------------------------------------------------------------- the copy */

void sb_copy_free(struct sb_copy *c)
{
	free(c->lids);
	free(c->mcm);
	free(c->svc);
	free(c->inf);
	memset(c, 0, sizeof(*c));
}

static int cmp_lid(const void *a, const void *b)
{
	const struct sb_lid *x = a, *y = b;

	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

uint16_t sb_copy_lid(const struct sb_copy *c, uint64_t guid)
{
	struct sb_lid key = { .guid = guid };
	const struct sb_lid *l;

	if (!c->n_lids)
		return 0;
	l = bsearch(&key, c->lids, c->n_lids, sizeof(*l), cmp_lid);
	return l ? l->lid : 0;
}

static uint64_t gid_guid(const uint8_t gid[16])
{
	uint64_t v;

	memcpy(&v, gid + 8, 8);
	return be64toh(v);
}

/* A GID of a port the master knows, on our subnet. */
static bool gid_is_port(const struct sb_copy *c, const struct sb_limits *lim,
			const uint8_t gid[16])
{
	uint64_t prefix;

	memcpy(&prefix, gid, 8);
	return be64toh(prefix) == lim->subnet_prefix &&
	       sb_copy_lid(c, gid_guid(gid)) != 0;
}

static bool node_ok(const struct sa_node_record *r)
{
	uint16_t lid = be16toh(r->lid);
	uint8_t t = r->node_info.node_type;

	return lid >= 1 && lid <= 0xbfff && r->node_info.port_guid &&
	       t >= NODE_TYPE_CA && t <= NODE_TYPE_ROUTER;
}

static bool mcm_ok(const struct sb_copy *c, const struct sb_limits *lim,
		   const struct sa_mcmember_record *r)
{
	uint16_t mlid = be16toh(r->mlid);
	uint8_t js = r->scope_state & 0x0f;
	uint8_t mtu = r->mtu & 0x3f, rate = r->rate & 0x3f;

	return r->mgid[0] == 0xff && mlid >= MC_MLID_MIN && mlid <= MC_MLID_MAX &&
	       js != 0 && mtu >= 1 && mtu <= 5 && rate >= 2 && rate <= 22 &&
	       (be16toh(r->pkey) & 0x7fff) && gid_is_port(c, lim, r->port_gid);
}

static bool svc_ok(const struct sb_copy *c, const struct sb_limits *lim,
		   const struct sa_service_record *r)
{
	return gid_is_port(c, lim, r->service_gid) &&
	       (be16toh(r->service_pkey) & 0x7fff);
}

static bool inf_ok(const struct sb_copy *c, const struct sb_limits *lim,
		   const struct sa_inform_info_record *r)
{
	const struct sa_inform_info *ii = &r->inform_info;
	uint32_t qpn = be32toh(ii->qpn_resp_time) >> 8;
	uint16_t b = be16toh(ii->lid_range_begin), e = be16toh(ii->lid_range_end);

	return ii->is_generic == 1 && ii->subscribe == 1 && qpn >= 1 &&
	       (b == 0xffff || b <= e || !e) && gid_is_port(c, lim, r->subscriber_gid);
}

int sb_copy_take(struct sb_copy *c, const struct sb_limits *lim,
		 uint16_t attr_id, const uint8_t *payload, size_t len,
		 size_t stride, ev_tstamp now)
{
	size_t rec_size, cap, n;
	void **arr;
	size_t *count;

	switch (attr_id) {
	case SA_ATTR_NODE_RECORD:
		rec_size = sizeof(struct sa_node_record);
		cap = lim->max_lids ? lim->max_lids : SB_MAX_LIDS;
		arr = (void **)&c->lids;
		count = &c->n_lids;
		break;
	case SA_ATTR_MCMEMBER_RECORD:
		rec_size = sizeof(struct sa_mcmember_record);
		cap = lim->max_members ? lim->max_members : MC_DEF_MAX_GROUPS * 64;
		arr = (void **)&c->mcm;
		count = &c->n_mcm;
		break;
	case SA_ATTR_SERVICE_RECORD:
		rec_size = sizeof(struct sa_service_record);
		cap = lim->max_services ? lim->max_services : SA_DEF_MAX_SERVICES;
		arr = (void **)&c->svc;
		count = &c->n_svc;
		c->svc_at = now;
		break;
	case SA_ATTR_INFORM_INFO_RECORD:
		rec_size = sizeof(struct sa_inform_info_record);
		cap = lim->max_subscriptions ? lim->max_subscriptions
					     : SA_DEF_MAX_SUBSCRIPTIONS;
		arr = (void **)&c->inf;
		count = &c->n_inf;
		break;
	default:
		return -EINVAL;
	}
	if (len == 0)
		return 0;
	if (stride < rec_size)
		return -EPROTO;
	n = len / stride;
	if (len % stride)
		c->dropped++;		/* a cut record at the end */
	if (n > cap) {
		c->over += n - cap;
		n = cap;
	}
	size_t elem = attr_id == SA_ATTR_NODE_RECORD ? sizeof(struct sb_lid) : rec_size;
	uint8_t *out = realloc(*arr, (*count + n) * elem + 1);
	if (!out)
		return -ENOMEM;
	*arr = out;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = payload + i * stride;
		uint8_t *dst = out + *count * elem;
		bool ok;

		switch (attr_id) {
		case SA_ATTR_NODE_RECORD: {
			struct sa_node_record r;

			memcpy(&r, p, sizeof(r));
			ok = node_ok(&r);
			if (ok) {
				struct sb_lid l = {
					.guid = be64toh(r.node_info.port_guid),
					.lid = be16toh(r.lid),
				};
				memcpy(dst, &l, sizeof(l));
			}
			break;
		}
		case SA_ATTR_MCMEMBER_RECORD: {
			struct sa_mcmember_record r;

			memcpy(&r, p, sizeof(r));
			ok = mcm_ok(c, lim, &r);
			if (ok)
				memcpy(dst, &r, sizeof(r));
			break;
		}
		case SA_ATTR_SERVICE_RECORD: {
			struct sa_service_record r;

			memcpy(&r, p, sizeof(r));
			ok = svc_ok(c, lim, &r);
			if (ok)
				memcpy(dst, &r, sizeof(r));
			break;
		}
		default: {
			struct sa_inform_info_record r;

			memcpy(&r, p, sizeof(r));
			ok = inf_ok(c, lim, &r);
			if (ok)
				memcpy(dst, &r, sizeof(r));
			break;
		}
		}
		if (ok)
			(*count)++;
		else
			c->dropped++;
	}
	if (attr_id == SA_ATTR_NODE_RECORD && c->n_lids) {
		/* Sorted for lookups; a GUID twice (or two ports claiming
		 * one LID's GUID) is a lie of one of them: keep neither. */
		qsort(c->lids, c->n_lids, sizeof(*c->lids), cmp_lid);
		size_t j = 0;
		for (size_t i = 0; i < c->n_lids; ) {
			size_t k = i + 1;
			while (k < c->n_lids && c->lids[k].guid == c->lids[i].guid)
				k++;
			if (k == i + 1)
				c->lids[j++] = c->lids[i];
			else
				c->dropped += k - i;
			i = k;
		}
		c->n_lids = j;
	}
	return 0;
}

/* ---------------------------------------------------------- installing */

static int install_groups(struct sm *sm, const struct sb_copy *c,
			  struct sb_adopt_report *r)
{
	if (!sm->mc)
		return 0;
	for (size_t i = 0; i < c->n_mcm; i++) {
		const struct sa_mcmember_record *m = &c->mcm[i];
		struct mc_group *g = mc_find(sm->mc, m->mgid);
		uint16_t mlid = be16toh(m->mlid);
		int err;

		if (!g) {
			g = mc_group_create_mlid(sm->mc, m->mgid, mlid, &err);
			if (!g) {
				if (err == -ENOMEM)
					return err;
				r->refused++;
				continue;
			}
			uint32_t sfh = be32toh(m->sl_flow_hop);
			g->pkey = be16toh(m->pkey) | 0x8000;
			g->qkey = be32toh(m->qkey);
			g->mtu = m->mtu & 0x3f;
			g->rate = m->rate & 0x3f;
			g->pkt_life = m->pkt_life & 0x3f;
			g->sl = (uint8_t)(sfh >> 28);
			g->flow_label = (sfh >> 8) & 0xfffff;
			g->hop_limit = (uint8_t)sfh;
			g->tclass = m->tclass;
			g->scope = m->scope_state >> 4;
			r->groups++;
		} else if (g->mlid != mlid) {
			/* The same MGID with two MLIDs: not one group. */
			r->refused++;
			continue;
		}
		err = mc_member_set(sm->mc, g, gid_guid(m->port_gid), m->port_gid,
				    m->scope_state & 0x0f, m->proxy_join & 0x80);
		if (err == -ENOMEM)
			return err;
		if (err < 0)
			r->refused++;
		else
			r->members++;
	}
	return 0;
}

int sb_copy_install(struct sm *sm, const struct sb_copy *c, ev_tstamp now,
		    struct sb_adopt_report *r)
{
	struct sa_state *st = sa_agent_state(sm);
	unsigned span = 1u << (sm->cfg.lmc & 7);
	int rc;

	memset(r, 0, sizeof(*r));
	if (!sm->lids && !(sm->lids = lid_cache_new()))
		return -ENOMEM;
	for (size_t i = 0; i < c->n_lids; i++) {
		unsigned lo = c->lids[i].lid, hi = lo + span - 1;

		if (hi > 0xbfff)
			hi = 0xbfff;
		rc = lid_cache_set(sm->lids, c->lids[i].guid, (uint16_t)lo,
				   (uint16_t)hi);
		if (rc == -ENOMEM)
			return rc;
		if (rc < 0)
			r->refused++;
		else
			r->lids++;
	}
	if ((rc = install_groups(sm, c, r)) < 0)
		return rc;
	if (!st)
		return 0;
	if (c->n_svc) {
		/* The time since the copy was taken comes off each lease; a
		 * lease that ran out meanwhile is not installed. */
		struct sa_service_record *keep = malloc(c->n_svc * sizeof(*keep));
		uint32_t *lease = malloc(c->n_svc * sizeof(*lease));
		double gone = now - c->svc_at;
		uint32_t g = gone > 0 ? (uint32_t)gone : 0;
		size_t n = 0, imported, refused;

		if (!keep || !lease) {
			free(keep);
			free(lease);
			return -ENOMEM;
		}
		for (size_t i = 0; i < c->n_svc; i++) {
			uint32_t l = be32toh(c->svc[i].service_lease);

			if (l != SA_LEASE_INFINITE) {
				if (g >= l)
					continue;
				l -= g;
			}
			keep[n] = c->svc[i];
			lease[n++] = l;
		}
		rc = sa_service_import_all(st, keep, lease, n, now, &imported,
					   &refused);
		free(keep);
		free(lease);
		if (rc < 0)
			return rc;
		r->services = (unsigned)imported;
		r->refused += (unsigned)refused;
	}
	for (size_t i = 0; i < c->n_inf; i++) {
		const struct sa_inform_info_record *f = &c->inf[i];
		struct mad_addr to = {
			.lid = sb_copy_lid(c, gid_guid(f->subscriber_gid)),
			.qpn = be32toh(f->inform_info.qpn_resp_time) >> 8,
			.qkey = 0x80010000u,
		};

		rc = sa_inform_import(st, &f->inform_info, f->subscriber_gid, &to);
		if (rc == -ENOMEM)
			return rc;
		if (rc < 0)
			r->refused++;
		else
			r->subscriptions++;
	}
	return 0;
}

/* ------------------------------------------------------------ fetching */

/* The tables of a round, in order: NodeRecords first (GIDs are checked
 * against them). */
static const uint16_t round_attrs[] = {
	SA_ATTR_NODE_RECORD, SA_ATTR_MCMEMBER_RECORD, SA_ATTR_SERVICE_RECORD,
	SA_ATTR_INFORM_INFO_RECORD,
};
#define ROUND_STEPS	(sizeof(round_attrs) / sizeof(round_attrs[0]))

struct standby_sync {
	struct sm *sm;
	ev_timer timer;
	bool running;			/* between start and stop */
	bool busy;			/* a query is in flight */
	unsigned step;
	uint64_t gen;			/* bumped by stop: stale callbacks */
	uint16_t peer_lid;		/* the master this round asks */
	struct sb_copy next;		/* the round being fetched */
	struct sb_copy cur;		/* the last complete round */
	bool have;
	ev_tstamp cur_at;		/* when cur's round ended */
	uint16_t cur_from;		/* the master LID cur came from */
	struct rmpp_receiver *rx;
	ev_tstamp round_start;
	unsigned rounds, failures;
	double last_round_s;
};

static struct sb_limits limits_of(const struct sm *sm)
{
	struct sb_limits l = {
		.max_services = SM_LIMIT(sm->cfg.sa_max_services, SA_DEF_MAX_SERVICES),
		.max_subscriptions = SM_LIMIT(sm->cfg.sa_max_subscriptions,
					      SA_DEF_MAX_SUBSCRIPTIONS),
		.subnet_prefix = sm->cfg.subnet_prefix,
	};
	return l;
}

static void round_next(struct standby_sync *s);

static void round_fail(struct standby_sync *s, const char *what, int err)
{
	s->failures++;
	/* Once per failing spell, not every two seconds. */
	if (s->failures == 1)
		log_warn_rc(err, "ERR 1451: standby copy: keeping the last"
			    " copy: %s from master LID %u", what, s->peer_lid);
	sb_copy_free(&s->next);
	s->busy = false;
}

static void take_table(struct standby_sync *s, const struct rmpp_result *res);

/* A table is in (or the transfer failed): the receiver that holds its
 * payload is freed once the payload is taken. */
static void on_table(void *arg, const struct rmpp_result *res)
{
	struct standby_sync *s = arg;
	struct rmpp_receiver *rx = s->rx;

	s->rx = NULL;
	take_table(s, res);
	rmpp_receiver_free(rx);
}

static void take_table(struct standby_sync *s, const struct rmpp_result *res)
{
	uint16_t attr = round_attrs[s->step];
	int rc;

	if (res->status < 0 || !res->first) {
		round_fail(s, "no table", res->status < 0 ? res->status : -EPROTO);
		return;
	}
	uint16_t st = be16toh(res->first->hdr.status);
	if (st && st != SA_STATUS_NO_RECORDS) {
		round_fail(s, "SA status", EPROTO);
		return;
	}
	if (!st) {
		struct sb_limits lim = limits_of(s->sm);

		rc = sb_copy_take(&s->next, &lim, attr, res->payload, res->len,
				  (size_t)be16toh(res->first->attr_offset) * 8,
				  ev_now(s->sm->loop));
		if (rc < 0) {
			round_fail(s, "bad table", rc);
			return;
		}
	}
	s->step++;
	round_next(s);
}

/*
 * A query in flight belongs to the engine until it calls back, maybe
 * after the sync was stopped or freed (-ECANCELED when the engine goes):
 * it names the SM and a generation, never the sync itself.
 */
struct pending {
	struct sm *sm;
	uint64_t gen;
};

static uint64_t generations;	/* loop thread only */

static void on_first(void *arg, int status, const void *mad, size_t len)
{
	struct pending *p = arg;
	struct standby_sync *s = p->sm->sync;
	uint64_t gen = p->gen;

	free(p);
	if (!s || gen != s->gen)
		return;
	if (status < 0) {
		round_fail(s, "no answer", status);
		return;
	}
	struct mad_addr peer = { .lid = s->peer_lid, .qpn = 1, .qkey = SA_QKEY };
	struct rmpp_recv_opts o = { 0 };
	struct sb_limits lim = limits_of(s->sm);

	rmpp_recv_opts_default(&o);
	/* The largest table a round takes, whole. */
	o.max_len = (size_t)SB_MAX_LIDS * 112 + lim.max_services * 176 +
		    (size_t)MC_DEF_MAX_GROUPS * 64 * 56;
	int rc = rmpp_recv_start(&s->rx, s->sm->loop, s->sm->engine, mad, len,
				 &peer, &o, on_table, s);
	if (rc < 0)
		round_fail(s, "bad first segment", rc);
}

static void round_next(struct standby_sync *s)
{
	struct sm *sm = s->sm;

	if (s->step == ROUND_STEPS) {
		sb_copy_free(&s->cur);
		s->cur = s->next;
		memset(&s->next, 0, sizeof(s->next));
		s->have = true;
		s->cur_at = ev_now(sm->loop);
		s->cur_from = s->peer_lid;
		s->busy = false;
		s->last_round_s = ev_now(sm->loop) - s->round_start;
		if (s->rounds++ == 0 || s->failures)
			log_info("standby copy from master LID %u: %zu LIDs, %zu"
				 " group members, %zu services, %zu subscriptions"
				 " (%" PRIu64 " records dropped, %" PRIu64
				 " over the caps), %.3f s",
				 s->peer_lid, s->cur.n_lids, s->cur.n_mcm,
				 s->cur.n_svc, s->cur.n_inf, s->cur.dropped,
				 s->cur.over, s->last_round_s);
		s->failures = 0;
		notify_state(sm);	/* STATUS= names the copy's time */
		return;
	}
	struct sa_mad m;
	struct mad_addr to = { .lid = s->peer_lid, .qpn = 1, .qkey = SA_QKEY };
	struct pending *p = malloc(sizeof(*p));

	if (!p) {
		round_fail(s, "query", ENOMEM);
		return;
	}
	memset(&m, 0, sizeof(m));
	sa_request_hdr(&m, MAD_METHOD_GET_TABLE, round_attrs[s->step], 0);
	m.sm_key = htobe64(SA_SM_KEY_TRUSTED);	/* every group's members */
	p->sm = sm;
	p->gen = s->gen;
	int rc = mad_engine_submit(sm->engine, &m, sizeof(m), &to, on_first, p);
	if (rc < 0) {
		free(p);
		round_fail(s, "query", rc);
	}
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct standby_sync *s = w->data;

	(void)loop;
	(void)revents;
	if (s->busy || !s->sm->master_lid)
		return;		/* a slow round skips a turn */
	s->busy = true;
	s->step = 0;
	s->peer_lid = s->sm->master_lid;
	s->round_start = ev_now(s->sm->loop);
	sb_copy_free(&s->next);
	round_next(s);
}

static struct standby_sync *sync_get(struct sm *sm)
{
	if (!sm->sync) {
		sm->sync = calloc(1, sizeof(*sm->sync));
		if (!sm->sync)
			return NULL;
		sm->sync->sm = sm;
		sm->sync->gen = ++generations;
		ev_timer_init(&sm->sync->timer, on_timer, 0., STANDBY_SYNC_INTERVAL);
		sm->sync->timer.data = sm->sync;
	}
	return sm->sync;
}

void standby_sync_start(struct sm *sm)
{
	struct standby_sync *s = sync_get(sm);

	if (!s) {
		log_warnx("ERR 1452: standby copy: out of memory");
		return;
	}
	if (s->running)
		return;
	/* Hidden test knob: a standby that copies nothing, so that
	 * tests/fabric/test_takeover_state.sh can show that it fails
	 * without the copy.  Not documented for users. */
	if (getenv("IBSM_DEBUG_NO_STANDBY_COPY")) {
		log_warnx("ERR 1454: standby copy disabled"
			  " (IBSM_DEBUG_NO_STANDBY_COPY)");
		return;
	}
	s->running = true;
	ev_timer_set(&s->timer, 0., STANDBY_SYNC_INTERVAL);
	ev_timer_start(sm->loop, &s->timer);
}

/* Stop fetching; the copy stays for standby_sync_adopt(). */
void standby_sync_stop(struct sm *sm)
{
	struct standby_sync *s = sm->sync;

	if (!s)
		return;
	ev_timer_stop(sm->loop, &s->timer);
	if (s->rx) {
		rmpp_receiver_free(s->rx);
		s->rx = NULL;
	}
	s->gen = ++generations;	/* a first segment still coming is ignored */
	s->busy = false;
	s->running = false;
	sb_copy_free(&s->next);
}

bool standby_sync_adopt(struct sm *sm)
{
	struct standby_sync *s = sm->sync;
	struct sb_adopt_report r;
	bool complete = false;

	if (!s) {
		log_warnx("ERR 1453: standby copy: none taken from the old master;"
			  " groups, services and subscriptions start empty");
		return false;
	}
	standby_sync_stop(sm);
	if (!s->have) {
		log_warnx("ERR 1453: standby copy: none taken from the old master;"
			  " groups, services and subscriptions start empty");
	} else if (sb_copy_install(sm, &s->cur, ev_now(sm->loop), &r) < 0) {
		log_warnx("ERR 1452: standby copy: out of memory while installing");
	} else {
		double age = ev_now(sm->loop) - s->cur_at;

		/* In sync: every record the master sent taken and installed,
		 * and no older than hosts can have changed much since (a join
		 * in the last seconds before the master died is the risk;
		 * ClientReregister covers it).  A record dropped by a check or
		 * beyond a cap is state the hosts must register again. */
		complete = r.refused == 0 && s->cur.dropped == 0 &&
			   s->cur.over == 0 && age <= STANDBY_SYNC_FRESH;
		log_info("standby copy installed: %u LIDs, %u groups with %u"
			 " members, %u services, %u subscriptions (%u refused,"
			 " %" PRIu64 " dropped, %" PRIu64 " over the caps),"
			 " taken %.1f s ago: %s", r.lids, r.groups, r.members,
			 r.services, r.subscriptions, r.refused, s->cur.dropped,
			 s->cur.over, age, complete ? "in sync" : "not in sync");
	}
	sb_copy_free(&s->cur);
	sb_copy_free(&s->next);
	free(s);
	sm->sync = NULL;
	return complete;
}

const struct sb_copy *standby_sync_copy(const struct sm *sm)
{
	return sm->sync && sm->sync->have ? &sm->sync->cur : NULL;
}

bool standby_sync_info(const struct sm *sm, struct standby_sync_info *out)
{
	const struct standby_sync *s = sm->sync;

	memset(out, 0, sizeof(*out));
	if (!s)
		return false;
	out->running = s->running;
	out->have = s->have;
	out->rounds = s->rounds;
	out->failures = s->failures;
	if (s->have) {
		out->at = s->cur_at;
		out->from_lid = s->cur_from;
		out->lids = s->cur.n_lids;
		out->members = s->cur.n_mcm;
		out->services = s->cur.n_svc;
		out->subscriptions = s->cur.n_inf;
		out->dropped = s->cur.dropped;
		out->over = s->cur.over;
	}
	return true;
}

bool standby_sync_unmatched(struct sm *sm, const void *mad, size_t len,
			    const struct mad_addr *from)
{
	struct standby_sync *s = sm->sync;
	const struct sa_mad *m = mad;

	if (!s || !s->rx || len < sizeof(*m) ||
	    !rmpp_receiver_matches(s->rx, be64toh(m->hdr.tid), from))
		return false;
	rmpp_receiver_input(s->rx, mad, len);
	return true;
}

/* At exit: whatever the state, free the copy. */
void standby_sync_free(struct sm *sm)
{
	if (!sm->sync)
		return;
	standby_sync_stop(sm);
	sb_copy_free(&sm->sync->cur);
	free(sm->sync);
	sm->sync = NULL;
}

void sb_copy_print(const struct sb_copy *c, FILE *fp)
{
	fprintf(fp, "copy lids %zu members %zu services %zu subscriptions %zu"
		" dropped %" PRIu64 " over %" PRIu64 "\n", c->n_lids, c->n_mcm,
		c->n_svc, c->n_inf, c->dropped, c->over);
	for (size_t i = 0; i < c->n_lids; i++)
		fprintf(fp, "lid 0x%016" PRIx64 " %u\n", c->lids[i].guid,
			c->lids[i].lid);
	for (size_t i = 0; i < c->n_mcm; i++) {
		const struct sa_mcmember_record *m = &c->mcm[i];

		fprintf(fp, "member ");
		for (int k = 0; k < 16; k += 2)
			fprintf(fp, "%02x%02x%s", m->mgid[k], m->mgid[k + 1],
				k < 14 ? ":" : "");
		fprintf(fp, " mlid 0x%04x port 0x%016" PRIx64 " join 0x%x\n",
			be16toh(m->mlid), gid_guid(m->port_gid),
			m->scope_state & 0x0f);
	}
	for (size_t i = 0; i < c->n_svc; i++) {
		const struct sa_service_record *r = &c->svc[i];

		fprintf(fp, "service 0x%" PRIx64 " %.*s lease %u port 0x%016" PRIx64
			"\n", be64toh(r->service_id), (int)strnlen(r->service_name,
			sizeof(r->service_name)), r->service_name,
			be32toh(r->service_lease), gid_guid(r->service_gid));
	}
	for (size_t i = 0; i < c->n_inf; i++) {
		const struct sa_inform_info *ii = &c->inf[i].inform_info;

		fprintf(fp, "subscription port 0x%016" PRIx64 " trap %u qpn %u\n",
			gid_guid(c->inf[i].subscriber_gid), be16toh(ii->trap_num),
			be32toh(ii->qpn_resp_time) >> 8);
	}
}
