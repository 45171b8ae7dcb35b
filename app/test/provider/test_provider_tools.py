#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""swverbs devices as the system's RDMA tools see them (suite 'provider').

usage: test_provider_tools.py --why REASON
       test_provider_tools.py RUN_SH SYSFS_SH PROVIDER

The first form skips (77) with REASON: the provider was not built. The
second runs stock ibv_devices and ibv_devinfo -v (Debian's ibverbs-utils)
under devtools/swverbs-run.sh (RUN_SH) with the provider PROVIDER and
checks what they print: the devices, their GUIDs, the raw packet, RSS and
packet pacing caps, an active Ethernet port with a RoCE v2 GID. Two
processes on one cable name: over shm: the two ends join (the port is
active while the other process holds its end, down after); over pair: the
second process gets a cable of its own and the warning that says so. Then
the faults: a tree naming an unknown wire or profile makes
ibv_open_device() fail with a line naming the file; swverbs-run.sh
refuses a bad SPEC and removes its tree when the command ends, by itself
or by a signal.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

FAILS = []


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        FAILS.append(what)
    return cond


def run(cmd, env=None, timeout=60):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def port_state(out):
    m = re.search(r"state:\s+(PORT_\w+)", out)
    return m.group(1) if m else None


def two_processes(run_sh, env, tmp):
    """swverbs0 in one process, swverbs1 of the same cable in another."""
    for kind in ("shm", "pair"):
        cable = f"t{os.getpid()}-prov"     # test.sh's stale-file pattern
        spec = f"swverbs0={kind}:{cable},swverbs1={kind}:{cable}"
        log = open(os.path.join(tmp, f"holder-{kind}.log"), "w+")
        holder = subprocess.Popen([run_sh, spec, "--", "ibv_asyncwatch",
                                   "-d", "swverbs0"], env=env,
                                  stdout=log, stderr=subprocess.STDOUT)
        try:
            # the holder has its end once its device shows (shm: the file)
            time.sleep(1.0)
            states = []
            for _ in range(20):
                rc, out, err = run([run_sh, spec, "--", "ibv_devinfo", "-d",
                                    "swverbs1"], env)
                states.append(port_state(out))
                if kind == "pair" or states[-1] == "PORT_ACTIVE":
                    break
                time.sleep(0.25)
            if kind == "shm":
                check(rc == 0 and states[-1] == "PORT_ACTIVE",
                      f"shm: the other process's end joins: port "
                      f"{states} ({rc}: {err.strip()!r})")
            else:
                check(rc == 0 and states[-1] == "PORT_DOWN" and
                      "another process has a pair cable of that name" in
                      err and f"use shm:{cable}" in err,
                      f"pair: a second process gets its own cable, port "
                      f"down, and the warning ({states}, {err.strip()!r})")
        finally:
            holder.send_signal(signal.SIGTERM)
            try:
                holder.wait(timeout=10)
            except subprocess.TimeoutExpired:
                holder.kill()
                holder.wait()
            log.seek(0)
            held = log.read()
            log.close()
        check(holder.returncode == 128 + signal.SIGTERM,
              f"{kind}: the holder ran until stopped ({holder.returncode}: "
              f"{held.strip()!r})")
        if kind == "shm":
            rc, out, err = run([run_sh, spec, "--", "ibv_devinfo", "-d",
                                "swverbs1"], env)
            check(rc == 0 and port_state(out) == "PORT_DOWN",
                  f"shm: the other end gone, the port is down "
                  f"({port_state(out)}: {err.strip()!r})")
            check(not os.path.exists(f"/dev/shm/swverbs-shm.{cable}"),
                  "shm: the last end removed the cable file")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--why":
        print(f"SKIP: the swverbs provider was not built: {sys.argv[2]}")
        return 77
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    run_sh, sysfs_sh, prov = sys.argv[1:]
    for tool in ("ibv_devices", "ibv_devinfo"):
        if shutil.which(tool) is None:
            print(f"SKIP: {tool} not found (Debian's ibverbs-utils: run "
                  "devtools/setup.sh)")
            return 77
    tmp = tempfile.mkdtemp(prefix="prov-tools-", dir=os.environ.get(
        "MESON_BUILD_ROOT"))
    env = dict(os.environ, SWVERBS_PROVIDER=prov, TMPDIR=tmp)
    spec = "swverbs0=loop,swverbs1=pair:tools,swverbs2=pair:tools+profile=full"

    # ibv_devices: the three devices and their GUIDs, as the tree says.
    rc, out, err = run([run_sh, spec, "--", "ibv_devices"], env)
    check(rc == 0, f"ibv_devices exits 0 ({rc}: {err.strip()})")
    names = re.findall(r"^\s+(swverbs\d)\s+([0-9a-f]{16})$", out, re.M)
    # in libibverbs' order, which is not ours: rdma-core 44 (Debian 12)
    # lists swverbs0 first, 56 (Debian 13) swverbs2
    check(sorted(n for n, _ in names) == ["swverbs0", "swverbs1", "swverbs2"],
          f"ibv_devices lists swverbs0..2: {out!r}")
    check(all(g != "0" * 16 for _, g in names), "each with a GUID")

    # ibv_devinfo -v: the caps vbr relies on, the port, the GID.
    rc, out, err = run([run_sh, spec, "--", "ibv_devinfo", "-v", "-d",
                        "swverbs0"], env)
    check(rc == 0, f"ibv_devinfo -v exits 0 ({rc}: {err.strip()})")
    for pat, what in (
            (r"^hca_id:\s+swverbs0$", "hca_id swverbs0"),
            (r"^\s+fw_ver:\s+swverbs \S+ mlx5$", "fw_ver names the profile"),
            (r"^\s+board_id:\s+SWVERBS-mlx5$", "board_id from the tree"),
            (r"raw packet caps:\s*\n\s+C-VLAN stripping offload\s*\n"
             r"\s+IP csum offload", "raw packet caps: VLAN strip, csum"),
            (r"MANAGED_FLOW_STEERING", "flow steering cap"),
            (r"rss_caps:\s*\n\s+max_rwq_indirection_tables:\s+[1-9]",
             "rss caps: indirection tables"),
            (r"rx_hash_function:\s+0x1\b", "rss caps: Toeplitz"),
            (r"supported_qp:\s*\n\s+SUPPORT_RAW_PACKET\s*\n\s+max_wq_type_rq",
             "rss caps: raw packet QPs"),
            (r"packet_pacing_caps:\s*\n\s+qp_rate_limit_min:\s+[1-9]\d*kbps"
             r"\s*\n\s+qp_rate_limit_max:\s+[1-9]\d*kbps\s*\n"
             r"\s+supported_qp:\s*\n\s+SUPPORT_RAW_PACKET",
             "packet pacing caps: limits, raw packet QPs"),
            (r"state:\s+PORT_ACTIVE \(4\)", "port 1 active (loop)"),
            (r"link_layer:\s+Ethernet", "Ethernet link layer"),
            (r"GID\[\s*0\]:\s+fe80::\S+, RoCE v2", "a RoCE v2 GID")):
        check(re.search(pat, out, re.M) is not None, f"ibv_devinfo: {what}")
    rc, out, err = run([run_sh, spec, "--", "ibv_devinfo", "-d",
                        "swverbs2"], env)
    check(rc == 0 and re.search(r"fw_ver:\s+swverbs \S+ full$", out, re.M)
          is not None, f"profile=full shows in fw_ver: {out!r} {err!r}")

    # Two processes, one cable name: ibv_asyncwatch holds one end open
    # (it waits for async events) while ibv_devinfo opens the other.
    two_processes(run_sh, env, tmp)

    # A tree with an unknown wire or profile: the open fails, naming the
    # file. The tree is written by swverbs-sysfs.sh, then spoiled.
    for leaf, value, word in (("swverbs_wire", "bogus:x", "unknown wire"),
                              ("swverbs_profile", "mlx9",
                               "unknown profile")):
        tree = tempfile.mkdtemp(prefix="tree-", dir=tmp)
        rc, _, err = run([sysfs_sh, tree, "swverbs0=loop"])
        check(rc == 0, f"swverbs-sysfs.sh writes a tree ({err.strip()})")
        path = os.path.join(tree, "class", "infiniband", "swverbs0",
                            "device", leaf)
        with open(path, "w") as f:
            f.write(value + "\n")
        benv = dict(env, SYSFS_PATH=tree, LD_PRELOAD=prov)
        rc, out, err = run(["ibv_devinfo", "-d", "swverbs0"], benv)
        check(rc != 0 and path in err and word in err,
              f"{leaf}={value}: the open fails naming {path} "
              f"({rc}: {err.strip()!r})")
        shutil.rmtree(tree)

    # swverbs-run.sh: a bad SPEC; its tree goes when the command ends.
    rc, _, err = run([run_sh, "swverbs0=nowire", "--", "true"], env)
    check(rc == 2 and "nowire" in err, f"a bad SPEC: exit 2 ({rc}, {err!r})")
    rc, _, _ = run([run_sh, "swverbs0=loop", "--", "sh", "-c", "exit 7"],
                   env)
    check(rc == 7, f"the command's exit status comes back ({rc})")
    # the command reads the script's stdin (testpmd -i takes its commands
    # there); a background command of bash's would get /dev/null
    p = subprocess.run([run_sh, "swverbs0=loop", "--", "cat"], env=env,
                       input="show port summary all\n", capture_output=True,
                       text=True, timeout=60)
    check(p.returncode == 0 and p.stdout == "show port summary all\n",
          f"the command reads the script's stdin ({p.stdout!r})")
    left = [f for f in os.listdir(tmp) if f.startswith("swverbs-sysfs")]
    check(not left, f"no tree left after the commands: {left}")
    p = subprocess.Popen([run_sh, "swverbs0=loop", "--", "sleep", "30"],
                         env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not any(
            f.startswith("swverbs-sysfs") for f in os.listdir(tmp)):
        time.sleep(0.05)
    time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    try:
        rc = p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = None
    check(rc == 128 + signal.SIGTERM,
          f"SIGTERM ends the command, its status comes back ({rc})")
    left = [f for f in os.listdir(tmp) if f.startswith("swverbs-sysfs")]
    check(not left, f"no tree left after a SIGTERM: {left}")
    shutil.rmtree(tmp, ignore_errors=True)

    if FAILS:
        print(f"{len(FAILS)} check(s) failed")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
