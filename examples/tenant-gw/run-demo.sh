#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The tenant-gw demo (devtools/run.sh tenant-gw runs it after the build):
# the gateway and the generator as two DPDK processes joined by two shm
# wires, gen port 0 -> gateway port 0 (ingress) and gateway port 1
# (egress) -> gen port 1, with the sample config tenants.json. The
# generator sends each tenant its mix for a few seconds (silver at twice
# its CIR), the gateway prints its JSON lines and, at SIGINT, its summary.
#
# Exits 0 when: every tenant's packets and bytes equal what the generator
# sent, each tenant forwarded frames back to the generator, and silver (the
# one above its CIR) has red > 0 when the generator's send trace has red
# (rte_meter on it: a machine that starves the generator sends slower, and
# then the demo says so instead).
#
# Core layout: gateway -l 0-1 (main lcore 0: control and the view; lcore 1
# forwards), generator -l 0 (one lcore sends and receives). Both use
# progress=inline (the PMD's default): no engine thread.
#
# Environment: VBR_BUILD_DIR (default build), TGW_DEMO_PACKETS (silver's
# frames, default 20000; the others in proportion).

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
BUILD=$ROOT/${VBR_BUILD_DIR:-build}
PMD=$BUILD/drivers/librte_net_vbr.so
GW=$BUILD/examples/tenant-gw/tenant-gw
GEN=$BUILD/examples/tenant-gw/tenant-gw-gen
CONF=examples/tenant-gw/tenants.json
N=${TGW_DEMO_PACKETS:-20000}
for f in "$PMD" "$GW" "$GEN"; do
	[ -x "$f" ] || [ -f "$f" ] || { echo "run-demo.sh: $f was not built" >&2; exit 1; }
done

TAG=tgwd$$
OUT=$(mktemp -d)
GW_PID=
cleanup()
{
	[ -n "$GW_PID" ] && kill "$GW_PID" 2>/dev/null || true
	rm -rf "$OUT" "/var/run/dpdk/${TAG}g" "/var/run/dpdk/${TAG}t" \
		"/dev/shm/swverbs-shm.${TAG}a" "/dev/shm/swverbs-shm.${TAG}b"
}
trap cleanup EXIT

EAL=(--no-huge --no-pci -d "$PMD"
     --vdev "net_vbr0,wire=shm:${TAG}a" --vdev "net_vbr1,wire=shm:${TAG}b")
echo "==> $GW -l 0-1 -m 512 --file-prefix ${TAG}g ${EAL[*]} -- --config $CONF"
"$GW" -l 0-1 -m 512 --file-prefix "${TAG}g" "${EAL[@]}" -- \
	--config "$CONF" >"$OUT/gw.json" 2>"$OUT/gw.err" &
GW_PID=$!
for _ in $(seq 100); do
	grep -q ready "$OUT/gw.err" 2>/dev/null && break
	kill -0 "$GW_PID" 2>/dev/null || break
	sleep 0.1
done
if ! grep -q ready "$OUT/gw.err"; then
	cat "$OUT/gw.err" >&2
	echo "run-demo.sh: the gateway did not start" >&2
	exit 1
fi
MIX=(--mix "gold=30:512:$((N / 2))" --mix "silver=40:256:$N"
     --mix "bronze=8:1024:$((N / 10))" --unmatched "2:128:$((N / 20))")
echo "==> $GEN -l 0 -m 256 --file-prefix ${TAG}t ${EAL[*]} -- --config $CONF ${MIX[*]}"
if ! timeout 120 "$GEN" -l 0 -m 256 --file-prefix "${TAG}t" "${EAL[@]}" -- \
	--config "$CONF" "${MIX[@]}" >"$OUT/gen.json" 2>"$OUT/gen.err"; then
	cat "$OUT/gen.err" >&2
	echo "run-demo.sh: the generator failed" >&2
	exit 1
fi
kill -INT "$GW_PID"
rc=0
wait "$GW_PID" || rc=$?
GW_PID=
grep -v '^EAL:\|^TELEMETRY:' "$OUT/gw.err" || true
if [ "$rc" -ne 0 ]; then
	echo "run-demo.sh: the gateway exited with status $rc" >&2
	exit 1
fi
echo "==> the gateway's last second and summary (JSON lines):"
grep '"summary"' "$OUT/gw.json"
echo "==> the generator:"
cat "$OUT/gen.json"
/usr/bin/python3 - "$OUT/gw.json" "$OUT/gen.json" <<'PY'
import json
import sys

rows = {}
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o.get("summary"):
        rows[o["tenant"]] = o
gen = {o["tenant"]: o for o in map(json.loads, open(sys.argv[2]))}
bad = []
for name, g in gen.items():
    r = rows.get(name)
    if r is None:
        bad.append(f"{name}: not in the gateway's summary")
        continue
    if (r["packets"], r["bytes"]) != (g["sent"], g["sent_bytes"]):
        bad.append(f"{name}: gateway counted {r['packets']} frames "
                   f"{r['bytes']} bytes, generator sent {g['sent']} "
                   f"{g['sent_bytes']}")
    if g["received"] == 0:
        bad.append(f"{name}: nothing came back through the gateway")
starved = gen.get("silver", {}).get("expected_red", 0) == 0
if not starved and rows.get("silver", {}).get("red", 0) == 0:
    bad.append("silver: above its CIR, but no red frame")
for b in bad:
    print("run-demo.sh: " + b, file=sys.stderr)
if bad:
    sys.exit(1)
s = rows["silver"]
if starved:
    print("==> note: the generator did not get silver above its CIR (its "
          "send trace has no red for rte_meter: the machine starved it); "
          "no red expected")
print(f"==> done: every tenant counted exactly; silver red "
      f"{s['red']}/{s['packets']} (expected from rte_meter on the "
      f"generator's send times: {gen['silver']['expected_red']})")
PY
