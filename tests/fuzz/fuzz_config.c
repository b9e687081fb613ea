/*
 * fuzz_config.c - libFuzzer target: the opensm.conf reader (config/).
 *
 * The input is read as an opensm.conf by config/read.c (OpenSM's rules).
 * Checked besides the sanitizers: the result is 0 exactly when no error
 * was found; every message (errors, unknown keys, warnings) names the
 * file and a line within the input; every value the file set passes its
 * key's check, was set on a line within the input and holds no '#' and
 * no blank at either end; applying the result to a struct sm_config
 * works; the configuration written back (-c) reads again without error
 * or warning and with the same values; every key set differs from its
 * default or not as a value compared with itself says.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/conf.h"
#include "sm/sm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_msgs(const struct cfg_msgs *m, unsigned lines)
{
	for (size_t i = 0; i < m->n; i++) {
		unsigned line;

		if (strncmp(m->msg[i], "in:", 3) ||
		    sscanf(m->msg[i] + 3, "%u:", &line) != 1 || !line ||
		    line > lines)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfg c, back;
	struct sm_config o;
	unsigned lines = 1;
	size_t n;
	const struct cfg_key *keys = cfg_keys(&n);
	char *out = NULL;
	size_t outlen = 0;
	FILE *fp;
	int rc;

	if (size > 65536)
		return 0;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	cfg_init(&c);
	rc = cfg_read_text(&c, "in", (const char *)data, size);
	if ((rc == 0) != (c.errors.n == 0) || (rc && rc != -EINVAL))
		abort();
	check_msgs(&c.errors, lines);
	check_msgs(&c.unknown, lines);
	check_msgs(&c.warnings, lines);
	for (size_t i = 0; i < n; i++) {
		char err[200];

		if (c.v[i].src != CFG_SRC_FILE)
			continue;
		size_t l = strlen(c.v[i].val);

		if (!c.v[i].line || c.v[i].line > lines ||
		    cfg_check_value(&keys[i], c.v[i].val, err, sizeof(err)) ||
		    strchr(c.v[i].val, '#') || (l && (isspace(
		    (unsigned char)c.v[i].val[0]) || isspace((unsigned char)
		    c.v[i].val[l - 1]))) ||
		    !cfg_value_eq(&keys[i], c.v[i].val, c.v[i].val))
			abort();
	}
	memset(&o, 0, sizeof(o));
	if (cfg_apply(&c, &o) < 0)
		abort();
	fp = open_memstream(&out, &outlen);
	if (!fp || cfg_write(fp, &c) < 0)
		abort();
	fclose(fp);
	cfg_init(&back);
	if (cfg_read_text(&back, "back", out, outlen) < 0 || back.unknown.n ||
	    back.warnings.n)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!(keys[i].flags & (CFG_IBSM | CFG_ALIAS)) &&
		    strcmp(cfg_get(&c, i), cfg_get(&back, i)))
			abort();
	cfg_free(&back);
	free(out);
	cfg_free(&c);
	return 0;
}
