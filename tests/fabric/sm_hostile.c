/*
 * sm_hostile.c - a hostile host for fabric tests of the SM-to-SM
 * protocol: it sends what any port with umad access can send to an SM.
 *
 *   sm_hostile set MOD [-l LID] [-n COUNT] [SMINFO OPTIONS]
 *   sm_hostile get [-l LID] [-n COUNT] [SMINFO OPTIONS]
 *   sm_hostile flood [-l LID] [-n COUNT] [-r PER_SECOND] [-t SECONDS]
 *                    [SMINFO OPTIONS]
 *   sm_hostile rmpp-slow-ack [-l LID] [-A ATTR] [-t SECONDS] [-i SECONDS]
 *
 * SMINFO OPTIONS make the SMInfo payload (14.2.5.13) the request
 * carries, the sender's as it claims it:
 *   -g GUID   the sender's GUID (default 0x0002c9ffff00dead)
 *   -k KEY    SM_Key (default 1, OpenSM's and ibsm's default)
 *   -p PRIO   priority 0-15 (default 15)
 *   -s STATE  notactive, discovering, standby or master (default master
 *             for set, standby for get and flood)
 *   -a COUNT  ActCount (default 0)
 * -l LID is the destination (default: the port's SM LID).
 *
 * set: one SubnSet(SMInfo), LID-routed, AttributeModifier MOD (handover,
 * acknowledge, disable, standby, discover or a number), and prints the
 * answer.  get: one SubnGet(SMInfo) and prints the answer.  Both print
 *   "status 0xSSSS guid 0xG key 0xK priority P state NAME act A"
 * or "no answer" (exit 1) after 1 s; -n COUNT sends COUNT of them, one
 * after the other's answer.
 *
 * flood: COUNT SubnGet(SMInfo) (default 20000) at PER_SECOND (default
 * 0: as fast as the port takes them), for at most SECONDS (default 30),
 * reading answers in between, then waits 1 s for the last ones; prints
 * "flood sent N answered A in S s".
 *
 * rmpp-slow-ack: a SubnAdmGetTable of ATTR (default 0x11, NodeRecord,
 * every record) to the SA at LID (default the SM's), then, for SECONDS
 * (default 30), an RMPP ACK of segment 1 with window 1 every -i SECONDS
 * (default 0.3): the transfer never ends on our account.  Prints
 *   "rmpp-slow-ack segments N acks A held S s ended E"
 * where E is how the SA ended it: "abort" or "stop" (an RMPP ABORT or
 * STOP came S s after the request), or "no" (none in SECONDS: the
 * transfer still held its slot).  Exit 1 when no segment came.
 *
 * Lean like sa_hostile.c: one thread, umad_send()/umad_recv(), no event
 * loop.  Runs under the umad2sim preload like every client (SIM_HOST
 * names the host).
 */
#include "config.h"

#include <endian.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/umad.h>

#include "mad/sa_wire.h"
#include "mad/wire.h"

#define ANSWER_WAIT_MS	1000

#define QP1_QKEY	0x80010000u

struct host {
	int portid, agent, sa_agent;
	uint16_t lid, sm_lid;
	void *sbuf, *rbuf;
	uint32_t tid;
};

struct claim {
	uint64_t guid, key;
	uint32_t act;
	int prio, state;	/* state -1: the command's default */
};

static const char *const state_names[] = {
	"notactive", "discovering", "standby", "master"
};
static const char *const control_names[] = {
	"0", "handover", "acknowledge", "disable", "standby", "discover"
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int name_index(const char *s, const char *const *names, int n)
{
	char *end;
	long v;

	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	v = strtol(s, &end, 0);
	return *s && !*end && v >= 0 ? (int)v : -1;
}

static int open_port(struct host *h)
{
	umad_port_t port;

	if (umad_init() < 0 || umad_get_port(NULL, 0, &port) < 0) {
		fprintf(stderr, "sm_hostile: no umad port\n");
		return -1;
	}
	h->lid = (uint16_t)port.base_lid;
	h->sm_lid = (uint16_t)port.sm_lid;
	h->portid = umad_open_port(port.ca_name, port.portnum);
	umad_release_port(&port);
	if (h->portid < 0) {
		fprintf(stderr, "sm_hostile: cannot open the port\n");
		return -1;
	}
	h->agent = umad_register(h->portid, MAD_CLASS_SMI, 1, 0, NULL);
	if (h->agent < 0) {
		fprintf(stderr, "sm_hostile: cannot register an SMI agent\n");
		return -1;
	}
	h->sbuf = umad_alloc(1, umad_size() + MAD_SIZE);
	h->rbuf = umad_alloc(1, umad_size() + MAD_SIZE);
	return h->sbuf && h->rbuf ? 0 : -1;
}

/* One LID-routed SMInfo request with the claimed SMInfo as payload. */
static int send_sminfo(struct host *h, uint8_t method, uint32_t mod,
		       uint16_t dlid, const struct claim *c)
{
	struct smp_lid *smp = umad_get_mad(h->sbuf);
	struct smp_sm_info *si = (struct smp_sm_info *)smp->data;

	memset(smp, 0, sizeof(*smp));
	smp->hdr.base_version = 1;
	smp->hdr.mgmt_class = MAD_CLASS_SMI;
	smp->hdr.class_version = 1;
	smp->hdr.method = method;
	smp->hdr.tid = htobe64(++h->tid);
	smp->hdr.attr_id = htobe16(SMP_ATTR_SM_INFO);
	smp->hdr.attr_mod = htobe32(mod);
	si->guid = htobe64(c->guid);
	si->sm_key = htobe64(c->key);
	si->act_count = htobe32(c->act);
	si->prio_state = (uint8_t)((c->prio & 0xf) << 4 | (c->state & 0xf));
	umad_set_addr(h->sbuf, dlid, 0, 0, 0);
	return umad_send(h->portid, h->agent, h->sbuf, MAD_SIZE, 0, 0) < 0 ?
	       -1 : 0;
}

/* The answer to our last request, or NULL after ANSWER_WAIT_MS. */
static const struct smp_lid *wait_answer(struct host *h)
{
	double end = now() + ANSWER_WAIT_MS / 1e3;

	for (;;) {
		int len = MAD_SIZE, ms = (int)((end - now()) * 1e3);
		const struct smp_lid *smp = umad_get_mad(h->rbuf);

		if (ms <= 0)
			return NULL;
		if (umad_recv(h->portid, h->rbuf, &len, ms) < 0)
			continue;
		if (umad_status(h->rbuf) || len < MAD_SIZE ||
		    !(smp->hdr.method & MAD_METHOD_RESP))
			continue;
		if ((uint32_t)be64toh(smp->hdr.tid) == h->tid)
			return smp;
	}
}

static int one_request(struct host *h, uint8_t method, uint32_t mod,
		       uint16_t dlid, const struct claim *c)
{
	const struct smp_lid *a;
	const struct smp_sm_info *si;

	if (send_sminfo(h, method, mod, dlid, c) < 0) {
		fprintf(stderr, "sm_hostile: send failed\n");
		return 1;
	}
	a = wait_answer(h);
	if (!a) {
		printf("no answer\n");
		return 1;
	}
	si = (const struct smp_sm_info *)a->data;
	printf("status 0x%04x guid 0x%016" PRIx64 " key 0x%016" PRIx64
	       " priority %u state %s act %u\n", be16toh(a->hdr.status),
	       be64toh(si->guid), be64toh(si->sm_key), si->prio_state >> 4,
	       state_names[si->prio_state & 3], be32toh(si->act_count));
	return 0;
}

/* Count the answers waiting, without blocking longer than `ms`. */
static unsigned long drain(struct host *h, int ms)
{
	unsigned long n = 0;

	for (;;) {
		int len = MAD_SIZE;

		if (umad_recv(h->portid, h->rbuf, &len, ms) < 0)
			return n;
		if (!umad_status(h->rbuf) && len >= (int)sizeof(struct mad_hdr))
			n++;
		ms = 0;
	}
}

static int flood(struct host *h, uint16_t dlid, const struct claim *c,
		 unsigned long count, double rate, double secs)
{
	unsigned long sent = 0, answered = 0;
	double t0 = now(), end;

	while (sent < count && now() - t0 < secs) {
		if (rate > 0) {
			double due = t0 + (double)sent / rate;
			int ms = (int)((due - now()) * 1e3);

			answered += drain(h, ms > 0 ? ms : 0);
		} else {
			answered += drain(h, 0);
		}
		if (send_sminfo(h, MAD_METHOD_GET, 0, dlid, c) == 0)
			sent++;
	}
	end = now() + ANSWER_WAIT_MS / 1e3;
	while (now() < end)
		answered += drain(h, 50);
	printf("flood sent %lu answered %lu in %.1f s\n", sent, answered,
	       now() - t0);
	return 0;
}

/* Send one SA MAD (QP1) built in h->sbuf. */
static int send_sa(struct host *h, uint16_t dlid)
{
	umad_set_addr(h->sbuf, dlid, 1, 0, QP1_QKEY);
	return umad_send(h->portid, h->sa_agent, h->sbuf, MAD_SIZE, 0, 0) < 0 ?
	       -1 : 0;
}

/* An RMPP ACK of segment `seg`, window `seg`: the data segment's header
 * turned around (13.6.2.2), with the request's method, as ibsm's own
 * receiver sends it (mad/rmpp_recv.c): umad2sim hands a MAD with a
 * response method to the agent its TID names, in the SM not its SA. */
static void send_ack(struct host *h, const struct sa_mad *data, uint16_t dlid,
		     uint32_t seg)
{
	struct sa_mad *m = umad_get_mad(h->sbuf);

	memset(m, 0, sizeof(*m));
	m->hdr = data->hdr;
	m->hdr.status = 0;
	m->hdr.method = (uint8_t)(data->hdr.method & ~MAD_METHOD_RESP);
	m->rmpp.version = 1;
	m->rmpp.type = RMPP_TYPE_ACK;
	m->rmpp.resptime_flags = RMPP_FLAG_ACTIVE;
	m->rmpp.data1 = htobe32(seg);
	m->rmpp.data2 = htobe32(seg);
	(void)send_sa(h, dlid);
}

static int rmpp_slow_ack(struct host *h, uint16_t dlid, uint16_t attr,
			 double secs, double every)
{
	struct sa_mad *m = umad_get_mad(h->sbuf);
	struct sa_mad last;
	unsigned long segs = 0, acks = 0;
	double t0 = now(), next_ack = 0, ended_at = 0;
	const char *ended = "no";
	uint64_t tid;

	h->sa_agent = umad_register(h->portid, MAD_CLASS_SA, 2, 0, NULL);
	if (h->sa_agent < 0) {
		fprintf(stderr, "sm_hostile: cannot register an SA agent\n");
		return 1;
	}
	memset(m, 0, sizeof(*m));
	sa_request_hdr(m, MAD_METHOD_GET_TABLE, attr, 0);
	tid = 0x5a000000ull + (uint64_t)getpid();
	m->hdr.tid = htobe64(tid);
	if (send_sa(h, dlid) < 0) {
		fprintf(stderr, "sm_hostile: send failed\n");
		return 1;
	}
	memset(&last, 0, sizeof(last));
	while (now() - t0 < secs && !ended_at) {
		int len = MAD_SIZE;
		const struct sa_mad *r = umad_get_mad(h->rbuf);

		if (segs && now() >= next_ack) {
			send_ack(h, &last, dlid, 1);
			acks++;
			next_ack = now() + every;
		}
		if (umad_recv(h->portid, h->rbuf, &len, 50) < 0 ||
		    umad_status(h->rbuf) || len < MAD_HDR_SIZE ||
		    (uint32_t)be64toh(r->hdr.tid) != (uint32_t)tid)
			continue;
		if (r->rmpp.type == RMPP_TYPE_ABORT || r->rmpp.type == RMPP_TYPE_STOP) {
			ended = r->rmpp.type == RMPP_TYPE_ABORT ? "abort" : "stop";
			ended_at = now() - t0;
			break;
		}
		if (r->rmpp.type != RMPP_TYPE_DATA && segs)
			continue;
		if (!segs)
			next_ack = now();
		last = *r;
		segs++;
	}
	printf("rmpp-slow-ack segments %lu acks %lu held %.1f s ended %s\n",
	       segs, acks, ended_at ? ended_at : now() - t0, ended);
	return segs ? 0 : 1;
}

static int usage(void)
{
	fprintf(stderr,
		"usage: sm_hostile set MOD [-l LID] [-n COUNT] [-g GUID] [-k KEY]"
		" [-p PRIO] [-s STATE] [-a ACT]\n"
		"       sm_hostile get [-l LID] [-n COUNT] [-g GUID] [-k KEY]"
		" [-p PRIO] [-s STATE] [-a ACT]\n"
		"       sm_hostile flood [-l LID] [-n COUNT] [-r PER_SECOND]"
		" [-t SECONDS] [SMINFO OPTIONS]\n"
		"       sm_hostile rmpp-slow-ack [-l LID] [-A ATTR] [-t SECONDS]"
		" [-i SECONDS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct host h = { 0 };
	struct claim c = { .guid = 0x0002c9ffff00deadull, .key = 1, .prio = 15,
			   .state = -1 };
	unsigned long count = 0;	/* flood: 20000; set, get: 1 */
	double rate = 0, secs = 30, every = 0.3;
	unsigned attr = SA_ATTR_NODE_RECORD;
	long dlid = 0;
	int mod = 0, opt, rc;
	const char *cmd;

	if (argc < 2)
		return usage();
	cmd = argv[1];
	optind = 2;
	if (!strcmp(cmd, "set")) {
		if (argc < 3)
			return usage();
		mod = name_index(argv[2], control_names, 6);
		if (mod < 0)
			return usage();
		optind = 3;
	} else if (strcmp(cmd, "get") && strcmp(cmd, "flood") &&
		   strcmp(cmd, "rmpp-slow-ack")) {
		return usage();
	}
	while ((opt = getopt(argc, argv, "l:g:k:p:s:a:n:r:t:A:i:")) != -1) {
		switch (opt) {
		case 'l': dlid = strtol(optarg, NULL, 0); break;
		case 'g': c.guid = strtoull(optarg, NULL, 0); break;
		case 'k': c.key = strtoull(optarg, NULL, 0); break;
		case 'p': c.prio = (int)strtol(optarg, NULL, 0); break;
		case 's':
			c.state = name_index(optarg, state_names, 4);
			if (c.state < 0 || c.state > 15)
				return usage();
			break;
		case 'a': c.act = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'n': count = strtoul(optarg, NULL, 0); break;
		case 'r': rate = strtod(optarg, NULL); break;
		case 't': secs = strtod(optarg, NULL); break;
		case 'A': attr = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'i': every = strtod(optarg, NULL); break;
		default: return usage();
		}
	}
	if (optind != argc || dlid < 0 || dlid > 0xffff || c.prio < 0 ||
	    c.prio > 15)
		return usage();
	if (c.state < 0)
		c.state = !strcmp(cmd, "set") ? SM_STATE_MASTER : SM_STATE_STANDBY;
	if (!count)
		count = !strcmp(cmd, "flood") ? 20000 : 1;
	if (open_port(&h) < 0)
		return 1;
	if (!dlid)
		dlid = h.sm_lid;
	if (!dlid) {
		fprintf(stderr, "sm_hostile: no SM LID yet\n");
		return 1;
	}
	if (!strcmp(cmd, "rmpp-slow-ack"))
		rc = rmpp_slow_ack(&h, (uint16_t)dlid, (uint16_t)attr, secs,
				   every > 0 ? every : 0.3);
	else if (!strcmp(cmd, "flood"))
		rc = flood(&h, (uint16_t)dlid, &c, count, rate, secs);
	else
		for (unsigned long i = 0; i < count; i++)
			rc = one_request(&h, !strcmp(cmd, "set") ?
					 MAD_METHOD_SET : MAD_METHOD_GET,
					 (uint32_t)mod, (uint16_t)dlid, &c);
	umad_free(h.sbuf);
	umad_free(h.rbuf);
	if (!getenv("LD_PRELOAD") || !strstr(getenv("LD_PRELOAD"), "umad2sim"))
		umad_close_port(h.portid);
	return rc;
}
