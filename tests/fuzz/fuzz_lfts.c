/*
 * fuzz_lfts.c - libFuzzer target: the file routing engine's reader of
 * OpenSM's LFT dump (routing/file.c).
 *
 * The input is written as the lfts_file of a fixed fabric (a ring of four
 * switches, two CAs on each) and routed with the "file" engine.  Checked
 * besides the sanitizers: the engine returns 0 or -errno, and an error
 * names the file (and, for a parse error, FILE:LINE); on success every
 * LFT entry is no-path or a port the switch has, out->engine is "file",
 * and the tables of every switch cover its top LID.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/fabric.h"
#include "routing/routing.h"
#include "sm/lid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[96];
static struct fabric fab;

static void port_up(struct fab_port *p, uint64_t guid)
{
	p->valid = true;
	memset(&p->pi, 0, sizeof(p->pi));
	p->pi.local_port = p->num;
	p->guid = guid;
	pi_set_port_state(&p->pi, PORT_STATE_ACTIVE);
	pi_set_phys_state(&p->pi, PHYS_STATE_LINKUP);
}

static void link_up(int32_t a, unsigned pa, int32_t b, unsigned pb)
{
	if (fabric_link(&fab, a, (uint8_t)pa, b, (uint8_t)pb) < 0)
		abort();
	port_up(&fab.nodes[a].ports[pa], fab.nodes[a].guid);
	port_up(&fab.nodes[b].ports[pb], fab.nodes[b].guid);
}

/* Switch GUIDs 0x1000 + i, CA GUIDs 0x2000 + 16 i + h, as a corpus
 * file names them. */
static void setup(void)
{
	const char *tmp = getenv("TMPDIR");
	int32_t sw[4];
	int fd;

	snprintf(path, sizeof(path), "%s/fuzz-lfts-XXXXXX",
		 tmp ? tmp : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		abort();
	close(fd);
	fabric_init(&fab);
	for (unsigned i = 0; i < 4; i++) {
		sw[i] = fabric_add_node(&fab, 0x1000 + i, NODE_TYPE_SWITCH, 8);
		if (sw[i] < 0)
			abort();
		port_up(&fab.nodes[sw[i]].ports[0], 0x1000 + i);
	}
	for (unsigned i = 0; i < 4; i++) {
		link_up(sw[i], 2, sw[(i + 1) % 4], 1);
		for (unsigned h = 0; h < 2; h++) {
			int32_t ca = fabric_add_node(&fab, 0x2000 + 16 * i + h,
						     NODE_TYPE_CA, 1);

			if (ca < 0)
				abort();
			link_up(sw[i], 3 + h, ca, 1);
		}
	}
	if (lid_assign_sequential(&fab, 1) < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct routing_opts o = { .lfts_file = path };
	struct routing_result r;
	char err[512];
	FILE *fp;
	int rc;

	if (!path[0])
		setup();
	fp = fopen(path, "w");
	if (!fp || fwrite(data, 1, size, fp) != size)
		abort();
	fclose(fp);
	rc = routing_run_opts("file", &fab, &o, &r, err, sizeof(err));
	if (rc < 0) {
		if (!strstr(err, path) && !strstr(err, "out of memory"))
			abort();
		return 0;
	}
	if (strcmp(r.engine, "file") || r.n_nodes != fab.n_nodes)
		abort();
	for (size_t i = 0; i < fab.n_nodes; i++) {
		const struct fab_node *n = &fab.nodes[i];

		if (n->type != NODE_TYPE_SWITCH)
			continue;
		if (!r.lft[i].port || r.lft[i].top < fab.max_lid)
			abort();
		for (unsigned l = 0; l <= r.lft[i].top; l++)
			if (r.lft[i].port[l] != LFT_NO_PATH &&
			    r.lft[i].port[l] > n->num_ports)
				abort();
	}
	routing_result_free(&r);
	return 0;
}
