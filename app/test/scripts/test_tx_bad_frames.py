#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A Tx queue survives frames the device cannot send (issue 8, finding 2).

usage: test_tx_bad_frames.py PATH/librte_net_vbr.so
Exit 0 on success, 1 on a failed check, 77 when dpdk-testpmd is missing.

Two vbr ports on a pair wire, 9000-byte mbufs, multi-segment Tx on port 0,
txonly: first 24,000-byte frames of three 8,000-byte segments (longer than
the largest frame the device sends), then 64-byte frames. Port 0 must keep
sending: port 1's Rx counters grow (RX-packets, and RX-missed: txonly does
not poll its Rx queue), and the long ones are counted as dropped in port
0's oerrors and its tx_q0_bad_frames xstat.
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


def txonly_second(t, c):
    """Clear the stats, run txonly for a second; stats of ports 0 and 1."""
    t.cmd("clear port stats all")
    t.cmd("start")
    time.sleep(1)
    t.cmd("stop")
    s0 = tp.port_stats(t.cmd("show port stats 0"), 0)
    s1 = tp.port_stats(t.cmd("show port stats 1"), 1)
    c.check(s0 is not None and s1 is not None, "port stats printed")
    return s0, s1


def run(pmd):
    c = tp.Checker()
    t = tp.start_pair("txbad", pmd, ["--total-num-mbufs=8192",
                                     "--mbuf-size=9000"])
    try:
        t.wait_prompt()
        t.cmd("port stop 0")
        out = t.cmd("port config 0 tx_offload multi_segs on")
        c.check("rror" not in out, "multi_segs accepted on port 0")
        t.cmd("port start 0")
        t.cmd("set fwd txonly")
        out = t.cmd("set txpkts 8000,8000,8000")
        c.check("rror" not in out and "nvalid" not in out,
                "set txpkts 8000,8000,8000 accepted")
        s0, s1 = txonly_second(t, c)
        if s0 is None or s1 is None:
            return 1
        c.check(s0["TX-errors"] > 0,
                f"24000-byte frames dropped on port 0 (TX-errors "
                f"{s0['TX-errors']})")
        c.check(s1["RX-packets"] + s1["RX-missed"] == 0,
                f"no 24000-byte frame arrived (RX-packets "
                f"{s1['RX-packets']}, RX-missed {s1['RX-missed']})")
        x0 = t.cmd("show port xstats 0")
        bad = xstat(x0, "tx_q0_bad_frames")
        c.check(bad is not None and bad == s0["TX-errors"],
                f"tx_q0_bad_frames {bad} == TX-errors {s0['TX-errors']}")
        rec = xstat(x0, "tx_q0_recoveries")
        c.check(rec == 0, f"no recovery needed (tx_q0_recoveries {rec})")

        # the second step: 64-byte frames must flow again
        t.cmd("set txpkts 64")
        s0, s1 = txonly_second(t, c)
        if s0 is None or s1 is None:
            return 1
        c.check(s0["TX-packets"] > 1000,
                f"port 0 keeps sending 64-byte frames (TX-packets "
                f"{s0['TX-packets']})")
        rx = s1["RX-packets"] + s1["RX-missed"]
        c.check(rx > 1000,
                f"port 1 receives them (RX-packets {s1['RX-packets']}, "
                f"RX-missed {s1['RX-missed']})")
        c.check(s0["TX-errors"] == 0,
                f"no 64-byte frame dropped (TX-errors {s0['TX-errors']})")
        c.check(t.proc.poll() is None, "testpmd still running")
    finally:
        rc = t.quit()
    c.check(rc == 0, f"testpmd exit code {rc}")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(tp.main(run, __doc__))
