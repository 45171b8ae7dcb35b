#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Cache lines per packet between the application and the swverbs device,
# per progress model (the engine thread, inline), for queues shaped as the
# vbr PMD makes them; next to the same counts priced with the entries of
# 8d93f69 (32-byte WQEs and CQEs). See app/test/swverbs/bench_lines.c for
# what a line is. Core layout: one process; thread: the application on the
# calling CPU, the engine thread wherever the kernel puts it; inline: one
# thread is application and device. The figures are counts, not timings:
# the machine's load does not change them.
#
# usage: bench-lines.sh [packets (1000000)]
# Environment: VBR_BUILD_DIR (default build). Not a test: no pass/fail.

set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${VBR_BUILD_DIR:-build}
exe="$BUILD_DIR/app/test/swverbs/bench_swverbs_lines"
[ -x "$exe" ] || { echo "bench-lines: build $exe first" >&2; exit 1; }
exec "$exe" "${1:-1000000}" both
