/*
 * qos_keys.h - opensm.conf's QoS table keys: qos_vlarb_high/low (a list
 * of VL:weight pairs), qos_sl2vl (16 VLs), qos_max_vls, qos_high_limit,
 * and their per-port-class families (qos_ca_*, qos_sw0_*, qos_swe_*,
 * qos_rtr_*), resolved to one table set per port class as OpenSM does:
 * the class's key, else the base qos_* key, else OpenSM's default.
 *
 * Pure: no logging, negative errno on error.
 */
#ifndef IBSM_CONFIG_QOS_KEYS_H
#define IBSM_CONFIG_QOS_KEYS_H

#include <stddef.h>
#include <stdint.h>

#define QOS_VLARB_ENTRIES	64	/* two blocks of 32 (IBA 7.6.9) */
#define QOS_VLARB_BLOCK		32
#define QOS_SL_N		16

/* OpenSM's defaults (osm_base.h OSM_DEFAULT_QOS_*) */
#define QOS_DEFAULT_MAX_VLS	15
#define QOS_DEFAULT_HIGH_LIMIT	0
#define QOS_DEFAULT_VLARB_HIGH \
	"0:4,1:0,2:0,3:0,4:0,5:0,6:0,7:0,8:0,9:0,10:0,11:0,12:0,13:0,14:0"
#define QOS_DEFAULT_VLARB_LOW \
	"0:0,1:4,2:4,3:4,4:4,5:4,6:4,7:4,8:4,9:4,10:4,11:4,12:4,13:4,14:4"
#define QOS_DEFAULT_SL2VL	"0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7"

enum qos_class {
	QOS_BASE,	/* qos_*: every class's fallback */
	QOS_CA,		/* qos_ca_*: channel adapter ports */
	QOS_SW0,	/* qos_sw0_*: switch port 0 */
	QOS_SWE,	/* qos_swe_*: switch external ports */
	QOS_RTR,	/* qos_rtr_*: router ports */
	QOS_N_CLASSES
};

/* One family of keys as written; 0, -1 and NULL are "unset". */
struct qos_key_set {
	unsigned max_vls;		/* 1-15, 0 unset */
	int high_limit;			/* 0-255, -1 unset */
	const char *vlarb_high;		/* NULL unset */
	const char *vlarb_low;
	const char *sl2vl;
};

struct qos_vlarb_entry {
	uint8_t vl;
	uint8_t weight;
};

/* What a port of one class is programmed with. */
struct qos_tables {
	uint8_t max_vls;		/* VLs wanted, 1-15 */
	uint8_t high_limit;		/* PortInfo:VLHighLimit */
	struct qos_vlarb_entry vlarb_high[QOS_VLARB_ENTRIES];
	struct qos_vlarb_entry vlarb_low[QOS_VLARB_ENTRIES];
	uint8_t sl2vl[QOS_SL_N];	/* VL of each SL */
};

/* "VL:weight,..." (at most 64 pairs, VL 0-14, weight 0-255, decimal or
 * 0x hex) into out[64]; entries past the list are VL 0 weight 0.
 * -EINVAL with what was expected in err. */
int qos_parse_vlarb(const char *s, struct qos_vlarb_entry *out,
		    char *err, size_t errlen);

/* "VL,...": exactly 16 VLs 0-15. */
int qos_parse_sl2vl(const char *s, uint8_t *out, char *err, size_t errlen);

/* The tables of class `cls` from its keys, then `base`'s, then OpenSM's
 * defaults.  -EINVAL (err says which key) if a list does not parse. */
int qos_build_tables(struct qos_tables *out, const struct qos_key_set *cls,
		     const struct qos_key_set *base, char *err,
		     size_t errlen);

/* The high limit alone, resolved as qos_build_tables does. */
uint8_t qos_high_limit(const struct qos_key_set *cls,
		       const struct qos_key_set *base);

/* 1 if `name` is a QoS list key (…vlarb_high, …vlarb_low, …sl2vl), and
 * then its value checked as such (0 or -EINVAL with err); 0 if not. */
int qos_check_key(const char *name, const char *val, char *err,
		  size_t errlen);

#endif
