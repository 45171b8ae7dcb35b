#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Print the ABI version of a DPDK installation, e.g. 23.0 for 22.11.

    devtools/dpdk-abi.py <libdir>/librte_eal.so <RTE_EAL_PMD_PATH>

DPDK names its shared libraries lib<name>.so.<ABI> (librte_eal.so ->
librte_eal.so.23 -> librte_eal.so.23.0) and its plugin folder pmds-<ABI>:
the first gives the ABI, the second stands in when the first is not there
(a DPDK built static only). Exit 1 with the reason when neither does.
"""

import os
import re
import sys


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    eal, pmd_path = sys.argv[1], sys.argv[2]
    m = re.search(r"\.so\.([0-9]+\.[0-9]+)$", os.path.realpath(eal))
    if m is None:
        m = re.search(r"/pmds-([0-9]+\.[0-9]+)/*$", pmd_path)
    if m is None:
        print(f"the DPDK ABI version is neither in the name of the file "
              f"{eal} points to ({os.path.realpath(eal)}) nor in "
              f"RTE_EAL_PMD_PATH ({pmd_path})", file=sys.stderr)
        return 1
    print(m.group(1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
