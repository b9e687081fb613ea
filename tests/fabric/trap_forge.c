/*
 * trap_forge.c - a hostile host for fabric tests: sends SubnTrap SMPs
 * (Notice, 14.2.5.1) LID-routed to the SM, as any port can.
 *
 *   trap_forge [-n COUNT] [-r PER_SECOND] [-i ISSUER_LID] [-l LID]
 *              [-p PORT] TRAP[,TRAP...]
 *
 * COUNT traps (default 1000) at PER_SECOND (default 100), cycling through
 * the trap numbers given.  The IssuerLID is ISSUER_LID, or this port's
 * own LID when -i is not given; trap 144 always names the SM's LID unless
 * -i is given (a host claiming a change of someone else's port).  Traps
 * 129-131 (link integrity, buffer overrun, flow control watchdog) name
 * in their DataDetails the LID and port of the violation: LID (default
 * this port's own LID) and PORT (default 1).  Every trap of one number
 * carries the same Notice.  Prints
 * "sent N represses R" (R: Trap Represses that came back to this client;
 * under ibsim 0, as the simulated node's own SMA takes the SMPs addressed
 * to it: tests/unit/check_state.c checks the Represses instead) and
 * exits 0.
 *
 * Runs under the umad2sim preload like every client (SIM_HOST names the
 * host); the SM's LID is the port's SMLID.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <ev.h>

#include "mad/engine.h"
#include "mad/umad_io.h"
#include "mad/wire.h"

struct forge {
	struct ev_loop *loop;
	struct mad_engine *engine;
	struct mad_addr sm;
	uint16_t own_lid;
	long issuer;		/* -1: per trap, see the top */
	long data_lid;		/* -1: own LID (traps 129-131) */
	uint8_t data_port;
	unsigned traps[16], ntraps;
	unsigned count, sent, represses;
	ev_timer tick, drain;
};

static void send_one(struct forge *fg)
{
	uint8_t mad[MAD_SIZE] = { 0 };
	struct smp_lid *smp = (struct smp_lid *)mad;
	struct smp_notice *n = (struct smp_notice *)smp->data;
	unsigned num = fg->traps[fg->sent % fg->ntraps];
	uint16_t issuer = fg->issuer >= 0 ? (uint16_t)fg->issuer
			: num == 144 ? fg->sm.lid : fg->own_lid;

	smp->hdr.base_version = 1;
	smp->hdr.mgmt_class = MAD_CLASS_SMI;
	smp->hdr.class_version = 1;
	smp->hdr.method = MAD_METHOD_TRAP;
	smp->hdr.tid = htobe64(0x7a000000ull + fg->sent);
	smp->hdr.attr_id = htobe16(SMP_ATTR_NOTICE);
	n->generic_type = 0x80 | 1;		/* generic, urgent */
	n->producer[2] = num == 128 ? 2 : 1;	/* switch / CA */
	n->trap_num = htobe16((uint16_t)num);
	n->issuer_lid = htobe16(issuer);
	if (num >= 129 && num <= 131) {
		uint16_t lid = htobe16(fg->data_lid >= 0 ?
				       (uint16_t)fg->data_lid : fg->own_lid);

		memcpy(n->data_details + 2, &lid, sizeof(lid));
		n->data_details[4] = fg->data_port;
	}
	if (mad_engine_send_oneway(fg->engine, mad, MAD_SIZE, &fg->sm) == 0)
		fg->sent++;
}

static void on_drain(struct ev_loop *loop, ev_timer *w, int revents)
{
	ev_break(loop, EVBREAK_ALL);
}

static void on_tick(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct forge *fg = w->data;

	send_one(fg);
	if (fg->sent >= fg->count) {
		ev_timer_stop(loop, w);
		ev_timer_start(loop, &fg->drain);
	}
}

/* A Trap Repress (or anything else unmatched) coming back. */
static void on_unmatched(void *arg, const void *mad, size_t len,
			 const struct mad_addr *from)
{
	struct forge *fg = arg;
	const struct mad_hdr *h = mad;

	if (h->method == MAD_METHOD_TRAP_REPRESS)
		fg->represses++;
}

static void on_mad(void *arg, const void *mad, size_t len,
		   const struct mad_addr *from, int status)
{
	mad_engine_recv(((struct forge *)arg)->engine, mad, len, from, status);
}

static int usage(void)
{
	fprintf(stderr, "usage: trap_forge [-n COUNT] [-r PER_SECOND]"
		" [-i ISSUER_LID] [-l LID] [-p PORT] TRAP[,TRAP...]\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const uint8_t classes[] = { MAD_CLASS_SMI, MAD_CLASS_SMI_DR,
					   MAD_CLASS_SA };
	struct forge fg = { .count = 1000, .issuer = -1, .data_lid = -1,
			    .data_port = 1 };
	double rate = 100;
	struct umad_io *io;
	int c, rc;

	while ((c = getopt(argc, argv, "n:r:i:l:p:")) != -1) {
		switch (c) {
		case 'n': fg.count = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'r': rate = strtod(optarg, NULL); break;
		case 'i': fg.issuer = strtol(optarg, NULL, 0); break;
		case 'l': fg.data_lid = strtol(optarg, NULL, 0); break;
		case 'p': fg.data_port = (uint8_t)strtoul(optarg, NULL, 0); break;
		default: return usage();
		}
	}
	if (optind != argc - 1 || rate <= 0 || !fg.count)
		return usage();
	for (char *save = NULL, *t = strtok_r(argv[optind], ",", &save);
	     t && fg.ntraps < 16; t = strtok_r(NULL, ",", &save))
		fg.traps[fg.ntraps++] = (unsigned)strtoul(t, NULL, 0);
	if (!fg.ntraps)
		return usage();

	fg.loop = ev_default_loop(0);
	rc = umad_io_open(&io, fg.loop, 0, classes, sizeof(classes), false);
	if (rc < 0) {
		fprintf(stderr, "trap_forge: cannot open a port: %s\n",
			strerror(-rc));
		return 1;
	}
	fg.own_lid = umad_io_port(io)->lid;
	fg.sm = (struct mad_addr){ .lid = umad_io_port(io)->sm_lid, .qpn = 0 };
	if (!fg.sm.lid || !fg.own_lid) {
		fprintf(stderr, "trap_forge: no LID or SM LID yet\n");
		return 1;
	}
	struct mad_transport tr = umad_io_transport(io);
	struct mad_engine_opts eo = { .max_wire_smps = 4, .max_wire_gmps = 8,
					 .timeout_ms = 500, .retries = 0 };
	if (mad_engine_new(&fg.engine, fg.loop, &tr, &eo) < 0 ||
	    mad_engine_on_unmatched(fg.engine, MAD_CLASS_SMI, on_unmatched,
				    &fg) < 0 ||
	    umad_io_start(io, on_mad, &fg) < 0)
		return 1;
	ev_timer_init(&fg.tick, on_tick, 0., 1. / rate);
	fg.tick.data = &fg;
	ev_timer_init(&fg.drain, on_drain, 1., 0.);
	ev_timer_start(fg.loop, &fg.tick);
	ev_run(fg.loop, 0);
	printf("sent %u represses %u\n", fg.sent, fg.represses);
	umad_io_close(io);
	mad_engine_free(fg.engine);
	return 0;
}
