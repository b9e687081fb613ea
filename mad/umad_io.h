/*
 * umad_io.h - one umad port: agents, a receive pump and the send path.
 *
 * The umad fd cannot go into the event loop: under ibsim's umad2sim
 * preload it is a fake descriptor that epoll does not know.  So one small
 * thread polls it, only while the loop has nothing left to read, and
 * wakes the loop through an ev_async; the loop reads the MADs itself
 * (umad_recv() without waiting) into the pump's queue (mad/pump.h, waker
 * mode).  The same design works unchanged on real hardware.  Opened with
 * umad_io_open_ibsim() instead, the port is ibsim's own protocol
 * (mad/sim_io.h): a real socket, read by the loop, and no thread.
 * An SM's sends (umad_io_open() with `serve`) leave from a thread of
 * their own through a bounded queue (mad/sendq.h): umad_send() may wait
 * for the device, the loop must not.
 */
#ifndef IBSM_MAD_UMAD_IO_H
#define IBSM_MAD_UMAD_IO_H

#include <stdbool.h>
#include <stdint.h>
#include <ev.h>

#include "mad/engine.h"
#include "mad/pump.h"

struct umad_io;

/* What we learnt about the local port when opening it (host order). */
struct umad_port_info {
	char     ca[64];
	int      port;
	uint64_t port_guid;
	uint64_t node_guid;
	uint16_t lid;
	uint16_t sm_lid;
	int      state;		/* PortState */
	int      phys_state;	/* PortPhysicalState */
};

/* Called on the loop thread for every received MAD. */
typedef pump_deliver_cb umad_io_recv_cb;

/*
 * Open the port with GUID `guid`, or when guid is 0 the first port whose
 * physical link is up (OpenSM's choice).  `classes` lists the management
 * classes to register (e.g. SMI, SMI DR, SA); `serve` asks for the
 * unsolicited methods as well (an SM receives traps and SMInfo requests;
 * a client tool does not).  Returns 0 or -errno.
 */
int umad_io_open(struct umad_io **out, struct ev_loop *loop, uint64_t guid,
		 const uint8_t *classes, unsigned nclasses, bool serve);
/*
 * The same port reached without libibumad: ibsim's own client protocol
 * (mad/sim_io.h), node $SIM_HOST; the loop then reads the simulator's
 * socket itself (no receive thread).  Agents need no registration: the
 * simulator hands an SM client every request for the port.  0 or -errno,
 * *why naming the step that failed.
 */
int umad_io_open_ibsim(struct umad_io **out, struct ev_loop *loop,
		       const char **why);
/*
 * Capacity of the receive queue in MADs (0: RXQ_DEFAULT_CAP); call before
 * umad_io_start().  Drop policy and fairness: mad/rxq.h.
 */
void umad_io_set_queue_len(struct umad_io *io, unsigned n);
/*
 * The LMC the SM gives end ports: the receive queue then counts a port's
 * whole LID range as one source (mad/rxq.h).  Before or after start.
 */
void umad_io_set_source_lmc(struct umad_io *io, unsigned lmc);
/*
 * The engine's on-wire TID counters (mad_engine_wire_tids()): SMP answers
 * to no request on the wire are dropped as they are queued (mad/rxq.h).
 * The engine must outlive the pump (umad_io_close() first).
 */
void umad_io_set_tid_filter(struct umad_io *io, const _Atomic uint16_t *wire_tids);
/* Start receiving (the pump, mad/pump.h); MADs go to cb(arg, ...). */
int umad_io_start(struct umad_io *io, umad_io_recv_cb cb, void *arg);
/* After umad_io_start(): tell cb when receiving fails for good or works
 * again (mad/pump.h). */
void umad_io_on_error(struct umad_io *io, pump_error_cb cb, void *arg);
/* Receive counters: queued, dropped, errors.  -ENOTCONN before start. */
int umad_io_stats(struct umad_io *io, struct pump_stats *out);
/* --transport ibsim: the send side's counters (mad/sim_io.h); -ENOTCONN
 * on the umad transport. */
struct sim_send_stats;
int umad_io_sim_stats(struct umad_io *io, struct sim_send_stats *out);
/* An SM's send queue (mad/sendq.h): its counters; -ENOTCONN when the
 * port has none (a client, or --transport ibsim). */
struct sendq_stats;
int umad_io_send_stats(struct umad_io *io, struct sendq_stats *out);
/*
 * Stop the pump and close the port.  Under ibsim's umad2sim preload the
 * port's agents stay registered until the process exits: the preload
 * crashes on a MAD for an agent that is gone (umad_io.c).  Call it on the
 * way out, not to open the port again.
 */
void umad_io_close(struct umad_io *io);
/*
 * Claim (or drop) the SM role on the port: holding the issm device open
 * sets PortInfo:CapabilityMask.IsSM, which is how the fabric (and ibsim)
 * knows where to send traps.  Returns 0 or -errno.
 */
int umad_io_set_sm(struct umad_io *io, bool on);

const struct umad_port_info *umad_io_port(const struct umad_io *io);
/* A transport for mad_engine_new() that sends through this port. */
struct mad_transport umad_io_transport(struct umad_io *io);

/* List every local port into `out` (at most max); returns the count. */
int umad_io_list_ports(struct umad_port_info *out, int max);

#endif /* IBSM_MAD_UMAD_IO_H */
