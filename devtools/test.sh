#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The "test" command: set up and build (devtools/setup.sh), run every meson
# test suite (fast, e2e, style, docs; e2e and docs need root), and print as
# the last line
#
#   N passed, N failed, N skipped
#
# passed = OK + EXPECTEDFAIL, failed = FAIL + TIMEOUT + ERROR +
# UNEXPECTEDPASS, skipped = SKIP. A failed setup or build counts as one
# failure. Exit status 0 iff nothing failed.
#
# usage: test.sh [--sanitize]
#
# --sanitize: the same suites but docs on an ASan+UBSan build (-Db_sanitize=
# address,undefined) in build-asan, or build-asan-clang when $CC is clang.
# Any sanitizer report fails its test (meson.build: -fno-sanitize-recover,
# halt_on_error, LeakSanitizer on); the testpmd script tests preload the
# sanitizer runtimes into stock dpdk-testpmd.
#
# Environment: VBR_BUILD_DIR (default build), MESON_TEST_ARGS (extra
# arguments for meson test, e.g. "--suite fast"), CC (compiler of a new
# build folder).

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${VBR_BUILD_DIR:-build}
case ${1:-} in
"") ;;
--sanitize)
	if "${CC:-cc}" --version 2>/dev/null | head -n 1 | grep -q clang; then
		BUILD_DIR=${VBR_BUILD_DIR:-build-asan-clang}
		# clang links no sanitizer runtime into shared objects
		VBR_MESON_ARGS="-Db_lundef=false ${VBR_MESON_ARGS:-}"
	else
		BUILD_DIR=${VBR_BUILD_DIR:-build-asan}
	fi
	export VBR_BUILD_DIR=$BUILD_DIR
	export VBR_MESON_ARGS="-Db_sanitize=address,undefined ${VBR_MESON_ARGS:-}"
	# the docs' commands are written for the normal build in build/
	MESON_TEST_ARGS="--no-suite docs ${MESON_TEST_ARGS:-}"
	;;
*)
	echo "usage: test.sh [--sanitize]" >&2
	echo "0 passed, 1 failed, 0 skipped"
	exit 2
	;;
esac
LOG=$BUILD_DIR/meson-logs/testlog.json

if ! bash devtools/setup.sh; then
	echo "test.sh: setup/build failed (see above)" >&2
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

rm -f "$LOG"
echo "==> meson test -C $BUILD_DIR"
# shellcheck disable=SC2086
meson test -C "$BUILD_DIR" --print-errorlogs --num-processes 2 \
	${MESON_TEST_ARGS:-} </dev/null
mrc=$?

if [ ! -f "$LOG" ]; then
	echo "test.sh: meson test wrote no $LOG (exit $mrc)" >&2
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

summary=$(/usr/bin/python3 - "$LOG" <<'PY'
import json
import sys

passed = failed = skipped = 0
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
print(f"{passed} passed, {failed} failed, {skipped} skipped")
PY
) || summary="0 passed, 1 failed, 0 skipped"

failed=$(printf '%s\n' "$summary" | sed -E 's/.* ([0-9]+) failed.*/\1/')
if [ "$failed" -eq 0 ] && [ "$mrc" -ne 0 ]; then
	# meson failed without a failed test (e.g. a build error): count it
	echo "test.sh: meson test exited $mrc" >&2
	summary=$(printf '%s\n' "$summary" | sed -E 's/ 0 failed/ 1 failed/')
	failed=1
fi
echo "$summary"
[ "$failed" -eq 0 ]
