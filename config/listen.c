/*
 * listen.c - metrics_listen's ADDR:PORT (listen.h).
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "config/listen.h"

static int parse_port(const char *p, uint16_t *port)
{
	char *end;
	unsigned long v;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(p, &end, 10);
	if (errno || *end || v < 1 || v > 65535)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

int cfg_parse_listen(const char *s, struct sockaddr_storage *ss,
		     socklen_t *len)
{
	char host[64];
	const char *colon;
	size_t hl;
	uint16_t port;

	memset(ss, 0, sizeof(*ss));
	if (!s || !*s)
		return -EINVAL;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

		if (!close || close[1] != ':')
			return -EINVAL;
		hl = (size_t)(close - s - 1);
		if (hl == 0 || hl >= sizeof(host))
			return -EINVAL;
		memcpy(host, s + 1, hl);
		host[hl] = '\0';
		if (parse_port(close + 2, &port) < 0 ||
		    inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
			return -EINVAL;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		*len = sizeof(*a6);
		return 0;
	}
	colon = strrchr(s, ':');
	if (!colon || strchr(s, ':') != colon)
		return -EINVAL;
	hl = (size_t)(colon - s);
	if (hl == 0 || hl >= sizeof(host) || parse_port(colon + 1, &port) < 0)
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = '\0';

	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

	a4->sin_family = AF_INET;
	a4->sin_port = htons(port);
	*len = sizeof(*a4);
	if (!strcmp(host, "*"))
		a4->sin_addr.s_addr = htonl(INADDR_ANY);
	else if (!strcmp(host, "localhost"))
		a4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
		return -EINVAL;
	return 0;
}
