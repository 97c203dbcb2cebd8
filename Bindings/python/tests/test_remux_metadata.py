"""``mediakit.remux`` copies the input's tags, chapters and cover art (issue 33, item 3), or
none with ``copy_metadata=False``, and sets tags with ``metadata={KEY: VALUE}``.

Oracle: ffprobe reading what we wrote (format tags, chapters, attached pictures) against
ffprobe reading the input (a real MP3 with ID3v2 tags, an APIC cover and CHAP chapters).
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import mediakit

MP3 = "mp3_id3v2_apic_1400px_48k.mp3"


def _probe(path: Path) -> dict[str, Any]:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_format", "-show_streams", "-show_chapters", "-of", "json", str(path)],
                         capture_output=True, check=True, text=True).stdout
    info: dict[str, Any] = json.loads(out)
    return info


def _tags(info: dict[str, Any]) -> dict[str, str]:
    return {k.lower(): v for k, v in info["format"].get("tags", {}).items() if k.lower() != "encoder"}


def _pictures(info: dict[str, Any]) -> int:
    return sum(1 for s in info["streams"] if s.get("disposition", {}).get("attached_pic"))


def test_remux_copies_tags_chapters_and_cover(shared_media: Path, oracle_tools: None, tmp_path: Path) -> None:
    src = shared_media / MP3
    out = tmp_path / "out.mka"
    mediakit.remux(src, out)
    a, b = _probe(out), _probe(src)
    assert _tags(a)["title"] == _tags(b)["title"] and _tags(a)["artist"] == _tags(b)["artist"]
    assert [c["start_time"] for c in a["chapters"]] == [c["start_time"] for c in b["chapters"]]
    assert _pictures(a) == _pictures(b) == 1


def test_remux_without_metadata_and_with_a_set_tag(shared_media: Path, oracle_tools: None, tmp_path: Path) -> None:
    src = shared_media / MP3
    out = tmp_path / "out.mp3"
    mediakit.remux(src, out, copy_metadata=False, metadata={"title": "Set"})
    a = _probe(out)
    assert _tags(a) == {"title": "Set"} and a["chapters"] == [] and _pictures(a) == 0
    removed = tmp_path / "removed.mp3"
    mediakit.remux(src, removed, metadata={"artist": ""})
    tags = _tags(_probe(removed))
    assert "artist" not in tags and tags["album"] == "Test Album"


def test_bad_metadata_key_is_refused(shared_media: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        mediakit.remux(shared_media / MP3, tmp_path / "out.mp3", metadata={"a=b": "c"})
    assert not (tmp_path / "out.mp3").exists()


def test_remux_id3v23_as_ffmpeg_writes_it(shared_media: Path, oracle_tools: None, tmp_path: Path) -> None:
    """id3v2_version=3 writes the ID3v2.3 tag ``ffmpeg -id3v2_version 3`` writes (byte for byte:
    the oracle is ffmpeg's tag of the same input)."""
    src = shared_media / MP3
    out, ref = tmp_path / "out.mp3", tmp_path / "ref.mp3"
    mediakit.remux(src, out, id3v2_version=3)
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", str(src), "-map", "0", "-map_metadata", "0",
                    "-map_chapters", "0", "-c", "copy", "-id3v2_version", "3", "-fflags", "+bitexact", str(ref)], check=True)

    def tag(path: Path) -> bytes:
        data = path.read_bytes()
        size = 0
        for b in data[6:10]:
            size = size << 7 | b
        return data[:10 + size]

    assert tag(out)[:4] == b"ID3\x03" and tag(out) == tag(ref)


def test_remux_id3_chunk_and_refusals(shared_media: Path, oracle_tools: None, tmp_path: Path) -> None:
    """write_id3v2=True into WAV (a remux of PCM) adds an `id3 ` chunk mutagen reads the tags
    from (ID3v2.4 by default); a version other than 3 or 4, or the option for a format without ID3v2, is
    refused and writes nothing."""
    wav = tmp_path / "in.wav"
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", str(shared_media / MP3), "-map_metadata", "0",
                    "-c:a", "pcm_s16le", str(wav)], check=True)
    out = tmp_path / "out.wav"
    mediakit.remux(wav, out, write_id3v2=True, metadata={"album": "Chunk Album"})
    from mutagen.wave import WAVE

    id3 = WAVE(str(out)).tags  # type: ignore[no-untyped-call]  # mutagen has no annotations
    assert id3 is not None and id3.version[:2] == (2, 4) and id3["TALB"].text == ["Chunk Album"]
    assert _tags(_probe(out))["album"] == "Chunk Album"
    with pytest.raises(ValueError):
        mediakit.remux(wav, tmp_path / "bad.wav", id3v2_version=2)
    with pytest.raises(mediakit.InvalidArgumentError):
        mediakit.remux(wav, tmp_path / "bad.mka", write_id3v2=True)
    assert not (tmp_path / "bad.wav").exists() and not (tmp_path / "bad.mka").exists()


def test_c_settings_id3_fields_checked(shared_media: Path, tmp_path: Path) -> None:
    """mk_remux itself refuses an id3v2_version other than 0, 3 or 4 and a write_id3v2 other
    than 0 or 1 (MK_EINVAL, naming the field), and a settings struct of the 0.3 size before these fields (120
    bytes) still remuxes with their defaults (struct_size rule)."""
    import ctypes

    from mediakit import _ffi

    src, out = str(shared_media / MP3).encode(), tmp_path / "c.mp3"
    for field, value in (("id3v2_version", 2), ("write_id3v2", 2)):
        s = _ffi.MuxerSettings()
        mediakit.lib.mk_muxer_default_settings(ctypes.byref(s))
        setattr(s, field, value)
        with pytest.raises(mediakit.InvalidArgumentError, match=field):
            mediakit.lib.mk_remux(src, str(out).encode(), ctypes.byref(s))
        assert not out.exists()
    s = _ffi.MuxerSettings()
    mediakit.lib.mk_muxer_default_settings(ctypes.byref(s))
    s.id3v2_version = 3    # beyond the stated size: not read
    s.struct_size = _ffi.MuxerSettings.id3v2_version.offset
    mediakit.lib.mk_remux(src, str(out).encode(), ctypes.byref(s))
    assert out.read_bytes()[:4] == b"ID3\x04"


def test_transcode_takes_the_same_metadata_options(shared_media: Path, oracle_tools: None, tmp_path: Path) -> None:
    """``transcode`` (C mk_transcode_settings' no_metadata, metadata, id3v2_version,
    write_id3v2) copies, drops and sets tags as ``remux`` does. Oracles: mk-transcode with the
    same options writes the same file byte for byte (one code path), ffprobe reads the tags set,
    mutagen the ID3v2.3 tag and the WAV's ID3v2 chunk; a bad version writes nothing."""
    import os

    src = shared_media / MP3
    out = tmp_path / "out.mp3"
    mediakit.transcode(src, out, metadata={"title": "Set", "album": ""}, id3v2_version=3)
    ref = tmp_path / "ref.mp3"
    # The tools sit beside the library (MK_BIN, or the folder of MEDIAKIT_LIBRARY: conftest sets one).
    mk_transcode = Path(os.environ.get("MK_BIN") or Path(os.environ["MEDIAKIT_LIBRARY"]).parent) / "mk-transcode"
    assert mk_transcode.exists(), f"{mk_transcode} is missing"
    subprocess.run([str(mk_transcode), "--quiet", str(src), str(ref), "--metadata", "title=Set", "--metadata", "album=",
                    "--id3v2-version", "3"], check=True, capture_output=True)
    assert out.read_bytes() == ref.read_bytes(), "mediakit.transcode and mk-transcode write the same file"
    tags, source = _tags(_probe(out)), _tags(_probe(src))
    assert tags["title"] == "Set" and "album" not in tags and tags["artist"] == source["artist"]
    from mutagen.id3 import ID3

    id3 = ID3(str(out))  # type: ignore[no-untyped-call]  # mutagen has no annotations
    assert id3.version[:2] == (2, 3) and id3["TIT2"].text == ["Set"]

    bare = tmp_path / "bare.mp3"
    mediakit.transcode(src, bare, copy_metadata=False)
    assert _tags(_probe(bare)) == {} and _pictures(_probe(bare)) == 0

    wav = tmp_path / "out.wav"
    mediakit.transcode(src, wav, write_id3v2=True, metadata={"album": "Chunk Album"})
    from mutagen.wave import WAVE

    chunk = WAVE(str(wav)).tags  # type: ignore[no-untyped-call]
    assert chunk is not None and chunk["TALB"].text == ["Chunk Album"]
    with pytest.raises(ValueError):
        mediakit.transcode(src, tmp_path / "bad.mp3", id3v2_version=2)
    assert not (tmp_path / "bad.mp3").exists()
