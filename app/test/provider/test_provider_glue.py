#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""vbr's libibverbs glue on swverbs devices: meson's 'ibverbs' test setup.

usage: test_provider_glue.py --why REASON [COMMAND...]
       test_provider_glue.py RUN_SH -- COMMAND...

The wrapper of "meson test --setup=ibverbs" (the exe_wrapper, which
meson puts before each test's command). The first form skips (77) with
REASON: the provider was not built. The second runs COMMAND, e.g.
test-vbr-hw (suite 'hw': the PMD's suites on the device VBR_TEST_DEV, its
port 1 on VBR_TEST_DEV_PEER) through the ibverbs glue -- backend (a), the
code a ConnectX user runs -- on two swverbs devices the system
libibverbs drives through the provider (RUN_SH, swverbs-run.sh).
Their wires are the two ends of a veth pair made for the run, MTU 9000,
which are also their netdevs: vbr's glue reads the port's MAC, MTU and
link from the device's netdev, as on a ConnectX. Needs root (the veths,
AF_PACKET); 77 otherwise. The pair is removed whatever happens.
"""

import os
import signal
import subprocess
import sys


def sh(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True).returncode


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--why":
        print(f"SKIP: the swverbs provider was not built: {sys.argv[2]}")
        return 77
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__)
        return 2
    if os.geteuid() != 0:
        print("SKIP: needs root (a veth pair as the devices' wires and "
              "netdevs)")
        return 77
    run_sh, hw = sys.argv[1], sys.argv[3:]
    a, b = f"vpg{os.getpid()}a", f"vpg{os.getpid()}b"

    def down(*_):
        sh("ip", "link", "del", a)
        sys.exit(1)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, down)
    try:
        if sh("ip", "link", "add", a, "type", "veth", "peer", "name",
              b) != 0:
            print("SKIP: cannot make a veth pair (ip link add)")
            return 77
        for dev in (a, b):
            sh("sysctl", "-qw", f"net.ipv6.conf.{dev}.disable_ipv6=1")
            sh("ip", "link", "set", dev, "mtu", "9000", "up")
        env = dict(os.environ, VBR_TEST_DEV="swverbs0",
                   VBR_TEST_DEV_PEER="swverbs1")
        spec = f"swverbs0=af_packet:{a},swverbs1=af_packet:{b}"
        return subprocess.run([run_sh, spec, "--"] + hw, env=env).returncode
    finally:
        sh("ip", "link", "del", a)


if __name__ == "__main__":
    sys.exit(main())
