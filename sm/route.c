/*
 * route.c - routing as the daemon runs it (see route.h).
 *
 * Every heavy sweep routes its new model.  What an engine returns is
 * checked before anything is sent (routing_check; routing_check_cdg
 * when the routes have layers or come from a deadlock-free engine,
 * unless the engine ran it on these very tables: cdg_acyclic): a table
 * that loses a destination, loops, or (for layered, deadlock-free routes)
 * closes a cycle in a layer's channel dependency graph would do more
 * harm programmed than the tables the switches already hold, so then the
 * previous tables stay.  Each check walks switches x LIDs once
 * (routing/verify.c): a few milliseconds on 1,152 hosts, 0.1-0.2 s each
 * on 11,664.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "config/fileutil.h"
#include "partitions/partitions.h"
#include "qos/qos.h"
#include "routing/incr.h"
#include "routing/order.h"
#include "routing/report.h"
#include "routing/torus_conf.h"
#include "routing/verify.h"
#include "sm/health/health.h"
#include "sm/lid.h"
#include "sm/log.h"
#include "sm/program.h"
#include "sm/route.h"
#include "sm/sm.h"
#include "sm/topo_file.h"

int sm_guid_file_load(const char *path, uint64_t **guids, char *err,
		      size_t errlen)
{
	FILE *fp = fopen(path, "r");
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;
	unsigned line = 0;
	char buf[256];

	*guids = NULL;
	if (!fp) {
		int e = errno;

		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(e));
		return -e;
	}
	while (fgets(buf, sizeof(buf), fp)) {
		char *p = buf, *end;
		unsigned long long g;

		line++;
		if (!strchr(buf, '\n') && !feof(fp)) {
			snprintf(err, errlen, "%s:%u: expected a line shorter "
				 "than %zu characters", path, line, sizeof(buf));
			goto bad;
		}
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			continue;
		errno = 0;
		g = strtoull(p, &end, 16);
		if (end == p || errno || (p[0] == '-') ||
		    (*end && !isspace((unsigned char)*end) && *end != '#')) {
			buf[strcspn(buf, "\r\n")] = '\0';
			snprintf(err, errlen, "%s:%u: '%s': expected a GUID "
				 "(hexadecimal, e.g. 0x0002c90300001234)",
				 path, line, p);
			goto bad;
		}
		for (p = end; isspace((unsigned char)*p); p++)
			;
		if (*p && *p != '#') {
			snprintf(err, errlen, "%s:%u: expected one GUID per "
				 "line", path, line);
			goto bad;
		}
		if (!g) {
			snprintf(err, errlen, "%s:%u: expected a GUID, not 0",
				 path, line);
			goto bad;
		}
		if (n == SM_MAX_GUID_FILE) {
			snprintf(err, errlen, "%s:%u: more than %d GUIDs", path,
				 line, SM_MAX_GUID_FILE);
			goto bad;
		}
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			uint64_t *nv = realloc(v, c * sizeof(*v));

			if (!nv) {
				snprintf(err, errlen, "%s: out of memory", path);
				fclose(fp);
				free(v);
				return -ENOMEM;
			}
			v = nv;
			cap = c;
		}
		v[n++] = g;
	}
	if (ferror(fp)) {
		snprintf(err, errlen, "%s: read error", path);
		fclose(fp);
		free(v);
		return -EIO;
	}
	fclose(fp);
	*guids = v;
	return (int)n;
bad:
	fclose(fp);
	free(v);
	return -EINVAL;
}

unsigned sm_max_layers(unsigned max_op_vls)
{
	static const unsigned vls[] = { 1, 1, 2, 4, 8, 15 };

	return max_op_vls < sizeof(vls) / sizeof(vls[0]) ? vls[max_op_vls]
							 : 15;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The engines' options from the configuration: layers from max_op_vls,
 * the GUID files read now (so an edited file counts at the next routing,
 * as in OpenSM).  A file that cannot be used is left out, its reason
 * ("FILE:LINE: ...") in err; -errno then, 0 otherwise.  The GUID arrays
 * are freed by opts_free().
 */
static int opts_get(const struct sm_config *cfg, struct routing_opts *o,
		    char *err, size_t errlen)
{
	uint64_t *g;
	int n, rc = 0;

	memset(o, 0, sizeof(*o));
	o->max_layers = sm_max_layers(cfg->max_op_vls);
	o->minhop_last = true;		/* OpenSM's routing_engine rule */
	o->nue_max_vls = cfg->nue_max_num_vls;
	o->lfts_file = cfg->lfts_file;
	if (cfg->root_guid_file) {
		n = sm_guid_file_load(cfg->root_guid_file, &g, err, errlen);
		if (n < 0)
			rc = n;
		else {
			o->root_guids = g;
			o->n_root_guids = (size_t)n;
		}
	}
	if (cfg->cn_guid_file && rc == 0) {
		n = sm_guid_file_load(cfg->cn_guid_file, &g, err, errlen);
		if (n < 0)
			rc = n;
		else {
			o->cn_guids = g;
			o->n_cn_guids = (size_t)n;
		}
	}
	if (cfg->io_guid_file && rc == 0) {
		n = sm_guid_file_load(cfg->io_guid_file, &g, err, errlen);
		if (n < 0)
			rc = n;
		else {
			o->io_guids = g;
			o->n_io_guids = (size_t)n;
		}
	}
	o->max_reverse_hops = cfg->max_reverse_hops;
	o->profile_switch_nodes = cfg->port_profile_switch_nodes;
	o->connect_roots = cfg->connect_roots;
	/* torus_config: read when the file exists (OpenSM reads it for its
	 * torus-2QoS engine; without it the torus engine finds the shape
	 * itself, and --check-config says so) */
	if (rc == 0 && cfg->torus_config && strcmp(cfg->torus_config,
						   "(null)") &&
	    !(access(cfg->torus_config, F_OK) < 0 && errno == ENOENT)) {
		struct torus_conf *tc = malloc(sizeof(*tc));

		if (!tc)
			return -ENOMEM;
		rc = torus_conf_load(tc, cfg->torus_config, err, errlen);
		if (rc < 0)
			free(tc);
		else
			o->torus_conf = tc;
	}
	return rc;
}

static void opts_free(struct routing_opts *o)
{
	free((void *)o->root_guids);
	free((void *)o->cn_guids);
	free((void *)o->io_guids);
	free((void *)o->torus_conf);
	free((void *)o->order_guids);
	free((void *)o->port_rank);
	free((void *)o->hop_wf);
	free((void *)o->prof_ignore);
	free((void *)o->id_guids);
	free((void *)o->ids);
	memset(o, 0, sizeof(*o));
}

/* ------------------------------------------------ the ordering files */

#define ORDER_FILE_MAX	(64u << 20)	/* bytes */
#define ORDER_WARN_MAX	20		/* messages logged per routing */

/*
 * What reading guid_routing_order_file and port_search_ordering_file
 * found wrong: the daemon reads them at every routing (as OpenSM does),
 * so the same complaints come again and again; they are logged as
 * warnings when they differ from the previous routing's, else at debug
 * level.  Offline (errf set) every one is printed.
 */
struct order_warn {
	FILE *errf;
	unsigned n;
	uint64_t digest;
	char msg[ORDER_WARN_MAX][320];
};

static void order_warn_cb(void *ctx, const char *msg)
{
	struct order_warn *w = ctx;

	for (const char *c = msg; *c; c++)
		w->digest = (w->digest ^ (unsigned char)*c) * 0x100000001b3ull;
	if (w->errf)
		fprintf(w->errf, "ibsm: warning: %s\n", msg);
	else if (w->n < ORDER_WARN_MAX)
		snprintf(w->msg[w->n], sizeof(w->msg[0]), "%s", msg);
	w->n++;
}

static void order_warn_log(const struct order_warn *w)
{
	static uint64_t last;
	bool again = w->digest == last;

	last = w->digest;
	for (unsigned i = 0; i < w->n && i < ORDER_WARN_MAX; i++)
		if (again)
			log_debug("routing: %s", w->msg[i]);
		else
			log_warnx("routing: %s", w->msg[i]);
	if (w->n > ORDER_WARN_MAX && !again)
		log_warnx("routing: %u more problems in the ordering files",
			  w->n - ORDER_WARN_MAX);
}

/* A file's text, or NULL with a warning (the routing goes on without). */
static char *order_read(const char *key, const char *path, size_t *len,
			struct order_warn *w)
{
	char *text = NULL, msg[600];
	int rc = read_file_max(path, ORDER_FILE_MAX, &text, len);

	if (rc == 0)
		return text;
	snprintf(msg, sizeof(msg), "%s %s: cannot read: %s; routing without "
		 "it", key, path, rc == -EFBIG ? "larger than 64 MiB" :
		 strerror(-rc));
	order_warn_cb(w, msg);
	return NULL;
}

static void order_warn_stderr(void *ctx, const char *msg)
{
	(*(size_t *)ctx)++;
	log_stderr(LOG_LVL_WARN, "warning: %s", msg);
}

size_t sm_order_file_check(const char *key, const char *path)
{
	size_t n = 0, len;
	char *text;
	int rc = read_file_max(path, ORDER_FILE_MAX, &text, &len);

	if (rc < 0) {
		log_stderr(LOG_LVL_WARN, "warning: %s %s: cannot read: %s; "
			   "routing without it", key, path, rc == -EFBIG ?
			   "larger than 64 MiB" : strerror(-rc));
		return 1;
	}
	if (!strcmp(key, "guid_routing_order_file")) {
		struct order_guids og;

		if (order_guids_parse(&og, text, len, path, order_warn_stderr,
				      &n) == 0)
			order_guids_free(&og);
	} else if (!strcmp(key, "ids_guid_file")) {
		struct node_ids ni;

		if (node_ids_parse(&ni, text, len, path, order_warn_stderr,
				   &n) == 0)
			node_ids_free(&ni);
	} else if (!strcmp(key, "port_search_ordering_file")) {
		struct port_order po;

		if (port_order_parse(&po, text, len, path, order_warn_stderr,
				     &n) == 0)
			port_order_free(&po);
	} else {
		struct port_vals pv;

		if (port_vals_parse(&pv, text, len, path,
				    !strcmp(key, "hop_weights_file"),
				    order_warn_stderr, &n) == 0)
			port_vals_free(&pv);
	}
	free(text);
	return n;
}

/*
 * hop_weights_file (`weights`) or port_prof_ignore_file `path` resolved
 * on `f` into *val and *n (port_vals_resolve(); untouched when the file
 * cannot be read or sets nothing on `f`).  0 or -ENOMEM.
 */
static int vals_get(const struct fabric *f, const char *key,
		    const char *path, bool weights,
		    const uint8_t *const **val, size_t *n,
		    struct order_warn *w)
{
	struct port_vals pv;
	uint8_t **v;
	long n_sw = 0;
	size_t len;
	char *text;
	int rc;

	if (!path || !(text = order_read(key, path, &len, w)))
		return 0;
	rc = port_vals_parse(&pv, text, len, path, weights, order_warn_cb, w);
	free(text);
	if (rc == 0)
		n_sw = port_vals_resolve(f, &pv, path, weights ? 1 : 0, &v,
					 order_warn_cb, w);
	port_vals_free(&pv);
	if (rc < 0 || n_sw < 0)
		return -ENOMEM;
	if (n_sw > 0) {
		*val = (const uint8_t *const *)v;
		*n = f->n_nodes;
	}
	return 0;
}

/* ids_guid_file into `o` (untouched when it cannot be read).  0 or
 * -ENOMEM. */
static int ids_get(const char *path, struct routing_opts *o,
		   struct order_warn *w)
{
	struct node_ids ni;
	size_t len;
	char *text;
	int rc;

	if (!path || !(text = order_read("ids_guid_file", path, &len, w)))
		return 0;
	rc = node_ids_parse(&ni, text, len, path, order_warn_cb, w);
	free(text);
	if (rc == 0) {
		free(ni.line);
		o->id_guids = ni.guid;
		o->ids = ni.id;
		o->n_ids = ni.n;
	}
	return rc;
}

/*
 * guid_routing_order_file and port_search_ordering_file into `o`, the
 * latter resolved on `f` (the fabric to be routed), and likewise
 * hop_weights_file and port_prof_ignore_file; ids_guid_file.  Lines that
 * cannot be used are reported through w and skipped; a file that cannot
 * be read is left out.  Only -ENOMEM fails.
 */
static int orders_get(const struct sm_config *cfg, const struct fabric *f,
		      struct routing_opts *o, struct order_warn *w)
{
	const char *gf = cfg->guid_routing_order_file;
	const char *pf = cfg->port_search_ordering_file;
	char *text;
	size_t len;
	int rc = 0;

	if (gf && (text = order_read("guid_routing_order_file", gf, &len, w))) {
		struct order_guids og;

		rc = order_guids_parse(&og, text, len, gf, order_warn_cb, w);
		free(text);
		if (rc == 0) {
			free(og.line);
			o->order_guids = og.guid;
			o->n_order_guids = og.n;
		}
	}
	if (rc == 0 && pf &&
	    (text = order_read("port_search_ordering_file", pf, &len, w))) {
		struct port_order po;
		uint8_t **rank;
		long n = 0;

		rc = port_order_parse(&po, text, len, pf, order_warn_cb, w);
		free(text);
		if (rc == 0)
			n = port_order_resolve(f, &po, pf, &rank, order_warn_cb, w);
		port_order_free(&po);
		if (n < 0)
			rc = (int)n;
		else if (n > 0) {
			o->port_rank = (const uint8_t *const *)rank;
			o->n_port_rank = f->n_nodes;
		}
	}
	if (rc == 0)
		rc = vals_get(f, "hop_weights_file", cfg->hop_weights_file,
			      true, &o->hop_wf, &o->n_hop_wf, w);
	if (rc == 0)
		rc = vals_get(f, "port_prof_ignore_file",
			      cfg->port_prof_ignore_file, false,
			      &o->prof_ignore, &o->n_prof_ignore, w);
	if (rc == 0)
		rc = ids_get(cfg->ids_guid_file, o, w);
	return rc;
}

/*
 * The minhop-only keys set while another engine routed (auto picks one
 * from the fabric, unlike OpenSM's default minhop): the sentence saying
 * so into buf, true; false when there is nothing to say.
 */
static bool minhop_keys_unused(const struct sm_config *cfg,
			       const char *engine, char *buf, size_t len)
{
	const char *k[3];
	unsigned n = 0;

	if (!engine || !strcmp(engine, "minhop"))
		return false;
	if (cfg->hop_weights_file)
		k[n++] = "hop_weights_file";
	if (cfg->port_prof_ignore_file)
		k[n++] = "port_prof_ignore_file";
	if (cfg->port_profile_switch_nodes)
		k[n++] = "port_profile_switch_nodes";
	if (!n)
		return false;
	snprintf(buf, len, "%s routed; %s%s%s%s%s shape%s the minhop engine "
		 "only", engine, k[0], n > 1 ? ", " : "", n > 1 ? k[1] : "",
		 n > 2 ? ", " : "", n > 2 ? k[2] : "", n > 1 ? "" : "s");
	return true;
}

/*
 * IBSM_DEBUG_CORRUPT_LFT=N (tests only): from the Nth routing computation
 * of this process on, one entry of the first switch's table that leads
 * to a CA is cleared after the engine ran, so that the verification has
 * something to catch (tests/fabric/test_route_verify.sh).  Runs in
 * sm_route_compute(): what it cleared goes to the job, logged later.
 */
static bool debug_corrupt(struct sm_route_job *j, struct routing_result *r)
{
	const struct fabric *f = j->f;

	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];

		if (!r->lft[i].port)
			continue;
		for (unsigned p = 1; p <= n->num_ports; p++) {
			const struct fab_port *pt = &n->ports[p];
			const struct fab_node *peer;
			uint16_t lid;

			if (pt->peer_node == FAB_NONE)
				continue;
			peer = fabric_node(f, pt->peer_node);
			if (peer->type == NODE_TYPE_SWITCH)
				continue;
			lid = peer->ports[pt->peer_port].lid;
			if (!lid || lid > r->lft[i].top)
				continue;
			r->lft[i].port[lid] = LFT_NO_PATH;
			r->cdg_acyclic = false;
			j->corrupt_lid = lid;
			j->corrupt_guid = n->guid;
			return true;
		}
	}
	return false;
}

/*
 * The previous sweep's tables, re-indexed for the new model by switch
 * GUID, into `prev` (zeroed on entry).  A switch the previous model did
 * not have gets its table from `cur`: there is nothing older to keep for
 * it.  0, or -ENOMEM (prev freed).
 */
static int previous_tables(struct sm *sm, const struct fabric *f,
			   const struct routing_result *cur,
			   struct routing_result *prev)
{
	const struct routing_result *old = &sm->routes;
	const struct fabric *of = &sm->fabric;
	size_t n = f->n_nodes ? f->n_nodes : 1;

	prev->n_nodes = f->n_nodes;
	prev->lft = calloc(n, sizeof(*prev->lft));
	if (old->sl)
		prev->sl = calloc(n, sizeof(*prev->sl));
	if (!prev->lft || (old->sl && !prev->sl))
		goto nomem;
	for (size_t i = 0; i < f->n_nodes; i++) {
		int32_t j;
		const struct lft *src;
		size_t len;

		if (f->nodes[i].type != NODE_TYPE_SWITCH)
			continue;
		j = fabric_find(of, f->nodes[i].guid);
		if (j != FAB_NONE && (size_t)j >= old->n_nodes)
			j = FAB_NONE;
		src = j != FAB_NONE && old->lft[j].port ? &old->lft[j]
							 : &cur->lft[i];
		if (!src->port)
			continue;
		len = (size_t)src->top + 1;
		prev->lft[i].top = src->top;
		prev->lft[i].port = malloc(len);
		if (!prev->lft[i].port)
			goto nomem;
		memcpy(prev->lft[i].port, src->port, len);
		if (prev->sl && j != FAB_NONE && old->sl[j]) {
			prev->sl[i] = malloc(len);
			if (!prev->sl[i])
				goto nomem;
			memcpy(prev->sl[i], old->sl[j], len);
		}
	}
	prev->n_layers = prev->sl ? old->n_layers : 0;
	prev->split = old->split;
	prev->engine = old->engine;
	snprintf(prev->summary, sizeof(prev->summary), "%s", old->summary);
	return 0;
nomem:
	routing_result_free(prev);
	return -ENOMEM;
}

int sm_route_qos(const struct sm_config *cfg, const struct part_config *pc,
		 const struct qos_policy *pol, struct vl_qos *q)
{
	struct qos_tables t;
	char err[160];

	memset(q, 0, sizeof(*q));
	if (qos_build_tables(&t, &cfg->qos_keys[QOS_SWE],
			     &cfg->qos_keys[QOS_BASE], err, sizeof(err)) < 0)
		return -EINVAL;
	memcpy(q->vl, t.sl2vl, sizeof(q->vl));
	q->default_sl = 0;
	if (pol && pol->default_level < pol->n_levels &&
	    pol->levels[pol->default_level].sl >= 0)
		q->default_sl = (uint8_t)(pol->levels[pol->default_level].sl &
					  15);
	q->sls = (uint16_t)(1u << q->default_sl);
	for (size_t i = 0; pol && i < pol->n_levels; i++)
		if (pol->levels[i].sl >= 0)
			q->sls |= (uint16_t)(1u << (pol->levels[i].sl & 15));
	for (size_t i = 0; pc && i < pc->n_parts; i++) {
		const struct part *p = &pc->parts[i];

		q->sls |= (uint16_t)(1u << (p->sl & 15));
		for (size_t g = 0; g < p->n_mgroups; g++)
			q->sls |= (uint16_t)(1u << (p->mgroups[g].sl & 15));
	}
	return 0;
}

/* The per-VL check's map: the tables program_sl2vl() sets. */
struct vlmap_ctx {
	const struct fabric *f;
	const struct routing_result *r;
	unsigned max_op_vls;
};

static unsigned vlmap_vl(void *arg, int32_t node, unsigned out, unsigned sl)
{
	const struct vlmap_ctx *x = arg;
	uint8_t vl[16];

	sl2vl_split_vls(x->r, x->max_op_vls, x->f, node, out, vl);
	return vl[sl & 15];
}

/* Deadlock freedom per VL after the QoS classes' SL-to-VL mapping. */
static int verify_vls(const struct fabric *f, const struct routing_result *r,
		      unsigned max_op_vls, char *what, size_t len,
		      struct hc_routing_verdict *v)
{
	struct vlmap_ctx x = { f, r, max_op_vls };
	struct routing_vlmap m;
	struct routing_cdg cdg;
	int rc;

	routing_vlmap_from_split(r, &m);
	m.vl = vlmap_vl;
	m.ctx = &x;
	rc = routing_check_cdg_vl(f, r, &m, &cdg);
	if (rc < 0)
		return rc;
	v->cycles = routing_cdg_cycles(&cdg);
	for (unsigned i = 0; i < cdg.layers && i < ROUTING_MAX_LAYERS; i++)
		if (cdg.cycles[i]) {
			snprintf(what, len, "VL %u of %u (QoS classes x layers) "
				 "has %" PRIu64 " channel dependency cycles (%"
				 PRIu64 " in all): a credit loop could deadlock "
				 "the fabric", i, cdg.layers, cdg.cycles[i],
				 routing_cdg_cycles(&cdg));
			break;
		}
	return 0;
}

/*
 * The checks before programming: every CA/router port reaches every LID
 * (no loop, no misroute), and, when the routes claim deadlock freedom,
 * no cycle in any layer's channel dependency graph.  0 with what[0] ==
 * '\0' when all pass, else what says what failed and *lost counts the
 * paths that fail (0 for dependency cycles alone); -errno on no memory.
 */
static int verify(const struct fabric *f, const struct routing_result *r,
		  unsigned max_op_vls, char *what, size_t len, uint64_t *lost,
		  struct hc_routing_verdict *v)
{
	struct routing_check chk;
	struct routing_cdg cdg;
	int rc;

	what[0] = '\0';
	*lost = 0;
	memset(v, 0, sizeof(*v));
	rc = routing_check(f, r, &chk);
	if (rc < 0)
		return rc;
	*lost = routing_check_failures(&chk);
	v->pairs = chk.pairs;
	v->unreachable = *lost;
	v->bad_lid = chk.bad_lid;
	v->bad_switch_guid = chk.bad_switch != FAB_NONE ?
			     fabric_node(f, chk.bad_switch)->guid : 0;
	if (chk.past_cap) {
		/* reachable through no switch that forwards them all */
		snprintf(what, len, "%" PRIu64 " LIDs at or past a switch's "
			 "LinearFDBCap, first: LID %u (%" PRIu64 " of %" PRIu64
			 " paths fail)", chk.past_cap, chk.cap_lid, *lost,
			 chk.pairs);
		if (!*lost)
			*lost = chk.past_cap;
		return 0;
	}
	if (*lost) {
		const struct fab_node *n = chk.bad_switch != FAB_NONE ?
			fabric_node(f, chk.bad_switch) : NULL;

		snprintf(what, len, "%" PRIu64 " of %" PRIu64 " paths fail (%"
			 PRIu64 " unreachable, %" PRIu64 " loops, %" PRIu64
			 " misrouted), first: LID %u from switch 0x%016" PRIx64
			 " '%s'", *lost, chk.pairs, chk.unreachable, chk.loops,
			 chk.misrouted, chk.bad_lid, n ? n->guid : 0,
			 n ? fab_node_label(n) : "?");
		return 0;
	}
	/* QoS classes and layers: per VL, as the SL-to-VL tables map them */
	if (routing_split_active(r))
		return verify_vls(f, r, max_op_vls, what, len, v);
	/* the engine's own check of these very tables (routing.h) */
	if (!routing_claims_deadlock_free(r) || r->cdg_acyclic)
		return 0;
	rc = routing_check_cdg(f, r, &cdg);
	if (rc < 0)
		return rc;
	v->cycles = routing_cdg_cycles(&cdg);
	for (unsigned i = 0; i < cdg.layers && i < ROUTING_MAX_LAYERS; i++)
		if (cdg.cycles[i]) {
			snprintf(what, len, "layer %u of %u has %" PRIu64
				 " channel dependency cycles (%" PRIu64 " in "
				 "all): a credit loop could deadlock the fabric",
				 i, cdg.layers, cdg.cycles[i],
				 routing_cdg_cycles(&cdg));
			break;
		}
	return 0;
}

/*
 * Whether `f` is the previous model with only losses: every node and
 * every linked port of f was there before, linked to the same peer port,
 * with the same LID and LMC.  Else why not, in `why`.
 */
static bool only_losses(const struct fabric *old, const struct fabric *f,
			char *why, size_t len)
{
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		int32_t j = fabric_find(old, n->guid);
		const struct fab_node *o;

		if (j == FAB_NONE) {
			snprintf(why, len, "node 0x%016" PRIx64 " is new", n->guid);
			return false;
		}
		o = fabric_node(old, j);
		if (o->num_ports != n->num_ports || o->type != n->type) {
			snprintf(why, len, "node 0x%016" PRIx64 " changed", n->guid);
			return false;
		}
		for (unsigned p = 0; p <= n->num_ports; p++) {
			const struct fab_port *a = &n->ports[p], *b = &o->ports[p];

			if (a->lid != b->lid || (a->lid && a->lmc != b->lmc)) {
				snprintf(why, len, "LID of 0x%016" PRIx64 " port %u"
					 " changed", n->guid, p);
				return false;
			}
			if (a->peer_node == FAB_NONE)
				continue;
			if (b->peer_node == FAB_NONE ||
			    b->peer_port != a->peer_port ||
			    fabric_node(old, b->peer_node)->guid !=
			    fabric_node(f, a->peer_node)->guid) {
				snprintf(why, len, "a link of 0x%016" PRIx64
					 " port %u is new", n->guid, p);
				return false;
			}
		}
	}
	return true;
}

/*
 * After losses only: keep the routes of every destination whose tree did
 * not cross them (routing/incr.h).  `out` holds the engine's full tables;
 * it is replaced by the merged ones when they pass verification.
 * Returns 1 then, 0 when out stays as it is, -errno on no memory.
 */
static int try_incremental(struct sm *sm, const struct fabric *f,
			   struct routing_result *out)
{
	struct routing_result prev = { 0 }, merged = { 0 };
	struct incr_stats st;
	char why[256] = "", what[200];
	const char *mode = NULL;
	uint64_t lost;
	struct hc_routing_verdict mv;
	double t0 = now();
	int rc = 0;

	if (sm->cfg.no_incremental_reroute || !sm->routes.lft ||
	    sm->routes.n_nodes != sm->fabric.n_nodes || !sm->fabric.n_nodes)
		return 0;
	if (!sm->routes.engine || !out->engine ||
	    strcmp(sm->routes.engine, out->engine)) {
		snprintf(why, sizeof(why), "the engine changed");
		goto full;
	}
	if (out->port_class) {
		/* per-hop VLs (torus, dfplus): SLs mean nothing apart from
		 * the port classes of their own tables */
		snprintf(why, sizeof(why), "%s maps VLs per hop",
			 out->engine);
		goto full;
	}
	if (!only_losses(&sm->fabric, f, why, sizeof(why)))
		goto full;
	rc = previous_tables(sm, f, out, &prev);
	if (rc < 0)
		return rc;
	/* Per switch first (fewest changes), then per destination. */
	for (int per_switch = 1; per_switch >= 0; per_switch--) {
		rc = routing_merge_incremental(f, &prev, out, per_switch,
					       &merged, &st);
		if (rc == -EINVAL) {
			snprintf(why, sizeof(why), "the tables do not fit"
				 " together");
			break;
		}
		if (rc < 0)
			break;
		if (!st.rerouted && !st.gone) {
			/* nothing lost: the engine's tables, as always
			 * (a forced re-route, new options) */
			routing_result_free(&merged);
			routing_result_free(&prev);
			return 0;
		}
		rc = verify(f, &merged, sm->cfg.max_op_vls, what, sizeof(what),
			    &lost, &mv);
		if (rc < 0)
			break;
		if (!what[0]) {
			mode = per_switch ? "per switch" : "per destination";
			break;
		}
		routing_result_free(&merged);
		snprintf(why, sizeof(why), "the merged tables fail: %s", what);
	}
	routing_result_free(&prev);
	if (rc < 0 && rc != -EINVAL) {
		routing_result_free(&merged);
		return rc;
	}
	if (!mode)
		goto full;
	routing_result_free(out);
	*out = merged;
	log_info("routing: incremental (%s): %u of %u destinations re-routed,"
		 " %u gone; %" PRIu64 " LFT blocks change (a full re-route: %"
		 PRIu64 ") (%.3f s)", mode, st.rerouted, st.dests, st.gone,
		 st.blocks_incr, st.blocks_full, now() - t0);
	return 1;
full:
	log_info("routing: full re-route: %s", why);
	return 0;
}

/* OpenSM engine names that map to another engine: said once per list. */
static void log_aliases(const char *list)
{
	static char last[sizeof(((struct sm_route_job *)0)->list)];
	char what[400];

	if (!strcmp(last, list))
		return;
	snprintf(last, sizeof(last), "%s", list);
	routing_aliases(list, what, sizeof(what));
	if (what[0])
		log_info("routing: OpenSM engine names mapped: %s", what);
}

void sm_route_prepare(struct sm *sm, const struct fabric *f,
		      struct sm_route_job *j)
{
	const char *v = getenv("IBSM_DEBUG_CORRUPT_LFT");
	unsigned long from = v ? strtoul(v, NULL, 10) : 0;
	char ferr[600];
	struct order_warn w = { 0 };

	memset(j, 0, sizeof(*j));
	j->f = f;
	snprintf(j->list, sizeof(j->list), "%s", sm->cfg.routing_engine ?
		 sm->cfg.routing_engine : SM_DEFAULT_ENGINES);
	log_aliases(j->list);
	/* a bad GUID file: routing goes on without the rest of them */
	if (opts_get(&sm->cfg, &j->o, ferr, sizeof(ferr)) < 0)
		log_err("ERR 1503: %s; routing without it", ferr);
	if (orders_get(&sm->cfg, f, &j->o, &w) < 0)
		log_err("ERR 1503: the ordering files: out of memory; routing "
			"without them");
	order_warn_log(&w);
	if (j->o.n_order_guids || j->o.port_rank)
		log_debug("routing: %zu GUIDs of guid_routing_order_file, %s",
			  j->o.n_order_guids, j->o.port_rank ?
			  "port_search_ordering_file" :
			  "no port search order");
	j->max_op_vls = sm->cfg.max_op_vls;
	if (sm->cfg.qos && sm_route_qos(&sm->cfg, sm->parts,
					sm_qos_policy(sm, NULL), &j->qos) == 0)
		j->o.qos = &j->qos;
	sm->route_runs++;
	j->corrupt = from && sm->route_runs >= from;
	v = getenv("IBSM_DEBUG_ROUTE_DELAY_MS");
	j->delay_ms = v ? (unsigned)strtoul(v, NULL, 10) : 0;
}

void sm_route_compute(struct sm_route_job *j)
{
	double t0 = now(), t1;

	if (j->delay_ms) {
		struct timespec ts = { j->delay_ms / 1000,
				       (long)(j->delay_ms % 1000) * 1000000L };

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	j->rc = routing_run_opts(j->list, j->f, &j->o, &j->out, j->err,
				 sizeof(j->err));
	t1 = now();
	j->t_engine = t1 - t0;
	if (j->rc < 0)
		return;
	if (j->corrupt)
		debug_corrupt(j, &j->out);
	j->vrc = verify(j->f, &j->out, j->max_op_vls, j->what,
			sizeof(j->what), &j->lost, &j->verdict);
	j->verified = true;
	j->t_verify = now() - t1;
	j->lrc = routing_report_load(j->f, &j->out, &j->load);
}

/*
 * The busiest link of the tables that will be programmed, as `ibsmctl
 * routes report` computes it on them (routing_report_load): the
 * engine's tables' from the routing thread, or, when other tables
 * replace them (an incremental merge, the previous tables kept),
 * theirs, computed now.
 */
static void log_busiest(struct sm *sm, struct sm_route_job *j,
			const struct routing_result *out,
			const struct lft *engine_lft)
{
	struct routing_report mine, *rep = &j->load;
	int rc = j->lrc;
	char b[256];

	if (out->lft != engine_lft) {
		rc = routing_report_load(j->f, out, &mine);
		rep = &mine;
	}
	if (rc < 0)
		return;
	sm->route_load = (struct sm_route_load){ .valid = true,
		.max = rep->load_max, .mean = rep->load_mean,
		.ratio = rep->ratio, .channels = rep->channels,
		.channels_used = rep->channels_used, .routes = rep->routes };
	routing_report_busiest(rep, b, sizeof(b));
	log_info("routing: busiest link %s (max/ideal %.2f)", b, rep->ratio);
}

void sm_route_job_free(struct sm_route_job *j)
{
	routing_result_free(&j->out);
	opts_free(&j->o);
}

/*
 * qos TRUE: how the QoS classes and the layers share the VLs, and what
 * was reduced when both did not fit (WARNING: never silent).
 */
static void log_split(const struct routing_result *r)
{
	char d[320], red[320];

	if (!r->split.n_classes)
		return;
	vlsplit_reduced(&r->split, r->n_layers, r->layers_short,
			red, sizeof(red));
	if (routing_split_active(r)) {
		vlsplit_describe(&r->split, d, sizeof(d));
		log_info("routing: QoS and virtual layers: %s", d);
	} else {
		log_info("routing: QoS: %u class%s, %s: the QoS SL-to-VL "
			 "tables as configured", r->split.n_classes,
			 r->split.n_classes == 1 ? "" : "es", r->n_layers ?
			 "one layer" : "no layers");
	}
	if (red[0])
		log_warnx("routing: QoS and virtual layers do not both fit: "
			  "%s; %s routes within that (%s)", red, r->engine,
			  r->summary[0] ? r->summary : "no summary");
}

static int finish(struct sm *sm, struct sm_route_job *j,
		  struct routing_result *out, char *err, size_t errlen)
{
	const struct fabric *f = j->f;
	struct routing_result prev = { 0 };
	char pwhat[200];
	uint64_t plost;
	struct hc_routing_verdict pv, ok = { 0 };
	int rc;

	opts_free(&j->o);
	if (j->rc < 0) {
		snprintf(err, errlen, "%s", j->err);
		rc = j->rc;
		sm_route_job_free(j);
		return rc;
	}
	*out = j->out;
	memset(&j->out, 0, sizeof(j->out));
	if (out->fallback[0])
		log_warnx("ERR 1501: routing fell back to %s: %s", out->engine,
			  out->fallback);
	log_info("routing: %s%s%s (%.3f s)", out->engine,
		 out->summary[0] ? ": " : "", out->summary, j->t_engine);
	{
		char note[200];

		if (minhop_keys_unused(&sm->cfg, out->engine, note,
				       sizeof(note)))
			log_info("routing: %s", note);
	}
	log_split(out);
	if (j->corrupt_lid)
		log_warnx("debug: IBSM_DEBUG_CORRUPT_LFT: cleared LID %u in the"
			  " table of switch 0x%016" PRIx64, j->corrupt_lid,
			  j->corrupt_guid);
	/* merged tables are verified by try_incremental() (but a table a
	 * test corrupted goes to the check as it is) */
	rc = j->corrupt_lid ? 0 : try_incremental(sm, f, out);
	if (rc < 0)
		goto nomem;
	if (rc == 1) {
		sm_health_routes(sm, &ok, "");
		return 0;
	}

	rc = j->vrc;
	if (rc < 0)
		goto nomem;
	log_debug("routing: verified in %.3f s", j->t_verify);
	sm_health_routes(sm, &j->verdict, j->what);
	if (!j->what[0])
		return 0;
	if (!sm->routes.lft || sm->routes.n_nodes != sm->fabric.n_nodes) {
		log_err("ERR 1502: routing by %s failed verification: %s; no "
			"previous tables to keep: programming them anyway",
			out->engine, j->what);
		return 0;
	}
	/*
	 * The previous tables stay when they pass on this model, or lose
	 * fewer paths; but tables made for a fabric that has since lost a
	 * link may route into it: then the new ones are the lesser harm.
	 */
	rc = previous_tables(sm, f, out, &prev);
	if (rc == 0)
		rc = verify(f, &prev, sm->cfg.max_op_vls, pwhat, sizeof(pwhat),
			    &plost, &pv);
	if (rc < 0)
		goto nomem;
	if (!pwhat[0] || plost < j->lost) {
		log_err("ERR 1502: routing by %s failed verification: %s; the "
			"previous tables stay%s%s%s", out->engine, j->what,
			pwhat[0] ? " (they lose fewer paths: " : "", pwhat,
			pwhat[0] ? ")" : "");
		routing_result_free(out);
		*out = prev;
		sm_health_routes(sm, &pv, pwhat);
		return 0;
	}
	log_err("ERR 1502: routing by %s failed verification: %s; the "
		"previous tables are worse on this fabric (%s): programming "
		"the new ones", out->engine, j->what, pwhat);
	routing_result_free(&prev);
	return 0;
nomem:
	routing_result_free(&prev);
	snprintf(err, errlen, "verifying the routes: %s", strerror(-rc));
	return rc;
}

int sm_route_finish(struct sm *sm, struct sm_route_job *j,
		    struct routing_result *out, char *err, size_t errlen)
{
	const struct lft *engine_lft = j->out.lft;
	bool ok = j->rc >= 0;
	int rc = finish(sm, j, out, err, errlen);

	if (rc == 0 && ok)
		log_busiest(sm, j, out, engine_lft);
	return rc;
}

int sm_route(struct sm *sm, const struct fabric *f,
	     struct routing_result *out, char *err, size_t errlen)
{
	struct sm_route_job j;

	sm_route_prepare(sm, f, &j);
	sm_route_compute(&j);
	return sm_route_finish(sm, &j, out, err, errlen);
}

/* ------------------------------------------------------------ offline */

/* The tables in ibroute's format (what routebench --dump printed). */
static void dump_lfts(FILE *out, const struct fabric *f,
		      const struct routing_result *r)
{
	int32_t *own_node = malloc(((size_t)f->max_lid + 1) * sizeof(int32_t));
	uint8_t *own_port = malloc((size_t)f->max_lid + 1);

	if (!own_node || !own_port)
		goto out;
	for (size_t l = 0; l <= f->max_lid; l++)
		own_node[l] = FAB_NONE;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		bool sw = n->type == NODE_TYPE_SWITCH;

		for (unsigned p = sw ? 0 : 1; p <= (sw ? 0u : n->num_ports); p++) {
			const struct fab_port *pt = &n->ports[p];

			for (size_t l = pt->lid; pt->lid &&
			     l < (size_t)pt->lid + (1u << pt->lmc) &&
			     l <= f->max_lid; l++) {
				own_node[l] = (int32_t)i;
				own_port[l] = (uint8_t)p;
			}
		}
	}
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		const struct lft *t = &r->lft[i];
		unsigned valid = 0;

		if (n->type != NODE_TYPE_SWITCH || !t->port)
			continue;
		fprintf(out, "Unicast lids [0x0-0x%x] of switch Lid %u guid "
			"0x%016" PRIx64 " ('%s'):\n", t->top, n->ports[0].lid,
			n->guid, fab_node_label(n));
		for (size_t l = 1; l <= t->top; l++) {
			const struct fab_node *o;

			if (t->port[l] == LFT_NO_PATH)
				continue;
			valid++;
			fprintf(out, "0x%04zx %03u", l, t->port[l]);
			if (l <= f->max_lid && own_node[l] != FAB_NONE) {
				o = fabric_node(f, own_node[l]);
				fprintf(out, " : (%s portguid 0x%016" PRIx64
					": '%s')", o->type == NODE_TYPE_SWITCH ?
					"Switch" : o->type == NODE_TYPE_CA ?
					"Channel Adapter" : "Router",
					o->ports[own_port[l]].guid, fab_node_label(o));
			}
			fputc('\n', out);
		}
		fprintf(out, "%u lids valid for this switch\n\n", valid);
	}
out:
	free(own_node);
	free(own_port);
}

int sm_route_offline(const char *file, const struct sm_config *cfg,
		     bool json, FILE *out, FILE *errf)
{
	const char *list = cfg->routing_engine ? cfg->routing_engine
					       : SM_DEFAULT_ENGINES;
	struct fabric f;
	struct fabric_counts fc;
	struct routing_opts o;
	struct vl_qos qos;
	struct qos_policy pol;
	bool have_pol = false;
	struct routing_result r;
	struct routing_report rep;
	struct rusage ru;
	char err[600], *text = NULL;
	double t0, t1, t_load;
	size_t len;
	int rc, status = 2;

	fabric_init(&f);
	t0 = now();
	rc = topo_load(&f, file, err, sizeof(err));
	t_load = now() - t0;
	if (rc < 0) {
		fprintf(errf, "ibsm: --route-only: %s\n", err);
		fabric_free(&f);
		return 2;
	}
	if (lid_assign_sequential(&f, cfg->lmc) < 0) {
		fprintf(errf, "ibsm: --route-only: %s: not enough unicast LIDs"
			" for LMC %u\n", file, cfg->lmc);
		fabric_free(&f);
		return 2;
	}
	if (opts_get(cfg, &o, err, sizeof(err)) < 0) {
		fprintf(errf, "ibsm: --route-only: %s\n", err);
		opts_free(&o);
		fabric_free(&f);
		return 2;
	}
	{
		struct order_warn w = { .errf = errf };

		if (orders_get(cfg, &f, &o, &w) < 0) {
			fprintf(errf, "ibsm: --route-only: out of memory\n");
			opts_free(&o);
			fabric_free(&f);
			return 2;
		}
	}
	/* qos TRUE: the QoS policy file's levels (no partitions offline) */
	if (cfg->qos && cfg->qos_policy_file) {
		struct qos_error qe;

		if (qos_load(cfg->qos_policy_file, &pol, &qe) == 0)
			have_pol = true;
		else
			fprintf(errf, "ibsm: --route-only: %s:%u:%u: %s; QoS "
				"without it\n", cfg->qos_policy_file, qe.line,
				qe.col, qe.msg);
	}
	if (cfg->qos && sm_route_qos(cfg, NULL, have_pol ? &pol : NULL,
				     &qos) == 0)
		o.qos = &qos;
	routing_aliases(list, err, sizeof(err));
	if (err[0])
		fprintf(errf, "ibsm: routing: OpenSM engine names mapped: %s\n",
			err);
	t0 = now();
	rc = routing_run_opts(list, &f, &o, &r, err, sizeof(err));
	t1 = now();
	opts_free(&o);
	if (have_pol)
		qos_policy_free(&pol);
	if (rc < 0) {
		fprintf(errf, "ibsm: --route-only: routing failed: %s\n", err);
		fabric_free(&f);
		return 2;
	}
	if (r.fallback[0])
		fprintf(errf, "ibsm: warning: routing fell back to %s: %s\n",
			r.engine, r.fallback);
	if (minhop_keys_unused(cfg, r.engine, err, sizeof(err)))
		fprintf(errf, "ibsm: note: %s\n", err);
	rc = routing_report_compute(&f, &r, &rep);
	if (rc < 0) {
		fprintf(errf, "ibsm: --route-only: report: %s\n",
			strerror(-rc));
		goto out;
	}
	rep.route_seconds = t1 - t0;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		rep.peak_rss_kib = ru.ru_maxrss;
	len = json ? routing_report_json(&rep, NULL, 0)
		   : routing_report_text(&rep, NULL, 0);
	text = malloc(len + 1);
	if (!text) {
		fprintf(errf, "ibsm: --route-only: out of memory\n");
		goto out;
	}
	if (json) {
		routing_report_json(&rep, text, len + 1);
	} else {
		fabric_count(&f, &fc);
		fprintf(out, "topology: %s: %zu switches, %zu CAs, %zu routers,"
			" %zu links (loaded in %.3f s); LIDs 1-%u, LMC %u\n",
			file, fc.switches, fc.cas, fc.routers, fc.links, t_load,
			f.max_lid, cfg->lmc);
		routing_report_text(&rep, text, len + 1);
	}
	fputs(text, out);
	if (cfg->dump_lfts)
		dump_lfts(out, &f, &r);
	status = routing_report_ok(&rep) ? 0 : 1;
out:
	free(text);
	routing_result_free(&r);
	fabric_free(&f);
	return status;
}
