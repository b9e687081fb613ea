/*
 * ibsmctl - ask the subnet manager and its SA about the subnet.
 *
 *   ibsmctl [options] sminfo
 *   ibsmctl [options] query nodes|ports|links|switches|lfts|services
 *   ibsmctl [options] query paths [SLID DLID]
 *   ibsmctl [options] query multipath SGID[,SGID...] DGID[,DGID...]
 *   ibsmctl [options] query groups | query group MGID
 *
 * It talks MADs over umad like saquery and sminfo do (mad/umad_io.c, the
 * engine of mad/engine.c), so it works against any SM.  Tables come as
 * SA GetTable answers received through RMPP in user space
 * (mad/rmpp_recv.c): complete under ibsim too, where the kernel's RMPP
 * is missing.  An SM that leaves RMPP to the kernel (OpenSM) can only
 * send the first segment there; ibsmctl notices the transfer stopping
 * and says so instead of printing a short table.
 *
 * Exit status: 0 answered, 1 error (no SM, timeout, SA status, RMPP
 * failure), 2 usage.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ev.h>

#include "mad/engine.h"
#include "mad/rmpp_recv.h"
#include "mad/sa_wire.h"
#include "mad/umad_io.h"
#include "tools/ibsmctl.h"

#define SA_QKEY		0x80010000u
#define DEFAULT_TIMEOUT	500		/* ms per attempt */
#define DEFAULT_RETRIES	3
/*
 * BUSY (13.4.7: the responder is busy, try again) is what an SA answers
 * when it cannot take the request now: every slot in use, or the subnet
 * model changed under a table it was building.  Ask again this many
 * times, waiting BUSY_WAIT s, then twice as long each time.
 */
#define BUSY_TRIES	5
#define BUSY_WAIT	0.1

/* PathRecord ComponentMask bits (15.2.5.16) */
#define PR_MASK_DLID	(1ull << 4)
#define PR_MASK_SLID	(1ull << 5)

struct ctl {
	struct ev_loop *loop;
	struct umad_io *io;
	struct mad_engine *engine;
	struct rmpp_client *client;
	const struct umad_port_info *port;
	struct mad_addr sm;		/* SMPs: QP0 of the SM */
	struct mad_addr sa;		/* SA: QP1 of the SM, well-known QKey */
	unsigned timeout_ms, retries;
	bool json, verbose, partial, resp_acks;
	/* the query */
	const struct rec_kind *kind;
	uint8_t method;
	struct out *out;
	struct mpr_opts mpr;		/* query multipath */
	bool multipath;
	bool mcast;			/* query groups / group MGID */
	bool mcast_members;		/* groups: the trusted query is out */
	uint64_t sm_key;		/* SM_Key of SA requests */
	bool single;			/* print one object, not an array */
	bool header_only;		/* an empty table */
	int rc;				/* exit status */
	struct sa_mad req;		/* the request, to ask again if BUSY */
	unsigned busy_tries;
	ev_timer busy_timer;
};

static void err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void err(const char *fmt, ...)
{
	va_list ap;

	fputs("ibsmctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: ibsmctl [options] sminfo\n"
"       ibsmctl [options] query nodes|ports|links|switches|lfts|services\n"
"       ibsmctl [options] query paths [SLID DLID]\n"
"       ibsmctl [options] query multipath SGID[,SGID...] DGID[,DGID...]\n"
"       ibsmctl [options] query groups | query group MGID\n"
"       ibsmctl partitions check|list|show|plan|add|remove|set|apply FILE ...\n"
"       ibsmctl qos check FILE\n"
"       ibsmctl [--socket PATH | -i NAME] qos show [--json] [--src END --dst END\n"
"               [--sid N] [--pkey P] [--qos-class C]]\n"
"       ibsmctl fabric --html FILE | --svg FILE [--topology FILE] ...\n"
"       ibsmctl [--socket PATH | -i NAME] [--json] status|resweep [heavy|light]|\n"
"               reroute|loglevel LEVEL|reload|dump-config|sms|routes report\n"
"       ibsmctl [--socket PATH | -i NAME] counters [NODE|GUID|LID[:PORT]]\n"
"               [--errors] [--json]\n"
"               (ibsm's control socket; ibsmctl status --help tells more)\n"
"options:\n"
"  -g, --guid PORTGUID   local port to use (default: first port that is up)\n"
"  -s, --sm-lid LID      ask this LID instead of the port's SM LID\n"
"  -j, --json            JSON instead of an aligned table\n"
"  -t, --timeout MS      per-attempt timeout (default %d)\n"
"  -r, --retries N       re-sends after the first attempt (default %d)\n"
"      --partial         print what arrived of a table whose transfer stopped\n"
"      --sm-key KEY      SM_Key of SA requests (default 0: untrusted)\n"
"      --resp-acks       send RMPP ACKs with the response method (0x92)\n"
"                        instead of the request method (the kernel's way)\n"
"  -v, --verbose         RMPP and MAD counters on stderr\n"
"multipath (GIDs or port GUIDs, at most 11 in all):\n"
"      --numb-path N     at most N paths in all (NumbPath, 0-127)\n"
"      --reversible      only reversible paths\n"
"      --independence N  IndependenceSelector (0-3)\n"
"      --sl N, --pkey P  SL and P_Key components\n"
"      --sgid-count N, --dgid-count N, --payload-len N\n"
"                        send these values instead (testing an SA)\n"
"  -h, --help\n", DEFAULT_TIMEOUT, DEFAULT_RETRIES);
}

static bool parse_num(const char *s, unsigned long long max,
		      unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && end != s && !*end && *v <= max && s[0] != '-';
}

static void finish(struct ctl *c, int rc)
{
	c->rc = rc;
	ev_break(c->loop, EVBREAK_ALL);
}

/* ----------------------------------------------------------- sminfo */

static void on_sminfo(void *arg, int status, const void *mad, size_t len)
{
	struct ctl *c = arg;
	const struct smp_lid *smp = mad;
	struct smp_sm_info si;

	if (status < 0) {
		err("no SMInfo answer from LID %u: %s", c->sm.lid,
		    status == -ETIMEDOUT ? "timed out" : strerror(-status));
		finish(c, 1);
		return;
	}
	uint16_t st = be16toh(smp->hdr.status);
	if (st) {
		err("SMInfo from LID %u: MAD status %s (0x%04x)", c->sm.lid,
		    mad_status_name(st), st);
		finish(c, 1);
		return;
	}
	memcpy(&si, smp->data, sizeof(si));
	out_row(c->out);
	out_hex(c->out, "guid", "GUID", be64toh(si.guid), 16);
	out_num(c->out, "lid", "LID", c->sm.lid);
	out_num(c->out, "priority", "Priority", si.prio_state >> 4);
	out_str(c->out, "state", "State", sm_state_name(si.prio_state & 0xf), 16);
	out_num(c->out, "act_count", "ActCount", be32toh(si.act_count));
	c->single = true;
	finish(c, 0);
}

static int start_sminfo(struct ctl *c)
{
	struct smp_lid smp;

	mad_build_smp_lid(&smp, MAD_METHOD_GET, SMP_ATTR_SM_INFO, 0);
	return mad_engine_submit(c->engine, &smp, sizeof(smp), &c->sm,
				 on_sminfo, c);
}

/* ------------------------------------------------------------ query */

static const char *rmpp_status_name(uint8_t s)
{
	switch (s) {
	case RMPP_STATUS_NORMAL:	return "normal";
	case RMPP_STATUS_RESX:		return "ResX, resources exhausted";
	case RMPP_STATUS_T2L:		return "T2L, total time too long";
	case RMPP_STATUS_BAD_LEN:	return "inconsistent last and payload length";
	case RMPP_STATUS_BAD_SEG:	return "inconsistent first and segment number";
	case RMPP_STATUS_BADT:		return "BadT, bad RMPP type";
	case RMPP_STATUS_W2S:		return "W2S, NewWindowLast too small";
	case RMPP_STATUS_S2B:		return "S2B, segment number too big";
	case RMPP_STATUS_BAD_STATUS:	return "illegal status";
	case RMPP_STATUS_UNV:		return "UnV, unsupported version";
	case RMPP_STATUS_TMR:		return "TMR, too many retries";
	case RMPP_STATUS_UNSPEC:	return "unspecified";
	default:			return "class specific";
	}
}

/* Why a transfer failed, in words. */
static void report_failure(struct ctl *c, const struct rmpp_result *res)
{
	switch (res->status) {
	case -ETIMEDOUT:
		if (!res->first) {
			err("no answer from the SA at LID %u (%u attempts of %u ms)",
			    c->sa.lid, c->retries + 1, c->timeout_ms);
			return;
		}
		if (res->expected)
			err("the SA's answer stopped after segment %u of %u: "
			    "the table would be truncated", res->segments,
			    res->expected);
		else
			err("the SA's answer stopped after segment %u, more "
			    "was to follow: the table would be truncated",
			    res->segments);
		if (res->segments == 1)
			err("the SM sends no RMPP segments of its own: an SM "
			    "that relies on the kernel's RMPP (OpenSM) cannot "
			    "send more than one under ibsim's umad2sim");
		return;
	case -ECONNABORTED:
		err("the SA aborted the transfer after segment %u: RMPP "
		    "status %u (%s)", res->segments, res->rmpp_status,
		    rmpp_status_name(res->rmpp_status));
		return;
	case -EPROTO:
		err("malformed RMPP transfer from the SA after segment %u "
		    "(aborted: %s)", res->segments,
		    rmpp_status_name(res->rmpp_status));
		return;
	case -EMSGSIZE:
		err("the SA's answer is larger than %zu MiB: refused",
		    RMPP_RECV_MAX_LEN >> 20);
		return;
	default:
		err("SA query failed: %s", strerror(-res->status));
		return;
	}
}

/*
 * Rows for every record of a payload; false if the stride is unusable.
 * `whole`: the payload is a table (len / stride records), else a single
 * record; `cut`: the table was cut short, a partial record is expected.
 */
static bool add_records(struct ctl *c, const struct sa_mad *first,
			const uint8_t *p, size_t len, bool whole, bool cut)
{
	size_t stride = (size_t)be16toh(first->attr_offset) * 8;
	size_t n;

	if (len == 0)
		return true;
	if (c->mcast) {
		/* Multicast groups: kept, rows made at the end (mcast_done). */
		int rc = mcast_collect(p, whole ? len : c->kind->rec_size,
				       stride ? stride : c->kind->rec_size);

		if (rc == -EPROTO)
			err("the SA's AttributeOffset (%zu bytes) is smaller "
			    "than an MCMemberRecord", stride);
		else if (rc < 0)
			err("out of memory");
		return rc == 0;
	}
	if (stride == 0 && !whole) {
		/* A single record (Get) may come without AttributeOffset. */
		stride = c->kind->rec_size;
	}
	if (stride < c->kind->rec_size) {
		err("the SA's AttributeOffset (%zu bytes) is smaller than a "
		    "%s record (%zu bytes)", stride, c->kind->name,
		    c->kind->rec_size);
		return false;
	}
	n = whole ? len / stride : 1;
	if (whole && len % stride && !cut)
		err("warning: %zu stray bytes after %zu records", len % stride, n);
	if (c->kind->prepare)
		c->kind->prepare(p, n, stride);
	for (size_t i = 0; i < n; i++) {
		out_row(c->out);
		c->kind->row(c->out, p + i * stride);
	}
	return true;
}

/*
 * ibsim's umad2sim copies only the first 224 bytes of each MAD it
 * receives into a buffer 32 bytes too short and hands over 256: bytes
 * 168-199 of the data of every MAD (so of every RMPP segment) are junk
 * (measured by tests/fabric/test_sa_tables_complete.sh).
 * Say so when a table reaches into them; nothing can repair it here.
 */
static void warn_umad2sim(const struct ctl *c, size_t len)
{
	static const size_t ok = MAD_SIZE - 32 - (MAD_SIZE - RMPP_SEG_DATA);

	if (strncmp(c->port->ca, "ibsim", 5) || len <= ok)
		return;
	err("warning: under ibsim, umad2sim delivers only the first 224 "
	    "bytes of every MAD it receives; data bytes %zu-%d of each "
	    "segment are garbage, and so are the records that overlap them",
	    ok, RMPP_SEG_DATA - 1);
}

static void on_query(void *arg, const struct rmpp_result *res);

/*
 * A multicast table is complete: `groups` with an SM_Key asks again,
 * trusted, for the member records; then the rows.
 */
static void mcast_done(struct ctl *c)
{
	if (!c->mcast_members && c->sm_key && mcast_second_query(c->kind)) {
		c->mcast_members = true;
		c->req.sm_key = htobe64(c->sm_key);
		c->busy_tries = 0;
		if (rmpp_client_query(c->client, &c->req, sizeof(c->req),
				      &c->sa, on_query, c) < 0) {
			err("cannot send the request");
			finish(c, 1);
		}
		return;
	}
	mcast_rows(c->out, c->kind);
	finish(c, 0);
}

/* The SA said BUSY a moment ago: the same request again. */
static void on_busy_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct ctl *c = w->data;

	(void)loop;
	(void)revents;
	if (rmpp_client_query(c->client, &c->req, sizeof(c->req), &c->sa,
			      on_query, c) < 0) {
		err("cannot ask the SA again");
		finish(c, 1);
	}
}

static void on_query(void *arg, const struct rmpp_result *res)
{
	struct ctl *c = arg;
	const struct sa_mad *f = res->first;

	if (c->verbose)
		fprintf(stderr, "ibsmctl: %s, %u segment(s) of %u, %zu bytes, "
			"status %d\n", res->rmpp ? "RMPP" : "single MAD",
			res->segments, res->expected, res->len, res->status);
	if (c->verbose && f)
		fprintf(stderr, "ibsmctl: first: method 0x%02x status 0x%04x "
			"RMPP version %u type %u flags 0x%x status %u "
			"data1 %u data2 %u, AttributeOffset %u\n",
			f->hdr.method, be16toh(f->hdr.status), f->rmpp.version,
			f->rmpp.type, rmpp_flags(&f->rmpp), f->rmpp.status,
			be32toh(f->rmpp.data1), be32toh(f->rmpp.data2),
			be16toh(f->attr_offset));
	if (res->status < 0) {
		report_failure(c, res);
		if (c->partial && f && res->status == -ETIMEDOUT && res->rmpp &&
		    !f->hdr.status) {
			err("--partial: printing the records of the %u "
			    "segment(s) that arrived", res->segments);
			warn_umad2sim(c, res->len);
			if (add_records(c, f, res->payload, res->len, true, true)) {
				if (c->mcast)
					mcast_rows(c->out, c->kind);
				finish(c, 0);
				return;
			}
		}
		finish(c, 1);
		return;
	}
	uint16_t st = be16toh(f->hdr.status);
	if ((st & MAD_STATUS_BUSY) && c->busy_tries < BUSY_TRIES) {
		if (c->verbose)
			err("the SA is busy: asking again in %.1f s",
			    BUSY_WAIT * (1u << c->busy_tries));
		ev_timer_init(&c->busy_timer, on_busy_timer,
			      BUSY_WAIT * (1u << c->busy_tries), 0.);
		c->busy_timer.data = c;
		c->busy_tries++;
		ev_timer_start(c->loop, &c->busy_timer);
		return;
	}
	if (st == SA_STATUS_NO_RECORDS && c->method != MAD_METHOD_GET) {
		if (c->mcast)
			mcast_done(c);
		else
			finish(c, 0);		/* an empty table */
		return;
	}
	if (st) {
		err("the SA answered %s (MAD status 0x%04x)",
		    mad_status_name(st), st);
		finish(c, 1);
		return;
	}
	bool cut = false;
	if (res->unsegmented && res->len >= RMPP_SEG_DATA) {
		/* A full MAD of an answer meant for the kernel to segment. */
		size_t stride = (size_t)be16toh(f->attr_offset) * 8;

		err("the answer stops after one MAD: the SM leaves RMPP to its "
		    "kernel (OpenSM does), and ibsim's umad2sim has no RMPP; "
		    "%zu record(s) of %s arrived, the table may go on%s",
		    stride ? RMPP_SEG_DATA / stride : 0, c->kind->name,
		    c->partial ? "" : " (--partial prints them)");
		if (!c->partial) {
			finish(c, 1);
			return;
		}
		cut = true;
	}
	/*
	 * A GetTable answer is an RMPP transfer: its length is exact.  A
	 * plain single MAD carries one record (Get), or, from an SM that
	 * skips RMPP for a short table, as many as its 200 bytes hold.
	 */
	bool whole = res->rmpp || c->method != MAD_METHOD_GET;
	warn_umad2sim(c, whole ? res->len : c->kind->rec_size);
	if (!add_records(c, f, res->payload, res->len, whole, cut)) {
		finish(c, 1);
		return;
	}
	if (c->mcast)
		mcast_done(c);
	else
		finish(c, 0);
}

static int start_query(struct ctl *c, int argc, char **argv)
{
	struct sa_mad m;
	uint64_t mask = 0;

	memset(&m, 0, sizeof(m));
	if (c->multipath) {
		int rc = mpr_build(&m, &c->mpr, argv[0], argv[1]);

		if (rc < 0)
			return rc == -ENOMEM ? rc : -EINVAL;
		c->method = MAD_METHOD_GETMULTI;
		c->req = m;
		return rmpp_client_query(c->client, &m, sizeof(m), &c->sa,
					 on_query, c);
	}
	c->method = MAD_METHOD_GET_TABLE;
	if (c->mcast) {
		/* groups: every group first, untrusted (see ibsmctl_mcast.c) */
		int rc = mcast_build(&m, argc == 1 ? argv[0] : NULL,
				     mcast_second_query(c->kind) ? 0 : c->sm_key);

		if (rc < 0)
			return rc;
		c->req = m;
		return rmpp_client_query(c->client, &m, sizeof(m), &c->sa,
					 on_query, c);
	}
	if (c->kind->attr_id == SA_ATTR_PATH_RECORD) {
		struct sa_path_record pr = { 0 };

		if (argc == 2) {
			unsigned long long s, d;

			if (!parse_num(argv[0], 0xbfff, &s) || !s ||
			    !parse_num(argv[1], 0xbfff, &d) || !d) {
				err("bad LID pair '%s %s' (unicast LIDs 1-49151)",
				    argv[0], argv[1]);
				return -EINVAL;
			}
			pr.slid = htobe16((uint16_t)s);
			pr.dlid = htobe16((uint16_t)d);
			mask = PR_MASK_SLID | PR_MASK_DLID;
			c->method = MAD_METHOD_GET;
		} else {
			/* Every path from the local port. */
			pr.slid = htobe16(c->port->lid);
			mask = PR_MASK_SLID;
		}
		memcpy(m.data, &pr, sizeof(pr));
	}
	sa_request_hdr(&m, c->method, c->kind->attr_id, mask);
	c->req = m;
	return rmpp_client_query(c->client, &m, sizeof(m), &c->sa, on_query, c);
}

/* ------------------------------------------------------------- main */

static void on_mad(void *arg, const void *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	struct ctl *c = arg;

	mad_engine_recv(c->engine, mad, len, from, status);
}

static int open_port(struct ctl *c, uint64_t guid, long sm_lid)
{
	static const uint8_t classes[] = { MAD_CLASS_SA, MAD_CLASS_SMI };
	int rc;

	rc = umad_io_open(&c->io, c->loop, guid, classes, 2, false);
	if (rc < 0) {
		if (guid)
			err("cannot open the port with GUID 0x%016" PRIx64 ": %s",
			    guid, strerror(-rc));
		else
			err("cannot open a local port: %s", strerror(-rc));
		return rc;
	}
	c->port = umad_io_port(c->io);
	if (c->port->state != PORT_STATE_ACTIVE) {
		err("local port %s/%d (GUID 0x%016" PRIx64 ") is not active "
		    "(state %d): no SM reachable", c->port->ca, c->port->port,
		    c->port->port_guid, c->port->state);
		return -ENETDOWN;
	}
	if (sm_lid < 0 && !c->port->sm_lid) {
		err("no SM: local port %s/%d knows no SM LID", c->port->ca,
		    c->port->port);
		return -ENETDOWN;
	}
	uint16_t lid = sm_lid >= 0 ? (uint16_t)sm_lid : c->port->sm_lid;
	c->sm = (struct mad_addr){ .lid = lid, .qpn = 0 };
	c->sa = (struct mad_addr){ .lid = lid, .qpn = 1, .qkey = SA_QKEY };

	struct mad_transport tr = umad_io_transport(c->io);
	struct mad_engine_opts eo = {
		.max_wire_smps = 4, .max_wire_gmps = 4,
		.timeout_ms = c->timeout_ms, .retries = c->retries,
	};
	rc = mad_engine_new(&c->engine, c->loop, &tr, &eo);
	if (rc < 0)
		goto fail;
	/* Between two segments the SM may spend a whole retry cycle. */
	struct rmpp_recv_opts ro = {
		.timeout_ms = c->timeout_ms * (c->retries + 1),
		.ack_response_method = c->resp_acks,
	};
	if (ro.timeout_ms < 1000)
		ro.timeout_ms = 1000;
	rc = rmpp_client_new(&c->client, c->loop, c->engine, MAD_CLASS_SA, &ro);
	if (rc == 0)
		rc = umad_io_start(c->io, on_mad, c);
	if (rc == 0)
		return 0;
fail:
	err("cannot set up the MAD engine: %s", strerror(-rc));
	return rc;
}

static void close_port(struct ctl *c)
{
	if (c->verbose && c->engine) {
		const struct mad_engine_stats *s = mad_engine_stats(c->engine);

		fprintf(stderr, "ibsmctl: sent %" PRIu64 " MADs (%" PRIu64
			" resends), %" PRIu64 " dropped, %" PRIu64
			" unmatched, %" PRIu64 " stray segments\n", s->sent,
			s->resends, s->dropped, s->unmatched,
			c->client ? rmpp_client_strays(c->client) : 0);
	}
	umad_io_close(c->io);
	mad_engine_free(c->engine);	/* before the client: see rmpp_recv.h */
	rmpp_client_free(c->client);
}

static const struct option longopts[] = {
	{ "guid",	 required_argument, NULL, 'g' },
	{ "sm-lid",	 required_argument, NULL, 's' },
	{ "json",	 no_argument,	    NULL, 'j' },
	{ "timeout",	 required_argument, NULL, 't' },
	{ "retries",	 required_argument, NULL, 'r' },
	{ "partial",	 no_argument,	    NULL, 'P' },
	{ "resp-acks", no_argument,	    NULL, 'K' },
	{ "verbose",	 no_argument,	    NULL, 'v' },
	{ "numb-path",	 required_argument, NULL, 1 },
	{ "independence", required_argument, NULL, 2 },
	{ "sl",		 required_argument, NULL, 3 },
	{ "pkey",	 required_argument, NULL, 4 },
	{ "reversible",	 no_argument,	    NULL, 5 },
	{ "sgid-count",	 required_argument, NULL, 6 },
	{ "dgid-count",	 required_argument, NULL, 7 },
	{ "payload-len", required_argument, NULL, 8 },
	{ "sm-key",	 required_argument, NULL, 9 },
	{ "help",	 no_argument,	    NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Is the command one of the control socket's (tools/ibsmctl_ctl.c)? */
/* The first word that is not a control socket option, or "". */
static const char *command_word(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "--socket") || !strcmp(argv[i], "-i") ||
		     !strcmp(argv[i], "--instance")) && i + 1 < argc) {
			i++;
			continue;
		}
		if (!strncmp(argv[i], "--socket=", 9) ||
		    !strncmp(argv[i], "--instance=", 11) ||
		    !strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			continue;
		return argv[i];
	}
	return "";
}

static bool is_socket_command(int argc, char **argv)
{
	return ctl_is_command(command_word(argc, argv));
}

/* The multipath options (--numb-path ... --payload-len). */
static int parse_mpr_opt(struct ctl *c, int opt, int option_index)
{
	static const unsigned long long max[] = {
		[1] = 127, [2] = 3, [3] = 15, [4] = 0xffff,
		[6] = 255, [7] = 255, [8] = 0xffffffff,
	};
	int *dst[] = { [1] = &c->mpr.numb_path,
		       [2] = &c->mpr.independence, [3] = &c->mpr.sl,
		       [4] = &c->mpr.pkey, [6] = &c->mpr.sgid_count,
		       [7] = &c->mpr.dgid_count };
	unsigned long long v;

	if (!parse_num(optarg, max[opt], &v)) {
		err("bad value '%s' for --%s (0-%llu)", optarg,
		    longopts[option_index].name, max[opt]);
		return -1;
	}
	if (opt == 8)
		c->mpr.payload_len = (long)v;
	else
		*dst[opt] = (int)v;
	return 0;
}

/*
 * The options into c, *guid and *sm_lid.  Returns -1 to go on, or the
 * exit code (0 after --help, 2 for a bad option).
 */
static int parse_args(int argc, char **argv, struct ctl *c, uint64_t *guid,
		      long *sm_lid)
{
	unsigned long long v;
	int option_index = 0;
	int opt;

	while ((opt = getopt_long(argc, argv, "g:s:jt:r:vh", longopts,
				  &option_index)) != -1) {
		switch (opt) {
		case 'g':
			if (!parse_num(optarg, UINT64_MAX, &v) || !v) {
				err("bad port GUID '%s'", optarg);
				return 2;
			}
			*guid = v;
			break;
		case 's':
			if (!parse_num(optarg, 0xbfff, &v) || !v) {
				err("bad SM LID '%s' (unicast LIDs 1-49151)", optarg);
				return 2;
			}
			*sm_lid = (long)v;
			break;
		case 'j': c->json = true; break;
		case 't':
			if (!parse_num(optarg, 600000, &v) || !v) {
				err("bad timeout '%s' (1-600000 ms)", optarg);
				return 2;
			}
			c->timeout_ms = (unsigned)v;
			break;
		case 'r':
			if (!parse_num(optarg, 100, &v)) {
				err("bad retry count '%s' (0-100)", optarg);
				return 2;
			}
			c->retries = (unsigned)v;
			break;
		case 'P': c->partial = true; break;
		case 'K': c->resp_acks = true; break;
		case 'v': c->verbose = true; break;
		case 1: case 2: case 3: case 4: case 6: case 7: case 8:
			if (parse_mpr_opt(c, opt, option_index) < 0)
				return 2;
			break;
		case 5: c->mpr.reversible = true; break;
		case 9:
			if (!parse_num(optarg, UINT64_MAX, &v)) {
				err("bad SM_Key '%s'", optarg);
				return 2;
			}
			c->sm_key = v;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	return -1;
}

/*
 * The words after the options: "sminfo" (*sminfo set), or "query KIND
 * [ARGS]" with c->kind, c->mcast, c->multipath set.  0, or -1 after the
 * usage.
 */
static int parse_command(struct ctl *c, int argc, char **argv, bool *sminfo)
{
	*sminfo = argc == 1 && !strcmp(argv[0], "sminfo");
	if (*sminfo)
		return 0;
	if (argc < 2 || strcmp(argv[0], "query") ||
	    !((c->kind = rec_kind_find(argv[1])) ||
	      (c->kind = mcast_kind(argv[1]))))
		goto usage;
	c->mcast = mcast_kind(argv[1]) != NULL;
	if (c->mcast && argc != (strcmp(argv[1], "group") ? 2 : 3))
		goto usage;
	bool paths = c->kind->attr_id == SA_ATTR_PATH_RECORD;
	c->multipath = !strcmp(argv[1], "multipath");
	if (!c->mcast &&
	    (c->multipath ? argc != 4 : argc != 2 && !(paths && argc == 4)))
		goto usage;
	return 0;
usage:
	usage(stderr);
	return -1;
}

/* The answer on stdout (an empty table: its header).  Returns 0 or -errno. */
static int print_answer(struct ctl *c)
{
	int rc;

	if (c->kind && !c->json && !out_rows(c->out)) {
		/* An empty table: its header, from a record of zeros. */
		uint8_t zero[256] = { 0 };

		out_row(c->out);
		c->kind->row(c->out, zero);
		c->header_only = true;
	}
	rc = c->header_only ? out_print_header(c->out, stdout)
			    : out_print(c->out, stdout, c->json, c->single);
	if (rc < 0) {
		err("cannot write the output: %s", strerror(-rc));
		c->rc = 1;
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct ctl c = {
		.timeout_ms = DEFAULT_TIMEOUT, .retries = DEFAULT_RETRIES,
		.rc = 1,
	};
	uint64_t guid = 0;
	long sm_lid = -1;
	bool sminfo;
	int rc;

	/* partitions works on a file: no port, none of the options. */
	if (argc > 1 && !strcmp(argv[1], "partitions"))
		return part_main(argc - 1, argv + 1);
	/* qos check works on a file, qos show asks the daemon */
	if (!strcmp(command_word(argc, argv), "qos"))
		return qos_main(argc, argv);
	/* the fabric map has options of its own */
	if (argc > 1 && !strcmp(argv[1], "fabric"))
		return map_main(argc - 1, argv + 1);
	/* The control socket's commands: no port. */
	if (is_socket_command(argc, argv))
		return ctl_main(argc, argv);
	mpr_opts_init(&c.mpr);
	rc = parse_args(argc, argv, &c, &guid, &sm_lid);
	if (rc >= 0)
		return rc;
	argc -= optind;
	argv += optind;
	if (parse_command(&c, argc, argv, &sminfo) < 0)
		return 2;

	c.out = out_new();
	c.loop = ev_default_loop(EVFLAG_AUTO);
	if (!c.out || !c.loop) {
		err("out of memory");
		return 1;
	}
	/* open_port() and start_query() say what went wrong themselves. */
	rc = open_port(&c, guid, sm_lid);
	if (rc == 0) {
		rc = sminfo ? start_sminfo(&c) : start_query(&c, argc - 2, argv + 2);
		if (rc < 0 && rc != -EINVAL)
			err("cannot send the request: %s", strerror(-rc));
	}
	if (rc == 0)
		ev_run(c.loop, 0);
	if (c.io)
		close_port(&c);
	if (rc == 0 && c.rc == 0)
		rc = print_answer(&c);
	out_free(c.out);
	return rc == 0 ? c.rc : 1;
}
