/*
 * conf.h - ibsm's configuration: one table of every key of OpenSM
 * 3.3.23's opensm.conf (and ibsm's own keys and limits), with its type,
 * default, range, whether a SIGHUP may change it at run time and whether ibsm
 * implements it.  The same table drives the file reader (OpenSM's
 * `key value` lines, read by OpenSM's rules: config/read.c), the command
 * line (config/opts.c),
 * `-c FILE` (the default file in OpenSM's format), --check-config,
 * dump-config and the daemon's reload, and fills struct sm_config
 * (config/sm_config.h).  Library code: it returns errors as text for the
 * daemon to print, and never logs.
 */
#ifndef IBSM_CONFIG_CONF_H
#define IBSM_CONFIG_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct sm_config;

enum cfg_type {
	CFG_BOOL,	/* TRUE or FALSE (OpenSM's spelling, exactly) */
	CFG_INT,	/* integer in [min, max], decimal or 0x hex */
	CFG_REAL,	/* number in [min, max] (ibsm's limits) */
	CFG_U64,	/* 64-bit number, 0x hex (keys, subnet prefix) */
	CFG_GUID,	/* 64-bit port GUID */
	CFG_STR,	/* any text; "(null)" is unset */
	CFG_PATH,	/* a file name; "(null)" is unset */
	CFG_DIR,	/* a directory name */
	CFG_ENUM,	/* one of the comma list `words` */
};

/* Key flags */
#define CFG_RT		0x01	/* a SIGHUP (heavy sweep) may change it */
#define CFG_IMPL	0x02	/* ibsm implements it */
#define CFG_IBSM	0x04	/* ibsm's own key, not in OpenSM's opensm.conf */
#define CFG_LIMIT	0x08	/* a limit (config/limits.h), also --name N */
#define CFG_ALIAS	0x10	/* another name of the key `alias` (OpenSM's
				 * deprecated dimn_ports_file): the reader
				 * sets that key; never written by -c */

/* How a key's value lands in struct sm_config (cfg_apply). */
enum cfg_field {
	F_NONE, F_BOOL,
	F_BOOL_NOT,	/* a bool stored inverted (sm_config's no_... fields,
			 * so that a zeroed config means OpenSM's TRUE) */
	F_U8, F_UINT, F_U64, F_STR, F_BUF, F_ENUM,
	F_INT,		/* a signed int (-1: unset, as OpenSM's) */
	F_LOG_FLAGS,	/* log_flags: sets log_level (and dump_lfts on 0x40) */
	F_NO_PART_ENF,	/* no_partition_enforcement TRUE: part_enforce off */
	F_LIMIT,	/* a limit: its option's rules (cfg_limit_parse) */
};

struct cfg_key {
	const char *name;	/* the opensm.conf key */
	enum cfg_type type;
	const char *def;	/* default, as written in the file */
	double	 min, max;	/* CFG_INT, CFG_REAL */
	const char *words;	/* CFG_ENUM: "both,in,out,off" */
	unsigned flags;		/* CFG_RT, CFG_IMPL, CFG_IBSM, CFG_LIMIT */
	enum cfg_field field;
	size_t	 off;		/* offset in struct sm_config */
	size_t	 size;		/* F_BUF: the buffer's size; F_LIMIT: the
				 * field's (an unsigned or a uint64_t for
				 * CFG_INT, a double for CFG_REAL) */
	const char *section;	/* heading in -c output */
	/* F_LIMIT only */
	double	 num;		/* the default, as a number (`def` its text) */
	const char *unit;	/* what the number counts, for messages */
	const char *help;	/* one line for --help */
	/* CFG_ALIAS only: the key this name sets */
	const char *alias;
};

/* The whole table: OpenSM's keys in opensm -c order, then ibsm's own,
 * then the limits (limit_opts of config/limits.h). */
const struct cfg_key *cfg_keys(size_t *n);
/* The key called `name`, or NULL. */
const struct cfg_key *cfg_key_find(const char *name, size_t *index);
/* ibsm implements the key: CFG_IMPL, or an alias (dimn_ports_file) of a
 * key it implements. */
bool cfg_key_implemented(const struct cfg_key *k);

/* Where a value came from. */
enum cfg_src { CFG_SRC_DEFAULT, CFG_SRC_FILE, CFG_SRC_CMDLINE };

struct cfg_value {
	char	*val;		/* as written; NULL = the key's default */
	enum cfg_src src;
	unsigned line;		/* CFG_SRC_FILE */
};

/* Messages for the user: "FILE:LINE: ...", one per problem. */
struct cfg_msgs {
	char	**msg;
	size_t	 n;
};

struct cfg {
	struct cfg_value *v;	/* one per cfg_keys() entry */
	char	*file;		/* the file read, or NULL */
	struct cfg_msgs errors;	/* bad values, unreadable lines */
	struct cfg_msgs unknown; /* unknown keys (a warning at start) */
	/*
	 * The other warnings of the file, each "FILE:LINE: ...": bad values
	 * of keys ibsm does not implement (the key keeps its default, as
	 * OpenSM resets it), keys of Mellanox OpenSM 5.x and what ibsm does
	 * instead, values mapped to ibsm's (routing engines), the deprecated
	 * dimn_ports_file.  The daemon starts; --strict refuses them.
	 */
	struct cfg_msgs warnings;
};

/* Append one message (printf-style) to m; dropped when out of memory. */
void cfg_msgs_add(struct cfg_msgs *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The log level (enum log_level, config/log_level.h) OpenSM's log flags (-D,
 * log_flags: 0x01 errors, 0x02 info, 0x04 verbose, 0x08 debug, 0x10
 * function calls, 0x20 frames, 0x40 routing, 0x80 sys) give: debug from
 * 0x04 up, else info with 0x02, warn with 0x01, err with none.
 */
int cfg_log_level_of_flags(unsigned flags);

void cfg_init(struct cfg *c);
void cfg_free(struct cfg *c);
void cfg_msgs_free(struct cfg_msgs *m);

/* The value in force of key i (its default when unset). */
const char *cfg_get(const struct cfg *c, size_t i);

/*
 * The value of key i as the daemon applies it (cfg_apply): cfg_get's,
 * or for dump_files_dir and cache_dir left at their defaults OpenSM's
 * OSM_TMP_DIR and OSM_CACHE_DIR when set.
 */
const char *cfg_effective(const struct cfg *c, size_t i);
/*
 * Where that value came from, for dump-config: "default", "FILE:LINE",
 * "command line" or "environment OSM_CACHE_DIR".
 */
void cfg_source(const struct cfg *c, size_t i, char *buf, size_t len);

/*
 * Check `val` for key k.  0, or -EINVAL with "expected ..." in err (the
 * part after "key value: ").
 */
int cfg_check_value(const struct cfg_key *k, const char *val, char *err,
		    size_t errlen);

/*
 * Set key i from the command line or a file (line > 0).  The value is
 * checked: -EINVAL with the reason in err.
 */
int cfg_set(struct cfg *c, size_t i, const char *val, enum cfg_src src,
	    unsigned line, char *err, size_t errlen);

/*
 * Read an opensm.conf by OpenSM 3.3.23's rules (config/read.c): a line is
 * cut at its first '#'; its first word (up to a blank) is the key, the
 * rest of the line without the blanks around it and one pair of quotes
 * around it is the value; a later line wins.  Every problem goes to
 * c->errors (bad values of implemented keys: the daemon does not start),
 * c->unknown (unknown keys) or c->warnings, as "FILE:LINE: ..."; values
 * set on the command line (CFG_SRC_CMDLINE) are kept.  Returns 0, -EINVAL
 * when c->errors has entries, or -errno when the file cannot be read.
 */
int cfg_read_file(struct cfg *c, const char *path);
/*
 * The opensm.conf read when -F is not given, as OpenSM reads its
 * compiled-in default when it exists (opensm(8)): the first of `paths`
 * (NULL-terminated; NULL: CFG_DEFAULT_FILES) that is a regular file, or
 * NULL for none.
 */
#define CFG_DEFAULT_FILES	"/etc/rdma/opensm.conf", "/etc/opensm/opensm.conf"
const char *cfg_default_file(const char *const *paths);

/* The same for `len` bytes of text named `name` in messages. */
int cfg_read_text(struct cfg *c, const char *name, const char *text,
		  size_t len);

/*
 * Copy every implemented key into `o` (limits included).  0, or -EINVAL
 * if a value does not convert (cannot happen after cfg_set's checks).
 */
int cfg_apply(const struct cfg *c, struct sm_config *o);

/*
 * The keys ibsm accepts but does not implement whose value in the file
 * differs from the default (compared as values: cfg_value_eq), as
 * "a, b, c" (empty when none); *n counts them.  (The daemon names such
 * command-line options itself.)
 */
void cfg_unimplemented(const struct cfg *c, char *buf, size_t len, size_t *n);

/*
 * Whether two values of key k are the same value: numbers as numbers
 * (0x07 and 7), GUIDs and 64-bit keys as numbers, booleans as OpenSM
 * reads them (only TRUE is true), "(null)" and NULL (unset) alike, hex
 * masks without their leading zeros; other text as text.
 */
bool cfg_value_eq(const struct cfg_key *k, const char *a, const char *b);
/* Key i was set in the file to a value other than its default. */
bool cfg_file_changed(const struct cfg *c, size_t i);

/*
 * What a key is to ibsm (config/key_notes.c), for messages and the key
 * table of ibsm.conf(5): implemented; mapped (ibsm does the same thing
 * its own way: `note` says how); not applicable (`note` says why); or
 * not implemented (read and ignored, with a warning; `note` may say what
 * to use instead).
 */
enum cfg_status { CFG_ST_IMPL, CFG_ST_MAPPED, CFG_ST_NA, CFG_ST_IGNORED };
enum cfg_status cfg_key_status(const struct cfg_key *k, const char **note);

/*
 * A key of Mellanox OpenSM 5.x that OpenSM 3.3.23 does not have
 * (config/mlnx_keys.c): what ibsm does instead, or NULL for a key that
 * is not one.
 */
const char *cfg_mlnx_key(const char *name);
/*
 * A routing engine list with Mellanox OpenSM 5.x's engine names (ar_updn,
 * ar_ftree, ...) replaced by ibsm's nearest engine: 1 and the new list in
 * out and the mapping in note ("ar_updn -> updn (...)") when a name was
 * replaced, 0 when none was.
 */
int cfg_map_engines(const char *val, char *out, size_t outlen, char *note,
		    size_t notelen);

/*
 * The key table of ibsm.conf(5) (roff, between the markers
 * CFG_MAN_BEGIN and CFG_MAN_END): every key of OpenSM 3.3.23 with what
 * ibsm does with it.  tests/unit/check_config compares the man page with
 * it; tools/update_man_keys.sh rewrites the page.
 */
#define CFG_MAN_BEGIN	".\\\" BEGIN KEY TABLE (generated: tools/update_man_keys.sh)"
#define CFG_MAN_END	".\\\" END KEY TABLE"
int cfg_man_table(FILE *fp);

/* Write the configuration in force in OpenSM's format, commented. */
int cfg_write(FILE *fp, const struct cfg *c);

/* "a 64-bit GUID ..." etc.: what a value of key k must look like. */
void cfg_expected(const struct cfg_key *k, char *buf, size_t len);

#endif /* IBSM_CONFIG_CONF_H */
