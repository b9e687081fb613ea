/*
 * runner.c - start external programs, or only say what would be run.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/ibhost/runner.h"

/* Quote only what a shell would split or expand. */
static bool needs_quotes(const char *s)
{
	if (!*s)
		return true;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_-./:=@%+,", *s))
			return true;
	return false;
}

void runner_format(struct sbuf *b, const char *const argv[])
{
	for (size_t i = 0; argv[i]; i++) {
		const char *s = argv[i];

		if (i)
			sb_putc(b, ' ');
		if (!needs_quotes(s)) {
			sb_add(b, s);
			continue;
		}
		sb_putc(b, '\'');
		for (; *s; s++) {
			if (*s == '\'')
				sb_add(b, "'\\''");
			else
				sb_putc(b, *s);
		}
		sb_putc(b, '\'');
	}
}

int runner_run(struct runner *r, const char *const argv[])
{
	struct sbuf line = { 0 };
	int status, rc;
	pid_t pid;

	runner_format(&line, argv);
	if (r->out)
		fprintf(r->out, "%s: %s\n", r->dry_run ? "would run" : "run",
			sb_str(&line));
	sb_free(&line);
	if (r->dry_run)
		return 0;
	if (r->hook)
		return r->hook(r->ctx, argv);

	if (r->out)
		fflush(r->out);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	while ((rc = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (rc < 0)
		return -errno;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
