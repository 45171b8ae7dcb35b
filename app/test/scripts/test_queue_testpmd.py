#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Queue operations and device removal through stock testpmd.

usage: test_queue_testpmd.py PATH/librte_net_vbr.so PATH/devtools/netns-veth.sh

pair: two vbr ports on one swverbs pair cable, two queues each. testpmd
prints the queues' real descriptor counts at start (no "RX desc=0");
`show rxq info` / `show txq info` give them with the burst modes;
`show port info` the firmware version; descriptor status commands answer.
Under flowgen traffic, `port 0 rxq 0 stop` returns the queue's 1024 mbufs
to the pool (dump_mempool: exactly 1024 more available), its frames are
dropped and counted (RX-missed grows, rx_q0_packets does not) while queue
1 keeps receiving; `port 0 rxq 0 start` takes 1024 again and frames
resume; after three rounds the pool is where it was (within the Rx
stashes' slack).

af_packet (root; skipped otherwise): a vbr port on a veth whose peer is in
a namespace, forwarding (flowgen) when the veth is deleted: testpmd prints
the device removal event, closes and detaches the port itself, and quits
cleanly. With --no-rmv-interrupt, the bursts go on against the removed
device without a crash and without a queue recovery a burst
(tx_q0_recoveries stays small), then `port stop 0` and `port close 0`
clean up.
"""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testpmd_driver as tp  # noqa: E402
from test_link_testpmd import wait_for, xstats  # noqa: E402

NB_DESC = 256  # the ring size vbr suggests (dev_info), as mlx5 does


def available(t):
    """Mbufs in the pool (ring and lcore caches) per dump_mempool."""
    out = t.cmd("dump_mempool")
    common = re.search(r"common_pool_count=(\d+)", out)
    cache = re.search(r"total_cache_count=(\d+)", out)
    if common is None or cache is None:
        raise RuntimeError("dump_mempool: no counts in " + out[-500:])
    return int(common.group(1)) + int(cache.group(1))


def flush_tx(t):
    """Free what the Tx queues still hold (sent, completion not polled)."""
    for port in (0, 1):
        for q in (0, 1):
            t.cmd(f"port {port} txq {q} stop")
            t.cmd(f"port {port} txq {q} start")


def nic_stats(t, port):
    out = t.cmd(f"show port stats {port}")
    return {k: int(v) for k, v in re.findall(r"(RX-\w+|TX-\w+):\s+(\d+)",
                                             out)}


def forward(t, seconds=1.0):
    t.cmd("start")
    time.sleep(seconds)
    t.cmd("stop")


def run_pair(pmd, c):
    t = tp.start_pair("qops", pmd, ["--total-num-mbufs=16384", "--rxq=2",
                                    "--txq=2", "--forward-mode=flowgen"])
    try:
        t.wait_prompt()
        out = t.cmd("start")
        c.check("RX desc=0 " not in out and
                f"RX desc={NB_DESC} " in out and
                f"TX desc={NB_DESC} " in out,
                "start prints the queues' descriptor counts")
        time.sleep(0.5)
        t.cmd("stop")
        out = t.cmd("show rxq info 0 0")
        c.check(f"Number of RXDs: {NB_DESC}" in out and
                "Rx queue state: started" in out and
                "Burst mode: Scalar" in out, "show rxq info 0 0")
        out = t.cmd("show txq info 0 1")
        c.check(f"Number of TXDs: {NB_DESC}" in out and
                "Tx queue state: started" in out and
                "Burst mode: Scalar" in out, "show txq info 0 1")
        out = t.cmd("show port info 0")
        c.check(re.search(r"Firmware-version: swverbs \S+", out) is not None,
                "show port info gives the firmware version")
        out = t.cmd("show port 0 rxq 0 desc 0 status")
        c.check("Desc status = AVAILABLE" in out or
                "Desc status = DONE" in out, f"rxq desc status: {out!r}")
        out = t.cmd(f"show port 0 rxq 0 desc {NB_DESC} status")
        c.check("Invalid" in out or "fail" in out.lower() or
                "status = " not in out, f"offset past the ring: {out!r}")
        out = t.cmd("show port 0 txq 0 desc 0 status")
        c.check("Desc status = DONE" in out or "Desc status = FULL" in out,
                f"txq desc status: {out!r}")

        flush_tx(t)
        start_avail = available(t)
        for rnd in range(3):
            flush_tx(t)
            a = available(t)
            out = t.cmd("port 0 rxq 0 stop")
            c.check("fail" not in out.lower(), f"rxq stop: {out!r}")
            s = available(t)
            c.check(s - a == NB_DESC,
                    f"round {rnd}: the stop returned {s - a} mbufs "
                    f"(== {NB_DESC})")
            out = t.cmd("show rxq info 0 0")
            c.check("Rx queue state: stopped" in out, "queue 0 stopped")
            out = t.cmd("show port 0 rxq 0 desc 0 status")
            c.check("Desc status = UNAVAILABLE" in out,
                    f"a stopped queue has no descriptor: {out!r}")
            n0, x0 = nic_stats(t, 0), xstats(t, 0)
            forward(t)
            n1, x1 = nic_stats(t, 0), xstats(t, 0)
            missed = n1.get("RX-missed", 0) - n0.get("RX-missed", 0)
            q0 = x1.get("rx_q0_packets", 0) - x0.get("rx_q0_packets", 0)
            q1 = x1.get("rx_q1_packets", 0) - x0.get("rx_q1_packets", 0)
            c.check(missed > 0 and q0 == 0 and q1 > 0,
                    f"round {rnd}: stopped queue 0: RX-missed +{missed}, "
                    f"rx_q0_packets +{q0}, rx_q1_packets +{q1}")
            flush_tx(t)
            s2 = available(t)
            out = t.cmd("port 0 rxq 0 start")
            c.check("fail" not in out.lower(), f"rxq start: {out!r}")
            r = available(t)
            c.check(s2 - r == NB_DESC,
                    f"round {rnd}: the start posted {s2 - r} mbufs")
            x0 = xstats(t, 0)
            forward(t)
            x1 = xstats(t, 0)
            q0 = x1.get("rx_q0_packets", 0) - x0.get("rx_q0_packets", 0)
            c.check(q0 > 0, f"round {rnd}: frames resume on queue 0: +{q0}")
        flush_tx(t)
        end_avail = available(t)
        # each Rx queue keeps up to 64 fresh mbufs for its refills
        c.check(abs(end_avail - start_avail) <= 4 * 64,
                f"no mbuf lost: {start_avail} available before, "
                f"{end_avail} after")
        rc = t.quit()
        c.check(rc == 0, f"testpmd quit cleanly (rc {rc})")
    except (RuntimeError, subprocess.CalledProcessError) as e:
        c.check(False, str(e))
    finally:
        t.kill()


def run_removal(pmd, script, c, rmv_interrupt):
    from test_e2e_veth import Veth
    tag = "rmv" if rmv_interrupt else "rmn"
    prefix = f"vq{tag}{os.getpid()}"
    with Veth(script, prefix) as veth:
        t = None
        try:
            eal, fprefix = tp.eal_args("q" + tag, pmd)
            eal += ["--vdev", f"net_vbr0,wire=af_packet:{veth.root_if}"]
            app = ["--forward-mode=flowgen", "--total-num-mbufs=8192"]
            if not rmv_interrupt:
                app.append("--no-rmv-interrupt")
            t = tp.TestPmd(eal, app, fprefix)
            t.wait_prompt()
            t.cmd("start")
            time.sleep(0.5)
            mark = len(t.out)
            subprocess.run(["ip", "link", "del", veth.root_if], check=True)
            if rmv_interrupt:
                c.check(wait_for(lambda: "Port 0: device removal event" in
                                 t.out[mark:]),
                        "testpmd printed the device removal event")
                # testpmd's handler stops, closes and detaches the port
                c.check(wait_for(lambda: "Now total ports is 0" in
                                 t.out[mark:]) and
                        "Port 0 is closed" in t.out[mark:],
                        "testpmd closed and detached the removed port")
                # then it starts forwarding again (on no port), printing
                # from its alarm thread: let that end before a command
                c.check(wait_for(lambda: "nb forwarding ports=0" in
                                 t.out[mark:]),
                        "testpmd restarted the forwarding without the port")
                time.sleep(0.5)
                out = t.cmd("show port info 0")
                c.check("Invalid port 0" in out, f"port 0 gone: {out!r}")
            else:
                # bursts go on against the removed device: the sends
                # before the removal event fail, then the Tx queue is
                # no longer recovered (it used to be, once a burst:
                # 28,028 times in one CI run, which kept both CPUs busy
                # and testpmd's prompt over 30 s under a sanitizer)
                time.sleep(1.0)
                out = t.cmd("show port info 0", timeout=120)
                c.check("Link status: down" in out,
                        "the removed port's link is down")
                t.cmd("stop", timeout=120)
                m = re.search(r"^\s*tx_q0_recoveries:\s+(\d+)\s*$",
                              t.cmd("show port xstats 0"), re.M)
                rec = int(m.group(1)) if m else None
                c.check(rec is not None and rec <= 16,
                        f"a queue whose device is gone is not recovered "
                        f"once a burst (tx_q0_recoveries {rec})")
                out = t.cmd("port stop 0")
                c.check("fail" not in out.lower(), f"port stop: {out!r}")
                out = t.cmd("port close 0")
                c.check("fail" not in out.lower(), f"port close: {out!r}")
            rc = t.quit()
            c.check(rc == 0, f"testpmd quit cleanly after the removal "
                    f"(rc {rc}, rmv interrupt {rmv_interrupt})")
        except (RuntimeError, subprocess.CalledProcessError) as e:
            c.check(False, str(e))
        finally:
            if t is not None:
                t.kill()


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    if tp.find_testpmd() is None:
        print("SKIP: dpdk-testpmd not installed")
        return tp.SKIP
    pmd, script = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    tp.exit_on_signals()  # the veth goes on SIGINT, SIGTERM, SIGHUP too
    c = tp.Checker()
    run_pair(pmd, c)
    if os.geteuid() != 0:
        print("SKIP (removal part): needs root", flush=True)
    else:
        run_removal(pmd, script, c, True)
        run_removal(pmd, script, c, False)
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
