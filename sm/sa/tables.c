/*
 * tables.c - the per-port table records of the SA (15.2.5):
 * P_KeyTableRecord, SLtoVLMappingTableRecord, VLArbitrationTableRecord
 * and MulticastForwardingTableRecord, each with its ComponentMask table
 * (see sa.h).  sa_attr_find() (sm/sa/records.c) falls back to
 * sa_tables_find() for these.
 *
 * What OpenSM 3.3.23 answers (default options: no partitions.conf, QoS
 * off), found on ibsim's fat2-small fabric with saquery and smpquery:
 *
 *   P_KeyTableRecord   only to trusted requests (SM_Key = its sa_key,
 *                      default 1; else ERR_REQ_INVALID).  Records come
 *                      from the tables it read in discovery: every block
 *                      (PartitionCap / 32) of CA ports and switch port 0,
 *                      every block (PartitionEnforcementCap / 32) of
 *                      switch ports that are up; none of down ports.  A
 *                      BlockNum component returns that block whatever it
 *                      is (zeros when never read).  PortNum selects a
 *                      switch port (0..NumPorts) and is ignored for CAs.
 *   SL2VLTableRecord   With virtual layers (a routing engine that
 *                      uses SLs, ROUTING in ibsm(8)) the table the SM
 *                      read or set (sm/program.c).  Otherwise zero:
 *                      OpenSM neither reads nor sets SL-to-VL tables
 *                      with QoS off, and neither does ibsm.  A switch
 *                      gives one record per (in, out) pair 0..NumPorts,
 *                      out port in the outer loop; a CA one record, in 0
 *                      out 0, whatever the port components say.
 *   VLArbTableRecord   not read either: zero tables.  Blocks 1-4 (low
 *                      0-31, low 32-63, high 0-31, high 32-63) of every
 *                      switch port 0..NumPorts, of the CA's port (port
 *                      component ignored for CAs); BlockNum outside 1-4
 *                      matches nothing.
 *   MFTRecord          what the switch confirmed holding (sm/mcast/
 *                      mft.c): every position of blocks 0 up to the last
 *                      block with an entry, as OpenSM answers up to the
 *                      highest block in use; none on a switch no tree
 *                      crosses (a group without members, such as the
 *                      default broadcast group before any join).
 *
 * Tables without a LID component list end ports in OpenSM's port-GUID
 * order (as records.c does); a LID component matches every LID of
 * the port's LMC range and the record carries the base LID (switches:
 * port 0's).  Components the generators do not interpret are compared
 * with sa_match(), as everywhere else.
 *
 * Where ibsm differs: ibsim shows real SL2VL and VLArb tables through
 * smpquery that OpenSM (and ibsm without layers) report as zeros; an InputPortNum or
 * OutputPortNum above NumPorts matches nothing here, where OpenSM answers
 * a record for in port NumPorts+1 and stops answering for out port
 * NumPorts+1.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sm/program.h"
#include "sm/sa/gen.h"
#include "sm/sa/tables.h"

/* OpenSM's default sa_key: the SM_Key of a trusted SA request (15.2.2.1). */
#define SA_TRUSTED_KEY		1ull

/* VLArbitrationTable blocks (14.2.5.9): 1-2 low priority, 3-4 high. */
#define VLARB_FIRST_BLOCK	1
#define VLARB_LAST_BLOCK	4

/* What to do with one end port of a table query (arg: the caller's). */
typedef int (*end_gen)(const struct sa_view *v, const struct sa_query *q,
		       struct fab_ref e, const void *arg, struct sa_table *out);

/*
 * Call fn for every end port a query covers: the owner of the template's
 * LID when the LID component is set, else every end port in OpenSM's
 * order (the SA index keeps that order).  Resumable: the end port to go
 * on with is the query's cursor pos[0]; each is charged 1 + its node's
 * ports, and fn charges what a switch's many records cost.  Returns 0,
 * SA_MORE (slice spent), -SA_STATUS_NO_RESOURCES (budget spent) or fn's
 * error.
 */
static int each_end(const struct sa_view *v, const struct sa_query *q,
		    uint16_t lid, end_gen fn, const void *arg,
		    struct sa_table *out)
{
	uint32_t local[4] = { 0 }, *k = &cursor_of(q, local)[0];
	struct fab_ref one;
	int rc;

	if (!has_fabric(v))
		return 0;
	if (q->comp_mask & BIT(0)) {
		rc = midx_lid_lookup(v->f, lid, &one);
		return rc <= 0 ? rc : fn(v, q, one, arg, out);
	}
	if ((rc = midx_get(v->f)) < 0)
		return rc;
	for (; *k < midx_cur.n_ends; ++*k) {
		struct fab_ref e = midx_cur.ends[*k];

		if (sa_slice_over(q))
			return SA_MORE;
		if (!sa_charge(q, 1u + fabric_node(v->f, e.node)->num_ports))
			return -SA_STATUS_NO_RESOURCES;
		if ((rc = fn(v, q, e, arg, out)) != 0)
			return rc;
	}
	return 0;
}

/* A record generator for one port of a node. */
typedef int (*port_gen)(const struct sa_query *q, const struct fab_node *n,
			unsigned pn, struct sa_table *out);

struct port_walk {
	bool by_port;
	unsigned port_num;
	port_gen fn;
};

static int port_walk_end(const struct sa_view *v, const struct sa_query *q,
			 struct fab_ref e, const void *arg, struct sa_table *out)
{
	const struct port_walk *pw = arg;
	const struct fab_node *nd = fabric_node(v->f, e.node);
	int rc = 0;

	if (nd->type != NODE_TYPE_SWITCH)
		return pw->fn(q, nd, e.port, out);
	if (pw->by_port)
		return pw->port_num <= nd->num_ports ?
		       pw->fn(q, nd, pw->port_num, out) : 0;
	for (unsigned pn = 0; pn <= nd->num_ports && rc == 0; pn++)
		rc = pw->fn(q, nd, pn, out);
	return rc;
}

/*
 * Call fn for every port a P_Key or VLArb query covers: the port of a CA
 * that owns the LID (OpenSM does not compare the record's port number for
 * CAs), and on a switch port `port_num` when `by_port` (the template's
 * port component is set) or else every port 0..N.
 */
static int each_port(const struct sa_view *v, const struct sa_query *q,
		     uint16_t lid, bool by_port, unsigned port_num, port_gen fn,
		     struct sa_table *out)
{
	struct port_walk pw = { by_port, port_num, fn };

	return each_end(v, q, lid, port_walk_end, &pw, out);
}

/* The LID of a record about port `pn` of `n`: switches give port 0's. */
static uint16_t record_lid(const struct fab_node *n, unsigned pn)
{
	return n->ports[n->type == NODE_TYPE_SWITCH ? 0 : pn].lid;
}

/* ------------------------------------------------------------------ */
/* P_KeyTableRecord (15.2.5.11)                                         */

enum { PKTR_LID, PKTR_BLOCK, PKTR_PORT };

static const struct sa_field pktr_fields[] = {
	FLD(0, 16),	/* 0 LID */
	FLD(16, 16),	/* 1 BlockNum */
	FLD(32, 8),	/* 2 PortNum */
	FLD(40, 24),	/* 3 Reserved */
	FLD(64, 512),	/* 4 P_KeyTable */
};

/*
 * OpenSM 3.3.23 writes P_KeyTableRecord:BlockNum in host order (little
 * endian on x86) and saquery prints it without swapping, so the two agree
 * on "Block 1" where a big-endian field would print as 256.  We answer
 * the same bytes so that records compare field by field with OpenSM's;
 * the request's BlockNum is read big endian, as both do.  Set to 0 for
 * the wire order of 15.2.5.11.
 */
#define PKTR_BLOCK_OPENSM_ORDER	1

static __be16 pktr_block_num(unsigned block)
{
	uint16_t b = (uint16_t)block;

	if (PKTR_BLOCK_OPENSM_ORDER) {
		__be16 v;
		uint8_t bytes[2] = { (uint8_t)(b & 0xff), (uint8_t)(b >> 8) };
		memcpy(&v, bytes, sizeof(v));
		return v;
	}
	return htobe16(b);
}

static int pktr_block(const struct sa_query *q, const struct fab_node *n,
		      unsigned pn, unsigned block, struct sa_table *out)
{
	const struct fab_port *p = &n->ports[pn];
	struct sa_pkey_table_record r;

	if (!sa_charge(q, 1))
		return -SA_STATUS_NO_RESOURCES;
	memset(&r, 0, sizeof(r));
	r.lid = htobe16(record_lid(n, pn));
	r.block_num = pktr_block_num(block);
	r.port_num = (uint8_t)pn;
	/* Blocks never read (or beyond the port's table) answer zeros. */
	if (p->pkeys && block < p->pkey_blocks)
		memcpy(r.pkeys, p->pkeys + (size_t)block * PKEY_BLOCK_SIZE,
		       sizeof(r.pkeys));
	if (!sa_match(pktr_fields, NELEM(pktr_fields), q->comp_mask &
		      ~(BIT(PKTR_LID) | BIT(PKTR_BLOCK) | BIT(PKTR_PORT)),
		      &r, q->tmpl))
		return 0;
	return sa_table_add(out, &r);
}

static int pktr_port(const struct sa_query *q, const struct fab_node *n,
		     unsigned pn, struct sa_table *out)
{
	const struct sa_pkey_table_record *t = (const void *)q->tmpl;
	const struct fab_port *p = &n->ports[pn];
	int rc = 0;

	if (q->comp_mask & BIT(PKTR_BLOCK))
		return pktr_block(q, n, pn, be16toh(t->block_num), out);
	for (unsigned b = 0; p->pkeys && b < p->pkey_blocks && rc == 0; b++)
		rc = pktr_block(q, n, pn, b, out);
	return rc;
}

static int gen_pkey_table_record(const struct sa_view *v,
				 const struct sa_query *q, struct sa_table *out)
{
	const struct sa_pkey_table_record *t = (const void *)q->tmpl;

	/* 15.2.5.11 (C15-0.2.2): P_KeyTableRecords go to trusted requesters
	 * only; OpenSM answers others with ERR_REQ_INVALID. */
	if (q->sm_key != SA_TRUSTED_KEY)
		return -SA_STATUS_REQ_INVALID;
	return each_port(v, q, be16toh(t->lid), q->comp_mask & BIT(PKTR_PORT),
			 t->port_num, pktr_port, out);
}

/* ------------------------------------------------------------------ */
/* SLtoVLMappingTableRecord (15.2.5.4)                                  */

enum { SL2VL_LID, SL2VL_IN, SL2VL_OUT };

static const struct sa_field sl2vl_fields[] = {
	FLD(0, 16),	/* 0 LID */
	FLD(16, 8),	/* 1 InputPortNum */
	FLD(24, 8),	/* 2 OutputPortNum */
	FLD(32, 32),	/* 3 Reserved */
	FLD(64, 64),	/* 4 SLtoVLMappingTable */
};

/* One record: the table as programmed with virtual layers (sm/program.c),
 * else zero (see the top of this file).  `img_out` is the output port the
 * SM keys the table by: a CA's port number, a switch's output port. */
static int sl2vl_one(const struct sa_view *v, const struct sa_query *q,
		     const struct fab_node *n, unsigned pn, unsigned in,
		     unsigned outp, unsigned img_out, struct sa_table *out)
{
	struct sa_sl2vl_record r;

	memset(&r, 0, sizeof(r));
	r.lid = htobe16(record_lid(n, pn));
	r.in_port = (uint8_t)in;
	r.out_port = (uint8_t)outp;
	sl2vl_image_lookup(v->sl2vl, n->guid, in, img_out, r.sl2vl);
	if (!sa_match(sl2vl_fields, NELEM(sl2vl_fields), q->comp_mask &
		      ~(BIT(SL2VL_LID) | BIT(SL2VL_IN) | BIT(SL2VL_OUT)),
		      &r, q->tmpl))
		return 0;
	return sa_table_add(out, &r);
}

/* The SL-to-VL records of one end port: a CA's one, a switch's pairs. */
static int sl2vl_end(const struct sa_view *v, const struct sa_query *q,
		     struct fab_ref e, const void *arg, struct sa_table *out)
{
	const struct sa_sl2vl_record *t = (const void *)q->tmpl;
	const struct fab_node *nd = fabric_node(v->f, e.node);
	unsigned o0 = 0, o1 = nd->num_ports, i0 = 0, i1 = nd->num_ports;
	int rc = 0;

	(void)arg;
	if (nd->type != NODE_TYPE_SWITCH)	/* OpenSM: in 0 out 0 */
		return sl2vl_one(v, q, nd, e.port, 0, 0, e.port, out);
	if (q->comp_mask & BIT(SL2VL_OUT))
		o0 = o1 = t->out_port;
	if (q->comp_mask & BIT(SL2VL_IN))
		i0 = i1 = t->in_port;
	if (o1 > nd->num_ports || i1 > nd->num_ports)
		return 0;
	/* up to 256 x 256 pairs on one switch: charged as records */
	if (!sa_charge(q, (uint64_t)(o1 - o0 + 1) * (i1 - i0 + 1)))
		return -SA_STATUS_NO_RESOURCES;
	for (unsigned o = o0; o <= o1 && rc == 0; o++)
		for (unsigned in = i0; in <= i1 && rc == 0; in++)
			rc = sl2vl_one(v, q, nd, 0, in, o, o, out);
	return rc;
}

static int gen_sl2vl_record(const struct sa_view *v, const struct sa_query *q,
			    struct sa_table *out)
{
	const struct sa_sl2vl_record *t = (const void *)q->tmpl;

	return each_end(v, q, be16toh(t->lid), sl2vl_end, NULL, out);
}

/* ------------------------------------------------------------------ */
/* VLArbitrationTableRecord (15.2.5.9)                                  */

enum { VLAR_LID, VLAR_PORT, VLAR_BLOCK };

static const struct sa_field vlar_fields[] = {
	FLD(0, 16),	/* 0 LID */
	FLD(16, 8),	/* 1 OutputPortNum */
	FLD(24, 8),	/* 2 BlockNum */
	FLD(32, 32),	/* 3 Reserved */
	FLD(64, 512),	/* 4 VLArbitrationTable */
};

static int vlar_port(const struct sa_query *q, const struct fab_node *n,
		     unsigned pn, struct sa_table *out)
{
	const struct sa_vlarb_record *t = (const void *)q->tmpl;
	unsigned b0 = VLARB_FIRST_BLOCK, b1 = VLARB_LAST_BLOCK;
	int rc = 0;

	if (q->comp_mask & BIT(VLAR_BLOCK)) {
		if (t->block_num < b0 || t->block_num > b1)
			return 0;
		b0 = b1 = t->block_num;
	}
	if (!sa_charge(q, b1 - b0 + 1))
		return -SA_STATUS_NO_RESOURCES;
	for (unsigned b = b0; b <= b1 && rc == 0; b++) {
		struct sa_vlarb_record r;

		/* zero table: not read (see the top of this file) */
		memset(&r, 0, sizeof(r));
		r.lid = htobe16(record_lid(n, pn));
		r.port_num = (uint8_t)pn;
		r.block_num = (uint8_t)b;
		if (sa_match(vlar_fields, NELEM(vlar_fields), q->comp_mask &
			     ~(BIT(VLAR_LID) | BIT(VLAR_PORT) | BIT(VLAR_BLOCK)),
			     &r, q->tmpl))
			rc = sa_table_add(out, &r);
	}
	return rc;
}

static int gen_vlarb_record(const struct sa_view *v, const struct sa_query *q,
			    struct sa_table *out)
{
	const struct sa_vlarb_record *t = (const void *)q->tmpl;

	return each_port(v, q, be16toh(t->lid), q->comp_mask & BIT(VLAR_PORT),
			 t->port_num, vlar_port, out);
}

/* ------------------------------------------------------------------ */
/* MulticastForwardingTableRecord (15.2.5.8)                            */

enum { MFTR_LID, MFTR_POSITION, MFTR_RESV, MFTR_BLOCK };

static const struct sa_field mftr_fields[] = {
	FLD(0, 16),	/* 0 LID */
	FLD(16, 4),	/* 1 Position */
	FLD(20, 3),	/* 2 Reserved */
	FLD(23, 9),	/* 3 BlockNum */
	FLD(32, 32),	/* 4 Reserved */
	FLD(64, 512),	/* 5 MulticastForwardingTable */
};

/* MFT blocks hold 32 MLIDs (14.2.5.12). */
#define MFT_BLOCK_SIZE		32

static int mftr_switch(const struct sa_query *q, const struct fab_node *n,
		       struct sa_table *out)
{
	const struct sa_mft_record *t = (const void *)q->tmpl;
	unsigned blocks = (n->mft_entries + MFT_BLOCK_SIZE - 1) / MFT_BLOCK_SIZE;
	unsigned want_pos = be16toh(t->position_block) >> 12;
	unsigned want_blk = be16toh(t->position_block) & 0x1ff;
	int rc = 0;

	if (!n->mft || !n->mft_positions)
		return 0;
	/* Blocks past the last one with an entry are not in use. */
	while (blocks > 0) {
		size_t from = (size_t)(blocks - 1) * MFT_BLOCK_SIZE * n->mft_positions;
		size_t to = (size_t)n->mft_entries * n->mft_positions;
		bool used = false;

		for (size_t i = from; i < to && !used; i++)
			used = n->mft[i] != 0;
		if (used)
			break;
		blocks--;
	}
	for (unsigned b = 0; b < blocks && rc == 0; b++) {
		if ((q->comp_mask & BIT(MFTR_BLOCK)) && b != want_blk)
			continue;
		for (unsigned pos = 0; pos < n->mft_positions && rc == 0; pos++) {
			struct sa_mft_record r;

			if ((q->comp_mask & BIT(MFTR_POSITION)) && pos != want_pos)
				continue;
			memset(&r, 0, sizeof(r));
			r.lid = htobe16(n->ports[0].lid);
			r.position_block = htobe16((uint16_t)(pos << 12 | b));
			for (unsigned i = 0; i < MFT_BLOCK_SIZE; i++) {
				unsigned m = b * MFT_BLOCK_SIZE + i;

				if (m < n->mft_entries)
					r.mft[i] = n->mft[m * n->mft_positions + pos];
			}
			if (sa_match(mftr_fields, NELEM(mftr_fields),
				     q->comp_mask & ~(BIT(MFTR_LID) |
						      BIT(MFTR_POSITION) |
						      BIT(MFTR_BLOCK)), &r, q->tmpl))
				rc = sa_table_add(out, &r);
		}
	}
	return rc;
}

static int mftr_end(const struct sa_view *v, const struct sa_query *q,
		    struct fab_ref e, const void *arg, struct sa_table *out)
{
	const struct fab_node *nd = fabric_node(v->f, e.node);

	(void)arg;
	if (nd->type != NODE_TYPE_SWITCH)
		return 0;
	if (!sa_charge(q, (uint64_t)nd->mft_entries * nd->mft_positions / 32))
		return -SA_STATUS_NO_RESOURCES;
	return mftr_switch(q, nd, out);
}

static int gen_mft_record(const struct sa_view *v, const struct sa_query *q,
			  struct sa_table *out)
{
	const struct sa_mft_record *t = (const void *)q->tmpl;

	return each_end(v, q, be16toh(t->lid), mftr_end, NULL, out);
}

/* ------------------------------------------------------------------ */

static const struct sa_attr table_attrs[] = {
	{ SA_ATTR_PKEY_TABLE_RECORD, "P_KeyTableRecord",
	  sizeof(struct sa_pkey_table_record), pktr_fields, NELEM(pktr_fields),
	  gen_pkey_table_record },
	{ SA_ATTR_SL2VL_RECORD, "SLtoVLMappingTableRecord",
	  sizeof(struct sa_sl2vl_record), sl2vl_fields, NELEM(sl2vl_fields),
	  gen_sl2vl_record },
	{ SA_ATTR_VL_ARB_RECORD, "VLArbitrationTableRecord",
	  sizeof(struct sa_vlarb_record), vlar_fields, NELEM(vlar_fields),
	  gen_vlarb_record },
	{ SA_ATTR_MFT_RECORD, "MulticastForwardingTableRecord",
	  sizeof(struct sa_mft_record), mftr_fields, NELEM(mftr_fields),
	  gen_mft_record },
};

const struct sa_attr *sa_tables_find(uint16_t attr_id)
{
	for (size_t i = 0; i < NELEM(table_attrs); i++)
		if (table_attrs[i].attr_id == attr_id)
			return &table_attrs[i];
	return NULL;
}
