/*
 * check_conf_read.c - config/read.c, the opensm.conf reader by OpenSM's
 * rules: comments from '#' anywhere, lines of any length, any byte in a
 * value (';' too), quotes, later lines win; the two strictness levels
 * (errors for keys ibsm implements, warnings and defaults for the
 * others, tests/config/warn/ each with its exact warning); values
 * compared as values (0x07 and 7, "(null)" and unset, GUIDs); Mellanox
 * OpenSM 5.x keys and engine names; and the key table of ibsm.conf(5),
 * which must be what cfg_man_table() writes.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/conf.h"
#include "config/fileutil.h"

static size_t key_index(const char *name)
{
	size_t i;

	ck_assert_msg(cfg_key_find(name, &i) != NULL, "no key %s", name);
	return i;
}

static const char *get(const struct cfg *c, const char *name)
{
	return cfg_get(c, key_index(name));
}

static int read_str(struct cfg *c, const char *text)
{
	cfg_init(c);
	return cfg_read_text(c, "t.conf", text, strlen(text));
}

START_TEST(trailing_comment)
{
	struct cfg c;

	ck_assert_int_eq(read_str(&c, "sm_priority 13   # primary\n"
				  "lmc 1# no blank before it\n"
				  "#sweep_interval 99\n"
				  "   # indented comment\n"), 0);
	ck_assert_str_eq(get(&c, "sm_priority"), "13");
	ck_assert_str_eq(get(&c, "lmc"), "1");
	ck_assert_str_eq(get(&c, "sweep_interval"), "10");
	ck_assert_uint_eq(c.warnings.n + c.unknown.n, 0);
	cfg_free(&c);
}
END_TEST

START_TEST(long_line_and_semicolon)
{
	struct cfg c;
	size_t len = 20000;
	char *text = malloc(len + 64), *v;

	ck_assert_ptr_nonnull(text);
	v = text + sprintf(text, "log_prefix ");
	memset(v, 'x', len);
	v[len] = '\0';
	strcat(text, "\nsm_priority 5\n");
	ck_assert_int_eq(read_str(&c, text), 0);
	ck_assert_uint_eq(strlen(get(&c, "log_prefix")), len);
	ck_assert_uint_eq(c.v[key_index("sm_priority")].line, 2);
	cfg_free(&c);
	ck_assert_int_eq(read_str(&c, "log_prefix a;b ; c\n"
				  "event_plugin_options x=1;y=2\n"), 0);
	ck_assert_str_eq(get(&c, "log_prefix"), "a;b ; c");
	ck_assert_str_eq(get(&c, "event_plugin_options"), "x=1;y=2");
	cfg_free(&c);
	free(text);
}
END_TEST

/* OpenSM's clean_val: blanks around the value, one pair of quotes. */
START_TEST(blanks_and_quotes)
{
	struct cfg c;

	ck_assert_int_eq(read_str(&c, "\t sweep_interval\t\t\"15\"  \r\n"
				  "log_prefix 'two words'\n"
				  "node_name_map_name \"/etc/x map\n"
				  "lmc\t2\r\n"), 0);
	ck_assert_str_eq(get(&c, "sweep_interval"), "15");
	ck_assert_str_eq(get(&c, "log_prefix"), "two words");
	ck_assert_str_eq(get(&c, "node_name_map_name"), "\"/etc/x map");
	ck_assert_str_eq(get(&c, "lmc"), "2");
	cfg_free(&c);
}
END_TEST

START_TEST(later_line_wins)
{
	struct cfg c;

	ck_assert_int_eq(read_str(&c, "sm_priority 3\nlmc 1\nsm_priority 9\n"),
			 0);
	ck_assert_str_eq(get(&c, "sm_priority"), "9");
	ck_assert_uint_eq(c.v[key_index("sm_priority")].line, 3);
	cfg_free(&c);
	/* a bad value of a key ibsm implements is an error, even if a later
	 * line is good: the file says two things */
	ck_assert_int_eq(read_str(&c, "sm_priority 16\nsm_priority 2\n"),
			 -EINVAL);
	ck_assert_uint_eq(c.errors.n, 1);
	ck_assert_str_eq(c.errors.msg[0],
			 "t.conf:1: sm_priority 16: expected an integer 0-15");
	cfg_free(&c);
}
END_TEST

/* Bad values of keys ibsm ignores: a warning, the default kept. */
START_TEST(unimplemented_bad_value_warns)
{
	struct cfg c;

	ck_assert_int_eq(read_str(&c, "fdr10 2\nfdr10 255\nconsole_port\n"
				  "enable_quirks yes\n"), 0);
	ck_assert_uint_eq(c.errors.n, 0);
	ck_assert_uint_eq(c.warnings.n, 3);
	ck_assert_str_eq(get(&c, "fdr10"), "1");
	ck_assert_uint_eq(c.v[key_index("fdr10")].src, CFG_SRC_DEFAULT);
	ck_assert_ptr_nonnull(strstr(c.warnings.msg[0], "t.conf:2: fdr10 255"));
	ck_assert_ptr_nonnull(strstr(c.warnings.msg[1],
				     "t.conf:3: console_port (nothing)"));
	ck_assert_ptr_nonnull(strstr(c.warnings.msg[2], "t.conf:4: enable_qu"));
	cfg_free(&c);
	/* an implemented key without a value: an error */
	ck_assert_int_eq(read_str(&c, "sm_priority\n"), -EINVAL);
	ck_assert_str_eq(c.errors.msg[0],
			 "t.conf:1: sm_priority: expected a value after the key");
	cfg_free(&c);
}
END_TEST

/* Values compared as values for "set to a non-default value". */
START_TEST(values_as_values)
{
	const struct cfg_key *k = cfg_key_find("vl_stall_count", NULL);
	const struct cfg_key *g = cfg_key_find("guid", NULL);
	const struct cfg_key *p = cfg_key_find("hop_weights_file", NULL);
	const struct cfg_key *b = cfg_key_find("sweep_on_trap", NULL);
	const struct cfg_key *m = cfg_key_find("cc_sw_cong_setting_victim_mask",
					       NULL);
	const struct cfg_key *q = cfg_key_find("qos_high_limit", NULL);
	struct cfg c;
	char buf[512];
	size_t n;

	ck_assert(cfg_value_eq(k, "0x07", "7"));
	ck_assert(cfg_value_eq(k, "07", "7"));	/* octal, as strtoul */
	ck_assert(!cfg_value_eq(k, "0x07", "6"));
	ck_assert(cfg_value_eq(g, "0x0002c90300001234", "0x2C90300001234"));
	ck_assert(!cfg_value_eq(g, "0x0002c90300001234", "0x0002c90300001235"));
	ck_assert(cfg_value_eq(p, "(null)", NULL));
	ck_assert(!cfg_value_eq(p, "/etc/x", NULL));
	ck_assert(cfg_value_eq(b, "TRUE", NULL));
	ck_assert(!cfg_value_eq(b, "FALSE", "TRUE"));
	ck_assert(cfg_value_eq(m, "0x0", NULL));
	ck_assert(!cfg_value_eq(m, "0x1", NULL));
	ck_assert(cfg_value_eq(q, "-1", NULL));
	ck_assert(!cfg_value_eq(q, "0", NULL));

	ck_assert_int_eq(read_str(&c, "vl_stall_count 7\n"
				  "leaf_vl_stall_count 0x7\n"
				  "hop_weights_file (null)\n"
				  "max_reverse_hops 0x0\n"
				  "scatter_ports 5\n"), 0);
	ck_assert(!cfg_file_changed(&c, key_index("vl_stall_count")));
	ck_assert(cfg_file_changed(&c, key_index("scatter_ports")));
	cfg_unimplemented(&c, buf, sizeof(buf), &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(buf, "scatter_ports");
	cfg_free(&c);
}
END_TEST

START_TEST(dimn_ports_file_alias)
{
	struct cfg c;
	size_t i = key_index("dimn_ports_file");

	ck_assert(cfg_keys(NULL)[i].flags & CFG_ALIAS);
	ck_assert_int_eq(read_str(&c, "dimn_ports_file /etc/opensm/dimn\n"), 0);
	ck_assert_str_eq(get(&c, "port_search_ordering_file"),
			 "/etc/opensm/dimn");
	/* the alias keeps what the file said, for --check-config */
	ck_assert_uint_eq(c.v[i].src, CFG_SRC_FILE);
	ck_assert_uint_eq(c.warnings.n, 1);
	/* ... and is implemented as the key it names is */
	ck_assert(cfg_key_implemented(&cfg_keys(NULL)[i]));
	ck_assert(!cfg_key_implemented(cfg_key_find("sa_db_file", NULL)));
	char buf[256];
	size_t n;
	cfg_unimplemented(&c, buf, sizeof(buf), &n);
	ck_assert_uint_eq(n, 0);
	cfg_free(&c);
	/* (null), as older opensm -c wrote it: no warning */
	ck_assert_int_eq(read_str(&c, "dimn_ports_file (null)\n"), 0);
	ck_assert_uint_eq(c.warnings.n, 0);
	cfg_free(&c);
}
END_TEST

/* Mellanox OpenSM 5.x: keys known by name, once each; engines mapped. */
START_TEST(mellanox)
{
	struct cfg c;
	char out[128], note[300];

	ck_assert_int_eq(read_str(&c, "virt_enabled 2\nsharp_enabled 2\n"
				  "ar_enable TRUE\nvirt_enabled 1\n"
				  "routing_engine ar_updn,minhop\n"
				  "sm_prority 3\n"), 0);
	ck_assert_uint_eq(c.unknown.n, 1);	/* a typo stays unknown */
	ck_assert_uint_eq(c.warnings.n, 4);
	ck_assert_ptr_nonnull(strstr(c.warnings.msg[0], "t.conf:1: virt_enabled"));
	ck_assert_ptr_nonnull(strstr(c.warnings.msg[3],
				     "t.conf:5: routing_engine ar_updn,minhop:"
				     " ar_updn -> updn"));
	ck_assert_str_eq(get(&c, "routing_engine"), "updn,minhop");
	cfg_free(&c);
	ck_assert_int_eq(cfg_map_engines("ar_ftree", out, sizeof(out), note,
					 sizeof(note)), 1);
	ck_assert_str_eq(out, "ftree");
	ck_assert_int_eq(cfg_map_engines("minhop,updn", out, sizeof(out), note,
					 sizeof(note)), 0);
	ck_assert_str_eq(out, "minhop,updn");
	ck_assert_int_eq(cfg_map_engines("ar_dor,ar_torus", out, sizeof(out),
					 note, sizeof(note)), 1);
	ck_assert_ptr_null(strstr(out, "ar_"));
	ck_assert_ptr_nonnull(cfg_mlnx_key("ar_sl_mask"));
	ck_assert_ptr_null(cfg_mlnx_key("sm_prority"));
}
END_TEST

/* tests/config/warn/: each file starts, with exactly one warning. */
START_TEST(warn_files)
{
	DIR *d = opendir(CONF_DIR "/warn");
	struct dirent *e;
	unsigned files = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		char path[512], first[512], want[1024];
		unsigned line;
		int off = 0;
		bool unknown;
		FILE *fp;
		struct cfg c;

		if (!strstr(e->d_name, ".conf"))
			continue;
		snprintf(path, sizeof(path), "%s/warn/%s", CONF_DIR, e->d_name);
		fp = fopen(path, "r");
		ck_assert_ptr_nonnull(fp);
		ck_assert_ptr_nonnull(fgets(first, sizeof(first), fp));
		fclose(fp);
		first[strcspn(first, "\n")] = '\0';
		unknown = !strncmp(first, "# expect-unknown:", 17);
		ck_assert_int_eq(sscanf(first + (unknown ? 17 : 17 + 1),
					" %u: %n", &line, &off), 1);
		snprintf(want, sizeof(want), "%s:%u: %s", path, line,
			 first + (unknown ? 17 : 18) + off);
		cfg_init(&c);
		ck_assert_int_eq(cfg_read_file(&c, path), 0);
		ck_assert_uint_eq(c.errors.n, 0);
		ck_assert_msg(c.warnings.n + c.unknown.n == 1, "%s: %zu + %zu",
			      path, c.warnings.n, c.unknown.n);
		ck_assert_str_eq(unknown ? c.unknown.msg[0] : c.warnings.msg[0],
				 want);
		/* the good line after it was read */
		ck_assert_uint_eq(c.v[key_index("sweep_interval")].line, line + 1);
		cfg_free(&c);
		files++;
	}
	closedir(d);
	ck_assert_uint_ge(files, 10);
}
END_TEST

/* Every key of OpenSM 3.3.23 has a status; ibsm.conf(5) shows them all,
 * exactly as cfg_man_table() writes them. */
START_TEST(man_table_matches)
{
	char *page = NULL, *table = NULL;
	size_t plen, tlen, n, opensm = 0;
	const struct cfg_key *keys = cfg_keys(&n);
	FILE *fp = open_memstream(&table, &tlen);
	const char *b, *e;

	for (size_t i = 0; i < n; i++) {
		const char *note;
		enum cfg_status st = cfg_key_status(&keys[i], &note);

		if (keys[i].flags & CFG_IBSM)
			continue;
		opensm++;
		/* mapped and not-applicable keys say what/why */
		if (st == CFG_ST_MAPPED || st == CFG_ST_NA)
			ck_assert_ptr_nonnull(note);
	}
	ck_assert_uint_eq(opensm, 161);
	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(cfg_man_table(fp), 0);
	fclose(fp);
	/* tools/update_man_keys.sh takes the table from here */
	if (getenv("IBSM_MAN_TABLE_OUT")) {
		FILE *out = fopen(getenv("IBSM_MAN_TABLE_OUT"), "w");

		ck_assert_ptr_nonnull(out);
		fwrite(table, 1, tlen, out);
		fclose(out);
	}
	ck_assert_int_eq(read_file_all(MAN_CONF, &page, &plen), 0);
	b = strstr(page, CFG_MAN_BEGIN);
	e = b ? strstr(b, CFG_MAN_END) : NULL;
	ck_assert_msg(b && e, "no key table markers in ibsm.conf(5)");
	e += strlen(CFG_MAN_END) + 1;
	ck_assert_msg((size_t)(e - b) == tlen && !memcmp(b, table, tlen),
		      "ibsm.conf(5)'s key table is stale: run"
		      " tools/update_man_keys.sh");
	free(page);
	free(table);
}
END_TEST

static Suite *conf_read_suite(void)
{
	Suite *s = suite_create("conf_read");
	TCase *tc = tcase_create("conf_read");

	tcase_add_test(tc, trailing_comment);
	tcase_add_test(tc, long_line_and_semicolon);
	tcase_add_test(tc, blanks_and_quotes);
	tcase_add_test(tc, later_line_wins);
	tcase_add_test(tc, unimplemented_bad_value_warns);
	tcase_add_test(tc, values_as_values);
	tcase_add_test(tc, dimn_ports_file_alias);
	tcase_add_test(tc, mellanox);
	tcase_add_test(tc, warn_files);
	tcase_add_test(tc, man_table_matches);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(conf_read_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
