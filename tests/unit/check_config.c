/*
 * check_config.c - config/: the opensm.conf key table, values of every
 * type with their ranges, the file reader (line numbers through inih),
 * the broken files of tests/config/bad/ each with its exact FILE:LINE
 * message, `opensm -c` output read with no error, the command line over
 * the file, `-c` output read back unchanged, and cfg_apply into struct
 * sm_config.
 */
#include "config.h"

#include <check.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/conf.h"
#include "config/listen.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include "config/fileutil.h"
#include "config/health_policy.h"
#include "config/opts.h"
#include "config/limits.h"
#include "sm/sm.h"

static size_t key_index(const char *name)
{
	size_t i;

	ck_assert_msg(cfg_key_find(name, &i) != NULL, "no key %s", name);
	return i;
}

static int set(struct cfg *c, const char *name, const char *val)
{
	char err[200];

	return cfg_set(c, key_index(name), val, CFG_SRC_CMDLINE, 0, err,
		       sizeof(err));
}

static int set_file(struct cfg *c, const char *name, const char *val)
{
	char err[200];

	return cfg_set(c, key_index(name), val, CFG_SRC_FILE, 1, err,
		       sizeof(err));
}

static char *write_tmp(const char *text)
{
	static char path[64];
	FILE *fp;
	int fd;

	snprintf(path, sizeof(path), "/tmp/check_config.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	fp = fdopen(fd, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	fclose(fp);
	return path;
}

START_TEST(table_has_every_opensm_key)
{
	size_t n, opensm = 0, impl = 0, rt = 0;
	const struct cfg_key *k = cfg_keys(&n);

	for (size_t i = 0; i < n; i++) {
		if (!(k[i].flags & CFG_IBSM))
			opensm++;
		impl += (k[i].flags & CFG_IMPL) != 0;
		rt += (k[i].flags & CFG_RT) != 0;
		/* every default passes its own check */
		char err[200];
		ck_assert_msg(cfg_check_value(&k[i], k[i].def, err,
					      sizeof(err)) == 0,
			      "%s default %s: %s", k[i].name, k[i].def, err);
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(k[i].name, k[j].name);
	}
	/* opensm -c of 3.3.23, and dimn_ports_file */
	ck_assert_uint_eq(opensm, 161);
	ck_assert_uint_eq(n, 161 + 8 + 22 + 1 + n_limit_opts);	/* + ibsm keys,
							 * health keys, metrics_listen */
	ck_assert_uint_ge(impl, 20);
	ck_assert_uint_ge(rt, 50);
	ck_assert(cfg_key_find("sm_priority", NULL)->flags & CFG_RT);
	ck_assert(!(cfg_key_find("lmc", NULL)->flags & CFG_RT));
	ck_assert(cfg_key_find("qos", NULL)->flags & CFG_IMPL);
	ck_assert(!(cfg_key_find("qos_max_vls", NULL)->flags & CFG_IMPL));
}
END_TEST

START_TEST(every_type)
{
	struct cfg c;

	cfg_init(&c);
	/* bool: OpenSM's spelling only */
	ck_assert_int_eq(set(&c, "reassign_lids", "TRUE"), 0);
	ck_assert_int_eq(set(&c, "reassign_lids", "FALSE"), 0);
	ck_assert_int_eq(set(&c, "reassign_lids", "true"), -EINVAL);
	ck_assert_int_eq(set(&c, "reassign_lids", ""), -EINVAL);
	/* int with range, decimal or hex, both ends included */
	ck_assert_int_eq(set(&c, "sm_priority", "0"), 0);
	ck_assert_int_eq(set(&c, "sm_priority", "15"), 0);
	ck_assert_int_eq(set(&c, "sm_priority", "0xf"), 0);
	ck_assert_int_eq(set(&c, "sm_priority", "16"), -EINVAL);
	ck_assert_int_eq(set(&c, "sm_priority", "-1"), -EINVAL);
	ck_assert_int_eq(set(&c, "sm_priority", " 3"), -EINVAL);
	ck_assert_int_eq(set(&c, "qos_high_limit", "-1"), 0);
	ck_assert_int_eq(set(&c, "qos_high_limit", "-2"), -EINVAL);
	ck_assert_int_eq(set(&c, "max_smps_timeout", "4294967295"), 0);
	ck_assert_int_eq(set(&c, "max_smps_timeout", "4294967296"), -EINVAL);
	/* 64-bit numbers and GUIDs */
	ck_assert_int_eq(set(&c, "guid", "0x0002c90300001234"), 0);
	ck_assert_int_eq(set(&c, "guid", "0xffffffffffffffff"), 0);
	ck_assert_int_eq(set(&c, "guid", "0x1ffffffffffffffff"), -EINVAL);
	ck_assert_int_eq(set(&c, "guid", "0x12g4"), -EINVAL);
	ck_assert_int_eq(set(&c, "subnet_prefix", "0xfe80000000000000"), 0);
	ck_assert_int_eq(set(&c, "sm_key", "-5"), -EINVAL);
	/* enums */
	ck_assert_int_eq(set(&c, "part_enforce", "off"), 0);
	ck_assert_int_eq(set(&c, "part_enforce", "of"), -EINVAL);
	ck_assert_int_eq(set(&c, "part_enforce", "offf"), -EINVAL);
	ck_assert_int_eq(set(&c, "console", "loopback"), 0);
	/* strings, paths; "(null)" is unset */
	ck_assert_int_eq(set(&c, "log_prefix", "ibsm"), 0);
	ck_assert_int_eq(set(&c, "qos_policy_file", "(null)"), 0);
	ck_assert_int_eq(set(&c, "routing_engine", "minhop"), 0);
	ck_assert_int_eq(set(&c, "routing_engine", "auto"), 0);
	ck_assert_int_eq(set(&c, "routing_engine", "auto,no_fallback"), 0);
	/* an OpenSM engine ibsm does not have */
	ck_assert_int_eq(set(&c, "routing_engine", "lash"), -EINVAL);
	/* limits: sm/limits.c's ranges, real and integer */
	ck_assert_int_eq(set(&c, "trap-rate", "0.5"), 0);
	ck_assert_int_eq(set(&c, "trap-rate", "0"), -EINVAL);
	ck_assert_int_eq(set(&c, "sa-max-jobs", "1.5"), -EINVAL);
	ck_assert_int_eq(set(&c, "sa-max-jobs", "4096"), 0);
	/* the last good value stays after a refused one */
	ck_assert_str_eq(cfg_get(&c, key_index("sm_priority")), "0xf");
	cfg_free(&c);
}
END_TEST

START_TEST(apply_to_sm_config)
{
	struct cfg c;
	struct sm_config o;

	cfg_init(&c);
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(cfg_apply(&c, &o), 0);
	/* OpenSM's defaults */
	ck_assert_uint_eq(o.transaction_timeout, 200);
	ck_assert_uint_eq(o.transaction_retries, 3);
	ck_assert_uint_eq(o.max_wire_smps, 4);
	ck_assert_uint_eq(o.sweep_interval, 10);
	ck_assert_uint_eq(o.subnet_prefix, 0xfe80000000000000ull);
	ck_assert_uint_eq(o.subnet_timeout, 18);
	ck_assert_uint_eq(o.packet_life_time, 0x12);
	ck_assert_uint_eq(o.head_of_queue_lifetime, 0x12);
	ck_assert_uint_eq(o.leaf_head_of_queue_lifetime, 0x10);
	ck_assert_uint_eq(o.max_op_vls, 5);
	ck_assert_int_eq(o.log_level, LOG_LVL_INFO);
	ck_assert_ptr_null(o.routing_engine);
	ck_assert_uint_eq(o.trap_burst, SM_TRAP_BURST);
	ck_assert_str_eq(o.log_file, "/var/log/opensm.log");
	ck_assert_int_eq(set(&c, "sm_priority", "7"), 0);
	ck_assert_int_eq(set(&c, "lmc", "2"), 0);
	ck_assert_int_eq(set(&c, "guid", "0x0002c90300001234"), 0);
	ck_assert_int_eq(set(&c, "part_enforce", "out"), 0);
	ck_assert_int_eq(set(&c, "allow_both_pkeys", "TRUE"), 0);
	ck_assert_int_eq(set(&c, "log_flags", "0x41"), 0);
	ck_assert_int_eq(set(&c, "dump_files_dir", "/tmp/d"), 0);
	ck_assert_int_eq(set(&c, "partition_config_file", "/tmp/p.conf"), 0);
	ck_assert_int_eq(set(&c, "trap-rate", "0.25"), 0);
	ck_assert_int_eq(cfg_apply(&c, &o), 0);
	ck_assert_uint_eq(o.sm_priority, 7);
	ck_assert_uint_eq(o.lmc, 2);
	ck_assert_uint_eq(o.guid, 0x0002c90300001234ull);
	ck_assert_int_eq(o.part_enforce, SM_PART_ENFORCE_OUT);
	ck_assert(o.allow_both_pkeys);
	ck_assert(o.dump_lfts);		/* 0x40: OpenSM's routing flag */
	ck_assert_int_eq(o.log_level, LOG_LVL_DEBUG);
	ck_assert_str_eq(o.dump_dir, "/tmp/d");
	ck_assert_str_eq(o.partition_config, "/tmp/p.conf");
	ck_assert(o.trap_rate == 0.25);
	ck_assert_int_eq(set(&c, "log_flags", "0x01"), 0);
	ck_assert_int_eq(set(&c, "no_partition_enforcement", "TRUE"), 0);
	ck_assert_int_eq(cfg_apply(&c, &o), 0);
	ck_assert_int_eq(o.part_enforce, SM_PART_ENFORCE_OFF);
	ck_assert_int_eq(o.log_level, LOG_LVL_WARN);
	cfg_free(&c);
}
END_TEST

/* Line numbers survive comments, blank and indented lines, CRLF. */
START_TEST(reader_lines)
{
	struct cfg c;
	char *path = write_tmp("# comment\n\n  sm_priority 4\r\n"
			       "\tlmc\t 1  \n#x\nsm_key 0x2\n"
			       "log_prefix two words\nbogus_key 1\nlmc 9\n");
	size_t p = key_index("sm_priority"), l = key_index("lmc");
	char want[160];

	cfg_init(&c);
	ck_assert_int_eq(cfg_read_file(&c, path), -EINVAL);
	ck_assert_str_eq(cfg_get(&c, p), "4");
	ck_assert_uint_eq(c.v[p].line, 3);
	ck_assert_uint_eq(c.v[p].src, CFG_SRC_FILE);
	ck_assert_str_eq(cfg_get(&c, l), "1");
	ck_assert_uint_eq(c.v[l].line, 4);
	ck_assert_str_eq(cfg_get(&c, key_index("sm_key")), "0x2");
	ck_assert_uint_eq(c.v[key_index("sm_key")].line, 6);
	ck_assert_str_eq(cfg_get(&c, key_index("log_prefix")), "two words");
	ck_assert_uint_eq(c.unknown.n, 1);
	snprintf(want, sizeof(want), "%s:8: unknown key 'bogus_key'", path);
	ck_assert_str_eq(c.unknown.msg[0], want);
	ck_assert_uint_eq(c.errors.n, 1);
	snprintf(want, sizeof(want), "%s:9: lmc 9: expected an integer 0-7",
		 path);
	ck_assert_str_eq(c.errors.msg[0], want);
	cfg_free(&c);
	unlink(path);
}
END_TEST

/* tests/config/bad/: the first line says the error the file must give. */
START_TEST(bad_files)
{
	DIR *d = opendir(CONF_DIR "/bad");
	struct dirent *e;
	unsigned files = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		char path[512], first[512], want[1024];
		unsigned line;
		int off = 0;
		FILE *fp;
		struct cfg c;

		if (!strstr(e->d_name, ".conf"))
			continue;
		snprintf(path, sizeof(path), "%s/bad/%s", CONF_DIR, e->d_name);
		fp = fopen(path, "r");
		ck_assert_ptr_nonnull(fp);
		ck_assert_ptr_nonnull(fgets(first, sizeof(first), fp));
		fclose(fp);
		first[strcspn(first, "\n")] = '\0';
		ck_assert_int_eq(sscanf(first, "# expect: %u: %n", &line, &off), 1);
		ck_assert_int_gt(off, 0);
		snprintf(want, sizeof(want), "%s:%u: %s", path, line, first + off);
		cfg_init(&c);
		ck_assert_int_eq(cfg_read_file(&c, path), -EINVAL);
		ck_assert_msg(c.errors.n == 1, "%s: %zu errors", path, c.errors.n);
		ck_assert_str_eq(c.errors.msg[0], want);
		ck_assert_uint_eq(c.unknown.n, 0);
		/* the good lines around it were read */
		ck_assert_str_eq(cfg_get(&c, key_index("sweep_interval")), "10");
		ck_assert_uint_eq(c.v[key_index("sweep_interval")].line, line + 1);
		cfg_free(&c);
		files++;
	}
	closedir(d);
	ck_assert_uint_ge(files, 25);
}
END_TEST

/* metrics_listen's ADDR:PORT forms, and what is refused */
START_TEST(listen_addresses)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	static const char *const bad[] = { "", ":9683", "127.0.0.1",
		"127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:x",
		"127.0.0.1:-1", "host.example:80", "::1:80", "[::1]80",
		"[::1]:", "[]:80", "1.2.3.4.5:80", "127.0.0.1:80 " };

	ck_assert_int_eq(cfg_parse_listen("127.0.0.1:9683", &ss, &len), 0);
	ck_assert_int_eq(a4->sin_family, AF_INET);
	ck_assert_uint_eq(ntohs(a4->sin_port), 9683);
	ck_assert_uint_eq(ntohl(a4->sin_addr.s_addr), 0x7f000001);
	ck_assert_uint_eq(len, sizeof(*a4));
	ck_assert_int_eq(cfg_parse_listen("localhost:1", &ss, &len), 0);
	ck_assert_uint_eq(ntohl(a4->sin_addr.s_addr), 0x7f000001);
	ck_assert_int_eq(cfg_parse_listen("*:65535", &ss, &len), 0);
	ck_assert_uint_eq(ntohl(a4->sin_addr.s_addr), INADDR_ANY);
	ck_assert_uint_eq(ntohs(a4->sin_port), 65535);
	ck_assert_int_eq(cfg_parse_listen("[::1]:9683", &ss, &len), 0);
	ck_assert_int_eq(a6->sin6_family, AF_INET6);
	ck_assert(IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr));
	ck_assert_uint_eq(len, sizeof(*a6));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(cfg_parse_listen(bad[i], &ss, &len) == -EINVAL,
			      "accepted '%s'", bad[i]);
	/* the key: "(null)" (off) is its default and passes */
	struct cfg c;
	char err[200];

	cfg_init(&c);
	ck_assert_int_eq(cfg_set(&c, key_index("metrics_listen"),
				 "127.0.0.1:9683", CFG_SRC_CMDLINE, 0, err,
				 sizeof(err)), 0);
	ck_assert_int_eq(cfg_set(&c, key_index("metrics_listen"), "9683",
				 CFG_SRC_CMDLINE, 0, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "ADDR:PORT"));
	cfg_free(&c);
}
END_TEST

START_TEST(unknown_key_only_warns)
{
	struct cfg c;
	char want[512];

	cfg_init(&c);
	ck_assert_int_eq(cfg_read_file(&c, CONF_DIR "/unknown.conf"), 0);
	ck_assert_uint_eq(c.errors.n, 0);
	ck_assert_uint_eq(c.unknown.n, 1);
	snprintf(want, sizeof(want), "%s:3: unknown key 'sm_prority'",
		 CONF_DIR "/unknown.conf");
	ck_assert_str_eq(c.unknown.msg[0], want);
	ck_assert_str_eq(cfg_get(&c, key_index("sm_priority")), "3");
	cfg_free(&c);
}
END_TEST

START_TEST(missing_file)
{
	struct cfg c;

	cfg_init(&c);
	ck_assert_int_eq(cfg_read_file(&c, "/nonexistent/opensm.conf"), -ENOENT);
	cfg_free(&c);
}
END_TEST

/* The health keys: their defaults are the policy's, a file sets them
 * (and --topology-ref), bad values are FILE:LINE errors. */
START_TEST(health_keys)
{
	struct cfg c;
	struct sm_config o;
	struct health_policy p, d;
	char *path;

	health_policy_default(&d);
	cfg_init(&c);
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(cfg_apply(&c, &o), 0);
	health_policy_from_config(&o, &p);
	ck_assert_mem_eq(p.err_per_hour, d.err_per_hour, sizeof(d.err_per_hour));
	ck_assert_uint_eq(p.xmit_wait_per_hour, d.xmit_wait_per_hour);
	ck_assert_uint_eq(p.flap_count, d.flap_count);
	ck_assert(p.flap_window_s == d.flap_window_s);
	ck_assert_uint_eq(p.unresponsive_k, d.unresponsive_k);
	ck_assert_uint_eq(p.unresponsive_n, d.unresponsive_n);
	ck_assert_uint_eq(p.trap_rate, d.trap_rate);
	ck_assert_uint_eq(p.expected_width, 0);
	ck_assert_uint_eq(p.expected_speed, 0);
	ck_assert_int_eq(p.unhealthy_action, HEALTH_REPORT);
	ck_assert_ptr_null(o.topology_ref);
	cfg_free(&c);

	path = write_tmp("health_expected_width 4x\n"
			 "health_expected_speed EDR\n"
			 "health_threshold_symbol_errors 0\n"
			 "health_threshold_link_downed 1\n"
			 "health_threshold_xmit_wait 77\n"
			 "health_flap_count 3\n"
			 "health_flap_window_s 60\n"
			 "health_unresponsive_k 4\n"
			 "health_unresponsive_n 2\n"
			 "health_trap_rate 9\n"
			 "health_unhealthy_policy isolate\n"
			 "topology_ref /etc/ibsm/fabric.topo\n");
	cfg_init(&c);
	ck_assert_int_eq(cfg_read_file(&c, path), 0);
	ck_assert_int_eq(cfg_apply(&c, &o), 0);
	health_policy_from_config(&o, &p);
	ck_assert_uint_eq(p.expected_width, 4);
	ck_assert_uint_eq(p.expected_speed, 250);
	ck_assert_uint_eq(p.err_per_hour[PC_SYMBOL_ERR], 0);	/* off */
	ck_assert_uint_eq(p.err_per_hour[PC_LINK_DOWNED], 1);
	ck_assert_uint_eq(p.err_per_hour[PC_RCV_ERR], d.err_per_hour[PC_RCV_ERR]);
	ck_assert_uint_eq(p.xmit_wait_per_hour, 77);
	ck_assert_uint_eq(p.flap_count, 3);
	ck_assert(p.flap_window_s == 60);
	ck_assert_uint_eq(p.unresponsive_n, 2);
	ck_assert_uint_eq(p.unresponsive_k, 2);	/* k > n: taken as n */
	ck_assert_uint_eq(p.trap_rate, 9);
	ck_assert_int_eq(p.unhealthy_action, HEALTH_ISOLATE);
	ck_assert_str_eq(o.topology_ref, "/etc/ibsm/fabric.topo");
	cfg_free(&c);
	unlink(path);

	path = write_tmp("health_expected_width 3x\n"
			 "health_flap_count 0\n"
			 "health_unhealthy_policy disable\n"
			 "health_expected_speed qdr\n");
	cfg_init(&c);
	ck_assert_int_eq(cfg_read_file(&c, path), -EINVAL);
	ck_assert_uint_eq(c.errors.n, 4);
	for (unsigned i = 0; i < 4; i++) {
		char want[96];

		snprintf(want, sizeof(want), "%s:%u: ", path, i + 1);
		ck_assert_msg(!strncmp(c.errors.msg[i], want, strlen(want)),
			      "%s", c.errors.msg[i]);
	}
	ck_assert_ptr_nonnull(strstr(c.errors.msg[0], "1x, 2x, 4x, 8x or 12x"));
	cfg_free(&c);
	unlink(path);
}
END_TEST

/* OpenSM's own default file: every key known, every value accepted. */
START_TEST(opensm_c_output)
{
	char path[] = "/tmp/check_config_opensm.XXXXXX", cmd[128];
	struct cfg c;
	size_t n, set_from_file = 0;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "opensm -c %s >/dev/null 2>&1", path);
	ck_assert_int_eq(system(cmd), 0);
	cfg_init(&c);
	ck_assert_int_eq(cfg_read_file(&c, path), 0);
	ck_assert_uint_eq(c.errors.n, 0);
	ck_assert_uint_eq(c.unknown.n, 0);
	cfg_keys(&n);
	for (size_t i = 0; i < n; i++)
		set_from_file += c.v[i].src == CFG_SRC_FILE;
	ck_assert_uint_eq(set_from_file, 160);
	cfg_free(&c);
	unlink(path);
}
END_TEST

START_TEST(cmdline_over_file)
{
	struct cfg c;
	char *path = write_tmp("sm_priority 7\nlmc 1\n");
	struct sm_config o;

	cfg_init(&c);
	ck_assert_int_eq(set(&c, "sm_priority", "3"), 0);
	ck_assert_int_eq(cfg_read_file(&c, path), 0);
	ck_assert_str_eq(cfg_get(&c, key_index("sm_priority")), "3");
	ck_assert_uint_eq(c.v[key_index("sm_priority")].src, CFG_SRC_CMDLINE);
	ck_assert_str_eq(cfg_get(&c, key_index("lmc")), "1");
	memset(&o, 0, sizeof(o));
	ck_assert_int_eq(cfg_apply(&c, &o), 0);
	ck_assert_uint_eq(o.sm_priority, 3);
	ck_assert_uint_eq(o.lmc, 1);
	cfg_free(&c);
	unlink(path);
}
END_TEST

/* -c output, read back: no error, no unknown key, the same values. */
START_TEST(create_round_trip)
{
	char path[] = "/tmp/check_config_c.XXXXXX";
	struct cfg c, back;
	size_t n;
	FILE *fp;
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	fp = fdopen(fd, "w");
	cfg_init(&c);
	ck_assert_int_eq(set(&c, "sm_priority", "9"), 0);
	ck_assert_int_eq(set(&c, "log_prefix", "a b"), 0);
	ck_assert_int_eq(set(&c, "part_enforce", "in"), 0);
	ck_assert_int_eq(cfg_write(fp, &c), 0);
	fclose(fp);
	cfg_init(&back);
	ck_assert_int_eq(cfg_read_file(&back, path), 0);
	ck_assert_uint_eq(back.unknown.n, 0);
	cfg_keys(&n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(cfg_get(&back, i), cfg_get(&c, i));
	ck_assert_uint_eq(back.v[key_index("sm_priority")].src, CFG_SRC_FILE);
	/* ibsm's own keys are written commented out (OpenSM reads it) */
	ck_assert_uint_eq(back.v[key_index("trap-burst")].src, CFG_SRC_DEFAULT);
	cfg_free(&back);
	cfg_free(&c);
	unlink(path);
}
END_TEST

/* The keys set to something ibsm does not do are named, once. */
START_TEST(unimplemented_listed)
{
	struct cfg c;
	char buf[256];
	size_t n;

	cfg_init(&c);
	cfg_unimplemented(&c, buf, sizeof(buf), &n);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(set_file(&c, "qos_max_vls", "4"), 0);
	ck_assert_int_eq(set_file(&c, "perfmgr", "FALSE"), 0);	/* default */
	ck_assert_int_eq(set_file(&c, "sm_priority", "4"), 0);	/* implemented */
	ck_assert_int_eq(set_file(&c, "m_key", "0x5"), 0);	/* implemented */
	ck_assert_int_eq(set_file(&c, "fdr10", "2"), 0);
	ck_assert_int_eq(set(&c, "congestion_control", "TRUE"), 0); /* command line */
	cfg_unimplemented(&c, buf, sizeof(buf), &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(buf, "fdr10, qos_max_vls");
	cfg_free(&c);
}
END_TEST

/* Every option names an existing key, every OpenSM short option once. */
START_TEST(options_table)
{
	char shorts[256];
	struct option *lo;
	size_t nlong = 0;

	for (size_t i = 0; i < n_cfg_opts; i++)
		if (cfg_opts[i].key)
			ck_assert_msg(cfg_key_find(cfg_opts[i].key, NULL),
				      "option %s: no key %s", cfg_opts[i].lng,
				      cfg_opts[i].key);
	ck_assert_int_eq(cfg_opts_getopt(shorts, sizeof(shorts), &lo), 0);
	/* OpenSM 3.3.23's getopt string, every letter */
	for (const char *s = "Fciw:OfedDglLstaumXRzMUSPYANZWBIQvVhoryxpnqkCGH";
	     *s; s++)
		if (*s != ':')
			ck_assert_msg(strchr(shorts, *s), "-%c missing", *s);
	for (; lo[nlong].name; nlong++)
		for (size_t j = 0; j < nlong; j++)
			ck_assert_str_ne(lo[nlong].name, lo[j].name);
	ck_assert_uint_ge(nlong, 66 + n_limit_opts);
	ck_assert_ptr_eq(cfg_opt_of('p'), cfg_opt_of(OPT_LONG_BASE +
		(int)(cfg_opt_of('p') - cfg_opts)));
	free(lo);
}
END_TEST

static int put(FILE *fp, const void *arg)
{
	return fputs(arg, fp) < 0 ? -EIO : 0;
}

/* config/fileutil: whole-file reads, with a cap; atomic write + backup. */
START_TEST(file_helpers)
{
	char dir[] = "/tmp/check_config_files.XXXXXX", path[128], bak[128];
	char *buf;
	size_t len;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f.conf", dir);
	snprintf(bak, sizeof(bak), "%s/f.conf~", dir);
	ck_assert_int_eq(read_file_all(path, &buf, &len), -ENOENT);
	/* no old file: no backup, the new one written */
	ck_assert_int_eq(write_file_atomic_backup(path, "~", put, "one\n"), 0);
	ck_assert_int_eq(access(bak, F_OK), -1);
	ck_assert_int_eq(write_file_atomic_backup(path, "~", put, "two\n"), 0);
	ck_assert_int_eq(read_file_all(path, &buf, &len), 0);
	ck_assert_str_eq(buf, "two\n");
	ck_assert_uint_eq(len, 4);
	free(buf);
	ck_assert_int_eq(read_file_all(bak, &buf, &len), 0);
	ck_assert_str_eq(buf, "one\n");
	free(buf);
	ck_assert_int_eq(read_file_max(path, 4, &buf, &len), 0);
	free(buf);
	ck_assert_int_eq(read_file_max(path, 3, &buf, &len), -EFBIG);
	ck_assert_int_eq(read_file_max(dir, 100, &buf, &len), -EINVAL);
	unlink(bak);
	unlink(path);
	rmdir(dir);
}
END_TEST

/* Writing through a symbolic link edits the file it points to; mode,
 * group and owner stay; a temp file a killed writer left behind is
 * removed once old, a young one and other names are not. */
/* Whole-file writes never replace a node that is not a regular file
 * (a FIFO here; /dev/null for `ibsm -c /dev/null`), nor a directory. */
START_TEST(file_write_regular_only)
{
	char dir[] = "/tmp/check_config_node.XXXXXX", fifo[96];
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	ck_assert_int_eq(write_file_atomic(fifo, put, "x\n"), -EINVAL);
	ck_assert_int_eq(write_file_if_changed(fifo, put, "x\n", 0), -EINVAL);
	ck_assert_int_eq(stat(fifo, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
	ck_assert_int_eq(write_file_atomic(dir, put, "x\n"), -EISDIR);
	ck_assert_int_eq(stat(dir, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	unlink(fifo);
	rmdir(dir);
}
END_TEST

START_TEST(file_write_keeps)
{
	char dir[] = "/tmp/check_config_keep.XXXXXX", real[128], link[128];
	char stale[160], young[160], other[160], lockf[160], buf2[256];
	struct timespec old[2] = { { 1000, 0 }, { 1000, 0 } };
	struct stat st;
	char *buf;
	size_t len;
	ssize_t n;
	gid_t gid = getgid(), groups[64];
	uid_t uid = geteuid();
	int ng = getgroups(64, groups);

	/* root: another owner and group (daemon's); else a group of ours
	 * other than the primary one, if we have one */
	for (int i = 0; i < ng; i++)
		if (groups[i] != getgid())
			gid = groups[i];
	if (uid == 0)
		uid = 1, gid = 1;
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(real, sizeof(real), "%s/real.conf", dir);
	snprintf(link, sizeof(link), "%s/link.conf", dir);
	ck_assert_int_eq(write_file_atomic(real, put, "one\n"), 0);
	ck_assert_int_eq(chmod(real, 0640), 0);
	ck_assert_int_eq(chown(real, uid, gid), 0);
	ck_assert_int_eq(symlink("real.conf", link), 0);
	snprintf(stale, sizeof(stale), "%s.tmpAbC123", real);
	snprintf(young, sizeof(young), "%s.tmpXyZ789", real);
	snprintf(other, sizeof(other), "%s.tmpAbC12", real);
	for (const char *f = stale; f; f = f == stale ? young :
	     f == young ? other : NULL) {
		FILE *fp = fopen(f, "w");

		ck_assert_ptr_nonnull(fp);
		fclose(fp);
	}
	ck_assert_int_eq(utimensat(AT_FDCWD, stale, old, 0), 0);
	ck_assert_int_eq(utimensat(AT_FDCWD, other, old, 0), 0);

	ck_assert_int_eq(write_file_atomic_backup(link, "~", put, "two\n"), 0);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	n = readlink(link, buf2, sizeof(buf2) - 1);
	ck_assert_int_eq(n, 9);
	ck_assert_int_eq(read_file_all(real, &buf, &len), 0);
	ck_assert_str_eq(buf, "two\n");
	free(buf);
	ck_assert_int_eq(stat(real, &st), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	ck_assert_uint_eq(st.st_gid, gid);
	ck_assert_uint_eq(st.st_uid, uid);
	snprintf(buf2, sizeof(buf2), "%s~", real);	/* backup beside it */
	ck_assert_int_eq(read_file_all(buf2, &buf, &len), 0);
	ck_assert_str_eq(buf, "one\n");
	free(buf);
	ck_assert_int_eq(stat(buf2, &st), 0);	/* as private as the file */
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	ck_assert_uint_eq(st.st_gid, gid);
	unlink(buf2);
	ck_assert_int_eq(access(stale, F_OK), -1);
	ck_assert_int_eq(access(young, F_OK), 0);
	ck_assert_int_eq(access(other, F_OK), 0);

	/* a link to a file not there yet: created at the link's target */
	unlink(real);
	ck_assert_int_eq(write_file_atomic(link, put, "three\n"), 0);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(read_file_all(real, &buf, &len), 0);
	ck_assert_str_eq(buf, "three\n");
	free(buf);

	/* the edit lock: one holder at a time, through the link too */
	{
		int a = file_lock(real, false), b;

		ck_assert_int_ge(a, 0);
		b = file_lock(link, false);
		ck_assert_int_eq(b, -EWOULDBLOCK);
		file_unlock(a);
		b = file_lock(link, false);
		ck_assert_int_ge(b, 0);
		file_unlock(b);
	}
	snprintf(lockf, sizeof(lockf), "%s/.real.conf.lock", dir);
	unlink(lockf);
	unlink(young);
	unlink(other);
	unlink(link);
	unlink(real);
	ck_assert_int_eq(rmdir(dir), 0);	/* nothing else left */
}
END_TEST

/* read_file_stable: the content and the stamp of a file at rest. */
START_TEST(file_read_stable)
{
	char dir[] = "/tmp/check_config_stable.XXXXXX", path[128];
	struct file_stamp a, b;
	char *buf;
	size_t len;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	ck_assert_int_eq(read_file_stable(path, 100, 3, &buf, &len, &a),
			 -ENOENT);
	ck_assert_int_eq(write_file_atomic(path, put, "abc\n"), 0);
	ck_assert_int_eq(read_file_stable(path, 100, 3, &buf, &len, &a), 0);
	ck_assert_str_eq(buf, "abc\n");
	free(buf);
	ck_assert_int_eq(file_stamp_get(path, &b), 0);
	ck_assert(file_stamp_same(&a, &b));
	ck_assert_int_eq(read_file_stable(path, 3, 3, &buf, &len, &a), -EFBIG);
	ck_assert_int_eq(read_file_stable(dir, 100, 3, &buf, &len, &a), -EINVAL);
	ck_assert_int_eq(write_file_atomic(path, put, "abd\n"), 0);
	ck_assert_int_eq(file_stamp_get(path, &b), 0);
	ck_assert(!file_stamp_same(&a, &b));	/* replaced: new inode */
	unlink(path);
	rmdir(dir);
}
END_TEST

/* Without -F: the first default opensm.conf that is a regular file. */
START_TEST(default_file)
{
	char dir[] = "/tmp/check_config.XXXXXX";
	char a[64], b[64];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/rdma.conf", dir);
	snprintf(b, sizeof(b), "%s/opensm.conf", dir);
	{
		const char *const paths[] = { a, b, NULL };

		ck_assert_ptr_null(cfg_default_file(paths));
		ck_assert_int_eq(mkdir(a, 0700), 0);	/* a directory: no */
		ck_assert_ptr_null(cfg_default_file(paths));
		fclose(fopen(b, "w"));
		ck_assert_str_eq(cfg_default_file(paths), b);
		ck_assert_int_eq(rmdir(a), 0);
		fclose(fopen(a, "w"));
		ck_assert_str_eq(cfg_default_file(paths), a);
	}
	unlink(a);
	unlink(b);
	rmdir(dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");

	tcase_add_test(tc, table_has_every_opensm_key);
	tcase_add_test(tc, every_type);
	tcase_add_test(tc, listen_addresses);
	tcase_add_test(tc, apply_to_sm_config);
	tcase_add_test(tc, reader_lines);
	tcase_add_test(tc, bad_files);
	tcase_add_test(tc, unknown_key_only_warns);
	tcase_add_test(tc, missing_file);
	tcase_add_test(tc, opensm_c_output);
	tcase_add_test(tc, cmdline_over_file);
	tcase_add_test(tc, create_round_trip);
	tcase_add_test(tc, unimplemented_listed);
	tcase_add_test(tc, health_keys);
	tcase_add_test(tc, options_table);
	tcase_add_test(tc, file_helpers);
	tcase_add_test(tc, file_write_keeps);
	tcase_add_test(tc, file_write_regular_only);
	tcase_add_test(tc, file_read_stable);
	tcase_add_test(tc, default_file);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
