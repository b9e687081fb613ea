/*
 * fuzz_node_names.c - libFuzzer target: the node-name-map reader
 * (config/node_names.c).
 *
 * The input is parsed as a map.  Checked besides the sanitizers: the
 * result is 0 or a negative errno with "map:" leading the message; after
 * success the entries are sorted by GUID without duplicates, each name
 * non-empty, at most NODE_NAME_MAX bytes, without a quote or '#', and
 * found again by its GUID.
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/node_names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct node_names m;
	char err[256] = "";
	int rc = node_names_parse(&m, "map", (const char *)data, size, err,
				  sizeof(err));

	if (rc > 0 || (rc < 0 && strncmp(err, "map", 3) != 0))
		abort();
	if (rc < 0 && (m.n || m.e))
		abort();
	for (size_t i = 0; i < m.n; i++) {
		const char *nm = m.e[i].name;
		size_t len = strlen(nm);

		if (i && m.e[i - 1].guid >= m.e[i].guid)
			abort();
		if (!len || len > NODE_NAME_MAX || strpbrk(nm, "\"#"))
			abort();
		if (node_names_find(&m, m.e[i].guid) != nm)
			abort();
	}
	node_names_free(&m);
	return 0;
}
