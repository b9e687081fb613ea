/*
 * qos_keys.c - the QoS table keys of opensm.conf (qos_keys.h).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/qos_keys.h"

/* A number at *p (decimal or 0x hex, no sign) up to `hi`; advances *p. */
static int num(const char **p, unsigned long hi, unsigned long *out)
{
	char *end;

	while (**p == ' ' || **p == '\t')
		(*p)++;
	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*out = strtoul(*p, &end, 0);
	if (errno || *out > hi)
		return -EINVAL;
	*p = end;
	while (**p == ' ' || **p == '\t')
		(*p)++;
	return 0;
}

#define VLARB_EXPECTED "VL:weight pairs separated by commas (at most 64," \
		       " VL 0-14, weight 0-255)"

int qos_parse_vlarb(const char *s, struct qos_vlarb_entry *out,
		    char *err, size_t errlen)
{
	const char *p = s;
	unsigned n = 0;

	memset(out, 0, QOS_VLARB_ENTRIES * sizeof(*out));
	for (;;) {
		unsigned long vl, w;

		if (n == QOS_VLARB_ENTRIES) {
			snprintf(err, errlen, VLARB_EXPECTED ": more than 64");
			return -EINVAL;
		}
		if (num(&p, 14, &vl) < 0 || *p++ != ':' ||
		    num(&p, 255, &w) < 0 || (*p && *p != ',')) {
			snprintf(err, errlen, VLARB_EXPECTED ": entry %u", n + 1);
			return -EINVAL;
		}
		out[n].vl = (uint8_t)vl;
		out[n].weight = (uint8_t)w;
		n++;
		if (!*p)
			return 0;
		p++;
	}
}

#define SL2VL_EXPECTED "16 VLs 0-15 separated by commas"

int qos_parse_sl2vl(const char *s, uint8_t *out, char *err, size_t errlen)
{
	const char *p = s;

	for (unsigned n = 0; n < QOS_SL_N; n++) {
		unsigned long vl;

		if (num(&p, 15, &vl) < 0 || (*p && *p != ',') ||
		    (!*p && n != QOS_SL_N - 1) ||
		    (*p == ',' && n == QOS_SL_N - 1)) {
			snprintf(err, errlen, SL2VL_EXPECTED ": SL %u", n);
			return -EINVAL;
		}
		out[n] = (uint8_t)vl;
		p += *p == ',';
	}
	return 0;
}

static const char *pick(const char *cls, const char *base, const char *dflt)
{
	return cls ? cls : base ? base : dflt;
}

uint8_t qos_high_limit(const struct qos_key_set *cls,
		       const struct qos_key_set *base)
{
	return (uint8_t)(cls->high_limit >= 0 ? cls->high_limit :
			 base->high_limit >= 0 ? base->high_limit :
			 QOS_DEFAULT_HIGH_LIMIT);
}

int qos_build_tables(struct qos_tables *out, const struct qos_key_set *cls,
		     const struct qos_key_set *base, char *err,
		     size_t errlen)
{
	const char *s;

	memset(out, 0, sizeof(*out));
	out->max_vls = cls->max_vls ? cls->max_vls :
		       base->max_vls ? base->max_vls : QOS_DEFAULT_MAX_VLS;
	out->high_limit = qos_high_limit(cls, base);
	s = pick(cls->vlarb_high, base->vlarb_high, QOS_DEFAULT_VLARB_HIGH);
	if (qos_parse_vlarb(s, out->vlarb_high, err, errlen) < 0)
		return -EINVAL;
	s = pick(cls->vlarb_low, base->vlarb_low, QOS_DEFAULT_VLARB_LOW);
	if (qos_parse_vlarb(s, out->vlarb_low, err, errlen) < 0)
		return -EINVAL;
	s = pick(cls->sl2vl, base->sl2vl, QOS_DEFAULT_SL2VL);
	if (qos_parse_sl2vl(s, out->sl2vl, err, errlen) < 0)
		return -EINVAL;
	return 0;
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

int qos_check_key(const char *name, const char *val, char *err,
		  size_t errlen)
{
	struct qos_vlarb_entry e[QOS_VLARB_ENTRIES];
	uint8_t sl2vl[QOS_SL_N];

	if (strncmp(name, "qos_", 4))
		return 0;
	if (ends_with(name, "_vlarb_high") || ends_with(name, "_vlarb_low"))
		return qos_parse_vlarb(val, e, err, errlen) < 0 ? -EINVAL : 1;
	if (ends_with(name, "_sl2vl"))
		return qos_parse_sl2vl(val, sl2vl, err, errlen) < 0 ?
		       -EINVAL : 1;
	return 0;
}
