#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The PMD must link no optional library: no undefined ibv_* symbol and no
NEEDED libibverbs, or every DPDK process on a machine without rdma-core
would fail to load it from the plugin directory."""

import subprocess
import sys


def main():
    so = sys.argv[1]
    undef = subprocess.run(['nm', '-D', '--undefined-only', so],
                           check=True, capture_output=True, text=True).stdout
    bad = [line.split()[-1] for line in undef.splitlines()
           if line.split() and line.split()[-1].startswith('ibv_')]
    dyn = subprocess.run(['readelf', '-d', so], check=True,
                         capture_output=True, text=True).stdout
    needed = [line for line in dyn.splitlines()
              if 'NEEDED' in line and 'ibverbs' in line]
    if not undef.strip():
        print('nm printed nothing: cannot check ' + so)
        return 1
    if bad or needed:
        print('ibv symbols: %s; NEEDED: %s' % (bad, needed))
        return 1
    print('ok: %d undefined symbols, none from libibverbs' %
          len(undef.splitlines()))
    return 0


if __name__ == '__main__':
    sys.exit(main())
