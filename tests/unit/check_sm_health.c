/*
 * check_sm_health.c - the daemon's health glue (sm/health/): which links
 * the isolation policy may disable (never the SM's own link, nor a
 * switch's last active link, nor one whose loss cuts the SM off from
 * more than the node behind it), the events a new model makes against
 * the previous one (each link once, from its switch end), and the event
 * file: rotation by size keeping a bounded number of old files, and a
 * write the file size limit cuts short taken back to the last whole line
 * and written later.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/topo_load.h"
#include "sm/ctl/ctl.h"
#include "sm/health/internal.h"
#include "sm/lid.h"
#include "sm/sm.h"

/* a directory of the test's own (dir_setup) */
static char dir[64];

/*
 *   H1 --[1] swa [3]===[3] swb [1]-- H2
 *             [4]===[4]
 *            [2]        [2]-- H3
 *             |
 *            [1] swc           swd [1]--[5] swb
 *            [2]-- H4
 *
 * H1 (the SM's host, the first CA) on swa[1]; swa-swb two parallel
 * links; swc hangs from swa with H4 behind it; swd has one link only.
 */
static const char net[] =
	"Hca 1 \"H1\"\n[1] \"swa\"[1]\n\n"
	"Switch 8 \"swa\"\n[1] \"H1\"[1]\n[2] \"swc\"[1]\n[3] \"swb\"[3]\n"
	"[4] \"swb\"[4]\n\n"
	"Switch 8 \"swb\"\n[1] \"H2\"[1]\n[2] \"H3\"[1]\n[3] \"swa\"[3]\n"
	"[4] \"swa\"[4]\n[5] \"swd\"[1]\n\n"
	"Switch 8 \"swc\"\n[1] \"swa\"[2]\n[2] \"H4\"[1]\n\n"
	"Switch 8 \"swd\"\n[1] \"swb\"[5]\n\n"
	"Hca 1 \"H2\"\n[1] \"swb\"[1]\n\n"
	"Hca 1 \"H3\"\n[1] \"swb\"[2]\n\n"
	"Hca 1 \"H4\"\n[1] \"swc\"[2]\n";

static void load(struct fabric *f, const char *text)
{
	char err[200], *buf = strdup(text);

	ck_assert_ptr_nonnull(buf);
	fabric_init(f);
	ck_assert_msg(topo_parse(f, "t.net", buf, strlen(buf), err,
				 sizeof(err)) == 0, "%s", err);
	free(buf);
}

/* The node whose description (the file's name) is `name`. */
static int32_t node(const struct fabric *f, const char *name)
{
	for (size_t i = 0; i < f->n_nodes; i++)
		if (!strncmp(f->nodes[i].desc, name, strlen(name)) &&
		    (f->nodes[i].desc[strlen(name)] == '\0' ||
		     f->nodes[i].desc[strlen(name)] == ' '))
			return (int32_t)i;
	ck_abort_msg("no node %s", name);
	return FAB_NONE;
}

START_TEST(isolation_refusals)
{
	struct fabric f;
	const char *why;

	load(&f, net);
	ck_assert_int_eq(f.local_node, node(&f, "H1"));
	/* the SM's own link, from either end */
	why = iso_refusal(&f, node(&f, "swa"), 1);
	ck_assert_ptr_nonnull(why);
	ck_assert_str_eq(why, "it is the SM's own link");
	ck_assert_str_eq(iso_refusal(&f, node(&f, "H1"), 1),
			 "it is the SM's own link");
	/* swd's only link */
	ck_assert_str_eq(iso_refusal(&f, node(&f, "swb"), 5),
			 "it is the last active link of the switch at its"
			 " other end");
	ck_assert_str_eq(iso_refusal(&f, node(&f, "swd"), 1),
			 "it is the switch's last active link");
	/* swc's uplink: swc and H4 would be cut off */
	ck_assert_str_eq(iso_refusal(&f, node(&f, "swa"), 2),
			 "it would cut the SM off from other nodes");
	/* a host's link: only the host goes */
	ck_assert_ptr_null(iso_refusal(&f, node(&f, "swb"), 1));
	ck_assert_ptr_null(iso_refusal(&f, node(&f, "swc"), 2));
	/* one of two parallel links: nothing is cut off */
	ck_assert_ptr_null(iso_refusal(&f, node(&f, "swa"), 3));
	ck_assert_ptr_null(iso_refusal(&f, node(&f, "swb"), 4));
	/* no link, no port */
	ck_assert_str_eq(iso_refusal(&f, node(&f, "swa"), 7),
			 "the port has no link");
	ck_assert_str_eq(iso_refusal(&f, node(&f, "swa"), 9), "no such port");
	/* once swa[4] is gone, swa[3] is what joins the two halves */
	struct fab_node *a = fabric_node(&f, node(&f, "swa"));
	struct fab_node *b = fabric_node(&f, node(&f, "swb"));
	a->ports[4].peer_node = FAB_NONE;
	b->ports[4].peer_node = FAB_NONE;
	ck_assert_str_eq(iso_refusal(&f, node(&f, "swa"), 3),
			 "it would cut the SM off from other nodes");
	fabric_free(&f);
}
END_TEST

static struct sm sm;

static void sm_setup(void)
{
	memset(&sm, 0, sizeof(sm));
	fabric_init(&sm.fabric);
	sm.state = SM_MASTER;
}

static void sm_teardown(void)
{
	sm_health_free(&sm);
	fabric_free(&sm.fabric);
}

/* The events held, as the file and `ibsmctl events` print them. */
static char *events_text(void)
{
	static char buf[8192];
	const struct he_event *e;
	uint64_t cur = 0;
	size_t n = 0;

	buf[0] = '\0';
	while ((e = he_ring_next(&sm.health->events, &cur)) &&
	       n + 400 < sizeof(buf)) {
		evfile_format(e, buf + n, sizeof(buf) - n - 1);
		n += strlen(buf + n);
		buf[n++] = '\n';
		buf[n] = '\0';
	}
	return buf;
}

START_TEST(model_changes)
{
	struct fabric next;
	bool keep[16];
	char *t, want[200];
	int32_t id;

	load(&sm.fabric, net);
	/* H4 leaves (its link with it) and one of the parallel links goes */
	ck_assert_uint_le(sm.fabric.n_nodes, 16);
	for (size_t i = 0; i < sm.fabric.n_nodes; i++)
		keep[i] = (int32_t)i != node(&sm.fabric, "H4");
	ck_assert_int_eq(fabric_copy_subset(&next, &sm.fabric, keep), 0);
	id = node(&next, "swa");
	fabric_node(&next, id)->ports[4].peer_node = FAB_NONE;
	fabric_node(&next, node(&next, "swb"))->ports[4].peer_node = FAB_NONE;

	sm_health_model(&sm, &next);
	ck_assert_ptr_nonnull(sm.health);
	t = events_text();
	/* each link once, from its switch end */
	snprintf(want, sizeof(want), "link_down 0x%016llx port 2 \"swc\" <->"
		 " 0x%016llx port 1 \"H4\"",
		 (unsigned long long)fabric_node(&sm.fabric,
						 node(&sm.fabric, "swc"))->guid,
		 (unsigned long long)fabric_node(&sm.fabric,
						 node(&sm.fabric, "H4"))->guid);
	ck_assert_msg(strstr(t, want), "%s", t);
	unsigned downs = 0;
	for (const char *p = t; (p = strstr(p, "link_down")); p++)
		downs++;
	ck_assert_uint_eq(downs, 2);
	snprintf(want, sizeof(want), "node_out 0x%016llx Ca \"H4\"",
		 (unsigned long long)fabric_node(&sm.fabric,
						 node(&sm.fabric, "H4"))->guid);
	ck_assert_msg(strstr(t, want), "%s", t);
	ck_assert_msg(!strstr(t, "link_up") && !strstr(t, "node_in"), "%s", t);
	/* the history tracks each link from the end that speaks for it: a
	 * host's link from its switch port, a link between switches from
	 * the lower GUID */
	const struct fabric *o = &sm.fabric;
	uint64_t ga = fabric_node(o, node(o, "swa"))->guid;
	uint64_t gb = fabric_node(o, node(o, "swb"))->guid;
	uint64_t lo = ga < gb ? ga : gb, hi = ga < gb ? gb : ga;
	const struct health_history *hh = &sm.health->hist;
	ck_assert_ptr_nonnull(hh_port_find(hh, fabric_node(o, node(o, "swc"))->guid, 2));
	ck_assert_ptr_null(hh_port_find(hh, fabric_node(o, node(o, "H4"))->guid, 1));
	ck_assert_ptr_nonnull(hh_port_find(hh, fabric_node(o, node(o, "swb"))->guid, 1));
	ck_assert_ptr_null(hh_port_find(hh, fabric_node(o, node(o, "H2"))->guid, 1));
	ck_assert_ptr_nonnull(hh_port_find(hh, lo, 3));
	ck_assert_ptr_null(hh_port_find(hh, hi, 3));
	ck_assert_ptr_nonnull(hh_port_find(hh, lo, 4));
	ck_assert_ptr_null(hh_port_find(hh, hi, 4));

	/* and back: the same as ups and ins */
	fabric_free(&sm.fabric);
	sm.fabric = next;
	load(&next, net);
	sm_health_model(&sm, &next);
	t = events_text();
	unsigned ups = 0;
	for (const char *p = t; (p = strstr(p, "link_up")); p++)
		ups++;
	ck_assert_uint_eq(ups, 2);
	ck_assert_msg(strstr(t, "node_in"), "%s", t);
	fabric_free(&next);
}
END_TEST

/* The LID conflicts of a LID assignment reach the identity check: the
 * round after it has a lid_conflict finding naming the port moved and
 * the one that kept the LID; a round after an assignment without
 * conflicts closes it. */
START_TEST(lid_conflicts_found)
{
	struct lid_report rep;
	const struct fab_node *h2, *h3;
	bool found = false;

	load(&sm.fabric, net);
	h2 = fabric_node(&sm.fabric, node(&sm.fabric, "H2"));
	h3 = fabric_node(&sm.fabric, node(&sm.fabric, "H3"));
	memset(&rep, 0, sizeof(rep));
	rep.fixed_dup = rep.n_dups = 1;
	rep.dups[0].lid = 7;
	rep.dups[0].moved = h3->ports[1].guid;
	rep.dups[0].kept = h2->ports[1].guid;
	sm_health_lids(&sm, &rep);
	sm_health_sweep_done(&sm);
	for (size_t i = 0; i < hf_set_count(&sm.health->findings); i++) {
		const struct hf_finding *f = hf_set_at(&sm.health->findings, i);

		if (f->kind == HF_LID_CONFLICT) {
			ck_assert_uint_eq(f->guid, h3->guid);
			ck_assert_uint_eq(f->peer_guid, h2->guid);
			found = true;
		}
	}
	ck_assert(found);
	memset(&rep, 0, sizeof(rep));
	sm_health_lids(&sm, &rep);
	sm_health_sweep_done(&sm);
	for (size_t i = 0; i < hf_set_count(&sm.health->findings); i++)
		ck_assert_int_ne(hf_set_at(&sm.health->findings, i)->kind,
				 HF_LID_CONFLICT);
}
END_TEST

/* The answer's data lines (the commands add no terminator) into a
 * file. */
static void answer_file(const struct ctl_answer *a, const char *path)
{
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(a->buf, 1, a->len, fp), a->len);
	fclose(fp);
}

/* Every line of an answer within an answer line's bound (1023 bytes). */
static void lines_bounded(const struct ctl_answer *a)
{
	const char *p = a->buf, *end = a->buf + a->len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		ck_assert_ptr_nonnull(nl);
		ck_assert_int_lt(nl - p, 1023);
		p = nl + 1;
	}
}

/*
 * 3,000 findings with hostile descriptions and texts (quotes,
 * backslashes, control and high bytes, full length): `health json` is
 * valid JSON (python3 -m json.tool, the referee) though cut to what
 * fits one answer (omitted > 0, critical ones first), every line within
 * bounds; the text form too; the events likewise.
 */
START_TEST(json_hostile_bounded)
{
	struct sm_health *h;
	struct ctl_answer a;
	struct hf_finding f;
	char msg[200], path[128], cmd[300];

	load(&sm.fabric, net);
	h = health_get(&sm);
	ck_assert_ptr_nonnull(h);
	hf_set_begin(&h->findings, HF_G_ALL);
	for (unsigned i = 0; i < 3000; i++) {
		memset(&f, 0, sizeof(f));
		f.kind = i % 7 ? HF_DUP_DESC : HF_FLAPPING;
		f.severity = i % 7 ? HF_WARNING : HF_CRITICAL;
		f.guid = 0x1000 + i;
		f.port = (uint8_t)(i % 36);
		for (unsigned k = 0; k < HF_DESC_SIZE - 1; k++)
			f.desc[k] = "\"\\\x01\xff\x7f<a>"[k % 8];
		memcpy(f.peer_desc, f.desc, sizeof(f.desc));
		f.peer_guid = 0x2000 + i;
		for (unsigned k = 0; k < HF_TEXT_SIZE - 1; k++)
			f.text[k] = "\\\"\x02\x80"[k % 4];
		ck_assert_int_ge(hf_set_report(&h->findings, &f, 1.7e9), 0);
		he_ring_add(&h->events, 1.7e9 + i, HE_FINDING_OPENED, f.guid,
			    f.port, "%s", f.text);
	}
	hf_set_end(&h->findings, 1.7e9, NULL, NULL);

	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(sm_health_ctl_report(&sm, true, &a, msg, sizeof(msg)),
			 0);
	ck_assert_str_eq(msg, "429 critical, 2571 warnings");
	ck_assert(!a.full);
	lines_bounded(&a);
	char *om = strstr(a.buf, "], \"omitted\": ");
	ck_assert_ptr_nonnull(om);
	ck_assert_int_gt(atoi(om + 14), 0);
	/* the critical ones first */
	ck_assert_ptr_nonnull(strstr(a.buf, "\"findings\": [\n{\"severity\":"
				     " \"critical\""));
	snprintf(path, sizeof(path), "%s/health.json", dir);
	answer_file(&a, path);
	snprintf(cmd, sizeof(cmd), "python3 -m json.tool %s >/dev/null", path);
	ck_assert_int_eq(system(cmd), 0);
	ctl_answer_free(&a);

	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(sm_health_ctl_report(&sm, false, &a, msg, sizeof(msg)),
			 0);
	ck_assert(!a.full);
	lines_bounded(&a);
	ck_assert_ptr_nonnull(strstr(a.buf, "429 critical, 2571 warnings\n"));
	ck_assert_ptr_nonnull(strstr(a.buf, "\n... and "));
	ctl_answer_free(&a);

	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(sm_health_ctl_events(&sm, 0, true, &a, msg,
					      sizeof(msg)), 0);
	ck_assert(!a.full);
	lines_bounded(&a);
	snprintf(path, sizeof(path), "%s/events.json", dir);
	answer_file(&a, path);
	snprintf(cmd, sizeof(cmd), "python3 -c 'import json, sys; d ="
		 " json.load(open(sys.argv[1])); e = d[\"events\"]; assert 100 < len(e)"
		 " < 400 and d[\"omitted\"] == 3000 - len(e) and e[-1][\"seq\"]"
		 " == 3000' %s", path);
	ck_assert_int_eq(system(cmd), 0);
	ctl_answer_free(&a);
}
END_TEST


static void dir_setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_sm_health.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void dir_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static long file_size(const char *name)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Lines of a file, each checked whole (a timestamp first, a newline). */
static unsigned whole_lines(const char *name)
{
	char path[128], line[512];
	unsigned n = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "r");
	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp)) {
		ck_assert_msg(line[strlen(line) - 1] == '\n', "cut: %s", line);
		ck_assert_msg(!strncmp(line, "20", 2) || line[0] == '#',
			      "not a line: %s", line);
		n++;
	}
	fclose(fp);
	return n;
}

START_TEST(evfile_rotation)
{
	struct he_ring r;
	struct evfile ef;

	ck_assert_int_eq(he_ring_init(&r, 16), 0);
	evfile_init(&ef);
	ef.max_size = 1000;
	ef.keep = 2;
	for (unsigned i = 0; i < 100; i++) {
		he_ring_add(&r, 1.7e9 + i, HE_LINK_DOWN, 0x1000 + i, 1,
			    "event %u", i);
		evfile_flush(&ef, &r, dir, 1.7e9 + i);
	}
	evfile_close(&ef);
	/* past 1000 bytes a file becomes .1; two old files at most */
	ck_assert_int_gt(file_size("ibsm-events.log.1"), 999);
	ck_assert_int_gt(file_size("ibsm-events.log.2"), 999);
	ck_assert_int_eq(file_size("ibsm-events.log.3"), -1);
	ck_assert_int_lt(file_size("ibsm-events.log"), 1000);
	unsigned cur = whole_lines("ibsm-events.log");
	unsigned one = whole_lines("ibsm-events.log.1");
	unsigned two = whole_lines("ibsm-events.log.2");
	ck_assert_uint_gt(one, 0);
	ck_assert_uint_lt(cur + one + two, 100);
	/* the newest event is the last line of the current file */
	char path[128], line[512], last[512] = "";
	snprintf(path, sizeof(path), "%s/ibsm-events.log", dir);
	FILE *fp = fopen(path, "r");
	if (fp) {
		while (fgets(line, sizeof(line), fp))
			snprintf(last, sizeof(last), "%s", line);
		fclose(fp);
	}
	if (cur)
		ck_assert_msg(strstr(last, "event 99\n"), "%s", last);
	he_ring_free(&r);
}
END_TEST

START_TEST(evfile_short_write)
{
	struct he_ring r;
	struct evfile ef;
	struct rlimit was, lim;

	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
	ck_assert_int_eq(he_ring_init(&r, 64), 0);
	evfile_init(&ef);
	/* room for a line and a half: the second write is cut short */
	he_ring_add(&r, 1.7e9, HE_NODE_IN, 0x10, 0, "a node came");
	evfile_flush(&ef, &r, dir, 1.7e9);
	long one = file_size("ibsm-events.log");
	ck_assert_int_gt(one, 10);
	lim = was;
	lim.rlim_cur = (rlim_t)(one + one / 2);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	he_ring_add(&r, 1.7e9 + 1, HE_NODE_OUT, 0x11, 0, "a node went");
	he_ring_add(&r, 1.7e9 + 2, HE_NODE_OUT, 0x12, 0, "another went");
	evfile_flush(&ef, &r, dir, 1.7e9 + 2);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &was), 0);
	/* cut back to the whole line, the file closed until the retry */
	ck_assert_int_eq(file_size("ibsm-events.log"), one);
	ck_assert_uint_eq(whole_lines("ibsm-events.log"), 1);
	ck_assert_int_eq(ef.fd, -1);
	ck_assert_int_ne(ef.last_err, 0);
	/* before the retry time nothing is written; after it, the rest */
	evfile_flush(&ef, &r, dir, 1.7e9 + 3);
	ck_assert_uint_eq(whole_lines("ibsm-events.log"), 1);
	evfile_flush(&ef, &r, dir, 1.7e9 + 3 + HEALTH_EVFILE_RETRY);
	ck_assert_uint_eq(whole_lines("ibsm-events.log"), 3);
	ck_assert_int_eq(ef.last_err, 0);
	evfile_close(&ef);
	he_ring_free(&r);
	signal(SIGXFSZ, SIG_DFL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sm_health");
	TCase *tc = tcase_create("isolation");
	int failed;

	tcase_add_test(tc, isolation_refusals);
	suite_add_tcase(s, tc);
	tc = tcase_create("model");
	tcase_add_checked_fixture(tc, sm_setup, sm_teardown);
	tcase_add_test(tc, model_changes);
	tcase_add_test(tc, lid_conflicts_found);
	suite_add_tcase(s, tc);
	tc = tcase_create("answers");
	tcase_add_checked_fixture(tc, sm_setup, sm_teardown);
	tcase_add_checked_fixture(tc, dir_setup, dir_teardown);
	tcase_add_test(tc, json_hostile_bounded);
	suite_add_tcase(s, tc);
	tc = tcase_create("evfile");
	tcase_add_checked_fixture(tc, dir_setup, dir_teardown);
	tcase_add_test(tc, evfile_rotation);
	tcase_add_test(tc, evfile_short_write);
	suite_add_tcase(s, tc);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
