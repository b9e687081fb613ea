/*
 * ibsmctl_part.c - `ibsmctl partitions`: check, list and show a
 * partitions.conf, and edit it (add, remove, set) keeping every byte
 * around the edit; plan: which ports' P_Key tables a file would change on
 * the running fabric.  check and the edits work on the file alone; plan
 * reads the fabric through the SA (tools/ibsmctl_fabric.c), and list and
 * show do too unless --offline or no SM answers (they say which).
 *
 * An edit is validated with part_parse before anything is written; an
 * edit that would give a file with errors is refused with those errors
 * and the file is left as it was.  The old file is kept as FILE~ and the
 * new one written atomically (temp file, fsync, rename).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "partitions/edit.h"
#include "partitions/partitions.h"
#include "config/fileutil.h"
#include "sm/program.h"
#include "sm/sa/gen.h"
#include "tools/ibsmctl.h"
#include "tools/ibsmctl_fabric.h"

static void part_usage(FILE *f)
{
	fprintf(f,
"usage: ibsmctl partitions check FILE\n"
"       ibsmctl partitions list FILE [LIVE-OPTIONS] [--offline]\n"
"       ibsmctl partitions show FILE NAME [LIVE-OPTIONS] [--offline]\n"
"       ibsmctl partitions plan FILE [--from NEWFILE] [--json] [LIVE-OPTIONS]\n"
"       ibsmctl partitions add FILE 'DEFINITION'\n"
"       ibsmctl partitions remove FILE NAME\n"
"       ibsmctl partitions set FILE NAME MEMBER[=full|limited|both]\n"
"       ibsmctl partitions apply FILE [--from NEWFILE] [--force]\n"
"                                 [--socket PATH | --pidfile PIDFILE]\n"
"LIVE-OPTIONS (reading the fabric through the SA):\n"
"  -g, --guid PORTGUID   local port to use (default: first port that is up)\n"
"  -s, --sm-lid LID      ask this LID instead of the port's SM LID\n"
"  -t, --timeout MS      per-request timeout (default 500)\n"
"      --allow_both_pkeys  read 'both' as ibsm --allow_both_pkeys does\n");
}

/* --allow_both_pkeys: parse as ibsm with that option does. */
static bool allow_both;

static void print_diag(const char *file, const struct part_diag *d)
{
	char buf[512];
	size_t i;

	for (i = 0; i < d->n_errors; i++) {
		part_error_format(NULL, file, &d->errors[i], buf, sizeof(buf));
		fprintf(stderr, "%s\n", buf);
	}
	for (i = 0; i < d->n_warnings; i++) {
		const struct part_error *w = &d->warnings[i];

		fprintf(stderr, "%s:%u:%u: warning: %s\n", file, w->line,
			w->col, w->msg);
	}
}

/* Parse `text`: 0 clean, 1 errors (printed), -errno. */
static int validate(const char *file, const char *text, size_t len,
		    struct part_config *c)
{
	/* As ibsm without --allow_both_pkeys: `both` warns (read as full);
	 * list, show and plan take --allow_both_pkeys like ibsm. */
	struct part_options opt = { .allow_both_pkeys = allow_both };
	struct part_config tmp;
	struct part_diag d = { 0 };
	int rc = part_parse(file, text, len, &opt, c ? c : &tmp, &d);

	print_diag(file, &d);
	part_diag_free(&d);
	if (rc == -EINVAL)
		return 1;
	if (rc < 0)
		return rc;
	if (!c)
		part_config_free(&tmp);
	return 0;
}

static int load(const char *file, char **text, size_t *len)
{
	int rc = read_file_all(file, text, len);

	if (rc < 0)
		fprintf(stderr, "ibsmctl: cannot read %s: %s\n", file,
			strerror(-rc));
	return rc;
}

static const char *membership_str(enum part_membership m)
{
	return m == PART_FULL ? "full" : m == PART_BOTH ? "both" : "limited";
}

static void print_member(FILE *f, const struct part_member *m)
{
	static const char *const kw[] = {
		[PART_M_ALL] = "ALL", [PART_M_ALL_CAS] = "ALL_CAS",
		[PART_M_ALL_SWITCHES] = "ALL_SWITCHES",
		[PART_M_ALL_ROUTERS] = "ALL_ROUTERS", [PART_M_SELF] = "SELF",
	};

	if (m->kind == PART_M_GUID)
		fprintf(f, "0x%016llx", (unsigned long long)m->guid);
	else
		fputs(kw[m->kind], f);
	fprintf(f, "=%s", membership_str(m->membership));
}

static void print_flags(FILE *f, const struct part *p)
{
	const char *sep = "";

#define FLAG(cond, ...) do { if (cond) { fputs(sep, f); \
	fprintf(f, __VA_ARGS__); sep = ","; } } while (0)
	FLAG(p->ipoib, "ipoib");
	FLAG(p->indx0, "indx0");
	FLAG(p->rate, "rate=%u", p->rate);
	FLAG(p->mtu, "mtu=%u", p->mtu);
	FLAG(p->sl, "sl=%u", p->sl);
	FLAG(p->scope, "scope=%u", p->scope);
	FLAG(p->qkey, "Q_Key=0x%x", p->qkey);
	FLAG(p->tclass, "TClass=%u", p->tclass);
	FLAG(p->flow_label, "FlowLabel=0x%x", p->flow_label);
	FLAG(true, "defmember=%s", membership_str(p->defmember));
#undef FLAG
}

static void print_part(const struct part *p, bool detail)
{
	size_t i;

	printf("%-20s 0x%04x%s ", p->name, p->pkey,
	       p->pkey_given ? "" : "*");
	print_flags(stdout, p);
	if (!detail) {
		printf(" members=%zu\n", p->n_members);
		return;
	}
	printf("\n");
	if (p->line)
		printf("  defined at line %u%s\n", p->line,
		       p->pkey_given ? "" : " (P_Key generated)");
	for (i = 0; i < p->n_members; i++) {
		printf("  ");
		print_member(stdout, &p->members[i]);
		if (p->members[i].line)
			printf("  (line %u)", p->members[i].line);
		else
			printf("  (built in)");
		printf("\n");
	}
	for (i = 0; i < p->n_mgroups; i++) {
		char gid[INET6_ADDRSTRLEN];

		if (!inet_ntop(AF_INET6, p->mgroups[i].mgid, gid, sizeof(gid)))
			strcpy(gid, "?");
		printf("  mgid=%s  (line %u)\n", gid, p->mgroups[i].line);
	}
}

/* ------------------------------------------------------------ live */

/* Options of the commands that read the running fabric. */
struct live_opts {
	const char *file, *name, *from;
	bool json, offline;
	struct sa_fabric_opts sa;
};

/* The fabric as the SM's SA tells it, the partitions resolved on it. */
struct live {
	struct fabric f;
	struct sa_fabric_info info;
	bool ok;			/* read; else why says why not */
	char why[256];
};

static bool parse_ull(const char *s, unsigned long long max,
		      unsigned long long *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && end != s && !*end && *v <= max && s[0] != '-';
}

/*
 * FILE [NAME] and the options of list, show and plan; `names` is how many
 * positional words the command takes.  0, or 2 (usage, said).
 */
static int live_args(int argc, char **argv, unsigned names,
		     struct live_opts *o)
{
	unsigned long long v;
	unsigned pos = 0;

	memset(o, 0, sizeof(*o));
	o->sa.sm_lid = -1;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool more = i + 1 < argc;

		if (!strcmp(a, "--json") || !strcmp(a, "-j"))
			o->json = true;
		else if (!strcmp(a, "--offline"))
			o->offline = true;
		else if (!strcmp(a, "--allow_both_pkeys"))
			allow_both = true;
		else if (!strcmp(a, "--from") && more)
			o->from = argv[++i];
		else if ((!strcmp(a, "--guid") || !strcmp(a, "-g")) && more) {
			if (!parse_ull(argv[++i], UINT64_MAX, &v) || !v) {
				fprintf(stderr, "ibsmctl: bad port GUID '%s'\n",
					argv[i]);
				return 2;
			}
			o->sa.guid = v;
		} else if ((!strcmp(a, "--sm-lid") || !strcmp(a, "-s")) && more) {
			if (!parse_ull(argv[++i], 0xbfff, &v) || !v) {
				fprintf(stderr, "ibsmctl: bad SM LID '%s' (unicast "
					"LIDs 1-49151)\n", argv[i]);
				return 2;
			}
			o->sa.sm_lid = (long)v;
		} else if ((!strcmp(a, "--timeout") || !strcmp(a, "-t")) && more) {
			if (!parse_ull(argv[++i], 600000, &v) || !v) {
				fprintf(stderr, "ibsmctl: bad timeout '%s' "
					"(1-600000 ms)\n", argv[i]);
				return 2;
			}
			o->sa.timeout_ms = (unsigned)v;
			o->sa.retries = 3;
		} else if (a[0] == '-' && a[1]) {
			part_usage(stderr);
			return 2;
		} else if (pos == 0) {
			o->file = a;
			pos++;
		} else if (pos < names) {
			o->name = a;
			pos++;
		} else {
			part_usage(stderr);
			return 2;
		}
	}
	if (pos != names) {
		part_usage(stderr);
		return 2;
	}
	return 0;
}

static void live_read(struct live *l, const struct live_opts *o)
{
	fabric_init(&l->f);
	memset(&l->info, 0, sizeof(l->info));
	l->ok = sa_fabric_read(&o->sa, &l->f, &l->info, l->why,
			       sizeof(l->why)) == 0;
	if (!l->ok) {
		fabric_free(&l->f);
		fabric_init(&l->f);
	}
}

/*
 * The table port (id, pn) will hold once the SM programs the model's
 * want_pkeys: program_pkey_block(), the daemon's own rule, block by
 * block, into `tbl` (pkey_blocks * 32 entries, host order).  false: the
 * SM leaves the table alone.
 */
static bool predict(const struct fabric *f, int32_t id, unsigned pn,
		    uint16_t *tbl)
{
	const struct fab_port *p = &fabric_node(f, id)->ports[pn];

	for (unsigned blk = 0; blk < p->pkey_blocks; blk++) {
		__be16 want[PKEY_BLOCK_SIZE];

		if (!program_pkey_block(f, id, pn, blk, want))
			return false;
		for (unsigned i = 0; i < PKEY_BLOCK_SIZE; i++)
			tbl[blk * PKEY_BLOCK_SIZE + i] = be16toh(want[i]);
	}
	return p->pkey_blocks != 0;
}

/* Parse the file and resolve it on the live model.  0, 1 (said). */
static int live_resolve(const char *file, struct part_config *c,
			struct live *l)
{
	struct part_resolve_report rep;
	char *text;
	size_t len;
	int rc;

	if (load(file, &text, &len) < 0)
		return 1;
	rc = validate(file, text, len, c);
	free(text);
	if (rc)
		return 1;
	if (l->ok && part_resolve(c, &l->f, l->info.sm_port_guid, &rep) < 0) {
		fprintf(stderr, "ibsmctl: out of memory\n");
		part_config_free(c);
		return 1;
	}
	return 0;
}

/* fabric_is_endport() (model/fabric.h): what partitions name (CA and router
 * ports, switch port 0). */

/* How port (id, pn) is a member of partition `pkey` once programmed:
 * 0 none, 1 limited, 2 full, 3 both. */
static unsigned member_of(const struct fabric *f, int32_t id, unsigned pn,
			  uint16_t pkey, uint16_t *tbl)
{
	const struct fab_port *p = &fabric_node(f, id)->ports[pn];
	unsigned size = (unsigned)p->pkey_blocks * PKEY_BLOCK_SIZE, m = 0;

	if (!predict(f, id, pn, tbl))
		return 0;
	for (unsigned i = 0; i < size; i++) {
		if (!tbl[i] || (tbl[i] & 0x7fff) != pkey)
			continue;
		m |= tbl[i] & PART_FULL_BIT ? 2 : 1;
	}
	return m;
}

static const char *const member_words[] = { "none", "limited", "full", "both" };

/* Print the trimmed description of a node. */
static const char *desc_of(const struct fab_node *n)
{
	return n->has_desc ? n->desc : "";
}

/* list / show: 0, 1 (errors in the file, unknown name). */
static int cmd_list(int argc, char **argv, bool show)
{
	struct live_opts o;
	struct live l = { .ok = false };
	struct part_config c;
	uint16_t *tbl = NULL;
	int rc, found = 0;

	rc = live_args(argc, argv, show ? 2 : 1, &o);
	if (rc)
		return rc;
	if (o.from || o.json) {		/* plan's options only */
		part_usage(stderr);
		return 2;
	}
	if (!o.offline)
		live_read(&l, &o);
	else
		fabric_init(&l.f);
	if (live_resolve(o.file, &c, &l)) {
		fabric_free(&l.f);
		return 1;
	}
	if (l.ok)
		printf("# resolved against the running fabric: the SA of SM "
		       "LID %u, %u nodes, SM port 0x%016llx\n", l.info.sm_lid,
		       l.info.nodes, (unsigned long long)l.info.sm_port_guid);
	else
		printf("# file only (members not resolved): %s\n",
		       o.offline ? "--offline" : l.why);
	tbl = malloc(PKEY_MAX_BLOCKS * PKEY_BLOCK_SIZE * sizeof(*tbl));
	if (!tbl) {
		part_config_free(&c);
		fabric_free(&l.f);
		return 1;
	}
	for (size_t i = 0; i < c.n_parts; i++) {
		const struct part *pa = &c.parts[i];
		unsigned cnt[4] = { 0 };

		if (show && strcmp(pa->name, o.name))
			continue;
		found++;
		if (!show && !l.ok) {
			print_part(pa, false);
			continue;
		}
		if (show)
			print_part(pa, true);
		/* The ports that hold the key once the SM has programmed
		 * this file: every end port, by port GUID. */
		for (size_t id = 0; l.ok && id < l.f.n_nodes; id++) {
			const struct fab_node *n = &l.f.nodes[id];

			for (unsigned pn = 0; pn <= n->num_ports; pn++) {
				unsigned m;

				if (!fabric_is_endport(n, pn))
					continue;
				m = member_of(&l.f, (int32_t)id, pn, pa->pkey, tbl);
				if (!m)
					continue;
				cnt[m]++;
				cnt[0]++;
				if (!show)
					continue;
				printf("  port 0x%016llx %-7s LID %-5u port %-3u %s\n",
				       (unsigned long long)n->ports[pn].guid,
				       member_words[m], n->ports[pn].lid, pn,
				       desc_of(n));
			}
		}
		if (!l.ok)
			continue;
		if (show) {
			printf("  %u ports on the fabric: %u full, %u limited, "
			       "%u both\n", cnt[0], cnt[2], cnt[1], cnt[3]);
			continue;
		}
		printf("%-20s 0x%04x%s ", pa->name, pa->pkey,
		       pa->pkey_given ? "" : "*");
		print_flags(stdout, pa);
		printf(" members=%zu ports=%u full=%u limited=%u both=%u\n",
		       pa->n_members, cnt[0], cnt[2], cnt[1], cnt[3]);
	}
	free(tbl);
	part_config_free(&c);
	fabric_free(&l.f);
	if (show && !found) {
		fprintf(stderr, "ibsmctl: %s: no partition named '%s'\n",
			o.file, o.name);
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------------- plan */

struct change {
	int32_t node;
	unsigned port;
	unsigned blocks;		/* blocks that differ */
	unsigned size;
	uint16_t *old, *now;		/* size entries each */
};

/* Index of `key` in t (size), or -1. */
static int find_key(const uint16_t *t, unsigned size, uint16_t key)
{
	for (unsigned i = 0; i < size; i++)
		if (t[i] == key)
			return (int)i;
	return -1;
}

/* "0x8002@1 0x0003@4" (JSON: "[\"0x8002@1\",...]") of the keys of `a`
 * that are not in `b` (moved: that are in b at another index). */
static void keys_text(FILE *fp, const struct change *c, bool added,
		      bool moved, bool json)
{
	const uint16_t *a = added ? c->now : c->old;
	const uint16_t *b = added ? c->old : c->now;
	const char *sep = "";
	int n = 0;

	if (json)
		fputc('[', fp);
	for (unsigned i = 0; i < c->size; i++) {
		int j;

		if (!a[i])
			continue;
		j = find_key(b, c->size, a[i]);
		if (moved ? j < 0 || (unsigned)j == i : j >= 0)
			continue;
		if (json)
			fprintf(fp, "%s\"0x%04x@%u", sep, a[i], i);
		else
			fprintf(fp, "%s0x%04x@%u", sep, a[i], i);
		if (moved)
			fprintf(fp, "->%d", j);
		if (json)
			fputc('"', fp);
		sep = json ? "," : " ";
		n++;
	}
	if (json)
		fputc(']', fp);
	else if (!n)
		fputc('-', fp);
}

static void table_json(FILE *fp, const uint16_t *t, unsigned size)
{
	const char *sep = "";

	fputc('[', fp);
	for (unsigned i = 0; i < size; i++) {
		if (!t[i])
			continue;
		fprintf(fp, "%s\"%u:0x%04x\"", sep, i, t[i]);
		sep = ",";
	}
	fputc(']', fp);
}

static void json_str(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(fp, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			fprintf(fp, "\\u%04x", ch);
		else
			fputc(ch, fp);
	}
	fputc('"', fp);
}

/* One cell of keys (keys_text) as a string. */
static void keys_cell(struct out *o, const char *key, const char *hdr,
		      const struct change *c, bool added, bool moved)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);

	if (!fp)
		return;
	keys_text(fp, c, added, moved, false);
	if (fclose(fp) == 0 && buf)
		out_raw(o, key, hdr, buf, "null", false);
	free(buf);
}

/* The plan as an aligned table (ibsmctl_out.c), a row per port. */
static int plan_table(const struct fabric *f, const struct change *ch,
		      size_t n)
{
	struct out *o;
	int rc;

	if (!n)
		return 0;
	o = out_new();
	if (!o)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct change *x = &ch[i];
		const struct fab_node *nd = fabric_node(f, x->node);
		bool sw = nd->type == NODE_TYPE_SWITCH;

		out_row(o);
		out_hex(o, "node_guid", "NodeGUID", nd->guid, 16);
		out_num(o, "port", "Port", x->port);
		out_num(o, "lid", "LID", nd->ports[sw ? 0 : x->port].lid);
		out_str(o, "description", "Description", desc_of(nd),
			strlen(desc_of(nd)));
		keys_cell(o, "added", "Added", x, true, false);
		keys_cell(o, "removed", "Removed", x, false, false);
		keys_cell(o, "moved", "Moved", x, false, true);
	}
	rc = out_print(o, stdout, false, false);
	out_free(o);
	return rc;
}

/*
 * plan FILE [--from NEWFILE]: the tables the SM would program from
 * NEWFILE (else FILE) on the fabric as its SA describes it, against the
 * tables it holds now; one row per port whose table changes.  Exit 0
 * (the plan printed, changes or not), 1 (no SM, bad file).
 */
/* The MTU a port can carry: MTUCap, or NeighborMTU when lower (what
 * the SA's MCMemberRecord checks hold a join to). */
static unsigned port_mtu(const struct fab_port *p)
{
	unsigned cap = pi_mtu_cap(&p->pi), nb = pi_neighbor_mtu(&p->pi);

	return nb && nb < cap ? nb : cap;
}

/*
 * One group MTU/rate (a partition's mtu=/rate=, or an mgid= line's)
 * against the CA and router ports the plan makes members of the
 * partition: a warning when some cannot carry it (a join from them is
 * refused: ERR 0801), naming how many and the best they can do.
 */
static void warn_caps(const struct fabric *f, const char *file,
		      unsigned line, const struct part *pt, const char *what,
		      unsigned mtu, unsigned rate)
{
	unsigned members = 0, low_mtu = 0, low_rate = 0, best_mtu = 0;
	unsigned best_rate = 0;

	for (size_t id = 0; id < f->n_nodes; id++) {
		const struct fab_node *n = &f->nodes[id];

		if (n->type == NODE_TYPE_SWITCH)
			continue;
		for (unsigned pn = 1; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];
			bool member = false;
			unsigned m, r;

			for (unsigned i = 0; p->want_pkeys &&
			     i < p->n_want_pkeys && !member; i++)
				member = p->want_pkeys[i] &&
					 (p->want_pkeys[i] & 0x7fff) == pt->pkey;
			if (!member)
				continue;
			members++;
			m = port_mtu(p);
			r = sa_port_rate(n, pn);
			low_mtu += mtu && m < mtu;
			low_rate += rate && sa_rate_cmp(r, rate) < 0;
			if (m > best_mtu)
				best_mtu = m;
			if (!best_rate || sa_rate_cmp(r, best_rate) > 0)
				best_rate = r;
		}
	}
	if (low_mtu)
		fprintf(stderr, "%s:%u: warning: partition %s: %s mtu=%u is above"
			" what %u of its %u member ports can carry (the best: mtu"
			" %u); their joins to its groups are refused\n",
			file, line, pt->name, what, mtu,
			low_mtu, members, best_mtu);
	if (low_rate)
		fprintf(stderr, "%s:%u: warning: partition %s: %s rate=%u is above"
			" what %u of its %u member ports can carry (the best: rate"
			" %u); their joins to its groups are refused\n",
			file, line, pt->name, what, rate,
			low_rate, members, best_rate);
}

static void plan_caps(const struct fabric *f, const char *file,
		      const struct part_config *c)
{
	for (size_t i = 0; i < c->n_parts; i++) {
		const struct part *pt = &c->parts[i];

		if (pt->mtu || pt->rate)
			warn_caps(f, file, pt->line, pt, "its", pt->mtu,
				  pt->rate);
		for (size_t k = 0; k < pt->n_mgroups; k++)
			if (pt->mgroups[k].mtu != pt->mtu ||
			    pt->mgroups[k].rate != pt->rate)
				warn_caps(f, file, pt->mgroups[k].line, pt,
					  "an mgid= group's",
					  pt->mgroups[k].mtu,
					  pt->mgroups[k].rate);
	}
}

static int cmd_plan(int argc, char **argv)
{
	struct live_opts o;
	struct live l = { .ok = false };
	struct part_config c;
	struct change *ch = NULL;
	size_t n_ch = 0, cap_ch = 0;
	unsigned tables = 0, blocks = 0;
	int rc;

	rc = live_args(argc, argv, 1, &o);
	if (rc)
		return rc;
	if (o.offline) {
		fprintf(stderr, "ibsmctl: plan needs the running fabric: "
			"--offline makes no sense here\n");
		return 2;
	}
	live_read(&l, &o);
	if (!l.ok) {
		fprintf(stderr, "ibsmctl: cannot read the fabric through the "
			"SA: %s\n", l.why);
		return 1;
	}
	if (live_resolve(o.from ? o.from : o.file, &c, &l)) {
		fabric_free(&l.f);
		return 1;
	}
	plan_caps(&l.f, o.from ? o.from : o.file, &c);
	rc = 0;
	for (size_t id = 0; id < l.f.n_nodes && !rc; id++) {
		const struct fab_node *n = &l.f.nodes[id];

		for (unsigned pn = 0; pn <= n->num_ports && !rc; pn++) {
			const struct fab_port *p = &n->ports[pn];
			unsigned size = (unsigned)p->pkey_blocks * PKEY_BLOCK_SIZE;
			unsigned diff = 0;
			uint16_t *now, *old;

			if (!size)
				continue;
			now = calloc(size, sizeof(*now));
			old = calloc(size, sizeof(*old));
			if (!now || !old) {
				free(now);
				free(old);
				rc = -ENOMEM;
				break;
			}
			if (!predict(&l.f, (int32_t)id, pn, now)) {
				free(now);
				free(old);
				continue;
			}
			tables++;
			for (unsigned i = 0; i < size; i++)
				old[i] = be16toh(p->pkeys[i]);
			for (unsigned b = 0; b < p->pkey_blocks; b++)
				if (!fabric_pkey_known(p) ||
				    memcmp(now + b * PKEY_BLOCK_SIZE,
					   old + b * PKEY_BLOCK_SIZE,
					   PKEY_BLOCK_SIZE * sizeof(*now)))
					diff++;
			if (!diff) {
				free(now);
				free(old);
				continue;
			}
			if (n_ch == cap_ch) {
				size_t nc = cap_ch ? cap_ch * 2 : 64;
				struct change *nch = realloc(ch, nc * sizeof(*nch));

				if (!nch) {
					free(now);
					free(old);
					rc = -ENOMEM;
					break;
				}
				ch = nch;
				cap_ch = nc;
			}
			ch[n_ch++] = (struct change){ .node = (int32_t)id,
				.port = pn, .blocks = diff, .size = size,
				.old = old, .now = now };
			blocks += diff;
		}
	}
	if (rc < 0) {
		fprintf(stderr, "ibsmctl: out of memory\n");
		rc = 1;
		goto out;
	}
	if (o.json) {
		printf("{\"sm_lid\":%u,\"sm_port_guid\":\"0x%016llx\","
		       "\"file\":", l.info.sm_lid,
		       (unsigned long long)l.info.sm_port_guid);
		json_str(stdout, o.from ? o.from : o.file);
		printf(",\"nodes\":%u,\"tables\":%u,\"changed\":%zu,"
		       "\"blocks\":%u,\"ports\":[", l.info.nodes, tables, n_ch,
		       blocks);
		for (size_t i = 0; i < n_ch; i++) {
			const struct change *x = &ch[i];
			const struct fab_node *n = fabric_node(&l.f, x->node);
			const struct fab_port *p = &n->ports[x->port];
			bool sw = n->type == NODE_TYPE_SWITCH;

			printf("%s\n{\"node_guid\":\"0x%016llx\",\"port_guid\":"
			       "\"0x%016llx\",\"type\":\"%s\",\"description\":",
			       i ? "," : "", (unsigned long long)n->guid,
			       (unsigned long long)(p->guid ? p->guid :
						   n->ports[0].guid),
			       sw ? "Switch" : n->type == NODE_TYPE_ROUTER ?
			       "Router" : "CA");
			json_str(stdout, desc_of(n));
			printf(",\"port\":%u,\"lid\":%u,\"blocks\":%u,\"added\":",
			       x->port, n->ports[sw ? 0 : x->port].lid,
			       x->blocks);
			keys_text(stdout, x, true, false, true);
			printf(",\"removed\":");
			keys_text(stdout, x, false, false, true);
			printf(",\"moved\":");
			keys_text(stdout, x, false, true, true);
			printf(",\"old\":");
			table_json(stdout, x->old, x->size);
			printf(",\"new\":");
			table_json(stdout, x->now, x->size);
			printf("}");
		}
		printf("\n]}\n");
	} else {
		rc = plan_table(&l.f, ch, n_ch);
		if (rc < 0) {
			fprintf(stderr, "ibsmctl: cannot print the plan: %s\n",
				strerror(-rc));
			rc = 1;
			goto out;
		}
		printf("# %zu of %u P_Key tables change (%u blocks to send), "
		       "from %s on the fabric of SM LID %u (%u nodes)\n", n_ch,
		       tables, blocks, o.from ? o.from : o.file, l.info.sm_lid,
		       l.info.nodes);
	}
	rc = 0;
out:
	for (size_t i = 0; i < n_ch; i++) {
		free(ch[i].old);
		free(ch[i].now);
	}
	free(ch);
	part_config_free(&c);
	fabric_free(&l.f);
	return rc;
}

static int write_text(FILE *fp, const void *arg)
{
	const struct { const char *p; size_t n; } *t = arg;

	return fwrite(t->p, 1, t->n, fp) == t->n ? 0 : -EIO;
}

/* Validate `text` and write it to `file`, the old one kept as FILE~. */
static int commit(const char *file, const char *text, size_t len)
{
	struct { const char *p; size_t n; } n = { text, len };
	int rc = validate(file, text, len, NULL);

	if (rc) {
		if (rc > 0)
			fprintf(stderr, "ibsmctl: %s: edit refused (the result "
				"would not parse); file unchanged\n", file);
		return 1;
	}
	rc = write_file_atomic_backup(file, "~", write_text, &n);
	if (rc < 0) {
		fprintf(stderr, "ibsmctl: cannot write %s: %s\n", file,
			strerror(-rc));
		return 1;
	}
	return 0;
}

static int cmd_edit_locked(const char *op, int argc, char **argv);

/* The edit lock of `file` (file_lock), waited for; -1 when it cannot be
 * taken (said on stderr). */
static int lock_file(const char *file)
{
	int fd = file_lock(file, true);

	if (fd < 0)
		fprintf(stderr, "ibsmctl: cannot lock %s for the edit: %s\n",
			file, strerror(-fd));
	return fd;
}

/* The edit runs under the file's lock, from the read to the rename, so
 * that concurrent edits apply one after the other. */
static int cmd_edit(const char *op, int argc, char **argv)
{
	int lk = lock_file(argv[0]), rc;

	if (lk < 0)
		return 1;
	rc = cmd_edit_locked(op, argc, argv);
	file_unlock(lk);
	return rc;
}

static int cmd_edit_locked(const char *op, int argc, char **argv)
{
	const char *file = argv[0];
	char *text, *out = NULL, *mem = NULL;
	size_t len, out_len;
	int rc;

	if (load(file, &text, &len) < 0)
		return 1;
	if (!strcmp(op, "add")) {
		rc = part_edit_add(text, len, argv[1], &out, &out_len);
	} else if (!strcmp(op, "remove")) {
		rc = part_edit_remove(text, len, argv[1], &out, &out_len);
	} else {
		char *eq;

		mem = strdup(argv[2]);
		if (!mem) {
			free(text);
			return 1;
		}
		eq = strchr(mem, '=');
		if (eq)
			*eq++ = '\0';
		rc = part_edit_set(text, len, argv[1], mem, eq, &out, &out_len);
	}
	(void)argc;
	if (rc == -ENOENT)
		fprintf(stderr, "ibsmctl: %s: no partition named '%s'\n", file,
			argv[1]);
	else if (rc == -EINVAL)
		fprintf(stderr, "ibsmctl: bad %s: expected %s\n",
			!strcmp(op, "add") ? "definition" : "member",
			!strcmp(op, "add") ?
			"'Name[=PKey][,flag]... : members' with at most a final ';'" :
			"MEMBER[=full|limited|both] without , ; : # or spaces");
	else if (rc < 0)
		fprintf(stderr, "ibsmctl: %s\n", strerror(-rc));
	if (rc == 0)
		rc = commit(file, out, out_len);
	else
		rc = 1;
	free(out);
	free(mem);
	free(text);
	return rc;
}

/* The pid in `path` (ibsm -J): > 1 and a process named ibsm or opensm,
 * so a stale file naming a reused pid gets no SIGHUP.  0 or -1. */
static int read_pid(const char *path, pid_t *pid)
{
	char *text, comm[64] = "", proc[64], *end;
	size_t len;
	long v;
	FILE *fp;

	if (load(path, &text, &len) < 0)
		return -1;
	errno = 0;
	v = strtol(text, &end, 10);
	while (*end == '\n' || *end == ' ')
		end++;
	if (errno || end == text || *end || v <= 1 || v != (pid_t)v) {
		fprintf(stderr, "ibsmctl: %s: expected a pid (one number "
			"above 1)\n", path);
		free(text);
		return -1;
	}
	free(text);
	snprintf(proc, sizeof(proc), "/proc/%ld/comm", v);
	fp = fopen(proc, "r");
	if (fp) {
		if (!fgets(comm, sizeof(comm), fp))
			comm[0] = '\0';
		fclose(fp);
		if (!strstr(comm, "ibsm") && !strstr(comm, "opensm")) {
			fprintf(stderr, "ibsmctl: %s: pid %ld is no ibsm or "
				"opensm (stale pid file?)\n", path, v);
			return -1;
		}
	} else if (kill((pid_t)v, 0) < 0) {
		fprintf(stderr, "ibsmctl: %s: pid %ld: %s\n", path, v,
			strerror(errno));
		return -1;
	}
	*pid = (pid_t)v;
	return 0;
}

/*
 * The SM re-reads its files: through its control socket, which answers
 * with the outcome of the reload (every FILE:LINE error the SM found),
 * or with --pidfile (and no --socket) a SIGHUP, whose outcome only the
 * SM's log tells.  0 or 1.
 */
static int tell_sm(const char *file, const char *sock, const char *pidf,
		   bool force)
{
	struct ctl_reply r;
	pid_t pid;
	int rc;

	if (pidf && !sock) {
		if (read_pid(pidf, &pid) < 0)
			return 1;
		if (kill(pid, SIGHUP) < 0) {
			fprintf(stderr, "ibsmctl: cannot signal pid %ld: %s\n",
				(long)pid, strerror(errno));
			return 1;
		}
		printf("%s: valid; SIGHUP sent to pid %ld (applied in its next "
		       "heavy sweep)\n", file, (long)pid);
		return 0;
	}
	char path[PATH_MAX];
	int found = ctl_socket_path(sock, NULL, path, sizeof(path));
	if (found)
		return found == 2 ? 1 : found;
	if (ctl_request(path, force ? "reload force" : "reload", &r) < 0)
		return 1;
	for (size_t i = 0; i + 1 < r.n; i++)
		fprintf(!ctl_line_is_problem(r.lines[i]) ? stdout : stderr,
			"%s\n", r.lines[i]);
	if (r.ok)
		printf("%s: valid; the SM reloaded it: %s\n", file,
		       ctl_reply_text(&r));
	else
		fprintf(stderr, "ibsmctl: %s: the SM's reload failed: %s\n",
			file, ctl_reply_text(&r));
	rc = r.ok ? 0 : 1;
	ctl_reply_free(&r);
	return rc;
}

/* apply: FILE valid (or NEWFILE, then written over FILE with FILE~
 * kept), then the SM re-reads FILE (tell_sm). */
static int cmd_apply(int argc, char **argv)
{
	const char *file = NULL, *from = NULL, *pidf = NULL, *sock = NULL;
	char *text;
	size_t len;
	bool force = false;
	pid_t pid;
	int i, rc, lk;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--force"))
			force = true;
		else if (!strcmp(argv[i], "--pidfile") && i + 1 < argc)
			pidf = argv[++i];
		else if (!strcmp(argv[i], "--socket") && i + 1 < argc)
			sock = argv[++i];
		else if (!strcmp(argv[i], "--from") && i + 1 < argc)
			from = argv[++i];
		else if (!file && argv[i][0] != '-')
			file = argv[i];
		else
			file = NULL, i = argc;
	}
	if (!file) {
		part_usage(stderr);
		return 2;
	}
	if (force && pidf && !sock) {
		fprintf(stderr, "ibsmctl: partitions apply --force needs the SM's"
			" control socket (--socket), not --pidfile: a SIGHUP"
			" never forces\n");
		return 2;
	}
	/* A pid file naming no SM: nothing is written or sent. */
	if (pidf && !sock && read_pid(pidf, &pid) < 0)
		return 1;
	if (load(from ? from : file, &text, &len) < 0)
		return 1;
	if (from) {
		/* The new content over FILE, the old one kept as FILE~,
		 * under FILE's edit lock. */
		lk = lock_file(file);
		rc = lk < 0 ? 1 : commit(file, text, len);
		file_unlock(lk);
	} else {
		rc = validate(file, text, len, NULL) ? 1 : 0;
		if (rc)
			fprintf(stderr, "ibsmctl: %s: not applied (the SM keeps "
				"its partitions)\n", file);
	}
	free(text);
	if (rc)
		return 1;
	return tell_sm(file, sock, pidf, force);
}

int part_main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	argc -= 2;
	argv += 2;
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		part_usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "check") && argc == 1) {
		char *text;
		size_t len;
		int rc;

		if (load(argv[0], &text, &len) < 0)
			return 1;
		rc = validate(argv[0], text, len, NULL);
		free(text);
		return rc ? 1 : 0;
	}
	if (!strcmp(cmd, "list"))
		return cmd_list(argc, argv, false);
	if (!strcmp(cmd, "show"))
		return cmd_list(argc, argv, true);
	if (!strcmp(cmd, "plan"))
		return cmd_plan(argc, argv);
	if ((!strcmp(cmd, "add") || !strcmp(cmd, "remove")) && argc == 2)
		return cmd_edit(cmd, argc, argv);
	if (!strcmp(cmd, "set") && argc == 3)
		return cmd_edit(cmd, argc, argv);
	if (!strcmp(cmd, "apply"))
		return cmd_apply(argc, argv);
	part_usage(stderr);
	return 2;
}
