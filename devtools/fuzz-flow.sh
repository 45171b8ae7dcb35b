#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build the rte_flow fuzz target with clang (libFuzzer and ASan; the PMD is
# compiled into the target, so it is instrumented too) in build-fuzz and run
# it for a given time over a working copy of the seed corpus
# (app/fuzz/corpus). Findings (crashes, leaks, failed checks) land in
# build-fuzz/fuzz-artifacts/; replay one with
#   build-fuzz/app/fuzz/fuzz-flow build-fuzz/fuzz-artifacts/crash-...
# or, with any compiler, build/app/fuzz/fuzz-flow-replay FILE.
# New interesting inputs stay in build-fuzz/fuzz-corpus/ (not committed;
# copy the useful ones into app/fuzz/corpus/).
#
# usage: fuzz-flow.sh [seconds (300)] [extra libFuzzer options...]
# Environment: VBR_FUZZ_BUILD_DIR (default build-fuzz), CC (default clang).

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SECS=${1:-300}
shift || true
BUILD=$ROOT/${VBR_FUZZ_BUILD_DIR:-build-fuzz}
CC=${CC:-clang}

command -v "$CC" >/dev/null || { echo "fuzz-flow.sh: $CC not found" >&2; exit 1; }
case $("$CC" --version | head -1) in
*clang*) ;;
*) echo "fuzz-flow.sh: $CC is not clang: libFuzzer needs clang" >&2; exit 1;;
esac

cd "$ROOT"
if [ ! -f "$BUILD/build.ninja" ]; then
	# No project-wide -Db_sanitize: the fuzz target compiles the PMD
	# sources into itself with -fsanitize=fuzzer,address (app/fuzz).
	CC=$CC meson setup "$BUILD" -Dbuildtype=debugoptimized
fi
ninja -C "$BUILD"
FUZZER=$BUILD/app/fuzz/fuzz-flow
if [ ! -x "$FUZZER" ]; then
	echo "fuzz-flow.sh: $FUZZER not built: is subdir('fuzz') in app/meson.build?" >&2
	exit 1
fi

mkdir -p "$BUILD/fuzz-corpus" "$BUILD/fuzz-artifacts"
cp -n app/fuzz/corpus/* "$BUILD/fuzz-corpus/" 2>/dev/null || true
export VBR_PMD=$BUILD/drivers/librte_net_vbr.so
# DPDK's own allocations at exit are not the target's: check leaks per input
# (libFuzzer does when an input mallocs more than it frees) and not at exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/app/fuzz/lsan.supp}
echo "==> fuzzing for ${SECS}s: $FUZZER"
set +e
"$FUZZER" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=4096 \
	-artifact_prefix="$BUILD/fuzz-artifacts/" -print_final_stats=1 \
	"$@" "$BUILD/fuzz-corpus"
rc=$?
set -e
n=$(find "$BUILD/fuzz-artifacts" -type f | wc -l)
echo "==> exit $rc, $n artifact(s) in $BUILD/fuzz-artifacts"
exit $rc
