/*
 * conf.c - OpenSM's torus-2QoS configuration (torus_config, the format of
 * torus-2QoS.conf(5)) and what the torus engine takes from it: the grid
 * (radix and ring or line per dimension) the wiring must match, and the
 * seed that fixes the axes and the origin, hence where the datelines lie
 * (so the SLs of paths stay those torus-2QoS would give).
 *
 * Keywords (one a line; '#' starts a comment; tokens after the ones a
 * keyword takes are ignored, as OpenSM does):
 *   torus|mesh X[m|t] Y[m|t] Z[m|t]   radices; 1: a dimension not there
 *                                     (none: the grid as found)
 *   xp_link|xm_link|yp_link|... A B   seed: the link A -> B goes +x, -x...
 *   x_dateline|y_dateline|z_dateline N  moves the origin N from A
 *   next_seed                         the following keywords: a new seed
 *   portgroup_max_ports N, max_changes N, port_order P...  read, unused
 *                                     (ibsm has no such limits; its port
 *                                     spreading is its own)
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"
#include "routing/torus/torus.h"
#include "routing/torus_conf.h"

#define SEP " \t\r\n"

static bool num(const char *s, long long lo, long long hi, long long *v)
{
	char *end;

	if (!s)
		return false;
	errno = 0;
	*v = strtoll(s, &end, 0);
	return !errno && end != s && !*end && *v >= lo && *v <= hi;
}

static bool guid(const char *s, uint64_t *g)
{
	char *end;

	if (!s || *s == '-')
		return false;
	errno = 0;
	*g = strtoull(s, &end, 0);
	return !errno && end != s && !*end && *g;
}

/* "8", "8t", "4m": a radix and whether it is a ring */
static bool radix(const char *s, unsigned *n, bool *wrap, bool dflt)
{
	char buf[16];
	size_t len = s ? strlen(s) : 0;
	long long v;

	if (!len || len >= sizeof(buf))
		return false;
	memcpy(buf, s, len + 1);
	*wrap = dflt;
	if (strchr("mMtT", buf[len - 1])) {
		*wrap = buf[len - 1] == 't' || buf[len - 1] == 'T';
		buf[len - 1] = '\0';
	}
	if (!num(buf, 1, 255, &v))
		return false;
	*n = (unsigned)v;
	return true;
}

static const char *const link_kw[TORUS_DIRS] = {
	"xp_link", "xm_link", "yp_link", "ym_link", "zp_link", "zm_link",
};
static const char *const dateline_kw[TORUS_MAX_DIMS] = {
	"x_dateline", "y_dateline", "z_dateline",
};

/* One line's keyword; NULL or the reason it is wrong. */
static const char *keyword(struct torus_conf *c, char *kw)
{
	struct torus_seed *s = &c->seed[c->n_seeds ? c->n_seeds - 1 : 0];
	long long v;

	if (!strcmp(kw, "torus") || !strcmp(kw, "mesh")) {
		for (unsigned d = 0; d < TORUS_MAX_DIMS; d++)
			if (!radix(strtok(NULL, SEP), &c->radix[d], &c->ring[d],
				   kw[0] == 't'))
				return "expected three radices (1-255, "
				       "with m or t for a line or a ring)";
		c->grid = true;
		return NULL;
	}
	if (!strcmp(kw, "next_seed")) {
		if (c->n_seeds >= TORUS_CONF_SEEDS)
			return "too many seeds";
		c->n_seeds++;
		return NULL;
	}
	if (!strcmp(kw, "portgroup_max_ports") || !strcmp(kw, "max_changes"))
		return num(strtok(NULL, SEP), 0, UINT32_MAX, &v) ? NULL :
		       "expected a number";
	if (!strcmp(kw, "port_order")) {
		for (char *p = strtok(NULL, SEP); p; p = strtok(NULL, SEP))
			if (!num(p, 0, 255, &v))
				return "expected port numbers (0-255)";
		return NULL;
	}
	if (!c->n_seeds)
		c->n_seeds = 1;
	s = &c->seed[c->n_seeds - 1];
	for (unsigned k = 0; k < TORUS_DIRS; k++) {
		uint64_t a, b;

		if (strcmp(kw, link_kw[k]))
			continue;
		if (!guid(strtok(NULL, SEP), &a) || !guid(strtok(NULL, SEP), &b))
			return "expected two switch GUIDs";
		if (s->from && s->from != a)
			return "every link of a seed must start at the same "
			       "switch (next_seed starts another seed)";
		s->from = a;
		s->to[k] = b;
		return NULL;
	}
	for (unsigned d = 0; d < TORUS_MAX_DIMS; d++) {
		if (strcmp(kw, dateline_kw[d]))
			continue;
		if (!num(strtok(NULL, SEP), -255, 255, &v))
			return "expected a position (-255 to 255)";
		s->dateline[d] = (int)v;
		return NULL;
	}
	return "unknown keyword";
}

int torus_conf_parse(struct torus_conf *c, const char *text, size_t len,
		     const char *name, char *err, size_t errlen)
{
	char line[1024];
	size_t pos = 0;
	unsigned no = 0;

	memset(c, 0, sizeof(*c));
	while (pos < len) {
		size_t n = 0;
		const char *why;
		char *kw, *hash;

		no++;
		while (pos < len && text[pos] != '\n') {
			if (n + 1 >= sizeof(line)) {
				routing_fmt(err, errlen, "%s:%u: line longer "
					    "than %zu characters", name, no,
					    sizeof(line) - 1);
				return -EINVAL;
			}
			line[n++] = text[pos++];
		}
		pos++;
		line[n] = '\0';
		if (memchr(line, '\0', n)) {
			routing_fmt(err, errlen, "%s:%u: a NUL byte", name, no);
			return -EINVAL;
		}
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		if (!(kw = strtok(line, SEP)))
			continue;
		if ((why = keyword(c, kw))) {
			routing_fmt(err, errlen, "%s:%u: %s: %s", name, no, kw,
				    why);
			return -EINVAL;
		}
	}
	/* no torus or mesh line (an empty file, as OpenSM reads it too):
	 * the grid as found, the seeds (if any) still count */
	for (unsigned i = 0; i < c->n_seeds; i++)
		if (!c->seed[i].from) {
			routing_fmt(err, errlen, "%s: seed %u has no link "
				    "(xp_link ... zm_link)", name, i + 1);
			return -EINVAL;
		}
	return 0;
}

int torus_conf_load(struct torus_conf *c, const char *path, char *err,
		    size_t errlen)
{
	FILE *fp = fopen(path, "r");
	char *buf;
	size_t n;
	int rc;

	if (!fp) {
		rc = -errno;
		routing_fmt(err, errlen, "%s: cannot open: %s", path,
			    strerror(-rc));
		return rc;
	}
	buf = malloc(TORUS_CONF_MAX + 1);
	if (!buf) {
		fclose(fp);
		return -ENOMEM;
	}
	n = fread(buf, 1, TORUS_CONF_MAX + 1, fp);
	fclose(fp);
	if (n > TORUS_CONF_MAX) {
		routing_fmt(err, errlen, "%s: larger than %u bytes", path,
			    TORUS_CONF_MAX);
		free(buf);
		return -EFBIG;
	}
	rc = torus_conf_parse(c, buf, n, path, err, errlen);
	free(buf);
	return rc;
}

/* Switch index of node GUID g, -1: not in the grid. */
static int32_t by_guid(const struct torus *t, uint64_t g)
{
	for (uint32_t v = 0; v < t->g.S; v++)
		if (fabric_node(t->g.f, t->g.sw_node[v])->guid == g)
			return (int32_t)v;
	return -1;
}

/* The direction of the link from switch v to node GUID g, -1: none. */
static int dir_to(const struct torus *t, uint32_t v, uint64_t g)
{
	const struct fab_node *n = fabric_node(t->g.f, t->g.sw_node[v]);

	for (int k = 0; k < (int)(2 * t->dims); k++)
		for (unsigned i = 0; i < t->dir[v][k].n; i++) {
			const struct fab_port *p = &n->ports[t->dir[v][k].port[i]];

			if (fabric_node(t->g.f, p->peer_node)->guid == g)
				return k;
		}
	return -1;
}

/*
 * The seed's axes: for the configured dimension i (those of radix > 1, in
 * x, y, z order) the grid dimension sd[i] and whether its + is the grid's
 * - (flip[i]).  A dimension the seed names no link for takes the one grid
 * dimension left.  0, or -ENOENT with the reason.
 */
static int seed_axes(const struct torus *t, const struct torus_seed *s,
		     const unsigned *cd, unsigned *sd, bool *flip, char *err,
		     size_t errlen)
{
	int32_t v = by_guid(t, s->from);
	unsigned used = 0, open = 0;

	if (v < 0) {
		routing_fmt(err, errlen, "seed switch 0x%016" PRIx64 " is not "
			    "in the fabric", s->from);
		return -ENOENT;
	}
	for (unsigned i = 0; i < t->dims; i++) {
		unsigned k = 2 * cd[i];
		int kk = -1;

		if (s->to[k])
			kk = dir_to(t, (uint32_t)v, s->to[k]);
		else if (s->to[k + 1] && (kk = dir_to(t, (uint32_t)v,
						     s->to[k + 1])) >= 0)
			kk ^= 1;
		if (kk < 0 && (s->to[k] || s->to[k + 1])) {
			routing_fmt(err, errlen, "seed switch 0x%016" PRIx64
				    ": no link to the %c switch it names",
				    s->from, "xyz"[cd[i]]);
			return -ENOENT;
		}
		sd[i] = TORUS_MAX_DIMS;
		flip[i] = kk >= 0 && (kk & 1);
		if (kk < 0) {
			open |= 1u << i;
			continue;
		}
		sd[i] = (unsigned)kk / 2;
		if (used & 1u << sd[i]) {
			routing_fmt(err, errlen, "seed links of switch 0x%016"
				    PRIx64 " name one dimension twice",
				    s->from);
			return -ENOENT;
		}
		used |= 1u << sd[i];
	}
	/* the dimensions the seed names no link for: the grid's left, in
	 * order, as found */
	for (unsigned i = 0, d = 0; i < t->dims; i++) {
		if (!(open & 1u << i))
			continue;
		while (used & 1u << d)
			d++;
		sd[i] = d;
		used |= 1u << d;
	}
	return 0;
}

/* Lay the grid out on the seed's axes and origin (a ring's; a line
 * keeps its ends and takes the seed's direction). */
static int remap(struct torus *t, const struct torus_seed *s,
		 const unsigned *cd, const unsigned *sd, const bool *flip)
{
	uint32_t S = t->g.S, from = (uint32_t)by_guid(t, s->from);
	uint16_t (*coord)[TORUS_MAX_DIMS] = calloc(S + 1, sizeof(*coord));
	struct torus_dirports (*dir)[TORUS_DIRS] = calloc(S + 1, sizeof(*dir));
	unsigned size[TORUS_MAX_DIMS] = { 0 };
	bool wrap[TORUS_MAX_DIMS] = { false };

	if (!coord || !dir) {
		free(coord);
		free(dir);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < t->dims; i++) {
		size[i] = t->size[sd[i]];
		wrap[i] = t->wrap[sd[i]];
	}
	for (uint32_t v = 0; v < S; v++)
		for (unsigned i = 0; i < t->dims; i++) {
			long n = (long)size[i], a = t->coord[v][sd[i]];
			long o = t->coord[from][sd[i]];
			long x = (flip[i] ? o - a : a - o) -
				 s->dateline[cd[i]];

			/* a line keeps its ends: only its direction */
			if (!wrap[i])
				x = flip[i] ? n - 1 - a : a;

			coord[v][i] = (uint16_t)(((x % n) + n) % n);
			for (unsigned b = 0; b < 2; b++)
				dir[v][2 * i + (b ^ flip[i])] =
					t->dir[v][2 * sd[i] + b];
		}
	memcpy(t->size, size, sizeof(size));
	memcpy(t->wrap, wrap, sizeof(wrap));
	free(t->coord);
	free(t->dir);
	t->coord = coord;
	t->dir = dir;
	for (uint32_t x = 0; x < t->cells; x++)
		t->at[x] = -1;
	for (uint32_t v = 0; v < S; v++)
		t->at[torus_cell(t, t->coord[v])] = (int32_t)v;
	return 0;
}

int torus_conf_apply(struct torus *t, const struct torus_conf *c, char *err,
		     size_t errlen)
{
	unsigned cd[TORUS_MAX_DIMS], n = 0, sd[TORUS_MAX_DIMS];
	bool flip[TORUS_MAX_DIMS];
	int rc = -ENOENT;
	unsigned seed = 0;

	for (unsigned d = 0; d < TORUS_MAX_DIMS; d++)
		if (c->grid ? c->radix[d] > 1 : d < t->dims)
			cd[n++] = d;
	if (n != t->dims) {
		routing_fmt(err, errlen, "torus_config names a %uD grid, the "
			    "fabric is %uD", n, t->dims);
		return -ENOENT;
	}
	for (seed = 0; seed < c->n_seeds; seed++)
		if (!(rc = seed_axes(t, &c->seed[seed], cd, sd, flip, err,
				     errlen)))
			break;
	if (!c->n_seeds) {
		/* no seed: the grid as found, checked against the radices */
		for (unsigned i = 0; i < n; i++) {
			sd[i] = i;
			flip[i] = false;
		}
		rc = 0;
	}
	if (rc)
		return rc;
	for (unsigned i = 0; i < n && c->grid; i++)
		if (t->size[sd[i]] != c->radix[cd[i]] ||
		    t->wrap[sd[i]] != c->ring[cd[i]]) {
			routing_fmt(err, errlen, "torus_config: %c is a %s of "
				    "%u, the fabric has a %s of %u there",
				    "xyz"[cd[i]], c->ring[cd[i]] ? "ring" :
				    "line", c->radix[cd[i]], t->wrap[sd[i]] ?
				    "ring" : "line", t->size[sd[i]]);
			return -ENOENT;
		}
	if (!c->n_seeds)
		return 0;
	return remap(t, &c->seed[seed], cd, sd, flip);
}
