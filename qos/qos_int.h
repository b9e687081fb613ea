/* qos_int.h - what the files of qos/ share (not for users). */
#ifndef IBSM_QOS_QOS_INT_H
#define IBSM_QOS_QOS_INT_H

#include <stdbool.h>
#include <stddef.h>

#include "qos/qos.h"

struct qp {
	const char *text;
	size_t len;
	size_t next;		/* start of the next line */
	size_t ls, le;		/* this line: start, end (comment cut) */
	size_t c;		/* cursor */
	unsigned lineno;
	bool at_eof;
	unsigned blk_line, blk_col;	/* the open block's keyword */
	struct qos_policy *pol;
	struct qos_error *err;
};

void qp_ws(struct qp *p);
bool qp_eol(struct qp *p);
int qp_fail(struct qp *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
size_t qp_word(struct qp *p, char *buf, size_t size);
int qp_expect_eol(struct qp *p);

int qp_group_entry(struct qp *p, const char *key);
int qp_group_open(struct qp *p);
int qp_group_close(struct qp *p);
int qp_level_entry(struct qp *p, const char *key);
int qp_level_open(struct qp *p);
int qp_level_close(struct qp *p);
int qp_rule_entry(struct qp *p, const char *key);
int qp_rule_open(struct qp *p);
int qp_rule_close(struct qp *p);
int qp_vlarb_entry(struct qp *p, const char *key);
int qp_vlarb_open(struct qp *p);
int qp_sl2vl_entry(struct qp *p, const char *key);
int qp_sl2vl_open(struct qp *p);
int qp_ulp_entry(struct qp *p, const char *key);
int qp_resolve(struct qp *p);

#endif
