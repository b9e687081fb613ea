/*
 * ibsmctl_part.c - `ibsmctl partitions`: check, list and show a
 * partitions.conf, and edit it (add, remove, set) keeping every byte
 * around the edit.  Works on the file alone: no port is opened.
 *
 * An edit is validated with part_parse before anything is written; an
 * edit that would give a file with errors is refused with those errors
 * and the file is left as it was.  The old file is kept as FILE~ and the
 * new one written atomically (temp file, fsync, rename).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "partitions/edit.h"
#include "partitions/partitions.h"
#include "config/fileutil.h"
#include "tools/ibsmctl.h"

static void part_usage(FILE *f)
{
	fprintf(f,
"usage: ibsmctl partitions check FILE\n"
"       ibsmctl partitions list FILE\n"
"       ibsmctl partitions show FILE NAME\n"
"       ibsmctl partitions add FILE 'DEFINITION'\n"
"       ibsmctl partitions remove FILE NAME\n"
"       ibsmctl partitions set FILE NAME MEMBER[=full|limited|both]\n"
"       ibsmctl partitions apply FILE [--from NEWFILE] --pidfile PIDFILE\n");
}


static void print_diag(const char *file, const struct part_diag *d)
{
	char buf[512];
	size_t i;

	for (i = 0; i < d->n_errors; i++) {
		part_error_format(NULL, file, &d->errors[i], buf, sizeof(buf));
		fprintf(stderr, "%s\n", buf);
	}
	for (i = 0; i < d->n_warnings; i++) {
		const struct part_error *w = &d->warnings[i];

		fprintf(stderr, "%s:%u:%u: warning: %s\n", file, w->line,
			w->col, w->msg);
	}
}

/* Parse `text`: 0 clean, 1 errors (printed), -errno. */
static int validate(const char *file, const char *text, size_t len,
		    struct part_config *c)
{
	/* As ibsm without --allow_both_pkeys: `both` warns (read as full). */
	struct part_options opt = { .allow_both_pkeys = false };
	struct part_config tmp;
	struct part_diag d = { 0 };
	int rc = part_parse(file, text, len, &opt, c ? c : &tmp, &d);

	print_diag(file, &d);
	part_diag_free(&d);
	if (rc == -EINVAL)
		return 1;
	if (rc < 0)
		return rc;
	if (!c)
		part_config_free(&tmp);
	return 0;
}

static int load(const char *file, char **text, size_t *len)
{
	int rc = read_file_all(file, text, len);

	if (rc < 0)
		fprintf(stderr, "ibsmctl: cannot read %s: %s\n", file,
			strerror(-rc));
	return rc;
}

static const char *membership_str(enum part_membership m)
{
	return m == PART_FULL ? "full" : m == PART_BOTH ? "both" : "limited";
}

static void print_member(FILE *f, const struct part_member *m)
{
	static const char *const kw[] = {
		[PART_M_ALL] = "ALL", [PART_M_ALL_CAS] = "ALL_CAS",
		[PART_M_ALL_SWITCHES] = "ALL_SWITCHES",
		[PART_M_ALL_ROUTERS] = "ALL_ROUTERS", [PART_M_SELF] = "SELF",
	};

	if (m->kind == PART_M_GUID)
		fprintf(f, "0x%016llx", (unsigned long long)m->guid);
	else
		fputs(kw[m->kind], f);
	fprintf(f, "=%s", membership_str(m->membership));
}

static void print_flags(FILE *f, const struct part *p)
{
	const char *sep = "";

#define FLAG(cond, ...) do { if (cond) { fputs(sep, f); \
	fprintf(f, __VA_ARGS__); sep = ","; } } while (0)
	FLAG(p->ipoib, "ipoib");
	FLAG(p->indx0, "indx0");
	FLAG(p->rate, "rate=%u", p->rate);
	FLAG(p->mtu, "mtu=%u", p->mtu);
	FLAG(p->sl, "sl=%u", p->sl);
	FLAG(p->scope, "scope=%u", p->scope);
	FLAG(p->qkey, "Q_Key=0x%x", p->qkey);
	FLAG(p->tclass, "TClass=%u", p->tclass);
	FLAG(p->flow_label, "FlowLabel=0x%x", p->flow_label);
	FLAG(true, "defmember=%s", membership_str(p->defmember));
#undef FLAG
}

static void print_part(const struct part *p, bool detail)
{
	size_t i;

	printf("%-20s 0x%04x%s ", p->name, p->pkey,
	       p->pkey_given ? "" : "*");
	print_flags(stdout, p);
	if (!detail) {
		printf(" members=%zu\n", p->n_members);
		return;
	}
	printf("\n");
	if (p->line)
		printf("  defined at line %u%s\n", p->line,
		       p->pkey_given ? "" : " (P_Key generated)");
	for (i = 0; i < p->n_members; i++) {
		printf("  ");
		print_member(stdout, &p->members[i]);
		if (p->members[i].line)
			printf("  (line %u)", p->members[i].line);
		else
			printf("  (built in)");
		printf("\n");
	}
	for (i = 0; i < p->n_mgroups; i++) {
		char gid[INET6_ADDRSTRLEN];

		if (!inet_ntop(AF_INET6, p->mgroups[i].mgid, gid, sizeof(gid)))
			strcpy(gid, "?");
		printf("  mgid=%s  (line %u)\n", gid, p->mgroups[i].line);
	}
}

/* list / show: 0, 1 (errors in the file), -errno. */
static int cmd_list(const char *file, const char *name)
{
	struct part_config c;
	char *text;
	size_t len, i;
	int rc = load(file, &text, &len), found = 0;

	if (rc < 0)
		return 1;
	rc = validate(file, text, len, &c);
	free(text);
	if (rc)
		return 1;
	for (i = 0; i < c.n_parts; i++) {
		if (name && strcmp(c.parts[i].name, name))
			continue;
		print_part(&c.parts[i], name != NULL);
		found++;
	}
	part_config_free(&c);
	if (name && !found) {
		fprintf(stderr, "ibsmctl: %s: no partition named '%s'\n",
			file, name);
		return 1;
	}
	return 0;
}

static int write_text(FILE *fp, const void *arg)
{
	const struct { const char *p; size_t n; } *t = arg;

	return fwrite(t->p, 1, t->n, fp) == t->n ? 0 : -EIO;
}

/* Validate `text` and write it to `file`, the old one kept as FILE~. */
static int commit(const char *file, const char *text, size_t len)
{
	struct { const char *p; size_t n; } n = { text, len };
	int rc = validate(file, text, len, NULL);

	if (rc) {
		if (rc > 0)
			fprintf(stderr, "ibsmctl: %s: edit refused (the result "
				"would not parse); file unchanged\n", file);
		return 1;
	}
	rc = write_file_atomic_backup(file, "~", write_text, &n);
	if (rc < 0) {
		fprintf(stderr, "ibsmctl: cannot write %s: %s\n", file,
			strerror(-rc));
		return 1;
	}
	return 0;
}

static int cmd_edit(const char *op, int argc, char **argv)
{
	const char *file = argv[0];
	char *text, *out = NULL, *mem = NULL;
	size_t len, out_len;
	int rc;

	if (load(file, &text, &len) < 0)
		return 1;
	if (!strcmp(op, "add")) {
		rc = part_edit_add(text, len, argv[1], &out, &out_len);
	} else if (!strcmp(op, "remove")) {
		rc = part_edit_remove(text, len, argv[1], &out, &out_len);
	} else {
		char *eq;

		mem = strdup(argv[2]);
		if (!mem) {
			free(text);
			return 1;
		}
		eq = strchr(mem, '=');
		if (eq)
			*eq++ = '\0';
		rc = part_edit_set(text, len, argv[1], mem, eq, &out, &out_len);
	}
	(void)argc;
	if (rc == -ENOENT)
		fprintf(stderr, "ibsmctl: %s: no partition named '%s'\n", file,
			argv[1]);
	else if (rc == -EINVAL)
		fprintf(stderr, "ibsmctl: bad %s: expected %s\n",
			!strcmp(op, "add") ? "definition" : "member",
			!strcmp(op, "add") ?
			"'Name[=PKey][,flag]... : members' with at most a final ';'" :
			"MEMBER[=full|limited|both] without , ; : # or spaces");
	else if (rc < 0)
		fprintf(stderr, "ibsmctl: %s\n", strerror(-rc));
	if (rc == 0)
		rc = commit(file, out, out_len);
	else
		rc = 1;
	free(out);
	free(mem);
	free(text);
	return rc;
}

/* The pid in `path` (ibsm -J): > 1 and a process named ibsm or opensm,
 * so a stale file naming a reused pid gets no SIGHUP.  0 or -1. */
static int read_pid(const char *path, pid_t *pid)
{
	char *text, comm[64] = "", proc[64], *end;
	size_t len;
	long v;
	FILE *fp;

	if (load(path, &text, &len) < 0)
		return -1;
	errno = 0;
	v = strtol(text, &end, 10);
	while (*end == '\n' || *end == ' ')
		end++;
	if (errno || end == text || *end || v <= 1 || v != (pid_t)v) {
		fprintf(stderr, "ibsmctl: %s: expected a pid (one number "
			"above 1)\n", path);
		free(text);
		return -1;
	}
	free(text);
	snprintf(proc, sizeof(proc), "/proc/%ld/comm", v);
	fp = fopen(proc, "r");
	if (fp) {
		if (!fgets(comm, sizeof(comm), fp))
			comm[0] = '\0';
		fclose(fp);
		if (!strstr(comm, "ibsm") && !strstr(comm, "opensm")) {
			fprintf(stderr, "ibsmctl: %s: pid %ld is no ibsm or "
				"opensm (stale pid file?)\n", path, v);
			return -1;
		}
	} else if (kill((pid_t)v, 0) < 0) {
		fprintf(stderr, "ibsmctl: %s: pid %ld: %s\n", path, v,
			strerror(errno));
		return -1;
	}
	*pid = (pid_t)v;
	return 0;
}

/* apply: FILE valid (or NEWFILE, then written over FILE with FILE~
 * kept), then SIGHUP to the SM, which re-reads FILE. */
static int cmd_apply(int argc, char **argv)
{
	const char *file = NULL, *from = NULL, *pidf = NULL;
	char *text, *cur;
	size_t len, cur_len;
	pid_t pid;
	int i, rc;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--pidfile") && i + 1 < argc)
			pidf = argv[++i];
		else if (!strcmp(argv[i], "--from") && i + 1 < argc)
			from = argv[++i];
		else if (!file && argv[i][0] != '-')
			file = argv[i];
		else
			file = NULL, i = argc;
	}
	if (!file || !pidf) {
		part_usage(stderr);
		return 2;
	}
	if (read_pid(pidf, &pid) < 0)
		return 1;
	if (load(from ? from : file, &text, &len) < 0)
		return 1;
	if (from) {
		/* The new content over FILE, the old one kept as FILE~. */
		if (load(file, &cur, &cur_len) < 0) {
			free(text);
			return 1;
		}
		rc = commit(file, text, len);
		free(cur);
	} else {
		rc = validate(file, text, len, NULL) ? 1 : 0;
		if (rc)
			fprintf(stderr, "ibsmctl: %s: not applied (the SM keeps "
				"its partitions)\n", file);
	}
	free(text);
	if (rc)
		return 1;
	if (kill(pid, SIGHUP) < 0) {
		fprintf(stderr, "ibsmctl: cannot signal pid %ld: %s\n",
			(long)pid, strerror(errno));
		return 1;
	}
	printf("%s: valid; SIGHUP sent to pid %ld (applied in its next heavy "
	       "sweep)\n", file, (long)pid);
	return 0;
}

int part_main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	argc -= 2;
	argv += 2;
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		part_usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "check") && argc == 1) {
		char *text;
		size_t len;
		int rc;

		if (load(argv[0], &text, &len) < 0)
			return 1;
		rc = validate(argv[0], text, len, NULL);
		free(text);
		return rc ? 1 : 0;
	}
	if (!strcmp(cmd, "list") && argc == 1)
		return cmd_list(argv[0], NULL);
	if (!strcmp(cmd, "show") && argc == 2)
		return cmd_list(argv[0], argv[1]);
	if ((!strcmp(cmd, "add") || !strcmp(cmd, "remove")) && argc == 2)
		return cmd_edit(cmd, argc, argv);
	if (!strcmp(cmd, "set") && argc == 3)
		return cmd_edit(cmd, argc, argv);
	if (!strcmp(cmd, "apply"))
		return cmd_apply(argc, argv);
	part_usage(stderr);
	return 2;
}
