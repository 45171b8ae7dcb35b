# SPDX-License-Identifier: BSD-3-Clause
"""Sample output in the docs, checked by the tests that print it.

A doc marks a literal block of sample output, on a line of its own before
the block:

    .. vbr-doc-test: output "ID" (REASON: which test checks it)

The docs test (test_doc_commands.py) does not run such a block; it fails
when no test under app/ names ID. The test that names it calls block() to
read the shown lines and shape() or session() to hold what it printed
against them.

Shape of a line: its words as shown, where every number (decimal, with a
fraction or not, or 0x hex) may be any number and every run of blanks any
run; trailing blanks are dropped (rst keeps none). A line that is JSON
(an object or an array) has the shape of its structure: the same keys in
the same order, each value of the same JSON type, lists of the shape of
their first element. A line "..." (indented or not) stands for any
number of lines.
"""

import json
import os
import re

OUTPUT = re.compile(r'vbr-doc-test:\s*output\s+"([^"]+)"\s*\((.+)\)')
NUMBER = re.compile(r"0x[0-9a-fA-F]+|\d+(?:\.\d+)?")


def block(root, rel, ident):
    """The lines of the literal block after the marker of ident in the
    doc ROOT/rel, dedented; ValueError when there is none."""
    with open(os.path.join(root, rel)) as f:
        text = f.read().expandtabs(8).split("\n")
    at = None
    for i, line in enumerate(text):
        m = OUTPUT.search(line)
        if m and m.group(1) == ident:
            at = i
            break
    if at is None:
        raise ValueError(f"{rel}: no output marker \"{ident}\"")
    i = at + 1
    while i < len(text) and not text[i].rstrip().endswith("::"):
        i += 1
    base = len(text[i]) - len(text[i].lstrip(" ")) if i < len(text) else 0
    body = []
    for t in text[i + 1:]:
        if t.strip() and len(t) - len(t.lstrip(" ")) <= base:
            break
        body.append(t)
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    if not body:
        raise ValueError(f"{rel}: marker \"{ident}\" before no block")
    cut = min(len(t) - len(t.lstrip(" ")) for t in body if t.strip())
    return [t[cut:].rstrip() for t in body]


def _regex(line):
    out, pos = [], 0
    for m in NUMBER.finditer(line):
        out.append(_words(line[pos:m.start()]))
        out.append(r"0x[0-9a-fA-F]+" if m.group().startswith("0x")
                   else r"-?\d+(?:\.\d+)?")
        pos = m.end()
    out.append(_words(line[pos:]))
    return re.compile("".join(out) + r"\Z")


def _words(s):
    return r"\s+".join(re.escape(w) for w in re.split(r"\s+", s))


def _json_shape(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return [_json_shape(v[0])] if v else []
    return [(k, _json_shape(x)) for k, x in v.items()]


def _as_json(line):
    if not line.startswith(("{", "[")):
        return None
    try:
        return json.loads(line)
    except ValueError:
        return None


def line_ok(shown, got):
    """Whether got (a line printed) has the shape of shown."""
    got = got.rstrip()
    js, jg = _as_json(shown), _as_json(got)
    if js is not None:
        return jg is not None and _json_shape(js) == _json_shape(jg)
    return _regex(shown).match(got) is not None


def shape(shown, got):
    """Problems (a list of strings, empty: none) of the lines got (a list
    or a text) against the shown lines."""
    if isinstance(got, str):
        got = got.split("\n")
        if got and got[-1] == "":
            got.pop()
    got = [g.rstrip() for g in got]
    shown = [s for s in shown if s.strip()]
    got_ne = [g for g in got if g.strip()]
    return _match(shown, got_ne)


def _match(shown, got):
    if not shown:
        return [] if not got else [f"printed more than shown: {got[0]!r}"]
    if shown[0].strip() == "...":
        rest = shown[1:]
        for k in range(len(got) + 1):
            if not _match(rest, got[k:]):
                return []
        return [f"nothing after {rest[0] if rest else '...'!r} fits"]
    if not got:
        return [f"shown but not printed: {shown[0]!r}"]
    if not line_ok(shown[0], got[0]):
        return [f"shown {shown[0]!r}, printed {got[0]!r}"]
    return _match(shown[1:], got[1:])


def session(lines, prompt="$ "):
    """The (command, shown output lines) of a shown shell session; a line
    that is the prompt alone ends the output of the command before it."""
    out = []
    for line in lines:
        if line.startswith(prompt) or line == prompt.rstrip():
            cmd = line[len(prompt):].strip() if line.startswith(prompt) \
                else ""
            if cmd:
                out.append((cmd, []))
        elif out:
            out[-1][1].append(line)
    return out
