#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Forwarding benchmark, stock dpdk-testpmd, 64-byte packets, one forwarding
# core, fixed time, repetitions interleaved so that drift hits every case:
#
#   vbr-pair      two vbr ports on an in-memory pair wire, io fwd, tx_first
#                 (progress=thread: the swverbs engine thread)
#   vbr-pair-service  the same with progress=service: a DPDK service on a
#                 service lcore runs the ports' swverbs engine
#   vbr-pair-inline  the same with progress=inline: no engine, the
#                 forwarding lcore's own burst calls do the ports' work
#   memif         net_memif server + client in the same process, same test
#   vbr-afp-tx    vbr on af_packet:<veth>, txonly (peer in a netns drops)
#   afpacket-tx   net_af_packet on the same veth, txonly
#   afxdp-tx      net_af_xdp on the same veth, txonly (when it starts)
#   vbr-shm       two vbr ports of one process on the two ends of a shm
#                 cable, io fwd, tx_first (the wire's cost next to vbr-pair)
#   vbr-shm-2p    two testpmd processes, one vbr port each on one shm
#                 cable: process A txonly, process B rxonly
#   memif-2p      two testpmd processes, net_memif server (A, txonly) and
#                 client (B, rxonly), the same test
#   vbr-xdp-tx    vbr on af_xdp:<veth>, txonly, on the same veth
#   vbr-afp-tx-inline, vbr-xdp-tx-inline, vbr-shm-2p-inline  the same
#                 cases with progress=inline (no engine thread)
#   vbr-xdp-rx    vbr on af_xdp:<veth>, rxonly; frames from a generator in
#                 the netns (testpmd txonly on net_af_xdp on the peer)
#   afxdp-rx      net_af_xdp on the same veth, rxonly, the same generator
#   vbr-xdp-rx-inline  vbr-xdp-rx with progress=inline: the forwarding
#                 lcore 1 (CPU 1) alone pulls the socket's Rx ring, as
#                 net_af_xdp's does; the generator on CPU 0 as above
#   vbr-afp-rx, vbr-afp-rx-inline  vbr on af_packet:<veth>, rxonly,
#                 progress=thread and inline, the same generator
#   afpacket-rx   net_af_packet on the same veth, rxonly, the same generator
#   vbr-pair-inline-meter  vbr-pair-inline with one rte_mtr meter on every
#                 frame of both ports (rule eth -> meter, trTCM at rates
#                 no run reaches: every frame green, policy green to queue
#                 0), against vbr-pair-inline in the same run; core layout
#                 as vbr-pair-inline (-l 0,1, fwd lcore 1 alone does the
#                 work, the meter's one lcore)
#   vbr-pair-inline-rule  vbr-pair-inline with the meter case's rule and
#                 no meter (rule eth -> queue 0): the fair peer of
#                 vbr-pair-inline-meter. vbr-pair-inline has no rule at
#                 all, so against it the meter case also pays for the
#                 device's rule lookup and the tag it reads; the issue's
#                 "meter on every frame vs no meter" is printed against
#                 both (-l 0,1 as vbr-pair-inline)
#   vbr-pair-inline-2lc-meter  two forwarding lcores on two CPUs, each
#                 port's two Rx queues split between them (testpmd gives
#                 lcore 1 queue 0 of both ports, lcore 2 queue 1), one meter
#                 per port that both lcores' queues share: rule eth / ipv4 /
#                 udp -> meter / rss, policy passthru (the rule's RSS) for
#                 green and yellow; io with --txonly-multi-flow so RSS
#                 spreads the frames; against vbr-pair-inline-2lc, the same
#                 rule without the meter, in the same run. Core layout:
#                 --lcores 0@0,1@0,2@1 (main lcore 0 idle and fwd lcore 1 on
#                 CPU 0, fwd lcore 2 on CPU 1), progress=inline
#   vbr-pair-inline-1k-meter  one meter per rule over 1k rules per port
#                 (rule i: eth / ipv4 dst is 10.253.0.0 + i -> meter i),
#                 flowgen over 1024 flows (frame i % 1024 hits rule i: every
#                 meter in use), against vbr-pair-inline-1k, the same 1k
#                 rules with queue 0 and no meter; -l 0,1 as
#                 vbr-pair-inline (fwd lcore 1 alone on CPU 1). Flowgen
#                 builds the frames it sends, so its Mpps are below io's
#   vbr-pair-inline-1k-mark  the same 1k rules with mark i / queue 0 and
#                 no meter: the device tags each frame and the Rx burst
#                 reads the tag and its action table entry, as for a
#                 meter; against it the 1k meter case shows what the
#                 policer itself costs (informative: the issue's peer is
#                 vbr-pair-inline-1k); -l 0,1 as vbr-pair-inline
#   vbr-mtr-slices  not testpmd: build/app/bench/bench-flow-rules
#                 --meter-slices 1000: 1000 rules without a meter and 1000
#                 with one meter each on one port, frames cycling over the
#                 rules of one set in 20-ms slices that alternate between
#                 the sets, so that the machine's changes of speed hit
#                 both alike (the 1k-meter / 1k ratio above comes from
#                 separate processes, which land on different speeds
#                 here); progress=inline, -l 1: the one lcore does all
#                 of the ports' work, the policer included
#   vbr-csum-slices  not testpmd: build/app/bench/bench-flow-rules
#                 --csum-slices LEN, LEN 60 and 1514: Rx without and with
#                 the checksum offloads (vbr verifies them in software,
#                 as it must on a ConnectX), two port pairs of one process
#                 on two pair cables, LEN-byte IPv4 UDP frames (checksums
#                 right) circulating on each, in 20-ms slices alternating
#                 between the pairs; progress=inline, -l 1 (the one lcore
#                 does all of the ports' work, the checks included)
#   vbr-mtr-micro  not testpmd: build/app/bench/bench-mtr, 1000 meters on
#                 a port: creation and destruction rate, bytes per meter
#                 (DPDK heap and libc heap, measured), the policer's cycles
#                 per frame; -l 0,1 (two EAL lcores: a meter's per-lcore
#                 records are for two)
#
# and the CPU an idle started vbr port costs (forwarding stopped, 5 s), per
# progress model.
#
# Mpps = packets counted by testpmd (RX for io, TX for txonly) / wall time
# between start and stop. Two cycles/packet columns: testpmd's
# --record-core-cycles figure (the forwarding lcore only) and the whole
# process's CPU time (all threads, so the swverbs engine too) times the TSC
# rate, divided by the packets.
#
# Core layout: -l 0,1: main lcore 0, forwarding lcore 1; the swverbs engine
# thread on the main lcore's CPU (the PMD's default), or on VBR_ENGINE_CPU=N
# (devarg engine_cpu=N). vbr-pair-service: --lcores 0@0,1@1,2@0 -S 2: main
# lcore 0 and service lcore 2 (the engine's passes) on CPU 0, forwarding
# lcore 1 on CPU 1: the same two CPUs as the thread case. vbr-pair-inline:
# -l 0,1: main lcore 0 (idle at the prompt) on CPU 0, forwarding lcore 1 on
# CPU 1, which is the only CPU the ports use (no engine thread).
# The two-process cases: process A on CPU 0, process
# B on CPU 1 (--lcores 0@N,1@N: main and forwarding lcore on that CPU, the
# swverbs engine thread there too, as VBR_ENGINE_CPU does not apply to
# them); Mpps = B's RX-packets / A's forwarding time, process cycles/packet
# = both processes' CPU time / those packets.
# The -rx cases add the generator, its forwarding
# lcore on CPU 0 (main lcore on 1, asleep): on a 2-CPU machine it shares
# CPU 0 with the swverbs engine, which does vbr's wire Rx.
#
# usage: bench-fwd.sh [seconds per run (5)] [repetitions (3)]
# Environment: VBR_BUILD_DIR (default build), VBR_ENGINE_CPU, BENCH_CASES
# (comma-separated subset of the case names above).
# Needs root for the veth cases (skipped otherwise). Not a test: no pass/fail.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export VBR_ROOT=$ROOT
export VBR_PMD=$ROOT/${VBR_BUILD_DIR:-build}/drivers/librte_net_vbr.so
export BENCH_SECS=${1:-5}
export BENCH_REPS=${2:-3}
export BENCH_CASES=${BENCH_CASES:-}
[ -f "$VBR_PMD" ] || [[ -n "$BENCH_CASES" && "$BENCH_CASES" != *vbr* ]] || { echo "bench-fwd.sh: build first ($VBR_PMD)" >&2; exit 1; }

exec /usr/bin/python3 - <<'EOF'
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.environ["VBR_ROOT"]
sys.path.insert(0, os.path.join(ROOT, "app", "test", "scripts"))
import testpmd_driver as tp  # noqa: E402

PMD = os.environ["VBR_PMD"]
SECS = float(os.environ["BENCH_SECS"])
REPS = int(os.environ["BENCH_REPS"])
ENGINE = os.environ.get("VBR_ENGINE_CPU", "")
VETH = f"vbn{os.getpid()}"  # unique per run
SOCK = "/run/vbr-bench.sock"
CLK_TCK = os.sysconf("SC_CLK_TCK")
QUIET = open(os.devnull, "w")


def vbr(idx, wire):
    """A progress=thread port (engine_cpu= alone selects thread)."""
    arg = f"net_vbr{idx},wire={wire}"
    return arg + (f",engine_cpu={ENGINE}" if ENGINE else ",progress=thread")


CASES = {
    "vbr-pair": ("io", [vbr(0, "pair:bench"), vbr(1, "pair:bench")]),
    "memif": ("io", [f"net_memif0,role=server,socket={SOCK}",
                     f"net_memif1,role=client,socket={SOCK}"]),
    "vbr-shm": ("io", [vbr(0, f"shm:bench{os.getpid()}"),
                       vbr(1, f"shm:bench{os.getpid()}")]),
    "vbr-afp-tx": ("txonly", [vbr(0, f"af_packet:{VETH}0")]),
    "afpacket-tx": ("txonly", [f"net_af_packet0,iface={VETH}0"]),
    "afxdp-tx": ("txonly", [f"net_af_xdp0,iface={VETH}0,start_queue=0"]),
    "vbr-xdp-tx": ("txonly", [vbr(0, f"af_xdp:{VETH}0")]),
    "vbr-xdp-rx": ("rxonly", [vbr(0, f"af_xdp:{VETH}0")]),
    "afxdp-rx": ("rxonly", [f"net_af_xdp0,iface={VETH}0,start_queue=0"]),
}
GEN_VDEV = f"net_af_xdp0,iface={VETH}1,start_queue=0"


def gen_start():
    """The -rx cases' generator: testpmd txonly in the netns on the peer,
    64 B, forwarding lcore on CPU 0 (main lcore 1 waits on stdin)."""
    eal, prefix = tp.eal_args("bench-gen", None, "0,1")
    eal += ["--main-lcore", "1", "--vdev", GEN_VDEV]
    argv = ["ip", "netns", "exec", f"{VETH}ns", tp.find_testpmd()] + eal + [
        "--", "--forward-mode=txonly", "--txpkts=64", "--burst=32",
        "--total-num-mbufs=16384", "--auto-start", "--stats-period=0"]
    g = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=QUIET,
                         stderr=QUIET, env=tp.testpmd_env())
    time.sleep(2)  # EAL and port start; frames flow from then on
    if g.poll() is not None:
        raise RuntimeError("the generator did not start")
    return g, prefix


def gen_stop(g, prefix):
    try:
        g.stdin.close()  # "Press enter to exit"
        g.wait(10)
    except (subprocess.TimeoutExpired, BrokenPipeError):
        g.kill()
        g.wait()
    shutil.rmtree(f"/var/run/dpdk/{prefix}", ignore_errors=True)

# progress=service: the ports' engine on a service lcore (2, on CPU 0 with
# the main lcore), the forwarding lcore alone on CPU 1.
CASES["vbr-pair-service"] = (
    "io", [f"net_vbr{i},wire=pair:bench,progress=service" for i in (0, 1)])
SERVICE_LCORES = ["--lcores", "0@0,1@1,2@0", "-S", "2"]
LCORES = {"vbr-pair-service": SERVICE_LCORES}
APP_ARGS = {}  # testpmd options of a case beyond the common ones

# progress=inline: no engine; -l 0,1 as for memif, fwd lcore 1 alone works.
CASES["vbr-pair-inline"] = (
    "io", [f"net_vbr{i},wire=pair:bench,progress=inline" for i in (0, 1)])
# The kernel wires inline: the forwarding lcore 1 (CPU 1) copies, kicks and
# pulls itself, as net_af_packet and net_af_xdp do.
# A meter on every frame: the inline pair, its ports set up as below.
CASES["vbr-pair-inline-meter"] = CASES["vbr-pair-inline"]
SETUP = {"vbr-pair-inline-meter": [
    cmd for port in (0, 1) for cmd in (
        f"add port meter profile trtcm_rfc2698 {port} 1 100000000000 "
        f"100000000000 1000000000 1000000000 0",
        f"add port meter policy {port} 1 g_actions queue index 0 / end "
        f"y_actions queue index 0 / end r_actions drop / end",
        f"create port meter {port} 1 1 1 yes 0xffff 0 g 0",
        f"flow create {port} ingress pattern eth / end actions meter "
        f"mtr_id 1 / end")]}
# The meter case's rule without the meter: its fair peer.
SETUP["vbr-pair-inline-rule"] = [
    f"flow create {port} ingress pattern eth / end actions queue index 0 / "
    f"end" for port in (0, 1)]
CASES["vbr-pair-inline-rule"] = CASES["vbr-pair-inline"]
# Two Rx lcores sharing one meter per port, and the same without it.
TWO_LC = ["--lcores", "0@0,1@0,2@1"]
for _c in ("vbr-pair-inline-2lc", "vbr-pair-inline-2lc-meter"):
    CASES[_c] = CASES["vbr-pair-inline"]
    LCORES[_c] = TWO_LC
    APP_ARGS[_c] = ["--nb-cores=2", "--rxq=2", "--txq=2",
                    "--txonly-multi-flow"]
SETUP["vbr-pair-inline-2lc"] = [
    f"flow create {port} ingress pattern eth / ipv4 / udp / end actions "
    f"rss / end" for port in (0, 1)]
SETUP["vbr-pair-inline-2lc-meter"] = [
    cmd for port in (0, 1) for cmd in (
        f"add port meter profile trtcm_rfc2698 {port} 1 100000000000 "
        f"100000000000 1000000000 1000000000 0",
        f"add port meter policy {port} 1 g_actions passthru / end "
        f"y_actions passthru / end r_actions drop / end",
        f"create port meter {port} 1 1 1 yes 0xffff 0 g 0",
        f"flow create {port} ingress pattern eth / ipv4 / udp / end actions "
        f"meter mtr_id 1 / rss / end")]
# One meter per rule over 1k rules, and the same rules without meters.
N_RULES = 1000
for _c in ("vbr-pair-inline-1k", "vbr-pair-inline-1k-meter",
           "vbr-pair-inline-1k-mark"):
    CASES[_c] = ("flowgen", CASES["vbr-pair-inline"][1])
    APP_ARGS[_c] = ["--flowgen-flows=1024"]


def dst(i):
    return f"10.253.{i >> 8}.{i & 255}"


SETUP["vbr-pair-inline-1k"] = [
    f"flow create {port} ingress pattern eth / ipv4 dst is {dst(i)} / end "
    f"actions queue index 0 / end" for port in (0, 1)
    for i in range(N_RULES)]
SETUP["vbr-pair-inline-1k-mark"] = [
    f"flow create {port} ingress pattern eth / ipv4 dst is {dst(i)} / end "
    f"actions mark id {i} / queue index 0 / end" for port in (0, 1)
    for i in range(N_RULES)]
SETUP["vbr-pair-inline-1k-meter"] = [
    cmd for port in (0, 1) for cmd in (
        f"add port meter profile trtcm_rfc2698 {port} 1 100000000000 "
        f"100000000000 1000000000 1000000000 0",
        f"add port meter policy {port} 1 g_actions queue index 0 / end "
        f"y_actions queue index 0 / end r_actions drop / end")] + [
    cmd for port in (0, 1) for i in range(N_RULES) for cmd in (
        f"create port meter {port} {i} 1 1 yes 0xffff 0 g 0",
        f"flow create {port} ingress pattern eth / ipv4 dst is {dst(i)} / "
        f"end actions meter mtr_id {i} / end")]
CASES["vbr-afp-tx-inline"] = (
    "txonly", [f"net_vbr0,wire=af_packet:{VETH}0,progress=inline"])
CASES["vbr-xdp-tx-inline"] = (
    "txonly", [f"net_vbr0,wire=af_xdp:{VETH}0,progress=inline"])
# af_packet Rx: frames from the -rx cases' generator in the netns; the
# port's CPU 1 (fwd lcore; inline: the only one the port uses; thread: the
# engine on CPU 0 with the generator).
CASES["vbr-afp-rx"] = ("rxonly", [vbr(0, f"af_packet:{VETH}0")])
CASES["vbr-afp-rx-inline"] = (
    "rxonly", [f"net_vbr0,wire=af_packet:{VETH}0,progress=inline"])
CASES["afpacket-rx"] = ("rxonly", [f"net_af_packet0,iface={VETH}0"])
AFP_RX_CASES = ["vbr-afp-rx", "vbr-afp-rx-inline", "afpacket-rx"]
# af_xdp Rx inline: CPU 1 (fwd lcore) is the only one the port uses; the
# generator's lcore on CPU 0, with nothing of vbr's there.
CASES["vbr-xdp-rx-inline"] = (
    "rxonly", [f"net_vbr0,wire=af_xdp:{VETH}0,progress=inline"])
XDP_RX_CASES = ["vbr-xdp-rx-inline"]
XDP_RX_RATIOS = (("vbr-xdp-rx-inline", "afxdp-rx"),)
# The af_xdp ratios again, rep by rep: the two runs of a rep are next to
# each other in time, so the machine's swings (two speed levels, other
# load) move both, where the medians of each case may come from different
# levels.
XDP_PAIRED = (("vbr-xdp-tx", "afxdp-tx"), ("vbr-xdp-tx-inline", "afxdp-tx"),
              ("vbr-xdp-rx", "afxdp-rx"), ("vbr-xdp-rx-inline", "afxdp-rx"))


def print_paired(res):
    for a, b in XDP_PAIRED:
        ra, rb = res.get(a, []), res.get(b, [])
        if len(ra) != REPS or len(rb) != REPS:
            continue  # a failed run: the reps no longer line up
        mp = sorted(x[0] / y[0] for x, y in zip(ra, rb))
        cp = sorted(x[2] / y[2] for x, y in zip(ra, rb))
        print(f"{a} / {b}, paired by rep: {mp[len(mp) // 2]:.2f}x Mpps "
              f"({' '.join(f'{v:.2f}' for v in mp)}), "
              f"{cp[len(cp) // 2]:.2f}x process cycles/packet")
AFP_RX_RATIOS = (("vbr-afp-rx", "afpacket-rx"),
                 ("vbr-afp-rx-inline", "afpacket-rx"))


# Two-process cases: (vdev of A, vdev of B); {tag} makes names unique.
CASES_2P = {
    "vbr-shm-2p": ("net_vbr0,wire=shm:bench{tag},progress=thread",
                   "net_vbr0,wire=shm:bench{tag},progress=thread"),
    "vbr-shm-2p-inline": ("net_vbr0,wire=shm:bench{tag},progress=inline",
                          "net_vbr0,wire=shm:bench{tag},progress=inline"),
    "memif-2p": ("net_memif0,role=server,socket=/run/vbr-bench{tag}.sock",
                 "net_memif0,role=client,socket=/run/vbr-bench{tag}.sock"),
}


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def start(case):
    mode, vdevs = CASES[case]
    eal, prefix = tp.eal_args("bench", PMD if "vbr" in case else None, "0,1")
    if case in LCORES:
        i = eal.index("-l")
        eal[i:i + 2] = LCORES[case]
    for v in vdevs:
        eal += ["--vdev", v]
    t = tp.TestPmd(eal, [f"--forward-mode={mode}", "--total-num-mbufs=16384",
                         "--record-core-cycles", "--txpkts=64",
                         "--burst=32"] + APP_ARGS.get(case, []), prefix,
                    log=QUIET)
    t.wait_prompt()
    return t


def mtr_micro():
    """bench-mtr's lines: meter creation, memory, policer cycles."""
    exe = os.path.join(ROOT, os.environ.get("VBR_BUILD_DIR", "build"),
                       "app", "bench", "bench-mtr")
    if not os.path.exists(exe):
        return ["bench-mtr not built"]
    r = subprocess.run([exe, PMD, "1000", "-l", "0,1"],
                       capture_output=True, text=True)
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    return lines if r.returncode == 0 else lines + [
        f"bench-mtr failed: {r.stderr.strip().splitlines()[-1:]}"]


def mtr_slices():
    """bench-flow-rules --meter-slices: (Mpps plain, Mpps metered, diff %)
    as medians over the slice pairs, or a line saying why not."""
    build = os.path.join(ROOT, os.environ.get("VBR_BUILD_DIR", "build"))
    exe = os.path.join(build, "app", "bench", "bench-flow-rules")
    if not os.path.exists(exe):
        return "bench-flow-rules not built"
    pre = f"bfms{os.getpid()}"
    vdevs = [a for i in (0, 1) for a in (
        "--vdev", f"net_vbr{i},wire=pair:{pre},progress=inline")]
    r = subprocess.run(
        [exe, "-l", "1", "--no-huge", "-m", "2048", "--no-shconf",
         "--no-pci", "-d", PMD, "--file-prefix", pre] + vdevs +
        ["--", "--rules", "1", "--masks", "1", "--mask-rules", "1",
         "--seconds", str(max(SECS, 2)), "--no-stopped",
         "--meter-slices", "1000"], capture_output=True, text=True)
    for ln in r.stdout.splitlines():
        if ln.startswith("# meter-slices:") or " failed " in ln:
            return ln
    for ln in r.stdout.splitlines():
        f = ln.split()
        if len(f) == 8 and f[1] == "meter-slices":
            return float(f[5]), float(f[6]), float(f[7])
    return f"bench-flow-rules failed (exit {r.returncode})"


def csum_slices(length):
    """bench-flow-rules --csum-slices LEN: (Mpps off, Mpps on, diff %) as
    medians over the slice pairs, or a line saying why not."""
    build = os.path.join(ROOT, os.environ.get("VBR_BUILD_DIR", "build"))
    exe = os.path.join(build, "app", "bench", "bench-flow-rules")
    if not os.path.exists(exe):
        return "bench-flow-rules not built"
    pre = f"bfcs{os.getpid()}"
    vdevs = [a for i in range(4) for a in (
        "--vdev", f"net_vbr{i},wire=pair:{pre}{i // 2},progress=inline")]
    r = subprocess.run(
        [exe, "-l", "1", "--no-huge", "-m", "2048", "--no-shconf",
         "--no-pci", "-d", PMD, "--file-prefix", pre] + vdevs +
        ["--", "--rules", "1", "--masks", "1", "--mask-rules", "1",
         "--seconds", str(max(SECS, 2)), "--no-stopped",
         "--csum-slices", str(length)], capture_output=True, text=True)
    for ln in r.stdout.splitlines():
        if ln.startswith("# csum-slices:") or " failed " in ln:
            return ln
    for ln in r.stdout.splitlines():
        f = ln.split()
        if len(f) == 8 and f[1] == "csum-slices":
            return float(f[5]), float(f[6]), float(f[7])
    return f"bench-flow-rules failed (exit {r.returncode})"


def one_run(case):
    mode = CASES[case][0]
    t = start(case)
    gen = None
    try:
        if mode == "rxonly":
            gen = gen_start()
        t.cmd("set txpkts 64")
        for cmd in SETUP.get(case, []):
            if not re.search(r"created|^\s*$", t.cmd(cmd).split(cmd, 1)[-1]
                             .strip() or " ", re.M):
                raise RuntimeError(f"setup refused: {cmd}")
        pid = t.proc.pid
        # stdbuf exec()s testpmd: the pid is testpmd's
        c0, w0 = cpu_ticks(pid), time.monotonic()
        t.cmd("start tx_first" if mode == "io" else "start")
        time.sleep(SECS)
        out = t.cmd("stop")
        w1, c1 = time.monotonic(), cpu_ticks(pid)
        if gen is not None:
            gen_stop(*gen)
            gen = None
        st = tp.fwd_stats(out)
        key = "TX-packets" if mode == "txonly" else "RX-packets"
        pkts = sum(s.get(key, 0) for s in st.values())
        m = re.search(r"CPU cycles/packet=([\d.]+).* at (\d+) MHz", out)
        fwd_cpp = float(m.group(1)) if m else float("nan")
        mhz = int(m.group(2)) if m else 0
        proc_cpp = ((c1 - c0) / CLK_TCK * mhz * 1e6 / pkts) if pkts else float("nan")
        t.quit()
        return pkts / (w1 - w0) / 1e6, fwd_cpp, proc_cpp
    except RuntimeError as e:
        print(f"  {case}: {str(e).splitlines()[0]}", file=sys.stderr)
        t.kill()
        return None
    finally:
        if gen is not None:
            gen_stop(*gen)
        t.kill()
        if os.path.exists(SOCK):
            os.unlink(SOCK)


def start_2p(case, rep):
    """Processes A (CPU 0, txonly) and B (CPU 1, rxonly) of a 2p case,
    their links up."""
    tag = f"{os.getpid()}r{rep}"
    procs = []
    try:
        for cpu, vdev, mode in ((0, CASES_2P[case][0], "txonly"),
                                (1, CASES_2P[case][1], "rxonly")):
            eal, prefix = tp.eal_args(f"bench{'AB'[cpu]}{rep}",
                                      PMD if "vbr" in case else None)
            i = eal.index("-l")
            eal[i:i + 2] = ["--lcores", f"0@{cpu},1@{cpu}"]
            eal += ["--vdev", vdev.format(tag=tag)]
            t = tp.TestPmd(eal, [f"--forward-mode={mode}",
                                 "--total-num-mbufs=16384", "--txpkts=64",
                                 "--burst=32"], prefix, log=QUIET)
            procs.append(t)
            t.wait_prompt()
    except RuntimeError:
        for t in procs:
            t.kill()
        raise
    a, b = procs
    end = time.monotonic() + 10
    while time.monotonic() < end and not (
            "Link status: up" in a.cmd("show port info 0") and
            "Link status: up" in b.cmd("show port info 0")):
        time.sleep(0.1)
    return a, b


def one_run_2p(case, rep):
    a = b = None
    try:
        a, b = start_2p(case, rep)
        b.cmd("start")
        pids = (a.proc.pid, b.proc.pid)
        c0, w0 = sum(cpu_ticks(p) for p in pids), time.monotonic()
        a.cmd("start")
        time.sleep(SECS)
        a.cmd("stop")
        w1, c1 = time.monotonic(), sum(cpu_ticks(p) for p in pids)
        st = tp.fwd_stats(b.cmd("stop"))
        pkts = sum(s.get("RX-packets", 0) for s in st.values())
        mhz = tsc_mhz()
        proc_cpp = ((c1 - c0) / CLK_TCK * mhz * 1e6 / pkts) if pkts else float("nan")
        a.quit()
        b.quit()
        return pkts / (w1 - w0) / 1e6, float("nan"), proc_cpp
    except RuntimeError as e:
        print(f"  {case}: {str(e).splitlines()[0]}", file=sys.stderr)
        return None
    finally:
        for t in (a, b):
            if t is not None:
                t.kill()


TSC_MHZ = []


def tsc_mhz():
    """The TSC rate testpmd prints with --record-core-cycles (one run)."""
    if not TSC_MHZ:
        t = start("vbr-pair")
        try:
            t.cmd("start tx_first")
            time.sleep(0.5)
            m = re.search(r" at (\d+) MHz", t.cmd("stop"))
            TSC_MHZ.append(int(m.group(1)) if m else 0)
            t.quit()
        finally:
            t.kill()
    return TSC_MHZ[0]


def idle_cpu_2p():
    """CPU of two started, idle processes on one shm cable (% of a CPU)."""
    a = b = None
    try:
        a, b = start_2p("vbr-shm-2p", "idle")
        b.cmd("start")
        a.cmd("start")
        time.sleep(1)
        a.cmd("stop")
        b.cmd("stop")
        time.sleep(1)
        pids = (a.proc.pid, b.proc.pid)
        c0, w0 = sum(cpu_ticks(p) for p in pids), time.monotonic()
        time.sleep(5)
        c1, w1 = sum(cpu_ticks(p) for p in pids), time.monotonic()
        a.quit()
        b.quit()
        return 100.0 * (c1 - c0) / CLK_TCK / (w1 - w0)
    finally:
        for t in (a, b):
            if t is not None:
                t.kill()


def idle_cpu(case="vbr-pair"):
    t = start(case)
    try:
        t.cmd("start tx_first")
        time.sleep(1)
        t.cmd("stop")
        time.sleep(1)
        pid = t.proc.pid
        c0, w0 = cpu_ticks(pid), time.monotonic()
        time.sleep(5)
        c1, w1 = cpu_ticks(pid), time.monotonic()
        t.quit()
        return 100.0 * (c1 - c0) / CLK_TCK / (w1 - w0)
    finally:
        t.kill()


def main():
    cases = ["vbr-pair", "vbr-pair-service", "vbr-pair-inline",
             "vbr-pair-inline-meter", "vbr-pair-inline-rule", "memif",
             "vbr-pair-inline-2lc", "vbr-pair-inline-2lc-meter",
             "vbr-pair-inline-1k", "vbr-pair-inline-1k-meter",
             "vbr-pair-inline-1k-mark",
             "vbr-shm", "vbr-shm-2p", "vbr-shm-2p-inline", "memif-2p"]
    root = os.geteuid() == 0
    veth_up = False
    script = os.path.join(ROOT, "devtools", "netns-veth.sh")
    if root and os.path.exists(script):
        subprocess.run(["bash", script, "up", VETH], check=True, stdout=QUIET)
        veth_up = True
        cases += ["vbr-afp-tx", "vbr-afp-tx-inline", "afpacket-tx",
                  "afxdp-tx"]
        cases += ["vbr-xdp-tx", "vbr-xdp-tx-inline", "vbr-xdp-rx",
                  "afxdp-rx"]
        cases += AFP_RX_CASES
        cases += XDP_RX_CASES
    else:
        print("(not root or no netns-veth.sh: veth cases skipped)")
    only = [c for c in os.environ.get("BENCH_CASES", "").split(",") if c]
    if only:
        cases = [c for c in cases if c in only]
    res = {c: [] for c in cases}
    try:
        for rep in range(REPS):
            for c in cases:
                r = one_run_2p(c, rep) if c in CASES_2P else one_run(c)
                print(f"rep {rep + 1}/{REPS} {c:16s} " +
                      (f"{r[0]:7.3f} Mpps" if r else "failed"), flush=True)
                if r:
                    res[c].append(r)
        idle = idle_cpu() if "vbr-pair" in cases else None
        idle_svc = (idle_cpu("vbr-pair-service")
                    if "vbr-pair-service" in cases else None)
        idle_2p = idle_cpu_2p() if "vbr-shm-2p" in cases else None
        idle_inl = (idle_cpu("vbr-pair-inline")
                    if "vbr-pair-inline" in cases else None)
        micro = mtr_micro() if (not only or "vbr-mtr-micro" in only) \
            else None
        slices = [mtr_slices() for _ in range(REPS)] \
            if (not only or "vbr-mtr-slices" in only) else None
        csum = {n: [csum_slices(n) for _ in range(REPS)]
                for n in (60, 1514)} \
            if (not only or "vbr-csum-slices" in only) else None
    finally:
        if veth_up:
            subprocess.run(["bash", script, "down", VETH], stdout=QUIET)

    print()
    print(f"64 B, {SECS:g} s x {REPS} interleaved runs, median shown; "
          f"-l 0,1 (main 0, fwd 1), swverbs engine "
          f"{'on cpu ' + ENGINE if ENGINE else 'on the main lcore CPU 0 (default)'}")
    if "vbr-pair-service" in cases:
        print("vbr-pair-service: " + " ".join(SERVICE_LCORES) +
              " (main lcore 0 and service lcore 2 on CPU 0, fwd lcore 1 "
              "on CPU 1)")
    if "vbr-pair-inline" in cases:
        print("vbr-pair-inline: -l 0,1 (main lcore 0 on CPU 0, fwd lcore 1 "
              "on CPU 1 does all the ports' work; no engine thread)")
    print(f"{'case':16s} {'Mpps':>8s} {'fwd-core cyc/pkt':>17s} "
          f"{'process cyc/pkt':>16s}  runs")

    def med(vals):
        vals = sorted(vals)
        return vals[len(vals) // 2] if vals else float("nan")
    rows = {}
    for c in cases:
        if not res[c]:
            print(f"{c:16s} {'n/a':>8s}")
            continue
        rows[c] = [med([r[i] for r in res[c]]) for i in range(3)]
        mpps, fcpp, pcpp = rows[c]
        print(f"{c:16s} {mpps:8.3f} {fcpp:17.1f} {pcpp:16.1f}  "
              + " ".join(f"{r[0]:.3f}" for r in res[c]))
    print()
    for a, b in (("vbr-pair", "memif"), ("vbr-afp-tx", "afpacket-tx"),
                 ("vbr-afp-tx", "afxdp-tx"), ("vbr-xdp-tx", "afxdp-tx"),
                 ("vbr-xdp-rx", "afxdp-rx"),
                 ("vbr-pair-service", "vbr-pair"),
                 ("vbr-pair-service", "memif"),
                 ("vbr-shm", "vbr-pair"), ("vbr-shm-2p", "memif-2p"),
                 ("vbr-shm-2p-inline", "memif-2p"),
                 ("vbr-afp-tx-inline", "afpacket-tx"),
                 ("vbr-xdp-tx-inline", "afxdp-tx"),
                 ("vbr-pair-inline", "memif"),
                 ("vbr-pair-inline", "vbr-pair"),
                 ("vbr-pair-inline-meter", "vbr-pair-inline"),
                 ("vbr-pair-inline-meter", "vbr-pair-inline-rule"),
                 ("vbr-pair-inline-2lc-meter", "vbr-pair-inline-2lc"),
                 ("vbr-pair-inline-1k-meter", "vbr-pair-inline-1k"),
                 ("vbr-pair-inline-1k-meter", "vbr-pair-inline-1k-mark"),
                 ("vbr-pair-inline-1k-mark", "vbr-pair-inline-1k"),
                 *AFP_RX_RATIOS, *XDP_RX_RATIOS):
        if a in rows and b in rows:
            goal = {
                ("vbr-pair-inline-meter", "vbr-pair-inline"):
                    "  (issue 12 goal: >= 0.90x Mpps; its peer has no rule)",
                ("vbr-pair-inline-meter", "vbr-pair-inline-rule"):
                    "  (issue 12 goal: >= 0.90x Mpps; the fair peer)",
                ("vbr-pair-inline-2lc-meter", "vbr-pair-inline-2lc"):
                    "  (issue 12 goal: >= 0.90x Mpps)",
                ("vbr-pair-inline-1k-meter", "vbr-pair-inline-1k"):
                    "  (issue 12 goal: >= 0.90x Mpps)",
                ("vbr-pair-inline-1k-meter", "vbr-pair-inline-1k-mark"):
                    "  (informative: the policer's own share)",
                ("vbr-pair-inline-1k-mark", "vbr-pair-inline-1k"):
                    "  (informative: the tag's share)",
            }.get((a, b), "")
            print(f"{a} / {b}: {rows[a][0] / rows[b][0]:.2f}x Mpps, "
                  f"{rows[a][2] / rows[b][2]:.2f}x process cycles/packet"
                  + goal)
    print_paired(res)
    if idle is not None:
        print(f"idle vbr pair process, progress=thread (started, "
              f"forwarding stopped): "
              f"{idle:.1f}% of one CPU over 5 s")
    if idle_svc is not None:
        print(f"idle vbr pair process, progress=service (started, "
              f"forwarding stopped): {idle_svc:.1f}% of one CPU over 5 s; "
              f"the service lcore polls whatever its services find "
              f"(DPDK's service cores never sleep)")
    if idle_2p is not None:
        print(f"idle vbr shm processes A+B, progress=thread (started, "
              f"forwarding stopped): "
              f"{idle_2p:.1f}% of one CPU over 5 s")
    if idle_inl is not None:
        print(f"idle vbr pair process, progress=inline (started, "
              f"forwarding stopped): {idle_inl:.1f}% of one CPU over 5 s")
    if slices:
        ok = [x for x in slices if isinstance(x, tuple)]
        for x in slices:
            if not isinstance(x, tuple):
                print(f"vbr-mtr-slices: {x}")
        if ok:
            r = sorted(1 + x[2] / 100 for x in ok)
            print(f"vbr-mtr-slices (bench-flow-rules --meter-slices 1000, "
                  f"progress=inline, -l 1), {len(ok)} runs: 1k-meter / 1k "
                  f"in alternating 20-ms slices: {r[len(r) // 2]:.2f}x Mpps "
                  f"({' '.join(f'{v:.2f}' for v in r)}; "
                  f"{' '.join(f'{x[0]:.2f}/{x[1]:.2f}' for x in ok)} Mpps)"
                  f"  (issue 12 goal: >= 0.90x Mpps)")
    for length, runs in (csum or {}).items():
        ok = [x for x in runs if isinstance(x, tuple)]
        for x in runs:
            if not isinstance(x, tuple):
                print(f"vbr-csum-slices {length} B: {x}")
        if ok:
            r = sorted(1 + x[2] / 100 for x in ok)
            print(f"vbr-csum-slices (bench-flow-rules --csum-slices "
                  f"{length}, progress=inline, -l 1), {len(ok)} runs: Rx "
                  f"with software checksums / without, {length} B frames "
                  f"in alternating 20-ms slices: {r[len(r) // 2]:.2f}x Mpps "
                  f"({' '.join(f'{v:.2f}' for v in r)}; "
                  f"{' '.join(f'{x[0]:.2f}/{x[1]:.2f}' for x in ok)} Mpps)")
    if micro:
        print("vbr-mtr-micro (bench-mtr, -l 0,1):")
        for ln in micro:
            print("  " + ln)


main()
EOF
