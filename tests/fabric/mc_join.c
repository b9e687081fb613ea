/*
 * mc_join.c - a multicast join client for fabric tests and benchmarks:
 * it talks MCMemberRecord (IB spec 15.2.5.17, 15.4.3/15.4.4) to the SA at
 * the SM LID of its port like any host would.  Under the umad2sim preload
 * with SIM_HOST=H0005 it is host H0005.
 *
 *   mc_join [options] join	Set: create or join the group
 *   mc_join [options] leave	Delete: drop the JoinState bits given
 *   mc_join [options] get	Get with the components given
 *   mc_join [options] table	GetTable with the components given (RMPP
 *				received in user space, as ibsmctl does)
 *   mc_join [options] mft-wait FILE
 *				read MulticastForwardingTable blocks
 *				(SubnGet, 14.2.5.12) until every
 *				"SWITCH-LID PORT MLID" line of FILE has its
 *				port bit set; print when (epoch seconds).
 *				FILE may appear later (renamed into place):
 *				the client attaches first and waits for it,
 *				so its start-up is not measured
 *
 * Options (a record component is in the ComponentMask when given):
 *   -m, --mgid GID		the group; default :: (join: the SM assigns
 *				one, 15.4.2)
 *   -J, --join-state S	full, non, sendonly, sendonly-full, or bits
 *				joined with '+' or a number (default full)
 *   -L, --leave-state S	JoinState of the leave of a cycle (-n)
 *   -p, --pkey P  -q, --qkey Q  --sl N  --scope N  --tclass N
 *   --flow N  --hop N
 *   --mlid N			the MLID component (a group created by the
 *				join asks for this MLID)
 *   --mtu [SEL:]CODE  --rate [SEL:]CODE  --life [SEL:]CODE
 *				SEL: 0 greater than, 1 less than, 2 exactly,
 *				3 largest available (15.2.5.16); default 2
 *   -c, --create		add what creating a group requires (Q_Key,
 *				P_Key, SL, FlowLabel, TClass; 15.4.2) with
 *				their values (defaults: Q_Key 0x0b1b, P_Key
 *				0xffff, the others 0)
 *   -x, --proxy GID		join/leave for another port (ProxyJoin)
 *   -M, --mask MASK		send this ComponentMask instead
 *   -n, --count N		N cycles: join then leave, one at a time;
 *				prints a "cycles" summary line ("ok": joins
 *				accepted)
 *   -I, --new-mgid		-n: each cycle its own group (the MGID's low
 *				32 bits + the cycle number)
 *   -S, --steps LIST	the steps of a cycle instead: +STATE (join),
 *				-STATE (leave), comma-separated, e.g.
 *				+sendonly-full,+full,-full,-sendonly-full
 *   -N, --groups N		N joins of distinct groups (the MGID's low 32
 *				bits + 0 .. N-1), -w at once, no leave;
 *				prints a "joins" summary line with joins/s.
 *				With leave: N leaves of those groups (the
 *				summary line counts them as its "joins")
 *   -w, --window W		requests outstanding at once (default 1)
 *   -v, --verbose		-N: a "joined" line (the record) per join
 *   -t, --timeout MS  -r, --retries N
 *   -T, --wait S		mft-wait: give up after S seconds (default 30)
 *   --start-at T		-N: send the first requests at T (seconds since
 *				the epoch, as `date +%s.%N`), once the port is
 *				open, so that several clients started one after
 *				the other begin together (a benchmark's rate is
 *				then the SM's, not the clients' start-up); the
 *				summary's "seconds" count from T.  A T already
 *				past starts at once and says so on stderr.
 *   --serial		mft-wait: bits that are set stay set (joins
 *				only): each round reads the first block with a
 *				bit still missing, and the next ones at once
 *				while they are complete, so that polling
 *				throughout a join burst costs the simulator
 *				one SMP per round; when the last is complete,
 *				one round reads them all again to confirm, and
 *				"consistent" is the time the last one was
 *				found complete.  Rounds every 2 ms.
 *
 * Output, one line per answer, "key=value" words:
 *   join status=SUCCESS raw=0x0000 mgid=ff12:401b:ffff::ffff:ffff
 *	port_gid=fe80::... mlid=0xc000 qkey=0x00000b1b pkey=0xffff mtu=2:4
 *	rate=2:3 life=2:0 sl=0 flow=0 tclass=0 hop=0 scope=2 join=0x1 proxy=0
 * (no record words when the status is not SUCCESS).
 * Exit status: 0 the SA said SUCCESS (every join of -n/-N did), 1 it did
 * not or did not answer, 2 usage.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <ev.h>

#include "mad/engine.h"
#include "mad/rmpp_recv.h"
#include "mad/sa_wire.h"
#include "mad/umad_io.h"

#define SA_QKEY		0x80010000u
#define GID_PREFIX	0xfe80000000000000ull
#define MAX_MFT_CHECKS	65536

enum op { OP_JOIN, OP_LEAVE, OP_GET, OP_TABLE, OP_MFT_WAIT };

struct client;

/* One MFT block read by mft-wait: a switch, a block, a port group. */
struct mft_query {
	struct client *c;
	uint16_t lid;
	uint16_t block;			/* (MLID - 0xC000) / 32 */
	uint8_t pos;			/* ports pos*16 .. pos*16+15 */
	bool done;
};

struct mft_check {
	uint16_t lid, mlid;
	uint8_t port;
	bool ok;
};

struct client {
	struct ev_loop *loop;
	struct mad_engine *engine;
	struct rmpp_client *rmpp;
	struct mad_addr sa;
	uint64_t port_guid;
	enum op op;
	struct sa_mad req;		/* the request as built from options */
	uint8_t leave_state;
	/* -n: the steps of a cycle, a join (Set) or leave (Delete) each */
	struct { bool leave; uint8_t state; } steps[8];
	unsigned n_steps, step;
	unsigned long cycles_done;
	bool new_mgid;			/* -I */
	/* -n / -N */
	unsigned long count, groups, window;
	unsigned long sent, done, ok, failed, leave_failed;
	bool verbose;			/* -N: print every record */
	double t0;
	int result;
	/* mft-wait */
	struct mft_check *checks;
	size_t n_checks;
	struct mft_query *queries;
	size_t n_queries;
	unsigned outstanding, rounds;
	bool serial, confirming;	/* --serial; its final full round */
	size_t next;			/* --serial: first block not complete */
	double complete_at;		/* --serial: when the last was */
	ev_timer poll;
	const char *mft_file;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *status_name(uint16_t st)
{
	static const char *const sa[] = {
		"SUCCESS", "ERR_NO_RESOURCES", "ERR_REQ_INVALID",
		"ERR_NO_RECORDS", "ERR_TOO_MANY_RECORDS", "ERR_REQ_INVALID_GID",
		"ERR_REQ_INSUFFICIENT_COMPONENTS", "ERR_REQ_DENIED",
	};

	if (st & 0xff00)
		return (st >> 8) < 8 ? sa[st >> 8] : "ERR_SA_OTHER";
	if (st & MAD_STATUS_BUSY)
		return "BUSY";
	switch (st & MAD_STATUS_MASK) {
	case 0:				return "SUCCESS";
	case MAD_STATUS_BAD_VERSION:	return "BAD_VERSION";
	case MAD_STATUS_METHOD_UNSUPP:	return "METHOD_UNSUPPORTED";
	case MAD_STATUS_ATTR_UNSUPP:	return "METHOD_ATTR_UNSUPPORTED";
	case MAD_STATUS_INVALID_FIELD:	return "INVALID_FIELD";
	default:			return "ERR_OTHER";
	}
}

static void print_record(const char *what, uint16_t st,
			 const struct sa_mcmember_record *r)
{
	char mgid[INET6_ADDRSTRLEN], pgid[INET6_ADDRSTRLEN];
	uint32_t sfh;

	printf("%s status=%s raw=0x%04x", what, status_name(st), st);
	if (r) {
		inet_ntop(AF_INET6, r->mgid, mgid, sizeof(mgid));
		inet_ntop(AF_INET6, r->port_gid, pgid, sizeof(pgid));
		sfh = be32toh(r->sl_flow_hop);
		printf(" mgid=%s port_gid=%s mlid=0x%04x qkey=0x%08x pkey=0x%04x"
		       " mtu=%u:%u rate=%u:%u life=%u:%u sl=%u flow=%u"
		       " tclass=%u hop=%u scope=%u join=0x%x proxy=%u",
		       mgid, pgid, be16toh(r->mlid), be32toh(r->qkey),
		       be16toh(r->pkey), r->mtu >> 6, r->mtu & 0x3f,
		       r->rate >> 6, r->rate & 0x3f, r->pkt_life >> 6,
		       r->pkt_life & 0x3f, sfh >> 28, (sfh >> 8) & 0xfffff,
		       r->tclass, sfh & 0xff, r->scope_state >> 4,
		       r->scope_state & 0xf, r->proxy_join >> 7);
	}
	putchar('\n');
	fflush(stdout);
}

static void on_mad(void *arg, const void *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	mad_engine_recv(((struct client *)arg)->engine, mad, len, from, status);
}

/* ------------------------------------------------- one request, -n, -N */

static void on_answer(void *arg, int status, const void *mad, size_t len);

/*
 * The next request of a run: -N, the join of group number `sent` (the
 * MGID's low 32 bits + sent); -n, the join or the leave of the cycle.
 */
static int submit_next(struct client *c)
{
	struct sa_mad m = c->req;
	struct sa_mcmember_record *r = (struct sa_mcmember_record *)m.data;

	if (c->groups) {
		uint32_t low;

		memcpy(&low, r->mgid + 12, 4);
		low = htobe32(be32toh(low) + (uint32_t)c->sent);
		memcpy(r->mgid + 12, &low, 4);
	} else if (c->count) {
		if (c->new_mgid) {
			uint32_t low;

			memcpy(&low, r->mgid + 12, 4);
			low = htobe32(be32toh(low) + (uint32_t)c->cycles_done);
			memcpy(r->mgid + 12, &low, 4);
		}
		if (c->steps[c->step].leave)
			m.hdr.method = MAD_METHOD_DELETE;
		r->scope_state = (uint8_t)((r->scope_state & 0xf0) |
					   c->steps[c->step].state);
	}
	c->sent++;
	return mad_engine_submit(c->engine, &m, sizeof(m), &c->sa, on_answer, c);
}

static void finish_run(struct client *c)
{
	double end = now(), t = end - c->t0;

	if (c->count)
		printf("cycles count=%lu ok=%lu failed=%lu leave_failed=%lu "
		       "seconds=%.3f cycles_per_s=%.1f end=%.6f\n",
		       c->cycles_done, c->ok, c->failed, c->leave_failed, t,
		       t > 0 ? c->cycles_done / t : 0., end);
	else
		printf("joins count=%lu ok=%lu failed=%lu seconds=%.3f "
		       "joins_per_s=%.1f end=%.6f\n", c->groups, c->ok,
		       c->failed, t, t > 0 ? c->ok / t : 0., end);
	fflush(stdout);
	c->result = c->failed || c->leave_failed || c->ok == 0 ? 1 : 0;
	ev_break(c->loop, EVBREAK_ALL);
}

/* Print the first few refusals of a run, not thousands. */
static void note_refusal(struct client *c, const char *what, uint16_t st)
{
	char buf[48];

	if (c->failed + c->leave_failed > 5)
		return;
	snprintf(buf, sizeof(buf), "%s-%lu", what, c->sent);
	print_record(buf, st, NULL);
}

static void on_answer(void *arg, int status, const void *mad, size_t len)
{
	struct client *c = arg;
	const struct sa_mad *m = mad;
	uint16_t st = 0xffff;

	(void)len;
	if (status < 0)
		fprintf(stderr, "mc_join: no answer: %s\n", strerror(-status));
	else
		st = be16toh(m->hdr.status);
	if (!c->count && !c->groups) {
		static const char *const what[] = { "join", "leave", "get" };
		struct sa_mcmember_record r;

		if (status < 0) {
			c->result = 1;
		} else {
			memcpy(&r, m->data, sizeof(r));
			print_record(what[c->op], st, st ? NULL : &r);
			c->result = st ? 1 : 0;
		}
		ev_break(c->loop, EVBREAK_ALL);
		return;
	}
	c->done++;
	if (c->count) {
		/* One request at a time, the steps of a cycle in turn. */
		bool leave = c->steps[c->step].leave;

		if (st) {
			if (leave)
				c->leave_failed++;
			else
				c->failed++;
			note_refusal(c, leave ? "leave" : "join", st);
		} else if (!leave) {
			c->ok++;
		}
		if (++c->step == c->n_steps) {
			c->step = 0;
			c->cycles_done++;
		}
		if (c->cycles_done >= c->count || submit_next(c) < 0)
			finish_run(c);
		return;
	}
	if (st) {
		c->failed++;
		note_refusal(c, "join", st);
	} else {
		c->ok++;
		if (c->verbose) {
			struct sa_mcmember_record r;

			memcpy(&r, m->data, sizeof(r));
			print_record("joined", st, &r);
		}
	}
	if (c->sent < c->groups && submit_next(c) < 0) {
		c->failed++;
		c->done++;
	}
	if (c->done >= c->groups)
		finish_run(c);
}

/* ------------------------------------------------------------- table */

static void on_table(void *arg, const struct rmpp_result *res)
{
	struct client *c = arg;
	const struct sa_mad *f = res->first;
	size_t stride, n;

	c->result = 1;
	if (res->status < 0 || !f) {
		fprintf(stderr, "mc_join: GetTable failed: %s (%u segments of %u)\n",
			strerror(-res->status), res->segments, res->expected);
		ev_break(c->loop, EVBREAK_ALL);
		return;
	}
	uint16_t st = be16toh(f->hdr.status);
	if (st) {
		print_record("table", st, NULL);
		if (st == SA_STATUS_NO_RECORDS) {
			printf("table records=0\n");
			c->result = 0;
		}
		ev_break(c->loop, EVBREAK_ALL);
		return;
	}
	stride = (size_t)be16toh(f->attr_offset) * 8;
	if (stride < sizeof(struct sa_mcmember_record)) {
		fprintf(stderr, "mc_join: AttributeOffset %zu too small\n", stride);
		ev_break(c->loop, EVBREAK_ALL);
		return;
	}
	n = res->len / stride;
	if (res->unsegmented)
		fprintf(stderr, "mc_join: one MAD of an answer the SM left to "
			"its kernel to segment: the table may be cut short\n");
	for (size_t i = 0; i < n; i++) {
		struct sa_mcmember_record r;

		memcpy(&r, res->payload + i * stride, sizeof(r));
		print_record("record", 0, &r);
	}
	printf("table records=%zu\n", n);
	c->result = 0;
	ev_break(c->loop, EVBREAK_ALL);
}

/* ---------------------------------------------------------- mft-wait */

static void mft_round(struct client *c);
static void on_mft(void *arg, int status, const void *mad, size_t len);

static int mft_submit(struct client *c, struct mft_query *q)
{
	struct mad_addr to = { .lid = q->lid, .qpn = 0 };
	struct smp_lid smp;

	mad_build_smp_lid(&smp, MAD_METHOD_GET, SMP_ATTR_MFT,
			  (uint32_t)q->pos << 28 | q->block);
	if (mad_engine_submit(c->engine, &smp, sizeof(smp), &to, on_mft, q))
		return -1;
	c->outstanding++;
	return 0;
}

static void on_mft(void *arg, int status, const void *mad, size_t len)
{
	struct mft_query *q = arg;
	struct client *c = q->c;
	const struct smp_lid *smp = mad;

	(void)len;
	c->outstanding--;
	if (status >= 0 && !(be16toh(smp->hdr.status) & MAD_STATUS_MASK)) {
		struct smp_mft_block b;
		bool all = true;

		memcpy(&b, smp->data, sizeof(b));
		for (size_t i = 0; i < c->n_checks; i++) {
			struct mft_check *k = &c->checks[i];

			if (k->lid != q->lid || k->port / 16 != q->pos ||
			    (unsigned)(k->mlid - 0xc000) / 32 != q->block)
				continue;
			k->ok = be16toh(b.mask[(k->mlid - 0xc000) % 32]) &
				(1u << (k->port % 16));
			all &= k->ok;
		}
		q->done = all;
	}
	if (c->serial && !c->confirming) {
		/* The next block at once while they are complete. */
		if (q->done && ++c->next < c->n_queries &&
		    mft_submit(c, &c->queries[c->next]) == 0)
			return;
		if (c->next >= c->n_queries)
			c->complete_at = now();
	}
	if (!c->outstanding)
		mft_round(c);
}

static void on_poll(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct client *c = w->data;

	(void)loop;
	(void)revents;
	c->rounds++;
	if (c->serial && !c->confirming) {
		if (c->next < c->n_queries)
			mft_submit(c, &c->queries[c->next]);
	} else {
		for (size_t i = 0; i < c->n_queries; i++)
			if (!c->queries[i].done)
				mft_submit(c, &c->queries[i]);
	}
	if (!c->outstanding)
		mft_round(c);
}

/* A round is over: done, out of time, or another round in 10 ms. */
static void mft_round(struct client *c)
{
	size_t left = 0;

	for (size_t i = 0; i < c->n_checks; i++)
		left += !c->checks[i].ok;
	if (c->serial && !c->confirming && c->next >= c->n_queries) {
		/* Every block was found complete once: read them all again
		 * (a bit cleared meanwhile: serial again from the start). */
		c->confirming = true;
		for (size_t i = 0; i < c->n_queries; i++)
			c->queries[i].done = false;
		ev_timer_set(&c->poll, 0., 0.);
		ev_timer_start(c->loop, &c->poll);
		return;
	}
	if (c->serial && c->confirming && left) {
		c->confirming = false;
		c->next = 0;
		for (size_t i = 0; i < c->n_queries; i++)
			c->queries[i].done = false;
	}
	if (!left && (!c->serial || c->confirming)) {
		printf("mft consistent=%.6f rounds=%u checks=%zu confirmed=%.6f\n",
		       c->serial ? c->complete_at : now(), c->rounds,
		       c->n_checks, now());
		c->result = 0;
		ev_break(c->loop, EVBREAK_ALL);
		return;
	}
	ev_timer_set(&c->poll, c->serial ? 0.002 : 0.01, 0.);
	ev_timer_start(c->loop, &c->poll);
}

static int mft_load(struct client *c, const char *file)
{
	FILE *f = fopen(file, "r");
	unsigned lid, port, mlid;
	char line[128];

	if (!f) {
		fprintf(stderr, "mc_join: %s: %s\n", file, strerror(errno));
		return -1;
	}
	c->checks = calloc(MAX_MFT_CHECKS, sizeof(*c->checks));
	c->queries = calloc(MAX_MFT_CHECKS, sizeof(*c->queries));
	if (!c->checks || !c->queries) {
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%i %i %i", &lid, &port, &mlid) != 3)
			continue;
		if (!lid || lid >= 0xc000 || port > 254 || mlid < 0xc000 ||
		    mlid > 0xfffe || c->n_checks >= MAX_MFT_CHECKS) {
			fprintf(stderr, "mc_join: %s: bad line '%s' (expected "
				"SWITCH-LID PORT MLID)\n", file, line);
			fclose(f);
			return -1;
		}
		c->checks[c->n_checks++] = (struct mft_check){
			.lid = (uint16_t)lid, .port = (uint8_t)port,
			.mlid = (uint16_t)mlid };
		struct mft_query q = { .c = c, .lid = (uint16_t)lid,
				       .block = (uint16_t)((mlid - 0xc000) / 32),
				       .pos = (uint8_t)(port / 16) };
		size_t j;
		for (j = 0; j < c->n_queries; j++)
			if (c->queries[j].lid == q.lid &&
			    c->queries[j].block == q.block &&
			    c->queries[j].pos == q.pos)
				break;
		if (j == c->n_queries)
			c->queries[c->n_queries++] = q;
	}
	fclose(f);
	return 0;
}

/* mft-wait: FILE is there (checked every 5 ms): load it, start polling. */
static void on_file(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct client *c = w->data;

	(void)revents;
	if (access(c->mft_file, R_OK) != 0) {
		ev_timer_set(w, 0.005, 0.);
		ev_timer_start(loop, w);
		return;
	}
	if (mft_load(c, c->mft_file) < 0) {
		c->result = 1;
		ev_break(loop, EVBREAK_ALL);
		return;
	}
	printf("mft start=%.6f\n", now());
	ev_timer_init(&c->poll, on_poll, 0., 0.);
	c->poll.data = c;
	ev_timer_start(loop, &c->poll);
}

/* ------------------------------------------------------------- main */

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct client *c = w->data;

	(void)revents;
	fprintf(stderr, "mc_join: nothing within the time given\n");
	if (c->count || c->groups)
		finish_run(c);
	c->result = 1;
	ev_break(loop, EVBREAK_ALL);
}

static int usage(void)
{
	fprintf(stderr,
"usage: mc_join [options] join|leave|get|table|mft-wait FILE\n"
"  -m MGID  -J STATE  -L STATE  -p PKEY  -q QKEY  --sl N  --scope N\n"
"  --tclass N  --flow N  --hop N  --mlid N  --mtu [SEL:]C  --rate [SEL:]C\n"
"  --life [SEL:]C  -c (create)  -x PROXY-GID  -M MASK  -n CYCLES\n"
"  -S +STATE,-STATE,...  -I  -N GROUPS  -w WINDOW  -v  -t MS  -r N  -T SECONDS\n"
"  --start-at EPOCH-SECONDS (-N: begin then)\n"
"  --serial (mft-wait: bits only get set; one block per round)\n"
"JoinState: full, non, sendonly, sendonly-full, joined with '+', or bits\n");
	return 2;
}

static bool num(const char *s, unsigned long long max, unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && end != s && !*end && *v <= max && s[0] != '-';
}

static bool join_state(const char *s, uint8_t *out)
{
	static const struct { const char *name; uint8_t bit; } names[] = {
		{ "full", MC_JOIN_FULL }, { "non", MC_JOIN_NON },
		{ "sendonly", MC_JOIN_SENDONLY },
		{ "sendonly-full", MC_JOIN_SENDONLY_FULL },
	};
	unsigned long long v;
	char buf[64], *save = NULL;

	if (num(s, 0xf, &v)) {
		*out = (uint8_t)v;
		return true;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	*out = 0;
	for (char *t = strtok_r(buf, "+,", &save); t; t = strtok_r(NULL, "+,", &save)) {
		size_t i;

		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(t, names[i].name))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return false;
		*out |= names[i].bit;
	}
	return *out != 0;
}

/* "[SEL:]CODE": selector (default 2, exactly) and a 6-bit code. */
static bool sel_code(const char *s, uint8_t *out)
{
	unsigned long long sel = 2, code;
	const char *colon = strchr(s, ':');
	char buf[8];

	if (colon) {
		if (colon - s >= (long)sizeof(buf))
			return false;
		memcpy(buf, s, (size_t)(colon - s));
		buf[colon - s] = 0;
		if (!num(buf, 3, &sel))
			return false;
		s = colon + 1;
	}
	if (!num(s, 63, &code))
		return false;
	*out = (uint8_t)(sel << 6 | code);
	return true;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "mgid", required_argument, NULL, 'm' },
		{ "join-state", required_argument, NULL, 'J' },
		{ "leave-state", required_argument, NULL, 'L' },
		{ "pkey", required_argument, NULL, 'p' },
		{ "qkey", required_argument, NULL, 'q' },
		{ "create", no_argument, NULL, 'c' },
		{ "proxy", required_argument, NULL, 'x' },
		{ "mask", required_argument, NULL, 'M' },
		{ "count", required_argument, NULL, 'n' },
		{ "groups", required_argument, NULL, 'N' },
		{ "window", required_argument, NULL, 'w' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "steps", required_argument, NULL, 'S' },
		{ "new-mgid", no_argument, NULL, 'I' },
		{ "timeout", required_argument, NULL, 't' },
		{ "retries", required_argument, NULL, 'r' },
		{ "wait", required_argument, NULL, 'T' },
		{ "sl", required_argument, NULL, 1 },
		{ "scope", required_argument, NULL, 2 },
		{ "tclass", required_argument, NULL, 3 },
		{ "flow", required_argument, NULL, 4 },
		{ "hop", required_argument, NULL, 5 },
		{ "mtu", required_argument, NULL, 6 },
		{ "rate", required_argument, NULL, 7 },
		{ "life", required_argument, NULL, 8 },
		{ "serial", no_argument, NULL, 9 },
		{ "mlid", required_argument, NULL, 10 },
		{ "start-at", required_argument, NULL, 11 },
		{ NULL, 0, NULL, 0 },
	};
	/* Every class a MAD may arrive in: umad2sim crashes on a MAD of a
	 * class nobody registered (see sa_client.c). */
	static const uint8_t classes[] = { MAD_CLASS_SA, MAD_CLASS_SMI,
					   MAD_CLASS_SMI_DR };
	struct client c = { .result = 1, .window = 1 };
	struct sa_mcmember_record r = { 0 };
	uint64_t mask = 1ull << MCM_MGID | 1ull << MCM_PORT_GID |
			1ull << MCM_JOIN_STATE;
	bool create = false, have_mask = false, proxy = false, have_leave = false;
	uint8_t state = MC_JOIN_FULL, scope = 0;
	unsigned long long v, user_mask = 0, timeout = 1000, retries = 3;
	double wait = 30, start_at = 0;
	uint16_t pkey = 0xffff;
	uint32_t qkey = 0x0b1b, sl = 0, flow = 0, hop = 0;
	struct umad_io *io;
	ev_timer timer;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "m:J:L:p:q:cx:M:n:N:w:vS:It:r:T:",
				  longopts, NULL)) != -1) {
		switch (opt) {
		case 'm':
			if (inet_pton(AF_INET6, optarg, r.mgid) != 1) {
				fprintf(stderr, "mc_join: bad MGID '%s'\n", optarg);
				return 2;
			}
			break;
		case 'J':
		case 'L': {
			uint8_t s;

			if (!join_state(optarg, &s)) {
				fprintf(stderr, "mc_join: bad JoinState '%s'\n", optarg);
				return 2;
			}
			if (opt == 'J') {
				state = s;
			} else {
				c.leave_state = s;
				have_leave = true;
			}
			break;
		}
		case 'p':
			if (!num(optarg, 0xffff, &v))
				return usage();
			pkey = (uint16_t)v;
			mask |= 1ull << MCM_PKEY;
			break;
		case 'q':
			if (!num(optarg, 0xffffffff, &v))
				return usage();
			qkey = (uint32_t)v;
			mask |= 1ull << MCM_QKEY;
			break;
		case 'c': create = true; break;
		case 'x':
			if (inet_pton(AF_INET6, optarg, r.port_gid) != 1) {
				fprintf(stderr, "mc_join: bad port GID '%s'\n", optarg);
				return 2;
			}
			proxy = true;
			break;
		case 'M':
			if (!num(optarg, UINT64_MAX, &user_mask))
				return usage();
			have_mask = true;
			break;
		case 'n':
		case 'N':
			if (!num(optarg, 10000000, &v) || !v)
				return usage();
			if (opt == 'n')
				c.count = v;
			else
				c.groups = v;
			break;
		case 'w':
			if (!num(optarg, 256, &v) || !v)
				return usage();
			c.window = v;
			break;
		case 'v': c.verbose = true; break;
		case 'I': c.new_mgid = true; break;
		case 'S': {
			char buf[256], *save = NULL;

			snprintf(buf, sizeof(buf), "%s", optarg);
			c.n_steps = 0;
			for (char *t = strtok_r(buf, ",", &save); t;
			     t = strtok_r(NULL, ",", &save)) {
				uint8_t st;

				if ((*t != '+' && *t != '-') ||
				    c.n_steps == sizeof(c.steps) / sizeof(c.steps[0]) ||
				    !join_state(t + 1, &st)) {
					fprintf(stderr, "mc_join: bad step '%s' "
						"(+STATE or -STATE)\n", t);
					return 2;
				}
				c.steps[c.n_steps].leave = *t == '-';
				c.steps[c.n_steps++].state = st;
			}
			break;
		}
		case 't':
			if (!num(optarg, 600000, &timeout) || !timeout)
				return usage();
			break;
		case 'r':
			if (!num(optarg, 100, &retries))
				return usage();
			break;
		case 'T':
			wait = strtod(optarg, NULL);
			if (wait <= 0)
				return usage();
			break;
		case 9:
			c.serial = true;
			break;
		case 10:
			if (!num(optarg, 0xffff, &v))
				return usage();
			r.mlid = htobe16((uint16_t)v);
			mask |= 1ull << MCM_MLID;
			break;
		case 11: {
			char *end;

			start_at = strtod(optarg, &end);
			if (end == optarg || *end || start_at <= 0)
				return usage();
			break;
		}
		case 1:
			if (!num(optarg, 15, &v))
				return usage();
			sl = (uint32_t)v;
			mask |= 1ull << MCM_SL;
			break;
		case 2:
			if (!num(optarg, 15, &v))
				return usage();
			scope = (uint8_t)v;
			mask |= 1ull << MCM_SCOPE;
			break;
		case 3:
			if (!num(optarg, 255, &v))
				return usage();
			r.tclass = (uint8_t)v;
			mask |= 1ull << MCM_TCLASS;
			break;
		case 4:
			if (!num(optarg, 0xfffff, &v))
				return usage();
			flow = (uint32_t)v;
			mask |= 1ull << MCM_FLOW_LABEL;
			break;
		case 5:
			if (!num(optarg, 255, &v))
				return usage();
			hop = (uint32_t)v;
			mask |= 1ull << MCM_HOP_LIMIT;
			break;
		case 6:
			if (!sel_code(optarg, &r.mtu))
				return usage();
			mask |= 1ull << MCM_MTU_SEL | 1ull << MCM_MTU;
			break;
		case 7:
			if (!sel_code(optarg, &r.rate))
				return usage();
			mask |= 1ull << MCM_RATE_SEL | 1ull << MCM_RATE;
			break;
		case 8:
			if (!sel_code(optarg, &r.pkt_life))
				return usage();
			mask |= 1ull << MCM_LIFE_SEL | 1ull << MCM_LIFE;
			break;
		default:
			return usage();
		}
	}
	if (optind >= argc)
		return usage();
	if (!strcmp(argv[optind], "join"))
		c.op = OP_JOIN;
	else if (!strcmp(argv[optind], "leave"))
		c.op = OP_LEAVE;
	else if (!strcmp(argv[optind], "get"))
		c.op = OP_GET;
	else if (!strcmp(argv[optind], "table"))
		c.op = OP_TABLE;
	else if (!strcmp(argv[optind], "mft-wait") && optind + 2 == argc)
		c.op = OP_MFT_WAIT;
	else
		return usage();
	if (c.op != OP_MFT_WAIT && optind + 1 != argc)
		return usage();
	if ((c.count && c.op != OP_JOIN) ||
	    (c.groups && c.op != OP_JOIN && c.op != OP_LEAVE)) {
		fprintf(stderr, "mc_join: -n goes with join, -N with join or"
			" leave\n");
		return 2;
	}
	if (c.count && c.groups) {
		fprintf(stderr, "mc_join: -n or -N, not both\n");
		return 2;
	}
	if (!have_leave)
		c.leave_state = state;
	if (!c.n_steps) {
		c.steps[0].leave = false;
		c.steps[0].state = state;
		c.steps[1].leave = true;
		c.steps[1].state = c.leave_state;
		c.n_steps = 2;
	}

	c.loop = ev_default_loop(0);
	rc = umad_io_open(&io, c.loop, 0, classes, sizeof(classes), true);
	if (rc < 0) {
		fprintf(stderr, "mc_join: cannot open a port: %s\n", strerror(-rc));
		return 1;
	}
	c.port_guid = umad_io_port(io)->port_guid;
	c.sa = (struct mad_addr){ .lid = umad_io_port(io)->sm_lid, .qpn = 1,
				  .qkey = SA_QKEY };
	if (!c.sa.lid && c.op != OP_MFT_WAIT) {
		fprintf(stderr, "mc_join: the port knows no SM LID\n");
		umad_io_close(io);
		return 1;
	}
	struct mad_transport tr = umad_io_transport(io);
	struct mad_engine_opts eo = { .max_wire_smps = 8,
				      .max_wire_gmps = (unsigned)c.window,
				      .timeout_ms = (unsigned)timeout,
				      .retries = (unsigned)retries };
	if (mad_engine_new(&c.engine, c.loop, &tr, &eo) < 0) {
		umad_io_close(io);
		return 1;
	}
	if (c.op == OP_TABLE) {
		struct rmpp_recv_opts ro;

		rmpp_recv_opts_default(&ro);
		ro.timeout_ms = 2000;
		if (rmpp_client_new(&c.rmpp, c.loop, c.engine, MAD_CLASS_SA, &ro) < 0)
			return 1;
	}
	if (umad_io_start(io, on_mad, &c) < 0)
		return 1;

	/* The record: our own port unless joining for another (ProxyJoin). */
	if (!proxy) {
		uint64_t be = htobe64(GID_PREFIX);

		memcpy(r.port_gid, &be, 8);
		be = htobe64(c.port_guid);
		memcpy(r.port_gid + 8, &be, 8);
	} else {
		r.proxy_join = 0x80;
		mask |= 1ull << MCM_PROXY_JOIN;
	}
	if (create)
		mask |= 1ull << MCM_QKEY | 1ull << MCM_PKEY | 1ull << MCM_SL |
			1ull << MCM_FLOW_LABEL | 1ull << MCM_TCLASS;
	if (c.op == OP_GET || c.op == OP_TABLE) {
		/* Only what was asked for: no JoinState, no own port. */
		mask &= ~(1ull << MCM_JOIN_STATE | 1ull << MCM_PORT_GID);
		bool zero = true;
		for (int i = 0; i < 16; i++)
			zero &= !r.mgid[i];
		if (zero)
			mask &= ~(1ull << MCM_MGID);
		if (proxy)
			mask |= 1ull << MCM_PORT_GID;
	}
	if (have_mask)
		mask = user_mask;
	r.qkey = htobe32(qkey);
	r.pkey = htobe16(pkey);
	r.sl_flow_hop = htobe32(sl << 28 | flow << 8 | hop);
	r.scope_state = (uint8_t)(scope << 4 | state);

	static const uint8_t methods[] = {
		[OP_JOIN] = MAD_METHOD_SET, [OP_LEAVE] = MAD_METHOD_DELETE,
		[OP_GET] = MAD_METHOD_GET, [OP_TABLE] = MAD_METHOD_GET_TABLE,
	};
	ev_timer_init(&timer, on_timer, wait, 0.);
	timer.data = &c;
	if (start_at > 0) {
		double d = start_at - now();

		if (d < 0) {
			fprintf(stderr, "mc_join: --start-at: %.3f s late\n", -d);
		} else {
			struct timespec ts = { (time_t)d,
					       (long)((d - (time_t)d) * 1e9) };

			while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
				;
		}
	}
	c.t0 = now();
	ev_timer file_timer;
	if (c.op == OP_MFT_WAIT) {
		c.mft_file = argv[optind + 1];
		ev_timer_init(&file_timer, on_file, 0., 0.);
		file_timer.data = &c;
		ev_timer_start(c.loop, &file_timer);
	} else {
		memset(&c.req, 0, sizeof(c.req));
		sa_request_hdr(&c.req, methods[c.op], SA_ATTR_MCMEMBER_RECORD, mask);
		memcpy(c.req.data, &r, sizeof(r));
		if (c.op == OP_TABLE) {
			rc = rmpp_client_query(c.rmpp, &c.req, sizeof(c.req),
					       &c.sa, on_table, &c);
		} else if (c.groups) {
			rc = 0;
			for (unsigned long i = 0; i < c.window && i < c.groups && !rc; i++)
				rc = submit_next(&c);
		} else {
			rc = submit_next(&c);
		}
		if (rc < 0) {
			fprintf(stderr, "mc_join: cannot send: %s\n", strerror(-rc));
			return 1;
		}
		/* -n/-N: a long run has no overall deadline but -T. */
		if (c.count || c.groups)
			ev_timer_set(&timer, wait, 0.);
	}
	ev_timer_start(c.loop, &timer);
	ev_run(c.loop, 0);
	umad_io_close(io);
	mad_engine_free(c.engine);
	rmpp_client_free(c.rmpp);
	free(c.checks);
	free(c.queries);
	return c.result;
}
