/*
 * fixture.h - fake hosts for the ibhost tests.
 *
 * Each test gets a fresh directory under $TMPDIR (or /tmp) holding
 * root/, the fake tree ibhost runs on with --root, and the INI files
 * it is given.  fx_host() fills root/ with a two-adapter host:
 *
 *   mlx4_0  CA, 2 InfiniBand ports: 1 ACTIVE (LID 5, ib0 and its child
 *           ib0.8002), 2 DOWN (ib1)
 *   mlx5_0  CA, 1 Ethernet port (RoCE) on enp1s0f0, rdma_cm configfs
 *           directory present, default_roce_mode "RoCE v2"
 *   mlx5_1  CA, 1 InfiniBand port with a 4096-byte active MTU (ib2)
 *   eth0    a plain Ethernet interface, lo
 *   /proc/modules with ib_core, mlx4_ib, mlx5_ib, ib_uverbs, rdma_ucm
 *   /etc with user content: limits.conf (@rdma hard memlock 65536),
 *   limits.d/rdma.conf (rdma-core's "*" lines), nfs.conf (Fedora-like
 *   commented defaults), a udev rule for another NIC, RHEL's commented
 *   rdma.conf, a user NetworkManager keyfile for eth0 and a stale keyfile
 *   ibhost wrote for an interface no longer configured.
 *
 * Golden files live in IBHOST_TESTDIR/golden/SCENARIO/ (a tree as one
 * SUB.tree text, see fx_golden_tree()); with
 * IBHOST_UPDATE_GOLDEN=1 in the environment the tests rewrite them
 * instead of comparing (review the diff before committing).
 */
#ifndef IBHOST_TEST_FIXTURE_H
#define IBHOST_TEST_FIXTURE_H

#include <limits.h>
#include <stdbool.h>

#ifndef IBHOST_TESTDIR
#define IBHOST_TESTDIR "tests/ibhost"
#endif

#define GUID_MLX4_P1	"0x0002c903003178f1"
#define GUID_MLX4_P2	"0x0002c903003178f2"
#define GUID_MLX5_IB	"0x98039b0300a1b2c3"
#define GUID_MLX5_ETH	"0xee0d9afffe123450"

/* The keyfile ibhost once wrote for an interface no longer configured. */
#define STALE_KEYFILE	"etc/NetworkManager/system-connections/" \
			"old_ib.nmconnection"

struct fx {
	char	*dir;			/* the test's temporary directory */
	char	*root;			/* dir/root, given as --root */
	char	*cmdlog;		/* commands the fake runner saw */
};

void fx_init(struct fx *f);
void fx_free(struct fx *f);
void fx_host(struct fx *f);

/* Files under root (parents created); fx_read returns NULL if absent. */
void fx_write(struct fx *f, const char *rel, const char *text);
char *fx_read(const struct fx *f, const char *rel);
bool fx_exists(const struct fx *f, const char *rel);
/* rm -r of root/rel */
void fx_remove(struct fx *f, const char *rel);
unsigned fx_mode(const struct fx *f, const char *rel);

/* An INI file next to root; returns its path (static, per name). */
const char *fx_config(struct fx *f, const char *name, const char *text);
/* An INI file from IBHOST_TESTDIR/conf/NAME copied next to root. */
const char *fx_config_file(struct fx *f, const char *name);

/*
 * Run ibhost with "--root ROOT" and the NULL-terminated arguments; stdout
 * and stderr are returned in *out and *err (malloc'd).  Commands go to a
 * fake runner that loads modules into root/proc/modules and creates
 * root/sys/class/infiniband/NAME for `rdma link add`.
 */
int fx_run(struct fx *f, char **out, char **err, ...);

/* Every file under root: path, mode, inode and contents, for equality. */
char *fx_snapshot(const struct fx *f);

/* Compare text with golden/SCENARIO/NAME (or write it when updating). */
void fx_golden_text(const char *scenario, const char *name, const char *text);
/* Compare every file under root/SUB, with its mode, with the golden
 * text golden/SCENARIO/SUB.tree ('/' in SUB written '_'). */
void fx_golden_tree(const struct fx *f, const char *scenario,
		    const char *sub);

#endif /* IBHOST_TEST_FIXTURE_H */
