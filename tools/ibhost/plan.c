/*
 * plan.c - build, print and carry out the plan (see plan.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/ibhost/diff.h"
#include "tools/ibhost/plan.h"
#include "tools/ibhost/render.h"

/* ---------------------------------------------------------------------
 * Building
 */

static struct action *act_new(struct plan *p, enum action_kind kind,
			      const char *path)
{
	struct action *a;

	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 16;
		p->v = xrealloc(p->v, p->cap * sizeof(*p->v));
	}
	a = &p->v[p->n++];
	memset(a, 0, sizeof(*a));
	a->kind = kind;
	a->path = path ? xstrdup(path) : NULL;
	return a;
}

static void act_cmd(struct plan *p, const char *arg0, ...)
{
	struct action *a = act_new(p, ACT_CMD, NULL);
	const char *s;
	size_t n = 1;
	va_list ap;

	va_start(ap, arg0);
	while (va_arg(ap, const char *))
		n++;
	va_end(ap);
	a->argv = xcalloc(n + 1, sizeof(char *));
	a->argv[0] = xstrdup(arg0);
	n = 1;
	va_start(ap, arg0);
	while ((s = va_arg(ap, const char *)) != NULL)
		a->argv[n++] = xstrdup(s);
	va_end(ap);
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

struct builder {
	struct plan		*p;
	const struct ibh_conf	*c;
	const struct inventory	*inv;
	const char		*root;
	struct diags		*d;
	char		       **wanted;	/* owned files this plan writes */
	size_t			 nwanted;
};

/* Current text of a file under root; false (and an error) if unreadable. */
static bool load(struct builder *b, const char *path, char **text,
		 mode_t *mode)
{
	char *full = root_path(b->root, path);
	struct stat st;
	int rc = read_file(full, text);

	if (rc == -ENOENT || rc == -ENOTDIR) {
		rc = 0;
		*text = NULL;
	} else if (rc < 0) {
		diag_add(b->d, DIAG_ERROR, full, 0, "cannot read: %s",
			 strerror(-rc));
	}
	if (mode && *text && stat(full, &st) == 0)
		*mode = st.st_mode & 07777;
	free(full);
	return rc == 0;
}

/* A file action if new differs from old; takes ownership of new. */
static void want_file(struct builder *b, const char *path, char *old,
		      char *new, mode_t mode, bool hidden)
{
	struct action *a;

	if (same(old, new)) {
		free(old);
		free(new);
		return;
	}
	a = act_new(b->p, ACT_FILE, path);
	a->old = old;
	a->new = new;
	a->mode = mode;
	a->hidden_backup = hidden;
}

/* A shared file: body goes into its block (NULL: the block goes away). */
static void want_block(struct builder *b, const char *path, char *body,
		       bool hidden)
{
	char *old, *new;
	mode_t mode = 0644;
	int bad = 0;

	if (!load(b, path, &old, &mode)) {
		free(body);
		return;
	}
	if (!old && !body) {
		free(body);
		return;
	}
	if (block_merge(old, body, &new, &bad) < 0) {
		char *full = root_path(b->root, path);

		diag_add(b->d, DIAG_ERROR, full, bad, "broken ibhost block: "
			 "expected one \"" BLOCK_BEGIN "\" line followed by "
			 "one \"" BLOCK_END "\" line; fix the file by hand");
		free(full);
		free(old);
		free(body);
		return;
	}
	free(body);
	want_file(b, path, old, new, mode, hidden);
}

/* A file ibhost owns whole; it replaces a user's file of that name too. */
static void want_owned(struct builder *b, const char *path, char *old,
		       char *new, mode_t mode, bool hidden)
{
	b->wanted = xrealloc(b->wanted, (b->nwanted + 1) * sizeof(char *));
	b->wanted[b->nwanted++] = xstrdup(path);
	want_file(b, path, old, new, mode, hidden);
}

static bool is_wanted(const struct builder *b, const char *path)
{
	for (size_t i = 0; i < b->nwanted; i++)
		if (!strcmp(b->wanted[i], path))
			return true;
	return false;
}

/* Owned files in dir that the configuration no longer asks for go. */
static void drop_stale(struct builder *b, const char *dir, const char *prefix,
		       bool hidden)
{
	char *full = root_path(b->root, dir), **names;
	size_t n;

	if (list_dir(full, &names, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			char *path, *old;

			if (strncmp(names[i], prefix, strlen(prefix)) ||
			    strstr(names[i], ".ibhost-bak"))
				continue;
			path = xasprintf("%s/%s", dir, names[i]);
			if (!is_wanted(b, path) && load(b, path, &old, NULL)) {
				if (is_owned(old))
					want_file(b, path, old, NULL, 0,
						  hidden);
				else
					free(old);
			}
			free(path);
		}
		free_names(names, n);
	}
	free(full);
}

static void plan_network(struct builder *b)
{
	const struct ibh_conf *c = b->c;

	for (size_t i = 0; i < c->nipoib; i++) {
		const struct ipoib_conf *ip = &c->ipoib[i];
		char *path, *old;
		mode_t mode = 0644;

		if (c->backend == BACKEND_NETWORKMANAGER) {
			path = xasprintf(DIR_NM "/%s.nmconnection", ip->name);
			if (load(b, path, &old, NULL))
				want_owned(b, path, old, render_nm(c, ip, old),
					   0600, true);
			free(path);
		} else if (c->backend == BACKEND_NETWORKD) {
			path = xasprintf(DIR_NETWORKD "/" NETWORKD_PREFIX
					 "%s.network", ip->name);
			if (load(b, path, &old, &mode))
				want_owned(b, path, old,
					   render_networkd_network(c, ip),
					   mode, false);
			free(path);
			if (!ip->child)
				continue;
			mode = 0644;
			path = xasprintf(DIR_NETWORKD "/" NETWORKD_PREFIX
					 "%s.netdev", ip->name);
			if (load(b, path, &old, &mode))
				want_owned(b, path, old,
					   render_networkd_netdev(c, ip),
					   mode, false);
			free(path);
		}
	}
	drop_stale(b, DIR_NM, "", true);
	drop_stale(b, DIR_NETWORKD, NETWORKD_PREFIX, false);
	want_block(b, PATH_IFUPDOWN, render_ifupdown(c), true);
}

/* Every limits file but the configured one loses an old ibhost block. */
static void plan_limits(struct builder *b)
{
	const struct ibh_conf *c = b->c;
	char *dir = root_path(b->root, DIR_LIMITS_D), **names;
	size_t n;

	if (c->limits.present)
		want_block(b, c->limits.file, render_limits(c), false);
	if (!c->limits.present || strcmp(c->limits.file, PATH_LIMITS)) {
		char *old;

		if (load(b, PATH_LIMITS, &old, NULL) && block_find(old))
			want_block(b, PATH_LIMITS, NULL, false);
		free(old);
	}
	if (list_dir(dir, &names, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			char *path = xasprintf(DIR_LIMITS_D "/%s", names[i]);
			char *old;

			if (str_has_suffix(names[i], ".conf") &&
			    (!c->limits.present ||
			     strcmp(path, c->limits.file)) &&
			    load(b, path, &old, NULL)) {
				if (block_find(old))
					want_block(b, path, NULL, false);
				free(old);
			}
			free(path);
		}
		free_names(names, n);
	}
	free(dir);
}

static void plan_roce(struct builder *b)
{
	const struct ibh_conf *c = b->c;

	if (!b->inv->have_configfs)
		return;		/* check_host() said so */
	for (size_t i = 0; i < c->nroce; i++) {
		const struct roce_conf *r = &c->roce[i];
		char *dir = xasprintf(CONFIGFS_RDMA_CM "/%s", r->dev);
		char *path = xasprintf("%s/ports/%u/default_roce_mode", dir,
				       r->port);
		char *full = root_path(b->root, dir);
		char *new = xasprintf("%s\n", roce_mode_name(r->mode));
		char *old = NULL;
		bool have_dir = is_dir(full);
		struct action *a;

		if (have_dir && !load(b, path, &old, NULL))
			goto next;
		if (old && !strcmp(trim(old), roce_mode_name(r->mode)))
			goto next;
		if (old) {
			char *o = xasprintf("%s\n", trim(old));

			free(old);
			old = o;
		}
		a = act_new(b->p, ACT_ATTR, path);
		a->old = old;
		a->new = new;
		a->mkdir = have_dir ? NULL : xstrdup(dir);
		old = new = NULL;
next:
		free(old);
		free(new);
		free(full);
		free(path);
		free(dir);
	}
}

/* modprobe what is not loaded; xprtrdma and svcrdma are one rpcrdma.ko. */
static void plan_modules(struct builder *b)
{
	const char *done[RDMA_MODULE_COUNT];
	unsigned ndone = 0;

	for (unsigned i = 0; i < RDMA_MODULE_COUNT; i++) {
		const char *mod = rdma_modules[i];
		unsigned j;

		if (!(b->c->modules.mask & (1u << i)) ||
		    inv_module_loaded(b->inv, b->root, mod))
			continue;
		for (j = 0; j < ndone; j++)
			if (!strcmp(done[j], module_provider(mod)))
				break;
		if (j < ndone)
			continue;
		done[ndone++] = module_provider(mod);
		act_cmd(b->p, "modprobe", mod, NULL);
	}
}

/* Whether the plan changes a file whose path starts with prefix. */
static bool touched(const struct plan *p, const char *prefix)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].kind == ACT_FILE &&
		    !strncmp(p->v[i].path, prefix, strlen(prefix)))
			return true;
	return false;
}

int plan_build(struct plan *p, const struct ibh_conf *c,
	       const struct inventory *inv, const char *root,
	       struct diags *d)
{
	struct builder b = { .p = p, .c = c, .inv = inv, .root = root,
			     .d = d };
	unsigned errors = d->errors;
	mode_t mode = 0644;
	char *old, *new;

	memset(p, 0, sizeof(*p));
	want_block(&b, PATH_UDEV_RULES, render_udev(c), false);
	plan_network(&b);
	want_block(&b, PATH_RDMA_CONF, render_modules(c), false);
	plan_limits(&b);
	if (c->nfs.present && load(&b, PATH_NFS_CONF, &old, &mode)) {
		new = render_nfs(c, old);
		want_file(&b, PATH_NFS_CONF, old, new, mode, false);
	}

	if (c->modules.present && inv->have_modules)
		plan_modules(&b);
	for (size_t i = 0; i < c->nsoft; i++)
		if (!inv_find_dev(inv, c->soft[i].name))
			act_cmd(p, "rdma", "link", "add", c->soft[i].name,
				"type", soft_type_name(c->soft[i].type),
				"netdev", c->soft[i].netdev, NULL);
	plan_roce(&b);

	if (touched(p, PATH_UDEV_RULES))
		act_cmd(p, "udevadm", "control", "--reload", NULL);
	if (touched(p, DIR_NM "/"))
		act_cmd(p, "nmcli", "connection", "reload", NULL);
	if (touched(p, DIR_NETWORKD "/"))
		act_cmd(p, "networkctl", "reload", NULL);

	free_names(b.wanted, b.nwanted);
	return d->errors > errors ? -EINVAL : 0;
}

void plan_free(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct action *a = &p->v[i];

		free(a->path);
		free(a->old);
		free(a->new);
		free(a->mkdir);
		for (size_t k = 0; a->argv && a->argv[k]; k++)
			free(a->argv[k]);
		free(a->argv);
	}
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* ---------------------------------------------------------------------
 * Printing
 */

char *backup_path(const char *path, bool hidden)
{
	const char *slash = strrchr(path, '/');

	if (!hidden || !slash)
		return xasprintf("%s.ibhost-bak", path);
	return xasprintf("%.*s/.%s.ibhost-bak", (int)(slash - path), path,
			 slash + 1);
}

void plan_print(FILE *fp, const struct plan *p)
{
	struct sbuf b = { 0 };

	for (size_t i = 0; i < p->n; i++) {
		const struct action *a = &p->v[i];
		char *bak = a->path ? backup_path(a->path,
						  a->hidden_backup) : NULL;

		switch (a->kind) {
		case ACT_FILE:
			if (!a->old)
				sb_printf(&b, "# create %s (mode %04o)\n",
					  a->path, (unsigned)a->mode);
			else if (!a->new)
				sb_printf(&b, "# remove %s (backup %s)\n",
					  a->path, bak);
			else
				sb_printf(&b, "# edit %s (backup %s)\n",
					  a->path, bak);
			diff_unified(&b, a->old ? a->path : "/dev/null",
				     a->new ? a->path : "/dev/null",
				     a->old, a->new);
			break;
		case ACT_ATTR:
			if (a->mkdir)
				sb_printf(&b, "# mkdir %s\n", a->mkdir);
			sb_printf(&b, "# write %s\n", a->path);
			diff_unified(&b, a->old ? a->path : "/dev/null",
				     a->path, a->old, a->new);
			break;
		case ACT_CMD:
			sb_add(&b, "# run: ");
			runner_format(&b, (const char *const *)a->argv);
			sb_putc(&b, '\n');
			break;
		}
		free(bak);
	}
	if (p->n == 0)
		sb_add(&b, "# no changes\n");
	fputs(sb_str(&b), fp);
	sb_free(&b);
}

/* ---------------------------------------------------------------------
 * Applying
 */

/*
 * Replace path with text: a temporary file in the same directory,
 * written, synced, given mode and owner, then renamed over path.
 */
static int write_atomic(const char *path, const char *text, mode_t mode,
			const struct stat *owner)
{
	const char *slash = strrchr(path, '/');
	char *tmp = xasprintf("%.*s/.%s.ibhost-XXXXXX", (int)(slash - path),
			      path, slash + 1);
	size_t len = strlen(text), done = 0;
	int fd, rc = 0;

	fd = mkstemp(tmp);
	if (fd < 0) {
		rc = -errno;
		free(tmp);
		return rc;
	}
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		done += (size_t)n;
	}
	if (!rc && fchmod(fd, mode) < 0)
		rc = -errno;
	/* Owner of the file replaced; an unprivileged run keeps its own. */
	if (!rc && owner && fchown(fd, owner->st_uid, owner->st_gid) < 0 &&
	    errno != EPERM)
		rc = -errno;
	if (!rc && fsync(fd) < 0)
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path) < 0)
		rc = -errno;
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

static int apply_file(const struct action *a, const char *root, FILE *out,
		      struct diags *d)
{
	char *full = root_path(root, a->path), *bak = NULL, *cur = NULL;
	char *shown_bak = backup_path(a->path, a->hidden_backup);
	struct stat st;
	int rc = read_file(full, &cur);
	mode_t mode = a->mode;

	if (rc == -ENOENT)
		rc = 0;
	if (rc < 0 || !same(cur, a->old)) {
		diag_add(d, DIAG_ERROR, full, 0, "%s; expected it unchanged "
			 "since the plan was made (run ibhost apply again)",
			 rc < 0 ? strerror(-rc) : "changed while applying");
		rc = rc < 0 ? rc : -ESTALE;
		goto out;
	}
	if (a->old) {
		if (stat(full, &st) < 0) {
			rc = -errno;
			goto fail;
		}
		/* Keep the mode of the file replaced, but never loosen it. */
		if (a->new)
			mode = (st.st_mode & 07777) & (a->mode | ~0077u);
		bak = backup_path(full, a->hidden_backup);
		rc = write_atomic(bak, a->old, st.st_mode & 07777, &st);
		if (rc < 0)
			goto fail;
	}
	if (a->new) {
		rc = mkdir_parents(full, 0755);
		if (!rc)
			rc = write_atomic(full, a->new, mode,
					  a->old ? &st : NULL);
	} else if (unlink(full) < 0) {
		rc = -errno;
	}
	if (rc < 0)
		goto fail;
	if (!a->old)
		fprintf(out, "created %s\n", a->path);
	else
		fprintf(out, "%s %s (backup %s)\n",
			a->new ? "updated" : "removed", a->path, shown_bak);
	goto out;
fail:
	diag_add(d, DIAG_ERROR, full, 0, "cannot %s: %s",
		 a->new ? "write" : "remove", strerror(-rc));
out:
	free(cur);
	free(bak);
	free(shown_bak);
	free(full);
	return rc;
}

/* configfs: mkdir makes the kernel create ports/N/; then one write. */
static int apply_attr(const struct action *a, const char *root, FILE *out,
		      struct diags *d)
{
	char *full = root_path(root, a->path), *dir = NULL;
	size_t len = strlen(a->new);
	int fd, rc = 0;

	if (a->mkdir) {
		dir = root_path(root, a->mkdir);
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			rc = -errno;
			diag_add(d, DIAG_ERROR, dir, 0, "cannot mkdir: %s",
				 strerror(-rc));
			goto out;
		}
		fprintf(out, "created %s\n", a->mkdir);
	}
	fd = open(full, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		diag_add(d, DIAG_ERROR, full, 0, "cannot open: %s; expected "
			 "the kernel to provide it (is rdma_cm loaded?)",
			 strerror(-rc));
		goto out;
	}
	{
		ssize_t n = write(fd, a->new, len);

		if (n < 0)
			rc = -errno;
		else if ((size_t)n != len)
			rc = -EIO;
	}
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (rc)
		diag_add(d, DIAG_ERROR, full, 0, "cannot write \"%.*s\": %s",
			 (int)len - 1, a->new, strerror(-rc));
	else
		fprintf(out, "set %s to %.*s\n", a->path, (int)len - 1,
			a->new);
out:
	free(dir);
	free(full);
	return rc;
}

int plan_apply(const struct plan *p, const char *root, struct runner *r,
	       FILE *out, struct diags *d)
{
	bool failed = false;

	for (size_t i = 0; i < p->n; i++) {
		const struct action *a = &p->v[i];
		int rc = 0;

		switch (a->kind) {
		case ACT_FILE:
			rc = apply_file(a, root, out, d);
			break;
		case ACT_ATTR:
			rc = apply_attr(a, root, out, d);
			break;
		case ACT_CMD:
			rc = runner_run(r, (const char *const *)a->argv);
			if (rc) {
				struct sbuf b = { 0 };

				runner_format(&b, (const char *const *)a->argv);
				if (rc < 0)
					diag_add(d, DIAG_ERROR, "ibhost", 0,
						 "cannot run \"%s\": %s",
						 sb_str(&b), strerror(-rc));
				else
					diag_add(d, DIAG_ERROR, "ibhost", 0,
						 "\"%s\" failed with exit "
						 "status %d", sb_str(&b), rc);
				sb_free(&b);
			}
			break;
		}
		failed |= rc != 0;
	}
	if (p->n == 0)
		fputs("no changes\n", out);
	return failed ? -EIO : 0;
}
