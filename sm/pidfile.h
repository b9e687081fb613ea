/*
 * pidfile.h - the daemon's pid file (-J, key pidfile), held under an
 * exclusive lock for the daemon's whole life.
 *
 * pidfile_open() creates or opens the file and takes flock(LOCK_EX) on it
 * without waiting: a second daemon given the same file finds it held and
 * does not start, instead of overwriting the first one's pid.  The pid is
 * written later, in place, by pidfile_write() (a renamed temp file would
 * be another inode than the one locked).  pidfile_close() removes the file
 * only when the path still names the inode this daemon locked, so a file
 * someone put in its place is left alone.
 */
#ifndef IBSM_SM_PIDFILE_H
#define IBSM_SM_PIDFILE_H

#include <sys/types.h>

struct pidfile {
	int fd;			/* -1: none */
	const char *path;
};

/*
 * 0, or -EWOULDBLOCK with *holder set to the pid in the file (0 when it
 * names none) when another process holds the lock, or another -errno.
 */
int pidfile_open(struct pidfile *p, const char *path, pid_t *holder);
/* Write getpid() into the locked file: 0 or -errno. */
int pidfile_write(struct pidfile *p);
/* Unlink (if still ours) and release. */
void pidfile_close(struct pidfile *p);

#endif /* IBSM_SM_PIDFILE_H */
