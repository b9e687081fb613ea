/*
 * program.h - turning the desired state into SMP Sets.
 *
 * Desired state (LIDs, port parameters, forwarding tables) is compared
 * with what the fabric holds - the PortInfo and SwitchInfo read by this
 * sweep, and for forwarding tables the image of what we last wrote - and
 * only the Sets that change something are sent.
 */
#ifndef IBSM_SM_PROGRAM_H
#define IBSM_SM_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "mad/engine.h"
#include "routing/routing.h"
#include "model/fabric.h"
#include "sm/sm.h"

/* ---- batches: many Sets in flight, one callback when all are answered */

struct smp_batch;
typedef void (*batch_done_cb)(struct smp_batch *b, void *arg);
/*
 * Producer: queue the next few Sets (e.g. those of one node) and return
 * true, or return false when there is nothing left.  The batch calls it
 * while fewer than BATCH_DEPTH Sets are pending, so a sweep over 100,000
 * ports never holds more than a few thousand requests in memory (about
 * 1.5 MB).  Enough to keep the engine's window full although a switch
 * takes only smps_per_node at a time and its LFT blocks come together
 * (200 of them on 13,000 LIDs): 256 held the window to one or two
 * switches, and the program stage of an 11,664-host bring-up took
 * 4.6 s instead of 4.2 s.
 */
typedef bool (*batch_more_cb)(struct smp_batch *b, void *arg);
#define BATCH_DEPTH	4096
/* Per-Set completion: data is the answered attribute (64 bytes) or NULL. */
typedef void (*batch_item_cb)(struct smp_batch *b, int32_t node, uint8_t port,
			      const uint8_t *data, void *arg);

/*
 * Optional, per Set given up on (no answer after its retries, a short
 * answer or an error status): which node, port and attribute, so the
 * sweep can name the node that does not acknowledge (sm/sweep.c).
 */
typedef void (*batch_fail_cb)(struct smp_batch *b, int32_t node, uint8_t port,
			      uint16_t attr, void *arg);

struct smp_batch {
	struct mad_engine *engine;
	unsigned pending;
	unsigned sent;
	unsigned failed;	/* Sets given up on, and Sets that could not be queued */
	unsigned unacked;	/* of those, Sets sent and never acknowledged */
	unsigned readbacks;	/* PortInfo Sets refused, found done by a Get */
	batch_fail_cb on_fail;	/* set after batch_init(), or NULL */
	/*
	 * Set after batch_init(), or NULL: the model whose node ids the
	 * batch's Sets name.  A node with smp_lid (and no smp_lid_failed)
	 * gets its SMPs LID-routed, with the engine's fallback to directed
	 * route; a lost one sets smp_lid_failed there.
	 */
	struct fabric *lidf;
	unsigned lid_sent;	/* SMPs submitted LID-routed */
	unsigned lid_fallbacks;	/* of those, lost and sent again by DR */
	bool     sealed;		/* producer exhausted: done may fire */
	bool     running;		/* inside the producer loop */
	batch_more_cb more;
	batch_done_cb done;
	void    *arg;
};

void batch_init(struct smp_batch *b, struct mad_engine *e, batch_done_cb done,
		void *arg);
/* Run the producer until it is exhausted; done runs when all is answered
 * (possibly from within this call). */
void batch_run(struct smp_batch *b, batch_more_cb more);
/* Send an SMP Set (or Get) of one attribute: DR, or LID-routed to a node
 * lidf allows.  Returns 0 or -errno. */
int  batch_smp(struct smp_batch *b, uint8_t method, const uint8_t *path,
	       unsigned hops, uint16_t attr, uint32_t mod, const void *data,
	       size_t len, int32_t node, uint8_t port, batch_item_cb cb,
	       void *cb_arg);

/* ---- forwarding table images, by switch GUID */

struct lft_images *lft_images_new(void);
void lft_images_free(struct lft_images *im);
/* Forget a switch (it was reset or someone else programmed it). */
void lft_images_forget(struct lft_images *im, uint64_t guid);
/* Top as last set by us, or -1 when unknown. */
int  lft_images_top(const struct lft_images *im, uint64_t guid);

/*
 * Queue the LFT blocks of switch `id` that differ from its image, and a
 * SwitchInfo Set when LinearFDBTop, LifeTimeValue or the port-state-change
 * bit need it.  Returns the number of Sets queued, or -errno.
 */
int program_switch(struct smp_batch *b, struct lft_images *im,
		   const struct sm_config *cfg, struct fabric *f, int32_t id,
		   const struct lft *lft);

/*
 * Build the PortInfo Set for one port: endport fields (LID, LMC, SM LID,
 * prefix, M_Key, timeout) on CA/router ports and switch port 0, link
 * fields (neighbour MTU, operational VLs, HOQ lifetime) on linked ports,
 * and `want_state` (PORT_STATE_NOP for no transition).  Returns true when
 * the port differs from `out` in anything that matters, i.e. a Set is due.
 */
bool port_desired(const struct sm_config *cfg, const struct fabric *f,
		  int32_t id, uint8_t pn, uint16_t sm_lid, unsigned want_state,
		  bool rereg, struct smp_port_info *out);

/*
 * Ports that do not store everything they are sent (ibsim ignores
 * SubnetTimeOut, some HCAs round values) would get the same Set on every
 * sweep.  The memo remembers, per port, what we last asked for and what
 * the port answered; when both are unchanged, the port is settled and no
 * Set is due.  The keys hold only the fields port_desired() manages.
 */
struct pi_key {
	uint64_t prefix, mkey;
	uint16_t lid, sm_lid, mkey_lease;
	uint8_t  lmc, sm_sl, timeout, mtu, vls, hoq, enforce, mkey_prot;
};
void pi_key_of(const struct smp_port_info *pi, struct pi_key *k);

struct port_memos *port_memos_new(void);
void port_memos_free(struct port_memos *m);
void port_memos_record(struct port_memos *m, uint64_t node_guid, uint8_t pn,
		       const struct pi_key *want, const struct pi_key *got);
bool port_memos_settled(const struct port_memos *m, uint64_t node_guid,
			uint8_t pn, const struct pi_key *want,
			const struct pi_key *now);

/*
 * Queue the P_KeyTable Sets port `pn` of node `id` needs to hold the
 * table the partitions give it (fab_port.want_pkeys), or without them the
 * default partition the way OpenSM 3.3.23 sets it up without a
 * partitions.conf (see sm/program/pkey.c), only for blocks that differ from the
 * table read by the discovery (every block when that read was
 * incomplete), never past the port's pkey_blocks.  The model's table is updated from each
 * answer.  Returns the number of Sets queued, or -errno.
 */
int program_pkeys(struct smp_batch *b, struct fabric *f, int32_t id,
		  unsigned pn);

/*
 * Block `blk` of the table program_pkeys() makes port `pn` hold (wire
 * order), for tools that predict it (ibsmctl partitions plan); false when
 * the SM leaves that port's table alone or blk is past its end.
 */
bool program_pkey_block(const struct fabric *f, int32_t id, unsigned pn,
			unsigned blk, __be16 want[PKEY_BLOCK_SIZE]);

/* ---- SLtoVLMappingTable (14.2.5.8): virtual layers onto VLs */

#define SL2VL_BYTES	8	/* 16 SLs, a VL per nibble, SL 0 high */

struct sl2vl_images *sl2vl_images_new(void);
void sl2vl_images_free(struct sl2vl_images *im);
/* Forget what a node's tables hold (it is new, or was reset): its
 * ports 0..max_port as input and output. */
void sl2vl_images_forget(struct sl2vl_images *im, uint64_t guid,
			 unsigned max_port);
/*
 * The table (node GUID, input port, output port) holds as far as we know
 * (a CA or router port's: input 0, output its port number) into tab.
 * false when it was never read or set, or its last Set went unanswered.
 */
bool sl2vl_image_lookup(const struct sl2vl_images *im, uint64_t guid,
			unsigned in, unsigned out, uint8_t tab[SL2VL_BYTES]);

/*
 * The table that puts layer i on VL i: SL i -> VL i for i < n_layers
 * and i < vls (the output port's data VLs), every other SL -> VL 0.
 */
void sl2vl_want(unsigned n_layers, unsigned vls, uint8_t tab[SL2VL_BYTES]);

/*
 * Queue what node `id` needs for the layers of `r` (n_layers > 1; with
 * no layers, or one, the tables are left as they are): on a CA or router
 * port its one table, on a switch one per linked output port and each
 * input port (0 and the linked ones), the attribute modifier naming
 * both (input << 8 | output).  Ports without IsSLMappingSupported (the
 * switch's port 0 for a switch) are skipped.  A table known to hold the
 * wanted map gets nothing; any other, known to differ or never seen, a
 * Set (not a Get first: the same SMP, and half the SMPs when the tables
 * differ).  `sets` (or NULL) counts the Sets queued.  Returns SMPs
 * queued, or -errno.
 */
int program_sl2vl(struct smp_batch *b, struct sl2vl_images *im,
		  const struct sm_config *cfg, struct fabric *f, int32_t id,
		  const struct routing_result *r, unsigned *sets);

/*
 * With `qos TRUE` and no layers: each port's class tables (qos_ca_*,
 * qos_swe_*, qos_rtr_*; config/qos_keys.h), the SL-to-VL table with
 * every VL but 15 bounded by the output port's OperationalVLs as OpenSM
 * does, per input/output pair on a switch (inputs 0..N).  Same memo and
 * return as program_sl2vl.
 */
int program_qos_sl2vl(struct smp_batch *b, struct sl2vl_images *im,
		      const struct sm_config *cfg, struct fabric *f,
		      int32_t id, unsigned *sets);

/* With `qos TRUE`: each linked port's VLArbitrationTable blocks, those
 * its VLArbitrationHigh/LowCap allow (32 entries a block), VLs masked to
 * its OperationalVLs, as OpenSM; same memo and return as above. */
int program_qos_vlarb(struct smp_batch *b, struct sl2vl_images *im,
		      const struct sm_config *cfg, struct fabric *f,
		      int32_t id, unsigned *sets);

/* The QoS class of node `id`'s port `pn`. */
enum qos_class qos_port_class(const struct fabric *f, int32_t id,
			      unsigned pn);

/* DR path to a node's port (CA ports have their own; else the node's). */
void port_path(const struct fabric *f, int32_t id, uint8_t pn,
	       const uint8_t **path, unsigned *hops);

#endif /* IBSM_SM_PROGRAM_H */
