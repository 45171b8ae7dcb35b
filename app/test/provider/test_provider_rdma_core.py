#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""rdma-core's own tests on a swverbs device (suite 'provider').

usage: test_provider_rdma_core.py --why REASON
       test_provider_rdma_core.py RUN_SH [MODULE...]

The first form skips (77) with REASON: the provider was not built. The
second runs rdma-core's Python tests, the ones Debian ships with
python3-pyverbs (/usr/share/doc/rdma-core/tests, gzipped where large; the
same version as the pyverbs they drive), unmodified, through their own
run_tests.py under devtools/swverbs-run.sh (RUN_SH) on one device,
swverbs0 on a loop wire: the flow and RSS tests send from one context and
receive on another of the same device and port. MODULE... default to
test_device, test_pd, test_cq, test_cqex, test_qp, test_flow and
test_rss_traffic.

VBR_RDMA_CORE_TESTS names another rdma-core tests/ folder (a source
tree's) to run instead. The tests are copied, unzipped, into a folder of
the build made for the run and removed after it: nothing of rdma-core's
is kept.

Every test's outcome is printed as unittest gives it, then the skip
reasons (rdma-core's own, e.g. its "Create RC QP ... is not supported"
when swverbs answers EOPNOTSUPP for a QP type it does not have), and last
the line

    rdma-core tests: N passed, N failed, N skipped

Exit status: 0 when no test failed or raised an error, 1 otherwise (also
when the run did not finish), 77 when pyverbs or its tests are not
installed (devtools/setup.sh installs python3-pyverbs).
"""

import collections
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile

DEBIAN_TESTS = "/usr/share/doc/rdma-core/tests"
PYTHON = "/usr/bin/python3"	# Debian's, where pyverbs is
MODULES = ["test_device", "test_pd", "test_cq", "test_cqex", "test_qp",
           "test_flow", "test_rss_traffic"]
SPEC = "swverbs0=loop"
TIMEOUT = 300

# unittest -v: "<name or first docstring line> ... <outcome>"
OUTCOME = re.compile(r" \.\.\. (ok|FAIL|ERROR|skipped '(.*)'|expected failure"
                     r"|unexpected success)$")
SUMMARY = re.compile(r"^(OK|FAILED)(?: \((.*)\))?$")
RAN = re.compile(r"^Ran (\d+) tests? in ")


def pkg_version(pkg):
    try:
        p = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg],
                           capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    return p.stdout.strip() if p.returncode == 0 and p.stdout else None


def copy_tests(src, dst):
    """rdma-core's tests/ into dst/tests, *.py.gz unzipped."""
    out = os.path.join(dst, "tests")
    os.mkdir(out)
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        if not os.path.isfile(path):
            continue
        if name.endswith(".py.gz"):
            with gzip.open(path, "rb") as f, \
                    open(os.path.join(out, name[:-3]), "wb") as g:
                shutil.copyfileobj(f, g)
        elif name.endswith(".py"):
            shutil.copy(path, out)
    return out


def counts(out, rc):
    """passed, failed, skipped, skip reasons, and why the run is bad."""
    reasons = collections.Counter()
    per = collections.Counter()
    for line in out.splitlines():
        m = OUTCOME.search(line)
        if m is None:
            continue
        word = m.group(1).split(" ")[0]
        per[word] += 1
        if word == "skipped":
            reasons[m.group(2)] += 1
    ran = summary = None
    for line in out.splitlines():
        m = RAN.match(line)
        if m:
            ran = int(m.group(1))
        m = SUMMARY.match(line)
        if m:
            summary = dict((k.strip(), int(v)) for k, v in
                           (kv.split("=") for kv in
                            (m.group(2) or "").split(", ") if kv))
    if ran is None or summary is None:
        # did not finish: what was seen, and the run itself as a failure
        failed = per["FAIL"] + per["ERROR"] + per["unexpected"] + 1
        return (per["ok"] + per["expected"], failed, per["skipped"],
                reasons, f"the run did not finish (exit {rc})")
    failed = (summary.get("failures", 0) + summary.get("errors", 0) +
              summary.get("unexpected successes", 0))
    skipped = summary.get("skipped", 0)
    passed = ran - failed - skipped
    bad = None
    if rc != 0 and failed == 0:
        bad = f"run_tests.py exited {rc} with no failed test"
        failed = 1
    return passed, failed, skipped, reasons, bad


def needs_kernel(src):
    """Why these rdma-core tests cannot run on a device with no kernel
    side, or None. From rdma-core 45 on (Debian 13's 56.1), tests/base.py
    asks the kernel's RDMA netlink for every device's netdev (get_net_name
    runs 'rdma link show -j' in each test's setUp): a provider-only device
    such as swverbs' is not there, and every test would fail on it."""
    for name in ("base.py", "base.py.gz"):
        path = os.path.join(src, name)
        if not os.path.isfile(path):
            continue
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "rt") as f:
            text = f.read()
        if "['rdma', 'link'" in text:
            return ("ask the kernel's RDMA netlink for each device's netdev "
                    "('rdma link show -j', tests/base.py get_net_name), "
                    "where swverbs' devices (a provider without a kernel "
                    "device) are not: they run on a kernel RDMA device only")
    return None


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--why":
        print(f"SKIP: the swverbs provider was not built: {sys.argv[2]}")
        return 77
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        print(__doc__)
        return 2
    run_sh = os.path.abspath(sys.argv[1])
    modules = sys.argv[2:] or MODULES
    src = os.environ.get("VBR_RDMA_CORE_TESTS") or DEBIAN_TESTS
    if not os.path.isfile(os.path.join(src, "run_tests.py")):
        print(f"SKIP: no rdma-core tests in {src} (Debian's python3-pyverbs "
              "ships them: run devtools/setup.sh)")
        return 77
    if subprocess.run([PYTHON, "-c", "import pyverbs.device"],
                      capture_output=True).returncode != 0:
        print(f"SKIP: {PYTHON} cannot import pyverbs (Debian's "
              "python3-pyverbs: run devtools/setup.sh)")
        return 77
    pyv = pkg_version("python3-pyverbs")
    why = needs_kernel(src)
    if why:
        print(f"SKIP: rdma-core's tests in {src}"
              + (f" (python3-pyverbs {pyv})" if pyv and src == DEBIAN_TESTS
                 else "")
              + f" {why}")
        return 77
    print(f"rdma-core tests from {src}"
          + (" (python3-pyverbs " + pyv + ", the pyverbs they drive)"
             if pyv and src == DEBIAN_TESTS else "")
          + f", on {SPEC}: {' '.join(modules)}", flush=True)

    tmp = tempfile.mkdtemp(prefix="rdma-core-tests-",
                           dir=os.environ.get("MESON_BUILD_ROOT"))
    try:
        tests = copy_tests(src, tmp)
        cmd = [run_sh, SPEC, "--", PYTHON, os.path.join(tests, "run_tests.py"),
               "--dev", "swverbs0", "--port", "1", "-v"]
        cmd += ["tests." + m for m in modules]
        env = dict(os.environ, TMPDIR=tmp, PYTHONDONTWRITEBYTECODE="1")
        try:
            p = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True,
                               text=True, timeout=TIMEOUT)
            out, rc = p.stdout + p.stderr, p.returncode
        except subprocess.TimeoutExpired as e:
            out = ((e.stdout or b"").decode(errors="replace") +
                   (e.stderr or b"").decode(errors="replace"))
            rc = f"none: killed after {TIMEOUT} s"
        print(out, end="" if out.endswith("\n") else "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    passed, failed, skipped, reasons, bad = counts(out, rc)
    if reasons:
        print("skipped, with rdma-core's reasons:")
        for why, n in sorted(reasons.items(), key=lambda r: (-r[1], r[0])):
            print(f"  {n:3d}  {why}")
    if bad:
        print(f"FAIL: {bad}")
    line = (f"rdma-core tests: {passed} passed, {failed} failed, "
            f"{skipped} skipped")
    print(line)
    # the line swverbs.rst shows, by shape
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "..", "..")
    sys.path.insert(0, os.path.join(root, "app", "test", "scripts"))
    import doc_shapes
    wrong = doc_shapes.shape(doc_shapes.block(root, "doc/guides/swverbs.rst",
                                              "rdma-core-summary"), [line])
    for w in wrong:
        print(f"FAIL: doc/guides/swverbs.rst's summary line: {w}")
    # devtools/test.sh counts these in place of this one test
    print(f"totals: {passed} passed, {failed} failed, {skipped} skipped")
    return 0 if failed == 0 and not wrong else 1


if __name__ == "__main__":
    sys.exit(main())
