#!/usr/bin/env bash
# tools/bootstrap.sh - install what ibsm needs on Debian 12 and build it.
#
#   tools/bootstrap.sh [release|asan]
#
# Installs the missing Debian packages (apt-get, as root), runs autoreconf
# once, and builds out of tree in build/<kind>.  Prints the build directory
# on its last line of stdout.  Quiet unless something goes wrong.
set -euo pipefail

kind=${1:-release}
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

packages=(
	build-essential autoconf automake libtool pkg-config
	libibumad-dev libibmad-dev libev-dev libinih-dev check
	libmicrohttpd-dev libsodium-dev prometheus chromium
	ibsim-utils infiniband-diags opensm libopensm-dev
	python3 time procps
	libsystemd-dev debhelper lintian rpm fakeroot
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
if ((${#missing[@]})); then
	echo "bootstrap: installing ${missing[*]}" >&2
	if [ "$(id -u)" -ne 0 ]; then
		echo "bootstrap: need root to apt-get install ${missing[*]}" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

cd "$top"
if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt Makefile.in ]; then
	autoreconf -fi >&2 2>/dev/null || autoreconf -fi >&2
fi

build="$top/build/$kind"
mkdir -p "$build"
cd "$build"
case $kind in
release) conf=() ;;
asan) conf=(--enable-sanitizers) ;;
*) echo "bootstrap: unknown build kind '$kind' (release or asan)" >&2; exit 2 ;;
esac
if [ ! -f Makefile ] || [ "$top/configure" -nt config.status ]; then
	"$top/configure" -q "${conf[@]}" >&2
fi
make -s -j"$(nproc)" >&2
echo "$build"
