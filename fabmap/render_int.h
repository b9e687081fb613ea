/*
 * render_int.h - what the parts of the fabric map renderer share.
 */
#ifndef IBSM_FABMAP_RENDER_INT_H
#define IBSM_FABMAP_RENDER_INT_H

#include "fabmap/fabmap.h"
#include "fabmap/layout.h"

/* Findings and counters joined to ports and nodes. */
struct fm_join {
	size_t *slot_off;		/* per node: its port 0's slot */
	size_t slots;
	int8_t *sev;			/* per slot: worst severity, -1 none */
	int8_t *node_sev;		/* per node: its own and its hosts' */
	/* findings per slot and per node (port 0 and node-wide): lists of
	 * 2 * finding + end (0: the finding's port, 1: its peer's) */
	int32_t *head, *node_head, *next;
	unsigned count[HF_N_SEVERITIES];
	const struct pc_port **ctr;	/* sorted by GUID and port */
	size_t n_ctr;
};

struct fm_ctx {
	const struct fabmap_input *in;
	const struct fm_graph *g;
	const struct fm_layout *l;
	const struct fm_join *j;
	struct fabmap_buf *b;
	size_t links;			/* cables between switches drawn */
	size_t hosts;
	/* the load view's summary: cables at 1.25 x the ideal or more, the
	 * highest ratio */
	size_t hot;
	double max_ratio;
};

int fm_join_build(const struct fabmap_input *in, struct fm_join *j);
void fm_join_free(struct fm_join *j);
const struct pc_port *fm_counters(const struct fm_join *j, uint64_t guid,
				  unsigned port);

void fm_put(struct fabmap_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void fm_esc(struct fabmap_buf *b, const char *s);
const char *fm_health_colour(int sev);
const char *fm_health_name(int sev);
void fm_link_rate(const struct fab_port *p, char *buf, size_t len);

/* The <svg> element (standalone: with the XML declaration). */
void fm_svg(struct fm_ctx *c, bool standalone);
/* The whole page around it. */
void fm_html(struct fm_ctx *c);

#endif /* IBSM_FABMAP_RENDER_INT_H */
