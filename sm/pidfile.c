/*
 * pidfile.c - the daemon's locked pid file (see pidfile.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sm/pidfile.h"

/* The pid a pid file names, 0 when it names none. */
static pid_t read_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long v;
	char *end;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	v = strtol(buf, &end, 10);
	return v > 0 && (*end == '\n' || *end == '\0') ? (pid_t)v : 0;
}

int pidfile_open(struct pidfile *p, const char *path, pid_t *holder)
{
	int fd, rc;

	p->fd = -1;
	p->path = path;
	*holder = 0;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		rc = -errno;
		if (rc == -EWOULDBLOCK)
			*holder = read_pid(fd);
		close(fd);
		return rc;
	}
	p->fd = fd;
	return 0;
}

int pidfile_write(struct pidfile *p)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());

	if (p->fd < 0)
		return -EBADF;
	if (ftruncate(p->fd, 0) < 0)
		return -errno;
	if (pwrite(p->fd, buf, (size_t)n, 0) != n)
		return errno ? -errno : -EIO;
	return fsync(p->fd) < 0 ? -errno : 0;
}

void pidfile_close(struct pidfile *p)
{
	struct stat mine, now;

	if (p->fd < 0)
		return;
	/* Still the file we locked?  Then it is ours to remove, before the
	 * lock goes (another daemon waiting for it then creates its own). */
	if (fstat(p->fd, &mine) == 0 && lstat(p->path, &now) == 0 &&
	    mine.st_dev == now.st_dev && mine.st_ino == now.st_ino)
		unlink(p->path);
	close(p->fd);
	p->fd = -1;
}
