#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# devtools/soak.sh [seconds] [soak options...]
#
# Build the tree with ASan and UBSan in build-soak (its own folder, next to
# build/) and run the soak (app/soak/soak.c) under them for the given time
# (default 600 s): rule churn at full rate with traffic, port stop/start
# and hotplug, in a loop, checking mbufs, file descriptors and memory
# against their baselines. Any sanitizer report stops the run
# (halt_on_error) and fails it; LeakSanitizer checks the exit. Prints the
# soak's summary; the exit status is the soak's. Options after the seconds
# go to the soak (--rules N, --churn-ms MS, --verbose). ASAN_OPTIONS and
# UBSAN_OPTIONS from the environment come first (e.g. suppressions=FILE);
# halt_on_error is always set.

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${SOAK_BUILD_DIR:-$ROOT/build-soak}
SECONDS_ARG=${1:-600}
shift || true

case "$SECONDS_ARG" in
''|*[!0-9.]*)
	echo "usage: devtools/soak.sh [seconds] [soak options...]" >&2
	exit 2
	;;
esac

cd "$ROOT"
if [ ! -d "$ROOT/.sdk" ]; then
	VBR_SKIP_BUILD=1 bash devtools/setup.sh
fi
if [ ! -f "$BUILD/meson-private/coredata.dat" ]; then
	meson setup "$BUILD" -Db_sanitize=address,undefined >/dev/null
fi
ninja -C "$BUILD" >/dev/null

export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}halt_on_error=1:abort_on_error=0:detect_leaks=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:print_stacktrace=1"
LSAN_SUPP="$ROOT/app/fuzz/lsan.supp"
if [ -f "$LSAN_SUPP" ]; then
	export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$LSAN_SUPP"
fi

echo "soak: $SECONDS_ARG s under ASan+UBSan ($BUILD)"
exec "$BUILD/app/soak/soak" --seconds "$SECONDS_ARG" "$@"
