#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Telemetry handlers against port close, re-probe and reconfigure.

usage: test_tel_race.py PATH/librte_net_vbr.so

testpmd on one vbr port (a loop wire). Two threads ask every /vbr/
endpoint about port 0, over and over, through the telemetry socket, while
testpmd's own thread closes the port, detaches its device, probes it again
and starts it, and stops it, changes its queue count and starts it again,
many times over. A handler must never read a freed port, queue or QP: in
the sanitizer build AddressSanitizer stops testpmd at the first such read
(and the test fails: testpmd gone, or a report in its output); every reply
is a port's, a "not a vbr port" error, or empty, never garbage. The last
round leaves a port that answers as before.
"""

import os
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testpmd_driver as tp  # noqa: E402
from test_stat_telemetry import Telemetry  # noqa: E402

ROUNDS = int(os.environ.get("VBR_TEL_RACE_ROUNDS", "100"))
ENDPOINTS = ["/vbr/ports", "/vbr/port,0", "/vbr/port_counters,0",
             "/vbr/qp_mode,0", "/vbr/qp_counters,0", "/vbr/qps,0",
             "/vbr/mrs,0", "/vbr/mr,0,1", "/vbr/qp_counter,0,1",
             "/vbr/qp_bind,0,999999", "/vbr/qp_unbind,0,7"]


def sane(cmd, r):
    """A reply of a live port, of a gone one, or an error; nothing else."""
    if cmd == "/vbr/ports":
        return isinstance(r, dict) and set(r) <= {"0"} and \
            all(v == "net_vbr0/1" for v in r.values())
    if not isinstance(r, dict):
        return False
    if "error" in r:
        return isinstance(r.get("errno"), int) and "message" in r
    return r.get("ifname") == "net_vbr0" and r.get("port") == 1


def run(pmd, c):
    if os.environ.get("VBR_TEST_DEV"):
        print("SKIP: a loop wire test (swverbs only)")
        return tp.SKIP
    eal, prefix = tp.eal_args("telrace", pmd)
    vdev = "net_vbr0,wire=loop"
    eal += ["--vdev", vdev]
    t = tp.TestPmd(eal, ["--total-num-mbufs=4096"], prefix)
    stop = threading.Event()
    bad, counts = [], []

    def hammer():
        n = 0
        tel = Telemetry(t.prefix)
        try:
            while not stop.is_set():
                for cmd in ENDPOINTS:
                    r = tel(cmd)
                    n += 1
                    if not sane(cmd, r):
                        bad.append((cmd, r))
                        return
        except (OSError, ValueError) as e:  # testpmd died under us
            bad.append(("socket", repr(e)))
        finally:
            counts.append(n)
            tel.close()

    threads = []
    try:
        t.wait_prompt()
        threads = [threading.Thread(target=hammer) for _ in range(2)]
        for th in threads:
            th.start()
        for i in range(ROUNDS):
            if i % 2 == 0:
                t.cmd("port stop 0")
                t.cmd("port close 0")
                t.cmd("device detach net_vbr0")
                out = t.cmd(f"port attach {vdev}")
                if not c.check("Port 0 is attached" in out,
                               f"round {i}: port 0 probed again"):
                    break
            else:
                t.cmd("port stop 0")
                t.cmd(f"port config all txq {1 + i % 3}")
                t.cmd(f"port config all rxq {1 + i % 3}")
            t.cmd("port start 0")
            if bad or t.proc.poll() is not None:
                break
        stop.set()
        for th in threads:
            th.join(30)
        c.check(t.proc.poll() is None, "testpmd is alive after the rounds")
        c.check(not bad, f"every reply sane: {bad[:2]}")
        c.check(sum(counts) > ROUNDS,
                f"the handlers ran throughout: {sum(counts)} requests")
        tel = Telemetry(t.prefix)
        q = tel("/vbr/qps,0")
        c.check(tel("/vbr/ports") == {"0": "net_vbr0/1"} and
                len(q.get("txq_lqpn", [])) >= 1,
                f"the last port answers: {q}")
        tel.close()
        c.check(t.quit() == 0, "testpmd exits cleanly")
        c.check("AddressSanitizer" not in t.out and
                "runtime error" not in t.out, "no sanitizer report")
    finally:
        stop.set()
        for th in threads:
            th.join(5)
        t.kill()
    return 0 if c.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(tp.main(lambda pmd: run(pmd, tp.Checker()), __doc__))
