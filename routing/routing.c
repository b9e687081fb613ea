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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"

static const struct routing_engine *const engines[] = {
	&routing_minhop,
	&routing_ftree,
};

#define N_ENGINES	(sizeof(engines) / sizeof(engines[0]))
#define MAX_CHAIN	16

const struct routing_engine *routing_find(const char *name)
{
	for (size_t i = 0; i < N_ENGINES; i++)
		if (!strcmp(engines[i]->name, name))
			return engines[i];
	return NULL;
}

static const struct routing_engine *find_n(const char *name, size_t len)
{
	for (size_t i = 0; i < N_ENGINES; i++)
		if (strlen(engines[i]->name) == len &&
		    !strncmp(engines[i]->name, name, len))
			return engines[i];
	return NULL;
}

/* Split "a, b,c" into engines; -EINVAL naming the first bad entry. */
static int parse_list(const char *list, const struct routing_engine **chain,
		      size_t *n, char *err, size_t errlen)
{
	const char *s = list;

	*n = 0;
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
		chain[*n] = find_n(start, (size_t)(end - start));
		if (!chain[*n]) {
			snprintf(err, errlen, "unknown routing engine \"%.*s\"",
				 (int)(end - start), start);
			return -EINVAL;
		}
		(*n)++;
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

	const struct routing_engine *chain[MAX_CHAIN];
	char reason[256];
	size_t n, used = 0;
	int rc;

	if (errlen)
		err[0] = '\0';
	memset(out, 0, sizeof(*out));
	rc = parse_list(list ? list : "", chain, &n, err, errlen);
	if (rc < 0)
		return rc;

	/* Collect every engine's reason: "updn: no roots; minhop: ...". */
	for (size_t i = 0; i < n; i++) {
		reason[0] = '\0';
		rc = chain[i]->route(f, o ? o : &none, out, reason,
				     sizeof(reason));
		if (rc == 0) {
			out->engine = chain[i]->name;
			out->n_nodes = f->n_nodes;
			if (errlen)
				err[0] = '\0';
			return 0;
		}
		routing_result_free(out);
		if (used < errlen) {
			int w = snprintf(err + used, errlen - used, "%s%s: %s",
					 used ? "; " : "", chain[i]->name,
					 reason[0] ? reason : "failed");
			if (w > 0)
				used += (size_t)w;
		}
	}
	return rc;
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
	memset(r, 0, sizeof(*r));
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
