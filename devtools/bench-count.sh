#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Flow counters benchmark on vbr over a swverbs pair wire. Not a test.
#
# app/bench/bench-flow-rules runs the same cases twice, rules without and
# with a COUNT action (--count), and this script prints them side by side:
#   - datapath Mpps, 64-byte frames in a closed loop, every frame matching a
#     rule (goal: counted within 5% of uncounted);
#   - rte_flow_query(COUNT) calls per second over the case's rules (goal:
#     1,000,000/s or more);
#   - resident memory per rule, uncounted and counted (PMD + device);
#   - insertion rate, port started (goal: counted within 20%).
# Each configuration runs BENCH_REPS times (default 3) and the best figure
# of each column is kept: the machine may be shared.
#
# Core layout (2 cores): the bench's main lcore (insertion, forwarding and
# query loops) on CPU 0, the swverbs engine pinned to CPU 1 (engine_cpu=1).
#
# usage: bench-count.sh [rule counts (1,1000,100000)] [seconds per case (2)]
#        [flows (1024)]
# Environment: VBR_BUILD_DIR (default build), BENCH_REPS (3),
# BENCH_TIMEOUT (seconds per run, 600).

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/${VBR_BUILD_DIR:-build}
PMD=$BUILD/drivers/librte_net_vbr.so
BENCH=$BUILD/app/bench/bench-flow-rules
RULES=${1:-1,1000,100000}
SECS=${2:-2}
FLOWS=${3:-1024}
REPS=${BENCH_REPS:-3}
TMO=${BENCH_TIMEOUT:-600}
LOG=$BUILD/bench-count
mkdir -p "$LOG"

[ -f "$PMD" ] && [ -x "$BENCH" ] ||
	{ echo "bench-count.sh: build first ($PMD, $BENCH)" >&2; exit 1; }

run() { # $1: tag, rest: bench options
	local tag=$1 r
	shift
	for r in $(seq 1 "$REPS"); do
		timeout "$TMO" "$BENCH" -l 0 --no-huge -m 2048 --no-shconf \
			--no-pci -d "$PMD" \
			--vdev "net_vbr0,wire=pair:bc$$,engine_cpu=1" \
			--vdev "net_vbr1,wire=pair:bc$$" \
			--log-level=pmd.net.vbr:error -- --rules "$RULES" \
			--masks "" --seconds "$SECS" --flows "$FLOWS" "$@" \
			>"$LOG/$tag.$r" 2>&1 ||
			echo "bench-count: $tag run $r: exit status $?" >&2
	done
}

echo "== bench-flow-rules, rules $RULES, ${SECS}s a case, frames over" \
	"$FLOWS rules, best of $REPS; logs in $LOG"
run plain
run count --count

/usr/bin/python3 - "$LOG" "$REPS" <<'PY'
import glob, sys
log, reps = sys.argv[1], int(sys.argv[2])
cols = ["rules", "masks", "pmd-ins/s", "pmd-B/r", "start/s", "ins/s",
        "del/s", "B/rule", "Mpps", "hit%", "qry/s"]

def best(tag):
    """rules -> column -> best value over the runs."""
    out = {}
    for path in glob.glob(f"{log}/{tag}.*"):
        for line in open(path, errors="replace"):
            f = line.split()
            if len(f) != len(cols) or not f[0].isdigit():
                if line.startswith("#") or "failed" in line:
                    print(f"  {tag}: {line.rstrip()}")
                continue
            row = out.setdefault(int(f[0]), {})
            for name, v in zip(cols, f):
                if v == "-":
                    continue
                v = float(v)
                low = name in ("pmd-B/r", "B/rule")
                if name not in row or (v < row[name] if low else
                                       v > row[name]):
                    row[name] = v
    return out

plain, count = best("plain"), best("count")
print(f"{'rules':>8} {'Mpps':>7} {'Mpps+cnt':>8} {'diff':>6} "
      f"{'ins/s':>9} {'ins/s+cnt':>9} {'diff':>6} {'B/rule':>7} "
      f"{'B/r+cnt':>7} {'cnt B':>6} {'query/s':>9}")
ok = True
for n in sorted(set(plain) | set(count)):
    p, c = plain.get(n, {}), count.get(n, {})
    def g(d, k):
        return d.get(k, float("nan"))
    dm = (g(c, "Mpps") / g(p, "Mpps") - 1) * 100 if g(p, "Mpps") else 0
    di = (g(c, "ins/s") / g(p, "ins/s") - 1) * 100 if g(p, "ins/s") else 0
    # memory per rule: the stopped-port (PMD only) and started figures
    # are noisy at small counts; take the started one (PMD + device)
    bp, bc = g(p, "B/rule"), g(c, "B/rule")
    print(f"{n:>8} {g(p, 'Mpps'):7.3f} {g(c, 'Mpps'):8.3f} {dm:+5.1f}% "
          f"{g(p, 'ins/s'):9.0f} {g(c, 'ins/s'):9.0f} {di:+5.1f}% "
          f"{bp:7.0f} {bc:7.0f} {bc - bp:6.0f} {g(c, 'qry/s'):9.0f}")
print("goals: Mpps within 5%, insertion within 20%, >= 1,000,000 "
      "queries/s; memory per rule only means something at 100,000 rules "
      "and more (resident set growth / rules)")
PY
