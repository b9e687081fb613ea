/*
 * ibsmctl.h - shared parts of ibsmctl: the output table (plain aligned
 * columns or JSON) and the SA record formatters.
 */
#ifndef IBSM_TOOLS_IBSMCTL_H
#define IBSM_TOOLS_IBSMCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------ ibsmctl_out.c */

/*
 * A table built row by row.  Every row adds the same cells in the same
 * order; the first row names the columns (a header for the plain table,
 * a key for JSON).  Printed at the end, so columns can be aligned.
 */
struct out;

struct out *out_new(void);
void out_free(struct out *o);
void out_row(struct out *o);			/* start the next row */
void out_num(struct out *o, const char *key, const char *hdr, uint64_t v);
/* "0x" and `digits` hex digits; a string in JSON */
void out_hex(struct out *o, const char *key, const char *hdr, uint64_t v,
	     int digits);
/* Text of at most `max` bytes (not necessarily terminated) */
void out_str(struct out *o, const char *key, const char *hdr,
	     const char *s, size_t max);
/* Own renderings: `text` in the table, `json` verbatim (valid JSON) */
void out_raw(struct out *o, const char *key, const char *hdr,
	     const char *text, const char *json, bool right);
size_t out_rows(const struct out *o);
/*
 * Print: an aligned table with a header line, or a JSON array of objects
 * (`single`: the one row as an object).  Returns 0 or -errno (out of
 * memory while building, write error).
 */
int out_print(struct out *o, FILE *f, bool json, bool single);
/* Only the header line of the plain table. */
int out_print_header(struct out *o, FILE *f);

/* ---------------------------------------------------- ibsmctl_rec.c */

struct rec_kind {
	const char *name;		/* command word: "nodes" */
	uint16_t attr_id;
	size_t rec_size;		/* bytes of one record */
	void (*row)(struct out *o, const uint8_t *rec);
	/* Before the rows of a table: what a row needs from the others
	 * (NULL: nothing); `n` records `stride` bytes apart. */
	void (*prepare)(const uint8_t *recs, size_t n, size_t stride);
};

const struct rec_kind *rec_kind_find(const char *name);
const struct rec_kind *rec_kinds(size_t *n);

/*
 * "SDR" ... "NDR" for a PortInfo: the extended speeds count when
 * `cap_mask` (the CapabilityMask that speaks for the port: its own on a
 * CA or router, switch port 0's on every port of a switch, 14.2.5.6) has
 * IsExtendedSpeedsSupported.
 */
struct smp_port_info;
const char *pi_speed_name(const struct smp_port_info *pi, uint32_t cap_mask);

/* Names used by sminfo as well. */
const char *sm_state_name(unsigned state);
/* "ERR_NO_RECORDS" etc. for a MAD status word (host order). */
const char *mad_status_name(uint16_t status);

/* ---------------------------------------------------- ibsmctl_mpr.c */

struct sa_mad;

/* What `query multipath` asks for; -1: component not given. */
struct mpr_opts {
	int numb_path, independence, sl, pkey;
	bool reversible;
	/* for testing SAs: lie about the counts, the PayloadLength */
	int sgid_count, dgid_count;
	long payload_len;
};

void mpr_opts_init(struct mpr_opts *o);
/*
 * Build the GetMulti(MultiPathRecord) request in `m` (zeroed by the
 * caller) from comma-separated lists of GIDs or port GUIDs.  Returns 0 or
 * -EINVAL (said on stderr), -ENOMEM.
 */
int mpr_build(struct sa_mad *m, const struct mpr_opts *o, const char *src,
	      const char *dst);

/* ---------------------------------------------------- ibsmctl_mcast.c */

/* "groups" or "group": the kind of `query groups|group MGID`, else NULL. */
const struct rec_kind *mcast_kind(const char *name);
/*
 * The GetTable(MCMemberRecord) request in `m` (zeroed by the caller):
 * every record, or those of MGID `mgid`; SM_Key `sm_key`.  0 or -EINVAL
 * (said on stderr).
 */
int mcast_build(struct sa_mad *m, const char *mgid, uint64_t sm_key);
/* Keep the records of an answer: 0, -EPROTO (stride smaller than a
 * record) or -ENOMEM. */
int mcast_collect(const uint8_t *p, size_t len, size_t stride);
/* Rows for every record kept (then forgotten): one per group with its
 * member count (groups), one per member port (group). */
void mcast_rows(struct out *o, const struct rec_kind *kind);
/* `groups` with an SM_Key asks a second time, trusted, for the members. */
bool mcast_second_query(const struct rec_kind *kind);

/* ----------------------------------------------------- ibsmctl_part.c */

/* `ibsmctl partitions ...` (argv[0] is "partitions"): the exit status. */
int part_main(int argc, char **argv);
/* `ibsmctl [--socket PATH|-i NAME] qos check FILE | show ...`
 * (ibsmctl_qos.c; argv[0] is the program). */
int qos_main(int argc, char **argv);
/* An END of qos show as the control socket takes it: percent-encoded
 * (%20 for a blank).  0, -EINVAL (empty) or -E2BIG. */
int qos_encode_end(const char *in, char *out, size_t size);
/* ibsmctl fabric --html FILE | --svg FILE (ibsmctl_map.c) */
int map_main(int argc, char **argv);

/* ---------------------------------------------------- ibsmctl_ctl.c */

/* ibsm's control socket (ibsm(8), CONTROL SOCKET): the daemon's default,
 * and where ibsm@INSTANCE.service puts it: CTL_RUN_DIR/INSTANCE/ibsm.sock
 * ($IBSM_RUN_DIR instead of CTL_RUN_DIR when set, for tests). */
#define CTL_RUN_DIR		"/run/ibsm"
#define CTL_DEFAULT_SOCKET	CTL_RUN_DIR "/ibsm.sock"

/*
 * The socket to talk to: `sock` (--socket) if given, else that of
 * instance `instance` (-i/--instance), else the one socket there is:
 * CTL_DEFAULT_SOCKET or one instance's.  Several (or none): says which
 * exist, and how to pick one, on stderr.  Returns 0 with the path in
 * buf, 2 for no single choice or a bad instance name, 1 for none.
 */
int ctl_socket_path(const char *sock, const char *instance, char *buf,
		    size_t len);

/* An answer: its lines, the last one the terminator ("OK ..."/"ERR ..."). */
struct ctl_reply {
	char	**lines;
	size_t	 n;
	bool	 ok;
};

/*
 * Send one request line to the socket at `path` and read the answer.
 * 0 (r->ok tells OK from ERR), or -errno after saying why on stderr (no
 * daemon, timeout, connection closed early).
 */
int  ctl_request(const char *path, const char *request, struct ctl_reply *r);
void ctl_reply_free(struct ctl_reply *r);
/* The text of the terminator, after "OK " or "ERR ". */
const char *ctl_reply_text(const struct ctl_reply *r);
/* A reload's "error: ..." or "refused: ..." line (printed on stderr). */
bool ctl_line_is_problem(const char *line);
/* `word` is one of the control socket's commands. */
bool ctl_is_command(const char *word);
/* ibsmctl [--socket PATH] [--json] COMMAND [ARG]: exit status. */
int  ctl_main(int argc, char **argv);

#endif /* IBSM_TOOLS_IBSMCTL_H */
