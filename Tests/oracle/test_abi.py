"""`make abi-check` (issue 34, item 4): the C ABI against the newest release's record.

Oracles: `nm -D` (the symbols the library exports) and the C compiler (sizeof / offsetof of every
struct the headers declare, printed by a program it builds); the record is Include/abi/*.abi.
The check must pass on the build under test, fail on a baseline doctored as a later library
would differ from it (a symbol removed, a field moved, a struct without struct_size grown, a
sized struct shrunk), and pass on additions (a symbol, a struct, a field appended to a struct
that starts with struct_size).
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

#: Every release's record, oldest first (by version: 0.10 after 0.9).
BASELINES = sorted((lib.REPO / "Include" / "abi").glob("mediakit-*.abi"),
                   key=lambda p: tuple(int(n) for n in p.stem.removeprefix("mediakit-").split(".")))


def _check(mk_bin: Path, baseline: Path) -> subprocess.CompletedProcess[bytes]:
    return lib.run(["make", "-s", "-C", lib.REPO, "abi-check", f"FROM={mk_bin}", f"ABI_BASELINE={baseline}"],
                   timeout=120)


def test_the_build_keeps_the_recorded_abi(mk_bin: Path) -> None:
    """The newest record (what `make abi-check` reads) and every older release's: a symbol or
    field of any release is still there, where it was."""
    assert BASELINES, "no Include/abi/mediakit-*.abi record"
    assert [p.name for p in BASELINES[:2]] == ["mediakit-0.1.abi", "mediakit-0.2.abi"]
    for baseline in BASELINES:
        proc = _check(mk_bin, baseline)
        assert proc.returncode == 0, baseline.name + ": " + lib.tail(proc.stderr + proc.stdout)


def test_the_record_is_the_compilers_layout(mk_bin: Path) -> None:
    """Every struct of the headers is recorded (and a renamed struct under its old name too:
    `typedef mk_decode_session_settings mk_decoder_settings;`), and one layout read independently
    of the tool (mk_edit: two int64_t then a double, 24 bytes, as the header's C says) matches."""
    text = BASELINES[-1].read_text()
    headers = "\n".join(h.read_text() for h in (lib.REPO / "Include" / "mediakit").glob("*.h"))
    declared = set(re.findall(r"typedef\s+struct\s+(\w+)\s*\{", headers))
    declared |= {old for new, old in re.findall(r"^typedef\s+(\w+)\s+(\w+)\s*;", headers, flags=re.M) if new in declared}
    assert "mk_decoder_settings" in declared and "mk_session_settings" in declared
    recorded = set(re.findall(r"^struct (\w+) ", text, flags=re.M))
    assert declared == recorded, (sorted(declared - recorded), sorted(recorded - declared))
    assert "struct mk_edit size 24 align 8" in text
    assert "field mk_edit.media_rate offset 16 size 8" in text


def _doctored(tmp_path: Path, edit) -> Path:  # type: ignore[no-untyped-def]
    lines = BASELINES[-1].read_text().splitlines()
    out = tmp_path / "doctored.abi"
    out.write_text("\n".join(edit(lines)) + "\n")
    return out


def _replace(lines: list[str], prefix: str, new: str) -> list[str]:
    hits = [i for i, l in enumerate(lines) if l.startswith(prefix)]
    assert len(hits) == 1, (prefix, hits)
    return lines[:hits[0]] + [new] + lines[hits[0] + 1:]


@pytest.mark.parametrize("case, edit, expected", [
    # The baseline exported a function this build lacks: removed.
    ("removed symbol", lambda ls: ls + ["symbol mk_function_of_the_last_release"],
     "symbol mk_function_of_the_last_release is no longer exported"),
    # The baseline had the field elsewhere: moved.
    ("moved field", lambda ls: _replace(ls, "field mk_edit.media_rate ", "field mk_edit.media_rate offset 8 size 8"),
     "field mk_edit.media_rate: offset 8 size 8 -> offset 16 size 8"),
    # mk_edit has no struct_size: it may not grow (the baseline says 16 bytes, the build 24).
    ("grown unsized struct", lambda ls: _replace(ls, "struct mk_edit ", "struct mk_edit size 16 align 8"),
     "struct mk_edit: size 16 -> 24"),
    # A sized struct smaller than the release's: a field was taken away.
    ("shrunk sized struct", lambda ls: _replace(ls, "struct mk_io ", "struct mk_io size 48 align 8"),
     "struct mk_io: size 48 -> 40"),
    ("removed struct", lambda ls: ls + ["struct mk_gone size 8 align 8"], "struct mk_gone is gone"),
])
def test_abi_check_fails_on_a_break(case, edit, expected, mk_bin: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    proc = _check(mk_bin, _doctored(tmp_path, edit))
    assert proc.returncode != 0, f"{case}: abi-check passed:\n{lib.tail(proc.stdout)}"
    assert expected in proc.stderr.decode(), lib.tail(proc.stderr)


def test_abi_check_passes_on_additions(mk_bin: Path, tmp_path: Path) -> None:
    """What this build has beyond the baseline is allowed: a symbol, a struct, and a sized
    struct grown by an appended field (mk_io, which starts with struct_size, recorded 8 bytes
    smaller and without its last field, `name`)."""
    def older(lines: list[str]) -> list[str]:
        lines = [l for l in lines if l not in ("symbol mk_version",) and not l.startswith("struct mk_edit ")
                 and not l.startswith("field mk_edit.") and not l.startswith("field mk_io.name ")]
        return _replace(lines, "struct mk_io ", "struct mk_io size 32 align 8")
    proc = _check(mk_bin, _doctored(tmp_path, older))
    assert proc.returncode == 0, lib.tail(proc.stderr + proc.stdout)
