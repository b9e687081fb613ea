/*
 * sim_io.h - ibsim's client protocol spoken directly (no umad2sim).
 *
 * Under the simulator, libibumad programs reach ibsim through the
 * libumad2sim.so preload, whose descriptors are fake (epoll cannot watch
 * them) and whose own receiver thread copies every MAD once more: the SM
 * then needs a thread to wait on the fake descriptor (mad/pump.h, waker
 * mode), and each MAD crosses umad2sim's thread and, when the loop was
 * idle, that one before the loop sees it.  On hardware the umad device is a kernel
 * descriptor the loop could watch itself.  This client gives ibsm that
 * shape under ibsim: it attaches to the simulator as umad2sim would (a
 * control socket and a datagram socket, the simulator's own protocol) and
 * the loop reads the datagram socket through an ev_io watcher.
 *
 * Selected with `--transport ibsim` (opensm.conf key `transport`); the
 * node is SIM_HOST and the socket names IBSIM_SOCKNAME, as for umad2sim.
 * Only ibsim's local (Unix socket) mode is spoken.  It is a backend for
 * tests and benchmarks: the default, `umad`, is what runs on hardware.
 */
#ifndef IBSM_MAD_SIM_IO_H
#define IBSM_MAD_SIM_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ev.h>

#include "mad/engine.h"

struct sim_conn;

/* What the simulator says about the port (host order). */
struct sim_port_facts {
	uint64_t node_guid;
	uint64_t port_guid;
	int	 port;
	uint16_t lid;
	uint16_t sm_lid;
	int	 state;
	int	 phys_state;
	char	 node[32];	/* the node ibsim attached us to */
};

/*
 * Attach to ibsim at node `host` (NULL: the simulator's default node).
 * Returns 0 or -errno; on failure *why names the step that failed.
 */
int  sim_conn_open(struct sim_conn **out, const char *host,
		   struct sim_port_facts *facts, const char **why);
/* Claim (or drop) the SM role: ibsim then sends us requests to QP0/QP1
 * and sets CapabilityMask.IsSM on the port.  0 or -errno. */
int  sim_conn_set_sm(struct sim_conn *c, bool on);
/* The datagram socket, for an ev_io watcher (non-blocking). */
int  sim_conn_fd(const struct sim_conn *c);
/*
 * A pump_recv_fn: one MAD if one is queued, else -EAGAIN (timeout_ms > 0
 * waits that long with poll()).  Short or oversized datagrams are -EPROTO.
 */
int  sim_conn_recv(void *ctx, void *mad, size_t *len, struct mad_addr *from,
		   int *status, int timeout_ms);
/* The mad_transport send function.  0 or -errno. */
int  sim_conn_send(void *ctx, const void *mad, size_t len,
		   const struct mad_addr *addr, int timeout_ms);
/*
 * Sends never wait on the loop: the simulator's socket holds only
 * net.unix.max_dgram_qlen datagrams (10 by default) and the simulator
 * blocks writing to a full client socket, so a loop that waited to send
 * would stop reading and deadlock with it.  With a loop, a datagram the
 * socket refuses waits in a queue (4,096, in order) and an ev_io watcher
 * sends it when the socket is writable; a full queue refuses (-ENOBUFS).
 * Without one (a client tool) a send waits up to about 100 ms.
 */
void sim_conn_use_loop(struct sim_conn *c, struct ev_loop *loop);

struct sim_send_stats {
	uint64_t sent;		/* accepted (sent now or queued) */
	uint64_t deferred;	/* of them queued first */
	uint64_t refused;	/* queue full */
	uint64_t failed;	/* socket errors */
	unsigned peak;		/* most queued at once */
	unsigned waiting;	/* queued now */
};
void sim_conn_send_stats(const struct sim_conn *c, struct sim_send_stats *out);

/* Detach from the simulator and close both sockets. */
void sim_conn_close(struct sim_conn *c);

/*
 * Wire format helpers, exposed for the unit tests: turn a datagram into a
 * MAD (0 or -EPROTO) and a MAD into a datagram (its size, or -EINVAL).
 */
int  sim_decode(const void *dgram, size_t n, void *mad, size_t *len,
		struct mad_addr *from, int *status);
long sim_encode(void *dgram, size_t room, const void *mad, size_t len,
		const struct mad_addr *to, uint32_t sqp);
size_t sim_dgram_size(void);

#endif /* IBSM_MAD_SIM_IO_H */
