/*
 * hist.h - a fixed-bucket histogram of durations (seconds) that the
 * sweeps feed and the metrics endpoint exports (sm/metrics/).  A handful
 * of integers per histogram, filled whether or not metrics are served.
 */
#ifndef IBSM_SM_METRICS_HIST_H
#define IBSM_SM_METRICS_HIST_H

#include <stdint.h>

#define SM_HIST_BUCKETS	12
/* Upper bounds (s), ascending; sm/metrics/sm_metrics.c. */
extern const double sm_hist_bounds[SM_HIST_BUCKETS];

struct sm_hist {
	uint64_t bucket[SM_HIST_BUCKETS];	/* observations per bucket, not
						 * cumulative; above the last:
						 * only in count */
	uint64_t count;
	double   sum;
};

static inline void sm_hist_observe(struct sm_hist *h, double v)
{
	/* the bounds of sm_hist_bounds, unrolled for the inline */
	static const double b[SM_HIST_BUCKETS] = {
		0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30
	};

	for (unsigned i = 0; i < SM_HIST_BUCKETS; i++)
		if (v <= b[i]) {
			h->bucket[i]++;
			break;
		}
	h->count++;
	h->sum += v;
}

/* The kinds of sweep with a histogram of their own. */
enum sm_sweep_kind { SM_SWEEP_HEAVY, SM_SWEEP_LIGHT, SM_SWEEP_QUICK,
		     SM_SWEEP_KINDS };

#endif /* IBSM_SM_METRICS_HIST_H */
