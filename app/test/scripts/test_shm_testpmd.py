#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Two dpdk-testpmd processes joined by a vbr shm cable (issue 10).

usage: test_shm_testpmd.py PATH/librte_net_vbr.so
Exit 0 on success, 1 on a failed check, 77 when dpdk-testpmd is missing.

Process A and process B each have one port, net_vbr0,wire=shm:<cable>
(unique file prefixes, --no-huge). B sends 4 bursts of 32 frames
(tx_first); A counts exactly 128. B is killed with SIGKILL: A's link goes
down, and frames A sends then are counted as errors (TX-errors and the
xstat tx_link_down_drops), not as sent. A new B attaches: the link comes
back up and frames flow both ways. A third process cannot take a third
end: the error names the pids holding the cable. The cable's file is then
truncated under both ends: both live, xstat wire_faults counts the fault
at each end, and the link comes back up by itself. The cable's file is
gone once the last end quits.

Then the pair: two processes that name one pair: cable each get their own:
the second is warned, and frames sent on a lone pair end are errors.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testpmd_driver as tp  # noqa: E402


def xstat(text, name):
    m = re.search(r"^\s*%s:\s+(\d+)\s*$" % re.escape(name), text, re.M)
    return int(m.group(1)) if m else None


def start_one(tag, pmd, wire):
    """testpmd with one vbr port on @wire; its prompt reached."""
    t = tp.start_wire(tag, pmd, wire, ["--total-num-mbufs=8192"])
    t.wait_prompt()
    return t


def link_up(t):
    return "Link status: up" in t.cmd("show port info 0")


def wait_link(t, up, seconds=10):
    end = time.monotonic() + seconds
    while link_up(t) != up and time.monotonic() < end:
        time.sleep(0.05)
    return link_up(t) == up


def send_bursts(t, n):
    """Send n bursts of 32 frames (tx_first), then stop: rxonly after."""
    t.cmd("set fwd rxonly")
    t.cmd(f"start tx_first {n}")
    time.sleep(0.2)
    t.cmd("stop")


def stats(t):
    return tp.port_stats(t.cmd("show port stats 0"), 0) or {}


def wait_errors(t, n):
    """Port 0's stats once n frames sent into a down link are errors, or
    after 20 s: the PMD counts a frame sent at its post and moves it to
    the errors only once the device, which may drain the queue later
    (thread, service), has counted it dropped."""
    return tp.wait_until(lambda: stats(t),
                         lambda s: s.get("TX-errors", 0) >= n and
                         s.get("TX-bytes", 1) == 0)


def sent_and_counted(c, tx, rx, what):
    """tx sends 4 bursts of 32 frames; rx (rxonly) counts exactly 128."""
    rx.cmd("clear port stats all")
    rx.cmd("set fwd rxonly")
    rx.cmd("start")
    tx.cmd("stop")
    send_bursts(tx, 4)
    st = tp.wait_rx(rx, 0, 128, 10)
    c.check(st.get("RX-packets", 0) + st.get("RX-missed", 0) == 128,
            f"{what}: 128 frames counted exactly ({st})")
    rx.cmd("stop")


def run(pmd):
    c = tp.Checker()
    cable = f"tp{os.getpid()}"
    wire = f"shm:{cable}"
    path = f"/dev/shm/swverbs-shm.{cable}"
    procs = []
    tp.exit_on_signals()
    try:
        a = start_one("shmA", pmd, wire)
        procs.append(a)
        c.check(not link_up(a), "one end: link down")
        b = start_one("shmB", pmd, wire)
        procs.append(b)
        c.check(wait_link(a, True) and wait_link(b, True),
                "two processes: link up at both")
        a.cmd("set fwd rxonly")
        a.cmd("start")
        send_bursts(b, 4)
        sb = stats(b)
        c.check(sb.get("TX-packets") == 128,
                f"B sent 128 frames (TX-packets {sb.get('TX-packets')})")
        sa = tp.wait_rx(a, 0, 128, 10)
        c.check(sa.get("RX-packets", 0) + sa.get("RX-missed", 0) == 128,
                f"A counted exactly 128 (RX-packets "
                f"{sa.get('RX-packets')}, RX-missed {sa.get('RX-missed')})")

        # a third end: refused, the holders named
        t3 = tp.start_wire("shmC", pmd, wire, ["--total-num-mbufs=8192"])
        t3.wait_prompt()
        nports = t3.cmd("show port summary all")
        rc = t3.quit()
        m = re.search(r"two ends, held by pids (\d+) and (\d+)", t3.out)
        c.check(m is not None and
                {int(m.group(1)), int(m.group(2))} ==
                {a.proc.pid, b.proc.pid},
                "a third process is refused, naming the two pids")
        c.check("net_vbr0" not in nports,
                f"the third process has no port (exit {rc})")

        # B killed: the link goes down at A; A's sends are errors
        b.kill()
        procs.remove(b)
        c.check(wait_link(a, False), "B killed: link down at A")
        a.cmd("stop")
        a.cmd("clear port stats all")
        send_bursts(a, 2)
        sa = wait_errors(a, 64)
        c.check(sa.get("TX-packets") == 0 and sa.get("TX-errors") == 64 and
                sa.get("TX-bytes") == 0,
                f"sent into a down link: TX-packets {sa.get('TX-packets')} "
                f"(0), TX-errors {sa.get('TX-errors')} (64)")
        drops = xstat(a.cmd("show port xstats 0"), "tx_link_down_drops")
        c.check(drops == 64, f"tx_link_down_drops {drops} (64)")

        # a new B: link up, frames both ways
        b = start_one("shmB2", pmd, wire)
        procs.append(b)
        c.check(wait_link(a, True) and wait_link(b, True),
                "a new B attaches: link up")
        sent_and_counted(c, a, b, "A to the new B")
        sent_and_counted(c, b, a, "the new B to A")

        # the cable's file cut short under the ends (issue 32, item 3):
        # both processes live, the fault shows in xstat wire_faults, the
        # link goes down and comes back up by itself, frames flow again
        fa = xstat(a.cmd("show port xstats 0"), "wire_faults")
        fb = xstat(b.cmd("show port xstats 0"), "wire_faults")
        c.check(fa == 0 and fb == 0, f"wire_faults shown, 0 ({fa}, {fb})")
        os.truncate(path, 0)
        fa = tp.wait_until(lambda: xstat(a.cmd("show port xstats 0"),
                                         "wire_faults"),
                           lambda n: n is not None and n >= 1)
        fb = tp.wait_until(lambda: xstat(b.cmd("show port xstats 0"),
                                         "wire_faults"),
                           lambda n: n is not None and n >= 1)
        c.check(fa == 1 and fb == 1,
                f"file truncated: a wire fault at each end ({fa}, {fb})")
        c.check(a.proc.poll() is None and b.proc.poll() is None,
                "both processes survive the truncated file")
        c.check(wait_link(a, True) and wait_link(b, True),
                "the link comes back up at both ends")
        sent_and_counted(c, a, b, "A to B after the fault")
        sent_and_counted(c, b, a, "B to A after the fault")
        for t in list(procs):
            c.check(t.quit() == 0, "testpmd quits cleanly")
            procs.remove(t)
        c.check(not os.path.exists(path), f"{path} removed by the last end")

        # pair: per process
        pwire = f"pair:{cable}"
        p1 = start_one("pairA", pmd, pwire)
        procs.append(p1)
        p2 = start_one("pairB", pmd, pwire)
        procs.append(p2)
        warn = "got its own cable"
        c.check(warn not in p1.out, "the first process is not warned")
        c.check(warn in p2.out and f"shm:{cable}" in p2.out,
                "the second process is warned it got its own cable")
        c.check(not link_up(p1) and not link_up(p2),
                "each has a lone end: link down")
        send_bursts(p2, 1)
        s2 = wait_errors(p2, 32)
        c.check(s2.get("TX-packets") == 0 and s2.get("TX-errors") == 32 and
                s2.get("TX-bytes") == 0,
                f"frames sent on a lone pair end are errors ({s2})")
        for t in list(procs):
            c.check(t.quit() == 0, "testpmd quits cleanly")
            procs.remove(t)
    finally:
        for t in procs:
            t.kill()
        # testpmd killed (a failed check, a signal) leaves its end's file
        if os.path.exists(path):
            os.unlink(path)
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(tp.main(run, __doc__))
