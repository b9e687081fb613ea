/*
 * conf.c - read the ibhost INI file with inih and validate it.
 *
 * inih calls the handler once per "key = value" but, as Debian and most
 * distributions build it, never says on which line.  The reader we hand
 * to ini_parse_stream() sees every line first, so it counts them, checks
 * the syntax inih would only report as "first bad line", and tracks the
 * section headers itself (inih gives no callback for a section without
 * keys).  The handler then only has to look the key up in keys[] and
 * run its parser, with the reader's line number in hand.
 *
 * Lines are also normalised before inih sees them: leading white space
 * goes (so inih's multi-line continuation never applies) and comment,
 * blank and header lines reach inih as empty lines.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tools/ibhost/conf.h"

const char *const rdma_modules[RDMA_MODULE_COUNT] = {
	"ib_iser", "ib_isert", "ib_srpt", "ib_uverbs", "rdma_ucm",
	"rds_rdma", "xprtrdma", "svcrdma",
};

enum sect_kind {
	SK_BAD,			/* unknown or malformed: keys are ignored */
	SK_GLOBAL,
	SK_IPOIB,		/* [ipoib NAME] */
	SK_CHILD,		/* [ipoib NAME.PKEY] */
	SK_ROCE,
	SK_SOFT,
	SK_MODULES,
	SK_LIMITS,
	SK_NFS,
};

#define K(kind)		(1u << (kind))

struct parser;
struct sect;

struct key_def {
	const char	*name;
	unsigned	 kinds;
	void		(*parse)(struct parser *p, struct sect *s,
				 const char *key, const char *v, int line);
};

struct sect {
	enum sect_kind	 kind;
	int		 line;
	char		*title;		/* "ipoib mlx4_ib0", words single-spaced */
	size_t		 idx;		/* into raw ipoib, roce or soft */
	int		*key_line;	/* per keys[] entry, 0 if unseen */
};

struct parser {
	struct ibh_conf	*c;
	struct diags	*d;
	const char	*name;
	FILE		*fp;
	int		 lineno;
	char		*buf;
	size_t		 bufcap;
	struct sect	*sects;
	size_t		 nsects, sects_cap;
	long		 cur;		/* index in sects, -1 before the first */
	struct ipoib_conf *raw;		/* [ipoib] sections in file order */
	size_t		 nraw;
};

static void perr(struct parser *p, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void perr(struct parser *p, int line, const char *fmt, ...)
{
	struct sbuf b = { 0 };
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(&b, fmt, ap);
	va_end(ap);
	diag_add(p->d, DIAG_ERROR, p->name, line, "%s", sb_str(&b));
	sb_free(&b);
}

/* ---------------------------------------------------------------------
 * Value syntax
 */

static bool parse_uint(const char *s, int base, unsigned long long max,
		       unsigned long long *out)
{
	char *end;

	if (!*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return false;
	errno = 0;
	*out = strtoull(s, &end, base);
	return !errno && !*end && *out <= max;
}

static bool parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1", "y" };
	static const char *const no[] = { "no", "false", "off", "0", "n" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (str_ieq(s, yes[i])) {
			*out = true;
			return true;
		}
		if (str_ieq(s, no[i])) {
			*out = false;
			return true;
		}
	}
	return false;
}

/* Interface names as the kernel takes them (dev_valid_name()). */
static bool valid_ifname(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= IFNAMSIZ || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (*s == '/' || *s == ':' || isspace((unsigned char)*s) ||
		    !isprint((unsigned char)*s))
			return false;
	return true;
}

/* RDMA device names: what `rdma link add` and configfs accept. */
static bool valid_devname(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= IBH_DEVNAME_MAX)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return false;
	return true;
}

/* "0x0002c903003178f1", "0002c903003178f1" or "0002:c903:0031:78f1". */
static bool parse_guid(const char *s, uint64_t *out)
{
	char digits[17];
	size_t n = 0;
	bool prefixed = false;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		prefixed = true;
	}
	for (; *s; s++) {
		if (*s == ':' && !prefixed)
			continue;
		if (!isxdigit((unsigned char)*s) || n == 16)
			return false;
		digits[n++] = *s;
	}
	if (n == 0 || (!prefixed && n != 16))
		return false;
	digits[n] = '\0';
	*out = strtoull(digits, NULL, 16);
	return *out != 0;
}

/* "A/P" (need_prefix 1), "A" (0) or either (-1), of family (0: any). */
static bool parse_ip(const char *s, int family, int need_prefix,
		     struct ip_addr *out)
{
	char buf[INET6_ADDRSTRLEN + 8];
	unsigned char bin[sizeof(struct in6_addr)];
	unsigned long long prefix = 0;
	char *slash;

	if (strlen(s) >= sizeof(buf))
		return false;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash)
		*slash++ = '\0';
	if ((slash && need_prefix == 0) || (!slash && need_prefix == 1))
		return false;
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, buf, bin) == 1)
		out->family = AF_INET;
	else if (inet_pton(AF_INET6, buf, bin) == 1)
		out->family = AF_INET6;
	else
		return false;
	if (family && out->family != family)
		return false;
	if (slash && !parse_uint(slash, 10,
				 out->family == AF_INET ? 32 : 128, &prefix))
		return false;
	out->prefix = (unsigned)prefix;
	inet_ntop(out->family, bin, out->text, sizeof(out->text));
	return true;
}

/* Splits a list at commas and white space; returns the word count. */
static size_t split_list(char *s, char **words, size_t max)
{
	size_t n = 0;
	char *tok, *save = NULL;

	for (tok = strtok_r(s, ", \t", &save); tok;
	     tok = strtok_r(NULL, ", \t", &save)) {
		if (n == max)
			return max + 1;
		words[n++] = tok;
	}
	return n;
}

/* ---------------------------------------------------------------------
 * Key parsers: each validates one value and stores it
 */

static struct ipoib_conf *ipoib_of(struct parser *p, struct sect *s)
{
	return &p->raw[s->idx];
}

static void k_backend(struct parser *p, struct sect *s, const char *key,
		      const char *v, int line)
{
	(void)s;
	p->c->backend_line = line;
	if (str_ieq(v, "networkmanager"))
		p->c->backend = BACKEND_NETWORKMANAGER;
	else if (str_ieq(v, "ifupdown"))
		p->c->backend = BACKEND_IFUPDOWN;
	else if (str_ieq(v, "networkd"))
		p->c->backend = BACKEND_NETWORKD;
	else
		perr(p, line, "%s: expected networkmanager, ifupdown or "
		     "networkd, not \"%s\"", key, v);
}

static void k_guid(struct parser *p, struct sect *s, const char *key,
		   const char *v, int line)
{
	struct ipoib_conf *ip = ipoib_of(p, s);

	ip->guid_line = line;
	if (!parse_guid(v, &ip->guid))
		perr(p, line, "%s: expected a port GUID such as "
		     "0x0002c903003178f1 or 0002:c903:0031:78f1, not \"%s\"",
		     key, v);
}

static void k_ipoib_mode(struct parser *p, struct sect *s, const char *key,
			 const char *v, int line)
{
	struct ipoib_conf *ip = ipoib_of(p, s);

	ip->mode_line = line;
	if (str_ieq(v, "connected"))
		ip->mode = IPOIB_CONNECTED;
	else if (str_ieq(v, "datagram"))
		ip->mode = IPOIB_DATAGRAM;
	else
		perr(p, line, "%s: expected connected or datagram, not \"%s\"",
		     key, v);
}

static void k_mtu(struct parser *p, struct sect *s, const char *key,
		  const char *v, int line)
{
	struct ipoib_conf *ip = ipoib_of(p, s);
	unsigned long long n;

	ip->mtu_line = line;
	if (!parse_uint(v, 10, 65535, &n) || n < 68)
		perr(p, line, "%s: expected a number from 68 to 65535, "
		     "not \"%s\"", key, v);
	else
		ip->mtu = (unsigned)n;
}

static void k_ib_mtu(struct parser *p, struct sect *s, const char *key,
		     const char *v, int line)
{
	struct ipoib_conf *ip = ipoib_of(p, s);
	unsigned long long n;

	ip->ib_mtu_line = line;
	if (!parse_uint(v, 10, 4096, &n) ||
	    (n != 256 && n != 512 && n != 1024 && n != 2048 && n != 4096))
		perr(p, line, "%s: expected 256, 512, 1024, 2048 or 4096, "
		     "not \"%s\"", key, v);
	else
		ip->ib_mtu = (unsigned)n;
}

static void parse_ip_conf(struct parser *p, struct ip_conf *ic,
			  const char *key, const char *v, int line,
			  int family)
{
	const char *autoword = family == AF_INET ? "dhcp" : "auto";
	const char *example = family == AF_INET ? "192.0.2.1/24" :
						  "2001:db8:1::1/64";
	char *copy = xstrdup(v), *words[IBH_MAX_ADDRS + 1];
	size_t n;

	ic->line = line;
	if (str_ieq(v, autoword) || str_ieq(v, "off")) {
		ic->method = str_ieq(v, "off") ? IP_OFF : IP_AUTO;
		goto out;
	}
	n = split_list(copy, words, IBH_MAX_ADDRS);
	if (n > IBH_MAX_ADDRS) {
		perr(p, line, "%s: expected at most %d addresses", key,
		     IBH_MAX_ADDRS);
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (!parse_ip(words[i], family, 1, &ic->addr[ic->naddr])) {
			perr(p, line, "%s: expected %s, off or ADDRESS/PREFIX "
			     "such as %s, not \"%s\"", key, autoword, example,
			     words[i]);
			goto out;
		}
		ic->naddr++;
	}
	ic->method = IP_STATIC;
out:
	free(copy);
}

static void k_ipv4(struct parser *p, struct sect *s, const char *key,
		   const char *v, int line)
{
	parse_ip_conf(p, &ipoib_of(p, s)->v4, key, v, line, AF_INET);
}

static void k_ipv6(struct parser *p, struct sect *s, const char *key,
		   const char *v, int line)
{
	parse_ip_conf(p, &ipoib_of(p, s)->v6, key, v, line, AF_INET6);
}

static void parse_gw(struct parser *p, struct ip_conf *ic, const char *key,
		     const char *v, int line, int family)
{
	ic->gw_line = line;
	if (parse_ip(v, family, 0, &ic->gw))
		ic->has_gw = true;
	else
		perr(p, line, "%s: expected an %s address, not \"%s\"", key,
		     family == AF_INET ? "IPv4" : "IPv6", v);
}

static void k_ipv4_gw(struct parser *p, struct sect *s, const char *key,
		      const char *v, int line)
{
	parse_gw(p, &ipoib_of(p, s)->v4, key, v, line, AF_INET);
}

static void k_ipv6_gw(struct parser *p, struct sect *s, const char *key,
		      const char *v, int line)
{
	parse_gw(p, &ipoib_of(p, s)->v6, key, v, line, AF_INET6);
}

static void k_dns(struct parser *p, struct sect *s, const char *key,
		  const char *v, int line)
{
	struct ipoib_conf *ip = ipoib_of(p, s);
	char *copy = xstrdup(v), *words[IBH_MAX_DNS + 1];
	size_t n = split_list(copy, words, IBH_MAX_DNS);

	ip->dns_line = line;
	if (n > IBH_MAX_DNS)
		perr(p, line, "%s: expected at most %d servers", key,
		     IBH_MAX_DNS);
	for (size_t i = 0; i < n && i < IBH_MAX_DNS; i++) {
		if (!parse_ip(words[i], 0, 0, &ip->dns[ip->ndns])) {
			perr(p, line, "%s: expected IPv4 or IPv6 addresses, "
			     "not \"%s\"", key, words[i]);
			break;
		}
		ip->ndns++;
	}
	free(copy);
}

static void k_pkeys(struct parser *p, struct sect *s, const char *key,
		    const char *v, int line)
{
	struct ipoib_conf *ip = ipoib_of(p, s);
	char *copy = xstrdup(v), *words[IBH_MAX_PKEYS + 1];
	size_t n = split_list(copy, words, IBH_MAX_PKEYS);
	unsigned long long pk;

	ip->pkeys_line = line;
	if (n > IBH_MAX_PKEYS)
		perr(p, line, "%s: expected at most %d P_Keys", key,
		     IBH_MAX_PKEYS);
	for (size_t i = 0; i < n && i < IBH_MAX_PKEYS; i++) {
		const char *w = words[i];

		if (w[0] == '0' && (w[1] == 'x' || w[1] == 'X'))
			w += 2;
		if (!parse_uint(w, 16, 0xffff, &pk) || pk == 0 ||
		    pk > 0x7fff) {
			perr(p, line, "%s: expected P_Keys from 0x0001 to "
			     "0x7fff (ibhost adds the full-membership bit "
			     "0x8000: 0x0002 makes %s.8002), not \"%s\"",
			     key, ip->name, words[i]);
			break;
		}
		for (unsigned j = 0; j < ip->npkeys; j++)
			if (ip->pkeys[j] == pk) {
				perr(p, line, "%s: expected each P_Key once, "
				     "not 0x%04llx twice", key, pk);
				goto out;
			}
		ip->pkeys[ip->npkeys++] = (uint16_t)pk;
	}
out:
	free(copy);
}

static void k_roce_mode(struct parser *p, struct sect *s, const char *key,
			const char *v, int line)
{
	struct roce_conf *r = &p->c->roce[s->idx];
	char norm[32];
	size_t n = 0;

	/* "RoCE  v2" and "roce v2" are the same mode: compare words. */
	for (const char *q = v; *q && n + 1 < sizeof(norm); q++) {
		if (isspace((unsigned char)*q)) {
			if (n && norm[n - 1] != ' ')
				norm[n++] = ' ';
			continue;
		}
		norm[n++] = *q;
	}
	norm[n] = '\0';
	r->mode_line = line;
	if (str_ieq(norm, "RoCE v2"))
		r->mode = ROCE_V2;
	else if (str_ieq(norm, "IB/RoCE v1"))
		r->mode = ROCE_V1;
	else
		perr(p, line, "%s: expected \"RoCE v2\" or \"IB/RoCE v1\", "
		     "not \"%s\"", key, v);
}

static void k_soft_type(struct parser *p, struct sect *s, const char *key,
			const char *v, int line)
{
	struct softrdma_conf *sr = &p->c->soft[s->idx];

	sr->type_line = line;
	if (str_ieq(v, "rxe"))
		sr->type = SOFT_RXE;
	else if (str_ieq(v, "siw"))
		sr->type = SOFT_SIW;
	else
		perr(p, line, "%s: expected rxe (Soft-RoCE) or siw "
		     "(Soft-iWARP), not \"%s\"", key, v);
}

static void k_soft_netdev(struct parser *p, struct sect *s, const char *key,
			  const char *v, int line)
{
	struct softrdma_conf *sr = &p->c->soft[s->idx];

	sr->netdev_line = line;
	if (valid_ifname(v))
		snprintf(sr->netdev, sizeof(sr->netdev), "%s", v);
	else
		perr(p, line, "%s: expected a network interface name of at "
		     "most %d characters, not \"%s\"", key, IFNAMSIZ - 1, v);
}

static void k_load(struct parser *p, struct sect *s, const char *key,
		   const char *v, int line)
{
	struct modules_conf *m = &p->c->modules;
	char *copy = xstrdup(v), *words[RDMA_MODULE_COUNT * 2 + 1];
	size_t n = split_list(copy, words, RDMA_MODULE_COUNT * 2);

	(void)s;
	m->load_line = line;
	for (size_t i = 0; i < n && i < RDMA_MODULE_COUNT * 2; i++) {
		unsigned j;

		for (j = 0; j < RDMA_MODULE_COUNT; j++)
			if (!strcmp(words[i], rdma_modules[j]))
				break;
		if (j == RDMA_MODULE_COUNT) {
			perr(p, line, "%s: expected modules from ib_uverbs, "
			     "rdma_ucm, ib_iser, ib_isert, ib_srpt, rds_rdma, "
			     "xprtrdma and svcrdma, not \"%s\"", key, words[i]);
			break;
		}
		if (m->mask & (1u << j)) {
			perr(p, line, "%s: expected each module once, not %s "
			     "twice", key, words[i]);
			break;
		}
		m->mask |= 1u << j;
	}
	free(copy);
}

static void k_group(struct parser *p, struct sect *s, const char *key,
		    const char *v, int line)
{
	struct limits_conf *l = &p->c->limits;
	size_t n = strlen(v);
	bool ok = n > 0 && n < sizeof(l->group) &&
		  (isalpha((unsigned char)v[0]) || v[0] == '_');

	(void)s;
	for (size_t i = 1; ok && i < n; i++)
		ok = isalnum((unsigned char)v[i]) || strchr("_.-", v[i]);
	l->group_line = line;
	if (ok)
		strcpy(l->group, v);
	else
		perr(p, line, "%s: expected a group name such as rdma, "
		     "not \"%s\"", key, v);
}

static void k_memlock(struct parser *p, struct sect *s, const char *key,
		      const char *v, int line)
{
	struct limits_conf *l = &p->c->limits;
	unsigned long long n, mult = 1;
	char num[32];
	size_t len = strlen(v);

	(void)s;
	l->memlock_line = line;
	if (str_ieq(v, "unlimited") || str_ieq(v, "infinity")) {
		l->memlock_kib = IBH_MEMLOCK_UNLIMITED;
		return;
	}
	if (len > 0 && len < sizeof(num)) {
		strcpy(num, v);
		switch (toupper((unsigned char)num[len - 1])) {
		case 'K': mult = 1; break;
		case 'M': mult = 1024; break;
		case 'G': mult = 1024 * 1024; break;
		case 'T': mult = 1024ull * 1024 * 1024; break;
		default: mult = 0; break;
		}
		if (mult)
			num[len - 1] = '\0';
		else
			mult = 1;
		if (parse_uint(num, 10, ULLONG_MAX / mult, &n) && n > 0 &&
		    n * mult < IBH_MEMLOCK_UNLIMITED) {
			l->memlock_kib = n * mult;
			return;
		}
	}
	perr(p, line, "%s: expected unlimited or a size in KiB with an "
	     "optional K, M, G or T suffix, not \"%s\"", key, v);
}

static void k_limits_file(struct parser *p, struct sect *s, const char *key,
			  const char *v, int line)
{
	static const char dir[] = "/etc/security/limits.d/";
	struct limits_conf *l = &p->c->limits;
	const char *base = v + strlen(dir);
	bool ok = !strcmp(v, "/etc/security/limits.conf");

	(void)s;
	if (!ok && !strncmp(v, dir, strlen(dir)) && base[0] != '.' &&
	    str_has_suffix(base, ".conf") && strlen(v) < sizeof(l->file)) {
		ok = true;
		for (const char *q = base; *q; q++)
			if (!isalnum((unsigned char)*q) && !strchr("_.-", *q))
				ok = false;
	}
	l->file_line = line;
	if (ok)
		strcpy(l->file, v);
	else
		perr(p, line, "%s: expected /etc/security/limits.conf or "
		     "/etc/security/limits.d/NAME.conf, not \"%s\"", key, v);
}

static void k_nfs_rdma(struct parser *p, struct sect *s, const char *key,
		       const char *v, int line)
{
	(void)s;
	p->c->nfs.rdma_line = line;
	if (!parse_bool(v, &p->c->nfs.rdma))
		perr(p, line, "%s: expected yes or no, not \"%s\"", key, v);
}

static void k_nfs_port(struct parser *p, struct sect *s, const char *key,
		       const char *v, int line)
{
	unsigned long long n;

	(void)s;
	p->c->nfs.port_line = line;
	if (parse_uint(v, 10, 65535, &n) && n > 0)
		p->c->nfs.port = (unsigned)n;
	else
		perr(p, line, "%s: expected a port number from 1 to 65535, "
		     "not \"%s\"", key, v);
}

#define IPOIB_ANY	(K(SK_IPOIB) | K(SK_CHILD))

/* The order here is the order of the "expected one of" lists. */
static const struct key_def keys[] = {
	{ "backend",	  K(SK_GLOBAL),	 k_backend },
	{ "guid",	  K(SK_IPOIB),	 k_guid },
	{ "mode",	  IPOIB_ANY,	 k_ipoib_mode },
	{ "mtu",	  IPOIB_ANY,	 k_mtu },
	{ "ib-mtu",	  K(SK_IPOIB),	 k_ib_mtu },
	{ "ipv4",	  IPOIB_ANY,	 k_ipv4 },
	{ "ipv4-gateway", IPOIB_ANY,	 k_ipv4_gw },
	{ "ipv6",	  IPOIB_ANY,	 k_ipv6 },
	{ "ipv6-gateway", IPOIB_ANY,	 k_ipv6_gw },
	{ "dns",	  IPOIB_ANY,	 k_dns },
	{ "pkeys",	  K(SK_IPOIB),	 k_pkeys },
	{ "mode",	  K(SK_ROCE),	 k_roce_mode },
	{ "type",	  K(SK_SOFT),	 k_soft_type },
	{ "netdev",	  K(SK_SOFT),	 k_soft_netdev },
	{ "load",	  K(SK_MODULES), k_load },
	{ "group",	  K(SK_LIMITS),	 k_group },
	{ "memlock",	  K(SK_LIMITS),	 k_memlock },
	{ "file",	  K(SK_LIMITS),	 k_limits_file },
	{ "rdma",	  K(SK_NFS),	 k_nfs_rdma },
	{ "rdma-port",	  K(SK_NFS),	 k_nfs_port },
};

/* ---------------------------------------------------------------------
 * Sections
 */

static const struct {
	const char	*word;
	enum sect_kind	 kind;
	int		 nargs;
	const char	*usage;
} sect_defs[] = {
	{ "global",   SK_GLOBAL,  0, "[global]" },
	{ "ipoib",    SK_IPOIB,   1, "[ipoib NAME]" },
	{ "roce",     SK_ROCE,    2, "[roce DEVICE PORT]" },
	{ "softrdma", SK_SOFT,    1, "[softrdma NAME]" },
	{ "modules",  SK_MODULES, 0, "[modules]" },
	{ "limits",   SK_LIMITS,  0, "[limits]" },
	{ "nfs",      SK_NFS,     0, "[nfs]" },
};

static struct sect *sect_new(struct parser *p, enum sect_kind kind,
			     const char *title, int line)
{
	struct sect *s;

	if (p->nsects == p->sects_cap) {
		p->sects_cap = p->sects_cap ? p->sects_cap * 2 : 16;
		p->sects = xrealloc(p->sects, p->sects_cap * sizeof(*p->sects));
	}
	p->cur = (long)p->nsects;
	s = &p->sects[p->nsects++];
	s->kind = kind;
	s->line = line;
	s->title = xstrdup(title);
	s->idx = 0;
	s->key_line = xcalloc(ARRAY_SIZE(keys), sizeof(int));
	return s;
}

/* A child section: "NAME.PKEY", PKEY four hex digits with 0x8000 set. */
static bool child_name(const char *name, char *parent, uint16_t *pkey)
{
	const char *dot = strrchr(name, '.');
	unsigned long long pk;

	if (!dot || strlen(dot + 1) != 4 || dot == name)
		return false;
	if (!parse_uint(dot + 1, 16, 0xffff, &pk) || !(pk & IBH_PKEY_FULL) ||
	    !(pk & 0x7fff))
		return false;
	snprintf(parent, IFNAMSIZ, "%.*s", (int)(dot - name), name);
	*pkey = (uint16_t)pk;
	return true;
}

static void start_ipoib(struct parser *p, struct sect *s, const char *name)
{
	struct ipoib_conf *ip;
	char parent[IFNAMSIZ];
	uint16_t pkey = 0;

	if (!valid_ifname(name)) {
		perr(p, s->line, "[ipoib %s]: expected an interface name of at "
		     "most %d characters without '/', ':' or spaces", name,
		     IFNAMSIZ - 1);
		s->kind = SK_BAD;
		return;
	}
	if (strchr(name, '.')) {
		if (!child_name(name, parent, &pkey)) {
			perr(p, s->line, "[ipoib %s]: expected [ipoib NAME] "
			     "or a P_Key child [ipoib NAME.PKEY] such as "
			     "[ipoib ib0.8002]", name);
			s->kind = SK_BAD;
			return;
		}
		s->kind = SK_CHILD;
	}
	p->raw = xrealloc(p->raw, (p->nraw + 1) * sizeof(*p->raw));
	s->idx = p->nraw;
	ip = &p->raw[p->nraw++];
	memset(ip, 0, sizeof(*ip));
	snprintf(ip->name, sizeof(ip->name), "%s", name);
	ip->line = s->line;
	ip->parent = -1;
	if (s->kind == SK_CHILD) {
		char tmp[IFNAMSIZ + 8];

		/* the kernel's spelling: [ipoib ib0.800A] is ib0.800a */
		ip->child = true;
		ip->pkey = pkey;
		snprintf(tmp, sizeof(tmp), "%s.%04x", parent, pkey);
		memcpy(ip->name, tmp, sizeof(ip->name));
	}
}

static void start_roce(struct parser *p, struct sect *s, const char *dev,
		       const char *port)
{
	unsigned long long n;
	struct roce_conf *r;

	if (!valid_devname(dev) || !parse_uint(port, 10, 255, &n) || !n) {
		perr(p, s->line, "[roce %s %s]: expected [roce DEVICE PORT] "
		     "with an RDMA device name and a port number from 1 to "
		     "255", dev, port);
		s->kind = SK_BAD;
		return;
	}
	p->c->roce = xrealloc(p->c->roce,
			      (p->c->nroce + 1) * sizeof(*p->c->roce));
	s->idx = p->c->nroce;
	r = &p->c->roce[p->c->nroce++];
	memset(r, 0, sizeof(*r));
	snprintf(r->dev, sizeof(r->dev), "%s", dev);
	r->port = (unsigned)n;
	r->line = s->line;
}

static void start_soft(struct parser *p, struct sect *s, const char *name)
{
	struct softrdma_conf *sr;

	if (!valid_devname(name)) {
		perr(p, s->line, "[softrdma %s]: expected an RDMA device name "
		     "of letters, digits, '_' and '-' such as rxe0", name);
		s->kind = SK_BAD;
		return;
	}
	p->c->soft = xrealloc(p->c->soft,
			      (p->c->nsoft + 1) * sizeof(*p->c->soft));
	s->idx = p->c->nsoft;
	sr = &p->c->soft[p->c->nsoft++];
	memset(sr, 0, sizeof(*sr));
	snprintf(sr->name, sizeof(sr->name), "%s", name);
	sr->line = s->line;
}

/* "[ ipoib  ib0 ]" -> kind, words, duplicate check, per-kind record. */
static void section_start(struct parser *p, char *hdr)
{
	int line = p->lineno;
	char *inner, *words[4], *save = NULL, *tok;
	struct sbuf title = { 0 };
	size_t n = 0, i;
	struct sect *s;

	if (hdr[strlen(hdr) - 1] != ']') {
		perr(p, line, "expected ']' at the end of the section header");
		sect_new(p, SK_BAD, "", line);
		return;
	}
	hdr[strlen(hdr) - 1] = '\0';
	inner = hdr + 1;
	for (tok = strtok_r(inner, " \t", &save); tok;
	     tok = strtok_r(NULL, " \t", &save)) {
		if (n < ARRAY_SIZE(words))
			words[n] = tok;
		if (n == 0)
			for (char *q = tok; *q; q++)
				*q = (char)tolower((unsigned char)*q);
		n++;
		sb_printf(&title, "%s%s", title.len ? " " : "", tok);
	}
	if (n == 0) {
		perr(p, line, "empty section header: expected [global], "
		     "[ipoib NAME], [roce DEVICE PORT], [softrdma NAME], "
		     "[modules], [limits] or [nfs]");
		sect_new(p, SK_BAD, "", line);
		goto out;
	}
	for (i = 0; i < ARRAY_SIZE(sect_defs); i++)
		if (str_ieq(words[0], sect_defs[i].word))
			break;
	if (i == ARRAY_SIZE(sect_defs)) {
		perr(p, line, "unknown section [%s]: expected [global], "
		     "[ipoib NAME], [roce DEVICE PORT], [softrdma NAME], "
		     "[modules], [limits] or [nfs]", sb_str(&title));
		sect_new(p, SK_BAD, sb_str(&title), line);
		goto out;
	}
	if ((int)n - 1 != sect_defs[i].nargs) {
		perr(p, line, "[%s]: expected %s", sb_str(&title),
		     sect_defs[i].usage);
		sect_new(p, SK_BAD, sb_str(&title), line);
		goto out;
	}
	for (size_t j = 0; j < p->nsects; j++) {
		const struct sect *o = &p->sects[j];

		if (o->kind == SK_BAD || strcmp(o->title, sb_str(&title)))
			continue;
		perr(p, line, "duplicate section [%s]: expected each section "
		     "once (first at line %d)", sb_str(&title), o->line);
		sect_new(p, SK_BAD, "", line);
		goto out;
	}
	s = sect_new(p, sect_defs[i].kind, sb_str(&title), line);
	switch (s->kind) {
	case SK_IPOIB:
		start_ipoib(p, s, words[1]);
		break;
	case SK_ROCE:
		start_roce(p, s, words[1], words[2]);
		break;
	case SK_SOFT:
		start_soft(p, s, words[1]);
		break;
	case SK_MODULES:
		p->c->modules.present = true;
		p->c->modules.line = line;
		break;
	case SK_LIMITS:
		p->c->limits.present = true;
		p->c->limits.line = line;
		break;
	case SK_NFS:
		p->c->nfs.present = true;
		p->c->nfs.line = line;
		break;
	default:
		break;
	}
out:
	sb_free(&title);
}

/* ---------------------------------------------------------------------
 * inih glue
 */

static void excerpt(char *dst, size_t len, const char *src)
{
	if (strlen(src) < len)
		strcpy(dst, src);
	else
		snprintf(dst, len, "%.*s...", (int)len - 4, src);
}

static char *reader(char *str, int num, void *stream)
{
	struct parser *p = stream;
	char *line, *eq, *colon, shown[48];
	ssize_t n;

	n = getline(&p->buf, &p->bufcap, p->fp);
	if (n < 0)
		return NULL;
	p->lineno++;
	line = p->buf;
	if (p->lineno == 1 && !strncmp(line, "\xef\xbb\xbf", 3))
		line += 3;
	if (strlen(line) != (size_t)n - (size_t)(line - p->buf)) {
		perr(p, p->lineno, "expected text, not a NUL byte");
		goto blank;
	}
	line = trim(line);
	if (!*line || *line == '#' || *line == ';')
		goto blank;
	if (*line == '[') {
		section_start(p, line);
		goto blank;
	}
	eq = strchr(line, '=');
	colon = strchr(line, ':');
	excerpt(shown, sizeof(shown), line);
	if (!eq || eq == line || (colon && colon < eq)) {
		perr(p, p->lineno, "expected KEY = VALUE or a [section] "
		     "header, not \"%s\"", shown);
		goto blank;
	}
	if (strlen(line) + 3 > (size_t)num) {
		perr(p, p->lineno, "line too long: expected at most %d "
		     "characters", num - 3);
		goto blank;
	}
	snprintf(str, (size_t)num, "%s\n", line);
	return str;
blank:
	snprintf(str, (size_t)num, "\n");
	return str;
}

static int handler(void *user, const char *section, const char *name,
		   const char *value)
{
	struct parser *p = user;
	int line = p->lineno;
	struct sect *s;
	char *v;
	size_t i, n;

	(void)section;
	if (p->cur < 0) {
		perr(p, line, "%s: expected a [section] header before the "
		     "first key", name);
		return 1;
	}
	s = &p->sects[p->cur];
	if (s->kind == SK_BAD)
		return 1;
	for (i = 0; i < ARRAY_SIZE(keys); i++)
		if ((keys[i].kinds & K(s->kind)) && str_ieq(keys[i].name, name))
			break;
	if (i == ARRAY_SIZE(keys)) {
		struct sbuf b = { 0 };
		size_t count = 0, seen = 0;

		for (size_t j = 0; j < ARRAY_SIZE(keys); j++)
			count += !!(keys[j].kinds & K(s->kind));
		for (size_t j = 0; j < ARRAY_SIZE(keys); j++) {
			if (!(keys[j].kinds & K(s->kind)))
				continue;
			seen++;
			sb_printf(&b, "%s%s", seen == 1 ? "" :
				  seen == count ? " or " : ", ", keys[j].name);
		}
		perr(p, line, "unknown key \"%s\" in [%s]: expected %s%s",
		     name, s->title, count > 1 ? "one of " : "", sb_str(&b));
		sb_free(&b);
		return 1;
	}
	if (s->key_line[i]) {
		perr(p, line, "duplicate key %s in [%s]: expected it once "
		     "(first at line %d)", keys[i].name, s->title,
		     s->key_line[i]);
		return 1;
	}
	s->key_line[i] = line;
	v = xstrdup(value);
	n = strlen(v);
	if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
		memmove(v, v + 1, n - 2);
		v[n - 2] = '\0';
	}
	if (!*trim(v))
		perr(p, line, "%s: expected a value", keys[i].name);
	else
		keys[i].parse(p, s, keys[i].name, trim(v), line);
	free(v);
	return 1;
}

/* ---------------------------------------------------------------------
 * Whole-file checks, once every section is in
 */

static bool sect_has(const struct sect *s, const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if ((keys[i].kinds & K(s->kind)) && !strcmp(keys[i].name, key))
			return s->key_line[i] != 0;
	return false;
}

static void require(struct parser *p, const struct sect *s, const char *key,
		    const char *what)
{
	if (!sect_has(s, key))
		perr(p, s->line, "[%s]: expected a %s key (%s)", s->title, key,
		     what);
}

static void check_ip(struct parser *p, const struct ipoib_conf *ip)
{
	if (ip->v4.has_gw && ip->v4.method != IP_STATIC)
		perr(p, ip->v4.gw_line, "ipv4-gateway: expected a static "
		     "ipv4 = ADDRESS/PREFIX in [ipoib %s]", ip->name);
	if (ip->v6.has_gw && ip->v6.method != IP_STATIC)
		perr(p, ip->v6.gw_line, "ipv6-gateway: expected a static "
		     "ipv6 = ADDRESS/PREFIX in [ipoib %s]", ip->name);
	for (unsigned i = 0; i < ip->ndns; i++) {
		bool v4 = ip->dns[i].family == AF_INET;

		if ((v4 ? ip->v4.method : ip->v6.method) != IP_OFF)
			continue;
		perr(p, ip->dns_line, "dns %s: expected %s on [ipoib %s] "
		     "for an %s server", ip->dns[i].text,
		     v4 ? "ipv4 = dhcp or ADDRESS/PREFIX" :
			  "ipv6 = auto or ADDRESS/PREFIX",
		     ip->name, v4 ? "IPv4" : "IPv6");
		break;
	}
}

/*
 * Put parents and children in their final order (each parent followed
 * by its children in pkeys order) and check what needs both.
 */
static void link_ipoib(struct parser *p)
{
	struct ibh_conf *c = p->c;
	bool *used = xcalloc(p->nraw, sizeof(*used));

	c->ipoib = xcalloc(p->nraw + p->nraw * IBH_MAX_PKEYS,
			   sizeof(*c->ipoib));
	for (size_t i = 0; i < p->nraw; i++) {
		const struct ipoib_conf *par = &p->raw[i];
		size_t pidx;

		if (par->child)
			continue;
		for (size_t j = 0; j < i; j++)
			if (!p->raw[j].child && par->guid &&
			    p->raw[j].guid == par->guid)
				perr(p, par->guid_line, "guid: expected one "
				     "[ipoib] section per port, but "
				     "0x%016" PRIx64 " is also [ipoib %s] "
				     "(line %d)", par->guid, p->raw[j].name,
				     p->raw[j].line);
		pidx = c->nipoib;
		c->ipoib[c->nipoib++] = *par;
		for (unsigned k = 0; k < par->npkeys; k++) {
			uint16_t full = par->pkeys[k] | IBH_PKEY_FULL;
			struct ipoib_conf *ch = &c->ipoib[c->nipoib];
			size_t j;

			for (j = 0; j < p->nraw; j++)
				if (p->raw[j].child && p->raw[j].pkey == full &&
				    !strncmp(p->raw[j].name, par->name,
					     strlen(par->name)) &&
				    p->raw[j].name[strlen(par->name)] == '.')
					break;
			if (j < p->nraw) {
				*ch = p->raw[j];
				used[j] = true;
			} else {
				memset(ch, 0, sizeof(*ch));
				ch->child = ch->implied = true;
				ch->pkey = full;
				ch->line = par->pkeys_line;
				if (strlen(par->name) + 5 >= IFNAMSIZ) {
					perr(p, par->pkeys_line, "pkeys: child "
					     "%s.%04x would be longer than %d "
					     "characters; expected a shorter "
					     "interface name", par->name, full,
					     IFNAMSIZ - 1);
					continue;
				}
				{
					char tmp[IFNAMSIZ + 8];

					snprintf(tmp, sizeof(tmp), "%s.%04x",
						 par->name, full);
					memcpy(ch->name, tmp, sizeof(ch->name));
				}
			}
			ch->parent = (int)pidx;
			c->nipoib++;
		}
	}
	for (size_t i = 0; i < p->nraw; i++)
		if (p->raw[i].child && !used[i])
			perr(p, p->raw[i].line, "[ipoib %s]: expected a P_Key "
			     "listed in pkeys of its parent section, as "
			     "0x%04x", p->raw[i].name,
			     p->raw[i].pkey & ~IBH_PKEY_FULL);
	free(used);
}

static void finish(struct parser *p)
{
	struct ibh_conf *c = p->c;

	for (size_t i = 0; i < p->nsects; i++) {
		const struct sect *s = &p->sects[i];

		switch (s->kind) {
		case SK_IPOIB:
			require(p, s, "guid", "the port GUID");
			break;
		case SK_ROCE:
			require(p, s, "mode", "\"RoCE v2\" or \"IB/RoCE v1\"");
			break;
		case SK_SOFT:
			require(p, s, "type", "rxe or siw");
			require(p, s, "netdev", "the Ethernet interface");
			break;
		case SK_MODULES:
			require(p, s, "load", "the modules to load");
			break;
		case SK_LIMITS:
			require(p, s, "memlock", "unlimited or a size in KiB");
			break;
		default:
			break;
		}
	}
	link_ipoib(p);
	for (size_t i = 0; i < c->nipoib; i++) {
		const struct ipoib_conf *ip = &c->ipoib[i];
		unsigned mtu = ipoib_mtu_of(c, ip);

		check_ip(p, ip);
		if (ip->mtu && ipoib_mode_of(c, ip) == IPOIB_CONNECTED &&
		    ip->mtu > IBH_CM_MTU_MAX)
			perr(p, ip->mtu_line, "mtu %u: expected at most %u "
			     "in connected mode", ip->mtu, IBH_CM_MTU_MAX);
		if (mtu && mtu < 1280 && ip->v6.method != IP_OFF)
			perr(p, ip->mtu ? ip->mtu_line : ip->v6.line,
			     "mtu %u: expected at least 1280 with IPv6 on "
			     "[ipoib %s]", mtu, ip->name);
	}
	for (size_t i = 0; i < c->nsoft; i++)
		for (size_t j = 0; j < i; j++)
			if (c->soft[i].netdev[0] &&
			    !strcmp(c->soft[i].netdev, c->soft[j].netdev) &&
			    c->soft[i].type == c->soft[j].type)
				perr(p, c->soft[i].netdev_line, "netdev %s: "
				     "expected one %s link per interface, but "
				     "[softrdma %s] (line %d) has it",
				     c->soft[i].netdev,
				     soft_type_name(c->soft[i].type),
				     c->soft[j].name, c->soft[j].line);
}

int conf_load_fp(struct ibh_conf *c, FILE *fp, const char *name,
		 struct diags *d)
{
	struct parser p = { .c = c, .d = d, .name = name, .fp = fp,
			    .cur = -1 };
	unsigned errors = d->errors;
	int rc;

	memset(c, 0, sizeof(*c));
	c->path = xstrdup(name);
	c->backend = BACKEND_NETWORKMANAGER;
	c->nfs.rdma = true;
	c->nfs.port = IBH_NFS_RDMA_PORT;
	strcpy(c->limits.group, "rdma");
	strcpy(c->limits.file, "/etc/security/limits.d/rdma.conf");

	errno = 0;
	rc = ini_parse_stream(reader, &p, handler, &p);
	if (ferror(fp))		/* e.g. a directory: not an empty file */
		perr(&p, 0, "cannot read: %s",
		     strerror(errno ? errno : EIO));
	else if (rc > 0)	/* the reader should have caught it */
		perr(&p, rc, "expected KEY = VALUE or a [section] header");
	else if (rc < 0)
		perr(&p, 0, "cannot parse: out of memory");
	finish(&p);

	for (size_t i = 0; i < p.nsects; i++) {
		free(p.sects[i].title);
		free(p.sects[i].key_line);
	}
	free(p.sects);
	free(p.raw);
	free(p.buf);
	diags_sort(d);
	return d->errors > errors ? -EINVAL : 0;
}

int conf_load(struct ibh_conf *c, const char *path, struct diags *d)
{
	FILE *fp = fopen(path, "re");
	int rc;

	if (!fp) {
		rc = -errno;
		memset(c, 0, sizeof(*c));
		diag_add(d, DIAG_ERROR, path, 0, "cannot read: %s",
			 strerror(-rc));
		return rc;
	}
	rc = conf_load_fp(c, fp, path, d);
	fclose(fp);
	return rc;
}

void conf_free(struct ibh_conf *c)
{
	free(c->path);
	free(c->ipoib);
	free(c->roce);
	free(c->soft);
	memset(c, 0, sizeof(*c));
}

/* ---------------------------------------------------------------------
 * Effective values
 */

enum ipoib_mode ipoib_mode_of(const struct ibh_conf *c,
			      const struct ipoib_conf *ip)
{
	if (ip->mode != IPOIB_MODE_UNSET)
		return ip->mode;
	if (ip->parent >= 0)
		return ipoib_mode_of(c, &c->ipoib[ip->parent]);
	return IPOIB_DATAGRAM;
}

/* A child without mode and mtu of its own runs like its parent. */
unsigned ipoib_mtu_of(const struct ibh_conf *c, const struct ipoib_conf *ip)
{
	if (ip->mtu)
		return ip->mtu;
	if (ip->parent >= 0 && ip->mode == IPOIB_MODE_UNSET)
		return ipoib_mtu_of(c, &c->ipoib[ip->parent]);
	return 0;
}

const char *ipoib_mode_name(enum ipoib_mode m)
{
	return m == IPOIB_CONNECTED ? "connected" : "datagram";
}

const char *roce_mode_name(enum roce_mode m)
{
	return m == ROCE_V1 ? "IB/RoCE v1" : "RoCE v2";
}

const char *soft_type_name(enum soft_type t)
{
	return t == SOFT_SIW ? "siw" : "rxe";
}

const char *backend_name(enum ibh_backend b)
{
	switch (b) {
	case BACKEND_IFUPDOWN:
		return "ifupdown";
	case BACKEND_NETWORKD:
		return "networkd";
	default:
		return "networkmanager";
	}
}

const char *module_provider(const char *name)
{
	/* Since Linux 4.x both NFS/RDMA sides live in rpcrdma.ko. */
	if (!strcmp(name, "xprtrdma") || !strcmp(name, "svcrdma"))
		return "rpcrdma";
	return name;
}
