#!/usr/bin/env bash
# tests/pkg/install.sh VERSION DEB... - the install part of
# tests/pkg/run.sh, run by it in a private mount namespace (unshare -m).
# Overlays on /etc, /usr and /var (upper layers under $IBSM_PKG_WORK/ov)
# make every change of dpkg and the maintainer scripts land in those
# layers, which vanish with the namespace: the host is not touched, and
# the layers list exactly what the packages left behind.
# $IBSM_PKG_WORK/v2 and v3 hold the same packages as VERSION+ci1 and
# VERSION+ci2 (whose default opensm.conf differs).  PASS/FAIL lines.
set -uo pipefail

version=$1
shift
work=$IBSM_PKG_WORK
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1${2:+ ($2)}"; }

for d in etc usr var; do
	mkdir -p "$work/ov/$d.up" "$work/ov/$d.work"
	if ! mount -t overlay overlay \
		-o "lowerdir=/$d,upperdir=$work/ov/$d.up,workdir=$work/ov/$d.work" "/$d"; then
		fail throwaway-root "cannot mount an overlay on /$d"
		exit 1
	fi
done
# dpkg must not see a running systemd (there is none here, but be sure):
# no unit is started either way.
export DEBIAN_FRONTEND=noninteractive

# left: the files the packages left in the upper layers, but dpkg's own
# database and log, and the man-db cache a trigger refreshes.
left() {
	(cd "$work/ov" && find etc.up usr.up var.up \( -type f -o -type l \) |
		sed 's/^\([a-z]*\)\.up/\/\1/' |
		grep -v -e '^/var/lib/dpkg/' -e '^/var/log/' -e '^/var/cache/man/' \
			-e '^/var/cache/debconf/' -e '^/etc/ld.so.cache$' | sort)
}

if dpkg -i "$@" >"$work/dpkg-i.log" 2>&1; then
	pass dpkg-install
else
	fail dpkg-install "$(tail -n 5 "$work/dpkg-i.log")"
	exit 1
fi

# Nothing enabled or started: no unit link anywhere under /etc.
links=$(find "$work/ov/etc.up" -path '*systemd*' \( -type l -o -type f \) 2>/dev/null)
if [ -z "$links" ]; then
	pass install-enables-nothing
else
	fail install-enables-nothing "$links"
fi

out=$(/usr/sbin/ibsm --version 2>&1)
if grep -qx "ibsm $version" <<<"$out" && grep -q 'with libsystemd' <<<"$out"; then
	pass "installed-ibsm-version ($(tr '\n' ';' <<<"$out"))"
else
	fail installed-ibsm-version "$out"
fi
if out=$(/usr/sbin/ibsm -F /etc/opensm/opensm.conf --check-config 2>&1); then
	pass "installed-check-config ($(tail -n 1 <<<"$out"))"
else
	fail installed-check-config "$out"
fi
out=$(/usr/bin/ibsmctl --help 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && grep -qi usage <<<"$out" && /usr/bin/ibhost --help >/dev/null 2>&1; then
	pass installed-ibsmctl-ibhost-help
else
	fail installed-ibsmctl-ibhost-help "exit $rc: $(head -n 3 <<<"$out")"
fi
# The launcher reads the installed files: with /etc/default/opensm of
# Debian's opensm package (PORTS=ALL) or without it (one "default").
out=$(IBSM_SYSFS=/nonexistent /usr/sbin/ibsm-launch units 2>&1)
if [ -x /lib/systemd/system-generators/ibsm-generator ] &&
	grep -q 'ibsm-ports.service\|ibsm@default.service' <<<"$out"; then
	pass "installed-launcher ($out)"
else
	fail installed-launcher "$out"
fi
# The units as systemd reads them (systemd-analyze verify needs no
# running systemd); the rdma units they are ordered after may be absent.
if command -v systemd-analyze >/dev/null; then
	out=$(systemd-analyze verify /lib/systemd/system/ibsm@default.service \
		/lib/systemd/system/ibsm.target /lib/systemd/system/ibsm-ports.service 2>&1 |
		grep -v 'rdma-load-modules\|rdma-hw\|network-pre')
	if [ -z "$out" ]; then
		pass units-verify
	else
		fail units-verify "$out"
	fi
fi

# The administrator's change, then an upgrade with the same default
# (kept without a question), then one whose default changed too (kept
# with --force-confold, the new default beside it as .dpkg-dist).
conf=/etc/opensm/opensm.conf
sed -i 's/^sm_priority .*/sm_priority 7/' "$conf"
echo "# site: kept across upgrades" >>"$conf"
dpkg -i "$work"/v2/*.deb >"$work/dpkg-v2.log" 2>&1 </dev/null
rc=$?
if [ "$rc" -eq 0 ] && grep -qx 'sm_priority 7' "$conf" &&
	grep -q 'site: kept' "$conf" &&
	[ "$(dpkg-query -W -f='${Version}' ibsm)" = "$version+ci1" ]; then
	pass upgrade-keeps-changed-conf
else
	fail upgrade-keeps-changed-conf "exit $rc: $(tail -n 3 "$work/dpkg-v2.log")"
fi
dpkg -i --force-confold "$work"/v3/*.deb >"$work/dpkg-v3.log" 2>&1 </dev/null
rc=$?
if [ "$rc" -eq 0 ] && grep -qx 'sm_priority 7' "$conf" && [ -f "$conf.dpkg-dist" ] &&
	grep -q "$version+ci2: a new default" "$conf.dpkg-dist"; then
	pass upgrade-new-default-confold
else
	fail upgrade-new-default-confold "exit $rc: $(tail -n 3 "$work/dpkg-v3.log")"
fi
if /usr/sbin/ibsm -F "$conf" --check-config >/dev/null 2>&1; then
	pass upgraded-check-config
else
	fail upgraded-check-config
fi

# What the instances make at run time, for purge to remove.
mkdir -p /var/cache/ibsm/default
echo "0x0002c90300000001 0x1 0x1" >/var/cache/ibsm/default/guid2lid
echo log >/var/log/ibsm.default.log

dpkg -r ibsm ibsmctl ibhost >"$work/dpkg-r.log" 2>&1
rc=$?
got=$(left)
# (and deb-systemd-helper's note of the units, for purge)
conffiles="/etc/logrotate.d/ibsm
/etc/opensm/opensm.conf
/etc/opensm/opensm.conf.dpkg-dist
/var/cache/ibsm/default/guid2lid
/var/lib/systemd/deb-systemd-helper-enabled/ibsm.target.dsh-also"
if [ "$rc" -eq 0 ] && [ "$got" = "$conffiles" ]; then
	pass remove-leaves-conffiles-and-state-only
else
	fail remove-leaves-conffiles-and-state-only "exit $rc; left: $(tr '\n' ' ' <<<"$got")"
fi
dpkg -P ibsm ibsmctl ibhost >"$work/dpkg-p.log" 2>&1
rc=$?
got=$(left)
if [ "$rc" -eq 0 ] && [ -z "$got" ] && [ ! -e /var/log/ibsm.default.log ]; then
	pass purge-leaves-nothing
else
	fail purge-leaves-nothing "exit $rc; left: $(tr '\n' ' ' <<<"$got")"
fi
