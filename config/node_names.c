/*
 * node_names.c - the node-name-map reader (see node_names.h).
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/node_names.h"

/* GUID order, lines in file order within a GUID */
static int by_guid(const void *a, const void *b)
{
	const struct node_name *x = a, *y = b;

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int add(struct node_names *m, size_t *cap, unsigned line,
	       uint64_t guid, const char *name, size_t nlen)
{
	struct node_name *e;

	if (m->n == NODE_NAMES_MAX)
		return -E2BIG;
	if (m->n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;

		e = realloc(m->e, c * sizeof(*e));
		if (!e)
			return -ENOMEM;
		m->e = e;
		*cap = c;
	}
	if (nlen > NODE_NAME_MAX)
		nlen = NODE_NAME_MAX;
	e = &m->e[m->n];
	e->guid = guid;
	e->line = line;
	e->name = strndup(name, nlen);
	if (!e->name)
		return -ENOMEM;
	m->n++;
	return 0;
}

/*
 * One line [p, end): 0 (an entry added or nothing to add), -EINVAL when
 * it does not start with a GUID, or add()'s error.
 */
static int parse_line(struct node_names *m, size_t *cap, unsigned line,
		      const char *p, const char *end)
{
	uint64_t guid = 0;
	const char *g, *nul = memchr(p, '\0', (size_t)(end - p));
	bool hex = false;

	if (nul)
		end = nul;	/* a C string's end, as for OpenSM's fgets() */
	while (p < end && isspace((unsigned char)*p))
		p++;
	if (p == end || *p == '#')
		return 0;
	/* strtoull(p, &e, 0) without its sign, blanks and overflow wrap */
	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') &&
	    isxdigit((unsigned char)p[2])) {
		hex = true;
		p += 2;
	}
	for (g = p; p < end; p++) {
		unsigned d;

		if (isdigit((unsigned char)*p))
			d = (unsigned)(*p - '0');
		else if (hex && isxdigit((unsigned char)*p))
			d = (unsigned)(tolower((unsigned char)*p) - 'a' + 10);
		else
			break;
		if (guid > (UINT64_MAX - d) / (hex ? 16 : 10))
			return -EINVAL;
		guid = guid * (hex ? 16 : 10) + d;
	}
	if (p == g || (p < end && !isspace((unsigned char)*p) && *p != '#'))
		return -EINVAL;
	while (p < end && isspace((unsigned char)*p))
		p++;
	/* strtok(p, "\"#"): skip quotes and '#', then up to the next one */
	while (p < end && (*p == '"' || *p == '#'))
		p++;
	const char *name = p;
	while (p < end && *p != '"' && *p != '#')
		p++;
	/* trailing blanks (and a CR) of an unquoted name are not part of it */
	while (p > name && isspace((unsigned char)p[-1]))
		p--;
	if (p == name)
		return 0;
	return add(m, cap, line, guid, name, (size_t)(p - name));
}

int node_names_parse(struct node_names *m, const char *file, const char *text,
		     size_t len, char *err, size_t errlen)
{
	const char *p = text, *end = text + len;
	size_t cap = 0;
	unsigned line = 0;
	int rc = 0;

	m->e = NULL;
	m->n = 0;
	while (p < end && rc == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;

		line++;
		rc = parse_line(m, &cap, line, p, le);
		p = nl ? nl + 1 : end;
	}
	if (rc == -EINVAL)
		snprintf(err, errlen, "%s:%u: expected a node GUID (0x hex) and"
			 " a name", file, line);
	else if (rc == -E2BIG)
		snprintf(err, errlen, "%s:%u: more than %u names", file, line,
			 NODE_NAMES_MAX);
	else if (rc < 0)
		snprintf(err, errlen, "%s: %s", file, strerror(-rc));
	if (rc < 0) {
		node_names_free(m);
		return rc;
	}
	/* sorted by GUID, then line: the first line of a GUID is kept */
	if (m->n > 1)
		qsort(m->e, m->n, sizeof(*m->e), by_guid);
	size_t k = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (k && m->e[k - 1].guid == m->e[i].guid) {
			free(m->e[i].name);
			continue;
		}
		m->e[k++] = m->e[i];
	}
	m->n = k;
	return 0;
}

int node_names_load(struct node_names *m, const char *path, char *err,
		    size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	FILE *fp = fopen(path, "re");
	int rc;

	m->e = NULL;
	m->n = 0;
	if (!fp) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	FILE *mem = open_memstream(&text, &len);
	char buf[8192];
	size_t n;

	rc = mem ? 0 : -ENOMEM;
	while (rc == 0 && (n = fread(buf, 1, sizeof(buf), fp)) > 0)
		if (fwrite(buf, 1, n, mem) != n)
			rc = -ENOMEM;
	if (rc == 0 && ferror(fp))
		rc = -EIO;
	fclose(fp);
	if (mem && fclose(mem) != 0 && rc == 0)
		rc = -ENOMEM;
	if (rc == 0)
		rc = node_names_parse(m, path, text, len, err, errlen);
	else
		snprintf(err, errlen, "%s: %s", path, strerror(-rc));
	free(text);
	return rc;
}

const char *node_names_find(const struct node_names *m, uint64_t guid)
{
	size_t lo = 0, hi = m ? m->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->e[mid].guid == guid)
			return m->e[mid].name;
		if (m->e[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void node_names_free(struct node_names *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->e[i].name);
	free(m->e);
	m->e = NULL;
	m->n = 0;
}
