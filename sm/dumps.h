/*
 * dumps.h - OpenSM's dump files, written after each SUBNET UP into the
 * dump directory: opensm-subnet.lst (one line per linked port) and
 * opensm-lfts.dump (every switch's unicast forwarding table).
 */
#ifndef IBSM_SM_DUMPS_H
#define IBSM_SM_DUMPS_H

#include <stdio.h>

#include "routing/routing.h"
#include "config/fileutil.h"	/* write_file_if_changed(), for the callers */
#include "model/fabric.h"

struct sm;

/* Write both files (atomically); failures are logged, not fatal. */
void dumps_write(struct sm *sm, const struct fabric *f,
		 const struct routing_result *r);

/* The formatters, for tests: write to an open stream, return 0/-errno. */
int dump_subnet_lst(const struct fabric *f, FILE *fp);
int dump_lfts(const struct fabric *f, const struct routing_result *r, FILE *fp);

#endif /* IBSM_SM_DUMPS_H */
