#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The Debian 13 leg of the test command: the project's own setup, build and
# the suites fast, flow, pmd and testpmd in a Debian 13 (trixie) root, on
# Debian 13's DPDK 24.11, rdma-core 56 and gcc 14, with its stock
# dpdk-testpmd. Its last line is
#
#   N passed, N failed, N skipped
#
# counted from that meson run's testlog.json as devtools/test.sh counts
# (OK + EXPECTEDFAIL passed; FAIL, TIMEOUT, ERROR, UNEXPECTEDPASS failed;
# SKIP skipped), plus one test of its own: `meson install` puts the PMD
# into DPDK 24.11's plugin folder (pmds-25.0) and dpdk-testpmd loads it
# from there with no -d. A setup or build that fails inside counts as one
# failure. Not root, or Debian's archive out of reach: the reason, then
# "0 passed, 0 failed, 1 skipped".
#
# usage: test-debian13.sh [BUILD_DIR]     (default $VBR_BUILD_DIR or build)
#
# The root: `debootstrap --variant=minbase trixie` from Debian's archive,
# then devtools/setup.sh inside with VBR_SETUP_LEAN=1 (what building and
# those suites need) and VBR_SKIP_BUILD=1, which installs Debian 13's
# packages by their names and fetches the SDK headers (.sdk/ in the root's
# copy of the tree). That root is the cache, BUILD_DIR/debian13/root-<key>,
# the key a hash of setup.sh and of this recipe: a changed setup.sh makes
# a new one (the old goes). A run uses it read-only, under an overlay whose
# upper layer is a tmpfs: the tree (`git archive HEAD`: the committed
# tree), setup.sh again (now with its build), the tests and their files all
# go with the run.
#
# Everything runs in a mount and pid namespace of its own (unshare): /proc
# (the namespace's), /sys, /dev, fresh tmpfs on /dev/shm, /run and /tmp,
# and the DPDK SDK folder (read-only) are mounted in there only, and when
# the run ends, or is interrupted, the kernel ends every process in it and
# drops every mount. What is left on the host is the cache and the last
# run's meson logs (BUILD_DIR/debian13/meson-logs); an unfinished new root
# is removed. If debootstrap is not installed, it is installed (Debian's
# package).
#
# Environment:
#   VBR_DEBIAN_MIRROR  Debian mirror (default: the host's Debian one, else
#                   http://deb.debian.org/debian)
#   VBR_DPDK_SDK_ROOT  folder of <version>/include driver-SDK folders for
#                   24.11, which Debian's archive here does not serve the
#                   source of (default: ../shared/dpdk-sdk beside the
#                   repository); bound into the root read-only
#   VBR_DEBIAN13_TMPFS  size of the run's tmpfs (default 6g)
#   VBR_DEBIAN13_TESTS  meson test's selection instead of the four suites
#                   less dpdk-versions (the host runs it), e.g. "--suite
#                   docs" to try the docs' commands there

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SELF=$ROOT/devtools/$(basename "${BASH_SOURCE[0]}")
SUITE=trixie
# Bumped when the way the cached root is made changes.
RECIPE="minbase $SUITE lean-setup 1"
TESTS=${VBR_DEBIAN13_TESTS:-"--suite fast --suite flow --suite pmd --suite testpmd"}
# Left out of those suites here: the three-release compile check, which the
# test command runs on the host already (here it would fetch the same
# headers again, and the build has just compiled everything with 24.11 and
# GCC 14).
NOT_HERE="dpdk-versions"
IN_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

note()
{
	printf 'test-debian13: %s\n' "$*"
}

# --- inside the namespace ----------------------------------------------------

# The API file systems a DPDK process and apt need, in root $1.
mount_api()
{
	local r=$1

	mount -t proc proc "$r/proc"
	mount --rbind /sys "$r/sys"
	mount --rbind /dev "$r/dev"
	mount -t tmpfs -o mode=1777,size=1g shm "$r/dev/shm"
	mount -t tmpfs -o mode=755 run "$r/run"
	# not the overlay: tests make overlays with upper layers in /tmp
	mount -t tmpfs -o mode=1777 tmp "$r/tmp"
	mkdir -p "$r/opt/dpdk-sdk"
	if [ -d "$SDK_ROOT" ]; then
		mount --bind "$SDK_ROOT" "$r/opt/dpdk-sdk"
		mount -o remount,bind,ro "$r/opt/dpdk-sdk"
	fi
	rm -f "$r/etc/resolv.conf"
	cp -L /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null || true
}

# Run a command in root $1, from the tree's copy, with a clean environment.
in_root()
{
	local r=$1

	shift
	chroot "$r" /usr/bin/env -i PATH=$IN_PATH HOME=/root LANG=C.UTF-8 \
		TERM=dumb CI=true VBR_SETUP_LEAN=1 \
		VBR_DPDK_SDK_ROOT=/opt/dpdk-sdk \
		/bin/bash -c 'cd /vbr && "$@"' in-root "$@"
}

copy_tree()
{
	mkdir -p "$1/vbr"
	git -C "$ROOT" archive --format=tar HEAD | tar -x -C "$1/vbr"
}

# pid 1 of the namespace: without a handler a signal is not delivered.
inner_signals()
{
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
}

# Make the root in $1 (a new folder): debootstrap, then setup without build.
inner_bootstrap()
{
	local r=$1

	inner_signals
	note "debootstrap --variant=minbase $SUITE $r $MIRROR"
	debootstrap --variant=minbase "$SUITE" "$r" "$MIRROR" >"$r.log" 2>&1 || {
		tail -n 20 "$r.log" >&2
		note "debootstrap failed (log above)"
		return 2
	}
	mount_api "$r"
	copy_tree "$r"
	note "devtools/setup.sh (VBR_SETUP_LEAN=1 VBR_SKIP_BUILD=1) in the root"
	# its steps here, apt's output only when it fails
	if ! in_root "$r" env VBR_SKIP_BUILD=1 bash devtools/setup.sh \
			>"$r.log" 2>&1; then
		tail -n 40 "$r.log"
		note "setup.sh failed in the Debian 13 root"
		return 1
	fi
	grep -E '^(==>|setup.sh:)' "$r.log" || true
	in_root "$r" apt-get clean
	# keep the fetched SDK headers (.sdk/), not the tree
	find "$r/vbr" -mindepth 1 -maxdepth 1 ! -name .sdk -exec rm -rf {} +
}

# Test in an overlay over the cached root $1; summary line to fd 3.
inner_test()
{
	local lower=$1 run=$2 logs=$3 m rc log

	inner_signals
	mount -t tmpfs -o "size=${VBR_DEBIAN13_TMPFS:-6g}" leg "$run"
	mkdir "$run/upper" "$run/work" "$run/m"
	m=$run/m
	mount -t overlay leg -o "lowerdir=$lower,upperdir=$run/upper,workdir=$run/work" "$m"
	mount_api "$m"
	copy_tree "$m"
	note "devtools/setup.sh (VBR_SETUP_LEAN=1) in the root: Debian 13's" \
	     "packages, SDK headers, build"
	if ! in_root "$m" bash devtools/setup.sh; then
		note "setup.sh or the build failed in the Debian 13 root"
		echo "0 passed, 1 failed, 0 skipped" >&3
		return 0
	fi
	note "meson test $TESTS (dpdk-testpmd $(in_root "$m" dpkg-query \
	     -W -f="\${Version}" dpdk-dev))"
	# The four suites' tests but those in NOT_HERE, by name; the
	# selection of VBR_DEBIAN13_TESTS as it is.
	local sel=$TESTS
	if [ -z "${VBR_DEBIAN13_TESTS:-}" ]; then
		# shellcheck disable=SC2086
		sel=$(in_root "$m" meson test -C build --no-rebuild --list $TESTS |
		      sed -n 's|^[^ ]* / ||p' | grep -vxF "$NOT_HERE" | sort -u)
		note "$(printf '%s\n' "$sel" | wc -l) tests; not here:" $NOT_HERE
	fi
	rc=0
	# shellcheck disable=SC2086
	in_root "$m" meson test -C build --print-errorlogs --num-processes 2 \
		$sel </dev/null || rc=$?
	log=$m/vbr/build/meson-logs/testlog.json
	# meson's logs of the last run, kept on the host beside the cache
	rm -rf "$logs"
	cp -r "$m/vbr/build/meson-logs" "$logs" 2>/dev/null || true
	if [ ! -f "$log" ]; then
		note "meson test wrote no testlog.json (exit $rc)"
		echo "0 passed, 1 failed, 0 skipped" >&3
		return 0
	fi
	local ok=0
	install_check "$m" && ok=1
	/usr/bin/python3 - "$log" "$rc" "$ok" >&3 <<'PY'
import json
import sys

# the install check first
passed, failed = (1, 0) if sys.argv[3] == "1" else (0, 1)
skipped = 0
with open(sys.argv[1]) as f:
    for line in f:
        if not line.strip():
            continue
        res = json.loads(line)["result"]
        if res in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif res == "SKIP":
            skipped += 1
        else:  # FAIL, TIMEOUT, ERROR, UNEXPECTEDPASS
            failed += 1
if failed == 0 and sys.argv[2] != "0":
    failed = 1  # meson failed with no failed test (a build error)
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
}

# meson install puts the PMD into the running DPDK's plugin folder
# (RTE_EAL_PMD_PATH), and dpdk-testpmd loads it from there with no -d.
install_check()
{
	local m=$1 out

	note "install: meson install, then dpdk-testpmd with no -d"
	in_root "$m" meson install -C build --quiet >/dev/null || {
		note "install: meson install failed"
		return 1
	}
	# shellcheck disable=SC2016
	out=$(in_root "$m" bash -c '
		dir=$(echo "#include <rte_build_config.h>" |
		      gcc $(pkg-config --cflags libdpdk) -E -dM -x c - |
		      sed -n "s/^#define RTE_EAL_PMD_PATH \"\(.*\)\"$/\1/p")
		ls "$dir"/librte_net_vbr.so* || exit 1
		printf "show port info 0\nquit\n" |
		timeout 60 dpdk-testpmd --no-huge -m 512 --no-shconf --no-pci \
			--vdev net_vbr0,wire=loop -- -i --total-num-mbufs=8192
		' 2>&1 || true)
	if printf '%s\n' "$out" | grep -q 'Driver name: net_vbr'; then
		note "install: dpdk-testpmd loaded $(printf '%s\n' "$out" |
		     grep -m 1 -o '/[^ ]*/librte_net_vbr\.so[^ ]*')"
		return 0
	fi
	printf '%s\n' "$out" | tail -n 30
	note "install: dpdk-testpmd did not find net_vbr without -d"
	return 1
}

# --- the host side -----------------------------------------------------------

skip()
{
	note "$*: the Debian 13 leg is skipped"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
}

fail()
{
	note "$*"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
}

# The host's Debian mirror, as setup.sh finds it.
host_mirror()
{
	local uri

	uri=$(sed -n 's/^[[:space:]]*URIs:[[:space:]]*\(http[^[:space:]]*\/debian\)\/*[[:space:]]*$/\1/p' \
		/etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
	[ -n "$uri" ] || uri=$(sed -n 's/^[[:space:]]*deb[[:space:]]\+\(http[^[:space:]]*\/debian\)\/*[[:space:]].*/\1/p' \
		/etc/apt/sources.list 2>/dev/null | head -n 1)
	printf '%s\n' "${uri:-http://deb.debian.org/debian}"
}

UNSHARE_PID=""
NEW=""
RUN=""
SUMMARY=""

# On any exit: end the namespace (the kernel then ends its processes and
# drops its mounts), then remove what this run made on the host. The
# namespace's mounts never showed on the host, so what is below these
# folders here is plain files; a mount that does show (not made by this
# script) is unmounted first, lazily if busy, and never crossed.
# shellcheck disable=SC2317  # the EXIT trap
cleanup()
{
	local rc=$? t

	trap - EXIT INT TERM HUP
	# unshare --fork ignores INT and TERM while it waits for its child:
	# KILL it, and --kill-child=KILL kills the namespace's pid 1, which
	# ends the namespace
	if [ -n "$UNSHARE_PID" ] && kill -0 "$UNSHARE_PID" 2>/dev/null; then
		kill -KILL "$UNSHARE_PID" 2>/dev/null || true
		wait "$UNSHARE_PID" 2>/dev/null || true
	fi
	if [ -n "$NEW" ] && { [ -e "$NEW" ] || [ -e "$NEW.log" ]; }; then
		findmnt -rn -o TARGET | grep -F "$NEW/" | sort -r |
			while read -r t; do
				umount "$t" 2>/dev/null || umount -l "$t" ||
					true
			done
		rm -rf --one-file-system "$NEW" "$NEW.log"
	fi
	if [ -n "$RUN" ]; then
		if mountpoint -q "$RUN"; then
			umount "$RUN" 2>/dev/null || umount -l "$RUN" || true
		fi
		rmdir "$RUN" 2>/dev/null || true
	fi
	[ -z "$SUMMARY" ] || rm -f "$SUMMARY"
	exit "$rc"
}

# Run this script's --inner part as pid 1 of a new mount and pid namespace.
in_namespace()
{
	local rc=0

	VBR_LEG_MIRROR=$MIRROR VBR_LEG_SDK_ROOT=$SDK_ROOT \
		unshare --mount --pid --fork --kill-child=KILL \
		--propagation private -- bash "$SELF" --inner "$@" &
	UNSHARE_PID=$!
	wait "$UNSHARE_PID" || rc=$?
	UNSHARE_PID=""
	return "$rc"
}

# The host side; a function, so that bash has read all of it before it
# runs (an edit of this file during a run does not change the run).
main()
{
	local build=${1:-${VBR_BUILD_DIR:-build}} leg start key cache d rc
	local summary

	case $build in
	/*) ;;
	*) build=$ROOT/$build ;;
	esac
	leg=$build/debian13
	start=$(date +%s)

	[ "$(id -u)" -eq 0 ] ||
		skip "not root (debootstrap, chroot and mounts need it)"
	if ! command -v unshare >/dev/null || ! command -v chroot >/dev/null; then
		skip "unshare or chroot missing (util-linux, coreutils)"
	fi
	git -C "$ROOT" rev-parse -q --verify HEAD >/dev/null ||
		fail "$ROOT is not a git tree with a commit (the root gets" \
		     "git archive HEAD)"

	MIRROR=${VBR_DEBIAN_MIRROR:-$(host_mirror)}
	if ! command -v debootstrap >/dev/null; then
		note "installing debootstrap (Debian's package)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -q --no-install-recommends debootstrap \
			>/dev/null ||
		{ apt-get update -q >/dev/null &&
		  apt-get install -y -q --no-install-recommends debootstrap \
			>/dev/null; } ||
			skip "debootstrap is not installed and apt-get" \
			     "cannot install it"
	fi

	SDK_ROOT=${VBR_DPDK_SDK_ROOT:-$ROOT/../shared/dpdk-sdk}
	case $SDK_ROOT in
	/*) ;;
	*) SDK_ROOT=$ROOT/$SDK_ROOT ;;
	esac
	if [ -d "$SDK_ROOT" ]; then
		SDK_ROOT=$(cd "$SDK_ROOT" && pwd)
	else
		note "no DPDK SDK folder $SDK_ROOT: setup inside must get the" \
		     "24.11 driver-SDK headers from Debian's source package"
	fi

	# the committed setup.sh: the one the root runs
	key=$({ git -C "$ROOT" show HEAD:devtools/setup.sh; echo "$RECIPE"; } |
	      sha256sum | cut -c1-12)
	cache=$leg/root-$key
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
	mkdir -p "$leg"

	if [ ! -d "$cache" ]; then
		wget -q -T 20 -t 2 -O /dev/null "$MIRROR/dists/$SUITE/InRelease" ||
			skip "Debian's archive $MIRROR does not answer for $SUITE"
		# an older key's root, or a new one a killed run left unfinished
		for d in "$leg"/root-*; do
			[ -e "$d" ] || continue
			note "removing $d (another setup.sh or recipe)"
			rm -rf --one-file-system "$d"
		done
		note "making the Debian 13 root (cold: no $cache)"
		NEW=$cache.new
		rc=0
		in_namespace bootstrap "$NEW" || rc=$?
		case $rc in
		0) ;;
		2) skip "debootstrap of $SUITE from $MIRROR failed" ;;
		*) fail "setup.sh failed in the new Debian 13 root" ;;
		esac
		rm -f "$NEW.log"
		mv "$NEW" "$cache"
		NEW=""
		note "root cached: $cache ($(du -sh --one-file-system "$cache" |
		     cut -f1), $(($(date +%s) - start)) s)"
	else
		note "using the cached root $cache"
	fi

	# run.<pid>: each run mounts its tmpfs in its own namespace, on a
	# folder of its own (two runs may share the cache); a killed run's
	# empty folder goes with the next run
	for d in "$leg"/run.*; do
		if [ -d "$d" ] && [ ! -d "/proc/${d##*.}" ]; then
			rmdir "$d" 2>/dev/null || true
		fi
	done
	RUN=$leg/run.$$
	SUMMARY=$leg/summary.$$
	mkdir -p "$RUN"
	: >"$SUMMARY"
	in_namespace test "$cache" "$RUN" "$leg/meson-logs" 3>"$SUMMARY" ||
		true
	summary=$(tail -n 1 "$SUMMARY")
	note "$(($(date +%s) - start)) s; meson's logs: $leg/meson-logs"
	[ -n "$summary" ] ||
		fail "the run in the Debian 13 root ended with no count"
	echo "$summary"
	case $summary in
	*" 0 failed,"*) exit 0 ;;
	*) exit 1 ;;
	esac
}

if [ "${1:-}" = --inner ]; then
	# --inner bootstrap DIR | --inner test ROOT RUN LOGS: the namespace's
	# pid 1
	MIRROR=$VBR_LEG_MIRROR
	SDK_ROOT=$VBR_LEG_SDK_ROOT
	case $2 in
	bootstrap) inner_bootstrap "$3" ;;
	test) inner_test "$3" "$4" "$5" ;;
	*) exit 2 ;;
	esac
	exit
fi
main "$@"
