/*
 * part_bench.c - how long partitions/ takes: parse a generated
 * partitions.conf of about 10,000 lines (1,667 partitions of 6 lines: a
 * header with flags, an mgid line, 3 lines of 4 GUID members, a keyword
 * line) and resolve it against a topology file.  By hand, on a release
 * build (tools/bootstrap.sh release):
 *
 *   build/release/tests/bench/part_bench [-o FILE] [LINES] [tests/topologies/fat2-1152.net]
 *
 * Prints the mean parse time over 20 parses and one resolution's time and
 * report (PartitionCap 128 on end ports, PartitionEnforcementCap 32).
 * -o FILE also writes the generated file there (tests/bench/part_reload.sh
 * hands the same file to OpenSM and ibsm).
 */
#include "config.h"

#include <endian.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "partitions/partitions.h"
#include "sm/topo_file.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void add(char **t, size_t *n, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add(char **t, size_t *n, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*cap - *n < 256) {
		*cap = *cap * 2 + 256;
		*t = realloc(*t, *cap);
		if (!*t)
			exit(1);
	}
	va_start(ap, fmt);
	k = vsnprintf(*t + *n, *cap - *n, fmt, ap);
	va_end(ap);
	*n += (size_t)k;
}

int main(int argc, char **argv)
{
	const char *out = NULL;

	if (argc > 2 && !strcmp(argv[1], "-o")) {
		out = argv[2];
		argv += 2;
		argc -= 2;
	}
	unsigned want = argc > 1 ? (unsigned)atoi(argv[1]) : 10000, lines = 0;
	size_t n = 0, cap = 0;
	char *t = NULL;
	struct part_config c;
	struct part_diag d;
	const int reps = 20;
	int rc = 0;

	add(&t, &n, &cap, "Default=0x7fff, ipoib : ALL=full ;\n");
	lines++;
	for (unsigned p = 1; lines < want && p < 0x7fff; p++) {
		add(&t, &n, &cap, "part%u=0x%x, ipoib, rate=7, mtu=4, "
		    "defmember=full : # partition %u\n", p, p, p);
		add(&t, &n, &cap, "  mgid=ff12:401b::%x,sl=1\n", p);
		for (unsigned l = 0; l < 3; l++) {
			unsigned b = p * 7 + l * 4;

			add(&t, &n, &cap, "  0x%x=full, 0x%x, 0x%x=limited, 0x%x,\n",
			    0x100001 + 2 * (b % 1152), 0x100001 + 2 * ((b + 1) % 1152),
			    0x100001 + 2 * ((b + 2) % 1152),
			    0x100001 + 2 * ((b + 3) % 1152));
		}
		add(&t, &n, &cap, "  ALL_SWITCHES=limited ;\n");
		lines += 6;
	}

	if (out) {
		FILE *fp = fopen(out, "w");

		if (!fp || fwrite(t, 1, n, fp) != n || fclose(fp)) {
			perror(out);
			return 1;
		}
	}
	double t0 = now();
	for (int i = 0; i < reps; i++) {
		rc = part_parse("gen.conf", t, n, NULL, &c, &d);
		part_diag_free(&d);
		if (rc) {
			fprintf(stderr, "parse: %d\n", rc);
			return 1;
		}
		if (i < reps - 1)
			part_config_free(&c);
	}
	double t1 = now();
	printf("%u lines, %zu bytes, %zu partitions: parse %.2f ms\n", lines, n,
	       c.n_parts, (t1 - t0) / reps * 1e3);

	if (argc > 2) {
		struct fabric f;
		struct part_resolve_report r;
		char err[256];

		fabric_init(&f);
		if (topo_load(&f, argv[2], err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		for (size_t i = 0; i < f.n_nodes; i++) {
			f.nodes[i].partition_cap = 128;
			if (f.nodes[i].type == NODE_TYPE_SWITCH)
				f.nodes[i].si.partition_enf_cap = htobe16(32);
		}
		t0 = now();
		rc = part_resolve(&c, &f, f.local_port_guid, &r);
		t1 = now();
		printf("resolve on %s: rc %d, %.2f ms, %u ports, %u keys dropped, "
		       "%u unknown GUIDs\n", argv[2], rc, (t1 - t0) * 1e3, r.ports,
		       r.dropped, r.unknown_guids);
		fabric_free(&f);
	}
	part_config_free(&c);
	free(t);
	return rc ? 1 : 0;
}
