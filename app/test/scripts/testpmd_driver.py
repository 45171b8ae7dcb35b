# SPDX-License-Identifier: BSD-3-Clause
"""Drive stock dpdk-testpmd in interactive mode through a pipe.

testpmd's cmdline echoes every command it reads and prints the prompt
"testpmd> " again once the command is done; stdout runs line-buffered
(stdbuf -oL) so that what a command prints comes before the next prompt.
cmd() sends one command and returns what it printed.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

PROMPT = "testpmd> "
# What may follow a command's prompt: nothing, or event lines testpmd
# prints on its own (an LSC or removal event raised while it was idle).
ASYNC_AFTER_PROMPT = re.compile(r"(\s*Port \d+: [^\n]* event\s*)*")
# An event line as testpmd prints it from its interrupt thread ("\nPort 0:
# link state change event\n"), which may land inside the prompt it is
# printing on the main thread ("test" event "pmd> "): taken out before the
# prompt is looked for (t.out keeps it).
EVENT_LINE = re.compile(r"\nPort \d+: [^\n]*? event\n")
# testpmd's printf of that line reaches a line-buffered stdout in two
# writes, "\nPort " (it holds a newline: flushed at once) and "0: link
# state change event\n", and the prompt's characters may land between
# them: each half is taken out on its own too.
EVENT_HEAD = re.compile(r"\nPort (?!\d)")
EVENT_TAIL = re.compile(r"\d+: [a-z][a-z ]*? event\n")
# Or in the two writes "\n" and "Port 0: link state change event\n"
# (glibc flushes a line-buffered stream up to the last newline it was
# handed): the line without its newline, which lands on its own, in a
# prompt ("t" "\n" "estpmd> ") or in a command's echo.
EVENT_BARE = re.compile(r"Port \d+: [a-z][a-z ]*? event\n")
PROMPT_SPLIT = [PROMPT[:k] + "\n" + PROMPT[k:] for k in range(1, len(PROMPT))]


def strip_events(text):
    """testpmd's output without the event lines its interrupt thread
    printed into it, whole or in their halves."""
    text = EVENT_LINE.sub("", text)
    if "\nPort " in text:
        n = len(EVENT_HEAD.findall(text))
        # count=0 would take out every tail ("1: link state change
        # event" of a whole line after "Port 0 is closed"): none then
        if n > 0:
            text = EVENT_HEAD.sub("", text)
            text = EVENT_TAIL.sub("", text, count=n)
    if EVENT_BARE.search(text):
        text = EVENT_BARE.sub("", text)
        for split in PROMPT_SPLIT:
            text = text.replace(split, PROMPT)
    return text


def find_echo(tail, line):
    """Where the echo of a command starts and ends in @tail, (-1, -1) if
    it is not there: a newline an event split off may sit inside it."""
    i = tail.find(line)
    if i >= 0:
        return i, i + len(line)
    m = re.search("\n?".join(re.escape(c) for c in line), tail)
    return (m.start(), m.end()) if m else (-1, -1)

SKIP = 77


def find_testpmd():
    return shutil.which("dpdk-testpmd")


def testpmd_env():
    """Environment for testpmd: in a sanitizer build (meson's default test
    setup sets VBR_SANITIZE_PRELOAD to the runtimes' paths) the PMD is
    instrumented and stock testpmd is not, so the runtimes are preloaded;
    they must come first in LD_PRELOAD."""
    env = dict(os.environ)
    preload = env.get("VBR_SANITIZE_PRELOAD", "")
    if preload:
        libs = [p for p in [preload, env.get("LD_PRELOAD", "")] if p]
        env["LD_PRELOAD"] = ":".join(libs)
    return env


def eal_args(tag, pmd, lcores="0-1"):
    """EAL options for a test process: no hugepages, no shared files."""
    prefix = f"vbr-{tag}-{os.getpid()}"
    args = ["-l", lcores, "--no-huge", "-m", "512", "--no-shconf",
            "--file-prefix", prefix, "--no-pci", "--log-level", "pmd.net.vbr:info"]
    if pmd:
        args += ["-d", pmd]
    return args, prefix


def test_progress():
    """The progress model the suites run swverbs ports with:
    VBR_TEST_PROGRESS (thread, service, inline), or None (the PMD's default).
    devtools/test.sh runs the PMD suites once per model."""
    return os.environ.get("VBR_TEST_PROGRESS") or None


def _lcore_ids(spec):
    """The lcore ids of an EAL -l list such as "0-1" or "0,2"."""
    ids = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        ids += range(int(lo), int(hi or lo) + 1)
    return ids


def progress_eal(eal):
    """eal with the test's progress model applied: progress=<model> added
    to every wire= port whose devargs do not choose (progress=, or
    engine_cpu=, which belongs to thread), and for service a service lcore
    (-S) beside the -l ones, mapped with --lcores to any CPU."""
    model = test_progress()
    if model is None:
        return eal
    out = []
    i = 0
    while i < len(eal):
        a = eal[i]
        if a == "--vdev" and i + 1 < len(eal):
            v = eal[i + 1]
            name, _, args = v.partition(",")
            if (args.startswith("wire=") and "progress=" not in args
                    and "engine_cpu=" not in args):
                v = f"{v},progress={model}"
            out += [a, v]
            i += 2
            continue
        if a == "-l" and model == "service" and i + 1 < len(eal):
            try:
                ids = _lcore_ids(eal[i + 1])
            except ValueError:  # a list this helper does not read
                out.append(a)
                i += 1
                continue
            svc = max(ids) + 1
            cpus = f"(0-{os.cpu_count() - 1})"
            out += ["--lcores",
                    ",".join(f"{c}@{c}" for c in ids) + f",{svc}@{cpus}",
                    "-S", str(svc)]
            i += 2
            continue
        out.append(a)
        i += 1
    return out


class TestPmd:
    """One interactive testpmd process."""

    def __init__(self, eal, app, prefix=None, log=sys.stdout):
        self.prefix = prefix
        self.log = log
        self.out = ""
        self.lock = threading.Condition()
        eal = progress_eal(eal)
        argv = ["stdbuf", "-oL", find_testpmd()] + eal + ["--"] + ["-i"] + app
        if test_progress() is not None:
            print(f"progress model: {test_progress()} (VBR_TEST_PROGRESS)",
                  file=log, flush=True)
        print("+ " + " ".join(argv), file=log, flush=True)
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, bufsize=0, env=testpmd_env())
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while True:
            chunk = self.proc.stdout.read1(65536) if hasattr(
                self.proc.stdout, "read1") else os.read(
                    self.proc.stdout.fileno(), 65536)
            if not chunk:
                break
            text = chunk.decode("utf-8", "replace")
            self.log.write(text)
            self.log.flush()
            with self.lock:
                self.out += text
                self.lock.notify_all()
        with self.lock:
            self.lock.notify_all()

    def _wait(self, pred, timeout):
        deadline = time.monotonic() + timeout
        with self.lock:
            while not pred():
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and
                                 not self.reader.is_alive()):
                    return pred()
                self.lock.wait(min(left, 0.2))
            return True

    def wait_prompt(self, timeout=60):
        """Wait for the first prompt (start-up done)."""
        if not self._wait(lambda: PROMPT in strip_events(self.out), timeout):
            raise RuntimeError("testpmd did not reach its prompt:\n" +
                               self.out[-3000:])

    def cmd(self, line, timeout=30):
        """Send one command, return its output (echo and prompt excluded)."""
        with self.lock:
            start = len(self.out)
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()

        def done():
            tail = strip_events(self.out[start:])
            # the echo of the command, its output, then a fresh prompt,
            # after which testpmd may print asynchronous event lines
            # ("Port 0: link state change event") with no new prompt
            i = find_echo(tail, line)[0]
            j = tail.rfind(PROMPT)
            return i >= 0 and j > i and \
                ASYNC_AFTER_PROMPT.fullmatch(tail[j + len(PROMPT):])
        if not self._wait(done, timeout):
            raise RuntimeError(f"no prompt after '{line}':\n" +
                               self.out[start:][-3000:])
        tail = strip_events(self.out[start:])
        tail = tail[find_echo(tail, line)[1]:]
        return tail[:tail.rfind(PROMPT)]

    def quit(self, timeout=30):
        """Send quit, wait for exit; return the exit code."""
        try:
            self.proc.stdin.write(b"quit\n")
            self.proc.stdin.flush()
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            rc = -9
        self.reader.join(5)
        self.cleanup()
        return rc

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.cleanup()

    def cleanup(self):
        if self.prefix and "/" not in self.prefix:
            shutil.rmtree(f"/var/run/dpdk/{self.prefix}", ignore_errors=True)


def port_stats(text, port):
    """Parse 'show port stats' output: dict of counters for one port."""
    m = re.search(r"NIC statistics for port %d\s+#+(.*?)#{10,}" % port,
                  text, re.S)
    if not m:
        return None
    return {k: int(v) for k, v in re.findall(r"([A-Za-z-]+):\s+(\d+)",
                                             m.group(1))}


def wait_rx(t, port, want, seconds=20):
    """Poll 'show port stats' until the port has received want packets
    (or seconds pass): the frames sent are counted, not waited for."""
    end = time.monotonic() + seconds
    while True:
        st = port_stats(t.cmd(f"show port stats {port}"), port) or {}
        if st.get("RX-packets", 0) >= want or time.monotonic() > end:
            return st
        time.sleep(0.1)


def wait_until(read, done, seconds=20, step=0.05):
    """Call read() until done(its value) holds or seconds pass; return the
    last value read, for the caller to check exactly. A counter the
    device publishes later than the command that made it move (another
    thread's pass, on a loaded machine) is waited for, not slept for."""
    end = time.monotonic() + seconds
    while True:
        v = read()
        if done(v) or time.monotonic() > end:
            return v
        time.sleep(step)


def fwd_stats(text):
    """Parse the per-port 'Forward statistics' blocks 'stop' prints."""
    stats = {}
    for m in re.finditer(r"Forward statistics for port (\d+)\s+-+(.*?)-{10,}",
                         text, re.S):
        stats[int(m.group(1))] = {
            k: int(v) for k, v in re.findall(r"([A-Z][A-Za-z-]+):\s+(\d+)",
                                             m.group(2))}
    return stats


class Checker:
    """Collects check results; exit status 1 when any failed."""

    def __init__(self):
        self.failed = 0

    def check(self, cond, what):
        print(("PASS: " if cond else "FAIL: ") + what, flush=True)
        if not cond:
            self.failed += 1
        return cond


def pair_vdevs(tag, profile=None):
    """The --vdev arguments of two cabled ports: a swverbs pair wire (with
    profile=@profile when given), or VBR_TEST_DEV and VBR_TEST_DEV_PEER
    when VBR_TEST_DEV names a NIC (the suite exits 77 without the peer)."""
    dev = os.environ.get("VBR_TEST_DEV") or None
    peer = os.environ.get("VBR_TEST_DEV_PEER") or None
    if dev is None:
        cable = f"{tag}{os.getpid()}"
        extra = f",profile={profile}" if profile else ""
        return [f"net_vbr0,wire=pair:{cable}{extra}",
                f"net_vbr1,wire=pair:{cable}{extra}"]
    if peer is None:
        print(f"SKIP: VBR_TEST_DEV={dev}: a two-port suite needs "
              "VBR_TEST_DEV_PEER=<the port cabled to it>", flush=True)
        sys.exit(SKIP)
    print(f"device: {dev}, peer {peer} (VBR_TEST_DEV)", flush=True)
    return [f"net_vbr0,dev={dev}", f"net_vbr1,dev={peer}"]


def start_pair(tag, pmd, app, profile=None):
    """testpmd on two vbr ports (0, 1) joined by one cable (pair_vdevs)."""
    eal, prefix = eal_args(tag, pmd)
    for vdev in pair_vdevs(tag, profile):
        eal += ["--vdev", vdev]
    return TestPmd(eal, app, prefix)


def start_wire(tag, pmd, wire, app=(), lcores="0-1"):
    """testpmd on one vbr port, net_vbr0,wire=@wire (e.g. one end of a shm
    cable that another testpmd process holds the other end of)."""
    eal, prefix = eal_args(tag, pmd, lcores)
    eal += ["--vdev", f"net_vbr0,wire={wire}"]
    return TestPmd(eal, list(app), prefix)


def main(run, doc):
    """Script entry: argv[1] is the PMD; skip (77) without dpdk-testpmd."""
    if len(sys.argv) != 2:
        print(doc)
        return 2
    if find_testpmd() is None:
        print("SKIP: dpdk-testpmd not installed")
        return SKIP
    if not os.path.isfile(sys.argv[1]):
        print(f"FAIL: {sys.argv[1]} not built")
        return 1
    return run(os.path.abspath(sys.argv[1]))


KERNEL_WIRES = ("af_packet", "af_xdp")


def kernel_wire_arg(argv, fixed):
    """The kernel wire kind a veth script runs over: argv[fixed + 1] when
    given (af_packet or af_xdp), af_packet otherwise; None when argv has
    more arguments or an unknown kind."""
    if len(argv) == fixed + 1:
        return "af_packet"
    if len(argv) == fixed + 2 and argv[fixed + 1] in KERNEL_WIRES:
        return argv[fixed + 1]
    return None


def kernel_wire_skip(kind):
    """Why a suite over @kind cannot run on this kernel (af_xdp without
    AF_XDP sockets), or None."""
    if kind != "af_xdp":
        return None
    import errno
    import socket
    try:
        socket.socket(44, socket.SOCK_RAW, 0).close()  # AF_XDP
    except OSError as e:
        if e.errno in (errno.EAFNOSUPPORT, errno.EINVAL):
            return "the kernel has no AF_XDP"
    return None


def exit_on_signals():
    """SIGTERM (meson's timeout), SIGINT and SIGHUP end the script through
    sys.exit(1), so that its finally blocks and with statements still run
    and remove what it made (a network namespace, a cable file)."""
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: sys.exit(1))


def veth_main(run, doc, tools, scapy_here=False,
              py="/usr/bin/python3"):
    """Entry of a script over a veth pair; argv: the PMD, netns-veth.sh,
    then af_packet (default) or af_xdp. Skip (77) without root, without
    one of @tools, without scapy for @py (the interpreter run in the
    namespace) and, with @scapy_here, for this one, or without the wire
    kind in the kernel; then run(pmd, script, kind)."""
    kind = kernel_wire_arg(sys.argv, 2)
    if kind is None:
        print(doc)
        return 2
    if os.geteuid() != 0:
        print("SKIP: needs root (network namespaces, AF_PACKET)")
        return SKIP
    for tool in tools:
        if shutil.which(tool) is None:
            print(f"SKIP: {tool} not installed")
            return SKIP
    pythons = [py] + ([sys.executable] if scapy_here else [])
    for p in pythons:
        if subprocess.run([p, "-c", "import scapy.all"],
                          capture_output=True).returncode != 0:
            print(f"SKIP: scapy not importable by {p}")
            return SKIP
    for path in sys.argv[1:3]:
        if not os.path.isfile(path):
            print(f"FAIL: {path} missing")
            return 1
    if kernel_wire_skip(kind) is not None:
        print("SKIP: " + kernel_wire_skip(kind))
        return SKIP
    exit_on_signals()
    return run(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]),
               kind)
