/*
 * check.h - the configuration against the host it runs on.
 *
 * The parser (conf.c) knows what a file may say; this knows what the
 * host makes of it: a GUID that names an Ethernet port, a datagram MTU
 * the IB link cannot carry, RoCE on an InfiniBand port, a module not
 * loaded, a memlock limit another limits file keeps low.  Findings are
 * reported at the FILE:LINE of the key they concern.
 */
#ifndef IBHOST_CHECK_H
#define IBHOST_CHECK_H

#include "tools/ibhost/conf.h"
#include "tools/ibhost/inventory.h"

void check_host(const struct ibh_conf *c, const struct inventory *inv,
		const char *root, struct diags *d);

/* The IB MTU a datagram interface must fit in, and where it came from. */
unsigned ipoib_ib_mtu(const struct ibh_conf *c, const struct ipoib_conf *ip,
		      const struct inventory *inv, const char **source);

#endif /* IBHOST_CHECK_H */
