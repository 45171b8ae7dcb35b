#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The "run" command: set up and build (devtools/setup.sh), then run stock
# dpdk-testpmd on two vbr ports joined by an in-memory pair wire, forward
# packets between them for a few seconds (io mode, started with tx_first)
# and print the port statistics. Exits 0 when both ports received packets.
#
# Core layout: -l 0-1, main lcore 0, forwarding lcore 1, which also does the
# swverbs devices' work (progress=inline, the default; no engine thread). Environment: VBR_BUILD_DIR (default build),
# VBR_RUN_SECONDS (default 5).
#
# devtools/run.sh tenant-gw: the same set-up, then examples/tenant-gw's
# gateway and generator (two processes joined by two shm wires) with the
# sample config (examples/tenant-gw/run-demo.sh says what it checks).

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${VBR_BUILD_DIR:-build}
SECS=${VBR_RUN_SECONDS:-5}

case "${1:-}" in
"") ;;
tenant-gw)
	bash devtools/setup.sh
	exec bash examples/tenant-gw/run-demo.sh ;;
*)
	echo "usage: run.sh [tenant-gw]" >&2
	exit 2 ;;
esac

bash devtools/setup.sh

PMD=$ROOT/$BUILD_DIR/drivers/librte_net_vbr.so
[ -f "$PMD" ] || { echo "run.sh: $PMD was not built" >&2; exit 1; }

PREFIX=vbr-run-$$
LOG=$(mktemp)
trap 'rm -rf "$LOG" "/var/run/dpdk/$PREFIX"' EXIT

CMD=(dpdk-testpmd -l 0-1 --no-huge -m 512 --no-shconf --file-prefix "$PREFIX"
     --no-pci -d "$PMD"
     --vdev net_vbr0,wire=pair:run --vdev net_vbr1,wire=pair:run
     -- -i --forward-mode=io --total-num-mbufs=8192)
echo "==> ${CMD[*]}"
echo "==> start tx_first; forward ${SECS}s; show port stats all; stop; quit"

# testpmd reads its commands from the pipe; stdout line-buffered so that
# what it prints stays in order with the echoed commands
set +e
{
	sleep 1
	echo "show port info all"
	echo "start tx_first"
	sleep "$SECS"
	echo "show port stats all"
	echo "stop"
	sleep 1
	echo "quit"
} | timeout 120 stdbuf -oL "${CMD[@]}" 2>&1 | tee "$LOG"
rc=${PIPESTATUS[1]}
set -e

if [ "$rc" -ne 0 ]; then
	echo "run.sh: dpdk-testpmd exited with status $rc" >&2
	exit 1
fi
# RX-packets of ports 0 and 1 in the "show port stats all" blocks
rx=$(sed -n 's/^ *RX-packets: *\([0-9]*\) *RX-missed.*/\1/p' "$LOG" | head -n 2)
n=0
for v in $rx; do
	[ "$v" -gt 0 ] && n=$((n + 1))
done
if [ "$n" -ne 2 ]; then
	echo "run.sh: expected both ports to receive packets, got: $rx" >&2
	exit 1
fi
echo "==> done: both vbr ports forwarded packets (RX-packets: $(echo $rx))"
