"""Tags, chapters and cover art written by the muxers and copied by mk-remux / mk-transcode
(issue 33, item 3).

Oracles:
  ffmpeg   `ffmpeg -i IN -map 0:a -map_metadata 0 -map_chapters 0 -c copy OUT` (or -c:a the
           same codec for a transcode): ffprobe's format tags, the audio stream's tags and the
           chapters of our output equal those of ffmpeg's (keys in any case; `encoder`, which
           names the writing tool, and Matroska's per-track DURATION, which FFmpeg's muxer
           adds, left out).
  mutagen  reads the same values from our file as from ffmpeg's (Vorbis comments by lower-cased
           name; ID3 text, TXXX and COMM frames by mutagen's hash key).
  covers   the cover's bytes as ffmpeg extracts them (its attached_pic stream, copied) equal the
           input's, whatever the container.
  spec     the round trips MP3 -> M4A -> MKA -> Ogg Vorbis -> FLAC -> MP3 and MP3 -> MKA -> Ogg
           Opus -> FLAC -> MP3 keep every tag the formats share (by value, keys compared without
           case, spaces or underscores), the chapters' starts and titles to the millisecond (the
           time base ID3 CHAP and Vorbis CHAPTERnnn hold; CHAPTERnnn states no end) and the
           cover; MP4 chapters -> MKV -> MP4 keep their starts to chpl's 1/10,000,000 s.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import oracle_lib as lib

MP3 = "mp3_id3v2_apic_1400px_48k.mp3"                       # ID3v2: tags, TXXX, PRIV, APIC, CHAP
OGG = "ogg_vorbis_mono_metadata_block_picture.ogg"          # Vorbis comments, METADATA_BLOCK_PICTURE
FLAC_TAGS = "breadth/flac_tinytag_7a2191_flac1.5sStereo.flac"  # VORBIS_COMMENT
FLAC_COVER = "breadth/flac_androidx_af3fe8_bear_with_picture.flac"  # PICTURE (PNG)
MKV = "breadth/mkv_androidx_520d46_sample_with_htc_rotation_track_name.mkv"  # Matroska track name, tags
M4A = "m4a_aac_8k_covr_jpeg_bmp.m4a"                         # ilst tags, two covr; mdhd language, hdlr name

IGNORED = {"encoder", "duration"}

# (input, output extension, mk tool, extra ffmpeg codec options)
CASES = [
    (MP3, "mka", "remux", ["-c", "copy"]),
    (MP3, "mp3", "remux", ["-c", "copy"]),
    (OGG, "ogg", "remux", ["-c", "copy"]),
    (OGG, "mka", "remux", ["-c", "copy"]),
    (FLAC_TAGS, "flac", "remux", ["-c", "copy"]),
    (FLAC_TAGS, "ogg", "remux", ["-c", "copy"]),
    (FLAC_TAGS, "mka", "remux", ["-c", "copy"]),
    (FLAC_COVER, "flac", "remux", ["-c", "copy"]),
    (MP3, "flac", "transcode", ["-c:a", "flac"]),
    (MP3, "wav", "transcode", ["-c:a", "pcm_s16le"]),
    # An MP4 track's language, handler name and vendor are stream fields, not tags: FFmpeg
    # writes them as an Ogg stream's comments, not into a FLAC or WAV file's tags.
    (M4A, "flac", "transcode", ["-c:a", "flac"]),
    (M4A, "wav", "transcode", ["-c:a", "pcm_s16le"]),
    (M4A, "ogg", "transcode", ["-c:a", "libvorbis"]),
]


_probe = lib.ffprobe_metadata


def _tags(d: dict | None) -> dict[str, str]:
    return {k.lower(): v for k, v in (d or {}).items() if k.lower() not in IGNORED}


def _view(path: Path) -> dict:
    """What ffprobe shows: format tags, the first audio stream's tags, chapters, cover pictures."""
    info = _probe(path)
    audio = next(s for s in info["streams"] if s.get("codec_type") == "audio")
    return {
        "format": _tags(info["format"].get("tags")),
        "audio": _tags(audio.get("tags")),
        "chapters": [(c["start_time"], c["end_time"], (c.get("tags") or {}).get("title")) for c in info.get("chapters", [])],
        "pictures": sum(1 for s in info["streams"] if s.get("disposition", {}).get("attached_pic")),
    }


def _starts(chapters: list) -> list:
    """Chapters as (start, title): what Vorbis CHAPTERnnn fields hold."""
    return [(c[0], c[2]) for c in chapters]


_cover = lib.first_attached_picture


def _ours(tool: Path, src: Path, out: Path, *extra: str) -> None:
    cmd = [tool, "--quiet", *extra, src, out]
    lib.check_ok(lib.run(cmd), cmd)


def _ours_and_ffmpegs(src: Path, ext: str, tool: Path, codec: list[str], tmp_path: Path) -> tuple[Path, Path]:
    """Our remux / transcode of `src` into `ext`, and ffmpeg's with -map_metadata 0
    -map_chapters 0 and `codec`: (ours, ffmpeg's)."""
    ours, ref = tmp_path / f"ours.{ext}", tmp_path / f"ref.{ext}"
    _ours(tool, src, ours)
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-map", "0:a", "-map_metadata", "0", "-map_chapters", "0", *codec, ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    return ours, ref


def _mutagen_view(path: Path) -> dict[str, object]:
    import mutagen
    from mutagen.id3 import ID3

    f = mutagen.File(path)
    if f is None or f.tags is None:
        return {}
    if isinstance(f.tags, ID3):
        out: dict[str, object] = {}
        for key, frame in f.tags.items():
            if key.startswith(("T", "COMM")) and not key.startswith("TSSE"):
                out[key] = [str(t) for t in frame.text]
        return out
    # Chapters (CHAPTERnnn fields) and pictures are compared on their own.
    return {k.lower(): v for k, v in f.tags.as_dict().items()
            if k.lower() not in IGNORED and k.lower() != "metadata_block_picture" and not k.lower().startswith("chapter")}


@pytest.mark.parametrize("name,ext,kind,codec", CASES, ids=[f"{Path(c[0]).stem[:24]}-{c[1]}-{c[2]}" for c in CASES])
def test_copied_like_ffmpeg(name, ext, kind, codec, shared_media, mk_remux, mk_transcode, tmp_path):
    """Our output's tags, chapters and cover equal ffmpeg's -map_metadata 0 -map_chapters 0
    output of the same input into the same format (ffprobe's view and mutagen's), and the cover
    bytes equal the input's."""
    src = shared_media / name
    ours, ref = _ours_and_ffmpegs(src, ext, mk_remux if kind == "remux" else mk_transcode, codec, tmp_path)
    a, b = _view(ours), _view(ref)
    assert a["format"] == b["format"], f"format tags: ours {a['format']}, ffmpeg {b['format']}"
    assert a["audio"] == b["audio"], f"stream tags: ours {a['audio']}, ffmpeg {b['audio']}"
    if ext == "flac" and b["chapters"] == []:
        # FFmpeg's flac muxer writes no chapters; ours writes the OGM CHAPTERnnn fields its
        # ogg muxer writes, which hold a start and a title (the end is the next start).
        assert _starts(a["chapters"]) == _starts(_view(src)["chapters"])
    else:
        assert a["chapters"] == b["chapters"], f"chapters: ours {a['chapters']}, ffmpeg {b['chapters']}"
    if ext != "wav":
        assert _mutagen_view(ours) == _mutagen_view(ref), "mutagen reads other tags"
    cover = _cover(src)
    if cover is not None and ext != "wav":
        assert _cover(ours) == cover, "the cover's bytes differ from the input's"


@pytest.mark.parametrize("steps", [
    [("transcode", "a.m4a"), ("remux", "b.mka"), ("transcode", "c.ogg"), ("transcode", "d.flac"), ("transcode", "e.mp3")],
    [("remux", "a.mka"), ("transcode", "b.opus"), ("transcode", "c.flac"), ("transcode", "d.mp3")],
], ids=["mp3-m4a-mka-ogg-flac-mp3", "mp3-mka-opus-flac-mp3"])
def test_round_trip_keeps_shared_tags_chapters_and_cover(steps, shared_media, mk_remux, mk_transcode, tmp_path):
    """MP3 -> M4A (AAC) -> MKA (remux) -> Ogg Vorbis -> FLAC -> MP3, the issue's round trip, and
    MP3 -> MKA -> Ogg Opus -> FLAC -> MP3: the tags every format holds, the chapters (their
    starts and titles, to the millisecond: Vorbis CHAPTERnnn fields and Nero `chpl` state no
    end) and the cover bytes come back."""
    src = shared_media / MP3
    prev = src
    for kind, name in steps:
        out = tmp_path / name
        _ours(mk_remux if kind == "remux" else mk_transcode, prev, out)
        prev = out

    def norm(tags: dict[str, str]) -> dict[str, str]:
        return {k.replace(" ", "").replace("_", ""): v for k, v in tags.items() if not k.startswith("id3v2_priv")}

    first, last = _view(src), _view(prev)
    lost = {k: v for k, v in norm(first["format"]).items() if norm(last["format"]).get(k) != v}
    assert not lost, f"tags lost or changed on the way: {lost} (end: {last['format']})"
    assert _starts(first["chapters"]) == _starts(last["chapters"])
    assert _cover(prev) == _cover(src)


def test_no_metadata_and_set_metadata(shared_media, mk_remux, tmp_path):
    """--no-metadata writes no tag, chapter or picture; --metadata KEY=VALUE sets a tag and
    KEY= removes one (ffprobe reads it)."""
    src = shared_media / MP3
    for ext in ("mka", "mp3", "flac"):
        tool = mk_remux
        if ext == "flac":
            continue  # MP3 is not carried by FLAC: the transcode below covers it
        bare = tmp_path / f"bare.{ext}"
        _ours(tool, src, bare, "--no-metadata")
        v = _view(bare)
        assert v["format"] == {} and v["audio"] == {} and v["chapters"] == [] and v["pictures"] == 0, v
        only = tmp_path / f"only.{ext}"
        _ours(tool, src, only, "--no-metadata", "--metadata", "title=Set Title")
        assert _view(only)["format"] == {"title": "Set Title"}
        changed = tmp_path / f"changed.{ext}"
        _ours(tool, src, changed, "--metadata", "title=Other", "--metadata", "artist=")
        tags = _view(changed)["format"]
        assert tags.get("title") == "Other" and "artist" not in tags and tags.get("album") == "Test Album", tags


def test_set_metadata_in_a_transcode(shared_media, mk_transcode, tmp_path):
    """mk-transcode takes --metadata and --no-metadata too (FLAC's VORBIS_COMMENT)."""
    src = shared_media / MP3
    out = tmp_path / "out.flac"
    _ours(mk_transcode, src, out, "--no-metadata", "--metadata", "album=Set Album")
    v = _view(out)
    assert v["format"] == {"album": "Set Album"} and v["chapters"] == [] and v["pictures"] == 0, v


def test_bad_metadata_setting_is_refused(shared_media, mk_remux, tmp_path):
    """A --metadata without "=" is refused, naming it; nothing is written."""
    out = tmp_path / "out.mka"
    proc = lib.run([mk_remux, "--quiet", "--metadata", "title", shared_media / MP3, out])
    assert proc.returncode != 0 and b"KEY=VALUE" in proc.stderr, proc.stderr
    assert not out.exists()


def test_matroska_track_name_and_tags_copied(shared_media, mk_remux, tmp_path):
    """Matroska into Matroska: the track's Name and tags and the container tags, as ffmpeg's
    copy of every stream writes them."""
    src = shared_media / MKV
    ours, ref = tmp_path / "ours.mkv", tmp_path / "ref.mkv"
    _ours(mk_remux, src, ours)
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-map", "0", "-map_metadata", "0", "-c", "copy", ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    a, b = _probe(ours), _probe(ref)
    assert _tags(a["format"].get("tags")) == _tags(b["format"].get("tags"))
    assert [_tags(s.get("tags")) for s in a["streams"]] == [_tags(s.get("tags")) for s in b["streams"]]


MP4_CASES = [
    (MP3, "mp4", "remux", ["-c", "copy"]),
    (MP3, "m4a", "transcode", ["-c:a", "aac"]),
    (FLAC_TAGS, "m4a", "transcode", ["-c:a", "aac"]),
]


@pytest.mark.parametrize("name,ext,kind,codec", MP4_CASES, ids=[f"{Path(c[0]).stem[:24]}-{c[1]}-{c[2]}" for c in MP4_CASES])
def test_mp4_ilst_and_chpl(name, ext, kind, codec, shared_media, mk_remux, mk_transcode, tmp_path):
    """MP4 / M4A: every tag ffmpeg's mov muxer writes into `ilst` for the same input is in ours
    with the same value (ffprobe and mutagen); ours also keeps the tags without an atom as
    freeform `----` items, which ffmpeg drops. Chapters (`chpl`: a start and a title; both
    muxers also write a QuickTime chapter track) have the input's starts and titles; the cover
    (`covr`) is the input's bytes (mutagen)."""
    import mutagen

    src = shared_media / name
    ours, ref = _ours_and_ffmpegs(src, ext, mk_remux if kind == "remux" else mk_transcode, codec, tmp_path)
    a, b = _view(ours), _view(ref)
    # The ftyp brands are the muxer's file-type choice, not tags (test_remux checks them against ffmpeg's).
    brands = {"major_brand", "minor_version", "compatible_brands"}
    missing = {k: v for k, v in b["format"].items() if k not in brands and a["format"].get(k) != v}
    assert not missing, f"ffmpeg's tags not in ours: {missing} (ours {a['format']})"
    assert _starts(a["chapters"]) == _starts(_view(src)["chapters"])
    m_ours, m_ref = mutagen.File(ours).tags, mutagen.File(ref).tags
    lost = {k: v for k, v in m_ref.items() if k != "©too" and m_ours.get(k) != v}
    assert not lost, f"mutagen: ffmpeg's items not in ours: {lost}"
    cover = _cover(src)
    if cover is not None:
        assert bytes(m_ours["covr"][0]) == cover


def test_mp4_chapters_through_matroska_keep_their_times(shared_media, mk_remux, tmp_path):
    """MP4 chapters -> MKV -> MP4 (remuxes): ffmpeg writes an M4A with three chapters (a
    chapter track and Nero `chpl`, 1/10,000,000 s); after our MKV (nanoseconds) and our M4A
    (`chpl`) the chapters' starts are the input's to that time base (ffprobe's start values
    equal) and their titles the input's."""
    meta = tmp_path / "chapters.txt"
    meta.write_text(";FFMETADATA1\ntitle=Chaptered\n"
                    "[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1234\ntitle=One\n"
                    "[CHAPTER]\nTIMEBASE=1/1000\nSTART=1234\nEND=2501\ntitle=Zwei \u00c4\n"
                    "[CHAPTER]\nTIMEBASE=1/1000\nSTART=2501\nEND=4000\ntitle=Three\n")
    src = tmp_path / "in.m4a"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", shared_media / MP3, "-i", meta, "-map", "0:a",
           "-map_metadata", "1", "-map_chapters", "1", "-c:a", "aac", "-t", "4", src]
    lib.oracle_ok(lib.run(cmd), cmd)
    mkv, back = tmp_path / "a.mkv", tmp_path / "b.m4a"
    _ours(mk_remux, src, mkv)
    _ours(mk_remux, mkv, back)

    def chapters(path: Path) -> list[tuple[int, str]]:
        info = _probe(path)
        return [(round(float(c["start_time"]) * 10_000_000), (c.get("tags") or {}).get("title")) for c in info["chapters"]]

    want = chapters(src)
    assert [t for _, t in want] == ["One", "Zwei \u00c4", "Three"]
    assert chapters(mkv) == want
    assert chapters(back) == want


@pytest.fixture
def matroska_with_chapters(shared_media, tmp_path) -> tuple[Path, bytes]:
    """A Matroska file written by ffmpeg with tags, two chapters (with ends) and a JPEG
    attachment (cover.jpg), from the tagged MP3; and the picture's bytes."""
    src = shared_media / MP3
    cover = tmp_path / "cover.jpg"
    cover.write_bytes(_cover(src) or b"")
    out = tmp_path / "in.mka"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-map", "0:a", "-map_metadata", "0", "-map_chapters", "0",
           "-c", "copy", "-attach", cover, "-metadata:s:t", "mimetype=image/jpeg", "-metadata:s:t", "filename=cover.jpg", out]
    lib.oracle_ok(lib.run(cmd), cmd)
    return out, cover.read_bytes()


def test_matroska_chapters_and_attachment_copied(matroska_with_chapters, mk_remux, tmp_path):
    """Matroska (ffmpeg's, with chapters and an attachment) into Matroska: tags and chapters
    (start, end, title, to the nanosecond) as ffmpeg's copy writes them, and the attachment's
    bytes as the cover. (Into MP3: not tested here; mk-remux refuses the last packet of this
    file's MP3 stream before and after this change, see the report.)"""
    ext = "mka"
    src, picture = matroska_with_chapters
    ours, ref = tmp_path / f"ours.{ext}", tmp_path / f"ref.{ext}"
    _ours(mk_remux, src, ours)
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-map", "0:a", "-map_metadata", "0", "-map_chapters", "0", "-c", "copy", ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    a, b = _view(ours), _view(ref)
    assert a["format"] == b["format"], f"format tags: ours {a['format']}, ffmpeg {b['format']}"
    assert a["chapters"] == b["chapters"] == _view(src)["chapters"]
    assert _cover(ours) == picture
