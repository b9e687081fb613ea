/*
 * routing.c - the table of routing engines and the fallback chain.
 *
 * The daemon names engines the way OpenSM's routing_engine option does,
 * as a comma-separated list tried in order; the first engine that returns
 * tables wins.  A name we do not know is a configuration error, caught
 * before any engine runs, not a reason to fall back.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"

static const struct routing_engine *const engines[] = {
	&routing_minhop,
	&routing_auto,
	&routing_ftree,
	&routing_updn,
	&routing_dnup,
	&routing_dfsssp,
	&routing_nue,
	&routing_file,
	&routing_torus,
	&routing_dfplus,
};

#define N_ENGINES	(sizeof(engines) / sizeof(engines[0]))

/*
 * OpenSM's engine names that name no engine of ours: each maps to the
 * engine that keeps its promise (deadlock freedom where the name promises
 * it).  `prefer` names an engine of ours to use instead when it is in
 * engines[] (the torus engine for dor and torus-2QoS).
 */
static const struct routing_alias {
	const char *name;
	const char *prefer;
	const struct routing_engine *to;
	const char *why;
} aliases[] = {
	{ "lash", NULL, &routing_nue_any,
	  "deadlock-free on as many VLs as the fabric allows, as LASH" },
	{ "sssp", NULL, &routing_nue_one,
	  "balanced paths on 1 VL, deadlock-free too" },
	{ "dor", "torus", &routing_nue_any,
	  "deadlock-free on any topology" },
	{ "torus-2QoS", "torus", &routing_nue_any,
	  "deadlock-free on any topology" },
};

#define N_ALIASES	(sizeof(aliases) / sizeof(aliases[0]))

static const struct routing_alias *alias_n(const char *name, size_t len)
{
	for (size_t i = 0; i < N_ALIASES; i++)
		if (strlen(aliases[i].name) == len &&
		    !strncmp(aliases[i].name, name, len))
			return &aliases[i];
	return NULL;
}

static const struct routing_engine *alias_engine(const struct routing_alias *a)
{
	const struct routing_engine *e = a->prefer ? routing_find(a->prefer)
						   : NULL;

	return e ? e : a->to;
}
#define MAX_CHAIN	16

static const struct routing_engine *find_n(const char *name, size_t len);

/* An engine of that name, or the one an OpenSM name maps to (aliases). */
const struct routing_engine *routing_find(const char *name)
{
	return find_n(name, strlen(name));
}

static const struct routing_engine *find_n(const char *name, size_t len)
{
	const struct routing_alias *a;

	for (size_t i = 0; i < N_ENGINES; i++)
		if (strlen(engines[i]->name) == len &&
		    !strncmp(engines[i]->name, name, len))
			return engines[i];
	a = alias_n(name, len);
	return a ? alias_engine(a) : NULL;
}

void routing_aliases(const char *list, char *buf, size_t len)
{
	const char *s = list ? list : "";
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	while (*s && used < len) {
		size_t n = strcspn(s, ", \t");
		const struct routing_alias *a = alias_n(s, n);

		if (a) {
			int w = snprintf(buf + used, len - used,
					 "%s%s -> %s (%s)", used ? "; " : "",
					 a->name, alias_engine(a)->name,
					 alias_engine(a) == a->to ? a->why :
					 "its own engine");

			if (w > 0)
				used += (size_t)w;
		}
		s += n;
		s += strspn(s, ", \t");
	}
}

#define NO_FALLBACK	"no_fallback"

/* The list holds the word no_fallback (not just minhop). */
static bool fallback_word(const char *list)
{
	const char *p = list;
	size_t l = strlen(NO_FALLBACK);

	while ((p = strstr(p, NO_FALLBACK)) != NULL) {
		bool start = p == list || p[-1] == ',' || p[-1] == ' ' ||
			     p[-1] == '\t';
		char e = p[l];

		if (start && (e == '\0' || e == ',' || e == ' ' || e == '\t'))
			return true;
		p += l;
	}
	return false;
}

/*
 * Split "a, b,c" into engines; -EINVAL naming the first bad entry.  The
 * word no_fallback (OpenSM's) is no engine: it clears *fallback, which
 * otherwise says whether minhop should be tried after the list.
 */
static int parse_list(const char *list, const struct routing_engine **chain,
		      size_t *n, bool *fallback, char *err, size_t errlen)
{
	const char *s = list;

	*n = 0;
	*fallback = true;
	for (;;) {
		const char *start, *end;

		while (*s == ' ' || *s == '\t')
			s++;
		start = s;
		while (*s && *s != ',')
			s++;
		end = s;
		while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if (end == start) {
			snprintf(err, errlen, "empty routing engine name in \"%s\"",
				 list);
			return -EINVAL;
		}
		if (*n == MAX_CHAIN) {
			snprintf(err, errlen, "more than %d routing engines in "
				 "\"%s\"", MAX_CHAIN, list);
			return -EINVAL;
		}
		if ((size_t)(end - start) == strlen(NO_FALLBACK) &&
		    !strncmp(start, NO_FALLBACK, strlen(NO_FALLBACK))) {
			*fallback = false;
		} else {
			chain[*n] = find_n(start, (size_t)(end - start));
			if (!chain[*n]) {
				char known[192];

				routing_engine_names(known, sizeof(known));
				snprintf(err, errlen, "unknown routing engine "
					 "\"%.*s\" (known: %s)",
					 (int)(end - start), start, known);
				return -EINVAL;
			}
			if (chain[*n] == &routing_minhop)
				*fallback = false;
			(*n)++;
			/* dor, torus-2QoS: our torus engine refuses a fabric
			 * that is no torus (or lost too much); the name's
			 * promise, deadlock freedom, is then kept by the
			 * general engine rather than the minhop fallback */
			const struct routing_alias *a =
				alias_n(start, (size_t)(end - start));
			if (a && chain[*n - 1] != a->to && *n < MAX_CHAIN)
				chain[(*n)++] = a->to;
		}
		if (!*s)
			return 0;
		s++;
	}
}

int routing_run(const char *list, const struct fabric *f,
		struct routing_result *out, char *err, size_t errlen)
{
	return routing_run_opts(list, f, NULL, out, err, errlen);
}

int routing_run_opts(const char *list, const struct fabric *f,
		     const struct routing_opts *o, struct routing_result *out,
		     char *err, size_t errlen)
{
	static const struct routing_opts none;

	const struct routing_engine *chain[MAX_CHAIN + 1];
	struct routing_opts opts = o ? *o : none;
	char reason[256], why[512];
	size_t n, used = 0;
	bool fallback;
	struct vl_split plan;
	bool qos = false;
	int rc;

	if (errlen)
		err[0] = '\0';
	memset(out, 0, sizeof(*out));
	rc = parse_list(list ? list : "", chain, &n, &fallback, err, errlen);
	if (rc < 0)
		return rc;
	if (!n) {
		snprintf(err, errlen, "no routing engine in \"%s\"", list);
		return -EINVAL;
	}
	/* auto chains its own fallbacks, ending with minhop */
	for (size_t i = 0; i < n; i++)
		if (chain[i] == &routing_auto)
			fallback = false;
	if (fallback && opts.minhop_last)
		chain[n++] = &routing_minhop;
	/* no_fallback also tells auto to run only the engine it picks */
	opts.no_fallback = opts.no_fallback || fallback_word(list);
	/* QoS classes first: each takes its share of the VLs, the layers
	 * live within one share (routing/vlsplit.h) */
	if (opts.qos && vlsplit_plan(opts.qos, vlsplit_fabric_vls(f,
				     opts.max_layers), opts.max_layers,
				     &plan) == 0) {
		qos = true;
		opts.max_layers = plan.budget;
		opts.max_sls = plan.sl_budget;
	}

	/* Collect every engine's reason: "updn: no roots; minhop: ...". */
	why[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		reason[0] = '\0';
		rc = chain[i]->route(f, &opts, out, reason, sizeof(reason));
		if (rc == 0) {
			char inner[sizeof(out->fallback)];

			/* an engine that delegates (auto) names the engine
			 * that made the tables and its own fallbacks */
			if (!out->engine)
				out->engine = chain[i]->name;
			out->n_nodes = f->n_nodes;
			snprintf(inner, sizeof(inner), "%s", out->fallback);
			routing_fmt(out->fallback, sizeof(out->fallback),
				    "%s%s%s", why, why[0] && inner[0] ? "; " : "",
				    inner);
			if (qos) {
				out->split = plan;
				vlsplit_layout(&out->split, out->n_layers);
			}
			if (errlen)
				err[0] = '\0';
			return 0;
		}
		routing_result_free(out);
		if (used < sizeof(why)) {
			int w = snprintf(why + used, sizeof(why) - used,
					 "%s%s: %s", used ? "; " : "",
					 chain[i]->name,
					 reason[0] ? reason : "failed");
			if (w > 0)
				used += (size_t)w;
		}
	}
	snprintf(err, errlen, "%s", why);
	return rc;
}

int routing_check_list(const char *list, char *err, size_t errlen)
{
	const struct routing_engine *chain[MAX_CHAIN];
	size_t n;
	bool fallback;
	int rc = parse_list(list, chain, &n, &fallback, err, errlen);

	if (rc == 0 && !n) {
		snprintf(err, errlen, "no routing engine in \"%s\"", list);
		rc = -EINVAL;
	}
	return rc;
}

void routing_engine_names(char *buf, size_t len)
{
	size_t used = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < N_ENGINES + N_ALIASES && used < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
				 i < N_ENGINES ? engines[i]->name
					       : aliases[i - N_ENGINES].name);

		if (w > 0)
			used += (size_t)w;
	}
}

void routing_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

void routing_result_free(struct routing_result *r)
{
	if (r->lft)
		for (size_t i = 0; i < r->n_nodes; i++)
			free(r->lft[i].port);
	free(r->lft);
	if (r->sl)
		for (size_t i = 0; i < r->n_nodes; i++)
			free(r->sl[i]);
	free(r->sl);
	if (r->port_class)
		for (size_t i = 0; i < r->n_nodes; i++)
			free(r->port_class[i]);
	free(r->port_class);
	memset(r, 0, sizeof(*r));
}

long routing_number_switches(const struct fabric *f, int32_t **sw_idx,
			     size_t *ports)
{
	long S = 0;

	*ports = 0;
	*sw_idx = malloc((f->n_nodes + 1) * sizeof(**sw_idx));
	if (!*sw_idx)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_nodes; i++) {
		(*sw_idx)[i] = -1;
		if (f->nodes[i].type == NODE_TYPE_SWITCH) {
			(*sw_idx)[i] = (int32_t)S++;
			*ports += (size_t)f->nodes[i].num_ports + 1;
		}
	}
	return S;
}

int routing_alloc_tables(const struct fabric *f, struct routing_result *out,
			 uint16_t top)
{
	out->n_nodes = f->n_nodes;
	out->lft = calloc(f->n_nodes ? f->n_nodes : 1, sizeof(*out->lft));
	if (!out->lft)
		return -ENOMEM;
	for (size_t i = 0; i < f->n_nodes; i++) {
		if (f->nodes[i].type != NODE_TYPE_SWITCH)
			continue;
		out->lft[i].top = top;
		out->lft[i].port = malloc((size_t)top + 1);
		if (!out->lft[i].port) {
			routing_result_free(out);
			return -ENOMEM;
		}
		memset(out->lft[i].port, LFT_NO_PATH, (size_t)top + 1);
	}
	return 0;
}
