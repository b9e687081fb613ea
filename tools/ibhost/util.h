/*
 * util.h - small helpers shared by every part of ibhost: a growing string
 * buffer, whole-file reads, paths under --root, sorted directory listings
 * and the list of diagnostics that check, plan and apply print.
 *
 * Memory exhaustion is not an error ibhost tries to survive: the x*()
 * allocators print one line and exit.  Everything that touches the file
 * system returns 0 or -errno and leaves the wording to the caller.
 */
#ifndef IBHOST_UTIL_H
#define IBHOST_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A NUL-terminated string that grows; s is NULL until the first append. */
struct sbuf {
	char	*s;
	size_t	 len;
	size_t	 cap;
};

void sb_add(struct sbuf *b, const char *s);
void sb_addn(struct sbuf *b, const char *s, size_t n);
void sb_putc(struct sbuf *b, char c);
void sb_printf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sb_vprintf(struct sbuf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* The contents ("" when empty); stays owned by b. */
const char *sb_str(const struct sbuf *b);
/* Hands the string over to the caller (never NULL) and empties b. */
char *sb_steal(struct sbuf *b);
void sb_free(struct sbuf *b);

/* Whole file into *out (malloc'd, NUL-terminated).  -ENOENT if absent. */
int read_file(const char *path, char **out);
/* First line of a sysfs-style attribute, trailing white space removed. */
int read_attr(const char *path, char *buf, size_t len);

/*
 * A path on the target system ("/etc/nfs.conf") under the root directory
 * given by --root.  root is "" for the real root; see root_normalize().
 */
char *root_path(const char *root, const char *path);
/* "/" and "" become "", "/tmp/x/" becomes "/tmp/x". Returns malloc'd. */
char *root_normalize(const char *root);

/* Sorted names in a directory, "." entries skipped.  -errno on failure. */
int list_dir(const char *path, char ***names, size_t *n);
void free_names(char **names, size_t n);

bool path_exists(const char *path);
bool is_dir(const char *path);
/* mkdir -p for the directories leading to path's last component. */
int mkdir_parents(const char *path, mode_t mode);

/* A list of lines split from a text; no line keeps its '\n'. */
struct lines {
	char	**v;
	size_t	  n;
	bool	  final_newline;	/* text ended with '\n' (or was empty) */
};

void lines_split(struct lines *l, const char *text);
void lines_free(struct lines *l);

/* Leading and trailing white space trimmed in place; returns s moved. */
char *trim(char *s);
bool str_ieq(const char *a, const char *b);
bool str_has_suffix(const char *s, const char *suffix);

/*
 * Diagnostics.  Errors stop plan and apply; "pending" findings are
 * differences that apply itself fixes (a module not loaded yet), so only
 * check counts them as failures; warnings never change an exit status.
 */
enum diag_level { DIAG_ERROR, DIAG_PENDING, DIAG_WARNING };

struct diag {
	enum diag_level	 level;
	char		*file;
	int		 line;		/* 0: no line */
	char		*msg;
};

struct diags {
	struct diag	*v;
	size_t		 n, cap;
	unsigned	 errors, pending, warnings;
};

void diag_add(struct diags *d, enum diag_level level, const char *file,
	      int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Stable sort by file (in first-seen order) then line. */
void diags_sort(struct diags *d);
/* "FILE:LINE: msg" per line; warnings get "warning: " after the place. */
void diags_print(FILE *fp, const struct diags *d);
void diags_free(struct diags *d);

#endif /* IBHOST_UTIL_H */
