/*
 * mkey.c - M_Key protection: the keys ports hold, the links to find an
 * SMP's target, the guid2mkey and neighbors files (see mkey.h).
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "config/fileutil.h"
#include "config/sm_config.h"
#include "model/fabric.h"
#include "model/guidmap.h"
#include "sm/mkey.h"
#include "sm/sm.h"

/* Bounds: a fabric of 48K LIDs has fewer end ports and links than this. */
#define MKEY_MAX_KEYS	(1u << 20)
#define MKEY_MAX_LINKS	(1u << 22)
#define MKEY_LIDS	0xc000
#define MKEY_FILE_MAX	(256u << 20)

struct mkey_entry {
	uint64_t guid, key;
};

/* One side of a link: the egress port (its GUID as a hop: a switch's
 * port 0 GUID, a CA's port GUID) and what is at the other end. */
struct mkey_link {
	uint64_t guid;
	uint8_t  port, peer_port;
	uint64_t peer;
};

struct mkey_state {
	struct mkey_entry *keys;
	size_t n_keys, cap_keys;
	struct guidmap by_guid;		/* port GUID -> keys[] index */
	struct mkey_link *links;	/* sorted by (guid, port) */
	size_t n_links;
	uint64_t *lid_guid;		/* LID -> port GUID, MKEY_LIDS */
};

struct mkey_state *mkey_new(void)
{
	struct mkey_state *m = calloc(1, sizeof(*m));

	if (m)
		guidmap_init(&m->by_guid);
	return m;
}

void mkey_free(struct mkey_state *m)
{
	if (!m)
		return;
	guidmap_free(&m->by_guid);
	free(m->keys);
	free(m->links);
	free(m->lid_guid);
	free(m);
}

size_t mkey_count(const struct mkey_state *m)
{
	return m ? m->n_keys : 0;
}

/*
 * With m_key_per_port, a key of each port's own: SipHash-2-4 (libsodium's
 * crypto_shorthash, a keyed pseudo-random function) of the port GUID
 * under m_key, so one port's key tells nothing of another's or of
 * m_key.  Never 0 (0 would mean no protection).
 */
uint64_t mkey_want(const struct sm_config *cfg, uint64_t port_guid)
{
	unsigned char k[crypto_shorthash_KEYBYTES] = { 0 };
	unsigned char out[crypto_shorthash_BYTES];
	uint64_t in = htobe64(port_guid), mk = htobe64(cfg->m_key), v;

	if (!cfg->m_key || !cfg->m_key_per_port)
		return cfg->m_key;
	memcpy(k, &mk, sizeof(mk));
	memcpy(k + 8, "ibsmMKey", 8);
	crypto_shorthash(out, (const unsigned char *)&in, sizeof(in), k);
	memcpy(&v, out, sizeof(v));
	v = be64toh(v);
	return v ? v : 1;
}

uint64_t mkey_of(const struct mkey_state *m, const struct sm_config *cfg,
		 uint64_t port_guid)
{
	uint32_t i = m ? guidmap_find(&m->by_guid, port_guid) : GUIDMAP_NONE;

	if (i != GUIDMAP_NONE && m->keys[i].guid == port_guid)
		return m->keys[i].key;
	return mkey_want(cfg, port_guid);
}

bool mkey_record(struct mkey_state *m, uint64_t port_guid, uint64_t key)
{
	uint32_t i;

	if (!m || !port_guid)
		return false;
	i = guidmap_find(&m->by_guid, port_guid);
	if (i != GUIDMAP_NONE) {
		if (m->keys[i].key == key)
			return false;
		m->keys[i].key = key;
		return true;
	}
	if (!key || m->n_keys >= MKEY_MAX_KEYS)
		return false;
	if (m->n_keys == m->cap_keys) {
		size_t cap = m->cap_keys ? m->cap_keys * 2 : 256;
		struct mkey_entry *k = realloc(m->keys, cap * sizeof(*k));

		if (!k)
			return false;
		m->keys = k;
		m->cap_keys = cap;
	}
	if (guidmap_insert(&m->by_guid, port_guid, (uint32_t)m->n_keys) < 0)
		return false;
	m->keys[m->n_keys++] = (struct mkey_entry){ port_guid, key };
	return true;
}

static int cmp_link(const void *a, const void *b)
{
	const struct mkey_link *x = a, *y = b;

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return (int)x->port - (int)y->port;
}

static uint64_t link_peer(const struct mkey_state *m, uint64_t guid,
			  uint8_t port)
{
	struct mkey_link k = { .guid = guid, .port = port };
	const struct mkey_link *l;

	if (!m->n_links)
		return 0;
	l = bsearch(&k, m->links, m->n_links, sizeof(k), cmp_link);
	return l ? l->peer : 0;
}

/* A node's GUID as a hop of a route: a switch's port 0, a CA's port. */
static uint64_t hop_guid(const struct fab_node *n, unsigned pn)
{
	if (n->type == NODE_TYPE_SWITCH)
		return n->ports[0].guid ? n->ports[0].guid : n->guid;
	return n->ports[pn].guid;
}

static size_t collect_links(const struct fabric *f, struct mkey_link *v,
			    size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *a = &f->nodes[i];

		for (unsigned p = 1; p <= a->num_ports && n < max; p++) {
			const struct fab_port *pt = &a->ports[p];

			if (pt->peer_node == FAB_NONE)
				continue;
			const struct fab_node *b = fabric_node(f, pt->peer_node);
			v[n++] = (struct mkey_link){
				.guid = hop_guid(a, p), .port = (uint8_t)p,
				.peer = hop_guid(b, pt->peer_port),
				.peer_port = pt->peer_port };
		}
	}
	return n;
}

static void learn_lids(struct mkey_state *m, const struct fabric *f)
{
	memset(m->lid_guid, 0, MKEY_LIDS * sizeof(*m->lid_guid));
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		for (unsigned p = 0; p <= n->num_ports; p++) {
			const struct fab_port *pt = &n->ports[p];

			if (!fabric_is_endport(n, p) || !pt->lid)
				continue;
			for (unsigned l = pt->lid;
			     l <= fabric_lid_top(pt) && l < MKEY_LIDS; l++)
				m->lid_guid[l] = hop_guid(n, p);
		}
	}
}

bool mkey_learn(struct mkey_state *m, const struct fabric *f)
{
	size_t max = 0, n;
	struct mkey_link *v;
	bool changed;

	if (!m)
		return false;
	if (!m->lid_guid) {
		m->lid_guid = calloc(MKEY_LIDS, sizeof(*m->lid_guid));
		if (!m->lid_guid)
			return false;
	}
	learn_lids(m, f);
	for (size_t i = 0; i < f->n_nodes; i++)
		max += f->nodes[i].num_ports;
	if (max > MKEY_MAX_LINKS)
		max = MKEY_MAX_LINKS;
	v = malloc((max ? max : 1) * sizeof(*v));
	if (!v)
		return false;
	n = collect_links(f, v, max);
	qsort(v, n, sizeof(*v), cmp_link);
	changed = n != m->n_links ||
		  (n && memcmp(v, m->links, n * sizeof(*v)));
	free(m->links);
	m->links = v;
	m->n_links = n;
	return changed;
}

/* The port a directed route reaches in model `f`; 0 when it leaves it. */
static uint64_t walk_model(const struct fabric *f, const uint8_t *path,
			   unsigned hops)
{
	int32_t id;
	unsigned in;

	if (!f || !f->n_nodes || f->local_node == FAB_NONE ||
	    (size_t)f->local_node >= f->n_nodes)
		return 0;
	id = f->local_node;
	in = f->local_port;
	for (unsigned i = 1; i <= hops; i++) {
		const struct fab_node *n = fabric_node(f, id);
		unsigned p = path[i];

		if (p == 0 || p > n->num_ports ||
		    n->ports[p].peer_node == FAB_NONE)
			return 0;
		in = n->ports[p].peer_port;
		id = n->ports[p].peer_node;
	}
	const struct fab_node *t = fabric_node(f, id);
	return in <= t->num_ports ? hop_guid(t, in) : 0;
}

uint64_t mkey_for_smp(void *arg, const uint8_t *path, unsigned hops,
		      uint16_t lid)
{
	struct mkey_hook *h = arg;
	const struct mkey_state *m = h->m;
	uint64_t guid = 0;

	if (!path) {
		if (m->lid_guid && lid < MKEY_LIDS)
			guid = m->lid_guid[lid];
	} else if (!(guid = walk_model(h->f, path, hops))) {
		guid = h->local_guid;
		for (unsigned i = 1; i <= hops && guid; i++)
			guid = link_peer(m, guid, path[i]);
	}
	if (!guid) {
		h->by_default++;
		return h->cfg->m_key;
	}
	uint32_t i = h->cfg->m_key_lookup ? guidmap_find(&m->by_guid, guid)
					   : GUIDMAP_NONE;
	if (i != GUIDMAP_NONE && m->keys[i].guid == guid) {
		h->by_cache++;
		return m->keys[i].key;
	}
	h->by_want++;
	return mkey_want(h->cfg, guid);
}

void mkey_fix_lease(struct sm_config *cfg, char *note, size_t len)
{
	if (len)
		note[0] = '\0';
	if (!cfg->m_key || !cfg->m_key_protection_level ||
	    !cfg->m_key_lease_period)
		return;
	if (!cfg->sweep_interval) {
		cfg->sweep_interval = cfg->m_key_lease_period > 1 ?
				      cfg->m_key_lease_period - 1 : 1;
		snprintf(note, len, "sweeps are needed to renew the M_Key "
			 "lease: sweep_interval %u", cfg->sweep_interval);
	}
	if (cfg->sweep_interval >= cfg->m_key_lease_period) {
		cfg->m_key_lease_period = cfg->sweep_interval + 1;
		snprintf(note, len, "sweep_interval %u is not below "
			 "m_key_lease_period: lease period %u",
			 cfg->sweep_interval, cfg->m_key_lease_period);
	}
}

/* ------------------------------------------------------------ files */

static int parse_guid_port(const char *s, uint64_t *g, unsigned *p)
{
	char *end;

	errno = 0;
	*g = strtoull(s, &end, 16);
	if (errno || end == s || *end != ':')
		return -1;
	s = end + 1;
	*p = (unsigned)strtoul(s, &end, 10);
	return end == s || *end || *p > 255 ? -1 : 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 16);
	return errno || end == s || *end ? -1 : 0;
}

typedef int (*record_fn)(struct mkey_state *m, const char *a, const char *b);

static int keys_record(struct mkey_state *m, const char *a, const char *b)
{
	uint64_t g, k;

	if (parse_u64(a, &g) < 0 || parse_u64(b, &k) < 0 || !g)
		return -1;
	/* OpenSM writes every port, 0 for those it does not protect */
	return mkey_record(m, g, k) ? 1 : 0;
}

static int link_record(struct mkey_state *m, const char *a, const char *b)
{
	struct mkey_link l;
	unsigned p, q;

	if (parse_guid_port(a, &l.guid, &p) < 0 ||
	    parse_guid_port(b, &l.peer, &q) < 0)
		return -1;
	if (m->n_links >= MKEY_MAX_LINKS)
		return 0;
	struct mkey_link *v = realloc(m->links, (m->n_links + 1) * sizeof(*v));
	if (!v)
		return -1;
	l.port = (uint8_t)p;
	l.peer_port = (uint8_t)q;
	m->links = v;
	m->links[m->n_links++] = l;
	return 1;
}

/* OpenSM's db file: records "KEY VALUE", blank lines between them. */
static int load_db(struct mkey_state *m, const char *path, record_fn fn,
		   void (*warn)(void *, const char *), void *arg)
{
	char *buf, *line, *next;
	size_t len;
	unsigned ln = 0;
	int n = 0, rc = read_file_max(path, MKEY_FILE_MAX, &buf, &len);

	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	for (line = buf; line && *line; line = next) {
		char a[64], b[64], extra[2];
		int k;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		ln++;
		k = sscanf(line, "%63s %63s %1s", a, b, extra);
		if (k <= 0)
			continue;
		rc = k == 2 ? fn(m, a, b) : -1;
		if (rc > 0) {
			n++;
		} else if (rc < 0 && warn) {
			char msg[300];

			snprintf(msg, sizeof(msg), "%s:%u: expected "
				 "\"0xGUID 0xKEY\" or \"0xGUID:PORT "
				 "0xGUID:PORT\"; skipped", path, ln);
			warn(arg, msg);
		}
	}
	free(buf);
	return n;
}

int mkey_load(struct mkey_state *m, const char *dir,
	      void (*warn)(void *arg, const char *msg), void *arg)
{
	char path[600];
	int n, rc;

	snprintf(path, sizeof(path), "%s/guid2mkey", dir);
	n = load_db(m, path, keys_record, warn, arg);
	if (n < 0)
		return n;
	snprintf(path, sizeof(path), "%s/neighbors", dir);
	rc = load_db(m, path, link_record, warn, arg);
	if (rc < 0)
		return rc;
	if (m->n_links)
		qsort(m->links, m->n_links, sizeof(*m->links), cmp_link);
	return n;
}

static int write_keys(FILE *fp, const void *arg)
{
	const struct mkey_state *m = arg;

	for (size_t i = 0; i < m->n_keys; i++)
		if (fprintf(fp, "0x%016" PRIx64 " 0x%016" PRIx64 "\n\n",
			    m->keys[i].guid, m->keys[i].key) < 0)
			return -EIO;
	return 0;
}

static int write_links(FILE *fp, const void *arg)
{
	const struct mkey_state *m = arg;

	for (size_t i = 0; i < m->n_links; i++) {
		const struct mkey_link *l = &m->links[i];

		if (fprintf(fp, "0x%016" PRIx64 ":%u 0x%016" PRIx64 ":%u\n\n",
			    l->guid, l->port, l->peer, l->peer_port) < 0)
			return -EIO;
	}
	return 0;
}

int mkey_save(const struct mkey_state *m, const char *dir)
{
	char path[600];
	int rc;

	snprintf(path, sizeof(path), "%s/guid2mkey", dir);
	rc = write_file_if_changed(path, write_keys, m, 0);
	if (rc < 0)
		return rc;
	snprintf(path, sizeof(path), "%s/neighbors", dir);
	rc = write_file_if_changed(path, write_links, m, 0);
	return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------ daemon */

static void mkey_warn(void *arg, const char *msg)
{
	(void)arg;
	log_warnx("ERR 0240: %s", msg);
}

/*
 * M_Keys (sm/mkey.h): in use from the first heavy sweep that finds
 * m_key set or keys in the cache (ports to be given back key 0), and
 * from then on the engine puts each port's key in its SMPs.
 */
void sm_mkey_start(struct sm *sm)
{
	struct mkey_state *m;
	int n;

	if (sm->mkeys)
		return;
	m = mkey_new();
	if (!m)
		return;
	n = mkey_load(m, sm->cfg.cache_dir, mkey_warn, NULL);
	if (n < 0)
		log_warn_rc(n, "ERR 0240: cannot read %s/guid2mkey",
			    sm->cfg.cache_dir);
	if (!sm->cfg.m_key && n <= 0) {
		mkey_free(m);
		return;
	}
	if (n > 0)
		log_info("guid2mkey: %d M_Keys from %s", n, sm->cfg.cache_dir);
	sm->mkeys = m;
	sm->mkey_hook = (struct mkey_hook){ .cfg = &sm->cfg, .m = m,
					    .f = &sm->fabric,
					    .local_guid = sm->port_guid };
	mad_engine_set_mkey(sm->engine, mkey_for_smp, &sm->mkey_hook);
}

/* After a heavy sweep: the links, and the keys the ports showed. */
void sm_mkey_sweep_done(struct sm *sm)
{
	const struct fabric *f = &sm->fabric;

	if (!sm->mkeys)
		return;
	log_info("M_Key: %" PRIu64 " SMPs with a known key, %" PRIu64
		 " with the key a port is given, %" PRIu64 " with m_key to a "
		 "port not known yet; %zu keys known",
		 sm->mkey_hook.by_cache, sm->mkey_hook.by_want,
		 sm->mkey_hook.by_default, mkey_count(sm->mkeys));
	sm->mkey_dirty |= mkey_learn(sm->mkeys, f);
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		for (unsigned p = 0; p <= n->num_ports; p++)
			if (fabric_is_endport(n, p) && n->ports[p].valid &&
			    n->ports[p].pi.mkey)
				sm->mkey_dirty |= mkey_record(sm->mkeys,
					n->ports[p].guid,
					be64toh(n->ports[p].pi.mkey));
	}
	if (!sm->mkey_dirty || mkdir_p(sm->cfg.cache_dir) < 0)
		return;
	int rc = mkey_save(sm->mkeys, sm->cfg.cache_dir);
	if (rc < 0)
		log_warn_rc(rc, "ERR 0241: M_Keys will not survive a restart:"
			    " cannot write %s/guid2mkey", sm->cfg.cache_dir);
	else
		sm->mkey_dirty = false;
}
