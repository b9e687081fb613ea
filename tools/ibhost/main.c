/*
 * main.c - ibhost(8): configure the host side of an RDMA fabric (IPoIB,
 * RoCE, soft RDMA, RDMA modules, memlock limits, NFS over RDMA) from one
 * INI file.  See cli.c and doc/ibhost.8.
 */
#include "config.h"

#include <stdio.h>

#include "tools/ibhost/cli.h"

int main(int argc, char **argv)
{
	struct ibhost_env env = { .out = stdout, .err = stderr };

	return ibhost_main(argc, argv, &env);
}
