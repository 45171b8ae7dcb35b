#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""dpdk-pmdinfo.py must describe the built PMD: name net_vbr, its devargs.

usage: test_pmdinfo.py PATH/librte_net_vbr.so
Exit 77 when dpdk-pmdinfo.py is not installed.
"""

import json
import re
import shutil
import subprocess
import sys

DEVARGS = ("wire", "dev", "mac")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    tool = shutil.which("dpdk-pmdinfo.py")
    if tool is None:
        print("SKIP: dpdk-pmdinfo.py not installed (package dpdk-dev)")
        return 77
    res = subprocess.run([tool, sys.argv[1]], capture_output=True, text=True)
    print(res.stdout + res.stderr)
    if res.returncode != 0:
        print(f"FAIL: dpdk-pmdinfo.py exited {res.returncode}")
        return 1
    infos = [i for i in json.loads(res.stdout) if i.get("name") == "net_vbr"]
    if len(infos) != 1:
        print(f"FAIL: {len(infos)} entries named net_vbr (want 1)")
        return 1
    params = infos[0].get("params", "")
    keys = set(re.findall(r"(?:^|\s)([a-z_]+)=", params))
    missing = [k for k in DEVARGS if k not in keys]
    if missing:
        print(f"FAIL: params '{params}' lack: {', '.join(missing)}")
        return 1
    if "pci_ids" in infos[0]:
        print("FAIL: a virtual device must not list PCI ids")
        return 1
    print(f"PASS: net_vbr params: {params}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
