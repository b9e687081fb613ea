/*
 * order.h - OpenSM's two ordering files for the engines, and updn's
 * ids_guid_file, read and resolved on the fabric model.  Pure functions:
 * text in, arrays out; every problem with a line is handed to a
 * callback as "FILE:LINE: what" and the line is skipped, so a bad line
 * never stops the routing.
 *
 * guid_routing_order_file: one port GUID per line.  The LIDs of the
 * listed ports are routed first, in file order (all LIDs of a port with
 * LMC > 0 one after the other, base LID first), then every other LID.
 * The engines balance by counting routes per port as they go, so the
 * destinations routed first get the best spread.
 *
 * port_search_ordering_file (OpenSM's older name: dimn_ports_file):
 * "<switch node GUID> <port> <port> ..." per line.  On that switch the
 * listed ports come first, in that order, then the others in ascending
 * order; among equally good egress ports an engine takes the one that
 * comes first in this order (without the file: the lowest port number).
 *
 * Both as OpenSM reads them (complib parse_node_map): leading blanks
 * skipped, blank lines and lines starting with '#' ignored, numbers as
 * strtoull base 0 reads them (0x... hexadecimal; without 0x decimal, or
 * octal with a leading 0), '#' ends a port list.
 */
#ifndef IBSM_ROUTING_ORDER_H
#define IBSM_ROUTING_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/fabric.h"

#define ORDER_MAX_ENTRIES	(1u << 20)	/* lines used per file */
#define ORDER_MAX_PORT		254		/* highest switch port */

/* A problem with one line ("FILE:LINE: what; line skipped"). */
typedef void order_warn_fn(void *ctx, const char *msg);

/* guid_routing_order_file as read: each GUID once, in file order. */
struct order_guids {
	uint64_t *guid;
	unsigned *line;		/* the line each GUID is on */
	size_t n;
};

/*
 * Parse `len` bytes of `text` (NUL bytes end nothing: a line holding one
 * is bad) named `name` in messages.  A line that is not a GUID, a GUID 0
 * and a GUID listed before are reported through warn (may be NULL) and
 * skipped; what follows a GUID after a blank is ignored, as OpenSM does.
 * 0, or -ENOMEM (o then empty).
 */
int order_guids_parse(struct order_guids *o, const char *text, size_t len,
		      const char *name, order_warn_fn *warn, void *ctx);
void order_guids_free(struct order_guids *o);

/* One line of port_search_ordering_file. */
struct port_order_line {
	uint64_t guid;		/* switch node GUID */
	unsigned line;
	uint8_t n;		/* ports listed, 1 .. ORDER_MAX_PORT */
	uint8_t port[ORDER_MAX_PORT];
};

struct port_order {
	struct port_order_line *e;
	size_t n;
};

/*
 * Parse port_search_ordering_file text.  A line is skipped, reported
 * through warn, when its GUID or a port is not a number, a port is 0 or
 * above ORDER_MAX_PORT or listed twice on the line, or it lists no port.
 * Whether the GUID is a switch and its ports exist is for
 * port_order_resolve().  0, or -ENOMEM (o then empty).
 */
int port_order_parse(struct port_order *o, const char *text, size_t len,
		     const char *name, order_warn_fn *warn, void *ctx);
void port_order_free(struct port_order *o);

/*
 * The search order of each switch of `f` that a line of `po` names:
 * *rank (one malloc'd block: free(*rank) frees all) gets f->n_nodes
 * pointers, NULL for a node without a line, else rank[p] for ports
 * 0 .. num_ports: 0 for port 0, 1, 2, ... for the listed ports in line
 * order, then the others in ascending port order.  A line whose GUID is
 * no switch of `f`, that names a port above the switch's port count, or
 * that names a switch an earlier line set already is reported and
 * skipped (the first good line of a switch counts, as in OpenSM).
 * Returns the switches ordered, or -ENOMEM.
 */
long port_order_resolve(const struct fabric *f, const struct port_order *po,
			const char *name, uint8_t ***rank,
			order_warn_fn *warn, void *ctx);

/*
 * hop_weights_file and port_prof_ignore_file: one switch port per line,
 * "<switch node GUID> <port> <weight>" (weight 1-255) and "<switch node
 * GUID> <port>", read as the files above (what follows after a blank is
 * ignored, as OpenSM does).  Ports are 1 .. ORDER_MAX_PORT here; whether
 * the switch and its port exist is for port_vals_resolve().
 */
struct port_val_line {
	uint64_t guid;		/* switch node GUID */
	unsigned line;
	uint8_t port;
	uint8_t val;		/* the weight; 1 for port_prof_ignore_file */
};

struct port_vals {
	struct port_val_line *e;
	size_t n;
};

/*
 * Parse the text; `weights`: a weight must follow the port (else the
 * value is 1).  A line whose GUID, port or weight is not a number or out
 * of range (GUID 0, port 0 or above ORDER_MAX_PORT, weight 0 or above
 * 255) or that lacks one is reported through warn and skipped.  0, or
 * -ENOMEM (pv then empty).
 */
int port_vals_parse(struct port_vals *pv, const char *text, size_t len,
		    const char *name, bool weights, order_warn_fn *warn,
		    void *ctx);
void port_vals_free(struct port_vals *pv);

/*
 * The value of each port of each switch of `f` that a line of `pv`
 * names: *val (one malloc'd block: free(*val) frees all) gets f->n_nodes
 * pointers, NULL for a node no line names, else val[p] for ports 0 ..
 * num_ports, `def` where no line sets one.  A line whose GUID is no
 * switch of `f` or whose port is above the switch's port count is
 * reported and skipped; a later line for the same port replaces the
 * value of an earlier one (as in OpenSM).  Returns the switches named,
 * or -ENOMEM.
 */
long port_vals_resolve(const struct fabric *f, const struct port_vals *pv,
		       const char *name, uint8_t def, uint8_t ***val,
		       order_warn_fn *warn, void *ctx);

/*
 * ids_guid_file: "<switch node GUID> <id>" per line, the id (any 64-bit
 * number) standing in for the switch's node GUID where updn breaks ties
 * between switches of equal rank (routing/updn.c).  Each GUID once, in
 * file order; a GUID listed again takes the later line's id (as in
 * OpenSM, whose later line overrides), with a warning naming both lines.
 */
struct node_ids {
	uint64_t *guid;
	uint64_t *id;
	unsigned *line;		/* the line each GUID's id comes from */
	size_t n;
};

/*
 * Parse ids_guid_file text.  A line is skipped, reported through warn,
 * when its GUID is not a number or is 0, or its id is missing, not a
 * number or wider than 64 bits; what follows the id after a blank is
 * ignored.  Whether a GUID is a switch is for the engine (others are
 * passed over).  0, or -ENOMEM (o then empty).
 */
int node_ids_parse(struct node_ids *o, const char *text, size_t len,
		   const char *name, order_warn_fn *warn, void *ctx);
void node_ids_free(struct node_ids *o);

/*
 * The order in which an engine takes the destination LIDs 1 .. top when
 * `o` lists port GUIDs (routing_opts.order_guids): the LIDs of the listed
 * ports of `f` (CA and router ports, switch port 0) first, in list order,
 * a port's LIDs one after the other from its base LID; then all other
 * LIDs ascending.  *lids (malloc'd) gets `top` entries, *n_first how many
 * of them came from the list.  GUIDs that are no port of `f` (or of a
 * port without a LID) are passed over.  *lids is NULL, 0 returned, when
 * the list is empty or names no such port: the engines' own order then.
 * 0 or -ENOMEM.
 */
struct routing_opts;
int routing_lid_order(const struct fabric *f, const struct routing_opts *o,
		      uint16_t top, uint16_t **lids, size_t *n_first);

#endif /* IBSM_ROUTING_ORDER_H */
