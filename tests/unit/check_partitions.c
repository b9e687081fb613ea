/*
 * check_partitions.c - partitions/: OpenSM's partitions.conf grammar, the
 * model it gives and its resolution into P_Key tables.
 *
 * Golden files: tests/partitions/NAME.conf is parsed and resolved against
 * tests/topologies/fat2-small.net (PartitionCap 64 on end ports,
 * PartitionEnforcementCap 32 on switches) and dumped as text; the dump
 * must equal NAME.golden.  PART_UPDATE=1 in the environment rewrites the
 * goldens instead (review the diff before committing one).
 * Broken files: every tests/partitions/bad/NAME.conf must fail with
 * exactly the errors listed in NAME.err, one "FILE:LINE:COLUMN: ..." a
 * line, FILE being "bad/NAME.conf".
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "partitions/partitions.h"
#include "sm/log.h"
#include "sm/sm.h"
#include "sm/topo_file.h"

static const struct part_options no_both = { .allow_both_pkeys = false };
static const struct part_options with_both = { .allow_both_pkeys = true };

/* A growing text buffer. */
struct buf {
	char *s;
	size_t n, cap;
};

static void bprintf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void bprintf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0,
			      fmt, ap);
		va_end(ap);
		ck_assert_int_ge(n, 0);
		if (b->s && b->n + (size_t)n < b->cap)
			break;
		b->cap = (b->cap + (size_t)n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		ck_assert_ptr_nonnull(b->s);
	}
	b->n += (size_t)n;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *s;
	long n;

	if (!fp)
		return NULL;
	ck_assert_int_eq(fseek(fp, 0, SEEK_END), 0);
	n = ftell(fp);
	rewind(fp);
	s = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(fread(s, 1, (size_t)n, fp), (size_t)n);
	s[n] = '\0';
	fclose(fp);
	if (len)
		*len = (size_t)n;
	return s;
}

static void load_model(struct fabric *f)
{
	char err[256];

	fabric_init(f);
	ck_assert_msg(topo_load(f, TOPO_DIR "/fat2-small.net", err,
				sizeof(err)) == 0, "%s", err);
	for (size_t i = 0; i < f->n_nodes; i++) {
		struct fab_node *n = &f->nodes[i];

		n->partition_cap = 64;
		if (n->type == NODE_TYPE_SWITCH)
			n->si.partition_enf_cap = htobe16(32);
	}
}

static const char *mname(enum part_membership m)
{
	return m == PART_FULL ? "full" : m == PART_BOTH ? "both" : "limited";
}

static const char *kname(enum part_member_kind k)
{
	static const char *const n[] = { "GUID", "ALL", "ALL_CAS",
		"ALL_SWITCHES", "ALL_ROUTERS", "SELF" };
	return n[k];
}

/* The model and the tables as text. */
static void dump(struct buf *b, const struct part_config *c,
		 const struct fabric *f, const struct part_resolve_report *r)
{
	for (size_t i = 0; i < c->n_parts; i++) {
		const struct part *p = &c->parts[i];

		bprintf(b, "partition 0x%04x \"%s\"%s%s%s defmember=%s", p->pkey,
			p->name, p->pkey_given ? "" : " generated",
			p->ipoib ? " ipoib" : "", p->indx0 ? " indx0" : "",
			mname(p->defmember));
		bprintf(b, " rate=%u mtu=%u sl=%u scope=%u qkey=0x%x tclass=%u "
			"flowlabel=0x%x\n", p->rate, p->mtu, p->sl, p->scope,
			p->qkey, p->tclass, p->flow_label);
		for (size_t m = 0; m < p->n_members; m++) {
			const struct part_member *pm = &p->members[m];

			bprintf(b, "  member %s", kname(pm->kind));
			if (pm->kind == PART_M_GUID)
				bprintf(b, " 0x%016" PRIx64, pm->guid);
			bprintf(b, "=%s%s line %u\n", mname(pm->membership),
				pm->indx0 ? " indx0" : "", pm->line);
		}
		for (size_t g = 0; g < p->n_mgroups; g++) {
			const struct part_mgroup *mg = &p->mgroups[g];

			bprintf(b, "  mgid ");
			for (int k = 0; k < 16; k++)
				bprintf(b, "%02x%s", mg->mgid[k],
					k % 2 && k < 15 ? ":" : "");
			bprintf(b, " rate=%u mtu=%u sl=%u scope=%u qkey=0x%x "
				"tclass=%u flowlabel=0x%x line %u\n", mg->rate,
				mg->mtu, mg->sl, mg->scope, mg->qkey, mg->tclass,
				mg->flow_label, mg->line);
		}
	}
	if (!f)
		return;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		for (unsigned p = 0; p <= n->num_ports; p++) {
			const struct fab_port *pt = &n->ports[p];

			if (!pt->want_pkeys)
				continue;
			bprintf(b, "port 0x%016" PRIx64 " %s[%u]:",
				pt->guid ? pt->guid : n->guid, n->desc, p);
			for (unsigned k = 0; k < pt->n_want_pkeys; k++)
				bprintf(b, " 0x%04x", pt->want_pkeys[k]);
			bprintf(b, "\n");
		}
	}
	bprintf(b, "ports %u dropped %u unknown %u\n", r->ports, r->dropped,
		r->unknown_guids);
}

static int parse_str(const char *text, const struct part_options *o,
		     struct part_config *c, struct part_diag *d)
{
	return part_parse("t.conf", text, strlen(text), o, c, d);
}

/* Parse text that must be clean (no errors, no warnings). */
static void parse_ok(const char *text, const struct part_options *o,
		     struct part_config *c)
{
	struct part_diag d;
	int rc = parse_str(text, o, c, &d);

	ck_assert_msg(rc == 0, "rc %d, first error %u:%u %s", rc,
		      d.n_errors ? d.errors[0].line : 0,
		      d.n_errors ? d.errors[0].col : 0,
		      d.n_errors ? d.errors[0].msg : "");
	ck_assert_msg(d.n_warnings == 0, "warning %u:%u %s",
		      d.warnings[0].line, d.warnings[0].col, d.warnings[0].msg);
	part_diag_free(&d);
}

static const struct part *find_pkey(const struct part_config *c, uint16_t k)
{
	for (size_t i = 0; i < c->n_parts; i++)
		if (c->parts[i].pkey == k)
			return &c->parts[i];
	return NULL;
}

/* ---- golden files ---- */

static void golden(const char *name)
{
	char path[512], gpath[512];
	struct part_config c;
	struct part_diag d;
	struct part_resolve_report r;
	struct fabric f;
	struct buf b = { 0 };
	char *want;
	int rc;

	snprintf(path, sizeof(path), PART_DIR "/%s.conf", name);
	snprintf(gpath, sizeof(gpath), PART_DIR "/%s.golden", name);
	rc = part_load(path, &no_both, &c, &d);
	ck_assert_msg(rc == 0, "%s: rc %d, %zu errors, first %u:%u %s", name, rc,
		      d.n_errors, d.n_errors ? d.errors[0].line : 0,
		      d.n_errors ? d.errors[0].col : 0,
		      d.n_errors ? d.errors[0].msg : "");
	load_model(&f);
	ck_assert_int_eq(part_resolve(&c, &f, f.local_port_guid, &r), 0);
	dump(&b, &c, &f, &r);
	for (size_t i = 0; i < d.n_warnings; i++)
		bprintf(&b, "warning %u:%u: %s\n", d.warnings[i].line,
			d.warnings[i].col, d.warnings[i].msg);
	if (getenv("PART_UPDATE")) {
		FILE *fp = fopen(gpath, "w");

		ck_assert_ptr_nonnull(fp);
		fputs(b.s, fp);
		fclose(fp);
	}
	want = slurp(gpath, NULL);
	ck_assert_msg(want != NULL, "no %s", gpath);
	ck_assert_str_eq(b.s, want);
	free(want);
	free(b.s);
	part_config_free(&c);
	part_diag_free(&d);
	fabric_free(&f);
}

START_TEST(golden_opensm_doc) { golden("opensm-doc"); }
END_TEST
START_TEST(golden_rhel) { golden("rhel-5.5"); }
END_TEST
START_TEST(golden_members) { golden("members"); }
END_TEST

/* ---- broken files ---- */

START_TEST(bad_files)
{
	DIR *dir = opendir(PART_DIR "/bad");
	struct dirent *de;
	unsigned files = 0;

	ck_assert_ptr_nonnull(dir);
	while ((de = readdir(dir))) {
		size_t l = strlen(de->d_name);
		char path[512], epath[512], fname[300], line[512];
		struct part_config c;
		struct part_diag d;
		struct buf b = { 0 };
		char *want;
		int rc;

		if (l < 6 || strcmp(de->d_name + l - 5, ".conf"))
			continue;
		snprintf(path, sizeof(path), PART_DIR "/bad/%s", de->d_name);
		snprintf(epath, sizeof(epath), PART_DIR "/bad/%.*s.err",
			 (int)(l - 5), de->d_name);
		snprintf(fname, sizeof(fname), "bad/%s", de->d_name);
		rc = part_load(path, &no_both, &c, &d);
		ck_assert_msg(rc == -EINVAL, "%s: rc %d", de->d_name, rc);
		ck_assert_msg(d.n_errors > 0, "%s: no error", de->d_name);
		for (size_t i = 0; i < d.n_errors; i++) {
			ck_assert_int_eq(part_error_format(&c, fname, &d.errors[i],
							   line, sizeof(line)), 0);
			bprintf(&b, "%s\n", line);
		}
		if (getenv("PART_UPDATE")) {
			FILE *fp = fopen(epath, "w");

			ck_assert_ptr_nonnull(fp);
			fputs(b.s, fp);
			fclose(fp);
		}
		want = slurp(epath, NULL);
		ck_assert_msg(want != NULL, "no %s", epath);
		ck_assert_msg(!strcmp(b.s, want), "%s:\ngot:\n%swant:\n%s",
			      de->d_name, b.s, want);
		free(want);
		free(b.s);
		part_config_free(&c);
		part_diag_free(&d);
		files++;
	}
	closedir(dir);
	ck_assert_uint_ge(files, 30);
}
END_TEST

/* Errors are all reported, the parse goes on after each. */
START_TEST(every_error)
{
	struct part_config c;
	struct part_diag d;
	const char *t =
		"A=0x10 : 0x1, bogus, 0x2 ;\n"
		"B=zz : ALL ;\n"
		"C 0x12 ;\n"
		"D=0x13 : 0x0, all=full ;\n";

	ck_assert_int_eq(parse_str(t, &no_both, &c, &d), -EINVAL);
	ck_assert_uint_eq(d.n_errors, 5);
	ck_assert_uint_eq(d.errors[0].line, 1);
	ck_assert_uint_eq(d.errors[0].col, 15);
	ck_assert_uint_eq(d.errors[1].line, 2);
	ck_assert_uint_eq(d.errors[1].col, 3);
	ck_assert_uint_eq(d.errors[2].line, 3);
	ck_assert_uint_eq(d.errors[2].col, 8);
	ck_assert_uint_eq(d.errors[3].col, 10);
	ck_assert_uint_eq(d.errors[4].col, 15);
	ck_assert_ptr_nonnull(strstr(d.errors[2].msg, "expected ':'"));
	ck_assert_ptr_nonnull(strstr(d.errors[0].msg, "expected a port GUID"));
	part_diag_free(&d);
}
END_TEST

/* Typos that OpenSM reads as something else (a member demoted to
 * limited, another partition) are errors, each at its column. */
START_TEST(meaning_typos)
{
	static const struct {
		const char *text;
		unsigned col;
		const char *has;
	} e[] = {
		{ "P=0x10 : 0x1=limi, 0x2=fulll ;", 24, "not 'fulll'" },
		{ "P=0x10 : ALL=fool ;", 14, "not 'fool'" },
		{ "P=0x10, defmember=fulll : ALL ;", 19, "not 'fulll'" },
		{ "P=0x18001 : ALL ;", 3, "16 bits at most" },
		{ "P=0x1ffff : ALL ;", 3, "not 0x1ffff" },
	};

	for (size_t i = 0; i < sizeof(e) / sizeof(e[0]); i++) {
		struct part_config c;
		struct part_diag d;
		int rc = parse_str(e[i].text, &no_both, &c, &d);

		ck_assert_msg(rc == -EINVAL, "%zu: rc %d", i, rc);
		ck_assert_msg(d.n_errors == 1 && d.errors[0].line == 1 &&
			      d.errors[0].col == e[i].col &&
			      strstr(d.errors[0].msg, e[i].has),
			      "%zu: %zu errors, %u:%u %s", i, d.n_errors,
			      d.n_errors ? d.errors[0].line : 0,
			      d.n_errors ? d.errors[0].col : 0,
			      d.n_errors ? d.errors[0].msg : "");
		part_diag_free(&d);
	}
}
END_TEST

/* ---- flags and keywords ---- */

START_TEST(every_flag)
{
	struct part_config c;
	const struct part *p;

	parse_ok("P=0x10, ipoib, indx0, rate=7, mtu=5, sl=3, scope=5,"
		 " Q_Key=0x12345678, TClass=9, FlowLabel=0xabcde,"
		 " defmember=full : ALL ;", &no_both, &c);
	p = find_pkey(&c, 0x10);
	ck_assert_ptr_nonnull(p);
	ck_assert_str_eq(p->name, "P");
	ck_assert(p->pkey_given && p->ipoib && p->indx0);
	ck_assert_uint_eq(p->rate, 7);
	ck_assert_uint_eq(p->mtu, 5);
	ck_assert_uint_eq(p->sl, 3);
	ck_assert_uint_eq(p->scope, 5);
	ck_assert_uint_eq(p->qkey, 0x12345678);
	ck_assert_uint_eq(p->tclass, 9);
	ck_assert_uint_eq(p->flow_label, 0xabcde);
	ck_assert_int_eq(p->defmember, PART_FULL);
	ck_assert_uint_eq(p->n_members, 1);
	ck_assert_int_eq(p->members[0].membership, PART_FULL);
	ck_assert(p->members[0].indx0);
	part_config_free(&c);

	/* Prefixes OpenSM accepts: m=mtu r=rate s=scope sl Q T F i d. */
	parse_ok("P=0x11, i, m=4, r=3, s=2, sl=1, Q=7, T=2, F=3, d=f :"
		 " A, ALL_C=l, ALL_S=f, ALL_R, S=f, N ;", &no_both, &c);
	p = find_pkey(&c, 0x11);
	ck_assert(p->ipoib);
	ck_assert_uint_eq(p->mtu, 4);
	ck_assert_uint_eq(p->rate, 3);
	ck_assert_uint_eq(p->scope, 2);
	ck_assert_uint_eq(p->sl, 1);
	ck_assert_uint_eq(p->qkey, 7);
	ck_assert_uint_eq(p->tclass, 2);
	ck_assert_uint_eq(p->flow_label, 3);
	ck_assert_int_eq(p->defmember, PART_FULL);
	ck_assert_uint_eq(p->n_members, 5);
	ck_assert_int_eq(p->members[0].kind, PART_M_ALL);
	ck_assert_int_eq(p->members[0].membership, PART_FULL);
	ck_assert_int_eq(p->members[1].kind, PART_M_ALL_CAS);
	ck_assert_int_eq(p->members[1].membership, PART_LIMITED);
	ck_assert_int_eq(p->members[2].kind, PART_M_ALL_SWITCHES);
	ck_assert_int_eq(p->members[2].membership, PART_FULL);
	ck_assert_int_eq(p->members[3].kind, PART_M_ALL_ROUTERS);
	ck_assert_int_eq(p->members[4].kind, PART_M_SELF);
	part_config_free(&c);

	/* "ALL_" is ALL_CAS for OpenSM (first keyword it is a prefix of). */
	parse_ok("P=0x12 : ALL_=full, 0x2c9000000001=limited, 1234 ;",
		 &no_both, &c);
	p = find_pkey(&c, 0x12);
	ck_assert_int_eq(p->members[0].kind, PART_M_ALL_CAS);
	ck_assert_int_eq(p->members[1].kind, PART_M_GUID);
	ck_assert_uint_eq(p->members[1].guid, 0x2c9000000001ull);
	ck_assert_uint_eq(p->members[2].guid, 1234);
	ck_assert_int_eq(p->members[2].membership, PART_LIMITED);
	part_config_free(&c);
}
END_TEST

START_TEST(warnings)
{
	static const struct {
		const char *text;
		unsigned line, col;
		const char *has;
	} w[] = {
		{ "P=0x10, bogus : ALL ;", 1, 9, "OpenSM ignores it" },
		{ "P=0x10, sl=99 : ALL ;", 1, 12, "at most 15" },
		{ "P=0x10, mtu : ALL ;", 1, 9, "expected mtu=N" },
		{ "P=0x10, rate=0 : ALL ;", 1, 14, "N > 0" },
		{ "P=0x10, sl=3x : ALL ;", 1, 12, "first digits" },
		{ "P=0x10 : 0x1=both ;", 1, 14, "allow_both_pkeys" },
		{ "P=0x10 : 0x1= ;", 1, 15, "reads nothing as full" },
		{ "P=0x10, defmember : ALL ;", 1, 9, "defmember=full" },
		{ "P=0x10 :\n  mgid=fe80::1 ;", 2, 8, "multicast GID" },
		{ "P=0x10 :\n  mgid=ff12::1,bogus=1 ;", 2, 16, "group flag" },
		{ "P=0x10 : ALL", 1, 1, "expected ';'" },
		{ "P=0x8000 : ALL ;", 1, 3, "non-zero P_Key" },
		{ "P=0x10 : ALL ;\r\n", 1, 15, "DOS line ends" },
		{ "abcdefghijklmnopqrstuvwxyz0123456789=0x10 : ALL ;", 1, 1,
		  "at most 31" },
	};

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		struct part_config c;
		struct part_diag d;
		int rc = parse_str(w[i].text, &no_both, &c, &d);

		ck_assert_msg(rc == 0, "%zu: rc %d", i, rc);
		ck_assert_msg(d.n_warnings >= 1, "%zu: no warning", i);
		ck_assert_msg(d.warnings[d.n_warnings - 1].line == w[i].line &&
			      d.warnings[d.n_warnings - 1].col == w[i].col &&
			      strstr(d.warnings[d.n_warnings - 1].msg, w[i].has),
			      "%zu: got %u:%u %s", i,
			      d.warnings[d.n_warnings - 1].line,
			      d.warnings[d.n_warnings - 1].col,
			      d.warnings[d.n_warnings - 1].msg);
		part_config_free(&c);
		part_diag_free(&d);
	}
}
END_TEST

/* ---- merges, generated keys, the default partition ---- */

START_TEST(merges_and_generated)
{
	struct part_config c;
	const struct part *p;

	parse_ok("A=0x300 : SELF=full ;\n"
		 "B=0x8300 : ALL=limited ;\n"	/* same key: merges, name A */
		 "G1 : 0x1 ;\n"			/* generated 0x0001 */
		 "0x2 : 0x2 ;\n"		/* digit name: the key */
		 "G2 : 0x3 ;\n"			/* 0x0002 taken: 0x0003 */
		 "G1 , defmember=full : 0x4 ;\n"	/* same name: merges */
		 "Default : 0x5=full ;\n",	/* name of the built-in */
		 &no_both, &c);
	ck_assert_uint_eq(c.n_parts, 5);
	p = find_pkey(&c, 0x300);
	ck_assert_str_eq(p->name, "A");
	ck_assert_uint_eq(p->n_members, 2);
	ck_assert_uint_eq(p->members[1].line, 2);
	p = find_pkey(&c, 0x1);
	ck_assert_str_eq(p->name, "G1");
	ck_assert(!p->pkey_given);
	ck_assert_uint_eq(p->n_members, 2);
	ck_assert_int_eq(p->members[0].membership, PART_LIMITED);
	ck_assert_int_eq(p->members[1].membership, PART_FULL);
	p = find_pkey(&c, 0x2);
	ck_assert_str_eq(p->name, "0002");	/* OpenSM's name for it */
	ck_assert(p->pkey_given);
	p = find_pkey(&c, 0x3);
	ck_assert_str_eq(p->name, "G2");
	p = find_pkey(&c, PART_PKEY_DEFAULT);
	ck_assert_ptr_eq(p, &c.parts[0]);
	ck_assert_str_eq(p->name, "Default");
	ck_assert_uint_eq(p->n_members, 3);	/* ALL, SELF, 0x5 */
	ck_assert_uint_eq(p->members[2].guid, 5);
	part_config_free(&c);

	/* Empty names never merge by name: each gets a key and is named
	 * after it. */
	parse_ok(": 0x1 ;\n : 0x2 ;\n", &no_both, &c);
	ck_assert_uint_eq(c.n_parts, 3);
	ck_assert_str_eq(find_pkey(&c, 0x1)->name, "0001");
	ck_assert_str_eq(find_pkey(&c, 0x2)->name, "0002");
	part_config_free(&c);

	/* An empty file: empty_file_is_default. */
	/* No file: Default=0x7fff,ipoib : ALL=full. */
	ck_assert_int_eq(part_config_default(&c), 0);
	ck_assert_uint_eq(c.n_parts, 1);
	ck_assert(c.parts[0].ipoib);
	ck_assert_int_eq(c.parts[0].members[0].membership, PART_FULL);
	part_config_free(&c);

	/* A header and members over lines, several definitions a line. */
	parse_ok("X=0x20 :\n 0x1,\n\t0x2 # c\n ,0x3 ; Y=0x21 : 0x4 ; Z=0x22:0x5;",
		 &no_both, &c);
	ck_assert_uint_eq(find_pkey(&c, 0x20)->n_members, 3);
	ck_assert_uint_eq(find_pkey(&c, 0x20)->members[2].line, 4);
	ck_assert_uint_eq(find_pkey(&c, 0x21)->n_members, 1);
	ck_assert_uint_eq(find_pkey(&c, 0x22)->n_members, 1);
	part_config_free(&c);

	/* mgid lines take their flags and the definition's. */
	parse_ok("M=0x30, rate=7, mtu=4 :\n"
		 "  mgid=ff12:401b::1,sl=1\n"
		 "  mgid=ff12::1,Q_Key=0xDEADBEEF,rate=3,mtu=2 # comment\n"
		 "  ALL=full ;", &no_both, &c);
	p = find_pkey(&c, 0x30);
	ck_assert_uint_eq(p->n_mgroups, 2);
	ck_assert_uint_eq(p->mgroups[0].mgid[0], 0xff);
	ck_assert_uint_eq(p->mgroups[0].mgid[1], 0x12);
	ck_assert_uint_eq(p->mgroups[0].mgid[15], 1);
	ck_assert_uint_eq(p->mgroups[0].rate, 7);
	ck_assert_uint_eq(p->mgroups[0].sl, 1);
	ck_assert_uint_eq(p->mgroups[1].qkey, 0xdeadbeef);
	ck_assert_uint_eq(p->mgroups[1].rate, 3);
	ck_assert_uint_eq(p->mgroups[1].mtu, 2);
	ck_assert_uint_eq(p->n_members, 1);
	part_config_free(&c);
}
END_TEST

/* ---- resolution ---- */

static const struct fab_port *port_of(const struct fabric *f, const char *desc,
				      unsigned pn)
{
	size_t l = strlen(desc);

	/* topo_load names a CA "H0001 HCA-1" */
	for (size_t i = 0; i < f->n_nodes; i++)
		if (!strncmp(f->nodes[i].desc, desc, l) &&
		    (f->nodes[i].desc[l] == '\0' || f->nodes[i].desc[l] == ' '))
			return &f->nodes[i].ports[pn];
	ck_abort_msg("no node %s", desc);
	return NULL;
}

static void resolve_str(const char *text, const struct part_options *o,
			struct fabric *f, struct part_resolve_report *r)
{
	struct part_config c;
	char *t = NULL;
	size_t cap = strlen(text) + 64;
	const struct fab_port *h1 = port_of(f, "H0001", 1);
	const struct fab_port *h2 = port_of(f, "H0002", 1);

	/* %1 and %2: the GUIDs of H0001 and H0002's ports. */
	t = malloc(cap * 2);
	ck_assert_ptr_nonnull(t);
	t[0] = '\0';
	for (const char *s = text; *s; s++) {
		if (s[0] == '%' && (s[1] == '1' || s[1] == '2')) {
			snprintf(t + strlen(t), 32, "0x%" PRIx64,
				 s[1] == '1' ? h1->guid : h2->guid);
			s++;
		} else {
			size_t l = strlen(t);

			t[l] = *s;
			t[l + 1] = '\0';
		}
	}
	parse_ok(t, o, &c);
	ck_assert_int_eq(part_resolve(&c, f, f->local_port_guid, r), 0);
	part_config_free(&c);
	free(t);
}

static void want(const struct fab_port *p, unsigned n, ...)
{
	va_list ap;

	ck_assert_ptr_nonnull(p->want_pkeys);
	ck_assert_uint_eq(p->n_want_pkeys, n);
	va_start(ap, n);
	for (unsigned i = 0; i < n; i++)
		ck_assert_uint_eq(p->want_pkeys[i], (unsigned)va_arg(ap, int));
	va_end(ap);
}

START_TEST(resolve_basic)
{
	struct fabric f;
	struct part_resolve_report r;

	load_model(&f);
	/* H0001 is the SM's port (first CA in the file). */
	ck_assert_uint_eq(f.local_port_guid, port_of(&f, "H0001", 1)->guid);
	resolve_str("Default=0x7fff : ALL=limited ;\n"
		    "P=0x10 : %2=full, ALL_CAS ;\n", &no_both, &f, &r);
	/* SELF full in the default partition whatever the file says. */
	want(port_of(&f, "H0001", 1), 2, 0xffff, 0x0010);
	want(port_of(&f, "H0002", 1), 2, 0x7fff, 0x0010);
	/* last member naming a port wins: ALL_CAS after %2=full. */
	want(port_of(&f, "H0003", 1), 2, 0x7fff, 0x0010);
	/* switch port 0: an end port, only the default key. */
	want(port_of(&f, "leaf-01", 0), 1, 0x7fff);
	/* leaf-01 port 2 faces H0002: its keys. */
	want(port_of(&f, "leaf-01", 2), 2, 0x7fff, 0x0010);
	/* inter-switch ports: nothing. */
	ck_assert_ptr_null(port_of(&f, "leaf-01", 5)->want_pkeys);
	ck_assert_ptr_null(port_of(&f, "leaf-01", 7)->want_pkeys);
	ck_assert_uint_eq(r.dropped, 0);
	ck_assert_uint_eq(r.ports, 16 + 6 + 16);

	/* full over limited, and full keys rank before limited ones. */
	resolve_str("A=0x10 : %2=limited ;\nB=0x11 : %2=full ;\n"
		    "C=0x12 : %2=full, %2=limited, %2=full ;\n",
		    &no_both, &f, &r);
	want(port_of(&f, "H0002", 1), 4, 0x7fff, 0x8011, 0x8012, 0x0010);

	/* both: full and limited key with allow_both_pkeys; the switch
	 * port facing it gets only the full one. */
	resolve_str("A=0x10 : %2=both ;\n", &with_both, &f, &r);
	want(port_of(&f, "H0002", 1), 3, 0x7fff, 0x8010, 0x0010);
	want(port_of(&f, "leaf-01", 2), 2, 0x7fff, 0x8010);

	/* a GUID that is no port here is counted; a CA's node GUID too. */
	{
		char t[128];
		struct part_config c;

		snprintf(t, sizeof(t), "A=0x10 : 0x1234, 0x%" PRIx64 " ;",
			 f.nodes[(size_t)port_of(&f, "leaf-01", 1)->peer_node].guid);
		parse_ok(t, &no_both, &c);
		ck_assert_int_eq(part_resolve(&c, &f, f.local_port_guid, &r), 0);
		ck_assert_uint_eq(r.unknown_guids, 2);
		ck_assert_uint_eq(r.n_unknown, 2);	/* each named */
		ck_assert_uint_eq(r.unknown[0]->guid, 0x1234);
		ck_assert_uint_eq(r.unknown[0]->line, 1);
		ck_assert_uint_eq(r.unknown[0]->col, 10);
		part_config_free(&c);
	}
	fabric_free(&f);
}
END_TEST

/* A file with no definition (empty, blanks, comments) is OpenSM's
 * configuration without a file: every port a full member of the
 * default partition (0xffff), not a limited one (0x7fff). */
START_TEST(empty_file_is_default)
{
	static const char *const texts[] = {
		"", "\n\n", "   \t\n", "# only a comment\n#another\n",
	};
	struct fabric f;
	struct part_resolve_report r;

	load_model(&f);
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct part_config c;
		struct part_diag d;

		ck_assert_int_eq(parse_str(texts[i], &no_both, &c, &d), 0);
		ck_assert_uint_eq(d.n_errors, 0);
		ck_assert_uint_eq(d.n_warnings, 1);	/* says what it did */
		ck_assert_uint_eq(c.n_parts, 1);
		ck_assert(c.parts[0].ipoib);
		ck_assert_int_eq(part_resolve(&c, &f, f.local_port_guid, &r), 0);
		want(port_of(&f, "H0002", 1), 1, 0xffff);
		want(port_of(&f, "leaf-01", 0), 1, 0xffff);
		part_config_free(&c);
		part_diag_free(&d);
	}
	fabric_free(&f);
}
END_TEST

/* A port no partition names (possible only in a model built by hand:
 * OpenSM's built-in Default has ALL) holds an empty table, and so does
 * the switch port facing it: never NULL, which would give it 0xFFFF. */
START_TEST(resolve_no_partition)
{
	struct fabric f;
	struct part_resolve_report r;
	struct part_config c;

	load_model(&f);
	parse_ok("P=0x10 : ALL_SWITCHES=full ;\n", &no_both, &c);
	for (size_t i = 0; i < c.parts[0].n_members; i++)
		if (c.parts[0].members[i].kind == PART_M_ALL) {
			c.parts[0].members[i].kind = PART_M_GUID;
			c.parts[0].members[i].guid = 0x1;
		}
	ck_assert_int_eq(part_resolve(&c, &f, f.local_port_guid, &r), 0);
	part_config_free(&c);
	want(port_of(&f, "H0001", 1), 1, 0xffff);	/* SELF */
	want(port_of(&f, "H0002", 1), 0);
	want(port_of(&f, "leaf-01", 2), 0);
	want(port_of(&f, "leaf-01", 0), 1, 0x8010);
	fabric_free(&f);
}
END_TEST

START_TEST(resolve_indx0)
{
	struct fabric f;
	struct part_resolve_report r;

	load_model(&f);
	resolve_str("A=0x10 : %2=full ;\nB=0x20, indx0 : %2 ;\n"
		    "C=0x30, indx0 : %1=full ;\n", &no_both, &f, &r);
	/* indx0 key at 0, then the default, then full, then limited. */
	want(port_of(&f, "H0002", 1), 3, 0x0020, 0x7fff, 0x8010);
	want(port_of(&f, "H0001", 1), 2, 0x8030, 0xffff);
	want(port_of(&f, "leaf-01", 2), 3, 0x0020, 0x7fff, 0x8010);
	/* without indx0 the default key is at 0 */
	want(port_of(&f, "H0003", 1), 1, 0x7fff);
	fabric_free(&f);
}
END_TEST

START_TEST(resolve_too_small)
{
	struct fabric f;
	struct part_resolve_report r;
	struct fab_node *sw;

	load_model(&f);
	port_of(&f, "H0002", 1);
	for (size_t i = 0; i < f.n_nodes; i++)
		if (!strncmp(f.nodes[i].desc, "H0002 ", 6))
			f.nodes[i].partition_cap = 3;
	sw = &f.nodes[(size_t)port_of(&f, "H0002", 1)->peer_node];
	sw->si.partition_enf_cap = htobe16(2);
	resolve_str("A=0x10 : %2 ;\nB=0x11 : %2=full ;\nC=0x12 : %2 ;\n"
		    "D=0x13 : %2=full ;\n", &no_both, &f, &r);
	/* 5 keys, 3 fit: default, then the full ones; 2 dropped. */
	want(port_of(&f, "H0002", 1), 3, 0x7fff, 0x8011, 0x8013);
	/* the switch port takes 2 of those 3: 1 more dropped; the other
	 * leaf-01 ports (H0001, H0003, H0004) hold 1 or 2 keys. */
	want(port_of(&f, "leaf-01", 2), 2, 0x7fff, 0x8011);
	ck_assert_uint_eq(r.dropped, 3);
	/* each drop described: H0002 port 1 lost A and C (limited, last
	 * in priority), leaf-01 port 2 lost D */
	ck_assert_uint_eq(r.drop_ports, 2);
	ck_assert_uint_eq(r.n_drops, 3);
	ck_assert_uint_eq(r.drops[0].node_guid,
			  f.nodes[(size_t)sw->ports[2].peer_node].guid);
	ck_assert_uint_eq(r.drops[0].port, 1);
	ck_assert_uint_eq(r.drops[0].key, 0x0010);
	ck_assert_uint_eq(r.drops[1].key, 0x0012);
	ck_assert_uint_eq(r.drops[2].node_guid, sw->guid);
	ck_assert_uint_eq(r.drops[2].port, 2);
	ck_assert_uint_eq(r.drops[2].key, 0x8013);

	/* PartitionEnforcementCap 0: the switch does not enforce. */
	sw->si.partition_enf_cap = 0;
	resolve_str("A=0x10 : %2 ;\n", &no_both, &f, &r);
	ck_assert_ptr_null(port_of(&f, "leaf-01", 2)->want_pkeys);
	ck_assert_ptr_nonnull(port_of(&f, "leaf-02", 1)->want_pkeys);
	fabric_free(&f);
}
END_TEST

/*
 * What the sweep does after a resolution: every port with a table now
 * holds it (as the discovery of the next sweep reads it back), end
 * ports in tables of PartitionCap entries.
 */
static void program_model(struct fabric *f)
{
	for (size_t i = 0; i < f->n_nodes; i++) {
		struct fab_node *n = &f->nodes[i];

		for (unsigned p = 0; p <= n->num_ports; p++) {
			struct fab_port *pt = &n->ports[p];
			unsigned blocks = (n->partition_cap + 31) / 32;

			if (!pt->want_pkeys)
				continue;
			ck_assert_int_eq(fabric_pkey_alloc(n, p, blocks), 0);
			ck_assert_uint_le(pt->n_want_pkeys, blocks * 32);
			for (unsigned k = 0; k < pt->n_want_pkeys; k++)
				pt->pkeys[k] = htobe16(pt->want_pkeys[k]);
			pt->pkey_read = pt->pkey_blocks;
		}
	}
}

static void resolve_opts_str(const char *text, bool keep, struct fabric *f,
			     struct part_resolve_report *r)
{
	struct part_config c;
	const struct part_resolve_opts o = { .keep_pkey_indexes = keep };
	char t[512];
	uint64_t g = port_of(f, "H0002", 1)->guid;

	/* %2: H0002's port GUID (at most twice in a text here) */
	ck_assert_uint_lt(strlen(text), 256);
	t[0] = '\0';
	for (const char *x = text; *x; x++) {
		if (x[0] == '%' && x[1] == '2') {
			snprintf(t + strlen(t), 24, "0x%" PRIx64, g);
			x++;
		} else {
			size_t l = strlen(t);

			t[l] = *x;
			t[l + 1] = '\0';
		}
	}
	parse_ok(t, &no_both, &c);
	ck_assert_int_eq(part_resolve_opts(&c, f, f->local_port_guid, &o, r), 0);
	part_config_free(&c);
}

/*
 * keep_pkey_indexes (OpenSM's default): adding or removing a partition
 * leaves every other key of a host at its index; a removed key leaves
 * a hole, a new key goes after the last index in use, a changed
 * membership keeps the index.  The switch port facing the host gets the
 * same keys packed.  Without it, tables are packed afresh each time.
 */
START_TEST(resolve_keep_indexes)
{
	struct fabric f;
	struct part_resolve_report r;
	const struct fab_port *h2, *sp;

	load_model(&f);
	h2 = port_of(&f, "H0002", 1);
	sp = port_of(&f, "leaf-01", 2);
	resolve_opts_str("Default=0x7fff : ALL=full ;\nA=0x10 : %2=full ;\n"
			 "B=0x11 : %2=full ;\nC=0x12 : %2=full ;\n", true, &f, &r);
	/* nothing read yet: packed in priority order */
	want(h2, 4, 0xffff, 0x8010, 0x8011, 0x8012);
	program_model(&f);

	/* A removed: B and C stay at 2 and 3, index 1 is a hole. */
	resolve_opts_str("Default=0x7fff : ALL=full ;\n"
			 "B=0x11 : %2=full ;\nC=0x12 : %2=full ;\n", true, &f, &r);
	want(h2, 4, 0xffff, 0x0000, 0x8011, 0x8012);
	want(sp, 3, 0xffff, 0x8011, 0x8012);
	ck_assert_uint_eq(r.moved, 0);
	program_model(&f);

	/* D added, before B and C in the file (and in priority): it goes
	 * after the last index in use, B and C do not move. */
	resolve_opts_str("Default=0x7fff : ALL=full ;\nD=0x13 : %2=full ;\n"
			 "B=0x11 : %2=full ;\nC=0x12 : %2=full ;\n", true, &f, &r);
	want(h2, 5, 0xffff, 0x0000, 0x8011, 0x8012, 0x8013);
	want(sp, 4, 0xffff, 0x8011, 0x8012, 0x8013);
	program_model(&f);

	/* B becomes limited: same partition, same index. */
	resolve_opts_str("Default=0x7fff : ALL=full ;\nD=0x13 : %2=full ;\n"
			 "B=0x11 : %2=limited ;\nC=0x12 : %2=full ;\n", true,
			 &f, &r);
	want(h2, 5, 0xffff, 0x0000, 0x0011, 0x8012, 0x8013);
	program_model(&f);

	/* Without keep_pkey_indexes the same file packs the table. */
	resolve_opts_str("Default=0x7fff : ALL=full ;\nD=0x13 : %2=full ;\n"
			 "B=0x11 : %2=limited ;\nC=0x12 : %2=full ;\n", false,
			 &f, &r);
	want(h2, 4, 0xffff, 0x8013, 0x8012, 0x0011);
	program_model(&f);

	/* An indx0 partition takes index 0; the default key it displaces
	 * is placed like a new key (after the last index in use). */
	resolve_opts_str("Default=0x7fff : ALL=full ;\nD=0x13 : %2=full ;\n"
			 "B=0x11 : %2=limited ;\nC=0x12 : %2=full ;\n"
			 "E=0x14, indx0 : %2=full ;\n", true, &f, &r);
	want(h2, 5, 0x8014, 0x8013, 0x8012, 0x0011, 0xffff);
	ck_assert_uint_eq(r.moved, 1);
	fabric_free(&f);
}
END_TEST

/*
 * keep_pkey_indexes with a full table: a new key takes the hole a
 * removed one left; which keys fit depends on the priority order only.
 */
START_TEST(resolve_keep_indexes_full_table)
{
	struct fabric f;
	struct part_resolve_report r;
	const struct fab_port *h2;

	load_model(&f);
	for (size_t i = 0; i < f.n_nodes; i++)
		if (!strncmp(f.nodes[i].desc, "H0002 ", 6))
			f.nodes[i].partition_cap = 4;
	h2 = port_of(&f, "H0002", 1);
	resolve_opts_str("Default=0x7fff : ALL=full ;\nA=0x10 : %2=full ;\n"
			 "B=0x11 : %2=full ;\nC=0x12 : %2=full ;\n", true, &f, &r);
	want(h2, 4, 0xffff, 0x8010, 0x8011, 0x8012);
	program_model(&f);
	/* B out, D in: D takes B's index 2 (the table is full past 3). */
	resolve_opts_str("Default=0x7fff : ALL=full ;\nA=0x10 : %2=full ;\n"
			 "C=0x12 : %2=full ;\nD=0x13 : %2=full ;\n", true, &f, &r);
	want(h2, 4, 0xffff, 0x8010, 0x8013, 0x8012);
	ck_assert_uint_eq(r.dropped, 0);
	program_model(&f);
	/* One key too many: the last in priority (E, limited) is dropped,
	 * the others keep their indexes. */
	resolve_opts_str("Default=0x7fff : ALL=full ;\nE=0x14 : %2 ;\n"
			 "A=0x10 : %2=full ;\nC=0x12 : %2=full ;\n"
			 "D=0x13 : %2=full ;\n", true, &f, &r);
	want(h2, 4, 0xffff, 0x8010, 0x8013, 0x8012);
	ck_assert_uint_eq(r.dropped, 1);
	ck_assert_uint_eq(r.drops[0].key, 0x0014);
	fabric_free(&f);
}
END_TEST

/*
 * Every dropped key is described (node, port, key) up to
 * PART_DROP_DETAIL and counted beyond, with the ports that lost keys.
 */
START_TEST(resolve_drop_detail)
{
	struct fabric f;
	struct part_resolve_report r;

	load_model(&f);
	for (size_t i = 0; i < f.n_nodes; i++)
		if (f.nodes[i].type != NODE_TYPE_SWITCH)
			f.nodes[i].partition_cap = 1;
	/* 16 CA ports, each in 6 partitions with room for 1: 80 drops. */
	resolve_opts_str("Default=0x7fff : ALL=full ;\nA=0x10 : ALL_CAS ;\n"
			 "B=0x11 : ALL_CAS ;\nC=0x12 : ALL_CAS ;\n"
			 "D=0x13 : ALL_CAS ;\nE=0x14 : ALL_CAS ;\n", true, &f, &r);
	ck_assert_uint_eq(r.dropped, 80);
	ck_assert_uint_eq(r.drop_ports, 16);
	ck_assert_uint_eq(r.n_drops, PART_DROP_DETAIL);
	for (unsigned i = 0; i < r.n_drops; i++) {
		const struct part_drop *d = &r.drops[i];
		const struct fab_node *n = &f.nodes[d->node];

		ck_assert_uint_eq(n->type, NODE_TYPE_CA);
		ck_assert_uint_eq(n->guid, d->node_guid);
		ck_assert_uint_eq(d->port, 1);
		/* per port, in priority order: A..E (limited) */
		ck_assert_uint_eq(d->key, 0x10 + i % 5);
	}
	fabric_free(&f);
}
END_TEST

static double frozen_clock(void)
{
	return 1000.0;
}

/*
 * The daemon's account of keys that did not fit (sm/parts.c): one line
 * per port and key (ERR 0707: node, description, port, key, partition,
 * membership), rate-limited so that a fabric-wide shortfall cannot flood
 * the log (a frozen clock: only the burst passes), then one ERR 0706
 * summary with the totals.
 */
START_TEST(daemon_drop_log)
{
	static struct sm sm;
	struct fabric f;
	char dir[] = "/tmp/check_partitions.XXXXXX", conf[64], logp[64];
	char line[512];
	unsigned l707 = 0, l706 = 0;
	unsigned long before;
	bool first_ok = false;
	FILE *fp;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(conf, sizeof(conf), "%s/p.conf", dir);
	snprintf(logp, sizeof(logp), "%s/log", dir);
	fp = fopen(conf, "w");
	ck_assert_ptr_nonnull(fp);
	fputs("Default=0x7fff : ALL=full ;\nA=0x10 : ALL_CAS ;\n"
	      "B=0x11 : ALL_CAS ;\nC=0x12 : ALL_CAS ;\n"
	      "D=0x13 : ALL_CAS ;\nE=0x14 : ALL_CAS ;\n", fp);
	ck_assert_int_eq(fclose(fp), 0);

	load_model(&f);
	for (size_t i = 0; i < f.n_nodes; i++)
		if (f.nodes[i].type != NODE_TYPE_SWITCH)
			f.nodes[i].partition_cap = 1;
	memset(&sm, 0, sizeof(sm));
	sm.cfg.partition_config = conf;
	sm.port_guid = f.local_port_guid;
	ck_assert_int_eq(log_open(logp, LOG_LVL_INFO), 0);
	ck_assert_int_eq(sm_parts_load(&sm, true), 0);
	log_ratelimit_clock(frozen_clock);
	log_ratelimit_set(0, 0);
	before = log_ratelimit_dropped(707);
	ck_assert_int_eq(sm_parts_resolve(&sm, &f), 0);
	/* 64 described, LOG_RL_BURST written, the rest suppressed */
	ck_assert_uint_eq(log_ratelimit_dropped(707) - before,
			  PART_DROP_DETAIL - LOG_RL_BURST);
	log_close();
	log_ratelimit_clock(NULL);

	fp = fopen(logp, "r");
	ck_assert_ptr_nonnull(fp);
	while (fgets(line, sizeof(line), fp)) {
		if (strstr(line, "ERR 0707: node 0x")) {
			if (!l707++)
				first_ok = strstr(line, " (H0") &&
					   strstr(line, ") port 1: no room for"
						  " P_Key 0x0010 of partition"
						  " A (limited member)");
		}
		if (strstr(line, "ERR 0706: 80 P_Keys did not fit the tables"
			   " of 16 ports (64 listed under ERR 0707"))
			l706++;
	}
	fclose(fp);
	ck_assert_msg(first_ok, "first ERR 0707 line");
	ck_assert_uint_eq(l707, LOG_RL_BURST);
	ck_assert_uint_eq(l706, 1);
	sm_parts_free(&sm);
	fabric_free(&f);
	unlink(conf);
	unlink(logp);
	rmdir(dir);
}
END_TEST

/* Write a file as written `age` seconds ago (sm_parts_refresh leaves a
 * file younger than a second for later). */
static void put_file_aged(const char *path, const char *text, int age)
{
	struct timespec t[2];
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	fputs(text, fp);
	ck_assert_int_eq(fclose(fp), 0);
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= age;
	t[1] = t[0];
	ck_assert_int_eq(utimensat(AT_FDCWD, path, t, 0), 0);
}

static void put_file(const char *path, const char *text)
{
	put_file_aged(path, text, 10);
}

static bool log_has(const char *path, const char *what)
{
	char line[512];
	bool found = false;
	FILE *fp = fopen(path, "r");

	ck_assert_ptr_nonnull(fp);
	while (!found && fgets(line, sizeof(line), fp))
		found = strstr(line, what) != NULL;
	fclose(fp);
	return found;
}

/*
 * The daemon's reload rules: a file that drops every partition or member
 * in force (emptied, comment-only) is refused unless forced; a file that
 * changed on disk is read again at the next resolve (heavy sweep), a
 * file that did not is not; unknown member GUIDs are named, FILE:LINE.
 */
START_TEST(daemon_reload_rules)
{
	static struct sm sm;
	struct fabric f;
	char dir[] = "/tmp/check_partitions.XXXXXX", conf[64], logp[64];
	char msg[256];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(conf, sizeof(conf), "%s/p.conf", dir);
	snprintf(logp, sizeof(logp), "%s/log", dir);
	put_file(conf, "A=0x10 : ALL_CAS ;\nB=0x11 :\n  0x1234 ;\n");
	load_model(&f);
	memset(&sm, 0, sizeof(sm));
	sm.cfg.partition_config = conf;
	sm.port_guid = f.local_port_guid;
	ck_assert_int_eq(log_open(logp, LOG_LVL_INFO), 0);
	ck_assert_int_eq(sm_parts_load(&sm, true), 0);
	ck_assert_uint_eq(sm.parts->n_parts, 3);
	ck_assert_int_eq(sm_parts_resolve(&sm, &f), 0);
	want(port_of(&f, "H0002", 1), 2, 0x7fff, 0x0010);

	/* emptied: refused on reload, refused by the resolve's re-read */
	put_file(conf, "# nothing left\n");
	ck_assert_int_eq(sm_parts_reload(&sm, NULL), -EINVAL);
	ck_assert_uint_eq(sm.parts->n_parts, 3);
	put_file(conf, "");
	ck_assert_int_eq(sm_parts_resolve(&sm, &f), 0);
	ck_assert_uint_eq(sm.parts->n_parts, 3);
	want(port_of(&f, "H0002", 1), 2, 0x7fff, 0x0010);
	/* forced: OpenSM's meaning of an empty file */
	ck_assert_int_eq(sm_parts_reload_force(&sm, NULL, true), 0);
	ck_assert_uint_eq(sm.parts->n_parts, 1);
	ck_assert_int_eq(sm_parts_resolve(&sm, &f), 0);
	want(port_of(&f, "H0002", 1), 1, 0xffff);

	/* changed on disk: the next resolve reads it, without a reload;
	 * not while it is being written (changed less than 1 s ago) */
	put_file_aged(conf, "C=0x12 : ALL_CAS=full ;\n", 0);
	ck_assert_int_eq(sm_parts_resolve(&sm, &f), 0);
	want(port_of(&f, "H0002", 1), 1, 0xffff);
	ck_assert(sm.parts_pending);
	put_file(conf, "C=0x12 : ALL_CAS=full ;\n");
	ck_assert_int_eq(sm_parts_resolve(&sm, &f), 0);
	want(port_of(&f, "H0002", 1), 2, 0x7fff, 0x8012);
	ck_assert(!sm.parts_pending);
	/* partitions that name no port of the subnet (the last sweep's
	 * model): every port stripped, refused unless forced */
	sm.fabric = f;
	put_file(conf, "C=0x12 : 0xdead=full ;\nD=0x13 : SELF=full ;\n");
	ck_assert_int_eq(sm_parts_reload(&sm, NULL), -EINVAL);
	ck_assert_uint_eq(sm.parts->n_parts, 2);
	{
		char t[128];

		snprintf(t, sizeof(t), "C=0x12 : 0xdead=full ;\nD=0x13 :"
			 " 0x%" PRIx64 "=full ;\n", port_of(&f, "H0003", 1)->guid);
		put_file(conf, t);
	}
	ck_assert_int_eq(sm_parts_reload(&sm, NULL), 0);	/* H0003 left */
	ck_assert_uint_eq(sm.parts->n_parts, 3);
	put_file(conf, "C=0x12 : ALL_CAS=full ;\n");
	ck_assert_int_eq(sm_parts_reload(&sm, NULL), 0);
	memset(&sm.fabric, 0, sizeof(sm.fabric));
	/* a broken file: named, the last good stays */
	put_file(conf, "C=0x12 : ALL_CAS=fulll ;\n");
	ck_assert_int_eq(sm_parts_resolve(&sm, &f), 0);
	want(port_of(&f, "H0002", 1), 2, 0x7fff, 0x8012);
	ck_assert_int_eq(sm_parts_reload(&sm, NULL), -EINVAL);
	put_file(conf, "C=0x18012 : ALL_CAS=full ;\n");
	ck_assert_int_eq(sm_parts_reload(&sm, NULL), -EINVAL);
	ck_assert_int_eq(sm_parts_resolve(&sm, &f), 0);
	want(port_of(&f, "H0002", 1), 2, 0x7fff, 0x8012);
	log_close();
	snprintf(msg, sizeof(msg), "ERR 0708: %s defines 0 partitions", conf);
	ck_assert(log_has(logp, msg));
	snprintf(msg, sizeof(msg), "ERR 0708: %s: none of its 2 partitions"
		 " names a port of the subnet (1 of those in force do)", conf);
	ck_assert(log_has(logp, msg));
	snprintf(msg, sizeof(msg), "ERR 0709: %s:3:3: member"
		 " 0x0000000000001234 is no port", conf);
	ck_assert(log_has(logp, msg));
	snprintf(msg, sizeof(msg), "ERR 0701: %s:1:18: expected full,"
		 " limited or both, not 'fulll'", conf);
	ck_assert(log_has(logp, msg));
	sm_parts_free(&sm);
	fabric_free(&f);
	unlink(conf);
	unlink(logp);
	rmdir(dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("partitions");
	TCase *tc = tcase_create("all");

	tcase_add_test(tc, golden_opensm_doc);
	tcase_add_test(tc, golden_rhel);
	tcase_add_test(tc, golden_members);
	tcase_add_test(tc, bad_files);
	tcase_add_test(tc, every_error);
	tcase_add_test(tc, meaning_typos);
	tcase_add_test(tc, every_flag);
	tcase_add_test(tc, warnings);
	tcase_add_test(tc, merges_and_generated);
	tcase_add_test(tc, resolve_basic);
	tcase_add_test(tc, resolve_no_partition);
	tcase_add_test(tc, empty_file_is_default);
	tcase_add_test(tc, resolve_indx0);
	tcase_add_test(tc, resolve_too_small);
	tcase_add_test(tc, resolve_keep_indexes);
	tcase_add_test(tc, resolve_keep_indexes_full_table);
	tcase_add_test(tc, resolve_drop_detail);
	tcase_add_test(tc, daemon_drop_log);
	tcase_add_test(tc, daemon_reload_rules);
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
