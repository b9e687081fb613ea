/*
 * util.c - string buffers, file reads, paths under --root, diagnostics.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/fileutil.h"
#include "tools/ibhost/util.h"

static void oom(void)
{
	fputs("ibhost: out of memory\n", stderr);
	exit(1);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		oom();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	struct sbuf b = { 0 };
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(&b, fmt, ap);
	va_end(ap);
	return sb_steal(&b);
}

/* ---------------------------------------------------------------------
 * String buffer
 */

static void sb_reserve(struct sbuf *b, size_t more)
{
	size_t need = b->len + more + 1;

	if (need <= b->cap)
		return;
	if (b->cap < 64)
		b->cap = 64;
	while (b->cap < need)
		b->cap *= 2;
	b->s = xrealloc(b->s, b->cap);
}

void sb_addn(struct sbuf *b, const char *s, size_t n)
{
	sb_reserve(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void sb_add(struct sbuf *b, const char *s)
{
	sb_addn(b, s, strlen(s));
}

void sb_putc(struct sbuf *b, char c)
{
	sb_addn(b, &c, 1);
}

void sb_vprintf(struct sbuf *b, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	sb_reserve(b, (size_t)n);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(b, fmt, ap);
	va_end(ap);
}

const char *sb_str(const struct sbuf *b)
{
	return b->s ? b->s : "";
}

char *sb_steal(struct sbuf *b)
{
	char *s = b->s ? b->s : xstrdup("");

	b->s = NULL;
	b->len = b->cap = 0;
	return s;
}

void sb_free(struct sbuf *b)
{
	free(b->s);
	b->s = NULL;
	b->len = b->cap = 0;
}

/* ---------------------------------------------------------------------
 * Files and paths
 */

int read_file(const char *path, char **out)
{
	size_t len;
	int rc = read_file_all(path, out, &len);

	if (rc < 0) {
		*out = NULL;
		return rc;
	}
	/* A NUL inside a text file would cut it short everywhere else. */
	if (strlen(*out) != len) {
		free(*out);
		*out = NULL;
		return -EILSEQ;
	}
	return 0;
}

int read_attr(const char *path, char *buf, size_t len)
{
	char *text, *nl;
	int rc = read_file(path, &text);

	if (rc)
		return rc;
	nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	snprintf(buf, len, "%s", trim(text));
	free(text);
	return 0;
}

char *root_normalize(const char *root)
{
	char *r = xstrdup(root ? root : "");
	size_t n = strlen(r);

	while (n > 0 && r[n - 1] == '/')
		r[--n] = '\0';
	return r;
}

char *root_path(const char *root, const char *path)
{
	return xasprintf("%s%s%s", root, path[0] == '/' ? "" : "/", path);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int list_dir(const char *path, char ***names, size_t *n)
{
	DIR *d = opendir(path);
	struct dirent *de;
	size_t cap = 0;

	*names = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			*names = xrealloc(*names, cap * sizeof(**names));
		}
		(*names)[(*n)++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (*n)
		qsort(*names, *n, sizeof(**names), cmp_names);
	return 0;
}

void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

bool path_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int mkdir_parents(const char *path, mode_t mode)
{
	char *p = xstrdup(path);
	char *slash = p;
	int rc = 0;

	while ((slash = strchr(slash + 1, '/')) != NULL) {
		*slash = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST) {
			rc = -errno;
			break;
		}
		*slash = '/';
	}
	free(p);
	return rc;
}

/* ---------------------------------------------------------------------
 * Lines and words
 */

void lines_split(struct lines *l, const char *text)
{
	const char *p = text, *nl;
	size_t cap = 0;

	memset(l, 0, sizeof(*l));
	l->final_newline = true;
	while (*p) {
		nl = strchr(p, '\n');
		if (l->n == cap) {
			cap = cap ? cap * 2 : 32;
			l->v = xrealloc(l->v, cap * sizeof(*l->v));
		}
		if (!nl) {
			l->v[l->n++] = xstrdup(p);
			l->final_newline = false;
			break;
		}
		l->v[l->n] = xmalloc((size_t)(nl - p) + 1);
		memcpy(l->v[l->n], p, (size_t)(nl - p));
		l->v[l->n][nl - p] = '\0';
		l->n++;
		p = nl + 1;
	}
}

void lines_free(struct lines *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

bool str_ieq(const char *a, const char *b)
{
	return strcasecmp(a, b) == 0;
}

bool str_has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* ---------------------------------------------------------------------
 * Diagnostics
 */

void diag_add(struct diags *d, enum diag_level level, const char *file,
	      int line, const char *fmt, ...)
{
	struct sbuf b = { 0 };
	struct diag *g;
	va_list ap;

	va_start(ap, fmt);
	sb_vprintf(&b, fmt, ap);
	va_end(ap);
	if (d->n == d->cap) {
		d->cap = d->cap ? d->cap * 2 : 16;
		d->v = xrealloc(d->v, d->cap * sizeof(*d->v));
	}
	g = &d->v[d->n++];
	g->level = level;
	g->file = xstrdup(file ? file : "ibhost");
	g->line = line;
	g->msg = sb_steal(&b);
	if (level == DIAG_ERROR)
		d->errors++;
	else if (level == DIAG_PENDING)
		d->pending++;
	else
		d->warnings++;
}

/* Insertion sort: a handful of entries, and it is stable. */
void diags_sort(struct diags *d)
{
	size_t *rank = xcalloc(d->n, sizeof(*rank));

	for (size_t i = 0; i < d->n; i++) {
		rank[i] = i;
		for (size_t j = 0; j < i; j++)
			if (strcmp(d->v[i].file, d->v[j].file) == 0) {
				rank[i] = rank[j];
				break;
			}
	}
	for (size_t i = 1; i < d->n; i++) {
		struct diag g = d->v[i];
		size_t r = rank[i], j = i;

		while (j > 0 && (rank[j - 1] > r ||
				 (rank[j - 1] == r && d->v[j - 1].line > g.line))) {
			d->v[j] = d->v[j - 1];
			rank[j] = rank[j - 1];
			j--;
		}
		d->v[j] = g;
		rank[j] = r;
	}
	free(rank);
}

void diags_print(FILE *fp, const struct diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct diag *g = &d->v[i];

		if (g->line > 0)
			fprintf(fp, "%s:%d: ", g->file, g->line);
		else
			fprintf(fp, "%s: ", g->file);
		if (g->level == DIAG_WARNING)
			fputs("warning: ", fp);
		fprintf(fp, "%s\n", g->msg);
	}
}

void diags_free(struct diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].msg);
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}
