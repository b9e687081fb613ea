/*
 * read.c - reading opensm.conf by OpenSM's rules (conf.h).
 *
 * OpenSM 3.3.23 (osm_subnet.c, osm_subn_parse_conf_file) reads its file
 * line by line: the line is cut at its first '#' (a comment starts
 * anywhere), the key is the first word (delimited by space, tab or
 * newline), the value is the rest of the line with the white space
 * around it removed and then one pair of matching quotes ("..." or
 * '...') around it; a line with no word is skipped; a later line for the
 * same key wins; an unknown key is reported and skipped.  The value may
 * hold any byte, ';' included, and blanks: `log_prefix two words`.
 *
 * This reader applies the same rules with two differences, both so that
 * a file means one thing: a line of any length is one line (OpenSM's
 * fgets buffer splits lines of more than 1022 bytes and reads the tail as
 * a line of its own), and a carriage return ending a line (a file edited
 * on Windows) is white space after a key too.  A NUL byte ends the line,
 * as it does for OpenSM's string functions, with a warning.
 *
 * Not inih, which ibsm keeps for the INI files it suits (ibhost's): an
 * opensm.conf is not an INI file.  inih wants `key=value` under
 * [sections], cuts values at ';' (its inline comments; OpenSM has none),
 * refuses lines longer than its buffer (197 characters in Debian's
 * build) and treats indented lines as continuations.  Adapting OpenSM's
 * lines to it took more code than reading them directly, and still
 * refused files OpenSM reads.
 *
 * Two strictness levels (conf.h's struct cfg): a bad value of a key ibsm
 * implements is an error (the daemon does not start: it would otherwise
 * run with a setting the administrator did not ask for); an unknown key
 * or a bad value of a key ibsm does not implement is a warning and the
 * key keeps its default, so that every file OpenSM starts with, ibsm
 * starts with.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config/conf.h"
#include "config/fileutil.h"

struct reader {
	struct cfg *c;
	const char *file;
	unsigned line;
	char	**said;			/* the Mellanox keys named so far */
	size_t	 n_said;
};

/* A Mellanox key named once per file: true the first time. */
static bool first_time(struct reader *r, const char *key)
{
	char **n;

	for (size_t i = 0; i < r->n_said; i++)
		if (!strcmp(r->said[i], key))
			return false;
	n = realloc(r->said, (r->n_said + 1) * sizeof(*n));
	if (!n)
		return true;
	r->said = n;
	r->said[r->n_said] = strdup(key);
	if (r->said[r->n_said])
		r->n_said++;
	return true;
}

/* OpenSM's clean_val: blanks around the value, then one pair of quotes. */
static char *clean_value(char *v)
{
	char *e;

	while (isspace((unsigned char)*v))
		v++;
	if (!*v)
		return v;
	e = v + strlen(v) - 1;
	while (e > v && isspace((unsigned char)*e))
		e--;
	e[1] = '\0';
	if ((*v == '"' && *e == '"') || (*v == '\'' && *e == '\'')) {
		v++;
		*e = '\0';
	}
	return v;
}

/* A key that is not in the table: a Mellanox key, or unknown. */
static void other_key(struct reader *r, const char *key)
{
	const char *note = cfg_mlnx_key(key);

	if (!note) {
		cfg_msgs_add(&r->c->unknown, "%s:%u: unknown key '%s'", r->file,
			     r->line, key);
		return;
	}
	if (first_time(r, key))
		cfg_msgs_add(&r->c->warnings, "%s:%u: %s: a key of Mellanox"
			     " OpenSM 5.x; %s", r->file, r->line, key, note);
}

/* Set key i to val from this line; the strictness rules of the file. */
static void file_value(struct reader *r, size_t i, const char *key,
		       const char *val)
{
	const struct cfg_key *k = &cfg_keys(NULL)[i];
	char err[200], mapped[512], note[300];

	if (r->c->v[i].src == CFG_SRC_CMDLINE)
		return;		/* the command line wins */
	if (!strcmp(k->name, "routing_engine") &&
	    cfg_map_engines(val, mapped, sizeof(mapped), note,
			    sizeof(note)) > 0) {
		cfg_msgs_add(&r->c->warnings, "%s:%u: routing_engine %s: %s",
			     r->file, r->line, val, note);
		val = mapped;
	}
	if (!*val && k->flags & CFG_IMPL) {
		cfg_msgs_add(&r->c->errors, "%s:%u: %s: expected a value after"
			     " the key", r->file, r->line, key);
		return;
	}
	if (cfg_set(r->c, i, val, CFG_SRC_FILE, r->line, err,
		    sizeof(err)) == 0)
		return;
	if (k->flags & CFG_IMPL) {
		cfg_msgs_add(&r->c->errors, "%s:%u: %s %s: expected %s", r->file,
			     r->line, key, val, err);
		return;
	}
	/* OpenSM reports it and keeps its default: so does ibsm */
	free(r->c->v[i].val);
	r->c->v[i] = (struct cfg_value){ NULL, CFG_SRC_DEFAULT, 0 };
	cfg_msgs_add(&r->c->warnings, "%s:%u: %s %s: expected %s; %s keeps"
		     " its default %s (ibsm does not implement it)", r->file,
		     r->line, key, *val ? val : "(nothing)", err, key, k->def);
}

static void one_line(struct reader *r, char *s, size_t len)
{
	char *nul = memchr(s, '\0', len), *hash, *key, *val, err[200];
	size_t i;
	const struct cfg_key *k;

	if (nul) {
		cfg_msgs_add(&r->c->warnings, "%s:%u: a NUL byte: the rest of"
			     " the line is ignored, as OpenSM does", r->file,
			     r->line);
		len = (size_t)(nul - s);
	}
	s[len] = '\0';
	hash = strchr(s, '#');
	if (hash)
		*hash = '\0';
	key = s + strspn(s, " \t\r");
	if (!*key)
		return;
	val = key + strcspn(key, " \t\r");
	if (*val)
		*val++ = '\0';
	val = clean_value(val);
	k = cfg_key_find(key, &i);
	if (!k) {
		other_key(r, key);
		return;
	}
	if (k->flags & CFG_ALIAS) {
		if (!cfg_value_eq(k, val, k->def))	/* not for (null) */
			cfg_msgs_add(&r->c->warnings, "%s:%u: %s is OpenSM's"
				     " deprecated name of %s: read as %s",
				     r->file, r->line, key, k->alias, k->alias);
		/* the alias keeps what the file said (check-config names it);
		 * its key takes the value */
		if (r->c->v[i].src != CFG_SRC_CMDLINE && *val)
			(void)cfg_set(r->c, i, val, CFG_SRC_FILE, r->line, err,
				      sizeof(err));
		if (!cfg_key_find(k->alias, &i))
			return;
	}
	file_value(r, i, key, val);
}

int cfg_read_text(struct cfg *c, const char *name, const char *text,
		  size_t len)
{
	struct reader r = { .c = c, .file = name };
	char *buf = malloc(len + 1), *p, *end;

	free(c->file);
	c->file = strdup(name);
	if (!buf)
		return -ENOMEM;
	memcpy(buf, text, len);
	buf[len] = '\0';
	for (p = buf, end = buf + len; p < end; ) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		r.line++;
		one_line(&r, p, l);
		p += l + 1;
	}
	for (size_t i = 0; i < r.n_said; i++)
		free(r.said[i]);
	free(r.said);
	free(buf);
	return c->errors.n ? -EINVAL : 0;
}

int cfg_read_file(struct cfg *c, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	int rc = read_file_all(path, &text, &len);

	if (rc < 0)
		return rc;
	rc = cfg_read_text(c, path, text, len);
	free(text);
	return rc;
}
