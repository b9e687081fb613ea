/*
 * check_sa_jobs.c - --sa-max-jobs and --sa-jobs-per-port as the SA agent
 * applies them (sm/sa/sa.c): a request whose answer needs more than one
 * slice becomes a job; one that finds no job slot (for its port, or at
 * all) is answered BUSY at once, before any work.
 *
 * A struct sm as the daemon builds it (the fixture of check_sa_agent.c):
 * the fake transport under its engine, fat2-128 with minhop routes.  An
 * open PathRecord GetTable (every pair of ports) on it takes several
 * slices, so it stays a job until the loop runs.  A job whose model a
 * sweep replaced starts over on the new one (at most twice).
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa_wire.h"
#include "routing/routing.h"
#include "model/fabric.h"
#include "config/limits.h"
#include "sm/lid.h"
#include "sm/sa/sa.h"
#include "sm/sm.h"
#include "sm/topo_file.h"
#include "tests/unit/agent_fixture.h"

/* argv: limit options as on ibsm's command line (NULL-terminated). */
static void fx_init(struct agent_fx *x, const char *const *opts)
{
	char err[256];

	agent_fx_init(x, "fat2-128.net", true, 20, 1);
	for (size_t i = 0; opts && opts[i]; i += 2) {
		size_t k;

		for (k = 0; k < n_limit_opts; k++)
			if (!strcmp(limit_opts[k].name, opts[i]))
				break;
		ck_assert_uint_lt(k, n_limit_opts);
		ck_assert_msg(limit_parse(&x->sm.cfg, k, opts[i + 1], err,
					  sizeof(err)) == 0, "%s", err);
	}
	agent_fx_start(x);
}

#define fx_free	agent_fx_free
#define fx_run	agent_fx_run

/* An open PathRecord GetTable from `lid`, handed to the engine. */
static void open_paths(struct agent_fx *x, uint16_t lid)
{
	struct mad_addr from = { .lid = lid, .qpn = 1, .qkey = 0x80010000u };
	struct sa_mad m;

	memset(&m, 0, sizeof(m));
	sa_request_hdr(&m, MAD_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0);
	m.hdr.tid = htobe64(++x->tid);
	mad_engine_recv(x->sm.engine, &m, sizeof(m), &from, 0);
}

/* Answers sent so far to `lid` with status BUSY. */
static unsigned busy_to(const struct agent_fx *x, uint16_t lid)
{
	unsigned n = 0;

	for (size_t i = 0; i < x->fk.n_sent; i++) {
		const struct sa_mad *m = (const void *)x->fk.sent[i].mad;

		n += x->fk.sent[i].addr.lid == lid &&
		     (be16toh(m->hdr.status) & 0x7fff) == MAD_STATUS_BUSY;
	}
	return n;
}

/* Defaults (a zero config): 2 jobs per port, the third request BUSY. */
START_TEST(test_default_two_per_port)
{
	struct agent_fx x;

	fx_init(&x, NULL);
	open_paths(&x, x.ca_lid[0]);
	ck_assert_uint_eq(x.fk.n_sent, 0);	/* a job: no answer yet */
	open_paths(&x, x.ca_lid[0]);
	ck_assert_uint_eq(x.fk.n_sent, 0);
	open_paths(&x, x.ca_lid[0]);
	ck_assert_uint_eq(x.fk.n_sent, 1);
	ck_assert_uint_eq(busy_to(&x, x.ca_lid[0]), 1);
	fx_free(&x);
}
END_TEST

/* --sa-jobs-per-port 1: the second request of a port is BUSY, another
 * port still gets a job; --sa-max-jobs 2: a third port is BUSY.  Once the
 * jobs are answered, slots are free again. */
START_TEST(test_options_applied)
{
	static const char *const opts[] = { "sa-jobs-per-port", "1",
					    "sa-max-jobs", "2", NULL };
	struct agent_fx x;
	size_t before;

	fx_init(&x, opts);
	open_paths(&x, x.ca_lid[0]);
	ck_assert_uint_eq(x.fk.n_sent, 0);
	open_paths(&x, x.ca_lid[0]);
	ck_assert_uint_eq(busy_to(&x, x.ca_lid[0]), 1);
	open_paths(&x, x.ca_lid[1]);
	ck_assert_uint_eq(busy_to(&x, x.ca_lid[1]), 0);
	open_paths(&x, x.ca_lid[2]);
	ck_assert_uint_eq(busy_to(&x, x.ca_lid[2]), 1);
	ck_assert_uint_eq(x.fk.n_sent, 2);
	/* The loop runs the two jobs to their answers (first segments). */
	fx_run(&x, 1.0);
	ck_assert_uint_gt(x.fk.n_sent, 2);
	ck_assert_uint_eq(busy_to(&x, x.ca_lid[0]), 1);
	ck_assert_uint_eq(busy_to(&x, x.ca_lid[1]), 0);
	/* Free again: port 2 gets a job now. */
	before = x.fk.n_sent;
	open_paths(&x, x.ca_lid[2]);
	ck_assert_uint_eq(busy_to(&x, x.ca_lid[2]), 1);
	ck_assert_uint_eq(x.fk.n_sent, before);
	fx_free(&x);
}
END_TEST

/* The answer to `lid`: the MAD status of the first MAD sent to it, or -1. */
static int status_to(const struct agent_fx *x, uint16_t lid)
{
	for (size_t i = 0; i < x->fk.n_sent; i++) {
		const struct sa_mad *m = (const void *)x->fk.sent[i].mad;

		if (x->fk.sent[i].addr.lid == lid)
			return be16toh(m->hdr.status) & 0x7fff;
	}
	return -1;
}

/*
 * A sweep publishes a new model while a job is being answered: the job
 * starts over on the new model and is answered from it (records, not
 * BUSY: before, every such job was answered BUSY, which clients like
 * saquery do not retry).  A job whose model keeps changing is BUSY after
 * two restarts.
 */
START_TEST(test_new_model_restarts)
{
	struct agent_fx x;

	fx_init(&x, NULL);
	open_paths(&x, x.ca_lid[0]);
	ck_assert_uint_eq(x.fk.n_sent, 0);	/* a job */
	x.sm.fabric.gen++;			/* as a sweep publishing anew */
	fx_run(&x, 1.0);
	ck_assert_int_eq(status_to(&x, x.ca_lid[0]), 0);
	ck_assert_uint_eq(busy_to(&x, x.ca_lid[0]), 0);

	/* A model that changes before every slice: BUSY in the end. */
	open_paths(&x, x.ca_lid[1]);
	ck_assert_int_eq(status_to(&x, x.ca_lid[1]), -1);
	for (int i = 0; i < 10 && status_to(&x, x.ca_lid[1]) < 0; i++) {
		x.sm.fabric.gen++;
		ev_run(x.sm.loop, EVRUN_NOWAIT);
	}
	ck_assert_int_eq(status_to(&x, x.ca_lid[1]), MAD_STATUS_BUSY);
	fx_free(&x);
}
END_TEST

static Suite *sa_jobs_suite(void)
{
	Suite *s = suite_create("sa_jobs");
	TCase *tc = tcase_create("sa_jobs");

	tcase_add_test(tc, test_default_two_per_port);
	tcase_add_test(tc, test_options_applied);
	tcase_add_test(tc, test_new_model_restarts);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sa_jobs_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
