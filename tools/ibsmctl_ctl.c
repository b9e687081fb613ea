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

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

/*
 * dump-config: "key value # source" lines as an array of objects, with
 * what ibsm does with the key ("status": implemented, mapped, not
 * applicable, not implemented); the "# warning:" lines are left out.
 */
static void print_config_json(const struct ctl_reply *r)
{
	bool first = true;

	printf("[");
	for (size_t i = 0; i + 1 < r->n; i++) {
		char *l = strdup(r->lines[i]), *sp, *hash;
		static const char *const status[] = {
			" (not implemented)", " (not applicable)", " (mapped)"
		};
		const char *src = "", *st = "implemented";

		if (!l || l[0] == '#') {
			free(l);
			continue;
		}
		sp = strchr(l, ' ');
		hash = strstr(l, " # ");
		if (sp)
			*sp = '\0';
		if (hash) {
			*hash = '\0';
			src = hash + 3;
			for (size_t k = 0; k < 3; k++) {
				char *m = strstr(src, status[k]);

				if (m) {
					*m = '\0';
					st = status[k] + 2;	/* " (" */
					break;
				}
			}
		}
		printf("%s\n  {\"key\": ", first ? "" : ",");
		first = false;
		json_str(stdout, l);
		printf(", \"value\": ");
		json_str(stdout, sp && (!hash || sp < hash) ? sp + 1 : "");
		printf(", \"source\": ");
		json_str(stdout, src);
		/* "mapped": ibsm does its work its own way, the key
		 * itself changes nothing */
		printf(", \"implemented\": %s, \"status\": \"%.*s\"}",
		       !strcmp(st, "implemented") ? "true" : "false",
		       (int)strcspn(st, ")"), st);
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

static const char *run_dir(void)
{
	const char *d = getenv("IBSM_RUN_DIR");

	return d && *d ? d : CTL_RUN_DIR;
}

static bool is_socket(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The instances whose socket exists under the run directory, sorted
 * (the first 32; names only ibsm-launch's instance names can be).
 * Returns how many, each a malloc'd name in names[].
 */
#define CTL_MAX_INSTANCES	32
static size_t find_instances(char *names[CTL_MAX_INSTANCES])
{
	DIR *d = opendir(run_dir());
	struct dirent *e;
	size_t n = 0;
	char path[PATH_MAX];

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < CTL_MAX_INSTANCES) {
		if (e->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s/ibsm.sock", run_dir(),
			     e->d_name) >= (int)sizeof(path) || !is_socket(path))
			continue;
		if ((names[n] = strdup(e->d_name)))
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), name_cmp);
	return n;
}

int ctl_socket_path(const char *sock, const char *instance, char *buf,
		    size_t len)
{
	char *names[CTL_MAX_INSTANCES], list[512] = "", top[PATH_MAX];
	size_t n, used = 0;
	bool has_top;
	int rc = 0;

	if (sock) {
		snprintf(buf, len, "%s", sock);
		return 0;
	}
	if (instance) {
		if (!*instance || strchr(instance, '/') ||
		    !strcmp(instance, ".") || !strcmp(instance, "..")) {
			fprintf(stderr, "ibsmctl: --instance %s: expected an"
				" instance name (ibsm@NAME.service)\n",
				instance);
			return 2;
		}
		if (snprintf(buf, len, "%s/%s/ibsm.sock", run_dir(), instance)
		    >= (int)len) {
			fprintf(stderr, "ibsmctl: --instance %s: name too long\n",
				instance);
			return 2;
		}
		return 0;
	}
	snprintf(top, sizeof(top), "%s/ibsm.sock", run_dir());
	has_top = is_socket(top);
	n = find_instances(names);
	if (has_top && n == 0) {
		snprintf(buf, len, "%s", top);
		return 0;
	}
	if (!has_top && n == 1) {
		if (snprintf(buf, len, "%s/%s/ibsm.sock", run_dir(), names[0])
		    >= (int)len)
			rc = 1;
		free(names[0]);
		return rc;
	}
	if (!has_top && n == 0) {
		fprintf(stderr, "ibsmctl: no ibsm control socket: neither %s nor"
			" %s/INSTANCE/ibsm.sock exists (is ibsm running? a"
			" daemon with another --control-socket: --socket"
			" PATH)\n", top, run_dir());
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		int w = snprintf(list + used, sizeof(list) - used, "%s%s",
				 i ? ", " : "", names[i]);

		if (w > 0 && (size_t)w < sizeof(list) - used)
			used += (size_t)w;
		free(names[i]);
	}
	fprintf(stderr, "ibsmctl: %zu ibsm control sockets:%s%s%s%s; pick one"
		" with -i/--instance NAME (%s/NAME/ibsm.sock) or --socket"
		" PATH\n", n + has_top, n ? " instances " : "", list,
		has_top ? n ? " and " : " " : "", has_top ? top : "",
		run_dir());
	return 2;
}

static void ctl_usage(FILE *f)
{
	fprintf(f,
"usage: ibsmctl [--socket PATH | -i NAME] [--json] status\n"
"       ibsmctl [--socket PATH | -i NAME] resweep [heavy|light]\n"
"       ibsmctl [--socket PATH | -i NAME] reroute\n"
"       ibsmctl [--socket PATH | -i NAME] loglevel err|warn|info|debug|FLAGS\n"
"       ibsmctl [--socket PATH | -i NAME] reload\n"
"       ibsmctl [--socket PATH | -i NAME] [--json] dump-config\n"
"       ibsmctl [--socket PATH | -i NAME] [--json] sms\n"
"       ibsmctl [--socket PATH | -i NAME] [--json] routes report\n"
"       ibsmctl [--socket PATH | -i NAME] health [--json]\n"
"       ibsmctl [--socket PATH | -i NAME] events [--since T] [--json]\n"
"       ibsmctl [--socket PATH | -i NAME] topology save FILE\n"
"       ibsmctl [--socket PATH | -i NAME] port enable GUID|LID PORT\n"
"       ibsmctl [--socket PATH | -i NAME] counters [NODE|GUID|LID[:PORT]]\n"
"               [--errors] [--json]\n"
"  --socket PATH       ibsm's control socket\n"
"  -i, --instance NAME the socket of ibsm@NAME.service, %s/NAME/ibsm.sock\n"
"  Without either: %s, else the one instance's socket\n"
"  (several: named, none picked)\n"
"  FLAGS: OpenSM's -D log flags, 0-255 (0x03 errors+info: info; 0x01: warn;\n"
"  from 0x04: debug)\n"
"  health: exit status 0 healthy, 1 warnings, 2 critical (3: no answer)\n"
"  T: seconds since the epoch, a UTC time YYYY-MM-DDTHH:MM:SSZ, or a time\n"
"  ago: 30s, 10m, 2h, 1d\n", CTL_RUN_DIR, CTL_DEFAULT_SOCKET);
}

bool ctl_is_command(const char *word)
{
	static const char *const cmds[] = { "status", "resweep", "reroute",
					    "loglevel", "reload", "dump-config",
					    "sms", "routes", "counters", "health",
					    "events", "topology", "port" };

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(word, cmds[i]))
			return true;
	return false;
}

/*
 * topology save FILE: the daemon writes the file, so a relative FILE is
 * made absolute here (the directory must exist).  The request is
 * rebuilt in place.  0 or -1 (said why).
 */
static int absolute_file(char *req, size_t *used)
{
	char dir[PATH_MAX], file[PATH_MAX], *slash, *sp;
	const char *base;

	sp = strstr(req, " save ");
	if (!sp || strchr(sp + 6, ' ')) {
		fprintf(stderr, "ibsmctl: expected topology save FILE\n");
		return -1;
	}
	snprintf(file, sizeof(file), "%s", sp + 6);
	slash = strrchr(file, '/');
	base = slash ? slash + 1 : file;
	if (slash)
		*slash = '\0';
	if (!*base || !realpath(slash ? (*file ? file : "/") : ".", dir)) {
		fprintf(stderr, "ibsmctl: %s: %s\n", sp + 6, *base ?
			strerror(errno) : "expected a file name");
		return -1;
	}
	int w = snprintf(sp + 6, 512 - (size_t)(sp + 6 - req), "%s%s%s", dir,
			 strcmp(dir, "/") ? "/" : "", base);
	if (w < 0 || (size_t)w >= 512 - (size_t)(sp + 6 - req)) {
		fprintf(stderr, "ibsmctl: request too long\n");
		return -1;
	}
	*used = strlen(req);
	return 0;
}

/*
 * health: the answer's lines as they come (text or JSON); the exit
 * status from the terminator's "N critical, M warnings": 2 with any
 * critical finding, 1 with warnings, 0 healthy, 3 when there is no
 * answer (a monitoring plugin's UNKNOWN).
 */
static int health_answer(const char *path, const char *req)
{
	struct ctl_reply r;
	unsigned crit = 0, warn = 0;
	int rc;

	if (ctl_request(path, req, &r) < 0)
		return 3;
	if (!r.ok) {
		fprintf(stderr, "ibsmctl: %s\n", ctl_reply_text(&r));
		ctl_reply_free(&r);
		return 3;
	}
	for (size_t i = 0; i + 1 < r.n; i++)
		printf("%s\n", r.lines[i]);
	if (sscanf(ctl_reply_text(&r), "%u critical, %u warnings", &crit,
		   &warn) != 2)
		rc = 3;
	else
		rc = crit ? 2 : warn ? 1 : 0;
	ctl_reply_free(&r);
	return rc;
}

int ctl_main(int argc, char **argv)
{
	const char *sock = NULL, *instance = NULL;
	char req[512] = "", path[PATH_MAX];
	struct ctl_reply r;
	bool json = false;
	const char *cmd = NULL;
	size_t used = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--socket") && i + 1 < argc) {
			sock = argv[++i];
		} else if (!strncmp(a, "--socket=", 9)) {
			sock = a + 9;
		} else if ((!strcmp(a, "-i") || !strcmp(a, "--instance")) &&
			   i + 1 < argc) {
			instance = argv[++i];
		} else if (!strncmp(a, "--instance=", 11)) {
			instance = a + 11;
		} else if (!strcmp(a, "--json") || !strcmp(a, "-j")) {
			json = true;
		} else if (cmd && !strcmp(cmd, "counters") &&
			   !strcmp(a, "--errors")) {
			/* the daemon's word for it */
			if (used + 8 >= sizeof(req)) {
				fprintf(stderr, "ibsmctl: request too long\n");
				return 2;
			}
			strcat(req, " errors");
			used += 7;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			ctl_usage(stdout);
			return 0;
		} else if (cmd && (!strcmp(a, "--since") ||
				   !strncmp(a, "--since=", 8))) {
			const char *t = a[7] == '=' ? a + 8 : i + 1 < argc ?
					argv[++i] : NULL;
			int w = t ? snprintf(req + used, sizeof(req) - used,
					     " since %s", t) : -1;

			if (w < 0 || (size_t)w >= sizeof(req) - used) {
				ctl_usage(stderr);
				return 2;
			}
			used += (size_t)w;
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
	if (!strcmp(cmd, "topology") && absolute_file(req, &used) < 0)
		return 2;
	/* the daemon writes the report's JSON itself, a member per line */
	if (json && (!strcmp(cmd, "routes") || !strcmp(cmd, "counters") ||
		     !strcmp(cmd, "health") || !strcmp(cmd, "events"))) {
		if (used + 5 >= sizeof(req)) {
			fprintf(stderr, "ibsmctl: request too long\n");
			return 2;
		}
		strcat(req, " json");
	}
	if (sock && instance) {
		fprintf(stderr, "ibsmctl: --socket or --instance, not both\n");
		return 2;
	}
	int found = ctl_socket_path(sock, instance, path, sizeof(path));
	if (found)
		return found;
	if (!strcmp(cmd, "health"))
		return health_answer(path, req);
	if (ctl_request(path, req, &r) < 0)
		return 1;
	if (json && (!strcmp(cmd, "routes") || !strcmp(cmd, "counters") ||
		     !strcmp(cmd, "events")) && r.ok)
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
