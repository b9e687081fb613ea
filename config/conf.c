/*
 * conf.c - values of the keys of config/keys.c: checking, comparing,
 * applying to struct sm_config and writing the file back in OpenSM's
 * format.  The file is read by config/read.c.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/conf.h"
#include "config/qos_keys.h"
#include "config/listen.h"
#include "config/fileutil.h"
#include "routing/routing.h"
#include "config/limits.h"
#include "config/sm_config.h"

void cfg_msgs_add(struct cfg_msgs *m, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	char **n;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	n = realloc(m->msg, (m->n + 1) * sizeof(*n));
	if (!n) {
		free(s);
		return;
	}
	m->msg = n;
	m->msg[m->n++] = s;
}

void cfg_msgs_free(struct cfg_msgs *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->msg[i]);
	free(m->msg);
	m->msg = NULL;
	m->n = 0;
}

void cfg_init(struct cfg *c)
{
	size_t n;

	cfg_keys(&n);
	memset(c, 0, sizeof(*c));
	c->v = calloc(n, sizeof(*c->v));
	if (!c->v)
		abort();	/* a few KB at start */
}

void cfg_free(struct cfg *c)
{
	size_t n;

	cfg_keys(&n);
	if (c->v)
		for (size_t i = 0; i < n; i++)
			free(c->v[i].val);
	free(c->v);
	free(c->file);
	cfg_msgs_free(&c->errors);
	cfg_msgs_free(&c->unknown);
	cfg_msgs_free(&c->warnings);
	memset(c, 0, sizeof(*c));
}

const char *cfg_get(const struct cfg *c, size_t i)
{
	return c->v[i].val ? c->v[i].val : cfg_keys(NULL)[i].def;
}

/* ------------------------------------------------------------ values */

static void words_list(const char *words, char *buf, size_t len)
{
	size_t n = 0, commas = 0;
	const char *w;

	for (w = words; *w; w++)
		commas += *w == ',';
	buf[0] = '\0';
	for (w = words; *w && n + 8 < len; w++) {
		if (*w != ',') {
			buf[n++] = *w;
			continue;
		}
		commas--;
		n += (size_t)snprintf(buf + n, len - n, commas ? ", " : " or ");
	}
	buf[n < len ? n : len - 1] = '\0';
}

void cfg_expected(const struct cfg_key *k, char *buf, size_t len)
{
	char w[128];

	switch (k->type) {
	case CFG_BOOL:
		snprintf(buf, len, "TRUE or FALSE");
		break;
	case CFG_INT:
		snprintf(buf, len, "an integer %.15g-%.15g", k->min, k->max);
		break;
	case CFG_REAL:
		snprintf(buf, len, "a number %.15g-%.15g", k->min, k->max);
		break;
	case CFG_U64:
		snprintf(buf, len, "a 64-bit number such as 0x0000000000000001");
		break;
	case CFG_GUID:
		snprintf(buf, len, "a port GUID such as 0x0002c90300001234");
		break;
	case CFG_ENUM:
		words_list(k->words, w, sizeof(w));
		snprintf(buf, len, "%s", w);
		break;
	case CFG_PATH:
	case CFG_DIR:
		snprintf(buf, len, "a file name");
		break;
	case CFG_STR:
		snprintf(buf, len, "a value");
		break;
	}
}

static bool is_null(const char *v)
{
	return !strcmp(v, "(null)");
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 0);
	return errno || *end ? -EINVAL : 0;
}

static int parse_int(const char *s, double lo, double hi, long long *out)
{
	char *end;

	/* "-0" is in 0..N, but the key is applied as unsigned: a minus
	 * sign only where the range has negatives */
	if (!*s || *s == '+' || isspace((unsigned char)*s) ||
	    (*s == '-' && lo >= 0))
		return -EINVAL;
	errno = 0;
	*out = strtoll(s, &end, 0);
	if (errno || *end || (double)*out < lo || (double)*out > hi)
		return -EINVAL;
	return 0;
}

static int check_engines(const char *val)
{
	char e[160];

	return routing_check_list(val, e, sizeof(e));
}

int cfg_check_value(const struct cfg_key *k, const char *val, char *err,
		    size_t errlen)
{
	uint64_t u;
	long long ll;
	int rc = 0;

	if (k->field == F_LIMIT) {
		struct sm_config scratch;
		char e[160];

		memset(&scratch, 0, sizeof(scratch));
		rc = cfg_limit_parse(&scratch, k, val, e, sizeof(e));
		if (rc < 0) {
			/* "--name val: expected ..." without its option part */
			const char *x = strstr(e, ": expected ");
			snprintf(err, errlen, "%s", x ? x + 11 : e);
		}
		return rc;
	}
	switch (k->type) {
	case CFG_BOOL:
		rc = strcmp(val, "TRUE") && strcmp(val, "FALSE") ? -EINVAL : 0;
		break;
	case CFG_INT:
		rc = parse_int(val, k->min, k->max, &ll);
		break;
	case CFG_REAL: {
		char *end;
		double d = strtod(val, &end);
		rc = !*val || *end || !isfinite(d) || d < k->min || d > k->max ?
		     -EINVAL : 0;
		break;
	}
	case CFG_U64:
		rc = parse_u64(val, &u);
		break;
	case CFG_GUID:
		rc = parse_u64(val, &u);
		break;
	case CFG_ENUM: {
		size_t n = strlen(val);
		const char *w = k->words;

		rc = -EINVAL;
		while (n && *w) {
			size_t l = strcspn(w, ",");
			if (l == n && !strncmp(w, val, n)) {
				rc = 0;
				break;
			}
			w += l + (w[l] == ',');
		}
		break;
	}
	case CFG_STR:
	case CFG_PATH:
	case CFG_DIR:
		rc = *val ? 0 : -EINVAL;
		if (!rc && !strcmp(k->name, "routing_engine") && !is_null(val))
			rc = check_engines(val);
		if (!rc && !is_null(val)) {
			int q = qos_check_key(k->name, val, err, errlen);

			if (q < 0)
				return q;
		}
		if (!rc && !strcmp(k->name, "metrics_listen") && !is_null(val)) {
			struct sockaddr_storage ss;
			socklen_t sl;

			if (cfg_parse_listen(val, &ss, &sl) < 0) {
				snprintf(err, errlen, "%s", CFG_LISTEN_EXPECTED);
				return -EINVAL;
			}
		}
		break;
	}
	if (rc < 0) {
		if (!strcmp(k->name, "routing_engine"))
			snprintf(err, errlen, "a comma list of routing engines"
				 " (ibsm(8) lists them)");
		else
			cfg_expected(k, err, errlen);
	}
	return rc;
}

int cfg_set(struct cfg *c, size_t i, const char *val, enum cfg_src src,
	    unsigned line, char *err, size_t errlen)
{
	const struct cfg_key *k = &cfg_keys(NULL)[i];
	char *dup;
	int rc = cfg_check_value(k, val, err, errlen);

	if (rc < 0)
		return rc;
	dup = strdup(val);
	if (!dup)
		return -ENOMEM;
	free(c->v[i].val);
	c->v[i] = (struct cfg_value){ dup, src, line };
	return 0;
}

/* ------------------------------------------------------------ reading */

/* cfg_read_text, cfg_read_file: config/read.c */

const char *cfg_default_file(const char *const *paths)
{
	/* RHEL builds OpenSM with /etc/rdma, upstream and Debian with
	 * /etc/opensm; a host has one or the other. */
	static const char *const builtin[] = { CFG_DEFAULT_FILES, NULL };
	struct stat st;

	for (paths = paths ? paths : builtin; *paths; paths++)
		if (stat(*paths, &st) == 0 && S_ISREG(st.st_mode))
			return *paths;
	return NULL;
}

/* ------------------------------------------------------------ applying */

/* The environment variable that overrides key i's default, if any. */
static const char *env_of(const struct cfg *c, size_t i)
{
	const struct cfg_key *k = &cfg_keys(NULL)[i];
	const char *env = NULL, *v;

	/* OpenSM's variables move these two when the file does not. */
	if (!strcmp(k->name, "dump_files_dir"))
		env = "OSM_TMP_DIR";
	else if (!strcmp(k->name, "cache_dir"))
		env = "OSM_CACHE_DIR";
	if (env && c->v[i].src == CFG_SRC_DEFAULT && (v = getenv(env)) && *v)
		return env;
	return NULL;
}

const char *cfg_effective(const struct cfg *c, size_t i)
{
	const char *env = env_of(c, i);

	return env ? getenv(env) : cfg_get(c, i);
}

void cfg_source(const struct cfg *c, size_t i, char *buf, size_t len)
{
	const char *env = env_of(c, i);

	if (env)
		snprintf(buf, len, "environment %s", env);
	else if (c->v[i].src == CFG_SRC_FILE)
		snprintf(buf, len, "%s:%u", c->file ? c->file : "?",
			 c->v[i].line);
	else if (c->v[i].src == CFG_SRC_CMDLINE)
		snprintf(buf, len, "command line");
	else
		snprintf(buf, len, "default");
}


int cfg_log_level_of_flags(unsigned flags)
{
	return flags >= 0x04 ? LOG_LVL_DEBUG :
	       flags & 0x02 ? LOG_LVL_INFO :
	       flags & 0x01 ? LOG_LVL_WARN : LOG_LVL_ERR;
}

int cfg_apply(const struct cfg *c, struct sm_config *o)
{
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);
	char err[160];
	bool no_enforce = false;

	for (size_t i = 0; i < n; i++) {
		const struct cfg_key *k = &keys[i];
		const char *v = cfg_effective(c, i);
		void *f = (char *)o + k->off;
		uint64_t u = 0;

		if (!(k->flags & CFG_IMPL))
			continue;
		if (k->type == CFG_INT || k->type == CFG_U64 ||
		    k->type == CFG_GUID)
			if (parse_u64(v, &u) < 0 && k->field != F_LIMIT &&
			    k->field != F_INT)
				return -EINVAL;
		switch (k->field) {
		case F_NONE:
			break;
		case F_BOOL:
			*(bool *)f = !strcmp(v, "TRUE");
			break;
		case F_BOOL_NOT:
			*(bool *)f = strcmp(v, "TRUE") != 0;
			break;
		case F_U8:
			*(uint8_t *)f = (uint8_t)u;
			break;
		case F_UINT:
			*(unsigned *)f = (unsigned)u;
			break;
		case F_INT: {
			long long ll;

			if (parse_int(v, k->min, k->max, &ll) < 0)
				return -EINVAL;
			*(int *)f = (int)ll;
			break;
		}
		case F_U64:
			*(uint64_t *)f = u;
			break;
		case F_STR:
			/* a partitions.conf that does not exist, named by
			 * the default or by the file: none, the default
			 * partition (OpenSM runs without it too, and RHEL's
			 * and /usr/local builds name other paths); on the
			 * command line it must exist */
			if (is_null(v) ||
			    (!strcmp(k->name, "partition_config_file") &&
			     c->v[i].src != CFG_SRC_CMDLINE &&
			     access(v, F_OK) && errno == ENOENT))
				*(const char **)f = NULL;
			else
				*(const char **)f = v;
			break;
		case F_BUF:
			snprintf(f, k->size, "%s", v);
			break;
		case F_ENUM: {
			int idx = 0;
			const char *w = k->words;
			size_t l = strlen(v);

			while (*w) {
				size_t wl = strcspn(w, ",");
				if (wl == l && !strncmp(w, v, l))
					break;
				idx++;
				w += wl + (w[wl] == ',');
			}
			*(int *)f = idx;
			break;
		}
		case F_LOG_FLAGS:
			/* OpenSM writes its LFT dump with OSM_LOG_ROUTING. */
			if (u & 0x40)
				o->dump_lfts = true;
			o->log_level = (enum log_level)
				       cfg_log_level_of_flags((unsigned)u);
			break;
		case F_NO_PART_ENF:
			no_enforce = !strcmp(v, "TRUE");
			break;
		case F_LIMIT:
			if (cfg_limit_parse(o, k, v, err, sizeof(err)) < 0)
				return -EINVAL;
			break;
		}
	}
	/* OpenSM's older key (-N) wins over part_enforce, whatever the order */
	if (no_enforce)
		o->part_enforce = SM_PART_ENFORCE_OFF;
	return 0;
}

/* A hex mask ("0x00ff..."): its digits without leading zeros. */
static const char *hex_digits(const char *s, size_t *n)
{
	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return NULL;
	s += 2;
	*n = strlen(s);
	if (!*n || strspn(s, "0123456789abcdefABCDEF") != *n)
		return NULL;
	while (*n > 1 && *s == '0') {
		s++;
		(*n)--;
	}
	return s;
}

bool cfg_value_eq(const struct cfg_key *k, const char *a, const char *b)
{
	const char *ha, *hb;
	size_t la, lb;

	a = a ? a : k->def;
	b = b ? b : k->def;
	if (!a || !b)
		return a == b;
	switch (k->type) {
	case CFG_BOOL:
		return !strcmp(a, "TRUE") == !strcmp(b, "TRUE");
	case CFG_INT:
	case CFG_U64:
	case CFG_GUID: {
		long long sa, sb;
		uint64_t ua, ub;

		if (parse_u64(a, &ua) == 0 && parse_u64(b, &ub) == 0)
			return ua == ub;
		if (parse_int(a, k->min, k->max, &sa) == 0 &&
		    parse_int(b, k->min, k->max, &sb) == 0)
			return sa == sb;
		break;
	}
	case CFG_REAL: {
		char *ea, *eb;
		double da = strtod(a, &ea), db = strtod(b, &eb);

		if (*a && *b && !*ea && !*eb)
			return da == db;
		break;
	}
	case CFG_STR:
		ha = hex_digits(a, &la);
		hb = hex_digits(b, &lb);
		if (ha && hb)
			return la == lb && !strncasecmp(ha, hb, la);
		break;
	case CFG_PATH:
	case CFG_DIR:
	case CFG_ENUM:
		break;
	}
	return !strcmp(a, b);
}

bool cfg_file_changed(const struct cfg *c, size_t i)
{
	const struct cfg_key *k = &cfg_keys(NULL)[i];

	return c->v[i].val && c->v[i].src == CFG_SRC_FILE &&
	       !cfg_value_eq(k, c->v[i].val, k->def);
}

bool cfg_key_implemented(const struct cfg_key *k)
{
	const struct cfg_key *t;

	if (k->flags & CFG_IMPL)
		return true;
	t = (k->flags & CFG_ALIAS) && k->alias ? cfg_key_find(k->alias, NULL)
					       : NULL;
	return t && (t->flags & CFG_IMPL);
}

void cfg_unimplemented(const struct cfg *c, char *buf, size_t len, size_t *n)
{
	size_t nk, used = 0;
	const struct cfg_key *keys = cfg_keys(&nk);

	*n = 0;
	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < nk; i++) {
		if (cfg_key_implemented(&keys[i]) || !cfg_file_changed(c, i))
			continue;
		(*n)++;
		if (used < len) {
			int w = snprintf(buf + used, len - used, "%s%s",
					 used ? ", " : "", keys[i].name);
			used += w > 0 ? (size_t)w : 0;
		}
	}
}

/* ------------------------------------------------------------ writing */

static const char *type_word(const struct cfg_key *k, char *buf, size_t len)
{
	switch (k->type) {
	case CFG_BOOL: return "TRUE or FALSE";
	case CFG_INT:
	case CFG_REAL:
		snprintf(buf, len, "%.15g-%.15g", k->min, k->max);
		return buf;
	case CFG_U64: return "64-bit hex";
	case CFG_GUID: return "port GUID";
	case CFG_PATH: return "file";
	case CFG_DIR: return "directory";
	case CFG_ENUM:
		words_list(k->words, buf, len);
		return buf;
	case CFG_STR: break;
	}
	return "text";
}

/*
 * One `key value` line.  A value that starts and ends with the same
 * quote would lose them when read back (OpenSM's reader strips one
 * pair): it goes inside the other quotes.
 */
static void write_value(FILE *fp, const struct cfg_key *k, const char *v)
{
	size_t n = strlen(v);
	const char *q = "";

	if (n && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0])
		q = v[0] == '"' ? "'" : "\"";
	fprintf(fp, "%s%s %s%s%s\n", k->flags & CFG_IBSM ? "#" : "",
		k->name, q, v, q);
}

/*
 * OpenSM's format: `key value` lines under commented section headings.
 * ibsm's own keys are written commented out: OpenSM warns about keys it
 * does not know, and their values are the defaults anyway.
 */
int cfg_write(FILE *fp, const struct cfg *c)
{
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);
	const char *sect = NULL;
	char w[128];

	fprintf(fp, "# ibsm configuration in OpenSM's opensm.conf format"
		" (ibsm -c).\n"
		"# One `key value` per line; booleans are TRUE or FALSE.  Each"
		" key's comment\n"
		"# gives what it takes, whether a SIGHUP applies it at run time"
		" (\"reload\")\n"
		"# or it needs a restart, and whether ibsm implements it (keys"
		" it does not\n"
		"# are accepted and reported at start).  ibsm's own keys are"
		" commented out\n"
		"# so that OpenSM can read this file too: remove the '#' to"
		" set one.\n");
	for (size_t i = 0; i < n; i++) {
		const struct cfg_key *k = &keys[i];

		if (k->flags & CFG_ALIAS)
			continue;	/* OpenSM does not write it either */
		if (!sect || strcmp(sect, k->section)) {
			sect = k->section;
			fprintf(fp, "\n#\n# %s\n#\n", sect);
		}
		fprintf(fp, "\n# %s: %s; %s; %s\n", k->name,
			type_word(k, w, sizeof(w)),
			k->flags & CFG_RT ? "reload" : "restart",
			k->flags & CFG_IMPL ? "implemented" :
			"not implemented in ibsm yet");
		write_value(fp, k, cfg_get(c, i));
	}
	return ferror(fp) ? -EIO : 0;
}
