/*
 * ibsmctl_fabric.h - a fabric model (model/fabric.h) read from the running
 * subnet through the SA, for commands that need to know the fabric as the
 * SM does (`ibsmctl partitions plan`, live `list` and `show`).
 */
#ifndef IBSM_TOOLS_IBSMCTL_FABRIC_H
#define IBSM_TOOLS_IBSMCTL_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/fabric.h"

struct sa_fabric_opts {
	uint64_t guid;			/* local port (0: first port that is up) */
	long     sm_lid;		/* -1: the port's SM LID */
	unsigned timeout_ms, retries;	/* per SA request (0: defaults) */
};

/* What was read, besides the model. */
struct sa_fabric_info {
	uint16_t sm_lid;
	uint64_t sm_port_guid;		/* the SM's port (SELF) */
	unsigned queries;		/* SA requests answered */
	unsigned nodes, ports, pkey_blocks;
};

/*
 * Read the subnet through the SA of the SM into `f` (fabric_init()ed by
 * the caller, empty): nodes from NodeRecords, ports from PortInfoRecords,
 * links from LinkRecords, PartitionEnforcementCap from SwitchInfoRecords
 * and the P_Key tables the SM holds from P_KeyTableRecords (asked as a
 * trusted requester, SM_Key 1: 15.2.5.11), everything reached from the
 * SM's port by following links.  The model then holds what the SM's
 * discovery would read: node types, PartitionCap, port GUIDs and states,
 * links, LIDs, pkey_blocks per fabric_pkey_blocks() with every block
 * read, f->local_node/local_port the SM's port.
 *
 * Every answer is asked for as a single record (SubnAdmGet): one MAD each
 * way, so no RMPP is needed and nothing of a record falls into the bytes
 * ibsim's umad2sim garbles in longer answers.  CA ports without a LID
 * (down ports) are not reachable through the SA and stay unknown.
 *
 * Returns 0, or a negative errno with a sentence in err (no SM, no
 * answer, an SA error status).
 */
int sa_fabric_read(const struct sa_fabric_opts *o, struct fabric *f,
		   struct sa_fabric_info *info, char *err, size_t errlen);

#endif /* IBSM_TOOLS_IBSMCTL_FABRIC_H */
