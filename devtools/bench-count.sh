#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Flow counters benchmark on vbr over a swverbs pair wire. Not a test.
#
# app/bench/bench-flow-rules runs each case (a number of rules) without and
# with a COUNT action on every rule, and this script prints the two side by
# side:
#   - datapath Mpps, 64-byte frames in a closed loop, every frame matching a
#     rule (goal: counted within 5% of uncounted), measured in slices (see
#     below);
#   - insertion rate, port started, timed over at least 20 ms of creation
#     (goal: counted within 20% of uncounted);
#   - rte_flow_query(COUNT) calls per second over the case's rules (goal:
#     1,000,000/s or more);
#   - resident memory per rule, uncounted and counted (PMD + device), and
#     what the counter adds; it only means something at 100,000 rules and
#     more. There is no goal for it in the tree: BENCH_MEM_GOAL (bytes) sets
#     one for the counter's share.
#
# Method: this machine's processes land on different speeds for no reason
# in the code (about 8 or about 18 Mpps), so uncounted and counted are not
# compared across processes. Each process (BENCH_REPS of them, default 2)
# runs every case 2 x BENCH_PAIRS times (default 3) with --ab: uncounted (A)
# and counted (B) alternately, A B B A A B B A ..., so that neither always
# goes first. The i-th A row and the i-th B row of a case in one process
# make a pair, two runs side by side; each diff is the median over all
# pairs of the ratio counted / uncounted within the pair. The speed still
# changes now and then within a process: the pairs that straddle a change
# do not move the median while they are fewer than half (the per-pair
# figures are printed under the table). The Mpps and ins/s columns are the
# medians of each variant's rows, query/s the median of the counted rows,
# B/rule and B/r+cnt the medians of each variant's rows, and cnt B the
# median of the per-pair differences. The bench trims the heap before each
# memory measurement, so memory figures of later runs in a process are not
# lowered by memory that earlier runs freed.
#
# The datapath is measured apart, because the speed changes within a
# process too: after its A/B runs, each case puts its rules on the port
# twice over, uncounted and counted (sources and marks of their own), and
# forwards to one set, then the other, in alternating slices of
# BENCH_SLICE_MS (50) ms for the case's seconds (--slices). Two slices in a
# row make a pair; the Mpps columns are the medians of each variant's
# slices over all processes, the diff the median of the per-pair ratios
# (each printed under the table). The counted rules' hits are checked
# against the frames that came back with their marks.
#
# Core layout (2 cores): the bench's main lcore (insertion, forwarding and
# query loops) on CPU 0, the swverbs engine pinned to CPU 1 (engine_cpu=1).
# With the defaults (3 rule counts, 2 s a case) a run takes about 100 s.
#
# usage: bench-count.sh [rule counts (1,1000,100000)] [seconds per case (2)]
#        [flows (1024)]
# Environment: VBR_BUILD_DIR (default build), BENCH_REPS (processes, 2),
# BENCH_PAIRS (A/B pairs per case and process, 3), BENCH_SLICE_MS (datapath
# slice, 50), BENCH_TIMEOUT (seconds
# per process, 600), BENCH_MEM_GOAL (most bytes a counter may add to a rule
# at 100,000 rules and more; unset: no goal).

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/${VBR_BUILD_DIR:-build}
PMD=$BUILD/drivers/librte_net_vbr.so
BENCH=$BUILD/app/bench/bench-flow-rules
RULES=${1:-1,1000,100000}
SECS=${2:-2}
FLOWS=${3:-1024}
REPS=${BENCH_REPS:-2}
PAIRS=${BENCH_PAIRS:-3}
SLICE_MS=${BENCH_SLICE_MS:-50}
TMO=${BENCH_TIMEOUT:-600}
MEM_GOAL=${BENCH_MEM_GOAL:-}
LOG=$BUILD/bench-count
mkdir -p "$LOG"
rm -f "$LOG"/ab.*

[ -f "$PMD" ] && [ -x "$BENCH" ] ||
	{ echo "bench-count.sh: build first ($PMD, $BENCH)" >&2; exit 1; }
[ "$PAIRS" -ge 1 ] 2>/dev/null ||
	{ echo "bench-count.sh: BENCH_PAIRS must be 1 or more" >&2; exit 1; }

echo "== bench-flow-rules, rules $RULES, ${SECS}s a run, frames over" \
	"$FLOWS rules, $REPS processes x $PAIRS A/B pairs; logs in $LOG"
for r in $(seq 1 "$REPS"); do
	timeout "$TMO" "$BENCH" -l 0 --no-huge -m 2048 --no-shconf \
		--no-pci -d "$PMD" \
		--vdev "net_vbr0,wire=pair:bc$$,engine_cpu=1" \
		--vdev "net_vbr1,wire=pair:bc$$,engine_cpu=1" \
		--log-level=pmd.net.vbr:error -- --rules "$RULES" \
		--masks "" --seconds "$SECS" --flows "$FLOWS" --ab "$PAIRS" \
		--slices "$SLICE_MS" \
		>"$LOG/ab.$r" 2>&1 ||
		echo "bench-count: process $r: exit status $?" >&2
done

/usr/bin/python3 - "$LOG" "$MEM_GOAL" <<'PY'
import glob, math, os, statistics, sys
log, mem_goal = sys.argv[1], sys.argv[2]
cols = ["rules", "masks", "pmd-ins/s", "pmd-B/r", "start/s", "ins/s",
        "del/s", "B/rule", "Mpps", "hit%", "qry/s"]
NAN = float("nan")

# rules -> {"A": rows, "B": rows, "pairs": [(A row, B row)]}; a row is a
# dict column -> value (None for "-"); counted rows have a qry/s figure
cases = {}
# rules -> {"A": slice Mpps, "B": slice Mpps, "pairs": per-pair ratios %}
slices = {}
for path in sorted(glob.glob(f"{log}/ab.*")):
    tag = os.path.basename(path)
    rows = {}
    pending = []
    for line in open(path, errors="replace"):
        f = line.split()
        if line.startswith("# slices-pairs"):
            pending = [float(v) for v in f[2:]]
            continue
        if line.startswith("# slices ") and len(f) == 8 and f[2].isdigit():
            sl = slices.setdefault(int(f[2]), {"A": [], "B": [],
                                               "pairs": []})
            sl["A"].append(float(f[5]))
            sl["B"].append(float(f[6]))
            sl["pairs"] += pending
            pending = []
            continue
        if len(f) != len(cols) or not f[0].isdigit():
            if line.startswith("#") or "failed" in line:
                print(f"  {tag}: {line.rstrip()}")
            continue
        row = {k: None if v == "-" else float(v) for k, v in zip(cols, f)}
        ab = rows.setdefault(int(f[0]), ([], []))
        ab[row["qry/s"] is not None].append(row)
    for n, (a, b) in rows.items():
        c = cases.setdefault(n, {"A": [], "B": [], "pairs": []})
        c["A"] += a
        c["B"] += b
        c["pairs"] += list(zip(a, b))

def med(values):
    values = [v for v in values if v is not None and not math.isnan(v)]
    return statistics.median(values) if values else NAN

def col(rows, k):
    return med(r[k] for r in rows)

def ratios(pairs, k):
    """Per-pair counted / uncounted - 1, in %."""
    return [(b[k] / a[k] - 1) * 100 for a, b in pairs if a[k]]

def pct(v):
    return "   n/a" if math.isnan(v) else f"{v:+5.1f}%"

print(f"{'rules':>8} {'pairs':>5} {'Mpps':>7} {'Mpps+cnt':>8} {'diff':>6} "
      f"{'ins/s':>9} {'ins/s+cnt':>9} {'diff':>6} {'B/rule':>7} "
      f"{'B/r+cnt':>7} {'cnt B':>6} {'query/s':>9}")
res = {}
for n in sorted(cases):
    c = cases[n]
    sl = slices.get(n, {"A": [], "B": [], "pairs": []})
    dm = med(sl["pairs"])
    di = med(ratios(c["pairs"], "ins/s"))
    cb = med(b["B/rule"] - a["B/rule"] for a, b in c["pairs"])
    q = col(c["B"], "qry/s")
    res[n] = (len(c["pairs"]), dm, di, cb, q)
    print(f"{n:>8} {len(c['pairs']):>5} {med(sl['A']):7.3f} "
          f"{med(sl['B']):8.3f} {pct(dm)} "
          f"{col(c['A'], 'ins/s'):9.0f} {col(c['B'], 'ins/s'):9.0f} "
          f"{pct(di)} {col(c['A'], 'B/rule'):7.0f} "
          f"{col(c['B'], 'B/rule'):7.0f} {cb:6.0f} {q:9.0f}")
print("pairs: A/B pairs the insertion and memory figures are over "
      "(uncounted and counted runs of one process); Mpps: medians of the "
      "datapath slices, diff: median of the per-slice-pair ratios; "
      "ins/s diff: median of the per-pair ratios; the other columns: "
      "medians (cnt B: of the per-pair differences)")
for n in sorted(cases):
    p = cases[n]["pairs"]
    sp = slices.get(n, {"pairs": []})["pairs"]
    print(f"{n:>8} per slice pair ({len(sp)}), Mpps: "
          + " ".join(f"{v:+.1f}" for v in sp))
    print(f"{n:>8} per run pair, ins/s: "
          + " ".join(f"{v:+.1f}" for v in ratios(p, "ins/s")))
print("goals: Mpps within 5%, insertion within 20%, >= 1,000,000 "
      "queries/s; memory per rule only means something at 100,000 rules "
      "and more (resident set growth / rules)")

def verdict(name, ok, figure, counts):
    met = [f"{n} ({figure(n)})" for n in counts if ok(n) is True]
    miss = [f"{n} ({figure(n)})" for n in counts if ok(n) is False]
    none = [str(n) for n in counts if ok(n) is None]
    parts = []
    if met:
        parts.append("met at " + ", ".join(met))
    if miss:
        parts.append("NOT met at " + ", ".join(miss))
    if none:
        parts.append("no figure at " + ", ".join(none))
    print(f"  {name}: " + ("; ".join(parts) or "no rule count to judge"))

def judge(v, ok):
    return None if math.isnan(v) else ok(v)

counts = sorted(res)
big = [n for n in counts if n >= 100000]
verdict("datapath, counted at most 5% slower",
        lambda n: judge(res[n][1], lambda v: v >= -5),
        lambda n: pct(res[n][1]).strip(), counts)
verdict("insertion, counted at most 20% slower",
        lambda n: judge(res[n][2], lambda v: v >= -20),
        lambda n: pct(res[n][2]).strip(), counts)
verdict("queries, 1,000,000/s or more",
        lambda n: judge(res[n][4], lambda v: v >= 1e6),
        lambda n: f"{res[n][4]:.0f}/s", counts)
if mem_goal:
    verdict(f"memory, a counter adds at most {mem_goal} B a rule",
            lambda n: judge(res[n][3], lambda v: v <= float(mem_goal)),
            lambda n: f"{res[n][3]:+.0f} B", big)
elif big:
    print("  memory: a counter adds " + ", ".join(
        f"{res[n][3]:+.0f} B a rule at {n}" for n in big) +
        " (resident-set growth, a lower bound: swverbs reuses pool memory"
        " an earlier round of the process left mapped; no goal set:"
        " BENCH_MEM_GOAL)")
else:
    print("  memory: no rule count of 100,000 or more to judge")
PY
