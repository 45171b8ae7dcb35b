#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""examples/tenant-gw end to end: the gateway and its generator as two
DPDK processes joined by two shm wires, real frames.

usage: test_tenant_gw.py BUILD_DIR config|traffic|pacing|reload

config   every bad config is refused before a port is touched: non-zero
         exit, the file and the JSON path of the field in the message
traffic  per-tenant counts exact against what the generator sent; the
         red share of tenants far above their CIR within 1 % of what
         rte_meter gives for the generator's send trace; a paced tenant's
         egress rate against its configured rate; the JSON lines and the
         telemetry endpoints
pacing   two tenants paced at 10 and 4 Mbit/s, each sent twice its
         rate for 8 s: what left each tenant's Tx queue (the PMD's
         tx_q<N>_pace_bytes) over the run, less the time its bucket sat
         full (tx_q<N>_pace_full_ns: a descheduled gateway), within 1 % of
         the configured rate; and the tx_mbps column the user reads is
         that same figure
reload   (--fwd macswap) SIGHUP make-before-break: an unchanged tenant
         keeps its counters
         and loses no frame while others change, go and come; a bad
         file is refused and the running config stays

No timing assertion: the meter profiles make the red share a matter of
bucket sizes, not of when frames arrive (the PMD colours at poll time, a
loaded machine moves poll times); the pacing check reads departures from
the sender's side, the gateway's pacer, not arrivals (those carry the
delays of the gateway's and the generator's scheduling), and discounts
the time the pacer says it could not send: what is left is a property of
the token bucket, rate * (time - full) within one bucket, on a loaded
machine too.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

BUILD = os.path.abspath(sys.argv[1])
PMD = os.path.join(BUILD, "drivers", "librte_net_vbr.so")
GW = os.path.join(BUILD, "examples", "tenant-gw", "tenant-gw")
GEN = os.path.join(BUILD, "examples", "tenant-gw", "tenant-gw-gen")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                    "..")
DOC = "doc/guides/examples/tenant-gw.rst"
sys.path.insert(0, os.path.join(ROOT, "app", "test", "scripts"))
import doc_shapes  # noqa: E402
import testpmd_driver as tp  # noqa: E402
TAG = f"tgwt{os.getpid()}"
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def eal(prefix, lcores, wire):
    if wire == "pair":
        vdevs = [f"net_vbr0,wire=pair:{TAG}", f"net_vbr1,wire=pair:{TAG}"]
    else:
        vdevs = [f"net_vbr0,wire=shm:{TAG}a", f"net_vbr1,wire=shm:{TAG}b"]
    args = ["-l", lcores, "--no-huge", "-m", "512", "--no-pci",
            "--file-prefix", f"{TAG}{prefix}", "-d", PMD]
    for v in vdevs:
        args += ["--vdev", v]
    # the run's progress model (VBR_TEST_PROGRESS: devtools/test.sh runs
    # the suites once per model), and a service lcore for service
    return tp.progress_eal(args)


class Gateway:
    def __init__(self, conf, wire="shm", fwd="io", env=None):
        self.prefix = "g"
        argv = [GW] + eal(self.prefix, "0-1", wire) + [
            "--", "--config", conf, "--view", "json", "--fwd", fwd]
        print("+ " + " ".join(argv), flush=True)
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     env=dict(os.environ, **(env or {})))
        self.err = []
        self.out = []
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.err),
                         daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.out),
                         daemon=True).start()

    @staticmethod
    def _pump(f, lines):
        for line in f:
            lines.append(line)

    def wait_for(self, text, timeout=30):
        end = time.time() + timeout
        while time.time() < end:
            if any(text in line for line in self.err):
                return True
            if self.proc.poll() is not None:
                time.sleep(0.2)
                return any(text in line for line in self.err)
            time.sleep(0.05)
        return False

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        rc = self.proc.wait(timeout=60)
        time.sleep(0.2)
        sys.stdout.write("".join(line for line in self.err
                                 if not line.startswith(("EAL:", "TELEMETRY:"))))
        rows = [json.loads(line) for line in self.out if line.startswith("{")]
        return rc, rows

    def telemetry(self, cmd):
        path = f"/var/run/dpdk/{TAG}{self.prefix}/dpdk_telemetry.v2"
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(path)
        s.recv(4096)
        s.send(cmd.encode())
        reply = json.loads(s.recv(65536).decode())
        s.close()
        return reply


def run_gen(conf, mixes):
    argv = [GEN] + eal("t", "0", "shm") + ["--", "--config", conf] + mixes
    print("+ " + " ".join(argv), flush=True)
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=180)
    if p.returncode != 0:
        print(p.stderr)
    check(p.returncode == 0, f"generator exit {p.returncode}")
    return {o["tenant"]: o for o in map(json.loads, p.stdout.splitlines())}


def write(dirname, name, text):
    path = os.path.join(dirname, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def start_gateway(tmp, name, text, **kw):
    """Write the config NAME, start a gateway on it; (file, gateway), the
    gateway None when it did not start."""
    conf = write(tmp, name, text)
    gw = Gateway(conf, **kw)
    if not check(gw.wait_for("ready"), "gateway did not start"):
        gw.stop()
        return conf, None
    return conf, gw


def summary(rows):
    return {r["tenant"]: r for r in rows if r.get("summary")}


# ---- config ----

GOOD_TENANT = '{"name": "a", "vlan": 10, "rate_mbps": 10}'

BAD = [
    ("unknown top key",
     '{"tenant": []}', "tenant: unknown key"),
    ("unknown tenant key",
     '{"tenants": [{"name": "a", "vlan": 10, "rate": 5}]}',
     "tenants[0].rate: unknown key"),
    ("unknown meter key",
     '{"tenants": [{"name": "a", "vlan": 10, "meter": {"algorithm": '
     '"srtcm", "cir": 5, "cir_kbps": 5, "cbs": 100}}]}',
     "tenants[0].meter.cir: unknown key"),
    ("overlapping tenants",
     '{"tenants": [{"name": "a", "vlan": 10},\n'
     '             {"name": "b", "prefix": "10.0.0.0/8"}]}',
     'tenants[1]: "b" overlaps tenants[0] ("a")'),
    ("overlapping prefixes",
     '{"tenants": [{"name": "a", "prefix": "10.1.0.0/16"},\n'
     '             {"name": "b", "prefix": "10.1.128.0/17"}]}',
     'tenants[1]: "b" overlaps tenants[0] ("a")'),
    ("rate above link speed",
     '{"tenants": [{"name": "a", "vlan": 10, "rate_mbps": 150000}]}',
     "tenants[0].rate_mbps: 150000 Mbit/s is above the egress port's link "
     "speed, 100000 Mbit/s"),
    ("prefix host bits",
     '{"tenants": [{"name": "a", "prefix": "10.1.2.0/16"}]}',
     'tenants[0].prefix: "10.1.2.0/16" has host bits set'),
    ("prefix length",
     '{"tenants": [{"name": "a", "prefix": "2001:db8::/129"}]}',
     'tenants[0].prefix: "2001:db8::/129": the length must be 1 to 128'),
    ("prefix address",
     '{"tenants": [{"name": "a", "prefix": "10.1.0/16"}]}',
     'tenants[0].prefix: "10.1.0" is not an IPv4 or IPv6 address'),
    ("vlan range",
     '{"tenants": [{"name": "a", "vlan": 4096}]}',
     "tenants[0].vlan: 4096 is out of range 1 to 4095"),
    ("no match",
     '{"tenants": [{"name": "a", "rate_mbps": 5}]}',
     'tenants[0]: needs a "vlan" or a "prefix" to match'),
    ("duplicate name",
     '{"tenants": [{"name": "a", "vlan": 10}, {"name": "a", "vlan": 11}]}',
     "tenants[1].name: \"a\" is tenants[0]'s name too"),
    ("trtcm without pbs",
     '{"tenants": [{"name": "a", "vlan": 10, "meter": {"algorithm": '
     '"trtcm", "cir_kbps": 5, "pir_kbps": 10, "cbs": 100}}]}',
     "tenants[0].meter.pbs: missing"),
    ("pir below cir",
     '{"tenants": [{"name": "a", "vlan": 10, "meter": {"algorithm": '
     '"trtcm", "cir_kbps": 50, "pir_kbps": 10, "cbs": 100, "pbs": 100}}]}',
     "tenants[0].meter.pir_kbps: 10 is out of range 50 to"),
    ("default",
     '{"default": "pass", "tenants": [' + GOOD_TENANT + ']}',
     'default: must be "queue" or "drop"'),
    ("syntax error line 3",
     '{\n  "tenants": [\n    {"name": "a" "vlan": 10}\n  ]\n}',
     "line 3, column"),
]


def test_config(tmp):
    said = []
    for name, text, want in BAD:
        conf = write(tmp, "bad.json", text)
        argv = [GW] + eal("g", "0", "pair") + ["--", "--config", conf]
        p = subprocess.run(argv, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        msg = [line for line in p.stderr.splitlines()
               if line.startswith("tenant-gw:")]
        print(f"{name}: exit {p.returncode}: {' | '.join(msg)}", flush=True)
        said += [line.replace(conf, "tenants.json") for line in msg]
        check(p.returncode != 0, f"{name}: exit status {p.returncode}")
        check(any(f"{conf}: {want}" in line for line in msg),
              f"{name}: no '{conf}: {want}' in {msg}")
        check("ready" not in p.stderr, f"{name}: the gateway started")
        # the config error is all it says: no port, queue, rule or meter
        # message (each of those would be a line of its own)
        check(len(msg) == 1, f"{name}: a port was touched: {msg}")
    # every error the guide shows, in the shape the gateway prints it
    for shown in doc_shapes.block(ROOT, DOC, "tenant-gw-config-errors"):
        check(any(doc_shapes.line_ok(shown, line) for line in said),
              f"{DOC}: no error printed in the shape of {shown!r}")
    # --help: the usage on stdout, exit 0, for both programs; a bad --wait
    for prog, tail, want_rc, want in [
            (GW, ["--help"], 0, "usage: tenant-gw [EAL options]"),
            (GEN, ["--help"], 0, "usage: tenant-gw-gen [EAL options]"),
            (GEN, ["--config", "x.json", "--mix", "a=1:64:1", "--wait", "x"],
             1, None)]:
        p = subprocess.run([prog] + eal("h", "0", "pair") + ["--"] + tail,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=60)
        name = f"{os.path.basename(prog)} {' '.join(tail)}"
        check(p.returncode == want_rc, f"{name}: exit {p.returncode}")
        if want is not None:
            check(p.stdout.startswith(want), f"{name}: stdout {p.stdout!r}")
        else:
            check("--wait x: seconds" in p.stderr, f"{name}: {p.stderr!r}")
    # and a good one starts (so that the cases above fail for their reason)
    conf = write(tmp, "good.json", '{"tenants": [' + GOOD_TENANT + ']}')
    gw = Gateway(conf, wire="pair")
    check(gw.wait_for("ready"), "a good config did not start")
    rc, _ = gw.stop()
    check(rc == 0, f"good config: exit {rc}")


# ---- traffic ----

TRAFFIC = """{
    "default": "queue",
    "tenants": [
        {"name": "burst", "vlan": 100, "prefix": "10.8.0.0/16",
         "meter": {"algorithm": "srtcm", "cir_kbps": 8, "cbs": 50000,
                   "ebs": 25000}},
        {"name": "trburst", "prefix": "10.9.0.0/16", "rx_queues": 2,
         "meter": {"algorithm": "trtcm", "cir_kbps": 8, "pir_kbps": 16,
                   "cbs": 30000, "pbs": 60000}},
        {"name": "paced", "vlan": 200, "prefix": "2001:db8:2::/48",
         "rate_mbps": 10}
    ]
}
"""
KEYS = ["tenant", "packets", "bytes", "green", "yellow", "red", "dropped",
        "tx_mbps", "rate_limit_mbps"]


def test_traffic(tmp):
    conf, gw = start_gateway(tmp, "traffic.json", TRAFFIC)
    if gw is None:
        return
    gen = run_gen(conf, ["--mix", "burst=20:500:4000",
                         "--mix", "trburst=20:300:3000",
                         "--mix", "paced=20:1000:4000",
                         "--unmatched", "2:128:500"])
    time.sleep(1.5)  # one more snapshot for telemetry
    tel = gw.telemetry("/tenant_gw/tenant,burst").get("/tenant_gw/tenant")
    names = gw.telemetry("/tenant_gw/tenants").get("/tenant_gw/tenants")
    rc, rows = gw.stop()
    check(rc == 0, f"gateway exit {rc}")
    s = summary(rows)
    for r in rows:
        check(all(k in r for k in KEYS), f"JSON line without a key: {r}")
    for name in ["burst", "trburst", "paced", "(unmatched)"]:
        g, r = gen.get(name), s.get(name)
        if not check(g is not None and r is not None, f"{name}: no row"):
            continue
        print(f"{name}: sent {g['sent']} gateway {r}", flush=True)
        check(sum(1 for x in rows if x["tenant"] == name and
                  not x.get("summary")) >= 1, f"{name}: no per-second line")
        check((r["packets"], r["bytes"]) == (g["sent"], g["sent_bytes"]),
              f"{name}: gateway counted {r['packets']}/{r['bytes']}, sent "
              f"{g['sent']}/{g['sent_bytes']}")
        check(g["received"] == r["tx_packets"],
              f"{name}: generator got {g['received']}, gateway sent "
              f"{r['tx_packets']}")
        check(g["received_swapped"] == 0, f"{name}: --fwd io swapped MACs")
        if g["metered"]:
            check(r["green"] + r["yellow"] + r["red"] + r["rx_missed"] ==
                  r["packets"], f"{name}: colours do not add up: {r}")
            check(r["red"] > 0, f"{name}: above CIR and no red")
            diff = abs(r["red"] - g["expected_red"]) / g["sent"]
            print(f"{name}: red {r['red']} expected {g['expected_red']} "
                  f"(rte_meter on the send trace): {diff * 100:.3f} % of "
                  f"{g['sent']}", flush=True)
            check(diff <= 0.01, f"{name}: red share off by "
                  f"{diff * 100:.2f} % (> 1 %)")
    p, pr = gen.get("paced"), s.get("paced")
    if p and pr:
        # what pacing guarantees: at most the bucket above the rate over
        # the receive window; at least a fifth of the rate (a loaded
        # 2-core machine starves the forwarding lcore: at a load average
        # of 13 it got a third)
        span = p["received_bytes"] * 8 / 1e6 / max(p["rx_mbps"], 1e-9)
        burst = 10 * 125000 * 20 // 1000
        cap = 10 * 1.01 + burst * 8 / 1e6 / max(span, 1e-9)
        print(f"paced: {p['rx_mbps']:.3f} Mbit/s received over {span:.2f} s, "
              f"limit 10, allowed up to {cap:.3f}", flush=True)
        check(pr["rate_limit_mbps"] == 10, "paced: rate_limit_mbps")
        check(p["rx_mbps"] <= cap, f"paced: {p['rx_mbps']} Mbit/s > {cap}")
        check(p["rx_mbps"] >= 10 / 5, f"paced: {p['rx_mbps']} Mbit/s")
    check(tel is not None and tel.get("packets") == gen["burst"]["sent"] and
          tel.get("red") == s["burst"]["red"], f"telemetry: {tel}")
    check(names is not None and "paced" in names, f"telemetry: {names}")


# ---- pacing ----

PACING = """{
    "tenants": [
        {"name": "ten", "vlan": 10, "rate_mbps": 10},
        {"name": "four", "vlan": 40, "rate_mbps": 4}
    ]
}
"""
PACE_RATES = {"ten": 10, "four": 4}
PACE_SPAN_MIN = 3.0     # s of departures the 1 % is checked over, at least


def pace_window(rows, name):
    """The tenant's first and last per-second lines whose departures were
    read exact (nothing pending in the pacer at the read)."""
    mine = [r for r in rows if r["tenant"] == name and not r.get("summary")]
    exact = [i for i, r in enumerate(mine) if r.get("tx_pace_exact")]
    if len(exact) < 2:
        return mine, None, None
    return mine, exact[0], exact[-1]


def test_pacing(tmp):
    conf, gw = start_gateway(tmp, "pacing.json", PACING)
    if gw is None:
        return
    # 1000-byte frames: 8 s at twice the rate; the Tx queue (512 frames)
    # holds 0.4 s and 1 s of departures, so the gateway's pacers always
    # have frames waiting but when the machine starves the processes
    gen = run_gen(conf, ["--mix", "ten=20:1000:20000",
                         "--mix", "four=8:1000:8000"])
    time.sleep(1.5)
    rc, rows = gw.stop()
    check(rc == 0, f"gateway exit {rc}")
    # a paced tenant's summary, in the shape of the guide's JSON line
    shown = doc_shapes.block(ROOT, DOC, "tenant-gw-summary")
    paced = [r for r in rows if r.get("summary") and "tx_pace_bytes" in r]
    check(any(not doc_shapes.shape(shown, [json.dumps(r)]) for r in paced),
          f"{DOC}: no paced summary in the shape of {shown[0][:60]}...: "
          f"{[json.dumps(r)[:80] for r in paced]}")
    for name, rate in PACE_RATES.items():
        mine, i0, i1 = pace_window(rows, name)
        if not check(i0 is not None and all("tx_pace_bytes" in r
                                              for r in mine),
                     f"{name}: fewer than two exact departure reads in "
                     f"{len(mine)} lines"):
            continue
        a, b = mine[i0], mine[i1]
        span = b["tx_pace_time"] - a["tx_pace_time"]
        full = (b["tx_pace_full_ns"] - a["tx_pace_full_ns"]) / 1e9
        sent = (b["tx_pace_bytes"] - a["tx_pace_bytes"]) * 8 / 1e6
        busy = span - full
        mbps = sent / busy if busy > 0 else 0.0
        bucket = rate * 125000 * 20 // 1000     # the gateway's: 20 ms
        slack = bucket * 8 / 1e6 / busy if busy > 0 else 0.0
        print(f"{name}: {sent:.3f} Mbit left in {span:.3f} s, bucket full "
              f"{full:.3f} s: {mbps:.4f} Mbit/s, limit {rate} "
              f"({(mbps / rate - 1) * 100:+.3f} %; the bucket is "
              f"{slack / rate * 100:.3f} % of it); plain "
              f"{sent / span:.4f} Mbit/s; generator got "
              f"{gen.get(name, {}).get('received')} of "
              f"{gen.get(name, {}).get('sent')}", flush=True)
        if not check(busy >= PACE_SPAN_MIN,
                     f"{name}: {busy:.3f} s of departures, need "
                     f"{PACE_SPAN_MIN} (the machine starved the gateway)"):
            continue
        check(abs(mbps - rate) <= rate * 0.01,
              f"{name}: {mbps:.4f} Mbit/s left its queue, not within 1 % "
              f"of {rate}")
        # the tx_mbps column: each second's departures over that second,
        # so over the window it adds up to the same figure
        col = 0.0
        for j in range(i0 + 1, i1 + 1):
            p, r = mine[j - 1], mine[j]
            dt = r["tx_pace_time"] - p["tx_pace_time"]
            want = (r["tx_pace_bytes"] - p["tx_pace_bytes"]) * 8 / 1e6 / dt
            check(abs(r["tx_mbps"] - want) <= 0.002,
                  f"{name}: line {j}: tx_mbps {r['tx_mbps']}, departures "
                  f"{want:.4f} Mbit/s")
            col += r["tx_mbps"] * dt
        check(abs(col / busy - rate) <= rate * 0.01,
              f"{name}: tx_mbps over the window, less the time full: "
              f"{col / busy:.4f} Mbit/s, not within 1 % of {rate}")
        check(all(r["rate_limit_mbps"] == rate for r in mine),
              f"{name}: rate_limit_mbps")


# ---- reload ----

RELOAD_A = """{
    "spare_queues": 3,
    "tenants": [
        {"name": "keep", "vlan": 10,
         "meter": {"algorithm": "srtcm", "cir_kbps": 50000, "cbs": 200000,
                   "ebs": 100000}},
        {"name": "change", "vlan": 20, "rate_mbps": 5},
        {"name": "gone", "vlan": 30},
        {"name": "moved", "vlan": 50, "prefix": "10.5.0.0/16"}
    ]
}
"""
RELOAD_B = """{
    "spare_queues": 3,
    "default": "drop",
    "tenants": [
        {"name": "keep", "vlan": 10,
         "meter": {"algorithm": "srtcm", "cir_kbps": 50000, "cbs": 200000,
                   "ebs": 100000}},
        {"name": "change", "vlan": 20, "rate_mbps": 8},
        {"name": "moved", "vlan": 50, "prefix": "10.5.0.0/16",
         "rx_queues": 2},
        {"name": "new", "vlan": 40}
    ]
}
"""


# four new tenants and three spare Tx queues: the fourth finds none, after
# the first three got their queues, meters and shapers
RELOAD_HALF = """{
    "spare_queues": 3,
    "tenants": [
        {"name": "keep", "vlan": 10,
         "meter": {"algorithm": "srtcm", "cir_kbps": 50000, "cbs": 200000,
                   "ebs": 100000}},
        {"name": "change", "vlan": 20, "rate_mbps": 7},
        {"name": "n1", "vlan": 41, "rate_mbps": 3},
        {"name": "n2", "vlan": 42, "rate_mbps": 3},
        {"name": "n3", "vlan": 43},
        {"name": "n4", "vlan": 44}
    ]
}
"""


def check_baselines(rows, names):
    """Across the reloads, the counters of tenants NAMES never go back (a
    baseline reset would), and every row's departures equal what its Tx
    queue took once the queues are drained (the summary)."""
    for name in names:
        mine = [r for r in rows if r["tenant"] == name]
        for key in ["packets", "bytes", "green", "yellow", "tx_packets",
                    "tx_bytes", "tx_pace_bytes"]:
            vals = [r.get(key, 0) for r in mine]
            check(all(a <= b for a, b in zip(vals, vals[1:])),
                  f"{name}: {key} went back across a reload: {vals}")
    for name, r in summary(rows).items():
        if "tx_pace_bytes" in r:
            check(r["tx_pace_bytes"] == r["tx_bytes"],
                  f"{name}: {r['tx_pace_bytes']} bytes left its Tx queue, "
                  f"{r['tx_bytes']} went in")


def test_reload(tmp):
    conf, gw = start_gateway(tmp, "reload.json", RELOAD_A, fwd="macswap")
    if gw is None:
        return
    res = {}
    gconf = write(tmp, "gen.json", RELOAD_A)  # the file changes under it
    t = threading.Thread(target=lambda: res.update(run_gen(gconf, [
        "--mix", "keep=2:250:5000", "--mix", "change=1:250:2000",
        "--unmatched", "1:128:1000"])))
    t.start()
    time.sleep(1.5)
    # a bad file first: refused, nothing changes
    write(tmp, "reload.json", '{"tenants": [{"name": "keep", "vlan": 10,}]}')
    gw.proc.send_signal(signal.SIGHUP)
    check(gw.wait_for("reload refused"), "bad reload not refused")
    # one that fails half-way: undone, nothing changes
    write(tmp, "reload.json", RELOAD_HALF)
    gw.proc.send_signal(signal.SIGHUP)
    check(gw.wait_for("reload failed, the running configuration stays"),
          "half-way reload not undone")
    check(any("n4: no free Tx queue left" in line for line in gw.err),
          "half-way reload: not refused for n4's Tx queue")
    time.sleep(1.2)
    write(tmp, "reload.json", RELOAD_B)
    gw.proc.send_signal(signal.SIGHUP)
    check(gw.wait_for("reloaded"), "no reload")
    t.join()
    rc, rows = gw.stop()
    check(rc == 0, f"gateway exit {rc}")
    check(any("2 kept, 2 new, 2 retired" in line for line in gw.err),
          "reload: not 2 kept, 2 new, 2 retired")
    check(not any(r["tenant"] in ("n1", "n2", "n3", "n4") for r in rows),
          "the half-way reload's tenants showed in the view")
    check_baselines(rows, ["keep", "change", "(unmatched)"])
    # "default" changes at a restart only: the unmatched frames still go
    # through, and the view does not count them dropped
    check(any('"default" changes at a restart only; it stays "queue"' in
              line for line in gw.err), "default: no word of it staying")
    u, gu = summary(rows).get("(unmatched)"), res.get("(unmatched)")
    if check(u is not None and gu is not None, "(unmatched): no row"):
        check(u["packets"] == gu["sent"] and gu["received"] == gu["sent"] and
              u["dropped"] == 0 and u["rx_missed"] == 0,
              f"(unmatched): sent {gu['sent']}, received {gu['received']}, "
              f"gateway {u}")
    s = summary(rows)
    k, g = s.get("keep"), res.get("keep")
    if check(k is not None and g is not None, "keep: no row"):
        print(f"keep: sent {g['sent']} received {g['received']} gateway {k}")
        check(k["packets"] == g["sent"], f"keep: counted {k['packets']} of "
              f"{g['sent']}: its counter did not survive the reload")
        check(g["received"] == g["sent"], f"keep: {g['sent'] - g['received']}"
              " frames lost")
        check(g["received_swapped"] == g["received"],
              f"keep: --fwd macswap: {g['received_swapped']} of "
              f"{g['received']} swapped")
        check(k["green"] + k["yellow"] == g["sent"], f"keep: meter {k}")
    c = s.get("change")
    check(c is not None and c["rate_limit_mbps"] == 8, f"change: {c}")
    check(c is not None and c["packets"] == res.get("change", {}).get("sent"),
          f"change: counters lost by an in-place rate change: {c}")
    check("gone" not in s and "new" in s and "moved" in s,
          f"tenants after reload: {sorted(s)}")


def test_reload_nomem(tmp):
    """A reload out of memory (the shim fails the gateway's own callocs,
    its forwarding plans) is refused before anything changes: the running
    tenants keep forwarding and counting; once memory is back the same
    file reloads."""
    shim = os.path.abspath(sys.argv[3])
    trigger = os.path.join(tmp, "nomem")
    conf, gw = start_gateway(tmp, "reload.json", RELOAD_A,
                             env={"LD_PRELOAD": shim,
                                  "TGW_FAILALLOC": trigger})
    if gw is None:
        return
    res = {}
    gconf = write(tmp, "gen.json", RELOAD_A)
    t = threading.Thread(target=lambda: res.update(run_gen(gconf, [
        "--mix", "keep=2:250:5000", "--mix", "gone=1:250:2000"])))
    t.start()
    time.sleep(1.0)
    write(tmp, "reload.json", RELOAD_B)
    open(trigger, "w").close()
    gw.proc.send_signal(signal.SIGHUP)
    refused = gw.wait_for("reload refused, the running configuration "
                          "stays: out of memory")
    os.unlink(trigger)
    n_refused = len(gw.out)
    check(any("tgw-failalloc: calloc fails on purpose" in line
              for line in gw.err), "the shim failed no calloc")
    check(refused, "reload out of memory not refused")
    check(not any("reloaded" in line for line in gw.err),
          "a reload out of memory went ahead")
    # one whole second's lines after the refusal (five rows), then again
    end = time.time() + 20
    while len(gw.out) < n_refused + 5 and time.time() < end:
        time.sleep(0.1)
    n_before = len(gw.out)
    gw.proc.send_signal(signal.SIGHUP)
    check(gw.wait_for("reloaded"), "no reload once memory is back")
    t.join()
    rc, rows = gw.stop()
    check(rc == 0, f"gateway exit {rc}")
    # between the two: the running configuration, "gone" forwarding
    mid = [json.loads(line) for line in gw.out[n_refused:n_before]
           if line.startswith("{")]
    names = {r["tenant"] for r in mid}
    check(names == {"keep", "change", "gone", "moved", "(unmatched)"},
          f"after the refused reload: not the running configuration: "
          f"{sorted(names)}")
    check_baselines(rows, ["keep"])
    s = summary(rows)
    k, g = s.get("keep"), res.get("keep")
    if check(k is not None and g is not None, "keep: no row"):
        print(f"keep: sent {g['sent']} received {g['received']} gateway {k}")
        check(k["packets"] == g["sent"] and g["received"] == g["sent"],
              f"keep: sent {g['sent']}, received {g['received']}, "
              f"counted {k['packets']}")
    check("gone" not in s and "new" in s, f"after reload: {sorted(s)}")


def main():
    mode = sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="tgw-test-") as tmp:
        try:
            {"config": test_config, "traffic": test_traffic,
             "pacing": test_pacing, "reload": test_reload,
             "reload-nomem": test_reload_nomem}[mode](tmp)
        finally:
            for suffix in ("a", "b"):
                try:
                    os.unlink(f"/dev/shm/swverbs-shm.{TAG}{suffix}")
                except FileNotFoundError:
                    pass
            for prefix in ("g", "t", "h"):
                shutil.rmtree(f"/var/run/dpdk/{TAG}{prefix}",
                              ignore_errors=True)
    if failures:
        print(f"{len(failures)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
