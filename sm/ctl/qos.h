/*
 * qos.h - `qos show` of the control socket (sm/ctl/cmd_qos.c): what the
 * daemon knows, gathered into plain structs that the formatters print,
 * so unit tests print them without a daemon.
 */
#ifndef IBSM_SM_CTL_QOS_H
#define IBSM_SM_CTL_QOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "config/qos_keys.h"
#include "mad/sa_wire.h"

struct ctl_answer;
struct ctl_qos_req;
struct fabric;
struct fab_ref;
struct qos_policy;

/* The QoS in force. */
struct qos_view {
	bool	 on;			/* qos TRUE */
	const char *file;		/* qos_policy_file */
	const struct qos_policy *pol;	/* NULL: none in force */
	time_t	 loaded;		/* when pol was read */
	const char *error;		/* the last load's error, NULL: none */
	time_t	 error_at;
	struct qos_tables tables[QOS_N_CLASSES];	/* per port class */
	uint8_t	 max_op_vls;		/* OperationalVLs code wanted (1-5) */
	const size_t *members;		/* ports in each group; NULL unknown */
};

/* One end of a path. */
struct qos_path_end {
	uint64_t guid;			/* port GUID */
	uint16_t lid;
	uint8_t	 port, type;		/* port number, NodeType */
	const char *desc;		/* NodeDescription, NULL: none */
};

/* What a PathRecord between two ends gets. */
struct qos_path_view {
	struct qos_path_end src, dst;
	const struct ctl_qos_req *q;
	long	 rule;			/* index into pol->rules; -1: none */
	long	 level;			/* index into pol->levels; -1: none */
	int	 status;		/* 0: pr holds the SA's record;
					 * -1: no record; > 0 its status */
	struct sa_path_record pr;
};

/* The answers' data lines (text or one JSON document); 0. */
int ctl_qos_show(struct ctl_answer *a, const struct qos_view *v, bool json);
int ctl_qos_path(struct ctl_answer *a, const struct qos_view *v,
		 const struct qos_path_view *p, bool json);

/*
 * An end of `qos show src|dst`: "0xGUID" (a port GUID, else a node
 * GUID's end port), a LID, or a node description (whole or its first
 * word), each but the LID optionally followed by ":PORT".  A switch's end
 * port is port 0.  0, or -ENOENT with why in err.
 */
int ctl_qos_end(const struct fabric *f, const char *spec,
		struct fab_ref *out, char *err, size_t errlen);
/* Percent-decode `n` bytes of `w` into out (terminated): 0, -EINVAL (a
 * bad or %00 escape, nothing), -E2BIG. */
int ctl_qos_decode(const char *w, size_t n, char *out, size_t size);
/* "2048" for MTU code 4, "40" (Gb/s) for rate code 7; NULL: no such. */
const char *ctl_qos_mtu_name(int code);
const char *ctl_qos_rate_name(int code);

#endif /* IBSM_SM_CTL_QOS_H */
