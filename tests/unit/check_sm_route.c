/*
 * check_sm_route.c - the daemon's routing options (sm/route.c): OpenSM's
 * GUID files (root_guid_file, cn_guid_file) with FILE:LINE errors, the
 * layers allowed by max_op_vls, and the ordering files
 * (guid_routing_order_file, port_search_ordering_file) read for a
 * routing: bad lines warned about and skipped, the rest obeyed.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/sm_config.h"
#include "sm/route.h"

static char path[64];

static void write_file(const char *text)
{
	int fd;
	FILE *fp;

	snprintf(path, sizeof(path), "/tmp/check_sm_route.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	fp = fdopen(fd, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	fclose(fp);
}

static int load(const char *text, uint64_t **g, char *err, size_t len)
{
	int n;

	write_file(text);
	n = sm_guid_file_load(path, g, err, len);
	unlink(path);
	return n;
}

START_TEST(guid_file_good)
{
	uint64_t *g;
	char err[300];
	int n = load("# roots of the fat tree\n"
		     "0x0002c90300001234\n"
		     "\n"
		     "   0002c90300005678   # without 0x, a comment after\n"
		     "\t0XABCDEF\r\n", &g, err, sizeof(err));

	ck_assert_int_eq(n, 3);
	ck_assert_uint_eq(g[0], 0x0002c90300001234ull);
	ck_assert_uint_eq(g[1], 0x0002c90300005678ull);
	ck_assert_uint_eq(g[2], 0xabcdefull);
	free(g);
	ck_assert_int_eq(load("# nothing\n\n", &g, err, sizeof(err)), 0);
	ck_assert_ptr_null(g);
}
END_TEST

START_TEST(guid_file_bad)
{
	uint64_t *g;
	char err[300], want[128];

	ck_assert_int_eq(load("0x1\n0xZZ\n", &g, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(g);
	snprintf(want, sizeof(want), "%s:2: '0xZZ': expected a GUID", path);
	ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
	ck_assert_int_eq(load("# x\n0x1 0x2\n", &g, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s:2: expected one GUID per line", path);
	ck_assert_str_eq(err, want);
	ck_assert_int_eq(load("0\n", &g, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":1: expected a GUID, not 0"));
	ck_assert_int_eq(load("-1\n", &g, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(load("0x10000000000000000\n", &g, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":1: "));
	ck_assert_int_eq(sm_guid_file_load("/nonexistent/roots", &g, err,
					   sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/roots: cannot read"));
}
END_TEST

START_TEST(layers)
{
	ck_assert_uint_eq(sm_max_layers(1), 1);
	ck_assert_uint_eq(sm_max_layers(2), 2);
	ck_assert_uint_eq(sm_max_layers(3), 4);
	ck_assert_uint_eq(sm_max_layers(4), 8);
	ck_assert_uint_eq(sm_max_layers(5), 15);
}
END_TEST

/* A file named `name` in dir holding `text`; its path into out. */
static void put(const char *dir, const char *name, const char *text,
		char *out, size_t len)
{
	FILE *fp;

	snprintf(out, len, "%s/%s", dir, name);
	fp = fopen(out, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	fclose(fp);
}

/*
 * The port of the LFT of switch `guid` in an ibroute-format dump for the
 * destination whose port GUID is `pguid`, or -1.
 */
static int dumped_port(const char *dump, uint64_t guid, uint64_t pguid)
{
	char head[64], dest[64];
	const char *at, *end, *line;
	unsigned port;

	snprintf(head, sizeof(head), "guid 0x%016llx", (unsigned long long)guid);
	snprintf(dest, sizeof(dest), "portguid 0x%016llx:",
		 (unsigned long long)pguid);
	at = strstr(dump, head);
	if (!at)
		return -1;
	end = strstr(at, "\n\n");
	line = strstr(at, dest);
	if (!line || (end && line > end))
		return -1;
	while (line > at && line[-1] != '\n')
		line--;
	return sscanf(line, "%*x %u", &port) == 1 ? (int)port : -1;
}

/*
 * ibsm --route-only on the fabric of tests/fabric/test_routing_order.sh
 * (ibsim's GUIDs: leaf-1 0x200000; H0005 and H0007's ports 0x100009 and
 * 0x10000d): H0007 then H0005 routed first, leaf-1 searching port 6
 * before 5; the bad lines of both files warned about with FILE:LINE.
 */
START_TEST(order_files_offline)
{
	static const char net[] =
		"Switch 8 \"leaf-1\"\n[1] \"H0001\"[1]\n[2] \"H0002\"[1]\n"
		"[3] \"H0003\"[1]\n[4] \"H0004\"[1]\n[5] \"spine-1\"[1]\n"
		"[6] \"spine-2\"[1]\n\n"
		"Switch 8 \"leaf-2\"\n[1] \"H0005\"[1]\n[2] \"H0006\"[1]\n"
		"[3] \"H0007\"[1]\n[4] \"H0008\"[1]\n[5] \"spine-1\"[2]\n"
		"[6] \"spine-2\"[2]\n\n"
		"Switch 8 \"spine-1\"\n[1] \"leaf-1\"[5]\n[2] \"leaf-2\"[5]\n\n"
		"Switch 8 \"spine-2\"\n[1] \"leaf-1\"[6]\n[2] \"leaf-2\"[6]\n\n"
		"Hca 1 \"H0001\"\n[1] \"leaf-1\"[1]\n\nHca 1 \"H0002\"\n"
		"[1] \"leaf-1\"[2]\n\nHca 1 \"H0003\"\n[1] \"leaf-1\"[3]\n\n"
		"Hca 1 \"H0004\"\n[1] \"leaf-1\"[4]\n\nHca 1 \"H0005\"\n"
		"[1] \"leaf-2\"[1]\n\nHca 1 \"H0006\"\n[1] \"leaf-2\"[2]\n\n"
		"Hca 1 \"H0007\"\n[1] \"leaf-2\"[3]\n\nHca 1 \"H0008\"\n"
		"[1] \"leaf-2\"[4]\n";
	char dir[] = "/tmp/check_sm_route.XXXXXX", netf[64], order[64],
	     ports[64], *out = NULL, *errs = NULL, want[160];
	size_t olen = 0, elen = 0;
	struct sm_config cfg;
	const char *const engines[] = { "minhop", "updn", "dfsssp" };

	ck_assert_ptr_nonnull(mkdtemp(dir));
	put(dir, "fabric.net", net, netf, sizeof(netf));
	put(dir, "order", "0x10000d\nbogus\n0x100009 # H0005\n", order,
	    sizeof(order));
	put(dir, "ports", "0x200000 6 5\n0x200000 5\n0x200004 1\n", ports,
	    sizeof(ports));
	for (size_t i = 0; i < 3; i++) {
		FILE *o = open_memstream(&out, &olen);
		FILE *e = open_memstream(&errs, &elen);

		memset(&cfg, 0, sizeof(cfg));
		cfg.routing_engine = engines[i];
		cfg.dump_lfts = true;
		cfg.max_op_vls = 1;
		cfg.guid_routing_order_file = order;
		cfg.port_search_ordering_file = ports;
		ck_assert_int_eq(sm_route_offline(netf, &cfg, false, o, e), 0);
		fclose(o);
		fclose(e);
		ck_assert_msg(dumped_port(out, 0x200000, 0x10000d) == 6 &&
			      dumped_port(out, 0x200000, 0x100009) == 5,
			      "%s: H0007 -> %d, H0005 -> %d", engines[i],
			      dumped_port(out, 0x200000, 0x10000d),
			      dumped_port(out, 0x200000, 0x100009));
		snprintf(want, sizeof(want), "%s:2: 'bogus': expected a port "
			 "GUID", order);
		ck_assert_msg(strstr(errs, want), "%s", errs);
		snprintf(want, sizeof(want), "%s:2: switch 0x0000000000200000 "
			 "is ordered already on line 1", ports);
		ck_assert_msg(strstr(errs, want), "%s", errs);
		snprintf(want, sizeof(want), "%s:3: 0x0000000000200004 is no "
			 "switch", ports);
		ck_assert_msg(strstr(errs, want), "%s", errs);
		free(out);
		free(errs);
	}
	/* the same checks at start, syntax only: one bad line */
	ck_assert_uint_eq(sm_order_file_check("guid_routing_order_file",
					      order), 1);
	ck_assert_uint_eq(sm_order_file_check("port_search_ordering_file",
					      ports), 0);
	unlink(netf);
	ck_assert_uint_eq(sm_order_file_check("port_search_ordering_file",
					      netf), 1);
	unlink(order);
	unlink(ports);
	rmdir(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sm_route");
	TCase *tc = tcase_create("route");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, guid_file_good);
	tcase_add_test(tc, guid_file_bad);
	tcase_add_test(tc, layers);
	tcase_add_test(tc, order_files_offline);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
