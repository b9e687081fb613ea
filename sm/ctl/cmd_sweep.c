/*
 * cmd_sweep.c - the control socket's resweep and reroute: they ask the
 * state machine for a sweep (which runs later, as for a trap).
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "sm/ctl/ctl.h"
#include "sm/ctl/ctl_int.h"
#include "sm/sm.h"

static bool sweeps_allowed(const struct sm *sm)
{
	return sm->state != SM_NOTACTIVE && sm->state != SM_STANDBY;
}

int ctl_cmd_resweep(struct sm *sm, bool heavy, struct ctl_answer *a)
{
	int rc;

	if (!sweeps_allowed(sm))
		return ctl_finish(a, false, "no sweep: the SM is %s",
				  sm_state_name(sm->state));
	if (heavy) {
		bool busy = sm->sweep || sm->light;

		log_info("control socket: heavy sweep requested");
		(void)sm_post(sm, SM_EV_CHANGE);
		return ctl_finish(a, true, "heavy sweep requested%s", busy ?
				  " (after the sweep in progress)" : "");
	}
	if (sm->state != SM_MASTER)
		return ctl_finish(a, false, "no light sweep: the SM is %s",
				  sm_state_name(sm->state));
	if (sm->sweep || sm->light || sm->quick)
		return ctl_finish(a, false, "no light sweep: a %s sweep is in"
				  " progress", sm->sweep ? "heavy" :
				  sm->light ? "light" : "quick");
	log_info("control socket: light sweep requested");
	rc = sm_post_wait(sm, &(struct sm_msg){ .ev = SM_EV_LIGHT_ASK });
	if (rc < 0)
		return ctl_finish(a, false, "cannot start a light sweep: %s",
				  strerror(-rc));
	return ctl_finish(a, true, "light sweep started");
}

/* reroute: the heavy sweep, every switch's LFT sent whole (the state
 * machine forgets the images, now or after the sweep in progress). */
int ctl_cmd_reroute(struct sm *sm, struct ctl_answer *a)
{
	struct sm_msg m = { .ev = SM_EV_REROUTE };
	int n;

	if (!sweeps_allowed(sm))
		return ctl_finish(a, false, "no sweep: the SM is %s",
				  sm_state_name(sm->state));
	n = sm_post_wait(sm, &m);
	if (n == -EINPROGRESS) {
		log_info("control socket: reroute: heavy sweep requested after"
			 " the sweep in progress, every LFT sent whole then");
		return ctl_finish(a, true, "heavy sweep requested after the"
				  " sweep in progress: routes computed again,"
				  " every switch's LFT sent whole then");
	}
	log_info("control socket: reroute: heavy sweep requested, LFTs of %d"
		 " switches sent whole", n);
	return ctl_finish(a, true, "heavy sweep requested: routes computed"
			  " again, LFTs of %d switches sent whole%s", n,
			  sm->light || sm->quick ?
			  " (after the sweep in progress)" : "");
}
