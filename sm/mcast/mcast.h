/*
 * mcast.h - multicast: the groups the SA keeps (sm/mcast/groups.c) and
 * the forwarding the SM programs for them (sm/mcast/mft.c, trees from
 * routing/mcast.c).
 *
 * The group table lives as long as the daemon, across sweeps: a heavy
 * sweep replaces the fabric model, not the groups.  Members are named by
 * port GUID, never by a model's node id, so a member is the same port in
 * every model; the MFT code maps GUIDs to the model it programs.
 *
 * Who does what:
 *   - groups.c (a library, no I/O, no logging): the group table, MLID
 *     allocation, JoinState bookkeeping, the join/leave rules of 15.4.3
 *     and 15.4.4 (used by sm/sa/mcmember.c), the groups partitions.conf
 *     pre-creates.
 *   - mft.c (daemon): after a heavy sweep, and shortly after a join or
 *     leave (mcast_changed()), build each group's tree over the model and
 *     send the MulticastForwardingTable blocks that differ.
 *
 * Every table is bounded: groups, members per group, groups per port.
 */
#ifndef IBSM_SM_MCAST_MCAST_H
#define IBSM_SM_MCAST_MCAST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/limits.h"
#include "mad/sa_wire.h"
#include "model/guidmap.h"

/* Multicast LIDs (14.2.5.12): 0xC000 up; 0xFFFF is the permissive LID. */
#define MC_MLID_MIN		0xC000
#define MC_MLID_MAX		0xFFFE

/*
 * JoinStates that keep a group alive (15.4.3): full member and send-only
 * full member.  A group that is not pre-created is deleted when the last
 * member holding one of them gives it up, whatever other members stay.
 */
#define MC_JOIN_COUNTS		(MC_JOIN_FULL | MC_JOIN_SENDONLY_FULL)
#define MC_JOIN_ALL		0x0f

/* Traps the SM reports about groups (14.2.5.1, table 120). */
#define MC_TRAP_CREATED		66
#define MC_TRAP_DELETED		67

/* One port's membership of one group. */
struct mc_member {
	uint64_t port_guid;
	uint8_t  port_gid[16];		/* as joined (prefix + GUID) */
	uint8_t  join_state;		/* union of MC_JOIN_* bits held */
	bool     proxy;			/* joined by ProxyJoin */
};

/* One group (MCMemberRecord's group-wide components). */
struct mc_group {
	uint8_t  mgid[16];
	uint16_t mlid;
	uint16_t pkey;			/* full bit set, as in the record */
	uint32_t qkey;
	uint8_t  mtu, rate, pkt_life;	/* IB encodings, selector stripped */
	uint8_t  sl, scope, tclass, hop_limit;
	uint32_t flow_label;
	/*
	 * Pre-created from partitions.conf (ipoib, mgid=): the group stays,
	 * with its MLID, when its last member leaves, as OpenSM keeps them.
	 */
	bool     precreated;
	uint64_t owner;			/* port GUID of the requester that
					 * created it, 0: none (pre-created,
					 * copied from a master) */
	struct mc_member *members;	/* unordered */
	size_t   n_members, cap_members;
	struct guidmap midx;		/* port GUID -> position in members */
	size_t   n_full;		/* members holding MC_JOIN_COUNTS */
	/*
	 * Bumped on every change of the member set or of a member's
	 * JoinState: the MFT code rebuilds a group's tree when its
	 * generation differs from the one it last built.
	 */
	uint64_t gen;
};

struct mc_limits {
	unsigned max_groups;		/* 0: MC_DEF_MAX_GROUPS */
	unsigned members_per_group;	/* 0: MC_DEF_MEMBERS_PER_GROUP */
	unsigned groups_per_port;	/* 0: MC_DEF_GROUPS_PER_PORT */
};

struct mc_table;

struct mc_table *mc_table_new(const struct mc_limits *lim);
void mc_table_free(struct mc_table *t);

/*
 * MLIDs handed out: MC_MLID_MIN .. top.  The SM sets top after each
 * sweep from the smallest MulticastFDBCap of the switches (0xC000 +
 * cap - 1); groups whose MLID lies above a lowered top keep it (their
 * trees are not programmed where the table is too small).
 */
void mc_table_set_mlid_top(struct mc_table *t, uint16_t top);
uint16_t mc_table_mlid_top(const struct mc_table *t);

/* Groups, in no particular order: i < mc_table_count(). */
size_t mc_table_count(const struct mc_table *t);
struct mc_group *mc_table_at(struct mc_table *t, size_t i);
struct mc_group *mc_find(struct mc_table *t, const uint8_t mgid[16]);
/* A group holding `mlid` (one of them when solicited-node groups share
 * it), or NULL. */
struct mc_group *mc_find_mlid(struct mc_table *t, uint16_t mlid);
/* MLIDs in use (held by at least one group). */
size_t mc_table_mlids_used(const struct mc_table *t);
/* Groups holding `mlid` (more than one only when consolidated). */
size_t mc_mlid_groups(const struct mc_table *t, uint16_t mlid);

/*
 * consolidate_ipv6_snm_req: IPv6 solicited-node groups
 * (ff1S:601b:<P_Key>::1:ffXX:XXXX, mc_mgid_is_ipv6_snm()) created while
 * it is on take the MLID of an existing solicited-node group of the same
 * flags, scope and P_Key, as OpenSM does, so a partition's hosts need one
 * MLID (and one tree, over the members of all of them) instead of one
 * each.  The MLID is freed when the last of its groups is deleted.
 * Turning it off changes no group that exists; later ones get their own.
 */
void mc_table_set_snm_consolidation(struct mc_table *t, bool on);
bool mc_mgid_is_ipv6_snm(const uint8_t mgid[16]);

/*
 * Create a group with the lowest free MLID (an MLID freed by a deleted
 * group is reused), or with its class's MLID for a solicited-node group
 * when consolidation is on.  The caller fills the group's parameters.
 * NULL with *err = -EEXIST (MGID in use), -ENOBUFS (max_groups), -ENOSPC
 * (no MLID left up to top) or -ENOMEM.
 */
struct mc_group *mc_group_create(struct mc_table *t, const uint8_t mgid[16],
				 int *err);
/*
 * The same for an MCMemberRecord that names an MLID (`requested`, 0:
 * none): it is the group's when it lies in MC_MLID_MIN .. top and no
 * group holds it; otherwise the MLID is chosen as above, without an
 * error, as OpenSM 3.3.23 does (get_new_mlid()).
 */
struct mc_group *mc_group_create_req(struct mc_table *t, const uint8_t mgid[16],
				     uint16_t requested, int *err);
/*
 * The same for a group that requesting port `owner` creates (its own
 * join or a ProxyJoin; 0: none, as mc_group_create_req()).  More errors:
 * -EDQUOT when the owner created groups_per_port groups already, or is at
 * its fair share of the MLIDs while they run short; -ENOSPC also when
 * only the reserve is left (see groups.c: MLID fair share).  A solicited-
 * node group consolidated onto an existing MLID takes none from the pool.
 */
struct mc_group *mc_group_create_for(struct mc_table *t, const uint8_t mgid[16],
				     uint16_t requested, uint64_t owner,
				     int *err);
bool mc_mgid_is_ipoib_broadcast(const uint8_t mgid[16]);

/* The MLID pool as requester `owner` sees it (mc_group_create_for()). */
#define MC_MLID_RESERVE		16
struct mc_share {
	size_t free;		/* MLIDs free up to top */
	size_t reserve;		/* of them, kept for owner-less and IPoIB
				 * broadcast groups */
	size_t share;		/* groups owner may hold while contended */
	size_t mine;		/* groups owner created */
	bool   contended;	/* free is under reserve + a quarter of the rest */
};
void mc_mlid_share(const struct mc_table *t, uint64_t owner,
		   struct mc_share *sh);
/*
 * The same with a given MLID (a standby's copy at takeover keeps the old
 * master's MLIDs; 0: the lowest free one).  More errors: -EINVAL (not a
 * multicast LID), -EADDRINUSE (another group holds it, unless both are
 * solicited-node groups of one class: the old master consolidated them).
 */
struct mc_group *mc_group_create_mlid(struct mc_table *t, const uint8_t mgid[16],
				      uint16_t mlid, int *err);
/* Delete a group: its MLID is free again; g is invalid afterwards. */
void mc_group_delete(struct mc_table *t, struct mc_group *g);

/*
 * Add a member (join_state given) or, for a port already in the group,
 * replace its JoinState and GID.  Bumps g->gen.  0, -ENOBUFS
 * (members_per_group) or -ENOMEM.  A JoinState of 0 removes the member.
 */
int mc_member_set(struct mc_table *t, struct mc_group *g, uint64_t port_guid,
		  const uint8_t port_gid[16], uint8_t join_state, bool proxy);
/* Remove a member; false when the port was none.  Bumps g->gen. */
bool mc_member_remove(struct mc_table *t, struct mc_group *g,
		      uint64_t port_guid);

/* Groups port `port_guid` is a member of (the groups_per_port quota). */
size_t mc_port_groups(const struct mc_table *t, uint64_t port_guid);
/* Groups port `port_guid` created (the same quota, for requesters). */
size_t mc_port_created(const struct mc_table *t, uint64_t port_guid);
const struct mc_limits *mc_table_limits(const struct mc_table *t);

/*
 * Join (15.4.3, o15-0.1.11): the port's JoinState becomes the union of
 * what it held and `join_state` (*held says it).  Returns
 * MC_TRAP_CREATED when the group had no full (or send-only full) member
 * before and has one now (OpenSM reports trap 66 then), 0, or -ENOBUFS
 * (members_per_group), -EDQUOT (groups_per_port), -EINVAL (JoinState 0),
 * -ENOMEM.  Nothing changes on an error.
 */
int mc_join(struct mc_table *t, struct mc_group *g, uint64_t port_guid,
	    const uint8_t port_gid[16], uint8_t join_state, bool proxy,
	    uint8_t *held);

/*
 * Leave (15.4.4, o15-0.1.14): the bits of `join_state` are taken from
 * the port's JoinState (*held: what it keeps; 0: the port left).  When
 * that leaves the group with no member holding MC_JOIN_COUNTS, every
 * other member goes too and, unless the group is pre-created, the group
 * is deleted and its MLID freed (*deleted true, g invalid).  Returns
 * MC_TRAP_DELETED then (OpenSM reports trap 67), 0, or -ENOENT (not a
 * member), -EINVAL (join_state 0 or a bit the port does not hold).
 * Unlike OpenSM 3.3.23 (linux-rdma/opensm PR #43), a port that keeps
 * send-only full membership still counts, and one that gives up its last
 * counting bit is always uncounted, so no sequence leaks an MLID.
 */
int mc_leave(struct mc_table *t, struct mc_group *g, uint64_t port_guid,
	     uint8_t join_state, uint8_t *held, bool *deleted);

/*
 * An MGID for a group created with MGID 0 (15.2.5.17: the SA assigns
 * one): ff1<scope>:a01b:<subnet prefix>, the last bytes a counter, as
 * OpenSM lays it out; one not in use.  0 or -ENOSPC (1000 tries).
 */
int mc_assign_mgid(struct mc_table *t, uint8_t scope, uint64_t subnet_prefix,
		   uint8_t mgid[16]);

/*
 * Pre-created groups (sm/mcast/precreate.c) from the partitions in
 * force, as OpenSM 3.3.23 creates them: each ipoib partition's IPv4
 * broadcast group ff12:401b:<P_Key | 0x8000>::ffff:ffff (always
 * link-local, Q_Key 0x0b1b unless the partition gives one, rate and MTU
 * of the partition or 3 (10 Gb/s) and 4 (2048)), and every mgid= line's
 * group (scope, rate, MTU, Q_Key, TClass, FlowLabel of the line or of its
 * partition; an IPoIB MGID gets the partition's P_Key and Q_Key 0x0b1b).
 * SL: with `qos` (opensm.conf qos TRUE) the partition's sl=, or the
 * mgid= line's; without, 0 (OpenSM overrides a partition's SL without
 * QoS) unless an mgid= line gives another.  A group that exists already becomes pre-created;
 * it takes these parameters when it has no member, and keeps its own
 * while it has members (they joined with them: an IPoIB interface's MTU
 * is its broadcast group's), counted in `stale`, until a later pass
 * finds it empty.  Groups pre-created before but no longer in
 * `c` stop being pre-created and are deleted when no member holds full
 * membership (else when their last full member leaves), as OpenSM does
 * on a reload.
 */
struct part_config;
struct mc_precreate_report {
	unsigned created, kept, released, deleted;
	unsigned updated;		/* empty groups given new parameters */
	unsigned stale;			/* groups with members keeping theirs */
	uint8_t  first_stale[16];	/* the first of them: MGID, */
	uint8_t  stale_mtu, stale_rate;	/* what it keeps */
	uint8_t  want_mtu, want_rate;	/* what the partition now says */
	unsigned skipped;		/* mgid= lines OpenSM would refuse */
	unsigned failed;		/* no room: max_groups or MLIDs */
	uint8_t  first_skipped[16];	/* MGID of the first skipped/failed */
};
int mc_precreate(struct mc_table *t, const struct part_config *c,
		 uint8_t pkt_life, struct mc_precreate_report *r);
int mc_precreate_qos(struct mc_table *t, const struct part_config *c,
		     uint8_t pkt_life, bool qos, struct mc_precreate_report *r);

/* Member of `g` by port GUID, or NULL: O(1), through the group's index.
 * The pointer is valid until the group's members change. */
struct mc_member *mc_group_member(struct mc_group *g, uint64_t port_guid);

/*
 * Does the member receive what is sent to the group?  Full and non
 * members do; send-only members (either kind) only send (15.4.3).
 */
static inline bool mc_member_receives(const struct mc_member *m)
{
	return (m->join_state & (MC_JOIN_FULL | MC_JOIN_NON)) != 0;
}

#endif /* IBSM_SM_MCAST_MCAST_H */
