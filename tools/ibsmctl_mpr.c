/*
 * ibsmctl_mpr.c - the SubnAdmGetMulti(MultiPathRecord) request of
 * `ibsmctl query multipath` (IB spec 15.2.5.20).
 *
 * The request is itself an RMPP transfer (GetMulti is the SA method whose
 * request may span several MADs); 11 GIDs fit one MAD, and this client
 * sends one segment, ACTIVE|FIRST|LAST, which is all it needs.  The
 * counts and PayloadLength can be overridden to test how an SA takes a
 * malformed request.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/rmpp.h"
#include "tools/ibsmctl.h"

/* MultiPathRecord ComponentMask bits (15.2.5.20) */
#define MPR_MASK_REVERSIBLE	(1ull << 5)
#define MPR_MASK_NUMB_PATH	(1ull << 6)
#define MPR_MASK_PKEY		(1ull << 7)
#define MPR_MASK_SL		(1ull << 9)
#define MPR_MASK_INDEP_SEL	(1ull << 17)
#define MPR_MASK_SGID_COUNT	(1ull << 19)
#define MPR_MASK_DGID_COUNT	(1ull << 20)

/* Link-local prefix (4.1.1) for GIDs given as port GUIDs. */
#define GID_PREFIX_LINK_LOCAL	0xfe80000000000000ull

void mpr_opts_init(struct mpr_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->numb_path = -1;
	o->independence = -1;
	o->sl = -1;
	o->pkey = -1;
	o->sgid_count = -1;
	o->dgid_count = -1;
	o->payload_len = -1;
}

/* A GID (IPv6 notation) or a port GUID (number): the GID, or false. */
static bool parse_gid(const char *s, uint8_t gid[16])
{
	unsigned long long guid;
	uint64_t be;
	char *end;

	if (strchr(s, ':'))
		return inet_pton(AF_INET6, s, gid) == 1;
	errno = 0;
	guid = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || !guid)
		return false;
	be = htobe64(GID_PREFIX_LINK_LOCAL);
	memcpy(gid, &be, 8);
	be = htobe64(guid);
	memcpy(gid + 8, &be, 8);
	return true;
}

/* Append the comma-separated GIDs of `list` to the record's GID list. */
static int add_gids(const char *list, uint8_t *data, unsigned *n,
		    const char *what)
{
	char *copy = strdup(list), *save = NULL;
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	for (char *tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n >= SA_MPR_GIDS_ONE_MAD) {
			fprintf(stderr, "ibsmctl: at most %d GIDs in all\n",
				SA_MPR_GIDS_ONE_MAD);
			rc = -EINVAL;
			break;
		}
		if (!parse_gid(tok, data + SA_MPR_FIXED_SIZE + *n * 16)) {
			fprintf(stderr, "ibsmctl: bad %s '%s' (a GID such as "
				"fe80::2:c903:0:1 or a port GUID)\n", what, tok);
			rc = -EINVAL;
			break;
		}
		(*n)++;
	}
	free(copy);
	return rc;
}

int mpr_build(struct sa_mad *m, const struct mpr_opts *o, const char *src,
	      const char *dst)
{
	struct sa_multipath_record r;
	uint64_t mask = MPR_MASK_SGID_COUNT | MPR_MASK_DGID_COUNT;
	unsigned n = 0, ns;
	size_t len;
	int rc;

	if ((rc = add_gids(src, m->data, &n, "source")) < 0)
		return rc;
	ns = n;
	if ((rc = add_gids(dst, m->data, &n, "destination")) < 0)
		return rc;
	memset(&r, 0, sizeof(r));
	r.sgid_count = (uint8_t)(o->sgid_count >= 0 ? o->sgid_count : (int)ns);
	r.dgid_count = (uint8_t)(o->dgid_count >= 0 ? o->dgid_count
						     : (int)(n - ns));
	if (o->numb_path >= 0) {
		r.num_path = (uint8_t)o->numb_path;
		mask |= MPR_MASK_NUMB_PATH;
	}
	if (o->reversible) {
		r.num_path |= 0x80;
		mask |= MPR_MASK_REVERSIBLE;
	}
	if (o->independence >= 0) {
		r.independence = (uint8_t)(o->independence << 6);
		mask |= MPR_MASK_INDEP_SEL;
	}
	if (o->sl >= 0) {
		r.qos_class_sl = htobe16((uint16_t)o->sl);
		mask |= MPR_MASK_SL;
	}
	if (o->pkey >= 0) {
		r.pkey = htobe16((uint16_t)o->pkey);
		mask |= MPR_MASK_PKEY;
	}
	memcpy(m->data, &r, sizeof(r));
	sa_request_hdr(m, MAD_METHOD_GETMULTI, SA_ATTR_MULTIPATH_RECORD, mask);
	/* One RMPP segment: PayloadLength = class header + the record. */
	len = SA_MPR_FIXED_SIZE + (size_t)n * 16;
	rmpp_set_single(m, len);
	if (o->payload_len >= 0)
		m->rmpp.data2 = htobe32((uint32_t)o->payload_len);
	return 0;
}
