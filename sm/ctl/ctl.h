/*
 * ctl.h - the control socket: a unix stream socket per instance that
 * ibsmctl (or any local program run by root or the socket's owner) talks
 * to with one request line and gets answer lines back.
 *
 * Protocol (ibsm(8), CONTROL SOCKET): a request is one line of at most
 * CTL_MAX_LINE bytes ending in '\n', a command word and its arguments
 * separated by blanks.  The answer is zero or more data lines, then one
 * terminator line: "OK" (optionally followed by a blank and a short
 * text) when the command was carried out, "ERR <why>" when it was not.
 * No data line is "OK", starts with "OK " or starts with "ERR", so a
 * client reads lines until the first that does.  Requests on one
 * connection are answered in order; a client may send the next before
 * reading an answer, but one answer at a time is buffered.
 *
 * Commands: status, resweep [heavy|light], reroute, loglevel LEVEL,
 * reload, dump-config, sms, routes report [json], routes loads, help,
 * health [json],
 * events [since T] [json], topology save FILE, port enable NODE PORT,
 * qos show [json] [src END dst END [sid N] [pkey P] [class C]].
 *
 * The socket lives on the daemon's event loop: every fd is non-blocking,
 * requests are bounded (CTL_MAX_LINE), clients are bounded
 * (CTL_MAX_CLIENTS), and a client that makes no progress for
 * CTL_IDLE_TIMEOUT seconds (a half line, an answer it does not read) is
 * dropped.  The parser and the dispatcher are separate from the socket
 * code so that unit tests and the fuzz target call them directly.
 *
 * Files (sm/ctl/): server.c the socket, its connections, framing and
 * limits; parse.c requests; answer.c answers; exec.c the dispatcher and
 * help; cmd_status.c status, sms; cmd_sweep.c resweep, reroute;
 * cmd_config.c loglevel, reload, dump-config; cmd_routes.c routes;
 * cmd_qos.c, cmd_qos_out.c and qos.h qos show; ctl_int.h what they
 * share.  health, events, topology and port are sm/health/health_ctl.c's,
 * counters sm/perf/perf_out.c's.
 */
#ifndef IBSM_SM_CTL_CTL_H
#define IBSM_SM_CTL_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sm;

#define CTL_MAX_LINE		512	/* bytes of one request, '\n' included */
#define CTL_MAX_ARGS		4	/* words after the command */
#define CTL_MAX_CLIENTS		16	/* connections at once */
#define CTL_IDLE_TIMEOUT	10.0	/* s without progress: dropped */
#define CTL_MAX_ANSWER		(256 * 1024)	/* bytes of one answer */

enum ctl_cmd {
	CTL_CMD_STATUS,
	CTL_CMD_RESWEEP,
	CTL_CMD_REROUTE,
	CTL_CMD_LOGLEVEL,
	CTL_CMD_RELOAD,
	CTL_CMD_DUMP_CONFIG,
	CTL_CMD_HELP,
	CTL_CMD_SMS,			/* every SM known from SMInfo */
	CTL_CMD_ROUTES_REPORT,		/* routing quality (routing/report.h) */
	CTL_CMD_HEALTH,			/* findings (sm/health/) */
	CTL_CMD_EVENTS,			/* the event history */
	CTL_CMD_TOPO_SAVE,		/* topology save FILE */
	CTL_CMD_PORT_ENABLE,		/* port enable NODE PORT */
	CTL_CMD_ROUTES_LOADS,		/* routed load per channel */
	CTL_CMD_COUNTERS,		/* port counters (sm/perf/) */
	CTL_CMD_QOS,			/* qos show (sm/ctl/cmd_qos.c) */
};

/*
 * qos show: with src and dst, the QoS a PathRecord between those ports
 * gets.  An end is a port GUID or node GUID (0x...), a LID, or a node
 * description (whole, or its first word), NODE optionally followed by
 * ":PORT"; on the wire percent-encoded (%20 for a blank, %25 for '%').
 */
#define CTL_QOS_END	80	/* bytes of a decoded end, NUL included */
struct ctl_qos_req {
	bool	 path;			/* src and dst given */
	bool	 has_sid, has_pkey, has_class;
	char	 src[CTL_QOS_END], dst[CTL_QOS_END];
	uint64_t sid;
	uint16_t pkey, qos_class;
};

struct ctl_request {
	enum ctl_cmd cmd;
	bool	 heavy;			/* resweep: heavy (default) or light */
	int	 level;			/* loglevel: enum log_level */
	int	 flags;			/* loglevel N: OpenSM's log flags N,
					 * else -1 */
	bool	 json;			/* routes report json */
	bool	 force;			/* reload force */
	/* events since T: a Unix time, or since_ago seconds before now
	 * (since_ago < 0: not relative); none given: since 0 */
	double	 since, since_ago;
	char	 path[CTL_MAX_LINE];	/* topology save: an absolute path */
	uint64_t guid;			/* port enable: node GUID, or 0 ... */
	uint16_t lid;			/* ... and its LID */
	uint8_t	 port;
	bool	 errors;		/* counters errors */
	char	 target[128];		/* counters NODE|GUID|LID[:PORT] */
	struct ctl_qos_req qos;		/* qos show */
};

/*
 * Find the first complete request line in buf[0..len): its length without
 * the '\n' (and a '\r' before it) in *line_len; returns the bytes it
 * takes up ('\n' included), 0 when no '\n' came yet and fewer than
 * CTL_MAX_LINE bytes are there, -E2BIG when CTL_MAX_LINE bytes hold no
 * '\n' (the request is too long: the connection is closed).
 */
long ctl_line(const char *buf, size_t len, size_t *line_len);

/*
 * Parse one request line (without its '\n', not terminated): 0, or
 * -EINVAL with what was expected in err (the text after "ERR ").
 */
int ctl_parse(const char *line, size_t len, struct ctl_request *req,
	      char *err, size_t errlen);

/* An answer being built: data lines, then the terminator. */
struct ctl_answer {
	char	*buf;
	size_t	 len, cap;
	bool	 full;			/* CTL_MAX_ANSWER reached: cut */
};

/* Append one data line (printf-style; control characters become '?'). */
void ctl_line_add(struct ctl_answer *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void ctl_answer_free(struct ctl_answer *a);

/*
 * Carry out `req` on the SM and write its whole answer (terminator
 * included) into `a`.  Returns 0 when the answer ends in OK, -1 for ERR.
 */
int ctl_execute(struct sm *sm, const struct ctl_request *req,
		struct ctl_answer *a);
/* A line as the socket handles it: parse, then execute or answer ERR. */
int ctl_handle_line(struct sm *sm, const char *line, size_t len,
		    struct ctl_answer *a);

/*
 * sm/ctl/cmd_qos.c: a request line that starts with "qos" (parsed there: it
 * takes more words than CTL_MAX_ARGS), and its execution.  The answer's
 * data lines go to `a`; the terminator's text to msg; 0 or -1 (ERR).
 */
int ctl_qos_parse(const char *line, size_t len, struct ctl_request *req,
		  char *err, size_t errlen);
int ctl_qos_execute(struct sm *sm, const struct ctl_request *req,
		    struct ctl_answer *a, char *msg, size_t msglen);

/* SO_PEERCRED's check: root, or the user who owns the socket. */
bool ctl_peer_allowed(uid_t peer, uid_t owner);

/*
 * Open the socket at sm->cfg.control_socket (none when NULL): a stale
 * socket file is replaced, a live one (another daemon answers on it) is
 * left alone and the daemon goes on without a control socket.  Its
 * directory is created (0755) when missing.  0 or -errno (logged; the
 * daemon runs on without it).
 */
int  ctl_start(struct sm *sm);
/* Close every connection and remove the socket file (if still ours). */
void ctl_stop(struct sm *sm);


#endif /* IBSM_SM_CTL_CTL_H */
