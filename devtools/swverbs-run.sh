#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Run a program with swverbs devices visible to the system libibverbs, as
# RDMA devices of a kernel would be: any verbs program (ibv_devinfo,
# rdma-core's tests, dpdk-testpmd with vbr's dev= ports) lists, opens and
# drives them through the swverbs provider (doc/guides/swverbs.rst,
# "swverbs as an rdma-core provider").
#
# usage: swverbs-run.sh SPEC -- COMMAND [ARGS...]
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
# the provider is not built.
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

if [ $# -lt 3 ] || [ "$2" != "--" ]; then
	die 2 "usage: swverbs-run.sh NAME=WIRE[,NAME=WIRE...] -- COMMAND [ARGS...]"
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

# The command runs in the background so that signals reach it through the
# traps; bash would give a background command /dev/null as its stdin:
# it keeps this script's (testpmd -i reads its commands there).
SYSFS_PATH=$TREE LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$PROV" "$@" <&0 &
CHILD=$!
# wait returns early when a trapped signal arrives: wait again until the
# command is gone
while :; do
	wait "$CHILD"
	status=$?
	kill -0 "$CHILD" 2>/dev/null || break
done
exit "$status"
