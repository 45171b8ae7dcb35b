#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""A test that was not built, in the count: prints "SKIP: REASON", exits 77.

usage: skip_test.py REASON...

meson defines it in place of a test whose optional dependency is missing,
so that the test command lists the reason among its skips (and fails the
run unless devtools/skips.allowed allows it) instead of one test fewer.
"""

import sys

if len(sys.argv) < 2:
    print(__doc__)
    sys.exit(2)
print("SKIP: " + " ".join(sys.argv[1:]))
sys.exit(77)
