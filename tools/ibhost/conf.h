/*
 * conf.h - the ibhost INI file, parsed and validated.
 *
 * One file describes the whole host side of an RDMA fabric:
 *
 *   [global]              backend = networkmanager | ifupdown | networkd
 *   [ipoib NAME]          an IPoIB interface, renamed to NAME by udev from
 *                         its port GUID; its P_Key children are listed in
 *                         pkeys and may have sections [ipoib NAME.8002]
 *   [roce DEVICE PORT]    the default RoCE mode of an Ethernet port
 *   [softrdma NAME]       a Soft-RoCE (rxe) or Soft-iWARP (siw) link
 *   [modules]             /etc/rdma/modules/rdma.conf
 *   [limits]              the memlock limit of a group (pam_limits)
 *   [nfs]                 NFS over RDMA in /etc/nfs.conf
 *
 * Every value keeps the line it came from, so later checks against the
 * host (check.c) can still point at FILE:LINE.  doc/ibhost.8 is the
 * reference for the keys.
 */
#ifndef IBHOST_CONF_H
#define IBHOST_CONF_H

#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/ibhost/util.h"

#define IBH_DEFAULT_CONFIG	"/etc/ibhost.ini"
#define IBH_MAX_ADDRS		8
#define IBH_MAX_DNS		8
#define IBH_MAX_PKEYS		32
#define IBH_DEVNAME_MAX		64	/* IB_DEVICE_NAME_MAX */
#define IBH_CM_MTU_MAX		65520	/* IPoIB connected mode */
#define IBH_IPOIB_HDR		4	/* datagram: IB MTU - 4 */
#define IBH_DEFAULT_IB_MTU	2048
#define IBH_NFS_RDMA_PORT	20049
#define IBH_PKEY_FULL		0x8000	/* full-membership bit */
#define IBH_MEMLOCK_UNLIMITED	UINT64_MAX

enum ibh_backend {
	BACKEND_NETWORKMANAGER,
	BACKEND_IFUPDOWN,
	BACKEND_NETWORKD,
};

enum ipoib_mode { IPOIB_MODE_UNSET, IPOIB_DATAGRAM, IPOIB_CONNECTED };

/* ipv4: off, dhcp or static; ipv6: off, auto (SLAAC/DHCPv6) or static */
enum ip_method { IP_OFF, IP_AUTO, IP_STATIC };

struct ip_addr {
	int		family;		/* AF_INET or AF_INET6 */
	unsigned	prefix;		/* 0 for a plain address */
	char		text[INET6_ADDRSTRLEN];	/* inet_ntop() form */
};

struct ip_conf {
	enum ip_method	method;
	struct ip_addr	addr[IBH_MAX_ADDRS];
	unsigned	naddr;
	int		line;
	bool		has_gw;
	struct ip_addr	gw;
	int		gw_line;
};

/*
 * An IPoIB interface.  A parent has a guid and a list of P_Keys; each
 * P_Key makes a child NAME.PKEY (0x8000 set), which exists here even when
 * the file has no [ipoib NAME.PKEY] section for it ("implied").
 */
struct ipoib_conf {
	char		name[IFNAMSIZ];
	int		line;		/* section header (or parent's pkeys) */
	bool		child;
	bool		implied;
	int		parent;		/* index in conf->ipoib, -1 for parents */
	uint16_t	pkey;		/* child: full P_Key, e.g. 0x8002 */

	uint64_t	guid;
	int		guid_line;
	enum ipoib_mode	mode;		/* UNSET: datagram (child: parent's) */
	int		mode_line;
	unsigned	mtu;		/* 0: leave the kernel's default */
	int		mtu_line;
	unsigned	ib_mtu;		/* 0: port's active MTU, else 2048 */
	int		ib_mtu_line;
	struct ip_conf	v4, v6;
	struct ip_addr	dns[IBH_MAX_DNS];
	unsigned	ndns;
	int		dns_line;
	uint16_t	pkeys[IBH_MAX_PKEYS];	/* without 0x8000 */
	unsigned	npkeys;
	int		pkeys_line;
};

enum roce_mode { ROCE_UNSET, ROCE_V1, ROCE_V2 };

struct roce_conf {
	char		dev[IBH_DEVNAME_MAX];
	unsigned	port;
	int		line;
	enum roce_mode	mode;
	int		mode_line;
};

enum soft_type { SOFT_UNSET, SOFT_RXE, SOFT_SIW };

struct softrdma_conf {
	char		name[IBH_DEVNAME_MAX];
	int		line;
	enum soft_type	type;
	int		type_line;
	char		netdev[IFNAMSIZ];
	int		netdev_line;
};

/* The modules rdma.conf may name, in the order rdma.conf lists them. */
enum { RDMA_MODULE_COUNT = 8 };
extern const char *const rdma_modules[RDMA_MODULE_COUNT];

struct modules_conf {
	bool		present;
	int		line;
	unsigned	mask;		/* bit i: rdma_modules[i] */
	int		load_line;
};

struct limits_conf {
	bool		present;
	int		line;
	char		group[33];
	int		group_line;
	uint64_t	memlock_kib;	/* IBH_MEMLOCK_UNLIMITED for unlimited */
	int		memlock_line;
	char		file[256];
	int		file_line;
};

struct nfs_conf {
	bool		present;
	int		line;
	bool		rdma;
	int		rdma_line;
	unsigned	port;
	int		port_line;
};

struct ibh_conf {
	char			*path;		/* as it appears in messages */
	enum ibh_backend	 backend;
	int			 backend_line;
	struct ipoib_conf	*ipoib;		/* parents, each followed by children */
	size_t			 nipoib;
	struct roce_conf	*roce;
	size_t			 nroce;
	struct softrdma_conf	*soft;
	size_t			 nsoft;
	struct modules_conf	 modules;
	struct limits_conf	 limits;
	struct nfs_conf		 nfs;
};

/*
 * Parse and validate one file.  name is what messages call it.  Problems
 * go to d as "name:LINE: what was expected"; returns 0 when the file is
 * usable, -EINVAL when d holds errors, -errno when it cannot be read.
 */
int conf_load(struct ibh_conf *c, const char *path, struct diags *d);
int conf_load_fp(struct ibh_conf *c, FILE *fp, const char *name,
		 struct diags *d);
void conf_free(struct ibh_conf *c);

/* Effective values after defaults and inheritance. */
enum ipoib_mode ipoib_mode_of(const struct ibh_conf *c,
			      const struct ipoib_conf *ip);
unsigned ipoib_mtu_of(const struct ibh_conf *c, const struct ipoib_conf *ip);
const char *ipoib_mode_name(enum ipoib_mode m);
const char *roce_mode_name(enum roce_mode m);
const char *soft_type_name(enum soft_type t);
const char *backend_name(enum ibh_backend b);
/* The module that provides name in /proc/modules (xprtrdma -> rpcrdma). */
const char *module_provider(const char *name);

#endif /* IBHOST_CONF_H */
