/*
 * fabmap.h - a picture of the fabric: the model, the health findings and
 * the routed load per cable drawn as one self-contained HTML page with
 * an inline SVG (or the SVG alone).
 *
 * Switches are laid out by the fabric's structure (fabmap/layout.h);
 * hosts are counted per switch, not drawn.  Every switch is one SVG
 * element of class "sw" with data-guid; every cable between two switches
 * is one element of class "link" with data-a and data-b ("0xGUID/PORT"
 * of each end), data-health (ok, warning, critical), data-load (routes
 * over the ideal, when loads are given) and its colour in each view
 * (data-hc, data-lc); its stroke is the colour of the view shown.  The
 * page switches views with a few lines of inline script; nothing is
 * fetched from anywhere.  Tooltips (SVG <title>) name both ends, width,
 * speed, load, counters and findings.
 *
 * Pure: no I/O, no logging; everything is written into a buffer.
 */
#ifndef IBSM_FABMAP_FABMAP_H
#define IBSM_FABMAP_FABMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "health/counters.h"
#include "health/findings.h"
#include "model/fabric.h"

struct fabmap_input {
	const struct fabric *f;			/* the model (required) */
	const struct hf_finding *findings;	/* open findings, may be NULL */
	size_t n_findings;
	/* routed load per port slot (routing_report_port_loads() in
	 * routing/report.h), NULL: no load view; load_ideal the load of
	 * an even spread (the report's load_mean) */
	const uint64_t *loads;
	double load_ideal;
	const struct pc_store *counters;	/* port counters, may be NULL */
	const char *title;			/* NULL: "ibsm fabric map" */
	double now;				/* Unix time shown, 0: none */
	bool load_view;				/* show the load view first */
};

enum fabmap_format {
	FABMAP_HTML,		/* text/html; charset=utf-8 */
	FABMAP_SVG,		/* image/svg+xml */
};

/* A growing buffer: data (NUL-terminated) holds len bytes. */
struct fabmap_buf {
	char *data;
	size_t len, cap;
	bool failed;		/* out of memory: data is incomplete */
};

/*
 * Render the map of in->f into `out` (zeroed by the caller, or holding
 * text to append to).  0, or -ENOMEM (out then holds what was written,
 * to be freed).  Cost: O(switches + cables + findings) plus the layout
 * (bounded; tens of milliseconds at a thousand switches).
 */
int fabmap_render(const struct fabmap_input *in, enum fabmap_format fmt,
		  struct fabmap_buf *out);
void fabmap_buf_free(struct fabmap_buf *b);

/* Colours, for the tests: per health state and per load band. */
#define FABMAP_OK		"#43a047"
#define FABMAP_WARNING		"#fb8c00"
#define FABMAP_CRITICAL		"#e53935"
#define FABMAP_NO_DATA		"#9e9e9e"

/* The load band colour of a ratio (load / ideal); NO_DATA below 0. */
const char *fabmap_load_colour(double ratio);

#endif /* IBSM_FABMAP_FABMAP_H */
