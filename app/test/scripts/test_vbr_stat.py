#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""vbr-stat (rdma statistic over telemetry) against a live testpmd.

usage: test_vbr_stat.py PATH/librte_net_vbr.so PATH/vbr-stat

testpmd on two vbr ports joined by a pair cable, and a second testpmd on
a loop wire that -f/--file-prefix tells apart. Every command of the tool,
in text (the lines rdma prints) and JSON (parsed, its shape checked): help,
-h, -V; statistic show; qp mode; qp bind of port 0's Tx and hash QPs to a
new counter and of port 1's hash QPs to another; one burst of 16 frames
each way: the counters' counts equal testpmd's TX/RX figures exactly; qp
show with each filter, after a link and with none (qp show pid N: every
port's counters of that pid); unbind of one QP keeps the counter's counts (as the
kernel does), unbind of a whole counter frees it; auto mode by type binds
the Tx QP at the next port start with testpmd's pid and name; show mr; the
errors with their exit codes (unknown device, unknown lqpn or cntn
ENOENT, bind of a bound QP and bind in auto mode EINVAL, auto mode with a
bound QP EBUSY, bad filters and arguments, unknown words, stray
arguments, a repeated or empty auto criterion: every one exits 1) and
dpdk-telemetry.py on the same /vbr/ endpoints when it is installed.
"""

import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testpmd_driver as tp  # noqa: E402
from test_stat_telemetry import Telemetry  # noqa: E402

TELEMETRY_PY = "/usr/bin/dpdk-telemetry.py"
ENOENT = "error: No such file or directory\n"
EINVAL = "error: Invalid argument\n"
EBUSY = ("Error: Modifying auto mode is not allowed when there is a bound "
         "QP.\nerror: Device or resource busy\n")
NOT_COUNTERS = {"ifindex", "ifname", "port", "cntn", "qp-type", "pid",
                "comm", "lqpn", "mrn", "mode"}


class Tool:
    """vbr-stat against one process."""

    def __init__(self, path, prefix):
        self.path = path
        self.prefix = prefix

    def __call__(self, *args, prefix=None):
        r = subprocess.run([self.path, "-f", prefix or self.prefix] +
                           list(args), capture_output=True, text=True,
                           timeout=30)
        return r.returncode, r.stdout, r.stderr

    def json(self, *args):
        rc, out, err = self("-j", *args)
        try:
            return rc, json.loads(out), err
        except ValueError:
            return rc, out, err


def counters_ok(o):
    """Every key that is not a known field holds an int."""
    return all(isinstance(v, int) for k, v in o.items()
               if k not in NOT_COUNTERS)


def run_help(vs, c):
    rc, out, err = vs("-h")
    c.check(rc == 0 and out.startswith(
        "Usage: vbr-stat [ OPTIONS ] OBJECT { COMMAND | help }\n") and
        "statistic" in out, f"-h: {rc} {out!r}")
    rc, out2, _ = vs("help", prefix="no-such-process")
    c.check(rc == 0 and out2 == out, "help needs no process")
    rc, out, _ = vs("statistic", "help")
    c.check(rc == 0 and "statistic OBJECT bind COUNTER_SCOPE" in out and
            "FILTER_NAME: = { cntn | lqpn | pid | qp-type }" in out,
            f"statistic help: {out[:200]!r}")
    rc, out, _ = vs("-V")
    c.check(rc == 0 and re.fullmatch(r"vbr-stat utility, vbr-\S+\n", out),
            f"-V: {out!r}")
    rc, out, err = vs("-z")
    c.check(rc == 1 and err == "Unknown option.\n" and "Usage:" in out,
            f"an unknown option: exit 1: {rc} {err!r}")
    rc, out, err = vs("statistic", "show", prefix="no-such-process")
    c.check(rc == 1 and err.startswith("Failed to connect to ") and
            "no-such-process" in err, f"no such process: {rc} {err!r}")
    rc, out, err = vs("statistic", "frob")
    c.check(rc == 1 and err == "Unknown statistic command 'frob'.\n",
            f"an unknown command: rdma's message, exit 1: {rc} {err!r}")
    rc, out, err = vs("frob")
    c.check(rc == 1 and err == "Unknown object 'frob'.\n",
            f"an unknown object: exit 1: {rc} {err!r}")
    if os.path.exists("/dev/full"):
        with open("/dev/full", "w") as full:
            r = subprocess.run([vs.path, "-h"], stdout=full, text=True,
                               stderr=subprocess.PIPE, timeout=30)
        c.check(r.returncode == 1 and r.stderr.startswith(
            "Failed to write the output: "),
            f"output that cannot be written: exit 1: {r.returncode} "
            f"{r.stderr!r}")


def run_errors(vs, c, tx0):
    cases = [
        (("statistic", "show", "link", "net_vbr9/1"), "Wrong device name\n",
         "an unknown device"),
        (("statistic", "show", "link", "net_vbr0/2"), "Wrong device name\n",
         "an unknown port"),
        (("statistic", "qp", "bind", "link", "net_vbr0", "lqpn", str(tx0)),
         "Wrong device name\n", "bind without a port"),
        (("statistic", "qp", "bind", "link", "net_vbr0/1", "lqpn", "999999"),
         ENOENT, "bind of an unknown lqpn"),
        (("statistic", "qp", "bind", "link", "net_vbr0/1", "lqpn", str(tx0),
          "cntn", "7"), ENOENT, "bind to an unknown cntn"),
        (("statistic", "qp", "unbind", "link", "net_vbr0/1", "cntn", "7"),
         ENOENT, "unbind of an unknown cntn"),
        (("statistic", "qp", "bind", "link", "net_vbr0/1", "lqpn", "1-2"),
         "The parameter lqpn shouldn't include range\n", "a range"),
        (("statistic", "qp", "bind", "link", "net_vbr0/1", "lqpn"),
         "No filter data was supplied to filter option lqpn\n", "no lqpn"),
        (("statistic", "qp", "show", "link", "net_vbr0/1", "color", "1"),
         "Unsupported filter option: color\n", "an unknown filter"),
        (("statistic", "qp", "show", "link", "net_vbr0/1", "lqpn", "x"),
         "lqpn filter accepts \"1234567890,-\" characters only\n",
         "a bad filter value"),
        (("statistic", "qp", "set", "link", "net_vbr0/1", "auto", "size",
          "on"), "Unknown auto mode 'size'.\n", "an unknown criterion"),
        (("statistic", "qp", "set", "link", "net_vbr0/1", "auto", "type",
          "of"), "Unknown parameter 'of'.\n", "auto ... not on"),
        # every error exits 1, rdma's "Unknown ..." too
        (("statistic", "qp", "frob"), "Unknown parameter 'frob'.\n",
         "an unknown qp command"),
        (("statistic", "qp", "show", "frob", "1"),
         "Unknown parameter 'frob'.\n", "an unknown qp show word"),
        (("statistic", "qp", "show", "pid"),
         "No filter data was supplied to filter option pid\n",
         "qp show pid without a value"),
        (("statistic", "qp", "show", "pid", "1", "color", "2"),
         "Unsupported filter option: color\n",
         "qp show with an unknown filter, no link"),
        (("statistic", "qp", "mode", "pid", "1"),
         "Unknown parameter 'pid'.\n", "qp mode takes no filter"),
        (("statistic", "qp", "mode", "link", "net_vbr0/1", "extra"),
         "Unknown parameter 'extra'.\n", "qp mode: a stray argument"),
        (("statistic", "show", "link", "net_vbr0/1", "extra"),
         "Unknown parameter 'extra'.\n", "show link: a stray argument"),
        (("statistic", "show", "link", "net_vbr0", "extra"),
         "Unknown parameter 'extra'.\n", "show link DEV: a stray argument"),
        (("statistic", "qp", "set", "link", "net_vbr0/1", "frob"),
         "Unknown parameter 'frob'.\n", "set link: an unknown word"),
        (("statistic", "qp", "set", "link", "net_vbr0/1", "auto"),
         "Missing auto mode: { type | pid | type,pid } on, or off.\n",
         "auto without a mode"),
        (("statistic", "qp", "set", "link", "net_vbr0/1", "auto", "type"),
         "Missing 'on' after the auto mode.\n", "auto type without on"),
        (("statistic", "qp", "set", "link", "net_vbr0/1", "auto", "type",
          "on", "now"), "Unknown parameter 'now'.\n",
         "auto type on: a stray argument"),
        (("statistic", "qp", "set", "link", "net_vbr0/1", "auto", "off",
          "now"), "Unknown parameter 'now'.\n", "auto off: a stray argument"),
        (("statistic", "qp", "set", "link", "net_vbr0/1", "auto",
          "type,pid,type", "on"), "Repeated auto mode 'type'.\n",
         "a repeated criterion"),
        (("statistic", "qp", "set", "link", "net_vbr0/1", "auto", "pid,pid",
          "on"), "Repeated auto mode 'pid'.\n", "pid twice"),
        (("statistic", "qp", "set", "link", "net_vbr0/1", "auto",
          "type,,pid", "on"), "Empty auto mode in 'type,,pid'.\n",
         "an empty criterion"),
        (("statistic", "qp", "set", "link", "net_vbr0/1", "auto", "type,",
          "on"), "Empty auto mode in 'type,'.\n", "a trailing comma"),
        (("statistic", "qp", "bind", "link", "net_vbr0/1", "cntn", "1"),
         "Unknown parameter 'cntn' (lqpn N expected).\n",
         "bind without lqpn"),
        (("statistic", "qp", "bind", "link", "net_vbr0/1", "lqpn", "1",
          "pid", "2"), "Unknown parameter 'pid' (cntn N expected).\n",
         "bind: pid for cntn"),
        (("statistic", "qp", "bind", "link", "net_vbr0/1", "lqpn", "1",
          "cntn", "2", "pid", "3"), "Unknown parameter 'pid'.\n",
         "bind: a stray filter"),
        (("statistic", "qp", "bind", "link", "net_vbr0/1", "lqpn",
          "99999999999"),
         "The parameter lqpn is out of range: 99999999999\n",
         "bind: lqpn above INT32_MAX"),
        (("statistic", "qp", "unbind", "link", "net_vbr0/1", "lqpn", "1"),
         "Unknown parameter 'lqpn' (cntn N expected).\n",
         "unbind without cntn"),
    ]
    for args, msg, what in cases:
        rc, out, err = vs(*args)
        c.check(rc == 1 and err == msg and out == "",
                f"{what}: exit 1, {msg!r}: {rc} {err!r} {out!r}")
    # the refused commands changed nothing
    rc, out, _ = vs("statistic", "qp", "mode", "link", "net_vbr0/1")
    c.check(rc == 0 and out == "link net_vbr0/1 mode qp auto off \n",
            f"refused commands left the mode: {out!r}")


def run(pmd, tool, c):
    # the full profile binds running and hash QPs (test_stat_telemetry.py
    # has the mlx5 profile's rules)
    t = tp.start_pair("vstat", pmd, ["--total-num-mbufs=8192"], "full")
    eal, prefix2 = tp.eal_args("vstat2", pmd)
    t2 = tp.TestPmd(eal + ["--vdev", "net_vbr5,wire=loop"],
                    ["--total-num-mbufs=4096"], prefix2)
    tel = None
    try:
        t.wait_prompt()
        t2.wait_prompt()
        vs = Tool(tool, t.prefix)
        tel = Telemetry(t.prefix)
        run_help(vs, c)

        # -f picks the process
        rc, out, _ = vs("statistic", "show")
        links = re.findall(r"^link (\S+) ", out, re.M)
        c.check(rc == 0 and links == ["net_vbr0/1", "net_vbr1/1"] and
                all(re.fullmatch(r"link \S+/1( [a-z_]+ \d+)+ ", ln)
                    for ln in out.splitlines()),
                f"statistic show: one line per port: {out!r}")
        rc, out, _ = vs("statistic", "show", prefix=prefix2)
        c.check(rc == 0 and re.findall(r"^link (\S+) ", out, re.M) ==
                ["net_vbr5/1"], f"-f {prefix2}: its own port: {out!r}")
        rc, js, _ = vs.json("statistic", "show")
        c.check(rc == 0 and isinstance(js, list) and len(js) == 2 and
                [(o.get("ifname"), o.get("port")) for o in js] ==
                [("net_vbr0", 1), ("net_vbr1", 1)] and
                all(counters_ok(o) and "rx_wire_frames" in o for o in js),
                f"-j statistic show: {js}")
        rc, out, _ = vs("-j", "-p", "statistic", "show", "link", "net_vbr1")
        c.check(rc == 0 and "\n    " in out and
                json.loads(out)[0]["ifname"] == "net_vbr1",
                f"-j -p: pretty JSON: {out[:120]!r}")
        rc, out, _ = vs("-p", "statistic", "show", "link", "net_vbr1/1")
        c.check(rc == 0 and out.startswith("link net_vbr1/1 \n    ") and
                re.search(r"\n    rx_wire_frames \d+ ", out),
                f"-p: a counter per line: {out[:80]!r}")

        # qp mode
        rc, out, _ = vs("statistic", "qp", "mode")
        c.check(rc == 0 and out == "link net_vbr0/1 mode qp auto off \n"
                "link net_vbr1/1 mode qp auto off \n", f"qp mode: {out!r}")
        rc, js, _ = vs.json("statistic", "qp", "mode", "link", "net_vbr1/1")
        c.check(rc == 0 and js == [{"ifindex": 1, "ifname": "net_vbr1",
                                    "port": 1, "mode": "qp auto off"}],
                f"-j qp mode: {js}")

        # DPDK's own client reads the same endpoints
        if os.path.exists(TELEMETRY_PY):
            r = subprocess.run([TELEMETRY_PY, "-f", t.prefix],
                               input="/vbr/ports\n/vbr/qp_mode,1\n",
                               capture_output=True, text=True, timeout=30)
            c.check('"0": "net_vbr0/1"' in r.stdout and
                    '"mode": "none"' in r.stdout,
                    f"dpdk-telemetry.py /vbr/: {r.stdout[-300:]!r}")
        else:
            print(f"note: {TELEMETRY_PY} is not installed")

        q0, q1 = tel("/vbr/qps,0"), tel("/vbr/qps,1")
        tx0, h0, h1 = q0["txq_lqpn"][0], q0["hash_lqpn"], q1["hash_lqpn"]
        run_errors(vs, c, tx0)

        # bind: nothing printed, exit 0; -j prints an empty array
        rc, out, err = vs("statistic", "qp", "bind", "link", "net_vbr0/1",
                          "lqpn", str(tx0))
        c.check((rc, out, err) == (0, "", ""), f"bind Tx QP: {rc} {err!r}")
        rc, out, err = vs("-j", "statistic", "qp", "bind", "link",
                          "net_vbr0/1", "lqpn", str(h0[0]), "cntn", "1")
        c.check((rc, out, err) == (0, "[]\n", ""),
                f"-j bind hash QP to counter 1: {rc} {out!r} {err!r}")
        rc, out, err = vs("statistic", "qp", "bind", "link", "net_vbr0/1",
                          "lqpn", str(tx0))
        c.check(rc == 1 and err == EINVAL, f"bind of a bound QP: {err!r}")
        rc, _, _ = vs("statistic", "qp", "bind", "link", "net_vbr1/1",
                      "lqpn", str(h1[0]))
        for q in h1[1:]:
            rc |= vs("statistic", "qp", "bind", "link", "net_vbr1/1",
                     "lqpn", str(q), "cntn", "1")[0]
        c.check(rc == 0, "bind port 1's hash QPs to its counter 1")
        rc, out, err = vs("statistic", "qp", "set", "link", "net_vbr1/1",
                          "auto", "type", "on")
        c.check(rc == 1 and err == EBUSY and out == "",
                f"auto mode with a bound QP: {rc} {err!r}")
        rc, out, _ = vs("statistic", "qp", "mode", "link", "net_vbr1/1")
        c.check(out == "link net_vbr1/1 mode qp auto off \n",
                f"mode unchanged (manual: rdma says auto off): {out!r}")

        # one burst each way
        t.cmd("set fwd rxonly")
        t.cmd("set burst 16")
        t.cmd("clear port stats all")
        t.cmd("start tx_first")
        tp.wait_rx(t, 1, 16)
        tp.wait_rx(t, 0, 16)
        t.cmd("stop")
        s0 = tp.port_stats(t.cmd("show port stats 0"), 0)
        s1 = tp.port_stats(t.cmd("show port stats 1"), 1)
        c.check(s0["TX-packets"] == 16 and s1["RX-packets"] == 16,
                f"16 frames each way: {s0} {s1}")

        rc, out, _ = vs("statistic", "qp", "show", "link", "net_vbr0/1")
        want = sorted([tx0, h0[0]])
        m = re.fullmatch(r"link net_vbr0/1 cntn 1 (.*) \n    LQPN: <([\d,]+)>\n",
                         out)
        vals = dict(re.findall(r"([a-z_]+) (\d+)", m.group(1))) if m else {}
        c.check(rc == 0 and m is not None and
                sorted(int(x) for x in m.group(2).split(",")) == want and
                int(vals.get("tx_frames", -1)) == 16 and
                int(vals.get("tx_bytes", -1)) == s0["TX-bytes"] and
                int(vals.get("rx_frames", -1)) == 16,
                f"qp show text: counter 1 = port 0's Tx: {out!r}")
        rc, js, _ = vs.json("statistic", "qp", "show", "link", "net_vbr1/1")
        k1 = js[0] if rc == 0 and isinstance(js, list) and js else {}
        c.check(len(js) == 1 and k1.get("ifname") == "net_vbr1" and
                k1.get("port") == 1 and k1.get("cntn") == 1 and
                k1.get("ifindex") == 1 and
                k1.get("rx_frames") == s1["RX-packets"] and
                k1.get("rx_bytes") == s1["RX-bytes"] and
                k1.get("out_of_buffer") == 0 and counters_ok(k1) and
                sorted(k1.get("lqpn", [])) == sorted(h1),
                f"-j qp show: counter 1 = port 1's Rx: {js}")
        rc, js, _ = vs.json("statistic", "show", "link", "net_vbr1/1")
        pc = js[0] if rc == 0 and js else {}
        c.check(pc.get("rx_wire_frames") == pc.get("rx_delivered", -1) +
                pc.get("rx_out_of_buffer", -1) + pc.get("rx_no_match", -1) +
                pc.get("rx_error_completions", -1) +
                pc.get("rx_flow_dropped", -1) and
                pc.get("rx_delivered", 0) >= 16,
                f"port counters: received = delivered + drops: {pc}")

        # filters
        def shown(*f):
            rc, js, _ = vs.json("statistic", "qp", "show", "link",
                                "net_vbr0/1", *f)
            return [o["cntn"] for o in js] if rc == 0 else None
        c.check(shown("cntn", "1") == [1] and shown("cntn", "2") == [] and
                shown("cntn", "0-3") == [1] and
                shown("lqpn", str(tx0)) == [1] and
                shown("lqpn", "999999") == [] and
                shown("qp-type", "RAW_PACKET") == [] and
                shown("pid", "1") == [],
                "filters cntn, lqpn, qp-type (none in manual mode), pid")
        rc, out, _ = vs("statistic", "qp", "show")
        c.check(rc == 0 and len(re.findall(r"^link ", out, re.M)) == 2,
                f"qp show of every port: {out!r}")
        # filters with no link: every port's counters, filtered (rdma's
        # man page: 'qp show link mlx5_2 pid 30489')
        pid = t.proc.pid
        rc, out, err = vs("statistic", "qp", "show", "pid", str(pid))
        c.check(rc == 0 and err == "" and
                re.findall(r"^link (\S+) cntn 1 pid (\d+) ", out, re.M) ==
                [("net_vbr0/1", str(pid)), ("net_vbr1/1", str(pid))],
                f"qp show pid {pid}: both ports' counters: {rc} {err!r} "
                f"{out!r}")
        rc, js, _ = vs.json("statistic", "qp", "show", "pid", str(pid),
                            "cntn", "1")
        c.check(rc == 0 and [(o.get("ifname"), o.get("pid")) for o in js] ==
                [("net_vbr0", pid), ("net_vbr1", pid)],
                f"-j qp show pid {pid} cntn 1: {js}")
        rc, out, err = vs("statistic", "qp", "show", "pid", "1")
        c.check((rc, out, err) == (0, "", ""),
                f"qp show pid 1: nothing, exit 0: {rc} {out!r} {err!r}")
        rc, out, _ = vs("statistic", "qp", "sh", "p", f"{pid - 1}-{pid}")
        c.check(rc == 0 and len(re.findall(r"^link ", out, re.M)) == 2,
                f"qp sh p (abbreviated) with a range: {out!r}")
        rc, js, _ = vs.json("statistic", "qp", "show", "lqpn", str(tx0))
        c.check(rc == 0 and [o.get("ifname") for o in js] == ["net_vbr0"],
                f"qp show lqpn {tx0}, no link: port 0's counter: {js}")

        # unbind one QP: the counter keeps its counts
        rc, out, err = vs("statistic", "qp", "unbind", "link", "net_vbr0/1",
                          "cntn", "1", "lqpn", str(tx0))
        c.check((rc, out, err) == (0, "", ""), f"unbind one: {rc} {err!r}")
        rc, js, _ = vs.json("statistic", "qp", "show", "link", "net_vbr0/1")
        c.check(rc == 0 and len(js) == 1 and js[0].get("tx_frames") == 16 and
                js[0].get("lqpn") == [h0[0]],
                f"the counter keeps the unbound QP's counts: {js}")
        # unbind all: the counter is gone
        rc, out, err = vs("statistic", "qp", "unbind", "link", "net_vbr1/1",
                          "cntn", "1")
        rc2, js, _ = vs.json("statistic", "qp", "show", "link", "net_vbr1/1")
        c.check(rc == 0 and rc2 == 0 and js == [],
                f"unbind all frees the counter: {rc} {err!r} {js}")
        rc, out, err = vs("statistic", "qp", "unbind", "link", "net_vbr1/1",
                          "cntn", "1")
        c.check(rc == 1 and err == ENOENT, f"unbind it again: {err!r}")

        # auto mode by type
        vs("statistic", "qp", "unbind", "link", "net_vbr0/1", "cntn", "1")
        rc, out, err = vs("statistic", "qp", "set", "link", "net_vbr0/1",
                          "auto", "type", "on")
        c.check((rc, out, err) == (0, "", ""), f"auto type on: {err!r}")
        rc, out, _ = vs("statistic", "qp", "mode", "link", "net_vbr0/1")
        c.check(out == "link net_vbr0/1 mode qp auto type on \n",
                f"qp mode auto type on: {out!r}")
        rc, out, _ = vs("statistic", "qp", "set", "link", "net_vbr0/1")
        c.check(out == "link net_vbr0/1 mode qp auto type on \n",
                f"set link without auto shows the mode: {out!r}")
        t.cmd("port stop 0")
        t.cmd("port start 0")
        txn = tel("/vbr/qps,0")["txq_lqpn"]
        rc, js, _ = vs.json("statistic", "qp", "show", "link", "net_vbr0/1",
                            "qp-type", "raw_packet")
        k = js[0] if rc == 0 and js else {}
        c.check(len(js) == 1 and k.get("qp-type") == "RAW_PACKET" and
                k.get("pid") == t.proc.pid and
                k.get("comm") == "dpdk-testpmd" and
                sorted(k.get("lqpn", [])) == sorted(txn) and
                list(k)[:7] == ["ifindex", "ifname", "port", "cntn",
                                "qp-type", "pid", "comm"] and
                list(k)[-1] == "lqpn",
                f"auto type bound the Tx QP at port start: {js}")
        rc, out, _ = vs("statistic", "qp", "show", "link", "net_vbr0/1",
                        "pid", str(t.proc.pid))
        c.check(rc == 0 and re.match(
            r"link net_vbr0/1 cntn \d+ qp-type RAW_PACKET pid %d "
            r"comm dpdk-testpmd " % t.proc.pid, out),
            f"qp show text in auto mode: {out!r}")
        rc, out, err = vs("statistic", "qp", "bind", "link", "net_vbr0/1",
                          "lqpn", str(h0[0]))
        c.check(rc == 1 and err == EINVAL, f"bind in auto mode: {err!r}")
        rc, out, err = vs("statistic", "qp", "set", "link", "net_vbr0/1",
                          "auto", "pid,type", "on")
        c.check(rc == 1 and err == EBUSY,
                f"auto pid,type with the auto counter bound: {err!r}")
        rc, out, err = vs("statistic", "qp", "set", "link", "net_vbr0/1",
                          "auto", "off")
        rc2, out2, _ = vs("statistic", "qp", "mode", "link", "net_vbr0/1")
        c.check(rc == 0 and out2 == "link net_vbr0/1 mode qp auto off \n",
                f"auto off: {rc} {err!r} {out2!r}")

        # show mr
        mrs = tel("/vbr/mrs,0")["mrn"]
        rc, out, _ = vs("statistic", "show", "mr")
        c.check(rc == 0 and re.match(
            r"dev net_vbr0 mrn %d mrlen \d+ pages \d+ access_errors 0 \n"
            % mrs[0], out) and "dev net_vbr1 mrn " in out,
            f"show mr: {out!r}")
        rc, js, _ = vs.json("statistic", "show", "mr", "mrn", str(mrs[0]))
        c.check(rc == 0 and len(js) == 1 and js[0].get("mrn") == mrs[0] and
                js[0].get("ifname") == "net_vbr0" and
                js[0].get("mrlen", 0) > 0 and counters_ok(js[0]),
                f"-j show mr mrn {mrs[0]}: {js}")
        rc, out, err = vs("statistic", "show", "mr", "mrn", "999999")
        c.check((rc, out, err) == (0, "", ""),
                "show mr of an unknown mrn: nothing, as rdma")
        rc, out, err = vs("statistic", "mr", "dev", "net_vbr0")
        c.check(rc == 1 and err == "Unsupported filter option: dev\n",
                f"show mr takes the mrn filter only (as rdma): {err!r}")
        c.check(t.quit() == 0 and t2.quit() == 0, "testpmd exits cleanly")
    finally:
        if tel is not None:
            tel.close()
        t.kill()
        t2.kill()
    return 0 if c.failed == 0 else 1


# The sessions doc/guides/vbr-stat.rst shows, in its order, and what the
# guide's prose has testpmd do before a command (block, its n-th command).
DOC = "doc/guides/vbr-stat.rst"
DOC_BLOCKS = ["vbr-stat-show", "vbr-stat-mode", "vbr-stat-bind",
              "vbr-stat-traffic", "vbr-stat-unbind", "vbr-stat-auto",
              "vbr-stat-mr"]
DOC_TESTPMD = {
    ("vbr-stat-traffic", 0): ["set fwd rxonly", "start tx_first", "stop"],
    # "the Tx QP is bound when it is next brought up"
    ("vbr-stat-auto", 2): ["port stop 0", "port start 0"],
}


def run_doc(pmd, tool, c):
    """The guide's sessions, replayed on testpmd started as the guide
    starts it: every command's output in the shape the guide shows."""
    import shlex
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import doc_shapes
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "..", "..")
    prefix = f"vs{os.getpid()}"
    t = tp.TestPmd(["--no-huge", "--no-pci", "-l", "0,1", "-m", "1024",
                    "--file-prefix", prefix, "-d", pmd,
                    "--vdev", "net_vbr0,wire=pair:s,profile=full",
                    "--vdev", "net_vbr1,wire=pair:s,profile=full"],
                   ["--total-num-mbufs=16384"], prefix)
    try:
        t.wait_prompt()
        for ident in DOC_BLOCKS:
            shown = doc_shapes.block(root, DOC, ident)
            for n, (cmd, want) in enumerate(doc_shapes.session(shown)):
                for line in DOC_TESTPMD.get((ident, n), []):
                    t.cmd(line)
                # the guide's pid is its testpmd's: this one's here
                argv = shlex.split(re.sub(r"\bpid \d+", f"pid {t.proc.pid}",
                                          cmd))
                c.check(argv[:3] == ["vbr-stat", "-f", "vs"],
                        f"{DOC} {ident}: {cmd!r} runs vbr-stat -f vs")
                r = subprocess.run([tool, "-f", prefix] + argv[3:],
                                   capture_output=True, text=True,
                                   timeout=30)
                wrong = doc_shapes.shape(want, r.stdout + r.stderr)
                c.check(not wrong, f"{DOC} {ident}: {cmd}: "
                        f"{'; '.join(wrong) or 'the shape shown'}")
        rc = t.quit()
        c.check(rc == 0, f"doc session: testpmd exit code {rc}")
    except Exception as e:  # noqa: BLE001
        c.check(False, f"doc session: exception: {e}")
        t.kill()
    return 1 if c.failed else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    if tp.find_testpmd() is None:
        print("SKIP: dpdk-testpmd not installed")
        sys.exit(tp.SKIP)
    if os.environ.get("VBR_TEST_DEV"):
        print("SKIP: swverbs' counters and names (pair wire) only")
        sys.exit(tp.SKIP)
    for f in sys.argv[1:]:
        if not os.path.isfile(f):
            print(f"FAIL: {f} not built")
            sys.exit(1)
    checker = tp.Checker()
    run(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), checker)
    sys.exit(run_doc(os.path.abspath(sys.argv[1]),
                     os.path.abspath(sys.argv[2]), checker))
