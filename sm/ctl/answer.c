/*
 * answer.c - the control socket's answers: data lines that cannot pass
 * for a terminator, bounded by CTL_MAX_ANSWER, then one terminator line
 * (see ctl.h for the protocol).
 */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm/ctl/ctl.h"
#include "sm/ctl/ctl_int.h"

static void answer_put(struct ctl_answer *a, const char *s, size_t n)
{
	if (a->len + n + 1 > a->cap) {
		size_t cap = a->cap ? a->cap : 1024;
		char *b;

		while (cap < a->len + n + 1)
			cap *= 2;
		b = realloc(a->buf, cap);
		if (!b) {
			a->full = true;
			return;
		}
		a->buf = b;
		a->cap = cap;
	}
	memcpy(a->buf + a->len, s, n);
	a->len += n;
	a->buf[a->len] = '\0';
}

static bool looks_final(const char *s)
{
	return !strncmp(s, "ERR", 3) ||
	       (!strncmp(s, "OK", 2) && (s[2] == '\0' || s[2] == ' '));
}

/*
 * One data line: printed after two bytes of room, which become "- " when
 * the line would pass for a terminator (ctl.h); control characters made
 * harmless; '\n' added.  Past CTL_MAX_ANSWER the answer is marked full.
 */
static void vline(struct ctl_answer *a, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
static void vline(struct ctl_answer *a, const char *fmt, va_list ap)
{
	char buf[CTL_LINE_OUT + 3], *line = buf + 2;
	int w = vsnprintf(line, CTL_LINE_OUT, fmt, ap);
	size_t n = w < 0 ? 0 : (size_t)w;

	if (n > CTL_LINE_OUT - 1)
		n = CTL_LINE_OUT - 1;
	line[n] = '\0';
	if (looks_final(line)) {
		line = buf;
		line[0] = '-';
		line[1] = ' ';
		n += 2;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = '?';
	line[n++] = '\n';
	if (a->len + n > CTL_MAX_ANSWER) {
		a->full = true;
		return;
	}
	answer_put(a, line, n);
}

void ctl_line_add(struct ctl_answer *a, const char *fmt, ...)
{
	va_list ap;

	if (a->full)
		return;
	va_start(ap, fmt);
	vline(a, fmt, ap);
	va_end(ap);
}

/* The terminator: "OK[ text]" or "ERR text". */
int ctl_finish(struct ctl_answer *a, bool ok, const char *fmt, ...)
{
	char text[CTL_LINE_OUT - 8], line[CTL_LINE_OUT];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (a->full) {
		a->full = false;	/* room for the terminator */
		ok = false;
		snprintf(text, sizeof(text), "answer longer than %d bytes: cut",
			 CTL_MAX_ANSWER);
	}
	snprintf(line, sizeof(line), "%s%s%s", ok ? "OK" : "ERR",
		 *text ? " " : "", text);
	n = strlen(line);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
			line[i] = '?';
	answer_put(a, line, n);
	answer_put(a, "\n", 1);
	return ok ? 0 : -1;
}

void ctl_answer_free(struct ctl_answer *a)
{
	free(a->buf);
	memset(a, 0, sizeof(*a));
}
