#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Run a program with swverbs devices visible to the system libibverbs, as
# RDMA devices of a kernel would be: any verbs program (ibv_devinfo,
# rdma-core's tests, dpdk-testpmd with vbr's dev= ports) lists, opens and
# drives them through the swverbs provider (doc/guides/swverbs.rst,
# "swverbs as an rdma-core provider").
#
# usage: swverbs-run.sh [--dlopen] SPEC -- COMMAND [ARGS...]
#
# SPEC names the devices and their wires, as devtools/swverbs-sysfs.sh
# takes it: NAME=WIRE[+KEY=VALUE...][,NAME=WIRE...], WIRE one of loop,
# pair:<cable>, shm:<cable>, af_packet:<ifname>, af_xdp:<ifname>[:<queue>];
# e.g. swverbs0=pair:a,swverbs1=pair:a (two devices cabled to each other in
# the process) or swverbs0=loop.
#
# The command runs with SYSFS_PATH naming a tree written for it and the
# provider preloaded (LD_PRELOAD, after what is there): no root, no
# namespace and no kernel RDMA needed for in-memory wires, completion
# channels work. The tree is removed when the command ends, however it ends
# (a signal to this script goes to the command first). Exit status: the
# command's (128 + N when a signal N ended it); 2 for bad arguments, 3 when
# the provider is not built, 77 when --dlopen cannot make its namespace
# here (not root, no unshare: a test that uses it skips).
#
# --dlopen (root): the way libibverbs loads a provider in production, with
# nothing preloaded: the command runs in a mount namespace of its own whose
# /dev (an overlay, gone with the namespace) has /dev/infiniband/uverbsN
# for each device, a link to /dev/full, and libibverbs dlopen()s the
# provider named by RDMAV_DRIVERS. Completion channels cannot work there
# (ibv_create_comp_channel() is libibverbs' alone: ENOSPC), nor can a
# host's RDMA netlink be kept out: the command sees SWVERBS_DLOPEN=1.
#
# Environment:
#   SWVERBS_PROVIDER  the provider library (default: the
#                     lib/swverbs/libswverbs-rdmav<PABI>.so of the build)
#   VBR_BUILD_DIR     the build folder, relative to the repository
#                     (default: build)

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die()
{
	printf 'swverbs-run.sh: %s\n' "$2" >&2
	exit "$1"
}

DLOPEN=0
if [ "${1:-}" = --dlopen ]; then
	DLOPEN=1
	shift
fi
if [ $# -lt 3 ] || [ "$2" != "--" ]; then
	die 2 "usage: swverbs-run.sh [--dlopen] NAME=WIRE[,NAME=WIRE...] -- COMMAND [ARGS...]"
fi
SPEC=$1
shift 2

PROV=${SWVERBS_PROVIDER:-}
if [ -z "$PROV" ]; then
	build=${VBR_BUILD_DIR:-build}
	case $build in /*) ;; *) build=$ROOT/$build ;; esac
	for f in "$build"/lib/swverbs/libswverbs-rdmav*.so; do
		[ -f "$f" ] && PROV=$f
	done
	[ -n "$PROV" ] ||
		die 3 "no swverbs provider in $build/lib/swverbs: it is built" \
		      "when meson finds rdma-core's provider headers (run" \
		      "devtools/setup.sh; meson says why it did not build it)"
fi
[ -f "$PROV" ] || die 3 "SWVERBS_PROVIDER=$PROV: no such file"
case $PROV in /*) ;; *) PROV=$PWD/$PROV ;; esac

TREE=$(mktemp -d "${TMPDIR:-/tmp}/swverbs-sysfs.XXXXXX") ||
	die 2 "cannot make a folder for the sysfs tree"
CHILD=""

# shellcheck disable=SC2317  # run by the traps
cleanup()
{
	rm -rf "$TREE"
}
trap cleanup EXIT

# shellcheck disable=SC2317  # run by the traps
forward()
{
	[ -n "$CHILD" ] && kill "-$1" "$CHILD" 2>/dev/null
}
for sig in INT TERM HUP QUIT; do
	# shellcheck disable=SC2064
	trap "forward $sig" "$sig"
done

"$ROOT/devtools/swverbs-sysfs.sh" "$TREE" "$SPEC" || exit 2

if [ "$DLOPEN" = 1 ]; then
	[ "$(id -u)" -eq 0 ] || die 77 "--dlopen needs root (a mount namespace)"
	command -v unshare >/dev/null || die 77 "--dlopen needs unshare"
	mkdir "$TREE/.dev" "$TREE/.dev/old" "$TREE/.dev/up" "$TREE/.dev/work"
	# In the namespace: /dev as an overlay of itself, the mounts under it
	# (pts, shm, hugepages, mqueue) bound back, /dev/infiniband added.
	# shellcheck disable=SC2016  # expanded by the inner shell
	NS_SETUP='set -e
d=$1; shift
mount --rbind /dev "$d/old"
mount -t overlay swverbs-dev -o "lowerdir=/dev,upperdir=$d/up,workdir=$d/work" /dev
for m in pts shm mqueue hugepages; do
	if mountpoint -q "$d/old/$m"; then
		mkdir -p "/dev/$m"
		mount --rbind "$d/old/$m" "/dev/$m"
	fi
done
mkdir -p /dev/infiniband
for u in "$SYSFS_PATH"/class/infiniband_verbs/uverbs*; do
	ln -s /dev/full "/dev/infiniband/${u##*/}"
done
exec "$@"'
	unshare --mount --propagation private true 2>/dev/null ||
		die 77 "--dlopen: unshare --mount fails here"
	set -- env RDMAV_DRIVERS="${PROV%-rdmav*.so}" SWVERBS_DLOPEN=1 \
		unshare --mount --propagation private \
		bash -c "$NS_SETUP" swverbs-ns "$TREE/.dev" "$@"
else
	set -- env LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$PROV" "$@"
fi

# The command runs in the background so that signals reach it through the
# traps; bash would give a background command /dev/null as its stdin:
# it keeps this script's (testpmd -i reads its commands there).
SYSFS_PATH=$TREE "$@" <&0 &
CHILD=$!
# wait returns early when a trapped signal arrives: wait again until the
# command is gone
while :; do
	wait "$CHILD"
	status=$?
	kill -0 "$CHILD" 2>/dev/null || break
done
exit "$status"
