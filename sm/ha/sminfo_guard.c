/*
 * sminfo_guard.c - the SMInfo agent's rules for senders (see
 * sminfo_guard.h).
 *
 * SubnSet(SMInfo) (14.4.1, the SM state machine; OpenSM's
 * osm_sm_state_mgr_check_legality() accepts the same signals per state):
 *
 *   ACKNOWLEDGE  answers our HANDOVER: only from the SM it went to.
 *   the others   come from a master (the payload says MASTER), and:
 *     MASTER       takes none of them; HANDOVER from the SM we handed
 *                  over to or from another master we found is answered
 *                  (two masters met) but changes nothing.
 *     STANDBY      HANDOVER, DISABLE and DISCOVER from the master it
 *                  follows.
 *     DISCOVERING  HANDOVER, STANDBY and DISABLE from a master its own
 *                  SMInfo Gets found.
 *     NOTACTIVE    DISCOVER and STANDBY from the master it followed.
 *
 * A host can claim any GUID and state in the payload, so the sender is
 * also matched on what it cannot choose: the LID a LID-routed Set came
 * from, the route a directed-route one took (sm/ha/sminfo.c).
 */
#include "config.h"

#include <stddef.h>

#include "mad/wire.h"
#include "sm/ha/election.h"
#include "sm/ha/sminfo_guard.h"

const char *sminfo_set_refusal(const struct sminfo_set_view *v)
{
	if (v->mod == SMINFO_ACKNOWLEDGE)
		return v->from_handover_target ? NULL :
		       "no HANDOVER of ours to acknowledge";
	if (v->mod < SMINFO_HANDOVER || v->mod > SMINFO_DISCOVER)
		return "unknown AttributeModifier";
	if (v->sender_state != SM_STATE_MASTER)
		return "only a master sends it";
	switch (v->our_state) {
	case SM_STATE_MASTER:
		if (v->mod == SMINFO_HANDOVER &&
		    (v->from_handover_target || v->from_found_master))
			return NULL;
		return "a master takes it from no other SM";
	case SM_STATE_STANDBY:
		if (v->mod == SMINFO_STANDBY)
			return "already STANDBY";
		return v->from_our_master ? NULL :
		       "not from the master we follow";
	case SM_STATE_DISCOVERING:
		if (v->mod == SMINFO_DISCOVER)
			return "already DISCOVERING";
		return v->from_found_master ? NULL :
		       "not from a master we found";
	case SM_STATE_NOTACTIVE:
		if (v->mod != SMINFO_DISCOVER && v->mod != SMINFO_STANDBY)
			return "not taken in NOTACTIVE";
		return v->from_our_master ? NULL :
		       "not from the master we followed";
	}
	return "unknown state";
}

static double refill(double tokens, double last, double now, double rate,
		     double cap)
{
	if (now > last)
		tokens += (now - last) * rate;
	return tokens > cap ? cap : tokens;
}

bool sminfo_guard_get(struct sminfo_guard *g, uint32_t src, double now)
{
	struct sminfo_get_bucket *b = NULL, *victim = NULL;

	for (unsigned i = 0; i < SMINFO_GET_SOURCES; i++) {
		struct sminfo_get_bucket *t = &g->gets[i];

		if (t->src == src) {
			b = t;
			break;
		}
		if (!victim || (victim->src && (!t->src || t->last < victim->last)))
			victim = t;
	}
	if (!b) {
		b = victim;
		b->src = src;
		b->tokens = SMINFO_GET_BURST;
		b->last = now;
		b->sm_until = 0.;
	}
	b->tokens = refill(b->tokens, b->last, now, SMINFO_GET_RATE,
			   SMINFO_GET_BURST);
	b->last = now;
	if (g->total_last == 0.)
		g->total_tokens = SMINFO_GET_TOTAL;
	g->total_tokens = refill(g->total_tokens, g->total_last, now,
				 SMINFO_GET_TOTAL, SMINFO_GET_TOTAL);
	g->total_last = now;
	if (b->tokens < 1. || g->total_tokens < 1.) {
		g->gets_dropped++;
		return false;
	}
	b->tokens -= 1.;
	g->total_tokens -= 1.;
	g->gets_answered++;
	return true;
}

static const struct sminfo_get_bucket *bucket_of(const struct sminfo_guard *g,
						 uint32_t src)
{
	for (unsigned i = 0; i < SMINFO_GET_SOURCES; i++)
		if (g->gets[i].src == src)
			return &g->gets[i];
	return NULL;
}

bool sminfo_guard_is_sm(const struct sminfo_guard *g, uint32_t src, double now)
{
	const struct sminfo_get_bucket *b = bucket_of(g, src);

	return b && b->sm_until > now;
}

void sminfo_guard_mark_sm(struct sminfo_guard *g, uint32_t src, double now)
{
	struct sminfo_get_bucket *b =
		(struct sminfo_get_bucket *)bucket_of(g, src);

	if (b)
		b->sm_until = now + SMINFO_SM_TRUST;
}

uint32_t sminfo_guard_dr_key(const uint8_t *return_path, unsigned hops)
{
	uint32_t h;

	if (hops > SMP_MAX_HOPS)
		hops = SMP_MAX_HOPS;
	h = 2166136261u ^ hops;			/* FNV-1a */
	for (unsigned i = 0; i <= hops; i++) {
		h ^= return_path[i];
		h *= 16777619u;
	}
	return h | 0x80000000u;
}
