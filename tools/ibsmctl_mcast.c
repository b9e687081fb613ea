/*
 * ibsmctl_mcast.c - `ibsmctl query groups` and `ibsmctl query group MGID`:
 * the multicast groups the SA knows, from one SubnAdmGetTable of
 * MCMemberRecords (IB spec 15.2.5.17), received through RMPP like every
 * ibsmctl table.
 *
 * An SA answers an untrusted requester (SM_Key 0) with one record per
 * group, PortGID zero, and a trusted one (the SM_Key, --sm-key) with one
 * record per member port of each group (PortGID and JoinState set), so
 * that a group without members has none (OpenSM and ibsm alike).
 * `groups` therefore asks twice when given --sm-key: untrusted for every
 * group, trusted for the members, and folds both into one row per group
 * with its member count (without --sm-key the counts are those of the
 * records the SA gave, 0 for such SAs).  `group MGID` asks once, with
 * the SM_Key, for that MGID's members, one row each.
 */
#include "config.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa_wire.h"
#include "tools/ibsmctl.h"

#define MCM_REC_SIZE	sizeof(struct sa_mcmember_record)

/* MTU (14.2.5.6) and rate (15.2.5.16, table 205) codes, in bytes and Gb/s */
static const char *const mtus[] = { NULL, "256", "512", "1024", "2048", "4096" };
static const char *const rates[] = {
	NULL, NULL, "2.5", "10", "30", "5", "20", "40", "60", "80", "120",
	"14", "56", "112", "168", "25", "100", "200", "300", "28", "50",
	"400", "600", "800", "1200",
};

static const char *code_name(const char *const *tbl, size_t n, unsigned i)
{
	return i < n && tbl[i] ? tbl[i] : "?";
}

static void out_gid(struct out *o, const char *key, const char *hdr,
		    const uint8_t gid[16])
{
	char text[INET6_ADDRSTRLEN], json[INET6_ADDRSTRLEN + 2];

	if (!inet_ntop(AF_INET6, gid, text, sizeof(text)))
		snprintf(text, sizeof(text), "?");
	snprintf(json, sizeof(json), "\"%s\"", text);
	out_raw(o, key, hdr, text, json, false);
}

static void out_name(struct out *o, const char *key, const char *hdr,
		     const char *s)
{
	out_str(o, key, hdr, s, strlen(s));
}

/* JoinState bits by name, joined with '+' ("-" for none). */
static void join_state_text(uint8_t js, char *buf, size_t len)
{
	static const char *const names[] = {
		"full", "non", "send-only", "send-only-full",
	};
	size_t off = 0;

	buf[0] = 0;
	for (unsigned b = 0; b < 4; b++)
		if (js & (1u << b))
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off ? "+" : "", names[b]);
	if (!off)
		snprintf(buf, len, "-");
}

static bool gid_zero(const uint8_t gid[16])
{
	for (int i = 0; i < 16; i++)
		if (gid[i])
			return false;
	return true;
}

/* The group-wide columns of a record, then its member count. */
static void group_row(struct out *o, const struct sa_mcmember_record *r,
		      unsigned members)
{
	out_gid(o, "mgid", "MGID", r->mgid);
	out_hex(o, "mlid", "MLID", be16toh(r->mlid), 4);
	out_hex(o, "pkey", "P_Key", be16toh(r->pkey), 4);
	out_hex(o, "qkey", "Q_Key", be32toh(r->qkey), 8);
	out_name(o, "mtu", "MTU", code_name(mtus, sizeof(mtus) / sizeof(mtus[0]),
					      r->mtu & 0x3f));
	out_name(o, "rate", "Rate", code_name(rates, sizeof(rates) / sizeof(rates[0]),
						r->rate & 0x3f));
	out_num(o, "sl", "SL", be32toh(r->sl_flow_hop) >> 28);
	out_num(o, "scope", "Scope", r->scope_state >> 4);
	out_num(o, "members", "Members", members);
}

static void groups_kind_row(struct out *o, const uint8_t *rec)
{
	struct sa_mcmember_record r;

	memcpy(&r, rec, sizeof(r));
	group_row(o, &r, 0);
}

static void member_row(struct out *o, const struct sa_mcmember_record *r)
{
	char js[64];

	join_state_text(r->scope_state & 0xf, js, sizeof(js));
	out_gid(o, "port_gid", "PortGID", r->port_gid);
	out_name(o, "join_state", "JoinState", js);
	out_name(o, "proxy", "Proxy", r->proxy_join & 0x80 ? "yes" : "no");
	out_gid(o, "mgid", "MGID", r->mgid);
	out_hex(o, "mlid", "MLID", be16toh(r->mlid), 4);
}

static void group_kind_row(struct out *o, const uint8_t *rec)
{
	struct sa_mcmember_record r;

	memcpy(&r, rec, sizeof(r));
	member_row(o, &r);
}

static const struct rec_kind groups_kind = {
	"groups", SA_ATTR_MCMEMBER_RECORD, MCM_REC_SIZE, groups_kind_row, NULL,
};
static const struct rec_kind group_kind = {
	"group", SA_ATTR_MCMEMBER_RECORD, MCM_REC_SIZE, group_kind_row, NULL,
};

const struct rec_kind *mcast_kind(const char *name)
{
	if (!strcmp(name, "groups"))
		return &groups_kind;
	if (!strcmp(name, "group"))
		return &group_kind;
	return NULL;
}

int mcast_build(struct sa_mad *m, const char *mgid, uint64_t sm_key)
{
	struct sa_mcmember_record r;
	uint64_t mask = 0;

	memset(&r, 0, sizeof(r));
	if (mgid) {
		if (inet_pton(AF_INET6, mgid, r.mgid) != 1) {
			fprintf(stderr, "ibsmctl: bad MGID '%s' (a GID such as "
				"ff12:401b:ffff::ffff:ffff)\n", mgid);
			return -EINVAL;
		}
		mask = 1ull << MCM_MGID;
	}
	memcpy(m->data, &r, sizeof(r));
	m->sm_key = htobe64(sm_key);
	sa_request_hdr(m, MAD_METHOD_GET_TABLE, SA_ATTR_MCMEMBER_RECORD, mask);
	return 0;
}

/* Order of rows: by MLID, then MGID (groups); by PortGID (members). */
static int cmp_group(const void *a, const void *b)
{
	const struct sa_mcmember_record *x = a, *y = b;

	if (be16toh(x->mlid) != be16toh(y->mlid))
		return be16toh(x->mlid) < be16toh(y->mlid) ? -1 : 1;
	int c = memcmp(x->mgid, y->mgid, 16);
	return c ? c : memcmp(x->port_gid, y->port_gid, 16);
}

/* The records of every answer so far, packed (mcast_collect). */
static struct sa_mcmember_record *recs;
static size_t n_recs;

int mcast_collect(const uint8_t *p, size_t len, size_t stride)
{
	size_t n, i;
	struct sa_mcmember_record *grown;

	if (stride < MCM_REC_SIZE)
		return -EPROTO;
	n = len / stride;
	if (!n)
		return 0;
	grown = realloc(recs, (n_recs + n) * sizeof(*recs));
	if (!grown)
		return -ENOMEM;
	recs = grown;
	for (i = 0; i < n; i++)
		memcpy(&recs[n_recs++], p + i * stride, MCM_REC_SIZE);
	return 0;
}

void mcast_rows(struct out *o, const struct rec_kind *kind)
{
	size_t n = n_recs, i;

	if (!n)
		return;
	qsort(recs, n, sizeof(*recs), cmp_group);
	if (kind == &group_kind) {
		for (i = 0; i < n; i++) {
			if (gid_zero(recs[i].port_gid))
				continue;	/* the group's own record */
			out_row(o);
			member_row(o, &recs[i]);
		}
		goto out;
	}
	/* One row per MGID; members: records with a port and a JoinState
	 * (sorted, so a port listed twice is counted once). */
	for (i = 0; i < n;) {
		size_t j = i;
		unsigned members = 0;

		for (; j < n && !memcmp(recs[j].mgid, recs[i].mgid, 16); j++) {
			if (gid_zero(recs[j].port_gid) ||
			    !(recs[j].scope_state & 0xf))
				continue;
			if (j > i && !memcmp(recs[j].port_gid,
					     recs[j - 1].port_gid, 16))
				continue;
			members++;
		}
		out_row(o);
		group_row(o, &recs[i], members);
		i = j;
	}
out:
	free(recs);
	recs = NULL;
	n_recs = 0;
}

bool mcast_second_query(const struct rec_kind *kind)
{
	return kind == &groups_kind;
}
