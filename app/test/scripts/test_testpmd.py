#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""testpmd control plane on two vbr ports joined by a pair wire.

usage: test_testpmd.py PATH/librte_net_vbr.so
Exit 0 on success, 1 on a failed check, 77 when dpdk-testpmd is missing.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testpmd_driver as tp  # noqa: E402

BURSTS = 4
BURST = 32


def link_ok(info, c, what):
    c.check("Link status: up" in info, f"{what}: link up")
    m = re.search(r"Link speed: (\d+) ([MG]bps)", info)
    c.check(m is not None and int(m.group(1)) > 0,
            f"{what}: non-zero link speed ({m.group(0) if m else 'none'})")


def rx_packets(t, port):
    st = tp.port_stats(t.cmd(f"show port stats {port}"), port) or {}
    return st.get("RX-packets", 0)


def run(pmd):
    c = tp.Checker()
    # mbufs large enough for one 9000-byte MTU frame (no scatter needed)
    t = tp.start_pair("cp", pmd, ["--forward-mode=rxonly",
                                  "--total-num-mbufs=8192", "--mbuf-size=9344",
                                  f"--burst={BURST}"])
    try:
        t.wait_prompt()
        boot = t.out
        c.check("Port 0: " in boot and "Port 1: " in boot,
                "both ports configured and started")

        info = t.cmd("show port info 0")
        c.check(re.search(r"Driver name: net_vbr\b", info) is not None,
                "driver name net_vbr")
        link_ok(info, c, "port 0")
        link_ok(t.cmd("show port info 1"), c, "port 1")

        # rxonly + tx_first: each port sends exactly BURSTS bursts, the
        # other receives them; nothing else moves, so counts are exact.
        # The receive counts are waited for (the engine moves the frames
        # when it runs, later on a loaded machine), then a moment more
        # for any frame beyond them.
        want = BURSTS * BURST
        base = [rx_packets(t, p) for p in (0, 1)]
        t.cmd(f"start tx_first {BURSTS}")
        for p in (0, 1):
            tp.wait_rx(t, p, base[p] + want)
        time.sleep(0.5)
        st = tp.fwd_stats(t.cmd("stop"))
        ok = (0 in st and 1 in st)
        c.check(ok, "stop prints forward statistics for ports 0 and 1")
        if ok:
            for a, b in ((0, 1), (1, 0)):
                c.check(st[a]["TX-packets"] == want,
                        f"port {a} TX-packets {st[a]['TX-packets']} == {want}")
                c.check(st[b]["RX-packets"] == st[a]["TX-packets"],
                        f"port {b} RX-packets {st[b]['RX-packets']} == "
                        f"port {a} TX-packets {st[a]['TX-packets']}")

        # io forwarding: the bursts circulate through both ports
        t.cmd("set fwd io")
        t.cmd("start tx_first")
        time.sleep(2)
        st = tp.fwd_stats(t.cmd("stop"))
        ok = (0 in st and 1 in st)
        c.check(ok, "io: forward statistics printed")
        if ok:
            for a, b in ((0, 1), (1, 0)):
                tx, rx = st[a]["TX-packets"], st[b]["RX-packets"]
                # packets still on the wire when forwarding stopped are
                # sent but not yet received: at most a few rings' worth
                c.check(rx > BURST and 0 <= tx - rx <= 4096,
                        f"io: port {b} RX {rx} matches port {a} TX {tx}")

        out = t.cmd("set promisc 0 off")
        c.check("rror" not in out, "set promisc 0 off accepted")
        c.check("Promiscuous mode: disabled" in t.cmd("show port info 0"),
                "promiscuous mode disabled")
        t.cmd("set promisc 0 on")

        out = t.cmd("port stop all")
        c.check("rror" not in out and "Fail" not in out, "port stop all")
        out = t.cmd("port config mtu 0 9000")
        c.check("rror" not in out and "fail" not in out.lower(),
                "port config mtu 0 9000 accepted " + out.strip())
        out = t.cmd("port start all", timeout=60)
        c.check("rror" not in out and "Fail" not in out, "port start all")
        info = t.cmd("show port info 0")
        c.check("MTU: 9000" in info, "MTU 9000 after restart")
        link_ok(info, c, "port 0 after restart")

        # traffic still flows after the restart
        t.cmd("set fwd rxonly")
        base = rx_packets(t, 1)
        t.cmd("start tx_first")
        tp.wait_rx(t, 1, base + BURST)
        time.sleep(0.5)
        st = tp.fwd_stats(t.cmd("stop"))
        c.check(st.get(1, {}).get("RX-packets") == BURST,
                f"after restart: port 1 RX-packets == {BURST}")

        xs = t.cmd("show port xstats 0")
        c.check("NIC extended statistics for port 0" in xs and
                re.search(r"rx_good_packets:\s+\d+", xs) is not None,
                "show port xstats 0 lists rx_good_packets")
        rc = t.quit()
        c.check(rc == 0, f"testpmd quit cleanly (rc {rc})")
    except RuntimeError as e:
        print(f"FAIL: {e}")
        t.kill()
        return 1
    finally:
        t.kill()
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(tp.main(run, __doc__))
