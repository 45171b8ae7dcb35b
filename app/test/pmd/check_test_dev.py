#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The suites take their device from the environment: with VBR_TEST_DEV
(and VBR_TEST_DEV_PEER) they open their ports on it, not on swverbs; a
two-port suite without the peer skips (77), and so does a group that needs
swverbs internals. Here the named devices do not exist, so the suite that
tries them fails.
usage: check_test_dev.py <test-flow-pmd> <test-vbr-pmd> <librte_net_vbr.so>"""

import os
import subprocess
import sys


def run(prog, env):
    e = dict(os.environ)
    e.pop('VBR_TEST_DEV', None)
    e.pop('VBR_TEST_DEV_PEER', None)
    e.update(env)
    p = subprocess.run(prog, env=e, capture_output=True, text=True,
                       timeout=120)
    return p.returncode, p.stdout + p.stderr


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    flow, pmd_test, pmd = sys.argv[1:]
    failed = 0

    def check(cond, what, out):
        nonlocal failed
        print(('PASS: ' if cond else 'FAIL: ') + what, flush=True)
        if not cond:
            failed += 1
            print(out[-2000:])

    rc, out = run([flow, pmd], {'VBR_TEST_DEV': 'vbr_no_such_dev',
                                'VBR_TEST_DEV_PEER': 'vbr_no_such_peer'})
    check(rc not in (0, 77) and
          'device: vbr_no_such_dev, peer vbr_no_such_peer' in out and
          'wire=pair' not in out,
          f'flow suite opens VBR_TEST_DEV and its peer (rc {rc})', out)
    rc, out = run([flow, pmd], {'VBR_TEST_DEV': 'vbr_no_such_dev'})
    check(rc == 77 and 'needs VBR_TEST_DEV_PEER' in out,
          f'a two-port suite without VBR_TEST_DEV_PEER skips (rc {rc})', out)
    rc, out = run([pmd_test, pmd, 'devargs'],
                  {'VBR_TEST_DEV': 'vbr_no_such_dev'})
    check(rc == 77 and 'SKIP: group devargs on vbr_no_such_dev' in out,
          f'a swverbs-only group skips with its reason (rc {rc})', out)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
