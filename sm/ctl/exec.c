/*
 * exec.c - the control socket's commands: a parsed request carried out
 * and answered (ctl_execute()), and the list `help` prints.  The
 * commands run on the loop like a signal's handler; each family is in a
 * file of its own (cmd_*.c), the health and counter commands in
 * sm/health/health_ctl.c and sm/perf/perf_out.c.
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>

#include "sm/ctl/ctl.h"
#include "sm/ctl/ctl_int.h"
#include "sm/health/health.h"
#include "sm/perf/perf.h"
#include "sm/sm.h"

/* health, events, topology save, port enable (sm/health/health_ctl.c) */
static int cmd_health(struct sm *sm, const struct ctl_request *req,
		      struct ctl_answer *a)
{
	char msg[700] = "";
	int rc = -EINVAL;

	switch (req->cmd) {
	case CTL_CMD_HEALTH:
		rc = sm_health_ctl_report(sm, req->json, a, msg, sizeof(msg));
		break;
	case CTL_CMD_EVENTS:
		rc = sm_health_ctl_events(sm, req->since_ago >= 0 ?
					  ev_time() - req->since_ago : req->since,
					  req->json, a, msg, sizeof(msg));
		break;
	case CTL_CMD_TOPO_SAVE:
		rc = sm_health_ctl_topo_save(sm, req->path, a, msg, sizeof(msg));
		break;
	case CTL_CMD_PORT_ENABLE:
		if (req->guid)
			log_info("control socket: port enable 0x%016" PRIx64
				 " port %u", req->guid, req->port);
		else
			log_info("control socket: port enable LID %u port %u",
				 req->lid, req->port);
		rc = sm_health_ctl_port_enable(sm, req->guid, req->lid, req->port,
					       a, msg, sizeof(msg));
		break;
	default:
		break;
	}
	return ctl_finish(a, rc == 0, "%s", msg);
}

static int cmd_help(struct ctl_answer *a)
{
	ctl_line_add(a, "status                 state, sweeps, timings, counts");
	ctl_line_add(a, "resweep [heavy|light]  ask for a sweep (default heavy)");
	ctl_line_add(a, "reroute                heavy sweep, every LFT sent whole");
	ctl_line_add(a, "loglevel LEVEL         err, warn, info or debug, or"
		     " OpenSM's -D flags (0x03: info)");
	ctl_line_add(a, "reload [force]         as SIGHUP, with its outcome; force:"
		     " also a partitions file that drops every partition");
	ctl_line_add(a, "dump-config            the keys in force and their source");
	ctl_line_add(a, "sms                    every SM known from SMInfo");
	ctl_line_add(a, "routes report [json]   quality of the routes in force");
	ctl_line_add(a, "routes loads           routed load per switch port");
	ctl_line_add(a, "health [json]          fabric health: the findings in force");
	ctl_line_add(a, "events [since T] [json] the event history (T: epoch s,"
		     " UTC time or 10m ago)");
	ctl_line_add(a, "topology save FILE     the fabric as a reference topology");
	ctl_line_add(a, "port enable NODE PORT  PortPhysicalState Polling; ends"
		     " an isolation");
	ctl_line_add(a, "counters [NODE|GUID|LID[:PORT]] [errors] [json]"
		     "  port counters: totals, last increase");
	ctl_line_add(a, "qos show [json] [src END dst END [sid N] [pkey P]"
		     " [class C]]  QoS in force; a path's level and SL");
	return ctl_finish(a, true, "%s", "");
}

int ctl_execute(struct sm *sm, const struct ctl_request *req,
		struct ctl_answer *a)
{
	switch (req->cmd) {
	case CTL_CMD_STATUS:
		return ctl_cmd_status(sm, a);
	case CTL_CMD_RESWEEP:
		return ctl_cmd_resweep(sm, req->heavy, a);
	case CTL_CMD_REROUTE:
		return ctl_cmd_reroute(sm, a);
	case CTL_CMD_LOGLEVEL:
		return ctl_cmd_loglevel(sm, req->level, req->flags, a);
	case CTL_CMD_RELOAD:
		return ctl_cmd_reload(sm, req->force, a);
	case CTL_CMD_DUMP_CONFIG:
		return ctl_cmd_dump_config(sm, a);
	case CTL_CMD_HELP:
		return cmd_help(a);
	case CTL_CMD_SMS:
		return ctl_cmd_sms(sm, a);
	case CTL_CMD_ROUTES_REPORT:
		return ctl_cmd_routes_report(sm, req->json, a);
	case CTL_CMD_ROUTES_LOADS:
		return ctl_cmd_routes_loads(sm, a);
	case CTL_CMD_HEALTH:
	case CTL_CMD_EVENTS:
	case CTL_CMD_TOPO_SAVE:
	case CTL_CMD_PORT_ENABLE:
		return cmd_health(sm, req, a);
	case CTL_CMD_COUNTERS: {
		char msg[160];
		int rc = perf_ctl_counters(sm, req->target, req->errors,
					   req->json, a, msg, sizeof(msg));
		return ctl_finish(a, rc == 0, "%s", msg);
	}
	case CTL_CMD_QOS: {
		char msg[300] = "";
		int rc = ctl_qos_execute(sm, req, a, msg, sizeof(msg));
		return ctl_finish(a, rc == 0, "%s", msg);
	}
	}
	return ctl_finish(a, false, "unknown command");
}

int ctl_handle_line(struct sm *sm, const char *line, size_t len,
		    struct ctl_answer *a)
{
	struct ctl_request req;
	char err[200];

	if (ctl_parse(line, len, &req, err, sizeof(err)) < 0)
		return ctl_finish(a, false, "%s", err);
	return ctl_execute(sm, &req, a);
}
