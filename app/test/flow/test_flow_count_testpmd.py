#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Flow counters with stock dpdk-testpmd: the commands of the counters issue.

Two vbr ports joined by a pair wire; port 1 sends UDP frames of 128 bytes
from 10.0.0.2 to port 53 (txonly; --tx-ip and --tx-udp are start-up options
only), port 0 holds the rules. Every count is compared with the TX-packets
testpmd reports for port 1: hits exact, bytes = 128 per frame (the frame
as received, no FCS). The first rule has priority 1 so that the drop rule
made later (priority 0) takes the same frames from it.

On a NIC (VBR_TEST_DEV) port 1's Tx queues are paced to 100 Mbit/s each
(testpmd's "set port 1 queue N rate", ibv_modify_qp_rate_limit): the
cable of the suite without a NIC is a veth pair, whose kernel drops what
the receiving AF_PACKET socket cannot take before any device counts it,
where a NIC's counters would see every frame on the wire.

usage: test_flow_count_testpmd.py PATH/librte_net_vbr.so
Exit 0 on success, 1 on a failed check, 77 when dpdk-testpmd is missing.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))
import testpmd_driver as tp  # noqa: E402

FRAME = 128


def count_of(text):
    """hits and bytes of a 'flow query ... count' or indirect query."""
    h = re.search(r"hits:\s+(\d+)", text)
    b = re.search(r"bytes:\s+(\d+)", text)
    if not h or not b:
        return None
    return int(h.group(1)), int(b.group(1))


def wait_count(t, cmd, want, seconds=20):
    """The output of cmd (a count query) once it shows want frames or
    more (hits and their bytes), or after seconds, then read again a
    moment later. Hits are counted as port 0 classifies the frames, which
    may come after port 1's 'stop' (the engine still gathering port 1's
    Tx rings, or an inline post left for the next call); only port 1
    sends, so they stop at what it sent, which the second read is there
    to show."""
    def done(out):
        got = count_of(out)
        return got is not None and got[0] >= want and \
            got[1] >= want * FRAME
    tp.wait_until(lambda: t.cmd(cmd), done, seconds)
    time.sleep(0.2)
    return t.cmd(cmd)


def traffic(t):
    """Port 1 sends for a moment; frames sent."""
    t.cmd("start")
    time.sleep(0.3)
    out = t.cmd("stop")
    st = tp.fwd_stats(out)
    return st.get(1, {}).get("TX-packets", -1)


def run(pmd):
    c = tp.Checker()
    t = tp.start_pair("fcnt", pmd, ["--rxq=2", "--txq=2",
                                    "--total-num-mbufs=8192", "--portmask=0x2",
                                    "--port-topology=loop",
                                    "--forward-mode=txonly",
                                    "--tx-ip=10.0.0.2,198.18.0.2",
                                    "--tx-udp=1000,53"])
    try:
        t.wait_prompt()
        t.cmd(f"set txpkts {FRAME}")
        if os.environ.get("VBR_TEST_DEV"):
            for q in (0, 1):
                out = t.cmd(f"set port 1 queue {q} rate 100")
                c.check("error" not in out.lower() and
                        "fail" not in out.lower(),
                        f"port 1 queue {q} paced to 100 Mbit/s: "
                        f"{out.strip()!r}")
        out = t.cmd("flow create 0 priority 1 ingress pattern eth / ipv4 / "
                    "udp dst is 53 / end actions count / queue index 1 / end")
        c.check("Flow rule #0 created" in out, "count rule created")
        out = t.cmd("flow query 0 0 count")
        c.check(count_of(out) == (0, 0), "new rule: 0 hits, 0 bytes")
        a = traffic(t)
        out = wait_count(t, "flow query 0 0 count", a)
        c.check(a > 0 and count_of(out) == (a, a * FRAME),
                f"count rule: {count_of(out)} == ({a}, {a * FRAME})")
        out = t.cmd("flow indirect_action 0 create action_id 9 ingress "
                    "action count / end")
        c.check("Indirect action #9 created" in out, "indirect count")
        out = t.cmd("flow create 0 ingress pattern eth / ipv4 src is "
                    "10.0.0.1 / end actions indirect 9 / rss / end")
        c.check("Flow rule #1 created" in out, "indirect + rss rule")
        out = t.cmd("flow create 0 ingress pattern eth / ipv4 src is "
                    "10.0.0.2 / end actions indirect 9 / drop / end")
        c.check("Flow rule #2 created" in out, "indirect + drop rule")
        out = t.cmd("flow create 0 ingress pattern eth / ipv4 / tcp / end "
                    "actions age timeout 5 / queue index 0 / end")
        c.check("Flow rule #3 created" in out, "age rule")
        t_age = time.monotonic()
        out = t.cmd("flow aged 0")
        c.check("total aged flows: 0" in out, "nothing aged yet")

        b = traffic(t)
        d = traffic(t)
        c.check(b > 0 and d > 0, f"traffic sent: {b} {d}")
        # the indirect count reaching b + d shows that every frame sent
        # has been classified: rule 0 is read after it
        ind = wait_count(t, "flow indirect_action 0 query 9", b + d)
        out = t.cmd("flow query 0 0 count")
        c.check(count_of(out) == (a, a * FRAME),
                f"count rule unchanged: {count_of(out)} == ({a}, "
                f"{a * FRAME})")
        out = ind
        c.check("Indirect COUNT action" in out and
                count_of(out) == (b + d, (b + d) * FRAME),
                f"indirect: {count_of(out)} == ({b + d}, "
                f"{(b + d) * FRAME})")
        out = t.cmd("flow query 0 3 age")
        # no rule ages before its 5 s timeout; on a slow machine (a
        # sanitizer build) the traffic may take longer than that: then the
        # rule is idle 5 s or more, and aged once past the 1 s ageing tick
        elapsed = time.monotonic() - t_age
        aged = re.search(r"aged:\s+(\d)", out)
        since = re.search(r"sec_since_last_hit:\s+(\d+)", out)
        if elapsed < 5:
            c.check(aged is not None and aged.group(1) == "0",
                    f"age rule fresh after {elapsed:.1f} s")
        else:
            c.check(aged is not None and since is not None and
                    int(since.group(1)) >= 5 and
                    (aged.group(1) == "1" or int(since.group(1)) < 7),
                    f"age rule after {elapsed:.1f} s: idle "
                    f"{since.group(1) if since else None} s")
        out = t.cmd("flow query 0 1 rss")
        c.check("only count and age can be queried" in out,
                "rss query refused with a reason")
        out = t.cmd("flow query 0 3 count")
        c.check("has no count action" in out, "count query, no count")
        out = t.cmd("flow indirect_action 0 destroy action_id 9")
        c.check("used by 2 rules" in out and "busy" in out,
                "used indirect action: EBUSY")

        # the tcp rule sees no traffic: aged 5 s after creation, at the
        # next 1 s tick; the tick is an EAL alarm re-armed at the end of
        # each run, later on a loaded machine, so it is polled for (10 s
        # past the nominal 6.5 s) rather than looked at once
        time.sleep(max(0, t_age + 5 - time.monotonic()))
        out = tp.wait_until(lambda: t.cmd("flow query 0 3 age"),
                            lambda out: re.search(r"aged:\s+1", out),
                            max(0, t_age + 16.5 - time.monotonic()), 0.1)
        c.check(re.search(r"aged:\s+1", out) is not None, "age rule aged")
        out = t.cmd("flow aged 0")
        c.check("total aged flows: 1" in out and
                re.search(r"^Flow\s+3\s", out, re.M) is not None,
                "flow aged lists the idle rule, only it")
        out = t.cmd("flow aged 0 destroy")
        c.check("Flow rule #3 destroyed" in out, "flow aged destroy")
        out = t.cmd("flow aged 0")
        c.check("total aged flows: 0" in out, "aged list empty")

        out = t.cmd("flow destroy 0 rule 1 rule 2")
        out = t.cmd("flow indirect_action 0 destroy action_id 9")
        c.check("Indirect action #9 destroyed" in out,
                "unused indirect action destroyed")
        rc = t.quit()
        c.check(rc == 0, f"testpmd exits cleanly ({rc})")
    except Exception as e:  # noqa: BLE001
        t.kill()
        c.check(False, f"testpmd session: {e}")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(tp.main(run, __doc__))
