#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# QP pacing benchmark on swverbs (issue 11). Not a test.
#
# app/bench/bench-pacing runs two swverbs devices joined by a pair cable in
# one process, paces send queues of one with swv_modify_qp_rate_limit() and
# measures on the other, from the receive completions' timestamps, what
# left each queue (its file head has the method in full):
#   - rate: one paced queue at 1, 10, 100, 1,000, 10,000 Mbit/s and the
#     wire's maximum (qp_rate_limit_max when the cable carries it unpaced,
#     else 90 % of what it carried unpaced in the same run, read first and
#     again right before the case, the lower; the output says which; read
#     a third time right after it: a cable that carried less than the
#     target then makes the case SLOWED, no reading, as a LOADED host):
#     long-run rate, the worst 1 s window's error, the largest
#     burst seen against max_burst_sz (token-bucket check over every
#     interval);
#   - queues: 1, 64 and 1,024 paced queues at once on one device sharing
#     1,000 Mbit/s: worst and median error per queue;
#   - cpu: process CPU per frame, paced (the device holds frames) against
#     unpaced frames posted on a schedule at the same packet rate, A/B
#     interleaved in one process (A B B A ...), the median of the per-pair
#     ratios;
# each case with the other load it met (wait: ms a second the bench's
# threads sat runnable but not running; steal: ms a second the hypervisor
# took the CPUs; other: ms a second of CPU time other processes and the
# kernel took; a miss with all near 0 is the pacer's own) and whether
# its host was quiet enough to read the goal: "quiet" when the case's
# whole steal <= BENCH_QUIET_STEAL ms (one 1 s window may hold all of it:
# the hypervisor takes a CPU a 10-ms tick at a time) and wait or other <=
# BENCH_QUIET_WAIT ms a second (a wait with no other CPU time is the
# bench's own threads' wake-ups: the thread model's application naps
# some 12,000 times a second; 5 and 5: 0.5 % of a second, the accuracy
# goal's own budget; a thread kept from its CPU longer can miss by that
# much with no fault of the pacer's),
# else "LOADED"; the figures are printed either way;
# and a PASS/MISS line per goal: error <= 0.5 % per queue at every rate and
# queue count, no burst above max_burst_sz, pacing costs <= 5 % CPU per
# frame; a miss on a LOADED case of the accuracy or CPU goal is listed
# apart, and a goal missed only there reads NO READING. It runs once per
# progress model (BENCH_PROGRESS, default "thread inline").
#
# The application's naps (inline model): a pass that found nothing naps
# BENCH_NAP us (50), but no later than the next paced departure less the
# nap's own measured lateness, and not at all when that departure is
# nearer: the inline engine releases departures in the application's verbs
# calls, so a nap past one delays it. BENCH_NAP_PLAIN=1 naps in full
# whatever waits (what the bench did before; for comparison).
#
# Core layout (2 cores): the bench's application thread (posting, polling,
# metering) on CPU 0; thread: the engine's own thread on CPU 1; service: a
# bench thread on CPU 1 calling swv_engine_run_once(); inline: no engine
# thread, all work in the application's verbs calls on CPU 0.
#
# usage: bench-pacing.sh [seconds a case (3)] [cases (rate,queues,cpu)]
# A check in under a minute: devtools/bench-pacing.sh 1 (about 30 s for
# both models), or one case: devtools/bench-pacing.sh 1 queues. The full
# run takes a minute or two.
# Environment: VBR_BUILD_DIR (default build), BENCH_CASES (as the second
# argument), BENCH_PROGRESS (models, "thread inline"; also "service"),
# BENCH_RATES (Mbit/s list, "1,10,100,1000,10000,max"), BENCH_QUEUES
# ("1,64,1024"), BENCH_MQ_TOTAL (Mbit/s shared by the queues, 1000),
# BENCH_CPU_RATE (Mbit/s of the cpu case, 1000), BENCH_PAIRS (A/B pairs, 3),
# BENCH_CPU_SECONDS (a cpu run, 0.5), BENCH_SIZE (frame bytes, 1514),
# BENCH_BURST (max_burst_sz bytes, 0: the device default), BENCH_TIMEOUT
# (seconds a model, 600), BENCH_NAP (us, 50), BENCH_NAP_PLAIN (0),
# BENCH_QUIET_WAIT, BENCH_QUIET_STEAL (ms a second, ms in a case; 5 and 5).

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/${VBR_BUILD_DIR:-build}
BENCH=$BUILD/app/bench/bench-pacing
SECS=${1:-3}
CASES=${2:-${BENCH_CASES:-rate,queues,cpu}}
MODELS=${BENCH_PROGRESS:-thread inline}
TMO=${BENCH_TIMEOUT:-600}
LOG=$BUILD/bench-pacing
mkdir -p "$LOG"
# logs of runs whose process is gone
for f in "$LOG"/*.[0-9]*; do
	[ -e "$f" ] || continue
	kill -0 "${f##*.}" 2>/dev/null || rm -f "$f"
done

[ -x "$BENCH" ] || { echo "bench-pacing.sh: build first ($BENCH)" >&2; exit 1; }

args=(--seconds "$SECS" --cases "$CASES"
	--rates "${BENCH_RATES:-1,10,100,1000,10000,max}"
	--queues "${BENCH_QUEUES:-1,64,1024}"
	--mq-total "${BENCH_MQ_TOTAL:-1000}"
	--cpu-rate "${BENCH_CPU_RATE:-1000}"
	--pairs "${BENCH_PAIRS:-3}"
	--cpu-seconds "${BENCH_CPU_SECONDS:-0.5}"
	--size "${BENCH_SIZE:-1514}"
	--burst "${BENCH_BURST:-0}"
	--nap "${BENCH_NAP:-50}"
	--quiet-wait "${BENCH_QUIET_WAIT:-5}"
	--quiet-steal "${BENCH_QUIET_STEAL:-5}")
[ "${BENCH_NAP_PLAIN:-0}" = 1 ] && args+=(--nap-plain)

status=0
for m in $MODELS; do
	out=$LOG/$m.$$
	echo "== bench-pacing, progress $m, ${SECS}s a case, cases $CASES;" \
		"log $out"
	timeout "$TMO" "$BENCH" --progress "$m" "${args[@]}" >"$out" 2>&1
	rc=$?
	cat "$out"
	if [ "$rc" -ne 0 ]; then
		echo "bench-pacing.sh: progress $m: exit status $rc" >&2
		status=1
	fi
done

echo
echo "== summary"
for m in $MODELS; do
	grep -E '^(PASS|MISS|NO READING)' "$LOG/$m.$$" | sed "s/^/$m: /"
	grep -cE ' LOADED( |$)' "$LOG/$m.$$" | sed "s/^/$m: cases on a LOADED host: /"
done
exit $status
