#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Port RSS from stock dpdk-testpmd on two vbr ports joined by a pair wire.

Port 0 has 4 Rx queues (mq_mode RSS, as testpmd sets it). The script sets a
key and a reta entry with testpmd's commands, checks what testpmd shows,
and sends testpmd's own txonly frames (one flow, 198.18.0.1 -> 198.18.0.2)
from port 1: they must land on the queue a Toeplitz reference computed
here picks, before and after the reta update. Then `port config all rss
all` (IPv4/IPv6 and TCP/UDP: one hash QP per packet type, the UDP frames
hashed with their ports) and RSS rules with explicit and default types,
each checked against the reference the same way.

usage: test_rss_testpmd.py PATH/librte_net_vbr.so
Exit 0 on success, 1 on a failed check, 77 when dpdk-testpmd is missing.
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))
import testpmd_driver as tp  # noqa: E402

NQ = 4
RETA = 512
MS_KEY = ("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c"
          "6a42b73bbeac01fa")
NEW_KEY = ("3b9107e45ca8126fd04e99217ac3580be6148d722fb5409c631af70885de374c"
           "9e2651bb047dc813")
TXONLY_SRC = bytes([198, 18, 0, 1])
TXONLY_DST = bytes([198, 18, 0, 2])
TXONLY_PORTS = bytes([0, 9, 0, 9])  # UDP source and destination port 9


def toeplitz(key, data):
    """Toeplitz hash: for each set input bit, XOR the 32 key bits there."""
    k = int.from_bytes(key, "big")
    klen = len(key) * 8
    h = 0
    for i in range(len(data) * 8):
        if data[i // 8] & (0x80 >> (i % 8)):
            h ^= (k >> (klen - 32 - i)) & 0xffffffff
    return h


def show_key(t, port):
    out = t.cmd(f"show port {port} rss-hash key")
    m = re.search(r"RSS key:\s*([0-9A-Fa-f]+)", out)
    return out, (m.group(1).lower() if m else None)


def show_reta(t, port):
    """The whole reta, 64 entries a command (testpmd's token is short)."""
    reta = {}
    for g in range(RETA // 64):
        masks = ["0"] * (RETA // 64)
        masks[g] = "0xffffffffffffffff"
        out = t.cmd(f"show port {port} rss reta {RETA} ({','.join(masks)})")
        reta.update({int(a): int(b) for a, b in re.findall(
            r"hash index=(\d+), queue=(\d+)", out)})
    return reta


def rx_per_queue(t, port):
    out = t.cmd(f"show port xstats {port}")
    return [int(v) for _, v in sorted(
        (int(q), v) for q, v in re.findall(r"rx_q(\d+)_packets:\s+(\d+)",
                                           out))][:NQ]


def traffic(t):
    """Send testpmd's txonly frames from port 1; per-queue Rx of port 0."""
    t.cmd("clear port xstats all")
    t.cmd("set fwd rxonly")
    t.cmd("start tx_first 4")
    time.sleep(1.0)
    t.cmd("stop")
    return rx_per_queue(t, 0)


def run(pmd):
    c = tp.Checker()
    t = tp.start_pair("rss", pmd, [f"--rxq={NQ}", f"--txq={NQ}",
                                   "--total-num-mbufs=16384"])
    try:
        t.wait_prompt()
        out, key = show_key(t, 0)
        c.check(key == MS_KEY, "default key is Microsoft's verification key")
        c.check("ipv4" in out, "default hash types include ipv4")
        reta = show_reta(t, 0)
        c.check(len(reta) == RETA and
                all(reta[i] == i % NQ for i in range(RETA)),
                f"reta of {RETA} entries, round-robin over {NQ} queues")

        out = t.cmd(f"port config 0 rss-hash-key ipv4 {NEW_KEY}")
        c.check("failed" not in out and "not supported" not in out,
                "port config rss-hash-key accepted")
        out, key = show_key(t, 0)
        c.check(key == NEW_KEY, "show rss-hash key: the new key")
        types = out.split("RSS functions:")[-1].split("RSS key:")[0].split()
        c.check(types == ["ipv4"], f"hash types now ipv4 only ({types})")

        idx = toeplitz(bytes.fromhex(NEW_KEY),
                       TXONLY_SRC + TXONLY_DST) & (RETA - 1)
        want = reta[idx]
        per_q = traffic(t)
        print(f"reference: reta index {idx}, queue {want}; rx {per_q}")
        c.check(sum(per_q) > 0 and per_q[want] == sum(per_q),
                f"txonly flow on queue {want}, as the reference says")

        target = 3 if want != 3 else 1
        out = t.cmd(f"port config 0 rss reta ({idx},{target})")
        c.check("failed" not in out and "not supported" not in out,
                "port config rss reta accepted")
        new = show_reta(t, 0)
        c.check(new.get(idx) == target and
                all(new[i] == reta[i] for i in range(RETA) if i != idx),
                f"show rss reta: entry {idx} is {target}, others unchanged")
        per_q = traffic(t)
        print(f"after reta update: rx {per_q}")
        c.check(sum(per_q) > 0 and per_q[target] == sum(per_q),
                f"txonly flow moved to queue {target}")

        out = t.cmd(f"port config 0 rss reta ({idx},{NQ})")
        new2 = show_reta(t, 0)
        c.check(new2 == new, "reta entry to a missing queue: refused")
        out = t.cmd("port config 0 rss-hash-key ipv4 0011")
        _, key = show_key(t, 0)
        c.check(key == NEW_KEY, "short key: refused, key unchanged")

        out = t.cmd("port config all rss all")
        c.check("failed" not in out and "not supported" not in out,
                "port config all rss all accepted")
        out, _ = show_key(t, 0)
        types = out.split("RSS functions:")[-1].split("RSS key:")[0].split()
        c.check("ipv4-udp" in types and "ipv6-tcp" in types,
                f"all: the TCP and UDP types too ({types})")
        h = toeplitz(bytes.fromhex(NEW_KEY),
                     TXONLY_SRC + TXONLY_DST + TXONLY_PORTS)
        want = new[h & (RETA - 1)]
        per_q = traffic(t)
        print(f"rss all: reta index {h & (RETA - 1)}, queue {want}; "
              f"rx {per_q}")
        c.check(sum(per_q) > 0 and per_q[want] == sum(per_q),
                f"rss all: UDP flow hashed with its ports, on queue {want}")

        # RSS rules: explicit types (addresses only), then the PMD's
        # default types (types 0: IPv4 and IPv6 addresses; testpmd passes
        # 0 for an empty list, its own port types when none is given)
        for types, queues, data in (
                ("types ipv4 end ", [0, 1, 2, 3], TXONLY_SRC + TXONLY_DST),
                ("types end ", [3, 2, 1, 0], TXONLY_SRC + TXONLY_DST),
                ("types ipv4-udp end ", [1, 3, 0, 2],
                 TXONLY_SRC + TXONLY_DST + TXONLY_PORTS)):
            qs = " ".join(str(q) for q in queues)
            out = t.cmd(f"flow create 0 ingress pattern eth / end actions "
                        f"rss {types}queues {qs} end / end")
            c.check("created" in out, f"rss rule {types}created")
            want = queues[toeplitz(bytes.fromhex(NEW_KEY), data) & 3]
            per_q = traffic(t)
            print(f"rss rule {types}: queue {want}; rx {per_q}")
            c.check(sum(per_q) > 0 and per_q[want] == sum(per_q),
                    f"rss rule {types}: the flow on queue {want}")
            out = t.cmd("flow dump 0 all")
            c.check(re.search(r"ipv4(-udp)? at \d+", out) is not None and
                    "l2 at" in out,
                    "flow dump: one verbs flow per packet type")
            t.cmd("flow flush 0")
    finally:
        rc = t.quit()
    c.check(rc == 0, f"testpmd exits cleanly ({rc})")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(tp.main(run, __doc__))
