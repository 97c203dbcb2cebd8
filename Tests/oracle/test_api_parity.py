"""The parity table docs/api-parity.md (issue 18): each public Swift API of the main types has a
row, and the C and Python counterparts it names exist.

Oracles:
  Swift    the public members of the main types, scanned from Sources/MediaKit (api_parity_lib):
           each has exactly one row, and no row names a member that does not exist.
  C        `nm -D --defined-only libmediakit.so` for functions; the public headers for struct
           fields (`mk_struct.field`), struct types and MK_ constants.
  Python   the mediakit package, imported in a subprocess (Bindings/python): `mediakit.X` and
           `mediakit.Class.attribute` (class attributes, properties, dataclass fields, or
           attributes its methods assign to self).
"""

from __future__ import annotations

import json
import os
import re
import sys

import api_parity_lib as parity
import oracle_lib as lib

# mediakit.h, the per-object headers it includes, and the types it shares with the plugin ABI.
HEADERS = sorted(h for h in (lib.REPO / "Include" / "mediakit").glob("*.h") if h.name != "mediakit_plugin.h")


def _header_names() -> tuple[set[str], dict[str, set[str]]]:
    """The MK_ macros and the typedef'd structs of the public headers with their field names."""
    text = "\n".join(h.read_text() for h in HEADERS)
    text = re.sub(r"/\*(?:.|\n)*?\*/", "", text)
    macros = set(re.findall(r"#define\s+(MK_\w+)", text))
    structs: dict[str, set[str]] = {}
    for name, body in re.findall(r"typedef struct (\w+) \{(.*?)\} \1;", text, re.S):
        fields: set[str] = set()
        for statement in body.split(";"):
            statement = statement.strip()
            if not statement:
                continue
            pointer = re.search(r"\(\*\s*(\w+)\)", statement)
            if pointer:
                fields.add(pointer.group(1))
                continue
            statement = re.sub(r"\[[^\]]*\]", "", statement)
            for part in statement.split(","):
                m = re.search(r"(\w+)\s*$", part.strip())
                if m:
                    fields.add(m.group(1))
        structs[name] = fields
    return macros, structs


def test_every_public_swift_api_has_one_row():
    """A public member of the main types without a row fails; so does a row for a member that
    no longer exists, and a member listed twice. Members include the cases of the public enums
    of the main types (the converter's and sessions' options, statuses, events): a case added
    in Swift without its C constant and Python name fails here. SampleFormat's cases have their
    own four-column table (checked value for value below)."""
    members = parity.swift_members()
    rows = parity.table_rows()
    listed = [parity.names_in(r[0])[0] for r in rows if parity.names_in(r[0])]
    assert len(rows) == len(listed), "a row's Swift cell names no `Type.member`"
    listed += parity.case_table_members()
    assert any(m.startswith("TrimMode.") for m in members), "the scanner no longer collects enum cases"
    missing = sorted(members - set(listed))
    assert not missing, f"public Swift APIs without a row in docs/api-parity.md: {missing}"
    stale = sorted(set(listed) - members)
    assert not stale, f"rows for Swift APIs that are not public members (any more): {stale}"
    twice = sorted({m for m in listed if listed.count(m) > 1})
    assert not twice, f"listed twice: {twice}"
    for swift, c, py in rows:
        assert c and py, f"{swift}: an empty cell (write '—' and why)"


# The session types (issue 35: "the checker fails on a missing counterpart"): every row has its C
# and Python counterpart, or says why none is needed; a bare dash or "not yet" fails.
SESSION_TYPES = ("DecodeSession", "AsyncDecodeSession")


def test_session_types_have_every_counterpart():
    rows = [r for r in parity.table_rows() if parity.names_in(r[0]) and parity.names_in(r[0])[0].split(".")[0] in SESSION_TYPES]
    assert len(rows) > 40, "the session types' rows were not found"
    for swift, c, py in rows:
        for language, cell in (("C", c), ("Python", py)):
            assert cell.strip("— ") != "", f"{swift}: no {language} counterpart and no reason (a bare dash)"
            assert "not yet" not in cell.lower(), f"{swift}: the {language} counterpart is missing: {cell}"


def test_c_counterparts_are_exported_or_declared(mk_bin):
    """Every C name of the table: an exported function of libmediakit.so, a struct field or
    struct of the headers, or an MK_ constant."""
    proc = lib.run(["nm", "-D", "--defined-only", mk_bin / "libmediakit.so"])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    exported = {l.split()[-1] for l in proc.stdout.decode().splitlines() if len(l.split()) == 3}
    macros, structs = _header_names()
    problems = []
    for swift, c, _ in parity.table_rows():
        for name in parity.names_in(c):
            if "." in name:
                struct, field = name.split(".", 1)
                if field not in structs.get(struct, set()):
                    problems.append(f"{swift}: {name} is not a field of a struct in the headers")
            elif name.startswith("MK_"):
                if name not in macros:
                    problems.append(f"{swift}: {name} is not defined in the headers")
            elif name.startswith("mk_"):
                if name not in exported and name not in structs:
                    problems.append(f"{swift}: {name} is neither exported by libmediakit.so nor a struct of the headers")
            else:
                problems.append(f"{swift}: C cell names {name!r}, not a C name")
    assert not problems, "\n".join(problems)


_PY_CHECK = r'''
import dataclasses, inspect, json, re, sys
import mediakit
names = json.loads(sys.argv[1])
absent = []
for name in names:
    parts = name.split(".")
    if parts[0] != "mediakit":
        absent.append(name)
        continue
    obj = mediakit
    for i, part in enumerate(parts[1:]):
        if hasattr(obj, part):
            obj = getattr(obj, part)
            continue
        ok = False
        if inspect.isclass(obj):
            fields = {f.name for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else set()
            annotated = set()
            for k in obj.__mro__:
                annotated |= set(getattr(k, "__annotations__", {}))
            try:
                source = inspect.getsource(obj)
            except (OSError, TypeError):
                source = ""
            ok = part in fields or part in annotated or re.search(r"self\.%s\s*[:=]" % re.escape(part), source) is not None
        if not ok:
            absent.append(name)
        break
print(json.dumps(absent))
'''


def test_python_counterparts_exist(mk_bin):
    """Every Python name of the table exists in the mediakit package."""
    names = sorted({n for _, _, py in parity.table_rows() for n in parity.names_in(py)})
    assert names, "the table names no Python API"
    env = dict(os.environ, PYTHONPATH=str(lib.REPO / "Bindings" / "python"),
               MEDIAKIT_LIBRARY=str(mk_bin / "libmediakit.so"))
    proc = lib.run([sys.executable, "-c", _PY_CHECK, json.dumps(names)], env=env)
    assert proc.returncode == 0, lib.tail(proc.stderr)
    absent = json.loads(proc.stdout)
    assert not absent, f"Python names in docs/api-parity.md that the mediakit package lacks: {absent}"


_PY_SAMPLE_CODES = r'''
import json, sys
from mediakit._audio import _audio_format
print(json.dumps({n: _audio_format(n, 48000, 2).sample_format for n in json.loads(sys.argv[1])}))
'''


def test_every_sample_format_has_its_c_code_and_python_name(mk_bin):
    """Each `SampleFormat` case has a row in the parity table's cases table (four columns: case,
    value, C, Python), naming the MK_SAMPLES_ constant whose value (mediakit_types.h) is the
    case's raw value (Frame.swift), and a Python name ("s16be") that opens a converter of that
    code: a case added in one language only fails here."""
    swift = (lib.REPO / "Sources" / "MediaKit" / "Core" / "Frame.swift").read_text()
    body = swift[swift.index("public enum SampleFormat"):swift.index("public enum PixelFormat")]
    cases = {name: int(value) for name, value in re.findall(r"^\s*case (\w+) = (\d+)", body, re.M)}
    assert len(cases) >= 28, cases
    header = (lib.REPO / "Include" / "mediakit" / "mediakit_types.h").read_text()
    macros = {name: int(value) for name, value in re.findall(r"#define\s+(MK_SAMPLES_\w+)\s+(\d+)", header)}
    # The cases table: | `SampleFormat.case` | value | `MK_SAMPLES_X` | "name" (...) |
    rows = {}
    for line in parity.TABLE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and line.lstrip().startswith("| `SampleFormat."):
            rows[parity.names_in(cells[0])[0].split(".", 1)[1]] = (cells[1], cells[2], cells[3])
    problems: list[str] = []
    python_names: list[tuple[str, int]] = []
    for name in sorted(set(rows) - set(cases)):
        problems.append(f"a row for SampleFormat.{name}, which is not a case")
    for name, value in cases.items():
        if name not in rows:
            problems.append(f"SampleFormat.{name} has no row")
            continue
        listed, c, py = rows[name]
        if listed != str(value):
            problems.append(f"SampleFormat.{name} is {value}, the row says {listed}")
        codes = [n for n in parity.names_in(c) if n.startswith("MK_SAMPLES_")]
        if len(codes) != 1 or macros.get(codes[0]) != value:
            problems.append(f"SampleFormat.{name} = {value}: C cell {c!r} names no MK_SAMPLES_ constant of that value")
        quoted = re.findall(r'"(\w+)"', py)
        if len(quoted) != 1:
            problems.append(f"SampleFormat.{name}: Python cell {py!r} names no sample-format string")
        else:
            python_names.append((quoted[0], value))
    assert set(macros.values()) == set(cases.values()), "MK_SAMPLES_* values and SampleFormat's raw values differ"
    env = dict(os.environ, PYTHONPATH=str(lib.REPO / "Bindings" / "python"), MEDIAKIT_LIBRARY=str(mk_bin / "libmediakit.so"))
    proc = lib.run([sys.executable, "-c", _PY_SAMPLE_CODES, json.dumps(sorted({n for n, _ in python_names}))], env=env)
    assert proc.returncode == 0, lib.tail(proc.stderr)
    codes = json.loads(proc.stdout)
    for n, value in python_names:
        if codes[n] != value:
            problems.append(f'Python "{n}" gives code {codes[n]}, the row says {value}')
    assert not problems, "\n".join(problems)
