#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""meson install lays vbr out as a DPDK driver, and it works from there.

usage: test_install.py --build DIR --pmd-dir DIR --glue-dir DIR --libdir DIR
                       --includedir DIR --pcdir DIR --bindir DIR --abi ABI
                       --version V --cc CC [--glue]

1. `meson install --destdir <stage>` of the build; the stage must hold
   exactly: librte_net_vbr.so.<ABI> with its .so.<major> and .so links in
   the plugin folder (--pmd-dir, DPDK's RTE_EAL_PMD_PATH) and nothing else
   there; links to them in DPDK's libdir; the glue
   librte_net_vbr_glue.so.<V> (and its link) in <pmd-dir>-glue (--glue:
   when the build has it); rte_pmd_vbr.h in DPDK's include folder;
   librte_net_vbr.pc beside libdpdk.pc; vbr-stat in --bindir. Anything
   else (swverbs' library or header, say) fails.
2. In a mount namespace of this test's own (unshare), the stage's folders
   are laid over the system's with a read-only overlay: there, and for no
   other process, the machine is as after a real `meson install`:
   - a C program calling rte_pmd_vbr_get_queue_rate_limit() builds with
     `pkg-config --cflags --libs librte_net_vbr` alone (and
     -DALLOW_EXPERIMENTAL_API), and runs: EAL loads the installed PMD with
     no -d, the call answers for the vbr port and says -ENODEV for another;
   - the same program without ALLOW_EXPERIMENTAL_API fails to build under
     -Werror=deprecated-declarations (the calls are __rte_experimental);
   - a plain `dpdk-testpmd --vdev net_vbr0,wire=pair:a --vdev
     net_vbr1,wire=pair:a` (no -d) has two net_vbr ports, loaded from the
     plugin folder;
   - with --glue, a dev= port loads the installed glue (the probe fails on
     the device name, not on the glue).
When the namespace ends, so do its mounts; the stage is removed.

Exit 77: not root (a mount namespace and overlay mounts need it), no
overlay file system, no dpdk-testpmd, or a sanitizer build (the installed
PMD is the normal build's).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

PROG = r"""
#include <errno.h>
#include <stdio.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_pmd_vbr.h>

int
main(int argc, char **argv)
{
	uint32_t rate = 1, burst = 1;
	uint16_t size = 1, port;
	int ret, other;

	if (rte_eal_init(argc, argv) < 0)
		return 2;
	RTE_ETH_FOREACH_DEV(port)
		break;
	if (port >= RTE_MAX_ETHPORTS)
		return 3;
	ret = rte_pmd_vbr_get_queue_rate_limit(port, 0, &rate, &burst, &size);
	other = rte_pmd_vbr_get_queue_rate_limit(RTE_MAX_ETHPORTS - 1, 0,
						 &rate, &burst, &size);
	printf("vbr-install: port %u ret %d rate %u other %d enodev %d\n",
	       port, ret, rate, other, -ENODEV);
	rte_eal_cleanup();
	return 0;
}
"""


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def run(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, capture_output=True, text=True, check=False,
                          **kw)


def expected_files(a):
    """{path: link target or None for a file} the stage must hold."""
    major = a.abi.split(".")[0]
    pmd = "librte_net_vbr.so"
    want = {
        f"{a.pmd_dir}/{pmd}.{a.abi}": None,
        f"{a.pmd_dir}/{pmd}.{major}": f"{pmd}.{a.abi}",
        f"{a.pmd_dir}/{pmd}": f"{pmd}.{major}",
        f"{a.includedir}/rte_pmd_vbr.h": None,
        f"{a.pcdir}/librte_net_vbr.pc": None,
        f"{a.bindir}/vbr-stat": None,
    }
    rel = os.path.relpath(a.pmd_dir, a.libdir)
    for name in (pmd, f"{pmd}.{major}", f"{pmd}.{a.abi}"):
        want[f"{a.libdir}/{name}"] = f"{rel}/{name}"
    if a.glue:
        glue = "librte_net_vbr_glue.so"
        want[f"{a.glue_dir}/{glue}.{a.version}"] = None
        want[f"{a.glue_dir}/{glue}"] = f"{glue}.{a.version}"
    return want


def check_layout(a, stage):
    bad = []
    want = expected_files(a)
    found = {}
    for d, _, files in os.walk(stage):
        for f in files:
            p = os.path.join(d, f)
            found["/" + os.path.relpath(p, stage)] = (
                os.readlink(p) if os.path.islink(p) else None)
    for path, target in sorted(found.items()):
        print(f"  {path}" + (f" -> {target}" if target else ""))
    for path, target in sorted(want.items()):
        if path not in found:
            bad.append(f"{path} is not installed")
        elif found[path] != target:
            bad.append(f"{path} is {'a link to ' + found[path] if found[path] else 'a file'}"
                       f", not {'a link to ' + target if target else 'a file'}")
    for path in sorted(set(found) - set(want)):
        bad.append(f"{path} is installed, and nothing asks for it")
    return bad


def inside(a, stage):
    """In the private mount namespace: lay the stage over /, then run."""
    for top in sorted(os.listdir(stage)):
        src, dst = os.path.join(stage, top), "/" + top
        if not os.path.isdir(dst):
            print(f"FAIL: the install writes under /{top}, which this "
                  f"machine does not have")
            return 1
        res = run(["mount", "-t", "overlay", "overlay", "-o",
                   f"lowerdir={src}:{dst}", dst])
        if res.returncode != 0:
            print(f"overlay over {dst}: {res.stderr.strip()}")
            return 77
    bad = []
    work = tempfile.mkdtemp(prefix="vbr-install-prog-")
    try:
        src = os.path.join(work, "prog.c")
        with open(src, "w", encoding="utf-8") as f:
            f.write(PROG)
        res = run(["pkg-config", "--cflags", "--libs", "librte_net_vbr"])
        print(res.stdout + res.stderr)
        if res.returncode != 0:
            bad.append("pkg-config does not find librte_net_vbr")
            return report(bad)
        flags = res.stdout.split()
        prog = os.path.join(work, "prog")
        res = run([a.cc, "-DALLOW_EXPERIMENTAL_API", src, "-o", prog] +
                  flags)
        print(res.stdout + res.stderr)
        if res.returncode != 0:
            bad.append("the program does not build with pkg-config's flags")
        else:
            eal = ["--no-huge", "-m", "256", "--no-shconf", "--no-pci",
                   "--file-prefix", f"vbrinstall{os.getpid()}",
                   "--log-level=lib.eal:debug",
                   "--vdev", "net_vbr0,wire=loop"]
            res = run([prog] + eal, timeout=120)
            out = res.stdout + res.stderr
            print(out[-3000:])
            m = re.search(r"vbr-install: port \d+ ret (-?\d+) rate (\d+) "
                          r"other (-?\d+) enodev (-?\d+)", out)
            if res.returncode != 0 or m is None:
                bad.append(f"the program exited {res.returncode} without "
                           f"its line")
            elif (m.group(1) != "0" or m.group(2) != "0" or
                  m.group(3) != m.group(4)):
                bad.append(f"rte_pmd_vbr_get_queue_rate_limit answered "
                           f"{m.group(0)}: want ret 0 rate 0, -ENODEV for "
                           f"another port")
            if not re.search(rf"open shared lib {re.escape(a.pmd_dir)}/"
                             rf"librte_net_vbr\.so", out):
                bad.append(f"EAL did not load the PMD from {a.pmd_dir}")
        res = run([a.cc, "-Werror=deprecated-declarations", "-c", src,
                   "-o", os.path.join(work, "prog.o")] + flags)
        if res.returncode == 0:
            bad.append("rte_pmd_vbr_* builds without ALLOW_EXPERIMENTAL_API:"
                       " not __rte_experimental in the installed header")
        else:
            print("without ALLOW_EXPERIMENTAL_API, refused as it should be")

        testpmd = ["dpdk-testpmd", "--no-huge", "-m", "512", "--no-shconf",
                   "--no-pci", "--file-prefix", f"vbrinstall{os.getpid()}",
                   "--log-level=lib.eal:debug"]
        res = run(testpmd + ["--vdev", "net_vbr0,wire=pair:a",
                             "--vdev", "net_vbr1,wire=pair:a",
                             "--", "-i", "--total-num-mbufs=8192"],
                  input="show port info 0\nshow port info 1\nquit\n",
                  timeout=120)
        out = res.stdout + res.stderr
        print("\n".join(line for line in out.splitlines()
                        if "vbr" in line or "Driver name" in line))
        if out.count("Driver name: net_vbr") != 2:
            bad.append("dpdk-testpmd with no -d does not have two net_vbr "
                       "ports")
        if not re.search(rf"open shared lib {re.escape(a.pmd_dir)}/"
                         rf"librte_net_vbr\.so", out):
            bad.append(f"dpdk-testpmd did not load the PMD from {a.pmd_dir}")

        if a.glue:
            res = run(testpmd + ["--vdev", "net_vbr0,dev=vbr_install_none",
                                 "--", "-i"], input="quit\n", timeout=120)
            out = res.stdout + res.stderr
            lines = [ln for ln in out.splitlines() if "vbr" in ln]
            print("\n".join(lines))
            if any("glue" in ln for ln in lines):
                bad.append("a dev= port did not load the installed glue")
            elif not any("vbr_install_none" in ln for ln in lines):
                bad.append("a dev= port's probe did not reach the device "
                           "list")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return report(bad)


def report(bad):
    for b in bad:
        print(f"FAIL: {b}")
    if not bad:
        print("OK")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    for opt in ("build", "pmd-dir", "glue-dir", "libdir", "includedir",
                "pcdir", "bindir", "abi", "version", "cc"):
        ap.add_argument("--" + opt, required=True)
    ap.add_argument("--glue", action="store_true")
    ap.add_argument("--inside", metavar="STAGE")
    a = ap.parse_args()
    if a.inside:
        return inside(a, a.inside)

    if os.environ.get("VBR_SANITIZE_PRELOAD"):
        skip("a sanitizer build: the installed PMD is the normal build's")
    if os.geteuid() != 0:
        skip("needs root: a mount namespace with overlay mounts")
    if shutil.which("dpdk-testpmd") is None:
        skip("dpdk-testpmd is not installed")
    with open("/proc/filesystems", encoding="utf-8") as f:
        if not re.search(r"\soverlay$", f.read(), re.M):
            skip("no overlay file system in this kernel")

    stage = tempfile.mkdtemp(prefix="install-stage-",
                             dir=os.path.abspath(a.build))
    try:
        os.chmod(stage, 0o755)
        res = run(["meson", "install", "-C", a.build, "--no-rebuild",
                   "--destdir", stage])
        if res.returncode != 0:
            print(res.stdout[-3000:] + res.stderr[-3000:])
            return report(["meson install --destdir failed"])
        print(f"installed into {stage}:")
        bad = check_layout(a, stage)
        if bad:
            return report(bad)
        args = [sys.executable, os.path.abspath(__file__), "--inside", stage]
        for opt in ("build", "pmd_dir", "glue_dir", "libdir", "includedir",
                    "pcdir", "bindir", "abi", "version", "cc"):
            args += ["--" + opt.replace("_", "-"), getattr(a, opt)]
        if a.glue:
            args.append("--glue")
        res = subprocess.run(["unshare", "--mount", "--propagation",
                              "private"] + args, check=False)
        return res.returncode
    finally:
        shutil.rmtree(stage, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
