/*
 * check_lid.c - LID assignment and the guid2lid cache.
 *
 * Fabrics are built by hand with fabric_add_node()/fabric_link(); a
 * port's "current LID" is what its PortInfo says, as discovery would have
 * read it.  Cache files go to a fresh directory under $TMPDIR.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sm/lid.h"

#define SW_GUID(i)	(0x0002c90300100000ull + (uint64_t)(i))
#define CA_GUID(i)	(0x0002c90300200000ull + (uint64_t)(i) * 0x10)
#define CA_PORT(i, p)	(CA_GUID(i) + (uint64_t)(p))

/* ---------------------------------------------------------------------
 * Helpers
 */

static int32_t add_switch(struct fabric *f, uint64_t guid, uint8_t nports,
			  uint16_t lid, bool enhanced)
{
	int32_t id = fabric_add_node(f, guid, NODE_TYPE_SWITCH, nports);
	struct fab_node *n;

	ck_assert_int_ge(id, 0);
	n = fabric_node(f, id);
	n->has_switch_info = true;
	if (enhanced)
		n->si.enf_caps |= 1u << 3;
	for (unsigned p = 0; p <= nports; p++) {
		n->ports[p].guid = guid;
		n->ports[p].valid = true;
	}
	n->ports[0].pi.lid = htobe16(lid);
	return id;
}

/* A CA whose port p has GUID guid + p and current LID lid (port 1). */
static int32_t add_ca(struct fabric *f, uint64_t guid, uint8_t nports,
		      uint16_t lid)
{
	int32_t id = fabric_add_node(f, guid, NODE_TYPE_CA, nports);
	struct fab_node *n;

	ck_assert_int_ge(id, 0);
	n = fabric_node(f, id);
	for (unsigned p = 1; p <= nports; p++) {
		n->ports[p].guid = guid + p;
		n->ports[p].valid = true;
	}
	n->ports[1].pi.lid = htobe16(lid);
	return id;
}

static void set_cur_lid(struct fabric *f, uint64_t node_guid, uint8_t port,
			uint16_t lid)
{
	int32_t id = fabric_find(f, node_guid);

	ck_assert_int_ge(id, 0);
	fabric_node(f, id)->ports[port].pi.lid = htobe16(lid);
}

static struct fab_port *port_of(const struct fabric *f, uint64_t node_guid,
				uint8_t port)
{
	int32_t id = fabric_find(f, node_guid);

	ck_assert_int_ge(id, 0);
	return &fabric_node(f, id)->ports[port];
}

static uint16_t lid_of(const struct fabric *f, uint64_t node_guid, uint8_t port)
{
	return port_of(f, node_guid, port)->lid;
}

#define N_SW	3
#define N_CA	6

/*
 * Three switches in a line and six CAs (CA 0 has two ports), two per
 * switch; built in either order to show that discovery order does not
 * matter.  Every current LID is zero.
 */
static void small_fabric(struct fabric *f, bool reverse)
{
	int32_t sw[N_SW], ca[N_CA];

	fabric_init(f);
	for (int k = 0; k < N_SW + N_CA; k++) {
		int i = reverse ? N_SW + N_CA - 1 - k : k;

		if (i < N_SW)
			sw[i] = add_switch(f, SW_GUID(i), 8, 0, false);
		else
			ca[i - N_SW] = add_ca(f, CA_GUID(i - N_SW),
					      i == N_SW ? 2 : 1, 0);
	}
	ck_assert_int_eq(fabric_link(f, sw[0], 7, sw[1], 7), 0);
	ck_assert_int_eq(fabric_link(f, sw[1], 8, sw[2], 8), 0);
	for (int i = 0; i < N_CA; i++)
		ck_assert_int_eq(fabric_link(f, ca[i], 1, sw[i % N_SW],
					     (uint8_t)(1 + i / N_SW)), 0);
	ck_assert_int_eq(fabric_link(f, ca[0], 2, sw[2], 3), 0);
}

/*
 * Every LID-bearing port has a non-zero aligned range of the right size,
 * no two ranges overlap, and max_lid is the top of the highest range.
 * Returns the number of LID-bearing ports.
 */
static unsigned check_valid(const struct fabric *f, uint8_t lmc)
{
	static uint8_t owner[LID_UNICAST_MAX + 1];
	unsigned n = 0, top = 0;

	memset(owner, 0, sizeof(owner));
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = fabric_node(f, (int32_t)i);
		bool sw = nd->type == NODE_TYPE_SWITCH;

		for (unsigned p = sw ? 0 : 1; p <= (sw ? 0u : nd->num_ports); p++) {
			const struct fab_port *pt = &nd->ports[p];
			unsigned want = sw && !(nd->si.enf_caps & 8) ? 0 : lmc;
			unsigned size = 1u << want;

			if (!pt->valid)
				continue;
			n++;
			ck_assert_uint_ne(pt->lid, 0);
			ck_assert_uint_eq(pt->lmc, want);
			ck_assert_uint_eq(pt->lid % size, 0);
			ck_assert_uint_le(pt->lid + size - 1, LID_UNICAST_MAX);
			for (unsigned l = pt->lid; l < pt->lid + size; l++) {
				ck_assert_msg(!owner[l], "LID 0x%x given twice", l);
				owner[l] = 1;
			}
			if (pt->lid + size - 1 > top)
				top = pt->lid + size - 1;
		}
	}
	ck_assert_uint_eq(f->max_lid, top);
	return n;
}

static char tmpdir[64];

static void make_tmpdir(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/check_lid.XXXXXX",
		 t && strlen(t) < 40 ? t : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *de;
	char p[512];

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", tmpdir, de->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(tmpdir);
}

static void tmpfile_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	ck_assert_int_eq(fclose(fp), 0);
}

static size_t read_file(const char *path, char *buf, size_t len)
{
	FILE *fp = fopen(path, "r");
	size_t n;

	ck_assert_ptr_nonnull(fp);
	n = fread(buf, 1, len - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return n;
}

struct warnings {
	unsigned n;
	char msg[32][256];
};

static void collect_warning(void *arg, const char *msg)
{
	struct warnings *w = arg;

	if (w->n < 32)
		snprintf(w->msg[w->n], sizeof(w->msg[0]), "%s", msg);
	w->n++;
}

/* ---------------------------------------------------------------------
 * Fresh fabrics
 */

START_TEST(fresh_fabric_unique_aligned)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 2 };
	struct lid_report r;

	small_fabric(&f, false);
	ck_assert_int_eq(lid_assign(&f, NULL, &pol, &r), 0);
	/* 3 switch port 0s, 7 CA ports */
	ck_assert_uint_eq(check_valid(&f, 2), N_SW + N_CA + 1);
	ck_assert_uint_eq(r.assigned, N_SW + N_CA + 1);
	ck_assert_uint_eq(r.kept_cache + r.kept_fabric + r.fixed_dup +
			  r.fixed_range + r.exhausted, 0);
	for (int i = 0; i < N_SW; i++)
		ck_assert_uint_eq(port_of(&f, SW_GUID(i), 0)->lmc, 0);
	for (int i = 0; i < N_CA; i++)
		ck_assert_uint_eq(lid_of(&f, CA_GUID(i), 1) % 4, 0);
	/* switch ports 1..N carry no LID of their own */
	ck_assert_uint_eq(lid_of(&f, SW_GUID(0), 1), 0);
	fabric_free(&f);
}
END_TEST

START_TEST(fresh_fabric_order_independent)
{
	struct fabric a, b;
	struct lid_policy pol = { .lmc = 1 };

	small_fabric(&a, false);
	small_fabric(&b, true);
	ck_assert_int_eq(lid_assign(&a, NULL, &pol, NULL), 0);
	ck_assert_int_eq(lid_assign(&b, NULL, &pol, NULL), 0);
	for (int i = 0; i < N_SW; i++)
		ck_assert_uint_eq(lid_of(&a, SW_GUID(i), 0), lid_of(&b, SW_GUID(i), 0));
	for (int i = 0; i < N_CA; i++)
		ck_assert_uint_eq(lid_of(&a, CA_GUID(i), 1), lid_of(&b, CA_GUID(i), 1));
	ck_assert_uint_eq(lid_of(&a, CA_GUID(0), 2), lid_of(&b, CA_GUID(0), 2));
	ck_assert_uint_eq(a.max_lid, b.max_lid);
	fabric_free(&a);
	fabric_free(&b);
}
END_TEST

START_TEST(enhanced_port0_gets_lmc)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 3, .lmc_esp0 = true };

	fabric_init(&f);
	add_switch(&f, SW_GUID(0), 4, 0, true);
	add_switch(&f, SW_GUID(1), 4, 0, false);
	add_ca(&f, CA_GUID(0), 1, 0);
	/* SwitchInfo never read: treat as base port 0 */
	fabric_node(&f, add_switch(&f, SW_GUID(2), 4, 0, true))->has_switch_info = false;
	ck_assert_int_eq(lid_assign(&f, NULL, &pol, NULL), 0);
	ck_assert_uint_eq(port_of(&f, SW_GUID(0), 0)->lmc, 3);
	ck_assert_uint_eq(lid_of(&f, SW_GUID(0), 0) % 8, 0);
	ck_assert_uint_eq(port_of(&f, SW_GUID(1), 0)->lmc, 0);
	ck_assert_uint_eq(port_of(&f, SW_GUID(2), 0)->lmc, 0);
	ck_assert_uint_eq(port_of(&f, CA_GUID(0), 1)->lmc, 3);
	fabric_free(&f);
}
END_TEST

/* lmc_esp0 FALSE (OpenSM's default): an enhanced port 0 gets one LID
 * and LMC 0, like a base port 0; CA ports keep the LMC. */
START_TEST(enhanced_port0_without_lmc_esp0)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 2 };

	fabric_init(&f);
	add_switch(&f, SW_GUID(0), 4, 0, true);
	add_switch(&f, SW_GUID(1), 4, 0, false);
	add_ca(&f, CA_GUID(0), 1, 0);
	ck_assert_int_eq(lid_assign(&f, NULL, &pol, NULL), 0);
	ck_assert_uint_eq(port_of(&f, SW_GUID(0), 0)->lmc, 0);
	ck_assert_uint_eq(port_of(&f, SW_GUID(1), 0)->lmc, 0);
	ck_assert_uint_eq(port_of(&f, CA_GUID(0), 1)->lmc, 2);
	/* 1 + 1 + 4 LIDs, the CA's range aligned to 4 */
	ck_assert_uint_eq(lid_of(&f, CA_GUID(0), 1) % 4, 0);
	ck_assert_uint_le(f.max_lid, 7);
	fabric_free(&f);
}
END_TEST

START_TEST(ports_without_portinfo_skipped)
{
	struct fabric f;
	struct lid_report r;

	fabric_init(&f);
	add_switch(&f, SW_GUID(0), 4, 0, false);
	add_ca(&f, CA_GUID(0), 2, 0);
	port_of(&f, CA_GUID(0), 2)->valid = false;
	ck_assert_int_eq(lid_assign(&f, NULL, NULL, &r), 0);
	ck_assert_uint_eq(r.assigned, 2);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(0), 2), 0);
	ck_assert_uint_eq(f.max_lid, 2);
	fabric_free(&f);
}
END_TEST

START_TEST(bad_policy_and_empty_fabric)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 8 };
	struct lid_report r;

	fabric_init(&f);
	ck_assert_int_eq(lid_assign(&f, NULL, &pol, &r), -EINVAL);
	pol.lmc = 0;
	ck_assert_int_eq(lid_assign(&f, NULL, &pol, &r), 0);
	ck_assert_uint_eq(f.max_lid, 0);
	ck_assert_uint_eq(r.assigned, 0);
	fabric_free(&f);
}
END_TEST

/* ---------------------------------------------------------------------
 * Keeping LIDs: cache and current LIDs
 */

START_TEST(restart_keeps_everything)
{
	struct fabric f, g;
	struct lid_policy pol = { .lmc = 2 };
	struct lid_report r;
	struct lid_cache *c = lid_cache_new(), *d = lid_cache_new();
	char path[128];

	make_tmpdir();
	tmpfile_path(path, sizeof(path), "guid2lid");
	/* a first run with some LIDs already set by someone else */
	small_fabric(&f, false);
	set_cur_lid(&f, CA_GUID(3), 1, 0x100);
	set_cur_lid(&f, SW_GUID(1), 0, 0x33);
	ck_assert_int_eq(lid_assign(&f, c, &pol, &r), 0);
	ck_assert_uint_eq(r.kept_fabric, 2);
	ck_assert_uint_eq(lid_cache_count(c), N_SW + N_CA + 1);
	ck_assert_int_eq(lid_cache_save(c, path), 0);

	/* restart: a new model from scratch, every port back at LID 0 */
	small_fabric(&g, true);
	ck_assert_int_eq(lid_cache_load(d, path, NULL, NULL), N_SW + N_CA + 1);
	ck_assert_int_eq(lid_assign(&g, d, &pol, &r), 0);
	ck_assert_uint_eq(r.kept_cache, N_SW + N_CA + 1);
	ck_assert_uint_eq(r.assigned + r.kept_fabric, 0);
	check_valid(&g, 2);
	for (int i = 0; i < N_SW; i++)
		ck_assert_uint_eq(lid_of(&f, SW_GUID(i), 0), lid_of(&g, SW_GUID(i), 0));
	for (int i = 0; i < N_CA; i++)
		ck_assert_uint_eq(lid_of(&f, CA_GUID(i), 1), lid_of(&g, CA_GUID(i), 1));
	ck_assert_uint_eq(lid_of(&f, CA_GUID(0), 2), lid_of(&g, CA_GUID(0), 2));
	ck_assert_uint_eq(lid_of(&g, CA_GUID(3), 1), 0x100);
	ck_assert_uint_eq(lid_of(&g, SW_GUID(1), 0), 0x33);
	ck_assert_uint_eq(f.max_lid, g.max_lid);
	fabric_free(&f);
	fabric_free(&g);
	lid_cache_free(c);
	lid_cache_free(d);
	remove_tmpdir();
}
END_TEST

START_TEST(cache_updated_to_result)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 2 };
	struct lid_cache *c = lid_cache_new();
	uint16_t min, max;

	small_fabric(&f, false);
	ck_assert_int_eq(lid_assign(&f, c, &pol, NULL), 0);
	ck_assert(lid_cache_get(c, CA_PORT(1, 1), &min, &max));
	ck_assert_uint_eq(min, lid_of(&f, CA_GUID(1), 1));
	ck_assert_uint_eq(max, min + 3);
	ck_assert(lid_cache_get(c, SW_GUID(2), &min, &max));
	ck_assert_uint_eq(min, lid_of(&f, SW_GUID(2), 0));
	ck_assert_uint_eq(max, min);
	/* keyed by port GUID, not node GUID */
	ck_assert(!lid_cache_get(c, CA_GUID(1), NULL, NULL));
	fabric_free(&f);
	lid_cache_free(c);
}
END_TEST

START_TEST(current_lids_kept_without_cache)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 2 };
	struct lid_cache *c = lid_cache_new();
	struct lid_report r;

	for (int with_cache = 0; with_cache < 2; with_cache++) {
		small_fabric(&f, false);
		for (int i = 0; i < N_SW; i++)
			set_cur_lid(&f, SW_GUID(i), 0, (uint16_t)(0x201 + i));
		for (int i = 0; i < N_CA; i++)
			set_cur_lid(&f, CA_GUID(i), 1, (uint16_t)(0x400 - 4 * i));
		set_cur_lid(&f, CA_GUID(0), 2, 0x800);
		ck_assert_int_eq(lid_assign(&f, with_cache ? c : NULL, &pol, &r), 0);
		ck_assert_uint_eq(r.kept_fabric, N_SW + N_CA + 1);
		ck_assert_uint_eq(r.assigned, 0);
		for (int i = 0; i < N_SW; i++)
			ck_assert_uint_eq(lid_of(&f, SW_GUID(i), 0), 0x201 + i);
		for (int i = 0; i < N_CA; i++)
			ck_assert_uint_eq(lid_of(&f, CA_GUID(i), 1), 0x400 - 4 * i);
		ck_assert_uint_eq(lid_of(&f, CA_GUID(0), 2), 0x800);
		ck_assert_uint_eq(f.max_lid, 0x803);
		check_valid(&f, 2);
		fabric_free(&f);
	}
	lid_cache_free(c);
}
END_TEST

/* A port allocated first must not take a LID a later port can keep. */
START_TEST(fresh_port_does_not_steal)
{
	struct fabric f;
	struct lid_report r;

	fabric_init(&f);
	add_switch(&f, SW_GUID(0), 4, 0, false);	/* lowest GUID, no LID */
	add_ca(&f, CA_GUID(0), 1, 1);			/* has LID 1 */
	ck_assert_int_eq(lid_assign(&f, NULL, NULL, &r), 0);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(0), 1), 1);
	ck_assert_uint_eq(lid_of(&f, SW_GUID(0), 0), 2);
	ck_assert_uint_eq(r.kept_fabric, 1);
	ck_assert_uint_eq(r.assigned, 1);
	fabric_free(&f);
}
END_TEST

START_TEST(duplicate_current_lids_fixed)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 2 };
	struct lid_report r;

	fabric_init(&f);
	add_switch(&f, SW_GUID(0), 8, 0x10, false);
	add_ca(&f, CA_GUID(5), 1, 0x20);
	add_ca(&f, CA_GUID(2), 1, 0x20);	/* lower GUID: keeps 0x20 */
	add_ca(&f, CA_GUID(7), 1, 0x30);
	add_switch(&f, SW_GUID(1), 8, 0x31, false);	/* inside CA 7's range */
	ck_assert_int_eq(lid_assign(&f, NULL, &pol, &r), 0);
	check_valid(&f, 2);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(2), 1), 0x20);
	ck_assert_uint_ne(lid_of(&f, CA_GUID(5), 1), 0x20);
	/* the switch's GUID sorts first: it keeps 0x31, the CA moves */
	ck_assert_uint_eq(lid_of(&f, SW_GUID(1), 0), 0x31);
	ck_assert_uint_ne(lid_of(&f, CA_GUID(7), 1), 0x30);
	ck_assert_uint_eq(r.fixed_dup, 2);
	/* both collisions named, for the health checks */
	ck_assert_uint_eq(r.n_dups, 2);
	for (unsigned i = 0; i < 2; i++) {
		const struct lid_dup *d = &r.dups[i];

		if (d->moved == CA_PORT(5, 1)) {
			ck_assert_uint_eq(d->lid, 0x20);
			ck_assert_uint_eq(d->kept, CA_PORT(2, 1));
		} else {
			ck_assert_uint_eq(d->moved, CA_PORT(7, 1));
			ck_assert_uint_eq(d->lid, 0x30);
			ck_assert_uint_eq(d->kept, SW_GUID(1));
		}
	}
	ck_assert_uint_eq(r.kept_fabric, 3);
	ck_assert_uint_eq(r.assigned, 2);
	ck_assert_uint_eq(r.fixed_range, 0);
	fabric_free(&f);
}
END_TEST

/* With duplicates, the port whose cache entry agrees keeps the LID. */
START_TEST(duplicate_prefers_cache_agreement)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 0 };
	struct lid_cache *c = lid_cache_new();
	struct lid_report r;

	fabric_init(&f);
	add_ca(&f, CA_GUID(1), 1, 9);
	add_ca(&f, CA_GUID(2), 1, 9);
	ck_assert_int_eq(lid_cache_set(c, CA_PORT(2, 1), 9, 9), 0);
	ck_assert_int_eq(lid_assign(&f, c, &pol, &r), 0);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(2), 1), 9);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(1), 1), 1);
	ck_assert_uint_eq(r.kept_cache, 1);
	ck_assert_uint_eq(r.fixed_dup, 1);
	/* the port that kept the LID got it from the cache */
	ck_assert_uint_eq(r.n_dups, 1);
	ck_assert_uint_eq(r.dups[0].moved, CA_PORT(1, 1));
	ck_assert_uint_eq(r.dups[0].kept, CA_PORT(2, 1));
	ck_assert_uint_eq(r.assigned, 1);
	fabric_free(&f);
	lid_cache_free(c);
}
END_TEST

/*
 * A takeover (prefer_fabric): the LIDs ports hold are the old master's
 * and win over this SM's stale cache; the cache still serves a port
 * without a usable LID.  Without it, the cache wins.
 */
START_TEST(takeover_prefers_current_lids)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 0, .prefer_fabric = true };
	struct lid_cache *c = lid_cache_new();
	struct lid_report r;

	fabric_init(&f);
	add_ca(&f, CA_GUID(1), 1, 7);
	add_ca(&f, CA_GUID(2), 1, 0);
	ck_assert_int_eq(lid_cache_set(c, CA_PORT(1, 1), 3, 3), 0);
	ck_assert_int_eq(lid_cache_set(c, CA_PORT(2, 1), 5, 5), 0);
	ck_assert_int_eq(lid_assign(&f, c, &pol, &r), 0);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(1), 1), 7);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(2), 1), 5);
	ck_assert_uint_eq(r.kept_fabric, 1);
	ck_assert_uint_eq(r.kept_cache, 1);
	fabric_free(&f);
	lid_cache_free(c);

	pol.prefer_fabric = false;
	c = lid_cache_new();
	fabric_init(&f);
	add_ca(&f, CA_GUID(1), 1, 7);
	ck_assert_int_eq(lid_cache_set(c, CA_PORT(1, 1), 3, 3), 0);
	ck_assert_int_eq(lid_assign(&f, c, &pol, &r), 0);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(1), 1), 3);
	fabric_free(&f);
	lid_cache_free(c);
}
END_TEST

START_TEST(invalid_current_lids_fixed)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 2 };
	struct lid_report r;

	fabric_init(&f);
	add_switch(&f, SW_GUID(0), 8, 0xc000, false);	/* multicast range */
	add_switch(&f, SW_GUID(1), 8, 0xffff, false);	/* permissive */
	add_switch(&f, SW_GUID(2), 8, 0x7, false);	/* fine: LMC 0 */
	add_ca(&f, CA_GUID(0), 1, 0x6);			/* misaligned for LMC 2 */
	add_ca(&f, CA_GUID(1), 1, 0xbffd);		/* misaligned, near top */
	add_ca(&f, CA_GUID(2), 1, 0xbffc);		/* last aligned range: fine */
	ck_assert_int_eq(lid_assign(&f, NULL, &pol, &r), 0);
	check_valid(&f, 2);
	ck_assert_uint_eq(r.fixed_range, 4);
	ck_assert_uint_eq(r.kept_fabric, 2);
	ck_assert_uint_eq(r.assigned, 4);
	ck_assert_uint_eq(lid_of(&f, SW_GUID(2), 0), 7);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(2), 1), 0xbffc);
	ck_assert_uint_eq(f.max_lid, 0xbfff);
	fabric_free(&f);
}
END_TEST

/* LMC went from 0 to 2: the old single-LID cache entries no longer fit. */
START_TEST(cache_size_mismatch)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 2 };
	struct lid_cache *c = lid_cache_new();
	struct lid_report r;
	uint16_t min, max;

	fabric_init(&f);
	add_switch(&f, SW_GUID(0), 8, 0, false);
	add_ca(&f, CA_GUID(0), 1, 0);
	ck_assert_int_eq(lid_cache_set(c, SW_GUID(0), 3, 3), 0);
	ck_assert_int_eq(lid_cache_set(c, CA_PORT(0, 1), 8, 8), 0);
	ck_assert_int_eq(lid_assign(&f, c, &pol, &r), 0);
	ck_assert_uint_eq(lid_of(&f, SW_GUID(0), 0), 3);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(0), 1), 4);
	ck_assert_uint_eq(r.kept_cache, 1);
	ck_assert_uint_eq(r.assigned, 1);
	ck_assert(lid_cache_get(c, CA_PORT(0, 1), &min, &max));
	ck_assert_uint_eq(min, 4);
	ck_assert_uint_eq(max, 7);
	fabric_free(&f);
	lid_cache_free(c);
}
END_TEST

START_TEST(reassign_ignores_cache_and_current)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 0, .reassign = true };
	struct lid_cache *c = lid_cache_new();
	struct lid_report r;
	uint16_t min;

	fabric_init(&f);
	add_switch(&f, SW_GUID(0), 8, 0x500, false);
	add_ca(&f, CA_GUID(0), 1, 0x600);
	add_ca(&f, CA_GUID(1), 1, 0xc000);
	ck_assert_int_eq(lid_cache_set(c, SW_GUID(0), 0x700, 0x700), 0);
	ck_assert_int_eq(lid_cache_set(c, CA_PORT(0, 1), 0x800, 0x800), 0);
	ck_assert_int_eq(lid_assign(&f, c, &pol, &r), 0);
	ck_assert_uint_eq(r.assigned, 3);
	ck_assert_uint_eq(r.kept_cache + r.kept_fabric + r.fixed_dup +
			  r.fixed_range, 0);
	ck_assert_uint_eq(lid_of(&f, SW_GUID(0), 0), 1);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(0), 1), 2);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(1), 1), 3);
	ck_assert_uint_eq(f.max_lid, 3);
	ck_assert(lid_cache_get(c, CA_PORT(0, 1), &min, NULL));
	ck_assert_uint_eq(min, 2);
	fabric_free(&f);
	lid_cache_free(c);
}
END_TEST

/* ---------------------------------------------------------------------
 * Absent ports
 */

START_TEST(absent_guid_range_not_given_away)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 2 };
	struct lid_cache *c = lid_cache_new();
	struct lid_report r;
	uint16_t min, max;

	/* the node that had LIDs 4-7 and 1 is away today */
	ck_assert_int_eq(lid_cache_set(c, 0x0008f10400000001ull, 4, 7), 0);
	ck_assert_int_eq(lid_cache_set(c, 0x0008f10400000002ull, 1, 1), 0);
	fabric_init(&f);
	add_switch(&f, SW_GUID(0), 8, 0, false);
	add_ca(&f, CA_GUID(0), 1, 0);
	ck_assert_int_eq(lid_assign(&f, c, &pol, &r), 0);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(0), 1), 8);
	ck_assert_uint_eq(lid_of(&f, SW_GUID(0), 0), 2);
	ck_assert_uint_eq(r.assigned, 2);
	/* its entries stay for when it comes back */
	ck_assert_uint_eq(lid_cache_count(c), 4);
	ck_assert(lid_cache_get(c, 0x0008f10400000001ull, &min, &max));
	ck_assert_uint_eq(min, 4);
	ck_assert_uint_eq(max, 7);
	fabric_free(&f);

	/* and it does get them back */
	fabric_init(&f);
	add_ca(&f, 0x0008f10400000000ull, 2, 0);
	ck_assert_int_eq(lid_assign(&f, c, &pol, &r), 0);
	ck_assert_uint_eq(lid_of(&f, 0x0008f10400000000ull, 1), 4);
	ck_assert_uint_eq(r.kept_cache, 1);
	fabric_free(&f);
	lid_cache_free(c);
}
END_TEST

/* Under pressure the absent ranges are used, and leave the cache. */
START_TEST(absent_ranges_used_when_nothing_else)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 7 };
	struct lid_cache *c = lid_cache_new();
	struct lid_report r;
	uint16_t min;

	/* 382 of the 383 ranges of 128 are held for absent ports */
	for (unsigned b = 2; b < 384; b++)
		ck_assert_int_eq(lid_cache_set(c, 0x1000 + b, (uint16_t)(b * 128),
					       (uint16_t)(b * 128 + 127)), 0);
	fabric_init(&f);
	add_ca(&f, CA_GUID(0), 1, 0);
	add_ca(&f, CA_GUID(1), 1, 0);
	add_ca(&f, CA_GUID(2), 1, 0x8000);	/* using one of them now */
	ck_assert_int_eq(lid_assign(&f, c, &pol, &r), 0);
	check_valid(&f, 7);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(0), 1), 128);	/* the free one */
	ck_assert_uint_eq(lid_of(&f, CA_GUID(1), 1), 256);	/* lowest held */
	ck_assert_uint_eq(lid_of(&f, CA_GUID(2), 1), 0x8000);
	ck_assert_uint_eq(r.kept_fabric, 1);
	ck_assert_uint_eq(r.assigned, 2);
	ck_assert(!lid_cache_get(c, 0x1000 + 2, NULL, NULL));
	ck_assert(!lid_cache_get(c, 0x1000 + 0x8000 / 128, NULL, NULL));
	ck_assert(lid_cache_get(c, 0x1000 + 3, &min, NULL));
	ck_assert_uint_eq(min, 3 * 128);
	ck_assert_uint_eq(lid_cache_count(c), 382 - 2 + 3);
	fabric_free(&f);
	lid_cache_free(c);
}
END_TEST

/*
 * Largest ranges first: with block 0 full, block 1 free and one single
 * LID free higher up, a newcomer CA (LMC 7) must get block 1 and a
 * newcomer switch the single LID, not the other way round.
 */
START_TEST(largest_ranges_first)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 7 };
	struct lid_report r;
	unsigned sw = 0, ca = 0;

	fabric_init(&f);
	for (unsigned l = 1; l < 128; l++)
		add_switch(&f, SW_GUID(sw++), 4, (uint16_t)l, false);
	for (unsigned l = 513; l < 640; l++)
		add_switch(&f, SW_GUID(sw++), 4, (uint16_t)l, false);
	for (unsigned b = 2; b < 384; b++)
		if (b != 4)
			add_ca(&f, CA_GUID(ca++), 1, (uint16_t)(b * 128));
	add_switch(&f, SW_GUID(0x1000), 4, 0, false);
	add_ca(&f, CA_GUID(0x1000), 1, 0);
	ck_assert_int_eq(lid_assign(&f, NULL, &pol, &r), 0);
	ck_assert_uint_eq(r.kept_fabric, sw + ca);
	ck_assert_uint_eq(r.assigned, 2);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(0x1000), 1), 128);
	ck_assert_uint_eq(lid_of(&f, SW_GUID(0x1000), 0), 512);
	check_valid(&f, 7);
	fabric_free(&f);
}
END_TEST

/*
 * 400 CAs with LMC 7 need 51,200 LIDs: more than the unicast space.
 * Every port gets LMC 6 instead (the same for all), none is left out.
 */
START_TEST(lmc_reduced_to_fit)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 7 };
	struct lid_report r;

	fabric_init(&f);
	add_switch(&f, SW_GUID(0), 36, 0, false);
	for (unsigned i = 0; i < 400; i++)
		add_ca(&f, CA_GUID(i), 1, 0);
	ck_assert_int_eq(lid_assign(&f, NULL, &pol, &r), 0);
	ck_assert_uint_eq(r.exhausted, 0);
	ck_assert_uint_eq(r.lmc, 6);
	ck_assert_uint_eq(r.reduced, 400);
	ck_assert_uint_eq(r.limit, LID_UNICAST_MAX);
	ck_assert_uint_eq(r.limit_switch, 0);
	ck_assert_uint_eq(r.reduced_guid[0], CA_PORT(0, 1));
	for (unsigned i = 0; i < 400; i++) {
		ck_assert_uint_ne(lid_of(&f, CA_GUID(i), 1), 0);
		ck_assert_uint_eq(port_of(&f, CA_GUID(i), 1)->lmc, 6);
	}
	ck_assert_uint_eq(check_valid(&f, 6), 401);
	fabric_free(&f);
}
END_TEST

/* Switches with LinearFDBCap 30,720 (ibsim's): 300 CAs with LMC 7. */
static void capped_tree(struct fabric *f, unsigned hosts, uint16_t cap)
{
	fabric_init(f);
	for (unsigned s = 0; s < 20; s++) {
		int32_t id = add_switch(f, SW_GUID(s), 36, 0, false);

		fabric_node(f, id)->si.lft_cap = htobe16(s == 7 ? cap : 0xc000);
	}
	for (unsigned i = 0; i < hosts; i++)
		add_ca(f, CA_GUID(i), 1, 0);
}

START_TEST(lids_below_lft_cap)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 7 };
	struct lid_report r;
	struct lid_cache *c = lid_cache_new();

	capped_tree(&f, 300, 30720);
	ck_assert_int_eq(lid_assign(&f, c, &pol, &r), 0);
	ck_assert_uint_eq(r.limit, 30719);
	ck_assert_uint_eq(r.limit_switch, SW_GUID(7));
	ck_assert_uint_eq(r.lmc, 6);
	ck_assert_uint_eq(r.reduced, 300);
	ck_assert_uint_eq(r.exhausted, 0);
	ck_assert_uint_le(f.max_lid, 30719);
	ck_assert_uint_eq(check_valid(&f, 6), 320);
	for (unsigned i = 0; i < 300; i++)
		ck_assert_uint_ne(lid_of(&f, CA_GUID(i), 1), 0);

	/* the next sweep keeps every range from the cache */
	uint16_t l0 = lid_of(&f, CA_GUID(0), 1);
	uint16_t l299 = lid_of(&f, CA_GUID(299), 1);
	ck_assert_int_eq(lid_assign(&f, c, &pol, &r), 0);
	ck_assert_uint_eq(r.kept_cache, 320);
	ck_assert_uint_eq(r.assigned, 0);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(0), 1), l0);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(299), 1), l299);
	lid_cache_free(c);
	fabric_free(&f);
}
END_TEST

/* Cached and current LIDs past the cap are not kept. */
START_TEST(lids_past_cap_moved)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 0 };
	struct lid_report r;
	struct lid_cache *c = lid_cache_new();

	capped_tree(&f, 4, 1024);
	ck_assert_int_eq(lid_cache_set(c, CA_PORT(0, 1), 2000, 2000), 0);
	set_cur_lid(&f, CA_GUID(1), 1, 1500);
	set_cur_lid(&f, CA_GUID(2), 1, 1023);
	ck_assert_int_eq(lid_assign(&f, c, &pol, &r), 0);
	ck_assert_uint_eq(r.limit, 1023);
	ck_assert_uint_eq(r.fixed_range, 1);
	ck_assert_uint_eq(r.kept_fabric, 1);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(2), 1), 1023);
	ck_assert_uint_lt(lid_of(&f, CA_GUID(0), 1), 1024);
	ck_assert_uint_lt(lid_of(&f, CA_GUID(1), 1), 1024);
	ck_assert_uint_eq(f.max_lid, 1023);
	ck_assert_uint_eq(check_valid(&f, 0), 24);
	lid_cache_free(c);
	fabric_free(&f);
}
END_TEST

/* Not even one LID each below the cap: the rest are named. */
START_TEST(exhausted_lid_space)
{
	struct fabric f;
	struct lid_policy pol = { .lmc = 3 };
	struct lid_report r;
	unsigned with = 0, without = 0;

	capped_tree(&f, 100, 64);
	ck_assert_int_eq(lid_assign(&f, NULL, &pol, &r), -ENOSPC);
	ck_assert_uint_eq(r.lmc, 0);
	ck_assert_uint_eq(r.assigned, 63);
	ck_assert_uint_eq(r.exhausted, 120 - 63);
	ck_assert_uint_eq(r.n_without, LID_REPORT_NAMES);
	for (unsigned i = 0; i < 100; i++) {
		if (lid_of(&f, CA_GUID(i), 1))
			with++;
		else
			without++;
	}
	ck_assert_uint_eq(with + without, 100);
	ck_assert_uint_eq(without, 57);
	ck_assert_uint_eq(f.max_lid, 63);
	/* ports left without a LID: lowest GUIDs are served first */
	ck_assert_uint_ne(lid_of(&f, CA_GUID(0), 1), 0);
	ck_assert_uint_eq(lid_of(&f, CA_GUID(99), 1), 0);
	ck_assert_uint_eq(r.without[0], CA_PORT(43, 1));
	fabric_free(&f);
}
END_TEST

/* ---------------------------------------------------------------------
 * The cache and its file
 */

START_TEST(cache_set_get)
{
	struct lid_cache *c = lid_cache_new();
	uint16_t min = 0, max = 0;

	ck_assert_ptr_nonnull(c);
	ck_assert(!lid_cache_get(c, 1, &min, &max));
	ck_assert_int_eq(lid_cache_set(c, 1, 4, 7), 0);
	ck_assert_int_eq(lid_cache_set(c, 1, 8, 11), 0);	/* replaces */
	ck_assert(lid_cache_get(c, 1, &min, &max));
	ck_assert_uint_eq(min, 8);
	ck_assert_uint_eq(max, 11);
	ck_assert_uint_eq(lid_cache_count(c), 1);
	ck_assert_int_eq(lid_cache_set(c, 0, 1, 1), -EINVAL);	/* GUID 0 */
	ck_assert_int_eq(lid_cache_set(c, 2, 0, 0), -EINVAL);
	ck_assert_int_eq(lid_cache_set(c, 2, 5, 4), -EINVAL);
	ck_assert_int_eq(lid_cache_set(c, 2, 5, 6), -EINVAL);	/* misaligned */
	ck_assert_int_eq(lid_cache_set(c, 2, 4, 6), -EINVAL);	/* 3 LIDs */
	ck_assert_int_eq(lid_cache_set(c, 2, 0xc000, 0xc000), -EINVAL);
	ck_assert_int_eq(lid_cache_set(c, 2, 256, 511), -EINVAL); /* > LMC 7 */
	ck_assert_int_eq(lid_cache_set(c, 2, 0xbf80, 0xbfff), 0);
	/* many entries: the table grows */
	for (uint64_t g = 100; g < 10100; g++)
		ck_assert_int_eq(lid_cache_set(c, g, (uint16_t)g, (uint16_t)g), 0);
	ck_assert_uint_eq(lid_cache_count(c), 10002);
	for (uint64_t g = 100; g < 10100; g++) {
		ck_assert(lid_cache_get(c, g, &min, NULL));
		ck_assert_uint_eq(min, g);
	}
	lid_cache_free(c);
	lid_cache_free(NULL);
}
END_TEST

/*
 * Many entries dropped at once (every absent range overlapped by a
 * current LID): the survivors must all still be found afterwards.
 */
START_TEST(cache_drop_many)
{
	struct fabric f;
	struct lid_cache *c = lid_cache_new();
	struct lid_report r;
	uint16_t min;

	for (uint64_t g = 1; g <= 4000; g++)
		ck_assert_int_eq(lid_cache_set(c, g * 0x10000, (uint16_t)g,
					       (uint16_t)g), 0);
	fabric_init(&f);
	/* ports using every odd LID of 1..3999 as their current LID */
	for (unsigned i = 0; i < 2000; i++)
		add_ca(&f, CA_GUID(i), 1, (uint16_t)(2 * i + 1));
	ck_assert_int_eq(lid_assign(&f, c, NULL, &r), 0);
	ck_assert_uint_eq(r.kept_fabric, 2000);
	ck_assert_uint_eq(lid_cache_count(c), 2000 + 2000);
	for (uint64_t g = 1; g <= 4000; g++) {
		bool found = lid_cache_get(c, g * 0x10000, &min, NULL);

		ck_assert(found == !(g & 1));
		if (found)
			ck_assert_uint_eq(min, g);
	}
	for (unsigned i = 0; i < 2000; i++) {
		ck_assert(lid_cache_get(c, CA_PORT(i, 1), &min, NULL));
		ck_assert_uint_eq(min, 2 * i + 1);
	}
	fabric_free(&f);
	lid_cache_free(c);
}
END_TEST

START_TEST(cache_file_round_trip)
{
	struct lid_cache *c = lid_cache_new(), *d = lid_cache_new();
	char path[128], text[512];
	uint16_t min, max;

	make_tmpdir();
	tmpfile_path(path, sizeof(path), "guid2lid");
	ck_assert_int_eq(lid_cache_set(c, 0xf452140300a1b2c4ull, 0x10, 0x13), 0);
	ck_assert_int_eq(lid_cache_set(c, 0x0002c90300001234ull, 0x5, 0x5), 0);
	ck_assert_int_eq(lid_cache_set(c, 0x0002c90300001235ull, 0xbf80, 0xbfff), 0);
	ck_assert_int_eq(lid_cache_save(c, path), 0);
	read_file(path, text, sizeof(text));
	/* OpenSM's format: a blank line after every entry (its reader
	 * takes only the first entry of a file without them). */
	ck_assert_str_eq(text,
		"0x0002c90300001234 0x0005 0x0005\n\n"
		"0x0002c90300001235 0xbf80 0xbfff\n\n"
		"0xf452140300a1b2c4 0x0010 0x0013\n\n");
	ck_assert_int_eq(lid_cache_load(d, path, NULL, NULL), 3);
	ck_assert_uint_eq(lid_cache_count(d), 3);
	ck_assert(lid_cache_get(d, 0xf452140300a1b2c4ull, &min, &max));
	ck_assert_uint_eq(min, 0x10);
	ck_assert_uint_eq(max, 0x13);
	ck_assert(lid_cache_get(d, 0x0002c90300001235ull, &min, &max));
	ck_assert_uint_eq(min, 0xbf80);
	ck_assert_uint_eq(max, 0xbfff);
	lid_cache_free(c);
	lid_cache_free(d);
	remove_tmpdir();
}
END_TEST

START_TEST(cache_save_atomic)
{
	struct lid_cache *c = lid_cache_new();
	char path[128], text[256];
	DIR *dir;
	struct dirent *de;
	unsigned files = 0;

	make_tmpdir();
	tmpfile_path(path, sizeof(path), "guid2lid");
	write_file(path, "old contents\n");
	ck_assert_int_eq(lid_cache_set(c, 0x42, 1, 1), 0);
	ck_assert_int_eq(lid_cache_save(c, path), 0);
	read_file(path, text, sizeof(text));
	ck_assert_str_eq(text, "0x0000000000000042 0x0001 0x0001\n\n");
	dir = opendir(tmpdir);
	ck_assert_ptr_nonnull(dir);
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		ck_assert_str_eq(de->d_name, "guid2lid");
		files++;
	}
	closedir(dir);
	ck_assert_uint_eq(files, 1);

	/* an empty cache is an empty file */
	lid_cache_free(c);
	c = lid_cache_new();
	ck_assert_int_eq(lid_cache_save(c, path), 0);
	ck_assert_uint_eq(read_file(path, text, sizeof(text)), 0);

	/* the directory is not the cache's to create */
	tmpfile_path(path, sizeof(path), "missing/guid2lid");
	ck_assert_int_eq(lid_cache_save(c, path), -ENOENT);
	lid_cache_free(c);
	remove_tmpdir();
}
END_TEST

/* OpenSM's reader's verdict on a guid2lid file (lid_cache_check()). */
static int check_text(const char *text, size_t len, unsigned *line)
{
	char path[128];
	FILE *fp;
	int rc;

	tmpfile_path(path, sizeof(path), "guid2lid");
	fp = fopen(path, "w");
	ck_assert_ptr_nonnull(fp);
	ck_assert_uint_eq(fwrite(text, 1, len, fp), len);
	ck_assert_int_eq(fclose(fp), 0);
	rc = lid_cache_check(path, line);
	unlink(path);
	return rc;
}

#define CHECK_TEXT(t, line) check_text(t, sizeof(t) - 1, line)

START_TEST(cache_check_opensm_rules)
{
	char path[128], big[3000];
	unsigned line = 99;

	make_tmpdir();
	/* missing: fine, as OpenSM creates it */
	tmpfile_path(path, sizeof(path), "guid2lid");
	ck_assert_int_eq(lid_cache_check(path, &line), 0);
	ck_assert_uint_eq(line, 0);
	/* what OpenSM and ibsm write; empty; no blank lines between records
	 * (the next line continues the record: not a failure) */
	ck_assert_int_eq(CHECK_TEXT("0x1 0x0001 0x0001\n\n0x2 0x0002 0x0002\n\n",
				    &line), 0);
	ck_assert_int_eq(CHECK_TEXT("", &line), 0);
	ck_assert_int_eq(CHECK_TEXT("0x1 0x1 0x1\n0x2 0x2 0x2\n", &line), 0);
	/* bad values are ignored records, not a failure */
	ck_assert_int_eq(CHECK_TEXT("garbage here\n\n0xzz\n", &line), 0);
	/* a continuation line may start with blanks */
	ck_assert_int_eq(CHECK_TEXT("0x1 0x1 0x1\n  more\n\n", &line), 0);
	/* a record that starts with a blank: where OpenSM gives up */
	ck_assert_int_eq(CHECK_TEXT("0x1 0x1 0x1\n\n 0x2 0x2 0x2\n", &line),
			 -EBADMSG);
	ck_assert_uint_eq(line, 3);
	ck_assert_int_eq(CHECK_TEXT("\t0x1 0x1 0x1\n", &line), -EBADMSG);
	ck_assert_uint_eq(line, 1);
	ck_assert_int_eq(CHECK_TEXT("   \n", &line), -EBADMSG);
	ck_assert_uint_eq(line, 1);
	/* zeros where a record should start (a file cut by a crash) */
	ck_assert_int_eq(CHECK_TEXT("0x1 0x1 0x1\n\n\0\0\0\0\n", &line),
			 -EBADMSG);
	ck_assert_uint_eq(line, 3);
	/* a line longer than OpenSM's 1023-byte pieces: the rest is a piece
	 * of its own, here continuing the record */
	memset(big, 'x', sizeof(big));
	memcpy(big, "0x1 ", 4);
	big[1500] = '\n';
	big[1501] = '\n';
	big[1502] = ' ';
	big[1503] = '\n';
	ck_assert_int_eq(check_text(big, 1504, &line), -EBADMSG);
	ck_assert_uint_eq(line, 4);	/* 1023 + 478, blank, " " */
	/* a file that cannot be read */
	if (geteuid() != 0) {
		ck_assert_int_eq(CHECK_TEXT("0x1 0x1 0x1\n", &line), 0);
		write_file(path, "0x1 0x1 0x1\n");
		ck_assert_int_eq(chmod(path, 0), 0);
		ck_assert_int_eq(lid_cache_check(path, &line), -EACCES);
	}
	remove_tmpdir();
}
END_TEST

/*
 * Every heavy sweep saves the cache; one that changed nothing must leave
 * the file alone (no write, no fsync on the loop thread): same inode,
 * same mtime.  One that changed something replaces the file by rename, so
 * a reader holding the old file (here: a hard link to it) keeps the old
 * content whole.
 */
START_TEST(cache_save_skips_unchanged)
{
	struct lid_cache *c = lid_cache_new();
	char path[128], old[128], text[256];
	struct timespec past[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
	struct stat st1, st2;
	DIR *dir;
	struct dirent *de;
	unsigned files = 0;

	make_tmpdir();
	tmpfile_path(path, sizeof(path), "guid2lid");
	tmpfile_path(old, sizeof(old), "guid2lid.old");
	ck_assert_int_eq(lid_cache_set(c, 0x42, 1, 1), 0);
	ck_assert_int_eq(lid_cache_set(c, 0x43, 4, 7), 0);
	ck_assert_int_eq(lid_cache_save(c, path), 0);
	/* An mtime far in the past: any write would move it. */
	ck_assert_int_eq(utimensat(AT_FDCWD, path, past, 0), 0);
	ck_assert_int_eq(stat(path, &st1), 0);

	ck_assert_int_eq(lid_cache_save(c, path), 0);
	ck_assert_int_eq(stat(path, &st2), 0);
	ck_assert_uint_eq(st2.st_ino, st1.st_ino);
	ck_assert_int_eq(st2.st_mtim.tv_sec, 1000000000);
	ck_assert_int_eq(st2.st_mtim.tv_nsec, 0);

	/* A change: a new file renamed over the old one. */
	ck_assert_int_eq(link(path, old), 0);
	ck_assert_int_eq(lid_cache_set(c, 0x44, 8, 11), 0);
	ck_assert_int_eq(lid_cache_save(c, path), 0);
	ck_assert_int_eq(stat(path, &st2), 0);
	ck_assert_uint_ne(st2.st_ino, st1.st_ino);
	ck_assert_int_gt(st2.st_mtim.tv_sec, 1000000000);
	ck_assert_uint_eq(st2.st_mode & 0777, 0644);
	read_file(path, text, sizeof(text));
	ck_assert_str_eq(text, "0x0000000000000042 0x0001 0x0001\n\n"
			       "0x0000000000000043 0x0004 0x0007\n\n"
			       "0x0000000000000044 0x0008 0x000b\n\n");
	read_file(old, text, sizeof(text));
	ck_assert_str_eq(text, "0x0000000000000042 0x0001 0x0001\n\n"
			       "0x0000000000000043 0x0004 0x0007\n\n");
	/* No temp file left behind. */
	dir = opendir(tmpdir);
	ck_assert_ptr_nonnull(dir);
	while ((de = readdir(dir)))
		files += de->d_name[0] != '.';
	closedir(dir);
	ck_assert_uint_eq(files, 2);

	/* A file changed behind our back is rewritten even if the cache
	 * did not change. */
	write_file(path, "garbage\n");
	ck_assert_int_eq(lid_cache_save(c, path), 0);
	read_file(path, text, sizeof(text));
	ck_assert_str_eq(text, "0x0000000000000042 0x0001 0x0001\n\n"
			       "0x0000000000000043 0x0004 0x0007\n\n"
			       "0x0000000000000044 0x0008 0x000b\n\n");
	lid_cache_free(c);
	remove_tmpdir();
}
END_TEST

START_TEST(cache_load_missing_file)
{
	struct lid_cache *c = lid_cache_new();
	struct warnings w = { 0 };
	char path[128];

	make_tmpdir();
	tmpfile_path(path, sizeof(path), "nothing-here");
	ck_assert_int_eq(lid_cache_load(c, path, collect_warning, &w), 0);
	ck_assert_uint_eq(w.n, 0);
	ck_assert_uint_eq(lid_cache_count(c), 0);
	/* a directory is not a readable file */
	ck_assert_int_lt(lid_cache_load(c, tmpdir, collect_warning, &w), 0);
	lid_cache_free(c);
	remove_tmpdir();
}
END_TEST

START_TEST(cache_load_malformed_lines)
{
	static const char text[] =
		"# guid2lid written by hand\n"			/* 1 */
		"\n"						/* 2 */
		"0x0002c90300000001 0x0001 0x0001\n"		/* 3 ok */
		"0x0002c90300000002 0x0004 0x0007  # LMC 2\n"	/* 4 ok */
		"0x0002c90300000003 0x0008\n"			/* 5 fields */
		"0x0002c90300000003 0x0008 0x0008 0x0008\n"	/* 6 fields */
		"0x0002c9030000000z 0x0008 0x0008\n"		/* 7 hex */
		"0x0002c90300000003 0x10008 0x10008\n"		/* 8 hex: > 16 bits */
		"0x0002c90300000003 -0x8 0x8\n"		/* 9 hex */
		"0x0002c90300000003 0x000c 0x0009\n"		/* 10 min > max */
		"0x0002c90300000003 0xc000 0xc000\n"		/* 11 max > 0xbfff */
		"0x0002c90300000003 0x0000 0x0000\n"		/* 12 LID 0 */
		"0x0002c90300000003 0x000a 0x000d\n"		/* 13 misaligned */
		"0x0002c90300000003 0x0008 0x000a\n"		/* 14 not 2^n */
		"0x0002c90300000001 0x0009 0x0009\n"		/* 15 duplicate */
		"0x0002c90300000003 0x0006 0x0006\n"		/* 16 overlap */
		"   \t \n"					/* 17 */
		"0x0002c90300000003 0x0008 0x0008\n"		/* 18 ok */
		"0x0000000000000000 0x0010 0x0010\n"		/* 19 GUID 0 */
		"0x0002C90300000004 0XBFFF 0xbfff\r\n"		/* 20 ok */
		"0x0002c90300000005 0x0010 0x0010";		/* 21 ok, no \n */
	static const unsigned bad[] = { 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 19 };
	struct lid_cache *c = lid_cache_new();
	struct warnings w = { 0 };
	char path[128], prefix[160];
	uint16_t min, max;

	make_tmpdir();
	tmpfile_path(path, sizeof(path), "guid2lid");
	write_file(path, text);
	ck_assert_int_eq(lid_cache_load(c, path, collect_warning, &w), 5);
	ck_assert_uint_eq(lid_cache_count(c), 5);
	ck_assert_uint_eq(w.n, sizeof(bad) / sizeof(bad[0]));
	for (unsigned i = 0; i < w.n; i++) {
		snprintf(prefix, sizeof(prefix), "%s:%u: expected ", path, bad[i]);
		ck_assert_msg(!strncmp(w.msg[i], prefix, strlen(prefix)),
			      "warning %u is \"%s\", wanted \"%s...\"", i,
			      w.msg[i], prefix);
	}
	ck_assert(lid_cache_get(c, 0x0002c90300000002ull, &min, &max));
	ck_assert_uint_eq(min, 4);
	ck_assert_uint_eq(max, 7);
	ck_assert(lid_cache_get(c, 0x0002c90300000001ull, &min, NULL));
	ck_assert_uint_eq(min, 1);			/* the first one won */
	ck_assert(lid_cache_get(c, 0x0002c90300000003ull, &min, NULL));
	ck_assert_uint_eq(min, 8);
	ck_assert(lid_cache_get(c, 0x0002c90300000004ull, &min, NULL));
	ck_assert_uint_eq(min, 0xbfff);
	ck_assert(lid_cache_get(c, 0x0002c90300000005ull, NULL, NULL));

	/* no callback: the same lines are skipped quietly */
	lid_cache_free(c);
	c = lid_cache_new();
	ck_assert_int_eq(lid_cache_load(c, path, NULL, NULL), 5);
	lid_cache_free(c);
	remove_tmpdir();
}
END_TEST

/* ---------------------------------------------------------------------
 * Scale
 */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * 2,000 36-port switches and 46,000 CAs: 48,000 LIDs of the 49,151, and
 * 122,000 ports in all.  Fresh, then a restart from the cache, then a
 * sweep where every port reports its LID and the cache agrees.
 */
START_TEST(fifty_thousand_ports)
{
	enum { NSW = 2000, NCA = 46000 };
	struct fabric f;
	struct lid_cache *c = lid_cache_new();
	struct lid_report r;
	double fresh, restart, steady;

	fabric_init(&f);
	for (unsigned i = 0; i < NSW; i++)
		add_switch(&f, SW_GUID(i), 36, 0, false);
	for (unsigned i = 0; i < NCA; i++) {
		int32_t id = add_ca(&f, CA_GUID(i), 1, 0);

		ck_assert_int_eq(fabric_link(&f, id, 1, (int32_t)(i % NSW),
					     (uint8_t)(1 + i / NSW)), 0);
	}
	fresh = now_ms();
	ck_assert_int_eq(lid_assign(&f, c, NULL, &r), 0);
	fresh = now_ms() - fresh;
	ck_assert_uint_eq(r.assigned, NSW + NCA);
	ck_assert_uint_eq(check_valid(&f, 0), NSW + NCA);
	ck_assert_uint_eq(f.max_lid, NSW + NCA);

	/* restart: zero every LID, assign from the cache */
	for (size_t i = 0; i < f.n_nodes; i++)
		for (unsigned p = 0; p <= f.nodes[i].num_ports; p++)
			f.nodes[i].ports[p].lid = 0;
	restart = now_ms();
	ck_assert_int_eq(lid_assign(&f, c, NULL, &r), 0);
	restart = now_ms() - restart;
	ck_assert_uint_eq(r.kept_cache, NSW + NCA);

	/* steady state: PortInfo shows the LIDs the cache holds */
	for (size_t i = 0; i < f.n_nodes; i++)
		for (unsigned p = 0; p <= f.nodes[i].num_ports; p++)
			f.nodes[i].ports[p].pi.lid = htobe16(f.nodes[i].ports[p].lid);
	steady = now_ms();
	ck_assert_int_eq(lid_assign(&f, c, NULL, &r), 0);
	steady = now_ms() - steady;
	ck_assert_uint_eq(r.kept_cache, NSW + NCA);
	printf("check_lid: %u LID-bearing ports: fresh %.1f ms, from cache"
	       " %.1f ms, steady %.1f ms\n", NSW + NCA, fresh, restart,
	       steady);
	check_valid(&f, 0);
	fabric_free(&f);
	lid_cache_free(c);
}
END_TEST

static Suite *lid_suite(void)
{
	Suite *s = suite_create("lid");
	TCase *tc;

	tc = tcase_create("fresh");
	tcase_add_test(tc, fresh_fabric_unique_aligned);
	tcase_add_test(tc, fresh_fabric_order_independent);
	tcase_add_test(tc, enhanced_port0_gets_lmc);
	tcase_add_test(tc, enhanced_port0_without_lmc_esp0);
	tcase_add_test(tc, ports_without_portinfo_skipped);
	tcase_add_test(tc, bad_policy_and_empty_fabric);
	suite_add_tcase(s, tc);

	tc = tcase_create("keep");
	tcase_add_test(tc, restart_keeps_everything);
	tcase_add_test(tc, cache_updated_to_result);
	tcase_add_test(tc, current_lids_kept_without_cache);
	tcase_add_test(tc, fresh_port_does_not_steal);
	tcase_add_test(tc, duplicate_current_lids_fixed);
	tcase_add_test(tc, duplicate_prefers_cache_agreement);
	tcase_add_test(tc, takeover_prefers_current_lids);
	tcase_add_test(tc, invalid_current_lids_fixed);
	tcase_add_test(tc, cache_size_mismatch);
	tcase_add_test(tc, reassign_ignores_cache_and_current);
	suite_add_tcase(s, tc);

	tc = tcase_create("absent");
	tcase_add_test(tc, absent_guid_range_not_given_away);
	tcase_add_test(tc, absent_ranges_used_when_nothing_else);
	tcase_add_test(tc, largest_ranges_first);
	tcase_add_test(tc, exhausted_lid_space);
	tcase_add_test(tc, lmc_reduced_to_fit);
	tcase_add_test(tc, lids_below_lft_cap);
	tcase_add_test(tc, lids_past_cap_moved);
	suite_add_tcase(s, tc);

	tc = tcase_create("file");
	tcase_add_test(tc, cache_set_get);
	tcase_add_test(tc, cache_drop_many);
	tcase_add_test(tc, cache_file_round_trip);
	tcase_add_test(tc, cache_save_atomic);
	tcase_add_test(tc, cache_save_skips_unchanged);
	tcase_add_test(tc, cache_load_missing_file);
	tcase_add_test(tc, cache_load_malformed_lines);
	tcase_add_test(tc, cache_check_opensm_rules);
	suite_add_tcase(s, tc);

	tc = tcase_create("scale");
	tcase_add_test(tc, fifty_thousand_ports);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(lid_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
