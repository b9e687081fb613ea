#include "config.h"
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include "qos/qos.h"
#include "sm/sm.h"
#include "sm/qos_sa_compat.h"
size_t qos_match(const struct qos_policy *p, const struct qos_members *m,
		 const struct qos_query *q, long *rule) { (void)m; (void)q; *rule = -1; return p->default_level; }
bool qos_group_has(const struct qos_policy *p, const struct qos_members *m,
		   size_t group, uint64_t guid, uint8_t node_type) { (void)p; (void)m; (void)group; (void)guid; return node_type == 1; }
const struct qos_policy *sm_qos_policy(const struct sm *sm,
				       const struct qos_members **m) { (void)sm; *m = NULL; return NULL; }
void sm_qos_status(const struct sm *sm, struct sm_qos_status *st) { (void)sm; st->file = "/etc/opensm/qos-policy.conf"; st->loaded = 0; st->error = NULL; st->error_at = 0; }
