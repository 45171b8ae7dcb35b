#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The glue is the only door to a backend: of the PMD's objects, only the
swverbs glue (vbr_glue_sw.c) may call swverbs (swv_*). The rest of the
driver reaches a backend through the glue table alone.
usage: check_glue_door.py <libtmp_rte_net_vbr.a>"""

import subprocess
import sys

DOOR = 'vbr_glue_sw.c.o'


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    out = subprocess.run(['nm', '-A', '--undefined-only', sys.argv[1]],
                         check=True, capture_output=True, text=True).stdout
    members = set()
    bad = []
    for line in out.splitlines():
        # <archive>:<member>:                 U <symbol>
        where, _, rest = line.rpartition(': ')
        member = where.split(':')[-1]
        members.add(member)
        sym = rest.split()[-1] if rest.split() else ''
        if sym.startswith('swv_') and not member.endswith(DOOR):
            bad.append(f'{member}: {sym}')
    if not any(m.endswith(DOOR) for m in members) or len(members) < 5:
        print('nm listed too few objects: cannot check ' + sys.argv[1])
        return 1
    if bad:
        print('swverbs called outside the glue:\n  ' + '\n  '.join(bad))
        return 1
    print(f'ok: {len(members)} objects, swv_* only from {DOOR}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
