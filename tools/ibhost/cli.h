/*
 * cli.h - the ibhost command line, callable from tests.
 *
 * ibhost_main() is all of main() but the streams and the runner hook:
 * tests call it with memory streams and a hook that plays rdma and
 * modprobe on a fake tree.
 */
#ifndef IBHOST_CLI_H
#define IBHOST_CLI_H

#include <stdio.h>

struct ibhost_env {
	FILE	*out;
	FILE	*err;
	/* NULL: commands really run (root "/") or are printed (--root) */
	int	(*hook)(void *ctx, const char *const argv[]);
	void	*ctx;
};

/* Exit status: 0 fine, 1 problems found or a step failed, 2 usage. */
int ibhost_main(int argc, char **argv, const struct ibhost_env *env);

#endif /* IBHOST_CLI_H */
