/*
 * inventory.h - what the host has, read from sysfs and procfs under
 * --root: RDMA devices and their ports (/sys/class/infiniband), network
 * interfaces (/sys/class/net, IPoIB ones have type 32), loaded modules
 * (/proc/modules) and the rdma_cm configfs directory.
 *
 * Nothing here is required to exist: a missing attribute leaves its
 * field empty (0 or ""), a missing class directory an empty list.
 */
#ifndef IBHOST_INVENTORY_H
#define IBHOST_INVENTORY_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define ARPHRD_INFINIBAND_TYPE	32	/* /sys/class/net/X/type of IPoIB */
#define ARPHRD_ETHER_TYPE	1

struct inv_port {
	unsigned	 num;
	char		 link_layer[32];	/* "InfiniBand", "Ethernet" */
	char		 state[32];		/* "ACTIVE" from "4: ACTIVE" */
	char		 phys_state[32];	/* "LinkUp" from "5: LinkUp" */
	unsigned	 lid, sm_lid, lmc;
	uint64_t	 guid;			/* low half of gids/0 */
	char		 rate[64];
	unsigned	 active_mtu;		/* 0 when sysfs does not say */
	char		 netdev[IFNAMSIZ];	/* Ethernet: gid_attrs/ndevs/0 */
};

struct inv_dev {
	char		 name[64];
	char		 node_type[32];		/* "CA" from "1: CA" */
	uint64_t	 node_guid, sys_image_guid;
	char		 fw_ver[64];
	char		 hca_type[64];
	char		 node_desc[128];
	struct inv_port	*ports;
	size_t		 nports;
};

struct inv_netdev {
	char		 name[IFNAMSIZ];
	unsigned	 type;			/* ARPHRD_*: 32 is IPoIB */
	char		 address[64];
	char		 operstate[16];
	unsigned	 mtu;
	/* IPoIB only */
	char		 mode[16];
	int		 pkey;			/* -1 unknown */
	char		 parent[IFNAMSIZ];	/* child: its parent */
	uint64_t	 guid;			/* last 8 bytes of address */
	int		 dev;			/* index in devs, -1 unmatched */
	int		 port;			/* index in that dev's ports */
};

struct inventory {
	struct inv_dev		*devs;
	size_t			 ndevs;
	struct inv_netdev	*nets;		/* every interface, sorted */
	size_t			 nnets;
	bool			 have_modules;	/* /proc/modules was readable */
	char			**modules;
	size_t			 nmodules;
	bool			 have_configfs;	/* sys/kernel/config/rdma_cm */
};

int inventory_load(struct inventory *inv, const char *root);
void inventory_free(struct inventory *inv);

const struct inv_dev *inv_find_dev(const struct inventory *inv,
				   const char *name);
const struct inv_port *inv_find_port(const struct inv_dev *d, unsigned num);
/* The port whose GUID is guid, and its device in *devp. */
const struct inv_port *inv_find_guid(const struct inventory *inv,
				     uint64_t guid,
				     const struct inv_dev **devp);
const struct inv_netdev *inv_find_net(const struct inventory *inv,
				      const char *name);
/* Loaded per /proc/modules, or built in (a /sys/module entry). */
bool inv_module_loaded(const struct inventory *inv, const char *root,
		       const char *name);

/* `ibhost show`: a table, or JSON ({"devices": [...], "ipoib": [...]}). */
void show_table(FILE *fp, const struct inventory *inv);
void show_json(FILE *fp, const struct inventory *inv);

#endif /* IBHOST_INVENTORY_H */
