/*
 * inventory.c - read RDMA devices, ports, network interfaces and loaded
 * modules from sysfs and procfs under --root.
 *
 * Attribute formats (drivers/infiniband/core/sysfs.c, ipoib_main.c):
 *   ports/N/state       "4: ACTIVE"          ports/N/lid     "0x5"
 *   ports/N/phys_state  "5: LinkUp"          ports/N/sm_lid  "0x1"
 *   ports/N/gids/0      "fe80:0000:0000:0000:0002:c903:0031:78f1"
 *   node_guid           "0002:c903:0031:78f0"
 *   net/X/address       20 bytes for IPoIB, the last 8 the port GUID
 *   net/X/pkey          "0x8002"             net/X/parent    "ib0"
 * Kernels have no active MTU in sysfs; ports/N/active_mtu is read when
 * present ("4096" or "4096 (5)"), e.g. in a test tree.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/ibhost/conf.h"
#include "tools/ibhost/inventory.h"
#include "tools/ibhost/util.h"

/* Attribute dir/name into buf; "" when absent. */
static void attr(const char *dir, const char *name, char *buf, size_t len)
{
	char *path = xasprintf("%s/%s", dir, name);

	if (read_attr(path, buf, len) < 0)
		buf[0] = '\0';
	free(path);
}

static unsigned long attr_num(const char *dir, const char *name)
{
	char buf[64];

	attr(dir, name, buf, sizeof(buf));
	return strtoul(buf, NULL, 0);
}

/* "4: ACTIVE" -> "ACTIVE"; other text unchanged. */
static void attr_state(const char *dir, const char *name, char *buf,
		       size_t len)
{
	char raw[64], *colon;

	attr(dir, name, raw, sizeof(raw));
	colon = strchr(raw, ':');
	snprintf(buf, len, "%s", colon ? trim(colon + 1) : raw);
}

/* Hex digits of s, separators skipped, as one 64-bit number. */
static uint64_t hex_guid(const char *s)
{
	uint64_t v = 0;
	unsigned n = 0;

	for (; *s; s++) {
		if (*s == ':')
			continue;
		if (!isxdigit((unsigned char)*s) || n++ == 16)
			return 0;
		v = v << 4 | (uint64_t)(isdigit((unsigned char)*s) ?
					*s - '0' :
					tolower((unsigned char)*s) - 'a' + 10);
	}
	return v;
}

/* The interface ID of a GID: its last four groups. */
static uint64_t gid_guid(const char *gid)
{
	const char *p = gid;

	for (int colons = 0; *p && colons < 4; p++)
		if (*p == ':')
			colons++;
	return *p ? hex_guid(p) : 0;
}

/* Last 8 bytes of an IPoIB hardware address. */
static uint64_t hwaddr_guid(const char *addr)
{
	unsigned bytes = 1;

	for (const char *p = addr; *p; p++)
		bytes += *p == ':';
	if (bytes != 20)
		return 0;
	for (unsigned skip = 12; skip; addr++)
		if (*addr == ':')
			skip--;
	return hex_guid(addr);
}

static int cmp_ports(const void *a, const void *b)
{
	const struct inv_port *x = a, *y = b;

	return (x->num > y->num) - (x->num < y->num);
}

static void load_port(struct inv_port *pt, const char *dir, unsigned num)
{
	char buf[128], *sub;

	memset(pt, 0, sizeof(*pt));
	pt->num = num;
	attr(dir, "link_layer", pt->link_layer, sizeof(pt->link_layer));
	attr_state(dir, "state", pt->state, sizeof(pt->state));
	attr_state(dir, "phys_state", pt->phys_state, sizeof(pt->phys_state));
	pt->lid = (unsigned)attr_num(dir, "lid");
	pt->sm_lid = (unsigned)attr_num(dir, "sm_lid");
	pt->lmc = (unsigned)attr_num(dir, "lid_mask_count");
	attr(dir, "rate", pt->rate, sizeof(pt->rate));
	pt->active_mtu = (unsigned)attr_num(dir, "active_mtu");
	attr(dir, "gids/0", buf, sizeof(buf));
	pt->guid = gid_guid(buf);
	sub = xasprintf("%s/gid_attrs/ndevs", dir);
	attr(sub, "0", pt->netdev, sizeof(pt->netdev));
	free(sub);
}

static void load_dev(struct inv_dev *d, const char *dir, const char *name)
{
	char buf[64], *pdir, **names;
	size_t n;

	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", name);
	attr_state(dir, "node_type", d->node_type, sizeof(d->node_type));
	attr(dir, "node_guid", buf, sizeof(buf));
	d->node_guid = hex_guid(buf);
	attr(dir, "sys_image_guid", buf, sizeof(buf));
	d->sys_image_guid = hex_guid(buf);
	attr(dir, "fw_ver", d->fw_ver, sizeof(d->fw_ver));
	attr(dir, "hca_type", d->hca_type, sizeof(d->hca_type));
	attr(dir, "node_desc", d->node_desc, sizeof(d->node_desc));

	pdir = xasprintf("%s/ports", dir);
	if (list_dir(pdir, &names, &n) == 0) {
		d->ports = xcalloc(n, sizeof(*d->ports));
		for (size_t i = 0; i < n; i++) {
			char *end, *sub;
			unsigned long num = strtoul(names[i], &end, 10);

			if (*end || !num || num > 255)
				continue;
			sub = xasprintf("%s/%s", pdir, names[i]);
			load_port(&d->ports[d->nports++], sub, (unsigned)num);
			free(sub);
		}
		qsort(d->ports, d->nports, sizeof(*d->ports), cmp_ports);
		free_names(names, n);
	}
	free(pdir);
}

static void load_net(struct inv_netdev *nd, const char *dir, const char *name)
{
	char buf[32];

	memset(nd, 0, sizeof(*nd));
	snprintf(nd->name, sizeof(nd->name), "%s", name);
	nd->type = (unsigned)attr_num(dir, "type");
	attr(dir, "address", nd->address, sizeof(nd->address));
	attr(dir, "operstate", nd->operstate, sizeof(nd->operstate));
	nd->mtu = (unsigned)attr_num(dir, "mtu");
	nd->pkey = -1;
	nd->dev = nd->port = -1;
	if (nd->type != ARPHRD_INFINIBAND_TYPE)
		return;
	attr(dir, "mode", nd->mode, sizeof(nd->mode));
	attr(dir, "pkey", buf, sizeof(buf));
	if (buf[0])
		nd->pkey = (int)strtol(buf, NULL, 0);
	attr(dir, "parent", nd->parent, sizeof(nd->parent));
	nd->guid = hwaddr_guid(nd->address);
}

static void load_modules(struct inventory *inv, const char *root)
{
	char *path = root_path(root, "/proc/modules"), *text;
	struct lines l;

	if (read_file(path, &text) == 0) {
		inv->have_modules = true;
		lines_split(&l, text);
		inv->modules = xcalloc(l.n, sizeof(char *));
		for (size_t i = 0; i < l.n; i++) {
			char *sp = strchr(l.v[i], ' ');

			if (sp)
				*sp = '\0';
			if (l.v[i][0])
				inv->modules[inv->nmodules++] =
					xstrdup(l.v[i]);
		}
		lines_free(&l);
		free(text);
	}
	free(path);
}

int inventory_load(struct inventory *inv, const char *root)
{
	char *base, **names, *path;
	size_t n;

	memset(inv, 0, sizeof(*inv));
	base = root_path(root, "/sys/class/infiniband");
	if (list_dir(base, &names, &n) == 0) {
		inv->devs = xcalloc(n, sizeof(*inv->devs));
		for (size_t i = 0; i < n; i++) {
			char *dir = xasprintf("%s/%s", base, names[i]);

			if (is_dir(dir))
				load_dev(&inv->devs[inv->ndevs++], dir,
					 names[i]);
			free(dir);
		}
		free_names(names, n);
	}
	free(base);

	base = root_path(root, "/sys/class/net");
	if (list_dir(base, &names, &n) == 0) {
		inv->nets = xcalloc(n, sizeof(*inv->nets));
		for (size_t i = 0; i < n; i++) {
			char *dir = xasprintf("%s/%s", base, names[i]);

			if (is_dir(dir))
				load_net(&inv->nets[inv->nnets++], dir,
					 names[i]);
			free(dir);
		}
		free_names(names, n);
	}
	free(base);

	/* Tie each IPoIB interface to its port by GUID. */
	for (size_t i = 0; i < inv->nnets; i++) {
		struct inv_netdev *nd = &inv->nets[i];

		if (nd->type != ARPHRD_INFINIBAND_TYPE || !nd->guid)
			continue;
		for (size_t d = 0; d < inv->ndevs; d++)
			for (size_t p = 0; p < inv->devs[d].nports; p++)
				if (inv->devs[d].ports[p].guid == nd->guid) {
					nd->dev = (int)d;
					nd->port = (int)p;
				}
	}

	load_modules(inv, root);
	path = root_path(root, "/sys/kernel/config/rdma_cm");
	inv->have_configfs = is_dir(path);
	free(path);
	return 0;
}

void inventory_free(struct inventory *inv)
{
	for (size_t i = 0; i < inv->ndevs; i++)
		free(inv->devs[i].ports);
	free(inv->devs);
	free(inv->nets);
	free_names(inv->modules, inv->nmodules);
	memset(inv, 0, sizeof(*inv));
}

const struct inv_dev *inv_find_dev(const struct inventory *inv,
				   const char *name)
{
	for (size_t i = 0; i < inv->ndevs; i++)
		if (!strcmp(inv->devs[i].name, name))
			return &inv->devs[i];
	return NULL;
}

const struct inv_port *inv_find_port(const struct inv_dev *d, unsigned num)
{
	for (size_t i = 0; i < d->nports; i++)
		if (d->ports[i].num == num)
			return &d->ports[i];
	return NULL;
}

const struct inv_port *inv_find_guid(const struct inventory *inv,
				     uint64_t guid,
				     const struct inv_dev **devp)
{
	for (size_t d = 0; d < inv->ndevs; d++)
		for (size_t p = 0; p < inv->devs[d].nports; p++)
			if (inv->devs[d].ports[p].guid == guid) {
				if (devp)
					*devp = &inv->devs[d];
				return &inv->devs[d].ports[p];
			}
	return NULL;
}

const struct inv_netdev *inv_find_net(const struct inventory *inv,
				      const char *name)
{
	for (size_t i = 0; i < inv->nnets; i++)
		if (!strcmp(inv->nets[i].name, name))
			return &inv->nets[i];
	return NULL;
}

bool inv_module_loaded(const struct inventory *inv, const char *root,
		       const char *name)
{
	const char *alt = module_provider(name);
	char *path;
	bool builtin;

	for (size_t i = 0; i < inv->nmodules; i++)
		if (!strcmp(inv->modules[i], name) ||
		    !strcmp(inv->modules[i], alt))
			return true;
	path = xasprintf("%s/sys/module/%s", root, alt);
	builtin = is_dir(path);
	free(path);
	return builtin;
}
