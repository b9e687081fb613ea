#include "config.h"
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include "sm/sm.h"
#include "sm/qos_sa_compat.h"
void sm_qos_status(const struct sm *sm, struct sm_qos_status *st) { st->file = sm->cfg.qos_policy_file; st->loaded = sm_qos_policy(sm, NULL) ? 1 : 0; st->error = NULL; st->error_at = 0; }
