/*
 * fuzz_torus_conf.c - libFuzzer target: the reader of OpenSM's
 * torus-2QoS configuration (torus_config, routing/torus/conf.c).
 *
 * Checked besides the sanitizers: the parser returns 0 or -EINVAL; an
 * error names the file ("t.conf:" first); on success every radix is
 * 1-255 when a grid was read (0 when not), at most TORUS_CONF_SEEDS seeds each with a seed
 * switch, and every dateline within -255..255.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "routing/torus_conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct torus_conf c;
	char err[512];
	int rc;

	err[0] = '\0';
	rc = torus_conf_parse(&c, (const char *)data, size, "t.conf", err,
			      sizeof(err));
	if (rc != 0 && rc != -EINVAL)
		abort();
	if (rc) {
		if (strncmp(err, "t.conf:", 7))
			abort();
		return 0;
	}
	if (c.n_seeds > TORUS_CONF_SEEDS)
		abort();
	for (unsigned d = 0; d < 3; d++)
		if (c.grid ? c.radix[d] < 1 || c.radix[d] > 255 : c.radix[d])
			abort();
	for (unsigned i = 0; i < c.n_seeds; i++) {
		if (!c.seed[i].from)
			abort();
		for (unsigned d = 0; d < 3; d++)
			if (c.seed[i].dateline[d] < -255 ||
			    c.seed[i].dateline[d] > 255)
				abort();
	}
	return 0;
}
