/*
 * auto.c - the default routing engine: look at the topology, pick the
 * engine made for it, fall back when that engine cannot route.
 *
 * The class test is the one a fat tree passes by construction: number the
 * switches by their distance from the nearest leaf (a switch with compute
 * nodes: the cn_guid_file's ports when given, else any CA or router port
 * the io_guid_file does not name);
 * in a fat tree, pruned or oversubscribed or missing a few links, every
 * inter-switch link joins two adjacent levels and every compute node
 * hangs off a level-0 switch.  A link inside a level (a torus, a mesh, a
 * random graph, a tree with cross links) makes it something else.
 *
 *   fat tree (2 to 4 levels)  ->  ftree,  then updn, then minhop
 *   2D/3D torus or mesh       ->  torus,  then dfsssp, updn, minhop
 *   Dragonfly+                ->  dfplus, then dfsssp, updn, minhop
 *   anything else             ->  dfsssp, then updn, then minhop
 *
 * (the torus and Dragonfly+ tests are those of their engines:
 * routing/torus/shape.c, routing/dfplus/dfplus.c)
 *
 * An engine that is not built in, or that fails, is passed over with its
 * reason in out->fallback (the daemon logs it as a WARNING); "no_fallback"
 * in the engine list keeps auto to the engine it picked.  out->engine names
 * the engine that made the tables, out->summary what auto found, what it
 * chose and why, and that engine's own summary.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing/engines.h"

#define AUTO_MAX_LEVELS	4	/* what the ftree class handles */

struct classify {
	bool fat_tree;
	unsigned levels;
	size_t per_level[AUTO_MAX_LEVELS];
	size_t leaves, switches;
	char why[128];		/* why not a fat tree */
};

/* A compute node's port: the cn_guid_file's when given, else any CA or
 * router port the io_guid_file does not name (as the ftree engine). */
static bool is_cn(const struct routing_opts *o, uint64_t port_guid)
{
	for (size_t i = 0; i < o->n_cn_guids; i++)
		if (o->cn_guids[i] == port_guid)
			return true;
	if (o->n_cn_guids)
		return false;
	for (size_t i = 0; i < o->n_io_guids; i++)
		if (o->io_guids[i] == port_guid)
			return false;
	return true;
}

static bool up_switch_link(const struct fabric *f, const struct fab_port *p)
{
	return routing_port_up(f, p) &&
	       fabric_node(f, p->peer_node)->type == NODE_TYPE_SWITCH;
}

/* Levels by breadth-first search from the leaves; 0 or -ENOMEM. */
static int classify(const struct fabric *f, const struct routing_opts *o,
		    struct classify *c)
{
	size_t N = f->n_nodes, head = 0, tail = 0;
	int32_t *level = malloc((N + 1) * sizeof(*level));
	int32_t *queue = malloc((N + 1) * sizeof(*queue));
	unsigned max_level = 0;

	memset(c, 0, sizeof(*c));
	if (!level || !queue) {
		free(level);
		free(queue);
		return -ENOMEM;
	}
	for (size_t i = 0; i < N; i++)
		level[i] = -1;
	/* leaves: switches that compute nodes hang off */
	for (size_t i = 0; i < N; i++) {
		const struct fab_node *n = &f->nodes[i];

		if (n->type == NODE_TYPE_SWITCH) {
			c->switches++;
			continue;
		}
		for (unsigned p = 1; p <= n->num_ports; p++) {
			const struct fab_port *pt = &n->ports[p];
			int32_t sw;

			if (!routing_port_up(f, pt) ||
			    fabric_node(f, pt->peer_node)->type != NODE_TYPE_SWITCH)
				continue;
			if (!is_cn(o, pt->guid))
				continue;
			sw = pt->peer_node;
			if (level[sw] < 0) {
				level[sw] = 0;
				queue[tail++] = sw;
				c->leaves++;
			}
		}
	}
	if (!c->leaves) {
		snprintf(c->why, sizeof(c->why), "no switch has compute nodes");
		goto out;
	}
	while (head < tail) {
		int32_t s = queue[head++];
		const struct fab_node *n = fabric_node(f, s);

		for (unsigned p = 1; p <= n->num_ports; p++) {
			const struct fab_port *pt = &n->ports[p];

			if (up_switch_link(f, pt) && level[pt->peer_node] < 0) {
				level[pt->peer_node] = level[s] + 1;
				if ((unsigned)level[s] + 1 > max_level)
					max_level = (unsigned)level[s] + 1;
				queue[tail++] = pt->peer_node;
			}
		}
	}
	c->levels = max_level + 1;
	if (tail < c->switches) {
		snprintf(c->why, sizeof(c->why), "%zu switches not connected "
			 "to any leaf", c->switches - tail);
		goto out;
	}
	for (size_t i = 0; i < N; i++) {
		const struct fab_node *n = &f->nodes[i];

		if (n->type != NODE_TYPE_SWITCH)
			continue;
		if (level[i] < AUTO_MAX_LEVELS)
			c->per_level[level[i]]++;
		for (unsigned p = 1; p <= n->num_ports; p++) {
			const struct fab_port *pt = &n->ports[p];

			if (!routing_port_up(f, pt))
				continue;
			if (fabric_node(f, pt->peer_node)->type !=
			    NODE_TYPE_SWITCH) {
				/* compute nodes only on leaves (other
				 * CAs of a cn_guid_file, and I/O nodes,
				 * may hang anywhere) */
				if (level[i] != 0 &&
				    is_cn(o, fabric_node(f, pt->peer_node)->
					  ports[pt->peer_port].guid)) {
					snprintf(c->why, sizeof(c->why),
						 "a CA on a level-%d switch "
						 "('%s')", level[i], n->desc);
					goto out;
				}
				continue;
			}
			if (level[pt->peer_node] == level[i]) {
				snprintf(c->why, sizeof(c->why), "a link inside "
					 "level %d ('%s' port %u)", level[i],
					 n->desc, p);
				goto out;
			}
		}
	}
	if (c->levels < 2 || c->levels > AUTO_MAX_LEVELS) {
		snprintf(c->why, sizeof(c->why), "%u switch levels (a fat tree "
			 "has 2 to %d)", c->levels, AUTO_MAX_LEVELS);
		goto out;
	}
	c->fat_tree = true;
out:
	free(level);
	free(queue);
	return 0;
}

static const char *const fat_tree_chain[] = { "ftree", "updn", "minhop" };
static const char *const torus_chain[] = { "torus", "dfsssp", "updn",
					   "minhop" };
static const char *const dfplus_chain[] = { "dfplus", "dfsssp", "updn",
					    "minhop" };
static const char *const other_chain[] = { "dfsssp", "updn", "minhop" };

static int auto_route(const struct fabric *f, const struct routing_opts *o,
		      struct routing_result *out, char *err, size_t errlen)
{
	const char *const *chain;
	char found[300], why[sizeof(out->fallback)], reason[160];
	struct classify c;
	size_t used = 0, n_chain;
	int rc;

	rc = classify(f, o, &c);
	if (rc < 0) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	if (c.fat_tree) {
		int w = snprintf(found, sizeof(found), "fat tree, %u levels (",
				 c.levels);

		for (unsigned l = 0; l < c.levels && w > 0 &&
		     (size_t)w < sizeof(found); l++)
			w += snprintf(found + w, sizeof(found) - (size_t)w,
				      "%s%zu", l ? "/" : "", c.per_level[l]);
		if (w > 0 && (size_t)w < sizeof(found))
			snprintf(found + w, sizeof(found) - (size_t)w,
				 " switches)");
		chain = fat_tree_chain;
		n_chain = sizeof(fat_tree_chain) / sizeof(fat_tree_chain[0]);
	} else {
		char t_why[96], d_why[96];
		int is_t = routing_is_torus(f, t_why, sizeof(t_why));
		int is_d = is_t == 1 ? 0 : routing_is_dfplus(f, d_why,
							     sizeof(d_why));

		if (is_t < 0 || is_d < 0) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		if (is_t) {
			routing_fmt(found, sizeof(found), "%s", t_why);
			chain = torus_chain;
			n_chain = sizeof(torus_chain) / sizeof(torus_chain[0]);
		} else if (is_d) {
			routing_fmt(found, sizeof(found), "%s", d_why);
			chain = dfplus_chain;
			n_chain = sizeof(dfplus_chain) / sizeof(dfplus_chain[0]);
		} else {
			routing_fmt(found, sizeof(found), "not a fat tree: "
				    "%s; not a torus: %s; not a Dragonfly+: "
				    "%s", c.why, t_why, d_why);
			chain = other_chain;
			n_chain = sizeof(other_chain) / sizeof(other_chain[0]);
		}
	}
	if (o->no_fallback)
		n_chain = 1;

	why[0] = '\0';
	rc = -ENOENT;
	for (size_t i = 0; i < n_chain; i++) {
		const struct routing_engine *e = routing_find(chain[i]);
		char sub[sizeof(out->summary)];

		reason[0] = '\0';
		if (!e) {
			snprintf(reason, sizeof(reason), "not built in");
			rc = -ENOENT;
		} else {
			memset(out, 0, sizeof(*out));
			rc = e->route(f, o, out, reason, sizeof(reason));
		}
		if (rc == 0) {
			snprintf(sub, sizeof(sub), "%s", out->summary);
			routing_fmt(out->summary, sizeof(out->summary),
				    "auto: %s -> %s%s%s", found, e->name,
				    sub[0] ? ": " : "", sub);
			routing_fmt(out->fallback, sizeof(out->fallback), "%s",
				    why);
			out->engine = e->name;
			return 0;
		}
		if (e)
			routing_result_free(out);
		if (used < sizeof(why)) {
			int w = snprintf(why + used, sizeof(why) - used,
					 "%s%s: %s", used ? "; " : "", chain[i],
					 reason[0] ? reason : "failed");

			if (w > 0)
				used += (size_t)w;
		}
	}
	routing_fmt(err, errlen, "%s; %s", found, why);
	return rc;
}

const struct routing_engine routing_auto = {
	.name = "auto",
	.route = auto_route,
};
