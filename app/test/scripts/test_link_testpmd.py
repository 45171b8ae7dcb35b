#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Link control, MTU and port info through stock testpmd.

usage: test_link_testpmd.py PATH/librte_net_vbr.so PATH/devtools/netns-veth.sh

pair: two vbr ports on one swverbs pair cable. `set link-down port 0`
unplugs port 0's end: both ports print their link state change event and
show "Link status: down"; `set link-up port 0` brings both back. `show port
info` gives the speed (100 Gbps) and the MTU. `port config mtu 1 1400`:
1500-byte frames from port 0 are dropped by port 1, each counted in its
rx_mtu_dropped xstat and in RX-errors; 1418-byte frames (MTU + an Ethernet
header and one VLAN tag, a ConnectX's bound) pass, 1419-byte ones do not. An MTU above the maximum is refused.

af_packet (root; skipped otherwise): a vbr port on a veth whose peer is in
a namespace. link-down clears the interface's IFF_UP and the peer loses
carrier; link-up brings both back, with the LSC events. `show port info`
says 10 Gbps (what veth reports). `port config mtu 0 1400` sets the veth's
MTU: frames up to it from the peer come in, longer ones never reach the
port (the kernel drops them, counted in the interface's rx_dropped).

dev=<name> of no verbs device: probe fails, naming the devices there are
or why there are none.
"""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testpmd_driver as tp  # noqa: E402

PY = "/usr/bin/python3"
VBR_MAC = "02:76:62:72:00:07"

SEND = r"""
import sys
from scapy.all import Ether, Raw, conf
iface, dst, length, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4])
s = conf.L2socket(iface=iface)
ok = 0
for i in range(n):
    f = Ether(dst=dst, type=0x88b5) / Raw(bytes([i]) * (length - 14))
    try:
        s.send(f)
        ok += 1
    except OSError:  # the receiving veth refused it (ENOBUFS)
        pass
print("sent", ok)
"""


def info(t, port):
    out = t.cmd(f"show port info {port}")
    return {k: v.strip() for k, v in
            re.findall(r"^(Link status|Link speed|MTU): (.*)$", out, re.M)}


def xstats(t, port):
    out = t.cmd(f"show port xstats {port}")
    return {k: int(v) for k, v in re.findall(r"(\w+):\s+(\d+)", out)}


def wait_for(pred, seconds=10):
    end = time.monotonic() + seconds
    while not pred():
        if time.monotonic() > end:
            return False
        time.sleep(0.1)
    return True


def events(t, mark, port):
    return t.out[mark:].count(f"Port {port}: link state change event")


def mtu_drops(x0, x1):
    return x1.get("rx_mtu_dropped", -1) - x0.get("rx_mtu_dropped", 0)


def burst(t, length, all_dropped=False):
    """Frames of length bytes from both ports (start tx_first) for a
    second: port 1's xstats before and after, both ports' stats. With
    all_dropped, port 1's xstats are read again (up to 10 s) until its
    rx_mtu_dropped holds what port 0 sent: frames still on the cable when
    forwarding stopped are dropped a little later on a loaded machine."""
    t.cmd(f"set txpkts {length}")
    t.cmd("clear port stats all")  # xstats count from here too
    x0 = xstats(t, 1)
    t.cmd("start tx_first")
    time.sleep(1)
    t.cmd("stop")
    s0 = tp.port_stats(t.cmd("show port stats 0"), 0) or {}
    sent = s0.get("TX-packets", 0)
    x1 = xstats(t, 1)
    if all_dropped:
        end = time.monotonic() + 10
        while mtu_drops(x0, x1) < sent and time.monotonic() < end:
            time.sleep(0.1)
            x1 = xstats(t, 1)
    s1 = tp.port_stats(t.cmd("show port stats 1"), 1) or {}
    return x0, x1, s0, s1


def run_pair(pmd, c):
    t = tp.start_pair("lnk", pmd, ["--total-num-mbufs=8192"])
    try:
        t.wait_prompt()
        i0 = info(t, 0)
        c.check(i0.get("Link status") == "up", f"port 0 up: {i0}")
        c.check(i0.get("Link speed") == "100 Gbps",
                f"pair speed 100 Gbps: {i0.get('Link speed')}")
        c.check(i0.get("MTU") == "1500", f"MTU 1500: {i0.get('MTU')}")

        mark = len(t.out)
        out = t.cmd("set link-down port 0")
        c.check("fail" not in out.lower(), f"set link-down accepted: {out!r}")
        c.check(wait_for(lambda: info(t, 1).get("Link status") == "down"),
                "the peer (port 1) lost carrier")
        # port 0's own link check and event may come after port 1's
        c.check(wait_for(lambda: info(t, 0).get("Link status") == "down"),
                "port 0 down")
        c.check(wait_for(lambda: events(t, mark, 1) >= 1 and
                         events(t, mark, 0) >= 1),
                "LSC events printed for port 0 and port 1")
        mark = len(t.out)
        out = t.cmd("set link-up port 0")
        c.check("fail" not in out.lower(), f"set link-up accepted: {out!r}")
        c.check(wait_for(lambda: info(t, 1).get("Link status") == "up" and
                         info(t, 0).get("Link status") == "up"),
                "both ports up again")
        c.check(wait_for(lambda: events(t, mark, 1) >= 1),
                "LSC event printed for port 1 on link-up")

        out = t.cmd("port config mtu 1 20000")
        c.check("max MTU" in out or "fail" in out.lower(),
                f"MTU above the maximum refused: {out!r}")
        out = t.cmd("port config mtu 1 1400")
        c.check("fail" not in out.lower(), f"MTU 1400 accepted: {out!r}")
        c.check(info(t, 1).get("MTU") == "1400", "port 1 MTU 1400")

        # io forwarding, one burst from each port: port 1 drops what
        # port 0 sends (1500 bytes), port 0 forwards port 1's burst back
        t.cmd("set fwd io")
        x0, x1, s0, s1 = burst(t, 1500, all_dropped=True)
        drop = mtu_drops(x0, x1)
        sent = s0.get("TX-packets", 0)
        c.check(sent > 0 and drop == sent,
                f"port 1 rx_mtu_dropped +{drop} == port 0 TX-packets {sent}")
        c.check(s1.get("RX-packets") == 0 and s1.get("RX-errors") == sent,
                f"port 1 RX-packets 0, RX-errors {s1.get('RX-errors')} == "
                f"{sent}")
        x0, x1, s0, s1 = burst(t, 1418)
        c.check(s1.get("RX-packets", 0) > 0,
                f"1418-byte frames received: {s1.get('RX-packets')}")
        c.check(x1.get("rx_mtu_dropped") == x0.get("rx_mtu_dropped"),
                "none of them dropped for the MTU")
        x0, x1, s0, s1 = burst(t, 1419, all_dropped=True)
        drop = mtu_drops(x0, x1)
        sent = s0.get("TX-packets", 0)
        # (RX-packets may count 1418-byte frames still in flight)
        c.check(sent > 0 and drop == sent,
                f"1419-byte frames: rx_mtu_dropped +{drop} == {sent} sent")
        rc = t.quit()
        c.check(rc == 0, f"testpmd quit cleanly (rc {rc})")
    except (RuntimeError, subprocess.CalledProcessError) as e:
        c.check(False, str(e))
    finally:
        t.kill()


def run_no_dev(pmd, c):
    eal, prefix = tp.eal_args("lnkd", pmd, "0")
    eal += ["--vdev", "net_vbr0,dev=vbrnosuch0"]
    p = subprocess.run([tp.find_testpmd()] + eal + ["--", "-i"],
                       stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=60, env=tp.testpmd_env())
    out = p.stdout + p.stderr
    print(out[-2000:], flush=True)
    line = next((ln for ln in out.splitlines() if "vbrnosuch0" in ln), "")
    c.check(p.returncode != 0, "testpmd fails to probe dev=vbrnosuch0")
    c.check("no verbs device named vbrnosuch0; there are" in line,
            f"the message lists the devices or says there are none: {line}")
    if not os.path.isdir("/sys/class/infiniband"):
        c.check("/sys/class/infiniband is missing" in line,
                "and why: no RDMA support in the kernel")


def ns_read(veth, path):
    return subprocess.run(veth.in_ns(["cat", path]), capture_output=True,
                          text=True).stdout.strip()


def link_flags(ifname):
    out = subprocess.run(["ip", "-o", "link", "show", ifname],
                         capture_output=True, text=True).stdout
    m = re.search(r"<([^>]*)>.* mtu (\d+)", out)
    return (m.group(1).split(","), int(m.group(2))) if m else ([], 0)


def rx_dropped(ifname):
    with open(f"/sys/class/net/{ifname}/statistics/rx_dropped") as f:
        return int(f.read())


def run_veth(pmd, script, c):
    from test_e2e_veth import Veth
    prefix = f"vbl{os.getpid()}"
    with Veth(script, prefix) as veth:
        t = None
        try:
            eal, fprefix = tp.eal_args("lnkv", pmd)
            eal += ["--vdev",
                    f"net_vbr0,wire=af_packet:{veth.root_if},mac={VBR_MAC}"]
            t = tp.TestPmd(eal, ["--forward-mode=rxonly",
                                 "--total-num-mbufs=8192"], fprefix)
            t.wait_prompt()
            carrier = f"/sys/class/net/{veth.peer_if}/carrier"
            i0 = info(t, 0)
            c.check(i0.get("Link status") == "up", f"veth port up: {i0}")
            c.check(i0.get("Link speed") == "10 Gbps",
                    f"veth speed 10 Gbps: {i0.get('Link speed')}")
            mark = len(t.out)
            out = t.cmd("set link-down port 0")
            c.check("fail" not in out.lower(), f"link-down: {out!r}")
            c.check("UP" not in link_flags(veth.root_if)[0],
                    f"{veth.root_if} IFF_UP cleared")
            c.check(wait_for(lambda: ns_read(veth, carrier) == "0"),
                    f"the peer {veth.peer_if} lost carrier")
            c.check(wait_for(lambda: info(t, 0).get("Link status") ==
                             "down" and events(t, mark, 0) >= 1),
                    "port 0 down, LSC event printed")
            mark = len(t.out)
            out = t.cmd("set link-up port 0")
            c.check("fail" not in out.lower(), f"link-up: {out!r}")
            c.check(wait_for(lambda: ns_read(veth, carrier) == "1"),
                    "the peer has carrier again")
            c.check(wait_for(lambda: info(t, 0).get("Link status") == "up"
                             and events(t, mark, 0) >= 1),
                    "port 0 up, LSC event printed")

            out = t.cmd("port config mtu 0 1400")
            c.check("fail" not in out.lower(), f"MTU 1400: {out!r}")
            c.check(link_flags(veth.root_if)[1] == 1400,
                    f"{veth.root_if} MTU is 1400")
            c.check(info(t, 0).get("MTU") == "1400", "port 0 MTU 1400")
            t.cmd("start")
            d0 = rx_dropped(veth.root_if)
            st0 = tp.port_stats(t.cmd("show port stats 0"), 0) or {}
            subprocess.run(veth.in_ns([PY, "-c", SEND, veth.peer_if,
                                       VBR_MAC, "1414", "5"]), check=True)
            subprocess.run(veth.in_ns([PY, "-c", SEND, veth.peer_if,
                                       VBR_MAC, "1460", "5"]), check=True)
            st = tp.wait_rx(t, 0, st0.get("RX-packets", 0) + 5, 10)
            t.cmd("stop")
            got = st.get("RX-packets", 0) - st0.get("RX-packets", 0)
            c.check(got == 5, f"the 5 frames within the MTU came in: {got}")
            dropped = rx_dropped(veth.root_if) - d0
            c.check(dropped == 5, "the 5 frames above it: dropped by the "
                    f"kernel, {veth.root_if} rx_dropped +{dropped}")
            rc = t.quit()
            c.check(rc == 0, f"testpmd quit cleanly (rc {rc})")
        except (RuntimeError, subprocess.CalledProcessError) as e:
            c.check(False, str(e))
        finally:
            if t is not None:
                t.kill()


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    if tp.find_testpmd() is None:
        print("SKIP: dpdk-testpmd not installed")
        return tp.SKIP
    pmd, script = sys.argv[1], sys.argv[2]
    tp.exit_on_signals()  # the veth goes on SIGINT, SIGTERM, SIGHUP too
    c = tp.Checker()
    run_pair(pmd, c)
    run_no_dev(pmd, c)
    if os.geteuid() != 0:
        print("SKIP (af_packet part): needs root", flush=True)
    elif subprocess.run([PY, "-c", "import scapy.all"],
                        capture_output=True).returncode != 0:
        print(f"SKIP (af_packet part): no scapy for {PY}", flush=True)
    else:
        run_veth(pmd, script, c)
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
