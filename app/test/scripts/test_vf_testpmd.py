#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A port on a VF: its addresses and modes reach the VF's netdev.

usage: test_vf_testpmd.py PATH/librte_net_vbr.so PATH/devtools/netns-veth.sh
                          [af_packet|af_xdp|ibverbs]

A ConnectX VF receives only what its netdev registered with the eswitch.
swverbs' mlx5-vf profile models that on a veth, the VF's netdev: a port
with profile=mlx5-vf on af_packet:<veth> (or, with ibverbs, the system
libibverbs driving the same device through devtools/swverbs-run.sh
swverbs0=af_packet:<veth>+profile=mlx5-vf and a dev=swverbs0 port) gets
only the frames whose destination the veth lists (af_xdp: the same on
an af_xdp:<veth> wire). Stock testpmd in rxonly
mode; scapy in the peer's namespace sends frames of each class (the
port's MAC, another unicast MAC, a multicast group, another group,
broadcast). A frame to an added MAC arrives only after `mac_addr add`, a
group only after `mcast_addr add`, everything in promisc, every group in
allmulti; the others are counted in the rx_vport_dropped xstat. The veth's
address list and flags (`bridge fdb show`, `ip link`) follow, and `port
close` puts them back as they were: the addresses the port added gone, one
listed before by someone else kept, allmulti (on before testpmd) on again. Over af_packet, then, a testpmd
without CAP_NET_ADMIN: each of those calls fails with EPERM and a log line
that names the capability, and the netdev is left as it was.
Exit 77 when not root or a tool is missing.
"""

import glob
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testpmd_driver as tp  # noqa: E402
from test_e2e_veth import Veth, sh  # noqa: E402

PY = "/usr/bin/python3"
OTHER = "02:76:62:76:00:55"
OTHER2 = "02:76:62:76:00:56"
THEIRS = "02:76:62:76:00:77"  # listed before the port: left alone
MC = "01:00:5e:76:62:01"
MC2 = "01:00:5e:76:62:02"
BCAST = "ff:ff:ff:ff:ff:ff"
ETHERTYPE = 0x88B5

SEND = r"""
import sys
from scapy.all import Ether, Raw, sendp, get_if_hwaddr
iface, etype = sys.argv[1], int(sys.argv[2], 0)
src = get_if_hwaddr(iface)
frames = []
for arg in sys.argv[3:]:
    dst, length, n = arg.split(",")
    hdr = Ether(src=src, dst=dst, type=etype)
    frames += [hdr / Raw(bytes([i]) * (int(length) - len(hdr)))
               for i in range(int(n))]
sendp(frames, iface=iface, verbose=0)
"""

VERBOSE = re.compile(r"dst=([0-9A-Fa-f:]{17}) .*?type=0x([0-9a-f]{4}) "
                     r"- length=(\d+)")


def xstats(t):
    out = t.cmd("show port xstats 0")
    return {k: int(v) for k, v in re.findall(r"(\w+):\s+(\d+)", out)}


def fdb(veth):
    out = subprocess.run(["bridge", "fdb", "show", "dev", veth.root_if],
                         capture_output=True, text=True).stdout.lower()
    return {line.split()[0] for line in out.splitlines() if "self" in line}


def flags(veth):
    out = subprocess.run(["ip", "link", "show", veth.root_if],
                         capture_output=True, text=True).stdout
    m = re.search(r"<([^>]*)>", out)
    return set(m.group(1).split(",")) if m else set()


class Run:
    def __init__(self, t, veth, c, own, vport_cnt):
        self.t, self.veth, self.c = t, veth, c
        # the device shows rx_vport_dropped (a NIC's eswitch drops unseen)
        self.vport_cnt = vport_cnt
        # class: (destination, frame length, frames sent)
        self.classes = {"own": (own, 80, 3), "other": (OTHER, 84, 4),
                        "other2": (OTHER2, 88, 5), "mc": (MC, 92, 6),
                        "mc2": (MC2, 96, 7), "bcast": (BCAST, 100, 2)}

    def ok(self, cmd):
        out = self.t.cmd(cmd)
        bad = "error" in out.lower() or "fail" in out.lower()
        self.c.check(not bad, f"{cmd}: accepted ({out.strip()[-200:]})")
        time.sleep(0.1)  # the device reads the netdev every 10 ms

    def step(self, what, accepted):
        t, c = self.t, self.c
        print(f"== {what}", flush=True)
        x0 = xstats(t)
        mark = len(t.out)
        t.cmd("start")
        sh(self.veth.in_ns(
            [PY, "-c", SEND, self.veth.peer_if, hex(ETHERTYPE)] +
            [f"{d},{ln},{n}" for d, ln, n in self.classes.values()]))
        want_rx = sum(n for k, (_, _, n) in self.classes.items()
                      if k in accepted)
        want_vp = sum(n for k, (_, _, n) in self.classes.items()
                      if k not in accepted)
        deadline = time.monotonic() + 10
        while True:
            x1 = xstats(t)
            rx = x1.get("rx_good_packets", 0) - x0.get("rx_good_packets", 0)
            vp = (x1.get("rx_vport_dropped", 0) -
                  x0.get("rx_vport_dropped", 0))
            if not self.vport_cnt:
                vp = want_vp
            if (rx >= want_rx and vp >= want_vp) or \
                    time.monotonic() > deadline:
                break
            time.sleep(0.2)
        t.cmd("stop")
        got = dict.fromkeys(self.classes, 0)
        for dst, etype, length in VERBOSE.findall(t.out[mark:]):
            for k, (d, ln, _) in self.classes.items():
                if d == dst.lower() and ln == int(length) and \
                        int(etype, 16) == ETHERTYPE:
                    got[k] += 1
        want = {k: (n if k in accepted else 0)
                for k, (_, _, n) in self.classes.items()}
        c.check(got == want, f"{what}: received per class {got} == {want}")
        if self.vport_cnt:
            c.check(vp == want_vp, f"{what}: rx_vport_dropped +{vp} == "
                    f"+{want_vp}")


def no_net_admin(pmd, kind, veth, c, tmp, fdb0, flags0):
    """Without CAP_NET_ADMIN the netdev refuses: each call fails with
    EPERM and a log line that says what is missing; nothing changes."""
    print("== without CAP_NET_ADMIN", flush=True)
    wrap = os.path.join(tmp, "testpmd-nocap")
    with open(wrap, "w") as f:
        f.write("#!/bin/sh\nexec capsh --drop=cap_net_admin -- -c "
                f"'exec {tp.find_testpmd()} \"$@\"' testpmd \"$@\"\n")
    os.chmod(wrap, 0o755)
    find = tp.find_testpmd
    tp.find_testpmd = lambda: wrap
    try:
        eal, fprefix = tp.eal_args("vfcap", pmd)
        eal += ["--vdev", f"net_vbr0,wire={kind}:{veth.root_if},"
                "profile=mlx5-vf"]
        t = tp.TestPmd(eal, ["--forward-mode=rxonly",
                             "--total-num-mbufs=8192"], fprefix)
    finally:
        tp.find_testpmd = find
    t.wait_prompt()
    for cmd in (f"mac_addr add 0 {OTHER}", f"mcast_addr add 0 {MC}",
                "set promisc 0 on", "set allmulti 0 on"):
        mark = len(t.out)
        out = t.cmd(cmd)
        time.sleep(0.2)
        out = t.out[mark:]
        c.check("not permitted" in out and "CAP_NET_ADMIN" in out,
                f"{cmd} without CAP_NET_ADMIN: EPERM and a log line that "
                f"names the capability ({out.strip()[-300:]})")
    c.check(fdb(veth) == fdb0 and flags(veth) == flags0,
            f"the netdev unchanged: {fdb(veth)}, {flags(veth)}")
    rc = t.quit()
    c.check(rc == 0, f"testpmd quit cleanly (rc {rc})")
    return None


def run(pmd, script, kind):
    c = tp.Checker()
    prefix = f"vbv{os.getpid()}"
    t = None
    with Veth(script, prefix) as veth, \
            tempfile.TemporaryDirectory() as tmp:
        try:
            eal, fprefix = tp.eal_args("vf", pmd)
            if kind == "ibverbs":
                # testpmd under swverbs-run.sh: libibverbs sees swverbs0;
                # the build is the PMD's
                root = os.path.dirname(os.path.dirname(script))
                os.environ["VBR_BUILD_DIR"] = os.path.relpath(
                    os.path.dirname(os.path.dirname(pmd)), root)
                wrap = os.path.join(tmp, "testpmd")
                run_sh = os.path.join(os.path.dirname(script),
                                      "swverbs-run.sh")
                with open(wrap, "w") as f:
                    f.write(f"#!/bin/sh\nexec {run_sh} swverbs0=af_packet:"
                            f"{veth.root_if}+profile=mlx5-vf -- "
                            f"{tp.find_testpmd()} \"$@\"\n")
                os.chmod(wrap, 0o755)
                tp.find_testpmd = lambda: wrap
                eal += ["--vdev", "net_vbr0,dev=swverbs0"]
            else:
                eal += ["--vdev", f"net_vbr0,wire={kind}:{veth.root_if},"
                        "profile=mlx5-vf"]
            own = open(f"/sys/class/net/{veth.root_if}/address").read()
            own = own.strip().lower()
            # the netdev's state before the port: one address of someone
            # else's, allmulti on
            sh(["bridge", "fdb", "add", THEIRS, "dev", veth.root_if, "self",
                "permanent"])
            sh(["ip", "link", "set", veth.root_if, "allmulticast", "on"])
            fdb0, flags0 = fdb(veth), flags(veth)
            t = tp.TestPmd(eal, ["--forward-mode=rxonly",
                                 "--total-num-mbufs=8192"], fprefix)
            t.wait_prompt()
            r = Run(t, veth, c, own, kind != "ibverbs")
            info = t.cmd("show port info 0")
            c.check("Link status: up" in info, "link up on the veth")
            t.cmd("set verbose 1")
            r.ok("set promisc 0 off")
            r.ok("set allmulti 0 off")
            c.check("ALLMULTI" not in flags(veth) and
                    "PROMISC" not in flags(veth),
                    f"allmulti, promisc off on the netdev: {flags(veth)}")
            r.step("defaults", {"own", "bcast"})
            r.ok(f"mac_addr add 0 {OTHER}")
            c.check(OTHER in fdb(veth), f"{OTHER} on the netdev's list")
            r.step("mac_addr add", {"own", "bcast", "other"})
            r.ok(f"mcast_addr add 0 {MC}")
            c.check(MC in fdb(veth), f"{MC} on the netdev's list")
            r.step("mcast_addr add", {"own", "bcast", "other", "mc"})
            r.ok(f"mac_addr remove 0 {OTHER}")
            r.ok(f"mcast_addr remove 0 {MC}")
            c.check(OTHER not in fdb(veth) and MC not in fdb(veth),
                    "removed from the netdev's list")
            r.step("mac_addr, mcast_addr remove", {"own", "bcast"})
            r.ok("set promisc 0 on")
            c.check("PROMISC" in flags(veth), "promisc on on the netdev")
            r.step("promisc", set(r.classes))
            r.ok("set promisc 0 off")
            r.ok("set allmulti 0 on")
            c.check("ALLMULTI" in flags(veth), "allmulti on on the netdev")
            r.step("allmulti", {"own", "bcast", "mc", "mc2"})
            r.ok("set allmulti 0 off")
            # left programmed for the close to undo
            r.ok(f"mac_addr add 0 {OTHER}")
            r.ok(f"mcast_addr add 0 {MC}")
            r.ok("set promisc 0 on")
            r.ok("port stop 0")
            r.ok("port close 0")
            c.check(fdb(veth) == fdb0,
                    f"after port close the list is as before: {fdb(veth)} "
                    f"== {fdb0}")
            c.check(flags(veth) == flags0,
                    f"after port close the flags are as before: "
                    f"{flags(veth)} == {flags0}")
            rc = t.quit()
            c.check(rc == 0, f"testpmd quit cleanly (rc {rc})")
            t = None
            if kind != "ibverbs":
                t = no_net_admin(pmd, kind, veth, c, tmp, fdb0, flags0)
        except (RuntimeError, subprocess.CalledProcessError) as e:
            c.check(False, str(e))
        finally:
            if t is not None:
                t.kill()
    return 1 if c.failed else 0


def ibverbs_skip(pmd):
    """Why backend (a) cannot run here: the provider or the ibverbs glue
    not built; or None."""
    build = os.path.dirname(os.path.dirname(os.path.abspath(pmd)))
    if not glob.glob(os.path.join(build, "lib", "swverbs",
                                  "libswverbs-rdmav*.so")):
        return "the swverbs provider is not built (meson says why)"
    if not glob.glob(os.path.join(build, "drivers", "vbr-glue",
                                  "librte_net_vbr_glue.so.*")):
        return "the ibverbs glue is not built (libibverbs or libmnl missing)"
    return None


if __name__ == "__main__":
    kind = "af_packet"
    if len(sys.argv) == 4 and sys.argv[3] == "ibverbs":
        kind = "ibverbs"
        del sys.argv[3]
        if ibverbs_skip(sys.argv[1]) is not None:
            print("SKIP: " + ibverbs_skip(sys.argv[1]))
            sys.exit(tp.SKIP)
    sys.exit(tp.veth_main(lambda p, s, k: run(p, s, kind), __doc__,
                          ("dpdk-testpmd", "ip", "bridge", "capsh"),
                          py=PY))
