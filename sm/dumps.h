/*
 * dumps.h - OpenSM's dump files, written after each SUBNET UP into the
 * dump directory: opensm-subnet.lst (one line per linked port) and
 * opensm-lfts.dump (every switch's unicast forwarding table).
 */
#ifndef IBSM_SM_DUMPS_H
#define IBSM_SM_DUMPS_H

#include <stdio.h>

#include "routing/routing.h"
#include "sm/fabric.h"

struct sm;

/* Write both files (atomically); failures are logged, not fatal. */
void dumps_write(struct sm *sm, const struct fabric *f,
		 const struct routing_result *r);

/*
 * Write `path` atomically (write_file_atomic) only when what fn writes
 * differs from the file's content, ignoring the first `skip_lines` lines
 * of both (a timestamp header).  Every heavy sweep rewrites the dumps; most
 * sweeps change nothing, and an unchanged file costs neither the write
 * nor its fsync on the loop thread.  Returns 1 when the file was left as
 * it was, 0 when written, or -errno.
 */
int write_file_if_changed(const char *path, int (*fn)(FILE *fp, const void *arg),
			  const void *arg, unsigned skip_lines);

/* The formatters, for tests: write to an open stream, return 0/-errno. */
int dump_subnet_lst(const struct fabric *f, FILE *fp);
int dump_lfts(const struct fabric *f, const struct routing_result *r, FILE *fp);

#endif /* IBSM_SM_DUMPS_H */
