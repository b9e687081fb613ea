/*
 * engine.h - the MAD transaction engine.
 *
 * The engine owns every request the SM has on the wire.  A request is a
 * 256-byte MAD plus an address; the engine gives it a TID, sends it when
 * the window of outstanding SMPs has room, re-sends it when its deadline
 * passes (up to `retries` times) and finally calls the request's callback
 * exactly once: with the response, or with a status of -ETIMEDOUT.
 *
 * It never blocks and it does no I/O itself: it sends through a transport
 * (mad/umad_io.c on a real or simulated port, a fake in the unit tests)
 * and the transport hands every received MAD to mad_engine_recv().  All
 * calls happen on the loop thread.
 */
#ifndef IBSM_MAD_ENGINE_H
#define IBSM_MAD_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <ev.h>

#include "mad/wire.h"

/* Where a MAD goes to or came from (all host order). */
struct mad_addr {
	uint16_t lid;		/* 0xffff (permissive) for directed route */
	uint32_t qpn;		/* 0 for SMPs, 1 for GMPs */
	uint32_t qkey;
	uint8_t  sl;
};

/* What the transport gives the engine.  send() returns 0 or -errno. */
struct mad_transport {
	int (*send)(void *ctx, const void *mad, size_t len,
		    const struct mad_addr *addr, int timeout_ms);
	void *ctx;
};

struct mad_engine;

/*
 * Completion of a request.  On success status is 0 and mad/len is the
 * validated response (same class, method = request | 0x80, same attribute
 * ID); the MAD status field is left for the caller to judge.  On failure
 * status is negative errno (-ETIMEDOUT after the last retry, -ECANCELED
 * when the engine is torn down) and mad is NULL.
 */
typedef void (*mad_done_cb)(void *arg, int status, const void *mad, size_t len);

/*
 * Unsolicited MADs (traps, SMInfo/SA requests from others): dispatched by
 * management class, method and attribute; method 0xff and attr_id 0xffff
 * match any, and the most specific registration wins.
 */
typedef void (*mad_unsol_cb)(void *arg, const void *mad, size_t len,
			     const struct mad_addr *from);

/*
 * The SMP window adapts (AIMD, as TCP's congestion window): it starts at
 * max_wire_smps, grows while SMPs are answered on their first attempt
 * (by one per answer up to the first loss, then by about one per window
 * of answers) and halves when more than a quarter of a window's worth of
 * attempts is lost (a deadline passes or the transport reports the MAD
 * dropped), never below max_wire_smps nor above smp_window_max.
 * smp_window_max <= max_wire_smps keeps the window fixed (OpenSM's
 * behaviour).  Besides, each destination (a directed-route path or a
 * LID) has its own window of at most smps_per_dest SMPs on the wire,
 * halved on every loss to it (down to 1) and grown back by answers, so a
 * large window never floods one switch's management port and a switch
 * that drops SMPs gets fewer at a time; later SMPs to it wait, in order,
 * while SMPs to other destinations go ahead.
 */
/*
 * The retry budget follows the loss the engine sees.  On a fabric that
 * answers most SMPs but loses a measurable share of them (at least
 * ENGINE_LOSSY_PERMILLE of the recent attempts, with at least
 * ENGINE_LOSSY_EVIDENCE answers seen), an SMP may be re-sent up to
 * ENGINE_LOSSY_RETRIES times instead of `retries`: an SMP that crosses
 * ten switch ports that each drop 10% is lost 65% of the time, so four
 * attempts fail for one SMP in six, and a sweep of thousands of them
 * would never complete.  On a clean fabric, and for GMPs, `retries`
 * holds; a dead node on a lossy fabric costs the longer budget.
 */
#define ENGINE_LOSSY_PERMILLE	20
#define ENGINE_LOSSY_EVIDENCE	256
#define ENGINE_LOSSY_RETRIES	31

/* A PMA MAD (class 0x04) is re-sent at most once: the performance
 * manager reads again at its next sweep. */
struct mad_engine_opts {
	unsigned max_wire_smps;	/* SMP window at start and floor (OpenSM: 4) */
	unsigned max_wire_gmps;	/* GMPs outstanding at once */
	unsigned timeout_ms;	/* per attempt (OpenSM: 200) */
	unsigned retries;	/* re-sends after the first attempt (3) */
	unsigned smp_window_max;/* ceiling of the adaptive SMP window */
	unsigned smps_per_dest;	/* SMPs on the wire to one destination; 0 no limit */
	unsigned max_wire_pmas;	/* Performance Management MADs (class 0x04)
				 * outstanding at once, a window of their
				 * own; 0: max_wire_gmps */
};

/*
 * Requests waiting for a window slot, per kind; a submit beyond them fails
 * with -ENOBUFS.  SMPs are the SM's own sweeps (bounded by the fabric's
 * size: discovery of a 50,000-node fabric queues a few hundred thousand);
 * GMPs include Reports that hosts can cause, so their bound is tight.
 * Change them with mad_engine_set_queue_limits().
 */
#define ENGINE_MAX_QUEUED_SMPS	(1u << 20)	/* ~350 MB at most */
#define ENGINE_MAX_QUEUED_GMPS	4096
#define ENGINE_MAX_QUEUED_PMAS	65536	/* the performance manager keeps
					 * its own, smaller, bound */

struct mad_engine_stats {
	uint64_t sent;		/* every MAD handed to the transport */
	uint64_t smps_sent;
	uint64_t resends;
	uint64_t answered;
	uint64_t timeouts;	/* requests that failed for good */
	uint64_t dropped;	/* received MADs refused by validation */
	uint64_t unmatched;	/* responses with no outstanding request */
	uint64_t misrouted;	/* right TID, but not from where it went */
	uint64_t unsolicited;
	uint64_t refused;	/* submits failed with -ENOBUFS */
	unsigned max_outstanding;
	unsigned max_queued[2];	/* most requests queued at once: SMP, GMP */
	/* the adaptive SMP window */
	unsigned window;	/* now */
	unsigned window_low;	/* least and most it has been */
	unsigned window_high;
	uint64_t window_cuts;	/* times it was halved */
	uint64_t dest_waits;	/* SMPs held back by the per-destination limit */
	uint64_t dest_cuts;	/* times a destination's own window was halved */
	uint64_t lossy_resends;	/* SMP re-sends beyond `retries` (lossy fabric) */
	/* LID-routed SMPs (mad_engine_submit_smp() with a DLID) */
	uint64_t smps_lid;	/* attempts sent LID-routed (in smps_sent) */
	uint64_t lid_fallbacks;	/* LID-routed SMPs re-sent directed route */
};

/*
 * The receive side (the pump's queue, mad/rxq.h, on whichever thread
 * fills it) may drop an SMP answer early when no request with
 * its TID is on the wire: the engine counts its on-wire requests per low
 * 16 bits of the TID in an array of MAD_TID_FILTER_SIZE atomic counters
 * (mad_engine_wire_tids(), read with relaxed loads from any thread while
 * the engine lives).  TIDs are not guessable, so a forged answer finds a
 * non-zero counter only by chance (outstanding / 65,536).
 */
#define MAD_TID_FILTER_SIZE	65536
#define MAD_TID_FILTER_INDEX(tid)	((uint32_t)(tid) & 0xffffu)

int  mad_engine_new(struct mad_engine **out, struct ev_loop *loop,
		    const struct mad_transport *tr,
		    const struct mad_engine_opts *opts);
const _Atomic uint16_t *mad_engine_wire_tids(const struct mad_engine *e);
/* 0 keeps a limit as it is.  Requests already queued stay queued. */
void mad_engine_set_queue_limits(struct mad_engine *e, unsigned max_smps,
				 unsigned max_gmps);
/* The window of PMA MADs (at least 1); queued ones go as it allows. */
void mad_engine_set_pma_window(struct mad_engine *e, unsigned window);
/* Fails every pending request with -ECANCELED, then frees the engine.
 * Submits from those callbacks fail with -ECANCELED. */
void mad_engine_free(struct mad_engine *e);

/*
 * Queue a request.  The engine copies the MAD, fills the TID and sends it
 * as soon as the window allows.  Returns 0 or -errno (-EINVAL for a MAD
 * that is not a request, -ENOBUFS when the queue of its kind is full).
 * The callback never runs inside this call.
 *
 * TIDs are not guessable: their low 32 bits (the part that is ours) are
 * a counter enciphered with a key drawn at random when the engine is
 * created.  An answer completes a request only if it also comes from
 * where the request went: a directed-route SMP's answer must carry the
 * request's initial path and hop count, a LID-routed one must come from
 * the destination LID (and, for GMPs, QP); anything else is counted in
 * `misrouted` and dropped, and the request keeps waiting.
 */
int mad_engine_submit(struct mad_engine *e, const void *mad, size_t len,
		      const struct mad_addr *addr, mad_done_cb cb, void *arg);

/*
 * Submit an SMP to a node, given in its directed-route form (built by
 * mad_build_smp_dr()), with the node's LID when it has one (0: none).
 * Without by_lid it goes as it is.  With by_lid (the LID is programmed
 * and routed: IBA 14.2.2.1, forwarded by the switches' LFTs in hardware
 * instead of by each switch's management firmware) it goes LID-routed (class 0x01, same method, attribute,
 * modifier and data); when all its attempts are lost it is sent again as
 * the directed-route SMP, with a fresh retry budget, and only then
 * fails, so a broken route costs time, not the request.  Its answer must
 * match the TID and come from `lid` (LID-routed) or along the path (DR),
 * as for mad_engine_submit().  The callback tells which form answered by
 * the answer's class (MAD_CLASS_SMI_DR after a fallback).  Either way the
 * SMP counts against the destination window of `lid` (when not 0), so a
 * node's SMPs share one window whatever their form.  Returns 0 or -errno.
 */
int mad_engine_submit_smp(struct mad_engine *e, const struct smp_dr *smp,
			  uint16_t lid, bool by_lid, mad_done_cb cb, void *arg);

/*
 * The M_Key (14.2.4) of the port an SMP goes to: asked before each SMP
 * is submitted (mad_engine_submit_smp(), and mad_engine_submit() of a
 * LID-routed SMP), and written into its header.  `path`[1..hops] is the
 * directed route (hops 0: the local port), or NULL for a LID-routed SMP
 * to `lid`.  NULL fn: SMPs go with the M_Key their builder gave (0).
 */
typedef uint64_t (*mad_mkey_fn)(void *arg, const uint8_t *path,
				unsigned hops, uint16_t lid);
void mad_engine_set_mkey(struct mad_engine *e, mad_mkey_fn fn, void *arg);

/* Send a MAD that expects no answer (responses, Trap Repress, Reports). */
int mad_engine_send_oneway(struct mad_engine *e, const void *mad, size_t len,
			   const struct mad_addr *addr);

int mad_engine_on_unsolicited(struct mad_engine *e, uint8_t mgmt_class,
			      uint8_t method, uint16_t attr_id,
			      mad_unsol_cb cb, void *arg);

/*
 * Responses that match no outstanding request, for one management class,
 * go to cb instead of being counted as unmatched: RMPP needs them (the
 * segments after the first, ACKs from a receiver).  One per class.
 */
int mad_engine_on_unmatched(struct mad_engine *e, uint8_t mgmt_class,
			    mad_unsol_cb cb, void *arg);

/*
 * The transport calls this for every MAD it receives.  status is the
 * transport's per-MAD status (non-zero: the kernel reports that a request
 * timed out; the engine treats it as a lost attempt).
 */
void mad_engine_recv(struct mad_engine *e, const void *mad, size_t len,
		     const struct mad_addr *from, int status);

/* The window of the destination an SMP (mad, addr) goes to: what
 * smps_per_dest allows, or less after losses there. */
unsigned mad_engine_dest_window(struct mad_engine *e, const void *mad,
				size_t len, const struct mad_addr *addr);

/* Destinations whose window is below smps_per_dest now. */
unsigned mad_engine_dests_throttled(const struct mad_engine *e);

/* Requests queued or on the wire. */
unsigned mad_engine_pending(const struct mad_engine *e);
const struct mad_engine_stats *mad_engine_stats(const struct mad_engine *e);

/* Build a DR SMP Get/Set.  path[1..hops] are the egress ports. */
void mad_build_smp_dr(struct smp_dr *smp, uint8_t method, uint16_t attr_id,
		      uint32_t attr_mod, const uint8_t *path, unsigned hops);
/* Build a LID-routed SMP Get/Set. */
void mad_build_smp_lid(struct smp_lid *smp, uint8_t method, uint16_t attr_id,
		       uint32_t attr_mod);

/*
 * Check a received MAD before anything reads it: length, base version,
 * class versions, DR hop fields.  Returns 0 or -EBADMSG / -EPROTO.
 */
int mad_validate(const void *mad, size_t len);

#endif /* IBSM_MAD_ENGINE_H */
