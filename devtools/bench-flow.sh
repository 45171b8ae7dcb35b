#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# rte_flow scale benchmark on vbr over a swverbs pair wire. Not a test.
#
# 1. Stock dpdk-test-flow-perf, eth / ipv4 (src varies) / udp, -> queue and
#    -> rss, 100,000 and 1,000,000 rules: insertion and deletion rate
#    (rules/s, flow-perf's own figures) and memory per rule: flow-perf's
#    socket-memory figure counts rte_malloc only, and the PMD and swverbs
#    use malloc, so the figure here is the growth of the peak resident set
#    over a 1,000-rule run of the same case, divided by the extra rules.
# 2. The same with DPDK's net_tap, to compare: it needs tc flower in the
#    kernel; where it is missing the script prints what flow-perf said.
# 3. The datapath: build/app/bench/bench-flow-rules creates 1, 1k, 100k and
#    1M rules (one mask), then 100k rules over 1, 8 and 32 masks, forwards
#    64-byte frames through them for a fixed time and prints Mpps (and the
#    PMD-only creation rate, with the port stopped). Two traffic patterns:
#    "spread" (frames cycle over 65,536 rules spread over the whole table:
#    every frame's lookup misses the cache at 100k and 1M rules) and "one"
#    (every frame hits the same rule whatever the number installed: the cost
#    of lookup itself, with the traffic held equal).
# 4. The classifier's ratios (cls_ratios below): 32 masks vs 1 and 1M rules
#    vs 1, each inside one process, with the flow caches off
#    (SWV_CLASSIFIER_NOCACHE=1) and on, and a base build when
#    VBR_BASE_BUILD_DIR names one; insertion and deletion rates with them.
#    1M vs 1 rule a second way too: in one 1M-rule table, frames spread
#    over 65,536 of its rules against all on rule 0 (as with one rule: its
#    lines stay in cache), in alternating 20-ms slices (bench-flow-rules
#    --spread-slices), so that the machine's changes of speed, which move
#    a ratio of two cases run one after the other by up to 2x here, hit
#    both alike.
#
# Core layout (2 cores): the DPDK main lcore (the application: flow-perf's
# insertion loop, bench-flow-rules' forwarding loop) on CPU 0, the swverbs
# engine thread pinned to CPU 1 (devarg engine_cpu=1). The machine may be
# shared: each flow-perf case runs BENCH_REPS times (default 3) and the best
# rates are printed.
#
# usage: bench-flow.sh [rule counts (100000,1000000)] [seconds per datapath
#        case (2)]
# Environment: VBR_BUILD_DIR (default build), FLOW_PERF (dpdk-test-flow-perf),
# BENCH_TIMEOUT (seconds per run, 600), BENCH_SKIP (comma list of perf, tap,
# datapath, ratios), BENCH_REPS (3), VBR_BASE_BUILD_DIR (absolute path of
# another build folder, for the ratios' "base" column).

set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$ROOT/${VBR_BUILD_DIR:-build}
PMD=$BUILD/drivers/librte_net_vbr.so
RULES=${1:-100000,1000000}
SECS=${2:-2}
FLOW_PERF=${FLOW_PERF:-dpdk-test-flow-perf}
TMO=${BENCH_TIMEOUT:-600}
REPS=${BENCH_REPS:-3}
SKIP=${BENCH_SKIP:-}
LOG=$BUILD/bench-flow
mkdir -p "$LOG"

[ -f "$PMD" ] || { echo "bench-flow.sh: build first ($PMD)" >&2; exit 1; }
command -v "$FLOW_PERF" >/dev/null ||
	{ echo "bench-flow.sh: $FLOW_PERF not found (apt install dpdk)" >&2; exit 1; }

EAL_VBR=(-l 0,1 --no-huge -m 2048 --no-shconf --no-pci -d "$PMD"
	--vdev net_vbr0,wire=pair:bf,engine_cpu=1 --vdev net_vbr1,wire=pair:bf,engine_cpu=1
	--log-level=pmd.net.vbr:error)

# Run flow-perf under a timeout; print its output; the peak RSS (kB) goes
# to $LOG/maxrss.
flow_perf() {
	/usr/bin/python3 - "$TMO" "$LOG/maxrss" "$@" <<'PY'
import resource, subprocess, sys
tmo, out, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
try:
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=tmo)
    sys.stdout.write(p.stdout.decode(errors="replace"))
    if p.returncode != 0:
        print("bench-flow: exit status %d" % p.returncode)
except subprocess.TimeoutExpired as e:
    sys.stdout.write((e.output or b"").decode(errors="replace"))
    print("bench-flow: timed out after %d s" % tmo)
open(out, "w").write("%d\n" % resource.getrusage(
    resource.RUSAGE_CHILDREN).ru_maxrss)
PY
}

# Pull the figures out of flow-perf's output.
parse() {
	/usr/bin/python3 - "$1" <<'PY'
import re, sys
t = open(sys.argv[1], errors="replace").read()
def last(pat):
    m = re.findall(pat, t)
    return m[-1] if m else None
ins = last(r"Throughput \| Insertion\].*insertion rate -> ([0-9.]+) K") or \
    last(r"Rules insertion rate -> ([0-9.]+) K")
dele = last(r"Throughput \| Deletion\].*deletion rate -> ([0-9.]+) K") or \
    last(r"Deletion\].*deletion rate -> ([0-9.]+) K") or \
    last(r"Rules deletion rate -> ([0-9.]+) K")
err = last(r"(Flow can't be created.*)") or last(r"(Cause: .*)") or \
    last(r"(bench-flow: .*)")
print("%s %s %s" % (ins or "-", dele or "-", (err or "").replace(" ", "_")))
PY
}

run_perf_case() { # name fate rules -> one table row
	local name=$1 fate=$2 n=$3 base rss0 rss1 f r i d e
	local ins=- del=- err=
	f=$LOG/$name-$n.log
	for (( r = 0; r < REPS; r++ )); do
		flow_perf "$FLOW_PERF" "${EAL_VBR[@]}" -- --ingress --ether \
			--ipv4 --udp "$fate" --rxq=4 --txq=4 --portmask=0x2 \
			--rules-count="$n" \
			--rules-batch=$(( n < 100000 ? n : 100000 )) \
			--deletion-rate --dump-socket-mem > "$f.$r" 2>&1
		rss1=$(cat "$LOG/maxrss")
		read -r i d e < <(parse "$f.$r")
		if [ "$i" = "-" ]; then
			err=$e
			cp "$f.$r" "$f"
			continue
		fi
		if [ "$ins" = "-" ] || (( $(echo "$i > $ins" | bc) )); then
			ins=$i
			cp "$f.$r" "$f"
		fi
		if [ "$del" = "-" ] || (( $(echo "$d > $del" | bc) )); then
			del=$d
		fi
	done
	flow_perf "$FLOW_PERF" "${EAL_VBR[@]}" -- --ingress --ether --ipv4 \
		--udp "$fate" --rxq=4 --txq=4 --portmask=0x2 --rules-count=1000 \
		--rules-batch=1000 > "$LOG/$name-base.log" 2>&1
	rss0=$(cat "$LOG/maxrss")
	base=$(( (rss1 - rss0) * 1024 / (n - 1000) ))
	if [ "$ins" = "-" ]; then
		printf "%-16s %9s  failed: %s (see %s)\n" "$name" "$n" \
			"${err//_/ }" "$f"
	else
		printf "%-16s %9s %12.0f %12.0f %10s\n" "$name" "$n" \
			"$(echo "$ins * 1000" | bc)" "$(echo "$del * 1000" | bc)" \
			"$base"
	fi
}

if [[ ",$SKIP," != *,perf,* ]]; then
	echo "== dpdk-test-flow-perf on vbr (swverbs pair wire), port 1, 4 Rx queues"
	printf "%-16s %9s %12s %12s %10s\n" case rules "insert/s" "delete/s" "B/rule"
	for n in ${RULES//,/ }; do
		run_perf_case eth-ipv4-udp-q --queue "$n"
		run_perf_case eth-ipv4-udp-rss --rss "$n"
	done
fi

if [[ ",$SKIP," != *,tap,* ]]; then
	echo "== the same on net_tap (needs tc flower)"
	f=$LOG/tap.log
	if [ "$(id -u)" != 0 ]; then
		echo "net_tap: needs root, skipped"
	else
		flow_perf "$FLOW_PERF" -l 0,1 --no-huge -m 1024 --no-shconf \
			--no-pci --vdev net_tap0,iface=vbrbf0 \
			--log-level=pmd.net.tap:debug -- --ingress --ether \
			--ipv4 --udp --queue --rules-count=1000 \
			--rules-batch=1000 --deletion-rate > "$f" 2>&1
		read -r ins del err < <(parse "$f")
		if [ "$ins" = "-" ]; then
			echo "net_tap: no rules: flow-perf says:"
			grep -iE "flower|netlink|tc |flow|cause|error" "$f" |
				grep -v "^::" | head -8 | sed 's/^/  /'
		else
			echo "net_tap: insert $ins K rules/s, delete $del K rules/s (1,000 rules)"
		fi
	fi
fi

if [[ ",$SKIP," != *,datapath,* ]]; then
	BENCH=$BUILD/app/bench/bench-flow-rules
	echo "== datapath: frames through N rules (bench-flow-rules, ${SECS}s a case)"
	if [ ! -x "$BENCH" ]; then
		echo "$BENCH not built: is subdir('bench') in app/meson.build?"
	else
		for flows in 65536 1; do
			[ "$flows" = 1 ] && echo "-- one: every frame hits one rule" ||
				echo "-- spread: frames over $flows rules"
			timeout -k 10 $(( TMO * 3 )) "$BENCH" -l 0 --no-huge \
				-m 4096 --no-shconf --no-pci -d "$PMD" \
				--vdev net_vbr0,wire=pair:bd,engine_cpu=1 \
				--vdev net_vbr1,wire=pair:bd,engine_cpu=1 \
				--log-level=pmd.net.vbr:error -- \
				--rules 1,1000,100000,1000000 --masks 1,8,32 \
				--mask-rules 100000 --seconds "$SECS" \
				--flows "$flows" 2>&1 |
				grep -vE "^(EAL|TELEMETRY)"
			rc=${PIPESTATUS[0]}
			[ "$rc" = 0 ] || echo "bench-flow-rules: exit status $rc"
		done
	fi
fi

# One bench-flow-rules process of variant $1 (off, on, base), its output
# into $2, the bench's own options after.
cls_run() {
	local v=$1 log=$2 pmd=$PMD b=$BUILD/app/bench/bench-flow-rules
	shift 2
	if [ "$v" = base ]; then
		pmd=$VBR_BASE_BUILD_DIR/drivers/librte_net_vbr.so
		b=$VBR_BASE_BUILD_DIR/app/bench/bench-flow-rules
	fi
	env $([ "$v" = off ] && echo SWV_CLASSIFIER_NOCACHE=1) \
	timeout -k 10 "$TMO" "$b" -l 0 --no-huge -m 4096 \
		--no-shconf --no-pci -d "$pmd" \
		--file-prefix "bfc$$" \
		--vdev "net_vbr0,wire=pair:bc$$,engine_cpu=1" \
		--vdev "net_vbr1,wire=pair:bc$$,engine_cpu=1" \
		--log-level=pmd.net.vbr:error -- "$@" > "$log" 2>&1
}

# The classifier's ratios (issue 10): 100,000 rules over 32 masks vs 1 mask,
# frames spread over 65,536 rules and all hitting one rule; 1,000,000 rules
# vs 1 rule (spread). Each ratio is taken inside one process (both cases of
# a ratio run in the same bench-flow-rules process, one after the other),
# since this machine's processes land on different speeds; BENCH_REPS
# processes per variant, alternating, and the median ratio printed. The
# variants: "off" is this build with SWV_CLASSIFIER_NOCACHE=1 (the walk
# alone), "on" this build, and "base" the build in $VBR_BASE_BUILD_DIR when
# set: an older tree, e.g. "git archive <commit> | tar -x -C build-base/src",
# a symlink build-base/src/.sdk to this tree's .sdk, then
# "VBR_BUILD_DIR=build bash devtools/setup.sh" in build-base/src, and
# VBR_BASE_BUILD_DIR=$PWD/build-base/src/build. Insertion and deletion
# rates (ins/s, del/s of the 100,000-rule cases, port started) are printed
# per variant too.
# Core layout: as the datapath cases (bench on CPU 0, engine on CPU 1).
cls_ratios() {
	local out=$LOG/cls v r fl
	local variants="off on"
	mkdir -p "$out"
	rm -f "$out"/*.log
	[ -n "${VBR_BASE_BUILD_DIR:-}" ] && variants="base off on"
	for (( r = 0; r < REPS; r++ )); do
		for v in $variants; do
			for fl in 65536 1; do
				cls_run "$v" "$out/$v-$fl-$r.log" \
					--rules 1,1000000 --masks 1,32 \
					--mask-rules 100000 --seconds "$SECS" \
					--flows "$fl" --no-stopped ||
					echo "bench-flow-rules ($v, flows $fl): exit status $?"
			done
			[ "$v" = base ] && continue	# older trees lack it
			cls_run "$v" "$out/$v-sl-$r.log" \
				--rules 1 --masks 1 --mask-rules 1 \
				--seconds "$((SECS * 2))" --flows 65536 \
				--no-stopped --spread-slices 1000000 ||
				echo "bench-flow-rules ($v, spread slices): exit status $?"
		done
	done
	/usr/bin/python3 - "$out" $variants <<'PY'
import glob, statistics, sys
out, variants = sys.argv[1], sys.argv[2:]

def rows(path):
    # rules masks ... Mpps: the rows of one process, in order
    r = []
    for line in open(path, errors="replace"):
        f = line.split()
        if len(f) >= 10 and f[0].isdigit() and f[1].isdigit():
            r.append((int(f[0]), int(f[1]), float(f[5]), float(f[6]),
                      float(f[8])))
    return r

def find(r, rules, masks):
    for x in r:
        if x[0] == rules and x[1] == masks:
            return x
    return None

cases = [("spread", 65536, "32 vs 1 mask, 100k rules", 100000, 32,
          100000, 1, 0.5),
         ("one", 1, "32 vs 1 mask, 100k rules", 100000, 32, 100000, 1, 0.8),
         ("spread", 65536, "1M vs 1 rule, 1 mask", 1000000, 1, 1, 1, 0.9)]
print("%-7s %-26s %s  goal" % ("frames", "ratio",
      "  ".join("%14s" % v for v in variants)))
for pat, fl, name, n1, m1, n0, m0, goal in cases:
    cells = []
    for v in variants:
        rat, a, b = [], [], []
        for p in sorted(glob.glob("%s/%s-%d-*.log" % (out, v, fl))):
            r = rows(p)
            x, y = find(r, n1, m1), find(r, n0, m0)
            if x and y and y[4] > 0:
                rat.append(x[4] / y[4])
                a.append(x[4])
                b.append(y[4])
        cells.append("%5.2fx %4.1f/%-4.1f" % (statistics.median(rat),
                     statistics.median(a), statistics.median(b))
                     if rat else "%14s" % "-")
    print("%-7s %-26s %s  >= %.1fx" % (pat, name, "  ".join(cells), goal))
cells = []
for v in variants:
    rat, a, b = [], [], []
    for p in sorted(glob.glob("%s/%s-sl-*.log" % (out, v))):
        for line in open(p, errors="replace"):
            f = line.split()
            if len(f) == 8 and f[:2] == ["#", "spread-slices"]:
                rat.append(1 + float(f[7]) / 100)
                a.append(float(f[6]))
                b.append(float(f[5]))
    cells.append("%5.2fx %4.1f/%-4.1f" % (statistics.median(rat),
                 statistics.median(a), statistics.median(b))
                 if rat else "%14s" % "-")
print("%-7s %-26s %s  >= 0.9x" % ("spread", "1M: vs 1 rule's (slices)",
      "  ".join(cells)))
print("(each cell: median ratio, then the median Mpps of the two cases;")
print(" slices: one 1M-rule table, 20-ms slices with frames spread over")
print(" 65,536 of its rules and all on rule 0, alternating)")
print("%-7s %-26s %s" % ("", "insert/s, delete/s",
      "  ".join("%14s" % v for v in variants)))
for masks in (1, 32):
    cells = []
    for v in variants:
        ins, dele = [], []
        for p in glob.glob("%s/%s-*.log" % (out, v)):
            x = find(rows(p), 100000, masks)
            if x:
                ins.append(x[2])
                dele.append(x[3])
        cells.append("%6.0fk/%6.0fk" % (statistics.median(ins) / 1e3,
                     statistics.median(dele) / 1e3) if ins else "%14s" % "-")
    print("%-7s %-26s %s" % ("", "100k rules, %d mask%s" %
          (masks, "s" if masks > 1 else ""), "  ".join(cells)))
PY
}

if [[ ",$SKIP," != *,ratios,* ]]; then
	echo "== classifier: ratios in one process, caches off (SWV_CLASSIFIER_NOCACHE=1) and on"
	cls_ratios
fi
