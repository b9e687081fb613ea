/*
 * sm/program/internal.h - what the files of sm/program/ share.  The
 * programming is split by what it programs: batch.c (batches of SMP
 * Sets), lft.c (forwarding tables), port.c (PortInfo), memo.c (what
 * ports answered), pkey.c (P_Key tables), sl2vl.c (SL to VL tables).
 * Its interface is sm/program.h.
 */
#ifndef IBSM_SM_PROGRAM_INTERNAL_H
#define IBSM_SM_PROGRAM_INTERNAL_H

#include "sm/program.h"

/*
 * PortInfo:OperationalVLs (its encoding: 1 VL0, 2 VL0-1, 3 VL0-3, 4 VL0-7,
 * 5 VL0-14) a linked port `pn` should run (port.c; the SL to VL tables
 * of sl2vl.c follow it).
 */
unsigned link_op_vls(const struct sm_config *cfg, const struct fabric *f,
		     int32_t id, uint8_t pn);

/* sl2vl.c, shared with qos.c: a port that maps SLs to VLs; the data VLs
 * of an OperationalVLs encoding; one SLtoVLMappingTable Set unless the
 * table is known to hold `want` (1 queued, 0 not needed, -errno). */
bool sl_mapping(const struct fab_port *p);
unsigned op_vls_count(unsigned enc);
#define VLARB_BYTES	64	/* one VLArbitrationTable block */

/* Which table: its image key (kind 0 SL-to-VL, 1-4 a VLArb block) and
 * the attribute and modifier of its Set. */
struct table_key {
	unsigned in, out, kind;
	uint16_t attr;
	uint32_t mod;
};
int table_one(struct smp_batch *b, struct sl2vl_images *im, struct fabric *f,
	      int32_t id, const struct table_key *k, const uint8_t *want,
	      size_t len, unsigned *sets);
int sl2vl_one(struct smp_batch *b, struct sl2vl_images *im,
	      struct fabric *f, int32_t id, unsigned in, unsigned out,
	      const uint8_t want[SL2VL_BYTES], unsigned *sets);

#endif
