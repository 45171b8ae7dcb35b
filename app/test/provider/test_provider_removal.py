#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A dev= port whose device is removed, through the system libibverbs.

usage: test_provider_removal.py RUN_SH PATH/librte_net_vbr.so
       test_provider_removal.py --why REASON   (skips: no provider)
Exit 0 on success, 1 on a failed check, 77 without root or dpdk-testpmd.

The swverbs device swverbs0 (mlx5 profile) on one end of a veth pair, as
a ConnectX's netdev; dpdk-testpmd drives it as net_vbr0,dev=swverbs0
through the ibverbs glue (RUN_SH, swverbs-run.sh). The end is deleted:
the device raises IBV_EVENT_DEVICE_FATAL and, as a kernel's uverbs async
fd after a removal, the provider's async fd then polls ready forever with
nothing to read. Twice:

- testpmd as it runs by default (removal interrupt on): one removal event
  reaches the application, which closes and detaches the port; the PMD
  stops watching the dead fd (one log line), nothing fails on the way
  (no destroy error, no EIO) and testpmd exits 0 (under ASan: no leak);
- --no-rmv-interrupt: the link reads down (query_port fails with EIO
  there), stop and close succeed without an error line.
"""

import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))
import testpmd_driver as tp  # noqa: E402

# What a failed teardown or a spinning handler would print.
BAD = re.compile(r"Input/output error|destroy\w*: |query_port_ex: |"
                 r"ERROR: AddressSanitizer|LeakSanitizer")


def sh(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True).returncode


class RunPmd(tp.TestPmd):
    """testpmd under swverbs-run.sh SPEC."""

    def __init__(self, run_sh, spec, eal, app, prefix):
        self.prefix = prefix
        self.log = sys.stdout
        self.out = ""
        self.lock = tp.threading.Condition()
        argv = ([run_sh, spec, "--", "stdbuf", "-oL", tp.find_testpmd()] +
                eal + ["--", "-i"] + app)
        print("+ " + " ".join(argv), flush=True)
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, bufsize=0, env=tp.testpmd_env())
        self.reader = tp.threading.Thread(target=self._read, daemon=True)
        self.reader.start()


def intr_cpu(prefix):
    """CPU ticks of testpmd's EAL interrupt thread (the one that calls the
    PMD's async event handler), None when it cannot be found."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
        except OSError:
            continue
        if not cmd[0].endswith(b"dpdk-testpmd") or \
                prefix.encode() not in cmd:
            continue
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    st = f.read()
            except OSError:
                continue
            name = st[st.index("(") + 1:st.rindex(")")]
            if "intr" in name:
                fields = st[st.rindex(")") + 2:].split()
                return int(fields[11]) + int(fields[12])
    return None


def wait_for(t, pattern, seconds=10):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        with t.lock:
            if re.search(pattern, t.out):
                return True
        time.sleep(0.05)
    return False


def one_run(c, run_sh, pmd, a, b, rmv):
    for dev in (a, b):
        if sh("ip", "link", "show", dev) != 0 and dev == a:
            sh("ip", "link", "add", a, "type", "veth", "peer", "name", b)
        sh("ip", "link", "set", dev, "up")
    eal, prefix = tp.eal_args("rmv", pmd, "0-1")
    eal += ["--vdev", "net_vbr0,dev=swverbs0"]
    app = ["--total-num-mbufs=8192"] + ([] if rmv else
                                        ["--no-rmv-interrupt"])
    t = RunPmd(run_sh, f"swverbs0=af_packet:{a}", eal, app, prefix)
    try:
        t.wait_prompt()
        info = t.cmd("show port info 0")
        c.check("Link status: up" in info, "link up before the removal")
        start = len(t.out)
        sh("ip", "link", "del", a)
        c.check(wait_for(t, r"its async fd is no longer watched"),
                "the PMD stops watching the dead async fd")
        if rmv:
            c.check(wait_for(t, r"Port 0 is detached|is detached"),
                    "testpmd closed and detached the port")
            time.sleep(0.5)
            n = len(re.findall(r"Port 0: device removal event",
                               t.out[start:]))
            c.check(n == 1, f"one removal event ({n})")
        else:
            # A handler called in a loop would keep its thread busy.
            t0 = intr_cpu(prefix)
            time.sleep(1)
            t1 = intr_cpu(prefix)
            c.check(t0 is not None and t1 is not None,
                    "the interrupt thread found")
            if t0 is not None and t1 is not None:
                hz = os.sysconf("SC_CLK_TCK")
                c.check(t1 - t0 < hz // 10,
                        f"the interrupt thread idles after the removal "
                        f"({t1 - t0} ticks in 1 s, {hz} a second)")
            info = t.cmd("show port info 0")
            c.check("Link status: down" in info, "link down after it")
            out = t.cmd("port stop 0") + t.cmd("port close 0")
            c.check("rror" not in out and "ail" not in out,
                    "stop and close succeed")
        time.sleep(0.3)
        n = len(re.findall(r"no longer watched", t.out[start:]))
        c.check(n == 1, f"the fd let go once ({n} lines)")
        rc = t.quit()
        c.check(rc == 0, f"testpmd exits 0 ({rc})")
        bad = BAD.search(t.out[start:])
        c.check(bad is None, "no error on the way" +
                ("" if bad is None else f": {bad.group(0)!r}"))
    finally:
        t.kill()


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--why":
        print(f"SKIP: the swverbs provider was not built: {sys.argv[2]}")
        return 77
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    if os.geteuid() != 0:
        print("SKIP: needs root (a veth end as the device's wire)")
        return 77
    if tp.find_testpmd() is None:
        print("SKIP: dpdk-testpmd not installed")
        return 77
    run_sh, pmd = sys.argv[1], os.path.abspath(sys.argv[2])
    a, b = f"vrm{os.getpid()}a", f"vrm{os.getpid()}b"

    def down(*_):
        sh("ip", "link", "del", a)
        sys.exit(1)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, down)
    c = tp.Checker()
    try:
        if sh("ip", "link", "add", a, "type", "veth", "peer", "name",
              b) != 0:
            print("SKIP: cannot make a veth pair (ip link add)")
            return 77
        for rmv in (True, False):
            print(f"== removal interrupt {'on' if rmv else 'off'}",
                  flush=True)
            one_run(c, run_sh, pmd, a, b, rmv)
    finally:
        sh("ip", "link", "del", a)
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
