/*
 * keys.c - the table of every opensm.conf key (conf.h).
 *
 * OpenSM 3.3.23's keys in the order `opensm -c` writes them, with its
 * defaults, and in `flags` CFG_RT where OpenSM re-applies the key on a
 * SIGHUP (its option table's can_update; not max_wire_smps, which ibsm
 * takes only at start), CFG_IMPL where ibsm does
 * something with it.  Ranges are those of the field OpenSM stores the
 * value in (uint8 0-255, uint16 0-65535, uint32), narrowed where the IB
 * spec fixes them (SMInfo:Priority 4 bits, LMC 3 bits, PortInfo's 5-bit
 * time values, 14.2.5.6).  ibsm's own keys follow (pidfile, cache_dir,
 * control_socket, the SMP window's, incremental_reroute, transport), the
 * fabric health keys (topology_ref, health_*), then
 * the limits, from config/limits.h's list: one table, its size counted
 * by the compiler.
 */
#include "config.h"

#include <assert.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "config/conf.h"
#include "config/limits.h"
#include "config/sm_config.h"
#include "health/counters.h"
#include "mad/engine.h"
#include "mad/rxq.h"

#define RT	CFG_RT
#define IMPL	CFG_IMPL
#define F_NONE_		F_NONE, 0, 0
#define F_GUID(m)	F_U64, offsetof(struct sm_config, m), 0
#define F_U64_(m)	F_U64, offsetof(struct sm_config, m), 0
#define F_U8_(m)	F_U8, offsetof(struct sm_config, m), 0
#define F_UINT_(m)	F_UINT, offsetof(struct sm_config, m), 0
#define F_BOOL_(m)	F_BOOL, offsetof(struct sm_config, m), 0
#define F_BOOL_NOT_(m)	F_BOOL_NOT, offsetof(struct sm_config, m), 0
#define F_STR_(m)	F_STR, offsetof(struct sm_config, m), 0
#define F_ENUM_(m)	F_ENUM, offsetof(struct sm_config, m), 0
#define F_BUF_(m)	F_BUF, offsetof(struct sm_config, m), \
			sizeof(((struct sm_config *)0)->m)
#define F_QOS(kind, cls, m) \
	kind, offsetof(struct sm_config, qos_keys) + \
	      (cls) * sizeof(struct qos_key_set) + \
	      offsetof(struct qos_key_set, m), 0
#define F_SPECIAL(k)	k, 0, 0
#define SP_LOG_FLAGS	F_LOG_FLAGS
#define SP_NO_PART_ENF	F_NO_PART_ENF
#define K(name, type, def, lo, hi, words, flags, field, sect) \
	{ name, type, def, lo, hi, words, flags, field, sect, 0, NULL, NULL, \
	  NULL }

/* A limit (config/limits.h): an unsigned, uint64_t or double field. */
#define LIMIT_(kind, nm, fld, lo, hi, dflt, unit_, help_) \
	{ .name = nm, .type = kind, .def = NULL, .min = lo, .max = hi, \
	  .flags = CFG_IMPL | CFG_IBSM | CFG_LIMIT, .field = F_LIMIT, \
	  .off = offsetof(struct sm_config, fld), \
	  .size = sizeof(((struct sm_config *)0)->fld), \
	  .section = "IBSM LIMITS", .num = dflt, .unit = unit_, \
	  .help = help_ },
#define LIMIT_U(...)	LIMIT_(CFG_INT, __VA_ARGS__)
#define LIMIT_R(...)	LIMIT_(CFG_REAL, __VA_ARGS__)

static struct cfg_key keys[] = {
	K("guid", CFG_GUID, "0x0000000000000000", 0, 0, NULL, IMPL, F_GUID(guid), "DEVICE ATTRIBUTES OPTIONS"),
	K("m_key", CFG_U64, "0x0000000000000000", 0, 0, NULL, RT|IMPL, F_U64_(m_key), "DEVICE ATTRIBUTES OPTIONS"),
	K("m_key_lease_period", CFG_INT, "0", 0, 65535, NULL, RT|IMPL, F_UINT_(m_key_lease_period), "DEVICE ATTRIBUTES OPTIONS"),
	K("m_key_protection_level", CFG_INT, "0", 0, 3, NULL, RT|IMPL, F_U8_(m_key_protection_level), "DEVICE ATTRIBUTES OPTIONS"),
	K("m_key_lookup", CFG_BOOL, "TRUE", 0, 0, NULL, RT|IMPL, F_BOOL_(m_key_lookup), "DEVICE ATTRIBUTES OPTIONS"),
	K("sm_key", CFG_U64, "0x0000000000000001", 0, 0, NULL, RT|IMPL, F_U64_(sm_key), "DEVICE ATTRIBUTES OPTIONS"),
	K("sa_key", CFG_U64, "0x0000000000000001", 0, 0, NULL, RT|IMPL, F_U64_(sa_key), "DEVICE ATTRIBUTES OPTIONS"),
	K("subnet_prefix", CFG_U64, "0xfe80000000000000", 0, 0, NULL, IMPL, F_U64_(subnet_prefix), "DEVICE ATTRIBUTES OPTIONS"),
	K("lmc", CFG_INT, "0", 0, 7, NULL, IMPL, F_U8_(lmc), "DEVICE ATTRIBUTES OPTIONS"),
	K("lmc_esp0", CFG_BOOL, "FALSE", 0, 0, NULL, IMPL, F_BOOL_(lmc_esp0), "DEVICE ATTRIBUTES OPTIONS"),
	K("sm_sl", CFG_INT, "0", 0, 15, NULL, RT|IMPL, F_U8_(sm_sl), "DEVICE ATTRIBUTES OPTIONS"),
	K("packet_life_time", CFG_INT, "0x12", 0, 19, NULL, RT|IMPL, F_U8_(packet_life_time), "DEVICE ATTRIBUTES OPTIONS"),
	K("vl_stall_count", CFG_INT, "0x07", 0, 7, NULL, RT|IMPL, F_U8_(vl_stall_count), "DEVICE ATTRIBUTES OPTIONS"),
	K("leaf_vl_stall_count", CFG_INT, "0x07", 0, 7, NULL, RT|IMPL, F_U8_(leaf_vl_stall_count), "DEVICE ATTRIBUTES OPTIONS"),
	K("head_of_queue_lifetime", CFG_INT, "0x12", 0, 20, NULL, RT|IMPL, F_U8_(head_of_queue_lifetime), "DEVICE ATTRIBUTES OPTIONS"),
	K("leaf_head_of_queue_lifetime", CFG_INT, "0x10", 0, 20, NULL, RT|IMPL, F_U8_(leaf_head_of_queue_lifetime), "DEVICE ATTRIBUTES OPTIONS"),
	K("max_op_vls", CFG_INT, "5", 1, 15, NULL, RT|IMPL, F_U8_(max_op_vls), "DEVICE ATTRIBUTES OPTIONS"),
	K("force_link_speed", CFG_INT, "15", 0, 15, NULL, RT|IMPL, F_U8_(force_link_speed), "DEVICE ATTRIBUTES OPTIONS"),
	K("force_link_speed_ext", CFG_INT, "31", 0, 31, NULL, RT|IMPL, F_U8_(force_link_speed_ext), "DEVICE ATTRIBUTES OPTIONS"),
	K("force_link_width", CFG_INT, "255", 0, 255, NULL, IMPL, F_U8_(force_link_width), "DEVICE ATTRIBUTES OPTIONS"),
	K("fdr10", CFG_INT, "1", 0, 2, NULL, RT, F_NONE_, "DEVICE ATTRIBUTES OPTIONS"),
	K("subnet_timeout", CFG_INT, "18", 0, 31, NULL, RT|IMPL, F_U8_(subnet_timeout), "DEVICE ATTRIBUTES OPTIONS"),
	K("local_phy_errors_threshold", CFG_INT, "0x08", 0, 15, NULL, RT|IMPL, F_U8_(local_phy_errors_threshold), "DEVICE ATTRIBUTES OPTIONS"),
	K("overrun_errors_threshold", CFG_INT, "0x08", 0, 15, NULL, RT|IMPL, F_U8_(overrun_errors_threshold), "DEVICE ATTRIBUTES OPTIONS"),
	K("use_mfttop", CFG_BOOL, "TRUE", 0, 0, NULL, RT|IMPL, F_BOOL_(use_mfttop), "DEVICE ATTRIBUTES OPTIONS"),
	K("partition_config_file", CFG_PATH, "/etc/opensm/partitions.conf", 0, 0, NULL, IMPL, F_STR_(partition_config), "PARTITIONING OPTIONS"),
	K("no_partition_enforcement", CFG_BOOL, "FALSE", 0, 0, NULL, RT|IMPL, F_SPECIAL(SP_NO_PART_ENF), "PARTITIONING OPTIONS"),
	K("part_enforce", CFG_ENUM, "both", 0, 0, "both,in,out,off", RT|IMPL, F_ENUM_(part_enforce), "PARTITIONING OPTIONS"),
	K("allow_both_pkeys", CFG_BOOL, "FALSE", 0, 0, NULL, IMPL, F_BOOL_(allow_both_pkeys), "PARTITIONING OPTIONS"),
	K("keep_pkey_indexes", CFG_BOOL, "TRUE", 0, 0, NULL, RT|IMPL, F_BOOL_NOT_(no_keep_pkey_indexes), "PARTITIONING OPTIONS"),
	K("sm_assigned_guid", CFG_INT, "0x00", 0, 255, NULL, RT, F_NONE_, "PARTITIONING OPTIONS"),
	K("sweep_interval", CFG_INT, "10", 0, 86400, NULL, RT|IMPL, F_UINT_(sweep_interval), "SWEEP OPTIONS"),
	K("reassign_lids", CFG_BOOL, "FALSE", 0, 0, NULL, RT|IMPL, F_BOOL_(reassign_lids), "SWEEP OPTIONS"),
	K("force_heavy_sweep", CFG_BOOL, "FALSE", 0, 0, NULL, RT|IMPL, F_BOOL_(force_heavy_sweep), "SWEEP OPTIONS"),
	K("sweep_on_trap", CFG_BOOL, "TRUE", 0, 0, NULL, RT|IMPL, F_BOOL_(sweep_on_trap), "SWEEP OPTIONS"),
	K("port_profile_switch_nodes", CFG_BOOL, "FALSE", 0, 0, NULL, RT | IMPL, F_BOOL_(port_profile_switch_nodes), "ROUTING OPTIONS"),
	K("port_prof_ignore_file", CFG_PATH, "(null)", 0, 0, NULL, IMPL, F_STR_(port_prof_ignore_file), "ROUTING OPTIONS"),
	K("hop_weights_file", CFG_PATH, "(null)", 0, 0, NULL, IMPL, F_STR_(hop_weights_file), "ROUTING OPTIONS"),
	K("port_search_ordering_file", CFG_PATH, "(null)", 0, 0, NULL, IMPL, F_STR_(port_search_ordering_file), "ROUTING OPTIONS"),
	/* OpenSM's deprecated name of port_search_ordering_file (the 161st
	 * key it reads, not written by opensm -c) */
	{ .name = "dimn_ports_file", .type = CFG_PATH, .def = "(null)",
	  .flags = CFG_ALIAS, .field = F_NONE, .section = "ROUTING OPTIONS",
	  .alias = "port_search_ordering_file" },
	K("routing_engine", CFG_STR, "(null)", 0, 0, NULL, IMPL, F_STR_(routing_engine), "ROUTING OPTIONS"),
	K("avoid_throttled_links", CFG_BOOL, "FALSE", 0, 0, NULL, 0, F_NONE_, "ROUTING OPTIONS"),
	K("connect_roots", CFG_BOOL, "FALSE", 0, 0, NULL, RT|IMPL, F_BOOL_(connect_roots), "ROUTING OPTIONS"),
	K("use_ucast_cache", CFG_BOOL, "FALSE", 0, 0, NULL, IMPL, F_NONE_, "ROUTING OPTIONS"),
	K("lid_matrix_dump_file", CFG_PATH, "(null)", 0, 0, NULL, 0, F_NONE_, "ROUTING OPTIONS"),
	K("lfts_file", CFG_PATH, "(null)", 0, 0, NULL, IMPL, F_STR_(lfts_file), "ROUTING OPTIONS"),
	K("root_guid_file", CFG_PATH, "(null)", 0, 0, NULL, IMPL, F_STR_(root_guid_file), "ROUTING OPTIONS"),
	K("cn_guid_file", CFG_PATH, "(null)", 0, 0, NULL, IMPL, F_STR_(cn_guid_file), "ROUTING OPTIONS"),
	K("io_guid_file", CFG_PATH, "(null)", 0, 0, NULL, IMPL, F_STR_(io_guid_file), "ROUTING OPTIONS"),
	K("quasi_ftree_indexing", CFG_BOOL, "FALSE", 0, 0, NULL, 0, F_NONE_, "ROUTING OPTIONS"),
	K("max_reverse_hops", CFG_INT, "0", 0, 65535, NULL, IMPL, F_UINT_(max_reverse_hops), "ROUTING OPTIONS"),
	K("ids_guid_file", CFG_PATH, "(null)", 0, 0, NULL, IMPL, F_STR_(ids_guid_file), "ROUTING OPTIONS"),
	K("guid_routing_order_file", CFG_PATH, "(null)", 0, 0, NULL, IMPL, F_STR_(guid_routing_order_file), "ROUTING OPTIONS"),
	K("do_mesh_analysis", CFG_BOOL, "FALSE", 0, 0, NULL, RT, F_NONE_, "ROUTING OPTIONS"),
	K("lash_start_vl", CFG_INT, "0", 0, 15, NULL, RT, F_NONE_, "ROUTING OPTIONS"),
	K("nue_max_num_vls", CFG_INT, "1", 0, 15, NULL, IMPL, F_U8_(nue_max_num_vls), "ROUTING OPTIONS"),
	K("nue_include_switches", CFG_BOOL, "FALSE", 0, 0, NULL, 0, F_NONE_, "ROUTING OPTIONS"),
	K("port_shifting", CFG_BOOL, "FALSE", 0, 0, NULL, RT, F_NONE_, "ROUTING OPTIONS"),
	K("scatter_ports", CFG_INT, "0", 0, 4294967295, NULL, RT, F_NONE_, "ROUTING OPTIONS"),
	K("guid_routing_order_no_scatter", CFG_BOOL, "FALSE", 0, 0, NULL, 0, F_NONE_, "ROUTING OPTIONS"),
	K("sa_db_file", CFG_PATH, "(null)", 0, 0, NULL, 0, F_NONE_, "ROUTING OPTIONS"),
	K("sa_db_dump", CFG_BOOL, "FALSE", 0, 0, NULL, RT, F_NONE_, "ROUTING OPTIONS"),
	K("torus_config", CFG_PATH, "/etc/opensm/torus-2QoS.conf", 0, 0, NULL, RT|IMPL, F_STR_(torus_config), "ROUTING OPTIONS"),
	K("sm_priority", CFG_INT, "0", 0, 15, NULL, RT|IMPL, F_U8_(sm_priority), "ROUTING OPTIONS"),
	K("ignore_other_sm", CFG_BOOL, "FALSE", 0, 0, NULL, RT|IMPL, F_BOOL_(ignore_other_sm), "ROUTING OPTIONS"),
	K("sminfo_polling_timeout", CFG_INT, "10000", 1, 4294967295, NULL, RT|IMPL, F_UINT_(sminfo_polling_timeout), "ROUTING OPTIONS"),
	K("polling_retry_number", CFG_INT, "4", 0, 4294967295, NULL, RT|IMPL, F_UINT_(polling_retry_number), "ROUTING OPTIONS"),
	K("honor_guid2lid_file", CFG_BOOL, "FALSE", 0, 0, NULL, RT|IMPL, F_BOOL_(honor_guid2lid_file), "ROUTING OPTIONS"),
	K("max_wire_smps", CFG_INT, "4", 1, 65535, NULL, IMPL, /* the MAD engine takes it at start */ F_UINT_(max_wire_smps), "TIMING AND THREADING OPTIONS"),
	K("max_wire_smps2", CFG_INT, "4", 0, 4294967295, NULL, RT, F_NONE_, "TIMING AND THREADING OPTIONS"),
	K("max_smps_timeout", CFG_INT, "600000", 0, 4294967295, NULL, RT, F_NONE_, "TIMING AND THREADING OPTIONS"),
	K("transaction_timeout", CFG_INT, "200", 1, 60000, NULL, IMPL, F_UINT_(transaction_timeout), "TIMING AND THREADING OPTIONS"),
	K("transaction_retries", CFG_INT, "3", 0, 100, NULL, IMPL, F_UINT_(transaction_retries), "TIMING AND THREADING OPTIONS"),
	K("long_transaction_timeout", CFG_INT, "500", 0, 4294967295, NULL, 0, F_NONE_, "TIMING AND THREADING OPTIONS"),
	K("max_msg_fifo_timeout", CFG_INT, "10000", 0, 4294967295, NULL, RT, F_NONE_, "TIMING AND THREADING OPTIONS"),
	K("single_thread", CFG_BOOL, "FALSE", 0, 0, NULL, 0, F_NONE_, "TIMING AND THREADING OPTIONS"),
	K("daemon", CFG_BOOL, "FALSE", 0, 0, NULL, IMPL, F_BOOL_(daemon), "MISC OPTIONS"),
	K("sm_inactive", CFG_BOOL, "FALSE", 0, 0, NULL, RT|IMPL, F_BOOL_(sm_inactive), "MISC OPTIONS"),
	K("babbling_port_policy", CFG_BOOL, "FALSE", 0, 0, NULL, RT|IMPL, F_BOOL_(babbling_port_policy), "MISC OPTIONS"),
	K("drop_event_subscriptions", CFG_BOOL, "FALSE", 0, 0, NULL, RT, F_NONE_, "MISC OPTIONS"),
	K("ipoib_mcgroup_creation_validation", CFG_BOOL, "TRUE", 0, 0, NULL, RT|IMPL, F_BOOL_(ipoib_mcgroup_creation_validation), "MISC OPTIONS"),
	K("mcgroup_join_validation", CFG_BOOL, "TRUE", 0, 0, NULL, RT|IMPL, F_BOOL_(mcgroup_join_validation), "MISC OPTIONS"),
	K("use_original_extended_sa_rates_only", CFG_BOOL, "FALSE", 0, 0, NULL, RT|IMPL, F_BOOL_(use_original_extended_sa_rates_only), "MISC OPTIONS"),
	K("use_optimized_slvl", CFG_BOOL, "FALSE", 0, 0, NULL, RT, F_NONE_, "MISC OPTIONS"),
	K("fsync_high_avail_files", CFG_BOOL, "TRUE", 0, 0, NULL, RT, F_NONE_, "MISC OPTIONS"),
	K("perfmgr", CFG_BOOL, "FALSE", 0, 0, NULL, IMPL, F_BOOL_(perfmgr), "MISC OPTIONS"),
	K("perfmgr_redir", CFG_BOOL, "TRUE", 0, 0, NULL, IMPL, F_BOOL_(perfmgr_redir), "MISC OPTIONS"),
	K("perfmgr_sweep_time_s", CFG_INT, "180", 0, 65535, NULL, IMPL, F_UINT_(perfmgr_sweep_time_s), "MISC OPTIONS"),
	K("perfmgr_max_outstanding_queries", CFG_INT, "500", 0, 4294967295, NULL, IMPL, F_UINT_(perfmgr_max_outstanding_queries), "MISC OPTIONS"),
	K("perfmgr_ignore_cas", CFG_BOOL, "FALSE", 0, 0, NULL, IMPL, F_BOOL_(perfmgr_ignore_cas), "MISC OPTIONS"),
	K("perfmgr_rm_nodes", CFG_BOOL, "TRUE", 0, 0, NULL, IMPL, F_BOOL_(perfmgr_rm_nodes), "MISC OPTIONS"),
	K("perfmgr_log_errors", CFG_BOOL, "TRUE", 0, 0, NULL, IMPL, F_BOOL_(perfmgr_log_errors), "MISC OPTIONS"),
	K("perfmgr_query_cpi", CFG_BOOL, "TRUE", 0, 0, NULL, IMPL, F_BOOL_(perfmgr_query_cpi), "MISC OPTIONS"),
	K("perfmgr_xmit_wait_log", CFG_BOOL, "FALSE", 0, 0, NULL, IMPL, F_BOOL_(perfmgr_xmit_wait_log), "MISC OPTIONS"),
	K("perfmgr_xmit_wait_threshold", CFG_INT, "65535", 0, 4294967295, NULL, IMPL, F_UINT_(perfmgr_xmit_wait_threshold), "MISC OPTIONS"),
	K("event_db_dump_file", CFG_PATH, "(null)", 0, 0, NULL, IMPL, F_STR_(event_db_dump_file), "MISC OPTIONS"),
	K("event_plugin_name", CFG_STR, "(null)", 0, 0, NULL, 0, F_NONE_, "MISC OPTIONS"),
	K("event_plugin_options", CFG_STR, "(null)", 0, 0, NULL, 0, F_NONE_, "MISC OPTIONS"),
	K("node_name_map_name", CFG_PATH, "(null)", 0, 0, NULL, IMPL, F_STR_(node_name_map), "MISC OPTIONS"),
	K("log_flags", CFG_INT, "0x03", 0, 255, NULL, RT|IMPL, F_SPECIAL(SP_LOG_FLAGS), "DEBUG FEATURES"),
	K("force_log_flush", CFG_BOOL, "FALSE", 0, 0, NULL, RT, F_NONE_, "DEBUG FEATURES"),
	K("log_file", CFG_PATH, "/var/log/opensm.log", 0, 0, NULL, IMPL, F_STR_(log_file), "DEBUG FEATURES"),
	K("log_max_size", CFG_INT, "0", 0, 4294967295, NULL, RT|IMPL, F_UINT_(log_max_size), "DEBUG FEATURES"),
	K("accum_log_file", CFG_BOOL, "TRUE", 0, 0, NULL, RT|IMPL, F_BOOL_(accum_log_file), "DEBUG FEATURES"),
	K("per_module_logging_file", CFG_PATH, "/etc/opensm/per-module-logging.conf", 0, 0, NULL, 0, F_NONE_, "DEBUG FEATURES"),
	K("dump_files_dir", CFG_DIR, "/var/log/", 0, 0, NULL, IMPL, F_BUF_(dump_dir), "DEBUG FEATURES"),
	K("enable_quirks", CFG_BOOL, "FALSE", 0, 0, NULL, RT, F_NONE_, "DEBUG FEATURES"),
	K("no_clients_rereg", CFG_BOOL, "FALSE", 0, 0, NULL, RT|IMPL, F_BOOL_(no_clients_rereg), "DEBUG FEATURES"),
	K("disable_multicast", CFG_BOOL, "FALSE", 0, 0, NULL, RT|IMPL, F_BOOL_(disable_multicast), "DEBUG FEATURES"),
	K("exit_on_fatal", CFG_BOOL, "TRUE", 0, 0, NULL, RT|IMPL, F_BOOL_(exit_on_fatal), "DEBUG FEATURES"),
	K("console", CFG_ENUM, "off", 0, 0, "off,local,loopback,socket", IMPL, F_NONE_, "DEBUG FEATURES"),
	K("console_port", CFG_INT, "10000", 0, 65535, NULL, 0, F_NONE_, "DEBUG FEATURES"),
	K("qos", CFG_BOOL, "FALSE", 0, 0, NULL, RT | IMPL, F_BOOL_(qos), "QoS OPTIONS"),
	K("qos_policy_file", CFG_PATH, "/etc/opensm/qos-policy.conf", 0, 0, NULL, RT | IMPL, F_STR_(qos_policy_file), "QoS OPTIONS"),
	K("suppress_sl2vl_mad_status_errors", CFG_BOOL, "FALSE", 0, 0, NULL, RT, F_NONE_, "QoS OPTIONS"),
	K("qos_max_vls", CFG_INT, "0", 0, 15, NULL, RT,
	  F_QOS(F_UINT, QOS_BASE, max_vls), "QoS OPTIONS"),
	K("qos_high_limit", CFG_INT, "-1", -1, 255, NULL, RT | IMPL,
	  F_QOS(F_INT, QOS_BASE, high_limit), "QoS OPTIONS"),
	K("qos_vlarb_high", CFG_STR, "(null)", 0, 0, NULL, RT | IMPL,
	  F_QOS(F_STR, QOS_BASE, vlarb_high), "QoS OPTIONS"),
	K("qos_vlarb_low", CFG_STR, "(null)", 0, 0, NULL, RT | IMPL,
	  F_QOS(F_STR, QOS_BASE, vlarb_low), "QoS OPTIONS"),
	K("qos_sl2vl", CFG_STR, "(null)", 0, 0, NULL, RT | IMPL,
	  F_QOS(F_STR, QOS_BASE, sl2vl), "QoS OPTIONS"),
	K("qos_ca_max_vls", CFG_INT, "0", 0, 15, NULL, RT,
	  F_QOS(F_UINT, QOS_CA, max_vls), "QoS OPTIONS"),
	K("qos_ca_high_limit", CFG_INT, "-1", -1, 255, NULL, RT | IMPL,
	  F_QOS(F_INT, QOS_CA, high_limit), "QoS OPTIONS"),
	K("qos_ca_vlarb_high", CFG_STR, "(null)", 0, 0, NULL, RT | IMPL,
	  F_QOS(F_STR, QOS_CA, vlarb_high), "QoS OPTIONS"),
	K("qos_ca_vlarb_low", CFG_STR, "(null)", 0, 0, NULL, RT | IMPL,
	  F_QOS(F_STR, QOS_CA, vlarb_low), "QoS OPTIONS"),
	K("qos_ca_sl2vl", CFG_STR, "(null)", 0, 0, NULL, RT | IMPL,
	  F_QOS(F_STR, QOS_CA, sl2vl), "QoS OPTIONS"),
	K("qos_sw0_max_vls", CFG_INT, "0", 0, 15, NULL, RT,
	  F_QOS(F_UINT, QOS_SW0, max_vls), "QoS OPTIONS"),
	K("qos_sw0_high_limit", CFG_INT, "-1", -1, 255, NULL, RT | IMPL,
	  F_QOS(F_INT, QOS_SW0, high_limit), "QoS OPTIONS"),
	K("qos_sw0_vlarb_high", CFG_STR, "(null)", 0, 0, NULL, RT | IMPL,
	  F_QOS(F_STR, QOS_SW0, vlarb_high), "QoS OPTIONS"),
	K("qos_sw0_vlarb_low", CFG_STR, "(null)", 0, 0, NULL, RT | IMPL,
	  F_QOS(F_STR, QOS_SW0, vlarb_low), "QoS OPTIONS"),
	K("qos_sw0_sl2vl", CFG_STR, "(null)", 0, 0, NULL, RT | IMPL,
	  F_QOS(F_STR, QOS_SW0, sl2vl), "QoS OPTIONS"),
	K("qos_swe_max_vls", CFG_INT, "0", 0, 15, NULL, RT,
	  F_QOS(F_UINT, QOS_SWE, max_vls), "QoS OPTIONS"),
	K("qos_swe_high_limit", CFG_INT, "-1", -1, 255, NULL, RT | IMPL,
	  F_QOS(F_INT, QOS_SWE, high_limit), "QoS OPTIONS"),
	K("qos_swe_vlarb_high", CFG_STR, "(null)", 0, 0, NULL, RT | IMPL,
	  F_QOS(F_STR, QOS_SWE, vlarb_high), "QoS OPTIONS"),
	K("qos_swe_vlarb_low", CFG_STR, "(null)", 0, 0, NULL, RT | IMPL,
	  F_QOS(F_STR, QOS_SWE, vlarb_low), "QoS OPTIONS"),
	K("qos_swe_sl2vl", CFG_STR, "(null)", 0, 0, NULL, RT | IMPL,
	  F_QOS(F_STR, QOS_SWE, sl2vl), "QoS OPTIONS"),
	K("qos_rtr_max_vls", CFG_INT, "0", 0, 15, NULL, RT,
	  F_QOS(F_UINT, QOS_RTR, max_vls), "QoS OPTIONS"),
	K("qos_rtr_high_limit", CFG_INT, "-1", -1, 255, NULL, RT | IMPL,
	  F_QOS(F_INT, QOS_RTR, high_limit), "QoS OPTIONS"),
	K("qos_rtr_vlarb_high", CFG_STR, "(null)", 0, 0, NULL, RT | IMPL,
	  F_QOS(F_STR, QOS_RTR, vlarb_high), "QoS OPTIONS"),
	K("qos_rtr_vlarb_low", CFG_STR, "(null)", 0, 0, NULL, RT | IMPL,
	  F_QOS(F_STR, QOS_RTR, vlarb_low), "QoS OPTIONS"),
	K("qos_rtr_sl2vl", CFG_STR, "(null)", 0, 0, NULL, RT | IMPL,
	  F_QOS(F_STR, QOS_RTR, sl2vl), "QoS OPTIONS"),
	K("congestion_control", CFG_BOOL, "FALSE", 0, 0, NULL, RT, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_key", CFG_U64, "0x0000000000000000", 0, 0, NULL, 0, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_max_outstanding_mads", CFG_INT, "500", 0, 4294967295, NULL, 0, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_sw_cong_setting_control_map", CFG_INT, "0x0", 0, 4294967295, NULL, RT, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_sw_cong_setting_victim_mask", CFG_STR, "0x0000000000000000000000000000000000000000000000000000000000000000", 0, 0, NULL, RT, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_sw_cong_setting_credit_mask", CFG_STR, "0x0000000000000000000000000000000000000000000000000000000000000000", 0, 0, NULL, RT, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_sw_cong_setting_threshold", CFG_INT, "0x00", 0, 255, NULL, RT, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_sw_cong_setting_packet_size", CFG_INT, "0", 0, 255, NULL, RT, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_sw_cong_setting_credit_starvation_threshold", CFG_INT, "0x00", 0, 255, NULL, RT, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_sw_cong_setting_credit_starvation_return_delay", CFG_STR, "0:0", 0, 0, NULL, RT, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_sw_cong_setting_marking_rate", CFG_INT, "0", 0, 65535, NULL, RT, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_ca_cong_setting_port_control", CFG_INT, "0x0000", 0, 65535, NULL, RT, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_ca_cong_setting_control_map", CFG_INT, "0x0000", 0, 65535, NULL, RT, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_ca_cong_setting_ccti_timer", CFG_STR, "0 0", 0, 0, NULL, RT, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_ca_cong_setting_ccti_increase", CFG_STR, "0 0", 0, 0, NULL, RT, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_ca_cong_setting_trigger_threshold", CFG_STR, "0 0", 0, 0, NULL, RT, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_ca_cong_setting_ccti_min", CFG_STR, "0 0", 0, 0, NULL, RT, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("cc_cct", CFG_STR, "(null)", 0, 0, NULL, RT, F_NONE_, "Congestion Control OPTIONS (EXPERIMENTAL)"),
	K("prefix_routes_file", CFG_PATH, "/etc/opensm/prefix-routes.conf", 0, 0, NULL, 0, F_NONE_, "OTHER OPTIONS"),
	K("consolidate_ipv6_snm_req", CFG_BOOL, "FALSE", 0, 0, NULL, RT|IMPL, F_BOOL_(consolidate_ipv6_snm_req), "OTHER OPTIONS"),
	K("log_prefix", CFG_STR, "(null)", 0, 0, NULL, RT|IMPL, F_STR_(log_prefix), "OTHER OPTIONS"),

	/* ibsm's own keys (OpenSM has command-line options or variables) */
	K("pidfile", CFG_PATH, "(null)", 0, 0, NULL, IMPL | CFG_IBSM,
	  F_STR_(pid_file), "IBSM OPTIONS"),
	K("cache_dir", CFG_DIR, "/var/cache/opensm", 0, 0, NULL,
	  IMPL | CFG_IBSM, F_BUF_(cache_dir), "IBSM OPTIONS"),
	/* with m_key: a key per port derived from it (sm/mkey.h) */
	K("m_key_per_port", CFG_BOOL, "FALSE", 0, 0, NULL, RT | IMPL | CFG_IBSM,
	  F_BOOL_(m_key_per_port), "IBSM OPTIONS"),
	/* the control socket (sm/ctl/); "(null)": none */
	K("control_socket", CFG_PATH, "/run/ibsm/ibsm.sock", 0, 0, NULL,
	  IMPL | CFG_IBSM, F_STR_(control_socket), "IBSM OPTIONS"),
	/* the adaptive SMP window (mad/engine.h): max_wire_smps is where it
	 * starts and its floor; this its ceiling (<= max_wire_smps: fixed) */
	K("smp_window_max", CFG_INT, "32", 0, 65535, NULL, IMPL | CFG_IBSM,
	  F_UINT_(smp_window_max), "IBSM OPTIONS"),
	/* SMPs on the wire to one destination at once; 0: no limit */
	K("smps_per_node", CFG_INT, "4", 0, 65535, NULL, IMPL | CFG_IBSM,
	  F_UINT_(smps_per_node), "IBSM OPTIONS"),
	/* how MADs reach the fabric: libibumad, or ibsim's own protocol
	 * (mad/sim_io.h; tests and benchmarks under the simulator) */
	K("transport", CFG_ENUM, "umad", 0, 0, "umad,ibsim", IMPL | CFG_IBSM,
	  F_ENUM_(transport), "IBSM OPTIONS"),
	/* after a loss, only the routes that crossed it change (route.c) */
	K("incremental_reroute", CFG_BOOL, "TRUE", 0, 0, NULL,
	  RT | IMPL | CFG_IBSM, F_BOOL_NOT_(no_incremental_reroute),
	  "IBSM OPTIONS"),

	/* fabric health (health/): a reference topology in ibnetdiscover's
	 * format, the link width and speed every link should run at, error
	 * thresholds per hour, and the unhealthy-port classifier's */
#define HT(name, id, def) \
	K("health_threshold_" name, CFG_INT, def, 0, 4294967295, NULL, \
	  RT | IMPL | CFG_IBSM, F_UINT_(health_threshold[id]), "IBSM HEALTH")
	K("topology_ref", CFG_PATH, "(null)", 0, 0, NULL, RT | IMPL | CFG_IBSM,
	  F_STR_(topology_ref), "IBSM HEALTH"),
	K("health_expected_width", CFG_ENUM, "none", 0, 0,
	  "none,1x,2x,4x,8x,12x", RT | IMPL | CFG_IBSM,
	  F_ENUM_(health_expected_width), "IBSM HEALTH"),
	K("health_expected_speed", CFG_ENUM, "none", 0, 0,
	  "none,SDR,DDR,QDR,FDR,EDR,HDR,NDR", RT | IMPL | CFG_IBSM,
	  F_ENUM_(health_expected_speed), "IBSM HEALTH"),
	HT("symbol_errors", PC_SYMBOL_ERR, "10"),
	HT("link_error_recovery", PC_LINK_RECOVER, "10"),
	HT("link_downed", PC_LINK_DOWNED, "3"),
	HT("rcv_errors", PC_RCV_ERR, "10"),
	HT("rcv_remote_phys_errors", PC_RCV_REMOTE_PHYS, "100"),
	HT("rcv_switch_relay_errors", PC_RCV_SW_RELAY, "1000"),
	HT("xmit_discards", PC_XMIT_DISCARDS, "100"),
	HT("xmit_constraint_errors", PC_XMIT_CONSTRAINT, "100"),
	HT("rcv_constraint_errors", PC_RCV_CONSTRAINT, "100"),
	HT("link_integrity_errors", PC_LINK_INTEGRITY, "10"),
	HT("buffer_overrun_errors", PC_BUF_OVERRUN, "10"),
	HT("vl15_dropped", PC_VL15_DROPPED, "100"),
	HT("xmit_wait", PC_N_ERRORS, "1310700"),
#undef HT
	K("health_flap_count", CFG_INT, "5", 1, 32, NULL, RT | IMPL | CFG_IBSM,
	  F_UINT_(health_flap_count), "IBSM HEALTH"),
	K("health_flap_window_s", CFG_INT, "600", 1, 86400, NULL,
	  RT | IMPL | CFG_IBSM, F_UINT_(health_flap_window_s), "IBSM HEALTH"),
	K("health_unresponsive_k", CFG_INT, "3", 1, 32, NULL,
	  RT | IMPL | CFG_IBSM, F_UINT_(health_unresponsive_k), "IBSM HEALTH"),
	K("health_unresponsive_n", CFG_INT, "5", 1, 32, NULL,
	  RT | IMPL | CFG_IBSM, F_UINT_(health_unresponsive_n), "IBSM HEALTH"),
	K("health_trap_rate", CFG_INT, "60", 1, 4294967295, NULL,
	  RT | IMPL | CFG_IBSM, F_UINT_(health_trap_rate), "IBSM HEALTH"),
	K("health_unhealthy_policy", CFG_ENUM, "report", 0, 0, "report,isolate",
	  RT | IMPL | CFG_IBSM, F_ENUM_(health_unhealthy_policy), "IBSM HEALTH"),

	/* the Prometheus endpoint (sm/metrics/): ADDR:PORT; "(null)": none */
	K("metrics_listen", CFG_STR, "(null)", 0, 0, NULL, IMPL | CFG_IBSM,
	  F_STR_(metrics_listen), "IBSM METRICS"),

	/* the limits, last: limit_opts */
	CFG_LIMITS(LIMIT_U, LIMIT_U, LIMIT_R)
};

#define N_KEYS	(sizeof(keys) / sizeof(keys[0]))

/*
 * Checked by the compiler: each limit's field has the C type its kind
 * says.  That its default lies in its range above 0 (0 marks "default"
 * in a config left zero) is checked by tests/unit/check_limits.c: the
 * bounds of real-valued limits are floating constants, which C11 does
 * not allow in a static_assert (clang refuses them).
 */
#define CHECK_LIMIT_(ctype, nm, fld, lo, hi, dflt, unit_, help_) \
	static_assert(_Generic(((struct sm_config *)0)->fld, \
			       ctype: 1, default: 0), \
		      nm ": field " #fld " is not " #ctype);
#define CHECK_U(...)	CHECK_LIMIT_(unsigned, __VA_ARGS__)
#define CHECK_W(...)	CHECK_LIMIT_(uint64_t, __VA_ARGS__)
#define CHECK_R(...)	CHECK_LIMIT_(double, __VA_ARGS__)
CFG_LIMITS(CHECK_U, CHECK_W, CHECK_R)

/*
 * The table's size, checked by the compiler: OpenSM 3.3.23's keys (the
 * 160 of opensm -c and dimn_ports_file), ibsm's own, then the limits, its
 * last N_LIMITS keys.
 */
#define N_OPENSM_KEYS	161
#define N_IBSM_KEYS	8
#define N_HEALTH_KEYS	22
#define N_METRICS_KEYS	1
static_assert(SM_HEALTH_THRESHOLDS == PC_N_ERRORS + 1,
	      "health_threshold[]: every error counter and PortXmitWait");
static_assert(N_KEYS == N_OPENSM_KEYS + N_IBSM_KEYS + N_HEALTH_KEYS +
	      N_METRICS_KEYS + N_LIMITS,
	      "keys[]: OpenSM's keys, ibsm's own, then every limit");
#define FIRST_LIMIT	(N_KEYS - N_LIMITS)

const struct cfg_key *const limit_opts = keys + FIRST_LIMIT;
const size_t n_limit_opts = N_LIMITS;

/* The limits' defaults as text ("%.15g" of each `num`), written once. */
static char limit_defs[N_LIMITS][32];

const struct cfg_key *cfg_keys(size_t *n)
{
	if (!keys[FIRST_LIMIT].def)
		for (size_t i = 0; i < N_LIMITS; i++) {
			struct cfg_key *k = &keys[FIRST_LIMIT + i];

			snprintf(limit_defs[i], sizeof(limit_defs[i]), "%.15g",
				 k->num);
			k->def = limit_defs[i];
		}
	if (n)
		*n = N_KEYS;
	return keys;
}

const struct cfg_key *cfg_key_find(const char *name, size_t *index)
{
	size_t n;
	const struct cfg_key *k = cfg_keys(&n);

	for (size_t i = 0; i < n; i++)
		if (!strcmp(k[i].name, name)) {
			if (index)
				*index = i;
			return &k[i];
		}
	return NULL;
}
