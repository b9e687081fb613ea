/*
 * gen.h - shared by the SA record generators (sm/sa/records.c,
 * sm/sa/path.c, sm/sa/tables.c, sm/sa/mcmember.c): the view's model and
 * its index (model/index.h), the walk over nodes in OpenSM's order, and
 * the PathRecord computation that PathRecord and MultiPathRecord share.
 */
#ifndef IBSM_SM_SA_GEN_H
#define IBSM_SM_SA_GEN_H

#include "model/index.h"
#include "sm/sa/sa.h"

#define BIT(n)		(1ull << (n))
#define FLD(off, n)	{ (uint16_t)(off), (uint16_t)(n) }
#define NELEM(a)	(sizeof(a) / sizeof((a)[0]))

static inline bool has_fabric(const struct sa_view *v)
{
	return v->f && v->f->n_nodes;
}

static inline void pkey_tab_of(const struct sa_view *v, struct fab_ref r,
			       struct fab_pkey_tab *t)
{
	fabric_pkey_tab(&fabric_node(v->f, r.node)->ports[r.port], t);
}

/*
 * Call fn for every node of the model, in OpenSM's order, until it fails;
 * resumable: the node to go on with is q->work->pos[0], charged 1 + its
 * ports; returns SA_MORE when the slice is spent, -SA_STATUS_NO_RESOURCES
 * when the budget is.
 */
int each_node(const struct sa_view *v, const struct sa_query *q,
	      int (*fn)(const struct sa_view *, const struct sa_query *,
			int32_t, struct sa_table *),
	      struct sa_table *out);
/* A cursor of the query's work, or of `local` when it has none. */
static inline uint32_t *cursor_of(const struct sa_query *q, uint32_t *local)
{
	return q->work ? q->work->pos : local;
}

/* The LFT the SM computed for switch `id`, or NULL. */
const struct lft *lft_of(const struct sa_view *v, int32_t id);

/* sm/sa/path.c: PathRecord (15.2.5.16) */
#define PR_NFIELDS	24
extern const struct sa_field pr_fields[PR_NFIELDS];
int gen_path_record(const struct sa_view *v, const struct sa_query *q,
		    struct sa_table *out);

/* sm/sa/path.c: MultiPathRecord (15.2.5.20), answered with PathRecords */
#define MPR_NFIELDS	22
extern const struct sa_field mpr_fields[MPR_NFIELDS];
int gen_multipath_record(const struct sa_view *v, const struct sa_query *q,
			 struct sa_table *out);

/* sm/sa/path.c: rate codes (15.2.5.16) ordered by bandwidth, for
 * MCMemberRecord's selectors, and the rate of a port's active link. */
bool sa_rate_valid(unsigned code);
int sa_rate_cmp(unsigned a, unsigned b);
/* A rate code as use_original_extended_sa_rates_only has clients see it:
 * codes above 18 (300 Gb/s) reduced to the fastest one up to 18 that
 * carries no more. */
unsigned sa_rate_original(unsigned code);
unsigned sa_rate_below(unsigned code);
uint8_t sa_port_rate(const struct fab_node *n, unsigned pn);

#endif /* IBSM_SM_SA_GEN_H */
