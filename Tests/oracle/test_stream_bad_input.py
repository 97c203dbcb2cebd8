"""Garbage, truncated, zero-byte and tag-only input through AudioStreamParser (C API,
mk_stream_parser_*): the corpus's broken_* MP3 / AAC files, cut copies of good files, and inputs
made here whose headers declare sizes far beyond the input (an ID3v2 tag of 256 MiB, an APEv2
tag of 4 GiB, an ADTS frame of 8191 bytes, a free-format frame with no end, Lyrics3 with no end).

Oracles (the issue's rule for bad input, ORACLES.md):
- no crash and no hang: the driver exits 0 within the time limit, whatever the chunking
  (1 byte, 7, 4096, the whole input in one push);
- the damage is reported: at least one warning event (or the push's error) naming the byte
  offset ("offset N", N inside the input), and every warning names one;
- no allocation larger than the input: Tests/c/stream_alloc.c counts every heap allocation of
  the process (it interposes malloc and friends, ELF symbol interposition) during a second pass
  over the input (the first warms the Swift runtime's one-time set-up). The largest single
  block must be at most max(input size, 4 KiB): 4 KiB covers what any parser holds whatever
  its input (the parser object, about 750 bytes, and the arrays of a few events, about 1.3
  KiB, measured on a zero-byte input); nothing may grow with a size the input declares. The
  peak heap growth (all blocks live at once) must stay within 64 KiB + 8 x the input: linear
  in the bytes pushed, never in the sizes declared.
"""
from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib
from test_capi import _build, _libdir

ROOT = Path(__file__).resolve().parents[2]
FIXED = 4096
ARRAY_HEADER = 64   # a Swift array of N bytes: a 32-byte header, malloc rounds up to 16

CORPUS = sorted(p.name for p in lib.SHARED_MEDIA.glob("broken_*") if p.suffix in (".mp3", ".aac")) if lib.SHARED_MEDIA.is_dir() else []


def _syncsafe(n: int) -> bytes:
    return bytes([(n >> 21) & 0x7F, (n >> 14) & 0x7F, (n >> 7) & 0x7F, n & 0x7F])


def _made(name: str) -> bytes:
    """The inputs made here (see the module's docstring)."""
    good = (lib.SHARED_MEDIA / "mp3_cbr_56k_mono_no_xing.mp3").read_bytes()
    adts = (lib.SHARED_MEDIA / "aac_adts_lc_with_id3v2_prefix.aac").read_bytes()
    rnd = random.Random(12)
    return {
        "zero_bytes": b"",
        "three_bytes": b"\xff\xfb\x90",
        "random_64k": bytes(rnd.getrandbits(8) for _ in range(65536)),
        "sync_words_only": b"\xff\xfb" * 2048,
        "mp3_cut_inside_a_frame": good[: len(good) // 2 + 57],
        "mp3_first_half_then_garbage": good[: len(good) // 2] + bytes(rnd.getrandbits(8) for _ in range(3000)) + good[len(good) // 2:],
        "adts_cut_inside_a_frame": adts[: len(adts) // 3 + 5],
        "id3v2_claims_256mib": b"ID3\x04\x00\x00" + _syncsafe((1 << 28) - 1) + b"TIT2" + b"\x00" * 90,
        "id3v2_only": b"ID3\x03\x00\x00" + _syncsafe(20) + b"TIT2\x00\x00\x00\x06\x00\x00\x00Title" + b"\x00" * 5,
        "id3v1_only": b"TAG" + b"Title".ljust(30, b"\0") + b"\0" * 95,
        "apev2_claims_4gib": b"APETAGEX" + (2000).to_bytes(4, "little") + (0xFFFFFFFF).to_bytes(4, "little")
                             + (1).to_bytes(4, "little") + (0xA0000000).to_bytes(4, "little") + b"\0" * 8 + b"x" * 200,
        "lyrics3_without_end": b"LYRICSBEGIN" + b"la " * 3000,
        "adts_frame_of_8191_bytes": b"\xff\xf1\x50\x83\xff\xff\xfc" + b"\0" * 300,
        "free_format_without_end": b"\xff\xfb\x04\xc4" + bytes(rnd.getrandbits(8) for _ in range(20000)),
        "adif": b"ADIF" + b"\0" * 200,
    }[name]


MADE = ["zero_bytes", "three_bytes", "random_64k", "sync_words_only", "mp3_cut_inside_a_frame",
        "mp3_first_half_then_garbage", "adts_cut_inside_a_frame", "id3v2_claims_256mib", "id3v2_only", "id3v1_only",
        "apev2_claims_4gib", "lyrics3_without_end", "adts_frame_of_8191_bytes", "free_format_without_end", "adif"]


@pytest.fixture(scope="module")
def driver(mk_bin, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("stream_alloc") / "stream_alloc"
    return _build(ROOT / "Tests/c/stream_alloc.c", out, _libdir(Path(mk_bin)))


def _check(driver: Path, path: Path, size: int, chunk: int) -> None:
    try:
        proc = subprocess.run([str(driver), str(path), str(chunk)], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{path.name}, chunks of {chunk}: no answer in 120 s (a hang)", pytrace=False)
    assert proc.returncode == 0, f"{path.name}, chunks of {chunk}: exit status {proc.returncode}\n{lib.tail(proc.stderr)}"
    out = proc.stdout.splitlines()
    facts = dict(l.split(" ", 1) for l in out if not l.startswith("warning "))
    warnings = [l[len("warning "):] for l in out if l.startswith("warning ")]
    where, _, error = facts["status"].partition(" ")
    reports = warnings + ([error] if error != "OK" else [])
    if not reports:
        # Nothing to report only when nothing is damaged: the packets and the tags (read here
        # from their headers) are the whole input. (Some of the corpus's broken_* files are
        # whole frames that a decoder, not a parser, finds damaged.)
        packet_bytes = int(facts["packets"].split()[2])
        assert packet_bytes and packet_bytes + _tag_bytes(path.read_bytes()) == size, \
            f"{path.name}, chunks of {chunk}: no warning and no error, and not all of it is frames and tags ({facts})"
    for text in reports:
        m = re.search(r"offset (\d+)", text)
        assert m and int(m.group(1)) <= size, f"{path.name}, chunks of {chunk}: a report that names no offset in the input: {text}"
    largest, peak = int(facts["largest-allocation"]), int(facts["peak-heap-growth"])
    assert largest <= max(size + ARRAY_HEADER, FIXED), f"{path.name} ({size} bytes), chunks of {chunk}: an allocation of {largest} bytes"
    assert peak <= 64 * 1024 + 8 * size, f"{path.name} ({size} bytes), chunks of {chunk}: the heap grew by {peak} bytes"


def _tag_bytes(data: bytes) -> int:
    """Bytes in an ID3v2 tag at the start and in ID3v1 / APEv2 tags at the end (ID3v2.4 4.1,
    ID3v1, APEv2 footer: size counts the items and the footer, plus 32 with a header)."""
    n, end = 0, len(data)
    if data[:3] == b"ID3" and len(data) >= 10:
        n += 10 + ((data[6] << 21) | (data[7] << 14) | (data[8] << 7) | data[9]) + (10 if data[5] & 0x10 else 0)
    if end >= 128 and data[end - 128:end - 125] == b"TAG":
        n, end = n + 128, end - 128
    if end >= 32 and data[end - 32:end - 24] == b"APETAGEX":
        size = int.from_bytes(data[end - 20:end - 16], "little")
        n += size + (32 if int.from_bytes(data[end - 12:end - 8], "little") & 0x80000000 else 0)
    return n


def _chunks(size: int) -> list[int]:
    return [c for c in (1, 7, 4096, max(1, size)) if c != 1 or size <= 50_000]


@pytest.mark.parametrize("name", CORPUS)
def test_corpus_broken_files(name, driver, shared_media):
    path = shared_media / name
    size = path.stat().st_size
    for chunk in _chunks(size):
        _check(driver, path, size, chunk)


@pytest.mark.parametrize("name", MADE)
def test_made_inputs(name, driver, tmp_path):
    data = _made(name)
    path = tmp_path / (name + (".aac" if "adts" in name or name == "adif" else ".mp3"))
    path.write_bytes(data)
    for chunk in _chunks(len(data)):
        _check(driver, path, len(data), chunk)
