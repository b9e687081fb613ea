/* TEMPORARY until h-qos-sa is merged: their announced API. */
#include <time.h>
struct qos_query {
	uint64_t src_guid, dst_guid;
	uint8_t src_type, dst_type;
	uint64_t service_id;
	uint16_t pkey, qos_class;
	bool has_sid, has_pkey, has_class;
};
struct qos_members;
size_t qos_match(const struct qos_policy *p, const struct qos_members *m,
		 const struct qos_query *q, long *rule);
bool qos_group_has(const struct qos_policy *p, const struct qos_members *m,
		   size_t group, uint64_t guid, uint8_t node_type);
const struct qos_policy *sm_qos_policy(const struct sm *sm,
				       const struct qos_members **m);
struct sm_qos_status { const char *file; time_t loaded; const char *error; time_t error_at; };
void sm_qos_status(const struct sm *sm, struct sm_qos_status *st);
