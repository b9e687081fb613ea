/*
 * render.c - marked blocks, the udev renaming rules, rdma.conf, the
 * memlock limits and the in-place edit of /etc/nfs.conf.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tools/ibhost/render.h"

static const char block_begin_line[] =
	BLOCK_BEGIN ": managed by ibhost(8); \"ibhost apply\" rewrites "
	"this block";

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool blank(const char *s)
{
	for (; *s; s++)
		if (*s != ' ' && *s != '\t')
			return false;
	return true;
}

bool is_owned(const char *text)
{
	return text && starts_with(text, OWNED_HEADER);
}

/* Indexes of the block's first and last line; -EBADMSG if malformed. */
static int find_block(const struct lines *l, size_t *begin, size_t *end,
		      int *bad_line)
{
	*begin = *end = SIZE_MAX;
	for (size_t i = 0; i < l->n; i++) {
		if (starts_with(l->v[i], BLOCK_BEGIN)) {
			if (*begin != SIZE_MAX) {
				*bad_line = (int)i + 1;
				return -EBADMSG;
			}
			*begin = i;
		} else if (starts_with(l->v[i], BLOCK_END)) {
			if (*begin == SIZE_MAX || *end != SIZE_MAX) {
				*bad_line = (int)i + 1;
				return -EBADMSG;
			}
			*end = i;
		}
	}
	if (*begin != SIZE_MAX && *end == SIZE_MAX) {
		*bad_line = (int)*begin + 1;
		return -EBADMSG;
	}
	return 0;
}

int block_find(const char *old)
{
	struct lines l;
	size_t begin, end;
	int bad = 0, rc;

	if (!old)
		return 0;
	lines_split(&l, old);
	rc = find_block(&l, &begin, &end, &bad);
	lines_free(&l);
	if (rc)
		return bad;
	return begin == SIZE_MAX ? 0 : (int)begin + 1;
}

static void add_lines(struct sbuf *b, const struct lines *l, size_t from,
		      size_t to)
{
	for (size_t i = from; i < to; i++) {
		sb_add(b, l->v[i]);
		if (i + 1 < l->n || l->final_newline)
			sb_putc(b, '\n');
	}
}

static void add_block(struct sbuf *b, const char *body)
{
	sb_printf(b, "%s\n%s%s\n", block_begin_line, body, BLOCK_END);
}

int block_merge(const char *old, const char *body, char **out,
		int *bad_line)
{
	struct sbuf b = { 0 };
	struct lines l;
	size_t begin, end;
	int rc;

	*out = NULL;
	lines_split(&l, old ? old : "");
	rc = find_block(&l, &begin, &end, bad_line);
	if (rc)
		goto done;
	if (begin != SIZE_MAX) {
		size_t keep = begin;

		/* Removing the last thing in the file: take its separator. */
		if (!body && end + 1 == l.n && keep > 0 && blank(l.v[keep - 1]))
			keep--;
		add_lines(&b, &l, 0, keep);
		if (body)
			add_block(&b, body);
		add_lines(&b, &l, end + 1, l.n);
		*out = b.len ? sb_steal(&b) : NULL;
	} else if (body) {
		if (l.n) {
			add_lines(&b, &l, 0, l.n);
			if (!l.final_newline)
				sb_putc(&b, '\n');
			if (!blank(l.v[l.n - 1]))
				sb_putc(&b, '\n');
		}
		add_block(&b, body);
		*out = sb_steal(&b);
	} else if (old) {
		*out = xstrdup(old);
	}
done:
	sb_free(&b);
	lines_free(&l);
	return rc;
}

/* ---------------------------------------------------------------------
 * Block bodies
 */

void guid_hwaddr(char *buf, size_t len, uint64_t guid)
{
	snprintf(buf, len, "%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x",
		 (unsigned)(guid >> 56) & 0xff, (unsigned)(guid >> 48) & 0xff,
		 (unsigned)(guid >> 40) & 0xff, (unsigned)(guid >> 32) & 0xff,
		 (unsigned)(guid >> 24) & 0xff, (unsigned)(guid >> 16) & 0xff,
		 (unsigned)(guid >> 8) & 0xff, (unsigned)guid & 0xff);
}

/*
 * The IPoIB hardware address is 4 bytes of flags and QPN, the 8-byte
 * subnet prefix and the 8-byte port GUID; only the GUID is stable, so
 * the rule matches "?*" followed by it (RHEL 8 guide, section 4.1).
 */
char *render_udev(const struct ibh_conf *c)
{
	struct sbuf b = { 0 };
	char hw[32];

	for (size_t i = 0; i < c->nipoib; i++) {
		const struct ipoib_conf *ip = &c->ipoib[i];

		if (ip->child || !ip->guid)
			continue;
		guid_hwaddr(hw, sizeof(hw), ip->guid);
		sb_printf(&b, "ACTION==\"add\", SUBSYSTEM==\"net\", "
			  "DRIVERS==\"?*\", ATTR{type}==\"32\", "
			  "ATTR{address}==\"?*%s\", NAME=\"%s\"\n",
			  hw, ip->name);
	}
	return b.len ? sb_steal(&b) : NULL;
}

/* One module per line, in the order rdma-core's rdma.conf lists them. */
char *render_modules(const struct ibh_conf *c)
{
	struct sbuf b = { 0 };

	if (!c->modules.present)
		return NULL;
	for (unsigned i = 0; i < RDMA_MODULE_COUNT; i++)
		if (c->modules.mask & (1u << i))
			sb_printf(&b, "%s\n", rdma_modules[i]);
	return sb_steal(&b);
}

char *render_limits(const struct ibh_conf *c)
{
	const struct limits_conf *l = &c->limits;
	struct sbuf b = { 0 };
	char dom[40], val[32];

	if (!l->present)
		return NULL;
	snprintf(dom, sizeof(dom), "@%s", l->group);
	if (l->memlock_kib == IBH_MEMLOCK_UNLIMITED)
		snprintf(val, sizeof(val), "unlimited");
	else
		snprintf(val, sizeof(val), "%" PRIu64, l->memlock_kib);
	sb_printf(&b, "%-15s %-7s %-15s %s\n", dom, "soft", "memlock", val);
	sb_printf(&b, "%-15s %-7s %-15s %s\n", dom, "hard", "memlock", val);
	return sb_steal(&b);
}

/* ---------------------------------------------------------------------
 * /etc/nfs.conf: key by key in [nfsd], the user's lines left as they are
 */

struct text {
	char	**v;
	size_t	  n;
};

static void text_insert(struct text *t, size_t at, char *line)
{
	t->v = xrealloc(t->v, (t->n + 1) * sizeof(*t->v));
	memmove(t->v + at + 1, t->v + at, (t->n - at) * sizeof(*t->v));
	t->v[at] = line;
	t->n++;
}

/* "[ nfsd ]" -> true for name "nfsd"; *hdr tells whether it is a header. */
static bool section_is(const char *line, const char *name, bool *hdr)
{
	char buf[64], *s;
	size_t n;

	snprintf(buf, sizeof(buf), "%s", line);
	s = trim(buf);
	n = strlen(s);
	*hdr = n >= 2 && s[0] == '[' && s[n - 1] == ']';
	if (!*hdr)
		return false;
	s[n - 1] = '\0';
	return str_ieq(trim(s + 1), name);
}

/*
 * Whether line is "key = value" (or "# key = value" when commented is
 * set) for this key; *val then points at the value in line.
 */
static bool line_key(const char *line, const char *key, bool commented,
		     const char **val)
{
	const char *p = line, *eq;
	size_t n = strlen(key);

	while (*p == ' ' || *p == '\t')
		p++;
	if (commented) {
		if (*p != '#' && *p != ';')
			return false;
		while (*p == '#' || *p == ';' || *p == ' ' || *p == '\t')
			p++;
	} else if (*p == '#' || *p == ';') {
		return false;
	}
	if (strncasecmp(p, key, n))
		return false;
	eq = p + n;
	while (*eq == ' ' || *eq == '\t')
		eq++;
	if (*eq != '=')
		return false;
	eq++;
	while (*eq == ' ' || *eq == '\t')
		eq++;
	*val = eq;
	return true;
}

static bool nfs_bool(const char *s, bool *v)
{
	static const char *const yes[] = { "y", "yes", "true", "on", "1" };
	static const char *const no[] = { "n", "no", "false", "off", "0" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (str_ieq(s, yes[i])) {
			*v = true;
			return true;
		}
		if (str_ieq(s, no[i])) {
			*v = false;
			return true;
		}
	}
	return false;
}

/* "y" and "yes" are the same boolean: leave the user's spelling. */
static bool same_value(const char *have, const char *want, bool is_bool)
{
	char buf[128];
	bool a, b;

	snprintf(buf, sizeof(buf), "%s", have);
	have = trim(buf);
	if (is_bool && nfs_bool(have, &a) && nfs_bool(want, &b))
		return a == b;
	return !strcmp(have, want);
}

/* A live "key = value" line: not blank, a comment or a header. */
static bool is_setting(const char *line)
{
	const char *p = line + strspn(line, " \t");

	return *p && *p != '#' && *p != ';' && *p != '[' && strchr(p, '=');
}

/*
 * Set key in [nfsd]: rewrite the value of every live line for it; if
 * there is none, add "key=value" under a commented-out "# key=..." (as
 * distributions ship nfs.conf), else after the last setting of the
 * first [nfsd] section, else in a new [nfsd] section at the end.
 */
static void nfs_set(struct text *t, const char *key, const char *value,
		    bool is_bool)
{
	size_t commented = SIZE_MAX, at = SIZE_MAX;
	unsigned nsect = 0;
	bool in = false, live = false, hdr;
	const char *val;

	for (size_t i = 0; i < t->n; i++) {
		bool is = section_is(t->v[i], "nfsd", &hdr);

		if (hdr) {
			in = is;
			if (is && nsect++ == 0)
				at = i + 1;
			continue;
		}
		if (!in)
			continue;
		if (line_key(t->v[i], key, false, &val)) {
			char *old = t->v[i];

			live = true;
			if (same_value(val, value, is_bool))
				continue;
			t->v[i] = xasprintf("%.*s%s", (int)(val - old), old,
					    value);
			free(old);
		} else if (commented == SIZE_MAX &&
			   line_key(t->v[i], key, true, &val)) {
			commented = i;
		}
		if (nsect == 1 && is_setting(t->v[i]))
			at = i + 1;
	}
	if (live)
		return;
	if (commented != SIZE_MAX) {
		text_insert(t, commented + 1, xasprintf("%s=%s", key, value));
	} else if (at != SIZE_MAX) {
		text_insert(t, at, xasprintf("%s=%s", key, value));
	} else {
		if (t->n && !blank(t->v[t->n - 1]))
			text_insert(t, t->n, xstrdup(""));
		text_insert(t, t->n, xstrdup("[nfsd]"));
		text_insert(t, t->n, xasprintf("%s=%s", key, value));
	}
}

char *render_nfs(const struct ibh_conf *c, const char *old)
{
	struct text t = { 0 };
	struct sbuf b = { 0 };
	struct lines l;
	char port[16];

	if (!c->nfs.present)
		return NULL;
	lines_split(&l, old ? old : "");
	t.v = l.v;
	t.n = l.n;
	snprintf(port, sizeof(port), "%u", c->nfs.port);
	nfs_set(&t, "rdma", c->nfs.rdma ? "y" : "n", true);
	nfs_set(&t, "rdma-port", port, false);
	for (size_t i = 0; i < t.n; i++) {
		sb_add(&b, t.v[i]);
		if (i + 1 < t.n || l.final_newline || t.n != l.n)
			sb_putc(&b, '\n');
		free(t.v[i]);
	}
	free(t.v);
	return sb_steal(&b);
}
