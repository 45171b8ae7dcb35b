#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Generate the PMD_INFO_STRING C source for DPDK drivers.

usage: gen-pmdinfo.py OUTPUT.c INPUT...

Each INPUT is an ELF object (.o) or an ar archive (.a, normal or thin) of
ELF objects. In the local symbol table of every object we look for what
DPDK's registration macros (rte_dev.h) leave behind:

  this_pmd_name<N>               RTE_PMD_EXPORT_NAME: the driver name
  __<drv>_param_string_export    RTE_PMD_REGISTER_PARAM_STRING
  __<drv>_kmod_dep_export        RTE_PMD_REGISTER_KMOD_DEP
  __<drv>_pci_tbl_export         RTE_PMD_REGISTER_PCI_TABLE: the name of a
                                 struct rte_pci_id array in the same object

OUTPUT.c gets one `PMD_INFO_STRING= {json}` array per driver. It must be
linked into the driver's shared object, where dpdk-pmdinfo.py finds the
strings in .rodata. The JSON holds "name", "params" and "kmod" when
registered, and always "pci_ids" (a list of [vendor, device,
subsystem_vendor, subsystem_device], empty for a virtual device).
"""

import json
import os
import re
import sys
from io import BytesIO

from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

NAME_RE = re.compile(r"^this_pmd_name(\d+)(\..*)?$")
TAG_RE = re.compile(r"^__(.+)_(param_string|kmod_dep|pci_tbl)_export(\..*)?$")
PCI_ID_SIZE = 12  # struct rte_pci_id: u32 class, u16 vendor/device/subsys x2


class GenError(Exception):
    """A fatal input problem, reported without a traceback."""


def ar_members(path, blob):
    """Yield (member name, bytes) of every object in an ar archive."""
    thin = blob.startswith(b"!<thin>\n")
    if not thin and not blob.startswith(b"!<arch>\n"):
        raise GenError(f"{path}: not an ar archive")
    pos = 8
    longnames = b""
    while pos + 60 <= len(blob):
        hdr = blob[pos:pos + 60]
        if hdr[58:60] != b"`\n":
            raise GenError(f"{path}: bad ar member header at {pos}")
        name = hdr[0:16].decode("ascii", "replace").rstrip()
        try:
            size = int(hdr[48:58].decode("ascii").strip())
        except ValueError as exc:
            raise GenError(f"{path}: bad ar member size at {pos}") from exc
        pos += 60
        special = name in ("/", "//", "/SYM64/", "__.SYMDEF", "__.SYMDEF SORTED")
        # a thin archive stores no data for objects, only for its tables
        stored = size if (special or not thin) else 0
        data = blob[pos:pos + stored]
        if name.startswith("#1/"):
            # BSD: the name is stored at the start of the data
            nlen = int(name[3:])
            name, data = data[:nlen].rstrip(b"\0").decode(), data[nlen:]
        pos += stored + (stored & 1)
        if name == "//":
            longnames = data
            continue
        if special:
            continue
        if name.startswith("/") and name[1:].isdigit():
            off = int(name[1:])
            end = longnames.find(b"\n", off)
            name = longnames[off:end if end >= 0 else None].decode()
        name = name.rstrip("/")
        if thin:
            member = os.path.join(os.path.dirname(path), name)
            with open(member, "rb") as f:
                data = f.read()
        yield name, data


def read_inputs(paths):
    """Yield (label, bytes) of every ELF object given directly or in archives."""
    for path in paths:
        with open(path, "rb") as f:
            blob = f.read()
        if blob.startswith((b"!<arch>\n", b"!<thin>\n")):
            for name, data in ar_members(path, blob):
                if data.startswith(b"\x7fELF"):
                    yield f"{path}({name})", data
        elif blob.startswith(b"\x7fELF"):
            yield path, blob
        else:
            raise GenError(f"{path}: neither an ELF object nor an ar archive")


def symbol_bytes(elf, sym):
    """Return the bytes a defined data symbol covers."""
    shndx = sym["st_shndx"]
    if not isinstance(shndx, int) or shndx == 0:
        return None
    sec = elf.get_section(shndx)
    if sec["sh_type"] == "SHT_NOBITS":
        return bytes(sym["st_size"])
    # relocatable objects hold section offsets, linked ones addresses
    off = sym["st_value"]
    if elf["e_type"] != "ET_REL":
        off -= sec["sh_addr"]
    data = sec.data()
    if off < 0 or off + sym["st_size"] > len(data):
        raise GenError(f"symbol {sym.name} lies outside section {sec.name}")
    return data[off:off + sym["st_size"]]


def c_string(raw, label, what):
    """Decode a NUL-terminated char array."""
    text = raw.split(b"\0", 1)[0]
    try:
        return text.decode("ascii")
    except UnicodeDecodeError as exc:
        raise GenError(f"{label}: {what} is not ASCII") from exc


def pci_ids(elf, syms, table, label):
    """Decode a struct rte_pci_id array ended by a zero vendor id."""
    sym = syms.get(table)
    if sym is None:
        raise GenError(f"{label}: PCI table {table} not found")
    raw = symbol_bytes(elf, sym)
    order = "little" if elf.little_endian else "big"
    ids = []
    for off in range(0, len(raw) - PCI_ID_SIZE + 1, PCI_ID_SIZE):
        fields = [int.from_bytes(raw[off + 4 + 2 * i:off + 6 + 2 * i], order)
                  for i in range(4)]
        if fields[0] == 0:
            break
        ids.append(fields)
    return ids


def scan_object(label, blob, drivers):
    """Add the drivers registered in one ELF object to drivers (by name)."""
    elf = ELFFile(BytesIO(blob))
    symtab = elf.get_section_by_name(".symtab")
    if not isinstance(symtab, SymbolTableSection):
        return
    syms = {}
    for sym in symtab.iter_symbols():
        if sym.name and sym["st_info"]["type"] == "STT_OBJECT":
            syms.setdefault(sym.name, sym)
    names = []
    tags = {}
    for name, sym in syms.items():
        if NAME_RE.match(name):
            names.append(c_string(symbol_bytes(elf, sym), label, name))
            continue
        m = TAG_RE.match(name)
        if m:
            value = c_string(symbol_bytes(elf, sym), label, name)
            tags.setdefault(m.group(1), {})[m.group(2)] = value
    for drv in sorted(names):
        if drv in drivers:
            raise GenError(f"{label}: driver {drv} registered twice")
        info = {"name": drv}
        tag = tags.get(drv, {})
        if "param_string" in tag:
            info["params"] = tag["param_string"]
        if "kmod_dep" in tag:
            info["kmod"] = tag["kmod_dep"]
        info["pci_ids"] = (pci_ids(elf, syms, tag["pci_tbl"], label)
                           if "pci_tbl" in tag else [])
        drivers[drv] = info


def c_literal(text):
    """Quote text as a C string literal (text is ASCII JSON)."""
    out = []
    for ch in text:
        if ch in '"\\?':  # '?' too: no trigraphs under strict -std=c11
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append(f"\\{ord(ch):03o}")
    return '"' + "".join(out) + '"'


def render(drivers):
    lines = [
        "/* SPDX-License-Identifier: BSD-3-Clause */",
        "/* Generated by devtools/gen-pmdinfo.py: do not edit. */",
        "",
    ]
    for idx, drv in enumerate(sorted(drivers)):
        info = json.dumps(drivers[drv], separators=(", ", ": "))
        lines.append(f"static const char vbr_pmd_info_{idx}[] "
                     "__attribute__((used)) =")
        lines.append("\t" + c_literal("PMD_INFO_STRING= " + info) + ";")
    return "\n".join(lines) + "\n"


def main(argv):
    if len(argv) < 3:
        print("usage: gen-pmdinfo.py OUTPUT.c INPUT...", file=sys.stderr)
        return 2
    output, inputs = argv[1], argv[2:]
    drivers = {}
    try:
        for label, blob in read_inputs(inputs):
            scan_object(label, blob, drivers)
        if not drivers:
            raise GenError("no RTE_PMD_EXPORT_NAME (this_pmd_name*) symbol in "
                           + " ".join(inputs))
    except (OSError, GenError) as exc:
        print(f"gen-pmdinfo.py: error: {exc}", file=sys.stderr)
        return 1
    tmp = output + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(render(drivers))
    os.replace(tmp, output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
