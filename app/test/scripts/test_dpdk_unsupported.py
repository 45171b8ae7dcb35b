#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""meson setup refuses a DPDK outside 22.11 to 25.11, unless asked.

usage: test_dpdk_unsupported.py SOURCE_DIR SDK_DIR

Runs `meson setup` of SOURCE_DIR in temporary folders with pkg-config
finding a libdpdk of another version (copies of the installed libdpdk.pc
and libdpdk-libs.pc with their Version line changed; the headers stay the
installed ones, a copy of SDK_DIR the driver-SDK folder):

- 21.11.0 and 26.03.0 must fail, the message naming the version found and
  the versions supported, and pass with -Ddpdk_unsupported=true (a
  warning saying so);
- 23.11.7 (between two tested LTS releases) must pass with a warning.
"""

import os
import shutil
import subprocess
import sys
import tempfile

SUPPORTED = "vbr supports DPDK 22.11 to 25.11 and is tested with " \
            "22.11, 24.11, 25.11"


def pc_dir():
    p = subprocess.run(["pkg-config", "--variable=pcfiledir", "libdpdk"],
                       capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def fake_pc(src, dst, version):
    os.makedirs(dst)
    for name in ("libdpdk.pc", "libdpdk-libs.pc"):
        with open(os.path.join(src, name), encoding="utf-8") as f:
            lines = f.read().split("\n")
        lines = ["Version: " + version if l.startswith("Version:") else l
                 for l in lines]
        with open(os.path.join(dst, name), "w", encoding="utf-8") as f:
            f.write("\n".join(lines))


def setup(source, tmp, version, extra):
    env = dict(os.environ)
    env["PKG_CONFIG_PATH"] = os.path.join(tmp, "pc-" + version)
    build = os.path.join(tmp, "build-%s-%d" % (version, len(extra)))
    p = subprocess.run(["meson", "setup"] + extra + [build, source],
                       capture_output=True, text=True, env=env)
    return p.returncode, p.stdout + p.stderr


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    source, sdk = sys.argv[1], sys.argv[2]
    src_pc = pc_dir()
    if src_pc is None:
        print("SKIP: pkg-config finds no libdpdk")
        return 77
    failed = 0
    with tempfile.TemporaryDirectory(prefix="vbr-dpdk-gate-") as tmp:
        # a copy: meson takes no absolute path into the source tree
        shutil.copytree(sdk, os.path.join(tmp, "sdk"))
        sdk = os.path.join(tmp, "sdk")
        for version in ("21.11.0", "26.03.0", "23.11.7"):
            fake_pc(src_pc, os.path.join(tmp, "pc-" + version), version)
        for version in ("21.11.0", "26.03.0"):
            rc, out = setup(source, tmp, version, ["-Ddpdk_sdk_dir=" + sdk])
            want = "DPDK %s found (pkg-config libdpdk); %s. Pass " \
                   "-Ddpdk_unsupported=true" % (version, SUPPORTED)
            if rc == 0 or want not in out:
                print("FAIL: DPDK %s: meson setup exited %d, without "
                      "'%s':\n%s" % (version, rc, want, out))
                failed += 1
            else:
                print("ok: DPDK %s refused: %s" % (version, want))
            rc, out = setup(source, tmp, version,
                            ["-Ddpdk_sdk_dir=" + sdk,
                             "-Ddpdk_unsupported=true"])
            want = "building anyway (-Ddpdk_unsupported=true)"
            if rc != 0 or want not in out:
                print("FAIL: DPDK %s with -Ddpdk_unsupported=true: meson "
                      "setup exited %d:\n%s" % (version, rc, out))
                failed += 1
            else:
                print("ok: DPDK %s with -Ddpdk_unsupported=true: %s"
                      % (version, want))
        rc, out = setup(source, tmp, "23.11.7", ["-Ddpdk_sdk_dir=" + sdk])
        want = "DPDK 23.11.7 found: not a release vbr is tested with"
        if rc != 0 or want not in out:
            print("FAIL: DPDK 23.11.7: meson setup exited %d:\n%s"
                  % (rc, out))
            failed += 1
        else:
            print("ok: DPDK 23.11.7 taken: " + want)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
