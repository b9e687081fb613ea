/*
 * node_names.h - infiniband-diags' node-name-map (opensm.conf
 * node_name_map_name, ibnetdiscover --node-name-map): a name for a node
 * GUID, shown instead of the node's NodeDescription in the log, the
 * dumps, ibsmctl and the health findings.
 *
 * The format, as OpenSM and infiniband-diags read it
 * (complib/cl_nodenamemap.c): one `GUID name` per line, GUID in C syntax
 * (0x hex, or decimal), the name quoted or not: it runs from the first
 * character that is not a quote or '#' to the next quote or '#'.  Blank
 * lines and lines starting with '#' are comments; a line with a GUID and
 * no name adds nothing; the first line naming a GUID wins.  Library
 * code: errors as text, no logging.
 */
#ifndef IBSM_CONFIG_NODE_NAMES_H
#define IBSM_CONFIG_NODE_NAMES_H

#include <stddef.h>
#include <stdint.h>

struct node_name {
	uint64_t guid;
	unsigned line;		/* where the file names it */
	char	*name;
};

struct node_names {
	struct node_name *e;	/* sorted by GUID */
	size_t	 n;
};

/* The most entries a map may have (a bound on a hostile file). */
#define NODE_NAMES_MAX		(1u << 20)
/* A name longer than this is cut there. */
#define NODE_NAME_MAX		255

/*
 * Parse `len` bytes of map text called `file` in messages into m (empty
 * first).  0, or -EINVAL with "FILE:LINE: expected ..." in err, -E2BIG
 * past NODE_NAMES_MAX entries, -ENOMEM; m is empty after an error.
 */
int node_names_parse(struct node_names *m, const char *file, const char *text,
		     size_t len, char *err, size_t errlen);
/* The same from a file: also -errno when it cannot be read. */
int node_names_load(struct node_names *m, const char *path, char *err,
		    size_t errlen);
/* The name of node GUID `guid`, or NULL. */
const char *node_names_find(const struct node_names *m, uint64_t guid);
void node_names_free(struct node_names *m);

#endif /* IBSM_CONFIG_NODE_NAMES_H */
