/*
 * check_bad.c - configurations ibhost must reject, each with its exact
 * "FILE:LINE: what was expected" message, on the fake host of fixture.c.
 *
 * In the expected text CFG stands for the INI file's path and ROOT for
 * the fake tree.  Most cases are the parser's; those marked "host" only
 * fail against the tree (a RoCE mode on an InfiniBand port, a datagram
 * MTU the port cannot carry, a module not loaded, a memlock limit).
 */
#include "config.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/ibhost/fixture.h"
#include "tools/ibhost/util.h"

Suite *bad_suite(void);

#define G4	"guid = " GUID_MLX4_P1 "\n"

struct bad {
	const char	*name;
	const char	*ini;
	const char	*want;
	void		(*setup)(struct fx *f);
};

static void later_limits_file(struct fx *f)
{
	fx_write(f, "etc/security/limits.d/zz-local.conf",
		 "@rdma   hard    memlock     1024\n");
}

static void broken_udev_block(struct fx *f)
{
	fx_write(f, "etc/udev/rules.d/70-persistent-ipoib.rules",
		 "# my rules\n# BEGIN ibhost\nACTION==\"add\"\n");
}

static const struct bad bad[] = {
	{ "unknown section",
	  "[global]\nbackend = networkmanager\n\n[ipoib_x ib0]\nguid = 1\n",
	  "CFG:4: unknown section [ipoib_x ib0]: expected [global], "
	  "[ipoib NAME], [roce DEVICE PORT], [softrdma NAME], [modules], "
	  "[limits] or [nfs]\n", NULL },
	{ "unknown key",
	  "[ipoib ib0]\n" G4 "speed = fast\n",
	  "CFG:3: unknown key \"speed\" in [ipoib ib0]: expected one of "
	  "guid, mode, mtu, ib-mtu, ipv4, ipv4-gateway, ipv6, ipv6-gateway, "
	  "dns or pkeys\n", NULL },
	{ "unknown key in a child section",
	  "[ipoib ib0]\n" G4 "pkeys = 2\n[ipoib ib0.8002]\nguid = 1\n",
	  "CFG:5: unknown key \"guid\" in [ipoib ib0.8002]: expected one of "
	  "mode, mtu, ipv4, ipv4-gateway, ipv6, ipv6-gateway or dns\n", NULL },
	{ "IPoIB mode",
	  "[ipoib ib0]\n" G4 "mode = fast\n",
	  "CFG:3: mode: expected connected or datagram, not \"fast\"\n", NULL },
	{ "MTU not a number",
	  "[ipoib ib0]\n" G4 "mtu = big\n",
	  "CFG:3: mtu: expected a number from 68 to 65535, not \"big\"\n", NULL },
	{ "connected-mode MTU",
	  "[ipoib ib0]\n" G4 "mode = connected\nmtu = 65521\n",
	  "CFG:4: mtu 65521: expected at most 65520 in connected mode\n", NULL },
	{ "datagram MTU, default IB MTU (host)",
	  "[ipoib ib0]\n" G4 "mtu = 2045\n",
	  "CFG:3: mtu 2045: expected at most 2044 in datagram mode on "
	  "[ipoib ib0]: IB MTU 2048 (ibhost's default; set ib-mtu if the "
	  "fabric runs a larger one) minus the 4-byte IPoIB header\n", NULL },
	{ "datagram MTU, port's active MTU (host)",
	  "[ipoib mlx5_ib0]\nguid = " GUID_MLX5_IB "\nmtu = 4093\n",
	  "CFG:3: mtu 4093: expected at most 4092 in datagram mode on "
	  "[ipoib mlx5_ib0]: IB MTU 4096 (the port's active MTU) minus the "
	  "4-byte IPoIB header\n", NULL },
	{ "datagram MTU from ib-mtu, inherited by a child (host)",
	  "[ipoib ib0]\n" G4 "ib-mtu = 1024\nmtu = 2044\npkeys = 0x0002\n",
	  "CFG:4: mtu 2044: expected at most 1020 in datagram mode on "
	  "[ipoib ib0]: IB MTU 1024 (from ib-mtu) minus the 4-byte IPoIB "
	  "header\n"
	  "CFG:4: mtu 2044: expected at most 1020 in datagram mode on "
	  "[ipoib ib0.8002]: IB MTU 1024 (from ib-mtu) minus the 4-byte "
	  "IPoIB header\n", NULL },
	{ "ib-mtu",
	  "[ipoib ib0]\n" G4 "ib-mtu = 3000\n",
	  "CFG:3: ib-mtu: expected 256, 512, 1024, 2048 or 4096, not "
	  "\"3000\"\n", NULL },
	{ "P_Key with the full-membership bit",
	  "[ipoib ib0]\n" G4 "pkeys = 0x0002, 0x8002\n",
	  "CFG:3: pkeys: expected P_Keys from 0x0001 to 0x7fff (ibhost adds "
	  "the full-membership bit 0x8000: 0x0002 makes ib0.8002), not "
	  "\"0x8002\"\n", NULL },
	{ "P_Key zero",
	  "[ipoib ib0]\n" G4 "pkeys = 0x0000\n",
	  "CFG:3: pkeys: expected P_Keys from 0x0001 to 0x7fff (ibhost adds "
	  "the full-membership bit 0x8000: 0x0002 makes ib0.8002), not "
	  "\"0x0000\"\n", NULL },
	{ "P_Key twice",
	  "[ipoib ib0]\n" G4 "pkeys = 2 0x0002\n",
	  "CFG:3: pkeys: expected each P_Key once, not 0x0002 twice\n", NULL },
	{ "child section without its P_Key",
	  "[ipoib ib0]\n" G4 "pkeys = 0x0002\n[ipoib ib0.8005]\n"
	  "ipv4 = dhcp\n",
	  "CFG:4: [ipoib ib0.8005]: expected a P_Key listed in pkeys of its "
	  "parent section, as 0x0005\n", NULL },
	{ "child name too long",
	  "[ipoib averylongname]\n" G4 "pkeys = 0x0002\n",
	  "CFG:3: pkeys: child averylongname.8002 would be longer than 15 "
	  "characters; expected a shorter interface name\n", NULL },
	{ "GUID syntax",
	  "[ipoib ib0]\nguid = 0x12345678901234567\n",
	  "CFG:2: guid: expected a port GUID such as 0x0002c903003178f1 or "
	  "0002:c903:0031:78f1, not \"0x12345678901234567\"\n", NULL },
	{ "GUID missing",
	  "[ipoib ib0]\nmode = connected\n",
	  "CFG:1: [ipoib ib0]: expected a guid key (the port GUID)\n", NULL },
	{ "GUID twice",
	  "[ipoib a]\n" G4 "[ipoib b]\n" G4,
	  "CFG:4: guid: expected one [ipoib] section per port, but "
	  "0x0002c903003178f1 is also [ipoib a] (line 1)\n", NULL },
	{ "IPoIB on an Ethernet port (host)",
	  "[ipoib roce0]\nguid = " GUID_MLX5_ETH "\n",
	  "CFG:2: guid 0xee0d9afffe123450: port mlx5_0/1 has link layer "
	  "Ethernet; expected an InfiniBand port for IPoIB\n", NULL },
	{ "IPv4 address without prefix",
	  "[ipoib ib0]\n" G4 "ipv4 = 192.0.2.1\n",
	  "CFG:3: ipv4: expected dhcp, off or ADDRESS/PREFIX such as "
	  "192.0.2.1/24, not \"192.0.2.1\"\n", NULL },
	{ "IPv6 prefix too long",
	  "[ipoib ib0]\n" G4 "ipv6 = 2001:db8::1/129\n",
	  "CFG:3: ipv6: expected auto, off or ADDRESS/PREFIX such as "
	  "2001:db8:1::1/64, not \"2001:db8::1/129\"\n", NULL },
	{ "gateway without a static address",
	  "[ipoib ib0]\n" G4 "ipv4 = dhcp\nipv4-gateway = 192.0.2.254\n",
	  "CFG:4: ipv4-gateway: expected a static ipv4 = ADDRESS/PREFIX in "
	  "[ipoib ib0]\n", NULL },
	{ "DNS server of a family that is off",
	  "[ipoib ib0]\n" G4 "ipv4 = dhcp\ndns = 2001:db8::53\n",
	  "CFG:4: dns 2001:db8::53: expected ipv6 = auto or ADDRESS/PREFIX "
	  "on [ipoib ib0] for an IPv6 server\n", NULL },
	{ "RoCE mode on an InfiniBand port (host)",
	  "[roce mlx4_0 1]\nmode = RoCE v2\n",
	  "CFG:2: mode RoCE v2: port mlx4_0/1 has link layer InfiniBand; "
	  "expected an Ethernet (RoCE) port\n", NULL },
	{ "RoCE mode name",
	  "[roce mlx5_0 1]\nmode = RoCE v3\n",
	  "CFG:2: mode: expected \"RoCE v2\" or \"IB/RoCE v1\", not "
	  "\"RoCE v3\"\n", NULL },
	{ "RoCE section without port",
	  "[roce mlx5_0]\nmode = RoCE v2\n",
	  "CFG:1: [roce mlx5_0]: expected [roce DEVICE PORT]\n", NULL },
	{ "RoCE device absent (host)",
	  "[roce mlx5_9 1]\nmode = RoCE v2\n",
	  "CFG:1: [roce mlx5_9 1]: expected an RDMA device mlx5_9 under "
	  "/sys/class/infiniband\n", NULL },
	{ "RoCE port absent (host)",
	  "[roce mlx5_0 2]\nmode = RoCE v2\n",
	  "CFG:1: [roce mlx5_0 2]: expected a port from 1 to 1 on mlx5_0\n", NULL },
	{ "soft RDMA type",
	  "[softrdma rxe0]\ntype = roce\nnetdev = eth0\n",
	  "CFG:2: type: expected rxe (Soft-RoCE) or siw (Soft-iWARP), not "
	  "\"roce\"\n", NULL },
	{ "soft RDMA without netdev",
	  "[softrdma rxe0]\ntype = rxe\n",
	  "CFG:1: [softrdma rxe0]: expected a netdev key (the Ethernet "
	  "interface)\n", NULL },
	{ "soft RDMA on a missing interface (host)",
	  "[softrdma rxe0]\ntype = rxe\nnetdev = eth9\n",
	  "CFG:3: netdev eth9: expected an Ethernet interface under "
	  "/sys/class/net\n", NULL },
	{ "soft RDMA on IPoIB (host)",
	  "[softrdma siw0]\ntype = siw\nnetdev = ib0\n",
	  "CFG:3: netdev ib0: expected an Ethernet interface, not type 32 "
	  "(IPoIB)\n", NULL },
	{ "soft RDMA name of a hardware device (host)",
	  "[softrdma mlx4_0]\ntype = rxe\nnetdev = eth0\n",
	  "CFG:1: [softrdma mlx4_0]: an RDMA device mlx4_0 already exists; "
	  "expected a new name (or `rdma link delete mlx4_0` first)\n", NULL },
	{ "module outside the rdma.conf set",
	  "[modules]\nload = ib_uverbs nvme_rdma\n",
	  "CFG:2: load: expected modules from ib_uverbs, rdma_ucm, ib_iser, "
	  "ib_isert, ib_srpt, rds_rdma, xprtrdma and svcrdma, not "
	  "\"nvme_rdma\"\n", NULL },
	{ "module not loaded (host)",
	  "[modules]\nload = ib_uverbs, ib_srpt\n",
	  "CFG:2: load: module ib_srpt is not loaded; expected it loaded "
	  "(ibhost apply runs modprobe)\n", NULL },
	{ "memlock value",
	  "[limits]\nmemlock = lots\n",
	  "CFG:2: memlock: expected unlimited or a size in KiB with an "
	  "optional K, M, G or T suffix, not \"lots\"\n", NULL },
	{ "memlock too low now (host)",
	  "[limits]\nmemlock = 1G\n",
	  "CFG:2: memlock 1048576 KiB: the hard limit of @rdma is 65536 KiB "
	  "(ROOT/etc/security/limits.conf:5); expected 1048576 KiB (ibhost "
	  "apply writes /etc/security/limits.d/rdma.conf)\n", NULL },
	{ "memlock kept low by a later file (host)",
	  "[limits]\nmemlock = unlimited\n",
	  "CFG:2: memlock unlimited: ROOT/etc/security/limits.d/"
	  "zz-local.conf:1 would still hold the hard limit of @rdma at 1024 "
	  "KiB; expected no later \"@rdma\" or \"*\" memlock entry below "
	  "unlimited\n", later_limits_file },
	{ "limits file",
	  "[limits]\nmemlock = unlimited\nfile = /etc/limits\n",
	  "CFG:3: file: expected /etc/security/limits.conf or "
	  "/etc/security/limits.d/NAME.conf, not \"/etc/limits\"\n", NULL },
	{ "NFS RDMA port",
	  "[nfs]\nrdma-port = 70000\n",
	  "CFG:2: rdma-port: expected a port number from 1 to 65535, not "
	  "\"70000\"\n", NULL },
	{ "backend",
	  "[global]\nbackend = netplan\n",
	  "CFG:2: backend: expected networkmanager, ifupdown or networkd, "
	  "not \"netplan\"\n", NULL },
	{ "duplicate key",
	  "[ipoib ib0]\n" G4 "mode = connected\nmode = datagram\n",
	  "CFG:4: duplicate key mode in [ipoib ib0]: expected it once (first "
	  "at line 3)\n", NULL },
	{ "duplicate section",
	  "[nfs]\n[NFS]\n",
	  "CFG:2: duplicate section [nfs]: expected each section once (first "
	  "at line 1)\n", NULL },
	{ "line without '='",
	  "[ipoib ib0]\nguid " GUID_MLX4_P1 "\n",
	  "CFG:1: [ipoib ib0]: expected a guid key (the port GUID)\n"
	  "CFG:2: expected KEY = VALUE or a [section] header, not \"guid "
	  "0x0002c903003178f1\"\n", NULL },
	{ "section header without ']'",
	  "[ipoib ib0\n" G4,
	  "CFG:1: expected ']' at the end of the section header\n", NULL },
	{ "key before the first section",
	  "backend = ifupdown\n",
	  "CFG:1: backend: expected a [section] header before the first key\n", NULL },
	{ "empty value",
	  "[ipoib ib0]\n" G4 "mode =\n",
	  "CFG:3: mode: expected a value\n", NULL },
	{ "several errors, in line order",
	  "[ipoib ib0]\nmode = fast\n[bogus]\nx = 1\n[nfs]\nrdma = maybe\n",
	  "CFG:1: [ipoib ib0]: expected a guid key (the port GUID)\n"
	  "CFG:2: mode: expected connected or datagram, not \"fast\"\n"
	  "CFG:3: unknown section [bogus]: expected [global], [ipoib NAME], "
	  "[roce DEVICE PORT], [softrdma NAME], [modules], [limits] or "
	  "[nfs]\n"
	  "CFG:6: rdma: expected yes or no, not \"maybe\"\n", NULL },
	{ "broken ibhost block in a file (host)",
	  "[ipoib ib0]\n" G4,
	  "ROOT/etc/udev/rules.d/70-persistent-ipoib.rules:2: broken ibhost "
	  "block: expected one \"# BEGIN ibhost\" line followed by one "
	  "\"# END ibhost\" line; fix the file by hand\n", broken_udev_block },
};

/* want with CFG and ROOT replaced. */
static char *expand(const char *want, const char *cfg, const char *root)
{
	struct sbuf b = { 0 };

	while (*want) {
		if (!strncmp(want, "CFG", 3)) {
			sb_add(&b, cfg);
			want += 3;
		} else if (!strncmp(want, "ROOT", 4)) {
			sb_add(&b, root);
			want += 4;
		} else {
			sb_putc(&b, *want++);
		}
	}
	return sb_steal(&b);
}

START_TEST(bad_config_rejected)
{
	const struct bad *t = &bad[_i];
	struct fx f;
	const char *cfg;
	char *out, *err, *want;
	int status;

	fx_init(&f);
	fx_host(&f);
	if (t->setup)
		t->setup(&f);
	cfg = fx_config(&f, "bad.ini", t->ini);
	status = fx_run(&f, &out, &err, "-c", cfg, "check", NULL);
	want = expand(t->want, cfg, f.root);
	ck_assert_msg(status == 1, "%s: exit %d", t->name, status);
	ck_assert_msg(!strcmp(err, want), "%s:\ngot:\n%swant:\n%s", t->name,
		      err, want);
	ck_assert_msg(!strcmp(out, ""), "%s: stdout \"%s\"", t->name, out);
	free(want);
	free(out);
	free(err);

	/* plan and apply refuse the same files; nothing gets written */
	if (!strstr(t->name, "not loaded") && !strstr(t->name, "too low now")) {
		char *before = fx_snapshot(&f), *after;

		ck_assert_int_eq(fx_run(&f, NULL, NULL, "-c", cfg, "apply",
					NULL), 1);
		after = fx_snapshot(&f);
		ck_assert_msg(!strcmp(before, after), "%s: apply wrote",
			      t->name);
		free(before);
		free(after);
	}
	fx_free(&f);
}
END_TEST

Suite *bad_suite(void)
{
	Suite *s = suite_create("ibhost_bad");
	TCase *tc = tcase_create("rejected");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, bad_config_rejected, 0, (int)ARRAY_SIZE(bad));
	suite_add_tcase(s, tc);
	return s;
}
