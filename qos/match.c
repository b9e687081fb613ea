/*
 * match.c - which QoS level a PathRecord query gets, by OpenSM's rules
 * (osm_qos_policy.c): the rules in order (the qos-match-rules, then the
 * rules made of qos-ulps lines), the first that matches gives its level;
 * none does: the default level.  A rule matches when each thing it names
 * matches:
 *
 *   source groups only: the source port is in one of them;
 *   destination groups only: the destination port is in one of them;
 *   both: the source in a source group and the destination in a
 *         destination group;
 *   qos-class, service-id, pkey: the query sets that component and its
 *         value is in the rule's ranges (P_Keys compared on their low 15
 *         bits, the ranges' ends masked the same way).
 *
 * A port is in a group when its node's type is one the group names, its
 * GUID is in the group's port-guid ranges, or it is among the ports the
 * group's port-name, partition, pkey and SELF entries named on the fabric
 * the policy was bound to (struct qos_members, members.c).
 */
#include "config.h"

#include "qos/qos.h"

/* NodeInfo:NodeType (IBA 14.2.5.3) -> the group's node-type bit. */
static unsigned type_bit(uint8_t node_type)
{
	switch (node_type) {
	case 1: return QOS_NT_CA;
	case 2: return QOS_NT_SWITCH;
	case 3: return QOS_NT_ROUTER;
	default: return 0;
	}
}

static bool in_ranges(const struct qos_ranges *r, uint64_t v)
{
	for (size_t i = 0; i < r->n; i++)
		if (v >= r->v[i].lo && v <= r->v[i].hi)
			return true;
	return false;
}

bool qos_pkey_in(const struct qos_ranges *r, uint16_t pkey)
{
	uint16_t base = pkey & 0x7fff;

	for (size_t i = 0; i < r->n; i++) {
		uint16_t lo = r->v[i].lo & 0x7fff, hi = r->v[i].hi & 0x7fff;

		if (lo > hi) {
			uint16_t t = lo;

			lo = hi;
			hi = t;
		}
		if (base >= lo && base <= hi)
			return true;
	}
	return false;
}

bool qos_group_has(const struct qos_policy *p, const struct qos_members *m,
		   size_t group, uint64_t guid, uint8_t node_type)
{
	const struct qos_group *g = &p->groups[group];
	unsigned types = g->node_types;

	if (types & QOS_NT_ALL)
		types |= QOS_NT_CA | QOS_NT_SWITCH | QOS_NT_ROUTER;
	if (types & type_bit(node_type))
		return true;
	if (in_ranges(&g->guids, guid))
		return true;
	return qos_members_has(m, group, guid);
}

static bool in_any(const struct qos_policy *p, const struct qos_members *m,
		   const size_t *groups, size_t n, uint64_t guid,
		   uint8_t node_type)
{
	for (size_t i = 0; i < n; i++)
		if (qos_group_has(p, m, groups[i], guid, node_type))
			return true;
	return false;
}

bool qos_rule_matches(const struct qos_policy *p, const struct qos_members *m,
		      const struct qos_rule *r, const struct qos_query *q)
{
	if (r->n_src && !in_any(p, m, r->src, r->n_src, q->src_guid,
				q->src_type))
		return false;
	if (r->n_dst && !in_any(p, m, r->dst, r->n_dst, q->dst_guid,
				q->dst_type))
		return false;
	if (r->qos_class.n &&
	    (!q->has_class || !in_ranges(&r->qos_class, q->qos_class)))
		return false;
	if (r->service_id.n &&
	    (!q->has_sid || !in_ranges(&r->service_id, q->service_id)))
		return false;
	if (r->pkey.n && (!q->has_pkey || !qos_pkey_in(&r->pkey, q->pkey)))
		return false;
	return true;
}

size_t qos_match(const struct qos_policy *p, const struct qos_members *m,
		 const struct qos_query *q, long *rule)
{
	for (size_t i = 0; i < p->n_rules; i++)
		if (qos_rule_matches(p, m, &p->rules[i], q)) {
			if (rule)
				*rule = (long)i;
			return p->rules[i].level;
		}
	if (rule)
		*rule = -1;
	return p->default_level;
}
