#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# House-style checks (/work/shared/STYLE.md, DPDK coding style) over the files
# git knows (tracked, plus untracked ones not ignored) under lib/ drivers/
# app/ examples/ and the meson files everywhere:
#
#   C (.c, .h)  SPDX line first; no line over 100 columns (tab = 8); no
#               trailing whitespace; indent with tabs (spaces only after the
#               tabs, for alignment, before '*' in a comment, or up to 7
#               to align a continuation line on a column-0 line); no
#               `typedef struct`; no cds_list_for_each_entry*() (it forms
#               a misaligned pointer from the list head)
#   meson       SPDX line first; 4-space indent, no tabs (continuation lines
#               may align freely); no trailing whitespace; files() lists of
#               plain strings in alphabetical order
#
# usage: check-style.sh [--clang-format] [FILE...]
#   --clang-format  also report (never fail on) what clang-format would change
# Exit status: 0 when clean, 1 when a rule is broken.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

CLANG_FORMAT=0
if [ "${1:-}" = "--clang-format" ]; then
	CLANG_FORMAT=1
	shift
fi

CDIRS='^(lib|drivers|app|examples)/'
if [ $# -gt 0 ]; then
	files=$(printf '%s\n' "$@")
	CDIRS=''
elif git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	files=$(git ls-files --cached --others --exclude-standard | sort -u)
else
	files=$(find . -path ./.git -prune -o -type f -print | sed 's|^\./||' | sort)
fi

# keep files that still exist (a deleted but tracked file is not our business)
sources=$(printf '%s\n' "$files" |
	grep -E "$CDIRS.*\\.[ch]\$" || true)
mesons=$(printf '%s\n' "$files" |
	grep -E '(^|/)(meson\.build|meson_options\.txt)$' || true)

rc=0
/usr/bin/python3 - "$sources" "$mesons" <<'EOF' || rc=1
import re
import sys

SPDX_C = "/* SPDX-License-Identifier: BSD-3-Clause */"
SPDX_MESON = "# SPDX-License-Identifier: BSD-3-Clause"
MAX_COLS = 100
TYPEDEF_STRUCT = re.compile(r"\btypedef\s+struct\b")
LIST_ENTRY_WALK = re.compile(r"\bcds_list_for_each_entry\w*\s*\(")
CONTINUES = ("+", ",", "(", "[", "{", "\\", " and", " or", "?", ":")

errors = 0


def report(path, lineno, msg):
    global errors
    errors += 1
    print(f"{path}:{lineno}: {msg}")


def read_lines(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().split("\n")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        report(path, 0, "not UTF-8")
        return None


C_CONTINUES = (",", "(", "+", "-", "*", "/", "&", "|", "?", ":", "=", "\\")


def check_c(path):
    lines = read_lines(path)
    if lines is None:
        return
    if lines[0] != SPDX_C:
        report(path, 1, f"first line must be '{SPDX_C}'")
    prev = ""
    for no, line in enumerate(lines, 1):
        # a continuation of a line that starts in column 0 (a definition's
        # parameters) can only be aligned with spaces: up to 7 are fine
        cont = prev.rstrip().endswith(C_CONTINUES)
        prev = line
        if line != line.rstrip():
            report(path, no, "trailing whitespace")
        cols = len(line.expandtabs(8))
        if cols > MAX_COLS:
            report(path, no, f"line is {cols} columns (max {MAX_COLS})")
        indent = line[:len(line) - len(line.lstrip(" \t"))]
        rest = line[len(indent):]
        if " \t" in indent:
            report(path, no, "space before tab in indent")
        elif (line.startswith(" ") and rest and not rest.startswith("*") and
              not (cont and len(indent) < 8)):
            report(path, no, "indented with spaces (use tabs)")
        elif "        " in indent:
            report(path, no, "8 spaces in indent (use a tab)")
        if TYPEDEF_STRUCT.search(line):
            report(path, no, "typedef struct (use the struct tag)")
        if LIST_ENTRY_WALK.search(line) and not rest.startswith("*"):
            report(path, no, "cds_list_for_each_entry*() takes the container "
                   "of the list head (misaligned): use cds_list_for_each*() "
                   "and cds_list_entry()")


def check_files_lists(path, text):
    # files('a.c', 'b.c',) with nothing but string literals inside
    for m in re.finditer(r"\bfiles\(([^()]*)\)", text):
        body = m.group(1)
        if re.sub(r"'[^']*'|,|\s|#[^\n]*", "", body):
            continue
        names = re.findall(r"'([^']*)'", body)
        if names != sorted(names):
            no = text.count("\n", 0, m.start()) + 1
            report(path, no, "files() list not in alphabetical order")


def check_meson(path):
    lines = read_lines(path)
    if lines is None:
        return
    if lines[0] != SPDX_MESON:
        report(path, 1, f"first line must be '{SPDX_MESON}'")
    prev = ""
    for no, line in enumerate(lines, 1):
        if line != line.rstrip():
            report(path, no, "trailing whitespace")
        indent = line[:len(line) - len(line.lstrip(" \t"))]
        if "\t" in indent:
            report(path, no, "tab in indent (meson uses 4 spaces)")
        elif (line.strip() and len(indent) % 4 and
              not prev.rstrip().endswith(CONTINUES)):
            report(path, no, "indent is not a multiple of 4 spaces")
        code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
        if code.strip():
            prev = code
    check_files_lists(path, "\n".join(lines))


for p in filter(None, sys.argv[1].split("\n")):
    check_c(p)
for p in filter(None, sys.argv[2].split("\n")):
    check_meson(p)
nfiles = len([p for p in (sys.argv[1] + "\n" + sys.argv[2]).split("\n") if p])
print(f"check-style: {nfiles} files, {errors} problems")
sys.exit(1 if errors else 0)
EOF

if [ "$CLANG_FORMAT" -eq 1 ] && command -v clang-format >/dev/null; then
	echo "clang-format report (informational, never fails):"
	for f in $sources; do
		[ -f "$f" ] || continue
		n=$(clang-format --dry-run "$f" 2>&1 | grep -c 'warning:' || true)
		[ "$n" -eq 0 ] || printf '  %s: %s lines would change\n' "$f" "$n"
	done
fi
exit $rc
