/*
 * ulps.c - the qos-ulps lines, each made into a match rule as OpenSM
 * makes them: SDP by service ID 0x10000 + port (0x10000-0x1ffff when no
 * port), RDS and iSER by 0x1060000 + port (their default ports 0x48ca
 * and 0x0cbc), IPoIB by P_Key (0x7fff when none), SRP by target port
 * GUID, "any" by what it names; the GUID ranges become port groups of
 * their own.  The rule's level sets only the SL.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "qos/values.h"

#define SDP_SID		0x10000ull
#define RDS_SID		0x1060000ull
#define RDS_PORT	0x48caull
#define ISER_PORT	0x0cbcull

enum ulp { U_DEFAULT, U_SDP, U_RDS, U_ISER, U_SRP, U_IPOIB, U_ANY };
enum sub { S_NONE, S_PORT, S_SID, S_PKEY, S_TGT, S_SRC, S_BOTH };

static const char *const ulp_names[] = {
	"default", "sdp", "rds", "iser", "srp", "ipoib", "any",
};

/* The sub-keys a ULP takes after its ',' (the first listed when the
 * line must have one). */
static int sub_of(struct qp *p, enum ulp u, enum sub *s)
{
	static const struct { const char *n; enum sub s; } subs[] = {
		{ "port-num", S_PORT }, { "service-id", S_SID },
		{ "pkey", S_PKEY }, { "target-port-guid", S_TGT },
		{ "source-port-guid", S_SRC },
		{ "source-target-port-guid", S_BOTH },
	};
	static const char *const want[] = {
		[U_DEFAULT] = "':'", [U_SDP] = "port-num",
		[U_RDS] = "port-num", [U_ISER] = "port-num",
		[U_SRP] = "target-port-guid", [U_IPOIB] = "pkey",
		[U_ANY] = ("service-id, pkey, target-port-guid, "
			   "source-port-guid or source-target-port-guid"),
	};
	char w[32];
	size_t n = qp_word(p, w, sizeof(w));

	*s = S_NONE;
	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++)
		if (n && !strcmp(w, subs[i].n))
			*s = subs[i].s;
	bool ok = (u == U_SDP || u == U_RDS || u == U_ISER) ? *s == S_PORT :
		  u == U_SRP ? *s == S_TGT : u == U_IPOIB ? *s == S_PKEY :
		  u == U_ANY ? (*s == S_SID || *s == S_PKEY || *s == S_TGT ||
				*s == S_SRC || *s == S_BOTH) : false;
	if (!ok)
		return qp_fail(p, "%s", want[u]);
	p->c += n;
	return 0;
}

/* A port group holding `r` (moved), for a generated rule. */
static int gen_group(struct qp *p, const char *name, struct qos_ranges *r,
		     size_t *idx)
{
	struct qos_policy *pol = p->pol;
	struct qos_group *g;

	if (pol->n_groups >= QOS_MAX_GROUPS)
		return qp_fail(p, "at most %u port groups", QOS_MAX_GROUPS);
	g = qv_grow(pol->groups, pol->n_groups, sizeof(*g));
	if (!g)
		return -ENOMEM;
	pol->groups = g;
	g += pol->n_groups;
	memset(g, 0, sizeof(*g));
	g->name = strdup(name);
	g->use = strdup("Generated from ULP rules");
	if (!g->name || !g->use) {
		free(g->name);
		free(g->use);
		return -ENOMEM;
	}
	g->generated = true;
	g->guids = *r;
	memset(r, 0, sizeof(*r));
	g->line = p->lineno;
	g->col = 1;
	*idx = pol->n_groups++;
	return 0;
}

static int add_end(size_t **v, size_t *n, size_t idx)
{
	size_t *nv = qv_grow(*v, *n, sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[(*n)++] = idx;
	return 0;
}

/* The rule of one ULP line, its ranges `r` (moved) put where they go. */
static int make_rule(struct qp *p, enum ulp u, enum sub s,
		     struct qos_ranges *r, unsigned sl, unsigned col)
{
	static const char *const gname[] = {
		[S_TGT] = "_ULP_Targets_", [S_SRC] = "_ULP_Sources_",
		[S_BOTH] = "_ULP_Sources_Targets_",
	};
	struct qos_policy *pol = p->pol;
	struct qos_rule *rule;
	size_t g = 0;
	int rc;

	if (pol->n_rules >= QOS_MAX_RULES)
		return qp_fail(p, "at most %u match rules", QOS_MAX_RULES);
	rule = qv_grow(pol->rules, pol->n_rules, sizeof(*rule));
	if (!rule)
		return -ENOMEM;
	pol->rules = rule;
	rule += pol->n_rules++;
	memset(rule, 0, sizeof(*rule));
	rule->from_ulp = true;
	rule->line = p->lineno;
	rule->col = col;
	rule->level = sl;		/* the SL until resolution */
	if (s == S_TGT || s == S_SRC || s == S_BOTH) {
		if ((rc = gen_group(p, gname[s], r, &g)))
			return rc;
		if (s != S_TGT && (rc = add_end(&rule->src, &rule->n_src, g)))
			return rc;
		if (s != S_SRC && (rc = add_end(&rule->dst, &rule->n_dst, g)))
			return rc;
		return 0;
	}
	if (u == U_IPOIB || s == S_PKEY) {
		rule->pkey = *r;
	} else {
		rule->service_id = *r;
		for (size_t i = 0; i < r->n && u != U_ANY; i++) {
			uint64_t base = u == U_SDP ? SDP_SID : RDS_SID;
			r->v[i].lo += base;
			r->v[i].hi += base;
		}
	}
	memset(r, 0, sizeof(*r));
	return 0;
}

static int default_ranges(enum ulp u, struct qos_ranges *r)
{
	r->v = malloc(sizeof(*r->v));
	if (!r->v)
		return -ENOMEM;
	r->n = 1;
	r->v[0].lo = r->v[0].hi = u == U_SDP ? 0 : u == U_RDS ? RDS_PORT :
				  u == U_ISER ? ISER_PORT : 0x7fff;
	if (u == U_SDP)
		r->v[0].hi = 0xffff;
	return 0;
}

static int ulp_line(struct qp *p, enum ulp u, unsigned col)
{
	struct qos_ranges r = { 0 };
	enum sub s = S_NONE;
	uint64_t sl;
	int rc = 0;

	qp_ws(p);
	if (p->c < p->le && p->text[p->c] == ',') {
		p->c++;
		if (u == U_DEFAULT)
			return qp_fail(p, "':'");
		if ((rc = sub_of(p, u, &s)))
			return rc;
		uint64_t max = s == S_PORT ? 0xffff : s == S_PKEY ? 0xffff :
			       UINT64_MAX;
		if ((rc = qv_ranges_to(p, max, true, &r)))
			goto out;
	} else if (u == U_SRP || u == U_ANY) {
		return qp_fail(p, "',' and %s", u == U_SRP ? "target-port-guid" :
			       "what to match");
	}
	qp_ws(p);
	if (p->c >= p->le || p->text[p->c] != ':') {
		rc = qp_fail(p, "':' and the SL");
		goto out;
	}
	p->c++;
	if ((rc = qv_num(p, 15, &sl)) || (rc = qp_expect_eol(p)))
		goto out;
	if (u == U_DEFAULT) {
		p->pol->ulp_default_sl = (int)sl;
		return 0;
	}
	if (s == S_NONE && (rc = default_ranges(u, &r)))
		goto out;
	rc = make_rule(p, u, s, &r, (unsigned)sl, col);
out:
	free(r.v);
	return rc;
}

int qp_ulp_entry(struct qp *p, const char *key)
{
	unsigned col = (unsigned)(p->c - p->ls) + 1;

	for (size_t i = 0; i < sizeof(ulp_names) / sizeof(ulp_names[0]); i++)
		if (!strcasecmp(key, ulp_names[i])) {
			p->c += strlen(key);
			return ulp_line(p, (enum ulp)i, col);
		}
	return 1;
}
