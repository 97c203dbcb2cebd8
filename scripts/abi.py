#!/usr/bin/env python3
"""The C ABI of libmediakit, written down and compared with a release's (`make abi-check`).

    abi.py dump  LIB INCLUDE            print the ABI of LIB and the headers under INCLUDE
    abi.py check LIB INCLUDE BASELINE   compare with BASELINE; exit 1 naming each break
    abi.py write LIB INCLUDE BASELINE   (re)write BASELINE (at a release: `make abi-baseline`)

The ABI, one fact a line:
  symbol NAME                              a global symbol libmediakit exports (nm -D --defined-only)
  struct NAME size N align A               every `typedef struct NAME {...} NAME;` of INCLUDE/mediakit
                                           (and `typedef NAME OLD;`, a renamed struct's old name)
  field NAME.FIELD offset O size S         its fields, as the C compiler lays them out

The layout is the compiler's, not ours: a C program generated from the field names the headers
declare prints sizeof / _Alignof / offsetof of each, built with `cc` (CC=...) and run.

A break, which `check` refuses: a symbol of the baseline no longer exported; a struct or field of
the baseline gone; a field at another offset or of another size; a struct whose size or alignment
changed, except a struct that starts with `uint32_t struct_size` growing (it grows by appended
fields only, and callers say which size they know: the header's rule). Additions pass.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

STRUCT = re.compile(r"typedef\s+struct\s+(\w+)\s*\{(.*?)\}\s*(\w+)\s*;", re.S)
ALIAS = re.compile(r"^\s*typedef\s+(\w+)\s+(\w+)\s*;", re.M)   # typedef mk_new_settings mk_old_settings;


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def structs(include: Path) -> dict[str, list[str]]:
    """Every public struct of include/mediakit/*.h and its field names, in order."""
    out: dict[str, list[str]] = {}
    aliases: list[tuple[str, str]] = []   # (struct, its old name): a renamed struct, the same layout
    for header in sorted((include / "mediakit").glob("*.h")):
        text = re.sub(r"^\s*#[^\n]*", " ", _strip_comments(header.read_text()), flags=re.M)
        aliases += ALIAS.findall(text)
        for m in STRUCT.finditer(text):
            tag, body, name = m.groups()
            if tag != name:
                raise SystemExit(f"abi: {header.name}: struct {tag} is typedef'd as {name}; the ABI tool expects one name")
            fields: list[str] = []
            for decl in body.split(";"):
                decl = " ".join(decl.split())
                if not decl:
                    continue
                fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", decl)  # a function pointer: int (*name)(...)
                if fp:
                    fields.append(fp.group(1))
                    continue
                for part in decl.split(","):  # int32_t a, b[4];
                    names = re.findall(r"(\w+)\s*(?:\[[^\]]*\]\s*)*$", part.strip())
                    if not names:
                        raise SystemExit(f"abi: {header.name}: struct {name}: cannot read the field in '{decl}'")
                    fields.append(names[0])
            out[name] = fields
    for target, alias in aliases:
        if target in out and alias not in out:
            out[alias] = out[target]
    if not out:
        raise SystemExit(f"abi: no `typedef struct X {{...}} X;` under {include / 'mediakit'}")
    return out


def layout(include: Path) -> list[str]:
    """The layout lines of every public struct, from a C program the compiler builds."""
    found = structs(include)
    lines = ["#include <stdio.h>", "#include <stddef.h>",
             '#include "mediakit/mediakit.h"', '#include "mediakit/mediakit_plugin.h"', "int main(void) {"]
    for name, fields in found.items():
        lines.append(f'    printf("struct {name} size %zu align %zu\\n", sizeof({name}), _Alignof({name}));')
        for f in fields:
            lines.append(f'    printf("field {name}.{f} offset %zu size %zu\\n", offsetof({name}, {f}), '
                         f'sizeof((({name} *)0)->{f}));')
    lines += ["    return 0;", "}"]
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = Path(tmp) / "layout.c", Path(tmp) / "layout"
        src.write_text("\n".join(lines) + "\n")
        cc = os.environ.get("CC", "cc")
        build = subprocess.run([cc, "-std=c11", "-I", str(include), str(src), "-o", str(exe)],
                               capture_output=True, text=True)
        if build.returncode != 0:
            raise SystemExit(f"abi: the layout program does not build ({cc}):\n{build.stderr[-3000:]}")
        run = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
    return run.stdout.splitlines()


def symbols(lib: Path) -> list[str]:
    """The global symbols LIB defines in its dynamic table."""
    proc = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"abi: nm -D {lib}: {proc.stderr.strip()}")
    out = []
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1].isupper():
            out.append(parts[2])
    return sorted(set(out))


def dump(lib: Path, include: Path) -> list[str]:
    return [f"symbol {s}" for s in symbols(lib)] + layout(include)


def parse(lines: list[str]) -> tuple[set[str], dict[str, tuple[int, int]], dict[str, tuple[int, int]], set[str]]:
    """Symbols; struct -> (size, align); field -> (offset, size); structs versioned by struct_size."""
    syms: set[str] = set()
    structs_: dict[str, tuple[int, int]] = {}
    fields: dict[str, tuple[int, int]] = {}
    sized: set[str] = set()
    for n, line in enumerate(lines, 1):
        p = line.split()
        if not p or line.startswith("#"):
            continue
        if p[0] == "symbol" and len(p) == 2:
            syms.add(p[1])
        elif p[0] == "struct" and len(p) == 6:
            structs_[p[1]] = (int(p[3]), int(p[5]))
        elif p[0] == "field" and len(p) == 6:
            fields[p[1]] = (int(p[3]), int(p[5]))
            if p[1].endswith(".struct_size") and int(p[3]) == 0:
                sized.add(p[1].split(".")[0])
        else:
            raise SystemExit(f"abi: line {n}: cannot read '{line}'")
    return syms, structs_, fields, sized


def breaks(baseline: list[str], current: list[str]) -> list[str]:
    """What `current` breaks of `baseline`, one sentence each; empty when compatible."""
    bs, bst, bf, _ = parse(baseline)
    cs, cst, cf, csized = parse(current)
    out = [f"symbol {s} is no longer exported" for s in sorted(bs - cs)]
    for name, (size, align) in sorted(bst.items()):
        if name not in cst:
            out.append(f"struct {name} is gone")
            continue
        nsize, nalign = cst[name]
        if nalign != align:
            out.append(f"struct {name}: alignment {align} -> {nalign}")
        if nsize < size or (nsize > size and name not in csized):
            rule = "" if name in csized else " (it has no leading struct_size, so it may not grow)"
            out.append(f"struct {name}: size {size} -> {nsize}{rule}")
    for name, (offset, size) in sorted(bf.items()):
        if name not in cf:
            if name.split(".")[0] in cst:
                out.append(f"field {name} is gone")
        elif cf[name] != (offset, size):
            out.append(f"field {name}: offset {offset} size {size} -> offset {cf[name][0]} size {cf[name][1]}")
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[0] not in ("dump", "check", "write") or (argv[0] != "dump") != (len(argv) == 4):
        print(__doc__, file=sys.stderr)
        return 2
    lib, include = Path(argv[1]), Path(argv[2])
    if not lib.is_file():
        raise SystemExit(f"abi: {lib}: no such library (build first, or give FROM=BINDIR)")
    current = dump(lib, include)
    if argv[0] == "dump":
        print("\n".join(current))
        return 0
    baseline_path = Path(argv[3])
    if argv[0] == "write":
        baseline_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = baseline_path.with_name(baseline_path.name + ".tmp")
        tmp.write_text("# libmediakit C ABI (scripts/abi.py write): symbols, struct layouts\n" + "\n".join(current) + "\n")
        tmp.replace(baseline_path)
        print(f"abi: wrote {baseline_path} ({len(current)} lines)")
        return 0
    if not baseline_path.is_file():
        raise SystemExit(f"abi: {baseline_path}: no baseline")
    found = breaks(baseline_path.read_text().splitlines(), current)
    if found:
        print(f"abi: {lib} breaks the ABI of {baseline_path}:", file=sys.stderr)
        for b in found:
            print(f"  {b}", file=sys.stderr)
        return 1
    added = len(set(current) - set(baseline_path.read_text().splitlines()))
    print(f"abi: {lib} keeps the ABI of {baseline_path} ({added} lines added)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
