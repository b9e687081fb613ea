/*
 * routebench.c - run routing engines offline on a topology file.
 *
 *   routebench [-R engine-list] [--lmc N] [--dump] [--no-verify] FILE.net
 *
 * Loads an ibsim .net file or ibnetdiscover output, numbers the LIDs the
 * simple way (switches first, then CA and router ports, ranges aligned to
 * 2^LMC), runs the engine chain and prints how long it took, the table
 * memory, how evenly CA/router LIDs spread over the inter-switch ports,
 * and the result of walking every (CA port, LID) pair through the tables.
 * Exit status: 0 all paths good, 1 some failed, 2 usage or load error.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "routing/routing.h"
#include "routing/verify.h"
#include "sm/fabric.h"
#include "sm/lid.h"
#include "sm/topo_load.h"


static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Who owns each LID: node id and port, for the balance and the dump. */
struct owner {
	int32_t node;
	uint8_t port;
	uint8_t counted;	/* a CA/router LID */
};

static struct owner *lid_owners(const struct fabric *f)
{
	struct owner *o = malloc(((size_t)f->max_lid + 1) * sizeof(*o));

	if (!o)
		return NULL;
	for (size_t l = 0; l <= f->max_lid; l++)
		o[l].node = FAB_NONE;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		bool sw = n->type == NODE_TYPE_SWITCH;

		for (unsigned p = sw ? 0 : 1; p <= (sw ? 0u : n->num_ports); p++) {
			const struct fab_port *pt = &n->ports[p];

			if (!pt->lid)
				continue;
			for (size_t l = pt->lid; l < (size_t)pt->lid + (1u << pt->lmc) &&
			     l <= f->max_lid; l++) {
				o[l].node = (int32_t)i;
				o[l].port = (uint8_t)p;
				o[l].counted = !sw;
			}
		}
	}
	return o;
}

static bool is_switch_link(const struct fabric *f, const struct fab_port *p)
{
	return p->peer_node != FAB_NONE &&
	       fabric_node(f, p->peer_node)->type == NODE_TYPE_SWITCH;
}

/* CA/router LIDs per inter-switch egress port: max, min, average. */
static void balance(const struct fabric *f, const struct routing_result *r,
		    const struct owner *own)
{
	uint32_t cnt[256], max = 0, min = UINT32_MAX;
	uint64_t sum = 0, n_ports = 0;

	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		const struct lft *t = &r->lft[i];

		if (n->type != NODE_TYPE_SWITCH || !t->port)
			continue;
		memset(cnt, 0, sizeof(cnt));
		for (size_t l = 1; l <= t->top && l <= f->max_lid; l++)
			cnt[t->port[l]] += own[l].counted;
		for (unsigned p = 1; p <= n->num_ports; p++) {
			if (!is_switch_link(f, &n->ports[p]))
				continue;
			n_ports++;
			sum += cnt[p];
			if (cnt[p] > max)
				max = cnt[p];
			if (cnt[p] < min)
				min = cnt[p];
		}
	}
	if (!n_ports) {
		printf("balance: no inter-switch links\n");
		return;
	}
	printf("balance: %" PRIu64 " inter-switch egress ports, CA/router LIDs "
	       "per port: max %u min %u avg %.1f\n", n_ports, max, min,
	       (double)sum / (double)n_ports);
}

static void dump(const struct fabric *f, const struct routing_result *r,
		 const struct owner *own)
{
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct fab_node *n = &f->nodes[i];
		const struct lft *t = &r->lft[i];
		unsigned valid = 0;

		if (n->type != NODE_TYPE_SWITCH || !t->port)
			continue;
		printf("Unicast lids [0x0-0x%x] of switch Lid %u guid 0x%016" PRIx64
		       " ('%s'):\n", t->top, n->ports[0].lid, n->guid, n->desc);
		for (size_t l = 1; l <= t->top; l++) {
			const struct fab_node *o;

			if (t->port[l] == LFT_NO_PATH)
				continue;
			valid++;
			printf("0x%04zx %03u", l, t->port[l]);
			if (l <= f->max_lid && own[l].node != FAB_NONE) {
				o = fabric_node(f, own[l].node);
				printf(" : (%s portguid 0x%016" PRIx64 ": '%s')",
				       o->type == NODE_TYPE_SWITCH ? "Switch" :
				       o->type == NODE_TYPE_CA ? "Channel Adapter" :
				       "Router", o->ports[own[l].port].guid, o->desc);
			}
			putchar('\n');
		}
		printf("%u lids valid for this switch\n\n", valid);
	}
}

static void usage(FILE *fp)
{
	fprintf(fp, "usage: routebench [-R engine-list] [--lmc N] [--dump] "
		"[--no-verify] FILE.net\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "routing-engine", required_argument, NULL, 'R' },
		{ "lmc", required_argument, NULL, 'l' },
		{ "dump", no_argument, NULL, 'd' },
		{ "no-verify", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *engines = "minhop";
	bool do_dump = false, verify = true;
	unsigned lmc = 0;
	struct fabric f;
	struct fabric_counts fc;
	struct routing_result r;
	struct owner *own;
	char err[512];
	double t0, t1;
	size_t mem = 0, n_tables = 0;
	int c, rc, status = 0;

	while ((c = getopt_long(argc, argv, "R:hd", opts, NULL)) != -1) {
		switch (c) {
		case 'R':
			engines = optarg;
			break;
		case 'l': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || end == optarg || v > 7) {
				fprintf(stderr, "routebench: --lmc takes 0-7\n");
				return 2;
			}
			lmc = (unsigned)v;
			break;
		}
		case 'd':
			do_dump = true;
			break;
		case 'V':
			verify = false;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}

	fabric_init(&f);
	t0 = now();
	rc = topo_load(&f, argv[optind], err, sizeof(err));
	t1 = now();
	if (rc < 0) {
		fprintf(stderr, "routebench: %s\n", err);
		fabric_free(&f);
		return 2;
	}
	fabric_count(&f, &fc);
	printf("topology: %s: %zu switches, %zu CAs, %zu routers, %zu links "
	       "(loaded in %.3f s)\n", argv[optind], fc.switches, fc.cas,
	       fc.routers, fc.links, t1 - t0);
	if (lid_assign_sequential(&f, lmc) < 0) {
		fprintf(stderr, "routebench: not enough unicast LIDs\n");
		fabric_free(&f);
		return 2;
	}
	printf("lids: 1-%u, lmc %u\n", f.max_lid, lmc);

	t0 = now();
	rc = routing_run(engines, &f, &r, err, sizeof(err));
	t1 = now();
	if (rc < 0) {
		fprintf(stderr, "routebench: routing failed: %s\n", err);
		fabric_free(&f);
		return 2;
	}
	for (size_t i = 0; i < r.n_nodes; i++)
		if (r.lft[i].port) {
			n_tables++;
			mem += (size_t)r.lft[i].top + 1;
		}
	printf("routing: %s in %.3f s, %zu tables, %.2f MiB\n", r.engine,
	       t1 - t0, n_tables, (double)mem / (1024.0 * 1024.0));

	own = lid_owners(&f);
	if (!own) {
		fprintf(stderr, "routebench: out of memory\n");
		routing_result_free(&r);
		fabric_free(&f);
		return 2;
	}
	balance(&f, &r, own);

	if (verify) {
		struct routing_check chk;

		t0 = now();
		rc = routing_check(&f, &r, &chk);
		t1 = now();
		if (rc < 0) {
			fprintf(stderr, "routebench: verify: %s\n", strerror(-rc));
			status = 2;
		} else {
			uint64_t good = chk.pairs - routing_check_failures(&chk);

			printf("verify: %" PRIu64 " paths, %" PRIu64 " failed (%"
			       PRIu64 " unreachable, %" PRIu64 " loops, %" PRIu64
			       " misrouted), hops max %u avg %.2f (%.3f s)\n",
			       chk.pairs, routing_check_failures(&chk),
			       chk.unreachable, chk.loops, chk.misrouted,
			       chk.max_hops, good ? (double)chk.hop_sum /
			       (double)good : 0.0, t1 - t0);
			if (routing_check_failures(&chk)) {
				const struct fab_node *n =
					fabric_node(&f, chk.bad_switch);
				printf("verify: first failure: LID %u from switch "
				       "0x%016" PRIx64 " '%s'\n", chk.bad_lid,
				       n->guid, n->desc);
				status = 1;
			}
		}
	}
	if (do_dump)
		dump(&f, &r, own);
	free(own);
	routing_result_free(&r);
	fabric_free(&f);
	return status;
}
