/*
 * babble.h - babbling_port_policy's bookkeeping (pure: no I/O, no
 * clock of its own).  OpenSM counts how often the same trap 129, 130 or
 * 131 (link integrity, buffer overrun, flow control update watchdog)
 * arrives, as long as each comes within 5 s of the one before (60 s once
 * it has repeated 10 times), and with babbling_port_policy disables the
 * port the trap names when it has repeated 250 times.  Here a trap is
 * "the same" when its sender (SLID) and its whole Notice are (OpenSM
 * keys on the Notice alone, so that anyone who copies a port's trap adds
 * to that port's count), and the port named must be one of the sender's
 * own (any host can send a trap naming any port).
 */
#ifndef IBSM_SM_BABBLE_H
#define IBSM_SM_BABBLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fabric;

#define BABBLE_REPEATS		250	/* OpenSM's threshold */
#define BABBLE_AGE		5.0	/* s: OpenSM's trap suppression timeout */
#define BABBLE_AGE_NOISY	60.0	/* s: its unhealthy timeout, from ... */
#define BABBLE_NOISY		10	/* ... this many repeats on */
#define BABBLE_SLOTS		256	/* traps followed at once */

struct babble_key {
	uint16_t slid;		/* the sender */
	uint16_t lid;		/* the LID and port the Notice names */
	uint8_t  port;
	uint64_t hash;		/* of the whole Notice (babble_hash()) */
};

struct babble_slot {
	struct babble_key k;
	unsigned repeats;	/* identical traps before the last one */
	double   expires;	/* forgotten when none comes before this */
	bool     used;
	bool     acted;		/* the verdict past the threshold is given */
};

struct babble_table {
	struct babble_slot s[BABBLE_SLOTS];
};

/* FNV-1a of `len` bytes. */
uint64_t babble_hash(const void *p, size_t len);

/*
 * One trap with key `k` at time `now` (seconds): its slot, with repeats
 * the number of identical traps that came before it within the aging
 * window (0: the first, or the first after a pause).  A new key takes a
 * free or expired slot, else the one that expires first.
 */
struct babble_slot *babble_count(struct babble_table *t,
				 const struct babble_key *k, double now);

enum babble_verdict {
	BABBLE_COUNTING,	/* below the threshold */
	BABBLE_POLICY_OFF,	/* babbling_port_policy FALSE: nothing */
	BABBLE_FOREIGN,		/* the port named is not the sender's */
	BABBLE_DISABLE,		/* disable the port (once) */
	BABBLE_DONE,		/* decided before: nothing more */
};

/*
 * The verdict on a slot just counted: `policy` babbling_port_policy,
 * `own_port` whether the port the trap names belongs to the node that
 * sent it.  Past the threshold a slot gets one verdict other than
 * COUNTING or DONE (the caller logs it once), then DONE while its
 * traps keep coming.
 */
enum babble_verdict babble_decide(struct babble_slot *s, bool policy,
				  bool own_port);

/*
 * The port to disable for a babbling port pn of node id of `f`: that
 * port, or the port at the other end of its link when that one is
 * nearer the SM (fewer hops on the directed route), as OpenSM chooses.
 * False when the port has no link.
 */
bool babble_target(const struct fabric *f, int32_t id, uint8_t pn,
		   int32_t *tid, uint8_t *tpn);

#endif /* IBSM_SM_BABBLE_H */
