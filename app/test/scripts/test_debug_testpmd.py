#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Debug logs, /ethdev/dump_priv and flow dump numbering against testpmd.

usage: test_debug_testpmd.py PATH/librte_net_vbr.so

testpmd on two vbr ports joined by a pair cable, two queues each, with
--log-level=pmd.net.vbr*:debug. The debug lines of queue setup name each
queue's descriptors, socket and mempool and the WQ and QP numbers created:
the Tx QPs are those /vbr/qps lists, the WQs and QPs those
/ethdev/dump_priv shows (with their states, RDY and RTS once started);
the memory registration lines (mempool, address, length, lkey) add up to
the MRs dump_priv counts; a Tx queue's rate limit and a QP counter bound
show there too. Rules: testpmd's numbers (flow create, flow
list) are the ones vbr's flow dump prints, after a rule in the middle and
the newest one are destroyed and a flush; each creation and destruction
logs the rule's number and verbs flows, which dump_priv and the
flow_verbs_flows xstat add up.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testpmd_driver as tp  # noqa: E402
from test_stat_telemetry import Telemetry, xstats  # noqa: E402

RULES = [
    "flow create 0 ingress pattern eth type is 0x88b5 / end "
    "actions queue index 1 / end",
    "flow create 0 ingress pattern eth / ipv4 / udp dst is 4789 / end "
    "actions rss queues 0 1 end / end",
    "flow create 0 priority 1 ingress pattern eth dst is "
    "02:00:00:00:00:99 / end actions drop / end",
    "flow create 0 ingress pattern eth / ipv6 / tcp / end "
    "actions queue index 0 / end",
]


def created(out):
    m = re.search(r"Flow rule #(\d+) created", out)
    return int(m.group(1)) if m else None


def listed(t):
    """testpmd's rule ids, from flow list."""
    out = t.cmd("flow list 0")
    return sorted(int(x) for x in re.findall(r"^(\d+)\s", out, re.M))


def dumped(t):
    """vbr's rule numbers, from flow dump all, in the dump's order."""
    out = t.cmd("flow dump 0 all")
    return [int(x) for x in
            re.findall(r"^port 0 vbr rule (\d+): handle", out, re.M)]


def run(pmd):
    c = tp.Checker()
    eal, prefix = tp.eal_args("dbg", pmd)
    # EAL takes the first --log-level that matches a logtype: before
    # eal_args' pmd.net.vbr:info
    eal = ["--log-level", "pmd.net.vbr*:debug"] + eal
    # full: dump_priv's counter is bound to a running Tx QP
    for vdev in tp.pair_vdevs("dbg", "full"):
        eal += ["--vdev", vdev]
    t = tp.TestPmd(eal, ["--rxq=2", "--txq=2", "--nb-cores=1",
                                 "--total-num-mbufs=8192"], prefix)
    tel = None
    try:
        t.wait_prompt()
        log = t.out
        rxq = {(int(p), int(q)): (int(d), int(s), mp, int(wq))
               for p, q, d, s, mp, wq in re.findall(
                   r"port (\d+) rxq (\d+): (\d+) descriptors x \d+ segments, "
                   r"socket (-?\d+), mempool (\S+): wq (\d+), cq handle", log)}
        txq = {(int(p), int(q)): (int(d), int(qp))
               for p, q, d, qp in re.findall(
                   r"port (\d+) txq (\d+): (\d+) descriptors x \d+ "
                   r"segments, socket -?\d+: qp (\d+), cq handle", log)}
        mrs = re.findall(r"port (\d+): mempool (\S+): registered addr "
                         r"(0x[0-9a-f]+) length (\d+): lkey (0x[0-9a-f]+)",
                         log)
        c.check(sorted(rxq) == [(0, 0), (0, 1), (1, 0), (1, 1)],
                f"a setup line per Rx queue: {sorted(rxq)}")
        c.check(sorted(txq) == [(0, 0), (0, 1), (1, 0), (1, 1)],
                f"a setup line per Tx queue: {sorted(txq)}")
        c.check(all(v[0] > 0 and v[2].startswith("mb_pool_")
                    for v in rxq.values()),
                f"Rx lines name descriptors and mempool: {rxq}")
        c.check(any(p == "0" for p, *_ in mrs) and
                all(int(n) > 0 for *_, n, _k in mrs),
                f"memory registration lines: {mrs}")

        tel = Telemetry(prefix)
        for port in (0, 1):
            q = tel(f"/vbr/qps,{port}")
            want = [txq.get((port, i), (0, -1))[1] for i in (0, 1)]
            c.check(q.get("txq_lqpn") == want,
                    f"port {port}: /vbr/qps txq_lqpn {q.get('txq_lqpn')} "
                    f"= the logged QPs {want}")
            d = tel(f"/ethdev/dump_priv,{port}")
            c.check(isinstance(d, str) and
                    f"vbr port {port} (net_vbr{port})" in d,
                    f"port {port}: dump_priv: {d!r}")
            d = d if isinstance(d, str) else ""
            for i in (0, 1):
                wq = rxq.get((port, i), (0, 0, "", -1))[3]
                c.check(re.search(rf"^  rxq {i}: wq {wq} \(RDY\)", d, re.M)
                        is not None,
                        f"port {port} rxq {i}: dump_priv wq {wq} RDY")
                qp = txq.get((port, i), (0, -1))[1]
                c.check(re.search(rf"^  txq {i}: qp {qp} \(RTS\), .*"
                                  r"rate limit 0 kbit/s", d, re.M)
                        is not None,
                        f"port {port} txq {i}: dump_priv qp {qp} RTS")
            hq = set()
            for line in re.findall(r"^  rss set.*hash QPs([\d ]*)$", d,
                                   re.M):
                hq |= {int(x) for x in line.split()}
            c.check(hq == set(q.get("hash_lqpn", [])) and hq,
                    f"port {port}: dump_priv hash QPs {sorted(hq)} = "
                    f"/vbr/qps hash_lqpn {q.get('hash_lqpn')}")
            m = re.search(r"^  mrs: (\d+), (\d+) bytes$", d, re.M)
            mine = [int(n) for p, _mp, _a, n, _k in mrs if int(p) == port]
            c.check(m is not None and int(m.group(1)) == len(mine) and
                    int(m.group(2)) == sum(mine),
                    f"port {port}: dump_priv mrs {m and m.groups()} = "
                    f"the logged registrations {mine}")
            c.check(re.search(r"progress (thread|service|inline)", d)
                    is not None and
                    (tp.test_progress() is None or
                     f"progress {tp.test_progress()}" in d),
                    f"port {port}: dump_priv progress model")

        # a rate limit and a bound counter show in dump_priv
        t.cmd("set port 0 queue 1 rate 100")
        qp1 = txq.get((0, 1), (0, -1))[1]
        r = tel(f"/vbr/qp_bind,0,{qp1}")
        d = tel("/ethdev/dump_priv,0")
        c.check(re.search(rf"^  txq 1: qp {qp1} \(RTS\), .*rate limit "
                          r"100000 kbit/s", d, re.M) is not None,
                "dump_priv: txq 1's rate limit 100000 kbit/s")
        c.check(re.search(r"^  qp counters: 1 bound, mode manual$", d, re.M)
                is not None and
                re.search(rf"^    cntn {r.get('cntn')}: lqpn {qp1}$", d,
                          re.M) is not None,
                f"dump_priv: the counter bound to txq 1's QP: {r}")
        tel(f"/vbr/qp_unbind,0,{r.get('cntn')}")

        # rules: testpmd's numbers are vbr's
        ids = []
        for r in RULES:
            out = t.cmd(r)
            ids.append(created(out))
        c.check(ids == [0, 1, 2, 3], f"testpmd numbers 0..3: {ids}")
        c.check(dumped(t) == [0, 1, 2, 3], "flow dump all: 0..3")
        n = len(t.out)
        t.cmd("flow destroy 0 rule 1")
        t.cmd("flow destroy 0 rule 3")
        c.check(re.search(r"port 0: rule 1 destroyed: \d+ verbs flows",
                          t.out[n:]) is not None and
                re.search(r"port 0: rule 3 destroyed", t.out[n:]),
                "destroy logs the rule numbers")
        n = len(t.out)
        new = created(t.cmd(RULES[1]))
        c.check(new == 3, f"after destroying 1 and 3 testpmd gives 3: {new}")
        m = re.search(r"port 0: rule (\d+) created: (\d+) verbs flows "
                      r"\((\d+) companions\), (\d+) on the device",
                      t.out[n:])
        c.check(m is not None and int(m.group(1)) == new and
                int(m.group(2)) == int(m.group(4)) > 0,
                f"creation logs the rule's number and verbs flows: "
                f"{m and m.groups()}")
        c.check(listed(t) == [0, 2, 3] and dumped(t) == [0, 2, 3],
                f"flow list {listed(t)} = flow dump {dumped(t)}")
        for rid in (0, 2, 3):
            out = t.cmd(f"flow dump 0 rule {rid}")
            got = re.findall(r"^port 0 vbr rule (\d+):", out, re.M)
            c.check(got == [str(rid)], f"flow dump 0 rule {rid}: {got}")
        # the rule logged at creation is the one dumped with that number
        out = t.cmd("flow dump 0 rule 3")
        vf = re.search(r", (\d+) verbs flows? \(", out)
        c.check(vf is not None and m is not None and
                vf.group(1) == m.group(2),
                f"rule 3's verbs flows: dump {vf and vf.group(1)}, "
                f"log {m and m.group(2)}")
        x = xstats(t, 0)
        d = tel("/ethdev/dump_priv,0")
        f = re.search(r"^  flows: (\d+) rules, (\d+) verbs flows: (\d+) "
                      r"user, (\d+) own$", d, re.M)
        c.check(f is not None and int(f.group(1)) == 3 and
                int(f.group(1)) == x.get("flow_rules") and
                int(f.group(3)) == x.get("flow_verbs_flows") and
                int(f.group(4)) == x.get("flow_own_verbs_flows") and
                int(f.group(2)) == int(f.group(3)) + int(f.group(4)),
                f"dump_priv flows {f and f.groups()} = xstats {x}")
        t.cmd("flow flush 0")
        c.check(created(t.cmd(RULES[0])) == 0 and dumped(t) == [0],
                "after a flush both number from 0")
        rc = t.quit()
        c.check(rc == 0, f"testpmd exits 0 ({rc})")
    finally:
        if tel is not None:
            tel.close()
        t.kill()
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(tp.main(run, __doc__))
