/*
 * health_policy.c - the health checks' policy from the configuration
 * (health_policy.h).
 */
#include "config.h"

#include "config/health_policy.h"

void health_policy_from_config(const struct sm_config *c,
			       struct health_policy *p)
{
	/* the enum keys' words, in order (config/keys.c) */
	static const unsigned lanes[] = { 0, 1, 2, 4, 8, 12 };
	static const unsigned rates[] = { 0, 25, 50, 100, 140, 250, 500, 1000 };

	health_policy_default(p);
	if (c->health_expected_width > 0 &&
	    (size_t)c->health_expected_width < sizeof(lanes) / sizeof(lanes[0]))
		p->expected_width = lanes[c->health_expected_width];
	if (c->health_expected_speed > 0 &&
	    (size_t)c->health_expected_speed < sizeof(rates) / sizeof(rates[0]))
		p->expected_speed = rates[c->health_expected_speed];
	for (unsigned i = 0; i < PC_N_ERRORS; i++)
		p->err_per_hour[i] = c->health_threshold[i];
	p->xmit_wait_per_hour = c->health_threshold[PC_N_ERRORS];
	if (c->health_flap_count)
		p->flap_count = c->health_flap_count;
	if (c->health_flap_window_s)
		p->flap_window_s = c->health_flap_window_s;
	if (c->health_unresponsive_n)
		p->unresponsive_n = c->health_unresponsive_n;
	if (c->health_unresponsive_k)
		p->unresponsive_k = c->health_unresponsive_k;
	/* k of n: more than n can never be met; taken as n */
	if (p->unresponsive_k > p->unresponsive_n)
		p->unresponsive_k = p->unresponsive_n;
	if (c->health_trap_rate)
		p->trap_rate = c->health_trap_rate;
	p->unhealthy_action = c->health_unhealthy_policy == 1 ?
			      HEALTH_ISOLATE : HEALTH_REPORT;
}
