/*
 * routebench.c - run routing engines offline on a topology file: a thin
 * front end of `ibsm --route-only` (sm/route.c does the work), kept for
 * the scripts that call it.
 *
 *   routebench [-R engine-list] [--lmc N] [--dump] [--json] FILE.net
 *
 * Exit status: 0 all checks passed, 1 some failed, 2 usage or load error.
 */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/conf.h"
#include "sm/route.h"
#include "sm/sm.h"

static void usage(FILE *fp)
{
	fprintf(fp, "usage: routebench [-R engine-list] [--lmc N] [--dump] "
		"[--json] FILE.net\n(the same as ibsm --route-only FILE.net "
		"[-R LIST] [--lmc N] [--dump-lfts] [--json])\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "routing-engine", required_argument, NULL, 'R' },
		{ "lmc", required_argument, NULL, 'l' },
		{ "dump", no_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sm_config cfg;
	struct cfg conf;
	bool json = false;
	int c, rc;

	/* OpenSM's defaults (max_op_vls, ...), then the options */
	memset(&cfg, 0, sizeof(cfg));
	cfg_init(&conf);
	rc = cfg_apply(&conf, &cfg);
	if (rc < 0) {
		cfg_free(&conf);
		return 2;
	}
	while ((c = getopt_long(argc, argv, "R:hd", opts, NULL)) != -1) {
		switch (c) {
		case 'R':
			cfg.routing_engine = optarg;
			break;
		case 'l': {
			char *end;
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || end == optarg || v > 7) {
				fprintf(stderr, "routebench: --lmc takes 0-7\n");
				cfg_free(&conf);
				return 2;
			}
			cfg.lmc = (uint8_t)v;
			break;
		}
		case 'd':
			cfg.dump_lfts = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			cfg_free(&conf);
			return 0;
		default:
			usage(stderr);
			cfg_free(&conf);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		cfg_free(&conf);
		return 2;
	}
	rc = sm_route_offline(argv[optind], &cfg, json, stdout, stderr);
	cfg_free(&conf);
	return rc;
}
