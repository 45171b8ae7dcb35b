#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The port's receive filters through stock testpmd, with real frames.

usage: test_filters_testpmd.py PATH/librte_net_vbr.so PATH/devtools/netns-veth.sh
                               [af_packet|af_xdp]

A vbr port on af_packet:<veth> or af_xdp:<veth> (default profile, mlx5) in rxonly mode; from
the peer in a network namespace scapy sends a known count of frames of each
class: to the port's MAC, to another unicast MAC, to a multicast MAC, to
broadcast, and to the port's MAC tagged with VID 100, VID 200 and VID 0
(priority-tagged). Each class has its own frame length and all carry the
test's own ethertype, so testpmd's `set verbose 1` lines tell which frames of which class came in. After each
step (defaults; allmulti on; promisc on; mac_addr add; mac_addr remove;
VLAN filter with VID 100; promisc on with the filter; rx_vlan rm 100) the
count of each class received must be exact, and so must the rx_no_match
and rx_vlan_filtered deltas. Frames the peer's kernel sends on its own
(none expected: IPv6 is off on both ends) are told apart by the peer's
tx_packets counter and are not charged to any filter.
Exit 77 when not root or a tool is missing, and for af_xdp when the kernel
has no AF_XDP.
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
VBR_MAC = "02:76:62:72:00:01"
OTHER_MAC = "02:76:62:72:00:55"
MCAST_MAC = "01:76:62:72:00:42"  # not IP multicast: no list of the port
BCAST_MAC = "ff:ff:ff:ff:ff:ff"
ETHERTYPE = 0x88B5  # IEEE local experimental: only this test's frames

# class: (destination MAC, VID or None, frame length, frames sent)
CLASSES = {
    "own": (VBR_MAC, None, 80, 5),
    "other": (OTHER_MAC, None, 84, 6),
    "mcast": (MCAST_MAC, None, 88, 7),
    "bcast": (BCAST_MAC, None, 92, 8),
    "vid100": (VBR_MAC, 100, 96, 9),
    "vid200": (VBR_MAC, 200, 100, 10),
    "vid0": (VBR_MAC, 0, 104, 4),  # priority-tagged: passes the filter
}

SEND = r"""
import sys
from scapy.all import Ether, Dot1Q, Raw, sendp, get_if_hwaddr
iface, etype = sys.argv[1], int(sys.argv[2], 0)
src = get_if_hwaddr(iface)
frames = []
for arg in sys.argv[3:]:
    dst, vid, length, n = arg.split(",")
    length, n = int(length), int(n)
    if vid == "-":
        hdr = Ether(src=src, dst=dst, type=etype)
    else:
        hdr = Ether(src=src, dst=dst) / Dot1Q(vlan=int(vid), type=etype)
    pad = length - len(hdr)
    frames += [hdr / Raw(bytes([i]) * pad) for i in range(n)]
sendp(frames, iface=iface, verbose=0)
"""

VERBOSE = re.compile(r"dst=([0-9A-Fa-f:]{17}) .*?type=0x([0-9a-f]{4}) "
                     r"- length=(\d+)")


def sysfs_tx(veth):
    """The peer's tx_packets: every frame it put on the wire."""
    out = subprocess.run(
        veth.in_ns(["cat", f"/sys/class/net/{veth.peer_if}/statistics/"
                    "tx_packets"]), check=True, capture_output=True,
        text=True).stdout
    return int(out)


def xstats(t):
    out = t.cmd("show port xstats 0")
    return {k: int(v) for k, v in re.findall(r"(\w+):\s+(\d+)", out)}


def classify(text):
    """Count the verbose lines of each class; others: frames not ours."""
    got = dict.fromkeys(CLASSES, 0)
    others = 0
    for dst, etype, length in VERBOSE.findall(text):
        dst, length = dst.lower(), int(length)
        name = next((k for k, (d, vid, ln, _) in CLASSES.items()
                     if d == dst and ln == length and
                     int(etype, 16) == (ETHERTYPE if vid is None
                                        else 0x8100)), None)
        if name is None:
            others += 1
        else:
            got[name] += 1
    return got, others


class Run:
    def __init__(self, t, veth, c):
        self.t, self.veth, self.c = t, veth, c

    def wait_link(self):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if "Link status: up" in self.t.cmd("show port info 0"):
                return True
            time.sleep(0.2)
        return self.c.check(False, "link up again after port start")

    def step(self, what, accepted, vlan_dropped=()):
        """Send every class; check that exactly `accepted` came in, and
        that the rest was counted as rx_vlan_filtered (classes in
        vlan_dropped) or rx_no_match (the others)."""
        t, c = self.t, self.c
        print(f"== {what}", flush=True)
        x0 = xstats(t)
        tx0 = sysfs_tx(self.veth)
        mark = len(t.out)
        t.cmd("start")
        sh(self.veth.in_ns(
            [PY, "-c", SEND, self.veth.peer_if, hex(ETHERTYPE)] +
            [f"{d},{'-' if v is None else v},{ln},{n}"
             for d, v, ln, n in CLASSES.values()]))
        sent = sysfs_tx(self.veth) - tx0
        # every frame sent is either polled or counted as dropped
        deadline = time.monotonic() + 15
        while True:
            x1 = xstats(t)
            seen = sum(x1.get(k, 0) - x0.get(k, 0) for k in
                       ("rx_good_packets", "rx_no_match", "rx_vlan_filtered",
                        "rx_out_of_buffer", "rx_error_completions"))
            if seen >= sent or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        st = tp.fwd_stats(t.cmd("stop")).get(0, {})
        got, others = classify(t.out[mark:])
        ours = sum(n for _, _, _, n in CLASSES.values())
        strays = sent - ours
        want = {k: (CLASSES[k][3] if k in accepted else 0) for k in CLASSES}
        c.check(got == want, f"{what}: received per class {got} == {want}")
        rx = st.get("RX-packets")
        c.check(rx == sum(got.values()) + others,
                f"{what}: RX-packets {rx} == the {sum(got.values())} frames "
                f"of the test + {others} others")
        c.check(strays >= 0 and others <= strays,
                f"{what}: {others} frames received not of the test, of "
                f"{strays} the peer sent besides the test's {ours}")
        filt = x1.get("rx_vlan_filtered", 0) - x0.get("rx_vlan_filtered", 0)
        want_filt = sum(CLASSES[k][3] for k in vlan_dropped)
        c.check(filt == want_filt,
                f"{what}: rx_vlan_filtered +{filt} == +{want_filt}")
        nomatch = x1.get("rx_no_match", 0) - x0.get("rx_no_match", 0)
        want_nm = sum(CLASSES[k][3] for k in CLASSES
                      if k not in accepted and k not in vlan_dropped)
        want_nm += strays - others
        c.check(nomatch == want_nm,
                f"{what}: rx_no_match +{nomatch} == +{want_nm}")
        lost = x1.get("rx_out_of_buffer", 0) - x0.get("rx_out_of_buffer", 0)
        c.check(lost == 0, f"{what}: rx_out_of_buffer +{lost} == 0")


def run(pmd, script, kind):
    c = tp.Checker()
    prefix = f"vbf{os.getpid()}"
    t = None
    with Veth(script, prefix) as veth:
        try:
            eal, fprefix = tp.eal_args("filt", pmd)
            eal += ["--vdev",
                    f"net_vbr0,wire={kind}:{veth.root_if},mac={VBR_MAC}"]
            t = tp.TestPmd(eal, ["--forward-mode=rxonly",
                                 "--total-num-mbufs=8192"], fprefix)
            t.wait_prompt()
            r = Run(t, veth, c)
            info = t.cmd("show port info 0")
            c.check("Link status: up" in info, "link up on the veth")
            t.cmd("set verbose 1")
            everything = set(CLASSES)
            own = {"own", "bcast", "vid100", "vid200", "vid0"}

            t.cmd("set promisc 0 off")
            t.cmd("set allmulti 0 off")
            r.step("defaults", own)
            t.cmd("set allmulti 0 on")
            r.step("allmulti on", own | {"mcast"})
            t.cmd("set allmulti 0 off")
            t.cmd("set promisc 0 on")
            r.step("promisc on", everything)
            t.cmd("set promisc 0 off")
            r.step("promisc off again", own)
            out = t.cmd(f"mac_addr add 0 {OTHER_MAC}")
            c.check("error" not in out.lower() and "fail" not in out.lower(),
                    f"mac_addr add 0 {OTHER_MAC} accepted")
            r.step("mac_addr add", own | {"other"})
            out = t.cmd(f"mac_addr remove 0 {OTHER_MAC}")
            c.check("error" not in out.lower() and "fail" not in out.lower(),
                    f"mac_addr remove 0 {OTHER_MAC} accepted")
            r.step("mac_addr remove", own)

            t.cmd("port stop 0")
            t.cmd("port config 0 rx_offload vlan_filter on")
            t.cmd("port start 0")
            r.wait_link()
            out = t.cmd("rx_vlan add 100 0")
            c.check("error" not in out.lower() and "fail" not in out.lower(),
                    "rx_vlan add 100 0 accepted")
            r.step("vlan filter, VID 100",
                   {"own", "bcast", "vid100", "vid0"},
                   vlan_dropped={"vid200"})
            t.cmd("set promisc 0 on")
            r.step("promisc on bypasses the vlan filter", everything)
            t.cmd("set promisc 0 off")
            t.cmd("rx_vlan rm 100 0")
            r.step("vlan filter, no VID", {"own", "bcast", "vid0"},
                   vlan_dropped={"vid100", "vid200"})
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
