/*
 * internal.h - what sm/health/'s files share: the daemon's health state
 * (struct sm_health, in sm->health) and the helpers between them.
 */
#ifndef IBSM_SM_HEALTH_INTERNAL_H
#define IBSM_SM_HEALTH_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/fileutil.h"
#include "health/checks.h"
#include "health/events.h"
#include "health/findings.h"
#include "health/history.h"
#include "health/policy.h"
#include "model/fabric.h"
#include "sm/health/health.h"

struct sm;

/* Events kept in memory, findings held open at most. */
#define HEALTH_EVENTS		4096
#define HEALTH_FINDINGS		4096
/* The event file: rotated past this size, this many old files kept
 * (ibsm-events.log.1 ... .N). */
#define HEALTH_EVFILE_MAX	(4u << 20)
#define HEALTH_EVFILE_KEEP	3
#define HEALTH_EVFILE_NAME	"ibsm-events.log"
/* After a failed write (ENOSPC, EIO ...) the file is tried again after
 * this long; events meanwhile stay in memory only. */
#define HEALTH_EVFILE_RETRY	30.0
/* Nodes whose SMPs went unanswered in one sweep, remembered for the
 * history (beyond: counted as answered, the sweep's own log names them). */
#define HEALTH_MAX_UNANSWERED	256
/* The largest reference topology file read (bytes). */
#define HEALTH_REF_MAX		(256u << 20)
/* Ports isolated at once. */
#define HEALTH_MAX_ISOLATED	64

/* The event file in the dump directory (events_file.c). */
struct evfile {
	char     path[600];
	int      fd;			/* -1: closed */
	off_t    size;
	uint64_t cursor;		/* next ring seq to write */
	uint64_t dropped;		/* events never written */
	double   retry_at;		/* closed after a failure until then */
	int      last_err;
	off_t    max_size;		/* rotated past it (HEALTH_EVFILE_MAX) */
	unsigned keep;			/* old files kept (HEALTH_EVFILE_KEEP) */
};

/* A port the isolation policy disabled (isolate.c). */
struct health_iso {
	uint64_t guid;			/* the node whose port is disabled */
	uint8_t  port;
	uint64_t peer_guid;		/* what it faced when disabled */
	uint8_t  peer_port;
	/* both ends' names and LIDs then (the far end leaves the model) */
	uint16_t lid, peer_lid;
	char     desc[HF_DESC_SIZE], peer_desc[HF_DESC_SIZE];
	double   since;			/* wall clock */
	bool     inflight;		/* a Set is on its way */
	bool     done;			/* the Set was acknowledged */
	unsigned sets;			/* Sets sent for it */
	char     why[200];
};

struct sm_health {
	struct sm *sm;
	struct health_policy pol;
	struct health_history hist;
	struct hf_set findings;
	struct he_ring events;
	struct evfile evf;
	bool     have_routes;		/* the routing verdict below is set */
	struct hc_routing_verdict routes;
	char     routes_what[200];
	/* nodes with unanswered SMPs in the sweep under way */
	uint64_t unanswered[HEALTH_MAX_UNANSWERED];
	unsigned n_unanswered;
	/* duplicate node GUIDs of the last discovery */
	uint64_t dup_guids[16];
	unsigned n_dup_guids;
	/* LID conflicts of the last LID assignment */
	struct hc_lid_conflict lid_conf[8];
	unsigned n_lid_conf;
	/* the reference topology (--topology-ref) */
	struct fabric ref;
	bool     have_ref;
	char     ref_path[600];		/* of the reference held */
	struct file_stamp ref_stamp;
	bool     ref_stamped;
	char     ref_err[300];		/* last error (logged once) */
	/* isolation */
	struct health_iso iso[HEALTH_MAX_ISOLATED];
	unsigned n_iso;
	unsigned sweeps;		/* sweep rounds run */
	double   counters_at;		/* last counter round (wall clock) */
	struct hc_counter_state cst;	/* error-rate windows per port */
};

/* sm->health, made on first use (NULL without memory). */
struct sm_health *health_get(struct sm *sm);
double health_now(void);

/* An event: in the ring, then appended to the file. */
void health_event(struct sm_health *h, enum he_type type, uint64_t guid,
		  uint8_t port, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* events_file.c */
void evfile_init(struct evfile *ef);
void evfile_close(struct evfile *ef);
/* Write every event of the ring past the cursor, to the file in `dir`
 * (none when dir is empty).  Failures are logged (rate limited). */
void evfile_flush(struct evfile *ef, const struct he_ring *r,
		  const char *dir, double now);
/* One event as a line of the file (and of `ibsmctl events`), without
 * the newline. */
void evfile_format(const struct he_event *e, char *buf, size_t len);

/* isolate.c */
/* Apply the policy to the open findings after a round: a flapping
 * port's (or another unhealthy port's) facing port is disabled, when it
 * may be; isolated ports found enabled again are disabled again. */
void iso_apply(struct sm_health *h);
/* Is (guid, port) an isolated port? */
const struct health_iso *iso_find(const struct sm_health *h, uint64_t guid,
				  uint8_t port);
/* A finding as shown: a name, LID or peer the model no longer has (an
 * isolated link's far end left it) filled in from the isolation. */
void iso_name(const struct sm_health *h, const struct hf_finding *f,
	      struct hf_finding *out);
/* Enable a port: PortPhysicalState Polling, and forget its isolation.
 * 0, or -errno with why in err. */
int  iso_enable(struct sm_health *h, int32_t node, uint8_t port, char *err,
		size_t errlen);
/* Can link (node, port) of `f` be disabled without cutting the SM off
 * from other nodes, taking the SM's own link or the last active link of
 * a switch?  NULL when it can, else why not. */
const char *iso_refusal(const struct fabric *f, int32_t node, uint8_t port);

/* health.c: the reference topology in force (reloaded when its file
 * changed on disk), NULL without one. */
const struct fabric *health_reference(struct sm_health *h);

#endif /* IBSM_SM_HEALTH_INTERNAL_H */
