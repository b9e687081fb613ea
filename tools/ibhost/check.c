/*
 * check.c - compare the configuration with the host (see check.h).
 *
 * memlock follows pam_limits(8): /etc/security/limits.conf is read
 * first, then /etc/security/limits.d/ *.conf in name order.  For a
 * member of @GROUP the entries that count are "@GROUP" ones and the
 * "*" default; a group entry beats a default one whatever the order,
 * and among equals the last one read wins.  Entries for single users
 * are not considered (ibhost configures a group, not its members).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tools/ibhost/check.h"
#include "tools/ibhost/render.h"

/* ---------------------------------------------------------------------
 * IPoIB
 */

unsigned ipoib_ib_mtu(const struct ibh_conf *c, const struct ipoib_conf *ip,
		      const struct inventory *inv, const char **source)
{
	const struct ipoib_conf *par = ip->parent >= 0 ?
				       &c->ipoib[ip->parent] : ip;
	const struct inv_port *pt;

	if (par->ib_mtu) {
		*source = "from ib-mtu";
		return par->ib_mtu;
	}
	pt = par->guid ? inv_find_guid(inv, par->guid, NULL) : NULL;
	if (pt && pt->active_mtu) {
		*source = "the port's active MTU";
		return pt->active_mtu;
	}
	*source = "ibhost's default; set ib-mtu if the fabric runs "
		  "a larger one";
	return IBH_DEFAULT_IB_MTU;
}

static void list_ib_guids(struct sbuf *b, const struct inventory *inv)
{
	for (size_t d = 0; d < inv->ndevs; d++)
		for (size_t p = 0; p < inv->devs[d].nports; p++) {
			const struct inv_port *pt = &inv->devs[d].ports[p];

			if (strcmp(pt->link_layer, "InfiniBand") || !pt->guid)
				continue;
			sb_printf(b, "%s0x%016" PRIx64 " (%s/%u)",
				  b->len ? ", " : "", pt->guid,
				  inv->devs[d].name, pt->num);
		}
}

static void check_ipoib(const struct ibh_conf *c, const struct inventory *inv,
			struct diags *d)
{
	for (size_t i = 0; i < c->nipoib; i++) {
		const struct ipoib_conf *ip = &c->ipoib[i];
		const struct ipoib_conf *par = ip->parent >= 0 ?
					       &c->ipoib[ip->parent] : ip;
		const struct inv_dev *dev = NULL;
		const struct inv_port *pt = NULL;
		unsigned mtu = ipoib_mtu_of(c, ip), ib_mtu;
		const char *src;

		if (par->guid)
			pt = inv_find_guid(inv, par->guid, &dev);
		if (!ip->child && par->guid && !pt) {
			struct sbuf b = { 0 };

			list_ib_guids(&b, inv);
			diag_add(d, DIAG_WARNING, c->path, ip->guid_line,
				 "guid 0x%016" PRIx64 ": no port with this GUID "
				 "under /sys/class/infiniband (InfiniBand ports: "
				 "%s); the udev rule waits for it", ip->guid,
				 b.len ? sb_str(&b) : "none");
			sb_free(&b);
		}
		if (!ip->child && pt && strcmp(pt->link_layer, "InfiniBand")) {
			diag_add(d, DIAG_ERROR, c->path, ip->guid_line,
				 "guid 0x%016" PRIx64 ": port %s/%u has link "
				 "layer %s; expected an InfiniBand port for "
				 "IPoIB", ip->guid, dev->name, pt->num,
				 pt->link_layer[0] ? pt->link_layer :
						     "unknown");
			continue;
		}
		if (ip->mode == IPOIB_CONNECTED && dev &&
		    !strncmp(dev->name, "mlx5", 4))
			diag_add(d, DIAG_WARNING, c->path, ip->mode_line,
				 "mode connected: %s uses enhanced IPoIB, "
				 "which runs datagram mode only", dev->name);
		if (!mtu || ipoib_mode_of(c, ip) != IPOIB_DATAGRAM)
			continue;
		ib_mtu = ipoib_ib_mtu(c, ip, inv, &src);
		if (mtu + IBH_IPOIB_HDR <= ib_mtu)
			continue;
		diag_add(d, DIAG_ERROR, c->path,
			 ip->mtu ? ip->mtu_line : par->mtu_line,
			 "mtu %u: expected at most %u in datagram mode on "
			 "[ipoib %s]: IB MTU %u (%s) minus the %d-byte IPoIB "
			 "header", mtu, ib_mtu - IBH_IPOIB_HDR, ip->name,
			 ib_mtu, src, IBH_IPOIB_HDR);
	}
}

/* ---------------------------------------------------------------------
 * RoCE and soft RDMA
 */

static void check_roce(const struct ibh_conf *c, const struct inventory *inv,
		       struct diags *d)
{
	for (size_t i = 0; i < c->nroce; i++) {
		const struct roce_conf *r = &c->roce[i];
		const struct inv_dev *dev = inv_find_dev(inv, r->dev);
		const struct inv_port *pt;

		if (!dev) {
			diag_add(d, DIAG_ERROR, c->path, r->line,
				 "[roce %s %u]: expected an RDMA device %s "
				 "under /sys/class/infiniband", r->dev,
				 r->port, r->dev);
			continue;
		}
		pt = inv_find_port(dev, r->port);
		if (!pt) {
			diag_add(d, DIAG_ERROR, c->path, r->line,
				 "[roce %s %u]: expected a port from 1 to %zu "
				 "on %s", r->dev, r->port, dev->nports,
				 r->dev);
			continue;
		}
		if (!strcmp(pt->link_layer, "InfiniBand")) {
			diag_add(d, DIAG_ERROR, c->path, r->mode_line,
				 "mode %s: port %s/%u has link layer "
				 "InfiniBand; expected an Ethernet (RoCE) port",
				 roce_mode_name(r->mode), r->dev, r->port);
			continue;
		}
		if (!inv->have_configfs)
			diag_add(d, DIAG_ERROR, c->path, r->line,
				 "[roce %s %u]: expected configfs at "
				 CONFIGFS_RDMA_CM " (mount -t configfs none "
				 "/sys/kernel/config; modprobe rdma_cm)",
				 r->dev, r->port);
	}
}

static void check_soft(const struct ibh_conf *c, const struct inventory *inv,
		       struct diags *d)
{
	for (size_t i = 0; i < c->nsoft; i++) {
		const struct softrdma_conf *sr = &c->soft[i];
		const struct inv_netdev *nd = inv_find_net(inv, sr->netdev);
		const struct inv_dev *dev = inv_find_dev(inv, sr->name);

		if (!nd)
			diag_add(d, DIAG_ERROR, c->path, sr->netdev_line,
				 "netdev %s: expected an Ethernet interface "
				 "under /sys/class/net", sr->netdev);
		else if (nd->type != ARPHRD_ETHER_TYPE)
			diag_add(d, DIAG_ERROR, c->path, sr->netdev_line,
				 "netdev %s: expected an Ethernet interface, "
				 "not type %u%s", sr->netdev, nd->type,
				 nd->type == ARPHRD_INFINIBAND_TYPE ?
				 " (IPoIB)" : "");
		if (dev && (dev->nports == 0 ||
			    strcmp(dev->ports[0].netdev, sr->netdev)))
			diag_add(d, DIAG_ERROR, c->path, sr->line,
				 "[softrdma %s]: an RDMA device %s already "
				 "exists%s%s; expected a new name (or `rdma "
				 "link delete %s` first)", sr->name, sr->name,
				 dev->nports && dev->ports[0].netdev[0] ?
				 " on " : "",
				 dev->nports ? dev->ports[0].netdev : "",
				 sr->name);
	}
}

/* ---------------------------------------------------------------------
 * Modules
 */

static void check_modules(const struct ibh_conf *c,
			  const struct inventory *inv, const char *root,
			  struct diags *d)
{
	const struct modules_conf *m = &c->modules;
	unsigned svcrdma = 0;

	while (strcmp(rdma_modules[svcrdma], "svcrdma"))
		svcrdma++;
	if (c->nfs.present && c->nfs.rdma && !(m->mask & (1u << svcrdma)))
		diag_add(d, DIAG_WARNING, c->path, c->nfs.line,
			 "[nfs]: NFS over RDMA needs svcrdma; expected it in "
			 "[modules] load");
	if (!m->present || !m->mask)
		return;
	if (!inv->have_modules) {
		diag_add(d, DIAG_WARNING, c->path, m->load_line,
			 "load: cannot tell which modules are loaded "
			 "(no /proc/modules)");
		return;
	}
	for (unsigned i = 0; i < RDMA_MODULE_COUNT; i++) {
		const char *prov = module_provider(rdma_modules[i]);
		char in[48] = "";

		if (!(m->mask & (1u << i)) ||
		    inv_module_loaded(inv, root, rdma_modules[i]))
			continue;
		if (strcmp(prov, rdma_modules[i]))
			snprintf(in, sizeof(in), " (%s.ko)", prov);
		diag_add(d, DIAG_PENDING, c->path, m->load_line,
			 "load: module %s%s is not loaded; expected it loaded "
			 "(ibhost apply runs modprobe)", rdma_modules[i], in);
	}
}

/* ---------------------------------------------------------------------
 * Memory-lock limits
 */

enum { PRIO_GROUP = 1, PRIO_ALL = 2, PRIO_NONE = 3 };

struct lim {
	int		 prio;
	uint64_t	 kib;
	char		*file;
	int		 line;
};

struct lim_eval {
	struct lim	 soft, hard;
};

static bool lim_value(const char *s, uint64_t *kib)
{
	char *end;

	if (str_ieq(s, "unlimited") || str_ieq(s, "infinity") ||
	    !strcmp(s, "-1")) {
		*kib = IBH_MEMLOCK_UNLIMITED;
		return true;
	}
	errno = 0;
	*kib = strtoull(s, &end, 10);
	return !errno && !*end && *s != '-';
}

static void lim_set(struct lim *l, int prio, uint64_t kib, const char *file,
		    int line)
{
	if (prio > l->prio)
		return;
	l->prio = prio;
	l->kib = kib;
	free(l->file);
	l->file = xstrdup(file);
	l->line = line;
}

static void lim_scan(struct lim_eval *e, const char *group, const char *file,
		     const char *text)
{
	struct lines l;
	char dom[40];

	snprintf(dom, sizeof(dom), "@%s", group);
	lines_split(&l, text);
	for (size_t i = 0; i < l.n; i++) {
		char *w[4], *save = NULL, *hash = strchr(l.v[i], '#');
		int n = 0, prio;
		uint64_t kib;

		if (hash)
			*hash = '\0';
		for (char *t = strtok_r(l.v[i], " \t", &save); t && n < 4;
		     t = strtok_r(NULL, " \t", &save))
			w[n++] = t;
		if (n < 4 || !str_ieq(w[2], "memlock") ||
		    !lim_value(w[3], &kib))
			continue;
		if (!strcmp(w[0], dom))
			prio = PRIO_GROUP;
		else if (!strcmp(w[0], "*"))
			prio = PRIO_ALL;
		else
			continue;
		if (!strcmp(w[1], "soft") || !strcmp(w[1], "-"))
			lim_set(&e->soft, prio, kib, file, (int)i + 1);
		if (!strcmp(w[1], "hard") || !strcmp(w[1], "-"))
			lim_set(&e->hard, prio, kib, file, (int)i + 1);
	}
	lines_free(&l);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * pam_limits' view, with the file at `path` replaced by `text` (which
 * may add a file to limits.d or, text NULL, take one away).
 */
static void lim_eval(struct lim_eval *e, const char *root, const char *group,
		     const char *path, const char *text)
{
	static const char dprefix[] = DIR_LIMITS_D "/";
	char *dir = root_path(root, DIR_LIMITS_D), **names, **files;
	size_t n = 0, nfiles = 0;

	memset(e, 0, sizeof(*e));
	e->soft.prio = e->hard.prio = PRIO_NONE;
	if (list_dir(dir, &names, &n) < 0)
		names = NULL;
	files = xcalloc(n + 2, sizeof(*files));
	for (size_t i = 0; i < n; i++)
		if (str_has_suffix(names[i], ".conf"))
			files[nfiles++] = xasprintf("%s%s", dprefix, names[i]);
	if (!strncmp(path, dprefix, strlen(dprefix))) {
		size_t i;

		for (i = 0; i < nfiles && strcmp(files[i], path); i++)
			;
		if (i == nfiles)
			files[nfiles++] = xstrdup(path);
	}
	qsort(files, nfiles, sizeof(*files), cmp_str);
	for (size_t i = 0; i <= nfiles; i++) {
		const char *shown = i == 0 ? PATH_LIMITS : files[i - 1];
		char *full = root_path(root, shown), *cur = NULL;

		if (!strcmp(shown, path)) {
			if (text)
				lim_scan(e, group, full, text);
		} else if (read_file(full, &cur) == 0) {
			lim_scan(e, group, full, cur);
		}
		free(cur);
		free(full);
	}
	free_names(files, nfiles);
	free_names(names, n);
	free(dir);
}

static void lim_free(struct lim_eval *e)
{
	free(e->soft.file);
	free(e->hard.file);
}

static void fmt_kib(char *buf, size_t len, uint64_t kib)
{
	if (kib == IBH_MEMLOCK_UNLIMITED)
		snprintf(buf, len, "unlimited");
	else
		snprintf(buf, len, "%" PRIu64 " KiB", kib);
}

static bool lim_short(const struct lim *l, uint64_t want)
{
	return l->prio == PRIO_NONE || l->kib < want;
}

/*
 * Two findings at most, hard limit first (a soft limit cannot go above
 * it): after apply, another file still overriding ibhost's entry (an
 * error, apply cannot fix it); now, the limit below what is asked (apply
 * fixes it).
 */
static void check_limits(const struct ibh_conf *c, const char *root,
			 struct diags *d)
{
	const struct limits_conf *lc = &c->limits;
	char *full, *old = NULL, *body, *planned = NULL, have[32], want[32];
	struct lim_eval now, then;
	const struct lim *l;
	int bad;

	if (!lc->present || !lc->memlock_kib)
		return;
	full = root_path(root, lc->file);
	if (read_file(full, &old) < 0)
		old = NULL;
	body = render_limits(c);
	if (block_merge(old, body, &planned, &bad) < 0)
		planned = NULL;	/* plan reports the broken block */
	fmt_kib(want, sizeof(want), lc->memlock_kib);

	lim_eval(&then, root, lc->group, lc->file, planned);
	l = lim_short(&then.hard, lc->memlock_kib) ? &then.hard :
	    lim_short(&then.soft, lc->memlock_kib) ? &then.soft : NULL;
	if (l && l->prio != PRIO_NONE) {
		fmt_kib(have, sizeof(have), l->kib);
		diag_add(d, DIAG_ERROR, c->path, lc->memlock_line,
			 "memlock %s: %s:%d would still hold the %s limit of "
			 "@%s at %s; expected no later \"@%s\" or \"*\" "
			 "memlock entry below %s", want, l->file, l->line,
			 l == &then.hard ? "hard" : "soft", lc->group, have,
			 lc->group, want);
		goto out;
	}
	lim_eval(&now, root, lc->group, "", NULL);
	l = lim_short(&now.hard, lc->memlock_kib) ? &now.hard :
	    lim_short(&now.soft, lc->memlock_kib) ? &now.soft : NULL;
	if (l && l->prio == PRIO_NONE) {
		diag_add(d, DIAG_PENDING, c->path, lc->memlock_line,
			 "memlock %s: no limits file sets the %s limit of @%s "
			 "(the kernel default, 64 KiB or 8 MiB, applies); "
			 "expected %s (ibhost apply writes %s)", want,
			 l == &now.hard ? "hard" : "soft", lc->group, want,
			 lc->file);
	} else if (l) {
		fmt_kib(have, sizeof(have), l->kib);
		diag_add(d, DIAG_PENDING, c->path, lc->memlock_line,
			 "memlock %s: the %s limit of @%s is %s (%s:%d); "
			 "expected %s (ibhost apply writes %s)", want,
			 l == &now.hard ? "hard" : "soft", lc->group, have,
			 l->file, l->line, want, lc->file);
	}
	lim_free(&now);
out:
	lim_free(&then);
	free(planned);
	free(body);
	free(old);
	free(full);
}

void check_host(const struct ibh_conf *c, const struct inventory *inv,
		const char *root, struct diags *d)
{
	check_ipoib(c, inv, d);
	check_roce(c, inv, d);
	check_soft(c, inv, d);
	check_modules(c, inv, root, d);
	check_limits(c, root, d);
	diags_sort(d);
}
