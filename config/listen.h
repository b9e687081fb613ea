/*
 * listen.h - an address to listen on, as `metrics_listen` writes it:
 * IPV4:PORT, [IPV6]:PORT, localhost:PORT (127.0.0.1) or *:PORT (every
 * IPv4 address).  Numeric only: a name other than localhost would need a
 * resolver, which may block.  Library code: no I/O, no logging.
 */
#ifndef IBSM_CONFIG_LISTEN_H
#define IBSM_CONFIG_LISTEN_H

#include <sys/socket.h>

/* Parse `s` into *ss (*len its size): 0, or -EINVAL. */
int cfg_parse_listen(const char *s, struct sockaddr_storage *ss,
		     socklen_t *len);

/* What a value must look like, for error messages. */
#define CFG_LISTEN_EXPECTED \
	"ADDR:PORT (IPv4 address, [IPv6 address], localhost or *; port 1-65535)"

#endif /* IBSM_CONFIG_LISTEN_H */
