/*
 * render.h - the text of every file ibhost writes.
 *
 * Two kinds of files:
 *  - shared files (udev rules, rdma.conf, limits, ifupdown's
 *    interfaces.d/ibhost): ibhost owns one marked block
 *        # BEGIN ibhost ...
 *        # END ibhost
 *    and keeps every other line as the user left it;
 *  - owned files (NetworkManager keyfiles, systemd-networkd units): the
 *    whole file, recognised by OWNED_HEADER on its first line.
 * /etc/nfs.conf is edited key by key in its [nfsd] section instead.
 *
 * Every function is pure: old contents in, new contents out.
 */
#ifndef IBHOST_RENDER_H
#define IBHOST_RENDER_H

#include "tools/ibhost/conf.h"

#define BLOCK_BEGIN	"# BEGIN ibhost"
#define BLOCK_END	"# END ibhost"
#define OWNED_HEADER	"# Written by ibhost(8)"

#define PATH_UDEV_RULES	"/etc/udev/rules.d/70-persistent-ipoib.rules"
#define PATH_RDMA_CONF	"/etc/rdma/modules/rdma.conf"
#define PATH_LIMITS	"/etc/security/limits.conf"
#define DIR_LIMITS_D	"/etc/security/limits.d"
#define PATH_NFS_CONF	"/etc/nfs.conf"
#define DIR_NM		"/etc/NetworkManager/system-connections"
#define PATH_IFUPDOWN	"/etc/network/interfaces.d/ibhost"
#define DIR_NETWORKD	"/etc/systemd/network"
#define NETWORKD_PREFIX	"60-ibhost-"
#define CONFIGFS_RDMA_CM "/sys/kernel/config/rdma_cm"

/*
 * Put body (the lines between the markers, each ending in '\n') into
 * old's block, or append a block to old when it has none; body NULL
 * removes the block.  *out is the new text, NULL when the file should
 * not exist (nothing left in it).  Returns 0, or -EBADMSG with *bad_line
 * set when old has a BEGIN without END (or the reverse, or two blocks):
 * a file ibhost must not guess about.
 */
int block_merge(const char *old, const char *body, char **out,
		int *bad_line);
/* old has a block (line > 0: where it starts); 0 if none. */
int block_find(const char *old);
bool is_owned(const char *text);

/* Block bodies; NULL when the configuration has nothing for the file. */
char *render_udev(const struct ibh_conf *c);
char *render_modules(const struct ibh_conf *c);
char *render_limits(const struct ibh_conf *c);
char *render_ifupdown(const struct ibh_conf *c);

/* /etc/nfs.conf with [nfsd] rdma and rdma-port set; old may be NULL. */
char *render_nfs(const struct ibh_conf *c, const char *old);

/* NetworkManager keyfile; keeps the uuid of old when it has one. */
char *render_nm(const struct ibh_conf *c, const struct ipoib_conf *ip,
		const char *old);
/* systemd-networkd: .network for every interface, .netdev for children. */
char *render_networkd_network(const struct ibh_conf *c,
			      const struct ipoib_conf *ip);
char *render_networkd_netdev(const struct ibh_conf *c,
			     const struct ipoib_conf *ip);

/* The udev match: "00:02:c9:03:00:31:78:f1" (last 8 bytes of 20). */
void guid_hwaddr(char *buf, size_t len, uint64_t guid);

#endif /* IBHOST_RENDER_H */
