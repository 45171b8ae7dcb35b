#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Fetch the public headers of a DPDK LTS release from Debian's own
# libdpdk-dev package, without installing it, and print the folder they are
# in (the package's root: <root>/usr/include/dpdk, <root>/usr/lib/<triplet>/
# pkgconfig/libdpdk*.pc).
#
#   devtools/dpdk-headers.sh [--refresh] <series>     e.g. 24.11
#
# The series names the Debian suite whose libdpdk-dev is taken:
#   22.11 bookworm   24.11 trixie   25.11 sid
# (VBR_DPDK_SUITES overrides the table: "24.11:trixie 25.11:sid ...").
#
# apt runs with a private sources list and private state and cache folders
# under .sdk/cache/apt-dpdk: the system's apt configuration, lists and dpkg
# database are left as they were, and it needs no root. Only the headers and
# the pkg-config files are unpacked (dpkg-deb's file-system tarball), into
# .sdk/dpdk-<version>/deb. A series fetched once is reused with no network:
# --refresh asks Debian's archive again for the suite's current version.
# VBR_DPDK_HEADERS_CACHE names another folder than .sdk for all of it;
# VBR_DEBIAN_MIRROR another mirror than the system's Debian one.
#
# The headers libdpdk-dev's headers include from other packages are
# <bsd/string.h> (libbsd-dev, with RTE_USE_LIBBSD, which Debian sets) and
# <jansson.h> (libjansson-dev, rte_metrics_telemetry.h only); both come with
# the host's libdpdk-dev and are taken from the host.
#
# Exit status: 0 and the folder on stdout; 1 with the reason on stderr when
# Debian's archive cannot give the headers (no network, the suite has no
# libdpdk-dev of that series); 2 on a usage error; 3 when something here
# fails (a missing keyring, an unpack).

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SDK=${VBR_DPDK_HEADERS_CACHE:-$ROOT/.sdk}
SUITES=${VBR_DPDK_SUITES:-"22.11:bookworm 24.11:trixie 25.11:sid"}

usage()
{
	printf 'usage: %s [--refresh] <series>   (series: %s)\n' \
		"$(basename "$0")" "$(printf '%s ' $SUITES | sed 's/:[^ ]*//g')" >&2
	exit 2
}

note()
{
	printf 'dpdk-headers: %s\n' "$*" >&2
}

# The archive cannot give them: exit 1.
unavailable()
{
	printf 'dpdk-headers: %s\n' "$*" >&2
	exit 1
}

fail()
{
	printf 'dpdk-headers: %s\n' "$*" >&2
	exit 3
}

refresh=0
if [ "${1:-}" = --refresh ]; then
	refresh=1
	shift
fi
[ $# -eq 1 ] || usage
series=$1
suite=""
for s in $SUITES; do
	[ "${s%%:*}" = "$series" ] && suite=${s#*:}
done
[ -n "$suite" ] || usage

# The newest unpacked version of the series, or nothing.
cached()
{
	local d best=""

	for d in "$SDK"/dpdk-"$series".*/deb; do
		[ -f "$d/VERSION" ] && [ -f "$d/usr/include/dpdk/rte_version.h" ] ||
			continue
		best=$(printf '%s\n%s\n' "$best" "$d" | sed '/^$/d' | sort -V |
		       tail -n 1)
	done
	printf '%s\n' "$best"
}

have=$(cached)
if [ -n "$have" ] && [ "$refresh" -eq 0 ]; then
	note "DPDK $series: libdpdk-dev $(cat "$have/VERSION") ($suite)," \
	     "unpacked before"
	printf '%s\n' "$have"
	exit 0
fi

# The mirror of the system's Debian entries, as devtools/setup.sh finds it
# (a file that is not there is no error: a debootstrap root has only
# sources.list, a Debian 12 install only debian.sources).
mirror=$(sed -n 's/^[[:space:]]*URIs:[[:space:]]*\(http[^[:space:]]*\/debian\)\/*[[:space:]]*$/\1/p' \
	/etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1 || true)
[ -n "$mirror" ] || mirror=$(sed -n 's/^[[:space:]]*deb[[:space:]]\+\(http[^[:space:]]*\/debian\)\/*[[:space:]].*/\1/p' \
	/etc/apt/sources.list 2>/dev/null | head -n 1 || true)
mirror=${VBR_DEBIAN_MIRROR:-${mirror:-http://deb.debian.org/debian}}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || fail "$keyring missing (package debian-archive-keyring)"

apt_dir=$SDK/cache/apt-dpdk/$suite
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" \
	"$apt_dir/etc/preferences.d"
printf 'deb [signed-by=%s] %s %s main\n' "$keyring" "$mirror" "$suite" \
	>"$apt_dir/sources.list"
# A suite's Release is still checked against the keyring, but not for its
# age: sid's says it expires within a week, and a mirror that serves a
# snapshot (as here) keeps serving it after that.
APT_OPTS=(-o "Dir::Etc::SourceList=$apt_dir/sources.list"
	  -o "Dir::Etc::SourceParts=/nonexistent"
	  -o "Dir::Etc::Preferences=/nonexistent"
	  -o "Dir::Etc::PreferencesParts=$apt_dir/etc/preferences.d"
	  -o "Dir::State::Lists=$apt_dir/lists"
	  -o "Dir::State::status=/dev/null"
	  -o "Dir::Cache=$apt_dir/cache"
	  -o "APT::Sandbox::User=$(id -un)"
	  -o "Acquire::Check-Valid-Until=false")

note "DPDK $series: apt-get update of $mirror $suite (a private list)"
if ! out=$(apt-get -q "${APT_OPTS[@]}" update 2>&1) ||
   grep -qE '^(W|E): (Failed|Some index files failed)' <<<"$out"; then
	[ -n "$have" ] && {
		note "DPDK $series: $suite unreachable, keeping" \
		     "libdpdk-dev $(cat "$have/VERSION")"
		printf '%s\n' "$have"
		exit 0
	}
	unavailable "apt-get update of $mirror $suite failed (no network?):" \
	     "$(grep -E '^(W|E):' <<<"$out" | head -n 2 | tr '\n' ' ')"
fi

full=$(apt-cache "${APT_OPTS[@]}" show "libdpdk-dev/$suite" 2>/dev/null |
       sed -n 's/^Version: //p' | sort -V | tail -n 1)
[ -n "$full" ] || unavailable "$suite has no libdpdk-dev"
up=${full#*:}
up=${up%-*}
case $up in
"$series".*) ;;
*) unavailable "$suite's libdpdk-dev is $full, not DPDK $series" ;;
esac

dest=$SDK/dpdk-$up/deb
if [ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$full" ]; then
	note "DPDK $series: libdpdk-dev $full ($suite), unpacked before"
	printf '%s\n' "$dest"
	exit 0
fi

note "DPDK $series: downloading libdpdk-dev $full ($suite)"
arch=$(dpkg --print-architecture)
deb=$apt_dir/cache/archives/libdpdk-dev_${full/:/%3a}_$arch.deb
if [ ! -f "$deb" ]; then
	(cd "$apt_dir/cache/archives" &&
	 apt-get -q "${APT_OPTS[@]}" download "libdpdk-dev=$full" >/dev/null) ||
		unavailable "apt-get download libdpdk-dev=$full failed"
fi
[ -f "$deb" ] || fail "$deb missing after apt-get download"

tmp=$dest.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
dpkg-deb --fsys-tarfile "$deb" |
	tar -x -C "$tmp" --wildcards './usr/include/*' './usr/lib/*/pkgconfig/*' ||
	fail "cannot unpack $deb"
[ -f "$tmp/usr/include/dpdk/rte_version.h" ] ||
	fail "$deb has no usr/include/dpdk/rte_version.h"
printf '%s\n' "$full" >"$tmp/VERSION"
rm -rf "$dest"
mv "$tmp" "$dest"
note "DPDK $series: libdpdk-dev $full unpacked into $dest"
printf '%s\n' "$dest"
