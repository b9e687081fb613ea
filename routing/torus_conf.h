/*
 * torus_conf.h - OpenSM's torus-2QoS configuration file (torus_config,
 * torus-2QoS.conf(5)) as the torus engine uses it: the grid the wiring
 * must match and the seeds that fix its axes and datelines
 * (routing/torus/conf.c).
 */
#ifndef IBSM_ROUTING_TORUS_CONF_H
#define IBSM_ROUTING_TORUS_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TORUS_CONF_SEEDS	16		/* next_seed at most 15 times */
#define TORUS_CONF_MAX		(1u << 20)	/* bytes read of the file */
#define TORUS_CONF_DEFAULT	"/etc/opensm/torus-2QoS.conf"	/* OpenSM's */

struct torus_seed {
	uint64_t from;			/* node GUID of the seed switch */
	uint64_t to[6];			/* per direction xp, xm, yp, ym, zp,
					 * zm: the switch that link leads to,
					 * 0: not given */
	int dateline[3];		/* x/y/z_dateline: origin shift */
};

struct torus_conf {
	bool grid;			/* a torus or mesh line was read
					 * (else radix and ring are 0) */
	unsigned radix[3];		/* 1: no such dimension */
	bool ring[3];			/* ring (true) or line */
	unsigned n_seeds;
	struct torus_seed seed[TORUS_CONF_SEEDS];
};

/* Parse the text of a torus_config file (`name` for messages): 0, or
 * -EINVAL with "NAME:LINE: keyword: what was expected" in err. */
int torus_conf_parse(struct torus_conf *c, const char *text, size_t len,
		     const char *name, char *err, size_t errlen);
/* The same from a file: 0, or -errno with the reason in err. */
int torus_conf_load(struct torus_conf *c, const char *path, char *err,
		    size_t errlen);

#endif /* IBSM_ROUTING_TORUS_CONF_H */
