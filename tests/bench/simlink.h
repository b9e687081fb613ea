/*
 * simlink.h - a MAD client that speaks ibsim's socket protocol directly.
 *
 * For benchmarks only.  Under the umad2sim preload every received MAD
 * crosses a receiver thread, a queue and a condition variable in the
 * client process before the client sees it; a client that reads the
 * simulator's socket itself costs the shared CPUs far less per query,
 * so a rate measured with it depends more on the SM and less on the
 * measuring instrument.  The SMs under test are unchanged: they still
 * run under umad2sim.  Works with ibsim 0.10 (Debian 12's ibsim-utils).
 */
#ifndef IBSM_BENCH_SIMLINK_H
#define IBSM_BENCH_SIMLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct simlink {
	int ctl_fd, data_fd;
	uint32_t clientid;
	bool connected;
	uint16_t lid, sm_lid;	/* of the attached port, from ibsim */
};

/* Attach to the simulator named by IBSIM_SOCKNAME at `node` (a node
 * name of the topology, as SIM_HOST).  0 or -1. */
int simlink_open(struct simlink *l, const char *node);
void simlink_close(struct simlink *l);

/* Send one MAD from QP1 to (dlid, dqp).  0 or -1. */
int simlink_send(struct simlink *l, uint16_t dlid, uint32_t dqp,
		 const void *mad, size_t len);

/* Receive one MAD into `mad`, waiting up to timeout_ms (0: only what is
 * queued).  Returns its length, -ETIMEDOUT, -EIO (a send that ibsim
 * reports failed), or another negative errno. */
int simlink_recv(struct simlink *l, void *mad, size_t len, int timeout_ms);

#endif
