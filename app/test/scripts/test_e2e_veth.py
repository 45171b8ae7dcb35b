#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""End to end over a veth pair: a vbr port on af_packet:<veth> (or
af_xdp:<veth>) in the root namespace, scapy and tcpdump on the peer inside a
network namespace.

usage: test_e2e_veth.py PATH/librte_net_vbr.so PATH/devtools/netns-veth.sh
                        [af_packet|af_xdp]

1. rxonly: scapy sends N frames with distinct payload lengths to the port's
   MAC; testpmd must count exactly N and report each length.
2. io + tx_first with `set txpkts 64`: the port sends exactly one burst;
   tcpdump in the namespace must see that many 64-byte frames whose
   Ethernet/IPv4/UDP headers are byte-exact what testpmd builds.
3. txonly for a second: frames keep arriving at the peer.
4. io echo: scapy sends frames of 60 bytes to the MTU (1514), and 802.1Q
   tagged ones up to 1518, to the port; io forwarding sends each back out
   of the same port; tcpdump on the peer must see every one byte-exact as
   scapy sent it, and the port's stats must count exactly those frames.
Exit 77 when not root or a tool is missing, and for af_xdp when the kernel
has no AF_XDP.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testpmd_driver as tp  # noqa: E402

N_FRAMES = 40
BURST = 32
VBR_MAC = "02:76:62:72:00:01"
PEER_ETH = "02:76:62:72:00:99"  # --eth-peer: the dst MAC testpmd uses
PY = "/usr/bin/python3"

SEND = r"""
import sys
from scapy.all import Ether, IP, UDP, Raw, sendp, get_if_hwaddr
iface, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
src = get_if_hwaddr(iface)
frames = [Ether(src=src, dst=dst) / IP(src="10.99.0.2", dst="10.99.0.1") /
          UDP(sport=4000 + i, dport=5000) / Raw(bytes([i]) * (20 + i))
          for i in range(n)]
sendp(frames, iface=iface, verbose=0)
"""


ECHO_SRC = "02:76:62:72:00:77"  # the src MAC of the frames step 4 echoes
ECHO_SIZES = [60, 61, 64, 128, 512, 1000, 1499, 1514]
ECHO_TAGGED = [64, 200, 1518]  # with an 802.1Q tag, VID 100 + i

ECHO = r"""
import sys
from scapy.all import Ether, Dot1Q, Raw, sendp, wrpcap
iface, dst, src, out = sys.argv[1:5]
sizes = [int(x) for x in sys.argv[5].split(",")]
tagged = [int(x) for x in sys.argv[6].split(",")]
frames = []
for i, n in enumerate(sizes):
    head = Ether(src=src, dst=dst, type=0x88b5)
    frames.append(head / Raw(bytes((i * 7 + k) & 0xff for k in range(n - 14))))
for i, n in enumerate(tagged):
    head = Ether(src=src, dst=dst) / Dot1Q(vlan=100 + i, type=0x88b5)
    frames.append(head / Raw(bytes((i * 5 + k) & 0xff for k in range(n - 18))))
wrpcap(out, frames)
sendp(frames, iface=iface, verbose=0)
"""


def sh(argv, check=True, **kw):
    print("+ " + " ".join(argv), flush=True)
    return subprocess.run(argv, check=check, **kw)


class Veth:
    """netns-veth.sh up/down, torn down on every exit path."""

    def __init__(self, script, prefix):
        self.script, self.prefix = script, prefix
        self.root_if, self.peer_if = prefix + "0", prefix + "1"
        self.ns = prefix + "ns"
        self.up = False

    def __enter__(self):
        self.up = True
        # also disables IPv6: no solicitations to spoil exact counts
        sh(["bash", self.script, "up", self.prefix])
        return self

    def __exit__(self, *exc):
        self.down()

    def down(self):
        if self.up:
            self.up = False
            sh(["bash", self.script, "down", self.prefix], check=False)

    def in_ns(self, argv):
        return ["ip", "netns", "exec", self.ns] + argv


def expected_header(scapy, src_mac):
    """Ethernet/IPv4/UDP header of testpmd's txonly frame of 64 bytes."""
    Ether, IP, UDP = scapy.Ether, scapy.IP, scapy.UDP
    # testpmd 22.11 txonly: 198.18.0.1 -> 198.18.0.2, UDP 9 -> 9, TTL 64
    pkt = (Ether(src=src_mac, dst=PEER_ETH) /
           IP(src="198.18.0.1", dst="198.18.0.2", ttl=64, id=0) /
           UDP(sport=9, dport=9, chksum=0) / (b"\0" * (64 - 42)))
    return bytes(pkt)[:42]


class Capture:
    """tcpdump on the peer, inbound frames from the vbr port only."""

    def __init__(self, veth, path, count=None, src=VBR_MAC):
        self.path = path
        limit = ["-c", str(count)] if count else []
        self.proc = subprocess.Popen(
            veth.in_ns(["tcpdump", "-i", veth.peer_if, "-Q", "in", "-U",
                        "-nn"] + limit + ["-w", path, "ether", "src", src]),
            stderr=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()  # "listening on ..."
        print(line.rstrip(), flush=True)
        if "listening" not in line:
            raise RuntimeError("tcpdump did not start: " + line)

    def stop(self):
        time.sleep(1)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        print(self.proc.stderr.read().strip(), flush=True)
        self.proc.wait(10)

    def frames(self):
        return read_pcap(self.path)


def read_pcap(path):
    from scapy.utils import RawPcapReader
    return [data for data, _ in RawPcapReader(path)]


def run(pmd, script, kind):
    from scapy import all as scapy  # noqa: N813
    c = tp.Checker()
    prefix = f"vbe{os.getpid()}"
    tmp = tempfile.mkdtemp(prefix="vbr-e2e-")
    t = None
    with Veth(script, prefix) as veth:
        try:
            eal, fprefix = tp.eal_args("e2e", pmd)
            eal += ["--vdev",
                    f"net_vbr0,wire={kind}:{veth.root_if},mac={VBR_MAC}"]
            t = tp.TestPmd(eal, ["--forward-mode=rxonly",
                                 "--total-num-mbufs=8192",
                                 f"--eth-peer=0,{PEER_ETH}",
                                 f"--burst={BURST}"], fprefix)
            t.wait_prompt()
            info = t.cmd("show port info 0")
            m = re.search(r"MAC address: (\S+)", info)
            mac = m.group(1).lower() if m else ""
            c.check(mac == VBR_MAC, f"port MAC {mac} == mac= devarg {VBR_MAC}")
            c.check("Link status: up" in info, "link up on the veth")

            # 1. peer -> vbr, exact count and lengths
            t.cmd("set promisc 0 off")
            t.cmd("set allmulti 0 off")
            t.cmd("set verbose 1")
            mark = len(t.out)  # verbose lines come in between commands
            t.cmd("start")
            sh(veth.in_ns([PY, "-c", SEND, veth.peer_if, VBR_MAC,
                           str(N_FRAMES)]))
            tp.wait_rx(t, 0, N_FRAMES)
            out = t.cmd("stop")
            st = tp.fwd_stats(out).get(0, {})
            c.check(st.get("RX-packets") == N_FRAMES,
                    f"rxonly: RX-packets {st.get('RX-packets')} == {N_FRAMES}")
            lens = sorted(int(x) for x in
                          re.findall(r"length=(\d+)", t.out[mark:]))
            want = sorted(14 + 20 + 8 + 20 + i for i in range(N_FRAMES))
            c.check(lens == want, "rxonly: each frame received with its length")
            t.cmd("set verbose 0")

            # 2. vbr -> peer: one burst, exact count and headers
            cap = Capture(veth, os.path.join(tmp, "io.pcap"))
            t.cmd("set fwd io")
            t.cmd("set txpkts 64")
            t.cmd("start tx_first")
            time.sleep(1)
            st = tp.fwd_stats(t.cmd("stop")).get(0, {})
            cap.stop()
            frames = cap.frames()
            c.check(st.get("TX-packets") == BURST,
                    f"io tx_first: TX-packets {st.get('TX-packets')} == {BURST}")
            c.check(len(frames) == BURST,
                    f"peer captured {len(frames)} frames == {BURST}")
            hdr = expected_header(scapy, VBR_MAC)
            good = [f for f in frames if len(f) == 64 and f[:42] == hdr]
            c.check(frames and len(good) == len(frames),
                    f"{len(good)}/{len(frames)} frames are 64 bytes with "
                    "testpmd's exact Ethernet/IPv4/UDP header")
            if frames and frames[0][:42] != hdr:
                print("  got     " + frames[0][:42].hex())
                print("  expected " + hdr.hex())

            # 3. txonly at full rate for a second
            cap = Capture(veth, os.path.join(tmp, "txonly.pcap"), 2000)
            t.cmd("set fwd txonly")
            t.cmd("start")
            time.sleep(1)
            st = tp.fwd_stats(t.cmd("stop")).get(0, {})
            cap.stop()
            frames = cap.frames()
            tx = st.get("TX-packets", 0)
            c.check(tx > BURST, f"txonly: TX-packets {tx} > {BURST}")
            good = [f for f in frames if len(f) == 64 and f[:42] == hdr]
            c.check(len(good) > 0 and len(good) == len(frames),
                    f"txonly: peer's first {len(frames)} frames (of {tx} "
                    f"sent) are all exact: {len(good)}")
            # 4. peer -> vbr -> peer, byte-exact, sizes 60..MTU, tagged
            sent_path = os.path.join(tmp, "sent.pcap")
            cap = Capture(veth, os.path.join(tmp, "echo.pcap"), src=ECHO_SRC)
            t.cmd("clear port stats 0")
            t.cmd("set fwd io")
            t.cmd("start")
            sh(veth.in_ns([PY, "-c", ECHO, veth.peer_if, VBR_MAC, ECHO_SRC,
                           sent_path, ",".join(map(str, ECHO_SIZES)),
                           ",".join(map(str, ECHO_TAGGED))]))
            n = len(ECHO_SIZES) + len(ECHO_TAGGED)
            tp.wait_rx(t, 0, n)
            time.sleep(0.5)
            st = tp.fwd_stats(t.cmd("stop")).get(0, {})
            cap.stop()
            sent, got = read_pcap(sent_path), cap.frames()
            c.check(st.get("RX-packets") == n and st.get("TX-packets") == n,
                    f"echo: RX-packets {st.get('RX-packets')}, TX-packets "
                    f"{st.get('TX-packets')} == {n}")
            c.check(sorted(got) == sorted(sent),
                    f"echo: the peer got back {len(got)} frames, "
                    f"byte-exact as the {len(sent)} it sent "
                    f"({sorted(map(len, got))})")
            rc = t.quit()
            c.check(rc == 0, f"testpmd quit cleanly (rc {rc})")
        except RuntimeError as e:
            c.check(False, str(e))
        finally:
            if t is not None:
                t.kill()
            shutil.rmtree(tmp, ignore_errors=True)
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(tp.veth_main(run, __doc__, ("dpdk-testpmd", "tcpdump", "ip"),
                          scapy_here=True, py=PY))
