/*
 * cli.c - option parsing and the four commands.
 *
 *   show [--json]   inventory from sysfs, no configuration needed
 *   check           configuration and host; exit 1 on any error or on a
 *                   difference apply would fix
 *   plan            the diff of every change apply would make
 *   apply           make them
 *
 * The steps are the same for the last three: parse the INI file, read
 * the host, compare (check.c), build the plan (plan.c).  Errors at any
 * step stop plan and apply before anything is written.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tools/ibhost/check.h"
#include "tools/ibhost/cli.h"
#include "tools/ibhost/plan.h"

struct opts {
	const char	*config;
	const char	*root;
	const char	*command;
	bool		 dry_run;
	bool		 quiet;
	bool		 json;
};

static void usage(FILE *fp)
{
	fputs("usage: ibhost [-c FILE] [-r DIR] [-n] [-q] show [--json] | "
	      "check | plan | apply\n"
	      "  -c, --config FILE  configuration (default ROOT"
	      IBH_DEFAULT_CONFIG ")\n"
	      "  -r, --root DIR     work on the tree under DIR (default /)\n"
	      "  -n, --dry-run      print external commands instead of "
	      "running them\n"
	      "  -q, --quiet        only errors and warnings\n"
	      "  -j, --json         show: JSON instead of tables\n", fp);
}

/* "--root DIR", "--root=DIR" or "-r DIR"; *i moves past what it used. */
static bool opt_value(int argc, char **argv, int *i, const char *s,
		      const char *l, const char **val, bool *bad)
{
	const char *a = argv[*i];
	size_t n = strlen(l);

	if (!strncmp(a, l, n) && a[n] == '=') {
		*val = a + n + 1;
		return true;
	}
	if (strcmp(a, s) && strcmp(a, l))
		return false;
	if (*i + 1 >= argc) {
		*bad = true;
		return true;
	}
	*val = argv[++*i];
	return true;
}

/* 0 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct opts *o, FILE *out,
		      FILE *err)
{
	bool bad = false;

	for (int i = 1; i < argc && !bad; i++) {
		const char *a = argv[i];

		if (opt_value(argc, argv, &i, "-c", "--config", &o->config,
			      &bad) ||
		    opt_value(argc, argv, &i, "-r", "--root", &o->root, &bad))
			continue;
		if (!strcmp(a, "-n") || !strcmp(a, "--dry-run"))
			o->dry_run = true;
		else if (!strcmp(a, "-q") || !strcmp(a, "--quiet"))
			o->quiet = true;
		else if (!strcmp(a, "-j") || !strcmp(a, "--json"))
			o->json = true;
		else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(out);
			return -1;
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			fprintf(out, "ibhost %s\n", PACKAGE_VERSION);
			return -1;
		} else if (a[0] == '-' || o->command) {
			fprintf(err, "ibhost: unexpected argument \"%s\"\n", a);
			bad = true;
		} else {
			o->command = a;
		}
	}
	if (!bad && !o->command) {
		fputs("ibhost: expected a command: show, check, plan or "
		      "apply\n", err);
		bad = true;
	}
	if (!bad && strcmp(o->command, "show") && strcmp(o->command, "check") &&
	    strcmp(o->command, "plan") && strcmp(o->command, "apply")) {
		fprintf(err, "ibhost: unknown command \"%s\": expected show, "
			"check, plan or apply\n", o->command);
		bad = true;
	}
	if (!bad && o->json && strcmp(o->command, "show")) {
		fputs("ibhost: --json goes with show only\n", err);
		bad = true;
	}
	if (bad) {
		usage(err);
		return 2;
	}
	return 0;
}

/* Errors and warnings (and, for check, pending differences). */
static void print_diags(FILE *err, const struct diags *d, bool pending)
{
	struct diags shown = { 0 };

	for (size_t i = 0; i < d->n; i++) {
		const struct diag *g = &d->v[i];

		if (g->level == DIAG_PENDING && !pending)
			continue;
		diag_add(&shown, g->level, g->file, g->line, "%s", g->msg);
	}
	diags_print(err, &shown);
	diags_free(&shown);
}

static int run(const struct opts *o, const char *root,
	       const struct ibhost_env *env)
{
	struct ibh_conf conf;
	struct inventory inv;
	struct diags d = { 0 };
	struct plan plan = { 0 };
	char *config = o->config ? xstrdup(o->config) :
			root_path(root, IBH_DEFAULT_CONFIG);
	bool is_check = !strcmp(o->command, "check");
	int status = 0;

	if (conf_load(&conf, config, &d) < 0) {
		print_diags(env->err, &d, true);
		status = 1;
		goto out_conf;
	}
	inventory_load(&inv, root);
	check_host(&conf, &inv, root, &d);
	if (d.errors == 0 || is_check)
		plan_build(&plan, &conf, &inv, root, &d);
	print_diags(env->err, &d, is_check);

	if (is_check) {
		status = d.errors || d.pending ? 1 : 0;
		if (!status && !o->quiet)
			fprintf(env->out, "%s: configuration OK; %zu change%s "
				"pending%s\n", config, plan.n,
				plan.n == 1 ? "" : "s",
				plan.n ? " (see ibhost plan)" : "");
	} else if (d.errors) {
		fprintf(env->err, "ibhost: %u error%s; nothing %s\n", d.errors,
			d.errors == 1 ? "" : "s",
			strcmp(o->command, "plan") ? "applied" : "planned");
		status = 1;
	} else if (!strcmp(o->command, "plan")) {
		plan_print(env->out, &plan);
	} else {
		struct runner r = {
			.dry_run = o->dry_run || (root[0] && !env->hook),
			.out = o->quiet ? NULL : env->out,
			.hook = env->hook,
			.ctx = env->ctx,
		};
		struct diags ad = { 0 };
		FILE *out = env->out;
		FILE *devnull = NULL;

		if (o->quiet)
			out = devnull = fopen("/dev/null", "we");
		if (!out)
			out = env->out;
		if (plan_apply(&plan, root, &r, out, &ad) < 0)
			status = 1;
		print_diags(env->err, &ad, false);
		diags_free(&ad);
		if (devnull)
			fclose(devnull);
	}
	plan_free(&plan);
	inventory_free(&inv);
out_conf:
	conf_free(&conf);
	diags_free(&d);
	free(config);
	return status;
}

int ibhost_main(int argc, char **argv, const struct ibhost_env *env)
{
	struct opts o = { 0 };
	char *root;
	int status = parse_args(argc, argv, &o, env->out, env->err);

	if (status)
		return status < 0 ? 0 : status;
	root = root_normalize(o.root ? o.root : "/");
	if (!strcmp(o.command, "show")) {
		struct inventory inv;

		inventory_load(&inv, root);
		if (o.json)
			show_json(env->out, &inv);
		else
			show_table(env->out, &inv);
		inventory_free(&inv);
	} else {
		status = run(&o, root, env);
	}
	free(root);
	fflush(env->out);
	fflush(env->err);
	return status;
}
