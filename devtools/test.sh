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
# UNEXPECTEDPASS, skipped = SKIP. A test whose output ends with a line
# "totals: N passed, N failed, N skipped" counts as those instead (suite hw
# counts its suites, provider-rdma-core rdma-core's own tests); a test that
# failed with no failure in its totals still counts one. A failed setup or
# build counts as one failure. Above the last line, the skips by reason
# (devtools/test-summary.py); a skip devtools/skips.allowed does not allow
# counts as a failure. Exit status 0 iff nothing failed.
#
# Suite hw (the PMD's suites on a NIC) runs in a leg of its own: "meson
# test --setup=ibverbs --suite hw", on two swverbs devices driven through
# the system libibverbs (the provider; root, a veth pair) -- backend (a),
# the code a ConnectX user runs. With VBR_TEST_DEV set it runs on that NIC
# instead, in the main run.
#
# usage: test.sh [--sanitize]
#
# --sanitize: the same suites but docs on an ASan+UBSan build (-Db_sanitize=
# address,undefined) in build-asan, or build-asan-clang when $CC is clang.
# Any sanitizer report fails its test (meson.build: -fno-sanitize-recover,
# halt_on_error, LeakSanitizer on); the testpmd script tests preload the
# sanitizer runtimes into stock dpdk-testpmd.
#
# The suites that load the PMD (pmd, flow, testpmd, e2e; and without
# --sanitize also soak and examples: the soak and the tenant gateway) run
# once more for every progress model after the first of
# VBR_PROGRESS_MODELS (but their tests in suite 'once', which no model
# changes; default
# "inline thread service"; the first is the PMD's default, which the main run
# uses): with VBR_TEST_PROGRESS=<model>, which the test helpers
# (app/test/vbr_test_port.h, testpmd_driver.py) turn into the progress=
# devarg and the EAL options it needs. A new model is one more word there.
#
# Then (not with --sanitize) the Debian 13 leg, devtools/test-debian13.sh:
# setup, build and the suites fast, flow, pmd and testpmd in a Debian 13
# root (debootstrap, cached in $BUILD_DIR/debian13) on Debian 13's DPDK
# 24.11; its counts join the last line. VBR_DEBIAN13=0 leaves it out.
#
# Before the tests it removes what killed runs left behind: network
# namespaces, veth ends and /dev/shm cable files named after a test's pid
# (vba<pid>, vbrt<pid>, vbe<pid>ns, vbf<pid>ns, vbl<pid>ns, vbo<pid>ns,
# vbt<pid>ns, vbv<pid>ns, vbvf<pid>, vpg<pid>a, vqrmv<pid>ns, vbo<pid>a,
# vbd<pid>, swverbs-shm.t<pid>-*,
# swverbs-shm.tp<pid>, swverbs-shm.bench<pid>) whose process is gone: pids
# come round again (pid_max may be 32768), and a test that finds its name
# taken reuses or fails on what a killed run left.
#
# Environment: VBR_BUILD_DIR (default build), MESON_TEST_ARGS (extra
# arguments for meson test, e.g. "--suite fast"), CC (compiler of a new
# build folder), VBR_PROGRESS_MODELS, VBR_IBVERBS_LEG (0: no ibverbs leg),
# VBR_DEBIAN13 (0: no Debian 13 leg).

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
BUILD_DIR=${VBR_BUILD_DIR:-build}
SANITIZE=0
case ${1:-} in
"") ;;
--sanitize)
	SANITIZE=1
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

# What killed test runs left behind (a SIGKILL leaves no handler a chance):
# network namespaces, root-side veth ends and shm cable files whose names
# carry the pid of the test process that made them (the whole pid). Only those whose
# process no longer exists go; a run under way (another engineer's, a
# benchmark) keeps its own.
stale_pid() {
	# the creating pid in a name we know, or nothing
	printf '%s\n' "$1" | sed -nE \
		-e 's/^(vba|vbrt)([0-9]+)$/\2/p' \
		-e 's/^(vba|vbrt)([0-9]+)a$/\2/p' \
		-e 's/^(vbe|vbf|vbl|vbo|vbt|vbv)([0-9]+)(ns|0)$/\2/p' \
		-e 's/^vpg([0-9]+)[ab]$/\1/p' \
		-e 's/^vrm([0-9]+)[ab]$/\1/p' \
		-e 's/^vbvf([0-9]+)$/\1/p' \
		-e 's/^vq(rmv|rmn)([0-9]+)(ns|0)$/\2/p' \
		-e 's/^vbo([0-9]+)[ab]0?$/\1/p' \
		-e 's/^vbd([0-9]+)$/\1/p' \
		-e 's/^dt([0-9]+)x[0-9]+(ns|0)$/\1/p' \
		-e 's/^vbrpace([0-9]+)$/\1/p' \
		-e 's/^swverbs-shm\.tgw[td]([0-9]+)[ab]$/\1/p' \
		-e 's/^swverbs-shm\.t([0-9]+)-.*$/\1/p' \
		-e 's/^swverbs-shm\.(tp|bench)([0-9]+)$/\2/p'
}

clean_stale() {
	local name pid
	if [ "$(id -u)" -eq 0 ] && command -v ip >/dev/null 2>&1; then
		for name in $(ip netns list 2>/dev/null | awk '{ print $1 }'); do
			pid=$(stale_pid "$name")
			if [ -n "$pid" ] && [ ! -d "/proc/$pid" ]; then
				echo "test.sh: removing stale netns $name"
				ip netns del "$name" 2>/dev/null
			fi
		done
		for name in $(ip -o link show 2>/dev/null |
			      sed -nE 's/^[0-9]+: ([^:@]+)[:@].*/\1/p'); do
			pid=$(stale_pid "$name")
			if [ -n "$pid" ] && [ ! -d "/proc/$pid" ]; then
				echo "test.sh: removing stale link $name"
				ip link del "$name" 2>/dev/null
			fi
		done
	fi
	for name in /dev/shm/swverbs-shm.*; do
		[ -e "$name" ] || continue
		pid=$(stale_pid "${name##*/}")
		if [ -n "$pid" ] && [ ! -d "/proc/$pid" ]; then
			echo "test.sh: removing stale cable $name"
			rm -f "$name"
		fi
	done
}
clean_stale

if ! bash devtools/setup.sh; then
	echo "test.sh: setup/build failed (see above)" >&2
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi

MODELS=${VBR_PROGRESS_MODELS:-inline thread service}
rm -f "$LOG" "$BUILD_DIR"/meson-logs/progress-*.json \
	"$BUILD_DIR"/meson-logs/hw-ibverbs*.json
# suite hw: on the NIC VBR_TEST_DEV names, else in the ibverbs leg below
HW_ARGS=()
[ -n "${VBR_TEST_DEV:-}" ] || HW_ARGS=(--no-suite hw)
echo "==> meson test -C $BUILD_DIR"
# shellcheck disable=SC2086
meson test -C "$BUILD_DIR" --print-errorlogs --num-processes 2 \
	"${HW_ARGS[@]}" ${MESON_TEST_ARGS:-} </dev/null
mrc=$?

if [ ! -f "$LOG" ]; then
	echo "test.sh: meson test wrote no $LOG (exit $mrc)" >&2
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
LOGS=("$LOG")

# The soak and the gateway run two processes of lcores each: in every
# model on the plain build, not again under the sanitizers (3 minutes).
MODEL_SUITES=(--suite pmd --suite flow --suite testpmd --suite e2e)
[ "$SANITIZE" -ne 0 ] || MODEL_SUITES+=(--suite soak --suite examples)
# shellcheck disable=SC2086
set -- $MODELS
shift	# the first model is the default the main run used
for model in "$@"; do
	plog=$BUILD_DIR/meson-logs/progress-$model.json
	echo "==> meson test -C $BUILD_DIR, progress model $model"
	# shellcheck disable=SC2086
	VBR_TEST_PROGRESS=$model meson test -C "$BUILD_DIR" --print-errorlogs \
		--num-processes 2 --logbase "progress-$model" \
		"${MODEL_SUITES[@]}" --no-suite once \
		${MESON_TEST_ARGS:-} </dev/null
	rc=$?
	[ "$mrc" -ne 0 ] || mrc=$rc
	if [ ! -f "$plog" ]; then
		echo "test.sh: meson test wrote no $plog (exit $rc)" >&2
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	fi
	LOGS+=("$plog")
done

# backend (a): suite hw through the system libibverbs on swverbs devices
# (not MESON_TEST_ARGS: its suites would run under the setup's wrapper)
if [ -z "${VBR_TEST_DEV:-}" ] && [ "${VBR_IBVERBS_LEG:-1}" != 0 ]; then
	echo "==> meson test -C $BUILD_DIR --setup=ibverbs --suite hw"
	meson test -C "$BUILD_DIR" --print-errorlogs --setup=ibverbs \
		--suite hw --logbase hw-ibverbs </dev/null
	rc=$?
	# meson adds the setup's name to the log's: hw-ibverbs-ibverbs.json
	ilog=$(ls "$BUILD_DIR"/meson-logs/hw-ibverbs*.json 2>/dev/null |
	       head -n 1)
	[ "$mrc" -ne 0 ] || mrc=$rc
	if [ -n "$ilog" ]; then
		LOGS+=("$ilog")
	elif [ "$rc" -ne 0 ]; then
		echo "test.sh: the ibverbs leg wrote no log (exit $rc)" >&2
		echo "0 passed, 1 failed, 0 skipped"
		exit 1
	fi
fi

# Legs that run apart from this build's meson test and print their own
# "N passed, N failed, N skipped" last line: those lines, summed in below.
COUNTS=()

# The Debian 13 leg (devtools/test-debian13.sh): setup, build and the
# fast, flow, pmd and testpmd suites in a Debian 13 root on its DPDK 24.11,
# the root cached in $BUILD_DIR/debian13. Not with --sanitize;
# VBR_DEBIAN13=0 leaves it out.
if [ "$SANITIZE" -eq 0 ] && [ "${VBR_DEBIAN13:-1}" != 0 ]; then
	echo "==> Debian 13 leg: devtools/test-debian13.sh $BUILD_DIR"
	{ leg=$(bash devtools/test-debian13.sh "$BUILD_DIR" </dev/null |
		tee /dev/fd/3 | tail -n 1); } 3>&1
	COUNTS+=("${leg:-(nothing)}")
fi

# The totals, and every skip checked against devtools/skips.allowed (a
# skip it does not allow counts as a failure); the skips by reason above.
SUMMARY_ARGS=()
[ "$SANITIZE" -eq 0 ] || SUMMARY_ARGS=(--sanitize)
summary=$(VBR_COUNTS=$(printf '%s\n' "${COUNTS[@]}") \
	  /usr/bin/python3 devtools/test-summary.py "${SUMMARY_ARGS[@]}" \
	  --budget devtools/skips.allowed "${LOGS[@]}") ||
	summary="0 passed, 1 failed, 0 skipped"
printf '%s\n' "$summary" | sed '$d'
summary=$(printf '%s\n' "$summary" | tail -n 1)

failed=$(printf '%s\n' "$summary" | sed -E 's/.* ([0-9]+) failed.*/\1/')
if [ "$failed" -eq 0 ] && [ "$mrc" -ne 0 ]; then
	# meson failed without a failed test (e.g. a build error): count it
	echo "test.sh: meson test exited $mrc" >&2
	summary=$(printf '%s\n' "$summary" | sed -E 's/ 0 failed/ 1 failed/')
	failed=1
fi
echo "$summary"
[ "$failed" -eq 0 ]
