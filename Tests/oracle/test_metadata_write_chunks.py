"""The remaining tag writers of issue 33 item 3: ID3v2.3 on request (MP3), the ID3v2 chunk of WAV
(`id3 `) and AIFF (`ID3 `), AIFF's NAME / AUTH / (c) / ANNO chunks, CAF's `info` chunk and the
QuickTime `udta` strings of a `.mov`.

Oracles (one ffmpeg reference per case, written from the same input and the same -metadata):
  bytes    ffmpeg 5.1's muxer output where its layout is ours: the ID3v2.3 tag of
           `ffmpeg -map_metadata 0 -id3v2_version 3 -fflags +bitexact` (MP3, and AIFF with
           -write_id3v2 1), the AIFF text chunks, the CAF `info` chunk, the `.mov` udta string
           atoms (©swr, the writing tool, left out) are byte for byte ours.
  ffprobe  the format tags (`encoder` left out), chapters and cover art of our file equal those
           of ffmpeg's.
  mutagen  the ID3 frames of our MP3 / WAV / AIFF (T*, TXXX, COMM, APIC, CHAP, CTOC) equal those
           of ffmpeg's file (WAV: FFmpeg 5.1's wav muxer writes no ID3 chunk, so its MP3 with the
           same tag version is the reference: the tag is the same, only its place differs).
  reader   our own demuxer (mk-probe --json) reads back the tags ffprobe reads from our file.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

import oracle_lib as lib

MP3 = "mp3_id3v2_apic_1400px_48k.mp3"   # ID3v2.3: text, TXXX, PRIV, APIC, CHAP / CTOC; TCON in UTF-16
IGNORED = {"encoder"}
BRANDS = {"major_brand", "minor_version", "compatible_brands"}   # the MP4 ftyp, not tags
# Tags set on both sides: a non-ASCII title (ID3v2.3 UTF-16), a date (TYER + TDAT), the AIFF text
# chunks' author / copyright / comment (odd and even lengths), QuickTime's make / model / keywords.
EXTRA = {"title": "Zwei \u00c4pfel", "date": "2021-03-04", "author": "An Author", "copyright": "(c) 2021",
         "comment": "A comment", "make": "Maker", "model": "Mod", "keywords": "k1,k2"}


def _set(extra: dict[str, str], flag: str) -> list[str]:
    """-metadata / --metadata options, in key order (the order mk-remux applies them in)."""
    return [x for k, v in sorted(extra.items()) for x in (flag, f"{k}={v}")]


_probe = lib.ffprobe_metadata


def _view(path: Path) -> dict:
    """ffprobe's format tags (without encoder and the MP4 brands), chapters and picture count."""
    info = _probe(path)
    skip = IGNORED | BRANDS
    return {
        "format": {k.lower(): v for k, v in (info["format"].get("tags") or {}).items() if k.lower() not in skip},
        "chapters": [(c["start_time"], (c.get("tags") or {}).get("title")) for c in info.get("chapters", [])],
        "pictures": sum(1 for s in info["streams"] if s.get("disposition", {}).get("attached_pic")),
    }


def _ours_tags(mk_probe: Path, path: Path) -> dict[str, str]:
    """Our demuxer's format tags (mk-probe --json: libavformat's names), without encoder and
    the MP4 brands."""
    cmd = [mk_probe, "--json", path]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    tags = json.loads(proc.stdout)["format"]["tags"]
    return {k.lower(): v for k, v in tags.items() if k.lower() not in IGNORED | BRANDS}


_cover = lib.first_attached_picture


def _id3_frames(path: Path) -> dict[str, str]:
    """mutagen's ID3 frames of the file (MP3, WAV or AIFF), by hash key, as their repr (TSSE,
    the writing tool, left out)."""
    import mutagen

    f = mutagen.File(path)
    assert f is not None and f.tags is not None, f"mutagen finds no tags in {path.name}"
    return {k: repr(v) for k, v in f.tags.items() if not k.startswith("TSSE")}


def _id3_version(path: Path) -> tuple[int, int, int]:
    import mutagen

    return mutagen.File(path).tags.version


def _tag_bytes(data: bytes, at: int = 0) -> bytes:
    """The ID3v2 tag starting at `at` (its header's syncsafe size + 10)."""
    assert data[at:at + 3] == b"ID3", data[at:at + 10]
    size = 0
    for b in data[at + 6:at + 10]:
        size = size << 7 | b
    return data[at:at + 10 + size]


def _chunks(path: Path, big_endian: bool) -> list[tuple[bytes, bytes]]:
    """The (id, body) chunks of a RIFF / IFF file, in order."""
    data = path.read_bytes()
    out, at = [], 12
    while at + 8 <= len(data):
        cid = data[at:at + 4]
        size = struct.unpack(">I" if big_endian else "<I", data[at + 4:at + 8])[0]
        out.append((cid, data[at + 8:at + 8 + size]))
        at += 8 + size + (size & 1)
    return out


def _ffmpeg(src: Path, out: Path, *args: str) -> Path:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-map_metadata", "0", "-map_chapters", "0", *args, out]
    lib.oracle_ok(lib.run(cmd), cmd)
    return out


def _ours(tool: Path, src: Path, out: Path, *args: str) -> Path:
    cmd = [tool, "--quiet", *args, src, out]
    lib.check_ok(lib.run(cmd), cmd)
    return out


# --- 1. MP3, ID3v2.3 --------------------------------------------------------------------------

# A comment is left out: both ID3 writers write COMM where FFmpeg writes TXXX "comment" (its
# reader shows both as "comment"; docs/metadata.md).
MP3_EXTRA = {k: v for k, v in EXTRA.items() if k != "comment"}


@pytest.mark.parametrize("extra", [{}, MP3_EXTRA], ids=["copied", "set-non-ascii-date"])
def test_mp3_id3v23_like_ffmpeg(extra, shared_media, mk_remux, mk_probe, tmp_path):
    """mk-remux --id3v2-version 3 writes the ID3v2.3 tag ffmpeg -id3v2_version 3 writes, byte for
    byte (text frames in ISO-8859-1 or UTF-16 with a BOM, TYER / TDAT for a date, CTOC / CHAP,
    APIC, 10 bytes of padding); ffprobe, mutagen and our reader see the same tags."""
    src = shared_media / MP3
    ours = _ours(mk_remux, src, tmp_path / "ours.mp3", "--id3v2-version", "3", *_set(extra, "--metadata"))
    ref = _ffmpeg(src, tmp_path / "ref.mp3", "-map", "0", "-c", "copy", "-id3v2_version", "3", "-fflags", "+bitexact",
                  *_set(extra, "-metadata"))
    assert _id3_version(ours) == (2, 3, 0)
    assert _tag_bytes(ours.read_bytes()) == _tag_bytes(ref.read_bytes())
    assert _id3_frames(ours) == _id3_frames(ref)
    a, b = _view(ours), _view(ref)
    assert a == b, f"ffprobe: ours {a}, ffmpeg {b}"
    assert _ours_tags(mk_probe, ours) == a["format"]
    assert _cover(ours) == _cover(src)


@pytest.mark.parametrize("date", ["2021", "2021-03-04 10:00", "March 2021", "20-01-02", "2021-3-4"])
def test_mp3_id3v23_dates_like_ffmpeg(date, shared_media, mk_remux, tmp_path):
    """The date's split into TYER / TDAT (or a TXXX "date" when it does not start with a year)
    is ffmpeg's, byte for byte, whatever the date's form."""
    src = shared_media / MP3
    ours = _ours(mk_remux, src, tmp_path / "ours.mp3", "--id3v2-version", "3", "--no-metadata", "--metadata", f"date={date}")
    ref = tmp_path / "ref.mp3"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-map", "0:a", "-map_metadata", "-1", "-map_chapters", "-1",
           "-c", "copy", "-id3v2_version", "3", "-fflags", "+bitexact", "-metadata", f"date={date}", ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    assert _tag_bytes(ours.read_bytes()) == _tag_bytes(ref.read_bytes())


def test_mp3_id3v2_version_refused_elsewhere(shared_media, mk_remux, tmp_path):
    """--id3v2-version takes 3 or 4; a format without ID3v2 tags refuses it, naming it; nothing is
    written."""
    src = shared_media / MP3
    for args, out, says in ((["--id3v2-version", "2"], tmp_path / "a.mp3", b"3 or 4"),
                            (["--id3v2-version", "3"], tmp_path / "b.mka", b"id3v2-version")):
        proc = lib.run([mk_remux, "--quiet", *args, src, out])
        assert proc.returncode != 0 and says in proc.stderr, proc.stderr
        assert not out.exists()


# --- 2. WAV `id3 ` chunk ------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["4", "3"])
def test_wav_id3_chunk(version, shared_media, mk_transcode, mk_probe, tmp_path):
    """mk-transcode --write-id3v2 into WAV: an `id3 ` chunk after the samples whose ID3 frames
    (mutagen) are those of ffmpeg's MP3 tag of the same input and version (FFmpeg 5.1's wav muxer
    has no ID3 option). ffprobe reads from it the chapters, the cover and the PRIV frames as from
    that MP3; its text frames it discards for the LIST/INFO tags ("Discarding ID3 tags because
    more suitable tags were found"), which are those of ffmpeg's WAV. Our reader reads what
    ffprobe reads."""
    src = shared_media / MP3
    ours = _ours(mk_transcode, src, tmp_path / "ours.wav", "--codec", "pcm_s16le", "--write-id3v2", "--id3v2-version", version)
    ref = _ffmpeg(src, tmp_path / "ref.mp3", "-map", "0", "-c", "copy", "-id3v2_version", version)
    ref_wav = _ffmpeg(src, tmp_path / "ref.wav", "-map", "0:a", "-c:a", "pcm_s16le")
    chunks = [c for c, _ in _chunks(ours, big_endian=False)]
    assert chunks[-1] == b"id3 " and chunks.index(b"data") < len(chunks) - 1 and b"LIST" in chunks
    data = ours.read_bytes()
    assert len(data) == struct.unpack("<I", data[4:8])[0] + 8, "RIFF size"
    assert _id3_version(ours)[:2] == (2, int(version))
    assert _id3_frames(ours) == _id3_frames(ref)
    a, b, w = _view(ours), _view(ref), _view(ref_wav)
    want = dict(w["format"], **{k: v for k, v in b["format"].items() if k.startswith("id3v2_priv.")})
    assert a["format"] == want, f"ffprobe: ours {a['format']}, want {want}"
    assert (a["chapters"], a["pictures"]) == (b["chapters"], b["pictures"])
    assert _ours_tags(mk_probe, ours) == a["format"]
    assert _cover(ours) == _cover(src)


# --- 3. AIFF text chunks and `ID3 ` chunk -------------------------------------------------------

AIFF_TEXT = (b"NAME", b"AUTH", b"(c) ", b"ANNO")


def test_aiff_text_chunks_like_ffmpeg(shared_media, mk_transcode, mk_probe, tmp_path):
    """By default AIFF gets ffmpeg's NAME / AUTH / (c) / ANNO chunks (title, author, copyright,
    comment) before COMM, byte for byte, and no ID3 chunk; ffprobe and our reader see the same
    tags."""
    src = shared_media / MP3
    ours = _ours(mk_transcode, src, tmp_path / "ours.aiff", "--codec", "pcm_s16be", *_set(EXTRA, "--metadata"))
    ref = _ffmpeg(src, tmp_path / "ref.aiff", "-map", "0:a", "-c:a", "pcm_s16be", *_set(EXTRA, "-metadata"))
    a_chunks, b_chunks = _chunks(ours, big_endian=True), _chunks(ref, big_endian=True)
    text = [c for c in b_chunks if c[0] in AIFF_TEXT]
    assert [c for c, _ in text] == list(AIFF_TEXT)
    assert [c for c in a_chunks if c[0] in AIFF_TEXT] == text
    assert [c for c, _ in a_chunks] == [c for c, _ in b_chunks]
    a, b = _view(ours), _view(ref)
    assert a == b, f"ffprobe: ours {a}, ffmpeg {b}"
    assert _ours_tags(mk_probe, ours) == a["format"]


@pytest.mark.parametrize("version", ["4", "3"])
def test_aiff_id3_chunk_like_ffmpeg(version, shared_media, mk_transcode, mk_probe, tmp_path):
    """--write-id3v2: an `ID3 ` chunk after SSND as ffmpeg -write_id3v2 1 writes it (ID3v2.3:
    byte for byte), with the same ID3 frames (mutagen), tags, chapters and cover (ffprobe)."""
    src = shared_media / MP3
    ours = _ours(mk_transcode, src, tmp_path / "ours.aiff", "--codec", "pcm_s16be", "--write-id3v2", "--id3v2-version", version)
    ref = _ffmpeg(src, tmp_path / "ref.aiff", "-map", "0", "-c:a", "pcm_s16be", "-c:v", "copy", "-write_id3v2", "1",
                  "-id3v2_version", version, "-fflags", "+bitexact")
    a_chunks, b_chunks = _chunks(ours, big_endian=True), _chunks(ref, big_endian=True)
    assert [c for c, _ in a_chunks] == [c for c, _ in b_chunks]
    assert a_chunks[-1][0] == b"ID3 "
    assert len(ours.read_bytes()) == struct.unpack(">I", ours.read_bytes()[4:8])[0] + 8, "FORM size"
    if version == "3":
        assert a_chunks[-1] == b_chunks[-1]
    assert _id3_frames(ours) == _id3_frames(ref)
    a, b = _view(ours), _view(ref)
    assert a == b, f"ffprobe: ours {a}, ffmpeg {b}"
    assert _ours_tags(mk_probe, ours) == a["format"]
    assert _cover(ours) == _cover(src)


def _frames23(tag: bytes) -> list[bytes]:
    """The frames of an ID3v2.3 tag (32-bit frame sizes), up to the padding."""
    out, at = [], 10
    while at + 10 <= len(tag) and tag[at] != 0:
        n = struct.unpack(">I", tag[at + 4:at + 8])[0]
        out.append(tag[at:at + 10 + n])
        at += 10 + n
    return out


REAL = ["breadth/aiff_Borewit_a032fe_issue-89_no-artist.aiff", "breadth/wav_Borewit_c3b266_riff-iprt-tag.wav",
        "breadth/flac_tinytag_7a2191_flac1.5sStereo.flac", "mp3_mpeg2_24k_lame_vbr_v2_xing_38s.mp3"]


@pytest.mark.parametrize("name", REAL, ids=[Path(n).stem[:28] for n in REAL])
def test_id3v23_chunk_of_real_files_like_ffmpeg(name, shared_media, mk_transcode, tmp_path):
    """Real tagged files (AIFF text chunks and ID3, WAV INFO, FLAC Vorbis comments, an MP3 with
    a PRIV XMP packet) into AIFF with an ID3v2.3 chunk: the text chunks and every ID3 frame are
    ffmpeg's byte for byte, in its order, but for the comment, a COMM frame in ours where ffmpeg
    writes a TXXX (its key, "comment" or "COMMENTS") with the same text."""
    src = shared_media / name
    ours = _ours(mk_transcode, src, tmp_path / "ours.aiff", "--codec", "pcm_s16be", "--write-id3v2", "--id3v2-version", "3")
    ref = _ffmpeg(src, tmp_path / "ref.aiff", "-map", "0:a:0", "-map", "0:v?", "-c:a", "pcm_s16be", "-c:v", "copy",
                  "-write_id3v2", "1", "-id3v2_version", "3", "-fflags", "+bitexact")
    a, b = dict(_chunks(ours, big_endian=True)), dict(_chunks(ref, big_endian=True))
    assert {c: a.get(c) for c in AIFF_TEXT} == {c: b.get(c) for c in AIFF_TEXT}
    fa, fb = _frames23(a[b"ID3 "]), _frames23(b[b"ID3 "])
    comments = [f[14:].split(b"\0")[1] for f in fa if f[:4] == b"COMM"]   # encoding, "eng", "" and its NUL, the text
    assert all(f[10] == 0 for f in fa if f[:4] == b"COMM"), "an ASCII comment is ISO-8859-1"
    fa = [f for f in fa if f[:4] != b"COMM"]
    fb = [f for f in fb if not (f[:4] == b"TXXX" and f[11:].split(b"\0")[1] in comments)]
    assert fa == fb
    assert a[b"ID3 "][:6] == b"ID3\x03\x00\x00"


# --- 4. CAF `info` ------------------------------------------------------------------------------

def _caf_chunks(path: Path) -> list[tuple[bytes, bytes]]:
    data = path.read_bytes()
    out, at = [], 8
    while at + 12 <= len(data):
        cid = data[at:at + 4]
        size = struct.unpack(">q", data[at + 4:at + 12])[0]
        if size < 0:
            size = len(data) - at - 12
        out.append((cid, data[at + 12:at + 12 + size]))
        at += 12 + size
    return out


def test_caf_info_like_ffmpeg(shared_media, mk_transcode, mk_probe, tmp_path):
    """CAF: the tags in an `info` chunk before `data`, byte for byte as ffmpeg's caf muxer
    writes them (with -fflags +bitexact both copy the input's encoder tag); ffprobe and our
    reader see the same tags."""
    src = shared_media / MP3
    ours = _ours(mk_transcode, src, tmp_path / "ours.caf", "--codec", "pcm_s16le", *_set(EXTRA, "--metadata"))
    ref = _ffmpeg(src, tmp_path / "ref.caf", "-map", "0:a", "-c:a", "pcm_s16le", "-fflags", "+bitexact", *_set(EXTRA, "-metadata"))
    a = [c for c in _caf_chunks(ours) if c[0] in (b"info", b"data")]
    b = [c for c in _caf_chunks(ref) if c[0] in (b"info", b"data")]
    assert [c for c, _ in a] == [c for c, _ in b] == [b"info", b"data"]
    assert a[0] == b[0]
    va, vb = _view(ours), _view(ref)
    assert va["format"] == vb["format"], f"ffprobe: ours {va['format']}, ffmpeg {vb['format']}"
    assert _ours_tags(mk_probe, ours) == va["format"]


# --- 5. QuickTime udta strings (.mov) -----------------------------------------------------------

def _udta_children(path: Path) -> list[tuple[bytes, bytes]]:
    data = path.read_bytes()

    def boxes(start: int, end: int):
        at = start
        while at + 8 <= end:
            size, head = struct.unpack(">I", data[at:at + 4])[0], 8
            if size == 1:                       # a 64-bit size follows the type
                size, head = struct.unpack(">Q", data[at + 8:at + 16])[0], 16
            elif size == 0:                     # to the end of the file
                size = end - at
            if size < head:
                return
            yield data[at + 4:at + 8], at + head, at + size
            at += size

    for kind, s, e in boxes(0, len(data)):
        if kind == b"moov":
            for k2, s2, e2 in boxes(s, e):
                if k2 == b"udta":
                    return [(k3, data[s3:e3]) for k3, s3, e3 in boxes(s2, e2)]
    return []


def test_mov_quicktime_strings_like_ffmpeg(shared_media, mk_remux, mk_probe, tmp_path):
    """A .mov gets the QuickTime `udta` string atoms ffmpeg's mov muxer writes (©ART ©nam ©aut
    ©alb ©day ©des ©cmt ©gen ©cpy ©mak ©mod ©xyz ©key, in its order, language "und"), byte for
    byte, and no `ilst`; ffprobe sees the same tags and chapter titles; our reader too."""
    src = shared_media / MP3
    extra = dict(EXTRA, location="+48.8577+002.2950/")
    ours = _ours(mk_remux, src, tmp_path / "ours.mov", *_set(extra, "--metadata"))
    ref = _ffmpeg(src, tmp_path / "ref.mov", "-map", "0:a", "-c", "copy", *_set(extra, "-metadata"))
    strings = lambda kids: [k for k in kids if k[0].startswith(b"\xa9") and k[0] != b"\xa9swr"]  # noqa: E731
    a, b = _udta_children(ours), _udta_children(ref)
    assert len(strings(b)) == 13
    assert strings(a) == strings(b)
    assert b"meta" not in [k for k, _ in a]
    va, vb = _view(ours), _view(ref)
    assert va["format"] == vb["format"], f"ffprobe: ours {va['format']}, ffmpeg {vb['format']}"
    assert va["chapters"] == vb["chapters"]
    assert _ours_tags(mk_probe, ours) == va["format"]
