#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""What the PMD and its glue export, and how the PMD is named.

usage: test_exports.py PMD HEADER DPDK_ABI [GLUE]

PMD is the built librte_net_vbr.so.<ABI> (or a link to it), HEADER
rte_pmd_vbr.h, DPDK_ABI the DPDK ABI it is built for (e.g. 23.0), GLUE the
ibverbs glue object when it is built. Fails when:

- the PMD exports a symbol that is not an rte_pmd_vbr_* call of the
  EXPERIMENTAL node (EAL needs no symbol of a plugin; the version nodes
  DPDK_<major> and EXPERIMENTAL themselves are allowed);
- a call HEADER declares is not exported, or not marked
  __rte_experimental there, or exported but not declared;
- the PMD's file is not librte_net_vbr.so.<ABI>, its SONAME not
  librte_net_vbr.so.<ABI major>, or the .so.<major> and .so links beside
  it are missing (DPDK's drivers' layout);
- the glue exports anything but its table, vbr_glue_ibv.
"""

import os
import re
import subprocess
import sys

NODE = re.compile(r"^(DPDK_[0-9]+|EXPERIMENTAL)$")


def exports(path):
    """(type, name, version) of each defined dynamic symbol."""
    out = subprocess.run(["nm", "-D", "--defined-only", path],
                         capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        typ, full = parts[-2], parts[-1]
        name, _, ver = full.partition("@")
        syms.append((typ, name, ver.lstrip("@")))
    return syms


def header_calls(header):
    """{call: marked experimental} for each rte_pmd_vbr_* declaration."""
    with open(header, encoding="utf-8") as f:
        text = f.read()
    # drop comments: their prose names the calls too
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"^\s*#.*$", "", text, flags=re.M)
    calls = {}
    for decl in re.split(r"[;{}]", text):
        m = re.search(r"\b(rte_pmd_vbr_\w+)\s*\(", decl)
        if m:
            head = decl[:m.start()].split()
            calls[m.group(1)] = "__rte_experimental" in head
    return calls


def soname(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True,
                         text=True, check=True).stdout
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", out)
    return m.group(1) if m else None


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__)
        return 2
    pmd, header, abi = sys.argv[1:4]
    glue = sys.argv[4] if len(sys.argv) == 5 else None
    major = abi.split(".")[0]
    bad = []

    real = os.path.realpath(pmd)
    folder = os.path.dirname(real)
    want_file = f"librte_net_vbr.so.{abi}"
    print(f"PMD file: {real}")
    if os.path.basename(real) != want_file:
        bad.append(f"the PMD's file is {os.path.basename(real)}, not "
                   f"{want_file}")
    so = soname(real)
    print(f"SONAME: {so}")
    if so != f"librte_net_vbr.so.{major}":
        bad.append(f"SONAME {so}, not librte_net_vbr.so.{major}")
    for link in (f"librte_net_vbr.so.{major}", "librte_net_vbr.so"):
        p = os.path.join(folder, link)
        if not (os.path.islink(p) and os.path.realpath(p) == real):
            bad.append(f"{p} is not a link to {want_file}")

    calls = header_calls(header)
    print(f"{os.path.basename(header)} declares: {sorted(calls)}")
    if not calls:
        bad.append(f"{header} declares no rte_pmd_vbr_* call")
    for call, marked in sorted(calls.items()):
        if not marked:
            bad.append(f"{call} is not marked __rte_experimental")

    seen = set()
    for typ, name, ver in exports(real):
        if typ == "A" and NODE.match(name):
            continue
        if name.startswith("rte_pmd_vbr_") and ver == "EXPERIMENTAL":
            seen.add(name)
            if name not in calls:
                bad.append(f"{name} is exported but {header} does not "
                           f"declare it")
            continue
        bad.append(f"the PMD exports {name}"
                   f"{'@' + ver if ver else ''} ({typ})")
    for call in sorted(set(calls) - seen):
        bad.append(f"{call} is not exported in the EXPERIMENTAL node")
    print(f"PMD exports: {sorted(seen)}")

    if glue:
        gsyms = exports(glue)
        names = sorted(n for t, n, v in gsyms
                       if not (t == "A" and re.match(r"^VBR_GLUE", n)))
        print(f"glue {glue} exports: {names}")
        if names != ["vbr_glue_ibv"]:
            bad.append(f"the glue exports {names}, not only vbr_glue_ibv")

    for b in bad:
        print(f"FAIL: {b}")
    if not bad:
        print("OK")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
