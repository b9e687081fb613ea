#!/usr/bin/env bash
# tests/pkg/run.sh [BUILD-DIR] - build the packages and check them as an
# administrator would use them.  Called by tests/run with its configured
# build directory (default: tools/bootstrap.sh release).  As root.
#
#   1. `make dist` in BUILD-DIR: the tarball both package builds start
#      from, so the worktree stays clean and the tarball is shown whole.
#   2. dpkg-buildpackage -us -uc -b in the unpacked tarball
#      (DEB_BUILD_OPTIONS=nocheck: the unit tests run under ASan in
#      tests/run; noopt, and -O0 for the RPM below: the step checks the
#      packaging, and unoptimised compiles take half the time); the three
#      packages are there.
#   3. lintian on the .changes: no error and no warning (the warnings
#      that are justified are overridden in debian/*.lintian-overrides
#      with the reason).
#   4. In a throw-away root: a private mount namespace (unshare -m) with
#      overlays on /etc, /usr and /var, whose upper layers collect every
#      change and vanish at the end: the host is not touched.  There:
#      dpkg -i the packages; nothing enabled or started; the installed
#      `ibsm --version`, `ibsm -F /etc/opensm/opensm.conf --check-config`,
#      `ibsmctl --help`, `ibhost --help`, `ibsm-launch list`; a changed
#      /etc/opensm/opensm.conf kept by an upgrade to a newer build (the
#      same packages repacked as VERSION+ci1, and +ci2 whose default
#      opensm.conf changed too, installed with --force-confold); dpkg -r
#      leaves the conffiles only; dpkg -P leaves nothing.
#   5. rpmbuild -ta on the tarball (when rpmbuild is installed; --nodeps:
#      the build dependencies are Debian's here) and rpm -qlp lists the
#      expected files of ibsm, ibsmctl and ibhost.
# Output: PASS/FAIL lines, the package sizes, the time of each step, and
# "N passed, M failed" last.
set -uo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-}
if [ -z "$build" ]; then
	build=$("$top/tools/bootstrap.sh" release | tail -n 1) || {
		echo "FAIL build"
		echo "0 passed, 1 failed"
		exit 1
	}
fi
passed=0
failed=0
work=$(mktemp -d "${TMPDIR:-/tmp}/ibsm-pkg.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

pass() {
	passed=$((passed + 1))
	echo "PASS $1"
}
fail() {
	failed=$((failed + 1))
	echo "FAIL $1${2:+ ($2)}"
}
# step NAME: the time since the last step
t_last=$SECONDS
step() {
	echo "-- $1: $((SECONDS - t_last)) s"
	t_last=$SECONDS
}
finish() {
	echo "${passed} passed, ${failed} failed"
	[ "$failed" -eq 0 ]
	exit
}

# 1. The tarball.
if ! make -C "$build" -s dist >"$work/dist.log" 2>&1; then
	fail make-dist "$(tail -n 5 "$work/dist.log")"
	finish
fi
version=$(sed -n 's/^PACKAGE_VERSION = //p' "$build/Makefile")
tarball=$build/ibsm-$version.tar.gz
mv "$tarball" "$work/" && tarball=$work/ibsm-$version.tar.gz
pass "make-dist ibsm-$version.tar.gz $(stat -c %s "$tarball") bytes"
step dist

# 2. The .deb packages.  Programs that are not installed (benchmarks,
# test clients) are not built.
mkdir -p "$work/deb"
tar -C "$work/deb" -xzf "$tarball"
src=$work/deb/ibsm-$version
(cd "$src" && DEB_BUILD_OPTIONS="nocheck noopt parallel=$(nproc)" \
	dpkg-buildpackage -us -uc -b) >"$work/deb.log" 2>&1
rc=$?
debs=()
for p in ibsm ibsmctl ibhost; do
	f=$work/deb/${p}_${version}_$(dpkg --print-architecture).deb
	[ -f "$f" ] && debs+=("$f")
done
if [ "$rc" -eq 0 ] && [ "${#debs[@]}" -eq 3 ]; then
	pass dpkg-buildpackage
	for f in "${debs[@]}"; do
		echo "   $(basename "$f"): $(stat -c %s "$f") bytes," \
			"$(dpkg-deb -f "$f" Installed-Size) KiB installed"
	done
else
	fail dpkg-buildpackage "exit $rc, ${#debs[@]} of 3 packages"
	grep -v "^gcc \|^ *CC \|^ *CCLD \|^ *AR " "$work/deb.log" | tail -n 25
	finish
fi
step dpkg-buildpackage

# 3. lintian.
changes=$work/deb/ibsm_${version}_$(dpkg --print-architecture).changes
lintian --allow-root --pedantic -I "$changes" >"$work/lintian.out" 2>&1
lerr=$(grep -c '^E: ' "$work/lintian.out")
lwarn=$(grep -c '^W: ' "$work/lintian.out")
linfo=$(grep -c '^[IPX]: ' "$work/lintian.out")
echo "   lintian: $lerr errors, $lwarn warnings, $linfo info/pedantic"
sed 's/^/   /' "$work/lintian.out"
if [ "$lerr" -eq 0 ] && [ "$lwarn" -eq 0 ]; then
	pass lintian
else
	fail lintian "$lerr errors, $lwarn warnings"
fi
step lintian

# 4. Install, upgrade, remove and purge in a throw-away root.
# repack DEB VERSION OUT [CHANGE-CONF]: the same package as VERSION.
repack() {
	local d=$work/repack.$$
	rm -rf "$d"
	dpkg-deb -R "$1" "$d" || return 1
	sed -i "s/^Version: .*/Version: $2/" "$d/DEBIAN/control"
	if [ -n "${4:-}" ] && [ -f "$d/etc/opensm/opensm.conf" ]; then
		echo "# $2: a new default" >>"$d/etc/opensm/opensm.conf"
		(cd "$d" && find . -path ./DEBIAN -prune -o -type f -printf '%P\n' |
			grep -v '^etc/' | sort | xargs -r md5sum >DEBIAN/md5sums)
	fi
	dpkg-deb -b --root-owner-group "$d" "$3" >/dev/null || return 1
	rm -rf "$d"
}
mkdir -p "$work/v2" "$work/v3"
for f in "${debs[@]}"; do
	repack "$f" "$version+ci1" "$work/v2/$(basename "$f")" &&
		repack "$f" "$version+ci2" "$work/v3/$(basename "$f")" change ||
		fail "repack $(basename "$f")"
done
mkdir -p "$work/ov"
IBSM_PKG_WORK=$work unshare -m --propagation private \
	bash "$top/tests/pkg/install.sh" "$version" "${debs[@]}" >"$work/install.out" 2>&1
rc=$?
cat "$work/install.out"
while read -r verdict _; do
	case $verdict in
	PASS) passed=$((passed + 1)) ;;
	FAIL) failed=$((failed + 1)) ;;
	esac
done <"$work/install.out"
grep -q '^PASS\|^FAIL' "$work/install.out" || fail install "no result (exit $rc)"
step install

# 5. The RPMs.
if ! command -v rpmbuild >/dev/null; then
	echo "   rpmbuild not installed: no RPM check (apt-get install rpm)"
	finish
fi
mkdir -p "$work/rpm"
rpmbuild -ta --nodeps --define "_topdir $work/rpm" --define "optflags -O0 -g" \
	--define "debug_package %{nil}" --define "_smp_mflags -j$(nproc)" \
	"$tarball" >"$work/rpm.log" 2>&1
rc=$?
arch=$(rpm --eval '%{_arch}')
declare -A want=(
	[ibsm]="/usr/sbin/ibsm /usr/sbin/ibsm-launch /usr/lib/systemd/system/ibsm@.service
		/usr/lib/systemd/system/ibsm-ports.service /usr/lib/systemd/system/ibsm.target
		/usr/lib/systemd/system-generators/ibsm-generator /etc/rdma/opensm.conf
		/etc/sysconfig/opensm /etc/logrotate.d/ibsm /usr/share/man/man8/ibsm.8.gz
		/usr/share/man/man5/ibsm.conf.5.gz"
	[ibsmctl]="/usr/bin/ibsmctl /usr/share/man/man8/ibsmctl.8.gz"
	[ibhost]="/usr/bin/ibhost /usr/share/man/man8/ibhost.8.gz"
)
if [ "$rc" -ne 0 ]; then
	fail rpmbuild "exit $rc"
	tail -n 20 "$work/rpm.log"
	finish
fi
pass rpmbuild
for p in ibsm ibsmctl ibhost; do
	f=$(ls "$work/rpm/RPMS/$arch/$p-$version-"*.rpm 2>/dev/null | head -n 1)
	if [ -z "$f" ]; then
		fail "rpm-$p" "no RPM"
		continue
	fi
	echo "   $(basename "$f"): $(stat -c %s "$f") bytes"
	list=$(rpm -qlp "$f" 2>/dev/null)
	missing=
	# man pages compressed or not (brp-compress: RHEL's rpm, not Debian's)
	for w in ${want[$p]}; do
		grep -qx -- "$w" <<<"$list" || grep -qx -- "${w%.gz}" <<<"$list" ||
			missing="$missing $w"
	done
	if [ -z "$missing" ]; then
		pass "rpm-qlp-$p"
	else
		fail "rpm-qlp-$p" "missing:$missing"
	fi
done
# The scriptlets apply the presets (enable nothing unknown; RHEL's
# systemd-update-helper install-system-units does the same), the package
# conflicts with RHEL's opensm (both own /etc/rdma/opensm.conf), whose
# copy here is a config file.
rpmf=$(ls "$work/rpm/RPMS/$arch/ibsm-$version-"*.rpm 2>/dev/null | head -n 1)
scripts=$(rpm -qp --scripts "$rpmf" 2>/dev/null)
conflicts=$(rpm -qp --conflicts "$rpmf" 2>/dev/null)
configs=$(rpm -qp --configfiles "$rpmf" 2>/dev/null)
if grep -q 'preset ibsm.target\|install-system-units ibsm.target' <<<"$scripts" &&
	! grep -q 'restart\|enable ' <<<"$scripts" &&
	grep -qx opensm <<<"$conflicts" &&
	grep -qx /etc/rdma/opensm.conf <<<"$configs" &&
	grep -qx /etc/sysconfig/opensm <<<"$configs"; then
	pass rpm-scriptlets-conffiles
else
	fail rpm-scriptlets-conffiles "scripts: $(tr '\n' ' ' <<<"$scripts" | cut -c1-200); conflicts: $conflicts; config: $(tr '\n' ' ' <<<"$configs")"
fi
step rpmbuild
finish
