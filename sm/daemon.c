/*
 * daemon.c - going into the background (see daemon.h).
 *
 * One fork and setsid(), as daemon(3): the parent stays until the child
 * reports on a pipe, so `ibsm -B` returns only once the daemon runs (its
 * pid file written, systemd's Type=forking satisfied), or with the
 * child's own exit status when it stops on the way (port not found,
 * partitions file refused...).  Unlike daemon(3) the working directory
 * stays: relative paths of the command line (-F, the log, the cache)
 * keep naming the same files on a SIGHUP or SIGUSR1, as with OpenSM.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sm/daemon.h"

/* The parent's side: a byte from the child (it runs), or end of file
 * (it exited, or exec'd: never here) and then its status. */
static void __attribute__((noreturn)) parent_wait(int fd, pid_t child)
{
	char c;
	ssize_t n;
	int status;

	do
		n = read(fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		_exit(0);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			_exit(1);
	if (WIFEXITED(status))
		_exit(WEXITSTATUS(status) ? WEXITSTATUS(status) : 1);
	_exit(128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0));
}

int daemon_fork(int *ready_fd)
{
	int p[2];
	pid_t pid;

	*ready_fd = -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int rc = -errno;

		close(p[0]);
		close(p[1]);
		return rc;
	}
	if (pid > 0) {
		close(p[1]);
		parent_wait(p[0], pid);
	}
	close(p[0]);
	(void)setsid();
	*ready_fd = p[1];
	return 0;
}

void daemon_ready(int *ready_fd, bool keep_out)
{
	int null;

	if (*ready_fd < 0)
		return;
	null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		fflush(stdout);
		fflush(stderr);
		if (!keep_out || isatty(STDOUT_FILENO))
			dup2(null, STDOUT_FILENO);
		if (!keep_out || isatty(STDERR_FILENO))
			dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	/* after the redirection: once the parent is gone, nothing of ours
	 * writes to its terminal any more */
	while (write(*ready_fd, "", 1) < 0 && errno == EINTR)
		;
	close(*ready_fd);
	*ready_fd = -1;
}
