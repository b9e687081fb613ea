/*
 * fuzz_sa.c - libFuzzer target for the SA request path (issue 10).
 *
 * Each input is an SA MAD from the network (a short one is also tried
 * padded to 256 bytes): it goes through sa_request_parse(), the checks
 * the agent makes (length, method, attribute, the methods each attribute
 * takes, a GetMulti's RMPP header, ComponentMask), and when it is a
 * request the model answers, through the attribute's generator on a
 * small subnet (a two-port host, parallel links, a 1x SDR link; LMC 2;
 * minhop routes), in slices with a small work budget, as the agent runs
 * it.  Every record type's generator thus sees hostile templates and
 * masks.  Checked beyond ASan/UBSan: no slice goes past its units by
 * more than one item, no request past its budget by more than one item,
 * every call makes progress, and a generator's status is one the agent
 * can answer.  The stateful attributes (ServiceRecord, InformInfo) stop
 * after parsing: their state is sm/sa/service.c's.
 *
 * MCMemberRecord requests (Set, Delete, Get, GetTable) go to
 * sa_mcmember_request() on one group table that lives across inputs
 * (small limits, so that it fills up): a PortGID whose GUID bytes are
 * zero but the last names the model's end port of that index, and the
 * requester's LID comes from the TID, so that joins and leaves of real
 * ports are reached.  Checked after each: the status is one the agent
 * can send, every group holds its own MLID, every member some JoinState,
 * each group's full-member count is right, and no group that is not
 * pre-created is left without a full member (an MLID leak).
 *
 *   clang -fsanitize=fuzzer,address,undefined -I. -Ibuild/fuzz \
 *       tests/fuzz/fuzz_sa.c build/fuzz/sm/libsm.a build/fuzz/model/libmodel.a \
 *       build/fuzz/routing/librouting.a build/fuzz/mad/libmad.a ...
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/sa_wire.h"
#include "routing/routing.h"
#include "model/fabric.h"
#include "sm/lid.h"
#include "sm/mcast/mcast.h"
#include "model/index.h"
#include "sm/sa/mcmember.h"
#include "sm/sa/sa.h"
#include "sm/topo_file.h"

#define BUDGET		20000u
#define SLICE		300u
#define MAX_ITEM	(9u * 9u + 200u)	/* 8-port switches, paths */

static const char topology[] =
	"Hca 1 \"H0001\"\n[1]\t\"sw-a\"[1]\n\n"
	"Switch 8 \"sw-a\"\n[1]\t\"H0001\"[1]\n[2]\t\"H0003\"[1]\n"
	"[3]\t\"sw-b\"[3]\n[4]\t\"sw-b\"[4]\n\n"
	"Switch 8 \"sw-b\"\n[1]\t\"H0002\"[1]\n[2]\t\"H0003\"[2]\n"
	"[3]\t\"sw-a\"[3]\n[4]\t\"sw-a\"[4]\n[5]\t\"H0004\"[1] w=1 s=1\n\n"
	"Hca 1 \"H0002\"\n[1]\t\"sw-b\"[1]\n\n"
	"Hca 2 \"H0003\"\n[1]\t\"sw-a\"[2]\n[2]\t\"sw-b\"[2]\n\n"
	"Hca 1 \"H0004\"\n[1]\t\"sw-b\"[5] w=1 s=1\n";

static struct fabric model;
static struct routing_result routes;
static struct sa_view view;

static void model_load(void)
{
	char path[] = "/tmp/fuzz_sa.XXXXXX", err[256];
	struct lid_policy pol = { .lmc = 2 };
	int fd = mkstemp(path);
	FILE *fp;

	if (fd < 0 || !(fp = fdopen(fd, "w")))
		abort();
	fputs(topology, fp);
	fclose(fp);
	fabric_init(&model);
	if (topo_load(&model, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_sa: %s\n", err);
		abort();
	}
	unlink(path);
	if (lid_assign(&model, NULL, &pol, NULL) < 0 ||
	    routing_run("minhop", &model, &routes, err, sizeof(err)) < 0)
		abort();
	view.f = &model;
	view.routes = &routes;
	view.subnet_prefix = 0xfe80000000000000ull;
	view.subnet_timeout = 18;
	view.sm_port_guid = model.local_port_guid;
	view.sm_lid = model.nodes[model.local_node].ports[model.local_port].lid;
	view.sm_priority = 1;
	view.sm_state = 3;
	view.gen = model.gen;
}

static struct mc_table *groups;
static uint64_t end_guid[64];
static unsigned n_end;

/* The group table's invariants (see the top of the file). */
static void groups_check(void)
{
	size_t n = mc_table_count(groups), used = mc_table_mlids_used(groups);

	if (used != n)
		abort();
	for (size_t i = 0; i < n; i++) {
		struct mc_group *g = mc_table_at(groups, i);
		size_t full = 0;

		if (mc_find_mlid(groups, g->mlid) != g || mc_find(groups, g->mgid) != g)
			abort();
		for (size_t k = 0; k < g->n_members; k++) {
			if (!(g->members[k].join_state & MC_JOIN_ALL))
				abort();
			full += (g->members[k].join_state & MC_JOIN_COUNTS) != 0;
		}
		if (full != g->n_full || (!g->precreated && !full))
			abort();
	}
}

static void mcmember(const uint8_t *mad, struct sa_query *q)
{
	const struct sa_mad *m = (const struct sa_mad *)mad;
	uint8_t tmpl[SA_DATA_SIZE];
	struct sa_mcmember_record *r = (struct sa_mcmember_record *)tmpl;
	struct mcm_outcome o;
	struct sa_table t;
	struct sa_work w;
	uint64_t tid = be64toh(m->hdr.tid);
	static const uint8_t zero[7];
	int rc;

	if (!groups) {
		struct mc_limits lim = { .max_groups = 16,
					 .members_per_group = 4,
					 .groups_per_port = 8 };

		groups = mc_table_new(&lim);
		if (!groups)
			abort();
		mc_table_set_mlid_top(groups, MC_MLID_MIN + 11);
		for (size_t i = 0; i < model.n_nodes && n_end < 64; i++)
			for (unsigned pn = 0; pn <= model.nodes[i].num_ports; pn++)
				if (fabric_is_endport(&model.nodes[i], pn) && n_end < 64)
					end_guid[n_end++] = model.nodes[i].ports[pn].guid;
	}
	memcpy(tmpl, q->tmpl, sizeof(tmpl));
	if (!memcmp(r->port_gid + 8, zero, 7) && n_end) {
		uint64_t g = htobe64(end_guid[r->port_gid[15] % n_end]);

		memcpy(r->port_gid + 8, &g, 8);
	}
	q->tmpl = tmpl;
	q->requester_lid = (uint16_t)(1 + tid % model.max_lid);
	memset(&w, 0, sizeof(w));
	w.budget = BUDGET;
	q->work = &w;
	memset(&t, 0, sizeof(t));
	t.rec_size = sizeof(*r);
	rc = sa_mcmember_request(groups, &view, q, &o, &t);
	if (rc > 0 || (rc < 0 && rc != -ENOMEM && -rc > 0xffff))
		abort();
	if (rc == 0 && (q->method == MAD_METHOD_SET ||
			q->method == MAD_METHOD_DELETE) && t.count != 1)
		abort();		/* a Set/Delete answers its record */
	if (w.used > BUDGET + MAX_ITEM)
		abort();
	free(t.buf);
	groups_check();
}

static void one(const uint8_t *mad, size_t len)
{
	const struct sa_attr *a;
	struct sa_query q;
	struct sa_table t;
	struct sa_work w;
	unsigned calls = 0;
	int rc;

	rc = sa_request_parse(mad, len, 1, &q, &a);
	if (rc != 0) {
		/* -1 only for a MAD of the wrong size; a status otherwise */
		if ((rc < 0) != (len != MAD_SIZE) || (rc > 0 && rc > 0xffff))
			abort();
		return;
	}
	if (a && a->attr_id == SA_ATTR_MCMEMBER_RECORD) {
		mcmember(mad, &q);
		return;
	}
	if (!a || !a->gen)
		return;
	memset(&w, 0, sizeof(w));
	w.budget = BUDGET;
	q.work = &w;
	memset(&t, 0, sizeof(t));
	t.rec_size = a->rec_size;
	do {
		uint64_t before = w.used;

		w.slice_end = w.used + SLICE;
		rc = a->gen(&view, &q, &t);
		if (w.used - before > SLICE + MAX_ITEM)
			abort();		/* a slice ran over */
		if (rc == SA_MORE && w.used == before)
			abort();		/* no progress */
		if (++calls > BUDGET + 2)
			abort();
	} while (rc == SA_MORE);
	if (w.used > BUDGET + MAX_ITEM)
		abort();
	if (rc > 0 || (rc < 0 && rc != -ENOMEM && -rc > 0xffff))
		abort();		/* not a status the agent can send */
	free(t.buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t mad[MAD_SIZE];

	if (!model.n_nodes)
		model_load();
	if (size > 4 * MAD_SIZE)
		return 0;
	one(data, size);
	if (size < MAD_SIZE) {
		memset(mad, 0, sizeof(mad));
		memcpy(mad, data, size);
		one(mad, sizeof(mad));
	}
	return 0;
}
