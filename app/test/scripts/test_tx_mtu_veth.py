#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A Tx queue keeps working when the interface's MTU drops under traffic
(issue 32, item 1).

usage: test_tx_mtu_veth.py PATH/librte_net_vbr.so PATH/devtools/netns-veth.sh
       [af_packet|af_xdp]
Exit 0 on success, 1 on a failed check, 77 without root, tcpdump or scapy.

One vbr port on a veth (af_packet, or af_xdp), in each progress model
(inline, thread, service) in turn. The veth's MTU is set to 1000, and
testpmd sends 1500-byte frames (txonly) for a second: the device drops
every one of them and counts it, as a ConnectX drops a frame longer than
its port's MTU (mlx5's tx_errors_phy): the send queue never stops, no
frame waits in it, and TX-errors and the tx_mtu_dropped xstat say how
many went nowhere, to the frame (TX-packets + TX-errors is what testpmd
handed over; the peer sees none of them). Then 64-byte frames: `stop`
must come back (it once spun forever in the Tx recovery), the peer must
receive them and none is dropped. Last, the MTU goes back to 1500 and
the 1500-byte frames reach the peer.
"""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testpmd_driver as tp  # noqa: E402
from test_e2e_veth import Veth  # noqa: E402

VBR_MAC = "02:76:62:72:00:01"
MODELS = ("inline", "thread", "service")


def xstat(text, name):
    m = re.search(r"^\s*%s:\s+(\d+)\s*$" % re.escape(name), text, re.M)
    return int(m.group(1)) if m else None


def peer_rx(veth):
    """Frames the peer received (its kernel counter)."""
    p = subprocess.run(veth.in_ns(["cat", "/sys/class/net/%s/statistics/"
                                   "rx_packets" % veth.peer_if]),
                       capture_output=True, text=True, check=True)
    return int(p.stdout)


def set_mtu(ifname, mtu):
    """Set the interface's MTU; the device reads it again every 10 ms
    (SWV_NETIF_REFRESH_NS), on its engine's next pass after that: wait
    well beyond."""
    subprocess.run(["ip", "link", "set", ifname, "mtu", str(mtu)],
                   check=True)
    time.sleep(0.3)


def settled(t):
    """Port 0's stats and xstats once the device has taken every frame
    testpmd handed over (its own thread may still be sending after
    stop): TX-packets + TX-errors unchanged between two reads."""
    last = None
    end = time.monotonic() + 10
    while True:
        s = tp.port_stats(t.cmd("show port stats 0"), 0) or {}
        x = t.cmd("show port xstats 0")
        now = (s.get("TX-packets"), s.get("TX-errors"),
               xstat(x, "tx_mtu_dropped"))
        if now == last or time.monotonic() > end:
            return s, x
        last = now
        time.sleep(0.2)


def txonly(t, c, what, seconds=1.0):
    """Clear the stats, run txonly for a while and stop (within the
    command's timeout: a stop that never returns fails here)."""
    t.cmd("clear port stats all")
    t.cmd("clear port xstats all")
    t.cmd("start")
    time.sleep(seconds)
    try:
        t.cmd("stop", timeout=20)
    except RuntimeError as e:
        c.check(False, f"{what}: stop came back ({e})")
        raise
    s, x = settled(t)
    c.check("TX-packets" in s, f"{what}: port stats printed")
    return s, x


def run_model(pmd, script, kind, model, c):
    prefix = f"vtm{os.getpid() % 100000}{model[0]}"
    with Veth(script, prefix) as veth:
        eal, fprefix = tp.eal_args(f"txmtu{model}", pmd)
        wire = f"{kind}:{veth.root_if}"
        eal += ["--vdev",
                f"net_vbr0,wire={wire},mac={VBR_MAC},progress={model}"]
        if model == "service":
            eal = [a for a in eal if a not in ("-l", "0-1")]
            eal += ["--lcores", "0@0,1@1,2@(0-%d)" % (os.cpu_count() - 1),
                    "-S", "2"]
        t = tp.TestPmd(eal, ["--total-num-mbufs=8192", "--mbuf-size=2048",
                             "--txd=512"], fprefix)
        try:
            t.wait_prompt()
            t.cmd("set fwd txonly")
            set_mtu(veth.root_if, 1000)
            out = t.cmd("set txpkts 1500")
            c.check("nvalid" not in out and "rror" not in out,
                    f"{model}: set txpkts 1500 accepted")
            rx0 = peer_rx(veth)
            s, x = txonly(t, c, f"{model}, 1500 bytes, MTU 1000")
            sent, err = s.get("TX-packets", 0), s.get("TX-errors", 0)
            drop = xstat(x, "tx_mtu_dropped")
            c.check(err > 1000, f"{model}: 1500-byte frames dropped and "
                    f"counted (TX-errors {err}, TX-packets {sent})")
            c.check(drop == err, f"{model}: tx_mtu_dropped {drop} == "
                    f"TX-errors {err}")
            c.check(sent == 0, f"{model}: none counted as sent "
                    f"(TX-packets {sent})")
            rec = xstat(x, "tx_q0_recoveries")
            c.check(rec == 0, f"{model}: the queue never went to ERR "
                    f"(tx_q0_recoveries {rec})")
            got = peer_rx(veth) - rx0
            c.check(got == 0, f"{model}: the peer received none ({got})")

            t.cmd("set txpkts 64")
            rx0 = peer_rx(veth)
            s, x = txonly(t, c, f"{model}, 64 bytes")
            sent, err = s.get("TX-packets", 0), s.get("TX-errors", 0)
            c.check(sent > 1000, f"{model}: 64-byte frames sent "
                    f"(TX-packets {sent})")
            c.check(err == 0, f"{model}: none dropped (TX-errors {err})")
            # the root side's kernel may send a frame of its own now
            # and then (the peer counts every frame)
            got = tp.wait_until(lambda: peer_rx(veth) - rx0,
                                lambda n: n >= sent, 5)
            c.check(sent <= got <= sent + 8, f"{model}: the peer "
                    f"received every one ({got} of {sent})")

            set_mtu(veth.root_if, 1500)
            t.cmd("set txpkts 1500")
            rx0 = peer_rx(veth)
            s, x = txonly(t, c, f"{model}, 1500 bytes, MTU 1500")
            sent, err = s.get("TX-packets", 0), s.get("TX-errors", 0)
            c.check(sent > 100 and err == 0,
                    f"{model}: with the MTU back, 1500-byte frames go "
                    f"(TX-packets {sent}, TX-errors {err})")
            # the root side's kernel may send a frame of its own now
            # and then (the peer counts every frame)
            got = tp.wait_until(lambda: peer_rx(veth) - rx0,
                                lambda n: n >= sent, 5)
            c.check(sent <= got <= sent + 8, f"{model}: the peer "
                    f"received every one ({got} of {sent})")
            c.check(t.proc.poll() is None, f"{model}: testpmd running")
        except RuntimeError as e:
            c.check(False, f"{model}: {e}")
        finally:
            rc = t.quit()
            if rc is None:
                t.kill()
            c.check(rc == 0, f"{model}: testpmd exit code {rc}")


def run(pmd, script, kind):
    c = tp.Checker()
    for model in MODELS:
        run_model(pmd, script, kind, model, c)
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(tp.veth_main(run, __doc__, ["ip"]))
