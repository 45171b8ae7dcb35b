#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The kernel's ARP through a vbr port on a kernel wire, no static
neighbour (issue 10: short frames padded like a NIC).

usage: test_arp_afp.py PATH/librte_net_vbr.so PATH/devtools/netns-veth.sh
                       [af_packet|af_xdp]

A vbr port on af_packet:<veth> (or af_xdp:<veth>) in the root namespace,
testpmd in icmpecho forwarding mode, which answers ARP requests and ICMP
echo requests for any IPv4 address. The peer of the veth, in a network
namespace, has an address and no neighbour entry for the port's: an ICMP
echo request from its stack (a raw socket, as ping does) must resolve the port's MAC by ARP (the kernel's requests are
42-byte frames, which the wire pads to 60 as the sender's NIC would) and
get its echo replies. The port counts the padded frames as good ones: no
Rx error, no runt.
Exit 77 when not root or a tool is missing, and for af_xdp when the kernel
has no AF_XDP.
"""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testpmd_driver as tp  # noqa: E402
from test_e2e_veth import Veth, sh  # noqa: E402
from test_tx_bad_frames import xstat  # noqa: E402

VBR_MAC = "02:76:62:72:00:41"
PEER_IP = "10.77.0.1"
PORT_IP = "10.77.0.2"  # anything in the subnet: icmpecho answers all
PINGS = 3
PY = "/usr/bin/python3"

# ICMP echo from the namespace's stack (a raw socket: the kernel resolves
# the address by ARP first); prints how many replies came back.
PING = r"""
import socket, struct, sys, time
dst, n = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.settimeout(0.5)

def csum(b):
    b += b"\0" * (len(b) & 1)
    v = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while v >> 16:
        v = (v & 0xffff) + (v >> 16)
    return ~v & 0xffff

got = 0
for seq in range(1, n + 1):
    data = b"vbr-arp-%d" % seq
    h = struct.pack("!BBHHH", 8, 0, 0, 0x7662, seq)
    s.sendto(struct.pack("!BBHHH", 8, 0, csum(h + data), 0x7662, seq) +
             data, (dst, 0))
    end = time.monotonic() + 3
    while time.monotonic() < end:
        try:
            r = s.recv(2048)
        except socket.timeout:
            continue
        ihl = (r[0] & 15) * 4
        t, _, _, ident, rseq = struct.unpack("!BBHHH", r[ihl:ihl + 8])
        if t == 0 and ident == 0x7662 and rseq == seq and \
                r[ihl + 8:] == data:
            got += 1
            break
print("%d received" % got)
"""


def run(pmd, script, kind):
    c = tp.Checker()
    t = None
    # vbe<pid>: devtools/test.sh removes it if this process dies unclean
    with Veth(script, f"vbe{os.getpid()}") as veth:
        try:
            sh(veth.in_ns(["ip", "addr", "add", f"{PEER_IP}/24", "dev",
                           veth.peer_if]))
            eal, prefix = tp.eal_args("arp", pmd)
            eal += ["--vdev",
                    f"net_vbr0,wire={kind}:{veth.root_if},mac={VBR_MAC}"]
            t = tp.TestPmd(eal, ["--forward-mode=icmpecho",
                                 "--total-num-mbufs=8192"], prefix)
            t.wait_prompt()
            t.cmd("clear port xstats 0")
            t.cmd("start")
            r = subprocess.run(veth.in_ns([PY, "-c", PING, PORT_IP,
                                           str(PINGS)]),
                               capture_output=True, text=True)
            print(r.stdout.strip(), flush=True)
            m = re.search(r"(\d+) received", r.stdout)
            got = int(m.group(1)) if m else 0
            c.check(r.returncode == 0 and got == PINGS,
                    f"echo {PORT_IP} from the namespace: {got} of {PINGS} "
                    f"echo replies (rc {r.returncode})")
            neigh = subprocess.run(veth.in_ns(["ip", "neigh", "show",
                                               PORT_IP]),
                                   capture_output=True, text=True).stdout
            print(neigh.strip(), flush=True)
            c.check(VBR_MAC in neigh.lower(),
                    f"the peer learnt {PORT_IP} at {VBR_MAC} by ARP: "
                    f"{neigh.strip()!r}")
            t.cmd("stop")
            xs = t.cmd("show port xstats 0")
            for name in ("rx_runt_frames", "rx_error_completions"):
                c.check(xstat(xs, name) == 0,
                        f"xstat {name} {xstat(xs, name)} == 0")
            rx = xstat(xs, "rx_good_packets")
            c.check(rx is not None and rx >= PINGS + 1,
                    f"rx_good_packets {rx}: the ARP request and the echo "
                    f"requests")
            rc = t.quit()
            c.check(rc == 0, f"testpmd quit cleanly (rc {rc})")
        except RuntimeError as e:
            c.check(False, str(e))
        finally:
            if t is not None:
                t.kill()
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(tp.veth_main(run, __doc__, ("dpdk-testpmd", "ip"), py=PY))
