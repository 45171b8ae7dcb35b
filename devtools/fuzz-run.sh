#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Build a fuzz target of app/fuzz with clang (libFuzzer, ASan; the code under
# test is compiled into the target, so it is instrumented too) in build-fuzz
# and run it for a given time over a working copy of its seed corpus.
# Findings (crashes, leaks, failed checks) land in
# build-fuzz/fuzz-artifacts-<target>/; replay one with
#   build-fuzz/app/fuzz/fuzz-<target> build-fuzz/fuzz-artifacts-<target>/crash-...
# or, with any compiler, build/app/fuzz/fuzz-<target>-replay FILE.
# New interesting inputs stay in build-fuzz/fuzz-corpus-<target>/ (not
# committed; copy the useful ones into the seed corpus).
# The last lines are libFuzzer's final statistics (stat::number_of_executed_units
# is the number of inputs run) and the number of findings.
#
# usage: fuzz-run.sh TARGET CORPUS [seconds (300)] [extra libFuzzer options...]
#   TARGET: flow or rx; CORPUS: the seed folder under app/fuzz
# Environment: VBR_FUZZ_BUILD_DIR (default build-fuzz), CC (default clang).
# devtools/fuzz-flow.sh and devtools/fuzz-rx.sh call it.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TARGET=$1
SEEDS=$2
shift 2
SECS=${1:-300}
shift || true
BUILD=$ROOT/${VBR_FUZZ_BUILD_DIR:-build-fuzz}
CC=${CC:-clang}
ME=fuzz-$TARGET.sh

command -v "$CC" >/dev/null || { echo "$ME: $CC not found" >&2; exit 1; }
case $("$CC" --version | head -1) in
*clang*) ;;
*) echo "$ME: $CC is not clang: libFuzzer needs clang" >&2; exit 1;;
esac

cd "$ROOT"
if [ ! -f "$BUILD/build.ninja" ]; then
	# No project-wide -Db_sanitize: the fuzz targets compile the code
	# under test into themselves with the sanitizers (app/fuzz).
	CC=$CC meson setup "$BUILD" -Dbuildtype=debugoptimized
fi
ninja -C "$BUILD" "app/fuzz/fuzz-$TARGET"
FUZZER=$BUILD/app/fuzz/fuzz-$TARGET
if [ ! -x "$FUZZER" ]; then
	echo "$ME: $FUZZER not built" >&2
	exit 1
fi

CORPUS=$BUILD/fuzz-corpus-$TARGET
ARTIFACTS=$BUILD/fuzz-artifacts-$TARGET
mkdir -p "$CORPUS" "$ARTIFACTS"
cp -n "app/fuzz/$SEEDS"/* "$CORPUS/" 2>/dev/null || true
export VBR_PMD=$BUILD/drivers/librte_net_vbr.so
# Allocations made once at init are not the target's: check leaks per input
# (libFuzzer does when an input mallocs more than it frees), not at exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$ROOT/app/fuzz/lsan.supp}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
echo "==> fuzzing for ${SECS}s: $FUZZER"
set +e
"$FUZZER" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=4096 \
	-artifact_prefix="$ARTIFACTS/" -print_final_stats=1 \
	"$@" "$CORPUS"
rc=$?
set -e
n=$(find "$ARTIFACTS" -type f | wc -l)
echo "==> exit $rc, $n artifact(s) in $ARTIFACTS"
exit $rc
