/*
 * fixture.c - fake hosts, in-process runs of ibhost and golden files
 * for check_ibhost (see fixture.h).
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/ibhost/fixture.h"
#include "tools/ibhost/cli.h"
#include "tools/ibhost/util.h"

static char cfg_ring[4][PATH_MAX];
static unsigned cfg_next;

static void mkdirs(const char *path)
{
	char *buf = xstrdup(path);

	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		ck_assert_msg(mkdir(buf, 0755) == 0 || errno == EEXIST,
			      "mkdir %s: %s", buf, strerror(errno));
		*p = '/';
	}
	ck_assert_msg(mkdir(buf, 0755) == 0 || errno == EEXIST, "mkdir %s: %s",
		      buf, strerror(errno));
	free(buf);
}

static void write_abs(const char *path, const char *text)
{
	char *dir = xstrdup(path);
	FILE *fp;

	*strrchr(dir, '/') = '\0';
	mkdirs(dir);
	free(dir);
	fp = fopen(path, "w");
	ck_assert_msg(fp != NULL, "%s: %s", path, strerror(errno));
	fputs(text, fp);
	ck_assert_int_eq(fclose(fp), 0);
	/* golden trees record modes: none may depend on the umask */
	ck_assert_int_eq(chmod(path, 0644), 0);
}

static char *read_abs(const char *path)
{
	char *text;

	return read_file(path, &text) == 0 ? text : NULL;
}

void fx_init(struct fx *f)
{
	const char *tmp = getenv("TMPDIR");

	memset(f, 0, sizeof(*f));
	f->dir = xasprintf("%s/check_ibhost.XXXXXX",
			   tmp && *tmp ? tmp : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	f->root = xasprintf("%s/root", f->dir);
	mkdirs(f->root);
	f->cmdlog = xstrdup("");
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

void fx_free(struct fx *f)
{
	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f->cmdlog);
	free(f->root);
	free(f->dir);
	memset(f, 0, sizeof(*f));
}

void fx_write(struct fx *f, const char *rel, const char *text)
{
	char *path = xasprintf("%s/%s", f->root, rel);

	write_abs(path, text);
	free(path);
}

char *fx_read(const struct fx *f, const char *rel)
{
	char *path = xasprintf("%s/%s", f->root, rel);
	char *text = read_abs(path);

	free(path);
	return text;
}

bool fx_exists(const struct fx *f, const char *rel)
{
	char *path = xasprintf("%s/%s", f->root, rel);
	struct stat st;
	bool ok = lstat(path, &st) == 0;

	free(path);
	return ok;
}

void fx_remove(struct fx *f, const char *rel)
{
	char *path = xasprintf("%s/%s", f->root, rel);

	ck_assert_int_eq(nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
	free(path);
}

unsigned fx_mode(const struct fx *f, const char *rel)
{
	char *path = xasprintf("%s/%s", f->root, rel);
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	free(path);
	return st.st_mode & 07777;
}

const char *fx_config(struct fx *f, const char *name, const char *text)
{
	char *path = cfg_ring[cfg_next++ % 4], *full;

	full = xasprintf("%s/%s", f->dir, name);
	ck_assert_uint_lt(strlen(full), PATH_MAX);
	strcpy(path, full);
	free(full);
	write_abs(path, text);
	return path;
}

const char *fx_config_file(struct fx *f, const char *name)
{
	char *src = xasprintf("%s/conf/%s", IBHOST_TESTDIR, name);
	char *text = read_abs(src);
	const char *path;

	ck_assert_msg(text != NULL, "cannot read %s", src);
	path = fx_config(f, name, text);
	free(text);
	free(src);
	return path;
}

/* ---------------------------------------------------------------------
 * The host
 */

static void attr(struct fx *f, const char *dir, const char *name,
		 const char *val)
{
	char *path = xasprintf("%s/%s", dir, name);

	fx_write(f, path, val);
	free(path);
}

static void port(struct fx *f, const char *dev, int num, const char *ll,
		 const char *state, const char *phys, int lid, int sm_lid,
		 const char *gid, const char *rate)
{
	char *base, buf[64];

	base = xasprintf("sys/class/infiniband/%s/ports/%d", dev, num);
#define ATTR(name, val)	attr(f, base, name, val)
	ATTR("link_layer", ll);
	ATTR("state", state);
	ATTR("phys_state", phys);
	snprintf(buf, sizeof(buf), "0x%x\n", lid);
	ATTR("lid", buf);
	snprintf(buf, sizeof(buf), "0x%x\n", sm_lid);
	ATTR("sm_lid", buf);
	ATTR("lid_mask_count", "0\n");
	ATTR("rate", rate);
	ATTR("gids/0", gid);
	ATTR("pkeys/0", "0xffff\n");
#undef ATTR
	free(base);
}

static void device(struct fx *f, const char *dev, const char *guid,
		   const char *sysguid, const char *fw, const char *hca)
{
	char *base = xasprintf("sys/class/infiniband/%s", dev);

#define ATTR(name, val)	attr(f, base, name, val)
	ATTR("node_type", "1: CA\n");
	ATTR("node_guid", guid);
	ATTR("sys_image_guid", sysguid);
	ATTR("fw_ver", fw);
	ATTR("hca_type", hca);
	ATTR("node_desc", "host1 HCA-1\n");
#undef ATTR
	free(base);
}

static void netdev(struct fx *f, const char *name, int type,
		   const char *addr, int mtu, const char *oper,
		   const char *mode, const char *pkey, const char *parent)
{
	char *base = xasprintf("sys/class/net/%s", name), buf[32];

#define ATTR(a, val)	attr(f, base, a, val)
	snprintf(buf, sizeof(buf), "%d\n", type);
	ATTR("type", buf);
	ATTR("address", addr);
	snprintf(buf, sizeof(buf), "%d\n", mtu);
	ATTR("mtu", buf);
	ATTR("operstate", oper);
	if (mode)
		ATTR("mode", mode);
	if (pkey)
		ATTR("pkey", pkey);
	if (parent)
		ATTR("parent", parent);
#undef ATTR
	free(base);
}

void fx_host(struct fx *f)
{
	device(f, "mlx4_0", "0002:c903:0031:78f0\n", "0002:c903:0031:78f3\n",
	       "2.42.5000\n", "MT4099\n");
	port(f, "mlx4_0", 1, "InfiniBand\n", "4: ACTIVE\n", "5: LinkUp\n", 5,
	     1, "fe80:0000:0000:0000:0002:c903:0031:78f1\n",
	     "56 Gb/sec (4X FDR)\n");
	port(f, "mlx4_0", 2, "InfiniBand\n", "1: DOWN\n", "2: Polling\n", 0,
	     0, "fe80:0000:0000:0000:0002:c903:0031:78f2\n",
	     "10 Gb/sec (4X SDR)\n");
	device(f, "mlx5_0", "ec0d:9a03:0012:3450\n", "ec0d:9a03:0012:3450\n",
	       "16.35.2000\n", "MT4119\n");
	port(f, "mlx5_0", 1, "Ethernet\n", "4: ACTIVE\n", "5: LinkUp\n", 0, 0,
	     "fe80:0000:0000:0000:ee0d:9aff:fe12:3450\n",
	     "25 Gb/sec (1X EDR)\n");
	fx_write(f, "sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0",
		 "enp1s0f0\n");
	device(f, "mlx5_1", "9803:9b03:00a1:b2c2\n", "9803:9b03:00a1:b2c2\n",
	       "20.31.1014\n", "MT4123\n");
	port(f, "mlx5_1", 1, "InfiniBand\n", "4: ACTIVE\n", "5: LinkUp\n", 7,
	     1, "fe80:0000:0000:0000:9803:9b03:00a1:b2c3\n",
	     "200 Gb/sec (4X HDR)\n");
	fx_write(f, "sys/class/infiniband/mlx5_1/ports/1/active_mtu",
		 "4096 (5)\n");

	netdev(f, "ib0", 32, "80:00:02:08:fe:80:00:00:00:00:00:00:00:02:c9:"
	       "03:00:31:78:f1\n", 2044, "up\n", "datagram\n", "0xffff\n", NULL);
	netdev(f, "ib0.8002", 32, "80:00:02:0a:fe:80:00:00:00:00:00:00:00:02:"
	       "c9:03:00:31:78:f1\n", 2044, "up\n", "datagram\n", "0x8002\n",
	       "ib0\n");
	netdev(f, "ib1", 32, "80:00:02:09:fe:80:00:00:00:00:00:00:00:02:c9:"
	       "03:00:31:78:f2\n", 2044, "down\n", "datagram\n", "0xffff\n",
	       NULL);
	netdev(f, "ib2", 32, "00:00:10:49:fe:80:00:00:00:00:00:00:98:03:9b:"
	       "03:00:a1:b2:c3\n", 4092, "up\n", "datagram\n", "0xffff\n", NULL);
	netdev(f, "enp1s0f0", 1, "ec:0d:9a:12:34:50\n", 1500, "up\n", NULL,
	       NULL, NULL);
	netdev(f, "eth0", 1, "52:54:00:12:34:56\n", 1500, "up\n", NULL, NULL,
	       NULL);
	netdev(f, "lo", 772, "00:00:00:00:00:00\n", 65536, "unknown\n", NULL,
	       NULL, NULL);

	fx_write(f, "proc/modules",
		 "mlx5_ib 479232 0 - Live 0x0000000000000000\n"
		 "mlx4_ib 233472 0 - Live 0x0000000000000000\n"
		 "rdma_ucm 32768 0 - Live 0x0000000000000000\n"
		 "ib_uverbs 188416 2 rdma_ucm,mlx5_ib, Live 0x0000000000000000\n"
		 "ib_core 450560 4 rdma_ucm,ib_uverbs,mlx5_ib,mlx4_ib, Live "
		 "0x0000000000000000\n");
	fx_write(f, "sys/kernel/config/rdma_cm/mlx5_0/ports/1/"
		 "default_roce_mode", "RoCE v2\n");

	fx_write(f, "etc/security/limits.conf",
		 "# /etc/security/limits.conf\n"
		 "#<domain>      <type>  <item>         <value>\n"
		 "*               soft    core            0\n"
		 "@students       hard    nproc           20\n"
		 "@rdma           hard    memlock         65536\n"
		 "# End of file\n");
	fx_write(f, "etc/security/limits.d/rdma.conf",
		 "# configuration for rdma tuning\n"
		 "*       soft    memlock         unlimited\n"
		 "*       hard    memlock         unlimited\n"
		 "# rdma tuning end\n");
	fx_write(f, "etc/nfs.conf",
		 "#\n# This is a general configuration for the\n"
		 "# NFS daemons and tools\n#\n"
		 "[general]\npipefs-directory=/run/rpc_pipefs\n#\n"
		 "[nfsd]\n# debug=0\nthreads=16\n# host=\n# port=0\n"
		 "# rdma=n\n# rdma-port=20049\n#\n"
		 "[mountd]\nmanage-gids=y\n");
	fx_write(f, "etc/udev/rules.d/70-persistent-ipoib.rules",
		 "# This is a sample udev rules file that demonstrates how to "
		 "get udev to\n# set the name of IPoIB interfaces.\n"
		 "ACTION==\"add\", SUBSYSTEM==\"net\", DRIVERS==\"?*\", "
		 "ATTR{type}==\"32\", ATTR{address}==\"?*00:11:75:01:01:67:1d:dd\""
		 ", NAME=\"hfi1_ib0\"\n");
	fx_write(f, "etc/rdma/modules/rdma.conf",
		 "# These modules are loaded by the system if any RDMA devices "
		 "is installed\n"
		 "# iSCSI over RDMA client support\n# ib_iser\n"
		 "# User access to RDMA verbs (supports libibverbs)\n# ib_uverbs\n"
		 "# NFS over RDMA client support\n# xprtrdma\n");
	fx_write(f, "etc/NetworkManager/system-connections/eth0.nmconnection",
		 "[connection]\nid=eth0\ntype=ethernet\ninterface-name=eth0\n\n"
		 "[ipv4]\nmethod=auto\n");
	fx_write(f, STALE_KEYFILE,
		 "# Written by ibhost(8); \"ibhost apply\" overwrites changes "
		 "made here.\n[connection]\nid=old_ib\ntype=infiniband\n"
		 "interface-name=old_ib\n");
}

/* ---------------------------------------------------------------------
 * Running ibhost
 */

/* Plays modprobe and `rdma link add` on the fake tree. */
static int fake_runner(void *ctx, const char *const argv[])
{
	struct fx *f = ctx;
	struct sbuf b = { 0 };
	char *dir;

	sb_add(&b, f->cmdlog);
	for (size_t i = 0; argv[i]; i++)
		sb_printf(&b, "%s%s", i ? " " : "", argv[i]);
	sb_putc(&b, '\n');
	free(f->cmdlog);
	f->cmdlog = sb_steal(&b);

	if (!strcmp(argv[0], "modprobe") && argv[1]) {
		const char *mod = argv[1];
		char *old = fx_read(f, "proc/modules");

		if (!strcmp(mod, "xprtrdma") || !strcmp(mod, "svcrdma"))
			mod = "rpcrdma";
		sb_printf(&b, "%s%s 16384 0 - Live 0x0000000000000000\n",
			  old ? old : "", mod);
		fx_write(f, "proc/modules", sb_str(&b));
		sb_free(&b);
		free(old);
	} else if (!strcmp(argv[0], "rdma") && argv[1] && argv[2] &&
		   argv[3] && argv[7] && !strcmp(argv[2], "add")) {
		dir = xasprintf("sys/class/infiniband/%s", argv[3]);
		attr(f, dir, "node_type", "1: CA\n");
		attr(f, dir, "ports/1/link_layer", "Ethernet\n");
		sb_printf(&b, "%s\n", argv[7]);
		attr(f, dir, "ports/1/gid_attrs/ndevs/0", sb_str(&b));
		sb_free(&b);
		free(dir);
	}
	return 0;
}

int fx_run(struct fx *f, char **out, char **err, ...)
{
	char *argv[32], *obuf = NULL, *ebuf = NULL;
	size_t olen = 0, elen = 0;
	struct ibhost_env env = { .hook = fake_runner, .ctx = f };
	int argc = 0, status;
	const char *a;
	va_list ap;

	argv[argc++] = (char *)"ibhost";
	argv[argc++] = (char *)"--root";
	argv[argc++] = f->root;
	va_start(ap, err);
	while ((a = va_arg(ap, const char *)) != NULL && argc < 31)
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	env.out = open_memstream(&obuf, &olen);
	env.err = open_memstream(&ebuf, &elen);
	ck_assert_ptr_nonnull(env.out);
	ck_assert_ptr_nonnull(env.err);
	status = ibhost_main(argc, argv, &env);
	fclose(env.out);
	fclose(env.err);
	if (out)
		*out = obuf;
	else
		free(obuf);
	if (err)
		*err = ebuf;
	else
		free(ebuf);
	return status;
}

/* ---------------------------------------------------------------------
 * Trees and golden files
 */

struct flist {
	char	**v;
	size_t	  n;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Relative paths of the regular files under base/rel, dot files too. */
static void walk(const char *base, const char *rel, struct flist *l)
{
	char *path = xasprintf("%s%s%s", base, *rel ? "/" : "", rel);
	struct dirent *de;
	DIR *d = opendir(path);

	free(path);
	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		char *sub, *full;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		sub = xasprintf("%s%s%s", rel, *rel ? "/" : "", de->d_name);
		full = xasprintf("%s/%s", base, sub);
		if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
			walk(base, sub, l);
			free(sub);
		} else if (lstat(full, &st) == 0) {
			l->v = xrealloc(l->v, (l->n + 1) * sizeof(char *));
			l->v[l->n++] = sub;
		} else {
			free(sub);
		}
		free(full);
	}
	closedir(d);
	qsort(l->v, l->n, sizeof(char *), cmp_str);
}

static void flist_free(struct flist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

char *fx_snapshot(const struct fx *f)
{
	struct flist l = { 0 };
	struct sbuf b = { 0 };

	walk(f->root, "", &l);
	for (size_t i = 0; i < l.n; i++) {
		char *path = xasprintf("%s/%s", f->root, l.v[i]), *text;
		struct stat st;

		ck_assert_int_eq(stat(path, &st), 0);
		text = read_abs(path);
		sb_printf(&b, "== %s %04o inode %lu\n%s", l.v[i],
			  (unsigned)(st.st_mode & 07777),
			  (unsigned long)st.st_ino, text ? text : "");
		free(text);
		free(path);
	}
	flist_free(&l);
	return sb_steal(&b);
}

static bool updating(void)
{
	const char *u = getenv("IBHOST_UPDATE_GOLDEN");

	return u && *u && strcmp(u, "0");
}

void fx_golden_text(const char *scenario, const char *name, const char *text)
{
	char *path = xasprintf("%s/golden/%s/%s", IBHOST_TESTDIR, scenario,
			       name);
	char *want;

	if (updating()) {
		write_abs(path, text);
		free(path);
		return;
	}
	want = read_abs(path);
	ck_assert_msg(want != NULL, "missing golden file %s", path);
	ck_assert_msg(!strcmp(want, text), "%s differs; got:\n%s", path, text);
	free(want);
	free(path);
}

/*
 * One text for the whole tree under root/sub: per file (dot files too,
 * in name order) a line "=== PATH (mode NNNN)" and its contents.  Kept
 * as a single golden file: short paths for the distribution tarball.
 */
void fx_golden_tree(const struct fx *f, const char *scenario,
		    const char *sub)
{
	char *base = xasprintf("%s/%s", f->root, sub), *name, *p;
	struct flist l = { 0 };
	struct sbuf b = { 0 };

	walk(base, "", &l);
	for (size_t i = 0; i < l.n; i++) {
		char *path = xasprintf("%s/%s", base, l.v[i]), *text;
		struct stat st;

		ck_assert_int_eq(stat(path, &st), 0);
		text = read_abs(path);
		ck_assert_ptr_nonnull(text);
		sb_printf(&b, "=== %s/%s (mode %04o)\n%s", sub, l.v[i],
			  (unsigned)(st.st_mode & 07777), text);
		if (*text && text[strlen(text) - 1] != '\n')
			sb_add(&b, "\n\\ no newline at end of file\n");
		free(text);
		free(path);
	}
	name = xasprintf("%s.tree", sub);
	for (p = name; *p; p++)
		if (*p == '/')
			*p = '_';
	fx_golden_text(scenario, name, sb_str(&b));
	free(name);
	sb_free(&b);
	flist_free(&l);
	free(base);
}
