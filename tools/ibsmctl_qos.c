/*
 * ibsmctl_qos.c - `ibsmctl qos check FILE`: parse a QoS policy file
 * (qos/) and print the first error as FILE:LINE:COLUMN (exit 2) or a
 * summary of what it defines (exit 0); works on the file alone.
 * `ibsmctl qos show [...]`: ask the running daemon (its control socket)
 * for the QoS in force, or for what a PathRecord between two ports gets
 * (exit 0; 1 when the daemon answers ERR or not at all; 2 usage).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qos/qos.h"
#include "tools/ibsmctl.h"

static void qos_usage(FILE *f)
{
	fputs("usage: ibsmctl qos check FILE\n"
	      "       ibsmctl [--socket PATH | -i NAME] qos show [--json]\n"
	      "       ibsmctl [--socket PATH | -i NAME] qos show [--json]"
	      " --src END --dst END\n"
	      "               [--sid SERVICE_ID] [--pkey PKEY]"
	      " [--qos-class CLASS]\n"
	      "  END: a port GUID or node GUID (0x...), a LID, or a node"
	      " description\n"
	      "  (whole, or its first word), optionally followed by :PORT\n",
	      f);
}

static void summary(const char *file, const struct qos_policy *p)
{
	size_t groups = 0, levels = 0, ulps = 0;

	for (size_t i = 0; i < p->n_groups; i++)
		groups += !p->groups[i].generated;
	for (size_t i = 0; i < p->n_levels; i++)
		levels += !p->levels[i].simple;
	for (size_t i = 0; i < p->n_rules; i++)
		ulps += p->rules[i].from_ulp;
	printf("%s: OK: %zu port groups, %zu QoS levels, %zu match rules, "
	       "%zu qos-ulps rules, %zu vlarb scopes, %zu sl2vl scopes\n",
	       file, groups, levels, p->n_rules - ulps, ulps, p->n_vlarb,
	       p->n_sl2vl);
	for (size_t i = 0; i < p->n_levels; i++) {
		const struct qos_level *l = &p->levels[i];
		size_t used = 0;
		char sl[12] = "-";

		for (size_t r = 0; r < p->n_rules; r++)
			used += p->rules[r].level == i;
		if (l->sl >= 0)
			snprintf(sl, sizeof(sl), "%d", l->sl);
		printf("level %-24s sl %-2s rules %zu%s\n", l->name, sl, used,
		       i == p->default_level ? " (default)" : "");
	}
}

int qos_encode_end(const char *in, char *out, size_t size)
{
	static const char keep[] = "abcdefghijklmnopqrstuvwxyz"
				   "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
				   "._:/-+,=@[]()";
	size_t o = 0;

	if (!*in)
		return -EINVAL;
	for (; *in; in++) {
		unsigned char c = (unsigned char)*in;
		int w = strchr(keep, c) ? snprintf(out + o, size - o, "%c", c)
					: snprintf(out + o, size - o, "%%%02X", c);

		if (w < 0 || (size_t)w >= size - o)
			return -E2BIG;
		o += (size_t)w;
	}
	return 0;
}

static int check_main(const char *file)
{
	struct qos_policy p;
	struct qos_error e;
	int rc;

	rc = qos_load(file, &p, &e);
	if (rc == -EINVAL || rc == -E2BIG) {
		fprintf(stderr, "%s:%u:%u: %s\n", file, e.line, e.col, e.msg);
		return 2;
	}
	if (rc) {
		fprintf(stderr, "ibsmctl: %s: %s\n", file, strerror(-rc));
		return 2;
	}
	summary(file, &p);
	qos_policy_free(&p);
	return 0;
}

struct show_opts {
	const char *sock, *instance, *src, *dst, *sid, *pkey, *cls;
	bool json;
};

/* "--name VALUE" or "--name=VALUE" at argv[*i]: the value, or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(argv[*i], name, n))
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n] || *i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

/* One option of `qos show`: 1 taken, 0 not an option of it. */
static int show_opt(struct show_opts *o, int argc, char **argv, int *i)
{
	static const struct { const char *name; size_t off; } opts[] = {
		{ "--socket", offsetof(struct show_opts, sock) },
		{ "--instance", offsetof(struct show_opts, instance) },
		{ "-i", offsetof(struct show_opts, instance) },
		{ "--src", offsetof(struct show_opts, src) },
		{ "--dst", offsetof(struct show_opts, dst) },
		{ "--sid", offsetof(struct show_opts, sid) },
		{ "--pkey", offsetof(struct show_opts, pkey) },
		{ "--qos-class", offsetof(struct show_opts, cls) },
	};

	if (!strcmp(argv[*i], "--json") || !strcmp(argv[*i], "-j")) {
		o->json = true;
		return 1;
	}
	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
		const char *v = opt_value(argc, argv, i, opts[k].name);

		if (v) {
			*(const char **)((char *)o + opts[k].off) = v;
			return 1;
		}
	}
	return 0;
}

/* The request line of qos show; 0 or 2 (usage, said why). */
static int show_request(const struct show_opts *o, char *req, size_t size)
{
	const char *num[3] = { o->sid, o->pkey, o->cls };
	static const char *const key[3] = { "sid", "pkey", "class" };
	char src[260], dst[260];
	size_t used;

	snprintf(req, size, "qos show%s", o->json ? " json" : "");
	if (!o->src && !o->dst && !o->sid && !o->pkey && !o->cls)
		return 0;
	if (!o->src || !o->dst) {
		fprintf(stderr, "ibsmctl: qos show: --src and --dst go"
			" together (and --sid, --pkey, --qos-class need"
			" them)\n");
		return 2;
	}
	if (qos_encode_end(o->src, src, sizeof(src)) < 0 ||
	    qos_encode_end(o->dst, dst, sizeof(dst)) < 0) {
		fprintf(stderr, "ibsmctl: qos show: --src/--dst: expected a"
			" GUID, a LID or a node description (at most 64"
			" bytes)\n");
		return 2;
	}
	used = strlen(req);
	used += (size_t)snprintf(req + used, size - used, " src %s dst %s",
				 src, dst);
	for (int k = 0; k < 3; k++) {
		char *end;

		if (!num[k])
			continue;
		errno = 0;
		(void)strtoull(num[k], &end, 0);
		if (errno || end == num[k] || *end || num[k][0] == '-') {
			fprintf(stderr, "ibsmctl: qos show: --%s %s: expected"
				" a number (decimal or 0x hex)\n", k == 2 ?
				"qos-class" : key[k], num[k]);
			return 2;
		}
		used += (size_t)snprintf(req + used, size - used, " %s %s",
					 key[k], num[k]);
	}
	if (used >= size) {
		fprintf(stderr, "ibsmctl: qos show: request too long\n");
		return 2;
	}
	return 0;
}

static int show_main(const struct show_opts *o)
{
	char req[600], path[PATH_MAX];
	struct ctl_reply r;
	int rc;

	if ((rc = show_request(o, req, sizeof(req))))
		return rc;
	if (o->sock && o->instance) {
		fprintf(stderr, "ibsmctl: --socket or --instance, not both\n");
		return 2;
	}
	if ((rc = ctl_socket_path(o->sock, o->instance, path, sizeof(path))))
		return rc;
	if (ctl_request(path, req, &r) < 0)
		return 1;
	for (size_t i = 0; r.ok && i + 1 < r.n; i++)
		printf("%s\n", r.lines[i]);
	if (!r.ok)
		fprintf(stderr, "ibsmctl: %s\n", ctl_reply_text(&r));
	rc = r.ok ? 0 : 1;
	ctl_reply_free(&r);
	return rc;
}

int qos_main(int argc, char **argv)
{
	struct show_opts o = { 0 };
	const char *words[3];
	size_t nw = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			qos_usage(stdout);
			return 0;
		}
		if (show_opt(&o, argc, argv, &i))
			continue;
		if (argv[i][0] == '-' || nw == 3) {
			qos_usage(stderr);
			return 2;
		}
		words[nw++] = argv[i];
	}
	/* words[0] is "qos" */
	if (nw == 3 && !strcmp(words[1], "check") && !o.json && !o.sock &&
	    !o.instance && !o.src && !o.dst && !o.sid && !o.pkey && !o.cls)
		return check_main(words[2]);
	if (nw == 2 && !strcmp(words[1], "show"))
		return show_main(&o);
	qos_usage(stderr);
	return 2;
}
