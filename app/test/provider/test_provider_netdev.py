#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Which netdev a dev= port takes, on a device with several (suite
'provider').

usage: test_provider_netdev.py --why REASON
       test_provider_netdev.py RUN_SH PMD

The first form skips (77) with REASON: the provider was not built. The
second opens a dev= port (stock dpdk-testpmd, the PMD PMD, the system
libibverbs: backend (a)) on a swverbs device whose sysfs tree
(devtools/swverbs-sysfs.sh, keys also= and port_ndev=) lists several
interfaces in device/net, as a ConnectX's does:
  - a switchdev PF: its netdev (dev_port 0), a second port's netdev
    (dev_port 1) and a VF representor (phys_port_name pf0vf0), with no
    GID naming the port's interface: the port takes dev_port 0's;
  - the same with the port's GID 0 on its netdev: that one;
  - a LAG: device/net lists the slave, the port's GID names the bond
    (here another interface): the bond's;
  - one netdev: that one, as before.
Each interface has its own MAC: the port's (show port info) must be the
chosen one's; the MTU testpmd configures must land on that interface and
no other; the PMD's log line must name it. Needs root (the
veth pairs); 77 otherwise.
"""

import os
import re
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))
import testpmd_driver  # noqa: E402

FAILS = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        FAILS.append(what)
    return cond


def sh(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True).returncode


def ifmtu(name):
    with open(f"/sys/class/net/{name}/mtu") as f:
        return int(f.read())


def port_info(run_sh, pmd, spec, tag):
    """testpmd on net_vbr0,dev=swverbs0 under SPEC: (mac, mtu, output)."""
    eal, prefix = testpmd_driver.eal_args(tag, pmd)
    eal += ["--vdev", "net_vbr0,dev=swverbs0"]
    cmd = [run_sh, spec, "--", testpmd_driver.find_testpmd()] + eal + \
        ["--", "-i", "--total-num-mbufs=2048"]
    print("+ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, input="show port info 0\nquit\n",
                       capture_output=True, text=True, timeout=120,
                       env=testpmd_driver.testpmd_env())
    out = p.stdout + p.stderr
    subprocess.run(["rm", "-rf", f"/var/run/dpdk/{prefix}"])
    mac = re.search(r"MAC address: ([0-9A-Fa-f:]{17})", out)
    mtu = re.search(r"\bMTU: (\d+)", out)
    return (mac.group(1).lower() if mac else None,
            int(mtu.group(1)) if mtu else None, out)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--why":
        print(f"SKIP: the swverbs provider was not built: {sys.argv[2]}")
        return 77
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    if testpmd_driver.find_testpmd() is None:
        print("SKIP: dpdk-testpmd not installed")
        return 77
    if os.geteuid() != 0:
        print("SKIP: needs root (veth pairs as the device's netdevs)")
        return 77
    run_sh, pmd = sys.argv[1], os.path.abspath(sys.argv[2])
    pid = os.getpid() % 100000
    # the port's netdev, a second port's, a representor, a bond
    names = {r: f"vn{pid}{r}" for r in "abrg"}
    macs = {"a": "02:00:00:00:0a:01", "b": "02:00:00:00:0b:01",
            "r": "02:00:00:00:0c:01", "g": "02:00:00:00:0d:01"}
    mtus = {"a": 1600, "b": 1700, "r": 1800, "g": 1900}

    def down(*_):
        for n in names.values():
            sh("ip", "link", "del", n)
        sys.exit(1)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, down)
    try:
        for r, n in names.items():
            if sh("ip", "link", "add", n, "type", "veth", "peer", "name",
                  n + "p") != 0:
                print("SKIP: cannot make a veth pair (ip link add)")
                return 77
            sh("sysctl", "-qw", f"net.ipv6.conf.{n}.disable_ipv6=1")
            sh("ip", "link", "set", n, "address", macs[r], "mtu",
               str(mtus[r]), "up")
            sh("ip", "link", "set", n + "p", "up")
        a, b, rep, g = (names[r] for r in "abrg")
        cases = [
            ("switchdev PF, no GID netdev",
             f"swverbs0=af_packet:{a}+also={b}:1+also={rep}:0:pf0vf0"
             "+port_ndev=none", "a", "dev_port 0 among 3 netdevs"),
            ("the port's GID 0 netdev",
             f"swverbs0=af_packet:{a}+also={rep}:0:pf0vf0+also={b}:1",
             "a", "GID 0"),
            ("a LAG: the bond",
             f"swverbs0=af_packet:{g}+netdev={a}+port_ndev={g}",
             "g", "GID 0"),
            ("one netdev", f"swverbs0=af_packet:{a}", "a", "GID 0"),
            ("one netdev, no GID netdev",
             f"swverbs0=af_packet:{a}+port_ndev=none", "a", "only netdev"),
        ]
        for i, (what, spec, want, how) in enumerate(cases):
            for r, n in names.items():
                sh("ip", "link", "set", n, "mtu", str(mtus[r]))
            mac, mtu, out = port_info(run_sh, pmd, spec, f"nd{i}")
            print(out[-2500:], flush=True)
            check(mac == macs[want],
                  f"{what}: MAC {mac} is {names[want]}'s {macs[want]}")
            # testpmd configures the port with its MTU (1500): set on the
            # chosen interface, no other touched
            now = {r: ifmtu(n) for r, n in names.items()}
            check(mtu is not None and now[want] == mtu,
                  f"{what}: the port's MTU {mtu} is on {names[want]} "
                  f"({now[want]})")
            check(all(now[r] == mtus[r] for r in names if r != want),
                  f"{what}: the other interfaces keep their MTUs: {now}")
            line = re.search(rf"netdev {names[want]} \(([^)]*)\)", out)
            check(line is not None and how in line.group(1),
                  f"{what}: the log names netdev {names[want]} "
                  f"({how}): {line.group(0) if line else 'no line'}")
    finally:
        for n in names.values():
            sh("ip", "link", "del", n)
    if FAILS:
        print(f"{len(FAILS)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
