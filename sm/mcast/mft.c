/*
 * mft.c - MulticastForwardingTables: PLACEHOLDER of the shared base
 * branch so that the SA's branch links; the MFT branch replaces this
 * file.  Never merged as is.
 */
#include "config.h"

#include "sm/sm.h"

void mcast_changed(struct sm *sm)
{
	(void)sm;
}
