/* values.h - value parsers of qos/ (internal). */
#ifndef IBSM_QOS_VALUES_H
#define IBSM_QOS_VALUES_H

#include <stdint.h>

#include "qos/qos_int.h"

static inline bool isalnum_c(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '_';
}

/* The array `v` of `n` items of `size` bytes with room for one more:
 * `v` itself, or grown (to twice its count) from a count of 0, 4, 8...
 * Every array of qos/ grows through it; NULL when out of memory. */
void *qv_grow(void *v, size_t n, size_t size);
int qv_key(struct qp *p, const char *key);
int qv_text(struct qp *p, const char *key, char **out);
int qv_text_value(struct qp *p, char **out);
int qv_strs(struct qp *p, const char *key, struct qos_strs *s);
int qv_num(struct qp *p, uint64_t max, uint64_t *out);
int qv_single(struct qp *p, const char *key, uint64_t lo, uint64_t hi,
	      int *out);
int qv_ranges_to(struct qp *p, uint64_t max, bool to_colon,
		 struct qos_ranges *r);
int qv_ranges(struct qp *p, const char *key, uint64_t max,
	      struct qos_ranges *r);
int qv_vlw(struct qp *p, const char *key, struct qos_vl_weight **v,
	   size_t *n);

#endif
