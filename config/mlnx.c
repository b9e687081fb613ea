/*
 * mlnx.c - the keys and routing engine names of Mellanox (NVIDIA) OpenSM
 * 5.x that OpenSM 3.3.23 does not have (conf.h: cfg_mlnx_key,
 * cfg_map_engines).
 *
 * MLNX_OFED's OpenSM writes some 200 keys OpenSM 3.3.23 does not know
 * (the fields of its osm_subn_opt_t, its `opensm -c` output, the keys of
 * NVIDIA's "UFM Subnet Manager Default Properties" appendix).  A file from it must start ibsm: each
 * key here is known by name and says once what ibsm does instead; a key
 * of that family not listed is an unknown key, a warning too.  Families
 * share one note through a pattern (fnmatch(3)): "hm_*".
 */
#include "config.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "config/conf.h"
#include "routing/routing.h"

struct mlnx_key {
	const char *name;	/* a pattern of fnmatch(3): "ar_*" */
	const char *note;
};

#define AR	"adaptive routing is a Mellanox switch feature ibsm does not" \
		" program: the static routes of the routing engine are used"
#define VIRT	"ibsm does not manage virtual ports (SR-IOV vports):" \
		" virtual functions are not given LIDs"
#define SHARP	"ibsm has no SHARP aggregation manager interface: run the" \
		" SHARP AM against the fabric on its own"
#define HM	"ibsm's fabric health (health_* keys, ibsmctl health) watches" \
		" and isolates unhealthy ports instead"
#define KEYS	"ibsm manages only the SM_Key, the SA key and the M_Key of" \
		" OpenSM 3.3.23 (m_key, sm_key, sa_key)"
#define CC	"ibsm does not configure congestion control"
#define HBF	"hash-based forwarding is a Mellanox switch feature ibsm does" \
		" not program"
#define THREADS	"ibsm routes on its own routing thread; the number of" \
		" threads is not configurable"
#define ENGINE	"an option of Mellanox OpenSM 5.x's routing engines;" \
		" ibsm's engines do not take it"
#define RTR	"ibsm has no IB router support"
#define LOGS	"ibsm logs to its log file and the journal; its statistics" \
		" are on the metrics endpoint (metrics_listen) and ibsmctl"
#define NVL	"ibsm does not manage NVLink"
#define MISC	"a feature of Mellanox OpenSM 5.x that ibsm does not have;" \
		" ignored"

static const struct mlnx_key mlnx_keys[] = {
	/* virtualization */
	{ "virt_*", VIRT },
	{ "enable_virt_rec_ext", VIRT },
	/* SHARP */
	{ "sharp_*", SHARP },
	/* adaptive routing, SHIELD, pFRN */
	{ "ar_*", AR },
	{ "shield_*", AR },
	{ "pfrn_*", AR },
	{ "adv_routing_engine*", AR },
	{ "enable_ar_*", AR },
	{ "enable_empty_arlft_optimization", AR },
	{ "dump_ar", AR },
	{ "cache_ar_group_id", AR },
	{ "hbf_*", HBF },
	{ "enable_hbf", HBF },
	/* health manager */
	{ "hm_*", HM },
	/* keys beyond OpenSM 3.3.23's */
	{ "key_mgr_seed", KEYS },
	{ "cc_key_*", KEYS },
	{ "vs_key_*", KEYS },
	{ "vs_max_outstanding_mads", KEYS },
	{ "n2n_*", KEYS },
	{ "sa_enhanced_trust_model", "ibsm's SA trusts a request by its"
	  " SA key (sa_key) as OpenSM 3.3.23 does" },
	{ "sa_etm_*", "ibsm's SA trusts a request by its SA key (sa_key) as"
	  " OpenSM 3.3.23 does" },
	/* congestion control */
	{ "mlnx_congestion_control", CC },
	{ "congestion_control_policy_file", CC },
	{ "ppcc_algo_dir", CC },
	{ "cc_*", CC },
	/* threads */
	{ "routing_threads_num", THREADS },
	{ "max_threads_per_core", THREADS },
	{ "smp_threads", THREADS },
	{ "gmp_threads", THREADS },
	{ "gmp_traps_threads_num", THREADS },
	{ "max_wire_smps_per_device", "ibsm's smps_per_node limits the SMPs"
	  " on the wire to one node" },
	/* routing options of 5.x's engines */
	{ "max_cas_on_spine", ENGINE },
	{ "dfp_*", ENGINE },
	{ "find_roots_color_algorithm", ENGINE },
	{ "calc_missing_routes", ENGINE },
	{ "enhanced_missing_routes", ENGINE },
	{ "updn_lid_tracking_*", ENGINE },
	{ "pqft_structure", ENGINE },
	{ "use_scatter_for_switch_lid", ENGINE },
	{ "offsweep_balancing_*", ENGINE },
	{ "routing_flags", ENGINE },
	{ "dor_hyper_cube_mode", ENGINE },
	{ "improved_lmc_path_distribution", ENGINE },
	{ "pgrp_policy_file", ENGINE },
	{ "topo_policy_file", ENGINE },
	{ "rch_policy_file", ENGINE },
	{ "ftree_ca_order_dump_file", ENGINE },
	{ "held_back_sw_file", ENGINE },
	{ "enable_queries_during_routing", "ibsm's SA answers from the last"
	  " published routes while routing runs" },
	{ "max_op_vls_*", "ibsm takes one max_op_vls for every port" },
	/* routers */
	{ "rtr_*", RTR },
	{ "router_policy_*", RTR },
	{ "global_flid_*", RTR },
	{ "local_flid_*", RTR },
	{ "flid_compression", RTR },
	{ "lids_per_rtr", RTR },
	{ "consolidate_ipv4_mask", RTR },
	/* logging and statistics */
	{ "syslog_log_flags", LOGS },
	{ "log_num_backlogs", LOGS },
	{ "enable_performance_logging", LOGS },
	{ "osm_stats_*", LOGS },
	{ "osm_perflog_dump_limit", LOGS },
	{ "dbg_lvl", LOGS },
	{ "activity_report_subjects", LOGS },
	{ "cache_files_dir", "ibsm's cache_dir" },
	/* NVLink */
	{ "nvlink_enable", NVL },
	{ "nvl_*", NVL },
	/* other features of 5.x */
	{ "master_sm_*", MISC },
	{ "enable_sm_port_failover", MISC },
	{ "allowed_sm_guids", MISC },
	{ "light_sweep_spst", MISC },
	{ "force_heavy_sweep_window", MISC },
	{ "sweep_every_hup_signal", "ibsm sweeps on every SIGHUP" },
	{ "reports", MISC },
	{ "client_rereg_mode", MISC },
	{ "max_seq_redisc", MISC },
	{ "rediscovery_*", MISC },
	{ "rereg_on_guid_migr", MISC },
	{ "aguid_*", MISC },
	{ "sm_assign_guid_func", MISC },
	{ "mc_primary_root_guid", MISC },
	{ "mc_secondary_root_guid", MISC },
	{ "mc_roots_file", MISC },
	{ "enable_inc_mc_routing", MISC },
	{ "drop_subscr_on_report_fail", MISC },
	{ "drop_unreachable_*", MISC },
	{ "max_rate_enum", MISC },
	{ "switch_name", MISC },
	{ "max_msg_fifo_len", MISC },
	{ "max_alt_dr_path_retries", MISC },
	{ "ca_port_*", MISC },
	{ "sa_pr_full_world_queries_allowed", MISC },
	{ "sa_rate_threshold", MISC },
	{ "sa_check_sgid_spoofing", MISC },
	{ "enable_crashd", MISC },
	{ "validate_smps", "ibsm checks every SMP it receives" },
	{ "max_topologies_per_sw", MISC },
	{ "auto_join_hca_wo_topo", MISC },
	{ "allow_sm_port_reset", MISC },
	{ "prp_override_allow_sm_port_reset", MISC },
	{ "support_mlnx_enhanced_link", MISC },
	{ "mlnx_enhanced_link_enable", MISC },
	{ "adaptive_timeout_sl_mask", MISC },
	{ "port_*_change_action", MISC },
	{ "mepi_*", MISC },
	{ "additional_*_devices", MISC },
	{ "disable_default_gi_support", MISC },
	{ "topo_config_*", MISC },
	{ "load_inform_info_from_sadb", MISC },
	{ "verbose_bypass_policy_file", MISC },
	{ "sa_db_dump_file", MISC },
	{ "enable_subnet_lst", MISC },
	{ "subnet_lst_file", MISC },
	{ "stand_alone", MISC },
	{ "service_name2key_map_file", MISC },
	{ "get_mft_tables", MISC },
	{ "tenants_policy_*", MISC },
	{ "reply_lid_smps_in_dr", MISC },
	{ "respond_unknown_lid_traps", MISC },
	{ "fabric_mode_*", MISC },
	{ "issu_*", MISC },
	{ "conf_template", MISC },
	{ "validate_conf_files", MISC },
	{ "enable_sa", MISC },
	{ "planarized_routing_enabled", MISC },
	{ "enhanced_qos_*", "ibsm's QoS is OpenSM 3.3.23's (qos,"
	  " qos_policy_file)" },
	{ "override_create_mcg_sl", MISC },
	{ "default_mcg_*", MISC },
	{ "const_multicast", MISC },
	{ "use_optimized_port_mask_slvl", MISC },
	{ "sm_db_dump", MISC },
	{ "port_recovery_policy_enabled", MISC },
	{ "fast_recovery_*", MISC },
	{ "device_configuration_file", MISC },
	{ "prism_an_lmc", MISC },
	{ "lids_per_port", MISC },
	{ "periodic_key_update", KEYS },
	{ "max_sa_reports_*", MISC },
	{ "qos_config_vl_enabled", MISC },
	{ "qos_sw2sw_*", "ibsm's QoS tables are OpenSM 3.3.23's classes (qos_ca_,"
	  " qos_sw0_, qos_swe_, qos_rtr_)" },
	{ "max_neighbor_mtu", MISC },
	{ "suppress_mc_pkey_traps", MISC },
	{ "force_link_speed_ext2", "ibsm sets the speeds OpenSM 3.3.23 knows"
	  " (force_link_speed, force_link_speed_ext)" },
	{ "support_mepi_speeds", MISC },
	{ "plugin_name", "ibsm loads no plugins" },
	{ "plugin_options", "ibsm loads no plugins" },
	{ "enable_vl_packing", MISC },
};

const char *cfg_mlnx_key(const char *name)
{
	for (size_t i = 0; i < sizeof(mlnx_keys) / sizeof(mlnx_keys[0]); i++)
		if (fnmatch(mlnx_keys[i].name, name, 0) == 0)
			return mlnx_keys[i].note;
	return NULL;
}

/*
 * The engine names of Mellanox OpenSM 5.x that ibsm does not have, with
 * ibsm's nearest engines in order of preference: the first one ibsm has
 * is used (the torus and Dragonfly+ engines may not be built in).
 */
static const struct {
	const char *name;
	const char *nearest[3];
	const char *why;
} mlnx_engines[] = {
	{ "ar_updn", { "updn" }, "Up/Down without adaptive routing" },
	{ "ar_dnup", { "dnup" }, "Down/Up without adaptive routing" },
	{ "ar_ftree", { "ftree" }, "fat tree without adaptive routing" },
	{ "ar_dor", { "dor", "dfsssp" }, "dimension order without adaptive"
	  " routing, else a deadlock-free engine" },
	{ "ar_torus", { "torus-2QoS", "dor", "dfsssp" }, "torus without"
	  " adaptive routing, else a deadlock-free engine" },
	{ "ar_dfp", { "dfplus", "dfsssp" }, "Dragonfly+ without adaptive routing,"
	  " else a deadlock-free engine" },
	{ "pqft", { "ftree" }, "ftree (no parallel-port quasi fat tree)" },
	{ "kdor-hc", { "dor", "dfsssp" }, "dimension order, else a"
	  " deadlock-free engine" },
	{ "kdor-ghc", { "dor", "dfsssp" }, "dimension order, else a"
	  " deadlock-free engine" },
};

#define N_MLNX_ENGINES	(sizeof(mlnx_engines) / sizeof(mlnx_engines[0]))

static const char *nearest_engine(size_t e)
{
	for (size_t j = 0; j < 3 && mlnx_engines[e].nearest[j]; j++)
		if (routing_find(mlnx_engines[e].nearest[j]))
			return mlnx_engines[e].nearest[j];
	return "minhop";
}

static void append(char *buf, size_t len, size_t *used, const char *s,
		   size_t n)
{
	if (*used + n + 1 > len)
		n = len > *used + 1 ? len - *used - 1 : 0;
	memcpy(buf + *used, s, n);
	*used += n;
	buf[*used] = '\0';
}

int cfg_map_engines(const char *val, char *out, size_t outlen, char *note,
		    size_t notelen)
{
	size_t used = 0, nused = 0;
	int mapped = 0;
	const char *p = val;

	if (!outlen || !notelen)
		return 0;
	out[0] = note[0] = '\0';
	while (*p) {
		size_t n = strcspn(p, ","), e;
		const char *word = p, *to = NULL;

		for (e = 0; e < N_MLNX_ENGINES; e++)
			if (strlen(mlnx_engines[e].name) == n &&
			    !strncmp(mlnx_engines[e].name, word, n)) {
				to = nearest_engine(e);
				break;
			}
		if (used)
			append(out, outlen, &used, ",", 1);
		if (to) {
			char m[200];
			int w = snprintf(m, sizeof(m), "%s%s -> %s (%s)",
					 mapped ? ", " : "",
					 mlnx_engines[e].name, to,
					 mlnx_engines[e].why);

			append(out, outlen, &used, to, strlen(to));
			if (w > 0)
				append(note, notelen, &nused, m,
				       (size_t)w < sizeof(m) ? (size_t)w :
				       sizeof(m) - 1);
			mapped = 1;
		} else {
			append(out, outlen, &used, word, n);
		}
		p += n + (p[n] == ',');
	}
	if (mapped) {
		static const char tail[] = ": Mellanox OpenSM 5.x's engine"
			" name, read as ibsm's nearest engine";

		append(note, notelen, &nused, tail, sizeof(tail) - 1);
	}
	return mapped;
}
