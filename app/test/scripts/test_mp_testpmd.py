#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Secondary processes on the vbr ports of a dpdk-testpmd primary (issue 14).

usage: test_mp_testpmd.py PATH/librte_net_vbr.so PATH/vbr-mp-secondary
                          PATH/devtools/dpdk-secondary.sh
Exit 0 on success, 1 on a failed check, 77 without root, without the
DPDK tools or when no hugepage can be reserved.

A primary testpmd with two vbr ports on a pair cable (hugepages, a file
prefix of its own, shared with the secondaries) sends 4 bursts of 32
frames each way. Then:
- dpdk-proc-info --stats --xstats --show-port shows both ports with the
  stats testpmd shows, and --xstats (a run of its own: 22.11's proc-info
  shows xstats only without --stats) the xstats (traffic stopped: exact), link, driver,
  MAC, MTU, RSS key; --stats-reset clears the primary's counters;
- dpdk-dumpcap -D lists the ports; dpdk-dumpcap -i net_vbr0 captures
  what the primary's pdump copies: 2 bursts each way, 64 frames sent and
  64 received on port 0, exactly 128 in the file (tcpdump reads it): the
  right source MACs and the txonly UDP frame;
- a secondary of our own (vbr-mp-secondary): the stats are the primary's,
  an Rx and a Tx burst move 0 packets, configure/start/MTU and the PMD's
  rte_pmd_vbr_set/get_queue_rate_limit() and rte_pmd_vbr_pace_window()
  are refused (-ENOTSUP), and when the primary dies under it, a stats read fails
  instead of hanging or crashing and the process exits cleanly;
- after the secondaries exit, the primary's ports keep forwarding
  (counted exactly), and closing and attaching a port again leaves the
  primary's rte_mp action registered for the new port.

Hugepages: the test adds pages (and mounts hugetlbfs if nothing is mounted)
and removes what it added at exit, on SIGINT, SIGTERM and SIGHUP; others'
pages stay.
"""

import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testpmd_driver as tp  # noqa: E402

HUGE_ADD = 128          # 2 MB pages this test adds (256 MB)
NR_HUGE = "/proc/sys/vm/nr_hugepages"
HUGE_DIR = "/dev/hugepages"


def meminfo(key):
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


class Hugepages:
    """Pages added for the test; given back by release()."""

    def __init__(self):
        self.added = 0
        self.mounted = False

    def reserve(self, n):
        if not any(line.split()[2] == "hugetlbfs"
                   for line in open("/proc/mounts")):
            os.makedirs(HUGE_DIR, exist_ok=True)
            if subprocess.call(["mount", "-t", "hugetlbfs", "nodev",
                                HUGE_DIR]) != 0:
                return "cannot mount hugetlbfs on " + HUGE_DIR
            self.mounted = True
        free = meminfo("HugePages_Free")
        with open(NR_HUGE) as f:
            now = int(f.read())
        with open(NR_HUGE, "w") as f:
            f.write(str(now + n))
        with open(NR_HUGE) as f:
            self.added = max(0, int(f.read()) - now)
        if meminfo("HugePages_Free") - free < n // 2:
            return (f"only {meminfo('HugePages_Free') - free} of {n} "
                    "hugepages could be reserved")
        return None

    def give_back(self):
        """The pages added; those still mapped go when their process does
        (the kernel holds them as surplus until then)."""
        if self.added:
            with open(NR_HUGE) as f:
                now = int(f.read())
            with open(NR_HUGE, "w") as f:
                f.write(str(max(0, now - self.added)))
            self.added = 0

    def release(self, prefix):
        self.give_back()
        for path in glob.glob(f"{HUGE_DIR}/{prefix}map_*"):
            os.unlink(path)     # a killed primary's pages
        if self.mounted:
            subprocess.call(["umount", HUGE_DIR])
            self.mounted = False


def tool_env():
    """Environment of a stock DPDK tool (proc-info, dumpcap, pdump): as
    testpmd's, and in a sanitizer build without LeakSanitizer: Debian's
    tools and EAL keep allocations of their own until exit (librte_bus_vdev's
    secondary device list, for one); the PMD's leaks in a secondary are
    this test's own secondary's to show (vbr_mp_secondary.c)."""
    env = tp.testpmd_env()
    if env.get("VBR_SANITIZE_PRELOAD"):
        opts = env.get("ASAN_OPTIONS", "")
        env["ASAN_OPTIONS"] = (opts + ":" if opts else "") + "detect_leaks=0"
    return env


def secondary_env():
    """Our own secondary: LeakSanitizer on, but its verdict is this
    test's (foreign_leaks_only()), not its exit code: EAL's vdev bus keeps
    the rte_vdev_device of each port a secondary learns from the primary
    until exit (allocated in librte_bus_vdev itself, not under the PMD)."""
    # built here, with the sanitizer runtime of its own: no preload (a
    # clang executable carries it linked in, and a second one conflicts)
    env = dict(os.environ)
    if env.get("VBR_SANITIZE_PRELOAD"):
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "").replace(
            "abort_on_error=1", "abort_on_error=0")
        lsan = env.get("LSAN_OPTIONS", "")
        env["LSAN_OPTIONS"] = (lsan + ":" if lsan else "") + "exitcode=0"
    return env


def foreign_leaks_only(lines):
    """None: no leak report; True: every leak (direct or indirect) was
    allocated by librte_bus_vdev itself (its first frame past the
    sanitizer's interceptor); False: some other leak."""
    text = "\n".join(" ".join(f) for f in lines)
    blocks = re.findall(r"(?:Direct|Indirect) leak of .*?(?=(?:Direct|"
                        r"Indirect) leak of|SUMMARY|$)", text, re.S)
    if not blocks:
        return None
    for b in blocks:
        frames = re.findall(r"#1 \S+ (?:in \S+ )?\(?(\S+?)[+)]", b)
        if not frames or "librte_bus_vdev" not in frames[0]:
            print("leak not EAL's vdev bus:\n" + b, flush=True)
            return False
    return True


def run_tool(argv, timeout=60):
    print("+ " + " ".join(argv), flush=True)
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=timeout, env=tool_env())
    out = p.stdout.decode("utf-8", "replace")
    print(out, flush=True)
    return p.returncode, out


class Tool:
    """A tool running in the background; its output collected."""

    def __init__(self, argv):
        print("+ " + " ".join(argv), flush=True)
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT,
                                  env=tool_env())
        self.out = ""
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while True:
            chunk = os.read(self.p.stdout.fileno(), 4096)
            if not chunk:
                return
            with self.lock:
                self.out += chunk.decode("utf-8", "replace")

    def wait_for(self, text, seconds=30):
        end = time.monotonic() + seconds
        while time.monotonic() < end and self.p.poll() is None:
            with self.lock:
                if text in self.out:
                    return True
            time.sleep(0.1)
        return text in self.out

    def stop(self, seconds=30):
        """SIGINT, then SIGKILL if it does not exit; the exit code."""
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGINT)
        try:
            self.p.wait(seconds)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.reader.join(5)
        print(self.out, flush=True)
        return self.p.returncode


def split_ports(text, head):
    """Per port: the text after each '<head> <port>' header."""
    parts = re.split(r"%s\s*(\d+)" % head, text)
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def parse_xstats(text):
    return re.findall(r"^\s*([A-Za-z0-9_]+):\s+(\d+)\s*$", text, re.M)


def proc_info_xstats(out):
    return {p: parse_xstats(t) for p, t in
            split_ports(out, r"NIC extended statistics for port").items()}


def testpmd_xstats(t, port):
    return parse_xstats(t.cmd(f"show port xstats {port}"))


def send_bursts(t, n):
    """n bursts of 32 frames from each port (tx_first), rxonly after."""
    t.cmd("set fwd rxonly")
    t.cmd(f"start tx_first {n}")
    for port in (0, 1):
        tp.wait_rx(t, port, 32 * n, 20)
    t.cmd("stop")


def pcap_frames(path):
    """tcpdump's -e lines of a capture file."""
    p = subprocess.run(["tcpdump", "-nn", "-e", "-r", path],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return [ln for ln in p.stdout.decode().splitlines() if ln.strip()]


def wait_frames(path, want, seconds=20):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if os.path.exists(path) and len(pcap_frames(path)) >= want:
            return
        time.sleep(0.2)


def check_frames(c, what, lines, macs):
    """The txonly frames: UDP 198.18.0.1.9 > 198.18.0.2.9, 64 bytes, from
    the ports' MACs, each @macs[mac] times."""
    c.check(len(lines) == sum(macs.values()),
            f"{what}: {sum(macs.values())} frames ({len(lines)})")
    for mac, n in macs.items():
        got = [ln for ln in lines if f" {mac.lower()} > " in ln]
        c.check(len(got) == n, f"{what}: {n} from {mac} ({len(got)})")
    good = [ln for ln in lines
            if "198.18.0.1.9 > 198.18.0.2.9: UDP, length 22" in ln
            and "length 64:" in ln]
    c.check(len(good) == len(lines),
            f"{what}: every frame the txonly UDP frame, 64 bytes "
            f"({len(good)} of {len(lines)})")


class Secondary:
    """vbr-mp-secondary, one command at a time."""

    def __init__(self, exe, prefix, pmd):
        argv = [exe, "-l", "0", "--proc-type=secondary", "--file-prefix",
                prefix, "--no-pci", "-d", pmd]
        print("+ " + " ".join(argv), flush=True)
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT,
                                  env=secondary_env())
        self.after = []
        self.ready = self.read_until("ready")

    def read_until(self, word):
        lines = []
        while True:
            line = self.p.stdout.readline().decode("utf-8", "replace")
            if not line:
                return lines
            print("  secondary: " + line.rstrip(), flush=True)
            lines.append(line.split())
            if lines[-1] and lines[-1][0] == word:
                return lines

    def cmd(self, line):
        self.p.stdin.write((line + "\n").encode())
        self.p.stdin.flush()
        return self.read_until("bye" if line == "quit" else "done")

    def quit(self):
        out = self.cmd("quit")
        try:
            rc = self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = -9
        # what it printed after "bye" (a sanitizer's report at exit)
        self.after = self.read_until(None)
        if rc == 0 and foreign_leaks_only(self.after) is False:
            rc = 23     # LeakSanitizer's own exit code
        return rc, out


def answers(lines, word):
    return {int(f[1]): f[2:] for f in lines if f and f[0] == word}


def check_proc_info(c, t, tools, prefix, pmd, macs):
    """proc-info's stats, xstats and port info against testpmd's."""
    rc, out = run_tool([tools, "dpdk-proc-info", "--file-prefix", prefix,
                        "--no-pci", "--", "--stats", "--xstats",
                        "--show-port"])
    c.check(rc == 0, f"dpdk-proc-info exits 0 ({rc})")
    c.check("not supported" not in out and "No Ethernet ports" not in out,
            "dpdk-proc-info: no refusal")
    # the port totals: what comes before the per-queue "Stats reg" lines
    pi = {p: {k: int(v) for k, v in re.findall(
        r"([A-Za-z-]+):\s+(\d+)", txt.split("Stats reg")[0])}
        for p, txt in split_ports(out, r"NIC statistics for port").items()}
    # proc-info 22.11 shows stats or xstats (--stats wins): a second run
    rc, xout = run_tool([tools, "dpdk-proc-info", "--file-prefix", prefix,
                         "--no-pci", "--", "--xstats"])
    c.check(rc == 0, f"dpdk-proc-info --xstats exits 0 ({rc})")
    pix = proc_info_xstats(xout)
    tstats = t.cmd("show port stats all")
    for port in (0, 1):
        want = tp.port_stats(tstats, port)
        got = pi.get(port) or {}
        for key in ("RX-packets", "RX-errors", "RX-bytes", "RX-nombuf",
                    "TX-packets", "TX-errors", "TX-bytes"):
            c.check(got.get(key) == want.get(key),
                    f"port {port}: proc-info {key} {got.get(key)} == "
                    f"testpmd's {want.get(key)}")
        c.check(want.get("RX-packets", 0) > 0,
                f"port {port}: traffic counted ({want.get('RX-packets')})")
        tx = testpmd_xstats(t, port)
        c.check(len(tx) > 10 and pix.get(port) == tx,
                f"port {port}: proc-info's {len(pix.get(port) or [])} "
                f"xstats are testpmd's {len(tx)}, names, order and values")
    info = split_ports(out, r"===== Port")
    for port in (0, 1):
        txt = info.get(port, "")
        c.check(f"driver net_vbr device net_vbr{port}" in txt,
                f"port {port}: --show-port names the driver and device")
        c.check("Link up at" in txt, f"port {port}: --show-port: link up")
        c.check(f"-- mac {macs[port]}" in txt,
                f"port {port}: --show-port: MAC {macs[port]}")
        c.check("-- mtu (1500)" in txt, f"port {port}: --show-port: MTU")
        c.check("key len : 40" in txt, f"port {port}: --show-port: RSS key")
    rc, out = run_tool([tools, "dpdk-proc-info", "--file-prefix", prefix,
                        "--no-pci", "--", "--stats-reset"])
    st = tp.port_stats(t.cmd("show port stats 0"), 0) or {}
    c.check(rc == 0 and st.get("RX-packets") == 0 and
            st.get("TX-packets") == 0,
            f"proc-info --stats-reset clears the primary's counters ({st})")


# tools started in the background, stopped at the end whatever happens
tools_running = []


def check_dumpcap(c, t, tools, prefix, tmp, macs):
    rc, out = run_tool([tools, "dpdk-dumpcap", "--file-prefix", prefix,
                        "-D"])
    c.check(rc == 0 and "0. net_vbr0" in out and "1. net_vbr1" in out,
            "dpdk-dumpcap -D lists net_vbr0 and net_vbr1")
    if os.environ.get("VBR_SANITIZE_PRELOAD"):
        # The capture runs in librte_pdump's callbacks of the primary
        # (stock testpmd) and dumpcap (stock too), not in the PMD: under
        # a sanitizer runtime preload the two stock processes slow down
        # unevenly and dumpcap has lost whole captures (a CI run with
        # clang, thread model). The plain build checks the capture.
        print("dumpcap capture: checked in the plain build only")
        return
    cap = os.path.join(tmp, "cap.pcapng")
    dc = Tool([tools, "dpdk-dumpcap", "--file-prefix", prefix, "-i",
               "net_vbr0", "-c", "100000", "-w", cap])
    tools_running.append(dc)
    # printed once the primary's pdump has its callbacks on the port
    c.check(dc.wait_for("Packets captured:"),
            "dpdk-dumpcap -i net_vbr0 starts capturing")
    send_bursts(t, 2)
    wait_frames(cap, 128)
    rc = dc.stop()
    c.check(rc == 0, f"dpdk-dumpcap exits 0 ({rc})")
    check_frames(c, "dumpcap net_vbr0", pcap_frames(cap),
                 {macs[0]: 64, macs[1]: 64})


def check_secondary(c, t, exe, prefix, pmd):
    """Our secondary: stats, refused bursts and control ops."""
    s = Secondary(exe, prefix, pmd)
    c.check(s.ready and s.ready[-1] == ["ready", "2"],
            "vbr-mp-secondary attaches to 2 ports")
    out = s.cmd("check")
    tstats = t.cmd("show port stats all")
    st = answers(out, "stats")
    for port in (0, 1):
        want = tp.port_stats(tstats, port) or {}
        got = st.get(port, ["-1"])
        c.check(got[0] == "0" and
                [int(v) for v in got[1:4]] == [want.get("RX-packets"),
                                                want.get("TX-packets"),
                                                want.get("RX-bytes")],
                f"port {port}: the secondary's stats are the primary's "
                f"({got}, {want})")
        c.check(answers(out, "rx").get(port) == ["0"],
                f"port {port}: an Rx burst in a secondary: 0 packets")
        c.check(answers(out, "tx").get(port) == ["0"],
                f"port {port}: a Tx burst in a secondary: 0 packets")
        for op in ("configure", "start", "mtu", "set_limit", "get_limit",
                   "pace_window"):
            c.check(answers(out, op).get(port) == ["-95"],
                    f"port {port}: {op} in a secondary: -ENOTSUP "
                    f"({answers(out, op).get(port)})")
    return s


def start_primary(pmd, prefix):
    eal = ["-l", "0-1", "--file-prefix", prefix, "--no-pci", "-d", pmd,
           "--log-level", "pmd.net.vbr:info"]
    if os.environ.get("VBR_SANITIZE_PRELOAD"):
        # Secondaries map the primary's memory at the primary's address;
        # where the sanitizer's shadow and the libraries' mappings make
        # the default one collide now and then ("Cannot get a virtual
        # area at requested address"), a base far from both is taken.
        eal += ["--base-virtaddr", "0x200000000000"]
    for vdev in tp.pair_vdevs("mp"):
        eal += ["--vdev", vdev]
    t = tp.TestPmd(eal, ["--total-num-mbufs=8192"], prefix)
    t.wait_prompt()
    return t


def port_macs(t):
    macs = {}
    for port in (0, 1):
        m = re.search(r"MAC address: ([0-9A-F:]{17})",
                      t.cmd(f"show port info {port}"))
        macs[port] = m.group(1) if m else "?"
    return macs


def run(pmd, exe, tools):
    c = tp.Checker()
    os.environ["VBR_PMD"] = pmd     # the PMD devtools/dpdk-secondary.sh loads
    prefix = f"vbr-mp-{os.getpid()}"
    tmp = os.path.join(os.path.dirname(exe), f"mp-{os.getpid()}")
    huge = Hugepages()
    t = None
    s = None
    try:
        why = huge.reserve(HUGE_ADD)
        if why:
            print(f"SKIP: {why}")
            return tp.SKIP
        os.makedirs(tmp, exist_ok=True)
        t = start_primary(pmd, prefix)
        macs = port_macs(t)
        send_bursts(t, 4)
        check_proc_info(c, t, tools, prefix, pmd, macs)
        t.cmd("clear port stats all")
        check_dumpcap(c, t, tools, prefix, tmp, macs)

        s = check_secondary(c, t, exe, prefix, pmd)
        rc, _ = s.quit()
        s = None
        c.check(rc == 0, f"vbr-mp-secondary exits 0 ({rc})")

        # the secondaries are gone: the primary forwards, counted exactly
        t.cmd("clear port stats all")
        send_bursts(t, 3)
        st = tp.port_stats(t.cmd("show port stats 1"), 1) or {}
        c.check(st.get("RX-packets", 0) + st.get("RX-missed", 0) == 96,
                f"after the secondaries: 96 frames on port 1 ({st})")
        # close and attach a port: the action is there for the new port
        t.cmd("port stop all")
        t.cmd("port close 0")
        t.cmd("port close 1")
        out = t.cmd("port attach net_vbr2,wire=loop")
        m = re.search(r"Port (\d+) is attached", out)
        c.check(m is not None, f"a port attached after close ({out})")
        new = int(m.group(1)) if m else 0
        t.cmd(f"port start {new}")
        rc, out = run_tool([tools, "dpdk-proc-info", "--file-prefix",
                            prefix, "--no-pci", "--", "--show-port"])
        c.check(rc == 0 and "device net_vbr2" in out,
                "proc-info reads the port attached after the others closed")

        # the primary dies under a secondary
        s = Secondary(exe, prefix, pmd)
        out = s.cmd("stats")
        c.check(answers(out, "stats").get(new, ["-1"])[0] == "0",
                f"the new secondary reads port {new}")
        t.kill()
        t = None
        out = s.cmd("stats")
        ret = answers(out, "stats").get(new, ["0"])[0]
        c.check(ret in ("-5", "-110"),
                f"the primary gone: the secondary's stats read fails "
                f"(-EIO or -ETIMEDOUT: {ret})")
        rc, _ = s.quit()
        s = None
        c.check(rc == 0, f"the secondary exits 0 after the primary ({rc})")
    finally:
        huge.give_back()
        for tool in tools_running:
            if tool.p.poll() is None:
                tool.p.kill()
                tool.p.wait()
        if s is not None:
            s.p.kill()
            s.p.wait()
        if t is not None:
            # its exit status too: a crash or a sanitizer report at exit
            rc = t.quit()
            c.check(rc == 0, f"the primary testpmd exits 0 ({rc})")
        shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
        huge.release(prefix)
    print(f"{'FAILED' if c.failed else 'OK'}: {c.failed} failed")
    return 1 if c.failed else 0


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    if os.geteuid() != 0:
        print("SKIP: needs root (hugepages)")
        return tp.SKIP
    for tool in ("dpdk-testpmd", "dpdk-proc-info", "dpdk-dumpcap",
                 "tcpdump", "readelf"):
        if shutil.which(tool) is None:
            print(f"SKIP: {tool} not installed")
            return tp.SKIP
    tp.exit_on_signals()
    return run(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]),
               os.path.abspath(sys.argv[3]))


if __name__ == "__main__":
    sys.exit(main())
