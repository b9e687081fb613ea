/*
 * prom.h - a builder of the Prometheus text exposition format (0.0.4):
 * families (one HELP and one TYPE line each, their samples together),
 * label values escaped (backslash, double quote, newline), numbers
 * written without printf on the hot path.  Pure: no I/O, no logging;
 * out of memory is sticky (prom_take() then returns NULL).
 *
 * Typical use: prom_family() then one prom_sample_*() per series, the
 * labels of a series rendered once with prom_lbl_*() and reused across
 * families (a port's labels, for each of its counters).
 */
#ifndef IBSM_SM_METRICS_PROM_H
#define IBSM_SM_METRICS_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROM_MAX_FAMILIES	512	/* distinct families in one text */

struct prom {
	char    *buf;
	size_t   len, cap;
	bool     oom;
	unsigned n_fam;
	uint32_t fam_hash[PROM_MAX_FAMILIES];	/* families started */
	char     cur[128];		/* the family in progress */
	size_t   cur_len;
};

/* A label set, rendered: `a="x",b="y"` (no braces). */
#define PROM_LABELS_MAX	1024
struct prom_labels {
	char   s[PROM_LABELS_MAX];
	size_t len;
	bool   trunc;			/* a label did not fit: left out */
};

void prom_init(struct prom *p, size_t initial);
void prom_free(struct prom *p);
/* The text (malloc'd, NUL-terminated, *len bytes without the NUL), now
 * the caller's; NULL when memory ran out at any point.  *p is reset. */
char *prom_take(struct prom *p, size_t *len);

/*
 * Start family `name` (type "counter", "gauge", "histogram" or
 * "untyped"; `help` one line, escaped here).  Calling it again for the
 * family in progress adds nothing; for a family started earlier and left
 * it returns -EEXIST and adds nothing (its samples would be split, which
 * the format forbids); -ENOSPC past PROM_MAX_FAMILIES.  0 otherwise.
 */
int  prom_family(struct prom *p, const char *name, const char *type,
		 const char *help);

/* Labels: reset, then add name="value" pairs (value escaped). */
void prom_lbl_reset(struct prom_labels *l);
void prom_lbl(struct prom_labels *l, const char *name, const char *value);
void prom_lbl_u(struct prom_labels *l, const char *name, uint64_t value);
/* 0x%016x, as infiniband-diags and treydock/infiniband_exporter write GUIDs */
void prom_lbl_guid(struct prom_labels *l, const char *name, uint64_t guid);
/* Append the labels of `o` to `l`. */
void prom_lbl_cat(struct prom_labels *l, const struct prom_labels *o);

/* One sample: `name{labels} value` (labels may be NULL or empty). */
void prom_u64(struct prom *p, const char *name, const struct prom_labels *l,
	      uint64_t v);
void prom_dbl(struct prom *p, const char *name, const struct prom_labels *l,
	      double v);

/*
 * A histogram's series under family `name` (started by the caller):
 * name_bucket{labels,le="b"} for each bound (counts[i]: observations <=
 * bounds[i], cumulative), le="+Inf" with `count`, name_sum, name_count.
 */
void prom_histogram(struct prom *p, const char *name,
		    const struct prom_labels *l, const double *bounds,
		    const uint64_t *cumulative, size_t n, double sum,
		    uint64_t count);

/* Escape `s` as a label value into out (NUL-terminated, cut to fit):
 * backslash, double quote and newline.  Returns the length written. */
size_t prom_escape_label(char *out, size_t outlen, const char *s);

#endif /* IBSM_SM_METRICS_PROM_H */
