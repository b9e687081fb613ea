/*
 * check_dumps.c - NodeDescriptions from the network in ibsm's files.
 *
 * A NodeDescription is 64 bytes any node chooses.  opensm-subnet.lst,
 * opensm-lfts.dump and the --dump-fabric topology must print it so that
 * it cannot start a line of its own (newline, carriage return) and so
 * that ibsm's topology loader reads back what topo_dump wrote, quotes and
 * backslashes included.  Also: dumps that did not change are not written.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/wire.h"
#include "routing/routing.h"
#include "sm/dumps.h"
#include "model/fabric.h"
#include "sm/topo_file.h"

/* Hostile descriptions: 64 bytes each, as they come off the wire. */
static const char hostile[][64] = {
	"evil\nSwitch\t36 \"S-0000000000000bad\"\t\t# \"injected\"",
	"quote\" enhanced port 0 lid 9 lmc 0 \"more",
	"back\\slash\\\" 1xSDR",
	"nul\0hidden after the nul",
	"\xff\xfe high bytes \x80\x7f del\r\x1b[31m",
	"# \"[1]\t\"H-0000000000000bad\"[1]",
};
#define N_HOSTILE (sizeof(hostile) / sizeof(hostile[0]))

static void set_port(struct fab_node *n, unsigned pn, uint16_t lid)
{
	struct fab_port *p = &n->ports[pn];

	p->valid = true;
	p->lid = lid;
	p->pi.lid = htobe16(lid);
	p->pi.local_port = (uint8_t)pn;
	p->pi.link_width_active = 2;
	p->pi.speed_active_enabled = 1u << 4 | 1;
	pi_set_port_state(&p->pi, PORT_STATE_ACTIVE);
	pi_set_phys_state(&p->pi, PHYS_STATE_LINKUP);
}

/* One switch (desc hostile[0]) with a CA per other hostile description. */
static void build(struct fabric *f)
{
	int32_t sw, ca;
	uint16_t lid = 1;

	fabric_init(f);
	sw = fabric_add_node(f, 0x0002c90000001000ull, NODE_TYPE_SWITCH,
			     (uint8_t)N_HOSTILE);
	ck_assert_int_ge(sw, 0);
	memcpy(fabric_node(f, sw)->desc, hostile[0], 64);
	fabric_node(f, sw)->desc[64] = 0;
	fabric_node(f, sw)->ports[0].guid = 0x0002c90000001000ull;
	set_port(fabric_node(f, sw), 0, lid++);
	for (unsigned i = 1; i < N_HOSTILE; i++) {
		uint64_t g = 0x0002c90000002000ull + 0x10 * i;

		ca = fabric_add_node(f, g, NODE_TYPE_CA, 1);
		ck_assert_int_ge(ca, 0);
		struct fab_node *n = fabric_node(f, ca);
		memcpy(n->desc, hostile[i], 64);
		n->desc[64] = 0;
		n->ports[1].guid = g + 1;
		set_port(n, 1, lid++);
		set_port(fabric_node(f, sw), i, 0);
		ck_assert_int_eq(fabric_link(f, sw, (uint8_t)i, ca, 1), 0);
		if (i == 1) {
			f->local_node = ca;
			f->local_port = 1;
			f->local_port_guid = g + 1;
		}
	}
	f->max_lid = (uint16_t)(lid - 1);
}

/* Every line of `buf` starts with `prefix` (or is empty when allowed). */
static unsigned lines_not_starting(const char *buf, const char *const *prefixes,
				   unsigned np)
{
	unsigned bad = 0;

	for (const char *l = buf; *l; ) {
		const char *nl = strchr(l, '\n');
		bool ok = false;

		for (unsigned i = 0; i < np && !ok; i++)
			ok = !strncmp(l, prefixes[i], strlen(prefixes[i]));
		if (!ok) {
			fprintf(stderr, "unexpected line: %.*s\n",
				(int)(nl ? nl - l : (long)strlen(l)), l);
			bad++;
		}
		if (!nl)
			break;
		l = nl + 1;
	}
	return bad;
}

static char *dump_to_string(int (*fn)(const struct fabric *, FILE *),
			    const struct fabric *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(fn(f, fp), 0);
	fclose(fp);
	return buf;
}

START_TEST(test_desc_clean)
{
	char out[TOPO_DESC_SIZE], raw[65];

	ck_assert_str_eq(topo_desc_clean("a\nb\r\tc", out), "a b  c");
	ck_assert_str_eq(topo_desc_clean("q\"b\\", out), "q\"b\\");
	ck_assert_str_eq(topo_desc_clean("\xff\x80z\x7f", out), "  z ");
	memset(raw, 'x', 64);
	raw[64] = 0;
	ck_assert_uint_eq(strlen(topo_desc_clean(raw, out)), 64);
}
END_TEST

START_TEST(test_subnet_lst_hostile)
{
	struct fabric f;
	static const char *const pre[] = { "{ " };

	build(&f);
	char *buf = dump_to_string(dump_subnet_lst, &f);
	unsigned lines = 0;
	for (const char *p = buf; (p = strchr(p, '\n')); p++)
		lines++;
	/* One line per linked port, both directions. */
	ck_assert_uint_eq(lines, 2 * (N_HOSTILE - 1));
	ck_assert_uint_eq(lines_not_starting(buf, pre, 1), 0);
	ck_assert_ptr_null(strchr(buf, '\r'));
	ck_assert_ptr_null(strstr(buf, "hidden"));
	ck_assert_ptr_nonnull(strstr(buf, "{back\\slash\\\" 1xSDR}"));
	free(buf);
	fabric_free(&f);
}
END_TEST

START_TEST(test_lfts_dump_hostile)
{
	struct fabric f;
	struct routing_result r;
	char err[256];

	build(&f);
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(routing_run("minhop", &f, &r, err, sizeof(err)), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	ck_assert_int_eq(dump_lfts(&f, &r, fp), 0);
	fclose(fp);
	/* A switch header, its LID lines, "N lids dumped": nothing else. */
	unsigned bad = 0;
	for (const char *l = buf; *l; ) {
		const char *nl = strchr(l, '\n');
		if (strncmp(l, "Unicast lids", 12) && strncmp(l, "0x", 2) &&
		    !strstr(l, "lids dumped"))
			bad++;
		if (!nl)
			break;
		l = nl + 1;
	}
	ck_assert_uint_eq(bad, 0);
	ck_assert_ptr_null(strchr(buf, '\r'));
	free(buf);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* A full disk is reported as such (ENOSPC), not as an I/O error: the
 * dumps into /dev/full, unbuffered so that every write meets it. */
START_TEST(test_dump_full_disk)
{
	struct fabric f;
	struct routing_result r;
	char err[256];
	FILE *fp;

	build(&f);
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(routing_run("minhop", &f, &r, err, sizeof(err)), 0);
	fp = fopen("/dev/full", "w");
	ck_assert_ptr_nonnull(fp);
	setvbuf(fp, NULL, _IONBF, 0);
	ck_assert_int_eq(dump_subnet_lst(&f, fp), -ENOSPC);
	clearerr(fp);
	ck_assert_int_eq(dump_lfts(&f, &r, fp), -ENOSPC);
	clearerr(fp);
	ck_assert_int_eq(topo_dump(&f, fp), -ENOSPC);
	fclose(fp);
	routing_result_free(&r);
	fabric_free(&f);
}
END_TEST

/* topo_dump then topo_load: the same nodes, links and (cleaned)
 * descriptions, and no node the descriptions tried to inject. */
START_TEST(test_topo_round_trip)
{
	struct fabric f, g;
	char path[] = "/tmp/check_dumps.XXXXXX", err[256];
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	build(&f);
	ck_assert_int_eq(topo_dump_file(&f, path), 0);
	fabric_init(&g);
	int rc = topo_load(&g, path, err, sizeof(err));
	if (rc < 0)
		ck_abort_msg("topo_load: %s", err);
	ck_assert_uint_eq(g.n_nodes, f.n_nodes);
	for (size_t i = 0; i < f.n_nodes; i++) {
		const struct fab_node *a = &f.nodes[i];
		int32_t j = fabric_find(&g, a->guid);
		char want[TOPO_DESC_SIZE];

		ck_assert_int_ne(j, FAB_NONE);
		const struct fab_node *b = fabric_node(&g, j);
		ck_assert_uint_eq(b->type, a->type);
		ck_assert_str_eq(b->desc, topo_desc_clean(a->desc, want));
		for (unsigned pn = 1; pn <= a->num_ports; pn++) {
			if (a->ports[pn].peer_node == FAB_NONE)
				continue;
			ck_assert_int_ne(b->ports[pn].peer_node, FAB_NONE);
			ck_assert_uint_eq(fabric_node(&g, b->ports[pn].peer_node)->guid,
					  fabric_node(&f, a->ports[pn].peer_node)->guid);
		}
	}
	ck_assert_int_eq(fabric_find(&g, 0xbad), FAB_NONE);
	fabric_free(&g);
	fabric_free(&f);
	unlink(path);
}
END_TEST

static int write_str(FILE *fp, const void *arg)
{
	return fputs(arg, fp) < 0 ? -5 : 0;
}

START_TEST(test_write_if_changed)
{
	char path[] = "/tmp/check_dumps.XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(write_file_if_changed(path, write_str, "head 1\nbody\n", 1), 0);
	/* Same body, another header line: left alone. */
	ck_assert_int_eq(write_file_if_changed(path, write_str, "head 2\nbody\n", 1), 1);
	ck_assert_int_eq(write_file_if_changed(path, write_str, "head 2\nbody 2\n", 1), 0);
	ck_assert_int_eq(write_file_if_changed(path, write_str, "head 2\nbody 2\n", 0), 1);
	unlink(path);
	/* No file yet: written. */
	ck_assert_int_eq(write_file_if_changed(path, write_str, "x\n", 0), 0);
	/* One a prefix of the other, either way: changed. */
	ck_assert_int_eq(write_file_if_changed(path, write_str, "x\ny\n", 0), 0);
	ck_assert_int_eq(write_file_if_changed(path, write_str, "x\n", 0), 0);
	ck_assert_int_eq(write_file_if_changed(path, write_str, "x\n", 0), 1);
	unlink(path);
}
END_TEST

static int write_fail(FILE *fp, const void *arg)
{
	(void)arg;
	fputs("half", fp);
	return -EIO;
}

/* Content over several compare blocks, changed in its last byte or not;
 * a failed write leaves the file and no temp file. */
START_TEST(test_write_if_changed_big)
{
	char dir[] = "/tmp/check_dumps_big.XXXXXX", path[64];
	size_t n = 3 * 65536 + 17;
	char *big = malloc(n + 1);
	struct dirent *de;
	unsigned files = 0;
	DIR *d;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	ck_assert_ptr_nonnull(big);
	for (size_t i = 0; i < n; i++)
		big[i] = i % 61 == 60 ? '\n' : (char)('a' + i % 26);
	big[n] = '\0';
	ck_assert_int_eq(write_file_if_changed(path, write_str, big, 0), 0);
	ck_assert_int_eq(write_file_if_changed(path, write_str, big, 0), 1);
	big[n - 1] = 'Z';
	ck_assert_int_eq(write_file_if_changed(path, write_str, big, 0), 0);
	ck_assert_int_eq(write_file_if_changed(path, write_str, big, 0), 1);
	ck_assert_int_eq(write_file_if_changed(path, write_fail, NULL, 0), -EIO);
	ck_assert_int_eq(write_file_if_changed(path, write_str, big, 0), 1);
	d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			files++;
	closedir(d);
	ck_assert_uint_eq(files, 1);
	unlink(path);
	rmdir(dir);
	free(big);
}
END_TEST

static Suite *dumps_suite(void)
{
	Suite *s = suite_create("dumps");
	TCase *tc = tcase_create("dumps");

	tcase_add_test(tc, test_desc_clean);
	tcase_add_test(tc, test_subnet_lst_hostile);
	tcase_add_test(tc, test_lfts_dump_hostile);
	tcase_add_test(tc, test_dump_full_disk);
	tcase_add_test(tc, test_topo_round_trip);
	tcase_add_test(tc, test_write_if_changed);
	tcase_add_test(tc, test_write_if_changed_big);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(dumps_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
