#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Meters on real traffic over a veth pair: stock dpdk-testpmd on a vbr
port (af_packet:<veth>, two Rx queues, rxonly), scapy on the peer inside a
network namespace the test makes and removes.

1. The issue's trTCM case: CBS 400 and PBS 500 bytes at 10 GB/s (a bucket
   refills in 50 ns, long before the next frame), the policy sending green
   to queue 0, yellow to queue 1, red to the bin. scapy sends frames of
   64, 400, 401, 500, 501, 1000, 300 and 450 bytes (no FCS: the length the
   meter counts), each once the meter has counted the one before, so that
   each is alone in its Rx burst (the meter reads the clock once a burst:
   two frames polled together see no refill between them, whatever the
   time between their sends): frames up to CBS are green, up to PBS
   yellow, above red. 'show port meter stats' and the queues' xstats must
   count exactly that.
2. Colour-aware: the same meter takes input colours from its DSCP table
   (IPv4 DSCP, IPv6 traffic class) and, first, its VLAN table (PCP, DEI)
   ('set port meter dscp table / vlan table / proto'); 100-byte frames all
   fit the buckets, so each keeps its input colour: exact counts again.

usage: test_mtr_veth.py PATH/librte_net_vbr.so PATH/devtools/netns-veth.sh
                        [af_packet|af_xdp]
Exit 77 when not root or a tool is missing.
"""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testpmd_driver as tp  # noqa: E402
from test_mtr_testpmd import mtr_stats, quiet, xstat  # noqa: E402

VBR_MAC = "02:76:62:72:00:31"
PY = "/usr/bin/python3"

# Step 1: (length, what arrives where): 0 green, 1 yellow, 2 red
LENS = [64, 400, 401, 500, 501, 1000, 300, 450]
COLOURS = [0, 0, 1, 1, 2, 2, 0, 1]

# Step 2: (kind, dscp, vlan pcp, vlan dei, colour); all 100 bytes
AWARE = [
    ("ip4", 0, None, 0, 0),
    ("ip4", 10, None, 0, 1),
    ("ip4", 20, None, 0, 2),
    ("ip6", 10, None, 0, 1),
    ("ip6", 20, None, 0, 2),
    ("ip6", 46, None, 0, 0),
    ("ip4", 10, 5, 0, 2),  # VLAN first: PCP 5 DEI 0 is red
    ("ip4", 20, 3, 1, 1),  # PCP 3 DEI 1 is yellow
    ("ip4", 10, 1, 0, 0),  # PCP 1 is green, whatever the DSCP
]
AWARE_LEN = 100

# One frame per line read, "sent" written once it is: the test says when
# the next may go.
SEND = r"""
import sys
from scapy.all import Ether, Dot1Q, IP, IPv6, UDP, Raw, conf, get_if_hwaddr
iface, dst = sys.argv[1], sys.argv[2]
src = get_if_hwaddr(iface)
s = conf.L2socket(iface=iface)
print("ready", flush=True)
for item in sys.stdin:
    kind, length, dscp, pcp, dei = item.strip().split(",")
    length, dscp = int(length), int(dscp)
    p = Ether(src=src, dst=dst)
    if pcp != "-":
        p = p / Dot1Q(prio=int(pcp), id=int(dei), vlan=100)
    if kind == "ip4":
        p = p / IP(src="10.98.0.2", dst="10.98.0.1", tos=dscp << 2)
    else:
        p = p / IPv6(src="fd00::2", dst="fd00::1", tc=dscp << 2)
    p = p / UDP(sport=4000, dport=5000)
    p = p / Raw(b"\0" * (length - len(p)))
    assert len(p) == length, (len(p), length)
    s.send(p)
    print("sent", flush=True)
s.close()
"""


def sh(argv, check=True):
    print("+ " + " ".join(argv), flush=True)
    return subprocess.run(argv, check=check)


def table(n, colours):
    """testpmd's n entries: G but where colours (index: colour) say."""
    return " ".join(colours.get(i, "G") for i in range(n))


def metered(t):
    """Frames meter 1 has coloured since its stats were last cleared,
    passed or dropped."""
    st = mtr_stats(t.cmd("show port meter stats 0 1 no"))
    return sum(st.get(f"Pkts {k}", 0) for k in ("G", "Y", "R", "DROPPED"))


def send(t, veth_ns, peer_if, items):
    """Send items one at a time: each once the meter has counted the one
    before (or 10 s passed: then the counts will tell), so no two share
    an Rx burst however late the pollers run."""
    argv = ["ip", "netns", "exec", veth_ns, PY, "-c", SEND, peer_if,
            VBR_MAC]
    print("+ " + " ".join(argv[:6] + ["SEND"] + argv[7:]), flush=True)
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    try:
        if p.stdout.readline().strip() != "ready":
            raise RuntimeError("the scapy sender did not start")
        base = metered(t)
        wait = 10
        for i, it in enumerate(items):
            p.stdin.write(",".join(str(x) for x in it) + "\n")
            p.stdin.flush()
            if p.stdout.readline().strip() != "sent":
                raise RuntimeError(f"the scapy sender failed on {it}")
            seen = tp.wait_until(lambda: metered(t),
                                 lambda m: m >= base + i + 1, wait)
            if seen < base + i + 1:
                # A meter that misses frames: the counts will fail the
                # test; the rest go at a pace that ends in time.
                print(f"frame {i} {it}: not metered in {wait} s",
                      flush=True)
                wait = 0.5
        p.stdin.close()
        if p.wait(30) != 0:
            raise RuntimeError(f"the scapy sender exited {p.returncode}")
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def queues(t):
    xs = t.cmd("show port xstats 0")
    return xstat(xs, "rx_q0_packets") or 0, xstat(xs, "rx_q1_packets") or 0


def wait_queues(t, base, colours, seconds=10):
    """Until the queues took (since base, their counts then) the green and
    yellow frames of colours, or seconds: a loaded machine may bring them
    later than a fixed window; then half a second more for any extra."""
    want = sum(1 for x in colours if x != 2)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        q = queues(t)
        if q[0] - base[0] + q[1] - base[1] >= want:
            break
        time.sleep(0.1)
    time.sleep(0.5)


def expect(c, t, what, colours, size):
    """Counts of the meter and the queues for frames of these colours."""
    st = mtr_stats(t.cmd("show port meter stats 0 1 yes"))
    n = [sum(1 for x in colours if x == k) for k in range(3)]
    b = [sum(s for x, s in zip(colours, size) if x == k) for k in range(3)]
    print(f"{what}: meter {st}; want {n} frames, {b} bytes", flush=True)
    c.check(st.get("Pkts G") == n[0] and st.get("Bytes G") == b[0],
            f"{what}: green {st.get('Pkts G')}/{st.get('Bytes G')} == "
            f"{n[0]}/{b[0]}")
    c.check(st.get("Pkts Y") == n[1] and st.get("Bytes Y") == b[1],
            f"{what}: yellow {st.get('Pkts Y')}/{st.get('Bytes Y')} == "
            f"{n[1]}/{b[1]}")
    c.check(st.get("Pkts R") == 0 and st.get("Pkts DROPPED") == n[2] and
            st.get("Bytes DROPPED") == b[2],
            f"{what}: red dropped {st.get('Pkts DROPPED')}/"
            f"{st.get('Bytes DROPPED')} == {n[2]}/{b[2]}, passed "
            f"{st.get('Pkts R')} == 0")
    return n


def run(pmd, script, kind):
    c = tp.Checker()
    prefix = f"vbe{os.getpid()}"  # test.sh clears stale vbe<pid>ns
    veth = None
    t = None
    try:
        sh(["bash", script, "up", prefix])
        veth = prefix
        eal, fprefix = tp.eal_args("mtrveth", pmd)
        eal += ["--vdev",
                f"net_vbr0,wire={kind}:{prefix}0,mac={VBR_MAC}"]
        t = tp.TestPmd(eal, ["--forward-mode=rxonly", "--rxq=2", "--txq=2",
                             "--total-num-mbufs=8192"], fprefix)
        t.wait_prompt()
        t.cmd("set promisc 0 off")
        t.cmd("set allmulti 0 off")
        for line in (
                "add port meter profile trtcm_rfc2698 0 1 10000000000 "
                "10000000000 400 500 0",
                "add port meter policy 0 1 g_actions queue index 0 / end "
                "y_actions queue index 1 / end r_actions drop / end",
                "create port meter 0 1 1 1 yes 0xffff 0 g 0"):
            out = t.cmd(line)
            c.check(quiet(out), line)
        out = t.cmd("flow create 0 ingress pattern eth / ipv4 / udp / end "
                    "actions meter mtr_id 1 / end")
        c.check("created" in out, "ipv4 udp rule on meter 1")

        # 1. trTCM CBS 400, PBS 500
        t.cmd("start")
        q = queues(t)
        send(t, prefix + "ns", prefix + "1",
             [("ip4", n, 0, "-", 0) for n in LENS])
        wait_queues(t, q, COLOURS)
        t.cmd("stop")
        q0, q1 = queues(t)
        n = expect(c, t, "trtcm cbs 400 pbs 500", COLOURS, LENS)
        c.check(q0 == n[0] and q1 == n[1],
                f"green frames on queue 0 ({q0} == {n[0]}), yellow on "
                f"queue 1 ({q1} == {n[1]})")

        # 2. colour-aware: VLAN table first, then DSCP
        for line in (
                "set port meter dscp table 0 1 outer_ip " +
                table(64, {10: "Y", 20: "R"}),
                "set port meter proto 0 1 outer_ip 1",
                "set port meter vlan table 0 1 outer_vlan " +
                table(16, {5 << 1: "R", 3 << 1 | 1: "Y"}),
                "set port meter proto 0 1 outer_vlan 0"):
            out = t.cmd(line)
            c.check(quiet(out), line.split(" G")[0])
        for pat in ("eth / ipv6 / udp", "eth / vlan vid is 100 / ipv4 / udp"):
            out = t.cmd(f"flow create 0 ingress pattern {pat} / end "
                        "actions meter mtr_id 1 / end")
            c.check("created" in out, f"{pat} rule on meter 1")
        t.cmd("start")
        send(t, prefix + "ns", prefix + "1",
             [(k, AWARE_LEN, d, "-" if p is None else p, dei)
              for k, d, p, dei, _ in AWARE])
        wait_queues(t, (q0, q1), [x[4] for x in AWARE])
        t.cmd("stop")
        a0, a1 = queues(t)
        want = [x[4] for x in AWARE]
        n = expect(c, t, "colour-aware", want, [AWARE_LEN] * len(want))
        c.check(a0 - q0 == n[0] and a1 - q1 == n[1],
                f"colour-aware: green on queue 0 ({a0 - q0} == {n[0]}), "
                f"yellow on queue 1 ({a1 - q1} == {n[1]})")
        rc = t.quit()
        c.check(rc == 0, f"testpmd quit cleanly (rc {rc})")
        t = None
    except (RuntimeError, subprocess.CalledProcessError) as e:
        c.check(False, str(e))
    finally:
        if t is not None:
            t.kill()
        if veth is not None:
            sh(["bash", script, "down", prefix], check=False)
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(tp.veth_main(run, __doc__, ("dpdk-testpmd", "ip"), py=PY))
