#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Compile every DPDK-using C file of a build against several DPDK releases.

    devtools/check-dpdk-versions.py [--build DIR] [--jobs N] [SERIES...]

Each compile command of DIR/compile_commands.json that has the installed
DPDK's include folder on its command line is run again with -fsyntax-only,
once per DPDK series (default: 22.11 24.11 25.11):

- the installed DPDK's series: as the build runs it;
- another series: the installed DPDK's pkg-config flags swapped for those of
  Debian's libdpdk-dev of that series (devtools/dpdk-headers.sh fetches and
  unpacks it under .sdk/, once), and the build's driver-SDK folder swapped
  for <sdk root>/<version>/include, Debian's point release or else the
  newest of the series. The SDK root is $VBR_DPDK_SDK_ROOT; else the folder
  two above $VBR_DPDK_SDK_DIR (which names one <version>/include); else
  ../shared/dpdk-sdk; a relative path is taken from the source tree.

Every run adds -Werror for what GCC 14 (Debian 13's compiler) makes an
error by default: implicit function declarations and ints, int-conversion,
incompatible pointer types, and return-type (GCC 14's return-mismatch,
which GCC 12 lacks). Deprecation and other warnings are counted, not fatal.

Prints a line per series, "DPDK <version> (<origin>): N files, N errors,
N warnings", and the first diagnostics of each failing file. Exit status:
1 when a file has an error; else 77 (skip) when a series could not be
checked, its headers not to be had (no network, no driver-SDK folder: the
reason printed); else 0. 2 on a usage error.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP = 77
GCC14_ERRORS = [
    '-Werror=implicit-function-declaration',
    '-Werror=implicit-int',
    '-Werror=int-conversion',
    '-Werror=incompatible-pointer-types',
    '-Werror=return-type',
]


class Unavailable(Exception):
    """The headers of a series cannot be had: the test is skipped."""


def pc_cflags(pc_dir, prefix):
    """DPDK's own Cflags (libdpdk-libs.pc, then libdpdk.pc) with ${prefix}
    set to prefix: the tokens pkg-config adds for DPDK itself."""
    out = []
    for name in ('libdpdk-libs.pc', 'libdpdk.pc'):
        path = os.path.join(pc_dir, name)
        var = {}
        with open(path, encoding='utf-8') as f:
            for line in f:
                line = line.strip()
                m = re.match(r'^([A-Za-z_][A-Za-z0-9_.]*)=(.*)$', line)
                if m:
                    var[m.group(1)] = m.group(2)
                elif line.startswith('Cflags:'):
                    cflags = line[len('Cflags:'):]
        var['prefix'] = prefix

        def expand(s):
            for _ in range(10):
                s = re.sub(r'\$\{(\w+)\}', lambda m: var.get(m.group(1), ''),
                           s)
            return s
        for tok in shlex.split(expand(cflags)):
            if tok.startswith('-I'):
                tok = '-I' + os.path.normpath(tok[2:])
            out.append(tok)
    return out


def pc_tokens(pc_dir, prefix):
    """The Cflags as the compile commands hold them: -include and its file
    as one entry, so that they are removed together."""
    toks = pc_cflags(pc_dir, prefix)
    out = []
    i = 0
    while i < len(toks):
        if toks[i] == '-include' and i + 1 < len(toks):
            out.append((toks[i], toks[i + 1]))
            i += 2
        else:
            out.append((toks[i],))
            i += 1
    return out


def multiarch():
    return subprocess.run(['gcc', '-print-multiarch'], capture_output=True,
                          text=True, check=True).stdout.strip()


def installed():
    """(version, pkg-config folder) of the DPDK the build uses."""
    ver = subprocess.run(['pkg-config', '--modversion', 'libdpdk'],
                         capture_output=True, text=True)
    pcdir = subprocess.run(['pkg-config', '--variable=pcfiledir', 'libdpdk'],
                           capture_output=True, text=True)
    if ver.returncode != 0 or pcdir.returncode != 0:
        sys.exit('check-dpdk-versions: pkg-config finds no libdpdk')
    return ver.stdout.strip(), pcdir.stdout.strip()


def series_of(version):
    return '.'.join(version.split('.')[:2])


def sdk_root():
    """$VBR_DPDK_SDK_ROOT; else the folder above $VBR_DPDK_SDK_DIR's
    <version>/include; else ../shared/dpdk-sdk beside the source tree."""
    root = os.environ.get('VBR_DPDK_SDK_ROOT')
    one = os.environ.get('VBR_DPDK_SDK_DIR')
    if not root and one:
        root = os.path.dirname(os.path.dirname(os.path.normpath(one)))
    if not root:
        root = os.path.join('..', 'shared', 'dpdk-sdk')
    # relative: to the source tree (meson runs the test in the build)
    return os.path.normpath(os.path.join(ROOT, root))


def sdk_dir(series, version):
    """The driver-SDK folder for a series, <root>/<x.y.z>/include: the
    given point release or else the newest of the series; and a note when
    it is not the same point release."""
    root = sdk_root()
    if not os.path.isdir(root):
        raise Unavailable('no driver-SDK headers for DPDK %s: %s is not a '
                          'folder (set VBR_DPDK_SDK_ROOT to the folder of '
                          '<version>/include)' % (series, root))
    found = []
    for name in os.listdir(root):
        inc = os.path.join(root, name, 'include')
        if (series_of(name) == series and
                os.path.isfile(os.path.join(inc, 'ethdev_driver.h'))):
            found.append(name)
    if not found:
        raise Unavailable('no driver-SDK headers for DPDK %s in %s'
                          % (series, root))
    key = lambda v: [int(x) if x.isdigit() else x for x in v.split('.')]
    pick = version if version in found else max(found, key=key)
    note = None
    if pick != version:
        note = ('driver-SDK headers of %s with the public ones of %s (the '
                'same LTS, not the same point release)' % (pick, version))
    return os.path.join(root, pick, 'include'), note


def fetch(series):
    """The unpacked root of Debian's libdpdk-dev of a series."""
    p = subprocess.run([os.path.join(ROOT, 'devtools', 'dpdk-headers.sh'),
                        series], capture_output=True, text=True)
    if p.returncode == 1:
        raise Unavailable(p.stderr.strip().splitlines()[-1]
                          if p.stderr.strip() else 'dpdk-headers.sh failed')
    if p.returncode != 0:
        sys.exit('check-dpdk-versions: dpdk-headers.sh %s failed:\n%s'
                 % (series, p.stderr.strip()))
    return p.stdout.strip()


def units(build, dpdk_inc):
    """The DPDK-using compile commands, one per file and set of -D."""
    with open(os.path.join(build, 'compile_commands.json'),
              encoding='utf-8') as f:
        cmds = json.load(f)
    seen = set()
    out = []
    for c in cmds:
        args = shlex.split(c['command'])
        incs = {os.path.normpath(os.path.join(c['directory'], a[2:]))
                for a in args if a.startswith('-I')}
        if dpdk_inc not in incs:
            continue
        key = (os.path.normpath(os.path.join(c['directory'], c['file'])),
               tuple(sorted(a for a in args if a.startswith('-D'))))
        if key in seen:
            continue
        seen.add(key)
        out.append((c['directory'], c['file'], args))
    return out


def strip_output(args):
    """Drop -c/-o/-M* so that the command only parses its file."""
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ('-o', '-MF', '-MQ', '-MT'):
            skip = True
            continue
        if a in ('-c', '-MD', '-MMD') or a.startswith('-fdiagnostics-color'):
            continue
        out.append(a)
    return out


def swap(args, directory, old, new, old_sdk, new_sdk):
    """args with the tokens of old replaced by new (at the first one's
    place), and the -I of old_sdk replaced by new_sdk."""
    out = []
    placed = False
    i = 0
    while i < len(args):
        a = args[i]
        tok = None
        if a == '-include' and i + 1 < len(args):
            tok = (a, args[i + 1])
        elif a.startswith('-I'):
            tok = ('-I' + os.path.normpath(os.path.join(directory, a[2:])),)
        else:
            tok = (a,)
        if tok in old:
            if not placed:
                out.extend(t for group in new for t in group)
                placed = True
            i += len(tok)
            continue
        if old_sdk and tok == ('-I' + old_sdk,):
            out.append('-I' + new_sdk)
            i += 1
            continue
        out.append(a)
        i += 1
    return out


def compile_one(directory, args):
    p = subprocess.run(args + ['-fsyntax-only', '-fdiagnostics-color=never']
                       + GCC14_ERRORS, cwd=directory, capture_output=True,
                       text=True)
    errors = len(re.findall(r'^\S+:\d+:\d+: (?:fatal )?error: ', p.stderr,
                            re.M))
    if p.returncode != 0 and errors == 0:
        errors = 1
    warnings = len(re.findall(r'^\S+:\d+:\d+: warning: ', p.stderr, re.M))
    return errors, warnings, p.stderr


def main():
    sys.stdout.reconfigure(line_buffering=True)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--jobs', type=int, default=os.cpu_count() or 1)
    ap.add_argument('--show', type=int, default=6,
                    help='diagnostics shown per failing file')
    ap.add_argument('series', nargs='*', default=['22.11', '24.11', '25.11'])
    opt = ap.parse_args()

    inst_ver, inst_pc = installed()
    inst_prefix = os.path.dirname(os.path.dirname(os.path.dirname(inst_pc)))
    old = pc_tokens(inst_pc, inst_prefix)
    dpdk_inc = os.path.normpath(os.path.join(inst_prefix, 'include', 'dpdk'))
    todo = units(opt.build, dpdk_inc)
    if not todo:
        sys.exit('check-dpdk-versions: no compile command in %s/'
                 'compile_commands.json uses %s' % (opt.build, dpdk_inc))

    # The build's own driver-SDK folder: the -I (not DPDK's) that holds
    # ethdev_driver.h.
    old_sdk = None
    for d, _, args in todo:
        for a in args:
            if not a.startswith('-I'):
                continue
            p = os.path.normpath(os.path.join(d, a[2:]))
            if (p != dpdk_inc and
                    os.path.isfile(os.path.join(p, 'ethdev_driver.h'))):
                old_sdk = p
                break
        if old_sdk:
            break

    failed = 0
    skipped = []
    for series in opt.series:
        note = None
        if series == series_of(inst_ver):
            version, origin, new, new_sdk = inst_ver, 'installed', None, None
        else:
            try:
                root = fetch(series)
                with open(os.path.join(root, 'VERSION'),
                          encoding='utf-8') as f:
                    deb_ver = f.read().strip()
                version = deb_ver.split(':')[-1].rsplit('-', 1)[0]
                new_sdk, note = sdk_dir(series, version)
            except Unavailable as e:
                print('DPDK %s: not checked: %s' % (series, e))
                skipped.append('%s: %s' % (series, e))
                continue
            origin = 'libdpdk-dev ' + deb_ver
            pc = os.path.join(root, 'usr', 'lib', multiarch(), 'pkgconfig')
            new = pc_tokens(pc, os.path.join(root, 'usr'))
        jobs = []
        for directory, f, args in todo:
            a = strip_output(args)
            if new is not None:
                a = swap(a, directory, set(old), new, old_sdk, new_sdk)
            jobs.append((f, directory, a))
        with concurrent.futures.ThreadPoolExecutor(opt.jobs) as ex:
            res = list(ex.map(lambda j: compile_one(j[1], j[2]), jobs))
        nerr = sum(r[0] for r in res)
        nwarn = sum(r[1] for r in res)
        bad = sum(1 for r in res if r[0])
        print('DPDK %s (%s): %d files, %d errors, %d warnings'
              % (version, origin, len(jobs), nerr, nwarn)
              + (' (%d files fail)' % bad if bad else ''))
        if new_sdk:
            print('  driver-SDK headers: %s' % new_sdk)
        if note:
            print('  note: ' + note)
        for (f, _, _), (e, _, text) in zip(jobs, res):
            if not e:
                continue
            diags = [l for l in text.splitlines()
                     if re.search(r': (?:fatal )?error: ', l)]
            print('  %s: %d errors' % (os.path.normpath(f), e))
            for l in diags[:opt.show]:
                print('    ' + l)
        failed += nerr
    if failed:
        return 1
    if skipped:
        print('SKIP: headers not to be had for DPDK ' + '; '.join(skipped))
        return SKIP
    return 0


if __name__ == '__main__':
    sys.exit(main())
