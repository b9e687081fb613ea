/*
 * rogue.h - SMs of another SM_Key (14.4.1).  Such an SM takes no part in
 * our election: its SMInfo answers are not compared with ours, its
 * SMInfo Sets (HANDOVER, DISABLE, STANDBY, DISCOVER, ACKNOWLEDGE) are
 * ignored, and we never hand over to it.  What it programs while it
 * believes itself master is put back by our sweeps.  The SMs heard from
 * are remembered here, so that `ibsmctl sms` and the health report name
 * them with the port they sit behind.
 *
 * Bounded: SM_MAX_ROGUE entries; a new one replaces the one heard from
 * least recently.  One log line (ERR 1125, rate limited) per SM newly
 * heard from; an entry not heard from for SM_ROGUE_FORGET_S is dropped.
 */
#ifndef IBSM_HA_ROGUE_H
#define IBSM_HA_ROGUE_H

#include <stdbool.h>
#include <stdint.h>

#include <ev.h>

struct sm;
struct fabric;
struct smp_sm_info;

#define SM_MAX_ROGUE		8
#define SM_ROGUE_FORGET_S	120.0

struct sm_rogue {
	uint64_t  guid;			/* its port GUID (SMInfo GUID); 0: free */
	uint16_t  lid;			/* the LID it was heard from (0: DR) */
	uint8_t   priority, state;	/* from its SMInfo */
	uint64_t  sm_key;		/* the key it carried (0: withheld) */
	uint32_t  heard;		/* SMInfo answers and requests seen */
	uint32_t  sets;			/* its SMInfo Sets, all ignored */
	ev_tstamp first, seen;
};

/* An SMInfo of another SM_Key: an answer to our Get (`set` false) or a
 * Set it sent us (`set` true), from LID `lid` (0 when directed). */
void sm_rogue_heard(struct sm *sm, const struct smp_sm_info *si,
		    uint16_t lid, bool set);
/* Drop the entries not heard from for SM_ROGUE_FORGET_S. */
void sm_rogue_expire(struct sm *sm);
/* An SM of another SM_Key said it is MASTER within SM_ROGUE_FORGET_S: it
 * may have programmed the fabric, so nothing we remember of the switches'
 * tables can be trusted (sm/ha/state.c then makes each light sweep a
 * heavy sweep that sends every table again). */
bool sm_rogue_master_heard(struct sm *sm);

/*
 * Trap 256 (bad M_Key): a port refused an SMP that did not carry its
 * M_Key.  The SMs heard of are remembered as above (SM_MAX_BAD_MKEY, the
 * oldest replaced, forgotten after SM_ROGUE_FORGET_S), by the port that
 * refused: the health report names it and the requester.
 */
#define SM_MAX_BAD_MKEY		8
struct sm_bad_mkey {
	uint64_t  node_guid;		/* the port that refused; 0: free */
	uint8_t   port;
	uint16_t  lid;			/* its LID */
	uint16_t  requester;		/* the requester's LID (0: by DR) */
	uint16_t  dr_slid;
	uint8_t   method;
	uint16_t  attr;
	uint32_t  count;
	ev_tstamp seen;
};
struct smp_notice;
/* Trap 256 `n` from port (node `node_guid`, `port`, LID `lid`). */
void sm_bad_mkey_heard(struct sm *sm, const struct smp_notice *n,
		       uint64_t node_guid, uint8_t port, uint16_t lid);

/* Where port `guid` sits in `f`: the node (its index), the port, and the
 * switch port at the other end of its cable.  False when not in `f`. */
struct rogue_where {
	int32_t  node;			/* FAB_NONE when not found */
	uint8_t  port;
	int32_t  peer_node;		/* FAB_NONE: no peer */
	uint8_t  peer_port;
};
bool sm_rogue_where(const struct fabric *f, uint64_t guid,
		    struct rogue_where *w);

#endif /* IBSM_HA_ROGUE_H */
