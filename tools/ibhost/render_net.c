/*
 * render_net.c - IPoIB connections for the three network backends:
 *
 *   networkmanager  one keyfile per interface in DIR_NM, mode 0600, the
 *                   equivalent of `nmcli connection add type infiniband
 *                   ... transportmode connected mtu 65520` and
 *                   `infiniband.p-key 0x8002` (RHEL 8 guide, 6.3);
 *   ifupdown        stanzas in the block of /etc/network/interfaces.d/
 *                   ibhost; the mode through sysfs, children through
 *                   `ip link add ... type ipoib pkey`;
 *   networkd        a .network per interface, a .netdev (Kind=ipoib,
 *                   PartitionKey=) per child, named 60-ibhost-NAME.
 *
 * The udev rule renames the parent before any backend sees it, so every
 * file names the interface by its new name.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "tools/ibhost/render.h"

static const char owned_line[] =
	OWNED_HEADER "; \"ibhost apply\" overwrites changes made here.\n";

/* ---------------------------------------------------------------------
 * NetworkManager
 */

/* The final mix of MurmurHash3: every input bit reaches every output bit. */
static uint64_t fmix64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

/*
 * A UUID that depends only on the connection name, so that a second
 * apply writes the same file: two FNV-1a hashes, mixed, formatted as an
 * RFC 9562 version 8 ("custom") UUID.
 */
static void name_uuid(char *buf, size_t len, const char *name)
{
	uint64_t h[2] = { 0xcbf29ce484222325ull, 0x6c62272e07bb0142ull };
	unsigned char u[16];

	for (int k = 0; k < 2; k++) {
		for (const char *p = name; *p; p++) {
			h[k] ^= (unsigned char)*p;
			h[k] *= 0x100000001b3ull;
		}
		h[k] = fmix64(h[k]);
	}
	for (int i = 0; i < 16; i++)
		u[i] = (unsigned char)(h[i / 8] >> (8 * (7 - i % 8)));
	u[6] = (unsigned char)((u[6] & 0x0f) | 0x80);
	u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);
	snprintf(buf, len, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2], u[3], u[4],
		 u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
}

/* "uuid=" of an existing keyfile, so NetworkManager keeps its profile. */
static bool old_uuid(const char *old, char *buf, size_t len)
{
	struct lines l;
	bool found = false;

	if (!old)
		return false;
	lines_split(&l, old);
	for (size_t i = 0; i < l.n && !found; i++) {
		const char *v = l.v[i];

		if (strncmp(v, "uuid=", 5) || strlen(v + 5) != 36)
			continue;
		v += 5;
		found = strspn(v, "0123456789abcdefABCDEF-") == 36;
		if (found)
			snprintf(buf, len, "%s", v);
	}
	lines_free(&l);
	return found;
}

static const char *nm_method(enum ip_method m, int family)
{
	if (m == IP_STATIC)
		return "manual";
	if (m == IP_AUTO)
		return "auto";
	(void)family;
	return "disabled";
}

static void nm_ip(struct sbuf *b, const struct ipoib_conf *ip,
		  const struct ip_conf *ic, int family)
{
	bool any_dns = false;

	sb_printf(b, "\n[%s]\n", family == AF_INET ? "ipv4" : "ipv6");
	for (unsigned i = 0; i < ic->naddr; i++)
		sb_printf(b, "address%u=%s/%u\n", i + 1, ic->addr[i].text,
			  ic->addr[i].prefix);
	for (unsigned i = 0; i < ip->ndns; i++) {
		if (ip->dns[i].family != family)
			continue;
		sb_printf(b, "%s%s;", any_dns ? "" : "dns=", ip->dns[i].text);
		any_dns = true;
	}
	if (any_dns)
		sb_putc(b, '\n');
	if (ic->has_gw)
		sb_printf(b, "gateway=%s\n", ic->gw.text);
	sb_printf(b, "method=%s\n", nm_method(ic->method, family));
}

char *render_nm(const struct ibh_conf *c, const struct ipoib_conf *ip,
		const char *old)
{
	struct sbuf b = { 0 };
	unsigned mtu = ipoib_mtu_of(c, ip);
	char uuid[40];

	if (!old_uuid(old, uuid, sizeof(uuid)))
		name_uuid(uuid, sizeof(uuid), ip->name);
	sb_add(&b, owned_line);
	sb_printf(&b, "[connection]\nid=%s\nuuid=%s\ntype=infiniband\n"
		  "interface-name=%s\n", ip->name, uuid, ip->name);
	sb_add(&b, "\n[infiniband]\n");
	if (mtu)
		sb_printf(&b, "mtu=%u\n", mtu);
	if (ip->child) {
		/* keyfiles store integers in decimal: 0x8002 is 32770 */
		sb_printf(&b, "p-key=%u\nparent=%s\n", ip->pkey,
			  c->ipoib[ip->parent].name);
	}
	sb_printf(&b, "transport-mode=%s\n",
		  ipoib_mode_name(ipoib_mode_of(c, ip)));
	nm_ip(&b, ip, &ip->v4, AF_INET);
	nm_ip(&b, ip, &ip->v6, AF_INET6);
	return sb_steal(&b);
}

/* ---------------------------------------------------------------------
 * systemd-networkd
 */

char *render_networkd_network(const struct ibh_conf *c,
			      const struct ipoib_conf *ip)
{
	struct sbuf b = { 0 };
	unsigned mtu = ipoib_mtu_of(c, ip);
	const struct ip_conf *v[2] = { &ip->v4, &ip->v6 };

	sb_add(&b, owned_line);
	sb_printf(&b, "[Match]\nName=%s\n", ip->name);
	if (mtu && !ip->child)
		sb_printf(&b, "\n[Link]\nMTUBytes=%u\n", mtu);
	sb_add(&b, "\n[Network]\n");
	if (ip->v4.method == IP_AUTO)
		sb_add(&b, "DHCP=ipv4\n");
	for (int f = 0; f < 2; f++)
		for (unsigned i = 0; i < v[f]->naddr; i++)
			sb_printf(&b, "Address=%s/%u\n", v[f]->addr[i].text,
				  v[f]->addr[i].prefix);
	for (int f = 0; f < 2; f++)
		if (v[f]->has_gw)
			sb_printf(&b, "Gateway=%s\n", v[f]->gw.text);
	for (unsigned i = 0; i < ip->ndns; i++)
		sb_printf(&b, "DNS=%s\n", ip->dns[i].text);
	sb_printf(&b, "IPv6AcceptRA=%s\n",
		  ip->v6.method == IP_AUTO ? "yes" : "no");
	if (ip->v6.method == IP_OFF)
		sb_add(&b, "LinkLocalAddressing=no\n");
	for (size_t i = 0; i < c->nipoib; i++)
		if (c->ipoib[i].parent >= 0 &&
		    &c->ipoib[c->ipoib[i].parent] == ip)
			sb_printf(&b, "IPoIB=%s\n", c->ipoib[i].name);
	if (!ip->child)
		sb_printf(&b, "\n[IPoIB]\nMode=%s\n",
			  ipoib_mode_name(ipoib_mode_of(c, ip)));
	return sb_steal(&b);
}

char *render_networkd_netdev(const struct ibh_conf *c,
			     const struct ipoib_conf *ip)
{
	struct sbuf b = { 0 };
	unsigned mtu = ipoib_mtu_of(c, ip);

	sb_add(&b, owned_line);
	sb_printf(&b, "[NetDev]\nName=%s\nKind=ipoib\n", ip->name);
	if (mtu)
		sb_printf(&b, "MTUBytes=%u\n", mtu);
	sb_printf(&b, "\n[IPoIB]\nPartitionKey=0x%04x\nMode=%s\n", ip->pkey,
		  ipoib_mode_name(ipoib_mode_of(c, ip)));
	return sb_steal(&b);
}

/* ---------------------------------------------------------------------
 * ifupdown
 */

static void ifupdown_dns(struct sbuf *b, const struct ipoib_conf *ip,
			 int family)
{
	bool any = false;

	for (unsigned i = 0; i < ip->ndns; i++) {
		if (ip->dns[i].family != family)
			continue;
		sb_printf(b, "%s%s", any ? " " : "\tdns-nameservers ",
			  ip->dns[i].text);
		any = true;
	}
	if (any)
		sb_putc(b, '\n');
}

static void ifupdown_addrs(struct sbuf *b, const struct ipoib_conf *ip,
			   const struct ip_conf *ic, int family)
{
	for (unsigned i = 0; i < ic->naddr; i++) {
		if (i == 0) {
			sb_printf(b, "\taddress %s/%u\n", ic->addr[i].text,
				  ic->addr[i].prefix);
			continue;
		}
		/* ifupdown takes one address per stanza; add the others. */
		sb_printf(b, "\tup ip address add %s/%u dev $IFACE\n",
			  ic->addr[i].text, ic->addr[i].prefix);
		sb_printf(b, "\tdown ip address del %s/%u dev $IFACE\n",
			  ic->addr[i].text, ic->addr[i].prefix);
	}
	if (ic->has_gw)
		sb_printf(b, "\tgateway %s\n", ic->gw.text);
	ifupdown_dns(b, ip, family);
}

/* The first stanza brings the link to the right mode and MTU. */
static void ifupdown_setup(struct sbuf *b, const struct ibh_conf *c,
			   const struct ipoib_conf *ip, bool manual)
{
	const char *mode = ipoib_mode_name(ipoib_mode_of(c, ip));
	unsigned mtu = ipoib_mtu_of(c, ip);

	if (ip->child) {
		sb_printf(b, "\tpre-up ip link add link %s name $IFACE type "
			  "ipoib pkey 0x%04x mode %s\n",
			  c->ipoib[ip->parent].name, ip->pkey, mode);
	} else {
		sb_printf(b, "\tpre-up echo %s > /sys/class/net/$IFACE/mode\n",
			  mode);
	}
	if (mtu)
		sb_printf(b, "\tpre-up ip link set dev $IFACE mtu %u\n", mtu);
	if (manual)
		sb_add(b, "\tup ip link set dev $IFACE up\n"
			  "\tdown ip link set dev $IFACE down\n");
	if (ip->child)
		sb_add(b, "\tpost-down ip link delete dev $IFACE\n");
}

static void ifupdown_iface(struct sbuf *b, const struct ibh_conf *c,
			   const struct ipoib_conf *ip)
{
	bool v4 = ip->v4.method != IP_OFF, v6 = ip->v6.method != IP_OFF;

	sb_printf(b, "auto %s\n", ip->name);
	if (v4) {
		sb_printf(b, "iface %s inet %s\n", ip->name,
			  ip->v4.method == IP_AUTO ? "dhcp" : "static");
		ifupdown_setup(b, c, ip, false);
		ifupdown_addrs(b, ip, &ip->v4, AF_INET);
	}
	if (v6) {
		sb_printf(b, "iface %s inet6 %s\n", ip->name,
			  ip->v6.method == IP_AUTO ? "auto" : "static");
		if (!v4)
			ifupdown_setup(b, c, ip, false);
		ifupdown_addrs(b, ip, &ip->v6, AF_INET6);
	}
	if (!v4 && !v6) {
		sb_printf(b, "iface %s inet manual\n", ip->name);
		ifupdown_setup(b, c, ip, true);
	}
}

char *render_ifupdown(const struct ibh_conf *c)
{
	struct sbuf b = { 0 };

	if (c->backend != BACKEND_IFUPDOWN || c->nipoib == 0)
		return NULL;
	for (size_t i = 0; i < c->nipoib; i++) {
		if (i)
			sb_putc(&b, '\n');
		ifupdown_iface(&b, c, &c->ipoib[i]);
	}
	return sb_steal(&b);
}
