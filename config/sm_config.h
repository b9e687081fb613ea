/*
 * sm_config.h - the daemon's configuration: what config/ fills from its
 * one table of keys (config/keys.c: opensm.conf keys, ibsm's own, the
 * limits) for the daemon (sm/) to run by.  Options are named after their
 * opensm.conf keys where OpenSM has one.
 */
#ifndef IBSM_CONFIG_SM_CONFIG_H
#define IBSM_CONFIG_SM_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#include "config/log_level.h"
#include "config/qos_keys.h"

/*
 * PortInfo:PartitionEnforcementInbound/Outbound on switch external ports
 * facing an end port with partitions (opensm.conf part_enforce).  BOTH is
 * 0 so that a zeroed config means OpenSM's default.
 */
enum sm_part_enforce {
	SM_PART_ENFORCE_BOTH = 0,
	SM_PART_ENFORCE_IN,
	SM_PART_ENFORCE_OUT,
	SM_PART_ENFORCE_OFF,
};

/* How MADs reach the fabric (opensm.conf transport, ibsm's own key). */
enum sm_transport {
	SM_TRANSPORT_UMAD = 0,	/* libibumad: hardware, or ibsim's umad2sim */
	SM_TRANSPORT_IBSIM,	/* ibsim's protocol (mad/sim_io.h) */
};

/* The error counters of health/counters.h (PC_N_ERRORS) and PortXmitWait. */
#define SM_HEALTH_THRESHOLDS	13

struct sm_config {
	uint64_t guid;			/* guid: port to bind (0: first up) */
	bool     once;			/* -o */
	bool     daemon;		/* -B, daemon: into the background */
	const char *log_file;		/* log_file */
	unsigned log_max_size;		/* MB; the log rotates past it (0: never) */
	bool     accum_log_file;	/* FALSE: the log file starts empty */
	const char *log_prefix;		/* log_prefix: before every message */
	enum log_level log_level;
	unsigned transaction_timeout;	/* ms */
	unsigned transaction_retries;
	unsigned max_wire_smps;		/* SMP window: start and floor */
	unsigned smp_window_max;	/* its ceiling */
	unsigned smps_per_node;		/* SMPs on the wire to one node */
	enum sm_transport transport;
	bool     no_incremental_reroute; /* incremental_reroute FALSE */
	const char *dump_fabric;	/* --dump-fabric FILE */
	uint8_t  sm_priority;		/* 0-15 */
	bool     ignore_other_sm;	/* never ask other SMs' SMInfo */
	bool     force_heavy_sweep;	/* every sweep interval: a heavy sweep */
	bool     sweep_on_trap;		/* FALSE: traps 128/144 start no sweep */
	bool     sm_inactive;		/* -I: start NOTACTIVE, until told */
	/* out of STANDBY: the guid2lid cache before the LIDs ports hold */
	bool     honor_guid2lid_file;
	bool     disable_multicast;	/* no MFTs; the SA says no UD multicast */
	bool     use_mfttop;		/* set SwitchInfo:MulticastFDBTop */
	/* FALSE: the SA takes joins and IPoIB groups without comparing their
	 * parameters with the group's / the broadcast group's */
	bool     mcgroup_join_validation;
	bool     ipoib_mcgroup_creation_validation;
	/* rate codes above 18 (300 Gb/s) reduced for older clients */
	bool     use_original_extended_sa_rates_only;
	uint64_t sm_key;		/* -k/sm_key: SMInfo (14.4.1) */
	uint64_t sa_key;		/* sa_key: a trusted SA request's
					 * SM_Key (15.2.2.1) */
	/* M_Key protection (14.2.4, sm/mkey.h); m_key 0: none */
	uint64_t m_key;
	unsigned m_key_lease_period;	/* s, 0: the lease never expires */
	uint8_t  m_key_protection_level; /* 0-3 */
	bool     m_key_per_port;	/* a key per port, from m_key */
	bool     m_key_lookup;		/* send the key a port is known to
					 * hold (guid2mkey), not only ours */
	unsigned sminfo_polling_timeout; /* ms: standby polls the master */
	unsigned polling_retry_number;	/* failed polls: master is dead */
	uint8_t  lmc;			/* 0-7 */
	bool     lmc_esp0;		/* enhanced switch port 0 gets the LMC */
	bool     reassign_lids;
	bool     exit_on_fatal;		/* stop on OpenSM's fatal conditions */
	bool     babbling_port_policy;	/* disable a port that repeats a trap */
	unsigned sweep_interval;	/* s, 0 = no light sweeps */
	const char *routing_engine;	/* comma list; NULL = auto */
	bool     qos;			/* program the QoS tables */
	const char *qos_policy_file;	/* NULL: none (sm/qos_policy.c) */
	/* the qos_* keys, per class (config/qos_keys.h; QOS_BASE: qos_*) */
	struct qos_key_set qos_keys[QOS_N_CLASSES];
	const char *root_guid_file;	/* OpenSM GUID files for the engines */
	const char *cn_guid_file;	/* (sm/route.c reads them per routing) */
	const char *guid_routing_order_file;	/* routing/order.h: read */
	const char *port_search_ordering_file;	/* per routing, as above */
	const char *hop_weights_file;		/* minhop's port weights */
	const char *port_prof_ignore_file;	/* ports minhop does not count */
	bool     port_profile_switch_nodes;	/* minhop counts switch LIDs */
	const char *io_guid_file;	/* ftree's I/O nodes, and the reverse */
	unsigned max_reverse_hops;	/* hops their paths may take */
	bool     connect_roots;		/* updn: root LIDs by shortest paths */
	const char *ids_guid_file;	/* updn: switch ids for GUIDs */
	uint8_t  nue_max_num_vls;	/* nue's VLs, 0: as the fabric allows */
	const char *lfts_file;		/* the file engine's LFT dump */
	const char *torus_config;	/* torus-2QoS.conf for the torus engine */
	char     cache_dir[512];	/* guid2lid lives here */
	char     dump_dir[512];		/* opensm-subnet.lst, opensm-lfts.dump */
	uint64_t subnet_prefix;
	uint8_t  subnet_timeout;
	uint8_t  packet_life_time;
	uint8_t  head_of_queue_lifetime;
	uint8_t  leaf_head_of_queue_lifetime;
	uint8_t  max_op_vls;		/* PortInfo:OperationalVLs encoding */
	/* PortInfo fields as OpenSM's link manager sets them (sm/program/
	 * port.c): VLStallCount of switch ports towards switches and towards
	 * end ports, LinkWidth/SpeedEnabled and LinkSpeedExtEnabled (0: no
	 * change; 255/15/31: all the port supports), LocalPhyErrors and
	 * OverrunErrors thresholds */
	uint8_t  vl_stall_count, leaf_vl_stall_count;
	uint8_t  force_link_width, force_link_speed, force_link_speed_ext;
	uint8_t  local_phy_errors_threshold, overrun_errors_threshold;
	uint8_t  sm_sl;			/* PortInfo:MasterSMSL of end ports */
	bool     no_clients_rereg;	/* never set ClientReregister */
	bool     summary;		/* print a bring-up summary on stdout */
	bool     dump_lfts;		/* write opensm-lfts.dump (-D 0x40) */
	const char *partition_config;	/* -P/--Pconfig: partitions.conf */
	/* SA limits (sm/sa/sa.c, sm/sa/service.c); 0: the built-in default */
	unsigned sa_max_transfers;	/* RMPP answers in flight */
	unsigned sa_transfers_per_port;
	unsigned sa_max_services;	/* ServiceRecords */
	unsigned sa_services_per_port;
	unsigned sa_max_lease;		/* s; 0xffffffff: infinite allowed */
	unsigned sa_max_subscriptions;	/* InformInfo */
	unsigned sa_subscriptions_per_port;
	unsigned sa_report_queue;	/* Reports waiting per subscriber */
	unsigned sa_report_failures;	/* unanswered in a row: unsubscribed */
	uint64_t sa_work_budget;	/* work units per SA request (sm/sa/sa.h) */
	/* Limits (config/limits.h); 0: the built-in default there */
	unsigned trap_sources;		/* SM_TRAP_SOURCES */
	unsigned trap_burst;		/* SM_TRAP_BURST */
	double   trap_rate;		/* SM_TRAP_RATE, per second */
	unsigned trap_holdoff_ms;	/* SM_TRAP_HOLDOFF */
	double   trap_sweep_interval;	/* SM_TRAP_SWEEP_INTERVAL, s */
	unsigned log_burst;		/* LOG_RL_BURST */
	double   log_rate;		/* LOG_RL_RATE, lines per second */
	unsigned max_queued_smps;	/* ENGINE_MAX_QUEUED_SMPS */
	unsigned max_queued_gmps;	/* ENGINE_MAX_QUEUED_GMPS */
	unsigned rx_queue;		/* RXQ_DEFAULT_CAP (mad/rxq.h) */
	unsigned sa_max_jobs;		/* SA_MAX_JOBS */
	unsigned sa_jobs_per_port;	/* SA_MAX_JOBS_PER_PORT */
	uint64_t sa_answer_bytes;	/* SA answer bytes per port; 0: 8 MiB */
	unsigned mc_max_groups;		/* MC_DEF_MAX_GROUPS */
	unsigned mc_members_per_group;	/* MC_DEF_MEMBERS_PER_GROUP */
	unsigned mc_groups_per_port;	/* MC_DEF_GROUPS_PER_PORT */
	/* Partitions (opensm.conf part_enforce, allow_both_pkeys) */
	enum sm_part_enforce part_enforce;	/* default (0): both */
	bool     allow_both_pkeys;	/* a member may be full and limited */
	bool     consolidate_ipv6_snm_req; /* IPv6 SNM groups share MLIDs */
	bool     no_keep_pkey_indexes;	/* keep_pkey_indexes FALSE (default
					 * TRUE, as OpenSM: partitions.h) */
	/* Fabric health (config/health_policy.c makes the checks' policy) */
	const char *topology_ref;	/* --topology-ref, topology_ref */
	int      health_expected_width;	/* "none,1x,2x,4x,8x,12x" index */
	int      health_expected_speed;	/* "none,SDR,...,NDR" index */
	unsigned health_threshold[SM_HEALTH_THRESHOLDS]; /* per hour, in
				 * enum pc_id order; the last PortXmitWait */
	unsigned health_flap_count;
	unsigned health_flap_window_s;
	unsigned health_unresponsive_k;
	unsigned health_unresponsive_n;
	unsigned health_trap_rate;	/* traps per minute from one LID */
	int      health_unhealthy_policy; /* 0 report, 1 isolate */
	const char *pid_file;		/* -J/--pidfile, pidfile key */
	const char *control_socket;	/* --control-socket (sm/ctl/) */
	const char *metrics_listen;	/* --metrics-listen ADDR:PORT (sm/metrics/);
					 * NULL: no metrics endpoint */
	/* the performance manager (sm/perf/), OpenSM's perfmgr_* keys */
	bool     perfmgr;
	bool     perfmgr_redir;		/* follow a PMA's redirect */
	unsigned perfmgr_sweep_time_s;	/* between counter sweeps; 0: none */
	unsigned perfmgr_max_outstanding_queries; /* PMA MADs in flight */
	bool     perfmgr_ignore_cas;
	bool     perfmgr_rm_nodes;	/* forget nodes that left */
	bool     perfmgr_log_errors;
	bool     perfmgr_query_cpi;	/* ClassPortInfo once per node */
	bool     perfmgr_xmit_wait_log;
	unsigned perfmgr_xmit_wait_threshold;
	const char *event_db_dump_file;	/* counters written after each sweep */
	const char *node_name_map;	/* node_name_map_name (config/node_names.h) */
};

/* A limit of the config, or its default when the field is 0. */
#define SM_LIMIT(v, def)	((v) ? (v) : (def))

#endif /* IBSM_CONFIG_SM_CONFIG_H */
