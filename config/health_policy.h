/*
 * health_policy.h - the health checks' policy (health/policy.h) from the
 * health_* keys of the configuration.  Here in config/, which sits above
 * health/ (health/ includes no config header).
 */
#ifndef IBSM_CONFIG_HEALTH_POLICY_H
#define IBSM_CONFIG_HEALTH_POLICY_H

#include "config/sm_config.h"
#include "health/policy.h"

/* Fill `p` from `c`: the defaults, then every health_* key set. */
void health_policy_from_config(const struct sm_config *c,
			       struct health_policy *p);

#endif /* IBSM_CONFIG_HEALTH_POLICY_H */
