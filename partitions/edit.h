/*
 * edit.h - edits of a partitions.conf text that keep every other byte:
 * comments, blank lines and the order of the other definitions.  Pure
 * functions on memory (ibsmctl partitions add/remove/set validate the
 * result with part_parse and write it); 0 or a negative errno.
 *
 * A definition is the text from its first character (the first one that
 * is no white space and no comment) to its ';', '#' comments skipped; its
 * name is the header's text before the first '=', ',' or ':'.
 */
#ifndef IBSM_PARTITIONS_EDIT_H
#define IBSM_PARTITIONS_EDIT_H

#include <stddef.h>

/* One definition: [begin, end) covers it including its ';'. */
struct part_def_span {
	size_t begin, end;
	size_t name_b, name_e;		/* its name */
	size_t colon;			/* offset of its ':' (or end) */
};

/*
 * Find the first definition named `name` (case-sensitive, as OpenSM
 * compares names) at or after offset `from`.  0 and *s filled, or -ENOENT.
 */
int part_edit_find(const char *text, size_t len, const char *name, size_t from,
		   struct part_def_span *s);

/*
 * Each returns a new malloc'd text in *out (*out_len bytes, NUL-terminated
 * too); the input is never changed.
 *
 * add: `def` appended at the end (a newline first when the text does not
 * end with one; a ';' added when def has none; a newline after it).
 * -EINVAL when def is empty or contains a ';' before its end.
 */
int part_edit_add(const char *text, size_t len, const char *def,
		  char **out, size_t *out_len);
/*
 * remove: every definition named `name` goes, with its line when the line
 * holds nothing else (white space before it, white space after its ';').
 * -ENOENT when there is none.
 */
int part_edit_remove(const char *text, size_t len, const char *name,
		     char **out, size_t *out_len);
/*
 * set: in the first definition named `name`, the member `member` (the
 * text before its '=', compared without case for keywords like ALL_CAS
 * and by value for numbers) becomes "member=membership" in place, or
 * "member" alone when membership is NULL; when it is not there,
 * ", member[=membership]" goes after the last member (before any mgid=
 * line and before the ';').  -ENOENT when the definition does not exist,
 * -EINVAL for an empty member or one containing , ; : = # or white space.
 */
int part_edit_set(const char *text, size_t len, const char *name,
		  const char *member, const char *membership,
		  char **out, size_t *out_len);

#endif /* IBSM_PARTITIONS_EDIT_H */
