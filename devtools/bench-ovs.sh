#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Open vSwitch forwarding benchmark (not a test): Debian's OVS-DPDK bridging
# two vbr ports, hw-offload off and on side by side in one run, with 1 and
# 1,000 megaflows.
#
#   devtools/bench-ovs.sh [SECONDS] [REPS]     (default 5 s, 1 repetition)
#
# Case shm (the cross-process form of a pair cable: OVS and the traffic
# source are two processes): OVS ports p0 = net_vbr0,wire=shm:A and p1 =
# net_vbr1,wire=shm:B (profile=full: OVS's IPv4 megaflows have frag=no,
# which a ConnectX's verbs cannot match; progress=inline: OVS's PMD thread
# drives them). A testpmd on the other ends: port 0 replays a pcap of 64-byte
# UDP frames (net_pcap, infinite_rx) with 1 or 1,000 source addresses, port
# 1 (shm:A) sends them into OVS, port 2 (shm:B) receives what OVS forwards,
# --port-topology=chained (0 -> 1, 2 -> 0). OpenFlow: in_port=p0 -> p1
# (1 megaflow), or one rule per source address (1,000 megaflows, each with
# its exact nw_src).
#
# Mpps: frames testpmd's port 2 received / SECONDS. cycles/packet: OVS's
# "avg processing cycles per packet" of its PMD thread (pmd-stats-show,
# cleared at the start of the window); phwol: the share of frames that came
# with a mark.
#
# Case af_xdp (OVS's ports on Linux interfaces): the same, with OVS ports
# p0 = net_vbr0,wire=af_xdp:<A0> and p1 = net_vbr1,wire=af_xdp:<B0> on two
# veth pairs this script makes (bxa<pid>0/1, bxb<pid>0/1, in the root
# namespace, IPv6 off, removed at the end), and testpmd's ports 1 and 2 on
# the other ends through DPDK's net_af_packet (A1, B1): the kernel's veth
# between the generator and OVS, as with a NIC's traffic.
#
# Core layout (both cases): OVS main thread on CPU 0 (dpdk-lcore-mask
# 0x1), its one PMD thread on CPU 1 (pmd-cpu-mask 0x2, alone); testpmd main
# and forwarding lcore on CPU 0 (--lcores 0@0,1@0); for af_xdp the veths'
# kernel work runs on the CPU of whoever sends.
#
# Environment: BENCH_CASES (comma-separated: shm, af_xdp; default both).
#
# Needs root (hugepages for OVS: 160 2 MB pages, reserved and given back)
# and devtools/setup.sh (openvswitch-switch-dpdk, scapy).

set -e
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export VBR_PMD=${VBR_PMD:-$ROOT/${VBR_BUILD_DIR:-build}/drivers/librte_net_vbr.so}
export BENCH_ROOT=$ROOT
[ -f "$VBR_PMD" ] || { echo "bench-ovs.sh: build first ($VBR_PMD)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "bench-ovs.sh: needs root" >&2; exit 1; }

exec /usr/bin/python3 - "${1:-5}" "${2:-1}" <<'EOF'
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.environ["BENCH_ROOT"] + "/app/test/scripts")
import testpmd_driver as td              # noqa: E402
from test_ovs import HUGE, HUGE_PAGES, Ovs, run  # noqa: E402
from scapy.all import Ether, IP, UDP, wrpcap  # noqa: E402

SECS, REPS = float(sys.argv[1]), int(sys.argv[2])
PMD = os.environ["VBR_PMD"]
PID = os.getpid()


def pcap(path, flows):
    frames = [Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") /
              IP(src="10.0.%d.%d" % (i >> 8, i & 255), dst="10.9.0.1") /
              UDP(sport=1000, dport=2000) / (b"x" * 18)
              for i in range(flows)]
    wrpcap(path, frames)


def flows_file(path, flows):
    with open(path, "w") as f:
        if flows == 1:
            f.write("in_port=p0,actions=output:p1\n")
            return
        for i in range(flows):
            f.write("priority=10,udp,in_port=p0,nw_src=10.0.%d.%d,"
                    "actions=output:p1\n" % (i >> 8, i & 255))
        f.write("priority=0,actions=drop\n")


def ovs_devargs(case, i):
    """The dpdk-devargs of OVS port p<i> in a case."""
    if case == "af_xdp":
        return ("net_vbr%d,wire=af_xdp:bx%s%d0,profile=full,progress=inline"
                % (i, "ab"[i], PID))
    return ("net_vbr%d,wire=shm:bovs%s%d,profile=full,progress=inline"
            % (i, "ab"[i], PID))


def gen_vdevs(case):
    """testpmd's ports 1 (into OVS's p0) and 2 (out of OVS's p1)."""
    if case == "af_xdp":
        return ["--vdev", "net_af_packet1,iface=bxa%d1" % PID,
                "--vdev", "net_af_packet2,iface=bxb%d1" % PID]
    return ["--vdev", "net_vbr1,wire=shm:bovsa%d,progress=inline" % PID,
            "--vdev", "net_vbr2,wire=shm:bovsb%d,progress=inline" % PID]


def veths(up):
    """The af_xdp case's two veth pairs, both ends in the root namespace."""
    for x in "ab":
        a, b = "bx%s%d0" % (x, PID), "bx%s%d1" % (x, PID)
        if not up:
            run("ip", "link", "del", a, check_rc=False)
            continue
        run("ip", "link", "add", a, "type", "veth", "peer", "name", b)
        for n in (a, b):
            run("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % n)
            run("ip", "link", "set", n, "up")


def measure(d, ovs, flows, offload, case="shm"):
    ovs.vsctl("--no-wait", "set", "Open_vSwitch", ".",
              "other_config:hw-offload=%s" % str(offload).lower())
    for i in range(2):
        ovs.vsctl("--no-wait", "set", "Interface", "p%d" % i,
                  "options:dpdk-devargs=%s" % ovs_devargs(case, i))
    ovs.start()
    t = None
    try:
        run("ovs-ofctl", "del-flows", "br0", env=ovs.env)
        flows_file(d + "/flows.txt", flows)
        run("ovs-ofctl", "add-flows", "br0", d + "/flows.txt", env=ovs.env)
        pcap(d + "/in.pcap", flows)
        eal = ["--lcores", "0@0,1@0", "--no-huge", "-m", "512",
               "--no-shconf", "--file-prefix", "bovs-tp%d" % PID, "--no-pci",
               "-d", PMD,
               "--vdev", "net_pcap0,rx_pcap=%s/in.pcap,tx_pcap=/dev/null,"
               "infinite_rx=1" % d] + gen_vdevs(case)
        t = td.TestPmd(eal, ["--port-topology=chained",
                             "--total-num-mbufs=16384"], log=open(os.devnull,
                                                                  "w"))
        t.wait_prompt()
        ovs.vsctl("wait-until", "Interface", "p0", "link_state=up")
        ovs.vsctl("wait-until", "Interface", "p1", "link_state=up")
        t.cmd("start")
        time.sleep(2)                    # megaflows made, offloaded
        ovs.appctl("dpif-netdev/pmd-stats-clear")
        r0 = td.port_stats(t.cmd("show port stats 2"), 2)["RX-packets"]
        time.sleep(SECS)
        r1 = td.port_stats(t.cmd("show port stats 2"), 2)["RX-packets"]
        st = ovs.appctl("dpif-netdev/pmd-stats-show")
        t.cmd("stop")
        dump = ovs.appctl("dpctl/dump-flows", "-m").splitlines()
        nmf = len([x for x in dump if "in_port(p0)" in x])
        cyc = re.search(r"avg processing cycles per packet: ([\d.]+)", st)
        rx = re.search(r"packets received: (\d+)", st)
        hw = re.search(r"phwol hits: (\d+)", st)
        rx = int(rx.group(1)) if rx else 0
        return ((r1 - r0) / SECS / 1e6, float(cyc.group(1)) if cyc else 0.0,
                100.0 * int(hw.group(1)) / rx if hw and rx else 0.0, nmf)
    finally:
        if t is not None:
            t.quit()
        ovs.stop_vswitchd()


def bench_case(d, ovs, case, flows):
    """One case with flows megaflows: offload off and on, side by side."""
    res = {}
    for rep in range(REPS):
        for off in (False, True):
            m = measure(d, ovs, flows, off, case)
            res.setdefault(off, []).append(m)
            print("%-6s  %9d  %-7s  %6.3f  %7.0f  %6.1f  (%d)" %
                  (case, flows, "on" if off else "off", m[0], m[1], m[2],
                   m[3]), flush=True)
    mo = sum(x[0] for x in res[False]) / REPS
    mn = sum(x[0] for x in res[True]) / REPS
    co = sum(x[1] for x in res[False]) / REPS
    cn = sum(x[1] for x in res[True]) / REPS
    print("%-6s  %9d  on/off   Mpps x%.2f, cycles/packet x%.2f" %
          (case, flows, mn / mo if mo else 0, cn / co if co else 0))


def main():
    d = tempfile.mkdtemp(prefix="vbr-bench-ovs-")
    before = int(open(HUGE).read())
    with open(HUGE, "w") as f:
        f.write(str(before + HUGE_PAGES))
    added = int(open(HUGE).read()) - before
    ovs = None
    cases = [c for c in os.environ.get("BENCH_CASES",
                                       "shm,af_xdp").split(",") if c]
    try:
        if "af_xdp" in cases:
            veths(True)
        ovs = Ovs(d, PMD, "bovs%d" % PID)
        ovs.vsctl("--no-wait", "set", "Open_vSwitch", ".",
                  "other_config:dpdk-init=true",
                  "other_config:dpdk-extra=-d %s --no-pci --file-prefix=%s"
                  % (PMD, "bovs%d" % PID),
                  "other_config:dpdk-socket-mem=256",
                  "other_config:dpdk-socket-limit=256",
                  "other_config:per-port-memory=true",
                  "other_config:dpdk-lcore-mask=0x1",
                  "other_config:pmd-cpu-mask=0x2")
        ovs.vsctl("--no-wait", "add-br", "br0", "--", "set", "bridge", "br0",
                  "datapath_type=netdev")
        for i, c in enumerate("ab"):
            ovs.vsctl("--no-wait", "add-port", "br0", "p%d" % i, "--", "set",
                      "Interface", "p%d" % i, "type=dpdk",
                      "options:dpdk-devargs=%s" % ovs_devargs("shm", i))
        print("case    megaflows  offload  Mpps    cyc/pkt  phwol%  "
              "(megaflows seen)")
        for case in cases:
            for flows in (1, 1000):
                bench_case(d, ovs, case, flows)
    finally:
        if ovs is not None:
            ovs.stop()
        if "af_xdp" in cases:
            veths(False)
        cur = int(open(HUGE).read())
        with open(HUGE, "w") as f:
            f.write(str(max(0, cur - added)))


main()
EOF
