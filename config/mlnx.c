/*
 * mlnx.c - the keys and routing engine names of Mellanox (NVIDIA) OpenSM
 * 5.x that OpenSM 3.3.23 does not have (conf.h: cfg_mlnx_key,
 * cfg_map_engines).
 *
 * MLNX_OFED's OpenSM writes some 200 keys OpenSM 3.3.23 does not know
 * (its `opensm -c` output, the keys of NVIDIA's "UFM Subnet Manager
 * Default Properties" appendix).  A file from it must start ibsm: each
 * key here is known by name and says once what ibsm does instead; a key
 * of that family not listed is an unknown key, a warning too.  Families
 * share one note through a trailing '*' (prefix match).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "config/conf.h"
#include "routing/routing.h"

struct mlnx_key {
	const char *name;	/* "ar_*": every key starting with "ar_" */
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
#define NOTYET	"not in ibsm; ignored"

static const struct mlnx_key mlnx_keys[] = {
	/* virtualization */
	{ "virt_enabled", VIRT },
	{ "virt_max_ports_in_process", VIRT },
	{ "virt_default_hop_limit", VIRT },
	{ "virt_*", VIRT },
	/* SHARP */
	{ "sharp_enabled", SHARP },
	{ "sharp_*", SHARP },
	{ "enable_sharp_*", SHARP },
	/* adaptive routing and SHIELD */
	{ "ar_enable", AR },
	{ "ar_mode", AR },
	{ "ar_*", AR },
	{ "shield_enable", AR },
	{ "shield_mode", AR },
	{ "enable_ar_*", AR },
	{ "adv_routing_engine", AR },
	{ "pfrn_*", AR },
	{ "rn_*", AR },
	{ "fr_*", AR },
	{ "hbf_*", HBF },
	{ "enable_hbf", HBF },
	/* health manager */
	{ "hm_*", HM },
	{ "enable_sw_health_*", HM },
	/* security keys beyond OpenSM 3.3.23's */
	{ "m_key_per_port", KEYS },
	{ "key_mgr_seed", KEYS },
	{ "cc_key_enable", KEYS },
	{ "cc_key_lease_period", KEYS },
	{ "cc_key_protect_bit", KEYS },
	{ "n2n_key_*", KEYS },
	{ "vs_key_*", KEYS },
	{ "am_key_*", KEYS },
	/* congestion control (Mellanox's own) */
	{ "cc_*", CC },
	{ "enable_cc_*", CC },
	/* threads */
	{ "routing_threads_num", THREADS },
	{ "max_threads_per_core", THREADS },
	{ "sa_threads_*", THREADS },
	/* routing options of 5.x engines */
	{ "max_cas_on_spine", "ftree's spine limit: not in ibsm; ftree balances"
	  " all CAs" },
	{ "dfp_*", "Dragonfly+ options of 5.x: not in ibsm; ignored" },
	{ "lids_per_port", NOTYET },
	{ "master_sm_lid", "ibsm gives its own port a LID like any other port"
	  " (guid2lid keeps it across restarts)" },
	{ "offsweep_balancing_*", "ibsm re-balances on a heavy sweep only" },
	{ "fdr10_*", "FDR10 is a Mellanox link speed ibsm neither enables nor"
	  " disables" },
	{ "enable_inc_mc_routing", "ibsm computes multicast trees per group"
	  " on every change" },
	{ "max_seq_redisc", "ibsm re-discovers on every heavy sweep" },
	{ "rereg_on_guid_migr", NOTYET },
	{ "aguid_*", "ibsm does not manage alias GUIDs" },
	{ "sm_assign_guid_func", "ibsm does not manage alias GUIDs" },
	{ "osm_stats_*", "ibsm's statistics are on its metrics endpoint"
	  " (metrics_listen) and ibsmctl" },
	{ "service_name2key_map_file", NOTYET },
	{ "validate_smp", "ibsm checks every SMP it receives" },
	{ "mepi_*", NOTYET },
	{ "nvl_*", NOTYET },
};

const char *cfg_mlnx_key(const char *name)
{
	for (size_t i = 0; i < sizeof(mlnx_keys) / sizeof(mlnx_keys[0]); i++) {
		const char *p = mlnx_keys[i].name;
		size_t n = strlen(p);

		if (p[n - 1] == '*') {
			if (!strncmp(name, p, n - 1))
				return mlnx_keys[i].note;
		} else if (!strcmp(name, p)) {
			return mlnx_keys[i].note;
		}
	}
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
	{ "ar_dfp", { "dfp", "dfsssp" }, "Dragonfly+ without adaptive routing,"
	  " else a deadlock-free engine" },
	{ "pqft", { "ftree" }, "ftree (no parallel-port quasi fat tree)" },
	{ "sssp", { "dfsssp" }, "dfsssp, SSSP with deadlock avoidance" },
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
