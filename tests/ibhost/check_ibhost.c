/*
 * check_ibhost.c - ibhost on fake hosts: show (tables and JSON), check,
 * plan and apply with the three network backends against golden files,
 * idempotence, user content and backups; then the pieces on their own
 * (marked blocks, nfs.conf edits, diffs, the parser).  The rejected
 * configurations are in check_bad.c.
 */
#include "config.h"

#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/ibhost/fixture.h"
#include "tools/ibhost/conf.h"
#include "tools/ibhost/diff.h"
#include "tools/ibhost/render.h"
#include "tools/ibhost/runner.h"

Suite *bad_suite(void);

/* ---------------------------------------------------------------------
 * A small JSON reader: validates the text and lists every scalar as
 * "path=value" (strings unquoted), e.g. "devices.0.ports.1.port=2".
 */

struct json {
	const char	*s;
	struct sbuf	 out;
};

static void j_ws(struct json *j)
{
	while (*j->s == ' ' || *j->s == '\n' || *j->s == '\t' || *j->s == '\r')
		j->s++;
}

static bool j_string(struct json *j, struct sbuf *val)
{
	if (*j->s != '"')
		return false;
	for (j->s++; *j->s != '"'; j->s++) {
		unsigned char c = (unsigned char)*j->s;

		if (c < 0x20)
			return false;
		if (c != '\\') {
			if (val)
				sb_putc(val, (char)c);
			continue;
		}
		j->s++;
		if (*j->s == 'u') {
			for (int i = 1; i <= 4; i++)
				if (!isxdigit((unsigned char)j->s[i]))
					return false;
			j->s += 4;
			if (val)
				sb_putc(val, '?');
		} else if (strchr("\"\\/bfnrt", *j->s) && *j->s) {
			if (val)
				sb_putc(val, *j->s);
		} else {
			return false;
		}
	}
	j->s++;
	return true;
}

static bool j_value(struct json *j, const char *path);

static bool j_scalar(struct json *j, const char *path)
{
	const char *start = j->s;

	if (!strncmp(j->s, "true", 4) || !strncmp(j->s, "null", 4))
		j->s += 4;
	else if (!strncmp(j->s, "false", 5))
		j->s += 5;
	else {
		if (*j->s == '-')
			j->s++;
		if (!isdigit((unsigned char)*j->s))
			return false;
		if (*j->s == '0' && isdigit((unsigned char)j->s[1]))
			return false;
		while (isdigit((unsigned char)*j->s))
			j->s++;
		if (*j->s == '.') {
			j->s++;
			if (!isdigit((unsigned char)*j->s))
				return false;
			while (isdigit((unsigned char)*j->s))
				j->s++;
		}
	}
	sb_printf(&j->out, "%s=%.*s\n", path, (int)(j->s - start), start);
	return true;
}

static bool j_value(struct json *j, const char *path)
{
	char sub[256];
	bool ok = true;
	int n = 0;

	j_ws(j);
	if (*j->s == '{' || *j->s == '[') {
		bool obj = *j->s == '{';
		char close = obj ? '}' : ']';

		j->s++;
		j_ws(j);
		if (*j->s == close) {
			j->s++;
			return true;
		}
		for (;;) {
			struct sbuf key = { 0 };

			j_ws(j);
			if (obj) {
				ok = j_string(j, &key);
				j_ws(j);
				ok = ok && *j->s++ == ':';
				snprintf(sub, sizeof(sub), "%s%s%s", path,
					 *path ? "." : "", sb_str(&key));
			} else {
				snprintf(sub, sizeof(sub), "%s%s%d", path,
					 *path ? "." : "", n);
			}
			sb_free(&key);
			if (!ok || !j_value(j, sub))
				return false;
			n++;
			j_ws(j);
			if (*j->s == ',') {
				j->s++;
				continue;
			}
			if (*j->s++ != close)
				return false;
			return true;
		}
	}
	if (*j->s == '"') {
		struct sbuf v = { 0 };

		ok = j_string(j, &v);
		sb_printf(&j->out, "%s=%s\n", path, sb_str(&v));
		sb_free(&v);
		return ok;
	}
	return j_scalar(j, path);
}

/* NULL if text is not one JSON value; else the "path=value" lines. */
static char *json_flatten(const char *text)
{
	struct json j = { .s = text };

	if (!j_value(&j, ""))
		goto bad;
	j_ws(&j);
	if (*j.s)
		goto bad;
	return sb_steal(&j.out);
bad:
	sb_free(&j.out);
	return NULL;
}

/* Whether path matches pattern, each '*' in it standing for a number. */
static bool path_match(const char *path, const char *pattern)
{
	for (; *pattern; pattern++) {
		if (*pattern == '*') {
			if (!isdigit((unsigned char)*path))
				return false;
			while (isdigit((unsigned char)*path))
				path++;
		} else if (*path++ != *pattern) {
			return false;
		}
	}
	return *path == '\0';
}

/* Values of the lines whose path matches pattern, comma-separated. */
static char *json_pick(const char *flat, const char *pattern)
{
	struct sbuf b = { 0 };
	struct lines l;

	lines_split(&l, flat);
	for (size_t i = 0; i < l.n; i++) {
		char *eq = strchr(l.v[i], '=');

		if (!eq)
			continue;
		*eq = '\0';
		if (path_match(l.v[i], pattern))
			sb_printf(&b, "%s%s", b.len ? "," : "", eq + 1);
	}
	lines_free(&l);
	return sb_steal(&b);
}

static void assert_pick(const char *flat, const char *pattern,
			const char *want)
{
	char *got = json_pick(flat, pattern);

	ck_assert_msg(!strcmp(got, want), "%s: got \"%s\", want \"%s\"",
		      pattern, got, want);
	free(got);
}

START_TEST(json_reader_rejects_bad_json)
{
	const char *bad[] = { "{", "{\"a\" 1}", "[1,]", "{\"a\":01}",
			      "\"x", "[1] 2", "{\"a\":\"\t\"}", "nul" };
	char *flat;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		ck_assert_msg(json_flatten(bad[i]) == NULL, "%s", bad[i]);
	flat = json_flatten("{\"a\": [1, {\"b\": \"x\\\"y\"}], \"c\": null}");
	ck_assert_ptr_nonnull(flat);
	ck_assert_str_eq(flat, "a.0=1\na.1.b=x\"y\nc=null\n");
	free(flat);
}
END_TEST

/* ---------------------------------------------------------------------
 * show
 */

START_TEST(show_table_lists_the_tree)
{
	struct fx f;
	char *out, *err;

	fx_init(&f);
	fx_host(&f);
	ck_assert_int_eq(fx_run(&f, &out, &err, "show", NULL), 0);
	ck_assert_str_eq(err, "");
	fx_golden_text("show", "show.txt", out);
	free(out);
	free(err);
	fx_free(&f);
}
END_TEST

START_TEST(show_json_lists_exactly_the_tree)
{
	struct fx f;
	char *out, *err, *flat;
	FILE *py;

	fx_init(&f);
	fx_host(&f);
	ck_assert_int_eq(fx_run(&f, &out, &err, "show", "--json", NULL), 0);
	ck_assert_str_eq(err, "");
	flat = json_flatten(out);
	ck_assert_msg(flat != NULL, "not JSON:\n%s", out);
	assert_pick(flat, "devices.*.name", "mlx4_0,mlx5_0,mlx5_1");
	assert_pick(flat, "devices.0.ports.*.port", "1,2");
	assert_pick(flat, "devices.1.ports.*.port", "1");
	assert_pick(flat, "devices.2.ports.*.port", "1");
	assert_pick(flat, "devices.*.ports.*.link_layer",
		    "InfiniBand,InfiniBand,Ethernet,InfiniBand");
	assert_pick(flat, "devices.*.ports.*.port_guid",
		    GUID_MLX4_P1 "," GUID_MLX4_P2 "," GUID_MLX5_ETH ","
		    GUID_MLX5_IB);
	assert_pick(flat, "devices.0.ports.*.lid", "5,0");
	assert_pick(flat, "devices.0.ports.*.sm_lid", "1,0");
	assert_pick(flat, "devices.0.ports.*.state", "ACTIVE,DOWN");
	assert_pick(flat, "devices.0.node_guid", "0x0002c903003178f0");
	assert_pick(flat, "devices.2.ports.0.active_mtu", "4096");
	assert_pick(flat, "ipoib.*.name", "ib0,ib0.8002,ib1,ib2");
	assert_pick(flat, "ipoib.*.parent", "null,ib0,null,null");
	assert_pick(flat, "ipoib.*.pkey", "0xffff,0x8002,0xffff,0xffff");
	assert_pick(flat, "ipoib.*.device", "mlx4_0,mlx4_0,mlx4_0,mlx5_1");
	assert_pick(flat, "ipoib.*.port", "1,1,2,1");
	assert_pick(flat, "devices.1.ports.0.netdevs.*", "enp1s0f0");
	assert_pick(flat, "devices.0.ports.0.netdevs.*", "ib0,ib0.8002");
	fx_golden_text("show", "show.json", out);

	/* And a second opinion when python3 is around. */
	py = popen("python3 -m json.tool >/dev/null 2>&1", "w");
	if (py) {
		int rc;

		fputs(out, py);
		rc = pclose(py);
		/* 127: no python3 here; anything else must be success */
		ck_assert_msg(rc == 0 || WEXITSTATUS(rc) == 127,
			      "python3 -m json.tool rejected the output");
	}
	free(flat);
	free(out);
	free(err);
	fx_free(&f);
}
END_TEST

START_TEST(show_empty_host)
{
	struct fx f;
	char *out, *flat;

	fx_init(&f);
	ck_assert_int_eq(fx_run(&f, &out, NULL, "show", NULL), 0);
	ck_assert_str_eq(out, "no RDMA devices\n\nno IPoIB interfaces\n");
	free(out);
	ck_assert_int_eq(fx_run(&f, &out, NULL, "show", "--json", NULL), 0);
	ck_assert_str_eq(out, "{\n  \"devices\": [],\n  \"ipoib\": []\n}\n");
	flat = json_flatten(out);
	ck_assert_ptr_nonnull(flat);
	free(flat);
	free(out);
	fx_free(&f);
}
END_TEST

/* ---------------------------------------------------------------------
 * check, plan, apply
 */

START_TEST(check_reports_what_apply_fixes)
{
	struct fx f;
	const char *cfg;
	char *out, *err, *want;

	fx_init(&f);
	fx_host(&f);
	cfg = fx_config_file(&f, "nm.ini");
	ck_assert_int_eq(fx_run(&f, &out, &err, "-c", cfg, "check", NULL), 1);
	ck_assert_str_eq(out, "");
	want = xasprintf(
		 "%s:41: load: module xprtrdma (rpcrdma.ko) is not loaded; "
		 "expected it loaded (ibhost apply runs modprobe)\n"
		 "%s:41: load: module svcrdma (rpcrdma.ko) is not loaded; "
		 "expected it loaded (ibhost apply runs modprobe)\n"
		 "%s:44: memlock unlimited: the hard limit of @rdma is 65536 "
		 "KiB (%s/etc/security/limits.conf:5); expected unlimited "
		 "(ibhost apply writes /etc/security/limits.d/rdma.conf)\n",
		 cfg, cfg, cfg, f.root);
	ck_assert_str_eq(err, want);
	free(want);
	free(out);
	free(err);
	fx_free(&f);
}
END_TEST

START_TEST(plan_shows_every_change_and_writes_nothing)
{
	struct fx f;
	const char *cfg;
	char *out, *err, *before, *after;

	fx_init(&f);
	fx_host(&f);
	cfg = fx_config_file(&f, "nm.ini");
	before = fx_snapshot(&f);
	ck_assert_int_eq(fx_run(&f, &out, &err, "-c", cfg, "plan", NULL), 0);
	ck_assert_str_eq(err, "");
	fx_golden_text("nm", "plan.diff", out);
	after = fx_snapshot(&f);
	ck_assert_str_eq(before, after);
	ck_assert_str_eq(f.cmdlog, "");
	free(before);
	free(after);
	free(out);
	free(err);
	fx_free(&f);
}
END_TEST

START_TEST(apply_networkmanager)
{
	struct fx f;
	const char *cfg;
	char *out, *err, *text;

	fx_init(&f);
	fx_host(&f);
	cfg = fx_config_file(&f, "nm.ini");
	ck_assert_int_eq(fx_run(&f, &out, &err, "-c", cfg, "apply", NULL), 0);
	ck_assert_str_eq(err, "");
	fx_golden_text("nm", "apply.out", out);
	fx_golden_tree(&f, "nm", "etc");
	fx_golden_tree(&f, "nm", "sys/kernel/config");
	ck_assert_str_eq(f.cmdlog,
			 "modprobe xprtrdma\n"
			 "rdma link add rxe0 type rxe netdev eth0\n"
			 "udevadm control --reload\nnmcli connection reload\n");

	/* keyfiles are for root's eyes only */
	ck_assert_uint_eq(fx_mode(&f, "etc/NetworkManager/system-connections/"
				  "mlx4_ib0.nmconnection"), 0600);
	ck_assert_uint_eq(fx_mode(&f, "etc/NetworkManager/system-connections/"
				  "mlx4_ib0.8003.nmconnection"), 0600);
	/* user content survives; backups hold the files as they were */
	text = fx_read(&f, "etc/nfs.conf");
	ck_assert_ptr_nonnull(strstr(text, "threads=16\n# host=\n"));
	ck_assert_ptr_nonnull(strstr(text, "[mountd]\nmanage-gids=y\n"));
	free(text);
	text = fx_read(&f, "etc/nfs.conf.ibhost-bak");
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_null(strstr(text, "\nrdma-port=20049\n"));
	free(text);
	text = fx_read(&f, "etc/security/limits.d/rdma.conf");
	ck_assert_ptr_nonnull(strstr(text, "# configuration for rdma tuning\n"
				     "*       soft    memlock         unlimited"));
	free(text);
	ck_assert(fx_exists(&f, "etc/security/limits.d/rdma.conf.ibhost-bak"));
	ck_assert(fx_exists(&f, "etc/udev/rules.d/70-persistent-ipoib.rules."
			    "ibhost-bak"));
	ck_assert(!fx_exists(&f, STALE_KEYFILE));
	ck_assert(fx_exists(&f, "etc/NetworkManager/system-connections/"
			    ".old_ib.nmconnection.ibhost-bak"));
	ck_assert(fx_exists(&f, "etc/NetworkManager/system-connections/"
			    "eth0.nmconnection"));
	free(out);
	free(err);
	fx_free(&f);
}
END_TEST

START_TEST(second_apply_changes_nothing)
{
	struct fx f;
	const char *cfg;
	char *out, *err, *before, *after, *log;

	fx_init(&f);
	fx_host(&f);
	cfg = fx_config_file(&f, "nm.ini");
	ck_assert_int_eq(fx_run(&f, NULL, NULL, "-c", cfg, "apply", NULL), 0);
	before = fx_snapshot(&f);
	log = xstrdup(f.cmdlog);

	ck_assert_int_eq(fx_run(&f, &out, &err, "-c", cfg, "apply", NULL), 0);
	ck_assert_str_eq(out, "no changes\n");
	ck_assert_str_eq(err, "");
	after = fx_snapshot(&f);
	ck_assert_str_eq(before, after);	/* inodes too: no rewrite */
	ck_assert_str_eq(f.cmdlog, log);	/* no command either */
	free(out);
	free(err);

	ck_assert_int_eq(fx_run(&f, &out, &err, "-c", cfg, "plan", NULL), 0);
	ck_assert_str_eq(out, "# no changes\n");
	free(out);
	free(err);
	ck_assert_int_eq(fx_run(&f, &out, &err, "-c", cfg, "check", NULL), 0);
	ck_assert_str_eq(err, "");
	ck_assert_ptr_nonnull(strstr(out, ": configuration OK; 0 changes "
				     "pending\n"));
	free(out);
	free(err);
	free(before);
	free(after);
	free(log);
	fx_free(&f);
}
END_TEST

START_TEST(switch_to_ifupdown)
{
	struct fx f;
	const char *nm, *ifu;
	char *out, *err, *before, *after, *warn;

	fx_init(&f);
	fx_host(&f);
	nm = fx_config_file(&f, "nm.ini");
	ifu = fx_config_file(&f, "ifupdown.ini");
	ck_assert_int_eq(fx_run(&f, NULL, NULL, "-c", nm, "apply", NULL), 0);
	/* no [modules]: the NFS server may lack svcrdma */
	warn = xasprintf("%s:46: warning: [nfs]: NFS over RDMA needs "
			 "svcrdma; expected it in [modules] load\n", ifu);
	ck_assert_int_eq(fx_run(&f, &out, &err, "-c", ifu, "plan", NULL), 0);
	ck_assert_str_eq(err, warn);
	fx_golden_text("ifupdown", "plan.diff", out);
	free(out);
	free(err);
	ck_assert_int_eq(fx_run(&f, &out, &err, "-c", ifu, "apply", NULL), 0);
	ck_assert_str_eq(err, warn);
	free(warn);
	fx_golden_text("ifupdown", "apply.out", out);
	fx_golden_tree(&f, "ifupdown", "etc");
	free(out);
	free(err);

	before = fx_snapshot(&f);
	ck_assert_int_eq(fx_run(&f, &out, NULL, "-c", ifu, "apply", NULL), 0);
	ck_assert_str_eq(out, "no changes\n");
	after = fx_snapshot(&f);
	ck_assert_str_eq(before, after);
	free(before);
	free(after);
	free(out);
	fx_free(&f);
}
END_TEST

START_TEST(apply_networkd)
{
	struct fx f;
	const char *cfg;
	char *out, *err;

	fx_init(&f);
	fx_host(&f);
	cfg = fx_config_file(&f, "networkd.ini");
	ck_assert_int_eq(fx_run(&f, &out, &err, "-c", cfg, "apply", NULL), 0);
	ck_assert_str_eq(err, "");
	fx_golden_text("networkd", "apply.out", out);
	fx_golden_tree(&f, "networkd", "etc/systemd");
	free(out);
	ck_assert_int_eq(fx_run(&f, &out, NULL, "-c", cfg, "apply", NULL), 0);
	ck_assert_str_eq(out, "no changes\n");
	free(out);
	free(err);
	fx_free(&f);
}
END_TEST

START_TEST(dry_run_prints_commands)
{
	struct fx f;
	const char *cfg;
	char *out;

	fx_init(&f);
	fx_host(&f);
	fx_remove(&f, STALE_KEYFILE);
	cfg = fx_config(&f, "soft.ini", "[softrdma siw0]\ntype = siw\n"
			"netdev = eth0\n[modules]\nload = rdma_ucm ib_isert\n");
	ck_assert_int_eq(fx_run(&f, &out, NULL, "-n", "-c", cfg, "apply",
				NULL), 0);
	ck_assert_str_eq(out,
			 "updated /etc/rdma/modules/rdma.conf (backup "
			 "/etc/rdma/modules/rdma.conf.ibhost-bak)\n"
			 "would run: modprobe ib_isert\n"
			 "would run: rdma link add siw0 type siw netdev eth0\n");
	ck_assert_str_eq(f.cmdlog, "");
	free(out);
	fx_free(&f);
}
END_TEST

START_TEST(roce_mode_needs_configfs_dir)
{
	struct fx f;
	const char *cfg;
	char *out, *err, *want;

	fx_init(&f);
	fx_host(&f);
	fx_remove(&f, STALE_KEYFILE);
	cfg = fx_config(&f, "roce.ini", "[roce mlx5_0 1]\nmode = roce v2\n");
	/* the mode is already RoCE v2: nothing to do */
	ck_assert_int_eq(fx_run(&f, &out, NULL, "-c", cfg, "plan", NULL), 0);
	ck_assert_str_eq(out, "# no changes\n");
	free(out);

	/* configfs mounted, device directory not created yet */
	fx_remove(&f, "sys/kernel/config/rdma_cm/mlx5_0");
	ck_assert_int_eq(fx_run(&f, &out, &err, "-c", cfg, "plan", NULL), 0);
	ck_assert_str_eq(err, "");
	ck_assert_str_eq(out,
			 "# mkdir /sys/kernel/config/rdma_cm/mlx5_0\n"
			 "# write /sys/kernel/config/rdma_cm/mlx5_0/ports/1/"
			 "default_roce_mode\n"
			 "--- /dev/null\n"
			 "+++ /sys/kernel/config/rdma_cm/mlx5_0/ports/1/"
			 "default_roce_mode\n"
			 "@@ -0,0 +1 @@\n+RoCE v2\n");
	free(out);
	free(err);

	/* no configfs at all */
	fx_remove(&f, "sys/kernel/config");
	ck_assert_int_eq(fx_run(&f, &out, &err, "-c", cfg, "plan", NULL), 1);
	want = xasprintf("%s:1: [roce mlx5_0 1]: expected configfs at "
			 "/sys/kernel/config/rdma_cm (mount -t configfs none "
			 "/sys/kernel/config; modprobe rdma_cm)\n"
			 "ibhost: 1 error; nothing planned\n", cfg);
	ck_assert_str_eq(err, want);
	ck_assert_str_eq(out, "");
	free(want);
	free(out);
	free(err);
	fx_free(&f);
}
END_TEST

START_TEST(user_keyfile_replaced_keeps_uuid_and_backup)
{
	static const char user[] =
		"[connection]\nid=mlx4_ib0\n"
		"uuid=0b6c7e2a-5d3f-4a61-9b51-2f0f1f7e3c11\n"
		"type=infiniband\n";
	struct fx f;
	const char *cfg;
	char *text;

	fx_init(&f);
	fx_host(&f);
	fx_write(&f, "etc/NetworkManager/system-connections/"
		 "mlx4_ib0.nmconnection", user);
	cfg = fx_config(&f, "one.ini", "[ipoib mlx4_ib0]\nguid = "
			GUID_MLX4_P1 "\n");
	ck_assert_int_eq(fx_run(&f, NULL, NULL, "-c", cfg, "apply", NULL), 0);
	text = fx_read(&f, "etc/NetworkManager/system-connections/"
		       "mlx4_ib0.nmconnection");
	ck_assert_ptr_nonnull(strstr(text, "\nuuid=0b6c7e2a-5d3f-4a61-9b51-"
				     "2f0f1f7e3c11\n"));
	ck_assert_ptr_nonnull(strstr(text, "transport-mode=datagram\n"));
	free(text);
	text = fx_read(&f, "etc/NetworkManager/system-connections/"
		       ".mlx4_ib0.nmconnection.ibhost-bak");
	ck_assert_str_eq(text, user);
	free(text);
	fx_free(&f);
}
END_TEST

START_TEST(block_removed_when_section_goes)
{
	struct fx f;
	const char *cfg;
	char *text, *orig;

	fx_init(&f);
	fx_host(&f);
	orig = fx_read(&f, "etc/rdma/modules/rdma.conf");
	cfg = fx_config(&f, "m.ini", "[modules]\nload = ib_uverbs\n");
	ck_assert_int_eq(fx_run(&f, NULL, NULL, "-c", cfg, "apply", NULL), 0);
	text = fx_read(&f, "etc/rdma/modules/rdma.conf");
	ck_assert_ptr_nonnull(strstr(text, "# BEGIN ibhost"));
	free(text);
	cfg = fx_config(&f, "empty.ini", "# nothing\n");
	ck_assert_int_eq(fx_run(&f, NULL, NULL, "-c", cfg, "apply", NULL), 0);
	text = fx_read(&f, "etc/rdma/modules/rdma.conf");
	ck_assert_str_eq(text, orig);
	free(text);
	free(orig);
	fx_free(&f);
}
END_TEST

START_TEST(usage_errors)
{
	struct fx f;
	char *out, *err;

	fx_init(&f);
	ck_assert_int_eq(fx_run(&f, &out, &err, "frobnicate", NULL), 2);
	ck_assert_ptr_nonnull(strstr(err, "ibhost: unknown command "
				     "\"frobnicate\": expected show, check, "
				     "plan or apply\nusage: ibhost"));
	free(out);
	free(err);
	ck_assert_int_eq(fx_run(&f, &out, &err, "plan", "--json", NULL), 2);
	free(out);
	free(err);
	ck_assert_int_eq(fx_run(&f, &out, &err, NULL), 2);
	free(out);
	free(err);
	ck_assert_int_eq(fx_run(&f, &out, &err, "check", "-c", NULL), 2);
	free(out);
	free(err);
	ck_assert_int_eq(fx_run(&f, &out, &err, "--help", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "usage: ibhost"));
	free(out);
	free(err);
	/* no configuration file */
	ck_assert_int_eq(fx_run(&f, &out, &err, "check", NULL), 1);
	ck_assert_ptr_nonnull(strstr(err, "/etc/ibhost.ini: cannot read: No "
				     "such file or directory\n"));
	free(out);
	free(err);
	fx_free(&f);
}
END_TEST

/* ---------------------------------------------------------------------
 * Pieces: blocks, nfs.conf, diffs, the parser, quoting
 */

static char *merge(const char *old, const char *body, int *bad)
{
	char *out = NULL;

	*bad = 0;
	ck_assert_int_eq(block_merge(old, body, &out, bad), *bad ? -74 : 0);
	return out;
}

START_TEST(block_merge_cases)
{
	static const char blk[] =
		"# BEGIN ibhost: managed by ibhost(8); \"ibhost apply\" "
		"rewrites this block\nx\n# END ibhost\n";
	char *out, *want;
	int bad;

	out = merge(NULL, "x\n", &bad);
	ck_assert_str_eq(out, blk);
	free(out);
	/* appended after user content, one blank line between */
	out = merge("user line", "x\n", &bad);
	want = xasprintf("user line\n\n%s", blk);
	ck_assert_str_eq(out, want);
	free(out);
	/* replaced in place, lines around it kept */
	out = merge("a\n# BEGIN ibhost old\nold\n# END ibhost\nb\n", "x\n",
		    &bad);
	ck_assert_str_eq(out, "a\n# BEGIN ibhost: managed by ibhost(8); "
			 "\"ibhost apply\" rewrites this block\nx\n"
			 "# END ibhost\nb\n");
	free(out);
	/* removed with the separator it was appended with */
	out = merge(want, NULL, &bad);
	ck_assert_str_eq(out, "user line\n");
	free(out);
	free(want);
	/* a file holding only the block goes away */
	out = merge(blk, NULL, &bad);
	ck_assert_ptr_null(out);
	/* nothing to do without a block */
	out = merge("keep\n", NULL, &bad);
	ck_assert_str_eq(out, "keep\n");
	free(out);
	ck_assert_int_eq(block_merge("a\n# BEGIN ibhost\nb\n", "x\n", &out,
				     &bad), -74);
	ck_assert_int_eq(bad, 2);
	ck_assert_int_eq(block_merge("# END ibhost\n", "x\n", &out, &bad), -74);
	ck_assert_int_eq(bad, 1);
	ck_assert_int_eq(block_merge("# BEGIN ibhost\n# END ibhost\n"
				     "# BEGIN ibhost\n# END ibhost\n", NULL,
				     &out, &bad), -74);
	ck_assert_int_eq(bad, 3);
}
END_TEST

static char *nfs(const char *ini, const char *old)
{
	struct ibh_conf c;
	struct diags d = { 0 };
	FILE *fp = fmemopen((void *)ini, strlen(ini), "r");
	char *out;

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(conf_load_fp(&c, fp, "t.ini", &d), 0);
	fclose(fp);
	out = render_nfs(&c, old);
	conf_free(&c);
	diags_free(&d);
	return out;
}

START_TEST(nfs_conf_edits)
{
	char *out;

	out = nfs("[nfs]\n", NULL);
	ck_assert_str_eq(out, "[nfsd]\nrdma=y\nrdma-port=20049\n");
	free(out);
	/* appended after the last setting of the first [nfsd] */
	out = nfs("[nfs]\nrdma-port = 4791\n",
		  "[nfsd]\nthreads=8\n\n# a comment\n[exportd]\nx=1\n");
	ck_assert_str_eq(out, "[nfsd]\nthreads=8\nrdma=y\nrdma-port=4791\n\n"
			 "# a comment\n[exportd]\nx=1\n");
	free(out);
	/* values rewritten in place, the user's spacing and "yes" kept */
	out = nfs("[nfs]\nrdma-port = 4791\n",
		  "[NFSD]\n  rdma = yes\n rdma-port = 20049\n");
	ck_assert_str_eq(out, "[NFSD]\n  rdma = yes\n rdma-port = 4791\n");
	free(out);
	/* a section of its own when the file has no [nfsd] */
	out = nfs("[nfs]\nrdma = no\n", "[general]\npipefs-directory=/x");
	ck_assert_str_eq(out, "[general]\npipefs-directory=/x\n\n[nfsd]\n"
			 "rdma=n\nrdma-port=20049\n");
	free(out);
	/* [nfsd] keys elsewhere are not ours */
	out = nfs("[nfs]\n", "[mountd]\nrdma-port=1\n[nfsd]\n");
	ck_assert_str_eq(out, "[mountd]\nrdma-port=1\n[nfsd]\nrdma=y\n"
			 "rdma-port=20049\n");
	free(out);
	ck_assert_ptr_null(nfs("[global]\n", "[nfsd]\n"));
}
END_TEST

static char *udiff(const char *a, const char *b)
{
	struct sbuf s = { 0 };

	diff_unified(&s, "a", "b", a, b);
	return sb_steal(&s);
}

START_TEST(diff_cases)
{
	char *d;
	struct sbuf big_a = { 0 }, big_b = { 0 };

	d = udiff("same\n", "same\n");
	ck_assert_str_eq(d, "");
	free(d);
	d = udiff(NULL, "x\ny\n");
	ck_assert_str_eq(d, "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n");
	free(d);
	d = udiff("x\ny\n", NULL);
	ck_assert_str_eq(d, "--- a\n+++ b\n@@ -1,2 +0,0 @@\n-x\n-y\n");
	free(d);
	d = udiff("1\n2\n3\n4\n5\n6\n7\n8\n", "1\n2\n3\n4\nfive\n6\n7\n8\n");
	ck_assert_str_eq(d, "--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n"
			 "+five\n 6\n 7\n 8\n");
	free(d);
	d = udiff("a\nb", "a\nb\n");
	ck_assert_str_eq(d, "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n"
			 "\\ No newline at end of file\n+b\n");
	free(d);
	/* changes far apart make two hunks */
	for (int i = 0; i < 20; i++) {
		sb_printf(&big_a, "%d\n", i);
		sb_printf(&big_b, "%d\n", i == 1 ? 100 : i == 18 ? 118 : i);
	}
	d = udiff(sb_str(&big_a), sb_str(&big_b));
	ck_assert_str_eq(d, "--- a\n+++ b\n@@ -1,5 +1,5 @@\n 0\n-1\n+100\n"
			 " 2\n 3\n 4\n@@ -16,5 +16,5 @@\n 15\n 16\n 17\n-18\n"
			 "+118\n 19\n");
	free(d);
	sb_free(&big_a);
	sb_free(&big_b);
}
END_TEST

START_TEST(parser_builds_the_model)
{
	char path[4096];
	struct ibh_conf c;
	struct diags d = { 0 };
	const struct ipoib_conf *ip;

	snprintf(path, sizeof(path), "%s/conf/nm.ini", IBHOST_TESTDIR);
	ck_assert_int_eq(conf_load(&c, path, &d), 0);
	ck_assert_uint_eq(d.n, 0);
	ck_assert_int_eq(c.backend, BACKEND_NETWORKMANAGER);
	ck_assert_uint_eq(c.nipoib, 4);
	ip = &c.ipoib[0];
	ck_assert_str_eq(ip->name, "mlx4_ib0");
	ck_assert(ip->guid == 0x0002c903003178f1ull);
	ck_assert_uint_eq(ip->npkeys, 2);
	ck_assert_str_eq(c.ipoib[1].name, "mlx4_ib0.8002");
	ck_assert(!c.ipoib[1].implied);
	ck_assert_uint_eq(c.ipoib[1].pkey, 0x8002);
	ck_assert_int_eq(ipoib_mode_of(&c, &c.ipoib[1]), IPOIB_DATAGRAM);
	ck_assert_uint_eq(c.ipoib[1].v4.naddr, 2);
	/* the implied child runs like its parent */
	ck_assert_str_eq(c.ipoib[2].name, "mlx4_ib0.8003");
	ck_assert(c.ipoib[2].implied);
	ck_assert_int_eq(ipoib_mode_of(&c, &c.ipoib[2]), IPOIB_CONNECTED);
	ck_assert_uint_eq(ipoib_mtu_of(&c, &c.ipoib[2]), 65520);
	ck_assert(c.ipoib[3].guid == 0x98039b0300a1b2c3ull);
	ck_assert_int_eq(c.ipoib[3].v4.method, IP_AUTO);
	ck_assert_uint_eq(c.nroce, 1);
	ck_assert_int_eq(c.roce[0].mode, ROCE_V1);
	ck_assert_uint_eq(c.nsoft, 1);
	ck_assert_str_eq(c.soft[0].netdev, "eth0");
	ck_assert_uint_eq(c.modules.mask, (1u << 3) | (1u << 4) | (1u << 6) |
			  (1u << 7));
	ck_assert(c.limits.memlock_kib == IBH_MEMLOCK_UNLIMITED);
	ck_assert_str_eq(c.limits.group, "rdma");
	ck_assert_uint_eq(c.nfs.port, 20049);
	ck_assert(c.nfs.rdma);
	conf_free(&c);
	diags_free(&d);
}
END_TEST

/* The commented example in doc/ stays a valid file. */
START_TEST(example_config_parses)
{
	char path[4096];
	struct ibh_conf c;
	struct diags d = { 0 };

	snprintf(path, sizeof(path), "%s/../../doc/ibhost.ini.example",
		 IBHOST_TESTDIR);
	ck_assert_int_eq(conf_load(&c, path, &d), 0);
	ck_assert_uint_eq(d.n, 0);
	ck_assert_uint_eq(c.nipoib, 2);
	ck_assert_uint_eq(c.nroce, 1);
	ck_assert(c.modules.present && c.limits.present && c.nfs.present);
	conf_free(&c);
	diags_free(&d);
}
END_TEST

/* Without hook and dry run the runner forks and execs for real. */
START_TEST(runner_runs_programs)
{
	const char *ok[] = { "true", NULL };
	const char *fail[] = { "sh", "-c", "exit 3", NULL };
	const char *missing[] = { "/nonexistent/ibhost-test", NULL };
	struct runner r = { 0 };

	ck_assert_int_eq(runner_run(&r, ok), 0);
	ck_assert_int_eq(runner_run(&r, fail), 3);
	ck_assert_int_eq(runner_run(&r, missing), 127);
	r.dry_run = true;
	ck_assert_int_eq(runner_run(&r, fail), 0);
}
END_TEST

START_TEST(config_edge_cases)
{
	static const char ini[] =
		"\xef\xbb\xbf# a BOM, then indented keys and quotes\n"
		"[IPoIB ib0]\n  guid = \"0002:c903:0031:78f1\"\n"
		"  pkeys = 2 ; inline comment\n"
		"[ipoib ib0.8002]\nMODE = Connected\n";
	struct ibh_conf c;
	struct diags d = { 0 };
	FILE *fp = fmemopen((void *)ini, strlen(ini), "r");
	char dir[] = "/tmp/check_ibhost_dir.XXXXXX";

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_eq(conf_load_fp(&c, fp, "e.ini", &d), 0);
	fclose(fp);
	ck_assert_uint_eq(d.n, 0);
	ck_assert_uint_eq(c.nipoib, 2);
	ck_assert(c.ipoib[0].guid == 0x0002c903003178f1ull);
	ck_assert_str_eq(c.ipoib[1].name, "ib0.8002");
	ck_assert_int_eq(c.ipoib[1].mode, IPOIB_CONNECTED);
	conf_free(&c);

	/* a directory is not an empty configuration */
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(conf_load(&c, dir, &d), -EINVAL);
	ck_assert_uint_eq(d.n, 1);
	ck_assert_str_eq(d.v[0].msg, "cannot read: Is a directory");
	conf_free(&c);
	diags_free(&d);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

START_TEST(runner_quotes_for_the_shell)
{
	const char *argv[] = { "rdma", "link", "add", "a b", "it's", "", NULL };
	struct sbuf b = { 0 };

	runner_format(&b, argv);
	ck_assert_str_eq(sb_str(&b), "rdma link add 'a b' 'it'\\''s' ''");
	sb_free(&b);
}
END_TEST

static Suite *ibhost_suite(void)
{
	Suite *s = suite_create("ibhost");
	TCase *tc;

	tc = tcase_create("show");
	tcase_add_test(tc, json_reader_rejects_bad_json);
	tcase_add_test(tc, show_table_lists_the_tree);
	tcase_add_test(tc, show_json_lists_exactly_the_tree);
	tcase_add_test(tc, show_empty_host);
	suite_add_tcase(s, tc);

	tc = tcase_create("plan_apply");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, check_reports_what_apply_fixes);
	tcase_add_test(tc, plan_shows_every_change_and_writes_nothing);
	tcase_add_test(tc, apply_networkmanager);
	tcase_add_test(tc, second_apply_changes_nothing);
	tcase_add_test(tc, switch_to_ifupdown);
	tcase_add_test(tc, apply_networkd);
	tcase_add_test(tc, dry_run_prints_commands);
	tcase_add_test(tc, roce_mode_needs_configfs_dir);
	tcase_add_test(tc, user_keyfile_replaced_keeps_uuid_and_backup);
	tcase_add_test(tc, block_removed_when_section_goes);
	tcase_add_test(tc, usage_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("pieces");
	tcase_add_test(tc, block_merge_cases);
	tcase_add_test(tc, nfs_conf_edits);
	tcase_add_test(tc, diff_cases);
	tcase_add_test(tc, parser_builds_the_model);
	tcase_add_test(tc, example_config_parses);
	tcase_add_test(tc, runner_quotes_for_the_shell);
	tcase_add_test(tc, runner_runs_programs);
	tcase_add_test(tc, config_edge_cases);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(ibhost_suite());
	int failed;

	srunner_add_suite(sr, bad_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
