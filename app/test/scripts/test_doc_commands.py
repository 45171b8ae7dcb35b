#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run every command the docs show, as written, and fail on any that fails.

usage: test_doc_commands.py [--build DIR] [--list] [--doc FILE[:LINE]]...
                            [--timeout S] [--self-test] ROOT

ROOT is the repository; the docs are ROOT/README.md and every
ROOT/doc/guides/**/*.rst. --list prints the blocks and what would run,
without running anything. --doc runs only the blocks of FILE (relative to
ROOT), or only the block that starts at LINE of FILE. --timeout: seconds a
command may take (default 180). --self-test runs the checker on small docs
of its own, made to pass or to fail for each reason below, instead of
ROOT's (meson test doc-commands-selftest; no root needed).

What a command is
-----------------
* README.md: the lines of each fenced block opened with ```sh. Other
  fences (```, ```c, ...) are not commands.
* rst: the lines of each literal block, introduced by a paragraph ending
  in "::" (or a line "::") or by a ".. code-block::" directive.
* A line ending in a backslash continues on the next line. Blank lines and
  lines starting with "#" are left out; a "# ..." after a shell command is
  the shell's comment.
* A line "testpmd> CMD" is a testpmd command: it goes to the interactive
  dpdk-testpmd (-i) that the block started on an earlier line. The session
  ends at the next shell line or at the end of the block, where the test
  sends "quit". A dpdk-testpmd line without testpmd> lines after it is
  still started, run to its prompt and quit.
* Every other line is a shell command, run with bash from ROOT.

Passing: a shell command exits 0 (within --timeout seconds); a testpmd
session reaches its prompt, no line it prints (start-up, each command,
quit) says "error", "fail", "invalid", "exceeds", "not supported", "not
implemented" or "return code = -N", or starts with testpmd's "Bad ..." or is
its "Command not found" or "Ambiguous command" -- counter lines such as
"RX-errors: 0" and show port info's "Device error handling mode" aside --
and it exits 0 after quit.

Marking what cannot run here
----------------------------
A note in the doc itself, on a line of its own before the block, applies to
the next block:

    .. vbr-doc-test: skip (REASON)              in rst (a comment)
    <!-- vbr-doc-test: skip (REASON) -->        in README.md
    ... vbr-doc-test: skip "PREFIX" (REASON)    only the lines of the block
                                                that start with PREFIX

Sample output is a block marked, with the name of the test that checks
its shape (doc_shapes.py):

    .. vbr-doc-test: output "ID" (REASON)       in rst

It is not run; a marker whose ID no file under app/ names (in double
quotes) is a failure.

The reason is required. A block that is neither run nor marked, a marker
that names no block or no line, a block with no command, and a block that
uses an af_packet: interface it does not make are failures.

Environment
-----------
The docs say build/; with --build DIR the test runs the commands with DIR
in place of each path word "build". Network commands run on the veth pairs
the block itself makes with devtools/netns-veth.sh up PREFIX: the test
renames that prefix (and PREFIX0, PREFIX1, PREFIXns) to one of its own per
block, so runs in parallel do not meet, and takes the pair down after the
block whatever happened. Needs root (veths, AF_PACKET), like the e2e tests:
exit 77 otherwise, and when dpdk-testpmd is missing or the build is a
sanitizer build (the docs' commands are for the normal build).
"""

import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import doc_shapes  # noqa: E402
import testpmd_driver as tp  # noqa: E402

MARK = re.compile(r'vbr-doc-test:\s*skip\s*(?:"([^"]+)"\s*)?(\((.*)\))?')
RST_MARK = re.compile(r"^\s*\.\.\s+vbr-doc-test:")
MD_MARK = re.compile(r"^\s*<!--\s*vbr-doc-test:.*-->\s*$")
# "RX-errors: 0", "rx_errors: 0  tx_errors: 0": counters, not complaints
COUNTER_LINE = re.compile(r"^\s*([\w\[\]./-]+:\s*\d+\s*)+$")
# testpmd's own words for a command it refused or could not parse, too
COMPLAINT = re.compile(r"error|fail|invalid|exceeds|not supported|"
                       r"not implemented|return code = -\d|^\s*bad\b|"
                       r"command not found|ambiguous command", re.I)
# lines that say "error" without one: show port info's error handling mode
NOT_COMPLAINT = re.compile(r"^\s*Device error handling mode:")
VETH_UP = re.compile(r"netns-veth\.sh\s+up\s+(\w+)")
AF_PACKET = re.compile(r"af_packet:([\w.-]+)")


class Block:
    """One command block of a doc."""

    def __init__(self, path, line, lines):
        self.path = path	# relative to ROOT
        self.line = line	# first line of the block, 1-based
        self.lines = lines	# the block's text, dedented
        self.skip = None	# reason the whole block is skipped
        self.skip_prefix = []	# [[prefix, reason, used, where]]

    def where(self):
        return f"{self.path}:{self.line}"


# (ID, where) of every output marker the last collect() read
OUTPUTS = []


def take_mark(text, rel, i, marks, errors):
    """Add the marker on line i (0-based) to marks, or an error."""
    where = f"{rel}:{i + 1}"
    o = doc_shapes.OUTPUT.search(text)
    if o is not None:
        OUTPUTS.append((o.group(1), where))
        marks.append((None, f'output "{o.group(1)}" ({o.group(2).strip()})',
                      where))
        return
    m = MARK.search(text)
    if m is None or not m.group(3) or not m.group(3).strip():
        errors.append(f"{where}: marker without a reason: {text.strip()}")
        return
    marks.append((m.group(1), m.group(3).strip(), where))


def attach_marks(block, marks, errors):
    for prefix, reason, where in marks:
        if prefix is None:
            block.skip = reason
        else:
            block.skip_prefix.append([prefix, reason, False, where])


def md_blocks(path, rel, errors):
    blocks, marks = [], []
    with open(path) as f:
        text = f.read().split("\n")
    i = 0
    while i < len(text):
        line = text[i]
        if MD_MARK.match(line):
            take_mark(line, rel, i, marks, errors)
        fence = re.match(r"^(\s*)```(\S*)\s*$", line)
        if fence:
            j = i + 1
            while j < len(text) and not re.match(r"^\s*```\s*$", text[j]):
                j += 1
            if fence.group(2) == "sh":
                b = Block(rel, i + 2, text[i + 1:j])
                attach_marks(b, marks, errors)
                blocks.append(b)
                marks = []
            i = j + 1
            continue
        i += 1
    for _, _, where in marks:
        errors.append(f"{where}: marker before no ```sh block")
    return blocks


def indent_of(line):
    return len(line) - len(line.lstrip(" "))


def rst_blocks(path, rel, errors):
    blocks, marks = [], []
    with open(path) as f:
        text = f.read().expandtabs(8).split("\n")
    i = 0
    while i < len(text):
        line = text[i]
        if RST_MARK.match(line):
            take_mark(line, rel, i, marks, errors)
            i += 1
            continue
        stripped = line.strip()
        opens = False
        if re.match(r"^\.\.\s+(code-block|code|sourcecode)::", stripped):
            opens = True
        elif stripped.endswith("::") and not stripped.startswith(".."):
            opens = True
        if not opens:
            i += 1
            continue
        base = indent_of(line)
        j = i + 1
        # directive options (":linenos:") come before the blank line
        while j < len(text) and text[j].strip().startswith(":") and \
                indent_of(text[j]) > base:
            j += 1
        body = []
        start = None
        while j < len(text):
            t = text[j]
            if t.strip() == "":
                if start is not None:
                    body.append("")
                j += 1
                continue
            if indent_of(t) <= base:
                break
            if start is None:
                start = j
            body.append(t)
            j += 1
        if start is None:
            i += 1
            continue
        while body and body[-1] == "":
            body.pop()
        cut = min(indent_of(t) for t in body if t.strip())
        b = Block(rel, start + 1, [t[cut:] for t in body])
        attach_marks(b, marks, errors)
        blocks.append(b)
        marks = []
        i = j
    for _, _, where in marks:
        errors.append(f"{where}: marker before no literal block")
    return blocks


def logical_lines(lines):
    """Join continuation lines; drop blank lines and # comments."""
    out, cur = [], ""
    for raw in lines:
        s = raw.rstrip()
        if cur == "" and (s.strip() == "" or s.lstrip().startswith("#")):
            continue
        if s.endswith("\\"):
            cur += s[:-1].strip() + " "
            continue
        cur += s.strip()
        out.append(cur)
        cur = ""
    if cur.strip():
        out.append(cur.strip())
    return out


class Env:
    """What a run changes in the commands: build folder, veth names."""

    def __init__(self, root, build):
        self.root = root
        rel = os.path.relpath(build, root) if build else "build"
        self.build = None if rel == "build" else rel
        self.seq = 0

    def veth_prefix(self):
        self.seq += 1
        # dt<pid>x<seq>: devtools/test.sh reads the pid back out of it
        return f"dt{os.getpid()}x{self.seq}"

    def rewrite(self, cmd, prefixes):
        if self.build:
            cmd = re.sub(r"(?<![\w./-])build(?=/|\s|$)", self.build, cmd)
        for old, new in prefixes.items():
            cmd = re.sub(r"\b%s(?=(0|1|ns)?\b)" % re.escape(old), new, cmd)
        return cmd


def complaints(text):
    bad = []
    for line in text.splitlines():
        if COMPLAINT.search(line) and not COUNTER_LINE.match(line) and \
                not NOT_COMPLAINT.match(line):
            bad.append(line.strip())
    return bad


def is_testpmd(cmd):
    try:
        words = shlex.split(cmd)
    except ValueError:
        return False
    return bool(words) and os.path.basename(words[0]) == "dpdk-testpmd"


def split_testpmd(cmd):
    """EAL and application arguments of a 'dpdk-testpmd ... -- -i ...'."""
    words = shlex.split(cmd)[1:]
    if "--" not in words:
        return None
    k = words.index("--")
    eal, app = words[:k], words[k + 1:]
    if "-i" in app:
        app.remove("-i")
    elif "--interactive" in app:
        app.remove("--interactive")
    else:
        return None
    return eal, app


class Runner:
    def __init__(self, env, veth_script, timeout):
        self.env = env
        self.veth_script = veth_script
        self.timeout = timeout

    def shell(self, cmd):
        """Run one shell line in a process group of its own, so that a
        timeout ends what it started too."""
        print(f"+ {cmd}", flush=True)
        env = dict(os.environ)
        if self.env.build:
            env["VBR_BUILD_DIR"] = self.env.build
        proc = subprocess.Popen(["bash", "-c", cmd], cwd=self.env.root,
                                stdin=subprocess.DEVNULL, env=env,
                                start_new_session=True)
        try:
            rc = proc.wait(self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return f"still running after {self.timeout} s: {cmd}"
        if rc != 0:
            return f"exit {rc}: {cmd}"
        return None

    def testpmd(self, cmd, lines):
        args = split_testpmd(cmd)
        if args is None:
            return f"not an interactive testpmd (needs '-- -i'): {cmd}"
        cwd = os.getcwd()
        os.chdir(self.env.root)
        t = None
        try:
            t = tp.TestPmd(args[0], args[1])
            try:
                t.wait_prompt()
            except RuntimeError as e:
                return f"{e}\n(command: {cmd})"
            bad = [f"start-up: {b}" for b in complaints(t.out)]
            for line in lines:
                try:
                    out = t.cmd(line, timeout=self.timeout)
                except RuntimeError as e:
                    return str(e)
                bad += [f"'{line}': {b}" for b in complaints(out)]
            with t.lock:
                mark = len(t.out)
            rc = t.quit(self.timeout)
            t = None
        finally:
            if t is not None:
                t.kill()
            os.chdir(cwd)
        return self._verdict(bad, rc, mark, cmd)

    def _verdict(self, bad, rc, mark, cmd):
        if rc != 0:
            bad.append(f"quit: exit status {rc}")
        if bad:
            return "testpmd: " + "; ".join(bad) + f"\n(command: {cmd})"
        return None

    def block(self, b):
        """Run one block; return a list of failures."""
        cmds = logical_lines(b.lines)
        if not cmds:
            return [f"{b.where()}: no command in the block (mark it)"]
        made = {}
        for c in cmds:
            for p in VETH_UP.findall(c):
                made.setdefault(p, self.env.veth_prefix())
        fails = []
        for c in cmds:
            for ifname in AF_PACKET.findall(c):
                if not any(re.fullmatch(re.escape(p) + r"[01]", ifname)
                           for p in made):
                    fails.append(f"{b.where()}: uses interface {ifname} "
                                 "that the block does not make "
                                 "(devtools/netns-veth.sh up)")
        if fails:
            return fails
        # group: shell lines, and testpmd lines with their testpmd> lines
        steps = []
        for c in cmds:
            if c.startswith("testpmd>"):
                if not steps or steps[-1][0] != "testpmd":
                    return [f"{b.where()}: '{c}' with no testpmd started "
                            "before it in the block"]
                steps[-1][2].append(c[len("testpmd>"):].strip())
                continue
            skipped = False
            for s in b.skip_prefix:
                if c.startswith(s[0]):
                    print(f"SKIP line: {c} ({s[1]})", flush=True)
                    s[2] = True
                    skipped = True
            if skipped:
                continue
            kind = "testpmd" if is_testpmd(c) else "shell"
            steps.append([kind, c, []])
        for s in b.skip_prefix:
            if not s[2]:
                fails.append(f"{s[3]}: skip \"{s[0]}\" names no line of "
                             f"the block at {b.where()}")
        try:
            for kind, c, lines in steps:
                cmd = self.env.rewrite(c, made)
                if kind == "testpmd":
                    err = self.testpmd(cmd, lines)
                else:
                    err = self.shell(cmd)
                if err:
                    fails.append(f"{b.where()}: {err}")
                    break
        finally:
            for new in made.values():
                subprocess.run(["sh", self.veth_script, "down", new],
                               cwd=self.env.root)
        return fails


def outputs_checked(root, errors):
    """An error for each output marker whose ID no file under app/ names."""
    names = set()
    for d, _, files in os.walk(os.path.join(root, "app")):
        for f in files:
            try:
                with open(os.path.join(d, f), errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            names.update(re.findall(r'"([^"\n]+)"', text))
    for ident, where in OUTPUTS:
        if ident not in names:
            errors.append(f'{where}: output "{ident}": no test under app/ '
                          "checks it")


def collect(root, errors):
    OUTPUTS.clear()
    docs = ["README.md"]
    guides = os.path.join(root, "doc", "guides")
    for d, _, files in sorted(os.walk(guides)):
        for f in sorted(files):
            if f.endswith(".rst"):
                docs.append(os.path.relpath(os.path.join(d, f), root))
    blocks = []
    for rel in docs:
        path = os.path.join(root, rel)
        if rel.endswith(".md"):
            blocks += md_blocks(path, rel, errors)
        else:
            blocks += rst_blocks(path, rel, errors)
    outputs_checked(root, errors)
    return blocks


def wanted(b, only):
    if not only:
        return True
    for o in only:
        path, _, line = o.partition(":")
        if b.path == path and (not line or int(line) == b.line):
            return True
    return False


def run_docs(root, build, only, timeout):
    """Run the wanted blocks of ROOT's docs; return (failures, ran,
    skipped)."""
    errors = []
    blocks = [b for b in collect(root, errors) if wanted(b, only)]
    env = Env(root, build)
    runner = Runner(env, os.path.join(root, "devtools", "netns-veth.sh"),
                    timeout)
    ran = skipped = 0
    for b in blocks:
        if b.skip:
            print(f"== {b.where()}: SKIP ({b.skip})", flush=True)
            skipped += 1
            continue
        print(f"== {b.where()}", flush=True)
        f = runner.block(b)
        errors += f
        print(f"-- {b.where()}: {'FAIL' if f else 'PASS'}", flush=True)
        ran += 1
    return errors, ran, skipped


TESTPMD = ("dpdk-testpmd --no-huge -m 512 --no-shconf --no-pci \\\n"
           "       -d build/drivers/librte_net_vbr.so "
           "--vdev net_vbr0,wire=loop \\\n"
           "       -- -i --total-num-mbufs=8192\n")

# (file, text, what the run must say: None = pass, or a failure text); each
# case is a doc of its own in a scratch repository. Commands get 60 s, but
# the one of "sleep" 3 s.
SELF_TESTS = [
    ("x.rst", "Good::\n\n   " + TESTPMD + "   testpmd> show port info 0\n",
     None),
    ("x.rst", "PMD refusal::\n\n   " + TESTPMD + "   testpmd> flow create 0 "
     "ingress pattern eth / end actions queue index 9 / end\n",
     "Caught PMD error"),
    ("x.rst", "Parse error::\n\n   " + TESTPMD +
     "   testpmd> show port bogus 0\n", "Bad arguments"),
    ("x.rst", "testpmd refusal::\n\n   " + TESTPMD +
     "   testpmd> port config 0 rss reta (0,3)\n", "exceeds"),
    ("x.rst", "No start-up::\n\n   dpdk-testpmd --no-huge --no-shconf "
     "--no-pci -d build/drivers/librte_net_vbr.so --vdev net_vbr0,wire=loop"
     " -- -i\n", "did not reach its prompt"),
    ("x.rst", "Not interactive::\n\n   dpdk-testpmd --no-huge -- "
     "--forward-mode=io\n", "not an interactive testpmd"),
    ("x.rst", "Orphan::\n\n   testpmd> show port info 0\n",
     "no testpmd started"),
    ("x.rst", ".. code-block:: sh\n\n   true\n   false\n", "exit 1: false"),
    ("x.rst", "Slow::\n\n   sleep 120\n", "still running after"),
    ("x.rst", "Comment::\n\n   # nothing\n", "no command in the block"),
    ("x.rst", "Not made::\n\n   dpdk-testpmd --vdev "
     "net_vbr0,wire=af_packet:vb0 -- -i\n", "that the block does not make"),
    ("x.rst", ".. vbr-doc-test: skip (a reason)\n\nMarked::\n\n   false\n",
     None),
    ("x.rst", '.. vbr-doc-test: skip "false" (a reason)\n\nLine::\n\n'
     "   false --no\n   true\n", None),
    ("x.rst", '.. vbr-doc-test: skip "nomatch" (a reason)\n\nStale::\n\n'
     "   true\n", "names no line"),
    ("x.rst", ".. vbr-doc-test: skip\n\nReasonless::\n\n   true\n",
     "without a reason"),
    ("x.rst", "Text.\n\n.. vbr-doc-test: skip (dangling)\n",
     "marker before no"),
    ("x.rst", '.. vbr-doc-test: output "nobody-checks" (a test)\n\n'
     "Shown::\n\n   42 frames\n", "no test under app/ checks it"),
    ("README.md", "```\nfalse\n```\n\n```sh\ntrue \\\n  --x # c\n```\n",
     None),
    ("README.md", "<!-- vbr-doc-test: skip (a reason) -->\n```sh\nfalse\n"
     "```\n", None),
    ("README.md", "```sh\nfalse\n```\n", "exit 1: false"),
]


# testpmd output with an event line its interrupt thread printed into a
# command's echo, output or prompt, in the pieces stdio can split it into:
# (what testpmd printed after the command was sent, the command, what
# cmd() must return).
EV = "Port 0: link state change event\n"
DRIVER_TESTS = [
    ("set link-down port 0\nok\ntestpmd> ", "set link-down port 0",
     "\nok\n"),
    ("set link-down port 0\nok\nt\nestpmd> " + EV, "set link-down port 0",
     "\nok\n"),
    ("set link-down port 0\nok\ntest\n" + EV + "pmd> ",
     "set link-down port 0", "\nok\n"),
    ("set link-down port 0\nok\ntes\nPort " + EV[5:] + "tpmd> ",
     "set link-down port 0", "\nok\n"),
    # the event's newline in the echo: the line before the event loses
    # its own with the whole line taken out
    ("set link-\ndown port 0\nok\n" + EV + "testpmd> ",
     "set link-down port 0", "\nok"),
    ("set link-down port 0\nok\ntestpmd> \n" + EV, "set link-down port 0",
     "\nok\n"),
]


def driver_self_test():
    """The driver's prompt and echo matching on DRIVER_TESTS; the number
    of wrong results."""
    wrong = 0
    for n, (raw, line, want) in enumerate(DRIVER_TESTS):
        tail = tp.strip_events(raw)
        i, j = tp.find_echo(tail, line)
        k = tail.rfind(tp.PROMPT)
        got = tail[j:k] if i >= 0 and k > i else None
        ok = got == want
        print(f"{'PASS' if ok else 'FAIL'}: driver case {n}: {got!r}",
              flush=True)
        wrong += not ok
    return wrong


def self_test(root, build):
    """Run the checker on SELF_TESTS; return the number of wrong verdicts."""
    wrong = driver_self_test()
    for n, (name, text, want) in enumerate(SELF_TESTS):
        tmp = tempfile.mkdtemp(prefix="doc-selftest-", dir=build)
        try:
            os.makedirs(os.path.join(tmp, "doc", "guides"))
            os.symlink(build, os.path.join(tmp, "build"))
            os.symlink(os.path.join(root, "devtools"),
                       os.path.join(tmp, "devtools"))
            rel = name if name == "README.md" else \
                os.path.join("doc", "guides", name)
            with open(os.path.join(tmp, rel), "w") as f:
                f.write(text)
            if name != "README.md":
                open(os.path.join(tmp, "README.md"), "w").close()
            print(f"==== case {n}: want {want or 'pass'}", flush=True)
            errors, _, _ = run_docs(tmp, None, [], 3 if "sleep" in text
                                    else 60)
            for e in errors:
                print(f"   said: {e.splitlines()[0]}")
            if want is None:
                ok = not errors
            else:
                ok = any(want in e for e in errors)
            print(f"{'PASS' if ok else 'FAIL'}: case {n} "
                  f"({want or 'pass'})", flush=True)
            wrong += not ok
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return wrong


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root")
    ap.add_argument("--build", help="build folder (default ROOT/build)")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--doc", action="append", default=[])
    ap.add_argument("--timeout", type=int, default=180)
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    build = os.path.abspath(a.build or os.path.join(root, "build"))
    if a.list:
        errors = []
        for b in [b for b in collect(root, errors) if wanted(b, a.doc)]:
            what = f"skip ({b.skip})" if b.skip else "run"
            print(f"== {b.where()}: {what}")
            for c in logical_lines(b.lines):
                print(f"   {c}")
        for e in errors:
            print(f"FAIL: {e}")
        return 1 if errors else 0
    if os.environ.get("VBR_SANITIZE_PRELOAD"):
        print("SKIP: a sanitizer build; the docs' commands are for the "
              "normal build")
        return tp.SKIP
    if tp.find_testpmd() is None:
        print("SKIP: dpdk-testpmd not installed")
        return tp.SKIP
    if a.self_test:
        wrong = self_test(root, build)
        print(f"{len(SELF_TESTS) - wrong} of {len(SELF_TESTS)} cases right")
        return 1 if wrong else 0
    if os.geteuid() != 0:
        print("SKIP: needs root (veths in namespaces, AF_PACKET)")
        return tp.SKIP
    errors, ran, skipped = run_docs(root, build, a.doc, a.timeout)
    for e in errors:
        print(f"FAIL: {e}")
    print(f"{ran} blocks run, {skipped} skipped by their note, "
          f"{len(errors)} failures")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
