/*
 * qos.h - OpenSM's QoS policy file (doc/QoS_management_in_OpenSM.txt):
 * the parser and the resolved policy the SA will match PathRecord
 * queries against.  A pure library: no I/O beyond reading the file, no
 * logging; every function returns 0 or a negative errno.
 *
 * The file is line oriented: a keyword is the first word of its line,
 * '#' starts a comment, blank lines are ignored.  As in OpenSM, blanks
 * inside an unquoted name are dropped ("Virtual Servers" names
 * VirtualServers); quoted names and use: text keep them.  Sections (each
 * optional, closed by end-<name>):
 *
 *   port-groups / port-group: name, use, port-guid (GUIDs and ranges),
 *       port-name (NodeDescription/Pnum), partition, pkey, node-type
 *       (CA, SWITCH, ROUTER, SELF, ALL)
 *   qos-setup / vlarb-tables / vlarb-scope: group, across, vlarb-high,
 *       vlarb-low (VL:weight lists), vl-high-limit
 *   qos-setup / sl2vl-tables / sl2vl-scope: group, across, across-from,
 *       across-to, from, to (port numbers, ranges or *), sl2vl-table
 *       (16 VLs)
 *   qos-levels / qos-level: name and sl (both required), use,
 *       mtu-limit, rate-limit, packet-life, path-bits, pkey
 *   qos-match-rules / qos-match-rule: use, qos-class, source,
 *       destination, service-id, pkey, qos-level-name
 *   qos-ulps: "default : SL", "sdp[, port-num R] : SL", "rds[, port-num
 *       R] : SL", "iser[, port-num R] : SL", "srp, target-port-guid R :
 *       SL", "ipoib[, pkey R] : SL", "any, service-id|pkey|
 *       target-port-guid|source-port-guid|source-target-port-guid R : SL"
 *
 * Resolution (as OpenSM): the level named DEFAULT, else the qos-ulps
 * default SL, is the default level (one of them is required); every rule
 * names a defined level and defined port groups; qos-ulps lines become
 * match rules after the qos-match-rules ones, each on a level that only
 * sets the SL ("SimpleQoSLevel_SLn"); their GUID ranges become port
 * groups of their own.
 */
#ifndef IBSM_QOS_QOS_H
#define IBSM_QOS_QOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QOS_MAX_FILE	(4u << 20)	/* bytes */
#define QOS_MAX_GROUPS	4096
#define QOS_MAX_LEVELS	1024
#define QOS_MAX_RULES	4096
#define QOS_MAX_SCOPES	1024
#define QOS_MAX_LIST	4096	/* items in one key's list */
#define QOS_MAX_ITEMS	65536	/* list items in the whole file */
#define QOS_NAME_MAX	128

struct qos_range { uint64_t lo, hi; };

struct qos_ranges {
	struct qos_range *v;
	size_t n;
};

struct qos_strs {
	char **v;
	unsigned *line, *col;		/* where each was written */
	size_t n;
};

enum {
	QOS_NT_CA = 1, QOS_NT_SWITCH = 2, QOS_NT_ROUTER = 4, QOS_NT_SELF = 8,
	QOS_NT_ALL = 16,
};

struct qos_group {
	char *name, *use;
	struct qos_ranges guids, pkeys;
	struct qos_strs port_names, partitions;
	unsigned node_types;		/* QOS_NT_* bits */
	bool generated;			/* made from a qos-ulps line */
	unsigned line, col;
};

struct qos_vl_weight { uint8_t vl, weight; };

struct qos_vlarb_scope {
	struct qos_strs groups, across;
	struct qos_vl_weight *high, *low;
	size_t n_high, n_low;
	int high_limit;			/* -1: not given */
	unsigned line;
};

struct qos_sl2vl_scope {
	struct qos_strs groups, across, across_from, across_to;
	struct qos_ranges from, to;	/* empty with *_all: every port */
	bool from_all, to_all;
	uint8_t table[16];
	bool has_table;
	unsigned line;
};

/* A level: -1 in a field means "not given". */
struct qos_level {
	char *name, *use;
	int sl, mtu_limit, rate_limit, packet_life;
	struct qos_ranges path_bits, pkeys;
	bool simple;			/* SimpleQoSLevel_SLn of qos-ulps */
	unsigned line, col;
};

struct qos_rule {
	char *use, *level_name;
	struct qos_ranges qos_class, service_id, pkey;
	struct qos_strs source, destination;	/* group names */
	/* resolved: indexes into groups[] and levels[] */
	size_t *src, *dst, n_src, n_dst;
	size_t level;
	bool from_ulp;
	unsigned line, col;		/* of the rule (qos-ulps: its line) */
	unsigned level_line, level_col;	/* of qos-level-name */
};

struct qos_policy {
	struct qos_group *groups;
	size_t n_groups;
	struct qos_level *levels;
	size_t n_levels;
	struct qos_rule *rules;		/* match rules, then qos-ulps rules */
	size_t n_rules;
	struct qos_vlarb_scope *vlarb;
	size_t n_vlarb;
	struct qos_sl2vl_scope *sl2vl;
	size_t n_sl2vl;
	int ulp_default_sl;		/* -1: no "default" line */
	size_t default_level;		/* index into levels[] */
	size_t n_items;			/* list items counted for the bound */
};

struct qos_error {
	unsigned line, col;
	char msg[256];
};

/* Parse and resolve `len` bytes; the first error stops (-EINVAL, err
 * filled, *out empty).  -E2BIG when the text passes QOS_MAX_FILE,
 * -ENOMEM.  The caller frees *out (qos_policy_free) on success. */
int qos_parse(const char *text, size_t len, struct qos_policy *out,
	      struct qos_error *err);
/* Read and parse a file. */
int qos_load(const char *path, struct qos_policy *out, struct qos_error *err);
void qos_policy_free(struct qos_policy *p);
/* A level by name, or -1. */
long qos_level_find(const struct qos_policy *p, const char *name);
/*
 * Which level a PathRecord query gets (match.c).  The query's ends are
 * port GUIDs with their nodes' NodeInfo:NodeType (1 CA, 2 switch, 3
 * router); has_* say which components the query sets (ServiceID: both
 * halves).  qos_match() returns the index into p->levels, OpenSM's
 * precedence: the first rule in order (qos-match-rules, then the
 * qos-ulps lines) that matches, else p->default_level; *rule (may be
 * NULL) is that rule's index, or -1 for the default level.  `m` (may be
 * NULL: no port-name, partition, pkey or SELF members) is the policy
 * bound to the fabric (qos_members_build()).
 */
struct qos_query {
	uint64_t src_guid, dst_guid;
	uint8_t src_type, dst_type;
	uint64_t service_id;
	uint16_t pkey, qos_class;
	bool has_sid, has_pkey, has_class;
};

struct qos_members;

size_t qos_match(const struct qos_policy *p, const struct qos_members *m,
		 const struct qos_query *q, long *rule);
bool qos_rule_matches(const struct qos_policy *p, const struct qos_members *m,
		      const struct qos_rule *r, const struct qos_query *q);
/* Is the port in group `group` (index into p->groups)? */
bool qos_group_has(const struct qos_policy *p, const struct qos_members *m,
		   size_t group, uint64_t guid, uint8_t node_type);
/* Is P_Key `pkey`'s low 15 bits in the ranges (ends masked to 15 bits,
 * as OpenSM reads pkey ranges)? */
bool qos_pkey_in(const struct qos_ranges *r, uint16_t pkey);

/*
 * The policy bound to a fabric (members.c): the ports that port-name,
 * partition, pkey and SELF entries name there.  Partitions are given by
 * name and P_Key (the partitions configuration in force).  What names
 * nothing (a description no node has, a partition or P_Key that is not
 * configured) is counted in the report, the first QOS_BIND_DETAIL with
 * their place in the file; it is not an error.  0, or -ENOMEM.
 */
struct fabric;

struct qos_part_ref {
	const char *name;
	uint16_t pkey;
};

struct qos_bind_in {
	const struct qos_part_ref *parts;
	size_t n_parts;
	uint64_t sm_guid;		/* SELF */
};

#define QOS_BIND_DETAIL	16
struct qos_bind_report {
	unsigned n_warnings;
	unsigned n_detail;
	struct qos_error detail[QOS_BIND_DETAIL];
};

int qos_members_build(const struct qos_policy *p, const struct fabric *f,
		      const struct qos_bind_in *in, struct qos_members **out,
		      struct qos_bind_report *rep);
void qos_members_free(struct qos_members *m);
bool qos_members_has(const struct qos_members *m, size_t group, uint64_t guid);
/* How many ports the entries above put in the group. */
size_t qos_members_count(const struct qos_members *m, size_t group);

/* The policy as stable text (golden tests, ibsmctl): returns a
 * malloc'ed string or NULL. */
char *qos_dump(const struct qos_policy *p);

#endif
