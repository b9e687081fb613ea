/*
 * partitions.h - OpenSM's partitions.conf: the parser, the partition model
 * and its resolution against a fabric model.  A library with no I/O beyond
 * reading the file (the daemon and ibsmctl link it); every function
 * returns 0 or a negative errno and never logs.
 *
 * Grammar (opensm partitions.conf(5)):
 *
 *   Name[=PKey][,flag[=value]]... : member[,member]... ;
 *   mgid=MGID[,flag=value]... ;        (inside a definition, before ';')
 *
 * flags: ipoib, indx0, rate=N, mtu=N, sl=N, scope=N, Q_Key=N, TClass=N,
 * FlowLabel=N, defmember=full|limited|both; members: GUID, ALL, ALL_CAS,
 * ALL_SWITCHES, ALL_ROUTERS, SELF, NONE, each optionally =full|limited|
 * both.  '#' starts a comment; a definition may span lines.  Only the low
 * 15 bits of a P_Key name the partition.
 */
#ifndef IBSM_PARTITIONS_PARTITIONS_H
#define IBSM_PARTITIONS_PARTITIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/fabric.h"

#define PART_PKEY_DEFAULT	0x7fff
#define PART_FULL_BIT		0x8000

enum part_membership {
	PART_LIMITED,
	PART_FULL,
	PART_BOTH,		/* full and limited (needs allow_both_pkeys) */
};

enum part_member_kind {
	PART_M_GUID,		/* a port GUID (or a node GUID: see resolve) */
	PART_M_ALL,		/* every end port and switch port 0 */
	PART_M_ALL_CAS,
	PART_M_ALL_SWITCHES,
	PART_M_ALL_ROUTERS,
	PART_M_SELF,		/* the SM's own port */
};

struct part_member {
	enum part_member_kind kind;
	uint64_t guid;			/* PART_M_GUID */
	enum part_membership membership;
	bool     indx0;			/* its definition said indx0 */
	unsigned line, col;		/* where it was written (0: built in) */
};

/* An mgid= line: a multicast group the SM creates (multicast issue). */
struct part_mgroup {
	uint8_t  mgid[16];
	uint8_t  rate, mtu, sl, scope, tclass;
	uint32_t qkey, flow_label;
	unsigned line;
};

struct part {
	char     name[64];
	uint16_t pkey;			/* 15-bit key (full bit clear) */
	bool     pkey_given;		/* else generated */
	bool     ipoib, indx0;
	uint8_t  rate, mtu, sl, scope, tclass;	/* 0: not given */
	uint32_t qkey, flow_label;
	enum part_membership defmember;	/* default: limited */
	struct part_member *members;
	size_t   n_members;
	struct part_mgroup *mgroups;
	size_t   n_mgroups;
	unsigned line;			/* of its definition (first, if merged) */
};

struct part_config {
	struct part *parts;		/* in file order; merged by P_Key */
	size_t   n_parts;
	char     file[256];		/* for messages; "" when built in */
};

/* What went wrong where: FILE:LINE:COLUMN: expected ... */
struct part_error {
	unsigned line, col;
	char     msg[192];
};

/* What a parse found: errors (OpenSM rejects the file) and warnings
 * (OpenSM accepts, but guesses).  Lines and columns count from 1. */
struct part_diag {
	struct part_error *errors;	/* every error found, in order */
	size_t   n_errors;
	struct part_error *warnings;
	size_t   n_warnings;
};

struct part_options {
	bool allow_both_pkeys;		/* opensm.conf allow_both_pkeys */
};

/*
 * Parse `len` bytes of a partitions.conf named `file` (for messages).
 * On success *out holds the partitions (the default partition added when
 * the file defines none with 0x7fff, as OpenSM does, and the SM's port
 * always a full member of it).  A file with no definition at all (empty,
 * blanks, comments) is what OpenSM makes of it: part_config_default(),
 * with a warning.  On errors returns -EINVAL with every
 * error in diag and *out empty (the caller keeps its previous
 * configuration); warnings are in diag either way.  The caller frees
 * diag (part_diag_free) in every case, *out on success.
 */
int part_parse(const char *file, const char *text, size_t len,
	       const struct part_options *opt, struct part_config *out,
	       struct part_diag *diag);
/* Read and parse a file (the only I/O of the library).  A file that
 * changes while it is read is read again, PART_READ_TRIES times in all
 * (-EAGAIN when it never holds still). */
int part_load(const char *path, const struct part_options *opt,
	      struct part_config *out, struct part_diag *diag);
/* part_load(), and the stamp of the file as read (may be NULL). */
struct file_stamp;
int part_load_stamped(const char *path, const struct part_options *opt,
		      struct part_config *out, struct part_diag *diag,
		      struct file_stamp *st);
#define PART_READ_TRIES		5
/* What OpenSM does without a file: Default=0x7fff,ipoib : ALL=full ; */
int part_config_default(struct part_config *out);
void part_config_free(struct part_config *c);
void part_diag_free(struct part_diag *d);
/* "FILE:LINE:COLUMN: msg" for one error. */
int part_error_format(const struct part_config *c, const char *file,
		      const struct part_error *e, char *buf, size_t len);

/* One key that did not fit a port's table (the daemon logs it). */
struct part_drop {
	int32_t  node;			/* index in the model */
	uint64_t node_guid;
	uint8_t  port;
	uint16_t key;			/* with the full bit */
};

/* Drops described one by one in a report; the rest are only counted. */
#define PART_DROP_DETAIL	64
/* Likewise the GUID members that name no port of the fabric. */
#define PART_UNKNOWN_DETAIL	16

/* The resolution's account of what it did (the daemon logs it). */
struct part_resolve_report {
	unsigned ports;			/* ports given a table */
	unsigned dropped;		/* keys that did not fit a table */
	unsigned drop_ports;		/* ports that lost at least one key */
	unsigned unknown_guids;		/* GUID members that are no end port */
	unsigned moved;			/* keys kept but not at their index */
	unsigned n_drops;		/* drops[] filled, <= PART_DROP_DETAIL */
	struct part_drop drops[PART_DROP_DETAIL];	/* the first drops */
	unsigned n_unknown;		/* unknown[] filled */
	/* the first GUID members that name no end port (point into the
	 * configuration resolved: its line and column, its GUID) */
	const struct part_member *unknown[PART_UNKNOWN_DETAIL];
};

/* How to resolve (opensm.conf keys). */
struct part_resolve_opts {
	/*
	 * keep_pkey_indexes (OpenSM's default TRUE): a key an end port's
	 * table already holds stays at its index (read by the discovery,
	 * fab_port.pkeys) and a new key takes a free index, so the index a
	 * host uses for a partition (IPoIB child interfaces, verbs
	 * applications) does not move when another partition is added or
	 * removed.  FALSE: every table is laid out afresh in priority order.
	 */
	bool keep_pkey_indexes;
};

/*
 * Resolve the partitions against the model: set want_pkeys of every end
 * port (linked CA and router ports, the SM's port, and switch port 0, which
 * OpenSM programs too) sized by NodeInfo.PartitionCap, and of every switch
 * external port linked to a CA or router port (that port's keys, a limited
 * key left out where the full one is there: full over limited) sized by
 * SwitchInfo.PartitionEnforcementCap (0: no table).  Every other port's
 * want_pkeys is freed and set NULL.  Members are port GUIDs (a switch's
 * node GUID is its port 0's; a CA's node GUID names nobody, as in
 * OpenSM).  Table order, also the priority when keys do not fit: the
 * index-0 key (the last indx0 partition naming the port, else the
 * default partition's), the default key, full keys, limited keys, each
 * group in file order; keys that do not fit are dropped, counted, and the
 * first PART_DROP_DETAIL described in the report.  Where the keys sit:
 * the index-0 key at 0; with keep_pkey_indexes, on an end port whose
 * table the discovery read, every other key where that table has it
 * (same key, else same 15-bit partition) and a new key at the first free
 * index past the last one kept, else in the first hole; otherwise (and
 * always on switch external ports, as OpenSM does) packed in priority
 * order.  n_want_pkeys is one past the last index used; unused indexes
 * below it hold 0.  `sm_port_guid` is SELF, and always a full member of
 * the default partition.  Pure: reads the model, writes only want_pkeys.
 * 0 or -ENOMEM.
 */
int part_resolve_opts(const struct part_config *c, struct fabric *f,
		      uint64_t sm_port_guid, const struct part_resolve_opts *o,
		      struct part_resolve_report *rep);
/*
 * How many partitions other than the default have a member naming some
 * end port of `f` other than the SM's own (SELF does not count): what
 * would still hold hosts apart.  Pure (writes nothing).  >= 0 or
 * -ENOMEM.
 */
int part_reach(const struct part_config *c, const struct fabric *f);

/* part_resolve_opts() with OpenSM's defaults (keep_pkey_indexes TRUE). */
int part_resolve(const struct part_config *c, struct fabric *f,
		 uint64_t sm_port_guid, struct part_resolve_report *rep);

#endif /* IBSM_PARTITIONS_PARTITIONS_H */
