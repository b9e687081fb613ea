#!/usr/bin/env bash
# tests/fabric/test_mkey.sh - what ibsm sends with M_Key protection on,
# on ibsim.  ibsim neither stores nor checks M_Keys (GUIDE), so the rules
# a port enforces are tested against a port double in check_mkey; here
# the fabric shows what ibsm sends and keeps:
#  - m_key, level 2 and a lease: every end port ibnetdiscover lists (CA
#    ports, switch port 0) is given the key, the level and the lease in a
#    PortInfo Set (ibsm's debug trace of each Set it sends), and the
#    guid2mkey file in the cache names every one of them with the key;
#  - SMPs go with a key in their header: the M_Key hook's counts in the
#    log, none of them with the default for a port it knows after the
#    first sweep;
#  - m_key_per_port: as many keys as ports, none equal to m_key;
#  - m_key 0: no key set, no guid2mkey file.
set -uo pipefail

# shellcheck source=tests/fabric/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KEY=0x00000000c0ffee01
NET=$FAB_TOPO/fat2-small.net
fab_sim_start "$NET" mkey || exit 1

# end ports as the diags see them: "GUID" of each CA port and switch
fab_run H0002 ibnetdiscover -p 2>/dev/null |
	awk '$1 == "CA" || $1 == "SW" { print $4 }' | sort -u >"$FAB_TMP/ends"
fab_check diags-list-ports test -s "$FAB_TMP/ends"

# run NAME CONF: ibsm -o with CONF and -D 0x04 (debug: every PortInfo
# Set), cache in $FAB_TMP/NAME.cache.
run() {
	printf '%s\n' "$2" >"$FAB_TMP/$1.conf"
	fab_ibsm H0001 "$FAB_TMP/$1" -F "$FAB_TMP/$1.conf" -D 0x04
	fab_check "$1-exit-clean" bash -c "! grep -q 'Sanitizer\|runtime error' '$FAB_TMP/$1.err'"
}

# 1. One key, level 2, lease 60 s.
run one "m_key $KEY
m_key_protection_level 2
m_key_lease_period 60
sweep_interval 10"
fab_check one-up grep -q "SUBNET UP" "$FAB_TMP/one.log"
keyed=$(grep -c "PortInfo Set .* mkey $KEY prot 2 lease 60" "$FAB_TMP/one.log")
unkeyed=$(grep "PortInfo Set .* mkey " "$FAB_TMP/one.log" |
	grep -vc "mkey $KEY prot 2 lease 60\|mkey 0x0000000000000000 prot 0 lease 0")
echo "    PortInfo Sets with the key, level 2, lease 60: $keyed; with another key: $unkeyed"
fab_check sets-carry-key test "$keyed" -gt 0
fab_check no-other-key test "$unkeyed" -eq 0
awk '/^0x/ { print $1 }' "$FAB_TMP/one.cache/guid2mkey" | sort -u >"$FAB_TMP/one.keyed"
fab_check guid2mkey-every-end-port diff "$FAB_TMP/ends" "$FAB_TMP/one.keyed"
fab_check guid2mkey-the-key bash -c \
	"! awk '/^0x/ && \$2 != \"$KEY\"' '$FAB_TMP/one.cache/guid2mkey' | grep -q ."
fab_check neighbors-file test -s "$FAB_TMP/one.cache/neighbors"
fab_check hook-counts grep -q "M_Key: .* SMPs with a known key" "$FAB_TMP/one.log"

# 2. The same cache again: the keys come from it.
run one "m_key $KEY
m_key_protection_level 2"
fab_check restart-up grep -q "SUBNET UP" "$FAB_TMP/one.log"
fab_check restart-keys-loaded grep -q "guid2mkey: [0-9]* M_Keys from" "$FAB_TMP/one.log"

# 3. A key per port.
run per "m_key $KEY
m_key_protection_level 1
m_key_per_port TRUE"
n_ports=$(wc -l <"$FAB_TMP/ends")
n_keys=$(awk '/^0x/ { print $2 }' "$FAB_TMP/per.cache/guid2mkey" | sort -u | wc -l)
echo "    per port: $n_keys distinct keys for $n_ports end ports"
fab_check per-port-distinct test "$n_keys" -eq "$n_ports"
fab_check per-port-not-mkey bash -c \
	"! awk '/^0x/ && \$2 == \"$KEY\"' '$FAB_TMP/per.cache/guid2mkey' | grep -q ."

# 4. m_key 0: nothing.
run off "sweep_interval 10"
fab_check off-up grep -q "SUBNET UP" "$FAB_TMP/off.log"
fab_check off-no-file test ! -e "$FAB_TMP/off.cache/guid2mkey"
fab_check off-no-key bash -c "! grep 'PortInfo Set' '$FAB_TMP/off.log' |
	grep -v 'mkey 0x0000000000000000 prot 0 lease 0' | grep -q ."
fab_summary
