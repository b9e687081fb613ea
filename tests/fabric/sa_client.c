/*
 * sa_client.c - a minimal SA client for fabric tests of the SA's state:
 *
 *   sa_client service-set ID NAME LEASE [GUID]
 *                                         register ServiceRecord ID for
 *                                         this port (or the port GUID
 *                                         names); print "service ID NAME
 *                                         lease L port GUID"
 *   sa_client service-get ID              print "service ID NAME ..." or fail
 *   sa_client service-delete ID [GUID]    delete it (identity: ID, the
 *                                         port's GID, P_Key 0xffff)
 *   sa_client tables N                    N NodeRecord GetTables at once,
 *                                         never ACKed; print "tables N ok
 *                                         A no-resources B other C"
 *   sa_client subscribe TRAP SECONDS [issm]
 *                                         subscribe to TRAP (InformInfo
 *                                         Set), print each Report as
 *                                         "report TRAP lid L", answer it
 *                                         with ReportResp; after the
 *                                         first, unsubscribe, give up
 *                                         IsSM, exit 0 0.5 s later; 1 on
 *                                         timeout.  issm: hold IsSM, as
 *                                         ibsim needs to hand over a
 *                                         Report (see leave_quietly())
 *   sa_client raw METHOD ATTR MASK [HEX]  any request (data from HEX,
 *                                         byte 0 on); print the answer's
 *                                         "status S attr_offset A len L"
 *                                         whatever its status
 *   sa_client path get|table SLID DLID [sid=X] [pkey=X] [class=X] [sl=X]
 *                                         [mtu=SEL:V] [rate=SEL:V]
 *                                         a PathRecord Get or GetTable
 *                                         from SLID to DLID with those
 *                                         components set; print each
 *                                         record of the first MAD as
 *                                         "path SLID DLID sl S mtu M rate
 *                                         R life L pkey P" (the answer's
 *                                         values), "records 0" when none
 *                                         (NO_RECORDS or an empty table),
 *                                         "status S" on other errors
 *
 * Talks to the SM LID of the local port on QP1 like any SA client.
 * Exit status: 0 ok, 1 failure (the MAD status is printed).
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ev.h>

#include "mad/engine.h"
#include "mad/sa_wire.h"
#include "mad/umad_io.h"

struct client {
	struct ev_loop *loop;
	struct umad_io *io;
	struct mad_engine *engine;
	struct mad_addr sa;
	uint64_t port_guid;
	int result;
	unsigned trap;
	struct sa_mad sub;		/* subscribe: the InformInfo Set */
	bool unsubscribing;
	bool raw;
	bool path;			/* path: print PathRecords */
	bool issm;			/* subscribe ... issm */
	unsigned tables, tables_done, t_ok, t_nores, t_other;
	ev_timer linger;
};

static void on_linger(struct ev_loop *loop, ev_timer *w, int revents)
{
	ev_break(loop, EVBREAK_ALL);
}

/*
 * ibsim hands requests on QP 0/1 (Reports, the SM's SMInfo polls of every
 * port with IsSM) only to a client it counts as an SM, so a subscriber
 * that waits for a Report asks for IsSM ("issm").  It takes it by opening
 * the issm device once its agents are registered, not with umad2sim's
 * SIM_SET_ISSM=1: that sets IsSM when the preload attaches, before any
 * agent exists; ibsim sends the master trap 144, ibsm asks the port for
 * its SMInfo 0.1 s later, and when the client was still starting (ASan,
 * loaded cores) umad2sim's receiver crashed on a MAD for a class with no
 * agent yet.
 *
 * Before exit: give IsSM up first (umad2sim clears it when the issm
 * device is closed), then stay 0.5 s for what is under way: a MAD that
 * reaches umad2sim while its exit handler runs hangs or crashes this
 * client (see test_sa.sh, sa_fuzz.c).
 */
static void leave_quietly(struct client *c)
{
	if (c->issm)
		(void)umad_io_set_sm(c->io, false);
	ev_timer_stop(c->loop, &c->linger);
	ev_timer_set(&c->linger, 0.5, 0.);
	ev_timer_start(c->loop, &c->linger);
}

static void build(struct sa_mad *m, uint8_t method, uint16_t attr,
		  uint64_t comp_mask)
{
	memset(m, 0, sizeof(*m));
	sa_request_hdr(m, method, attr, comp_mask);
}

/* The PathRecords of one answer (its first MAD: umad2sim passes no
 * RMPP, so a table of more than 3 records arrives cut). */
static void print_paths(const struct sa_mad *m, size_t len)
{
	unsigned st = be16toh(m->hdr.status), stride, n;

	if (st == SA_STATUS_NO_RECORDS) {
		printf("records 0\n");
		return;
	}
	if (st) {
		printf("status 0x%04x\n", st);
		return;
	}
	/* The engine hands over an RMPP answer reassembled: the SA header,
	 * then the records, `len` bytes in all. */
	stride = be16toh(m->attr_offset) * 8u;
	if (!stride)
		stride = sizeof(struct sa_path_record);
	if (stride < sizeof(struct sa_path_record)) {
		printf("status bad-offset\n");
		return;
	}
	n = len > offsetof(struct sa_mad, data) ?
	    (unsigned)((len - offsetof(struct sa_mad, data)) / stride) : 0;
	if (m->hdr.method == (MAD_METHOD_GET | MAD_METHOD_RESP) && n > 1)
		n = 1;
	if (!n)
		printf("records 0\n");
	for (unsigned i = 0; i < n; i++) {
		const struct sa_path_record *r =
			(const void *)(m->data + (size_t)i * stride);

		printf("path %u %u sl %u mtu %u rate %u life %u pkey 0x%04x\n",
		       be16toh(r->slid), be16toh(r->dlid),
		       be16toh(r->qos_class_sl) & 0xf, r->mtu & 0x3f,
		       r->rate & 0x3f, r->pkt_life & 0x3f, be16toh(r->pkey));
	}
}

static void on_done(void *arg, int status, const void *mad, size_t len)
{
	struct client *c = arg;
	const struct sa_mad *m = mad;

	if (c->unsubscribing) {
		/* The subscription is gone (or the SM did not say): leave.
		 * The Report came: success. */
		if (status < 0 || m->hdr.status)
			printf("unsubscribe: %s\n", status < 0 ? strerror(-status)
			       : "refused");
		else
			printf("unsubscribed\n");
		fflush(stdout);
		leave_quietly(c);
		return;
	}
	if (status < 0) {
		fprintf(stderr, "sa_client: no answer: %s\n", strerror(-status));
		c->result = 1;
		ev_break(c->loop, EVBREAK_ALL);
		return;
	}
	if (c->tables) {
		/* One answer of many: count it by status. */
		unsigned st = be16toh(m->hdr.status);

		if (st == 0)
			c->t_ok++;
		else if (st == SA_STATUS_NO_RESOURCES)
			c->t_nores++;
		else
			c->t_other++;
		if (++c->tables_done == c->tables) {
			printf("tables %u ok %u no-resources %u other %u\n",
			       c->tables, c->t_ok, c->t_nores, c->t_other);
			fflush(stdout);
			c->result = 0;
			/* Stay until the SM gives up re-sending the segments we
			 * never ACK: a MAD reaching umad2sim after the port
			 * is closed crashes this client (see sa_fuzz.c). */
			ev_timer_stop(c->loop, &c->linger);
			ev_timer_set(&c->linger, 3., 0.);
			ev_timer_start(c->loop, &c->linger);
		}
		return;
	}
	if (c->raw) {
		/* The answer as it came: what a client sees before parsing. */
		printf("status 0x%04x attr_offset %u len %zu\n",
		       be16toh(m->hdr.status), be16toh(m->attr_offset), len);
		c->result = 0;
		ev_break(c->loop, EVBREAK_ALL);
		return;
	}
	if (c->path) {
		print_paths(m, len);
		c->result = 0;
		ev_break(c->loop, EVBREAK_ALL);
		return;
	}
	if (m->hdr.status) {
		printf("status 0x%04x\n", be16toh(m->hdr.status));
		c->result = 1;
		ev_break(c->loop, EVBREAK_ALL);
		return;
	}
	if (c->trap) {
		/* Subscribed: now wait for a Report (on_report). */
		printf("subscribed to trap %u\n", c->trap);
		fflush(stdout);
		return;
	}
	if (be16toh(m->hdr.attr_id) == SA_ATTR_SERVICE_RECORD) {
		const struct sa_service_record *r = (const void *)m->data;
		uint64_t g;

		memcpy(&g, r->service_gid + 8, 8);
		printf("service 0x%016" PRIx64 " %.64s lease %u port 0x%016"
		       PRIx64 "\n", be64toh(r->service_id), r->service_name,
		       be32toh(r->service_lease), be64toh(g));
	}
	c->result = 0;
	ev_break(c->loop, EVBREAK_ALL);
}

/* A Report: answer it and print it. */
static void on_report(void *arg, const void *mad, size_t len,
		      const struct mad_addr *from)
{
	struct client *c = arg;
	struct sa_mad resp;
	const struct smp_notice *n;

	if (len != MAD_SIZE)
		return;
	memcpy(&resp, mad, sizeof(resp));
	n = (const struct smp_notice *)resp.data;
	printf("report %u lid %u\n", be16toh(n->trap_num), be16toh(n->issuer_lid));
	fflush(stdout);
	resp.hdr.method = MAD_METHOD_REPORT | MAD_METHOD_RESP;
	struct mad_addr to = *from;
	to.qkey = 0x80010000u;
	mad_engine_send_oneway(c->engine, &resp, sizeof(resp), &to);
	c->result = 0;
	/* Leave before going: the SM would go on sending Reports (of later
	 * events too) to a port nobody listens on any more. */
	if (!c->unsubscribing) {
		struct sa_mad u = c->sub;

		((struct sa_inform_info *)u.data)->subscribe = 0;
		c->unsubscribing = true;
		/* to the SM that sent the Report: after a takeover it is no
		 * longer the one the port named at start */
		if (from->lid && from->lid != 0xffff)
			c->sa.lid = from->lid;
		if (mad_engine_submit(c->engine, &u, sizeof(u), &c->sa, on_done,
				      c) < 0)
			ev_break(c->loop, EVBREAK_ALL);
	}
}

static void on_timeout(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct client *c = w->data;

	if (ev_is_active(&c->linger))
		return;		/* leaving already: on_linger ends it */
	fprintf(stderr, "sa_client: nothing within the time given\n");
	c->result = 1;
	if (c->trap) {
		leave_quietly(c);
		return;
	}
	ev_break(loop, EVBREAK_ALL);
}

static void on_mad(void *arg, const void *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	mad_engine_recv(((struct client *)arg)->engine, mad, len, from, status);
}

/*
 * A PathRecord request: SLID DLID, then NAME=VALUE components (ServiceID
 * sets both halves of the mask; P_Key; QoSClass; SL; mtu/rate as
 * SELECTOR:VALUE).  argv[-1] is "get" or "table".  0 or -1.
 */
static int path_request(struct sa_mad *m, int argc, char **argv)
{
	struct sa_path_record *r = (struct sa_path_record *)m->data;
	uint64_t mask = 1u << 4 | 1u << 5;	/* DLID, SLID */
	unsigned cls = 0, sl = 0;

	memset(m, 0, sizeof(*m));
	r->dlid = htobe16((uint16_t)strtoul(argv[1], NULL, 0));
	r->slid = htobe16((uint16_t)strtoul(argv[0], NULL, 0));
	r->num_path = 1;
	for (int i = 2; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		unsigned long long v;
		unsigned sel = 0;

		if (!eq)
			return -1;
		if (!strncmp(argv[i], "mtu=", 4) || !strncmp(argv[i], "rate=", 5)) {
			if (sscanf(eq + 1, "%u:%llu", &sel, &v) != 2 || sel > 3 ||
			    v > 63)
				return -1;
		} else {
			v = strtoull(eq + 1, NULL, 0);
		}
		if (!strncmp(argv[i], "sid=", 4)) {
			r->service_id = htobe64(v);
			mask |= 1u << 0 | 1u << 1;
		} else if (!strncmp(argv[i], "pkey=", 5)) {
			r->pkey = htobe16((uint16_t)v);
			mask |= 1u << 13;
		} else if (!strncmp(argv[i], "class=", 6)) {
			cls = (unsigned)v & 0xfff;
			mask |= 1u << 14;
		} else if (!strncmp(argv[i], "sl=", 3)) {
			sl = (unsigned)v & 0xf;
			mask |= 1u << 15;
		} else if (!strncmp(argv[i], "mtu=", 4)) {
			r->mtu = (uint8_t)(sel << 6 | v);
			mask |= 1u << 16 | 1u << 17;
		} else if (!strncmp(argv[i], "rate=", 5)) {
			r->rate = (uint8_t)(sel << 6 | v);
			mask |= 1u << 18 | 1u << 19;
		} else {
			return -1;
		}
	}
	r->qos_class_sl = htobe16((uint16_t)(cls << 4 | sl));
	sa_request_hdr(m, !strcmp(argv[-1], "get") ? MAD_METHOD_GET :
		       MAD_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, mask);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: sa_client service-set ID NAME LEASE [GUID] |"
		" service-get ID | service-delete ID [GUID] |"
		" subscribe TRAP SECONDS [issm] | tables N |"
		" raw METHOD ATTR MASK [HEX] |"
		" path get|table SLID DLID [sid=X] [pkey=X] [class=X] [sl=X]"
		" [mtu=SEL:V] [rate=SEL:V]\n");
	return 2;
}

int main(int argc, char **argv)
{
	/* Every class a MAD may arrive in: umad2sim crashes on a MAD of a
	 * class nobody registered (e.g. a late answer to the previous
	 * client that had this simulator slot). */
	static const uint8_t classes[] = { MAD_CLASS_SA, MAD_CLASS_SMI,
					   MAD_CLASS_SMI_DR };
	struct client c = { .result = 1 };
	struct umad_io *io;
	struct sa_mad m;
	ev_timer timer;
	double wait = 5;
	int rc;

	if (argc < 3)
		return usage();
	c.loop = ev_default_loop(0);
	ev_timer_init(&c.linger, on_linger, 3., 0.);
	rc = umad_io_open(&io, c.loop, 0, classes, sizeof(classes), true);
	if (rc < 0) {
		fprintf(stderr, "sa_client: cannot open a port: %s\n", strerror(-rc));
		return 1;
	}
	c.io = io;
	c.port_guid = umad_io_port(io)->port_guid;
	c.sa = (struct mad_addr){ .lid = umad_io_port(io)->sm_lid, .qpn = 1,
				  .qkey = 0x80010000u };
	struct mad_transport tr = umad_io_transport(io);
	struct mad_engine_opts eo = { .max_wire_smps = 4, .max_wire_gmps = 8,
					 .timeout_ms = 500, .retries = 3 };
	if (mad_engine_new(&c.engine, c.loop, &tr, &eo) < 0 ||
	    umad_io_start(io, on_mad, &c) < 0)
		return 1;

	uint64_t id = strtoull(argv[2], NULL, 0);
	struct sa_service_record *sr = (struct sa_service_record *)m.data;
	uint64_t prefix = htobe64(0xfe80000000000000ull), guid = htobe64(c.port_guid);
	/* A ServiceGID of another port, to be refused. */
	if ((!strcmp(argv[1], "service-set") && argc == 6) ||
	    (!strcmp(argv[1], "service-delete") && argc == 4))
		guid = htobe64(strtoull(argv[argc - 1], NULL, 0));
	if (!strcmp(argv[1], "service-set") && (argc == 5 || argc == 6)) {
		build(&m, MAD_METHOD_SET, SA_ATTR_SERVICE_RECORD, 0x7 | 1u << 4 | 1u << 6);
		sr->service_id = htobe64(id);
		memcpy(sr->service_gid, &prefix, 8);
		memcpy(sr->service_gid + 8, &guid, 8);
		sr->service_pkey = htobe16(0xffff);
		sr->service_lease = htobe32((uint32_t)strtoul(argv[4], NULL, 0));
		snprintf(sr->service_name, sizeof(sr->service_name), "%s", argv[3]);
	} else if (!strcmp(argv[1], "service-get") && argc == 3) {
		build(&m, MAD_METHOD_GET, SA_ATTR_SERVICE_RECORD, 1);
		sr->service_id = htobe64(id);
	} else if (!strcmp(argv[1], "service-delete") && (argc == 3 || argc == 4)) {
		/* The record identity (15.2.5.14): ServiceID, GID, P_Key. */
		build(&m, MAD_METHOD_DELETE, SA_ATTR_SERVICE_RECORD, 0x7);
		sr->service_id = htobe64(id);
		memcpy(sr->service_gid, &prefix, 8);
		memcpy(sr->service_gid + 8, &guid, 8);
		sr->service_pkey = htobe16(0xffff);
	} else if (!strcmp(argv[1], "tables") && argc == 3) {
		build(&m, MAD_METHOD_GET_TABLE, SA_ATTR_NODE_RECORD, 0);
		c.tables = (unsigned)id;
		if (!c.tables || c.tables > 64)
			return usage();
	} else if (!strcmp(argv[1], "subscribe") &&
		   (argc == 4 || (argc == 5 && !strcmp(argv[4], "issm")))) {
		struct sa_inform_info *ii = (struct sa_inform_info *)m.data;
		build(&m, MAD_METHOD_SET, SA_ATTR_INFORM_INFO, 0);
		c.trap = (unsigned)id;
		ii->lid_range_begin = htobe16(0xffff);
		ii->is_generic = 1;
		ii->subscribe = 1;
		ii->type = htobe16(0xffff);
		ii->trap_num = htobe16((uint16_t)id);
		ii->qpn_resp_time = htobe32(1u << 8 | 18);
		ii->producer[0] = ii->producer[1] = ii->producer[2] = 0xff;
		wait = strtod(argv[3], NULL);
		c.sub = m;
		mad_engine_on_unsolicited(c.engine, MAD_CLASS_SA, MAD_METHOD_REPORT,
					  SA_ATTR_NOTICE, on_report, &c);
		c.issm = argc == 5;
		if (c.issm && (rc = umad_io_set_sm(io, true)) < 0) {
			fprintf(stderr, "sa_client: cannot take IsSM: %s\n",
				strerror(-rc));
			return 1;
		}
	} else if (!strcmp(argv[1], "raw") && (argc == 5 || argc == 6)) {
		const char *hex = argc == 6 ? argv[5] : "";
		size_t n = strlen(hex) / 2;

		build(&m, (uint8_t)id, (uint16_t)strtoul(argv[3], NULL, 0),
		      strtoull(argv[4], NULL, 0));
		if (n > sizeof(m.data) || strlen(hex) % 2)
			return usage();
		for (size_t i = 0; i < n; i++) {
			unsigned b;

			if (sscanf(hex + 2 * i, "%2x", &b) != 1)
				return usage();
			m.data[i] = (uint8_t)b;
		}
		c.raw = true;
	} else if (!strcmp(argv[1], "path") && argc >= 5 &&
		   (!strcmp(argv[2], "get") || !strcmp(argv[2], "table"))) {
		if (path_request(&m, argc - 3, argv + 3) < 0)
			return usage();
		c.path = true;
	} else {
		return usage();
	}
	for (unsigned i = 0; i < (c.tables ? c.tables : 1); i++) {
		rc = mad_engine_submit(c.engine, &m, sizeof(m), &c.sa, on_done, &c);
		if (rc < 0)
			return 1;
	}
	ev_timer_init(&timer, on_timeout, wait, 0.);
	timer.data = &c;
	ev_timer_start(c.loop, &timer);
	ev_run(c.loop, 0);
	umad_io_close(io);
	mad_engine_free(c.engine);
	return c.result;
}
