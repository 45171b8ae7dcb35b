#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Find the rdma-core provider headers the swverbs provider is built with.

usage: rdma-core-pabi.py --lib LIBIBVERBS_SO [--dir INCLUDE_DIR | --sdk SDK]

The provider (lib/swverbs/provider.c) is built against rdma-core's private
driver.h, whose layouts are those of one private provider ABI: it must be
the ABI the installed libibverbs.so.1 exports, verbs_register_driver_NN
under IBVERBS_PRIVATE_NN. devtools/setup.sh lays the headers out in
SDK/rdma-core-<version>/include, with the tree's IBVERBS_PABI_VERSION in
its config.h (and SDK/rdma-core-<version>/pabi).

Prints, and exits 0:
    include=<the include folder>
    pabi=<NN>
    version=<rdma-core version of the headers>
or prints why=<the reason no provider can be built> and exits 1.
"""

import argparse
import glob
import os
import re
import subprocess
import sys


def installed_pabi(lib):
    """The NN of verbs_register_driver_NN that lib exports, or a reason."""
    try:
        out = subprocess.run(["objdump", "-T", lib], capture_output=True,
                             text=True, check=False).stdout
    except OSError as e:
        return None, f"cannot run objdump on {lib}: {e}"
    m = re.search(r"\sverbs_register_driver_(\d+)$", out, re.M)
    if m is None:
        return None, (f"{lib} exports no verbs_register_driver_NN (no "
                      "private provider ABI to build a provider for)")
    return m.group(1), None


def tree_pabi(inc):
    """IBVERBS_PABI_VERSION of the headers in inc (their config.h)."""
    try:
        with open(os.path.join(inc, "config.h")) as f:
            m = re.search(r"^#define IBVERBS_PABI_VERSION (\d+)", f.read(),
                          re.M)
    except OSError:
        return None
    return m.group(1) if m else None


def version_of(inc):
    """rdma-core-<version>/include -> <version>."""
    base = os.path.basename(os.path.dirname(os.path.abspath(inc)))
    return base[len("rdma-core-"):] if base.startswith("rdma-core-") else "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--dir", default="")
    ap.add_argument("--sdk", default="")
    a = ap.parse_args()

    want, why = installed_pabi(a.lib)
    if want is None:
        print(f"why={why}")
        return 1
    if a.dir:
        incs = [a.dir]
    else:
        incs = sorted(glob.glob(os.path.join(a.sdk, "rdma-core-*",
                                             "include")), reverse=True)
    if not incs:
        print(f"why=no rdma-core provider headers in {a.sdk}/rdma-core-*/"
              "include: run devtools/setup.sh (it fetches them from "
              "rdma-core's Debian source package)")
        return 1
    found = []
    for inc in incs:
        if not os.path.isfile(os.path.join(inc, "infiniband", "driver.h")):
            found.append(f"{inc}: no infiniband/driver.h")
            continue
        have = tree_pabi(inc)
        if have == want:
            print(f"include={os.path.abspath(inc)}")
            print(f"pabi={want}")
            print(f"version={version_of(inc)}")
            return 0
        found.append(f"{inc}: private ABI {have or 'unknown (no config.h)'}")
    print(f"why=the installed libibverbs.so.1 ({a.lib}) has private ABI "
          f"{want} (verbs_register_driver_{want}), and no rdma-core "
          f"provider headers of that ABI were found ({'; '.join(found)}): "
          "run devtools/setup.sh")
    return 1


if __name__ == "__main__":
    sys.exit(main())
