/*
 * topo_dump.h - write a fabric model in ibnetdiscover's topology format,
 * the format ibsim reads, so a discovered fabric can be replayed.
 */
#ifndef IBSM_MODEL_TOPO_DUMP_H
#define IBSM_MODEL_TOPO_DUMP_H

#include <stdio.h>

#include "model/fabric.h"

/* Write to an open stream (a file: topo_dump_file(), sm/topo_file.h).
 * Returns 0 or -errno. */
int topo_dump(const struct fabric *f, FILE *fp);

/*
 * A NodeDescription as every file of ibsm prints it: 64 bytes from the
 * network, up to the first NUL, each byte that is not printable ASCII
 * (control characters, DEL, 0x80-0xff) replaced by a space, as
 * ibnetdiscover's clean_nodedesc() does.  So a description cannot break
 * a line; quotes and backslashes are kept (ibnetdiscover keeps them),
 * and readers take a quoted description up to the last quote of its
 * line (model/topo_load.c does).  `out` holds TOPO_DESC_SIZE bytes.
 */
#define TOPO_DESC_SIZE	65
const char *topo_desc_clean(const char *desc, char *out);

/* "4xSDR", "4xEDR", ... for a port as its PortInfo says; cap_mask is the
 * port's capability mask (fabric_port_cap_mask()). */
const char *topo_link_str(const struct smp_port_info *pi, uint32_t cap_mask,
			  char *buf, size_t sz);

#endif /* IBSM_MODEL_TOPO_DUMP_H */
