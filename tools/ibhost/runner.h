/*
 * runner.h - the one place where ibhost starts other programs (rdma,
 * modprobe, udevadm, nmcli, networkctl).
 *
 * With dry_run set a command is printed ("would run: ...") and counts as
 * successful.  Tests set hook instead: it gets the argument vector and
 * plays the part of the program, e.g. by adding to a fake sysfs tree.
 */
#ifndef IBHOST_RUNNER_H
#define IBHOST_RUNNER_H

#include <stdbool.h>
#include <stdio.h>

#include "tools/ibhost/util.h"

struct runner {
	bool	 dry_run;
	FILE	*out;		/* "run:"/"would run:" lines; NULL: silent */
	int	(*hook)(void *ctx, const char *const argv[]);
	void	*ctx;
};

/*
 * Run argv (NULL-terminated, argv[0] looked up in PATH) and wait for it.
 * Returns its exit status (0 success), 128+N when killed by signal N, or
 * -errno when it could not be started.
 */
int runner_run(struct runner *r, const char *const argv[]);

/* argv as one shell-quoted line, for plans and messages. */
void runner_format(struct sbuf *b, const char *const argv[]);

#endif /* IBHOST_RUNNER_H */
