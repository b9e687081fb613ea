/*
 * request.c - the checks of an SA request that need no I/O and no state
 * (see sa.h): length, method, attribute, the methods each attribute
 * takes, the RMPP header of a GetMulti and the ComponentMask.  The agent
 * (sm/sa/sa.c) calls sa_request_parse() on every request before it does
 * any work for it, and tests/fuzz/fuzz_sa.c feeds it arbitrary MADs.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "mad/rmpp.h"
#include "sm/sa/sa.h"

/* Attributes whose records live in the SA itself (sm/sa/service.c). */
static const struct sa_attr stateful_attrs[] = {
	{ SA_ATTR_SERVICE_RECORD, "ServiceRecord",
	  sizeof(struct sa_service_record), NULL, 37, NULL },
	{ SA_ATTR_INFORM_INFO, "InformInfo",
	  sizeof(struct sa_inform_info), NULL, 64, NULL },
	{ SA_ATTR_INFORM_INFO_RECORD, "InformInfoRecord",
	  sizeof(struct sa_inform_info_record), NULL, 16, NULL },
	/* sm/sa/mcmember.c: the groups of sm/mcast/groups.c */
	{ SA_ATTR_MCMEMBER_RECORD, "MCMemberRecord",
	  sizeof(struct sa_mcmember_record), NULL, 18, NULL },
};

static const struct sa_attr *attr_lookup(uint16_t attr)
{
	for (size_t i = 0; i < sizeof(stateful_attrs) / sizeof(stateful_attrs[0]); i++)
		if (stateful_attrs[i].attr_id == attr)
			return &stateful_attrs[i];
	return sa_attr_find(attr);
}

bool sa_attr_stateful(uint16_t attr_id)
{
	for (size_t i = 0; i < sizeof(stateful_attrs) / sizeof(stateful_attrs[0]); i++)
		if (stateful_attrs[i].attr_id == attr_id)
			return true;
	return false;
}

static bool method_known(uint8_t m)
{
	return m == MAD_METHOD_GET || m == MAD_METHOD_SET ||
	       m == MAD_METHOD_GET_TABLE || m == MAD_METHOD_DELETE ||
	       m == MAD_METHOD_GETMULTI;
}

/* Which methods each attribute takes (15.4, table 209). */
static bool method_allowed(uint16_t attr, uint8_t m)
{
	if ((attr == SA_ATTR_MULTIPATH_RECORD) != (m == MAD_METHOD_GETMULTI))
		return false;		/* GetMulti is MultiPathRecord's alone */
	switch (attr) {
	case SA_ATTR_MULTIPATH_RECORD:
		return true;
	case SA_ATTR_SERVICE_RECORD:
	case SA_ATTR_MCMEMBER_RECORD:	/* Get, GetTable, Set, Delete */
		return true;
	case SA_ATTR_INFORM_INFO:
		return m == MAD_METHOD_SET;
	case SA_ATTR_CLASS_PORT_INFO:
		/* A GetTable of it is a request the SA understands but will
		 * not serve: REQ_INVALID from the generator, as OpenSM says,
		 * rather than an unknown method/attribute combination. */
		return m == MAD_METHOD_GET || m == MAD_METHOD_GET_TABLE;
	default:
		return m == MAD_METHOD_GET || m == MAD_METHOD_GET_TABLE;
	}
}

/*
 * The SA data bytes a request carries.  Every request is one MAD except
 * GetMulti, which is an RMPP transfer (15.2.5.20, 13.6.2): accepted here
 * as one DATA segment that is FIRST and LAST, whose PayloadLength (class
 * header + data, 0: not given) says how much of the MAD is the request;
 * a GetMulti without RMPP counts as one such segment.  -1: not a request
 * we take (a transfer of several segments, a bad RMPP header).
 */
static int request_payload(const struct sa_mad *req)
{
	const struct rmpp_hdr *r = &req->rmpp;
	uint32_t plen;

	if (!(r->resptime_flags & RMPP_FLAG_ACTIVE))
		return SA_DATA_SIZE;
	if (req->hdr.method != MAD_METHOD_GETMULTI || rmpp_validate(req) < 0 ||
	    r->type != RMPP_TYPE_DATA || be32toh(r->data1) != 1 ||
	    (rmpp_flags(r) & (RMPP_FLAG_FIRST | RMPP_FLAG_LAST)) !=
	    (RMPP_FLAG_FIRST | RMPP_FLAG_LAST))
		return -1;
	plen = be32toh(r->data2);
	if (plen == 0)
		return SA_DATA_SIZE;
	if (plen < SA_HDR_SIZE || plen > RMPP_SEG_PAYLOAD)
		return -1;
	return (int)(plen - SA_HDR_SIZE);
}

int sa_request_parse(const void *mad, size_t len, uint16_t requester_lid,
		     struct sa_query *q, const struct sa_attr **a)
{
	const struct sa_mad *req = mad;
	uint16_t attr;
	int payload;

	*a = NULL;
	memset(q, 0, sizeof(*q));
	/* A short MAD cannot be answered with its own headers safely. */
	if (len != MAD_SIZE)
		return -1;
	attr = be16toh(req->hdr.attr_id);
	*a = attr_lookup(attr);
	if (!method_known(req->hdr.method))
		return MAD_STATUS_METHOD_UNSUPP;
	if (!*a || !method_allowed(attr, req->hdr.method))
		return MAD_STATUS_ATTR_UNSUPP;
	/* A request is one MAD (one RMPP segment for GetMulti). */
	if ((payload = request_payload(req)) < 0)
		return SA_STATUS_REQ_INVALID;
	*q = (struct sa_query){
		.method = req->hdr.method,
		.attr_id = attr,
		.attr_mod = be32toh(req->hdr.attr_mod),
		.comp_mask = be64toh(req->comp_mask),
		.tmpl = req->data,
		.tmpl_len = (size_t)payload,
		.requester_lid = requester_lid,
		.sm_key = be64toh(req->sm_key),
	};
	/*
	 * ComponentMask bits past the record's last component name no
	 * component: reserved, so ignored (OpenSM ignores them too) rather
	 * than refused.
	 */
	if (!sa_mask_valid((*a)->nfields, q->comp_mask))
		q->comp_mask &= (1ull << (*a)->nfields) - 1;
	return 0;
}
