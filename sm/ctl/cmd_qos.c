/*
 * cmd_qos.c - the control socket's `qos show` (ibsm(8), QOS): the QoS in
 * force, gathered on the loop like the other commands' answers and
 * printed by sm/ctl/cmd_qos_out.c.
 *
 *   qos show [json]
 *	whether qos is on; the tables each port class is programmed with
 *	(qos_* keys); the policy file, when it was loaded or the error that
 *	kept the policy in force; its levels, its port groups with the
 *	ports of the fabric they hold, and its rules in precedence order.
 *   qos show [json] src END dst END [sid N] [pkey P] [class C]
 *	what a PathRecord between the two ends would carry: the SA's own
 *	answer to that query (sm/sa/path.c, as if the source asked), and
 *	the rule and level of the policy that chose it (qos_match()).
 *
 * Counting the ports of every group costs groups x end ports; it is
 * done only when asked.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/sa_wire.h"
#include "model/index.h"
#include "qos/qos.h"
#include "sm/ctl/ctl.h"
#include "sm/ctl/qos.h"
#include "sm/sa/gen.h"
#include "sm/sa/mcmember.h"
#include "sm/snapshot.h"
#include "sm/sm.h"

/* ------------------------------------------------------------ request */

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int ctl_qos_decode(const char *w, size_t n, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)w[i];

		if (c == '%') {
			int hi, lo;

			if (i + 2 >= n)
				return -EINVAL;
			hi = hexval(w[i + 1]);
			lo = hexval(w[i + 2]);
			if (hi < 0 || lo < 0 || !(hi | lo))
				return -EINVAL;
			c = hi * 16 + lo;
			i += 2;
		}
		if (o + 1 >= size)
			return -E2BIG;
		out[o++] = (char)c;
	}
	if (!o)
		return -EINVAL;
	out[o] = '\0';
	return 0;
}

static bool is_word(const char *w, size_t n, const char *s)
{
	return strlen(s) == n && !memcmp(w, s, n);
}

static int num_word(const char *w, size_t n, uint64_t max, uint64_t *v)
{
	char buf[24], *end;

	if (!n || n >= sizeof(buf) || w[0] == '-')
		return -EINVAL;
	memcpy(buf, w, n);
	buf[n] = '\0';
	errno = 0;
	*v = strtoull(buf, &end, 0);
	return errno || *end || *v > max ? -EINVAL : 0;
}

/* One "KEY VALUE" pair of qos show; 0 or -EINVAL. */
static int qos_pair(struct ctl_qos_req *q, const char *k, size_t kl,
		    const char *v, size_t vl)
{
	uint64_t x;

	if (is_word(k, kl, "src") && !q->src[0])
		return ctl_qos_decode(v, vl, q->src, sizeof(q->src));
	if (is_word(k, kl, "dst") && !q->dst[0])
		return ctl_qos_decode(v, vl, q->dst, sizeof(q->dst));
	if (is_word(k, kl, "sid") && !q->has_sid) {
		q->has_sid = true;
		return num_word(v, vl, UINT64_MAX, &q->sid);
	}
	if (is_word(k, kl, "pkey") && !q->has_pkey) {
		q->has_pkey = true;
		if (num_word(v, vl, 0xffff, &x) < 0)
			return -EINVAL;
		q->pkey = (uint16_t)x;
		return 0;
	}
	if (is_word(k, kl, "class") && !q->has_class) {
		q->has_class = true;
		if (num_word(v, vl, 0xfff, &x) < 0)
			return -EINVAL;
		q->qos_class = (uint16_t)x;
		return 0;
	}
	return -EINVAL;
}

#define QOS_MAX_WORDS	14

int ctl_qos_parse(const char *line, size_t len, struct ctl_request *req,
		  char *err, size_t errlen)
{
	const char *w[QOS_MAX_WORDS];
	size_t wl[QOS_MAX_WORDS], nw = 0, i = 0, k;
	struct ctl_qos_req *q = &req->qos;

	req->cmd = CTL_CMD_QOS;
	while (i < len) {
		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i == len)
			break;
		if (nw == QOS_MAX_WORDS)
			goto bad;
		w[nw] = line + i;
		while (i < len && line[i] != ' ' && line[i] != '\t')
			i++;
		wl[nw] = (size_t)(line + i - w[nw]);
		nw++;
	}
	if (nw < 2 || !is_word(w[1], wl[1], "show"))
		goto bad;
	for (k = 2; k < nw; k++) {
		if (is_word(w[k], wl[k], "json") && !req->json) {
			req->json = true;
			continue;
		}
		if (k + 1 == nw || qos_pair(q, w[k], wl[k], w[k + 1],
					    wl[k + 1]) < 0)
			goto bad;
		k++;
	}
	q->path = q->src[0] && q->dst[0];
	if ((q->src[0] || q->dst[0] || q->has_sid || q->has_pkey ||
	     q->has_class) && !q->path)
		goto bad;
	return 0;
bad:
	snprintf(err, errlen, "qos: expected 'qos show [json]' or 'qos show"
		 " [json] src END dst END [sid N] [pkey P] [class C]', END a"
		 " GUID, a LID or a node description[:PORT] (%%20 for a"
		 " blank)");
	return -EINVAL;
}

/* ----------------------------------------------------------- endpoints */

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* The end port of node `id`: port 0 of a switch, else port `pn`, else
 * the first port with a LID. */
static int node_end(const struct fabric *f, int32_t id, int pn,
		    struct fab_ref *out)
{
	const struct fab_node *n = &f->nodes[id];

	out->node = id;
	if (n->type == NODE_TYPE_SWITCH) {
		if (pn > 0)
			return -ENOENT;
		out->port = 0;
		return 0;
	}
	for (unsigned p = 1; p <= n->num_ports; p++) {
		if (!n->ports[p].valid || (pn >= 0 && (int)p != pn) ||
		    (pn < 0 && !n->ports[p].lid))
			continue;
		out->port = (uint8_t)p;
		return 0;
	}
	return -ENOENT;
}

/* The whole description, or its first word ("node01" of "node01 HCA-1"). */
static bool desc_matches(const char *desc, const char *want)
{
	size_t n = strlen(want);

	return !strcmp(desc, want) ||
	       (!strncmp(desc, want, n) && (desc[n] == ' ' || desc[n] == '\t'));
}

static int by_desc(const struct fabric *f, const char *want, int pn,
		   struct fab_ref *out, char *err, size_t errlen)
{
	int32_t found = FAB_NONE;
	size_t n = 0;

	for (size_t i = 0; i < f->n_nodes; i++) {
		if (!f->nodes[i].has_desc ||
		    !desc_matches(f->nodes[i].desc, want))
			continue;
		/* an exact description wins over first words */
		if (!strcmp(f->nodes[i].desc, want) && (found == FAB_NONE ||
		    strcmp(f->nodes[found].desc, want))) {
			found = (int32_t)i;
			n = 1;
			continue;
		}
		if (found != FAB_NONE && !strcmp(f->nodes[found].desc, want))
			continue;
		if (found == FAB_NONE)
			found = (int32_t)i;
		n++;
	}
	if (found == FAB_NONE) {
		snprintf(err, errlen, "no node \"%s\" in the fabric", want);
		return -ENOENT;
	}
	if (n > 1) {
		snprintf(err, errlen, "\"%s\" names %zu nodes: give a GUID or"
			 " a LID", want, n);
		return -ENOENT;
	}
	if (node_end(f, found, pn, out) < 0) {
		snprintf(err, errlen, "\"%s\" has no port %d", want, pn);
		return -ENOENT;
	}
	return 0;
}

int ctl_qos_end(const struct fabric *f, const char *spec,
		struct fab_ref *out, char *err, size_t errlen)
{
	char buf[CTL_QOS_END], *colon, *end;
	int pn = -1, rc;

	snprintf(buf, sizeof(buf), "%s", spec);
	colon = strrchr(buf, ':');
	if (colon && all_digits(colon + 1) && strlen(colon + 1) <= 3) {
		pn = atoi(colon + 1);
		*colon = '\0';
	}
	if (!f || !f->n_nodes) {
		snprintf(err, errlen, "no fabric yet: no sweep has completed");
		return -ENOENT;
	}
	if ((rc = midx_get(f)) < 0) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	if (buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X') && buf[2]) {
		uint64_t g;
		int32_t id;

		errno = 0;
		g = strtoull(buf + 2, &end, 16);
		if (!errno && !*end) {
			if (pn < 0 && midx_guid_lookup(f, g, out) == 1)
				return 0;
			if ((id = fabric_find(f, g)) != FAB_NONE &&
			    node_end(f, id, pn, out) == 0)
				return 0;
			snprintf(err, errlen, "no port or node GUID %s in the"
				 " fabric", spec);
			return -ENOENT;
		}
	}
	if (all_digits(buf) && pn < 0) {
		unsigned long lid = strtoul(buf, NULL, 10);

		if (lid && lid < 0xc000 &&
		    midx_lid_lookup(f, (uint16_t)lid, out) == 1)
			return 0;
		snprintf(err, errlen, "no port with LID %s", buf);
		return -ENOENT;
	}
	return by_desc(f, buf, pn, out, err, errlen);
}

/* ------------------------------------------------------------ execute */

/* How many end ports of the model (a switch's port 0, the CA and router
 * ports with PortInfo) each group holds. */
static void count_members(const struct fabric *f, const struct qos_policy *p,
			  const struct qos_members *m, size_t *members)
{
	for (size_t g = 0; g < p->n_groups; g++)
		members[g] = 0;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		unsigned first = n->type == NODE_TYPE_SWITCH ? 0 : 1;
		unsigned last = n->type == NODE_TYPE_SWITCH ? 0 : n->num_ports;

		for (unsigned pn = first; pn <= last; pn++) {
			if (!n->ports[pn].valid || !n->ports[pn].guid)
				continue;
			for (size_t g = 0; g < p->n_groups; g++)
				members[g] += qos_group_has(p, m, g,
							    n->ports[pn].guid,
							    n->type);
		}
	}
}

static int view_of(const struct sm *sm, const struct fabric *f,
		   struct qos_view *v, size_t **members)
{
	const struct qos_members *m = NULL;
	struct sm_qos_status st;
	char err[160];

	memset(v, 0, sizeof(*v));
	*members = NULL;
	v->on = sm->cfg.qos;
	v->max_op_vls = sm->cfg.max_op_vls;
	sm_qos_status(sm, &st);
	v->file = st.file;
	v->loaded = st.loaded;
	v->error = st.error;
	v->error_at = st.error_at;
	v->pol = sm_qos_policy(sm, &m);
	for (int c = QOS_CA; c < QOS_N_CLASSES; c++)
		if (qos_build_tables(&v->tables[c], &sm->cfg.qos_keys[c],
				     &sm->cfg.qos_keys[QOS_BASE], err,
				     sizeof(err)) < 0)
			return -EINVAL;
	if (v->pol && f && f->n_nodes) {
		*members = calloc(v->pol->n_groups + 1, sizeof(**members));
		if (!*members)
			return -ENOMEM;
		count_members(f, v->pol, m, *members);
		v->members = *members;
	}
	return 0;
}

static void end_of(const struct fabric *f, struct fab_ref r,
		   struct qos_path_end *e)
{
	const struct fab_node *n = &f->nodes[r.node];
	const struct fab_port *p = &n->ports[r.port];

	e->guid = p->guid;
	e->lid = n->type == NODE_TYPE_SWITCH ? n->ports[0].lid : p->lid;
	e->port = r.port;
	e->type = n->type;
	e->desc = n->has_desc ? n->desc : NULL;
}

/* The SA's own answer to a Get(PathRecord) for the pair and components. */
static int sa_answer(const struct sa_view *sv, const struct ctl_qos_req *q,
		     struct qos_path_view *p)
{
	uint8_t data[SA_DATA_SIZE] = { 0 };
	struct sa_path_record *t = (void *)data;
	struct sa_query sq = { .method = MAD_METHOD_GET,
			       .attr_id = SA_ATTR_PATH_RECORD, .tmpl = data,
			       .tmpl_len = sizeof(data),
			       .requester_lid = p->src.lid };
	struct sa_table out = { .rec_size = sizeof(struct sa_path_record) };
	int rc;

	/* PathRecord components (15.2.5.16): ServiceID 0-1, DLID 4,
	 * SLID 5, P_Key 13, QoSClass 14 */
	sq.comp_mask = BIT(4) | BIT(5);
	t->dlid = htobe16(p->dst.lid);
	t->slid = htobe16(p->src.lid);
	if (q->has_sid) {
		t->service_id = htobe64(q->sid);
		sq.comp_mask |= BIT(0) | BIT(1);
	}
	if (q->has_pkey) {
		t->pkey = htobe16(q->pkey);
		sq.comp_mask |= BIT(13);
	}
	if (q->has_class) {
		t->qos_class_sl = htobe16((uint16_t)(q->qos_class << 4));
		sq.comp_mask |= BIT(14);
	}
	rc = gen_path_record(sv, &sq, &out);
	if (rc == -ENOMEM) {
		free(out.buf);
		return rc;
	}
	p->status = rc < 0 ? -rc : out.count ? 0 : -1;
	if (!p->status)
		memcpy(&p->pr, out.buf, sizeof(p->pr));
	free(out.buf);
	return 0;
}

static int do_path(struct sm *sm, const struct ctl_request *req,
		   const struct qos_view *v, struct ctl_answer *a, char *msg,
		   size_t msglen)
{
	const struct ctl_qos_req *q = &req->qos;
	const struct qos_members *m = NULL;
	struct qos_path_view p = { .q = q, .rule = -1, .level = -1 };
	struct fab_ref s, d;
	struct sa_view sv;
	char err[200];

	sa_view_of(sm, &sv);
	if (ctl_qos_end(sv.f, q->src, &s, err, sizeof(err)) < 0) {
		snprintf(msg, msglen, "src %s: %s", q->src, err);
		return -1;
	}
	if (ctl_qos_end(sv.f, q->dst, &d, err, sizeof(err)) < 0) {
		snprintf(msg, msglen, "dst %s: %s", q->dst, err);
		return -1;
	}
	end_of(sv.f, s, &p.src);
	end_of(sv.f, d, &p.dst);
	if (v->on && v->pol && sm_qos_policy(sm, &m)) {
		struct qos_query qq = {
			.src_guid = p.src.guid, .dst_guid = p.dst.guid,
			.src_type = p.src.type, .dst_type = p.dst.type,
			.service_id = q->sid, .pkey = q->pkey,
			.qos_class = q->qos_class, .has_sid = q->has_sid,
			.has_pkey = q->has_pkey, .has_class = q->has_class,
		};

		p.level = (long)qos_match(v->pol, m, &qq, &p.rule);
	}
	if (sa_answer(&sv, q, &p) < 0) {
		snprintf(msg, msglen, "out of memory");
		return -1;
	}
	ctl_qos_path(a, v, &p, req->json);
	snprintf(msg, msglen, "%s", p.status ? "no PathRecord" : "");
	return 0;
}

int ctl_qos_execute(struct sm *sm, const struct ctl_request *req,
		    struct ctl_answer *a, char *msg, size_t msglen)
{
	struct sm_snapshot snap;
	struct qos_view v;
	size_t *members;
	int rc;

	sm_snapshot_of(sm, &snap);
	if ((rc = view_of(sm, snap.model, &v, &members)) < 0) {
		snprintf(msg, msglen, "%s", rc == -ENOMEM ? "out of memory" :
			 "the qos_* tables do not parse");
		free(members);
		return -1;
	}
	if (req->qos.path)
		rc = do_path(sm, req, &v, a, msg, msglen);
	else
		rc = ctl_qos_show(a, &v, req->json);
	free(members);
	return rc;
}
