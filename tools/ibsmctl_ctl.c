/*
 * ibsmctl_ctl.c - the commands that talk to a running ibsm through its
 * control socket (ibsm(8), CONTROL SOCKET): status, resweep, reroute,
 * loglevel, reload, dump-config.  One request line, then the answer's
 * lines up to the terminator ("OK ..." or "ERR ...").
 *
 * Exit status: 0 OK, 1 ERR or no answer (no daemon, refused, timeout),
 * 2 usage.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "tools/ibsmctl.h"

#define CTL_TIMEOUT_MS	30000	/* a reload reads files: give it time */
#define CTL_MAX_REPLY	(1024 * 1024)

void ctl_reply_free(struct ctl_reply *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->lines[i]);
	free(r->lines);
	memset(r, 0, sizeof(*r));
}

static int add_line(struct ctl_reply *r, const char *s, size_t n)
{
	char **l = realloc(r->lines, (r->n + 1) * sizeof(*l));

	if (!l)
		return -ENOMEM;
	r->lines = l;
	if (!(l[r->n] = strndup(s, n)))
		return -ENOMEM;
	r->n++;
	return 0;
}

static bool is_final(const char *s)
{
	return !strncmp(s, "ERR", 3) ||
	       (!strncmp(s, "OK", 2) && (s[2] == '\0' || s[2] == ' '));
}

static long ms_left(const struct timespec *end)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (end->tv_sec - now.tv_sec) * 1000 +
	       (end->tv_nsec - now.tv_nsec) / 1000000;
}

int ctl_request(const char *path, const char *request, struct ctl_reply *r)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct timespec end;
	char *buf = NULL, line[600];
	size_t len = 0, cap = 0, start = 0;
	int fd, rc = 0, n;

	memset(r, 0, sizeof(*r));
	if (strlen(path) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "ibsmctl: %s: socket path too long\n", path);
		return -ENAMETOOLONG;
	}
	memcpy(addr.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		rc = -errno;
		fprintf(stderr, "ibsmctl: cannot connect to %s: %s (is ibsm"
			" running with this --control-socket?)\n", path,
			strerror(-rc));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	n = snprintf(line, sizeof(line), "%s\n", request);
	if (n < 0 || (size_t)n >= sizeof(line)) {
		fprintf(stderr, "ibsmctl: request too long\n");
		close(fd);
		return -E2BIG;
	}
	/* A peer the daemon refuses gets one ERR line and is closed, maybe
	 * before this arrives: a failed send still reads that line. */
	(void)!send(fd, line, (size_t)n, MSG_NOSIGNAL);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += CTL_TIMEOUT_MS / 1000;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left = ms_left(&end);
		ssize_t got;
		char *nl;

		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			fprintf(stderr, "ibsmctl: %s: no answer within %d s\n",
				path, CTL_TIMEOUT_MS / 1000);
			rc = -ETIMEDOUT;
			break;
		}
		if (cap - len < 4096) {
			char *b = len + 8192 > CTL_MAX_REPLY ? NULL :
				  realloc(buf, cap + 8192);
			if (!b) {
				fprintf(stderr, "ibsmctl: %s: answer too long\n",
					path);
				rc = -E2BIG;
				break;
			}
			buf = b;
			cap += 8192;
		}
		got = recv(fd, buf + len, cap - len - 1, 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			/* A refused peer gets its ERR line, then EOF. */
			rc = got < 0 ? -errno : -ECONNRESET;
			buf[len] = '\0';
			if (len > start && is_final(buf + start)) {
				rc = add_line(r, buf + start, len - start);
				r->ok = !strncmp(buf + start, "OK", 2);
				break;
			}
			fprintf(stderr, "ibsmctl: %s: connection closed before"
				" the end of the answer\n", path);
			break;
		}
		len += (size_t)got;
		while ((nl = memchr(buf + start, '\n', len - start))) {
			size_t l = (size_t)(nl - (buf + start));

			*nl = '\0';
			if (add_line(r, buf + start, l) < 0) {
				rc = -ENOMEM;
				goto out;
			}
			start += l + 1;
			if (is_final(r->lines[r->n - 1])) {
				r->ok = !strncmp(r->lines[r->n - 1], "OK", 2);
				goto out;
			}
		}
	}
out:
	free(buf);
	close(fd);
	if (rc < 0)
		ctl_reply_free(r);
	return rc;
}

bool ctl_line_is_problem(const char *line)
{
	return !strncmp(line, "error: ", 7) || !strncmp(line, "refused: ", 9);
}

/* The terminator's text: after "OK " or "ERR ". */
const char *ctl_reply_text(const struct ctl_reply *r)
{
	const char *t = r->n ? r->lines[r->n - 1] : "";

	t += !strncmp(t, "ERR", 3) ? 3 : 2;
	return *t == ' ' ? t + 1 : t;
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static bool is_number(const char *s)
{
	char *end;

	if (!*s || (*s != '-' && (*s < '0' || *s > '9')))
		return false;
	strtod(s, &end);
	return !*end && !strchr(s, 'x') && !(s[0] == '0' && s[1] >= '0' &&
					      s[1] <= '9');
}

/* status: "key value" lines as one JSON object. */
static void print_status_json(const struct ctl_reply *r)
{
	bool first = true;

	printf("{");
	for (size_t i = 0; i + 1 < r->n; i++) {
		const char *l = r->lines[i], *sp = strchr(l, ' ');
		char key[64];
		size_t kl = sp ? (size_t)(sp - l) : strlen(l);
		const char *v = sp ? sp + 1 : "";

		if (kl >= sizeof(key))
			kl = sizeof(key) - 1;
		memcpy(key, l, kl);
		key[kl] = '\0';
		printf("%s\n  ", first ? "" : ",");
		first = false;
		json_str(stdout, key);
		printf(": ");
		if (!strcmp(v, "yes") || !strcmp(v, "no"))
			printf("%s", !strcmp(v, "yes") ? "true" : "false");
		else if (is_number(v))
			printf("%s", v);
		else
			json_str(stdout, v);
	}
	printf("\n}\n");
}

/* dump-config: "key value # source" lines as an array of objects. */
static void print_config_json(const struct ctl_reply *r)
{
	bool first = true;

	printf("[");
	for (size_t i = 0; i + 1 < r->n; i++) {
		char *l = strdup(r->lines[i]), *sp, *hash;
		const char *src = "";
		bool impl = true;

		if (!l || l[0] == '#') {
			free(l);
			continue;
		}
		sp = strchr(l, ' ');
		hash = strstr(l, " # ");
		if (sp)
			*sp = '\0';
		if (hash) {
			char *ni = strstr(hash + 3, " (not implemented)");

			*hash = '\0';
			src = hash + 3;
			if (ni) {
				*ni = '\0';
				impl = false;
			}
		}
		printf("%s\n  {\"key\": ", first ? "" : ",");
		first = false;
		json_str(stdout, l);
		printf(", \"value\": ");
		json_str(stdout, sp && (!hash || sp < hash) ? sp + 1 : "");
		printf(", \"source\": ");
		json_str(stdout, src);
		printf(", \"implemented\": %s}", impl ? "true" : "false");
		free(l);
	}
	printf("\n]\n");
}

/* Any other answer: {"ok": ..., "message": ..., "lines": [...]} */
static void print_generic_json(const struct ctl_reply *r)
{
	printf("{\"ok\": %s, \"message\": ", r->ok ? "true" : "false");
	json_str(stdout, ctl_reply_text(r));
	printf(", \"lines\": [");
	for (size_t i = 0; i + 1 < r->n; i++) {
		printf("%s", i ? ", " : "");
		json_str(stdout, r->lines[i]);
	}
	printf("]}\n");
}

static void ctl_usage(FILE *f)
{
	fprintf(f,
"usage: ibsmctl [--socket PATH] [--json] status\n"
"       ibsmctl [--socket PATH] resweep [heavy|light]\n"
"       ibsmctl [--socket PATH] reroute\n"
"       ibsmctl [--socket PATH] loglevel err|warn|info|debug\n"
"       ibsmctl [--socket PATH] reload\n"
"       ibsmctl [--socket PATH] [--json] dump-config\n"
"       ibsmctl [--socket PATH] [--json] sms\n"
"       ibsmctl [--socket PATH] [--json] routes report\n"
"  --socket PATH   ibsm's control socket (default %s)\n", CTL_DEFAULT_SOCKET);
}

bool ctl_is_command(const char *word)
{
	static const char *const cmds[] = { "status", "resweep", "reroute",
					    "loglevel", "reload", "dump-config",
					    "sms", "routes" };

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(word, cmds[i]))
			return true;
	return false;
}

int ctl_main(int argc, char **argv)
{
	const char *path = CTL_DEFAULT_SOCKET;
	char req[512] = "";
	struct ctl_reply r;
	bool json = false;
	const char *cmd = NULL;
	size_t used = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--socket") && i + 1 < argc) {
			path = argv[++i];
		} else if (!strncmp(a, "--socket=", 9)) {
			path = a + 9;
		} else if (!strcmp(a, "--json") || !strcmp(a, "-j")) {
			json = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			ctl_usage(stdout);
			return 0;
		} else if (a[0] == '-' && !cmd) {
			ctl_usage(stderr);
			return 2;
		} else {
			int w;

			if (!cmd)
				cmd = a;
			w = snprintf(req + used, sizeof(req) - used, "%s%s",
				     used ? " " : "", a);
			if (w < 0 || (size_t)w >= sizeof(req) - used) {
				fprintf(stderr, "ibsmctl: request too long\n");
				return 2;
			}
			used += (size_t)w;
		}
	}
	if (!cmd || !ctl_is_command(cmd)) {
		ctl_usage(stderr);
		return 2;
	}
	/* the daemon writes the report's JSON itself, a member per line */
	if (json && !strcmp(cmd, "routes")) {
		if (used + 5 >= sizeof(req)) {
			fprintf(stderr, "ibsmctl: request too long\n");
			return 2;
		}
		strcat(req, " json");
	}
	if (ctl_request(path, req, &r) < 0)
		return 1;
	if (json && !strcmp(cmd, "routes") && r.ok)
		for (size_t i = 0; i + 1 < r.n; i++)
			printf("%s\n", r.lines[i]);
	else if (json && !strcmp(cmd, "status") && r.ok)
		print_status_json(&r);
	else if (json && !strcmp(cmd, "dump-config") && r.ok)
		print_config_json(&r);
	else if (json)
		print_generic_json(&r);
	else {
		for (size_t i = 0; i + 1 < r.n; i++)
			fprintf(!ctl_line_is_problem(r.lines[i]) ? stdout
								   : stderr,
				"%s\n", r.lines[i]);
		if (!r.ok)
			fprintf(stderr, "ibsmctl: %s\n", ctl_reply_text(&r));
		else if (*ctl_reply_text(&r) && strcmp(cmd, "dump-config"))
			printf("%s\n", ctl_reply_text(&r));
	}
	int rc = r.ok ? 0 : 1;
	ctl_reply_free(&r);
	return rc;
}
