/*
 * plan.h - every change ibhost would make, built once and then either
 * printed (`ibhost plan`) or carried out (`ibhost apply`).
 *
 * A plan holds only real changes: a file whose new text equals the old
 * one, a configfs attribute that already says the right thing, a module
 * already loaded, a soft RDMA link already there, none of these makes an
 * action.  That is what makes a second apply a no-op.
 *
 * Order: files, then modprobe (rdma_cm's configfs appears only once the
 * module is in), `rdma link add`, configfs writes, and last the reloads
 * (udevadm, nmcli, networkctl) for the files that changed.
 */
#ifndef IBHOST_PLAN_H
#define IBHOST_PLAN_H

#include <stdio.h>
#include <sys/types.h>

#include "tools/ibhost/conf.h"
#include "tools/ibhost/inventory.h"
#include "tools/ibhost/runner.h"

enum action_kind { ACT_FILE, ACT_ATTR, ACT_CMD };

struct action {
	enum action_kind kind;
	char		*path;		/* on the target system, "/etc/..." */
	char		*old;		/* NULL: the file does not exist */
	char		*new;		/* ACT_FILE: NULL removes the file */
	mode_t		 mode;		/* new files; kept for existing ones */
	bool		 hidden_backup;	/* DIR/.NAME.ibhost-bak (see below) */
	char		*mkdir;		/* ACT_ATTR: configfs dir to create */
	char	       **argv;		/* ACT_CMD, NULL-terminated */
};

struct plan {
	struct action	*v;
	size_t		 n, cap;
};

/*
 * Build the plan for c on the host under root.  Problems found on the
 * way (a file with a broken ibhost block, a file that cannot be read)
 * go to d as errors.  Returns 0 or -EINVAL when d got errors.
 */
int plan_build(struct plan *p, const struct ibh_conf *c,
	       const struct inventory *inv, const char *root,
	       struct diags *d);
void plan_free(struct plan *p);

/* Comment lines ("# edit ...", "# run: ...") and unified diffs. */
void plan_print(FILE *fp, const struct plan *p);

/*
 * Carry the plan out under root, reporting each step on out.  Files are
 * replaced atomically (temporary file and rename in the same directory)
 * after the old text is saved as FILE.ibhost-bak - or DIR/.NAME.ibhost-bak
 * in directories whose every file is read (NetworkManager's keyfile
 * directory, ifupdown's interfaces.d), where a visible copy would be
 * loaded as a second connection.  Returns 0, or -EIO when a step failed
 * (the others still run; d says which).
 */
int plan_apply(const struct plan *p, const char *root, struct runner *r,
	       FILE *out, struct diags *d);

/* Where the backup of path goes. */
char *backup_path(const char *path, bool hidden);

#endif /* IBHOST_PLAN_H */
