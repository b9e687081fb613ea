#!/usr/bin/env bash
# tests/fabric/test_sweep_on_trap.sh - sweep_on_trap, with ibsim's own
# trap 128 (a switch port goes down: `Unlink`).  Light sweeps are off
# (sweep_interval 0), so only a trap can start a heavy sweep.  With the
# default (TRUE) the unlink is followed by a heavy sweep within 10 s and
# the LID of the host that left is gone from the switch's LFT (ibroute);
# with sweep_on_trap FALSE no heavy sweep follows in 5 s and the LFT
# still routes it, as OpenSM leaves it.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

T=$FAB_TMP
heavy_sweeps() {
	grep -c 'heavy sweep:' "$1/ibsm.log" 2>/dev/null || true
}

# run NAME VALUE: ibsm with sweep_on_trap VALUE; H0002 unlinked once up.
# Writes T/NAME.out: the heavy sweeps after the unlink and whether sw-b
# still routes H0002's LID ("routed" or "gone").
run() {
	local name=$1 before lid i n
	printf 'sweep_interval 0\nsweep_on_trap %s\n' "$2" >"$T/$name.conf"
	fab_sim_start "$FAB_TOPO/tiny.net" "$name" || return 1
	fab_ibsm_start H0001 "$T/$name" -F "$T/$name.conf" || return 1
	lid=$(fab_run H0002 smpquery -D portinfo 0 1 | sed -n 's/^Lid:\.*//p')
	before=$(heavy_sweeps "$T/$name")
	fab_cmd 'Unlink "H0002"[1]' >/dev/null
	for ((i = 0; i < 50; i++)); do
		[ "$(heavy_sweeps "$T/$name")" -gt "$before" ] && break
		sleep 0.1
	done
	sleep 1
	n=$(($(heavy_sweeps "$T/$name") - before))
	if fab_run H0001 ibroute -D 0,1,3 "$lid" "$lid" 2>/dev/null |
		grep -qE "^0x0*$(printf '%x' "$lid") +[0-9]+ "; then
		echo "$n routed $lid" >"$T/$name.out"
	else
		echo "$n gone $lid" >"$T/$name.out"
	fi
	fab_ibsm_stop >/dev/null
}

run on TRUE
run off FALSE
on=$(cat "$T/on.out" 2>/dev/null)
off=$(cat "$T/off.out" 2>/dev/null)
echo "    sweep_on_trap TRUE:  heavy sweeps after the unlink, sw-b's entry: $on"
echo "    sweep_on_trap FALSE: heavy sweeps after the unlink, sw-b's entry: $off"
read -r n_on r_on _ <<<"$on"
read -r n_off r_off _ <<<"$off"
fab_check "TRUE: the trap starts a heavy sweep (${n_on:-none})" test "${n_on:-0}" -ge 1
fab_check "TRUE: the host's LID leaves sw-b's LFT (${r_on:-?})" test "$r_on" = gone
fab_check "FALSE: no heavy sweep (${n_off:-?})" test "${n_off:-1}" -eq 0
fab_check "FALSE: the LFT is left as it was (${r_off:-?})" test "$r_off" = routed
fab_summary
