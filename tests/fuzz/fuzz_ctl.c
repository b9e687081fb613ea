/*
 * fuzz_ctl.c - libFuzzer target: the control socket's request handling
 * (sm/ctl/) as the socket code drives it.
 *
 * The input is a byte stream from one client: it is cut into request
 * lines with ctl_line() exactly as a connection's buffer is (at most
 * CTL_MAX_LINE bytes buffered; a line without '\n' within them ends the
 * stream as the daemon closes such a connection), and each line is
 * parsed and, when valid, carried out on an SM that is not active (no
 * fabric, no port: commands that would sweep answer ERR).  Checked
 * besides the sanitizers: ctl_line never returns more than it was given
 * nor a line longer than CTL_MAX_LINE; ctl_parse fails exactly on the
 * lines its grammar refuses (a byte outside 0x20-0x7e other than tab
 * always fails); every answer is lines ending in one terminator, no data
 * line passes for one, and no byte below 0x20 but '\n' is in it.
 */
#include "config.h"

#include <ev.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/conf.h"
#include "sm/ctl/ctl.h"
#include "sm/sm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_answer(const struct ctl_answer *a)
{
	const char *p = a->buf, *end = a->buf + a->len;
	unsigned finals = 0;

	if (!a->len || a->buf[a->len - 1] != '\n')
		abort();
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl || finals)
			abort();
		if (!strncmp(p, "ERR", 3) ||
		    (!strncmp(p, "OK", 2) && (p[2] == '\n' || p[2] == ' ')))
			finals++;
		for (const char *c = p; c < nl; c++)
			if ((unsigned char)*c < 0x20)
				abort();
		p = nl + 1;
	}
	if (finals != 1)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sm sm;
	static struct cfg conf;
	static bool ready;
	char buf[CTL_MAX_LINE];
	size_t off = 0, have = 0;

	if (!ready) {
		fabric_init(&sm.fabric);
		cfg_init(&conf);
		/* the daemon always has its loop (sms reads its clock) */
		sm.loop = ev_loop_new(EVFLAG_AUTO);
		if (!sm.loop)
			abort();
		sm.conf = &conf;
		ready = true;
	}
	sm.state = SM_NOTACTIVE;
	sm.cfg.log_level = LOG_LVL_ERR;
	log_set_level(LOG_LVL_ERR);
	for (;;) {
		size_t take = size - off < sizeof(buf) - have ?
			      size - off : sizeof(buf) - have;
		size_t ll = 0;
		long used;
		struct ctl_request req;
		struct ctl_answer a = { 0 };
		char err[200];
		int prc;

		memcpy(buf + have, data + off, take);
		have += take;
		off += take;
		used = ctl_line(buf, have, &ll);
		if (used == -E2BIG) {
			if (have < CTL_MAX_LINE)
				abort();
			break;
		}
		if (used == 0)
			break;		/* a half line: the client is gone */
		if (used < 0 || (size_t)used > have || ll >= (size_t)used ||
		    (size_t)used > CTL_MAX_LINE || buf[used - 1] != '\n')
			abort();
		prc = ctl_parse(buf, ll, &req, err, sizeof(err));
		for (size_t i = 0; i < ll; i++) {
			unsigned char c = (unsigned char)buf[i];

			if (((c < 0x20 && c != '\t') || c >= 0x7f) && prc == 0)
				abort();
		}
		if (prc < 0 && (prc != -EINVAL || !*err))
			abort();
		(void)ctl_handle_line(&sm, buf, ll, &a);
		check_answer(&a);
		ctl_answer_free(&a);
		log_set_level(LOG_LVL_ERR);
		memmove(buf, buf + used, have - (size_t)used);
		have -= (size_t)used;
	}
	return 0;
}
