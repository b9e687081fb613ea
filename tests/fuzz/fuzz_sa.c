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
 *   clang -fsanitize=fuzzer,address,undefined -I. -Ibuild/fuzz \
 *       tests/fuzz/fuzz_sa.c build/fuzz/sm/libsm.a \
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
#include "sm/fabric.h"
#include "sm/lid.h"
#include "sm/sa/sa.h"
#include "sm/topo_load.h"

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
