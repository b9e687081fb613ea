/*
 * findings.h - what the health checks found wrong with the fabric, each
 * with a life: a finding opens the first round a check reports it, stays
 * open (first_seen kept, last_seen moved) while each later round of its
 * group reports it again, and closes the first round of its group that
 * does not.
 *
 * Pure: no I/O, no logging.  The daemon (sm/health/) runs a group's
 * checks (health/checks.h) between hf_set_begin() and hf_set_end(); the
 * callback given to hf_set_end() hears of every finding opened and
 * closed in that round, for the event history and the log.
 *
 * Times are the caller's clock in seconds (the daemon passes wall-clock
 * time, so a finding can say since when).
 */
#ifndef IBSM_HEALTH_FINDINGS_H
#define IBSM_HEALTH_FINDINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum hf_kind {
	/* links (group HF_G_SWEEP) */
	HF_LINK_NOT_ACTIVE,	/* physically linked, not ACTIVE after a sweep */
	HF_LINK_DEGRADED,	/* active width/speed below the best both ends
				 * enable (LinkWidthEnabled/LinkSpeedEnabled) */
	HF_LINK_BELOW_REF,	/* below the reference topology's width/speed */
	HF_LINK_BELOW_EXPECTED,	/* below health_expected_width/_speed */
	/* reference topology (HF_G_SWEEP) */
	HF_REF_MISSING_NODE,
	HF_REF_UNEXPECTED_NODE,
	HF_REF_MISSING_LINK,
	HF_REF_UNEXPECTED_LINK,
	HF_REF_CABLE_MOVED,	/* same two nodes, another port */
	HF_REF_DESC_CHANGED,
	/* identity (HF_G_SWEEP) */
	HF_DUP_DESC,
	HF_DUP_GUID,
	HF_LID_CONFLICT,
	HF_ROGUE_SM,		/* an SM of another SM_Key (its port; detail:
				 * its SMInfo state) */
	HF_BAD_MKEY,		/* a port refused an SMP without its M_Key
				 * (trap 256; value: the requester's LID) */
	/* counters (HF_G_COUNTERS) */
	HF_ERROR_RATE,		/* detail: the counter (enum pc_id) */
	HF_CONGESTION,		/* PortXmitWait */
	/* unhealthy ports and nodes (HF_G_HISTORY) */
	HF_FLAPPING,
	HF_UNRESPONSIVE,
	HF_NOISY,		/* trap rate */
	HF_REFUSING_SETS,
	/* routing (HF_G_ROUTING) */
	HF_ROUTING_CYCLE,
	HF_ROUTING_UNREACHABLE,
	HF_N_KINDS
};

enum hf_severity {
	HF_WARNING,
	HF_CRITICAL,
	HF_N_SEVERITIES
};

/*
 * Check groups: a round covers some groups (a mask) and closes only the
 * findings of those groups that it did not see again.  Links, reference
 * and identity run after each heavy sweep; the unhealthy-port classifier
 * after each sweep; routing after each routing; counters after each
 * counter sweep.
 */
enum hf_group {
	HF_G_SWEEP	= 1u << 0,	/* links, reference topology, identity */
	HF_G_HISTORY	= 1u << 1,	/* flapping, unresponsive, noisy, refusing */
	HF_G_ROUTING	= 1u << 2,	/* cycles, unreachable */
	HF_G_COUNTERS	= 1u << 3,	/* error rates, congestion */
	HF_G_ALL	= 0xfu
};

#define HF_DESC_SIZE	65	/* NodeDescription: 64 bytes + NUL */
#define HF_TEXT_SIZE	160

struct hf_finding {
	enum hf_kind     kind;
	enum hf_severity severity;
	/* where: the node and port (port 0 for a node, or for a switch's
	 * management port; guid 0 for the fabric as a whole) */
	uint64_t guid;
	uint8_t  port;
	uint16_t lid;			/* 0: none known */
	char     desc[HF_DESC_SIZE];
	/* the other end of the cable (peer_guid 0: none) */
	uint64_t peer_guid;
	uint8_t  peer_port;
	uint16_t peer_lid;
	char     peer_desc[HF_DESC_SIZE];
	/* kind-specific key part: the counter (enum pc_id) of an error
	 * rate, the LID of a LID conflict, ...; 0 when unused */
	uint32_t detail;
	/* kind-specific figures, for the text and JSON: an error rate's
	 * value per hour and its threshold, a link's width/speed got and
	 * wanted, a flap count ... (see checks.c for each kind) */
	uint64_t value, limit;
	char     text[HF_TEXT_SIZE];	/* one line, no newline */
	double   first_seen, last_seen;
};

/* The key of a finding: (kind, guid, port, detail). */
static inline bool hf_same(const struct hf_finding *a, const struct hf_finding *b)
{
	return a->kind == b->kind && a->guid == b->guid &&
	       a->port == b->port && a->detail == b->detail;
}

struct hf_summary {
	unsigned count[HF_N_SEVERITIES];	/* open findings per severity */
	unsigned dropped;	/* reports refused since init: the set was full */
};

/*
 * A bounded set of open findings.  Fields are the implementation's:
 * read through the functions below.
 */
struct hf_set {
	struct hf_finding *f;	/* open findings, then this round's new ones */
	uint8_t *seen;		/* per entry: reported this round */
	uint8_t *fresh;		/* per entry: opened this round */
	size_t n, cap;
	uint32_t *hash;		/* open addressing: index + 1, 0 empty */
	size_t hash_size;
	unsigned round_groups;	/* groups of the round under way, 0: none */
	unsigned dropped;
};

/* At most `cap` open findings (reports beyond are dropped and counted).
 * 0 or -ENOMEM. */
int hf_set_init(struct hf_set *s, size_t cap);
void hf_set_free(struct hf_set *s);

/* Start a round of the checks of `groups` (HF_G_* mask). */
void hf_set_begin(struct hf_set *s, unsigned groups);

/*
 * A check found `f` (kind, severity, where, text filled in; the times
 * are set here): a new finding opens with first_seen = now, one already
 * open keeps its first_seen and takes last_seen = now and f's severity,
 * figures and text.  A kind outside the round's groups is ignored (so is
 * a report outside a round).  Returns 1 opened, 0 already open,
 * -ENOSPC when the set is full, -EINVAL outside the round.
 */
int hf_set_report(struct hf_set *s, const struct hf_finding *f, double now);

typedef void (*hf_change_cb)(void *arg, const struct hf_finding *f,
			     bool opened);

/*
 * End the round: every open finding of the round's groups that was not
 * reported in it closes (the callback hears it with opened false, then
 * it is gone); each finding opened in the round is told with opened
 * true.  cb may be NULL.
 */
void hf_set_end(struct hf_set *s, double now, hf_change_cb cb, void *arg);

/* Open findings: index 0 .. hf_set_count() - 1, in no particular order. */
static inline size_t hf_set_count(const struct hf_set *s) { return s->n; }
static inline const struct hf_finding *hf_set_at(const struct hf_set *s,
						 size_t i)
{
	return &s->f[i];
}
/* The open finding with f's key, or NULL. */
const struct hf_finding *hf_set_find(const struct hf_set *s,
				     const struct hf_finding *key);

void hf_set_summary(const struct hf_set *s, struct hf_summary *sum);

/* The group a kind belongs to (one HF_G_* bit). */
unsigned hf_kind_group(enum hf_kind k);
/* Stable lower-case names for JSON and text: "link_not_active",
 * "error_rate", ...; "warning", "critical".  "?" when out of range. */
const char *hf_kind_name(enum hf_kind k);
const char *hf_severity_name(enum hf_severity s);

#endif /* IBSM_HEALTH_FINDINGS_H */
