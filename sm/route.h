/*
 * route.h - the daemon's side of routing: options from the configuration
 * (engine list, root/cn GUID files, layers from max_op_vls), the engine
 * chain, the log lines, and the verification that decides whether the
 * new tables are programmed or the previous ones kept.
 */
#ifndef IBSM_SM_ROUTE_H
#define IBSM_SM_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "health/checks.h"
#include "routing/report.h"
#include "routing/routing.h"
#include "model/fabric.h"

struct sm;
struct sm_config;

/* The default engine list (routing_engine unset or "(null)"). */
#define SM_DEFAULT_ENGINES	"auto"

/* The most GUIDs a root_guid_file or cn_guid_file may hold. */
#define SM_MAX_GUID_FILE	65536

/*
 * Read an OpenSM GUID file (root_guid_file, cn_guid_file): one GUID per
 * line, hexadecimal with or without 0x, '#' starts a comment, blank lines
 * ignored.  *guids is malloc'd (NULL when the file holds none).  Returns
 * the number of GUIDs, or -errno with "FILE:LINE: what was expected" (or
 * "FILE: why") in err.
 */
int sm_guid_file_load(const char *path, uint64_t **guids, char *err,
		      size_t errlen);

/*
 * At start: the lines of guid_routing_order_file,
 * port_search_ordering_file, hop_weights_file or port_prof_ignore_file
 * (`key`) at `path` that the routing will skip,
 * each a warning on stderr ("FILE:LINE: what"), or that the file cannot
 * be read.  Whether the GUIDs are switches of the fabric is known at
 * routing.  Returns the number of warnings.
 */
size_t sm_order_file_check(const char *key, const char *path);

/* Layers an engine may use for PortInfo:OperationalVLs code `max_op_vls`
 * (1: VL0, 2: VL0-1, 3: VL0-3, 4: VL0-7, 5: VL0-14). */
unsigned sm_max_layers(unsigned max_op_vls);

/*
 * Route the sweep's model `f` into `out` (zeroed on entry): the engine
 * list of the configuration with its options, logging the summary
 * (INFO), every fallback (WARNING, ERR 1501) and the time taken.  Then
 * verify the tables (reachability, loops, misroutes; per-layer channel
 * dependencies when the tables have layers); when a check fails, log
 * ERR 1502 with the first bad LID and switch and put the previous
 * sweep's tables (sm->routes on sm->fabric, by switch GUID) in `out`
 * instead, so that nothing new is programmed and the sweep completes.
 * Returns 0, or -errno with the reason in err when no engine could route.
 */
int sm_route(struct sm *sm, const struct fabric *f,
	     struct routing_result *out, char *err, size_t errlen);

/*
 * sm_route() in three steps, so that the heavy one can run off the loop
 * (sm/sweep.c runs sm_route_compute() on a thread of its own):
 *
 *   sm_route_prepare()  loop: the engine list and its options (GUID
 *                       files read, ERR 1503 logged) copied into the job;
 *   sm_route_compute()  any thread: the engines and the checks, on `f`
 *                       and the job alone (no log, no sm, no globals);
 *   sm_route_finish()   loop: logs what compute found, tries the
 *                       incremental merge, keeps the previous tables when
 *                       the new ones fail, and moves the result to `out`.
 *
 * `f` must not change from prepare to finish.  sm_route_job_free() frees
 * what a job still holds (a job that was not finished).
 */
struct sm_route_job {
	const struct fabric *f;
	char list[256];			/* the engine list */
	struct routing_opts o;		/* owns the GUID arrays */
	bool corrupt;			/* IBSM_DEBUG_CORRUPT_LFT is due */
	unsigned delay_ms;		/* IBSM_DEBUG_ROUTE_DELAY_MS (tests) */
	struct vl_qos qos;		/* qos TRUE: o.qos points here */
	uint8_t max_op_vls;		/* for the per-VL check's tables */

	struct routing_result out;	/* compute: the engine's tables */
	int rc;				/* of the engines, or of verify */
	bool verified;			/* verify ran: vrc, what, lost */
	int vrc;
	char what[200];
	uint64_t lost;
	struct hc_routing_verdict verdict;	/* the same, as numbers */
	uint16_t corrupt_lid;		/* what the debug hook cleared */
	uint64_t corrupt_guid;
	double t_engine, t_verify;	/* seconds */
	/* compute: the engine's tables' all-to-all load (routing_report_load,
	 * the figures `ibsmctl routes report` gives), lrc its outcome */
	struct routing_report load;
	int lrc;
	char err[512];
};

void sm_route_prepare(struct sm *sm, const struct fabric *f,
		      struct sm_route_job *j);
void sm_route_compute(struct sm_route_job *j);
int sm_route_finish(struct sm *sm, struct sm_route_job *j,
		    struct routing_result *out, char *err, size_t errlen);
void sm_route_job_free(struct sm_route_job *j);

/*
 * qos TRUE: the QoS SLs the SA hands out (the default SL: 0, or the
 * policy's default level's; partitions' and their multicast groups'
 * sl=; the QoS policy's levels, `pol` or NULL) and the QoS
 * SL-to-VL table of switch external ports (qos_swe_sl2vl, else
 * qos_sl2vl, else OpenSM's default), as routing/vlsplit.h takes them.
 * -EINVAL when the table does not parse (checked when read: a bug).
 */
struct part_config;
struct qos_policy;
int sm_route_qos(const struct sm_config *cfg, const struct part_config *pc,
		 const struct qos_policy *pol, struct vl_qos *q);

/*
 * ibsm --route-only FILE (and tools/routebench): no fabric, no simulator.
 * Load the topology file (ibnetdiscover or ibsim .net), number the LIDs
 * (switches first, then CA/router ports, ranges aligned to 2^lmc), route
 * with cfg's engine list and options, verify, and print the quality
 * report (routing/report.h) on `out`, as text or JSON; with
 * cfg->dump_lfts the tables too, in ibroute's format.  Problems go to
 * `errf`.  Returns the exit status: 0 every check passed, 1 a check
 * failed, 2 the file or the configuration could not be used or no
 * engine could route.
 */
int sm_route_offline(const char *file, const struct sm_config *cfg,
		     bool json, FILE *out, FILE *errf);

#endif /* IBSM_SM_ROUTE_H */
