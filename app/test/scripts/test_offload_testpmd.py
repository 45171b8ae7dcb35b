#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Rx offloads through stock testpmd, with real frames from scapy.

usage: test_offload_testpmd.py PATH/librte_net_vbr.so PATH/devtools/netns-veth.sh

A vbr port on af_packet:<veth> in rxonly mode with `set verbose 1`, its Rx
checksum, VLAN strip and timestamp offloads on. From the peer in a network
namespace scapy sends classes of frames, each of its own length: IPv4 UDP
and TCP with right checksums, with a wrong IPv4 header checksum, with a
wrong UDP or TCP checksum, IPv6 UDP and TCP (right), and IPv4 UDP tagged
with VID 100. testpmd's lines must say, per class, exactly: IP and L4 GOOD
for the right IPv4 ones and for the tagged one; IP BAD (L4 GOOD) for the
wrong header; L4 BAD (IP GOOD) for the wrong UDP or TCP sums; IPv6: IP
UNKNOWN (no header checksum), L4 GOOD (the mlx5 profile, as a ConnectX,
reports nothing on a WQ: vbr checks in software); the tagged one stripped (4 bytes shorter,
RTE_MBUF_F_RX_VLAN_STRIPPED, its TCI); and every frame a timestamp, in
arrival order, between the clock read before the send and after (swverbs:
CLOCK_MONOTONIC). Then with the offloads off: no flag of the three.
Exit 77 when not root or a tool is missing.
"""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testpmd_driver as tp  # noqa: E402
from test_e2e_veth import Veth, sh  # noqa: E402

PY = "/usr/bin/python3"
VBR_MAC = "02:76:62:72:00:13"
IP_GOOD, IP_BAD, IP_UNKNOWN = ("RTE_MBUF_F_RX_IP_CKSUM_" + x
                                for x in ("GOOD", "BAD", "UNKNOWN"))
L4_GOOD, L4_BAD, L4_UNKNOWN = ("RTE_MBUF_F_RX_L4_CKSUM_" + x
                                for x in ("GOOD", "BAD", "UNKNOWN"))
GOOD = {IP_GOOD, L4_GOOD}
CSUM_PREFIXES = ("RTE_MBUF_F_RX_IP_CKSUM_", "RTE_MBUF_F_RX_L4_CKSUM_")

# class: (frame length on the wire, frames, checksum flags wanted, VLAN)
CLASSES = {
    "udp4": (100, 3, GOOD, None),
    "tcp4": (104, 3, GOOD, None),
    "udp4-bad-ip": (108, 2, {IP_BAD, L4_GOOD}, None),
    "udp4-bad-l4": (112, 2, {IP_GOOD, L4_BAD}, None),
    "tcp4-bad-l4": (116, 2, {IP_GOOD, L4_BAD}, None),
    "udp6": (120, 2, {IP_UNKNOWN, L4_GOOD}, None),
    "tcp6": (124, 2, {IP_UNKNOWN, L4_GOOD}, None),
    "udp4-vlan": (132, 3, GOOD, 100),
}

SEND = r"""
import sys
from scapy.all import (Ether, Dot1Q, IP, IPv6, UDP, TCP, Raw, sendp,
                       get_if_hwaddr)
iface, dst = sys.argv[1], sys.argv[2]
src = get_if_hwaddr(iface)
frames = []
for arg in sys.argv[3:]:
    name, length, n = arg.split(",")
    length, n = int(length), int(n)
    eth = Ether(src=src, dst=dst)
    if name.endswith("-vlan"):
        eth = eth / Dot1Q(vlan=100, prio=3)
    if "6" in name.split("-")[0]:
        l3 = IPv6(src="2001:db8::1", dst="2001:db8::2")
    else:
        l3 = IP(src="10.13.0.1", dst="10.13.0.2")
    l4 = TCP(sport=1234, dport=80) if name.startswith("tcp") else \
        UDP(sport=1234, dport=53)
    for i in range(n):
        hdr = eth / l3 / l4
        p = hdr / Raw(bytes([i + 1]) * (length - len(hdr)))
        p = p.__class__(bytes(p))           # checksums computed, right
        if name.endswith("-bad-ip"):
            p[IP].chksum ^= 0x0101
        if name.endswith("-bad-l4"):
            (p[TCP] if TCP in p else p[UDP]).chksum ^= 0x0001
        frames.append(p)
sendp(frames, iface=iface, verbose=0)
"""

# One packet of `set verbose 1`: its line, then its ol_flags line.
PKT = re.compile(r"src=[0-9A-Fa-f:]{17} - dst=([0-9A-Fa-f:]{17})(.*?)\n"
                 r"\s*ol_flags: ([^\n]*)")
LENGTH = re.compile(r" - length=(\d+)")
TCI = re.compile(r" - VLAN tci=(0x[0-9a-f]+)")
STAMP = re.compile(r" - timestamp (\d+)")


def packets(text):
    """(length, VLAN tci or None, timestamp or None, ol_flags set) of each
    packet to the port's MAC, in order."""
    out = []
    for dst, line, flags in PKT.findall(text):
        if dst.lower() != VBR_MAC:
            continue
        m = LENGTH.search(line)
        tci = TCI.search(line)
        ts = STAMP.search(line)
        out.append((int(m.group(1)) if m else None,
                    int(tci.group(1), 16) if tci else None,
                    int(ts.group(1)) if ts else None, set(flags.split())))
    return out


def by_length(length, vlan):
    """The class of a received length (a stripped frame is 4 bytes
    shorter than what was sent)."""
    for name, (ln, _, _, vid) in CLASSES.items():
        if ln - (4 if vid is not None and vlan else 0) == length:
            return name
    return None


def burst(t, veth, c, what):
    """Send every class; return the packets testpmd printed."""
    mark = len(t.out)
    t.cmd("start")
    t0 = time.monotonic_ns()
    sh(veth.in_ns([PY, "-c", SEND, veth.peer_if, VBR_MAC] +
                  [f"{k},{ln},{n}" for k, (ln, n, _, _) in CLASSES.items()]))
    want = sum(n for _, n, _, _ in CLASSES.values())
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if len(packets(t.out[mark:])) >= want:
            break
        time.sleep(0.2)
    t1 = time.monotonic_ns()
    t.cmd("stop")
    got = packets(t.out[mark:])
    c.check(len(got) == want, f"{what}: {len(got)} of {want} frames seen")
    return got, t0, t1


def check_on(got, t0, t1, c):
    seen = dict.fromkeys(CLASSES, 0)
    last = 0
    for length, tci, ts, flags in got:
        name = by_length(length, True)
        if not c.check(name is not None, f"a frame of {length} bytes is "
                       "one of the test's"):
            continue
        seen[name] += 1
        ln, _, want, vid = CLASSES[name]
        csum = {f for f in flags if f.startswith(CSUM_PREFIXES)}
        c.check(csum == want, f"{name}: {sorted(want)} are the checksum "
                f"flags of {sorted(flags)}")
        if vid is not None:
            c.check("RTE_MBUF_F_RX_VLAN_STRIPPED" in flags and
                    tci == (3 << 13 | vid) and length == ln - 4,
                    f"{name}: stripped (tci {tci}, length {length})")
        else:
            c.check("RTE_MBUF_F_RX_VLAN_STRIPPED" not in flags,
                    f"{name}: nothing stripped")
        if c.check(ts is not None, f"{name}: a timestamp"):
            c.check(ts >= last, f"{name}: timestamp {ts} after {last}")
            # swverbs' clock is CLOCK_MONOTONIC; a second of slack
            c.check(t0 - 10**9 <= ts <= t1 + 10**9,
                    f"{name}: timestamp {ts} within [{t0}, {t1}] +- 1 s")
            last = ts
    for name, (_, n, _, _) in CLASSES.items():
        c.check(seen[name] == n, f"{name}: {seen[name]} of {n} received")


def check_off(got, c):
    for length, tci, ts, flags in got:
        name = by_length(length, False)
        c.check(name is not None, f"off: {length} bytes, as sent")
        csum = {f for f in flags if f.startswith(CSUM_PREFIXES)}
        c.check(csum == {IP_UNKNOWN, L4_UNKNOWN} and ts is None and
                tci is None and "RTE_MBUF_F_RX_VLAN_STRIPPED" not in flags,
                f"off: {name} has no offload result ({sorted(flags)})")


def wait_link(t, c):
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if "Link status: up" in t.cmd("show port info 0"):
            return True
        time.sleep(0.2)
    return c.check(False, "link up after port start")


def run(pmd, script, kind):
    c = tp.Checker()
    prefix = f"vbo{os.getpid()}"
    t = None
    with Veth(script, prefix) as veth:
        try:
            eal, fprefix = tp.eal_args("offl", pmd)
            eal += ["--vdev",
                    f"net_vbr0,wire={kind}:{veth.root_if},mac={VBR_MAC}"]
            t = tp.TestPmd(eal, ["--forward-mode=rxonly",
                                 "--total-num-mbufs=8192"], fprefix)
            t.wait_prompt()
            info = t.cmd("show port 0 rx_offload capabilities")
            for cap in ("IPV4_CKSUM", "UDP_CKSUM", "TCP_CKSUM",
                        "VLAN_STRIP", "TIMESTAMP"):
                c.check(cap in info, f"Rx capabilities list {cap}")
            c.check("RSS_HASH" not in info, "no RSS_HASH: verbs has none")
            info = t.cmd("show port 0 tx_offload capabilities")
            for cap in ("IPV4_CKSUM", "UDP_CKSUM", "TCP_CKSUM",
                        "MBUF_FAST_FREE"):
                c.check(cap in info, f"Tx capabilities list {cap}")
            c.check("VLAN_INSERT" not in info, "no VLAN insert")
            t.cmd("set verbose 1")
            t.cmd("set promisc 0 off")
            t.cmd("port stop 0")
            for ol in ("ipv4_cksum", "udp_cksum", "tcp_cksum",
                       "vlan_strip", "timestamp"):
                out = t.cmd(f"port config 0 rx_offload {ol} on")
                c.check("error" not in out.lower(), f"{ol} on accepted")
            t.cmd("port start 0")
            wait_link(t, c)
            got, t0, t1 = burst(t, veth, c, "offloads on")
            check_on(got, t0, t1, c)
            t.cmd("port stop 0")
            for ol in ("ipv4_cksum", "udp_cksum", "tcp_cksum",
                       "vlan_strip", "timestamp"):
                t.cmd(f"port config 0 rx_offload {ol} off")
            t.cmd("port start 0")
            wait_link(t, c)
            got, _, _ = burst(t, veth, c, "offloads off")
            check_off(got, c)
            rc = t.quit()
            c.check(rc == 0, f"testpmd quit cleanly (rc {rc})")
        except (RuntimeError, subprocess.CalledProcessError) as e:
            c.check(False, str(e))
        finally:
            if t is not None:
                t.kill()
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(tp.veth_main(run, __doc__, ("dpdk-testpmd", "ip"), py=PY))
