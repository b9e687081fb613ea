/*
 * check_topo_load.c - topology files into the fabric model: ibsim's
 * examples, ibnetdiscover output, the bundled test topologies, a dump
 * round trip, and every error a hand-edited file is likely to contain.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "model/fabric.h"
#include "sm/topo_file.h"

#define NET_EXAMPLES	"/usr/share/doc/ibsim-utils/net-examples"

static char tmp_path[64];

/* Write `text` to a fresh temporary file; its name is in tmp_path. */
static const char *write_tmp(const char *text)
{
	int fd;
	FILE *fp;

	strcpy(tmp_path, "/tmp/check_topo_load.XXXXXX");
	fd = mkstemp(tmp_path);
	ck_assert_int_ge(fd, 0);
	fp = fdopen(fd, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	ck_assert_int_eq(fclose(fp), 0);
	return tmp_path;
}

static void load_ok(struct fabric *f, const char *path)
{
	char err[256];
	int rc;

	fabric_init(f);
	rc = topo_load(f, path, err, sizeof(err));
	ck_assert_msg(rc == 0, "%s: rc %d: %s", path, rc, err);
}

static int32_t by_desc(const struct fabric *f, const char *desc)
{
	for (size_t i = 0; i < f->n_nodes; i++)
		if (!strcmp(f->nodes[i].desc, desc))
			return (int32_t)i;
	ck_abort_msg("no node \"%s\"", desc);
	return FAB_NONE;
}

/* a[pa] <-> b[pb], seen from both ends, both ends valid */
static void assert_link(const struct fabric *f, int32_t a, unsigned pa,
			int32_t b, unsigned pb)
{
	const struct fab_port *x = &f->nodes[a].ports[pa];
	const struct fab_port *y = &f->nodes[b].ports[pb];

	ck_assert_int_eq(x->peer_node, b);
	ck_assert_uint_eq(x->peer_port, pb);
	ck_assert_int_eq(y->peer_node, a);
	ck_assert_uint_eq(y->peer_port, pa);
	ck_assert(x->valid && y->valid);
}

/* PortInfo of a loaded linked port: up, LocalPortNum, given width/speed */
static void assert_port_up(const struct fab_port *p, unsigned num,
			   unsigned width, unsigned speed)
{
	ck_assert(p->valid);
	ck_assert_uint_eq(p->num, num);
	ck_assert_uint_eq(p->pi.local_port, num);
	ck_assert_uint_eq(pi_port_state(&p->pi), PORT_STATE_ACTIVE);
	ck_assert_uint_eq(pi_phys_state(&p->pi), PHYS_STATE_LINKUP);
	ck_assert_uint_eq(p->pi.link_width_active, width);
	ck_assert_uint_eq(pi_speed_active(&p->pi), speed);
}

START_TEST(ibsim_net)
{
	struct fabric f;
	struct fabric_counts c;
	int32_t s1, s2, h1, h2;

	load_ok(&f, NET_EXAMPLES "/net");
	ck_assert_uint_eq(f.n_nodes, 4);
	fabric_count(&f, &c);
	ck_assert_uint_eq(c.switches, 2);
	ck_assert_uint_eq(c.cas, 2);
	ck_assert_uint_eq(c.links, 4);
	/* switch ports 1-4 of Switch1, 3-4 of Switch2, one port per HCA */
	ck_assert_uint_eq(c.ports, 8);

	s1 = by_desc(&f, "Switch1");
	s2 = by_desc(&f, "Switch2");
	h1 = by_desc(&f, "Hca1");
	h2 = by_desc(&f, "Hca2");
	ck_assert_int_eq(s1, 0);		/* file order */
	ck_assert_int_eq(h2, 3);
	ck_assert_uint_eq(f.nodes[s1].type, NODE_TYPE_SWITCH);
	ck_assert_uint_eq(f.nodes[h1].type, NODE_TYPE_CA);
	ck_assert_uint_eq(f.nodes[s2].num_ports, 8);
	ck_assert_uint_eq(f.nodes[h2].num_ports, 2);
	ck_assert(f.nodes[s1].has_desc);

	/* GUIDs as ibsim numbers them: switches from 0x200000, one each;
	 * CAs from 0x100000, one for the node and one per port */
	ck_assert_uint_eq(f.nodes[s1].guid, 0x200000);
	ck_assert_uint_eq(f.nodes[s2].guid, 0x200001);
	ck_assert_uint_eq(f.nodes[h1].guid, 0x100000);
	ck_assert_uint_eq(f.nodes[h2].guid, 0x100003);
	ck_assert_uint_eq(f.nodes[h2].ports[2].guid, 0x100005);
	ck_assert_uint_eq(f.nodes[s2].ports[3].guid, f.nodes[s2].guid);
	ck_assert_uint_eq(f.nodes[h2].sys_guid, f.nodes[h2].guid);
	ck_assert_int_eq(fabric_find(&f, 0x100003), h2);

	assert_link(&f, s1, 1, h1, 1);
	assert_link(&f, s1, 2, h2, 2);
	assert_link(&f, s1, 3, s2, 3);
	assert_link(&f, s1, 4, s2, 4);
	ck_assert(!f.nodes[h2].ports[1].valid);
	ck_assert_int_eq(f.nodes[h2].ports[1].peer_node, FAB_NONE);
	ck_assert(!f.nodes[s1].ports[5].valid);

	/* switch port 0 has PortInfo; linked ports are up, 4x SDR */
	ck_assert(f.nodes[s1].ports[0].valid);
	ck_assert(f.nodes[s1].has_switch_info);
	assert_port_up(&f.nodes[s1].ports[3], 3, 2, 1);
	assert_port_up(&f.nodes[h2].ports[2], 2, 2, 1);

	/* the first CA and its lowest linked port is the SM port */
	ck_assert_int_eq(f.local_node, h1);
	ck_assert_uint_eq(f.local_port, 1);
	ck_assert_uint_eq(f.local_port_guid, 0x100001);
	fabric_free(&f);
}
END_TEST

START_TEST(ibsim_two_port_hcas)
{
	struct fabric f;
	struct fabric_counts c;
	int32_t s1, s2, h1, h2;

	load_ok(&f, NET_EXAMPLES "/net.2sw2path4hca2port");
	fabric_count(&f, &c);
	ck_assert_uint_eq(c.switches, 2);
	ck_assert_uint_eq(c.cas, 2);
	ck_assert_uint_eq(c.links, 6);
	ck_assert_uint_eq(c.ports, 12);
	s1 = by_desc(&f, "Switch1");
	s2 = by_desc(&f, "Switch2");
	h1 = by_desc(&f, "Hca1");
	h2 = by_desc(&f, "Hca2");
	assert_link(&f, s1, 1, h1, 1);
	assert_link(&f, s1, 2, h1, 2);
	assert_link(&f, s2, 1, h2, 1);
	assert_link(&f, s2, 2, h2, 2);
	assert_link(&f, s1, 3, s2, 3);
	assert_link(&f, s1, 5, s2, 5);
	ck_assert_uint_eq(f.nodes[h1].ports[1].guid, f.nodes[h1].guid + 1);
	ck_assert_uint_eq(f.nodes[h1].ports[2].guid, f.nodes[h1].guid + 2);
	ck_assert_uint_ne(f.nodes[h1].ports[2].guid, f.nodes[h2].ports[1].guid);
	ck_assert_int_eq(f.local_node, h1);
	ck_assert_uint_eq(f.local_port, 1);
	fabric_free(&f);
}
END_TEST

static const char ibnd_text[] =
	"#\n"
	"# Topology file: generated on Sat Nov 21 16:48:16 2026\n"
	"#\n"
	"# Initiated from node 0002c90300000200 port 0002c90300000201\n"
	"\n"
	"vendid=0x2c9\n"
	"devid=0xc738\n"
	"sysimgguid=0x2c90300000aff\n"
	"switchguid=0x2c90300000100(2c90300000100)\n"
	"Switch\t36 \"S-0002c90300000100\"\t\t# \"MF0;sw-1:SX6036/U1\" enhanced port 0 lid 1 lmc 0\n"
	"[1]\t\"H-0002c90300000200\"[1](2c90300000201) \t\t# \"node-a HCA-1\" lid 3 4xFDR\n"
	"[2]\t\"H-0002c90300000300\"[2](2c90300000302) \t\t# \"node-b HCA-1\" lid 4 4xFDR\n"
	"[3]\t\"S-0002c90300000110\"[7]\t\t# \"sw-2\" lid 2 4xFDR\n"
	"\n"
	"vendid=0x2c9\n"
	"devid=0xc738\n"
	"sysimgguid=0x2c90300000110\n"
	"switchguid=0x2c90300000110(2c90300000110)\n"
	"Switch\t8 \"S-0002c90300000110\"\t\t# \"sw-2\" base port 0 lid 2 lmc 0\n"
	"[7]\t\"S-0002c90300000100\"[3]\t\t# \"MF0;sw-1:SX6036/U1\" lid 1 4xFDR\n"
	"[8]\t\"R-0002c90300000400\"[1](2c90300000401) \t\t# \"router\" lid 6 12xQDR\n"
	"\n"
	"vendid=0x2c9\n"
	"devid=0x1003\n"
	"sysimgguid=0x2c90300000203\n"
	"caguid=0x2c90300000200\n"
	"Ca\t2 \"H-0002c90300000200\"\t\t# \"node-a HCA-1\"\n"
	"[1](2c90300000201) \t\"S-0002c90300000100\"[1]\t\t# lid 3 lmc 0 \"MF0;sw-1:SX6036/U1\" lid 1 4xFDR\n"
	"\n"
	"vendid=0x2c9\n"
	"devid=0x1003\n"
	"caguid=0x2c90300000300\n"
	"Hca\t2 \"H-0002c90300000300\"\t\t# \"node-b HCA-1\"\n"
	"[2](2c90300000302) \t\"S-0002c90300000100\"[2]\t\t# lid 4 lmc 0 \"MF0;sw-1:SX6036/U1\" lid 1 4xFDR\n"
	"\n"
	"rtguid=0x2c90300000400\n"
	"Rt\t1 \"R-0002c90300000400\"\t\t# \"router\"\n";

START_TEST(ibnetdiscover)
{
	struct fabric f;
	struct fabric_counts c;
	int32_t sw1, sw2, a, b, rt;
	const struct fab_node *n;

	load_ok(&f, write_tmp(ibnd_text));
	unlink(tmp_path);
	fabric_count(&f, &c);
	ck_assert_uint_eq(c.switches, 2);
	ck_assert_uint_eq(c.cas, 2);
	ck_assert_uint_eq(c.routers, 1);
	ck_assert_uint_eq(c.links, 4);

	sw1 = fabric_find(&f, 0x2c90300000100ull);
	sw2 = fabric_find(&f, 0x2c90300000110ull);
	a = fabric_find(&f, 0x2c90300000200ull);
	b = fabric_find(&f, 0x2c90300000300ull);
	rt = fabric_find(&f, 0x2c90300000400ull);
	ck_assert(sw1 >= 0 && sw2 >= 0 && a >= 0 && b >= 0 && rt >= 0);

	n = &f.nodes[sw1];
	ck_assert_uint_eq(n->type, NODE_TYPE_SWITCH);
	ck_assert_uint_eq(n->num_ports, 36);
	ck_assert_str_eq(n->desc, "MF0;sw-1:SX6036/U1");
	ck_assert_uint_eq(n->vendor_id, 0x2c9);
	ck_assert_uint_eq(n->device_id, 0xc738);
	ck_assert_uint_eq(n->sys_guid, 0x2c90300000affull);
	ck_assert(n->has_switch_info && smp_switch_info_enhanced_port0(&n->si));
	ck_assert(!smp_switch_info_enhanced_port0(&f.nodes[sw2].si));
	ck_assert_uint_eq(n->ports[0].guid, 0x2c90300000100ull);
	ck_assert_uint_eq(n->ports[3].guid, 0x2c90300000100ull);

	n = &f.nodes[a];
	ck_assert_uint_eq(n->type, NODE_TYPE_CA);
	ck_assert_str_eq(n->desc, "node-a HCA-1");
	ck_assert_uint_eq(n->device_id, 0x1003);
	ck_assert_uint_eq(n->ports[1].guid, 0x2c90300000201ull);
	ck_assert(!n->ports[2].valid);
	/* "Hca" is "Ca"; the port GUID given only by the switch's line */
	ck_assert_uint_eq(f.nodes[b].type, NODE_TYPE_CA);
	ck_assert_uint_eq(f.nodes[b].ports[2].guid, 0x2c90300000302ull);
	ck_assert_uint_eq(f.nodes[b].sys_guid, f.nodes[b].guid);
	/* a router, linked from the switch's side only */
	ck_assert_uint_eq(f.nodes[rt].type, NODE_TYPE_ROUTER);
	ck_assert_str_eq(f.nodes[rt].desc, "router");
	ck_assert_uint_eq(f.nodes[rt].ports[1].guid, 0x2c90300000401ull);

	assert_link(&f, sw1, 1, a, 1);
	assert_link(&f, sw1, 2, b, 2);
	assert_link(&f, sw1, 3, sw2, 7);
	assert_link(&f, sw2, 8, rt, 1);

	/* link width and speed from the comment: 4x FDR, 12x QDR */
	assert_port_up(&f.nodes[a].ports[1], 1, 2, 1);
	ck_assert_uint_eq(pi_speed_ext_active(&f.nodes[a].ports[1].pi), 1);
	ck_assert(be32toh(f.nodes[a].ports[1].pi.cap_mask) & PI_CAP_HAS_EXT_SPEEDS);
	assert_port_up(&f.nodes[rt].ports[1], 1, 8, 4);
	assert_port_up(&f.nodes[sw2].ports[8], 8, 8, 4);
	ck_assert_uint_eq(pi_speed_ext_active(&f.nodes[rt].ports[1].pi), 0);

	ck_assert_int_eq(f.local_node, a);
	ck_assert_uint_eq(f.local_port, 1);
	ck_assert_uint_eq(f.local_port_guid, 0x2c90300000201ull);
	fabric_free(&f);
}
END_TEST

/* ibsim's w= suffix (each end's LinkWidthEnabled; the link runs at the
 * widest both enable, 4x alone without w=), links listed on one end
 * only, CRLF, do lines */
START_TEST(ibsim_extensions)
{
	static const char text[] =
		"do echo hello\r\n"
		"Switch 4 \"big switch\" # \"desc of big\"\r\n"
		"[1] \"host 1\"[1] w=1\r\n"
		"[2]\t\"host 2\"[1]\tw=10\r\n"
		"[3] \"host 3\"[1] w=3\r\n"
		"\r\n"
		"Hca 1 \"host 1\"\r\n"
		"[1] \"big switch\"[1] w=3\r\n"
		"Hca 1 \"host 2\"\r\n"
		"[1] \"big switch\"[2] w=8\r\n"
		"Hca 1 \"host 3\"\r\n";
	struct fabric f;
	int32_t sw, h1, h2;

	load_ok(&f, write_tmp(text));
	unlink(tmp_path);
	ck_assert_uint_eq(f.n_nodes, 4);
	sw = by_desc(&f, "desc of big");
	h1 = by_desc(&f, "host 1");
	h2 = by_desc(&f, "host 2");
	assert_link(&f, sw, 1, h1, 1);
	assert_link(&f, sw, 2, h2, 1);
	assert_port_up(&f.nodes[h1].ports[1], 1, 1, 1);		/* 1x */
	assert_port_up(&f.nodes[sw].ports[2], 2, 8, 1);		/* 12x */
	assert_port_up(&f.nodes[sw].ports[3], 3, 2, 1);		/* 4x */
	ck_assert_uint_eq(f.nodes[sw].ports[2].pi.link_width_enabled, 10);
	ck_assert_uint_eq(f.nodes[h2].ports[1].pi.link_width_enabled, 8);
	fabric_free(&f);
}
END_TEST

/* ibsim's GUID counters: set once, absolute or relative, per type;
 * vendid and sysimgguid for the next node only, devid for all after. */
START_TEST(guid_counters)
{
	static const char text[] =
		"switchguid=0x1000\n"
		"caguid=0x5000\n"
		"vendid=0x2c9\n"
		"devid=0xbd36\n"
		"sysimgguid=0x77\n"
		"Switch 8 \"s1\"  # leaf one lid 1 lmc 0\n"
		"[1] \"c1\"[2]\n"
		"[2] \"c2\"\n"
		"[3] \"s2\"[3]\n"
		"Switch 8 \"s2\"  enhanced port 0\n"
		"Ca 2 \"c1\"\n"
		"caguid+0x10\n"
		"Ca 2 \"c2\"\n"
		"Ca 2 \"c3\"\n";
	struct fabric f;
	int32_t s1, s2, c1, c2, c3;

	load_ok(&f, write_tmp(text));
	unlink(tmp_path);
	s1 = fabric_find(&f, 0x1000);
	s2 = fabric_find(&f, 0x1001);
	c1 = fabric_find(&f, 0x5000);
	c2 = fabric_find(&f, 0x5010);
	c3 = fabric_find(&f, 0x5013);
	ck_assert(s1 >= 0 && s2 >= 0 && c1 >= 0 && c2 >= 0 && c3 >= 0);
	ck_assert_str_eq(f.nodes[s1].desc, "leaf one");	/* unquoted */
	ck_assert_str_eq(f.nodes[s2].desc, "s2");
	ck_assert_uint_eq(f.nodes[s1].vendor_id, 0x2c9);
	ck_assert_uint_eq(f.nodes[s2].vendor_id, 0);
	ck_assert_uint_eq(f.nodes[s1].device_id, 0xbd36);
	ck_assert_uint_eq(f.nodes[c3].device_id, 0xbd36);
	ck_assert_uint_eq(f.nodes[s1].sys_guid, 0x77);
	ck_assert_uint_eq(f.nodes[s2].sys_guid, 0x1001);
	/* no peer port: ibsim takes port 1 */
	assert_link(&f, s1, 2, c2, 1);
	assert_link(&f, s1, 1, c1, 2);
	ck_assert_uint_eq(f.nodes[c1].ports[2].guid, 0x5002);
	ck_assert(f.nodes[s2].has_switch_info);
	ck_assert(smp_switch_info_enhanced_port0(&f.nodes[s2].si));
	ck_assert(!smp_switch_info_enhanced_port0(&f.nodes[s1].si));
	ck_assert_int_eq(f.local_node, c1);
	ck_assert_uint_eq(f.local_port, 2);
	fabric_free(&f);
}
END_TEST

/* Dump a loaded fabric in ibnetdiscover format and load it back. */
START_TEST(dump_round_trip)
{
	struct fabric f, g;
	FILE *fp;
	int fd;

	/* parallel links, a two-port host, 4x EDR and 1x SDR links */
	load_ok(&f, TOPO_DIR "/tiny.net");
	strcpy(tmp_path, "/tmp/check_topo_load.XXXXXX");
	fd = mkstemp(tmp_path);
	ck_assert_int_ge(fd, 0);
	fp = fdopen(fd, "w");
	ck_assert_int_eq(topo_dump(&f, fp), 0);
	fclose(fp);
	load_ok(&g, tmp_path);
	unlink(tmp_path);

	ck_assert_uint_eq(g.n_nodes, f.n_nodes);
	for (size_t i = 0; i < f.n_nodes; i++) {
		const struct fab_node *x = &f.nodes[i];
		int32_t j = fabric_find(&g, x->guid);
		const struct fab_node *y;

		ck_assert_int_ge(j, 0);
		y = &g.nodes[j];
		ck_assert_uint_eq(y->type, x->type);
		ck_assert_uint_eq(y->num_ports, x->num_ports);
		ck_assert_str_eq(y->desc, x->desc);
		for (unsigned p = 1; p <= x->num_ports; p++) {
			const struct fab_port *a = &x->ports[p], *b = &y->ports[p];

			ck_assert_int_eq(a->valid, b->valid);
			ck_assert_uint_eq(a->guid, b->guid);
			if (a->peer_node == FAB_NONE) {
				ck_assert_int_eq(b->peer_node, FAB_NONE);
				continue;
			}
			ck_assert_uint_eq(g.nodes[b->peer_node].guid,
					  f.nodes[a->peer_node].guid);
			ck_assert_uint_eq(b->peer_port, a->peer_port);
			ck_assert_uint_eq(b->pi.link_width_active,
					  a->pi.link_width_active);
			ck_assert_uint_eq(pi_speed_active(&b->pi),
					  pi_speed_active(&a->pi));
			ck_assert_uint_eq(pi_speed_ext_active(&b->pi),
					  pi_speed_ext_active(&a->pi));
		}
	}
	ck_assert_uint_eq(g.local_port_guid, f.local_port_guid);
	/* and the speeds really were EDR and SDR */
	ck_assert_uint_eq(pi_speed_ext_active(&f.nodes[0].ports[1].pi), 2);
	ck_assert_uint_eq(f.nodes[by_desc(&f, "H0004 slow host")].ports[1].pi.
			  link_width_active, 1);
	fabric_free(&f);
	fabric_free(&g);
}
END_TEST

/* Every bundled topology loads and has the counts its header announces. */
START_TEST(bundled_topologies)
{
	DIR *d = opendir(TOPO_DIR);
	struct dirent *de;
	unsigned n_files = 0;

	ck_assert_msg(d != NULL, "%s: %s", TOPO_DIR, strerror(errno));
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char path[512], line[512];
		unsigned sw = 0, hosts = 0, links = 0;
		bool announced = false;
		struct fabric_counts c;
		struct fabric f;
		FILE *fp;

		if (len < 5 || strcmp(de->d_name + len - 4, ".net"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", TOPO_DIR, de->d_name);
		/* gen-topo writes "# 12 switches, 32 hosts, 81 links" */
		fp = fopen(path, "r");
		ck_assert_ptr_nonnull(fp);
		while (fgets(line, sizeof(line), fp) && line[0] == '#')
			if (sscanf(line, "# %u switches, %u hosts, %u links",
				   &sw, &hosts, &links) == 3)
				announced = true;
		fclose(fp);

		load_ok(&f, path);
		fabric_count(&f, &c);
		if (announced) {
			ck_assert_msg(c.switches == sw && c.cas == hosts &&
				      c.links == links, "%s: %zu/%zu/%zu, header "
				      "says %u/%u/%u", path, c.switches, c.cas,
				      c.links, sw, hosts, links);
		}
		ck_assert_int_ne(f.local_node, FAB_NONE);
		fabric_free(&f);
		n_files++;
	}
	closedir(d);
	ck_assert_msg(n_files >= 1, "no .net files in %s", TOPO_DIR);
}
END_TEST

/* A 50,000-node fabric (ibsim format, links on both ends) loads fast. */
START_TEST(big_file)
{
	enum { LEAVES = 2000, HOSTS = 24, PER_SPINE = 250,
	       SPINES = LEAVES / PER_SPINE };
	struct fabric f;
	struct fabric_counts c;
	struct timespec t0, t1;
	double dt;
	FILE *fp;
	int fd;

	strcpy(tmp_path, "/tmp/check_topo_load.XXXXXX");
	fd = mkstemp(tmp_path);
	ck_assert_int_ge(fd, 0);
	fp = fdopen(fd, "w");
	ck_assert_ptr_nonnull(fp);
	for (int l = 0; l < LEAVES; l++) {
		fprintf(fp, "Switch 36 \"leaf-%d\"\n", l);
		for (int h = 0; h < HOSTS; h++)
			fprintf(fp, "[%d] \"H-%d-%d\"[1]\n", h + 1, l, h);
		fprintf(fp, "[36] \"spine-%d\"[%d]\n\n", l / PER_SPINE,
			l % PER_SPINE + 1);
		for (int h = 0; h < HOSTS; h++)
			fprintf(fp, "Hca 1 \"H-%d-%d\"\n[1] \"leaf-%d\"[%d]\n\n",
				l, h, l, h + 1);
	}
	/* spines in a chain through ports 253 and 254 */
	for (int s = 0; s < SPINES; s++) {
		fprintf(fp, "Switch 254 \"spine-%d\"\n", s);
		for (int l = 0; l < PER_SPINE; l++)
			fprintf(fp, "[%d] \"leaf-%d\"[36]\n", l + 1,
				s * PER_SPINE + l);
		if (s + 1 < SPINES)
			fprintf(fp, "[254] \"spine-%d\"[253]\n", s + 1);
		fputc('\n', fp);
	}
	ck_assert_int_eq(fclose(fp), 0);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	load_ok(&f, tmp_path);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	unlink(tmp_path);
	fabric_count(&f, &c);
	ck_assert_uint_eq(f.n_nodes, LEAVES * (HOSTS + 1) + SPINES);
	ck_assert_uint_eq(c.switches, LEAVES + SPINES);
	ck_assert_uint_eq(c.cas, LEAVES * HOSTS);
	ck_assert_uint_eq(c.links, LEAVES * HOSTS + LEAVES + SPINES - 1);
	assert_link(&f, by_desc(&f, "spine-3"), 254, by_desc(&f, "spine-4"), 253);
	/* generous for sanitizers and busy machines: the point is that it
	 * is not quadratic (it takes well under 0.1 s in a release build) */
	dt = (double)(t1.tv_sec - t0.tv_sec) +
	     (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_msg(dt < 5.0, "loading %zu nodes took %.2f s", f.n_nodes, dt);
	fabric_free(&f);
}
END_TEST

/* Each bad file fails with -EINVAL and "PATH:LINE: expected ...". */
static void expect_error(const char *text, unsigned line, const char *what)
{
	struct fabric f;
	char err[256], prefix[96];
	int rc;

	write_tmp(text);
	fabric_init(&f);
	rc = topo_load(&f, tmp_path, err, sizeof(err));
	unlink(tmp_path);
	fabric_free(&f);
	ck_assert_msg(rc == -EINVAL, "rc %d (%s) for:\n%s", rc, err, text);
	snprintf(prefix, sizeof(prefix), "%s:%u: expected", tmp_path, line);
	ck_assert_msg(!strncmp(err, prefix, strlen(prefix)),
		      "\"%s\" does not start with \"%s\"", err, prefix);
	ck_assert_msg(strstr(err, what), "\"%s\" does not mention \"%s\"",
		      err, what);
}

START_TEST(errors)
{
	/* bad header lines */
	expect_error("Swich 8 \"S1\"\n", 1, "Switch");
	expect_error("\n\nSwitch eight \"S1\"\n", 3, "port count");
	expect_error("Switch 0 \"S1\"\n", 1, "port count 1-254");
	expect_error("Switch 300 \"S1\"\n", 1, "port count 1-254");
	expect_error("Hca 2 S1\n", 1, "quoted name");
	expect_error("Ca 2 \"\"\n", 1, "non-empty");
	expect_error("Switch 8 \"S1\n", 1, "closing quote");
	expect_error("Switch 8 \"S1\"\n[1] \"H1\n", 2, "closing quote");
	expect_error("include other.net\n", 1, "include");
	expect_error("vendid=zz\nSwitch 8 \"S1\"\n", 1, "hex number");
	expect_error("color=0x1\n", 1, "vendid=");
	expect_error("caguid=0x10\n", 1, "at least one");
	expect_error("caguid-0x10\n", 1, "Switch, Ca");
	expect_error("devid+1\n", 1, "devid=, not devid+");
	expect_error("@alias \"x\"\n", 1, "aliases");
	expect_error("module=\"m\"\n", 1, "module");
	expect_error("Switch 8 \"S1\"\nCa 1 \"S1\"\n", 2, "already defined at line 1");
	/* bad port lines */
	expect_error("[1] \"S2\"[1]\n", 1, "node header");
	expect_error("Switch 8 \"S1\"\n[0] \"S2\"[1]\n", 2, "port number 1-8");
	expect_error("Switch 8 \"S1\"\n[x] \"S2\"[1]\n", 2, "decimal port");
	expect_error("Switch 8 \"S1\"\n[9] \"S2\"[1]\n", 2, "port number 1-8, got 9");
	expect_error("Switch 8 \"S1\"\n[1](xyz) \"S2\"[1]\n", 2, "GUID");
	expect_error("Switch 8 \"S1\"\n[1] \"S2\"[1] w=32\n", 2, "w=1-31");
	/* ends that enable no width in common (S2 enables 4x alone) */
	expect_error("Switch 8 \"S1\"\n[1] \"S2\"[1] w=1\n\n"
		     "Switch 8 \"S2\"\n[1] \"S1\"[1]\n", 2,
		     "a width in common");
	/* peer port beyond the peer's port count */
	expect_error("Switch 8 \"S1\"\n[1] \"H1\"[3]\n\nHca 2 \"H1\"\n", 2,
		     "port 1-2 of \"H1\", got [3]");
	/* a link to a node that has no record */
	expect_error("Switch 8 \"S1\"\n[1] \"S2\"[1]\n\nSwitch 8 \"S3\"\n", 2,
		     "\"S2\"");
	/* a port linked to itself */
	expect_error("Switch 8 \"S1\"\n[1] \"S1\"[1]\n", 2, "itself");
	/* inconsistent ends: S2 says its port 1 goes to S1[2] */
	expect_error("Switch 8 \"S1\"\n[1] \"S2\"[1]\n\n"
		     "Switch 8 \"S2\"\n[1] \"S1\"[2]\n", 5,
		     "\"S2\"[1] -> \"S1\"[2] to agree with line 2, which links "
		     "\"S2\"[1] to \"S1\"[1]");
	/* inconsistent ends: S2[2] claims S1[1], which goes to S2[1] */
	expect_error("Switch 8 \"S1\"\n[1] \"S2\"[1]\n\n"
		     "Switch 8 \"S2\"\n[2] \"S1\"[1]\n", 5,
		     "\"S2\"[2] -> \"S1\"[1] to agree with line 2, which links "
		     "\"S1\"[1] to \"S2\"[1]");
	/* one port listed twice with different peers */
	expect_error("Switch 8 \"S1\"\n[1] \"S2\"[1]\n[1] \"S2\"[2]\n\n"
		     "Switch 8 \"S2\"\n", 3, "agree with line 2");
	/* two nodes with one GUID */
	expect_error("switchguid=0x5\nSwitch 8 \"a\"\n\n"
		     "switchguid=0x5\nSwitch 8 \"b\"\n", 5, "unique node GUID");
	expect_error("# only comments\n\n", 2, "at least one");
}
END_TEST

START_TEST(missing_file)
{
	struct fabric f;
	char err[256];

	fabric_init(&f);
	ck_assert_int_eq(topo_load(&f, "/nonexistent/x.net", err, sizeof(err)),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/x.net"));
	fabric_free(&f);
}
END_TEST

/* The parser proper reads a buffer, no file: errors name what the caller
 * calls it, and the content read from a file gives the same model. */
START_TEST(parse_buffer)
{
	static const char text[] =
		"Switch 4 \"sw\"\n"
		"[1] \"h\"[1]\n"
		"\n"
		"Ca 1 \"h\"\n"
		"[1] \"sw\"[1]\n";
	struct fabric f, g;
	char buf[sizeof(text)], err[256];

	memcpy(buf, text, sizeof(text));
	fabric_init(&f);
	ck_assert_int_eq(topo_parse(&f, "mem", buf, sizeof(text) - 1, err,
				    sizeof(err)), 0);
	load_ok(&g, write_tmp(text));
	unlink(tmp_path);
	ck_assert_uint_eq(f.n_nodes, 2);
	ck_assert_uint_eq(g.n_nodes, 2);
	for (size_t i = 0; i < f.n_nodes; i++)
		ck_assert_uint_eq(f.nodes[i].guid, g.nodes[i].guid);
	assert_link(&f, by_desc(&f, "sw"), 1, by_desc(&f, "h"), 1);
	fabric_free(&f);
	fabric_free(&g);

	static const char bad[] = "Switch 4 \"sw\"\n[9] \"sw\"[1]\n";
	char bbuf[sizeof(bad)];

	memcpy(bbuf, bad, sizeof(bad));
	fabric_init(&f);
	ck_assert_int_eq(topo_parse(&f, "mem", bbuf, sizeof(bad) - 1, err,
				    sizeof(err)), -EINVAL);
	ck_assert_msg(!strncmp(err, "mem:2: ", 7), "%s", err);
	fabric_free(&f);
}
END_TEST

/* GUIDs from "S-<guid>" names when no switchguid= line is given. */
START_TEST(guids_from_names)
{
	static const char text[] =
		"Switch 4 \"S-0002c90000000000\"\n"
		"[1] \"plain\"[1]\n"
		"\n"
		"Switch 4 \"plain\"\n";
	struct fabric f;
	int32_t a, b;

	load_ok(&f, write_tmp(text));
	unlink(tmp_path);
	a = fabric_find(&f, 0x0002c90000000000ull);
	ck_assert_int_eq(a, 0);
	b = by_desc(&f, "plain");
	ck_assert_uint_eq(f.nodes[b].guid, 0x200000);	/* the counter */
	assert_link(&f, a, 1, b, 1);
	ck_assert_int_eq(f.local_node, FAB_NONE);	/* no CA */
	fabric_free(&f);
}
END_TEST

static Suite *topo_load_suite(void)
{
	Suite *s = suite_create("topo_load");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ibsim_net);
	tcase_add_test(tc, ibsim_two_port_hcas);
	tcase_add_test(tc, ibnetdiscover);
	tcase_add_test(tc, ibsim_extensions);
	tcase_add_test(tc, guid_counters);
	tcase_add_test(tc, dump_round_trip);
	tcase_add_test(tc, bundled_topologies);
	tcase_add_test(tc, big_file);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, missing_file);
	tcase_add_test(tc, guids_from_names);
	tcase_add_test(tc, parse_buffer);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(topo_load_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
