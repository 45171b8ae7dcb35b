#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""QP counters, xstats and the /vbr/ telemetry against a live testpmd.

usage: test_stat_telemetry.py PATH/librte_net_vbr.so

testpmd on two vbr ports joined by a pair cable. Over its telemetry socket
(/var/run/dpdk/<prefix>/dpdk_telemetry.v2, a small client of our own, and
once through /usr/bin/dpdk-telemetry.py): /vbr/ports and /vbr/qps; bind
port 0's Tx QP to a new counter and its hash QP to that counter, port 1's
hash QPs to a counter; one burst each way (rxonly, tx_first): the counters' counts
equal testpmd's TX/RX figures exactly, and so do the qp_cnt<N>_* xstats;
the port counters hold the identity rx_wire_frames = rx_delivered +
rx_out_of_buffer + rx_no_match + rx_error_completions + rx_flow_dropped;
xstats reset zeroes the xstats, not the device's counters; every command's
errors (errno name and text): unknown lqpn/cntn (ENOENT), already bound,
bind or unbind in auto mode (EINVAL), auto mode with a bound QP (EBUSY),
bad parameters (EINVAL: every endpoint's, strictly: a trailing comma, an
empty or stray field, a number with anything after it); unbind of all of a counter's QPs frees it; auto
mode by type binds, at the next port start, the Tx QP, which moves RESET ->
INIT with a port there (as the kernel's _ib_modify_qp() binds), and not the
hash QPs made there, which are never modified (a ConnectX leaves them
unbound too), with testpmd's pid and name. /vbr/mrs and
/vbr/mr show the MRs the PMD registered (mrlen, pages, access_errors).
"""

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testpmd_driver as tp  # noqa: E402

TELEMETRY_PY = "/usr/bin/dpdk-telemetry.py"
# On a NIC (suite hw: VBR_TEST_DEV, VBR_TEST_DEV_PEER) through RDMA netlink;
# the exact counts and their names are swverbs' only.
SW = not os.environ.get("VBR_TEST_DEV")


class Telemetry:
    """A client of DPDK's telemetry v2 socket."""

    def __init__(self, prefix):
        path = f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2"
        if os.geteuid() != 0:
            path = os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"),
                                "dpdk", prefix, "dpdk_telemetry.v2")
        self.path = path
        end = time.monotonic() + 20
        while not os.path.exists(path) and time.monotonic() < end:
            time.sleep(0.1)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.connect(path)
        self.info = json.loads(self.sock.recv(65536).decode())

    def __call__(self, cmd):
        self.sock.send(cmd.encode())
        reply = json.loads(self.sock.recv(1 << 20).decode())
        key = cmd.split(",", 1)[0]
        return reply[key]

    def close(self):
        self.sock.close()


def xstats(t, port):
    out = t.cmd(f"show port xstats {port}")
    return {k: int(v) for k, v in re.findall(r"(\w+):\s+(\d+)", out)}


def is_error(r, name):
    return isinstance(r, dict) and r.get("error") == name and \
        r.get("errno") == getattr(__import__("errno"), name) and \
        r.get("message") == os.strerror(r["errno"])


def bad_params(tel, c, tx0):
    """Strict parameters: a number with nothing after it, no empty field,
    no stray field; every /vbr/ endpoint answers EINVAL, changing nothing.
    """
    for ep in ("port", "port_counters", "qp_mode", "qp_counters", "qps",
               "mrs"):
        for p in ("0,", "0,0", "0,,", "0x0", "+0", " 0", "0 ", ""):
            r = tel(f"/vbr/{ep},{p}")
            c.check(is_error(r, "EINVAL") and
                    r.get("what") == "usage: <port>",
                    f"/vbr/{ep},{p}: EINVAL: {r}")
    for cmd in ("/vbr/ports,5", "/vbr/ports,0", "/vbr/ports,x",
                "/vbr/ports,,"):
        c.check(is_error(tel(cmd), "EINVAL"), f"{cmd}: EINVAL")
    # a comma right after the command is the telemetry library's to drop
    c.check("0" in tel("/vbr/ports,"), "/vbr/ports,: no parameters")
    for cmd in ("/vbr/qp_counter,0,1,", "/vbr/qp_counter,0,1,2",
                "/vbr/qp_counter,0,,1", "/vbr/qp_counter,0,-1",
                "/vbr/mr,0,1,", "/vbr/mr,0,1x", "/vbr/mr,0,",
                "/vbr/qp_bind,0,999999,", f"/vbr/qp_bind,0,{tx0},1,",
                "/vbr/qp_bind,0,999999,1,2", "/vbr/qp_bind,0,99999999999",
                f"/vbr/qp_bind,0,{tx0},", "/vbr/qp_unbind,0,7,",
                "/vbr/qp_unbind,0,7,1,", "/vbr/qp_unbind,0,7,1,2",
                "/vbr/qp_set_auto,0", "/vbr/qp_set_auto,0,",
                "/vbr/qp_set_auto,0,type,", "/vbr/qp_set_auto,0,,type",
                "/vbr/qp_set_auto,0,type,type", "/vbr/qp_set_auto,0,off,"):
        r = tel(cmd)
        c.check(is_error(r, "EINVAL") and r.get("what", "").startswith(
                "usage: "), f"{cmd}: EINVAL, usage: {r}")
    c.check(tel("/vbr/qp_mode,0").get("mode") == "none" and
            tel("/vbr/qp_counters,0").get("cntn") == [],
            "refused requests bound nothing")


def run(pmd, c):
    t = tp.start_pair("stat", pmd, ["--total-num-mbufs=8192"], "full")
    tel = None
    try:
        t.wait_prompt()
        tel = Telemetry(t.prefix)
        dev0 = os.environ.get("VBR_TEST_DEV") or "net_vbr0"
        dev1 = os.environ.get("VBR_TEST_DEV_PEER") or "net_vbr1"
        ports = tel("/vbr/ports")
        c.check(ports == {"0": f"{dev0}/1", "1": f"{dev1}/1"},
                f"/vbr/ports: {ports}")
        p1 = tel("/vbr/port,1")
        c.check(p1 == {"ifname": dev1, "port": 1, "ethdev_port": 1,
                       "name": "net_vbr1",
                       "backend": "swverbs" if SW else "ibverbs"},
                f"/vbr/port,1: {p1}")

        # A device whose MRs and QP counters are the kernel's (a NIC
        # through libibverbs) reads them over RDMA netlink: where the
        # kernel has none (swverbs' provider), every such endpoint says
        # EPROTONOSUPPORT, and there is nothing more to check here.
        m0 = tel("/vbr/qp_mode,0")
        if not SW and is_error(m0, "EPROTONOSUPPORT"):
            c.check(is_error(tel("/vbr/mrs,0"), "EPROTONOSUPPORT"),
                    "/vbr/mrs: EPROTONOSUPPORT too")
            print("SKIP (MRs, QP counters): the device's are the kernel's, "
                  "read over RDMA netlink, which this kernel lacks "
                  "(EPROTONOSUPPORT)", flush=True)
            c.check(t.quit() == 0, "testpmd exits cleanly")
            return c.failed == 0

        # dpdk-telemetry.py itself reads the same endpoint
        if os.path.exists(TELEMETRY_PY):
            out = subprocess.run(
                [TELEMETRY_PY, "-f", t.prefix], input="/vbr/qp_mode,0\n",
                capture_output=True, text=True, timeout=30).stdout
            c.check('"mode": "none"' in out and dev0 in out,
                    f"dpdk-telemetry.py /vbr/qp_mode,0: {out[-300:]!r}")

        q0 = tel("/vbr/qps,0")
        q1 = tel("/vbr/qps,1")
        c.check(len(q0["txq_lqpn"]) == 1 and q0["txq_lqpn"][0] > 0 and
                len(q1["hash_lqpn"]) >= 1, f"/vbr/qps: {q0} {q1}")
        tx0, h0 = q0["txq_lqpn"][0], q0["hash_lqpn"]
        h1 = q1["hash_lqpn"]

        # MRs: the PMD registers its mempool's memory
        mrs = tel("/vbr/mrs,0")
        c.check(len(mrs.get("mrn", [])) >= 1, f"/vbr/mrs,0: {mrs}")
        if mrs.get("mrn"):
            mr = tel(f"/vbr/mr,0,{mrs['mrn'][0]}")
            c.check(mr.get("mrn") == mrs["mrn"][0] and
                    (not SW or mr.get("mrlen", 0) > 0) and
                    (not SW or (mr.get("pages", 0) >= 1 and
                                mr.get("access_errors") == 0)),
                    f"/vbr/mr,0,{mrs['mrn'][0]}: {mr}")
        c.check(is_error(tel("/vbr/mr,0,999999"), "ENOENT"),
                "an unknown MR: ENOENT")

        # errors
        c.check(is_error(tel("/vbr/qp_bind,0,999999"), "ENOENT"),
                "bind of an unknown lqpn: ENOENT")
        c.check(is_error(tel(f"/vbr/qp_bind,0,{tx0},7"), "ENOENT"),
                "bind to an unknown cntn: ENOENT")
        c.check(is_error(tel("/vbr/qp_bind,0"), "EINVAL"),
                "bind without lqpn: EINVAL")
        c.check(is_error(tel("/vbr/qp_bind,9,1"), "EINVAL"),
                "bind on a port that is not vbr's: EINVAL")
        c.check(is_error(tel("/vbr/qp_counter,0,7"), "ENOENT"),
                "an unknown counter: ENOENT")
        c.check(is_error(tel("/vbr/qp_unbind,0,7"), "ENOENT"),
                "unbind all of an unknown counter: ENOENT")
        c.check(is_error(tel("/vbr/qp_set_auto,0,size"), "EINVAL"),
                "unknown auto criteria: EINVAL")
        bad_params(tel, c, tx0)

        r = tel(f"/vbr/qp_bind,0,{tx0}")
        c0 = r.get("cntn", -1)
        c.check((c0 == 1 or not SW) and r.get("lqpn") == tx0 and
                r.get("ifname") == dev0, f"bind port 0 Tx QP: {r}")
        # the kernel's alloc_and_bind() answers ENOMEM here (design.rst)
        c.check(is_error(tel(f"/vbr/qp_bind,0,{tx0}"),
                         "EINVAL" if SW else "ENOMEM"),
                "bind of a bound QP: EINVAL")
        c.check(is_error(tel(f"/vbr/qp_bind,0,{tx0},{c0}"), "EINVAL"),
                "bind of a bound QP to its counter: EINVAL")
        r = tel(f"/vbr/qp_bind,0,{h0[0]},{c0}")
        c.check(r.get("cntn") == c0 and r.get("lqpn") == h0[0],
                f"bind port 0 hash QP to the existing counter: {r}")
        r = tel(f"/vbr/qp_bind,1,{h1[0]}")
        c1 = r.get("cntn")
        c.check(c1 == 1 or (not SW and c1 is not None),
                f"bind port 1 hash QP: {r}")
        for q in h1[1:]:
            r = tel(f"/vbr/qp_bind,1,{q},{c1}")
            c.check(r.get("cntn") == c1, f"bind hash QP {q} to {c1}: {r}")
        m = tel("/vbr/qp_mode,1")
        c.check(m.get("mode") == "manual" and m.get("criteria") == "",
                f"port 1 mode manual: {m}")
        r = tel("/vbr/qp_set_auto,1,type")
        c.check(is_error(r, "EBUSY") and "bound QP" in r.get("what", ""),
                f"auto mode with a bound QP: EBUSY: {r}")

        # one burst each way, nothing forwarded back; the exact counts are
        # swverbs' (a NIC's counters have its own names)
        t.cmd("set fwd rxonly")
        t.cmd("set burst 16")
        t.cmd("clear port stats all")
        t.cmd("start tx_first")
        s1 = tp.wait_rx(t, 1, 16)
        s0 = tp.wait_rx(t, 0, 16)
        t.cmd("stop")
        s0 = tp.port_stats(t.cmd("show port stats 0"), 0)
        s1 = tp.port_stats(t.cmd("show port stats 1"), 1)
        c.check(s0["TX-packets"] == 16 and s1["RX-packets"] == 16,
                f"16 frames each way: {s0} {s1}")
        if SW:
            k0 = tel(f"/vbr/qp_counter,0,{c0}")
            k1 = tel(f"/vbr/qp_counter,1,{c1}")
            c.check(k0.get("tx_frames") == s0["TX-packets"] and
                    k0.get("tx_bytes") == s0["TX-bytes"] and
                    k0.get("rx_frames") == s0["RX-packets"] == 16 and
                    sorted(k0.get("lqpn", [])) == sorted([tx0, h0[0]]) and
                    k0.get("qp_type") == "RAW_PACKET" and
                    k0.get("mode") == "manual",
                    f"port 0 counter = its Tx: {k0}")
            c.check(k1.get("rx_frames") == s1["RX-packets"] and
                    k1.get("rx_bytes") == s1["RX-bytes"] and
                    k1.get("out_of_buffer") == 0 and
                    sorted(k1.get("lqpn", [])) == sorted(h1),
                    f"port 1 counter = its Rx: {k1}")
            x0 = xstats(t, 0)
            c.check(x0.get("qp_cnt1_tx_frames") == 16 and
                    x0.get("qp_cnt1_tx_bytes") == s0["TX-bytes"],
                    f"xstats qp_cnt1_tx_*: {x0}")
            ex = tel("/ethdev/xstats,1")
            c.check(ex.get(f"qp_cnt{c1}_rx_frames") == 16,
                    f"/ethdev/xstats,1 qp_cnt{c1}_rx_frames: {ex}")
            pc = tel("/vbr/port_counters,1")
            c.check(pc.get("rx_wire_frames") == pc.get("rx_delivered", -1) +
                    pc.get("rx_out_of_buffer", -1) + pc.get("rx_no_match", -1) +
                    pc.get("rx_error_completions", -1) +
                    pc.get("rx_flow_dropped", -1) and
                    pc.get("rx_delivered") >= 16 and pc.get("ifname") == dev1,
                    f"port counters identity: {pc}")

            # xstats reset is a baseline: the device counter stays
            t.cmd("clear port xstats 0")
            x0 = xstats(t, 0)
            c.check(x0.get("qp_cnt1_tx_frames") == 0,
                    f"xstats reset: qp_cnt1_tx_frames 0: {x0}")
            c.check(tel("/vbr/qp_counter,0,1").get("tx_frames") == 16,
                    "the device's counter is not reset")

        # xstats read by two telemetry threads while testpmd resets them:
        # the QP counters' reset base must not go under a reader (ASan)
        stop = threading.Event()
        bad = []

        def reader():
            rt = Telemetry(t.prefix)
            try:
                while not stop.is_set():
                    x = rt("/ethdev/xstats,0")
                    if not any(k.startswith(f"qp_cnt{c0}_")
                               for k in (x or {})):
                        bad.append(x)
                        break
            finally:
                rt.close()

        readers = [threading.Thread(target=reader) for _ in range(2)]
        for th in readers:
            th.start()
        for _ in range(100):
            t.cmd("clear port xstats 0")
        stop.set()
        for th in readers:
            th.join(30)
        c.check(not bad and (not SW or tel("/ethdev/xstats,0").get(
                f"qp_cnt{c0}_tx_frames") == 0),
                f"xstats read while reset: {bad[:1]}")

        # unbind: one QP, then all of a counter's
        r = tel(f"/vbr/qp_unbind,0,{c0},{tx0}")
        c.check(r.get("lqpn") == [tx0], f"unbind one: {r}")
        k0 = tel(f"/vbr/qp_counter,0,{c0}")
        c.check((not SW or k0.get("tx_frames") == 16) and
                k0.get("lqpn") == [h0[0]],
                f"the counter keeps the unbound QP's counts: {k0}")
        c.check(is_error(tel(f"/vbr/qp_unbind,1,{c1 + 1},{h1[0]}"),
                         "EINVAL"), "unbind from another counter: EINVAL")
        r = tel(f"/vbr/qp_unbind,1,{c1}")
        c.check(r.get("cntn") == c1 and len(r.get("lqpn", [])) >= 1,
                f"unbind all: {r}")
        c.check(is_error(tel(f"/vbr/qp_counter,1,{c1}"), "ENOENT") and
                tel("/vbr/qp_counters,1").get("cntn") == [] and
                tel("/vbr/qp_mode,1").get("mode") == "none",
                "the last unbind frees the counter; the mode is none")

        # auto mode by type on port 0, once its counter is gone
        tel(f"/vbr/qp_unbind,0,{c0}")
        r = tel("/vbr/qp_set_auto,0,type")
        c.check(r.get("mode") == "auto" and r.get("criteria") == "type",
                f"auto type on: {r}")
        t.cmd("port stop 0")
        t.cmd("port start 0")
        cs = tel("/vbr/qp_counters,0")
        qn = tel("/vbr/qps,0")
        txn, h0 = qn["txq_lqpn"], qn["hash_lqpn"]
        k = tel(f"/vbr/qp_counter,0,{cs['cntn'][0]}") if cs.get(
            "cntn") else {}
        c.check(cs.get("mode") == "auto" and len(cs.get("cntn", [])) == 1 and
                len(txn) >= 1 and sorted(k.get("lqpn", [])) == sorted(txn) and
                k.get("pid") == t.proc.pid and k.get("mode") == "auto" and
                k.get("criteria") == "type" and
                k.get("comm") == "dpdk-testpmd",
                f"auto mode bound the Tx QP {txn} at its INIT at port "
                f"start (not the hash QPs {h0}, never modified): {cs} {k}")
        c.check(is_error(tel(f"/vbr/qp_bind,0,{txn[0]}"), "EINVAL"),
                "bind in auto mode: EINVAL")
        c.check(is_error(tel(f"/vbr/qp_unbind,0,{cs['cntn'][0]},{txn[0]}"),
                         "EINVAL"), "unbind in auto mode: EINVAL")
        r = tel("/vbr/qp_set_auto,0,off")
        c.check(r.get("mode") == "manual", f"auto off with a counter: {r}")
        c.check(t.quit() == 0, "testpmd exits cleanly")
    finally:
        if tel is not None:
            tel.close()
        t.kill()
    return c.failed == 0


def run_many(pmd, c):
    """qp_unbind of a whole counter with more QPs than one listing shows."""
    nq = 70
    t = tp.start_pair("stat2", pmd, ["--total-num-mbufs=8192",
                                     f"--txq={nq}", "--rxq=1"], "full")
    tel = None
    try:
        t.wait_prompt()
        tel = Telemetry(t.prefix)
        txn = tel("/vbr/qps,0").get("txq_lqpn", [])
        c.check(len(txn) == nq, f"{nq} Tx QPs: {txn}")
        if not SW and is_error(tel("/vbr/qp_mode,0"), "EPROTONOSUPPORT"):
            print("SKIP (unbind of many QPs): QP counters need RDMA "
                  "netlink, which this kernel lacks", flush=True)
            c.check(t.quit() == 0, "testpmd exits cleanly")
            return c.failed == 0
        r = tel(f"/vbr/qp_bind,0,{txn[0]}")
        cn = r.get("cntn")
        c.check(cn is not None, f"bind Tx QP {txn[0]}: {r}")
        for q in txn[1:]:
            r = tel(f"/vbr/qp_bind,0,{q},{cn}")
            c.check(r.get("cntn") == cn, f"bind Tx QP {q} to {cn}: {r}")
        r = tel(f"/vbr/qp_unbind,0,{cn}")
        c.check(sorted(r.get("lqpn", [])) == sorted(txn),
                f"unbind all of {nq} QPs: {r}")
        c.check(tel("/vbr/qp_counters,0").get("cntn") == [],
                "the counter is gone after unbinding all")
        c.check(t.quit() == 0, "testpmd exits cleanly")
    finally:
        if tel is not None:
            tel.close()
        t.kill()
    return c.failed == 0


def run_mlx5(pmd, c):
    """The mlx5 profile (swverbs' default), or a NIC: what a ConnectX
    binds. Hash QPs are all numbered 0: /vbr/qps lists none of them in
    hash_lqpn and counts them in hash_qps, dump_priv says so; binding lqpn
    0 is ENOENT with a hint that says why; a running Tx QP's bind is EINVAL
    with a hint to stop the queue; stopped, it binds and counts no Tx (a
    ConnectX's q-counters count receive queue events); auto mode while it
    exists is EBUSY; the xstats show the port's counter; auto mode binds
    the Tx QP at the next port start."""
    t = tp.start_pair("statm", pmd, ["--total-num-mbufs=8192"])
    tel = None
    try:
        t.wait_prompt()
        tel = Telemetry(t.prefix)
        q0 = tel("/vbr/qps,0")
        c.check(q0.get("hash_lqpn") == [] and q0.get("hash_qps", 0) >= 1 and
                len(q0.get("txq_lqpn", [])) == 1 and q0["txq_lqpn"][0] > 0,
                f"/vbr/qps: hash QPs numbered 0, counted only: {q0}")
        d = tel("/ethdev/dump_priv,0")
        d = d if isinstance(d, str) else ""
        c.check(re.search(r"^  rss set.*hash QPs \d+ unnumbered "
                          r"\(qp_num 0\)$", d, re.M) is not None and
                re.search(r"hash QPs.* 0( |$)", d) is None,
                f"dump_priv: hash QPs unnumbered: {d!r}")
        m0 = tel("/vbr/qp_mode,0")
        if not SW and is_error(m0, "EPROTONOSUPPORT"):
            print("SKIP (QP counters on the mlx5 profile): QP counters need "
                  "RDMA netlink, which this kernel lacks", flush=True)
            c.check(t.quit() == 0, "testpmd exits cleanly")
            return c.failed == 0
        c.check(m0.get("mode") == "none", f"/vbr/qp_mode,0: {m0}")
        tx0 = q0["txq_lqpn"][0]
        r = tel("/vbr/qp_bind,0,0")
        c.check(is_error(r, "ENOENT") and "hash QP" in r.get("hint", ""),
                f"bind lqpn 0: ENOENT, hash QPs cannot be bound: {r}")
        r = tel(f"/vbr/qp_bind,0,{tx0}")
        c.check(is_error(r, "EINVAL") and
                "txq 0 runs" in r.get("hint", "") and
                "RESET" in r.get("hint", ""),
                f"bind of the running Tx QP: EINVAL, stop the queue: {r}")
        c.check(tel("/vbr/qp_counters,0").get("cntn") == [],
                "the refused binds bound nothing")
        t.cmd("port stop 0")
        r = tel(f"/vbr/qp_bind,0,{tx0}")
        c0 = r.get("cntn")
        c.check(c0 is not None and r.get("lqpn") == tx0,
                f"bind of the Tx QP, the port stopped (RESET): {r}")
        t.cmd("port start 0")
        r = tel("/vbr/qp_set_auto,0,type")
        c.check(is_error(r, "EBUSY"), f"auto mode with a counter: {r}")
        t.cmd("set fwd rxonly")
        t.cmd("set burst 16")
        t.cmd("start tx_first")
        tp.wait_rx(t, 1, 16)
        t.cmd("stop")
        s0 = tp.port_stats(t.cmd("show port stats 0"), 0)
        k = tel(f"/vbr/qp_counter,0,{c0}")
        c.check(s0["TX-packets"] >= 16 and k.get("lqpn") == [tx0] and
                (not SW or (k.get("tx_frames") == 0 and
                            k.get("tx_bytes") == 0)),
                f"the Tx QP's counter after {s0['TX-packets']} frames "
                f"sent: no Tx counts: {k}")
        x0 = xstats(t, 0)
        c.check(any(n.startswith(f"qp_cnt{c0}_") for n in x0),
                f"xstats show the port's counter {c0}: {x0}")
        x1 = xstats(t, 1)
        c.check(not any(n.startswith("qp_cnt") for n in x1),
                f"port 1 (no QP of its bound) shows no counter: {x1}")
        d = tel("/ethdev/dump_priv,0")
        c.check(re.search(rf"^    cntn {c0}: lqpn {tx0}$", d, re.M)
                is not None, f"dump_priv: counter {c0}: {d!r}")
        r = tel(f"/vbr/qp_unbind,0,{c0}")
        c.check(r.get("lqpn") == [tx0], f"unbind: {r}")
        r = tel("/vbr/qp_set_auto,0,type")
        c.check(r.get("mode") == "auto", f"auto type on: {r}")
        t.cmd("port stop 0")
        t.cmd("port start 0")
        cs = tel("/vbr/qp_counters,0")
        tx0 = tel("/vbr/qps,0")["txq_lqpn"][0]
        k = tel(f"/vbr/qp_counter,0,{cs['cntn'][0]}") if cs.get(
            "cntn") else {}
        c.check(k.get("lqpn") == [tx0] and k.get("mode") == "auto",
                f"auto mode bound the Tx QP at port start: {cs} {k}")
        r = tel("/vbr/qp_bind,0,{}".format(tx0))
        c.check(is_error(r, "EINVAL") and "auto" in r.get("hint", ""),
                f"bind in auto mode: EINVAL, turn auto off: {r}")
        c.check(tel("/vbr/qp_set_auto,0,off").get("mode") == "manual",
                "auto off")
        c.check(t.quit() == 0, "testpmd exits cleanly")
    finally:
        if tel is not None:
            tel.close()
        t.kill()
    return c.failed == 0


if __name__ == "__main__":
    sys.exit(tp.main(lambda pmd: 0 if run(pmd, tp.Checker()) and
                     run_many(pmd, tp.Checker()) and
                     run_mlx5(pmd, tp.Checker()) else 1, __doc__))
