/*
 * diff.h - unified diffs ("diff -u" format, three lines of context) of
 * two texts, for `ibhost plan`.
 */
#ifndef IBHOST_DIFF_H
#define IBHOST_DIFF_H

#include <stdbool.h>

#include "tools/ibhost/util.h"

/*
 * Appends "--- label_a", "+++ label_b" and the hunks turning a into b
 * (NULL counts as empty) to out.  Returns false, appending nothing, when
 * the texts are equal.
 */
bool diff_unified(struct sbuf *out, const char *label_a, const char *label_b,
		  const char *a, const char *b);

#endif /* IBHOST_DIFF_H */
