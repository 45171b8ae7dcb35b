#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Prepare a Debian 12 (bookworm, DPDK 22.11) or Debian 13 (trixie, DPDK
# 24.11) machine to build and test vbr, then build it. Idempotent: every
# step is skipped when its result is already there.
#
#   1. install the Debian packages of the release (apt-get update only when
#      something is missing, and at most once)
#   2. fetch DPDK's driver-SDK headers from Debian's source package of exactly
#      the installed libdpdk-dev into .sdk/dpdk-<version>/include; where that
#      source is not served, copy them from $VBR_DPDK_SDK_DIR, else from
#      $VBR_DPDK_SDK_ROOT/<version>/include (default ../shared/dpdk-sdk
#      beside the repository, when there)
#   3. fetch rdma-core's private provider header (driver.h and the few
#      headers it needs that libibverbs-dev lacks) from a Debian source
#      package of rdma-core whose private ABI is the installed
#      libibverbs.so.1's, into .sdk/rdma-core-<version>/include: the swverbs
#      provider (lib/swverbs/provider.c) is built against it
#   4. meson setup + ninja in ./build (or $VBR_BUILD_DIR)
#
# Environment:
#   VBR_BUILD_DIR   build folder, relative to the repository (default: build)
#   VBR_SDK_CACHE   where the source package is downloaded (default: .sdk/cache)
#   VBR_SKIP_BUILD  set to 1 to stop after the SDK headers
#   VBR_MESON_ARGS  extra arguments for meson setup (e.g. -Dpmd=disabled)
#   VBR_DPDK_SDK_DIR  a folder with the driver-SDK headers of the installed
#                   DPDK's LTS release (../shared/dpdk-sdk/<version>/include
#                   in CI), used only where Debian's source package of the
#                   installed version cannot be had
#   VBR_DPDK_SDK_ROOT  without VBR_DPDK_SDK_DIR: a folder of such folders,
#                   <version>/include, of which the newest of the installed
#                   DPDK's LTS release is taken (default: ../shared/dpdk-sdk
#                   beside the repository, when it is there)
#   VBR_SETUP_LEAN  set to 1 to install only what building and the fast,
#                   flow, pmd and testpmd suites need (no Open vSwitch,
#                   clang, clang-format, tcpdump, tcpreplay, dpkg-dev): the
#                   Debian 13 leg of the test command (test-debian13.sh)
#   VBR_RDMA_CORE_SUITES  Debian suites whose rdma-core source may stand in
#                   for the installed version's (same private ABI), tried in
#                   order when the installed version's source is not served
#                   (default: trixie)

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${VBR_BUILD_DIR:-build}
SDK_CACHE=${VBR_SDK_CACHE:-$ROOT/.sdk/cache}

# The packages, by what needs them. Debian 12 and 13 name them alike except
# pkg-config, which is pkgconf's transitional package in 13; and in 13
# dpdk-testpmd (which the testpmd suite drives), dpdk-test and
# dpdk-test-flow-perf come with dpdk-dev, not with dpdk as in 12.
#   build: the tree, the PMD's pmdinfo, the swverbs provider's header fetch
PACKAGES_BUILD="dpdk dpdk-dev libdpdk-dev libibverbs-dev rdma-core meson
ninja-build gcc python3-pyelftools liburcu-dev xz-utils
libxdp-dev libbpf-dev libxdp1 libmnl-dev libjansson-dev"
#   the fast, flow, pmd and testpmd suites: scapy frames, ip for the netns
#   cases, stock ibv_devices/ibv_devinfo and pyverbs on the provider
PACKAGES_FAST="python3-scapy iproute2 ibverbs-utils python3-pyverbs"
#   the rest: e2e (tcpdump, tcpreplay, OVS), style, the clang builds
PACKAGES_REST="clang tcpdump tcpreplay dpkg-dev clang-format
openvswitch-switch-dpdk"

# The Debian release: bookworm (12) and trixie (13) are known; another
# takes trixie's names, said.
DEBIAN_CODENAME=$(sed -n 's/^VERSION_CODENAME=//p' /etc/os-release \
		  2>/dev/null | tr -d '"' || true)
case $DEBIAN_CODENAME in
bookworm) PKG_CONFIG_PKG=pkg-config ;;
trixie) PKG_CONFIG_PKG=pkgconf ;;
*)
	printf '==> packages: Debian release "%s" is not known (%s):%s\n' \
	       "$DEBIAN_CODENAME" "bookworm and trixie are" \
	       " trying trixie's package names"
	PKG_CONFIG_PKG=pkgconf
	;;
esac
PACKAGES="$PACKAGES_BUILD $PKG_CONFIG_PKG $PACKAGES_FAST"
if [ "${VBR_SETUP_LEAN:-0}" != 1 ]; then
	PACKAGES="$PACKAGES $PACKAGES_REST"
fi

# The driver-SDK headers, as paths inside DPDK's source tree.
SDK_HEADERS="lib/eal/include/bus_driver.h lib/eal/include/dev_driver.h
lib/ethdev/ethdev_driver.h lib/ethdev/ethdev_vdev.h lib/ethdev/ethdev_pci.h
lib/ethdev/rte_flow_driver.h
drivers/bus/vdev/bus_vdev_driver.h"
# From 25.11 libdpdk-dev no longer installs these either.
SDK_HEADERS_25_11="lib/ethdev/rte_mtr_driver.h lib/ethdev/rte_tm_driver.h"

export DEBIAN_FRONTEND=noninteractive
APT_UPDATED=0

step()
{
	printf '==> %s\n' "$*"
}

die()
{
	printf 'setup.sh: error: %s\n' "$*" >&2
	exit 1
}

need_root()
{
	[ "$(id -u)" -eq 0 ] || die "$1: run this script as root"
}

apt_update_once()
{
	if [ "$APT_UPDATED" -eq 0 ]; then
		step "apt-get update"
		apt-get update -q || die "apt-get update failed"
		APT_UPDATED=1
	fi
}

# --- 1. packages ------------------------------------------------------------

missing_packages()
{
	local p st

	for p in $PACKAGES; do
		st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
		[ "$st" = "install ok installed" ] || printf '%s ' "$p"
	done
}

install_packages()
{
	local missing

	missing=$(missing_packages)
	if [ -z "$missing" ]; then
		step "packages: all installed"
		return
	fi
	need_root "packages missing ($missing)"
	step "packages: installing $missing"
	apt_update_once
	# Debian's postinst of openvswitch-switch starts ovsdb-server and
	# ovs-vswitchd: no package may start a service here (the tests run
	# their own daemons), so a policy-rc.d says no while apt runs.
	no_service_starts
	# shellcheck disable=SC2086
	apt-get install -y -q --no-install-recommends $missing ||
		die "apt-get install failed for: $missing"
	services_back
}

POLICY_RC=/usr/sbin/policy-rc.d
POLICY_RC_OURS=0

no_service_starts()
{
	[ -e "$POLICY_RC" ] && return
	printf '#!/bin/sh\n# devtools/setup.sh: no service starts\nexit 101\n' \
		>"$POLICY_RC" && chmod 755 "$POLICY_RC" && POLICY_RC_OURS=1
	trap services_back EXIT
}

services_back()
{
	if [ "$POLICY_RC_OURS" -eq 1 ]; then
		rm -f "$POLICY_RC"
		POLICY_RC_OURS=0
	fi
}

# --- 2. driver-SDK headers ---------------------------------------------------

has_deb_src()
{
	grep -hqsE '^[[:space:]]*deb-src[[:space:]]' /etc/apt/sources.list \
		/etc/apt/sources.list.d/*.list && return 0
	grep -hqsE '^[[:space:]]*Types:.*deb-src' /etc/apt/sources.list.d/*.sources
}

# Print a deb-src copy of the Debian entries of a deb822 .sources file or of
# a one-line-style sources.list.
add_deb_src()
{
	local out=/etc/apt/sources.list.d/vbr-deb-src.sources
	local list=/etc/apt/sources.list.d/vbr-deb-src.list

	if [ -f /etc/apt/sources.list.d/debian.sources ]; then
		step "adding $out (deb-src copy of debian.sources)"
		sed -E 's/^([[:space:]]*Types:).*/\1 deb-src/' \
			/etc/apt/sources.list.d/debian.sources >"$out"
	elif [ -f /etc/apt/sources.list ] &&
	     grep -qE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list; then
		step "adding $list (deb-src copy of sources.list)"
		grep -E '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list |
			sed -E 's/^([[:space:]]*)deb([[:space:]])/\1deb-src\2/' >"$list"
	else
		die "no Debian apt source found to derive a deb-src entry from;" \
		    "add a deb-src line for bookworm by hand"
	fi
	APT_UPDATED=0
	apt_update_once
}

src_version_available()
{
	local out

	# no pipe into grep -q: with pipefail, SIGPIPE would fail the test
	out=$(apt-cache showsrc dpdk 2>/dev/null || true)
	grep -Fqx "Version: $1" <<<"$out"
}

# The driver-SDK headers from a folder (VBR_DPDK_SDK_DIR: DPDK's own files,
# <version>/include) where the source package is out of reach: the same
# LTS release, the point release said when it differs.
sdk_from_dir()
{
	local dir=$1 up=$2 full=$3 sdk=$4 h f dver

	# relative: to the current folder, else to the repository
	case $dir in
	/*) ;;
	*) [ -d "$dir" ] || dir=$ROOT/$dir ;;
	esac
	[ -d "$dir" ] || die "SDK headers folder $1 is not a folder"
	dver=$(basename "$(dirname "$(cd "$dir" && pwd)")")
	[ "${dver%.*}" = "${up%.*}" ] ||
		die "$dir holds DPDK $dver's headers, not" \
		    "those of the installed $up's LTS release (${up%.*})"
	rm -rf "$sdk/include"
	mkdir -p "$sdk/include"
	for h in $SDK_HEADERS_HERE; do
		f=$dir/$(basename "$h")
		[ -f "$f" ] || die "$dir has no $(basename "$h")"
		install -m 0644 "$f" "$sdk/include/"
	done
	printf '%s\n' "$full" >"$sdk/stamp"
	printf '%s (DPDK %s)\n' "$dir" "$dver" >"$sdk/origin"
	step "SDK headers: Debian's source package dpdk=$full is not served:" \
	     "copied from $dir (DPDK $dver) into $sdk/include"
	[ "$dver" = "$up" ] ||
		step "SDK headers: WARNING: DPDK $dver's driver-SDK headers for" \
		     "the installed $up: the same LTS release keeps the" \
		     "driver structures stable, but not the same point release"
}

# The folder of driver-SDK headers to take where the source package is out
# of reach: $VBR_DPDK_SDK_DIR, else the newest <version>/include of the
# installed DPDK's LTS release ($1, e.g. 24.11.8) under $VBR_DPDK_SDK_ROOT
# or ../shared/dpdk-sdk beside the repository; nothing when there is none.
sdk_fallback_dir()
{
	local series=${1%.*} root d best=""

	if [ -n "${VBR_DPDK_SDK_DIR:-}" ]; then
		printf '%s\n' "$VBR_DPDK_SDK_DIR"
		return
	fi
	root=${VBR_DPDK_SDK_ROOT:-$ROOT/../shared/dpdk-sdk}
	case $root in
	/*) ;;
	*) [ -d "$root" ] || root=$ROOT/$root ;;
	esac
	for d in "$root/$series".*/include; do
		[ -d "$d" ] || continue
		if [ -z "$best" ] ||
		   [ "$(printf '%s\n%s\n' "$best" "$d" | sort -V | tail -n 1)" = "$d" ]; then
			best=$d
		fi
	done
	[ -z "$best" ] || printf '%s\n' "$best"
}

fetch_sdk_headers()
{
	local full up pc sdk inc stamp orig tmp h fallback

	full=$(dpkg-query -W -f='${Version}' libdpdk-dev 2>/dev/null) ||
		die "libdpdk-dev is not installed"
	up=${full#*:}
	up=${up%-*}
	pc=$(pkg-config --modversion libdpdk) ||
		die "pkg-config does not find libdpdk"
	[ "$up" = "$pc" ] ||
		die "libdpdk-dev $full does not match pkg-config libdpdk $pc"

	SDK_HEADERS_HERE=$SDK_HEADERS
	if [ "$(printf '25.11\n%s\n' "$up" | sort -V | head -n 1)" = 25.11 ]; then
		SDK_HEADERS_HERE="$SDK_HEADERS $SDK_HEADERS_25_11"
	fi
	fallback=$(sdk_fallback_dir "$up")
	sdk=$ROOT/.sdk/dpdk-$up
	inc=$sdk/include
	stamp=$sdk/stamp
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$full" ]; then
		local ok=1
		for h in $SDK_HEADERS_HERE; do
			[ -f "$inc/$(basename "$h")" ] || ok=0
		done
		if [ "$ok" -eq 1 ]; then
			step "SDK headers: $inc (dpdk $full, from" \
			     "$(cat "$sdk/origin" 2>/dev/null ||
			        echo "its source package")) already there"
			return
		fi
	fi

	step "SDK headers: fetching from Debian source package dpdk=$full"
	mkdir -p "$SDK_CACHE"
	orig=$SDK_CACHE/dpdk_$up.orig.tar.xz
	if [ ! -f "$orig" ] || [ ! -f "$SDK_CACHE/dpdk_$full.dsc" ]; then
		if [ -n "$fallback" ] && [ "$(id -u)" -ne 0 ] &&
		   ! src_version_available "$full"; then
			sdk_from_dir "$fallback" "$up" "$full" "$sdk"
			return
		fi
		need_root "downloading the dpdk source package"
		if ! src_version_available "$full"; then
			has_deb_src || add_deb_src
			src_version_available "$full" || {
				APT_UPDATED=0
				apt_update_once
			}
		fi
		if ! src_version_available "$full" && [ -n "$fallback" ]; then
			sdk_from_dir "$fallback" "$up" "$full" "$sdk"
			return
		fi
		src_version_available "$full" ||
			die "Debian source package dpdk=$full is not available" \
			    "from the configured deb-src entries (apt-cache showsrc dpdk" \
			    "lists: $(apt-cache showsrc dpdk 2>/dev/null |
				      sed -n 's/^Version: //p' | tr '\n' ' ')):" \
			    "the headers must come from exactly the installed version"
		# The index may list a version whose files the archive does
		# not serve (Debian 13's 24.11 here): then the folder.
		if ! (cd "$SDK_CACHE" &&
		      apt-get source -q --download-only "dpdk=$full"); then
			[ -n "$fallback" ] ||
				die "apt-get source --download-only dpdk=$full" \
				    "failed (set VBR_DPDK_SDK_DIR or" \
				    "VBR_DPDK_SDK_ROOT, see the head of this script)"
			sdk_from_dir "$fallback" "$up" "$full" "$sdk"
			return
		fi
	else
		step "SDK headers: using cached $orig"
	fi
	[ -f "$orig" ] || die "$orig missing after download (version mismatch?)"
	grep -Fqx "Version: $full" "$SDK_CACHE/dpdk_$full.dsc" ||
		die "$SDK_CACHE/dpdk_$full.dsc does not describe version $full"

	tmp=$(mktemp -d)
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" EXIT
	local pats=()
	for h in $SDK_HEADERS_HERE; do
		pats+=("*/$h")
	done
	tar -xJf "$orig" -C "$tmp" --wildcards "${pats[@]}" ||
		die "cannot extract the SDK headers from $orig"
	mkdir -p "$inc"
	for h in $SDK_HEADERS_HERE; do
		local f
		f=$(find "$tmp" -path "*/$h" -type f | head -n 1)
		[ -n "$f" ] || die "$h not found in $orig"
		install -m 0644 "$f" "$inc/"
	done
	rm -rf "$tmp"
	trap - EXIT
	printf '%s\n' "$full" >"$stamp"
	printf 'Debian source package dpdk=%s\n' "$full" >"$sdk/origin"
	step "SDK headers: installed into $inc"
}

# --- 3. rdma-core's private provider header ----------------------------------

# What the provider needs from rdma-core's source, as paths in its tree, and
# where each goes under .sdk/rdma-core-<version>/include. driver.h and what it
# includes that Debian's libibverbs-dev does not install; kern-abi.h's
# kernel-abi/ib_user_verbs.h is generated from the tree's kernel header by
# the tree's own script, as rdma-core's build does.
RDMA_SDK_FILES="libibverbs/driver.h:infiniband
libibverbs/kern-abi.h:infiniband
libibverbs/cmd_ioctl.h:infiniband
ccan/build_assert.h:ccan
ccan/check_type.h:ccan
ccan/container_of.h:ccan
ccan/list.h:ccan
ccan/str.h:ccan
ccan/str_debug.h:ccan
util/compiler.h:util
kernel-headers/rdma/ib_user_verbs.h:rdma
kernel-headers/rdma/rdma_user_ioctl_cmds.h:rdma"

# The NN of the verbs_register_driver_NN the installed libibverbs.so.1
# exports (its private provider ABI), or nothing.
installed_pabi()
{
	local lib

	lib=$(gcc -print-file-name=libibverbs.so.1)
	[ -f "$lib" ] || return 0
	objdump -T "$lib" 2>/dev/null |
		sed -n 's/.*[[:space:]]verbs_register_driver_\([0-9][0-9]*\)$/\1/p' |
		head -n 1
}

# The mirror of the system's Debian entries (for the private apt lists).
debian_mirror()
{
	local uri

	uri=$(sed -n 's/^[[:space:]]*URIs:[[:space:]]*\(http[^[:space:]]*\/debian\)\/*[[:space:]]*$/\1/p' \
		/etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
	[ -n "$uri" ] || uri=$(sed -n 's/^[[:space:]]*deb[[:space:]]\+\(http[^[:space:]]*\/debian\)\/*[[:space:]].*/\1/p' \
		/etc/apt/sources.list 2>/dev/null | head -n 1)
	printf '%s\n' "${uri:-http://deb.debian.org/debian}"
}

# The private ABI of an rdma-core orig tarball (its CMakeLists.txt).
tarball_pabi()
{
	tar -xzf "$1" -O --wildcards '*/CMakeLists.txt' 2>/dev/null |
		sed -n 's/^set(IBVERBS_PABI_VERSION "\([0-9]*\)").*/\1/p' |
		head -n 1
}

# Download the orig tarball of rdma-core=<version> with apt-get's options
# $APT_OPTS into $SDK_CACHE, check it against the index's SHA-256 (apt
# checks it too; the .dsc may be missing from the archive, which fails
# apt-get source after the tarball is in) and print its path.
fetch_rdma_orig()
{
	local ver=$1 up sha orig

	up=${ver#*:}
	up=${up%-*}
	orig=$SDK_CACHE/rdma-core_$up.orig.tar.gz
	# shellcheck disable=SC2086
	sha=$(apt-cache $APT_OPTS showsrc rdma-core 2>/dev/null |
		awk -v ver="$ver" '/^$/ { v = 0 }
		     /^Version: / { v = ($2 == ver) }
		     /^Checksums-Sha256:/ { s = 1; next } /^[^ ]/ { s = 0 }
		     v && s && $3 ~ /\.orig\.tar\.gz$/ { print $1; exit }')
	[ -n "$sha" ] || return 1
	if [ ! -f "$orig" ] || ! echo "$sha  $orig" | sha256sum -c --quiet - \
			>/dev/null 2>&1; then
		rm -f "$orig"
		# shellcheck disable=SC2086
		(cd "$SDK_CACHE" && apt-get $APT_OPTS source -q --download-only \
			"rdma-core=$ver" >/dev/null 2>&1) || true
	fi
	[ -f "$orig" ] && echo "$sha  $orig" | sha256sum -c --quiet - \
		>/dev/null 2>&1 || return 1
	printf '%s\n' "$orig"
}

# Lay out the provider's headers from an orig tarball into $1/include.
install_rdma_sdk()
{
	local orig=$1 sdk=$2 pabi=$3 tmp entry f dir src pats=()

	tmp=$(mktemp -d)
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" EXIT
	for entry in $RDMA_SDK_FILES buildlib/make_abi_structs.py:-; do
		pats+=("*/${entry%%:*}")
	done
	tar -xzf "$orig" -C "$tmp" --wildcards "${pats[@]}" ||
		die "cannot extract the provider headers from $orig"
	rm -rf "$sdk"
	for entry in $RDMA_SDK_FILES; do
		f=${entry%%:*}
		dir=$sdk/include/${entry##*:}
		src=$(find "$tmp" -path "*/$f" -type f | head -n 1)
		[ -n "$src" ] || die "$f not found in $orig"
		mkdir -p "$dir"
		install -m 0644 "$src" "$dir/"
	done
	mkdir -p "$sdk/include/kernel-abi"
	/usr/bin/python3 "$(find "$tmp" -path '*/buildlib/make_abi_structs.py' |
			    head -n 1)" "$sdk/include/rdma/ib_user_verbs.h" \
		"$sdk/include/kernel-abi/ib_user_verbs.h" ||
		die "make_abi_structs.py failed on $orig"
	# rdma-core's config.h, the part driver.h reads: Debian builds with
	# IOCTL_MODE both.
	cat >"$sdk/include/config.h" <<-EOF
	/* Written by devtools/setup.sh from $(basename "$orig"). */
	#define IBVERBS_PABI_VERSION $pabi
	#define VERBS_IOCTL_ONLY 0
	#define VERBS_WRITE_ONLY 0
	#define HAVE_FUNC_ATTRIBUTE_ALWAYS_INLINE 1
	EOF
	printf '%s\n' "$pabi" >"$sdk/pabi"
	rm -rf "$tmp"
	trap - EXIT
}

fetch_rdma_core_sdk()
{
	local pabi full d orig ver suite mirror apt_dir candidates up got

	pabi=$(installed_pabi)
	if [ -z "$pabi" ]; then
		step "rdma-core provider header: the installed libibverbs.so.1" \
		     "exports no verbs_register_driver_NN: no swverbs provider"
		return
	fi
	for d in "$ROOT"/.sdk/rdma-core-*/; do
		if [ ! -f "$d/pabi" ] || [ "$(cat "$d/pabi")" != "$pabi" ] ||
		   [ ! -f "$d/include/infiniband/driver.h" ] ||
		   [ ! -f "$d/include/kernel-abi/ib_user_verbs.h" ]; then
			continue
		fi
		step "rdma-core provider header: ${d%/} (private ABI $pabi)" \
		     "already there"
		return
	done
	need_root "downloading rdma-core's source package"
	mkdir -p "$SDK_CACHE"
	full=$(dpkg-query -W -f='${Version}' libibverbs-dev 2>/dev/null) ||
		die "libibverbs-dev is not installed"
	# The installed version's source first (the system's deb-src entries),
	# then the suites' (a private apt list, the system's left as it was).
	has_deb_src || add_deb_src
	APT_OPTS=""
	candidates="$full"
	got=""
	for ver in $candidates; do
		step "rdma-core provider header: trying rdma-core=$ver"
		orig=$(fetch_rdma_orig "$ver") || continue
		[ "$(tarball_pabi "$orig")" = "$pabi" ] && got=$orig && break
	done
	if [ -z "$got" ]; then
		mirror=$(debian_mirror)
		apt_dir=$SDK_CACHE/apt-rdma-core
		mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
		: >"$apt_dir/sources.list"
		for suite in ${VBR_RDMA_CORE_SUITES:-trixie}; do
			printf 'deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n' \
				"$mirror" "$suite" >>"$apt_dir/sources.list"
		done
		APT_OPTS="-o Dir::Etc::SourceList=$apt_dir/sources.list
			  -o Dir::Etc::SourceParts=/nonexistent
			  -o Dir::State::Lists=$apt_dir/lists
			  -o Dir::Cache=$apt_dir/cache"
		step "rdma-core provider header: apt-get update of deb-src" \
		     "${VBR_RDMA_CORE_SUITES:-trixie} (a private list)"
		# shellcheck disable=SC2086
		apt-get -q $APT_OPTS update >/dev/null ||
			die "apt-get update of the deb-src list $apt_dir/sources.list failed"
		# shellcheck disable=SC2086
		candidates=$(apt-cache $APT_OPTS showsrc rdma-core 2>/dev/null |
			     sed -n 's/^Version: //p')
		for ver in $candidates; do
			step "rdma-core provider header: trying rdma-core=$ver"
			orig=$(fetch_rdma_orig "$ver") || continue
			[ "$(tarball_pabi "$orig")" = "$pabi" ] && got=$orig &&
				break
			step "rdma-core=$ver: private ABI $(tarball_pabi "$orig")," \
			     "not $pabi"
		done
	fi
	[ -n "$got" ] ||
		die "no rdma-core source package of private ABI $pabi (that of" \
		    "the installed libibverbs.so.1) could be fetched: tried" \
		    "$full and the suites ${VBR_RDMA_CORE_SUITES:-trixie}"
	up=$(basename "$got" .orig.tar.gz)
	up=${up#rdma-core_}
	install_rdma_sdk "$got" "$ROOT/.sdk/rdma-core-$up" "$pabi"
	step "rdma-core provider header: installed into" \
	     ".sdk/rdma-core-$up/include (private ABI $pabi)"
}

# --- 4. build ----------------------------------------------------------------

build()
{
	cd "$ROOT"
	if [ -f "$BUILD_DIR/meson-private/coredata.dat" ]; then
		# A folder built before the PMD was named on the DPDK ABI:
		# drivers/librte_net_vbr.so was a target then and is a link
		# meson makes at setup now. While ninja's log names the old
		# target, every regeneration's cleandead deletes the link: out
		# of the log with it (recompact drops what is gone), then the
		# setup below makes the link again.
		if [ -f "$BUILD_DIR/.ninja_log" ] &&
		   awk -F'\t' '$4 == "drivers/librte_net_vbr.so" { f = 1 }
			       END { exit !f }' "$BUILD_DIR/.ninja_log"; then
			step "$BUILD_DIR: ninja's log forgets the unversioned PMD"
			rm -f "$BUILD_DIR/drivers/librte_net_vbr.so"
			ninja -C "$BUILD_DIR" -t recompact ||
				die "ninja -t recompact in $BUILD_DIR failed"
		fi
		step "meson setup --reconfigure $BUILD_DIR"
		# shellcheck disable=SC2086
		meson setup --reconfigure ${VBR_MESON_ARGS:-} "$BUILD_DIR" ||
			die "meson setup --reconfigure $BUILD_DIR failed"
	else
		step "meson setup $BUILD_DIR"
		# shellcheck disable=SC2086
		meson setup ${VBR_MESON_ARGS:-} "$BUILD_DIR" || die "meson setup $BUILD_DIR failed"
	fi
	step "ninja -C $BUILD_DIR"
	ninja -C "$BUILD_DIR" || die "build failed"
}

install_packages
fetch_sdk_headers
fetch_rdma_core_sdk
if [ "${VBR_SKIP_BUILD:-0}" != 1 ]; then
	build
fi
step "setup done"
