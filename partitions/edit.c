/*
 * edit.c - add, remove and set in a partitions.conf text, byte for byte
 * around the edit (edit.h).  ibsmctl validates the result with part_parse
 * before it writes anything, so these functions only need to find the
 * right span; they read the text the way parse.c does: '#' to the end of
 * a line is a comment, ';' ends a definition.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "partitions/edit.h"

/* Skip white space and comments from i; returns the next content byte. */
static size_t skip_blank(const char *t, size_t len, size_t i)
{
	while (i < len) {
		if (t[i] == '#') {
			while (i < len && t[i] != '\n')
				i++;
		} else if (isspace((unsigned char)t[i])) {
			i++;
		} else {
			break;
		}
	}
	return i;
}

/* The definition starting at the first content byte at or after `from`. */
static int next_def(const char *t, size_t len, size_t from,
		    struct part_def_span *s)
{
	size_t i = skip_blank(t, len, from), last = i;

	if (i >= len)
		return -ENOENT;
	s->begin = i;
	s->colon = (size_t)-1;
	for (; i < len && t[i] != ';'; i++) {
		if (t[i] == '#') {
			while (i + 1 < len && t[i + 1] != '\n')
				i++;
			continue;
		}
		if (t[i] == ':' && s->colon == (size_t)-1)
			s->colon = i;
		if (!isspace((unsigned char)t[i]))
			last = i;
	}
	/* A last definition without ';' ends at its last content byte. */
	s->end = i < len ? i + 1 : last + 1;
	if (s->colon == (size_t)-1)
		s->colon = s->end;
	s->name_b = s->begin;
	for (i = s->begin; i < s->end && !strchr("=,:#\n;", t[i]); i++)
		;
	while (i > s->begin && isspace((unsigned char)t[i - 1]))
		i--;
	s->name_e = i;
	return 0;
}

int part_edit_find(const char *text, size_t len, const char *name, size_t from,
		   struct part_def_span *s)
{
	size_t nl = strlen(name);

	while (next_def(text, len, from, s) == 0) {
		if (s->name_e - s->name_b == nl &&
		    !memcmp(text + s->name_b, name, nl))
			return 0;
		from = s->end;
	}
	return -ENOENT;
}

/* out = text[0, b) + ins + text[e, len) */
static int splice(const char *text, size_t len, size_t b, size_t e,
		  const char *ins, size_t ins_len, char **out, size_t *out_len)
{
	size_t n = b + ins_len + (len - e);
	char *p = malloc(n + 1);

	if (!p)
		return -ENOMEM;
	memcpy(p, text, b);
	memcpy(p + b, ins, ins_len);
	memcpy(p + b + ins_len, text + e, len - e);
	p[n] = '\0';
	*out = p;
	*out_len = n;
	return 0;
}

int part_edit_add(const char *text, size_t len, const char *def,
		  char **out, size_t *out_len)
{
	size_t dl = strlen(def);
	const char *semi = memchr(def, ';', dl);
	char *ins;
	size_t n = 0;
	int rc;

	while (dl && isspace((unsigned char)def[dl - 1]))
		dl--;
	if (!dl || (semi && (size_t)(semi - def) != dl - 1))
		return -EINVAL;
	ins = malloc(dl + 3);
	if (!ins)
		return -ENOMEM;
	if (len && text[len - 1] != '\n')
		ins[n++] = '\n';
	memcpy(ins + n, def, dl);
	n += dl;
	if (!semi)
		ins[n++] = ';';
	ins[n++] = '\n';
	rc = splice(text, len, len, len, ins, n, out, out_len);
	free(ins);
	return rc;
}

int part_edit_remove(const char *text, size_t len, const char *name,
		     char **out, size_t *out_len)
{
	struct part_def_span s;
	char *cur = NULL;
	const char *t = text;
	size_t tl = len;
	bool found = false;

	while (part_edit_find(t, tl, name, 0, &s) == 0) {
		size_t b = s.begin, e = s.end, lb = b, le = e;
		char *next;
		size_t nl;
		int rc;

		while (lb > 0 && (t[lb - 1] == ' ' || t[lb - 1] == '\t'))
			lb--;
		while (le < tl && (t[le] == ' ' || t[le] == '\t' || t[le] == '\r'))
			le++;
		/* Alone on its line(s): the whole lines go. */
		if ((lb == 0 || t[lb - 1] == '\n') && (le == tl || t[le] == '\n')) {
			b = lb;
			e = le < tl ? le + 1 : le;
		}
		rc = splice(t, tl, b, e, "", 0, &next, &nl);
		free(cur);
		if (rc)
			return rc;
		cur = next;
		t = cur;
		tl = nl;
		found = true;
	}
	if (!found)
		return -ENOENT;
	*out = cur;
	*out_len = tl;
	return 0;
}

/* A member's name compared to the one asked for: numbers by value. */
static bool member_eq(const char *a, size_t al, const char *m)
{
	char buf[64], *end;
	unsigned long long x, y;

	if (al >= sizeof(buf))
		return false;
	memcpy(buf, a, al);
	buf[al] = '\0';
	if (isdigit((unsigned char)buf[0]) && isdigit((unsigned char)m[0])) {
		x = strtoull(buf, &end, 0);
		if (*end)
			return false;
		y = strtoull(m, &end, 0);
		return !*end && x == y;
	}
	return !strcasecmp(buf, m);
}

/*
 * ", member[=membership]" after the last member, [last_tb, last).
 * When a comment follows that member on its line (after an optional
 * ','), the comment stays with it: the ',' goes before the comment and
 * the new member on a line of its own after it, indented as the last
 * member's line.
 */
static int add_after(const char *text, size_t len, size_t end,
		     size_t last_tb, size_t last, const char *member,
		     const char *membership,
		     char **out, size_t *out_len)
{
	size_t j = last, nl, ls = last, ib;
	bool comma = false, own_line;
	char ins[200];
	int n;

	while (j < end && (text[j] == ' ' || text[j] == '\t'))
		j++;
	if (j < end && text[j] == ',') {
		comma = true;
		j++;
		while (j < end && (text[j] == ' ' || text[j] == '\t'))
			j++;
	}
	nl = j;
	while (nl < end && text[nl] != '\n')
		nl++;
	if (j >= end || text[j] != '#' || nl >= end) {
		n = snprintf(ins, sizeof(ins), ", %s%s%s", member,
			     membership ? "=" : "", membership ? membership : "");
		return splice(text, len, last, last, ins, (size_t)n, out,
			      out_len);
	}
	/* The last member's line and its indentation (when the member is
	 * the first thing on it; else four spaces). */
	while (ls > 0 && text[ls - 1] != '\n')
		ls--;
	for (ib = ls; ib < last && (text[ib] == ' ' || text[ib] == '\t'); ib++)
		;
	own_line = ib == last_tb && ib - ls <= 32;
	n = snprintf(ins, sizeof(ins), "\n%.*s%s%s%s",
		     own_line ? (int)(ib - ls) : 4, own_line ? text + ls : "    ",
		     member, membership ? "=" : "", membership ? membership : "");
	{
		size_t total = len + (comma ? 0 : 1) + (size_t)n;
		char *p = malloc(total + 1), *q = p;

		if (!p)
			return -ENOMEM;
		memcpy(q, text, last);
		q += last;
		if (!comma)
			*q++ = ',';
		memcpy(q, text + last, nl - last);
		q += nl - last;
		memcpy(q, ins, (size_t)n);
		q += n;
		memcpy(q, text + nl, len - nl);
		q += len - nl;
		*q = '\0';
		*out = p;
		*out_len = (size_t)(q - p);
	}
	return 0;
}

int part_edit_set(const char *text, size_t len, const char *name,
		  const char *member, const char *membership,
		  char **out, size_t *out_len)
{
	struct part_def_span s;
	size_t ml = strlen(member), i, after_last, ins_len, last_tb = 0;
	char ins[160];
	int rc;

	if (!ml || ml > 64 || strpbrk(member, ",;:=# \t\r\n") ||
	    (membership && (strlen(membership) > 16 ||
			    strpbrk(membership, ",;:=# \t\r\n"))))
		return -EINVAL;
	rc = part_edit_find(text, len, name, 0, &s);
	if (rc)
		return rc;
	/* Members between ':' and ';', separated by ','; an mgid= line takes
	 * the rest of its line. */
	after_last = s.colon < s.end ? s.colon + 1 : s.end;
	i = after_last;
	while (i < s.end) {
		size_t tb, te, ne;

		i = skip_blank(text, s.end, i);
		if (i >= s.end || text[i] == ';')
			break;
		if (text[i] == ',') {
			i++;
			continue;
		}
		tb = i;
		if (s.end - tb >= 4 && !strncasecmp(text + tb, "mgid", 4)) {
			while (i < s.end && text[i] != '\n' && text[i] != ';')
				i++;
			continue;
		}
		while (i < s.end && !strchr(",;#\n", text[i]))
			i++;
		te = i;
		while (te > tb && isspace((unsigned char)text[te - 1]))
			te--;
		for (ne = tb; ne < te && text[ne] != '='; ne++)
			;
		{
			size_t nb = ne;

			while (nb > tb && isspace((unsigned char)text[nb - 1]))
				nb--;
			if (member_eq(text + tb, nb - tb, member)) {
				/* In place: the member's own spelling kept. */
				int n = snprintf(ins, sizeof(ins), "%.*s%s%s",
						 (int)(nb - tb), text + tb,
						 membership ? "=" : "",
						 membership ? membership : "");
				return splice(text, len, tb, te, ins, (size_t)n,
					      out, out_len);
			}
		}
		after_last = te;
		last_tb = tb;
	}
	/* Not there: after the last member, or right after the ':'. */
	if (s.colon >= s.end)
		return -EINVAL;
	if (after_last > s.colon + 1)
		return add_after(text, len, s.end, last_tb, after_last,
				 member, membership, out, out_len);
	{
		bool first = after_last == s.colon + 1;
		int n = snprintf(ins, sizeof(ins), "%s%s%s%s",
				 first ? " " : ", ", member,
				 membership ? "=" : "",
				 membership ? membership : "");
		ins_len = (size_t)n;
	}
	return splice(text, len, after_last, after_last, ins, ins_len,
		      out, out_len);
}
