#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Prepare a Debian 12 machine to build and test vbr, then build it.
# Idempotent: every step is skipped when its result is already there.
#
#   1. install the Debian packages (apt-get update only when something is
#      missing, and at most once)
#   2. fetch DPDK's driver-SDK headers from Debian's source package of exactly
#      the installed libdpdk-dev into .sdk/dpdk-<version>/include
#   3. meson setup + ninja in ./build (or $VBR_BUILD_DIR)
#
# Environment:
#   VBR_BUILD_DIR   build folder, relative to the repository (default: build)
#   VBR_SDK_CACHE   where the source package is downloaded (default: .sdk/cache)
#   VBR_SKIP_BUILD  set to 1 to stop after the SDK headers
#   VBR_MESON_ARGS  extra arguments for meson setup (e.g. -Dpmd=disabled)

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD_DIR=${VBR_BUILD_DIR:-build}
SDK_CACHE=${VBR_SDK_CACHE:-$ROOT/.sdk/cache}

PACKAGES="dpdk dpdk-dev libdpdk-dev libibverbs-dev rdma-core meson ninja-build
pkg-config gcc clang python3-pyelftools python3-scapy tcpdump tcpreplay
iproute2 dpkg-dev liburcu-dev clang-format xz-utils
libxdp-dev libbpf-dev libxdp1
libmnl-dev
libjansson-dev
openvswitch-switch-dpdk"

# The driver-SDK headers, as paths inside DPDK's source tree.
SDK_HEADERS="lib/eal/include/bus_driver.h lib/eal/include/dev_driver.h
lib/ethdev/ethdev_driver.h lib/ethdev/ethdev_vdev.h lib/ethdev/ethdev_pci.h
lib/ethdev/rte_flow_driver.h
drivers/bus/vdev/bus_vdev_driver.h"

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

fetch_sdk_headers()
{
	local full up pc sdk inc stamp orig tmp h

	full=$(dpkg-query -W -f='${Version}' libdpdk-dev 2>/dev/null) ||
		die "libdpdk-dev is not installed"
	up=${full#*:}
	up=${up%-*}
	pc=$(pkg-config --modversion libdpdk) ||
		die "pkg-config does not find libdpdk"
	[ "$up" = "$pc" ] ||
		die "libdpdk-dev $full does not match pkg-config libdpdk $pc"

	sdk=$ROOT/.sdk/dpdk-$up
	inc=$sdk/include
	stamp=$sdk/stamp
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$full" ]; then
		local ok=1
		for h in $SDK_HEADERS; do
			[ -f "$inc/$(basename "$h")" ] || ok=0
		done
		if [ "$ok" -eq 1 ]; then
			step "SDK headers: $inc (dpdk $full) already there"
			return
		fi
	fi

	step "SDK headers: fetching from Debian source package dpdk=$full"
	mkdir -p "$SDK_CACHE"
	orig=$SDK_CACHE/dpdk_$up.orig.tar.xz
	if [ ! -f "$orig" ] || [ ! -f "$SDK_CACHE/dpdk_$full.dsc" ]; then
		need_root "downloading the dpdk source package"
		if ! src_version_available "$full"; then
			has_deb_src || add_deb_src
			src_version_available "$full" || {
				APT_UPDATED=0
				apt_update_once
			}
		fi
		src_version_available "$full" ||
			die "Debian source package dpdk=$full is not available" \
			    "from the configured deb-src entries (apt-cache showsrc dpdk" \
			    "lists: $(apt-cache showsrc dpdk 2>/dev/null |
				      sed -n 's/^Version: //p' | tr '\n' ' ')):" \
			    "the headers must come from exactly the installed version"
		(cd "$SDK_CACHE" && apt-get source -q --download-only "dpdk=$full") ||
			die "apt-get source --download-only dpdk=$full failed"
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
	for h in $SDK_HEADERS; do
		pats+=("*/$h")
	done
	tar -xJf "$orig" -C "$tmp" --wildcards "${pats[@]}" ||
		die "cannot extract the SDK headers from $orig"
	mkdir -p "$inc"
	for h in $SDK_HEADERS; do
		local f
		f=$(find "$tmp" -path "*/$h" -type f | head -n 1)
		[ -n "$f" ] || die "$h not found in $orig"
		install -m 0644 "$f" "$inc/"
	done
	rm -rf "$tmp"
	trap - EXIT
	printf '%s\n' "$full" >"$stamp"
	step "SDK headers: installed into $inc"
}

# --- 3. build ----------------------------------------------------------------

build()
{
	cd "$ROOT"
	if [ -f "$BUILD_DIR/meson-private/coredata.dat" ]; then
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
if [ "${VBR_SKIP_BUILD:-0}" != 1 ]; then
	build
fi
step "setup done"
