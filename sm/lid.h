/*
 * lid.h - LID assignment and the guid2lid cache.
 *
 * The cache is OpenSM's file format, one line per port GUID:
 *     0x0002c90300001234 0x0005 0x0005
 * (port GUID, first LID, last LID of its LMC range).  It keeps entries of
 * ports that are absent today so they get their LIDs back when they return.
 */
#ifndef IBSM_SM_LID_H
#define IBSM_SM_LID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/fabric.h"

#define LID_UNICAST_MAX	0xbfff

struct lid_cache;

/* An empty cache.  Returns NULL on allocation failure. */
struct lid_cache *lid_cache_new(void);
void lid_cache_free(struct lid_cache *c);

/*
 * Read a guid2lid file.  A missing file is an empty cache (returns 0).
 * Malformed lines are skipped and reported one by one through `warn`
 * (may be NULL) as "FILE:LINE: what was expected"; returns the number of
 * entries loaded or -errno for an unreadable file.
 */
int lid_cache_load(struct lid_cache *c, const char *path,
		   void (*warn)(void *arg, const char *msg), void *arg);
/*
 * Is the guid2lid file one OpenSM's reader takes whole?  OpenSM reads it
 * as records: a line starting with a word opens one (the GUID, then the
 * LIDs), lines after it continue it, an empty line closes it; lines are
 * read in pieces of at most 1023 bytes.  It gives up on the file
 * (osm_db_restore() fails, and OpenSM with exit_on_fatal stops) at a
 * piece that should open a record but starts with a space, a tab or a
 * NUL byte, or when the file cannot be opened or read.  Bad values in a
 * record are no such failure: the record is ignored.
 * Returns 0 (a missing file too), -EBADMSG with *line the 1-based piece
 * where the reader gives up, or -errno of open or read.
 */
int lid_cache_check(const char *path, unsigned *line);
/*
 * Write atomically (temp file + fsync + rename), and only when the
 * content differs from the file's: an unchanged cache leaves the file (its
 * inode and mtime) alone.  Returns 0 or -errno.
 */
int lid_cache_save(const struct lid_cache *c, const char *path);

/* Lookup: true, with min and max set, when the GUID has an entry. */
bool lid_cache_get(const struct lid_cache *c, uint64_t guid,
		   uint16_t *min, uint16_t *max);
int  lid_cache_set(struct lid_cache *c, uint64_t guid, uint16_t min, uint16_t max);
size_t lid_cache_count(const struct lid_cache *c);

struct lid_policy {
	uint8_t lmc;		/* 0-7: CA/router ports get 2^lmc LIDs */
	bool    reassign;	/* -r: ignore cache and current LIDs */
	bool    lmc_esp0;	/* an enhanced switch port 0 gets 2^lmc LIDs
				 * too (else 1, like a base port 0) */
	bool    prefer_fabric;	/* current LIDs before the cache: a takeover,
				 * where the LIDs ports hold are the master's
				 * and this SM's cache may be stale */
};

#define LID_REPORT_NAMES	8

struct lid_report {
	unsigned kept_cache;	/* ranges taken from the cache */
	unsigned kept_fabric;	/* ranges taken from the port's current LID */
	unsigned assigned;	/* fresh ranges */
	unsigned fixed_dup;	/* current LIDs that collided and were moved */
	/* the first of those collisions: the LID, the port moved and the
	 * port that kept it (port GUIDs), for the health checks */
	unsigned n_dups;
	struct lid_dup {
		uint16_t lid;
		uint64_t moved, kept;
	} dups[LID_REPORT_NAMES];
	unsigned fixed_range;	/* current LIDs invalid/out of range/misaligned */
	unsigned exhausted;	/* ports left without a LID */
	uint16_t limit;		/* highest LID given: the smallest switch
				 * LinearFDBCap - 1, at most 0xbfff */
	uint64_t limit_switch;	/* node GUID of the switch setting limit, 0:
				 * the unicast space did */
	uint8_t  lmc;		/* LMC given: the policy's, or less when its
				 * ranges did not fit below limit */
	unsigned reduced;	/* ports given fewer LIDs than the policy's */
	uint64_t reduced_guid[LID_REPORT_NAMES];	/* the first of them */
	unsigned n_without;	/* entries of without[] */
	uint64_t without[LID_REPORT_NAMES];	/* first ports left without */
};

/*
 * Give every LID-bearing port of `f` (CA and router ports with PortInfo,
 * switch port 0) a base LID and LMC in fab_port.lid/.lmc, and set
 * f->max_lid.  Switch port 0 gets LMC 0, or the policy's LMC when the
 * switch has enhanced port 0 and the policy's lmc_esp0 is set.  Ranges are aligned to 2^lmc.
 * Preference: the cache entry, then the port's current LID (pi.lid), then
 * the lowest free aligned range, never touching ranges the cache holds
 * for absent ports while free LIDs remain.  No LID goes past the
 * smallest LinearFDBCap of the fabric's switches (nor 0xbfff): when the
 * policy's LMC does not fit below it, every port gets the largest LMC
 * that does (r->lmc, r->reduced), and ports are left without a LID only
 * when one LID each does not fit.  The cache is updated to the result.
 * Returns 0 or -errno (-ENOSPC when ports were left without).
 */
int lid_assign(struct fabric *f, struct lid_cache *c,
	       const struct lid_policy *p, struct lid_report *r);

/*
 * Sequential LIDs for offline tools and tests (routebench, unit tests):
 * each switch's port 0 one LID with LMC 0, then every CA or router port
 * with PortInfo 2^lmc LIDs on an aligned boundary, in node order; sets
 * fab_port.lid/.lmc, PortInfo LID/LMC and f->max_lid.  No cache, no
 * stability across runs: the daemon uses lid_assign().  Returns 0 or
 * -ENOSPC when the unicast LID space runs out.
 */
int lid_assign_sequential(struct fabric *f, unsigned lmc);

#endif /* IBSM_SM_LID_H */
