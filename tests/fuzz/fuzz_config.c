/*
 * fuzz_config.c - libFuzzer target: the opensm.conf reader (config/).
 *
 * The input is read as an opensm.conf through inih and the line-keeping
 * reader.  Checked besides the sanitizers: the result is 0 exactly when
 * no error was found; every message names the file and a line within
 * the input; every value the file set passes its key's check and was set
 * on a line within the input; applying the result to a struct sm_config
 * works; the configuration written back (-c) reads again without error
 * and with the same values.
 */
#include "config.h"

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
	for (size_t i = 0; i < n; i++) {
		char err[200];

		if (c.v[i].src != CFG_SRC_FILE)
			continue;
		if (!c.v[i].line || c.v[i].line > lines ||
		    cfg_check_value(&keys[i], c.v[i].val, err, sizeof(err)))
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
	if (cfg_read_text(&back, "back", out, outlen) < 0 || back.unknown.n)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!(keys[i].flags & CFG_IBSM) &&
		    strcmp(cfg_get(&c, i), cfg_get(&back, i)))
			abort();
	cfg_free(&back);
	free(out);
	cfg_free(&c);
	return 0;
}
