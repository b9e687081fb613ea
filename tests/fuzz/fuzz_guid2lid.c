/*
 * fuzz_guid2lid.c - libFuzzer target: the guid2lid reader of sm/lid.c.
 *
 * The input is written as a guid2lid file and read with lid_cache_load().
 * Checked besides the sanitizers: the load returns a count or -errno and
 * the cache holds that many entries; every warning names the file and a
 * line; reading the same file again adds nothing (every GUID and range
 * is taken); what lid_cache_save() writes reads back to the same number
 * of entries without a warning.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sm/lid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], in_path[96], out_path[96];

struct warns {
	unsigned n;
	const char *path;
};

static void on_warn(void *arg, const char *msg)
{
	struct warns *w = arg;

	w->n++;
	if (strncmp(msg, w->path, strlen(w->path)) != 0 ||
	    !strstr(msg, ": expected "))
		abort();		/* FILE:LINE: expected ... */
}

static void setup(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/fuzz-g2l-XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	snprintf(in_path, sizeof(in_path), "%s/in", dir);
	snprintf(out_path, sizeof(out_path), "%s/guid2lid", dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct warns w = { 0, in_path };
	struct lid_cache *c, *back;
	FILE *fp;
	int n;

	if (!dir[0])
		setup();
	fp = fopen(in_path, "we");
	if (!fp || fwrite(data, 1, size, fp) != size || fclose(fp) != 0)
		abort();

	c = lid_cache_new();
	if (!c)
		abort();
	n = lid_cache_load(c, in_path, on_warn, &w);
	if (n < 0) {
		if (n != -ENOMEM)
			abort();	/* a readable file */
		lid_cache_free(c);
		return 0;
	}
	if ((size_t)n != lid_cache_count(c))
		abort();
	/* again: every entry is there already */
	if (lid_cache_load(c, in_path, NULL, NULL) != 0 ||
	    lid_cache_count(c) != (size_t)n)
		abort();
	/* round trip through the writer */
	if (lid_cache_save(c, out_path) < 0)
		abort();
	back = lid_cache_new();
	if (!back)
		abort();
	w.n = 0;
	w.path = out_path;
	if (lid_cache_load(back, out_path, on_warn, &w) != n || w.n != 0)
		abort();
	lid_cache_free(back);
	lid_cache_free(c);
	return 0;
}
