/*
 * engines.h - what routing.c and the engines share; not for the daemon.
 */
#ifndef IBSM_ROUTING_ENGINES_H
#define IBSM_ROUTING_ENGINES_H

#include "routing/routing.h"

extern const struct routing_engine routing_minhop;
extern const struct routing_engine routing_auto;
extern const struct routing_engine routing_ftree;
extern const struct routing_engine routing_updn, routing_dnup, routing_dfsssp;
extern const struct routing_engine routing_nue, routing_nue_any, routing_nue_one;
extern const struct routing_engine routing_file;
extern const struct routing_engine routing_torus, routing_dfplus;

/* Whether the fabric is a 2D/3D torus or mesh (routing/torus/), or a
 * Dragonfly+ (routing/dfplus/), as those engines recognise it; when not,
 * why says why.  -ENOMEM aside, 1 or 0. */
int routing_is_torus(const struct fabric *f, char *why, size_t whylen);
int routing_is_dfplus(const struct fabric *f, char *why, size_t whylen);

/*
 * Allocate out->lft for every node of `f` and, for each switch, an LFT of
 * top + 1 entries set to LFT_NO_PATH.  Returns 0 or -ENOMEM (out is then
 * freed again).
 */
int routing_alloc_tables(const struct fabric *f, struct routing_result *out,
			 uint16_t top);

/*
 * Number the switches of `f` 0..S-1 in node order: *sw_idx (malloc'd,
 * n_nodes + 1 entries) maps a node id to its switch number or -1.
 * Returns S and, in *ports, the switches' ports plus one each (port 0),
 * or -ENOMEM.
 */
long routing_number_switches(const struct fabric *f, int32_t **sw_idx,
			     size_t *ports);

/* snprintf for one-line messages and summaries that may be cut short
 * (cut is fine: they are for people) */
__attribute__((format(printf, 3, 4)))
void routing_fmt(char *buf, size_t len, const char *fmt, ...);

/* A link counts as up when both ends have PortInfo saying INIT or better. */
static inline bool routing_port_up(const struct fabric *f,
				   const struct fab_port *p)
{
	const struct fab_port *q;

	if (!p->valid || p->peer_node == FAB_NONE ||
	    pi_port_state(&p->pi) < PORT_STATE_INIT)
		return false;
	q = &fabric_node(f, p->peer_node)->ports[p->peer_port];
	return q->valid && pi_port_state(&q->pi) >= PORT_STATE_INIT;
}

#endif /* IBSM_ROUTING_ENGINES_H */
