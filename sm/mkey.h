/*
 * mkey.h - M_Key protection (IBA 14.2.4): the key each port is given, the
 * keys the ports hold as far as we know, and the M_Key put in every SMP.
 *
 * With m_key 0 (the default) nothing here runs: no key is set, SMPs carry
 * 0, as without protection.  With a key:
 *  - every end port (CA and router ports, switch port 0) is given the key
 *    (m_key, or with m_key_per_port a key derived from m_key and the port
 *    GUID), m_key_protection_level and m_key_lease_period (sm/program/port.c);
 *  - every SMP carries the key of the port it goes to: the key that port
 *    is known to hold (read back with the right key, or set by us), else
 *    the key it is to be given, else m_key (OpenSM's default for a port
 *    it does not know);
 *  - the target of a directed route is found along the links of the
 *    model being discovered, else of the last one (and OpenSM's
 *    neighbors file across restarts); of a
 *    LID-routed SMP, by its LID in the last model;
 *  - the keys survive restarts in OpenSM's guid2mkey file and the links
 *    in its neighbors file, in the cache directory (same format: OpenSM's
 *    "key value" records), written atomically after a heavy sweep.
 *
 * Pure but for the files and the daemon's glue at the end of mkey.c
 * (sm_mkey_start(), sm_mkey_sweep_done(): sm/sm.h), which installs
 * mkey_for_smp() as the engine's M_Key hook and learns each model; the
 * sweep (sm/sweep.c) records the keys it sets.
 */
#ifndef IBSM_SM_MKEY_H
#define IBSM_SM_MKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sm_config;
struct fabric;
struct mkey_state;

struct mkey_state *mkey_new(void);
void mkey_free(struct mkey_state *m);

/* The key port `guid` is given: 0 when m_key is 0. */
uint64_t mkey_want(const struct sm_config *cfg, uint64_t port_guid);
/* The key port `guid` holds as far as we know; else mkey_want(). */
uint64_t mkey_of(const struct mkey_state *m, const struct sm_config *cfg,
		 uint64_t port_guid);
/* Port `guid` holds `key` (0: it is unprotected).  True when that is
 * news (the files need writing). */
bool mkey_record(struct mkey_state *m, uint64_t port_guid, uint64_t key);
/* The links and LIDs of `f`: the targets of the next SMPs.  True when
 * the links differ from those known. */
bool mkey_learn(struct mkey_state *m, const struct fabric *f);
/* Keys known (0: protection was never used here). */
size_t mkey_count(const struct mkey_state *m);

/* The engine's hook (mad_mkey_fn): `arg` is a struct mkey_hook. */
struct mkey_hook {
	const struct sm_config *cfg;
	struct mkey_state *m;
	const struct fabric *f;		/* the model being built, else the
					 * last one: its links come first */
	uint64_t local_guid;		/* the SM's port */
	uint8_t  local_port;
	/* SMPs sent with a key from the cache, the wanted key, m_key */
	uint64_t by_cache, by_want, by_default;
};
uint64_t mkey_for_smp(void *arg, const uint8_t *path, unsigned hops,
		      uint16_t lid);

/*
 * OpenSM's rule for a protected key with a lease: the SM must present it
 * within every lease period, so sweeps must run (sweep_interval 0
 * becomes lease - 1) and more often than the lease (a lease not above
 * sweep_interval becomes sweep_interval + 1).  Writes what it changed
 * into `note` (empty: nothing).
 */
void mkey_fix_lease(struct sm_config *cfg, char *note, size_t len);

/* OpenSM's guid2mkey and neighbors files in `dir`.  Load: the number of
 * keys read, or -errno (a missing file is 0); bad records are skipped,
 * each named by `warn` (FILE:LINE: what was expected).  Save: 0 or
 * -errno. */
int mkey_load(struct mkey_state *m, const char *dir,
	      void (*warn)(void *arg, const char *msg), void *arg);
int mkey_save(const struct mkey_state *m, const char *dir);

#endif /* IBSM_SM_MKEY_H */
