/*
 * lid.c - LID assignment and the guid2lid cache (see lid.h).
 *
 * The cache is an open-addressing hash from port GUID to LID range,
 * loaded from and saved to OpenSM's guid2lid file.  lid_assign() runs once
 * per heavy sweep, after discovery has built the fabric model and before
 * routing, which needs every base LID and f->max_lid.  It works on a
 * bitmap of the unicast LID space, so its cost is a sort of the ports plus
 * a few linear passes whatever the fabric size.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/fileutil.h"
#include "sm/lid.h"

#define LID_MAX_LMC	7
#define LID_SPACE	(LID_UNICAST_MAX + 1)		/* 0xc000 */
#define LID_WORDS	(LID_SPACE / 64)

/* ---------------------------------------------------------------------
 * LID bitmaps.  Ranges are always 2^lmc LIDs aligned to their size, so a
 * range of up to 64 LIDs sits inside one word and a larger one covers
 * whole words.
 */

struct lid_bitmap {
	uint64_t w[LID_WORDS];
};

static bool range_valid(unsigned min, unsigned max)
{
	unsigned size = max - min + 1;

	return min >= 1 && min <= max && max <= LID_UNICAST_MAX &&
	       size <= (1u << LID_MAX_LMC) && (size & (size - 1)) == 0 &&
	       min % size == 0;
}

/* Any LID of the aligned range [base, base + size) set? */
static bool bm_any(const struct lid_bitmap *b, unsigned base, unsigned size)
{
	if (size >= 64) {
		for (unsigned i = base / 64; i < (base + size) / 64; i++)
			if (b->w[i])
				return true;
		return false;
	}
	uint64_t mask = ((1ull << size) - 1) << (base % 64);
	return (b->w[base / 64] & mask) != 0;
}

static void bm_set(struct lid_bitmap *b, unsigned base, unsigned size)
{
	if (size >= 64) {
		for (unsigned i = base / 64; i < (base + size) / 64; i++)
			b->w[i] = ~0ull;
		return;
	}
	b->w[base / 64] |= ((1ull << size) - 1) << (base % 64);
}

/* ---------------------------------------------------------------------
 * The cache: entries in a dense array, found by GUID through a guidmap
 * that holds their index; removal moves the last entry into the hole.
 */

struct lid_entry {
	uint64_t guid;		/* never 0 (GUID 0 is never valid) */
	uint16_t min, max;
	uint8_t  flags;		/* LE_*: scratch for lid_assign() */
};

enum {
	LE_PRESENT = 1,		/* some port of the fabric has this GUID */
	LE_OWNED   = 2,		/* set to that port's new range */
};

struct lid_cache {
	struct lid_entry *e;
	size_t n, cap;
	struct guidmap map;	/* GUID -> index in e */
};

struct lid_cache *lid_cache_new(void)
{
	struct lid_cache *c = calloc(1, sizeof(*c));

	if (c)
		guidmap_init(&c->map);
	return c;
}

void lid_cache_free(struct lid_cache *c)
{
	if (!c)
		return;
	free(c->e);
	guidmap_free(&c->map);
	free(c);
}

static struct lid_entry *cache_find(const struct lid_cache *c, uint64_t guid)
{
	uint32_t i = guidmap_find(&c->map, guid);

	return i == GUIDMAP_NONE ? NULL : &c->e[i];
}

/* Make room for `more` new entries without growing later. */
static int cache_reserve(struct lid_cache *c, size_t more)
{
	size_t cap = c->cap ? c->cap : 32;

	while (cap < c->n + more)
		cap *= 2;
	if (cap != c->cap) {
		struct lid_entry *e = realloc(c->e, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		c->e = e;
		c->cap = cap;
	}
	return guidmap_reserve(&c->map, c->n + more);
}

bool lid_cache_get(const struct lid_cache *c, uint64_t guid,
		   uint16_t *min, uint16_t *max)
{
	if (!c || !guid)
		return false;

	const struct lid_entry *e = cache_find(c, guid);

	if (!e)
		return false;
	if (min)
		*min = e->min;
	if (max)
		*max = e->max;
	return true;
}

/* Set an entry; room must have been reserved. */
static struct lid_entry *cache_put(struct lid_cache *c, uint64_t guid,
				   uint16_t min, uint16_t max)
{
	struct lid_entry *e = cache_find(c, guid);

	if (!e) {
		e = &c->e[c->n];
		e->guid = guid;
		e->flags = 0;
		guidmap_insert(&c->map, guid, (uint32_t)c->n++);
	}
	e->min = min;
	e->max = max;
	return e;
}

int lid_cache_set(struct lid_cache *c, uint64_t guid, uint16_t min, uint16_t max)
{
	if (!guid || !range_valid(min, max))
		return -EINVAL;

	int rc = cache_reserve(c, 1);

	if (rc < 0)
		return rc;
	cache_put(c, guid, min, max);
	return 0;
}

static void cache_del(struct lid_cache *c, uint64_t guid)
{
	uint32_t i = guidmap_remove(&c->map, guid);

	if (i == GUIDMAP_NONE)
		return;
	if (i != --c->n) {
		c->e[i] = c->e[c->n];
		guidmap_insert(&c->map, c->e[i].guid, i);	/* a replacement */
	}
}

size_t lid_cache_count(const struct lid_cache *c)
{
	return c ? c->n : 0;
}

/* ---------------------------------------------------------------------
 * The guid2lid file.
 */

static void warn_line(void (*warn)(void *arg, const char *msg), void *arg,
		      const char *path, unsigned line, const char *what)
{
	char msg[4352];

	if (!warn)
		return;
	snprintf(msg, sizeof(msg), "%s:%u: expected %s", path, line, what);
	warn(arg, msg);
}

/* A whole token of hex digits, "0x" optional, at most `digits` of them. */
static bool parse_hex(const char *s, unsigned digits, uint64_t *out)
{
	uint64_t v = 0;
	unsigned n = 0;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; *s; s++, n++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return false;
		if (v >> 60)
			return false;	/* would not fit in 64 bits */
		v = v << 4 | d;
	}
	if (n == 0)
		return false;
	if (digits < 16 && (v >> (4 * digits)))
		return false;
	*out = v;
	return true;
}

/*
 * Check one line and add its entry.  Returns 1 when an entry was added,
 * 0 when the line was blank or skipped (after a warning), -errno on
 * allocation failure.
 */
static int load_line(struct lid_cache *c, struct lid_bitmap *taken, char *buf,
		     const char *path, unsigned line,
		     void (*warn)(void *arg, const char *msg), void *arg)
{
	char *tok[4], *save = NULL, *hash = strchr(buf, '#');
	unsigned n = 0;
	uint64_t guid, min, max;
	char what[128];

	if (hash)
		*hash = '\0';
	for (char *t = strtok_r(buf, " \t\r\n\v\f", &save); t;
	     t = strtok_r(NULL, " \t\r\n\v\f", &save)) {
		if (n == 4)
			break;
		tok[n++] = t;
	}
	if (n == 0)
		return 0;
	if (n != 3) {
		warn_line(warn, arg, path, line, "3 fields: GUID MINLID MAXLID");
		return 0;
	}
	if (!parse_hex(tok[0], 16, &guid) || !parse_hex(tok[1], 4, &min) ||
	    !parse_hex(tok[2], 4, &max)) {
		warn_line(warn, arg, path, line,
			  "hex numbers: 0xGUID 0xMINLID 0xMAXLID");
		return 0;
	}
	if (guid == 0) {
		warn_line(warn, arg, path, line, "a non-zero port GUID");
		return 0;
	}
	if (min > max) {
		warn_line(warn, arg, path, line, "MINLID <= MAXLID");
		return 0;
	}
	if (min == 0 || max > LID_UNICAST_MAX) {
		warn_line(warn, arg, path, line, "unicast LIDs 0x0001-0xbfff");
		return 0;
	}
	if (!range_valid((unsigned)min, (unsigned)max)) {
		warn_line(warn, arg, path, line,
			  "a range of 1, 2, 4 ... 128 LIDs aligned to its size");
		return 0;
	}
	if (lid_cache_get(c, guid, NULL, NULL)) {
		snprintf(what, sizeof(what),
			 "each GUID once (0x%016llx appears earlier)",
			 (unsigned long long)guid);
		warn_line(warn, arg, path, line, what);
		return 0;
	}

	unsigned size = (unsigned)(max - min + 1);

	if (bm_any(taken, (unsigned)min, size)) {
		snprintf(what, sizeof(what),
			 "a LID range of its own (0x%04x-0x%04x overlaps an"
			 " earlier entry)", (unsigned)min, (unsigned)max);
		warn_line(warn, arg, path, line, what);
		return 0;
	}

	int rc = lid_cache_set(c, guid, (uint16_t)min, (uint16_t)max);

	if (rc < 0)
		return rc;
	bm_set(taken, (unsigned)min, size);
	return 1;
}

int lid_cache_load(struct lid_cache *c, const char *path,
		   void (*warn)(void *arg, const char *msg), void *arg)
{
	struct lid_bitmap *taken;
	FILE *fp;
	char *buf = NULL;
	size_t cap = 0;
	unsigned line = 0;
	int loaded = 0, rc = 0;

	fp = fopen(path, "re");
	if (!fp)
		return errno == ENOENT ? 0 : -errno;
	taken = calloc(1, sizeof(*taken));
	if (!taken) {
		fclose(fp);
		return -ENOMEM;
	}
	/* Entries already in the cache count for the overlap check. */
	for (size_t i = 0; i < c->n; i++)
		bm_set(taken, c->e[i].min,
		       (unsigned)(c->e[i].max - c->e[i].min + 1));

	errno = 0;
	while (getline(&buf, &cap, fp) >= 0) {
		rc = load_line(c, taken, buf, path, ++line, warn, arg);
		if (rc < 0)
			break;
		loaded += rc;
		rc = 0;
	}
	if (rc == 0 && ferror(fp))
		rc = errno ? -errno : -EIO;
	free(buf);
	free(taken);
	fclose(fp);
	return rc < 0 ? rc : loaded;
}

/* OpenSM's OSM_DB_MAX_LINE_LEN: its reader's fgets() buffer. */
#define OSM_DB_PIECE	1024

int lid_cache_check(const char *path, unsigned *line)
{
	char buf[OSM_DB_PIECE];
	bool want_key = true;
	unsigned n = 0;
	int rc = 0;
	FILE *fp;

	*line = 0;
	fp = fopen(path, "re");
	if (!fp)
		return errno == ENOENT ? 0 : -errno;
	errno = 0;
	while (fgets(buf, sizeof(buf), fp)) {
		n++;
		if (!want_key) {
			want_key = buf[0] == '\n';
			continue;
		}
		if (buf[0] == ' ' || buf[0] == '\t' || buf[0] == '\0') {
			*line = n;
			rc = -EBADMSG;
			break;
		}
		want_key = buf[0] == '\n';
	}
	if (rc == 0 && ferror(fp))
		rc = errno ? -errno : -EIO;
	fclose(fp);
	return rc;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct lid_entry *x = a, *y = b;

	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

struct save_arg {
	const struct lid_entry *v;
	size_t n;
};

static int write_entries(FILE *fp, const void *arg)
{
	const struct save_arg *a = arg;

	for (size_t i = 0; i < a->n; i++)
		/* OpenSM's reader wants a blank line after every entry. */
		if (fprintf(fp, "0x%016llx 0x%04x 0x%04x\n\n",
			    (unsigned long long)a->v[i].guid, a->v[i].min,
			    a->v[i].max) < 0)
			return errno ? -errno : -EIO;
	return 0;
}

/*
 * Sorted by GUID so that successive files diff well.  Every heavy sweep
 * saves the cache and most change no LID: the content is built in memory
 * and compared with the file, which is replaced (temp file in the same
 * directory, fsync, rename: a reader sees the old file or the new one,
 * never half of one) only when it differs (config/fileutil.h).
 */
int lid_cache_save(const struct lid_cache *c, const char *path)
{
	struct save_arg a = { NULL, 0 };
	struct lid_entry *v = NULL;
	int rc;

	if (c->n) {
		v = malloc(c->n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memcpy(v, c->e, c->n * sizeof(*v));
		a.n = c->n;
		qsort(v, a.n, sizeof(*v), cmp_entry);
	}
	a.v = v;
	rc = write_file_if_changed(path, write_entries, &a, 0);
	free(v);
	return rc < 0 ? rc : 0;
}

/* ---------------------------------------------------------------------
 * Assignment.
 */

/* One LID-bearing port. */
struct lport {
	uint64_t key;		/* port GUID, 0: none (not cached) */
	struct fab_port *port;
	uint32_t seq;		/* position in the model */
	uint16_t cur;		/* current LID from PortInfo, 0: none */
	uint16_t cmin, cmax;	/* cache entry, cmin 0: none */
	uint16_t lid;		/* result, 0: not yet */
	uint8_t  lmc;		/* this round's LMC: want, or less */
	uint8_t  want;		/* the policy's LMC for this port */
};

static int cmp_lport(const void *a, const void *b)
{
	const struct lport *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	/* equal GUIDs (broken hardware): keep the model's order */
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool switch_enhanced_port0(const struct fab_node *n)
{
	return n->has_switch_info && smp_switch_info_enhanced_port0(&n->si);
}

/* An upper bound on the number of LID-bearing ports. */
static size_t max_ports(const struct fabric *f)
{
	size_t cap = 0;

	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];

		cap += nd->type == NODE_TYPE_SWITCH ? 1 : nd->num_ports;
	}
	return cap;
}

/*
 * Fill `v` (max_ports() long) with the LID-bearing ports of the fabric,
 * sorted by GUID: the deterministic order in which conflicts are settled.
 * Clears lid/lmc of every port of the model.
 */
static size_t collect_ports(struct fabric *f, const struct lid_policy *pol,
			    struct lport *v)
{
	uint8_t lmc = pol->lmc;

	size_t n = 0;

	for (size_t i = 0; i < f->n_nodes; i++) {
		struct fab_node *nd = &f->nodes[i];

		for (unsigned p = 0; p <= nd->num_ports; p++) {
			nd->ports[p].lid = 0;
			nd->ports[p].lmc = 0;
		}
		/*
		 * A switch has one LID range, on port 0, keyed by port 0's
		 * GUID (the node GUID if discovery did not record one): one
		 * LID, or 2^lmc for an enhanced port 0 under lmc_esp0.
		 */
		if (nd->type == NODE_TYPE_SWITCH) {
			struct fab_port *pt = &nd->ports[0];

			v[n] = (struct lport){
				.key = pt->guid ? pt->guid : nd->guid,
				.port = pt,
				.seq = (uint32_t)n,
				.cur = pt->valid ? be16toh(pt->pi.lid) : 0,
				.want = pol->lmc_esp0 &&
					switch_enhanced_port0(nd) ? lmc : 0,
			};
			n++;
			continue;
		}
		for (unsigned p = 1; p <= nd->num_ports; p++) {
			struct fab_port *pt = &nd->ports[p];

			if (!pt->valid)
				continue;
			v[n] = (struct lport){
				.key = pt->guid,
				.port = pt,
				.seq = (uint32_t)n,
				.cur = be16toh(pt->pi.lid),
				.want = lmc,
			};
			n++;
		}
	}
	qsort(v, n, sizeof(*v), cmp_lport);
	return n;
}

/*
 * Lowest free aligned range of 2^lmc LIDs, or 0.  Nothing is freed while
 * lid_assign() runs, so the answer only moves up: `cursor` remembers
 * where the last search ended and the whole assignment scans the LID
 * space at most once per range size.
 */
static unsigned find_free(const struct lid_bitmap *used,
			  const struct lid_bitmap *avoid, unsigned lmc,
			  unsigned limit, unsigned *cursor)
{
	unsigned size = 1u << lmc;
	unsigned b = *cursor ? *cursor : size;	/* LID 0 is never valid */

	for (; b + size - 1 <= limit; b += size) {
		if (bm_any(used, b, size))
			continue;
		if (avoid && bm_any(avoid, b, size))
			continue;
		*cursor = b;
		return b;
	}
	*cursor = b;
	return 0;
}

static void take(struct lid_bitmap *used, struct lport *lp, unsigned base)
{
	lp->lid = (uint16_t)base;
	bm_set(used, base, 1u << lp->lmc);
}

/*
 * Look up every port's cache entry and mark the entries whose port is
 * here; the others are the ranges reserved for absent ports.
 */
static bool mark_present(struct lid_cache *c, struct lport *v, size_t n,
			 struct lid_bitmap *reserved)
{
	bool any = false;

	for (size_t s = 0; s < c->n; s++)
		c->e[s].flags = 0;
	for (size_t i = 0; i < n; i++) {
		struct lid_entry *e;

		if (!v[i].key)
			continue;
		e = cache_find(c, v[i].key);
		if (!e)
			continue;
		e->flags |= LE_PRESENT;
		v[i].cmin = e->min;
		v[i].cmax = e->max;
	}
	for (size_t s = 0; s < c->n; s++) {
		const struct lid_entry *e = &c->e[s];

		if (!(e->flags & LE_PRESENT)) {
			bm_set(reserved, e->min, (unsigned)(e->max - e->min + 1));
			any = true;
		}
	}
	return any;
}

/*
 * Bring the cache in line with the result: every assigned port's entry
 * becomes its range, and entries that now overlap a range in use by
 * another port (an absent port's range given away under pressure, a
 * stale entry overridden by a port's current LID) are dropped, so the
 * saved file never holds two claims on one LID.
 */
static void update_cache(struct lid_cache *c, const struct lport *v, size_t n,
			 const struct lid_bitmap *used, uint64_t *drop)
{
	size_t ndrop = 0;

	for (size_t s = 0; s < c->n; s++)
		c->e[s].flags = 0;
	for (size_t i = 0; i < n; i++) {
		if (!v[i].key || !v[i].lid)
			continue;
		cache_put(c, v[i].key, v[i].lid,
			  (uint16_t)(v[i].lid + (1u << v[i].lmc) - 1))->flags =
			LE_OWNED;
	}
	for (size_t s = 0; s < c->n; s++) {
		const struct lid_entry *e = &c->e[s];

		if (!(e->flags & LE_OWNED) &&
		    bm_any(used, e->min, (unsigned)(e->max - e->min + 1)))
			drop[ndrop++] = e->guid;
	}
	for (size_t i = 0; i < ndrop; i++)
		cache_del(c, drop[i]);
}

/* Pass 1: the cache, for every port before any current LID. */
static void pass_cache(const struct lid_cache *c, const struct lid_policy *p,
		       struct lport *v, size_t n, struct lid_bitmap *used,
		       unsigned limit, struct lid_report *r)
{
	for (size_t i = 0; c && !p->reassign && i < n; i++) {
		struct lport *lp = &v[i];

		if (lp->lid || !lp->cmin || lp->cmax > limit ||
		    (unsigned)(lp->cmax - lp->cmin + 1) != 1u << lp->lmc ||
		    bm_any(used, lp->cmin, 1u << lp->lmc))
			continue;
		take(used, lp, lp->cmin);
		r->kept_cache++;
	}
}

/* v[i]'s current LID collided with a range taken already (from the
 * cache or by a port before it): name both (only the first few; a scan
 * of the ports each). */
static void note_dup(const struct lport *v, size_t n, size_t i,
		     struct lid_report *r)
{
	const struct lport *lp = &v[i];
	unsigned size = 1u << lp->lmc;

	if (r->n_dups >= LID_REPORT_NAMES)
		return;
	for (size_t k = 0; k < n; k++) {
		const struct lport *o = &v[k];

		if (k != i && o->lid && o->lid < lp->cur + size &&
		    lp->cur < o->lid + (1u << o->lmc)) {
			r->dups[r->n_dups++] = (struct lid_dup){
				.lid = lp->cur, .moved = lp->key,
				.kept = o->key };
			return;
		}
	}
}

/*
 * Pass 2: current LIDs, lowest GUID first among ports claiming the
 * same LIDs (one whose cache entry agreed has already won above).
 * A range the cache keeps for an absent port does not stop a port
 * that is using it now; the stale entry is dropped instead.
 */
static void pass_fabric(const struct lid_policy *p, struct lport *v, size_t n,
			struct lid_bitmap *used, unsigned limit,
			struct lid_report *r)
{
	for (size_t i = 0; !p->reassign && i < n; i++) {
		struct lport *lp = &v[i];
		unsigned size = 1u << lp->lmc;

		if (lp->lid || !lp->cur)
			continue;
		if (lp->cur + size - 1 > limit || lp->cur % size) {
			r->fixed_range++;
			continue;
		}
		if (bm_any(used, lp->cur, size)) {
			r->fixed_dup++;
			note_dup(v, n, i, r);
			continue;
		}
		take(used, lp, lp->cur);
		r->kept_fabric++;
	}
}

/*
 * The highest LID every switch can forward: one below the smallest
 * LinearFDBCap (a switch forwards LIDs 0 .. cap - 1; a cap of 0 means no
 * linear table and bounds nothing), and never past the unicast space.
 */
static unsigned lid_limit(const struct fabric *f, uint64_t *guid)
{
	unsigned limit = LID_UNICAST_MAX;

	*guid = 0;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *nd = &f->nodes[i];
		unsigned cap;

		if (nd->type != NODE_TYPE_SWITCH || !nd->has_switch_info)
			continue;
		cap = be16toh(nd->si.lft_cap);
		if (cap && cap - 1 < limit) {
			limit = cap - 1;
			*guid = nd->guid;
		}
	}
	return limit;
}

/* The largest LMC <= lmc with which every port's range could fit. */
static unsigned lmc_that_fits(const struct lport *v, size_t n, unsigned lmc,
			      unsigned limit)
{
	for (; lmc > 0; lmc--) {
		uint64_t need = 0;

		for (size_t i = 0; i < n; i++)
			need += 1u << (v[i].want < lmc ? v[i].want : lmc);
		if (need <= limit)
			break;
	}
	return lmc;
}

struct round {
	struct lid_cache *c;
	const struct lid_policy *p;
	struct lport *v;
	size_t n;
	struct lid_bitmap *used;
	const struct lid_bitmap *reserved;	/* NULL: nothing reserved */
	unsigned limit;
};

/*
 * One assignment of every port with LMC at most `lmc`, from scratch.
 * Returns the number of ports left without a LID.
 */
static unsigned assign_round(const struct round *a, unsigned lmc,
			     struct lid_report *r)
{
	unsigned cur_free[LID_MAX_LMC + 1] = { 0 }, cur_any[LID_MAX_LMC + 1] = { 0 };

	memset(a->used, 0, sizeof(*a->used));
	bm_set(a->used, 0, 1);
	for (size_t i = 0; i < a->n; i++) {
		a->v[i].lid = 0;
		a->v[i].lmc = (uint8_t)(a->v[i].want < lmc ? a->v[i].want : lmc);
	}
	/* Passes 1 and 2, in the order the policy says. */
	for (int round = 0; round < 2; round++) {
		if ((round == 0) != a->p->prefer_fabric)
			pass_cache(a->c, a->p, a->v, a->n, a->used, a->limit, r);
		else
			pass_fabric(a->p, a->v, a->n, a->used, a->limit, r);
	}

	/*
	 * Pass 3: fresh ranges, largest first so that small ranges fill the
	 * gaps instead of breaking up aligned blocks; within a size, lowest
	 * GUID first.  Ranges reserved for absent ports are used only when
	 * nothing else is left.
	 */
	for (int l = (int)lmc; l >= 0; l--) {
		for (size_t i = 0; i < a->n; i++) {
			struct lport *lp = &a->v[i];
			unsigned base = 0;

			if (lp->lid || lp->lmc != l)
				continue;
			if (a->reserved)
				base = find_free(a->used, a->reserved,
						 (unsigned)l, a->limit,
						 &cur_free[l]);
			if (!base)
				base = find_free(a->used, NULL, (unsigned)l,
						 a->limit, &cur_any[l]);
			if (!base) {
				r->exhausted++;
				continue;
			}
			take(a->used, lp, base);
			r->assigned++;
		}
	}
	return r->exhausted;
}

/* The round's result into the model and the report's names. */
static void apply_round(struct fabric *f, const struct lport *v, size_t n,
			struct lid_report *r)
{
	uint16_t max_lid = 0;

	for (size_t i = 0; i < n; i++) {
		const struct lport *lp = &v[i];
		uint64_t guid = lp->key ? lp->key : lp->port->guid;

		if (!lp->lid) {
			if (r->n_without < LID_REPORT_NAMES)
				r->without[r->n_without++] = guid;
			continue;
		}
		if (lp->lmc < lp->want) {
			if (r->reduced < LID_REPORT_NAMES)
				r->reduced_guid[r->reduced] = guid;
			r->reduced++;
		}
		lp->port->lid = lp->lid;
		lp->port->lmc = lp->lmc;
		if (lp->lid + (1u << lp->lmc) - 1 > max_lid)
			max_lid = (uint16_t)(lp->lid + (1u << lp->lmc) - 1);
	}
	f->max_lid = max_lid;
}

int lid_assign(struct fabric *f, struct lid_cache *c,
	       const struct lid_policy *p, struct lid_report *r)
{
	static const struct lid_policy defaults = { .lmc = 0, .reassign = false };
	struct lid_report dummy;
	struct lid_bitmap *used, *reserved;
	struct lport *v;
	uint64_t *drop = NULL, limit_guid;
	size_t n, cap;
	bool any_reserved = false;
	unsigned limit, lmc;

	if (!p)
		p = &defaults;
	if (!r)
		r = &dummy;
	memset(r, 0, sizeof(*r));
	if (p->lmc > LID_MAX_LMC)
		return -EINVAL;

	/* Everything that can fail, before the model is touched. */
	cap = max_ports(f);
	used = calloc(2, sizeof(*used));
	v = malloc((cap ? cap : 1) * sizeof(*v));
	if (c && used && v && cache_reserve(c, cap) == 0)
		drop = malloc((c->n + cap + 1) * sizeof(*drop));
	if (!used || !v || (c && !drop)) {
		free(drop);
		free(v);
		free(used);
		return -ENOMEM;
	}
	reserved = used + 1;
	n = collect_ports(f, p, v);
	limit = lid_limit(f, &limit_guid);

	/* Ranges the cache keeps for ports that are not here today. */
	if (c && !p->reassign)
		any_reserved = mark_present(c, v, n, reserved);

	/*
	 * LIDs past the limit would be dropped by some switch: when the
	 * policy's LMC cannot fit below it, every port gets the largest LMC
	 * that does (the same for all, so that what a port gets does not
	 * depend on its GUID), and ports are left without a LID only when
	 * even one LID each does not fit.
	 */
	struct round a = { c, p, v, n, used, any_reserved ? reserved : NULL,
			   limit };

	lmc = lmc_that_fits(v, n, p->lmc, limit);
	for (;;) {
		memset(r, 0, sizeof(*r));
		if (!assign_round(&a, lmc, r) || lmc == 0)
			break;
		lmc--;
	}
	r->limit = (uint16_t)limit;
	r->limit_switch = limit_guid;
	r->lmc = (uint8_t)lmc;
	apply_round(f, v, n, r);
	if (c)
		update_cache(c, v, n, used, drop);
	free(v);
	free(drop);
	free(used);
	return r->exhausted ? -ENOSPC : 0;
}

/* ---------------------------------------------------------------------
 * Sequential LIDs for offline tools and tests (see lid.h).
 */

static void set_port_lid(struct fab_port *p, uint16_t lid, uint8_t lmc)
{
	p->lid = lid;
	p->lmc = lmc;
	p->pi.lid = htobe16(lid);
	pi_set_lmc(&p->pi, lmc);
}

int lid_assign_sequential(struct fabric *f, unsigned lmc)
{
	unsigned size = 1u << lmc, lid = 1;

	for (size_t i = 0; i < f->n_nodes; i++) {
		struct fab_node *n = &f->nodes[i];

		if (n->type != NODE_TYPE_SWITCH)
			continue;
		if (lid > LID_UNICAST_MAX)
			return -ENOSPC;
		set_port_lid(&n->ports[0], (uint16_t)lid++, 0);
	}
	for (size_t i = 0; i < f->n_nodes; i++) {
		struct fab_node *n = &f->nodes[i];

		if (n->type == NODE_TYPE_SWITCH)
			continue;
		for (unsigned p = 1; p <= n->num_ports; p++) {
			if (!n->ports[p].valid)
				continue;
			lid = (lid + size - 1) & ~(size - 1);
			if (lid + size - 1 > LID_UNICAST_MAX)
				return -ENOSPC;
			set_port_lid(&n->ports[p], (uint16_t)lid, (uint8_t)lmc);
			lid += size;
		}
	}
	f->max_lid = (uint16_t)(lid - 1);
	return 0;
}
