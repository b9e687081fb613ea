/*
 * check_notify_log.c - the notification transport (sm/notify_send.h) and
 * the log's events (sm/log.h, log_event/log_field).
 *
 * The transport: a receiver whose queue is full (net.unix.max_dgram_qlen
 * datagrams unread) makes the send in progress wait; notify_send() still
 * returns at once, and what is handed over meanwhile is merged by key.
 * With libsystemd (sm/notify_sd.c), once the receiver reads, the message
 * in progress arrives, then one datagram with the merged lines.  Without
 * it (sm/notify_sock.c) the messages that did not fit are lost.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "sm/log.h"
#include "sm/notify_send.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A receiver bound at a fresh path; its queue filled by `filler` sends. */
static int bind_receiver(char *path, size_t len, struct sockaddr_un *a)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	snprintf(path, len, "/tmp/check_notify.%d.sock", (int)getpid());
	unlink(path);
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "%s", path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)a, sizeof(*a)), 0);
	return fd;
}

/* Fill the receiver's queue from another socket; the count sent. */
static int fill(const struct sockaddr_un *a)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	int n = 0;

	while (n < 1000 && sendto(fd, "FILL=1", 6, MSG_DONTWAIT,
				  (const struct sockaddr *)a, sizeof(*a)) == 6)
		n++;
	close(fd);
	return n;
}

/* The next datagram within 2 s, NUL-terminated; its length or -1. */
static int recv_one(int fd, char *buf, size_t len)
{
	struct timeval tv = { .tv_sec = 2 };
	ssize_t n;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recv(fd, buf, len - 1, 0);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return (int)n;
}

START_TEST(test_stalled_receiver)
{
	char path[108], buf[1024];
	struct sockaddr_un a;
	unsigned long failed;
	int rfd = bind_receiver(path, sizeof(path), &a), filled, err, i;
	double stalled = 0, t0;

	/* sd_notify() reads the socket's name from the environment. */
	setenv("NOTIFY_SOCKET", path, 1);
	ck_assert_int_eq(notify_send_open(path), 0);
	filled = fill(&a);
	ck_assert_int_gt(filled, 0);
	t0 = now_s();
	ck_assert_int_le(notify_send("STATUS=one"), 0);
#ifdef HAVE_LIBSYSTEMD
	/* The thread took "STATUS=one" and waits on the full queue. */
	for (i = 0; i < 200 && stalled <= 0; i++) {
		usleep(10000);
		notify_send_poll(&stalled, &failed, &err);
	}
	ck_assert_msg(stalled > 0, "the send in progress does not wait");
#endif
	for (i = 0; i < 50; i++)
		ck_assert_int_le(notify_send("WATCHDOG=1"), 0);
	ck_assert_int_le(notify_send("STATUS=two\nREADY=1"), 0);
	ck_assert_int_le(notify_send("STATUS=three"), 0);
	/* 53 messages to a full socket, none waited for. */
	ck_assert_msg(now_s() - t0 < 1.5, "notify_send waited %.3f s",
		      now_s() - t0);
	for (i = 0; i < filled; i++) {
		ck_assert_int_eq(recv_one(rfd, buf, sizeof(buf)), 6);
		ck_assert_str_eq(buf, "FILL=1");
	}
#ifdef HAVE_LIBSYSTEMD
	ck_assert_int_gt(recv_one(rfd, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "STATUS=one");
	ck_assert_int_gt(recv_one(rfd, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "WATCHDOG=1\nSTATUS=three\nREADY=1");
	notify_send_poll(&stalled, &failed, &err);
	ck_assert(stalled == 0);
	ck_assert_uint_eq(failed, 0);
#else
	/* Non-blocking: what did not fit was lost, and said so. */
	notify_send_poll(&stalled, &failed, &err);
	ck_assert_uint_gt(failed, 0);
	ck_assert_int_eq(err, EAGAIN);
#endif
	/* At exit: what is queued goes out. */
	ck_assert_int_le(notify_send("STOPPING=1"), 0);
	notify_send_close(1.0);
	ck_assert_int_gt(recv_one(rfd, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "STOPPING=1");
	close(rfd);
	unlink(path);
}
END_TEST

START_TEST(test_log_event_text)
{
	char path[] = "/tmp/check_notify_log.XXXXXX", line[2048];
	struct log_fields lf = { 0 };
	char big[600];
	int fd = mkstemp(path);
	FILE *fp;

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(log_open(path, LOG_LVL_INFO), 0);
	for (int i = 0; i < LOG_FIELDS_MAX + 3; i++)
		log_field(&lf, "F%d=%d", i, i);
	ck_assert_uint_eq(lf.n, LOG_FIELDS_MAX);
	lf.n = 0;
	log_field(&lf, "NO_EQUALS");
	ck_assert_uint_eq(lf.n, 0);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_field(&lf, "PATH=%s", big);
	ck_assert_uint_eq(lf.n, 1);
	ck_assert_uint_eq(strlen(lf.kv[0]), sizeof(lf.kv[0]) - 1);
	log_field(&lf, "NODE_GUID=0x%016x", 5);
	log_event(LOG_LVL_ERR, 103, &lf, "duplicate node GUID %s", "g");
	log_event(LOG_LVL_INFO, 330, &lf, "SUBNET UP");
	log_event(LOG_LVL_DEBUG, 331, &lf, "not at this level");
	log_close();

	fp = fopen(path, "r");
	ck_assert_ptr_nonnull(fp);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
	ck_assert_ptr_nonnull(strstr(line, "[ERR] ERR 0103: duplicate node GUID g\n"));
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), fp));
	ck_assert_ptr_nonnull(strstr(line, "[INFO] SUBNET UP\n"));
	ck_assert_ptr_null(fgets(line, sizeof(line), fp));
	fclose(fp);
	unlink(path);
}
END_TEST

static Suite *notify_log_suite(void)
{
	Suite *s = suite_create("notify_log");
	TCase *tc = tcase_create("notify_log");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_stalled_receiver);
	tcase_add_test(tc, test_log_event_text);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(notify_log_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
