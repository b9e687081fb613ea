/*
 * key_notes.c - what each opensm.conf key of OpenSM 3.3.23 is to ibsm
 * (conf.h: cfg_key_status), and the key table of ibsm.conf(5) built from
 * it and from config/keys.c (cfg_man_table), so that the manual cannot
 * drift from the code: tests/unit/check_config compares them.
 *
 * A key is implemented when config/keys.c flags it CFG_IMPL.  A note
 * here says more about a key: MAPPED, ibsm does the same thing its own
 * way; NA, the key has no meaning for ibsm (why); HINT, what to use
 * instead of a key ibsm reads and ignores.  A key with neither flag nor
 * note is "not implemented": read, checked, ignored with a warning.
 * Families share a note through a trailing '*' (prefix match).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "config/conf.h"

enum note_kind { MAPPED, NA, HINT };

static const struct {
	const char *name;
	enum note_kind kind;
	const char *note;
} notes[] = {
	{ "dimn_ports_file", MAPPED, "OpenSM's deprecated name of"
	  " port_search_ordering_file: sets that key" },
	{ "force_log_flush", MAPPED, "ibsm writes every log line out as it"
	  " logs it (TRUE); FALSE is not honoured" },
	{ "single_thread", NA, "ibsm has one event loop; MADs arrive through"
	  " one receive thread and routing runs on its own thread" },
	{ "event_plugin_name", NA, "ibsm loads no plugins: its events go to"
	  " the log, the control socket (ibsmctl) and the metrics endpoint"
	  " (metrics_listen)" },
	{ "event_plugin_options", NA, "ibsm loads no plugins" },
	{ "prefix_routes_file", NA, "ibsm has no IB router support: prefix"
	  " routes name routers for other subnets" },
	{ "fsync_high_avail_files", MAPPED, "ibsm always writes its files"
	  " with fsync and rename (TRUE); FALSE is not honoured" },
	{ "max_wire_smps2", MAPPED, "the adaptive SMP window: smp_window_max"
	  " is its ceiling" },
	{ "max_smps_timeout", MAPPED, "the adaptive SMP window shrinks on"
	  " timeouts and grows back on answers" },
	{ "scatter_ports", MAPPED, "ibsm's engines spread the routes over"
	  " equal ports by link load, not at random" },
	{ "guid_routing_order_no_scatter", MAPPED, "ibsm never scatters"
	  " (scatter_ports is spreading by load): the ports of"
	  " guid_routing_order_file are routed without scatter either way,"
	  " which is what TRUE asks of OpenSM" },
	{ "max_msg_fifo_timeout", MAPPED, "the SA's own overload limits"
	  " (sa_max_jobs, per-port budgets) answer BUSY instead of dropping"
	  " requests that waited" },
	{ "use_optimized_slvl", MAPPED, "the SL-to-VL tables come out the"
	  " same: ibsm sends only the tables that differ, one per port pair,"
	  " instead of one Set for all input ports" },
	{ "qos_max_vls", NA, "OpenSM 3.3.23 reads it and does nothing with"
	  " it; the VLs are max_op_vls and the SL-to-VL tables" },
	{ "qos_ca_max_vls", NA, "OpenSM 3.3.23 reads it and does nothing"
	  " with it" },
	{ "qos_sw0_max_vls", NA, "OpenSM 3.3.23 reads it and does nothing"
	  " with it" },
	{ "qos_swe_max_vls", NA, "OpenSM 3.3.23 reads it and does nothing"
	  " with it" },
	{ "qos_rtr_max_vls", NA, "OpenSM 3.3.23 reads it and does nothing"
	  " with it" },
	{ "use_ucast_cache", MAPPED, "ibsm's incremental re-route"
	  " (incremental_reroute, on by default) keeps the routes a change did"
	  " not touch; use_ucast_cache set in the file turns it on or off"
	  " unless incremental_reroute is set too" },
	{ "console", MAPPED, "ibsm has no text console: console off means no"
	  " control socket, local, loopback and socket the control socket"
	  " (ibsmctl), unless control_socket is set too" },
	{ "console_port", MAPPED, "ibsm has no text console: ibsmctl talks to"
	  " the control socket (control_socket)" },
	{ "per_module_logging_file", NA, "ibsm's log has one level for every"
	  " part (log_flags); the file is not read" },
	{ "do_mesh_analysis", NA, "an option of OpenSM's lash engine;"
	  " routing_engine lash runs ibsm's nue engine, which needs no mesh"
	  " analysis" },
	{ "lash_start_vl", NA, "an option of OpenSM's lash engine;"
	  " routing_engine lash runs ibsm's nue engine, whose layers start"
	  " at VL 0 (QoS shares the VLs: qos TRUE)" },
	{ "drop_event_subscriptions", MAPPED, "ibsm removes the"
	  " subscriptions (InformInfo) of a port that leaves the fabric at"
	  " the sweep that finds it gone (TRUE), so that they cannot fill"
	  " the table; FALSE is not honoured.  A standby holds the"
	  " subscriptions the master's copy gave it" },
	{ "long_transaction_timeout", NA, "OpenSM's timeout for its"
	  " optimized SLtoVLMappingTable Set (use_optimized_slvl), which"
	  " ibsm does not send: its transactions take transaction_timeout" },
	{ "congestion_control", HINT, "ibsm does not configure congestion"
	  " control" },
	{ "cc_*", HINT, "ibsm does not configure congestion control" },
	{ "sa_db_file", HINT, "ibsm's standby copy (sm/ha) carries the SA"
	  " state to a standby SM instead" },
	{ "sa_db_dump", HINT, "ibsm's standby copy (sm/ha) carries the SA"
	  " state to a standby SM instead" },
	{ "node_name_map_name", HINT, "infiniband-diags' node-name-map: its"
	  " names stand for the nodes' descriptions in the log, the dumps,"
	  " ibsmctl and the health findings (the SA keeps the real ones)" },
};

#define N_NOTES	(sizeof(notes) / sizeof(notes[0]))

static int find_note(const char *name)
{
	for (size_t i = 0; i < N_NOTES; i++) {
		size_t n = strlen(notes[i].name);

		if (notes[i].name[n - 1] == '*' ?
		    !strncmp(name, notes[i].name, n - 1) :
		    !strcmp(name, notes[i].name))
			return (int)i;
	}
	return -1;
}

enum cfg_status cfg_key_status(const struct cfg_key *k, const char **note)
{
	int i = find_note(k->name);

	*note = i >= 0 ? notes[i].note : NULL;
	if (i >= 0 && notes[i].kind == MAPPED)
		return CFG_ST_MAPPED;
	if (k->flags & CFG_IMPL)
		return CFG_ST_IMPL;
	if (i >= 0 && notes[i].kind == NA)
		return CFG_ST_NA;
	return CFG_ST_IGNORED;
}

/* Text for roff: a backslash doubled, a leading '.' or '\'' escaped. */
static void roff(FILE *fp, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", fp);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", fp);
		else if (*s == '-')
			fputs("\\-", fp);
		else
			fputc(*s, fp);
	}
}

int cfg_man_table(FILE *fp)
{
	static const char *const word[] = {
		[CFG_ST_IMPL] = "implemented", [CFG_ST_MAPPED] = "mapped",
		[CFG_ST_NA] = "not applicable",
		[CFG_ST_IGNORED] = "not implemented",
	};
	size_t n, count[4] = { 0 };
	const struct cfg_key *keys = cfg_keys(&n);

	fprintf(fp, "%s\n", CFG_MAN_BEGIN);
	for (size_t i = 0; i < n; i++) {
		const char *note;
		enum cfg_status st;

		if (keys[i].flags & CFG_IBSM)
			continue;
		st = cfg_key_status(&keys[i], &note);
		count[st]++;
		fputs(".TP\n.B ", fp);
		roff(fp, keys[i].name);
		fprintf(fp, "\n%s%s", word[st], note ? ": " : "");
		if (note)
			roff(fp, note);
		fputc('\n', fp);
	}
	fprintf(fp, ".PP\n%zu keys: %zu implemented, %zu mapped, %zu not"
		" applicable, %zu not implemented.\n", count[0] + count[1] +
		count[2] + count[3], count[CFG_ST_IMPL], count[CFG_ST_MAPPED],
		count[CFG_ST_NA], count[CFG_ST_IGNORED]);
	fprintf(fp, "%s\n", CFG_MAN_END);
	return ferror(fp) ? -1 : 0;
}
